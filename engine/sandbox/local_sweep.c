/*
 * local_sweep.c — who owns a local sandbox's folder, and the sweep of the
 * folders that flowcgi processes which are gone left behind.
 *
 * Owner. Beside each sandbox folder <sandbox.dir>/<id> lies its owner
 * file .<id>.lock (hidden from ls, which shows the sandboxes), made
 * before the folder and removed after it, which
 * says "flowcgi sandbox <id>" and the owner's pid; the owner holds an
 * flock (LOCK_EX) on it for the sandbox's life. The kernel drops an flock
 * when the last descriptor of it closes, that is when its process ends
 * however it ends (exit, SIGKILL, a crash, a reboot): a lock that can be
 * taken means an owner that is gone, and no pid given since to another
 * process can pass for it. The file lies beside the folder, not in it,
 * because as root the folder is a tmpfs mount point: a file inside would
 * vanish with the mount at a reboot and leave a bare folder that nothing
 * says is ours. Its descriptor is close-on-exec (and bwrap's child closes
 * all but its own), so no command holds it. The owner locks the file
 * before it writes the text: a sweep that takes the lock of a file
 * without that text (being made, or not ours) leaves it alone.
 *
 * Sweep. At start-up (sandbox_sweep_active: for the local provider
 * whatever the active one is, since code nodes always use it) and at a
 * process's first create in a folder, every .<id>.lock of sandbox.dir
 * whose lock can be taken is a sandbox left behind. Holding that lock (so
 * that two processes never sweep one sandbox, and a live one never meets
 * a sweep of its own), the sweep:
 *  1. kills its processes. Every process of a sandbox has the folder's
 *     workspace bound at /workspace of its root (bwrap's mount namespace,
 *     which the seccomp filter keeps it in: no chroot, pivot_root,
 *     unshare or setns), so /proc/<pid>/root/workspace is that very
 *     folder (same device and inode) for each of them and for no other
 *     process. This finds all of them however they were started or
 *     reparented, needs no record written at each exec (which a SIGKILL
 *     between fork and write would lose) and works without root (same
 *     uid) and without a cgroup; the match is checked again on a pidfd
 *     before the signal, so a number the system gave to a new process
 *     meanwhile is never killed. The scan is repeated until it finds none
 *     (one forked between scan and kill), at most SWEEP_ROUNDS times,
 *     waiting on the pidfds for the killed to exit. Usually there are
 *     none: bwrap's --die-with-parent takes them down with flowcgi.
 *  2. unmounts its tmpfs (as root): umount2, detached when still busy.
 *  3. removes the folder, then the owner file.
 * A folder without owner file (not ours, or from an older flowcgi) or
 * whose owner holds the lock (a live process: this one, or another that
 * shares sandbox.dir) is never touched. A missing or empty sandbox.dir
 * costs an open.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>

#include "engine/sandbox/local.h"

#define OWNER_MAGIC	"flowcgi sandbox "
#define OWNER_NAME	".%s.lock"	/* of a sandbox id */
#define OWNER_NAME_LEN	(1 + 36 + 5)
#define SWEEP_MAX	1024	/* sandboxes per sweep; the rest next time */
#define SWEEP_ROUNDS	4	/* /proc scans per sweep */
#define SWEEP_WAIT_MS	2000	/* for the killed to exit, per round */
#define KILL_MAX	256	/* pidfds waited on per round */

/* ====== Owner file ====== */

int
local_owner_take(struct local *l, char *err)
{
	char	path[sizeof(l->cfg.dir) + OWNER_NAME_LEN + 2], text[128];
	size_t	len;
	ssize_t	n = -1;
	int	rc = 0, fd = -1;

	snprintf(path, sizeof(path), "%s/" OWNER_NAME, l->cfg.dir, l->base.id);
	len = (size_t)snprintf(text, sizeof(text), OWNER_MAGIC "%s\npid %ld\n",
	    l->base.id, (long)getpid());
	if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) < 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox '%.100s': %s",
		    path, strerror(errno));
		goto out;
	}
	/* Locked before written: see the top. */
	while (flock(fd, LOCK_EX) != 0)
		if (errno != EINTR)
			goto fail;
	while ((n = write(fd, text, len)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)len)
		goto fail;
	l->lock_fd = fd;
	fd = -1;
	goto out;
fail:
	rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox '%.100s': %s", path,
	    n >= 0 ? "short write" : strerror(errno));
	(void)unlink(path);
out:
	sandbox_close_fd(&fd);
	return rc;
}

void
local_owner_drop(struct local *l)
{
	char path[sizeof(l->cfg.dir) + OWNER_NAME_LEN + 2];

	if (l->lock_fd < 0)
		return;
	if (l->root[0] == '\0' || (access(l->root, F_OK) != 0 &&
	    errno == ENOENT)) {
		snprintf(path, sizeof(path), "%s/" OWNER_NAME, l->cfg.dir,
		    l->base.id);
		(void)unlink(path);
	}
	sandbox_close_fd(&l->lock_fd);
}

/* ====== Sweep ====== */

/* A sandbox whose owner is gone, its lock held. */
struct stale {
	char	id[37];
	long	pid;		/* the owner's, as its file says */
	int	lock_fd;
	int	has_ws;		/* ws_dev and ws_ino: its workspace */
	dev_t	ws_dev;
	ino_t	ws_ino;
	int	killed;		/* processes */
};

int
local_owner_name(const char *name, char id[37])
{
	char buf[37];

	if (strlen(name) != OWNER_NAME_LEN || name[0] != '.' ||
	    strcmp(name + 37, ".lock") != 0)
		return 0;
	if (id == NULL)
		id = buf;
	memcpy(id, name + 1, 36);
	id[36] = '\0';
	return engine_uuid_check(id) == 0;
}

/*
 * The sandbox of entry name of folder dfd when it is an owner file whose
 * owner is gone: 0 with s filled, its lock held in s->lock_fd. Else -1
 * (alive, being made, not ours, or removed meanwhile).
 */
static int
stale_take(int dfd, const char *name, struct stale *s)
{
	struct stat	st, cur;
	char		text[128], want[64];
	const char	*p;
	ssize_t		n;
	int		fd = -1, sfd = -1, rc = -1;

	memset(s, 0, sizeof(*s));
	s->lock_fd = -1;
	if (!local_owner_name(name, s->id) ||
	    (fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		goto out;
	/* Held: its owner lives. */
	if (flock(fd, LOCK_EX | LOCK_NB) != 0)
		goto out;
	if ((n = pread(fd, text, sizeof(text) - 1, 0)) <= 0)
		goto out;
	text[n] = '\0';
	snprintf(want, sizeof(want), OWNER_MAGIC "%s\n", s->id);
	if (strncmp(text, want, strlen(want)) != 0)
		goto out;
	/* Its owner removed it meanwhile (and maybe made another). */
	if (fstatat(dfd, name, &cur, AT_SYMLINK_NOFOLLOW) != 0 ||
	    cur.st_dev != st.st_dev || cur.st_ino != st.st_ino)
		goto out;
	if ((p = strstr(text + strlen(want), "pid ")) != NULL)
		s->pid = strtol(p + 4, NULL, 10);
	if ((sfd = openat(dfd, s->id, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) >= 0 && fstatat(sfd, "workspace", &st,
	    AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
		s->has_ws = 1;
		s->ws_dev = st.st_dev;
		s->ws_ino = st.st_ino;
	}
	s->lock_fd = fd;
	fd = -1;
	rc = 0;
out:
	sandbox_close_fd(&fd);
	sandbox_close_fd(&sfd);
	return rc;
}

/*
 * The sandbox of s[0..n) whose workspace is the root/workspace of the
 * /proc entry pid (of folder procfd), or -1.
 */
static int
stale_of(int procfd, const char *pid, struct stale *s, size_t n)
{
	struct stat	st;
	char		path[64];
	size_t		i;

	snprintf(path, sizeof(path), "%s/root/workspace", pid);
	if (fstatat(procfd, path, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return -1;
	for (i = 0; i < n; i++)
		if (s[i].has_ws && s[i].ws_dev == st.st_dev &&
		    s[i].ws_ino == st.st_ino)
			return (int)i;
	return -1;
}

/*
 * SIGKILL to the /proc entry pid found in sandbox s[k]. A pidfd on it when
 * it was sent through one (the caller waits on it and closes it), else -1.
 */
static int
pid_kill(int procfd, const char *name, struct stale *s, size_t n, int k)
{
	long	pid = strtol(name, NULL, 10);
	int	fd = -1;

#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
	if ((fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0)) >= 0) {
		/* A pidfd stays on its process: what matches now is what
		 * gets the signal, not a process that took the number. */
		if (stale_of(procfd, name, s, n) == k &&
		    syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0) == 0) {
			s[k].killed++;
			return fd;
		}
		close(fd);
		return -1;
	}
	if (errno != ENOSYS)
		return -1;	/* gone already */
#else
	(void)procfd;
	(void)n;
#endif
	/* A kernel without pidfds (before 5.3): by number. */
	if (kill((pid_t)pid, SIGKILL) == 0)
		s[k].killed++;
	return fd;
}

/*
 * Waits, at most ms, for the processes of the pidfds pfd[0..n) to exit;
 * closes each pidfd whose process did (its fd becomes -1).
 */
static void
pids_wait(struct pollfd *pfd, size_t n, int ms)
{
	struct timespec	now;
	int64_t		end, left;
	size_t		i, live;

	clock_gettime(CLOCK_MONOTONIC, &now);
	end = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 + ms;
	for (;;) {
		for (live = 0, i = 0; i < n; i++) {
			if (pfd[i].fd >= 0 && pfd[i].revents != 0)
				sandbox_close_fd(&pfd[i].fd);
			if (pfd[i].fd >= 0)
				live++;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		left = end - ((int64_t)now.tv_sec * 1000 + now.tv_nsec /
		    1000000);
		if (live == 0 || left <= 0)
			break;
		/* Entries closed above (-1) are ignored by poll. */
		if (poll(pfd, (nfds_t)n, (int)left) < 0 && errno != EINTR)
			break;
	}
}

/*
 * Kills the processes of the sandboxes s[0..n) (see the top: found by
 * their /proc/<pid>/root/workspace) and waits for them to exit.
 */
static void
stale_kill(struct stale *s, size_t n)
{
	struct pollfd	 pfd[KILL_MAX];
	struct dirent	*de;
	DIR		*d;
	size_t		 npfd, i;
	int		 round, found, k, fd;

	for (round = 0; round < SWEEP_ROUNDS; round++) {
		if ((d = opendir("/proc")) == NULL)
			return;
		found = 0;
		npfd = 0;
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
			    strspn(de->d_name, "0123456789") !=
			    strlen(de->d_name) ||
			    strtol(de->d_name, NULL, 10) == (long)getpid() ||
			    (k = stale_of(dirfd(d), de->d_name, s, n)) < 0)
				continue;
			found++;
			if ((fd = pid_kill(dirfd(d), de->d_name, s, n, k)) < 0)
				continue;
			if (npfd == KILL_MAX) {
				close(fd);	/* the next round waits */
				continue;
			}
			pfd[npfd].fd = fd;
			pfd[npfd].events = POLLIN;
			pfd[npfd].revents = 0;
			npfd++;
		}
		closedir(d);
		if (found == 0)
			break;
		pids_wait(pfd, npfd, SWEEP_WAIT_MS);
		for (i = 0; i < npfd; i++)
			sandbox_close_fd(&pfd[i].fd);
	}
}

/*
 * Unmounts and removes sandbox s of folder dfd (dir, of device dev), then
 * its owner file. 0 when it is gone, else -1 with a warning logged (the
 * owner file stays: a later sweep tries again).
 */
static int
stale_remove(int dfd, const char *dir, dev_t dev, struct stale *s)
{
	struct statfs	 sf;
	struct stat	 st;
	char		 path[PATH_MAX], lock[64];
	int		 fd = -1, rc = -1, mounted = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, s->id);
	if (fstatat(dfd, s->id, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		/* No folder: its owner died between the two. */
		if (errno != ENOENT) {
			log_warn("sandbox: sweep: %s: %s", path,
			    strerror(errno));
			goto out;
		}
	} else if (!S_ISDIR(st.st_mode)) {
		log_warn("sandbox: sweep: %s: not a folder; left alone", path);
		goto out;
	} else if (st.st_dev != dev) {
		/* A mount point: the sandbox's tmpfs, and nothing else is
		 * ours to unmount. */
		if ((fd = openat(dfd, s->id, O_PATH | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) < 0 || fstatfs(fd, &sf) != 0 ||
		    sf.f_type != TMPFS_MAGIC) {
			log_warn("sandbox: sweep: %s: something other than its "
			    "tmpfs is mounted there; left alone", path);
			goto out;
		}
		if (umount2(path, UMOUNT_NOFOLLOW) != 0 && (errno != EBUSY ||
		    umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) != 0)) {
			log_warn("sandbox: sweep: %s: unmount: %s", path,
			    strerror(errno));
			goto out;
		}
		mounted = 1;
	}
	local_rm_tree(dfd, s->id);
	if (fstatat(dfd, s->id, &st, AT_SYMLINK_NOFOLLOW) == 0 ||
	    errno != ENOENT) {
		log_warn("sandbox: sweep: %s: cannot remove it", path);
		goto out;
	}
	snprintf(lock, sizeof(lock), OWNER_NAME, s->id);
	(void)unlinkat(dfd, lock, 0);
	log_info("sandbox: swept %s of process %ld, which is gone: %d "
	    "process(es) killed%s", path, s->pid, s->killed, mounted ?
	    ", its tmpfs unmounted" : "");
	rc = 0;
out:
	sandbox_close_fd(&fd);
	return rc;
}

/* The sweep of folder dir (see the top); *removed counts sandboxes. */
static int
sweep_dir(const char *dir, char *err, int *removed)
{
	struct stale	*s = NULL, one;
	struct dirent	*de;
	struct stat	 dst;
	DIR		*d = NULL;
	size_t		 n = 0, i;
	int		 rc = 0, dfd;

	*removed = 0;
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		if (errno != ENOENT)
			rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox.dir "
			    "'%.100s': %s", dir, strerror(errno));
		goto out;
	}
	if (fstat(dfd, &dst) != 0 || (d = fdopendir(dfd)) == NULL) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox.dir '%.100s': %s",
		    dir, strerror(errno));
		close(dfd);
		goto out;
	}
	while (n < SWEEP_MAX && (de = readdir(d)) != NULL) {
		if (stale_take(dirfd(d), de->d_name, &one) != 0)
			continue;
		if (s == NULL && (s = calloc(SWEEP_MAX, sizeof(*s))) == NULL) {
			close(one.lock_fd);
			rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
			goto out;
		}
		s[n++] = one;
	}
	if (n == 0)
		goto out;
	stale_kill(s, n);
	for (i = 0; i < n; i++)
		if (stale_remove(dirfd(d), dir, dst.st_dev, &s[i]) == 0)
			(*removed)++;
out:
	for (i = 0; i < n; i++)
		close(s[i].lock_fd);
	free(s);
	if (d != NULL)
		closedir(d);
	return rc;
}

/* The folder swept last by this process, under sweep_mu. */
static pthread_mutex_t	sweep_mu = PTHREAD_MUTEX_INITIALIZER;
static char		swept[sizeof(((struct sandbox_config *)0)->dir)];

int
local_sweep(const struct sandbox_config *cfg, char *err, int *removed)
{
	int rc;

	err[0] = '\0';
	pthread_mutex_lock(&sweep_mu);
	snprintf(swept, sizeof(swept), "%s", cfg->dir);
	rc = sweep_dir(cfg->dir, err, removed);
	pthread_mutex_unlock(&sweep_mu);
	return rc;
}

void
local_sweep_first(const char *dir)
{
	char	err[ENGINE_ERRMAX];
	int	n = 0;

	pthread_mutex_lock(&sweep_mu);
	if (strcmp(swept, dir) != 0) {
		snprintf(swept, sizeof(swept), "%s", dir);
		if (sweep_dir(dir, err, &n) != 0)
			log_warn("sandbox: %s", err);
		else if (n > 0)
			log_info("sandbox: removed %d local sandbox(es) left by "
			    "flowcgi processes that are gone", n);
	}
	pthread_mutex_unlock(&sweep_mu);
}
