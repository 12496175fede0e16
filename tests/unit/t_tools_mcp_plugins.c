/*
 * t_tools_mcp_plugins.c — the MCP-client plugins junjiem/mcp_sse and
 * arrenxxxxx/mcp_config_during_use against the real MCP reference server,
 * @modelcontextprotocol/server-everything (tests/mcp-everything; `npm ci`
 * there installs it), run on loopback in Streamable HTTP and in HTTP+SSE
 * mode: the plugins' answers (the tools list, a call's content), their
 * failures (missing or malformed parameters), the credential sealed at
 * rest and never in an error, and the trust rule: a URL in app content
 * meets the SSRF guard unless it is exactly a registered server's, while
 * the admin's servers_config credential is trusted. Without node or the
 * installed server the checks are a counted skip.
 */
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>

#include "tap.h"
#include "t_node_run.h"
#include "t_tools_fake.h"

#define EV_DIR	"tests/mcp-everything"
#define EV_MAIN	"node_modules/@modelcontextprotocol/server-everything/dist/" \
		"index.js"

static pid_t	ev_pid[2] = { -1, -1 };
static int	ev_port[2];
static pthread_t ev_drain[2];
static int	ev_draining[2];

/* Reads the server's log to its end, so that it never blocks on it. */
static void *
drain_main(void *arg)
{
	FILE	*f = arg;
	char	 line[512];

	while (fgets(line, sizeof(line), f) != NULL)
		;
	fclose(f);
	return NULL;
}

/* A free loopback port (bound, read, closed), or -1. */
static int
free_port(void)
{
	struct sockaddr_in	a;
	socklen_t		len = sizeof(a);
	int			fd, port = -1;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/*
 * Starts the reference server in transport mode ("streamableHttp",
 * "sse") as server i; returns 0 once its log says it listens, -1 when it
 * did not start (its log printed).
 */
static int
ev_start(int i, const char *transport)
{
	char	 port[16], line[512];
	int	 fds[2], up = 0;
	FILE	*f;

	if ((ev_port[i] = free_port()) < 0 || pipe(fds) != 0)
		return -1;
	snprintf(port, sizeof(port), "%d", ev_port[i]);
	if ((ev_pid[i] = fork()) == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		if (chdir(EV_DIR) != 0)
			_exit(127);
		setenv("PORT", port, 1);
		execlp("node", "node", "-r", "./loopback.cjs", EV_MAIN,
		    transport, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	if (ev_pid[i] < 0 || (f = fdopen(fds[0], "r")) == NULL)
		return -1;
	/* the server says "... listening on port N" / "running on port N" */
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strstr(line, "on port") != NULL) {
			up = 1;
			break;
		}
		printf("# server-everything: %s", line);
	}
	if (!up || pthread_create(&ev_drain[i], NULL, drain_main, f) != 0) {
		fclose(f);
		return -1;
	}
	ev_draining[i] = 1;
	return 0;
}

static void
ev_stop(void)
{
	int i;

	for (i = 0; i < 2; i++)
		if (ev_pid[i] > 0) {
			kill(ev_pid[i], SIGTERM);
			waitpid(ev_pid[i], NULL, 0);
			ev_pid[i] = -1;
			if (ev_draining[i])
				pthread_join(ev_drain[i], NULL);
			ev_draining[i] = 0;
		}
}

static const char *
ev_url(int i, const char *path)
{
	static char	buf[4][128];
	static int	k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "http://127.0.0.1:%d%s", ev_port[i],
	    path);
	return buf[k];
}

/* ====== arrenxxxxx/mcp_config_during_use ====== */

#define CFG "arrenxxxxx/mcp_config_during_use/mcp_config"

static void
test_config(void)
{
	struct tool_result	 r;
	json_t			*in, *v = NULL, *d = NULL, *tools;
	char			 err[ENGINE_ERRMAX];
	const char		*http = ev_url(0, "/mcp"), *sse = ev_url(1,
				    "/sse");

	/* found by its Dify id; its tools and their parameters */
	CHECK(tool_provider_lookup(tn_engine, CFG, "builtin") ==
	    &tool_provider_mcp_config_during_use);
	{
		struct tool_call c;

		memset(&c, 0, sizeof(c));
		c.provider = CFG;
		c.provider_type = "builtin";
		c.tool = "mcp_call_tool";
		CHECK(tool_describe(tn_engine, &c, err, &d) == 0);
		CHECK_STR(tn_dump(json_object_get(json_object_get(
		    json_array_get(d, 0), "parameters"), "required")),
		    "[\"server_url\",\"tool_name\"]");
		json_decref(d);
		d = NULL;
	}

	/* app content naming a loopback server: the SSRF guard answers, as
	 * the plugin answers a failure, in text */
	tn_conf.http_allow_private = 0;
	CHECK(tool_call_simple(CFG, "builtin", "mcp_list_tools", json_pack(
	    "{s:s}", "server_url", http), &r, err) == 0);
	CHECK(strncmp(res_text(&r), "Error listing MCP Server tools: ", 32) ==
	    0);
	CHECK(strstr(res_text(&r), "127.0.0.1") != NULL);
	printf("# %s\n", res_text(&r));
	tool_result_release(&r);

	/* registered with exactly that URL: trusted */
	in = json_pack("{s:s,s:s,s:s}", "name", "everything", "type", "mcp",
	    "server_url", http);
	CHECK(engine_tool_provider_put(tn_engine, in, err, &v) == 0);
	json_decref(in);
	json_decref(v);
	CHECK(tool_call_simple(CFG, "builtin", "mcp_list_tools", json_pack(
	    "{s:s,s:s}", "server_url", http, "headers", "{}"), &r, err) == 0);
	tools = json_loads(res_text(&r), 0, NULL);
	CHECK(json_is_array(tools) && json_array_size(tools) >= 5);
	/* the server's tools as it lists them: inputSchema, not parameters */
	CHECK(strstr(res_text(&r), "\"name\": \"get-sum\"") != NULL);
	CHECK(strstr(res_text(&r), "\"inputSchema\": {") != NULL);
	json_decref(tools);
	tool_result_release(&r);
	CHECK(tool_call_simple(CFG, "builtin", "mcp_call_tool", json_pack(
	    "{s:s,s:s,s:s}", "server_url", http, "tool_name", "get-sum",
	    "arguments", "{\"a\": 2, \"b\": 3}"), &r, err) == 0);
	CHECK_STR(res_text(&r), "[{\"type\": \"text\", \"text\": \"The sum "
	    "of 2 and 3 is 5.\"}]");
	tool_result_release(&r);
	/* arguments given as an object (an agent's) are taken as they are */
	CHECK(tool_call_simple(CFG, "builtin", "mcp_call_tool", json_pack(
	    "{s:s,s:s,s:{s:s}}", "server_url", http, "tool_name", "echo",
	    "arguments", "message", "héllo"), &r, err) == 0);
	CHECK_STR(res_text(&r), "[{\"type\": \"text\", \"text\": \"Echo: "
	    "héllo\"}]");
	tool_result_release(&r);

	/* a private address allowed by the admin: the HTTP+SSE server */
	tn_conf.http_allow_private = 1;
	CHECK(tool_call_simple(CFG, "builtin", "mcp_call_tool", json_pack(
	    "{s:s,s:s,s:s,s:i}", "server_url", sse, "tool_name", "echo",
	    "arguments", "{\"message\": \"over sse\"}", "timeout", 20), &r,
	    err) == 0);
	CHECK_STR(res_text(&r), "[{\"type\": \"text\", \"text\": \"Echo: "
	    "over sse\"}]");
	tool_result_release(&r);
	tn_conf.http_allow_private = 0;

	/* what the plugin refuses with a ValueError: final failures */
	CHECK(tool_call_simple(CFG, "builtin", "mcp_list_tools", NULL, &r,
	    err) == ENGINE_EINVAL);
	CHECK(r.final);
	CHECK_STR(err, "Please fill in the server_url");
	tool_result_release(&r);
	CHECK(tool_call_simple(CFG, "builtin", "mcp_call_tool", json_pack(
	    "{s:s}", "server_url", http), &r, err) == ENGINE_EINVAL);
	CHECK_STR(err, "Please fill in the tool_name");
	tool_result_release(&r);
	CHECK(tool_call_simple(CFG, "builtin", "mcp_call_tool", json_pack(
	    "{s:s,s:s,s:s}", "server_url", http, "tool_name", "echo",
	    "arguments", "{not json"), &r, err) == ENGINE_EINVAL);
	CHECK(r.final);
	CHECK_STR(err, "Arguments must be a valid JSON string");
	tool_result_release(&r);
	CHECK(tool_call_simple(CFG, "builtin", "mcp_list_tools", json_pack(
	    "{s:s,s:s}", "server_url", http, "headers", "[1"), &r, err) ==
	    ENGINE_EINVAL);
	CHECK_STR(err, "Headers must be a valid JSON string");
	tool_result_release(&r);
	CHECK(tool_call_simple(CFG, "builtin", "no_such", NULL, &r, err) ==
	    ENGINE_ENOTFOUND);
	tool_result_release(&r);
}

/* ====== junjiem/mcp_sse ====== */

#define SSE "junjiem/mcp_sse/mcp_sse"

static void
test_sse(void)
{
	struct tool_result	 r;
	struct tool_call	 c;
	json_t			*cred, *stored = NULL, *v = NULL, *d = NULL;
	char			 err[ENGINE_ERRMAX], cfg[512];
	const char		*k;

	/* the manifest gives the credential's schema; the C file runs */
	CHECK(tool_provider_lookup(tn_engine, SSE, "builtin") ==
	    &tool_provider_mcp_sse);
	CHECK(tool_manifest_find(tn_engine, SSE) != NULL);
	CHECK(engine_tool_builtin_get(tn_engine, SSE, &v) == 0);
	CHECK_STR(json_string_value(json_object_get(json_array_get(
	    json_object_get(v, "credentials_schema"), 0), "name")),
	    "servers_config");
	json_decref(v);
	memset(&c, 0, sizeof(c));
	c.provider = SSE;
	c.tool = "mcp_sse_call_tool";
	CHECK(tool_describe(tn_engine, &c, err, &d) == 0);
	CHECK_STR(tn_dump(json_object_get(json_object_get(json_array_get(d,
	    0), "parameters"), "required")), "[\"tool_name\",\"arguments\"]");
	json_decref(d);

	/* no credential and no parameter: the plugin's ValueError */
	CHECK(tool_call_simple(SSE, "builtin", "mcp_sse_list_tools", NULL, &r,
	    err) == ENGINE_EINVAL);
	CHECK(r.final);
	CHECK_STR(err, "Please fill in the servers_config");
	tool_result_release(&r);

	/* the admin's credential: both servers, on loopback, trusted; the
	 * header a token the error messages never show */
	snprintf(cfg, sizeof(cfg), "{\"mcpServers\": {\"http\": {\"url\": "
	    "\"%s\", \"headers\": {\"X-Token\": \"tok-5ec7e7\"}, \"timeout\": "
	    "30}, \"sse\": {\"url\": \"%s\", \"sse_read_timeout\": 60}}}",
	    ev_url(0, "/mcp"), ev_url(1, "/sse"));
	cred = json_pack("{s:s}", "servers_config", cfg);
	CHECK(engine_tool_credentials_put(tn_engine, "mcp_sse", cred, err) ==
	    0);
	json_decref(cred);
	/* sealed at rest, masked when read back */
	CHECK(engine_tool_credentials_get(tn_engine, "mcp_sse", &stored) ==
	    0);
	CHECK_STR(json_string_value(json_object_get(stored,
	    "servers_config")), ENGINE_SECRET_MASK);
	json_decref(stored);

	tn_conf.http_allow_private = 0;
	CHECK(tool_call_simple(SSE, "builtin", "mcp_sse_list_tools", NULL, &r,
	    err) == 0);
	CHECK(strncmp(res_text(&r), "MCP Server tools list: \n[{'name': ", 34)
	    == 0);
	/* the tools of both servers, as {name, description, parameters} */
	{
		const char	*t = res_text(&r), *p;
		int		 n = 0;

		for (p = t; (p = strstr(p, "'name': 'get-sum'")) != NULL; p++)
			n++;
		CHECK_INT(n, 2);
		CHECK(strstr(t, "'parameters': {") != NULL);
		CHECK(strstr(t, "inputSchema") == NULL);
	}
	tool_result_release(&r);
	CHECK(tool_call_simple(SSE, "builtin", "mcp_sse_call_tool", json_pack(
	    "{s:s,s:s}", "tool_name", "get-sum", "arguments",
	    "{\"a\": 20, \"b\": 22}"), &r, err) == 0);
	CHECK_STR(res_text(&r), "Tool execution result: [{'type': 'text', "
	    "'text': 'The sum of 20 and 22 is 42.'}]");
	tool_result_release(&r);
	CHECK(tool_call_simple(SSE, "builtin", "mcp_sse_call_tool", json_pack(
	    "{s:s,s:s}", "tool_name", "no-such-tool", "arguments", "{}"), &r,
	    err) == 0);
	CHECK(strncmp(res_text(&r), "Error executing tool: ", 22) == 0);
	tool_result_release(&r);
	CHECK(tool_call_simple(SSE, "builtin", "mcp_sse_call_tool", json_pack(
	    "{s:s}", "tool_name", "echo"), &r, err) == ENGINE_EINVAL);
	CHECK_STR(err, "Please fill in the arguments");
	tool_result_release(&r);

	/* within a run's pool: one session per server for both calls */
	memset(&c, 0, sizeof(c));
	memset(&r, 0, sizeof(r));
	c.provider = SSE;
	c.provider_type = "builtin";
	c.tool = "mcp_sse_call_tool";
	c.params = v = json_pack("{s:s,s:s}", "tool_name", "echo",
	    "arguments", "{\"message\": \"pooled\"}");
	CHECK((c.mcp = mcp_pool_new()) != NULL);
	CHECK(tool_invoke(tn_engine, &c, err, &r) == 0);
	CHECK_STR(res_text(&r), "Tool execution result: [{'type': 'text', "
	    "'text': 'Echo: pooled'}]");
	tool_result_release(&r);
	CHECK(tool_invoke(tn_engine, &c, err, &r) == 0);
	tool_result_release(&r);
	mcp_pool_free(tn_engine, c.mcp);
	json_decref(v);

	/* a bad credential: what is wrong, never its text */
	cred = json_pack("{s:s}", "servers_config", "{\"x\": {\"url\": "
	    "\"ftp://tok-5ec7e7\"}}");
	CHECK(engine_tool_credentials_put(tn_engine, "mcp_sse", cred, err) ==
	    0);
	json_decref(cred);
	CHECK(tool_call_simple(SSE, "builtin", "mcp_sse_list_tools", NULL, &r,
	    err) == ENGINE_EINVAL);
	CHECK(strstr(err, "tok-5ec7e7") == NULL);
	printf("# %s\n", err);
	tool_result_release(&r);
	cred = json_pack("{s:s}", "servers_config", "{\"x\": tok-5ec7e7");
	CHECK(engine_tool_credentials_put(tn_engine, "mcp_sse", cred, err) ==
	    0);
	json_decref(cred);
	CHECK(tool_call_simple(SSE, "builtin", "mcp_sse_list_tools", NULL, &r,
	    err) == ENGINE_EINVAL);
	CHECK(r.final);
	CHECK(strncmp(err, "servers_config must be a valid JSON string", 42) ==
	    0);
	CHECK(strstr(err, "tok-5ec7e7") == NULL);
	tool_result_release(&r);
	CHECK(engine_tool_credentials_delete(tn_engine, "mcp_sse") == 0);

	/* servers_config as a node parameter is app content: guarded */
	CHECK(tool_call_simple(SSE, "builtin", "mcp_sse_list_tools", json_pack(
	    "{s:s}", "servers_config", cfg), &r, err) == 0);
	CHECK(strncmp(res_text(&r), "Error listing MCP Server tools: ", 32) ==
	    0);
	tool_result_release(&r);
	(void)k;
}

int
main(void)
{
	tn_open();
	/* a fresh clone has no node_modules: install the pinned server from
	 * its package-lock.json, as tests/e2e/t_mcp.sh does, one install at
	 * a time (tests/npm-install.sh: t_mcp.sh may run beside this) */
	if (system("command -v node >/dev/null 2>&1") == 0 &&
	    system("command -v npm >/dev/null 2>&1") == 0 &&
	    !CHECK(system("sh tests/npm-install.sh " EV_DIR " " EV_MAIN
	    " >/dev/null 2>&1") == 0))
		printf("# npm ci in " EV_DIR " failed\n");
	if (system("command -v node >/dev/null 2>&1") != 0 ||
	    access(EV_DIR "/" EV_MAIN, R_OK) != 0) {
		tap_skip("node or @modelcontextprotocol/server-everything is "
		    "missing (npm ci in tests/mcp-everything): the MCP plugin "
		    "tests did not run");
		tn_close();
		return tap_done();
	}
	if (!CHECK(ev_start(0, "streamableHttp") == 0) ||
	    !CHECK(ev_start(1, "sse") == 0)) {
		ev_stop();
		tn_close();
		return tap_done();
	}
	test_config();
	test_sse();
	ev_stop();
	tn_close();
	return tap_done();
}
