/*
 * t_storage_store.c — storage: raw records, JSON records, cursors, the
 * schema version and its refusal of newer data, map growth (many
 * transactions and one big one), the max_map_size ceiling, aborts,
 * concurrent writers (threads, and processes sharing one directory), and
 * group commit: batches, a failing batch-mate, growth and the ceiling in a
 * batch, writes that must not nest, batch_max 1; blobs in chunks
 * (storage_blobs.h).
 *
 * t_storage_pg.c includes this file and runs the cases that are not about
 * LMDB's map against PostgreSQL: pg_url is then its database, which
 * new_dir empties.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf/conf.h"
#include "storage/storage.h"
#include "tests/unit/tap.h"

#define MIB (1LL << 20)

static char topdir[256];

/* The PostgreSQL database of t_storage_pg, NULL for LMDB. */
static const char *pg_url;

#ifdef T_STORAGE_PG
static void	pg_reset(void);
#endif

/* A fresh, empty directory under topdir (static buffer per call slot). */
static const char *
new_dir(const char *name)
{
	static char	path[8][512];
	static int	n;
	char		*p;

	n = (n + 1) % 8;
	p = path[n];
	snprintf(p, sizeof(path[n]), "%s/%s", topdir, name);
	if (mkdir(p, 0700) != 0 && errno != EEXIST)
		perror(p);
#ifdef T_STORAGE_PG
	pg_reset();	/* a fresh directory is an empty database */
#endif
	return p;
}

/* Opens dir with the default batch (storage.batch_max) or batch_max. */
static int
open_store_batch(const char *dir, int64_t map, int64_t max, int batch_max,
    struct store **out)
{
	struct store_opts o = { map, max, 0, 0, batch_max, NULL, NULL, 0, 0 };

	if (pg_url != NULL) {
		o.backend = "postgres";
		o.postgres_url = pg_url;
		o.pool_size = 8;
		o.wait_ms = 5000;
	}
	return store_open(dir, &o, out);
}

static int
open_store(const char *dir, int64_t map, int64_t max, struct store **out)
{
	return open_store_batch(dir, map, max, 64, out);
}

/* ====== Small write functions ====== */

struct kv_arg {
	enum store_db	 db;
	const char	*key;
	const char	*val;
	unsigned	 flags;
};

static int
put_fn(struct store_txn *t, void *arg)
{
	struct kv_arg *a = arg;

	return store_put(t, a->db, a->key, strlen(a->key), a->val,
	    strlen(a->val), a->flags);
}

static int
del_fn(struct store_txn *t, void *arg)
{
	struct kv_arg *a = arg;

	return store_del(t, a->db, a->key, strlen(a->key));
}

static int
put1(struct store *s, enum store_db db, const char *k, const char *v,
    unsigned flags)
{
	struct kv_arg a = { db, k, v, flags };

	return store_write(s, put_fn, &a);
}

/* Reads key into buf (NUL-terminated). Returns the store code. */
static int
get1(struct store *s, enum store_db db, const char *k, char *buf,
    size_t bufsz)
{
	struct store_txn	*t = NULL;
	const void		*v;
	size_t			 vlen;
	int			 rc;

	if ((rc = store_read_begin(s, &t)) != 0)
		return rc;
	rc = store_get(t, db, k, strlen(k), &v, &vlen);
	if (rc == 0) {
		if (vlen >= bufsz)
			vlen = bufsz - 1;
		memcpy(buf, v, vlen);
		buf[vlen] = '\0';
	}
	store_read_end(t);
	return rc;
}

#include "tests/unit/storage_blobs.h"

/* ====== Records ====== */

static void
test_records(void)
{
	struct store		*s = NULL;
	struct kv_arg		 a = { STORE_DB_APPS, "a", NULL, 0 };
	char			 buf[256];

	CHECK_INT(open_store(new_dir("records"), MIB, 64 * MIB, &s), 0);
	if (s == NULL)
		return;
	CHECK(store_map_size(s) >= (pg_url != NULL ? 0 : MIB));
	CHECK_INT(get1(s, STORE_DB_APPS, "a", buf, sizeof(buf)),
	    STORE_ENOTFOUND);
	CHECK_INT(put1(s, STORE_DB_APPS, "a", "one", 0), 0);
	CHECK_INT(get1(s, STORE_DB_APPS, "a", buf, sizeof(buf)), 0);
	CHECK_STR(buf, "one");
	/* the same key in another database is another record */
	CHECK_INT(get1(s, STORE_DB_RUNS, "a", buf, sizeof(buf)),
	    STORE_ENOTFOUND);
	CHECK_INT(put1(s, STORE_DB_APPS, "a", "two", STORE_NOOVERWRITE),
	    STORE_EEXIST);
	CHECK_INT(get1(s, STORE_DB_APPS, "a", buf, sizeof(buf)), 0);
	CHECK_STR(buf, "one");
	CHECK_INT(put1(s, STORE_DB_APPS, "a", "two", 0), 0);
	CHECK_INT(get1(s, STORE_DB_APPS, "a", buf, sizeof(buf)), 0);
	CHECK_STR(buf, "two");
	CHECK_INT(store_write(s, del_fn, &a), 0);
	CHECK_INT(get1(s, STORE_DB_APPS, "a", buf, sizeof(buf)),
	    STORE_ENOTFOUND);
	CHECK_INT(store_write(s, del_fn, &a), STORE_ENOTFOUND);
	/* every named database opens and takes records */
	{
		int i, bad = 0;

		for (i = 0; i < STORE_DB__COUNT; i++)
			if (put1(s, (enum store_db)i, "k", "v", 0) != 0 ||
			    get1(s, (enum store_db)i, "k", buf,
			    sizeof(buf)) != 0)
				bad++;
		CHECK_INT(bad, 0);
	}

	store_close(s);
}

struct json_arg {
	const char	*key;
	json_t		*val;
	unsigned	 flags;
};

static int
json_put_fn(struct store_txn *t, void *arg)
{
	struct json_arg *a = arg;

	return store_put_json(t, STORE_DB_APPS, a->key, a->val, a->flags);
}

static void
test_json(void)
{
	struct store		*s = NULL;
	struct store_txn	*t = NULL;
	struct json_arg		 a;
	json_t			*in, *out = NULL;

	CHECK_INT(open_store(new_dir("json"), MIB, 64 * MIB, &s), 0);
	if (s == NULL)
		return;
	in = json_pack("{s:s,s:i,s:[i,i],s:n}", "name", "ü app \"q\"", "n", 7,
	    "l", 1, 2, "z");
	a.key = "j";
	a.val = in;
	a.flags = 0;
	CHECK_INT(store_write(s, json_put_fn, &a), 0);
	a.flags = STORE_NOOVERWRITE;
	CHECK_INT(store_write(s, json_put_fn, &a), STORE_EEXIST);
	CHECK_INT(store_read_begin(s, &t), 0);
	CHECK_INT(store_get_json(t, STORE_DB_APPS, "j", &out), 0);
	CHECK(out != NULL && json_equal(in, out));
	json_decref(out);
	out = NULL;
	CHECK_INT(store_get_json(t, STORE_DB_APPS, "nope", &out),
	    STORE_ENOTFOUND);
	CHECK(out == NULL);
	store_read_end(t);
	/* bytes that are not JSON are reported, not crashed on */
	CHECK_INT(put1(s, STORE_DB_APPS, "bad", "{\"x\":", 0), 0);
	CHECK_INT(store_read_begin(s, &t), 0);
	CHECK_INT(store_get_json(t, STORE_DB_APPS, "bad", &out),
	    STORE_EINVAL);
	store_read_end(t);
	json_decref(in);
	store_close(s);
}

/* ====== Cursors ====== */

static int
fill_fn(struct store_txn *t, void *arg)
{
	char	k[16], v[16];
	int	i, rc;

	(void)arg;
	/* inserted out of order: the cursor must still walk in key order */
	for (i = 19; i >= 0; i--) {
		snprintf(k, sizeof(k), "k%02d", (i * 7) % 20);
		snprintf(v, sizeof(v), "v%02d", (i * 7) % 20);
		if ((rc = store_put(t, STORE_DB_RUNS, k, 3, v, 3, 0)) != 0)
			return rc;
	}
	return 0;
}

static int
kv_is(const struct store_kv *kv, const char *k)
{
	return kv->klen == strlen(k) && memcmp(kv->k, k, kv->klen) == 0 &&
	    kv->vlen == strlen(k) && ((const char *)kv->v)[0] == 'v' &&
	    memcmp((const char *)kv->v + 1, k + 1, kv->klen - 1) == 0;
}

static void
test_cursors(void)
{
	struct store		*s = NULL;
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	char			 want[16];
	int			 rc, n, bad;

	CHECK_INT(open_store(new_dir("cursors"), MIB, 64 * MIB, &s), 0);
	if (s == NULL)
		return;
	/* an empty database */
	CHECK_INT(store_read_begin(s, &t), 0);
	CHECK_INT(store_cursor_open(t, STORE_DB_RUNS, &c), 0);
	CHECK_INT(store_cursor_first(c, &kv), STORE_ENOTFOUND);
	CHECK_INT(store_cursor_last(c, &kv), STORE_ENOTFOUND);
	CHECK_INT(store_cursor_seek(c, "a", 1, &kv), STORE_ENOTFOUND);
	store_cursor_close(c);
	store_read_end(t);

	CHECK_INT(store_write(s, fill_fn, NULL), 0);
	CHECK_INT(put1(s, STORE_DB_NODE_RUNS, "other", "x", 0), 0);
	CHECK_INT(store_read_begin(s, &t), 0);
	CHECK_INT(store_cursor_open(t, STORE_DB_RUNS, &c), 0);
	/* forwards */
	n = 0;
	bad = 0;
	for (rc = store_cursor_first(c, &kv); rc == 0;
	     rc = store_cursor_next(c, &kv)) {
		snprintf(want, sizeof(want), "k%02d", n);
		if (!kv_is(&kv, want))
			bad++;
		n++;
	}
	CHECK_INT(rc, STORE_ENOTFOUND);
	CHECK_INT(n, 20);
	CHECK_INT(bad, 0);
	/* backwards */
	n = 0;
	bad = 0;
	for (rc = store_cursor_last(c, &kv); rc == 0;
	     rc = store_cursor_prev(c, &kv)) {
		snprintf(want, sizeof(want), "k%02d", 19 - n);
		if (!kv_is(&kv, want))
			bad++;
		n++;
	}
	CHECK_INT(rc, STORE_ENOTFOUND);
	CHECK_INT(n, 20);
	CHECK_INT(bad, 0);
	/* seek: exact, between keys, before all, after all */
	CHECK_INT(store_cursor_seek(c, "k05", 3, &kv), 0);
	CHECK(kv_is(&kv, "k05"));
	CHECK_INT(store_cursor_next(c, &kv), 0);
	CHECK(kv_is(&kv, "k06"));
	CHECK_INT(store_cursor_seek(c, "k055", 4, &kv), 0);
	CHECK(kv_is(&kv, "k06"));
	CHECK_INT(store_cursor_prev(c, &kv), 0);
	CHECK(kv_is(&kv, "k05"));
	CHECK_INT(store_cursor_seek(c, "a", 1, &kv), 0);
	CHECK(kv_is(&kv, "k00"));
	CHECK_INT(store_cursor_prev(c, &kv), STORE_ENOTFOUND);
	CHECK_INT(store_cursor_seek(c, "k19\xff", 4, &kv), STORE_ENOTFOUND);
	CHECK_INT(store_cursor_seek(c, "k19", 3, &kv), 0);
	CHECK_INT(store_cursor_next(c, &kv), STORE_ENOTFOUND);
	store_cursor_close(c);
	/* a cursor sees its own database only */
	CHECK_INT(store_cursor_open(t, STORE_DB_NODE_RUNS, &c), 0);
	CHECK_INT(store_cursor_first(c, &kv), 0);
	CHECK(kv.klen == 5 && memcmp(kv.k, "other", 5) == 0);
	CHECK_INT(store_cursor_next(c, &kv), STORE_ENOTFOUND);
	store_cursor_close(c);
	store_read_end(t);
	/* a snapshot does not see later writes */
	CHECK_INT(store_read_begin(s, &t), 0);
	CHECK_INT(put1(s, STORE_DB_RUNS, "k99", "v99", 0), 0);
	CHECK_INT(store_cursor_open(t, STORE_DB_RUNS, &c), 0);
	CHECK_INT(store_cursor_last(c, &kv), 0);
	CHECK(kv_is(&kv, "k19"));
	store_cursor_close(c);
	store_read_end(t);
	CHECK_INT(store_read_begin(s, &t), 0);
	CHECK_INT(store_cursor_open(t, STORE_DB_RUNS, &c), 0);
	CHECK_INT(store_cursor_last(c, &kv), 0);
	CHECK(kv_is(&kv, "k99"));
	store_cursor_close(c);
	store_read_end(t);
	store_close(s);
}

/* ====== Schema version ====== */

static void
test_schema(void)
{
	struct store	*s = NULL;
	struct kv_arg	 a = { STORE_DB_META, "schema_version", NULL, 0 };
	const char	*dir = new_dir("schema");
	char		 buf[64], want[16];

	snprintf(want, sizeof(want), "%d", STORE_SCHEMA_VERSION);
	CHECK_INT(open_store(dir, MIB, 64 * MIB, &s), 0);
	if (s == NULL)
		return;
	CHECK_INT(get1(s, STORE_DB_META, "schema_version", buf, sizeof(buf)),
	    0);
	CHECK_STR(buf, want);
	CHECK_INT(put1(s, STORE_DB_APPS, "keep", "me", 0), 0);
	/* version 0 (no version written): the migrations run, data stays */
	CHECK_INT(store_write(s, del_fn, &a), 0);
	store_close(s);
	s = NULL;
	CHECK_INT(open_store(dir, MIB, 64 * MIB, &s), 0);
	if (s == NULL)
		return;
	CHECK_INT(get1(s, STORE_DB_META, "schema_version", buf, sizeof(buf)),
	    0);
	CHECK_STR(buf, want);
	CHECK_INT(get1(s, STORE_DB_APPS, "keep", buf, sizeof(buf)), 0);
	CHECK_STR(buf, "me");
	/* written by a newer flowcgi: refused, and left as it was */
	snprintf(want, sizeof(want), "%d", STORE_SCHEMA_VERSION + 1);
	CHECK_INT(put1(s, STORE_DB_META, "schema_version", want, 0), 0);
	store_close(s);
	s = NULL;
	CHECK_INT(open_store(dir, MIB, 64 * MIB, &s), STORE_EVERSION);
	CHECK(s == NULL);
	CHECK(strstr(store_strerror(STORE_EVERSION), "newer") != NULL);
	CHECK_INT(open_store(dir, MIB, 64 * MIB, &s), STORE_EVERSION);
	CHECK(s == NULL);
}

/* ====== Map growth ====== */

struct bulk_arg {
	int	 first, count;	/* keys "b<first>".."b<first+count-1>" */
	size_t	 vsize;
	int	 calls;		/* how many times fn ran (retries) */
	int	 fail_after;	/* >0: return -1 after this many puts */
};

static void
bulk_value(char *buf, size_t n, int i)
{
	size_t j;

	for (j = 0; j < n; j++)
		buf[j] = (char)('a' + (i + (int)j) % 26);
}

static int
bulk_fn(struct store_txn *t, void *arg)
{
	struct bulk_arg	*b = arg;
	char		 k[32], *v;
	int		 i, rc = 0;

	b->calls++;
	if ((v = malloc(b->vsize)) == NULL)
		return STORE_ENOMEM;
	for (i = b->first; i < b->first + b->count; i++) {
		if (b->fail_after > 0 && i - b->first == b->fail_after) {
			rc = -1;
			break;
		}
		snprintf(k, sizeof(k), "b%08d", i);
		bulk_value(v, b->vsize, i);
		if ((rc = store_put(t, STORE_DB_BLOBS, k, strlen(k), v,
		    b->vsize, 0)) != 0)
			break;
	}
	free(v);
	return rc;
}

/* Counts keys b<first>..b<first+count-1> present with the right value. */
static int
bulk_count(struct store *s, int first, int count, size_t vsize)
{
	struct store_txn	*t = NULL;
	const void		*v;
	size_t			 vlen;
	char			 k[32], *want;
	int			 i, n = 0;

	if ((want = malloc(vsize)) == NULL)
		return -1;
	if (store_read_begin(s, &t) != 0) {
		free(want);
		return -1;
	}
	for (i = first; i < first + count; i++) {
		snprintf(k, sizeof(k), "b%08d", i);
		bulk_value(want, vsize, i);
		if (store_get(t, STORE_DB_BLOBS, k, strlen(k), &v, &vlen) ==
		    0 && vlen == vsize && memcmp(v, want, vsize) == 0)
			n++;
	}
	store_read_end(t);
	free(want);
	return n;
}

static void
test_growth(void)
{
	struct store	*s = NULL;
	struct bulk_arg	 b;
	const char	*dir = new_dir("growth");
	int64_t		 before, after;
	int		 i, bad = 0;

	CHECK_INT(open_store(dir, MIB, 512 * MIB, &s), 0);
	if (s == NULL)
		return;
	before = store_map_size(s);
	CHECK_INT(before, MIB);
	/* 8 MiB in 128 transactions of 64 KiB */
	for (i = 0; i < 128; i++) {
		memset(&b, 0, sizeof(b));
		b.first = i * 16;
		b.count = 16;
		b.vsize = 4096;
		if (store_write(s, bulk_fn, &b) != 0)
			bad++;
	}
	CHECK_INT(bad, 0);
	CHECK_INT(bulk_count(s, 0, 128 * 16, 4096), 128 * 16);
	after = store_map_size(s);
	CHECK(after >= 8 * MIB);
	printf("# map grew from %lld to %lld bytes\n", (long long)before,
	    (long long)after);
	/* one transaction of 24 MiB: retried after growth until it fits */
	memset(&b, 0, sizeof(b));
	b.first = 100000;
	b.count = 24 * 16;
	b.vsize = 64 * 1024;
	CHECK_INT(store_write(s, bulk_fn, &b), 0);
	CHECK(b.calls > 1);
	CHECK_INT(bulk_count(s, 100000, 24 * 16, 64 * 1024), 24 * 16);
	CHECK(store_map_size(s) >= 24 * MIB);
	CHECK(store_map_size(s) <= 512 * MIB);
	CHECK_INT(bulk_count(s, 0, 128 * 16, 4096), 128 * 16);
	store_close(s);
	s = NULL;
	/* reopened with the small initial size, the grown map is kept */
	CHECK_INT(open_store(dir, MIB, 512 * MIB, &s), 0);
	if (s == NULL)
		return;
	CHECK(store_map_size(s) >= 24 * MIB);
	CHECK_INT(bulk_count(s, 100000, 24 * 16, 64 * 1024), 24 * 16);
	CHECK_INT(bulk_count(s, 0, 128 * 16, 4096), 128 * 16);
	store_close(s);
}

static void
test_full(void)
{
	struct store	*s = NULL;
	struct bulk_arg	 b;
	const char	*dir = new_dir("full");

	CHECK_INT(open_store(dir, MIB, 2 * MIB, &s), 0);
	if (s == NULL)
		return;
	memset(&b, 0, sizeof(b));
	b.first = 0;
	b.count = 64;
	b.vsize = 4096;
	CHECK_INT(store_write(s, bulk_fn, &b), 0);
	/* 4 MiB in one transaction cannot fit under a 2 MiB ceiling */
	memset(&b, 0, sizeof(b));
	b.first = 1000;
	b.count = 64;
	b.vsize = 64 * 1024;
	CHECK_INT(store_write(s, bulk_fn, &b), STORE_EFULL);
	CHECK(b.calls >= 1);
	CHECK_INT(bulk_count(s, 1000, 64, 64 * 1024), 0);
	CHECK_INT(bulk_count(s, 0, 64, 4096), 64);
	CHECK(store_map_size(s) <= 2 * MIB);
	CHECK(strstr(store_strerror(STORE_EFULL), "max_map_size") != NULL);
	/* still usable for what fits */
	memset(&b, 0, sizeof(b));
	b.first = 5000;
	b.count = 8;
	b.vsize = 1024;
	CHECK_INT(store_write(s, bulk_fn, &b), 0);
	CHECK_INT(bulk_count(s, 5000, 8, 1024), 8);
	/* filling it up in small steps stops with EFULL too, and every
	 * transaction that reported success is there */
	{
		int i, rc = 0, done = 0;

		for (i = 0; i < 1000; i++) {
			memset(&b, 0, sizeof(b));
			b.first = 10000 + i * 4;
			b.count = 4;
			b.vsize = 2048;
			if ((rc = store_write(s, bulk_fn, &b)) != 0)
				break;
			done++;
		}
		CHECK_INT(rc, STORE_EFULL);
		CHECK_INT(bulk_count(s, 10000, done * 4, 2048), done * 4);
		CHECK_INT(bulk_count(s, 10000 + done * 4, 4, 2048), 0);
	}
	store_close(s);
}

static void
test_abort(void)
{
	struct store	*s = NULL;
	struct bulk_arg	 b;
	char		 buf[32];

	CHECK_INT(open_store(new_dir("abort"), MIB, 64 * MIB, &s), 0);
	if (s == NULL)
		return;
	CHECK_INT(put1(s, STORE_DB_BLOBS, "b00000003", "old", 0), 0);
	memset(&b, 0, sizeof(b));
	b.count = 10;
	b.vsize = 100;
	b.fail_after = 7;
	CHECK_INT(store_write(s, bulk_fn, &b), -1);
	CHECK_INT(b.calls, 1);
	CHECK_INT(bulk_count(s, 0, 10, 100), 0);
	CHECK_INT(get1(s, STORE_DB_BLOBS, "b00000003", buf, sizeof(buf)), 0);
	CHECK_STR(buf, "old");
	/* an error from the caller's own range travels back unchanged */
	b.calls = 0;
	b.fail_after = 1;
	CHECK_INT(store_write(s, bulk_fn, &b), -1);
	/* and one that fails after growth was needed aborts everything */
	memset(&b, 0, sizeof(b));
	b.count = 64;
	b.vsize = 64 * 1024;
	b.fail_after = 60;
	CHECK_INT(store_write(s, bulk_fn, &b), -1);
	CHECK(pg_url != NULL ? b.calls == 1 : b.calls >= 2);	/* growth */
	CHECK_INT(bulk_count(s, 0, 64, 64 * 1024), 0);
	store_close(s);
}

/* ====== A write that needs a key ====== */

struct need_arg {
	const char	*app;		/* the key needed in apps */
	int		 get;		/* a get after the check */
	int		 need_rc, get_rc;
	int		 calls;
};

/* A run's final write, in small: needs its app, then puts its records. */
static int
need_fn(struct store_txn *t, void *arg)
{
	struct need_arg	*a = arg;
	const void	*v;
	size_t		 n;
	int		 rc;

	a->calls++;
	a->get_rc = 0;
	a->need_rc = store_need(t, STORE_DB_APPS, a->app, strlen(a->app));
	if (a->need_rc != 0)
		return a->need_rc;
	if (a->get) {
		a->get_rc = store_get(t, STORE_DB_SETTINGS, "nothing", 7, &v,
		    &n);
		if (a->get_rc != STORE_ENOTFOUND)
			return a->get_rc;
	}
	if ((rc = store_put(t, STORE_DB_RUNS, "nr1", 3, "run", 3, 0)) != 0)
		return rc;
	return store_put(t, STORE_DB_NODE_RUNS, "nr1", 3, "nodes", 5, 0);
}

/*
 * store_need: a write whose key is gone stores nothing and answers
 * STORE_ENEEDED (on LMDB at once, on postgres at the commit, or at the
 * first statement that waits for an answer), one whose key is there
 * commits; the store is fine after a refused one.
 */
static void
test_need(void)
{
	struct store	*s = NULL;
	struct need_arg	 a;
	char		 buf[32];

	CHECK_INT(open_store(new_dir("need"), MIB, 64 * MIB, &s), 0);
	if (s == NULL)
		return;
	CHECK(strcmp(store_strerror(STORE_ENEEDED), "unknown storage error")
	    != 0);
	memset(&a, 0, sizeof(a));
	a.app = "gone";
	CHECK_INT(store_write(s, need_fn, &a), STORE_ENEEDED);
	CHECK_INT(a.calls, 1);
	/* LMDB says so at once; postgres at the commit */
	CHECK_INT(a.need_rc, pg_url != NULL ? 0 : STORE_ENEEDED);
	CHECK_INT(get1(s, STORE_DB_RUNS, "nr1", buf, sizeof(buf)),
	    STORE_ENOTFOUND);
	CHECK_INT(get1(s, STORE_DB_NODE_RUNS, "nr1", buf, sizeof(buf)),
	    STORE_ENOTFOUND);
	/* a get after the check hears of it on postgres */
	memset(&a, 0, sizeof(a));
	a.app = "gone";
	a.get = 1;
	CHECK_INT(store_write(s, need_fn, &a), STORE_ENEEDED);
	CHECK_INT(pg_url != NULL ? a.get_rc : a.need_rc, STORE_ENEEDED);
	CHECK_INT(get1(s, STORE_DB_RUNS, "nr1", buf, sizeof(buf)),
	    STORE_ENOTFOUND);
	/* there: it commits, with or without the get */
	CHECK_INT(put1(s, STORE_DB_APPS, "here", "{}", 0), 0);
	memset(&a, 0, sizeof(a));
	a.app = "here";
	CHECK_INT(store_write(s, need_fn, &a), 0);
	CHECK_INT(a.need_rc, 0);
	CHECK_INT(get1(s, STORE_DB_RUNS, "nr1", buf, sizeof(buf)), 0);
	CHECK_STR(buf, "run");
	CHECK_INT(get1(s, STORE_DB_NODE_RUNS, "nr1", buf, sizeof(buf)), 0);
	CHECK_STR(buf, "nodes");
	a.get = 1;
	CHECK_INT(store_write(s, need_fn, &a), 0);
	CHECK_INT(a.get_rc, STORE_ENOTFOUND);
	/* the check is no write: the app is as it was */
	CHECK_INT(get1(s, STORE_DB_APPS, "here", buf, sizeof(buf)), 0);
	CHECK_STR(buf, "{}");
	/* in a read transaction it is a get */
	{
		struct store_txn *t = NULL;

		CHECK_INT(store_read_begin(s, &t), 0);
		if (t != NULL) {
			CHECK_INT(store_need(t, STORE_DB_APPS, "here", 4), 0);
			CHECK_INT(store_need(t, STORE_DB_APPS, "gone", 4),
			    STORE_ENEEDED);
			store_read_end(t);
		}
	}
	store_close(s);
}

/* ====== Concurrency: threads ====== */

#define NTHREADS 6
#define PER_THREAD 300

struct thr {
	struct store	*s;
	int		 id;
	int		 errors;
	int		 reads;
	volatile int	*stop;
};

/* Increments counter "n" and writes this thread's record, in one txn. */
static int
incr_fn(struct store_txn *t, void *arg)
{
	const int	*p = arg;
	const void	*v;
	size_t		 vlen;
	char		 k[32], buf[32], big[3000];
	long		 n = 0;
	int		 rc;

	rc = store_get(t, STORE_DB_META, "n", 1, &v, &vlen);
	if (rc == 0 && vlen < sizeof(buf)) {
		memcpy(buf, v, vlen);
		buf[vlen] = '\0';
		n = strtol(buf, NULL, 10);
	} else if (rc != STORE_ENOTFOUND)
		return rc;
	snprintf(buf, sizeof(buf), "%ld", n + 1);
	if ((rc = store_put(t, STORE_DB_META, "n", 1, buf, strlen(buf), 0)) !=
	    0)
		return rc;
	snprintf(k, sizeof(k), "t%d-%d", p[0], p[1]);
	memset(big, 'x', sizeof(big));
	snprintf(big, sizeof(big), "%s", k);
	big[strlen(k)] = '|';	/* key, then filler to force growth */
	return store_put(t, STORE_DB_RUNS, k, strlen(k), big, sizeof(big), 0);
}

static void *
writer_main(void *arg)
{
	struct thr	*th = arg;
	int		 p[2], i, rc;

	p[0] = th->id;
	for (i = 0; i < PER_THREAD; i++) {
		p[1] = i;
		if ((rc = store_write(th->s, incr_fn, p)) != 0) {
			th->errors++;
			printf("# thread %d write %d: %s\n", p[0], i,
			    store_strerror(rc));
		}
	}
	return NULL;
}

#define GROUP_WRITES 100

static void *
group_writer_main(void *arg)
{
	struct thr	*th = arg;
	int		 p[2], i;

	p[0] = th->id;
	for (i = 0; i < GROUP_WRITES; i++) {
		p[1] = i;
		if (store_write(th->s, incr_fn, p) != 0)
			th->errors++;
	}
	return NULL;
}

/* Reads the counter over and over; it must never go backwards. */
static void *
reader_main(void *arg)
{
	struct thr		*th = arg;
	struct store_txn	*t;
	const void		*v;
	size_t			 vlen;
	char			 buf[32];
	long			 last = 0, n;

	while (!*th->stop) {
		if (store_read_begin(th->s, &t) != 0) {
			th->errors++;
			continue;
		}
		if (store_get(t, STORE_DB_META, "n", 1, &v, &vlen) == 0 &&
		    vlen < sizeof(buf)) {
			memcpy(buf, v, vlen);
			buf[vlen] = '\0';
			n = strtol(buf, NULL, 10);
			if (n < last)
				th->errors++;
			last = n;
		}
		th->reads++;
		/* hold the snapshot a moment: growth must wait, not fail */
		if (th->reads % 50 == 0)
			usleep(2000);
		store_read_end(t);
	}
	return NULL;
}

static long
counter(struct store *s)
{
	char buf[32];

	if (get1(s, STORE_DB_META, "n", buf, sizeof(buf)) != 0)
		return -1;
	return strtol(buf, NULL, 10);
}

static int
count_db(struct store *s, enum store_db db)
{
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	int			 n = 0, rc;

	if (store_read_begin(s, &t) != 0)
		return -1;
	if (store_cursor_open(t, db, &c) == 0) {
		for (rc = store_cursor_first(c, &kv); rc == 0;
		     rc = store_cursor_next(c, &kv))
			n++;
		store_cursor_close(c);
	}
	store_read_end(t);
	return n;
}

static void
test_threads(void)
{
	struct store	*s = NULL;
	struct thr	 w[NTHREADS], r[2];
	volatile int	 stop = 0;
	int		 i, errors = 0, reads = 0, missing = 0;
	char		 k[32], buf[64];

	CHECK_INT(open_store(new_dir("threads"), MIB, 256 * MIB, &s), 0);
	if (s == NULL)
		return;
	for (i = 0; i < 2; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].s = s;
		r[i].stop = &stop;
	}
	for (i = 0; i < NTHREADS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].s = s;
		w[i].id = i;
	}
	pthread_t rt[2], wt[NTHREADS];

	for (i = 0; i < 2; i++)
		pthread_create(&rt[i], NULL, reader_main, &r[i]);
	for (i = 0; i < NTHREADS; i++)
		pthread_create(&wt[i], NULL, writer_main, &w[i]);
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(wt[i], NULL);
		errors += w[i].errors;
	}
	stop = 1;
	for (i = 0; i < 2; i++) {
		pthread_join(rt[i], NULL);
		errors += r[i].errors;
		reads += r[i].reads;
	}
	CHECK_INT(errors, 0);
	CHECK(reads > 0);
	CHECK_INT(counter(s), NTHREADS * PER_THREAD);
	CHECK_INT(count_db(s, STORE_DB_RUNS), NTHREADS * PER_THREAD);
	for (i = 0; i < NTHREADS * PER_THREAD; i++) {
		snprintf(k, sizeof(k), "t%d-%d", i / PER_THREAD,
		    i % PER_THREAD);
		if (get1(s, STORE_DB_RUNS, k, buf, sizeof(buf)) != 0 ||
		    strncmp(buf, k, strlen(k)) != 0)
			missing++;
	}
	CHECK_INT(missing, 0);
	/* growth happened under load, but only as much as needed: about
	 * 7 MiB of pages (16 MiB after doubling) must not make every
	 * waiting thread double the map once more */
	printf("# map size after the threads: %lld\n",
	    (long long)store_map_size(s));
	if (pg_url == NULL) {
		CHECK(store_map_size(s) > MIB);
		CHECK(store_map_size(s) <= 32 * MIB);
	}
	store_close(s);
}

/* ====== Group commit ====== */

#define NGROUP 32

/*
 * A gated batch makes batching deterministic: writer 0 leads a batch of its
 * own and, inside its transaction, waits until writers 1..n-1 have queued
 * behind it, one after the other (so in that order); they then share the
 * transactions that follow.
 */
struct gate {
	struct store	*s;
	atomic_int	 entered;
	int		 want;		/* writers to wait for */
	int		 late;		/* they did not all queue in 10 s */
};

struct grp {
	struct store	*s;
	store_write_fn	 fn;
	void		*arg;
	int		 rc;
};

/* Waits up to 10 s until at least n writers wait behind a batch. */
static int
wait_queued(struct store *s, int n)
{
	struct store_stats	st;
	int			i;

	for (i = 0; i < 10000; i++) {
		store_stats(s, &st);
		if (st.waiting >= (uint64_t)n)
			return 0;
		usleep(1000);
	}
	return -1;
}

static int
gate_fn(struct store_txn *t, void *arg)
{
	struct gate *g = arg;

	atomic_store(&g->entered, 1);
	if (wait_queued(g->s, g->want) != 0)
		g->late = 1;
	return store_put(t, STORE_DB_META, "gate", 4, "1", 1, 0);
}

static void *
grp_main(void *arg)
{
	struct grp *w = arg;

	w->rc = store_write(w->s, w->fn, w->arg);
	return NULL;
}

/* Runs w[0] (made the gate) and w[1..n-1] as a gated batch. */
static void
gated_run(struct store *s, struct grp *w, int n)
{
	struct gate	g;
	pthread_t	th[NGROUP];
	int		i, spins;

	memset(&g, 0, sizeof(g));
	g.s = s;
	g.want = n - 1;
	for (i = 0; i < n; i++)
		w[i].s = s;
	w[0].fn = gate_fn;
	w[0].arg = &g;
	pthread_create(&th[0], NULL, grp_main, &w[0]);
	for (spins = 0; !atomic_load(&g.entered) && spins < 10000; spins++)
		usleep(1000);
	for (i = 1; i < n; i++) {
		pthread_create(&th[i], NULL, grp_main, &w[i]);
		/* in order; the gate itself waits for the last one */
		if (i < n - 1 && wait_queued(s, i) != 0)
			g.late = 1;
	}
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	CHECK_INT(g.late, 0);
	CHECK_INT(w[0].rc, 0);
}

/* A counter write (incr_fn) that fails at the end when told to. */
struct step {
	int	p[2];
	int	fail;
	int	calls;
};

static int
step_fn(struct store_txn *t, void *arg)
{
	struct step	*st = arg;
	int		 rc;

	st->calls++;
	if ((rc = incr_fn(t, st->p)) != 0)
		return rc;
	return st->fail ? -42 : 0;
}

/* Writes a value larger than the map and returns 0 whatever happened. */
static int
swallow_fn(struct store_txn *t, void *arg)
{
	size_t	 n = 4 * MIB;
	char	*v;

	(void)arg;
	if ((v = calloc(1, n)) != NULL)
		(void)store_put(t, STORE_DB_BLOBS, "huge", 4, v, n, 0);
	free(v);
	return 0;
}

static int
record_present(struct store *s, int id, int i)
{
	char k[32], buf[64];

	snprintf(k, sizeof(k), "t%d-%d", id, i);
	return get1(s, STORE_DB_RUNS, k, buf, sizeof(buf)) == 0 &&
	    strncmp(buf, k, strlen(k)) == 0;
}

static void
test_group_batch(void)
{
	struct store		*s = NULL;
	struct store_stats	 a, b;
	struct grp		 w[NGROUP];
	struct step		 st[NGROUP];
	struct thr		 th[NGROUP];
	pthread_t		 pt[NGROUP];
	int			 i, bad = 0, missing = 0, errors = 0;

	CHECK_INT(open_store(new_dir("group"), MIB, 256 * MIB, &s), 0);
	if (s == NULL)
		return;
	/* 31 writers queued behind a leader: one transaction for them all */
	memset(w, 0, sizeof(w));
	memset(st, 0, sizeof(st));
	for (i = 1; i < NGROUP; i++) {
		st[i].p[0] = 200;
		st[i].p[1] = i;
		w[i].fn = step_fn;
		w[i].arg = &st[i];
	}
	store_stats(s, &a);
	gated_run(s, w, NGROUP);
	store_stats(s, &b);
	for (i = 1; i < NGROUP; i++)
		if (w[i].rc != 0 || st[i].calls != 1 ||
		    !record_present(s, 200, i))
			bad++;
	CHECK_INT(bad, 0);
	CHECK_INT(b.writes - a.writes, NGROUP);
	CHECK_INT(b.commits - a.commits, 2);
	CHECK_INT(b.retries - a.retries, 0);
	CHECK_INT(b.batch_largest, NGROUP - 1);
	CHECK_INT(b.waiting, 0);
	/* each one saw the counter as the one before it left it */
	CHECK_INT(counter(s), NGROUP - 1);

	/* free-running: 32 threads, 100 writes each */
	for (i = 0; i < NGROUP; i++) {
		memset(&th[i], 0, sizeof(th[i]));
		th[i].s = s;
		th[i].id = 1000 + i;
	}
	store_stats(s, &a);
	for (i = 0; i < NGROUP; i++)
		pthread_create(&pt[i], NULL, group_writer_main, &th[i]);
	for (i = 0; i < NGROUP; i++) {
		pthread_join(pt[i], NULL);
		errors += th[i].errors;
	}
	store_stats(s, &b);
	CHECK_INT(errors, 0);
	CHECK_INT(counter(s), NGROUP - 1 + NGROUP * GROUP_WRITES);
	for (i = 0; i < NGROUP * GROUP_WRITES; i++)
		if (!record_present(s, 1000 + i / GROUP_WRITES,
		    i % GROUP_WRITES))
			missing++;
	CHECK_INT(missing, 0);
	CHECK_INT(b.writes - a.writes, NGROUP * GROUP_WRITES);
	CHECK(b.commits - a.commits <= b.writes - a.writes);
	CHECK_INT(b.syncs, 0);	/* sync off in these tests */
	printf("# %d threads: %llu writes in %llu commits, at most %llu in "
	    "one\n", NGROUP, (unsigned long long)(b.writes - a.writes),
	    (unsigned long long)(b.commits - a.commits),
	    (unsigned long long)b.batch_largest);
	store_close(s);
}

/* ====== Durable before answered (sync on) ====== */

#define NDURABLE	16
#define DURABLE_WRITES	20

struct dur {
	struct store	*s;
	int		 id;
	int		 errors;	/* writes that failed */
	int		 early;		/* answered before their flush */
};

struct dur_arg {
	int		 p[2];
	uint64_t	 txn;
};

static int
dur_fn(struct store_txn *t, void *arg)
{
	struct dur_arg *a = arg;

	a->txn = store_txn_id(t);
	return incr_fn(t, a->p);
}

static void *
dur_main(void *arg)
{
	struct dur		*d = arg;
	struct dur_arg		 a;
	struct store_stats	 st;
	int			 i;

	for (i = 0; i < DURABLE_WRITES; i++) {
		a.p[0] = d->id;
		a.p[1] = i;
		if (store_write(d->s, dur_fn, &a) != 0) {
			d->errors++;
			continue;
		}
		store_stats(d->s, &st);
		if (st.durable < a.txn)
			d->early++;
	}
	return NULL;
}

/*
 * With sync on a commit's meta page is flushed after the lead has passed
 * on: no writer may be answered before the flush that covers its commit,
 * and flushes are shared.
 */
static void
test_group_durable(void)
{
	struct store_opts	 o = { MIB, 64 * MIB, 1, 0, 64, NULL, NULL, 0, 0 };
	struct store		*s = NULL;
	struct store_stats	 a, b;
	struct dur		 d[NDURABLE];
	struct dur_arg		 one = { { 500, 0 }, 0 };
	pthread_t		 pt[NDURABLE];
	int			 i, errors = 0, early = 0;

	CHECK_INT(store_open(new_dir("durable"), &o, &s), 0);
	if (s == NULL)
		return;
	/* alone: its own flush, then the answer */
	store_stats(s, &a);
	CHECK_INT(store_write(s, dur_fn, &one), 0);
	store_stats(s, &b);
	CHECK(one.txn > 0);
	CHECK(b.durable >= one.txn);
	CHECK_INT(b.flushes - a.flushes, 1);

	for (i = 0; i < NDURABLE; i++) {
		memset(&d[i], 0, sizeof(d[i]));
		d[i].s = s;
		d[i].id = 600 + i;
	}
	store_stats(s, &a);
	for (i = 0; i < NDURABLE; i++)
		pthread_create(&pt[i], NULL, dur_main, &d[i]);
	for (i = 0; i < NDURABLE; i++) {
		pthread_join(pt[i], NULL);
		errors += d[i].errors;
		early += d[i].early;
	}
	store_stats(s, &b);
	CHECK_INT(errors, 0);
	CHECK_INT(early, 0);
	CHECK_INT(counter(s), 1 + NDURABLE * DURABLE_WRITES);
	CHECK(b.flushes - a.flushes <= b.commits - a.commits);
	CHECK(b.syncs - a.syncs == b.commits - a.commits);
	printf("# %d threads, sync on: %llu writes, %llu commits, %llu "
	    "flushes of meta pages\n", NDURABLE,
	    (unsigned long long)(b.writes - a.writes),
	    (unsigned long long)(b.commits - a.commits),
	    (unsigned long long)(b.flushes - a.flushes));
	store_close(s);
}

static void
test_group_fail(void)
{
	struct store		*s = NULL;
	struct store_stats	 a, b;
	struct grp		 w[16];
	struct step		 st[16];
	int			 i, bad = 0;

	CHECK_INT(open_store(new_dir("group-fail"), MIB, 64 * MIB, &s), 0);
	if (s == NULL)
		return;
	/* writer 8 of 15 fails after changing things: no trace of it */
	memset(w, 0, sizeof(w));
	memset(st, 0, sizeof(st));
	for (i = 1; i < 16; i++) {
		st[i].p[0] = 300;
		st[i].p[1] = i;
		st[i].fail = i == 8;
		w[i].fn = step_fn;
		w[i].arg = &st[i];
	}
	store_stats(s, &a);
	gated_run(s, w, 16);
	store_stats(s, &b);
	CHECK_INT(w[8].rc, -42);
	CHECK(!record_present(s, 300, 8));
	for (i = 1; i < 16; i++)
		if (i != 8 && (w[i].rc != 0 || !record_present(s, 300, i)))
			bad++;
	CHECK_INT(bad, 0);
	CHECK_INT(counter(s), 14);
	/* the batch ran again without it: the ones before it twice */
	CHECK_INT(st[1].calls, 2);
	CHECK_INT(st[7].calls, 2);
	CHECK_INT(st[8].calls, 1);
	CHECK_INT(st[9].calls, 1);
	CHECK_INT(st[15].calls, 1);
	CHECK_INT(b.commits - a.commits, 2);
	CHECK_INT(b.retries - a.retries, 1);
	store_close(s);
	s = NULL;

	/* a fn that swallows an error (the map is full) and returns 0 gets
	 * STORE_EIO, as alone; the others are not blamed */
	CHECK_INT(open_store_batch(new_dir("group-swallow"), MIB, MIB, 64,
	    &s), 0);
	if (s == NULL)
		return;
	memset(w, 0, sizeof(w));
	memset(st, 0, sizeof(st));
	for (i = 1; i < 8; i++) {
		st[i].p[0] = 400;
		st[i].p[1] = i;
		w[i].fn = i == 4 ? swallow_fn : step_fn;
		w[i].arg = &st[i];
	}
	printf("# a logged MDB_BAD_TXN error is expected here\n");
	gated_run(s, w, 8);
	CHECK_INT(w[4].rc, STORE_EIO);
	bad = 0;
	for (i = 1; i < 8; i++)
		if (i != 4 && (w[i].rc != 0 || !record_present(s, 400, i)))
			bad++;
	CHECK_INT(bad, 0);
	CHECK_INT(counter(s), 6);
	store_close(s);
}

static void
test_group_growth(void)
{
	struct store		*s = NULL;
	struct store_stats	 a, b;
	struct grp		 w[16];
	struct bulk_arg		 ba[16];
	int			 i, bad = 0, rcs = 0, efull = 0, landed = 0;

	/* 15 writes of 256 KiB in one batch, in a map of 1 MiB: it grows,
	 * the batch runs again, and every write lands in one commit */
	CHECK_INT(open_store(new_dir("group-grow"), MIB, 256 * MIB, &s), 0);
	if (s == NULL)
		return;
	memset(w, 0, sizeof(w));
	memset(ba, 0, sizeof(ba));
	for (i = 1; i < 16; i++) {
		ba[i].first = i * 100;
		ba[i].count = 4;
		ba[i].vsize = 64 * 1024;
		w[i].fn = bulk_fn;
		w[i].arg = &ba[i];
	}
	store_stats(s, &a);
	gated_run(s, w, 16);
	store_stats(s, &b);
	for (i = 1; i < 16; i++) {
		if (w[i].rc != 0)
			rcs++;
		if (bulk_count(s, i * 100, 4, 64 * 1024) != 4)
			bad++;
	}
	CHECK_INT(rcs, 0);
	CHECK_INT(bad, 0);
	CHECK_INT(b.commits - a.commits, 2);
	CHECK(b.retries - a.retries >= 1);
	CHECK(ba[1].calls >= 2);
	CHECK(store_map_size(s) >= 4 * MIB);
	store_close(s);
	s = NULL;

	/* under a 2 MiB ceiling 8 writes of 384 KiB cannot all fit: each
	 * then runs alone and gets its own verdict */
	CHECK_INT(open_store(new_dir("group-full"), MIB, 2 * MIB, &s), 0);
	if (s == NULL)
		return;
	memset(w, 0, sizeof(w));
	memset(ba, 0, sizeof(ba));
	for (i = 1; i < 9; i++) {
		ba[i].first = i * 100;
		ba[i].count = 1;
		ba[i].vsize = 384 * 1024;
		w[i].fn = bulk_fn;
		w[i].arg = &ba[i];
	}
	gated_run(s, w, 9);
	bad = 0;
	for (i = 1; i < 9; i++) {
		if (w[i].rc == 0) {
			landed++;
			if (bulk_count(s, i * 100, 1, 384 * 1024) != 1)
				bad++;
		} else if (w[i].rc == STORE_EFULL) {
			efull++;
			if (bulk_count(s, i * 100, 1, 384 * 1024) != 0)
				bad++;
		}
	}
	printf("# under the ceiling: %d landed, %d full\n", landed, efull);
	CHECK(landed >= 1);
	CHECK(efull >= 1);
	CHECK_INT(landed + efull, 8);
	CHECK_INT(bad, 0);
	store_close(s);
}

struct nest_arg {
	struct store	*s;
	int		 rc_write, rc_read;
};

static int
nest_fn(struct store_txn *t, void *arg)
{
	struct nest_arg		*n = arg;
	struct store_txn	*r = NULL;

	(void)t;
	n->rc_write = put1(n->s, STORE_DB_APPS, "nested", "x", 0);
	n->rc_read = store_read_begin(n->s, &r);
	if (n->rc_read == 0)
		store_read_end(r);
	return 0;
}

static void
test_group_limits(void)
{
	struct store		*s = NULL;
	struct store_stats	 a, b;
	struct grp		 w[13];
	struct step		 st[13];
	struct thr		 th[8];
	struct nest_arg		 na;
	pthread_t		 pt[8];
	char			 buf[16];
	int			 i, bad = 0, errors = 0;

	/* batch_max 4: twelve queued writers make three commits */
	CHECK_INT(open_store_batch(new_dir("group-max"), MIB, 64 * MIB, 4,
	    &s), 0);
	if (s == NULL)
		return;
	memset(w, 0, sizeof(w));
	memset(st, 0, sizeof(st));
	for (i = 1; i < 13; i++) {
		st[i].p[0] = 500;
		st[i].p[1] = i;
		w[i].fn = step_fn;
		w[i].arg = &st[i];
	}
	store_stats(s, &a);
	gated_run(s, w, 13);
	store_stats(s, &b);
	for (i = 1; i < 13; i++)
		if (w[i].rc != 0 || !record_present(s, 500, i))
			bad++;
	CHECK_INT(bad, 0);
	CHECK_INT(b.commits - a.commits, 1 + 3);
	CHECK_INT(b.batch_largest, 4);
	/* a write function cannot begin another transaction */
	printf("# two logged errors about nested transactions are expected\n");
	memset(&na, 0, sizeof(na));
	na.s = s;
	CHECK_INT(store_write(s, nest_fn, &na), 0);
	CHECK_INT(na.rc_write, STORE_EBUSY);
	CHECK_INT(na.rc_read, STORE_EBUSY);
	CHECK_INT(get1(s, STORE_DB_APPS, "nested", buf, sizeof(buf)),
	    STORE_ENOTFOUND);
	store_close(s);
	s = NULL;

	/* batch_max 1: one transaction per write, as before group commit */
	CHECK_INT(open_store_batch(new_dir("group-one"), MIB, 64 * MIB, 1,
	    &s), 0);
	if (s == NULL)
		return;
	for (i = 0; i < 8; i++) {
		memset(&th[i], 0, sizeof(th[i]));
		th[i].s = s;
		th[i].id = 600 + i;
	}
	store_stats(s, &a);
	for (i = 0; i < 8; i++)
		pthread_create(&pt[i], NULL, group_writer_main, &th[i]);
	for (i = 0; i < 8; i++) {
		pthread_join(pt[i], NULL);
		errors += th[i].errors;
	}
	store_stats(s, &b);
	CHECK_INT(errors, 0);
	CHECK_INT(counter(s), 8 * GROUP_WRITES);
	CHECK_INT(b.writes - a.writes, 8 * GROUP_WRITES);
	CHECK_INT(b.commits - a.commits, 8 * GROUP_WRITES);
	CHECK_INT(b.batch_largest, 1);
	CHECK_INT(b.waiting, 0);
	store_close(s);
}

/* ====== Concurrency: processes ====== */

#define NPROCS 3
#define PER_PROC 1000

/*
 * Child: opens dir itself and runs PER_PROC counter transactions; child
 * 0 also writes a 64 KiB record in each one so the map must grow while
 * the others write. Exits 0 when every write succeeded.
 */
static int
child_main(const char *dir, int id)
{
	struct store	*s = NULL;
	struct bulk_arg	 b;
	int		 p[2], i, errors = 0;

	if (open_store(dir, MIB, 512 * MIB, &s) != 0)
		return 10;
	p[0] = 100 + id;
	for (i = 0; i < PER_PROC; i++) {
		p[1] = i;
		if (store_write(s, incr_fn, p) != 0)
			errors++;
		if (id == 0) {
			memset(&b, 0, sizeof(b));
			b.first = 200000 + i;
			b.count = 1;
			b.vsize = 64 * 1024;
			if (store_write(s, bulk_fn, &b) != 0)
				errors++;
		}
	}
	store_close(s);
	return errors == 0 ? 0 : 1;
}

static void
test_processes(void)
{
	struct store	*s = NULL;
	const char	*dir = new_dir("procs");
	pid_t		 pid[NPROCS];
	int		 i, st, bad = 0, missing = 0;
	char		 k[32], buf[64];

	/* create it first, then close it: LMDB must not cross a fork */
	CHECK_INT(open_store(dir, MIB, 512 * MIB, &s), 0);
	store_close(s);
	s = NULL;
	fflush(stdout);
	for (i = 0; i < NPROCS; i++) {
		pid[i] = fork();
		if (pid[i] == 0)
			_exit(child_main(dir, i));
	}
	for (i = 0; i < NPROCS; i++) {
		if (pid[i] < 0 || waitpid(pid[i], &st, 0) != pid[i] ||
		    !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			bad++;
			printf("# child %d: status %d\n", i, st);
		}
	}
	CHECK_INT(bad, 0);
	CHECK_INT(open_store(dir, MIB, 512 * MIB, &s), 0);
	if (s == NULL)
		return;
	CHECK_INT(counter(s), NPROCS * PER_PROC);
	for (i = 0; i < NPROCS * PER_PROC; i++) {
		snprintf(k, sizeof(k), "t%d-%d", 100 + i / PER_PROC,
		    i % PER_PROC);
		if (get1(s, STORE_DB_RUNS, k, buf, sizeof(buf)) != 0 ||
		    strncmp(buf, k, strlen(k)) != 0)
			missing++;
	}
	CHECK_INT(missing, 0);
	CHECK_INT(bulk_count(s, 200000, PER_PROC, 64 * 1024), PER_PROC);
	if (pg_url == NULL)
		CHECK(store_map_size(s) >= 24 * MIB);
	store_close(s);
}

/* ====== The map on disk (written in place) ====== */

/* The data file of dir: its length, and whether all of it has blocks. */
static int64_t
data_length(const char *dir, int *whole)
{
	struct stat	st;
	char		path[512];

	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	if (stat(path, &st) != 0)
		return -1;
	*whole = (int64_t)st.st_blocks * 512 >= (int64_t)st.st_size;
	return (int64_t)st.st_size;
}

/* A process that opens with a smaller map than the file never cuts it. */
static int
small_opener(const char *dir)
{
	struct store	*s = NULL;
	int		 p[2] = { 900, 1 };

	if (open_store(dir, MIB, 512 * MIB, &s) != 0)
		return 10;
	if (store_write(s, incr_fn, p) != 0)
		return 11;
	store_close(s);
	return 0;
}

/* A file size limit stands for a full disk: growth fails, nothing dies. */
static int
full_disk(const char *dir)
{
	struct rlimit	 rl = { 6 * MIB, 6 * MIB };
	struct store	*s = NULL;
	struct bulk_arg	 b;
	int		 i, rc = 0;

	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
		return 20;
	if (open_store(dir, MIB, 512 * MIB, &s) != 0)
		return 21;
	for (i = 0; i < 64 && rc == 0; i++) {
		memset(&b, 0, sizeof(b));
		b.first = i * 16;
		b.count = 16;
		b.vsize = 16 * 1024;
		rc = store_write(s, bulk_fn, &b);
	}
	if (rc != STORE_ENOSPC)
		return 22;
	/* what was answered is there, and the store still works */
	if (bulk_count(s, 0, (i - 1) * 16, 16 * 1024) != (i - 1) * 16)
		return 23;
	memset(&b, 0, sizeof(b));
	b.first = 100000;
	b.count = 1;
	b.vsize = 100;
	if (store_write(s, bulk_fn, &b) != 0)
		return 24;
	store_close(s);
	return 0;
}

static int
run_child(int (*fn)(const char *), const char *dir)
{
	pid_t	pid;
	int	st;

	fflush(stdout);
	if ((pid = fork()) == 0)
		_exit(fn(dir));
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	if (!WIFEXITED(st)) {
		printf("# child killed by signal %d\n", WTERMSIG(st));
		return -1;
	}
	return WEXITSTATUS(st);
}

/* ====== Slots ====== */

static int slot_child_n;	/* slots the child asks for */
static int slot_child_keep;	/* the child dies holding what it took */

/* In another process: 0 when it took a slot, 1 when all were held. */
static int
slot_child(const char *dir)
{
	struct store	*s = NULL;
	int64_t		 slot;
	int		 rc;

	if (open_store(dir, MIB, 64 * MIB, &s) != 0)
		return 20;
	rc = store_slot_take(s, "app-1", slot_child_n, &slot);
	if (rc == 0 && slot_child_keep)
		_exit(0);	/* no give, no close: as a crash */
	if (rc == 0)
		store_slot_give(s, slot);
	store_close(s);
	return rc < 0 ? 21 : rc;
}

static void
test_slots(void)
{
	struct store	*s = NULL;
	const char	*dir = new_dir("slots");
	int64_t		 a = -1, b = -1, c = -1, d = -1;
	int		 i, rc;

	CHECK_INT(open_store(dir, MIB, 64 * MIB, &s), 0);
	if (s == NULL)
		return;
	CHECK_INT(store_slot_take(s, "../x", 2, &a), STORE_EINVAL);
	CHECK_INT(store_slot_take(s, "", 2, &a), STORE_EINVAL);
	/* two holders in one process take two different slots */
	CHECK_INT(store_slot_take(s, "app-1", 2, &a), 0);
	CHECK_INT(store_slot_take(s, "app-1", 2, &b), 0);
	CHECK(a != b);
	CHECK_INT(store_slot_take(s, "app-1", 2, &c), 1);
	/* another name has slots of its own */
	CHECK_INT(store_slot_take(s, "app-2", 1, &d), 0);
	/* another process finds them held, then one free */
	slot_child_n = 2;
	slot_child_keep = 0;
	CHECK_INT(run_child(slot_child, dir), 1);
	store_slot_give(s, a);
	CHECK_INT(run_child(slot_child, dir), 0);
	/* a process that dies holding a slot frees it (postgres: once the
	 * server has seen its connection close) */
	slot_child_keep = 1;
	CHECK_INT(run_child(slot_child, dir), 0);
	for (i = 0; i < 100 && (rc = store_slot_take(s, "app-1", 2, &a)) ==
	    1; i++)
		usleep(50000);
	CHECK_INT(rc, 0);
	CHECK_INT(store_slot_take(s, "app-1", 2, &c), 1);
	store_slot_give(s, a);
	store_slot_give(s, b);
	store_slot_give(s, d);
	CHECK_INT(store_slot_take(s, "app-1", 1, &a), 0);
	store_slot_give(s, a);
	store_close(s);
}

static void
test_map_file(void)
{
	struct store	*s = NULL;
	struct bulk_arg	 b;
	const char	*dir = new_dir("mapfile");
	int64_t		 len, len2;
	int		 whole = 0;

	CHECK_INT(open_store(dir, MIB, 512 * MIB, &s), 0);
	if (s == NULL)
		return;
	len = data_length(dir, &whole);
	CHECK(len >= MIB);
	CHECK(whole);	/* reserved, not sparse */
	memset(&b, 0, sizeof(b));
	b.count = 256;
	b.vsize = 16 * 1024;
	CHECK_INT(store_write(s, bulk_fn, &b), 0);	/* 4 MiB: grows */
	len = data_length(dir, &whole);
	CHECK(len >= 4 * MIB);
	CHECK_INT(len, store_map_size(s));
	CHECK(whole);
	/* another process opens it configured for 1 MiB, while this one
	 * keeps its map: the file keeps its length, this map stays usable */
	CHECK_INT(run_child(small_opener, dir), 0);
	len2 = data_length(dir, &whole);
	CHECK_INT(len2, len);
	memset(&b, 0, sizeof(b));
	b.first = 1000;
	b.count = 64;
	b.vsize = 16 * 1024;
	CHECK_INT(store_write(s, bulk_fn, &b), 0);
	CHECK_INT(bulk_count(s, 0, 256, 16 * 1024), 256);
	CHECK_INT(bulk_count(s, 1000, 64, 16 * 1024), 64);
	store_close(s);

	CHECK_INT(run_child(full_disk, new_dir("fulldisk")), 0);
	CHECK(strstr(store_strerror(STORE_ENOSPC), "space") != NULL);
}

#ifndef T_STORAGE_PG
int
main(void)
{
	char cmd[400];

	log_init(CONF_LOG_WARN, NULL);
	snprintf(topdir, sizeof(topdir), "%s/t_storage_store.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(topdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_records();
	test_json();
	test_cursors();
	test_schema();
	test_growth();
	test_full();
	test_abort();
	test_need();
	test_blobs();
	test_threads();
	test_group_batch();
	test_group_durable();
	test_group_fail();
	test_group_growth();
	test_group_limits();
	test_processes();
	test_slots();
	test_map_file();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", topdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", topdir);
	return tap_done();
}
#endif
