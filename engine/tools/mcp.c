/*
 * mcp.c — Dify's `mcp` provider type: tools of an MCP server over
 * Streamable HTTP (MCP 2025-03-26).
 *
 * Every list or call opens its own short session: POST `initialize`
 * (protocolVersion 2025-03-26, which servers may answer with 2024-11-05),
 * POST the `notifications/initialized` notification, then POST
 * `tools/list` or `tools/call`. Requests carry Accept: application/json,
 * text/event-stream; an answer may be a JSON body or an SSE stream whose
 * `data:` events hold JSON-RPC messages (the response with our id is
 * taken, notifications and requests around it are skipped). The
 * Mcp-Session-Id the server gives at initialize is sent on the later
 * requests when the outbound wrapper reports response headers
 * (OUTBOUND_ON_HEADER); servers that require a session need it.
 *
 * Where the server is: a stored provider of type mcp (server_url,
 * headers; engine_tool_provider_put) named by the node's provider_name or
 * provider_id, else the node's own server_url / mcp_server (a string, or
 * Dify's {type: constant, value} form) with optional headers. Requests go
 * through outbound_fetch with the SSRF guard.
 *
 * A tools/call result becomes Dify's tool messages (core/tools/mcp_tool):
 * text content that parses as a JSON object is a json message (a JSON
 * list: one per object), other text is a text message; image and audio
 * content and blob resources become files; text resources text;
 * isError fails the tool with the text. The legacy HTTP+SSE transport
 * (GET /sse, then POSTs to the announced endpoint) is not supported.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "engine/nodes/files.h"
#include "engine/tools/tools.h"

#define MCP_PROTOCOL	"2025-03-26"
#define MCP_MAX_SESSION	256

/* One server and the session with it. */
struct mcp {
	struct engine	*e;
	const char	*url;
	const json_t	*headers;	/* {name: value} or NULL */
	char		 session[MCP_MAX_SESSION];
	int		 next_id;
};

/* ====== Transport ====== */

#ifdef OUTBOUND_ON_HEADER
static void
on_header(const char *line, size_t n, void *arg)
{
	struct mcp	*m = arg;
	const char	*v;
	size_t		 k = sizeof("Mcp-Session-Id:") - 1;

	if (n <= k || strncasecmp(line, "Mcp-Session-Id:", k) != 0)
		return;
	for (v = line + k; v < line + n && (*v == ' ' || *v == '\t'); v++)
		;
	n -= (size_t)(v - line);
	while (n > 0 && isspace((unsigned char)v[n - 1]))
		n--;
	if (n < sizeof(m->session))
		snprintf(m->session, sizeof(m->session), "%.*s", (int)n, v);
}
#endif

/* The JSON-RPC response with id in an SSE stream body. New reference. */
static json_t *
sse_find(const char *body, size_t len, json_int_t id)
{
	struct tpl_sb	 data = { 0 };
	const char	*p = body, *end = body + len, *nl;
	json_t		*msg, *found = NULL;
	size_t		 n;

	while (p <= end && found == NULL) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n = (size_t)((nl ? nl : end) - p);
		if (n > 0 && p[n - 1] == '\r')
			n--;
		if (n == 0) {
			/* an event ends */
			if (data.len > 0 && (msg = json_loadb(data.p, data.len,
			    0, NULL)) != NULL) {
				if (json_integer_value(json_object_get(msg,
				    "id")) == id && (json_object_get(msg,
				    "result") || json_object_get(msg,
				    "error")))
					found = msg;
				else
					json_decref(msg);
			}
			data.len = 0;
		} else if (n >= 5 && strncmp(p, "data:", 5) == 0) {
			const char *d = p + 5;
			size_t dn = n - 5;

			if (dn > 0 && *d == ' ') {
				d++;
				dn--;
			}
			if (data.len > 0)
				tpl_sb_add(&data, "\n", 1);
			tpl_sb_add(&data, d, dn);
		}
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	if (found == NULL && data.len > 0 && (msg = json_loadb(data.p,
	    data.len, 0, NULL)) != NULL) {
		if (json_integer_value(json_object_get(msg, "id")) == id)
			found = msg;
		else
			json_decref(msg);
	}
	tpl_sb_release(&data);
	return found;
}

/*
 * POSTs one JSON-RPC message. For a request (with_id), *result gets the
 * result member (new reference); a JSON-RPC error is ENGINE_EINVAL with
 * its message. A notification only needs a 2xx answer.
 */
static int
rpc(struct mcp *m, const char *method, json_t *params, int with_id,
    char *err, json_t **result)
{
	struct outbound_req	 req;
	struct outbound_resp	 resp;
	struct curl_slist	*hl = NULL, *h;
	struct tpl_sb		 line = { 0 };
	json_t			*msg = NULL, *res = NULL, *e;
	const char		*k;
	json_t			*v;
	char			*body = NULL;
	json_int_t		 id = 0;
	int			 rc = ENGINE_ENOMEM;

	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	if (result != NULL)
		*result = NULL;
	msg = json_pack("{s:s,s:s}", "jsonrpc", "2.0", "method", method);
	if (msg == NULL)
		goto out;
	if (with_id) {
		id = ++m->next_id;
		json_object_set_new(msg, "id", json_integer(id));
	}
	if (params != NULL)
		json_object_set(msg, "params", params);
	if ((body = json_dumps(msg, JSON_COMPACT)) == NULL)
		goto out;
	hl = curl_slist_append(NULL, "Content-Type: application/json");
	if (hl == NULL || (h = curl_slist_append(hl, "Accept: "
	    "application/json, text/event-stream")) == NULL)
		goto out;
	if (m->session[0] != '\0') {
		tpl_sb_str(&line, "Mcp-Session-Id: ");
		tpl_sb_str(&line, m->session);
		if (line.oom || curl_slist_append(hl, line.p) == NULL)
			goto out;
		line.len = 0;
	}
	if (strcmp(method, "initialize") != 0) {
		tpl_sb_str(&line, "MCP-Protocol-Version: " MCP_PROTOCOL);
		if (line.oom || curl_slist_append(hl, line.p) == NULL)
			goto out;
		line.len = 0;
	}
	json_object_foreach((json_t *)m->headers, k, v) {
		if (!json_is_string(v) || strpbrk(k, "\r\n:") != NULL ||
		    strpbrk(json_string_value(v), "\r\n") != NULL)
			continue;
		tpl_sb_str(&line, k);
		tpl_sb_str(&line, ": ");
		tpl_sb_str(&line, json_string_value(v));
		if (line.oom || curl_slist_append(hl, line.p) == NULL)
			goto out;
		line.len = 0;
	}
	req.method = "POST";
	req.url = m->url;
	req.headers = hl;
	req.body = body;
	req.body_len = strlen(body);
#ifdef OUTBOUND_ON_HEADER
	if (with_id && strcmp(method, "initialize") == 0) {
		req.on_header = on_header;
		req.header_arg = m;
	}
#endif
	if ((rc = outbound_fetch(m->e, &req, err, &resp)) != 0)
		goto out;
	if (resp.status < 200 || resp.status > 299) {
		rc = engine_invalid(err, "MCP server answered %s with HTTP "
		    "status %ld", method, resp.status);
		rc = ENGINE_EFETCH;
		goto out;
	}
	if (!with_id) {
		rc = 0;
		goto out;
	}
	if (resp.content_type != NULL && strncasecmp(resp.content_type,
	    "text/event-stream", 17) == 0)
		res = sse_find(resp.body, resp.len, id);
	else
		res = json_loadb(resp.body, resp.len, 0, NULL);
	if (res == NULL) {
		rc = engine_invalid(err, "MCP server gave no answer to %s",
		    method);
		rc = ENGINE_EFETCH;
		goto out;
	}
	if ((e = json_object_get(res, "error")) != NULL) {
		rc = engine_invalid(err, "MCP error %lld on %s: %s",
		    (long long)json_integer_value(json_object_get(e, "code")),
		    method, json_string_value(json_object_get(e, "message")) ?
		    json_string_value(json_object_get(e, "message")) : "");
		goto out;
	}
	if (!json_is_object(json_object_get(res, "result"))) {
		rc = engine_invalid(err, "MCP answer to %s has no result",
		    method);
		goto out;
	}
	if (result != NULL)
		*result = json_incref(json_object_get(res, "result"));
	rc = 0;
out:
	outbound_resp_release(&resp);
	curl_slist_free_all(hl);
	tpl_sb_release(&line);
	json_decref(msg);
	json_decref(res);
	free(body);
	return rc;
}

static int
session_open(struct mcp *m, char *err)
{
	json_t	*params, *res = NULL;
	int	 rc;

	params = json_pack("{s:s,s:{},s:{s:s,s:s}}", "protocolVersion",
	    MCP_PROTOCOL, "capabilities", "clientInfo", "name", "flowcgi",
	    "version", FLOWCGI_VERSION);
	if (params == NULL)
		return ENGINE_ENOMEM;
	if ((rc = rpc(m, "initialize", params, 1, err, &res)) == 0)
		rc = rpc(m, "notifications/initialized", NULL, 0, err, NULL);
	json_decref(params);
	json_decref(res);
	return rc;
}

/* ====== Public calls (for agents too) ====== */

int
mcp_list_tools(struct engine *e, const char *url, const json_t *headers,
    char *err, json_t **out)
{
	struct mcp	 m;
	json_t		*res = NULL, *arr = NULL, *t, *schema;
	size_t		 i;
	int		 rc;

	*out = NULL;
	memset(&m, 0, sizeof(m));
	m.e = e;
	m.url = url;
	m.headers = headers;
	if ((rc = session_open(&m, err)) != 0 ||
	    (rc = rpc(&m, "tools/list", NULL, 1, err, &res)) != 0)
		goto out;
	if ((arr = json_array()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	json_array_foreach(json_object_get(res, "tools"), i, t) {
		if (!json_is_string(json_object_get(t, "name")))
			continue;
		schema = json_object_get(t, "inputSchema");
		json_array_append_new(arr, json_pack("{s:O,s:s,s:O}", "name",
		    json_object_get(t, "name"), "description",
		    json_string_value(json_object_get(t, "description")) ?
		    json_string_value(json_object_get(t, "description")) : "",
		    "parameters", schema ? schema : json_pack("{s:s,s:{}}",
		    "type", "object", "properties")));
	}
	*out = arr;
	arr = NULL;
out:
	json_decref(res);
	json_decref(arr);
	return rc;
}

/* One content item of a tools/call result into out. */
static int
content_item(const json_t *c, struct tool_result *out)
{
	const char	*type = json_string_value(json_object_get(c, "type"));
	const char	*text, *data, *mime;
	const json_t	*res;
	json_t		*j = NULL, *x, *f;
	char		*bytes = NULL;
	size_t		 i, len;
	int		 rc = 0;

	if (type == NULL)
		goto out;
	if (strcmp(type, "text") == 0) {
		text = json_string_value(json_object_get(c, "text"));
		if (text == NULL)
			goto out;
		j = json_loads(text, JSON_DECODE_ANY, NULL);
		if (json_is_object(j))
			rc = tool_result_json(out, json_incref(j));
		else if (json_is_array(j) && json_array_size(j) > 0) {
			json_array_foreach(j, i, x) {
				if (json_is_object(x))
					rc = tool_result_json(out,
					    json_incref(x));
				else {
					char *s = NULL;

					if ((rc = tool_json_dumps(x, 0,
					    &s)) == 0)
						rc = tool_result_text(out, s,
						    strlen(s));
					free(s);
				}
				if (rc != 0)
					break;
			}
		} else
			rc = tool_result_text(out, text, strlen(text));
		goto out;
	}
	res = strcmp(type, "resource") == 0 ? json_object_get(c, "resource") :
	    c;
	if ((text = json_string_value(json_object_get(res, "text"))) != NULL) {
		rc = tool_result_text(out, text, strlen(text));
		goto out;
	}
	data = json_string_value(json_object_get(res, strcmp(type,
	    "resource") == 0 ? "blob" : "data"));
	mime = json_string_value(json_object_get(res, "mimeType"));
	if (data == NULL)
		goto out;
	if (file_b64_decode(data, strlen(data), &bytes, &len) != 0) {
		rc = ENGINE_EINVAL;
		goto out;
	}
	if ((f = file_from_bytes(NULL, mime, bytes, len)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	rc = tool_result_file(out, f);
out:
	json_decref(j);
	free(bytes);
	return rc;
}

int
mcp_call_tool(struct engine *e, const char *url, const json_t *headers,
    const char *name, const json_t *args, char *err,
    struct tool_result *out)
{
	struct mcp	 m;
	json_t		*params = NULL, *res = NULL, *c;
	const char	*t;
	size_t		 i;
	int		 rc;

	memset(&m, 0, sizeof(m));
	m.e = e;
	m.url = url;
	m.headers = headers;
	params = args ? json_pack("{s:s,s:O}", "name", name, "arguments",
	    args) : json_pack("{s:s,s:{}}", "name", name, "arguments");
	if (params == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = session_open(&m, err)) != 0 ||
	    (rc = rpc(&m, "tools/call", params, 1, err, &res)) != 0)
		goto out;
	if (json_is_true(json_object_get(res, "isError"))) {
		c = json_array_get(json_object_get(res, "content"), 0);
		t = json_string_value(json_object_get(c, "text"));
		rc = engine_invalid(err, "MCP tool %s failed: %s", name,
		    t ? t : "");
		goto out;
	}
	json_array_foreach(json_object_get(res, "content"), i, c)
		if ((rc = content_item(c, out)) != 0)
			goto out;
	if (json_array_size(json_object_get(res, "content")) == 0 &&
	    json_is_object(json_object_get(res, "structuredContent")))
		rc = tool_result_json(out, json_deep_copy(json_object_get(res,
		    "structuredContent")));
out:
	json_decref(params);
	json_decref(res);
	return rc;
}

/* ====== The provider ====== */

/* The value of a node field: a string, or {type: constant, value}. */
static const char *
node_field(const json_t *node, const char *key)
{
	const json_t *v = json_object_get(node, key);

	if (json_is_object(v))
		v = json_object_get(v, "value");
	return json_string_value(v);
}

/* The server a call names: *rec holds what url and headers point into. */
static int
server_of(struct engine *e, const struct tool_call *call, char *err,
    json_t **rec, const char **url, const json_t **headers)
{
	int rc;

	*url = NULL;
	*headers = NULL;
	rc = tool_provider_record(e, call, "mcp", err, rec);
	if (rc == 0) {
		*url = json_string_value(json_object_get(*rec, "server_url"));
		*headers = json_object_get(*rec, "headers");
		return 0;
	}
	if (rc != ENGINE_ENOTFOUND)
		return rc;
	*url = node_field(call->node, "server_url");
	if (*url == NULL)
		*url = node_field(call->node, "mcp_server");
	if (*url == NULL)
		*url = node_field(json_object_get(call->node,
		    "tool_configurations"), "server_url");
	if (*url == NULL)
		return ENGINE_ENOTFOUND;
	*headers = json_object_get(call->node, "headers");
	if (!json_is_object(*headers))
		*headers = NULL;
	return 0;
}

static int
mcp_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	json_t		*rec = NULL;
	const json_t	*headers;
	const char	*url;
	int		 rc;

	if ((rc = server_of(e, call, err, &rec, &url, &headers)) == 0)
		rc = mcp_list_tools(e, url, headers, err, out);
	json_decref(rec);
	return rc;
}

static int
mcp_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	json_t		*rec = NULL;
	const json_t	*headers;
	const char	*url;
	int		 rc;

	if ((rc = server_of(e, call, err, &rec, &url, &headers)) == 0)
		rc = mcp_call_tool(e, url, headers, call->tool, call->params,
		    err, out);
	json_decref(rec);
	return rc;
}

const struct tool_provider tool_provider_mcp = {
	"mcp", mcp_list, mcp_invoke
};
