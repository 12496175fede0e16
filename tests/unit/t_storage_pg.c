/*
 * t_storage_pg.c — storage on PostgreSQL: the cases of t_storage_store.c
 * that are not about LMDB's map (records, JSON, cursors, the schema
 * version, aborts, threads, processes), then what only this backend has:
 * two stores (two hosts) on one database that read and write the same
 * record (one runs again and sees the other's write: If-Match across
 * hosts), cursors over many batches that see their transaction's own
 * writes, puts whose failure shows only at the commit (a write sends them
 * without waiting), the layout version, settings that are wrong, pooled
 * connections the server killed, and the server going down and coming
 * back.
 *
 * The database: FLOWCGI_TEST_PG_URL (which it empties), else a private
 * server that tests/e2e/postgres.sh starts and removes; without
 * PostgreSQL every case is one counted skip.
 */
#define T_STORAGE_PG 1
#include "tests/unit/t_storage_store.c"

#include <libpq-fe.h>

#include "tests/unit/pg_private.h"


/* Runs sql on the test database; 0 when it worked. */
static int
pg_sql(const char *sql)
{
	PGconn		*c;
	PGresult	*r;
	int		 ok;

	c = PQconnectdb(pg_url);
	PQsetNoticeProcessor(c, notice_quiet, NULL);
	if (PQstatus(c) != CONNECTION_OK) {
		printf("# connect: %s", PQerrorMessage(c));
		PQfinish(c);
		return -1;
	}
	r = PQexec(c, sql);
	ok = PQresultStatus(r) == PGRES_COMMAND_OK ||
	    PQresultStatus(r) == PGRES_TUPLES_OK;
	if (!ok)
		printf("# %s: %s", sql, PQresultErrorMessage(r));
	PQclear(r);
	PQfinish(c);
	return ok ? 0 : -1;
}

/* The first column of the first row of sql, as a number (-1: none). */
static long
pg_number(const char *sql)
{
	PGconn		*c;
	PGresult	*r;
	long		 n = -1;

	c = PQconnectdb(pg_url);
	r = PQexec(c, sql);
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0)
		n = strtol(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	PQfinish(c);
	return n;
}

static void
pg_reset(void)
{
	if (pg_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public") != 0)
		printf("# could not empty the database\n");
}


/* ====== Two hosts, one record ====== */

struct rev_arg {
	struct store	*other;		/* the other host, writing meanwhile */
	long		 expect;	/* the revision the caller saw */
	int		 calls;
	int		 other_rc;
};

static int
rev_get(struct store_txn *t, long *rev)
{
	const void	*v;
	size_t		 vlen;
	char		 buf[32];
	int		 rc;

	if ((rc = store_get(t, STORE_DB_APPS, "rev", 3, &v, &vlen)) != 0)
		return rc;
	snprintf(buf, sizeof(buf), "%.*s", (int)vlen, (const char *)v);
	*rev = strtol(buf, NULL, 10);
	return 0;
}

/* The other host: revision 1 -> 2, committed while the first one runs. */
static int
rev_bump_fn(struct store_txn *t, void *arg)
{
	long	rev = 0;
	int	rc;

	(void)arg;
	if ((rc = rev_get(t, &rev)) != 0)
		return rc;
	return store_put(t, STORE_DB_APPS, "rev", 3, "2", 1, 0);
}

/*
 * If-Match: write revision expect + 1 only when the record is still at
 * expect (-77 otherwise). On its first run the other host bumps the
 * record between this one's read and its write.
 */
static int
rev_write_fn(struct store_txn *t, void *arg)
{
	struct rev_arg	*a = arg;
	long		 rev = 0;
	char		 buf[32];
	int		 rc;

	a->calls++;
	if ((rc = rev_get(t, &rev)) != 0)
		return rc;
	if (a->calls == 1)
		a->other_rc = store_write(a->other, rev_bump_fn, NULL);
	if (rev != a->expect)
		return -77;
	snprintf(buf, sizeof(buf), "%ld", rev + 1);
	return store_put(t, STORE_DB_APPS, "rev", 3, buf, strlen(buf), 0);
}

static void
test_pg_hosts(void)
{
	struct store	*a = NULL, *b = NULL;
	struct rev_arg	 ra;
	char		 buf[32];

	CHECK_INT(open_store(new_dir("hosts"), MIB, MIB, &a), 0);
	CHECK_INT(open_store("unused", MIB, MIB, &b), 0);
	if (a == NULL || b == NULL)
		goto out;
	CHECK_INT(put1(a, STORE_DB_APPS, "rev", "1", 0), 0);
	/* one host's write is the other's read */
	CHECK_INT(get1(b, STORE_DB_APPS, "rev", buf, sizeof(buf)), 0);
	CHECK_STR(buf, "1");
	memset(&ra, 0, sizeof(ra));
	ra.other = b;
	ra.expect = 1;
	CHECK_INT(store_write(a, rev_write_fn, &ra), -77);
	CHECK_INT(ra.other_rc, 0);
	CHECK_INT(ra.calls, 2);	/* ran again, and saw the other's write */
	CHECK_INT(get1(a, STORE_DB_APPS, "rev", buf, sizeof(buf)), 0);
	CHECK_STR(buf, "2");
	/* a second host's store needs no migration and sees the same tables */
	CHECK_INT(pg_number("SELECT count(*) FROM pg_tables WHERE "
	    "tablename LIKE 'flowcgi\\_%'"), STORE_DB__COUNT + 2);
out:
	store_close(a);
	store_close(b);
}

/* ====== Cursors over many batches, and the transaction's own writes ====== */

static int
many_fn(struct store_txn *t, void *arg)
{
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	int			*seen = arg, i, rc;
	char			 k[16];

	for (i = 0; i < 1200; i++) {
		snprintf(k, sizeof(k), "m%05d", i);
		if ((rc = store_put(t, STORE_DB_RUNS, k, 6, k, 6, 0)) != 0)
			return rc;
	}
	if ((rc = store_del(t, STORE_DB_RUNS, "m00005", 6)) != 0)
		return rc;
	/* its own writes, through a cursor and a get */
	if ((rc = store_cursor_open(t, STORE_DB_RUNS, &c)) != 0)
		return rc;
	for (*seen = 0, rc = store_cursor_first(c, &kv); rc == 0;
	     rc = store_cursor_next(c, &kv))
		(*seen)++;
	store_cursor_close(c);
	if (rc != STORE_ENOTFOUND)
		return rc;
	{
		const void	*v;
		size_t		 vlen;

		if (store_get(t, STORE_DB_RUNS, "m00005", 6, &v, &vlen) !=
		    STORE_ENOTFOUND)
			return -5;
	}
	return 0;
}

static void
test_pg_batches(void)
{
	struct store		*s = NULL;
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv, first = { NULL, 0, NULL, 0 };
	char			 want[16];
	int			 seen = 0, n, bad, rc, i;

	CHECK_INT(open_store(new_dir("batches"), MIB, MIB, &s), 0);
	if (s == NULL)
		return;
	CHECK_INT(store_write(s, many_fn, &seen), 0);
	CHECK_INT(seen, 1199);
	CHECK_INT(store_read_begin(s, &t), 0);
	CHECK_INT(store_cursor_open(t, STORE_DB_RUNS, &c), 0);
	/* backwards over every batch, values valid until the end */
	n = bad = 0;
	for (rc = store_cursor_last(c, &kv); rc == 0;
	     rc = store_cursor_prev(c, &kv), n++) {
		i = 1199 - n - (n >= 1194);	/* m00005 is gone */
		snprintf(want, sizeof(want), "m%05d", i);
		if (kv.klen != 6 || memcmp(kv.k, want, 6) != 0 ||
		    kv.vlen != 6 || memcmp(kv.v, want, 6) != 0)
			bad++;
		if (n == 0)
			first = kv;
	}
	CHECK_INT(rc, STORE_ENOTFOUND);
	CHECK_INT(n, 1199);
	CHECK_INT(bad, 0);
	CHECK(first.klen == 6 && memcmp(first.k, "m01199", 6) == 0);
	/* turning at a batch's edge: forwards 16 (the first batch), back */
	CHECK_INT(store_cursor_seek(c, "m00100", 6, &kv), 0);
	for (i = 0; i < 16; i++)
		(void)store_cursor_next(c, &kv);
	CHECK(kv.klen == 6 && memcmp(kv.k, "m00116", 6) == 0);
	for (i = 0; i < 17; i++)
		(void)store_cursor_prev(c, &kv);
	CHECK(kv.klen == 6 && memcmp(kv.k, "m00099", 6) == 0);
	CHECK_INT(store_cursor_seek(c, "m00005", 6, &kv), 0);
	CHECK(kv.klen == 6 && memcmp(kv.k, "m00006", 6) == 0);
	CHECK_INT(store_cursor_prev(c, &kv), 0);
	CHECK(kv.klen == 6 && memcmp(kv.k, "m00004", 6) == 0);
	store_cursor_close(c);
	store_read_end(t);
	/* binary keys order as bytes (bytea, like LMDB's memcmp) */
	CHECK_INT(put1(s, STORE_DB_META, "\x01", "a", 0), 0);
	CHECK_INT(put1(s, STORE_DB_META, "\xff", "b", 0), 0);
	CHECK_INT(put1(s, STORE_DB_META, "\x7f\x01", "c", 0), 0);
	CHECK_INT(store_read_begin(s, &t), 0);
	CHECK_INT(store_cursor_open(t, STORE_DB_META, &c), 0);
	CHECK_INT(store_cursor_last(c, &kv), 0);
	CHECK(kv.klen == 1 && ((const unsigned char *)kv.k)[0] == 0xff);
	CHECK_INT(store_cursor_first(c, &kv), 0);
	CHECK(kv.klen == 1 && ((const unsigned char *)kv.k)[0] == 0x01);
	store_cursor_close(c);
	store_read_end(t);
	store_close(s);
}

/* ====== Puts sent without waiting ====== */

struct pipe_arg {
	int	get_rc;		/* what a get after the failed put said */
	int	get;		/* do that get */
};

/* a, a value the table refuses, c: the refusal is not seen by the put */
static int
pipe_fn(struct store_txn *t, void *arg)
{
	struct pipe_arg	*pa = arg;
	const void	*v;
	size_t		 vlen;
	char		 big[200];
	int		 rc;

	memset(big, 'x', sizeof(big));
	if ((rc = store_put(t, STORE_DB_APPS, "pa", 2, "1", 1, 0)) != 0)
		return rc;
	if ((rc = store_put(t, STORE_DB_APPS, "pb", 2, big, sizeof(big),
	    0)) != 0)
		return rc;
	if (pa->get) {
		pa->get_rc = store_get(t, STORE_DB_APPS, "pa", 2, &v, &vlen);
		return pa->get_rc != 0 ? pa->get_rc : -9;
	}
	return store_put(t, STORE_DB_APPS, "pc", 2, "3", 1, 0);
}

static void
test_pg_pipeline(void)
{
	struct store		*s = NULL;
	struct store_txn	*t = NULL;
	struct pipe_arg		 pa;
	struct store_stats	 st;
	char			 buf[32];
	long			 pids[16];
	int			 i, j, np;

	CHECK_INT(open_store(new_dir("pipeline"), MIB, MIB, &s), 0);
	if (s == NULL)
		return;
	CHECK_INT(pg_sql("ALTER TABLE flowcgi_apps ADD CONSTRAINT t_short "
	    "CHECK (length(v) < 100)"), 0);
	/* the refused put fails the write at its commit, whole */
	memset(&pa, 0, sizeof(pa));
	CHECK_INT(store_write(s, pipe_fn, &pa), STORE_EIO);
	CHECK_INT(get1(s, STORE_DB_APPS, "pa", buf, sizeof(buf)),
	    STORE_ENOTFOUND);
	CHECK_INT(get1(s, STORE_DB_APPS, "pc", buf, sizeof(buf)),
	    STORE_ENOTFOUND);
	/* a get after it hears of the failure */
	pa.get = 1;
	CHECK_INT(store_write(s, pipe_fn, &pa), STORE_EIO);
	CHECK_INT(pa.get_rc, STORE_EIO);
	CHECK_INT(get1(s, STORE_DB_APPS, "pa", buf, sizeof(buf)),
	    STORE_ENOTFOUND);
	CHECK_INT(pg_sql("ALTER TABLE flowcgi_apps DROP CONSTRAINT t_short"),
	    0);
	/* the connections are fine after it */
	pa.get = 0;
	CHECK_INT(store_write(s, pipe_fn, &pa), 0);
	CHECK_INT(get1(s, STORE_DB_APPS, "pc", buf, sizeof(buf)), 0);
	CHECK_STR(buf, "3");
	/* the server kills the pooled sessions while they are idle: the
	 * next write and read take new ones, the write without running
	 * again (a session killed while a write is on its way may cost
	 * that write: its commit may have run) */
	/* the sessions' processes, so as to wait for them to be gone: a
	 * backend leaves pg_stat_activity before it closes its socket */
	for (np = 0; np < 16; np++) {
		char q[160];

		snprintf(q, sizeof(q), "SELECT pid FROM pg_stat_activity "
		    "WHERE application_name = 'flowcgi' ORDER BY pid OFFSET "
		    "%d LIMIT 1", np);
		if ((pids[np] = pg_number(q)) <= 0)
			break;
	}
	CHECK_INT(pg_number("SELECT count(pg_terminate_backend(pid)) FROM "
	    "pg_stat_activity WHERE application_name = 'flowcgi'") > 0, 1);
	for (i = 0; i < 500 && pg_number("SELECT count(*) FROM "
	    "pg_stat_activity WHERE application_name = 'flowcgi'") > 0; i++)
		usleep(10000);
	/* (the server runs on this machine: each process gone for good,
	 * its socket closed, when kill(pid, 0) finds none) */
	for (i = 0, j = 0; i < np && j < 1000; i++)
		while ((kill((pid_t)pids[i], 0) == 0 || errno != ESRCH) &&
		    j++ < 1000)
			usleep(10000);
	store_stats(s, &st);
	CHECK_INT(put1(s, STORE_DB_APPS, "pd", "4", 0), 0);
	CHECK_INT(get1(s, STORE_DB_APPS, "pd", buf, sizeof(buf)), 0);
	CHECK_STR(buf, "4");
	{
		struct store_stats	st2;

		store_stats(s, &st2);
		CHECK_INT((int)(st2.retries - st.retries), 0);
	}
	CHECK_INT(store_read_begin(s, &t), 0);
	store_read_end(t);
	store_close(s);
}

/* ====== Reads of one key, the generation, round trips ====== */

static uint64_t
trips(struct store *s)
{
	struct store_stats st;

	store_stats(s, &st);
	return st.round_trips;
}

/*
 * A large value (a run's node records) is compressed with lz4 where the
 * server has it, not with its default pglz; a server without lz4 keeps
 * pglz (a counted skip here).
 */
static void
test_pg_compression(void)
{
	static const char pattern[] = "{\"node_id\":\"n1\",\"status\":"
			    "\"succeeded\"}";
	struct store	*s = NULL;
	char		*big;
	size_t		 i;

	CHECK_INT(open_store(new_dir("lz4"), MIB, MIB, &s), 0);
	if (s == NULL || (big = malloc(20001)) == NULL) {
		store_close(s);
		return;
	}
	for (i = 0; i < 20000; i++)
		big[i] = pattern[i % (sizeof(pattern) - 1)];
	big[20000] = '\0';
	CHECK_INT(put1(s, STORE_DB_NODE_RUNS, "z1", big, 0), 0);
	if (pg_number("SELECT count(*) FROM pg_settings WHERE name = "
	    "'default_toast_compression' AND 'lz4' = ANY(enumvals)") != 1)
		SKIP("this PostgreSQL has no lz4");
	else
		CHECK_INT(pg_number("SELECT count(*) FROM flowcgi_node_runs "
		    "WHERE k = 'z1' AND pg_column_compression(v) = 'lz4'"), 1);
	/* and it reads back whole */
	{
		void	*v = NULL;
		size_t	 n = 0;

		CHECK_INT(store_get_copy(s, STORE_DB_NODE_RUNS, "z1", 2, &v,
		    &n), 0);
		CHECK(n == 20000 && v != NULL && memcmp(v, big, n) == 0);
		free(v);
	}
	free(big);
	store_close(s);
}

struct short_arg {
	int	found;		/* the key put after the batch, walked to */
};

/* A write's cursor that came to its table's end, then a put past it: the
 * walk on finds the put (it asks the server again). */
static int
short_fn(struct store_txn *t, void *arg)
{
	struct short_arg	*a = arg;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	int			 rc;

	a->found = 0;
	if ((rc = store_cursor_open(t, STORE_DB_SETTINGS, &c)) != 0)
		return rc;
	for (rc = store_cursor_first(c, &kv); rc == 0;
	    rc = store_cursor_next(c, &kv))
		;
	if (rc == STORE_ENOTFOUND)
		rc = store_put(t, STORE_DB_SETTINGS, "s9", 2, "9", 1, 0);
	if (rc == 0 && (rc = store_cursor_next(c, &kv)) == 0)
		a->found = kv.klen == 2 && memcmp(kv.k, "s9", 2) == 0;
	store_cursor_close(c);
	return rc;
}

/*
 * A read's cursor whose batch came short is at its table's end: walking
 * past it costs no round trip (the snapshot does not change). A write's
 * cursor asks again, for its own puts.
 */
static void
test_pg_short_batch(void)
{
	struct store		*s = NULL;
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	struct short_arg	 a;
	uint64_t		 n;
	int			 rows = 0, rc;

	CHECK_INT(open_store(new_dir("short"), MIB, MIB, &s), 0);
	if (s == NULL)
		return;
	CHECK_INT(put1(s, STORE_DB_SETTINGS, "s1", "1", 0), 0);
	CHECK_INT(put1(s, STORE_DB_SETTINGS, "s2", "2", 0), 0);
	CHECK_INT(put1(s, STORE_DB_SETTINGS, "s3", "3", 0), 0);
	/* prepared on the connection first */
	CHECK_INT(store_read_begin(s, &t), 0);
	if (t == NULL)
		goto out;
	CHECK_INT(store_cursor_open(t, STORE_DB_SETTINGS, &c), 0);
	CHECK_INT(store_cursor_first(c, &kv), 0);
	CHECK_INT(store_cursor_last(c, &kv), 0);
	store_cursor_close(c);
	store_read_end(t);
	n = trips(s);
	CHECK_INT(store_read_begin(s, &t), 0);
	if (t == NULL)
		goto out;
	CHECK_INT(store_cursor_open(t, STORE_DB_SETTINGS, &c), 0);
	for (rc = store_cursor_first(c, &kv); rc == 0;
	    rc = store_cursor_next(c, &kv))
		rows++;
	CHECK_INT(rc, STORE_ENOTFOUND);
	CHECK_INT(rows, 3);
	/* it stays on the last row, as at an end found by a query */
	CHECK_INT(store_cursor_next(c, &kv), STORE_ENOTFOUND);
	CHECK_INT(store_cursor_prev(c, &kv), 0);
	CHECK(kv.klen == 2 && memcmp(kv.k, "s2", 2) == 0);
	/* BEGIN (with its snapshot) and one batch */
	CHECK_INT((int)(trips(s) - n), 2);
	/* backwards, the same */
	n = trips(s);
	rows = 0;
	for (rc = store_cursor_last(c, &kv); rc == 0;
	    rc = store_cursor_prev(c, &kv))
		rows++;
	CHECK_INT(rows, 3);
	CHECK_INT((int)(trips(s) - n), 1);
	store_cursor_close(c);
	store_read_end(t);
	memset(&a, 0, sizeof(a));
	CHECK_INT(store_write(s, short_fn, &a), 0);
	CHECK_INT(a.found, 1);
out:
	store_close(s);
}

/*
 * A run's final write (store_need of its app, then its puts) is one round
 * trip: the check waits for no answer. One whose app is gone is refused
 * with the answers of that round trip (and a ROLLBACK), and the
 * connection serves the next write, which runs once.
 */
static void
test_pg_need_trips(void)
{
	struct store		*s = NULL;
	struct store_stats	 st, st2;
	struct need_arg		 a;
	uint64_t		 n;

	CHECK_INT(open_store(new_dir("needtrips"), MIB, MIB, &s), 0);
	if (s == NULL)
		return;
	CHECK_INT(put1(s, STORE_DB_APPS, "ra", "{}", 0), 0);
	memset(&a, 0, sizeof(a));
	a.app = "ra";
	CHECK_INT(store_write(s, need_fn, &a), 0);	/* prepares */
	n = trips(s);
	CHECK_INT(store_write(s, need_fn, &a), 0);
	CHECK_INT((int)(trips(s) - n), 1);
	a.app = "rb";
	n = trips(s);
	CHECK_INT(store_write(s, need_fn, &a), STORE_ENEEDED);
	CHECK_INT((int)(trips(s) - n), 2);
	a.app = "ra";
	store_stats(s, &st);
	CHECK_INT(store_write(s, need_fn, &a), 0);
	store_stats(s, &st2);
	CHECK_INT((int)(st2.round_trips - st.round_trips), 1);
	CHECK_INT((int)(st2.retries - st.retries), 0);
	CHECK_INT(a.calls, 4);
	store_close(s);
}

static int
del_runs_fn(struct store_txn *t, void *arg)
{
	(void)arg;
	return store_del(t, STORE_DB_RUNS, "g1", 2);
}

/*
 * store_get_copy is one round trip; store_generation moves with every
 * write of apps, drafts, versions or api_keys on any host (a trigger), in
 * the write's own transaction, and not with a run's records; a read
 * transaction of one get costs two round trips (its ROLLBACK is sent
 * without waiting), where it cost three.
 */
static void
test_pg_generation(void)
{
	struct store		*a = NULL, *b = NULL;
	struct store_txn	*t = NULL;
	const void		*v;
	void			*copy = NULL;
	size_t			 vlen = 0;
	uint64_t		 g0 = 0, g1 = 0, g2 = 0, n;
	char			 buf[32];
	int			 i;
	static const enum store_db conf_dbs[] = { STORE_DB_APPS,
	    STORE_DB_DRAFTS, STORE_DB_VERSIONS, STORE_DB_API_KEYS };

	CHECK_INT(open_store(new_dir("gen"), MIB, MIB, &a), 0);
	CHECK_INT(open_store("unused", MIB, MIB, &b), 0);
	if (a == NULL || b == NULL)
		goto out;
	CHECK_INT(put1(a, STORE_DB_APPS, "g1", "one", 0), 0);
	/* once to prepare the statement on the connection, then counted */
	CHECK_INT(store_get_copy(b, STORE_DB_APPS, "g1", 2, &copy, &vlen), 0);
	free(copy);
	copy = NULL;
	n = trips(b);
	CHECK_INT(store_get_copy(b, STORE_DB_APPS, "g1", 2, &copy, &vlen), 0);
	CHECK_INT((int)(trips(b) - n), 1);
	CHECK(copy != NULL && vlen == 3 && memcmp(copy, "one", 3) == 0);
	free(copy);
	copy = NULL;
	CHECK_INT(store_get_copy(b, STORE_DB_APPS, "nope", 4, &copy, &vlen),
	    STORE_ENOTFOUND);
	CHECK(copy == NULL);
	/* the generation: one round trip, the same on both hosts */
	n = trips(b);
	CHECK_INT(store_generation(b, &g0), 0);
	CHECK_INT((int)(trips(b) - n), 1);
	CHECK_INT(store_generation(a, &g1), 0);
	CHECK(g0 == g1);
	/* a run's records leave it alone */
	CHECK_INT(put1(a, STORE_DB_RUNS, "g1", "r", 0), 0);
	CHECK_INT(store_write(a, del_runs_fn, NULL), 0);
	CHECK_INT(store_generation(b, &g1), 0);
	CHECK(g1 == g0);
	/* each configuration database, written on a, moves it for b */
	for (i = 0; i < 4; i++) {
		CHECK_INT(put1(a, conf_dbs[i], "g2", "x", 0), 0);
		CHECK_INT(store_generation(b, &g2), 0);
		CHECK(g2 > g1);
		g1 = g2;
	}
	/* a delete too, and an operator's SQL (the trigger, not flowcgi) */
	CHECK_INT(pg_sql("DELETE FROM flowcgi_apps WHERE k = 'g2'"), 0);
	CHECK_INT(store_generation(b, &g2), 0);
	CHECK(g2 > g1);
	g1 = g2;
	/* a read of one get: BEGIN (with its snapshot) and the get; the
	 * ROLLBACK's answer is read when the connection is used next */
	n = trips(b);
	CHECK_INT(store_read_begin(b, &t), 0);
	CHECK_INT(store_get(t, STORE_DB_APPS, "g1", 2, &v, &vlen), 0);
	store_read_end(t);
	CHECK_INT((int)(trips(b) - n), 2);
	CHECK_INT(get1(b, STORE_DB_APPS, "g1", buf, sizeof(buf)), 0);
	CHECK_STR(buf, "one");
out:
	store_close(a);
	store_close(b);
}

/* ====== Settings, layout, the server going away ====== */

static void
test_pg_open(void)
{
	struct store_opts	 o = { MIB, MIB, 0, 0, 1, "nope", NULL, 0, 0 };
	struct store		*s = NULL;
	char			 bad[128];

	CHECK_INT(store_open("unused", &o, &s), STORE_ECONFIG);
	o.backend = "postgres";
	CHECK_INT(store_open("unused", &o, &s), STORE_ECONFIG);
	CHECK(strstr(store_strerror(STORE_ECONFIG), "postgres_url") != NULL);
	/* nobody listens there: unavailable once the wait is over */
	snprintf(bad, sizeof(bad), "postgres://flowcgi@127.0.0.1:%d/x", 1);
	o.postgres_url = bad;
	o.wait_ms = 300;
	CHECK_INT(store_open("unused", &o, &s), STORE_EUNAVAIL);
	CHECK(s == NULL);
	/* tables made by a newer flowcgi are refused, and left alone */
	CHECK_INT(open_store(new_dir("layout"), MIB, MIB, &s), 0);
	store_close(s);
	s = NULL;
	CHECK_INT(pg_number("SELECT version FROM flowcgi_layout"), 3);
	/* layout 1 (no leases table, no generation) is brought to 3 */
	CHECK_INT(pg_sql("DROP TABLE flowcgi_leases"), 0);
	CHECK_INT(pg_sql("DROP TABLE flowcgi_generation CASCADE"), 0);
	CHECK_INT(pg_sql("UPDATE flowcgi_layout SET version = 1"), 0);
	CHECK_INT(open_store("unused", MIB, MIB, &s), 0);
	store_close(s);
	s = NULL;
	CHECK_INT(pg_number("SELECT version FROM flowcgi_layout"), 3);
	CHECK_INT(pg_number("SELECT count(*) FROM flowcgi_leases"), 0);
	CHECK_INT(pg_number("SELECT count(*) FROM flowcgi_generation"), 1);
	CHECK_INT(pg_sql("UPDATE flowcgi_layout SET version = 99"), 0);
	CHECK_INT(open_store("unused", MIB, MIB, &s), STORE_EVERSION);
	CHECK_INT(pg_number("SELECT version FROM flowcgi_layout"), 99);
}

static void
test_pg_restart(void)
{
	struct store		*s = NULL;
	struct store_txn	*t = NULL;
	struct store_opts	 o = { MIB, MIB, 0, 0, 1, "postgres", NULL, 4,
				    1000 };
	char			 buf[32];
	pid_t			 pid;
	int			 st;

	if (pg_dir[0] == '\0') {
		SKIP("FLOWCGI_TEST_PG_URL given: the server is not ours to "
		    "restart");
		return;
	}
	(void)new_dir("restart");
	o.postgres_url = pg_url;
	CHECK_INT(store_open("unused", &o, &s), 0);
	if (s == NULL)
		return;
	CHECK_INT(put1(s, STORE_DB_APPS, "before", "1", 0), 0);
	CHECK_INT(pg_ctl("down"), 0);
	/* the pooled connection is dead, the server away: a clear code */
	CHECK_INT(put1(s, STORE_DB_APPS, "during", "1", 0), STORE_EUNAVAIL);
	CHECK_INT(store_read_begin(s, &t), STORE_EUNAVAIL);
	CHECK(strstr(store_strerror(STORE_EUNAVAIL), "reached") != NULL);
	store_close(s);
	s = NULL;
	/* a store opened while the server comes back waits for it */
	o.wait_ms = 60000;
	fflush(stdout);
	if ((pid = fork()) == 0) {
		execl("/bin/sh", "sh", "tests/e2e/postgres.sh", "up", pg_dir,
		    (char *)NULL);
		_exit(127);
	}
	CHECK_INT(store_open("unused", &o, &s), 0);
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0);
	if (s == NULL)
		return;
	CHECK_INT(get1(s, STORE_DB_APPS, "before", buf, sizeof(buf)), 0);
	CHECK_INT(get1(s, STORE_DB_APPS, "during", buf, sizeof(buf)),
	    STORE_ENOTFOUND);
	/* and again with the store open across the restart */
	CHECK_INT(pg_ctl("down"), 0);
	CHECK_INT(pg_ctl("up"), 0);
	CHECK_INT(put1(s, STORE_DB_APPS, "after", "1", 0), 0);
	CHECK_INT(get1(s, STORE_DB_APPS, "after", buf, sizeof(buf)), 0);
	store_close(s);
}

int
main(void)
{
	char	cmd[600];
	int	rc;

	log_init(CONF_LOG_WARN, NULL);
	snprintf(topdir, sizeof(topdir), "%s/t_storage_pg.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(topdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	if ((rc = pg_private_start(topdir, &pg_url)) == 77) {
		SKIP("no PostgreSQL here (Debian: postgresql)");
		goto out;
	}
	if (rc != 0) {
		CHECK(!"the test's PostgreSQL started");
		goto out;
	}
	printf("# postgres at %s\n", pg_url);
	/* LMDB's own: its map, its group commit (t_storage_store) */
	(void)test_growth;
	(void)test_full;
	(void)test_group_batch;
	(void)test_group_durable;
	(void)test_group_fail;
	(void)test_group_growth;
	(void)test_group_limits;
	(void)test_map_file;
	test_records();
	test_json();
	test_cursors();
	test_schema();
	test_abort();
	test_need();
	test_blobs();
	test_threads();
	test_processes();
	test_slots();
	test_pg_hosts();
	test_pg_batches();
	test_pg_pipeline();
	test_pg_generation();
	test_pg_need_trips();
	test_pg_short_batch();
	test_pg_compression();
	test_pg_open();
	test_pg_restart();
out:
	if (pg_dir[0] != '\0')
		(void)pg_ctl("stop");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", topdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", topdir);
	return tap_done();
}
