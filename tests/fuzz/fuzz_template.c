/*
 * fuzz_template.c — {{#a.b#}} templates on arbitrary text: rendered in
 * both forms against a fixed pool (with {{#context#}} on and off), and
 * the selectors listed. Every selector has 2 to 11 parts and the output
 * stays within the limit; abort() otherwise.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char pool_json[] =
    "{\"llm\": {\"text\": \"hi\", \"n\": 3, \"f\": 1.5, \"no\": null,"
    " \"list\": [\"a\", \"b\"], \"mix\": [1, \"x\", {\"k\": [true]}],"
    " \"obj\": {\"deep\": {\"k\": \"v\"}}},"
    " \"sys\": {\"query\": \"Q\", \"files\": [{\"dify_model_identity\":"
    " \"__dify__file__\", \"filename\": \"a.png\", \"type\": \"image\","
    " \"url\": \"http://u/a\"}]}, \"context\": \"CTX\"}";

static const json_t *
lookup(void *ctx, const char *const *parts, size_t nparts)
{
	const json_t	*v = ctx;
	size_t		 i;

	for (i = 0; i < nparts && v != NULL; i++)
		v = json_object_get(v, parts[i]);
	return v;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static json_t	*pool;
	char		 err[ENGINE_ERRMAX];
	char		*tpl, *out = NULL;
	json_t		*sel = NULL;
	size_t		 i, n;
	int		 rc, form, flags;

	if (pool == NULL && (pool = json_loads(pool_json, 0, NULL)) == NULL)
		abort();
	if ((tpl = malloc(size + 1)) == NULL)
		return 0;
	memcpy(tpl, data, size);
	tpl[size] = '\0';
	for (form = 0; form < 2; form++)
		for (flags = 0; flags < 2; flags++) {
			rc = tpl_render(tpl, form ? TPL_MARKDOWN : TPL_TEXT,
			    flags ? TPL_CONTEXT : 0, lookup, pool, 100000, err,
			    &out);
			if (rc == 0 && (out == NULL ||
			    engine_utf8_len(out) > 100000))
				abort();
			if (rc != 0 && (out != NULL || (rc != ENGINE_ELIMIT &&
			    rc != ENGINE_ENOMEM)))
				abort();
			free(out);
			out = NULL;
		}
	if (tpl_selectors(tpl, &sel) == 0) {
		for (i = 0; i < json_array_size(sel); i++) {
			n = json_array_size(json_array_get(sel, i));
			if (n < 2 || n > 11)
				abort();
		}
		json_decref(sel);
	}
	free(tpl);
	return 0;
}
