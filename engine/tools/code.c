/*
 * code.c — Dify's builtin `code` provider, tool `simple_code` (params
 * language: python3 | javascript, code): runs the code as a script in a
 * fresh local sandbox (engine/sandbox/) and answers with what it printed,
 * as Dify's CodeExecutor.execute_code does. A script that exits non-zero
 * fails the tool with the tail of its standard error; the sandbox's
 * limits (sandbox.timeout, memory, output) apply.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sandbox/sandbox.h"
#include "engine/tools/tools.h"

#define CODE_MAX_SOURCE	(1024 * 1024)

static const struct tool_param params[] = {
	{ "language", "string", 1, "python3 or javascript" },
	{ "code", "string", 1, "The code to run; what it prints is the "
	    "result" },
	{ NULL, NULL, 0, NULL },
};

static const struct tool_def defs[] = {
	{ "simple_code", "Run code and get the result back.", params },
	{ NULL, NULL, NULL },
};

static int
code_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	*out = tool_defs_json(defs);
	return *out ? 0 : ENGINE_ENOMEM;
}

/* The last line of text that is not blank, into buf. */
static void
last_line(const char *s, size_t n, char *buf, size_t bufsz)
{
	size_t	end = n, start;

	while (end > 0 && (s[end - 1] == '\n' || s[end - 1] == ' ' ||
	    s[end - 1] == '\r'))
		end--;
	start = end;
	while (start > 0 && s[start - 1] != '\n')
		start--;
	snprintf(buf, bufsz, "%.*s", (int)(end - start), s + start);
}

static int
code_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	struct sandbox_config		 cfg;
	struct sandbox_exec_req		 x;
	struct sandbox_exec_result	 r;
	struct sandbox			*sb = NULL;
	const char			*lang, *code, *argv[3];
	char				*b1 = NULL, *b2 = NULL, tail[160];
	char				 derr[ENGINE_ERRMAX];
	int				 rc;

	memset(&x, 0, sizeof(x));
	memset(&r, 0, sizeof(r));
	if (strcmp(call->tool, "simple_code") != 0) {
		engine_invalid(err, "tool '%s/%s' is not available in "
		    "flowcgi", call->provider, call->tool);
		rc = ENGINE_ENOTFOUND;
		goto out;
	}
	lang = tool_param_str(call->params, "language", &b1);
	code = tool_param_str(call->params, "code", &b2);
	if (lang == NULL || code == NULL) {
		rc = engine_invalid(err, "language and code are required");
		goto out;
	}
	if (strcmp(lang, "python3") == 0)
		argv[0] = "python3";
	else if (strcmp(lang, "javascript") == 0)
		argv[0] = "node";
	else {
		rc = engine_invalid(err, "unsupported language '%s': python3 "
		    "or javascript", lang);
		goto out;
	}
	if (strlen(code) > CODE_MAX_SOURCE) {
		rc = ENGINE_ELIMIT;
		engine_invalid(err, "code is longer than %d bytes",
		    CODE_MAX_SOURCE);
		goto out;
	}
	argv[1] = argv[0][0] == 'p' ? "main.py" : "main.js";
	argv[2] = NULL;
	sandbox_config_init(&cfg, e->conf);
	if ((rc = sandbox_create(&sandbox_provider_local, &cfg, err,
	    &sb)) != 0 ||
	    (rc = sandbox_upload(sb, argv[1], code, strlen(code), err)) != 0)
		goto out;
	x.argv = argv;
	if ((rc = sandbox_exec(sb, &x, err, &r)) != 0)
		goto out;
	if (r.timed_out) {
		rc = ENGINE_ELIMIT;
		engine_invalid(err, "the code ran longer than %d s "
		    "(sandbox.timeout)", cfg.timeout);
		goto out;
	}
	if (r.exit_code != 0) {
		last_line(r.err ? r.err : "", r.err_len, tail, sizeof(tail));
		rc = engine_invalid(err, "%s exited with status %d%s%s",
		    argv[0], r.exit_code, tail[0] ? ": " : "", tail);
		goto out;
	}
	rc = tool_result_text(out, r.out ? r.out : "", r.out_len);
out:
	sandbox_exec_result_release(&r);
	if (sb != NULL && sandbox_destroy(sb, derr) != 0)
		log_warn("sandbox: %s", derr);
	sandbox_free(sb);
	free(b1);
	free(b2);
	return rc;
}

const struct tool_provider tool_provider_code = {
	"code", code_list, code_invoke, 0,
};
