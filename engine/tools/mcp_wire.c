/*
 * mcp_wire.c — what flowcgi reads from an MCP server, apart from moving
 * bytes: JSON-RPC messages in an event stream (a Streamable HTTP answer
 * or the HTTP+SSE transport's stream), that transport's `endpoint` event,
 * the Mcp-Session-Id header, a tools/list answer, and a tools/call result
 * turned into Dify's tool messages. Nothing here touches the network, so
 * that the unit tests and the fuzz targets drive it directly.
 *
 * A tools/call result becomes tool messages as Dify's MCPTool does
 * (api/core/tools/mcp_tool/tool.py): each text part is a message of its
 * own (the tool node and the agent then join text messages with nothing
 * between them, as Dify's do); a text that looks like JSON ({...} or
 * [...] once trimmed) and parses is a json message (an object), one json
 * message per object (a list of objects), or the text of the list
 * (Python's str(), a list holding anything but objects); image and audio
 * parts and blob resources become files; text resources are text.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "engine/llm/llm.h"
#include "engine/tools/tools.h"

#define MCP_MAX_QUEUED	1024	/* messages a reader holds */
#define MCP_MAX_ENDPOINT 8192	/* bytes of an endpoint event */

/* ====== Event streams ====== */

/* 1 when j is a JSON-RPC response (an id and a result or an error). */
static int
is_response(const json_t *j)
{
	return json_object_get(j, "id") != NULL && (json_object_get(j,
	    "result") != NULL || json_object_get(j, "error") != NULL);
}

/* 1 when j is a request of the server's (a method and an id). */
static int
is_request(const json_t *j)
{
	return json_is_string(json_object_get(j, "method")) &&
	    json_object_get(j, "id") != NULL && !json_is_null(
	    json_object_get(j, "id"));
}

/* Keeps message j (stolen) when it is a response or a request. */
static int
keep_message(struct mcp_reader *r, json_t *j)
{
	int rc = 0;

	if (!is_response(j) && !is_request(j))
		goto out;	/* notifications: progress, logging */
	if (json_array_size(r->msgs) >= MCP_MAX_QUEUED) {
		rc = ENGINE_ELIMIT;
		goto out;
	}
	rc = json_array_append(r->msgs, j) == 0 ? 0 : ENGINE_ENOMEM;
out:
	json_decref(j);
	return rc;
}

static int
on_event(void *arg, const char *event, const char *data, size_t len)
{
	struct mcp_reader	*r = arg;
	json_t			*j, *x;
	size_t			 i;
	int			 rc = 0;

	if (strcmp(event, "endpoint") == 0) {
		if (len > MCP_MAX_ENDPOINT)
			return ENGINE_ELIMIT;
		free(r->endpoint);
		if ((r->endpoint = strndup(data, len)) == NULL)
			return ENGINE_ENOMEM;
		r->endpoints++;
		return 0;
	}
	if (event[0] != '\0' && strcmp(event, "message") != 0)
		return 0;
	if ((j = json_loadb(data, len, 0, NULL)) == NULL)
		return 0;	/* not JSON: nothing we could answer */
	if (json_is_array(j)) {
		/* a batch */
		json_array_foreach(j, i, x)
			if (json_is_object(x) && (rc = keep_message(r,
			    json_incref(x))) != 0)
				break;
		json_decref(j);
		return rc;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		return 0;
	}
	return keep_message(r, j);
}

int
mcp_reader_init(struct mcp_reader *r, size_t max)
{
	memset(r, 0, sizeof(*r));
	r->max = max;
	r->sse.on_event = on_event;
	r->sse.arg = r;
	if ((r->msgs = json_array()) == NULL)
		return ENGINE_ENOMEM;
	return 0;
}

int
mcp_reader_feed(struct mcp_reader *r, const char *p, size_t n)
{
	if (r->rc != 0)
		return r->rc;
	r->rc = llm_sse_feed(&r->sse, p, n);
	/* what one event may hold, whether it ended yet or not */
	if (r->rc == 0 && (r->sse.line.len > r->max ||
	    r->sse.data.len > r->max))
		r->rc = ENGINE_ELIMIT;
	return r->rc;
}

int
mcp_reader_finish(struct mcp_reader *r)
{
	int rc;

	rc = llm_sse_finish(&r->sse);
	if (r->rc == 0)
		r->rc = rc;
	return r->rc;
}

json_t *
mcp_reader_take(struct mcp_reader *r, json_int_t id)
{
	json_t	*j, *found = NULL;
	size_t	 i;

	json_array_foreach(r->msgs, i, j)
		if (is_response(j) && json_is_integer(json_object_get(j,
		    "id")) && json_integer_value(json_object_get(j, "id")) ==
		    id) {
			found = json_incref(j);
			json_array_remove(r->msgs, i);
			break;
		}
	return found;
}

json_t *
mcp_reader_take_request(struct mcp_reader *r)
{
	json_t	*j, *found = NULL;
	size_t	 i;

	json_array_foreach(r->msgs, i, j)
		if (is_request(j)) {
			found = json_incref(j);
			json_array_remove(r->msgs, i);
			break;
		}
	return found;
}

void
mcp_reader_release(struct mcp_reader *r)
{
	dbuf_free(&r->sse.line);
	dbuf_free(&r->sse.data);
	json_decref(r->msgs);
	free(r->endpoint);
	memset(r, 0, sizeof(*r));
}

json_t *
mcp_body_response(const char *body, size_t len, int sse, size_t max,
    json_int_t id)
{
	struct mcp_reader	 r;
	json_t			*j = NULL;

	if (!sse) {
		j = json_loadb(body, len, 0, NULL);
		if (json_is_array(j)) {
			/* a batch answer: ours in it */
			json_t	*x, *found = NULL;
			size_t	 i;

			json_array_foreach(j, i, x)
				if (is_response(x) && json_integer_value(
				    json_object_get(x, "id")) == id) {
					found = json_incref(x);
					break;
				}
			json_decref(j);
			return found;
		}
		if (!is_response(j) || json_integer_value(json_object_get(j,
		    "id")) != id) {
			json_decref(j);
			return NULL;
		}
		return j;
	}
	if (mcp_reader_init(&r, max) == 0 && mcp_reader_feed(&r, body,
	    len) == 0 && mcp_reader_finish(&r) == 0)
		j = mcp_reader_take(&r, id);
	mcp_reader_release(&r);
	return j;
}

/* ====== The HTTP+SSE endpoint, the session header ====== */

/* The lower-cased scheme, host and port of a parsed URL, for comparing. */
static int
origin_of(CURLU *u, char *buf, size_t bufsz)
{
	char	*scheme = NULL, *host = NULL, *port = NULL;
	int	 rc = -1;
	size_t	 i;

	if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) !=
	    CURLUE_OK)
		goto out;
	if ((size_t)snprintf(buf, bufsz, "%s://%s:%s", scheme, host, port) >=
	    bufsz)
		goto out;
	for (i = 0; buf[i] != '\0'; i++)
		buf[i] = (char)tolower((unsigned char)buf[i]);
	rc = 0;
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	return rc;
}

int
mcp_endpoint_url(const char *base, const char *data, char *err, char **out)
{
	CURLU	*u = NULL;
	char	*url = NULL, a[512], b[512];
	size_t	 i;
	int	 rc = ENGINE_EINVAL;

	*out = NULL;
	for (i = 0; data[i] != '\0'; i++)
		if ((unsigned char)data[i] < 0x20 || data[i] == 0x7f)
			break;
	if (data[0] == '\0' || data[i] != '\0' || i > MCP_MAX_ENDPOINT) {
		engine_invalid(err, "the MCP server announced no usable "
		    "endpoint");
		goto out;
	}
	if ((u = curl_url()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if (curl_url_set(u, CURLUPART_URL, base, 0) != CURLUE_OK ||
	    origin_of(u, a, sizeof(a)) != 0) {
		engine_invalid(err, "the MCP server URL does not parse");
		goto out;
	}
	/* relative to the stream's URL, as a browser's EventSource would */
	if (curl_url_set(u, CURLUPART_URL, data, 0) != CURLUE_OK ||
	    origin_of(u, b, sizeof(b)) != 0 || curl_url_get(u,
	    CURLUPART_URL, &url, 0) != CURLUE_OK) {
		engine_invalid(err, "the MCP server announced an endpoint "
		    "that does not parse");
		goto out;
	}
	/* another origin would carry the admin's headers elsewhere */
	if (strcmp(a, b) != 0) {
		engine_invalid(err, "the MCP server announced an endpoint on "
		    "another origin (%s, not %s)", b, a);
		goto out;
	}
	if ((*out = strdup(url)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	rc = 0;
out:
	curl_free(url);
	curl_url_cleanup(u);
	return rc;
}

int
mcp_session_header(const char *line, size_t n, char *buf, size_t bufsz)
{
	const char	*v;
	size_t		 k = sizeof("Mcp-Session-Id:") - 1, i;

	if (n <= k || strncasecmp(line, "Mcp-Session-Id:", k) != 0)
		return 0;
	for (v = line + k; v < line + n && (*v == ' ' || *v == '\t'); v++)
		;
	n -= (size_t)(v - line);
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t' ||
	    v[n - 1] == '\r' || v[n - 1] == '\n'))
		n--;
	/* visible ASCII only (the specification's rule) */
	if (n == 0 || n >= bufsz)
		return 0;
	for (i = 0; i < n; i++)
		if (v[i] < 0x21 || v[i] > 0x7e)
			return 0;
	memcpy(buf, v, n);
	buf[n] = '\0';
	return 1;
}

/* ====== Tools ====== */

json_t *
mcp_tools_of(const json_t *result)
{
	json_t	*arr, *t;
	size_t	 i;

	if ((arr = json_array()) == NULL)
		return NULL;
	json_array_foreach(json_object_get(result, "tools"), i, t) {
		if (!json_is_object(t) || !json_is_string(json_object_get(t,
		    "name")) || json_string_length(json_object_get(t,
		    "name")) == 0)
			continue;
		if (json_array_append(arr, t) != 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

json_t *
mcp_tools_describe(const json_t *tools)
{
	json_t		*arr, *t, *schema, *d;
	const char	*desc;
	size_t		 i;

	if ((arr = json_array()) == NULL)
		return NULL;
	json_array_foreach(tools, i, t) {
		schema = json_object_get(t, "inputSchema");
		desc = json_string_value(json_object_get(t, "description"));
		d = json_pack("{s:O,s:s,s:o}", "name", json_object_get(t,
		    "name"), "description", desc ? desc : "", "parameters",
		    json_is_object(schema) ? json_deep_copy(schema) :
		    json_pack("{s:s,s:{}}", "type", "object", "properties"));
		if (d == NULL || json_array_append_new(arr, d) != 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

/* A text part: json messages when it looks like JSON and parses. */
static int
text_part(const char *text, struct tool_result *out)
{
	const char	*s = text, *e;
	json_t		*j = NULL, *x;
	char		*repr = NULL;
	size_t		 i;
	int		 rc, all_objects = 1;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	if (e == s || (*s != '{' && *s != '[') || (e[-1] != '}' &&
	    e[-1] != ']') || (j = json_loadb(s, (size_t)(e - s),
	    JSON_DECODE_ANY, NULL)) == NULL)
		return tool_result_text(out, text, strlen(text));
	if (json_is_object(j)) {
		rc = tool_result_json(out, j);
		return rc;
	}
	/* a list (a JSON text starting with { or [ is one or the other) */
	json_array_foreach(j, i, x)
		if (!json_is_object(x))
			all_objects = 0;
	rc = 0;
	if (!all_objects) {
		if ((rc = tpl_py_repr(j, &repr)) == 0)
			rc = tool_result_text(out, repr, strlen(repr));
		free(repr);
	} else
		json_array_foreach(j, i, x)
			if ((rc = tool_result_json(out, json_incref(x))) != 0)
				break;
	json_decref(j);
	return rc;
}

/* Base64 data of mime type into a file message. */
static int
blob_part(const char *data, const char *mime, struct tool_result *out)
{
	json_t	*f;
	char	*bytes = NULL;
	size_t	 len;
	int	 rc;

	if (file_b64_decode(data, strlen(data), &bytes, &len) != 0)
		return ENGINE_EINVAL;
	if ((f = file_from_bytes(NULL, mime ? mime :
	    "application/octet-stream", bytes, len)) == NULL)
		rc = ENGINE_ENOMEM;
	else
		rc = tool_result_file(out, f);
	free(bytes);
	return rc;
}

int
mcp_call_result(const json_t *result, const char *tool, char *err,
    struct tool_result *out)
{
	const json_t	*c, *res;
	const char	*type, *text, *data;
	size_t		 i;
	int		 rc = 0;

	if (json_is_true(json_object_get(result, "isError"))) {
		c = json_array_get(json_object_get(result, "content"), 0);
		text = json_string_value(json_object_get(c, "text"));
		return engine_invalid(err, "MCP tool %s failed: %s", tool,
		    text ? text : "");
	}
	json_array_foreach(json_object_get(result, "content"), i, c) {
		type = json_string_value(json_object_get(c, "type"));
		if (type == NULL)
			continue;
		if (strcmp(type, "text") == 0) {
			if ((text = json_string_value(json_object_get(c,
			    "text"))) != NULL)
				rc = text_part(text, out);
		} else if (strcmp(type, "image") == 0 ||
		    strcmp(type, "audio") == 0) {
			if ((data = json_string_value(json_object_get(c,
			    "data"))) != NULL)
				rc = blob_part(data, json_string_value(
				    json_object_get(c, "mimeType")), out);
		} else if (strcmp(type, "resource") == 0) {
			res = json_object_get(c, "resource");
			if ((text = json_string_value(json_object_get(res,
			    "text"))) != NULL)
				rc = tool_result_text(out, text, strlen(text));
			else if ((data = json_string_value(json_object_get(res,
			    "blob"))) != NULL)
				rc = blob_part(data, json_string_value(
				    json_object_get(res, "mimeType")), out);
		}
		/* resource_link and unknown types: Dify skips them too */
		if (rc != 0) {
			if (rc == ENGINE_EINVAL)
				engine_invalid(err, "MCP tool %s gave a part "
				    "that is not valid base64", tool);
			else if (rc == ENGINE_ELIMIT)
				engine_invalid(err, "MCP tool %s gave more "
				    "than %d bytes of text", tool,
				    TOOL_MAX_TEXT);
			return rc;
		}
	}
	/* only structured content (servers should send it as text too) */
	if (json_array_size(json_object_get(result, "content")) == 0 &&
	    json_is_object(json_object_get(result, "structuredContent")))
		return tool_result_json(out, json_deep_copy(json_object_get(
		    result, "structuredContent")));
	return 0;
}
