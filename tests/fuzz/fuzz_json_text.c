/*
 * fuzz_json_text.c — store_json_text (storage/json.c) against jansson:
 * any JSON text jansson reads (NULs in strings allowed, any value at the
 * top) must be written back byte for byte as json_dumps(JSON_COMPACT |
 * JSON_ENCODE_ANY) writes it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "storage/storage.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t	*j;
	char	*got, *want;
	size_t	 len = 0;

	j = json_loadb((const char *)data, size, JSON_DECODE_ANY |
	    JSON_ALLOW_NUL, NULL);
	if (j == NULL)
		return 0;
	got = store_json_text(j, &len);
	want = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
	if (got != NULL && want != NULL &&
	    (len != strlen(want) || memcmp(got, want, len) != 0))
		abort();
	free(got);
	free(want);
	json_decref(j);
	return 0;
}
