/*
 * e2b.c — the E2B sandbox provider: E2B's control plane (REST) to create,
 * keep alive and kill a cloud sandbox, and its envd daemon (Connect
 * protocol, JSON codec) to run commands and move files.
 * Wire facts: shared/reference/sandbox-protocols.md sections 1 and 2.
 *
 * Options (struct sandbox_config.options, Dify's keys first):
 *	api_key			required; sent as X-API-Key, never logged
 *	e2b_api_url		control plane, default https://api.e2b.app
 *	e2b_default_template	template, default code-interpreter-v1
 *	e2b_envd_url		envd base URL override (E2B_SANDBOX_URL)
 *	e2b_sandbox_timeout	sandbox lifetime in s, default 300 (the SDKs')
 *	e2b_workdir		the workspace in the sandbox, default /home/user
 *	e2b_keepalive		Keepalive-Ping-Interval in s, default 30
 *	e2b_deadline_grace	s past a command's limit before we give up on
 *				envd and kill it ourselves, default 3
 *	e2b_list_file_depth	ListDir depth, default 64
 * Numbers may be given as JSON numbers or as strings (Dify keeps strings).
 *
 * Where envd is reached. Every envd request carries E2b-Sandbox-Id and
 * E2b-Sandbox-Port: 49983 (as the JS SDK does) and X-Access-Token when the
 * sandbox was created secure (always: we send "secure": true). The base URL
 * is the first of:
 *  1. e2b_envd_url;
 *  2. the API URL itself when its host is an IP literal or "localhost":
 *     E2B's proxy routes such hosts on the headers above, so an offline
 *     double (tests/fakes/fake_e2b.py) or a local proxy serves both planes
 *     on one address;
 *  3. https://sandbox.<domain> for E2B's own domains (e2b.app, e2b.dev,
 *     e2b.pro, e2b-staging.dev), else https://49983-<id>.<domain>, where
 *     domain is the create response's "domain", else the API host without
 *     its leading "api.".
 *
 * Commands go through process.Process/Start as the SDKs send them:
 * /bin/bash -l -c <command> in the workspace (a shell string as given; an
 * argv quoted into one), the environment as "envs", "stdin": false. The
 * response frames are parsed as they arrive (start, data, keepalive, end,
 * then the end-stream frame); stdout and stderr are kept up to max_output
 * each and the rest counted as truncated, as local.c does.
 *
 * The command runs as `{ <command>\n}` followed by a kill of the shell's
 * remaining background jobs, so a command that ends while its children
 * run comes back at once and leaves nothing behind (grandchildren that
 * left the shell's job table are not reached this way).
 *
 * Standard input: written through the /files API first to a file named
 * .flowcgi-stdin-<uuid> in the sandbox user's home (a relative path, which
 * envd resolves against that home), and the command starts with
 * `exec 0<"$HOME"/.flowcgi-stdin-<uuid> && rm -f` it. One extra request
 * instead of process.Process/SendInput + CloseStdin racing the running
 * stream (those would need requests from inside the stream's callback),
 * and the bytes are all there before the command starts. When the command
 * never starts, the file is removed with filesystem.Filesystem/Remove.
 *
 * Wall clock. The command's limit goes to envd as Connect-Timeout-Ms (never
 * 0; envd kills the process at that deadline and ends the stream with
 * deadline_exceeded). Locally the stream is abandoned e2b_deadline_grace s
 * later (a keepalive or data frame past that point, or curl's own timeout);
 * then process.Process/SendSignal SIGKILL goes to the pid from the start
 * event. Either way the result says timed_out with exit code 137.
 *
 * Lifetime. The sandbox is created with e2b_sandbox_timeout; before each
 * call, when less than half of that is left, or when a command's limit
 * would outlast it, POST /sandboxes/{id}/timeout sets it again (to the
 * lifetime, or the command's limit plus a minute). Destroy is DELETE
 * /sandboxes/{id}: 204, or 404 for a sandbox already gone, both success.
 * A create that fails after E2B made the sandbox kills it before
 * returning; free() destroys; a command that fails mid-way has its process
 * killed.
 *
 * Every HTTP exchange goes through outbound_fetch with trusted = 1: the
 * admin configured these URLs, which may well be private (a self-hosted
 * E2B, a test double). Errors name the E2B operation and carry E2B's
 * message; the API key and the access token are scrubbed from them.
 *
 * A sandbox handle is used by one thread at a time.
 */
#include <ctype.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <openssl/evp.h>

#include "engine/sandbox/provider.h"

#define E2B_DEFAULT_API		"https://api.e2b.app"
#define E2B_DEFAULT_TEMPLATE	"code-interpreter-v1"
#define E2B_ENVD_PORT		"49983"
#define E2B_FRAME_MAX		(16 * 1024 * 1024)	/* one Connect message */
#define E2B_ERRBODY_MAX		2048
#define E2B_CALL_TIMEOUT	30	/* s, for everything but Start */
#define E2B_REFRESH_MARGIN	60	/* s a sandbox outlives a command */
#define E2B_LIST_MAX_BYTES	(64 * 1024 * 1024)

struct e2b {
	struct sandbox		 base;
	struct sandbox_config	 cfg;
	struct conf		*conf;		/* http.* defaults for outbound */
	struct engine		 eng;
	char			*api_url;	/* no trailing slash */
	char			*api_key;
	char			*template_id;
	char			*envd_override;
	char			*envd_url;	/* envd base, no trailing slash */
	char			*workdir;	/* "/home/user" */
	char			*sid;		/* E2B's sandboxID */
	char			*token;		/* envdAccessToken or NULL */
	int			 basic_user;	/* envd < 0.4.0: Basic "user:" */
	int			 lifetime;	/* s */
	int			 keepalive;	/* s */
	int			 grace;		/* s */
	int			 list_depth;
	int64_t			 expires_us;	/* monotonic; our view of TTL */
	int			 destroyed;
};

/* Replaces every occurrence of secret in err by "***". */
static void
scrub_one(char *err, const char *secret)
{
	char	*p;
	size_t	 n;

	if (secret == NULL || (n = strlen(secret)) < 4)
		return;
	while ((p = strstr(err, secret)) != NULL) {
		memcpy(p, "***", 3);
		memmove(p + 3, p + n, strlen(p + n) + 1);
	}
}

static void
scrub(const struct e2b *x, char *err)
{
	scrub_one(err, x->api_key);
	scrub_one(err, x->token);
}

/* ====== Small codecs ====== */

/*
 * Decodes standard or URL-safe base64 (padding optional) of n bytes at s
 * into a new buffer *out of *outlen bytes (malloc'd, caller frees). Returns
 * 0, or -1 on a bad character or out of memory.
 */
static int
b64_decode(const char *s, size_t n, unsigned char **out, size_t *outlen)
{
	unsigned char	*norm = NULL, *buf = NULL;
	size_t		 i, m = 0, pad = 0;
	int		 got, rc = -1;

	*out = NULL;
	*outlen = 0;
	if (n > (size_t)INT32_MAX / 2)
		goto out;
	if ((norm = malloc(n + 4)) == NULL || (buf = malloc(n / 4 * 3 + 4))
	    == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '=')
			break;
		if (c == '-')
			c = '+';
		else if (c == '_')
			c = '/';
		else if (!isalnum(c) && c != '+' && c != '/')
			goto out;
		norm[m++] = c;
	}
	for (; i < n; i++)
		if (s[i] != '=')
			goto out;
	if (m % 4 == 1)
		goto out;
	while (m % 4 != 0) {
		norm[m++] = '=';
		pad++;
	}
	if (m > 0 && norm[m - 1] == '=' && pad == 0)
		pad = norm[m - 2] == '=' ? 2 : 1;
	if (m == 0) {
		rc = 0;
		*out = buf;
		buf = NULL;
		goto out;
	}
	if ((got = EVP_DecodeBlock(buf, norm, (int)m)) < 0)
		goto out;
	/* EVP_DecodeBlock counts the bytes the padding stands for. */
	*outlen = (size_t)got - pad;
	*out = buf;
	buf = NULL;
	rc = 0;
out:
	free(norm);
	free(buf);
	return rc;
}

/* ====== Options ====== */

/* A copy of an http(s) URL without trailing slashes, or NULL. */
static char *
url_dup(const char *s)
{
	char	*u;
	size_t	 n;

	if (strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0)
		return NULL;
	if (strpbrk(s, " \t\r\n\"<>\\^`{|}") != NULL)
		return NULL;
	if ((u = strdup(s)) == NULL)
		return NULL;
	n = strlen(u);
	while (n > 8 && u[n - 1] == '/')
		u[--n] = '\0';
	return u;
}

/* The host of url into buf ("" on failure): no scheme, port or path. */
static void
url_host(const char *url, char *buf, size_t bufsz)
{
	const char	*h = strstr(url, "://"), *e;
	size_t		 n;

	buf[0] = '\0';
	if (h == NULL)
		return;
	h += 3;
	if ((e = strchr(h, '@')) != NULL && e < h + strcspn(h, "/"))
		h = e + 1;
	if (*h == '[') {
		e = strchr(h, ']');
		if (e == NULL)
			return;
		e++;
	} else
		e = h + strcspn(h, ":/?#");
	n = (size_t)(e - h);
	if (n >= bufsz)
		return;
	memcpy(buf, h, n);
	buf[n] = '\0';
}

/* 1 when host is "localhost", an IPv4 literal or a bracketed IPv6 one. */
static int
host_is_local(const char *host)
{
	const char *p;

	if (strcasecmp(host, "localhost") == 0 || host[0] == '[')
		return 1;
	for (p = host; *p != '\0'; p++)
		if (!isdigit((unsigned char)*p) && *p != '.')
			return 0;
	return host[0] != '\0';
}

/* ====== HTTP ====== */

enum e2b_plane {
	PLANE_API,	/* X-API-Key */
	PLANE_ENVD	/* X-Access-Token, E2b-Sandbox-Id/Port */
};

/* Appends one formatted header; sets *oom on failure. */
static void
hdr_add(struct curl_slist **l, int *oom, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
hdr_add(struct curl_slist **l, int *oom, const char *fmt, ...)
{
	char			 line[1024];
	struct curl_slist	*nl;
	va_list			 ap;

	if (*oom)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if ((nl = curl_slist_append(*l, line)) == NULL)
		*oom = 1;
	else
		*l = nl;
}

/* The headers every request to plane carries, plus ctype when not NULL. */
static struct curl_slist *
e2b_headers(const struct e2b *x, enum e2b_plane plane, const char *ctype)
{
	struct curl_slist	*l = NULL;
	int			 oom = 0;

	if (plane == PLANE_API)
		hdr_add(&l, &oom, "X-API-Key: %s", x->api_key);
	else {
		hdr_add(&l, &oom, "E2b-Sandbox-Id: %s", x->sid);
		hdr_add(&l, &oom, "E2b-Sandbox-Port: " E2B_ENVD_PORT);
		if (x->token != NULL)
			hdr_add(&l, &oom, "X-Access-Token: %s", x->token);
		if (x->basic_user)	/* base64("user:") */
			hdr_add(&l, &oom, "Authorization: Basic dXNlcjo=");
	}
	if (ctype != NULL)
		hdr_add(&l, &oom, "Content-Type: %s", ctype);
	hdr_add(&l, &oom, "Expect:");	/* no 100-continue round trip */
	if (oom) {
		curl_slist_free_all(l);
		l = NULL;
	}
	return l;
}

/*
 * E2B's message from an error response: {"code": int|string, "message"},
 * the proxy's {"sandboxId", "message", "code"}, or the body's first line.
 * Writes "HTTP <status>: [<code>: ]<message>" into buf.
 */
static void
e2b_http_msg(long status, const char *body, size_t len, char *buf,
    size_t bufsz)
{
	json_t		*j = NULL;
	const json_t	*c, *m;
	char		 text[200];
	size_t		 i, n = 0;

	text[0] = '\0';
	if (body != NULL && len > 0)
		j = json_loadb(body, len, 0, NULL);
	m = json_object_get(j, "message");
	c = json_object_get(j, "code");
	if (json_is_string(m))
		snprintf(text, sizeof(text), "%s%s%s", json_is_string(c) ?
		    json_string_value(c) : "", json_is_string(c) ? ": " : "",
		    json_string_value(m));
	else if (json_is_string(c))
		snprintf(text, sizeof(text), "%s", json_string_value(c));
	else if (body != NULL && len > 0) {
		n = len < sizeof(text) - 1 ? len : sizeof(text) - 1;
		memcpy(text, body, n);
		text[n] = '\0';
		text[strcspn(text, "\r\n")] = '\0';
	}
	for (i = 0; text[i] != '\0'; i++)
		if ((unsigned char)text[i] < 0x20)
			text[i] = ' ';
	if (text[0] != '\0')
		snprintf(buf, bufsz, "HTTP %ld: %s", status, text);
	else
		snprintf(buf, bufsz, "HTTP %ld", status);
	json_decref(j);
}

/*
 * One exchange with E2B. what names the operation for errors ("create
 * sandbox (POST /sandboxes)"). Returns 0 with resp filled (any status), or
 * SANDBOX_EFAIL / ENGINE_ELIMIT / ENGINE_ENOMEM with err saying what.
 * Free resp with outbound_resp_release.
 */
static int
e2b_fetch(struct e2b *x, const char *what, struct outbound_req *rq,
    char *err, struct outbound_resp *resp)
{
	char	oerr[ENGINE_ERRMAX];
	int	rc;

	rq->trusted = 1;
	if (rq->timeout == 0)
		rq->timeout = E2B_CALL_TIMEOUT;
	oerr[0] = '\0';
	rc = outbound_fetch(&x->eng, rq, oerr, resp);
	if (rc == ENGINE_ENOMEM)
		rc = sandbox_fail(err, rc, "e2b %s: out of memory", what);
	else if (rc == ENGINE_ELIMIT)
		rc = sandbox_fail(err, rc, "e2b %s: %s", what, oerr);
	else if (rc != 0)
		rc = sandbox_fail(err, SANDBOX_EFAIL, "e2b %s: %s", what, oerr);
	return rc;
}

/* ====== Control plane ====== */

/* Kills the sandbox: 0 when E2B said 204/200 or 404 (already gone). */
static int
e2b_kill(struct e2b *x, char *err)
{
	struct outbound_req	 rq;
	struct outbound_resp	 rs;
	struct curl_slist	*h = NULL;
	char			 url[2048], msg[200];
	int			 rc;

	memset(&rs, 0, sizeof(rs));
	memset(&rq, 0, sizeof(rq));
	snprintf(url, sizeof(url), "%s/sandboxes/", x->api_url);
	if (sandbox_url_escape(url, sizeof(url), x->sid) != 0) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "e2b kill: sandbox id too long");
		goto out;
	}
	if ((h = e2b_headers(x, PLANE_API, NULL)) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	rq.method = "DELETE";
	rq.url = url;
	rq.headers = h;
	if ((rc = e2b_fetch(x, "kill sandbox (DELETE /sandboxes/{id})", &rq,
	    err, &rs)) != 0)
		goto out;
	if (rs.status != 204 && rs.status != 200 && rs.status != 404) {
		e2b_http_msg(rs.status, rs.body, rs.len, msg, sizeof(msg));
		rc = sandbox_fail(err, SANDBOX_EFAIL, "e2b kill sandbox %s (DELETE "
		    "/sandboxes/{id}): %s", x->sid, msg);
	}
out:
	outbound_resp_release(&rs);
	curl_slist_free_all(h);
	return rc;
}

/*
 * Makes sure the sandbox lives at least need_s more seconds: when less
 * than half its lifetime is left, or less than need_s plus a margin, POST
 * /sandboxes/{id}/timeout sets the TTL again. Returns 0, or SANDBOX_EFAIL
 * (the sandbox is gone, E2B refused).
 */
static int
e2b_touch(struct e2b *x, int need_s, char *err)
{
	struct outbound_req	 rq;
	struct outbound_resp	 rs;
	struct curl_slist	*h = NULL;
	char			 url[2048], body[64], msg[200];
	int64_t			 now = sandbox_now_us(), left = x->expires_us - now;
	int64_t			 want = x->lifetime;
	int			 rc = 0;

	memset(&rs, 0, sizeof(rs));
	if ((int64_t)need_s + E2B_REFRESH_MARGIN > want)
		want = (int64_t)need_s + E2B_REFRESH_MARGIN;
	if (want > 86400)
		want = 86400;
	if (left >= (int64_t)x->lifetime * 500000 &&
	    left >= ((int64_t)need_s + 5) * 1000000)
		goto out;
	memset(&rq, 0, sizeof(rq));
	snprintf(url, sizeof(url), "%s/sandboxes/", x->api_url);
	if (sandbox_url_escape(url, sizeof(url), x->sid) != 0 ||
	    strlen(url) + 9 >= sizeof(url)) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "e2b: sandbox id too long");
		goto out;
	}
	snprintf(url + strlen(url), sizeof(url) - strlen(url), "/timeout");
	snprintf(body, sizeof(body), "{\"timeout\":%" PRId64 "}", want);
	if ((h = e2b_headers(x, PLANE_API, "application/json")) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	rq.method = "POST";
	rq.url = url;
	rq.headers = h;
	rq.body = body;
	rq.body_len = strlen(body);
	if ((rc = e2b_fetch(x, "set sandbox timeout (POST "
	    "/sandboxes/{id}/timeout)", &rq, err, &rs)) != 0)
		goto out;
	if (rs.status == 404) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "e2b sandbox %s is gone (it "
		    "expired after its timeout or was killed)", x->sid);
		goto out;
	}
	if (rs.status != 204 && rs.status != 200) {
		e2b_http_msg(rs.status, rs.body, rs.len, msg, sizeof(msg));
		rc = sandbox_fail(err, SANDBOX_EFAIL, "e2b set sandbox timeout (POST "
		    "/sandboxes/{id}/timeout): %s", msg);
		goto out;
	}
	x->expires_us = now + want * 1000000;
out:
	outbound_resp_release(&rs);
	curl_slist_free_all(h);
	return rc;
}

/* Compares a "major.minor.patch" version with the given one: <0, 0, >0. */
static int
version_cmp(const char *v, int major, int minor, int patch)
{
	long	 p[3] = {0, 0, 0};
	int	 want[3], i;
	char	*end;

	want[0] = major;
	want[1] = minor;
	want[2] = patch;
	for (i = 0; i < 3 && v != NULL && *v != '\0'; i++) {
		p[i] = strtol(v, &end, 10);
		v = *end == '.' ? end + 1 : "";
	}
	for (i = 0; i < 3; i++)
		if (p[i] != want[i])
			return p[i] < want[i] ? -1 : 1;
	return 0;
}

/* Works out envd's base URL (see the top) into x->envd_url. */
static int
e2b_envd_base(struct e2b *x, const char *domain, char *err)
{
	static const char *const shared[] = {
		"e2b.app", "e2b.dev", "e2b.pro", "e2b-staging.dev",
	};
	char	host[256], url[1024];
	size_t	i;
	int	rc = 0, is_shared = 0;

	url_host(x->api_url, host, sizeof(host));
	if (x->envd_override != NULL)
		snprintf(url, sizeof(url), "%s", x->envd_override);
	else if (host_is_local(host))
		snprintf(url, sizeof(url), "%s", x->api_url);
	else {
		if (domain == NULL || domain[0] == '\0')
			domain = strncmp(host, "api.", 4) == 0 ? host + 4 : host;
		if (domain[0] == '\0' || strpbrk(domain, "/:@ ") != NULL) {
			rc = sandbox_fail(err, ENGINE_EINVAL, "e2b: cannot tell envd's "
			    "address from the API URL; set e2b_envd_url");
			goto out;
		}
		for (i = 0; i < sizeof(shared) / sizeof(*shared); i++)
			if (strcmp(domain, shared[i]) == 0)
				is_shared = 1;
		if (is_shared)
			snprintf(url, sizeof(url), "https://sandbox.%s", domain);
		else
			snprintf(url, sizeof(url), "https://" E2B_ENVD_PORT
			    "-%s.%s", x->sid, domain);
	}
	if ((x->envd_url = url_dup(url)) == NULL)
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
out:
	return rc;
}

static void	e2b_release(struct e2b *x);

static int
e2b_create(const struct sandbox_config *cfg, char *err, struct sandbox **out)
{
	struct e2b		*x = NULL;
	struct outbound_req	 rq;
	struct outbound_resp	 rs;
	struct curl_slist	*h = NULL;
	const json_t		*o = cfg->options;
	const char		*s, *sid, *tok, *dom, *ver;
	json_t			*req = NULL, *res = NULL;
	char			*body = NULL, url[1100], msg[200], kerr[ENGINE_ERRMAX];
	int			 rc = 0, made = 0;

	*out = NULL;
	memset(&rs, 0, sizeof(rs));
	if (!json_is_object(o)) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "e2b: the provider needs its "
		    "options (api_key)");
		goto out;
	}
	if ((x = calloc(1, sizeof(*x))) == NULL ||
	    (x->conf = malloc(sizeof(*x->conf))) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	conf_defaults(x->conf);
	x->eng.conf = x->conf;
	x->cfg = *cfg;
	x->cfg.options = NULL;
	x->base.network = cfg->network;
	engine_uuid(x->base.id);
	if (sandbox_opt_str(o, "api_key", NULL, &s) != 0 || s == NULL) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "e2b: api_key is missing");
		goto out;
	}
	if ((x->api_key = strdup(s)) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	if (strpbrk(x->api_key, "\r\n") != NULL) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "e2b: api_key has a line break");
		goto out;
	}
	if (sandbox_opt_str(o, "e2b_api_url", E2B_DEFAULT_API, &s) != 0 ||
	    (x->api_url = url_dup(s)) == NULL) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "e2b: e2b_api_url must be an "
		    "http(s) URL");
		goto out;
	}
	if (sandbox_opt_str(o, "e2b_envd_url", NULL, &s) != 0 ||
	    (s != NULL && (x->envd_override = url_dup(s)) == NULL)) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "e2b: e2b_envd_url must be an "
		    "http(s) URL");
		goto out;
	}
	if (sandbox_opt_str(o, "e2b_default_template", E2B_DEFAULT_TEMPLATE,
	    &s) != 0 || (x->template_id = strdup(s)) == NULL) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "e2b: e2b_default_template must "
		    "be a string");
		goto out;
	}
	if (sandbox_opt_str(o, "e2b_workdir", "/home/user", &s) != 0 ||
	    s[0] != '/' || (x->workdir = strdup(s)) == NULL) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "e2b: e2b_workdir must be an "
		    "absolute path");
		goto out;
	}
	while (strlen(x->workdir) > 1 && x->workdir[strlen(x->workdir) - 1]
	    == '/')
		x->workdir[strlen(x->workdir) - 1] = '\0';
	if (sandbox_opt_int(o, "e2b_sandbox_timeout", 300, 1, 86400,
	    &x->lifetime) ||
	    sandbox_opt_int(o, "e2b_keepalive", 30, 1, 3600, &x->keepalive) ||
	    sandbox_opt_int(o, "e2b_deadline_grace", 3, 1, 600, &x->grace) ||
	    sandbox_opt_int(o, "e2b_list_file_depth", 64, 1, 1024,
	    &x->list_depth)) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "e2b: e2b_sandbox_timeout (1-86400"
		    " s), e2b_keepalive (1-3600 s), e2b_deadline_grace (1-600 "
		    "s) and e2b_list_file_depth (1-1024) are whole numbers");
		goto out;
	}

	/* POST /sandboxes */
	req = json_pack("{s:s, s:i, s:b, s:{s:s}}", "templateID",
	    x->template_id, "timeout", x->lifetime, "secure", 1, "metadata",
	    "flowcgi_sandbox", x->base.id);
	if (req != NULL && !cfg->network && json_object_set_new(req,
	    "allow_internet_access", json_false()) != 0) {
		json_decref(req);
		req = NULL;
	}
	if (req == NULL || (body = json_dumps(req, JSON_COMPACT)) == NULL ||
	    (h = e2b_headers(x, PLANE_API, "application/json")) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	snprintf(url, sizeof(url), "%s/sandboxes", x->api_url);
	memset(&rq, 0, sizeof(rq));
	rq.method = "POST";
	rq.url = url;
	rq.headers = h;
	rq.body = body;
	rq.body_len = strlen(body);
	rq.timeout = 120;	/* a cold template can take a while */
	x->expires_us = sandbox_now_us() + (int64_t)x->lifetime * 1000000;
	if ((rc = e2b_fetch(x, "create sandbox (POST /sandboxes)", &rq, err,
	    &rs)) != 0)
		goto out;
	if (rs.status != 201 && rs.status != 200) {
		e2b_http_msg(rs.status, rs.body, rs.len, msg, sizeof(msg));
		rc = sandbox_fail(err, SANDBOX_EFAIL, "e2b create sandbox (POST "
		    "/sandboxes, template %.60s): %s", x->template_id, msg);
		goto out;
	}
	res = json_loadb(rs.body, rs.len, 0, NULL);
	sid = json_string_value(json_object_get(res, "sandboxID"));
	if (sid == NULL || sid[0] == '\0' || strlen(sid) > 200) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "e2b create sandbox (POST "
		    "/sandboxes): the answer has no sandboxID");
		goto out;
	}
	if ((x->sid = strdup(sid)) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	made = 1;
	tok = json_string_value(json_object_get(res, "envdAccessToken"));
	dom = json_string_value(json_object_get(res, "domain"));
	ver = json_string_value(json_object_get(res, "envdVersion"));
	if (tok != NULL && tok[0] != '\0' && (strpbrk(tok, "\r\n") != NULL ||
	    (x->token = strdup(tok)) == NULL)) {
		rc = sandbox_fail(err, tok && strpbrk(tok, "\r\n") ? SANDBOX_EFAIL :
		    ENGINE_ENOMEM, "e2b create sandbox: bad envdAccessToken");
		goto out;
	}
	if (strspn(x->sid, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789-_") != strlen(x->sid)) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "e2b create sandbox: odd "
		    "sandboxID '%.60s'", x->sid);
		goto out;
	}
	x->basic_user = ver != NULL && version_cmp(ver, 0, 4, 0) < 0;
	if ((rc = e2b_envd_base(x, dom, err)) != 0)
		goto out;
	*out = &x->base;
	x = NULL;
out:
	if (x != NULL && made && e2b_kill(x, kerr) != 0)
		log_warn("sandbox: after a failed create: %s", kerr);
	if (x != NULL) {
		scrub(x, err);
		e2b_release(x);
	}
	outbound_resp_release(&rs);
	curl_slist_free_all(h);
	json_decref(req);
	json_decref(res);
	free(body);
	return rc;
}

static int
e2b_destroy(struct sandbox *sb, char *err)
{
	struct e2b	*x = (struct e2b *)sb;
	int		 rc = 0;

	if (x->destroyed)
		goto out;
	if ((rc = e2b_kill(x, err)) != 0)
		goto out;
	x->destroyed = 1;
out:
	if (rc != 0)
		scrub(x, err);
	return rc;
}

static void
e2b_release(struct e2b *x)
{
	free(x->conf);
	free(x->api_url);
	free(x->api_key);
	free(x->template_id);
	free(x->envd_override);
	free(x->envd_url);
	free(x->workdir);
	free(x->sid);
	free(x->token);
	free(x);
}

static void
e2b_free(struct sandbox *sb)
{
	struct e2b	*x = (struct e2b *)sb;
	char		 err[ENGINE_ERRMAX];

	if (x == NULL)
		return;
	if (e2b_destroy(sb, err) != 0)
		log_warn("sandbox: %s (E2B ends it at its timeout)", err);
	e2b_release(x);
}

/* ====== envd: unary Connect calls ====== */

/*
 * POSTs the JSON message req to {envd}/<method> ("process.Process/
 * SendSignal") as a unary Connect call. Returns 0 with *out (new
 * reference) the answer, or an error with err naming method and E2B's
 * message; code (may be NULL, 40 bytes) gets the Connect code of an error
 * answer ("not_found", or the HTTP status of a plain one as digits).
 */
static int
envd_unary(struct e2b *x, const char *method, const json_t *req,
    int64_t max, char *err, char *code, json_t **out)
{
	struct outbound_req	 rq;
	struct outbound_resp	 rs;
	struct curl_slist	*h = NULL;
	json_t			*e = NULL;
	const json_t		*c;
	char			*body = NULL, url[1200], msg[200], what[120];
	int			 rc = 0, oom = 0;

	*out = NULL;
	if (code != NULL)
		code[0] = '\0';
	memset(&rs, 0, sizeof(rs));
	snprintf(what, sizeof(what), "%s", method);
	snprintf(url, sizeof(url), "%s/%s", x->envd_url, method);
	if ((body = json_dumps(req, JSON_COMPACT)) == NULL ||
	    (h = e2b_headers(x, PLANE_ENVD, "application/json")) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	hdr_add(&h, &oom, "Connect-Protocol-Version: 1");
	if (oom) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	memset(&rq, 0, sizeof(rq));
	rq.method = "POST";
	rq.url = url;
	rq.headers = h;
	rq.body = body;
	rq.body_len = strlen(body);
	rq.max_bytes = max;
	if ((rc = e2b_fetch(x, what, &rq, err, &rs)) != 0)
		goto out;
	if (rs.status != 200) {
		if (code != NULL) {
			e = json_loadb(rs.body, rs.len, 0, NULL);
			c = json_object_get(e, "code");
			if (json_is_string(c))
				snprintf(code, 40, "%s", json_string_value(c));
			else
				snprintf(code, 40, "%ld", rs.status);
		}
		if (rs.status == 502)
			rc = sandbox_fail(err, SANDBOX_EFAIL, "e2b %s: sandbox %s not "
			    "found (expired or killed)", what, x->sid);
		else {
			e2b_http_msg(rs.status, rs.body, rs.len, msg,
			    sizeof(msg));
			rc = sandbox_fail(err, SANDBOX_EFAIL, "e2b %s: %s", what, msg);
		}
		goto out;
	}
	if ((*out = json_loadb(rs.body, rs.len, 0, NULL)) == NULL) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "e2b %s: the answer is not JSON",
		    what);
		goto out;
	}
out:
	outbound_resp_release(&rs);
	curl_slist_free_all(h);
	json_decref(e);
	free(body);
	return rc;
}

/* Kills process pid in the sandbox (SIGKILL); best effort, logged. */
static void
envd_kill_pid(struct e2b *x, uint32_t pid)
{
	json_t	*req, *res = NULL;
	char	 err[ENGINE_ERRMAX], code[40];

	req = json_pack("{s:{s:I}, s:s}", "process", "pid", (json_int_t)pid,
	    "signal", "SIGNAL_SIGKILL");
	if (req == NULL)
		return;
	if (envd_unary(x, "process.Process/SendSignal", req, 0, err, code,
	    &res) != 0 && strcmp(code, "not_found") != 0) {
		scrub(x, err);
		log_warn("sandbox: %s", err);
	}
	json_decref(res);
	json_decref(req);
}

/* Removes path in the sandbox (relative: to the user's home); best
 * effort, logged. */
static void
envd_remove(struct e2b *x, const char *path)
{
	json_t	*req, *res = NULL;
	char	 err[ENGINE_ERRMAX], code[40];

	if ((req = json_pack("{s:s}", "path", path)) == NULL)
		return;
	if (envd_unary(x, "filesystem.Filesystem/Remove", req, 0, err, code,
	    &res) != 0 && strcmp(code, "not_found") != 0) {
		scrub(x, err);
		log_warn("sandbox: %s", err);
	}
	json_decref(res);
	json_decref(req);
}

/* ====== Paths ====== */

/* ====== Files ====== */

/* Writes data to the absolute sandbox path abs through POST /files. */
static int
e2b_put_file(struct e2b *x, const char *abs, const void *data, size_t len,
    char *err)
{
	struct outbound_req	 rq;
	struct outbound_resp	 rs;
	struct curl_slist	*h = NULL;
	char			 url[8400], boundary[64], ctype[128], msg[200];
	char			 fname[4200], uuid[37], *body = NULL, *w;
	size_t			 i, head_len, total;
	int			 rc = 0, n;

	memset(&rs, 0, sizeof(rs));
	if (strlen(abs) >= sizeof(fname)) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "upload: path too long");
		goto out;
	}
	/* The form's filename only names the part (the path query decides
	 * where it goes): keep it free of quoting trouble. */
	for (i = 0; abs[i] != '\0'; i++)
		fname[i] = abs[i] == '"' || abs[i] == '\\' ? '_' : abs[i];
	fname[i] = '\0';
	engine_uuid(uuid);	/* random enough for a boundary */
	snprintf(boundary, sizeof(boundary), "flowcgi-%s", uuid);
	snprintf(ctype, sizeof(ctype), "multipart/form-data; boundary=%s",
	    boundary);
	snprintf(url, sizeof(url), "%s/files?path=", x->envd_url);
	if (sandbox_url_escape(url, sizeof(url), abs) != 0) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "upload: path too long");
		goto out;
	}
	head_len = strlen(boundary) + strlen(fname) + 200;
	total = head_len + len + strlen(boundary) + 16;
	if (len > SIZE_MAX - head_len - 64 || (body = malloc(total)) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	n = snprintf(body, head_len, "--%s\r\nContent-Disposition: form-data; "
	    "name=\"file\"; filename=\"%s\"\r\nContent-Type: "
	    "application/octet-stream\r\n\r\n", boundary, fname);
	w = body + n;
	if (len > 0)
		memcpy(w, data, len);
	w += len;
	n = snprintf(w, strlen(boundary) + 16, "\r\n--%s--\r\n", boundary);
	w += n;
	if ((h = e2b_headers(x, PLANE_ENVD, ctype)) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	memset(&rq, 0, sizeof(rq));
	rq.method = "POST";
	rq.url = url;
	rq.headers = h;
	rq.body = body;
	rq.body_len = (size_t)(w - body);
	rq.timeout = 300;
	if ((rc = e2b_fetch(x, "upload (POST /files)", &rq, err, &rs)) != 0)
		goto out;
	if (rs.status == 200)
		goto out;
	if (rs.status == 502)
		rc = sandbox_fail(err, SANDBOX_EFAIL, "e2b upload (POST /files): "
		    "sandbox %s not found (expired or killed)", x->sid);
	else {
		e2b_http_msg(rs.status, rs.body, rs.len, msg, sizeof(msg));
		rc = sandbox_fail(err, rs.status == 507 ? ENGINE_ELIMIT : rs.status ==
		    400 ? ENGINE_EINVAL : SANDBOX_EFAIL, "e2b upload (POST "
		    "/files): %s", msg);
	}
out:
	outbound_resp_release(&rs);
	curl_slist_free_all(h);
	free(body);
	return rc;
}

static int
e2b_upload(struct sandbox *sb, const char *path, const void *data,
    size_t len, char *err)
{
	struct e2b	*x = (struct e2b *)sb;
	char		 abs[4200];
	int		 rc;

	if (x->destroyed) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "sandbox %s: destroyed", sb->id);
		goto out;
	}
	if ((rc = sandbox_ws_path(x->workdir, path, 0, err, abs,
	    sizeof(abs))) != 0)
		goto out;
	if ((int64_t)len > x->cfg.file_size) {
		rc = sandbox_fail(err, ENGINE_ELIMIT, "upload '%.120s': %zu bytes is "
		    "above sandbox.file_size", path, len);
		goto out;
	}
	if ((rc = e2b_touch(x, 0, err)) != 0)
		goto out;
	rc = e2b_put_file(x, abs, data, len, err);
out:
	if (rc != 0)
		scrub(x, err);
	return rc;
}

static int
e2b_download(struct sandbox *sb, const char *path, int64_t max, char *err,
    char **data, size_t *len)
{
	struct e2b		*x = (struct e2b *)sb;
	struct outbound_req	 rq;
	struct outbound_resp	 rs;
	struct curl_slist	*h = NULL;
	char			 abs[4200], url[8400], msg[200];
	int			 rc;

	memset(&rs, 0, sizeof(rs));
	if (x->destroyed) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "sandbox %s: destroyed", sb->id);
		goto out;
	}
	if ((rc = sandbox_ws_path(x->workdir, path, 0, err, abs,
	    sizeof(abs))) != 0)
		goto out;
	if ((rc = e2b_touch(x, 0, err)) != 0)
		goto out;
	snprintf(url, sizeof(url), "%s/files?path=", x->envd_url);
	if (sandbox_url_escape(url, sizeof(url), abs) != 0) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "download: path too long");
		goto out;
	}
	if ((h = e2b_headers(x, PLANE_ENVD, NULL)) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	memset(&rq, 0, sizeof(rq));
	rq.url = url;
	rq.headers = h;
	rq.timeout = 300;
	/* Room for an error body past a small max; a 200 longer than max
	 * is refused below. */
	rq.max_bytes = (max > 0 ? max : 0) + 65536;
	rc = e2b_fetch(x, "download (GET /files)", &rq, err, &rs);
	if (rc == ENGINE_ELIMIT || (rc == 0 && (int64_t)rs.len > max &&
	    rs.status == 200)) {
		rc = sandbox_fail(err, ENGINE_ELIMIT, "download '%.120s': above the "
		    "limit of %" PRId64 " bytes", path, max);
		goto out;
	}
	if (rc != 0)
		goto out;
	if (rs.status != 200) {
		e2b_http_msg(rs.status, rs.body, rs.len, msg, sizeof(msg));
		if (rs.status == 404)
			rc = sandbox_fail(err, ENGINE_ENOTFOUND, "download '%.120s': "
			    "not found (%s)", path, msg);
		else if (rs.status == 400)
			rc = sandbox_fail(err, ENGINE_EINVAL, "download '%.120s': %s",
			    path, msg);
		else if (rs.status == 502)
			rc = sandbox_fail(err, SANDBOX_EFAIL, "e2b download (GET "
			    "/files): sandbox %s not found (expired or "
			    "killed)", x->sid);
		else
			rc = sandbox_fail(err, SANDBOX_EFAIL, "e2b download (GET "
			    "/files): %s", msg);
		goto out;
	}
	*data = rs.body;
	*len = rs.len;
	rs.body = NULL;
out:
	if (rc != 0)
		scrub(x, err);
	outbound_resp_release(&rs);
	curl_slist_free_all(h);
	return rc;
}

/* Seconds since the epoch of an RFC 3339 time, or 0. */
static int64_t
rfc3339_time(const char *s)
{
	struct tm	 tm;
	int		 y, mo, d, h, mi, sec, n = 0, oh = 0, om = 0;
	int64_t		 t;
	const char	*p;

	if (s == NULL || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d,
	    &h, &mi, &sec, &n) != 6)
		return 0;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = (int64_t)timegm(&tm);
	p = s + n;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			;
	if ((*p == '+' || *p == '-') && sscanf(p + 1, "%2d:%2d", &oh, &om)
	    == 2)
		t -= (*p == '+' ? 1 : -1) * ((int64_t)oh * 3600 + om * 60);
	return t;
}

static int
e2b_list(struct sandbox *sb, const char *dir, size_t max, char *err,
    struct sandbox_file **files, size_t *n)
{
	struct e2b		*x = (struct e2b *)sb;
	struct sandbox_file	*v = NULL;
	json_t			*req = NULL, *res = NULL, *e;
	const json_t		*ents, *t, *sz;
	const char		*p, *ts;
	char			 abs[4200], code[40];
	size_t			 i, k = 0, wl;
	int			 rc, is_dir;

	if (x->destroyed) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "sandbox %s: destroyed", sb->id);
		goto out;
	}
	if (dir == NULL)
		dir = "";
	if ((rc = sandbox_ws_path(x->workdir, dir, 1, err, abs,
	    sizeof(abs))) != 0 ||
	    (rc = e2b_touch(x, 0, err)) != 0)
		goto out;
	if ((req = json_pack("{s:s, s:i}", "path", abs, "depth",
	    x->list_depth)) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = envd_unary(x, "filesystem.Filesystem/ListDir", req,
	    E2B_LIST_MAX_BYTES, err, code, &res)) != 0) {
		if (strcmp(code, "not_found") == 0 || strcmp(code, "404") == 0)
			rc = sandbox_fail(err, ENGINE_ENOTFOUND, "list '%.120s': not "
			    "found", dir);
		else if (strcmp(code, "invalid_argument") == 0)
			rc = sandbox_fail(err, ENGINE_EINVAL, "list '%.120s': not a "
			    "folder", dir);
		goto out;
	}
	ents = json_object_get(res, "entries");
	if ((v = calloc(max ? max : 1, sizeof(*v))) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	wl = strlen(x->workdir);
	json_array_foreach(ents, i, e) {
		p = json_string_value(json_object_get(e, "path"));
		t = json_object_get(e, "type");
		if (p == NULL || strncmp(p, x->workdir, wl) != 0 ||
		    (wl > 1 && p[wl] != '/') || p[wl] == '\0')
			continue;
		p += wl + (wl > 1 ? 1 : (p[wl] == '/' ? 1 : 0));
		if (json_is_string(t))
			is_dir = strcmp(json_string_value(t),
			    "FILE_TYPE_DIRECTORY") == 0 ? 1 :
			    strcmp(json_string_value(t), "FILE_TYPE_FILE") == 0
			    ? 0 : -1;
		else
			is_dir = json_integer_value(t) == 2 ? 1 :
			    json_integer_value(t) == 1 ? 0 : -1;
		if (is_dir < 0 || p[0] == '\0')
			continue;	/* symlinks and the unknown: skipped */
		if (k >= max) {
			rc = sandbox_fail(err, ENGINE_ELIMIT, "list: more than %zu "
			    "entries", max);
			goto out;
		}
		if ((v[k].path = strdup(p)) == NULL) {
			rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
			goto out;
		}
		v[k].is_dir = is_dir;
		sz = json_object_get(e, "size");
		if (!is_dir)
			v[k].size = json_is_string(sz) ? strtoll(
			    json_string_value(sz), NULL, 10) :
			    (int64_t)json_integer_value(sz);
		ts = json_string_value(json_object_get(e, "modifiedTime"));
		if (ts == NULL)
			ts = json_string_value(json_object_get(e,
			    "modified_time"));
		v[k].mtime = rfc3339_time(ts);
		k++;
	}
	*files = v;
	*n = k;
	v = NULL;
out:
	if (rc != 0)
		scrub(x, err);
	sandbox_files_free(v, k);
	json_decref(req);
	json_decref(res);
	return rc;
}

/* ====== Exec: process.Process/Start ====== */

/* The state of one Start stream, fed by outbound's callbacks. */
struct e2b_stream {
	long			 status;	/* of the last response head */
	int			 framed;	/* connect+json Content-Type */
	unsigned char		 hdr[5];
	size_t			 hdr_len;
	unsigned char		*msg;		/* the frame being read */
	size_t			 msg_len, msg_need, msg_cap;
	char			 errbody[E2B_ERRBODY_MAX];
	size_t			 errbody_len;
	struct dbuf	 out, err;
	uint32_t		 pid;
	int			 started;
	int			 ended;		/* an end event came */
	int			 end_stream;	/* the 0x02 frame came */
	int			 exited;
	int			 exit_code;
	char			 status_text[64];
	char			 es_code[40];	/* end-stream error code */
	char			 es_msg[160];
	char			 bad[160];	/* a protocol violation */
	int64_t			 deadline_us;	/* give up on envd here */
	int			 deadline_hit;
	int			 keepalives;
};

static void
stream_header(const char *line, size_t n, void *arg)
{
	struct e2b_stream	*st = arg;
	static const char	 ct[] = "content-type:";
	const char		*v;

	if (n > 5 && memcmp(line, "HTTP/", 5) == 0) {
		v = memchr(line, ' ', n);
		st->status = v != NULL ? strtol(v + 1, NULL, 10) : 0;
		st->framed = 0;
	} else if (n > sizeof(ct) - 1 && strncasecmp(line, ct,
	    sizeof(ct) - 1) == 0) {
		for (v = line + sizeof(ct) - 1; v < line + n && *v == ' '; v++)
			;
		st->framed = (size_t)(line + n - v) >= 24 &&
		    strncasecmp(v, "application/connect+json", 24) == 0;
	}
}

/* Appends base64 value s of a data event to b. */
static int
stream_data(struct e2b_stream *st, struct dbuf *b, const json_t *s)
{
	unsigned char	*d = NULL;
	size_t		 n = 0;

	if (!json_is_string(s) || b64_decode(json_string_value(s),
	    json_string_length(s), &d, &n) != 0) {
		snprintf(st->bad, sizeof(st->bad), "a data event is not "
		    "base64");
		return -1;
	}
	dbuf_add(b, d, n);
	free(d);
	return 0;
}

/* Handles one complete frame. Returns 0, or -1 on a protocol error. */
static int
stream_frame(struct e2b_stream *st, unsigned flags, const unsigned char *p,
    size_t n)
{
	json_t		*j = NULL;
	const json_t	*ev, *e, *v;
	const char	*s;
	int		 rc = 0;

	if (st->end_stream) {
		snprintf(st->bad, sizeof(st->bad), "a frame after the "
		    "end-stream frame");
		rc = -1;
		goto out;
	}
	if (flags & 0x01) {
		snprintf(st->bad, sizeof(st->bad), "a compressed frame (none "
		    "was asked for)");
		rc = -1;
		goto out;
	}
	if ((j = json_loadb((const char *)p, n, 0, NULL)) == NULL ||
	    !json_is_object(j)) {
		snprintf(st->bad, sizeof(st->bad), "a frame that is not a "
		    "JSON object");
		rc = -1;
		goto out;
	}
	if (flags & 0x02) {
		st->end_stream = 1;
		e = json_object_get(j, "error");
		if (json_is_object(e)) {
			s = json_string_value(json_object_get(e, "code"));
			snprintf(st->es_code, sizeof(st->es_code), "%s",
			    s ? s : "unknown");
			s = json_string_value(json_object_get(e, "message"));
			snprintf(st->es_msg, sizeof(st->es_msg), "%s",
			    s ? s : "");
		}
		goto out;
	}
	ev = json_object_get(j, "event");
	if (!json_is_object(ev))
		goto out;	/* unknown fields are ignored */
	if ((e = json_object_get(ev, "start")) != NULL) {
		v = json_object_get(e, "pid");
		st->pid = (uint32_t)(json_is_integer(v) ? json_integer_value(v)
		    : json_is_string(v) ? strtol(json_string_value(v), NULL,
		    10) : 0);
		st->started = 1;
	} else if ((e = json_object_get(ev, "data")) != NULL) {
		if ((v = json_object_get(e, "stdout")) != NULL)
			rc = stream_data(st, &st->out, v);
		else if ((v = json_object_get(e, "stderr")) != NULL)
			rc = stream_data(st, &st->err, v);
		else if ((v = json_object_get(e, "pty")) != NULL)
			rc = stream_data(st, &st->out, v);
	} else if ((e = json_object_get(ev, "end")) != NULL) {
		st->ended = 1;
		v = json_object_get(e, "exitCode");
		if (v == NULL)
			v = json_object_get(e, "exit_code");
		st->exit_code = json_is_integer(v) ? (int)json_integer_value(v)
		    : json_is_string(v) ? (int)strtol(json_string_value(v),
		    NULL, 10) : 0;
		st->exited = json_is_true(json_object_get(e, "exited"));
		s = json_string_value(json_object_get(e, "status"));
		snprintf(st->status_text, sizeof(st->status_text), "%s",
		    s ? s : "");
	} else if (json_object_get(ev, "keepalive") != NULL)
		st->keepalives++;
out:
	json_decref(j);
	return rc;
}

/* outbound's on_data: frames on arbitrary chunk boundaries. */
static int
stream_bytes(const char *p, size_t n, void *arg)
{
	struct e2b_stream	*st = arg;
	size_t			 take;
	unsigned char		*nm;

	if (st->status != 200 || !st->framed) {
		take = sizeof(st->errbody) - 1 - st->errbody_len;
		if (take > n)
			take = n;
		memcpy(st->errbody + st->errbody_len, p, take);
		st->errbody_len += take;
		st->errbody[st->errbody_len] = '\0';
		return 0;
	}
	while (n > 0) {
		if (st->hdr_len < 5) {
			take = 5 - st->hdr_len < n ? 5 - st->hdr_len : n;
			memcpy(st->hdr + st->hdr_len, p, take);
			st->hdr_len += take;
			p += take;
			n -= take;
			if (st->hdr_len < 5)
				break;
			st->msg_need = (size_t)st->hdr[1] << 24 |
			    (size_t)st->hdr[2] << 16 | (size_t)st->hdr[3] << 8 |
			    st->hdr[4];
			st->msg_len = 0;
			if (st->msg_need > E2B_FRAME_MAX) {
				snprintf(st->bad, sizeof(st->bad), "a frame of "
				    "%zu bytes", st->msg_need);
				return 1;
			}
			if (st->msg_need + 1 > st->msg_cap) {
				if ((nm = realloc(st->msg, st->msg_need + 1))
				    == NULL) {
					snprintf(st->bad, sizeof(st->bad),
					    "out of memory");
					return 1;
				}
				st->msg = nm;
				st->msg_cap = st->msg_need + 1;
			}
		}
		take = st->msg_need - st->msg_len < n ? st->msg_need -
		    st->msg_len : n;
		if (take > 0) {
			memcpy(st->msg + st->msg_len, p, take);
			st->msg_len += take;
			p += take;
			n -= take;
		}
		if (st->msg_len == st->msg_need) {
			if (stream_frame(st, st->hdr[0], st->msg,
			    st->msg_len) != 0)
				return 1;
			st->hdr_len = 0;
		}
	}
	if (sandbox_now_us() >= st->deadline_us && !st->end_stream) {
		st->deadline_hit = 1;
		return 1;
	}
	return 0;
}

/* Signal numbers of Go's os.ProcessState.String() "signal: <name>". */
static int
signal_from_status(const char *status)
{
	static const struct {
		const char	*name;
		int		 sig;
	} names[] = {
		{"hangup", SIGHUP}, {"interrupt", SIGINT}, {"quit", SIGQUIT},
		{"illegal instruction", SIGILL},
		{"trace/breakpoint trap", SIGTRAP}, {"aborted", SIGABRT},
		{"bus error", SIGBUS}, {"floating point exception", SIGFPE},
		{"killed", SIGKILL}, {"user defined signal 1", SIGUSR1},
		{"segmentation fault", SIGSEGV},
		{"user defined signal 2", SIGUSR2}, {"broken pipe", SIGPIPE},
		{"alarm clock", SIGALRM}, {"terminated", SIGTERM},
		{"CPU time limit exceeded", SIGXCPU},
		{"file size limit exceeded", SIGXFSZ},
	};
	size_t	i, n;

	if (strncmp(status, "signal: ", 8) != 0)
		return 0;
	status += 8;
	for (i = 0; i < sizeof(names) / sizeof(*names); i++) {
		n = strlen(names[i].name);
		if (strncmp(status, names[i].name, n) == 0 &&
		    (status[n] == '\0' || status[n] == ' '))
			return names[i].sig;
	}
	return 0;
}

static int
e2b_exec(struct sandbox *sb, const struct sandbox_exec_req *req, char *err,
    struct sandbox_exec_result *res)
{
	struct e2b		*x = (struct e2b *)sb;
	struct e2b_stream	 st;
	struct dbuf	 cmd = { 0 };
	struct outbound_req	 rq;
	struct outbound_resp	 rs;
	struct curl_slist	*h = NULL;
	json_t			*body = NULL, *envs = NULL;
	char			*payload = NULL, *frame = NULL;
	char			 cwd[4200], url[1200], in_path[96], msg[200];
	char			 oerr[ENGINE_ERRMAX], uuid[37];
	const char		*eq;
	size_t			 k, plen;
	int64_t			 t0 = sandbox_now_us(), timeout_ms;
	int			 rc = 0, frc, oom = 0, sig, stdin_file = 0;

	memset(&st, 0, sizeof(st));
	memset(&rs, 0, sizeof(rs));
	if (x->destroyed) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "sandbox %s: destroyed", sb->id);
		goto out;
	}
	if ((rc = sandbox_ws_path(x->workdir, req->cwd ? req->cwd : "", 1,
	    err, cwd, sizeof(cwd))) != 0)
		goto out;
	timeout_ms = sandbox_exec_timeout_ms(req, &x->cfg);
	if ((envs = json_object()) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	for (k = 0; req->env != NULL && req->env[k] != NULL; k++) {
		char name[256];

		/* NAME=value: sandbox_exec checked. */
		eq = strchr(req->env[k], '=');
		if ((size_t)(eq - req->env[k]) >= sizeof(name)) {
			rc = sandbox_fail(err, ENGINE_EINVAL, "exec: environment entry "
			    "'%.60s' is not NAME=value", req->env[k]);
			goto out;
		}
		memcpy(name, req->env[k], (size_t)(eq - req->env[k]));
		name[eq - req->env[k]] = '\0';
		if (json_object_get(envs, name) == NULL &&
		    json_object_set_new(envs, name, json_string(eq + 1)) != 0) {
			rc = sandbox_fail(err, ENGINE_EINVAL, "exec: environment entry "
			    "'%.60s' is not UTF-8", req->env[k]);
			goto out;
		}
	}
	if ((rc = e2b_touch(x, (int)((timeout_ms + 999) / 1000), err)) != 0)
		goto out;

	/* The command line; standard input comes from a file (see the top). */
	if (req->stdin_len > 0) {
		engine_uuid(uuid);
		snprintf(in_path, sizeof(in_path), ".flowcgi-stdin-%s", uuid);
		if ((rc = e2b_put_file(x, in_path, req->stdin_data,
		    req->stdin_len, err)) != 0)
			goto out;
		stdin_file = 1;
		dbuf_addstr(&cmd, "exec 0<\"$HOME\"/");
		dbuf_add(&cmd, in_path, strlen(in_path));
		dbuf_addstr(&cmd, " || exit 125; rm -f \"$HOME\"/");
		dbuf_add(&cmd, in_path, strlen(in_path));
		dbuf_add(&cmd, "\n", 1);
	}
	/* The command in a brace group of this shell, so that what it left
	 * running in the background is killed when it ends (envd ends the
	 * stream when bash exits and keeps such children). */
	dbuf_addstr(&cmd, "{ ");
	if (req->shell != NULL)
		dbuf_add(&cmd, req->shell, strlen(req->shell));
	else
		for (k = 0; req->argv[k] != NULL; k++) {
			if (k > 0)
				dbuf_add(&cmd, " ", 1);
			sandbox_add_quoted(&cmd, req->argv[k]);
		}
	dbuf_addstr(&cmd, "\n}; __flowcgi_rc=$?; __flowcgi_j=$(jobs -p); "
	    "[ -z \"$__flowcgi_j\" ] || kill -KILL $__flowcgi_j 2>/dev/null; "
	    "exit $__flowcgi_rc");
	if (cmd.err == DBUF_ENOMEM || cmd.p == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	body = json_pack("{s:{s:s, s:[s,s,s], s:O, s:s}, s:b}", "process",
	    "cmd", "/bin/bash", "args", "-l", "-c", cmd.p, "envs", envs, "cwd",
	    cwd, "stdin", 0);
	if (body == NULL) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "exec: the command is not UTF-8");
		goto out;
	}
	if ((payload = json_dumps(body, JSON_COMPACT)) == NULL ||
	    (plen = strlen(payload)) > E2B_FRAME_MAX ||
	    (frame = malloc(plen + 5)) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "exec: out of memory or the "
		    "command is too long");
		goto out;
	}
	frame[0] = 0;
	frame[1] = (char)(plen >> 24 & 0xff);
	frame[2] = (char)(plen >> 16 & 0xff);
	frame[3] = (char)(plen >> 8 & 0xff);
	frame[4] = (char)(plen & 0xff);
	memcpy(frame + 5, payload, plen);
	if ((h = e2b_headers(x, PLANE_ENVD, "application/connect+json")) ==
	    NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	hdr_add(&h, &oom, "Connect-Protocol-Version: 1");
	hdr_add(&h, &oom, "Connect-Timeout-Ms: %" PRId64, timeout_ms);
	hdr_add(&h, &oom, "Keepalive-Ping-Interval: %d", x->keepalive);
	if (oom) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}

	/* The stream. */
	st.out.max = st.err.max = req->max_output > 0 ? req->max_output
						      : x->cfg.max_output;
	st.deadline_us = t0 + timeout_ms * 1000 + (int64_t)x->grace * 1000000;
	snprintf(url, sizeof(url), "%s/process.Process/Start", x->envd_url);
	memset(&rq, 0, sizeof(rq));
	rq.method = "POST";
	rq.url = url;
	rq.headers = h;
	rq.body = frame;
	rq.body_len = plen + 5;
	rq.trusted = 1;
	rq.timeout = (int)((timeout_ms + 999) / 1000) + x->grace;
	rq.max_bytes = INT64_MAX;
	rq.on_data = stream_bytes;
	rq.arg = &st;
	rq.on_header = stream_header;
	rq.header_arg = &st;
	oerr[0] = '\0';
	frc = outbound_fetch(&x->eng, &rq, oerr, &rs);

	if (st.deadline_hit || (frc != 0 && st.bad[0] == '\0' &&
	    sandbox_now_us() >= st.deadline_us - 500000)) {
		/* envd did not end it in time: we do. */
		if (st.started)
			envd_kill_pid(x, st.pid);
		res->timed_out = 1;
	} else if (frc == ENGINE_ENOMEM || st.out.err == DBUF_ENOMEM ||
	    st.err.err == DBUF_ENOMEM) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto kill;
	} else if (st.bad[0] != '\0') {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "e2b exec (process.Process/"
		    "Start): envd sent %s", st.bad);
		goto kill;
	} else if (frc != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "e2b exec (process.Process/"
		    "Start): %s", oerr);
		goto kill;
	} else if (st.status != 200 || !st.framed) {
		if (st.status == 502)
			rc = sandbox_fail(err, SANDBOX_EFAIL, "e2b exec (process."
			    "Process/Start): sandbox %s not found (expired or "
			    "killed)", x->sid);
		else {
			e2b_http_msg(st.status ? st.status : rs.status,
			    st.errbody, st.errbody_len, msg, sizeof(msg));
			rc = sandbox_fail(err, SANDBOX_EFAIL, "e2b exec (process."
			    "Process/Start): %s", msg);
		}
		goto out;
	} else if (!st.end_stream) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "e2b exec (process.Process/"
		    "Start): the stream ended without its end-stream frame");
		goto kill;
	} else if (strcmp(st.es_code, "deadline_exceeded") == 0)
		res->timed_out = 1;	/* envd killed it at the deadline */
	else if (st.es_code[0] != '\0') {
		rc = sandbox_fail(err, strcmp(st.es_code, "invalid_argument") == 0 &&
		    !st.started ? ENGINE_EINVAL : SANDBOX_EFAIL, "e2b exec "
		    "(process.Process/Start): %s: %s", st.es_code, st.es_msg);
		goto kill;
	} else if (!st.ended) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "e2b exec (process.Process/"
		    "Start): the stream ended without an end event");
		goto kill;
	}

	if (res->timed_out) {
		res->exit_code = 128 + SIGKILL;
		res->signal = SIGKILL;
	} else if (st.exited)
		res->exit_code = st.exit_code;
	else if ((sig = signal_from_status(st.status_text)) > 0) {
		res->exit_code = 128 + sig;
		res->signal = sig;
	} else
		res->exit_code = st.exit_code >= 0 ? st.exit_code : 255;
	if ((rc = sandbox_exec_take(res, &st.out, &st.err, err)) != 0)
		goto out;
	res->elapsed_us = sandbox_now_us() - t0;
	goto out;
kill:
	if (st.started && !st.ended)
		envd_kill_pid(x, st.pid);
out:
	if (stdin_file && !st.started)
		envd_remove(x, in_path);
	if (rc != 0) {
		scrub(x, err);
		sandbox_exec_result_release(res);
	}
	outbound_resp_release(&rs);
	curl_slist_free_all(h);
	json_decref(body);
	json_decref(envs);
	free(payload);
	free(frame);
	free(cmd.p);
	free(st.msg);
	free(st.out.p);
	free(st.err.p);
	return rc;
}

/* The config the console asks for and stores (settings.c): cfg->options. */
static const struct sandbox_field e2b_fields[] = {
	{ "api_key", "secret-input", 1, NULL, "API key" },
	{ "e2b_api_url", "text-input", 0, "https://api.e2b.app", "API URL" },
	{ "e2b_default_template", "text-input", 0, "code-interpreter-v1",
	    "Template" },
	{ "e2b_envd_url", "text-input", 0, NULL,
	    "envd URL override (optional)" },
};

const struct sandbox_provider sandbox_provider_e2b = {
	.name = "e2b",
	.fields = e2b_fields,
	.nfields = sizeof(e2b_fields) / sizeof(*e2b_fields),
	.create = e2b_create,
	.exec = e2b_exec,
	.upload = e2b_upload,
	.download = e2b_download,
	.list = e2b_list,
	.destroy = e2b_destroy,
	.free = e2b_free,
};
