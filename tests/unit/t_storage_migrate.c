/*
 * t_storage_migrate.c — store_migrate (flowcgi migrate): an LMDB store
 * with records in every named database, blobs with their reference counts
 * and large values is copied into PostgreSQL, every record compared, then
 * copied back into a new LMDB directory and compared again; the pieces a
 * copy reads stay within their bounds; the digest tells apart databases
 * that differ in one byte; and the refusals: a destination with records
 * (left untouched), the same store twice.
 *
 * The database: FLOWCGI_TEST_PG_URL (which it empties), else a private
 * server that tests/e2e/postgres.sh starts and removes; without
 * PostgreSQL the PostgreSQL cases are one counted skip.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <libpq-fe.h>

#include "conf/conf.h"
#include "storage/migrate.c"
#include "tests/unit/pg_private.h"
#include "tests/unit/tap.h"

#define MIB (1LL << 20)
#define BIG_BLOBS 4		/* values of BIG_LEN bytes, together more */
#define BIG_LEN (6 << 20)	/* than one piece (MIGRATE_BYTES) */
#define RUNS 2500		/* more than two pieces of MIGRATE_KEYS */

static char topdir[256];
static const char *pg_url;

/* Empties the test database. */
static int
pg_reset(void)
{
	PGconn		*c;
	PGresult	*r;
	int		 ok;

	c = PQconnectdb(pg_url);
	PQsetNoticeProcessor(c, notice_quiet, NULL);
	r = PQexec(c, "DROP SCHEMA public CASCADE; CREATE SCHEMA public");
	ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	if (!ok)
		printf("# could not empty the database: %s",
		    PQerrorMessage(c));
	PQclear(r);
	PQfinish(c);
	return ok ? 0 : -1;
}

static int
open_lmdb(const char *name, struct store **out)
{
	struct store_opts	o = { 8 * MIB, 1024 * MIB, 0, 0, 1, "lmdb",
				    NULL, 0, 0 };
	char			dir[512];

	snprintf(dir, sizeof(dir), "%s/%s", topdir, name);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		perror(dir);
	return store_open(dir, &o, out);
}

static int
open_pg(struct store **out)
{
	struct store_opts o = { 0, 0, 0, 0, 0, "postgres", NULL, 2, 5000 };

	o.postgres_url = pg_url;
	return store_open("unused", &o, out);
}

/* ====== Filling the source ====== */

/* Bytes that do not repeat (seeded), so that every big blob differs. */
static void
fill_bytes(unsigned char *p, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (unsigned char)(seed >> 16);
	}
}

struct fill {
	int		 step;	/* which part this write does */
	unsigned char	*big;
	char		 hello[STORE_HASH_HEX];
};

static int
fill_fn(struct store_txn *t, void *arg)
{
	struct fill	*f = arg;
	char		 k[64], v[256], hex[STORE_HASH_HEX];
	int		 i, db, rc = 0;

	switch (f->step) {
	case 0:
		/* one record in every database, named generically */
		for (db = 0; db < STORE_DB__COUNT && rc == 0; db++) {
			snprintf(k, sizeof(k), "probe-%s", store_db_names[db]);
			rc = store_put(t, (enum store_db)db, k, strlen(k),
			    "{\"probe\":true}", 14, 0);
		}
		for (i = 0; i < 50 && rc == 0; i++) {
			snprintf(k, sizeof(k), "app-%03d", i);
			snprintf(v, sizeof(v), "{\"id\":\"%s\",\"name\":\"App "
			    "%d\",\"mode\":\"workflow\"}", k, i);
			rc = store_put(t, STORE_DB_APPS, k, strlen(k), v,
			    strlen(v), 0);
		}
		/* keys with any byte, ordered as bytes on both backends */
		if (rc == 0)
			rc = store_put(t, STORE_DB_CONVERSATIONS, "\x00\x01",
			    2, "zero", 4, 0);
		if (rc == 0)
			rc = store_put(t, STORE_DB_CONVERSATIONS, "\xff\xfe",
			    2, "\x00\x01\x02", 3, 0);
		if (rc == 0)
			rc = store_put(t, STORE_DB_SETTINGS, "empty", 5, "",
			    0, 0);
		/* blobs: one referenced twice, one once */
		if (rc == 0)
			rc = store_blob_ref(t, "hello", 5, f->hello);
		if (rc == 0)
			rc = store_blob_ref(t, "hello", 5, hex);
		if (rc == 0)
			rc = store_blob_ref(t, "world", 5, hex);
		return rc;
	case 1:
		for (i = 0; i < RUNS && rc == 0; i++) {
			snprintf(k, sizeof(k), "run-%06d", i);
			snprintf(v, sizeof(v), "{\"id\":\"%s\",\"status\":"
			    "\"succeeded\",\"elapsed\":%d.5}", k, i);
			rc = store_put(t, STORE_DB_RUNS, k, strlen(k), v,
			    strlen(v), 0);
			if (rc == 0 && i % 10 == 0)
				rc = store_put(t, STORE_DB_RUNS_BY_APP, v + 7,
				    10, k, strlen(k), 0);
		}
		return rc;
	default:
		/* whole, as flowcgi stored blobs before chunks: values
		 * larger than a piece */
		fill_bytes(f->big, BIG_LEN, (uint32_t)f->step);
		store_hash(f->big, BIG_LEN, hex);
		if ((rc = store_put(t, STORE_DB_BLOBS, hex, 64, f->big,
		    BIG_LEN, 0)) != 0)
			return rc;
		return store_put(t, STORE_DB_BLOBREFS, hex, 64, "1", 1, 0);
	}
}

static int
fill(struct store *s, char hello[STORE_HASH_HEX])
{
	struct fill	f;
	int		rc = 0;

	memset(&f, 0, sizeof(f));
	if ((f.big = malloc(BIG_LEN)) == NULL)
		return STORE_ENOMEM;
	for (f.step = 0; f.step < 2 + BIG_BLOBS && rc == 0; f.step++)
		rc = store_write(s, fill_fn, &f);
	memcpy(hello, f.hello, STORE_HASH_HEX);
	free(f.big);
	return rc;
}

/* ====== Reading a whole store ====== */

/*
 * Every record of every database of s, in order, as one byte string
 * (database index, then key and value with their lengths); *n gets the
 * records. Read in one transaction, with none of migrate.c's code, so
 * that a difference in a copy is found whatever migrate.c did.
 */
static int
dump(struct store *s, struct dbuf *out, long *n)
{
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	int			 db, rc = 0;

	*n = 0;
	dbuf_reset(out);
	if ((rc = store_read_begin(s, &t)) != 0)
		return rc;
	for (db = 0; db < STORE_DB__COUNT; db++) {
		dbuf_add(out, &db, sizeof(db));
		if ((rc = store_cursor_open(t, (enum store_db)db, &c)) != 0)
			break;
		for (rc = store_cursor_first(c, &kv); rc == 0;
		     rc = store_cursor_next(c, &kv)) {
			dbuf_add(out, &kv.klen, sizeof(kv.klen));
			dbuf_add(out, kv.k, kv.klen);
			dbuf_add(out, &kv.vlen, sizeof(kv.vlen));
			dbuf_add(out, kv.v, kv.vlen);
			(*n)++;
		}
		store_cursor_close(c);
		if (rc != STORE_ENOTFOUND)
			break;
		rc = 0;
	}
	store_read_end(t);
	return rc != 0 ? rc : out->err != DBUF_OK ? STORE_ENOMEM : 0;
}

/* 1 when a and b hold the same records. */
static int
same(struct store *a, struct store *b)
{
	struct dbuf	da = { 0 }, db = { 0 };
	long		na = 0, nb = 0;
	int		ok;

	ok = dump(a, &da, &na) == 0 && dump(b, &db, &nb) == 0 &&
	    na == nb && da.len == db.len && memcmp(da.p, db.p, da.len) == 0;
	if (!ok)
		printf("# %ld records (%zu bytes) against %ld (%zu)\n", na,
		    da.len, nb, db.len);
	dbuf_free(&da);
	dbuf_free(&db);
	return ok;
}

static long
records(struct store *s)
{
	struct dbuf	d = { 0 };
	long		n = -1;

	if (dump(s, &d, &n) != 0)
		n = -1;
	dbuf_free(&d);
	return n;
}

/* The blob hello's reference count and the first big blob, read back. */
static void
check_blobs(struct store *s, const char *hello)
{
	struct store_txn	*t = NULL;
	char			*data = NULL;
	size_t			 len = 0;
	unsigned char		*big;
	char			 hex[STORE_HASH_HEX];

	if ((big = malloc(BIG_LEN)) == NULL)
		return;
	fill_bytes(big, BIG_LEN, 2);
	store_hash(big, BIG_LEN, hex);
	CHECK_INT(store_read_begin(s, &t), 0);
	CHECK_INT(store_blob_refs(t, hello), 2);
	CHECK_INT(store_blob_load(t, hex, &data, &len), 0);
	CHECK(len == BIG_LEN && data != NULL &&
	    memcmp(data, big, BIG_LEN) == 0);
	store_read_end(t);
	free(data);
	free(big);
}

/* ====== The pieces a copy reads ====== */

struct piece {
	size_t	n;
	size_t	bytes;
	size_t	last;	/* bytes of its last record */
};

static int
piece_add(const struct store_kv *kv, void *arg)
{
	struct piece *p = arg;

	p->n++;
	p->bytes += kv->klen + kv->vlen;
	p->last = kv->klen + kv->vlen;
	return 0;
}

/* Walks db of s: the number of pieces, each checked against the bounds. */
static int
pieces(struct store *s, enum store_db db, long *records_seen, int *bad)
{
	struct mig_walk	w;
	struct piece	p;
	int		n = 0;

	memset(&w, 0, sizeof(w));
	w.s = s;
	w.db = db;
	*records_seen = 0;
	while (!w.done) {
		memset(&p, 0, sizeof(p));
		if (walk_next(&w, piece_add, &p) != 0)
			break;
		if (p.n > MIGRATE_KEYS || (p.bytes - p.last >= MIGRATE_BYTES))
			(*bad)++;
		*records_seen += (long)p.n;
		n += p.n > 0;
	}
	dbuf_free(&w.last);
	return n;
}

static void
test_pieces(struct store *s)
{
	long	n;
	int	bad = 0;

	CHECK_INT(pieces(s, STORE_DB_RUNS, &n, &bad), 3);
	CHECK_INT(n, RUNS + 1);
	/* 4 values of 6 MiB: three pass 16 MiB, then the fourth and the
	 * small ones */
	CHECK_INT(pieces(s, STORE_DB_BLOBS, &n, &bad), 2);
	CHECK_INT(n, BIG_BLOBS + 3);
	CHECK_INT(pieces(s, STORE_DB_IMPORTS, &n, &bad), 1);
	CHECK_INT(bad, 0);
}

/* ====== Writes for the digest and refusal cases ====== */

struct put_arg {
	enum store_db	 db;
	const char	*k;
	size_t		 klen;
	const char	*v;
	size_t		 vlen;
};

static int
put_fn(struct store_txn *t, void *arg)
{
	struct put_arg *a = arg;

	return store_put(t, a->db, a->k, a->klen, a->v, a->vlen, 0);
}

static int
put1(struct store *s, enum store_db db, const char *k, const char *v)
{
	struct put_arg a = { db, k, strlen(k), v, strlen(v) };

	return store_write(s, put_fn, &a);
}

/* Same counts, a byte that differs or moved: the digests differ. */
static void
test_digest(void)
{
	struct store	*a = NULL, *b = NULL;
	struct mig_sum	 sa, sb;

	CHECK_INT(open_lmdb("diff-a", &a), 0);
	CHECK_INT(open_lmdb("diff-b", &b), 0);
	if (a == NULL || b == NULL)
		goto out;
	CHECK_INT(sum_db(a, STORE_DB_RUNS, &sa), 0);
	CHECK_INT(sum_db(b, STORE_DB_RUNS, &sb), 0);
	CHECK(sa.n == 0 && memcmp(sa.digest, sb.digest, 32) == 0);
	CHECK_INT(put1(a, STORE_DB_RUNS, "r1", "{\"n\":1}"), 0);
	CHECK_INT(put1(a, STORE_DB_RUNS, "r2", "{\"n\":2}"), 0);
	CHECK_INT(put1(b, STORE_DB_RUNS, "r1", "{\"n\":1}"), 0);
	CHECK_INT(put1(b, STORE_DB_RUNS, "r2", "{\"n\":3}"), 0);
	CHECK_INT(sum_db(a, STORE_DB_RUNS, &sa), 0);
	CHECK_INT(sum_db(b, STORE_DB_RUNS, &sb), 0);
	CHECK(sa.n == 2 && sb.n == 2);
	CHECK(memcmp(sa.digest, sb.digest, 32) != 0);
	/* a key and a value that trade a byte are not the same records */
	CHECK_INT(put1(a, STORE_DB_APPS, "ab", "c"), 0);
	CHECK_INT(put1(b, STORE_DB_APPS, "a", "bc"), 0);
	CHECK_INT(sum_db(a, STORE_DB_APPS, &sa), 0);
	CHECK_INT(sum_db(b, STORE_DB_APPS, &sb), 0);
	CHECK(memcmp(sa.digest, sb.digest, 32) != 0);
out:
	store_close(a);
	store_close(b);
}

/* ====== LMDB -> PostgreSQL -> LMDB ====== */

/* store_migrate with its report in a file; *text gets the report. */
static int
migrate(struct store *from, struct store *to, char *err, size_t errlen,
    char *text, size_t textlen)
{
	FILE	*f;
	size_t	 n;
	int	 rc;

	if ((f = tmpfile()) == NULL)
		return -1;
	rc = store_migrate(from, to, f, err, errlen);
	rewind(f);
	n = fread(text, 1, textlen - 1, f);
	text[n] = '\0';
	fclose(f);
	if (rc != 0)
		printf("# store_migrate: %d %s\n", rc, err);
	return rc;
}

static int
lines(const char *s)
{
	int n = 0;

	for (; *s != '\0'; s++)
		n += *s == '\n';
	return n;
}

static void
test_roundtrip(void)
{
	struct store	*a = NULL, *p = NULL, *b = NULL, *e = NULL;
	char		 err[512], text[8192], hello[STORE_HASH_HEX], line[128];
	long		 n;

	CHECK_INT(open_lmdb("a", &a), 0);
	if (a == NULL)
		return;
	CHECK_INT(fill(a, hello), 0);
	n = records(a);
	/* probes, apps, runs and their index, blobs and their counts, 2
	 * conversations, one empty value, the schema version */
	CHECK_INT(n, STORE_DB__COUNT + 50 + RUNS + RUNS / 10 + 2 + BIG_BLOBS +
	    2 + BIG_BLOBS + 2 + 1 + 1);
	test_pieces(a);
	if (pg_url == NULL) {
		SKIP("no PostgreSQL here (Debian: postgresql): LMDB to "
		    "PostgreSQL and back");
		goto lmdb_only;
	}

	/* ---- LMDB -> PostgreSQL ---- */
	CHECK_INT(pg_reset(), 0);
	CHECK_INT(open_pg(&p), 0);
	if (p == NULL)
		goto out;
	CHECK_INT(migrate(a, p, err, sizeof(err), text, sizeof(text)), 0);
	/* a header, a line per database, the closing line */
	CHECK_INT(lines(text), STORE_DB__COUNT + 2);
	CHECK(strstr(text, "every count and digest matches") != NULL);
	snprintf(line, sizeof(line), "%-16s %12d %12d %12d  ok\n", "runs",
	    RUNS + 1, RUNS + 1, RUNS + 1);
	CHECK(strstr(text, line) != NULL);
	if (strstr(text, line) == NULL)
		printf("# %s", text);
	CHECK(same(a, p));
	check_blobs(p, hello);

	/* ---- refused: a destination with records, left as it is ---- */
	CHECK_INT(migrate(a, p, err, sizeof(err), text, sizeof(text)),
	    STORE_EEXIST);
	CHECK(strstr(err, "not empty") != NULL);
	CHECK(text[0] == '\0');
	CHECK(same(a, p));
	CHECK_INT(migrate(p, a, err, sizeof(err), text, sizeof(text)),
	    STORE_EEXIST);
	CHECK(same(a, p));
	CHECK_INT(migrate(p, p, err, sizeof(err), text, sizeof(text)),
	    STORE_ECONFIG);
	CHECK(strstr(err, "same store") != NULL);

	/* ---- PostgreSQL -> a new LMDB directory ---- */
	CHECK_INT(open_lmdb("b", &b), 0);
	if (b == NULL)
		goto out;
	CHECK_INT(migrate(p, b, err, sizeof(err), text, sizeof(text)), 0);
	CHECK(strstr(text, "every count and digest matches") != NULL);
	CHECK(same(p, b));
	CHECK(same(a, b));
	check_blobs(b, hello);
	CHECK_INT(records(b), n);
lmdb_only:
	/* ---- refused: one record beside the schema version ---- */
	CHECK_INT(open_lmdb("e", &e), 0);
	if (e == NULL)
		goto out;
	CHECK_INT(records(e), 1);	/* store_open's: not content */
	CHECK_INT(put1(e, STORE_DB_META, "x", "1"), 0);
	CHECK_INT(migrate(a, e, err, sizeof(err), text, sizeof(text)),
	    STORE_EEXIST);
	CHECK(strstr(err, "database meta") != NULL);
	CHECK_INT(records(e), 2);
	CHECK_INT(migrate(a, a, err, sizeof(err), text, sizeof(text)),
	    STORE_ECONFIG);
	CHECK_INT(records(a), n);
out:
	store_close(a);
	store_close(p);
	store_close(b);
	store_close(e);
}

int
main(void)
{
	char	cmd[600];

	log_init(CONF_LOG_WARN, NULL);
	snprintf(topdir, sizeof(topdir), "%s/t_storage_migrate.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(topdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_digest();
	/* none here (77): test_roundtrip skips */
	if (pg_private_start(topdir, &pg_url) < 0)
		CHECK(!"the test's PostgreSQL started");
	if (pg_url != NULL)
		printf("# postgres at %s\n", pg_url);
	test_roundtrip();
	if (pg_dir[0] != '\0')
		(void)pg_ctl("stop");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", topdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", topdir);
	return tap_done();
}
