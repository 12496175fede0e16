/*
 * fuzz_llm_sse.c — the server-sent-events reader of the model providers,
 * fed in pieces of every size the input's first byte chooses, and each
 * event's data parsed as the JSON a provider's chunk would be. Whatever
 * the splitting, the same events must come out.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/llm/llm.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	struct dbuf	all;
	size_t		n;
};

static int
on_event(void *arg, const char *event, const char *data, size_t len)
{
	struct seen	*s = arg;
	json_t		*j;

	dbuf_addstr(&s->all, event ? event : "");
	dbuf_add(&s->all, "\n", 1);
	dbuf_add(&s->all, data, len);
	dbuf_add(&s->all, "\n", 1);
	s->n++;
	/* what a protocol file does next with a chunk */
	j = json_loadb(data, len, JSON_DECODE_ANY, NULL);
	json_decref(j);
	return 0;
}

static void
feed(const uint8_t *p, size_t n, size_t step, struct seen *s)
{
	struct llm_sse	sse;
	size_t		i;

	memset(&sse, 0, sizeof(sse));
	sse.on_event = on_event;
	sse.arg = s;
	for (i = 0; i < n; i += step)
		llm_sse_feed(&sse, (const char *)p + i, n - i < step ? n - i :
		    step);
	llm_sse_finish(&sse);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen	a, b;
	size_t		step;

	if (size < 1)
		return 0;
	step = (size_t)data[0] % 17 + 1;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	feed(data + 1, size - 1, size, &a);	/* all at once */
	feed(data + 1, size - 1, step, &b);	/* in pieces */
	if (a.n != b.n || a.all.len != b.all.len ||
	    (a.all.len > 0 && memcmp(a.all.p, b.all.p, a.all.len) != 0))
		abort();
	dbuf_free(&a.all);
	dbuf_free(&b.all);
	return 0;
}
