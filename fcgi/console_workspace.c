/*
 * console_workspace.c — the sandbox workspaces runs leave behind, in
 * Dify's paths (api/controllers/console/app/sandbox_files.py):
 *   GET  /console/api/apps/{id}/sandbox/files?path=&recursive=
 *        [{path, is_dir, size, mtime, extension}], sorted by path
 *   POST /console/api/apps/{id}/sandbox/files/download  {path}
 *        {download_url, expires_in, export_id}; a folder downloads as
 *        <name>.tar.gz, as Dify's export does
 * plus the link that ticket points at, GET .../sandbox/files/download
 * ?path= (the file's bytes, as an attachment; it needs the admin token as
 * everything under /console does), and POST .../sandbox/reset, which
 * forgets a user's draft workspace (Dify deletes the draft storage; it
 * has no route of its own for it).
 *
 * Dify keys the draft workspace by the logged-in account. flowcgi has one
 * admin token, so the console user is the "user" query parameter or body
 * field (as the service API names its end user), "admin" when absent —
 * the user draft runs from the admin page are made as. With
 * conversation_id the conversation's workspace is meant instead (with
 * user, only when that end user started it). Another app's or user's
 * workspace is 404, as one that does not exist.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "fcgi/internal.h"

#define CONSOLE_USER_DEFAULT	"admin"
#define CONSOLE_USER_MAX	200
#define TICKET_EXPIRES_IN	3600	/* Dify's export ticket lifetime */

/* ====== Helpers ====== */

/*
 * The workspace a request names, from its query (get) or JSON body.
 * Returns 0, or -1 after answering 400.
 */
static int
workspace_of(struct req *r, int from_body, struct workspace_ref *w)
{
	const char *user = NULL, *conv = NULL;

	memset(w, 0, sizeof(*w));
	w->app_id = r->captures[0];
	if (from_body) {
		if (req_json_string(r, "user", 0, &user) != 0 ||
		    req_json_string(r, "conversation_id", 0, &conv) != 0)
			return -1;
	} else {
		user = req_query(r, "user");
		conv = req_query(r, "conversation_id");
	}
	if (user != NULL && strlen(user) > CONSOLE_USER_MAX) {
		resp_error(r, 400, "invalid_param", "user is longer than %d "
		    "bytes", CONSOLE_USER_MAX);
		return -1;
	}
	if (conv != NULL && *conv != '\0') {
		w->conversation_id = conv;
		w->user = user != NULL && *user != '\0' ? user : NULL;
	} else
		w->user = user != NULL && *user != '\0' ? user :
		    CONSOLE_USER_DEFAULT;
	return 0;
}

/* A bad path is 400 invalid_path; the rest as the engine says. */
static void
workspace_error(struct req *r, int rc, const char *err)
{
	if (rc == ENGINE_EINVAL)
		resp_error(r, 400, "invalid_path", "%s", err);
	else if (rc == ENGINE_ENOTFOUND && err != NULL && *err != '\0')
		resp_error(r, 404, "sandbox_file_not_found", "%s", err);
	else
		resp_engine_error(r, rc, err, "app");
}

/* Pydantic's reading of a bool: 1 / 0 after answering 400: -1. */
static int
query_bool(struct req *r, const char *name, int *out)
{
	static const char *const yes[] = { "true", "1", "yes", "on", "t",
	    "y", NULL };
	static const char *const no[] = { "false", "0", "no", "off", "f",
	    "n", "", NULL };
	const char	*v = req_query(r, name);
	size_t		 i;

	*out = 0;
	if (v == NULL)
		return 0;
	for (i = 0; yes[i] != NULL; i++)
		if (strcasecmp(v, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
	for (i = 0; no[i] != NULL; i++)
		if (strcasecmp(v, no[i]) == 0)
			return 0;
	resp_error(r, 400, "invalid_param", "%s must be true or false", name);
	return -1;
}

/* ====== Handlers ====== */

/* GET .../sandbox/files?path=&recursive= */
static void
h_files(struct req *r)
{
	struct workspace_ref	 w;
	char			 err[ENGINE_ERRMAX] = "";
	json_t			*out = NULL;
	int			 recursive, rc;

	if (workspace_of(r, 0, &w) != 0 ||
	    query_bool(r, "recursive", &recursive) != 0)
		return;
	if ((rc = engine_workspace_list(r->eng, &w, req_query(r, "path"),
	    recursive, err, &out)) != 0) {
		workspace_error(r, rc, err);
		return;
	}
	resp_json(r, 200, out);
}

/* GET .../sandbox/files/download?path=: the bytes. */
static void
h_download(struct req *r)
{
	struct workspace_ref	 w;
	char			 err[ENGINE_ERRMAX] = "", *data = NULL;
	char			 clean[1024];
	const char		*path = req_query(r, "path"), *base;
	size_t			 len = 0;
	int			 rc, archive = 0;

	if (workspace_of(r, 0, &w) != 0)
		return;
	if (path == NULL || *path == '\0') {
		resp_error(r, 400, "invalid_param", "path is required");
		return;
	}
	if ((rc = engine_workspace_download(r->eng, &w, path, err, &data,
	    &len, &archive)) != 0) {
		workspace_error(r, rc, err);
		return;
	}
	/* a folder comes as <name>.tar.gz, the root as workspace.tar.gz */
	if (engine_workspace_path(path, clean, sizeof(clean)) != 0 ||
	    *clean == '\0')
		snprintf(clean, sizeof(clean), "workspace");
	base = strrchr(clean, '/');
	base = base ? base + 1 : clean;
	resp_attachment(r, archive ? arena_printf(r->a, "%s.tar.gz", base) :
	    base);
	resp_header(r, "Cache-Control", "no-store");
	resp_bytes(r, 200, archive ? "application/gzip" : resp_mime_of(clean),
	    data, len);
	free(data);
}

/* Appends "&name=<value escaped>" to the link; NULL value: nothing. */
static const char *
link_param(struct req *r, const char *url, const char *name,
    const char *value)
{
	const char	*out;
	char		*e;

	if (value == NULL)
		return url;
	if ((e = curl_easy_escape(NULL, value, 0)) == NULL)
		return NULL;
	out = arena_printf(r->a, "%s%s%s=%s", url, url[strlen(url) - 1] ==
	    '?' ? "" : "&", name, e);
	curl_free(e);
	return out;
}

/* POST .../sandbox/files/download {path}: Dify's download ticket. */
static void
h_ticket(struct req *r)
{
	struct workspace_ref	 w;
	char			 err[ENGINE_ERRMAX] = "", *data = NULL, id[37];
	const char		*path, *url;
	size_t			 len = 0;
	int			 rc, archive;

	if (req_read_json(r) != 0 || req_json_string(r, "path", 1, &path) != 0
	    || workspace_of(r, 1, &w) != 0)
		return;
	/* the ticket is for a file or folder that is there now */
	if ((rc = engine_workspace_download(r->eng, &w, path, err, &data,
	    &len, &archive)) != 0) {
		workspace_error(r, rc, err);
		return;
	}
	free(data);
	url = arena_printf(r->a, "%s/console/api/apps/%s/sandbox/files/"
	    "download?", req_base_url(r), w.app_id);
	url = url ? link_param(r, url, "path", path) : NULL;
	url = url ? link_param(r, url, "conversation_id", w.conversation_id) :
	    NULL;
	url = url ? link_param(r, url, "user", w.user) : NULL;
	if (url == NULL) {
		resp_error(r, 500, "internal_server_error", "out of memory");
		return;
	}
	engine_uuid(id);
	resp_json(r, 200, json_pack("{s:s,s:i,s:s}", "download_url", url,
	    "expires_in", TICKET_EXPIRES_IN, "export_id", id));
}

/* POST .../sandbox/reset {user?}: the draft workspace starts empty. */
static void
h_reset(struct req *r)
{
	struct workspace_ref	w;
	int			had = 0, rc;

	if (req_read_json(r) != 0 || workspace_of(r, 1, &w) != 0)
		return;
	if (w.conversation_id != NULL) {
		resp_error(r, 400, "invalid_param", "reset is for draft "
		    "workspaces; a conversation's goes with the conversation");
		return;
	}
	if ((rc = engine_workspace_reset(r->eng, w.app_id, w.user, &had))
	    != 0) {
		resp_engine_error(r, rc, "", "app");
		return;
	}
	resp_json(r, 200, json_pack("{s:s,s:b}", "result", "success",
	    "had_workspace", had));
}

#define A "/console/api/apps/{}/sandbox"
const struct route console_workspace_routes[] = {
	{ "GET", A "/files", h_files, AUTH_ADMIN },
	{ "GET", A "/files/download", h_download, AUTH_ADMIN },
	{ "POST", A "/files/download", h_ticket, AUTH_ADMIN },
	{ "POST", A "/reset", h_reset, AUTH_ADMIN },
	{ NULL, NULL, NULL, AUTH_NONE },
};
#undef A
