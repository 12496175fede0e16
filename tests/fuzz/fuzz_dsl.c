/*
 * fuzz_dsl.c — the DSL codec on arbitrary bytes: whatever dsl_parse
 * accepts must emit, read back equal (json_equal) and emit again to the
 * same bytes; dsl_check and dsl_export must not crash, and an exported
 * document round-trips the same way. abort() on any violation.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* emit(doc) parses back equal to doc and re-emits byte for byte. */
static void
roundtrip(const json_t *doc)
{
	struct dsl_limits	 lim;
	char			 err[ENGINE_ERRMAX];
	char			*y1 = NULL, *y2 = NULL;
	size_t			 n1, n2;
	json_t			*back = NULL;

	dsl_limits_default(&lim);
	if (dsl_emit(doc, err, &y1, &n1) != 0)
		abort();
	if (dsl_parse(y1, n1, &lim, err, &back) != 0)
		abort();
	if (!json_equal((json_t *)doc, back))
		abort();
	if (dsl_emit(back, err, &y2, &n2) != 0)
		abort();
	if (n1 != n2 || memcmp(y1, y2, n1) != 0)
		abort();
	json_decref(back);
	free(y1);
	free(y2);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dsl_limits	 lim;
	struct dsl_report	 rep, rep2;
	char			 err[ENGINE_ERRMAX];
	json_t			*doc = NULL, *checked = NULL, *exported = NULL;

	/* Small budgets keep each input fast; the rules are the same. */
	dsl_limits_default(&lim);
	lim.max_bytes = 1 << 20;
	lim.max_nodes = 20000;
	lim.max_aliases = 1000;
	if (dsl_parse((const char *)data, size, &lim, err, &doc) != 0)
		return 0;
	roundtrip(doc);
	/* with what publishing adds: node types, required fields */
	if (dsl_check(doc, DSL_CHECK_CONFIRM | DSL_CHECK_RUNNABLE, err, &rep,
	    &checked) == 0) {
		if (dsl_check(checked, DSL_CHECK_CONFIRM, err, &rep2,
		    &exported) != 0)
			abort();
		dsl_report_release(&rep2);
		/* Normalising is idempotent. */
		if (!json_equal(checked, exported))
			abort();
		json_decref(exported);
		exported = NULL;
		if (dsl_export(checked, 0, err, &exported) != 0)
			abort();
		roundtrip(exported);
	}
	dsl_report_release(&rep);
	json_decref(exported);
	json_decref(checked);
	json_decref(doc);
	return 0;
}
