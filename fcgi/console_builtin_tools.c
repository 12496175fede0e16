/*
 * console_builtin_tools.c — Settings > Tools for the built-in providers,
 * with the paths and shapes of Dify's console
 * (api/controllers/console/workspace/tool_providers.py):
 *
 *   GET  /console/api/workspaces/current/tool-providers      every provider
 *   GET  .../tools/builtin                                    with tools
 *   GET  .../tool-provider/builtin/{provider}/info            one
 *   GET  .../tool-provider/builtin/{provider}/tools           its tools
 *   GET  .../tool-provider/builtin/{provider}/credentials     masked
 *   GET  .../tool-provider/builtin/{provider}/credentials_schema
 *   POST .../tool-provider/builtin/{provider}/update {credentials}
 *   POST .../tool-provider/builtin/{provider}/delete
 *   PUT / DELETE .../tool-provider/builtin/{provider}/credentials
 *   POST .../tool-provider/builtin/{provider}/credentials/test
 *        {credentials?}: the provider's test call, with them
 *   GET  /console/api/apps/imports/{app_id}/check-dependencies
 *   GET  .../tool-providers/usage   which apps use which provider (ours)
 *
 * {provider} is a name ("tavily") or, as Dify 1.x sends it, a plugin id
 * of three segments ("langgenius/tavily/tavily"). Secrets are sealed at
 * rest and answered as a mask, which an update keeps.
 */

#include <string.h>

#include "fcgi/internal.h"

/* The provider the captures name: one segment, or three joined by '/'. */
static const char *
provider_of(struct req *r)
{
	if (r->ncaptures >= 3)
		return arena_printf(r->a, "%s/%s/%s", r->captures[0],
		    r->captures[1], r->captures[2]);
	return r->captures[0];
}

/* GET tool-providers, tools/builtin: every built-in provider, then the
 * registered MCP servers and the published workflow apps as workflow
 * tools (tool-providers only; ?type=builtin, mcp or workflow: those). */
static void
h_providers(struct req *r)
{
	json_t		*out = NULL, *mcp = NULL;
	const char	*type = req_query(r, "type");
	int		 rc, tools = strstr(r->path, "/tools/builtin") != NULL;

	if ((rc = engine_tool_builtin_list(r->eng, 1, &out)) != 0) {
		resp_engine_error(r, rc, "", "tool providers");
		return;
	}
	if (!tools && (type == NULL || strcmp(type, "mcp") == 0)) {
		if ((rc = engine_mcp_provider_list(r->eng, &mcp)) != 0) {
			json_decref(out);
			resp_engine_error(r, rc, "", "tool providers");
			return;
		}
		if (type != NULL) {
			json_decref(out);
			out = mcp;
			mcp = NULL;
		} else if (json_array_extend(out, mcp) != 0) {
			json_decref(out);
			json_decref(mcp);
			resp_error(r, 500, "internal_server_error",
			    "out of memory");
			return;
		}
	} else if (type != NULL && strcmp(type, "builtin") != 0 &&
	    strcmp(type, "workflow") != 0) {
		json_decref(out);
		out = json_array();
	}
	json_decref(mcp);
	mcp = NULL;
	/* the published workflow apps, as workflow tools */
	if (!tools && (type == NULL || strcmp(type, "workflow") == 0)) {
		if ((rc = engine_tool_workflow_list(r->eng, &mcp)) != 0) {
			json_decref(out);
			resp_engine_error(r, rc, "", "tool providers");
			return;
		}
		if (type != NULL) {
			json_decref(out);
			out = mcp;
			mcp = NULL;
		} else if (json_array_extend(out, mcp) != 0) {
			json_decref(out);
			json_decref(mcp);
			resp_error(r, 500, "internal_server_error",
			    "out of memory");
			return;
		}
		json_decref(mcp);
		mcp = NULL;
	}
	json_decref(mcp);
	resp_json(r, 200, out);
}

static json_t *
one(struct req *r)
{
	json_t	*out = NULL;
	int	 rc;

	if ((rc = engine_tool_builtin_get(r->eng, provider_of(r), &out)) !=
	    0) {
		resp_engine_error(r, rc, "", "tool provider");
		return NULL;
	}
	return out;
}

static void
h_info(struct req *r)
{
	json_t *p = one(r);

	if (p != NULL)
		resp_json(r, 200, p);
}

static void
h_tools(struct req *r)
{
	json_t *p = one(r);

	if (p == NULL)
		return;
	resp_json(r, 200, json_incref(json_object_get(p, "tools")));
	json_decref(p);
}

static void
h_schema(struct req *r)
{
	json_t *p = one(r);

	if (p == NULL)
		return;
	resp_json(r, 200, json_incref(json_object_get(p,
	    "credentials_schema")));
	json_decref(p);
}

static void
h_get(struct req *r)
{
	json_t	*out = NULL;
	int	 rc;

	if ((rc = engine_tool_credentials_get(r->eng, provider_of(r),
	    &out)) != 0) {
		resp_engine_error(r, rc, "", "tool provider");
		return;
	}
	resp_json(r, 200, out);
}

/* The credentials object of the body: {credentials: {...}}, or the body
 * itself for PUT .../credentials. NULL after answering 400. */
static const json_t *
body_credentials(struct req *r)
{
	const json_t *c;

	if (req_read_json(r) != 0)
		return NULL;
	if (!json_is_object(r->json)) {
		resp_error(r, 400, "invalid_param", "the body must be a JSON "
		    "object");
		return NULL;
	}
	c = json_object_get(r->json, "credentials");
	if (c == NULL && strcmp(r->method, "PUT") == 0)
		c = r->json;
	if (!json_is_object(c)) {
		resp_error(r, 400, "invalid_param", "credentials: an object "
		    "of the provider's credentials");
		return NULL;
	}
	return c;
}

static void
h_update(struct req *r)
{
	const json_t	*c;
	char		 err[ENGINE_ERRMAX] = "";
	int		 rc;

	if ((c = body_credentials(r)) == NULL)
		return;
	if ((rc = engine_tool_credentials_put(r->eng, provider_of(r), c,
	    err)) != 0) {
		resp_engine_error(r, rc, err, "tool provider");
		return;
	}
	resp_json(r, 200, json_pack("{s:s}", "result", "success"));
}

static void
h_delete(struct req *r)
{
	int rc;

	if ((rc = engine_tool_credentials_delete(r->eng, provider_of(r))) !=
	    0) {
		resp_engine_error(r, rc, "", "tool provider");
		return;
	}
	resp_json(r, 200, json_pack("{s:s}", "result", "success"));
}

/* POST .../credentials/test {credentials?}: {result: success}, or 400
 * credentials_invalid with what the provider answered. */
static void
h_test(struct req *r)
{
	const json_t	*c = NULL;
	char		 err[ENGINE_ERRMAX] = "";
	int		 rc;

	if (req_read_json(r) != 0)
		return;
	if (!json_is_object(r->json) || (json_object_get(r->json,
	    "credentials") != NULL && !json_is_object(c = json_object_get(
	    r->json, "credentials")))) {
		resp_error(r, 400, "invalid_param", "credentials: an object "
		    "of the provider's credentials");
		return;
	}
	rc = engine_tool_credentials_test(r->eng, provider_of(r), c, err);
	/* no such provider (nothing ran), or out of memory */
	if ((rc == ENGINE_ENOTFOUND && err[0] == '\0') ||
	    rc == ENGINE_ENOMEM) {
		resp_engine_error(r, rc, "", "tool provider");
		return;
	}
	if (rc != 0) {
		resp_error(r, 400, "credentials_invalid", "%s", err[0] ? err :
		    "the provider refused the call");
		return;
	}
	resp_json(r, 200, json_pack("{s:s}", "result", "success"));
}

/* GET tool-providers/usage: {provider: [{id, name}]} (flowcgi's own: the
 * settings page shows which apps use a provider) */
static void
h_usage(struct req *r)
{
	json_t	*out = NULL;
	int	 rc;

	if ((rc = engine_tool_usage(r->eng, &out)) != 0) {
		resp_engine_error(r, rc, "", "tool providers");
		return;
	}
	resp_json(r, 200, out);
}

/* GET /console/api/apps/imports/{app_id}/check-dependencies */
static void
h_check_deps(struct req *r)
{
	json_t	*out = NULL;
	int	 rc;

	if ((rc = engine_app_tool_deps(r->eng, r->captures[0], &out)) != 0) {
		resp_engine_error(r, rc, "", "app");
		return;
	}
	resp_json(r, 200, json_pack("{s:o}", "leaked_dependencies", out));
}

#define WS	"/console/api/workspaces/current"
#define BUILTIN	"/console/api/workspaces/current/tool-provider/builtin/{}"
#define PLUGIN	"/console/api/workspaces/current/tool-provider/builtin/{}/{}/{}"

const struct route console_builtin_tool_routes[] = {
	{ "GET", WS "/tool-providers", h_providers, AUTH_ADMIN },
	{ "GET", WS "/tools/builtin", h_providers, AUTH_ADMIN },
	{ "GET", WS "/tool-providers/usage", h_usage, AUTH_ADMIN },
	{ "GET", BUILTIN "/info", h_info, AUTH_ADMIN },
	{ "GET", BUILTIN "/tools", h_tools, AUTH_ADMIN },
	{ "GET", BUILTIN "/credentials", h_get, AUTH_ADMIN },
	{ "GET", BUILTIN "/credentials_schema", h_schema, AUTH_ADMIN },
	{ "POST", BUILTIN "/update", h_update, AUTH_ADMIN },
	{ "POST", BUILTIN "/delete", h_delete, AUTH_ADMIN },
	{ "PUT", BUILTIN "/credentials", h_update, AUTH_ADMIN },
	{ "DELETE", BUILTIN "/credentials", h_delete, AUTH_ADMIN },
	{ "POST", BUILTIN "/credentials/test", h_test, AUTH_ADMIN },
	{ "GET", PLUGIN "/info", h_info, AUTH_ADMIN },
	{ "GET", PLUGIN "/tools", h_tools, AUTH_ADMIN },
	{ "GET", PLUGIN "/credentials", h_get, AUTH_ADMIN },
	{ "GET", PLUGIN "/credentials_schema", h_schema, AUTH_ADMIN },
	{ "POST", PLUGIN "/update", h_update, AUTH_ADMIN },
	{ "POST", PLUGIN "/delete", h_delete, AUTH_ADMIN },
	{ "PUT", PLUGIN "/credentials", h_update, AUTH_ADMIN },
	{ "DELETE", PLUGIN "/credentials", h_delete, AUTH_ADMIN },
	{ "POST", PLUGIN "/credentials/test", h_test, AUTH_ADMIN },
	{ "GET", "/console/api/apps/imports/{}/check-dependencies",
	    h_check_deps, AUTH_ADMIN },
	{ NULL, NULL, NULL, AUTH_NONE },
};
