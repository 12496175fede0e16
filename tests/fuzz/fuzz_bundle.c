/*
 * fuzz_bundle.c — the .zip bundle reader: any input is read and checked
 * without crashing, and whatever it accepts keeps its promises (one DSL,
 * relative UTF-8 paths without a ".." component, files within the size
 * limit).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/records/records.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 1 when path has a ".." component or is not well-formed UTF-8. */
static int
path_bad(const char *path)
{
	size_t	n = strlen(path), i, k;

	if (strcmp(path, "..") == 0 || strncmp(path, "../", 3) == 0 ||
	    strstr(path, "/../") != NULL ||
	    (n >= 3 && strcmp(path + n - 3, "/..") == 0))
		return 1;
	for (i = 0; i < n; i += k)
		if ((k = engine_utf8_seq((const unsigned char *)path + i,
		    n - i)) == 0)
			return 1;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct conf	c;
	static int		init;
	struct bundle		b;
	char			err[ENGINE_ERRMAX];
	size_t			i;

	if (!init) {
		conf_defaults(&c);
		c.asset_max_file = 1 << 20;
		c.bundle_max_size = 4 << 20;
		init = 1;
	}
	if (bundle_read(&c, data, size, err, &b) != 0)
		return 0;
	if (b.dsl == NULL || b.dsl_name == NULL ||
	    strchr(b.dsl_name, '/') != NULL)
		abort();
	for (i = 0; i < b.nfiles; i++)
		if (b.files[i].path[0] == '/' || path_bad(b.files[i].path) ||
		    (int64_t)b.files[i].len > c.asset_max_file)
			abort();
	bundle_release(&b);
	return 0;
}
