/*
 * admit.c — which runs may start: server.max_runs per process, and
 * app.max_active_requests per app across every process that shares the
 * data directory. Over a limit the caller is answered at once (429 for the
 * app, 503 for the server, both with Retry-After); nothing queues.
 *
 * The per-app count lives in the kernel, not in storage: slot i of an app
 * is the file <data_dir>/active/<app id>.<i>, held with flock(LOCK_EX) for
 * as long as the run lasts. Another process (or another request of this
 * one: a second open() is a second lock owner) cannot take a held slot,
 * and a process that dies drops its locks with its files, so a crash never
 * leaves a slot taken and no write reaches the database.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fcgi/internal.h"

static atomic_int runs_now;	/* runs of this process */

/* server.max_runs, or three quarters of max_connections when 0. */
static int
max_runs(const struct conf *c)
{
	int n = c->max_runs > 0 ? c->max_runs : c->max_connections / 4 * 3;

	return n > 0 ? n : 1;
}

/*
 * Takes a free slot of app_id into *fd. Returns 0, 1 when every slot is
 * held, or -1 when the slot files cannot be used (logged).
 */
static int
app_slot_take(const struct conf *c, const char *app_id, int *fd)
{
	char	dir[1100], path[1200];
	int	i, f;

	snprintf(dir, sizeof(dir), "%s/active", c->data_dir);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		log_error("app.max_active_requests: cannot make '%s': %s", dir,
		    strerror(errno));
		return -1;
	}
	for (i = 0; i < c->app_max_active_requests; i++) {
		snprintf(path, sizeof(path), "%s/%s.%d", dir, app_id, i);
		f = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (f < 0) {
			log_error("app.max_active_requests: cannot open '%s': "
			    "%s", path, strerror(errno));
			return -1;
		}
		if (flock(f, LOCK_EX | LOCK_NB) == 0) {
			*fd = f;
			return 0;
		}
		close(f);
	}
	return 1;
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

	s->app_fd = -1;
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
	if ((rc = app_slot_take(c, app_id, &s->app_fd)) == 0)
		return 0;
	run_release(s);
	if (rc < 0) {
		resp_error(r, 500, "internal_server_error", "cannot count the "
		    "app's active requests (app.max_active_requests)");
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
	if (s->app_fd >= 0) {
		close(s->app_fd);	/* drops the lock */
		s->app_fd = -1;
	}
	if (s->counted) {
		atomic_fetch_sub(&runs_now, 1);
		s->counted = 0;
	}
}
