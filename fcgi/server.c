/*
 * server.c — the process model: where the listening socket comes from,
 * worker threads each accepting with its own FCGX_Request, plain CGI,
 * and a graceful stop on SIGTERM / SIGINT.
 *
 * Stopping: a socket we opened ourselves is shut down for reading, which
 * wakes every thread blocked in accept(). A socket we inherited (spawn-fcgi,
 * mod_fcgid, systemd) may be shared with sibling processes, so we must not
 * shut it down; instead idle workers are woken with SIGUSR1, which they
 * unblock only while they wait in accept().
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "fcgi/internal.h"

struct worker {
	struct server	*srv;
	pthread_t	 tid;
	atomic_int	 waiting;	/* 1 while in FCGX_Accept_r */
	atomic_int	 done;
};

struct server {
	const struct conf	*conf;
	struct engine		*eng;
	char			 token[AUTH_TOKEN_MAX];
	unsigned char		 token_hash[32];
	int			 fd;
	int			 own_socket;
	atomic_int		 stopping;
	struct worker		*workers;
	int			 nworkers;
};

/* ====== One request ====== */

static const char *
fcgx_param(void *ctx, const char *name)
{
	return FCGX_GetParam(name, ((FCGX_Request *)ctx)->envp);
}

static ssize_t
fcgx_read(void *ctx, char *buf, size_t n)
{
	int chunk = n > (1 << 30) ? (1 << 30) : (int)n;

	return FCGX_GetStr(buf, chunk, ((FCGX_Request *)ctx)->in);
}

static int
fcgx_write(void *ctx, const char *buf, size_t n)
{
	FCGX_Stream	*out = ((FCGX_Request *)ctx)->out;
	int		 chunk;

	while (n > 0) {
		chunk = n > (1 << 30) ? (1 << 30) : (int)n;
		if (FCGX_PutStr(buf, chunk, out) != chunk)
			return -1;
		buf += chunk;
		n -= (size_t)chunk;
	}
	return 0;
}

static int
fcgx_flush(void *ctx)
{
	return FCGX_FFlush(((FCGX_Request *)ctx)->out);
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

static double
ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 +
	    (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static void
serve_one(struct server *srv, const struct req_io *io)
{
	static const char oom[] = "Status: 500 Internal Server Error\r\n"
	    "Content-Type: application/json\r\n\r\n{\"code\":"
	    "\"internal_server_error\",\"message\":\"out of memory\","
	    "\"status\":500}";
	struct req	 r;
	struct timespec	 t0;
	const char	*cl;
	char		*end;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&r, 0, sizeof(r));
	r.io = io;
	r.conf = srv->conf;
	r.eng = srv->eng;
	r.admin_token_hash = srv->token_hash;
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
	router_dispatch(&r);
out:
	log_debug("%s %s%s %d %.2fms", r.method, r.prefix, r.path, r.status,
	    ms_since(&t0));
	arena_free(r.a);
}

/* ====== Workers ====== */

static void
on_wake(int sig)
{
	(void)sig;	/* only interrupts accept() */
}

static void *
worker_main(void *arg)
{
	struct worker	*w = arg;
	struct server	*srv = w->srv;
	FCGX_Request	 fr;
	struct req_io	 io = { fcgx_param, fcgx_read, fcgx_write,
			    fcgx_flush, &fr };
	sigset_t	 wake;
	int		 rc;

	sigemptyset(&wake);
	sigaddset(&wake, SIGUSR1);
	if (FCGX_InitRequest(&fr, srv->fd, FCGI_FAIL_ACCEPT_ON_INTR) != 0) {
		log_error("cannot set up a FastCGI request");
		goto out;
	}
	while (!atomic_load(&srv->stopping)) {
		/* Only an inherited socket needs the wake-up signal: our own
		 * is shut down instead (see the top of this file). */
		atomic_store(&w->waiting, 1);
		if (!srv->own_socket)
			pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
		if (atomic_load(&srv->stopping))
			rc = -1;
		else
			rc = FCGX_Accept_r(&fr);
		if (!srv->own_socket)
			pthread_sigmask(SIG_BLOCK, &wake, NULL);
		atomic_store(&w->waiting, 0);
		if (rc < 0) {
			if (atomic_load(&srv->stopping))
				break;
			if (errno != EINTR) {
				log_warn("accept: %s", strerror(errno));
				/* EMFILE and friends: do not spin */
				usleep(100 * 1000);
			}
			continue;
		}
		serve_one(srv, &io);
		FCGX_Finish_r(&fr);
	}
	FCGX_Free(&fr, 0);
out:
	atomic_store(&w->done, 1);
	return NULL;
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
 * Chooses the socket: systemd's, an inherited one on fd 0, or our own.
 * Returns the fd, or -1 with a message logged.
 */
static int
listen_socket(struct server *srv)
{
	const char	*pid = getenv("LISTEN_PID"), *nfds = getenv("LISTEN_FDS");
	const char	*addr = srv->conf->listen;
	int		 fd;

	if (pid != NULL && nfds != NULL && strtol(pid, NULL, 10) == getpid() &&
	    strtol(nfds, NULL, 10) >= 1) {
		unsetenv("LISTEN_PID");
		unsetenv("LISTEN_FDS");
		unsetenv("LISTEN_FDNAMES");
		log_info("accepting on the socket systemd passed (fd 3)");
		return 3;
	}
	if (is_listening_socket(0)) {
		log_info("accepting on the socket passed on standard input");
		return 0;
	}
	if (strncmp(addr, "unix:", 5) == 0)
		addr += 5;
	if ((fd = FCGX_OpenSocket(addr, 1024)) < 0) {
		log_error("cannot listen on '%s' (server.listen): %s",
		    srv->conf->listen, strerror(errno));
		return -1;
	}
	if (addr != srv->conf->listen) {
		/* The web server may run as another user. Anyone local can
		 * reach a loopback TCP port too; auth is in the requests. */
		chmod(addr, 0666);
	}
	srv->own_socket = 1;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	log_info("listening on %s", srv->conf->listen);
	return fd;
}

/* ====== Stop ====== */

static void
wake_idle_workers(struct server *srv)
{
	int i;

	for (i = 0; i < srv->nworkers; i++)
		if (!atomic_load(&srv->workers[i].done) &&
		    atomic_load(&srv->workers[i].waiting))
			pthread_kill(srv->workers[i].tid, SIGUSR1);
}

static int
workers_alive(struct server *srv)
{
	int i, n = 0;

	for (i = 0; i < srv->nworkers; i++)
		if (!atomic_load(&srv->workers[i].done))
			n++;
	return n;
}

static void
begin_stop(struct server *srv)
{
	atomic_store(&srv->stopping, 1);
	if (srv->own_socket)
		shutdown(srv->fd, SHUT_RDWR);
	wake_idle_workers(srv);
}

/* ====== Entry ====== */

static int
serve_cgi(struct server *srv)
{
	struct req_io io = { cgi_param, cgi_read, cgi_write, cgi_flush, NULL };

	serve_one(srv, &io);
	fflush(stdout);
	return 0;
}

int
server_run(const struct conf *c, struct engine *e)
{
	struct server		 srv;
	struct sigaction	 sa;
	struct timespec		 ts, deadline;
	sigset_t		 stopset, all;
	siginfo_t		 si;
	int			 i, sig, n, rc = 1;

	memset(&srv, 0, sizeof(srv));
	srv.conf = c;
	srv.eng = e;
	srv.fd = -1;
	if (auth_token_load(c->data_dir, srv.token) != 0) {
		log_error("admin token in '%s': %s", c->data_dir,
		    strerror(errno));
		return 1;
	}
	auth_hash(srv.token, srv.token_hash);
	signal(SIGPIPE, SIG_IGN);
	if (FCGX_Init() != 0) {
		log_error("cannot initialise libfcgi");
		return 1;
	}
	if (!is_listening_socket(0) && getenv("LISTEN_FDS") == NULL &&
	    getenv("GATEWAY_INTERFACE") != NULL)
		return serve_cgi(&srv);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_wake;	/* no SA_RESTART: accept() returns */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&all);
	sigaddset(&all, SIGUSR1);
	sigaddset(&all, SIGTERM);
	sigaddset(&all, SIGINT);
	sigaddset(&all, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &all, NULL);	/* inherited by workers */

	if ((srv.fd = listen_socket(&srv)) < 0)
		goto out;
	srv.nworkers = c->workers;
	if ((srv.workers = calloc((size_t)srv.nworkers,
	    sizeof(*srv.workers))) == NULL)
		goto out;
	for (i = 0; i < srv.nworkers; i++) {
		srv.workers[i].srv = &srv;
		if (pthread_create(&srv.workers[i].tid, NULL, worker_main,
		    &srv.workers[i]) != 0) {
			log_error("cannot start worker thread %d", i);
			srv.nworkers = i;
			begin_stop(&srv);
			goto join;
		}
	}
	log_info("flowcgi %s ready: %d workers, data in '%s'", FLOWCGI_VERSION,
	    srv.nworkers, c->data_dir);
	{
		char perr[ENGINE_ERRMAX] = "";

		/* code nodes need the local sandbox: say early if it cannot
		 * work here */
		if (engine_sandbox_probe(e, perr) != 0)
			log_warn("sandbox: %s", perr);
	}

	sigemptyset(&stopset);
	sigaddset(&stopset, SIGTERM);
	sigaddset(&stopset, SIGINT);
	sigaddset(&stopset, SIGHUP);
	ts.tv_sec = 1;
	ts.tv_nsec = 0;
	for (;;) {
		sig = sigtimedwait(&stopset, &si, &ts);
		if (sig == SIGTERM || sig == SIGINT)
			break;
		if (workers_alive(&srv) == 0) {
			log_error("every worker stopped; exiting");
			goto join;
		}
	}
	log_info("stopping: finishing requests in flight (grace %ds)",
	    c->shutdown_grace);
	begin_stop(&srv);
join:
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += c->shutdown_grace;
	for (;;) {
		if ((n = workers_alive(&srv)) == 0)
			break;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (ts.tv_sec > deadline.tv_sec ||
		    (ts.tv_sec == deadline.tv_sec &&
		    ts.tv_nsec >= deadline.tv_nsec)) {
			log_warn("%d requests still running after %ds; "
			    "exiting without them", n, c->shutdown_grace);
			rc = 0;
			goto out_nojoin;
		}
		/* A worker may have missed the wake-up between its check of
		 * the flag and accept(): wake it again. */
		wake_idle_workers(&srv);
		usleep(20 * 1000);
	}
	for (i = 0; i < srv.nworkers; i++)
		pthread_join(srv.workers[i].tid, NULL);
	rc = 0;
	log_info("stopped");
out:
	free(srv.workers);
	if (srv.own_socket && srv.fd >= 0) {
		close(srv.fd);
		if (strncmp(c->listen, "unix:", 5) == 0)
			unlink(c->listen + 5);
	}
	return rc;
out_nojoin:
	/* Threads still run and use srv and the engine: end the process
	 * here rather than pull storage from under them. */
	fflush(NULL);
	_exit(rc);
}
