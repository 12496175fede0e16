/*
 * lmdb.c — the LMDB backend: the environment, transactions, cursors and
 * map growth.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lmdb.h>

#include "conf/conf.h"
#include "storage/backend.h"

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

struct lmdb {
	struct store		 base;
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
	char			*dir;		/* the data directory */
};

struct lmdb_txn {
	struct store_txn base;
	struct lmdb	*s;
	MDB_txn		*txn;
};

struct lmdb_cursor {
	struct store_cursor base;
	MDB_cursor	*cur;
};

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
file_lock(struct lmdb *s, int op)
{
	int	fd;

	if (mdb_env_get_fd(s->env, &fd) != 0)
		return STORE_EIO;
	return fd_lock(fd, op);
}

static int64_t
file_size(struct lmdb *s)
{
	struct stat	st;
	int		fd;

	if (mdb_env_get_fd(s->env, &fd) != 0 || fstat(fd, &st) != 0)
		return -1;
	return (int64_t)st.st_size;
}

/* Reserves the blocks of the first size bytes of the data file. */
static int
map_reserve(struct lmdb *s, size_t size)
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
map_set(struct lmdb *s, size_t want)
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
store_adopt_mapsize(struct lmdb *s)
{
	int rc;

	pthread_rwlock_wrlock(&s->resize_lock);
	rc = map_set(s, 0);
	pthread_rwlock_unlock(&s->resize_lock);
	return rc;
}

static int64_t
lmdb_map_size(struct store *st)
{
	struct lmdb	*s = (struct lmdb *)st;
	MDB_envinfo	 info;

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
store_grow(struct lmdb *s, size_t seen)
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
txn_begin(struct lmdb *s, unsigned flags, MDB_txn **out)
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
static __thread struct lmdb *writing;

static int
lmdb_read_begin(struct store *st, struct store_txn **out)
{
	struct lmdb	*s = (struct lmdb *)st;
	struct lmdb_txn	*t;
	int		 rc;

	if (writing == s) {
		log_error("storage: a write function began a read transaction");
		return STORE_EBUSY;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return STORE_ENOMEM;
	t->base.be = &store_backend_lmdb;
	t->s = s;
	if ((rc = txn_begin(s, MDB_RDONLY, &t->txn)) != 0) {
		free(t);
		return rc;
	}
	*out = &t->base;
	return 0;
}

static void
lmdb_read_end(struct store_txn *tt)
{
	struct lmdb_txn *t = (struct lmdb_txn *)tt;

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
txn_usable(struct lmdb_txn *t)
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
stat_largest(struct lmdb *s, uint_fast64_t n)
{
	uint_fast64_t cur = atomic_load(&s->n_largest);

	while (n > cur && !atomic_compare_exchange_weak(&s->n_largest, &cur,
	    n))
		;
}

static void
flushed_at_least(struct lmdb *s, uint64_t id)
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
batch_run(struct lmdb *s, struct store_writer *list, uint64_t *committed)
{
	struct lmdb_txn	 t = { { &store_backend_lmdb }, s, NULL };
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
			rc = w->fn(&t.base, w->arg);
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
flush_to(struct lmdb *s, uint64_t id)
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
flush_batch(struct lmdb *s, struct store_writer *list, uint64_t id)
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
take_batch(struct lmdb *s, struct store_writer *lead)
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
answer(struct lmdb *s, struct store_writer *list, struct store_writer *me)
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

static int
lmdb_write(struct store *st, store_write_fn fn, void *arg)
{
	struct lmdb		*s = (struct lmdb *)st;
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

static void
lmdb_stats(struct store *st, struct store_stats *out)
{
	struct lmdb *s = (struct lmdb *)st;

	out->writes = atomic_load(&s->n_writes);
	out->commits = atomic_load(&s->n_commits);
	out->syncs = atomic_load(&s->n_syncs);
	out->retries = atomic_load(&s->n_retries);
	out->batch_largest = atomic_load(&s->n_largest);
	out->waiting = atomic_load(&s->n_waiting);
	out->flushes = atomic_load(&s->n_flushes);
	out->durable = atomic_load(&s->flushed);
}

static uint64_t
lmdb_txn_id(const struct store_txn *t)
{
	return mdb_txn_id(((const struct lmdb_txn *)t)->txn);
}

/* ====== Records ====== */

static int
lmdb_get(struct store_txn *tt, enum store_db db, const void *key, size_t klen,
    const void **val, size_t *vlen)
{
	struct lmdb_txn	*t = (struct lmdb_txn *)tt;
	MDB_val	k = { klen, (void *)key }, v;
	int	rc;

	if ((rc = mdb_get(t->txn, t->s->dbi[db], &k, &v)) != 0)
		return mdb_err(rc, "get");
	*val = v.mv_data;
	*vlen = v.mv_size;
	return 0;
}

static int
lmdb_put(struct store_txn *tt, enum store_db db, const void *key, size_t klen,
    const void *val, size_t vlen, unsigned flags)
{
	struct lmdb_txn	*t = (struct lmdb_txn *)tt;
	MDB_val		 k = { klen, (void *)key }, v = { vlen, (void *)val };

	return mdb_err(mdb_put(t->txn, t->s->dbi[db], &k, &v,
	    (flags & STORE_NOOVERWRITE) ? MDB_NOOVERWRITE : 0), "put");
}

static int
lmdb_del(struct store_txn *tt, enum store_db db, const void *key, size_t klen)
{
	struct lmdb_txn	*t = (struct lmdb_txn *)tt;
	MDB_val		 k = { klen, (void *)key };

	return mdb_err(mdb_del(t->txn, t->s->dbi[db], &k, NULL), "delete");
}

/* ====== Cursors ====== */

static int
lmdb_cursor_open(struct store_txn *tt, enum store_db db,
    struct store_cursor **out)
{
	struct lmdb_txn		*t = (struct lmdb_txn *)tt;
	struct lmdb_cursor	*c;
	int			 rc;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return STORE_ENOMEM;
	if ((rc = mdb_cursor_open(t->txn, t->s->dbi[db], &c->cur)) != 0) {
		free(c);
		return mdb_err(rc, "cursor");
	}
	c->base.be = &store_backend_lmdb;
	*out = &c->base;
	return 0;
}

static void
lmdb_cursor_close(struct store_cursor *cc)
{
	struct lmdb_cursor *c = (struct lmdb_cursor *)cc;

	mdb_cursor_close(c->cur);
	free(c);
}

static int
cursor_op(struct lmdb_cursor *c, MDB_val *k, MDB_cursor_op op,
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

static int
lmdb_cursor_move(struct store_cursor *cc, int op, const void *key,
    size_t klen, struct store_kv *kv)
{
	static const MDB_cursor_op	 ops[] = {
		[STORE_CURSOR_FIRST] = MDB_FIRST,
		[STORE_CURSOR_LAST] = MDB_LAST,
		[STORE_CURSOR_SEEK] = MDB_SET_RANGE,
		[STORE_CURSOR_NEXT] = MDB_NEXT,
		[STORE_CURSOR_PREV] = MDB_PREV,
	};
	MDB_val				 k = { klen, (void *)key };

	return cursor_op((struct lmdb_cursor *)cc, &k, ops[op], kv);
}

/* ====== Open ====== */

static int
open_dbis(struct store_txn *tt, void *arg)
{
	struct lmdb_txn	*t = (struct lmdb_txn *)tt;
	struct lmdb	*s = arg;
	int		 i, rc;

	for (i = 0; i < STORE_DB__COUNT; i++) {
		rc = mdb_dbi_open(t->txn, store_db_names[i], MDB_CREATE, &s->dbi[i]);
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

static void lmdb_close(struct store *);

static int
lmdb_open(const char *dir, const struct store_opts *o, struct store **out)
{
	struct lmdb	*s = NULL;
	struct stat	 st;
	unsigned	 flags = MDB_NOTLS;
	int		 rc, dead, lockfd;
	int64_t		 size;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return STORE_ENOMEM;
	s->base.be = &store_backend_lmdb;
	{
		pthread_rwlockattr_t attr;

		/* Growth must not starve behind a stream of readers. */
		pthread_rwlockattr_init(&attr);
		pthread_rwlockattr_setkind_np(&attr,
		    PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&s->resize_lock, &attr);
		pthread_rwlockattr_destroy(&attr);
	}
	if ((s->dir = strdup(dir)) == NULL) {
		pthread_rwlock_destroy(&s->resize_lock);
		free(s);
		return STORE_ENOMEM;
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
		rc = map_reserve(s, (size_t)lmdb_map_size(&s->base));
	close(lockfd);	/* and its lock */
	if (rc != 0)
		goto fail;
	/* Free the reader slots of processes that died holding them. */
	mdb_reader_check(s->env, &dead);
	if (dead > 0)
		log_info("storage: cleared %d stale reader slots", dead);
	if ((rc = lmdb_write(&s->base, open_dbis, s)) != 0)
		goto fail;
	*out = &s->base;
	return 0;
fail:
	lmdb_close(&s->base);
	return rc;
}

static void
lmdb_close(struct store *st)
{
	struct lmdb *s = (struct lmdb *)st;

	if (s->env != NULL)
		mdb_env_close(s->env);
	pthread_rwlock_destroy(&s->resize_lock);
	pthread_mutex_destroy(&s->wq_lock);
	free(s->dir);
	free(s);
}

/* ====== Slots ====== */

/*
 * The slots live in the kernel, not in the map: slot i of name is the
 * file <dir>/active/<name>.<i>, held with flock(LOCK_EX) by its holder.
 * Another process (or another holder in this one: a second open() is a
 * second lock owner) cannot take a held slot, and a process that dies
 * drops its locks with its files; no write reaches the database.
 */
static int
lmdb_slot_take(struct store *st, const char *name, int n, int64_t *slot)
{
	struct lmdb	*s = (struct lmdb *)st;
	char		 path[1200];
	int		 i, f;

	snprintf(path, sizeof(path), "%s/active", s->dir);
	if (mkdir(path, 0700) != 0 && errno != EEXIST) {
		log_error("storage: cannot make '%s': %s", path,
		    strerror(errno));
		return STORE_EIO;
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/active/%s.%d", s->dir, name,
		    i);
		f = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (f < 0) {
			log_error("storage: cannot open '%s': %s", path,
			    strerror(errno));
			return STORE_EIO;
		}
		if (flock(f, LOCK_EX | LOCK_NB) == 0) {
			*slot = f;
			return 0;
		}
		close(f);
	}
	return 1;
}

static void
lmdb_slot_give(struct store *st, int64_t slot)
{
	(void)st;
	close((int)slot);	/* drops the lock */
}

const struct store_backend store_backend_lmdb = {
	.name = "lmdb",
	.open = lmdb_open,
	.close = lmdb_close,
	.map_size = lmdb_map_size,
	.stats = lmdb_stats,
	.read_begin = lmdb_read_begin,
	.read_end = lmdb_read_end,
	.write = lmdb_write,
	.txn_id = lmdb_txn_id,
	.get = lmdb_get,
	.put = lmdb_put,
	.del = lmdb_del,
	.cursor_open = lmdb_cursor_open,
	.cursor_close = lmdb_cursor_close,
	.cursor_move = lmdb_cursor_move,
	.slot_take = lmdb_slot_take,
	.slot_give = lmdb_slot_give,
};
