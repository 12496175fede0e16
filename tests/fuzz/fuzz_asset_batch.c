/*
 * fuzz_asset_batch.c — batch-upload trees (engine_asset_batch) from any
 * JSON: nothing crashes, and a batch is made whole or not at all: on
 * success the app has exactly the entries the answer lists more, each a
 * well-formed node; on a refusal it has none more. The engine lives in a
 * temporary data directory removed at exit.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "tests/fuzz/fuzz_engine.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char	 app[37];

static void
init(void)
{
	conf_defaults(&conf);
	conf.map_size = 8 << 20;
	conf.asset_max_files = 400;
	fuzz_engine_open("fuzz_asset_batch");
	fuzz_app_fresh("workflow", app);
}

/* Entries of a tree answer; aborts on a malformed one. */
static size_t
entries(const json_t *kids, const char *parent_path)
{
	const json_t	*k;
	const char	*name, *path, *type;
	size_t		 i, n = 0, plen = strlen(parent_path);

	json_array_foreach(kids, i, k) {
		name = json_string_value(json_object_get(k, "name"));
		path = json_string_value(json_object_get(k, "path"));
		type = json_string_value(json_object_get(k, "node_type"));
		if (name == NULL || path == NULL || type == NULL ||
		    engine_uuid_check(json_string_value(json_object_get(k,
		    "id"))) != 0 || strchr(name, '/') != NULL ||
		    strcmp(name, "..") == 0 || strcmp(name, ".") == 0 ||
		    strncmp(path, parent_path, plen) != 0 ||
		    path[plen] != '/' || strcmp(path + plen + 1, name) != 0)
			abort();
		n += 1 + entries(json_object_get(k, "children"), path);
	}
	return n;
}

static size_t
count(const json_t *kids)
{
	const json_t	*k;
	size_t		 i, n = 0;

	json_array_foreach(kids, i, k)
		n += 1 + count(json_object_get(k, "children"));
	return n;
}

static size_t
nodes(void)
{
	char	 err[ENGINE_ERRMAX];
	json_t	*t = NULL;
	size_t	 n;

	if (engine_asset_tree(eng, app, err, &t) != 0)
		abort();
	n = count(json_object_get(t, "children"));
	json_decref(t);
	return n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*in, *out = NULL;
	size_t	 before;
	int	 rc;

	if (eng == NULL)
		init();
	if ((in = json_loadb((const char *)data, size, JSON_DECODE_ANY,
	    NULL)) == NULL)
		return 0;
	before = nodes();
	rc = engine_asset_batch(eng, app, NULL, in, err, &out);
	if (rc == 0) {
		if (nodes() != before + entries(out, ""))
			abort();
		json_decref(out);
	} else if (nodes() != before || ((rc == ENGINE_EINVAL ||
	    rc == ENGINE_ELIMIT) && err[0] == '\0'))
		abort();
	json_decref(in);
	if (nodes() > 300)
		fuzz_app_fresh("workflow", app);
	return 0;
}
