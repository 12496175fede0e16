/*
 * mcp.c — Dify's `mcp` tool provider type: the tools of an MCP server,
 * over Streamable HTTP (MCP 2025-03-26) or the older HTTP+SSE transport
 * (MCP 2024-11-05).
 *
 * Sessions. A run keeps one session per server (struct mcp_pool, made
 * when a node first needs one and closed when the run ends), so an agent
 * that lists a server's tools and calls them, or several tool nodes, go
 * over one initialized session, as Dify's McpSessionManager keeps one per
 * workflow run. Outside a run (the console's tool refresh), or past
 * mcp.max_sessions servers in one run, a session lasts one exchange.
 * Closing a Streamable HTTP session sends DELETE with its Mcp-Session-Id;
 * closing an HTTP+SSE session closes its event stream. One request at a
 * time goes over a session; a server's tools/list answer is read once per
 * session.
 *
 * Transports are chosen as Dify's MCPClient does, by the last segment of
 * the URL's path: "sse" is HTTP+SSE (GET the URL as an event stream, read
 * its `endpoint` event, POST JSON-RPC there, read the answers from the
 * stream); anything else is Streamable HTTP (POST to the URL; the answer
 * comes as JSON or as an event stream), falling back to HTTP+SSE when
 * the server refuses the initialize POST with 400, 404 or 405 and the
 * path does not end in "mcp". A Streamable HTTP session the server no
 * longer knows (404) is opened again once. Requests of the server's own
 * (ping) are answered: ping with an empty result, anything else as an
 * unknown method, since flowcgi offers no client capabilities.
 *
 * Where a server is, and whether it is trusted: see mcp_providers.c. A
 * server the admin registered is trusted like a model provider (it may be
 * on loopback); one named only in app content meets the SSRF guard.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "engine/tools/tools.h"

#define MCP_PROTOCOL	"2025-03-26"
#define MCP_MAX_SESSION	256
#define MCP_ESESSION	1	/* internal: the server forgot the session */

enum mcp_transport {
	MCP_T_UNKNOWN,
	MCP_T_STREAMABLE,
	MCP_T_SSE,
};

/* A session with one server. */
struct mcp_conn {
	struct mcp_conn		*next;
	char			*key;		/* url, trust and headers */
	char			*url;
	struct curl_slist	*hl;		/* the server's own headers */
	int			 trusted;
	int			 timeout;	/* seconds */
	int			 read_timeout;	/* seconds */
	int64_t			 max;		/* bytes of one message */
	pthread_mutex_t		 mu;		/* one request at a time */
	/* the session, under mu */
	int			 open;
	enum mcp_transport	 transport;
	char			 session[MCP_MAX_SESSION];
	char			 proto[32];	/* the version agreed */
	json_int_t		 next_id;
	long			 status;	/* of the last POST */
	json_t			*tools;		/* tools/list, once read */
	/* HTTP+SSE */
	struct outbound_stream	*stream;
	struct curl_slist	*shl;		/* the stream's headers */
	struct mcp_reader	 rd;
	char			*endpoint;
	json_int_t		 want;		/* the answer waited for */
	json_t			*got;
};

struct mcp_pool {
	pthread_mutex_t	 mu;
	struct mcp_conn	*conns;
	int		 n;
};

/* ====== Sessions ====== */

static void
conn_close(struct engine *e, struct mcp_conn *c);

/* The last segment of url's path ("sse", "mcp"), into buf. */
static void
last_segment(const char *url, char *buf, size_t bufsz)
{
	const char	*p, *end, *s;
	size_t		 n;

	buf[0] = '\0';
	if ((p = strstr(url, "://")) == NULL || (p = strchr(p + 3, '/')) ==
	    NULL)
		return;
	end = p + strcspn(p, "?#");
	while (end > p && end[-1] == '/')
		end--;
	for (s = end; s > p && s[-1] != '/'; s--)
		;
	n = (size_t)(end - s);
	if (n < bufsz) {
		memcpy(buf, s, n);
		buf[n] = '\0';
	}
}

/* "Name: value" lines of headers (an object of strings) onto *list. */
static int
headers_add(struct curl_slist **list, const json_t *headers)
{
	struct curl_slist	*h;
	struct dbuf		 line = { 0 };
	const char		*k;
	json_t			*v;
	int			 rc = 0;

	json_object_foreach((json_t *)headers, k, v) {
		if (!json_is_string(v) || *k == '\0' || strpbrk(k,
		    "\r\n: \t") != NULL || strpbrk(json_string_value(v),
		    "\r\n") != NULL)
			continue;
		line.len = 0;
		dbuf_addstr(&line, k);
		dbuf_addstr(&line, ": ");
		dbuf_addstr(&line, json_string_value(v));
		if (line.err || (h = curl_slist_append(*list, line.p)) ==
		    NULL) {
			rc = ENGINE_ENOMEM;
			break;
		}
		*list = h;
	}
	if (line.p != NULL)
		OPENSSL_cleanse(line.p, line.cap);
	dbuf_free(&line);
	return rc;
}

static void
slist_free(struct curl_slist *l)
{
	struct curl_slist *h;

	for (h = l; h != NULL; h = h->next)
		OPENSSL_cleanse(h->data, strlen(h->data));
	curl_slist_free_all(l);
}

/*
 * Errors name the URL; a registered server's may carry a key (its query)
 * and is not shown whole: err gets the masked form instead.
 */
static void
err_scrub(const struct mcp_conn *c, char *err)
{
	char	*p, *mask = NULL, buf[ENGINE_ERRMAX];
	size_t	 n = strlen(c->url);

	if (!c->trusted || n == 0 || (p = strstr(err, c->url)) == NULL ||
	    mcp_url_mask(c->url, &mask) != 0)
		return;
	snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(p - err), err, mask,
	    p + n);
	snprintf(err, ENGINE_ERRMAX, "%s", buf);
	free(mask);
}

/* What a session is with: the server's URL, its trust and headers. */
static char *
key_of(const struct mcp_server *s)
{
	struct dbuf	 sb = { 0 };
	char		*h;

	h = s->headers ? json_dumps(s->headers, JSON_COMPACT |
	    JSON_SORT_KEYS) : NULL;
	dbuf_addstr(&sb, s->trusted ? "1 " : "0 ");
	dbuf_addstr(&sb, s->url);
	dbuf_addstr(&sb, "\n");
	dbuf_addstr(&sb, h ? h : "{}");
	if (h != NULL) {
		OPENSSL_cleanse(h, strlen(h));
		free(h);
	}
	return dbuf_take(&sb, NULL);
}

static struct mcp_conn *
conn_new(struct engine *e, const struct mcp_server *s)
{
	struct mcp_conn	*c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	pthread_mutex_init(&c->mu, NULL);
	c->trusted = s->trusted;
	c->timeout = s->timeout > 0 ? s->timeout : e->conf->mcp_timeout;
	c->read_timeout = s->read_timeout > 0 ? s->read_timeout :
	    e->conf->mcp_sse_read_timeout;
	c->max = e->conf->http_max_response;
	if ((c->key = key_of(s)) == NULL || (c->url = strdup(s->url)) ==
	    NULL || (s->headers != NULL && headers_add(&c->hl,
	    s->headers) != 0)) {
		slist_free(c->hl);
		free(c->url);
		free(c->key);
		pthread_mutex_destroy(&c->mu);
		free(c);
		return NULL;
	}
	return c;
}

static void
conn_free(struct engine *e, struct mcp_conn *c)
{
	if (c == NULL)
		return;
	conn_close(e, c);
	slist_free(c->hl);
	OPENSSL_cleanse(c->key, strlen(c->key));
	free(c->key);
	free(c->url);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

struct mcp_pool *
mcp_pool_new(void)
{
	struct mcp_pool *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	pthread_mutex_init(&p->mu, NULL);
	return p;
}

void
mcp_pool_free(struct engine *e, struct mcp_pool *p)
{
	struct mcp_conn *c, *next;

	if (p == NULL)
		return;
	for (c = p->conns; c != NULL; c = next) {
		next = c->next;
		conn_free(e, c);
	}
	pthread_mutex_destroy(&p->mu);
	free(p);
}

/*
 * The session with server s: the pool's (*oneshot 0), or a new one for
 * this exchange only (*oneshot 1: conn_free it) when there is no pool or
 * it holds mcp.max_sessions already.
 */
static int
conn_get(struct engine *e, struct mcp_pool *p, const struct mcp_server *s,
    struct mcp_conn **out, int *oneshot)
{
	struct mcp_conn	*c = NULL;
	char		*key;

	*out = NULL;
	*oneshot = 1;
	if (p != NULL) {
		if ((key = key_of(s)) == NULL)
			return ENGINE_ENOMEM;
		pthread_mutex_lock(&p->mu);
		for (c = p->conns; c != NULL; c = c->next)
			if (strcmp(c->key, key) == 0)
				break;
		if (c == NULL && p->n < e->conf->mcp_max_sessions &&
		    (c = conn_new(e, s)) != NULL) {
			c->next = p->conns;
			p->conns = c;
			p->n++;
		}
		pthread_mutex_unlock(&p->mu);
		OPENSSL_cleanse(key, strlen(key));
		free(key);
		if (c != NULL) {
			*oneshot = 0;
			*out = c;
			return 0;
		}
	}
	if ((*out = conn_new(e, s)) == NULL)
		return ENGINE_ENOMEM;
	return 0;
}

/* ====== Messages ====== */

/*
 * A JSON-RPC message: a request (id > 0), notification or answer. NULL
 * when out of memory.
 */
static char *
message(const char *method, const json_t *params, json_int_t id,
    const json_t *answer_id, const json_t *result, const json_t *error)
{
	json_t	*m;
	char	*s = NULL;
	int	 bad = 0;

	m = json_pack("{s:s}", "jsonrpc", "2.0");
	if (m == NULL)
		return NULL;
	if (method != NULL)
		bad |= json_object_set_new(m, "method", json_string(method));
	if (id > 0)
		bad |= json_object_set_new(m, "id", json_integer(id));
	if (answer_id != NULL)
		bad |= json_object_set(m, "id", (json_t *)answer_id);
	if (params != NULL)
		bad |= json_object_set(m, "params", (json_t *)params);
	if (result != NULL)
		bad |= json_object_set(m, "result", (json_t *)result);
	if (error != NULL)
		bad |= json_object_set(m, "error", (json_t *)error);
	if (!bad)
		s = json_dumps(m, JSON_COMPACT);
	json_decref(m);
	return s;
}

/* The headers of a POST to the server, in *out (slist_free). */
static int
post_headers(struct mcp_conn *c, int with_session, struct curl_slist **out)
{
	struct curl_slist	*hl = NULL, *h;
	char			 line[MCP_MAX_SESSION + 64];
	int			 rc = ENGINE_ENOMEM;

	*out = NULL;
	if ((hl = curl_slist_append(NULL, "Content-Type: application/json"))
	    == NULL || (h = curl_slist_append(hl, "Accept: application/json, "
	    "text/event-stream")) == NULL)
		goto out;
	if (with_session && c->session[0] != '\0') {
		snprintf(line, sizeof(line), "Mcp-Session-Id: %s", c->session);
		if (curl_slist_append(hl, line) == NULL)
			goto out;
	}
	if (with_session && c->proto[0] != '\0') {
		snprintf(line, sizeof(line), "MCP-Protocol-Version: %s",
		    c->proto);
		if (curl_slist_append(hl, line) == NULL)
			goto out;
	}
	for (h = c->hl; h != NULL; h = h->next)
		if (curl_slist_append(hl, h->data) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	*out = hl;
	hl = NULL;
	rc = 0;
out:
	slist_free(hl);
	return rc;
}

static void
on_session_header(const char *line, size_t n, void *arg)
{
	struct mcp_conn *c = arg;

	mcp_session_header(line, n, c->session, sizeof(c->session));
}

/* POSTs body to url (the server, or its HTTP+SSE endpoint). */
static int
post(struct engine *e, struct mcp_conn *c, const char *url, const char *body,
    int capture_session, char *err, struct outbound_resp *resp)
{
	struct outbound_req	 req;
	struct curl_slist	*hl = NULL;
	int			 rc;

	memset(&req, 0, sizeof(req));
	if ((rc = post_headers(c, c->transport == MCP_T_STREAMABLE, &hl)) != 0)
		return rc;
	req.method = "POST";
	req.url = url;
	req.headers = hl;
	req.body = body;
	req.body_len = strlen(body);
	req.trusted = c->trusted;
	req.connect_timeout = c->timeout;
	/* a tool may take its time: Dify's sse_read_timeout */
	req.timeout = c->timeout > c->read_timeout ? c->timeout :
	    c->read_timeout;
	req.max_bytes = c->max;
	if (capture_session) {
		req.on_header = on_session_header;
		req.header_arg = c;
	}
	rc = outbound_fetch(e, &req, err, resp);
	slist_free(hl);
	return rc;
}

static int
answer_requests(struct engine *e, struct mcp_conn *c, struct mcp_reader *rd);

/* Streamable HTTP: one message POSTed, its answer (with_id) in *res. */
static int
rpc_streamable(struct engine *e, struct mcp_conn *c, const char *method,
    const char *body, json_int_t id, char *err, json_t **res)
{
	struct outbound_resp	 resp;
	struct mcp_reader	 rd;
	int			 init = strcmp(method, "initialize") == 0;
	int			 sse, rc;

	memset(&rd, 0, sizeof(rd));
	c->status = 0;
	if ((rc = post(e, c, c->url, body, init, err, &resp)) != 0)
		return rc;
	c->status = resp.status;
	if (resp.status == 404 && c->session[0] != '\0' && !init) {
		rc = MCP_ESESSION;
		goto out;
	}
	if (resp.status < 200 || resp.status > 299) {
		engine_invalid(err, "MCP server answered %s with HTTP status "
		    "%ld", method, resp.status);
		rc = ENGINE_EFETCH;
		goto out;
	}
	if (id <= 0)
		goto out;	/* a notification: accepted is all */
	sse = resp.content_type != NULL && strncasecmp(resp.content_type,
	    "text/event-stream", 17) == 0;
	if (!sse)
		*res = mcp_body_response(resp.body, resp.len, 0, (size_t)c->max,
		    id);
	else if ((rc = mcp_reader_init(&rd, (size_t)c->max)) != 0 ||
	    (rc = mcp_reader_feed(&rd, resp.body, resp.len)) != 0 ||
	    (rc = mcp_reader_finish(&rd)) != 0) {
		if (rc == ENGINE_ELIMIT)
			engine_invalid(err, "an event of the MCP server is "
			    "larger than %lld bytes (http.max_response)",
			    (long long)c->max);
		goto out;
	} else {
		*res = mcp_reader_take(&rd, id);
		rc = answer_requests(e, c, &rd);
	}
	if (*res == NULL && rc == 0) {
		engine_invalid(err, "MCP server gave no answer to %s", method);
		rc = ENGINE_EFETCH;
	}
out:
	mcp_reader_release(&rd);
	outbound_resp_release(&resp);
	return rc;
}

/* ====== HTTP+SSE ====== */

static int
stream_data(const char *p, size_t n, void *arg)
{
	struct mcp_conn *c = arg;

	return mcp_reader_feed(&c->rd, p, n) != 0;
}

static int
got_endpoint(void *arg)
{
	struct mcp_conn *c = arg;

	return c->rd.rc != 0 || c->rd.endpoint != NULL;
}

static int
got_answer(void *arg)
{
	struct mcp_conn *c = arg;

	if (c->got == NULL)
		c->got = mcp_reader_take(&c->rd, c->want);
	return c->rd.rc != 0 || c->got != NULL;
}

/* The stream's reader failed: why, in err. */
static int
reader_error(struct mcp_conn *c, char *err)
{
	if (c->rd.rc == ENGINE_ELIMIT)
		engine_invalid(err, "an event of the MCP server is larger "
		    "than %lld bytes (http.max_response)", (long long)c->max);
	else
		engine_invalid(err, "out of memory reading the MCP server's "
		    "stream");
	return c->rd.rc;
}

/* HTTP+SSE: GETs the event stream and reads its endpoint. */
static int
sse_connect(struct engine *e, struct mcp_conn *c, char *err)
{
	struct outbound_req	 req;
	struct curl_slist	*h;
	int			 rc;

	if ((c->shl = curl_slist_append(NULL, "Accept: text/event-stream")) ==
	    NULL)
		return ENGINE_ENOMEM;
	for (h = c->hl; h != NULL; h = h->next)
		if (curl_slist_append(c->shl, h->data) == NULL)
			return ENGINE_ENOMEM;
	if ((rc = mcp_reader_init(&c->rd, (size_t)c->max)) != 0)
		return rc;
	memset(&req, 0, sizeof(req));
	req.url = c->url;
	req.headers = c->shl;
	req.trusted = c->trusted;
	req.connect_timeout = c->timeout;
	req.timeout = c->timeout;
	req.max_bytes = INT64_MAX / 2;	/* each event is held to c->max */
	req.on_data = stream_data;
	req.arg = c;
	if ((rc = outbound_stream_open(e, &req, err, &c->stream)) != 0)
		return rc;
	if (outbound_stream_status(c->stream) != 200) {
		engine_invalid(err, "MCP server answered the event stream's "
		    "GET with HTTP status %ld",
		    outbound_stream_status(c->stream));
		return ENGINE_EFETCH;
	}
	rc = outbound_stream_wait(c->stream, c->timeout * 1000, got_endpoint,
	    c, err);
	if (c->rd.rc != 0)
		return reader_error(c, err);	/* what stopped the stream */
	if (rc != 0)
		return rc;
	return mcp_endpoint_url(c->url, c->rd.endpoint, err, &c->endpoint);
}

/* HTTP+SSE: one message POSTed to the endpoint, its answer from the
 * stream. */
static int
rpc_sse(struct engine *e, struct mcp_conn *c, const char *method,
    const char *body, json_int_t id, char *err, json_t **res)
{
	struct outbound_resp	 resp;
	int			 rc;

	if ((rc = post(e, c, c->endpoint, body, 0, err, &resp)) != 0)
		return rc;
	if (resp.status < 200 || resp.status > 299) {
		engine_invalid(err, "MCP server answered %s with HTTP status "
		    "%ld", method, resp.status);
		outbound_resp_release(&resp);
		return ENGINE_EFETCH;
	}
	outbound_resp_release(&resp);
	if (id <= 0)
		return 0;
	c->want = id;
	json_decref(c->got);
	c->got = NULL;
	rc = outbound_stream_wait(c->stream, c->read_timeout * 1000,
	    got_answer, c, err);
	if (c->rd.rc != 0)
		rc = reader_error(c, err);	/* what stopped the stream */
	if (rc == 0)
		rc = answer_requests(e, c, &c->rd);
	if (rc != 0)
		return rc;
	*res = c->got;
	c->got = NULL;
	return 0;
}

/* Answers the server's own requests that rd holds. */
static int
answer_requests(struct engine *e, struct mcp_conn *c, struct mcp_reader *rd)
{
	struct outbound_resp	 resp;
	json_t			*rq, *empty, *nf;
	char			*body, err[ENGINE_ERRMAX];
	const char		*m;
	int			 rc = 0;

	while (rc == 0 && (rq = mcp_reader_take_request(rd)) != NULL) {
		m = json_string_value(json_object_get(rq, "method"));
		empty = json_object();
		nf = json_pack("{s:i,s:s}", "code", -32601, "message",
		    "Method not found");
		body = strcmp(m, "ping") == 0 ? message(NULL, NULL, 0,
		    json_object_get(rq, "id"), empty, NULL) : message(NULL,
		    NULL, 0, json_object_get(rq, "id"), NULL, nf);
		if (body == NULL)
			rc = ENGINE_ENOMEM;
		/* best effort: the server's request is not ours to fail on */
		else if (post(e, c, c->transport == MCP_T_SSE ? c->endpoint :
		    c->url, body, 0, err, &resp) == 0)
			outbound_resp_release(&resp);
		free(body);
		json_decref(empty);
		json_decref(nf);
		json_decref(rq);
	}
	return rc;
}

/* ====== Requests ====== */

/*
 * One JSON-RPC message over c's transport: a request (with_id; its
 * result in *result, new reference) or a notification. A JSON-RPC error
 * is ENGINE_EINVAL with its message.
 */
static int
rpc(struct engine *e, struct mcp_conn *c, const char *method,
    const json_t *params, int with_id, char *err, json_t **result)
{
	json_t		*res = NULL, *er;
	char		*body;
	json_int_t	 id = with_id ? ++c->next_id : 0;
	int		 rc;

	if (result != NULL)
		*result = NULL;
	if ((body = message(method, params, id, NULL, NULL, NULL)) == NULL)
		return ENGINE_ENOMEM;
	if (c->transport == MCP_T_SSE)
		rc = rpc_sse(e, c, method, body, id, err, &res);
	else
		rc = rpc_streamable(e, c, method, body, id, err, &res);
	free(body);
	if (rc != 0 || !with_id)
		goto out;
	if ((er = json_object_get(res, "error")) != NULL) {
		rc = engine_invalid(err, "MCP error %lld on %s: %s",
		    (long long)json_integer_value(json_object_get(er, "code")),
		    method, json_string_value(json_object_get(er, "message")) ?
		    json_string_value(json_object_get(er, "message")) : "");
		goto out;
	}
	if (!json_is_object(json_object_get(res, "result"))) {
		rc = engine_invalid(err, "MCP answer to %s has no result",
		    method);
		goto out;
	}
	if (result != NULL)
		*result = json_incref(json_object_get(res, "result"));
out:
	json_decref(res);
	return rc;
}

/* initialize and notifications/initialized over c's transport. */
static int
handshake(struct engine *e, struct mcp_conn *c, char *err)
{
	json_t		*params, *res = NULL;
	const char	*v;
	size_t		 i;
	int		 rc;

	params = json_pack("{s:s,s:{},s:{s:s,s:s}}", "protocolVersion",
	    MCP_PROTOCOL, "capabilities", "clientInfo", "name", "flowcgi",
	    "version", FLOWCGI_VERSION);
	if (params == NULL)
		return ENGINE_ENOMEM;
	c->session[0] = '\0';
	c->proto[0] = '\0';
	rc = rpc(e, c, "initialize", params, 1, err, &res);
	json_decref(params);
	if (rc != 0)
		goto out;
	/* later requests carry the version the server chose */
	v = json_string_value(json_object_get(res, "protocolVersion"));
	for (i = 0; v != NULL && v[i] != '\0'; i++)
		if (!isalnum((unsigned char)v[i]) && v[i] != '-')
			break;
	if (v != NULL && v[i] == '\0' && i < sizeof(c->proto))
		memcpy(c->proto, v, i + 1);
	rc = rpc(e, c, "notifications/initialized", NULL, 0, err, NULL);
out:
	json_decref(res);
	return rc;
}

/* Ends c's session, if any: DELETE (Streamable HTTP) or the stream. */
static void
conn_close(struct engine *e, struct mcp_conn *c)
{
	struct outbound_req	 req;
	struct outbound_resp	 resp;
	struct curl_slist	*hl = NULL;
	char			 err[ENGINE_ERRMAX];

	if (c->transport == MCP_T_STREAMABLE && c->session[0] != '\0' &&
	    post_headers(c, 1, &hl) == 0) {
		memset(&req, 0, sizeof(req));
		req.method = "DELETE";
		req.url = c->url;
		req.headers = hl;
		req.trusted = c->trusted;
		req.connect_timeout = c->timeout;
		req.timeout = c->timeout;
		/* 405 means the server keeps sessions itself: fine too */
		if (outbound_fetch(e, &req, err, &resp) == 0)
			outbound_resp_release(&resp);
		else {
			err_scrub(c, err);
			log_info("mcp: closing a session: %s", err);
		}
	}
	slist_free(hl);
	outbound_stream_close(c->stream);
	c->stream = NULL;
	slist_free(c->shl);
	c->shl = NULL;
	mcp_reader_release(&c->rd);
	free(c->endpoint);
	c->endpoint = NULL;
	json_decref(c->got);
	c->got = NULL;
	json_decref(c->tools);
	c->tools = NULL;
	c->session[0] = '\0';
	c->proto[0] = '\0';
	c->open = 0;
}

/* Opens c's session: the transport first used, or found by trying. */
static int
conn_open(struct engine *e, struct mcp_conn *c, char *err)
{
	char	seg[16];
	int	rc;

	if (c->open)
		return 0;
	last_segment(c->url, seg, sizeof(seg));
	if (c->transport == MCP_T_UNKNOWN)
		c->transport = strcmp(seg, "sse") == 0 ? MCP_T_SSE :
		    MCP_T_STREAMABLE;
	if (c->transport == MCP_T_STREAMABLE) {
		rc = handshake(e, c, err);
		if (rc == ENGINE_EFETCH && strcmp(seg, "mcp") != 0 &&
		    (c->status == 400 || c->status == 404 ||
		    c->status == 405)) {
			/* not Streamable HTTP: maybe the older transport */
			conn_close(e, c);
			c->transport = MCP_T_SSE;
		} else if (rc != 0) {
			conn_close(e, c);
			return rc;
		}
	}
	if (c->transport == MCP_T_SSE) {
		if ((rc = sse_connect(e, c, err)) != 0 ||
		    (rc = handshake(e, c, err)) != 0) {
			conn_close(e, c);
			return rc;
		}
	}
	c->open = 1;
	return 0;
}

/* A request over c, opening its session when needed (c->mu held). */
static int
conn_request(struct engine *e, struct mcp_conn *c, const char *method,
    const json_t *params, char *err, json_t **result)
{
	int rc;

	if ((rc = conn_open(e, c, err)) != 0)
		return rc;
	rc = rpc(e, c, method, params, 1, err, result);
	if (rc == MCP_ESESSION) {
		/* the server forgot the session: a new one, once */
		c->session[0] = '\0';
		conn_close(e, c);
		if ((rc = conn_open(e, c, err)) != 0)
			return rc;
		rc = rpc(e, c, method, params, 1, err, result);
		if (rc == MCP_ESESSION) {
			engine_invalid(err, "MCP server answered %s with HTTP "
			    "status 404", method);
			rc = ENGINE_EFETCH;
		}
	}
	if (rc == ENGINE_EFETCH && c->transport == MCP_T_SSE)
		conn_close(e, c);	/* a broken stream is no session */
	return rc;
}

/* ====== Public calls ====== */

/* tools/list of c, read once per session (c->mu held). */
static int
conn_tools(struct engine *e, struct mcp_conn *c, char *err)
{
	json_t	*res = NULL;
	int	 rc;

	if (c->tools != NULL && c->open)
		return 0;
	if ((rc = conn_request(e, c, "tools/list", NULL, err, &res)) != 0)
		return rc;
	json_decref(c->tools);
	if ((c->tools = mcp_tools_of(res)) == NULL)
		rc = ENGINE_ENOMEM;
	json_decref(res);
	return rc;
}

int
mcp_tools(struct engine *e, struct mcp_pool *pool, const struct mcp_server *s,
    char *err, json_t **out)
{
	struct mcp_conn	*c = NULL;
	int		 oneshot, rc;

	*out = NULL;
	if ((rc = conn_get(e, pool, s, &c, &oneshot)) != 0)
		return rc;
	pthread_mutex_lock(&c->mu);
	if ((rc = conn_tools(e, c, err)) == 0)
		*out = json_incref(c->tools);
	else
		err_scrub(c, err);
	pthread_mutex_unlock(&c->mu);
	if (oneshot)
		conn_free(e, c);
	return rc;
}

int
mcp_list_tools(struct engine *e, struct mcp_pool *pool,
    const struct mcp_server *s, char *err, json_t **out)
{
	json_t	*tools = NULL;
	int	 rc;

	*out = NULL;
	if ((rc = mcp_tools(e, pool, s, err, &tools)) != 0)
		return rc;
	if ((*out = mcp_tools_describe(tools)) == NULL)
		rc = ENGINE_ENOMEM;
	json_decref(tools);
	return rc;
}

int
mcp_call_tool(struct engine *e, struct mcp_pool *pool,
    const struct mcp_server *s, const char *name, const json_t *args,
    char *err, struct tool_result *out)
{
	json_t		*a, *res = NULL, *v;
	const char	*k, *t;
	int		 rc;

	/* as Dify: no null or blank arguments */
	if ((a = json_object()) == NULL)
		return ENGINE_ENOMEM;
	json_object_foreach((json_t *)args, k, v) {
		if (json_is_null(v))
			continue;
		if ((t = json_string_value(v)) != NULL) {
			while (isspace((unsigned char)*t))
				t++;
			if (*t == '\0')
				continue;
		}
		if (json_object_set(a, k, v) != 0) {
			json_decref(a);
			return ENGINE_ENOMEM;
		}
	}
	rc = mcp_call_raw(e, pool, s, name, a, err, &res);
	json_decref(a);
	if (rc == 0)
		rc = mcp_call_result(res, name, err, out);
	json_decref(res);
	return rc;
}

int
mcp_call_raw(struct engine *e, struct mcp_pool *pool,
    const struct mcp_server *s, const char *name, const json_t *args,
    char *err, json_t **result)
{
	struct mcp_conn	*c = NULL;
	json_t		*params = NULL;
	int		 oneshot = 0, rc;

	*result = NULL;
	if ((params = json_pack("{s:s,s:O}", "name", name, "arguments",
	    json_is_object(args) ? (json_t *)args : json_object())) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = conn_get(e, pool, s, &c, &oneshot)) != 0)
		goto out;
	pthread_mutex_lock(&c->mu);
	if ((rc = conn_request(e, c, "tools/call", params, err, result)) != 0)
		err_scrub(c, err);
	pthread_mutex_unlock(&c->mu);
out:
	if (oneshot)
		conn_free(e, c);
	json_decref(params);
	return rc;
}

/* ====== The provider ====== */

static int
mcp_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	struct mcp_server	s;
	int			rc;

	if ((rc = mcp_server_of_call(e, call, err, &s)) == 0)
		rc = mcp_list_tools(e, call->mcp, &s, err, out);
	mcp_server_release(&s);
	return rc;
}

static int
mcp_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	struct mcp_server	s;
	int			rc;

	if ((rc = mcp_server_of_call(e, call, err, &s)) == 0)
		rc = mcp_call_tool(e, call->mcp, &s, call->tool, call->params,
		    err, out);
	mcp_server_release(&s);
	return rc;
}

const struct tool_provider tool_provider_mcp = {
	"mcp", mcp_list, mcp_invoke, 0,
};
