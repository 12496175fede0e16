/*
 * t_conf_dbuf.c — conf/dbuf.c: bytes in order and NUL-terminated, a
 * maximum that cuts and sticks, no wrap for lengths near SIZE_MAX, formats
 * longer than the stack buffer, and take / reset / free leaving a usable
 * buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf/dbuf.h"
#include "tests/unit/tap.h"

static void
test_add(void)
{
	struct dbuf	 b = { 0 };
	char		*s;
	size_t		 len = 99;
	int		 i;

	CHECK_STR(dbuf_str(&b), "");
	CHECK_INT(dbuf_addstr(&b, "abc"), DBUF_OK);
	CHECK_INT(dbuf_add(&b, "de\0f", 4), DBUF_OK);
	CHECK_INT(dbuf_addc(&b, 'g'), DBUF_OK);
	CHECK_INT((long long)b.len, 8);
	CHECK(memcmp(b.p, "abcde\0fg", 9) == 0);	/* NUL after the bytes */
	CHECK_INT(dbuf_add(&b, NULL, 0), DBUF_OK);	/* nothing: no change */
	CHECK_INT((long long)b.len, 8);
	for (i = 0; i < 1000; i++)		/* past several doublings */
		dbuf_addstr(&b, "0123456789");
	CHECK_INT((long long)b.len, 10008);
	CHECK(b.cap > b.len && b.p[b.len] == '\0');
	CHECK(memcmp(b.p + 9998, "0123456789", 10) == 0);
	s = dbuf_take(&b, &len);
	CHECK(s != NULL && len == 10008 && s[len] == '\0');
	free(s);
	CHECK(b.p == NULL && b.len == 0 && b.err == DBUF_OK);
	s = dbuf_take(&b, &len);	/* empty: "", not NULL */
	CHECK(s != NULL && *s == '\0' && len == 0);
	free(s);
}

static void
test_max(void)
{
	struct dbuf	 b;
	char		 big[128];
	char		*s;
	size_t		 len;

	memset(big, 'x', sizeof(big));
	dbuf_init(&b, 10);
	CHECK_INT(dbuf_addstr(&b, "12345678"), DBUF_OK);
	CHECK_INT(dbuf_addstr(&b, "abcd"), DBUF_ETOOBIG);	/* cut */
	CHECK_INT((long long)b.len, 10);
	CHECK_STR(dbuf_str(&b), "12345678ab");
	CHECK(b.cap <= 11);			/* never past what max needs */
	CHECK_INT(dbuf_addstr(&b, "z"), DBUF_ETOOBIG);	/* sticky */
	CHECK_INT((long long)b.len, 10);
	dbuf_reset(&b);				/* empties, keeps the limit */
	CHECK(b.err == DBUF_OK && b.len == 0 && b.max == 10);
	CHECK_STR(dbuf_str(&b), "");
	CHECK_INT(dbuf_addstr(&b, "0123456789"), DBUF_OK);	/* exactly max */
	CHECK_INT(dbuf_addc(&b, '!'), DBUF_ETOOBIG);
	/* a length near SIZE_MAX does not wrap: what fits, then the error */
	dbuf_free(&b);
	CHECK(b.max == 10 && b.p == NULL);
	CHECK_INT(dbuf_add(&b, big, SIZE_MAX), DBUF_ETOOBIG);
	CHECK_INT((long long)b.len, 10);
	CHECK(b.p[10] == '\0');
	s = dbuf_take(&b, &len);	/* the cut bytes are still given */
	CHECK(s != NULL && len == 10 && strcmp(s, "xxxxxxxxxx") == 0);
	free(s);
	CHECK(b.err == DBUF_OK && b.max == 10);
	/* after a failed allocation: nothing more, and take gives NULL */
	dbuf_init(&b, 0);
	dbuf_addstr(&b, "kept?");
	b.err = DBUF_ENOMEM;
	CHECK_INT(dbuf_addstr(&b, "more"), DBUF_ENOMEM);
	CHECK_INT((long long)b.len, 5);
	CHECK(dbuf_take(&b, &len) == NULL && len == 0);
	CHECK(b.err == DBUF_OK && b.p == NULL);
}

static void
test_addf(void)
{
	struct dbuf	 b = { 0 };
	char		 want[1001];

	CHECK_INT(dbuf_addf(&b, "%s=%d;", "n", 42), DBUF_OK);
	memset(want, 'y', 1000);
	want[1000] = '\0';
	CHECK_INT(dbuf_addf(&b, "%s", want), DBUF_OK);	/* > the stack buffer */
	CHECK_INT((long long)b.len, 1005);
	CHECK(strncmp(b.p, "n=42;yyy", 8) == 0 && b.p[1005] == '\0');
	dbuf_free(&b);
	dbuf_init(&b, 6);
	CHECK_INT(dbuf_addf(&b, "%d-%d", 1234, 5678), DBUF_ETOOBIG);
	CHECK_STR(dbuf_str(&b), "1234-5");
	dbuf_free(&b);
	b.err = DBUF_ENOMEM;	/* sticky: nothing is added after it */
	CHECK_INT(dbuf_addf(&b, "x"), DBUF_ENOMEM);
	CHECK(b.p == NULL && b.len == 0);
}

int
main(void)
{
	test_add();
	test_max();
	test_addf();
	return tap_done();
}
