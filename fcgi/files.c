/*
 * files.c — signed links to files, /console/api/files/...: Dify's presigned
 * URLs, which a browser uses without a token (uploads and downloads of app
 * files, the upload of a prepared bundle import, the download of an exported
 * bundle). The link's signature (engine/records/links.c) is the whole
 * authorisation, so each handler checks it before it reads a byte of the
 * body: a PUT of the raw bytes answers 204, a GET gives the file as an
 * attachment. A link that was changed or has expired is 403, and so is an
 * upload link used before (one PUT each); a file or import that is gone
 * is 404.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>


#include "fcgi/internal.h"

#define BUNDLE_UPLOAD	"/console/api/files/bundle-imports/%s/upload"
#define BUNDLE_EXPORT	"/console/api/files/app-bundles/%s/%s/download"
#define ASSET_LINK	"/console/api/files/app-assets/%s/%s/%s"

/* The path segment that says whether an exported bundle has secrets. */
#define WITH_SECRETS	"with-secrets"
#define NO_SECRETS	"without-secrets"

/* ====== Making links ====== */

const char *
signed_url(struct req *r, const char *method, const char *path, int64_t ttl)
{
	char		 q[ENGINE_LINK_QUERY_MAX], err[ENGINE_ERRMAX] = "";
	const char	*url;
	int		 rc;

	if ((rc = engine_link_sign(r->eng, method, path, ttl, q, NULL,
	    err)) != 0) {
		log_error("signing a link: %s", err);
		resp_engine_error(r, rc, err, "link");
		return NULL;
	}
	if ((url = arena_printf(r->a, "%s%s?%s", req_base_url(r), path,
	    q)) == NULL)
		resp_engine_error(r, ENGINE_ENOMEM, "", "link");
	return url;
}

const char *
asset_link(struct req *r, const char *app_id, const char *node_id,
    const char *what)
{
	const char *path;

	path = arena_printf(r->a, ASSET_LINK, app_id, node_id, what);
	if (path == NULL) {
		resp_engine_error(r, ENGINE_ENOMEM, "", "link");
		return NULL;
	}
	return signed_url(r, strcmp(what, "upload") == 0 ? "PUT" : "GET",
	    path, r->conf->asset_link_ttl);
}

const char *
bundle_upload_link(struct req *r, const char *import_id)
{
	const char *path;

	if ((path = arena_printf(r->a, BUNDLE_UPLOAD, import_id)) == NULL) {
		resp_engine_error(r, ENGINE_ENOMEM, "", "link");
		return NULL;
	}
	return signed_url(r, "PUT", path, r->conf->bundle_import_ttl);
}

const char *
bundle_export_link(struct req *r, const char *app_id, int include_secret)
{
	const char *path;

	if ((path = arena_printf(r->a, BUNDLE_EXPORT, app_id, include_secret ?
	    WITH_SECRETS : NO_SECRETS)) == NULL) {
		resp_engine_error(r, ENGINE_ENOMEM, "", "link");
		return NULL;
	}
	return signed_url(r, "GET", path, r->conf->asset_link_ttl);
}

/* ====== Checking them ====== */

/*
 * 0 when this request carries a valid link to its own method and path,
 * living at most max_ttl seconds; else -1 after answering 403.
 */
static int
link_check(struct req *r, int64_t max_ttl)
{
	char	err[ENGINE_ERRMAX] = "";
	int	rc;

	rc = engine_link_verify(r->eng, r->method, r->path,
	    req_query(r, "expires_at"), req_query(r, "nonce"),
	    req_query(r, "sign"), max_ttl, err);
	if (rc == 0)
		return 0;
	if (rc == ENGINE_EINVAL)
		resp_error(r, 403, "forbidden", "%s", err);
	else
		resp_engine_error(r, rc, err, "link");
	return -1;
}

/*
 * Spends this request's upload link (after link_check and the body were
 * read: a body refused does not spend it). 0, or -1 after answering 403
 * when it was used already, as Dify answers any link it refuses.
 */
static int
link_spend(struct req *r)
{
	char	err[ENGINE_ERRMAX] = "";
	int	rc;

	rc = engine_link_use(r->eng, req_query(r, "expires_at"),
	    req_query(r, "nonce"), err);
	if (rc == 0)
		return 0;
	if (rc == ENGINE_EEXIST || rc == ENGINE_EINVAL)
		resp_error(r, 403, "forbidden", "%s", err);
	else
		resp_engine_error(r, rc, err, "link");
	return -1;
}

/*
 * Reads a raw body of at most limit bytes (setting names the limit), and
 * never more than limits.max_body. Returns 0 or the status answered.
 */
static int
body_read(struct req *r, int64_t limit, const char *setting)
{
	if (r->conf->max_body < limit) {
		limit = r->conf->max_body;
		setting = "limits.max_body";
	}
	if (r->content_length > limit) {
		resp_error(r, 413, "payload_too_large", "a body of %lld bytes "
		    "is larger than %lld bytes (%s)",
		    (long long)r->content_length, (long long)limit, setting);
		return 413;
	}
	return req_read_body(r, limit);
}

/* ====== Handlers ====== */

/* PUT .../bundle-imports/{import}/upload: the .zip of a prepared import. */
static void
h_bundle_upload(struct req *r)
{
	char	err[ENGINE_ERRMAX] = "";
	int	rc;

	if (link_check(r, r->conf->bundle_import_ttl) != 0 ||
	    body_read(r, r->conf->bundle_max_size, "bundle.max_size") != 0 ||
	    link_spend(r) != 0)
		return;
	rc = engine_bundle_upload(r->eng, r->captures[0], r->body,
	    r->body_len, err);
	if (rc == ENGINE_ENOTFOUND) {
		resp_error(r, 404, "not_found", "import %s expired, was "
		    "confirmed or does not exist", r->captures[0]);
		return;
	}
	if (rc != 0) {
		resp_engine_error(r, rc, err, "import");
		return;
	}
	resp_empty(r, 204);
}

/*
 * GET .../app-bundles/{app}/{with-secrets|without-secrets}/download: the
 * app's .zip bundle (what export-bundle's download_url names, as Dify's
 * presigned export link does).
 */
static void
h_bundle_download(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "", *zip = NULL, *name = NULL;
	size_t	 len = 0;
	int	 rc, secrets;

	if (link_check(r, r->conf->asset_link_ttl) != 0)
		return;
	secrets = strcmp(r->captures[1], WITH_SECRETS) == 0;
	if (!secrets && strcmp(r->captures[1], NO_SECRETS) != 0) {
		resp_error(r, 404, "not_found", "no such endpoint");
		return;
	}
	rc = engine_export_bundle(r->eng, r->captures[0], secrets, err, &zip,
	    &len, &name);
	if (rc != 0) {
		resp_engine_error(r, rc, err, "app");
		return;
	}
	resp_attachment(r, name);
	resp_header(r, "Cache-Control", "private, no-store");
	resp_bytes(r, 200, "application/zip", zip, len);
	free(zip);
	free(name);
}

/* GET .../app-assets/{app}/{node}/download: the file, as an attachment. */
static void
h_asset_download(struct req *r)
{
	char		 err[ENGINE_ERRMAX] = "", sum[65];
	const char	*name;
	uint64_t	 len = 0;
	json_t		*node = NULL;
	int		 rc;

	if (link_check(r, r->conf->asset_link_ttl) != 0)
		return;
	rc = engine_asset_open(r->eng, r->captures[0], r->captures[1], err,
	    &node, sum, &len);
	if (rc == ENGINE_ENOTFOUND || rc == ENGINE_EINVAL) {
		resp_error(r, 404, "not_found", "file not found");
		return;
	}
	if (rc != 0) {
		resp_engine_error(r, rc, err, "file");
		return;
	}
	name = json_string_value(json_object_get(node, "name"));
	resp_attachment(r, name);
	/* Anyone with the link gets it: never render it on our origin. */
	resp_header(r, "X-Content-Type-Options", "nosniff");
	resp_header(r, "Cache-Control", "private, no-store");
	resp_blob(r, "application/octet-stream", sum, len);
	json_decref(node);
}

/* PUT .../app-assets/{app}/{node}/upload: new contents of the file. */
static void
h_asset_upload(struct req *r)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*node = NULL;
	int	 rc;

	if (link_check(r, r->conf->asset_link_ttl) != 0 ||
	    body_read(r, r->conf->asset_max_file,
	    "assets.max_file_size") != 0 || link_spend(r) != 0)
		return;
	rc = engine_asset_write(r->eng, r->captures[0], r->captures[1],
	    r->body, r->body_len, err, &node);
	if (rc == ENGINE_ENOTFOUND) {
		resp_error(r, 404, "not_found", "file not found");
		return;
	}
	if (rc != 0) {
		resp_engine_error(r, rc, err, "file");
		return;
	}
	json_decref(node);
	resp_empty(r, 204);
}

#define F "/console/api/files"
const struct route file_routes[] = {
	{ "PUT", F "/bundle-imports/{}/upload", h_bundle_upload, AUTH_NONE },
	{ "GET", F "/app-bundles/{}/{}/download", h_bundle_download,
	    AUTH_NONE },
	{ "GET", F "/app-assets/{}/{}/download", h_asset_download, AUTH_NONE },
	{ "PUT", F "/app-assets/{}/{}/upload", h_asset_upload, AUTH_NONE },
	{ NULL, NULL, NULL, AUTH_NONE },
};
#undef F
