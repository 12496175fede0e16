/*
 * annotations.c — Dify's annotation reply, in both of Dify's forms:
 *
 *   service API (Bearer app key; api/controllers/service_api/app/
 *   annotation.py)        console (admin token; api/controllers/console/
 *                         app/annotation.py), under /console/api/apps/{id}
 *   GET    /v1/apps/annotations            GET    /annotations
 *   POST   /v1/apps/annotations            POST   /annotations
 *   PUT    /v1/apps/annotations/{aid}      POST   /annotations/{aid}
 *   DELETE /v1/apps/annotations/{aid}      DELETE /annotations/{aid}
 *   POST   /v1/apps/annotation-reply/{action}
 *                                          POST   /annotation-reply/{action}
 *   GET    /v1/apps/annotation-reply/{action}/status/{job_id}
 *                                          GET    /annotation-reply/{action}/
 *                                                 status/{job_id}
 *                                          GET    /annotation-setting
 *                                          POST   /annotation-settings/{sid}
 *
 * The app is the key's or the path's; another app's annotation, job or
 * setting is a 404 as one that does not exist. The engine
 * (engine/records/annotations.c) keeps them and matches them at run time.
 */
#include <string.h>

#include "fcgi/internal.h"

/* The app of the request and the index of its first capture after the
 * app's own: the key's app (service API), or the path's (console). */
static const char *
ann_app(struct req *r, int *first)
{
	if (r->app_id[0] != '\0') {
		*first = 0;
		return r->app_id;
	}
	*first = 1;
	return r->captures[0];
}

/* Answers an engine error: Dify's words for a 404, else the usual. */
static void
ann_error(struct req *r, int rc, const char *err)
{
	resp_engine_error(r, rc, err, "app");
}

/* The JSON number k of the body into *out; -1 after answering 400. */
static int
ann_number(struct req *r, const char *k, double *out)
{
	json_t *v = json_object_get(r->json, k);

	if (!json_is_number(v)) {
		resp_error(r, 400, "invalid_param", "%s is required (a number)",
		    k);
		return -1;
	}
	*out = json_number_value(v);
	if (*out < 0 || *out > 1) {
		resp_error(r, 400, "invalid_param", "%s must be from 0 to 1",
		    k);
		return -1;
	}
	return 0;
}

/* GET annotations?page=&limit=&keyword= */
static void
h_list(struct req *r)
{
	const char	*app;
	json_t		*out = NULL;
	int		 first, page, limit, rc;

	app = ann_app(r, &first);
	if (req_query_int(r, "page", 1, 1, 99999, &page) != 0 ||
	    req_query_int(r, "limit", 20, 1, 100, &limit) != 0)
		return;
	if ((rc = engine_annotation_list(r->eng, app, page, limit,
	    req_query(r, "keyword"), &out)) != 0) {
		ann_error(r, rc, "");
		return;
	}
	resp_json(r, 200, out);
}

/* POST annotations {question, answer}; PUT (POST on the console)
 * annotations/{aid} {question, answer} */
static void
h_put(struct req *r)
{
	const char	*app, *q, *a, *id;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*out = NULL;
	int		 first, rc;

	app = ann_app(r, &first);
	id = r->ncaptures > first ? r->captures[first] : NULL;
	if (req_read_json(r) != 0 || req_json_string(r, "question", 1, &q) != 0
	    || req_json_string(r, "answer", 1, &a) != 0)
		return;
	if ((rc = engine_annotation_put(r->eng, app, id, q, a, err, &out))
	    != 0) {
		ann_error(r, rc, err);
		return;
	}
	resp_json(r, 200, out);
}

/* DELETE annotations/{aid}: Dify's 204 */
static void
h_delete(struct req *r)
{
	const char	*app;
	char		 err[ENGINE_ERRMAX] = "";
	int		 first, rc;

	app = ann_app(r, &first);
	if ((rc = engine_annotation_delete(r->eng, app, r->captures[first],
	    err)) != 0) {
		ann_error(r, rc, err);
		return;
	}
	resp_empty(r, 204);
}

/* POST annotation-reply/{action} {score_threshold,
 * embedding_provider_name, embedding_model_name}, all required as Dify's
 * parser asks, for disable too */
static void
h_reply(struct req *r)
{
	const char	*app, *prov, *model;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*out = NULL;
	double		 th;
	int		 first, rc;

	app = ann_app(r, &first);
	if (req_read_json(r) != 0 || ann_number(r, "score_threshold", &th) !=
	    0 || req_json_string(r, "embedding_provider_name", 1, &prov) != 0 ||
	    req_json_string(r, "embedding_model_name", 1, &model) != 0)
		return;
	if ((rc = engine_annotation_reply(r->eng, app, r->captures[first],
	    th, prov, model, err, &out)) != 0) {
		ann_error(r, rc, err);
		return;
	}
	resp_json(r, 200, out);
}

/* GET annotation-reply/{action}/status/{job_id} */
static void
h_job(struct req *r)
{
	const char	*app;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*out = NULL;
	int		 first, rc;

	app = ann_app(r, &first);
	if ((rc = engine_annotation_job(r->eng, app, r->captures[first],
	    r->captures[first + 1], err, &out)) != 0) {
		ann_error(r, rc, err);
		return;
	}
	resp_json(r, 200, out);
}

/* GET annotation-setting; POST annotation-settings/{sid}
 * {score_threshold} */
static void
h_setting(struct req *r)
{
	const char	*app, *sid;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*out = NULL;
	double		 th = 0;
	int		 first, rc;

	app = ann_app(r, &first);
	sid = r->ncaptures > first ? r->captures[first] : NULL;
	if (sid != NULL && (req_read_json(r) != 0 || ann_number(r,
	    "score_threshold", &th) != 0))
		return;
	if ((rc = engine_annotation_setting(r->eng, app, sid, th, err, &out))
	    != 0) {
		ann_error(r, rc, err);
		return;
	}
	resp_json(r, 200, out);
}

#define S "/v1/apps/"
#define C "/console/api/apps/{}/"
const struct route annotation_routes[] = {
	{ "GET", S "annotations", h_list, AUTH_APP },
	{ "POST", S "annotations", h_put, AUTH_APP },
	{ "PUT", S "annotations/{}", h_put, AUTH_APP },
	{ "DELETE", S "annotations/{}", h_delete, AUTH_APP },
	{ "POST", S "annotation-reply/{}", h_reply, AUTH_APP },
	{ "GET", S "annotation-reply/{}/status/{}", h_job, AUTH_APP },
	{ "GET", C "annotations", h_list, AUTH_ADMIN },
	{ "POST", C "annotations", h_put, AUTH_ADMIN },
	{ "POST", C "annotations/{}", h_put, AUTH_ADMIN },
	{ "DELETE", C "annotations/{}", h_delete, AUTH_ADMIN },
	{ "POST", C "annotation-reply/{}", h_reply, AUTH_ADMIN },
	{ "GET", C "annotation-reply/{}/status/{}", h_job, AUTH_ADMIN },
	{ "GET", C "annotation-setting", h_setting, AUTH_ADMIN },
	{ "POST", C "annotation-settings/{}", h_setting, AUTH_ADMIN },
	{ NULL, NULL, NULL, AUTH_NONE },
};
#undef S
#undef C
