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

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct conf	 conf;
static struct engine	*eng;
static char		 dir[64];

static void
cleanup(void)
{
	char cmd[128];

	engine_close(eng);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

static void
init(void)
{
	char err[ENGINE_ERRMAX];

	snprintf(dir, sizeof(dir), "/tmp/fuzz_link.XXXXXX");
	if (mkdtemp(dir) == NULL)
		abort();
	conf_defaults(&conf);
	conf.sync = 0;
	conf.map_size = 1 << 20;
	snprintf(conf.data_dir, sizeof(conf.data_dir), "%s", dir);
	log_init(CONF_LOG_ERROR, NULL);
	if (engine_open(&conf, err, &eng) != 0)
		abort();
	atexit(cleanup);
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
