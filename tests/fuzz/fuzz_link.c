/*
 * fuzz_link.c — signed links (engine/records/links.c) from any input: the
 * lines method, path, expires_at, nonce and sign are checked without a crash
 * and never verify (only a link we signed does), while a link signed for the
 * same method and path always verifies and stops verifying on any other
 * path. The engine lives in a temporary data directory removed at exit.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "tests/fuzz/fuzz_engine.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
init(void)
{
	conf_defaults(&conf);
	conf.map_size = 1 << 20;
	fuzz_engine_open("fuzz_link");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*buf, *f[5], *p, q[ENGINE_LINK_QUERY_MAX], err[ENGINE_ERRMAX];
	char	 exp[32], nonce[81], sign[81];
	size_t	 n = 0;

	if (eng == NULL)
		init();
	if ((buf = malloc(size + 1)) == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (p = buf, n = 0; n < 5; n++) {
		f[n] = p;
		if ((p = strchr(p, '\n')) == NULL) {
			n++;
			break;
		}
		*p++ = '\0';
	}
	while (n < 5)
		f[n++] = NULL;
	if (f[0] == NULL || f[1] == NULL)
		goto out;
	/* The input's own values: never ours. */
	if (engine_link_verify(eng, f[0], f[1], f[2], f[3], f[4], 3600,
	    err) == 0)
		abort();
	/* A link we sign for the same method and path. */
	if (engine_link_sign(eng, f[0], f[1], 60, q, NULL, err) != 0 ||
	    sscanf(q, "expires_at=%31[0-9]&nonce=%80[0-9a-f]&sign=%80s", exp,
	    nonce, sign) != 3)
		abort();
	if (engine_link_verify(eng, f[0], f[1], exp, nonce, sign, 3600,
	    err) != 0)
		abort();
	if (f[2] != NULL && strcmp(f[2], f[1]) != 0 &&
	    engine_link_verify(eng, f[0], f[2], exp, nonce, sign, 3600,
	    err) == 0)
		abort();
out:
	free(buf);
	return 0;
}
