/*
 * t_fcgi_router.c — from a request URI to a handler: the mount prefix
 * (found before flowcgi's URL roots, or forced by server.url_prefix),
 * patterns with {} segments (percent-decoded, a NUL refused, a trailing
 * slash allowed), 404, 405 with Allow, and 401 before a handler that
 * needs the admin token or an app key.
 */
#include "fcgi/router.c"
#include "tap.h"
#include "fcgi_fake.h"
#include "tmp_engine.h"

static struct conf	 conf;
static struct engine	*eng;
static unsigned char	 admin_hash[32];

/* ====== Prefix and path ====== */

static int
split(const struct conf *c, const char *uri, const char **prefix,
    const char **path, struct fake *f)
{
	int rc;

	fake_init(f, c, "REQUEST_URI", uri, NULL);
	rc = split_uri(&f->r);
	*prefix = f->r.prefix;
	*path = f->r.path;
	return rc;
}

static void
test_split(void)
{
	struct conf	 c = conf;
	struct fake	 f;
	const char	*pre, *path;

	CHECK_INT(split(&c, "/console/api/apps?x=1", &pre, &path, &f), 0);
	CHECK_STR(pre, "");
	CHECK_STR(path, "/console/api/apps");
	fake_release(&f);
	CHECK_INT(split(&c, "/flow/v1/workflows/run", &pre, &path, &f), 0);
	CHECK_STR(pre, "/flow");
	CHECK_STR(path, "/v1/workflows/run");
	fake_release(&f);
	CHECK_INT(split(&c, "/a/b/healthz", &pre, &path, &f), 0);
	CHECK_STR(pre, "/a/b");
	CHECK_STR(path, "/healthz");
	fake_release(&f);
	/* a root must be a whole segment */
	CHECK_INT(split(&c, "/v1x/apps", &pre, &path, &f), -1);
	fake_release(&f);
	CHECK_INT(split(&c, "/static/index.html", &pre, &path, &f), -1);
	fake_release(&f);
	/* Apache and CGI: SCRIPT_NAME and PATH_INFO */
	fake_init(&f, &c, "SCRIPT_NAME", "/cgi/flowcgi", "PATH_INFO",
	    "/console/api/apps", NULL);
	CHECK_INT(split_uri(&f.r), 0);
	CHECK_STR(f.r.prefix, "/cgi/flowcgi");
	CHECK_STR(f.r.path, "/console/api/apps");
	fake_release(&f);
	/* a forced prefix must lead the URI, as a whole segment */
	snprintf(c.url_prefix, sizeof(c.url_prefix), "/flow/");
	CHECK_INT(split(&c, "/flow/v1/x", &pre, &path, &f), 0);
	CHECK_STR(pre, "/flow");
	CHECK_STR(path, "/v1/x");
	fake_release(&f);
	CHECK_INT(split(&c, "/flowx/v1/x", &pre, &path, &f), -1);
	fake_release(&f);
	CHECK_INT(split(&c, "/other/v1/x", &pre, &path, &f), -1);
	fake_release(&f);
}

/* ====== Patterns ====== */

static void
test_match(void)
{
	struct fake f;

	fake_init(&f, &conf, NULL);
	CHECK(route_match(&f.r, "/console/api/apps", "/console/api/apps"));
	CHECK(route_match(&f.r, "/console/api/apps", "/console/api/apps/"));
	CHECK(!route_match(&f.r, "/console/api/apps", "/console/api/app"));
	CHECK(!route_match(&f.r, "/console/api/apps", "/console/api/apps/x"));
	CHECK(route_match(&f.r, "/a/{}/b/{}", "/a/x%20y/b/z"));
	CHECK_INT(f.r.ncaptures, 2);
	CHECK_STR(f.r.captures[0], "x y");
	CHECK_STR(f.r.captures[1], "z");
	/* {} takes one non-empty segment */
	CHECK(!route_match(&f.r, "/a/{}/b", "/a//b"));
	CHECK(!route_match(&f.r, "/a/{}", "/a/x/y"));
	CHECK(route_match(&f.r, "/a/{}", "/a/x%2Fy"));
	CHECK_STR(f.r.captures[0], "x/y");
	CHECK(!route_match(&f.r, "/a/{}", "/a/x%00y"));
	CHECK(!route_match(&f.r, "/a/{}/{}/{}/{}/{}", "/a/1/2/3/4/5"));
	fake_release(&f);
}

/* ====== Dispatch ====== */

/* Dispatches method uri (with the Authorization header, if any). */
static int
dispatch(struct fake *f, const char *method, const char *uri,
    const char *authorization)
{
	if (authorization != NULL)
		fake_init(f, &conf, "REQUEST_METHOD", method, "REQUEST_URI",
		    uri, "HTTP_AUTHORIZATION", authorization, NULL);
	else
		fake_init(f, &conf, "REQUEST_METHOD", method, "REQUEST_URI",
		    uri, NULL);
	f->r.eng = eng;
	f->r.admin_token_hash = admin_hash;
	router_dispatch(&f->r);
	return fake_status(f);
}

static void
test_dispatch(void)
{
	struct fake f;

	CHECK_INT(dispatch(&f, "GET", "/healthz", NULL), 200);
	CHECK(strstr(fake_answer(&f), "\"status\":\"ok\"") != NULL);
	fake_release(&f);
	CHECK_INT(dispatch(&f, "GET", "/flow/healthz/", NULL), 200);
	fake_release(&f);
	CHECK_INT(dispatch(&f, "GET", "/nothing/here", NULL), 404);
	fake_release(&f);
	CHECK_INT(dispatch(&f, "GET", "/console/api/nothing", NULL), 404);
	fake_release(&f);
	/* another method: 405 and what is allowed */
	CHECK_INT(dispatch(&f, "DELETE", "/console/api/apps", NULL), 405);
	CHECK(strstr(f.out, "Allow: GET, POST\r\n") != NULL);
	fake_release(&f);
	/* the admin token, before the handler */
	CHECK_INT(dispatch(&f, "GET", "/console/api/apps", NULL), 401);
	CHECK(strstr(f.out, "WWW-Authenticate: Bearer\r\n") != NULL);
	fake_release(&f);
	CHECK_INT(dispatch(&f, "GET", "/console/api/apps", "Bearer wrong"),
	    401);
	fake_release(&f);
	CHECK_INT(dispatch(&f, "GET", "/console/api/apps", "Bearer tok"),
	    200);
	CHECK(strstr(fake_answer(&f), "\"data\"") != NULL);
	fake_release(&f);
	/* a NUL in any query value is refused before the token is looked
	 * at or a handler reads a value cut short */
	fake_init(&f, &conf, "REQUEST_METHOD", "GET", "REQUEST_URI",
	    "/console/api/apps?name=admin%00x", "QUERY_STRING",
	    "name=admin%00x", "HTTP_AUTHORIZATION", "Bearer tok", NULL);
	f.r.eng = eng;
	f.r.admin_token_hash = admin_hash;
	router_dispatch(&f.r);
	CHECK_INT(fake_status(&f), 400);
	CHECK(strstr(fake_answer(&f), "NUL byte") != NULL);
	CHECK(strstr(fake_answer(&f), "\"data\"") == NULL);
	fake_release(&f);
	/* an app key is no admin token, and the reverse */
	CHECK_INT(dispatch(&f, "POST", "/v1/workflows/run", "Bearer tok"),
	    401);
	CHECK(strstr(fake_answer(&f), "Access token is invalid") != NULL);
	fake_release(&f);
	/* a service route the Web App reaches (WEB_ROUTE) answers under
	 * /api, asking for a passport and not for an app key */
	CHECK_INT(dispatch(&f, "POST", "/api/chat-messages", "Bearer tok"),
	    401);
	CHECK(strstr(fake_answer(&f), "Invalid token") != NULL);
	CHECK(strstr(f.out, "WWW-Authenticate") == NULL);
	fake_release(&f);
	CHECK_INT(dispatch(&f, "DELETE", "/api/chat-messages", NULL), 405);
	CHECK(strstr(f.out, "Allow: POST\r\n") != NULL);
	fake_release(&f);
	/* one that is not (the run logs) is no /api route */
	CHECK_INT(dispatch(&f, "GET", "/api/workflows/logs", NULL), 404);
	fake_release(&f);
}

int
main(void)
{
	char	 dir[256];

	conf_defaults(&conf);
	log_init(CONF_LOG_ERROR, "/dev/null");
	conf.map_size = 4 << 20;
	if (tmp_engine_open("t_fcgi_router", &conf, dir, sizeof(dir),
	    &eng) != 0)
		return tap_done();
	auth_hash("tok", admin_hash);
	test_split();
	test_match();
	test_dispatch();
	tmp_engine_close(eng, dir);
	return tap_done();
}
