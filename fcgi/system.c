/*
 * system.c — endpoints about the server itself.
 */
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

const struct route system_routes[] = {
	{ "GET", "/healthz", h_healthz, AUTH_NONE },
	{ NULL, NULL, NULL, AUTH_NONE },
};
