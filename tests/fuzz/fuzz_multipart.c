/*
 * fuzz_multipart.c — multipart/form-data parsing. The first line of the
 * input is the Content-Type; the rest is the body. Every part must lie
 * inside the body.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi/internal.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena	*a;
	struct mp_part	*parts;
	const char	*nl;
	char		*ct, *body, err[256];
	size_t		 n, i, blen;

	if ((nl = memchr(data, '\n', size)) == NULL)
		return 0;
	if ((a = arena_new()) == NULL)
		return 0;
	ct = arena_strndup(a, (const char *)data, (size_t)(nl - (const char *)data));
	blen = size - (size_t)(nl + 1 - (const char *)data);
	/* A copy of exactly blen bytes, so overreads are caught. */
	body = malloc(blen ? blen : 1);
	if (ct != NULL && body != NULL) {
		memcpy(body, nl + 1, blen);
		if (multipart_parse(a, ct, body, blen, 16, &parts, &n, err,
		    sizeof(err)) == 0) {
			for (i = 0; i < n; i++)
				if (parts[i].data < body ||
				    parts[i].data + parts[i].len > body + blen ||
				    parts[i].name == NULL)
					abort();
		}
	}
	free(body);
	arena_free(a);
	return 0;
}
