/*
 * sandbox.c — the provider registry and the calls that dispatch through a
 * sandbox's provider table.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/sandbox/provider.h"

/* ====== Registry ====== */

/* Adding a provider: its file, plus one line here (the console lists
 * them in this order). */
static const struct sandbox_provider *const providers[] = {
	&sandbox_provider_local,
	&sandbox_provider_ssh,
	&sandbox_provider_e2b,
	&sandbox_provider_docker,
};

const struct sandbox_provider *
sandbox_provider_find(const char *name)
{
	const struct sandbox_provider	*p = NULL;
	size_t				 i;

	for (i = 0; name != NULL && i < sizeof(providers) / sizeof(*providers);
	     i++)
		if (strcmp(providers[i]->name, name) == 0) {
			p = providers[i];
			break;
		}
	return p;
}

const struct sandbox_provider *
sandbox_provider_at(size_t i)
{
	return i < sizeof(providers) / sizeof(*providers) ? providers[i]
							  : NULL;
}

int
sandbox_probe(const char *name, const struct conf *c, char *err)
{
	const struct sandbox_provider *p = sandbox_provider_find(name);

	err[0] = '\0';
	if (p == NULL)
		return sandbox_fail(err, ENGINE_EINVAL, "sandbox provider "
		    "'%.60s': not built in", name ? name : "");
	return p->probe != NULL ? p->probe(c, err) : 0;
}

int
sandbox_check(const struct sandbox_provider *p, json_t *options, char *err,
    char **info)
{
	err[0] = '\0';
	return p->check != NULL ? p->check(options, err, info) : 0;
}

int
sandbox_sweep(const struct sandbox_provider *p,
    const struct sandbox_config *cfg, char *err, int *removed)
{
	*removed = 0;
	err[0] = '\0';
	return p->sweep != NULL ? p->sweep(cfg, err, removed) : 0;
}

/* ====== Configuration ====== */

void
sandbox_config_init(struct sandbox_config *cfg, const struct conf *c)
{
	memset(cfg, 0, sizeof(*cfg));
	if (c->sandbox_dir[0] != '\0')
		snprintf(cfg->dir, sizeof(cfg->dir), "%s", c->sandbox_dir);
	else
		snprintf(cfg->dir, sizeof(cfg->dir), "%s/sandboxes",
		    c->data_dir);
	cfg->network = c->sandbox_network;
	snprintf(cfg->network_allow, sizeof(cfg->network_allow), "%s",
	    c->sandbox_network_allow);
	cfg->network_connections = c->sandbox_network_connections;
	cfg->network_idle = c->sandbox_network_idle;
	cfg->memory = c->sandbox_memory;
	cfg->cpu_seconds = c->sandbox_cpu_seconds;
	cfg->processes = c->sandbox_processes;
	cfg->file_size = c->sandbox_file_size;
	cfg->workspace_size = c->sandbox_workspace_size;
	cfg->open_files = c->sandbox_open_files;
	cfg->timeout = c->sandbox_timeout;
	cfg->max_output = c->sandbox_max_output;
	cfg->uid = c->sandbox_uid;
	cfg->memory_budget = c->sandbox_memory_budget;
	cfg->budget_wait = c->sandbox_budget_wait;
	snprintf(cfg->python_paths, sizeof(cfg->python_paths), "%s",
	    c->code_python_paths);
}

int
sandbox_fail(char *err, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, ENGINE_ERRMAX, fmt, ap);
	va_end(ap);
	return rc;
}

int64_t
sandbox_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ====== For providers ====== */

int
sandbox_path_check(const char *path, int allow_root, char *err)
{
	const char	*p, *c;
	size_t		 n;

	if (path == NULL)
		return sandbox_fail(err, ENGINE_EINVAL, "path: missing");
	if (path[0] == '\0' || strcmp(path, ".") == 0)
		return allow_root ? 0 : sandbox_fail(err, ENGINE_EINVAL,
		    "path: empty");
	if (strlen(path) >= PATH_MAX - 64)
		return sandbox_fail(err, ENGINE_EINVAL, "path: too long");
	if (path[0] == '/')
		return sandbox_fail(err, ENGINE_EINVAL, "path '%.120s': must "
		    "be relative to the workspace", path);
	for (p = path; *p != '\0'; p = *c ? c + 1 : c) {
		c = strchr(p, '/');
		if (c == NULL)
			c = p + strlen(p);
		n = (size_t)(c - p);
		if (n == 0 || (n == 2 && p[0] == '.' && p[1] == '.'))
			return sandbox_fail(err, ENGINE_EINVAL,
			    "path '%.120s': empty or '..' component", path);
	}
	for (p = path; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return sandbox_fail(err, ENGINE_EINVAL,
			    "path '%.120s': control character", path);
	return 0;
}

void
sandbox_close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

int
sandbox_find_program(const char *name, char *buf, size_t bufsz)
{
	const char	*p, *e;
	int		 pass;

	for (pass = 0; pass < 2; pass++) {
		p = pass == 0 ? getenv("PATH")
			      : "/usr/bin:/bin:/usr/sbin:/sbin";
		for (; p != NULL && *p != '\0'; p = *e ? e + 1 : e) {
			e = strchr(p, ':');
			if (e == NULL)
				e = p + strlen(p);
			if (e == p || *p != '/')
				continue;
			if ((size_t)snprintf(buf, bufsz, "%.*s/%s",
			    (int)(e - p), p, name) >= bufsz)
				continue;
			if (access(buf, X_OK) == 0)
				return 0;
		}
	}
	return -1;
}

void
sandbox_sigpipe_block(sigset_t *old)
{
	sigset_t pipeset;

	sigemptyset(&pipeset);
	sigaddset(&pipeset, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipeset, old);
}

void
sandbox_sigpipe_restore(const sigset_t *old)
{
	struct timespec	zero = {0, 0};
	sigset_t	pipeset;

	sigemptyset(&pipeset);
	sigaddset(&pipeset, SIGPIPE);
	/* A SIGPIPE a vanished reader left pending. */
	while (sigtimedwait(&pipeset, NULL, &zero) > 0)
		;
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

int
sandbox_opt_str(const json_t *o, const char *key, const char *def,
    const char **out)
{
	const json_t *v = json_object_get(o, key);

	*out = def;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return -1;
	if (json_string_length(v) > 0)
		*out = json_string_value(v);
	return 0;
}

int
sandbox_opt_int(const json_t *o, const char *key, int def, int lo, int hi,
    int *out)
{
	const json_t	*v = json_object_get(o, key);
	const char	*s;
	char		*end;
	long long	 n;

	*out = def;
	if (v == NULL || json_is_null(v))
		return 0;
	if (json_is_integer(v))
		n = json_integer_value(v);
	else if (json_is_string(v)) {
		s = json_string_value(v);
		if (s[0] == '\0')
			return 0;
		n = strtoll(s, &end, 10);
		if (*end != '\0')
			return -1;
	} else
		return -1;
	if (n < lo || n > hi)
		return -1;
	*out = (int)n;
	return 0;
}

/* ====== Shell quoting ====== */

void
sandbox_add_quoted(struct dbuf *b, const char *s)
{
	dbuf_addc(b, '\'');
	for (; *s != '\0'; s++)
		if (*s == '\'')
			dbuf_add(b, "'\\''", 4);
		else
			dbuf_addc(b, *s);
	dbuf_addc(b, '\'');
}

int
sandbox_url_escape(char *buf, size_t bufsz, const char *s)
{
	static const char	 hex[] = "0123456789ABCDEF";
	size_t			 o = strlen(buf);
	unsigned char		 c;

	for (; *s != '\0'; s++) {
		c = (unsigned char)*s;
		if (isalnum(c) || strchr("-._~/", c) != NULL) {
			if (o + 1 >= bufsz)
				return -1;
			buf[o++] = (char)c;
		} else {
			if (o + 3 >= bufsz)
				return -1;
			buf[o++] = '%';
			buf[o++] = hex[c >> 4];
			buf[o++] = hex[c & 15];
		}
	}
	buf[o] = '\0';
	return 0;
}

int
sandbox_ws_path(const char *workdir, const char *path, int allow_root,
    char *err, char *buf, size_t bufsz)
{
	int rc;

	if ((rc = sandbox_path_check(path, allow_root, err)) != 0)
		goto out;
	if (path[0] == '\0' || strcmp(path, ".") == 0)
		snprintf(buf, bufsz, "%s", workdir);
	else if ((size_t)snprintf(buf, bufsz, "%s/%s", workdir, path) >=
	    bufsz)
		rc = sandbox_fail(err, ENGINE_EINVAL, "path '%.120s': too long",
		    path);
out:
	return rc;
}

int64_t
sandbox_exec_timeout_ms(const struct sandbox_exec_req *req,
    const struct sandbox_config *cfg)
{
	if (req->timeout_ms > 0)
		return req->timeout_ms;
	if (cfg->timeout > 0)
		return (int64_t)cfg->timeout * 1000;
	return 60000;
}

int
sandbox_exec_take(struct sandbox_exec_result *res, struct dbuf *out,
    struct dbuf *errb, char *err)
{
	res->out_truncated = out->err != DBUF_OK;
	res->err_truncated = errb->err != DBUF_OK;
	res->out = dbuf_take(out, &res->out_len);
	res->err = dbuf_take(errb, &res->err_len);
	if (res->out == NULL || res->err == NULL)
		return sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
	return 0;
}

/* ====== Dispatch ====== */

/*
 * Counts operation op of provider in the metrics, and ends its span s (a
 * child of the thread's current one: the node) with exit code and error.
 */
static void
sandbox_observe(struct span *s, const char *provider, const char *op,
    int rc, const char *err, double t0,
    const struct sandbox_exec_result *res)
{
	metric_add(METRIC_SANDBOX_OPS, METRIC_LABELS(provider, op, rc == 0 ?
	    "ok" : "error"), 1);
	metric_observe(METRIC_SANDBOX_DURATION, METRIC_LABELS(provider, op),
	    metric_clock() - t0);
	if (s == NULL)
		return;
	span_attr_str(s, "dify.sandbox.provider", provider);
	if (res != NULL && rc == 0) {
		span_attr_int(s, "process.exit.code", res->exit_code);
		if (res->timed_out)
			span_attr_str(s, "dify.sandbox.killed", "timeout");
	}
	if (rc != 0)
		span_error(s, err);
	span_end(s);
}

/* A span for op inside a run's trace (warm code runners made ahead of
 * any run have none). */
static struct span *
sandbox_span(const char *op)
{
	return span_current() != NULL ? span_start(op, span_current(),
	    SPAN_CLIENT) : NULL;
}

int
sandbox_create(const struct sandbox_provider *p,
    const struct sandbox_config *cfg, char *err, struct sandbox **out)
{
	struct span	*s = sandbox_span("sandbox create");
	double		 t0 = metric_clock();
	int		 rc;

	*out = NULL;
	err[0] = '\0';
	rc = p->create(cfg, err, out);
	if (rc == 0)
		(*out)->provider = p;
	sandbox_observe(s, p->name, "create", rc, err, t0, NULL);
	return rc;
}

int
sandbox_exec(struct sandbox *sb, const struct sandbox_exec_req *req,
    char *err, struct sandbox_exec_result *res)
{
	struct span	*s;
	const char	*kv;
	double		 t0 = metric_clock();
	size_t		 k;
	int		 rc;

	memset(res, 0, sizeof(*res));
	err[0] = '\0';
	if ((req->argv == NULL) == (req->shell == NULL) ||
	    (req->argv != NULL && req->argv[0] == NULL))
		return sandbox_fail(err, ENGINE_EINVAL, "exec: give argv or a "
		    "shell command");
	if (req->stdin_len > 0 && req->stdin_data == NULL)
		return sandbox_fail(err, ENGINE_EINVAL, "exec: stdin_len "
		    "without data");
	for (k = 0; req->env != NULL && (kv = req->env[k]) != NULL; k++)
		if (kv[0] == '=' || strchr(kv, '=') == NULL)
			return sandbox_fail(err, ENGINE_EINVAL, "exec: "
			    "environment entry '%.60s' is not NAME=value", kv);
	s = sandbox_span("sandbox exec");
	span_attr_content(s, "process.command_line", req->shell);
	rc = sb->provider->exec(sb, req, err, res);
	sandbox_observe(s, sb->provider->name, "exec", rc, err, t0, res);
	return rc;
}

int
sandbox_upload(struct sandbox *sb, const char *path, const void *data,
    size_t len, char *err)
{
	err[0] = '\0';
	return sb->provider->upload(sb, path, data, len, err);
}

int
sandbox_download(struct sandbox *sb, const char *path, int64_t max,
    char *err, char **data, size_t *len)
{
	*data = NULL;
	*len = 0;
	err[0] = '\0';
	return sb->provider->download(sb, path, max, err, data, len);
}

int
sandbox_list(struct sandbox *sb, const char *dir, size_t max, char *err,
    struct sandbox_file **files, size_t *n)
{
	*files = NULL;
	*n = 0;
	err[0] = '\0';
	return sb->provider->list(sb, dir, max, err, files, n);
}

int
sandbox_destroy(struct sandbox *sb, char *err)
{
	struct span	*s = sandbox_span("sandbox destroy");
	double		 t0 = metric_clock();
	int		 rc;

	err[0] = '\0';
	rc = sb->provider->destroy(sb, err);
	sandbox_observe(s, sb->provider->name, "destroy", rc, err, t0, NULL);
	return rc;
}

void
sandbox_free(struct sandbox *sb)
{
	if (sb != NULL)
		sb->provider->free(sb);
}

/* ====== Results ====== */

void
sandbox_exec_result_release(struct sandbox_exec_result *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

void
sandbox_files_free(struct sandbox_file *files, size_t n)
{
	size_t i;

	for (i = 0; files != NULL && i < n; i++)
		free(files[i].path);
	free(files);
}
