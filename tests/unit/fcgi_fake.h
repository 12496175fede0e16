/*
 * fcgi_fake.h — a request without a server, for the fcgi/ unit tests:
 * CGI parameters from a list, a body read in pieces of at most `chunk`
 * bytes (counting the reads), and the whole response kept as a string.
 * Include after fcgi/internal.h (or the .c under test) and tap.h.
 *
 *	struct fake f;
 *	fake_init(&f, &conf, "REQUEST_METHOD", "GET", NULL);
 *	... f.r is the request; f.out the answer; fake_release(&f);
 */
#ifndef FLOWCGI_FCGI_FAKE_H
#define FLOWCGI_FCGI_FAKE_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_PARAMS 16

struct fake {
	const char	*names[FAKE_PARAMS], *values[FAKE_PARAMS];
	int		 n;
	const char	*body;		/* what the client sends */
	size_t		 blen, boff;
	size_t		 chunk;		/* largest read; 0: no limit */
	int		 reads;		/* calls of read */
	char		 out[65536];	/* the response, head and body */
	size_t		 olen;
	int		 flushes;
	struct req_io	 io;
	struct req	 r;
};

static const char *
fake_param(void *ctx, const char *name)
{
	struct fake	*f = ctx;
	int		 i;

	for (i = 0; i < f->n; i++)
		if (strcmp(f->names[i], name) == 0)
			return f->values[i];
	return NULL;
}

static ssize_t
fake_read(void *ctx, char *buf, size_t n)
{
	struct fake *f = ctx;

	f->reads++;
	if (f->chunk > 0 && n > f->chunk)
		n = f->chunk;
	if (n > f->blen - f->boff)
		n = f->blen - f->boff;
	memcpy(buf, f->body + f->boff, n);
	f->boff += n;
	return (ssize_t)n;
}

static int
fake_write(void *ctx, const char *buf, size_t n)
{
	struct fake *f = ctx;

	if (f->olen + n < sizeof(f->out)) {
		memcpy(f->out + f->olen, buf, n);
		f->olen += n;
		f->out[f->olen] = '\0';
	}
	return 0;
}

static int
fake_flush(void *ctx)
{
	((struct fake *)ctx)->flushes++;
	return 0;
}

static int
fake_gone(void *ctx)
{
	(void)ctx;
	return 0;
}

/*
 * A fresh request with conf c and the NULL-ended name, value, ... list of
 * CGI parameters (REQUEST_METHOD sets r.method, QUERY_STRING r.query,
 * CONTENT_TYPE r.content_type; the strings must outlive f).
 */
static __attribute__((unused, sentinel)) void
fake_init(struct fake *f, const struct conf *c, ...)
{
	const char	*name, *v;
	va_list		 ap;

	memset(f, 0, sizeof(*f));
	f->io.param = fake_param;
	f->io.read = fake_read;
	f->io.write = fake_write;
	f->io.flush = fake_flush;
	f->io.gone = fake_gone;
	f->io.ctx = f;
	va_start(ap, c);
	while ((name = va_arg(ap, const char *)) != NULL &&
	    f->n < FAKE_PARAMS) {
		f->names[f->n] = name;
		f->values[f->n++] = va_arg(ap, const char *);
	}
	va_end(ap);
	f->r.a = arena_new();
	f->r.io = &f->io;
	f->r.conf = c;
	f->r.method = (v = fake_param(f, "REQUEST_METHOD")) ? v : "GET";
	f->r.path = "";
	f->r.prefix = "";
	f->r.query = (v = fake_param(f, "QUERY_STRING")) ? v : "";
	f->r.content_type = (v = fake_param(f, "CONTENT_TYPE")) ? v : "";
	f->r.content_length = -1;
}

/* The body the client sends; length -1 leaves Content-Length out. */
static __attribute__((unused)) void
fake_body(struct fake *f, const char *body, size_t len, int64_t clen)
{
	f->body = body;
	f->blen = len;
	f->r.content_length = clen;
}

/* The status of the answer ("Status: 404 ..."), or 0 before one. */
static __attribute__((unused)) int
fake_status(const struct fake *f)
{
	return strncmp(f->out, "Status: ", 8) == 0 ?
	    (int)strtol(f->out + 8, NULL, 10) : 0;
}

/* The body of the answer: after the blank line of the head. */
static __attribute__((unused)) const char *
fake_answer(const struct fake *f)
{
	const char *p = strstr(f->out, "\r\n\r\n");

	return p != NULL ? p + 4 : "";
}

static __attribute__((unused)) void
fake_release(struct fake *f)
{
	arena_free(f->r.a);
	f->r.a = NULL;
}

#endif
