/*
 * codefork.c — python3 and javascript code nodes on a fork server.
 *
 * A warm runner of the pool (codepool.c) used to serve one code node and
 * die with its sandbox: back to back, the next node found no runner and
 * paid a bwrap start and an interpreter start (tens of milliseconds of
 * CPU). A fork server serves many: python3 started once in a local
 * sandbox of its own (the same bwrap, seccomp filter, user, mounts,
 * network and rlimits as a cold runner) on the program below, which
 * imports the standard library modules code nodes use, makes itself not
 * dumpable and the subreaper of every process below it, ignores every
 * signal it can, says 'R' on its control pipe and waits on its standard
 * input for jobs. For each job it forks a child, which:
 *
 *   - starts a session of its own, takes the default signal actions back,
 *     and installs a second seccomp filter (on top of the sandbox's) that
 *     refuses kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo
 *     and pidfd_open aimed at the server, its parent or pid 1 (and at
 *     their process groups, and -1), pidfd_send_signal, and every call of
 *     another ABI: the code cannot signal the server, and (not dumpable,
 *     ptrace and process_vm_* refused by the sandbox's filter) cannot read
 *     or steer it either;
 *   - runs in /workspace, which the server emptied, with standard input
 *     /dev/null and standard output and error pipes of its own to the
 *     server, and the server's rlimits (its CPU time counted from zero);
 *   - runs the code exactly as the one-shot runner does (code.c: the same
 *     main(**inputs), markers, summary line, output-limit check).
 *
 * The server reads the child's output (at most sandbox.max_output of each
 * stream), kills it at the job's wall-clock limit, and when it ended
 * kills every process left below it (a walk of /proc: everything whose
 * parent chain reaches the server, which as subreaper inherits every
 * orphan), then answers on the control pipe: a line "A exit signal
 * timed_out out_len out_cut err_len err_cut retire" and the bytes. Then
 * it empties /workspace, /tmp and /dev/shm, and only then reads the next
 * job. Nothing of one node (globals, sys.modules, builtins, files,
 * processes, environment) reaches the next: each child is a fresh copy
 * of a server that never ran user code.
 *
 * javascript: the server is the same python3 program (argument
 * "javascript"), which imports no modules for code; its child, once set
 * up as above (session, signals, second filter, /workspace, pipes),
 * executes node -e on fork_node_head and the one-shot runner's job, with
 * the job's pipe as descriptor 3. The child is forked ahead, as for
 * python3, so node's start-up (most of a cold javascript node) happens
 * between two jobs, not in one; each node still runs in a fresh node
 * process. fork() of a running node is not safe (V8's and libuv's
 * threads): docs/sandbox.md says why this and not a node that forks.
 *
 * The server retires (says so in its answer, then exits; the pool starts
 * another) when leftovers would not die or when its own CPU time passes
 * half of sandbox.cpu_seconds. Whatever goes wrong on the host side (the
 * run is stopped, the server does not answer 2 s past the job's limit,
 * it died) marks the runner dead: the pool kills its sandbox.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/sandbox/sandbox.h"

/* How long past the job's limit the server may take to answer. */
#define FORK_GRACE_US	2000000

/* The server program: this, then ... */
static const char fork_server_head[] =
    "import os, sys, json, traceback, signal, ctypes, struct, platform, resource\n"
    "import select, stat, time\n"
    "d, LANG = sys.argv[1], sys.argv[2]\n"
    "JS = None\n"
    "if LANG == 'javascript':\n"
    "    with open(os.path.join(d, 'runner.js'), encoding='utf-8') as f:\n"
    "        JS = f.read()\n"
    "else:\n"
    "    import re, math, datetime, random, base64, hashlib, collections\n"
    "    import itertools, functools, string, uuid, decimal, statistics\n"
    "    import textwrap, copy, typing, io, csv, urllib.parse\n"
    "try:\n"
    "    for n in ('runner.py', 'runner.js'):\n"
    "        if os.path.exists(os.path.join(d, n)):\n"
    "            os.unlink(os.path.join(d, n))\n"
    "    os.rmdir(d)\n"
    "except OSError:\n"
    "    pass\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "libc.prctl(4, 0, 0, 0, 0)\n"
    "libc.prctl(36, 1, 0, 0, 0)\n"
    "libc.prctl(38, 1, 0, 0, 0)\n"
    "try:\n"
    "    os.setpgid(0, 0)\n"
    "except OSError:\n"
    "    pass\n"
    "ME, PP = os.getpid(), os.getppid()\n"
    "if ME > 8 or not os.path.isdir('/workspace'):\n"
    "    sys.stderr.write('flowcgi fork server: not in a sandbox\\n')\n"
    "    os._exit(3)\n"
    "SIGS = [s for s in signal.Signals if s not in (signal.SIGKILL,\n"
    "    signal.SIGSTOP, signal.SIGCHLD)]\n"
    "for s in SIGS:\n"
    "    try:\n"
    "        signal.signal(s, signal.SIG_IGN)\n"
    "    except (OSError, ValueError):\n"
    "        pass\n"
    "def bpf():\n"
    "    m = platform.machine()\n"
    "    if m == 'x86_64':\n"
    "        arch, nrs = 0xC000003E, (62, 200, 234, 129, 297, 434)\n"
    "    elif m == 'aarch64':\n"
    "        arch, nrs = 0xC00000B7, (129, 130, 131, 138, 240, 434)\n"
    "    else:\n"
    "        return None\n"
    "    deny, allow = 0x00050001, 0x7fff0000\n"
    "    bad = sorted({ME, (-ME) & 0xffffffff, PP, (-PP) & 0xffffffff,\n"
    "        1, 0xffffffff})\n"
    "    p = [(0x20, 0, 0, 4), (0x15, 1, 0, arch), (0x06, 0, 0, deny),\n"
    "        (0x20, 0, 0, 0)]\n"
    "    if arch == 0xC000003E:\n"
    "        p.append((0x35, 0, 1, 0x40000000))\n"
    "        p.append((0x06, 0, 0, deny))\n"
    "    p.append((0x15, 0, 1, 424))\n"
    "    p.append((0x06, 0, 0, deny))\n"
    "    n = len(nrs)\n"
    "    for i, nr in enumerate(nrs):\n"
    "        p.append((0x15, n - i, 0, nr))\n"
    "    p.append((0x06, 0, 0, allow))\n"
    "    p.append((0x20, 0, 0, 16))\n"
    "    for i, v in enumerate(bad):\n"
    "        p.append((0x15, len(bad) - i, 0, v))\n"
    "    p.append((0x06, 0, 0, allow))\n"
    "    p.append((0x06, 0, 0, deny))\n"
    "    raw = b''.join(struct.pack('HBBI', *x) for x in p)\n"
    "    buf = ctypes.create_string_buffer(raw, len(raw))\n"
    "    class Prog(ctypes.Structure):\n"
    "        _fields_ = [('len', ctypes.c_ushort), ('filt', ctypes.c_void_p)]\n"
    "    return buf, Prog(len(p), ctypes.cast(buf, ctypes.c_void_p))\n"
    "FILTER = bpf()\n"
    "cpu_lim = resource.getrlimit(resource.RLIMIT_CPU)[0]\n"
    "def ctl(b):\n"
    "    v = memoryview(b)\n"
    "    while len(v):\n"
    "        v = v[os.write(11, v):]\n"
    "def readn(n):\n"
    "    b = bytearray()\n"
    "    while len(b) < n:\n"
    "        c = os.read(0, n - len(b))\n"
    "        if not c:\n"
    "            os._exit(0)\n"
    "        b += c\n"
    "    return bytes(b)\n"
    "def readline():\n"
    "    b = bytearray()\n"
    "    while True:\n"
    "        c = os.read(0, 1)\n"
    "        if not c:\n"
    "            os._exit(0)\n"
    "        if c == b'\\n':\n"
    "            return bytes(b)\n"
    "        b += c\n"
    ;

/* ... then job() (sandbox_code_python_job, code.c), then: */
static const char fork_server_tail[] =
    "def child(jr, ow, ew):\n"
    "    try:\n"
    "        os.setsid()\n"
    "        for s in SIGS:\n"
    "            try:\n"
    "                signal.signal(s, signal.SIG_DFL)\n"
    "            except (OSError, ValueError):\n"
    "                pass\n"
    "        signal.signal(signal.SIGPIPE, signal.SIG_IGN)\n"
    "        if FILTER is not None and libc.prctl(22, 2,\n"
    "                ctypes.byref(FILTER[1]), 0, 0) != 0:\n"
    "            os._exit(70)\n"
    "        os.chdir('/workspace')\n"
    "        nul = os.open('/dev/null', os.O_RDONLY)\n"
    "        os.dup2(nul, 0)\n"
    "        os.dup2(ow, 1)\n"
    "        os.dup2(ew, 2)\n"
    "        for f in (nul, ow, ew, 11):\n"
    "            os.close(f)\n"
    "        if JS is not None:\n"
    "            if jr == 3:\n"
    "                os.set_inheritable(3, True)\n"
    "            else:\n"
    "                os.dup2(jr, 3)\n"
    "                os.close(jr)\n"
    "            os.execvp('node', ['node', '-e', JS])\n"
    "        j = os.fdopen(jr, 'rb')\n"
    "        h = j.readline().split()\n"
    "        if len(h) != 4:\n"
    "            os._exit(0)\n"
    "        nsrc, nin, lim = (int(x) for x in h[:3])\n"
    "        src = j.read(nsrc).decode('utf-8', 'surrogateescape')\n"
    "        inputs = j.read(nin).decode('utf-8')\n"
    "        j.close()\n"
    "        job(src, json.loads(inputs), h[3].decode(), lim, os._exit)\n"
    "    except SystemExit as e:\n"
    "        c = e.code\n"
    "        if c is not None and not isinstance(c, int):\n"
    "            sys.stderr.write(str(c) + '\\n')\n"
    "            c = 1\n"
    "        for f in (sys.stdout, sys.stderr):\n"
    "            try:\n"
    "                f.flush()\n"
    "            except Exception:\n"
    "                pass\n"
    "        os._exit((c or 0) & 255)\n"
    "    except BaseException:\n"
    "        try:\n"
    "            traceback.print_exc()\n"
    "            sys.stderr.flush()\n"
    "        except BaseException:\n"
    "            pass\n"
    "    os._exit(70)\n"
    "def sweep():\n"
    "    t_end = time.monotonic() + 2\n"
    "    while True:\n"
    "        up, live = {}, []\n"
    "        for n in os.listdir('/proc'):\n"
    "            if not n.isdigit():\n"
    "                continue\n"
    "            try:\n"
    "                with open('/proc/' + n + '/stat', 'rb') as f:\n"
    "                    st = f.read()\n"
    "                i = st.rindex(b')')\n"
    "                f = st[i + 2:].split()\n"
    "                up[int(n)] = int(f[1])\n"
    "                if f[0] != b'Z':\n"
    "                    live.append(int(n))\n"
    "            except (OSError, ValueError, IndexError):\n"
    "                pass\n"
    "        left = 0\n"
    "        for p in live:\n"
    "            q, k = up.get(p), 0\n"
    "            while q is not None and q > 1 and q != ME and k < 4096:\n"
    "                q, k = up.get(q), k + 1\n"
    "            if q == ME and p != ME:\n"
    "                try:\n"
    "                    os.kill(p, signal.SIGKILL)\n"
    "                    left += 1\n"
    "                except OSError:\n"
    "                    pass\n"
    "        reap()\n"
    "        if left == 0:\n"
    "            return True\n"
    "        if time.monotonic() > t_end:\n"
    "            return False\n"
    "        time.sleep(0.001)\n"
    "def reap():\n"
    "    while True:\n"
    "        try:\n"
    "            if os.waitpid(-1, os.WNOHANG)[0] == 0:\n"
    "                return\n"
    "        except ChildProcessError:\n"
    "            return\n"
    "def rm(path):\n"
    "    try:\n"
    "        os.chmod(path, 0o700)\n"
    "    except OSError:\n"
    "        pass\n"
    "    try:\n"
    "        st = os.lstat(path)\n"
    "    except OSError:\n"
    "        return\n"
    "    if stat.S_ISDIR(st.st_mode):\n"
    "        try:\n"
    "            names = os.listdir(path)\n"
    "        except OSError:\n"
    "            names = []\n"
    "        for n in names:\n"
    "            rm(os.path.join(path, n))\n"
    "        try:\n"
    "            os.rmdir(path)\n"
    "        except OSError:\n"
    "            pass\n"
    "    else:\n"
    "        try:\n"
    "            os.unlink(path)\n"
    "        except OSError:\n"
    "            pass\n"
    "def wipe():\n"
    "    for top in ('/workspace', '/tmp', '/dev/shm'):\n"
    "        try:\n"
    "            os.chmod(top, 0o755 if top == '/workspace' else 0o1777)\n"
    "            names = os.listdir(top)\n"
    "        except OSError:\n"
    "            continue\n"
    "        for n in names:\n"
    "            rm(os.path.join(top, n))\n"
    "def spawn():\n"
    "    jr, jw = os.pipe()\n"
    "    orr, ow = os.pipe()\n"
    "    er, ew = os.pipe()\n"
    "    pid = os.fork()\n"
    "    if pid == 0:\n"
    "        for f in (jw, orr, er):\n"
    "            os.close(f)\n"
    "        child(jr, ow, ew)\n"
    "    for f in (jr, ow, ew):\n"
    "        os.close(f)\n"
    "    return pid, jw, orr, er\n"
    "nxt = spawn()\n"
    "ctl(b'R')\n"
    "while True:\n"
    "    h = readline().split()\n"
    "    if len(h) != 7 or h[0] != b'J':\n"
    "        os._exit(2)\n"
    "    nsrc, nin, lim, maxout, tmo = (int(x) for x in h[1:6])\n"
    "    mark = h[6].decode()\n"
    "    body = readn(nsrc + nin)\n"
    "    ctl(b'G')\n"
    "    t0 = time.monotonic()\n"
    "    pid, jw, orr, er = nxt\n"
    "    try:\n"
    "        m = memoryview(b'%d %d %d %s\\n' % (nsrc, nin, lim, h[6]) + body)\n"
    "        while len(m):\n"
    "            m = m[os.write(jw, m):]\n"
    "    except OSError:\n"
    "        pass\n"
    "    os.close(jw)\n"
    "    pfd = os.pidfd_open(pid)\n"
    "    bufs = {orr: bytearray(), er: bytearray()}\n"
    "    trunc = {orr: 0, er: 0}\n"
    "    po = select.poll()\n"
    "    for f in (orr, er, pfd):\n"
    "        po.register(f, select.POLLIN)\n"
    "    timed_out, exited, status = 0, False, 0\n"
    "    while not exited:\n"
    "        left = t0 + tmo / 1000.0 - time.monotonic()\n"
    "        if left <= 0:\n"
    "            timed_out = 1\n"
    "            os.kill(pid, signal.SIGKILL)\n"
    "            break\n"
    "        for f, ev in po.poll(left * 1000 + 1):\n"
    "            if f == pfd:\n"
    "                exited = True\n"
    "                continue\n"
    "            c = os.read(f, 65536)\n"
    "            if not c:\n"
    "                po.unregister(f)\n"
    "                continue\n"
    "            room = maxout - len(bufs[f])\n"
    "            if len(c) > room:\n"
    "                trunc[f] = 1\n"
    "                c = c[:max(room, 0)]\n"
    "            bufs[f] += c\n"
    "    _, status = os.waitpid(pid, 0)\n"
    "    os.close(pfd)\n"
    "    clean = sweep()\n"
    "    for f in (orr, er):\n"
    "        os.set_blocking(f, False)\n"
    "        while True:\n"
    "            try:\n"
    "                c = os.read(f, 65536)\n"
    "            except OSError:\n"
    "                break\n"
    "            if not c:\n"
    "                break\n"
    "            room = maxout - len(bufs[f])\n"
    "            if len(c) > room:\n"
    "                trunc[f] = 1\n"
    "                c = c[:max(room, 0)]\n"
    "            bufs[f] += c\n"
    "        os.close(f)\n"
    "    code = os.waitstatus_to_exitcode(status)\n"
    "    sig = -code if code < 0 else 0\n"
    "    if sig:\n"
    "        code = 128 + sig\n"
    "    u = resource.getrusage(resource.RUSAGE_SELF)\n"
    "    retire = int(not clean or (cpu_lim > 0 and\n"
    "        u.ru_utime + u.ru_stime > cpu_lim / 2))\n"
    "    o, e = bytes(bufs[orr]), bytes(bufs[er])\n"
    "    ctl(b'A %d %d %d %d %d %d %d %d\\n' % (code, sig, timed_out, len(o),\n"
    "        trunc[orr], len(e), trunc[er], retire) + o + e)\n"
    "    wipe()\n"
    "    if retire:\n"
    "        os._exit(0)\n"
    "    nxt = spawn()\n";

/*
 * A javascript server's children run node on this, then job() of the
 * one-shot runner (sandbox_code_javascript_job): started ahead (node's
 * start-up is most of a cold run), it waits on descriptor 3 for its job
 * ("nsrc nin lim mark" then the code and the inputs) until the end.
 * In a block: node -e runs a script, whose top-level const would be
 * the code's (vm.runInThisContext) too.
 */
static const char fork_node_head[] =
    "'use strict';\n"
    "{\n"
    "const fs = require('fs'), vm = require('vm');\n"
    "process.stdout.write('');\n"
    "process.stderr.write('');\n"
    "const b = fs.readFileSync(3);\n"
    "try { fs.closeSync(3); } catch (e) {}\n"
    "const nl = b.indexOf(10);\n"
    "const h = nl < 0 ? [] : b.subarray(0, nl).toString('latin1')"
    ".split(' ');\n"
    "if (h.length !== 4) process.exit(0);\n"
    "const nsrc = Number(h[0]), nin = Number(h[1]), lim = Number(h[2]);\n"
    "const mark = h[3];\n"
    "const src = b.subarray(nl + 1, nl + 1 + nsrc).toString('utf8');\n"
    "const inputs = JSON.parse(b.subarray(nl + 1 + nsrc, nl + 1 + nsrc +"
    " nin).toString('utf8'));\n"
    "function end(code) { process.exit(code); }\n";

/* The languages with a fork server, by r->lang. */
static const char *const fork_langs[] = {"python3", "javascript"};

/* The index of language in fork_langs, or -1. */
static int
fork_lang(const char *language)
{
	size_t i;

	for (i = 0; language != NULL &&
	     i < sizeof(fork_langs) / sizeof(*fork_langs); i++)
		if (strcmp(fork_langs[i], language) == 0)
			return (int)i;
	return -1;
}

int
sandbox_code_fork_language(const char *language)
{
	return fork_lang(language) >= 0;
}

/* a then b into a malloc'd *out of *len bytes. */
static int
concat(const char *a, const char *b, char **out, size_t *len, char *err)
{
	size_t	na = strlen(a), nb = strlen(b);

	*len = na + nb;
	if ((*out = malloc(*len + 1)) == NULL)
		return sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
	memcpy(*out, a, na);
	memcpy(*out + na, b, nb + 1);
	return 0;
}

/* The server program: fork_server_head, the python3 job, the tail. */
static int
server_program(char **prog, size_t *len, char *err)
{
	char	*a = NULL;
	size_t	 n;
	int	 rc;

	*prog = NULL;
	if ((rc = concat(fork_server_head, sandbox_code_python_job, &a, &n,
	    err)) == 0)
		rc = concat(a, fork_server_tail, prog, len, err);
	free(a);
	return rc;
}

int
sandbox_code_fork_start(struct sandbox *sb, const char *language, char *err,
    struct sandbox_runner *r)
{
	const char	*argv[5];
	char		 nonce[33], path[128], *prog = NULL, *tmp = NULL;
	int		 rc = 0, li;
	size_t		 plen;

	memset(r, 0, sizeof(*r));
	r->sb = sb;
	r->ctl = -1;
	r->fork = 1;
	r->t0 = sandbox_now_us();
	err[0] = '\0';
	if ((li = fork_lang(language)) < 0) {
		rc = engine_invalid(err, "code: no fork server for %.40s",
		    language ? language : "");
		goto out;
	}
	r->lang = li;
	sandbox_code_nonce(nonce);
	snprintf(r->dir, sizeof(r->dir), ".flowcgi-code-%s", nonce);
	if (li == 1) {
		snprintf(path, sizeof(path), "%s/runner.js", r->dir);
		if ((rc = concat(fork_node_head, sandbox_code_javascript_job,
		    &tmp, &plen, err)) != 0 ||
		    (rc = concat(tmp, "}\n", &prog, &plen, err)) != 0 ||
		    (rc = sandbox_upload(sb, path, prog, plen, err)) != 0)
			goto out;
		free(prog);
		prog = NULL;
	}
	snprintf(path, sizeof(path), "%s/runner.py", r->dir);
	if ((rc = server_program(&prog, &plen, err)) != 0 ||
	    (rc = sandbox_upload(sb, path, prog, plen, err)) != 0)
		goto out;
	argv[0] = "python3";
	argv[1] = path;
	argv[2] = r->dir;
	argv[3] = fork_langs[li];
	argv[4] = NULL;
	rc = sandbox_code_spawn(r, argv, err);
out:
	free(tmp);
	free(prog);
	return rc;
}

/* The answer being read: header line, then out_len + err_len bytes. */
struct fork_answer {
	char	*b;
	size_t	 len, cap, need;	/* need: 0 until the header is in */
	size_t	 hlen;
	long long v[8];		/* exit signal timed_out out_len out_cut
				 * err_len err_cut retire */
};

/*
 * Takes in what the control pipe has: 1 once the whole answer is in, 0
 * for more to come, -1 at its end or a malformed header. Reads no byte
 * past the answer.
 */
static int
answer_read(int fd, struct fork_answer *a, size_t max)
{
	char	*nl, *p, *end, *nb;
	ssize_t	 n;
	size_t	 want;
	int	 i;

	for (;;) {
		want = a->need > 0 ? a->need - a->len : 1;
		if (a->len + want + 1 > a->cap) {
			size_t cap = a->need > 0 ? a->need + 1 : a->cap + 256;

			if (cap > max || (nb = realloc(a->b, cap)) == NULL)
				return -1;
			a->b = nb;
			a->cap = cap;
		}
		n = read(fd, a->b + a->len, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0)
			return -1;
		a->len += (size_t)n;
		a->b[a->len] = '\0';
		if (a->need == 0 && a->b[a->len - 1] == '\n') {
			nl = a->b + a->len - 1;
			if (a->b[0] != 'A' || a->b[1] != ' ')
				return -1;
			for (p = a->b + 2, i = 0; i < 8; i++, p = end) {
				errno = 0;
				a->v[i] = strtoll(p, &end, 10);
				if (end == p || errno != 0 || a->v[i] < -1)
					return -1;
			}
			if (end != nl || a->v[3] < 0 || a->v[5] < 0 ||
			    (unsigned long long)a->v[3] + (unsigned long long)
			    a->v[5] > max)
				return -1;
			a->hlen = a->len;
			a->need = a->len + (size_t)a->v[3] + (size_t)a->v[5];
		}
		if (a->need > 0 && a->len == a->need)
			return 1;
	}
}

/* A malloc'd NUL-terminated copy of s[0..n). */
static char *
dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d != NULL) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

int
sandbox_code_fork_run(struct sandbox_runner *r,
    const struct sandbox_code_req *req, char *err,
    struct sandbox_code_result *res)
{
	struct sandbox_exec_result	 x = {0};
	struct fork_answer		 a = {0};
	struct pollfd			 pfd;
	char				 hdr[192], nonce[33];
	char				 mark[64], c;
	char				*inputs = NULL;
	int64_t				 max_output, room, deadline, hard;
	int64_t				 now, ms, t_send;
	int				 rc = 0, got, took = 0;
	const char			*lang = req->language;
	size_t				 hl;
	ssize_t				 n;

	memset(res, 0, sizeof(*res));
	err[0] = '\0';
	if ((rc = sandbox_code_inputs(req, err, &inputs)) != 0)
		goto out;
	if (r->proc == NULL || !r->fork || r->lang < 0 || r->lang > 1 ||
	    fork_lang(req->language) != r->lang) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "code: a %s fork server "
		    "for %.40s code", r->lang == 1 ? "javascript" : "python3",
		    req->language);
		goto out;
	}
	sandbox_code_nonce(nonce);
	snprintf(mark, sizeof(mark), "<<FLOWCGI-RESULT-%s>>", nonce);
	max_output = sandbox_proc_max_output(r->proc);
	room = max_output - 2 * (int64_t)strlen(mark) - 2;
	deadline = sandbox_proc_deadline(r->proc, r->t0, req->timeout_ms);
	hard = deadline + FORK_GRACE_US;
	ms = (deadline - sandbox_now_us()) / 1000;
	hl = (size_t)snprintf(hdr, sizeof(hdr), "J %zu %zu %" PRId64 " %"
	    PRId64 " %" PRId64 " %s\n", strlen(req->code), strlen(inputs),
	    room > 0 ? room : 1, max_output, ms > 1 ? ms : 1, mark);
	t_send = sandbox_now_us();
	if (sandbox_proc_send(r->proc, hdr, hl) != 0 ||
	    sandbox_proc_send(r->proc, req->code, strlen(req->code)) != 0 ||
	    sandbox_proc_send(r->proc, inputs, strlen(inputs)) != 0) {
		r->gone = 1;
		rc = sandbox_fail(err, SANDBOX_EFAIL, "code: the %s fork "
		    "server ended before its job", lang);
		goto out;
	}
	for (;;) {
		if (!took) {
			while ((n = read(r->ctl, &c, 1)) < 0 && errno == EINTR)
				;
			if (n == 1 && c == 'G')
				took = 1;
			else if (n == 0 || (n < 0 && errno != EAGAIN) ||
			    n == 1) {
				r->gone = 1;
				rc = sandbox_fail(err, SANDBOX_EFAIL, "code: "
				    "the %s fork server ended before its "
				    "job", lang);
				goto out;
			}
		}
		got = took ? answer_read(r->ctl, &a, 2 * (size_t)max_output +
		    256) : 0;
		if (got > 0)
			break;
		if (got < 0) {
			r->dead = 1;
			rc = sandbox_fail(err, SANDBOX_EFAIL, "code: the %s "
			    "fork server ended during the job", lang);
			goto out;
		}
		if (req->cancel != NULL && req->cancel->fn(req->cancel->arg)) {
			r->dead = 1;
			x.cancelled = 1;
			break;
		}
		now = sandbox_now_us();
		if (now >= hard) {
			r->dead = 1;
			x.timed_out = 1;
			break;
		}
		ms = (hard - now) / 1000 + 1;
		if (req->cancel != NULL && ms > SANDBOX_CANCEL_MS)
			ms = SANDBOX_CANCEL_MS;
		pfd.fd = r->ctl;
		pfd.events = POLLIN;
		(void)poll(&pfd, 1, (int)ms);
	}
	x.elapsed_us = sandbox_now_us() - t_send;
	if (got > 0) {
		x.exit_code = (int)a.v[0];
		x.signal = (int)a.v[1];
		x.timed_out = a.v[2] != 0;
		x.out_truncated = a.v[4] != 0;
		x.err_truncated = a.v[6] != 0;
		if (a.v[7] != 0)
			r->dead = 1;
		x.out_len = (size_t)a.v[3];
		x.err_len = (size_t)a.v[5];
		x.out = dup_n(a.b + a.hlen, x.out_len);
		x.err = dup_n(a.b + a.hlen + x.out_len, x.err_len);
	} else {
		x.out = dup_n("", 0);
		x.err = dup_n("", 0);
	}
	if (x.out == NULL || x.err == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	rc = sandbox_code_outcome(r->sb, req, mark, max_output, &x, err, res);
out:
	free(a.b);
	free(inputs);
	sandbox_exec_result_release(&x);
	if (rc != 0) {
		json_decref(res->outputs);
		res->outputs = NULL;
	}
	return rc;
}
