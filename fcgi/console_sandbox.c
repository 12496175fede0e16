/*
 * console_sandbox.c — sandbox provider settings in the console, Dify's
 * paths: GET /console/api/workspaces/current/sandbox-providers, and under
 * .../sandbox-provider/{type}: POST config, DELETE config, POST activate,
 * POST test. Secrets are masked on read and never logged.
 */

#include "fcgi/internal.h"

/* GET: [{provider_type, ..., config, config_schema}] */
static void
h_list(struct req *r)
{
	json_t	*out = NULL;
	int	 rc;

	if ((rc = engine_sandbox_provider_list(r->eng, &out)) != 0) {
		resp_engine_error(r, rc, "", "sandbox providers");
		return;
	}
	resp_json(r, 200, out);
}

/* A failed connection is the admin's config: 400 with its message. */
static void
fail_sandbox(struct req *r, int rc, const char *err)
{
	if (rc == ENGINE_ESANDBOX)
		resp_error(r, 400, "sandbox_config_invalid", "%s", err);
	else
		resp_engine_error(r, rc, err, "sandbox provider");
}

/* POST {"config":{...}}: validated by connecting, then saved. */
static void
h_config(struct req *r)
{
	char	err[ENGINE_ERRMAX] = "";
	int	rc;

	if (req_read_json(r) != 0)
		return;
	rc = engine_sandbox_provider_set(r->eng, r->captures[0], r->json, err);
	if (rc != 0) {
		fail_sandbox(r, rc, err);
		return;
	}
	resp_json(r, 200, json_pack("{s:s}", "result", "success"));
}

static void
h_delete(struct req *r)
{
	int rc;

	if ((rc = engine_sandbox_provider_delete(r->eng, r->captures[0]))
	    != 0) {
		resp_engine_error(r, rc, "", "sandbox provider config");
		return;
	}
	resp_json(r, 200, json_pack("{s:s}", "result", "success"));
}

static void
h_activate(struct req *r)
{
	char	err[ENGINE_ERRMAX] = "";
	int	rc;

	rc = engine_sandbox_provider_activate(r->eng, r->captures[0], err);
	if (rc != 0) {
		resp_engine_error(r, rc, err, "sandbox provider");
		return;
	}
	resp_json(r, 200, json_pack("{s:s}", "result", "success"));
}

/* POST {"config":{...}} or {}: test the connection; ssh pins its key. */
static void
h_test(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (req_read_json(r) != 0)
		return;
	rc = engine_sandbox_provider_test(r->eng, r->captures[0], r->json, err,
	    &out);
	if (rc != 0) {
		fail_sandbox(r, rc, err);
		return;
	}
	resp_json(r, 200, out);
}

const struct route console_sandbox_routes[] = {
	{ "GET", "/console/api/workspaces/current/sandbox-providers", h_list,
	    AUTH_ADMIN },
	{ "POST", "/console/api/workspaces/current/sandbox-provider/{}/config",
	    h_config, AUTH_ADMIN },
	{ "DELETE",
	    "/console/api/workspaces/current/sandbox-provider/{}/config",
	    h_delete, AUTH_ADMIN },
	{ "POST",
	    "/console/api/workspaces/current/sandbox-provider/{}/activate",
	    h_activate, AUTH_ADMIN },
	{ "POST", "/console/api/workspaces/current/sandbox-provider/{}/test",
	    h_test, AUTH_ADMIN },
	{ NULL, NULL, NULL, AUTH_NONE },
};
