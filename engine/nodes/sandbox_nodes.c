/*
 * sandbox_nodes.c — the sandboxed runtime's two extra nodes, both working
 * in the run's sandbox (run_sandbox):
 *
 *  command      runs `cd <working_directory> && <command>` (both may hold
 *               {{#..#}}) within sandbox.timeout (60 s); outputs stdout,
 *               stderr (as UTF-8), exit_code, pid; a non-zero exit fails
 *               the node.
 *  file-upload  puts the files of variable_selector into the workspace;
 *               outputs sandbox_path and file_name (arrays for several).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/run/run.h"
#include "engine/nodes/nodes.h"
#include "engine/sandbox/sandbox.h"

/* A shell word in single quotes. malloc'd. */
static char *
shell_quote(const char *s)
{
	struct dbuf sb = { 0 };

	dbuf_addstr(&sb, "'");
	for (; *s != '\0'; s++)
		if (*s == '\'')
			dbuf_addstr(&sb, "'\\''");
		else
			dbuf_add(&sb, s, 1);
	dbuf_addstr(&sb, "'");
	return dbuf_take(&sb, NULL);
}

static int
command_run(struct node_ctx *c)
{
	struct sandbox			*sb;
	struct sandbox_exec_req		 rq;
	struct sandbox_exec_result	 res;
	struct sandbox_cancel		 cancel = { node_stop_asked, c->run };
	char				*wd = NULL, *cmd = NULL, *q = NULL;
	char				*script = NULL, *so = NULL, *se = NULL;
	size_t				 n, solen, selen;
	int				 rc = -1, secs;

	memset(&res, 0, sizeof(res));
	if (node_render(c, node_str(c->node, "working_directory"), TPL_TEXT,
	    &wd) != 0 || node_render(c, node_str(c->node, "command"),
	    TPL_TEXT, &cmd) != 0)
		goto out;
	if (json_object_set_new(c->inputs, "working_directory",
	    json_string(wd)) != 0 || json_object_set_new(c->inputs, "command",
	    json_string(cmd)) != 0) {
		node_fail(c, "out of memory");
		goto out;
	}
	if (*cmd == '\0') {
		node_fail(c, "the command is empty");
		goto out;
	}
	if (run_sandbox(c->run, c->err, &sb) != 0)
		goto out;
	/* q is measured only once it is known to exist. */
	if ((q = shell_quote(*wd ? wd : ".")) == NULL ||
	    (script = malloc(n = strlen(cmd) + strlen(q) + 16)) == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	snprintf(script, n, "cd %s && %s", q, cmd);
	memset(&rq, 0, sizeof(rq));
	rq.shell = script;
	rq.cancel = &cancel;	/* a stop kills the command at once */
	secs = c->run->e->conf->sandbox_timeout;	/* Dify: 60 s */
	rq.timeout_ms = secs * 1000;
	if (sandbox_exec(sb, &rq, c->err, &res) != 0)
		goto out;
	/* Output that is not UTF-8 reads as U+FFFD, as in Dify (Python's
	 * errors="replace"); NUL bytes are kept. */
	if ((so = engine_utf8_clean(res.out ? res.out : "", res.out_len, 0,
	    &solen)) == NULL || (se = engine_utf8_clean(res.err ? res.err :
	    "", res.err_len, 0, &selen)) == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	if (json_object_set_new(c->outputs, "stdout", json_stringn(so,
	    solen)) != 0 || json_object_set_new(c->outputs, "stderr",
	    json_stringn(se, selen)) != 0 || json_object_set_new(c->outputs,
	    "exit_code", json_integer(res.exit_code)) != 0 ||
	    json_object_set_new(c->outputs, "pid", json_integer(0)) != 0) {
		node_fail(c, "out of memory");
		goto out;
	}
	if (res.cancelled) {
		node_fail(c, "stopped");
		goto out;
	}
	if (res.timed_out) {
		node_fail(c, "the command ran longer than %d s "
		    "(sandbox.timeout)", secs);
		goto out;
	}
	if (res.exit_code != 0) {
		for (n = 0; n < selen && n < 300;)	/* whole characters */
			n += engine_utf8_seq((unsigned char *)se + n,
			    selen - n);
		node_fail(c, "the command exited with %d: %.*s",
		    res.exit_code, (int)n, se);
		goto out;
	}
	rc = 0;
out:
	sandbox_exec_result_release(&res);
	free(wd);
	free(cmd);
	free(q);
	free(script);
	free(so);
	free(se);
	return rc;
}

const struct node_type node_command = { "command", command_run, 0 };

/* A safe file name for the workspace: the last path part, no dot files. */
static void
safe_name(const char *name, char *buf, size_t bufsz)
{
	const char	*slash = name ? strrchr(name, '/') : NULL;
	size_t		 i;

	snprintf(buf, bufsz, "%s", slash ? slash + 1 : name ? name : "file");
	for (i = 0; buf[i] != '\0'; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == '\\')
			buf[i] = '_';
	if (buf[0] == '\0' || buf[0] == '.')
		snprintf(buf, bufsz, "file");
}

static int
file_upload_run(struct node_ctx *c)
{
	struct sandbox	*sb;
	json_t		*v, *files, *paths, *names, *f;
	char		*data, name[256];
	size_t		 len, i;
	int		 rc = -1, many;

	v = node_resolve(c, json_object_get(c->node->data,
	    "variable_selector"));
	if (v == NULL || json_is_null(v)) {
		json_decref(v);
		return node_fail(c, "variable_selector gives no file");
	}
	many = json_is_array(v);
	if (many)
		files = v;
	else if (json_array_append_new(files = json_array(), v) != 0) {
		json_decref(files);
		return node_fail(c, "out of memory");
	}
	paths = json_array();
	names = json_array();
	if (paths == NULL || names == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	if (run_sandbox(c->run, c->err, &sb) != 0)
		goto out;
	json_array_foreach(files, i, f) {
		if (!tpl_is_file(f)) {
			node_fail(c, "item %zu is not a file", i);
			goto out;
		}
		if (file_bytes(c, f, &data, &len) != 0)
			goto out;
		safe_name(json_string_value(json_object_get(f, "filename")),
		    name, sizeof(name));
		rc = sandbox_upload(sb, name, data, len, c->err);
		free(data);
		if (rc != 0) {
			rc = -1;
			goto out;
		}
		if (json_array_append_new(paths, json_string(name)) != 0 ||
		    json_array_append_new(names, json_string(name)) != 0) {
			node_fail(c, "out of memory");
			goto out;
		}
	}
	if (json_object_set(c->outputs, "sandbox_path", many ? paths :
	    json_array_get(paths, 0)) != 0 || json_object_set(c->outputs,
	    "file_name", many ? names : json_array_get(names, 0)) != 0) {
		node_fail(c, "out of memory");
		goto out;
	}
	rc = 0;
out:
	json_decref(files);
	json_decref(paths);
	json_decref(names);
	return rc;
}

const struct node_type node_file_upload = {
	"file-upload", file_upload_run, 0
};
