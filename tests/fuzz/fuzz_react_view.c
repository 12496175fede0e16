/*
 * fuzz_react_view.c — a ReAct model's streamed answer as the agent shows
 * it (engine/nodes/react_view.c): the input is cut into pieces at the
 * points its first byte names, fed piece by piece, and fed again whole.
 * Nothing may crash; what shows is never more than came (a marker held
 * and given back is the input's own bytes), and it does not depend on
 * where the stream was cut.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/nodes/nodes.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct react_view	 v;
	struct dbuf		 cut = { 0 }, whole = { 0 };
	const char		*p = (const char *)data + 1;
	size_t			 n, step, i, k;

	if (size == 0)
		return 0;
	n = size - 1;
	step = (size_t)data[0] % 7 + 1;
	memset(&v, 0, sizeof(v));
	for (i = 0; i < n; i += k) {
		k = n - i < step ? n - i : step;
		react_view(&v, p + i, k, &cut);
	}
	memset(&v, 0, sizeof(v));
	react_view(&v, p, n, &whole);
	if (cut.err || whole.err)
		abort();
	if (whole.len > n || cut.len != whole.len ||
	    (n > 0 && whole.len > 0 && memcmp(cut.p, whole.p, whole.len) != 0))
		abort();
	dbuf_free(&cut);
	dbuf_free(&whole);
	return 0;
}
