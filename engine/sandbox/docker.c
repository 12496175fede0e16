/*
 * docker.c — the docker sandbox provider: one container per sandbox on a
 * Docker Engine (or Podman's compatible service), driven through the
 * Engine's HTTP API with libcurl over its unix socket or TCP (with TLS),
 * never the docker command line.
 *
 * Options (cfg->options; Dify's keys first, numbers also as strings):
 *	docker_sock	where the engine listens: unix:///var/run/docker.sock
 *			(the default), an absolute socket path, tcp://host:port,
 *			http:// or https:// URL
 *	docker_image	the image, default langgenius/dify-agentbox:latest;
 *			any image with a POSIX sh, kill, sleep and id
 *	docker_network	a network the containers join; empty: none at all
 *	docker_user	user[:group] commands run as; empty: the image's
 *	docker_memory	memory of the container ("512m"); empty:
 *			sandbox.memory
 *	docker_cpus	CPUs ("1.5"), default 1
 *	docker_pids	processes of the container; empty: sandbox.processes
 *	docker_cert_path a folder with ca.pem, cert.pem and key.pem: the
 *			client TLS of a tcp:// engine (DOCKER_CERT_PATH)
 *
 * The container. Made from the image with its own entry point replaced by
 * a shell loop that sleeps (pid 1: it keeps the container up and is the
 * one process a cleanup spares), never privileged: every capability
 * dropped, no-new-privileges, the image's root read-only, the workspace
 * /workspace an anonymous volume of the local driver on a tmpfs capped at
 * sandbox.workspace_size (a volume, so that the archive API can write into
 * it while the root is read-only), /tmp a tmpfs, memory, CPUs and pids
 * capped, rlimits nofile, fsize and cpu from the sandbox.* settings,
 * network "none" unless docker_network names one. Containers carry the
 * labels flowcgi.sandbox (the sandbox id), flowcgi.host and flowcgi.pid:
 * sandbox_docker_sweep removes those of a process on this host that is no
 * longer alive (called at start-up and by the first create of a process).
 *
 * A command is one exec: POST /containers/{id}/exec, then POST
 * /exec/{id}/start read as it comes (8-byte frame headers: stream, 0 0 0,
 * big-endian length), then GET /exec/{id}/json for the exit code. It runs
 * as /bin/sh -c with a wrapper:
 *
 *	trap 'kill -9 -1 2>/dev/null' EXIT
 *	exec 0</dev/null (or the stdin file, removed at once)
 *	cd -- /workspace/CWD || exit 1
 *	{ COMMAND
 *	}			(argv: "$@")
 *
 * kill -1 from inside the container's pid namespace reaches every process
 * but the caller and pid 1, so nothing a command started outlives it, and
 * the wrapper's own exit status is kept. When the wrapper itself dies (a
 * signal: exit code above 128), when the wall clock runs out (curl's
 * timeout on the start stream) or when cancel says so, a second exec runs
 * the same kill: the processes die, the container stays usable. A
 * container that stopped meanwhile (killed, out of memory) fails exec with
 * SANDBOX_EFAIL saying so.
 *
 * Standard input is uploaded first as .flowcgi-stdin-<uuid> in the
 * workspace and opened and removed by the wrapper (one request instead of
 * a hijacked, two-way connection).
 *
 * Files go through PUT and GET /containers/{id}/archive: uploads as a tar
 * built with libarchive holding the file and its folders (owned by the
 * uid and gid of commands, looked up once with `id`), downloads and
 * listings read with libarchive as they arrive. Paths are checked lexically
 * (sandbox_path_check); the engine resolves what remains inside the
 * container, whose root is read-only, and a symlink at the end of a path is
 * returned as a link, which download refuses.
 *
 * A sandbox handle is used by one thread at a time.
 */
#include <archive.h>
#include <archive_entry.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/evp.h>

#include "engine/sandbox/provider.h"

#define DK_DEFAULT_SOCK		"unix:///var/run/docker.sock"
#define DK_DEFAULT_IMAGE	"langgenius/dify-agentbox:latest"
#define DK_WORKDIR		"/workspace"
#define DK_CALL_TIMEOUT		60	/* s, for everything but a command */
#define DK_CREATE_TIMEOUT	300	/* s: a large image on vfs is slow */
#define DK_ERRBODY_MAX		4096
#define DK_BODY_MAX		(4 << 20)	/* JSON answers */
#define DK_LABEL		"flowcgi.sandbox"
/* What pid 1 of a container runs: it only keeps the container up. */
#define DK_IDLE			"while :; do sleep 86400; done"
#define DK_CLEANUP		"kill -9 -1 2>/dev/null; exit 0"

struct dk {
	struct sandbox		 base;
	struct sandbox_config	 cfg;
	char			*url;	/* base, "http://docker" for a socket */
	char			*sock;	/* unix socket path or NULL */
	char			*where;	/* docker_sock as given, for errors */
	char			*cert;	/* docker_cert_path or NULL */
	char			*image;
	char			*network; /* NULL: none */
	char			*user;	/* NULL: the image's */
	int64_t			 memory;
	int64_t			 nano_cpus;
	int			 pids;
	char			 cid[80];	/* the container's id */
	int			 ids;		/* uid and gid looked up */
	long			 uid, gid;	/* of commands: own uploads */
	int			 destroyed;
};

/* ====== Options ====== */

/* A size "512m", "1g", "65536" in bytes, or -1. */
static int64_t
size_parse(const char *s)
{
	char		*end;
	long long	 n;
	int64_t		 mul = 1;

	if (s == NULL || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	n = strtoll(s, &end, 10);
	if (errno != 0 || n < 0)
		return -1;
	switch (tolower((unsigned char)*end)) {
	case '\0':
		break;
	case 'k':
		mul = 1024;
		break;
	case 'm':
		mul = 1024 * 1024;
		break;
	case 'g':
		mul = 1024 * 1024 * 1024;
		break;
	default:
		return -1;
	}
	if (*end != '\0' && end[1] != '\0' && strcasecmp(end + 1, "b") != 0 &&
	    strcasecmp(end + 1, "ib") != 0)
		return -1;
	if (n > INT64_MAX / mul)
		return -1;
	return (int64_t)n * mul;
}

/* CPUs "1.5" as nano CPUs, or -1. */
static int64_t
cpus_parse(const char *s)
{
	char	*end;
	double	 d;

	if (s == NULL || s[0] == '\0')
		return -1;
	errno = 0;
	d = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !(d >= 0.01) || d > 1024)
		return -1;
	return (int64_t)(d * 1e9);
}

/* A copy of s without trailing slashes, or NULL. */
static char *
dup_trim(const char *s)
{
	char	*u = strdup(s);
	size_t	 n;

	if (u == NULL)
		return NULL;
	n = strlen(u);
	while (n > 1 && u[n - 1] == '/')
		u[--n] = '\0';
	return u;
}

/*
 * Reads the connection options of o into x: url, sock, where, cert.
 * Returns 0, ENGINE_EINVAL or ENGINE_ENOMEM.
 */
static int
dk_conn_opts(struct dk *x, const json_t *o, char *err)
{
	const char	*s, *cert;
	char		 buf[1100];
	int		 rc = 0;

	if (sandbox_opt_str(o, "docker_sock", DK_DEFAULT_SOCK, &s) != 0 ||
	    sandbox_opt_str(o, "docker_cert_path", NULL, &cert) != 0) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "docker: docker_sock and "
		    "docker_cert_path must be strings");
		goto out;
	}
	if (strlen(s) > 1000 || strpbrk(s, " \t\r\n\"<>\\^`{|}") != NULL) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "docker: docker_sock "
		    "'%.80s' is not a socket path or URL", s);
		goto out;
	}
	if ((x->where = strdup(s)) == NULL)
		goto oom;
	if (strncmp(s, "unix://", 7) == 0 || s[0] == '/') {
		if (s[0] != '/')
			s += 7;
		if (s[0] != '/' || strlen(s) >= 108) {
			rc = sandbox_fail(err, ENGINE_EINVAL, "docker: "
			    "docker_sock '%.80s' is not an absolute socket "
			    "path (at most 107 bytes)", x->where);
			goto out;
		}
		if ((x->sock = strdup(s)) == NULL ||
		    (x->url = strdup("http://docker")) == NULL)
			goto oom;
	} else if (strncmp(s, "tcp://", 6) == 0) {
		snprintf(buf, sizeof(buf), "%s://%s", cert != NULL ? "https" :
		    "http", s + 6);
		if ((x->url = dup_trim(buf)) == NULL)
			goto oom;
	} else if (strncmp(s, "http://", 7) == 0 ||
	    strncmp(s, "https://", 8) == 0) {
		if ((x->url = dup_trim(s)) == NULL)
			goto oom;
	} else {
		rc = sandbox_fail(err, ENGINE_EINVAL, "docker: docker_sock "
		    "'%.80s': give unix:///path, tcp://host:port or an http(s) "
		    "URL", s);
		goto out;
	}
	if (cert != NULL && (x->cert = dup_trim(cert)) == NULL)
		goto oom;
	goto out;
oom:
	rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
out:
	return rc;
}

static void	dk_release(struct dk *);

/* A handle on the engine options name, for the calls that need no
 * sandbox: the probe and the sweep. */
static int
dk_connect(const json_t *options, char *err, struct dk **out)
{
	struct dk	*x;
	int		 rc;

	if ((x = calloc(1, sizeof(*x))) == NULL) {
		(void)sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		return ENGINE_ENOMEM;
	}
	if ((rc = dk_conn_opts(x, options, err)) != 0) {
		dk_release(x);
		return rc;
	}
	*out = x;
	return 0;
}

static void
dk_release(struct dk *x)
{
	if (x == NULL)
		return;
	free(x->url);
	free(x->sock);
	free(x->where);
	free(x->cert);
	free(x->image);
	free(x->network);
	free(x->user);
	free(x);
}

/* ====== HTTP ====== */

/* One exchange with the engine. */
struct dk_req {
	const char	*method;	/* NULL: GET */
	const char	*path;		/* "/containers/..." */
	const void	*body;
	size_t		 body_len;
	const char	*ctype;		/* of body; NULL: JSON */
	long		 timeout_ms;	/* 0: DK_CALL_TIMEOUT */
	int64_t		 max;		/* of the answer; 0: DK_BODY_MAX */
	/* Streaming: each piece of a 2xx answer goes here instead; return
	 * non-zero to stop. */
	int		(*on_data)(const char *p, size_t n, void *arg);
	void		*arg;
	/* Called about once a second and on each piece; non-zero stops. */
	int		(*on_tick)(void *arg);
};

struct dk_resp {
	long			 status;
	struct dbuf	 body;
	char			 stat[1024];	/* X-Docker-Container-Path-
						 * Stat, base64 JSON */
	int			 stopped;	/* on_data or on_tick said so */
	const struct dk_req	*rq;
};

#define DK_RESP_INIT(r) do {						\
	memset((r), 0, sizeof(*(r)));					\
	(r)->body.max = DK_BODY_MAX;					\
} while (0)

static size_t
dk_write(char *p, size_t size, size_t n, void *arg)
{
	struct dk_resp	*rs = arg;
	size_t		 len = size * n;

	if (rs->rq->on_data != NULL && rs->status >= 200 && rs->status < 300) {
		if (rs->rq->on_data(p, len, rs->rq->arg) != 0) {
			rs->stopped = 1;
			return 0;
		}
		return len;
	}
	dbuf_add(&rs->body, p, len);
	if (rs->body.err != DBUF_OK)
		return 0;	/* too long, or out of memory */
	return len;
}

static size_t
dk_header(char *p, size_t size, size_t n, void *arg)
{
	struct dk_resp	*rs = arg;
	size_t		 len = size * n, k;
	static const char name[] = "x-docker-container-path-stat:";

	if (len > 5 && memcmp(p, "HTTP/", 5) == 0) {
		const char *sp = memchr(p, ' ', len);

		rs->status = sp != NULL ? strtol(sp + 1, NULL, 10) : 0;
	} else if (len > sizeof(name) - 1 && strncasecmp(p, name,
	    sizeof(name) - 1) == 0) {
		p += sizeof(name) - 1;
		len -= sizeof(name) - 1;
		while (len > 0 && *p == ' ') {
			p++;
			len--;
		}
		for (k = 0; k < len && k < sizeof(rs->stat) - 1 &&
		    p[k] != '\r' && p[k] != '\n'; k++)
			rs->stat[k] = p[k];
		rs->stat[k] = '\0';
	}
	return size * n;
}

static int
dk_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut,
    curl_off_t un)
{
	struct dk_resp *rs = arg;

	(void)dt;
	(void)dn;
	(void)ut;
	(void)un;
	if (rs->rq->on_tick != NULL && rs->rq->on_tick(rs->rq->arg) != 0) {
		rs->stopped = 1;
		return 1;
	}
	return 0;
}

/*
 * A curl handle for rq set up against x's engine (socket or TCP, TLS
 * files), writing into rs; *hdrs: the header list to free after. NULL
 * when out of memory.
 */
static CURL *
dk_handle(const struct dk *x, const struct dk_req *rq, struct dk_resp *rs,
    struct curl_slist **hdrs)
{
	CURL			*h;
	struct curl_slist	*l = NULL, *nl;
	char			 url[8400], file[1200], ct[128];

	*hdrs = NULL;
	rs->rq = rq;
	if ((h = curl_easy_init()) == NULL)
		return NULL;
	/* No version in the path: the engine answers at its own (Docker 29
	 * refuses those below 1.44, 20.10 knows none above 1.41), and
	 * nothing used here changed between them. */
	snprintf(url, sizeof(url), "%s%s", x->url, rq->path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	if (x->sock != NULL)
		curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, x->sock);
	if (x->cert != NULL) {
		snprintf(file, sizeof(file), "%s/ca.pem", x->cert);
		curl_easy_setopt(h, CURLOPT_CAINFO, file);
		snprintf(file, sizeof(file), "%s/cert.pem", x->cert);
		curl_easy_setopt(h, CURLOPT_SSLCERT, file);
		snprintf(file, sizeof(file), "%s/key.pem", x->cert);
		curl_easy_setopt(h, CURLOPT_SSLKEY, file);
	}
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, rq->timeout_ms > 0 ?
	    rq->timeout_ms : DK_CALL_TIMEOUT * 1000L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, dk_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, rs);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, dk_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, rs);
	if (rq->on_tick != NULL) {
		curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, dk_progress);
		curl_easy_setopt(h, CURLOPT_XFERINFODATA, rs);
		curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	}
	if (rq->method != NULL && strcmp(rq->method, "HEAD") == 0)
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	else if (rq->method != NULL)
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
	if (rq->body != NULL || (rq->method != NULL &&
	    (strcmp(rq->method, "POST") == 0 || strcmp(rq->method, "PUT") ==
	    0))) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body ? rq->body :
		    "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)rq->body_len);
		snprintf(ct, sizeof(ct), "Content-Type: %s", rq->ctype ?
		    rq->ctype : "application/json");
		if ((nl = curl_slist_append(l, ct)) == NULL)
			goto oom;
		l = nl;
	}
	if ((nl = curl_slist_append(l, "Expect:")) == NULL)
		goto oom;
	l = nl;
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, l);
	*hdrs = l;
	return h;
oom:
	curl_slist_free_all(l);
	curl_easy_cleanup(h);
	return NULL;
}

/* The engine's message of an error answer ({"message": ...}) into buf. */
static void
dk_msg(const struct dk_resp *rs, char *buf, size_t bufsz)
{
	json_t		*j = NULL;
	const char	*m = NULL;
	size_t		 i;

	if (rs->body.p != NULL && rs->body.len > 0)
		j = json_loadb(rs->body.p, rs->body.len, 0, NULL);
	m = json_string_value(json_object_get(j, "message"));
	if (m != NULL)
		snprintf(buf, bufsz, "%s", m);
	else if (rs->body.p != NULL)
		snprintf(buf, bufsz, "HTTP %ld: %.100s", rs->status,
		    rs->body.p);
	else
		snprintf(buf, bufsz, "HTTP %ld", rs->status);
	for (i = 0; buf[i] != '\0'; i++)
		if ((unsigned char)buf[i] < 0x20)
			buf[i] = ' ';
	json_decref(j);
}

/*
 * Performs rq. Returns 0 with rs filled (any status; free rs->body.p), or
 * SANDBOX_EFAIL naming the engine when it cannot be reached, ENGINE_ELIMIT
 * for an answer above rq->max, ENGINE_ENOMEM. A transfer that on_data or
 * on_tick stopped is 0 with rs->stopped; curl's time limit is
 * ETIMEDOUT-like: SANDBOX_EFAIL with *timed_out set when not NULL.
 */
static int
dk_call(const struct dk *x, const struct dk_req *rq, char *err,
    struct dk_resp *rs, int *timed_out)
{
	struct curl_slist	*hdrs = NULL;
	CURL			*h = NULL;
	CURLcode		 cc;
	int			 rc = 0;

	if (timed_out != NULL)
		*timed_out = 0;
	rs->body.max = rq->max > 0 ? rq->max : DK_BODY_MAX;
	if ((h = dk_handle(x, rq, rs, &hdrs)) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	cc = curl_easy_perform(h);
	if (rs->stopped)
		goto out;
	if (cc == CURLE_WRITE_ERROR && (rs->body.err == DBUF_ENOMEM))
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
	else if (cc == CURLE_WRITE_ERROR)
		rc = sandbox_fail(err, ENGINE_ELIMIT, "docker %s %.*s: the "
		    "answer is above %" PRId64 " bytes", rq->method ?
		    rq->method : "GET", (int)strcspn(rq->path, "?"), rq->path,
		    rs->body.max);
	else if (cc == CURLE_OPERATION_TIMEDOUT && timed_out != NULL)
		*timed_out = 1;
	else if (cc == CURLE_COULDNT_CONNECT ||
	    cc == CURLE_COULDNT_RESOLVE_HOST)
		rc = sandbox_fail(err, SANDBOX_EFAIL, "docker: cannot reach "
		    "the engine at %.80s: %s (is it running, and may this user "
		    "use it?)", x->where, curl_easy_strerror(cc));
	else if (cc != CURLE_OK)
		rc = sandbox_fail(err, SANDBOX_EFAIL, "docker %s %.*s at "
		    "%.60s: %s%s", rq->method ? rq->method : "GET",
		    (int)strcspn(rq->path, "?"), rq->path, x->where,
		    curl_easy_strerror(cc), x->sock == NULL &&
		    x->cert == NULL && (cc == CURLE_RECV_ERROR ||
		    cc == CURLE_GOT_NOTHING) ?
		    " (an engine with TLS needs docker_cert_path)" : "");
out:
	curl_slist_free_all(hdrs);
	if (h != NULL)
		curl_easy_cleanup(h);
	return rc;
}

/*
 * A call whose answer must be JSON with status want (or want2 when not 0):
 * *out a new reference (NULL for an empty body). Other statuses are
 * SANDBOX_EFAIL with "docker <what>: <engine's message>" (ENGINE_ENOTFOUND
 * for 404); *status gets the status when not NULL.
 */
static int
dk_json(const struct dk *x, const char *what, const struct dk_req *rq,
    long want, long want2, char *err, long *status, json_t **out)
{
	struct dk_resp	rs;
	char		msg[200];
	int		rc;

	DK_RESP_INIT(&rs);
	if (out != NULL)
		*out = NULL;
	if ((rc = dk_call(x, rq, err, &rs, NULL)) != 0)
		goto out;
	if (status != NULL)
		*status = rs.status;
	if (rs.status != want && (want2 == 0 || rs.status != want2)) {
		dk_msg(&rs, msg, sizeof(msg));
		rc = sandbox_fail(err, rs.status == 404 ? ENGINE_ENOTFOUND :
		    SANDBOX_EFAIL, "docker %s: %s", what, msg);
		goto out;
	}
	if (out != NULL && rs.body.len > 0 && (*out = json_loadb(rs.body.p,
	    rs.body.len, 0, NULL)) == NULL)
		rc = sandbox_fail(err, SANDBOX_EFAIL, "docker %s: the answer "
		    "is not JSON", what);
out:
	free(rs.body.p);
	return rc;
}

/* POSTs the JSON j (not stolen) to path; see dk_json. */
static int
dk_post(const struct dk *x, const char *what, const char *path,
    const json_t *j, long timeout_ms, long want, char *err, json_t **out)
{
	struct dk_req	 rq;
	char		*body = NULL;
	int		 rc;

	memset(&rq, 0, sizeof(rq));
	if (j != NULL && (body = json_dumps(j, JSON_COMPACT)) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	rq.method = "POST";
	rq.path = path;
	rq.body = body;
	rq.body_len = body != NULL ? strlen(body) : 0;
	rq.timeout_ms = timeout_ms;
	rc = dk_json(x, what, &rq, want, 0, err, NULL, out);
out:
	free(body);
	return rc;
}

/* ====== Streams read as they arrive (libarchive) ====== */

/*
 * A GET whose body libarchive reads while it arrives: curl's multi
 * interface is pumped from libarchive's read callback, so that a listing
 * of a large workspace never sits in memory whole.
 */
struct dk_pull {
	CURLM			*m;
	CURL			*h;
	struct curl_slist	*hdrs;
	struct dk_req		 rq;
	struct dk_resp		 rs;
	struct dbuf	 in;	/* arrived, not handed out yet */
	char			*given;	/* the block libarchive holds */
	int			 done;
	CURLcode		 result;
};

static int
pull_data(const char *p, size_t n, void *arg)
{
	struct dk_pull *pl = arg;

	dbuf_add(&pl->in, p, n);
	return pl->in.err == DBUF_ENOMEM;
}

/*
 * 1 while there is nothing to hand out yet: no bytes (want_head: no head
 * yet, or an error answer not complete).
 */
static int
pull_waiting(const struct dk_pull *pl, int want_head)
{
	if (pl->done)
		return 0;
	if (want_head && (pl->rs.status < 200 || pl->rs.status >= 300))
		return 1;
	return pl->in.len == 0;
}

/* Moves the transfer along until bytes arrived or it ended. */
static void
pull_pump(struct dk_pull *pl, int want_head)
{
	CURLMsg	*msg;
	int	 running = 1, left;

	while (pull_waiting(pl, want_head)) {
		if (curl_multi_perform(pl->m, &running) != CURLM_OK)
			running = 0;
		while ((msg = curl_multi_info_read(pl->m, &left)) != NULL)
			if (msg->msg == CURLMSG_DONE) {
				pl->result = msg->data.result;
				pl->done = 1;
			}
		if (!running)
			pl->done = 1;
		if (pull_waiting(pl, want_head))
			(void)curl_multi_poll(pl->m, NULL, 0, 1000, NULL);
	}
}

static la_ssize_t
pull_read(struct archive *a, void *arg, const void **buf)
{
	struct dk_pull	*pl = arg;
	size_t		 n;

	(void)a;
	free(pl->given);
	pl->given = NULL;
	pull_pump(pl, 0);
	if (pl->in.len == 0) {
		if (pl->done && pl->result != CURLE_OK) {
			archive_set_error(a, EIO, "%s",
			    curl_easy_strerror(pl->result));
			return -1;
		}
		return 0;
	}
	pl->given = dbuf_take(&pl->in, &n);
	*buf = pl->given;
	return (la_ssize_t)n;
}

static void
pull_close(struct dk_pull *pl)
{
	if (pl->m != NULL && pl->h != NULL)
		curl_multi_remove_handle(pl->m, pl->h);
	if (pl->h != NULL)
		curl_easy_cleanup(pl->h);
	if (pl->m != NULL)
		curl_multi_cleanup(pl->m);
	curl_slist_free_all(pl->hdrs);
	free(pl->rs.body.p);
	free(pl->in.p);
	free(pl->given);
	memset(pl, 0, sizeof(*pl));
}

/*
 * GET /containers/{id}/archive?path=abs as a stream: returns 0 once the
 * answer's head is in with pl->rs.status and pl->rs.stat set (an error
 * answer's body in pl->rs.body), or SANDBOX_EFAIL. The body then comes
 * through pull_read. pull_close after, either way.
 */
static int
pull_open(struct dk *x, const char *abs, char *err, struct dk_pull *pl)
{
	char	path[8400], esc[8200] = "";
	int	rc = 0;

	memset(pl, 0, sizeof(*pl));
	pl->in.max = INT64_MAX / 2;
	pl->rs.body.max = DK_ERRBODY_MAX;
	if (sandbox_url_escape(esc, sizeof(esc), abs) != 0) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "path too long");
		goto out;
	}
	snprintf(path, sizeof(path), "/containers/%s/archive?path=%s", x->cid,
	    esc);
	pl->rq.path = path;
	pl->rq.timeout_ms = 600000;
	pl->rq.on_data = pull_data;
	pl->rq.arg = pl;
	if ((pl->m = curl_multi_init()) == NULL ||
	    (pl->h = dk_handle(x, &pl->rq, &pl->rs, &pl->hdrs)) == NULL ||
	    curl_multi_add_handle(pl->m, pl->h) != CURLM_OK) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	pull_pump(pl, 1);
	if (pl->rs.status == 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "docker: cannot reach "
		    "the engine at %.80s: %s", x->where,
		    curl_easy_strerror(pl->result));
		goto out;
	}
out:
	pl->rq.path = NULL;	/* path dies here; curl copied the URL */
	return rc;
}

/*
 * The type of the path the stat header describes: 'd' folder, 'f' regular
 * file, 'l' other (a link, a device); *size its size. 0 when unknown.
 */
static int
stat_type(const char *stat, int64_t *size)
{
	unsigned char	*dec = NULL;
	json_t		*j = NULL;
	size_t		 n = strlen(stat);
	json_int_t	 mode;
	int		 got, t = 0;

	*size = 0;
	if (n == 0 || n > 1000 || (dec = malloc(n)) == NULL)
		goto out;
	if ((got = EVP_DecodeBlock(dec, (const unsigned char *)stat, (int)n))
	    < 0)
		goto out;
	while (got > 0 && dec[got - 1] == '\0')
		got--;
	if ((j = json_loadb((const char *)dec, (size_t)got, 0, NULL)) == NULL)
		goto out;
	mode = json_integer_value(json_object_get(j, "mode"));
	*size = json_integer_value(json_object_get(j, "size"));
	/* Go's os.FileMode: ModeDir 1<<31; symlink, device, pipe, socket,
	 * char device and irregular are 1<<27, 26, 25, 24, 21 and 19. */
	if (mode & ((json_int_t)1 << 31))
		t = 'd';
	else if (mode & ((json_int_t)1 << 27 | (json_int_t)1 << 26 |
	    (json_int_t)1 << 25 | (json_int_t)1 << 24 | (json_int_t)1 << 21 |
	    (json_int_t)1 << 19))
		t = 'l';
	else
		t = 'f';
out:
	json_decref(j);
	free(dec);
	return t;
}

/* ====== Containers ====== */

static pthread_mutex_t	sweep_mu = PTHREAD_MUTEX_INITIALIZER;
static int		sweep_done;

/* The first create of a process removes what dead ones left behind. */
static void
sweep_first(const json_t *o)
{
	char	err[ENGINE_ERRMAX];
	int	n = 0;

	pthread_mutex_lock(&sweep_mu);
	if (!sweep_done) {
		sweep_done = 1;
		if (sandbox_docker_sweep(o, err, &n) != 0)
			log_warn("sandbox: %s", err);
		else if (n > 0)
			log_info("sandbox: removed %d docker container(s) left "
			    "by flowcgi processes that are gone", n);
	}
	pthread_mutex_unlock(&sweep_mu);
}

/* Removes container cid with its anonymous volumes; 404 is fine. */
static int
dk_remove(const struct dk *x, const char *cid, char *err)
{
	struct dk_req	rq;
	char		path[200];

	memset(&rq, 0, sizeof(rq));
	snprintf(path, sizeof(path), "/containers/%s?force=true&v=true", cid);
	rq.method = "DELETE";
	rq.path = path;
	rq.timeout_ms = DK_CREATE_TIMEOUT * 1000L;
	return dk_json(x, "remove container", &rq, 204, 404, err, NULL, NULL);
}

/* The body of POST /containers/create for x; new reference or NULL. */
static json_t *
dk_create_body(const struct dk *x, const char *host)
{
	json_t	*j, *hc, *lab, *mnt, *ul;
	char	 o[96], pid[24], tmp[64];

	snprintf(o, sizeof(o), "size=%" PRId64 ",mode=1777",
	    x->cfg.workspace_size);
	snprintf(tmp, sizeof(tmp), "rw,nosuid,nodev,size=%" PRId64,
	    x->cfg.workspace_size);
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	lab = json_pack("{s:s, s:s, s:s}", DK_LABEL, x->base.id,
	    "flowcgi.host", host, "flowcgi.pid", pid);
	mnt = json_pack("[{s:s, s:s, s:{s:{s:s, s:{s:s, s:s, s:s}}}}]",
	    "Type", "volume", "Target", DK_WORKDIR, "VolumeOptions",
	    "DriverConfig", "Name", "local", "Options", "type", "tmpfs",
	    "device", "tmpfs", "o", o);
	ul = json_pack("[{s:s, s:I, s:I}, {s:s, s:I, s:I}, {s:s, s:I, s:I}]",
	    "Name", "nofile", "Soft", (json_int_t)x->cfg.open_files, "Hard",
	    (json_int_t)x->cfg.open_files, "Name", "fsize", "Soft",
	    (json_int_t)x->cfg.file_size, "Hard",
	    (json_int_t)x->cfg.file_size, "Name", "cpu", "Soft",
	    (json_int_t)x->cfg.cpu_seconds, "Hard",
	    (json_int_t)x->cfg.cpu_seconds);
	hc = json_pack("{s:s, s:b, s:b, s:[s], s:[s], s:I, s:I, s:I, s:I, "
	    "s:{s:s}, s:o, s:o, s:{s:s}}",
	    "NetworkMode", x->network != NULL ? x->network : "none",
	    "Privileged", 0, "ReadonlyRootfs", 1, "CapDrop", "ALL",
	    "SecurityOpt", "no-new-privileges", "Memory",
	    (json_int_t)x->memory, "MemorySwap", (json_int_t)x->memory,
	    "NanoCpus", (json_int_t)x->nano_cpus, "PidsLimit",
	    (json_int_t)x->pids, "Tmpfs", "/tmp", tmp, "Mounts", mnt,
	    "Ulimits", ul, "RestartPolicy", "Name", "no");
	j = json_pack("{s:s, s:[s,s,s], s:n, s:s, s:o, s:b, s:o}", "Image",
	    x->image, "Entrypoint", "/bin/sh", "-c", DK_IDLE, "Cmd",
	    "WorkingDir", DK_WORKDIR, "Labels", lab, "NetworkDisabled",
	    x->network == NULL, "HostConfig", hc);
	if (j != NULL && x->user != NULL &&
	    json_object_set_new(j, "User", json_string(x->user)) != 0) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

static int
dk_create(const struct sandbox_config *cfg, char *err, struct sandbox **out)
{
	struct dk	*x = NULL;
	const json_t	*o = cfg->options;
	const char	*s;
	json_t		*body = NULL, *res = NULL;
	char		 path[200], host[256], kerr[ENGINE_ERRMAX];
	int		 rc = 0, made = 0, pids;

	*out = NULL;
	if (!json_is_object(o)) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "docker: the provider "
		    "needs its options (docker_sock, docker_image)");
		goto out;
	}
	if ((x = calloc(1, sizeof(*x))) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	x->cfg = *cfg;
	x->cfg.options = NULL;
	engine_uuid(x->base.id);
	if ((rc = dk_conn_opts(x, o, err)) != 0)
		goto out;
	if (sandbox_opt_str(o, "docker_image", DK_DEFAULT_IMAGE, &s) != 0 ||
	    strlen(s) > 500 || (x->image = strdup(s)) == NULL) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "docker: docker_image "
		    "must be an image name");
		goto out;
	}
	if (sandbox_opt_str(o, "docker_network", NULL, &s) != 0 || (s != NULL &&
	    (strlen(s) > 200 || (x->network = strdup(s)) == NULL))) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "docker: docker_network "
		    "must be a network name");
		goto out;
	}
	if (x->network != NULL && strcmp(x->network, "none") == 0) {
		free(x->network);
		x->network = NULL;
	}
	if (sandbox_opt_str(o, "docker_user", NULL, &s) != 0 || (s != NULL &&
	    (strlen(s) > 200 || (x->user = strdup(s)) == NULL))) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "docker: docker_user "
		    "must be a user[:group]");
		goto out;
	}
	x->memory = cfg->memory;
	if (sandbox_opt_str(o, "docker_memory", NULL, &s) != 0 ||
	    (s != NULL && (x->memory = size_parse(s)) < 6 * 1024 * 1024)) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "docker: docker_memory "
		    "must be a size of at least 6m (\"512m\", \"2g\")");
		goto out;
	}
	x->nano_cpus = 1000000000;
	if (sandbox_opt_str(o, "docker_cpus", NULL, &s) != 0 ||
	    (s != NULL && (x->nano_cpus = cpus_parse(s)) < 0)) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "docker: docker_cpus "
		    "must be a number of CPUs from 0.01 (\"1.5\")");
		goto out;
	}
	if (sandbox_opt_int(o, "docker_pids", cfg->processes, 4, 1000000,
	    &pids) != 0) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "docker: docker_pids "
		    "must be a whole number from 4");
		goto out;
	}
	x->pids = pids;
	x->base.network = x->network != NULL;

	sweep_first(o);
	conf_hostname(host, sizeof(host));
	if ((body = dk_create_body(x, host)) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	snprintf(path, sizeof(path), "/containers/create?name=flowcgi-%s",
	    x->base.id);
	rc = dk_post(x, "create container", path, body, DK_CREATE_TIMEOUT *
	    1000L, 201, err, &res);
	if (rc == ENGINE_ENOTFOUND) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "docker: image '%.100s' "
		    "is not on the engine at %.60s (docker pull it there)",
		    x->image, x->where);
		goto out;
	}
	if (rc != 0)
		goto out;
	s = json_string_value(json_object_get(res, "Id"));
	if (s == NULL || strlen(s) >= sizeof(x->cid) || strspn(s,
	    "0123456789abcdef") != strlen(s)) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "docker create "
		    "container: the answer has no Id");
		goto out;
	}
	snprintf(x->cid, sizeof(x->cid), "%s", s);
	made = 1;
	snprintf(path, sizeof(path), "/containers/%s/start", x->cid);
	if ((rc = dk_post(x, "start container", path, NULL,
	    DK_CREATE_TIMEOUT * 1000L, 204, err, NULL)) != 0)
		goto out;
	*out = &x->base;
	x = NULL;
out:
	if (x != NULL && made && dk_remove(x, x->cid, kerr) != 0)
		log_warn("sandbox: after a failed create: %s", kerr);
	dk_release(x);
	json_decref(body);
	json_decref(res);
	return rc;
}

static int
dk_destroy(struct sandbox *sb, char *err)
{
	struct dk	*x = (struct dk *)sb;
	int		 rc = 0;

	if (x->destroyed)
		goto out;
	if ((rc = dk_remove(x, x->cid, err)) != 0)
		goto out;
	x->destroyed = 1;
out:
	return rc;
}

static void
dk_free(struct sandbox *sb)
{
	struct dk	*x = (struct dk *)sb;
	char		 err[ENGINE_ERRMAX];

	if (x == NULL)
		return;
	if (dk_destroy(sb, err) != 0)
		log_warn("sandbox: %s (a restart of flowcgi removes it)", err);
	dk_release(x);
}

/* ====== Paths ====== */

static int
dk_alive(const struct dk *x, char *err)
{
	if (x->destroyed)
		return sandbox_fail(err, ENGINE_EINVAL, "sandbox %s: destroyed",
		    x->base.id);
	return 0;
}

/* ====== Files ====== */

static int	exec_simple(struct dk *x, const char *const *argv, char *err,
		    int *code, char *out, size_t outsz);

/*
 * The uid and gid commands run as (the image's user or docker_user), once
 * per sandbox: uploads are theirs, so that commands may change them. The
 * engine's own copyUIDGID cannot do it: it looks docker_user up as a
 * name, "1000:1000" included. Unknown (no `id`): root's.
 */
static int
dk_ids(struct dk *x, char *err)
{
	static const char *const	 argv[] = {"/bin/sh", "-c",
	    "id -u && id -g", NULL};
	char				 out[64], *end;
	int				 code, rc;

	if (x->ids)
		return 0;
	if ((rc = exec_simple(x, argv, err, &code, out, sizeof(out))) != 0)
		return rc;
	x->ids = 1;
	x->uid = strtol(out, &end, 10);
	x->gid = code == 0 && *end == '\n' ? strtol(end + 1, &end, 10) : -1;
	if (code != 0 || x->uid < 0 || x->gid < 0 || *end != '\n')
		x->uid = x->gid = 0;
	return 0;
}

static la_ssize_t
tar_write(struct archive *a, void *arg, const void *p, size_t n)
{
	struct dbuf *b = arg;

	(void)a;
	dbuf_add(b, p, n);
	return b->err == DBUF_ENOMEM ? -1 : (la_ssize_t)n;
}

/* Adds one entry; 0 or -1. */
static int
tar_add(struct archive *a, const struct dk *x, const char *name,
    const void *data, size_t len, int dir)
{
	struct archive_entry	*e;
	int			 rc = -1;

	if ((e = archive_entry_new()) == NULL)
		return -1;
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, dir ? AE_IFDIR : AE_IFREG);
	archive_entry_set_perm(e, dir ? 0755 : 0644);
	archive_entry_set_uid(e, x->uid);
	archive_entry_set_gid(e, x->gid);
	archive_entry_set_size(e, dir ? 0 : (la_int64_t)len);
	archive_entry_set_mtime(e, time(NULL), 0);
	if (archive_write_header(a, e) != ARCHIVE_OK)
		goto out;
	if (!dir && len > 0 && archive_write_data(a, data, len) !=
	    (la_ssize_t)len)
		goto out;
	rc = 0;
out:
	archive_entry_free(e);
	return rc;
}

/*
 * Writes data to the workspace path (checked) through PUT archive: a tar
 * of the path's folders and the file, extracted at the workspace.
 */
static int
dk_put(struct dk *x, const char *path, const void *data, size_t len,
    char *err)
{
	struct archive		*a = NULL;
	struct dbuf	 tar = { 0 };
	struct dk_req		 rq;
	struct dk_resp		 rs;
	char			 dir[PATH_MAX], msg[200], q[200];
	const char		*sl;
	int			 rc = 0;

	DK_RESP_INIT(&rs);
	if ((rc = dk_ids(x, err)) != 0)
		goto out;
	if ((a = archive_write_new()) == NULL ||
	    archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    archive_write_open2(a, &tar, NULL, tar_write, NULL, NULL) !=
	    ARCHIVE_OK)
		goto oom;
	for (sl = strchr(path, '/'); sl != NULL; sl = strchr(sl + 1, '/')) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(sl - path), path);
		if (tar_add(a, x, dir, NULL, 0, 1) != 0)
			goto oom;
	}
	if (tar_add(a, x, path, data, len, 0) != 0 || archive_write_close(a) !=
	    ARCHIVE_OK || tar.err == DBUF_ENOMEM)
		goto oom;
	memset(&rq, 0, sizeof(rq));
	snprintf(q, sizeof(q), "/containers/%s/archive?path=" DK_WORKDIR,
	    x->cid);
	rq.method = "PUT";
	rq.path = q;
	rq.body = tar.p;
	rq.body_len = tar.len;
	rq.ctype = "application/x-tar";
	rq.timeout_ms = 600000;
	if ((rc = dk_call(x, &rq, err, &rs, NULL)) != 0)
		goto out;
	if (rs.status != 200) {
		dk_msg(&rs, msg, sizeof(msg));
		rc = sandbox_fail(err, strstr(msg, "no space left") != NULL ?
		    ENGINE_ELIMIT : rs.status == 400 || rs.status == 403 ?
		    ENGINE_EINVAL : SANDBOX_EFAIL, "upload '%.100s': %s", path,
		    msg);
	}
	goto out;
oom:
	rc = sandbox_fail(err, ENGINE_ENOMEM, "upload: out of memory");
out:
	if (a != NULL)
		archive_write_free(a);
	free(tar.p);
	free(rs.body.p);
	return rc;
}

static int
dk_upload(struct sandbox *sb, const char *path, const void *data,
    size_t len, char *err)
{
	struct dk	*x = (struct dk *)sb;
	char		 abs[PATH_MAX];
	int		 rc;

	if ((rc = dk_alive(x, err)) != 0 ||
	    (rc = sandbox_ws_path(DK_WORKDIR, path, 0, err, abs,
	    sizeof(abs))) != 0)
		goto out;
	if ((int64_t)len > x->cfg.file_size) {
		rc = sandbox_fail(err, ENGINE_ELIMIT, "upload '%.120s': %zu "
		    "bytes is above sandbox.file_size", path, len);
		goto out;
	}
	rc = dk_put(x, path, data, len, err);
out:
	return rc;
}

/* The error of a GET archive that did not answer 200. */
static int
pull_fail(struct dk_pull *pl, const char *what, const char *path,
    char *err)
{
	char msg[200];

	dk_msg(&pl->rs, msg, sizeof(msg));
	if (pl->rs.status == 404)
		return sandbox_fail(err, ENGINE_ENOTFOUND, "%s '%.120s': not "
		    "found", what, path);
	return sandbox_fail(err, pl->rs.status == 400 ? ENGINE_EINVAL :
	    SANDBOX_EFAIL, "docker %s '%.100s': %s", what, path, msg);
}

/*
 * The archive of workspace path (what: "download" or "list", for errors)
 * opened as pull_open does, with *type the stat_type of its head and
 * *size. Returns 0 on a 200 answer, or an error; pull_close after, either
 * way.
 */
static int
pull_ws(struct dk *x, const char *path, int allow_root, const char *what,
    char *err, struct dk_pull *pl, int *type, int64_t *size)
{
	char	abs[PATH_MAX];
	int	rc;

	memset(pl, 0, sizeof(*pl));
	if ((rc = dk_alive(x, err)) != 0 ||
	    (rc = sandbox_ws_path(DK_WORKDIR, path, allow_root, err, abs,
	    sizeof(abs))) != 0 ||
	    (rc = pull_open(x, abs, err, pl)) != 0)
		goto out;
	if (pl->rs.status != 200) {
		rc = pull_fail(pl, what, path, err);
		goto out;
	}
	*type = stat_type(pl->rs.stat, size);
out:
	return rc;
}

static int
dk_download(struct sandbox *sb, const char *path, int64_t max, char *err,
    char **data, size_t *len)
{
	struct dk		*x = (struct dk *)sb;
	struct dk_pull		 pl;
	struct archive		*a = NULL;
	struct archive_entry	*e;
	struct dbuf	 b = { 0 };
	char			 chunk[65536];
	int64_t			 size;
	la_ssize_t		 got;
	int			 rc, t;

	if ((rc = pull_ws(x, path, 0, "download", err, &pl, &t, &size)) != 0)
		goto out;
	if (t != 'f') {
		rc = sandbox_fail(err, t == 'd' ? ENGINE_EINVAL : ENGINE_EINVAL,
		    "download '%.120s': not a regular file", path);
		goto out;
	}
	if (size > max) {
		rc = sandbox_fail(err, ENGINE_ELIMIT, "download '%.120s': "
		    "above the limit of %" PRId64 " bytes", path, max);
		goto out;
	}
	b.max = max;
	if ((a = archive_read_new()) == NULL ||
	    archive_read_support_format_tar(a) != ARCHIVE_OK ||
	    archive_read_open(a, &pl, NULL, pull_read, NULL) != ARCHIVE_OK ||
	    archive_read_next_header(a, &e) != ARCHIVE_OK) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "docker download "
		    "'%.100s': %s",
		    path, a ? archive_error_string(a) : "out of memory");
		goto out;
	}
	if (archive_entry_filetype(e) != AE_IFREG) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "download '%.120s': not "
		    "a regular file", path);
		goto out;
	}
	while ((got = archive_read_data(a, chunk, sizeof(chunk))) > 0)
		dbuf_add(&b, chunk, (size_t)got);
	if (got < 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "docker download "
		    "'%.100s': %s", path, archive_error_string(a));
		goto out;
	}
	if (b.err == DBUF_ENOMEM) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	if (b.err != DBUF_OK) {
		rc = sandbox_fail(err, ENGINE_ELIMIT, "download '%.120s': "
		    "above the limit of %" PRId64 " bytes", path, max);
		goto out;
	}
	if ((*data = dbuf_take(&b, len)) == NULL)
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
out:
	if (a != NULL)
		archive_read_free(a);
	pull_close(&pl);
	free(b.p);
	return rc;
}

static int
dk_list(struct sandbox *sb, const char *dir, size_t max, char *err,
    struct sandbox_file **files, size_t *n)
{
	struct dk		*x = (struct dk *)sb;
	struct dk_pull		 pl;
	struct archive		*a = NULL;
	struct archive_entry	*e;
	struct sandbox_file	*v = NULL;
	const char		*name, *rest;
	char			 rel[PATH_MAX];
	size_t			 k = 0, nl;
	int64_t			 size;
	int			 rc, r, ft, root, t;

	if (dir == NULL)
		dir = "";
	root = dir[0] == '\0' || strcmp(dir, ".") == 0;
	if ((rc = pull_ws(x, dir, 1, "list", err, &pl, &t, &size)) != 0)
		goto out;
	if (t != 'd') {
		rc = sandbox_fail(err, ENGINE_EINVAL, "list '%.120s': not a "
		    "folder", dir);
		goto out;
	}
	if ((v = calloc(max ? max : 1, sizeof(*v))) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	if ((a = archive_read_new()) == NULL ||
	    archive_read_support_format_tar(a) != ARCHIVE_OK ||
	    archive_read_open(a, &pl, NULL, pull_read, NULL) != ARCHIVE_OK) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "docker list '%.100s': "
		    "%s", dir, a ? archive_error_string(a) : "out of memory");
		goto out;
	}
	/* Names start with the folder's own name: "l/c/d.bin" for "l". */
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		name = archive_entry_pathname(e);
		ft = archive_entry_filetype(e);
		if (name == NULL || (ft != AE_IFREG && ft != AE_IFDIR))
			continue;	/* links and others: left out */
		rest = strchr(name, '/');
		if (rest == NULL || rest[1] == '\0')
			continue;	/* the folder itself */
		rest++;
		nl = strlen(rest);
		while (nl > 0 && rest[nl - 1] == '/')
			nl--;
		if (nl == 0)
			continue;
		if ((size_t)snprintf(rel, sizeof(rel), "%s%s%.*s", root ? "" :
		    dir, root ? "" : "/", (int)nl, rest) >= sizeof(rel))
			continue;
		if (sandbox_path_check(rel, 0, err) != 0)
			continue;
		if (k >= max) {
			rc = sandbox_fail(err, ENGINE_ELIMIT, "list: more than "
			    "%zu entries", max);
			goto out;
		}
		if ((v[k].path = strdup(rel)) == NULL) {
			rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
			goto out;
		}
		v[k].is_dir = ft == AE_IFDIR;
		v[k].size = ft == AE_IFDIR ? 0 : archive_entry_size(e);
		v[k].mtime = archive_entry_mtime(e);
		k++;
	}
	if (r != ARCHIVE_EOF) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "docker list '%.100s': "
		    "%s", dir, archive_error_string(a));
		goto out;
	}
	err[0] = '\0';
	*files = v;
	*n = k;
	v = NULL;
out:
	if (a != NULL)
		archive_read_free(a);
	pull_close(&pl);
	sandbox_files_free(v, k);
	return rc;
}

/* ====== Exec ====== */

/* A command's output stream, frames taken apart as they come. */
struct dk_stream {
	unsigned char			 hdr[8];
	size_t				 hdr_len;
	size_t				 left;	/* of the current frame */
	struct dbuf		 out, err;
	const struct sandbox_cancel	*cancel;
	int64_t				 next_check;
	int				 cancelled;
	int				 bad;
};

static int
stream_data(const char *p, size_t n, void *arg)
{
	struct dk_stream	*st = arg;
	size_t			 take;

	while (n > 0) {
		if (st->hdr_len < 8) {
			take = 8 - st->hdr_len < n ? 8 - st->hdr_len : n;
			memcpy(st->hdr + st->hdr_len, p, take);
			st->hdr_len += take;
			p += take;
			n -= take;
			if (st->hdr_len < 8)
				break;
			if (st->hdr[0] > 2) {
				st->bad = 1;
				return 1;
			}
			st->left = (size_t)st->hdr[4] << 24 |
			    (size_t)st->hdr[5] << 16 | (size_t)st->hdr[6] << 8 |
			    st->hdr[7];
		}
		take = st->left < n ? st->left : n;
		if (st->hdr[0] == 1)
			dbuf_add(&st->out, p, take);
		else if (st->hdr[0] == 2)
			dbuf_add(&st->err, p, take);
		p += take;
		n -= take;
		st->left -= take;
		if (st->left == 0)
			st->hdr_len = 0;
	}
	return st->out.err == DBUF_ENOMEM || st->err.err == DBUF_ENOMEM;
}

static int
stream_tick(void *arg)
{
	struct dk_stream	*st = arg;
	int64_t			 now;

	if (st->cancel == NULL)
		return 0;
	now = sandbox_now_us();
	if (now < st->next_check)
		return 0;
	st->next_check = now + SANDBOX_CANCEL_MS * 1000;
	if (st->cancel->fn(st->cancel->arg)) {
		st->cancelled = 1;
		return 1;
	}
	return 0;
}

static int	dk_gone(struct dk *x, char *err);

/*
 * Starts an exec of argv (NULL-terminated) with env in x's container:
 * *eid the exec's id (80 bytes). Returns 0 or an error naming the cause
 * (the container gone or stopped: SANDBOX_EFAIL).
 */
static int
exec_create(struct dk *x, const char *const *argv, const char *const *env,
    char *err, char *eid)
{
	json_t		*body = NULL, *res = NULL, *a, *ev;
	const char	*id;
	char		 path[200];
	size_t		 k;
	int		 rc;

	body = json_pack("{s:b, s:b, s:b, s:b, s:[], s:[]}", "AttachStdin", 0,
	    "AttachStdout", 1, "AttachStderr", 1, "Tty", 0, "Cmd", "Env");
	if (body == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	a = json_object_get(body, "Cmd");
	ev = json_object_get(body, "Env");
	for (k = 0; argv[k] != NULL; k++)
		if (json_array_append_new(a, json_string(argv[k])) != 0) {
			rc = sandbox_fail(err, ENGINE_EINVAL, "exec: an "
			    "argument is not UTF-8");
			goto out;
		}
	for (k = 0; env != NULL && env[k] != NULL; k++)
		if (json_array_append_new(ev, json_string(env[k])) != 0) {
			rc = sandbox_fail(err, ENGINE_EINVAL, "exec: "
			    "environment entry '%.60s' is not UTF-8", env[k]);
			goto out;
		}
	if (x->user != NULL &&
	    json_object_set_new(body, "User", json_string(x->user)) != 0) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	snprintf(path, sizeof(path), "/containers/%s/exec", x->cid);
	rc = dk_post(x, "exec", path, body, 0, 201, err, &res);
	if (rc == ENGINE_ENOTFOUND || (rc != 0 &&
	    strstr(err, "is not running") != NULL)) {
		rc = dk_gone(x, err);
		goto out;
	}
	if (rc != 0)
		goto out;
	id = json_string_value(json_object_get(res, "Id"));
	if (id == NULL || strlen(id) >= 80 || strspn(id, "0123456789abcdef")
	    != strlen(id)) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "docker exec: the answer "
		    "has no Id");
		goto out;
	}
	snprintf(eid, 80, "%s", id);
out:
	json_decref(body);
	json_decref(res);
	return rc;
}

/*
 * The exit code of exec eid: waits up to 5 s for it to be reported as not
 * running. *code -1 when the engine never said.
 */
static int
exec_exit(struct dk *x, const char *eid, char *err, int *code)
{
	struct dk_req	 rq;
	json_t		*res = NULL;
	const json_t	*c;
	char		 path[200];
	int		 rc = 0, i;

	*code = -1;
	memset(&rq, 0, sizeof(rq));
	snprintf(path, sizeof(path), "/exec/%s/json", eid);
	rq.path = path;
	for (i = 0; i < 250; i++) {
		json_decref(res);
		res = NULL;
		if ((rc = dk_json(x, "exec inspect", &rq, 200, 0, err, NULL,
		    &res)) != 0)
			goto out;
		c = json_object_get(res, "ExitCode");
		if (!json_is_true(json_object_get(res, "Running")) &&
		    json_is_integer(c)) {
			*code = (int)json_integer_value(c);
			break;
		}
		usleep(20000);
	}
out:
	json_decref(res);
	return rc;
}

/*
 * rq as POST /exec/<eid>/start, attached, its output demultiplexed into
 * st; path (200 bytes) holds the request's path.
 */
static void
exec_start_req(struct dk_req *rq, char *path, const char *eid,
    struct dk_stream *st)
{
	static const char start[] = "{\"Detach\":false,\"Tty\":false}";

	memset(rq, 0, sizeof(*rq));
	snprintf(path, 200, "/exec/%s/start", eid);
	rq->method = "POST";
	rq->path = path;
	rq->body = start;
	rq->body_len = sizeof(start) - 1;
	rq->on_data = stream_data;
	rq->arg = st;
}

/*
 * Runs argv in the container to its end (a cleanup, a look-up): *code its
 * exit code, its standard output into out (outsz bytes, NUL-terminated;
 * NULL: discarded).
 */
static int
exec_simple(struct dk *x, const char *const *argv, char *err, int *code,
    char *out, size_t outsz)
{
	struct dk_stream	 st;
	struct dk_req		 rq;
	struct dk_resp		 rs;
	char			 eid[80], path[200];
	int			 rc;

	DK_RESP_INIT(&rs);
	memset(&st, 0, sizeof(st));
	st.out.max = st.err.max = 4096;
	if ((rc = exec_create(x, argv, NULL, err, eid)) != 0)
		goto out;
	exec_start_req(&rq, path, eid, &st);
	*code = -1;
	if ((rc = dk_call(x, &rq, err, &rs, NULL)) != 0 || rs.status != 200)
		goto out;
	rc = exec_exit(x, eid, err, code);
	if (out != NULL)
		snprintf(out, outsz, "%s", st.out.p != NULL ? st.out.p : "");
out:
	free(rs.body.p);
	free(st.out.p);
	free(st.err.p);
	return rc;
}

/*
 * Why a container no longer runs commands: SANDBOX_EFAIL with err saying
 * whether it stopped (and why, when the engine knows) within 2 s.
 */
static int
dk_gone(struct dk *x, char *err)
{
	struct dk_req	 rq;
	json_t		*res = NULL;
	const json_t	*st;
	char		 path[200], serr[ENGINE_ERRMAX];
	int		 i;

	memset(&rq, 0, sizeof(rq));
	snprintf(path, sizeof(path), "/containers/%s/json", x->cid);
	rq.path = path;
	for (i = 0; i < 100; i++) {
		json_decref(res);
		res = NULL;
		if (dk_json(x, "inspect", &rq, 200, 0, serr, NULL, &res) != 0)
			break;
		st = json_object_get(res, "State");
		if (!json_is_true(json_object_get(st, "Running")))
			break;
		usleep(20000);
	}
	st = json_object_get(res, "State");
	if (res != NULL && json_is_true(json_object_get(st, "Running")))
		snprintf(serr, sizeof(serr), "it runs, but a command cannot "
		    "start in it");
	else if (json_is_true(json_object_get(st, "OOMKilled")))
		snprintf(serr, sizeof(serr), "stopped: out of memory (see "
		    "docker_memory)");
	else if (res != NULL)
		snprintf(serr, sizeof(serr), "stopped (exit code %d: killed?)",
		    (int)json_integer_value(json_object_get(st, "ExitCode")));
	else
		snprintf(serr, sizeof(serr), "removed");
	json_decref(res);
	return sandbox_fail(err, SANDBOX_EFAIL, "docker: the container %.12s "
	    "of sandbox %.8s %s", x->cid, x->base.id, serr);
}

/*
 * Kills every process of the container but its pid 1: 0, or
 * SANDBOX_EFAIL when the container cannot run it (dk_gone).
 */
static int
dk_cleanup(struct dk *x, char *err)
{
	static const char *const	argv[] = {"/bin/sh", "-c", DK_CLEANUP,
	    NULL};
	int				code, rc;

	rc = exec_simple(x, argv, err, &code, NULL, 0);
	if (rc == 0 && code != 0)
		rc = dk_gone(x, err);
	return rc;
}

/* The wrapper script of a command (see the top) into b. */
static void
exec_script(struct dbuf *b, const struct sandbox_exec_req *req,
    const char *cwd, const char *in_path)
{
	dbuf_addstr(b, "trap 'kill -9 -1 2>/dev/null' EXIT\n");
	if (in_path != NULL) {
		dbuf_addstr(b, "exec 0<");
		sandbox_add_quoted(b, in_path);
		dbuf_addstr(b, " || exit 125; rm -f ");
		sandbox_add_quoted(b, in_path);
		dbuf_addstr(b, "\n");
	} else
		dbuf_addstr(b, "exec 0</dev/null\n");
	dbuf_addstr(b, "cd -- ");
	sandbox_add_quoted(b, cwd);
	dbuf_addstr(b, " || exit 1\n");
	if (req->shell != NULL) {
		dbuf_addstr(b, "{ ");
		dbuf_addstr(b, req->shell);
		dbuf_addstr(b, "\n}");
	} else
		dbuf_addstr(b, "\"$@\"");
}

static int
dk_exec(struct sandbox *sb, const struct sandbox_exec_req *req, char *err,
    struct sandbox_exec_result *res)
{
	struct dk		*x = (struct dk *)sb;
	struct dk_stream	 st;
	struct dk_req		 rq;
	struct dk_resp		 rs;
	struct dbuf	 script = { 0 };
	const char		**argv = NULL;
	char			 cwd[PATH_MAX], in_rel[80], in_abs[120];
	char			 eid[80], path[200], cerr[ENGINE_ERRMAX];
	char			 uuid[37];
	size_t			 k, nargs = 0;
	int64_t			 t0 = sandbox_now_us(), timeout_ms, left_ms;
	int			 rc, timed_out = 0, code = -1, stdin_file = 0;

	DK_RESP_INIT(&rs);
	memset(&st, 0, sizeof(st));
	if ((rc = dk_alive(x, err)) != 0 ||
	    (rc = sandbox_ws_path(DK_WORKDIR, req->cwd ? req->cwd : "", 1,
	    err, cwd, sizeof(cwd))) != 0)
		goto out;
	timeout_ms = sandbox_exec_timeout_ms(req, &x->cfg);
	if (req->stdin_len > 0) {
		engine_uuid(uuid);
		snprintf(in_rel, sizeof(in_rel), ".flowcgi-stdin-%s", uuid);
		snprintf(in_abs, sizeof(in_abs), DK_WORKDIR "/%s", in_rel);
		if ((rc = dk_put(x, in_rel, req->stdin_data, req->stdin_len,
		    err)) != 0)
			goto out;
		stdin_file = 1;
	}
	exec_script(&script, req, cwd, stdin_file ? in_abs : NULL);
	for (k = 0; req->argv != NULL && req->argv[k] != NULL; k++)
		nargs++;
	if (script.err == DBUF_ENOMEM ||
	    (argv = calloc(nargs + 5, sizeof(*argv))) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[2] = script.p;
	argv[3] = "sh";
	for (k = 0; k < nargs; k++)
		argv[4 + k] = req->argv[k];
	if ((rc = exec_create(x, argv, req->env, err, eid)) != 0)
		goto out;

	st.out.max = st.err.max = req->max_output > 0 ? req->max_output :
	    x->cfg.max_output;
	st.cancel = req->cancel;
	left_ms = timeout_ms - (sandbox_now_us() - t0) / 1000;
	exec_start_req(&rq, path, eid, &st);
	rq.timeout_ms = left_ms > 1 ? (long)left_ms : 1;
	rq.on_tick = req->cancel != NULL ? stream_tick : NULL;
	if ((rc = dk_call(x, &rq, err, &rs, &timed_out)) != 0)
		goto out;
	if (st.out.err == DBUF_ENOMEM || st.err.err == DBUF_ENOMEM) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto kill;
	}
	if (st.bad) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "docker exec: the engine "
		    "sent a stream that is not multiplexed");
		goto kill;
	}
	if (!timed_out && !st.cancelled && rs.status != 200 &&
	    rs.status != 101) {
		dk_msg(&rs, path, sizeof(path));
		rc = sandbox_fail(err, SANDBOX_EFAIL, "docker exec start: %s",
		    path);
		goto kill;
	}
	if (timed_out || st.cancelled) {
		if ((rc = dk_cleanup(x, err)) != 0)
			goto out;
		res->timed_out = timed_out;
		res->cancelled = st.cancelled;
		code = 128 + SIGKILL;
	} else {
		if ((rc = exec_exit(x, eid, err, &code)) != 0)
			goto kill;
		/* The wrapper died (a signal, the container): no cleanup
		 * ran. */
		if (code < 0 || code > 128) {
			if ((rc = dk_cleanup(x, err)) != 0)
				goto out;
		}
		if (code < 0) {
			rc = sandbox_fail(err, SANDBOX_EFAIL, "docker exec: "
			    "the engine never reported the command's end");
			goto out;
		}
	}
	res->exit_code = code;
	if (code > 128 && code < 128 + NSIG)
		res->signal = code - 128;
	if ((rc = sandbox_exec_take(res, &st.out, &st.err, err)) != 0)
		goto out;
	res->elapsed_us = sandbox_now_us() - t0;
	goto out;
kill:
	if (dk_cleanup(x, cerr) != 0)
		log_warn("sandbox: %s", cerr);
out:
	if (rc != 0)
		sandbox_exec_result_release(res);
	free(argv);
	free(script.p);
	free(rs.body.p);
	free(st.out.p);
	free(st.err.p);
	return rc;
}

/* ====== Engine checks and leftovers ====== */

int
sandbox_docker_probe(const json_t *options, char *err, char **info)
{
	struct dk	*x = NULL;
	struct dk_req	 rq;
	json_t		*v = NULL, *img = NULL;
	const char	*image, *ver, *api;
	char		 path[1200], esc[1100] = "";
	long		 status = 0;
	int		 rc;

	*info = NULL;
	err[0] = '\0';
	if ((rc = dk_connect(options, err, &x)) != 0)
		goto out;
	if (sandbox_opt_str(options, "docker_image", DK_DEFAULT_IMAGE, &image)
	    != 0 || sandbox_url_escape(esc, sizeof(esc), image) != 0) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "docker: docker_image "
		    "must be an image name");
		goto out;
	}
	memset(&rq, 0, sizeof(rq));
	rq.path = "/version";
	rq.timeout_ms = 15000;
	if ((rc = dk_json(x, "version", &rq, 200, 0, err, NULL, &v)) != 0)
		goto out;
	ver = json_string_value(json_object_get(v, "Version"));
	api = json_string_value(json_object_get(v, "ApiVersion"));
	snprintf(path, sizeof(path), "/images/%s/json", esc);
	rq.path = path;
	rc = dk_json(x, "image inspect", &rq, 200, 0, err, &status, &img);
	if (rc == ENGINE_ENOTFOUND) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "docker: image '%.100s' "
		    "is not on the engine at %.60s (docker pull it there)",
		    image,
		    x->where);
		goto out;
	}
	if (rc != 0)
		goto out;
	snprintf(path, sizeof(path), "Docker Engine %.40s (API %.10s) at "
	    "%.80s; image %.100s is present", ver ? ver : "?", api ? api :
	    "?", x->where, image);
	if ((*info = strdup(path)) == NULL)
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
out:
	json_decref(v);
	json_decref(img);
	dk_release(x);
	return rc;
}

int
sandbox_docker_sweep(const json_t *options, char *err, int *removed)
{
	struct dk	*x = NULL;
	struct dk_req	 rq;
	json_t		*list = NULL, *c, *filt = NULL;
	const json_t	*lab;
	const char	*id, *p;
	char		 host[256], hl[300], *fs = NULL, esc[1024] = "";
	char		 path[1200], rerr[ENGINE_ERRMAX];
	size_t		 i;
	long		 pid;
	int		 rc;

	*removed = 0;
	err[0] = '\0';
	if ((rc = dk_connect(options, err, &x)) != 0)
		goto out;
	conf_hostname(host, sizeof(host));
	snprintf(hl, sizeof(hl), "flowcgi.host=%s", host);
	if ((filt = json_pack("{s:[s,s]}", "label", DK_LABEL, hl)) == NULL ||
	    (fs = json_dumps(filt, JSON_COMPACT)) == NULL ||
	    sandbox_url_escape(esc, sizeof(esc), fs) != 0) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	snprintf(path, sizeof(path), "/containers/json?all=1&filters=%s", esc);
	memset(&rq, 0, sizeof(rq));
	rq.path = path;
	rq.timeout_ms = 15000;
	if ((rc = dk_json(x, "list containers", &rq, 200, 0, err, NULL,
	    &list)) != 0)
		goto out;
	json_array_foreach(list, i, c) {
		id = json_string_value(json_object_get(c, "Id"));
		lab = json_object_get(c, "Labels");
		p = json_string_value(json_object_get(lab, "flowcgi.pid"));
		pid = p != NULL ? strtol(p, NULL, 10) : 0;
		if (id == NULL || strlen(id) > 80 ||
		    strspn(id, "0123456789abcdef") != strlen(id))
			continue;
		/* A process still alive (here or under another user) keeps
		 * its containers. */
		if (pid > 0 && (pid == (long)getpid() || kill((pid_t)pid, 0) ==
		    0 || errno == EPERM))
			continue;
		if (dk_remove(x, id, rerr) != 0)
			log_warn("sandbox: %s", rerr);
		else
			(*removed)++;
	}
out:
	json_decref(list);
	json_decref(filt);
	free(fs);
	dk_release(x);
	return rc;
}

/* The provider's sweep: sandbox_docker_sweep of cfg's options. */
static int
dk_sweep(const struct sandbox_config *cfg, char *err, int *removed)
{
	return sandbox_docker_sweep(cfg->options, err, removed);
}

/* The provider's check: the engine and the image (sandbox_docker_probe). */
static int
dk_check(json_t *options, char *err, char **info)
{
	return sandbox_docker_probe(options, err, info);
}

/*
 * What the bash tool's description says about a docker sandbox:
 * docker_network decides whether it has network, not sandbox.network.
 */
static char *
dk_note(const struct sandbox_config *cfg)
{
	struct dbuf	 b = { 0 };
	const char		*s;
	size_t			 n;

	if (sandbox_opt_str(cfg->options, "docker_network", NULL, &s) != 0 ||
	    (s != NULL && strcmp(s, "none") == 0))
		s = NULL;
	dbuf_addstr(&b, "Commands run in a container: its installed tools "
	    "are the image's. ");
	dbuf_addstr(&b, s != NULL ? "It has network access." : "It has "
	    "no network access: downloads and package installs fail.");
	return dbuf_take(&b, &n);
}

/* The config the console asks for and stores (settings.c): cfg->options. */
static const struct sandbox_field docker_fields[] = {
	{ "docker_sock", "text-input", 1, "unix:///var/run/docker.sock",
	    "Engine socket or URL (unix:///..., tcp://host:2376)" },
	{ "docker_image", "text-input", 1, "langgenius/dify-agentbox:latest",
	    "Image" },
	{ "docker_network", "text-input", 0, NULL,
	    "Network (empty: none)" },
	{ "docker_user", "text-input", 0, NULL,
	    "User (empty: the image's)" },
	{ "docker_memory", "text-input", 0, NULL,
	    "Memory limit, e.g. 512m (empty: sandbox.memory)" },
	{ "docker_cpus", "text-input", 0, "1", "CPUs" },
	{ "docker_pids", "text-input", 0, NULL,
	    "Process limit (empty: sandbox.processes)" },
	{ "docker_cert_path", "text-input", 0, NULL,
	    "TLS folder for tcp:// (ca.pem, cert.pem, key.pem)" },
};

const struct sandbox_provider sandbox_provider_docker = {
	.name = "docker",
	.fields = docker_fields,
	.nfields = sizeof(docker_fields) / sizeof(*docker_fields),
	.create = dk_create,
	.exec = dk_exec,
	.upload = dk_upload,
	.download = dk_download,
	.list = dk_list,
	.destroy = dk_destroy,
	.free = dk_free,
	.check = dk_check,
	.sweep = dk_sweep,
	.note = dk_note,
};
