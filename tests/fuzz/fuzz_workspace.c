/*
 * fuzz_workspace.c — saved sandbox workspaces (engine/records/workspace.c)
 * from any bytes: the first line is the path asked for, the rest the saved
 * tar (made inside the sandbox, so anything). Nothing crashes; a listing
 * holds only clean relative paths, in order; every file it lists reads back
 * at its listed size; a folder's download is a .tar.gz whose names stay in
 * the workspace. The engine lives in a temporary data directory removed at
 * exit.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "engine/engine.h"
#include "engine/records/records.h"
#include "tests/fuzz/fuzz_engine.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char	 app[37];

static void
init(void)
{
	conf_defaults(&conf);
	conf.map_size = 16 << 20;
	conf.sandbox_workspace_list_max = 200;
	fuzz_engine_open("fuzz_workspace");
	fuzz_app_fresh("workflow", app);
}

struct put {
	const void	*tar;
	size_t		 len;
};

static int
put_fn(struct store_txn *t, void *arg)
{
	struct put *p = arg;

	return workspace_draft_put(t, app, "fuzz", p->tar, p->len);
}

/* A path the engine would accept as it is: clean, relative. */
static int
clean(const char *p)
{
	char out[4200];

	return *p != '\0' && engine_workspace_path(p, out, sizeof(out)) ==
	    0 && strcmp(out, p) == 0;
}

/* Every name of a downloaded .tar.gz stays in the workspace. */
static void
check_archive(const char *gz, size_t len)
{
	struct archive		*a = archive_read_new();
	struct archive_entry	*ae;
	char			 out[4200];
	const char		*n;

	archive_read_support_filter_gzip(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_memory(a, gz, len) != ARCHIVE_OK)
		abort();
	while (archive_read_next_header(a, &ae) == ARCHIVE_OK) {
		n = archive_entry_pathname(ae);
		if (n == NULL || engine_workspace_path(n, out,
		    sizeof(out)) != 0)
			abort();
	}
	archive_read_free(a);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct workspace_ref	 w = { NULL, "fuzz", NULL };
	struct put		 p;
	const uint8_t		*nl = memchr(data, '\n', size < 256 ? size :
				    256);
	char			 path[257], err[ENGINE_ERRMAX] = "", *buf;
	const char		*prev = "", *fp;
	json_t			*list = NULL, *n;
	size_t			 i, len, plen;
	int			 rc, arch, r;

	if (eng == NULL)
		init();
	if (nl == NULL)
		return 0;
	plen = (size_t)(nl - data);
	memcpy(path, data, plen);
	path[plen] = '\0';
	if (memchr(path, '\0', plen) != NULL)
		return 0;
	p.tar = nl + 1;
	p.len = size - plen - 1;
	if (store_write(eng->store, put_fn, &p) != 0)
		abort();
	w.app_id = app;
	for (r = 0; r < 2; r++) {
		rc = engine_workspace_list(eng, &w, path, r, err, &list);
		if (rc != 0) {
			if (err[0] == '\0')
				abort();
			continue;
		}
		prev = "";
		json_array_foreach(list, i, n) {
			fp = json_string_value(json_object_get(n, "path"));
			if (fp == NULL || !clean(fp) || strcmp(prev, fp) > 0)
				abort();
			prev = fp;
			if (json_is_true(json_object_get(n, "is_dir")) ||
			    i >= 8)
				continue;
			if (engine_workspace_read(eng, &w, fp, err, &buf,
			    &len) == 0) {
				if ((json_int_t)len != json_integer_value(
				    json_object_get(n, "size")))
					abort();
				free(buf);
			}
		}
		json_decref(list);
		list = NULL;
	}
	if (engine_workspace_download(eng, &w, path, err, &buf, &len,
	    &arch) == 0) {
		if (arch)
			check_archive(buf, len);
		free(buf);
	}
	return 0;
}
