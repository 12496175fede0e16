/*
 * fuzz_ddg_html.c — the DuckDuckGo result page reader of
 * engine/tools/duckduckgo.c on arbitrary bytes: nothing may crash or
 * leak; every result is {title, href, body} of strings (valid UTF-8, as
 * jansson keeps them), no more than asked for, no href twice, titles and
 * bodies of at most DDG_MAX_FIELD bytes; a next-page form is an object of
 * at most DDG_MAX_FORM strings holding q.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../engine/tools/duckduckgo.c"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ddg_page	 pg;
	const char	*k;
	json_t		*r, *v, *hrefs;
	size_t		 i;

	memset(&pg, 0, sizeof(pg));
	pg.results = json_array();
	pg.seen = json_object();
	hrefs = json_object();
	pg.max = size > 0 ? 1 + data[0] % 20 : 5;
	if (pg.results == NULL || pg.seen == NULL || hrefs == NULL)
		abort();
	if (ddg_parse(&pg, (const char *)data, size) != 0)
		abort();
	if (json_array_size(pg.results) > pg.max)
		abort();
	json_array_foreach(pg.results, i, r) {
		if (json_object_size(r) != 3 ||
		    !json_is_string(json_object_get(r, "href")) ||
		    !json_is_string(json_object_get(r, "title")) ||
		    !json_is_string(json_object_get(r, "body")) ||
		    json_string_length(json_object_get(r, "title")) >
		    DDG_MAX_FIELD ||
		    json_string_length(json_object_get(r, "body")) >
		    DDG_MAX_FIELD)
			abort();
		k = json_string_value(json_object_get(r, "href"));
		if (json_object_get(hrefs, k) != NULL)
			abort();
		json_object_set(hrefs, k, json_true());
	}
	if (pg.next != NULL) {
		if (!json_is_object(pg.next) || json_object_size(pg.next) >
		    DDG_MAX_FORM || json_object_get(pg.next, "q") == NULL)
			abort();
		json_object_foreach(pg.next, k, v)
			if (!json_is_string(v))
				abort();
	}
	json_decref(hrefs);
	ddg_page_release(&pg);
	return 0;
}
