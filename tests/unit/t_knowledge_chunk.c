/*
 * t_knowledge_chunk.c — the tokens the keyword index and chunk sizes
 * share (words lowercased, CJK code points and their pairs), Dify's
 * cleaning rules, and the splitters: a fixed separator gives one chunk a
 * piece, the recursive splitter merges small pieces up to max_tokens with
 * overlap and never makes a chunk over it.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/knowledge/knowledge.h"
#include "tests/unit/tap.h"

struct toks {
	char	buf[1024];
	size_t	len;
};

static int
collect(const char *tok, size_t n, void *arg)
{
	struct toks *t = arg;

	if (t->len + n + 2 < sizeof(t->buf)) {
		if (t->len > 0)
			t->buf[t->len++] = '|';
		memcpy(t->buf + t->len, tok, n);
		t->len += n;
		t->buf[t->len] = '\0';
	}
	return 0;
}

static const char *
toks(const char *s, struct toks *t)
{
	memset(t, 0, sizeof(*t));
	kb_tokens(s, strlen(s), collect, t);
	return t->buf;
}

static char *
joined(json_t *a)
{
	return json_dumps(a, JSON_COMPACT);
}

int
main(void)
{
	struct toks	 t;
	json_t		*out = NULL, *c;
	char		*s;
	size_t		 i;
	int		 over = 0;

	CHECK_STR(toks("Hello, World 42!", &t), "hello|world|42");
	CHECK_STR(toks("退款政策", &t), "退|款|退款|政|款政|策|政策");
	CHECK_STR(toks("a退款b", &t), "a|退|款|退款|b");
	CHECK_STR(toks("。，", &t), "");
	CHECK(kb_token_count("Refunds are paid 退款", strlen("Refunds are "
	    "paid 退款")) == 5);

	s = kb_clean("a<|b|>c\x01  d\n\n\n\ne", 1, 0);
	CHECK_STR(s, "a<b>c d\n\ne");
	free(s);
	s = kb_clean("mail me@example.com or see https://x.org/a now", 0, 1);
	CHECK_STR(s, "mail  or see  now");
	free(s);
	s = kb_clean("[link](https://x.org)", 0, 1);
	CHECK_STR(s, "[link](https://x.org)");
	free(s);

	CHECK(kb_split("one\ntwo two\n\nthree", "\n", 100, 0, 100, &out) == 0);
	s = joined(out);
	CHECK_STR(s, "[\"one\",\"two two\",\"three\"]");
	free(s);
	json_decref(out);

	/* 30 words, chunks of 10 with an overlap of 3 */
	CHECK(kb_split("w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 "
	    "w16 w17 w18 w19 w20 w21 w22 w23 w24 w25 w26 w27 w28 w29 w30",
	    NULL, 10, 3, 100, &out) == 0);
	CHECK(json_array_size(out) == 4);
	CHECK_STR(json_string_value(json_array_get(out, 0)),
	    "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10");
	CHECK_STR(json_string_value(json_array_get(out, 1)),
	    "w8 w9 w10 w11 w12 w13 w14 w15 w16 w17");
	json_array_foreach(out, i, c)
		over |= kb_token_count(json_string_value(c),
		    json_string_length(c)) > 10;
	CHECK(!over);
	json_decref(out);

	/* a fixed piece over max_tokens is split further */
	CHECK(kb_split("short\na b c d e f g h", "\n", 4, 0, 100, &out) == 0);
	s = joined(out);
	CHECK_STR(s, "[\"short\",\"a b c d\",\"e f g h\"]");
	free(s);
	json_decref(out);

	/* CJK text without spaces splits on 。 then code points */
	CHECK(kb_split("退款将在十四天内支付。发货需要三天时间。", NULL, 12, 0,
	    100, &out) == 0);
	s = joined(out);
	CHECK_STR(s, "[\"退款将在十四天内支付。\",\"发货需要三天时间。\"]");
	free(s);
	json_decref(out);

	CHECK(kb_split("a\nb\nc", "\n", 50, 0, 2, &out) == ENGINE_ELIMIT);
	CHECK(out == NULL);
	return tap_done();
}
