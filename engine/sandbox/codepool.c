/*
 * codepool.c — warm code runners, so that a code node takes milliseconds.
 *
 * A cold code node starts a sandbox (bwrap) and an interpreter, tens to
 * hundreds of milliseconds, for code that usually runs in one. The pool
 * starts runners ahead: per language up to code.pool_size of them, each in
 * a local sandbox of its own made from the node's settings and started by
 * the cold path's own first half (sandbox_code_start: the same runner,
 * command line, limits, seccomp filter, user, mounts and network), waiting
 * on its standard input. A job takes one and hands it the code and inputs
 * (sandbox_code_finish, the cold path's second half); then the runner is
 * killed and its sandbox removed. One runner and one sandbox serve one job:
 * no job sees another's files, globals or processes.
 *
 * One thread per pool, started by the first job of any language, keeps it
 * filled: it starts runners (and must outlive them: bwrap's
 * --die-with-parent follows the thread that forked it), watches their
 * control pipes (a byte when ready, end of file when one died), replaces
 * the dead, and replaces the oldest runner once all of a language's have
 * waited code.pool_idle seconds (one at a time, so the others stay warm).
 * Starts that fail (no interpreter, a sandbox that cannot be made, a
 * runner dying before it is ready) back off: from the second in a row, 1,
 * 2, 4 ... up to 60 s between starts, with a warning in the log. A
 * language gets runners only once a job asked for it.
 *
 * With code.fork_server, python3's runners are fork servers (codefork.c)
 * instead (javascript's with code.fork_server_javascript): a job hands its server back (SLOT_READY again) unless the
 * server is dead, so one server serves job after job. A job that finds
 * every server busy asks for one more (lp->want, up to p->max) and waits
 * up to code.pool_wait_ms for the first one free; servers above p->size that
 * waited p->spare_idle seconds are ended.
 *
 * Otherwise a job never waits for a runner: with none ready or starting
 * it runs cold, as without a pool. The thread holds the pool's mutex only to look
 * at and change slots, never while it starts or ends a runner.
 *
 * Whoever ends a runner reaps its bwrap: the job (sandbox_local_wait) when
 * the runner exited before it had the answer (a crash, a kill at a limit),
 * else the thread (sandbox_proc_kill): for runners that died, expired or
 * are left at stop, and for every runner whose job answered on its word
 * before its exit (code.c), which the thread kills, with whatever its code
 * left running, as soon as it is handed back, then reaps and removes its
 * sandbox while the job goes on. Nothing here installs a SIGCHLD handler
 * or waits for any child but its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/sandbox/sandbox.h"

#define POOL_LANGS	2	/* as in sandbox_code_pool_stats */
#define BACKOFF_MAX	60	/* seconds between starts at most */
/* warm ones and lent ones */
#define POOL_SLOTS	(2 * SANDBOX_POOL_MAX)

/*
 * A runner given to a job is replaced once the job is over, or after this
 * many milliseconds if it is not: starting the next one (a sandbox and an
 * interpreter: tens of milliseconds of CPU) while a short job runs would
 * slow that job down on a busy host.
 */
#define REFILL_AFTER_MS	50

/*
 * A job that finds every fork server busy waits at most this long for one
 * to come back (or for the one its miss started) before it runs cold:
 * about what a cold start costs on a busy host, so that waiting is never
 * the slower choice by much.
 */

static const char *const pool_langs[POOL_LANGS] = {"python3", "javascript"};

enum slot_state {
	SLOT_EMPTY,
	SLOT_BUSY,		/* the thread is starting or ending it */
	SLOT_STARTING,		/* started, not ready yet */
	SLOT_READY,		/* waiting for a job */
	SLOT_LENT,		/* a job has its runner */
	SLOT_DONE,		/* the job is over: its sandbox to remove */
};

struct slot {
	enum slot_state		 state;
	struct sandbox_runner	 r;
	int64_t			 since;	/* started, ready, lent */
};

struct lang_pool {
	int		 active;	/* a job asked: keep it filled */
	int		 failures;	/* starts in a row that failed */
	int		 want;		/* fork servers asked for by misses */
	int64_t		 retry_at;	/* no start before (us) */
	struct slot	 slot[POOL_SLOTS];
};

struct sandbox_code_pool {
	pthread_mutex_t		 mu;
	pthread_cond_t		 ready_cv;	/* a runner is ready */
	struct sandbox_config	 cfg;
	int			 size;
	int			 idle;		/* seconds; 0: keep */
	int			 fork;		/* SANDBOX_FORK_*: on fork servers */
	int			 max;		/* fork servers at most */
	int			 wait_ms;	/* for a busy server to be free
						 * before one starts cold */
	int			 spare_idle;	/* seconds before one above size
						 * is ended */
	int			 wake[2];	/* a byte: thread, look */
	pthread_t		 thread;
	int			 running;	/* the thread was started */
	int			 no_thread;	/* and could not be */
	int			 stopping;
	int64_t			 next_us;	/* next look due (us) */
	struct lang_pool	 lang[POOL_LANGS];
	long			 hits, early, misses;
	long			 started, died, expired, served;
};

/* ====== Slots ====== */

/* The pool's index of language, or -1. */
static int
lang_index(const char *language)
{
	int i;

	for (i = 0; language != NULL && i < POOL_LANGS; i++)
		if (strcmp(pool_langs[i], language) == 0)
			return i;
	return -1;
}

/* 1 when a and b make the same sandboxes and runs: every setting of
 * struct sandbox_config is the same, and b has no provider options. */
static int
cfg_same(const struct sandbox_config *a, const struct sandbox_config *b)
{
	return strcmp(a->dir, b->dir) == 0 && a->network == b->network &&
	    strcmp(a->network_allow, b->network_allow) == 0 &&
	    a->network_connections == b->network_connections &&
	    a->network_idle == b->network_idle &&
	    a->memory == b->memory && a->cpu_seconds == b->cpu_seconds &&
	    a->processes == b->processes && a->file_size == b->file_size &&
	    a->workspace_size == b->workspace_size &&
	    a->open_files == b->open_files && a->timeout == b->timeout &&
	    a->max_output == b->max_output && a->uid == b->uid &&
	    a->no_mount == b->no_mount && strcmp(a->python_paths,
	    b->python_paths) == 0 && b->options == NULL;
}

/* 1 when language li of p runs on fork servers. */
static int
lang_forks(const struct sandbox_code_pool *p, int li)
{
	return (p->fork & (li == 0 ? SANDBOX_FORK_PYTHON3 :
	    SANDBOX_FORK_JAVASCRIPT)) != 0 &&
	    sandbox_code_fork_language(pool_langs[li]);
}

static void
pool_wake(struct sandbox_code_pool *p)
{
	if (write(p->wake[1], "", 1) < 0) {
		/* full: the thread has a look coming anyway */
	}
}

/* Kills runner r, reaps it and removes its sandbox. */
static void
runner_end(struct sandbox_runner *r)
{
	sandbox_code_drop(r);
	sandbox_free(r->sb);
	r->sb = NULL;
}

/*
 * Ends the runner in slot s (the mutex held on entry and on return, not
 * in between).
 */
static void
slot_end(struct sandbox_code_pool *p, struct slot *s)
{
	struct sandbox_runner r = s->r;

	s->state = SLOT_BUSY;
	pthread_mutex_unlock(&p->mu);
	runner_end(&r);
	pthread_mutex_lock(&p->mu);
	memset(&s->r, 0, sizeof(s->r));
	s->r.ctl = -1;
	s->state = SLOT_EMPTY;
}

/* A runner of language li could not start, or died before it was
 * ready: from the second in a row, the next start waits a while. */
static void
lang_failed(struct sandbox_code_pool *p, int li, const char *why)
{
	struct lang_pool	*lp = &p->lang[li];
	int			 wait = 0;

	lp->failures++;
	if (lp->failures > 1) {
		wait = lp->failures - 2 < 6 ? 1 << (lp->failures - 2)
					    : BACKOFF_MAX;
		if (wait > BACKOFF_MAX)
			wait = BACKOFF_MAX;
		lp->retry_at = sandbox_now_us() + (int64_t)wait * 1000000;
	}
	log_warn("code pool: a warm %s runner %s%s", pool_langs[li], why,
	    wait > 0 ? "; starting the next one later" : "");
}

/*
 * Starts a runner of language li in empty slot s (the mutex held on entry
 * and on return, not in between).
 */
static void
slot_start(struct sandbox_code_pool *p, int li, struct slot *s)
{
	struct sandbox_config	 cfg;
	struct sandbox_runner	 r;
	struct sandbox		*sb = NULL;
	char			 err[ENGINE_ERRMAX];
	char			 why[ENGINE_ERRMAX + 32];
	int			 rc;

	s->state = SLOT_BUSY;
	/* A warm runner reserves its share of sandbox.memory_budget like any
	 * sandbox, but never waits for room: it is tried again later. */
	cfg = p->cfg;
	cfg.budget_wait = 0;
	pthread_mutex_unlock(&p->mu);
	memset(&r, 0, sizeof(r));
	r.ctl = -1;
	if ((rc = sandbox_create(&sandbox_provider_local, &cfg, err,
	    &sb)) == 0)
		rc = lang_forks(p, li) ? sandbox_code_fork_start(sb,
		    pool_langs[li], err, &r) : sandbox_code_start(sb,
		    pool_langs[li], err, &r);
	r.sb = sb;
	r.warm = 1;
	if (rc != 0)
		runner_end(&r);
	pthread_mutex_lock(&p->mu);
	if (rc != 0) {
		s->state = SLOT_EMPTY;
		snprintf(why, sizeof(why), "could not start: %s", err);
		lang_failed(p, li, why);
		return;
	}
	p->started++;
	s->r = r;
	s->since = sandbox_now_us();
	s->state = SLOT_STARTING;
}

/*
 * One look at every language (the mutex held): removes the sandbox of one
 * finished job, ends one expired runner or starts one missing runner and
 * returns 1 (look again), or returns 0 with p->next_us set to when the
 * next look is due (INT64_MAX: none).
 */
static int
pool_tend(struct sandbox_code_pool *p)
{
	struct lang_pool	*lp;
	struct slot		*s, *oldest, *newest, *empty;
	int64_t			 now = sandbox_now_us(), due;
	int			 li, si, ready, used, target, forks;

	p->next_us = INT64_MAX;
	for (li = 0; li < POOL_LANGS; li++) {
		lp = &p->lang[li];
		oldest = newest = empty = NULL;
		forks = lang_forks(p, li);
		for (si = ready = used = 0; si < POOL_SLOTS; si++) {
			s = &lp->slot[si];
			switch (s->state) {
			case SLOT_EMPTY:
				if (empty == NULL)
					empty = s;
				break;
			case SLOT_DONE:
				slot_end(p, s);
				return 1;
			case SLOT_LENT:
				/* a fork server comes back */
				if (forks) {
					used++;
					break;
				}
				/* counted until its job ends or is not
				 * short */
				due = s->since + REFILL_AFTER_MS * 1000;
				if (now < due) {
					used++;
					if (due < p->next_us)
						p->next_us = due;
				}
				break;
			case SLOT_READY:
				used++;
				ready++;
				if (oldest == NULL || s->since < oldest->since)
					oldest = s;
				if (newest == NULL || s->since > newest->since)
					newest = s;
				break;
			default:
				used++;
				break;
			}
		}
		if (!lp->active)
			continue;
		target = p->size;
		if (forks && lp->want > target)
			target = lp->want;
		/* A fork server above the size, unused for spare_idle: the
		 * one that waited least is ended, so that the others keep
		 * their turn for the idle replacement below. */
		if (forks && used > p->size && newest != NULL) {
			due = newest->since + (int64_t)p->spare_idle * 1000000;
			if (now >= due) {
				if (lp->want > p->size)
					lp->want--;
				slot_end(p, newest);
				return 1;
			}
			if (due < p->next_us)
				p->next_us = due;
		}
		if (p->idle > 0 && ready == p->size && oldest != NULL) {
			due = oldest->since + (int64_t)p->idle * 1000000;
			if (now >= due) {
				p->expired++;
				slot_end(p, oldest);
				return 1;
			}
			if (due < p->next_us)
				p->next_us = due;
		}
		if (used < target && empty != NULL) {
			if (now >= lp->retry_at) {
				slot_start(p, li, empty);
				return 1;
			}
			if (lp->retry_at < p->next_us)
				p->next_us = lp->retry_at;
		}
	}
	return 0;
}

/* ====== The pool's thread ====== */

static void *
pool_main(void *arg)
{
	struct sandbox_code_pool *p = arg;
	struct pollfd		  pfd[1 + POOL_LANGS * POOL_SLOTS];
	struct slot		 *who[1 + POOL_LANGS * POOL_SLOTS];
	int			  wli[1 + POOL_LANGS * POOL_SLOTS];
	struct slot		 *s;
	char			  buf[64];
	int			  n, i, li, si, ms, said;
	int64_t			  wait;

	pthread_mutex_lock(&p->mu);
	while (!p->stopping) {
		if (pool_tend(p))
			continue;
		n = 0;
		pfd[n].fd = p->wake[0];
		pfd[n].events = POLLIN;
		wli[n] = -1;
		who[n++] = NULL;
		for (li = 0; li < POOL_LANGS; li++)
			for (si = 0; si < POOL_SLOTS; si++) {
				s = &p->lang[li].slot[si];
				if (s->state != SLOT_STARTING &&
				    s->state != SLOT_READY)
					continue;
				pfd[n].fd = s->r.ctl;
				pfd[n].events = POLLIN;
				wli[n] = li;
				who[n++] = s;
			}
		ms = -1;
		if (p->next_us != INT64_MAX) {
			wait = (p->next_us - sandbox_now_us()) / 1000 + 1;
			ms = wait > 3600000 ? 3600000 : wait < 0 ? 0
			    : (int)wait;
		}
		pthread_mutex_unlock(&p->mu);
		(void)poll(pfd, (nfds_t)n, ms);
		pthread_mutex_lock(&p->mu);
		if (pfd[0].revents != 0)
			while (read(p->wake[0], buf, sizeof(buf)) > 0)
				;
		/*
		 * A slot may have changed meanwhile (a job took it, even a
		 * new runner may sit there): what counts is what its pipe
		 * says now, read without blocking.
		 */
		for (i = 1; i < n && !p->stopping; i++) {
			s = who[i];
			if (pfd[i].revents == 0 || (s->state != SLOT_STARTING &&
			    s->state != SLOT_READY))
				continue;
			li = wli[i];
			said = sandbox_code_ready(&s->r);
			if (said == 1 && s->state == SLOT_STARTING) {
				s->state = SLOT_READY;
				s->since = sandbox_now_us();
				p->lang[li].failures = 0;
				pthread_cond_broadcast(&p->ready_cv);
			} else if (said < 0 && s->state == SLOT_READY) {
				/* killed from outside, out of memory: its
				 * place is refilled at once */
				p->died++;
				log_warn("code pool: a warm %s runner died "
				    "while it waited", pool_langs[li]);
				slot_end(p, s);
			} else if (said < 0) {
				p->died++;
				lang_failed(p, li, "died while it started (is "
				    "the interpreter installed in /usr/bin?)");
				slot_end(p, s);
			}
		}
	}
	for (li = 0; li < POOL_LANGS; li++)
		for (si = 0; si < POOL_SLOTS; si++) {
			s = &p->lang[li].slot[si];
			if (s->state == SLOT_STARTING ||
			    s->state == SLOT_READY || s->state == SLOT_DONE)
				slot_end(p, s);
		}
	pthread_cond_broadcast(&p->ready_cv);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/*
 * Marks language li wanted and starts the thread if it is not running
 * (the mutex held). The thread starts with every signal blocked: signals
 * are the server's main thread's business.
 */
static void
pool_activate(struct sandbox_code_pool *p, int li)
{
	sigset_t	all, old;
	int		rc;

	if (!p->lang[li].active) {
		p->lang[li].active = 1;
		pool_wake(p);
	}
	if (p->running || p->no_thread || p->stopping)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&p->thread, NULL, pool_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		p->no_thread = 1;
		log_warn("code pool: cannot start its thread (%s); code nodes "
		    "start cold", strerror(rc));
		return;
	}
	p->running = 1;
}

/*
 * Takes a runner of language li for a job: a ready one, else one still
 * starting (it is ahead of a cold start). Returns its slot, lent to the
 * job until pool_return, with *r filled; or NULL when there is none: the
 * job runs cold.
 */
static struct slot *
pool_take(struct sandbox_code_pool *p, int li, struct sandbox_runner *r)
{
	struct lang_pool	*lp = &p->lang[li];
	struct slot		*s, *best = NULL;
	struct timespec		 until;
	int			 si, lent, asked = 0;

	pthread_mutex_lock(&p->mu);
	pool_activate(p, li);
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += p->wait_ms / 1000;
	until.tv_nsec += (long)(p->wait_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	for (;;) {
		best = NULL;
		for (si = lent = 0; si < POOL_SLOTS && !p->stopping; si++) {
			s = &lp->slot[si];
			lent += s->state == SLOT_LENT || s->state == SLOT_BUSY;
			if (s->state != SLOT_READY &&
			    s->state != SLOT_STARTING)
				continue;
			if (best == NULL || (s->state == SLOT_READY &&
			    best->state != SLOT_READY) || (s->state ==
			    best->state && s->since < best->since))
				best = s;
		}
		if (best != NULL || !lang_forks(p, li) || p->stopping ||
		    !p->running || lent == 0)
			break;
		/* Every fork server is busy: one more is asked for (up to
		 * the max), and the job waits for whichever is free first. */
		if (!asked) {
			asked = 1;
			if (lp->want < p->size)
				lp->want = p->size;
			if (lp->want < p->max)
				lp->want++;
			pool_wake(p);
		}
		if (pthread_cond_timedwait(&p->ready_cv, &p->mu, &until) ==
		    ETIMEDOUT)
			break;
	}
	if (best == NULL) {
		p->misses++;
		pthread_mutex_unlock(&p->mu);
		return NULL;
	}
	if (best->state == SLOT_STARTING)
		p->early++;
	*r = best->r;
	memset(&best->r, 0, sizeof(best->r));
	best->r.ctl = -1;
	best->state = SLOT_LENT;
	best->since = sandbox_now_us();
	p->hits++;
	pool_wake(p);		/* to refill if the job is not short */
	pthread_mutex_unlock(&p->mu);
	r->t0 = sandbox_now_us();
	return best;
}

/*
 * The job on slot s's runner has its answer: the thread ends what is left
 * of the runner (its processes, still there when the job answered on the
 * runner's word before its exit), reaps it, removes its sandbox and
 * refills, all after the job went on; at stop, when the thread may be
 * gone, the job does it here.
 */
static void
pool_return(struct sandbox_code_pool *p, struct slot *s,
    struct sandbox_runner *r)
{
	pthread_mutex_lock(&p->mu);
	if (r->gone)
		p->died++;
	if (!p->stopping && r->fork && !r->gone && !r->dead) {
		/* the server takes the next job */
		s->r = *r;
		s->state = SLOT_READY;
		s->since = sandbox_now_us();
		p->served++;
		pthread_cond_broadcast(&p->ready_cv);
		pthread_mutex_unlock(&p->mu);
		return;
	}
	if (!p->stopping) {
		s->r = *r;
		s->state = SLOT_DONE;
		pool_wake(p);
		pthread_mutex_unlock(&p->mu);
		return;
	}
	s->state = SLOT_EMPTY;
	pthread_mutex_unlock(&p->mu);
	runner_end(r);
}

/* ====== Interface ====== */

int
sandbox_code_pool_new(const struct sandbox_config *cfg, int size, int idle,
    struct sandbox_code_pool **out)
{
	struct sandbox_code_pool	*p = NULL;
	pthread_condattr_t		 ca;
	int				 li, si;

	*out = NULL;
	if (size <= 0)
		return 0;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return ENGINE_ENOMEM;
	if (pipe2(p->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
		free(p);
		return ENGINE_ENOMEM;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->ready_cv, &ca);
	pthread_condattr_destroy(&ca);
	p->cfg = *cfg;
	p->cfg.options = NULL;
	p->size = size > SANDBOX_POOL_MAX ? SANDBOX_POOL_MAX : size;
	p->idle = idle > 0 ? idle : 0;
	p->fork = SANDBOX_FORK_PYTHON3;
	p->max = p->size;
	p->spare_idle = 30;
	for (li = 0; li < POOL_LANGS; li++)
		for (si = 0; si < POOL_SLOTS; si++)
			p->lang[li].slot[si].r.ctl = -1;
	*out = p;
	return 0;
}

int
sandbox_code_pool_run(struct sandbox_code_pool *p,
    const struct sandbox_config *cfg, const struct sandbox_code_req *req,
    char *err, struct sandbox_code_result *res)
{
	struct sandbox_runner	 r;
	struct slot		*s;
	int			 li, rc, tries;

	if (p == NULL || !cfg_same(&p->cfg, cfg) ||
	    (li = lang_index(req->language)) < 0)
		return sandbox_run_code(cfg, req, err, res);
	/* A runner that died just before its job is replaced by another,
	 * once; then the job runs cold. */
	for (tries = 0; tries < 2 && (s = pool_take(p, li, &r)) != NULL;
	    tries++) {
		rc = r.fork ? sandbox_code_fork_run(&r, req, err, res)
			    : sandbox_code_finish(&r, req, err, res);
		pool_return(p, s, &r);
		if (!r.gone)
			return rc;
	}
	return sandbox_run_code(cfg, req, err, res);
}

void
sandbox_code_pool_stop(struct sandbox_code_pool *p)
{
	int join;

	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	p->stopping = 1;
	join = p->running;
	p->running = 0;
	pool_wake(p);
	pthread_mutex_unlock(&p->mu);
	if (join)
		pthread_join(p->thread, NULL);
}

void
sandbox_code_pool_free(struct sandbox_code_pool *p)
{
	if (p == NULL)
		return;
	sandbox_code_pool_stop(p);
	close(p->wake[0]);
	close(p->wake[1]);
	pthread_cond_destroy(&p->ready_cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

void
sandbox_code_pool_tune(struct sandbox_code_pool *p, int fork, int max,
    int spare_idle, int wait_ms)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	p->fork = fork & (SANDBOX_FORK_PYTHON3 | SANDBOX_FORK_JAVASCRIPT);
	p->max = max < p->size ? p->size : max > SANDBOX_POOL_MAX ?
	    SANDBOX_POOL_MAX : max;
	p->spare_idle = spare_idle > 0 ? spare_idle : 0;
	p->wait_ms = wait_ms > 0 ? wait_ms : 0;
	pthread_mutex_unlock(&p->mu);
}

void
sandbox_code_pool_stats(struct sandbox_code_pool *p,
    struct sandbox_code_pool_stats *st)
{
	struct slot	*s;
	int		 li, si;

	memset(st, 0, sizeof(*st));
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	for (li = 0; li < POOL_LANGS; li++)
		for (si = 0; si < POOL_SLOTS; si++) {
			s = &p->lang[li].slot[si];
			st->ready[li] += s->state == SLOT_READY;
			st->starting[li] += s->state == SLOT_STARTING;
		}
	st->hits = p->hits;
	st->early = p->early;
	st->misses = p->misses;
	st->started = p->started;
	st->died = p->died;
	st->expired = p->expired;
	st->served = p->served;
	st->threads = p->running;
	pthread_mutex_unlock(&p->mu);
}

int
sandbox_code_pool_wait(struct sandbox_code_pool *p, const char *language,
    int n, int timeout_ms)
{
	struct timespec	 until;
	int		 li, si, ready, rc = 0;

	if (p == NULL || (li = lang_index(language)) < 0)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&p->mu);
	pool_activate(p, li);
	for (;;) {
		for (si = ready = 0; si < POOL_SLOTS; si++)
			ready += p->lang[li].slot[si].state == SLOT_READY;
		if (ready >= n)
			break;
		if (p->stopping || !p->running ||
		    pthread_cond_timedwait(&p->ready_cv, &p->mu, &until) ==
		    ETIMEDOUT) {
			rc = -1;
			break;
		}
	}
	pthread_mutex_unlock(&p->mu);
	return rc;
}
