/*
 * fuzz_request.c — one whole request through the router and the handlers:
 * the input is CGI parameters, one NAME=VALUE per line, then an empty
 * line, then the body. The admin token is "fuzz", so authenticated routes
 * are reached too. Every answer must carry a status line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fcgi/internal.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fio {
	char		*names[32], *values[32];
	int		 n;
	const char	*body;
	size_t		 blen, off;
	size_t		 written;
	int		 status_seen;
};

static const char *
f_param(void *ctx, const char *name)
{
	struct fio	*f = ctx;
	int		 i;

	for (i = 0; i < f->n; i++)
		if (strcmp(f->names[i], name) == 0)
			return f->values[i];
	return NULL;
}

static ssize_t
f_read(void *ctx, char *buf, size_t n)
{
	struct fio *f = ctx;

	if (n > f->blen - f->off)
		n = f->blen - f->off;
	memcpy(buf, f->body + f->off, n);
	f->off += n;
	return (ssize_t)n;
}

static int
f_write(void *ctx, const char *buf, size_t n)
{
	struct fio *f = ctx;

	if (f->written == 0 && n >= 7 && memcmp(buf, "Status:", 7) == 0)
		f->status_seen = 1;
	f->written += n;
	return 0;
}

static int
f_flush(void *ctx)
{
	(void)ctx;
	return 0;
}

static int
f_gone(void *ctx)
{
	(void)ctx;
	return 0;
}

static char fuzz_dir[64];

/* The data directory holds only LMDB's two files: remove them and it. */
static void
cleanup_dir(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/data.mdb", fuzz_dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/lock.mdb", fuzz_dir);
	unlink(path);
	rmdir(fuzz_dir);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct conf	 c;
	static struct engine	*e;
	static unsigned char	 hash[32];
	struct fio		 f;
	struct req_io		 io = { f_param, f_read, f_write, f_flush, f_gone,
				    &f };
	struct req		 r;
	char			*copy, *p, *nl, *eq, err[ENGINE_ERRMAX];
	char			 dir[] = "/tmp/fuzz_request.XXXXXX";

	if (e == NULL) {
		conf_defaults(&c);
		if (mkdtemp(dir) == NULL)
			abort();
		snprintf(c.data_dir, sizeof(c.data_dir), "%s", dir);
		c.sync = 0;
		c.max_json_body = 65536;
		c.max_body = 65536;
		if (engine_open(&c, err, &e) != 0)
			abort();
		snprintf(fuzz_dir, sizeof(fuzz_dir), "%s", dir);
		atexit(cleanup_dir);
		auth_hash("fuzz", hash);
	}
	if ((copy = malloc(size + 1)) == NULL)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	memset(&f, 0, sizeof(f));
	/* parameters up to the first empty line */
	for (p = copy; f.n < 32 && (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		*nl = '\0';
		if (*p == '\0') {
			p = nl + 1;
			break;
		}
		if ((eq = strchr(p, '=')) == NULL)
			continue;
		*eq = '\0';
		f.names[f.n] = p;
		f.values[f.n++] = eq + 1;
	}
	f.body = p;
	f.blen = size - (size_t)(p - copy);
	memset(&r, 0, sizeof(r));
	r.io = &io;
	r.conf = &c;
	r.eng = e;
	r.admin_token_hash = hash;
	r.prefix = "";
	r.path = "";
	if ((r.a = arena_new()) != NULL) {
		r.method = f_param(&f, "REQUEST_METHOD");
		if (r.method == NULL)
			r.method = "GET";
		r.query = f_param(&f, "QUERY_STRING");
		if (r.query == NULL)
			r.query = "";
		r.content_type = f_param(&f, "CONTENT_TYPE");
		if (r.content_type == NULL)
			r.content_type = "";
		r.content_length = (int64_t)f.blen;
		router_dispatch(&r);
		if (!f.status_seen)
			abort();	/* every request gets an answer */
		arena_free(r.a);
	}
	free(copy);
	return 0;
}
