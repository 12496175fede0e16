/*
 * pg.c — the PostgreSQL backend (libpq): many flowcgi hosts share one
 * database (storage.backend: postgres; docs/scale-out.md).
 *
 * Layout: one table per named database, flowcgi_<name> (k bytea primary
 * key, v bytea not null); bytea compares as memcmp and then by length, the
 * order of LMDB's keys, so cursors walk the same order. flowcgi_layout
 * holds the version of that layout, upgraded in place at open under an
 * advisory lock (several hosts may start at once); the records themselves
 * migrate through store.c as on LMDB.
 *
 * Transactions: a read is BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY,
 * one snapshot for all it reads; a write is a SERIALIZABLE transaction
 * around fn, run again when the server answers 40001 (serialization
 * failure) or 40P01 (deadlock): two hosts that read and change the same
 * record never both commit, which is what keeps If-Match and every
 * read-then-write of the engine whole across hosts. The results of the
 * queries of a transaction are kept until it ends, so the pointers that
 * store_get and cursors give stay valid as long as on LMDB.
 *
 * Round trips: a write runs in libpq's pipeline mode. BEGIN, the puts and
 * the checks of store_need (whose only answer is a failure) are sent
 * without waiting; a statement whose answer fn needs (a get, a cursor, an
 * insert-unless-there, a delete) reads every answer before it; COMMIT
 * reads the rest. A put that failed unseen fails the transaction at the
 * latest at its commit, so nothing of it commits, as if fn had seen the
 * failure. A write of checks and puts alone (a run's final write) is one
 * round trip. Every round trip costs both sides a wake-up and system
 * calls, which is most of what a run costs here.
 *
 * Connections: a pool of at most pool_size per process, made on demand.
 * A transaction takes one for its whole life and waits up to wait_ms for
 * one (the pool is busy, or the server is down and being reconnected
 * with backoff), then fails with STORE_EUNAVAIL (HTTP 503). A connection
 * found broken is dropped, and one whose server spoke while it was idle
 * (it is shutting down or killed the session) is not used; a write that
 * lost its connection before its commit was sent, or whose server said
 * that it aborted the transaction before the commit, runs again on a new
 * one.
 *
 * Values travel as parameters ($1, $2) of prepared statements, in binary;
 * no value is ever part of an SQL text. Table names come from the fixed
 * table of store.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "conf/conf.h"
#include "storage/backend.h"

/* The version of the tables this build makes (flowcgi_layout). */
#define PG_LAYOUT_VERSION	3

/* Any number, the same in every flowcgi: the lock of layout upgrades. */
#define PG_LAYOUT_LOCK		"717011903"

/* Runs of one write that the server refused to serialize, at most. */
#define PG_MAX_RETRIES		200

/* Statements a write sends before it reads their answers, at most: the
 * server's answers then never fill the socket while the client still
 * sends (a pipeline in blocking mode would hang on both). */
#define PG_PIPE_MAX		64

/* Rows a cursor asks for first, and at most as it keeps walking. */
#define PG_BATCH_FIRST		16
#define PG_BATCH_MAX		512

enum pg_stmt {
	PG_GET,		/* $1 key */
	PG_PUT,		/* $1 key, $2 value: insert or replace */
	PG_INSERT,	/* $1 key, $2 value: insert unless there */
	PG_DEL,		/* $1 key */
	PG_FIRST,	/* $1 limit */
	PG_LAST,	/* $1 limit */
	PG_GE,		/* $1 key, $2 limit */
	PG_GT,		/* $1 key, $2 limit */
	PG_LT,		/* $1 key, $2 limit (descending) */
	PG_NEED,	/* $1 key: fails (22012) when it is not there */
	PG__STMTS
};

/* The statements: what comes before the table's name and after it. */
static const char *const stmt_sql[PG__STMTS][2] = {
	[PG_GET] = { "SELECT v FROM ", " WHERE k = $1" },
	[PG_PUT] = { "INSERT INTO ", " (k, v) VALUES ($1, $2) "
	    "ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v" },
	[PG_INSERT] = { "INSERT INTO ", " (k, v) VALUES ($1, $2) "
	    "ON CONFLICT (k) DO NOTHING" },
	[PG_DEL] = { "DELETE FROM ", " WHERE k = $1" },
	[PG_FIRST] = { "SELECT k, v FROM ", " ORDER BY k LIMIT $1" },
	[PG_LAST] = { "SELECT k, v FROM ", " ORDER BY k DESC LIMIT $1" },
	[PG_GE] = { "SELECT k, v FROM ", " WHERE k >= $1 ORDER BY k LIMIT $2" },
	[PG_GT] = { "SELECT k, v FROM ", " WHERE k > $1 ORDER BY k LIMIT $2" },
	[PG_LT] = { "SELECT k, v FROM ",
	    " WHERE k < $1 ORDER BY k DESC LIMIT $2" },
	/* store_need: a division by the key's count, which fails with
	 * division_by_zero when there is none, so that the check needs no
	 * answer unless it fails (no function of ours: no layout) */
	[PG_NEED] = { "SELECT 1 / count(*) FROM ", " WHERE k = $1" },
};

/* One connection; the statements it has prepared, a bit per pg_stmt. */
struct pg_conn {
	PGconn		*pc;
	uint32_t	 prepared[STORE_DB__COUNT];
	int		 bad;		/* out of step with the server */
	atomic_uint_fast64_t *trips;	/* the store's round trips */
	int		 owed;		/* a read's ROLLBACK sent, unread */
	struct pg_conn	*next;		/* in the idle list */
};

/* What a write sent and has not read the answer of yet, in order. */
enum pg_pend_kind {
	PEND_BEGIN,
	PEND_PREPARE,
	PEND_STMT,
	PEND_COMMIT
};

struct pg_pend {
	unsigned char	kind, db, k;
};

struct pg {
	struct store		 base;
	char			*url;
	int			 sync;
	int			 pool_size;
	int			 wait_ms;
	pthread_mutex_t		 lock;		/* idle, open, down */
	pthread_cond_t		 freed;		/* a connection came back */
	struct pg_conn		*idle;
	int			 open;		/* connections made, in use too */
	int			 down;		/* the last connect failed */
	atomic_uint_fast64_t	 n_writes, n_commits, n_retries, n_txn;
	atomic_uint_fast64_t	 n_trips;	/* waits for an answer */
	pthread_mutex_t		 slot_lock;	/* slot_conn, held */
	struct pg_conn		*slot_conn;	/* holds the slots' locks */
	int64_t			*held;		/* slots held in this process */
	size_t			 nheld, capheld;
};

struct pg_txn {
	struct store_txn	 base;
	struct pg		*s;
	struct pg_conn		*conn;
	PGresult		**kept;		/* freed at the end */
	size_t			 nkept, capkept;
	uint64_t		 id;
	int			 retry;		/* 40001/40P01: run again */
	int			 lost;		/* the connection broke */
	int			 unsure;	/* lost once COMMIT was sent */
	int			 failed;	/* the server aborted it */
	int			 need;		/* a store_need found none */
	int			 pipe;		/* a write: pipeline mode */
	struct pg_pend		 pend[PG_PIPE_MAX + 4];
	int			 npend;
};

struct pg_cursor {
	struct store_cursor	 base;
	struct pg_txn		*t;
	enum store_db		 db;
	PGresult		*res;		/* the batch (kept by t) */
	int			 n, pos;	/* rows, place in key order */
	int			 desc;		/* rows came in descending order */
	int			 valid;		/* pos is a row */
	int			 batch;		/* rows to ask for next */
	int			 last;		/* a read's batch that came short:
						   no row past its end in its
						   direction (the snapshot) */
};

/* The store whose write function this thread runs (no nesting). */
static __thread struct pg *pg_writing;

/* ====== Time ====== */

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
sleep_ms(int64_t ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* ====== Connections ====== */

/* libpq's message without its trailing newline, into buf. */
static const char *
pq_message(const char *m, char *buf, size_t n)
{
	size_t len;

	snprintf(buf, n, "%s", m != NULL && *m != '\0' ? m : "unknown error");
	len = strlen(buf);
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = '\0';
	return buf;
}

static void
conn_free(struct pg_conn *c)
{
	if (c == NULL)
		return;
	PQfinish(c->pc);
	free(c);
}

/* Runs sql (no parameters, no rows) on c; 0 or -1 (logged). */
static int
conn_exec(struct pg_conn *c, const char *sql)
{
	PGresult	*r;
	char		 m[256];
	int		 ok;

	if (c->trips != NULL)
		atomic_fetch_add(c->trips, 1);
	r = PQexec(c->pc, sql);
	ok = PQresultStatus(r) == PGRES_COMMAND_OK ||
	    PQresultStatus(r) == PGRES_TUPLES_OK;
	if (!ok && PQstatus(c->pc) == CONNECTION_OK)
		log_error("storage: postgres: %s: %s", sql,
		    pq_message(PQresultErrorMessage(r), m, sizeof(m)));
	PQclear(r);
	return ok ? 0 : -1;
}

/* Runs sql on c, which may fail without harm (a setting an older server
 * lacks): nothing is logged. */
static void
conn_try(struct pg_conn *c, const char *sql)
{
	if (c->trips != NULL)
		atomic_fetch_add(c->trips, 1);
	PQclear(PQexec(c->pc, sql));
}

/* The server's notices ("already exists, skipping") are not errors. */
static void
notice_drop(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/*
 * A new connection. The URL may set its own connect_timeout; the default
 * here is about storage.postgres_wait.
 */
static struct pg_conn *
conn_new(struct pg *s)
{
	const char	*keys[] = { "connect_timeout",
			    "fallback_application_name", "dbname", NULL };
	const char	*vals[4];
	struct pg_conn	*c;
	char		 timeout[16], m[256];
	int		 was_down;

	snprintf(timeout, sizeof(timeout), "%d",
	    s->wait_ms >= 2000 ? s->wait_ms / 1000 : 2);
	vals[0] = timeout;
	vals[1] = "flowcgi";
	vals[2] = s->url;
	vals[3] = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->trips = &s->n_trips;
	c->pc = PQconnectdbParams(keys, vals, 1);
	pthread_mutex_lock(&s->lock);
	was_down = s->down;
	s->down = c->pc == NULL || PQstatus(c->pc) != CONNECTION_OK;
	pthread_mutex_unlock(&s->lock);
	if (c->pc == NULL || PQstatus(c->pc) != CONNECTION_OK) {
		if (!was_down)
			log_error("storage: postgres: cannot connect: %s",
			    c->pc == NULL ? "out of memory" :
			    pq_message(PQerrorMessage(c->pc), m, sizeof(m)));
		conn_free(c);
		return NULL;
	}
	if (was_down)
		log_info("storage: postgres: connected again");
	PQsetNoticeProcessor(c->pc, notice_drop, NULL);
	/* Without sync, a commit does not wait for the server's WAL flush:
	 * a crash of the server may lose the last ones, never half of one. */
	if (!s->sync && conn_exec(c, "SET synchronous_commit TO off") != 0) {
		conn_free(c);
		return NULL;
	}
	/* Values over about 2 kB (a run's node records) are compressed as
	 * they are stored: with lz4 where the server has it (PostgreSQL 14
	 * and newer, built with lz4 as Debian's is), several times cheaper
	 * for the server than its default pglz, which was a tenth of its
	 * CPU in a run. A server without it keeps pglz. */
	conn_try(c, "SET default_toast_compression TO lz4");
	return c;
}

/*
 * A connection of the pool for a transaction, waiting until deadline (ms,
 * now_ms' clock) for one to come back or for the server to answer; a
 * failed connect is tried again after 50 ms, doubling to one second.
 */
static int
pool_take(struct pg *s, int64_t deadline, struct pg_conn **out)
{
	struct pg_conn	*c;
	struct timespec	 ts;
	int64_t		 backoff = 50, left;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		if ((c = s->idle) != NULL) {
			s->idle = c->next;
			c->next = NULL;
			pthread_mutex_unlock(&s->lock);
			*out = c;
			return 0;
		}
		if ((left = deadline - now_ms()) <= 0)
			break;
		if (s->open < s->pool_size) {
			s->open++;
			pthread_mutex_unlock(&s->lock);
			if ((c = conn_new(s)) != NULL) {
				*out = c;
				return 0;
			}
			pthread_mutex_lock(&s->lock);
			s->open--;
			pthread_cond_signal(&s->freed);
			pthread_mutex_unlock(&s->lock);
			sleep_ms(backoff < left ? backoff : left);
			if ((backoff *= 2) > 1000)
				backoff = 1000;
			pthread_mutex_lock(&s->lock);
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += left / 1000;
		ts.tv_nsec += (left % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&s->freed, &s->lock, &ts);
	}
	pthread_mutex_unlock(&s->lock);
	log_error("storage: postgres: no connection within "
	    "storage.postgres_wait (%d ms)", s->wait_ms);
	return STORE_EUNAVAIL;
}

/* Gives c back, or drops it when it broke or is still in a transaction. */
static void
pool_give(struct pg *s, struct pg_conn *c)
{
	if (c == NULL)
		return;
	if (PQstatus(c->pc) != CONNECTION_OK || c->bad ||
	    (!c->owed && PQtransactionStatus(c->pc) != PQTRANS_IDLE)) {
		conn_free(c);
		c = NULL;
	}
	pthread_mutex_lock(&s->lock);
	if (c != NULL) {
		c->next = s->idle;
		s->idle = c;
	} else
		s->open--;
	pthread_cond_signal(&s->freed);
	pthread_mutex_unlock(&s->lock);
}

/* Ends c's transaction, if it is still in one (a failed write's). */
static void
conn_rollback(struct pg_conn *c)
{
	if (PQstatus(c->pc) != CONNECTION_OK || c->bad ||
	    PQtransactionStatus(c->pc) == PQTRANS_IDLE)
		return;
	(void)conn_exec(c, "ROLLBACK");
}

/*
 * Checks that the server has not said anything to a connection taken
 * from the pool since its last transaction: an idle session hears from
 * the server only when it is going away (shut down, restarted, the
 * session killed), and a write, which sends all it has before it reads,
 * would find that out only at its commit. 0, or -1 when c is to be
 * dropped.
 */
static int
conn_ready(struct pg_conn *c)
{
	struct pollfd	pfd;
	PGresult	*r;
	int		 ok = 1;

	/* A read's ROLLBACK, sent without waiting: its answer has most
	 * likely come meanwhile (no round trip then). */
	if (c->owed && !c->bad) {
		c->owed = 0;
		while ((r = PQgetResult(c->pc)) != NULL) {
			if (PQresultStatus(r) != PGRES_COMMAND_OK)
				ok = 0;
			PQclear(r);
		}
		if (!ok)
			return -1;
		/* reading that answer may have read, with it, what the
		 * server said next (a killed session's FATAL and its end):
		 * what libpq holds is no longer on the socket for the poll
		 * below, so have it read the rest now and see whether the
		 * connection ended (PQconsumeInput never blocks) */
		if (PQconsumeInput(c->pc) == 0 || PQisBusy(c->pc))
			return -1;
	}
	if (c->bad || PQstatus(c->pc) != CONNECTION_OK ||
	    PQtransactionStatus(c->pc) != PQTRANS_IDLE)
		return -1;
	pfd.fd = PQsocket(c->pc);
	pfd.events = POLLIN;
	pfd.revents = 0;
	if (pfd.fd < 0 || poll(&pfd, 1, 0) != 0)
		return -1;
	return 0;
}

/* ====== Statements ====== */

/*
 * The STORE_E* code of a failed statement, noting in t what it means for
 * the transaction (every error aborts a PostgreSQL transaction).
 */
static int
pg_fail(struct pg_txn *t, PGresult *r, const char *what)
{
	const char	*state;
	char		 m[256];

	t->failed = 1;
	if (PQstatus(t->conn->pc) != CONNECTION_OK) {
		t->lost = 1;
		return STORE_EUNAVAIL;
	}
	state = r != NULL ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	if (state == NULL)
		state = "";
	if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0) {
		t->retry = 1;
		return STORE_EBUSY;
	}
	/* The server is shutting down or starting: as good as lost. */
	if (strncmp(state, "57P", 3) == 0 || strncmp(state, "08", 2) == 0) {
		t->lost = 1;
		return STORE_EUNAVAIL;
	}
	log_error("storage: postgres: %s: %s", what,
	    pq_message(r != NULL ? PQresultErrorMessage(r) :
	    PQerrorMessage(t->conn->pc), m, sizeof(m)));
	if (strcmp(state, "53100") == 0)
		return STORE_ENOSPC;
	if (strcmp(state, "53200") == 0)
		return STORE_ENOMEM;
	return STORE_EIO;
}

static int
keep(struct pg_txn *t, PGresult *r)
{
	PGresult	**n;
	size_t		 cap;

	if (t->nkept == t->capkept) {
		cap = t->capkept ? t->capkept * 2 : 8;
		if ((n = realloc(t->kept, cap * sizeof(*n))) == NULL)
			return STORE_ENOMEM;
		t->kept = n;
		t->capkept = cap;
	}
	t->kept[t->nkept++] = r;
	return 0;
}

/* What every statement of a transaction that failed answers. */
static int
txn_failure(const struct pg_txn *t)
{
	return t->lost ? STORE_EUNAVAIL : t->retry ? STORE_EBUSY :
	    t->need ? STORE_ENEEDED : STORE_EIO;
}

/*
 * A write runs in pipeline mode: its statements go out without waiting,
 * and their answers are read when one is needed (a get, a cursor, whether
 * a key was there) or when the write commits. A write of puts alone is
 * thus one round trip, BEGIN and COMMIT included.
 */
static void
pend_push(struct pg_txn *t, enum pg_pend_kind kind, enum store_db db,
    enum pg_stmt k)
{
	struct pg_pend *p = &t->pend[t->npend++];

	p->kind = kind;
	p->db = db;
	p->k = k;
}

/* An operation the pipeline could not send (out of memory, or the
 * connection broke): as a failed statement. */
static int
pipe_sendfail(struct pg_txn *t, const char *what)
{
	t->conn->bad = 1;
	return pg_fail(t, NULL, what);
}

/*
 * Reads the answers of every statement sent, in order, after asking the
 * server for them (a sync point when sync, which ends the pipeline's
 * aborted state). The answer of the last statement goes to *last when it
 * succeeded and last is not NULL. The first failure is noted in t and
 * returned; after it the server skipped the rest.
 */
static int
pipe_drain(struct pg_txn *t, int sync, PGresult **last)
{
	struct pg_conn	*c = t->conn;
	struct pg_pend	*p;
	PGresult	*r, *x;
	ExecStatusType	 st;
	const char	*state;
	int		 i, rc = 0, ok, gone = 0, commit;

	commit = t->npend > 0 && t->pend[t->npend - 1].kind == PEND_COMMIT;
	if (c->bad || PQstatus(c->pc) != CONNECTION_OK)
		gone = 1;
	else if (sync ? PQpipelineSync(c->pc) != 1 :
	    PQsendFlushRequest(c->pc) != 1 || PQflush(c->pc) != 0)
		gone = 1;
	if (!gone)
		atomic_fetch_add(&t->s->n_trips, 1);
	for (i = 0; i < t->npend && !gone; i++) {
		p = &t->pend[i];
		if ((r = PQgetResult(c->pc)) == NULL) {
			gone = 1;
			break;
		}
		while ((x = PQgetResult(c->pc)) != NULL)
			PQclear(x);
		st = PQresultStatus(r);
		ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
		if (ok && p->kind == PEND_COMMIT)
			ok = strcmp(PQcmdStatus(r), "COMMIT") == 0;
		if (!ok && p->kind == PEND_PREPARE)
			c->prepared[p->db] &= ~(1u << p->k);
		if (!ok && !t->failed && p->kind == PEND_STMT &&
		    p->k == PG_NEED && (state = PQresultErrorField(r,
		    PG_DIAG_SQLSTATE)) != NULL && strcmp(state, "22012") == 0) {
			/* store_need: the key is not there, nothing commits */
			t->failed = t->need = 1;
			rc = STORE_ENEEDED;
		} else if (!ok && !t->failed) {
			rc = pg_fail(t, r, p->kind == PEND_COMMIT ? "commit" :
			    "statement");
			/* Lost at the COMMIT, or without the server's word
			 * (a SQLSTATE) that it aborted the transaction before
			 * it: the COMMIT may have run. */
			if (t->lost && commit && (p->kind == PEND_COMMIT ||
			    PQresultErrorField(r, PG_DIAG_SQLSTATE) == NULL))
				t->unsure = 1;
		}
		if (ok && last != NULL && i == t->npend - 1)
			*last = r;
		else
			PQclear(r);
		if (PQstatus(c->pc) != CONNECTION_OK)
			gone = 1;
	}
	if (gone && !t->failed) {
		/* no answer at all: the server went away unheard */
		rc = pg_fail(t, NULL, commit ? "commit" : "pipeline");
		if (commit)
			t->unsure = 1;
	}
	if (sync && !gone) {
		r = PQgetResult(c->pc);
		if (r == NULL || PQresultStatus(r) != PGRES_PIPELINE_SYNC)
			c->bad = 1;
		PQclear(r);
	}
	if (gone)
		c->bad = 1;
	t->npend = 0;
	if (rc == 0 && t->failed)
		rc = txn_failure(t);
	return rc;
}

/*
 * Runs statement k on table db with nparams parameters (bytes; a negative
 * length marks a text one) and gives its result in *out, which the caller
 * clears (or keeps). Prepares the statement on first use on a connection.
 * In a write, out NULL means the answer may wait: the statement is only
 * sent (its failure shows later, at the latest at the commit).
 */
static int
stmt_run(struct pg_txn *t, enum store_db db, enum pg_stmt k, int nparams,
    const char *const *vals, const int *lens, PGresult **out)
{
	struct pg_conn	*c = t->conn;
	PGresult	*r;
	ExecStatusType	 st;
	char		 name[16], sql[256];
	int		 fmts[2], plens[2], i, rc;

	if (t->failed)
		return txn_failure(t);
	snprintf(name, sizeof(name), "fc%d_%d", (int)k, (int)db);
	for (i = 0; i < nparams; i++) {
		fmts[i] = lens[i] >= 0;
		plens[i] = lens[i] >= 0 ? lens[i] : 0;
	}
	if (!(c->prepared[db] & (1u << k)))
		snprintf(sql, sizeof(sql), "%sflowcgi_%s%s", stmt_sql[k][0],
		    store_db_names[db], stmt_sql[k][1]);
	if (t->pipe) {
		if (!(c->prepared[db] & (1u << k))) {
			if (PQsendPrepare(c->pc, name, sql, nparams, NULL)
			    != 1)
				return pipe_sendfail(t, "prepare");
			c->prepared[db] |= 1u << k;
			pend_push(t, PEND_PREPARE, db, k);
		}
		if (PQsendQueryPrepared(c->pc, name, nparams, vals, plens,
		    fmts, 1) != 1)
			return pipe_sendfail(t, "statement");
		pend_push(t, PEND_STMT, db, k);
		if (out == NULL && t->npend < PG_PIPE_MAX)
			return 0;
		r = NULL;
		if ((rc = pipe_drain(t, 0, out != NULL ? &r : NULL)) != 0)
			return rc;
		if (out != NULL)
			*out = r;
		return 0;
	}
	if (!(c->prepared[db] & (1u << k))) {
		atomic_fetch_add(&t->s->n_trips, 1);
		r = PQprepare(c->pc, name, sql, nparams, NULL);
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			rc = pg_fail(t, r, "prepare");
			PQclear(r);
			return rc;
		}
		PQclear(r);
		c->prepared[db] |= 1u << k;
	}
	atomic_fetch_add(&t->s->n_trips, 1);
	r = PQexecPrepared(c->pc, name, nparams, vals, plens, fmts, 1);
	st = PQresultStatus(r);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		rc = pg_fail(t, r, "statement");
		PQclear(r);
		return rc;
	}
	*out = r;
	return 0;
}

/* ====== Transactions ====== */

static void
txn_release(struct pg_txn *t)
{
	size_t i;

	for (i = 0; i < t->nkept; i++)
		PQclear(t->kept[i]);
	free(t->kept);
	t->kept = NULL;
	t->nkept = t->capkept = 0;
	pool_give(t->s, t->conn);
	t->conn = NULL;
}

/*
 * Takes a connection and runs begin on it, trying others while the pooled
 * ones turn out broken (the server restarted), until deadline. A write
 * (pipe) only sends its BEGIN, in pipeline mode, with what follows.
 */
static int
txn_start(struct pg_txn *t, const char *begin, int pipe, int64_t deadline)
{
	int rc;

	for (;;) {
		if ((rc = pool_take(t->s, deadline, &t->conn)) != 0)
			return rc;
		if (conn_ready(t->conn) != 0) {
			t->conn->bad = 1;
			pool_give(t->s, t->conn);	/* dropped */
			t->conn = NULL;
			continue;
		}
		if (pipe) {
			if (PQenterPipelineMode(t->conn->pc) == 1 &&
			    PQsendQueryParams(t->conn->pc, begin, 0, NULL,
			    NULL, NULL, NULL, 0) == 1) {
				t->pipe = 1;
				pend_push(t, PEND_BEGIN, 0, 0);
				return 0;
			}
			t->conn->bad = 1;
		} else if (conn_exec(t->conn, begin) == 0)
			return 0;
		if (PQstatus(t->conn->pc) == CONNECTION_OK) {
			pool_give(t->s, t->conn);	/* rolled back there */
			t->conn = NULL;
			return STORE_EIO;
		}
		pool_give(t->s, t->conn);	/* dropped */
		t->conn = NULL;
	}
}

static int
pg_read_begin(struct store *st, struct store_txn **out)
{
	struct pg	*s = (struct pg *)st;
	struct pg_txn	*t;
	int		 rc;

	if (pg_writing == s) {
		log_error("storage: a write function began a read transaction");
		return STORE_EBUSY;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return STORE_ENOMEM;
	t->base.be = &store_backend_pg;
	t->s = s;
	/* The snapshot is taken by the first statement, not by BEGIN: take
	 * it now, as LMDB does, in the same round trip. */
	if ((rc = txn_start(t, "BEGIN ISOLATION LEVEL REPEATABLE READ "
	    "READ ONLY; SELECT 1", 0, now_ms() + s->wait_ms)) != 0) {
		free(t);
		return rc;
	}
	*out = &t->base;
	return 0;
}

static void
pg_read_end(struct store_txn *tt)
{
	struct pg_txn *t = (struct pg_txn *)tt;

	/* Nothing to wait for: the answer is read when the connection is
	 * taken next (conn_ready), a round trip saved on every read. */
	if (PQstatus(t->conn->pc) == CONNECTION_OK && !t->conn->bad) {
		if (PQsendQuery(t->conn->pc, "ROLLBACK") == 1)
			t->conn->owed = 1;
		else
			t->conn->bad = 1;
	}
	txn_release(t);
	free(t);
}

/* Sleeps 1..2^min(n,6) ms, so that writers that collided part. */
static void
retry_pause(int n)
{
	static _Thread_local unsigned seed;

	if (seed == 0)
		seed = (unsigned)now_ms() ^ (unsigned)(uintptr_t)&seed;
	sleep_ms(1 + rand_r(&seed) % (1 << (n < 6 ? n : 6)));
}

/*
 * Ends the pipeline of a write that will not commit: reads what is left
 * (the server skipped it after a failure), then rolls back.
 */
static void
pipe_abandon(struct pg_txn *t)
{
	(void)pipe_drain(t, 1, NULL);
	if (!t->conn->bad && PQexitPipelineMode(t->conn->pc) != 1)
		t->conn->bad = 1;
	conn_rollback(t->conn);
}

/*
 * The commit of a write: COMMIT goes after its statements and every
 * answer is read at once. 0 once committed, else what failed (t says
 * whether to run it again).
 */
static int
pipe_commit(struct pg_txn *t)
{
	int rc;

	if (PQsendQueryParams(t->conn->pc, "COMMIT", 0, NULL, NULL, NULL,
	    NULL, 0) != 1) {
		rc = pipe_sendfail(t, "commit");
		pipe_abandon(t);
		return rc;
	}
	pend_push(t, PEND_COMMIT, 0, 0);
	rc = pipe_drain(t, 1, NULL);
	if (!t->conn->bad && PQexitPipelineMode(t->conn->pc) != 1)
		t->conn->bad = 1;
	if (rc != 0)
		conn_rollback(t->conn);
	return rc;
}

static int
pg_write(struct store *st, store_write_fn fn, void *arg)
{
	struct pg	*s = (struct pg *)st;
	struct pg_txn	 t;
	int64_t		 deadline = now_ms() + s->wait_ms;
	int		 rc, attempt;

	if (pg_writing == s) {
		log_error("storage: a write function called store_write");
		return STORE_EBUSY;
	}
	memset(&t, 0, sizeof(t));
	for (attempt = 0;; attempt++) {
		if (attempt > 0) {
			atomic_fetch_add(&s->n_retries, 1);
			retry_pause(attempt);
			/* The wait is for the server, not for the writers
			 * this one collided with. */
			if (!t.lost)
				deadline = now_ms() + s->wait_ms;
		}
		memset(&t, 0, sizeof(t));
		t.base.be = &store_backend_pg;
		t.s = s;
		t.id = atomic_fetch_add(&s->n_txn, 1) + 1;
		if ((rc = txn_start(&t, "BEGIN ISOLATION LEVEL SERIALIZABLE",
		    1, deadline)) != 0)
			break;
		pg_writing = s;
		rc = fn(&t.base, arg);
		pg_writing = NULL;
		if (t.retry || t.lost) {
			/* Not committed: run it again, a lost connection
			 * only while the wait lasts. */
			pipe_abandon(&t);
			txn_release(&t);
			if (t.retry && attempt < PG_MAX_RETRIES)
				continue;
			if (t.lost && now_ms() < deadline)
				continue;
			rc = t.lost ? STORE_EUNAVAIL : STORE_EBUSY;
			if (t.retry)
				log_error("storage: postgres: a write could "
				    "not be serialized in %d tries", attempt);
			break;
		}
		if (t.need) {
			/* a store_need whose answer came early: as LMDB */
			rc = STORE_ENEEDED;
			pipe_abandon(&t);
			txn_release(&t);
			break;
		}
		if (rc != 0 || t.failed) {
			if (rc == 0) {
				log_error("storage: a write function ignored "
				    "a storage error");
				rc = STORE_EIO;
			}
			pipe_abandon(&t);
			txn_release(&t);
			break;
		}
		rc = pipe_commit(&t);
		txn_release(&t);
		if (rc == 0) {
			atomic_fetch_add(&s->n_commits, 1);
			break;
		}
		/* A statement sent but not read yet failed (the commit
		 * carries them): not committed, as if fn had seen it. */
		if (t.unsure) {
			log_error("storage: postgres: connection lost at "
			    "commit: it may or may not have happened");
			rc = STORE_EUNAVAIL;
			break;
		}
		if (t.retry && attempt < PG_MAX_RETRIES)
			continue;
		if (t.lost && now_ms() < deadline)
			continue;
		break;
	}
	atomic_fetch_add(&s->n_writes, 1);
	return rc;
}

static uint64_t
pg_txn_id(const struct store_txn *t)
{
	return ((const struct pg_txn *)t)->id;
}

static void
pg_stats(struct store *st, struct store_stats *out)
{
	struct pg *s = (struct pg *)st;

	memset(out, 0, sizeof(*out));
	out->writes = atomic_load(&s->n_writes);
	out->commits = atomic_load(&s->n_commits);
	out->syncs = s->sync ? out->commits : 0;
	out->retries = atomic_load(&s->n_retries);
	out->batch_largest = out->commits > 0;
	out->durable = s->sync ? atomic_load(&s->n_txn) : 0;
	out->round_trips = atomic_load(&s->n_trips);
}

static int64_t
pg_map_size(struct store *st)
{
	(void)st;
	return 0;
}

/* ====== Records ====== */

static int
pg_get(struct store_txn *tt, enum store_db db, const void *key, size_t klen,
    const void **val, size_t *vlen)
{
	struct pg_txn	*t = (struct pg_txn *)tt;
	const char	*vals[1] = { klen > 0 ? key : "" };
	int		 lens[1] = { (int)klen };
	PGresult	*r = NULL;
	int		 rc;

	if ((rc = stmt_run(t, db, PG_GET, 1, vals, lens, &r)) != 0)
		return rc;
	if (PQntuples(r) == 0) {
		PQclear(r);
		return STORE_ENOTFOUND;
	}
	if ((rc = keep(t, r)) != 0) {
		PQclear(r);
		return rc;
	}
	*val = PQgetvalue(r, 0, 0);
	*vlen = (size_t)PQgetlength(r, 0, 0);
	return 0;
}

static int
pg_put(struct store_txn *tt, enum store_db db, const void *key, size_t klen,
    const void *val, size_t vlen, unsigned flags)
{
	struct pg_txn	*t = (struct pg_txn *)tt;
	const char	*vals[2] = { klen > 0 ? key : "", vlen > 0 ? val : "" };
	int		 lens[2] = { (int)klen, (int)vlen };
	PGresult	*r = NULL;
	int		 rc;

	if (vlen > INT32_MAX || klen > INT32_MAX)
		return STORE_EFULL;
	/* A plain put has nothing to say but a failure: in a write it goes
	 * out with the next statement that needs an answer, or the COMMIT. */
	if (t->pipe && !(flags & STORE_NOOVERWRITE))
		return stmt_run(t, db, PG_PUT, 2, vals, lens, NULL);
	rc = stmt_run(t, db, (flags & STORE_NOOVERWRITE) ? PG_INSERT : PG_PUT,
	    2, vals, lens, &r);
	if (rc != 0)
		return rc;
	if (strcmp(PQcmdTuples(r), "0") == 0)
		rc = STORE_EEXIST;
	PQclear(r);
	return rc;
}

static int
pg_del(struct store_txn *tt, enum store_db db, const void *key, size_t klen)
{
	struct pg_txn	*t = (struct pg_txn *)tt;
	const char	*vals[1] = { klen > 0 ? key : "" };
	int		 lens[1] = { (int)klen };
	PGresult	*r = NULL;
	int		 rc;

	if ((rc = stmt_run(t, db, PG_DEL, 1, vals, lens, &r)) != 0)
		return rc;
	if (strcmp(PQcmdTuples(r), "0") == 0)
		rc = STORE_ENOTFOUND;
	PQclear(r);
	return rc;
}

static int
pg_need(struct store_txn *tt, enum store_db db, const void *key,
    size_t klen)
{
	struct pg_txn	*t = (struct pg_txn *)tt;
	const char	*vals[1] = { klen > 0 ? key : "" };
	int		 lens[1] = { (int)klen };
	const void	*v;
	size_t		 n;
	int		 rc;

	/* in a write, the answer waits (pipe_drain reads its failure) */
	if (t->pipe)
		return stmt_run(t, db, PG_NEED, 1, vals, lens, NULL);
	rc = pg_get(tt, db, key, klen, &v, &n);
	return rc == STORE_ENOTFOUND ? STORE_ENEEDED : rc;
}

/* ====== Reads of one statement ====== */

/*
 * A single statement needs no transaction: under PostgreSQL's default
 * isolation (READ COMMITTED) one statement reads one snapshot, so a row
 * is as one committed write left it. A read of one key is then one round
 * trip, where BEGIN and ROLLBACK around it cost two more.
 */

/* A ready connection of the pool in t (no transaction), until deadline. */
static int
one_start(struct pg_txn *t, struct pg *s, int64_t deadline)
{
	int rc;

	memset(t, 0, sizeof(*t));
	t->base.be = &store_backend_pg;
	t->s = s;
	for (;;) {
		if ((rc = pool_take(s, deadline, &t->conn)) != 0)
			return rc;
		if (conn_ready(t->conn) == 0)
			return 0;
		t->conn->bad = 1;
		pool_give(s, t->conn);	/* dropped */
		t->conn = NULL;
	}
}

static int
pg_get_copy(struct store *st, enum store_db db, const void *key,
    size_t klen, void **val, size_t *vlen)
{
	struct pg	*s = (struct pg *)st;
	struct pg_txn	 t;
	const char	*vals[1] = { klen > 0 ? key : "" };
	int		 lens[1] = { (int)klen };
	int64_t		 deadline = now_ms() + s->wait_ms;
	PGresult	*r = NULL;
	size_t		 n;
	int		 rc;

	if (pg_writing == s) {
		log_error("storage: a write function read outside it");
		return STORE_EBUSY;
	}
	for (;;) {
		if ((rc = one_start(&t, s, deadline)) != 0)
			return rc;
		rc = stmt_run(&t, db, PG_GET, 1, vals, lens, &r);
		txn_release(&t);
		/* a connection found broken: another, while the wait lasts */
		if (rc == 0 || !t.lost || now_ms() >= deadline)
			break;
	}
	if (rc != 0)
		return rc;
	if (PQntuples(r) == 0)
		rc = STORE_ENOTFOUND;
	else {
		n = (size_t)PQgetlength(r, 0, 0);
		if ((*val = malloc(n > 0 ? n : 1)) == NULL)
			rc = STORE_ENOMEM;
		else {
			memcpy(*val, PQgetvalue(r, 0, 0), n);
			*vlen = n;
		}
	}
	PQclear(r);
	return rc;
}

static int
pg_generation(struct store *st, uint64_t *gen)
{
	struct pg	*s = (struct pg *)st;
	struct pg_txn	 t;
	int64_t		 deadline = now_ms() + s->wait_ms;
	PGresult	*r = NULL;
	char		 m[256];
	int		 rc;

	if (pg_writing == s) {
		log_error("storage: a write function read outside it");
		return STORE_EBUSY;
	}
	for (;;) {
		if ((rc = one_start(&t, s, deadline)) != 0)
			return rc;
		atomic_fetch_add(&s->n_trips, 1);
		r = PQexec(t.conn->pc, "SELECT n FROM flowcgi_generation");
		if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
			*gen = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
			rc = 0;
		} else if (PQstatus(t.conn->pc) != CONNECTION_OK)
			rc = STORE_EUNAVAIL;
		else {
			log_error("storage: postgres: read the generation: %s",
			    pq_message(PQresultErrorMessage(r), m, sizeof(m)));
			rc = STORE_EIO;
		}
		PQclear(r);
		txn_release(&t);
		if (rc != STORE_EUNAVAIL || now_ms() >= deadline)
			break;
	}
	return rc;
}

/* ====== Cursors ====== */

/*
 * A cursor holds one batch of rows in key order and walks it; moving past
 * either end asks for the next batch from the key it stands on, inside
 * the transaction (so it sees the transaction's own writes made before
 * that query).
 */

static int
pg_cursor_open(struct store_txn *tt, enum store_db db,
    struct store_cursor **out)
{
	struct pg_cursor *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return STORE_ENOMEM;
	c->base.be = &store_backend_pg;
	c->t = (struct pg_txn *)tt;
	c->db = db;
	c->batch = PG_BATCH_FIRST;
	*out = &c->base;
	return 0;
}

static void
pg_cursor_close(struct store_cursor *cc)
{
	free(cc);	/* its results die with the transaction */
}

static void
cursor_row(const struct pg_cursor *c, struct store_kv *kv)
{
	int row = c->desc ? c->n - 1 - c->pos : c->pos;

	kv->k = PQgetvalue(c->res, row, 0);
	kv->klen = (size_t)PQgetlength(c->res, row, 0);
	kv->v = PQgetvalue(c->res, row, 1);
	kv->vlen = (size_t)PQgetlength(c->res, row, 1);
}

/*
 * Fetches a batch with statement k from key (NULL for first/last) and
 * stands on its first row in walking order. STORE_ENOTFOUND when empty:
 * the cursor then stays where it was.
 */
static int
cursor_fetch(struct pg_cursor *c, enum pg_stmt k, const void *key,
    size_t klen, struct store_kv *kv)
{
	const char	*vals[2];
	int		 lens[2], n = 0, rc;
	char		 limit[16];
	PGresult	*r = NULL;

	snprintf(limit, sizeof(limit), "%d", c->batch);
	if (key != NULL) {
		vals[n] = klen > 0 ? key : "";
		lens[n++] = (int)klen;
	}
	vals[n] = limit;
	lens[n++] = -1;	/* text */
	if ((rc = stmt_run(c->t, c->db, k, n, vals, lens, &r)) != 0)
		return rc;
	if (PQntuples(r) == 0) {
		PQclear(r);
		if (k == PG_FIRST || k == PG_LAST || k == PG_GE)
			c->valid = 0;
		return STORE_ENOTFOUND;
	}
	if ((rc = keep(c->t, r)) != 0) {
		PQclear(r);
		return rc;
	}
	c->res = r;
	c->n = PQntuples(r);
	c->desc = k == PG_LAST || k == PG_LT;
	/* Fewer rows than asked for: the end of the table that way. A
	 * read's snapshot does not change, so the walk past it needs no
	 * query (a round trip saved at the end of most short walks); a
	 * write's cursor sees its own puts, so it asks again. */
	c->last = !c->t->pipe && c->n < c->batch;
	c->pos = c->desc ? c->n - 1 : 0;
	c->valid = 1;
	if (c->batch < PG_BATCH_MAX)
		c->batch *= 2;
	cursor_row(c, kv);
	return 0;
}

static int
pg_cursor_move(struct store_cursor *cc, int op, const void *key,
    size_t klen, struct store_kv *kv)
{
	struct pg_cursor	*c = (struct pg_cursor *)cc;
	struct store_kv		 cur;

	switch (op) {
	case STORE_CURSOR_FIRST:
		c->batch = PG_BATCH_FIRST;
		return cursor_fetch(c, PG_FIRST, NULL, 0, kv);
	case STORE_CURSOR_LAST:
		c->batch = PG_BATCH_FIRST;
		return cursor_fetch(c, PG_LAST, NULL, 0, kv);
	case STORE_CURSOR_SEEK:
		c->batch = PG_BATCH_FIRST;
		return cursor_fetch(c, PG_GE, key, klen, kv);
	case STORE_CURSOR_NEXT:
		if (!c->valid)	/* as LMDB: from the start */
			return cursor_fetch(c, PG_FIRST, NULL, 0, kv);
		if (c->pos + 1 < c->n) {
			c->pos++;
			cursor_row(c, kv);
			return 0;
		}
		if (c->last && !c->desc)
			return STORE_ENOTFOUND;
		cursor_row(c, &cur);
		return cursor_fetch(c, PG_GT, cur.k, cur.klen, kv);
	case STORE_CURSOR_PREV:
		if (!c->valid)
			return cursor_fetch(c, PG_LAST, NULL, 0, kv);
		if (c->pos > 0) {
			c->pos--;
			cursor_row(c, kv);
			return 0;
		}
		if (c->last && c->desc)
			return STORE_ENOTFOUND;
		cursor_row(c, &cur);
		return cursor_fetch(c, PG_LT, cur.k, cur.klen, kv);
	default:
		return STORE_EINVAL;
	}
}

/* ====== Slots ====== */

/*
 * Slot i of a name is the server's session advisory lock (key1, i), key1
 * a 31-bit FNV-1a hash of the name (two names sharing a hash share their
 * slots: one chance in two billion per pair), taken on slot_conn, a
 * connection of its own that this process keeps for them. A session may
 * take a lock it holds again, so the slots this process holds are also
 * listed in held: a second holder here skips them as another process
 * would. A slot is (key1 << 32) | i.
 */
static uint32_t
slot_key(const char *name)
{
	uint32_t h = 2166136261u;

	for (; *name != '\0'; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return h & 0x7fffffff;
}

/* Runs the advisory lock function fn on slot v; 1 when it answered true,
 * 0 false, or STORE_EUNAVAIL / STORE_EIO. slot_lock is held. */
static int
slot_call(struct pg *s, const char *fn, int64_t v)
{
	PGresult	*r;
	const char	*vals[2];
	char		 k1[16], k2[16], sql[80], m[256];
	int		 rc;

	snprintf(k1, sizeof(k1), "%d", (int)(v >> 32));
	snprintf(k2, sizeof(k2), "%d", (int)(v & 0x7fffffff));
	snprintf(sql, sizeof(sql), "SELECT %s($1::int4, $2::int4)", fn);
	vals[0] = k1;
	vals[1] = k2;
	atomic_fetch_add(&s->n_trips, 1);
	r = PQexecParams(s->slot_conn->pc, sql, 2, NULL, vals, NULL, NULL, 0);
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
		rc = PQgetvalue(r, 0, 0)[0] == 't';
	else if (PQstatus(s->slot_conn->pc) != CONNECTION_OK)
		rc = STORE_EUNAVAIL;
	else {
		log_error("storage: postgres: %s: %s", fn,
		    pq_message(PQresultErrorMessage(r), m, sizeof(m)));
		rc = STORE_EIO;
	}
	PQclear(r);
	return rc;
}

static int
pg_slot_take(struct store *st, const char *name, int n, int64_t *slot)
{
	struct pg	*s = (struct pg *)st;
	int64_t		 v, *nh;
	size_t		 j;
	int		 i, rc = 1, retried = 0;

	pthread_mutex_lock(&s->slot_lock);
	if (s->nheld == s->capheld) {
		j = s->capheld ? s->capheld * 2 : 16;
		if ((nh = realloc(s->held, j * sizeof(*nh))) == NULL) {
			pthread_mutex_unlock(&s->slot_lock);
			return STORE_ENOMEM;
		}
		s->held = nh;
		s->capheld = j;
	}
again:
	if (s->slot_conn != NULL && PQstatus(s->slot_conn->pc) !=
	    CONNECTION_OK) {
		/* the server dropped its locks with the session */
		conn_free(s->slot_conn);
		s->slot_conn = NULL;
	}
	if (s->slot_conn == NULL && (s->slot_conn = conn_new(s)) == NULL) {
		pthread_mutex_unlock(&s->slot_lock);
		return STORE_EUNAVAIL;
	}
	for (i = 0; i < n && rc == 1; i++) {
		v = (int64_t)slot_key(name) << 32 | i;
		for (j = 0; j < s->nheld && s->held[j] != v; j++)
			;
		if (j < s->nheld)
			continue;	/* ours already */
		if ((rc = slot_call(s, "pg_try_advisory_lock", v)) == 1) {
			s->held[s->nheld++] = v;
			*slot = v;
			rc = 0;
		} else if (rc == 0)
			rc = 1;
		else if (rc == STORE_EUNAVAIL && !retried) {
			/* broken since its last use (the server restarted):
			 * once more on a new connection */
			retried = 1;
			rc = 1;
			goto again;
		}
	}
	pthread_mutex_unlock(&s->slot_lock);
	return rc;
}

static void
pg_slot_give(struct store *st, int64_t slot)
{
	struct pg	*s = (struct pg *)st;
	size_t		 j;

	pthread_mutex_lock(&s->slot_lock);
	for (j = 0; j < s->nheld && s->held[j] != slot; j++)
		;
	if (j < s->nheld) {
		s->held[j] = s->held[--s->nheld];
		/* a broken session has dropped it already */
		if (s->slot_conn != NULL && PQstatus(s->slot_conn->pc) ==
		    CONNECTION_OK)
			(void)slot_call(s, "pg_advisory_unlock", slot);
	}
	pthread_mutex_unlock(&s->slot_lock);
}

/* ====== Open: the layout of the tables ====== */

/* Layout version 1: a table per named database. */
static int
layout_1(struct pg_conn *c)
{
	char	sql[256];
	int	i;

	for (i = 0; i < STORE_DB__COUNT; i++) {
		snprintf(sql, sizeof(sql), "CREATE TABLE IF NOT EXISTS "
		    "flowcgi_%s (k bytea PRIMARY KEY, v bytea NOT NULL)",
		    store_db_names[i]);
		if (conn_exec(c, sql) != 0)
			return -1;
	}
	return 0;
}

/* Layout version 2 adds the leases of the hosts (made by layout_1 on a new
 * database, which makes every table this build knows). */
static int
layout_2(struct pg_conn *c)
{
	return conn_exec(c, "CREATE TABLE IF NOT EXISTS flowcgi_leases "
	    "(k bytea PRIMARY KEY, v bytea NOT NULL)");
}

/*
 * Layout version 3 adds the configuration generation (store_generation):
 * one row, counted up by a trigger on every statement that writes apps,
 * drafts, versions or api_keys, in that statement's transaction. A
 * trigger rather than flowcgi's own writes, so that nothing that writes
 * those tables (a migration, an operator's SQL) can leave a cache stale.
 * Two writers of those tables in the same moment conflict on the row and
 * one runs again (SERIALIZABLE); they are console edits, not runs.
 */
static int
layout_3(struct pg_conn *c)
{
	static const char *const tables[] = { "apps", "drafts", "versions",
	    "api_keys" };
	char	sql[320];
	size_t	i;

	if (conn_exec(c, "CREATE TABLE IF NOT EXISTS flowcgi_generation "
	    "(n bigint NOT NULL)") != 0 ||
	    conn_exec(c, "INSERT INTO flowcgi_generation SELECT 1 WHERE NOT "
	    "EXISTS (SELECT 1 FROM flowcgi_generation)") != 0 ||
	    conn_exec(c, "CREATE OR REPLACE FUNCTION flowcgi_generation_bump() "
	    "RETURNS trigger LANGUAGE plpgsql AS $$BEGIN UPDATE "
	    "flowcgi_generation SET n = n + 1; RETURN NULL; END$$") != 0)
		return -1;
	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		snprintf(sql, sizeof(sql), "DROP TRIGGER IF EXISTS "
		    "flowcgi_generation ON flowcgi_%s", tables[i]);
		if (conn_exec(c, sql) != 0)
			return -1;
		snprintf(sql, sizeof(sql), "CREATE TRIGGER flowcgi_generation "
		    "AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "
		    "flowcgi_%s FOR EACH STATEMENT EXECUTE FUNCTION "
		    "flowcgi_generation_bump()", tables[i]);
		if (conn_exec(c, sql) != 0)
			return -1;
	}
	return 0;
}

/* layouts[v] brings the tables from layout v to v + 1. */
static int (*const layouts[PG_LAYOUT_VERSION])(struct pg_conn *) = {
	layout_1,
	layout_2,
	layout_3,
};

/*
 * Creates or upgrades the tables in one transaction, under an advisory
 * lock so that hosts starting together take turns. STORE_EVERSION when a
 * newer flowcgi made them.
 */
static int
layout_upgrade(struct pg *s, struct pg_conn *c)
{
	PGresult	*r = NULL;
	const char	*vals[1];
	char		 ver[16], m[256];
	long		 have = 0;
	int		 rc = STORE_EIO;

	if (conn_exec(c, "BEGIN") != 0 ||
	    conn_exec(c, "SELECT pg_advisory_xact_lock(" PG_LAYOUT_LOCK ")")
	    != 0 ||
	    conn_exec(c, "CREATE TABLE IF NOT EXISTS flowcgi_layout "
	    "(version integer NOT NULL)") != 0)
		goto out;
	r = PQexec(c->pc, "SELECT version FROM flowcgi_layout");
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		log_error("storage: postgres: read the layout version: %s",
		    pq_message(PQresultErrorMessage(r), m, sizeof(m)));
		goto out;
	}
	if (PQntuples(r) > 0)
		have = strtol(PQgetvalue(r, 0, 0), NULL, 10);
	else if (conn_exec(c, "INSERT INTO flowcgi_layout VALUES (0)") != 0)
		goto out;
	if (have > PG_LAYOUT_VERSION) {
		log_error("storage: postgres: tables of layout %ld, made by a "
		    "newer flowcgi (this one knows %d)", have,
		    PG_LAYOUT_VERSION);
		rc = STORE_EVERSION;
		goto out;
	}
	for (; have < PG_LAYOUT_VERSION; have++)
		if (layouts[have](c) != 0)
			goto out;
	PQclear(r);
	snprintf(ver, sizeof(ver), "%d", PG_LAYOUT_VERSION);
	vals[0] = ver;
	r = PQexecParams(c->pc, "UPDATE flowcgi_layout SET version = $1", 1,
	    NULL, vals, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		log_error("storage: postgres: write the layout version: %s",
		    pq_message(PQresultErrorMessage(r), m, sizeof(m)));
		goto out;
	}
	if (conn_exec(c, "COMMIT") == 0)
		rc = 0;
out:
	PQclear(r);
	if (rc != 0 && PQstatus(c->pc) == CONNECTION_OK)
		(void)conn_exec(c, "ROLLBACK");
	(void)s;
	return rc;
}

static void
pg_close(struct store *st)
{
	struct pg	*s = (struct pg *)st;
	struct pg_conn	*c;

	while ((c = s->idle) != NULL) {
		s->idle = c->next;
		conn_free(c);
	}
	if (s->slot_conn != NULL)
		conn_free(s->slot_conn);
	free(s->held);
	pthread_mutex_destroy(&s->slot_lock);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->freed);
	free(s->url);
	free(s);
}

static int
pg_open(const char *dir, const struct store_opts *o, struct store **out)
{
	struct pg	*s = NULL;
	struct pg_conn	*c = NULL;
	int		 rc;

	(void)dir;
	if (o->postgres_url == NULL || *o->postgres_url == '\0') {
		log_error("storage: storage.backend is postgres but "
		    "storage.postgres_url is empty");
		return STORE_ECONFIG;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return STORE_ENOMEM;
	s->base.be = &store_backend_pg;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->freed, NULL);
	pthread_mutex_init(&s->slot_lock, NULL);
	s->sync = o->sync;
	s->pool_size = o->pool_size > 0 ? o->pool_size : 8;
	s->wait_ms = o->wait_ms > 0 ? o->wait_ms : 10000;
	if ((s->url = strdup(o->postgres_url)) == NULL) {
		rc = STORE_ENOMEM;
		goto fail;
	}
	if ((rc = pool_take(s, now_ms() + s->wait_ms, &c)) != 0)
		goto fail;
	rc = layout_upgrade(s, c);
	pool_give(s, c);
	if (rc != 0)
		goto fail;
	*out = &s->base;
	return 0;
fail:
	pg_close(&s->base);
	return rc;
}

const struct store_backend store_backend_pg = {
	.name = "postgres",
	.open = pg_open,
	.close = pg_close,
	.map_size = pg_map_size,
	.stats = pg_stats,
	.read_begin = pg_read_begin,
	.read_end = pg_read_end,
	.write = pg_write,
	.txn_id = pg_txn_id,
	.get = pg_get,
	.put = pg_put,
	.del = pg_del,
	.need = pg_need,
	.cursor_open = pg_cursor_open,
	.cursor_close = pg_cursor_close,
	.cursor_move = pg_cursor_move,
	.slot_take = pg_slot_take,
	.slot_give = pg_slot_give,
	.get_copy = pg_get_copy,
	.generation = pg_generation,
};
