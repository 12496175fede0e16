/*
 * t_engine_template.c — {{#a.b#}} variable templates and value-to-text
 * conversion (engine/template.c), against Dify's VARIABLE_PATTERN,
 * convert_template and Segment.text / Segment.markdown. Expected strings
 * are what Python's str(), repr() and json.dumps produce.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"
#include "tests/unit/tap.h"

/* The pool: pool[parts[0]][parts[1]] walked by the remaining parts. */
static const json_t *
lookup(void *ctx, const char *const *parts, size_t nparts)
{
	const json_t	*v = ctx;
	size_t		 i;

	for (i = 0; i < nparts && v != NULL; i++)
		v = json_object_get(v, parts[i]);
	return i >= 2 || (nparts == 1 && v != NULL) ? v : NULL;
}

static void
check_text(const char *json, enum tpl_form form, const char *want)
{
	json_t	*v = json_loads(json, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	char	*got = NULL;

	CHECK(v != NULL);
	CHECK_INT(tpl_value_text(v, form, &got), 0);
	CHECK_STR(got, want);
	free(got);
	json_decref(v);
}

static void
check_repr(const char *json, const char *want)
{
	json_t	*v = json_loads(json, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	char	*got = NULL;

	CHECK_INT(tpl_py_repr(v, &got), 0);
	CHECK_STR(got, want);
	free(got);
	json_decref(v);
}

static void
test_text(void)
{
	check_text("\"plain é\"", TPL_TEXT, "plain é");
	check_text("42", TPL_TEXT, "42");
	check_text("-7", TPL_TEXT, "-7");
	check_text("1.0", TPL_TEXT, "1.0");
	check_text("0.1", TPL_TEXT, "0.1");
	check_text("1e16", TPL_TEXT, "1e+16");
	check_text("1e15", TPL_TEXT, "1000000000000000.0");
	check_text("0.00001", TPL_TEXT, "1e-05");
	check_text("0.0001", TPL_TEXT, "0.0001");
	check_text("-0.0", TPL_TEXT, "-0.0");
	check_text("123456789012345678.0", TPL_TEXT, "1.2345678901234568e+17");
	check_text("0.30000000000000004", TPL_TEXT, "0.30000000000000004");
	check_text("null", TPL_TEXT, "");
	check_text("true", TPL_TEXT, "True");
	check_text("false", TPL_TEXT, "False");
	check_text("{\"a\":\"é\\\"\\n\",\"b\":[1,2.5,null,true],\"c\":{}}",
	    TPL_TEXT, "{\"a\": \"é\\\"\\n\", \"b\": [1, 2.5, null, true], "
	    "\"c\": {}}");
	check_text("[\"a\",\"é\\\"\"]", TPL_TEXT, "[\"a\", \"é\\\"\"]");
	check_text("[]", TPL_TEXT, "");
	check_text("[1,\"a\",null,true,1.0,{\"k\":\"v\"}]", TPL_TEXT,
	    "[1, 'a', None, True, 1.0, {'k': 'v'}]");
	check_text("[[\"x\"]]", TPL_TEXT, "[['x']]");
	check_text("{\"dify_model_identity\":\"__dify__file__\","
	    "\"filename\":\"a.png\",\"type\":\"image\",\"url\":\"http://u\"}",
	    TPL_TEXT, "");
	check_text("[{\"dify_model_identity\":\"__dify__file__\"}]",
	    TPL_TEXT, "");
}

static void
test_markdown(void)
{
	check_text("{\"a\":\"é\",\"b\":[1,{\"x\":[]}],\"c\":{}}",
	    TPL_MARKDOWN, "{\n  \"a\": \"é\",\n  \"b\": [\n    1,\n    {\n"
	    "      \"x\": []\n    }\n  ],\n  \"c\": {}\n}");
	check_text("[\"a\",\"b\"]", TPL_MARKDOWN, "- a\n- b");
	check_text("[1,{\"k\":\"v\"},null]", TPL_MARKDOWN,
	    "- 1\n- {'k': 'v'}\n- None");
	check_text("[]", TPL_MARKDOWN, "");
	check_text("\"s\"", TPL_MARKDOWN, "s");
	check_text("2.5", TPL_MARKDOWN, "2.5");
	check_text("null", TPL_MARKDOWN, "");
	check_text("{\"dify_model_identity\":\"__dify__file__\","
	    "\"filename\":\"a.png\",\"type\":\"image\",\"url\":\"http://u/a\"}",
	    TPL_MARKDOWN, "![a.png](http://u/a)");
	check_text("[{\"dify_model_identity\":\"__dify__file__\","
	    "\"filename\":\"r.pdf\",\"type\":\"document\","
	    "\"url\":\"http://u/r\"},"
	    "{\"dify_model_identity\":\"__dify__file__\",\"filename\":null,"
	    "\"type\":\"document\",\"remote_url\":\"http://x/y\"}]",
	    TPL_MARKDOWN, "[r.pdf](http://u/r)\n[http://x/y](http://x/y)");
}

static void
test_repr(void)
{
	check_repr("\"it's\"", "\"it's\"");
	check_repr("\"q\\\"'\"", "'q\"\\''");
	check_repr("\"\\u0000\\u007f\\u200b\\ue000é\\t\\\\\"",
	    "'\\x00\\x7f\\u200b\\ue000é\\t\\\\'");
	check_repr("{\"a\":[1,2.0,null,false]}",
	    "{'a': [1, 2.0, None, False]}");
	check_repr("\"\\u00a0\\u2028\"", "'\\xa0\\u2028'");
}

static char *
render(const char *tpl, unsigned flags, json_t *pool, size_t max)
{
	char	 err[ENGINE_ERRMAX] = "", *out = NULL;
	int	 rc;

	rc = tpl_render(tpl, TPL_TEXT, flags, lookup, pool, max, err, &out);
	if (rc != 0) {
		free(out);
		return strdup(err);
	}
	return out;
}

static void
check_render(json_t *pool, const char *tpl, unsigned flags, const char *want)
{
	char *got = render(tpl, flags, pool, 0);

	CHECK_STR(got, want);
	free(got);
}

static void
test_render(void)
{
	json_t	*pool;
	char	 tpl[512], want[512], *got, err[ENGINE_ERRMAX];
	int	 rc;

	pool = json_pack("{s:{s:s, s:i, s:{s:{s:s}}, s:[s,s], s:n},"
	    "s:{s:s}, s:s, s:{s:s}}",
	    "llm", "text", "hi", "n", 3, "obj", "deep", "k", "v",
	    "list", "a", "b", "none",
	    "sys", "query", "Q?", "context", "x",
	    "n1234567890123456789012345678901234567890123456789",
	    "v", "long");
	check_render(pool, "A {{#llm.text#}} B", 0, "A hi B");
	check_render(pool, "{{#llm.n#}}/{{#llm.list#}}/{{#llm.none#}}", 0,
	    "3/[\"a\", \"b\"]/");
	check_render(pool, "{{#llm.obj#}}", 0, "{\"deep\": {\"k\": \"v\"}}");
	check_render(pool, "{{#llm.obj.deep.k#}}", 0, "v");
	/* Unresolved: the dotted text. */
	check_render(pool, "[{{#llm.missing#}}] [{{#nonode.x.y#}}]", 0,
	    "[llm.missing] [nonode.x.y]");
	/* Not references: one part, hyphens, a digit first, spaces. */
	check_render(pool, "{{#llm#}} {{#a-b.c#}} {{#llm.1x#}} "
	    "{{# llm.text #}}", 0, "{{#llm#}} {{#a-b.c#}} {{#llm.1x#}} "
	    "{{# llm.text #}}");
	/* First part up to 50 characters, later parts up to 30, 1-10 parts. */
	check_render(pool, "{{#n123456789012345678901234567890"
	    "1234567890123456789.v#}}", 0, "long");
	check_render(pool, "{{#n123456789012345678901234567890"
	    "12345678901234567890.v#}}", 0, "{{#n123456789012345678901234567890"
	    "12345678901234567890.v#}}");
	check_render(pool, "{{#a.b23456789012345678901234567890#}}", 0,
	    "a.b23456789012345678901234567890");
	check_render(pool, "{{#a.b234567890123456789012345678901#}}", 0,
	    "{{#a.b234567890123456789012345678901#}}");
	check_render(pool, "{{#a.b.c.d.e.f.g.h.i.j.k#}}", 0,
	    "a.b.c.d.e.f.g.h.i.j.k");
	check_render(pool, "{{#a.b.c.d.e.f.g.h.i.j.k.l#}}", 0,
	    "{{#a.b.c.d.e.f.g.h.i.j.k.l#}}");
	/* Overlapping braces: the match starts at the last "{{#". */
	check_render(pool, "{{{#llm.text#}}}", 0, "{hi}");
	/* {{#context#}}: literal unless the caller asks for it. */
	check_render(pool, "C: {{#context#}}", 0, "C: {{#context#}}");
	check_render(pool, "C: {{#context#}}", TPL_CONTEXT, "C: x");
	json_object_del(pool, "context");
	check_render(pool, "C: {{#context#}}", TPL_CONTEXT, "C: {{#context#}}");
	/* Dify looks up literal text with a dot too. */
	check_render(pool, "{{#llm.text#}}sys.query{{#llm.text#}}", 0,
	    "hiQ?hi");
	check_render(pool, "Done. {{#llm.text#}}", 0, "Done. hi");
	/* NULL lookup: nothing resolves. */
	rc = tpl_render("{{#llm.text#}}", TPL_TEXT, 0, NULL, NULL, 0, err,
	    &got);
	CHECK_INT(rc, 0);
	CHECK_STR(got, "llm.text");
	free(got);
	/* Markdown form. */
	rc = tpl_render("{{#llm.list#}}", TPL_MARKDOWN, 0, lookup, pool, 0,
	    err, &got);
	CHECK_INT(rc, 0);
	CHECK_STR(got, "- a\n- b");
	free(got);
	/* The output length limit counts characters. */
	snprintf(tpl, sizeof(tpl), "ééé{{#llm.text#}}");
	got = render(tpl, 0, pool, 5);
	CHECK_STR(got, "éééhi");
	free(got);
	rc = tpl_render(tpl, TPL_TEXT, 0, lookup, pool, 4, err, &got);
	CHECK_INT(rc, ENGINE_ELIMIT);
	CHECK(got == NULL);
	CHECK(strstr(err, "output length") != NULL);
	snprintf(want, sizeof(want), "%s", "");
	check_render(pool, "", 0, want);
	json_decref(pool);
}

static void
test_selectors(void)
{
	json_t	*sel = NULL, *want;
	char	*s;

	CHECK_INT(tpl_selectors("{{#a.b#}} {{#context#}} {{#x.y.z#}} "
	    "{{#a.b#}} {{#bad-id.c#}} a.b", &sel), 0);
	want = json_pack("[[s,s],[s,s,s]]", "a", "b", "x", "y", "z");
	CHECK(json_equal(sel, want));
	s = json_dumps(sel, 0);
	printf("# %s\n", s);
	free(s);
	json_decref(sel);
	json_decref(want);
	CHECK_INT(tpl_selectors("", &sel), 0);
	CHECK_INT(json_array_size(sel), 0);
	json_decref(sel);
}

int
main(void)
{
	test_text();
	test_markdown();
	test_repr();
	test_render();
	test_selectors();
	return tap_done();
}
