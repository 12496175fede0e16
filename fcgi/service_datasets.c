/*
 * service_datasets.c — Dify's Knowledge service API over local datasets
 * (engine/knowledge/; docs/knowledge.md), under /v1 with a dataset key
 * ("Authorization: Bearer dataset-...") or the admin token, and the same
 * routes under /console/api with the admin token, plus the console's
 * dataset keys (POST/GET /console/api/datasets/api-keys).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fcgi/internal.h"

#define KB_BODY_SLACK	(64 * 1024)	/* JSON around the text */

/* ====== Helpers ====== */

/*
 * 0 when the request carries a dataset key or the admin token; else
 * answers 401 as Dify's validate_dataset_token does and returns -1.
 */
static int
ds_auth(struct req *r)
{
	const char	*h = req_param(r, "HTTP_AUTHORIZATION");
	int		 rc;

	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0) {
		resp_header(r, "WWW-Authenticate", "Bearer");
		resp_error(r, 401, "unauthorized", "Authorization header must "
		    "be provided and start with 'Bearer'");
		return -1;
	}
	h += 7 + strspn(h + 7, " ");
	if (auth_check_admin(r) == 0)
		return 0;
	if ((rc = engine_kb_key_check(r->eng, h)) == 0)
		return 0;
	if (rc != ENGINE_ENOTFOUND) {
		resp_engine_error(r, rc, "", "API key");
		return -1;
	}
	resp_header(r, "WWW-Authenticate", "Bearer");
	resp_error(r, 401, "unauthorized", "Access token is invalid");
	return -1;
}

/* The answer of an engine call: 200 with out, or its error. */
static void
answer(struct req *r, int rc, const char *err, json_t *out, int status)
{
	if (rc != 0) {
		if (rc == ENGINE_EEXIST)
			resp_error(r, 409, "dataset_name_duplicate", "%s", err);
		else if (rc == ENGINE_ELIMIT && (err == NULL || *err == '\0'))
			resp_error(r, 400, "invalid_param", "at most 10 "
			    "dataset API keys");
		else
			resp_engine_error(r, rc, err, "dataset");
		return;
	}
	if (out == NULL)
		resp_empty(r, status);
	else
		resp_json(r, status, out);
}

static int
page_args(struct req *r, int *page, int *limit)
{
	if (req_query_int(r, "page", 1, 1, 1000000, page) != 0 ||
	    req_query_int(r, "limit", 20, 1, 100, limit) != 0)
		return -1;
	return 0;
}

/* ====== Handlers ====== */

static void
h_ds_create(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0 || req_read_json(r) != 0)
		return;
	rc = engine_kb_dataset_create(r->eng, r->json, err, &out);
	answer(r, rc, err, out, 200);
}

static void
h_ds_list(struct req *r)
{
	json_t	*out = NULL;
	int	 page, limit, rc;

	if (ds_auth(r) != 0 || page_args(r, &page, &limit) != 0)
		return;
	rc = engine_kb_dataset_list(r->eng, page, limit, req_query(r,
	    "keyword"), &out);
	answer(r, rc, "", out, 200);
}

static void
h_ds_get(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0)
		return;
	rc = engine_kb_dataset_get(r->eng, r->captures[0], err, &out);
	answer(r, rc, err, out, 200);
}

static void
h_ds_update(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0 || req_read_json(r) != 0)
		return;
	rc = engine_kb_dataset_update(r->eng, r->captures[0], r->json, err,
	    &out);
	answer(r, rc, err, out, 200);
}

static void
h_ds_delete(struct req *r)
{
	char	err[ENGINE_ERRMAX] = "";
	int	rc;

	if (ds_auth(r) != 0)
		return;
	rc = engine_kb_dataset_delete(r->eng, r->captures[0], err);
	answer(r, rc, err, NULL, 204);
}

static void
h_doc_text(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0)
		return;
	if (req_read_body(r, r->conf->kb_max_document + KB_BODY_SLACK) != 0 ||
	    req_read_json(r) != 0)
		return;
	rc = engine_kb_document_create_text(r->eng, r->captures[0], r->json,
	    err, &out);
	answer(r, rc, err, out, 200);
}

/*
 * create-by-file: multipart with a "file" part and an optional "data" part
 * holding the JSON of create-by-text without name and text; errors as
 * Dify's (NoFileUploadedError, TooManyFilesError, FilenameNotExistsError,
 * UnsupportedFileTypeError 415).
 */
/* create-by-file (doc_id NULL: the file needed) and update-by-file
 * (doc_id: the file optional, as Dify's) */
static void
doc_file(struct req *r, const char *doc_id)
{
	char		 err[ENGINE_ERRMAX] = "", perr[256];
	struct mp_part	*parts, *file = NULL;
	const char	*data = NULL;
	json_t		*out = NULL, *dj = NULL;
	json_error_t	 je;
	size_t		 n, i;
	int		 rc;

	if (ds_auth(r) != 0)
		return;
	if (req_read_body(r, r->conf->documents_max_file_size +
	    KB_BODY_SLACK) != 0)
		return;
	if (!multipart_is_form(r->content_type)) {
		resp_error(r, 400, "no_file_uploaded", "Please upload your "
		    "file.");
		return;
	}
	if (multipart_parse(r->a, r->content_type, r->body, r->body_len, 8,
	    &parts, &n, perr, sizeof(perr)) != 0) {
		resp_error(r, 400, "invalid_multipart", "%s", perr);
		return;
	}
	for (i = 0; i < n; i++) {
		if (strcmp(parts[i].name, "file") == 0) {
			if (file != NULL) {
				resp_error(r, 400, "too_many_files", "Only one "
				    "file is allowed.");
				return;
			}
			file = &parts[i];
		} else if (strcmp(parts[i].name, "data") == 0 &&
		    req_part_text(r, &parts[i], &data) != 0)
			return;
	}
	if (file == NULL && doc_id == NULL) {
		resp_error(r, 400, "no_file_uploaded", "Please upload your "
		    "file.");
		return;
	}
	if (file != NULL && (file->filename == NULL ||
	    *file->filename == '\0')) {
		resp_error(r, 400, "filename_not_exists_error", "The specified "
		    "filename does not exist.");
		return;
	}
	if (file != NULL && !engine_kb_file_type_ok(file->filename)) {
		resp_error(r, 415, "unsupported_file_type", "File type not "
		    "allowed.");
		return;
	}
	if (data != NULL && *data != '\0' && !json_is_object(dj =
	    json_loads(data, 0, &je))) {
		json_decref(dj);
		resp_error(r, 400, "invalid_param", "data must be a JSON "
		    "object");
		return;
	}
	if (doc_id != NULL)
		rc = engine_kb_document_update_file(r->eng, r->captures[0],
		    doc_id, dj, file ? file->filename : NULL, file ?
		    file->data : NULL, file ? file->len : 0, err, &out);
	else
		rc = engine_kb_document_create_file(r->eng, r->captures[0], dj,
		    file->filename, file->data, file->len, err, &out);
	json_decref(dj);
	answer(r, rc, err, out, 200);
}

static void
h_doc_file(struct req *r)
{
	doc_file(r, NULL);
}

static void
h_doc_update_file(struct req *r)
{
	doc_file(r, r->captures[1]);
}

static void
h_doc_update_text(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0 || req_read_json(r) != 0)
		return;
	rc = engine_kb_document_update_text(r->eng, r->captures[0],
	    r->captures[1], r->json, err, &out);
	answer(r, rc, err, out, 200);
}

static void
h_doc_list(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 page, limit, rc;

	if (ds_auth(r) != 0 || page_args(r, &page, &limit) != 0)
		return;
	rc = engine_kb_document_list(r->eng, r->captures[0], page, limit,
	    req_query(r, "keyword"), err, &out);
	answer(r, rc, err, out, 200);
}

static void
h_doc_get(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0)
		return;
	rc = engine_kb_document_get(r->eng, r->captures[0], r->captures[1],
	    err, &out);
	answer(r, rc, err, out, 200);
}

static void
h_doc_delete(struct req *r)
{
	char	err[ENGINE_ERRMAX] = "";
	int	rc;

	if (ds_auth(r) != 0)
		return;
	rc = engine_kb_document_delete(r->eng, r->captures[0], r->captures[1],
	    err);
	if (rc == ENGINE_EEXIST) {
		resp_error(r, 403, "archived_document_immutable", "%s", err);
		return;
	}
	answer(r, rc, err, NULL, 204);
}

static void
h_doc_status(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0)
		return;
	rc = engine_kb_indexing_status(r->eng, r->captures[0], r->captures[1],
	    err, &out);
	answer(r, rc, err, out, 200);
}

static void
h_seg_list(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 page, limit, rc;

	if (ds_auth(r) != 0 || page_args(r, &page, &limit) != 0)
		return;
	rc = engine_kb_segment_list(r->eng, r->captures[0], r->captures[1],
	    page, limit, req_query(r, "keyword"), err, &out);
	answer(r, rc, err, out, 200);
}

static void
h_seg_add(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0 || req_read_json(r) != 0)
		return;
	rc = engine_kb_segment_add(r->eng, r->captures[0], r->captures[1],
	    r->json, err, &out);
	answer(r, rc, err, out, 200);
}

static void
h_seg_update(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0 || req_read_json(r) != 0)
		return;
	rc = engine_kb_segment_update(r->eng, r->captures[0], r->captures[1],
	    r->captures[2], r->json, err, &out);
	answer(r, rc, err, out, 200);
}

static void
h_seg_delete(struct req *r)
{
	char	err[ENGINE_ERRMAX] = "";
	int	rc;

	if (ds_auth(r) != 0)
		return;
	rc = engine_kb_segment_delete(r->eng, r->captures[0], r->captures[1],
	    r->captures[2], err);
	answer(r, rc, err, NULL, 204);
}

static void
h_child_list(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 page, limit, rc;

	if (ds_auth(r) != 0 || page_args(r, &page, &limit) != 0)
		return;
	rc = engine_kb_child_list(r->eng, r->captures[0], r->captures[1],
	    r->captures[2], page, limit, req_query(r, "keyword"), err, &out);
	answer(r, rc, err, out, 200);
}

static void
h_child_create(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0 || req_read_json(r) != 0)
		return;
	rc = engine_kb_child_create(r->eng, r->captures[0], r->captures[1],
	    r->captures[2], r->json, err, &out);
	answer(r, rc, err, out, 200);
}

static void
h_child_update(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0 || req_read_json(r) != 0)
		return;
	rc = engine_kb_child_update(r->eng, r->captures[0], r->captures[1],
	    r->captures[2], r->captures[3], r->json, err, &out);
	answer(r, rc, err, out, 200);
}

static void
h_child_delete(struct req *r)
{
	char	err[ENGINE_ERRMAX] = "";
	int	rc;

	if (ds_auth(r) != 0)
		return;
	rc = engine_kb_child_delete(r->eng, r->captures[0], r->captures[1],
	    r->captures[2], r->captures[3], err);
	answer(r, rc, err, NULL, 204);
}

static void
h_tag_create(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0 || req_read_json(r) != 0)
		return;
	rc = engine_kb_tag_create(r->eng, r->json, err, &out);
	answer(r, rc, err, out, 200);
}

static void
h_tag_list(struct req *r)
{
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0)
		return;
	rc = engine_kb_tag_list(r->eng, &out);
	answer(r, rc, "", out, 200);
}

static void
h_tag_update(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0 || req_read_json(r) != 0)
		return;
	rc = engine_kb_tag_update(r->eng, r->json, err, &out);
	answer(r, rc, err, out, 200);
}

static void
h_tag_delete(struct req *r)
{
	char	err[ENGINE_ERRMAX] = "";
	int	rc;

	if (ds_auth(r) != 0 || req_read_json(r) != 0)
		return;
	rc = engine_kb_tag_delete(r->eng, r->json, err);
	answer(r, rc, err, NULL, 204);
}

static void
h_tag_bind(struct req *r)
{
	char	err[ENGINE_ERRMAX] = "";
	int	rc;

	if (ds_auth(r) != 0 || req_read_json(r) != 0)
		return;
	rc = engine_kb_tag_bind(r->eng, r->json, strstr(r->path,
	    "/unbinding") != NULL, err);
	answer(r, rc, err, NULL, 204);
}

static void
h_ds_tags(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0)
		return;
	rc = engine_kb_dataset_tags(r->eng, r->captures[0], err, &out);
	answer(r, rc, err, out, 200);
}

static void
h_retrieve(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0 || req_read_json(r) != 0)
		return;
	rc = engine_kb_retrieve(r->eng, r->captures[0], r->json, err, &out);
	answer(r, rc, err, out, 200);
}

static void
h_key_create(struct req *r)
{
	json_t	*out = NULL;
	int	 rc = engine_kb_key_create(r->eng, &out);

	answer(r, rc, "", out, 200);
}

static void
h_key_list(struct req *r)
{
	json_t	*out = NULL;
	int	 rc = engine_kb_key_list(r->eng, &out);

	answer(r, rc, "", out, 200);
}

static void
h_key_delete(struct req *r)
{
	int rc = engine_kb_key_delete(r->eng, r->captures[0]);

	answer(r, rc, "", NULL, 204);
}

/* ====== Metadata ====== */

static void
h_meta_create(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0 || req_read_json(r) != 0)
		return;
	rc = engine_kb_metadata_create(r->eng, r->captures[0], r->json, err,
	    &out);
	if (rc == ENGINE_EEXIST) {	/* a name, not a dataset's */
		resp_error(r, 409, "invalid_param", "%s", err);
		return;
	}
	answer(r, rc, err, out, 201);
}

static void
h_meta_list(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0)
		return;
	rc = engine_kb_metadata_list(r->eng, r->captures[0], err, &out);
	answer(r, rc, err, out, 200);
}

static void
h_meta_update(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0 || req_read_json(r) != 0)
		return;
	rc = engine_kb_metadata_update(r->eng, r->captures[0], r->captures[1],
	    r->json, err, &out);
	if (rc == ENGINE_EEXIST) {
		resp_error(r, 409, "invalid_param", "%s", err);
		return;
	}
	answer(r, rc, err, out, 200);
}

static void
h_meta_delete(struct req *r)
{
	char	err[ENGINE_ERRMAX] = "";
	int	rc;

	if (ds_auth(r) != 0)
		return;
	rc = engine_kb_metadata_delete(r->eng, r->captures[0], r->captures[1],
	    err);
	answer(r, rc, err, NULL, 204);
}

static void
h_meta_builtin(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0)
		return;
	rc = engine_kb_metadata_builtin(r->eng, r->captures[0], NULL, err,
	    &out);
	answer(r, rc, err, out, 200);
}

static void
h_meta_builtin_set(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0)
		return;
	rc = engine_kb_metadata_builtin(r->eng, r->captures[0],
	    r->captures[1], err, &out);
	answer(r, rc, err, out, 200);
}

static void
h_doc_meta(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*out = NULL;
	int	 rc;

	if (ds_auth(r) != 0 || req_read_json(r) != 0)
		return;
	rc = engine_kb_documents_metadata(r->eng, r->captures[0], r->json,
	    err, &out);
	answer(r, rc, err, out, 200);
}

/* ====== Routes ====== */

#define DS_ROUTES(P, A)							\
	{ "POST", P "/datasets/tags", h_tag_create, A },		\
	{ "GET", P "/datasets/tags", h_tag_list, A },			\
	{ "PATCH", P "/datasets/tags", h_tag_update, A },		\
	{ "DELETE", P "/datasets/tags", h_tag_delete, A },		\
	{ "POST", P "/datasets/tags/binding", h_tag_bind, A },		\
	{ "POST", P "/datasets/tags/unbinding", h_tag_bind, A },	\
	{ "GET", P "/datasets/{}/tags", h_ds_tags, A },			\
	{ "POST", P "/datasets", h_ds_create, A },			\
	{ "GET", P "/datasets", h_ds_list, A },				\
	{ "GET", P "/datasets/{}", h_ds_get, A },			\
	{ "PATCH", P "/datasets/{}", h_ds_update, A },			\
	{ "DELETE", P "/datasets/{}", h_ds_delete, A },			\
	{ "POST", P "/datasets/{}/document/create-by-text", h_doc_text, A }, \
	{ "POST", P "/datasets/{}/document/create_by_text", h_doc_text, A }, \
	{ "POST", P "/datasets/{}/document/create-by-file", h_doc_file, A }, \
	{ "POST", P "/datasets/{}/document/create_by_file", h_doc_file, A }, \
	{ "GET", P "/datasets/{}/documents", h_doc_list, A },		\
	{ "GET", P "/datasets/{}/documents/{}", h_doc_get, A },		\
	{ "DELETE", P "/datasets/{}/documents/{}", h_doc_delete, A },	\
	{ "PATCH", P "/datasets/{}/documents/{}", h_doc_update_file, A }, \
	{ "POST", P "/datasets/{}/documents/{}/update-by-text",		\
	    h_doc_update_text, A },					\
	{ "POST", P "/datasets/{}/documents/{}/update_by_text",		\
	    h_doc_update_text, A },					\
	{ "POST", P "/datasets/{}/documents/{}/update-by-file",		\
	    h_doc_update_file, A },					\
	{ "POST", P "/datasets/{}/documents/{}/update_by_file",		\
	    h_doc_update_file, A },					\
	{ "GET", P "/datasets/{}/documents/{}/indexing-status",		\
	    h_doc_status, A },						\
	{ "GET", P "/datasets/{}/documents/{}/segments", h_seg_list, A }, \
	{ "POST", P "/datasets/{}/documents/{}/segments", h_seg_add, A }, \
	{ "POST", P "/datasets/{}/documents/{}/segments/{}", h_seg_update, \
	    A },							\
	{ "DELETE", P "/datasets/{}/documents/{}/segments/{}",		\
	    h_seg_delete, A },						\
	{ "GET", P "/datasets/{}/documents/{}/segments/{}/child_chunks",	\
	    h_child_list, A },						\
	{ "POST", P "/datasets/{}/documents/{}/segments/{}/child_chunks",	\
	    h_child_create, A },					\
	{ "PATCH", P "/datasets/{}/documents/{}/segments/{}/child_chunks/{}", \
	    h_child_update, A },					\
	{ "DELETE", P "/datasets/{}/documents/{}/segments/{}/child_chunks/{}", \
	    h_child_delete, A },					\
	{ "POST", P "/datasets/{}/retrieve", h_retrieve, A },		\
	{ "POST", P "/datasets/{}/metadata", h_meta_create, A },	\
	{ "GET", P "/datasets/{}/metadata", h_meta_list, A },		\
	{ "GET", P "/datasets/{}/metadata/built-in", h_meta_builtin, A }, \
	{ "POST", P "/datasets/{}/metadata/built-in/{}",		\
	    h_meta_builtin_set, A },					\
	{ "PATCH", P "/datasets/{}/metadata/{}", h_meta_update, A },	\
	{ "DELETE", P "/datasets/{}/metadata/{}", h_meta_delete, A },	\
	{ "POST", P "/datasets/{}/documents/metadata", h_doc_meta, A },	\
	{ "POST", P "/datasets/{}/hit-testing", h_retrieve, A }

/* /v1: the handlers check the dataset key themselves (ds_auth). */
const struct route service_dataset_routes[] = {
	DS_ROUTES("/v1", AUTH_NONE),
	{ NULL, NULL, NULL, AUTH_NONE },
};

/*
 * The console's: the same handlers with the admin token only (the router
 * refuses a dataset key before ds_auth would take it).
 */
const struct route console_dataset_routes[] = {
	{ "POST", "/console/api/datasets/api-keys", h_key_create, AUTH_ADMIN },
	{ "GET", "/console/api/datasets/api-keys", h_key_list, AUTH_ADMIN },
	{ "DELETE", "/console/api/datasets/api-keys/{}", h_key_delete,
	    AUTH_ADMIN },
	DS_ROUTES("/console/api", AUTH_ADMIN),
	/* Dify's console names a batch's status so */
	{ "GET", "/console/api/datasets/{}/batch/{}/indexing-status",
	    h_doc_status, AUTH_ADMIN },
	{ NULL, NULL, NULL, AUTH_NONE },
};
