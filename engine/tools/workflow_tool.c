/*
 * workflow_tool.c — Dify's workflow-as-tool (provider_type "workflow",
 * api/core/tools/workflow_as_tool/): another workflow app of this server,
 * called as a tool.
 *
 * The provider id is the app's id. Its one tool is the app's published
 * version: the start node's variables are the parameters, with Dify's
 * mapping of variable types to tool parameter types (text-input and
 * paragraph: string, select: select, number: number, checkbox: boolean,
 * file: file, file-list: files), all of form llm. The tool answers to any
 * tool_name, since Dify names it after the WorkflowToolProvider record the
 * console made when the app was published as a tool (flowcgi keeps none):
 * tool_describe gives it the name the caller asked for.
 *
 * A call runs the app as a nested run of its own, with its own record in
 * the app's run history (the caller's run id as parent_run_id, the
 * caller's end user, the tool's parameters as inputs), in the calling
 * thread; a stop of the caller stops it. An app that would call itself,
 * directly or through the apps calling it, is refused, and runs nest at
 * most tools.workflow_max_depth deep (Dify's WORKFLOW_CALL_MAX_DEPTH).
 *
 * The answer, as Dify's WorkflowTool gives it: a file message for each
 * file among the outputs, a variable for each output not named text, json
 * or files, the text json.dumps(outputs, ensure_ascii=False) and the json
 * message of the outputs. A nested run that fails fails the tool with its
 * error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/records/records.h"
#include "engine/tools/tools.h"

/* A start variable's type as Dify's tool parameter type, or NULL. */
static const char *
param_type(const char *vtype)
{
	static const char *const map[][2] = {
		{ "text-input", "string" }, { "paragraph", "string" },
		{ "select", "select" }, { "number", "number" },
		{ "checkbox", "boolean" }, { "file", "file" },
		{ "file-list", "files" }, { NULL, NULL },
	};
	size_t i;

	for (i = 0; vtype != NULL && map[i][0] != NULL; i++)
		if (strcmp(map[i][0], vtype) == 0)
			return map[i][1];
	return NULL;
}

/*
 * The published app id names: *out its live record (app_cache_get, not to
 * be changed). ENGINE_ENOTFOUND with err naming it when it is not a
 * published workflow app of this server.
 */
static int
wf_app(struct engine *e, const char *id, char *err, json_t **out)
{
	json_t		*app = NULL;
	const char	*mode;
	int		 rc, sealed;

	*out = NULL;
	if (id == NULL || *id == '\0') {
		snprintf(err, ENGINE_ERRMAX, "a workflow tool needs the app id "
		    "as its provider_id");
		return ENGINE_ENOTFOUND;
	}
	rc = app_cache_get(e, id, 0, &app, &sealed);
	if (rc == ENGINE_ENOTFOUND || (rc == 0 && ((mode = json_string_value(
	    json_object_get(app, "mode"))) == NULL || strcmp(mode,
	    "workflow") != 0 || json_object_get(app, "run_version") ==
	    NULL))) {
		snprintf(err, ENGINE_ERRMAX, "workflow tool '%.100s': no "
		    "published workflow app of that id on this server", id);
		json_decref(app);
		return ENGINE_ENOTFOUND;
	}
	if (rc != 0)
		return rc;
	*out = app;
	return 0;
}

/* The start node's variables of app (borrowed), or NULL. */
static const json_t *
start_vars(const json_t *app)
{
	const json_t	*nodes, *n, *data;
	size_t		 i;

	nodes = json_object_get(json_object_get(json_object_get(
	    json_object_get(app, "dsl"), "workflow"), "graph"), "nodes");
	json_array_foreach(nodes, i, n) {
		data = json_object_get(n, "data");
		if (json_is_string(json_object_get(data, "type")) && strcmp(
		    json_string_value(json_object_get(data, "type")), "start") ==
		    0)
			return json_object_get(data, "variables");
	}
	return NULL;
}

/* A tool name of Dify's alphabet ([A-Za-z0-9_-]) from the app's name. */
static void
tool_name_of(const json_t *app, char *buf, size_t n)
{
	const char	*s = json_string_value(json_object_get(app, "name"));
	size_t		 i = 0;
	unsigned char	 ch;

	for (; s != NULL && *s != '\0' && i + 1 < n; s++) {
		ch = (unsigned char)*s;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '_' || ch == '-')
			buf[i++] = (char)ch;
		else if (ch < 0x80 || (ch & 0xc0) == 0xc0)
			buf[i++] = '_';	/* one per character */
	}
	buf[i] = '\0';
	if (i == 0)
		snprintf(buf, n, "workflow");
}

/* The JSON schema of the parameters a model fills (files left out). */
static json_t *
wf_schema(const json_t *vars)
{
	json_t		*props = json_object(), *req = json_array(), *p;
	const json_t	*v, *opts;
	const char	*name, *type, *desc;
	size_t		 i;
	int		 bad = props == NULL || req == NULL;

	json_array_foreach(vars, i, v) {
		name = json_string_value(json_object_get(v, "variable"));
		type = param_type(json_string_value(json_object_get(v,
		    "type")));
		if (name == NULL || type == NULL || strcmp(type, "file") == 0 ||
		    strcmp(type, "files") == 0)
			continue;
		desc = json_string_value(json_object_get(v, "hint"));
		if (desc == NULL || *desc == '\0')
			desc = json_string_value(json_object_get(v, "label"));
		p = json_pack("{s:s,s:s}", "type", strcmp(type, "select") == 0 ?
		    "string" : type, "description", desc ? desc : name);
		opts = json_object_get(v, "options");
		if (p != NULL && strcmp(type, "select") == 0 &&
		    json_is_array(opts) && json_array_size(opts) > 0)
			bad |= json_object_set(p, "enum", (json_t *)opts);
		bad |= json_object_set_new(props, name, p);
		if (json_is_true(json_object_get(v, "required")))
			bad |= json_array_append_new(req, json_string(name));
	}
	if (bad) {
		json_decref(props);
		json_decref(req);
		return NULL;
	}
	return json_pack("{s:s,s:o,s:o}", "type", "object", "properties", props,
	    "required", req);
}

static int
wf_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	json_t		*app = NULL, *schema;
	const char	*desc;
	char		 name[128];
	int		 rc;

	*out = NULL;
	if ((rc = wf_app(e, call->provider, err, &app)) != 0)
		return rc;
	if (call->tool != NULL)
		snprintf(name, sizeof(name), "%s", call->tool);
	else
		tool_name_of(app, name, sizeof(name));
	desc = json_string_value(json_object_get(app, "description"));
	if (desc == NULL || *desc == '\0')
		desc = json_string_value(json_object_get(app, "name"));
	schema = wf_schema(start_vars(app));
	*out = schema ? json_pack("[{s:s,s:s,s:o}]", "name", name,
	    "description", desc ? desc : name, "parameters", schema) : NULL;
	json_decref(app);
	return *out != NULL ? 0 : ENGINE_ENOMEM;
}

/* opts.cancelled of a nested run: the caller's stop stops it. */
static int
parent_stopped(void *arg)
{
	const struct tool_run *parent = arg;

	return parent->stopped(parent->run);
}

/*
 * Refuses a call of app_id from run r: when app_id is r's app or one of
 * the runs' above it, or when it would nest deeper than max.
 */
static int
wf_guard(const struct tool_run *r, const char *app_id, int max, char *err)
{
	const struct tool_run *p;

	for (p = r; p != NULL; p = p->parent)
		if (strcmp(p->app_id, app_id) == 0)
			return engine_invalid(err, "workflow tool '%s' would call "
			    "itself%s: an app may not call itself as a tool, "
			    "directly or through others", app_id, p == r ? "" :
			    " through the apps it calls");
	if (r != NULL && r->depth + 1 > max) {
		snprintf(err, ENGINE_ERRMAX, "workflow tool '%s': runs nest "
		    "deeper than %d (tools.workflow_max_depth)", app_id, max);
		return ENGINE_ELIMIT;
	}
	return 0;
}

/* The inputs of the nested run: the parameters named by start variables. */
static json_t *
wf_inputs(const json_t *vars, const json_t *params)
{
	json_t		*in = json_object();
	const json_t	*v, *x;
	const char	*name;
	size_t		 i;

	json_array_foreach(vars, i, v) {
		name = json_string_value(json_object_get(v, "variable"));
		if (in == NULL || name == NULL || (x = json_object_get(params,
		    name)) == NULL || json_is_null(x))
			continue;
		if (json_object_set(in, name, (json_t *)x) != 0) {
			json_decref(in);
			in = NULL;
		}
	}
	return in;
}

/* Dify's answer of a workflow tool from the nested run's outputs. */
static int
wf_answer(const json_t *outputs, struct tool_result *out)
{
	const json_t	*v, *x;
	const char	*k;
	char		*text = NULL;
	size_t		 i;
	int		 rc = 0;

	json_object_foreach((json_t *)outputs, k, v) {
		if (tpl_is_file(v))
			rc = tool_result_file(out, json_deep_copy(v));
		else if (json_is_array(v))
			json_array_foreach(v, i, x)
				if (rc == 0 && tpl_is_file(x))
					rc = tool_result_file(out,
					    json_deep_copy(x));
		if (rc == 0 && strcmp(k, "text") != 0 && strcmp(k, "json") !=
		    0 && strcmp(k, "files") != 0)
			rc = tool_result_var(out, k, json_deep_copy(v));
		if (rc != 0)
			goto out;
	}
	if ((rc = tool_json_dumps(outputs, 0, &text)) != 0 ||
	    (rc = tool_result_text(out, text, strlen(text))) != 0)
		goto out;
	rc = tool_result_json(out, json_deep_copy(outputs));
out:
	free(text);
	return rc;
}

static int
wf_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	struct run_opts	 o;
	const struct tool_run *caller = tool_run_current();
	json_t		*app = NULL, *inputs = NULL, *res = NULL, *outputs;
	const json_t	*data;
	const char	*status, *from, *msg;
	int		 rc;

	if ((rc = wf_app(e, call->provider, err, &app)) != 0) {
		out->final = 1;
		goto out;
	}
	if ((rc = wf_guard(caller, call->provider,
	    e->conf->tools_workflow_max_depth, err)) != 0) {
		out->final = 1;
		goto out;
	}
	if ((inputs = wf_inputs(start_vars(app), call->params)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	memset(&o, 0, sizeof(o));
	o.app_id = call->provider;
	o.inputs = inputs;
	o.user = caller != NULL ? caller->user : NULL;
	/* a tool runs the published version, even for a draft's test run */
	from = caller != NULL ? caller->invoke_from : NULL;
	o.invoke_from = from != NULL && strcmp(from, "debugger") != 0 ? from :
	    "service-api";
	if (caller != NULL) {
		o.request_id = caller->request_id;
		o.parent = caller->run;
		o.cancelled = parent_stopped;
		o.cancel_arg = (void *)caller;
	}
	if ((rc = engine_run(e, &o, err, &res)) != 0) {
		/* bad inputs stay bad */
		if (rc == ENGINE_EINVAL)
			out->final = 1;
		goto out;
	}
	data = json_object_get(res, "data");
	status = json_string_value(json_object_get(data, "status"));
	if (status == NULL || (strcmp(status, "succeeded") != 0 &&
	    strcmp(status, "partial-succeeded") != 0)) {
		msg = json_string_value(json_object_get(data, "error"));
		rc = engine_invalid(err, "%s", msg && *msg ? msg :
		    "the workflow failed");
		goto out;
	}
	outputs = json_object_get(data, "outputs");
	if (!json_is_object(outputs))
		outputs = NULL;
	if (outputs == NULL) {
		json_t *empty = json_object();

		rc = empty ? wf_answer(empty, out) : ENGINE_ENOMEM;
		json_decref(empty);
	} else
		rc = wf_answer(outputs, out);
out:
	json_decref(res);
	json_decref(inputs);
	json_decref(app);
	return rc;
}

const struct tool_provider tool_provider_workflow = {
	"workflow", wf_list, wf_invoke, 0,
};

int
workflow_tool_app_ok(struct engine *e, const char *id, char *err)
{
	json_t	*app = NULL;
	int	 rc = wf_app(e, id, err, &app);

	json_decref(app);
	return rc;
}

/* ====== The console's list ====== */

/* A start variable as Dify's ToolParameter of a workflow tool. */
static json_t *
param_entity(const json_t *v)
{
	const char	*name = json_string_value(json_object_get(v, "variable"));
	const char	*type = param_type(json_string_value(json_object_get(v,
			    "type")));
	const char	*label = json_string_value(json_object_get(v, "label"));
	const json_t	*o;
	json_t		*opts = json_array(), *p;
	size_t		 i;
	int		 bad = opts == NULL;

	if (name == NULL || type == NULL) {
		json_decref(opts);
		return NULL;
	}
	json_array_foreach(json_object_get(v, "options"), i, o)
		if (json_is_string(o))
			bad |= json_array_append_new(opts, json_pack(
			    "{s:O,s:{s:O,s:O}}", "value", o, "label", "en_US",
			    o, "zh_Hans", o));
	p = json_pack("{s:s,s:{s:s,s:s},s:{s:s,s:s},s:s,s:s,s:s,s:b,s:o}",
	    "name", name, "label", "en_US", label ? label : name, "zh_Hans",
	    label ? label : name, "human_description", "en_US", "", "zh_Hans",
	    "", "llm_description", "", "type", type, "form", "llm", "required",
	    json_is_true(json_object_get(v, "required")), "options", opts);
	if (bad) {
		json_decref(p);
		p = NULL;
	}
	return p;
}

/* A published workflow app as Dify's ToolProviderApiEntity (type
 * workflow), or NULL (not published, or out of memory). */
static json_t *
provider_entity(struct engine *e, const char *id)
{
	json_t		*app = NULL, *params = NULL, *p, *out = NULL;
	const json_t	*v;
	const char	*name, *desc;
	char		 err[ENGINE_ERRMAX], tool[128];
	size_t		 i;
	int		 bad = 0;

	if (wf_app(e, id, err, &app) != 0)
		return NULL;
	name = json_string_value(json_object_get(app, "name"));
	desc = json_string_value(json_object_get(app, "description"));
	tool_name_of(app, tool, sizeof(tool));
	if ((params = json_array()) == NULL)
		goto out;
	json_array_foreach(start_vars(app), i, v)
		if ((p = param_entity(v)) != NULL)
			bad |= json_array_append_new(params, p);
	if (bad)
		goto out;
	out = json_pack("{s:s,s:s,s:s,s:{s:s,s:s},s:{s:s,s:s},s:s,s:s,s:{},"
	    "s:b,s:b,s:[{s:s,s:s,s:{s:s,s:s},s:{s:s,s:s},s:O,s:[],s:n}],s:[],"
	    "s:s}", "id", id, "author", "flowcgi", "name", name ? name : tool,
	    "description", "en_US", desc ? desc : "", "zh_Hans", desc ? desc :
	    "", "label", "en_US", name ? name : tool, "zh_Hans", name ? name :
	    tool, "icon", json_string_value(json_object_get(app, "icon")) ?
	    json_string_value(json_object_get(app, "icon")) : "", "type",
	    "workflow", "team_credentials", "is_team_authorization", 1,
	    "allow_delete", 0, "tools", "author", "flowcgi", "name", tool,
	    "label", "en_US", name ? name : tool, "zh_Hans", name ? name : tool,
	    "description", "en_US", desc ? desc : "", "zh_Hans", desc ? desc :
	    "", "parameters", params, "labels", "output_schema", "labels",
	    "workflow_app_id", id);
out:
	json_decref(params);
	json_decref(app);
	return out;
}

int
engine_tool_workflow_list(struct engine *e, json_t **out)
{
	struct app_query	 q;
	json_t			*arr = json_array(), *page = NULL, *ent;
	const json_t		*a;
	const char		*id;
	size_t			 i;
	int			 rc = 0;

	*out = NULL;
	if (arr == NULL)
		return ENGINE_ENOMEM;
	memset(&q, 0, sizeof(q));
	q.limit = 100;
	q.mode = "workflow";
	for (q.page = 1;; q.page++) {
		if ((rc = engine_app_list(e, &q, &page)) != 0)
			goto out;
		json_array_foreach(json_object_get(page, "data"), i, a) {
			if ((id = json_string_value(json_object_get(a, "id"))) ==
			    NULL || (ent = provider_entity(e, id)) == NULL)
				continue;	/* not published */
			if (json_array_append_new(arr, ent) != 0) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
		}
		if (!json_is_true(json_object_get(page, "has_more")))
			break;
		json_decref(page);
		page = NULL;
	}
	*out = arr;
	arr = NULL;
out:
	json_decref(page);
	json_decref(arr);
	return rc;
}
