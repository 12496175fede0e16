/*
 * sandbox.c — the provider registry and the calls that dispatch through a
 * sandbox's provider table.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/sandbox/sandbox.h"

/* ====== Registry ====== */

/* Adding a provider: its file, plus one line here. */
extern const struct sandbox_provider sandbox_provider_e2b;
static const struct sandbox_provider *const providers[] = {
	&sandbox_provider_local,
	&sandbox_provider_ssh,
	&sandbox_provider_e2b,
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
	cfg->memory = c->sandbox_memory;
	cfg->cpu_seconds = c->sandbox_cpu_seconds;
	cfg->processes = c->sandbox_processes;
	cfg->file_size = c->sandbox_file_size;
	cfg->workspace_size = c->sandbox_workspace_size;
	cfg->open_files = c->sandbox_open_files;
	cfg->timeout = c->sandbox_timeout;
	cfg->max_output = c->sandbox_max_output;
	cfg->uid = c->sandbox_uid;
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

/* ====== Dispatch ====== */

int
sandbox_create(const struct sandbox_provider *p,
    const struct sandbox_config *cfg, char *err, struct sandbox **out)
{
	int rc;

	*out = NULL;
	err[0] = '\0';
	rc = p->create(cfg, err, out);
	if (rc == 0)
		(*out)->provider = p;
	return rc;
}

int
sandbox_exec(struct sandbox *sb, const struct sandbox_exec_req *req,
    char *err, struct sandbox_exec_result *res)
{
	memset(res, 0, sizeof(*res));
	err[0] = '\0';
	return sb->provider->exec(sb, req, err, res);
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
	err[0] = '\0';
	return sb->provider->destroy(sb, err);
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
