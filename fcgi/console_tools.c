/*
 * console_tools.c — MCP servers in the console, with the paths and shapes
 * of Dify's (api/controllers/console/workspace/tool_providers.py):
 *
 *   POST   /console/api/workspaces/current/tool-provider/mcp     create
 *   PUT    .../tool-provider/mcp {provider_id, ...}               update
 *   DELETE .../tool-provider/mcp {provider_id}                    delete
 *   POST   .../tool-provider/mcp/auth {provider_id}               connect
 *   GET    .../tool-provider/mcp/tools/{provider_id}              one
 *   GET    .../tool-provider/mcp/update/{provider_id}             refresh
 *   GET    /console/api/workspaces/current/tools/mcp              all
 *
 * Secrets (the URL, header values, an OAuth client) are sealed at rest
 * and never answered (engine_mcp_provider_*). A server registered here
 * is trusted like a model provider: it may be on loopback.
 */

#include "fcgi/internal.h"

/* POST: the view of the new server (its tools listed, best effort). */
static void
h_create(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (req_read_json(r) != 0)
		return;
	if ((rc = engine_mcp_provider_create(r->eng, r->json, err, &out)) !=
	    0) {
		resp_engine_error(r, rc, err, "MCP tool");
		return;
	}
	resp_json(r, 200, out);
}

/* PUT {provider_id, ...}: {"result": "success"} */
static void
h_update(struct req *r)
{
	char	err[ENGINE_ERRMAX] = "";
	int	rc;

	if (req_read_json(r) != 0)
		return;
	if ((rc = engine_mcp_provider_update(r->eng, r->json, err)) != 0) {
		resp_engine_error(r, rc, err, "MCP tool");
		return;
	}
	resp_json(r, 200, json_pack("{s:s}", "result", "success"));
}

/* DELETE {provider_id}: {"result": "success"} */
static void
h_delete(struct req *r)
{
	const char	*id;
	int		 rc;

	if (req_read_json(r) != 0 ||
	    req_json_string(r, "provider_id", 1, &id) != 0)
		return;
	if ((rc = engine_mcp_provider_delete(r->eng, id)) != 0) {
		resp_engine_error(r, rc, "", "MCP tool");
		return;
	}
	resp_json(r, 200, json_pack("{s:s}", "result", "success"));
}

/* POST {provider_id, authorization_code?}: connects and stores the
 * tools; {"result": "success"}. */
static void
h_auth(struct req *r)
{
	char		 err[ENGINE_ERRMAX] = "";
	const char	*id;
	int		 rc;

	if (req_read_json(r) != 0 ||
	    req_json_string(r, "provider_id", 1, &id) != 0)
		return;
	if ((rc = engine_mcp_provider_refresh(r->eng, id, 1, err, NULL)) !=
	    0) {
		resp_engine_error(r, rc, err, "MCP tool");
		return;
	}
	resp_json(r, 200, json_pack("{s:s}", "result", "success"));
}

/* GET tools/{provider_id}: the stored view. */
static void
h_get(struct req *r)
{
	json_t	*out = NULL;
	int	 rc;

	if ((rc = engine_mcp_provider_get(r->eng, r->captures[0], &out)) !=
	    0) {
		resp_engine_error(r, rc, "", "MCP tool");
		return;
	}
	resp_json(r, 200, out);
}

/* GET update/{provider_id}: the tools read from the server now. */
static void
h_refresh(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if ((rc = engine_mcp_provider_refresh(r->eng, r->captures[0], 0, err,
	    &out)) != 0) {
		resp_engine_error(r, rc, err, "MCP tool");
		return;
	}
	resp_json(r, 200, out);
}

/* GET: [view, ...] */
static void
h_list(struct req *r)
{
	json_t	*out = NULL;
	int	 rc;

	if ((rc = engine_mcp_provider_list(r->eng, &out)) != 0) {
		resp_engine_error(r, rc, "", "MCP tools");
		return;
	}
	resp_json(r, 200, out);
}

#define MCP_BASE	"/console/api/workspaces/current/tool-provider/mcp"

const struct route console_tool_routes[] = {
	{ "POST", MCP_BASE, h_create, AUTH_ADMIN },
	{ "PUT", MCP_BASE, h_update, AUTH_ADMIN },
	{ "DELETE", MCP_BASE, h_delete, AUTH_ADMIN },
	{ "POST", MCP_BASE "/auth", h_auth, AUTH_ADMIN },
	{ "GET", MCP_BASE "/tools/{}", h_get, AUTH_ADMIN },
	{ "GET", MCP_BASE "/update/{}", h_refresh, AUTH_ADMIN },
	{ "GET", "/console/api/workspaces/current/tools/mcp", h_list,
	    AUTH_ADMIN },
	{ NULL, NULL, NULL, AUTH_NONE },
};
