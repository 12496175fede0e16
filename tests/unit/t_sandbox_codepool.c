/*
 * t_sandbox_codepool.c — warm code runners (engine/sandbox/codepool.c): a
 * runner serves one job and nothing of it (files in the workspace, /tmp
 * and /dev/shm, globals, the environment) reaches the next; the pool
 * refills after a job; a warm runner that was killed is replaced and the
 * job still succeeds, even one that takes it just after the kill; size 0
 * starts nothing, and a pool nobody used has no thread and no process;
 * sandbox.timeout and sandbox.memory hold on warm runners; idle runners
 * are replaced; other settings run cold; a job answers on its runner's
 * word, after which the pool's thread kills the runner with whatever it
 * left running and removes its sandbox (with code.pool_idle off: not
 * waiting for anything); and after the pool is freed no runner process,
 * sandbox folder or mount is left.
 *
 * Runs the same code nodes as t_sandbox_code, with a pool of one runner
 * per language (the sandbox user's process limit is shared with whatever
 * else runs sandboxes here). Needs bwrap, python3 and node: a missing bwrap
 * or node is one counted skip (NEED), a missing python3 fails.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "engine/sandbox/sandbox.h"
#include "tests/unit/host_procs.h"
#include "tests/unit/tap.h"
#include "tests/unit/tap_json.h"
#include "tests/unit/tmp_engine.h"

/* How long a runner may take to be warm (a busy host). */
#define WAIT_MS		60000

static char			top[256];
static struct sandbox_config	base;
static int			ndirs;

/* A config of its own sandbox folder under top, so its checks are exact. */
static void
cfg_new(struct sandbox_config *cfg)
{
	*cfg = base;
	snprintf(cfg->dir, sizeof(cfg->dir), "%s/sb%d", top, ndirs++);
}

/* The entries of folder dir (-1 when it cannot be read: none made yet
 * counts as 0): two per sandbox, its folder and its owner file. */
static int
dir_entries(const char *dir)
{
	DIR		*d = opendir(dir);
	struct dirent	*de;
	int		 n = 0;

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

/* Mounts whose mount point is under dir. */
static int
mounts_under(const char *dir)
{
	FILE	*f = fopen("/proc/self/mountinfo", "re");
	char	 line[4096];
	int	 n = 0;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, dir) != NULL)
			n++;
	fclose(f);
	return n;
}

/* This process's thread count. */
static int
threads(void)
{
	FILE	*f = fopen("/proc/self/status", "re");
	char	 line[256];
	int	 n = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "Threads:", 8) == 0)
			n = atoi(line + 8);
	fclose(f);
	return n;
}

/* The parent of pid, or -1. */
static pid_t
parent_of(pid_t pid)
{
	char	 path[64], buf[1024], *p;
	ssize_t	 n;
	int	 fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL)
		return -1;
	return (pid_t)strtol(p + 4, NULL, 10);	/* ") S ppid" */
}

/*
 * Descendants of this process whose command line starts with prefix and
 * contains needle: up to max pids into pids (and, when cmds, each one's
 * runner folder into cmds[i]). Returns how many.
 */
static int
runners(const char *prefix, const char *needle, pid_t *pids,
    char (*cmds)[64], int max)
{
	DIR		*d = opendir("/proc");
	struct dirent	*de;
	char		 buf[4096], pbuf[4096], num[24], *dir;
	pid_t		 pid, q;
	int		 n = 0, depth;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL && n < max) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		pid = (pid_t)atoi(de->d_name);
		for (q = pid, depth = 0; q > 1 && q != getpid() && depth < 64;
		    depth++)
			q = parent_of(q);
		if (q != getpid() || pid == getpid() ||
		    proc_cmdline(de->d_name, buf, sizeof(buf)) < 0)
			continue;
		if (strncmp(buf, prefix, strlen(prefix)) != 0 ||
		    strstr(buf, needle) == NULL)
			continue;
		/* a python3 fork server's waiting child has its command
		 * line: the server is the runner */
		snprintf(num, sizeof(num), "%ld", (long)parent_of(pid));
		if (strncmp(buf, "python3 ", 8) == 0 &&
		    proc_cmdline(num, pbuf, sizeof(pbuf)) >= 0 &&
		    strcmp(pbuf, buf) == 0)
			continue;
		if (cmds != NULL && (dir = strstr(buf, ".flowcgi-code-")) !=
		    NULL)
			snprintf(cmds[n], sizeof(cmds[n]), "%.46s", dir);
		pids[n++] = pid;
	}
	closedir(d);
	return n;
}

/*
 * Polls cond(arg) until it holds or ms pass: for a state the pool reaches
 * on its own, with no event to wait on from here. 0 when it held.
 */
static int
wait_until(int (*cond)(void *), void *arg, int ms)
{
	struct timespec ts = {0, 10 * 1000000};

	for (; !cond(arg) && ms > 0; ms -= 10)
		nanosleep(&ts, NULL);
	return cond(arg) ? 0 : -1;
}

/* A count of pool p's stats past n. */
struct past {
	struct sandbox_code_pool	*p;
	long				 n;
};

static int
died_past(void *arg)
{
	struct past			*w = arg;
	struct sandbox_code_pool_stats	 st;

	sandbox_code_pool_stats(w->p, &st);
	return st.died > w->n;
}

static int
expired_past(void *arg)
{
	struct past			*w = arg;
	struct sandbox_code_pool_stats	 st;

	sandbox_code_pool_stats(w->p, &st);
	return st.expired > w->n;
}

/* No host process has needle in its command line. */
static int
no_host_proc(void *needle)
{
	return host_procs(needle, NULL, NULL) == 0;
}

/* Runs code with inputs (JSON text) through pool p made from cfg. */
static int
run(struct sandbox_code_pool *p, const struct sandbox_config *cfg,
    const char *lang, const char *code, const char *inputs, int timeout_ms,
    char *err, struct sandbox_code_result *res)
{
	struct sandbox_code_req	 req = {0};
	json_t			*in = NULL;
	int			 rc;

	if (inputs != NULL)
		in = json_loads(inputs, 0, NULL);
	req.language = lang;
	req.code = code;
	req.inputs = in;
	req.timeout_ms = timeout_ms;
	rc = sandbox_code_pool_run(p, cfg, &req, err, res);
	if (rc != 0)
		printf("# %s: %s\n", lang, err);
	json_decref(in);
	return rc;
}

/* Runs code on a warm runner of p: waits for one, checks it was used. */
static int
run_warm(struct sandbox_code_pool *p, const struct sandbox_config *cfg,
    const char *lang, const char *code, int timeout_ms, char *err,
    struct sandbox_code_result *res)
{
	struct sandbox_code_pool_stats	st0, st1;
	int				rc;

	CHECK(sandbox_code_pool_wait(p, lang, 1, WAIT_MS) == 0);
	sandbox_code_pool_stats(p, &st0);
	rc = run(p, cfg, lang, code, NULL, timeout_ms, err, res);
	sandbox_code_pool_stats(p, &st1);
	if (!CHECK(st1.hits == st0.hits + 1))
		printf("# %s: not run on a warm runner\n", lang);
	return rc;
}

static const char py_leave[] =
    "import builtins, os, sys\n"
    "leak = 'module'\n"
    "def main():\n"
    "    global leak\n"
    "    before = [os.path.exists(p) for p in ('kept.txt', '/tmp/kept.txt',"
    " '/dev/shm/kept')]\n"
    "    for p in ('kept.txt', '/tmp/kept.txt', '/dev/shm/kept'):\n"
    "        open(p, 'w').write('x')\n"
    "    builtins.flowcgi_leak = 1\n"
    "    sys.modules['__main__'].flowcgi_leak = 1\n"
    "    os.environ['FLOWCGI_LEAK'] = '1'\n"
    "    sys.flowcgi_leak = 1\n"
    "    return {'before': any(before), 'own': os.path.exists('kept.txt')}\n";

static const char py_look[] =
    "import builtins, os, sys\n"
    "def main():\n"
    "    return {'files': [os.path.exists(p) for p in ('kept.txt',"
    " '/tmp/kept.txt', '/dev/shm/kept')],\n"
    "            'builtins': hasattr(builtins, 'flowcgi_leak'),\n"
    "            'main': hasattr(sys.modules['__main__'], 'flowcgi_leak'),\n"
    "            'sys': hasattr(sys, 'flowcgi_leak'),\n"
    "            'global': 'leak' in globals(),\n"
    "            'env': 'FLOWCGI_LEAK' in os.environ,\n"
    "            'ws': sorted(os.listdir('.'))}\n";

static const char js_leave[] =
    "const fs = require('fs');\n"
    "var leak = 'script';\n"
    "function main() {\n"
    "  const before = ['kept.txt', '/tmp/kept.txt', '/dev/shm/kept']"
    ".some((p) => fs.existsSync(p));\n"
    "  for (const p of ['kept.txt', '/tmp/kept.txt', '/dev/shm/kept'])\n"
    "    fs.writeFileSync(p, 'x');\n"
    "  globalThis.flowcgiLeak = 1;\n"
    "  process.env.FLOWCGI_LEAK = '1';\n"
    "  require('os').flowcgiLeak = 1;\n"
    "  return {before: before, own: fs.existsSync('kept.txt')};\n"
    "}\n";

static const char js_look[] =
    "const fs = require('fs');\n"
    "function main() {\n"
    "  return {files: ['kept.txt', '/tmp/kept.txt', '/dev/shm/kept']"
    ".map((p) => fs.existsSync(p)),\n"
    "    global: 'flowcgiLeak' in globalThis, script: 'leak' in globalThis,\n"
    "    env: 'FLOWCGI_LEAK' in process.env,\n"
    "    module: require('os').flowcgiLeak !== undefined,\n"
    "    ws: fs.readdirSync('.').sort()};\n"
    "}\n";

/* One job's files, globals and environment are not the next job's. */
static void
test_no_reuse(void)
{
	struct sandbox_code_pool	*p = NULL;
	struct sandbox_code_pool_stats	 st0, st1;
	struct sandbox_code_result	 r = {0};
	struct sandbox_config		 cfg;
	char				 err[ENGINE_ERRMAX];

	cfg_new(&cfg);
	CHECK_INT(sandbox_code_pool_new(&cfg, 1, 0, &p), 0);
	if (p == NULL)
		return;
	CHECK_INT(run_warm(p, &cfg, "python3", py_leave, 0, err, &r), 0);
	CHECK_STR(tap_json(r.outputs), "{\"before\":false,\"own\":true}");
	sandbox_code_result_release(&r);
	CHECK_INT(run_warm(p, &cfg, "python3", py_look, 0, err, &r), 0);
	CHECK_STR(tap_json(r.outputs), "{\"builtins\":false,\"env\":false,"
	    "\"files\":[false,false,false],\"global\":false,\"main\":false,"
	    "\"sys\":false,\"ws\":[]}");
	sandbox_code_result_release(&r);

	CHECK_INT(run_warm(p, &cfg, "javascript", js_leave, 0, err, &r), 0);
	CHECK_STR(tap_json(r.outputs), "{\"before\":false,\"own\":true}");
	sandbox_code_result_release(&r);
	CHECK_INT(run_warm(p, &cfg, "javascript", js_look, 0, err, &r), 0);
	CHECK_STR(tap_json(r.outputs), "{\"env\":false,\"files\":[false,false,"
	    "false],\"global\":false,\"module\":false,\"script\":false,"
	    "\"ws\":[]}");
	sandbox_code_result_release(&r);

	/* each job had a runner of its own, and the pool refilled after
	 * each: one more started, warm again */
	sandbox_code_pool_stats(p, &st0);
	CHECK(sandbox_code_pool_wait(p, "python3", 1, WAIT_MS) == 0);
	CHECK(sandbox_code_pool_wait(p, "javascript", 1, WAIT_MS) == 0);
	CHECK_INT(run_warm(p, &cfg, "python3",
	    "def main():\n    return {'ok': 1}\n", 0, err, &r), 0);
	sandbox_code_result_release(&r);
	CHECK(sandbox_code_pool_wait(p, "python3", 1, WAIT_MS) == 0);
	sandbox_code_pool_stats(p, &st1);
	CHECK(st1.started >= st0.started + 1);
	CHECK_INT(st1.ready[0], 1);
	CHECK_INT(st1.misses, 0);
	printf("# %ld runners started for %ld jobs\n", st1.started, st1.hits);
	sandbox_code_pool_free(p);
}

/* A killed warm runner is replaced; a job never fails for it. */
static void
test_killed(void)
{
	struct sandbox_code_pool	*p = NULL;
	struct sandbox_code_pool_stats	 st0;
	struct sandbox_code_result	 r = {0};
	struct sandbox_config		 cfg;
	struct past			 w;
	char				 err[ENGINE_ERRMAX];
	pid_t				 pids[8];
	int				 n;

	cfg_new(&cfg);
	CHECK_INT(sandbox_code_pool_new(&cfg, 1, 0, &p), 0);
	if (p == NULL)
		return;
	CHECK(sandbox_code_pool_wait(p, "python3", 1, WAIT_MS) == 0);
	sandbox_code_pool_stats(p, &st0);

	/* killed while it waits: the pool notices and starts another */
	n = runners("python3 ", "runner.py", pids, NULL, 8);
	CHECK_INT(n, 1);
	if (n >= 1)
		CHECK(kill(pids[0], SIGKILL) == 0);
	w.p = p;
	w.n = st0.died;
	CHECK(wait_until(died_past, &w, WAIT_MS) == 0);
	CHECK(sandbox_code_pool_wait(p, "python3", 1, WAIT_MS) == 0);
	CHECK_INT(run_warm(p, &cfg, "python3",
	    "def main(): return {'ok': 1}\n", 0, err, &r), 0);
	CHECK_STR(tap_json(r.outputs), "{\"ok\":1}");
	sandbox_code_result_release(&r);

	/* killed just before a job takes it: the job still succeeds (on
	 * another runner or cold) */
	CHECK(sandbox_code_pool_wait(p, "python3", 1, WAIT_MS) == 0);
	sandbox_code_pool_stats(p, &st0);
	n = runners("python3 ", "runner.py", pids, NULL, 8);
	CHECK_INT(n, 1);
	if (n >= 1)
		CHECK(kill(pids[0], SIGKILL) == 0);
	CHECK_INT(run(p, &cfg, "python3", "def main(): return {'ok': 2}\n",
	    NULL, 0, err, &r), 0);
	CHECK_STR(tap_json(r.outputs), "{\"ok\":2}");
	sandbox_code_result_release(&r);
	w.n = st0.died;
	CHECK(wait_until(died_past, &w, WAIT_MS) == 0);
	CHECK(sandbox_code_pool_wait(p, "python3", 1, WAIT_MS) == 0);
	sandbox_code_pool_free(p);
}

/* Size 0 is no pool; a pool nobody used has no thread and no process. */
static void
test_empty(void)
{
	struct sandbox_code_pool	*p = (struct sandbox_code_pool *)&p;
	struct sandbox_code_pool_stats	 st;
	struct sandbox_code_result	 r = {0};
	struct sandbox_config		 cfg;
	char				 err[ENGINE_ERRMAX];
	pid_t				 pids[8];
	int				 t0 = threads();

	cfg_new(&cfg);
	CHECK_INT(sandbox_code_pool_new(&cfg, 0, 300, &p), 0);
	CHECK(p == NULL);
	CHECK_INT(run(NULL, &cfg, "python3", "def main(): return {'a': 1}\n",
	    NULL, 0, err, &r), 0);
	CHECK_STR(tap_json(r.outputs), "{\"a\":1}");
	sandbox_code_result_release(&r);
	CHECK_INT(threads(), t0);
	CHECK_INT(runners("", "", pids, NULL, 8), 0);
	CHECK_INT(dir_entries(cfg.dir), 0);

	CHECK_INT(sandbox_code_pool_new(&cfg, 2, 300, &p), 0);
	sandbox_code_pool_stats(p, &st);
	CHECK_INT(st.threads, 0);
	CHECK_INT(st.started, 0);
	CHECK_INT(threads(), t0);
	CHECK_INT(runners("", "", pids, NULL, 8), 0);
	/* settings other than the pool's: cold, and nothing starts */
	cfg.timeout = base.timeout + 1;
	CHECK_INT(run(p, &cfg, "python3", "def main(): return {'a': 2}\n",
	    NULL, 0, err, &r), 0);
	CHECK_STR(tap_json(r.outputs), "{\"a\":2}");
	sandbox_code_result_release(&r);
	sandbox_code_pool_stats(p, &st);
	CHECK_INT(st.threads, 0);
	CHECK_INT(st.hits + st.misses + st.started, 0);
	CHECK_INT(threads(), t0);
	sandbox_code_pool_free(p);
	CHECK_INT(threads(), t0);
}

/* sandbox.timeout, a node's own limit and sandbox.memory hold. */
static void
test_limits(void)
{
	struct sandbox_code_pool	*p = NULL;
	struct sandbox_code_result	 r = {0};
	struct sandbox_config		 cfg;
	char				 err[ENGINE_ERRMAX];

	cfg_new(&cfg);
	cfg.timeout = 2;
	CHECK_INT(sandbox_code_pool_new(&cfg, 1, 0, &p), 0);
	if (p == NULL)
		return;
	CHECK_INT(run_warm(p, &cfg, "python3",
	    "def main():\n    while True: pass\n", 0, err, &r), ENGINE_ELIMIT);
	CHECK_STR(err, "code ran longer than sandbox.timeout");
	sandbox_code_result_release(&r);
	CHECK_INT(run_warm(p, &cfg, "python3", "import time\ndef main():\n"
	    "    time.sleep(100)\n", 700, err, &r), ENGINE_ELIMIT);
	CHECK_STR(err, "code ran longer than its time limit (700 ms)");
	sandbox_code_result_release(&r);
	CHECK_INT(run_warm(p, &cfg, "javascript",
	    "function main() { for (;;) {} }\n", 0, err, &r), ENGINE_ELIMIT);
	CHECK_STR(err, "code ran longer than sandbox.timeout");
	sandbox_code_result_release(&r);
	sandbox_code_pool_free(p);

	cfg_new(&cfg);
	cfg.memory = 64 << 20;
	CHECK_INT(sandbox_code_pool_new(&cfg, 1, 0, &p), 0);
	if (p == NULL)
		return;
	CHECK_INT(run_warm(p, &cfg, "python3", "def main():\n"
	    "    a = bytearray(300 << 20)\n    return {}\n", 0, err, &r),
	    ENGINE_EINVAL);
	CHECK_STR(err, "MemoryError (main.py, line 2) [memory is capped by "
	    "sandbox.memory]");
	sandbox_code_result_release(&r);
	sandbox_code_pool_free(p);
}

/* Runners left unused for code.pool_idle are replaced, one at a time. */
static void
test_idle(void)
{
	struct sandbox_code_pool	*p = NULL;
	struct sandbox_code_pool_stats	 st0, st;
	struct sandbox_config		 cfg;
	struct past			 w;

	cfg_new(&cfg);
	CHECK_INT(sandbox_code_pool_new(&cfg, 1, 1, &p), 0);
	if (p == NULL)
		return;
	CHECK(sandbox_code_pool_wait(p, "python3", 1, WAIT_MS) == 0);
	sandbox_code_pool_stats(p, &st0);
	w.p = p;
	w.n = st0.expired;
	CHECK(wait_until(expired_past, &w, WAIT_MS) == 0);
	CHECK(sandbox_code_pool_wait(p, "python3", 1, WAIT_MS) == 0);
	sandbox_code_pool_stats(p, &st);
	CHECK(st.started > st0.started);
	CHECK_INT(st.hits, 0);
	sandbox_code_pool_free(p);
}

/* Folder dir (a runner's) is not on any host process's command line. */
static int
no_runner(void *dir)
{
	return host_procs(dir, NULL, NULL) == 0;
}

/* The pool's sandbox folder holds n entries. */
struct entries {
	const char	*dir;
	int		 n;
};

static int
entries_are(void *arg)
{
	struct entries *e = arg;

	return dir_entries(e->dir) == e->n;
}

/*
 * A job that leaves processes and timers behind still answers; then the
 * thread kills its runner, the processes and all, and removes its
 * sandbox, with code.pool_idle 0 (runners kept forever) so that nothing
 * but the job's end can have done it.
 */
static void
test_discard(int fork)
{
	static const char *const lang[2] = {"python3", "javascript"};
	/* one-shot runners by interpreter and file; both fork servers are
	 * python3, and their last word is the language */
	static const char *const shot_prefix[2] = {"python3 ", "node "};
	static const char *const shot_file[2] = {"runner.py", "runner.js"};
	static const char *const fork_prefix[2] = {"python3 ", "python3 "};
	static const char *const fork_file[2] = {" python3 ", " javascript "};
	const char *const *prefix = fork ? fork_prefix : shot_prefix;
	const char *const *file = fork ? fork_file : shot_file;
	struct sandbox_code_pool	*p = NULL;
	struct sandbox_code_result	 r = {0};
	struct sandbox_config		 cfg;
	struct entries			 e;
	char				 err[ENGINE_ERRMAX], code[512];
	char				 dirs[8][64], arg[32], needle[64];
	pid_t				 pids[8];
	int				 i, n;

	cfg_new(&cfg);
	CHECK_INT(sandbox_code_pool_new(&cfg, 1, 0, &p), 0);
	if (p == NULL)
		return;
	sandbox_code_pool_tune(p, fork ? SANDBOX_FORK_PYTHON3 |
	    SANDBOX_FORK_JAVASCRIPT : 0, 1, 0, 0);
	for (i = 0; i < 2; i++) {
		CHECK(sandbox_code_pool_wait(p, lang[i], 1, WAIT_MS) == 0);
		n = runners(prefix[i], file[i], pids, dirs, 8);
		CHECK_INT(n, 1);
		if (n != 1)
			continue;
		/* a sleep(1) no other process has, found by its
		 * command line */
		snprintf(arg, sizeof(arg), "2000.%d%d", (int)getpid(), i);
		snprintf(needle, sizeof(needle), "sleep %s ", arg);
		if (i == 0)
			snprintf(code, sizeof(code), "import subprocess, "
			    "threading, time\ndef main():\n"
			    "    subprocess.Popen(['sleep', '%s'])\n"
			    "    threading.Thread(target=time.sleep, "
			    "args=(1000,)).start()\n"
			    "    return {'ok': 1}\n", arg);
		else
			snprintf(code, sizeof(code), "const cp = "
			    "require('child_process');\nfunction main() {\n"
			    "  cp.spawn('sleep', ['%s']);\n"
			    "  setInterval(() => {}, 1000);\n"
			    "  return {ok: 1};\n}\n", arg);
		CHECK_INT(run_warm(p, &cfg, lang[i], code, 0, err, &r), 0);
		CHECK_STR(tap_json(r.outputs), "{\"ok\":1}");
		sandbox_code_result_release(&r);
		/* what the code started goes; a one-shot runner and its
		 * sandbox go too and a fresh runner takes its place, a fork
		 * server stays for the next job */
		if (fork)
			CHECK_INT(runners(prefix[i], dirs[0], pids, NULL, 8),
			    1);
		else
			CHECK(wait_until(no_runner, dirs[0], WAIT_MS) == 0);
		CHECK(wait_until(no_host_proc, needle, WAIT_MS) == 0);
		CHECK(sandbox_code_pool_wait(p, lang[i], 1, WAIT_MS) == 0);
		e.dir = cfg.dir;
		/* one warm runner per language used: its folder and owner
		 * file */
		e.n = 2 * (i + 1);
		CHECK(wait_until(entries_are, &e, WAIT_MS) == 0);
	}
	sandbox_code_pool_free(p);
	CHECK_INT(dir_entries(cfg.dir), 0);
}

/* Freeing the pool kills and reaps every runner and removes its sandbox:
 * no process, folder or mount is left. */
static void
test_shutdown(void)
{
	struct sandbox_code_pool	*p = NULL;
	struct sandbox_config		 cfg;
	pid_t				 pids[8];
	char				 dirs[8][64];
	int				 i, n, t0 = threads();

	cfg_new(&cfg);
	CHECK_INT(sandbox_code_pool_new(&cfg, 1, 0, &p), 0);
	if (p == NULL)
		return;
	CHECK(sandbox_code_pool_wait(p, "python3", 1, WAIT_MS) == 0);
	CHECK(sandbox_code_pool_wait(p, "javascript", 1, WAIT_MS) == 0);
	CHECK_INT(runners("python3 ", "runner.py", pids, NULL, 8), 1);
	CHECK_INT(runners("node ", "runner.js", pids, NULL, 8), 1);
	/* with their bwrap (outside and pid 1 inside) */
	n = runners("", "runner.", pids, dirs, 8);
	CHECK_INT(n, 6);
	/* two sandboxes, each with its owner file */
	CHECK_INT(dir_entries(cfg.dir), 4);
	CHECK_INT(threads(), t0 + 1);
	sandbox_code_pool_free(p);
	CHECK_INT(dir_entries(cfg.dir), 0);
	CHECK_INT(mounts_under(cfg.dir), 0);
	CHECK_INT(threads(), t0);
	CHECK_INT(runners("", "", pids, NULL, 8), 0);
	/* the interpreters went with their pid namespaces: by their runner
	 * folders, nowhere on the host */
	for (i = 0; i < n && i < 8; i++)
		CHECK(wait_until(no_host_proc, dirs[i], 10000) == 0);
}

int
main(void)
{
	struct conf	 c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!host_bwrap_check() || !NEED("node"))
		return tap_done();
	if (!CHECK(system("PATH=/usr/bin:/bin command -v python3 >/dev/null")
	    == 0)) {
		printf("# python3 not found in /usr/bin: install the Debian "
		    "package python3\n");
		return tap_done();
	}
	if (tmp_dir_make("t_sandbox_codepool", top, sizeof(top)) != 0)
		return tap_done();
	conf_defaults(&c);
	snprintf(c.data_dir, sizeof(c.data_dir), "%s", top);
	sandbox_config_init(&base, &c);
	base.timeout = 20;

	test_empty();
	test_no_reuse();
	test_killed();
	test_limits();
	test_idle();
	test_discard(1);
	test_discard(0);
	test_shutdown();

	tmp_dir_remove(top);
	return tap_done();
}
