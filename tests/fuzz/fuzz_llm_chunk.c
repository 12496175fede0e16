/*
 * fuzz_llm_chunk.c — the OpenAI-compatible chunk read in place
 * (quick_read in engine/llm/openai.c) against the same chunk read with
 * jansson: whenever the quick reader takes a chunk, both must give the
 * same deltas, model, finish reason and result. The input is one chunk.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/llm/openai.c"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
chunk_delta(void *arg, enum llm_delta kind, const char *text, size_t len)
{
	struct dbuf *sb = arg;

	dbuf_addstr(sb, kind == LLM_DELTA_TEXT ? "text:" : "reasoning:");
	dbuf_add(sb, text, len);
	dbuf_add(sb, "|", 1);
	return 0;
}

/*
 * What one reading of data did, as text (free it); quick: by quick_read
 * and quick_apply, then *taken says whether quick_read took it.
 */
static char *
chunk_outcome(const uint8_t *data, size_t size, int quick, int *taken)
{
	struct llm_endpoint	 ep;
	struct llm_request	 rq;
	struct llm_attempt	 at;
	struct llm_response	 out;
	struct llm_chat		 p;
	struct quick		 q;
	struct dbuf		 sb;
	char			 err[ENGINE_ERRMAX] = "", head[128];
	int			 rc = 0;

	memset(&ep, 0, sizeof(ep));
	memset(&rq, 0, sizeof(rq));
	memset(&at, 0, sizeof(at));
	memset(&out, 0, sizeof(out));
	memset(&p, 0, sizeof(p));
	memset(&sb, 0, sizeof(sb));
	snprintf(ep.name, sizeof(ep.name), "fake");
	ep.api_key = "";
	rq.stream = 1;
	rq.on_delta = chunk_delta;
	rq.arg = &sb;
	p.proto = &llm_protocol_openai;
	p.ep = &ep;
	p.rq = &rq;
	p.at = &at;
	p.out = &out;
	p.err = err;
	if (quick) {
		*taken = quick_read((const char *)data, size, &q) == 0;
		if (*taken)
			rc = quick_apply(&p, &q);
	} else
		rc = chunk_json(&p, (const char *)data, size);
	snprintf(head, sizeof(head), "|rc %d slots %zu|", rc, p.nslots);
	dbuf_addstr(&sb, head);
	dbuf_addstr(&sb, out.model);
	dbuf_addstr(&sb, "|");
	dbuf_addstr(&sb, p.finish);
	dbuf_addstr(&sb, "|");
	dbuf_addstr(&sb, err);
	dbuf_addstr(&sb, "|");
	if (out.text != NULL)
		dbuf_add(&sb, out.text, out.text_len);
	dbuf_addstr(&sb, "|");
	if (out.reasoning != NULL)
		dbuf_add(&sb, out.reasoning, out.reasoning_len);
	llm_chat_release(&p);
	llm_response_release(&out);
	return dbuf_take(&sb, NULL);
}

/*
 * 1 when the quick reader took data (else 0), -1 when it then did not do
 * what jansson's reading does.
 */
static int
chunk_compare(const uint8_t *data, size_t size)
{
	char	*a, *b;
	int	 taken, same;

	a = chunk_outcome(data, size, 1, &taken);
	if (!taken) {
		free(a);
		return 0;
	}
	b = chunk_outcome(data, size, 0, &taken);
	same = a != NULL && b != NULL && strcmp(a, b) == 0;
	free(a);
	free(b);
	return same ? 1 : -1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (chunk_compare(data, size) < 0)
		abort();
	return 0;
}
