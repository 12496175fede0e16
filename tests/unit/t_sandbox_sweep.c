/*
 * t_sandbox_sweep.c — the sweep of local sandboxes whose flowcgi process
 * is gone (engine/sandbox/local_sweep.c), for real: the sandboxes of
 * processes killed with SIGKILL go, with their tmpfs (as root) and a
 * command still running in one of them; while their owners live, and
 * for a sandbox of this process, a folder without owner file and an
 * owner file being made, the sweep leaves everything alone.
 *
 * Needs bwrap (Debian package bubblewrap): without it the test is a
 * counted skip. The checks of the tmpfs mounts need root (skipped
 * otherwise).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/sandbox/local.h"
#include "tests/unit/host_procs.h"
#include "tests/unit/tap.h"
#include "tests/unit/tmp_engine.h"

/* What the command left running in a killed process's sandbox runs. */
#define SLEEPER		"sleep 6061"
#define WAIT_MS		20000
/* A sandbox id whose owner file is being made. */
#define MAKING		"01900000-0000-7000-8000-000000000002"

static char	top[256];		/* this test's temporary folder */

/* A config like the defaults, with sandboxes under top. */
static void
config(struct sandbox_config *cfg)
{
	struct conf c;

	conf_defaults(&c);
	snprintf(c.data_dir, sizeof(c.data_dir), "%s/data", top);
	sandbox_config_init(cfg, &c);
	snprintf(cfg->dir, sizeof(cfg->dir), "%s/sandboxes", top);
	cfg->timeout = 20;
}

static struct sandbox *
make(const struct sandbox_config *cfg)
{
	struct sandbox	*sb = NULL;
	char		 err[ENGINE_ERRMAX];

	if (sandbox_create(&sandbox_provider_local, cfg, err, &sb) != 0)
		printf("# create: %s\n", err);
	return sb;
}

/* The path of sandbox id's owner file in cfg's folder, into buf. */
static char *
owner_file(char *buf, size_t n, const struct sandbox_config *cfg,
    const char *id)
{
	snprintf(buf, n, "%s/.%s.lock", cfg->dir, id);
	return buf;
}

static int
exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* Whether path is a mount point of this process's namespace. */
static int
mounted(const char *path)
{
	FILE	*f = fopen("/proc/self/mountinfo", "re");
	char	 line[4096], at[4096];
	int	 yes = 0;

	if (f == NULL)
		return -1;
	while (!yes && fgets(line, sizeof(line), f) != NULL)
		yes = sscanf(line, "%*s %*s %*s %*s %4095s", at) == 1 &&
		    strcmp(at, path) == 0;
	fclose(f);
	return yes;
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
nap(void)
{
	struct timespec ts = {0, 10 * 1000 * 1000};

	nanosleep(&ts, NULL);
}

/* Waits at most WAIT_MS for SLEEPER to run; whether it does. */
static int
wait_sleeper(void)
{
	int64_t end = now_ms() + WAIT_MS;

	while (host_procs(SLEEPER, SLEEPER, NULL) != 1 && now_ms() < end)
		nap();
	return host_procs(SLEEPER, SLEEPER, NULL) == 1;
}

/* Waits at most WAIT_MS for child pid to end; whether it did. */
static int
wait_child(pid_t pid)
{
	int64_t	end = now_ms() + WAIT_MS;
	int	status;
	pid_t	got;

	while ((got = waitpid(pid, &status, WNOHANG)) == 0 && now_ms() < end)
		nap();
	return got == pid;
}

/* What a sandbox-making child tells the test. */
struct made {
	char	id[40];
	pid_t	runner;		/* runs SLEEPER in it; 0: none */
};

/*
 * Forks a process that makes a sandbox from cfg, says its id on a pipe
 * and waits to be killed. With run, a process of its own (which gives up
 * the owner file's lock, as the owner's death will) runs SLEEPER in the
 * sandbox meanwhile, as bwrap's parent: so that its command outlives the
 * owner, which --die-with-parent would not let happen otherwise. The
 * child's pid, or -1; m filled.
 */
static pid_t
spawn_owner(const struct sandbox_config *cfg, int run, struct made *m)
{
	struct sandbox_exec_result	 res;
	struct sandbox_exec_req		 req;
	struct sandbox			*sb;
	char				 err[ENGINE_ERRMAX];
	ssize_t				 n;
	pid_t				 pid;
	int				 p[2];

	memset(m, 0, sizeof(*m));
	if (pipe(p) != 0)
		return -1;
	if ((pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		if ((sb = make(cfg)) == NULL)
			_exit(1);
		snprintf(m->id, sizeof(m->id), "%s", sb->id);
		if (run && (m->runner = fork()) == 0) {
			sandbox_close_fd(&((struct local *)sb)->lock_fd);
			memset(&req, 0, sizeof(req));
			memset(&res, 0, sizeof(res));
			req.shell = "exec " SLEEPER;
			req.timeout_ms = 600000;
			(void)sandbox_exec(sb, &req, err, &res);
			_exit(0);
		}
		if (write(p[1], m, sizeof(*m)) != (ssize_t)sizeof(*m))
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	while ((n = read(p[0], m, sizeof(*m))) < 0 && errno == EINTR)
		;
	close(p[0]);
	if (n != (ssize_t)sizeof(*m)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

static int
sweep(const struct sandbox_config *cfg)
{
	char	err[ENGINE_ERRMAX];
	int	n = -1;

	if (!CHECK(sandbox_sweep(&sandbox_provider_local, cfg, err, &n) == 0))
		printf("# sweep: %s\n", err);
	return n;
}

static void
test_sweep(void)
{
	struct sandbox_config		 cfg;
	struct sandbox_exec_result	 res = {0};
	struct sandbox_exec_req		 req = {0};
	struct sandbox			*live;
	struct made			 m1, m2;
	char				 err[ENGINE_ERRMAX], root1[1200];
	char				 root2[1200], live_root[1200];
	char				 path[1300], other[1200], old[1200];
	char				 making[1200];
	pid_t				 c1, c2;
	int				 root = geteuid() == 0, fd;

	printf("# sweep\n");
	config(&cfg);
	/* This process's own sandbox; its create swept an empty folder. */
	if (!CHECK((live = make(&cfg)) != NULL))
		return;
	snprintf(live_root, sizeof(live_root), "%s/%s", cfg.dir, live->id);
	CHECK(exists(owner_file(path, sizeof(path), &cfg, live->id)));
	/* Not ours: a folder, one named like a sandbox without owner file
	 * (an older flowcgi's), and an owner file being made (its text is
	 * written once it is locked). */
	snprintf(other, sizeof(other), "%s/not-a-sandbox", cfg.dir);
	snprintf(old, sizeof(old), "%s/01900000-0000-7000-8000-000000000001",
	    cfg.dir);
	snprintf(making, sizeof(making), "%s/%s", cfg.dir, MAKING);
	CHECK(mkdir(other, 0700) == 0 && mkdir(old, 0700) == 0 &&
	    mkdir(making, 0700) == 0);
	owner_file(path, sizeof(path), &cfg, MAKING);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600)) >= 0)
		close(fd);
	CHECK(fd >= 0);

	c1 = spawn_owner(&cfg, 1, &m1);
	c2 = spawn_owner(&cfg, 0, &m2);
	if (!CHECK(c1 > 0 && c2 > 0 && m1.runner > 0)) {
		if (c1 > 0)
			kill(c1, SIGKILL);
		if (c2 > 0)
			kill(c2, SIGKILL);
		sandbox_free(live);
		return;
	}
	snprintf(root1, sizeof(root1), "%s/%s", cfg.dir, m1.id);
	snprintf(root2, sizeof(root2), "%s/%s", cfg.dir, m2.id);
	CHECK(wait_sleeper());

	/* Owners alive (other processes, and this one): nothing goes. */
	CHECK_INT(sweep(&cfg), 0);
	CHECK(exists(root1) && exists(root2) && exists(live_root));
	CHECK_INT(host_procs(SLEEPER, SLEEPER, NULL), 1);

	kill(c1, SIGKILL);
	kill(c2, SIGKILL);
	CHECK(wait_child(c1));
	CHECK(wait_child(c2));
	/* Killed: their folders, mounts and the command stay. */
	CHECK(exists(root1) && exists(root2));
	CHECK_INT(host_procs(SLEEPER, SLEEPER, NULL), 1);
	if (root)
		CHECK(mounted(root1) == 1 && mounted(root2) == 1);
	else
		SKIP("tmpfs mounts need root");

	CHECK_INT(sweep(&cfg), 2);
	CHECK(!exists(root1));
	CHECK(!exists(root2));
	CHECK(!exists(owner_file(path, sizeof(path), &cfg, m1.id)));
	CHECK(!exists(owner_file(path, sizeof(path), &cfg, m2.id)));
	if (root)
		CHECK(mounted(root1) == 0 && mounted(root2) == 0);
	else
		SKIP("tmpfs mounts need root");
	/* Its command was killed, so its runner's exec ended. */
	CHECK_INT(host_procs(SLEEPER, SLEEPER, NULL), 0);
	CHECK(wait_child(m1.runner));

	/* What was not a dead process's sandbox is all there. */
	CHECK(exists(other) && exists(old) && exists(making));
	CHECK(exists(owner_file(path, sizeof(path), &cfg, MAKING)));
	CHECK(exists(live_root) &&
	    exists(owner_file(path, sizeof(path), &cfg, live->id)));
	req.shell = "echo still here";
	req.timeout_ms = 20000;
	CHECK_INT(sandbox_exec(live, &req, err, &res), 0);
	CHECK(res.out != NULL && strcmp(res.out, "still here\n") == 0);
	sandbox_exec_result_release(&res);

	/* Nothing left to sweep; destroy removes the owner file too. */
	CHECK_INT(sweep(&cfg), 0);
	sandbox_free(live);
	CHECK(!exists(live_root) && !exists(path));
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!NEED("bwrap"))
		return tap_done();
	/* The killed owners' runners become this process's children. */
	if (!CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0) ||
	    tmp_dir_make("t_sandbox_sweep", top, sizeof(top)) != 0)
		return tap_done();
	test_sweep();
	tmp_dir_remove(top);
	return tap_done();
}
