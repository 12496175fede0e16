/*
 * server.c — the process model: where the listening socket comes from, an
 * event loop that owns every connection, serving threads that grow on
 * demand, plain CGI, and a graceful stop on SIGTERM / SIGINT.
 * docs/architecture.md tells the same story with the reasons.
 *
 * The event loop (the main thread) waits in epoll on the listening socket,
 * a signalfd and an eventfd for wake-ups; it accepts, enforces deadlines
 * and leads the stop. Every open connection lives in a second epoll set
 * that the serving threads wait on themselves (EPOLLONESHOT: one event, one
 * thread). Idle connections cost a slot and no thread. The thread that
 * takes a readable one reads the request with libfcgi (FCGX_Accept_r on a
 * dup of the connection), serves it, and re-arms it for the next request
 * (FastCGI keep-alive) or closes it; when it was the last thread waiting,
 * it starts another first (up to server.max_connections; spare threads end
 * after server.thread_idle), so a slow client never holds up the rest.
 * A request costs no hand-over between threads. Connections live in a
 * fixed table of slots; an event names its slot and the slot's generation,
 * so an event that arrives after its connection closed is recognised and
 * dropped instead of touching a reused or freed one.
 *
 * Admission: the loop closes a peer the settings do not allow (a TCP
 * address outside server.allowed_clients, a unix peer outside
 * server.allowed_users / allowed_groups, fcgi/peer.c) before reading a
 * byte of it. At server.max_connections a new connection closes the one
 * idle the longest (no request in progress), so idle connections never
 * keep the web server's waiting; accept pauses only while every
 * connection is busy.
 *
 * Time limits: a connection must deliver a whole request within
 * server.read_timeout (the loop shuts down one that does not, idle or half
 * read); reads and writes of a served connection carry SO_RCVTIMEO /
 * SO_SNDTIMEO, so a client that stops reading is dropped after
 * server.write_timeout.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "fcgi/internal.h"

/*
 * One kind of log line the accept loop may have to write for every
 * connection (refused, closed to make room): one line a second at most,
 * the next saying how many were not logged. The loop's alone.
 */
struct ratelog {
	int64_t		 last;		/* ms of the last line */
	unsigned long	 missed;	/* events since, not logged */
	const char	*what;		/* "connections refused ..." */
};

/* Where a connection is; moved only under srv->mu. */
enum conn_state {
	CONN_FREE,	/* an unused slot */
	CONN_IDLE,	/* armed in epoll, waiting for its request */
	CONN_READING,	/* a thread reads its request */
	CONN_SERVING,	/* a thread serves it; watched for a hang-up */
	CONN_FINISHING,	/* answered; libfcgi ends the request */
	CONN_CLOSING,	/* its closer owns it */
};

struct conn {
	int		 fd;
	int		 dfd;		/* libfcgi's dup of fd, kept alive */
	enum conn_state	 state;		/* under srv->mu */
	uint32_t	 gen;		/* bumped on close: tells old events */
	int64_t		 deadline;	/* ms: whole request by then */
	int64_t		 idle_since;	/* ms: waiting for a request since */
	atomic_int	 gone;		/* the peer hung up */
	int		 watched;	/* in the connections' epoll set */
	int		 timed_out;	/* the loop cut it at the deadline */
	_Atomic(const char *) why;	/* why it closed, logged once */
	struct conn	*next, *prev;	/* every open connection */
	struct conn	*qnext;		/* free slots, or a list to close */
};

struct server {
	const struct conf	*conf;
	struct engine		*eng;
	char			 token[AUTH_TOKEN_MAX];
	unsigned char		 token_hash[32];
	int			 fd;		/* listening socket */
	int			 own_socket;
	int			 ep;		/* the loop's: listen, wake, signal */
	int			 cep;		/* connections and stopfd */
	int			 wakefd, sigfd, stopfd;
	int			 accepting;	/* listen fd armed in epoll */
	int			 is_unix;	/* the listener is AF_UNIX */
	int			 check_cred;	/* allowed_users/groups set */
	struct peer_acl		 acl;		/* who may connect */
	struct ratelog		 refused;	/* the loop's: log pacing */
	struct ratelog		 evicted;
	atomic_int		 stopping;
	atomic_int		 nwaiting;	/* threads in epoll_wait */

	pthread_mutex_t		 mu;
	pthread_cond_t		 idle_cv;	/* a thread ended */
	struct thread		*ended;		/* to be joined */
	struct conn		*slots;		/* server.max_connections */
	struct conn		*free_slots;
	struct conn		*all;		/* every open connection */
	int			 nconns;	/* open connections */
	int			 nidle;		/* of them CONN_IDLE */
	int			 nthreads;
	pthread_attr_t		 attr;
};

/*
 * A serving thread. Threads are joined, not detached: a thread's last
 * steps (thread-local destructors, OpenSSL's among them) must be over
 * before the process tears down what they use. An ending thread puts
 * itself on srv->ended; the loop joins it.
 */
struct thread {
	struct server	*srv;
	pthread_t	 tid;
	struct thread	*next;
};

/* Tags for the loop's epoll entries; a connection's is its slot number
 * and generation (conn_tag), stopfd's is TAG_STOP. */
static char tag_listen, tag_wake, tag_signal;
#define TAG_STOP	UINT64_MAX

static atomic_int cancel_runs;	/* the grace after SIGTERM is over */

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
server_cancelling(void)
{
	return atomic_load(&cancel_runs);
}

void
cond_init_monotonic(pthread_cond_t *cv)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(cv, &ca);
	pthread_condattr_destroy(&ca);
}

static void
wake_loop(struct server *srv)
{
	uint64_t one = 1;

	/* a full counter already means "wake up" */
	(void)!write(srv->wakefd, &one, sizeof(one));
}

static int	conn_arm(struct server *, int, struct conn *, uint32_t);
static void	conn_close(struct server *, struct conn *);
static void	*thread_main(void *);

/* ====== One request ====== */

/* What a serving thread hands its req_io callbacks. */
struct serve_ctx {
	FCGX_Request	 fr;
	struct conn	*c;
};

static const char *
fcgx_param(void *ctx, const char *name)
{
	return FCGX_GetParam(name, ((struct serve_ctx *)ctx)->fr.envp);
}

static ssize_t
fcgx_read(void *ctx, char *buf, size_t n)
{
	struct serve_ctx	*sc = ctx;
	int			 chunk = n > (1 << 30) ? (1 << 30) : (int)n;

	/* The body belongs to the request: it too must arrive in time. */
	if (now_ms() > sc->c->deadline) {
		atomic_store(&sc->c->why, "request body not received within "
		    "server.read_timeout");
		return -1;
	}
	return FCGX_GetStr(buf, chunk, sc->fr.in);
}

/* Notes why a write failed: a client that stopped reading, or left. */
static int
write_failed(struct serve_ctx *sc)
{
	int err = FCGX_GetError(sc->fr.out);

	if (!atomic_exchange(&sc->c->gone, 1))
		atomic_store(&sc->c->why, err == EAGAIN || err == EWOULDBLOCK ?
		    "client stopped reading for server.write_timeout" :
		    "client went away during the answer");
	return -1;
}

static int
fcgx_write(void *ctx, const char *buf, size_t n)
{
	struct serve_ctx	*sc = ctx;
	FCGX_Stream		*out = sc->fr.out;
	int			 chunk;

	if (atomic_load(&sc->c->gone))
		return -1;
	while (n > 0) {
		chunk = n > (1 << 30) ? (1 << 30) : (int)n;
		if (FCGX_PutStr(buf, chunk, out) != chunk)
			return write_failed(sc);
		buf += chunk;
		n -= (size_t)chunk;
	}
	return 0;
}

static int
fcgx_flush(void *ctx)
{
	struct serve_ctx *sc = ctx;

	if (atomic_load(&sc->c->gone))
		return -1;
	return FCGX_FFlush(sc->fr.out) == 0 ? 0 : write_failed(sc);
}

static int
fcgx_gone(void *ctx)
{
	return atomic_load(&((struct serve_ctx *)ctx)->c->gone);
}

static const char *
cgi_param(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

static ssize_t
cgi_read(void *ctx, char *buf, size_t n)
{
	(void)ctx;
	return (ssize_t)fread(buf, 1, n, stdin);
}

static int
cgi_write(void *ctx, const char *buf, size_t n)
{
	(void)ctx;
	return fwrite(buf, 1, n, stdout) == n ? 0 : -1;
}

static int
cgi_flush(void *ctx)
{
	(void)ctx;
	return fflush(stdout);
}

static int
cgi_gone(void *ctx)
{
	(void)ctx;
	return 0;
}

static double
ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 +
	    (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/*
 * The request's id: the client's X-Request-Id when it is a short token
 * of safe characters (a proxy's id carries through), else a new one. It
 * goes back as a response header and into the log lines, the run's record
 * and its trace.
 */
static void
request_id_set(struct req *r)
{
	const char	*h = req_param(r, "HTTP_X_REQUEST_ID");
	size_t		 n = h != NULL ? strlen(h) : 0;

	if (n > 0 && n < sizeof(r->request_id) && strspn(h,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	    "-_.:") == n)
		memcpy(r->request_id, h, n + 1);
	else
		engine_uuid(r->request_id);
	resp_header(r, "X-Request-Id", r->request_id);
	log_context_request(r->request_id, NULL);
}

/* Counts an answered request by route pattern and status. */
static void
request_observe(struct req *r, double ms)
{
	char status[8];

	if (!metrics_enabled())
		return;
	snprintf(status, sizeof(status), "%d", r->status);
	metric_add(METRIC_HTTP_REQUESTS, METRIC_LABELS(r->route, status), 1);
	metric_observe(METRIC_HTTP_DURATION, METRIC_LABELS(r->route),
	    ms / 1000.0);
}

static void
serve_one(const struct conf *conf, struct engine *eng,
    const unsigned char *token_hash, const struct req_io *io)
{
	static const char oom[] = "Status: 500 Internal Server Error\r\n"
	    "Content-Type: application/json\r\n\r\n{\"code\":"
	    "\"internal_server_error\",\"message\":\"out of memory\","
	    "\"status\":500}";
	struct req	 r;
	struct timespec	 t0;
	const char	*cl;
	char		*end, where[512];
	double		 ms;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&r, 0, sizeof(r));
	r.io = io;
	r.conf = conf;
	r.eng = eng;
	r.admin_token_hash = token_hash;
	r.prefix = "";
	r.path = "";
	if ((r.a = arena_new()) == NULL) {
		io->write(io->ctx, oom, sizeof(oom) - 1);
		return;
	}
	r.method = req_param(&r, "REQUEST_METHOD");
	if (r.method == NULL)
		r.method = "GET";
	r.query = req_param(&r, "QUERY_STRING");
	if (r.query == NULL)
		r.query = "";
	r.content_type = req_param(&r, "CONTENT_TYPE");
	if (r.content_type == NULL)
		r.content_type = "";
	r.content_length = -1;
	cl = req_param(&r, "CONTENT_LENGTH");
	if (cl != NULL && *cl != '\0') {
		errno = 0;
		r.content_length = strtoll(cl, &end, 10);
		if (errno != 0 || *end != '\0' || r.content_length < 0) {
			resp_error(&r, 400, "bad_request",
			    "invalid Content-Length");
			goto out;
		}
	}
	request_id_set(&r);
	router_dispatch(&r);
out:
	ms = ms_since(&t0);
	if (r.route == NULL)
		r.route = "unmatched";
	request_observe(&r, ms);
	snprintf(where, sizeof(where), "%s%s", r.prefix, r.path);
	log_request(r.method, where, r.status, ms);
	log_context_clear();
	arena_free(r.a);
}

/* ====== Connections ====== */

/* Moves c to st, keeping count of the idle ones; srv->mu held. */
static void
conn_state_set(struct server *srv, struct conn *c, enum conn_state st)
{
	srv->nidle += (st == CONN_IDLE) - (c->state == CONN_IDLE);
	c->state = st;
}

static uint64_t
conn_tag(struct server *srv, const struct conn *c)
{
	return (uint64_t)c->gen << 32 | (uint64_t)(c - srv->slots);
}

/* (Re-)arms c in the connections' epoll set with its current tag. */
static int
conn_arm(struct server *srv, int op, struct conn *c, uint32_t events)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = events;
	ev.data.u64 = conn_tag(srv, c);
	return epoll_ctl(srv->cep, op, c->fd, &ev);
}

/*
 * Closes c, which its caller owns (state CONN_CLOSING), logs why once at
 * info, and frees its slot for the next accept under a new generation.
 */
static void
conn_close(struct server *srv, struct conn *c)
{
	const char	*why;
	int		 wake;

	if (c->watched)
		(void)epoll_ctl(srv->cep, EPOLL_CTL_DEL, c->fd, NULL);
	if ((why = atomic_load(&c->why)) != NULL)
		log_info("connection %d closed: %s", c->fd, why);
	if (c->dfd >= 0)
		close(c->dfd);
	close(c->fd);
	pthread_mutex_lock(&srv->mu);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		srv->all = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	conn_state_set(srv, c, CONN_FREE);
	c->gen++;
	c->fd = c->dfd = -1;
	c->qnext = srv->free_slots;
	srv->free_slots = c;
	/* the loop re-arms accept when room comes back, and counts down
	 * to the end of a stop */
	wake = srv->nconns-- == srv->conf->max_connections ||
	    atomic_load(&srv->stopping);
	metric_add(METRIC_CONNECTIONS, NULL, -1);
	pthread_mutex_unlock(&srv->mu);
	if (wake)
		wake_loop(srv);
}

/* ====== Serving threads ====== */

/* Starts a serving thread; called with srv->mu held. 0 or -1. */
static int
thread_start(struct server *srv)
{
	struct thread	*t;
	int		 rc;

	/* one thread per connection at most */
	if (srv->nthreads >= srv->conf->max_connections ||
	    (t = calloc(1, sizeof(*t))) == NULL)
		return -1;
	t->srv = srv;
	if ((rc = pthread_create(&t->tid, &srv->attr, thread_main, t)) != 0) {
		log_warn("cannot start a serving thread: %s", strerror(rc));
		free(t);
		return -1;
	}
	srv->nthreads++;
	return 0;
}

/*
 * An event of the connections' set: returns the connection to serve, now
 * CONN_READING, or NULL when there is nothing to serve (an old event, a
 * hang-up noted or closed here). waiting: the threads still in
 * epoll_wait; with none left one more starts, so that the next request
 * does not wait for this one.
 */
static struct conn *
conn_take(struct server *srv, uint64_t tag, uint32_t events, int waiting)
{
	struct conn	*c;
	char		 b;
	uint32_t	 slot = (uint32_t)tag;
	int		 serve;

	if (slot >= (uint32_t)srv->conf->max_connections)
		return NULL;
	c = &srv->slots[slot];
	pthread_mutex_lock(&srv->mu);
	if (c->gen != (uint32_t)(tag >> 32)) {
		pthread_mutex_unlock(&srv->mu);
		return NULL;		/* closed since */
	}
	switch (c->state) {
	case CONN_SERVING:
		/* its thread sees the flag */
		if (!atomic_exchange(&c->gone, 1))
			atomic_store(&c->why, "client went away while its "
			    "request ran");
		/* FALLTHROUGH */
	default:
		pthread_mutex_unlock(&srv->mu);
		return NULL;		/* a hang-up after the answer */
	case CONN_IDLE:
		break;
	}
	conn_state_set(srv, c, CONN_CLOSING);
	if (atomic_load(&srv->stopping))
		atomic_store(&c->why, NULL);
	else if ((events & EPOLLIN) == 0)
		atomic_store(&c->why, (events & (EPOLLERR | EPOLLHUP)) ?
		    NULL : "closed by the peer before a request");
	else if ((events & EPOLLRDHUP) &&
	    recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
		atomic_store(&c->why, NULL);	/* a kept one let go */
	else {
		conn_state_set(srv, c, CONN_READING);
		if (waiting <= 0)
			(void)thread_start(srv);
	}
	serve = c->state == CONN_READING;
	pthread_mutex_unlock(&srv->mu);
	if (serve)
		return c;
	conn_close(srv, c);
	return NULL;
}

static void
set_timeout(int fd, int opt, int seconds)
{
	struct timeval tv = { seconds, 0 };

	if (setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv)) != 0)
		log_warn("setsockopt: %s", strerror(errno));
}

/*
 * Makes c idle, its whole next request due within server.read_timeout,
 * and arms it (op: EPOLL_CTL_ADD for a new one, MOD for a kept one).
 * Called with srv->mu held, so that a stop (close_idle) or the reaper
 * never sees it idle before it is armed. 0, or -1 with c not idle.
 */
static int
conn_wait(struct server *srv, struct conn *c, int op)
{
	conn_state_set(srv, c, CONN_IDLE);
	c->idle_since = now_ms();
	c->deadline = c->idle_since + (int64_t)srv->conf->read_timeout * 1000;
	c->timed_out = 0;
	atomic_store(&c->why, NULL);
	if (conn_arm(srv, op, c, EPOLLIN | EPOLLRDHUP | EPOLLONESHOT) == 0)
		return 0;
	conn_state_set(srv, c, CONN_CLOSING);
	return -1;
}

/* Waits for the next request on a kept-alive connection. 0, or -1 when
 * it must close (stopping, or epoll refused). At server.max_connections
 * the loop hears of it: an idle connection makes room for a new one. */
static int
conn_rearm(struct server *srv, struct conn *c)
{
	int rc = -1, full = 0;

	pthread_mutex_lock(&srv->mu);
	if (!atomic_load(&srv->stopping)) {
		rc = conn_wait(srv, c, EPOLL_CTL_MOD);
		full = srv->nconns >= srv->conf->max_connections;
	}
	pthread_mutex_unlock(&srv->mu);
	if (full)
		wake_loop(srv);
	return rc;
}

/*
 * A kept connection's next request must start at a record boundary, but an
 * answer may come before the body was read (a refused upload, a wrong
 * key). Reads and drops the rest of the body; 1 if it ended, 0 when it
 * did not within DRAIN_MAX bytes or the request's deadline (the
 * connection then closes after the answer: cheaper than reading a large
 * refused upload).
 */
#define DRAIN_MAX	(1024 * 1024)

static int
stdin_drained(struct serve_ctx *sc)
{
	char	buf[8192];
	size_t	total = 0;
	int	n;

	while (FCGX_HasSeenEOF(sc->fr.in) != EOF) {
		if (total >= DRAIN_MAX || now_ms() > sc->c->deadline)
			return 0;
		if ((n = FCGX_GetStr(buf, (int)sizeof(buf), sc->fr.in)) <= 0)
			break;
		total += (size_t)n;
	}
	return FCGX_HasSeenEOF(sc->fr.in) == EOF &&
	    FCGX_GetError(sc->fr.in) == 0;
}

/*
 * Reads one request from c (on a dup, so that c->fd stays ours and the
 * loop may shut it down at the deadline), serves it, and re-arms c for the
 * next request or closes it. The dup and the socket's time limits are made
 * once per connection, not per request.
 */
static void
serve_conn(struct server *srv, struct serve_ctx *sc, struct conn *c)
{
	struct req_io		 io = { fcgx_param, fcgx_read, fcgx_write,
				    fcgx_flush, fcgx_gone, sc };
	int			 timed_out;

	sc->c = c;
	atomic_store(&c->gone, 0);
	if (c->dfd < 0) {
		if ((c->dfd = fcntl(c->fd, F_DUPFD_CLOEXEC, 0)) < 0) {
			atomic_store(&c->why, "cannot set up the connection");
			log_warn("connection: %s", strerror(errno));
			goto out;
		}
		set_timeout(c->fd, SO_RCVTIMEO, srv->conf->read_timeout);
		set_timeout(c->fd, SO_SNDTIMEO, srv->conf->write_timeout);
	}
	/* libfcgi reads the request from the dup: keepConnection stops the
	 * FCGX_Finish_r at the top of FCGX_Accept_r closing it, and with no
	 * listening socket it never accepts on its own. On a bad request it
	 * closes the dup and fails; it is libfcgi's until it comes back. */
	sc->fr.ipcFd = c->dfd;
	sc->fr.keepConnection = 1;
	c->dfd = -1;
	if (FCGX_Accept_r(&sc->fr) < 0) {
		sc->fr.ipcFd = -1;
		pthread_mutex_lock(&srv->mu);
		/* the loop's cut, or SO_RCVTIMEO at the same deadline */
		timed_out = c->timed_out || now_ms() >= c->deadline;
		pthread_mutex_unlock(&srv->mu);
		if (atomic_load(&c->why) == NULL)
			atomic_store(&c->why, timed_out ? "no complete request "
			    "within server.read_timeout" : "no FastCGI request "
			    "(bad records, or closed before a whole request)");
		goto out;
	}
	pthread_mutex_lock(&srv->mu);
	conn_state_set(srv, c, CONN_SERVING);
	pthread_mutex_unlock(&srv->mu);
	/* Watch for a hang-up while it is served (run.stop_on_disconnect,
	 * and a run that stops producing events for nobody). */
	(void)conn_arm(srv, EPOLL_CTL_MOD, c, EPOLLRDHUP | EPOLLONESHOT);
	serve_one(srv->conf, srv->eng, srv->token_hash, &io);
	pthread_mutex_lock(&srv->mu);
	/* a hang-up now is the normal end */
	conn_state_set(srv, c, CONN_FINISHING);
	pthread_mutex_unlock(&srv->mu);
	if (sc->fr.keepConnection && !stdin_drained(sc))
		sc->fr.keepConnection = 0;	/* ends with this answer */
	if (!sc->fr.keepConnection) {
		/* the web server closes it after the answer (libfcgi read
		 * FCGI_KEEP_CONN): unwatched now, that hang-up wakes nobody */
		(void)epoll_ctl(srv->cep, EPOLL_CTL_DEL, c->fd, NULL);
		c->watched = 0;
	}
	FCGX_Finish_r(&sc->fr);
	if (sc->fr.ipcFd >= 0) {
		/* kept open (the web server asked for keep-alive): wait for
		 * its next request, unless its peer left (or we stop) */
		c->dfd = sc->fr.ipcFd;
		sc->fr.ipcFd = -1;
		if (!atomic_load(&c->gone) && conn_rearm(srv, c) == 0)
			return;
	}
out:
	pthread_mutex_lock(&srv->mu);
	conn_state_set(srv, c, CONN_CLOSING);
	pthread_mutex_unlock(&srv->mu);
	conn_close(srv, c);
}

static void *
thread_main(void *arg)
{
	struct thread		*self = arg;
	struct server		*srv = self->srv;
	struct serve_ctx	*sc;
	struct epoll_event	 ev;
	struct conn		*c;
	sigset_t		 all;
	int			 n, waiting;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	if ((sc = calloc(1, sizeof(*sc))) == NULL)
		goto out;	/* no memory to serve */
	FCGX_InitRequest(&sc->fr, -1, 0);
	for (;;) {
		atomic_fetch_add(&srv->nwaiting, 1);
		n = epoll_wait(srv->cep, &ev, 1,
		    srv->conf->thread_idle * 1000);
		waiting = atomic_fetch_sub(&srv->nwaiting, 1) - 1;
		if (n < 0 && errno != EINTR) {
			log_error("epoll_wait: %s", strerror(errno));
			break;
		}
		if (n == 0) {
			pthread_mutex_lock(&srv->mu);
			n = srv->nthreads > srv->conf->workers;
			pthread_mutex_unlock(&srv->mu);
			if (n)
				break;	/* a spare too many */
			continue;
		}
		if (n < 0)
			continue;
		if (ev.data.u64 == TAG_STOP)
			break;
		if ((c = conn_take(srv, ev.data.u64, ev.events,
		    waiting)) != NULL)
			serve_conn(srv, sc, c);
	}
out:
	pthread_mutex_lock(&srv->mu);
	srv->nthreads--;
	self->next = srv->ended;
	srv->ended = self;
	pthread_cond_broadcast(&srv->idle_cv);
	pthread_mutex_unlock(&srv->mu);
	if (sc != NULL)
		FCGX_Free(&sc->fr, 0);
	free(sc);
	return NULL;
}

/* Joins the threads that ended (each has let go of srv->mu). */
static void
threads_join_ended(struct server *srv)
{
	struct thread *t, *next;

	pthread_mutex_lock(&srv->mu);
	t = srv->ended;
	srv->ended = NULL;
	pthread_mutex_unlock(&srv->mu);
	for (; t != NULL; t = next) {
		next = t->next;
		pthread_join(t->tid, NULL);
		free(t);
	}
}

/* ====== The event loop ====== */

static int
arm(struct server *srv, int op, int fd, uint32_t events, void *tag)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = events;
	ev.data.ptr = tag;
	return epoll_ctl(srv->ep, op, fd, &ev);
}

static int
open_conns(struct server *srv)
{
	int n;

	pthread_mutex_lock(&srv->mu);
	n = srv->nconns;
	pthread_mutex_unlock(&srv->mu);
	return n;
}

/* ====== Admission: who may connect, and room for them ====== */

/*
 * Counts one event of rl and logs line (with the count of those not
 * logged since the last line) when a second has passed since that line.
 */
static void
ratelog_note(struct ratelog *rl, const char *line)
{
	int64_t now = now_ms();

	if (rl->last != 0 && now - rl->last < 1000) {
		rl->missed++;
		return;
	}
	if (rl->missed > 0)
		log_warn("%s (and %lu more %s since the last such line)",
		    line, rl->missed, rl->what);
	else
		log_warn("%s", line);
	rl->last = now;
	rl->missed = 0;
}

/* Logs the events of rl not logged yet, a second after its last line. */
static void
ratelog_flush(struct ratelog *rl)
{
	if (rl->missed == 0 || now_ms() - rl->last < 1000)
		return;
	log_warn("%lu more %s", rl->missed, rl->what);
	rl->last = now_ms();
	rl->missed = 0;
}

/*
 * 1 when the peer of fd, just accepted with address sa, may be served:
 * a TCP peer in server.allowed_clients, a unix peer whose credentials
 * server.allowed_users / allowed_groups accept. Logs a refusal (paced).
 */
static int
peer_ok(struct server *srv, int fd, const struct sockaddr *sa)
{
	struct ucred	 cred;
	socklen_t	 len = sizeof(cred);
	char		 shown[INET6_ADDRSTRLEN], line[256];

	if (sa->sa_family == AF_UNIX) {
		if (!srv->check_cred)
			return 1;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
			snprintf(line, sizeof(line), "refused a connection: "
			    "no peer credentials (SO_PEERCRED): %s",
			    strerror(errno));
			ratelog_note(&srv->refused, line);
			metric_add(METRIC_CONNECTIONS_DROPPED,
			    METRIC_LABELS("not_allowed"), 1);
			return 0;
		}
		if (peer_cred_allowed(&srv->acl, cred.uid, cred.gid))
			return 1;
		snprintf(line, sizeof(line), "refused a connection from uid %u "
		    "gid %u (not in server.allowed_users or allowed_groups)",
		    (unsigned)cred.uid, (unsigned)cred.gid);
		ratelog_note(&srv->refused, line);
		metric_add(METRIC_CONNECTIONS_DROPPED,
		    METRIC_LABELS("not_allowed"), 1);
		return 0;
	}
	shown[0] = '\0';
	if (peer_addr_allowed(&srv->acl, sa, shown, sizeof(shown)))
		return 1;
	snprintf(line, sizeof(line), "refused a connection from %s (not in "
	    "server.allowed_clients)", shown);
	ratelog_note(&srv->refused, line);
	metric_add(METRIC_CONNECTIONS_DROPPED, METRIC_LABELS("not_allowed"), 1);
	return 0;
}

/*
 * At server.max_connections: closes the connection idle the longest (no
 * request in progress: one that sent nothing yet, or a kept-alive one
 * between requests) so that a new one is served now rather than after
 * server.read_timeout. One whose request has begun to arrive counts as
 * busy (the oldest EVICT_SKIP such are passed over). 1 when one was
 * closed, 0 when every connection is busy.
 */
#define EVICT_SKIP	4	/* idle ones with a request arriving, passed over */

static int
evict_idle(struct server *srv)
{
	struct conn	*c, *oldest = NULL, *passed[EVICT_SKIP];
	char		 line[128];
	int		 i, n, avail;

	pthread_mutex_lock(&srv->mu);
	for (n = 0;; n++) {
		oldest = NULL;
		for (c = srv->all; c != NULL; c = c->next) {
			if (c->state != CONN_IDLE || (oldest != NULL &&
			    c->idle_since >= oldest->idle_since))
				continue;
			for (i = 0; i < n && passed[i] != c; i++)
				;
			if (i == n)
				oldest = c;
		}
		/* one whose request has begun to arrive is about to be
		 * taken by a thread: close another if there is one */
		if (oldest == NULL || n == EVICT_SKIP ||
		    ioctl(oldest->fd, FIONREAD, &avail) != 0 || avail == 0)
			break;
		passed[n] = oldest;
	}
	/* (every idle one receiving a request: none is idle, in truth) */
	if (oldest != NULL)
		conn_state_set(srv, oldest, CONN_CLOSING);
	pthread_mutex_unlock(&srv->mu);
	if (oldest == NULL)
		return 0;
	snprintf(line, sizeof(line), "closed a connection idle for %lld ms "
	    "to make room (server.max_connections %d)",
	    (long long)(now_ms() - oldest->idle_since),
	    srv->conf->max_connections);
	ratelog_note(&srv->evicted, line);
	metric_add(METRIC_CONNECTIONS_DROPPED, METRIC_LABELS("idle_for_room"),
	    1);
	atomic_store(&oldest->why, NULL);
	conn_close(srv, oldest);
	return 1;
}

/* 1 when a new connection could be taken now: a free slot, or an idle
 * connection to close for it. */
static int
room(struct server *srv)
{
	int yes;

	pthread_mutex_lock(&srv->mu);
	yes = srv->nconns < srv->conf->max_connections || srv->nidle > 0;
	pthread_mutex_unlock(&srv->mu);
	return yes;
}

/* Connections one wake-up of the loop accepts at most: a flood of
 * refused peers must not keep it from its deadlines and signals (the
 * listening socket stays readable, so it comes back for the rest). */
#define ACCEPT_BATCH	256

/*
 * Accepts what is waiting while there is room (see room()). A peer that
 * may not connect is closed before a byte of it is read.
 */
static void
accept_new(struct server *srv)
{
	struct sockaddr_storage	 ss;
	socklen_t		 sl;
	struct conn		*c;
	int			 fd, watched, full, n;

	for (n = 0; n < ACCEPT_BATCH && room(srv) &&
	    !atomic_load(&srv->stopping); n++) {
		/* blocking: only serving threads read it, with time limits */
		sl = sizeof(ss);
		memset(&ss, 0, sizeof(ss));
		fd = accept4(srv->fd, (struct sockaddr *)&ss, &sl,
		    SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM)
				log_warn("accept: %s (server.max_connections "
				    "is %d)", strerror(errno),
				    srv->conf->max_connections);
			return;	/* EAGAIN: taken, or none left */
		}
		if (!peer_ok(srv, fd, (struct sockaddr *)&ss)) {
			close(fd);
			continue;
		}
		pthread_mutex_lock(&srv->mu);
		full = srv->nconns >= srv->conf->max_connections;
		pthread_mutex_unlock(&srv->mu);
		/* only this thread opens connections: a slot freed here
		 * stays free */
		if (full && !evict_idle(srv)) {
			/* the idle one took a request meanwhile */
			close(fd);
			ratelog_note(&srv->evicted, "closed a new connection: "
			    "every one of server.max_connections is busy");
			metric_add(METRIC_CONNECTIONS_DROPPED,
			    METRIC_LABELS("full"), 1);
			continue;
		}
		pthread_mutex_lock(&srv->mu);
		c = srv->free_slots;	/* there is one: nconns < max */
		srv->free_slots = c->qnext;
		c->fd = fd;
		c->dfd = -1;
		atomic_store(&c->gone, 0);
		c->prev = NULL;
		c->next = srv->all;
		if (srv->all != NULL)
			srv->all->prev = c;
		srv->all = c;
		srv->nconns++;
		metric_add(METRIC_CONNECTIONS, NULL, 1);
		c->watched = conn_wait(srv, c, EPOLL_CTL_ADD) == 0;
		if (!c->watched)
			atomic_store(&c->why, "cannot watch the connection");
		watched = c->watched;
		pthread_mutex_unlock(&srv->mu);
		if (!watched)
			conn_close(srv, c);
	}
}

/* Arms or disarms the listening socket as room comes and goes. */
static void
accept_pace(struct server *srv)
{
	int want = room(srv) && !atomic_load(&srv->stopping);

	if (want == srv->accepting)
		return;
	if (arm(srv, EPOLL_CTL_MOD, srv->fd, want ? EPOLLIN : 0,
	    &tag_listen) == 0)
		srv->accepting = want;
}

/*
 * Enforces request deadlines: idle connections past theirs are closed
 * here, half-read ones are shut down so that their thread's read ends and
 * closes them.
 */
static void
reap(struct server *srv)
{
	struct conn	*c, *next, *expired = NULL;
	int64_t		 now = now_ms();

	pthread_mutex_lock(&srv->mu);
	for (c = srv->all; c != NULL; c = c->next) {
		if (c->deadline > now || c->timed_out)
			continue;
		if (c->state == CONN_IDLE) {
			c->timed_out = 1;
			conn_state_set(srv, c, CONN_CLOSING);
			c->qnext = expired;
			expired = c;
		} else if (c->state == CONN_READING) {
			c->timed_out = 1;
			shutdown(c->fd, SHUT_RDWR);
		}
	}
	pthread_mutex_unlock(&srv->mu);
	for (c = expired; c != NULL; c = next) {
		next = c->qnext;
		atomic_store(&c->why, "no request within server.read_timeout");
		conn_close(srv, c);
	}
}

/* Reads the signalfd: 1 on SIGTERM or SIGINT. */
static int
signalled(struct server *srv)
{
	struct signalfd_siginfo	si;
	int			stop = 0;

	while (read(srv->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
			stop = 1;
	return stop;
}

/*
 * Runs the loop until SIGTERM / SIGINT, or once stopping until every
 * connection is gone or deadline (ms) passes. Returns 1 when it stopped
 * on a signal.
 */
static int
loop(struct server *srv, int64_t deadline)
{
	struct epoll_event	 evs[64];
	int64_t			 next_reap = now_ms() + 1000, now;
	uint64_t		 nw;
	int			 i, n, timeout;

	for (;;) {
		if (atomic_load(&srv->stopping) && (open_conns(srv) == 0 ||
		    now_ms() >= deadline))
			return 0;
		now = now_ms();
		timeout = (int)(next_reap > now ? next_reap - now : 0);
		if (atomic_load(&srv->stopping) && deadline - now < timeout)
			timeout = (int)(deadline > now ? deadline - now : 0);
		n = epoll_wait(srv->ep, evs, 64, timeout);
		if (n < 0 && errno != EINTR) {
			log_error("epoll_wait: %s", strerror(errno));
			return 0;
		}
		for (i = 0; i < n; i++) {
			if (evs[i].data.ptr == &tag_listen)
				accept_new(srv);
			else if (evs[i].data.ptr == &tag_wake)
				(void)!read(srv->wakefd, &nw, sizeof(nw));
			else if (evs[i].data.ptr == &tag_signal &&
			    signalled(srv) && !atomic_load(&srv->stopping))
				return 1;
		}
		if (now_ms() >= next_reap) {
			reap(srv);
			ratelog_flush(&srv->refused);
			ratelog_flush(&srv->evicted);
			threads_join_ended(srv);
			next_reap = now_ms() + 1000;
		}
		accept_pace(srv);
	}
}

/* ====== The listening socket ====== */

static int
is_listening_socket(int fd)
{
	int		v = 0;
	socklen_t	len = sizeof(v);

	return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == 0 &&
	    v != 0;
}

/*
 * Gives the unix socket at path server.socket_owner, socket_group and
 * socket_mode. Returns 0, or -1 with the reason logged.
 */
static int
socket_perms(const struct conf *c, const char *path)
{
	struct group	 gr, *g = NULL;
	struct passwd	 pw, *u = NULL;
	uid_t		 uid = (uid_t)-1;
	gid_t		 gid = (gid_t)-1;
	char		 buf[4096], *end;
	long		 v;

	if (c->socket_owner[0] != '\0') {
		errno = 0;
		v = strtol(c->socket_owner, &end, 10);
		if (*end == '\0' && errno == 0 && v >= 0)
			uid = (uid_t)v;
		else if (getpwnam_r(c->socket_owner, &pw, buf, sizeof(buf),
		    &u) == 0 && u != NULL)
			uid = u->pw_uid;
		else {
			log_error("server.socket_owner: no user '%s'",
			    c->socket_owner);
			return -1;
		}
	}
	if (c->socket_group[0] != '\0') {
		if (getgrnam_r(c->socket_group, &gr, buf, sizeof(buf), &g) !=
		    0 || g == NULL) {
			log_error("server.socket_group: no group '%s'",
			    c->socket_group);
			return -1;
		}
		gid = g->gr_gid;
	}
	if ((uid != (uid_t)-1 || gid != (gid_t)-1) &&
	    chown(path, uid, gid) != 0) {
		log_error("cannot give '%s' to %s%s%s%s (server.socket_owner, "
		    "socket_group): %s", path,
		    c->socket_owner[0] ? "user " : "", c->socket_owner,
		    c->socket_group[0] ? " group " : "", c->socket_group,
		    strerror(errno));
		return -1;
	}
	if (chmod(path, (mode_t)c->socket_mode) != 0) {
		log_error("cannot set mode %04o on '%s' (server.socket_mode): "
		    "%s", (unsigned)c->socket_mode, path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * 1 when path is a socket left by a process that is gone (nobody accepts
 * on it: connect is refused); 0 for anything else, with the reason logged
 * (a live server, a file that is no socket).
 */
static int
socket_stale(const struct sockaddr_un *sa, socklen_t salen)
{
	struct stat	st;
	int		fd, rc = 0;

	if (lstat(sa->sun_path, &st) != 0) {
		log_error("cannot listen on '%s' (server.listen): %s",
		    sa->sun_path, strerror(errno));
		return 0;
	}
	if (!S_ISSOCK(st.st_mode)) {
		log_error("cannot listen on '%s' (server.listen): a file that "
		    "is no socket is there; not replacing it", sa->sun_path);
		return 0;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		log_error("socket: %s", strerror(errno));
		return 0;
	}
	if (connect(fd, (const struct sockaddr *)sa, salen) == 0)
		log_error("cannot listen on '%s' (server.listen): another "
		    "process accepts on it", sa->sun_path);
	else if (errno == ECONNREFUSED)
		rc = 1;
	else
		log_error("cannot listen on '%s' (server.listen): it is in use "
		    "(%s)", sa->sun_path, strerror(errno));
	close(fd);
	return rc;
}

/*
 * Listens on a unix socket at path, born mode 0600 (nobody can connect
 * before socket_perms gives it its own) and replacing a stale one only.
 * Returns the fd, or -1 with the reason logged.
 */
static int
unix_listen(const char *path)
{
	struct sockaddr_un	 sa;
	socklen_t		 salen;
	mode_t			 old;
	int			 fd = -1, rc, tries;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (*path == '\0' || strlen(path) >= sizeof(sa.sun_path)) {
		log_error("server.listen: a unix socket path of 1 to %zu "
		    "bytes, not '%s'", sizeof(sa.sun_path) - 1, path);
		goto fail;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
	    strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		log_error("socket: %s", strerror(errno));
		goto fail;
	}
	for (tries = 0;; tries++) {
		old = umask(0177);
		rc = bind(fd, (struct sockaddr *)&sa, salen);
		umask(old);
		if (rc == 0)
			break;
		if (errno != EADDRINUSE || tries > 0) {
			log_error("cannot listen on '%s' (server.listen): %s",
			    path, strerror(errno));
			goto fail;
		}
		if (!socket_stale(&sa, salen))
			goto fail;
		log_warn("replacing the stale socket '%s' (nobody accepts "
		    "on it)", path);
		if (unlink(path) != 0 && errno != ENOENT) {
			log_error("cannot remove the stale socket '%s': %s",
			    path, strerror(errno));
			goto fail;
		}
	}
	if (listen(fd, 1024) != 0) {
		log_error("cannot listen on '%s' (server.listen): %s", path,
		    strerror(errno));
		unlink(path);
		goto fail;
	}
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The address family of the listening socket fd; AF_UNSPEC if unknown. */
static int
socket_family(int fd)
{
	struct sockaddr_storage	ss;
	socklen_t		len = sizeof(ss);

	memset(&ss, 0, sizeof(ss));
	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		return AF_UNSPEC;
	return ss.ss_family;
}

/*
 * Says at start who may connect to the socket fd. 0, or -1 (logged) when
 * nobody could: a TCP listener with an empty server.allowed_clients.
 */
static int
listen_say_peers(struct server *srv, int fd)
{
	const struct conf *c = srv->conf;

	srv->is_unix = socket_family(fd) == AF_UNIX;
	srv->check_cred = srv->acl.nuids > 0 || srv->acl.ngids > 0;
	if (srv->is_unix && srv->check_cred)
		log_info("unix socket peers accepted: users [%s], groups [%s] "
		    "(server.allowed_users, allowed_groups)", c->allowed_users,
		    c->allowed_groups);
	else if (!srv->is_unix && srv->acl.nnets == 0 && !srv->acl.any_addr) {
		log_error("server.allowed_clients is empty, so no TCP client "
		    "could connect: list the web server's addresses, or \"*\" "
		    "for any");
		return -1;
	} else if (!srv->is_unix)
		log_info("TCP clients accepted from [%s] "
		    "(server.allowed_clients)", c->allowed_clients);
	return 0;
}

/*
 * Chooses the socket: systemd's, an inherited one on fd 0, or our own.
 * Returns the fd, or -1 with a message logged.
 */
static int
listen_socket(struct server *srv)
{
	const char	*pid = getenv("LISTEN_PID"), *nfds = getenv("LISTEN_FDS");
	const char	*addr = srv->conf->listen;
	char		 err[256];
	int		 fd;

	if (peer_acl_init(&srv->acl, srv->conf, err, sizeof(err)) != 0) {
		log_error("%s", err);
		return -1;
	}
	if (pid != NULL && nfds != NULL && strtol(pid, NULL, 10) == getpid() &&
	    strtol(nfds, NULL, 10) >= 1) {
		unsetenv("LISTEN_PID");
		unsetenv("LISTEN_FDS");
		unsetenv("LISTEN_FDNAMES");
		log_info("accepting on the socket systemd passed (fd 3)");
		return listen_say_peers(srv, 3) == 0 ? 3 : -1;
	}
	if (is_listening_socket(0)) {
		log_info("accepting on the socket passed on standard input");
		return listen_say_peers(srv, 0) == 0 ? 0 : -1;
	}
	if (strncmp(addr, "unix:", 5) == 0) {
		addr += 5;
		if ((fd = unix_listen(addr)) < 0)
			return -1;
	} else if ((fd = FCGX_OpenSocket(addr, 1024)) < 0) {
		log_error("cannot listen on '%s' (server.listen): %s",
		    srv->conf->listen, strerror(errno));
		return -1;
	}
	srv->own_socket = 1;
	if (addr != srv->conf->listen && socket_perms(srv->conf, addr) != 0) {
		close(fd);
		unlink(addr);
		srv->own_socket = 0;
		return -1;
	}
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
		log_error("fcntl: %s", strerror(errno));
		close(fd);
		return -1;
	}
	log_info("listening on %s", srv->conf->listen);
	if (listen_say_peers(srv, fd) != 0) {
		close(fd);
		return -1;	/* the socket goes at the end of server_run */
	}
	return fd;
}

/* ====== Set-up and stop ====== */

/*
 * Raises the open-file limit toward what max_connections needs: each
 * connection is a socket and its dup, and a run may hold a model
 * connection and sandbox pipes.
 */
static void
raise_nofile(const struct conf *c)
{
	struct rlimit	rl;
	rlim_t		want = (rlim_t)c->max_connections * 4 + 256;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	if (rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < want)
		log_warn("open files limited to %llu; server.max_connections "
		    "%d may need %llu (raise LimitNOFILE / ulimit -n)",
		    (unsigned long long)rl.rlim_cur, c->max_connections,
		    (unsigned long long)want);
}

static int
server_setup(struct server *srv)
{
	sigset_t	stopset;
	struct epoll_event ev;
	size_t		stack;
	int		fl, i;

	srv->ep = srv->cep = srv->wakefd = srv->sigfd = srv->stopfd = -1;
	pthread_mutex_init(&srv->mu, NULL);
	cond_init_monotonic(&srv->idle_cv);
	/* Untouched slots cost no memory until used. */
	srv->slots = calloc((size_t)srv->conf->max_connections,
	    sizeof(*srv->slots));
	if (srv->slots == NULL) {
		log_error("no memory for %d connections "
		    "(server.max_connections)", srv->conf->max_connections);
		return -1;
	}
	for (i = srv->conf->max_connections - 1; i >= 0; i--) {
		srv->slots[i].fd = srv->slots[i].dfd = -1;
		srv->slots[i].qnext = srv->free_slots;
		srv->free_slots = &srv->slots[i];
	}
	/* Sanitizers need several times the stack of a plain build. */
	stack = (size_t)srv->conf->thread_stack;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	stack *= 4;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
	stack *= 4;
#endif
#endif
	pthread_attr_init(&srv->attr);
	if (pthread_attr_setstacksize(&srv->attr, stack) != 0) {
		log_error("cannot use a thread stack of %zu bytes "
		    "(server.thread_stack)", stack);
		return -1;
	}
	sigemptyset(&stopset);
	sigaddset(&stopset, SIGTERM);
	sigaddset(&stopset, SIGINT);
	sigaddset(&stopset, SIGHUP);
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;	/* level: once written, wakes every thread */
	ev.data.u64 = TAG_STOP;
	if ((srv->ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    (srv->cep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    (srv->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
	    epoll_ctl(srv->cep, EPOLL_CTL_ADD, srv->stopfd, &ev) != 0 ||
	    (srv->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
	    (srv->sigfd = signalfd(-1, &stopset, SFD_NONBLOCK |
	    SFD_CLOEXEC)) < 0 ||
	    (fl = fcntl(srv->fd, F_GETFL)) < 0 ||
	    fcntl(srv->fd, F_SETFL, fl | O_NONBLOCK) != 0 ||
	    arm(srv, EPOLL_CTL_ADD, srv->fd, EPOLLIN, &tag_listen) != 0 ||
	    arm(srv, EPOLL_CTL_ADD, srv->wakefd, EPOLLIN, &tag_wake) != 0 ||
	    arm(srv, EPOLL_CTL_ADD, srv->sigfd, EPOLLIN, &tag_signal) != 0) {
		log_error("cannot set up the event loop: %s", strerror(errno));
		return -1;
	}
	srv->accepting = 1;
	return 0;
}

/*
 * Ends the serving threads: stopfd, readable from now on, wakes each one
 * waiting and meets each busy one when it comes back to wait; the ended
 * ones are joined. Waits up to deadline (ms); returns the number still
 * alive.
 */
static int
threads_stop(struct server *srv, int64_t deadline)
{
	struct timespec	ts;
	uint64_t	one = 1;
	int64_t		until;
	int		alive;

	(void)!write(srv->stopfd, &one, sizeof(one));
	pthread_mutex_lock(&srv->mu);
	while (srv->nthreads > 0 && now_ms() < deadline) {
		until = now_ms() + 100;
		ts.tv_sec = (time_t)(until / 1000);
		ts.tv_nsec = (long)(until % 1000) * 1000000;
		pthread_cond_timedwait(&srv->idle_cv, &srv->mu, &ts);
	}
	alive = srv->nthreads;
	pthread_mutex_unlock(&srv->mu);
	threads_join_ended(srv);
	return alive;
}

/* Closes the idle connections; a request that was waiting for a thread
 * will not be served now. */
static void
close_idle(struct server *srv)
{
	struct conn *c, *next, *idle = NULL;

	pthread_mutex_lock(&srv->mu);
	for (c = srv->all; c != NULL; c = c->next)
		if (c->state == CONN_IDLE) {
			conn_state_set(srv, c, CONN_CLOSING);
			c->qnext = idle;
			idle = c;
		}
	pthread_mutex_unlock(&srv->mu);
	for (c = idle; c != NULL; c = next) {
		next = c->qnext;
		atomic_store(&c->why, NULL);
		conn_close(srv, c);
	}
}

/* ====== Entry ====== */

static int
serve_cgi(struct server *srv)
{
	struct req_io io = { cgi_param, cgi_read, cgi_write, cgi_flush,
	    cgi_gone, NULL };

	/* One request, then exit: no warm code runner would ever be used. */
	engine_sandbox_stop(srv->eng);
	serve_one(srv->conf, srv->eng, srv->token_hash, &io);
	fflush(stdout);
	return 0;
}

int
server_run(const struct conf *c, struct engine *e)
{
	struct server	 srv;
	struct pruner	*pruner = NULL;
	sigset_t	 all;
	int64_t		 grace_end;
	int		 busy, rc = 1;

	memset(&srv, 0, sizeof(srv));
	srv.conf = c;
	srv.eng = e;
	srv.fd = -1;
	srv.refused.what = "connections refused";
	srv.evicted.what = "connections closed to make room";
	if (auth_token_load(c->data_dir, srv.token) != 0) {
		log_error("admin token in '%s': %s", c->data_dir,
		    strerror(errno));
		return 1;
	}
	auth_hash(srv.token, srv.token_hash);
	if (metrics_init(c->metrics_enabled, c->metrics_max_series) != 0) {
		log_error("no memory for metrics (metrics.max_series)");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	if (FCGX_Init() != 0) {
		log_error("cannot initialise libfcgi");
		return 1;
	}
	if (!is_listening_socket(0) && getenv("LISTEN_FDS") == NULL &&
	    getenv("GATEWAY_INTERFACE") != NULL)
		return serve_cgi(&srv);

	sigemptyset(&all);
	sigaddset(&all, SIGTERM);
	sigaddset(&all, SIGINT);
	sigaddset(&all, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &all, NULL);	/* read from the signalfd */
	raise_nofile(c);
	if ((srv.fd = listen_socket(&srv)) < 0 || server_setup(&srv) != 0)
		goto out;
	pthread_mutex_lock(&srv.mu);
	while (srv.nthreads < c->workers && thread_start(&srv) == 0)
		;
	pthread_mutex_unlock(&srv.mu);
	log_info("flowcgi %s ready: up to %d connections (%d threads kept "
	    "ready), data in '%s'", FLOWCGI_VERSION, c->max_connections,
	    c->workers, c->data_dir);
	{
		char perr[ENGINE_ERRMAX] = "";

		/* code nodes need the local sandbox: say early if it cannot
		 * work here */
		if (engine_sandbox_probe(e, perr) != 0)
			log_warn("sandbox: %s", perr);
	}
	/* run history pruning (run.prune_interval); signals stay blocked */
	(void)engine_pruner_start(e, &pruner);
	engine_serve(e);	/* and fail the runs of lost hosts */
	if (metrics_share_start(c->data_dir, c->metrics_share_interval) != 0)
		log_warn("metrics.share_interval: cannot share metrics in "
		    "'%s/metrics': %s", c->data_dir, strerror(errno));
	(void)loop(&srv, 0);
	metrics_share_stop();
	engine_pruner_stop(pruner);	/* ends within one transaction */

	/* Stop: no new connections, idle ones closed, requests in flight
	 * get server.shutdown_grace; then their runs are stopped. */
	log_info("stopping: finishing requests in flight (grace %ds)",
	    c->shutdown_grace);
	atomic_store(&srv.stopping, 1);
	(void)epoll_ctl(srv.ep, EPOLL_CTL_DEL, srv.fd, NULL);
	srv.accepting = 0;
	if (srv.own_socket)
		close(srv.fd);
	close_idle(&srv);
	grace_end = now_ms() + (int64_t)c->shutdown_grace * 1000;
	(void)loop(&srv, grace_end);
	if (srv.nconns > 0) {
		log_warn("%d requests still running after %ds: stopping their "
		    "runs", srv.nconns, c->shutdown_grace);
		atomic_store(&cancel_runs, 1);
		(void)loop(&srv, now_ms() + 10000);
	}
	close_idle(&srv);
	busy = threads_stop(&srv, now_ms() + 2000);
	rc = 0;
	if (busy > 0) {
		/* Threads still use srv and the engine: end the process here
		 * rather than pull storage from under them. */
		log_warn("%d serving threads did not stop; exiting without "
		    "them", busy);
		engine_sandbox_stop(e);	/* no warm runner's sandbox left */
		if (srv.own_socket && strncmp(c->listen, "unix:", 5) == 0)
			unlink(c->listen + 5);
		fflush(NULL);
		_exit(0);
	}
	log_info("stopped");
	srv.fd = srv.own_socket ? -1 : srv.fd;
out:
	if (srv.own_socket && srv.fd >= 0)
		close(srv.fd);
	if (srv.own_socket && strncmp(c->listen, "unix:", 5) == 0)
		unlink(c->listen + 5);
	if (srv.ep >= 0)
		close(srv.ep);
	if (srv.cep >= 0)
		close(srv.cep);
	if (srv.stopfd >= 0)
		close(srv.stopfd);
	free(srv.slots);
	if (srv.wakefd >= 0)
		close(srv.wakefd);
	if (srv.sigfd >= 0)
		close(srv.sigfd);
	peer_acl_release(&srv.acl);
	return rc;
}
