/*
 * admit.c — which runs may start: server.max_runs per process, and
 * app.max_active_requests per app across every process that shares the
 * data (the data directory, or one PostgreSQL database for many hosts).
 * Over a limit the caller is answered at once (429 for the app, 503 for
 * the server, both with Retry-After); nothing queues.
 *
 * The per-app count is a set of slots that storage keeps outside its
 * records (store_slot_take: flock'd files beside LMDB's map, advisory
 * locks of the PostgreSQL server), held for as long as the run lasts and
 * dropped by the kernel or the server when the process holding one dies:
 * a crash never leaves a slot taken, and no write reaches the database.
 */
#include <stdatomic.h>

#include "fcgi/internal.h"

static atomic_int runs_now;	/* runs of this process */

/* server.max_runs, or three quarters of max_connections when 0. */
static int
max_runs(const struct conf *c)
{
	int n = c->max_runs > 0 ? c->max_runs : c->max_connections / 4 * 3;

	return n > 0 ? n : 1;
}

/* run_opts.cancelled of a run of request arg. */
static int
run_cancelled(void *arg)
{
	struct req *r = arg;

	return server_cancelling() || (r->conf->run_stop_on_disconnect &&
	    r->io->gone(r->io->ctx));
}

int
run_admit(struct req *r, const char *app_id, struct run_opts *o,
    struct run_slot *s)
{
	const struct conf	*c = r->conf;
	int			 n, rc;

	s->e = r->eng;
	s->app_held = 0;
	s->counted = 0;
	o->request_id = r->request_id;
	o->cancelled = run_cancelled;
	o->cancel_arg = r;
	n = atomic_fetch_add(&runs_now, 1) + 1;
	s->counted = 1;
	if (n > max_runs(c)) {
		run_release(s);
		metric_add(METRIC_REJECTED, METRIC_LABELS("server.max_runs",
		    "503"), 1);
		resp_header(r, "Retry-After", "1");
		resp_error(r, 503, "server_busy", "The server is running as "
		    "many runs as it may (%d, server.max_runs); try again "
		    "shortly.", max_runs(c));
		return -1;
	}
	if (c->app_max_active_requests == 0)
		return 0;
	if ((rc = engine_app_slot_take(r->eng, app_id,
	    c->app_max_active_requests, &s->app_slot)) == 0) {
		s->app_held = 1;
		return 0;
	}
	run_release(s);
	if (rc < 0) {
		resp_engine_error(r, rc, "", "the app's active requests");
		return -1;
	}
	metric_add(METRIC_REJECTED, METRIC_LABELS("app.max_active_requests",
	    "429"), 1);
	resp_header(r, "Retry-After", "1");
	resp_error(r, 429, "too_many_requests", "Too many requests. Please "
	    "try again later. The current maximum concurrent requests allowed "
	    "for this app is %d (app.max_active_requests).",
	    c->app_max_active_requests);
	return -1;
}

void
run_release(struct run_slot *s)
{
	if (s->app_held) {
		engine_app_slot_give(s->e, s->app_slot);
		s->app_held = 0;
	}
	if (s->counted) {
		atomic_fetch_sub(&runs_now, 1);
		s->counted = 0;
	}
}
