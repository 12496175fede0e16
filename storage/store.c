/*
 * store.c — the LMDB environment, transactions, cursors and map growth.
 *
 * Growth: mdb_env_set_mapsize may only run while this process has no open
 * transaction. Every transaction therefore holds resize_lock for reading,
 * and growing the map takes it for writing. When another process grew the
 * map, LMDB reports MDB_MAP_RESIZED at begin and we adopt the new size the
 * same way.
 *
 * Group commit: writers of this process queue in wq; the first one finding
 * no leader leads a batch (itself and those queued behind it, up to
 * batch_max) through one write transaction, then hands the lead to the
 * first writer still queued. Processes are serialized by LMDB's own write
 * lock, as before; docs/architecture.md says why and what it costs.
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lmdb.h>

#include "conf/conf.h"
#include "storage/storage.h"

static const char *const db_names[STORE_DB__COUNT] = {
	[STORE_DB_APPS] = "apps",
	[STORE_DB_ASSETS] = "assets",
	[STORE_DB_BLOBS] = "blobs",
	[STORE_DB_BLOBREFS] = "blobrefs",
	[STORE_DB_RUNS] = "runs",
	[STORE_DB_RUNS_BY_APP] = "runs_by_app",
	[STORE_DB_NODE_RUNS] = "node_runs",
	[STORE_DB_CONVERSATIONS] = "conversations",
	[STORE_DB_MESSAGES] = "messages",
	[STORE_DB_API_KEYS] = "api_keys",
	[STORE_DB_SETTINGS] = "settings",
	[STORE_DB_META] = "meta",
	[STORE_DB_IMPORTS] = "imports",
	[STORE_DB_DRAFTS] = "drafts",
	[STORE_DB_UPLOADS] = "uploads",
	[STORE_DB_VERSIONS] = "versions",
};

/*
 * With sync on, the most batches one leader writes in a row before it hands
 * the lead on: more share flushes, but the leader's own caller waits for
 * all of them.
 */
#ifndef LEAD_ROUNDS
#define LEAD_ROUNDS 8
#endif

/* A caller of store_write, queued on its own stack until it is done. */
struct store_writer {
	store_write_fn		 fn;
	void			*arg;
	int			 rc;
	int			 settled;	/* rc final: leader's view */
	int			 done;		/* rc final: under wq_lock */
	sem_t			 wake;		/* done, or its turn to lead */
	struct store_writer	*next;
};

struct store {
	MDB_env			*env;
	MDB_dbi			 dbi[STORE_DB__COUNT];
	pthread_rwlock_t	 resize_lock;
	int64_t			 max_map_size;
	int			 sync;
	int			 writemap;	/* MDB_WRITEMAP */
	int			 batch_max;
	pthread_mutex_t		 wq_lock;	/* wq_head, wq_tail, leading */
	struct store_writer	*wq_head, **wq_tail;
	int			 leading;	/* a batch is being written */
	pthread_mutex_t		 flush_lock;	/* one mdb_env_sync at a time */
	atomic_uint_fast64_t	 flushed;	/* txns up to this are durable */
	atomic_uint_fast64_t	 n_writes, n_commits, n_syncs, n_retries;
	atomic_uint_fast64_t	 n_largest, n_waiting, n_flushes;
};

struct store_txn {
	struct store	*s;
	MDB_txn		*txn;
};

struct store_cursor {
	MDB_cursor	*cur;
};

int
store_db_find(const char *name)
{
	int i;

	for (i = 0; i < STORE_DB__COUNT; i++)
		if (strcmp(db_names[i], name) == 0)
			return i;
	return -1;
}

const char *
store_strerror(int rc)
{
	switch (rc) {
	case STORE_OK: return "success";
	case STORE_ENOTFOUND: return "not found";
	case STORE_EEXIST: return "already exists";
	case STORE_EFULL: return "storage is full (storage.max_map_size)";
	case STORE_ENOSPC: return "no space left on the disk for the database";
	case STORE_EIO: return "storage input/output error";
	case STORE_ENOMEM: return "out of memory";
	case STORE_EVERSION: return "data directory written by a newer flowcgi";
	case STORE_EINVAL: return "stored record is damaged";
	case STORE_EMAPFULL: return "storage map full";
	case STORE_EBUSY: return "storage busy (too many readers)";
	default: return "unknown storage error";
	}
}

/* Translates an MDB_* or errno value; logs the ones that mean trouble. */
static int
mdb_err(int rc, const char *what)
{
	switch (rc) {
	case MDB_SUCCESS: return STORE_OK;
	case MDB_NOTFOUND: return STORE_ENOTFOUND;
	case MDB_KEYEXIST: return STORE_EEXIST;
	case MDB_MAP_FULL: return STORE_EMAPFULL;
	case MDB_READERS_FULL: return STORE_EBUSY;
	case ENOMEM: return STORE_ENOMEM;
	default:
		log_error("storage: %s: %s", what, mdb_strerror(rc));
		return STORE_EIO;
	}
}

/* ====== Map growth ====== */

/*
 * With sync off the map is written in place (MDB_WRITEMAP): a commit is
 * then stores into the map, not a pwrite of each dirty page from a copy,
 * about a quarter of a run's CPU through nginx. (With sync on it costs more
 * than it saves: each flush write-protects the pages it wrote, and the next
 * commit's stores fault them back in one by one.) Every page of the map
 * must then have its blocks on the disk before LMDB can touch it: a store
 * into a hole of a sparse file on a full disk is a SIGBUS, not an error.
 * And LMDB sets the data file's length to the map size (ftruncate) whenever
 * the map is set, so a process that set a smaller map than another's would
 * cut the file under that other process's map (a SIGBUS there). Hence every change of the map
 * size, at open, at growth and when adopting another process's growth:
 *  - holds resize_lock for writing (this process's transactions) and an
 *    exclusive flock on the data file (the other processes' changes);
 *  - never asks for less than the file's length;
 *  - reserves the blocks (posix_fallocate) before LMDB maps them.
 * The data file thus takes its map size on disk: at most about twice what
 * it holds, as the map doubles when full.
 */

/* flock(fd, op), through signals; 0 or STORE_EIO. */
static int
fd_lock(int fd, int op)
{
	while (flock(fd, op) != 0)
		if (errno != EINTR) {
			log_error("storage: lock the data file: %s",
			    strerror(errno));
			return STORE_EIO;
		}
	return 0;
}

static int
file_lock(struct store *s, int op)
{
	int	fd;

	if (mdb_env_get_fd(s->env, &fd) != 0)
		return STORE_EIO;
	return fd_lock(fd, op);
}

static int64_t
file_size(struct store *s)
{
	struct stat	st;
	int		fd;

	if (mdb_env_get_fd(s->env, &fd) != 0 || fstat(fd, &st) != 0)
		return -1;
	return (int64_t)st.st_size;
}

/* Reserves the blocks of the first size bytes of the data file. */
static int
map_reserve(struct store *s, size_t size)
{
	int	fd, rc;

	if (!s->writemap)
		return 0;	/* LMDB writes with pwrite: ENOSPC there */
	if (mdb_env_get_fd(s->env, &fd) != 0)
		return STORE_EIO;
	if ((rc = posix_fallocate(fd, 0, (off_t)size)) == 0)
		return 0;
	log_error("storage: reserve %zu bytes for the map: %s", size,
	    strerror(rc));
	/* EFBIG: past the process's file size limit, as good as full */
	return rc == ENOSPC || rc == EDQUOT || rc == EFBIG ? STORE_ENOSPC :
	    STORE_EIO;
}

/*
 * Sets the map to at least want bytes and at least the data file's length
 * (0: just the file's length, adopting another process's growth). Called
 * with resize_lock held for writing.
 */
static int
map_set(struct store *s, size_t want)
{
	int64_t	len;
	int	rc;

	if ((rc = file_lock(s, LOCK_EX)) != 0)
		return rc;
	if ((len = file_size(s)) < 0)
		rc = STORE_EIO;
	else {
		if ((size_t)len > want)
			want = (size_t)len;
		if ((rc = map_reserve(s, want)) == 0)
			rc = mdb_err(mdb_env_set_mapsize(s->env, want),
			    "set map size");
	}
	(void)file_lock(s, LOCK_UN);
	return rc;
}

/* Adopts the map size another process grew the map to. */
static int
store_adopt_mapsize(struct store *s)
{
	int rc;

	pthread_rwlock_wrlock(&s->resize_lock);
	rc = map_set(s, 0);
	pthread_rwlock_unlock(&s->resize_lock);
	return rc;
}

int64_t
store_map_size(struct store *s)
{
	MDB_envinfo info;

	if (mdb_env_info(s->env, &info) != 0)
		return -1;
	return (int64_t)info.me_mapsize;
}

/*
 * Grows the map after a transaction begun with a map of seen bytes found
 * it full. Another thread of this process may have grown it meanwhile:
 * then the retry uses that, rather than every waiting thread doubling it.
 */
static int
store_grow(struct store *s, size_t seen)
{
	MDB_envinfo	info;
	size_t		cur, next;
	int		rc = 0;

	pthread_rwlock_wrlock(&s->resize_lock);
	mdb_env_info(s->env, &info);
	cur = info.me_mapsize;
	if (cur > seen)
		goto out;
	/* Another process may have grown the map already: adopt that first. */
	if (file_size(s) > (int64_t)cur) {
		rc = map_set(s, 0);
		goto out;
	}
	if ((int64_t)cur >= s->max_map_size) {
		rc = STORE_EFULL;
		goto out;
	}
	next = cur * 2;
	if ((int64_t)next > s->max_map_size)
		next = (size_t)s->max_map_size;
	log_info("storage: map full at %zu bytes, growing to %zu", cur, next);
	rc = map_set(s, next);
out:
	pthread_rwlock_unlock(&s->resize_lock);
	return rc;
}

/* ====== Transactions ====== */

static int
txn_begin(struct store *s, unsigned flags, MDB_txn **out)
{
	int rc;

	for (;;) {
		pthread_rwlock_rdlock(&s->resize_lock);
		rc = mdb_txn_begin(s->env, NULL, flags, out);
		if (rc == 0)
			return 0;	/* resize_lock held until the end */
		pthread_rwlock_unlock(&s->resize_lock);
		if (rc != MDB_MAP_RESIZED)
			return mdb_err(rc, "begin transaction");
		if ((rc = store_adopt_mapsize(s)) != 0)
			return rc;
	}
}

/*
 * The store whose write transaction this thread is running write functions
 * in: store_write and store_read_begin refuse to nest in it.
 */
static __thread struct store *writing;

int
store_read_begin(struct store *s, struct store_txn **out)
{
	struct store_txn	*t;
	int			 rc;

	if (writing == s) {
		log_error("storage: a write function began a read transaction");
		return STORE_EBUSY;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return STORE_ENOMEM;
	t->s = s;
	if ((rc = txn_begin(s, MDB_RDONLY, &t->txn)) != 0) {
		free(t);
		return rc;
	}
	*out = t;
	return 0;
}

void
store_read_end(struct store_txn *t)
{
	if (t == NULL)
		return;
	mdb_txn_abort(t->txn);
	pthread_rwlock_unlock(&t->s->resize_lock);
	free(t);
}

/* ====== Writes: group commit ====== */

/*
 * 0 while t can still be used. A write function that swallowed an LMDB
 * error (and returned 0) leaves its transaction refusing everything with
 * MDB_BAD_TXN; the lookup finds that out before the next writer of the
 * batch is blamed for it.
 */
static int
txn_usable(struct store_txn *t)
{
	MDB_val	k = { 14, "schema_version" }, v;
	int	rc;

	rc = mdb_get(t->txn, t->s->dbi[STORE_DB_META], &k, &v);
	return rc == MDB_NOTFOUND ? 0 : mdb_err(rc, "write");
}

static struct store_writer *
next_pending(struct store_writer *w)
{
	while (w != NULL && w->settled)
		w = w->next;
	return w;
}

/* Gives rc to the pending writers from w through last (NULL: to the end). */
static void
settle(struct store_writer *w, struct store_writer *last, int rc)
{
	for (; w != NULL; w = w->next) {
		if (!w->settled) {
			w->rc = rc;
			w->settled = 1;
		}
		if (w == last)
			break;
	}
}

static void
stat_largest(struct store *s, uint_fast64_t n)
{
	uint_fast64_t cur = atomic_load(&s->n_largest);

	while (n > cur && !atomic_compare_exchange_weak(&s->n_largest, &cur,
	    n))
		;
}

static void
flushed_at_least(struct store *s, uint64_t id)
{
	uint_fast64_t cur = atomic_load(&s->flushed);

	while (id > cur && !atomic_compare_exchange_weak(&s->flushed, &cur,
	    id))
		;
}

/*
 * Runs the writers of list in order, in as few transactions as it can, and
 * settles each. Normally that is one transaction and one commit. Otherwise:
 *  - a writer whose fn fails gets its code; the transaction is aborted and
 *    the others run again, without it, in a fresh one (failures are rare:
 *    cheaper than a nested transaction around every fn);
 *  - a full map (in any fn or at commit): abort, grow, run them all again;
 *    when the map cannot grow, or a commit fails, each pending writer runs
 *    alone from then on, so that the verdict is its own.
 */
static void
batch_run(struct store *s, struct store_writer *list, uint64_t *committed)
{
	struct store_txn	 t = { s, NULL };
	struct store_writer	*first, *last, *w, *failed;
	MDB_envinfo		 info;
	double			 t0;
	int			 rc, alone = 0, again = 0, n;
	uint64_t		 id;

	while ((first = next_pending(list)) != NULL) {
		if (again++ > 0)
			atomic_fetch_add(&s->n_retries, 1);
		if ((rc = txn_begin(s, 0, &t.txn)) != 0) {
			settle(first, NULL, rc);
			return;
		}
		mdb_env_info(s->env, &info);	/* stable under resize_lock */
		failed = last = NULL;
		n = 0;
		for (w = first; w != NULL; w = next_pending(w->next)) {
			last = w;
			n++;
			rc = w->fn(&t, w->arg);
			if (alone)
				break;
			if (rc == 0 && next_pending(w->next) != NULL)
				rc = txn_usable(&t);
			if (rc != 0) {
				failed = w;
				break;
			}
		}
		id = mdb_txn_id(t.txn);
		if (rc == 0) {
			t0 = metric_clock();
			rc = mdb_err(mdb_txn_commit(t.txn), "commit");
			metric_observe(METRIC_STORE_COMMIT_DURATION, NULL,
			    metric_clock() - t0);
		} else
			mdb_txn_abort(t.txn);
		pthread_rwlock_unlock(&s->resize_lock);
		if (rc == 0) {
			*committed = id;
			/* Its flush made the meta page before it durable. */
			flushed_at_least(s, id - 1);
			atomic_fetch_add(&s->n_commits, 1);
			if (s->sync) {
				atomic_fetch_add(&s->n_syncs, 1);
				metric_add(METRIC_STORE_FSYNCS, NULL, 1);
			}
			stat_largest(s, (uint_fast64_t)n);
			settle(first, last, 0);
			continue;
		}
		if (rc == STORE_EMAPFULL) {
			if ((rc = store_grow(s, info.me_mapsize)) == 0)
				continue;
			if (!alone && next_pending(first->next) != NULL) {
				alone = 1;	/* together they do not fit */
				continue;
			}
			settle(first, first, rc);
		} else if (failed != NULL && !alone)
			settle(failed, failed, rc);
		else if (!alone && n > 1)
			alone = 1;	/* the commit failed: find out whose */
		else
			settle(first, first, rc);
	}
}

/*
 * Makes the commit of txn id durable: LMDB flushed its pages before writing
 * its meta page (MDB_NOMETASYNC), and the next flush of the file, by any
 * commit or by this, makes the meta page durable too. One flush at a time;
 * it covers every commit whose meta page was written before it began.
 */
static int
flush_to(struct store *s, uint64_t id)
{
	MDB_envinfo	info;
	int		rc = 0;

	if (id == 0 || atomic_load(&s->flushed) >= id)
		return 0;
	pthread_mutex_lock(&s->flush_lock);
	if (atomic_load(&s->flushed) < id) {
		pthread_rwlock_rdlock(&s->resize_lock);
		mdb_env_info(s->env, &info);
		pthread_rwlock_unlock(&s->resize_lock);
		atomic_fetch_add(&s->n_flushes, 1);
		metric_add(METRIC_STORE_FSYNCS, NULL, 1);
		if ((rc = mdb_err(mdb_env_sync(s->env, 1), "flush")) == 0)
			flushed_at_least(s, info.me_last_txnid);
	}
	pthread_mutex_unlock(&s->flush_lock);
	return rc;
}

/* A flush that failed fails every write of the batch it was for. */
static void
flush_batch(struct store *s, struct store_writer *list, uint64_t id)
{
	int rc;

	if (!s->sync || (rc = flush_to(s, id)) == 0)
		return;
	for (; list != NULL; list = list->next)
		if (list->rc == 0)
			list->rc = rc;
}

/* Detaches the batch that starts at lead (the queue's head): up to
 * batch_max writers. Under wq_lock. */
static void
take_batch(struct store *s, struct store_writer *lead)
{
	struct store_writer	*w;
	int			 n;

	for (w = lead, n = 1; n < s->batch_max && w->next != NULL; n++)
		w = w->next;
	if ((s->wq_head = w->next) == NULL)
		s->wq_tail = &s->wq_head;
	w->next = NULL;
	atomic_fetch_sub(&s->n_waiting, (uint_fast64_t)n);
}

/* Answers the writers of a written batch, all but the leader (me). */
static void
answer(struct store *s, struct store_writer *list, struct store_writer *me)
{
	struct store_writer *w, *next;

	pthread_mutex_lock(&s->wq_lock);
	for (w = list; w != NULL; w = w->next)
		w->done = 1;
	pthread_mutex_unlock(&s->wq_lock);
	for (w = list; w != NULL; w = next) {
		next = w->next;	/* w may return once posted */
		if (w != me)
			sem_post(&w->wake);
	}
}

int
store_write(struct store *s, store_write_fn fn, void *arg)
{
	struct store_writer	 me, *lead, *prev = NULL, *head;
	uint64_t		 last = 0, prev_last = 0;
	int			 rounds;

	if (writing == s) {
		log_error("storage: a write function called store_write");
		return STORE_EBUSY;
	}
	memset(&me, 0, sizeof(me));
	me.fn = fn;
	me.arg = arg;
	if (s->batch_max <= 1) {
		writing = s;
		batch_run(s, &me, &last);
		writing = NULL;
		flush_batch(s, &me, last);
		atomic_fetch_add(&s->n_writes, 1);
		return me.rc;
	}
	/* A semaphore, not a condition: the leader wakes writers after
	 * letting go of wq_lock, so that they do not wake only to wait for
	 * it; a waiter leaves only after its post, so its wake (on its
	 * stack) outlives every use. */
	sem_init(&me.wake, 0, 0);
	pthread_mutex_lock(&s->wq_lock);
	*s->wq_tail = &me;
	s->wq_tail = &me.next;
	atomic_fetch_add(&s->n_waiting, 1);
	while (!me.done && (s->leading || s->wq_head != &me)) {
		pthread_mutex_unlock(&s->wq_lock);
		while (sem_wait(&me.wake) != 0 && errno == EINTR)
			;
		if (me.done)	/* set before the post */
			goto out;
		pthread_mutex_lock(&s->wq_lock);
	}
	if (!me.done) {
		/* Lead: take this writer and those behind it. With sync on,
		 * keep leading while writers queue (up to LEAD_ROUNDS
		 * batches): the next batch's commit flushes its pages, which
		 * makes this batch's meta page durable too, so one flush a
		 * batch instead of two, and no wait for another thread to
		 * wake. Without sync, hand the lead on at once. */
		s->leading = 1;
		for (lead = &me, rounds = 1;; rounds++) {
			take_batch(s, lead);
			pthread_mutex_unlock(&s->wq_lock);
			writing = s;
			batch_run(s, lead, &last);
			writing = NULL;
			if (prev != NULL) {
				flush_batch(s, prev, prev_last);
				answer(s, prev, &me);
			}
			pthread_mutex_lock(&s->wq_lock);
			head = s->wq_head;
			if (!s->sync || head == NULL || rounds >= LEAD_ROUNDS)
				break;
			prev = lead;
			prev_last = last;
			lead = head;
		}
		/* Hand the lead on before the flush, which the next batch
		 * need not wait for. */
		s->leading = 0;
		pthread_mutex_unlock(&s->wq_lock);
		if (head != NULL)
			sem_post(&head->wake);
		flush_batch(s, lead, last);
		answer(s, lead, &me);
	} else
		pthread_mutex_unlock(&s->wq_lock);
out:
	sem_destroy(&me.wake);
	atomic_fetch_add(&s->n_writes, 1);
	return me.rc;
}

void
store_stats(struct store *s, struct store_stats *out)
{
	out->writes = atomic_load(&s->n_writes);
	out->commits = atomic_load(&s->n_commits);
	out->syncs = atomic_load(&s->n_syncs);
	out->retries = atomic_load(&s->n_retries);
	out->batch_largest = atomic_load(&s->n_largest);
	out->waiting = atomic_load(&s->n_waiting);
	out->flushes = atomic_load(&s->n_flushes);
	out->durable = atomic_load(&s->flushed);
}

uint64_t
store_txn_id(const struct store_txn *t)
{
	return mdb_txn_id(t->txn);
}

/* ====== Records ====== */

int
store_get(struct store_txn *t, enum store_db db, const void *key, size_t klen,
    const void **val, size_t *vlen)
{
	MDB_val	k = { klen, (void *)key }, v;
	int	rc;

	if ((rc = mdb_get(t->txn, t->s->dbi[db], &k, &v)) != 0)
		return mdb_err(rc, "get");
	*val = v.mv_data;
	*vlen = v.mv_size;
	return 0;
}

int
store_put(struct store_txn *t, enum store_db db, const void *key, size_t klen,
    const void *val, size_t vlen, unsigned flags)
{
	MDB_val k = { klen, (void *)key }, v = { vlen, (void *)val };

	return mdb_err(mdb_put(t->txn, t->s->dbi[db], &k, &v,
	    (flags & STORE_NOOVERWRITE) ? MDB_NOOVERWRITE : 0), "put");
}

int
store_del(struct store_txn *t, enum store_db db, const void *key, size_t klen)
{
	MDB_val k = { klen, (void *)key };

	return mdb_err(mdb_del(t->txn, t->s->dbi[db], &k, NULL), "delete");
}

int
store_get_json(struct store_txn *t, enum store_db db, const char *key,
    json_t **out)
{
	const void	*v = NULL;
	size_t		 vlen = 0;
	json_t		*j;
	int		 rc;

	if ((rc = store_get(t, db, key, strlen(key), &v, &vlen)) != 0)
		return rc;
	if ((j = json_loadb(v, vlen, 0, NULL)) == NULL) {
		log_error("storage: %s/%s: damaged record", db_names[db], key);
		return STORE_EINVAL;
	}
	*out = j;
	return 0;
}

int
store_put_json(struct store_txn *t, enum store_db db, const char *key,
    const json_t *val, unsigned flags)
{
	char	*s;
	size_t	 len;
	int	 rc;

	if ((s = store_json_text(val, &len)) == NULL)
		return STORE_ENOMEM;
	rc = store_put(t, db, key, strlen(key), s, len, flags);
	free(s);
	return rc;
}

/* ====== Cursors ====== */

int
store_cursor_open(struct store_txn *t, enum store_db db,
    struct store_cursor **out)
{
	struct store_cursor	*c;
	int			 rc;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return STORE_ENOMEM;
	if ((rc = mdb_cursor_open(t->txn, t->s->dbi[db], &c->cur)) != 0) {
		free(c);
		return mdb_err(rc, "cursor");
	}
	*out = c;
	return 0;
}

void
store_cursor_close(struct store_cursor *c)
{
	if (c == NULL)
		return;
	mdb_cursor_close(c->cur);
	free(c);
}

static int
cursor_op(struct store_cursor *c, MDB_val *k, MDB_cursor_op op,
    struct store_kv *kv)
{
	MDB_val	v;
	int	rc;

	if ((rc = mdb_cursor_get(c->cur, k, &v, op)) != 0)
		return mdb_err(rc, "cursor get");
	kv->k = k->mv_data;
	kv->klen = k->mv_size;
	kv->v = v.mv_data;
	kv->vlen = v.mv_size;
	return 0;
}

int
store_cursor_first(struct store_cursor *c, struct store_kv *kv)
{
	MDB_val k = { 0, NULL };

	return cursor_op(c, &k, MDB_FIRST, kv);
}

int
store_cursor_last(struct store_cursor *c, struct store_kv *kv)
{
	MDB_val k = { 0, NULL };

	return cursor_op(c, &k, MDB_LAST, kv);
}

int
store_cursor_seek(struct store_cursor *c, const void *key, size_t klen,
    struct store_kv *kv)
{
	MDB_val k = { klen, (void *)key };

	return cursor_op(c, &k, MDB_SET_RANGE, kv);
}

int
store_cursor_next(struct store_cursor *c, struct store_kv *kv)
{
	MDB_val k = { 0, NULL };

	return cursor_op(c, &k, MDB_NEXT, kv);
}

int
store_cursor_prev(struct store_cursor *c, struct store_kv *kv)
{
	MDB_val k = { 0, NULL };

	return cursor_op(c, &k, MDB_PREV, kv);
}

/* ====== Open, schema and migrations ====== */

/*
 * migrations[v] brings a database at schema version v to v + 1 inside the
 * write transaction that records the new version. Version 0 is an empty
 * environment.
 */
typedef int (*store_migrate_fn)(struct store_txn *t);

static int
migrate_0_to_1(struct store_txn *t)
{
	(void)t;	/* the named databases were created at open */
	return 0;
}

/*
 * Version 2 keeps an app's draft DSL in its own database (drafts), so that
 * reading or listing apps does not parse every draft: move the "dsl" field
 * of each apps record there.
 */
static int
migrate_1_to_2(struct store_txn *t)
{
	struct store_cursor	*c = NULL;
	struct store_kv		 kv = { NULL, 0, NULL, 0 };
	json_t			*all = NULL, *rec, *dsl;
	const char		*id;
	size_t			 i;
	int			 rc;

	if ((all = json_array()) == NULL)
		return STORE_ENOMEM;
	if ((rc = store_cursor_open(t, STORE_DB_APPS, &c)) != 0)
		goto out;
	for (rc = store_cursor_first(c, &kv); rc == 0;
	     rc = store_cursor_next(c, &kv))
		if ((rec = json_loadb(kv.v, kv.vlen, 0, NULL)) != NULL)
			json_array_append_new(all, rec);
	store_cursor_close(c);
	c = NULL;
	if (rc != STORE_ENOTFOUND)
		goto out;
	rc = 0;
	json_array_foreach(all, i, rec) {
		id = json_string_value(json_object_get(rec, "id"));
		dsl = json_object_get(rec, "dsl");
		if (id == NULL || dsl == NULL)
			continue;
		if ((rc = store_put_json(t, STORE_DB_DRAFTS, id, dsl, 0)) != 0)
			goto out;
		json_object_del(rec, "dsl");
		if ((rc = store_put_json(t, STORE_DB_APPS, id, rec, 0)) != 0)
			goto out;
	}
out:
	store_cursor_close(c);
	json_decref(all);
	return rc;
}

/*
 * Version 3 stores a run's node executions as one record under the run id
 * (engine/run/run.c). Older records stay as they are and are still read, so
 * nothing moves; the version only keeps an older flowcgi, which would not
 * find the new records, from opening the data.
 */
static int
migrate_2_to_3(struct store_txn *t)
{
	(void)t;
	return 0;
}

/*
 * Version 4 keeps published versions of workflow apps (versions, opened
 * empty at store_open). An app never published runs its draft, so nothing
 * moves; the version keeps an older flowcgi, which would run the draft of
 * a published app, from opening the data.
 */
static int
migrate_3_to_4(struct store_txn *t)
{
	(void)t;
	return 0;
}

static const store_migrate_fn migrations[STORE_SCHEMA_VERSION] = {
	migrate_0_to_1,
	migrate_1_to_2,
	migrate_2_to_3,
	migrate_3_to_4,
};

static int
schema_migrate(struct store_txn *t, void *arg)
{
	const void	*v = NULL;
	size_t		 vlen = 0;
	char		 buf[16];
	long		 have = 0;
	int		 rc, n;

	(void)arg;
	rc = store_get(t, STORE_DB_META, "schema_version", 14, &v, &vlen);
	if (rc == 0) {
		if (vlen >= sizeof(buf))
			return STORE_EINVAL;
		memcpy(buf, v, vlen);
		buf[vlen] = '\0';
		have = strtol(buf, NULL, 10);
	} else if (rc != STORE_ENOTFOUND)
		return rc;
	if (have > STORE_SCHEMA_VERSION)
		return STORE_EVERSION;
	if (have == STORE_SCHEMA_VERSION)
		return 0;
	for (; have < STORE_SCHEMA_VERSION; have++)
		if ((rc = migrations[have](t)) != 0)
			return rc;
	n = snprintf(buf, sizeof(buf), "%d", STORE_SCHEMA_VERSION);
	return store_put(t, STORE_DB_META, "schema_version", 14, buf,
	    (size_t)n, 0);
}

static int
open_dbis(struct store_txn *t, void *arg)
{
	struct store	*s = arg;
	int		 i, rc;

	for (i = 0; i < STORE_DB__COUNT; i++) {
		rc = mdb_dbi_open(t->txn, db_names[i], MDB_CREATE, &s->dbi[i]);
		if (rc != 0)
			return mdb_err(rc, "open database");
	}
	return 0;
}

/*
 * Opens dir's data file (creating it empty: LMDB takes an empty file for a
 * new one) and takes its file lock, as map_set does.
 */
static int
data_file_lock(const char *dir)
{
	char	path[4096];
	int	fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/data.mdb", dir) >=
	    sizeof(path)) {
		log_error("storage: data directory path too long");
		return -1;
	}
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0) {
		log_error("storage: open %s: %s", path, strerror(errno));
		return -1;
	}
	if (fd_lock(fd, LOCK_EX) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int
store_open(const char *dir, const struct store_opts *o, struct store **out)
{
	struct store	*s = NULL;
	struct stat	 st;
	unsigned	 flags = MDB_NOTLS;
	int		 rc, dead, lockfd;
	int64_t		 size;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return STORE_ENOMEM;
	{
		pthread_rwlockattr_t attr;

		/* Growth must not starve behind a stream of readers. */
		pthread_rwlockattr_init(&attr);
		pthread_rwlockattr_setkind_np(&attr,
		    PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&s->resize_lock, &attr);
		pthread_rwlockattr_destroy(&attr);
	}
	s->max_map_size = o->max_map_size;
	s->sync = o->sync;
	s->batch_max = o->batch_max;
	pthread_mutex_init(&s->wq_lock, NULL);
	pthread_mutex_init(&s->flush_lock, NULL);
	s->wq_tail = &s->wq_head;
	if ((rc = mdb_env_create(&s->env)) != 0) {
		rc = mdb_err(rc, "create environment");
		goto fail;
	}
	mdb_env_set_maxdbs(s->env, STORE_DB__COUNT + 4);
	mdb_env_set_maxreaders(s->env, o->max_readers > 0 ? (unsigned)o->max_readers : 1024);
	/* In place without flushes; with them, LMDB's own writes (see map
	 * growth above, and docs/architecture.md). */
	s->writemap = !o->sync;
	if (!o->sync)
		flags |= MDB_NOSYNC | MDB_WRITEMAP;
	else
		flags |= MDB_NOMETASYNC;	/* flushed by flush_to */
	/* The map LMDB opens with sets the file's length: never less than it
	 * is (another process's map) nor than storage.map_size, decided and
	 * reserved under the file lock. */
	if ((lockfd = data_file_lock(dir)) < 0) {
		rc = STORE_EIO;
		goto fail;
	}
	if (fstat(lockfd, &st) != 0)
		st.st_size = 0;
	size = st.st_size > o->map_size ? st.st_size : o->map_size;
	if ((rc = mdb_err(mdb_env_set_mapsize(s->env, (size_t)size),
	    "set map size")) == 0 &&
	    (rc = mdb_env_open(s->env, dir, flags, 0600)) != 0)
		rc = mdb_err(rc, "open environment");
	if (rc == 0)
		rc = map_reserve(s, (size_t)store_map_size(s));
	close(lockfd);	/* and its lock */
	if (rc != 0)
		goto fail;
	/* Free the reader slots of processes that died holding them. */
	mdb_reader_check(s->env, &dead);
	if (dead > 0)
		log_info("storage: cleared %d stale reader slots", dead);
	if ((rc = store_write(s, open_dbis, s)) != 0)
		goto fail;
	if ((rc = store_write(s, schema_migrate, NULL)) != 0)
		goto fail;
	*out = s;
	return 0;
fail:
	store_close(s);
	return rc;
}

void
store_close(struct store *s)
{
	if (s == NULL)
		return;
	if (s->env != NULL)
		mdb_env_close(s->env);
	pthread_rwlock_destroy(&s->resize_lock);
	pthread_mutex_destroy(&s->wq_lock);
	free(s);
}
