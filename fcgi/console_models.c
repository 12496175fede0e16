/*
 * console_models.c — model provider settings in the console:
 * /console/api/workspaces/current/model-providers (list), .../{name}
 * (create or replace, delete) and .../{name}/test. API keys are masked on
 * read (Dify's HIDDEN_VALUE) and never logged.
 */

#include "fcgi/internal.h"

/* GET: {data: [entry, ...]} */
static void
h_list(struct req *r)
{
	json_t	*out = NULL;
	int	 rc;

	if ((rc = engine_model_provider_list(r->eng, &out)) != 0) {
		resp_engine_error(r, rc, "", "model providers");
		return;
	}
	resp_json(r, 200, out);
}

/* POST {protocol, base_url, api_key, models}: the entry as listed. */
static void
h_set(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (req_read_json(r) != 0)
		return;
	rc = engine_model_provider_set(r->eng, r->captures[0], r->json, err,
	    &out);
	if (rc != 0) {
		resp_engine_error(r, rc, err, "model provider");
		return;
	}
	resp_json(r, 200, out);
}

static void
h_delete(struct req *r)
{
	int rc;

	if ((rc = engine_model_provider_delete(r->eng, r->captures[0])) != 0) {
		resp_engine_error(r, rc, "", "model provider");
		return;
	}
	resp_json(r, 200, json_pack("{s:s}", "result", "success"));
}

/* POST {model?}: a tiny chat request through the entry. */
static void
h_test(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (req_read_json(r) != 0)
		return;
	rc = engine_model_provider_test(r->eng, r->captures[0], r->json, err,
	    &out);
	if (rc == ENGINE_EFETCH) {
		resp_error(r, 400, "provider_test_failed", "%s", err);
		return;
	}
	if (rc != 0) {
		resp_engine_error(r, rc, err, "model provider");
		return;
	}
	resp_json(r, 200, out);
}

const struct route console_model_routes[] = {
	{ "GET", "/console/api/workspaces/current/model-providers", h_list,
	    AUTH_ADMIN },
	{ "POST", "/console/api/workspaces/current/model-providers/{}", h_set,
	    AUTH_ADMIN },
	{ "DELETE", "/console/api/workspaces/current/model-providers/{}",
	    h_delete, AUTH_ADMIN },
	{ "POST", "/console/api/workspaces/current/model-providers/{}/test",
	    h_test, AUTH_ADMIN },
	{ NULL, NULL, NULL, AUTH_NONE },
};
