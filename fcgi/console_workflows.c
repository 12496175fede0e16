/*
 * console_workflows.c — an app's draft and published versions, and a chat
 * app's model config, in Dify's console paths and shapes:
 *
 *   GET  /console/api/apps/{id}/workflows/draft      the draft (Workflow)
 *   POST /console/api/apps/{id}/workflows/draft      save: {graph, features,
 *        environment_variables, conversation_variables, hash}
 *        -> {result, hash, updated_at}; a stale hash is 409
 *        draft_workflow_not_sync, as Dify answers it
 *        (and warnings: what keeps the draft from running, as an
 *        import's; variables that can never be valid are a 400)
 *   POST /console/api/apps/{id}/workflows/publish    {marked_name?,
 *        marked_comment?} -> {result, created_at}; a draft that fails
 *        the checks is 400 {code: invalid_draft, message: the first
 *        problem, status, errors: [{node_id, edge_id?, field, message}]}
 *        and the published versions stay as they were
 *   GET  /console/api/apps/{id}/workflows/publish    the latest version
 *        (null when never published)
 *   GET  /console/api/apps/{id}/workflows            ?page&limit&named_only
 *        -> {items, page, limit, has_more}, newest first
 *   POST /console/api/apps/{id}/workflows/{wf}/restore  the version into
 *        the draft -> {result, hash, updated_at}
 *   POST /console/api/apps/{id}/model-config         a chat, agent-chat or
 *        completion app's whole model config -> {result}
 *
 * versions.c says what is stored and which version the service API runs.
 */
#include <string.h>
#include <strings.h>

#include "fcgi/internal.h"

/* An engine error, with Dify's codes for a draft that is not there. */
static void
send_error(struct req *r, int rc, const char *err)
{
	if (rc == ENGINE_ECONFLICT)
		resp_error(r, 409, "draft_workflow_not_sync", "Workflow graph "
		    "might have been modified, please refresh and resubmit.");
	else
		resp_engine_error(r, rc, err, "app");
}

/* GET .../workflows/draft */
static void
h_draft_get(struct req *r)
{
	json_t	*res = NULL;
	int	 rc;

	rc = engine_draft_view(r->eng, r->captures[0], &res);
	if (rc == ENGINE_EINVAL) {
		resp_error(r, 404, "draft_workflow_not_exist", "Workflow not "
		    "initialized: this app runs a model config, not a "
		    "workflow");
		return;
	}
	if (rc != 0) {
		send_error(r, rc, "");
		return;
	}
	resp_json(r, 200, res);
}

/* POST .../workflows/draft */
static void
h_draft_save(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*res = NULL;
	int	 rc;

	if (req_read_json(r) != 0)
		return;
	if ((rc = engine_draft_save(r->eng, r->captures[0], r->json, err,
	    &res)) != 0) {
		send_error(r, rc, err);
		return;
	}
	resp_json(r, 200, res);
}

/* POST .../workflows/publish */
static void
h_publish(struct req *r)
{
	const char	*name, *comment;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*ver = NULL;
	int		 rc;

	if (req_read_json(r) != 0 ||
	    req_json_string(r, "marked_name", 0, &name) != 0 ||
	    req_json_string(r, "marked_comment", 0, &comment) != 0)
		return;
	if ((rc = engine_publish(r->eng, r->captures[0], name, comment, err,
	    &ver)) != 0) {
		if (rc == ENGINE_EINVAL && ver != NULL) {
			/* Dify has no code of its own for this one */
			resp_json(r, 400, json_pack("{s:s,s:s,s:i,s:o}", "code",
			    "invalid_draft", "message", err, "status", 400,
			    "errors", ver));
			return;
		}
		send_error(r, rc, err);
		return;
	}
	/* Dify's answer, and the version made (flowcgi's own) */
	resp_json(r, 200, json_pack("{s:s,s:O,s:O,s:O}", "result", "success",
	    "created_at", json_object_get(ver, "created_at"), "id",
	    json_object_get(ver, "id"), "version", json_object_get(ver,
	    "version")));
	json_decref(ver);
}

/* GET .../workflows/publish */
static void
h_published(struct req *r)
{
	json_t	*res = NULL, *rec = NULL;
	int	 rc;

	rc = engine_version_view(r->eng, r->captures[0], NULL, &res);
	if (rc == ENGINE_ENOTFOUND &&
	    (rc = engine_app_get(r->eng, r->captures[0], &rec)) == 0) {
		json_decref(rec);
		resp_json(r, 200, json_null());	/* never published */
		return;
	}
	if (rc != 0) {
		send_error(r, rc, "");
		return;
	}
	resp_json(r, 200, res);
}

/* GET .../workflows */
static void
h_versions(struct req *r)
{
	const char	*named = req_query(r, "named_only");
	json_t		*res = NULL;
	int		 page, limit, rc;

	if (req_query_int(r, "page", 1, 1, 99999, &page) != 0 ||
	    req_query_int(r, "limit", 10, 1, 100, &limit) != 0)
		return;
	rc = engine_versions_list(r->eng, r->captures[0], page, limit,
	    named != NULL && (strcasecmp(named, "true") == 0 ||
	    strcmp(named, "1") == 0), &res);
	if (rc != 0) {
		send_error(r, rc, "");
		return;
	}
	resp_json(r, 200, res);
}

/* POST .../workflows/{wf}/restore */
static void
h_restore(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*res = NULL;
	int	 rc;

	rc = engine_version_restore(r->eng, r->captures[0], r->captures[1],
	    err, &res);
	if (rc == ENGINE_ENOTFOUND) {
		resp_error(r, 404, "not_found", "Workflow not found.");
		return;
	}
	if (rc != 0) {
		send_error(r, rc, err);
		return;
	}
	resp_json(r, 200, res);
}

/* POST .../model-config */
static void
h_model_config(struct req *r)
{
	char	err[ENGINE_ERRMAX] = "";
	int	rc;

	if (req_read_json(r) != 0)
		return;
	if ((rc = engine_model_config_set(r->eng, r->captures[0], r->json,
	    err)) != 0) {
		send_error(r, rc, err);
		return;
	}
	resp_json(r, 200, json_pack("{s:s}", "result", "success"));
}

#define A "/console/api/apps/{}"
const struct route console_workflow_routes[] = {
	{ "GET", A "/workflows/draft", h_draft_get, AUTH_ADMIN },
	{ "POST", A "/workflows/draft", h_draft_save, AUTH_ADMIN },
	{ "GET", A "/workflows/publish", h_published, AUTH_ADMIN },
	{ "POST", A "/workflows/publish", h_publish, AUTH_ADMIN },
	{ "GET", A "/workflows", h_versions, AUTH_ADMIN },
	{ "POST", A "/workflows/{}/restore", h_restore, AUTH_ADMIN },
	{ "POST", A "/model-config", h_model_config, AUTH_ADMIN },
	{ NULL, NULL, NULL, AUTH_NONE },
};
#undef A
