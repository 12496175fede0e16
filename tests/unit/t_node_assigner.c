/*
 * t_node_assigner.c — the assigner node (v1 and v2) through the real
 * executor on conversation variables: every operation, chained items, the
 * recorded updates, and each refusal Dify makes.
 */
#include "json_oom.h"
#include "tap.h"
#include "t_node_run.h"

/* Conversation variables: s (string), n (number), o (object), a
 * (array[string]), na (array[number]), b (boolean). */
static json_t *
conv(void)
{
	return json_pack("[{s:s,s:s,s:s},{s:s,s:s,s:i},{s:s,s:s,s:{s:i}},"
	    "{s:s,s:s,s:[s,s]},{s:s,s:s,s:[i]},{s:s,s:s,s:b}]",
	    "name", "s", "value_type", "string", "value", "old",
	    "name", "n", "value_type", "number", "value", 10,
	    "name", "o", "value_type", "object", "value", "k", 1,
	    "name", "a", "value_type", "array[string]", "value", "x", "y",
	    "name", "na", "value_type", "array[number]", "value", 1,
	    "name", "b", "value_type", "boolean", "value", 0);
}

/* End outputs: every conversation variable. */
static json_t *
outs(void)
{
	return json_pack("{s:[s,s],s:[s,s],s:[s,s],s:[s,s],s:[s,s],s:[s,s]}",
	    "s", "conversation", "s", "n", "conversation", "n", "o",
	    "conversation", "o", "a", "conversation", "a", "na",
	    "conversation", "na", "b", "conversation", "b");
}

static json_t *
item(const char *var, const char *op, const char *input_type, json_t *value)
{
	return json_pack("{s:[s,s],s:s,s:s,s:o}", "variable_selector",
	    "conversation", var, "operation", op, "input_type", input_type,
	    "value", value ? value : json_null());
}

static int
run_v2(json_t *items, json_t *inputs, struct tn_run *r)
{
	return tn_run_wf(json_pack("[{s:s,s:s,s:o}]", "type", "assigner",
	    "version", "2", "items", items), outs(), inputs, conv(), r);
}

static const char *
out(const struct tn_run *r, const char *k)
{
	return tn_dump(json_object_get(r->outputs, k));
}

static void
test_v2_ops(void)
{
	static const struct {
		const char *var, *op, *it, *value, *want;
	} t[] = {
		{ "s", "over-write", "constant", "\"new\"", "\"new\"" },
		{ "s", "set", "constant", "\"set\"", "\"set\"" },
		{ "s", "clear", "variable", "null", "\"\"" },
		{ "n", "+=", "constant", "5", "15" },
		{ "n", "-=", "constant", "2.5", "7.5" },
		{ "n", "*=", "constant", "3", "30" },
		{ "n", "/=", "constant", "4", "2.5" },
		{ "n", "set", "constant", "7", "7" },
		{ "n", "clear", "variable", "null", "0" },
		{ "o", "set", "constant", "{\"z\":2}", "{\"z\":2}" },
		{ "o", "over-write", "constant", "\"{\\\"j\\\":3}\"",
		    "{\"j\":3}" },
		{ "o", "clear", "variable", "null", "{}" },
		{ "b", "set", "constant", "true", "true" },
		{ "a", "append", "variable", "[\"start\",\"q\"]",
		    "[\"x\",\"y\",\"Q\"]" },
		{ "a", "extend", "variable", "[\"start\",\"list\"]",
		    "[\"x\",\"y\",\"l1\",\"l2\"]" },
		{ "a", "over-write", "variable", "[\"start\",\"list\"]",
		    "[\"l1\",\"l2\"]" },
		{ "a", "remove-first", "variable", "null", "[\"y\"]" },
		{ "a", "remove-last", "variable", "null", "[\"x\"]" },
		{ "a", "clear", "variable", "null", "[]" },
		{ "na", "append", "variable", "[\"start\",\"num\"]", "[1,4]" },
		{ "s", "over-write", "variable", "[\"start\",\"q\"]", "\"Q\"" },
	};
	struct tn_run	r;
	size_t		i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		CHECK(run_v2(json_pack("[o]", item(t[i].var, t[i].op,
		    t[i].it, json_loads(t[i].value, JSON_DECODE_ANY, NULL))),
		    json_pack("{s:s,s:[s,s],s:i}", "q", "Q", "list", "l1",
		    "l2", "num", 4), &r) == 0);
		CHECK_STR(r.status, "succeeded");
		CHECK_STR(out(&r, t[i].var), t[i].want);
		tn_release(&r);
	}
}

static void
test_v2_chain(void)
{
	struct tn_run	 r;
	json_t		*pd, *u;

	/* items apply in order, each on the value the last one left */
	CHECK(run_v2(json_pack("[o,o,o]", item("n", "+=", "constant",
	    json_integer(1)), item("n", "*=", "constant", json_integer(2)),
	    item("s", "over-write", "constant", json_string("z"))), NULL, &r)
	    == 0);
	CHECK_STR(out(&r, "n"), "22");
	CHECK_STR(out(&r, "s"), "\"z\"");
	CHECK_STR(out(&r, "a"), "[\"x\",\"y\"]");	/* untouched */
	pd = json_object_get(r.node, "process_data");
	CHECK_STR(tn_dump(json_object_get(pd, "n")), "22");
	u = json_object_get(pd, "updated_variables");
	CHECK_INT(json_array_size(u), 2);
	CHECK_STR(tn_dump(json_array_get(u, 0)), "{\"name\":\"n\","
	    "\"new_value\":22,\"selector\":[\"conversation\",\"n\"],"
	    "\"value_type\":\"number\"}");
	CHECK_STR(json_string_value(json_object_get(json_array_get(u, 1),
	    "name")), "s");
	CHECK_STR(tn_dump(json_object_get(json_object_get(r.node, "outputs"),
	    "s")), "(missing)");
	CHECK_STR(json_string_value(json_object_get(json_object_get(r.node,
	    "inputs"), "version")), "2");
	tn_release(&r);
	/* a variable input that is null is skipped, as in Dify */
	CHECK(run_v2(json_pack("[o]", item("s", "over-write", "variable",
	    json_pack("[s,s]", "start", "nothing"))), json_pack("{s:n}",
	    "nothing"), &r) == 0);
	CHECK_STR(r.status, "succeeded");
	CHECK_STR(out(&r, "s"), "\"old\"");
	tn_release(&r);
}

static void
test_v2_errors(void)
{
	static const struct {
		const char *var, *op, *it, *value, *err;
	} t[] = {
		{ "s", "append", "constant", "\"x\"",
		    "Operation append is not supported for type string" },
		{ "s", "+=", "constant", "1",
		    "Operation += is not supported for type string" },
		{ "a", "set", "constant", "[]",
		    "Operation set is not supported for type array[string]" },
		{ "n", "+=", "variable", "[\"start\",\"num\"]",
		    "Input type variable is not supported for operation +=" },
		{ "a", "append", "constant", "\"x\"",
		    "Input type constant is not supported for operation "
		    "append" },
		{ "n", "/=", "constant", "0", "Invalid input value 0" },
		{ "n", "set", "constant", "\"5\"",
		    "Invalid input value \"5\"" },
		{ "s", "set", "constant", "5", "Invalid input value 5" },
		{ "o", "set", "constant", "\"not json\"",
		    "Invalid input value not json" },
		{ "na", "append", "variable", "[\"start\",\"q\"]",
		    "Invalid input value \"Q\"" },
		{ "a", "extend", "variable", "[\"start\",\"num\"]",
		    "Invalid input value 4" },
		{ "zz", "set", "constant", "1", "Variable conversation.zz "
		    "not found" },
		{ "s", "over-write", "variable", "[\"start\",\"missing\"]",
		    "not found" },
		{ "s", "clear", "constant", "null",
		    "Input type constant is not supported for operation "
		    "clear" },
		{ "s", "frobnicate", "constant", "1",
		    "Operation frobnicate is not supported" },
	};
	struct tn_run	r;
	size_t		i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		CHECK(run_v2(json_pack("[o]", item(t[i].var, t[i].op,
		    t[i].it, json_loads(t[i].value, JSON_DECODE_ANY, NULL))),
		    json_pack("{s:s,s:i}", "q", "Q", "num", 4), &r) == 0);
		CHECK_STR(r.status, "failed");
		if (!CHECK(r.error && strstr(r.error, t[i].err)))
			printf("# want '%s'\n", t[i].err);
		tn_release(&r);
	}
	/* only conversation and loop variables are targets */
	CHECK(run_v2(json_pack("[{s:[s,s],s:s,s:s,s:s}]", "variable_selector",
	    "start", "q", "operation", "over-write", "input_type", "constant",
	    "value", "x"), json_pack("{s:s}", "q", "Q"), &r) == 0);
	CHECK(r.error && strstr(r.error, "conversation variables and loop "
	    "variables"));
	tn_release(&r);
}

static void
test_v1(void)
{
	struct tn_run r;

	CHECK(tn_run_wf(json_pack("[{s:s,s:[s,s],s:s,s:[s,s]}]", "type",
	    "assigner", "assigned_variable_selector", "conversation", "s",
	    "write_mode", "over-write", "input_variable_selector", "start",
	    "q"), outs(), json_pack("{s:s}", "q", "v1"), conv(), &r) == 0);
	CHECK_STR(r.status, "succeeded");
	CHECK_STR(out(&r, "s"), "\"v1\"");
	CHECK_STR(tn_dump(json_object_get(r.node, "inputs")),
	    "{\"value\":\"v1\"}");
	CHECK_STR(tn_dump(json_object_get(json_object_get(r.node,
	    "process_data"), "updated_variables")), "[{\"name\":\"s\","
	    "\"new_value\":\"v1\",\"selector\":[\"conversation\",\"s\"],"
	    "\"value_type\":\"string\"}]");
	tn_release(&r);

	CHECK(tn_run_wf(json_pack("[{s:s,s:s,s:[s,s],s:s,s:[s,s]}]", "type",
	    "assigner", "version", "1", "assigned_variable_selector",
	    "conversation", "a", "write_mode", "append",
	    "input_variable_selector", "start", "q"), outs(),
	    json_pack("{s:s}", "q", "z"), conv(), &r) == 0);
	CHECK_STR(out(&r, "a"), "[\"x\",\"y\",\"z\"]");
	tn_release(&r);

	CHECK(tn_run_wf(json_pack("[{s:s,s:[s,s],s:s}]", "type", "assigner",
	    "assigned_variable_selector", "conversation", "o", "write_mode",
	    "clear"), outs(), NULL, conv(), &r) == 0);
	CHECK_STR(out(&r, "o"), "{}");
	tn_release(&r);

	/* errors: append to a non-array, a missing input, a missing target */
	CHECK(tn_run_wf(json_pack("[{s:s,s:[s,s],s:s,s:[s,s]}]", "type",
	    "assigner", "assigned_variable_selector", "conversation", "s",
	    "write_mode", "append", "input_variable_selector", "start", "q"),
	    outs(), json_pack("{s:s}", "q", "z"), conv(), &r) == 0);
	CHECK(r.error && strstr(r.error, "append needs an array variable"));
	tn_release(&r);
	CHECK(tn_run_wf(json_pack("[{s:s,s:[s,s],s:s,s:[s,s]}]", "type",
	    "assigner", "assigned_variable_selector", "conversation", "s",
	    "write_mode", "over-write", "input_variable_selector", "start",
	    "none"), outs(), NULL, conv(), &r) == 0);
	CHECK(r.error && strstr(r.error, "input value not found"));
	tn_release(&r);
	CHECK(tn_run_wf(json_pack("[{s:s,s:[s,s],s:s}]", "type", "assigner",
	    "assigned_variable_selector", "conversation", "nope", "write_mode",
	    "clear"), outs(), NULL, conv(), &r) == 0);
	CHECK(r.error && strstr(r.error, "Variable conversation.nope not "
	    "found"));
	tn_release(&r);
}

/* Two assigners in a row: the second sees the first's value. */
static void
test_sequence(void)
{
	struct tn_run r;

	CHECK(tn_run_wf(json_pack("[{s:s,s:s,s:[o]},{s:s,s:s,s:[o]}]", "type",
	    "assigner", "version", "2", "items", item("na", "append",
	    "variable", json_pack("[s,s]", "start", "num")), "type",
	    "assigner", "version", "2", "items", item("na", "remove-first",
	    "variable", NULL)), outs(), json_pack("{s:i}", "num", 9), conv(),
	    &r) == 0);
	CHECK_STR(out(&r, "na"), "[9]");
	CHECK_STR(tn_dump(json_object_get(json_object_get(tn_node(&r, "n2"),
	    "process_data"), "na")), "[9]");
	tn_release(&r);
}

/*
 * The pool the assigner writes to reports out of memory instead of
 * dropping the value: a set that returns 0 can be read back.
 */
static void
test_pool_oom(void)
{
	static const char *const	 parts[2] = { "conversation", "v" };
	struct pool			*p;
	json_t				*v, *got;
	long				 k;
	int				 rc, lost = 0, nomem = 0, hit;

	if (!CHECK((p = pool_new(NULL)) != NULL))
		return;
	CHECK_INT(pool_set(p, "conversation", "v", NULL), ENGINE_ENOMEM);
	v = json_string("value");
	for (k = 0; k < 50; k++) {
		json_oom_at(k);
		rc = pool_set(p, "conversation", "v", v);
		hit = json_oom_happened();
		json_oom_at(-1);
		got = pool_get_parts(p, parts, 2);
		if (rc == 0 && got != v)
			lost++;
		if (rc != 0 && rc != ENGINE_ENOMEM)
			lost++;
		nomem += rc == ENGINE_ENOMEM;
		json_decref(got);
		if (!hit)
			break;
	}
	CHECK_INT(lost, 0);
	CHECK(nomem > 0);
	CHECK(k < 50);
	json_oom_at(0);
	CHECK_INT(pool_own(p, "iter"), ENGINE_ENOMEM);
	CHECK_INT(pool_own(p, "iter"), 0);
	json_decref(v);
	pool_free(p);
}

int
main(void)
{
	json_oom_install();
	test_pool_oom();
	tn_open();
	test_v2_ops();
	test_v2_chain();
	test_v2_errors();
	test_v1();
	test_sequence();
	tn_close();
	return tap_done();
}
