/*
 * fuzz_bundle.c — the .zip bundle reader: any input is read and checked
 * without crashing, and whatever it accepts keeps its promises (one DSL,
 * relative paths without "..", files within the size limit).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
		if (b.files[i].path[0] == '/' ||
		    strstr(b.files[i].path, "..") == b.files[i].path ||
		    strstr(b.files[i].path, "/../") != NULL ||
		    (int64_t)b.files[i].len > c.asset_max_file)
			abort();
	bundle_release(&b);
	return 0;
}
