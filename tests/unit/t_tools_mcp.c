/*
 * t_tools_mcp.c — MCP tools over Streamable HTTP against the loopback
 * fake: the handshake (initialize, notifications/initialized), tools/list
 * and tools/call answered as JSON and as SSE, JSON text as json messages,
 * isError and unknown tools as failures, a stored mcp provider with
 * headers, the node-data server form, the SSRF guard.
 */
#include "tap.h"
#include "t_node_run.h"
#include "t_tools_fake.h"

static void
test_direct(const char *path)
{
	struct tool_result	 r;
	json_t			*tools = NULL, *args, *seen;
	char			 err[ENGINE_ERRMAX];
	size_t			 i;
	json_t			*q;

	json_decref(fake_requests(1));
	CHECK(mcp_list_tools(tn_engine, fake_url(path), NULL, err, &tools) ==
	    0);
	CHECK_INT(json_array_size(tools), 3);
	CHECK_STR(json_string_value(json_object_get(json_array_get(tools, 0),
	    "name")), "add");
	CHECK_STR(tn_dump(json_object_get(json_object_get(json_array_get(
	    tools, 0), "parameters"), "required")), "[\"a\",\"b\"]");
	json_decref(tools);
	seen = fake_requests(0);
	CHECK_INT(json_array_size(seen), 3);
	CHECK(strstr(json_string_value(json_object_get(json_array_get(seen,
	    0), "body")), "\"method\":\"initialize\"") != NULL);
	CHECK(strstr(json_string_value(json_object_get(json_array_get(seen,
	    0), "body")), "\"protocolVersion\":\"2025-03-26\"") != NULL);
	CHECK(strstr(json_string_value(json_object_get(json_array_get(seen,
	    1), "body")), "notifications/initialized") != NULL);
	CHECK(strstr(json_string_value(json_object_get(json_array_get(seen,
	    2), "body")), "tools/list") != NULL);
	json_array_foreach(seen, i, q)
		CHECK(strstr(json_string_value(json_object_get(json_object_get(
		    q, "headers"), "accept")), "text/event-stream") != NULL);
#ifdef OUTBOUND_ON_HEADER
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    json_array_get(seen, 2), "headers"), "mcp-session-id")),
	    "sess-4242");
#endif
	json_decref(seen);

	memset(&r, 0, sizeof(r));
	args = json_pack("{s:i,s:f}", "a", 2, "b", 3.0);
	CHECK(mcp_call_tool(tn_engine, fake_url(path), NULL, "add", args, err,
	    &r) == 0);
	CHECK_STR(res_text(&r), "5");
	CHECK(r.json == NULL);
	tool_result_release(&r);
	json_decref(args);

	args = json_pack("{s:s}", "city", "Oslo");
	CHECK(mcp_call_tool(tn_engine, fake_url(path), NULL, "weather", args,
	    err, &r) == 0);
	CHECK_STR(tn_dump(r.json), "[{\"city\":\"Oslo\",\"temp\":21}]");
	CHECK_STR(res_text(&r), "");
	tool_result_release(&r);
	json_decref(args);

	CHECK(mcp_call_tool(tn_engine, fake_url(path), NULL, "fail", NULL,
	    err, &r) == ENGINE_EINVAL);
	CHECK_STR(err, "MCP tool fail failed: it broke");
	tool_result_release(&r);
	CHECK(mcp_call_tool(tn_engine, fake_url(path), NULL, "nope", NULL,
	    err, &r) == ENGINE_EINVAL);
	CHECK(strstr(err, "Unknown tool: nope") != NULL);
	tool_result_release(&r);
}

static void
test_provider(void)
{
	struct tool_call	 call;
	struct tool_result	 r;
	json_t			*in, *v = NULL, *d = NULL, *p;
	char			 err[ENGINE_ERRMAX];

	/* a server that wants a header: refused without, fine with */
	CHECK(mcp_list_tools(tn_engine, fake_url("/mcp-auth"), NULL, err,
	    &d) == ENGINE_EFETCH);
	CHECK(strstr(err, "401") != NULL);
	in = json_pack("{s:s,s:s,s:s,s:{s:s}}", "name", "calc", "type", "mcp",
	    "server_url", fake_url("/mcp-auth"), "headers", "Authorization",
	    "Bearer secret");
	CHECK(engine_tool_provider_put(tn_engine, in, err, &v) == 0);
	CHECK(json_object_get(v, "headers") == NULL);
	json_decref(v);
	json_object_set_new(in, "server_url", json_string("ftp://x"));
	CHECK(engine_tool_provider_put(tn_engine, in, err, &v) ==
	    ENGINE_EINVAL);
	json_decref(in);

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
	CHECK_INT(json_array_size(d), 3);
	json_decref(d);

	/* no stored provider: the node's own server_url */
	call.provider = "somewhere";
	call.tool = "add";
	call.node = v = json_pack("{s:{s:s,s:s}}", "mcp_server", "type",
	    "constant", "value", fake_url("/mcp-sse"));
	CHECK(tool_invoke(tn_engine, &call, err, &r) == 0);
	CHECK_STR(res_text(&r), "42");
	tool_result_release(&r);
	json_decref(v);
	call.node = NULL;
	CHECK(tool_invoke(tn_engine, &call, err, &r) == ENGINE_ENOTFOUND);
	CHECK(strstr(err, "'somewhere/add' is not available in flowcgi") !=
	    NULL);
	tool_result_release(&r);

	tn_conf.http_allow_private = 0;
	call.provider = "calc";
	CHECK(tool_invoke(tn_engine, &call, err, &r) == ENGINE_EFETCH);
	CHECK(strstr(err, "refused") != NULL);
	tool_result_release(&r);
	tn_conf.http_allow_private = 1;
	json_decref(p);
}

int
main(void)
{
	tn_open();
	if (fake_start() != 0) {
		printf("# python3 or the fake is missing: skipped\n");
		CHECK(1);
		tn_close();
		return tap_done();
	}
	tn_conf.http_allow_private = 1;
	test_direct("/mcp");
	test_direct("/mcp-sse");
	test_provider();
	fake_stop();
	tn_close();
	return tap_done();
}
