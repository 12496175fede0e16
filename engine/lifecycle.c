/*
 * lifecycle.c — opening and closing an engine: the data directory, the
 * store, the secrets key's check, the code runners, the app cache, the
 * live runs, tracing and the tool manifests, in that order, and closed
 * the other way; the few calls the server makes on the whole engine
 * (health, admission slots, the sandbox's start and stop). The top of the
 * engine: it calls every part, and no part calls it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <curl/curl.h>

#include "engine/internal.h"
#include "engine/knowledge/knowledge.h"
#include "engine/records/records.h"
#include "engine/sandbox/sandbox.h"

int
engine_open(const struct conf *c, char *err, struct engine **out)
{
	struct engine		*e = NULL;
	struct store_opts	 o;
	struct sandbox_config	 sc;
	int			 rc;

	if (mkdir(c->data_dir, 0700) != 0 && errno != EEXIST) {
		snprintf(err, ENGINE_ERRMAX, "data directory '%.200s': %s",
		    c->data_dir, strerror(errno));
		return ENGINE_ESTORE;
	}
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return ENGINE_ENOMEM;
	/* Reference-counted by libcurl; done before any worker thread. A
	 * failure leaves no count to drop. */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(err, ENGINE_ERRMAX, "libcurl could not start (its "
		    "TLS library or out of memory)");
		free(e);
		return ENGINE_ENOMEM;
	}
	e->conf = c;
	engine_uuid(e->host_id);
	live_init(e);
	memset(&o, 0, sizeof(o));
	o.map_size = c->map_size;
	o.max_map_size = c->max_map_size;
	o.sync = c->sync;
	o.max_readers = 0;
	/* Batches share flushes; with sync off there are none to share,
	 * and writers taking the write lock each beat a hand-off to a
	 * leader (tests/bench/fsync.sh). */
	o.batch_max = c->batch_max > 0 ? c->batch_max : c->sync ? 64 : 1;
	o.backend = c->storage_backend;
	o.postgres_url = c->postgres_url;
	o.pool_size = c->postgres_pool > 0 ? c->postgres_pool :
	    store_pool_size(c->max_runs > 0 ? c->max_runs :
	    c->max_connections / 4 * 3);
	o.wait_ms = c->postgres_wait * 1000;
	if ((rc = store_open(c->data_dir, &o, &e->store)) != 0) {
		snprintf(err, ENGINE_ERRMAX, "storage in '%.200s': %s",
		    c->data_dir, store_strerror(rc));
		curl_global_cleanup();
		live_fini(e);
		free(e);
		return engine_from_store(rc);
	}
	/* A host with another key than the one the secrets here were sealed
	 * with would seal secrets nobody else can open: refuse now. */
	if ((rc = secret_key_verify(e, err)) != 0) {
		store_close(e->store);
		curl_global_cleanup();
		live_fini(e);
		free(e);
		return rc;
	}
	/* Costs nothing until a code node runs. */
	sandbox_config_init(&sc, c);
	if ((rc = sandbox_code_pool_new(&sc, c->code_pool_size,
	    c->code_pool_idle, &e->code_pool)) == 0)
		sandbox_code_pool_tune(e->code_pool,
		    (c->code_fork_server ? SANDBOX_FORK_PYTHON3 : 0) |
		    (c->code_fork_server_javascript ? SANDBOX_FORK_JAVASCRIPT :
		    0),
		    c->code_pool_max, c->code_pool_spare_idle,
		    c->code_pool_wait_ms);
	if (rc != 0 ||
	    (rc = app_cache_init(e)) != 0 || (rc = trace_start(e)) != 0) {
		snprintf(err, ENGINE_ERRMAX, "out of memory");
		engine_close(e);
		return rc;
	}
	if ((rc = tool_manifests_open(e, err)) != 0) {
		if (rc == ENGINE_ENOMEM)
			snprintf(err, ENGINE_ERRMAX, "out of memory");
		engine_close(e);
		return rc;
	}
	*out = e;
	return 0;
}

void
engine_close(struct engine *e)
{
	if (e == NULL)
		return;
	trace_stop(e);
	kb_indexer_stop(e);
	tool_manifests_close(e);
	sandbox_code_pool_free(e->code_pool);
	live_fini(e);
	app_cache_fini(e);
	store_close(e->store);
	curl_global_cleanup();
	free(e);
}

struct store *
engine_store(struct engine *e)
{
	return e->store;
}

int
engine_app_slot_take(struct engine *e, const char *app_id, int n,
    int64_t *slot)
{
	int rc = store_slot_take(e->store, app_id, n, slot);

	return rc == 1 ? 1 : engine_from_store(rc);
}

void
engine_app_slot_give(struct engine *e, int64_t slot)
{
	store_slot_give(e->store, slot);
}

int
engine_health(struct engine *e)
{
	struct store_txn	*t = NULL;
	int			 rc;

	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	store_read_end(t);
	return 0;
}

void
engine_sandbox_stop(struct engine *e)
{
	sandbox_code_pool_stop(e->code_pool);
}

int
engine_sandbox_probe(struct engine *e, char *err)
{
	sandbox_sweep_active(e);
	return sandbox_probe("local", e->conf, err);
}
