/*
 * console_apps.c — /console/api/apps: list, create, read, update, delete,
 * copy, in Dify's paths and JSON shapes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi/internal.h"

/* ====== Views ====== */

static const char *
app_runtime_type(const json_t *rec)
{
	return engine_app_is_sandboxed(rec) ? "sandboxed" : "classic";
}

/* {id, created_by, created_at, updated_by, updated_at} or null. */
static json_t *
app_workflow_partial(const json_t *rec)
{
	json_t *wf = json_object_get(rec, "workflow");

	if (!json_is_object(wf))
		return json_null();
	return json_pack("{s:O,s:n,s:O,s:n,s:O}", "id",
	    json_object_get(wf, "id"), "created_by", "created_at",
	    json_object_get(wf, "created_at"), "updated_by", "updated_at",
	    json_object_get(wf, "updated_at"));
}

/* v[k] = rec[k] when rec has it. 0, or -1 when out of memory. */
static int
copy_member(json_t *v, const json_t *rec, const char *k)
{
	json_t *x = json_object_get(rec, k);

	return x != NULL ? json_object_set(v, k, x) : 0;
}

/*
 * Dify's AppPartial (list=1) or AppDetailWithSite (list=0); NULL when out
 * of memory.
 */
static json_t *
app_view(struct req *r, const json_t *rec, int list)
{
	static const char *const copied[] = {
		"id", "name", "description", "mode", "icon_type", "icon",
		"icon_background", "use_icon_as_answer_icon",
		"max_active_requests", "created_at", "updated_at", NULL,
	};
	json_t		*v, *mc;
	size_t		 i;
	int		 bad = 0;

	if ((v = json_object()) == NULL)
		return NULL;
	for (i = 0; copied[i] != NULL; i++)
		bad |= copy_member(v, rec, copied[i]);
	bad |= json_object_set_new(v, "icon_url", json_null());
	mc = json_object_get(rec, "model_config");
	bad |= json_object_set_new(v, "model_config", mc ? json_incref(mc) :
	    json_null());
	bad |= json_object_set_new(v, "workflow", app_workflow_partial(rec));
	bad |= json_object_set_new(v, "created_by", json_null());
	bad |= json_object_set_new(v, "updated_by", json_null());
	bad |= json_object_set_new(v, "tags", json_array());
	bad |= json_object_set_new(v, "access_mode", json_string("public"));
	bad |= json_object_set_new(v, "runtime_type",
	    json_string(app_runtime_type(rec)));
	if (list) {
		bad |= json_object_set_new(v, "create_user_name", json_null());
		bad |= json_object_set_new(v, "author_name", json_null());
		bad |= json_object_set_new(v, "has_draft_trigger",
		    json_false());
		goto out;
	}
	bad |= copy_member(v, rec, "enable_site");
	bad |= copy_member(v, rec, "enable_api");
	bad |= json_object_set_new(v, "tracing", json_null());
	bad |= json_object_set_new(v, "deleted_tools", json_array());
	bad |= json_object_set_new(v, "site", json_null());
	bad |= json_object_set_new(v, "api_base_url", json_sprintf("%s/v1",
	    req_base_url(r)));
	bad |= copy_member(v, rec, "revision");
	/* flowcgi's own: the classic app a sandboxed copy was made from,
	 * and the nodes its upgrade skipped ({node_id, title, reason}) */
	bad |= copy_member(v, rec, "upgraded_from");
out:
	if (bad) {
		json_decref(v);
		return NULL;
	}
	return v;
}

/* The ETag of rec: its revision, quoted; in r's arena, NULL when out of
 * memory. */
static const char *
app_etag(struct req *r, const json_t *rec)
{
	return arena_printf(r->a, "\"%" JSON_INTEGER_FORMAT "\"",
	    json_integer_value(json_object_get(rec, "revision")));
}

/*
 * Sends the detail view of rec with etag (NULL: app_etag of rec), the
 * revision it was built from; frees rec.
 */
static void
send_app(struct req *r, int status, json_t *rec, const char *etag)
{
	json_t		*v = app_view(r, rec, 0);
	const char	*id = json_string_value(json_object_get(rec, "id"));

	/* the Web App's site (made now for a new or copied app) */
	if (v != NULL && id != NULL && web_app_detail_site(r, id, v) != 0) {
		json_decref(v);
		json_decref(rec);
		return;
	}
	resp_header(r, "ETag", etag != NULL ? etag : app_etag(r, rec));
	resp_json(r, status, v);
	json_decref(rec);
}

/* ====== Handlers ====== */

static void
h_apps_list(struct req *r)
{
	struct app_query	 q = { 1, 20, NULL, NULL };
	json_t			*res = NULL, *data, *rec, *views;
	size_t			 i;
	int			 rc;

	if (req_query_int(r, "page", 1, 1, 99999, &q.page) != 0 ||
	    req_query_int(r, "limit", 20, 1, 100, &q.limit) != 0)
		return;
	q.mode = req_query(r, "mode");
	if (q.mode != NULL && *q.mode != '\0' && strcmp(q.mode, "all") != 0 &&
	    strcmp(q.mode, "channel") != 0 && !engine_app_mode_valid(q.mode)) {
		resp_error(r, 400, "invalid_param", "mode must be one of "
		    "completion, chat, advanced-chat, workflow, agent-chat, "
		    "channel, all");
		return;
	}
	q.name = req_query(r, "name");
	if ((rc = engine_app_list(r->eng, &q, &res)) != 0) {
		resp_engine_error(r, rc, NULL, "apps");
		return;
	}
	data = json_object_get(res, "data");
	if ((views = json_array()) == NULL) {
		json_decref(res);
		resp_error(r, 500, "internal_server_error", "out of memory");
		return;
	}
	json_array_foreach(data, i, rec)
		if (json_array_append_new(views, app_view(r, rec, 1)) != 0) {
			json_decref(views);
			views = NULL;	/* the answer is a 500 */
			break;
		}
	if (json_object_set_new(res, "data", views) != 0) {
		json_decref(res);
		resp_error(r, 500, "internal_server_error", "out of memory");
		return;
	}
	resp_json(r, 200, res);
}

static void
h_apps_create(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*rec = NULL;
	int	 rc;

	if (req_read_json(r) != 0)
		return;
	if ((rc = engine_app_create(r->eng, r->json, err, &rec)) != 0) {
		resp_engine_error(r, rc, err, "app");
		return;
	}
	send_app(r, 201, rec, NULL);
}

static void
h_app_get(struct req *r)
{
	json_t		*rec = NULL;
	const char	*inm = req_param(r, "HTTP_IF_NONE_MATCH"), *etag;
	int		 rc;

	if ((rc = engine_app_get(r->eng, r->captures[0], &rec)) != 0) {
		resp_engine_error(r, rc, NULL, "app");
		return;
	}
	etag = app_etag(r, rec);
	if (inm != NULL && etag != NULL && strcmp(inm, etag) == 0) {
		json_decref(rec);
		resp_header(r, "ETag", etag);
		resp_empty(r, 304);
		return;
	}
	send_app(r, 200, rec, etag);
}

/* The revision an If-Match header asks for, -1 for none, -2 if invalid. */
static int64_t
if_match_revision(struct req *r)
{
	const char	*h = req_param(r, "HTTP_IF_MATCH");
	char		*end;
	long long	 v;

	if (h == NULL || strcmp(h, "*") == 0)
		return -1;
	if (strncmp(h, "W/", 2) == 0)
		h += 2;
	if (*h != '"')
		return -2;
	errno = 0;
	v = strtoll(h + 1, &end, 10);
	if (errno != 0 || end == h + 1 || strcmp(end, "\"") != 0 || v < 0)
		return -2;
	return v;
}

static void
h_app_update(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*rec = NULL;
	int64_t	 rev;
	int	 rc;

	if ((rev = if_match_revision(r)) == -2) {
		resp_error(r, 400, "invalid_param", "If-Match must be an ETag "
		    "given by this API, such as \"3\"");
		return;
	}
	if (req_read_json(r) != 0)
		return;
	rc = engine_app_update(r->eng, r->captures[0], r->json, rev, err,
	    &rec);
	if (rc != 0) {
		resp_engine_error(r, rc, err, "app");
		return;
	}
	send_app(r, 200, rec, NULL);
}

static void
h_app_delete(struct req *r)
{
	int rc;

	if ((rc = engine_app_delete(r->eng, r->captures[0])) != 0) {
		resp_engine_error(r, rc, NULL, "app");
		return;
	}
	resp_empty(r, 204);
}

static void
h_app_copy(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*rec = NULL;
	int	 rc;

	if (req_read_json(r) != 0)
		return;
	rc = engine_app_copy(r->eng, r->captures[0], r->json, err, &rec);
	if (rc != 0) {
		resp_engine_error(r, rc, err, "app");
		return;
	}
	send_app(r, 201, rec, NULL);
}

/* POST /console/api/apps/{id}/upgrade-runtime */
static void
h_app_upgrade(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*res = NULL;
	int	 rc;

	if ((rc = engine_app_upgrade(r->eng, r->captures[0], err, &res)) != 0) {
		resp_engine_error(r, rc, err, "app");
		return;
	}
	resp_json(r, 200, res);
}

/* GET /console/api/apps/{id}/workflows/draft/skills and
 * .../workflows/draft/nodes/{node}/skills (Dify's skills controller) */
static void
h_app_skills(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*res = NULL;
	int	 rc;

	if ((rc = engine_app_skills(r->eng, r->captures[0], r->ncaptures > 1 ?
	    r->captures[1] : NULL, err, &res)) != 0) {
		resp_engine_error(r, rc, err, "workflow");
		return;
	}
	resp_json(r, 200, res);
}

const struct route console_app_routes[] = {
	{ "POST", "/console/api/apps/{}/upgrade-runtime", h_app_upgrade,
	    AUTH_ADMIN },
	{ "GET", "/console/api/apps/{}/workflows/draft/skills", h_app_skills,
	    AUTH_ADMIN },
	{ "GET", "/console/api/apps/{}/workflows/draft/nodes/{}/skills",
	    h_app_skills, AUTH_ADMIN },
	{ "GET", "/console/api/apps", h_apps_list, AUTH_ADMIN },
	{ "POST", "/console/api/apps", h_apps_create, AUTH_ADMIN },
	{ "GET", "/console/api/apps/{}", h_app_get, AUTH_ADMIN },
	{ "PUT", "/console/api/apps/{}", h_app_update, AUTH_ADMIN },
	{ "DELETE", "/console/api/apps/{}", h_app_delete, AUTH_ADMIN },
	{ "POST", "/console/api/apps/{}/copy", h_app_copy, AUTH_ADMIN },
	{ NULL, NULL, NULL, AUTH_NONE },
};
