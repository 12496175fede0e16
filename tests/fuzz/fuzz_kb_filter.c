/*
 * fuzz_kb_filter.c — Dify's metadata_filtering_conditions (engine/
 * knowledge/filter.c): any JSON is checked, and what the check takes is
 * matched against documents with values of every type and the built-in
 * fields on; nothing may crash, and "or" of no condition keeps all.
 */
#include <stdint.h>
#include <stdlib.h>

#include "engine/knowledge/knowledge.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	 err[ENGINE_ERRMAX];
	json_t	*f, *ds, *d1, *d2;

	f = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	if (f == NULL)
		return 0;
	ds = json_pack("{s:b}", "built_in_field_enabled", 1);
	d1 = json_pack("{s:s,s:i,s:[{s:s,s:s},{s:s,s:i},{s:s,s:f},{s:s,s:n}]}",
	    "name", "a.txt", "created_at", 1700000000, "doc_metadata", "name",
	    "category", "value", "wear", "name", "year", "value", 2021, "name",
	    "score", "value", 0.5, "name", "none", "value");
	d2 = json_pack("{s:[]}", "doc_metadata");
	if (ds != NULL && d1 != NULL && d2 != NULL &&
	    kb_filter_check(f, err) == 0) {
		(void)kb_filter_match(ds, d1, f);
		(void)kb_filter_match(ds, d2, f);
		if (json_is_object(f) && json_array_size(json_object_get(f,
		    "conditions")) == 0 && !kb_filter_match(ds, d1, f))
			abort();
	}
	json_decref(ds);
	json_decref(d1);
	json_decref(d2);
	json_decref(f);
	return 0;
}
