/*
 * conversations.c — chatflow conversations and their messages as the
 * service API lists them. Records: conversations (id -> record with
 * app_id, from_end_user_id, variables), messages ("<conversation id>/<message
 * id>" -> record); ids are time-ordered, so key order is time order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"

static const char *
str_of(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

int
engine_conversation_list(struct engine *e, const char *app_id,
    const char *user, int limit, json_t **out)
{
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	json_t			*data = NULL, *rec;
	const char		*u;
	int			 rc, more = 0;

	if ((data = json_array()) == NULL)
		return ENGINE_ENOMEM;
	if ((rc = store_read_begin(e->store, &t)) != 0 ||
	    (rc = store_cursor_open(t, STORE_DB_CONVERSATIONS, &c)) != 0)
		goto out;
	for (rc = store_cursor_last(c, &kv); rc == 0;
	     rc = store_cursor_prev(c, &kv)) {
		if ((rec = json_loadb(kv.v, kv.vlen, 0, NULL)) == NULL)
			continue;
		u = str_of(rec, "from_end_user_id");
		if (strcmp(str_of(rec, "app_id"), app_id) == 0 &&
		    (user == NULL || (u != NULL && strcmp(u, user) == 0))) {
			if ((int)json_array_size(data) == limit) {
				more = 1;
				json_decref(rec);
				break;
			}
			json_array_append_new(data, json_pack("{s:O,s:O,s:O,"
			    "s:s,s:s,s:O,s:O}", "id", json_object_get(rec,
			    "id"), "name", json_object_get(rec, "name"),
			    "inputs", json_object_get(rec, "inputs"), "status",
			    "normal", "introduction", "", "created_at",
			    json_object_get(rec, "created_at"), "updated_at",
			    json_object_get(rec, "updated_at")));
		}
		json_decref(rec);
	}
	rc = rc == STORE_ENOTFOUND ? 0 : rc;
out:
	store_cursor_close(c);
	store_read_end(t);
	if (rc != 0) {
		json_decref(data);
		return engine_from_store(rc);
	}
	*out = json_pack("{s:i,s:b,s:o}", "limit", limit, "has_more", more,
	    "data", data);
	return *out ? 0 : ENGINE_ENOMEM;
}

int
engine_message_list(struct engine *e, const char *app_id, const char *conv_id,
    int limit, json_t **out)
{
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	json_t			*data = NULL, *rec, *conv = NULL;
	char			 prefix[64];
	size_t			 plen;
	int			 rc, more = 0;

	if (engine_uuid_check(conv_id) != 0)
		return ENGINE_ENOTFOUND;
	if ((data = json_array()) == NULL)
		return ENGINE_ENOMEM;
	plen = (size_t)snprintf(prefix, sizeof(prefix), "%s/", conv_id);
	if ((rc = store_read_begin(e->store, &t)) != 0)
		goto out;
	if ((rc = store_get_json(t, STORE_DB_CONVERSATIONS, conv_id, &conv))
	    != 0)
		goto out;
	if (strcmp(str_of(conv, "app_id"), app_id) != 0) {
		rc = STORE_ENOTFOUND;
		goto out;
	}
	if ((rc = store_cursor_open(t, STORE_DB_MESSAGES, &c)) != 0)
		goto out;
	for (rc = store_cursor_seek(c, prefix, plen, &kv); rc == 0;
	     rc = store_cursor_next(c, &kv)) {
		if (kv.klen < plen || memcmp(kv.k, prefix, plen) != 0)
			break;
		if ((int)json_array_size(data) == limit) {
			more = 1;
			break;
		}
		if ((rec = json_loadb(kv.v, kv.vlen, 0, NULL)) == NULL)
			continue;
		json_object_del(rec, "app_id");
		json_object_set_new(rec, "feedback", json_null());
		json_object_set_new(rec, "message_files", json_array());
		json_object_set_new(rec, "retriever_resources", json_array());
		json_array_append_new(data, rec);
	}
	rc = rc == STORE_ENOTFOUND ? 0 : rc;
out:
	store_cursor_close(c);
	store_read_end(t);
	json_decref(conv);
	if (rc != 0) {
		json_decref(data);
		return engine_from_store(rc);
	}
	*out = json_pack("{s:i,s:b,s:o}", "limit", limit, "has_more", more,
	    "data", data);
	return *out ? 0 : ENGINE_ENOMEM;
}

/* Deletes every key of db that starts with prefix. */
static int
delete_prefix(struct store_txn *t, enum store_db db, const char *prefix)
{
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	json_t			*keys;
	size_t			 plen = strlen(prefix), i;
	json_t			*k;
	int			 rc;

	if ((keys = json_array()) == NULL)
		return STORE_ENOMEM;
	if ((rc = store_cursor_open(t, db, &c)) != 0)
		goto out;
	for (rc = store_cursor_seek(c, prefix, plen, &kv); rc == 0;
	     rc = store_cursor_next(c, &kv)) {
		if (kv.klen < plen || memcmp(kv.k, prefix, plen) != 0)
			break;
		json_array_append_new(keys, json_stringn(kv.k, kv.klen));
	}
	store_cursor_close(c);
	c = NULL;
	rc = 0;
	json_array_foreach(keys, i, k)
		if ((rc = store_del(t, db, json_string_value(k),
		    json_string_length(k))) != 0)
			goto out;
out:
	store_cursor_close(c);
	json_decref(keys);
	return rc;
}

struct conv_del {
	const char	*app_id;
	const char	*conv_id;
};

static int
conv_del_fn(struct store_txn *t, void *arg)
{
	struct conv_del	*d = arg;
	json_t		*conv = NULL;
	char		 prefix[64];
	int		 rc;

	if ((rc = store_get_json(t, STORE_DB_CONVERSATIONS, d->conv_id,
	    &conv)) != 0)
		return rc;
	if (strcmp(str_of(conv, "app_id"), d->app_id) != 0) {
		json_decref(conv);
		return STORE_ENOTFOUND;
	}
	json_decref(conv);
	snprintf(prefix, sizeof(prefix), "%s/", d->conv_id);
	if ((rc = delete_prefix(t, STORE_DB_MESSAGES, prefix)) != 0)
		return rc;
	return store_del(t, STORE_DB_CONVERSATIONS, d->conv_id,
	    strlen(d->conv_id));
}

int
engine_conversation_delete(struct engine *e, const char *app_id,
    const char *conv_id)
{
	struct conv_del d = { app_id, conv_id };

	if (engine_uuid_check(conv_id) != 0)
		return ENGINE_ENOTFOUND;
	return engine_from_store(store_write(e->store, conv_del_fn, &d));
}

/*
 * Everything an app's runs left behind, for app.c's delete: runs with
 * their node executions, conversations with their messages, uploads.
 */
int
runs_delete_all(struct store_txn *t, const char *app_id)
{
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	json_t			*ids, *rec, *id;
	char			 prefix[64], key[96];
	const char		*sum;
	size_t			 plen, i;
	int			 rc;

	if ((ids = json_array()) == NULL)
		return STORE_ENOMEM;
	plen = (size_t)snprintf(prefix, sizeof(prefix), "%s/", app_id);
	if ((rc = store_cursor_open(t, STORE_DB_RUNS_BY_APP, &c)) != 0)
		goto out;
	for (rc = store_cursor_seek(c, prefix, plen, &kv); rc == 0;
	     rc = store_cursor_next(c, &kv)) {
		if (kv.klen < plen || memcmp(kv.k, prefix, plen) != 0)
			break;
		json_array_append_new(ids, json_stringn(kv.v, kv.vlen));
	}
	store_cursor_close(c);
	c = NULL;
	json_array_foreach(ids, i, id) {
		snprintf(key, sizeof(key), "%s/", json_string_value(id));
		if ((rc = delete_prefix(t, STORE_DB_NODE_RUNS, key)) != 0)
			goto out;
		rc = store_del(t, STORE_DB_RUNS, json_string_value(id),
		    json_string_length(id));
		if (rc != 0 && rc != STORE_ENOTFOUND)
			goto out;
	}
	if ((rc = delete_prefix(t, STORE_DB_RUNS_BY_APP, prefix)) != 0)
		goto out;
	/* conversations and uploads carry their app in the record */
	json_array_clear(ids);
	if ((rc = store_cursor_open(t, STORE_DB_CONVERSATIONS, &c)) != 0)
		goto out;
	for (rc = store_cursor_first(c, &kv); rc == 0;
	     rc = store_cursor_next(c, &kv))
		if ((rec = json_loadb(kv.v, kv.vlen, 0, NULL)) != NULL) {
			if (strcmp(str_of(rec, "app_id"), app_id) == 0)
				json_array_append_new(ids, json_stringn(kv.k,
				    kv.klen));
			json_decref(rec);
		}
	store_cursor_close(c);
	c = NULL;
	json_array_foreach(ids, i, id) {
		snprintf(key, sizeof(key), "%s/", json_string_value(id));
		if ((rc = delete_prefix(t, STORE_DB_MESSAGES, key)) != 0 ||
		    (rc = store_del(t, STORE_DB_CONVERSATIONS,
		    json_string_value(id), json_string_length(id))) != 0)
			goto out;
	}
	json_array_clear(ids);
	if ((rc = store_cursor_open(t, STORE_DB_UPLOADS, &c)) != 0)
		goto out;
	for (rc = store_cursor_first(c, &kv); rc == 0;
	     rc = store_cursor_next(c, &kv))
		if ((rec = json_loadb(kv.v, kv.vlen, 0, NULL)) != NULL) {
			if (strcmp(str_of(rec, "app_id"), app_id) == 0)
				json_array_append_new(ids, json_pack("{s:s%,"
				    "s:O}", "k", kv.k, kv.klen, "sum",
				    json_object_get(rec, "checksum")));
			json_decref(rec);
		}
	store_cursor_close(c);
	c = NULL;
	rc = 0;
	json_array_foreach(ids, i, id) {
		if ((sum = str_of(id, "sum")) != NULL)
			store_blob_unref(t, sum);
		if ((rc = store_del(t, STORE_DB_UPLOADS, str_of(id, "k"),
		    strlen(str_of(id, "k")))) != 0)
			goto out;
	}
out:
	store_cursor_close(c);
	json_decref(ids);
	return rc == STORE_ENOTFOUND ? 0 : rc;
}
