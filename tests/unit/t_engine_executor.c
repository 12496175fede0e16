/*
 * t_engine_executor.c — the executor's rules through real runs: branches
 * and skips, joins, parallel branches (shown to overlap in time by the
 * nodes' own clocks, not by a speed threshold), iteration (sequential,
 * parallel, error modes, flatten), loop (break conditions, loop-end), each
 * error strategy, retries, stop, the step limit, unsupported nodes, and
 * graphs that cannot run (cycles, self-loops, edges to missing nodes,
 * duplicate ids) failing at once with their problem named.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine/engine.h"
#include "tap.h"

static struct engine	*eng;
static struct conf	 c;
static char		 errbuf_last[ENGINE_ERRMAX];

struct result {
	json_t		*res, *nodes;
	const char	*status, *error;
	json_t		*outputs;
};

static void
release(struct result *r)
{
	json_decref(r->res);
	json_decref(r->nodes);
	memset(r, 0, sizeof(*r));
}

/* Events of the last run, for the checks that look at them. */
static json_t *events;

static void
on_event(void *arg, const json_t *ev)
{
	(void)arg;
	json_array_append(events, (json_t *)ev);
}

struct stopper {
	char	task[37];
	int	armed;
};

static void
on_start(void *arg, const char *task, const char *run)
{
	struct stopper *s = arg;

	(void)run;
	if (s != NULL && s->armed) {
		snprintf(s->task, sizeof(s->task), "%s", task);
		engine_run_stop(eng, NULL, NULL, task);	/* from "another process" */
	}
}

/* Imports yaml (a workflow body under "workflow: graph:") and runs it. */
static int
run(const char *graph_yaml, const char *inputs_json, struct stopper *stop,
    struct result *r)
{
	struct import_opts	 io;
	struct run_opts		 ro;
	char			 err[ENGINE_ERRMAX] = "", *y;
	json_t			*imp = NULL, *in;
	size_t			 n = strlen(graph_yaml) + 256;
	int			 rc;

	memset(r, 0, sizeof(*r));
	y = malloc(n);
	snprintf(y, n, "version: 0.6.0\nkind: app\napp: {name: t, mode: "
	    "workflow}\nworkflow:\n  features: {}\n  graph:\n%s", graph_yaml);
	memset(&io, 0, sizeof(io));
	rc = engine_import(eng, y, strlen(y), &io, err, &imp);
	free(y);
	if (rc != 0 || json_string_value(json_object_get(imp, "app_id")) ==
	    NULL) {
		printf("# import: %s %s\n", err, json_string_value(
		    json_object_get(imp, "error")));
		json_decref(imp);
		return -1;
	}
	in = json_loads(inputs_json ? inputs_json : "{}", 0, NULL);
	json_decref(events);
	events = json_array();
	memset(&ro, 0, sizeof(ro));
	ro.app_id = json_string_value(json_object_get(imp, "app_id"));
	ro.inputs = in;
	ro.user = "t";
	ro.on_event = on_event;
	ro.on_start = on_start;
	ro.arg = stop;
	rc = engine_run(eng, &ro, err, &r->res);
	json_decref(in);
	if (rc != 0) {
		snprintf(errbuf_last, sizeof(errbuf_last), "%s", err);
		json_decref(imp);
		return rc;
	}
	engine_run_nodes(eng, json_string_value(json_object_get(r->res,
	    "workflow_run_id")), &r->nodes);
	json_decref(imp);
	r->status = json_string_value(json_object_get(json_object_get(r->res,
	    "data"), "status"));
	r->error = json_string_value(json_object_get(json_object_get(r->res,
	    "data"), "error"));
	r->outputs = json_object_get(json_object_get(r->res, "data"),
	    "outputs");
	return 0;
}

/* The ids of the nodes that ran, in order, joined with spaces. */
static const char *
ran(const struct result *r)
{
	static char	 buf[1024];
	json_t		*n;
	size_t		 i, len = 0;

	buf[0] = '\0';
	json_array_foreach(json_object_get(r->nodes, "data"), i, n)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
		    len ? " " : "", json_string_value(json_object_get(n,
		    "node_id")));
	return buf;
}

static json_t *
node_out(const struct result *r, const char *id)
{
	json_t	*n;
	size_t	 i;

	json_array_foreach(json_object_get(r->nodes, "data"), i, n)
		if (strcmp(json_string_value(json_object_get(n, "node_id")), id)
		    == 0)
			return json_object_get(n, "outputs");
	return NULL;
}

static const char *
out_str(const struct result *r, const char *k)
{
	return json_string_value(json_object_get(r->outputs, k));
}

static int
count_events(const char *name)
{
	json_t	*e;
	size_t	 i;
	int	 n = 0;

	json_array_foreach(events, i, e)
		n += strcmp(json_string_value(json_object_get(e, "event")),
		    name) == 0;
	return n;
}

#define TT(id, tpl) \
	"    - id: " id "\n      data: {type: template-transform, title: " id \
	", template: '" tpl "', variables: []}\n"
#define START \
	"    nodes:\n    - id: s\n      data: {type: start, title: S, " \
	"variables: [{variable: q, type: text-input, label: q}]}\n"

static const char branches[] =
    START
    "    - id: if\n      data: {type: if-else, title: If, cases: [{case_id: "
    "'true', logical_operator: and, conditions: [{variable_selector: [s, q], "
    "comparison_operator: is, value: a}]}]}\n"
    TT("A", "A") TT("B", "B") TT("C", "C")
    "    - id: j\n      data: {type: variable-aggregator, title: J, "
    "variables: [[A, output], [C, output]]}\n"
    "    - id: e\n      data: {type: end, title: E, outputs: [{variable: o, "
    "value_selector: [j, output]}]}\n"
    "    edges:\n"
    "    - {id: x1, source: s, target: if}\n"
    "    - {id: x2, source: if, sourceHandle: 'true', target: A}\n"
    "    - {id: x3, source: if, sourceHandle: 'false', target: B}\n"
    "    - {id: x4, source: B, target: C}\n"
    "    - {id: x5, source: A, target: j}\n"
    "    - {id: x6, source: C, target: j}\n"
    "    - {id: x7, source: j, target: e}\n";

static void
test_branches(void)
{
	struct result r;

	CHECK(run(branches, "{\"q\":\"a\"}", NULL, &r) == 0);
	CHECK_STR(r.status, "succeeded");
	CHECK_STR(ran(&r), "s if A j e");	/* B and C skipped */
	CHECK_STR(out_str(&r, "o"), "A");
	release(&r);
	CHECK(run(branches, "{\"q\":\"b\"}", NULL, &r) == 0);
	CHECK_STR(ran(&r), "s if B C j e");	/* the skip went down A */
	CHECK_STR(out_str(&r, "o"), "C");
	release(&r);
}

/*
 * A condition's value may name variables ({{#s.limit#}}), filled in before
 * the comparison as Dify's condition processor does.
 */
static const char refvalue[] =
    "    nodes:\n    - id: s\n      data: {type: start, title: S, "
    "variables: [{variable: n, type: number, label: n}, {variable: limit, "
    "type: number, label: limit}]}\n"
    "    - id: if\n      data: {type: if-else, title: If, cases: [{case_id: "
    "'true', logical_operator: and, conditions: [{variable_selector: [s, n], "
    "comparison_operator: '\u2265', value: '{{#s.limit#}}'}]}]}\n"
    TT("A", "A") TT("B", "B")
    "    edges:\n"
    "    - {id: x1, source: s, target: if}\n"
    "    - {id: x2, source: if, sourceHandle: 'true', target: A}\n"
    "    - {id: x3, source: if, sourceHandle: 'false', target: B}\n";

static void
test_condition_refs(void)
{
	struct result r;

	CHECK(run(refvalue, "{\"n\":5,\"limit\":3}", NULL, &r) == 0);
	CHECK_STR(r.status, "succeeded");
	CHECK_STR(ran(&r), "s if A");
	CHECK_STR(json_string_value(json_object_get(node_out(&r, "if"),
	    "selected_case_id")), "true");
	release(&r);
	CHECK(run(refvalue, "{\"n\":2,\"limit\":3}", NULL, &r) == 0);
	CHECK_STR(ran(&r), "s if B");
	release(&r);
}

/*
 * variable-assigner, the aggregator's first name, is kept as written (Dify
 * keeps it too) and joins the branches the same way.
 */
static void
test_branches_legacy_name(void)
{
	struct result	 r;
	char		 g[sizeof(branches)];
	const char	*p, *type = NULL;
	json_t		*n;
	size_t		 i;

	if (!CHECK((p = strstr(branches, "variable-aggregator")) != NULL))
		return;
	snprintf(g, sizeof(g), "%.*svariable-assigner%s", (int)(p - branches),
	    branches, p + strlen("variable-aggregator"));
	CHECK(run(g, "{\"q\":\"b\"}", NULL, &r) == 0);
	CHECK_STR(r.status, "succeeded");
	CHECK_STR(ran(&r), "s if B C j e");
	CHECK_STR(out_str(&r, "o"), "C");
	json_array_foreach(json_object_get(r.nodes, "data"), i, n)
		if (strcmp(json_string_value(json_object_get(n, "node_id")),
		    "j") == 0)
			type = json_string_value(json_object_get(n,
			    "node_type"));
	CHECK_STR(type, "variable-assigner");
	release(&r);
}

#define SLEEPER(id) \
	"    - id: " id "\n      data: {type: code, title: " id ", " \
	"code_language: python3, variables: [], outputs: {t0: {type: number}, " \
	"t1: {type: number}}, code: \"import time\\ndef main():\\n    a = " \
	"time.time()\\n    time.sleep(0.4)\\n    return {'t0': a, 't1': " \
	"time.time()}\\n\"}\n"

static void
test_parallel(void)
{
	struct result	 r;
	double		 a0, a1, b0, b1;
	static const char g[] = START SLEEPER("P1") SLEEPER("P2")
	    "    - id: j\n      data: {type: variable-aggregator, title: J, "
	    "variables: [[P1, t0], [P2, t0]]}\n"
	    "    - id: e\n      data: {type: end, title: E, outputs: []}\n"
	    "    edges:\n    - {id: x1, source: s, target: P1}\n"
	    "    - {id: x2, source: s, target: P2}\n"
	    "    - {id: x3, source: P1, target: j}\n"
	    "    - {id: x4, source: P2, target: j}\n"
	    "    - {id: x5, source: j, target: e}\n";

	CHECK(run(g, "{}", NULL, &r) == 0);
	CHECK_STR(r.status, "succeeded");
	a0 = json_number_value(json_object_get(node_out(&r, "P1"), "t0"));
	a1 = json_number_value(json_object_get(node_out(&r, "P1"), "t1"));
	b0 = json_number_value(json_object_get(node_out(&r, "P2"), "t0"));
	b1 = json_number_value(json_object_get(node_out(&r, "P2"), "t1"));
	/* both branches were running at the same time */
	CHECK(a0 > 0 && b0 > 0 && a0 < b1 && b0 < a1);
	/* the join ran once, after both */
	CHECK_STR(ran(&r) + strlen(ran(&r)) - 3, "j e");
	release(&r);
}

static void
test_iteration(void)
{
	struct result	 r;
	char		 g[4096];
	static const char body[] =
	    "    nodes:\n    - id: s\n      data: {type: start, title: S, "
	    "variables: [{variable: list, type: json, label: l}]}\n"
	    "    - id: it\n      data: {type: iteration, title: It, "
	    "iterator_selector: [s, list], output_selector: [c, out], "
	    "start_node_id: itstart, is_parallel: %s, parallel_nums: 3, "
	    "error_handle_mode: %s, flatten_output: %s}\n"
	    "    - id: itstart\n      parentId: it\n      data: {type: "
	    "iteration-start, title: St}\n"
	    "    - id: c\n      parentId: it\n      data: {type: code, title: "
	    "C, code_language: python3, variables: [{variable: x, "
	    "value_selector: [it, item]}, {variable: i, value_selector: [it, "
	    "index]}], outputs: {out: {type: '%s'}}, code: \"def main(x, i):\\n"
	    "    if x == 'bad':\\n        raise ValueError('bad item')\\n"
	    "    return {'out': %s}\\n\"}\n"
	    "    - id: e\n      data: {type: end, title: E, outputs: "
	    "[{variable: o, value_selector: [it, output]}]}\n"
	    "    edges:\n    - {id: x1, source: s, target: it}\n"
	    "    - {id: x2, source: itstart, target: c}\n"
	    "    - {id: x3, source: it, target: e}\n";
	static const char start_list[] = START;

	(void)start_list;
	/* the start node takes the list as a json input */
	snprintf(g, sizeof(g), body, "false", "terminated", "true", "string",
	    "x + str(i)");
	CHECK(run(g, "{\"list\":[\"a\",\"b\",\"c\"]}", NULL, &r) == 0);
	CHECK_STR(r.status, "succeeded");
	{
		char *o = json_dumps(json_object_get(r.outputs, "o"),
		    JSON_COMPACT);

		CHECK_STR(o, "[\"a0\",\"b1\",\"c2\"]");
		free(o);
	}
	CHECK_INT(count_events("iteration_next"), 3);
	release(&r);
	/* parallel rounds keep their order */
	snprintf(g, sizeof(g), body, "true", "terminated", "true", "string",
	    "x + str(i)");
	CHECK(run(g, "{\"list\":[\"a\",\"b\",\"c\",\"d\"]}", NULL, &r) == 0);
	{
		char *o = json_dumps(json_object_get(r.outputs, "o"),
		    JSON_COMPACT);

		CHECK_STR(o, "[\"a0\",\"b1\",\"c2\",\"d3\"]");
		free(o);
	}
	release(&r);
	/* error modes */
	snprintf(g, sizeof(g), body, "false", "terminated", "true", "string",
	    "x");
	CHECK(run(g, "{\"list\":[\"a\",\"bad\",\"c\"]}", NULL, &r) == 0);
	CHECK_STR(r.status, "failed");
	CHECK(r.error != NULL && strstr(r.error, "bad item") != NULL);
	release(&r);
	snprintf(g, sizeof(g), body, "false", "continue-on-error", "true",
	    "string", "x");
	CHECK(run(g, "{\"list\":[\"a\",\"bad\",\"c\"]}", NULL, &r) == 0);
	{
		char *o = json_dumps(json_object_get(r.outputs, "o"),
		    JSON_COMPACT);

		CHECK_STR(o, "[\"a\",null,\"c\"]");
		free(o);
	}
	release(&r);
	snprintf(g, sizeof(g), body, "false", "remove-abnormal-output",
	    "true", "string", "x");
	CHECK(run(g, "{\"list\":[\"a\",\"bad\",\"c\"]}", NULL, &r) == 0);
	{
		char *o = json_dumps(json_object_get(r.outputs, "o"),
		    JSON_COMPACT);

		CHECK_STR(o, "[\"a\",\"c\"]");
		free(o);
	}
	release(&r);
	/* flatten: lists of lists become one list, unless turned off */
	snprintf(g, sizeof(g), body, "false", "terminated", "true",
	    "array[string]", "[x, x]");
	CHECK(run(g, "{\"list\":[\"a\",\"b\"]}", NULL, &r) == 0);
	CHECK_INT(json_array_size(json_object_get(r.outputs, "o")), 4);
	release(&r);
	snprintf(g, sizeof(g), body, "false", "terminated", "false",
	    "array[string]", "[x, x]");
	CHECK(run(g, "{\"list\":[\"a\",\"b\"]}", NULL, &r) == 0);
	CHECK_INT(json_array_size(json_object_get(r.outputs, "o")), 2);
	release(&r);
}

static void
test_loop(void)
{
	struct result r;
	static const char g[] = START
	    "    - id: lp\n      data: {type: loop, title: L, loop_count: 10, "
	    "start_node_id: lpstart, logical_operator: and, loop_variables: "
	    "[{label: n, var_type: number, value_type: constant, value: 0}], "
	    "break_conditions: [{variable_selector: [lp, n], "
	    "comparison_operator: '≥', value: '3'}]}\n"
	    "    - id: lpstart\n      parentId: lp\n      data: {type: "
	    "loop-start, title: St}\n"
	    "    - id: inc\n      parentId: lp\n      data: {type: assigner, "
	    "title: Inc, version: '2', items: [{variable_selector: [lp, n], "
	    "input_type: constant, operation: '+=', value: 1}]}\n"
	    "    - id: e\n      data: {type: end, title: E, outputs: "
	    "[{variable: n, value_selector: [lp, n]}, {variable: rounds, "
	    "value_selector: [lp, loop_round]}]}\n"
	    "    edges:\n    - {id: x1, source: s, target: lp}\n"
	    "    - {id: x2, source: lpstart, target: inc}\n"
	    "    - {id: x3, source: lp, target: e}\n";
	static const char g2[] = START
	    "    - id: lp\n      data: {type: loop, title: L, loop_count: 10, "
	    "start_node_id: lpstart, loop_variables: [], break_conditions: []}\n"
	    "    - id: lpstart\n      parentId: lp\n      data: {type: "
	    "loop-start, title: St}\n"
	    "    - id: stop\n      parentId: lp\n      data: {type: loop-end, "
	    "title: End}\n"
	    "    - id: e\n      data: {type: end, title: E, outputs: "
	    "[{variable: rounds, value_selector: [lp, loop_round]}]}\n"
	    "    edges:\n    - {id: x1, source: s, target: lp}\n"
	    "    - {id: x2, source: lpstart, target: stop}\n"
	    "    - {id: x3, source: lp, target: e}\n";

	CHECK(run(g, "{}", NULL, &r) == 0);
	CHECK_STR(r.status, "succeeded");
	CHECK_INT(json_integer_value(json_object_get(r.outputs, "n")), 3);
	CHECK_INT(json_integer_value(json_object_get(r.outputs, "rounds")), 3);
	CHECK_INT(count_events("loop_next"), 3);
	release(&r);
	CHECK(run(g2, "{}", NULL, &r) == 0);
	CHECK_INT(json_integer_value(json_object_get(r.outputs, "rounds")), 1);
	release(&r);
}

#define FAILING(strategy) \
	"    - id: f\n      data: {type: code, title: F, code_language: " \
	"python3, variables: [], outputs: {v: {type: string}}, code: \"def " \
	"main():\\n    raise RuntimeError('broken')\\n\"" strategy "}\n"

static void
test_strategies(void)
{
	struct result r;
	static const char none[] = START FAILING("") TT("after", "x")
	    "    edges:\n    - {id: x1, source: s, target: f}\n"
	    "    - {id: x2, source: f, target: after}\n";
	static const char dflt[] = START
	    FAILING(", error_strategy: default-value, default_value: [{key: v, "
	    "type: string, value: fallback}]")
	    "    - id: e\n      data: {type: end, title: E, outputs: "
	    "[{variable: v, value_selector: [f, v]}, {variable: m, "
	    "value_selector: [f, error_message]}]}\n"
	    "    edges:\n    - {id: x1, source: s, target: f}\n"
	    "    - {id: x2, source: f, target: e}\n";
	static const char branch[] = START
	    FAILING(", error_strategy: fail-branch") TT("ok", "ok")
	    TT("handler", "handled")
	    "    edges:\n    - {id: x1, source: s, target: f}\n"
	    "    - {id: x2, source: f, sourceHandle: source, target: ok}\n"
	    "    - {id: x3, source: f, sourceHandle: fail-branch, target: "
	    "handler}\n";

	CHECK(run(none, "{}", NULL, &r) == 0);
	CHECK_STR(r.status, "failed");
	CHECK(r.error != NULL && strstr(r.error, "node 'F' (f) failed") !=
	    NULL && strstr(r.error, "RuntimeError: broken") != NULL);
	CHECK_STR(ran(&r), "s f");	/* nothing after a failure */
	release(&r);
	CHECK(run(dflt, "{}", NULL, &r) == 0);
	CHECK_STR(r.status, "partial-succeeded");
	CHECK_STR(out_str(&r, "v"), "fallback");
	CHECK(out_str(&r, "m") != NULL && strstr(out_str(&r, "m"),
	    "broken") != NULL);
	release(&r);
	CHECK(run(branch, "{}", NULL, &r) == 0);
	CHECK_STR(ran(&r), "s f handler");
	CHECK_STR(r.status, "partial-succeeded");
	release(&r);
}

/* An HTTP server on loopback that fails the first two requests. */
static int	srv_fd, srv_port, srv_hits;

static void *
serve(void *arg)
{
	char	buf[4096];
	int	cfd, i;

	(void)arg;
	for (i = 0; i < 3; i++) {
		if ((cfd = accept(srv_fd, NULL, NULL)) < 0)
			return NULL;
		(void)read(cfd, buf, sizeof(buf));
		srv_hits++;
		if (i < 2)
			(void)write(cfd, "HTTP/1.1 500 Oops\r\nContent-Length: 0"
			    "\r\nConnection: close\r\n\r\n", 60);
		else
			(void)write(cfd, "HTTP/1.1 200 OK\r\nContent-Length: 2"
			    "\r\nConnection: close\r\n\r\nok", 60);
		close(cfd);
	}
	return NULL;
}

static void
test_retry(void)
{
	struct result		 r;
	struct sockaddr_in	 a;
	socklen_t		 len = sizeof(a);
	pthread_t		 t;
	char			 g[2048];

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	srv_fd = socket(AF_INET, SOCK_STREAM, 0);
	bind(srv_fd, (struct sockaddr *)&a, sizeof(a));
	listen(srv_fd, 4);
	getsockname(srv_fd, (struct sockaddr *)&a, &len);
	srv_port = ntohs(a.sin_port);
	pthread_create(&t, NULL, serve, NULL);
	snprintf(g, sizeof(g), START
	    "    - id: h\n      data: {type: http-request, title: H, method: "
	    "get, url: 'http://127.0.0.1:%d/x', authorization: {type: no-auth}, "
	    "headers: '', params: '', body: {type: none, data: []}, "
	    "retry_config: {retry_enabled: true, max_retries: 3, "
	    "retry_interval: 10}}\n"
	    "    - id: e\n      data: {type: end, title: E, outputs: "
	    "[{variable: b, value_selector: [h, body]}]}\n"
	    "    edges:\n    - {id: x1, source: s, target: h}\n"
	    "    - {id: x2, source: h, target: e}\n", srv_port);
	CHECK(run(g, "{}", NULL, &r) == 0);
	CHECK_STR(r.status, "succeeded");
	CHECK_STR(out_str(&r, "b"), "ok");
	CHECK_INT(srv_hits, 3);
	CHECK_INT(count_events("node_retry"), 2);
	release(&r);
	pthread_join(t, NULL);
	close(srv_fd);
}

static void
test_stop_and_limits(void)
{
	struct result	 r;
	struct stopper	 st = { "", 1 };
	int		 rc;
	static const char chain[] = START TT("a", "a") TT("b", "b")
	    TT("d", "d") TT("f", "f")
	    "    edges:\n    - {id: x1, source: s, target: a}\n"
	    "    - {id: x2, source: a, target: b}\n"
	    "    - {id: x3, source: b, target: d}\n"
	    "    - {id: x4, source: d, target: f}\n";
	static const char odd[] = START
	    "    - id: k\n      data: {type: knowledge-index, title: K}\n"
	    "    edges:\n    - {id: x1, source: s, target: k}\n";

	/* a stop asked before the first node: nothing runs */
	CHECK(run(chain, "{}", &st, &r) == 0);
	CHECK_STR(r.status, "stopped");
	CHECK_STR(ran(&r), "");
	release(&r);
	c.workflow_max_steps = 3;
	CHECK(run(chain, "{}", NULL, &r) == 0);
	CHECK_STR(r.status, "failed");
	CHECK(r.error != NULL && strstr(r.error, "workflow.max_steps") !=
	    NULL);
	release(&r);
	c.workflow_max_steps = 500;
	rc = run(odd, "{}", NULL, &r);
	CHECK_INT(rc, ENGINE_EINVAL);
	CHECK(strstr(errbuf_last, "'knowledge-index' (node k)") !=
	    NULL);
}

/*
 * Graphs that cannot run: each fails at once (no node runs, not even the
 * start) with an error naming the problem, where they used to end
 * "succeeded" with nothing done.
 */
#define END_E \
	"    - id: e\n      data: {type: end, title: E, outputs: []}\n"

static void
bad_graph(const char *g, const char *want1, const char *want2)
{
	struct result r;

	CHECK(run(g, "{}", NULL, &r) == 0);
	CHECK_STR(r.status, "failed");
	CHECK(r.error != NULL && strstr(r.error, "cannot run") != NULL);
	if (!CHECK(r.error != NULL && strstr(r.error, want1) != NULL &&
	    strstr(r.error, want2) != NULL))
		printf("#   error: %s\n#   want: %s ... %s\n", r.error ?
		    r.error : "(none)", want1, want2);
	CHECK_STR(ran(&r), "");
	CHECK_INT(count_events("node_started"), 0);
	CHECK_INT(count_events("workflow_started"), 1);
	CHECK_INT(count_events("workflow_finished"), 1);
	release(&r);
}

static void
test_bad_graphs(void)
{
	static const char cycle[] = START TT("A", "a") TT("B", "b") END_E
	    "    edges:\n    - {id: x1, source: s, target: A}\n"
	    "    - {id: x2, source: A, target: B}\n"
	    "    - {id: x3, source: B, target: A}\n"
	    "    - {id: x4, source: B, target: e}\n";
	static const char self[] = START TT("A", "a") END_E
	    "    edges:\n    - {id: x1, source: s, target: A}\n"
	    "    - {id: loop1, source: A, target: A}\n"
	    "    - {id: x2, source: A, target: e}\n";
	static const char missing[] = START TT("A", "a") END_E
	    "    edges:\n    - {id: x1, source: s, target: A}\n"
	    "    - {id: x2, source: A, target: ghost}\n"
	    "    - {id: x3, source: A, target: e}\n";
	static const char nosource[] = START TT("A", "a") END_E
	    "    edges:\n    - {id: x1, source: s, target: A}\n"
	    "    - {id: x2, source: phantom, target: e}\n"
	    "    - {id: x3, source: A, target: e}\n";
	static const char dup[] = START TT("A", "a") TT("A", "b") END_E
	    "    edges:\n    - {id: x1, source: s, target: A}\n"
	    "    - {id: x2, source: A, target: e}\n";
	/* a cycle among the children of an iteration is no more legal */
	static const char inner[] =
	    "    nodes:\n    - id: s\n      data: {type: start, title: S, "
	    "variables: []}\n"
	    "    - id: it\n      data: {type: iteration, title: It, "
	    "iterator_selector: [s, list], output_selector: [c1, output], "
	    "start_node_id: itstart}\n"
	    "    - id: itstart\n      parentId: it\n      data: {type: "
	    "iteration-start, title: St}\n"
	    "    - id: c1\n      parentId: it\n      data: {type: "
	    "template-transform, title: c1, template: x, variables: []}\n"
	    "    - id: c2\n      parentId: it\n      data: {type: "
	    "template-transform, title: c2, template: y, variables: []}\n"
	    END_E
	    "    edges:\n    - {id: x1, source: s, target: it}\n"
	    "    - {id: x2, source: itstart, target: c1}\n"
	    "    - {id: x3, source: c1, target: c2}\n"
	    "    - {id: back, source: c2, target: c1}\n"
	    "    - {id: x4, source: it, target: e}\n";

	bad_graph(cycle, "cycle", "'A' -> 'B' -> 'A'");
	bad_graph(self, "edge 'loop1'", "node 'A' back to itself");
	bad_graph(missing, "edge 'x2'", "missing node 'ghost'");
	bad_graph(nosource, "edge 'x2' starts at", "missing node 'phantom'");
	bad_graph(dup, "node id 'A'", "more than one node");
	bad_graph(inner, "cycle", "'c1' -> 'c2' -> 'c1'");
}

/* ====== The run's thread budget ====== */

/*
 * An HTTP server on loopback that holds each request until `hold` are in
 * flight (or none came for a while) and answers them together: peak is
 * the most it saw at once, which is how many nodes a run had running.
 */
struct holder {
	int	fd, port, hold, expect, peak;
};

static void *
hold_serve(void *arg)
{
	struct holder	*h = arg;
	struct pollfd	 pfd = { h->fd, POLLIN, 0 };
	char		 buf[4096];
	int		 held[64], n = 0, done = 0, i;

	while (done < h->expect) {
		/* a second without a new request: answer who is there */
		if (poll(&pfd, 1, n > 0 ? 1000 : 30000) > 0 && n < 64) {
			if ((held[n] = accept(h->fd, NULL, NULL)) < 0)
				break;
			(void)read(held[n], buf, sizeof(buf));
			if (++n > h->peak)
				h->peak = n;
			if (n < h->hold)
				continue;
		} else if (n == 0)
			break;	/* nobody came at all */
		for (i = 0; i < n; i++) {
			(void)write(held[i], "HTTP/1.1 200 OK\r\nContent-Length: "
			    "2\r\nConnection: close\r\n\r\nok", 60);
			close(held[i]);
		}
		done += n;
		n = 0;
	}
	return NULL;
}

/* Two parallel branches, each a parallel iteration of 4 HTTP requests. */
#define BUDGET_ITER(id, x) \
	"    - id: " id "\n      data: {type: iteration, title: " id ", " \
	"iterator_selector: [s, list], output_selector: [h" id ", body], " \
	"start_node_id: st" id ", is_parallel: true, parallel_nums: 4}\n" \
	"    - id: st" id "\n      parentId: " id "\n      data: {type: " \
	"iteration-start, title: St}\n" \
	"    - id: h" id "\n      parentId: " id "\n      data: {type: " \
	"http-request, title: H, method: get, url: 'http://127.0.0.1:%d/" x \
	"', authorization: {type: no-auth}, headers: '', params: '', body: " \
	"{type: none, data: []}}\n"

static int
budget_peak(int max_threads, int hold, char *status)
{
	static struct result	 r;
	struct holder		 h;
	struct sockaddr_in	 a;
	socklen_t		 len = sizeof(a);
	pthread_t		 t;
	char			 g[4096];
	int			 saved = c.workflow_max_threads;

	memset(&h, 0, sizeof(h));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	h.fd = socket(AF_INET, SOCK_STREAM, 0);
	bind(h.fd, (struct sockaddr *)&a, sizeof(a));
	listen(h.fd, 16);
	getsockname(h.fd, (struct sockaddr *)&a, &len);
	h.port = ntohs(a.sin_port);
	h.hold = hold;
	h.expect = 8;
	pthread_create(&t, NULL, hold_serve, &h);
	snprintf(g, sizeof(g),
	    "    nodes:\n    - id: s\n      data: {type: start, title: S, "
	    "variables: [{variable: list, type: json, label: l}]}\n"
	    BUDGET_ITER("A", "a") BUDGET_ITER("B", "b")
	    "    - id: e\n      data: {type: end, title: E, outputs: "
	    "[{variable: a, value_selector: [A, output]}, {variable: b, "
	    "value_selector: [B, output]}]}\n"
	    "    edges:\n    - {id: x1, source: s, target: A}\n"
	    "    - {id: x2, source: s, target: B}\n"
	    "    - {id: x3, source: A, target: e}\n"
	    "    - {id: x4, source: B, target: e}\n"
	    "    - {id: x5, source: stA, target: hA}\n"
	    "    - {id: x6, source: stB, target: hB}\n", h.port, h.port);
	c.workflow_max_threads = max_threads;
	snprintf(status, 32, "(no run)");
	if (run(g, "{\"list\":[1,2,3,4]}", NULL, &r) == 0) {
		snprintf(status, 32, "%s", r.status);
		CHECK_INT(json_array_size(json_object_get(r.outputs, "a")) +
		    json_array_size(json_object_get(r.outputs, "b")), 8);
	}
	c.workflow_max_threads = saved;
	pthread_join(t, NULL);
	close(h.fd);
	release(&r);
	return h.peak;
}

/*
 * workflow.max_threads bounds the threads of a run over every level:
 * branches and the parallel iterations inside them. Without it the two
 * branches run their eight requests at once; within 3 threads, the run's
 * own waiting, at most 2 run at once, and the run still succeeds.
 */
static void
test_thread_budget(void)
{
	char	status[32];
	int	peak;

	peak = budget_peak(3, 8, status);
	CHECK_STR(status, "succeeded");
	CHECK(peak >= 1 && peak <= 2);
	peak = budget_peak(1, 8, status);
	CHECK_STR(status, "succeeded");
	CHECK_INT(peak, 1);
	peak = budget_peak(64, 8, status);
	CHECK_STR(status, "succeeded");
	CHECK_INT(peak, 8);
}

/*
 * The closing events go out once the run is stored: a client that has
 * workflow_finished finds the run's record finished, and one that has
 * message_end finds the message with its whole answer. Checked from the
 * event callback itself, where the event is handed out, so the order is
 * the code's and not the timing's.
 */
struct closing {
	const char	*app_id;
	char		 run_status[32], msg_answer[64];
	int		 run_seen, msg_seen;
};

static void
on_closing(void *arg, const json_t *ev)
{
	struct closing	*k = arg;
	const char	*name = json_string_value(json_object_get(ev, "event"));
	json_t		*got = NULL;

	if (strcmp(name, "workflow_finished") == 0) {
		k->run_seen = 1;
		if (engine_run_get(eng, json_string_value(json_object_get(ev,
		    "workflow_run_id")), &got) == 0)
			snprintf(k->run_status, sizeof(k->run_status), "%s",
			    json_string_value(json_object_get(got, "status")) ?
			    json_string_value(json_object_get(got, "status")) :
			    "(none)");
	} else if (strcmp(name, "message_end") == 0) {
		k->msg_seen = 1;
		if (engine_message_get(eng, k->app_id, "t",
		    json_string_value(json_object_get(ev, "message_id")),
		    &got) == 0)
			snprintf(k->msg_answer, sizeof(k->msg_answer), "%s",
			    json_string_value(json_object_get(got, "answer")) ?
			    json_string_value(json_object_get(got, "answer")) :
			    "(none)");
	}
	json_decref(got);
}

static void
test_closing_after_store(void)
{
	static const char chat[] =
	    "version: 0.6.0\nkind: app\napp: {name: t, mode: advanced-chat}\n"
	    "workflow:\n  features: {}\n  graph:\n    nodes:\n"
	    "    - id: s\n      data: {type: start, title: S, variables: []}\n"
	    "    - id: a\n      data: {type: answer, title: A, answer: "
	    "'stored {{#sys.query#}}'}\n"
	    "    edges:\n    - {id: x1, source: s, target: a}\n";
	struct import_opts	 io;
	struct run_opts		 ro;
	struct closing		 k;
	char			 err[ENGINE_ERRMAX] = "";
	json_t			*imp = NULL, *in = json_object(), *res = NULL;

	memset(&io, 0, sizeof(io));
	memset(&k, 0, sizeof(k));
	CHECK_INT(engine_import(eng, chat, strlen(chat), &io, err, &imp), 0);
	k.app_id = json_string_value(json_object_get(imp, "app_id"));
	memset(&ro, 0, sizeof(ro));
	ro.app_id = k.app_id;
	ro.inputs = in;
	ro.user = "t";
	ro.query = "now";
	ro.on_event = on_closing;
	ro.arg = &k;
	CHECK_INT(engine_run(eng, &ro, err, &res), 0);
	CHECK_INT(k.run_seen, 1);
	CHECK_STR(k.run_status, "succeeded");
	CHECK_INT(k.msg_seen, 1);
	CHECK_STR(k.msg_answer, "stored now");
	json_decref(res);
	json_decref(in);
	json_decref(imp);
}

int
main(void)
{
	char	err[ENGINE_ERRMAX], cerr[CONF_ERRMAX];
	char	dir[] = "/tmp/t_executor.XXXXXX";

	conf_defaults(&c);
	/* FLOWCGI_CODE_POOL_SIZE=0: the code nodes start cold */
	if (conf_load_env(&c, cerr) != 0) {
		printf("# %s\n", cerr);
		return 1;
	}
	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(c.data_dir, sizeof(c.data_dir), "%s", dir);
	c.sync = 0;
	c.http_allow_private = 1;
	if (engine_open(&c, err, &eng) != 0) {
		printf("# %s\n", err);
		return 1;
	}
	test_branches();
	test_branches_legacy_name();
	test_condition_refs();
	test_parallel();
	test_iteration();
	test_loop();
	test_strategies();
	test_retry();
	test_stop_and_limits();
	test_bad_graphs();
	test_thread_budget();
	test_closing_after_store();
	json_decref(events);
	engine_close(eng);
	return tap_done();
}
