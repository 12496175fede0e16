/*
 * t_engine_text.c — engine_utf8_clean and engine_utf8_seq: well-formed
 * UTF-8 passes through, what is not becomes U+FFFD exactly as Python's
 * errors="replace" decodes it (what Dify shows of a command's output): one
 * for each maximal ill-formed part. The expected values are Python's.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "tests/unit/tap.h"

#define FFFD "\xEF\xBF\xBD"

/* clean(in, inlen, nul_too) compared with want (wantlen bytes). */
static void
check_clean(const char *in, size_t inlen, int nul_too, const char *want,
    size_t wantlen)
{
	size_t	 n = 12345;
	char	*got = engine_utf8_clean(in, inlen, nul_too, &n);

	CHECK(got != NULL);
	if (got == NULL)
		return;
	CHECK_INT(n, wantlen);
	CHECK(n == wantlen && memcmp(got, want, n) == 0);
	CHECK(got[n] == '\0');
	free(got);
}

#define CLEAN(in, nul, want) \
	check_clean(in, sizeof(in) - 1, nul, want, sizeof(want) - 1)

int
main(void)
{
	/* Well-formed text, every sequence length, is kept byte for byte. */
	CLEAN("", 0, "");
	CLEAN("plain ascii", 0, "plain ascii");
	CLEAN("caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x80", 0,
	    "caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x80");
	CLEAN("\xEF\xBF\xBF\xF4\x8F\xBF\xBF", 0, "\xEF\xBF\xBF\xF4\x8F\xBF\xBF");
	/* Bytes that can start no sequence: one U+FFFD each. */
	CLEAN("ok\xFF", 0, "ok" FFFD);
	CLEAN("\x80\xBF", 0, FFFD FFFD);			/* stray continuations */
	CLEAN("\xC0\xAF", 0, FFFD FFFD);			/* overlong '/' */
	CLEAN("\xE0\x80\xAF", 0, FFFD FFFD FFFD);		/* overlong */
	CLEAN("\xED\xA0\x80", 0, FFFD FFFD FFFD);		/* surrogate */
	CLEAN("\xF4\x90\x80\x80", 0, FFFD FFFD FFFD FFFD);	/* > U+10FFFF */
	CLEAN("\xF5\x80", 0, FFFD FFFD);
	/* A sequence cut short, at the end and in the middle. */
	CLEAN("ab\xE4\xB8", 0, "ab" FFFD);
	CLEAN("\xE4\xB8x", 0, FFFD "x");
	CLEAN("\xF0\x9F\x98", 0, FFFD);
	CLEAN("\xF0\x9F\x98\xF0\x9F\x98\x80", 0, FFFD "\xF0\x9F\x98\x80");
	/* NUL bytes: kept, or replaced when asked. */
	CLEAN("a\0b", 0, "a\0b");
	CLEAN("a\0b", 1, "a" FFFD "b");
	/* The worst case: every byte replaced, three bytes each. */
	{
		char	 in[300];
		char	 want[900];
		int	 i;

		memset(in, 0xFF, sizeof(in));
		for (i = 0; i < 300; i++)
			memcpy(want + 3 * i, FFFD, 3);
		check_clean(in, sizeof(in), 0, want, sizeof(want));
	}
	/* Sequence lengths. */
	CHECK_INT(engine_utf8_seq((const unsigned char *)"a", 1), 1);
	CHECK_INT(engine_utf8_seq((const unsigned char *)"\xC3\xA9", 2), 2);
	CHECK_INT(engine_utf8_seq((const unsigned char *)"\xC3\xA9", 1), 0);
	CHECK_INT(engine_utf8_seq((const unsigned char *)"\xE4\xB8\xAD", 3), 3);
	CHECK_INT(engine_utf8_seq((const unsigned char *)"\xF0\x9F\x98\x80",
	    4), 4);
	CHECK_INT(engine_utf8_seq((const unsigned char *)"\xFF", 1), 0);
	CHECK_INT(engine_utf8_seq((const unsigned char *)"", 0), 0);
	return tap_done();
}
