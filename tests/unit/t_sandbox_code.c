/*
 * t_sandbox_code.c — code-node code in the local sandbox: python3 and
 * javascript main() with inputs and outputs, prints ignored, exceptions
 * with their message and line, non-dict results, time and memory limits,
 * no network; and what one sandbox per call costs. The python3 and
 * javascript cases run twice: cold (a runner started for each call), then
 * on warm runners of a code pool made from the same settings, where each
 * call must find a warm runner and come to the same result and the same
 * error message as its cold twin. A job answers on the runner's word,
 * before its exit: what main printed just before it returned is all in the
 * log, a background process main left neither holds up the answer nor
 * survives it, and a runner killed after half a result (even one that
 * said it was done) is an error as before.
 *
 * Needs bwrap, python3 and node: a missing bwrap or node is one counted
 * skip (NEED), a missing python3 fails with a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/sandbox/sandbox.h"
#include "tests/unit/host_procs.h"
#include "tests/unit/tap.h"
#include "tests/unit/tap_json.h"
#include "tests/unit/tmp_engine.h"

static char			top[256];
static struct sandbox_config	cfg;

/* The pooled pass: runs go through pool, made from pool_cfg. */
static int				 pooled;
static struct sandbox_code_pool		*pool;
static struct sandbox_config		 pool_cfg;

/* What each call of the cold pass came to, for its pooled twin. */
#define RUNS_MAX	64
static struct {
	int	rc;
	char	err[ENGINE_ERRMAX];
	char	out[512];
} cold[RUNS_MAX];
static int	nrun;

/* A pool of one warm runner per language made from cfg as it is now;
 * with pooled 2, javascript's on fork servers too. */
static void
pool_for_cfg(void)
{
	static int forks;

	if (pool != NULL && forks == (pooled == 2) &&
	    pool_cfg.timeout == cfg.timeout &&
	    pool_cfg.memory == cfg.memory && pool_cfg.network == cfg.network &&
	    strcmp(pool_cfg.network_allow, cfg.network_allow) == 0)
		return;
	sandbox_code_pool_free(pool);
	pool = NULL;
	pool_cfg = cfg;
	CHECK_INT(sandbox_code_pool_new(&pool_cfg, 1, 0, &pool), 0);
	forks = pooled == 2;
	if (forks)
		sandbox_code_pool_tune(pool, SANDBOX_FORK_PYTHON3 |
		    SANDBOX_FORK_JAVASCRIPT, 1, 0, 0);
}

/* Runs code with inputs (JSON text); returns the engine code. */
static int
run(const char *lang, const char *code, const char *inputs, int timeout_ms,
    char *err, struct sandbox_code_result *res)
{
	struct sandbox_code_pool_stats	 st0, st1;
	struct sandbox_code_req		 req = {0};
	json_t				*in = NULL;
	int				 rc, known;

	if (inputs != NULL)
		in = json_loads(inputs, 0, NULL);
	req.language = lang;
	req.code = code;
	req.inputs = in;
	req.timeout_ms = timeout_ms;
	known = strcmp(lang, "python3") == 0 || strcmp(lang, "javascript") == 0;
	if (!pooled)
		rc = sandbox_run_code(&cfg, &req, err, res);
	else {
		pool_for_cfg();
		if (known)
			CHECK(sandbox_code_pool_wait(pool, lang, 1, 60000) == 0);
		sandbox_code_pool_stats(pool, &st0);
		rc = sandbox_code_pool_run(pool, &cfg, &req, err, res);
		sandbox_code_pool_stats(pool, &st1);
		if (known && !CHECK(st1.hits == st0.hits + 1 &&
		    st1.misses == st0.misses))
			printf("# %s: not run on a warm runner\n", lang);
	}
	if (rc != 0)
		printf("# %s%s: %s\n", lang, pooled ? " (warm)" : "", err);
	if (nrun < RUNS_MAX && !pooled) {
		cold[nrun].rc = rc;
		snprintf(cold[nrun].err, sizeof(cold[nrun].err), "%s", rc ?
		    err : "");
		snprintf(cold[nrun].out, sizeof(cold[nrun].out), "%.500s",
		    tap_json(res->outputs));
	} else if (nrun < RUNS_MAX) {
		CHECK_INT(rc, cold[nrun].rc);
		CHECK_STR(rc ? err : "", cold[nrun].err);
		CHECK_STR(tap_json(res->outputs), cold[nrun].out);
	}
	nrun++;
	json_decref(in);
	return rc;
}

/* 1 when s ends with tail. */
static int
ends_with(const char *s, const char *tail)
{
	size_t n = s != NULL ? strlen(s) : 0, t = strlen(tail);

	return n >= t && strcmp(s + n - t, tail) == 0;
}

/*
 * A sleep(1) argument no other process has: "1000.<pid><n>"; its command
 * line (arguments joined by spaces) ends "<arg> ", the needle for
 * host_procs.
 */
static void
sleeper_arg(char *arg, size_t argsz, char *needle, size_t nsz)
{
	static int n;

	snprintf(arg, argsz, "1000.%d%03d", (int)getpid(), n++);
	snprintf(needle, nsz, "sleep %s ", arg);
}

/*
 * Waits up to 30 s until no host process has needle in its command line:
 * the sandbox of a warm runner is ended by the pool's thread after the
 * job answered. 0 when none is left.
 */
static int
sleeper_gone(const char *needle)
{
	struct timespec	ts = {0, 10 * 1000000};
	int		i;

	for (i = 0; i < 3000 && host_procs(needle, NULL, NULL) != 0; i++)
		nanosleep(&ts, NULL);
	return host_procs(needle, NULL, NULL) == 0 ? 0 : -1;
}

static void
test_python(void)
{
	struct sandbox_code_result	r = {0};
	char				err[ENGINE_ERRMAX], code[512];
	char				arg[64], needle[80];

	/* main(**inputs), prints (even fake markers) are not the result */
	CHECK_INT(run("python3",
	    "def main(a: int, b: str, c=None) -> dict:\n"
	    "    print('noise <<RESULT>>{\"x\": 1}<<RESULT>>')\n"
	    "    print('more noise')\n"
	    "    return {'sum': a + 1, 'b': b.upper(), 'c': c, 'u': b + '\u00e9'}\n",
	    "{\"a\": 41, \"b\": \"h\\u00e9llo \\u4e16\"}", 0, err, &r), 0);
	CHECK_STR(tap_json(r.outputs),
	    "{\"b\":\"H\u00c9LLO \u4e16\",\"c\":null,\"sum\":42,"
	    "\"u\":\"h\u00e9llo \u4e16\u00e9\"}");
	CHECK(r.log != NULL && strstr(r.log, "more noise") != NULL);
	CHECK(r.log != NULL && strstr(r.log, "FLOWCGI-RESULT") == NULL);
	printf("# python3 %s: %lld ms in the interpreter\n", pooled ?
	    "on a warm runner" : "one sandbox per call",
	    (long long)r.elapsed_us / 1000);
	sandbox_code_result_release(&r);

	/* the standard library */
	CHECK_INT(run("python3",
	    "import json, re, datetime, math\n"
	    "def main(s):\n"
	    "    d = datetime.date(2024, 2, 29) + datetime.timedelta(days=1)\n"
	    "    return {'n': len(re.findall(r'\\d+', s)),\n"
	    "            'j': json.loads('[1, 2]'), 'd': d.isoformat(),\n"
	    "            'r': math.sqrt(16), 'f': 0.5}\n",
	    "{\"s\": \"a1b22c333\"}", 0, err, &r), 0);
	CHECK_STR(tap_json(r.outputs),
	    "{\"d\":\"2024-03-01\",\"f\":0.5,\"j\":[1,2],\"n\":3,\"r\":4.0}");
	sandbox_code_result_release(&r);

	/* an exception: its type, message and line; the traceback in log */
	CHECK_INT(run("python3",
	    "def main(x):\n"
	    "    if x > 1:\n"
	    "        raise ValueError('bad input %d' % x)\n"
	    "    return {}\n",
	    "{\"x\": 5}", 0, err, &r), ENGINE_EINVAL);
	CHECK_STR(err, "ValueError: bad input 5 (main.py, line 3)");
	CHECK(r.log != NULL && strstr(r.log, "Traceback") != NULL);
	CHECK(r.log != NULL && strstr(r.log, "runner.py") == NULL);
	sandbox_code_result_release(&r);

	/* a missing input is a TypeError, as in Dify */
	CHECK_INT(run("python3", "def main(a, b):\n    return {'a': a}\n",
	    "{\"a\": 1}", 0, err, &r), ENGINE_EINVAL);
	CHECK(strstr(err, "TypeError") != NULL &&
	    strstr(err, "'b'") != NULL);
	sandbox_code_result_release(&r);

	/* not a dict; not JSON; no main; a syntax error */
	CHECK_INT(run("python3", "def main():\n    return [1, 2]\n", NULL, 0,
	    err, &r), ENGINE_EINVAL);
	CHECK_STR(err, "main() returned list, not a dict");
	sandbox_code_result_release(&r);
	CHECK_INT(run("python3", "def main():\n    return {'s': {1, 2}}\n",
	    NULL, 0, err, &r), ENGINE_EINVAL);
	CHECK(strstr(err, "not JSON") != NULL);
	sandbox_code_result_release(&r);
	CHECK_INT(run("python3", "x = 1\n", NULL, 0, err, &r), ENGINE_EINVAL);
	CHECK(strstr(err, "NameError") != NULL);
	sandbox_code_result_release(&r);
	CHECK_INT(run("python3", "import os\ndef main(:\n", NULL, 0, err,
	    &r), ENGINE_EINVAL);
	CHECK(strstr(err, "SyntaxError") != NULL &&
	    strstr(err, "(main.py, line 2)") != NULL);
	sandbox_code_result_release(&r);

	/* time: the request's limit, then sandbox.timeout by name */
	CHECK_INT(run("python3", "import time\ndef main():\n"
	    "    time.sleep(100)\n    return {}\n", NULL, 1500, err, &r),
	    ENGINE_ELIMIT);
	CHECK(strstr(err, "1500 ms") != NULL);
	sandbox_code_result_release(&r);
	cfg.timeout = 1;
	CHECK_INT(run("python3", "def main():\n    while True: pass\n", NULL,
	    0, err, &r), ENGINE_ELIMIT);
	CHECK_STR(err, "code ran longer than sandbox.timeout");
	sandbox_code_result_release(&r);
	cfg.timeout = 20;

	/* memory */
	cfg.memory = 64 << 20;
	CHECK_INT(run("python3", "def main():\n    a = bytearray(300 << 20)\n"
	    "    return {}\n", NULL, 0, err, &r), ENGINE_EINVAL);
	CHECK(strstr(err, "MemoryError") != NULL &&
	    strstr(err, "sandbox.memory") != NULL);
	sandbox_code_result_release(&r);
	cfg.memory = 512 << 20;

	/* no network, and the error says so */
	CHECK_INT(run("python3", "import socket\ndef main():\n"
	    "    socket.create_connection(('1.1.1.1', 53), timeout=3)\n"
	    "    return {}\n", NULL, 0, err, &r), ENGINE_EINVAL);
	CHECK(strstr(err, "sandbox.network is false") != NULL);
	sandbox_code_result_release(&r);
	CHECK_INT(run("python3", "import urllib.request\ndef main():\n"
	    "    urllib.request.urlopen('http://example.com/', timeout=3)\n"
	    "    return {}\n", NULL, 0, err, &r), ENGINE_EINVAL);
	CHECK(strstr(err, "sandbox.network is false") != NULL);
	sandbox_code_result_release(&r);
	/* with network, a host not on the list: the error says why */
	cfg.network = 1;
	snprintf(cfg.network_allow, sizeof(cfg.network_allow), "pypi.org");
	CHECK_INT(run("python3", "import urllib.request\ndef main():\n"
	    "    urllib.request.urlopen('http://example.com/', timeout=10)\n"
	    "    return {}\n", NULL, 0, err, &r), ENGINE_EINVAL);
	CHECK(strstr(err, "HTTP Error 403") != NULL &&
	    strstr(err, "sandbox.network_allow") != NULL);
	sandbox_code_result_release(&r);
	cfg.network = 0;
	snprintf(cfg.network_allow, sizeof(cfg.network_allow), "*");
	/* sys.exit in user code is a failure with the exit status */
	CHECK_INT(run("python3", "import sys\ndef main():\n    sys.exit(3)\n",
	    NULL, 0, err, &r), ENGINE_EINVAL);
	CHECK(strstr(err, "exited with 3") != NULL);
	sandbox_code_result_release(&r);
	CHECK_INT(run("python3", "import sys\ndef main():\n    sys.exit(0)\n",
	    NULL, 0, err, &r), ENGINE_EINVAL);
	CHECK(strstr(err, "without a result") != NULL);
	sandbox_code_result_release(&r);

	/* what main printed just before it returned is all in the log:
	 * more than a pipe holds, then a line left in each buffer */
	CHECK_INT(run("python3", "import sys\ndef main():\n"
	    "    print('x' * 200000)\n"
	    "    sys.stdout.write('last words')\n"
	    "    sys.stderr.write('err words')\n"
	    "    return {'ok': 1}\n", NULL, 0, err, &r), 0);
	CHECK_STR(tap_json(r.outputs), "{\"ok\":1}");
	CHECK(ends_with(r.log, "xxxx\nlast words\nerr words"));
	sandbox_code_result_release(&r);

	/* a process main leaves behind (holding its standard output and
	 * error) holds up neither the answer nor survives it */
	sleeper_arg(arg, sizeof(arg), needle, sizeof(needle));
	snprintf(code, sizeof(code), "import subprocess\ndef main():\n"
	    "    p = subprocess.Popen(['sleep', '%s'])\n"
	    "    return {'alive': p.poll() is None}\n", arg);
	CHECK_INT(run("python3", code, NULL, 0, err, &r), 0);
	CHECK_STR(tap_json(r.outputs), "{\"alive\":true}");
	CHECK(sleeper_gone(needle) == 0);
	sandbox_code_result_release(&r);

	/* killed after half a result: an error, as before, even when it
	 * said it was done (only the runner's complete word counts) */
	CHECK_INT(run("python3", "import os, signal, sys\ndef main():\n"
	    "    mark = open('/proc/self/cmdline', 'rb').read()"
	    ".split(b'\\0')[3].decode()\n"
	    "    sys.stdout.write('\\n' + mark + '{\"a\": ')\n"
	    "    sys.stdout.flush()\n"
	    "    try:\n"
	    "        os.write(11, b'D')\n"
	    "    except OSError:\n"
	    "        pass\n"
	    "    os.kill(os.getpid(), signal.SIGKILL)\n", NULL, 0, err, &r),
	    ENGINE_EINVAL);
	CHECK_STR(err, "python3 exited with 137");
	sandbox_code_result_release(&r);
	/* a whole result of its own, killed before the runner's word */
	CHECK_INT(run("python3", "import os, signal, sys\ndef main():\n"
	    "    mark = open('/proc/self/cmdline', 'rb').read()"
	    ".split(b'\\0')[3].decode()\n"
	    "    sys.stdout.write('\\n' + mark + '{}' + mark + '\\n')\n"
	    "    sys.stdout.flush()\n"
	    "    os.kill(os.getpid(), signal.SIGKILL)\n", NULL, 0, err, &r),
	    ENGINE_EINVAL);
	CHECK_STR(err, "python3 exited with 137");
	sandbox_code_result_release(&r);
}

static void
test_javascript(void)
{
	struct sandbox_code_result	r = {0};
	char				err[ENGINE_ERRMAX], code[512];
	char				arg[64], needle[80];

	/* Dify passes one object: main({a, b}) */
	CHECK_INT(run("javascript",
	    "function main({a, b}) {\n"
	    "  console.log('noise');\n"
	    "  return {sum: a + 1, b: b.toUpperCase(), list: [1, 'x']};\n"
	    "}\n",
	    "{\"a\": 1, \"b\": \"x\"}", 0, err, &r), 0);
	CHECK_STR(tap_json(r.outputs), "{\"b\":\"X\",\"list\":[1,\"x\"],\"sum\":2}");
	CHECK(r.log != NULL && strstr(r.log, "noise") != NULL);
	printf("# javascript %s: %lld ms in the interpreter\n", pooled ?
	    "on a warm runner" : "one sandbox per call",
	    (long long)r.elapsed_us / 1000);
	sandbox_code_result_release(&r);

	/* arrow functions, const, async, require */
	CHECK_INT(run("javascript",
	    "const crypto = require('crypto');\n"
	    "const main = async (inputs) => ({n: inputs.n * 2,\n"
	    "  h: crypto.createHash('sha256').update('a').digest('hex')"
	    ".slice(0, 8)});\n",
	    "{\"n\": 21}", 0, err, &r), 0);
	CHECK_STR(tap_json(r.outputs), "{\"h\":\"ca978112\",\"n\":42}");
	sandbox_code_result_release(&r);

	CHECK_INT(run("javascript",
	    "function main(x) {\n"
	    "  throw new TypeError('boom');\n"
	    "}\n", "{}", 0, err, &r), ENGINE_EINVAL);
	CHECK_STR(err, "TypeError: boom (main.js, line 2)");
	CHECK(r.log != NULL && strstr(r.log, "at main") != NULL);
	sandbox_code_result_release(&r);

	CHECK_INT(run("javascript", "function main() { return [1]; }\n", NULL,
	    0, err, &r), ENGINE_EINVAL);
	CHECK_STR(err, "main() returned an array, not an object");
	sandbox_code_result_release(&r);
	CHECK_INT(run("javascript", "let x = 1;\n", NULL, 0, err, &r),
	    ENGINE_EINVAL);
	CHECK(strstr(err, "main is not defined") != NULL);
	sandbox_code_result_release(&r);
	CHECK_INT(run("javascript", "function main( {\n", NULL, 0, err, &r),
	    ENGINE_EINVAL);
	CHECK(strstr(err, "SyntaxError") != NULL);
	sandbox_code_result_release(&r);
	CHECK_INT(run("javascript", "function main() { while (true) {} }\n",
	    NULL, 1500, err, &r), ENGINE_ELIMIT);
	sandbox_code_result_release(&r);
	CHECK_INT(run("javascript",
	    "const net = require('net');\n"
	    "function main() { return new Promise((ok, no) => {\n"
	    "  const s = net.connect(53, '1.1.1.1');\n"
	    "  s.on('connect', () => ok({c: 1})); s.on('error', no); }); }\n",
	    NULL, 0, err, &r), ENGINE_EINVAL);
	CHECK(strstr(err, "ENETUNREACH") != NULL &&
	    strstr(err, "sandbox.network is false") != NULL);
	sandbox_code_result_release(&r);

	/* prints just before the return are all in the log */
	CHECK_INT(run("javascript", "function main() {\n"
	    "  console.log('x'.repeat(200000));\n"
	    "  process.stdout.write('last words');\n"
	    "  process.stderr.write('err words');\n"
	    "  return {ok: 1};\n}\n", NULL, 0, err, &r), 0);
	CHECK_STR(tap_json(r.outputs), "{\"ok\":1}");
	CHECK(ends_with(r.log, "xxxx\nlast words\nerr words"));
	sandbox_code_result_release(&r);

	/* a child process (which alone would keep node running) and a
	 * timer: the answer comes at once, and the child goes */
	sleeper_arg(arg, sizeof(arg), needle, sizeof(needle));
	snprintf(code, sizeof(code), "const cp = require('child_process');\n"
	    "function main() {\n"
	    "  const c = cp.spawn('sleep', ['%s'], {stdio: 'inherit'});\n"
	    "  setTimeout(() => {}, 1000000);\n"
	    "  return {spawned: c.pid > 0};\n}\n", arg);
	CHECK_INT(run("javascript", code, NULL, 0, err, &r), 0);
	CHECK_STR(tap_json(r.outputs), "{\"spawned\":true}");
	CHECK(sleeper_gone(needle) == 0);
	sandbox_code_result_release(&r);

	/* killed after half a result, though it said it was done */
	CHECK_INT(run("javascript", "const fs = require('fs');\n"
	    "function main() {\n"
	    "  const mark = fs.readFileSync('/proc/self/cmdline', 'utf8')"
	    ".split('\\0')[3];\n"
	    "  fs.writeSync(1, '\\n' + mark + '{\"a\": ');\n"
	    "  try { fs.writeSync(11, 'D'); } catch (e) {}\n"
	    "  process.kill(process.pid, 'SIGKILL');\n}\n", NULL, 0, err,
	    &r), ENGINE_EINVAL);
	CHECK_STR(err, "node exited with 137");
	sandbox_code_result_release(&r);
}

/*
 * A result over the output limit (sandbox.max_output) says so, naming the
 * setting and its value, however large it is: 2 MB just over, 200 MB
 * that json.dumps cannot even write under sandbox.memory.
 */
static void
test_output_limit(void)
{
	static const struct {
		const char	*lang;
		const char	*code;
	} big[] = {
		{"python3", "def main():\n    return {'s': 'x' * 2000000}\n"},
		{"python3", "def main():\n    return {'s': 'x' * 200000000}\n"},
		{"python3", "def main():\n    return {'s': ['\u00e9' * 1000]"
		    " * 1100}\n"},
		{"javascript", "function main() { return {s: 'x'.repeat(2000000)"
		    "}; }\n"},
		{"javascript", "function main() { return {s: 'x'.repeat("
		    "200000000)}; }\n"},
		/* small items: only the written JSON is over */
		{"python3", "def main():\n    return {'a': list(range(300000))}"
		    "\n"},
		{"javascript", "function main() { return {a: Array.from("
		    "{length: 300000}, (_, i) => i)}; }\n"},
		/* prints and result together */
		{"python3", "def main():\n    print('p' * 1100000)\n"
		    "    return {'a': 1}\n"},
	};
	struct sandbox_code_result	r = {0};
	char				err[ENGINE_ERRMAX];
	size_t				i;
	int				rc;

	for (i = 0; i < sizeof(big) / sizeof(*big); i++) {
		rc = run(big[i].lang, big[i].code, NULL, 0, err, &r);
		CHECK_INT(rc, ENGINE_ELIMIT);
		if (!CHECK(strstr(err, "the output limit sandbox.max_output "
		    "(1048576 bytes)") != NULL))
			printf("# %s #%zu: %s\n# log: %.1500s\n", big[i].lang,
			    i, err, r.log ? r.log : "");
		sandbox_code_result_release(&r);
	}
	/* just under it still answers */
	rc = run("python3", "def main():\n    return {'s': 'x' * 1000000}\n",
	    NULL, 0, err, &r);
	CHECK_INT(rc, 0);
	CHECK_INT(json_string_length(json_object_get(r.outputs, "s")), 1000000);
	sandbox_code_result_release(&r);
}

static void
test_misc(void)
{
	struct sandbox_code_result	 r = {0};
	struct sandbox_code_req		 req = {0};
	struct sandbox			*sb = NULL;
	struct sandbox_file		*files = NULL;
	char				 err[ENGINE_ERRMAX];
	size_t				 n = 0;
	json_t				*in;
	struct timespec			 t0, t1;
	int				 i, ok = 0;
	double				 ms;

	CHECK_INT(run("ruby", "x", NULL, 0, err, &r), ENGINE_EINVAL);
	CHECK(strstr(err, "code_language") != NULL);

	/* several runs in one sandbox leave no files behind */
	CHECK_INT(sandbox_create(&sandbox_provider_local, &cfg, err, &sb), 0);
	if (sb == NULL)
		return;
	in = json_pack("{s:i}", "x", 2);
	req.language = "python3";
	req.code = "def main(x):\n    open('kept.txt', 'w').write('k')\n"
	    "    return {'y': x * x}\n";
	req.inputs = in;
	for (i = 0; i < 3; i++) {
		if (sandbox_run_code_in(sb, &req, err, &r) == 0 &&
		    json_integer_value(json_object_get(r.outputs, "y")) == 4)
			ok++;
		sandbox_code_result_release(&r);
	}
	CHECK_INT(ok, 3);
	CHECK_INT(sandbox_list(sb, "", 100, err, &files, &n), 0);
	CHECK_INT(n, 1);	/* kept.txt, the code's own file */
	if (n == 1)
		CHECK_STR(files[0].path, "kept.txt");
	sandbox_files_free(files, n);

	/* what a code node costs: a sandbox per call vs a kept one (the
	 * figures are printed; every call must still answer right) */
	ok = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 10; i++) {
		if (sandbox_run_code_in(sb, &req, err, &r) == 0 &&
		    json_integer_value(json_object_get(r.outputs, "y")) == 4)
			ok++;
		sandbox_code_result_release(&r);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = ((double)(t1.tv_sec - t0.tv_sec) * 1e3 +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / 10;
	printf("# python3 in a kept sandbox: %.1f ms per call\n", ms);
	sandbox_free(sb);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 10; i++) {
		if (sandbox_run_code(&cfg, &req, err, &r) == 0 &&
		    json_integer_value(json_object_get(r.outputs, "y")) == 4)
			ok++;
		sandbox_code_result_release(&r);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = ((double)(t1.tv_sec - t0.tv_sec) * 1e3 +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / 10;
	printf("# python3 with a sandbox per call (create, upload, run, "
	    "destroy): %.1f ms per call\n", ms);
	CHECK_INT(ok, 20);
	json_decref(in);
	test_output_limit();
}

int
main(void)
{
	struct conf	 c;
	int		 js_first;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!host_bwrap_check() || !NEED("node"))
		return tap_done();
	if (!CHECK(system("PATH=/usr/local/bin:/usr/bin:/bin command -v "
	    "python3 >/dev/null") == 0))
		printf("# python3 not found in /usr: install the Debian "
		    "package python3\n");
	if (tmp_dir_make("t_sandbox_code", top, sizeof(top)) != 0)
		return tap_done();
	conf_defaults(&c);
	snprintf(c.data_dir, sizeof(c.data_dir), "%s", top);
	sandbox_config_init(&cfg, &c);
	cfg.timeout = 20;

	test_python();
	js_first = nrun;
	test_javascript();
	/* the same again on warm runners */
	pooled = 1;
	nrun = 0;
	cfg.timeout = 20;
	test_python();
	test_javascript();
	/* and javascript on fork servers (code.fork_server_javascript) */
	pooled = 2;
	nrun = js_first;
	cfg.timeout = 20;
	test_javascript();
	sandbox_code_pool_free(pool);
	pool = NULL;
	pooled = 0;
	test_misc();

	tmp_dir_remove(top);
	return tap_done();
}
