/*
 * t_node_code.c — the code node through the real executor: a result checked
 * against Dify's limits, each a setting whose name the failure gives
 * (code.max_string_length, code.max_depth, code.max_*_array_length); a
 * result over sandbox.max_output fails naming it; a sandbox that finds no
 * room in sandbox.memory_budget fails the node (the run answers, failed)
 * naming that setting.
 *
 * Needs bwrap and python3 (Debian packages bubblewrap, python3); without
 * bwrap the test is one counted skip (NEED), without python3 the runs
 * fail with a message.
 */
#include "tests/unit/tap.h"
#include "tests/unit/t_node_run.h"

/* A python3 code node returning body's dict, its output out of type. */
static json_t *
code_node(const char *body, const char *out, const char *type)
{
	char code[512];

	snprintf(code, sizeof(code), "def main():\n    return %s\n", body);
	return json_pack("{s:s,s:s,s:s,s:[],s:{s:{s:s,s:[]}}}", "type", "code",
	    "code_language", "python3", "code", code, "variables", "outputs",
	    out, "type", type, "children");
}

/* Runs node; the run's error ("" when it succeeded). */
static const char *
run(json_t *node, struct tn_run *r)
{
	if (tn_run1(node, json_pack("{s:[s,s]}", "a", "n1", "a"), NULL, r) != 0)
		return "(no run)";
	return r->error != NULL ? r->error : "";
}

static void
check_fails(const char *body, const char *type, const char *needle)
{
	struct tn_run	r;
	const char	*e = run(code_node(body, "a", type), &r);

	if (!CHECK(strstr(e, needle) != NULL))
		printf("#   body %s: error '%s', want '%s'\n", body, e, needle);
	CHECK_STR(r.status ? r.status : "", "failed");
	tn_release(&r);
}

static void
test_limits(void)
{
	struct tn_run r;

	/* within them: fine */
	CHECK_STR(run(code_node("{'a': 'x' * 400000}", "a", "string"), &r), "");
	CHECK_INT(json_string_length(json_object_get(r.outputs, "a")), 400000);
	tn_release(&r);
	check_fails("{'a': 'x' * 400001}", "string",
	    "longer than 400000 characters (code.max_string_length)");
	check_fails("{'a': ['s'] * 31}", "array[string]",
	    "more than 30 (code.max_string_array_length)");
	check_fails("{'a': [{}] * 31}", "array[object]",
	    "more than 30 (code.max_object_array_length)");
	check_fails("{'a': [1] * 1001}", "array[number]",
	    "more than 1000 (code.max_number_array_length)");
	check_fails("{'a': {'b': {'c': {'d': {'e': {'f': 1}}}}}}", "object",
	    "deeper than 5 levels (code.max_depth)");
	/* a setting moves its limit */
	tn_conf.code_max_string_length = 10;
	check_fails("{'a': 'x' * 11}", "string",
	    "longer than 10 characters (code.max_string_length)");
	tn_conf.code_max_string_length = 400000;
	/* the result as a whole: sandbox.max_output */
	check_fails("{'a': 'x' * 200000000}", "string",
	    "over the output limit sandbox.max_output (1048576 bytes)");
}

static void
test_budget(void)
{
	/* too small for one sandbox: refused at once, the run answers. The
	 * engine's warm runners were made before (with other settings, which
	 * send the node to a cold sandbox of its own). */
	tn_conf.sandbox_memory_budget = 100 << 20;
	tn_conf.sandbox_cpu_seconds = 29;
	check_fails("{'a': 'x'}", "string", "sandbox.memory_budget (100 MB)");
	tn_conf.sandbox_memory_budget = 0;
	tn_conf.sandbox_cpu_seconds = 30;
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!NEED("bwrap"))
		return tap_done();
	tn_open();
	test_limits();
	test_budget();
	tn_close();
	return tap_done();
}
