/*
 * t_llm_chunk.c — the OpenAI-compatible chunks a stream is made of, read in
 * place (quick_read) or with jansson: the common ones are read in place
 * and give what jansson's reading gives; escapes, reals, usage, tool
 * calls, errors, duplicate keys, deep nesting and malformed chunks are left
 * to jansson. The comparison is fuzz_llm_chunk's.
 */
#include "tests/fuzz/fuzz_llm_chunk.c"
#include "tap.h"

/* 1 taken and the same as jansson, 0 left to jansson, -1 different. */
static int
cmp(const char *chunk)
{
	return chunk_compare((const uint8_t *)chunk, strlen(chunk));
}

/* What the quick reader did with chunk, as chunk_outcome writes it. */
static char *
emitted(const char *chunk)
{
	int taken;

	return chunk_outcome((const uint8_t *)chunk, strlen(chunk), 1,
	    &taken);
}

/* {"a":[[...]]} with n brackets, in buf. */
static const char *
nested(char *buf, int n)
{
	int i, k = 0;

	k += snprintf(buf + k, 16, "{\"a\":");
	for (i = 0; i < n; i++)
		buf[k++] = '[';
	for (i = 0; i < n; i++)
		buf[k++] = ']';
	snprintf(buf + k, 2, "}");
	return buf;
}

int
main(void)
{
	char	 deep[256], *s;

	/* taken: the chunks a model sends for each token */
	CHECK_INT(cmp("{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion."
	    "chunk\",\"created\":1700000000,\"model\":\"gpt-4o-mini\","
	    "\"system_fingerprint\":\"fp\",\"choices\":[{\"index\":0,"
	    "\"delta\":{\"content\":\"Hel\"},\"logprobs\":null,"
	    "\"finish_reason\":null}],\"usage\":null}"), 1);
	s = emitted("{\"model\":\"m\",\"choices\":[{\"delta\":{\"content\":"
	    "\"Hel\"}}]}");
	CHECK(s != NULL && strncmp(s, "text:Hel||rc 0 slots 0|m|", 25) == 0);
	free(s);
	CHECK_INT(cmp("{\"choices\":[{\"index\":0,\"delta\":{\"role\":"
	    "\"assistant\",\"content\":\"\",\"refusal\":null}}]}"), 1);
	CHECK_INT(cmp(" {\"choices\" : [ {\"delta\" : {\"reasoning_content\""
	    ":\"think\", \"content\":null} } ] }\r\n"), 1);
	CHECK_INT(cmp("{\"choices\":[{\"delta\":{\"reasoning\":\"r\","
	    "\"content\":\"c\"},\"finish_reason\":\"length\"}]}"), 1);
	CHECK_INT(cmp("{\"choices\":[{\"delta\":{},\"finish_reason\":"
	    "\"stop\"}],\"model\":\"\"}"), 1);
	CHECK_INT(cmp("{\"choices\":[{\"delta\":{},\"finish_reason\":\"\"}]}"),
	    1);
	CHECK_INT(cmp("{\"choices\":[{\"delta\":{\"content\":\"a\"},"
	    "\"finish_reason\":7}],\"model\":[1]}"), 1);
	CHECK_INT(cmp("{\"choices\":[],\"model\":\"m\"}"), 1);
	CHECK_INT(cmp("{}"), 1);
	CHECK_INT(cmp("{\"model\":\"caf\xc3\xa9\",\"choices\":[{\"delta\":"
	    "{\"content\":\"\xe4\xbd\xa0\xf0\x9f\x98\x80\"}},{\"delta\":"
	    "{\"content\":\"second\"}}],\"x\":[-1,0,true,false,null,{\"y\":"
	    "[[]]}],\"error\":null,\"tool_calls\":[1]}"), 1);

	/* left to jansson, which reads them its own way or refuses them */
	CHECK_INT(cmp("{\"choices\":[{\"delta\":{\"content\":\"a\\nb\"}}]}"),
	    0);
	CHECK_INT(cmp("{\"choices\":[{\"delta\":{\"content\":\"\\u00e9\"}}]}"),
	    0);
	CHECK_INT(cmp("{\"created\":1.5,\"choices\":[]}"), 0);
	CHECK_INT(cmp("{\"created\":1e3,\"choices\":[]}"), 0);
	CHECK_INT(cmp("{\"created\":12345678901234567890,\"choices\":[]}"),
	    0);
	CHECK_INT(cmp("{\"created\":01}"), 0);
	CHECK_INT(cmp("{\"choices\":[],\"usage\":{\"prompt_tokens\":1}}"), 0);
	CHECK_INT(cmp("{\"error\":{\"message\":\"overloaded\"}}"), 0);
	CHECK_INT(cmp("{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,"
	    "\"function\":{\"arguments\":\"{}\"}}]}}]}"), 0);
	CHECK_INT(cmp("{\"choices\":[{\"delta\":{\"content\":[{\"type\":"
	    "\"text\",\"text\":\"a\"}]}}]}"), 0);
	CHECK_INT(cmp("{\"model\":\"a\",\"model\":5}"), 0);
	CHECK_INT(cmp("{\"choices\":[{\"delta\":{\"content\":\"a\","
	    "\"content\":\"b\"}}]}"), 0);
	CHECK_INT(cmp("{\"choices\":null}"), 0);
	CHECK_INT(cmp("{\"choices\":[\"x\"]}"), 0);
	CHECK_INT(cmp("{\"choices\":[{\"delta\":\"x\"}]}"), 0);
	CHECK_INT(cmp("[]"), 0);
	CHECK_INT(cmp(""), 0);
	CHECK_INT(cmp("{\"a\":1} x"), 0);
	CHECK_INT(cmp("{\"a\":1,}"), 0);
	CHECK_INT(cmp("{\"a\":tru}"), 0);
	CHECK_INT(cmp("{\"a\":nullx}"), 0);
	CHECK_INT(cmp("{\"a\":\"\x01\"}"), 0);
	CHECK_INT(cmp("{\"a\":\"\xc3\"}"), 0);		/* cut short */
	CHECK_INT(cmp("{\"a\":\"\xed\xa0\x80\"}"), 0);	/* a surrogate */
	CHECK_INT(cmp("{\"a\":\"\xc0\xaf\"}"), 0);	/* overlong */
	CHECK_INT(cmp("{\"a\":\"x"), 0);
	CHECK_INT(cmp("\xef\xbb\xbf{}"), 0);		/* a BOM */
	/* nesting: within QUICK_DEPTH read in place, past it left */
	CHECK_INT(cmp(nested(deep, 20)), 1);
	CHECK_INT(cmp(nested(deep, 40)), 0);
	return tap_done();
}
