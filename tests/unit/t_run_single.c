/*
 * t_run_single.c — the single-step run's variable mapping
 * (engine/run/single.c): the keys a node's inputs are given under, as
 * Dify's extract_variable_selector_to_variable_mapping makes them, for an
 * llm (prompt references, context, vision files), a code node (its
 * variable names), a classifier and an extractor (query), an if-else
 * (its conditions), an aggregator (its selector list), an http request
 * (references in its URL and body); what the node writes (outputs,
 * default values) is not an input; inputs put into the pool at their
 * selectors, under the key alone or prefixed with the node id, a missing
 * one named as Dify names it unless the pool has the value (env); which
 * node types a single step is offered for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/run/single.c"
#include "tests/unit/tap.h"

/* The mapping of node data given as JSON text, as compact JSON text. */
static char *
mapping(const char *data)
{
	json_t	*d = json_loads(data, 0, NULL), *map = json_object();
	char	*s = NULL;

	if (d != NULL && map != NULL && map_walk(map, NULL, d, 0) == 0)
		s = json_dumps(map, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(d);
	json_decref(map);
	return s;
}

static void
check_map(const char *data, const char *want)
{
	char *got = mapping(data);

	CHECK_STR(got, want);
	free(got);
}

static void
test_mapping(void)
{
	/* llm: prompt references, the context, vision files */
	check_map("{\"type\":\"llm\",\"prompt_template\":[{\"role\":\"user\","
	    "\"text\":\"say {{#s.q#}} to {{#1711528708197.text#}}\"}],"
	    "\"context\":{\"enabled\":true,\"variable_selector\":[\"kr\","
	    "\"result\"]},\"vision\":{\"enabled\":true,\"configs\":{"
	    "\"variable_selector\":[\"s\",\"pics\"]}}}",
	    "{\"#1711528708197.text#\":[\"1711528708197\",\"text\"],"
	    "\"#context#\":[\"kr\",\"result\"],\"#files#\":[\"s\",\"pics\"],"
	    "\"#s.q#\":[\"s\",\"q\"]}");
	/* a context that is off reads nothing */
	check_map("{\"context\":{\"enabled\":false,\"variable_selector\":"
	    "[\"kr\",\"result\"]}}", "{}");
	/* code: its variables by name; its outputs are not inputs */
	check_map("{\"type\":\"code\",\"variables\":[{\"variable\":\"arg1\","
	    "\"value_selector\":[\"s\",\"a\"]},{\"variable\":\"arg2\","
	    "\"value_selector\":[\"llm\",\"text\"]}],\"outputs\":{\"r\":{"
	    "\"type\":\"string\"}},\"code\":\"def main(arg1): ...\"}",
	    "{\"arg1\":[\"s\",\"a\"],\"arg2\":[\"llm\",\"text\"]}");
	/* classifier and extractor: query */
	check_map("{\"type\":\"question-classifier\",\"query_variable_selector\":"
	    "[\"sys\",\"query\"],\"classes\":[{\"id\":\"1\",\"name\":\"a\"}]}",
	    "{\"query\":[\"sys\",\"query\"]}");
	check_map("{\"type\":\"parameter-extractor\",\"query\":[\"s\",\"q\"],"
	    "\"instruction\":\"use {{#env.k#}}\"}",
	    "{\"#env.k#\":[\"env\",\"k\"],\"query\":[\"s\",\"q\"]}");
	/* if-else conditions; an aggregator's selector list */
	check_map("{\"type\":\"if-else\",\"cases\":[{\"case_id\":\"true\","
	    "\"conditions\":[{\"variable_selector\":[\"s\",\"n\"],"
	    "\"comparison_operator\":\">\",\"value\":\"1\"}]}]}",
	    "{\"#s.n#\":[\"s\",\"n\"]}");
	check_map("{\"type\":\"variable-aggregator\",\"variables\":[[\"a\","
	    "\"out\"],[\"b\",\"out\",\"deep\"]],\"output_type\":\"string\"}",
	    "{\"#a.out#\":[\"a\",\"out\"],\"#b.out.deep#\":[\"b\",\"out\","
	    "\"deep\"]}");
	/* http request: references in its URL and body; a default value
	 * of its error strategy is written, not read */
	check_map("{\"type\":\"http-request\",\"url\":\"http://x/{{#s.id#}}\","
	    "\"body\":{\"type\":\"json\",\"data\":[{\"value\":"
	    "\"{\\\"q\\\":\\\"{{#s.q#}}\\\"}\"}]},\"default_value\":[{\"key\":"
	    "\"body\",\"value\":\"{{#no.no#}}\"}]}",
	    "{\"#s.id#\":[\"s\",\"id\"],\"#s.q#\":[\"s\",\"q\"]}");
}

/* Runs single_inputs on node data and inputs (JSON texts); rc and err. */
static int
inputs_into(const char *data, const char *in, struct pool *p, char *err)
{
	struct gnode	 n;
	json_t		*d = json_loads(data, 0, NULL);
	json_t		*i = json_loads(in, 0, NULL);
	int		 rc;

	memset(&n, 0, sizeof(n));
	n.id = "code";
	n.type = json_string_value(json_object_get(d, "type"));
	n.data = d;
	err[0] = '\0';
	rc = single_inputs(&n, i, p, err);
	json_decref(d);
	json_decref(i);
	return rc;
}

static const char *
pool_text(struct pool *p, const char *node, const char *name, char *buf,
    size_t sz)
{
	const char	*parts[2] = { node, name };
	json_t		*v = pool_get_parts(p, parts, 2);
	char		*s = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) :
			    NULL;

	snprintf(buf, sz, "%s", s ? s : "(none)");
	free(s);
	json_decref(v);
	return buf;
}

static void
test_inputs(void)
{
	const char	*code = "{\"type\":\"code\",\"variables\":["
			    "{\"variable\":\"n\",\"value_selector\":[\"s\",\"n\"]},"
			    "{\"variable\":\"t\",\"value_selector\":[\"llm\","
			    "\"structured\",\"a\"]},{\"variable\":\"k\","
			    "\"value_selector\":[\"env\",\"k\"]}]}";
	struct pool	*p = pool_new(NULL);
	char		 err[ENGINE_ERRMAX], buf[128];
	json_t		*k = json_string("from-env");

	CHECK(p != NULL && k != NULL);
	if (p == NULL || k == NULL)
		return;
	CHECK_INT(pool_set(p, "env", "k", k), 0);
	json_decref(k);
	/* by name and by the node's id and name; env from the app */
	CHECK_INT(inputs_into(code, "{\"n\":3,\"code.t\":\"x\",\"k\":\"no\"}",
	    p, err), 0);
	CHECK_STR(pool_text(p, "s", "n", buf, sizeof(buf)), "3");
	/* a longer selector nests the value */
	CHECK_STR(pool_text(p, "llm", "structured", buf, sizeof(buf)),
	    "{\"a\":\"x\"}");
	CHECK_STR(pool_text(p, "env", "k", buf, sizeof(buf)), "\"from-env\"");
	/* given once, a value stays in the pool: not missing again */
	CHECK_INT(inputs_into(code, "{\"n\":4}", p, err), 0);
	pool_free(p);
	/* a missing input is named with the node's id, as Dify does */
	CHECK((p = pool_new(NULL)) != NULL);
	if (p == NULL)
		return;
	CHECK_INT(inputs_into(code, "{\"n\":3}", p, err), ENGINE_EINVAL);
	CHECK(strcmp(err, "Variable key code.t not found in user inputs.") ==
	    0);
	pool_free(p);
}

static void
test_allowed(void)
{
	struct gnode	n;
	const char	*yes[] = { "llm", "code", "template-transform",
			    "http-request", "if-else", "start", "iteration",
			    "assigner", NULL };
	const char	*no[] = { "end", "answer", "iteration-start",
			    "loop-start", "loop-end", "list-operator",
			    "command", NULL };
	size_t		i;

	memset(&n, 0, sizeof(n));
	for (i = 0; yes[i] != NULL; i++) {
		n.type = yes[i];
		CHECK(single_allowed(&n));
	}
	for (i = 0; no[i] != NULL; i++) {
		n.type = no[i];
		CHECK(!single_allowed(&n));
	}
	/* an assigner inside a container: Dify refuses it */
	n.type = "assigner";
	n.parent = "it";
	CHECK(!single_allowed(&n));
}

int
main(void)
{
	test_mapping();
	test_inputs();
	test_allowed();
	return tap_done();
}
