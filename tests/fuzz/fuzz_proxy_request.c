/*
 * fuzz_proxy_request.c — the request heads the local sandbox's network
 * proxy reads from sandboxed code (engine/sandbox/net.c): any bytes are
 * parsed without a crash or a read past them; a head that parses has its
 * offsets inside the input, a host the allow list can judge, a port in
 * range, and (for plain HTTP) a rewrite that starts with the method and
 * a path and ends the head once, with "Connection: close". The input is
 * also read as an allow list.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sandbox/sandbox.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sandbox_proxy_req	 r;
	struct sandbox_net_allow	*a = NULL;
	struct dbuf		 b = { 0 };
	char				*buf, err[ENGINE_ERRMAX];
	int				 rc;

	/* a copy of exactly size bytes, so a read past them is caught */
	if ((buf = malloc(size + 1)) == NULL)
		return 0;
	memcpy(buf, data, size);
	rc = sandbox_proxy_parse(buf, size, &r);
	if (rc == SANDBOX_PROXY_OK) {
		if (r.head_len > size || r.port < 1 || r.port > 65535 ||
		    r.host[0] == '\0' || strlen(r.host) >= sizeof(r.host))
			abort();
		if (!r.connect) {
			if (r.auth_off + r.auth_len > r.head_len ||
			    r.path_off + r.path_len > r.head_len)
				abort();
			if (sandbox_proxy_rewrite(buf, &r, &b) != 0)
				abort();
			if (strncmp(b.p, r.method, strlen(r.method)) != 0 ||
			    b.p[strlen(r.method)] != ' ' ||
			    b.p[strlen(r.method) + 1] != '/' ||
			    b.len < 21 || memcmp(b.p + b.len - 21,
			    "Connection: close\r\n\r\n", 21) != 0 ||
			    strstr(b.p, "\r\n\r\n") != b.p + b.len - 4)
				abort();
			free(b.p);
		}
		if (sandbox_net_allow_parse("*", err, &a) != 0 ||
		    !sandbox_net_host_allowed(a, r.host))
			abort();
		sandbox_net_allow_free(a);
		a = NULL;
	} else if (rc != SANDBOX_PROXY_MORE && rc != SANDBOX_PROXY_BAD)
		abort();
	/* the same bytes as sandbox.network_allow */
	buf[size] = '\0';
	if (strlen(buf) == size && sandbox_net_allow_parse(buf, err, &a) ==
	    0) {
		(void)sandbox_net_host_allowed(a, "pypi.org");
		(void)sandbox_net_host_allowed(a, "10.0.0.1");
		sandbox_net_allow_free(a);
	}
	free(buf);
	return 0;
}
