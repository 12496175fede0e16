/*
 * agent.c — the classic runtime's Agent node: an LLM that calls the tools
 * configured on the node until it answers. Strategies: function_calling
 * (the model's tool calls) and ReAct (a JSON action in the text, for
 * models without tool support). Each thought, tool call and result goes
 * out as an agent_log event.
 *
 * Every model call streams, and a stop is looked at between its tokens
 * (a stop mid-answer ends the run "stopped" with the answer as far as it
 * got, as the LLM node's) and between iterations. What goes out as it
 * comes is what Dify sends:
 *  - in a workflow or chatflow (Dify's agent node, its function_calling
 *    strategy): the text of each call, as the node's text (message /
 *    text_chunk, from [node, text]) when an answer or end streams it; the
 *    node's text is all of it. ReAct's answer goes out once known.
 *  - in an agent-chat app (fc_agent_runner.py, cot_agent_runner.py): per
 *    iteration one thought, its agent_thought sent when the call starts
 *    (function calling: at its first token), again with the tools called
 *    (tool "a;b", tool_input the JSON of {tool: arguments}) and once more
 *    with their results (observation, {tool: result}); the text as
 *    agent_message chunks (ReAct: the thought without the action's JSON,
 *    and the final answer at the end). The thoughts are the message's
 *    agent_thoughts.
 *
 * agent_parameters: model, tools [{enabled, type, provider_name,
 * tool_name, settings {k: {value}}, parameters {k: {auto, value}}}],
 * instruction, query, maximum_iterations; memory on the node. The
 * mcp_server parameter of the MCP agent strategies Dify exports carry
 * (hjlarry/agent's "MCP FunctionCalling"; junjiem's mcp_servers_config)
 * adds every tool of the MCP servers it names, after the configured
 * tools: a URL, or a JSON object {name: {url, headers, timeout,
 * sse_read_timeout}}. Such a server is trusted only when the admin
 * registered that URL (mcp_server_for_url); the run's MCP sessions are
 * reused for every listing and call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/nodes/nodes.h"
#include "engine/records/records.h"
#include "engine/tools/tools.h"

#define AGENT_MAX_TOOLS		64
#define AGENT_MAX_MESSAGES	256

struct agent_tool {
	char		 name[65];	/* as the model sees it */
	const json_t	*cfg;		/* the DSL's tool entry, or NULL */
	json_t		*schema;	/* parameters JSON schema */
	json_t		*fixed;		/* parameters the model does not set */
	char		*description;
	size_t		 server;	/* 1 + its mcp_server index, or 0 */
	char		*mcp_name;	/* the tool's name on that server */
};

/*
 * An agent-chat app's thought of one iteration (Dify's MessageAgentThought
 * as AgentThoughtStreamResponse sends it).
 */
struct thought {
	char		 id[37];
	int		 position;
	int		 sent;		/* its first agent_thought went out */
	struct dbuf	 text;		/* thought */
	struct dbuf	 tool;		/* "a;b" */
	json_t		*input;		/* {tool: arguments} */
	json_t		*obs;		/* {tool: result} */
	json_t		*labels;	/* {tool: {en_US, zh_Hans}} */
	json_t		*files;		/* message file ids */
};

struct agent {
	struct node_ctx		*c;
	int			 app;	/* an agent-chat app's agent */
	int			 out;	/* its text streams as the answer */
	struct thought		 th;
	struct dbuf		 text;	/* function calling: the node's text */
	struct agent_tool	 tools[AGENT_MAX_TOOLS];
	size_t			 ntools;
	struct mcp_server	*servers;	/* mcp_server's */
	size_t			 nservers;
	struct llm_tool		 ltools[AGENT_MAX_TOOLS];
	struct llm_message	 msgs[AGENT_MAX_MESSAGES];
	size_t			 nmsgs;
	json_t			*keep;	/* strings and calls messages use */
	struct llm_tool_call	*calls[AGENT_MAX_MESSAGES];
	json_t			*logs;
	json_t			*files;	/* the files the tools made */
	json_t			*call_ids; /* the last call's message files */
	int64_t			 tokens;
	int			 nomem;	/* a text or log was lost to it */
};

static const json_t *
aparam(const struct node_ctx *c, const char *name)
{
	return json_object_get(json_object_get(json_object_get(c->node->data,
	    "agent_parameters"), name), "value");
}

/* s kept as long as a; "" when out of memory, which sets a->nomem. */
static const char *
keep(struct agent *a, const char *s, size_t n)
{
	json_t *j = json_stringn(s ? s : "", s ? n : 0);

	if (json_array_append_new(a->keep, j) != 0) {
		a->nomem = 1;
		return "";
	}
	return json_string_value(j);
}

static int
push(struct agent *a, enum llm_role role, const char *text)
{
	if (a->nmsgs == AGENT_MAX_MESSAGES)
		return node_fail(a->c, "the agent's conversation grew past %d "
		    "messages", AGENT_MAX_MESSAGES);
	memset(&a->msgs[a->nmsgs], 0, sizeof(a->msgs[0]));
	a->msgs[a->nmsgs].role = role;
	a->msgs[a->nmsgs].content = text;
	a->nmsgs++;
	return 0;
}

static void
agent_log(struct agent *a, const char *label, const char *status,
    json_t *data)
{
	char id[37];

	engine_uuid(id);
	/* keep it for the trace before the event takes (and frees) data */
	if (data != NULL && json_array_append_new(a->logs, json_pack(
	    "{s:s,s:O}", "label", label, "data", data)) != 0)
		a->nomem = 1;
	run_emit(a->c->run, "agent_log", json_pack("{s:s,s:s,s:s,s:n,s:n,"
	    "s:s,s:o,s:{},s:s}", "node_execution_id", a->c->node->id, "id",
	    id, "label", label, "parent_id", "error", "status", status, "data",
	    data ? data : json_object(), "metadata", "node_id",
	    a->c->node->id));
}

/* ====== Tools ====== */

/* A unique name of [A-Za-z0-9_-] for the model, from the tool's. */
static void
name_tool(struct agent *a, struct agent_tool *at, const char *name)
{
	size_t j;

	snprintf(at->name, sizeof(at->name), "%.60s", name);
	for (j = 0; at->name[j] != '\0'; j++)
		if (!(at->name[j] == '_' || at->name[j] == '-' ||
		    (at->name[j] >= 'a' && at->name[j] <= 'z') ||
		    (at->name[j] >= 'A' && at->name[j] <= 'Z') ||
		    (at->name[j] >= '0' && at->name[j] <= '9')))
			at->name[j] = '_';
	for (j = 0; j < a->ntools; j++)
		if (strcmp(a->tools[j].name, at->name) == 0) {
			char base[56];

			snprintf(base, sizeof(base), "%.50s", at->name);
			snprintf(at->name, sizeof(at->name), "%s_%d", base,
			    (int)a->ntools % 100);
			break;
		}
}

/*
 * The servers of the mcp_server parameter into a->servers: "" or absent
 * is none, text starting with "{" the JSON form, anything else one URL.
 * Returns 0, or -1 with the node failed.
 */
static int
mcp_servers(struct agent *a)
{
	struct node_ctx		*c = a->c;
	const json_t		*v = aparam(c, "mcp_server"), *sv;
	json_t			*j = NULL, *list;
	const char		*k, *url;
	char			*text = NULL, *s, err[ENGINE_ERRMAX];
	size_t			 n;
	int			 rc = -1;
	int			 max = c->run->e->conf->mcp_max_sessions;

	if (v == NULL || json_is_null(v))	/* junjiem's MCP SSE agent */
		v = aparam(c, "mcp_servers_config");
	if (v == NULL || json_is_null(v))
		return 0;
	if (json_is_object(v))
		j = json_incref((json_t *)v);
	else if (json_is_string(v)) {
		if (node_render(c, json_string_value(v), TPL_TEXT, &text) != 0)
			return -1;
		for (s = text; *s == ' ' || *s == '\t' || *s == '\n' ||
		    *s == '\r'; s++)
			;
		n = strlen(s);
		while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' ||
		    s[n - 1] == '\n' || s[n - 1] == '\r'))
			s[--n] = '\0';
		if (*s == '\0') {
			free(text);
			return 0;
		}
		if (*s == '{' && (j = json_loads(s, 0, NULL)) == NULL) {
			free(text);
			return node_fail(c, "mcp_server: neither a URL nor a "
			    "JSON object of servers");
		}
		if (j == NULL)
			j = json_pack("{s:{s:s}}", "mcp_server", "url", s);
	} else
		return node_fail(c, "mcp_server: a URL or a JSON object of "
		    "servers");
	/* {"mcpServers": {...}}, as clients' configuration files write it */
	list = json_is_object(json_object_get(j, "mcpServers")) ?
	    json_object_get(j, "mcpServers") : j;
	if (list == NULL || (int)json_object_size(list) > max) {
		node_fail(c, "mcp_server: more than %d MCP servers "
		    "(mcp.max_sessions)", max);
		goto out;
	}
	if ((a->servers = calloc(json_object_size(list) + 1,
	    sizeof(*a->servers))) == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	json_object_foreach(list, k, sv) {
		struct mcp_server *ms = &a->servers[a->nservers];

		url = json_is_string(sv) ? json_string_value(sv) :
		    json_string_value(json_object_get(sv, "url"));
		if (url == NULL) {
			node_fail(c, "mcp_server: server '%s' has no url", k);
			goto out;
		}
		if (mcp_server_for_url(c->run->e, url, json_object_get(sv,
		    "headers"), err, ms) != 0) {
			node_fail(c, "mcp_server '%s': %s", k, err);
			goto out;
		}
		if (!ms->trusted) {
			/* the app's own timeouts, for a server it names */
			if (json_is_number(json_object_get(sv, "timeout")))
				ms->timeout = (int)json_number_value(
				    json_object_get(sv, "timeout"));
			if (json_is_number(json_object_get(sv,
			    "sse_read_timeout")))
				ms->read_timeout = (int)json_number_value(
				    json_object_get(sv, "sse_read_timeout"));
		}
		a->nservers++;
	}
	rc = 0;
out:
	json_decref(j);
	free(text);
	return rc;
}

/* Every tool of the mcp_server servers, after the configured ones. */
static int
setup_mcp_tools(struct agent *a)
{
	struct node_ctx		*c = a->c;
	struct agent_tool	*at;
	json_t			*defs = NULL, *d;
	const char		*name;
	char			 err[ENGINE_ERRMAX], *mask = NULL;
	size_t			 i, k;

	for (k = 0; k < a->nservers; k++) {
		if (mcp_list_tools(c->run->e, run_mcp(c->run), &a->servers[k],
		    err, &defs) != 0) {
			mcp_url_mask(a->servers[k].url, &mask);
			node_fail(c, "MCP server %s: %s", mask ? mask : "?",
			    err);
			free(mask);
			return -1;
		}
		json_array_foreach(defs, i, d) {
			if (a->ntools == AGENT_MAX_TOOLS) {
				json_decref(defs);
				return node_fail(c, "more than %d tools",
				    AGENT_MAX_TOOLS);
			}
			name = json_string_value(json_object_get(d, "name"));
			at = &a->tools[a->ntools];
			memset(at, 0, sizeof(*at));
			name_tool(a, at, name);
			at->server = k + 1;
			at->mcp_name = strdup(name);
			at->description = strdup(json_string_value(
			    json_object_get(d, "description")) &&
			    *json_string_value(json_object_get(d,
			    "description")) ? json_string_value(
			    json_object_get(d, "description")) : name);
			at->schema = json_incref(json_object_get(d,
			    "parameters"));
			at->fixed = json_object();
			if (at->mcp_name == NULL || at->description == NULL ||
			    at->fixed == NULL) {
				json_decref(defs);
				return node_fail(c, "out of memory");
			}
			a->ltools[a->ntools].name = at->name;
			a->ltools[a->ntools].description = at->description;
			a->ltools[a->ntools].parameters = at->schema;
			a->ntools++;
		}
		json_decref(defs);
		defs = NULL;
	}
	return 0;
}

static int
setup_tools(struct agent *a)
{
	struct node_ctx		*c = a->c;
	const json_t		*list = aparam(c, "tools"), *t;
	const char		*prov, *tool;
	char			 err[ENGINE_ERRMAX];
	size_t			 i;

	json_array_foreach(list, i, t) {
		struct agent_tool *at;

		if (json_is_false(json_object_get(t, "enabled")))
			continue;
		if (a->ntools == AGENT_MAX_TOOLS)
			return node_fail(c, "more than %d tools",
			    AGENT_MAX_TOOLS);
		prov = json_string_value(json_object_get(t, "provider_name"));
		tool = json_string_value(json_object_get(t, "tool_name"));
		at = &a->tools[a->ntools];
		memset(at, 0, sizeof(*at));
		at->cfg = t;
		err[0] = '\0';
		/* a local dataset (an agent-chat app's dataset_configs) */
		if (record_field_is(t, "type", "dataset-retrieval")) {
			char dname[65];

			if (kb_tool_describe(c->run->e, t, dname,
			    &at->description, &at->schema) != 0)
				return node_fail(c, "dataset %s is not a "
				    "dataset of this server", json_string_value(
				    json_object_get(t, "dataset_id")));
			name_tool(a, at, dname);
			a->ltools[a->ntools].name = at->name;
			a->ltools[a->ntools].description = at->description;
			a->ltools[a->ntools].parameters = at->schema;
			a->ntools++;
			continue;
		}
		if (prov == NULL || tool == NULL || tool_configured(c->run->e,
		    t, c->node->data, run_mcp(c->run), err, &at->description,
		    &at->schema, &at->fixed) != 0)
			return node_fail(c, "tool '%s/%s' is not available in "
			    "flowcgi%s%s", prov ? prov : "?", tool ? tool : "?",
			    err[0] ? ": " : "", err[0] ? err : "");
		name_tool(a, at, tool);
		a->ltools[a->ntools].name = at->name;
		a->ltools[a->ntools].description = at->description;
		a->ltools[a->ntools].parameters = at->schema;
		a->ntools++;
	}
	return 0;
}

/*
 * The status of a tool's step in the agent log: "error" when the result is
 * a failure the model was told of (tool_run_configured's "tool error: ...",
 * or no such tool), else "success".
 */
static const char *
step_status(const char *res)
{
	return res == NULL || strncmp(res, "tool error: ", 12) == 0 ||
	    strcmp(res, "there is no tool of that name") == 0 ? "error" :
	    "success";
}

/*
 * The files tool call made: kept in the node's outputs.files and, in a
 * chat app, as the answer's message files (their ids in a->call_ids for
 * the call's agent_log). A file that cannot be kept is logged and left.
 */
static void
tool_files(struct agent *a, const json_t *files)
{
	const json_t	*f;
	char		 err[ENGINE_ERRMAX] = "", id[37];
	size_t		 i;

	json_array_foreach(files, i, f) {
		if (json_array_append(a->files, (json_t *)f) != 0) {
			a->nomem = 1;
			return;
		}
		if (run_message_file(a->c->run, f, err, id) < 0)
			log_warn("agent %s: a tool's file was not kept: %s",
			    a->c->node->id, err);
		else if (id[0] != '\0' && (json_array_append_new(a->call_ids,
		    json_string(id)) != 0 || (a->th.files != NULL &&
		    json_array_append_new(a->th.files, json_string(id)) != 0)))
			a->nomem = 1;
	}
}

/* The message file ids of the last call (new reference), emptying them. */
static json_t *
take_ids(struct agent *a)
{
	json_t *ids = a->call_ids;

	if ((a->call_ids = json_array()) == NULL) {
		a->nomem = 1;
		a->call_ids = ids;
		return json_array();
	}
	return ids;
}

/* Runs tool call (name, JSON arguments); the result text in *out. */
static int
run_tool(struct agent *a, const char *name, const char *args, char **out)
{
	json_t			*files = NULL;
	struct agent_tool	*at = NULL;
	struct tool_result	 res;
	json_t			*params;
	char			 err[ENGINE_ERRMAX] = "";
	size_t			 i;
	int			 rc;

	for (i = 0; i < a->ntools; i++)
		if (strcmp(a->tools[i].name, name) == 0)
			at = &a->tools[i];
	if (at == NULL) {
		*out = strdup("there is no tool of that name");
		return 0;
	}
	if (record_field_is(at->cfg, "type", "dataset-retrieval"))
		return kb_tool_run(a->c->run->e, at->cfg, args, out) == 0 ? 0 :
		    node_fail(a->c, "out of memory");
	if (at->server == 0) {
		if (tool_run_configured(a->c->run->e, at->cfg, at->fixed, args,
		    a->c->node->data, run_mcp(a->c->run), out, &files) != 0)
			return node_fail(a->c, "out of memory");
		tool_files(a, files);
		json_decref(files);
		return 0;
	}
	params = json_loads(args && *args ? args : "{}", 0, NULL);
	if (!json_is_object(params)) {
		json_decref(params);
		params = json_object();
	}
	if (params == NULL || (at->fixed != NULL &&
	    json_object_update(params, at->fixed) != 0)) {
		json_decref(params);
		return node_fail(a->c, "out of memory");
	}
	memset(&res, 0, sizeof(res));
	rc = mcp_call_tool(a->c->run->e, run_mcp(a->c->run),
	    &a->servers[at->server - 1], at->mcp_name, params, err, &res);
	json_decref(params);
	if (rc != 0) {
		/* the model sees the failure and may try otherwise */
		size_t n = strlen(err) + 32;

		*out = malloc(n);
		if (*out != NULL)
			snprintf(*out, n, "tool error: %s", err);
		tool_result_release(&res);
		return 0;
	}
	if (res.text.len > 0 || res.json == NULL)
		*out = strdup(res.text.p ? res.text.p : "");
	else
		tool_json_dumps(res.json, 0, out);
	tool_files(a, res.files);
	tool_result_release(&res);
	return *out != NULL ? 0 : node_fail(a->c, "out of memory");
}

/* ====== An agent-chat app's thoughts ====== */

/* Python's json.dumps of o ("" when it is empty), as Dify stores it. */
static char *
py_json(const json_t *o)
{
	char *s = NULL;

	if (json_object_size(o) == 0)
		return strdup("");
	if (tpl_value_text(o, TPL_TEXT, &s) != 0)
		return NULL;
	return s;
}

static void
thought_release(struct thought *t)
{
	dbuf_free(&t->text);
	dbuf_free(&t->tool);
	json_decref(t->input);
	json_decref(t->obs);
	json_decref(t->labels);
	json_decref(t->files);
	memset(t, 0, sizeof(*t));
}

/* The next iteration's thought (base_agent_runner's create_agent_thought:
 * empty, at the next position). */
static void
thought_start(struct agent *a)
{
	struct run *r = a->c->run;

	thought_release(&a->th);
	engine_uuid(a->th.id);
	pthread_mutex_lock(&r->mu);
	a->th.position = ++r->thoughts;
	pthread_mutex_unlock(&r->mu);
	a->th.input = json_object();
	a->th.obs = json_object();
	a->th.labels = json_object();
	a->th.files = json_array();
	if (a->th.input == NULL || a->th.obs == NULL ||
	    a->th.labels == NULL || a->th.files == NULL)
		a->nomem = 1;
}

/* The thought's fields as Dify sends them (new reference, or NULL). */
static json_t *
thought_fields(struct agent *a)
{
	struct thought	*t = &a->th;
	char		*in = py_json(t->input), *obs = py_json(t->obs);
	json_t		*j = NULL;

	if (in != NULL && obs != NULL)
		j = json_pack("{s:s,s:i,s:s,s:s,s:s,s:O,s:s,s:O}", "id", t->id,
		    "position", t->position, "thought", dbuf_str(&t->text),
		    "observation", obs, "tool", dbuf_str(&t->tool),
		    "tool_labels", t->labels, "tool_input", in,
		    "message_files", t->files);
	free(in);
	free(obs);
	if (j == NULL || t->text.err || t->tool.err) {
		json_decref(j);
		a->nomem = 1;
		return NULL;
	}
	return j;
}

/* An agent_thought event of the thought as it is now. */
static void
thought_emit(struct agent *a)
{
	a->th.sent = 1;
	run_emit_top(a->c->run, "agent_thought", thought_fields(a));
}

/* The thought, as it ended, into the message's agent_thoughts (GET
 * /v1/messages: fields/message_fields.py agent_thought_fields). */
static void
thought_log(struct agent *a)
{
	struct run	*r = a->c->run;
	json_t		*j = thought_fields(a);

	if (j == NULL || json_object_del(j, "message_files") != 0 ||
	    json_object_set(j, "files", a->th.files) != 0 ||
	    json_object_set_new(j, "chain_id", json_null()) != 0 ||
	    json_object_set_new(j, "message_id",
	    json_string(r->message_id)) != 0 ||
	    json_object_set_new(j, "created_at",
	    json_integer(run_now_ms() / 1000)) != 0) {
		json_decref(j);
		a->nomem = 1;
		return;
	}
	pthread_mutex_lock(&r->mu);
	if (r->thought_log == NULL)
		r->thought_log = json_array();
	if (json_array_append_new(r->thought_log, j) != 0)
		atomic_store(&r->nomem, 1);
	pthread_mutex_unlock(&r->mu);
}

/* A tool the thought calls with input (a JSON value; taken). */
static void
thought_call(struct agent *a, const char *name, json_t *input)
{
	struct thought *t = &a->th;

	if (t->tool.len > 0)
		dbuf_addc(&t->tool, ';');
	dbuf_addstr(&t->tool, name);
	/* save_agent_thought: ToolManager's label, else the name itself */
	if (json_object_set_new(t->input, name, input ? input :
	    json_object()) != 0 || json_object_set_new(t->labels, name,
	    json_pack("{s:s,s:s}", "en_US", name, "zh_Hans", name)) != 0)
		a->nomem = 1;
}

/* The thought's text: n bytes at s (function calling: the response). */
static void
thought_set(struct agent *a, const char *s, size_t n)
{
	dbuf_reset(&a->th.text);
	dbuf_add(&a->th.text, s ? s : "", s ? n : 0);
}

/* The same stripped, or Dify's words for none (ReAct); s is not the
 * thought's own text. */
static void
thought_text(struct agent *a, const char *s, size_t n, const char *none)
{
	while (n > 0 && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')) {
		s++;
		n--;
	}
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\n' ||
	    s[n - 1] == '\r' || s[n - 1] == '\t'))
		n--;
	dbuf_reset(&a->th.text);
	if (n == 0 && none != NULL)
		dbuf_addstr(&a->th.text, none);
	else
		dbuf_add(&a->th.text, s, n);
}

/* ====== ReAct ====== */

static char *
react_prompt(struct agent *a, const char *instruction)
{
	struct dbuf	 sb = { 0 };
	char		*schema;
	size_t		 i;

	dbuf_addstr(&sb, "Respond to the human as helpfully and accurately as "
	    "possible.\n\n");
	dbuf_addstr(&sb, instruction ? instruction : "");
	dbuf_addstr(&sb, "\n\nYou have access to the following tools:\n\n");
	for (i = 0; i < a->ntools; i++) {
		schema = json_dumps(a->tools[i].schema, JSON_COMPACT);
		dbuf_addstr(&sb, a->tools[i].name);
		dbuf_addstr(&sb, ": ");
		dbuf_addstr(&sb, a->tools[i].description);
		dbuf_addstr(&sb, ", args: ");
		dbuf_addstr(&sb, schema ? schema : "{}");
		dbuf_addstr(&sb, "\n");
		free(schema);
	}
	dbuf_addstr(&sb, "\nUse a json blob to specify a tool by providing an "
	    "action key (tool name) and an action_input key (tool input).\n"
	    "Valid \"action\" values: \"Final Answer\" or ");
	for (i = 0; i < a->ntools; i++) {
		dbuf_addstr(&sb, i ? ", " : "");
		dbuf_addstr(&sb, a->tools[i].name);
	}
	dbuf_addstr(&sb, "\n\nProvide only ONE action per $JSON_BLOB, as "
	    "shown:\n\n```\n{\"action\": $TOOL_NAME, \"action_input\": "
	    "$ACTION_INPUT}\n```\n\nFollow this format:\n\nQuestion: input "
	    "question to answer\nThought: consider previous and subsequent "
	    "steps\nAction:\n```\n$JSON_BLOB\n```\nObservation: action "
	    "result\n... (repeat Thought/Action/Observation N times)\n"
	    "Thought: I know what to respond\nAction:\n```\n{\"action\": "
	    "\"Final Answer\", \"action_input\": \"Final response to human\"}"
	    "\n```\n\nBegin! Reminder to ALWAYS respond with a valid json "
	    "blob of a single action. Use tools if necessary. Respond "
	    "directly if appropriate. Format is Action:```$JSON_BLOB```then "
	    "Observation:.\n");
	return dbuf_take(&sb, NULL);
}

/* The {"action", "action_input"} blob in a ReAct answer, or NULL. */
static json_t *
react_action(const char *text)
{
	const char	*p = text, *open;
	json_t		*j;
	json_error_t	 e;

	while ((open = strchr(p, '{')) != NULL) {
		j = json_loads(open, JSON_DISABLE_EOF_CHECK, &e);
		if (j != NULL && json_is_string(json_object_get(j, "action")))
			return j;
		json_decref(j);
		p = open + 1;
	}
	return NULL;
}

/* ====== Streaming ====== */

struct agent_stream {
	struct agent		*a;
	struct stream_ctx	 sc;	/* the stop check */
	int			 react;
	size_t			 got;	/* text bytes that came */
	struct react_view	 rv;
};

/* The llm_request on_delta of the agent's model calls. */
static int
agent_on_delta(void *arg, enum llm_delta kind, const char *text, size_t len)
{
	struct agent_stream	*s = arg;
	struct agent		*a = s->a;
	struct dbuf		 vis = { 0 };

	if (llm_stream_stopped(&s->sc))
		return 1;
	/* fc_agent_runner: the thought goes out with the first chunk */
	if (a->app && !a->th.sent)
		thought_emit(a);
	if (kind != LLM_DELTA_TEXT || len == 0)
		return 0;
	s->got += len;
	if (!s->react) {
		if (dbuf_add(&a->text, text, len) != DBUF_OK)
			a->nomem = 1;
		if (a->out)
			run_stream_text(a->c->run, a->c->node->id, "text", text,
			    len);
		return 0;
	}
	if (!a->app)
		return 0;
	/* cot_agent_runner: what is not the action goes out (and is the
	 * thought), not as the answer: the final answer is that */
	react_view(&s->rv, text, len, &vis);
	if (vis.err)
		a->nomem = 1;
	else if (vis.len > 0) {
		dbuf_add(&a->th.text, vis.p, vis.len);
		run_emit_top(a->c->run, "message", json_pack("{s:s%}",
		    "answer", vis.p, vis.len));
	}
	dbuf_free(&vis);
	return 0;
}

/* ====== The loop ====== */

/*
 * One function-calling iteration's calls (rs's), run: the assistant's
 * message, then each call's agent_log, result and tool message; in an
 * agent-chat app the thought with the calls, then with their results.
 * Returns 0, or -1 with the node failed.
 */
static int
fc_calls(struct agent *a, struct llm_response *rs)
{
	struct node_ctx		*c = a->c;
	struct llm_tool_call	*calls;
	char			*res_text;
	size_t			 k;

	calls = calloc(rs->ntool_calls, sizeof(*calls));
	if (calls == NULL || a->nmsgs + rs->ntool_calls + 1 >=
	    AGENT_MAX_MESSAGES) {
		free(calls);
		return node_fail(c, "the agent's conversation is too long");
	}
	for (k = 0; k < rs->ntool_calls; k++) {
		calls[k].id = (char *)keep(a, rs->tool_calls[k].id,
		    strlen(rs->tool_calls[k].id));
		calls[k].name = (char *)keep(a, rs->tool_calls[k].name,
		    strlen(rs->tool_calls[k].name));
		calls[k].arguments = (char *)keep(a, rs->tool_calls[k].arguments,
		    strlen(rs->tool_calls[k].arguments));
		if (a->app)
			thought_call(a, calls[k].name, json_loads(
			    calls[k].arguments, JSON_DECODE_ANY, NULL));
	}
	a->calls[a->nmsgs] = calls;
	push(a, LLM_ASSISTANT, keep(a, rs->text, rs->text_len));
	a->msgs[a->nmsgs - 1].tool_calls = calls;
	a->msgs[a->nmsgs - 1].ntool_calls = rs->ntool_calls;
	if (a->app) {
		thought_set(a, rs->text, rs->text_len);
		thought_emit(a);
	}
	for (k = 0; k < rs->ntool_calls; k++) {
		agent_log(a, calls[k].name, "start", json_pack("{s:s,s:s}",
		    "tool_name", calls[k].name, "tool_input",
		    calls[k].arguments));
		if (run_tool(a, calls[k].name, calls[k].arguments, &res_text)
		    != 0)
			return -1;
		agent_log(a, calls[k].name, step_status(res_text), json_pack(
		    "{s:s,s:s,s:s,s:o}", "tool_name", calls[k].name,
		    "tool_input", calls[k].arguments, "output", res_text,
		    "files", take_ids(a)));
		if (a->app && json_object_set_new(a->th.obs, calls[k].name,
		    json_string(res_text)) != 0)
			a->nomem = 1;
		push(a, LLM_TOOL, keep(a, res_text, strlen(res_text)));
		a->msgs[a->nmsgs - 1].tool_call_id = calls[k].id;
		a->msgs[a->nmsgs - 1].name = calls[k].name;
		free(res_text);
	}
	if (a->app) {
		thought_emit(a);
		thought_log(a);
	}
	return 0;
}

/*
 * A ReAct iteration's action an (not the final answer) with input in,
 * run: its agent_log, the model's text and the observation as messages;
 * in an agent-chat app the thought with the action, then with its
 * result.
 */
static void
react_call(struct agent *a, const struct llm_response *rs, const char *an,
    const json_t *in)
{
	char		*args = json_is_string(in) ? strdup(json_string_value(
			    in)) : json_dumps(in ? in : json_object(),
			    JSON_COMPACT);
	char		*res_text = NULL;
	struct dbuf	 sb = { 0 };

	if (a->app)
		thought_emit(a);
	agent_log(a, an, "start", json_pack("{s:s,s:s}", "tool_name", an,
	    "tool_input", args ? args : ""));
	run_tool(a, an, args, &res_text);
	agent_log(a, an, step_status(res_text), json_pack("{s:s,s:s,s:s,s:o}",
	    "tool_name", an, "tool_input", args ? args : "", "output",
	    res_text ? res_text : "", "files", take_ids(a)));
	if (a->app) {
		if (json_object_set_new(a->th.obs, an, json_string(res_text ?
		    res_text : "")) != 0)
			a->nomem = 1;
		thought_emit(a);
		thought_log(a);
	}
	push(a, LLM_ASSISTANT, keep(a, rs->text, rs->text_len));
	dbuf_addstr(&sb, "Observation: ");
	dbuf_addstr(&sb, res_text ? res_text : "");
	push(a, LLM_USER, keep(a, sb.p ? sb.p : "", sb.len));
	dbuf_free(&sb);
	free(args);
	free(res_text);
}

static int
agent_run(struct node_ctx *c)
{
	struct agent		 a;
	struct agent_stream	 st;
	struct llm_request	 rq;
	struct llm_response	 rs;
	const json_t		*model = aparam(c, "model"), *q, *mi;
	const char		*provider, *name, *strategy, *ins_t;
	char			*ins = NULL, *query = NULL, *sys;
	const char		*answer = NULL;
	size_t			 i;
	int			 iter, max_iter, react, rc = -1, err, shown = 0;
	json_t			*act = NULL, *h;
	struct span		*node_sp = span_current(), *iter_sp = NULL;

	memset(&a, 0, sizeof(a));
	a.c = c;
	a.keep = json_array();
	a.logs = json_array();
	a.files = json_array();
	a.call_ids = json_array();
	/* an agent-chat app's graph (legacy.c): Dify's agent runner */
	a.app = c->run->legacy != NULL;
	a.out = llm_streams_field(c, "text");
	provider = json_string_value(json_object_get(model, "provider"));
	name = json_string_value(json_object_get(model, "model"));
	if (provider == NULL || name == NULL) {
		node_fail(c, "the agent has no model (agent_parameters.model)");
		goto out;
	}
	strategy = node_str(c->node, "agent_strategy_name");
	if (strategy != NULL && strcmp(strategy, "function_calling") != 0 &&
	    strcmp(strategy, "ReAct") != 0) {
		node_fail(c, "agent strategy '%s' (%s) is not available in "
		    "flowcgi; function_calling and ReAct are", strategy,
		    node_str(c->node, "agent_strategy_provider_name") ?
		    node_str(c->node, "agent_strategy_provider_name") : "?");
		goto out;
	}
	react = strategy != NULL && strcmp(strategy, "ReAct") == 0;
	if (setup_tools(&a) != 0 || mcp_servers(&a) != 0 ||
	    setup_mcp_tools(&a) != 0)
		goto out;
	mi = aparam(c, "maximum_iterations");
	max_iter = json_is_integer(mi) ? (int)json_integer_value(mi) :
	    json_is_string(mi) ? (int)strtol(json_string_value(mi), NULL, 10) :
	    3;
	if (max_iter <= 0 || max_iter > 99)
		max_iter = max_iter <= 0 ? 3 : 99;
	ins_t = json_string_value(aparam(c, "instruction"));
	if (node_render(c, ins_t ? ins_t : "", TPL_TEXT, &ins) != 0)
		goto out;
	q = aparam(c, "query");
	if (json_is_array(q)) {
		json_t *v = node_resolve(c, q);

		if (v != NULL)
			tpl_value_text(v, TPL_TEXT, &query);
		json_decref(v);
	} else if (node_render(c, json_string_value(q) ? json_string_value(q) :
	    "{{#sys.query#}}", TPL_TEXT, &query) != 0)
		goto out;
	if (json_object_set_new(c->inputs, "query", json_string(query ? query :
	    "")) != 0 || json_object_set_new(c->inputs, "instruction",
	    json_string(ins)) != 0) {
		node_fail(c, "out of memory");
		goto out;
	}
	sys = react ? react_prompt(&a, ins) : NULL;
	if (push(&a, LLM_SYSTEM, keep(&a, sys ? sys : ins, strlen(sys ? sys :
	    ins))) != 0) {
		free(sys);
		goto out;
	}
	free(sys);
	if (json_is_object(json_object_get(c->node->data, "memory")))
		json_array_foreach(c->run->history, i, h)
			if (push(&a, LLM_USER, json_string_value(json_object_get(
			    h, "query"))) != 0 || push(&a, LLM_ASSISTANT,
			    json_string_value(json_object_get(h, "answer"))) !=
			    0)
				goto out;
	if (push(&a, LLM_USER, keep(&a, query ? query : "", query ?
	    strlen(query) : 0)) != 0)
		goto out;
	for (iter = 0; iter < max_iter; iter++) {
		iter_sp = agent_iteration_next(iter_sp, node_sp, iter);
		if (run_stop_requested(c->run)) {
			atomic_store(&c->run->stopping, 1);
			node_fail(c, "stopped");
			goto out;
		}
		if (a.nomem) {	/* a message lost its text, or a log */
			node_fail(c, "out of memory");
			goto out;
		}
		if (a.app) {
			thought_start(&a);
			/* cot_agent_runner: the thought before the call */
			if (react)
				thought_emit(&a);
		}
		memset(&rq, 0, sizeof(rq));
		memset(&rs, 0, sizeof(rs));
		memset(&st, 0, sizeof(st));
		st.a = &a;
		st.sc.c = c;
		st.react = react;
		rq.model = name;
		rq.messages = a.msgs;
		rq.nmessages = a.nmsgs;
		rq.params = json_object_get(model, "completion_params");
		rq.stream = 1;
		rq.on_delta = agent_on_delta;
		rq.arg = &st;
		if (!react && a.ntools > 0) {
			rq.tools = a.ltools;
			rq.ntools = a.ntools;
		}
		if ((err = llm_chat(c->run->e, provider, &rq, c->err, &rs))
		    != 0) {
			/* a stop mid-answer: the thought as far as it got */
			if (err == ENGINE_ESTOPPED && a.app)
				thought_log(&a);
			llm_response_release(&rs);
			c->error_type = "AgentNodeError";
			goto out;
		}
		if (a.app && !a.th.sent)	/* no chunk came */
			thought_emit(&a);
		/* a server that ignored "stream": its answer, whole */
		if (st.got == 0 && rs.text_len > 0)
			agent_on_delta(&st, LLM_DELTA_TEXT, rs.text,
			    rs.text_len);
		a.tokens += rs.usage.total_tokens;
		run_usage_add(c->run, rs.usage.prompt_tokens,
		    rs.usage.completion_tokens, rs.usage.total_tokens);
		agent_log(&a, "ROUND", "success", json_pack("{s:i,s:s}",
		    "round", iter + 1, "thought", rs.text ? rs.text : ""));
		if (!react && rs.ntool_calls > 0) {
			rc = fc_calls(&a, &rs);
			llm_response_release(&rs);
			if (rc != 0)
				goto out;
			rc = -1;
			continue;
		}
		if (!react) {
			/* every call's text, as it streamed */
			if (a.app) {
				thought_set(&a, rs.text, rs.text_len);
				thought_emit(&a);
				thought_log(&a);
			}
			answer = dbuf_str(&a.text);
			shown = a.out;
			llm_response_release(&rs);
			break;
		}
		act = react_action(rs.text);
		if (a.app) {
			char *t = strndup(dbuf_str(&a.th.text), a.th.text.len);

			/* cot_agent_runner: the thought, or words for none */
			thought_text(&a, t ? t : "", t ? strlen(t) : 0,
			    "I am thinking about how to help you");
			free(t);
		}
		if (act != NULL) {
			const char *an = json_string_value(json_object_get(act,
			    "action"));
			json_t *in = json_object_get(act, "action_input");

			if (a.app)
				thought_call(&a, an, in != NULL ?
				    json_incref(in) : json_object());
			if (strcmp(an, "Final Answer") != 0) {
				react_call(&a, &rs, an, in);
				json_decref(act);
				act = NULL;
				llm_response_release(&rs);
				continue;
			}
			answer = keep(&a, json_is_string(in) ?
			    json_string_value(in) : "", json_is_string(in) ?
			    json_string_length(in) : 0);
			/* the last save_agent_thought adds the answer */
			if (a.app)
				dbuf_addstr(&a.th.text, answer);
		} else
			answer = keep(&a, rs.text, rs.text_len);
		if (a.app)
			thought_log(&a);
		llm_response_release(&rs);
		break;
	}
	if (answer == NULL) {
		node_fail(c, "the agent did not answer within %d iterations "
		    "(maximum_iterations)", max_iter);
		goto out;
	}
	/*
	 * ReAct's answer goes out once known (the node's strategy sends its
	 * final answer as one text; an app's runner as the last
	 * agent_message); an app's answer that came as plain text went out
	 * as its thought, and is the message's answer now.
	 */
	if (react && a.out && (act != NULL || !a.app)) {
		run_stream_text(c->run, c->node->id, "text", answer,
		    strlen(answer));
		shown = 1;
	} else if (react && a.out) {
		run_answer_add(c->run, answer, strlen(answer));
		shown = 1;
	}
	if (shown) {
		char key[192];

		snprintf(key, sizeof(key), "%s.text", c->node->id);
		pthread_mutex_lock(&c->run->mu);
		if (json_object_set_new(c->run->streamed, key, json_true()) != 0)
			a.nomem = 1;
		pthread_mutex_unlock(&c->run->mu);
	}
	if (a.nomem || json_object_set_new(c->outputs, "text",
	    json_string(answer)) != 0 || json_object_set_new(c->outputs,
	    "files", json_incref(a.files)) != 0 || json_object_set_new(c->outputs,
	    "json", json_array()) != 0) {
		node_fail(c, "out of memory");
		goto out;
	}
	c->process_data = json_pack("{s:O}", "agent_log", a.logs);
	c->metadata = json_pack("{s:I}", "total_tokens", (json_int_t)a.tokens);
	rc = 0;
out:
	json_decref(act);
	agent_iteration_end(iter_sp, node_sp);
	for (i = 0; i < a.ntools; i++) {
		json_decref(a.tools[i].schema);
		json_decref(a.tools[i].fixed);
		free(a.tools[i].description);
		free(a.tools[i].mcp_name);
	}
	for (i = 0; i < a.nservers; i++)
		mcp_server_release(&a.servers[i]);
	free(a.servers);
	for (i = 0; i < AGENT_MAX_MESSAGES; i++)
		free(a.calls[i]);
	free(ins);
	free(query);
	thought_release(&a.th);
	dbuf_free(&a.text);
	json_decref(a.keep);
	json_decref(a.logs);
	json_decref(a.files);
	json_decref(a.call_ids);
	return rc;
}

const struct node_type node_agent = { "agent", agent_run, 0 };
