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
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/run/run.h"

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ====== Publishing ====== */

struct publish {
	json_t	**recs;
	size_t	  n;
};

/* Stores each start record whose run has no record yet (run.c's layout). */
static int
publish_fn(struct store_txn *t, void *arg)
{
	struct publish	*p = arg;
	const void	*v;
	size_t		 i, vlen;
	int		 rc;

	for (i = 0; i < p->n; i++) {
		rc = store_get(t, STORE_DB_RUNS, json_string_value(
		    json_object_get(p->recs[i], "id")), 36, &v, &vlen);
		if (rc == 0)
			continue;	/* the run's final record is in */
		if (rc == STORE_ENOTFOUND && store_get(t, STORE_DB_APPS,
		    json_string_value(json_object_get(p->recs[i], "app_id")),
		    36, &v, &vlen) == STORE_ENOTFOUND)
			continue;	/* its app was deleted meanwhile */
		if (rc != STORE_ENOTFOUND ||
		    (rc = run_record_put(t, p->recs[i])) != 0)
			return rc;
	}
	return 0;
}

static int
publish(struct engine *e, json_t **recs, size_t n)
{
	struct publish p = { recs, n };

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
	/* The runs still here may now be stopped through the store. */
	for (r = e->live; r != NULL; r = r->live_next)
		for (i = 0; i < n; i++)
			if (r->start_rec == recs[i] && rc == 0)
				atomic_store(&r->published, 1);
	for (i = 0; i < n; i++)
		json_decref(recs[i]);
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
		now = mono_ms();
		publish_due(e, now);
		next = -1;
		for (r = e->live; r != NULL; r = r->live_next)
			if (!r->live_sent && (next < 0 || r->live_due < next))
				next = r->live_due;
		if (next < 0) {
			e->live_idle = 1;
			pthread_cond_wait(&e->live_cv, &e->live_mu);
			e->live_idle = 0;
			continue;
		}
		if (next <= (now = mono_ms()))
			continue;
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
	if (delay > 0 && !e->live_thread_on &&
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
	r->live_due = mono_ms() + delay;
	pthread_mutex_lock(&e->live_mu);
	r->live_prev = NULL;
	r->live_next = e->live;
	if (e->live != NULL)
		e->live->live_prev = r;
	e->live = r;
	/* the publisher sleeps until its earliest run is due; a later run
	 * only needs it when it sleeps with nothing to wait for */
	if (!r->live_sent && e->live_idle)
		pthread_cond_signal(&e->live_cv);
	pthread_mutex_unlock(&e->live_mu);
	return 0;
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
	now = mono_ms();
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
