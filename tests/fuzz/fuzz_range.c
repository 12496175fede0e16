/*
 * fuzz_range.c — Range headers (fcgi/http.c http_range) from any input:
 * the first 8 bytes give the body's size, the rest is the header. An
 * answer of one range always lies inside the body and is not empty; an
 * answer of none (416) never comes for a header that names no range.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi/internal.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t	 body = 0, off = 0, len = 0;
	char		*h;
	int		 rc;

	if (size < 8)
		return 0;
	memcpy(&body, data, 8);
	body %= (uint64_t)1 << 40;
	if ((h = malloc(size - 8 + 1)) == NULL)
		return 0;
	memcpy(h, data + 8, size - 8);
	h[size - 8] = '\0';
	rc = http_range(h, body, &off, &len);
	if (rc == 1 && (len == 0 || off >= body || len > body - off))
		abort();
	if (rc < -1 || rc > 1 || (rc != 0 && strstr(h, "=") == NULL))
		abort();
	free(h);
	return 0;
}
