/*
 * system.c — endpoints about the server itself: /healthz and /metrics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

#include "fcgi/internal.h"

/* GET /healthz: answers without auth; 200 while storage can be read. */
static void
h_healthz(struct req *r)
{
	int rc;

	if ((rc = engine_health(r->eng)) != 0) {
		resp_error(r, 503, "unavailable", "%s", engine_strerror(rc));
		return;
	}
	resp_json(r, 200, json_pack("{s:s,s:s}", "status", "ok", "version",
	    FLOWCGI_VERSION));
}

/* 1 when the client's address is in metrics.allow (empty: any). */
static int
metrics_allowed(struct req *r)
{
	const char	*list = r->conf->metrics_allow, *ra, *p, *comma;
	unsigned char	 addr[16];
	char		 entry[64];
	size_t		 n;

	if (*list == '\0')
		return 1;
	ra = req_param(r, "REMOTE_ADDR");
	if (ra == NULL || peer_addr_parse(ra, addr) != 0)
		return 0;
	for (p = list; *p != '\0'; p = *comma ? comma + 1 : comma) {
		comma = strchr(p, ',');
		if (comma == NULL)
			comma = p + strlen(p);
		n = (size_t)(comma - p);
		if (n > 0 && n < sizeof(entry)) {
			memcpy(entry, p, n);
			entry[n] = '\0';
			if (peer_addr_in(addr, entry))
				return 1;
		}
	}
	return 0;
}

/* 0 when Authorization carries metrics.token (when set) or the admin's. */
static int
metrics_auth(struct req *r)
{
	const char	*h = req_param(r, "HTTP_AUTHORIZATION");
	unsigned char	 a[32], b[32];

	if (auth_check_admin(r) == 0)
		return 0;
	if (r->conf->metrics_token[0] == '\0' || h == NULL ||
	    strncasecmp(h, "Bearer ", 7) != 0)
		return -1;
	h += 7 + strspn(h + 7, " ");
	/* hashes: the same time whatever the lengths */
	auth_hash(h, a);
	auth_hash(r->conf->metrics_token, b);
	return CRYPTO_memcmp(a, b, sizeof(a)) == 0 ? 0 : -1;
}

/*
 * GET /metrics: the Prometheus text format, with metrics.enabled; the
 * admin token or metrics.token, from an address in metrics.allow.
 */
static void
h_metrics(struct req *r)
{
	char	*text = NULL;
	size_t	 len;

	if (!r->conf->metrics_enabled) {
		resp_error(r, 404, "not_found", "metrics are off "
		    "(metrics.enabled)");
		return;
	}
	if (!metrics_allowed(r)) {
		resp_error(r, 403, "forbidden", "this address may not read "
		    "metrics (metrics.allow)");
		return;
	}
	if (metrics_auth(r) != 0) {
		resp_header(r, "WWW-Authenticate", "Bearer");
		resp_error(r, 401, "unauthorized", "missing or wrong token in "
		    "Authorization: Bearer (metrics.token or the admin "
		    "token)");
		return;
	}
	if (metrics_render(&text, &len) != 0) {
		resp_error(r, 500, "internal_server_error", "out of memory");
		return;
	}
	resp_bytes(r, 200, "text/plain; version=0.0.4; charset=utf-8", text,
	    len);
	free(text);
}

const struct route system_routes[] = {
	{ "GET", "/healthz", h_healthz, AUTH_NONE },
	{ "GET", "/metrics", h_metrics, AUTH_NONE },
	{ NULL, NULL, NULL, AUTH_NONE },
};
