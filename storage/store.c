/*
 * store.c — the public storage API over its backends (backend.h): picks
 * the backend at open, passes each call to it, and keeps what both share:
 * names of the databases, error texts, JSON records and the migrations of
 * the records.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "storage/backend.h"

const char *const store_db_names[STORE_DB__COUNT] = {
	[STORE_DB_APPS] = "apps",
	[STORE_DB_ASSETS] = "assets",
	[STORE_DB_BLOBS] = "blobs",
	[STORE_DB_BLOBREFS] = "blobrefs",
	[STORE_DB_RUNS] = "runs",
	[STORE_DB_RUNS_BY_APP] = "runs_by_app",
	[STORE_DB_NODE_RUNS] = "node_runs",
	[STORE_DB_CONVERSATIONS] = "conversations",
	[STORE_DB_MESSAGES] = "messages",
	[STORE_DB_API_KEYS] = "api_keys",
	[STORE_DB_SETTINGS] = "settings",
	[STORE_DB_META] = "meta",
	[STORE_DB_IMPORTS] = "imports",
	[STORE_DB_DRAFTS] = "drafts",
	[STORE_DB_UPLOADS] = "uploads",
	[STORE_DB_VERSIONS] = "versions",
	[STORE_DB_LEASES] = "leases",
};

int
store_db_find(const char *name)
{
	int i;

	for (i = 0; i < STORE_DB__COUNT; i++)
		if (strcmp(store_db_names[i], name) == 0)
			return i;
	return -1;
}

const char *
store_strerror(int rc)
{
	switch (rc) {
	case STORE_OK: return "success";
	case STORE_ENOTFOUND: return "not found";
	case STORE_EEXIST: return "already exists";
	case STORE_EFULL: return "storage is full (storage.max_map_size)";
	case STORE_ENOSPC: return "no space left on the disk for the database";
	case STORE_EIO: return "storage input/output error";
	case STORE_ENOMEM: return "out of memory";
	case STORE_EVERSION: return "data directory written by a newer flowcgi";
	case STORE_EINVAL: return "stored record is damaged";
	case STORE_EMAPFULL: return "storage map full";
	case STORE_EBUSY: return "storage busy (too many readers)";
	case STORE_EUNAVAIL:
		return "the database server cannot be reached "
		    "(storage.postgres_wait)";
	case STORE_ECONFIG:
		return "storage.backend must be lmdb or postgres, and postgres "
		    "needs storage.postgres_url";
	case STORE_ENEEDED: return "a record the write needs is gone";
	default: return "unknown storage error";
	}
}

int
store_pool_size(int max_runs)
{
	int n = max_runs / 4;

	return n < 4 ? 4 : n > 32 ? 32 : n;
}

/* ====== Passing calls to the backend ====== */

void
store_close(struct store *s)
{
	if (s != NULL)
		s->be->close(s);
}

int64_t
store_map_size(struct store *s)
{
	return s->be->map_size(s);
}

void
store_stats(struct store *s, struct store_stats *out)
{
	s->be->stats(s, out);
}

int
store_read_begin(struct store *s, struct store_txn **out)
{
	return s->be->read_begin(s, out);
}

void
store_read_end(struct store_txn *t)
{
	if (t != NULL)
		t->be->read_end(t);
}

int
store_get_copy(struct store *s, enum store_db db, const void *key,
    size_t klen, void **val, size_t *vlen)
{
	struct store_txn	*t = NULL;
	const void		*v = NULL;
	size_t			 n = 0;
	int			 rc;

	if (s->be->get_copy != NULL)
		return s->be->get_copy(s, db, key, klen, val, vlen);
	if ((rc = store_read_begin(s, &t)) != 0)
		return rc;
	if ((rc = store_get(t, db, key, klen, &v, &n)) != 0)
		goto out;
	if ((*val = malloc(n > 0 ? n : 1)) == NULL) {
		rc = STORE_ENOMEM;
		goto out;
	}
	memcpy(*val, v, n);
	*vlen = n;
out:
	store_read_end(t);
	return rc;
}

int
store_generation(struct store *s, uint64_t *gen)
{
	if (s->be->generation == NULL)
		return STORE_ENOTFOUND;
	return s->be->generation(s, gen);
}

int
store_write(struct store *s, store_write_fn fn, void *arg)
{
	return s->be->write(s, fn, arg);
}

uint64_t
store_txn_id(const struct store_txn *t)
{
	return t->be->txn_id(t);
}

int
store_get(struct store_txn *t, enum store_db db, const void *key, size_t klen,
    const void **val, size_t *vlen)
{
	return t->be->get(t, db, key, klen, val, vlen);
}

int
store_need(struct store_txn *t, enum store_db db, const void *key,
    size_t klen)
{
	const void	*v;
	size_t		 n;
	int		 rc;

	if (t->be->need != NULL)
		return t->be->need(t, db, key, klen);
	rc = t->be->get(t, db, key, klen, &v, &n);
	return rc == STORE_ENOTFOUND ? STORE_ENEEDED : rc;
}

int
store_put(struct store_txn *t, enum store_db db, const void *key, size_t klen,
    const void *val, size_t vlen, unsigned flags)
{
	return t->be->put(t, db, key, klen, val, vlen, flags);
}

int
store_del(struct store_txn *t, enum store_db db, const void *key, size_t klen)
{
	return t->be->del(t, db, key, klen);
}

int
store_cursor_open(struct store_txn *t, enum store_db db,
    struct store_cursor **out)
{
	return t->be->cursor_open(t, db, out);
}

void
store_cursor_close(struct store_cursor *c)
{
	if (c != NULL)
		c->be->cursor_close(c);
}

int
store_cursor_first(struct store_cursor *c, struct store_kv *kv)
{
	return c->be->cursor_move(c, STORE_CURSOR_FIRST, NULL, 0, kv);
}

int
store_cursor_last(struct store_cursor *c, struct store_kv *kv)
{
	return c->be->cursor_move(c, STORE_CURSOR_LAST, NULL, 0, kv);
}

int
store_cursor_seek(struct store_cursor *c, const void *key, size_t klen,
    struct store_kv *kv)
{
	return c->be->cursor_move(c, STORE_CURSOR_SEEK, key, klen, kv);
}

int
store_cursor_next(struct store_cursor *c, struct store_kv *kv)
{
	return c->be->cursor_move(c, STORE_CURSOR_NEXT, NULL, 0, kv);
}

int
store_cursor_prev(struct store_cursor *c, struct store_kv *kv)
{
	return c->be->cursor_move(c, STORE_CURSOR_PREV, NULL, 0, kv);
}

/* ====== Slots ====== */

int
store_slot_take(struct store *s, const char *name, int n, int64_t *slot)
{
	const char *p;

	if (*name == '\0' || strlen(name) > 64)
		return STORE_EINVAL;
	for (p = name; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
			return STORE_EINVAL;
	return s->be->slot_take(s, name, n, slot);
}

void
store_slot_give(struct store *s, int64_t slot)
{
	s->be->slot_give(s, slot);
}

/* ====== JSON records ====== */

int
store_get_json(struct store_txn *t, enum store_db db, const char *key,
    json_t **out)
{
	const void	*v = NULL;
	size_t		 vlen = 0;
	json_t		*j;
	int		 rc;

	if ((rc = store_get(t, db, key, strlen(key), &v, &vlen)) != 0)
		return rc;
	if ((j = json_loadb(v, vlen, 0, NULL)) == NULL) {
		log_error("storage: %s/%s: damaged record", store_db_names[db],
		    key);
		return STORE_EINVAL;
	}
	*out = j;
	return 0;
}

int
store_get_copy_json(struct store *s, enum store_db db, const char *key,
    json_t **out)
{
	void	*v = NULL;
	size_t	 vlen = 0;
	json_t	*j;
	int	 rc;

	if ((rc = store_get_copy(s, db, key, strlen(key), &v, &vlen)) != 0)
		return rc;
	j = json_loadb(v, vlen, 0, NULL);
	free(v);
	if (j == NULL) {
		log_error("storage: %s/%s: damaged record", store_db_names[db],
		    key);
		return STORE_EINVAL;
	}
	*out = j;
	return 0;
}

int
store_put_json(struct store_txn *t, enum store_db db, const char *key,
    const json_t *val, unsigned flags)
{
	char	*s;
	size_t	 len;
	int	 rc;

	if ((s = store_json_text(val, &len)) == NULL)
		return STORE_ENOMEM;
	rc = store_put(t, db, key, strlen(key), s, len, flags);
	free(s);
	return rc;
}

/* ====== Open, schema and migrations ====== */

/*
 * migrations[v] brings the records at schema version v to v + 1 inside the
 * write transaction that records the new version. Version 0 is an empty
 * store. They use the public calls only, so they run on every backend
 * (each backend also versions its own layout: pg.c's tables).
 */
typedef int (*store_migrate_fn)(struct store_txn *t);

static int
migrate_0_to_1(struct store_txn *t)
{
	(void)t;	/* the named databases were created at open */
	return 0;
}

/*
 * Version 2 keeps an app's draft DSL in its own database (drafts), so that
 * reading or listing apps does not parse every draft: move the "dsl" field
 * of each apps record there.
 */
static int
migrate_1_to_2(struct store_txn *t)
{
	struct store_cursor	*c = NULL;
	struct store_kv		 kv = { NULL, 0, NULL, 0 };
	json_t			*all = NULL, *rec, *dsl;
	const char		*id;
	size_t			 i;
	int			 rc;

	if ((all = json_array()) == NULL)
		return STORE_ENOMEM;
	if ((rc = store_cursor_open(t, STORE_DB_APPS, &c)) != 0)
		goto out;
	for (rc = store_cursor_first(c, &kv); rc == 0;
	     rc = store_cursor_next(c, &kv))
		if ((rec = json_loadb(kv.v, kv.vlen, 0, NULL)) != NULL &&
		    json_array_append_new(all, rec) != 0) {
			rc = STORE_ENOMEM;
			break;
		}
	store_cursor_close(c);
	c = NULL;
	if (rc != STORE_ENOTFOUND)
		goto out;
	rc = 0;
	json_array_foreach(all, i, rec) {
		id = json_string_value(json_object_get(rec, "id"));
		dsl = json_object_get(rec, "dsl");
		if (id == NULL || dsl == NULL)
			continue;
		if ((rc = store_put_json(t, STORE_DB_DRAFTS, id, dsl, 0)) != 0)
			goto out;
		json_object_del(rec, "dsl");
		if ((rc = store_put_json(t, STORE_DB_APPS, id, rec, 0)) != 0)
			goto out;
	}
out:
	store_cursor_close(c);
	json_decref(all);
	return rc;
}

/*
 * Version 3 stores a run's node executions as one record under the run id
 * (engine/run/run.c). Older records stay as they are and are still read, so
 * nothing moves; the version only keeps an older flowcgi, which would not
 * find the new records, from opening the data.
 */
static int
migrate_2_to_3(struct store_txn *t)
{
	(void)t;
	return 0;
}

/*
 * Version 4 keeps published versions of workflow apps (versions, opened
 * empty at store_open). An app never published runs its draft, so nothing
 * moves; the version keeps an older flowcgi, which would run the draft of
 * a published app, from opening the data.
 */
static int
migrate_3_to_4(struct store_txn *t)
{
	(void)t;
	return 0;
}

static const store_migrate_fn migrations[STORE_SCHEMA_VERSION] = {
	migrate_0_to_1,
	migrate_1_to_2,
	migrate_2_to_3,
	migrate_3_to_4,
};

static int
schema_migrate(struct store_txn *t, void *arg)
{
	const void	*v = NULL;
	size_t		 vlen = 0;
	char		 buf[16];
	long		 have = 0;
	int		 rc, n;

	(void)arg;
	rc = store_get(t, STORE_DB_META, "schema_version", 14, &v, &vlen);
	if (rc == 0) {
		if (vlen >= sizeof(buf))
			return STORE_EINVAL;
		memcpy(buf, v, vlen);
		buf[vlen] = '\0';
		have = strtol(buf, NULL, 10);
	} else if (rc != STORE_ENOTFOUND)
		return rc;
	if (have > STORE_SCHEMA_VERSION)
		return STORE_EVERSION;
	if (have == STORE_SCHEMA_VERSION)
		return 0;
	for (; have < STORE_SCHEMA_VERSION; have++)
		if ((rc = migrations[have](t)) != 0)
			return rc;
	n = snprintf(buf, sizeof(buf), "%d", STORE_SCHEMA_VERSION);
	return store_put(t, STORE_DB_META, "schema_version", 14, buf,
	    (size_t)n, 0);
}

int
store_open(const char *dir, const struct store_opts *o, struct store **out)
{
	const struct store_backend	*be;
	struct store			*s = NULL;
	int				 rc;

	if (o->backend == NULL || *o->backend == '\0' ||
	    strcmp(o->backend, "lmdb") == 0)
		be = &store_backend_lmdb;
	else if (strcmp(o->backend, "postgres") == 0)
		be = &store_backend_pg;
	else {
		log_error("storage: unknown storage.backend '%.64s' (lmdb or "
		    "postgres)", o->backend);
		return STORE_ECONFIG;
	}
	if ((rc = be->open(dir, o, &s)) != 0)
		return rc;
	if ((rc = store_write(s, schema_migrate, NULL)) != 0) {
		store_close(s);
		return rc;
	}
	*out = s;
	return 0;
}
