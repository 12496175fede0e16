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
 *                                          GET    /annotations/{aid}/
 *                                                 hit-histories
 *                                          GET    /annotations/export
 *                                          POST   /annotations/batch-import
 *                                          GET    /annotations/
 *                                                 batch-import-status/{job}
 *
 * The console's POST /annotations with message_id annotates that message
 * (question optional, answer or content).
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
	const char	*app, *q = NULL, *a = NULL, *id, *mid;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*out = NULL;
	int		 first, rc;

	app = ann_app(r, &first);
	id = r->ncaptures > first ? r->captures[first] : NULL;
	if (req_read_json(r) != 0)
		return;
	/* console: annotate a message from its log (Dify's
	 * up_insert_app_annotation_from_message) */
	if (first == 1 && id == NULL && json_object_get(r->json, "message_id")
	    != NULL && !json_is_null(json_object_get(r->json,
	    "message_id"))) {
		if (req_json_string(r, "message_id", 1, &mid) != 0 ||
		    req_json_string(r, "question", 0, &q) != 0 ||
		    req_json_string(r, "answer", 0, &a) != 0 ||
		    (a == NULL && req_json_string(r, "content", 0, &a) != 0))
			return;
		rc = engine_annotation_from_message(r->eng, app, mid, q, a, err,
		    &out);
	} else if (req_json_string(r, "question", 1, &q) != 0 ||
	    req_json_string(r, "answer", 1, &a) != 0)
		return;
	else
		rc = engine_annotation_put(r->eng, app, id, q, a, err, &out);
	if (rc != 0) {
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

/* GET annotations/{aid}/hit-histories?page=&limit= */
static void
h_hits(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 page, limit, rc;

	if (req_query_int(r, "page", 1, 1, 99999, &page) != 0 ||
	    req_query_int(r, "limit", 20, 1, 100, &limit) != 0)
		return;
	if ((rc = engine_annotation_hits(r->eng, r->captures[0],
	    r->captures[1], page, limit, err, &out)) != 0) {
		ann_error(r, rc, err);
		return;
	}
	resp_json(r, 200, out);
}

/* GET annotations/export */
static void
h_export(struct req *r)
{
	json_t	*out = NULL;
	int	 rc;

	if ((rc = engine_annotation_export(r->eng, r->captures[0], &out)) !=
	    0) {
		ann_error(r, rc, "");
		return;
	}
	resp_json(r, 200, out);
}

/* POST annotations/batch-import: multipart, one "file" named *.csv */
static void
h_import(struct req *r)
{
	struct mp_part	*parts;
	const char	*data = NULL, *name = NULL;
	char		 err[ENGINE_ERRMAX] = "";
	size_t		 n, i, len = 0, nfiles = 0;
	json_t		*out = NULL;
	int		 rc;

	if (req_read_body(r, r->conf->max_body) != 0)
		return;
	if (multipart_parse(r->a, r->content_type, r->body, r->body_len, 8,
	    &parts, &n, err, sizeof(err)) != 0) {
		resp_error(r, 400, "invalid_multipart", "%s", err);
		return;
	}
	for (i = 0; i < n; i++)
		if (parts[i].filename != NULL) {
			nfiles++;
			if (strcmp(parts[i].name, "file") == 0 && data ==
			    NULL) {
				data = parts[i].data;
				len = parts[i].len;
				name = parts[i].filename;
			}
		}
	/* Dify's NoFileUploadedError, TooManyFilesError and file type */
	if (data == NULL) {
		resp_error(r, 400, "no_file_uploaded", "Please upload your "
		    "file.");
		return;
	}
	if (nfiles > 1) {
		resp_error(r, 400, "too_many_files", "Only one file is "
		    "allowed.");
		return;
	}
	n = strlen(name);
	if (n < 4 || strcasecmp(name + n - 4, ".csv") != 0) {
		resp_error(r, 400, "invalid_param", "Invalid file type. Only "
		    "CSV files are allowed");
		return;
	}
	/*
	 * A file that is not CSV or holds no valid record: Dify's
	 * batch_import_app_annotations catches the error and answers 200
	 * {"error_msg"} (annotation_service.py), no job made. flowcgi's own
	 * limits (annotations.max_per_app, .max_text) stay 413s naming them.
	 */
	rc = engine_annotation_import(r->eng, r->captures[0], data, len, err,
	    &out);
	if (rc == ENGINE_EINVAL)
		resp_json(r, 200, json_pack("{s:s}", "error_msg", err));
	else if (rc != 0)
		ann_error(r, rc, err);
	else
		resp_json(r, 200, out);
}

/* GET annotations/batch-import-status/{job_id} */
static void
h_import_job(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if ((rc = engine_annotation_job(r->eng, r->captures[0],
	    "batch-import", r->captures[1], err, &out)) != 0) {
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
	/* before annotations/{}: these name no annotation */
	{ "GET", C "annotations/export", h_export, AUTH_ADMIN },
	{ "POST", C "annotations/batch-import", h_import, AUTH_ADMIN },
	{ "GET", C "annotations/batch-import-status/{}", h_import_job,
	    AUTH_ADMIN },
	{ "GET", C "annotations/{}/hit-histories", h_hits, AUTH_ADMIN },
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
