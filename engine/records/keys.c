/*
 * keys.c — service API keys. The api_keys database maps the SHA-256 (hex)
 * of a key to {id, app_id, created_at, hint}; the key itself is never
 * stored, so it is shown once, when it is made. Listing an app's keys walks
 * the database (keys are few).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "engine/records/records.h"

#define KEY_PREFIX	"app-"
#define KEY_CHARS	24
#define KEYS_PER_APP	100

struct key_put {
	const char	*app_id;
	char		 hash[STORE_HASH_HEX];
	json_t		*rec;
};

static int
key_put_fn(struct store_txn *t, void *arg)
{
	struct key_put	*p = arg;
	json_t		*app = NULL, *keys = NULL;
	size_t		 n;
	int		 rc;

	if ((rc = store_get_json(t, STORE_DB_APPS, p->app_id, &app)) != 0)
		return rc;
	json_decref(app);
	if ((rc = records_collect(t, STORE_DB_API_KEYS, NULL, p->app_id, 0,
	    &keys)) != 0)
		return rc;
	n = json_object_size(keys);
	json_decref(keys);
	if (n >= KEYS_PER_APP)
		return ENGINE_ELIMIT;
	return store_put_json(t, STORE_DB_API_KEYS, p->hash, p->rec,
	    STORE_NOOVERWRITE);
}

int
engine_key_create(struct engine *e, const char *app_id, json_t **out)
{
	static const char	 alphabet[] = "abcdefghijklmnopqrstuvwxyz"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	struct key_put		 p;
	unsigned char		 raw[KEY_CHARS];
	char			 token[sizeof(KEY_PREFIX) + KEY_CHARS], id[37];
	size_t			 i;
	int64_t			 now = engine_now();
	int			 rc;

	if (engine_uuid_check(app_id) != 0)
		return ENGINE_ENOTFOUND;
	if (RAND_bytes(raw, sizeof(raw)) != 1)
		return ENGINE_ENOMEM;
	memcpy(token, KEY_PREFIX, strlen(KEY_PREFIX));
	for (i = 0; i < KEY_CHARS; i++)	/* 62 letters: a slight bias */
		token[strlen(KEY_PREFIX) + i] = alphabet[raw[i] % 62];
	token[strlen(KEY_PREFIX) + KEY_CHARS] = '\0';
	engine_uuid(id);
	memset(&p, 0, sizeof(p));
	p.app_id = app_id;
	store_hash(token, strlen(token), p.hash);
	p.rec = json_pack("{s:s,s:s,s:I,s:s+}", "id", id, "app_id", app_id,
	    "created_at", (json_int_t)now, "hint", "app-...",
	    token + strlen(token) - 4);
	if (p.rec == NULL)
		return ENGINE_ENOMEM;
	rc = engine_from_store(store_write(e->store, key_put_fn, &p));
	json_decref(p.rec);
	if (rc != 0)
		return rc;
	*out = json_pack("{s:s,s:s,s:s,s:n,s:I}", "id", id, "type", "app",
	    "token", token, "last_used_at", "created_at", (json_int_t)now);
	OPENSSL_cleanse(token, sizeof(token));
	return *out ? 0 : ENGINE_ENOMEM;
}

int
engine_key_list(struct engine *e, const char *app_id, json_t **out)
{
	struct store_txn	*t = NULL;
	json_t			*keys = NULL, *data = NULL, *rec;
	const char		*hash;
	int			 rc;

	if (engine_uuid_check(app_id) != 0)
		return ENGINE_ENOTFOUND;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	if ((rc = store_get_json(t, STORE_DB_APPS, app_id, &rec)) == 0) {
		json_decref(rec);
		rc = records_collect(t, STORE_DB_API_KEYS, NULL, app_id, 0,
		    &keys);
	}
	store_read_end(t);
	if (rc != 0)
		return engine_from_store(rc);
	rc = ENGINE_ENOMEM;
	if ((data = json_array()) == NULL)
		goto out;
	json_object_foreach(keys, hash, rec)
		if (json_array_append_new(data, json_pack(
		    "{s:O,s:s,s:O,s:n,s:O}", "id", json_object_get(rec, "id"),
		    "type", "app", "token", json_object_get(rec, "hint"),
		    "last_used_at", "created_at", json_object_get(rec,
		    "created_at"))) != 0)
			goto out;
	if ((*out = json_pack("{s:O}", "data", data)) != NULL)
		rc = 0;
out:
	json_decref(keys);
	json_decref(data);
	return rc;
}

struct key_del {
	const char	*app_id;
	const char	*key_id;
};

static int
key_del_fn(struct store_txn *t, void *arg)
{
	struct key_del	*d = arg;
	json_t		*keys = NULL, *rec;
	const char	*hash, *id, *found = NULL;
	int		 rc;

	if ((rc = records_collect(t, STORE_DB_API_KEYS, NULL, d->app_id, 0,
	    &keys)) != 0)
		return rc;
	json_object_foreach(keys, hash, rec)
		if ((id = json_string_value(json_object_get(rec, "id"))) !=
		    NULL && strcmp(id, d->key_id) == 0) {
			found = hash;
			break;
		}
	rc = found != NULL ? store_del(t, STORE_DB_API_KEYS, found,
	    strlen(found)) : STORE_ENOTFOUND;
	json_decref(keys);
	return rc;
}

int
engine_key_delete(struct engine *e, const char *app_id, const char *key_id)
{
	struct key_del d = { app_id, key_id };

	return engine_from_store(store_write(e->store, key_del_fn, &d));
}

/* Removes every key of app_id (for app.c's delete). */
int
keys_delete_all(struct store_txn *t, const char *app_id)
{
	json_t		*keys = NULL, *rec;
	const char	*hash;
	int		 rc;

	if ((rc = records_collect(t, STORE_DB_API_KEYS, NULL, app_id, 0,
	    &keys)) != 0)
		return rc;
	json_object_foreach(keys, hash, rec)
		if ((rc = store_del(t, STORE_DB_API_KEYS, hash,
		    strlen(hash))) != 0)
			break;
	json_decref(keys);
	return rc;
}

int
engine_key_resolve(struct engine *e, const char *token, char app_id[37])
{
	/* The last key this thread resolved, with the stored bytes it came
	 * from: a request with the same key parses nothing, and a change to
	 * the stored record (revoked, or another process's) is seen at once.
	 * On PostgreSQL also the configuration generation it was read under
	 * (app_cache_generation): while it holds, the key is not read again. */
	static __thread struct {
		char	 hash[STORE_HASH_HEX];
		char	 rec[512];
		size_t	 len;
		char	 app[37];
		uint64_t gen1;	/* generation + 1, 0 none */
	}			 last;
	char			 hash[STORE_HASH_HEX];
	json_t			*rec = NULL;
	const char		*id;
	void			*v = NULL;
	size_t			 vlen = 0;
	uint64_t		 gen, gen1 = 0;
	int			 rc;

	if (strncmp(token, KEY_PREFIX, strlen(KEY_PREFIX)) != 0 ||
	    strlen(token) > 128)
		return ENGINE_ENOTFOUND;
	store_hash(token, strlen(token), hash);
	if (app_cache_generation(e, &gen) == 0)
		gen1 = gen + 1;
	if (gen1 != 0 && last.gen1 == gen1 && strcmp(last.hash, hash) == 0) {
		memcpy(app_id, last.app, 37);
		return 0;
	}
	/* one key: a read of its own, no transaction around it */
	if ((rc = store_get_copy(e->store, STORE_DB_API_KEYS, hash,
	    strlen(hash), &v, &vlen)) == 0 && strcmp(last.hash, hash) == 0 &&
	    vlen == last.len && memcmp(v, last.rec, vlen) == 0) {
		free(v);
		last.gen1 = gen1;
		memcpy(app_id, last.app, 37);
		return 0;
	}
	if (rc == 0 && (rec = json_loadb(v, vlen, 0, NULL)) == NULL) {
		log_error("storage: api_keys/%s: damaged record", hash);
		rc = STORE_EINVAL;
	}
	last.gen1 = 0;
	if (rc == 0 && vlen <= sizeof(last.rec)) {
		id = json_string_value(json_object_get(rec, "app_id"));
		if (id != NULL && strlen(id) < sizeof(last.app)) {
			memcpy(last.hash, hash, sizeof(hash));
			memcpy(last.rec, v, vlen);
			last.len = vlen;
			snprintf(last.app, sizeof(last.app), "%s", id);
			last.gen1 = gen1;
		}
	}
	free(v);
	if (rc != 0)
		return engine_from_store(rc);
	id = json_string_value(json_object_get(rec, "app_id"));
	snprintf(app_id, 37, "%s", id ? id : "");
	json_decref(rec);
	return id != NULL ? 0 : ENGINE_ENOTFOUND;
}
