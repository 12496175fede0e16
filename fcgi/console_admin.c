/*
 * console_admin.c — the admin page and the console endpoints it needs.
 *
 * The page: the files of fcgi/admin/ (plain HTML, CSS, ES modules and an
 * icon) and the shared ES modules of fcgi/ui/ (served at <prefix>/ui/) are
 * compiled into the binary by a GNUmakefile rule that turns each
 * file into a C array (od + sed, no other tool) in
 * build/<flavour>/gen/admin_files.c, listed in admin_files[]. It is served
 * at <prefix>/admin/ with its own headers: an ETag (answered 304),
 * Cache-Control no-cache (revalidated) except for the icon (kept a day), a
 * strict Content-Security-Policy (nothing inline, nothing from elsewhere),
 * X-Frame-Options DENY.
 *
 * The console endpoints, in Dify's paths (the draft itself and its
 * versions: console_workflows.c):
 *   POST /console/api/apps/{id}/workflows/draft/run   {inputs, files?}
 *   POST /console/api/apps/{id}/advanced-chat/workflows/draft/run
 *        {query, inputs, conversation_id?, files?}
 *        both stream server-sent events as /v1/workflows/run does; with
 *        "user" (default "admin") they run as that console user, whose
 *        draft sandbox workspace they keep (console_workspace.c).
 *   POST /console/api/apps/{id}/workflows/draft/nodes/{node}/run {inputs}
 *   GET  /console/api/apps/{id}/workflows/draft/nodes/{node}/last-run
 *        Dify's single-step run of one node and the node's last
 *        execution (engine/run/single.c).
 */
#include <stdio.h>
#include <string.h>

#include <openssl/sha.h>

#include "fcgi/internal.h"

/* ====== Embedded files ====== */

/* One file of fcgi/admin/; the generated table ends with a NULL name. */
struct admin_file {
	const char		*name;
	const unsigned char	*data;
	size_t			 len;
};

/* Defined in the generated build/<flavour>/gen/admin_files.c. */
extern const struct admin_file admin_files[];

#define ADMIN_CSP "default-src 'self'; script-src 'self'; " \
	"style-src 'self'; img-src 'self' data:; connect-src 'self'; " \
	"font-src 'self'; object-src 'none'; base-uri 'none'; " \
	"form-action 'self'; frame-ancestors 'none'"

/* The embedded file called name, or NULL. */
static const struct admin_file *
admin_file_find(const char *name)
{
	const struct admin_file *f;

	for (f = admin_files; f->name != NULL; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

/*
 * Content-Type and Cache-Control of an embedded file, by its extension.
 * The page, its script and its style are revalidated on every load (no-cache
 * with the ETag), so a new binary shows at once; the icon, asked for on
 * every page load and changed by a release at most, is kept for a day.
 */
struct admin_type {
	const char	*ext;
	const char	*ctype;
	const char	*cache;
};

static const struct admin_type admin_types[] = {
	{ ".html", "text/html; charset=utf-8", "no-cache" },
	{ ".css", "text/css; charset=utf-8", "no-cache" },
	{ ".js", "text/javascript; charset=utf-8", "no-cache" },
	{ ".svg", "image/svg+xml", "max-age=86400" },
	{ ".png", "image/png", "max-age=86400" },
	{ ".ico", "image/x-icon", "max-age=86400" },
	{ ".txt", "text/plain; charset=utf-8", "no-cache" },
	{ ".yml", "application/yaml; charset=utf-8", "no-cache" },
};

static const struct admin_type admin_type_other = {
	"", "application/octet-stream", "no-cache"
};

/* The type of an embedded file name (never NULL). */
static const struct admin_type *
admin_type(const char *name)
{
	const char	*dot = strrchr(name, '.');
	size_t		 i;

	if (dot != NULL)
		for (i = 0; i < sizeof(admin_types) / sizeof(admin_types[0]);
		    i++)
			if (strcmp(dot, admin_types[i].ext) == 0)
				return &admin_types[i];
	return &admin_type_other;
}

/* A strong ETag of f: the first 64 bits of its SHA-256 and its length. */
static void
admin_etag(const struct admin_file *f, char *buf, size_t bufsz)
{
	unsigned char	md[SHA256_DIGEST_LENGTH];

	SHA256(f->data, f->len, md);
	snprintf(buf, bufsz, "\"%02x%02x%02x%02x%02x%02x%02x%02x-%zu\"",
	    md[0], md[1], md[2], md[3], md[4], md[5], md[6], md[7], f->len);
}

/*
 * Sends a page response: the page's own headers (cache as given, a strict
 * CSP, no framing) and len bytes of body (NULL: none).
 */
static void
admin_send(struct req *r, int status, const char *ctype, const char *cache,
    const char *etag, const char *location, const void *body, size_t len)
{
	resp_header(r, "Cache-Control", cache);
	resp_header(r, "X-Frame-Options", "DENY");
	resp_header(r, "Referrer-Policy", "no-referrer");
	resp_header(r, "Content-Security-Policy", ADMIN_CSP);
	if (etag != NULL)
		resp_header(r, "ETag", arena_strdup(r->a, etag));
	if (location != NULL)
		resp_header(r, "Location", location);
	if (body != NULL)
		resp_bytes(r, status, ctype, body, len);
	else
		resp_empty(r, status);
}

/* Serves embedded file name with its ETag, or 304, or a JSON 404. */
static void
admin_serve(struct req *r, const char *name)
{
	const struct admin_file	*f = admin_file_find(name);
	const struct admin_type	*t;
	const char		*inm;
	char			 etag[48];

	if (f == NULL) {
		resp_error(r, 404, "not_found", "no such admin file");
		return;
	}
	t = admin_type(f->name);
	admin_etag(f, etag, sizeof(etag));
	inm = req_param(r, "HTTP_IF_NONE_MATCH");
	if (inm != NULL && strstr(inm, etag) != NULL) {
		admin_send(r, 304, NULL, t->cache, etag, NULL, NULL, 0);
		return;
	}
	admin_send(r, 200, t->ctype, t->cache, etag, NULL, f->data, f->len);
}

/* GET /admin and /admin/: a redirect to admin/, then the page. */
static void
h_admin_root(struct req *r)
{
	static const char msg[] = "moved to admin/\n";
	size_t n = strlen(r->path);

	if (n == 0 || r->path[n - 1] != '/') {
		/* Relative: right under any prefix the server mounts us at. */
		admin_send(r, 301, "text/plain; charset=utf-8", "no-cache",
		    NULL, "admin/", msg, sizeof(msg) - 1);
		return;
	}
	admin_serve(r, "index.html");
}

/* GET /admin/{file} */
static void
h_admin_file(struct req *r)
{
	admin_serve(r, r->captures[0]);
}

/*
 * GET /ui/{file}: a shared ES module of fcgi/ui/ (embedded as "ui/<file>"),
 * imported as ../ui/<file> by the admin page and the Web App alike.
 */
static void
h_ui_file(struct req *r)
{
	const char *name = arena_printf(r->a, "ui/%s", r->captures[0]);

	if (name == NULL) {
		resp_error(r, 500, "internal_server_error", "out of memory");
		return;
	}
	admin_serve(r, name);
}

/*
 * GET /admin/templates/{file}: an app template of the create dialog (a Dify
 * DSL file of fcgi/admin/templates/, embedded as "templates/<file>"), which
 * the page imports through /console/api/apps/imports like any other file.
 */
static void
h_admin_template(struct req *r)
{
	const char *name = arena_printf(r->a, "templates/%s", r->captures[0]);

	if (name == NULL) {
		resp_error(r, 500, "internal_server_error", "out of memory");
		return;
	}
	admin_serve(r, name);
}

/* ====== Draft runs, streamed ====== */

/*
 * Runs the draft of app captures[0] as the admin ("console" invocation)
 * and streams its events. chat says whether this is the advanced-chat
 * route. Errors before the stream starts are JSON answers; after, an
 * "error" event in the stream.
 */
static void
draft_run(struct req *r, int chat)
{
	struct run_opts		 o;
	struct run_slot		 slot = { NULL, 0, 0, 0 };
	const char		*mode, *query = NULL, *conv = NULL;
	const char		*user = NULL;
	char			 err[ENGINE_ERRMAX] = "";
	json_t			*app = NULL, *inputs, *res = NULL;
	int			 rc;

	if (req_read_json(r) != 0)
		goto out;
	if ((rc = engine_app_get(r->eng, r->captures[0], &app)) != 0) {
		resp_engine_error(r, rc, "", "app");
		goto out;
	}
	mode = json_string_value(json_object_get(app, "mode"));
	if (mode == NULL || strcmp(mode, chat ? "advanced-chat" : "workflow")
	    != 0) {
		resp_error(r, 400, chat ? "not_chat_app" : "not_workflow_app",
		    "this app's mode is %s; run it with %s", mode ? mode : "?",
		    mode && strcmp(mode, "advanced-chat") == 0 ?
		    "advanced-chat/workflows/draft/run" :
		    mode && strcmp(mode, "workflow") == 0 ?
		    "workflows/draft/run" : "the service API");
		goto out;
	}
	inputs = json_object_get(r->json, "inputs");
	if (inputs != NULL && !json_is_object(inputs)) {
		resp_error(r, 400, "invalid_param", "inputs must be an object");
		goto out;
	}
	if (inputs == NULL && json_object_set_new(r->json, "inputs",
	    inputs = json_object()) != 0) {
		resp_error(r, 500, "internal_server_error", "out of memory");
		goto out;
	}
	if (chat && (req_json_string(r, "query", 1, &query) != 0 ||
	    req_json_string(r, "conversation_id", 0, &conv) != 0))
		goto out;
	/* the console user whose draft sandbox workspace the run keeps
	 * (console_workspace.c): "admin" unless the body names one */
	if (req_json_string(r, "user", 0, &user) != 0)
		goto out;
	if (user == NULL || *user == '\0')
		user = "admin";
	else if (strlen(user) > 200) {
		resp_error(r, 400, "invalid_param", "user is longer than 200 "
		    "bytes");
		goto out;
	}
	memset(&o, 0, sizeof(o));
	o.app_id = r->captures[0];
	o.inputs = inputs;
	o.user = user;
	o.query = query;
	o.conversation_id = conv != NULL && *conv != '\0' ? conv : NULL;
	o.files = json_object_get(r->json, "files");
	o.invoke_from = "debugger";
	if (run_admit(r, r->captures[0], &o, &slot) != 0)
		goto out;
	sse_run(r, &o, err, &res);
out:
	run_release(&slot);
	json_decref(res);
	json_decref(app);
}

static void
h_draft_run(struct req *r)
{
	draft_run(r, 0);
}

static void
h_chat_draft_run(struct req *r)
{
	draft_run(r, 1);
}

/* ====== Single-step runs ====== */

/*
 * POST .../workflows/draft/nodes/{node}/run {inputs}: Dify's
 * DraftWorkflowNodeRunApi. The node's execution, 200 even when the node
 * failed (status failed, its error); within the app's run limits.
 */
static void
h_node_run(struct req *r)
{
	struct run_opts	 o;
	struct run_slot	 slot = { NULL, 0, 0, 0 };
	const char	*user = NULL;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*inputs, *res = NULL;
	int		 rc;

	if (req_read_json(r) != 0)
		goto out;
	inputs = json_object_get(r->json, "inputs");
	if (inputs == NULL || json_is_null(inputs)) {
		resp_error(r, 400, "invalid_param", "missing inputs");
		goto out;
	}
	if (!json_is_object(inputs)) {
		resp_error(r, 400, "invalid_param", "inputs must be an object");
		goto out;
	}
	if (req_json_string(r, "user", 0, &user) != 0)
		goto out;
	if (user == NULL || *user == '\0')
		user = "admin";
	else if (strlen(user) > 200) {
		resp_error(r, 400, "invalid_param", "user is longer than 200 "
		    "bytes");
		goto out;
	}
	memset(&o, 0, sizeof(o));
	o.app_id = r->captures[0];
	o.inputs = inputs;
	o.user = user;
	o.invoke_from = "debugger";
	if (run_admit(r, r->captures[0], &o, &slot) != 0)
		goto out;
	if ((rc = engine_node_run(r->eng, &o, r->captures[1], err, &res)) !=
	    0) {
		resp_engine_error(r, rc, err, "app");
		goto out;
	}
	resp_json(r, 200, res);
	res = NULL;
out:
	run_release(&slot);
	json_decref(res);
}

/* GET .../workflows/draft/nodes/{node}/last-run: Dify's
 * DraftWorkflowNodeLastRunApi; 404 when the node never ran. */
static void
h_node_last_run(struct req *r)
{
	json_t	*res = NULL;
	int	 rc;

	if ((rc = engine_node_last_run(r->eng, r->captures[0],
	    r->captures[1], &res)) != 0) {
		resp_engine_error(r, rc, rc == ENGINE_ENOTFOUND ?
		    "node last run not found" : "", "node");
		return;
	}
	resp_json(r, 200, res);
}

#define A "/console/api/apps/{}"
const struct route console_admin_routes[] = {
	{ "GET", "/admin", h_admin_root, AUTH_NONE },
	{ "GET", "/admin/{}", h_admin_file, AUTH_NONE },
	{ "GET", "/admin/templates/{}", h_admin_template, AUTH_NONE },
	{ "GET", "/ui/{}", h_ui_file, AUTH_NONE },
	{ "POST", A "/workflows/draft/run", h_draft_run, AUTH_ADMIN },
	{ "POST", A "/advanced-chat/workflows/draft/run", h_chat_draft_run,
	    AUTH_ADMIN },
	{ "POST", A "/workflows/draft/nodes/{}/run", h_node_run, AUTH_ADMIN },
	{ "GET", A "/workflows/draft/nodes/{}/last-run", h_node_last_run,
	    AUTH_ADMIN },
	{ NULL, NULL, NULL, AUTH_NONE },
};
#undef A
