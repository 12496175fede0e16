/*
 * local_budget.c — one memory budget for all local sandboxes of a
 * sandbox.dir, whichever flowcgi process made them.
 *
 * What a sandbox can take of the host's memory is its workspace tmpfs
 * (sandbox.workspace_size: as root its pages are RAM) and what its
 * processes allocate (sandbox.memory, RLIMIT_DATA per process). Each
 * sandbox reserves the sum of the two from sandbox.memory_budget at
 * create and gives it back at destroy; a sandbox that does not fit waits
 * up to sandbox.budget_wait seconds for others to end, then create fails
 * with ENGINE_ELIMIT and a message that names both settings. Warm code
 * runners (codepool.c) are sandboxes like any other and reserve the same;
 * the pool does not wait for room (it sets budget_wait 0) and tries again
 * later.
 *
 * Accounting across processes. A reservation is written into the
 * sandbox's owner file (.<id>.lock, local_sweep.c), as a line
 * "reserve <bytes>", while the owner holds its flock. What is in use is
 * the sum over the owner files of sandbox.dir. Reservations are made
 * under an flock on sandbox.dir itself (the folder's descriptor: no file
 * of its own), so two creators (threads or processes) never both see the
 * same room. A sandbox left by a process
 * that died (its owner file's lock is free) still counts, since as root
 * its tmpfs stays mounted until it is swept: a creator that finds no room
 * while such sandboxes exist sweeps them (local_sweep) and looks again,
 * so a dead process's reservations come back at the next create that
 * needs them, with nothing to clean up by hand. Seeing whether a lock is
 * held means trying it (LOCK_SH | LOCK_NB, dropped at once); a sweep of
 * another process that tries the same file in that instant takes it for
 * alive and leaves it to the next sweep.
 *
 * Waiting. A creator that does not fit waits on a condition variable
 * that a destroy in this process signals, and looks again at least every
 * BUDGET_POLL_MS for what other processes gave back.
 *
 * Not done here: a cgroup v2 parent with memory.max holding every sandbox
 * (a hard cap that charges tmpfs pages to the writer). docs/sandbox.md
 * says what the budget does and does not cover.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/sandbox/local.h"

#define BUDGET_LINE	"reserve "
#define BUDGET_POLL_MS	100	/* looks for other processes' releases */
#define BUDGET_SCAN_MAX	100000	/* directory entries per look */

static pthread_mutex_t	budget_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	budget_cv = PTHREAD_COND_INITIALIZER;
static int		budget_waiting;	/* creators waiting for room (tests) */

/* ====== The budget's size ====== */

/* The first number of file path (a cgroup's limit), or -1. */
static int64_t
file_int64(const char *path)
{
	FILE		*f = fopen(path, "re");
	char		 buf[64];
	char		*end;
	long long	 v = -1;

	if (f == NULL)
		return -1;
	if (fgets(buf, sizeof(buf), f) != NULL) {
		errno = 0;
		v = strtoll(buf, &end, 10);
		if (errno != 0 || end == buf || v <= 0)
			v = -1;
	}
	fclose(f);
	return v;
}

/*
 * The memory this process may use: MemTotal, or less when the cgroup it
 * runs in (v2 at the root of /sys/fs/cgroup, v1 in its memory hierarchy:
 * what a container sees) has a lower limit. -1 when /proc/meminfo cannot
 * be read.
 */
static int64_t
host_memory(void)
{
	FILE		*f = fopen("/proc/meminfo", "re");
	char		 line[128];
	long long	 kb = -1;
	int64_t		 mem = -1, cg;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "MemTotal: %lld kB", &kb) == 1)
			break;
	fclose(f);
	if (kb > 0)
		mem = (int64_t)kb * 1024;
	if ((cg = file_int64("/sys/fs/cgroup/memory.max")) > 0 &&
	    (mem < 0 || cg < mem))
		mem = cg;
	if ((cg = file_int64("/sys/fs/cgroup/memory/memory.limit_in_bytes")) >
	    0 && (mem < 0 || cg < mem))
		mem = cg;
	return mem;
}

int64_t
local_budget_total(const struct sandbox_config *cfg)
{
	static pthread_mutex_t	mu = PTHREAD_MUTEX_INITIALIZER;
	static int64_t		half = 0;
	int64_t			v;

	if (cfg->memory_budget > 0)
		return cfg->memory_budget;
	pthread_mutex_lock(&mu);
	if (half == 0) {
		v = host_memory();
		/* Unknown: room for 8 sandboxes of the defaults. */
		half = v > 0 ? v / 2 : (int64_t)8 * (768 << 20);
	}
	v = half;
	pthread_mutex_unlock(&mu);
	return v;
}

int64_t
local_budget_need(const struct sandbox_config *cfg)
{
	return cfg->workspace_size + cfg->memory;
}

/* ====== What is in use ====== */

/*
 * The reservation owner file name of folder dfd holds (0: none); *stale
 * is set when its owner is gone (its lock is free).
 */
static int64_t
owner_reserved(int dfd, const char *name, int *stale)
{
	struct stat	 st;
	char		 text[256], *p;
	ssize_t		 n;
	long long	 v = 0;
	int		 fd;

	if ((fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) < 0)
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		goto out;
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		/* Nobody holds it: its owner is gone, its folder not yet
		 * swept. */
		(void)flock(fd, LOCK_UN);
		*stale = 1;
	}
	if ((n = pread(fd, text, sizeof(text) - 1, 0)) <= 0)
		goto out;
	text[n] = '\0';
	if ((p = strstr(text, "\n" BUDGET_LINE)) != NULL) {
		v = strtoll(p + 1 + strlen(BUDGET_LINE), NULL, 10);
		if (v < 0)
			v = 0;
	}
out:
	close(fd);
	return (int64_t)v;
}

/* The sum of the reservations of folder dfd; *stale set when one of
 * them is a dead process's. */
static int64_t
budget_scan(int dfd, int *stale)
{
	DIR		*d;
	struct dirent	*de;
	int64_t		 sum = 0;
	size_t		 seen = 0;
	int		 fd;

	if ((fd = dup(dfd)) < 0)
		return 0;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return 0;
	}
	rewinddir(d);
	while ((de = readdir(d)) != NULL && seen++ < BUDGET_SCAN_MAX)
		if (local_owner_name(de->d_name, NULL))
			sum += owner_reserved(dirfd(d), de->d_name, stale);
	closedir(d);
	return sum;
}

/*
 * Opens dir twice: *dfd to read, *lfd holding the budget's lock (flock
 * LOCK_EX on the folder; a descriptor of its own, so that reading *dfd
 * never touches it). 0 or -1 (errno).
 */
static int
budget_lock(const char *dir, int *dfd, int *lfd)
{
	*lfd = -1;
	if ((*dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	if ((*lfd = openat(*dfd, ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) < 0)
		goto fail;
	while (flock(*lfd, LOCK_EX) != 0)
		if (errno != EINTR)
			goto fail;
	return 0;
fail:
	sandbox_close_fd(lfd);
	sandbox_close_fd(dfd);
	return -1;
}

int
sandbox_local_budget(const struct sandbox_config *cfg, int64_t *used,
    int64_t *total)
{
	int	dfd = -1, lfd = -1, rc = 0, stale = 0;

	*used = 0;
	*total = local_budget_total(cfg);
	if (budget_lock(cfg->dir, &dfd, &lfd) != 0) {
		rc = errno == ENOENT ? 0 : SANDBOX_EFAIL;
		goto out;
	}
	*used = budget_scan(dfd, &stale);
out:
	sandbox_close_fd(&lfd);
	sandbox_close_fd(&dfd);
	return rc;
}

/* ====== Reserve and release ====== */

/* Sizes for messages: "256 MB" or "12.5 GB". */
static void
size_text(char *buf, size_t n, int64_t v)
{
	if (v >= ((int64_t)10 << 30))
		snprintf(buf, n, "%.1f GB", (double)v / (1 << 30));
	else
		snprintf(buf, n, "%" PRId64 " MB", v >> 20);
}

/* Appends the reservation line to l's owner file; 0 or -1 (errno). */
static int
owner_reserve(struct local *l, int64_t need)
{
	struct stat	st;
	char		line[64];
	size_t		len;
	ssize_t		n;

	len = (size_t)snprintf(line, sizeof(line), BUDGET_LINE "%" PRId64
	    "\n", need);
	if (fstat(l->lock_fd, &st) != 0)
		return -1;
	while ((n = pwrite(l->lock_fd, line, len, st.st_size)) < 0 &&
	    errno == EINTR)
		;
	if (n != (ssize_t)len) {
		if (n >= 0)
			errno = EIO;
		return -1;
	}
	return 0;
}

int
local_budget_take(struct local *l, char *err)
{
	struct timespec	 ts;
	char		 a[32], b[32], c[32];
	int64_t		 need = local_budget_need(&l->cfg);
	int64_t		 total = local_budget_total(&l->cfg);
	int64_t		 used = 0, deadline, now, until;
	int		 rc = 0, dfd = -1, lfd = -1, fits, stale, swept = 0;
	int		 removed;
	char		 serr[ENGINE_ERRMAX];

	if (need > total) {
		size_text(a, sizeof(a), need);
		size_text(b, sizeof(b), total);
		rc = sandbox_fail(err, ENGINE_ELIMIT, "a sandbox needs %s "
		    "(sandbox.workspace_size + sandbox.memory), more than all of "
		    "sandbox.memory_budget (%s)", a, b);
		goto out;
	}
	deadline = sandbox_now_us() + (int64_t)l->cfg.budget_wait * 1000000;
	pthread_mutex_lock(&budget_mu);
	for (;;) {
		if (budget_lock(l->cfg.dir, &dfd, &lfd) != 0) {
			rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox.dir "
			    "'%.100s': budget lock: %s", l->cfg.dir,
			    strerror(errno));
			break;
		}
		stale = 0;
		used = budget_scan(dfd, &stale);
		fits = used + need <= total;
		if (fits && owner_reserve(l, need) != 0)
			rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox '%.100s': "
			    "owner file: %s", l->cfg.dir, strerror(errno));
		else if (fits)
			l->reserved = need;
		sandbox_close_fd(&lfd);
		sandbox_close_fd(&dfd);
		if (fits || rc != 0)
			break;
		if (stale && !swept) {
			/* Sandboxes of dead processes hold the room: they go,
			 * and the budget is looked at again. */
			swept = 1;
			if (local_sweep(&l->cfg, serr, &removed) != 0)
				log_warn("sandbox: %s", serr);
			continue;
		}
		if ((now = sandbox_now_us()) >= deadline) {
			size_text(a, sizeof(a), need);
			size_text(b, sizeof(b), used);
			size_text(c, sizeof(c), total);
			rc = sandbox_fail(err, ENGINE_ELIMIT, "no room for "
			    "another sandbox: it needs %s (sandbox.workspace_size"
			    " + sandbox.memory), sandboxes hold %s of "
			    "sandbox.memory_budget (%s), and no room came free "
			    "within sandbox.budget_wait (%d s)", a, b, c,
			    l->cfg.budget_wait);
			break;
		}
		until = now + BUDGET_POLL_MS * 1000;
		if (until > deadline)
			until = deadline;
		/* The condition variable runs on CLOCK_REALTIME. */
		clock_gettime(CLOCK_REALTIME, &ts);
		until -= now;
		ts.tv_sec += (time_t)(until / 1000000);
		ts.tv_nsec += (long)(until % 1000000) * 1000;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		budget_waiting++;
		(void)pthread_cond_timedwait(&budget_cv, &budget_mu, &ts);
		budget_waiting--;
	}
	pthread_mutex_unlock(&budget_mu);
out:
	return rc;
}

void
local_budget_released(struct local *l)
{
	if (l->reserved == 0)
		return;
	l->reserved = 0;
	pthread_mutex_lock(&budget_mu);
	pthread_cond_broadcast(&budget_cv);
	pthread_mutex_unlock(&budget_mu);
}
