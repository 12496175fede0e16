/*
 * t_tools_fake.h — what the tool tests share: tests/fakes/fake_mcp.py
 * started on a free loopback port (MCP server, OpenAPI-described service,
 * web pages; see the script), the requests it saw, and a tool call
 * helper. Include after tap.h and t_node_run.h.
 */
#ifndef FLOWCGI_T_TOOLS_FAKE_H
#define FLOWCGI_T_TOOLS_FAKE_H

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/tools/tools.h"

static pid_t	fake_pid = -1;
static int	fake_port;

/* "http://127.0.0.1:<port><path>" in a static ring. */
static TN_UNUSED const char *
fake_url(const char *path)
{
	static char	buf[8][256];
	static int	i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "http://127.0.0.1:%d%s", fake_port,
	    path);
	return buf[i];
}

/*
 * Starts the fake; returns 0, or -1 when it could not start: a skip when
 * python3 is missing (a machine may lack it), else a failure (the fake is
 * part of the tree and must run). fake_begin does both.
 */
static TN_UNUSED int
fake_start(void)
{
	const char	*script = getenv("FLOWCGI_FAKE_MCP");
	int		 fds[2];
	char		 line[64];
	FILE		*f;

	if (script == NULL)
		script = "tests/fakes/fake_mcp.py";
	if (access(script, R_OK) != 0 || pipe(fds) != 0)
		return -1;
	if ((fake_pid = fork()) == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execlp("python3", "python3", script, "--port", "0",
		    (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	if (fake_pid < 0 || (f = fdopen(fds[0], "r")) == NULL)
		return -1;
	if (fgets(line, sizeof(line), f) == NULL ||
	    sscanf(line, "PORT %d", &fake_port) != 1) {
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

/*
 * Starts the fake for the tests that need it: 1 when it runs; 0 after a
 * TAP skip (no python3) or a failed check (it would not start).
 */
static TN_UNUSED int
fake_begin(void)
{
	if (system("command -v python3 >/dev/null 2>&1") != 0) {
		tap_skip("python3 is not installed: the tests against "
		    "tests/fakes/fake_mcp.py did not run");
		return 0;
	}
	return CHECK(fake_start() == 0);
}

static TN_UNUSED void
fake_stop(void)
{
	if (fake_pid > 0) {
		kill(fake_pid, SIGTERM);
		waitpid(fake_pid, NULL, 0);
		fake_pid = -1;
	}
}

/* GET or DELETE /requests of the fake (trusted). New reference or NULL. */
static TN_UNUSED json_t *
fake_requests(int clear)
{
	struct outbound_req	 req;
	struct outbound_resp	 resp;
	char			 err[ENGINE_ERRMAX];
	json_t			*r = NULL;

	memset(&req, 0, sizeof(req));
	req.url = fake_url("/requests");
	req.method = clear ? "DELETE" : "GET";
	req.trusted = 1;
	if (outbound_fetch(tn_engine, &req, err, &resp) != 0) {
		printf("# fake /requests: %s\n", err);
		return NULL;
	}
	r = json_loadb(resp.body, resp.len, 0, NULL);
	outbound_resp_release(&resp);
	return r;
}

/*
 * Calls provider/tool with params (stolen; NULL = {}). *text gets the
 * text (malloc'd, "" when none) and res the whole result (release it).
 * Returns tool_invoke's code; err holds its message.
 */
static TN_UNUSED int
tool_call_simple(const char *provider, const char *type, const char *tool,
    json_t *params, struct tool_result *res, char *err)
{
	struct tool_call	call;
	int			rc;

	memset(&call, 0, sizeof(call));
	memset(res, 0, sizeof(*res));
	call.provider = provider;
	call.provider_type = type;
	call.provider_name = provider;
	call.tool = tool;
	call.params = params ? params : json_object();
	err[0] = '\0';
	rc = tool_invoke(tn_engine, &call, err, res);
	if (rc != 0)
		printf("# %s/%s: %d %s\n", provider, tool, rc, err);
	json_decref((json_t *)call.params);
	return rc;
}

/* The text of a result ("" when none). */
static TN_UNUSED const char *
res_text(const struct tool_result *r)
{
	return r->text.p ? r->text.p : "";
}

#endif
