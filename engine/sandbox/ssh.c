/*
 * ssh.c — the ssh sandbox provider: commands on a remote host through the
 * OpenSSH client binary (no ssh library).
 *
 * Options (cfg->options, a JSON object; Dify's keys): ssh_host, ssh_port
 * (number or string, default 22), ssh_username, ssh_password (a password,
 * or a PEM/OpenSSH private key when it starts with "-----BEGIN"),
 * base_working_path (default /workspace/sandboxes) and ssh_host_key, the
 * pinned host key(s): "type base64" lines as ssh-keyscan prints them after
 * the host name (sandbox_ssh_scan captures them; settings.c pins them).
 * Without a pinned key nothing connects: StrictHostKeyChecking=yes against
 * a private known_hosts file holding only those keys (HostKeyAlias, so the
 * port does not matter), never accept-new or no.
 *
 * Connections. One ControlMaster per config (host, port, user, secret,
 * pinned keys), shared by every sandbox, command and run of every process
 * using the same private folder: its socket is <priv>/cm-<hash>, the
 * master stays ControlPersist=600 s after its last client. The private
 * folder is <sandbox.dir>/.ssh (0700), or /tmp/flowcgi-ssh-<uid> (0700,
 * owned by us, not a symlink) when that path would be too long for a unix
 * socket. The master is started under a lock file; every later ssh runs
 * with ControlMaster=no and all authentication off, so it can only ride
 * the master.
 *
 * Secrets. The key or password is written only to 0600 files in the
 * private folder (never on a command line or in the environment), for the
 * seconds the master takes to log in, then removed. A password goes through
 * OpenSSH's askpass: SSH_ASKPASS=<priv>/ap-... (a 0700 script that only
 * cats the 0600 password file; ssh closes inherited descriptors, so a pipe
 * cannot be used) with SSH_ASKPASS_REQUIRE=force; no sshpass.
 *
 * Remote layout: <base>/<id> is the workspace (cwd of commands),
 * <base>/.<id>.pids holds one file per running command with its process
 * group. A command runs as
 *
 *	sh -c 'cd WS/CWD; timeout -s KILL SECS env K=V... sh -c CMD &
 *	       echo $! > PIDS/TOKEN; wait; kill -9 -$!; printf TRAILER'
 *
 * coreutils timeout puts itself in a new process group and at the limit
 * sends SIGKILL to all of it (itself included: the wrapper sees 137, and
 * exec reports timed_out when the limit had passed); after a normal end
 * the wrapper kills what is left of the group, so nothing a command
 * started outlives it (a program that setsid()s itself away escapes, as
 * from any process-group kill). SIGKILL of the local ssh client would leave
 * the remote side running (verified), so when the link breaks or the local
 * backstop deadline (limit + 10 s) fires, exec reconnects and kills the
 * group named in PIDS/TOKEN. The trailer (a 0x1e-delimited exit code on
 * the command's stderr, stripped) tells a remote exit 255 from ssh's own.
 *
 * Files: upload `cat >`, download `cat` (sizes checked first), list
 * `find -printf` (NUL-separated), trees as tar streams written and read
 * with libarchive piped to and from a remote `tar`. Paths are checked
 * lexically (relative, no ".."); the remote user owns the whole host side,
 * so the workspace is not a security boundary there: the remote machine
 * (an account or VM for sandboxes) is.
 *
 * A sandbox handle is used by one thread at a time.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "engine/sandbox/provider.h"

#define SSH_PERSIST		600	/* ControlPersist, s */
#define SSH_CONNECT_TIMEOUT	10	/* ConnectTimeout, s */
#define SSH_OP_TIMEOUT_MS	30000	/* file operations */
#define SSH_OP_US_PER_BYTE	1	/* + 1 s per MB moved: a 1 MB/s floor */
#define SSH_BACKSTOP_US		10000000 /* local kill after the limit */
#define SSH_LIST_MAX_BYTES	(64 * 1024 * 1024)
#define TRAILER_MAX		64

/* Remote exit codes of the file helpers. */
#define RX_NOTFOUND	3
#define RX_NOTFILE	4
#define RX_TOOBIG	5

struct ssh_opts {
	char	 host[256];
	int	 port;
	char	 user[128];
	char	*secret;	/* password or key; malloc'd, wiped */
	int	 is_key;
	char	 base[1024];
	char	*host_keys;	/* "type base64\n" lines; malloc'd */
	char	 hash[33];	/* of everything above: the master's name */
};

struct ssh_sb {
	struct sandbox		 base;
	struct sandbox_config	 cfg;
	struct ssh_opts		 o;
	char			 ssh[PATH_MAX];	/* the client binary */
	char			 priv[PATH_MAX];
	char			 cpath[PATH_MAX];
	char			 ws[1200];	/* remote workspace */
	char			 pids[1200];	/* remote pid folder */
	unsigned		 seq;
	int			 destroyed;
};

/* ====== Strings and quoting ====== */

/* Appends a "/"-joined, quoted remote path: a + "/" + b (b may be ""). */
static void
sb_qpath(struct dbuf *b, const char *a, const char *rel)
{
	struct dbuf t = { 0 };

	dbuf_addstr(&t, a);
	if (rel != NULL && rel[0] != '\0' && strcmp(rel, ".") != 0) {
		dbuf_addstr(&t, "/");
		dbuf_addstr(&t, rel);
	}
	if (t.err == DBUF_ENOMEM)
		b->err = DBUF_ENOMEM;
	else
		sandbox_add_quoted(b, dbuf_str(&t));
	free(t.p);
}

static void
wipe_free(char *s)
{
	if (s != NULL) {
		OPENSSL_cleanse(s, strlen(s));
		free(s);
	}
}

/* ====== Options ====== */

static void
opts_release(struct ssh_opts *o)
{
	wipe_free(o->secret);
	free(o->host_keys);
	memset(o, 0, sizeof(*o));
}

/* 1 when s is a safe ssh host or user name: no option, space or quote. */
static int
name_ok(const char *s)
{
	const char *p;

	if (s[0] == '\0' || s[0] == '-')
		return 0;
	for (p = s; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f || *p == '\'' ||
		    *p == '"' || *p == '\\' || *p == '`' || *p == '$' ||
		    *p == ';' || *p == '@' || *p == '%' || *p == '#')
			return 0;
	return 1;
}

/*
 * Reads the provider options. need_key: a pinned host key is required.
 * Returns 0 or ENGINE_EINVAL/ENGINE_ENOMEM with err naming the field.
 */
static int
opts_parse(const json_t *j, int need_key, char *err, struct ssh_opts *o)
{
	const char	*s;
	unsigned char	 md[EVP_MAX_MD_SIZE];
	unsigned int	 mdlen = 0;
	EVP_MD_CTX	*ctx = NULL;
	int		 rc = 0, i;

	memset(o, 0, sizeof(*o));
	if (!json_is_object(j)) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "ssh: no configuration (set "
		    "ssh_host, ssh_username and ssh_password)");
		goto out;
	}
	/* A field of another type counts as missing. */
	(void)sandbox_opt_str(j, "ssh_host", NULL, &s);
	if (s == NULL || strlen(s) >= sizeof(o->host) || !name_ok(s)) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "ssh_host: %s", s == NULL ?
		    "required" : "not a host name or address");
		goto out;
	}
	snprintf(o->host, sizeof(o->host), "%s", s);
	if (sandbox_opt_int(j, "ssh_port", 22, 1, 65535, &o->port) != 0) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "ssh_port: a number from 1 to "
		    "65535");
		goto out;
	}
	(void)sandbox_opt_str(j, "ssh_username", NULL, &s);
	if (s == NULL || strlen(s) >= sizeof(o->user) || !name_ok(s)) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "ssh_username: %s", s == NULL ?
		    "required" : "not a user name");
		goto out;
	}
	snprintf(o->user, sizeof(o->user), "%s", s);
	(void)sandbox_opt_str(j, "ssh_password", NULL, &s);
	if (s == NULL || strcmp(s, ENGINE_SECRET_MASK) == 0) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "ssh_password: required (a "
		    "password or a private key)");
		goto out;
	}
	if (strchr(s, '\n') != NULL && strncmp(s, "-----BEGIN", 10) != 0) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "ssh_password: a password may "
		    "not contain a line break");
		goto out;
	}
	o->is_key = strncmp(s, "-----BEGIN", 10) == 0;
	if ((o->secret = strdup(s)) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	(void)sandbox_opt_str(j, "base_working_path", "/workspace/sandboxes",
	    &s);
	if (s[0] != '/' || strlen(s) >= sizeof(o->base) - 64 ||
	    sandbox_path_check(s + 1, 1, err) != 0) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "base_working_path: an absolute "
		    "path without '..'");
		goto out;
	}
	snprintf(o->base, sizeof(o->base), "%s", s);
	while (strlen(o->base) > 1 && o->base[strlen(o->base) - 1] == '/')
		o->base[strlen(o->base) - 1] = '\0';
	(void)sandbox_opt_str(j, "ssh_host_key", "", &s);
	for (i = 0; s[i] != '\0'; i++)
		if (((unsigned char)s[i] < 0x20 && s[i] != '\n') ||
		    s[i] == 0x7f)
			break;
	if (s[i] != '\0') {
		rc = sandbox_fail(err, ENGINE_EINVAL, "ssh_host_key: 'type base64' "
		    "lines");
		goto out;
	}
	if (s[0] == '\0' && need_key) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "ssh: no pinned host key for %s "
		    "(test the connection to pin it)", o->host);
		goto out;
	}
	if ((o->host_keys = strdup(s)) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	/* The master's name: everything that makes a different login. */
	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(ctx, o->host, strlen(o->host) + 1) != 1 ||
	    EVP_DigestUpdate(ctx, &o->port, sizeof(o->port)) != 1 ||
	    EVP_DigestUpdate(ctx, o->user, strlen(o->user) + 1) != 1 ||
	    EVP_DigestUpdate(ctx, o->secret, strlen(o->secret) + 1) != 1 ||
	    EVP_DigestUpdate(ctx, o->host_keys, strlen(o->host_keys)) != 1 ||
	    EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen < 16) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "ssh: sha256 failed");
		goto out;
	}
	for (i = 0; i < 16; i++)
		snprintf(o->hash + 2 * i, 3, "%02x", md[i]);
out:
	EVP_MD_CTX_free(ctx);
	if (rc != 0)
		opts_release(o);
	return rc;
}

/* ====== Local files ====== */

/*
 * Makes (or checks) the private folder: 0700, ours, not a symlink. The
 * control socket path "<dir>/cm-<32 hex>" must fit a sockaddr_un.
 */
static int
priv_dir(const struct sandbox_config *cfg, char *err, char *dir, size_t n)
{
	struct sockaddr_un	 sun;
	struct stat		 st;
	const char		*tmp;
	int			 rc = 0;

	if (cfg->dir[0] != '\0' && strlen(cfg->dir) + 48 <
	    sizeof(sun.sun_path)) {
		(void)mkdir(cfg->dir, 0700);
		snprintf(dir, n, "%s/.ssh", cfg->dir);
	} else {
		tmp = getenv("TMPDIR");
		if (tmp == NULL || tmp[0] != '/' || strlen(tmp) > 40)
			tmp = "/tmp";
		snprintf(dir, n, "%s/flowcgi-ssh-%u", tmp, (unsigned)geteuid());
	}
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "ssh: private folder '%.100s': %s",
		    dir, strerror(errno));
		goto out;
	}
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "ssh: private folder '%.100s' is "
		    "not a 0700 folder of ours", dir);
		goto out;
	}
out:
	return rc;
}

/* Writes data to a new file path with mode (O_EXCL, so never a link). */
static int
write_private(const char *path, const char *data, mode_t mode)
{
	size_t	 len = strlen(data), off = 0;
	ssize_t	 w;
	int	 fd, rc = -1;

	(void)unlink(path);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, mode)) < 0)
		goto out;
	if (fchmod(fd, mode) != 0)
		goto out;
	while (off < len) {
		w = write(fd, data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto out;
		off += (size_t)w;
	}
	rc = 0;
out:
	if (fd >= 0 && close(fd) != 0)
		rc = -1;
	if (rc != 0)
		(void)unlink(path);
	return rc;
}

/* ====== Running ssh ====== */

struct run {
	/* in */
	char *const	*argv;
	char *const	*envp;
	const void	*in;
	size_t		 in_len;
	int64_t		 max_out, max_err;
	int64_t		 deadline;	/* sandbox_now_us() clock */
	/* out */
	char		*out, *err;
	size_t		 out_len, err_len;
	int64_t		 out_total, err_total;
	int		 out_trunc, err_trunc;
	char		 tail[TRAILER_MAX];	/* last bytes of stderr */
	size_t		 tail_len;
	int		 status;
	int		 killed;		/* at the deadline */
};

static void
run_release(struct run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

/* Reads what fd has into buf (capped at max); 1 at EOF or error. */
static int
run_read(int fd, char **buf, size_t *len, int64_t *total, int64_t max,
    int *trunc, char *tail, size_t *tail_len)
{
	char	 chunk[65536], *nb;
	ssize_t	 n;
	size_t	 keep, take;

	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0)
			return 1;
		*total += n;
		if (tail != NULL) {
			if ((size_t)n >= TRAILER_MAX) {
				memcpy(tail, chunk + n - TRAILER_MAX,
				    TRAILER_MAX);
				*tail_len = TRAILER_MAX;
			} else {
				keep = *tail_len + (size_t)n > TRAILER_MAX ?
				    TRAILER_MAX - (size_t)n : *tail_len;
				memmove(tail, tail + *tail_len - keep, keep);
				memcpy(tail + keep, chunk, (size_t)n);
				*tail_len = keep + (size_t)n;
			}
		}
		take = (size_t)n;
		if ((int64_t)(*len + take) > max) {
			*trunc = 1;
			take = max > (int64_t)*len ? (size_t)(max -
			    (int64_t)*len) : 0;
		}
		if (take == 0)
			continue;
		if ((nb = realloc(*buf, *len + take + 1)) == NULL)
			return 1;
		*buf = nb;
		memcpy(*buf + *len, chunk, take);
		*len += take;
		(*buf)[*len] = '\0';
	}
}

/*
 * Runs argv[0] (ssh) with envp in a new session, feeding in and collecting
 * stdout and stderr up to their caps; SIGKILLs it at the deadline (then
 * r->killed). r->out and r->err are always malloc'd and NUL-terminated
 * after 0. Returns 0 or SANDBOX_EFAIL/ENGINE_ENOMEM.
 */
static int
run_ssh(struct run *r, char *err)
{
	int		 pin[2] = {-1, -1}, pout[2] = {-1, -1};
	int		 perr[2] = {-1, -1}, rc = 0, exited = 0, nfd, i, ms;
	struct pollfd	 pfd[3];
	sigset_t	 oldset;
	size_t		 in_off = 0;
	ssize_t		 w;
	pid_t		 pid = -1;

	r->status = -1;
	sandbox_sigpipe_block(&oldset);
	if (pipe2(pin, O_CLOEXEC) != 0 || pipe2(pout, O_CLOEXEC) != 0 ||
	    pipe2(perr, O_CLOEXEC) != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "ssh: pipe: %s", strerror(errno));
		goto out;
	}
	if ((pid = fork()) < 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "ssh: fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		/* No terminal: ssh must never prompt on one. */
		(void)setsid();
		if (dup2(pin[0], 0) < 0 || dup2(pout[1], 1) < 0 ||
		    dup2(perr[1], 2) < 0)
			_exit(255);
		signal(SIGPIPE, SIG_DFL);
		pthread_sigmask(SIG_SETMASK, &oldset, NULL);
		execve(r->argv[0], r->argv, r->envp);
		_exit(255);
	}
	sandbox_close_fd(&pin[0]);
	sandbox_close_fd(&pout[1]);
	sandbox_close_fd(&perr[1]);
	(void)fcntl(pin[1], F_SETFL, O_NONBLOCK);
	(void)fcntl(pout[0], F_SETFL, O_NONBLOCK);
	(void)fcntl(perr[0], F_SETFL, O_NONBLOCK);
	if (r->in_len == 0)
		sandbox_close_fd(&pin[1]);
	while (pout[0] >= 0 || perr[0] >= 0 || !exited) {
		nfd = 0;
		if (pin[1] >= 0) {
			pfd[nfd].fd = pin[1];
			pfd[nfd++].events = POLLOUT;
		}
		if (pout[0] >= 0) {
			pfd[nfd].fd = pout[0];
			pfd[nfd++].events = POLLIN;
		}
		if (perr[0] >= 0) {
			pfd[nfd].fd = perr[0];
			pfd[nfd++].events = POLLIN;
		}
		ms = (int)((r->deadline - sandbox_now_us()) / 1000) + 1;
		if (ms < 0 || r->killed)
			ms = 0;
		if (ms > 1 && (pout[0] < 0 && perr[0] < 0))
			ms = 1;		/* only the exit to wait for */
		if (nfd > 0)
			(void)poll(pfd, (nfds_t)nfd, ms > 1000 ? 1000 : ms);
		else if (ms > 0)
			(void)poll(NULL, 0, ms);
		for (i = 0; i < nfd; i++) {
			if (pfd[i].revents == 0)
				continue;
			if (pfd[i].fd == pin[1]) {
				w = write(pin[1], (const char *)r->in + in_off,
				    r->in_len - in_off);
				if (w > 0)
					in_off += (size_t)w;
				if ((w < 0 && errno != EAGAIN &&
				    errno != EINTR) || in_off >= r->in_len ||
				    (pfd[i].revents & (POLLERR | POLLHUP)))
					sandbox_close_fd(&pin[1]);
			} else if (pfd[i].fd == pout[0]) {
				if (run_read(pout[0], &r->out, &r->out_len,
				    &r->out_total, r->max_out, &r->out_trunc,
				    NULL, NULL))
					sandbox_close_fd(&pout[0]);
			} else if (pfd[i].fd == perr[0]) {
				if (run_read(perr[0], &r->err, &r->err_len,
				    &r->err_total, r->max_err, &r->err_trunc,
				    r->tail, &r->tail_len))
					sandbox_close_fd(&perr[0]);
			}
		}
		if (!exited && waitpid(pid, &r->status, WNOHANG) == pid)
			exited = 1;
		if (!r->killed && sandbox_now_us() >= r->deadline) {
			r->killed = 1;
			(void)kill(pid, SIGKILL);
			/* A master forked by this ssh may hold the pipes. */
			sandbox_close_fd(&pout[0]);
			sandbox_close_fd(&perr[0]);
			sandbox_close_fd(&pin[1]);
		}
	}
	pid = -1;
	if ((r->out == NULL && (r->out = calloc(1, 1)) == NULL) ||
	    (r->err == NULL && (r->err = calloc(1, 1)) == NULL))
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
out:
	if (pid > 0) {
		(void)kill(pid, SIGKILL);
		(void)waitpid(pid, &r->status, 0);
	}
	sandbox_sigpipe_restore(&oldset);
	sandbox_close_fd(&pin[0]);
	sandbox_close_fd(&pin[1]);
	sandbox_close_fd(&pout[0]);
	sandbox_close_fd(&pout[1]);
	sandbox_close_fd(&perr[0]);
	sandbox_close_fd(&perr[1]);
	return rc;
}

/* The exit code of a finished run, 128+n for a signal, -1 unknown. */
static int
run_exit(const struct run *r)
{
	if (r->status < 0)
		return -1;
	if (WIFEXITED(r->status))
		return WEXITSTATUS(r->status);
	if (WIFSIGNALED(r->status))
		return 128 + WTERMSIG(r->status);
	return -1;
}

/* The last non-empty line of ssh's stderr, for messages. */
static void
last_line(const char *s, char *buf, size_t n)
{
	const char	*end = s + strlen(s), *b;

	while (end > s && (end[-1] == '\n' || end[-1] == '\r' ||
	    end[-1] == ' '))
		end--;
	for (b = end; b > s && b[-1] != '\n'; b--)
		;
	snprintf(buf, n, "%.*s", (int)(end - b), b);
}

/* ====== The ssh command line ====== */

struct argv {
	char	*v[64];
	char	 store[64][1200];
	int	 n;
	int	 full;
};

static void
av_add(struct argv *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
av_add(struct argv *a, const char *fmt, ...)
{
	va_list ap;
	int	n;

	if (a->n >= 62) {
		a->full = 1;
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(a->store[a->n], sizeof(a->store[a->n]), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(a->store[a->n]))
		a->full = 1;
	a->v[a->n] = a->store[a->n];
	a->v[++a->n] = NULL;
}

/* The options every ssh we run shares; auth: this one logs in. */
static void
av_common(struct argv *a, const char *ssh, const struct ssh_opts *o,
    const char *priv, const char *cpath)
{
	a->n = 0;
	a->full = 0;
	av_add(a, "%s", ssh);
	av_add(a, "-F");
	av_add(a, "none");	/* no ~/.ssh/config, no /etc/ssh/ssh_config */
	av_add(a, "-T");
	av_add(a, "-x");
	av_add(a, "-a");
	av_add(a, "-p");
	av_add(a, "%d", o->port);
	av_add(a, "-l");
	av_add(a, "%s", o->user);
	av_add(a, "-oStrictHostKeyChecking=yes");
	av_add(a, "-oUserKnownHostsFile=%s/kh-%s", priv, o->hash);
	av_add(a, "-oGlobalKnownHostsFile=none");
	av_add(a, "-oHostKeyAlias=flowcgi-sandbox");
	av_add(a, "-oCheckHostIP=no");
	av_add(a, "-oUpdateHostKeys=no");
	av_add(a, "-oConnectTimeout=%d", SSH_CONNECT_TIMEOUT);
	av_add(a, "-oServerAliveInterval=15");
	av_add(a, "-oServerAliveCountMax=3");
	av_add(a, "-oLogLevel=ERROR");
	av_add(a, "-oIdentityAgent=none");
	av_add(a, "-oClearAllForwardings=yes");
	av_add(a, "-oPermitLocalCommand=no");
	av_add(a, "-oControlPath=%s", cpath);
}

/* After av_common: ride the master only, never log in ourselves. */
static void
av_client(struct argv *a)
{
	av_add(a, "-oControlMaster=no");
	av_add(a, "-oBatchMode=yes");
	av_add(a, "-oPreferredAuthentications=none");
	av_add(a, "-oPubkeyAuthentication=no");
	av_add(a, "-oPasswordAuthentication=no");
	av_add(a, "-oKbdInteractiveAuthentication=no");
	av_add(a, "-oIdentitiesOnly=yes");
}

/* ====== The master connection ====== */

/* 1 when a master listens on path. */
static int
master_alive(const char *path)
{
	struct sockaddr_un	sun;
	int			fd, ok = 0;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		return 0;
	memcpy(sun.sun_path, path, strlen(path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return 0;
	ok = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0;
	close(fd);
	return ok;
}

/* The pinned keys as a known_hosts file for HostKeyAlias flowcgi-sandbox. */
static int
write_known_hosts(const struct ssh_opts *o, const char *priv, char *err)
{
	struct dbuf	 b = { 0 };
	const char		*p, *e;
	char			 path[PATH_MAX], tmp[PATH_MAX];
	int			 rc = 0;

	for (p = o->host_keys; *p != '\0'; p = *e ? e + 1 : e) {
		e = strchr(p, '\n');
		if (e == NULL)
			e = p + strlen(p);
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		if (e - p < 8 || *p == '#')
			continue;
		dbuf_addstr(&b, "flowcgi-sandbox ");
		dbuf_add(&b, p, (size_t)(e - p));
		dbuf_addstr(&b, "\n");
	}
	if (b.err == DBUF_ENOMEM || b.p == NULL) {
		rc = b.err == DBUF_ENOMEM ? sandbox_fail(err, ENGINE_ENOMEM,
		    "ssh: out of memory") : sandbox_fail(err, ENGINE_EINVAL,
		    "ssh: ssh_host_key holds no key");
		goto out;
	}
	snprintf(path, sizeof(path), "%.200s/kh-%s", priv, o->hash);
	snprintf(tmp, sizeof(tmp), "%.200s/kh-%s.%d", priv, o->hash, (int)getpid());
	if (write_private(tmp, b.p, 0600) != 0 || rename(tmp, path) != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "ssh: known_hosts '%.100s': %s",
		    path, strerror(errno));
		(void)unlink(tmp);
		goto out;
	}
out:
	free(b.p);
	return rc;
}

/* Turns ssh's complaint into a message for the admin. */
static void
login_error(const struct ssh_opts *o, const struct run *r, char *err)
{
	char line[200];

	last_line(r->err, line, sizeof(line));
	if (strstr(r->err, "Host key verification failed") != NULL ||
	    strstr(r->err, "REMOTE HOST IDENTIFICATION HAS CHANGED") != NULL)
		sandbox_fail(err, SANDBOX_EFAIL, "ssh %s@%s:%d: host key verification "
		    "failed: the server's key is not the pinned ssh_host_key "
		    "(if the server's key changed on purpose, clear "
		    "ssh_host_key and test the connection again)", o->user,
		    o->host, o->port);
	else if (strstr(r->err, "Permission denied") != NULL)
		sandbox_fail(err, SANDBOX_EFAIL, "ssh %s@%s:%d: authentication failed "
		    "(wrong ssh_username or ssh_password/key): %.80s", o->user,
		    o->host, o->port, line);
	else if (r->killed)
		sandbox_fail(err, SANDBOX_EFAIL, "ssh %s@%s:%d: no answer within %d s",
		    o->user, o->host, o->port, 2 * SSH_CONNECT_TIMEOUT);
	else
		sandbox_fail(err, SANDBOX_EFAIL, "ssh %s@%s:%d: %.150s", o->user,
		    o->host, o->port, line[0] ? line : "cannot connect");
}

/*
 * Makes sure the master for o runs: logs in once (under a lock, with the
 * secret in 0600 files removed right after). Returns 0 or SANDBOX_EFAIL
 * with ssh's reason.
 */
static int
master_ensure(const char *ssh, const struct ssh_opts *o, const char *priv,
    const char *cpath, char *err)
{
	struct argv		*a = NULL;
	struct run		 r;
	char			 lock[PATH_MAX], sec[PATH_MAX], ap[PATH_MAX];
	char			 env_ap[PATH_MAX + 16], env_home[PATH_MAX + 8];
	char			*envp[8];
	struct dbuf	 script = { 0 };
	int			 rc = 0, lfd = -1, wrote = 0;

	memset(&r, 0, sizeof(r));
	if (master_alive(cpath))
		goto out;
	snprintf(lock, sizeof(lock), "%.200s/lock-%s", priv, o->hash);
	if ((lfd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	    0600)) < 0 || flock(lfd, LOCK_EX) != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "ssh: lock '%.100s': %s", lock,
		    strerror(errno));
		goto out;
	}
	if (master_alive(cpath))
		goto out;
	(void)unlink(cpath);	/* a stale socket */
	if ((rc = write_known_hosts(o, priv, err)) != 0)
		goto out;
	if ((a = calloc(1, sizeof(*a))) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	snprintf(sec, sizeof(sec), "%.200s/%s-%s-%d", priv, o->is_key ? "id" : "pw",
	    o->hash, (int)getpid());
	snprintf(ap, sizeof(ap), "%.200s/ap-%s-%d", priv, o->hash, (int)getpid());
	av_common(a, ssh, o, priv, cpath);
	av_add(a, "-oControlMaster=auto");
	av_add(a, "-oControlPersist=%d", SSH_PERSIST);
	av_add(a, "-oIdentitiesOnly=yes");
	envp[0] = "PATH=/usr/bin:/bin";
	snprintf(env_home, sizeof(env_home), "HOME=%s", priv);
	envp[1] = env_home;
	envp[2] = "LC_ALL=C";
	envp[3] = NULL;
	if (o->is_key) {
		struct dbuf key = { 0 };

		/* OpenSSH wants the last line ended. */
		dbuf_addstr(&key, o->secret);
		if (key.len > 0 && key.p[key.len - 1] != '\n')
			dbuf_addstr(&key, "\n");
		if (key.err == DBUF_ENOMEM ||
		    write_private(sec, key.p, 0600) != 0) {
			rc = sandbox_fail(err, SANDBOX_EFAIL, "ssh: key file: %s",
			    key.err == DBUF_ENOMEM ? "out of memory" :
			    strerror(errno));
			wipe_free(key.p);
			goto out;
		}
		wipe_free(key.p);
		wrote = 1;
		av_add(a, "-oIdentityFile=%s", sec);
		av_add(a, "-oBatchMode=yes");
		av_add(a, "-oPreferredAuthentications=publickey");
		av_add(a, "-oPasswordAuthentication=no");
		av_add(a, "-oKbdInteractiveAuthentication=no");
	} else {
		if (write_private(sec, o->secret, 0600) != 0) {
			rc = sandbox_fail(err, SANDBOX_EFAIL, "ssh: password file: %s",
			    strerror(errno));
			goto out;
		}
		wrote = 1;
		dbuf_addstr(&script, "#!/bin/sh\nexec cat ");
		sandbox_add_quoted(&script, sec);
		dbuf_addstr(&script, "\n");
		if (script.err == DBUF_ENOMEM ||
		    write_private(ap, script.p, 0700) != 0) {
			rc = sandbox_fail(err, SANDBOX_EFAIL, "ssh: askpass: %s",
			    script.err == DBUF_ENOMEM ? "out of memory" :
			    strerror(errno));
			goto out;
		}
		snprintf(env_ap, sizeof(env_ap), "SSH_ASKPASS=%s", ap);
		envp[3] = env_ap;
		envp[4] = "SSH_ASKPASS_REQUIRE=force";
		envp[5] = NULL;
		av_add(a, "-oBatchMode=no");
		av_add(a, "-oPubkeyAuthentication=no");
		av_add(a, "-oPreferredAuthentications=password,"
		    "keyboard-interactive");
		av_add(a, "-oNumberOfPasswordPrompts=1");
	}
	av_add(a, "--");
	av_add(a, "%s", o->host);
	av_add(a, "true");
	if (a->full) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "ssh: option too long");
		goto out;
	}
	r.argv = a->v;
	r.envp = envp;
	r.max_out = r.max_err = 65536;
	r.deadline = sandbox_now_us() + 2 * SSH_CONNECT_TIMEOUT * 1000000LL;
	if ((rc = run_ssh(&r, err)) != 0)
		goto out;
	if (run_exit(&r) != 0 || !master_alive(cpath)) {
		login_error(o, &r, err);
		rc = SANDBOX_EFAIL;
		goto out;
	}
out:
	if (wrote)
		(void)unlink(sec);
	(void)unlink(ap);
	free(script.p);
	run_release(&r);
	free(a);
	if (lfd >= 0)
		close(lfd);	/* drops the lock */
	return rc;
}

/* ====== Remote commands ====== */

/* The deadline of a file operation moving up to bytes: SSH_OP_TIMEOUT_MS,
 * plus the time bytes take at SSH_OP_US_PER_BYTE. */
static int64_t
op_deadline(int64_t bytes)
{
	if (bytes > ((int64_t)1 << 40))	/* "no limit" callers */
		bytes = (int64_t)1 << 40;
	return sandbox_now_us() + SSH_OP_TIMEOUT_MS * 1000LL +
	    bytes * SSH_OP_US_PER_BYTE;
}

/*
 * Runs the shell script on the remote host over the master (started if
 * needed): `sh -c script`. Fills r (caller releases). Returns 0 when ssh
 * ran (r->status says how it ended), ENGINE_ENOMEM when building script
 * ran out of memory, else an error.
 */
static int
remote(struct ssh_sb *s, const struct dbuf *script, const void *in,
    size_t in_len, int64_t max_out, int64_t deadline, char *err,
    struct run *r)
{
	struct argv		*a = NULL;
	struct dbuf	 cmd = { 0 };
	char			 env_home[PATH_MAX + 8];
	char			*envp[4];
	int			 rc;

	memset(r, 0, sizeof(*r));
	if (script->err == DBUF_ENOMEM) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = master_ensure(s->ssh, &s->o, s->priv, s->cpath, err)) != 0)
		goto out;
	if ((a = calloc(1, sizeof(*a))) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	av_common(a, s->ssh, &s->o, s->priv, s->cpath);
	av_client(a);
	av_add(a, "--");
	av_add(a, "%s", s->o.host);
	dbuf_addstr(&cmd, "sh -c ");
	sandbox_add_quoted(&cmd, script->p);
	if (cmd.err == DBUF_ENOMEM || a->full) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	/* The command is one argument: ssh sends it as it is. */
	a->v[a->n] = cmd.p;
	a->v[a->n + 1] = NULL;
	envp[0] = "PATH=/usr/bin:/bin";
	snprintf(env_home, sizeof(env_home), "HOME=%s", s->priv);
	envp[1] = env_home;
	envp[2] = "LC_ALL=C";
	envp[3] = NULL;
	r->argv = a->v;
	r->envp = envp;
	r->in = in;
	r->in_len = in_len;
	r->max_out = max_out;
	r->max_err = max_out < 65536 ? 65536 : max_out;
	r->deadline = deadline;
	rc = run_ssh(r, err);
out:
	free(cmd.p);
	free(a);
	return rc;
}

/* ssh's own failure (255 and no answer) as an error message. */
static int
link_error(struct ssh_sb *s, const struct run *r, const char *what, char *err)
{
	char line[160];

	last_line(r->err, line, sizeof(line));
	if (r->killed)
		return sandbox_fail(err, SANDBOX_EFAIL, "ssh %s: %s: no answer in time",
		    s->o.host, what);
	return sandbox_fail(err, SANDBOX_EFAIL, "ssh %s: %s: %.150s", s->o.host, what,
	    line[0] ? line : "connection lost");
}

/* ====== Create and destroy ====== */

static int	ssh_destroy(struct sandbox *sb, char *err);

static int
ssh_create(const struct sandbox_config *cfg, char *err, struct sandbox **out)
{
	struct ssh_sb		*s = NULL;
	struct dbuf	 sc = { 0 };
	struct run		 r;
	int			 rc, x;

	memset(&r, 0, sizeof(r));
	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	s->cfg = *cfg;
	s->cfg.options = NULL;
	s->base.network = 1;	/* the remote host's network */
	s->destroyed = 1;	/* until the workspace exists */
	engine_uuid(s->base.id);
	if ((rc = opts_parse(cfg->options, 1, err, &s->o)) != 0)
		goto out;
	if (sandbox_find_program("ssh", s->ssh, sizeof(s->ssh)) != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "ssh sandbox: ssh not found in "
		    "PATH (install the Debian package openssh-client)");
		goto out;
	}
	if ((rc = priv_dir(cfg, err, s->priv, sizeof(s->priv))) != 0)
		goto out;
	snprintf(s->cpath, sizeof(s->cpath), "%.200s/cm-%s", s->priv, s->o.hash);
	snprintf(s->ws, sizeof(s->ws), "%s/%s", s->o.base, s->base.id);
	snprintf(s->pids, sizeof(s->pids), "%s/.%s.pids", s->o.base,
	    s->base.id);
	dbuf_addstr(&sc, "umask 077; mkdir -p -- ");
	sandbox_add_quoted(&sc, s->o.base);
	dbuf_addstr(&sc, " && mkdir -- ");
	sandbox_add_quoted(&sc, s->ws);
	dbuf_addstr(&sc, " ");
	sandbox_add_quoted(&sc, s->pids);
	dbuf_addstr(&sc, " && chmod 755 ");
	sandbox_add_quoted(&sc, s->ws);
	if ((rc = remote(s, &sc, NULL, 0, 4096, op_deadline(0), err, &r)) != 0)
		goto out;
	if ((x = run_exit(&r)) != 0) {
		char line[160];

		if (x == 255) {
			rc = link_error(s, &r, "create", err);
			goto out;
		}
		last_line(r.err, line, sizeof(line));
		rc = sandbox_fail(err, SANDBOX_EFAIL, "ssh sandbox: cannot make the "
		    "workspace under base_working_path '%.100s': %.100s",
		    s->o.base, line);
		goto out;
	}
	s->destroyed = 0;
	*out = &s->base;
	s = NULL;
out:
	run_release(&r);
	free(sc.p);
	if (s != NULL) {
		opts_release(&s->o);
		free(s);
	}
	return rc;
}

/* Kills every process group in the pid folder, then removes both. */
static int
ssh_destroy(struct sandbox *sb, char *err)
{
	struct ssh_sb		*s = (struct ssh_sb *)sb;
	struct dbuf	 sc = { 0 };
	struct run		 r;
	int			 rc = 0;

	memset(&r, 0, sizeof(r));
	if (s->destroyed)
		goto out;
	dbuf_addstr(&sc, "P=");
	sandbox_add_quoted(&sc, s->pids);
	dbuf_addstr(&sc, "; for f in \"$P\"/*; do [ -f \"$f\" ] && "
	    "kill -9 -$(cat \"$f\") 2>/dev/null; done; rm -rf -- \"$P\" ");
	sandbox_add_quoted(&sc, s->ws);
	if ((rc = remote(s, &sc, NULL, 0, 4096, op_deadline(0), err, &r)) != 0)
		goto out;
	if (run_exit(&r) != 0) {
		rc = run_exit(&r) == 255 ? link_error(s, &r, "destroy", err) :
		    sandbox_fail(err, SANDBOX_EFAIL, "ssh sandbox %s: the workspace "
		    "could not be removed", sb->id);
		goto out;
	}
	s->destroyed = 1;
out:
	run_release(&r);
	free(sc.p);
	return rc;
}

static void
ssh_free(struct sandbox *sb)
{
	struct ssh_sb	*s = (struct ssh_sb *)sb;
	char		 err[ENGINE_ERRMAX];

	if (ssh_destroy(sb, err) != 0)
		log_warn("sandbox: %s", err);
	opts_release(&s->o);
	free(s);
}

/* ====== Exec ====== */

/*
 * Finds and strips the wrapper's trailer from the end of stderr (what is
 * stored and err_total); returns its exit code, or -1 without one.
 */
static int
trailer_take(struct run *r, int *nocwd)
{
	const char	*t = r->tail, *p;
	size_t		 n = r->tail_len, i, tlen;
	long		 code = -1;
	char		*end;

	*nocwd = 0;
	if (n < 4 || t[n - 1] != '\n' || t[n - 2] != '\036')
		return -1;
	for (i = n - 2; i > 0; i--)
		if (t[i - 1] == '\036')
			break;
	if (i == 0)
		return -1;
	p = t + i;
	if (strncmp(p, "FLOWCGI-NOCWD\036", 14) == 0) {
		*nocwd = 1;
		code = 1;
	} else if (strncmp(p, "FLOWCGI-EXIT ", 13) == 0) {
		code = strtol(p + 13, &end, 10);
		if (end == p + 13 || *end != '\036' || code < 0 || code > 255)
			return -1;
	} else
		return -1;
	tlen = n - (i - 1);
	r->err_total -= (int64_t)tlen;
	if ((int64_t)r->err_len > r->err_total) {
		r->err_len = (size_t)r->err_total;
		r->err[r->err_len] = '\0';
	}
	return (int)code;
}

/* Kills the process group a lost command left, by its token. */
static void
kill_token(struct ssh_sb *s, const char *token)
{
	struct dbuf	sc = { 0 };
	struct run		r;
	char			err[ENGINE_ERRMAX];

	dbuf_addstr(&sc, "f=");
	sandbox_add_quoted(&sc, s->pids);
	dbuf_addf(&sc, "/%s; [ -f \"$f\" ] && kill -9 -$(cat \"$f\") "
	    "2>/dev/null; rm -f \"$f\"", token);
	if (remote(s, &sc, NULL, 0, 4096, op_deadline(0), err, &r) == 0)
		run_release(&r);
	free(sc.p);
}

static int
ssh_exec(struct sandbox *sb, const struct sandbox_exec_req *req, char *err,
    struct sandbox_exec_result *res)
{
	struct ssh_sb		*s = (struct ssh_sb *)sb;
	struct dbuf	 sc = { 0 };
	struct run		 r;
	char			 token[32];
	int64_t			 t0 = sandbox_now_us(), limit_us, max;
	int			 rc = 0, x, nocwd = 0, started = 0;
	size_t			 k;

	memset(&r, 0, sizeof(r));
	if (s->destroyed) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "sandbox %s: destroyed", sb->id);
		goto out;
	}
	if (req->cwd != NULL &&
	    (rc = sandbox_path_check(req->cwd, 1, err)) != 0)
		goto out;
	limit_us = req->timeout_ms > 0 ? (int64_t)req->timeout_ms * 1000 :
	    (int64_t)s->cfg.timeout * 1000000;
	if (limit_us <= 0)
		limit_us = 60000000;
	max = req->max_output > 0 ? req->max_output : s->cfg.max_output;
	snprintf(token, sizeof(token), "x%u-%d", ++s->seq, (int)getpid());

	/* The wrapper; see the top of the file. */
	dbuf_addstr(&sc, "exec 3<&0 4>&2 2>/dev/null; cd -- ");
	sb_qpath(&sc, s->ws, req->cwd);
	dbuf_addstr(&sc, " || { printf '\\036FLOWCGI-NOCWD\\036\\n' >&4; "
	    "exit 1; }"
	    "; timeout -s KILL ");
	dbuf_addf(&sc, "%" PRId64 ".%03d env", limit_us / 1000000,
	    (int)(limit_us / 1000 % 1000));
	for (k = 0; req->env != NULL && req->env[k] != NULL; k++) {
		dbuf_addstr(&sc, " ");
		sandbox_add_quoted(&sc, req->env[k]);
	}
	if (req->shell != NULL) {
		dbuf_addstr(&sc, " sh -c ");
		sandbox_add_quoted(&sc, req->shell);
	} else {
		dbuf_addstr(&sc, " sh -c 'exec \"$@\"' sh");
		for (k = 0; req->argv[k] != NULL; k++) {
			dbuf_addstr(&sc, " ");
			sandbox_add_quoted(&sc, req->argv[k]);
		}
	}
	dbuf_addstr(&sc, " <&3 3<&- 2>&4 4>&- & tp=$!; echo $tp > ");
	sb_qpath(&sc, s->pids, token);
	dbuf_addstr(&sc, "; wait $tp; rc=$?; kill -9 -$tp; rm -f ");
	sb_qpath(&sc, s->pids, token);
	dbuf_addstr(&sc, "; printf '\\036FLOWCGI-EXIT %d\\036\\n' $rc >&4");
	if ((rc = remote(s, &sc, req->stdin_data, req->stdin_len, max,
	    t0 + limit_us + SSH_BACKSTOP_US, err, &r)) != 0)
		goto out;
	started = 1;
	x = trailer_take(&r, &nocwd);
	/* remote() keeps at least 64 KiB of stderr for its own messages. */
	if ((int64_t)r.err_len > max) {
		r.err_len = (size_t)max;
		r.err[r.err_len] = '\0';
	}
	if (nocwd) {
		rc = sandbox_fail(err, ENGINE_ENOTFOUND, "exec: cwd '%.120s' is not a "
		    "folder in the workspace", req->cwd);
		goto out;
	}
	if (x < 0) {
		/* No trailer: the link broke or the backstop fired. */
		if (r.killed) {
			res->timed_out = 1;
			x = 128 + SIGKILL;
		} else {
			rc = link_error(s, &r, "exec", err);
			goto out;
		}
	}
	res->exit_code = x;
	if (x == 128 + SIGKILL && sandbox_now_us() - t0 >= limit_us - 20000)
		res->timed_out = 1;
	if (x > 128 && x < 128 + NSIG)
		res->signal = x - 128;
	res->out = r.out;
	res->out_len = r.out_len;
	res->out_truncated = r.out_trunc;
	res->err = r.err;
	res->err_len = r.err_len;
	res->err_truncated = r.err_total > max;
	r.out = r.err = NULL;
	res->elapsed_us = sandbox_now_us() - t0;
out:
	if (started && (rc != 0 || res->timed_out))
		kill_token(s, token);
	run_release(&r);
	free(sc.p);
	if (rc != 0)
		sandbox_exec_result_release(res);
	return rc;
}

/* ====== Files ====== */

static int
ssh_upload(struct sandbox *sb, const char *path, const void *data,
    size_t len, char *err)
{
	struct ssh_sb		*s = (struct ssh_sb *)sb;
	struct dbuf	 sc = { 0 };
	struct run		 r;
	int			 rc, x;
	char			 line[160];

	memset(&r, 0, sizeof(r));
	if (s->destroyed) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "sandbox %s: destroyed", sb->id);
		goto out;
	}
	if ((rc = sandbox_path_check(path, 0, err)) != 0)
		goto out;
	if ((int64_t)len > s->cfg.file_size && s->cfg.file_size > 0) {
		rc = sandbox_fail(err, ENGINE_ELIMIT, "upload '%.120s': %zu bytes is "
		    "above sandbox.file_size", path, len);
		goto out;
	}
	dbuf_addstr(&sc, "f=");
	sb_qpath(&sc, s->ws, path);
	dbuf_addstr(&sc, "; mkdir -p -- \"$(dirname -- \"$f\")\" && "
	    "{ [ ! -L \"$f\" ] || rm -f -- \"$f\"; } && cat > \"$f\"");
	if ((rc = remote(s, &sc, data, len, 4096,
	    op_deadline((int64_t)len), err, &r)) != 0)
		goto out;
	if ((x = run_exit(&r)) != 0) {
		if (x == 255)
			rc = link_error(s, &r, "upload", err);
		else {
			last_line(r.err, line, sizeof(line));
			rc = sandbox_fail(err, ENGINE_EINVAL, "upload '%.120s': %.100s",
			    path, line);
		}
		goto out;
	}
out:
	run_release(&r);
	free(sc.p);
	return rc;
}

static int
ssh_download(struct sandbox *sb, const char *path, int64_t max, char *err,
    char **data, size_t *len)
{
	struct ssh_sb		*s = (struct ssh_sb *)sb;
	struct dbuf	 sc = { 0 };
	struct run		 r;
	int			 rc, x;

	memset(&r, 0, sizeof(r));
	if (s->destroyed) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "sandbox %s: destroyed", sb->id);
		goto out;
	}
	if ((rc = sandbox_path_check(path, 0, err)) != 0)
		goto out;
	dbuf_addstr(&sc, "f=");
	sb_qpath(&sc, s->ws, path);
	dbuf_addf(&sc, "; [ -e \"$f\" ] || [ -L \"$f\" ] || exit %d; "
	    "{ [ -f \"$f\" ] && [ ! -L \"$f\" ]; } || exit %d; "
	    "[ \"$(stat -c %%s -- \"$f\")\" -le %" PRId64 " ] || exit %d; "
	    "exec cat -- \"$f\"", RX_NOTFOUND, RX_NOTFILE, max, RX_TOOBIG);
	if ((rc = remote(s, &sc, NULL, 0, max,
	    op_deadline((int64_t)max), err, &r)) != 0)
		goto out;
	x = run_exit(&r);
	if (x == RX_NOTFOUND)
		rc = sandbox_fail(err, ENGINE_ENOTFOUND, "download '%.120s': no such "
		    "file", path);
	else if (x == RX_NOTFILE)
		rc = sandbox_fail(err, ENGINE_EINVAL, "download '%.120s': not a "
		    "regular file", path);
	else if (x == RX_TOOBIG || (x == 0 && r.out_trunc))
		rc = sandbox_fail(err, ENGINE_ELIMIT, "download '%.120s': above the "
		    "limit of %" PRId64 " bytes", path, max);
	else if (x != 0)
		rc = link_error(s, &r, "download", err);
	if (rc != 0)
		goto out;
	*data = r.out;
	*len = r.out_len;
	r.out = NULL;
out:
	run_release(&r);
	free(sc.p);
	return rc;
}

static int
ssh_list(struct sandbox *sb, const char *dir, size_t max, char *err,
    struct sandbox_file **files, size_t *n)
{
	struct ssh_sb		*s = (struct ssh_sb *)sb;
	struct sandbox_file	*v = NULL;
	struct dbuf	 sc = { 0 }, path = { 0 };
	struct run		 r;
	const char		*p, *end, *f[4];
	char			*e;
	size_t			 nv = 0, i;
	int			 rc, x;

	memset(&r, 0, sizeof(r));
	if (s->destroyed) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "sandbox %s: destroyed", sb->id);
		goto out;
	}
	if (dir == NULL || strcmp(dir, ".") == 0)
		dir = "";
	if ((rc = sandbox_path_check(dir, 1, err)) != 0)
		goto out;
	dbuf_addstr(&sc, "d=");
	sb_qpath(&sc, s->ws, dir);
	dbuf_addf(&sc, "; [ -d \"$d\" ] && [ ! -L \"$d\" ] || exit %d; "
	    "cd -- \"$d\" && find . -mindepth 1 \\( -type f -o -type d \\) "
	    "-printf '%%y %%s %%T@ %%P\\0' | head -z -n %zu", RX_NOTFOUND,
	    max + 1);
	if ((rc = remote(s, &sc, NULL, 0, SSH_LIST_MAX_BYTES,
	    op_deadline(0), err, &r)) != 0)
		goto out;
	if ((x = run_exit(&r)) == RX_NOTFOUND) {
		rc = sandbox_fail(err, ENGINE_ENOTFOUND, "list '%.120s': no such "
		    "folder", dir);
		goto out;
	}
	if (x != 0 || r.out_trunc) {
		rc = r.out_trunc ? sandbox_fail(err, ENGINE_ELIMIT, "list: more than "
		    "%d bytes of names", SSH_LIST_MAX_BYTES) :
		    link_error(s, &r, "list", err);
		goto out;
	}
	if ((v = calloc(max ? max : 1, sizeof(*v))) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	for (p = r.out; p < r.out + r.out_len; p = end + 1) {
		end = memchr(p, '\0', (size_t)(r.out + r.out_len - p));
		if (end == NULL)
			break;
		/* "<type> <size> <mtime> <path>" */
		f[0] = p;
		for (i = 1; i < 4; i++) {
			f[i] = memchr(f[i - 1], ' ', (size_t)(end - f[i - 1]));
			if (f[i] == NULL)
				break;
			f[i]++;
		}
		if (i < 4 || f[3] >= end)
			continue;
		if (nv >= max) {
			rc = sandbox_fail(err, ENGINE_ELIMIT, "list: more than %zu "
			    "entries", max);
			goto out;
		}
		path.len = 0;
		if (dir[0] != '\0') {
			dbuf_addstr(&path, dir);
			dbuf_addstr(&path, "/");
		}
		dbuf_add(&path, f[3], (size_t)(end - f[3]));
		if (path.err == DBUF_ENOMEM ||
		    (v[nv].path = strdup(path.p)) == NULL) {
			rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
			goto out;
		}
		v[nv].is_dir = f[0][0] == 'd';
		v[nv].size = v[nv].is_dir ? 0 : strtoll(f[1], &e, 10);
		v[nv].mtime = strtoll(f[2], &e, 10);
		nv++;
	}
	*files = v;
	*n = nv;
	v = NULL;
out:
	sandbox_files_free(v, nv);
	run_release(&r);
	free(sc.p);
	free(path.p);
	return rc;
}

/* ====== Trees ====== */

/* A tar entry name that stays inside: relative, no "..", printable. */
static int
tar_name_ok(const char *name, char *err)
{
	char	buf[PATH_MAX];
	size_t	n;

	while (name[0] == '.' && name[1] == '/')
		name += 2;
	n = strlen(name);
	if (n == 0 || strcmp(name, ".") == 0)
		return 0;
	if (n >= sizeof(buf))
		return sandbox_fail(err, ENGINE_EINVAL, "tar: name too long");
	memcpy(buf, name, n + 1);
	while (n > 0 && buf[n - 1] == '/')
		buf[--n] = '\0';
	return sandbox_path_check(buf, 0, err);
}

/*
 * Reads a tar (from memory) and writes a clean pax tar of its regular
 * files and folders (names relative, "./" dropped, modes 0644/0755) into
 * *out; refuses unsafe names and other entry types. max caps the result.
 */
static int
tar_clean(const void *in, size_t in_len, int64_t max, int refuse_other,
    char *err, char **out, size_t *out_len)
{
	struct archive		*rd = NULL, *wr = NULL;
	struct archive_entry	*e, *ne = NULL;
	char			 buf[65536];
	const char		*name;
	la_ssize_t		 got;
	size_t			 cap;
	size_t			 used = 0;
	char			*mem = NULL;
	int			 rc = 0, r, type;

	*out = NULL;
	*out_len = 0;
	cap = (size_t)(max < 0 ? 0 : max) + 2048;
	if ((mem = malloc(cap)) == NULL || (rd = archive_read_new()) == NULL ||
	    (wr = archive_write_new()) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	archive_read_support_format_tar(rd);
	archive_read_support_format_gnutar(rd);
	archive_write_set_format_pax_restricted(wr);
	archive_write_set_bytes_in_last_block(wr, 1);
	if (archive_read_open_memory(rd, in, in_len) != ARCHIVE_OK ||
	    archive_write_open_memory(wr, mem, cap, &used) != ARCHIVE_OK) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "tar: %.150s",
		    archive_error_string(rd) ? archive_error_string(rd) :
		    "cannot open");
		goto out;
	}
	while ((r = archive_read_next_header(rd, &e)) == ARCHIVE_OK) {
		name = archive_entry_pathname(e);
		type = archive_entry_filetype(e);
		if (name == NULL || (rc = tar_name_ok(name, err)) != 0) {
			if (name == NULL)
				rc = sandbox_fail(err, ENGINE_EINVAL, "tar: an entry "
				    "without a name");
			goto out;
		}
		while (name[0] == '.' && name[1] == '/')
			name += 2;
		if (name[0] == '\0' || strcmp(name, ".") == 0)
			continue;
		if (type != AE_IFREG && type != AE_IFDIR) {
			if (refuse_other) {
				rc = sandbox_fail(err, ENGINE_EINVAL, "tar: '%.100s' is "
				    "neither a file nor a folder", name);
				goto out;
			}
			continue;
		}
		if ((ne = archive_entry_new()) == NULL) {
			rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
			goto out;
		}
		archive_entry_set_pathname(ne, name);
		archive_entry_set_filetype(ne, (unsigned)type);
		archive_entry_set_perm(ne, type == AE_IFDIR ? 0755 :
		    (archive_entry_perm(e) & 0111) ? 0755 : 0644);
		archive_entry_set_size(ne, type == AE_IFDIR ? 0 :
		    archive_entry_size(e));
		archive_entry_set_mtime(ne, archive_entry_mtime(e), 0);
		if ((int64_t)used + 1024 + (type == AE_IFDIR ? 0 :
		    archive_entry_size(e)) > max ||
		    archive_write_header(wr, ne) != ARCHIVE_OK) {
			rc = sandbox_fail(err, ENGINE_ELIMIT, "tar: above the limit of "
			    "%" PRId64 " bytes", max);
			goto out;
		}
		archive_entry_free(ne);
		ne = NULL;
		while (type == AE_IFREG && (got = archive_read_data(rd, buf,
		    sizeof(buf))) > 0)
			if (archive_write_data(wr, buf, (size_t)got) != got) {
				rc = sandbox_fail(err, ENGINE_ELIMIT, "tar: above the "
				    "limit of %" PRId64 " bytes", max);
				goto out;
			}
	}
	if (r != ARCHIVE_EOF) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "tar: %.150s",
		    archive_error_string(rd) ? archive_error_string(rd) :
		    "damaged");
		goto out;
	}
	if (archive_write_close(wr) != ARCHIVE_OK || (int64_t)used > max) {
		rc = sandbox_fail(err, ENGINE_ELIMIT, "tar: above the limit of %"
		    PRId64 " bytes", max);
		goto out;
	}
	*out = mem;
	*out_len = used;
	mem = NULL;
out:
	archive_entry_free(ne);
	if (rd != NULL)
		archive_read_free(rd);
	if (wr != NULL)
		archive_write_free(wr);
	free(mem);
	return rc;
}

/* The generic way: one upload per file, mkdir -p for folders. */
static int
tree_upload_each(struct sandbox *sb, const char *dir, const void *tar,
    size_t len, char *err)
{
	struct archive		*rd = NULL;
	struct archive_entry	*e;
	struct sandbox_exec_req	 req;
	struct sandbox_exec_result res;
	struct dbuf	 path = { 0 };
	char			*data = NULL;
	const char		*argv[5];
	la_ssize_t		 got;
	int64_t			 size;
	int			 rc = 0, r;

	memset(&res, 0, sizeof(res));
	if ((rd = archive_read_new()) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	archive_read_support_format_tar(rd);
	if (archive_read_open_memory(rd, tar, len) != ARCHIVE_OK) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "tar: cannot open");
		goto out;
	}
	while ((r = archive_read_next_header(rd, &e)) == ARCHIVE_OK) {
		path.len = 0;
		if (dir[0] != '\0' && strcmp(dir, ".") != 0) {
			dbuf_addstr(&path, dir);
			dbuf_addstr(&path, "/");
		}
		dbuf_addstr(&path, archive_entry_pathname(e));
		if (path.err == DBUF_ENOMEM) {
			rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
			goto out;
		}
		if (archive_entry_filetype(e) == AE_IFDIR) {
			while (path.len > 0 && path.p[path.len - 1] == '/')
				path.p[--path.len] = '\0';
			argv[0] = "mkdir";
			argv[1] = "-p";
			argv[2] = "--";
			argv[3] = path.p;
			argv[4] = NULL;
			memset(&req, 0, sizeof(req));
			req.argv = argv;
			if ((rc = sandbox_exec(sb, &req, err, &res)) != 0)
				goto out;
			r = res.exit_code;
			sandbox_exec_result_release(&res);
			if (r != 0) {
				rc = sandbox_fail(err, SANDBOX_EFAIL, "mkdir '%.120s' "
				    "failed", path.p);
				goto out;
			}
			continue;
		}
		size = archive_entry_size(e);
		if (size < 0 || size > ((int64_t)1 << 34) ||
		    (data = malloc((size_t)size + 1)) == NULL) {
			rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
			goto out;
		}
		got = size > 0 ? archive_read_data(rd, data, (size_t)size) : 0;
		if (got != size) {
			rc = sandbox_fail(err, ENGINE_EINVAL, "tar: short entry");
			goto out;
		}
		if ((rc = sandbox_upload(sb, path.p, data, (size_t)size, err))
		    != 0)
			goto out;
		free(data);
		data = NULL;
	}
out:
	if (rd != NULL)
		archive_read_free(rd);
	free(data);
	free(path.p);
	return rc;
}

/* The generic way: list, then one download per file. */
static int
tree_download_each(struct sandbox *sb, const char *dir, int64_t max,
    char *err, char **tar, size_t *len)
{
	struct sandbox_file	*files = NULL;
	struct archive		*wr = NULL;
	struct archive_entry	*e = NULL;
	char			*mem = NULL, *data = NULL;
	size_t			 n = 0, i, used = 0, dlen = 0, skip;
	int			 rc;

	if ((rc = sandbox_list(sb, dir, 100000, err, &files, &n)) != 0)
		goto out;
	skip = dir[0] != '\0' && strcmp(dir, ".") != 0 ? strlen(dir) + 1 : 0;
	if ((mem = malloc((size_t)max + 2048)) == NULL ||
	    (wr = archive_write_new()) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	archive_write_set_format_pax_restricted(wr);
	archive_write_set_bytes_in_last_block(wr, 1);
	archive_write_open_memory(wr, mem, (size_t)max + 2048, &used);
	for (i = 0; i < n; i++) {
		if (!files[i].is_dir && (rc = sandbox_download(sb,
		    files[i].path, max, err, &data, &dlen)) != 0)
			goto out;
		if ((e = archive_entry_new()) == NULL) {
			rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
			goto out;
		}
		archive_entry_set_pathname(e, files[i].path + skip);
		archive_entry_set_filetype(e, files[i].is_dir ? AE_IFDIR :
		    AE_IFREG);
		archive_entry_set_perm(e, files[i].is_dir ? 0755 : 0644);
		archive_entry_set_size(e, files[i].is_dir ? 0 :
		    (la_int64_t)dlen);
		archive_entry_set_mtime(e, files[i].mtime, 0);
		if ((int64_t)(used + dlen + 1024) > max ||
		    archive_write_header(wr, e) != ARCHIVE_OK ||
		    (dlen > 0 && archive_write_data(wr, data, dlen) !=
		    (la_ssize_t)dlen)) {
			rc = sandbox_fail(err, ENGINE_ELIMIT, "tar: above the limit of "
			    "%" PRId64 " bytes", max);
			goto out;
		}
		archive_entry_free(e);
		e = NULL;
		free(data);
		data = NULL;
		dlen = 0;
	}
	if (archive_write_close(wr) != ARCHIVE_OK || (int64_t)used > max) {
		rc = sandbox_fail(err, ENGINE_ELIMIT, "tar: above the limit of %" PRId64
		    " bytes", max);
		goto out;
	}
	*tar = mem;
	*len = used;
	mem = NULL;
out:
	archive_entry_free(e);
	if (wr != NULL)
		archive_write_free(wr);
	free(mem);
	free(data);
	sandbox_files_free(files, n);
	return rc;
}

int
sandbox_upload_tree(struct sandbox *sb, const char *dir, const void *tar,
    size_t len, char *err)
{
	struct ssh_sb		*s = (struct ssh_sb *)sb;
	struct dbuf	 sc = { 0 };
	struct run		 r;
	char			*clean = NULL, line[160];
	size_t			 clen = 0;
	int			 rc, x;

	memset(&r, 0, sizeof(r));
	err[0] = '\0';
	if (dir == NULL)
		dir = "";
	if ((rc = sandbox_path_check(dir, 1, err)) != 0)
		goto out;
	/* Checked whole before anything is written. */
	if ((rc = tar_clean(tar, len, (int64_t)len * 2 + 65536, 1, err,
	    &clean, &clen)) != 0)
		goto out;
	if (sb->provider != &sandbox_provider_ssh) {
		rc = tree_upload_each(sb, dir, clean, clen, err);
		goto out;
	}
	if (s->destroyed) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "sandbox %s: destroyed", sb->id);
		goto out;
	}
	dbuf_addstr(&sc, "d=");
	sb_qpath(&sc, s->ws, dir);
	dbuf_addstr(&sc, "; mkdir -p -- \"$d\" && exec tar -x -f - "
	    "-C \"$d\" --no-same-owner --no-same-permissions "
	    "--no-overwrite-dir");
	if ((rc = remote(s, &sc, clean, clen, 4096,
	    op_deadline((int64_t)clen), err, &r)) != 0)
		goto out;
	if ((x = run_exit(&r)) != 0) {
		last_line(r.err, line, sizeof(line));
		rc = x == 255 ? link_error(s, &r, "upload", err) :
		    sandbox_fail(err, ENGINE_EINVAL, "upload '%.100s': tar: %.100s",
		    dir, line);
		goto out;
	}
out:
	run_release(&r);
	free(sc.p);
	free(clean);
	return rc;
}

int
sandbox_download_tree(struct sandbox *sb, const char *dir, int64_t max,
    char *err, char **tar, size_t *len)
{
	struct ssh_sb		*s = (struct ssh_sb *)sb;
	struct dbuf	 sc = { 0 };
	struct run		 r;
	int			 rc, x;

	memset(&r, 0, sizeof(r));
	*tar = NULL;
	*len = 0;
	err[0] = '\0';
	if (dir == NULL)
		dir = "";
	if ((rc = sandbox_path_check(dir, 1, err)) != 0)
		goto out;
	if (sb->provider != &sandbox_provider_ssh) {
		rc = tree_download_each(sb, dir, max, err, tar, len);
		goto out;
	}
	if (s->destroyed) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "sandbox %s: destroyed", sb->id);
		goto out;
	}
	dbuf_addstr(&sc, "d=");
	sb_qpath(&sc, s->ws, dir);
	dbuf_addf(&sc, "; [ -d \"$d\" ] && [ ! -L \"$d\" ] || exit %d; "
	    "exec tar -c -f - -C \"$d\" .", RX_NOTFOUND);
	/* The remote tar is a little larger than the clean one. */
	if ((rc = remote(s, &sc, NULL, 0, max * 2 + 1048576,
	    op_deadline((int64_t)max), err, &r)) != 0)
		goto out;
	if ((x = run_exit(&r)) == RX_NOTFOUND) {
		rc = sandbox_fail(err, ENGINE_ENOTFOUND, "download '%.120s': no such "
		    "folder", dir);
		goto out;
	}
	if (x != 0 && x != 1) {	/* 1: files changed while read */
		rc = x == 255 ? link_error(s, &r, "download", err) :
		    sandbox_fail(err, SANDBOX_EFAIL, "download '%.120s': tar failed",
		    dir);
		goto out;
	}
	if (r.out_trunc) {
		rc = sandbox_fail(err, ENGINE_ELIMIT, "download '%.120s': above the "
		    "limit of %" PRId64 " bytes", dir, max);
		goto out;
	}
	rc = tar_clean(r.out, r.out_len, max, 0, err, tar, len);
out:
	run_release(&r);
	free(sc.p);
	return rc;
}

/* ====== Host keys ====== */

int
sandbox_ssh_scan(const json_t *options, char *err, char **keys)
{
	struct ssh_opts		 o;
	struct run		 r;
	struct dbuf	 b = { 0 };
	char			 kscan[PATH_MAX], port[16], *argv[10];
	char			*envp[] = {"PATH=/usr/bin:/bin", "LC_ALL=C",
				    NULL};
	const char		*p, *e, *k;
	int			 rc;

	memset(&r, 0, sizeof(r));
	memset(&o, 0, sizeof(o));
	*keys = NULL;
	if ((rc = opts_parse(options, 0, err, &o)) != 0)
		goto out;
	if (sandbox_find_program("ssh-keyscan", kscan, sizeof(kscan)) != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "ssh: ssh-keyscan not found in "
		    "PATH (install openssh-client)");
		goto out;
	}
	snprintf(port, sizeof(port), "%d", o.port);
	argv[0] = kscan;
	argv[1] = "-T";
	argv[2] = "10";
	argv[3] = "-p";
	argv[4] = port;
	argv[5] = "-t";
	argv[6] = "ed25519,ecdsa,rsa";
	argv[7] = "--";
	argv[8] = o.host;
	argv[9] = NULL;
	r.argv = argv;
	r.envp = envp;
	r.max_out = r.max_err = 65536;
	r.deadline = sandbox_now_us() + 30 * 1000000LL;
	if ((rc = run_ssh(&r, err)) != 0)
		goto out;
	/* "host type base64" lines; keep "type base64". */
	for (p = r.out; *p != '\0'; p = *e ? e + 1 : e) {
		e = strchr(p, '\n');
		if (e == NULL)
			e = p + strlen(p);
		if (*p == '#' || (k = memchr(p, ' ', (size_t)(e - p))) == NULL)
			continue;
		k++;
		if (e - k < 16 || (strncmp(k, "ssh-", 4) != 0 &&
		    strncmp(k, "ecdsa-", 6) != 0))
			continue;
		dbuf_add(&b, k, (size_t)(e - k));
		dbuf_addstr(&b, "\n");
	}
	if (b.err == DBUF_ENOMEM) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	if (b.p == NULL) {
		char line[160];

		last_line(r.err, line, sizeof(line));
		rc = sandbox_fail(err, SANDBOX_EFAIL, "ssh %s:%d: no host key (is sshd "
		    "listening there?)%s%.120s", o.host, o.port, line[0] ?
		    ": " : "", line);
		goto out;
	}
	*keys = b.p;
	b.p = NULL;
out:
	free(b.p);
	run_release(&r);
	opts_release(&o);
	return rc;
}

/*
 * The provider's check: without a pinned host key (ssh_host_key empty),
 * scans the server's keys and pins them into o, trusting them on first
 * use because the admin asked (save or Test connection).
 */
static int
ssh_check(json_t *o, char *err, char **info)
{
	const char	*pin;
	char		*keys = NULL;
	int		 rc = 0;

	pin = json_string_value(json_object_get(o, "ssh_host_key"));
	if (pin != NULL && pin[0] != '\0')
		goto out;
	if ((rc = sandbox_ssh_scan(o, err, &keys)) != 0)
		goto out;
	if (json_object_set_new(o, "ssh_host_key", json_string(keys)) != 0)
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
out:
	free(keys);
	return rc;
}

/* What the bash tool's description says about an ssh sandbox. */
static char *
ssh_note(const struct sandbox_config *cfg)
{
	return strdup("Commands run on a remote host over ssh: its network "
	    "and its installed tools are the host's.");
}

/* The config the console asks for and stores (settings.c): cfg->options. */
static const struct sandbox_field ssh_fields[] = {
	{ "ssh_host", "text-input", 1, "agentbox", "SSH host" },
	{ "ssh_port", "text-input", 0, "22", "SSH port" },
	{ "ssh_username", "text-input", 1, NULL, "Username" },
	{ "ssh_password", "secret-input", 1, NULL,
	    "Password or private key (PEM)" },
	{ "base_working_path", "text-input", 0, "/workspace/sandboxes",
	    "Base working path" },
	{ "ssh_host_key", "text-input", 0, NULL,
	    "Pinned host key (filled by Test connection)" },
};

const struct sandbox_provider sandbox_provider_ssh = {
	.name = "ssh",
	.fields = ssh_fields,
	.nfields = sizeof(ssh_fields) / sizeof(*ssh_fields),
	.create = ssh_create,
	.exec = ssh_exec,
	.upload = ssh_upload,
	.download = ssh_download,
	.list = ssh_list,
	.destroy = ssh_destroy,
	.free = ssh_free,
	.check = ssh_check,
	.note = ssh_note,
};
