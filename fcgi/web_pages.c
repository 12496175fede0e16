/*
 * web_pages.c — the Web App's pages: the files of fcgi/webapp/ (plain
 * HTML, CSS and ES modules, compiled into the binary by the GNUmakefile as
 * the admin page's are, listed in webapp_files[]), served at Dify's share
 * addresses:
 *
 *   /chat/{code}  /chatbot/{code}  /completion/{code}  /workflow/{code}
 *                          the one page (index.html); its script reads
 *                          which from the address
 *   /webapp/{file}         its script, style and modules
 *   /embed.js, /embed.min.js   the embed script (Dify's difyChatbotConfig)
 *
 * Every answer has an ETag (304 on a match) and Cache-Control no-cache, a
 * Content-Security-Policy that lets nothing in from elsewhere, and
 * frame-ancestors from webapp.frame_ancestors, so an admin decides which
 * sites may frame the chatbot ("*" by default, as Dify lets any).
 */
#include <stdio.h>
#include <string.h>

#include <openssl/sha.h>

#include "fcgi/internal.h"
#include "conf/conf.h"

/* One file of fcgi/webapp/; the generated table ends with a NULL name. */
struct webapp_file {
	const char		*name;
	const unsigned char	*data;
	size_t			 len;
};

/* Defined in the generated build/<flavour>/gen/webapp_files.c. */
extern const struct webapp_file webapp_files[];

static const struct webapp_file *
webapp_file_find(const char *name)
{
	const struct webapp_file *f;

	for (f = webapp_files; f->name != NULL; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

static const char *
webapp_type(const char *name)
{
	const char *dot = strrchr(name, '.');

	if (dot == NULL)
		return "application/octet-stream";
	if (strcmp(dot, ".html") == 0)
		return "text/html; charset=utf-8";
	if (strcmp(dot, ".css") == 0)
		return "text/css; charset=utf-8";
	if (strcmp(dot, ".js") == 0)
		return "text/javascript; charset=utf-8";
	if (strcmp(dot, ".svg") == 0)
		return "image/svg+xml";
	return "application/octet-stream";
}

/* Serves embedded file name with its headers, or 304, or a JSON 404. */
static void
webapp_serve(struct req *r, const char *name)
{
	const struct webapp_file	*f = webapp_file_find(name);
	unsigned char			 md[SHA256_DIGEST_LENGTH];
	const char			*inm, *csp;
	char				 etag[48];

	if (f == NULL) {
		resp_error(r, 404, "not_found", "no such web app file");
		return;
	}
	SHA256(f->data, f->len, md);
	snprintf(etag, sizeof(etag), "\"%02x%02x%02x%02x%02x%02x%02x%02x-%zu\"",
	    md[0], md[1], md[2], md[3], md[4], md[5], md[6], md[7], f->len);
	csp = arena_printf(r->a, "default-src 'self'; script-src 'self'; "
	    "style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "
	    "font-src 'self'; object-src 'none'; base-uri 'none'; "
	    "form-action 'self'; frame-ancestors %s",
	    *r->conf->webapp_frame_ancestors ? r->conf->webapp_frame_ancestors :
	    "'none'");
	resp_header(r, "Cache-Control", "no-cache");
	resp_header(r, "Referrer-Policy", "no-referrer");
	resp_header(r, "X-Content-Type-Options", "nosniff");
	if (csp != NULL)
		resp_header(r, "Content-Security-Policy", csp);
	resp_header(r, "ETag", arena_strdup(r->a, etag));
	inm = req_param(r, "HTTP_IF_NONE_MATCH");
	if (inm != NULL && strstr(inm, etag) != NULL) {
		resp_empty(r, 304);
		return;
	}
	resp_bytes(r, 200, webapp_type(f->name), f->data, f->len);
}

/* A share page: the page for any code of the right shape (the page asks
 * for the passport and shows the API's answer: one request less, and no
 * way to tell codes apart by the page alone). */
static void
h_page(struct req *r)
{
	if (!r->conf->webapp_enabled) {
		resp_error(r, 404, "not_found", "the web app is off "
		    "(webapp.enabled)");
		return;
	}
	if (!web_code_valid(r->captures[0])) {
		resp_error(r, 404, "not_found", "no such app");
		return;
	}
	webapp_serve(r, "index.html");
}

static void
h_file(struct req *r)
{
	webapp_serve(r, r->captures[0]);
}

static void
h_embed(struct req *r)
{
	webapp_serve(r, "embed.js");
}

const struct route web_page_routes[] = {
	{ "GET", "/chat/{}", h_page, AUTH_NONE },
	{ "GET", "/chatbot/{}", h_page, AUTH_NONE },
	{ "GET", "/completion/{}", h_page, AUTH_NONE },
	{ "GET", "/workflow/{}", h_page, AUTH_NONE },
	{ "GET", "/webapp/{}", h_file, AUTH_NONE },
	{ "GET", "/embed.js", h_embed, AUTH_NONE },
	{ "GET", "/embed.min.js", h_embed, AUTH_NONE },
	{ NULL, NULL, NULL, AUTH_NONE },
};
