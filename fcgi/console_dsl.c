/*
 * console_dsl.c — DSL import and export in Dify's console paths:
 * /console/api/apps/imports (+ /confirm), /apps/{id}/export, and bundles
 * (/apps/{id}/export-bundle, /apps/{id}/bundle, /apps/imports-bundle in
 * one step, and in three: /prepare, a PUT to the upload_url, /confirm).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>


#include "fcgi/internal.h"

/* HTTP status of an Import answer, as Dify sends it. */
static int
import_status(const json_t *imp)
{
	const char *st = json_string_value(json_object_get(imp, "status"));

	if (st != NULL && strcmp(st, "pending") == 0)
		return 202;
	if (st != NULL && strcmp(st, "failed") == 0)
		return 400;
	return 200;
}

/*
 * The import fields of the body; "publish": false (flowcgi's own) keeps
 * what is imported a draft, which the service API runs only if the app
 * was never published.
 */
static int
read_opts(struct req *r, struct import_opts *o)
{
	json_t *pub = json_object_get(r->json, "publish");

	memset(o, 0, sizeof(*o));
	if (pub != NULL && !json_is_boolean(pub)) {
		resp_error(r, 400, "invalid_param", "publish must be true or "
		    "false");
		return -1;
	}
	o->draft_only = json_is_false(pub);
	return req_json_string(r, "name", 0, &o->name) ||
	    req_json_string(r, "description", 0, &o->description) ||
	    req_json_string(r, "icon_type", 0, &o->icon_type) ||
	    req_json_string(r, "icon", 0, &o->icon) ||
	    req_json_string(r, "icon_background", 0, &o->icon_background) ||
	    req_json_string(r, "app_id", 0, &o->app_id) ? -1 : 0;
}

/*
 * Answers an import: an engine error as every error, else the Import
 * object. A failed one keeps Dify's fields (status "failed", error) and
 * carries code and message too, as every other error answer does.
 */
static void
send_import(struct req *r, int rc, const char *err, json_t *imp)
{
	const char *msg;

	if (rc != 0) {
		resp_engine_error(r, rc, err, "app");
		return;
	}
	if (import_status(imp) == 400) {
		msg = json_string_value(json_object_get(imp, "error"));
		if (json_object_set_new(imp, "code",
		    json_string("import_failed")) != 0 ||
		    json_object_set_new(imp, "message", json_string(msg &&
		    *msg ? msg : "the import failed")) != 0) {
			json_decref(imp);
			resp_engine_error(r, ENGINE_ENOMEM, "", "app");
			return;
		}
	}
	resp_json(r, import_status(imp), imp);
}

/* POST /console/api/apps/imports */
static void
h_import(struct req *r)
{
	struct import_opts	 o;
	const char		*mode, *content, *url;
	char			 err[ENGINE_ERRMAX] = "";
	json_t			*imp = NULL;
	int			 rc;

	if (req_read_json(r) != 0 || read_opts(r, &o) != 0 ||
	    req_json_string(r, "mode", 0, &mode) != 0 ||
	    req_json_string(r, "yaml_content", 0, &content) != 0 ||
	    req_json_string(r, "yaml_url", 0, &url) != 0)
		return;
	if (mode == NULL || (strcmp(mode, "yaml-content") != 0 &&
	    strcmp(mode, "yaml-url") != 0)) {
		resp_error(r, 400, "invalid_param", "mode must be yaml-content "
		    "or yaml-url");
		return;
	}
	if (strcmp(mode, "yaml-content") == 0) {
		if (content == NULL) {
			resp_error(r, 400, "invalid_param", "yaml_content is "
			    "required when mode is yaml-content");
			return;
		}
		rc = engine_import(r->eng, content, json_string_length(
		    json_object_get(r->json, "yaml_content")), &o, err, &imp);
	} else {
		if (url == NULL || *url == '\0') {
			resp_error(r, 400, "invalid_param", "yaml_url is "
			    "required when mode is yaml-url");
			return;
		}
		rc = engine_import_url(r->eng, url, &o, err, &imp);
	}
	send_import(r, rc, err, imp);
}

/* POST /console/api/apps/imports/{id}/confirm */
static void
h_confirm(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*imp = NULL;
	int	 rc;

	rc = engine_import_confirm(r->eng, r->captures[0], err, &imp);
	send_import(r, rc, err, imp);
}

/*
 * GET /console/api/apps/{id}/export?include_secret=&workflow_id=: the
 * draft, or the published version workflow_id, as Dify's.
 */
static void
h_export(struct req *r)
{
	const char	*vid = req_query(r, "workflow_id");
	char		 err[ENGINE_ERRMAX] = "", *yaml = NULL;
	size_t		 len = 0;
	int		 rc;

	if (vid != NULL && *vid != '\0')
		rc = engine_export_version(r->eng, r->captures[0], vid,
		    req_query_true(r, "include_secret"), err, &yaml, &len);
	else
		rc = engine_export(r->eng, r->captures[0], req_query_true(r,
		    "include_secret"), err, &yaml, &len);
	if (rc != 0) {
		resp_engine_error(r, rc, err, "app");
		return;
	}
	resp_json(r, 200, json_pack("{s:s%}", "data", yaml, len));
	free(yaml);
}

/* GET /console/api/apps/{id}/bundle: the .zip itself. */
static void
h_bundle(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "", *zip = NULL, *name = NULL;
	size_t	 len = 0;
	int	 rc;

	rc = engine_export_bundle(r->eng, r->captures[0], req_query_true(r,
	    "include_secret"), err, &zip, &len, &name);
	if (rc != 0) {
		resp_engine_error(r, rc, err, "app");
		return;
	}
	resp_attachment(r, name);
	resp_bytes(r, 200, "application/zip", zip, len);
	free(zip);
	free(name);
}

/*
 * GET /console/api/apps/{id}/export-bundle: {download_url, filename}. As
 * Dify's, the link works without a token (a browser follows it) until
 * assets.link_ttl is over.
 */
static void
h_export_bundle(struct req *r)
{
	json_t		*rec = NULL;
	const char	*url;
	char		 name[401];
	int		 rc;

	if ((rc = engine_app_get(r->eng, r->captures[0], &rec)) != 0) {
		resp_engine_error(r, rc, "", "app");
		return;
	}
	engine_bundle_filename(rec, name, sizeof(name));
	json_decref(rec);
	if ((url = bundle_export_link(r, r->captures[0], req_query_true(r,
	    "include_secret"))) == NULL)
		return;
	resp_json(r, 200, json_pack("{s:s,s:s}", "download_url", url,
	    "filename", name));
}

/*
 * POST /console/api/apps/imports-bundle: the .zip as the body (raw, or the
 * "file" part of a multipart form); name, description, icon fields,
 * app_id and publish (false: keep it a draft) in the query or the form.
 */
static void
h_import_bundle(struct req *r)
{
	struct import_opts	 o;
	struct mp_part		*parts;
	const char		*zip = NULL;
	char			 err[ENGINE_ERRMAX] = "";
	size_t			 len = 0, n, i;
	json_t			*imp = NULL;
	int			 rc;

	if ((rc = req_read_body(r, r->conf->max_body)) != 0)
		return;
	memset(&o, 0, sizeof(o));
	o.name = req_query(r, "name");
	o.description = req_query(r, "description");
	o.icon_type = req_query(r, "icon_type");
	o.icon = req_query(r, "icon");
	o.icon_background = req_query(r, "icon_background");
	o.app_id = req_query(r, "app_id");
	o.draft_only = req_query(r, "publish") != NULL &&
	    strcmp(req_query(r, "publish"), "false") == 0;
	if (multipart_is_form(r->content_type)) {
		if (multipart_parse(r->a, r->content_type, r->body,
		    r->body_len, 16, &parts, &n, err, sizeof(err)) != 0) {
			resp_error(r, 400, "invalid_multipart", "%s", err);
			return;
		}
		for (i = 0; i < n; i++) {
			const char *v = NULL;

			if (strcmp(parts[i].name, "file") == 0) {
				zip = parts[i].data;
				len = parts[i].len;
				continue;
			}
			if (req_part_text(r, &parts[i], &v) != 0)
				return;
			if (strcmp(parts[i].name, "name") == 0)
				o.name = v;
			else if (strcmp(parts[i].name, "description") == 0)
				o.description = v;
			else if (strcmp(parts[i].name, "app_id") == 0)
				o.app_id = v;
			else if (strcmp(parts[i].name, "publish") == 0)
				o.draft_only = v != NULL &&
				    strcmp(v, "false") == 0;
		}
		if (zip == NULL) {
			resp_error(r, 400, "invalid_param", "multipart body "
			    "has no 'file' part");
			return;
		}
	} else {
		zip = r->body;
		len = r->body_len;
	}
	rc = engine_import_bundle(r->eng, zip, len, &o, err, &imp);
	send_import(r, rc, err, imp);
}

/*
 * POST /console/api/apps/imports-bundle/prepare: {import_id, upload_url};
 * the client PUTs the .zip to upload_url, then confirms.
 */
static void
h_bundle_prepare(struct req *r)
{
	char		 id[ENGINE_BUNDLE_ID_LEN + 1];
	const char	*url;
	int		 rc;

	rc = engine_bundle_prepare(r->eng, id, NULL);
	if (rc == ENGINE_ELIMIT) {
		resp_error(r, 429, "too_many_requests", "%d bundle imports "
		    "wait for their confirm already (bundle.max_pending): "
		    "confirm them, or wait until they expire "
		    "(bundle.import_ttl)", r->conf->bundle_max_pending);
		return;
	}
	if (rc != 0) {
		resp_engine_error(r, rc, "", "import");
		return;
	}
	if ((url = bundle_upload_link(r, id)) == NULL)
		return;
	resp_json(r, 200, json_pack("{s:s,s:s}", "import_id", id, "upload_url",
	    url));
}

/*
 * POST /console/api/apps/imports-bundle/{import}/confirm with {name,
 * description, icon_type, icon, icon_background}, all optional: the
 * Import object, as the one-step import answers.
 */
static void
h_bundle_confirm(struct req *r)
{
	struct import_opts	 o;
	char			 err[ENGINE_ERRMAX] = "";
	json_t			*imp = NULL;
	int			 rc;

	if (req_read_json(r) != 0 || read_opts(r, &o) != 0)
		return;
	rc = engine_bundle_confirm(r->eng, r->captures[0], &o, err, &imp);
	if (rc == ENGINE_ENOTFOUND) {
		resp_error(r, 404, "not_found", "import %s expired, was "
		    "confirmed or does not exist", r->captures[0]);
		return;
	}
	send_import(r, rc, err, imp);
}

const struct route console_dsl_routes[] = {
	{ "POST", "/console/api/apps/imports", h_import, AUTH_ADMIN },
	{ "POST", "/console/api/apps/imports/{}/confirm", h_confirm,
	    AUTH_ADMIN },
	{ "POST", "/console/api/apps/imports-bundle", h_import_bundle,
	    AUTH_ADMIN },
	{ "POST", "/console/api/apps/imports-bundle/prepare",
	    h_bundle_prepare, AUTH_ADMIN },
	{ "POST", "/console/api/apps/imports-bundle/{}/confirm",
	    h_bundle_confirm, AUTH_ADMIN },
	{ "GET", "/console/api/apps/{}/export", h_export, AUTH_ADMIN },
	{ "GET", "/console/api/apps/{}/export-bundle", h_export_bundle,
	    AUTH_ADMIN },
	{ "GET", "/console/api/apps/{}/bundle", h_bundle, AUTH_ADMIN },
	{ NULL, NULL, NULL, AUTH_NONE },
};
