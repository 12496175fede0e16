/*
 * t_tools_workflow.c — workflow apps as tools (provider_type workflow)
 * through the engine: the tool's parameters from the callee's start
 * variables (Dify's type mapping), a tool node calling another published
 * workflow app (Dify's answer: json.dumps of the outputs as text, the
 * outputs as json and variables), the nested run's own record (parent
 * run, end user, inputs), refusals (an app calling itself, directly or
 * through another; tools.workflow_max_depth), a missing or non-workflow
 * app (ENGINE_ENOTFOUND naming it; not_served in an import's report),
 * calls from a parallel iteration's workers, a stop of the caller
 * stopping the nested run, and an agent's tool entry naming the app by
 * provider_id.
 */
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tap.h"
#include "t_node_run.h"
#include "engine/tools/tools.h"

/* Imports a DSL document (stolen) as app name; over app id when id is
 * set. The app's id into out (37 bytes). 0 or -1 (printed). */
static int
import_doc(json_t *doc, const char *id, char *out)
{
	struct import_opts	 io;
	json_t			*imp = NULL;
	char			 err[ENGINE_ERRMAX] = "", *yaml = NULL;
	const char		*app;
	size_t			 len;
	int			 rc = -1;

	if (doc == NULL || dsl_emit(doc, err, &yaml, &len) != 0) {
		printf("# building the DSL failed: %s\n", err);
		goto out;
	}
	memset(&io, 0, sizeof(io));
	io.app_id = id;
	if (engine_import(tn_engine, yaml, len, &io, err, &imp) != 0 ||
	    (app = json_string_value(json_object_get(imp, "app_id"))) ==
	    NULL) {
		printf("# import failed: %s %s\n", err, json_string_value(
		    json_object_get(imp, "error")));
		goto out;
	}
	snprintf(out, 37, "%s", app);
	rc = 0;
out:
	free(yaml);
	json_decref(doc);
	json_decref(imp);
	return rc;
}

/* A workflow DSL: start (vars) -> nodes (n1, n2, ...) -> end (outs). */
static json_t *
wf_doc(const char *name, json_t *vars, json_t *nodes, json_t *outs)
{
	json_t		*gn = json_array(), *ge = json_array(), *eo =
			    json_array(), *d, *v;
	const char	*k;
	char		 id[32], prev[32] = "start", eid[72];
	size_t		 i;

	json_array_append_new(gn, json_pack("{s:s,s:s,s:{s:s,s:s,s:o}}", "id",
	    "start", "type", "custom", "data", "type", "start", "title",
	    "Start", "variables", vars));
	json_array_foreach(nodes, i, d) {
		snprintf(id, sizeof(id), "n%zu", i + 1);
		json_object_set_new(d, "title", json_string(id));
		json_array_append_new(gn, json_pack("{s:s,s:s,s:O}", "id", id,
		    "type", "custom", "data", d));
		snprintf(eid, sizeof(eid), "%s-%s", prev, id);
		json_array_append_new(ge, json_pack("{s:s,s:s,s:s,s:s,s:s}",
		    "id", eid, "source", prev, "sourceHandle", "source",
		    "target", id, "targetHandle", "target"));
		snprintf(prev, sizeof(prev), "%s", id);
	}
	json_object_foreach(outs, k, v)
		json_array_append_new(eo, json_pack("{s:s,s:O}", "variable", k,
		    "value_selector", v));
	json_array_append_new(gn, json_pack("{s:s,s:s,s:{s:s,s:s,s:o}}", "id",
	    "end", "type", "custom", "data", "type", "end", "title", "End",
	    "outputs", eo));
	snprintf(eid, sizeof(eid), "%s-end", prev);
	json_array_append_new(ge, json_pack("{s:s,s:s,s:s,s:s,s:s}", "id", eid,
	    "source", prev, "sourceHandle", "source", "target", "end",
	    "targetHandle", "target"));
	json_decref(nodes);
	json_decref(outs);
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:{s:{s:o,s:o},s:[],s:[]}}",
	    "version", "0.1.5", "kind", "app", "app", "name", name, "mode",
	    "workflow", "description", "Echoes what it is given", "workflow",
	    "graph", "nodes", gn, "edges", ge, "environment_variables",
	    "conversation_variables");
}

/* A tool node calling workflow app callee with q from the start. */
static json_t *
tool_node(const char *callee)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:{s:s,s:s},s:{s:s,s:i}},"
	    "s:{}}", "type", "tool", "provider_type", "workflow",
	    "provider_id", callee, "provider_name", "echo", "tool_name",
	    "echo_tool", "tool_parameters", "q", "type", "mixed", "value",
	    "{{#start.q#}}", "n", "type", "constant", "value", 3,
	    "tool_configurations");
}

/* An app whose only node calls callee; its end gives the tool's text. */
static int
caller_app(const char *name, const char *callee, const char *id, char *out)
{
	return import_doc(wf_doc(name, json_pack("[{s:s,s:s,s:s,s:b}]",
	    "variable", "q", "label", "q", "type", "text-input", "required",
	    0), json_pack("[o]", tool_node(callee)), json_pack("{s:[s,s],"
	    "s:[s,s],s:[s,s]}", "text", "n1", "text", "json", "n1", "json",
	    "echo", "n1", "echo")), id, out);
}

/* Runs app with {q}; *res Dify's blocking answer. */
static int
run_app(const char *app, const char *q, json_t **res)
{
	struct run_opts	 o;
	json_t		*in = json_pack("{s:s}", "q", q), *files = json_array();
	char		 err[ENGINE_ERRMAX] = "";
	int		 rc;

	memset(&o, 0, sizeof(o));
	o.app_id = app;
	o.inputs = in;
	o.user = "end-user-7";
	o.invoke_from = "service-api";
	o.files = files;
	if ((rc = engine_run(tn_engine, &o, err, res)) != 0)
		printf("# run failed to start: %s\n", err);
	json_decref(in);
	json_decref(files);
	return rc;
}

static const char *
res_str(const json_t *res, const char *k)
{
	const char *s = json_string_value(json_object_get(json_object_get(res,
	    "data"), k));

	return s ? s : "";
}

/* The runs of app, newest first (new reference). */
static json_t *
runs_of(const char *app)
{
	json_t *out = NULL, *d;

	if (engine_run_list(tn_engine, app, 1, 20, &out) != 0)
		return json_array();
	d = json_incref(json_object_get(out, "data"));
	json_decref(out);
	return d;
}

static char echo_id[37];

static void
test_describe(void)
{
	struct tool_call	 c;
	json_t			*d = NULL, *p;
	char			 err[ENGINE_ERRMAX];

	/* the callee: four kinds of start variable */
	CHECK(import_doc(wf_doc("Echo app", json_pack("[{s:s,s:s,s:s,s:b},"
	    "{s:s,s:s,s:s,s:b},{s:s,s:s,s:s,s:[s,s],s:b},{s:s,s:s,s:s,s:b},"
	    "{s:s,s:s,s:s,s:b}]",
	    "variable", "q", "label", "The question", "type", "text-input",
	    "required", 1,
	    "variable", "n", "label", "How many", "type", "number",
	    "required", 0,
	    "variable", "mode", "label", "Mode", "type", "select", "options",
	    "short", "long", "required", 0,
	    "variable", "loud", "label", "Loud", "type", "checkbox",
	    "required", 0,
	    "variable", "doc", "label", "A file", "type", "file",
	    "required", 0),
	    json_array(), json_pack("{s:[s,s],s:[s,s]}", "echo", "start", "q",
	    "n", "start", "n")), NULL, echo_id) == 0);

	memset(&c, 0, sizeof(c));
	c.provider = echo_id;
	c.provider_type = "workflow";
	c.tool = "echo_tool";
	CHECK(tool_provider_lookup(tn_engine, echo_id, "workflow") ==
	    &tool_provider_workflow);
	CHECK(tool_describe(tn_engine, &c, err, &d) == 0);
	CHECK_INT(json_array_size(d), 1);
	/* the name the caller gave; the app's description */
	CHECK_STR(json_string_value(json_object_get(json_array_get(d, 0),
	    "name")), "echo_tool");
	CHECK_STR(json_string_value(json_object_get(json_array_get(d, 0),
	    "description")), "Echoes what it is given");
	p = json_object_get(json_array_get(d, 0), "parameters");
	CHECK_STR(tn_dump(json_object_get(p, "required")), "[\"q\"]");
	p = json_object_get(p, "properties");
	CHECK_STR(tn_dump(json_object_get(p, "q")), "{\"description\":\"The "
	    "question\",\"type\":\"string\"}");
	CHECK_STR(json_string_value(json_object_get(json_object_get(p, "n"),
	    "type")), "number");
	CHECK_STR(tn_dump(json_object_get(json_object_get(p, "mode"),
	    "enum")), "[\"short\",\"long\"]");
	CHECK_STR(json_string_value(json_object_get(json_object_get(p,
	    "loud"), "type")), "boolean");
	CHECK(json_object_get(p, "doc") == NULL);	/* files: not a model's */
	json_decref(d);
	d = NULL;
	/* listed without a name: the app's name as a tool name */
	c.tool = NULL;
	CHECK(tool_describe(tn_engine, &c, err, &d) == 0);
	CHECK_STR(json_string_value(json_object_get(json_array_get(d, 0),
	    "name")), "Echo_app");
	json_decref(d);
	d = NULL;

	/* no such app: ENGINE_ENOTFOUND naming it */
	c.provider = "4f0c7c1e-0000-4000-8000-00000000beef";
	CHECK(tool_describe(tn_engine, &c, err, &d) == ENGINE_ENOTFOUND);
	CHECK(strstr(err, "4f0c7c1e-0000-4000-8000-00000000beef") != NULL);
	c.provider = "not an id";
	CHECK(tool_describe(tn_engine, &c, err, &d) == ENGINE_ENOTFOUND);
	CHECK(strstr(err, "'not an id'") != NULL);
}

static void
test_call(void)
{
	json_t		*res = NULL, *runs, *nested, *top, *out;
	const json_t	*o;
	char		 app[37];

	CHECK(caller_app("Caller", echo_id, NULL, app) == 0);
	CHECK(run_app(app, "héllo", &res) == 0);
	CHECK_STR(res_str(res, "status"), "succeeded");
	o = json_object_get(json_object_get(res, "data"), "outputs");
	/* Dify's answer: json.dumps(outputs, ensure_ascii=False) as text */
	CHECK_STR(json_string_value(json_object_get(o, "text")),
	    "{\"echo\": \"héllo\", \"n\": 3}");
	CHECK_STR(tn_dump(json_object_get(o, "json")), "[{\"echo\":\"héllo\","
	    "\"n\":3}]");
	/* each output a variable of the tool node */
	CHECK_STR(json_string_value(json_object_get(o, "echo")), "héllo");

	/* the nested run: a record of its own in the callee's history */
	runs = runs_of(echo_id);
	CHECK_INT(json_array_size(runs), 1);
	nested = json_array_get(runs, 0);
	CHECK_STR(json_string_value(json_object_get(nested, "parent_run_id")),
	    json_string_value(json_object_get(res, "workflow_run_id")));
	CHECK_STR(json_string_value(json_object_get(nested,
	    "created_by_end_user")), "end-user-7");
	CHECK_STR(json_string_value(json_object_get(nested, "status")),
	    "succeeded");
	/* the tool's parameters as inputs, the others as a start fills them */
	CHECK_STR(tn_dump(json_object_get(json_object_get(nested, "inputs"),
	    "q")), "\"héllo\"");
	CHECK_STR(tn_dump(json_object_get(json_object_get(nested, "inputs"),
	    "n")), "3");
	json_decref(runs);
	/* the caller's run has no parent */
	runs = runs_of(app);
	top = json_array_get(runs, 0);
	CHECK(json_object_get(top, "parent_run_id") == NULL);
	json_decref(runs);
	json_decref(res);
	res = NULL;

	/* engine_run_get shows the parent too */
	runs = runs_of(echo_id);
	CHECK(engine_run_get(tn_engine, json_string_value(json_object_get(
	    json_array_get(runs, 0), "id")), &out) == 0);
	CHECK(json_is_string(json_object_get(out, "parent_run_id")));
	json_decref(out);
	json_decref(runs);

	/* a callee that fails fails the tool with its error */
	{
		char bad[37];

		CHECK(import_doc(wf_doc("Needs q", json_pack(
		    "[{s:s,s:s,s:s,s:b}]", "variable", "q", "label", "q",
		    "type", "number", "required", 1), json_array(),
		    json_pack("{s:[s,s]}", "q", "start", "q")), NULL, bad) ==
		    0);
		CHECK(caller_app("Caller of a bad one", bad, NULL, app) == 0);
		CHECK(run_app(app, "not a number", &res) == 0);
		CHECK_STR(res_str(res, "status"), "failed");
		printf("# %s\n", res_str(res, "error"));
		json_decref(res);
		res = NULL;
	}
}

static void
test_recursion(void)
{
	json_t	*res = NULL, *runs;
	char	 self[37], a[37], b[37], c[37], d[37];

	/* an app calling itself: refused, and no nested run made */
	CHECK(caller_app("Self", echo_id, NULL, self) == 0);
	CHECK(caller_app("Self", self, self, self) == 0);
	CHECK(run_app(self, "x", &res) == 0);
	CHECK_STR(res_str(res, "status"), "failed");
	CHECK(strstr(res_str(res, "error"), "would call itself") != NULL);
	printf("# %s\n", res_str(res, "error"));
	json_decref(res);
	res = NULL;
	runs = runs_of(self);
	CHECK_INT(json_array_size(runs), 1);
	json_decref(runs);

	/* a -> b -> a: b's call is refused, so b's run fails, and a's */
	CHECK(caller_app("A", echo_id, NULL, a) == 0);
	CHECK(caller_app("B", a, NULL, b) == 0);
	CHECK(caller_app("A", b, a, a) == 0);
	CHECK(run_app(a, "x", &res) == 0);
	CHECK_STR(res_str(res, "status"), "failed");
	CHECK(strstr(res_str(res, "error"), "through the apps it calls") !=
	    NULL);
	json_decref(res);
	res = NULL;
	runs = runs_of(b);
	CHECK_INT(json_array_size(runs), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(runs, 0),
	    "status")), "failed");
	json_decref(runs);
	runs = runs_of(a);
	CHECK_INT(json_array_size(runs), 1);	/* no second run of a */
	json_decref(runs);

	/* c -> d -> echo: two deep, past a limit of one */
	CHECK(caller_app("D", echo_id, NULL, d) == 0);
	CHECK(caller_app("C", d, NULL, c) == 0);
	CHECK(run_app(c, "deep", &res) == 0);
	CHECK_STR(res_str(res, "status"), "succeeded");
	json_decref(res);
	res = NULL;
	tn_conf.tools_workflow_max_depth = 1;
	CHECK(run_app(c, "deep", &res) == 0);
	CHECK_STR(res_str(res, "status"), "failed");
	CHECK(strstr(res_str(res, "error"), "tools.workflow_max_depth") !=
	    NULL);
	json_decref(res);
	tn_conf.tools_workflow_max_depth = 5;
}

static void
test_missing(void)
{
	struct tool_call	 call;
	struct tool_result	 r;
	json_t			*res = NULL, *deps = NULL, *dsl, *node;
	char			 app[37], chat[37], err[ENGINE_ERRMAX];
	const char		*gone = "4f0c7c1e-0000-4000-8000-00000000beef";

	/* a tool node naming no app of this server fails, naming it */
	CHECK(caller_app("Caller of nothing", gone, NULL, app) == 0);
	CHECK(run_app(app, "x", &res) == 0);
	CHECK_STR(res_str(res, "status"), "failed");
	CHECK(strstr(res_str(res, "error"), gone) != NULL);
	json_decref(res);

	/* an app that is not a workflow app is not a workflow tool */
	dsl = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:{s:[],s:[]}}}", "version",
	    "0.1.5", "kind", "app", "app", "name", "Chat", "mode",
	    "advanced-chat", "workflow", "graph", "nodes", "edges");
	if (import_doc(dsl, NULL, chat) == 0) {
		memset(&call, 0, sizeof(call));
		memset(&r, 0, sizeof(r));
		call.provider = chat;
		call.provider_type = "workflow";
		call.tool = "t";
		call.params = node = json_object();
		CHECK(tool_invoke(tn_engine, &call, err, &r) ==
		    ENGINE_ENOTFOUND);
		CHECK(r.final);
		CHECK(strstr(err, chat) != NULL);
		tool_result_release(&r);
		json_decref(node);
	} else
		CHECK(0);

	/* an import's report: a workflow tool whose app is missing */
	dsl = wf_doc("Report", json_array(), json_pack("[o,o]",
	    tool_node(gone), tool_node(echo_id)), json_object());
	CHECK(engine_tool_deps(tn_engine, dsl, &deps) == 0);
	CHECK_INT(json_array_size(deps), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(deps, 0),
	    "provider")), gone);
	CHECK_STR(json_string_value(json_object_get(json_array_get(deps, 0),
	    "reason")), "not_served");
	CHECK_STR(tn_dump(json_object_get(json_array_get(deps, 0), "nodes")),
	    "[\"n1\"]");
	json_decref(deps);
	json_decref(dsl);
}

/* An app whose tool node runs in a parallel iteration over items. */
static int
iterating_app(const char *callee, const char *id, char *out)
{
	json_t *tool = tool_node(callee), *doc;

	json_object_set_new(json_object_get(tool, "tool_parameters"), "q",
	    json_pack("{s:s,s:[s,s]}", "type", "variable", "value", "it",
	    "item"));
	json_object_set_new(tool, "title", json_string("t"));
	doc = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:{s:[{s:s,s:s,s:{s:s,s:s,"
	    "s:[{s:s,s:s,s:s}]}},{s:s,s:s,s:{s:s,s:s,s:[s,s],s:[s,s],s:s,s:b,"
	    "s:i}},{s:s,s:s,s:s,s:{s:s,s:s}},{s:s,s:s,s:s,s:o},{s:s,s:s,s:{s:s,"
	    "s:s,s:[{s:s,s:[s,s]}]}}],s:[{s:s,s:s,s:s},{s:s,s:s,s:s},{s:s,s:s,"
	    "s:s}]},s:[],s:[]}}",
	    "version", "0.1.5", "kind", "app", "app", "name", "Iterating",
	    "mode", "workflow", "workflow", "graph", "nodes",
	    "id", "start", "type", "custom", "data", "type", "start", "title",
	    "Start", "variables", "variable", "items", "label", "items", "type",
	    "json",
	    "id", "it", "type", "custom", "data", "type", "iteration", "title",
	    "it", "iterator_selector", "start", "items", "output_selector", "t",
	    "text", "start_node_id", "its", "is_parallel", 1, "parallel_nums",
	    3,
	    "id", "its", "type", "custom", "parentId", "it", "data", "type",
	    "iteration-start", "title", "St",
	    "id", "t", "type", "custom", "parentId", "it", "data", tool,
	    "id", "end", "type", "custom", "data", "type", "end", "title", "End",
	    "outputs", "variable", "out", "value_selector", "it", "output",
	    "edges", "id", "e1", "source", "start", "target", "it",
	    "id", "e2", "source", "its", "target", "t",
	    "id", "e3", "source", "it", "target", "end",
	    "environment_variables", "conversation_variables");
	return import_doc(doc, id, out);
}

/* Workflow tools in a parallel iteration: each worker thread's call has
 * the run as its parent, and the guard holds there too. */
static void
test_iteration(void)
{
	struct run_opts	 o;
	json_t		*in, *files = json_array(), *res = NULL, *runs;
	const json_t	*r;
	char		 app[37], err[ENGINE_ERRMAX];
	size_t		 i, before, mine = 0;

	runs = runs_of(echo_id);
	before = json_array_size(runs);
	json_decref(runs);
	CHECK(iterating_app(echo_id, NULL, app) == 0);
	memset(&o, 0, sizeof(o));
	o.app_id = app;
	o.inputs = in = json_pack("{s:[s,s,s,s]}", "items", "a", "b", "c",
	    "d");
	o.user = "end-user-7";
	o.invoke_from = "service-api";
	o.files = files;
	CHECK(engine_run(tn_engine, &o, err, &res) == 0);
	CHECK_STR(res_str(res, "status"), "succeeded");
	CHECK_STR(tn_dump(json_object_get(json_object_get(json_object_get(res,
	    "data"), "outputs"), "out")), "[\"{\\\"echo\\\": \\\"a\\\", "
	    "\\\"n\\\": 3}\",\"{\\\"echo\\\": \\\"b\\\", \\\"n\\\": 3}\","
	    "\"{\\\"echo\\\": \\\"c\\\", \\\"n\\\": 3}\",\"{\\\"echo\\\": "
	    "\\\"d\\\", \\\"n\\\": 3}\"]");
	runs = runs_of(echo_id);
	CHECK_INT(json_array_size(runs), before + 4);
	json_array_foreach(runs, i, r)
		if (json_is_string(json_object_get(r, "parent_run_id")) &&
		    strcmp(json_string_value(json_object_get(r,
		    "parent_run_id")), json_string_value(json_object_get(res,
		    "workflow_run_id"))) == 0)
			mine++;
	CHECK_INT(mine, 4);
	json_decref(runs);
	json_decref(res);
	res = NULL;

	/* the same app calling itself from the workers: refused */
	CHECK(iterating_app(app, app, app) == 0);
	CHECK(engine_run(tn_engine, &o, err, &res) == 0);
	CHECK_STR(res_str(res, "status"), "failed");
	CHECK(strstr(res_str(res, "error"), "would call itself") != NULL);
	json_decref(res);
	runs = runs_of(app);
	CHECK_INT(json_array_size(runs), 2);	/* the two above, no more */
	json_decref(runs);
	json_decref(in);
	json_decref(files);
}

/* ====== A stop of the caller stops the nested run ====== */

/* An HTTP server that holds its one request until released. */
struct holder {
	int	fd;		/* listening */
	int	accepted[2];	/* a byte when the request came */
	int	release[2];	/* a byte to answer it */
};

static void *
hold_main(void *arg)
{
	struct holder	*h = arg;
	const char	*ans = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
			    "Connection: close\r\n\r\nok";
	char		 b = 0, buf[2048];
	int		 c;

	if ((c = accept(h->fd, NULL, NULL)) >= 0) {
		(void)read(c, buf, sizeof(buf));
		(void)write(h->accepted[1], "x", 1);
		(void)read(h->release[0], &b, 1);
		(void)write(c, ans, strlen(ans));
		close(c);
	}
	return NULL;
}

struct bg_run {
	struct run_opts	 o;
	json_t		*res;
	char		 task[37];
	int		 rc;
};

static void
bg_started(void *arg, const char *task_id, const char *run_id)
{
	struct bg_run *b = arg;

	(void)run_id;
	snprintf(b->task, sizeof(b->task), "%s", task_id);
}

static void *
bg_main(void *arg)
{
	struct bg_run	*b = arg;
	char		 err[ENGINE_ERRMAX];

	b->rc = engine_run(tn_engine, &b->o, err, &b->res);
	return NULL;
}

static void
test_stop(void)
{
	struct holder		 h;
	struct sockaddr_in	 a;
	struct bg_run		 b;
	socklen_t		 len = sizeof(a);
	pthread_t		 srv, run;
	json_t			*in, *files = json_array(), *runs;
	char			 slow[37], app[37], url[64], x;
	int			 allow = tn_conf.http_allow_private;

	memset(&h, 0, sizeof(h));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (!CHECK((h.fd = socket(AF_INET, SOCK_STREAM, 0)) >= 0 &&
	    bind(h.fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    listen(h.fd, 4) == 0 && getsockname(h.fd, (struct sockaddr *)&a,
	    &len) == 0 && pipe(h.accepted) == 0 && pipe(h.release) == 0))
		return;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", ntohs(a.sin_port));
	/* the callee waits on the held request */
	CHECK(import_doc(wf_doc("Slow", json_pack("[{s:s,s:s,s:s,s:b}]",
	    "variable", "q", "label", "q", "type", "text-input", "required",
	    0), json_pack("[{s:s,s:s,s:s,s:{s:s},s:s,s:s,s:{s:s,s:[]}}]",
	    "type", "http-request", "method", "get", "url", url,
	    "authorization", "type", "no-auth", "headers", "", "params", "",
	    "body", "type", "none", "data"), json_pack("{s:[s,s]}", "body",
	    "n1", "body")), NULL, slow) == 0);
	CHECK(caller_app("Caller of a slow one", slow, NULL, app) == 0);
	tn_conf.http_allow_private = 1;
	pthread_create(&srv, NULL, hold_main, &h);
	memset(&b, 0, sizeof(b));
	b.o.app_id = app;
	b.o.inputs = in = json_pack("{s:s}", "q", "x");
	b.o.user = "end-user-7";
	b.o.invoke_from = "service-api";
	b.o.files = files;
	b.o.on_start = bg_started;
	b.o.arg = &b;
	pthread_create(&run, NULL, bg_main, &b);
	/* the nested run's request is held: stop the caller, then answer */
	CHECK(read(h.accepted[0], &x, 1) == 1);
	CHECK(engine_run_stop(tn_engine, NULL, NULL, b.task) == 0);
	CHECK(write(h.release[1], "x", 1) == 1);
	pthread_join(run, NULL);
	pthread_join(srv, NULL);
	CHECK_INT(b.rc, 0);
	CHECK_STR(res_str(b.res, "status"), "stopped");
	runs = runs_of(slow);
	CHECK_INT(json_array_size(runs), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(runs, 0),
	    "status")), "stopped");
	json_decref(runs);
	json_decref(b.res);
	json_decref(in);
	json_decref(files);
	close(h.fd);
	close(h.accepted[0]);
	close(h.accepted[1]);
	close(h.release[0]);
	close(h.release[1]);
	tn_conf.http_allow_private = allow;
}

/* An agent's tool entry: provider_id is the app, provider_name a label. */
static void
test_agent_entry(void)
{
	json_t	*cfg, *schema = NULL, *fixed = NULL, *files = NULL;
	char	 err[ENGINE_ERRMAX], *desc = NULL, *out = NULL;

	cfg = json_pack("{s:s,s:s,s:s,s:s,s:{},s:{s:{s:i,s:i}}}", "type",
	    "workflow", "provider_id", echo_id, "provider_name", "echo",
	    "tool_name", "echo_tool", "settings", "parameters", "n", "auto", 0,
	    "value", 9);
	CHECK(tool_configured(tn_engine, cfg, NULL, NULL, err, &desc,
	    &schema, &fixed) == 0);
	CHECK_STR(desc, "Echoes what it is given");
	CHECK(json_object_get(json_object_get(schema, "properties"), "q") !=
	    NULL);
	CHECK(json_object_get(json_object_get(schema, "properties"), "n") ==
	    NULL);	/* fixed by the entry */
	CHECK(tool_run_configured(tn_engine, cfg, fixed, "{\"q\": \"hi\"}",
	    NULL, NULL, &out, &files) == 0);
	CHECK_STR(out, "{\"echo\": \"hi\", \"n\": 9}");
	free(desc);
	free(out);
	json_decref(schema);
	json_decref(fixed);
	json_decref(files);
	json_decref(cfg);
}

int
main(void)
{
	tn_open();
	test_describe();
	test_call();
	test_recursion();
	test_missing();
	test_iteration();
	test_stop();
	test_agent_entry();
	tn_close();
	return tap_done();
}
