/*
 * t_sandbox_hardening.c — what the local (bubblewrap) sandbox refuses:
 * no namespaces of any kind (unshare -U, unshare(2) of user, mount and
 * network namespaces, setns, clone3), no mount, ptrace, bpf, keyrings,
 * perf, userfaultfd, io_uring or personality changes, each failing with
 * EPERM (clone3: ENOSYS) rather than a kill; a view of the host without
 * /usr/local, /usr/src or the host's accounts; and what must still work
 * under the filter (fork, threads, subprocesses, node, pip into a venv).
 * Also: a seccomp filter that cannot be built fails sandbox create, and
 * the same refusals hold on the path taken without root.
 *
 * The provider is included to reach its filter builder and rule table.
 * Needs bwrap (Debian package bubblewrap), python3 (with venv) and node:
 * a missing bwrap or node is one counted skip (NEED), python3 a failure.
 */
#include "engine/sandbox/local.c"

#include <grp.h>

#include "tests/unit/tap.h"

static char	top[256];		/* this test's temporary folder */

/* A config like the defaults, with workspaces under top (or dir). */
static void
config(struct sandbox_config *cfg, const char *dir)
{
	struct conf c;

	conf_defaults(&c);
	snprintf(c.data_dir, sizeof(c.data_dir), "%s", dir ? dir : top);
	sandbox_config_init(cfg, &c);
	cfg->timeout = 60;
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

/* Runs a shell command; returns exec's code; res filled. */
static int
sh(struct sandbox *sb, const char *cmd, struct sandbox_exec_result *res)
{
	struct sandbox_exec_req	req = {0};
	char			err[ENGINE_ERRMAX];
	int			rc;

	req.shell = cmd;
	if ((rc = sandbox_exec(sb, &req, err, res)) != 0)
		printf("# exec '%s': %s\n", cmd, err);
	return rc;
}

/* Runs cmd and compares its stdout with want (exit code 0 expected). */
static void
sh_is(struct sandbox *sb, const char *cmd, const char *want)
{
	struct sandbox_exec_result	r = {0};
	int				rc;

	rc = sh(sb, cmd, &r);
	CHECK_INT(rc, 0);
	if (rc == 0) {
		CHECK_STR(r.out, want);
		if (strcmp(r.out, want) != 0)
			printf("# '%s' stderr: %.300s\n", cmd, r.err);
	}
	sandbox_exec_result_release(&r);
}

/* ====== The filter is built or create fails ====== */

static void
test_filter_build(void)
{
	static const struct sc_rule	 bad[] = {
		{"ptrace", EPERM, SC_ALL, 0, 0, 0},
		{"no_such_call_x", EPERM, SC_ALL, 0, 0, 0},
	};
	static const struct sc_rule	 optional[] = {
		{"ptrace", EPERM, SC_ALL, 0, 0, 0},
		{"no_such_call_x", EPERM, SC_ALL, 0, 0, 1},
	};
	struct sandbox_config		 cfg;
	struct sandbox			*sb = NULL;
	unsigned char			*bpf = NULL;
	size_t				 len = 0;
	char				 err[ENGINE_ERRMAX] = "";

	/* the real list builds, into whole BPF instructions */
	CHECK_INT(sc_build(sc_rules, sizeof(sc_rules) / sizeof(*sc_rules), err,
	    &bpf, &len), 0);
	CHECK(bpf != NULL && len > 0 && len % 8 == 0 && len <= BPF_MAX);
	printf("# seccomp program: %zu instructions\n", len / 8);
	free(bpf);

	/* an unknown required call fails the build and says which */
	CHECK_INT(sc_build(bad, 2, err, &bpf, &len), SANDBOX_EFAIL);
	CHECK(bpf == NULL && len == 0);
	CHECK(strstr(err, "no_such_call_x") != NULL);
	/* an unknown optional call is left out */
	CHECK_INT(sc_build(optional, 2, err, &bpf, &len), 0);
	free(bpf);

	/* create refuses to make a sandbox it cannot filter */
	config(&cfg, NULL);
	sc_table = bad;
	sc_table_len = 2;
	CHECK_INT(sandbox_create(&sandbox_provider_local, &cfg, err, &sb),
	    SANDBOX_EFAIL);
	CHECK(sb == NULL);
	CHECK(strstr(err, "seccomp filter") != NULL &&
	    strstr(err, "no_such_call_x") != NULL);
	printf("# %s\n", err);
	sc_table = sc_rules;
	sc_table_len = sizeof(sc_rules) / sizeof(*sc_rules);
	sandbox_free(sb);
}

/* ====== Refused calls ====== */

/*
 * Each call once through ctypes, printing "name ERRNO strerror" or
 * "name OK". Numbers of the calls glibc has no wrapper for are per
 * architecture.
 */
static const char refusals_py[] =
    "import ctypes, errno, os, platform, subprocess, threading\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "libc.syscall.restype = ctypes.c_long\n"
    "NR = {'x86_64': dict(bpf=321, keyctl=250, perf=298, uffd=323,\n"
    "                     uring=425, clone3=435),\n"
    "      'aarch64': dict(bpf=280, keyctl=219, perf=241, uffd=282,\n"
    "                      uring=425, clone3=435)}[platform.machine()]\n"
    "def call(name, f, *a):\n"
    "    ctypes.set_errno(0)\n"
    "    rc = f(*a)\n"
    "    e = ctypes.get_errno()\n"
    "    if rc == -1:\n"
    "        print(name, errno.errorcode.get(e, e), os.strerror(e))\n"
    "    else:\n"
    "        print(name, 'OK')\n"
    "def sc(nr, *a):\n"
    "    return libc.syscall(ctypes.c_long(nr), *a)\n"
    "NEWUSER, NEWNS, NEWNET = 0x10000000, 0x00020000, 0x40000000\n"
    "call('unshare_user', libc.unshare, NEWUSER)\n"
    "call('unshare_user_ns_net', libc.unshare, NEWUSER | NEWNS | NEWNET)\n"
    "call('unshare_ns', libc.unshare, NEWNS)\n"
    "call('setns', libc.setns, -1, 0)\n"
    "call('mount_tmpfs', libc.mount, b'none', b'/tmp', b'tmpfs', 0, None)\n"
    "call('umount2', libc.umount2, b'/tmp', 0)\n"
    "call('chroot', libc.chroot, b'/')\n"
    "call('ptrace_traceme', libc.ptrace, 0, 0, None, None)\n"
    "call('bpf', sc, NR['bpf'], 9999, None, 0)\n"
    "call('keyctl', sc, NR['keyctl'], 0, -3, 0)\n"
    "call('perf_event_open', sc, NR['perf'], None, 0, -1, -1, 0)\n"
    "call('userfaultfd', sc, NR['uffd'], 1)\n"
    "call('io_uring_setup', sc, NR['uring'], 1, None)\n"
    "call('personality_norandom', libc.personality, 0x0040000)\n"
    "call('personality_linux', libc.personality, 0)\n"
    "call('clone3', sc, NR['clone3'], None, 0)\n"
    "AF_UNIX, AF_INET, AF_NETLINK, STREAM, DGRAM, RAW = 1, 2, 16, 1, 2, 3\n"
    "call('socket_netlink_route', libc.socket, AF_NETLINK, RAW, 0)\n"
    "call('socket_netlink_uevent', libc.socket, AF_NETLINK, DGRAM, 15)\n"
    "call('socket_unix', libc.socket, AF_UNIX, STREAM, 0)\n"
    "call('socket_inet', libc.socket, AF_INET, STREAM, 0)\n"
    "import socket\n"
    "a = socket.getaddrinfo('localhost', 80, socket.AF_INET, 0, 0,\n"
    "    socket.AI_ADDRCONFIG)\n"
    "print('getaddrinfo_addrconfig', 'OK' if a else 'FAILED')\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    os._exit(7)\n"
    "print('fork', 'OK' if os.waitpid(pid, 0)[1] >> 8 == 7 else 'FAILED')\n"
    "box = []\n"
    "t = threading.Thread(target=lambda: box.append(1))\n"
    "t.start(); t.join()\n"
    "print('thread', 'OK' if box == [1] else 'FAILED')\n"
    "r = subprocess.run(['sh', '-c', 'echo sub'], capture_output=True)\n"
    "print('subprocess', 'OK' if r.stdout == b'sub\\n' else 'FAILED')\n";

static const char refusals_want[] =
    "unshare_user EPERM Operation not permitted\n"
    "unshare_user_ns_net EPERM Operation not permitted\n"
    "unshare_ns EPERM Operation not permitted\n"
    "setns EPERM Operation not permitted\n"
    "mount_tmpfs EPERM Operation not permitted\n"
    "umount2 EPERM Operation not permitted\n"
    "chroot EPERM Operation not permitted\n"
    "ptrace_traceme EPERM Operation not permitted\n"
    "bpf EPERM Operation not permitted\n"
    "keyctl EPERM Operation not permitted\n"
    "perf_event_open EPERM Operation not permitted\n"
    "userfaultfd EPERM Operation not permitted\n"
    "io_uring_setup EPERM Operation not permitted\n"
    "personality_norandom EPERM Operation not permitted\n"
    "personality_linux OK\n"
    "clone3 ENOSYS Function not implemented\n"
    "socket_netlink_route EAFNOSUPPORT Address family not supported by "
    "protocol\n"
    "socket_netlink_uevent EAFNOSUPPORT Address family not supported by "
    "protocol\n"
    "socket_unix OK\n"
    "socket_inet OK\n"
    "getaddrinfo_addrconfig OK\n"
    "fork OK\n"
    "thread OK\n"
    "subprocess OK\n";

/* The refusals, through tools and through the calls themselves. */
static void
refusals(struct sandbox *sb)
{
	struct sandbox_exec_result	 r = {0};
	struct sandbox_exec_req		 req = {0};
	static const char *const	 argv[] = {"python3", "-c", refusals_py,
	    NULL};
	char				 err[ENGINE_ERRMAX];
	int				 rc;

	/* a filter is on, in filter mode */
	sh_is(sb, "grep '^Seccomp:' /proc/self/status", "Seccomp:\t2\n");
	/* no descriptor of bwrap's set-up is left open (3 is ls's own) */
	sh_is(sb, "ls /proc/self/fd", "0\n1\n2\n3\n");

	/* the tools say why: EPERM, not a kill */
	CHECK_INT(sh(sb, "unshare -U true", &r), 0);
	CHECK(r.exit_code != 0 && r.signal == 0);
	CHECK(strstr(r.err, "Operation not permitted") != NULL);
	printf("# unshare -U: %.200s", r.err);
	sandbox_exec_result_release(&r);
	CHECK_INT(sh(sb, "unshare -Urmn sh -c 'mount -t tmpfs none /tmp && "
	    "echo mounted'", &r), 0);
	CHECK(r.exit_code != 0 && r.signal == 0);
	CHECK(strstr(r.out, "mounted") == NULL);
	CHECK(strstr(r.err, "Operation not permitted") != NULL);
	sandbox_exec_result_release(&r);
	CHECK_INT(sh(sb, "mount -t tmpfs none /tmp && echo mounted", &r), 0);
	CHECK(r.exit_code != 0 && r.signal == 0);
	CHECK(strstr(r.out, "mounted") == NULL);
	printf("# mount -t tmpfs: %.200s", r.err);
	sandbox_exec_result_release(&r);

	/* each call, with its errno */
	req.argv = argv;
	rc = sandbox_exec(sb, &req, err, &r);
	CHECK_INT(rc, 0);
	if (rc == 0) {
		CHECK_STR(r.out, refusals_want);
		CHECK_INT(r.exit_code, 0);
		if (r.exit_code != 0)
			printf("# stderr: %.400s\n", r.err);
	} else
		printf("# exec: %s\n", err);
	sandbox_exec_result_release(&r);
}

static void
test_refusals(void)
{
	struct sandbox_config	 cfg;
	struct sandbox		*sb;

	config(&cfg, NULL);
	if (!CHECK((sb = make(&cfg)) != NULL))
		return;
	refusals(sb);
	sandbox_free(sb);

	/* with the network shared, the same */
	config(&cfg, NULL);
	cfg.network = 1;
	if (!CHECK((sb = make(&cfg)) != NULL))
		return;
	refusals(sb);
	sandbox_free(sb);
}

/* ====== What the sandbox sees ====== */

/* 0 when /proc/name exists on the host, else -1. */
static int
access_proc(const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%s", name);
	return access(path, F_OK);
}

/* What the sandbox shows of /usr, /etc and itself. */
static void
view(struct sandbox *sb, const char *user)
{
	struct sandbox_exec_result	r = {0};
	struct sandbox_exec_req		req = {0};
	char				want[256], needle[300], cmd[64];
	char				err[ENGINE_ERRMAX];
	const char			*env[] = {needle, NULL};
	size_t				i;

	sh_is(sb, "test -e /usr/local && echo visible || echo absent",
	    "absent\n");
	sh_is(sb, "test -e /usr/src && echo visible || echo absent",
	    "absent\n");
	sh_is(sb, "ls /usr/local/bin 2>/dev/null | wc -l", "0\n");
	sh_is(sb, "test -x /usr/bin/python3 && test -d /usr/lib && "
	    "test -d /usr/share && echo ok", "ok\n");
	sh_is(sb, "echo \"$PATH\"", "/usr/bin:/bin\n");
	/* the host's accounts are not shown, the sandbox's own are */
	sh_is(sb, "cut -d: -f1 /etc/passwd | grep -cvxE 'root|sandbox|nobody'",
	    "0\n");
	snprintf(want, sizeof(want), "%s\n", user);
	sh_is(sb, "whoami", want);
	sh_is(sb, "python3 -c 'import os, pwd; "
	    "print(pwd.getpwuid(os.getuid()).pw_dir)'", "/workspace\n");
	sh_is(sb, "cat /etc/hosts", etc_hosts);
	/* what /proc says of the host is empty, and reads without error */
	sh_is(sb, "cat /proc/cmdline && wc -c </proc/cmdline", "0\n");
	for (i = 0; i < local_proc_hidden_len; i++) {
		if (access_proc(local_proc_hidden[i]) != 0)
			continue;
		snprintf(cmd, sizeof(cmd), "wc -c </proc/%s",
		    local_proc_hidden[i]);
		sh_is(sb, cmd, "0\n");
	}
	/* what describes the sandbox itself stays */
	sh_is(sb, "grep -c '^MemTotal:' /proc/meminfo && "
	    "grep -c '^Pid:' /proc/self/status", "1\n1\n");
	/* no host path of the sandbox in bwrap's command line (pid 1; the
	 * path comes in the environment, else the command would hold it) */
	snprintf(needle, sizeof(needle), "NEEDLE=%s", top);
	req.shell = "tr '\\0' '\\n' </proc/1/cmdline | grep -cF \"$NEEDLE\"";
	req.env = env;
	CHECK_INT(sandbox_exec(sb, &req, err, &r), 0);
	CHECK_STR(r.out, "0\n");
	sandbox_exec_result_release(&r);
	/* and the files are read-only */
	CHECK_INT(sh(sb, "echo x >> /etc/passwd || echo refused", &r), 0);
	CHECK(strstr(r.out, "refused") != NULL);
	sandbox_exec_result_release(&r);
}

static void
test_view(void)
{
	struct sandbox_config	 cfg;
	struct sandbox		*sb;
	struct stat		 st;

	/* On this host /usr/local exists: hidden is not missing. */
	if (stat("/usr/local", &st) != 0)
		printf("# no /usr/local on this host\n");
	config(&cfg, NULL);
	if (!CHECK((sb = make(&cfg)) != NULL))
		return;
	view(sb, "sandbox");
	sandbox_free(sb);
}

/* ====== What must still work ====== */

/* A wheel made on the spot, installed offline into a venv. */
static const char venv_sh[] =
    "set -e\n"
    "python3 - <<'EOF'\n"
    "import zipfile\n"
    "z = zipfile.ZipFile('hello_pkg-1.0-py3-none-any.whl', 'w')\n"
    "z.writestr('hello_pkg.py', 'def hi():\\n    return \"hi from wheel\"\\n')\n"
    "z.writestr('hello_pkg-1.0.dist-info/METADATA',\n"
    "    'Metadata-Version: 2.1\\nName: hello-pkg\\nVersion: 1.0\\n')\n"
    "z.writestr('hello_pkg-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\n'\n"
    "    'Generator: t\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')\n"
    "z.writestr('hello_pkg-1.0.dist-info/RECORD', '')\n"
    "z.close()\n"
    "EOF\n"
    "python3 -m venv venv\n"
    "venv/bin/pip install -q --no-index --no-cache-dir "
    "--disable-pip-version-check ./hello_pkg-1.0-py3-none-any.whl\n"
    "venv/bin/python -c 'import hello_pkg; print(hello_pkg.hi())'\n";

static void
test_works(void)
{
	struct sandbox_config		 cfg;
	struct sandbox			*sb;
	struct sandbox_exec_result	 r = {0};

	config(&cfg, NULL);
	if (!CHECK((sb = make(&cfg)) != NULL))
		return;
	CHECK_INT(sh(sb, venv_sh, &r), 0);
	CHECK_STR(r.out, "hi from wheel\n");
	CHECK_INT(r.exit_code, 0);
	if (r.exit_code != 0)
		printf("# venv: %.600s\n", r.err);
	sandbox_exec_result_release(&r);
	sh_is(sb, "node -e \"const cp = require('child_process'); "
	    "const w = new (require('worker_threads').Worker)("
	    "'require(\\\"worker_threads\\\").parentPort.postMessage(6*7)', "
	    "{eval: true}); w.on('message', m => { console.log(m, "
	    "cp.execSync('echo child').toString().trim()); w.terminate(); })\"",
	    "42 child\n");
	sh_is(sb, "python3 -c 'import multiprocessing as m; "
	    "print(sum(m.Pool(2).map(abs, [-1, -2, 3])))'", "6\n");
	sandbox_free(sb);
}

/* ====== Without root ====== */

/*
 * The path taken when flowcgi is not root (bwrap makes the user namespace,
 * with --disable-userns where it exists): in a child as nobody, the same
 * refusals and view. The child's checks print their own TAP lines; its
 * exit status says whether all passed.
 */
/*
 * flowcgi's user has more processes than sandbox.processes elsewhere on the
 * host (a web server's workers, when flowcgi runs as www-data): a sandbox
 * still starts, and the limit counts the sandbox's own processes. Set
 * before bwrap, RLIMIT_NPROC counted every process of the user, and bwrap
 * could not make its namespace ("Resource temporarily unavailable").
 */
static void
crowded_user(const char *dir)
{
	struct sandbox_config	 cfg;
	struct sandbox		*sb;
	pid_t			 kids[24];
	int			 i, n = 0;

	config(&cfg, dir);
	cfg.processes = 16;
	for (i = 0; i < 24; i++) {	/* more than 16, outside any sandbox */
		if ((kids[n] = fork()) == 0) {
			pause();
			_exit(0);
		}
		if (kids[n] > 0)
			n++;
	}
	CHECK_INT(n, 24);
	if (CHECK((sb = make(&cfg)) != NULL)) {
		sh_is(sb, "echo started", "started\n");
		/* 20 at once inside is past the sandbox's own 16 */
		sh_is(sb, "python3 -c 'import os, signal\n"
		    "kids = []\n"
		    "try:\n"
		    "    for i in range(20):\n"
		    "        k = os.fork()\n"
		    "        if k == 0:\n"
		    "            signal.pause()\n"
		    "        kids.append(k)\n"
		    "except OSError:\n"
		    "    pass\n"
		    "for k in kids:\n"
		    "    os.kill(k, 9)\n"
		    "print(\"limited\" if len(kids) < 20 else len(kids))'",
		    "limited\n");
		sandbox_free(sb);
	}
	for (i = 0; i < n; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
}

static void
test_unprivileged(void)
{
	struct sandbox_config	 cfg;
	struct sandbox		*sb;
	char			 dir[300], err[ENGINE_ERRMAX];
	pid_t			 pid;
	uid_t			 uid;
	int			 status = -1;

	if (geteuid() != 0) {
		/* this run is the unprivileged one already */
		CHECK(sandbox_local_probe(NULL, err) == 0);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/nobody", top);
	if (!CHECK(mkdir(dir, 0700) == 0 && chown(dir, 65534, 65534) == 0 &&
	    chmod(top, 0711) == 0))
		return;
	fflush(stdout);
	if ((pid = fork()) == 0) {
		if (setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) != 0
		    || setresuid(65534, 65534, 65534) != 0)
			_exit(99);
		tap_n = 100000;		/* numbers apart from the parent's */
		if (sandbox_local_probe(NULL, err) != 0) {
			CHECK(!"the local sandbox works without root");
			printf("# probe as nobody: %s\n", err);
			fflush(stdout);
			_exit(1);
		}
		config(&cfg, dir);
		if (CHECK((sb = make(&cfg)) != NULL)) {
			CHECK_INT(((struct local *)sb)->no_userns,
			    bwrap_disable_userns(((struct local *)sb)->bwrap));
			refusals(sb);
			view(sb, "sandbox");
			sandbox_free(sb);
		}
		fflush(stdout);
		_exit(tap_failed == 0 ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* The crowded user: a uid of its own, so that its processes take
	 * nothing from nobody's (the uid of the sandboxes that tests side by
	 * side run as root). */
	uid = 64000 + (uid_t)(getpid() % 1000);
	snprintf(dir, sizeof(dir), "%s/crowded", top);
	if (!CHECK(mkdir(dir, 0700) == 0 && chown(dir, uid, uid) == 0))
		return;
	fflush(stdout);
	status = -1;
	if ((pid = fork()) == 0) {
		if (setgroups(0, NULL) != 0 || setresgid(uid, uid, uid) != 0 ||
		    setresuid(uid, uid, uid) != 0)
			_exit(99);
		tap_n = 200000;
		crowded_user(dir);
		fflush(stdout);
		_exit(tap_failed == 0 ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int
main(void)
{
	const char	*tmp = getenv("TMPDIR");
	char		 cmd[400];

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A missing bwrap or node is a counted skip; python3 must be. */
	if (!NEED("bwrap") || !NEED("node"))
		return tap_done();
	if (!CHECK(system("PATH=/usr/bin:/bin command -v python3 >/dev/null")
	    == 0)) {
		printf("# needs python3 in /usr: install the Debian package "
		    "python3-venv\n");
		return tap_done();
	}
	snprintf(top, sizeof(top), "%s/t_sandbox_hardening_XXXXXX",
	    tmp && tmp[0] == '/' && strlen(tmp) < 100 ? tmp : "/tmp");
	if (!CHECK(mkdtemp(top) != NULL))
		return tap_done();
	test_filter_build();
	test_refusals();
	test_view();
	test_works();
	test_unprivileged();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", top);
	return tap_done();
}
