/*
 * t_engine_dsl.c — the DSL codec: PyYAML scalar typing, keys, anchors and
 * merges, limits, and the export style of dsl_emit. Expected values were
 * checked against PyYAML 6 (yaml.safe_load, yaml.dump with allow_unicode).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "tests/unit/tap.h"

static char errbuf[ENGINE_ERRMAX];

/* Parses text with lim (NULL: defaults); NULL on failure (see errbuf). */
static json_t *
parse_lim(const char *text, const struct dsl_limits *lim)
{
	json_t *doc = NULL;

	errbuf[0] = '\0';
	if (dsl_parse(text, strlen(text), lim, errbuf, &doc) != 0)
		return NULL;
	return doc;
}

static json_t *
parse(const char *text)
{
	return parse_lim(text, NULL);
}

static int
parse_rc(const char *text, const struct dsl_limits *lim)
{
	json_t	*doc = NULL;
	int	 rc;

	errbuf[0] = '\0';
	rc = dsl_parse(text, strlen(text), lim, errbuf, &doc);
	json_decref(doc);
	return rc;
}

/* dsl_emit(doc) as a string the caller frees; NULL on failure. */
static char *
emit(const json_t *doc)
{
	char	*out = NULL;
	size_t	 n;

	if (dsl_emit(doc, errbuf, &out, &n) != 0)
		return NULL;
	if (strlen(out) != n) {
		free(out);
		return NULL;
	}
	return out;
}

/* ====== Scalar typing ====== */

static const struct {
	const char	*yaml;		/* the value after "v: " */
	const char	*json;		/* what PyYAML makes of it, as JSON */
} scalars[] = {
	/* booleans: exactly PyYAML's 18 spellings */
	{ "yes", "true" }, { "Yes", "true" }, { "YES", "true" },
	{ "no", "false" }, { "No", "false" }, { "NO", "false" },
	{ "true", "true" }, { "True", "true" }, { "TRUE", "true" },
	{ "false", "false" }, { "False", "false" }, { "FALSE", "false" },
	{ "on", "true" }, { "On", "true" }, { "ON", "true" },
	{ "off", "false" }, { "Off", "false" }, { "OFF", "false" },
	{ "y", "\"y\"" }, { "n", "\"n\"" }, { "yEs", "\"yEs\"" },
	{ "tRUE", "\"tRUE\"" },
	/* null */
	{ "~", "null" }, { "null", "null" }, { "Null", "null" },
	{ "NULL", "null" }, { "", "null" }, { "nULL", "\"nULL\"" },
	/* integers */
	{ "0", "0" }, { "00", "0" }, { "-0", "0" }, { "+0", "0" },
	{ "012", "10" }, { "0o17", "\"0o17\"" }, { "0x1F", "31" },
	{ "0X1F", "\"0X1F\"" }, { "-0x1f", "-31" }, { "0b101", "5" },
	{ "-0b11", "-3" }, { "1_000", "1000" }, { "1__0", "10" },
	{ "+12", "12" }, { "-12", "-12" }, { "09", "\"09\"" },
	{ "0_7", "7" }, { "1:30", "90" }, { "-1:30", "-90" },
	{ "1:5:7", "3907" }, { "12:345", "\"12:345\"" },
	{ "190:20:30", "685230" }, { "0:30", "\"0:30\"" },
	{ "9223372036854775807", "9223372036854775807" },
	{ "-9223372036854775808", "-9223372036854775808" },
	{ "12345678901234567890", "\"12345678901234567890\"" },
	{ "1754683430480", "1754683430480" },
	{ "1754683430480start", "\"1754683430480start\"" },
	/* floats: a dot is required, an exponent needs its sign */
	{ "1.0", "1.0" }, { "1.", "1.0" }, { ".5", "0.5" },
	{ "-.5", "\"-.5\"" }, { "+.5", "\"+.5\"" }, { "1e3", "\"1e3\"" },
	{ "1.0e3", "\"1.0e3\"" }, { "1.0e+3", "1000.0" },
	{ "1.0E-3", "0.001" }, { "1_000.5", "1000.5" }, { "0.1", "0.1" },
	{ "1:30.5", "90.5" }, { "1.2.3", "\"1.2.3\"" },
	/* infinities and NaN cannot be JSON: their text is kept */
	{ ".inf", "\".inf\"" }, { "-.inf", "\"-.inf\"" },
	{ ".Inf", "\".Inf\"" }, { ".nan", "\".nan\"" },
	{ ".NaN", "\".NaN\"" },
	/* timestamps stay text */
	{ "2001-12-14", "\"2001-12-14\"" },
	{ "2001-12-14t21:59:43.10-05:00", "\"2001-12-14t21:59:43.10-05:00\"" },
	/* quoted and tagged */
	{ "'1.0'", "\"1.0\"" }, { "\"true\"", "\"true\"" },
	{ "'null'", "\"null\"" }, { "''", "\"\"" }, { "'0123'", "\"0123\"" },
	{ "!!str 12", "\"12\"" }, { "!!int \"0x10\"", "16" },
	{ "!!float \"1\"", "1.0" }, { "!!bool \"yes\"", "true" },
	{ "!!null \"x\"", "null" }, { "! 12", "\"12\"" },
	{ "!!str", "\"\"" },
	/* plain text */
	{ "hello world", "\"hello world\"" }, { "中文", "\"中文\"" },
	{ "a:b", "\"a:b\"" }, { "<<x", "\"<<x\"" },
};

static void
test_scalars(void)
{
	char	 text[256];
	json_t	*doc, *want;
	size_t	 i;
	int	 ok;

	for (i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++) {
		snprintf(text, sizeof(text), "v: %s\n", scalars[i].yaml);
		doc = parse(text);
		want = json_loads(scalars[i].json, JSON_DECODE_ANY, NULL);
		ok = doc != NULL && want != NULL &&
		    json_equal(json_object_get(doc, "v"), want) &&
		    json_typeof(json_object_get(doc, "v")) ==
		    json_typeof(want);
		if (!tap_check(ok, __FILE__, __LINE__, scalars[i].yaml))
			printf("#   want %s (%s)\n", scalars[i].json, errbuf);
		json_decref(doc);
		json_decref(want);
	}
	/* Values PyYAML itself refuses. */
	CHECK_INT(parse_rc("v: 0b_\n", NULL), ENGINE_EINVAL);
	CHECK_INT(parse_rc("v: 0x_\n", NULL), ENGINE_EINVAL);
	CHECK_INT(parse_rc("v: !!int abc\n", NULL), ENGINE_EINVAL);
	CHECK_INT(parse_rc("v: !!bool maybe\n", NULL), ENGINE_EINVAL);
	CHECK_INT(parse_rc("v: !!float 0x10\n", NULL), ENGINE_EINVAL);
	CHECK_INT(parse_rc("v: !custom x\n", NULL), ENGINE_EINVAL);
	CHECK(strstr(errbuf, "!custom") != NULL);
	CHECK_INT(parse_rc("v: !!omap [a: 1]\n", NULL), ENGINE_EINVAL);
}

/* ====== Keys, anchors, merges, documents ====== */

/* The keys of obj in order, joined by ','. */
static void
keys_of(const json_t *obj, char *buf, size_t size)
{
	const char	*k;
	json_t		*v;
	size_t		 n = 0;

	buf[0] = '\0';
	json_object_foreach((json_t *)obj, k, v)
		n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s",
		    n ? "," : "", k);
}

static void
test_keys(void)
{
	json_t	*doc;
	char	 keys[256];

	doc = parse("1754683430480start: a\n123: b\n1.5: c\ntrue: d\n~: e\n"
	    "'q': f\n\"<<\": g\nz: h\n");
	CHECK(doc != NULL);
	keys_of(doc, keys, sizeof(keys));
	CHECK_STR(keys, "1754683430480start,123,1.5,true,~,q,<<,z");
	CHECK_STR(json_string_value(json_object_get(doc, "123")), "b");
	json_decref(doc);

	/* A repeated key keeps its first place and its last value. */
	doc = parse("a: 1\nb: 2\na: 3\n");
	keys_of(doc, keys, sizeof(keys));
	CHECK_STR(keys, "a,b");
	CHECK_INT(json_integer_value(json_object_get(doc, "a")), 3);
	json_decref(doc);

	/* Merge keys: merged first, own keys win; a list merges backwards. */
	doc = parse("base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n");
	keys_of(json_object_get(doc, "m"), keys, sizeof(keys));
	CHECK_STR(keys, "x,y");
	CHECK_INT(json_integer_value(json_object_get(json_object_get(doc, "m"),
	    "y")), 3);
	json_decref(doc);
	doc = parse("a: &a {k: 1}\nb: &b {k: 2, j: 0}\nm: {<<: [*a, *b], "
	    "z: 9}\n");
	keys_of(json_object_get(doc, "m"), keys, sizeof(keys));
	CHECK_STR(keys, "k,j,z");
	CHECK_INT(json_integer_value(json_object_get(json_object_get(doc, "m"),
	    "k")), 1);
	json_decref(doc);
	CHECK_INT(parse_rc("a: &a 1\nm: {<<: *a}\n", NULL), ENGINE_EINVAL);
	CHECK(strstr(errbuf, "line 2") != NULL);

	/* Aliases: shared values, a scalar alias as a key. */
	doc = parse("a: &k key\n*k : v\nl: &l [1, 2]\nm: *l\n");
	CHECK(doc != NULL);
	CHECK_STR(json_string_value(json_object_get(doc, "key")), "v");
	CHECK(json_equal(json_object_get(doc, "l"), json_object_get(doc, "m")));
	json_decref(doc);

	/* What PyYAML refuses. */
	CHECK_INT(parse_rc("? [a]\n: 1\n", NULL), ENGINE_EINVAL);
	CHECK_INT(parse_rc("a: &l [1]\n*l : 2\n", NULL), ENGINE_EINVAL);
	CHECK_INT(parse_rc("a: *nope\n", NULL), ENGINE_EINVAL);
	CHECK(strstr(errbuf, "undefined alias") != NULL);
	CHECK_INT(parse_rc("a: &x 1\nb: &x 2\n", NULL), ENGINE_EINVAL);
	CHECK(strstr(errbuf, "duplicate anchor") != NULL);
	CHECK_INT(parse_rc("a: &r [1, *r]\n", NULL), ENGINE_EINVAL);
	CHECK_INT(parse_rc("--- a\n--- b\n", NULL), ENGINE_EINVAL);
	CHECK(strstr(errbuf, "single document") != NULL);
	CHECK_INT(parse_rc("a: [1, 2\n", NULL), ENGINE_EINVAL);
	CHECK(strstr(errbuf, "line") != NULL);

	/* Empty stream: null. Scalar root. UTF-8 kept. */
	doc = parse("");
	CHECK(json_is_null(doc));
	json_decref(doc);
	doc = parse("# only a comment\n");
	CHECK(json_is_null(doc));
	json_decref(doc);
	doc = parse("--- 12\n");
	CHECK(json_is_integer(doc) && json_integer_value(doc) == 12);
	json_decref(doc);
	doc = parse("名称: 中文 🤖\n");
	CHECK_STR(json_string_value(json_object_get(doc, "名称")), "中文 🤖");
	json_decref(doc);
}

/* ====== Limits ====== */

static void
test_limits(void)
{
	struct dsl_limits	 lim;
	char			*big, *p;
	size_t			 i;

	dsl_limits_default(&lim);
	CHECK(lim.max_bytes == 10u * 1024 * 1024);
	CHECK(lim.max_depth == 64);
	CHECK(lim.max_nodes == 1000000);
	CHECK(lim.max_aliases == 10000);

	lim.max_bytes = 10;
	CHECK_INT(parse_rc("a: 12345678\n", &lim), ENGINE_EINVAL);
	CHECK(strstr(errbuf, "max_bytes") != NULL);
	CHECK_INT(parse_rc("a: 1234\n", &lim), 0);

	dsl_limits_default(&lim);
	lim.max_depth = 3;
	CHECK_INT(parse_rc("a: [[1]]\n", &lim), 0);
	CHECK_INT(parse_rc("x: 1\na:\n  b:\n    c: [1]\n", &lim),
	    ENGINE_EINVAL);
	CHECK(strstr(errbuf, "max_depth") != NULL);
	CHECK(strstr(errbuf, "line 4") != NULL);
	/* An alias may not nest deeper than the limit either. */
	CHECK_INT(parse_rc("a: &a [[1]]\nb: [*a]\n", &lim), ENGINE_EINVAL);
	CHECK(strstr(errbuf, "max_depth") != NULL);

	dsl_limits_default(&lim);
	lim.max_nodes = 5;
	CHECK_INT(parse_rc("[1, 2, 3, 4]", &lim), 0);
	CHECK_INT(parse_rc("[1, 2, 3, 4, 5]", &lim), ENGINE_EINVAL);
	CHECK(strstr(errbuf, "max_nodes") != NULL);

	dsl_limits_default(&lim);
	lim.max_aliases = 2;
	CHECK_INT(parse_rc("a: &a 1\nb: [*a, *a]\n", &lim), 0);
	CHECK_INT(parse_rc("a: &a 1\nb:\n- *a\n- *a\n- *a\n", &lim),
	    ENGINE_EINVAL);
	CHECK(strstr(errbuf, "max_aliases") != NULL);
	CHECK(strstr(errbuf, "line 5") != NULL);

	/* The billion laughs: refused at the alias, never expanded. */
	CHECK_INT(parse_rc(
	    "a: &a [x, x, x, x, x, x, x, x, x]\n"
	    "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
	    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
	    "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
	    "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
	    "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
	    "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
	    "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
	    "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n", NULL),
	    ENGINE_EINVAL);
	CHECK(strstr(errbuf, "max_nodes") != NULL);
	CHECK(strstr(errbuf, "alias") != NULL);

	/* Few nodes, much text: aliases may not multiply the bytes. */
	dsl_limits_default(&lim);
	lim.max_bytes = 1000;
	big = malloc(2000);
	p = big;
	p += snprintf(p, 20, "a: &a ");
	for (i = 0; i < 600; i++)
		*p++ = 'x';
	snprintf(p, 40, "\nb: *a\n");
	CHECK_INT(parse_rc(big, &lim), ENGINE_EINVAL);
	CHECK(strstr(errbuf, "max_bytes") != NULL);
	free(big);
}

/* ====== Emitting ====== */

static const struct {
	const char	*value;		/* a JSON string value */
	const char	*yaml;		/* dsl_emit of {"v": value} */
} quoting[] = {
	{ "1.0", "v: '1.0'\n" }, { "true", "v: 'true'\n" },
	{ "yes", "v: 'yes'\n" }, { "null", "v: 'null'\n" },
	{ "~", "v: '~'\n" }, { "", "v: ''\n" }, { "0123", "v: '0123'\n" },
	{ "12", "v: '12'\n" }, { "1:30", "v: '1:30'\n" },
	{ "2001-12-14", "v: '2001-12-14'\n" }, { "<<", "v: '<<'\n" },
	{ "=", "v: '='\n" }, { ".inf", "v: '.inf'\n" },
	{ " lead", "v: ' lead'\n" }, { "trail ", "v: 'trail '\n" },
	{ "a: b", "v: 'a: b'\n" }, { "- x", "v: '- x'\n" },
	{ "#x", "v: '#x'\n" }, { "it's", "v: it's\n" },
	{ "1e3", "v: 1e3\n" }, { "hello world", "v: hello world\n" },
	{ "1754683430480start", "v: 1754683430480start\n" },
	{ "tab\there", "v: \"tab\\there\"\n" },
	{ "中文", "v: 中文\n" }, { "🤖", "v: 🤖\n" },
	{ "\xef\xbb\xbf", "v: \"\\uFEFF\"\n" },
};

static void
check_emit(const char *json, const char *want, int line)
{
	json_t	*doc = json_loads(json, JSON_DECODE_ANY, NULL);
	char	*got = doc ? emit(doc) : NULL;

	if (!tap_check(got != NULL && strcmp(got, want) == 0, __FILE__, line,
	    json))
		printf("#   got:  '%s'\n#   want: '%s'\n", got ? got : errbuf,
		    want);
	free(got);
	json_decref(doc);
}

#define CHECK_EMIT(json, want) check_emit((json), (want), __LINE__)

static void
test_emit(void)
{
	json_t	*doc;
	char	*y;
	size_t	 i;

	for (i = 0; i < sizeof(quoting) / sizeof(quoting[0]); i++) {
		doc = json_pack("{s:s}", "v", quoting[i].value);
		y = emit(doc);
		if (!tap_check(y != NULL && strcmp(y, quoting[i].yaml) == 0,
		    __FILE__, __LINE__, quoting[i].value))
			printf("#   got: '%s'\n", y ? y : errbuf);
		free(y);
		json_decref(doc);
	}
	/* Numbers as PyYAML writes them. */
	CHECK_EMIT("{\"v\": 1.0}", "v: 1.0\n");
	CHECK_EMIT("{\"v\": 1e16}", "v: 1.0e+16\n");
	CHECK_EMIT("{\"v\": 1.5e16}", "v: 1.5e+16\n");
	CHECK_EMIT("{\"v\": 1e15}", "v: 1000000000000000.0\n");
	CHECK_EMIT("{\"v\": 0.0001}", "v: 0.0001\n");
	CHECK_EMIT("{\"v\": 1e-5}", "v: 1.0e-05\n");
	CHECK_EMIT("{\"v\": 0.1}", "v: 0.1\n");
	CHECK_EMIT("{\"v\": -2.5}", "v: -2.5\n");
	CHECK_EMIT("{\"v\": 7}", "v: 7\n");
	CHECK_EMIT("{\"v\": true, \"w\": false, \"x\": null}",
	    "v: true\nw: false\nx: null\n");
	CHECK_EMIT("{\"v\": {}, \"w\": []}", "v: {}\nw: []\n");
	/* Literal blocks for multi-line text. */
	CHECK_EMIT("{\"code\": \"import json\\n\\ndef main():\\n    return 1"
	    "\\n\"}", "code: |\n  import json\n\n  def main():\n"
	    "      return 1\n");
	CHECK_EMIT("{\"s\": \"a\\nb\"}", "s: |-\n  a\n  b\n");
	CHECK_EMIT("{\"s\": \"a\\n\\n\"}", "s: |+\n  a\n\n...\n");
	CHECK_EMIT("{\"s\": \"  indented\\nx\"}",
	    "s: |2-\n    indented\n  x\n");
	CHECK_EMIT("{\"s\": \"中文\\n第二行\"}", "s: |-\n  中文\n  第二行\n");
	/* A block cannot keep trailing spaces: double quotes then. */
	CHECK_EMIT("{\"s\": \"a \\nb\"}", "s: \"a \\nb\"\n");
	/* Keys sorted at every level, sequences unindented under keys. */
	CHECK_EMIT("{\"b\": 1, \"a\": {\"d\": 1, \"c\": 2}}",
	    "a:\n  c: 2\n  d: 1\nb: 1\n");
	CHECK_EMIT("{\"l\": [1, {\"b\": 1, \"a\": 2}]}",
	    "l:\n- 1\n- a: 2\n  b: 1\n");
	CHECK_EMIT("{\"b\": 1, \"B\": 2, \"a\": 3, \"中\": 4, \"_\": 5}",
	    "B: 2\n_: 5\na: 3\nb: 1\n中: 4\n");
	CHECK_EMIT("{\"123\": \"x\", \"true\": 1}", "'123': x\n'true': 1\n");
	CHECK_EMIT("\"plain\"", "plain\n");
	CHECK_EMIT("{\"\": 1}", "'': 1\n");

	/* Too deep to emit. */
	doc = json_array();
	{
		json_t *cur = doc, *next;

		for (i = 0; i < 1100; i++) {
			next = json_array();
			json_array_append_new(cur, next);
			cur = next;
		}
	}
	y = NULL;
	CHECK(dsl_emit(doc, errbuf, &y, &i) == ENGINE_EINVAL);
	CHECK(y == NULL);
	json_decref(doc);
}

/* parse(emit(x)) == x and emit(parse(emit(x))) == emit(x). */
static int
roundtrip(const json_t *x)
{
	json_t	*back = NULL;
	char	*y1 = emit(x), *y2 = NULL;
	int	 ok = 0;

	if (y1 != NULL && (back = parse(y1)) != NULL && json_equal((json_t *)x,
	    back) && (y2 = emit(back)) != NULL && strcmp(y1, y2) == 0)
		ok = 1;
	free(y1);
	free(y2);
	json_decref(back);
	return ok;
}

static void
test_roundtrip(void)
{
	static const char *const docs[] = {
		"{\"a\": [\"1.0\", \"true\", \"\", \"0x10\", \"~\", \" x \"]}",
		"{\"nested\": {\"l\": [[], {}, [[1, 2.5, null]], {\"k\": "
		"\"v\\n\"}]}}",
		"{\"ctl\": \"\\u0000\\u0001\\r\\n\\t\\u007f\\u0085\\u2028"
		"\\ufeff\", \"emoji\": \"\\ud83e\\udd16\\n\\ud83d\\ude00 \"}",
		"{\"pua\": \"\\ue000\\ud83e\\udd16\\uf8ff\", "
		"\"k\\ud83e\\udd16\": 1}",
		"{\"long\": \"word word word word word word word word word "
		"word word word word word word word word word word word word "
		"word\"}",
		"[\"- a\", \"? b\", \": c\", \"a #b\", \"@x\", \"`y\", \"%z\", "
		"\"!t\", \"&a\", \"*a\", \"|\", \">\", \"'\", \"\\\"\"]",
		"{\"\": \"empty key\", \"nul\": \"a\\u0000b\"}",
		"[-0.0, 1e300, 5e-324, 9223372036854775807, "
		"-9223372036854775808]",
		"\"\\n\\n\"",
		"[\"\\n x\", \" \\n\", \"a\\n \", \"\\t\\n\"]",
	};
	json_t	*x;
	size_t	 i;

	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		x = json_loads(docs[i], JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
		if (!tap_check(x != NULL && roundtrip(x), __FILE__, __LINE__,
		    docs[i]))
			printf("#   %s\n", errbuf);
		json_decref(x);
	}
	/* jansson cannot compare keys holding NUL: such keys are refused. */
	CHECK_INT(parse_rc("\"a\\0b\": 1\n", NULL), ENGINE_EINVAL);
	CHECK(strstr(errbuf, "NUL") != NULL);
	/* No \U escapes for characters beyond U+FFFF. */
	x = json_pack("{s:s}", "icon", "\xf0\x9f\xa4\x96");
	{
		char *y = emit(x);

		CHECK_STR(y, "icon: 🤖\n");
		free(y);
	}
	json_decref(x);
}

int
main(void)
{
	test_scalars();
	test_keys();
	test_limits();
	test_emit();
	test_roundtrip();
	return tap_done();
}
