/*
 * t_tools_mcp.c — MCP tools against the loopback fake
 * (tests/fakes/fake_mcp.py): the wire formats alone (event streams, the
 * HTTP+SSE endpoint, the session header, results into tool messages, the
 * masked URL); Streamable HTTP answered as JSON and as event streams,
 * with the session closed by DELETE; one session per run (a pool) and a
 * session the server forgot opened again; the HTTP+SSE transport with
 * the server's own ping answered and the stream closed at the end;
 * registered servers (secrets sealed, masks kept, Dify's checks) and the
 * trust rule: a URL named in app content meets the SSRF guard unless it
 * is a registered server's.
 */
#include "tap.h"
#include "t_node_run.h"
#include "t_tools_fake.h"

/* A server to talk to (release it). */
static struct mcp_server
srv(const char *url, int trusted)
{
	struct mcp_server s;

	memset(&s, 0, sizeof(s));
	s.url = strdup(url);
	s.trusted = trusted;
	return s;
}

/* How many requests the fake saw with method m and a body holding sub. */
static int
seen_count(const json_t *seen, const char *m, const char *sub)
{
	json_t	*q;
	size_t	 i;
	int	 n = 0;

	json_array_foreach(seen, i, q)
		if (strcmp(json_string_value(json_object_get(q, "method")),
		    m) == 0 && (sub == NULL || strstr(json_string_value(
		    json_object_get(q, "body")), sub) != NULL ||
		    strstr(json_string_value(json_object_get(q, "path")), sub)
		    != NULL))
			n++;
	return n;
}

/* ====== Wire formats ====== */

#define B1 "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}"
#define B2 "{\"id\":4,\"result\":{}}"
#define B3 "[{\"id\":2,\"result\":{}},{\"id\":3,\"result\":{\"a\":1}}]"
#define B4 "data: {\"id\":3,\"result\":{\"b\":2}}"

static void
test_reader(void)
{
	struct mcp_reader	 r;
	const char		*s = "event: endpoint\ndata: /m?s=1\n\n"
				    ": keep-alive\n\n"
				    "data: {\"jsonrpc\":\"2.0\",\"method\":"
				    "\"notifications/progress\"}\n\n"
				    "event: message\ndata: {\"jsonrpc\":"
				    "\"2.0\",\"id\":\"p\",\"method\":"
				    "\"ping\"}\n\n"
				    "data: {\"jsonrpc\":\"2.0\",\"id\":7,\r\n"
				    "data: \"result\":{\"x\":1}}\r\n\r\n"
				    "data: [{\"id\":8,\"result\":{}},"
				    "{\"id\":9,\"error\":{}}]\n\n"
				    "data: not json\n\n";
	json_t			*j;
	size_t			 i;
	int			 bad = 0;

	/* byte by byte: events split anywhere */
	CHECK(mcp_reader_init(&r, 1024) == 0);
	for (i = 0; s[i] != '\0'; i++)
		if (mcp_reader_feed(&r, s + i, 1) != 0)
			bad++;
	CHECK_INT(bad, 0);
	CHECK(mcp_reader_finish(&r) == 0);
	CHECK_STR(r.endpoint, "/m?s=1");
	CHECK_INT(json_array_size(r.msgs), 4);	/* no notification */
	j = mcp_reader_take(&r, 7);
	CHECK_STR(tn_dump(json_object_get(j, "result")), "{\"x\":1}");
	json_decref(j);
	CHECK(mcp_reader_take(&r, 7) == NULL);
	j = mcp_reader_take(&r, 9);
	CHECK(json_object_get(j, "error") != NULL);
	json_decref(j);
	j = mcp_reader_take_request(&r);
	CHECK_STR(json_string_value(json_object_get(j, "method")), "ping");
	json_decref(j);
	CHECK(mcp_reader_take_request(&r) == NULL);
	mcp_reader_release(&r);

	/* one event past the limit, ended or not */
	CHECK(mcp_reader_init(&r, 16) == 0);
	CHECK(mcp_reader_feed(&r, "data: 0123456789abcdef0123", 26) ==
	    ENGINE_ELIMIT);
	CHECK(mcp_reader_feed(&r, "\n\n", 2) == ENGINE_ELIMIT);
	mcp_reader_release(&r);

	/* a whole POST answer */
	j = mcp_body_response(B1, strlen(B1), 0, 100, 3);
	CHECK(j != NULL);
	json_decref(j);
	CHECK(mcp_body_response(B2, strlen(B2), 0, 100, 3) == NULL);
	j = mcp_body_response(B3, strlen(B3), 0, 100, 3);
	CHECK_STR(tn_dump(json_object_get(j, "result")), "{\"a\":1}");
	json_decref(j);
	j = mcp_body_response(B4, strlen(B4), 1, 100, 3);
	CHECK_STR(tn_dump(json_object_get(j, "result")), "{\"b\":2}");
	json_decref(j);
}

static void
test_endpoint(void)
{
	char	 err[ENGINE_ERRMAX], *u = NULL;

	CHECK(mcp_endpoint_url("http://h:8/sse", "/messages?sessionId=a",
	    err, &u) == 0);
	CHECK_STR(u, "http://h:8/messages?sessionId=a");
	free(u);
	CHECK(mcp_endpoint_url("http://h:8/a/sse", "msg?x=1", err, &u) == 0);
	CHECK_STR(u, "http://h:8/a/msg?x=1");
	free(u);
	CHECK(mcp_endpoint_url("https://H/sse", "https://h:443/m", err, &u) ==
	    0);
	CHECK_STR(u, "https://h:443/m");
	free(u);
	CHECK(mcp_endpoint_url("http://h:8/sse", "http://h:9/m", err, &u) ==
	    ENGINE_EINVAL);
	CHECK(strstr(err, "another origin") != NULL);
	CHECK(mcp_endpoint_url("http://h/sse", "https://h/m", err, &u) ==
	    ENGINE_EINVAL);
	CHECK(mcp_endpoint_url("http://h/sse", "//other/m", err, &u) ==
	    ENGINE_EINVAL);
	CHECK(mcp_endpoint_url("http://h/sse", "/m\r\nX: y", err, &u) ==
	    ENGINE_EINVAL);
	CHECK(mcp_endpoint_url("http://h/sse", "", err, &u) == ENGINE_EINVAL);
	CHECK(u == NULL);
}

static void
test_session_header(void)
{
	char	 buf[16];

	CHECK(mcp_session_header("mcp-session-id:  ab-1 ", 22, buf,
	    sizeof(buf)) == 1);
	CHECK_STR(buf, "ab-1");
	CHECK(mcp_session_header("Mcp-Session-Id: a b", 19, buf, sizeof(buf))
	    == 0);
	CHECK(mcp_session_header("Mcp-Session-Id:", 15, buf, sizeof(buf)) ==
	    0);
	CHECK(mcp_session_header("Mcp-Session-Id: 0123456789abcdef", 32, buf,
	    sizeof(buf)) == 0);
	CHECK(mcp_session_header("Content-Type: x", 15, buf, sizeof(buf)) ==
	    0);
}

/* mcp_call_result of result text; *text gets the text ("" when none). */
static int
result_of(const char *json, struct tool_result *r, char *err)
{
	json_t	*j = json_loads(json, 0, NULL);
	int	 rc;

	memset(r, 0, sizeof(*r));
	rc = mcp_call_result(j, "t", err, r);
	json_decref(j);
	return rc;
}

static void
test_results(void)
{
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX], *m = NULL;

	/* text parts are messages of their own, joined with nothing
	 * between them by the tool node, as Dify's are */
	CHECK(result_of("{\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
	    "{\"type\":\"image\",\"data\":\"aGk=\",\"mimeType\":\"image/png\"},"
	    "{\"type\":\"text\",\"text\":\"b\"}]}", &r, err) == 0);
	CHECK_STR(res_text(&r), "ab");
	CHECK_INT(json_array_size(r.files), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(r.files,
	    0), "mime_type")), "image/png");
	tool_result_release(&r);
	/* JSON-looking text */
	CHECK(result_of("{\"content\":[{\"type\":\"text\",\"text\":"
	    "\" {\\\"a\\\": 1} \"}]}", &r, err) == 0);
	CHECK_STR(tn_dump(r.json), "[{\"a\":1}]");
	CHECK_STR(res_text(&r), "");
	tool_result_release(&r);
	CHECK(result_of("{\"content\":[{\"type\":\"text\",\"text\":"
	    "\"[{\\\"a\\\":1},{\\\"b\\\":2}]\"}]}", &r, err) == 0);
	CHECK_INT(json_array_size(r.json), 2);
	tool_result_release(&r);
	/* a list of other things: Python's str() of it */
	CHECK(result_of("{\"content\":[{\"type\":\"text\",\"text\":"
	    "\"[1, \\\"two\\\", null]\"}]}", &r, err) == 0);
	CHECK_STR(res_text(&r), "[1, 'two', None]");
	tool_result_release(&r);
	/* numbers and broken JSON stay text */
	CHECK(result_of("{\"content\":[{\"type\":\"text\",\"text\":\"42\"},"
	    "{\"type\":\"text\",\"text\":\"{oops}\"}]}", &r, err) == 0);
	CHECK_STR(res_text(&r), "42{oops}");
	CHECK(r.json == NULL);
	tool_result_release(&r);
	/* resources; links skipped */
	CHECK(result_of("{\"content\":[{\"type\":\"resource\",\"resource\":{"
	    "\"uri\":\"x:1\",\"text\":\"res\"}},{\"type\":\"resource_link\","
	    "\"uri\":\"x:2\"},{\"type\":\"resource\",\"resource\":{\"uri\":"
	    "\"x:3\",\"blob\":\"aGk=\"}}]}", &r, err) == 0);
	CHECK_STR(res_text(&r), "res");
	CHECK_STR(json_string_value(json_object_get(json_array_get(r.files,
	    0), "mime_type")), "application/octet-stream");
	tool_result_release(&r);
	/* structured content alone */
	CHECK(result_of("{\"content\":[],\"structuredContent\":{\"n\":3}}",
	    &r, err) == 0);
	CHECK_STR(tn_dump(r.json), "[{\"n\":3}]");
	tool_result_release(&r);
	CHECK(result_of("{\"content\":[{\"type\":\"text\",\"text\":\"no\"}],"
	    "\"isError\":true}", &r, err) == ENGINE_EINVAL);
	CHECK_STR(err, "MCP tool t failed: no");
	tool_result_release(&r);
	CHECK(result_of("{\"content\":[{\"type\":\"image\",\"data\":\"%%\"}]}",
	    &r, err) == ENGINE_EINVAL);
	tool_result_release(&r);

	CHECK(mcp_url_mask("https://mcp.amap.com/sse?key=abc", &m) == 0);
	CHECK_STR(m, "https://mcp.amap.com/******?******");
	free(m);
	CHECK(mcp_url_mask("http://u:p@h:8080", &m) == 0);
	CHECK_STR(m, "http://h:8080/");
	free(m);
}

/* ====== Streamable HTTP ====== */

static void
test_direct(const char *path)
{
	struct mcp_server	 s = srv(fake_url(path), 1);
	struct tool_result	 r;
	json_t			*tools = NULL, *args, *seen, *q;
	char			 err[ENGINE_ERRMAX];
	size_t			 i;

	json_decref(fake_requests(1));
	CHECK(mcp_list_tools(tn_engine, NULL, &s, err, &tools) == 0);
	CHECK_INT(json_array_size(tools), 6);
	CHECK_STR(json_string_value(json_object_get(json_array_get(tools, 0),
	    "name")), "add");
	CHECK_STR(tn_dump(json_object_get(json_object_get(json_array_get(
	    tools, 0), "parameters"), "required")), "[\"a\",\"b\"]");
	json_decref(tools);
	/* one exchange: initialize, initialized, tools/list, DELETE */
	seen = fake_requests(0);
	CHECK_INT(json_array_size(seen), 4);
	CHECK(strstr(json_string_value(json_object_get(json_array_get(seen,
	    0), "body")), "\"method\":\"initialize\"") != NULL);
	CHECK(strstr(json_string_value(json_object_get(json_array_get(seen,
	    0), "body")), "\"protocolVersion\":\"2025-03-26\"") != NULL);
	CHECK(strstr(json_string_value(json_object_get(json_array_get(seen,
	    1), "body")), "notifications/initialized") != NULL);
	CHECK(strstr(json_string_value(json_object_get(json_array_get(seen,
	    2), "body")), "tools/list") != NULL);
	for (i = 0; i < 3; i++) {
		q = json_array_get(seen, i);
		CHECK(strstr(json_string_value(json_object_get(json_object_get(
		    q, "headers"), "accept")), "text/event-stream") != NULL);
	}
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    json_array_get(seen, 2), "headers"), "mcp-session-id")),
	    "sess-4242");
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    json_array_get(seen, 2), "headers"), "mcp-protocol-version")),
	    "2025-03-26");
	q = json_array_get(seen, 3);
	CHECK_STR(json_string_value(json_object_get(q, "method")), "DELETE");
	CHECK_STR(json_string_value(json_object_get(json_object_get(q,
	    "headers"), "mcp-session-id")), "sess-4242");
	json_decref(seen);

	memset(&r, 0, sizeof(r));
	args = json_pack("{s:i,s:f,s:n,s:s}", "a", 2, "b", 3.0, "c", "d",
	    " ");
	CHECK(mcp_call_tool(tn_engine, NULL, &s, "add", args, err, &r) == 0);
	CHECK_STR(res_text(&r), "5");
	CHECK(r.json == NULL);
	tool_result_release(&r);
	json_decref(args);
	/* null and blank arguments are not sent, as Dify does */
	seen = fake_requests(0);
	CHECK(strstr(json_string_value(json_object_get(json_array_get(seen,
	    json_array_size(seen) - 2), "body")), "\"c\"") == NULL);
	json_decref(seen);

	args = json_pack("{s:s}", "city", "Oslo");
	CHECK(mcp_call_tool(tn_engine, NULL, &s, "weather", args, err, &r) ==
	    0);
	CHECK_STR(tn_dump(r.json), "[{\"city\":\"Oslo\",\"temp\":21}]");
	CHECK_STR(res_text(&r), "");
	tool_result_release(&r);
	json_decref(args);

	CHECK(mcp_call_tool(tn_engine, NULL, &s, "fail", NULL, err, &r) ==
	    ENGINE_EINVAL);
	CHECK_STR(err, "MCP tool fail failed: it broke");
	tool_result_release(&r);
	CHECK(mcp_call_tool(tn_engine, NULL, &s, "nope", NULL, err, &r) ==
	    ENGINE_EINVAL);
	CHECK(strstr(err, "Unknown tool: nope") != NULL);
	tool_result_release(&r);
	mcp_server_release(&s);
}

/* One session for a run's calls; a forgotten session opened again. */
static void
test_pool(void)
{
	struct mcp_server	 s = srv(fake_url("/mcp-strict"), 1);
	struct mcp_pool		*p = mcp_pool_new();
	struct tool_result	 r;
	json_t			*tools = NULL, *args, *seen;
	char			 err[ENGINE_ERRMAX];
	int			 i;

	json_decref(fake_requests(1));
	CHECK(mcp_list_tools(tn_engine, p, &s, err, &tools) == 0);
	json_decref(tools);
	CHECK(mcp_list_tools(tn_engine, p, &s, err, &tools) == 0);
	json_decref(tools);
	args = json_pack("{s:i,s:i}", "a", 1, "b", 2);
	for (i = 0; i < 3; i++) {
		memset(&r, 0, sizeof(r));
		CHECK(mcp_call_tool(tn_engine, p, &s, "add", args, err, &r) ==
		    0);
		CHECK_STR(res_text(&r), "3");
		tool_result_release(&r);
	}
	seen = fake_requests(0);
	CHECK_INT(seen_count(seen, "POST", "\"initialize\""), 1);
	CHECK_INT(seen_count(seen, "POST", "tools/list"), 1);	/* kept */
	CHECK_INT(seen_count(seen, "POST", "tools/call"), 3);
	CHECK_INT(seen_count(seen, "DELETE", NULL), 0);
	json_decref(seen);

	/* the server restarted: 404, a new session, the call goes through */
	json_decref(fake_requests(1));
	{
		struct outbound_req	req;
		struct outbound_resp	resp;

		memset(&req, 0, sizeof(req));
		req.url = fake_url("/forget");
		req.method = "POST";
		req.trusted = 1;
		if (outbound_fetch(tn_engine, &req, err, &resp) == 0)
			outbound_resp_release(&resp);
	}
	memset(&r, 0, sizeof(r));
	CHECK(mcp_call_tool(tn_engine, p, &s, "add", args, err, &r) == 0);
	CHECK_STR(res_text(&r), "3");
	tool_result_release(&r);
	json_decref(args);
	/* the server asks for a ping in its answer: answered */
	memset(&r, 0, sizeof(r));
	CHECK(mcp_call_tool(tn_engine, p, &s, "pinger", NULL, err, &r) == 0);
	CHECK_STR(res_text(&r), "pong");
	tool_result_release(&r);
	mcp_pool_free(tn_engine, p);
	seen = fake_requests(0);
	CHECK_INT(seen_count(seen, "POST", "\"initialize\""), 1);
	CHECK_INT(seen_count(seen, "POST", "\"srv-1\",\"result\":{}"), 1);
	CHECK_INT(seen_count(seen, "DELETE", NULL), 1);
	CHECK(strncmp(json_string_value(json_object_get(json_object_get(
	    json_array_get(seen, json_array_size(seen) - 1), "headers"),
	    "mcp-session-id")), "strict-", 7) == 0);
	json_decref(seen);
	mcp_server_release(&s);
}

/* ====== HTTP+SSE ====== */

/* Waits up to 5 s for the fake to see n CLOSED streams. */
static int
closed_streams(int n)
{
	json_t	*seen;
	int	 i, got = 0;

	for (i = 0; i < 100; i++) {
		seen = fake_requests(0);
		got = seen_count(seen, "CLOSED", NULL);
		json_decref(seen);
		if (got >= n)
			break;
		usleep(50 * 1000);
	}
	return got;
}

static void
test_sse(void)
{
	struct mcp_server	 s = srv(fake_url("/sse"), 1);
	struct mcp_pool		*p = mcp_pool_new();
	struct tool_result	 r;
	json_t			*tools = NULL, *args, *seen;
	char			 err[ENGINE_ERRMAX];

	json_decref(fake_requests(1));
	CHECK(mcp_list_tools(tn_engine, p, &s, err, &tools) == 0);
	CHECK_INT(json_array_size(tools), 6);
	json_decref(tools);
	args = json_pack("{s:i,s:i}", "a", 40, "b", 2);
	memset(&r, 0, sizeof(r));
	CHECK(mcp_call_tool(tn_engine, p, &s, "add", args, err, &r) == 0);
	CHECK_STR(res_text(&r), "42");
	tool_result_release(&r);
	json_decref(args);
	memset(&r, 0, sizeof(r));
	CHECK(mcp_call_tool(tn_engine, p, &s, "parts", NULL, err, &r) == 0);
	CHECK_STR(res_text(&r), "firstsecond");
	CHECK_INT(json_array_size(r.files), 1);
	tool_result_release(&r);
	memset(&r, 0, sizeof(r));
	CHECK(mcp_call_tool(tn_engine, p, &s, "pinger", NULL, err, &r) == 0);
	CHECK_STR(res_text(&r), "pong");
	tool_result_release(&r);
	memset(&r, 0, sizeof(r));
	CHECK(mcp_call_tool(tn_engine, p, &s, "nope", NULL, err, &r) ==
	    ENGINE_EINVAL);
	tool_result_release(&r);
	seen = fake_requests(0);
	CHECK_INT(seen_count(seen, "GET", "/sse"), 1);	/* one stream */
	CHECK_INT(seen_count(seen, "POST", "\"initialize\""), 1);
	CHECK_INT(seen_count(seen, "POST", "\"srv-1\",\"result\":{}"), 1);
	CHECK_INT(seen_count(seen, "CLOSED", NULL), 0);
	json_decref(seen);
	mcp_pool_free(tn_engine, p);
	CHECK_INT(closed_streams(1), 1);

	/* one exchange without a pool: the stream goes with it */
	json_decref(fake_requests(1));
	CHECK(mcp_list_tools(tn_engine, NULL, &s, err, &tools) == 0);
	json_decref(tools);
	CHECK_INT(closed_streams(1), 1);
	mcp_server_release(&s);

	/* the guard holds on the event stream too */
	s = srv(fake_url("/sse"), 0);
	CHECK(mcp_list_tools(tn_engine, NULL, &s, err, &tools) ==
	    ENGINE_EFETCH);
	CHECK(strstr(err, "refused to connect to 127.0.0.1") != NULL);
	mcp_server_release(&s);

	s = srv(fake_url("/sse-elsewhere"), 1);
	CHECK(mcp_list_tools(tn_engine, NULL, &s, err, &tools) ==
	    ENGINE_EINVAL);
	CHECK(strstr(err, "another origin") != NULL);
	mcp_server_release(&s);

	/* a path that is not "sse" or "mcp": Streamable HTTP refused with
	 * 404, then the older transport */
	s = srv(fake_url("/nothing-here"), 1);
	CHECK(mcp_list_tools(tn_engine, NULL, &s, err, &tools) ==
	    ENGINE_EFETCH);
	CHECK(strstr(err, "event stream's GET with HTTP status 404") != NULL);
	mcp_server_release(&s);
}

/* ====== Registered servers, trust ====== */

/* The raw stored bytes of every tool provider, as one string. */
static char *
stored_text(void)
{
	json_t	*all = NULL;
	char	*s;

	if (tool_provider_all(tn_engine, &all) != 0)
		return strdup("");
	s = json_dumps(all, JSON_COMPACT);
	json_decref(all);
	return s;
}

static void
test_provider(void)
{
	struct tool_call	 call;
	struct tool_result	 r;
	struct mcp_server	 s;
	json_t			*in, *v = NULL, *d = NULL, *p, *node;
	char			 err[ENGINE_ERRMAX], *raw;

	/* a server that wants a header: refused without, fine with */
	s = srv(fake_url("/mcp-auth"), 1);
	CHECK(mcp_list_tools(tn_engine, NULL, &s, err, &d) == ENGINE_EFETCH);
	CHECK(strstr(err, "401") != NULL);
	mcp_server_release(&s);
	in = json_pack("{s:s,s:s,s:s,s:{s:s}}", "name", "calc", "type", "mcp",
	    "server_url", fake_url("/mcp-auth"), "headers", "Authorization",
	    "Bearer secret");
	CHECK(engine_tool_provider_put(tn_engine, in, err, &v) == 0);
	CHECK(json_object_get(v, "headers") == NULL);
	CHECK_STR(json_string_value(json_object_get(json_object_get(v,
	    "masked_headers"), "Authorization")), ENGINE_SECRET_MASK);
	{
		char want[64];

		snprintf(want, sizeof(want), "http://127.0.0.1:%d/******",
		    fake_port);
		CHECK_STR(json_string_value(json_object_get(v, "server_url")),
		    want);
	}
	json_decref(v);
	/* the secret and the URL are sealed at rest */
	raw = stored_text();
	CHECK(strstr(raw, "Bearer secret") == NULL);
	CHECK(strstr(raw, "/mcp-auth") == NULL);
	free(raw);
	json_object_set_new(in, "server_url", json_string("ftp://x"));
	CHECK(engine_tool_provider_put(tn_engine, in, err, &v) ==
	    ENGINE_EINVAL);
	json_decref(in);

	/* registered: trusted, even with http.allow_private off */
	tn_conf.http_allow_private = 0;
	memset(&call, 0, sizeof(call));
	memset(&r, 0, sizeof(r));
	call.provider = "calc";
	call.provider_type = "mcp";
	call.tool = "add";
	call.params = p = json_pack("{s:i,s:i}", "a", 40, "b", 2);
	CHECK(tool_invoke(tn_engine, &call, err, &r) == 0);
	CHECK_STR(res_text(&r), "42");
	tool_result_release(&r);
	call.tool = NULL;
	CHECK(tool_describe(tn_engine, &call, err, &d) == 0);
	CHECK_INT(json_array_size(d), 6);
	json_decref(d);

	/* a server the node names itself: the SSRF guard */
	call.provider = "somewhere";
	call.tool = "add";
	call.node = node = json_pack("{s:{s:s,s:s}}", "mcp_server", "type",
	    "constant", "value", fake_url("/mcp-sse"));
	CHECK(tool_invoke(tn_engine, &call, err, &r) == ENGINE_EFETCH);
	CHECK(strstr(err, "refused to connect to 127.0.0.1") != NULL);
	tool_result_release(&r);
	tn_conf.http_allow_private = 1;
	CHECK(tool_invoke(tn_engine, &call, err, &r) == 0);
	CHECK_STR(res_text(&r), "42");
	tool_result_release(&r);
	tn_conf.http_allow_private = 0;
	/* ... unless it is exactly a registered server's URL */
	json_decref(node);
	call.node = node = json_pack("{s:s}", "server_url",
	    fake_url("/mcp-auth"));
	CHECK(tool_invoke(tn_engine, &call, err, &r) == 0);
	CHECK_STR(res_text(&r), "42");
	tool_result_release(&r);
	CHECK(mcp_server_for_url(tn_engine, fake_url("/mcp-auth"), NULL, err,
	    &s) == 0);
	CHECK(s.trusted == 1);
	CHECK_STR(json_string_value(json_object_get(s.headers,
	    "Authorization")), "Bearer secret");
	mcp_server_release(&s);
	CHECK(mcp_server_for_url(tn_engine, fake_url("/mcp-auth?x"), NULL,
	    err, &s) == 0);
	CHECK(s.trusted == 0);
	mcp_server_release(&s);
	json_decref(node);
	call.node = NULL;
	CHECK(tool_invoke(tn_engine, &call, err, &r) == ENGINE_ENOTFOUND);
	CHECK(strstr(err, "'somewhere/add' is not available in flowcgi") !=
	    NULL);
	tool_result_release(&r);
	json_decref(p);
	CHECK(engine_tool_provider_delete(tn_engine, "calc") == 0);
}

/* Dify's console calls: create, masks, update, conflicts, delete. */
static void
test_console(void)
{
	struct tool_call	 call;
	struct tool_result	 r;
	json_t			*in, *v = NULL, *l = NULL, *p;
	char			 err[ENGINE_ERRMAX], id[64];

	in = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:{s:s},s:{s:i,s:i},"
	    "s:{s:s,s:s}}", "name", "Calc", "server_url",
	    fake_url("/mcp-auth"), "server_identifier", "calc-1", "icon",
	    "🧮", "icon_type", "emoji", "icon_background", "#fff", "headers",
	    "Authorization", "Bearer secret", "configuration", "timeout", 5,
	    "sse_read_timeout", 60, "authentication", "client_id", "cid",
	    "client_secret", "csecret");
	CHECK(engine_mcp_provider_create(tn_engine, in, err, &v) == 0);
	snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(v,
	    "id")));
	CHECK(engine_uuid_check(id) == 0);
	CHECK_STR(json_string_value(json_object_get(v, "type")), "mcp");
	CHECK_STR(json_string_value(json_object_get(v, "server_identifier")),
	    "calc-1");
	CHECK(json_is_true(json_object_get(v, "is_team_authorization")));
	CHECK_INT(json_array_size(json_object_get(v, "tools")), 6);
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    json_array_get(json_object_get(v, "tools"), 0), "label"),
	    "en_US")), "add");
	CHECK_STR(json_string_value(json_object_get(json_array_get(
	    json_object_get(json_array_get(json_object_get(v, "tools"), 0),
	    "parameters"), 0), "type")), "number");
	CHECK_STR(json_string_value(json_object_get(json_object_get(v,
	    "icon"), "content")), "🧮");
	CHECK(strstr(json_string_value(json_object_get(v, "server_url")),
	    "/******") != NULL);
	CHECK(json_number_value(json_object_get(json_object_get(v,
	    "configuration"), "timeout")) == 5.0);
	CHECK_STR(json_string_value(json_object_get(json_object_get(v,
	    "authentication"), "client_secret")), ENGINE_SECRET_MASK);
	{
		char *all = json_dumps(v, JSON_COMPACT);

		CHECK(strstr(all, "Bearer secret") == NULL);
		CHECK(strstr(all, "csecret") == NULL);
		CHECK(strstr(all, "mcp-auth") == NULL);
		free(all);
	}
	json_decref(v);

	/* the same name, URL or identifier again: refused */
	CHECK(engine_mcp_provider_create(tn_engine, in, err, &v) ==
	    ENGINE_EINVAL);
	CHECK_STR(err, "MCP tool Calc already exists");
	json_object_set_new(in, "name", json_string("Other"));
	CHECK(engine_mcp_provider_create(tn_engine, in, err, &v) ==
	    ENGINE_EINVAL);
	CHECK_STR(err, "MCP tool with this server URL already exists");
	json_object_set_new(in, "server_url", json_string(fake_url("/mcp")));
	CHECK(engine_mcp_provider_create(tn_engine, in, err, &v) ==
	    ENGINE_EINVAL);
	CHECK_STR(err, "MCP tool calc-1 already exists");
	json_object_set_new(in, "server_url", json_string("nope"));
	json_object_set_new(in, "server_identifier", json_string("x"));
	CHECK(engine_mcp_provider_create(tn_engine, in, err, &v) ==
	    ENGINE_EINVAL);
	CHECK_STR(err, "Server URL is not valid.");
	json_decref(in);

	/* update with the masks: everything kept, renamed */
	in = json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:s},s:{s:s,s:s}}",
	    "provider_id",
	    id, "name", "Calculator", "server_url", "[__HIDDEN__]",
	    "server_identifier", "calc-2", "icon", "x", "headers",
	    "Authorization", ENGINE_SECRET_MASK, "authentication",
	    "client_id", ENGINE_SECRET_MASK, "client_secret",
	    ENGINE_SECRET_MASK);
	CHECK(engine_mcp_provider_update(tn_engine, in, err) == 0);
	json_decref(in);
	CHECK(engine_mcp_provider_get(tn_engine, id, &v) == 0);
	CHECK_STR(json_string_value(json_object_get(v, "name")),
	    "Calculator");
	CHECK(json_is_string(json_object_get(json_object_get(v,
	    "authentication"), "client_secret")));
	json_decref(v);
	CHECK(engine_tool_provider_get(tn_engine, "Calc", &v) ==
	    ENGINE_ENOTFOUND);
	/* a tool node names it by server_identifier: the header was kept */
	memset(&call, 0, sizeof(call));
	memset(&r, 0, sizeof(r));
	call.provider = "calc-2";
	call.provider_name = "display name";
	call.provider_type = "mcp";
	call.tool = "add";
	call.params = p = json_pack("{s:i,s:i}", "a", 1, "b", 1);
	CHECK(tool_invoke(tn_engine, &call, err, &r) == 0);
	CHECK_STR(res_text(&r), "2");
	tool_result_release(&r);
	/* no headers given: none (Dify's rule), and the server says 401 */
	in = json_pack("{s:s,s:s,s:s,s:s}", "provider_id", id, "name",
	    "Calculator", "server_url", ENGINE_SECRET_MASK,
	    "server_identifier", "calc-2");
	CHECK(engine_mcp_provider_update(tn_engine, in, err) == 0);
	CHECK(tool_invoke(tn_engine, &call, err, &r) == ENGINE_EFETCH);
	tool_result_release(&r);
	CHECK(engine_mcp_provider_refresh(tn_engine, id, 1, err, NULL) ==
	    ENGINE_EINVAL);
	CHECK(strstr(err, "wants authorization") != NULL);
	CHECK(engine_mcp_provider_get(tn_engine, id, &v) == 0);
	CHECK(json_is_false(json_object_get(v, "is_team_authorization")));
	json_decref(v);
	/* a new URL is tried first */
	json_object_set_new(in, "server_url",
	    json_string("http://127.0.0.1:1/mcp"));
	CHECK(engine_mcp_provider_update(tn_engine, in, err) ==
	    ENGINE_EINVAL);
	CHECK(strstr(err, "Failed to re-connect MCP server") != NULL);
	json_object_set_new(in, "server_url", json_string(fake_url("/mcp")));
	CHECK(engine_mcp_provider_update(tn_engine, in, err) == 0);
	json_decref(in);
	CHECK(engine_mcp_provider_refresh(tn_engine, id, 0, err, &v) == 0);
	CHECK_INT(json_array_size(json_object_get(v, "tools")), 6);
	json_decref(v);
	CHECK(tool_invoke(tn_engine, &call, err, &r) == 0);
	tool_result_release(&r);
	json_decref(p);

	CHECK(engine_mcp_provider_list(tn_engine, &l) == 0);
	CHECK_INT(json_array_size(l), 1);
	json_decref(l);
	CHECK(engine_mcp_provider_delete(tn_engine, id) == 0);
	CHECK(engine_mcp_provider_delete(tn_engine, id) == ENGINE_ENOTFOUND);
	CHECK(engine_mcp_provider_get(tn_engine, id, &v) == ENGINE_ENOTFOUND);
}

/* Two tool nodes of one run: one session, closed when the run ends. */
static void
test_run(void)
{
	struct tn_run	 r;
	json_t		*in, *v = NULL, *seen;
	char		 err[ENGINE_ERRMAX];

	in = json_pack("{s:s,s:s,s:s,s:s}", "name", "strict", "type", "mcp",
	    "server_url", fake_url("/mcp-strict"), "server_identifier",
	    "strict-id");
	CHECK(engine_tool_provider_put(tn_engine, in, err, &v) == 0);
	json_decref(in);
	json_decref(v);
	json_decref(fake_requests(1));
	if (tn_run_wf(json_pack("[{s:s,s:s,s:s,s:s,s:s,s:{s:{s:s,s:i},"
	    "s:{s:s,s:i}}},{s:s,s:s,s:s,s:s,s:s,s:{}}]", "type", "tool",
	    "provider_id", "strict-id", "provider_name", "strict",
	    "provider_type", "mcp", "tool_name", "add", "tool_parameters", "a",
	    "type", "constant", "value", 2, "b", "type", "constant", "value",
	    3, "type", "tool", "provider_id", "strict-id", "provider_name",
	    "strict", "provider_type", "mcp", "tool_name", "parts",
	    "tool_parameters"), json_pack("{s:[s,s],s:[s,s]}", "sum", "n1",
	    "text", "parts", "n2", "text"), NULL, NULL, &r) == 0) {
		CHECK_STR(r.status, "succeeded");
		CHECK_STR(json_string_value(json_object_get(r.outputs, "sum")),
		    "5");
		CHECK_STR(json_string_value(json_object_get(r.outputs,
		    "parts")), "firstsecond");
	} else
		CHECK(0);
	tn_release(&r);
	seen = fake_requests(0);
	CHECK_INT(seen_count(seen, "POST", "\"initialize\""), 1);
	CHECK_INT(seen_count(seen, "POST", "tools/call"), 2);
	CHECK_INT(seen_count(seen, "DELETE", NULL), 1);
	json_decref(seen);
	CHECK(engine_tool_provider_delete(tn_engine, "strict") == 0);
}

int
main(void)
{
	tn_open();
	test_reader();
	test_endpoint();
	test_session_header();
	test_results();
	if (!fake_begin()) {
		tn_close();
		return tap_done();
	}
	tn_conf.http_allow_private = 0;
	test_direct("/mcp");
	test_direct("/mcp-sse");
	test_pool();
	test_sse();
	test_provider();
	test_console();
	test_run();
	fake_stop();
	tn_close();
	return tap_done();
}
