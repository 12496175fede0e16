/*
 * router.c — from CGI parameters to a handler: the mount prefix, the route
 * path, method checks (405 with Allow), authentication.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "fcgi/internal.h"

static const struct route *const route_tables[] = {
	system_routes,
	console_dsl_routes,
	console_app_routes,
	/* drafts, published versions, chat apps' model config */
	console_workflow_routes,
	console_asset_routes,
	console_run_routes,
	console_model_routes,
	console_sandbox_routes,
	console_workspace_routes,
	/* MCP servers: Dify's tool-provider/mcp family */
	console_tool_routes,
	/* built-in tool providers: Settings > Tools */
	console_builtin_tool_routes,
	service_routes,
	/* service API: conversations, messages, feedback */
	service_conv_routes,
	/* service API: audio-to-text, text-to-audio */
	service_audio_routes,
	/* annotations and annotation reply: service API and console */
	annotation_routes,
	console_admin_routes,
	/* knowledge bases: datasets, documents, segments, retrieve */
	console_dataset_routes,
	service_dataset_routes,
	/* signed links to files: no token, the link's signature */
	file_routes,
	/* the Web App: sites, the web API (passport), the pages */
	web_site_routes,
	web_api_routes,
	web_page_routes,
	NULL,
};

/* First path segments of flowcgi's own URL space. */
static const char *const url_roots[] = {
	"/console/api", "/v1", "/admin", "/healthz", "/metrics",
	/* the Web App */
	"/api", "/chat", "/chatbot", "/completion", "/workflow", "/webapp",
	"/embed.js", "/embed.min.js",
	/* the ES modules the admin page and the Web App share */
	"/ui", NULL,
};

/*
 * Splits the request URI into the mount prefix and the route path. With a
 * configured url_prefix that prefix must lead the URI; otherwise the prefix
 * is whatever comes before the first of flowcgi's URL roots, which is right
 * for nginx (SCRIPT_NAME = whole URI), Apache (SCRIPT_NAME + PATH_INFO) and
 * CGI alike. Returns 0, or -1 when the URI is not one of ours.
 */
static int
split_uri(struct req *r)
{
	const char	*uri = req_param(r, "REQUEST_URI"), *q, *p;
	const char	*want = r->conf->url_prefix;
	size_t		 ulen, n, i;

	if (uri == NULL || *uri == '\0') {
		const char *sn = req_param(r, "SCRIPT_NAME");
		const char *pi = req_param(r, "PATH_INFO");

		uri = arena_printf(r->a, "%s%s", sn ? sn : "", pi ? pi : "");
		if (uri == NULL)
			return -1;
	}
	q = strchr(uri, '?');
	ulen = q ? (size_t)(q - uri) : strlen(uri);
	if (*want != '\0') {
		n = strlen(want);
		while (n > 0 && want[n - 1] == '/')
			n--;
		if (ulen < n || memcmp(uri, want, n) != 0 ||
		    (ulen > n && uri[n] != '/'))
			return -1;
		r->prefix = arena_strndup(r->a, uri, n);
		r->path = arena_strndup(r->a, uri + n, ulen - n);
		return r->prefix && r->path ? 0 : -1;
	}
	for (p = uri; p < uri + ulen; p++) {
		if (*p != '/')
			continue;
		for (i = 0; url_roots[i] != NULL; i++) {
			n = strlen(url_roots[i]);
			if ((size_t)(uri + ulen - p) >= n &&
			    memcmp(p, url_roots[i], n) == 0 &&
			    (p + n == uri + ulen || p[n] == '/')) {
				r->prefix = arena_strndup(r->a, uri,
				    (size_t)(p - uri));
				r->path = arena_strndup(r->a, p,
				    (size_t)(uri + ulen - p));
				return r->prefix && r->path ? 0 : -1;
			}
		}
	}
	return -1;
}

/*
 * Matches path against pattern segment by segment; "{}" takes one
 * non-empty segment, percent-decoded into r->captures. A trailing slash
 * on the path is allowed. Returns 1 on a match.
 */
static int
route_match(struct req *r, const char *pattern, const char *path)
{
	const char	*pp = pattern, *sp = path, *pe, *se;
	char		*dec;
	int		 n = 0, len;

	r->ncaptures = 0;
	for (;;) {
		if (*pp == '\0')
			return *sp == '\0' || (sp[0] == '/' && sp[1] == '\0');
		if (*pp != '/' || *sp != '/')
			return 0;
		pp++;
		sp++;
		pe = strchr(pp, '/');
		if (pe == NULL)
			pe = pp + strlen(pp);
		se = strchr(sp, '/');
		if (se == NULL)
			se = sp + strlen(sp);
		if (pe - pp == 2 && memcmp(pp, "{}", 2) == 0) {
			if (se == sp || n >= REQ_MAX_CAPTURES)
				return 0;
			dec = curl_easy_unescape(NULL, sp, (int)(se - sp),
			    &len);
			if (dec == NULL)
				return 0;
			if (memchr(dec, '\0', (size_t)len) != NULL) {
				curl_free(dec);
				return 0;
			}
			r->captures[n++] = arena_strndup(r->a, dec,
			    (size_t)len);
			curl_free(dec);
			if (r->captures[n - 1] == NULL)
				return 0;
			r->ncaptures = n;
		} else if (pe - pp != se - sp ||
		    memcmp(pp, sp, (size_t)(pe - pp)) != 0)
			return 0;
		pp = pe;
		sp = se;
	}
}

/*
 * Matches r's path against route rt: 1 as it is, 2 as a service route
 * the Web App reaches under /api (WEB_ROUTE: "/api/x" for "/v1/x"), 0
 * not at all.
 */
static int
route_try(struct req *r, const struct route *rt)
{
	if (route_match(r, rt->pattern, r->path))
		return 1;
	return (rt->auth & WEB_ROUTE) && strncmp(rt->pattern, "/v1/", 4) == 0 &&
	    strncmp(r->path, "/api/", 5) == 0 &&
	    route_match(r, rt->pattern + 3, r->path + 4) ? 2 : 0;
}

static void router_authed(struct req *r, const struct route *found,
    int web);

void
router_dispatch(struct req *r)
{
	const struct route	*const *tab, *rt, *found = NULL;
	char			 allow[128] = "";
	size_t			 alen = 0;
	int			 via = 0;

	if (split_uri(r) != 0) {
		resp_error(r, 404, "not_found", "no such endpoint");
		return;
	}
	for (tab = route_tables; *tab != NULL && found == NULL; tab++)
		for (rt = *tab; rt->method != NULL; rt++) {
			if ((via = route_try(r, rt)) == 0)
				continue;
			if (strcmp(rt->method, r->method) == 0) {
				found = rt;
				break;
			}
			if (strstr(allow, rt->method) == NULL)
				alen += (size_t)snprintf(allow + alen,
				    sizeof(allow) - alen, "%s%s",
				    alen ? ", " : "", rt->method);
		}
	if (found == NULL) {
		if (alen > 0) {
			resp_header(r, "Allow", arena_strdup(r->a, allow));
			resp_error(r, 405, "method_not_allowed", "%s is not "
			    "allowed here; allowed: %s", r->method, allow);
		} else
			resp_error(r, 404, "not_found", "no such endpoint");
		return;
	}
	/* route_match clobbered the captures while trying others: redo. */
	via = route_try(r, found);
	r->route = found->pattern;
	if (via == 2 && (r->route = arena_printf(r->a, "/api%s",
	    found->pattern + 3)) == NULL) {
		resp_error(r, 500, "internal_server_error", "out of memory");
		return;
	}
	log_context_request(r->request_id, r->route);
	/* The one place every query crosses: a value with a NUL in it
	 * would reach a handler cut short. */
	if (req_query_check(r) != 0)
		return;
	/* the caches of keys and apps check the generation once in it */
	engine_request_begin(r->eng);
	router_authed(r, found, via == 2);
	engine_request_end(r->eng);
}

/* The route's authentication: 0, or -1 after answering 401 (or 5xx). */
static int
router_auth(struct req *r, const struct route *found)
{
	unsigned	auth = found->auth & AUTH_MASK;
	int		rc;

	if (auth == AUTH_ADMIN && auth_check_admin(r) != 0) {
		resp_header(r, "WWW-Authenticate", "Bearer");
		resp_error(r, 401, "unauthorized", "missing or wrong admin "
		    "token in Authorization: Bearer");
		return -1;
	}
	if (auth == AUTH_APP && (rc = auth_check_app(r)) != 0) {
		/* a key not looked up (the database away) is no wrong key */
		if (rc != -1) {
			resp_engine_error(r, rc, "", "API key");
			return -1;
		}
		resp_header(r, "WWW-Authenticate", "Bearer");
		resp_error(r, 401, "unauthorized", "Access token is invalid");
		return -1;
	}
	/* an app key opens the service API only while enable_api is on */
	if (auth == AUTH_APP && web_site_api_check(r) != 0)
		return -1;
	return 0;
}

/* The route's authentication (a passport when web), then its handler. */
static void
router_authed(struct req *r, const struct route *found, int web)
{
	if (web ? web_api_enter(r, found->auth) != 0 : router_auth(r, found)
	    != 0)
		return;
	found->handler(r);
	if (r->status == 0)
		resp_error(r, 500, "internal_server_error", "no response");
}
