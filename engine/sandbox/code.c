/*
 * code.c — running a code node's code in a sandbox, the way Dify's code
 * executor does.
 *
 * Dify wraps the user's code in a runner that decodes the inputs, calls
 * main(**inputs) (python3) or main(inputs) (javascript: one object, which
 * code usually destructures: function main({a, b})), and prints the JSON of
 * the result between <<RESULT>> markers; the result must be a dict.
 *
 * Here a small runner is uploaded into a fresh folder of the workspace and
 * the interpreter started on it with the workspace as its working folder
 * (sandbox_code_start); the runner imports what it needs, says 'R' (ready)
 * on its control pipe (descriptor SANDBOX_CTL_FD) and waits for a line on
 * its standard input. Then the user's code and the inputs are uploaded
 * beside it and the line sent (sandbox_code_finish); the runner says 'G'
 * (got it), deletes its files once read, compiles the code under the name
 * main.py / main.js (so tracebacks point at the user's own lines), calls
 * main, and prints the result between markers that carry a random nonce,
 * so nothing the code prints can be taken for the result. A failure ends
 * with one summary line behind the same nonce ("ValueError: bad input
 * (main.py, line 3)"). The line holds the bytes the result's JSON may
 * take (what sandbox.max_output leaves beside the markers): a result
 * over it is not written, and the summary line says "LIMIT <size>"
 * instead, so that the node fails naming sandbox.max_output rather than
 * with a cut result or a runner out of memory (python3 counts a lower
 * bound first, so that a 200 MB string is refused before json.dumps).
 *
 * Then, its output flushed, the runner says 'D' (done) and exits. The job
 * answers on that word when the output ends with the result or the
 * summary (code_complete), without waiting for the interpreter's exit, for
 * bwrap to report it and for the sandbox's end: whoever owns the runner
 * kills what is left of it afterwards (sandbox_code_drop; for a warm
 * runner, the pool's thread). So what the code leaves running after main
 * (threads, timers, processes) neither holds up the answer nor counts. In
 * any other case (no 'D': a crash, a kill at a limit, sys.exit) the exit
 * decides, as it always did. The runner keeps the control pipe for the
 * 'D' (close-on-exec in python); code could write to it, and gains nothing
 * by it: only a complete result or summary answers early.
 *
 * A cold run does the two steps back to back; the code pool (codepool.c)
 * does the first ahead of time. Everything the code can observe is the
 * same either way: the runner, its command line, its sandbox, and a
 * standard input that ends right after the line. The javascript runner
 * makes process.stdout and process.stderr (7 ms on their first use) before
 * it is ready.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/sandbox/sandbox.h"

/* How much of the traceback and prints travel back in res->log. */
#define CODE_LOG_MAX	8192

/*
 * The part of the python3 runner that runs a job, shared with the fork
 * server (codefork.c): job(src, inputs, mark, lim, done) runs src's
 * main(**inputs), prints the result between the markers (or the summary
 * line of a failure) within lim bytes, flushes both outputs and calls
 * done(exit code), which must not return. Needs json, os, sys, traceback.
 */
#define CODE_PY_JOB \
    "def job(src, inputs, mark, lim, done):\n" \
    "    def end(code):\n" \
    "        for f in (sys.stdout, sys.stderr):\n" \
    "            try:\n" \
    "                f.flush()\n" \
    "            except Exception:\n" \
    "                pass\n" \
    "        done(code)\n" \
    "    sys.argv = ['main.py']\n" \
    "    sys.path[0] = os.getcwd()\n" \
    "    def fail(e, tb):\n" \
    "        traceback.print_exception(type(e), e, tb)\n" \
    "        where = ''\n" \
    "        for fr in traceback.extract_tb(tb):\n" \
    "            if fr.filename == 'main.py':\n" \
    "                where = ' (main.py, line %d)' % fr.lineno\n" \
    "        if isinstance(e, SyntaxError) and e.filename == 'main.py':\n" \
    "            where = ' (main.py, line %s)' % e.lineno\n" \
    "        msg = traceback.format_exception_only(type(e), e)[-1].strip()\n" \
    "        sys.stderr.write('\\n' + mark + 'ERROR ' + msg + where + '\\n')\n" \
    "        end(1)\n" \
    "    ns = {'__name__': '__main__', '__builtins__': __builtins__}\n" \
    "    try:\n" \
    "        exec(compile(src, 'main.py', 'exec'), ns)\n" \
    "        if not callable(ns.get('main')):\n" \
    "            raise NameError(\"name 'main' is not defined\")\n" \
    "        out = ns['main'](**inputs)\n" \
    "    except Exception as e:\n" \
    "        fail(e, e.__traceback__.tb_next)\n" \
    "    if not isinstance(out, dict):\n" \
    "        sys.stderr.write('\\n' + mark + 'ERROR main() returned ' +\n" \
    "            type(out).__name__ + ', not a dict\\n')\n" \
    "        end(1)\n" \
    "    def over(n):\n" \
    "        sys.stderr.write('\\n' + mark + 'LIMIT ' + n + '\\n')\n" \
    "        end(1)\n" \
    "    def floor(v):\n" \
    "        n, todo, seen = 0, [v], set()\n" \
    "        while todo and n <= lim:\n" \
    "            x = todo.pop()\n" \
    "            if isinstance(x, str):\n" \
    "                n += len(x) + 2\n" \
    "            elif isinstance(x, (dict, list, tuple)):\n" \
    "                if id(x) in seen:\n" \
    "                    continue\n" \
    "                seen.add(id(x))\n" \
    "                n += 2\n" \
    "                if isinstance(x, dict):\n" \
    "                    for k, y in x.items():\n" \
    "                        n += (len(k) if isinstance(k, str) else 1) + 3\n" \
    "                        todo.append(y)\n" \
    "                else:\n" \
    "                    todo.extend(x)\n" \
    "            else:\n" \
    "                n += 1\n" \
    "        return n\n" \
    "    if lim > 0:\n" \
    "        try:\n" \
    "            n = floor(out)\n" \
    "        except MemoryError:\n" \
    "            n = 0\n" \
    "        if n > lim:\n" \
    "            over('>' + str(n))\n" \
    "    try:\n" \
    "        s = json.dumps(out, ensure_ascii=False, allow_nan=False)\n" \
    "    except MemoryError:\n" \
    "        over('?')\n" \
    "    except Exception as e:\n" \
    "        sys.stderr.write('\\n' + mark + 'ERROR the result is not JSON: ' +\n" \
    "            str(e) + '\\n')\n" \
    "        end(1)\n" \
    "    if lim > 0:\n" \
    "        try:\n" \
    "            n = len(s) if s.isascii() else len(s.encode('utf-8',\n" \
    "                'surrogatepass'))\n" \
    "        except MemoryError:\n" \
    "            over('?')\n" \
    "        if n > lim:\n" \
    "            over(str(n))\n" \
    "    sys.stdout.write('\\n' + mark + s + mark + '\\n')\n" \
    "    end(0)\n"

const char sandbox_code_python_job[] = CODE_PY_JOB;

static const char python_runner[] =
    "import json, os, sys, traceback\n"
    "d, mark = sys.argv[1], sys.argv[2]\n"
    "def ctl(b):\n"
    "    try:\n"
    "        os.write(11, b)\n"
    "    except OSError:\n"
    "        pass\n"
    "ctl(b'R')\n"
    "go = b''\n"
    "while True:\n"
    "    c = os.read(0, 1)\n"
    "    if c in (b'\\n', b''):\n"
    "        break\n"
    "    go += c\n"
    "ctl(b'G')\n"
    "lim = int(go) if go.isdigit() else 0\n"
    "try:\n"
    "    os.set_inheritable(11, False)\n"
    "except OSError:\n"
    "    pass\n"
    "def done(code):\n"
    "    ctl(b'D')\n"
    "    os._exit(code)\n"
    "with open(os.path.join(d, 'main.py'), encoding='utf-8') as f:\n"
    "    src = f.read()\n"
    "with open(os.path.join(d, 'inputs.json'), encoding='utf-8') as f:\n"
    "    inputs = json.load(f)\n"
    "for n in ('main.py', 'inputs.json', 'runner.py'):\n"
    "    os.unlink(os.path.join(d, n))\n"
    "os.rmdir(d)\n"
    CODE_PY_JOB
    "job(src, inputs, mark, lim, done)\n";

/*
 * The part of the javascript runner that runs a job, shared with the
 * fork server's node children (codefork.c): with src, inputs, mark, lim
 * and end(exit code) defined before it, runs src's main(inputs) and
 * prints the result between the markers (or the summary line of a
 * failure) within lim bytes, then calls end once both outputs are
 * written.
 */
#define CODE_JS_JOB \
    "globalThis.require = require;\n" \
    "globalThis.module = module;\n" \
    "globalThis.exports = module.exports;\n" \
    "function fail(e) {\n" \
    "  const stack = e && e.stack ? String(e.stack) : String(e);\n" \
    "  process.stderr.write(stack + '\\n');\n" \
    "  const m = /main\\.js:(\\d+)/.exec(stack);\n" \
    "  const first = e && e.name !== undefined ? e.name + ': ' + e.message" \
    " : String(e);\n" \
    "  process.stderr.write('\\n' + mark + 'ERROR ' + first +\n" \
    "    (m ? ' (main.js, line ' + m[1] + ')' : '') + '\\n',\n" \
    "    () => end(1));\n" \
    "}\n" \
    "function done(out) {\n" \
    "  if (out === null || typeof out !== 'object' || Array.isArray(out)) {\n" \
    "    process.stderr.write('\\n' + mark + 'ERROR main() returned ' +\n" \
    "      (Array.isArray(out) ? 'an array' : out === null ? 'null' :" \
    " typeof out) + ', not an object\\n', () => end(1));\n" \
    "    return;\n" \
    "  }\n" \
    "  const floor = (v) => {\n" \
    "    let n = 0;\n" \
    "    const todo = [v], seen = new Set();\n" \
    "    while (todo.length > 0 && n <= lim) {\n" \
    "      const x = todo.pop();\n" \
    "      if (typeof x === 'string') n += x.length + 2;\n" \
    "      else if (x !== null && typeof x === 'object') {\n" \
    "        if (seen.has(x)) continue;\n" \
    "        seen.add(x);\n" \
    "        n += 2;\n" \
    "        if (Array.isArray(x)) for (const y of x) todo.push(y);\n" \
    "        else for (const k of Object.keys(x)) {\n" \
    "          n += k.length + 3;\n" \
    "          todo.push(x[k]);\n" \
    "        }\n" \
    "      } else n += 1;\n" \
    "    }\n" \
    "    return n;\n" \
    "  };\n" \
    "  const over = (n) => process.stderr.write('\\n' + mark + 'LIMIT ' + n +" \
    " '\\n', () => end(1));\n" \
    "  if (lim > 0) {\n" \
    "    let n = 0;\n" \
    "    try { n = floor(out); } catch (e) {}\n" \
    "    if (n > lim) return over('>' + n);\n" \
    "  }\n" \
    "  let s;\n" \
    "  try { s = JSON.stringify(out); } catch (e) {\n" \
    "    if (e instanceof RangeError && /string length/.test(e.message))\n" \
    "      return over('?');\n" \
    "    process.stderr.write('\\n' + mark + 'ERROR the result is not JSON: '" \
    " + e.message + '\\n', () => end(1));\n" \
    "    return;\n" \
    "  }\n" \
    "  if (lim > 0 && Buffer.byteLength(s) > lim)\n" \
    "    return over(String(Buffer.byteLength(s)));\n" \
    "  process.stdout.write('\\n' + mark + s + mark + '\\n',\n" \
    "    () => process.stderr.write('', () => end(0)));\n" \
    "}\n" \
    "try {\n" \
    "  vm.runInThisContext(src, { filename: 'main.js' });\n" \
    "  const main = vm.runInThisContext(" \
    "'typeof main === \"function\" ? main : undefined');\n" \
    "  if (main === undefined) throw new ReferenceError('main is not defined');\n" \
    "  Promise.resolve(main(inputs)).then(done, fail);\n" \
    "} catch (e) { fail(e); }\n"

const char sandbox_code_javascript_job[] = CODE_JS_JOB;

static const char javascript_runner[] =
    "'use strict';\n"
    "const fs = require('fs'), path = require('path'), vm = require('vm');\n"
    "const d = process.argv[2], mark = process.argv[3];\n"
    "process.stdout.write('');\n"
    "process.stderr.write('');\n"
    "try { fs.writeSync(11, 'R'); } catch (e) {}\n"
    "let go = '';\n"
    "{\n"
    "  const b = Buffer.alloc(1);\n"
    "  for (;;) {\n"
    "    let n = 0;\n"
    "    try { n = fs.readSync(0, b, 0, 1, null); } catch (e) {\n"
    "      if (e.code === 'EAGAIN') continue;\n"
    "      throw e;\n"
    "    }\n"
    "    if (n === 0 || b[0] === 10) break;\n"
    "    go += String.fromCharCode(b[0]);\n"
    "  }\n"
    "}\n"
    "const lim = /^[0-9]+$/.test(go) ? Number(go) : 0;\n"
    "try { fs.writeSync(11, 'G'); } catch (e) {}\n"
    "function end(code) {\n"
    "  try { fs.writeSync(11, 'D'); } catch (e) {}\n"
    "  process.exit(code);\n"
    "}\n"
    "const src = fs.readFileSync(path.join(d, 'main.js'), 'utf8');\n"
    "const inputs = JSON.parse(fs.readFileSync(path.join(d, 'inputs.json'),"
    " 'utf8'));\n"
    "for (const n of ['main.js', 'inputs.json', 'runner.js'])\n"
    "  fs.unlinkSync(path.join(d, n));\n"
    "fs.rmdirSync(d);\n"
    CODE_JS_JOB;

struct language {
	const char	*name;
	const char	*interp;	/* found through PATH in the sandbox */
	const char	*main_file;
	const char	*runner_file;
	const char	*runner;
	size_t		 runner_len;
};

static const struct language languages[] = {
	{"python3", "python3", "main.py", "runner.py", python_runner,
	    sizeof(python_runner) - 1},
	{"javascript", "node", "main.js", "runner.js", javascript_runner,
	    sizeof(javascript_runner) - 1},
};

/* Writes a message into err and returns ENGINE_ELIMIT. */
static int
fail_limit(char *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
fail_limit(char *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, ENGINE_ERRMAX, fmt, ap);
	va_end(ap);
	return ENGINE_ELIMIT;
}

void
sandbox_code_result_release(struct sandbox_code_result *r)
{
	json_decref(r->outputs);
	free(r->log);
	memset(r, 0, sizeof(*r));
}

/* The last occurrence of needle in hay[0..len), or NULL. */
static char *
find_last(char *hay, size_t len, const char *needle)
{
	size_t	 n = strlen(needle);
	char	*p, *last = NULL;

	for (p = hay; (size_t)(p - hay) + n <= len &&
	     (p = memmem(p, len - (size_t)(p - hay), needle, n)) != NULL; p++)
		last = p;
	return last;
}

/* Appends at most max - *len bytes of s to buf (NUL kept). */
static void
log_add(char *buf, size_t *len, size_t max, const char *s, size_t n)
{
	if (*len + n + 1 > max)
		n = max - *len - 1;
	memcpy(buf + *len, s, n);
	*len += n;
	buf[*len] = '\0';
}

/* A hint that explains a common failure, or "". */
static const char *
error_hint(const struct sandbox *sb, const char *msg)
{
	static const char *const net[] = {
		"Network is unreachable", "Temporary failure in name resolution",
		"Name or service not known", "getaddrinfo", "EAI_AGAIN",
		"ENOTFOUND", "ENETUNREACH", "ConnectionError", "URLError",
		"NewConnectionError", "Max retries exceeded",
	};
	size_t i;

	if (strstr(msg, "MemoryError") != NULL ||
	    strstr(msg, "heap out of memory") != NULL ||
	    strstr(msg, "Array buffer allocation failed") != NULL)
		return " [memory is capped by sandbox.memory]";
	if (strstr(msg, "ModuleNotFoundError") != NULL ||
	    strstr(msg, "Cannot find module") != NULL)
		return " [only the standard library and packages installed on "
		    "the host are available]";
	if (!sb->network)
		for (i = 0; i < sizeof(net) / sizeof(*net); i++)
			if (strstr(msg, net[i]) != NULL)
				return " [the sandbox has no network: "
				    "sandbox.network is false]";
	if (sb->network && sb->provider == &sandbox_provider_local &&
	    (strstr(msg, "HTTP Error 403") != NULL ||
	    strstr(msg, "403 Forbidden") != NULL ||
	    strstr(msg, "Tunnel connection failed: 403") != NULL))
		return " [the sandbox reaches only the hosts of "
		    "sandbox.network_allow, through its proxy]";
	return "";
}

/* The language called name, or NULL. */
static const struct language *
lang_find(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < sizeof(languages) / sizeof(*languages);
	     i++)
		if (strcmp(languages[i].name, name) == 0)
			return &languages[i];
	return NULL;
}

/*
 * Checks req before anything starts: a known language, code, inputs an
 * object; *inputs is their JSON (malloc'd). Returns 0 or ENGINE_EINVAL.
 */
static int
code_check(const struct sandbox_code_req *req, char *err, char **inputs)
{
	*inputs = NULL;
	if (lang_find(req->language) == NULL)
		return engine_invalid(err, "code_language '%.40s': expected "
		    "python3 or javascript", req->language ? req->language : "");
	if (req->code == NULL)
		return engine_invalid(err, "code: missing");
	if (req->inputs != NULL && !json_is_object(req->inputs))
		return engine_invalid(err, "inputs: expected an object");
	*inputs = req->inputs != NULL ? json_dumps(req->inputs, JSON_COMPACT)
				      : strdup("{}");
	if (*inputs == NULL)
		return engine_invalid(err, "inputs: cannot be written as JSON");
	return 0;
}

/*
 * Waits until the runner says it took its job ('G' on the control pipe;
 * an 'R' before it only says it was ready): 1 when it did, 0 when the
 * pipe ended first (the runner is gone), -1 at the deadline. Reads one
 * byte at a time: what follows the 'G' (the runner's 'D') is the wait's.
 */
static int
runner_took(struct sandbox_runner *r, int64_t deadline)
{
	struct pollfd	pfd;
	char		c;
	ssize_t		n;
	int64_t		ms;

	for (;;) {
		n = read(r->ctl, &c, 1);
		if (n > 0 && c == 'G')
			return 1;
		if (n > 0 || (n < 0 && errno == EINTR))
			continue;
		if (n == 0 || errno != EAGAIN)
			return 0;
		if ((ms = (deadline - sandbox_now_us()) / 1000 + 1) <= 0)
			return -1;
		pfd.fd = r->ctl;
		pfd.events = POLLIN;
		(void)poll(&pfd, 1, ms > 60000 ? 60000 : (int)ms);
	}
}

/*
 * The runner's 'D' came (sandbox_local_wait): 1 when x holds its last
 * word, so that the job need not wait for its exit: standard output that
 * ends with the result ("\n" MARK json MARK "\n"; JSON text has no raw
 * line break), or standard error that ends with the failure summary line
 * (MARK "ERROR ...\n"), nothing of it cut at sandbox.max_output. Anything
 * else (a 'D' written by the code itself, say) waits for the exit, which
 * decides as it always did.
 */
static int
code_complete(void *arg, const struct sandbox_exec_result *x)
{
	const char	*mark = arg;
	size_t		 mlen = strlen(mark);

	if (!x->out_truncated && x->out_len > 2 * mlen + 1 &&
	    x->out[x->out_len - 1] == '\n' &&
	    memcmp(x->out + x->out_len - 1 - mlen, mark, mlen) == 0)
		return 1;
	return !x->err_truncated && x->err_len > mlen &&
	    x->err[x->err_len - 1] == '\n' &&
	    find_last(x->err, x->err_len, mark) != NULL;
}

/*
 * The runner's word that the result of main() is over the limit it was
 * given (sandbox.max_output less the markers): "N" bytes of JSON, ">N" at
 * least so many (counted before writing it), "?" too large to write
 * within sandbox.memory. Returns ENGINE_ELIMIT with err naming the
 * setting and its value.
 */
static int
result_over(const char *word, int64_t max_output, char *err)
{
	char		*end;
	long long	 n;
	int		 least = word[0] == '>';

	if (word[0] == '?')
		return fail_limit(err, "the result of main() is too large to "
		    "write as JSON within sandbox.memory: over the output limit "
		    "sandbox.max_output (%" PRId64 " bytes)", max_output);
	errno = 0;
	n = strtoll(word + least, &end, 10);
	if (errno != 0 || end == word + least || n < 0)
		n = -1;
	if (n < 0)
		return fail_limit(err, "the result of main() is over the output "
		    "limit sandbox.max_output (%" PRId64 " bytes)", max_output);
	return fail_limit(err, "the result of main() is %s%lld bytes of JSON, "
	    "over the output limit sandbox.max_output (%" PRId64 " bytes)",
	    least ? "at least " : "", n, max_output);
}

/*
 * The result of the runner's run: the log (prints without the result,
 * then standard error without the summary line), then what the run came
 * to (see sandbox_run_code_in).
 */
static int
code_result(const struct language *lang, struct sandbox *sb,
    const struct sandbox_code_req *req, const char *mark, int64_t max_output,
    struct sandbox_exec_result *r, char *err, struct sandbox_code_result *res)
{
	char	*open_m, *close_m, *line, *nl, *log = NULL;
	size_t	 loglen = 0, mlen = strlen(mark);
	int	 rc = 0;
	json_error_t jerr;

	res->elapsed_us = r->elapsed_us;
	if ((log = malloc(CODE_LOG_MAX)) == NULL) {
		rc = fail_limit(err, "out of memory");
		rc = ENGINE_ENOMEM;
		goto out;
	}
	log[0] = '\0';
	/* stdout ends "\n" MARK json MARK "\n": find both markers. */
	close_m = find_last(r->out, r->out_len, mark);
	open_m = close_m != NULL ? find_last(r->out, (size_t)(close_m -
	    r->out), mark) : NULL;
	if (open_m == NULL)
		close_m = NULL;
	{
		size_t n = (size_t)((open_m ? open_m : r->out + r->out_len) -
		    r->out);

		while (n > 0 && r->out[n - 1] == '\n')
			n--;
		if (n > CODE_LOG_MAX / 2)
			log_add(log, &loglen, CODE_LOG_MAX, r->out + n -
			    CODE_LOG_MAX / 2, CODE_LOG_MAX / 2);
		else
			log_add(log, &loglen, CODE_LOG_MAX, r->out, n);
	}
	line = find_last(r->err, r->err_len, mark);
	if (line != NULL)
		*line = '\0';
	{
		size_t n = strlen(r->err), room = CODE_LOG_MAX - loglen - 2;

		if (n > 0 && loglen > 0)
			log_add(log, &loglen, CODE_LOG_MAX, "\n", 1);
		if (n > room)
			log_add(log, &loglen, CODE_LOG_MAX, r->err + n - room,
			    room);
		else
			log_add(log, &loglen, CODE_LOG_MAX, r->err, n);
	}
	res->log = log;
	log = NULL;

	if (r->cancelled) {
		rc = sandbox_fail(err, ENGINE_ESTOPPED, "stopped");
		goto out;
	}
	if (r->timed_out) {
		if (req->timeout_ms > 0)
			rc = fail_limit(err, "code ran longer than its time "
			    "limit (%d ms)", req->timeout_ms);
		else
			rc = fail_limit(err, "code ran longer than "
			    "sandbox.timeout");
		goto out;
	}
	if (line != NULL && strncmp(line + mlen, "LIMIT ", 6) == 0) {
		rc = result_over(line + mlen + 6, max_output, err);
		goto out;
	}
	if (line != NULL) {
		line += mlen;
		if (strncmp(line, "ERROR ", 6) == 0)
			line += 6;
		if ((nl = strchr(line, '\n')) != NULL)
			*nl = '\0';
		/* room for the hint after a node's "node ... failed: " */
		rc = engine_invalid(err, "%.150s%s", line, error_hint(sb, line));
		goto out;
	}
	if (r->signal == SIGXCPU) {
		rc = fail_limit(err, "code used more CPU time than "
		    "sandbox.cpu_seconds");
		goto out;
	}
	if (r->signal == SIGXFSZ) {
		rc = fail_limit(err, "code wrote a file larger than "
		    "sandbox.file_size");
		goto out;
	}
	if (r->out_truncated && close_m == NULL) {
		rc = fail_limit(err, "code printed more than the output limit "
		    "sandbox.max_output (%" PRId64 " bytes) with its result",
		    max_output);
		goto out;
	}
	if (r->exit_code != 0 || close_m == NULL) {
		/* The interpreter died without the runner's word: take the
		 * last line of standard error. */
		const char *last = "";
		char *s = r->err;
		/* V8 dies with the reason far above its native stack. */
		int v8_oom = strstr(r->err, "JavaScript heap out of memory") !=
		    NULL;

		for (nl = s; (nl = strchr(s, '\n')) != NULL; s = nl + 1)
			if (nl > s) {
				*nl = '\0';
				last = s;
			}
		if (*s != '\0')
			last = s;
		if (v8_oom)
			last = "JavaScript heap out of memory";
		if (r->exit_code == 0)
			rc = engine_invalid(err, "%s ended without a result "
			    "from main()", lang->interp);
		else
			rc = engine_invalid(err, "%s exited with %d%s%.150s%s",
			    lang->interp, r->exit_code, last[0] ? ": " : "",
			    last, error_hint(sb, last));
		goto out;
	}
	*close_m = '\0';
	res->outputs = json_loads(open_m + mlen, JSON_REJECT_DUPLICATES, &jerr);
	if (res->outputs == NULL || !json_is_object(res->outputs)) {
		json_decref(res->outputs);
		res->outputs = NULL;
		rc = engine_invalid(err, "the result of main() is not a JSON "
		    "object: %.120s", jerr.text);
		goto out;
	}
out:
	free(log);
	return rc;
}

int
sandbox_code_inputs(const struct sandbox_code_req *req, char *err,
    char **inputs)
{
	return code_check(req, err, inputs);
}

int
sandbox_code_outcome(struct sandbox *sb, const struct sandbox_code_req *req,
    const char *mark, int64_t max_output, struct sandbox_exec_result *x,
    char *err, struct sandbox_code_result *res)
{
	const struct language *lang = lang_find(req->language);

	if (lang == NULL)
		return engine_invalid(err, "code_language '%.40s': expected "
		    "python3 or javascript", req->language ? req->language : "");
	return code_result(lang, sb, req, mark, max_output, x, err, res);
}

void
sandbox_code_nonce(char nonce[33])
{
	char	uuid[37];
	size_t	i, j;

	engine_uuid(uuid);
	for (i = j = 0; uuid[i] != '\0' && j < 32; i++)
		if (uuid[i] != '-')
			nonce[j++] = uuid[i];
	nonce[j] = '\0';
}

int
sandbox_code_spawn(struct sandbox_runner *r, const char *const *argv,
    char *err)
{
	struct sandbox_exec_req	 x = {0};
	int			 ctl[2] = {-1, -1}, rc = 0;

	if (pipe2(ctl, O_CLOEXEC) != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "code: pipe: %s",
		    strerror(errno));
		goto out;
	}
	x.argv = argv;
	if ((rc = sandbox_local_spawn(r->sb, &x, ctl[1], err, &r->proc)) != 0)
		goto out;
	r->ctl = ctl[0];
	ctl[0] = -1;
	(void)fcntl(r->ctl, F_SETFL, O_NONBLOCK);
out:
	sandbox_close_fd(&ctl[0]);
	sandbox_close_fd(&ctl[1]);
	return rc;
}

int
sandbox_code_start(struct sandbox *sb, const char *language, char *err,
    struct sandbox_runner *r)
{
	const struct language	*lang;
	const char		*argv[5];
	char			 nonce[33], path[128];
	int			 rc = 0;

	memset(r, 0, sizeof(*r));
	r->sb = sb;
	r->ctl = -1;
	r->t0 = sandbox_now_us();
	err[0] = '\0';
	if ((lang = lang_find(language)) == NULL) {
		rc = engine_invalid(err, "code_language '%.40s': expected "
		    "python3 or javascript", language ? language : "");
		goto out;
	}
	r->lang = (int)(lang - languages);
	sandbox_code_nonce(nonce);
	snprintf(r->mark, sizeof(r->mark), "<<FLOWCGI-RESULT-%s>>", nonce);
	snprintf(r->dir, sizeof(r->dir), ".flowcgi-code-%s", nonce);
	snprintf(path, sizeof(path), "%s/%s", r->dir, lang->runner_file);
	if ((rc = sandbox_upload(sb, path, lang->runner, lang->runner_len,
	    err)) != 0)
		goto out;
	argv[0] = lang->interp;
	argv[1] = path;
	argv[2] = r->dir;
	argv[3] = r->mark;
	argv[4] = NULL;
	rc = sandbox_code_spawn(r, argv, err);
out:
	return rc;
}

int
sandbox_code_ready(struct sandbox_runner *r)
{
	char	c;
	ssize_t	n;

	if (r->proc == NULL || r->ctl < 0)
		return -1;
	while ((n = read(r->ctl, &c, 1)) < 0 && errno == EINTR)
		;
	if (n == 1 && c == 'R')
		r->ready = 1;
	else if (n == 1 || n == 0 || errno != EAGAIN)
		return -1;	/* not the runner's word, or it is gone */
	return r->ready;
}

int
sandbox_code_finish(struct sandbox_runner *r,
    const struct sandbox_code_req *req, char *err,
    struct sandbox_code_result *res)
{
	const struct language		*lang;
	struct sandbox_exec_result	 x = {0};
	struct sandbox_done		 done;
	char				 path[128], go[32], *inputs = NULL;
	int64_t				 max_output = 0, room;
	int				 rc = 0, took;
	size_t				 golen;

	memset(res, 0, sizeof(*res));
	err[0] = '\0';
	if ((rc = code_check(req, err, &inputs)) != 0)
		goto out;
	lang = &languages[r->lang];
	if (r->proc == NULL || strcmp(lang->name, req->language) != 0) {
		rc = sandbox_fail(err, ENGINE_EINVAL, "code: a %s runner for "
		    "%.40s code", lang->name, req->language);
		goto out;
	}

	/* The code and its inputs beside the runner; then its go. */
	snprintf(path, sizeof(path), "%s/%s", r->dir, lang->main_file);
	if ((rc = sandbox_upload(r->sb, path, req->code, strlen(req->code),
	    err)) != 0)
		goto out;
	snprintf(path, sizeof(path), "%s/inputs.json", r->dir);
	if ((rc = sandbox_upload(r->sb, path, inputs, strlen(inputs),
	    err)) != 0)
		goto out;
	/* The go line carries the room the result has on standard output
	 * (sandbox.max_output less the markers around it). */
	max_output = sandbox_proc_max_output(r->proc);
	room = max_output - 2 * (int64_t)strlen(r->mark) - 2;
	golen = (size_t)snprintf(go, sizeof(go), "%" PRId64 "\n",
	    room > 0 ? room : 1);
	took = sandbox_proc_send(r->proc, go, golen) == 0 ? runner_took(r,
	    sandbox_proc_deadline(r->proc, r->t0, req->timeout_ms)) : 0;
	if (took == 0 && r->warm) {
		/* A warm runner died before its job: nothing of the job ran,
		 * and the caller starts a fresh one. */
		r->gone = 1;
		rc = sandbox_fail(err, SANDBOX_EFAIL, "code: the %s runner "
		    "ended before its job", lang->name);
		goto out;
	}
	/* Otherwise what the run did (or why it could not start) is in its
	 * result; a runner that never took its job is killed at the
	 * deadline like code that runs too long. Once the runner said it is
	 * done with a complete result, that is the answer: r->proc is then
	 * still there, for sandbox_code_drop to end. */
	done.fd = r->ctl;
	done.complete = code_complete;
	done.arg = r->mark;
	rc = sandbox_local_wait(&r->proc, r->t0, req->timeout_ms,
	    took > 0 ? &done : NULL, req->cancel, err, &x);
	if (rc != 0)
		goto out;
	rc = code_result(lang, r->sb, req, r->mark, max_output, &x, err, res);
out:
	free(inputs);
	sandbox_exec_result_release(&x);
	if (rc != 0) {
		json_decref(res->outputs);
		res->outputs = NULL;
	}
	return rc;
}

void
sandbox_code_drop(struct sandbox_runner *r)
{
	sandbox_proc_kill(r->proc);
	r->proc = NULL;
	sandbox_close_fd(&r->ctl);
}

int
sandbox_run_code_in(struct sandbox *sb, const struct sandbox_code_req *req,
    char *err, struct sandbox_code_result *res)
{
	struct sandbox_runner	 r;
	char			*inputs = NULL;
	int			 rc;

	memset(res, 0, sizeof(*res));
	memset(&r, 0, sizeof(r));
	r.ctl = -1;
	err[0] = '\0';
	if ((rc = code_check(req, err, &inputs)) != 0 ||
	    (rc = sandbox_code_start(sb, req->language, err, &r)) != 0)
		goto out;
	rc = sandbox_code_finish(&r, req, err, res);
out:
	sandbox_code_drop(&r);
	free(inputs);
	return rc;
}

int
sandbox_run_code(const struct sandbox_config *cfg,
    const struct sandbox_code_req *req, char *err,
    struct sandbox_code_result *res)
{
	struct sandbox	*sb = NULL;
	char		 derr[ENGINE_ERRMAX];
	int		 rc;

	memset(res, 0, sizeof(*res));
	if ((rc = sandbox_create(&sandbox_provider_local, cfg, err, &sb)) != 0)
		goto out;
	rc = sandbox_run_code_in(sb, req, err, res);
	if (sandbox_destroy(sb, derr) != 0)
		log_warn("sandbox: %s", derr);
out:
	sandbox_free(sb);
	return rc;
}
