/*
 * mcp_plugins.c — two Dify plugins that are MCP clients, served over
 * flowcgi's own (mcp.c):
 *
 * junjiem/mcp_sse (provider mcp_sse): mcp_sse_list_tools and
 * mcp_sse_call_tool over the servers of `servers_config`, JSON of
 * {"name": {url, headers, timeout, sse_read_timeout}} (optionally under
 * "mcpServers"). The config is the provider's credential (Settings >
 * Tools; the admin's, so its servers are trusted as a registered MCP
 * server is), else a servers_config parameter of the node (app content:
 * its URLs meet the SSRF guard unless one is exactly a registered
 * server's). The list answers "MCP Server tools list: \n" and the
 * Python repr of [{name, description, parameters}] of every server's
 * tools; the call goes to the first server that lists tool_name and
 * answers "Tool execution result: " and the Python repr of the result's
 * content, as the plugin does.
 *
 * arrenxxxxx/mcp_config_during_use (provider mcp_config): mcp_list_tools
 * and mcp_call_tool with the server in the node's parameters (server_url,
 * headers as JSON text, timeout, sse_read_timeout); app content, so the
 * SSRF guard applies unless the URL is exactly a registered server's.
 * The list answers the server's tools as JSON text ("[]" when none), the
 * call the result's content as JSON text.
 *
 * Both take tool_name and arguments (JSON text of an object; an object is
 * taken as it is). A missing or malformed parameter fails the tool, as
 * the plugins raise; a server that cannot be reached or a tool that fails
 * is a text message saying so, as the plugins answer. Sessions are the
 * run's (mcp_pool) when called within a run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tools/tools.h"

#define MCP_PLUGIN_MAX_TIMEOUT	86400	/* seconds, as mcp.timeout's bound */

/* ====== Shared ====== */

/* The run's MCP sessions, or NULL outside a run. */
static struct mcp_pool *
plugin_pool(const struct tool_call *call)
{
	const struct tool_run *r;

	if (call->mcp != NULL)
		return call->mcp;
	return (r = tool_run_current()) != NULL ? r->mcp(r->run) : NULL;
}

/* A timeout of a config or parameter: seconds in 1..max, else 0. */
static int
timeout_of(const json_t *v)
{
	double d;

	if (json_is_string(v))
		d = strtod(json_string_value(v), NULL);
	else if (json_is_number(v))
		d = json_number_value(v);
	else
		return 0;
	if (!(d >= 1))
		return 0;
	return d > MCP_PLUGIN_MAX_TIMEOUT ? MCP_PLUGIN_MAX_TIMEOUT : (int)d;
}

/*
 * A JSON text parameter (or a value given as JSON already): *out a new
 * reference. 1 when absent or blank, 0 when parsed, -1 when not JSON
 * (err says where, never what: the text may hold a secret).
 */
static int
json_param(const json_t *params, const char *name, char *err, json_t **out)
{
	const json_t	*v = json_object_get(params, name);
	const char	*s;
	json_error_t	 je;

	*out = NULL;
	if (v == NULL || json_is_null(v))
		return 1;
	if (!json_is_string(v)) {
		*out = json_incref((json_t *)v);
		return 0;
	}
	for (s = json_string_value(v); *s == ' ' || *s == '\t' || *s == '\n' ||
	    *s == '\r'; s++)
		;
	if (*s == '\0')
		return 1;
	if ((*out = json_loads(s, JSON_DECODE_ANY, &je)) == NULL) {
		snprintf(err, ENGINE_ERRMAX, "%s must be a valid JSON string: "
		    "not JSON at line %d, column %d", name, je.line, je.column);
		return -1;
	}
	return 0;
}

/* A failure no retry mends: the plugins' ValueError. */
static int
final_error(struct tool_result *out, char *err, const char *msg)
{
	if (msg != NULL)
		snprintf(err, ENGINE_ERRMAX, "%s", msg);
	out->final = 1;
	return ENGINE_EINVAL;
}

/* Appends prefix and the text of what (err, a message). */
static int
text_message(struct tool_result *out, const char *prefix, const char *what)
{
	int rc;

	if ((rc = tool_result_text(out, prefix, strlen(prefix))) == 0)
		rc = tool_result_text(out, what, strlen(what));
	return rc;
}

/* Appends prefix and v as Python's repr (py) or json.dumps. */
static int
value_message(struct tool_result *out, const char *prefix, const json_t *v,
    int py)
{
	char	*s = NULL;
	int	 rc;

	if ((rc = py ? tpl_py_repr(v, &s) : tool_json_dumps(v, 0, &s)) == 0)
		rc = text_message(out, prefix, s);
	free(s);
	return rc;
}

/* The tool's arguments: an object; absent is {} when optional. */
static int
arguments_of(const json_t *params, int required, char *err,
    struct tool_result *out, json_t **args)
{
	int r = json_param(params, "arguments", err, args);

	if (r < 0) {
		snprintf(err, ENGINE_ERRMAX, "Arguments must be a valid JSON "
		    "string");
		return final_error(out, err, NULL);
	}
	if (r == 1 && required)
		return final_error(out, err, "Please fill in the arguments");
	if (r == 1 && (*args = json_object()) == NULL)
		return ENGINE_ENOMEM;
	if (!json_is_object(*args)) {
		json_decref(*args);
		*args = NULL;
		return final_error(out, err, "Arguments must be a JSON object "
		    "(a python dict[str, Any])");
	}
	return 0;
}

/* The MCP content of a tools/call result (borrowed), [] when none. */
static const json_t *
content_of(const json_t *result, json_t *empty)
{
	const json_t *c = json_object_get(result, "content");

	return json_is_array(c) ? c : empty;
}

/* ====== junjiem/mcp_sse ====== */

/* The servers of a servers_config: name -> server, in order. */
struct sse_servers {
	size_t			 n;
	struct mcp_server	*s;
};

static void
sse_servers_release(struct sse_servers *ss)
{
	size_t i;

	for (i = 0; i < ss->n; i++)
		mcp_server_release(&ss->s[i]);
	free(ss->s);
	memset(ss, 0, sizeof(*ss));
}

/*
 * The servers of config (an object). trusted: the admin's credential,
 * whose servers are taken as they are; else app content's, each through
 * mcp_server_for_url.
 */
static int
sse_servers_of(struct engine *e, const json_t *config, int trusted,
    char *err, struct sse_servers *ss)
{
	const json_t	*one, *hv;
	json_t		*headers = NULL;
	const char	*name, *url, *hk;
	struct mcp_server *s;
	size_t		 max = (size_t)e->conf->mcp_max_sessions;
	int		 rc = 0;

	memset(ss, 0, sizeof(*ss));
	if (json_is_object(json_object_get(config, "mcpServers")))
		config = json_object_get(config, "mcpServers");
	if (!json_is_object(config) || json_object_size(config) == 0)
		return engine_invalid(err, "servers_config must be a JSON "
		    "object of servers: {\"name\": {\"url\": ...}}");
	if (json_object_size(config) > max) {
		snprintf(err, ENGINE_ERRMAX, "servers_config names %zu servers, "
		    "more than %zu (mcp.max_sessions)",
		    json_object_size(config), max);
		return ENGINE_ELIMIT;
	}
	if ((ss->s = calloc(json_object_size(config), sizeof(*ss->s))) ==
	    NULL)
		return ENGINE_ENOMEM;
	json_object_foreach((json_t *)config, name, one) {
		url = json_string_value(json_object_get(one, "url"));
		if (url == NULL || *url == '\0') {
			rc = engine_invalid(err, "servers_config: server "
			    "'%.60s' has no url", name);
			goto out;
		}
		if ((headers = json_object()) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		json_object_foreach((json_t *)json_object_get(one, "headers"),
		    hk, hv) {
			if (!json_is_string(hv)) {
				rc = engine_invalid(err, "servers_config: the "
				    "headers of server '%.60s' must be "
				    "strings", name);
				goto out;
			}
			if (json_object_set(headers, hk, (json_t *)hv) != 0) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
		}
		s = &ss->s[ss->n];
		if (trusted) {
			if (strncmp(url, "http://", 7) != 0 && strncmp(url,
			    "https://", 8) != 0) {
				rc = engine_invalid(err, "servers_config: the "
				    "url of server '%.60s' is not http(s)",
				    name);
				goto out;
			}
			if ((s->url = strdup(url)) == NULL) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
			s->headers = headers;
			headers = NULL;
			s->trusted = 1;
		} else if ((rc = mcp_server_for_url(e, url, headers, err,
		    s)) != 0)
			goto out;
		ss->n++;
		json_decref(headers);
		headers = NULL;
		if (!s->trusted || trusted) {
			/* a registered server keeps its own timeouts */
			s->timeout = timeout_of(json_object_get(one,
			    "timeout"));
			s->read_timeout = timeout_of(json_object_get(one,
			    "sse_read_timeout"));
		}
	}
out:
	json_decref(headers);
	if (rc != 0)
		sse_servers_release(ss);
	return rc;
}

/* The servers a call of mcp_sse names: the credential, else the node's. */
static int
sse_servers_call(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out, struct sse_servers *ss)
{
	json_t	*config = NULL;
	int	 r, trusted = 1, rc;

	memset(ss, 0, sizeof(*ss));
	r = json_param(call->credentials, "servers_config", err, &config);
	if (r == 1) {
		trusted = 0;
		r = json_param(call->params, "servers_config", err, &config);
	}
	if (r == 1)
		return final_error(out, err, "Please fill in the "
		    "servers_config");
	if (r < 0)
		return final_error(out, err, NULL);
	if ((rc = sse_servers_of(e, config, trusted, err, ss)) == ENGINE_EINVAL)
		out->final = 1;
	json_decref(config);
	return rc;
}

static const struct tool_param sse_call_params[] = {
	{ "tool_name", "string", 1, "Name of the tool to execute." },
	{ "arguments", "string", 1, "Tool arguments (JSON string in the "
	    "python dict[str, Any] format)." },
	{ NULL, NULL, 0, NULL },
};

static const struct tool_def sse_defs[] = {
	{ "mcp_sse_list_tools", "MCP Server tools list.", NULL },
	{ "mcp_sse_call_tool", "Call MCP Server tool.", sse_call_params },
	{ NULL, NULL, NULL },
};

static int
sse_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	(void)e;
	(void)call;
	(void)err;
	*out = tool_defs_json(sse_defs);
	return *out ? 0 : ENGINE_ENOMEM;
}

/* mcp_sse_list_tools: every server's tools, for a prompt. */
static int
sse_list_tools(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	struct sse_servers	 ss;
	struct mcp_pool		*pool = plugin_pool(call);
	json_t			*all = NULL, *tools = NULL, *t;
	char			 lerr[ENGINE_ERRMAX] = "";
	size_t			 i, j;
	int			 rc;

	if ((rc = sse_servers_call(e, call, err, out, &ss)) != 0)
		return rc;
	if ((all = json_array()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	for (i = 0; i < ss.n; i++) {
		if ((rc = mcp_tools(e, pool, &ss.s[i], lerr, &tools)) != 0) {
			if (rc == ENGINE_ENOMEM)
				goto out;
			/* the plugin answers the first failure as text */
			rc = text_message(out, "Error listing MCP Server tools: ",
			    lerr);
			goto out;
		}
		json_array_foreach(tools, j, t)
			if (json_array_append_new(all, json_pack("{s:O?,s:O?,"
			    "s:O?}", "name", json_object_get(t, "name"),
			    "description", json_object_get(t, "description"),
			    "parameters", json_object_get(t, "inputSchema"))) !=
			    0) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
		json_decref(tools);
		tools = NULL;
	}
	rc = value_message(out, "MCP Server tools list: \n", all, 1);
out:
	json_decref(tools);
	json_decref(all);
	sse_servers_release(&ss);
	return rc;
}

/* 1 when MCP tools list tools has one called name. */
static int
has_tool(const json_t *tools, const char *name)
{
	const json_t	*t;
	const char	*n;
	size_t		 i;

	json_array_foreach(tools, i, t)
		if ((n = json_string_value(json_object_get(t, "name"))) !=
		    NULL && strcmp(n, name) == 0)
			return 1;
	return 0;
}

/* mcp_sse_call_tool: the first server that lists tool_name runs it. */
static int
sse_call_tool(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	struct sse_servers	 ss;
	struct mcp_pool		*pool = plugin_pool(call);
	json_t			*args = NULL, *tools = NULL, *res = NULL;
	json_t			*empty = NULL;
	const char		*name;
	char			 lerr[ENGINE_ERRMAX] = "", *buf = NULL;
	size_t			 i;
	int			 rc, found = 0;

	memset(&ss, 0, sizeof(ss));
	name = tool_param_str(call->params, "tool_name", &buf);
	if (name == NULL || *name == '\0') {
		rc = final_error(out, err, "Please fill in the tool_name");
		goto out;
	}
	if ((rc = arguments_of(call->params, 1, err, out, &args)) != 0 ||
	    (rc = sse_servers_call(e, call, err, out, &ss)) != 0)
		goto out;
	for (i = 0; i < ss.n && !found; i++) {
		/* a server that cannot list its tools is passed over */
		if (mcp_tools(e, pool, &ss.s[i], lerr, &tools) != 0)
			continue;
		found = has_tool(tools, name);
		json_decref(tools);
		tools = NULL;
		if (!found)
			continue;
		if ((rc = mcp_call_raw(e, pool, &ss.s[i], name, args, lerr,
		    &res)) != 0) {
			rc = rc == ENGINE_ENOMEM ? rc : text_message(out,
			    "Error executing tool: ", lerr);
			goto out;
		}
		if ((empty = json_array()) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		rc = value_message(out, "Tool execution result: ",
		    content_of(res, empty), 1);
		goto out;
	}
	snprintf(lerr, sizeof(lerr), "no MCP server of servers_config has a "
	    "tool named '%.100s'", name);
	rc = text_message(out, "Error executing tool: ", lerr);
out:
	free(buf);
	json_decref(args);
	json_decref(res);
	json_decref(empty);
	sse_servers_release(&ss);
	return rc;
}

static int
sse_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	if (call->tool != NULL && strcmp(call->tool, "mcp_sse_list_tools") ==
	    0)
		return sse_list_tools(e, call, err, out);
	if (call->tool != NULL && strcmp(call->tool, "mcp_sse_call_tool") ==
	    0)
		return sse_call_tool(e, call, err, out);
	engine_invalid(err, "tool 'mcp_sse/%s' is not available in flowcgi",
	    call->tool ? call->tool : "");
	return ENGINE_ENOTFOUND;
}

const struct tool_provider tool_provider_mcp_sse = {
	"mcp_sse", sse_list, sse_invoke, 1,
};

/* ====== arrenxxxxx/mcp_config_during_use ====== */

static const struct tool_param cfg_list_params[] = {
	{ "server_url", "string", 1, "The URL of the MCP Server with SSE "
	    "endpoint." },
	{ "headers", "string", 0, "HTTP headers in JSON format (e.g. "
	    "{\"Authorization\":\"Bearer token\"})." },
	{ "timeout", "number", 0, "HTTP request timeout in seconds." },
	{ "sse_read_timeout", "number", 0, "SSE read timeout in seconds "
	    "(time to wait for SSE events)." },
	{ NULL, NULL, 0, NULL },
};

static const struct tool_param cfg_call_params[] = {
	{ "server_url", "string", 1, "The URL of the MCP Server with SSE "
	    "endpoint." },
	{ "headers", "string", 0, "HTTP headers in JSON format (e.g. "
	    "{\"Authorization\":\"Bearer token\"})." },
	{ "timeout", "number", 0, "HTTP request timeout in seconds." },
	{ "sse_read_timeout", "number", 0, "SSE read timeout in seconds "
	    "(time to wait for SSE events)." },
	{ "tool_name", "string", 1, "Name of the tool to execute." },
	{ "arguments", "string", 0, "Tool arguments (JSON string in the "
	    "python dict[str, Any] format)." },
	{ NULL, NULL, 0, NULL },
};

static const struct tool_def cfg_defs[] = {
	{ "mcp_list_tools", "Fetch the list of tools from an MCP Server.",
	    cfg_list_params },
	{ "mcp_call_tool", "Call a tool on an MCP Server.", cfg_call_params },
	{ NULL, NULL, NULL },
};

static int
cfg_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	(void)e;
	(void)call;
	(void)err;
	*out = tool_defs_json(cfg_defs);
	return *out ? 0 : ENGINE_ENOMEM;
}

/* The server the node's parameters name (app content: guarded). */
static int
cfg_server(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out, struct mcp_server *s)
{
	json_t		*headers = NULL;
	const json_t	*hv;
	const char	*url, *hk;
	char		*buf = NULL;
	int		 r, rc;

	memset(s, 0, sizeof(*s));
	url = tool_param_str(call->params, "server_url", &buf);
	if (url == NULL || *url == '\0') {
		rc = final_error(out, err, "Please fill in the server_url");
		goto out;
	}
	if ((r = json_param(call->params, "headers", err, &headers)) < 0) {
		snprintf(err, ENGINE_ERRMAX, "Headers must be a valid JSON "
		    "string");
		rc = final_error(out, err, NULL);
		goto out;
	}
	if (r == 0 && !json_is_object(headers)) {
		rc = final_error(out, err, "Headers must be a JSON object");
		goto out;
	}
	json_object_foreach(headers, hk, hv)
		if (!json_is_string(hv)) {
			rc = final_error(out, err, "Headers must be a JSON "
			    "object of strings");
			goto out;
		}
	if ((rc = mcp_server_for_url(e, url, headers, err, s)) != 0) {
		if (rc == ENGINE_EINVAL)
			out->final = 1;
		goto out;
	}
	if (!s->trusted) {
		/* a registered server keeps its own timeouts */
		s->timeout = timeout_of(json_object_get(call->params,
		    "timeout"));
		s->read_timeout = timeout_of(json_object_get(call->params,
		    "sse_read_timeout"));
	}
out:
	free(buf);
	json_decref(headers);
	return rc;
}

static int
cfg_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	struct mcp_server	 s;
	struct mcp_pool		*pool = plugin_pool(call);
	json_t			*args = NULL, *res = NULL, *empty = NULL;
	const char		*name;
	char			 lerr[ENGINE_ERRMAX] = "", *buf = NULL;
	int			 rc, list;

	memset(&s, 0, sizeof(s));
	list = call->tool != NULL && strcmp(call->tool, "mcp_list_tools") == 0;
	if (!list && (call->tool == NULL || strcmp(call->tool,
	    "mcp_call_tool") != 0)) {
		engine_invalid(err, "tool 'mcp_config/%s' is not available in "
		    "flowcgi", call->tool ? call->tool : "");
		return ENGINE_ENOTFOUND;
	}
	if ((rc = cfg_server(e, call, err, out, &s)) != 0)
		goto out;
	if (list) {
		if ((rc = mcp_tools(e, pool, &s, lerr, &res)) != 0) {
			rc = rc == ENGINE_ENOMEM ? rc : text_message(out,
			    "Error listing MCP Server tools: ", lerr);
			goto out;
		}
		rc = json_array_size(res) == 0 ? text_message(out, "", "[]") :
		    value_message(out, "", res, 0);
		goto out;
	}
	name = tool_param_str(call->params, "tool_name", &buf);
	if (name == NULL || *name == '\0') {
		rc = final_error(out, err, "Please fill in the tool_name");
		goto out;
	}
	if ((rc = arguments_of(call->params, 0, err, out, &args)) != 0)
		goto out;
	if ((rc = mcp_call_raw(e, pool, &s, name, args, lerr, &res)) != 0) {
		rc = rc == ENGINE_ENOMEM ? rc : text_message(out,
		    "Error calling MCP Server tool: ", lerr);
		goto out;
	}
	if ((empty = json_array()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	rc = value_message(out, "", content_of(res, empty), 0);
out:
	free(buf);
	json_decref(args);
	json_decref(res);
	json_decref(empty);
	mcp_server_release(&s);
	return rc;
}

const struct tool_provider tool_provider_mcp_config_during_use = {
	"mcp_config_during_use", cfg_list, cfg_invoke, 1,
};
