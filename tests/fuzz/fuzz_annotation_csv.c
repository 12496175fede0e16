/*
 * fuzz_annotation_csv.c — Dify's annotation CSV (engine/knowledge/
 * annotations.c annotation_csv_pairs, over libcsv) from any input: it
 * answers without a crash, an answer of pairs holds at least one and at
 * most the rows allowed, each a pair of non-empty strings within the size
 * limit, and an error always says why.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/knowledge/knowledge.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t	*pairs = NULL, *p;
	char	 err[ENGINE_ERRMAX] = "";
	size_t	 i;
	int	 rc;

	rc = annotation_csv_pairs((const char *)data, size, 64, 8, err,
	    &pairs);
	if (rc != 0) {
		if (pairs != NULL || (rc != ENGINE_ENOMEM && err[0] == '\0'))
			abort();
		return 0;
	}
	if (json_array_size(pairs) < 1 || json_array_size(pairs) > 8)
		abort();
	json_array_foreach(pairs, i, p) {
		const char *q = json_string_value(json_array_get(p, 0));
		const char *a = json_string_value(json_array_get(p, 1));

		if (q == NULL || a == NULL || *q == '\0' || *a == '\0' ||
		    strlen(q) > 64 || strlen(a) > 64)
			abort();
	}
	json_decref(pairs);
	return 0;
}
