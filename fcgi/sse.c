/*
 * sse.c — running an engine run as a server-sent event stream: the
 * response starts when the run has its ids (errors before that are plain
 * JSON answers), each event is one "data: {json}" line and a blank line,
 * flushed at once, and a side thread writes "event: ping" every 10 s so
 * proxies keep the stream open during long nodes. A client that goes away
 * does not stop the run (unless run.stop_on_disconnect says so: see
 * run_cancelled), but from then on no event is made for it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fcgi/internal.h"

#define PING_SECONDS 10

struct sse {
	struct req	*r;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	pthread_t	 ping;
	int		 have_ping;
	int		 started;
	int		 done;
};

/* 1 once the client is gone: a write failed, or it hung up. */
static int
client_gone(const struct req *r)
{
	return r->io->gone(r->io->ctx);
}

/* Writes and flushes; a write error means the client left. */
static void
put_locked(struct sse *s, const char *text, size_t n)
{
	if (client_gone(s->r))
		return;
	resp_write(s->r, text, n);
	resp_flush(s->r);
}

/* Writes ev as one "data: {json}" event, not flushed. */
static void
put_event(struct req *r, const json_t *ev)
{
	char *j;

	if ((j = json_dumps(ev, JSON_COMPACT)) == NULL)
		return;
	resp_write(r, "data: ", 6);
	resp_write(r, j, strlen(j));
	resp_write(r, "\n\n", 2);
	free(j);
}

static void *
ping_main(void *arg)
{
	struct sse	*s = arg;
	struct timespec	 ts;

	pthread_mutex_lock(&s->mu);
	while (!s->done) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += PING_SECONDS;
		if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) == ETIMEDOUT &&
		    !s->done)
			put_locked(s, "event: ping\n\n", 13);
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
	pthread_mutex_unlock(&s->mu);
	s->have_ping = pthread_create(&s->ping, NULL, ping_main, s) == 0;
}

static void
on_event(void *arg, const json_t *ev)
{
	struct sse *s = arg;

	pthread_mutex_lock(&s->mu);
	if (s->started && !client_gone(s->r)) {
		put_event(s->r, ev);
		resp_flush(s->r);
	}
	pthread_mutex_unlock(&s->mu);
}

int
sse_run(struct req *r, struct run_opts *o, char *err, json_t **out)
{
	struct sse	 s;
	json_t		*ev;
	int		 rc;

	memset(&s, 0, sizeof(s));
	s.r = r;
	pthread_mutex_init(&s.mu, NULL);
	cond_init_monotonic(&s.cv);
	o->on_start = on_start;
	o->on_event = on_event;
	o->arg = &s;
	rc = engine_run(r->eng, o, err, out);
	/* stop the pings: after this nothing else writes to the stream */
	pthread_mutex_lock(&s.mu);
	s.done = 1;
	pthread_cond_broadcast(&s.cv);
	pthread_mutex_unlock(&s.mu);
	if (s.have_ping)
		pthread_join(s.ping, NULL);
	if (s.started && rc != 0 && !client_gone(r)) {
		/* errors after the stream began travel in it */
		ev = json_pack("{s:s,s:i,s:s,s:s}", "event", "error", "status",
		    500, "code", "internal_server_error", "message",
		    err[0] ? err : engine_strerror(rc));
		if (ev != NULL)
			put_event(r, ev);
		json_decref(ev);
	}
	pthread_cond_destroy(&s.cv);
	pthread_mutex_destroy(&s.mu);
	if (rc != 0 && !s.started)
		resp_engine_error(r, rc, err, "app or conversation");
	return rc;
}
