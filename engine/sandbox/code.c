/*
 * code.c — running a code node's code in a sandbox, the way Dify's code
 * executor does.
 *
 * Dify wraps the user's code in a runner that decodes the inputs, calls
 * main(**inputs) (python3) or main(inputs) (javascript: one object, which
 * code usually destructures: function main({a, b})), and prints the JSON of
 * the result between <<RESULT>> markers; the result must be a dict.
 *
 * Here the user's code, the inputs and a small runner are uploaded into a
 * fresh folder of the workspace, and the interpreter runs the runner with
 * the workspace as its working folder. The runner deletes its files once
 * read, compiles the code under the name main.py / main.js (so tracebacks
 * point at the user's own lines), calls main, and prints the result between
 * markers that carry a random nonce, so nothing the code prints can be
 * taken for the result. A failure ends with one summary line behind the
 * same nonce ("ValueError: bad input (main.py, line 3)").
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sandbox/sandbox.h"

/* How much of the traceback and prints travel back in res->log. */
#define CODE_LOG_MAX	8192

static const char python_runner[] =
    "import json, os, sys, traceback\n"
    "d, mark = sys.argv[1], sys.argv[2]\n"
    "with open(os.path.join(d, 'main.py'), encoding='utf-8') as f:\n"
    "    src = f.read()\n"
    "with open(os.path.join(d, 'inputs.json'), encoding='utf-8') as f:\n"
    "    inputs = json.load(f)\n"
    "for n in ('main.py', 'inputs.json', 'runner.py'):\n"
    "    os.unlink(os.path.join(d, n))\n"
    "os.rmdir(d)\n"
    "sys.argv = ['main.py']\n"
    "sys.path[0] = os.getcwd()\n"
    "def fail(e, tb):\n"
    "    traceback.print_exception(type(e), e, tb)\n"
    "    where = ''\n"
    "    for fr in traceback.extract_tb(tb):\n"
    "        if fr.filename == 'main.py':\n"
    "            where = ' (main.py, line %d)' % fr.lineno\n"
    "    if isinstance(e, SyntaxError) and e.filename == 'main.py':\n"
    "        where = ' (main.py, line %s)' % e.lineno\n"
    "    msg = traceback.format_exception_only(type(e), e)[-1].strip()\n"
    "    sys.stderr.write('\\n' + mark + 'ERROR ' + msg + where + '\\n')\n"
    "    sys.stderr.flush()\n"
    "    os._exit(1)\n"
    "ns = {'__name__': '__main__', '__builtins__': __builtins__}\n"
    "try:\n"
    "    exec(compile(src, 'main.py', 'exec'), ns)\n"
    "    if not callable(ns.get('main')):\n"
    "        raise NameError(\"name 'main' is not defined\")\n"
    "    out = ns['main'](**inputs)\n"
    "except Exception as e:\n"
    "    fail(e, e.__traceback__.tb_next)\n"
    "if not isinstance(out, dict):\n"
    "    sys.stderr.write('\\n' + mark + 'ERROR main() returned ' +\n"
    "        type(out).__name__ + ', not a dict\\n')\n"
    "    os._exit(1)\n"
    "try:\n"
    "    s = json.dumps(out, ensure_ascii=False, allow_nan=False)\n"
    "except Exception as e:\n"
    "    sys.stderr.write('\\n' + mark + 'ERROR the result is not JSON: ' +\n"
    "        str(e) + '\\n')\n"
    "    os._exit(1)\n"
    "sys.stdout.write('\\n' + mark + s + mark + '\\n')\n"
    "sys.stdout.flush()\n";

static const char javascript_runner[] =
    "'use strict';\n"
    "const fs = require('fs'), path = require('path'), vm = require('vm');\n"
    "const d = process.argv[2], mark = process.argv[3];\n"
    "const src = fs.readFileSync(path.join(d, 'main.js'), 'utf8');\n"
    "const inputs = JSON.parse(fs.readFileSync(path.join(d, 'inputs.json'),"
    " 'utf8'));\n"
    "for (const n of ['main.js', 'inputs.json', 'runner.js'])\n"
    "  fs.unlinkSync(path.join(d, n));\n"
    "fs.rmdirSync(d);\n"
    "globalThis.require = require;\n"
    "globalThis.module = module;\n"
    "globalThis.exports = module.exports;\n"
    "function fail(e) {\n"
    "  const stack = e && e.stack ? String(e.stack) : String(e);\n"
    "  process.stderr.write(stack + '\\n');\n"
    "  const m = /main\\.js:(\\d+)/.exec(stack);\n"
    "  const first = e && e.name !== undefined ? e.name + ': ' + e.message"
    " : String(e);\n"
    "  process.stderr.write('\\n' + mark + 'ERROR ' + first +\n"
    "    (m ? ' (main.js, line ' + m[1] + ')' : '') + '\\n',\n"
    "    () => process.exit(1));\n"
    "}\n"
    "function done(out) {\n"
    "  if (out === null || typeof out !== 'object' || Array.isArray(out)) {\n"
    "    process.stderr.write('\\n' + mark + 'ERROR main() returned ' +\n"
    "      (Array.isArray(out) ? 'an array' : out === null ? 'null' :"
    " typeof out) + ', not an object\\n', () => process.exit(1));\n"
    "    return;\n"
    "  }\n"
    "  let s;\n"
    "  try { s = JSON.stringify(out); } catch (e) {\n"
    "    process.stderr.write('\\n' + mark + 'ERROR the result is not JSON: '"
    " + e.message + '\\n', () => process.exit(1));\n"
    "    return;\n"
    "  }\n"
    "  process.stdout.write('\\n' + mark + s + mark + '\\n');\n"
    "}\n"
    "try {\n"
    "  vm.runInThisContext(src, { filename: 'main.js' });\n"
    "  const main = vm.runInThisContext("
    "'typeof main === \"function\" ? main : undefined');\n"
    "  if (main === undefined) throw new ReferenceError('main is not defined');\n"
    "  Promise.resolve(main(inputs)).then(done, fail);\n"
    "} catch (e) { fail(e); }\n";

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
	return "";
}

int
sandbox_run_code_in(struct sandbox *sb, const struct sandbox_code_req *req,
    char *err, struct sandbox_code_result *res)
{
	const struct language		*lang = NULL;
	struct sandbox_exec_req		 x = {0};
	struct sandbox_exec_result	 r = {0};
	const char			*argv[5];
	char				 uuid[37], nonce[33], mark[64];
	char				 dir[64], path[128];
	char				*inputs = NULL, *open_m, *close_m, *line, *nl;
	char				*log = NULL;
	size_t				 i, j, loglen = 0, mlen;
	json_error_t			 jerr;
	int				 rc = 0;

	memset(res, 0, sizeof(*res));
	err[0] = '\0';
	for (i = 0; req->language != NULL &&
	     i < sizeof(languages) / sizeof(*languages); i++)
		if (strcmp(languages[i].name, req->language) == 0)
			lang = &languages[i];
	if (lang == NULL) {
		rc = engine_invalid(err, "code_language '%.40s': expected "
		    "python3 or javascript", req->language ? req->language : "");
		goto out;
	}
	if (req->code == NULL) {
		rc = engine_invalid(err, "code: missing");
		goto out;
	}
	if (req->inputs != NULL && !json_is_object(req->inputs)) {
		rc = engine_invalid(err, "inputs: expected an object");
		goto out;
	}
	inputs = req->inputs != NULL ? json_dumps(req->inputs, JSON_COMPACT)
				     : strdup("{}");
	if (inputs == NULL) {
		rc = engine_invalid(err, "inputs: cannot be written as JSON");
		goto out;
	}
	engine_uuid(uuid);
	for (i = j = 0; uuid[i] != '\0'; i++)
		if (uuid[i] != '-')
			nonce[j++] = uuid[i];
	nonce[j] = '\0';
	snprintf(mark, sizeof(mark), "<<FLOWCGI-RESULT-%s>>", nonce);
	mlen = strlen(mark);
	snprintf(dir, sizeof(dir), ".flowcgi-code-%s", nonce);

	/* The code, its inputs, the runner; then run it. */
	snprintf(path, sizeof(path), "%s/%s", dir, lang->main_file);
	if ((rc = sandbox_upload(sb, path, req->code, strlen(req->code),
	    err)) != 0)
		goto out;
	snprintf(path, sizeof(path), "%s/inputs.json", dir);
	if ((rc = sandbox_upload(sb, path, inputs, strlen(inputs), err)) != 0)
		goto out;
	snprintf(path, sizeof(path), "%s/%s", dir, lang->runner_file);
	if ((rc = sandbox_upload(sb, path, lang->runner, lang->runner_len,
	    err)) != 0)
		goto out;
	argv[0] = lang->interp;
	argv[1] = path;
	argv[2] = dir;
	argv[3] = mark;
	argv[4] = NULL;
	x.argv = argv;
	x.timeout_ms = req->timeout_ms;
	if ((rc = sandbox_exec(sb, &x, err, &r)) != 0)
		goto out;
	res->elapsed_us = r.elapsed_us;

	/* The log: prints (without the result), then standard error
	 * (without the summary line), each keeping its tail. */
	if ((log = malloc(CODE_LOG_MAX)) == NULL) {
		rc = fail_limit(err, "out of memory");
		rc = ENGINE_ENOMEM;
		goto out;
	}
	log[0] = '\0';
	/* stdout ends "\n" MARK json MARK "\n": find both markers. */
	close_m = find_last(r.out, r.out_len, mark);
	open_m = close_m != NULL ? find_last(r.out, (size_t)(close_m - r.out),
	    mark) : NULL;
	if (open_m == NULL)
		close_m = NULL;
	{
		size_t n = (size_t)((open_m ? open_m : r.out + r.out_len) -
		    r.out);

		while (n > 0 && r.out[n - 1] == '\n')
			n--;
		if (n > CODE_LOG_MAX / 2)
			log_add(log, &loglen, CODE_LOG_MAX, r.out + n -
			    CODE_LOG_MAX / 2, CODE_LOG_MAX / 2);
		else
			log_add(log, &loglen, CODE_LOG_MAX, r.out, n);
	}
	line = find_last(r.err, r.err_len, mark);
	if (line != NULL)
		*line = '\0';
	{
		size_t n = strlen(r.err), room = CODE_LOG_MAX - loglen - 2;

		if (n > 0 && loglen > 0)
			log_add(log, &loglen, CODE_LOG_MAX, "\n", 1);
		if (n > room)
			log_add(log, &loglen, CODE_LOG_MAX, r.err + n - room,
			    room);
		else
			log_add(log, &loglen, CODE_LOG_MAX, r.err, n);
	}
	res->log = log;
	log = NULL;

	if (r.timed_out) {
		if (req->timeout_ms > 0)
			rc = fail_limit(err, "code ran longer than its time "
			    "limit (%d ms)", req->timeout_ms);
		else
			rc = fail_limit(err, "code ran longer than "
			    "sandbox.timeout");
		goto out;
	}
	if (line != NULL) {
		line += mlen;
		if (strncmp(line, "ERROR ", 6) == 0)
			line += 6;
		if ((nl = strchr(line, '\n')) != NULL)
			*nl = '\0';
		rc = engine_invalid(err, "%.190s%s", line, error_hint(sb, line));
		goto out;
	}
	if (r.signal == SIGXCPU) {
		rc = fail_limit(err, "code used more CPU time than "
		    "sandbox.cpu_seconds");
		goto out;
	}
	if (r.signal == SIGXFSZ) {
		rc = fail_limit(err, "code wrote a file larger than "
		    "sandbox.file_size");
		goto out;
	}
	if (r.out_truncated && close_m == NULL) {
		rc = fail_limit(err, "code printed more than sandbox.max_output");
		goto out;
	}
	if (r.exit_code != 0 || close_m == NULL) {
		/* The interpreter died without the runner's word: take the
		 * last line of standard error. */
		const char *last = "";
		char *s = r.err;

		for (nl = s; (nl = strchr(s, '\n')) != NULL; s = nl + 1)
			if (nl > s) {
				*nl = '\0';
				last = s;
			}
		if (*s != '\0')
			last = s;
		if (r.exit_code == 0)
			rc = engine_invalid(err, "%s ended without a result "
			    "from main()", lang->interp);
		else
			rc = engine_invalid(err, "%s exited with %d%s%.150s%s",
			    lang->interp, r.exit_code, last[0] ? ": " : "",
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
	free(inputs);
	free(log);
	sandbox_exec_result_release(&r);
	if (rc != 0) {
		json_decref(res->outputs);
		res->outputs = NULL;
	}
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
