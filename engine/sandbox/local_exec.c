/*
 * local_exec.c — commands of the local provider: bwrap's command line (the
 * namespaces, mounts, seccomp filter, user and rlimits that the top of
 * local.c describes), starting it, feeding and draining it, and killing
 * and reaping it at its end, its time limit or a stop; and the same for
 * the code runners, which start a command and wait for it later.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/sandbox/local.h"

/* Fixed descriptors in bwrap's process. */
#define FD_WS		3
#define FD_TMP		4
#define FD_SHM		5
#define FD_STAT		6
#define FD_SECCOMP	7
#define FD_PASSWD	8
#define FD_GROUP	9
#define FD_HOSTS	10
#define FD_CTL		SANDBOX_CTL_FD	/* the code pool's, else none */
#define FD_NET		12	/* with network: the proxy's folder */
#define FD_RO		13	/* req->readonly's folder, else none */
#define FD_EMPTY	14	/* an empty file, once per hidden /proc file
				 * (bwrap closes each after its bind) */
#define FD_COUNT	(FD_EMPTY + PROC_HIDDEN_MAX)
/* child_exec lifts them to 32 and above before putting them in place. */
_Static_assert(FD_COUNT <= 32, "too many descriptors for child_exec");

/* Where the proxy's socket and the forwarder are inside. */
#define NET_DIR		"/run/flowcgi"
#define NET_FWD		NET_DIR "/" SANDBOX_NETFWD_NAME

#define NET_ENV_MAX	32	/* variables of sandbox_net_env */

/*
 * The /etc files programs need; nothing else of /etc is visible. Each is a
 * mount costing about 0.1 ms per exec, so the list is short: the dynamic
 * linker's cache, time zone, alternatives (symlinks into /usr), CA
 * certificates, name service switch, services, protocols, os-release.
 * passwd and group are written for the sandbox (its own user, root and
 * nobody: the host's account names are none of its business), and so is
 * hosts.
 */
static const char *const etc_files[] = {
	"/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives",
	"/etc/ssl/certs", "/etc/ssl/openssl.cnf", "/etc/nsswitch.conf",
	"/etc/services", "/etc/protocols", "/etc/os-release",
	"/etc/matplotlibrc",	/* Debian's matplotlib reads it at import */
};

/* Top-level names that merged-/usr systems make symlinks into /usr. */
static const char *const usr_links[] = {
	"bin", "sbin", "lib", "lib32", "lib64", "libx32",
};

/* A memfd holding data[0..len), positioned at its start, for bwrap
 * --seccomp. Returns 0 or SANDBOX_EFAIL; *fd is new (-1 on failure). */
static int
data_fd(const char *name, const void *data, size_t len, char *err, int *fd)
{
	const char	*p = data;
	size_t		 off = 0;
	ssize_t		 n;
	int		 rc = 0;

	if ((*fd = memfd_create(name, MFD_CLOEXEC)) < 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "exec: memfd_create: %s",
		    strerror(errno));
		goto out;
	}
	while (off < len) {
		n = write(*fd, p + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = sandbox_fail(err, SANDBOX_EFAIL, "exec: %s: %s", name,
			    n < 0 ? strerror(errno) : "short write");
			goto out;
		}
		off += (size_t)n;
	}
	if (lseek(*fd, 0, SEEK_SET) != 0)
		rc = sandbox_fail(err, SANDBOX_EFAIL, "exec: %s: %s", name,
		    strerror(errno));
out:
	if (rc != 0)
		sandbox_close_fd(fd);
	return rc;
}

/* ====== Exec ====== */

/* A growing list of strings for argv and envp; never fails mid-way: a
 * full list is noticed once at the end. */
struct strv {
	const char	**v;
	size_t		  n, cap;
	int		  full;
};

static void
strv_add(struct strv *s, const char *str)
{
	if (s->n + 2 > s->cap) {
		s->full = 1;
		return;
	}
	s->v[s->n++] = str;
	s->v[s->n] = NULL;
}

/* 1 when env list v already has name (up to '='). */
static int
env_has(const struct strv *s, const char *kv)
{
	size_t i, n = strcspn(kv, "=");

	for (i = 0; i < s->n; i++)
		if (strncmp(s->v[i], kv, n) == 0 && s->v[i][n] == '=')
			return 1;
	return 0;
}

/* A pipe from bwrap and what came through it (out of memory: kept so
 * far, truncated). */
struct stream {
	int			fd;
	struct dbuf	b;
};

/* Reads what fd has; returns 0 on data, 1 on EOF or error, -1 when there
 * is nothing to read now. */
static int
stream_read(struct stream *s)
{
	char	tmp[65536];
	ssize_t	n;

	while ((n = read(s->fd, tmp, sizeof(tmp))) < 0 && errno == EINTR)
		;
	if (n < 0 && errno == EAGAIN)
		return -1;
	if (n <= 0)
		return 1;
	dbuf_add(&s->b, tmp, (size_t)n);
	return 0;
}

/* Reads everything s has now (closing it at its end). */
static void
stream_drain(struct stream *s)
{
	int rc;

	while (s->fd >= 0 && (rc = stream_read(s)) >= 0)
		if (rc == 1)
			sandbox_close_fd(&s->fd);
}

/*
 * The child between fork and exec: only async-signal-safe calls. Moves the
 * descriptors src[0..FD_COUNT) into place (a slot whose src is -1 stays
 * closed), drops everything else, resets signals, sets the limits and runs
 * bwrap.
 */
static void
child_exec(const char *path, char *const *argv, char *const *envp,
    const int *src, const struct rlimit *lim, const int *res, size_t nlim)
{
	struct sigaction	sa;
	sigset_t		all;
	int			hi[FD_COUNT], i;

	(void)setsid();
	for (i = 0; i < FD_COUNT; i++) {
		hi[i] = -1;
		if (src[i] >= 0 && (hi[i] = fcntl(src[i], F_DUPFD, 32)) < 0)
			_exit(126);
	}
	for (i = 0; i < FD_COUNT; i++)
		if (hi[i] >= 0 ? dup2(hi[i], i) < 0 : close(i) != 0 &&
		    errno != EBADF)
			_exit(126);
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)FD_COUNT, ~0U, 0U) != 0)
#endif
		for (i = FD_COUNT; i < 4096; i++)
			(void)close(i);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (i = 1; i < NSIG; i++)
		(void)sigaction(i, &sa, NULL);
	sigemptyset(&all);
	(void)sigprocmask(SIG_SETMASK, &all, NULL);
	for (i = 0; i < (int)nlim; i++)
		if (setrlimit(res[i], &lim[i]) != 0)
			_exit(126);
	execve(path, argv, envp);
	_exit(127);
}

/* Writes what it can of stdin; returns 1 when done (all written, or the
 * reader went away). SIGPIPE is blocked in this thread meanwhile. */
static int
stdin_write(int fd, const char *p, size_t len, size_t *off)
{
	ssize_t n;

	n = write(fd, p + *off, len - *off > 65536 ? 65536 : len - *off);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : 1;
	*off += (size_t)n;
	return *off >= len;
}

/*
 * A command started by local_spawn and not yet waited for: bwrap's pid, a
 * pidfd on it (-1 without pidfd_open) and our ends of its pipes, all
 * close-on-exec and (but stdin) non-blocking.
 */
struct sandbox_proc {
	struct local	*l;
	pid_t		 pid;
	pid_t		 init;		/* the sandbox's pid 1, as we see it
					 * (0: not known) */
	int		 pidfd;
	int		 in;		/* its standard input */
	int		 out;		/* its standard output */
	int		 err;		/* its standard error */
	int		 st;		/* bwrap's --json-status-fd */
};

#define PROC_INIT	{NULL, -1, 0, -1, -1, -1, -1, -1}

/* How long bwrap may take to report its pid 1 killed (ms). */
#define INIT_GRACE_MS	5000

/* The number after "name": in bwrap's status lines, or 0. */
static long
status_number(const char *status, const char *name)
{
	const char *s;

	if (status == NULL || (s = strstr(status, name)) == NULL ||
	    (s = strchr(s, ':')) == NULL)
		return 0;
	return strtol(s + 1, NULL, 10);
}

/* The parent of process pid, from /proc, or -1. */
static pid_t
parent_of(pid_t pid)
{
	char	 path[64], buf[512], *s;
	ssize_t	 n;
	int	 fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "pid (comm) state ppid ...", comm may hold anything */
	if ((s = strrchr(buf, ')')) == NULL || strlen(s) < 5)
		return -1;
	return (pid_t)strtol(s + 4, NULL, 10);
}

/*
 * Kills the sandbox's pid 1 (bwrap's init, whose end takes every other
 * process of the pid namespace with it) and waits for bwrap to report it:
 * the kernel has emptied the namespace before, so nothing of the sandbox
 * runs once bwrap ended. Killing bwrap instead leaves its pid 1 and the
 * rest to die on their own a moment later, maybe after the workspace is
 * gone. Returns 1 when bwrap ended so, 0 when the caller must kill it.
 */
static int
proc_kill_init(struct sandbox_proc *p)
{
	int ok = 0;
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
	struct pollfd	pfd;
	int		fd;

	if (p->init <= 1 || p->pidfd < 0 ||
	    (fd = (int)syscall(SYS_pidfd_open, p->init, 0)) < 0)
		return 0;
	/* Still bwrap's child, so the pidfd is on the sandbox's pid 1 and
	 * not on a process that got its number since. */
	if (parent_of(p->init) == p->pid &&
	    syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0) == 0) {
		pfd.fd = p->pidfd;
		pfd.events = POLLIN;
		while ((ok = poll(&pfd, 1, INIT_GRACE_MS)) < 0 &&
		    errno == EINTR)
			;
		ok = ok == 1;
	}
	close(fd);
#else
	(void)p;
#endif
	return ok;
}

/*
 * Kills what is left of p's command and reaps bwrap: its pid 1 when known
 * (proc_kill_init), else bwrap's process group (the rest of the sandbox
 * dies with bwrap's pid 1). Closes p's descriptors; p itself stays.
 */
static void
proc_end(struct sandbox_proc *p)
{
	char	buf[512];
	ssize_t	n;
	int	status;

	if (p->pid > 0) {
		/* Never waited for: bwrap's first status line, written
		 * when it started its pid 1, names it. */
		if (p->init == 0 && p->st >= 0 &&
		    (n = read(p->st, buf, sizeof(buf) - 1)) > 0) {
			buf[n] = '\0';
			p->init = (pid_t)status_number(buf, "\"child-pid\"");
		}
		if (!proc_kill_init(p)) {
			(void)kill(-p->pid, SIGKILL);
			(void)kill(p->pid, SIGKILL);
		}
		while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
			;
		p->pid = -1;
	}
	sandbox_close_fd(&p->in);
	sandbox_close_fd(&p->out);
	sandbox_close_fd(&p->err);
	sandbox_close_fd(&p->st);
	sandbox_close_fd(&p->pidfd);
}

/*
 * The workspace folder name (one component, at most 40 bytes) opened
 * O_PATH without following a symlink, for a read-only bind: -1 when
 * there is none or it is not a real folder (nothing to protect then).
 */
static int
ro_folder(struct local *l, const char *name)
{
	struct stat	st;
	int		fd;

	if (name == NULL || *name == '\0' || strchr(name, '/') != NULL ||
	    strlen(name) > 40 || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0)
		return -1;
	if ((fd = openat(l->ws_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

#define PY_PATHS_MAX	16	/* folders of code.python_paths */

/*
 * code.python_paths (comma-separated absolute folders, a virtualenv's
 * site-packages an admin prepared) into bwrap arguments: each folder
 * read-only at its own path, the folders above it made (0755, so that the
 * sandbox's user may pass) unless under /usr, which the sandbox shows
 * already. *env is "PYTHONPATH=<them>". The strings live in *buf
 * (malloc'd, the caller frees). Returns 0 or ENGINE_ENOMEM.
 */
static int
python_paths_args(const char *list, struct strv *av, char **buf, char **env)
{
	size_t	 n = strlen(list), used = 0, cap, i, np = 0, elen;
	char	*b, *tok, *next, *e, *p;

	*buf = *env = NULL;
	if (n == 0)
		return 0;
	cap = 4 * n + 64;
	if ((b = malloc(cap)) == NULL || (e = malloc(n + 16)) == NULL) {
		free(b);
		return ENGINE_ENOMEM;
	}
	memcpy(b, list, n + 1);
	used = n + 1;
	elen = (size_t)snprintf(e, n + 16, "PYTHONPATH=");
	for (tok = b; tok != NULL && np < PY_PATHS_MAX; tok = next) {
		if ((next = strchr(tok, ',')) != NULL)
			*next++ = '\0';
		while (*tok == ' ')
			tok++;
		for (i = strlen(tok); i > 1 && (tok[i - 1] == ' ' ||
		    tok[i - 1] == '/'); i--)
			tok[i - 1] = '\0';
		if (tok[0] != '/' || strstr(tok, "/..") != NULL)
			continue;
		/* the folders above it, as bwrap would make them 0700 */
		for (p = strchr(tok + 1, '/'); p != NULL && strncmp(tok, "/usr/",
		    5) != 0; p = strchr(p + 1, '/')) {
			if (used + (size_t)(p - tok) + 1 > cap)
				break;
			memcpy(b + used, tok, (size_t)(p - tok));
			b[used + (size_t)(p - tok)] = '\0';
			strv_add(av, "--perms");
			strv_add(av, "0755");
			strv_add(av, "--dir");
			strv_add(av, b + used);
			used += (size_t)(p - tok) + 1;
		}
		if (strncmp(tok, "/usr/", 5) != 0 ||
		    strncmp(tok, "/usr/local/", 11) == 0) {
			strv_add(av, "--ro-bind-try");
			strv_add(av, tok);
			strv_add(av, tok);
		}
		/* room: e holds all of list and its prefix */
		elen += (size_t)snprintf(e + elen, n + 16 - elen, "%s%s",
		    np++ > 0 ? ":" : "", tok);
	}
	*buf = b;
	*env = e;
	return 0;
}

/*
 * Starts req in sandbox l: bwrap with the sandbox's namespaces, mounts,
 * filter and limits, the command in it. ctl, when >= 0, becomes the
 * command's descriptor FD_CTL. Fills p; its standard input stays open
 * for local_wait. Returns 0 or an error (nothing started then).
 */
static int
local_spawn(struct local *l, const struct sandbox_exec_req *req, int ctl,
    char *err, struct sandbox_proc *p)
{
	struct strv	 av = {0}, ev = {0};
	struct rlimit	 lim[6];
	struct stat	 sst;
	char		 links[6][PATH_MAX], chdir_to[PATH_MAX + 16];
	char		 ids[4][48], net_env[1024], rodest[64];
	char		 hide_fd[PROC_HIDDEN_MAX][12];
	char		 hide_at[PROC_HIDDEN_MAX][32];
	size_t		 nhide = 0;
	char		*pp_buf = NULL, *pp_env = NULL;
	int		 rcs[6], pin[2] = {-1, -1}, pout[2] = {-1, -1};
	int		 perr[2] = {-1, -1}, pst[2] = {-1, -1}, src[FD_COUNT];
	int		 sfd = -1, rofd = -1;
	int		 rc = 0, dfd = -1;
	size_t		 nargs = 0, nenv = 0, k;
	const char	*leaf;
	pid_t		 pid = -1;
	int64_t		 used, left;
	ssize_t		 ln;

	p->l = l;
	if (l->destroyed) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "sandbox %s: destroyed",
		    l->base.id);
		goto out;
	}
	/* The working folder must exist and be a real folder. */
	snprintf(chdir_to, sizeof(chdir_to), "/workspace");
	if (req->cwd != NULL && req->cwd[0] != '\0' &&
	    strcmp(req->cwd, ".") != 0) {
		if ((rc = sandbox_path_check(req->cwd, 1, err)) != 0 ||
		    (rc = local_ws_parent(l, req->cwd, 0, err, &dfd, &leaf)) != 0)
			goto out;
		if (fstatat(dfd, leaf, &sst, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISDIR(sst.st_mode)) {
			rc = sandbox_fail(err, ENGINE_ENOTFOUND, "exec: cwd '%.120s' is "
			    "not a folder in the workspace", req->cwd);
			goto out;
		}
		snprintf(chdir_to, sizeof(chdir_to), "/workspace/%s", req->cwd);
	}
	rofd = ro_folder(l, req->readonly);
	for (k = 0; req->argv != NULL && req->argv[k] != NULL; k++)
		nargs++;
	for (k = 0; req->env != NULL && req->env[k] != NULL; k++)
		nenv++;
	av.cap = 160 + 3 * PROC_HIDDEN_MAX + 4 * 64 +
	    3 * (sizeof(etc_files) / sizeof(*etc_files)) +
	    3 * l->nusr + nargs;
	ev.cap = 16 + NET_ENV_MAX + nenv;
	if ((av.v = calloc(av.cap, sizeof(*av.v))) == NULL ||
	    (ev.v = calloc(ev.cap, sizeof(*ev.v))) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}

	/* bwrap's command line. */
	strv_add(&av, l->bwrap);
	if (!l->as_root) {
		snprintf(ids[0], sizeof(ids[0]), "%u", (unsigned)getuid());
		snprintf(ids[1], sizeof(ids[1]), "%u", (unsigned)getgid());
		strv_add(&av, "--unshare-user");
		if (l->no_userns)
			strv_add(&av, "--disable-userns");
		strv_add(&av, "--uid");
		strv_add(&av, ids[0]);
		strv_add(&av, "--gid");
		strv_add(&av, ids[1]);
	}
	strv_add(&av, "--unshare-pid");
	strv_add(&av, "--unshare-ipc");
	strv_add(&av, "--unshare-uts");
	strv_add(&av, "--unshare-cgroup-try");
	/* With network too: the proxy is the way out (net.c). */
	strv_add(&av, "--unshare-net");
	strv_add(&av, "--hostname");
	strv_add(&av, "sandbox");
	strv_add(&av, "--die-with-parent");
	strv_add(&av, "--new-session");
	strv_add(&av, "--json-status-fd");
	strv_add(&av, "6");
	strv_add(&av, "--seccomp");
	strv_add(&av, "7");
	/* Folders bwrap makes for bind targets would be 0700 root. */
	strv_add(&av, "--perms");
	strv_add(&av, "0755");
	strv_add(&av, "--dir");
	strv_add(&av, "/usr");
	for (k = 0; k < l->nusr; k++) {
		if (l->usr[k].target[0] != '\0') {
			strv_add(&av, "--symlink");
			strv_add(&av, l->usr[k].target);
		} else {
			strv_add(&av, "--ro-bind");
			strv_add(&av, l->usr[k].name);
		}
		strv_add(&av, l->usr[k].name);
	}
	strv_add(&av, "--perms");
	strv_add(&av, "0755");
	strv_add(&av, "--dir");
	strv_add(&av, "/etc");
	strv_add(&av, "--perms");
	strv_add(&av, "0755");
	strv_add(&av, "--dir");
	strv_add(&av, "/etc/ssl");
	for (k = 0; k < sizeof(usr_links) / sizeof(*usr_links); k++) {
		char top[32];

		snprintf(top, sizeof(top), "/%s", usr_links[k]);
		if (lstat(top, &sst) != 0)
			continue;
		if (S_ISLNK(sst.st_mode)) {
			ln = readlink(top, links[k], sizeof(links[k]) - 1);
			if (ln <= 0)
				continue;
			links[k][ln] = '\0';
			strv_add(&av, "--symlink");
			strv_add(&av, links[k]);
		} else if (S_ISDIR(sst.st_mode)) {
			strv_add(&av, "--ro-bind");
			snprintf(links[k], sizeof(links[k]), "%s", top);
			strv_add(&av, links[k]);
		} else
			continue;
		snprintf(links[k] + strlen(links[k]) + 1, sizeof(links[k]) -
		    strlen(links[k]) - 1, "%s", top);
		strv_add(&av, links[k] + strlen(links[k]) + 1);
	}
	for (k = 0; k < sizeof(etc_files) / sizeof(*etc_files); k++) {
		strv_add(&av, "--ro-bind-try");
		strv_add(&av, etc_files[k]);
		strv_add(&av, etc_files[k]);
	}
	strv_add(&av, "--ro-bind-fd");
	strv_add(&av, "8");
	strv_add(&av, "/etc/passwd");
	strv_add(&av, "--ro-bind-fd");
	strv_add(&av, "9");
	strv_add(&av, "/etc/group");
	strv_add(&av, "--ro-bind-fd");
	strv_add(&av, "10");
	strv_add(&av, "/etc/hosts");
	if (l->cfg.network) {
		strv_add(&av, "--perms");
		strv_add(&av, "0755");
		strv_add(&av, "--dir");
		strv_add(&av, "/run");
		strv_add(&av, "--ro-bind-fd");
		strv_add(&av, "12");	/* FD_NET */
		strv_add(&av, NET_DIR);
	}
	strv_add(&av, "--proc");
	strv_add(&av, "/proc");
	for (k = 0, nhide = 0; k < local_proc_hidden_len &&
	     k < PROC_HIDDEN_MAX; k++) {
		if (!(l->proc_hidden & (1U << k)))
			continue;
		snprintf(hide_fd[nhide], sizeof(hide_fd[nhide]), "%d",
		    FD_EMPTY + (int)nhide);
		snprintf(hide_at[nhide], sizeof(hide_at[nhide]), "/proc/%s",
		    local_proc_hidden[k]);
		strv_add(&av, "--ro-bind-fd");
		strv_add(&av, hide_fd[nhide]);
		strv_add(&av, hide_at[nhide]);
		nhide++;
	}
	strv_add(&av, "--dev");
	strv_add(&av, "/dev");
	strv_add(&av, "--bind-fd");
	strv_add(&av, "3");
	strv_add(&av, "/workspace");
	strv_add(&av, "--bind-fd");
	strv_add(&av, "4");
	strv_add(&av, "/tmp");
	strv_add(&av, "--bind-fd");
	strv_add(&av, "5");
	strv_add(&av, "/dev/shm");
	if (rofd >= 0) {
		snprintf(rodest, sizeof(rodest), "/workspace/%s",
		    req->readonly);
		strv_add(&av, "--ro-bind-fd");
		strv_add(&av, "13");	/* FD_RO */
		strv_add(&av, rodest);
	}
	/* code.python_paths after the others: over the sandbox's own /tmp too */
	if (python_paths_args(l->cfg.python_paths, &av, &pp_buf,
	    &pp_env) != 0) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	/* bwrap's root tmpfs has no size cap: nothing may be written there
	 * (the binds above stay writable). */
	strv_add(&av, "--remount-ro");
	strv_add(&av, "/");
	strv_add(&av, "--chdir");
	strv_add(&av, chdir_to);
	if (l->as_root) {
		snprintf(ids[0], sizeof(ids[0]), "--reuid=%d", l->cfg.uid);
		snprintf(ids[1], sizeof(ids[1]), "--regid=%d", l->cfg.uid);
		strv_add(&av, "--cap-add");
		strv_add(&av, "CAP_SETUID");
		strv_add(&av, "--cap-add");
		strv_add(&av, "CAP_SETGID");
		strv_add(&av, "--cap-add");
		strv_add(&av, "CAP_SETPCAP");
		strv_add(&av, "--");
		strv_add(&av, l->setpriv);
		strv_add(&av, ids[0]);
		strv_add(&av, ids[1]);
		strv_add(&av, "--clear-groups");
		strv_add(&av, "--no-new-privs");
		strv_add(&av, "--inh-caps=-all");
		strv_add(&av, "--bounding-set=-all");
	}
	strv_add(&av, "--");
	if (!l->as_root) {
		snprintf(ids[3], sizeof(ids[3]), "--nproc=%d:%d",
		    l->cfg.processes, l->cfg.processes);
		strv_add(&av, l->prlimit);
		strv_add(&av, ids[3]);
		strv_add(&av, "--");
	}
	if (l->cfg.network) {
		snprintf(ids[2], sizeof(ids[2]), "%d", SANDBOX_PROXY_PORT);
		strv_add(&av, NET_FWD);
		strv_add(&av, ids[2]);
		strv_add(&av, NET_DIR "/proxy.sock");
		strv_add(&av, "--");
	}
	if (req->shell != NULL) {
		strv_add(&av, "/bin/sh");
		strv_add(&av, "-c");
		strv_add(&av, req->shell);
	} else
		for (k = 0; k < nargs; k++)
			strv_add(&av, req->argv[k]);

	/* The command's environment: the caller's, then the network's, then
	 * the defaults. */
	for (k = 0; k < nenv; k++)
		if (!env_has(&ev, req->env[k]))
			strv_add(&ev, req->env[k]);
	if (pp_env != NULL && !env_has(&ev, pp_env))
		strv_add(&ev, pp_env);
	if (l->cfg.network) {
		const char	*ne[NET_ENV_MAX];
		int		 nn;

		if ((nn = sandbox_net_env(&l->cfg, net_env, sizeof(net_env),
		    ne, NET_ENV_MAX)) < 0) {
			rc = sandbox_fail(err, ENGINE_EINVAL, "exec: network "
			    "environment too long");
			goto out;
		}
		for (k = 0; k < (size_t)nn; k++)
			if (!env_has(&ev, ne[k]))
				strv_add(&ev, ne[k]);
	}
	{
		static const char *const defaults[] = {
			"PATH=/usr/bin:/bin",
			"HOME=/workspace", "TMPDIR=/tmp", "LANG=C.UTF-8",
			"PYTHONDONTWRITEBYTECODE=1", "PYTHONIOENCODING=utf-8",
		};
		for (k = 0; k < sizeof(defaults) / sizeof(*defaults); k++)
			if (!env_has(&ev, defaults[k]))
				strv_add(&ev, defaults[k]);
	}
	if (av.full || ev.full) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "exec: too many arguments");
		goto out;
	}

	/* Limits. Without our own tmpfs, no file may outgrow what is left. */
	/* SIGXCPU at the soft limit says why; SIGKILL a second later. */
	lim[0].rlim_cur = (rlim_t)l->cfg.cpu_seconds;
	lim[0].rlim_max = (rlim_t)l->cfg.cpu_seconds + 1;
	rcs[0] = RLIMIT_CPU;
	lim[1].rlim_cur = lim[1].rlim_max = (rlim_t)l->cfg.memory;
	rcs[1] = RLIMIT_DATA;
	lim[2].rlim_cur = lim[2].rlim_max = 0;
	rcs[2] = RLIMIT_CORE;
	lim[3].rlim_cur = lim[3].rlim_max = (rlim_t)l->cfg.file_size;
	rcs[3] = RLIMIT_FSIZE;
	lim[4].rlim_cur = lim[4].rlim_max = (rlim_t)l->cfg.open_files;
	rcs[4] = RLIMIT_NOFILE;
	/* last: not as root it is prlimit's, inside (local.c) */
	lim[5].rlim_cur = lim[5].rlim_max = (rlim_t)l->cfg.processes;
	rcs[5] = RLIMIT_NPROC;
	if (!l->mounted) {
		used = local_usage(l);
		left = l->cfg.workspace_size - used;
		if (left < 0)
			left = 0;
		if (left < l->cfg.file_size)
			lim[3].rlim_cur = lim[3].rlim_max = (rlim_t)left;
	}

	if (pipe2(pin, O_CLOEXEC) != 0 || pipe2(pout, O_CLOEXEC) != 0 ||
	    pipe2(perr, O_CLOEXEC) != 0 || pipe2(pst, O_CLOEXEC) != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "exec: pipe: %s", strerror(errno));
		goto out;
	}
	/* The filter, for bwrap to read from its start. */
	if ((rc = data_fd("flowcgi-seccomp", l->bpf, l->bpf_len, err,
	    &sfd)) != 0)
		goto out;
	src[0] = pin[0];
	src[1] = pout[1];
	src[2] = perr[1];
	src[FD_WS] = l->ws_fd;
	src[FD_TMP] = l->tmp_fd;
	src[FD_SHM] = l->shm_fd;
	src[FD_STAT] = pst[1];
	src[FD_SECCOMP] = sfd;
	src[FD_PASSWD] = l->etc_fd[0];
	src[FD_GROUP] = l->etc_fd[1];
	src[FD_HOSTS] = l->etc_fd[2];
	src[FD_CTL] = ctl;
	src[FD_NET] = l->net_fd;
	src[FD_RO] = rofd;
	for (k = 0; k < PROC_HIDDEN_MAX; k++)
		src[FD_EMPTY + k] = k < nhide ? l->empty_fd : -1;
	if ((pid = fork()) < 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "exec: fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		child_exec(l->bwrap, (char *const *)av.v, (char *const *)ev.v,
		    src, lim, rcs, l->as_root ? 6 : 5);
	p->pid = pid;
#ifdef SYS_pidfd_open
	/* Readable when bwrap ends; without it, look every few ms. */
	p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	/* p owns our ends from here on. */
	p->in = pin[1];
	p->out = pout[0];
	p->err = perr[0];
	p->st = pst[0];
	pin[1] = pout[0] = perr[0] = pst[0] = -1;
	(void)fcntl(p->in, F_SETFL, O_NONBLOCK);
	(void)fcntl(p->out, F_SETFL, O_NONBLOCK);
	(void)fcntl(p->err, F_SETFL, O_NONBLOCK);
	(void)fcntl(p->st, F_SETFL, O_NONBLOCK);
out:
	free(pp_buf);
	free(pp_env);
	sandbox_close_fd(&pin[0]);
	sandbox_close_fd(&pin[1]);
	sandbox_close_fd(&pout[0]);
	sandbox_close_fd(&pout[1]);
	sandbox_close_fd(&perr[0]);
	sandbox_close_fd(&perr[1]);
	sandbox_close_fd(&pst[0]);
	sandbox_close_fd(&pst[1]);
	sandbox_close_fd(&dfd);
	sandbox_close_fd(&sfd);
	sandbox_close_fd(&rofd);
	free(av.v);
	free(ev.v);
	return rc;
}

/*
 * What came on a command's control pipe (see sandbox_local_wait): 1 when
 * it said 'D', 0 when nothing of note, -1 at its end.
 */
static int
done_read(int fd)
{
	char	buf[64];
	ssize_t	n;

	while ((n = read(fd, buf, sizeof(buf))) < 0 && errno == EINTR)
		;
	if (n < 0 && errno == EAGAIN)
		return 0;
	if (n <= 0)
		return -1;
	return memchr(buf, 'D', (size_t)n) != NULL;
}

/*
 * Feeds stdin_data to p's command, then EOF; drains its output until all
 * is closed and bwrap has ended; kills everything at t0 + timeout_ms (0:
 * the sandbox's timeout) or as soon as cancel (NULL: none) says so, and
 * fills res (elapsed from t0). With dn, also
 * watches the command's control pipe: at its first 'D', when dn says the
 * output so far is complete, fills res from it as from a command that
 * exited 0 and returns with *early set and p's command still running
 * (p's descriptors kept, its pid 1 noted for proc_end). Otherwise p's
 * command is over and its descriptors closed afterwards, whatever is
 * returned.
 */
static int
local_wait(struct sandbox_proc *p, const void *stdin_data, size_t stdin_len,
    int64_t t0, int timeout_ms, int64_t max_output,
    const struct sandbox_done *dn, const struct sandbox_cancel *cancel,
    int *early, char *err, struct sandbox_exec_result *res)
{
	struct local	*l = p->l;
	struct stream	 so = {-1, {NULL, 0, 0, 0, 0}};
	struct stream	 se = {-1, {NULL, 0, 0, 0, 0}};
	struct stream	 st = {-1, {NULL, 0, 0, 4096, 0}};
	struct sandbox_exec_result so_far;
	struct pollfd	 pfd[6];
	sigset_t	 oldset;
	char		*nl;
	int		 rc = 0, status = 0, exited = 0, killed = 0;
	int		 started, nfd, i, ms, said = 0, looked = 0;
	int		 dfd = dn != NULL ? dn->fd : -1;
	size_t		 in_off = 0;
	const char	*s;
	int64_t		 deadline, grace = 0, used;

	*early = 0;
	sandbox_sigpipe_block(&oldset);
	/* The streams own the read ends from here on. */
	so.fd = p->out;
	se.fd = p->err;
	st.fd = p->st;
	p->out = p->err = p->st = -1;
	so.b.max = se.b.max = max_output > 0 ? max_output : l->cfg.max_output;
	if (stdin_len == 0)
		sandbox_close_fd(&p->in);
	deadline = sandbox_proc_deadline(p, t0, timeout_ms);

	/* Drain the three pipes and feed stdin until all is closed and bwrap
	 * has ended; kill everything at the deadline. */
	while (so.fd >= 0 || se.fd >= 0 || st.fd >= 0 || !exited) {
		nfd = 0;
		if (p->in >= 0) {
			pfd[nfd].fd = p->in;
			pfd[nfd++].events = POLLOUT;
		}
		if (so.fd >= 0) {
			pfd[nfd].fd = so.fd;
			pfd[nfd++].events = POLLIN;
		}
		if (se.fd >= 0) {
			pfd[nfd].fd = se.fd;
			pfd[nfd++].events = POLLIN;
		}
		if (st.fd >= 0) {
			pfd[nfd].fd = st.fd;
			pfd[nfd++].events = POLLIN;
		}
		if (dfd >= 0) {
			pfd[nfd].fd = dfd;
			pfd[nfd++].events = POLLIN;
		}
		if (p->pidfd >= 0 && !exited) {
			pfd[nfd].fd = p->pidfd;
			pfd[nfd++].events = POLLIN;
		}
		ms = (int)(((killed ? grace : deadline) - sandbox_now_us()) / 1000) + 1;
		if (ms < 0)
			ms = 0;
		if (!exited && p->pidfd < 0 && ms > 5)
			ms = 5;		/* look at the child now and then */
		if (cancel != NULL && !killed && ms > SANDBOX_CANCEL_MS)
			ms = SANDBOX_CANCEL_MS;	/* and at a stop */
		if (nfd > 0)
			(void)poll(pfd, (nfds_t)nfd, ms);
		else if (ms > 0)
			(void)poll(NULL, 0, ms);
		for (i = 0; i < nfd; i++) {
			if (pfd[i].revents == 0)
				continue;
			if (pfd[i].fd == p->in) {
				if (stdin_write(p->in, stdin_data, stdin_len,
				    &in_off))
					sandbox_close_fd(&p->in);
			} else if (pfd[i].fd == so.fd) {
				if (stream_read(&so) == 1)
					sandbox_close_fd(&so.fd);
			} else if (pfd[i].fd == se.fd) {
				if (stream_read(&se) == 1)
					sandbox_close_fd(&se.fd);
			} else if (pfd[i].fd == st.fd) {
				if (stream_read(&st) == 1)
					sandbox_close_fd(&st.fd);
			} else if (pfd[i].fd == dfd) {
				/* read to the end, so that the command never
				 * waits on it; only the first 'D' counts */
				if ((said = done_read(dfd)) < 0)
					dfd = -1;
			}
		}
		if (said > 0 && !looked && !killed) {
			/* Everything the command wrote before its 'D' is in
			 * the pipes: read it all, then ask. Asked once, so
			 * that bytes written there by the code cost a look
			 * at most and an early one only waits for the exit. */
			looked = 1;
			stream_drain(&so);
			stream_drain(&se);
			stream_drain(&st);
			memset(&so_far, 0, sizeof(so_far));
			so_far.out = so.b.p != NULL ? so.b.p : "";
			so_far.out_len = so.b.len;
			so_far.out_truncated = so.b.err != DBUF_OK;
			so_far.err = se.b.p != NULL ? se.b.p : "";
			so_far.err_len = se.b.len;
			so_far.err_truncated = se.b.err != DBUF_OK;
			if (dn->complete(dn->arg, &so_far)) {
				*early = 1;
				break;
			}
		}
		if (!exited && (waitpid(p->pid, &status, WNOHANG) == p->pid ||
		    errno == ECHILD))
			exited = 1;	/* ECHILD: reaped elsewhere; bwrap's
					 * status line still has the code */
		if (!killed && cancel != NULL && cancel->fn(cancel->arg))
			res->cancelled = 1;
		if (!killed && (res->cancelled ||
		    sandbox_now_us() >= deadline)) {
			/* bwrap's pid 1 dies with it (--die-with-parent), and
			 * with pid 1 the whole pid namespace. */
			res->timed_out = !res->cancelled;
			killed = 1;
			(void)kill(-p->pid, SIGKILL);
			(void)kill(p->pid, SIGKILL);
			grace = sandbox_now_us() + 5000000;
		} else if (killed && sandbox_now_us() >= grace) {
			/* Something outside the namespace holds a pipe; stop
			 * waiting for it. */
			sandbox_close_fd(&so.fd);
			sandbox_close_fd(&se.fd);
			sandbox_close_fd(&st.fd);
			if (!exited && waitpid(p->pid, &status, 0) == p->pid)
				exited = 1;
		}
		if (exited && p->in >= 0)
			sandbox_close_fd(&p->in);
	}

	if (*early) {
		/* The command is done, maybe still there: p keeps what is
		 * left of it for proc_end, which kills its pid 1 (unless
		 * bwrap was reaped already). */
		if (exited)
			p->pid = -1;
		p->init = (pid_t)status_number(st.b.p, "\"child-pid\"");
		p->out = so.fd;
		p->err = se.fd;
		p->st = st.fd;
		so.fd = se.fd = st.fd = -1;
	} else {
		p->pid = -1;
		/* What happened, from bwrap's status lines and its exit. */
		started = st.b.p != NULL &&
		    strstr(st.b.p, "\"child-pid\"") != NULL;
		if (st.b.p != NULL &&
		    (s = strstr(st.b.p, "\"exit-code\"")) != NULL &&
		    (s = strchr(s, ':')) != NULL)
			res->exit_code = (int)strtol(s + 1, NULL, 10);
		else if (WIFEXITED(status))
			res->exit_code = WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			res->exit_code = 128 + WTERMSIG(status);
		if (res->timed_out || res->cancelled)
			res->exit_code = 128 + SIGKILL;
		if (res->exit_code > 128 && res->exit_code < 128 + NSIG)
			res->signal = res->exit_code - 128;
		if (!started && !res->timed_out && !res->cancelled) {
			/* bwrap gave up before the command could start. */
			if (se.b.p != NULL &&
			    (nl = strchr(se.b.p, '\n')) != NULL)
				*nl = '\0';
			rc = sandbox_fail(err, SANDBOX_EFAIL, "local sandbox "
			    "could not start: %.180s", se.b.p && se.b.p[0] ?
			    se.b.p : "bwrap failed without a message");
			goto out;
		}
	}
	if ((rc = sandbox_exec_take(res, &so.b, &se.b, err)) != 0)
		goto out;
	used = local_usage(l);
	res->workspace_full = used >= l->cfg.workspace_size ||
	    (l->mounted && l->cfg.workspace_size - used < 4096);
	res->elapsed_us = sandbox_now_us() - t0;
out:
	if (rc != 0)
		*early = 0;
	if (!*early)
		proc_end(p);
	sandbox_sigpipe_restore(&oldset);
	sandbox_close_fd(&so.fd);
	sandbox_close_fd(&se.fd);
	sandbox_close_fd(&st.fd);
	free(so.b.p);
	free(se.b.p);
	free(st.b.p);
	if (rc != 0)
		sandbox_exec_result_release(res);
	return rc;
}

int
local_exec(struct sandbox *sb, const struct sandbox_exec_req *req, char *err,
    struct sandbox_exec_result *res)
{
	struct sandbox_proc	p = PROC_INIT;
	int64_t			t0 = sandbox_now_us();
	int			rc, early;

	if ((rc = local_spawn((struct local *)sb, req, -1, err, &p)) != 0)
		return rc;
	return local_wait(&p, req->stdin_data, req->stdin_len, t0,
	    req->timeout_ms, req->max_output, NULL, req->cancel, &early, err,
	    res);
}

/* ====== Commands for the code pool ====== */

int
sandbox_local_spawn(struct sandbox *sb, const struct sandbox_exec_req *req,
    int ctl, char *err, struct sandbox_proc **out)
{
	struct sandbox_proc	*p = NULL;
	const char		*kv;
	size_t			 k;
	int			 rc = 0;

	*out = NULL;
	err[0] = '\0';
	if (sb->provider != &sandbox_provider_local) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "spawn: not a local "
		    "sandbox");
		goto out;
	}
	if ((req->argv == NULL) == (req->shell == NULL) ||
	    (req->argv != NULL && req->argv[0] == NULL) ||
	    req->stdin_len > 0) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "spawn: give argv or a "
		    "shell command, and no stdin_data");
		goto out;
	}
	for (k = 0; req->env != NULL && (kv = req->env[k]) != NULL; k++)
		if (kv[0] == '=' || strchr(kv, '=') == NULL) {
			rc = sandbox_fail(err, ENGINE_EINVAL, "spawn: "
			    "environment entry '%.60s' is not NAME=value", kv);
			goto out;
		}
	if ((p = malloc(sizeof(*p))) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	*p = (struct sandbox_proc)PROC_INIT;
	if ((rc = local_spawn((struct local *)sb, req, ctl, err, p)) != 0)
		goto out;
	*out = p;
	p = NULL;
out:
	free(p);
	return rc;
}

int64_t
sandbox_proc_deadline(const struct sandbox_proc *p, int64_t t0,
    int timeout_ms)
{
	return t0 + (timeout_ms > 0 ? (int64_t)timeout_ms * 1000
				    : (int64_t)p->l->cfg.timeout * 1000000);
}

int64_t
sandbox_proc_max_output(const struct sandbox_proc *p)
{
	return p->l->cfg.max_output;
}

int
sandbox_proc_send(struct sandbox_proc *p, const void *data, size_t len)
{
	struct pollfd	 pfd;
	sigset_t	 oldset;
	size_t		 off = 0;
	int		 rc = 0;

	if (p->in < 0)
		return -1;
	sandbox_sigpipe_block(&oldset);
	while (off < len) {
		if (stdin_write(p->in, data, len, &off))
			break;
		pfd.fd = p->in;
		pfd.events = POLLOUT;
		(void)poll(&pfd, 1, 100);
	}
	if (off < len)
		rc = -1;
	sandbox_sigpipe_restore(&oldset);
	return rc;
}

int
sandbox_local_wait(struct sandbox_proc **pp, int64_t t0, int timeout_ms,
    const struct sandbox_done *dn, const struct sandbox_cancel *cancel,
    char *err, struct sandbox_exec_result *res)
{
	int rc, early;

	memset(res, 0, sizeof(*res));
	err[0] = '\0';
	rc = local_wait(*pp, NULL, 0, t0, timeout_ms, 0, dn, cancel, &early,
	    err, res);
	if (!early) {
		free(*pp);
		*pp = NULL;
	}
	return rc;
}

void
sandbox_proc_kill(struct sandbox_proc *p)
{
	if (p == NULL)
		return;
	proc_end(p);
	free(p);
}
