/*
 * live.c — the runs in progress in this process.
 *
 * A run that ends within run.publish_after milliseconds is stored once,
 * whole, when it ends (run.c): most runs cost one transaction. A run still
 * going by then is stored as "running" by this file's publisher thread, so
 * that other processes sharing the data directory can read it and stop it
 * (they set stop_requested in its record, which the run reads at most every
 * run.stop_check_ms). Within this process a run is found here whether it
 * was published or not: GET answers its start record, stop raises its flag.
 *
 * The publisher and the run's own final write never need each other's
 * lock: both are store transactions, and the publisher writes the start
 * record only where no record exists yet. Whichever commits first, the
 * final record is the one that stays.
 *
 * Leases. A process holds a lease in the leases database while it has
 * runs stored as running: key its host id (made at engine_open), value
 * {"expires": wall-clock ms, "pid", "host"}, and one key "<host id>/<run
 * id>" per such run, written with the run's start record (publish_fn) and
 * deleted with its final one (run.c). The publisher renews the lease every
 * third of run.host_lease while the process has such runs. A process that
 * serves (engine_serve) also looks every half lease for leases that ran
 * out, and fails their runs still "running" ("host lost") before their
 * keys go: a process killed mid-run leaves no run running forever. Two
 * processes sweeping one lease at once are serialized by the store; the
 * second finds nothing left.
 *
 * Event logs. A workflow or chatflow run that streams keeps the events it
 * sent, as JSON text, up to run.event_log bytes (the oldest go first), in
 * a log that a page coming back reads from the start and then follows
 * (engine_run_events, Dify's GET /api/workflow/{task_id}/events). The
 * log is counted: the run and each follower hold it, so a follower may
 * outlive the run. It lives in this process only; a follower on another
 * process reads the run's record instead (docs/webapp.md).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/run/run.h"

int64_t
live_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ====== Leases ====== */

/* The key of run_id under host (a host id): "<host>/<run id>". */
static size_t
lease_key(char *buf, size_t size, const char *host, const char *run_id)
{
	int n = snprintf(buf, size, "%s/%s", host, run_id);

	return n > 0 && (size_t)n < size ? (size_t)n : 0;
}

/* Writes (or renews) e's lease: it holds for run.host_lease from now. */
static int
lease_put(struct store_txn *t, struct engine *e)
{
	char	host[256];
	json_t	*v;
	int	rc;

	if (gethostname(host, sizeof(host)) != 0)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	if ((v = json_pack("{s:I,s:I,s:s}", "expires", (json_int_t)
	    (run_now_ms() + (int64_t)e->conf->run_host_lease * 1000), "pid",
	    (json_int_t)getpid(), "host", host)) == NULL)
		return STORE_ENOMEM;
	rc = store_put_json(t, STORE_DB_LEASES, e->host_id, v, 0);
	json_decref(v);
	return rc;
}

static int
renew_fn(struct store_txn *t, void *arg)
{
	return lease_put(t, arg);
}

int
live_lease_drop(struct store_txn *t, struct engine *e, const char *run_id)
{
	char	key[80];
	size_t	klen = lease_key(key, sizeof(key), e->host_id, run_id);
	int	rc;

	if (klen == 0)
		return STORE_EINVAL;
	rc = store_del(t, STORE_DB_LEASES, key, klen);
	return rc == STORE_ENOTFOUND ? 0 : rc;
}

/* The most runs of a lost host one write transaction fails. */
#define SWEEP_BATCH 100

struct sweep {
	const char	*host;		/* the lost host's id */
	int64_t		 now;		/* wall-clock ms */
	int		 failed;	/* runs failed by this transaction */
	int		 more;		/* runs left for another */
};

/* Fails run id of a lost host if it is still running. */
static int
sweep_run(struct store_txn *t, const struct sweep *sw, const char *id,
    const char *why, int *failed)
{
	json_t		*rec = NULL;
	const char	*st;
	int64_t		 created;
	int		 rc;

	if ((rc = store_get_json(t, STORE_DB_RUNS, id, &rec)) != 0)
		return rc == STORE_ENOTFOUND ? 0 : rc;
	st = json_string_value(json_object_get(rec, "status"));
	if (st == NULL || strcmp(st, "running") != 0) {
		json_decref(rec);
		return 0;
	}
	created = json_integer_value(json_object_get(rec, "created_at"));
	if (json_object_set_new(rec, "status", json_string("failed")) != 0 ||
	    json_object_set_new(rec, "error", json_string(why)) != 0 ||
	    json_object_set_new(rec, "finished_at", json_integer(
	    (json_int_t)(sw->now / 1000))) != 0 ||
	    json_object_set_new(rec, "elapsed_time", json_real(
	    created > 0 && sw->now / 1000 >= created ?
	    (double)(sw->now / 1000 - created) : 0.0)) != 0)
		rc = STORE_ENOMEM;
	else if ((rc = run_record_put(t, rec)) == 0)
		(*failed)++;
	json_decref(rec);
	return rc;
}

/*
 * Fails the running runs of lost host sw->host, SWEEP_BATCH at a time
 * (sw->more: call again), and drops its lease with its last run. Nothing
 * when the lease was renewed meanwhile.
 */
static int
sweep_fn(struct store_txn *t, void *arg)
{
	struct sweep		*sw = arg;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	json_t			*lease = NULL, *ids = NULL, *id;
	char			 pre[40], why[512];
	size_t			 plen, i;
	int			 rc;

	sw->failed = sw->more = 0;
	rc = store_get_json(t, STORE_DB_LEASES, sw->host, &lease);
	if (rc == 0 && json_integer_value(json_object_get(lease, "expires")) >=
	    sw->now) {
		json_decref(lease);
		return 0;	/* back in time */
	}
	if (rc != 0 && rc != STORE_ENOTFOUND)
		return rc;
	snprintf(why, sizeof(why), "host lost: the flowcgi process running "
	    "this run (%s pid %lld, lease %s) stopped renewing its lease "
	    "(run.host_lease); the run did not finish",
	    json_string_value(json_object_get(lease, "host")) ?
	    json_string_value(json_object_get(lease, "host")) : "host",
	    (long long)json_integer_value(json_object_get(lease, "pid")),
	    sw->host);
	json_decref(lease);
	plen = (size_t)snprintf(pre, sizeof(pre), "%s/", sw->host);
	if ((ids = json_array()) == NULL)
		return STORE_ENOMEM;
	if ((rc = store_cursor_open(t, STORE_DB_LEASES, &c)) != 0)
		goto out;
	for (rc = store_cursor_seek(c, pre, plen, &kv); rc == 0;
	     rc = store_cursor_next(c, &kv)) {
		if (kv.klen <= plen || memcmp(kv.k, pre, plen) != 0)
			break;
		if (json_array_size(ids) == SWEEP_BATCH) {
			sw->more = 1;
			break;
		}
		if (json_array_append_new(ids, json_stringn((const char *)
		    kv.k + plen, kv.klen - plen)) != 0) {
			rc = STORE_ENOMEM;
			goto out;
		}
	}
	store_cursor_close(c);
	c = NULL;
	if (rc != 0 && rc != STORE_ENOTFOUND)
		goto out;
	rc = 0;
	json_array_foreach(ids, i, id) {
		char	key[80];
		size_t	klen = lease_key(key, sizeof(key), sw->host,
			    json_string_value(id));

		if ((rc = sweep_run(t, sw, json_string_value(id), why,
		    &sw->failed)) != 0 ||
		    (rc = store_del(t, STORE_DB_LEASES, key, klen)) != 0)
			goto out;
	}
	if (!sw->more && (rc = store_del(t, STORE_DB_LEASES, sw->host,
	    strlen(sw->host))) == STORE_ENOTFOUND)
		rc = 0;
out:
	store_cursor_close(c);
	json_decref(ids);
	return rc;
}

/* The most lost hosts one look handles (the next look takes the rest). */
#define SWEEP_HOSTS 16

int
engine_sweep_lost(struct engine *e, int *failed)
{
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	struct sweep		 sw;
	char			 lost[SWEEP_HOSTS][37];
	json_t			*v;
	int64_t			 now = run_now_ms();
	int			 n = 0, i, rc, total = 0;

	if (failed != NULL)
		*failed = 0;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	if ((rc = store_cursor_open(t, STORE_DB_LEASES, &c)) == 0) {
		for (rc = store_cursor_first(c, &kv); rc == 0 &&
		    n < SWEEP_HOSTS; rc = store_cursor_next(c, &kv)) {
			if (kv.klen != 36 || memcmp(kv.k, e->host_id, 36) == 0)
				continue;	/* a run's key, or ours */
			v = json_loadb(kv.v, kv.vlen, 0, NULL);
			if (json_integer_value(json_object_get(v, "expires")) <
			    now) {
				memcpy(lost[n], kv.k, 36);
				lost[n++][36] = '\0';
			}
			json_decref(v);
		}
		store_cursor_close(c);
	}
	store_read_end(t);
	if (rc != 0 && rc != STORE_ENOTFOUND)
		return engine_from_store(rc);
	for (i = 0; i < n; i++) {
		int k = 0;

		sw.host = lost[i];
		sw.now = now;
		do {
			if ((rc = store_write(e->store, sweep_fn, &sw)) != 0)
				return engine_from_store(rc);
			k += sw.failed;
		} while (sw.more);
		if (k > 0)
			log_warn("runs: host %s lost (its lease ran out): %d "
			    "of its runs failed", lost[i], k);
		total += k;
	}
	if (failed != NULL)
		*failed = total;
	return 0;
}

/* ====== Publishing ====== */

struct publish {
	struct engine	*e;
	json_t		**recs;
	size_t		  n;
};

/*
 * Stores each start record whose run has no record yet (run.c's layout),
 * with its key under this process's lease, and the lease.
 */
static int
publish_fn(struct store_txn *t, void *arg)
{
	struct publish	*p = arg;
	const void	*v;
	const char	*id;
	char		 key[80];
	size_t		 i, vlen, klen;
	int		 rc, any = 0;

	for (i = 0; i < p->n; i++) {
		id = json_string_value(json_object_get(p->recs[i], "id"));
		rc = store_get(t, STORE_DB_RUNS, id, 36, &v, &vlen);
		if (rc == 0)
			continue;	/* the run's final record is in */
		if (rc == STORE_ENOTFOUND && store_get(t, STORE_DB_APPS,
		    json_string_value(json_object_get(p->recs[i], "app_id")),
		    36, &v, &vlen) == STORE_ENOTFOUND)
			continue;	/* its app was deleted meanwhile */
		if (rc != STORE_ENOTFOUND ||
		    (rc = run_record_put(t, p->recs[i])) != 0)
			return rc;
		if ((klen = lease_key(key, sizeof(key), p->e->host_id, id)) ==
		    0)
			return STORE_EINVAL;
		if ((rc = store_put(t, STORE_DB_LEASES, key, klen, "", 0, 0))
		    != 0)
			return rc;
		any = 1;
	}
	return any ? lease_put(t, p->e) : 0;
}

static int
publish(struct engine *e, json_t **recs, size_t n)
{
	struct publish p = { e, recs, n };

	return store_write(e->store, publish_fn, &p);
}

/* Publishes the runs that are due; the lock is held on entry and exit. */
static void
publish_due(struct engine *e, int64_t now)
{
	struct run	*r;
	json_t		*recs[64];
	size_t		 n = 0, i;
	int		 rc;

	for (r = e->live; r != NULL && n < 64; r = r->live_next)
		if (!r->live_sent && r->live_due <= now) {
			r->live_sent = 1;
			recs[n++] = json_incref(r->start_rec);
		}
	if (n == 0)
		return;
	pthread_mutex_unlock(&e->live_mu);
	if ((rc = publish(e, recs, n)) != 0)
		log_warn("runs: storing %zu runs in progress: %s", n,
		    store_strerror(rc));
	pthread_mutex_lock(&e->live_mu);
	if (rc == 0)
		e->lease_renewed = now;
	/* The runs still here may now be stopped through the store. */
	for (r = e->live; r != NULL; r = r->live_next)
		for (i = 0; i < n; i++)
			if (r->start_rec == recs[i] && rc == 0)
				atomic_store(&r->published, 1);
	for (i = 0; i < n; i++)
		json_decref(recs[i]);
}

/*
 * Renews the lease while this process has runs stored as running, and
 * (serving) looks for lost hosts when due; the lock is held on entry and
 * exit. Returns when it is next due (monotonic ms), or -1: never.
 */
static int64_t
lease_due(struct engine *e, int64_t now)
{
	const int64_t	 lease = (int64_t)e->conf->run_host_lease * 1000;
	struct run	*r;
	int64_t		 next = -1;
	int		 rc;

	for (r = e->live; r != NULL; r = r->live_next)
		if (atomic_load(&r->published))
			break;
	if (r != NULL) {
		if (now - e->lease_renewed >= lease / 3) {
			e->lease_renewed = now;
			pthread_mutex_unlock(&e->live_mu);
			if ((rc = store_write(e->store, renew_fn, e)) != 0)
				log_warn("runs: renewing this process's lease: "
				    "%s", store_strerror(rc));
			pthread_mutex_lock(&e->live_mu);
		}
		next = e->lease_renewed + lease / 3;
	}
	if (e->live_serving) {
		if (now - e->lease_swept >= lease / 2) {
			e->lease_swept = now;
			pthread_mutex_unlock(&e->live_mu);
			if ((rc = engine_sweep_lost(e, NULL)) != 0)
				log_warn("runs: looking for lost hosts: %s",
				    engine_strerror(rc));
			pthread_mutex_lock(&e->live_mu);
		}
		if (next < 0 || e->lease_swept + lease / 2 < next)
			next = e->lease_swept + lease / 2;
	}
	return next;
}

static void *
publisher_main(void *arg)
{
	struct engine	*e = arg;
	struct run	*r;
	struct timespec	 ts;
	int64_t		 now, next;

	pthread_mutex_lock(&e->live_mu);
	while (!e->live_quit) {
		now = live_now_ms();
		publish_due(e, now);
		next = lease_due(e, live_now_ms());
		for (r = e->live; r != NULL; r = r->live_next)
			if (!r->live_sent && (next < 0 || r->live_due < next))
				next = r->live_due;
		if (next < 0) {
			e->live_idle = 1;
			pthread_cond_wait(&e->live_cv, &e->live_mu);
			e->live_idle = 0;
			continue;
		}
		if (next <= (now = live_now_ms()))
			continue;
		e->live_wake = next;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += (next - now) / 1000;
		ts.tv_nsec += (long)((next - now) % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&e->live_cv, &e->live_mu, &ts);
	}
	pthread_mutex_unlock(&e->live_mu);
	return NULL;
}

/* ====== Event logs ====== */

static struct run *live_find(struct engine *, const char *, const char *,
    const char *);

/* A condition variable on the monotonic clock (timed waits use it). */
static void
log_cond_init(pthread_cond_t *cv)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(cv, &a);
	pthread_condattr_destroy(&a);
}

struct live_log {
	pthread_mutex_t	  mu;
	pthread_cond_t	  cv;		/* a new event, or the run's end */
	char		**text;		/* the events kept, oldest first */
	size_t		 *len;
	size_t		  n, cap;
	size_t		  base;		/* the sequence number of text[0] */
	size_t		  bytes;	/* of text[0..n) */
	size_t		  max;		/* run.event_log */
	size_t		  finished;	/* sequence number of workflow_finished,
					 * or SIZE_MAX */
	int		  kept;		/* events are logged (a stream) */
	int		  closed;	/* the run is over */
	int		  refs;
};

static struct live_log *
log_new(size_t max, int kept)
{
	struct live_log *l;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		return NULL;
	pthread_mutex_init(&l->mu, NULL);
	log_cond_init(&l->cv);
	l->max = max;
	l->kept = kept;
	l->finished = SIZE_MAX;
	l->refs = 1;
	return l;
}

/* Drops a hold on l; the last one frees it. */
static void
log_release(struct live_log *l)
{
	size_t	i;
	int	last;

	if (l == NULL)
		return;
	pthread_mutex_lock(&l->mu);
	last = --l->refs == 0;
	pthread_mutex_unlock(&l->mu);
	if (!last)
		return;
	for (i = 0; i < l->n; i++)
		free(l->text[i]);
	free(l->text);
	free(l->len);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

void
live_log_add(struct run *r, const char *event, const json_t *ev)
{
	struct live_log	*l = r->log;
	char		*text;
	size_t		 len, drop, i;

	if (l == NULL || !l->kept || (text = store_json_text(ev, &len)) ==
	    NULL)
		return;
	pthread_mutex_lock(&l->mu);
	if (l->n == l->cap) {
		size_t	 cap = l->cap ? l->cap * 2 : 64;
		char	**t = realloc(l->text, cap * sizeof(*t));
		size_t	*ln = t != NULL ? realloc(l->len, cap * sizeof(*ln)) :
			    NULL;

		if (t != NULL)
			l->text = t;
		if (ln == NULL) {
			/* a follower misses it, as one past the size does */
			pthread_mutex_unlock(&l->mu);
			free(text);
			return;
		}
		l->len = ln;
		l->cap = cap;
	}
	l->text[l->n] = text;
	l->len[l->n++] = len;
	l->bytes += len;
	if (strcmp(event, "workflow_finished") == 0)
		l->finished = l->base + l->n - 1;
	/* past the size: the oldest go, down to three quarters of it, so
	 * that a long answer's tokens do not each move the rest */
	if (l->bytes > l->max && l->n > 1) {
		for (drop = 0; drop < l->n - 1 && l->bytes > l->max / 4 * 3;
		     drop++) {
			l->bytes -= l->len[drop];
			free(l->text[drop]);
		}
		for (i = drop; i < l->n; i++) {
			l->text[i - drop] = l->text[i];
			l->len[i - drop] = l->len[i];
		}
		l->n -= drop;
		l->base += drop;
	}
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
}

/* Hands event ev (new reference, taken) to f as text: f's answer. */
static int
follow_send(const struct run_follow *f, json_t *ev)
{
	char	*text;
	size_t	 len;
	int	 stop;

	if (ev == NULL || (text = store_json_text(ev, &len)) == NULL) {
		json_decref(ev);
		return 1;
	}
	json_decref(ev);
	stop = f->on_event(f->arg, text, len);
	free(text);
	return stop;
}

/* Dify's workflow_started of record rec (WorkflowStartStreamResponse). */
static json_t *
started_event(const json_t *rec)
{
	return json_pack("{s:s,s:O?,s:O?,s:{s:O?,s:O?,s:O?,s:O?,s:s}}",
	    "event", "workflow_started", "task_id", json_object_get(rec,
	    "task_id"), "workflow_run_id", json_object_get(rec, "id"), "data",
	    "id", json_object_get(rec, "id"), "workflow_id",
	    json_object_get(rec, "workflow_id"), "inputs",
	    json_object_get(rec, "inputs"), "created_at", json_object_get(rec,
	    "created_at"), "reason", "initial");
}

/*
 * Dify's workflow_finished of a finished run's record rec
 * (WorkflowResponseConverter.workflow_run_result_to_finish_response).
 */
static json_t *
finished_event(const json_t *rec)
{
#define F(k) json_object_get(rec, (k))
	return json_pack("{s:s,s:O?,s:O?,s:{s:O?,s:O?,s:O?,s:O?,s:O?,s:O?,"
	    "s:I,s:I,s:n,s:O?,s:O?,s:I,s:[]}}", "event", "workflow_finished",
	    "task_id", F("task_id"), "workflow_run_id", F("id"), "data", "id",
	    F("id"), "workflow_id", F("workflow_id"), "status", F("status"),
	    "outputs", F("outputs"), "error", F("error"), "elapsed_time",
	    F("elapsed_time"), "total_tokens", (json_int_t)json_integer_value(
	    F("total_tokens")), "total_steps", (json_int_t)json_integer_value(
	    F("total_steps")), "created_by", "created_at", F("created_at"),
	    "finished_at", F("finished_at"), "exceptions_count", (json_int_t)
	    json_integer_value(F("exceptions_count")), "files");
#undef F
}

/* The stored record of run id, or NULL. */
static json_t *
record_read(struct engine *e, const char *id)
{
	json_t *rec = NULL;

	if (store_get_copy_json(e->store, STORE_DB_RUNS, id, &rec) != 0)
		return NULL;
	return rec;
}

/* 1 when record rec is of a run still in progress. */
static int
record_running(const json_t *rec)
{
	const char *st = json_string_value(json_object_get(rec, "status"));

	return st != NULL && strcmp(st, "running") == 0;
}

/*
 * Follows log l of a run of this process (start: its start record):
 * every event kept from the first, then each new one, until the run is
 * over; a log that keeps no events (a blocking run, run.event_log 0) or
 * lost its first ones begins with the start record's workflow_started.
 * 1 when f said to stop, 0 when the run is over with *fin set when its
 * workflow_finished went out.
 */
static int
follow_log(struct live_log *l, const json_t *start,
    const struct run_follow *f, int *fin)
{
	struct timespec	 ts;
	char		*text;
	size_t		 seq = 0, len;
	int		 stop = 0, last;

	pthread_mutex_lock(&l->mu);
	if (!l->kept || l->base > 0) {
		pthread_mutex_unlock(&l->mu);
		if (follow_send(f, started_event(start)))
			return 1;
		pthread_mutex_lock(&l->mu);
	}
	while (!stop) {
		if (seq < l->base)
			seq = l->base;	/* gone past the size: the oldest kept */
		if (seq < l->base + l->n) {
			len = l->len[seq - l->base];
			if ((text = malloc(len + 1)) == NULL) {
				stop = 1;
				break;
			}
			memcpy(text, l->text[seq - l->base], len + 1);
			last = seq++ == l->finished;
			pthread_mutex_unlock(&l->mu);
			stop = f->on_event(f->arg, text, len);
			free(text);
			if (last)
				*fin = 1;
			pthread_mutex_lock(&l->mu);
			continue;
		}
		if (l->closed)
			break;
		/* no event for a second: is the client still there? */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec++;
		if (pthread_cond_timedwait(&l->cv, &l->mu, &ts) != 0) {
			pthread_mutex_unlock(&l->mu);
			stop = f->gone != NULL && f->gone(f->arg);
			pthread_mutex_lock(&l->mu);
		}
	}
	pthread_mutex_unlock(&l->mu);
	return stop;
}

/*
 * Follows a run in progress on another process or host through its
 * record: its workflow_started, then its record read every
 * run.stop_check_ms (at least 100 ms) until it is over. *rec is the
 * last record read (replaced; NULL when it went).
 */
static int
follow_record(struct engine *e, json_t **rec, const struct run_follow *f)
{
	struct timespec	 ts;
	char		 id[37];
	int		 ms = e->conf->run_stop_check_ms > 100 ?
			    e->conf->run_stop_check_ms : 100;

	snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(*rec,
	    "id")));
	if (follow_send(f, started_event(*rec)))
		return 1;
	while (*rec != NULL && record_running(*rec)) {
		ts.tv_sec = ms / 1000;
		ts.tv_nsec = (long)(ms % 1000) * 1000000;
		nanosleep(&ts, NULL);
		if (f->gone != NULL && f->gone(f->arg))
			return 1;
		json_decref(*rec);
		*rec = record_read(e, id);
	}
	return 0;
}

int
engine_run_events(struct engine *e, const char *app_id, const char *user,
    const char *task_id, const struct run_follow *f, char *err)
{
	struct run	*r;
	struct live_log	*l = NULL;
	json_t		*rec = NULL;
	const char	*mode;
	int		 rc = 0, fin = 0;

	if (engine_uuid_check(task_id) != 0)
		goto gone;
	pthread_mutex_lock(&e->live_mu);
	if ((r = live_find(e, app_id, user, task_id)) != NULL) {
		rec = json_deep_copy(r->start_rec);
		if ((l = r->log) != NULL) {
			pthread_mutex_lock(&l->mu);
			l->refs++;
			pthread_mutex_unlock(&l->mu);
		}
	}
	pthread_mutex_unlock(&e->live_mu);
	if (r == NULL && (rec = record_read(e, task_id)) != NULL &&
	    !record_owned(rec, app_id, "created_by_end_user", user)) {
		json_decref(rec);
		rec = NULL;
	}
	/* Dify answers only for the runs of an end user */
	if (rec == NULL || (user == NULL && json_string_value(json_object_get(
	    rec, "created_by_end_user")) == NULL))
		goto gone;
	mode = json_string_value(json_object_get(rec, "mode"));
	if (mode == NULL || (strcmp(mode, "workflow") != 0 &&
	    strcmp(mode, "advanced-chat") != 0)) {
		rc = engine_invalid(err, "cannot subscribe to workflow run, "
		    "workflow_run_id=%s", task_id);
		goto out;
	}
	f->on_start(f->arg);
	if (l != NULL) {
		if (follow_log(l, rec, f, &fin) != 0 || fin)
			goto out;
		/* over: its end as stored (nothing when its app went) */
		json_decref(rec);
		rec = record_read(e, task_id);
	} else if (r != NULL) {
		/* a run without a log (none could be made): its start, then
		 * its record */
		if (follow_record(e, &rec, f) != 0)
			goto out;
	} else if (record_running(rec) && follow_record(e, &rec, f) != 0)
		goto out;
	if (rec != NULL && !record_running(rec))
		follow_send(f, finished_event(rec));
out:
	log_release(l);
	json_decref(rec);
	return rc;
gone:
	if (err != NULL)
		snprintf(err, ENGINE_ERRMAX, "WorkflowRun not found, id=%.40s",
		    task_id);
	json_decref(rec);
	log_release(l);
	return ENGINE_ENOTFOUND;
}

/* ====== Registry ====== */

int
live_init(struct engine *e)
{
	pthread_condattr_t a;

	pthread_mutex_init(&e->live_mu, NULL);
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&e->live_cv, &a);
	pthread_condattr_destroy(&a);
	return 0;
}

void
engine_serve(struct engine *e)
{
	pthread_mutex_lock(&e->live_mu);
	e->live_serving = 1;
	if (!e->live_thread_on &&
	    pthread_create(&e->live_thread, NULL, publisher_main, e) == 0)
		e->live_thread_on = 1;
	pthread_cond_signal(&e->live_cv);
	pthread_mutex_unlock(&e->live_mu);
}

void
live_fini(struct engine *e)
{
	pthread_mutex_lock(&e->live_mu);
	e->live_quit = 1;
	pthread_cond_broadcast(&e->live_cv);
	pthread_mutex_unlock(&e->live_mu);
	if (e->live_thread_on)
		pthread_join(e->live_thread, NULL);
	pthread_cond_destroy(&e->live_cv);
	pthread_mutex_destroy(&e->live_mu);
}

int
live_add(struct run *r)
{
	struct engine	*e = r->e;
	int		 delay = e->conf->run_publish_after, rc, now;

	pthread_mutex_lock(&e->live_mu);
	/* the thread also renews the lease of runs stored at their start */
	if (!e->live_thread_on &&
	    pthread_create(&e->live_thread, NULL, publisher_main, e) == 0)
		e->live_thread_on = 1;
	/* no delay, or no thread to wait for it: stored now, at its start */
	now = delay == 0 || !e->live_thread_on;
	pthread_mutex_unlock(&e->live_mu);
	if (now) {
		if ((rc = publish(e, &r->start_rec, 1)) != 0)
			return rc;
		atomic_store(&r->published, 1);
		r->live_sent = 1;
	}
	r->live_due = live_now_ms() + delay;
	/* a workflow's or chatflow's events, for a page that comes back
	 * (none made: it is followed through its record) */
	if (r->legacy == NULL)
		r->log = log_new((size_t)e->conf->run_event_log,
		    r->opts->on_event != NULL && e->conf->run_event_log > 0);
	pthread_mutex_lock(&e->live_mu);
	r->live_prev = NULL;
	r->live_next = e->live;
	if (e->live != NULL)
		e->live->live_prev = r;
	e->live = r;
	/* the publisher sleeps until its earliest run or lease is due; a
	 * run due later than that does not need to wake it */
	if (e->live_idle || (!r->live_sent && r->live_due < e->live_wake))
		pthread_cond_signal(&e->live_cv);
	pthread_mutex_unlock(&e->live_mu);
	return 0;
}

int
live_final(struct run *r)
{
	struct engine	*e = r->e;
	int		 sent;

	pthread_mutex_lock(&e->live_mu);
	sent = r->live_sent;
	r->live_sent = 1;	/* the publisher leaves it alone now */
	pthread_mutex_unlock(&e->live_mu);
	return sent;
}

void
live_remove(struct run *r)
{
	struct engine *e = r->e;

	pthread_mutex_lock(&e->live_mu);
	if (r->live_prev != NULL)
		r->live_prev->live_next = r->live_next;
	else if (e->live == r)
		e->live = r->live_next;
	if (r->live_next != NULL)
		r->live_next->live_prev = r->live_prev;
	r->live_next = r->live_prev = NULL;
	pthread_mutex_unlock(&e->live_mu);
	/* its followers read what is left, then end */
	if (r->log != NULL) {
		pthread_mutex_lock(&r->log->mu);
		r->log->closed = 1;
		pthread_cond_broadcast(&r->log->cv);
		pthread_mutex_unlock(&r->log->mu);
		log_release(r->log);
		r->log = NULL;
	}
}

/* The live run with id or task id, owned as record_owned says (locked). */
static struct run *
live_find(struct engine *e, const char *app_id, const char *user,
    const char *id)
{
	struct run *r;

	for (r = e->live; r != NULL; r = r->live_next)
		if ((strcmp(r->id, id) == 0 || strcmp(r->task_id, id) == 0) &&
		    record_owned(r->start_rec, app_id, "created_by_end_user",
		    user))
			return r;
	return NULL;
}

int
live_stop(struct engine *e, const char *app_id, const char *user,
    const char *task_id)
{
	struct run	*r;
	int		 rc = ENGINE_ENOTFOUND;

	pthread_mutex_lock(&e->live_mu);
	if ((r = live_find(e, app_id, user, task_id)) != NULL) {
		atomic_store(&r->stop_flag, 1);
		rc = 0;
	}
	pthread_mutex_unlock(&e->live_mu);
	return rc;
}

json_t *
live_get(struct engine *e, const char *run_id)
{
	struct run	*r;
	json_t		*rec = NULL;

	pthread_mutex_lock(&e->live_mu);
	if ((r = live_find(e, NULL, NULL, run_id)) != NULL)
		rec = json_deep_copy(r->start_rec);
	pthread_mutex_unlock(&e->live_mu);
	return rec;
}

/* ====== Stop ====== */

int
run_stop_requested(struct run *r)
{
	struct store_txn	*t = NULL;
	json_t			*rec = NULL;
	int64_t			 now;
	int			 stop = 0;

	if (atomic_load(&r->stop_flag))
		return 1;
	if (r->opts->cancelled != NULL &&
	    r->opts->cancelled(r->opts->cancel_arg))
		return 1;
	/* Only a stored run can be stopped from another process. */
	if (!atomic_load(&r->published))
		return 0;
	now = live_now_ms();
	if (now - atomic_load(&r->stop_polled) < r->e->conf->run_stop_check_ms)
		return 0;
	atomic_store(&r->stop_polled, now);
	if (store_read_begin(r->e->store, &t) != 0)
		return 0;
	if (store_get_json(t, STORE_DB_RUNS, r->id, &rec) == 0)
		stop = json_is_true(json_object_get(rec, "stop_requested"));
	store_read_end(t);
	json_decref(rec);
	if (stop)
		atomic_store(&r->stop_flag, 1);
	return stop;
}
