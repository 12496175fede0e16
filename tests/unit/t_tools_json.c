/*
 * t_tools_json.c — Dify's json_process tools: parse with $.a.b, $.a[0],
 * negative indexes, [*], .*, $..x and quoted names; the answer shapes
 * (one value, lists, json.dumps spacing and ensure_ascii, Python's str()
 * of scalars); insert into objects, lists (with index) and scalars, with
 * create_path; replace by pattern, key and value (value_decode); delete
 * from objects and lists; the messages for bad input.
 */
#include "tap.h"
#include "t_node_run.h"
#include "t_tools_fake.h"

static const char *DOC =
    "{\"a\": {\"b\": 1, \"c\": [10, 20, 30]}, \"name\": \"x\", "
    "\"items\": [{\"id\": 1, \"name\": \"p\"}, {\"id\": 2, \"name\": \"q\", "
    "\"tags\": [\"t\"]}], \"f\": 1.5, \"t\": true, \"n\": null, "
    "\"cn\": \"\xe4\xb8\xad\"}";

static const char *
run(const char *tool, json_t *params)
{
	static char		 buf[8][1024];
	static int		 i;
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX];

	i = (i + 1) % 8;
	if (json_object_get(params, "content") == NULL)
		json_object_set_new(params, "content", json_string(DOC));
	if (tool_call_simple("json_process", "builtin", tool, params, &r,
	    err) == 0)
		snprintf(buf[i], sizeof(buf[i]), "%s", res_text(&r));
	else
		snprintf(buf[i], sizeof(buf[i]), "(failed: %.200s)", err);
	tool_result_release(&r);
	return buf[i];
}

static const char *
parse(const char *q)
{
	return run("parse", json_pack("{s:s}", "json_filter", q));
}

static void
test_parse(void)
{
	CHECK_STR(parse("$.a.b"), "1");
	CHECK_STR(parse("$.a.c[0]"), "10");
	CHECK_STR(parse("$.a.c[-1]"), "30");
	CHECK_STR(parse("$.a.c"), "[10, 20, 30]");
	CHECK_STR(parse("$.a.c[*]"), "[10, 20, 30]");
	CHECK_STR(parse("$.a"), "{\"b\": 1, \"c\": [10, 20, 30]}");
	CHECK_STR(parse("$.name"), "x");
	CHECK_STR(parse("name"), "x");
	CHECK_STR(parse("$['name']"), "x");
	CHECK_STR(parse("$.items[1].name"), "q");
	CHECK_STR(parse("$.items[*].id"), "[1, 2]");
	CHECK_STR(parse("$..name"), "[\"x\", \"p\", \"q\"]");
	CHECK_STR(parse("$..tags[0]"), "t");
	CHECK_STR(parse("$.f"), "1.5");
	CHECK_STR(parse("$.t"), "True");
	CHECK_STR(parse("$.n"), "None");
	CHECK_STR(parse("$.missing"), "[]");
	CHECK_STR(parse("$.a.*"), "[1, [10, 20, 30]]");
	CHECK_STR(parse("$.cn"), "\xe4\xb8\xad");
	CHECK_STR(run("parse", json_pack("{s:s,s:s}", "json_filter", "$.items",
	    "content", "{\"items\": [\"\xe4\xb8\xad\"]}")), "[\"\\u4e2d\"]");
	CHECK_STR(run("parse", json_pack("{s:s,s:s,s:b}", "json_filter",
	    "$.items", "content", "{\"items\": [\"\xe4\xb8\xad\"]}",
	    "ensure_ascii", 0)), "[\"\xe4\xb8\xad\"]");
	/* "query" is taken when json_filter is absent */
	CHECK_STR(run("json_parse", json_pack("{s:s}", "query", "$.a.b")),
	    "1");
	CHECK_STR(run("parse", json_pack("{s:s,s:s}", "json_filter", "$.a",
	    "content", "")), "Invalid parameter content");
	CHECK_STR(run("parse", json_object()),
	    "Invalid parameter json_filter");
	CHECK(strncmp(run("parse", json_pack("{s:s,s:s}", "json_filter", "$.a",
	    "content", "{bad")), "(failed", 7) != 0);
	CHECK(strncmp(parse("$.a[?(@.b)]"), "Invalid JSON path", 17) == 0);
}

static void
test_insert(void)
{
	const char *c = "{\"a\": {\"b\": 1}, \"l\": [1, 2], \"s\": \"v\"}";

	CHECK_STR(run("json_insert", json_pack("{s:s,s:s,s:s}", "content", c,
	    "query", "$.a", "new_value", "{\"z\": 2}")),
	    "{\"a\": {\"b\": 1, \"z\": 2}, \"l\": [1, 2], \"s\": \"v\"}");
	CHECK_STR(run("json_insert", json_pack("{s:s,s:s,s:s}", "content", c,
	    "query", "$.l", "new_value", "3")),
	    "{\"a\": {\"b\": 1}, \"l\": [1, 2, 3], \"s\": \"v\"}");
	CHECK_STR(run("json_insert", json_pack("{s:s,s:s,s:s,s:i}", "content",
	    c, "query", "$.l", "new_value", "hello", "index", 0)),
	    "{\"a\": {\"b\": 1}, \"l\": [\"hello\", 1, 2], \"s\": \"v\"}");
	CHECK_STR(run("json_insert", json_pack("{s:s,s:s,s:s}", "content", c,
	    "query", "$.s", "new_value", "[1]")),
	    "{\"a\": {\"b\": 1}, \"l\": [1, 2], \"s\": [1]}");
	CHECK_STR(run("json_insert", json_pack("{s:s,s:s,s:s}", "content", c,
	    "query", "$.a", "new_value", "5")),
	    "Cannot insert non-dict value into dict");
	CHECK_STR(run("json_insert", json_pack("{s:s,s:s,s:s,s:b}", "content",
	    c, "query", "$.x.y", "new_value", "7", "create_path", 1)),
	    "{\"a\": {\"b\": 1}, \"l\": [1, 2], \"s\": \"v\", "
	    "\"x\": {\"y\": 7}}");
	CHECK_STR(run("json_insert", json_pack("{s:s,s:s,s:s}", "content", c,
	    "query", "$.x.y", "new_value", "7")),
	    "{\"a\": {\"b\": 1}, \"l\": [1, 2], \"s\": \"v\"}");
	CHECK_STR(run("json_insert", json_pack("{s:s,s:s}", "content", c,
	    "query", "$.a")), "Invalid parameter new_value");
}

static void
test_replace(void)
{
	const char *c = "{\"a\": \"hello world\", \"b\": {\"k\": 1}, "
	    "\"l\": [{\"k\": 2}]}";

	CHECK_STR(run("json_replace", json_pack("{s:s,s:s,s:s,s:s,s:s}",
	    "content", c, "query", "$.a", "replace_model", "pattern",
	    "replace_pattern", "world", "replace_value", "there")),
	    "{\"a\": \"hello there\", \"b\": {\"k\": 1}, \"l\": [{\"k\": 2}]}");
	CHECK_STR(run("json_replace", json_pack("{s:s,s:s,s:s,s:s}", "content",
	    c, "query", "$.b.k", "replace_model", "key", "replace_value",
	    "key2")),
	    "{\"a\": \"hello world\", \"b\": {\"key2\": 1}, "
	    "\"l\": [{\"k\": 2}]}");
	CHECK_STR(run("json_replace", json_pack("{s:s,s:s,s:s,s:s}", "content",
	    c, "query", "$.b.k", "replace_model", "value", "replace_value",
	    "[1, 2]")),
	    "{\"a\": \"hello world\", \"b\": {\"k\": \"[1, 2]\"}, "
	    "\"l\": [{\"k\": 2}]}");
	CHECK_STR(run("json_replace", json_pack("{s:s,s:s,s:s,s:s,s:b}",
	    "content", c, "query", "$.b.k", "replace_model", "value",
	    "replace_value", "[1, 2]", "value_decode", 1)),
	    "{\"a\": \"hello world\", \"b\": {\"k\": [1, 2]}, "
	    "\"l\": [{\"k\": 2}]}");
	CHECK_STR(run("json_replace", json_pack("{s:s,s:s,s:s,s:s}", "content",
	    c, "query", "$..k", "replace_model", "value", "replace_value",
	    "0")),
	    "{\"a\": \"hello world\", \"b\": {\"k\": \"0\"}, "
	    "\"l\": [{\"k\": \"0\"}]}");
	CHECK_STR(run("json_replace", json_pack("{s:s,s:s,s:s,s:s}", "content",
	    c, "query", "$.b", "replace_model", "bogus", "replace_value",
	    "x")), "Invalid parameter replace_model");
	CHECK_STR(run("json_replace", json_pack("{s:s,s:s,s:s,s:s,s:s}",
	    "content", c, "query", "$.b.k", "replace_model", "pattern",
	    "replace_pattern", "1", "replace_value", "x")),
	    "'int' object has no attribute 'replace'");
}

static void
test_delete(void)
{
	const char *c = "{\"a\": 1, \"b\": [1, 2, 1], \"c\": {\"d\": 2}}";

	CHECK_STR(run("json_delete", json_pack("{s:s,s:s}", "content", c,
	    "query", "$.a")), "{\"b\": [1, 2, 1], \"c\": {\"d\": 2}}");
	/* Dify prefixes "$." itself */
	CHECK_STR(run("json_delete", json_pack("{s:s,s:s}", "content", c,
	    "query", "c.d")), "{\"a\": 1, \"b\": [1, 2, 1], \"c\": {}}");
	CHECK_STR(run("json_delete", json_pack("{s:s,s:s}", "content", c,
	    "query", "$.b[2]")), "{\"a\": 1, \"b\": [2, 1], \"c\": {\"d\": 2}}");
	CHECK_STR(run("json_delete", json_pack("{s:s,s:s}", "content", c,
	    "query", "$.zz")), "{\"a\": 1, \"b\": [1, 2, 1], \"c\": {\"d\": 2}}");
	/* ...which turns "$..d" into "$.d", as in Dify */
	CHECK_STR(run("delete", json_pack("{s:s,s:s}", "content", c,
	    "query", "$..d")), "{\"a\": 1, \"b\": [1, 2, 1], \"c\": "
	    "{\"d\": 2}}");
	CHECK_STR(run("json_nope", json_object()),
	    "(failed: tool 'json_process/json_nope' is not available in "
	    "flowcgi)");
}

int
main(void)
{
	tn_open();
	test_parse();
	test_insert();
	test_replace();
	test_delete();
	tn_close();
	return tap_done();
}
