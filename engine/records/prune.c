/*
 * prune.c — run history that does not grow forever.
 *
 * A pass removes, in this order:
 *  1. runs older than run.history_max_age. Run ids are UUIDv7, whose first
 *     48 bits are the creation time in milliseconds, so the runs database
 *     is in time order and the old runs are a prefix of it;
 *  2. for each app, the runs past its newest run.history_max_count: a
 *     reverse walk of runs_by_app ("<app id>/<run id>", newest last);
 *     with each run go its runs_by_app key and its node executions
 *     (node_runs "<run id>" and "<run id>/<index>"); a run whose status is
 *     "running" is left alone until it ends (and a pass after removes it);
 *  3. messages ("<conversation id>/<message id>") whose conversation is
 *     gone; those of a live conversation stay as long as it does;
 *  4. pending imports past their ten minutes and prepared bundle imports
 *     past bundle.import_ttl, with their bundle blobs;
 *  5. blobs with no reference count. Every holder of a blob (app files,
 *     uploads, a chatflow's or a draft run's sandbox workspace, a pending
 *     or prepared bundle import) takes a reference in the transaction that
 *     stores it and drops it in the one that lets go, so a blob without
 *     one is referenced by nothing.
 *
 * Keys are found in short read transactions that collect at most
 * run.prune_batch of them; write transactions then delete them, at most
 * run.prune_batch records each, checking every key again (a run may have
 * started or ended, a conversation come back), with a pause after each so
 * that the writers queued on LMDB's one write lock get it. Runs are never
 * held up for longer than one such transaction.
 *
 * One process prunes at a time: a pass holds flock(LOCK_EX) on
 * <data_dir>/prune.lock; without PRUNE_WAIT another one skips its turn.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "engine/records/records.h"

#define PRUNE_KEYMAX	512	/* past LMDB's longest key (511 bytes) */
#define PRUNE_SCAN	4096	/* keys one read transaction walks at most */
#define PRUNE_PAUSE_NS	1000000	/* after each write transaction: 1 ms */

struct pkey {
	char	k[PRUNE_KEYMAX];
	size_t	len;
};

struct prune {
	struct engine		*e;
	const atomic_int	*stop;	/* NULL, or set: end the pass now */
	struct prune_stats	*st;
	struct pkey		*keys;	/* candidates of the current batch */
	size_t			 nkeys;
	size_t			 batch;	/* run.prune_batch */
	int64_t			 cut_ms; /* runs made before are old; 0: none */
};

/* Deletes what key k stands for inside t, adding to *d and *records. */
typedef int (*prune_del_fn)(struct store_txn *t, struct prune *p,
    const struct pkey *k, struct prune_stats *d, size_t *records);

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
stopped(const struct prune *p)
{
	return p->stop != NULL && atomic_load(p->stop);
}

static void
pkey_set(struct pkey *pk, const void *k, size_t len)
{
	memcpy(pk->k, k, len);
	pk->k[len] = '\0';
	pk->len = len;
}

static int
pkey_is(const struct pkey *pk, const struct store_kv *kv)
{
	return pk->len == kv->klen && memcmp(pk->k, kv->k, kv->klen) == 0;
}

/* Positions c on the first key after resume (none yet: the first key). */
static int
cursor_after(struct store_cursor *c, const struct pkey *resume,
    struct store_kv *kv)
{
	int rc;

	if (resume->len == 0)
		return store_cursor_first(c, kv);
	rc = store_cursor_seek(c, resume->k, resume->len, kv);
	if (rc == 0 && pkey_is(resume, kv))
		rc = store_cursor_next(c, kv);
	return rc;
}

/* Adds key k to the batch (the caller checked its length). */
static void
cand_add(struct prune *p, const void *k, size_t len)
{
	pkey_set(&p->keys[p->nkeys++], k, len);
}

/*
 * The creation time in ms of the run whose id is k (klen bytes), from its
 * UUIDv7 timestamp; -1 when k is not a version-7 UUID.
 */
static int64_t
uuid7_ms(const char *k, size_t klen)
{
	char	id[37];
	int64_t	ms = 0;
	int	i, c;

	if (klen != 36)
		return -1;
	memcpy(id, k, 36);
	id[36] = '\0';
	if (engine_uuid_check(id) != 0 || id[14] != '7')
		return -1;
	for (i = 0; i < 13; i++) {
		if (i == 8)
			continue;
		c = id[i];
		ms = ms * 16 + (c <= '9' ? c - '0' : c - 'a' + 10);
	}
	return ms;
}

static void
stats_add(struct prune_stats *to, const struct prune_stats *d)
{
	to->runs += d->runs;
	to->node_runs += d->node_runs;
	to->messages += d->messages;
	to->imports += d->imports;
	to->blobs += d->blobs;
	to->running += d->running;
}

/* ====== Writing ====== */

struct prune_write {
	struct prune		*p;
	prune_del_fn		 del;
	size_t			 from;	/* first key of this transaction */
	size_t			 to;	/* out: the first key it left */
	struct prune_stats	 d;	/* what it removed, counted on commit */
};

static int
prune_write_fn(struct store_txn *t, void *arg)
{
	struct prune_write	*w = arg;
	size_t			 i, records = 0;
	int			 rc;

	/* store_write may run this again from the start: begin afresh */
	memset(&w->d, 0, sizeof(w->d));
	for (i = w->from; i < w->p->nkeys && records < w->p->batch; i++)
		if ((rc = w->del(t, w->p, &w->p->keys[i], &w->d, &records)) !=
		    0)
			return rc;
	w->to = i;
	return 0;
}

/*
 * Deletes the batch's keys with del, in write transactions of at most
 * run.prune_batch records (a run and its node executions are never split),
 * pausing after each. Empties the batch.
 */
static int
prune_flush(struct prune *p, prune_del_fn del)
{
	struct prune_write	w;
	struct timespec		pause = { 0, PRUNE_PAUSE_NS };
	size_t			from = 0;
	int			rc = 0;

	while (from < p->nkeys && !stopped(p)) {
		memset(&w, 0, sizeof(w));
		w.p = p;
		w.del = del;
		w.from = from;
		if ((rc = store_write(p->e->store, prune_write_fn, &w)) != 0)
			break;
		stats_add(p->st, &w.d);
		from = w.to;
		nanosleep(&pause, NULL);
	}
	p->nkeys = 0;
	return rc;
}

/*
 * Fills the batch from where state says the walk is, in one read
 * transaction; *done once nothing is left to look at.
 */
typedef int (*prune_collect_fn)(struct prune *p, void *state, int *done);

/* One kind of record: collect a batch, delete it, until done. */
static int
prune_phase(struct prune *p, prune_collect_fn collect, void *state,
    prune_del_fn del)
{
	int done = 0, rc = 0;

	while (!done && !stopped(p))
		if ((rc = collect(p, state, &done)) != 0 ||
		    (rc = prune_flush(p, del)) != 0)
			break;
	p->nkeys = 0;
	return rc;
}

/* store_del that finds nothing to delete is no failure; counts one. */
static int
del_key(struct store_txn *t, enum store_db db, const void *k, size_t len,
    size_t *records, int64_t *n)
{
	int rc = store_del(t, db, k, len);

	if (rc == STORE_ENOTFOUND)
		return 0;
	if (rc == 0) {
		(*records)++;
		if (n != NULL)
			(*n)++;
	}
	return rc;
}

/*
 * Deletes the node executions of run id: the key "<id>" (the whole trace
 * in one record) and every "<id>/<index>" (one record per node).
 */
static int
del_traces(struct store_txn *t, const char *id, struct prune_stats *d,
    size_t *records)
{
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	struct pkey		 k;
	char			 prefix[64];
	size_t			 plen;
	int			 rc;

	if ((rc = del_key(t, STORE_DB_NODE_RUNS, id, strlen(id), records,
	    &d->node_runs)) != 0)
		return rc;
	plen = (size_t)snprintf(prefix, sizeof(prefix), "%s/", id);
	if ((rc = store_cursor_open(t, STORE_DB_NODE_RUNS, &c)) != 0)
		return rc;
	/* Cursors of a write transaction follow its deletes: seek again. */
	while ((rc = store_cursor_seek(c, prefix, plen, &kv)) == 0 &&
	    kv.klen >= plen && kv.klen < PRUNE_KEYMAX &&
	    memcmp(kv.k, prefix, plen) == 0) {
		pkey_set(&k, kv.k, kv.klen);
		if ((rc = del_key(t, STORE_DB_NODE_RUNS, k.k, k.len, records,
		    &d->node_runs)) != 0)
			break;
	}
	store_cursor_close(c);
	return rc == STORE_ENOTFOUND ? 0 : rc;
}

/*
 * Deletes run id with its runs_by_app key (index, or the one its record
 * names) and node executions, unless it is running. A run that is gone
 * already only has index and traces removed.
 */
static int
del_run(struct store_txn *t, struct prune *p, const char *id,
    const char *index, struct prune_stats *d, size_t *records)
{
	json_t		*rec = NULL;
	const char	*status, *app;
	char		 key[96];
	int		 rc;

	rc = store_get_json(t, STORE_DB_RUNS, id, &rec);
	if (rc != 0 && rc != STORE_ENOTFOUND && rc != STORE_EINVAL)
		return rc;	/* a damaged record is not a run in progress */
	status = json_string_value(json_object_get(rec, "status"));
	if (status != NULL && strcmp(status, "running") == 0) {
		/* count it once: by its age when that limit covers it */
		if (index == NULL || p->cut_ms == 0 ||
		    uuid7_ms(id, strlen(id)) >= p->cut_ms)
			d->running++;
		rc = 0;
		goto out;
	}
	if (rc != STORE_ENOTFOUND && (rc = del_key(t, STORE_DB_RUNS, id,
	    strlen(id), records, &d->runs)) != 0)
		goto out;
	rc = 0;
	if ((app = json_string_value(json_object_get(rec, "app_id"))) != NULL &&
	    (size_t)snprintf(key, sizeof(key), "%s/%s", app, id) <
	    sizeof(key) && (index == NULL || strcmp(key, index) != 0) &&
	    (rc = del_key(t, STORE_DB_RUNS_BY_APP, key, strlen(key), records,
	    NULL)) != 0)
		goto out;
	if (index != NULL && (rc = del_key(t, STORE_DB_RUNS_BY_APP, index,
	    strlen(index), records, NULL)) != 0)
		goto out;
	rc = del_traces(t, id, d, records);
out:
	json_decref(rec);
	return rc;
}

/* ====== 1. Runs older than run.history_max_age ====== */

/* Key: a run id. */
static int
del_old_run(struct store_txn *t, struct prune *p, const struct pkey *k,
    struct prune_stats *d, size_t *records)
{
	return del_run(t, p, k->k, NULL, d, records);
}

/*
 * Collects the old runs after state (a struct pkey: the last key looked
 * at) into the batch; *done at the first run that is not old.
 */
static int
collect_old(struct prune *p, void *state, int *done)
{
	struct pkey		*resume = state;
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	int64_t			 ms;
	size_t			 n;
	int			 rc;

	if ((rc = store_read_begin(p->e->store, &t)) != 0)
		return rc;
	if ((rc = store_cursor_open(t, STORE_DB_RUNS, &c)) != 0)
		goto out;
	rc = cursor_after(c, resume, &kv);
	for (n = 0; rc == 0 && n < PRUNE_SCAN && p->nkeys < p->batch; n++) {
		if (kv.klen >= PRUNE_KEYMAX)
			break;		/* cannot be: ends the walk */
		/* keys in time order: the first new run ends it */
		if ((ms = uuid7_ms(kv.k, kv.klen)) >= p->cut_ms)
			break;
		if (ms >= 0)
			cand_add(p, kv.k, kv.klen);
		pkey_set(resume, kv.k, kv.klen);
		rc = store_cursor_next(c, &kv);
	}
	if (rc == 0 && n < PRUNE_SCAN && p->nkeys < p->batch)
		*done = 1;	/* stopped by a new run */
	if (rc == STORE_ENOTFOUND) {
		*done = 1;
		rc = 0;
	}
out:
	store_cursor_close(c);
	store_read_end(t);
	return rc;
}

/* ====== 2. Runs past an app's newest run.history_max_count ====== */

/* Key: "<app id>/<run id>" in runs_by_app. */
static int
del_extra_run(struct store_txn *t, struct prune *p, const struct pkey *k,
    struct prune_stats *d, size_t *records)
{
	const char *slash = strchr(k->k, '/');

	if (slash == NULL || engine_uuid_check(slash + 1) != 0)
		return 0;
	return del_run(t, p, slash + 1, k->k, d, records);
}

/* Where the reverse walk of runs_by_app is. */
struct walk {
	struct pkey	resume;		/* the last key looked at */
	struct pkey	app;		/* its app id */
	int64_t		n;		/* keys of that app seen so far */
	int		started;
};

/*
 * Collects, walking runs_by_app backwards from where state (a struct walk)
 * says, the keys of each app past its newest run.history_max_count.
 */
static int
collect_extra(struct prune *p, void *state, int *done)
{
	struct walk		*w = state;
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	const char		*slash;
	size_t			 n, alen;
	int			 rc;

	if ((rc = store_read_begin(p->e->store, &t)) != 0)
		return rc;
	if ((rc = store_cursor_open(t, STORE_DB_RUNS_BY_APP, &c)) != 0)
		goto out;
	if (!w->started)
		rc = store_cursor_last(c, &kv);
	else {
		/* the first key at or past resume; the one before is next */
		rc = store_cursor_seek(c, w->resume.k, w->resume.len, &kv);
		if (rc == 0)
			rc = store_cursor_prev(c, &kv);
		else if (rc == STORE_ENOTFOUND)
			rc = store_cursor_last(c, &kv);
	}
	w->started = 1;
	for (n = 0; rc == 0 && n < PRUNE_SCAN && p->nkeys < p->batch; n++) {
		if (kv.klen >= PRUNE_KEYMAX) {
			*done = 1;	/* cannot be: ends the walk */
			break;
		}
		pkey_set(&w->resume, kv.k, kv.klen);
		if ((slash = memchr(kv.k, '/', kv.klen)) != NULL) {
			alen = (size_t)(slash - (const char *)kv.k);
			if (alen != w->app.len || memcmp(kv.k, w->app.k,
			    alen) != 0) {
				pkey_set(&w->app, kv.k, alen);
				w->n = 0;
			}
			if (++w->n > p->e->conf->run_history_max_count)
				cand_add(p, kv.k, kv.klen);
		}
		rc = store_cursor_prev(c, &kv);
	}
	if (rc == STORE_ENOTFOUND) {
		*done = 1;
		rc = 0;
	}
out:
	store_cursor_close(c);
	store_read_end(t);
	return rc;
}

/* ====== 3. Messages of conversations that are gone ====== */

/* 1 when conversation conv (len bytes) exists in t, 0 if not, or < 0. */
static int
conv_exists(struct store_txn *t, const void *conv, size_t len)
{
	const void	*v;
	size_t		 vlen;
	int		 rc;

	rc = store_get(t, STORE_DB_CONVERSATIONS, conv, len, &v, &vlen);
	return rc == 0 ? 1 : rc == STORE_ENOTFOUND ? 0 : rc;
}

/* Key: "<conversation id>/<message id>". */
static int
del_message(struct store_txn *t, struct prune *p, const struct pkey *k,
    struct prune_stats *d, size_t *records)
{
	const char	*slash = strchr(k->k, '/');
	int		 rc;

	(void)p;
	if (slash == NULL)
		return 0;
	if ((rc = conv_exists(t, k->k, (size_t)(slash - k->k))) != 0)
		return rc < 0 ? rc : 0;	/* it came back: keep */
	return del_key(t, STORE_DB_MESSAGES, k->k, k->len, records,
	    &d->messages);
}

/*
 * Collects the messages after state (a struct pkey) whose conversation is
 * gone, jumping over those of a live one.
 */
static int
collect_messages(struct prune *p, void *state, int *done)
{
	struct pkey		*resume = state;
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	const char		*slash;
	char			 past[PRUNE_KEYMAX];
	size_t			 n, clen;
	int			 rc, live;

	if ((rc = store_read_begin(p->e->store, &t)) != 0)
		return rc;
	if ((rc = store_cursor_open(t, STORE_DB_MESSAGES, &c)) != 0)
		goto out;
	rc = cursor_after(c, resume, &kv);
	for (n = 0; rc == 0 && n < PRUNE_SCAN && p->nkeys < p->batch; n++) {
		if (kv.klen >= PRUNE_KEYMAX) {
			*done = 1;	/* cannot be: ends the walk */
			break;
		}
		pkey_set(resume, kv.k, kv.klen);
		if ((slash = memchr(kv.k, '/', kv.klen)) == NULL) {
			rc = store_cursor_next(c, &kv);
			continue;
		}
		clen = (size_t)(slash - (const char *)kv.k);
		if ((live = conv_exists(t, kv.k, clen)) < 0) {
			rc = live;
			break;
		}
		if (live) {
			/* past all its messages: '0' follows '/' */
			memcpy(past, kv.k, clen);
			past[clen] = '0';
			rc = store_cursor_seek(c, past, clen + 1, &kv);
			continue;
		}
		cand_add(p, kv.k, kv.klen);
		rc = store_cursor_next(c, &kv);
	}
	if (rc == STORE_ENOTFOUND) {
		*done = 1;
		rc = 0;
	}
out:
	store_cursor_close(c);
	store_read_end(t);
	return rc;
}

/* ====== 4. Expired pending and prepared imports ====== */

static int
imports_fn(struct store_txn *t, void *arg)
{
	return imports_purge_expired(t, arg);
}

/* ====== 5. Blobs nothing references ====== */

/*
 * 1 when blob hex (64 bytes) has no reference count (no blobrefs entry,
 * or one that reads as 0 or less), 0 when it has one, or < 0. An entry
 * that does not read as a number keeps the blob.
 */
static int
blob_unreferenced(struct store_txn *t, const void *hex)
{
	const void	*v;
	size_t		 vlen;
	char		 buf[24], *end;
	long long	 n;
	int		 rc;

	rc = store_get(t, STORE_DB_BLOBREFS, hex, 64, &v, &vlen);
	if (rc == STORE_ENOTFOUND)
		return 1;
	if (rc != 0)
		return rc;
	if (vlen == 0 || vlen >= sizeof(buf))
		return 0;
	memcpy(buf, v, vlen);
	buf[vlen] = '\0';
	n = strtoll(buf, &end, 10);
	return *end == '\0' && n <= 0;
}

/* Key: a blob's hash. Its bytes go whole, or its chunks lose a count. */
static int
del_blob(struct store_txn *t, struct prune *p, const struct pkey *k,
    struct prune_stats *d, size_t *records)
{
	char	hex[STORE_HASH_HEX];
	int	rc;

	(void)p;
	if ((rc = blob_unreferenced(t, k->k)) <= 0)
		return rc;	/* referenced again meanwhile: keep */
	if ((rc = del_key(t, STORE_DB_BLOBREFS, k->k, 64, records, NULL)) != 0)
		return rc;
	memcpy(hex, k->k, 64);
	hex[64] = '\0';
	if ((rc = store_blob_drop(t, hex)) == STORE_ENOTFOUND)
		return 0;
	if (rc == 0) {
		(*records)++;
		d->blobs++;
	}
	return rc;
}

/* 1 when a key of blobs is a blob's: "<hash>" or "<hash>.chunks". */
static int
blob_key(const struct store_kv *kv)
{
	return kv->klen == 64 || (kv->klen == 64 + 7 &&
	    memcmp((const char *)kv->k + 64, ".chunks", 7) == 0);
}

/* Collects the blobs after state (a struct pkey) that have no count. */
static int
collect_blobs(struct prune *p, void *state, int *done)
{
	struct pkey		*resume = state;
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	size_t			 n;
	int			 rc, none;

	if ((rc = store_read_begin(p->e->store, &t)) != 0)
		return rc;
	if ((rc = store_cursor_open(t, STORE_DB_BLOBS, &c)) != 0)
		goto out;
	rc = cursor_after(c, resume, &kv);
	for (n = 0; rc == 0 && n < PRUNE_SCAN && p->nkeys < p->batch; n++) {
		if (kv.klen >= PRUNE_KEYMAX) {
			*done = 1;	/* cannot be: ends the walk */
			break;
		}
		pkey_set(resume, kv.k, kv.klen);
		if (blob_key(&kv)) {
			if ((none = blob_unreferenced(t, kv.k)) < 0) {
				rc = none;
				break;
			}
			if (none)
				cand_add(p, kv.k, 64);
		}
		rc = store_cursor_next(c, &kv);
	}
	if (rc == STORE_ENOTFOUND) {
		*done = 1;
		rc = 0;
	}
out:
	store_cursor_close(c);
	store_read_end(t);
	return rc;
}

/* ====== A pass ====== */

/*
 * Takes <data_dir>/prune.lock into *fd. Returns 0, 1 when another process
 * holds it and wait is not set, or -1 (logged).
 */
static int
prune_lock(struct engine *e, int wait, int *fd)
{
	char	path[1100];
	int	f, rc;

	snprintf(path, sizeof(path), "%s/prune.lock", e->conf->data_dir);
	if ((f = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600)) < 0) {
		log_error("prune: cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	while ((rc = flock(f, LOCK_EX | (wait ? 0 : LOCK_NB))) != 0 &&
	    errno == EINTR)
		;
	if (rc != 0) {
		rc = errno == EWOULDBLOCK ? 1 : -1;
		if (rc < 0)
			log_error("prune: cannot lock '%s': %s", path,
			    strerror(errno));
		close(f);
		return rc;
	}
	*fd = f;
	return 0;
}

/* A pass; stop (may be NULL) ends it early when set. */
static int
prune_pass(struct engine *e, unsigned flags, const atomic_int *stop,
    struct prune_stats *st)
{
	const struct conf	*c = e->conf;
	struct prune		 p;
	struct prune_stats	 d;
	struct pkey		 resume;
	struct walk		 w;
	int64_t			 t0 = now_ms();
	int			 fd = -1, rc;

	memset(st, 0, sizeof(*st));
	memset(&p, 0, sizeof(p));
	if ((rc = prune_lock(e, flags & PRUNE_WAIT, &fd)) != 0) {
		st->busy = rc > 0;
		return rc > 0 ? 0 : ENGINE_ESTORE;
	}
	p.e = e;
	p.stop = stop;
	p.st = st;
	p.batch = (size_t)c->run_prune_batch;
	if (c->run_history_max_age > 0)
		p.cut_ms = t0 - c->run_history_max_age * 1000;
	if ((p.keys = calloc(p.batch, sizeof(*p.keys))) == NULL) {
		rc = STORE_ENOMEM;
		goto out;
	}
	memset(&resume, 0, sizeof(resume));
	if (p.cut_ms > 0 && (rc = prune_phase(&p, collect_old, &resume,
	    del_old_run)) != 0)
		goto out;
	memset(&w, 0, sizeof(w));
	if (c->run_history_max_count > 0 && (rc = prune_phase(&p,
	    collect_extra, &w, del_extra_run)) != 0)
		goto out;
	memset(&resume, 0, sizeof(resume));
	if ((rc = prune_phase(&p, collect_messages, &resume, del_message)) !=
	    0)
		goto out;
	memset(&d, 0, sizeof(d));
	if (!stopped(&p) && (rc = store_write(e->store, imports_fn,
	    &d.imports)) != 0)
		goto out;
	stats_add(st, &d);
	memset(&resume, 0, sizeof(resume));
	rc = prune_phase(&p, collect_blobs, &resume, del_blob);
out:
	if (rc != 0)
		log_error("prune: %s", store_strerror(rc));
	if (st->runs + st->node_runs + st->messages + st->imports + st->blobs >
	    0)
		log_info("prune: removed %lld runs, %lld node traces, %lld "
		    "messages, %lld imports, %lld blobs in %lld ms%s",
		    (long long)st->runs, (long long)st->node_runs,
		    (long long)st->messages, (long long)st->imports,
		    (long long)st->blobs, (long long)(now_ms() - t0),
		    st->running > 0 ? "; runs still running are kept" : "");
	free(p.keys);
	close(fd);	/* drops the lock */
	return engine_from_store(rc);
}

int
engine_prune(struct engine *e, unsigned flags, struct prune_stats *st)
{
	return prune_pass(e, flags, NULL, st);
}

/* ====== The background pruner ====== */

struct pruner {
	struct engine	*e;
	pthread_t	 tid;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	atomic_int	 stop;
};

static void *
pruner_main(void *arg)
{
	struct pruner		*pr = arg;
	struct prune_stats	 st;
	struct timespec		 until;

	pthread_mutex_lock(&pr->mu);
	while (!atomic_load(&pr->stop)) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += pr->e->conf->run_prune_interval;
		while (!atomic_load(&pr->stop) && pthread_cond_timedwait(
		    &pr->cv, &pr->mu, &until) != ETIMEDOUT)
			;
		if (atomic_load(&pr->stop))
			break;
		pthread_mutex_unlock(&pr->mu);
		if (prune_pass(pr->e, 0, &pr->stop, &st) == 0 && st.busy)
			log_debug("prune: another process is pruning; "
			    "skipped");
		pthread_mutex_lock(&pr->mu);
	}
	pthread_mutex_unlock(&pr->mu);
	return NULL;
}

int
engine_pruner_start(struct engine *e, struct pruner **out)
{
	struct pruner		*pr;
	pthread_condattr_t	 ca;
	int			 rc;

	*out = NULL;
	if (e->conf->run_prune_interval == 0)
		return 0;
	if ((pr = calloc(1, sizeof(*pr))) == NULL)
		return ENGINE_ENOMEM;
	pr->e = e;
	pthread_mutex_init(&pr->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&pr->cv, &ca);
	pthread_condattr_destroy(&ca);
	if ((rc = pthread_create(&pr->tid, NULL, pruner_main, pr)) != 0) {
		log_error("prune: cannot start the background pruner: %s",
		    strerror(rc));
		pthread_cond_destroy(&pr->cv);
		pthread_mutex_destroy(&pr->mu);
		free(pr);
		return ENGINE_ENOMEM;
	}
	*out = pr;
	return 0;
}

void
engine_pruner_stop(struct pruner *pr)
{
	if (pr == NULL)
		return;
	pthread_mutex_lock(&pr->mu);
	atomic_store(&pr->stop, 1);
	pthread_cond_signal(&pr->cv);
	pthread_mutex_unlock(&pr->mu);
	pthread_join(pr->tid, NULL);
	pthread_cond_destroy(&pr->cv);
	pthread_mutex_destroy(&pr->mu);
	free(pr);
}
