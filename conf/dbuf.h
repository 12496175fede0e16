/*
 * dbuf.h — the one growable byte buffer of the tree, in the spirit of
 * curl's dynbuf: a maximum size, checked arithmetic, and a sticky error, so
 * that a caller may add many times and look at the outcome once.
 *
 * The bytes are NUL-terminated once anything was added (the NUL is not
 * counted in len). An add that would pass max keeps what fits and sets
 * DBUF_ETOOBIG (a command's output cut at its limit); a failed allocation
 * sets DBUF_ENOMEM. Either error is sticky: later adds do nothing until
 * dbuf_reset or dbuf_free. A zeroed struct dbuf (= { 0 }) is an empty
 * buffer with no limit but memory; dbuf_init sets a limit.
 */
#ifndef FLOWCGI_DBUF_H
#define FLOWCGI_DBUF_H

#include <stddef.h>

enum dbuf_err {
	DBUF_OK = 0,
	DBUF_ENOMEM,		/* an allocation failed */
	DBUF_ETOOBIG,		/* max reached: the bytes are cut there */
};

struct dbuf {
	char	*p;		/* NULL until the first byte */
	size_t	 len;
	size_t	 cap;		/* allocated, the NUL included */
	size_t	 max;		/* most bytes kept; 0: no limit */
	int	 err;		/* enum dbuf_err, sticky */
};

/* An empty buffer that keeps at most max bytes (0: no limit). */
void	dbuf_init(struct dbuf *b, size_t max);

/*
 * Appends n bytes of data (dbuf_addstr: the string s). Returns b->err:
 * DBUF_OK when all of it was added.
 */
int	dbuf_add(struct dbuf *b, const void *data, size_t n);
int	dbuf_addstr(struct dbuf *b, const char *s);
int	dbuf_addc(struct dbuf *b, char c);
int	dbuf_addf(struct dbuf *b, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* The bytes so far as a string: "" when none (never NULL). */
const char *dbuf_str(const struct dbuf *b);

/* Empties b and clears its error, keeping its memory and its limit. */
void	dbuf_reset(struct dbuf *b);

/* Frees b's memory; b is then empty, with its limit and no error. */
void	dbuf_free(struct dbuf *b);

/*
 * The bytes as a malloc'd NUL-terminated string the caller frees ("" when
 * none); *len (may be NULL) gets their length. b is empty afterwards (its
 * limit kept, its error cleared). NULL after DBUF_ENOMEM, or when the
 * empty string cannot be allocated; bytes cut at DBUF_ETOOBIG are given
 * (the caller looked at b->err before, if it cares).
 */
char	*dbuf_take(struct dbuf *b, size_t *len);

#endif
