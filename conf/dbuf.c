/*
 * dbuf.c — the growable byte buffer (dbuf.h). Capacity doubles from 64
 * bytes, never past what max needs, and every size is checked before it is
 * computed, so that no length near SIZE_MAX wraps.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/dbuf.h"

#define DBUF_FIRST	64

void
dbuf_init(struct dbuf *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
}

/* Makes room for need bytes and the NUL; 0, or sets DBUF_ENOMEM. */
static int
grow(struct dbuf *b, size_t need)
{
	size_t	 cap, top;
	char	*p;

	if (need < b->cap)
		return 0;
	/* the NUL makes need + 1: need is at most max, below SIZE_MAX */
	top = b->max != 0 ? b->max + 1 : SIZE_MAX;
	cap = b->cap != 0 ? b->cap : DBUF_FIRST;
	while (cap <= need && cap <= top / 2)
		cap *= 2;
	if (cap <= need)
		cap = need + 1;
	if (cap > top)
		cap = top;
	if ((p = realloc(b->p, cap)) == NULL) {
		b->err = DBUF_ENOMEM;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

int
dbuf_add(struct dbuf *b, const void *data, size_t n)
{
	size_t	keep = n, room;

	if (b->err != DBUF_OK || n == 0)
		return b->err;
	room = b->max != 0 ? b->max - b->len : SIZE_MAX - 1 - b->len;
	if (keep > room)
		keep = room;
	if (keep > 0 && grow(b, b->len + keep) == 0) {
		memcpy(b->p + b->len, data, keep);
		b->len += keep;
		b->p[b->len] = '\0';
	}
	if (b->err == DBUF_OK && keep < n)
		b->err = DBUF_ETOOBIG;
	return b->err;
}

int
dbuf_addstr(struct dbuf *b, const char *s)
{
	return dbuf_add(b, s, strlen(s));
}

int
dbuf_addc(struct dbuf *b, char c)
{
	return dbuf_add(b, &c, 1);
}

int
dbuf_addf(struct dbuf *b, const char *fmt, ...)
{
	va_list	 ap;
	char	 small[256], *big;
	int	 n;

	if (b->err != DBUF_OK)
		return b->err;
	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->err = DBUF_ENOMEM;	/* an encoding error: nothing added */
		return b->err;
	}
	if ((size_t)n < sizeof(small))
		return dbuf_add(b, small, (size_t)n);
	if ((big = malloc((size_t)n + 1)) == NULL) {
		b->err = DBUF_ENOMEM;
		return b->err;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	dbuf_add(b, big, (size_t)n);
	free(big);
	return b->err;
}

const char *
dbuf_str(const struct dbuf *b)
{
	return b->p != NULL ? b->p : "";
}

void
dbuf_reset(struct dbuf *b)
{
	b->len = 0;
	b->err = DBUF_OK;
	if (b->p != NULL)
		b->p[0] = '\0';
}

void
dbuf_free(struct dbuf *b)
{
	free(b->p);
	dbuf_init(b, b->max);
}

char *
dbuf_take(struct dbuf *b, size_t *len)
{
	char	*p = b->p;
	size_t	 n = b->len;

	if (b->err == DBUF_ENOMEM) {
		free(p);
		p = NULL;
		n = 0;
	} else if (p == NULL && (p = calloc(1, 1)) == NULL)
		n = 0;
	dbuf_init(b, b->max);
	if (len != NULL)
		*len = n;
	return p;
}
