/*
 * t_node_list.c — the list-operator node through the real executor:
 * filters on strings, numbers, booleans and file attributes, extract,
 * order, limit, their order of application, empty input and each error.
 */
#include "tap.h"
#include "t_node_run.h"

static json_t *
lo(json_t *filter, json_t *extract, json_t *order, json_t *limit)
{
	return json_pack("{s:s,s:[s,s],s:o,s:o,s:o,s:o}", "type",
	    "list-operator", "variable", "start", "v", "filter_by",
	    filter ? filter : json_pack("{s:b,s:[]}", "enabled", 0,
	    "conditions"), "extract_by", extract ? extract :
	    json_pack("{s:b,s:s}", "enabled", 0, "serial", "1"), "order_by",
	    order ? order : json_pack("{s:b,s:s,s:s}", "enabled", 0, "key", "",
	    "value", "asc"), "limit", limit ? limit : json_pack("{s:b,s:i}",
	    "enabled", 0, "size", 10));
}

static json_t *
filt(const char *key, const char *op, json_t *value)
{
	return json_pack("{s:b,s:[{s:s,s:s,s:o}]}", "enabled", 1,
	    "conditions", "key", key, "comparison_operator", op, "value",
	    value);
}

static json_t *
outs(void)
{
	return json_pack("{s:[s,s],s:[s,s],s:[s,s]}", "result", "n1",
	    "result", "first", "n1", "first_record", "last", "n1",
	    "last_record");
}

/* Runs one list operator over v; the result as compact JSON. */
static const char *
run(json_t *node, json_t *v, struct tn_run *r)
{
	if (tn_run1(node, outs(), json_pack("{s:o,s:s}", "v", v, "q", "b"),
	    r) != 0)
		return "(no run)";
	return tn_dump(json_object_get(r->outputs, "result"));
}

static void
test_strings(void)
{
	static const struct {
		const char *op, *val, *want;
	} t[] = {
		{ "contains", "an", "[\"banana\",\"mango\"]" },
		{ "not contains", "an", "[\"apple\",\"\",\"cherry\"]" },
		{ "start with", "ch", "[\"cherry\"]" },
		{ "end with", "go", "[\"mango\"]" },
		{ "is", "apple", "[\"apple\"]" },
		{ "is not", "apple", "[\"banana\",\"\",\"cherry\",\"mango\"]" },
		{ "in", "xx apple mango", "[\"apple\",\"\",\"mango\"]" },
		{ "not in", "xx apple mango", "[\"banana\",\"cherry\"]" },
		{ "empty", "", "[\"\"]" },
		{ "not empty", "",
		    "[\"apple\",\"banana\",\"cherry\",\"mango\"]" },
		{ "start with", "{{#start.q#}}", "[\"banana\"]" },
	};
	struct tn_run	r;
	size_t		i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		CHECK_STR(run(lo(filt("", t[i].op, json_string(t[i].val)),
		    NULL, NULL, NULL), json_pack("[s,s,s,s,s]", "apple",
		    "banana", "", "cherry", "mango"), &r), t[i].want);
		tn_release(&r);
	}
	/* a list value is for files only (Dify: InvalidFilterValueError) */
	run(lo(filt("", "in", json_pack("[s,s]", "apple", "kiwi")), NULL, NULL,
	    NULL), json_pack("[s,s]", "apple", "app"), &r);
	CHECK_STR(r.status, "failed");
	CHECK(r.error && strstr(r.error, "Invalid filter value"));
	tn_release(&r);
	/* an unknown operator fails */
	run(lo(filt("", ">", json_string("a")), NULL, NULL, NULL),
	    json_pack("[s]", "a"), &r);
	CHECK_STR(r.status, "failed");
	CHECK(r.error && strstr(r.error, "Invalid condition: >"));
	tn_release(&r);
}

static void
test_numbers(void)
{
	static const struct {
		const char *op, *val, *want;
	} t[] = {
		{ "=", "2", "[2,2.0]" }, { "≠", "2", "[1,3.5]" },
		{ ">", "2", "[3.5]" }, { "<", "2", "[1]" },
		{ "≥", "2", "[2,3.5,2.0]" }, { "≤", "2.0", "[1,2,2.0]" },
	};
	struct tn_run	r;
	size_t		i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		CHECK_STR(run(lo(filt("", t[i].op, json_string(t[i].val)),
		    NULL, NULL, NULL), json_pack("[i,i,f,f]", 1, 2, 3.5, 2.0),
		    &r), t[i].want);
		tn_release(&r);
	}
	run(lo(filt("", ">", json_string("many")), NULL, NULL, NULL),
	    json_pack("[i]", 1), &r);
	CHECK_STR(r.status, "failed");
	CHECK(r.error && strstr(r.error, "is not a number"));
	tn_release(&r);
	run(lo(filt("", "contains", json_string("1")), NULL, NULL, NULL),
	    json_pack("[i]", 1), &r);
	CHECK(r.error && strstr(r.error, "Invalid condition: contains"));
	tn_release(&r);
	/* booleans: is / is not with a boolean value */
	CHECK_STR(run(lo(filt("", "is", json_true()), NULL, NULL, NULL),
	    json_pack("[b,b,b]", 1, 0, 1), &r), "[true,true]");
	tn_release(&r);
	CHECK_STR(run(lo(filt("", "is not", json_true()), NULL, NULL, NULL),
	    json_pack("[b,b,b]", 1, 0, 1), &r), "[false]");
	tn_release(&r);
	run(lo(filt("", "is", json_string("true")), NULL, NULL, NULL),
	    json_pack("[b]", 1), &r);
	CHECK(r.error && strstr(r.error, "Invalid filter value"));
	tn_release(&r);
}

static json_t *
files3(void)
{
	return json_pack("[o,o,o]", tn_file("b.pdf", "application/pdf",
	    "12345", 5), tn_file("a.png", "image/png", "1", 1),
	    tn_file("c.txt", "text/plain", "123", 3));
}

static const char *
names(const struct tn_run *r)
{
	static char	buf[128];
	json_t		*f;
	size_t		i, n = 0;

	buf[0] = '\0';
	json_array_foreach(json_object_get(r->outputs, "result"), i, f)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ?
		    "," : "", json_string_value(json_object_get(f,
		    "filename")));
	return buf;
}

static void
test_files(void)
{
	struct tn_run r;

	run(lo(filt("extension", "is", json_string(".pdf")), NULL, NULL,
	    NULL), files3(), &r);
	CHECK_STR(names(&r), "b.pdf");
	tn_release(&r);
	run(lo(filt("name", "start with", json_string("a")), NULL, NULL,
	    NULL), files3(), &r);
	CHECK_STR(names(&r), "a.png");
	tn_release(&r);
	run(lo(filt("type", "in", json_pack("[s,s]", "image", "document")),
	    NULL, NULL, NULL), files3(), &r);
	CHECK_STR(names(&r), "b.pdf,a.png,c.txt");
	tn_release(&r);
	run(lo(filt("type", "not in", json_pack("[s]", "image")), NULL, NULL,
	    NULL), files3(), &r);
	CHECK_STR(names(&r), "b.pdf,c.txt");
	tn_release(&r);
	run(lo(filt("size", "≥", json_string("3")), NULL, NULL, NULL),
	    files3(), &r);
	CHECK_STR(names(&r), "b.pdf,c.txt");
	tn_release(&r);
	run(lo(filt("mime_type", "contains", json_string("text")), NULL, NULL,
	    NULL), files3(), &r);
	CHECK_STR(names(&r), "c.txt");
	tn_release(&r);
	run(lo(filt("transfer_method", "in", json_pack("[s]", "local_file")),
	    NULL, NULL, NULL), files3(), &r);
	CHECK_STR(names(&r), "b.pdf,a.png,c.txt");
	tn_release(&r);
	/* order by a file attribute, both ways */
	run(lo(NULL, NULL, json_pack("{s:b,s:s,s:s}", "enabled", 1, "key",
	    "name", "value", "asc"), NULL), files3(), &r);
	CHECK_STR(names(&r), "a.png,b.pdf,c.txt");
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    r.outputs, "first"), "filename")), "a.png");
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    r.outputs, "last"), "filename")), "c.txt");
	tn_release(&r);
	run(lo(NULL, NULL, json_pack("{s:b,s:s,s:s}", "enabled", 1, "key",
	    "size", "value", "desc"), NULL), files3(), &r);
	CHECK_STR(names(&r), "b.pdf,c.txt,a.png");
	tn_release(&r);
	/* errors: an unknown key to filter or order by */
	run(lo(filt("colour", "is", json_string("x")), NULL, NULL, NULL),
	    files3(), &r);
	CHECK(r.error && strstr(r.error, "Invalid key: colour"));
	tn_release(&r);
	run(lo(NULL, NULL, json_pack("{s:b,s:s,s:s}", "enabled", 1, "key",
	    "colour", "value", "asc"), NULL), files3(), &r);
	CHECK(r.error && strstr(r.error, "Invalid order key: colour"));
	tn_release(&r);
	run(lo(filt("type", "is", json_string("image")), NULL, NULL, NULL),
	    files3(), &r);
	CHECK(r.error && strstr(r.error, "Invalid condition: is"));
	tn_release(&r);
}

static void
test_pipeline(void)
{
	struct tn_run r;

	/* filter -> extract -> order -> limit, in that order */
	CHECK_STR(run(lo(filt("", ">", json_string("1")),
	    json_pack("{s:b,s:s}", "enabled", 1, "serial", "2"),
	    json_pack("{s:b,s:s,s:s}", "enabled", 1, "key", "", "value",
	    "desc"), json_pack("{s:b,s:i}", "enabled", 1, "size", 5)),
	    json_pack("[i,i,i,i]", 5, 1, 9, 3), &r), "[9]");
	CHECK_INT(json_integer_value(json_object_get(r.outputs, "first")), 9);
	CHECK_INT(json_integer_value(json_object_get(r.outputs, "last")), 9);
	CHECK_STR(tn_dump(json_object_get(r.node, "inputs")),
	    "{\"variable\":[5,1,9,3]}");
	tn_release(&r);
	/* order is stable, then the limit keeps the first ones */
	CHECK_STR(run(lo(NULL, NULL, json_pack("{s:b,s:s,s:s}", "enabled", 1,
	    "key", "", "value", "asc"), json_pack("{s:b,s:i}", "enabled", 1,
	    "size", 3)), json_pack("[s,s,s,s,s]", "pear", "fig", "apple",
	    "fig", "kiwi"), &r), "[\"apple\",\"fig\",\"fig\"]");
	tn_release(&r);
	CHECK_STR(run(lo(NULL, NULL, json_pack("{s:b,s:s,s:s}", "enabled", 1,
	    "key", "", "value", "desc"), NULL), json_pack("[b,b,b]", 0, 1, 0),
	    &r), "[true,false,false]");
	tn_release(&r);
	/* a negative limit slices like Python */
	CHECK_STR(run(lo(NULL, NULL, NULL, json_pack("{s:b,s:i}", "enabled", 1,
	    "size", -1)), json_pack("[i,i,i]", 1, 2, 3), &r), "[1,2]");
	tn_release(&r);
	/* extract by a template */
	CHECK(tn_run1(lo(NULL, json_pack("{s:b,s:s}", "enabled", 1, "serial",
	    "{{#start.n#}}"), NULL, NULL), outs(), json_pack("{s:[s,s,s],s:i}",
	    "v", "a", "b", "c", "n", 3), &r) == 0);
	CHECK_STR(tn_dump(json_object_get(r.outputs, "result")), "[\"c\"]");
	CHECK_STR(json_string_value(json_object_get(r.outputs, "first")), "c");
	tn_release(&r);
	/* extract errors */
	run(lo(NULL, json_pack("{s:b,s:s}", "enabled", 1, "serial", "4"), NULL,
	    NULL), json_pack("[i,i,i]", 1, 2, 3), &r);
	CHECK(r.error && strstr(r.error, "must be <= 3, got 4"));
	tn_release(&r);
	run(lo(NULL, json_pack("{s:b,s:s}", "enabled", 1, "serial", "0"), NULL,
	    NULL), json_pack("[i]", 1), &r);
	CHECK(r.error && strstr(r.error, "must be >= 1, got 0"));
	tn_release(&r);
	run(lo(NULL, json_pack("{s:b,s:s}", "enabled", 1, "serial", "x"), NULL,
	    NULL), json_pack("[i]", 1), &r);
	CHECK(r.error && strstr(r.error, "is not an integer"));
	tn_release(&r);
	/* empty input: empty result, null records */
	CHECK_STR(run(lo(filt("", "is", json_string("x")), NULL, NULL, NULL),
	    json_array(), &r), "[]");
	CHECK(json_is_null(json_object_get(r.outputs, "first")));
	CHECK(json_is_null(json_object_get(r.outputs, "last")));
	CHECK_STR(r.status, "succeeded");
	tn_release(&r);
	/* filters that keep nothing: null records too */
	CHECK_STR(run(lo(filt("", "is", json_string("x")), NULL, NULL, NULL),
	    json_pack("[s]", "y"), &r), "[]");
	CHECK(json_is_null(json_object_get(r.outputs, "last")));
	tn_release(&r);
	/* not an array of one scalar kind */
	run(lo(NULL, NULL, NULL, NULL), json_pack("[i,s]", 1, "a"), &r);
	CHECK(r.error && strstr(r.error, "is not an array of files"));
	tn_release(&r);
	run(lo(NULL, NULL, NULL, NULL), json_pack("[{s:i}]", "a", 1), &r);
	CHECK(r.error && strstr(r.error, "is not an array of files"));
	tn_release(&r);
	/* a missing variable */
	CHECK(tn_run1(json_pack("{s:s,s:[s,s]}", "type", "list-operator",
	    "variable", "start", "nothing"), outs(), NULL, &r) == 0);
	CHECK(r.error && strstr(r.error, "Variable not found"));
	tn_release(&r);
	/* an empty selector is named as none, never "(null)" */
	CHECK(tn_run1(json_pack("{s:s,s:[]}", "type", "list-operator",
	    "variable"), outs(), NULL, &r) == 0);
	CHECK(r.error && strstr(r.error, "selector: (none)") &&
	    !strstr(r.error, "(null)"));
	tn_release(&r);
}

int
main(void)
{
	tn_open();
	test_strings();
	test_numbers();
	test_files();
	test_pipeline();
	tn_close();
	return tap_done();
}
