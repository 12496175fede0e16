/*
 * sse.c — running an engine run as a server-sent event stream: the
 * response starts when the run has its ids (errors before that are plain
 * JSON answers), each event is one "data: {json}" line and a blank line,
 * and a side thread writes "event: ping" every 10 s so proxies keep the
 * stream open during long nodes. A client that goes away does not stop
 * the run (unless run.stop_on_disconnect says so: see run_cancelled), but
 * from then on no event is made for it.
 *
 * Flushes are coalesced: every flush is a FastCGI record, a write to nginx
 * and a chunk for the client, which made a fast model's answer cost a
 * flush per token. An event that finds the stream idle (nothing flushed for
 * server.stream_flush_ms) is flushed at once, so a first token or a slow
 * model's tokens leave as soon as they are made; one that follows closely
 * is written to the record buffer and the side thread flushes it when that
 * window ends, with whatever came meanwhile. A full record buffer (libfcgi's
 * 8 KB) goes out by itself. The last events are flushed before the answer ends.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fcgi/internal.h"

#define PING_MS	10000

struct sse {
	struct req	*r;
	pthread_mutex_t	 mu;		/* the response is written under it */
	pthread_cond_t	 cv;		/* wakes the side thread */
	pthread_t	 side;		/* pings and late flushes */
	int		 have_side;
	int		 started;
	int		 done;
	int		 window;	/* server.stream_flush_ms */
	int		 pending;	/* events written, not flushed */
	int64_t		 flushed;	/* ms of the last flush */
};

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 1 once the client is gone: a write failed, or it hung up. */
static int
client_gone(const struct req *r)
{
	return r->io->gone(r->io->ctx);
}

/* Flushes what was written; a write error means the client left. */
static void
flush_locked(struct sse *s, int64_t now)
{
	s->pending = 0;
	s->flushed = now;
	if (!client_gone(s->r))
		resp_flush(s->r);
}

/* Writes ev as one "data: {json}" event, not flushed. */
static void
put_event(struct req *r, const json_t *ev)
{
	char	*j;
	size_t	 len;

	/* the engine's events are trees: no need for jansson's loop check */
	if ((j = store_json_text(ev, &len)) == NULL)
		return;
	resp_write(r, "data: ", 6);
	resp_write(r, j, len);
	resp_write(r, "\n\n", 2);
	free(j);
}

/* ====== The stream ====== */

/*
 * The side thread: flushes events held back when their window ends, and
 * pings every PING_MS. It writes only under s->mu, like on_event.
 */
static void *
side_main(void *arg)
{
	struct sse	*s = arg;
	struct timespec	 ts;
	int64_t		 now, due, ping;

	pthread_mutex_lock(&s->mu);
	ping = now_ms() + PING_MS;
	while (!s->done) {
		due = s->pending && s->flushed + s->window < ping ?
		    s->flushed + s->window : ping;
		if ((now = now_ms()) < due) {
			ts.tv_sec = due / 1000;
			ts.tv_nsec = (long)(due % 1000) * 1000000;
			pthread_cond_timedwait(&s->cv, &s->mu, &ts);
			continue;
		}
		if (now >= ping) {
			if (!client_gone(s->r))
				resp_write(s->r, "event: ping\n\n", 13);
			ping = now + PING_MS;
		}
		flush_locked(s, now);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

static void
on_start(void *arg, const char *task_id, const char *run_id)
{
	struct sse *s = arg;

	(void)task_id;
	(void)run_id;
	pthread_mutex_lock(&s->mu);
	resp_begin_stream(s->r);
	s->started = 1;
	s->flushed = now_ms() - s->window;	/* the first event leaves */
	s->have_side = pthread_create(&s->side, NULL, side_main, s) == 0;
	pthread_mutex_unlock(&s->mu);
}

static void
on_event(void *arg, const json_t *ev)
{
	struct sse	*s = arg;
	int64_t		 now;

	pthread_mutex_lock(&s->mu);
	if (s->started && !client_gone(s->r)) {
		put_event(s->r, ev);
		/*
		 * Within the window of the last flush an event waits for the
		 * side thread's; the first one to wait wakes it to set its
		 * deadline. The later ones just join it.
		 */
		if (!s->pending) {
			now = now_ms();
			if (s->window == 0 || !s->have_side ||
			    now - s->flushed >= s->window)
				flush_locked(s, now);
			else {
				s->pending = 1;
				pthread_cond_signal(&s->cv);
			}
		}
	}
	pthread_mutex_unlock(&s->mu);
}

/*
 * Ends the stream of a run that returned rc (err: its message): the side
 * thread stops, an error after the stream began travels in it, and what
 * is still held back leaves.
 */
static void
sse_end(struct sse *s, int rc, const char *err)
{
	json_t *ev;

	pthread_mutex_lock(&s->mu);
	s->done = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (s->have_side)
		pthread_join(s->side, NULL);
	/* nothing else writes the stream now */
	if (!s->started || client_gone(s->r))
		return;
	if (rc != 0) {
		ev = json_pack("{s:s,s:i,s:s,s:s}", "event", "error", "status",
		    500, "code", "internal_server_error", "message",
		    err[0] ? err : engine_strerror(rc));
		if (ev != NULL)
			put_event(s->r, ev);
		json_decref(ev);
	}
	flush_locked(s, now_ms());
}

int
sse_run(struct req *r, struct run_opts *o, char *err, json_t **out)
{
	struct sse	 s;
	int		 rc;

	memset(&s, 0, sizeof(s));
	s.r = r;
	s.window = r->conf->stream_flush_ms;
	pthread_mutex_init(&s.mu, NULL);
	cond_init_monotonic(&s.cv);
	o->on_start = on_start;
	o->on_event = on_event;
	o->arg = &s;
	metric_add(METRIC_STREAMS_ACTIVE, NULL, 1);
	rc = engine_run(r->eng, o, err, out);
	sse_end(&s, rc, err);
	metric_add(METRIC_STREAMS_ACTIVE, NULL, -1);
	/* s dies here: o must not keep pointing at it. */
	o->on_start = NULL;
	o->on_event = NULL;
	o->arg = NULL;
	pthread_cond_destroy(&s.cv);
	pthread_mutex_destroy(&s.mu);
	if (rc != 0 && !s.started)
		resp_engine_error(r, rc, err, "app or conversation");
	return rc;
}

/* ====== Following a run ====== */

static void
follow_start(void *arg)
{
	on_start(arg, NULL, NULL);
}

/* One event of the run's log: written, flushed as on_event's. */
static int
follow_event(void *arg, const char *json, size_t len)
{
	struct sse	*s = arg;
	int64_t		 now;
	int		 gone;

	pthread_mutex_lock(&s->mu);
	if ((gone = client_gone(s->r)) == 0) {
		resp_write(s->r, "data: ", 6);
		resp_write(s->r, json, len);
		resp_write(s->r, "\n\n", 2);
		if (!s->pending) {
			now = now_ms();
			if (s->window == 0 || !s->have_side ||
			    now - s->flushed >= s->window)
				flush_locked(s, now);
			else {
				s->pending = 1;
				pthread_cond_signal(&s->cv);
			}
		}
	}
	pthread_mutex_unlock(&s->mu);
	return gone;
}

static int
follow_gone(void *arg)
{
	struct sse	*s = arg;
	int		 gone;

	pthread_mutex_lock(&s->mu);
	gone = client_gone(s->r);
	pthread_mutex_unlock(&s->mu);
	return gone;
}

void
sse_follow(struct req *r, const char *app_id, const char *user,
    const char *task_id)
{
	struct run_follow	 f = { follow_start, follow_event, follow_gone,
				    NULL };
	struct sse		 s;
	char			 err[ENGINE_ERRMAX] = "";
	int			 rc;

	memset(&s, 0, sizeof(s));
	s.r = r;
	s.window = r->conf->stream_flush_ms;
	pthread_mutex_init(&s.mu, NULL);
	cond_init_monotonic(&s.cv);
	f.arg = &s;
	metric_add(METRIC_STREAMS_ACTIVE, NULL, 1);
	rc = engine_run_events(r->eng, app_id, user, task_id, &f, err);
	sse_end(&s, 0, err);
	metric_add(METRIC_STREAMS_ACTIVE, NULL, -1);
	pthread_cond_destroy(&s.cv);
	pthread_mutex_destroy(&s.mu);
	if (rc != 0 && !s.started)
		resp_engine_error(r, rc, err, "workflow run");
}
