/*
 * console_runs.c — an app's service API keys and run history in Dify's
 * console paths: /apps/{id}/api-keys, /apps/{id}/workflow-runs (+ one run,
 * + its node executions); and the workspace's knowledge bases.
 */

#include "fcgi/internal.h"

static void
h_keys_list(struct req *r)
{
	json_t	*out = NULL;
	int	 rc;

	if ((rc = engine_key_list(r->eng, r->captures[0], &out)) != 0) {
		resp_engine_error(r, rc, "", "app");
		return;
	}
	resp_json(r, 200, out);
}

static void
h_keys_create(struct req *r)
{
	json_t	*out = NULL;
	int	 rc;

	if ((rc = engine_key_create(r->eng, r->captures[0], &out)) != 0) {
		/* the limit's words for the limit only: an unknown app is
		 * "app not found" */
		resp_engine_error(r, rc, rc == ENGINE_ELIMIT ? "an app has at "
		    "most 100 API keys" : "", "app");
		return;
	}
	resp_json(r, 201, out);
}

static void
h_keys_delete(struct req *r)
{
	int rc;

	if ((rc = engine_key_delete(r->eng, r->captures[0],
	    r->captures[1])) != 0) {
		resp_engine_error(r, rc, "", "API key");
		return;
	}
	resp_empty(r, 204);
}

static void
h_runs_list(struct req *r)
{
	json_t	*out = NULL;
	int	 page, limit, rc;

	if (req_query_int(r, "page", 1, 1, 99999, &page) != 0 ||
	    req_query_int(r, "limit", 20, 1, 100, &limit) != 0)
		return;
	if ((rc = engine_run_list(r->eng, r->captures[0], page, limit,
	    &out)) != 0) {
		resp_engine_error(r, rc, "", "app");
		return;
	}
	resp_json(r, 200, out);
}

static void
h_run_get(struct req *r)
{
	json_t *run;

	run = req_app_run(r, r->captures[0], r->captures[1], "run");
	if (run != NULL)
		resp_json(r, 200, run);
}

static void
h_run_nodes(struct req *r)
{
	json_t	*run, *out = NULL;
	int	 rc;

	run = req_app_run(r, r->captures[0], r->captures[1], "run");
	if (run == NULL)
		return;
	json_decref(run);
	if ((rc = engine_run_nodes(r->eng, r->captures[1], &out)) != 0) {
		resp_engine_error(r, rc, "", "run");
		return;
	}
	resp_json(r, 200, out);
}

/* ====== Knowledge bases ====== */

static void
h_kb_list(struct req *r)
{
	json_t	*out = NULL;
	int	 rc;

	if ((rc = engine_knowledge_list(r->eng, &out)) != 0) {
		resp_engine_error(r, rc, "", "knowledge bases");
		return;
	}
	resp_json(r, 200, out);
}

static void
h_kb_set(struct req *r)
{
	char	err[ENGINE_ERRMAX] = "";
	int	rc;

	if (req_read_json(r) != 0)
		return;
	if ((rc = engine_knowledge_set(r->eng, r->captures[0], r->json,
	    err)) != 0) {
		resp_engine_error(r, rc, err, "knowledge base");
		return;
	}
	resp_json(r, 200, json_pack("{s:s}", "result", "success"));
}

static void
h_kb_delete(struct req *r)
{
	char	err[ENGINE_ERRMAX] = "";
	int	rc;

	if ((rc = engine_knowledge_delete(r->eng, r->captures[0], err)) != 0) {
		resp_engine_error(r, rc, err, "knowledge base");
		return;
	}
	resp_empty(r, 204);
}

#define K "/console/api/workspaces/current/knowledge-bases"
#define A "/console/api/apps/{}"
const struct route console_run_routes[] = {
	{ "GET", K, h_kb_list, AUTH_ADMIN },
	{ "POST", K "/{}", h_kb_set, AUTH_ADMIN },
	{ "DELETE", K "/{}", h_kb_delete, AUTH_ADMIN },
	{ "GET", A "/api-keys", h_keys_list, AUTH_ADMIN },
	{ "POST", A "/api-keys", h_keys_create, AUTH_ADMIN },
	{ "DELETE", A "/api-keys/{}", h_keys_delete, AUTH_ADMIN },
	{ "GET", A "/workflow-runs", h_runs_list, AUTH_ADMIN },
	{ "GET", A "/workflow-runs/{}", h_run_get, AUTH_ADMIN },
	{ "GET", A "/workflow-runs/{}/node-executions", h_run_nodes,
	    AUTH_ADMIN },
	{ NULL, NULL, NULL, AUTH_NONE },
};
#undef A
#undef K
