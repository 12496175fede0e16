/*
 * tags.c — Dify's knowledge tags (TagService, type "knowledge"): tags are
 * records kb.tag/<tag> {id, name, type}; a binding of a tag to a dataset
 * is its own record kb.tagb/<dataset>/<tag>, so binding, unbinding and a
 * dataset's deletion (kb.c drops kb.tagb/<dataset>/) each write only
 * their own keys and no write undoes another's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/knowledge/knowledge.h"
#include "engine/records/records.h"

#define KB_TAG_NAME_MAX	50	/* Dify's */

/* One write: dels go (missing is fine), then puts (key -> record);
 * require must exist when set. */
struct tag_ops {
	const char	*require;
	json_t		*dels;
	json_t		*puts;
};

static int
tag_ops_fn(struct store_txn *t, void *arg)
{
	struct tag_ops	*o = arg;
	const void	*v;
	size_t		 vlen, i;
	const char	*k;
	json_t		*x;
	int		 rc;

	if (o->require != NULL && (rc = store_get(t, STORE_DB_SETTINGS,
	    o->require, strlen(o->require), &v, &vlen)) != 0)
		return rc;
	json_array_foreach(o->dels, i, x)
		if ((rc = store_del(t, STORE_DB_SETTINGS, json_string_value(x),
		    json_string_length(x))) != 0 && rc != STORE_ENOTFOUND)
			return rc;
	json_object_foreach(o->puts, k, x)
		if ((rc = store_put_json(t, STORE_DB_SETTINGS, k, x, 0)) != 0)
			return rc;
	return 0;
}

static int
tag_collect(struct engine *e, const char *prefix, json_t **out)
{
	struct store_txn	*t = NULL;
	int			 rc;

	*out = NULL;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	rc = records_collect(t, STORE_DB_SETTINGS, prefix, NULL, 0, out);
	store_read_end(t);
	return engine_from_store(rc);
}

/* The tag tag_id (new reference) or NULL with err "Tag not found". */
static json_t *
tag_get(struct engine *e, const char *tag_id, char *err)
{
	char	 key[128];
	json_t	*all = NULL, *tg = NULL;

	snprintf(key, sizeof(key), KB_TAG "%s", tag_id ? tag_id : "");
	if (kb_id_ok(tag_id) && tag_collect(e, key, &all) == 0)
		tg = json_incref(json_object_get(all, key));
	json_decref(all);
	if (tg == NULL)
		snprintf(err, ENGINE_ERRMAX, "Tag not found");
	return tg;
}

static int
name_check(struct engine *e, const json_t *name, const char *self, char *err)
{
	json_t		*all = NULL, *tg;
	const char	*k;
	int		 rc;

	if (!json_is_string(name) || json_string_length(name) == 0 ||
	    engine_utf8_len(json_string_value(name)) > KB_TAG_NAME_MAX)
		return engine_invalid(err, "Name must be between 1 to 50 "
		    "characters.");
	if ((rc = tag_collect(e, KB_TAG, &all)) != 0)
		return rc;
	json_object_foreach(all, k, tg)
		if (record_field_is(tg, "name", json_string_value(name)) &&
		    (self == NULL || !record_field_is(tg, "id", self))) {
			json_decref(all);
			return engine_invalid(err, "Tag name already exists");
		}
	json_decref(all);
	return 0;
}

/* Dify's tag view with its binding_count (a string, as Dify's). */
static json_t *
tag_view(const json_t *tg, const json_t *bindings)
{
	const char	*k, *slash;
	json_t		*b;
	size_t		 n = 0;

	json_object_foreach((json_t *)bindings, k, b)
		if ((slash = strrchr(k, '/')) != NULL && record_field_is(tg,
		    "id", slash + 1))
			n++;
	return json_pack("{s:O,s:O,s:s,s:o}", "id", json_object_get(tg, "id"),
	    "name", json_object_get(tg, "name"), "type", "knowledge",
	    "binding_count", json_sprintf("%zu", n));
}

int
engine_kb_tag_create(struct engine *e, const json_t *in, char *err,
    json_t **out)
{
	struct tag_ops	 o = { NULL, NULL, NULL };
	char		 id[37], key[128];
	json_t		*tg = NULL;
	int		 rc;

	*out = NULL;
	if ((rc = name_check(e, json_object_get(in, "name"), NULL, err)) != 0)
		return rc;
	engine_uuid(id);
	snprintf(key, sizeof(key), KB_TAG "%s", id);
	rc = ENGINE_ENOMEM;
	if ((tg = json_pack("{s:s,s:O,s:s,s:I}", "id", id, "name",
	    json_object_get(in, "name"), "type", "knowledge", "created_at",
	    (json_int_t)engine_now())) == NULL || (o.puts = json_pack("{s:O}",
	    key, tg)) == NULL)
		goto out;
	if ((rc = engine_from_store(store_write(e->store, tag_ops_fn,
	    &o))) == 0)
		rc = (*out = tag_view(tg, NULL)) ? 0 : ENGINE_ENOMEM;
out:
	json_decref(tg);
	json_decref(o.puts);
	return rc;
}

int
engine_kb_tag_list(struct engine *e, json_t **out)
{
	json_t		*all = NULL, *bs = NULL, *tg, *list = NULL;
	const char	*k;
	int		 rc;

	*out = NULL;
	if ((rc = tag_collect(e, KB_TAG, &all)) != 0 ||
	    (rc = tag_collect(e, KB_TAGB, &bs)) != 0)
		goto out;
	rc = ENGINE_ENOMEM;
	if ((list = json_array()) == NULL)
		goto out;
	json_object_foreach(all, k, tg)
		if (json_array_append_new(list, tag_view(tg, bs)) != 0)
			goto out;
	*out = list;
	list = NULL;
	rc = 0;
out:
	json_decref(all);
	json_decref(bs);
	json_decref(list);
	return rc;
}

int
engine_kb_tag_update(struct engine *e, const json_t *in, char *err,
    json_t **out)
{
	const char	*tid = json_string_value(json_object_get(in, "tag_id"));
	struct tag_ops	 o = { NULL, NULL, NULL };
	char		 key[128];
	json_t		*tg, *bs = NULL;
	int		 rc;

	*out = NULL;
	if ((tg = tag_get(e, tid, err)) == NULL)
		return ENGINE_ENOTFOUND;
	if ((rc = name_check(e, json_object_get(in, "name"), tid, err)) != 0)
		goto out;
	snprintf(key, sizeof(key), KB_TAG "%s", tid);
	rc = ENGINE_ENOMEM;
	if (json_object_set(tg, "name", json_object_get(in, "name")) != 0 ||
	    (o.puts = json_pack("{s:O}", key, tg)) == NULL)
		goto out;
	o.require = key;
	if ((rc = engine_from_store(store_write(e->store, tag_ops_fn,
	    &o))) != 0 || (rc = tag_collect(e, KB_TAGB, &bs)) != 0)
		goto out;
	rc = (*out = tag_view(tg, bs)) ? 0 : ENGINE_ENOMEM;
out:
	json_decref(tg);
	json_decref(bs);
	json_decref(o.puts);
	return rc;
}

int
engine_kb_tag_delete(struct engine *e, const json_t *in, char *err)
{
	const char	*tid = json_string_value(json_object_get(in, "tag_id"));
	struct tag_ops	 o = { NULL, NULL, NULL };
	char		 key[128];
	const char	*k, *slash;
	json_t		*tg, *bs = NULL, *b;
	int		 rc;

	if ((tg = tag_get(e, tid, err)) == NULL)
		return ENGINE_ENOTFOUND;
	json_decref(tg);
	snprintf(key, sizeof(key), KB_TAG "%s", tid);
	if ((rc = tag_collect(e, KB_TAGB, &bs)) != 0)
		return rc;
	rc = ENGINE_ENOMEM;
	/* its bindings go with it */
	if ((o.dels = json_pack("[s]", key)) == NULL)
		goto out;
	json_object_foreach(bs, k, b)
		if ((slash = strrchr(k, '/')) != NULL && strcmp(slash + 1,
		    tid) == 0 && json_array_append_new(o.dels,
		    json_string(k)) != 0)
			goto out;
	rc = engine_from_store(store_write(e->store, tag_ops_fn, &o));
out:
	json_decref(bs);
	json_decref(o.dels);
	return rc;
}

int
engine_kb_tag_bind(struct engine *e, const json_t *in, int unbind,
    char *err)
{
	const char	*target = json_string_value(json_object_get(in,
			    "target_id"));
	const json_t	*tids = json_object_get(in, "tag_ids"), *x;
	struct tag_ops	 o = { NULL, NULL, NULL };
	char		 key[128], dkey[128];
	json_t		*one = NULL, *tg;
	size_t		 i;
	int		 rc;

	/* unbinding also takes Dify's older {tag_id, target_id} */
	if (tids == NULL && unbind && json_is_string(json_object_get(in,
	    "tag_id")))
		tids = one = json_pack("[O]", json_object_get(in, "tag_id"));
	rc = ENGINE_EINVAL;
	if (!json_is_array(tids) || json_array_size(tids) == 0 ||
	    target == NULL) {
		engine_invalid(err, "tag_ids (a list) and target_id are "
		    "required");
		goto out;
	}
	rc = ENGINE_ENOTFOUND;
	if (!kb_dataset_exists(e, target)) {
		snprintf(err, ENGINE_ERRMAX, "Dataset not found");
		goto out;
	}
	snprintf(dkey, sizeof(dkey), KB_DS "%s", target);
	o.require = dkey;
	rc = ENGINE_ENOMEM;
	if ((o.puts = json_object()) == NULL || (o.dels = json_array()) ==
	    NULL)
		goto out;
	json_array_foreach(tids, i, x) {
		if ((tg = tag_get(e, json_string_value(x), err)) == NULL) {
			rc = ENGINE_ENOTFOUND;
			goto out;
		}
		json_decref(tg);
		snprintf(key, sizeof(key), KB_TAGB "%s/%s", target,
		    json_string_value(x));
		if ((unbind ? json_array_append_new(o.dels, json_string(key)) :
		    json_object_set_new(o.puts, key, json_object())) != 0)
			goto out;
	}
	rc = engine_from_store(store_write(e->store, tag_ops_fn, &o));
out:
	json_decref(one);
	json_decref(o.puts);
	json_decref(o.dels);
	return rc;
}

int
kb_dataset_tags(struct engine *e, const char *ds_id, json_t **out)
{
	char		 prefix[128], key[128];
	const char	*k;
	json_t		*bs = NULL, *all = NULL, *b, *tg, *list = NULL;
	int		 rc;

	*out = NULL;
	snprintf(prefix, sizeof(prefix), KB_TAGB "%s/", ds_id);
	if ((rc = tag_collect(e, prefix, &bs)) != 0 ||
	    (json_object_size(bs) > 0 && (rc = tag_collect(e, KB_TAG,
	    &all)) != 0))
		goto out;
	rc = ENGINE_ENOMEM;
	if ((list = json_array()) == NULL)
		goto out;
	json_object_foreach(bs, k, b) {
		snprintf(key, sizeof(key), KB_TAG "%s", k + strlen(prefix));
		if ((tg = json_object_get(all, key)) != NULL &&
		    json_array_append_new(list, json_pack("{s:O,s:O,s:s}",
		    "id", json_object_get(tg, "id"), "name", json_object_get(tg,
		    "name"), "type", "knowledge")) != 0)
			goto out;
	}
	*out = list;
	list = NULL;
	rc = 0;
out:
	json_decref(bs);
	json_decref(all);
	json_decref(list);
	return rc;
}

int
engine_kb_dataset_tags(struct engine *e, const char *ds_id, char *err,
    json_t **out)
{
	json_t	*list = NULL, *x;
	size_t	 i;
	int	 rc;

	*out = NULL;
	if (!kb_dataset_exists(e, ds_id)) {
		snprintf(err, ENGINE_ERRMAX, "Dataset not found.");
		return ENGINE_ENOTFOUND;
	}
	if ((rc = kb_dataset_tags(e, ds_id, &list)) != 0)
		return rc;
	/* Dify's {data: [{id, name}], total} */
	json_array_foreach(list, i, x)
		json_object_del(x, "type");
	rc = (*out = json_pack("{s:O,s:I}", "data", list, "total",
	    (json_int_t)json_array_size(list))) ? 0 : ENGINE_ENOMEM;
	json_decref(list);
	return rc;
}
