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

/* 1 when conversation rec is app_id's and user's (NULL: anyone's). */
static int
of_owner(const json_t *rec, const char *app_id, const char *user)
{
	return record_owned(rec, app_id, "from_end_user_id", user);
}

int
engine_conversation_list(struct engine *e, const char *app_id,
    const char *user, int limit, json_t **out)
{
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	json_t			*data = NULL, *rec;
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
		if (of_owner(rec, app_id, user)) {
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
engine_message_list(struct engine *e, const char *app_id, const char *user,
    const char *conv_id, int limit, json_t **out)
{
	struct store_txn	*t = NULL;
	json_t			*all = NULL, *data = NULL, *rec, *conv = NULL;
	const char		*k;
	char			 prefix[64];
	int			 rc, more = 0;

	if (engine_uuid_check(conv_id) != 0)
		return ENGINE_ENOTFOUND;
	snprintf(prefix, sizeof(prefix), "%s/", conv_id);
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	if ((rc = store_get_json(t, STORE_DB_CONVERSATIONS, conv_id, &conv))
	    == 0 && !of_owner(conv, app_id, user))
		rc = STORE_ENOTFOUND;
	if (rc == 0)	/* one more than limit tells whether there are more */
		rc = records_collect(t, STORE_DB_MESSAGES, prefix, NULL,
		    (size_t)limit + 1, &all);
	store_read_end(t);
	json_decref(conv);
	if (rc != 0)
		return engine_from_store(rc);
	rc = ENGINE_ENOMEM;
	if ((data = json_array()) == NULL)
		goto out;
	json_object_foreach(all, k, rec) {
		if ((int)json_array_size(data) == limit) {
			more = 1;
			break;
		}
		if (json_is_null(rec))
			continue;
		json_object_del(rec, "app_id");
		json_object_set_new(rec, "feedback", json_null());
		json_object_set_new(rec, "message_files", json_array());
		json_object_set_new(rec, "retriever_resources", json_array());
		json_array_append(data, rec);
	}
	if ((*out = json_pack("{s:i,s:b,s:O}", "limit", limit, "has_more",
	    more, "data", data)) != NULL)
		rc = 0;
out:
	json_decref(all);
	json_decref(data);
	return rc;
}

/* Deletes every key of db that starts with prefix. */
static int
delete_prefix(struct store_txn *t, enum store_db db, const char *prefix)
{
	json_t		*all = NULL, *v;
	const char	*k;
	int		 rc;

	if ((rc = records_collect(t, db, prefix, NULL, 0, &all)) != 0)
		return rc;
	json_object_foreach(all, k, v)
		if ((rc = store_del(t, db, k, strlen(k))) != 0)
			break;
	json_decref(all);
	return rc;
}

/*
 * Deletes conversation id (record conv) with its messages and drops its
 * reference to the sandbox workspace blob run.c keeps for it.
 */
static int
conv_delete(struct store_txn *t, const char *id, const json_t *conv)
{
	char		 prefix[64];
	const char	*ws;
	int		 rc;

	snprintf(prefix, sizeof(prefix), "%s/", id);
	if ((rc = delete_prefix(t, STORE_DB_MESSAGES, prefix)) != 0)
		return rc;
	if ((ws = str_of(conv, "workspace")) != NULL &&
	    (rc = store_blob_unref(t, ws)) != 0 && rc != STORE_ENOTFOUND)
		return rc;
	return store_del(t, STORE_DB_CONVERSATIONS, id, strlen(id));
}

struct conv_del {
	const char	*app_id;
	const char	*user;
	const char	*conv_id;
};

static int
conv_del_fn(struct store_txn *t, void *arg)
{
	struct conv_del	*d = arg;
	json_t		*conv = NULL;
	int		 rc;

	if ((rc = store_get_json(t, STORE_DB_CONVERSATIONS, d->conv_id,
	    &conv)) != 0)
		return rc;
	rc = of_owner(conv, d->app_id, d->user) ? conv_delete(t, d->conv_id,
	    conv) :
	    STORE_ENOTFOUND;
	json_decref(conv);
	return rc;
}

int
engine_conversation_delete(struct engine *e, const char *app_id,
    const char *user, const char *conv_id)
{
	struct conv_del d = { app_id, user, conv_id };

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
	json_t		*all = NULL, *rec;
	char		 prefix[64], key[96];
	const char	*k, *id, *sum;
	size_t		 plen;
	int		 rc;

	/* runs_by_app: "<app id>/<run id>" */
	plen = (size_t)snprintf(prefix, sizeof(prefix), "%s/", app_id);
	if ((rc = records_collect(t, STORE_DB_RUNS_BY_APP, prefix, NULL, 0,
	    &all)) != 0)
		goto out;
	json_object_foreach(all, k, rec) {
		id = k + plen;
		snprintf(key, sizeof(key), "%s/", id);
		if ((rc = delete_prefix(t, STORE_DB_NODE_RUNS, key)) != 0)
			goto out;
		rc = store_del(t, STORE_DB_NODE_RUNS, id, strlen(id));
		if (rc != 0 && rc != STORE_ENOTFOUND)
			goto out;
		rc = store_del(t, STORE_DB_RUNS, id, strlen(id));
		if (rc != 0 && rc != STORE_ENOTFOUND)
			goto out;
		if ((rc = store_del(t, STORE_DB_RUNS_BY_APP, k,
		    strlen(k))) != 0)
			goto out;
	}
	/* conversations and uploads carry their app in the record */
	json_decref(all);
	if ((rc = records_collect(t, STORE_DB_CONVERSATIONS, NULL, app_id, 0,
	    &all)) != 0)
		goto out;
	json_object_foreach(all, k, rec)
		if ((rc = conv_delete(t, k, rec)) != 0)
			goto out;
	json_decref(all);
	if ((rc = records_collect(t, STORE_DB_UPLOADS, NULL, app_id, 0,
	    &all)) != 0)
		goto out;
	json_object_foreach(all, k, rec) {
		if ((sum = str_of(rec, "checksum")) != NULL)
			store_blob_unref(t, sum);
		if ((rc = store_del(t, STORE_DB_UPLOADS, k, strlen(k))) != 0)
			goto out;
	}
out:
	json_decref(all);
	return rc == STORE_ENOTFOUND ? 0 : rc;
}
