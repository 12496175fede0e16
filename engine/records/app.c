/*
 * app.c — app records: validation, create, read, list, update, copy, delete.
 *
 * A record in the apps database (key: the app id) is a JSON object:
 *
 *	{id, name, description, mode, icon_type, icon, icon_background,
 *	 use_icon_as_answer_icon, max_active_requests, enable_site,
 *	 enable_api, created_at, updated_at, revision,
 *	 workflow: {id, created_at, updated_at} | null,  (workflow modes)
 *	 dsl: {the whole draft DSL document: version, kind, app, workflow or
 *	       model_config, dependencies, and anything else it carried}}
 *
 * dsl is kept in the drafts database (app_store_put); published versions
 * of a workflow app are in the versions database (versions.c).
 *
 * The app header inside dsl is stale by design: the record's own fields
 * (renamed by PUT) win, and export writes them into the document.
 * revision counts the updates; it backs the HTTP ETag / If-Match pair.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/records/records.h"

#define APP_NAME_MAX		255
#define APP_DESCRIPTION_MAX	400	/* as Dify's create and update */
#define APP_DESCRIPTION_IMPORT	65535	/* Dify's import keeps any length */
#define APP_ICON_MAX		1024
#define APP_ICON_BG_MAX		64

static const char *const app_modes[] = {
	"workflow", "advanced-chat", "chat", "agent-chat", "completion", NULL,
};

int
engine_app_mode_valid(const char *mode)
{
	size_t i;

	for (i = 0; app_modes[i] != NULL; i++)
		if (strcmp(mode, app_modes[i]) == 0)
			return 1;
	return 0;
}

static int
mode_has_workflow(const char *mode)
{
	return strcmp(mode, "workflow") == 0 ||
	    strcmp(mode, "advanced-chat") == 0;
}

/* ====== Validation ====== */

/*
 * Checks an optional string field of in: absent is fine; null is fine when
 * nullable; otherwise a string of at most max code points. On success
 * *out is the value (NULL when absent or null) and *present says whether
 * the field was given at all.
 */
static int
opt_string(const json_t *in, const char *field, size_t max, int nullable,
    char *err, const char **out, int *present)
{
	json_t *v = json_object_get(in, field);

	*out = NULL;
	*present = v != NULL;
	if (v == NULL || (json_is_null(v) && nullable))
		return 0;
	if (!json_is_string(v))
		return engine_invalid(err, "%s must be a string", field);
	if (engine_utf8_len(json_string_value(v)) > max)
		return engine_invalid(err, "%s must be at most %zu characters",
		    field, max);
	*out = json_string_value(v);
	return 0;
}

/*
 * Applies the editable fields of in to rec. require_name: a create or a
 * PUT (Dify requires name on both).
 */
static int
app_apply_fields(json_t *rec, const json_t *in, int require_name,
    size_t desc_max, char *err)
{
	const char	*s, *p;
	json_t		*v;
	int		 present, rc, bad = 0;

	if (!json_is_object(in))
		return engine_invalid(err, "body must be a JSON object");
	if ((rc = opt_string(in, "name", APP_NAME_MAX, 0, err, &s,
	    &present)) != 0)
		return rc;
	if (s != NULL) {
		for (p = s; *p == ' ' || *p == '\t'; p++)
			;
		if (*p == '\0')
			return engine_invalid(err, "name must not be empty");
		bad |= json_object_set_new(rec, "name", json_string(s));
	} else if (require_name)
		return engine_invalid(err, "name is required");
	if ((rc = opt_string(in, "description", desc_max, 1, err,
	    &s, &present)) != 0)
		return rc;
	if (present)
		bad |= json_object_set_new(rec, "description",
		    json_string(s ? s : ""));
	if ((rc = opt_string(in, "icon_type", 16, 1, err, &s, &present)) != 0)
		return rc;
	if (s != NULL && strcmp(s, "emoji") != 0 && strcmp(s, "image") != 0 &&
	    strcmp(s, "link") != 0)
		return engine_invalid(err,
		    "icon_type must be emoji, image or link");
	if (present)
		bad |= json_object_set_new(rec, "icon_type",
		    s ? json_string(s) : json_null());
	if ((rc = opt_string(in, "icon", APP_ICON_MAX, 1, err, &s,
	    &present)) != 0)
		return rc;
	if (present)
		bad |= json_object_set_new(rec, "icon",
		    s ? json_string(s) : json_null());
	if ((rc = opt_string(in, "icon_background", APP_ICON_BG_MAX, 1, err,
	    &s, &present)) != 0)
		return rc;
	if (present)
		bad |= json_object_set_new(rec, "icon_background",
		    s ? json_string(s) : json_null());
	if ((v = json_object_get(in, "use_icon_as_answer_icon")) != NULL) {
		if (!json_is_boolean(v))
			return engine_invalid(err,
			    "use_icon_as_answer_icon must be true or false");
		bad |= json_object_set(rec, "use_icon_as_answer_icon", v);
	}
	if ((v = json_object_get(in, "max_active_requests")) != NULL) {
		if (!json_is_null(v) && (!json_is_integer(v) ||
		    json_integer_value(v) < 0 ||
		    json_integer_value(v) > 1000000))
			return engine_invalid(err, "max_active_requests must "
			    "be an integer from 0 to 1000000, or null");
		bad |= json_object_set(rec, "max_active_requests", v);
	}
	return bad ? ENGINE_ENOMEM : 0;
}

/*
 * A fresh draft document for mode: an empty graph, or Dify's default model
 * config. The app header inside it is filled from the record on export.
 */
static json_t *
app_default_dsl(const char *mode)
{
	if (!mode_has_workflow(mode))
		return json_pack("{s:s,s:s,s:{},s:{s:{s:s,s:s,s:s,s:{}},s:s,"
		    "s:s,s:{s:s},s:[],s:[]},s:[]}",
		    "version", "0.6.0", "kind", "app", "app",
		    "model_config", "model", "provider", "openai", "name",
		    "gpt-4o", "mode", "chat", "completion_params",
		    "pre_prompt", "", "prompt_type", "simple",
		    "agent_mode", "strategy",
		    strcmp(mode, "agent-chat") == 0 ? "function_call" : "",
		    "user_input_form", "suggested_questions",
		    "dependencies");
	return json_pack("{s:s,s:s,s:{},s:{s:{s:[],s:[],s:{s:i,s:i,s:i}},"
	    "s:{},s:[],s:[]},s:[]}",
	    "version", "0.6.0", "kind", "app", "app", "workflow", "graph",
	    "nodes", "edges", "viewport", "x", 0, "y", 0, "zoom", 1,
	    "features", "environment_variables", "conversation_variables",
	    "dependencies");
}

/* {id, created_at, updated_at} of a workflow draft, or null. */
json_t *
app_workflow_meta(const char *mode, int64_t now)
{
	char id[37];

	if (!mode_has_workflow(mode))
		return json_null();
	engine_uuid(id);
	return json_pack("{s:s,s:I,s:I}", "id", id, "created_at",
	    (json_int_t)now, "updated_at", (json_int_t)now);
}

/* ====== Records in storage ====== */

/* A copy of rec without "dsl", with what listing and reading need of it:
 * sandboxed, and the model_config of chat apps. New reference, NULL when
 * out of memory. */
json_t *
app_record_strip(const json_t *rec)
{
	json_t *dsl = json_object_get(rec, "dsl"), *copy, *mc;

	if ((copy = json_copy((json_t *)rec)) == NULL || dsl == NULL)
		return copy;
	json_object_del(copy, "dsl");
	mc = json_object_get(dsl, "model_config");
	if (json_object_set_new(copy, "sandboxed", json_boolean(json_is_true(
	    json_object_get(json_object_get(json_object_get(json_object_get(
	    dsl, "workflow"), "features"), "sandbox"), "enabled")))) != 0 ||
	    json_object_set_new(copy, "model_config", mc ? json_incref(mc) :
	    json_null()) != 0) {
		json_decref(copy);
		return NULL;
	}
	return copy;
}

/*
 * Writes record rec. When rec carries "dsl" (the draft document), the
 * draft goes to the drafts database and the apps database gets
 * app_record_strip(rec).
 */
int
app_store_put(struct store_txn *t, json_t *rec, unsigned flags)
{
	const char	*id = json_string_value(json_object_get(rec, "id"));
	json_t		*dsl = json_object_get(rec, "dsl"), *copy;
	int		 rc;

	if (dsl == NULL)
		return store_put_json(t, STORE_DB_APPS, id, rec, flags);
	if ((copy = app_record_strip(rec)) == NULL)
		return STORE_ENOMEM;
	rc = store_put_json(t, STORE_DB_APPS, id, copy, flags);
	if (rc == 0)
		rc = store_put_json(t, STORE_DB_DRAFTS, id, dsl, 0);
	json_decref(copy);
	return rc;
}

int
app_store_get(struct store_txn *t, const char *id, int with_draft,
    json_t **out)
{
	json_t	*rec = NULL, *dsl = NULL;
	int	 rc;

	if ((rc = store_get_json(t, STORE_DB_APPS, id, &rec)) != 0)
		return rc;
	if (with_draft) {
		rc = store_get_json(t, STORE_DB_DRAFTS, id, &dsl);
		if (rc != 0 && rc != STORE_ENOTFOUND) {
			json_decref(rec);
			return rc;
		}
		if (json_object_set_new(rec, "dsl", dsl ? dsl : json_null())
		    != 0) {
			json_decref(rec);
			return STORE_ENOMEM;
		}
	}
	*out = rec;
	return 0;
}

/* ====== Create ====== */

struct app_put {
	json_t		*rec;
	int		 overwrite;
	const char	*copy_from;	/* app whose files come along */
};

static int
app_put_fn(struct store_txn *t, void *arg)
{
	struct app_put	*p = arg;
	const char	*id = json_string_value(json_object_get(p->rec, "id"));
	int		 rc;

	rc = app_store_put(t, p->rec, p->overwrite ? 0 : STORE_NOOVERWRITE);
	if (rc == 0 && p->copy_from != NULL)
		rc = assets_copy_all(t, p->copy_from, id);
	return rc;
}

/* Builds a new record from in (create, copy, import); steals nothing. */
int
app_new_record(const json_t *in, const char *mode, int imported, char *err,
    json_t **out)
{
	json_t	*rec = NULL;
	char	 id[37];
	int64_t	 now = engine_now();
	int	 rc;

	engine_uuid(id);
	rec = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:b,s:n,s:b,s:b,s:I,s:I,"
	    "s:i}",
	    "id", id, "name", "", "description", "", "mode", mode,
	    "icon_type", "emoji", "icon", "🤖", "icon_background", "#FFEAD5",
	    "use_icon_as_answer_icon", 0, "max_active_requests",
	    "enable_site", 1, "enable_api", 1, "created_at", (json_int_t)now,
	    "updated_at", (json_int_t)now, "revision", 1);
	if (rec == NULL)
		return ENGINE_ENOMEM;
	if ((rc = app_apply_fields(rec, in, 1, imported ?
	    APP_DESCRIPTION_IMPORT : APP_DESCRIPTION_MAX, err)) != 0)
		goto fail;
	if (json_object_set_new(rec, "workflow", app_workflow_meta(mode,
	    now)) != 0 || json_object_set_new(rec, "dsl",
	    app_default_dsl(mode)) != 0) {
		rc = ENGINE_ENOMEM;
		goto fail;
	}
	*out = rec;
	return 0;
fail:
	json_decref(rec);
	return rc;
}

int
engine_app_create(struct engine *e, const json_t *in, char *err,
    json_t **out)
{
	struct app_put	 p = { NULL, 0, NULL };
	const char	*mode;
	int		 rc;

	if (!json_is_object(in))
		return engine_invalid(err, "body must be a JSON object");
	mode = json_string_value(json_object_get(in, "mode"));
	if (mode == NULL)
		return engine_invalid(err, "mode is required: workflow, "
		    "advanced-chat, chat, agent-chat or completion");
	if (!engine_app_mode_valid(mode))
		return engine_invalid(err, "mode must be workflow, "
		    "advanced-chat, chat, agent-chat or completion");
	if ((rc = app_new_record(in, mode, 0, err, &p.rec)) != 0)
		return rc;
	if ((rc = store_write(e->store, app_put_fn, &p)) != 0) {
		json_decref(p.rec);
		return engine_from_store(rc);
	}
	*out = app_record_strip(p.rec);
	json_decref(p.rec);
	return *out ? 0 : ENGINE_ENOMEM;
}

/* ====== Read ====== */

static int
app_get(struct engine *e, const char *id, int with_draft, json_t **out)
{
	struct store_txn	*t = NULL;
	void			*v = NULL;
	size_t			 vlen = 0;
	int			 rc;

	if (engine_uuid_check(id) != 0)
		return ENGINE_ENOTFOUND;
	if (!with_draft) {
		/* one key: a read of its own (one round trip on PostgreSQL) */
		if ((rc = store_get_copy(e->store, STORE_DB_APPS, id, 36, &v,
		    &vlen)) == 0 && (*out = json_loadb(v, vlen, 0, NULL)) ==
		    NULL) {
			log_error("storage: apps/%s: damaged record", id);
			rc = STORE_EINVAL;
		}
		free(v);
		return engine_from_store(rc);
	}
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	rc = app_store_get(t, id, with_draft, out);
	store_read_end(t);
	return engine_from_store(rc);
}

int
engine_app_get(struct engine *e, const char *id, json_t **out)
{
	return app_get(e, id, 0, out);
}

int
engine_app_get_full(struct engine *e, const char *id, json_t **out)
{
	return app_get(e, id, 1, out);
}

/* Case-insensitive (ASCII) substring test, as Dify's ILIKE '%name%'. */
static int
name_matches(const char *name, const char *want)
{
	size_t n = strlen(want), i;

	if (n == 0)
		return 1;
	for (i = 0; name[i] != '\0'; i++)
		if (strncasecmp(name + i, want, n) == 0)
			return 1;
	return 0;
}

static int
mode_matches(const char *mode, const char *want)
{
	if (want == NULL || *want == '\0' || strcmp(want, "all") == 0)
		return 1;
	if (strcmp(want, "channel") == 0)
		return strcmp(mode, "chat") == 0 ||
		    strcmp(mode, "agent-chat") == 0;
	return strcmp(mode, want) == 0;
}

int
engine_app_list(struct engine *e, const struct app_query *q, json_t **out)
{
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	json_t			*data = NULL, *rec;
	int64_t			 total = 0, first, last;
	int			 rc;

	first = (int64_t)(q->page - 1) * q->limit;
	last = first + q->limit;
	if ((data = json_array()) == NULL)
		return ENGINE_ENOMEM;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		goto out;
	if ((rc = store_cursor_open(t, STORE_DB_APPS, &c)) != 0)
		goto out;
	/* Ids are time-ordered, so walking backwards lists newest first. */
	for (rc = store_cursor_last(c, &kv); rc == 0;
	     rc = store_cursor_prev(c, &kv)) {
		if ((rec = json_loadb(kv.v, kv.vlen, 0, NULL)) == NULL) {
			rc = STORE_EINVAL;
			goto out;
		}
		if (mode_matches(json_string_value(json_object_get(rec,
		    "mode")), q->mode) &&
		    (q->name == NULL || name_matches(json_string_value(
		    json_object_get(rec, "name")), q->name))) {
			if (total >= first && total < last &&
			    json_array_append(data, rec) != 0) {
				json_decref(rec);
				rc = STORE_ENOMEM;
				goto out;
			}
			total++;
		}
		json_decref(rec);
	}
	if (rc == STORE_ENOTFOUND)
		rc = 0;
out:
	store_cursor_close(c);
	store_read_end(t);
	if (rc != 0) {
		json_decref(data);
		return engine_from_store(rc);
	}
	*out = json_pack("{s:i,s:i,s:I,s:b,s:o}", "page", q->page, "limit",
	    q->limit, "total", (json_int_t)total, "has_more", total > last,
	    "data", data);
	return *out != NULL ? 0 : ENGINE_ENOMEM;
}

/* ====== Update ====== */

struct app_update {
	const char	*id;
	const json_t	*in;
	int64_t		 if_revision;
	char		*err;
	json_t		*rec;	/* out */
};

static int
app_update_fn(struct store_txn *t, void *arg)
{
	struct app_update	*u = arg;
	json_t			*rec = NULL;
	int64_t			 rev;
	int			 rc;

	json_decref(u->rec);	/* a retry after growth starts over */
	u->rec = NULL;
	if ((rc = store_get_json(t, STORE_DB_APPS, u->id, &rec)) != 0)
		return rc;
	rev = json_integer_value(json_object_get(rec, "revision"));
	if (u->if_revision >= 0 && rev != u->if_revision) {
		rc = ENGINE_ECONFLICT;
		goto out;
	}
	if ((rc = app_apply_fields(rec, u->in, 1, APP_DESCRIPTION_MAX,
	    u->err)) != 0)
		goto out;
	if (json_object_set_new(rec, "revision", json_integer(rev + 1)) != 0 ||
	    json_object_set_new(rec, "updated_at",
	    json_integer(engine_now())) != 0) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = store_put_json(t, STORE_DB_APPS, u->id, rec, 0)) != 0)
		goto out;
	u->rec = rec;
	rec = NULL;
out:
	json_decref(rec);
	return rc;
}

int
engine_app_update(struct engine *e, const char *id, const json_t *in,
    int64_t if_revision, char *err, json_t **out)
{
	struct app_update	u = { id, in, if_revision, err, NULL };
	int			rc;

	if (engine_uuid_check(id) != 0)
		return ENGINE_ENOTFOUND;
	if ((rc = store_write(e->store, app_update_fn, &u)) != 0) {
		json_decref(u.rec);
		return engine_from_store(rc);
	}
	*out = u.rec;
	return 0;
}

/* ====== Delete ====== */

static int
app_delete_fn(struct store_txn *t, void *arg)
{
	const char	*id = arg;
	char		 key[64];
	int		 rc;

	/* Everything kept per app goes in the same transaction as the app. */
	if ((rc = store_del(t, STORE_DB_APPS, id, strlen(id))) != 0)
		return rc;
	if ((rc = store_del(t, STORE_DB_DRAFTS, id, strlen(id))) != 0 &&
	    rc != STORE_ENOTFOUND)
		return rc;
	if ((rc = keys_delete_all(t, id)) != 0 ||
	    (rc = versions_delete_all(t, id)) != 0 ||
	    (rc = runs_delete_all(t, id)) != 0 ||
	    (rc = workspace_draft_delete_all(t, id)) != 0)
		return rc;
	/* its annotations (engine/knowledge/annotations.c) */
	snprintf(key, sizeof(key), ANNOTATIONS_KEY_PREFIX "%s", id);
	if ((rc = store_del(t, STORE_DB_SETTINGS, key, strlen(key))) != 0 &&
	    rc != STORE_ENOTFOUND)
		return rc;
	return assets_delete_all(t, id);
}

int
engine_app_delete(struct engine *e, const char *id)
{
	if (engine_uuid_check(id) != 0)
		return ENGINE_ENOTFOUND;
	return engine_from_store(store_write(e->store, app_delete_fn,
	    (void *)id));
}

/* ====== Copy ====== */

int
engine_app_copy(struct engine *e, const char *id, const json_t *in,
    char *err, json_t **out)
{
	struct app_put	 p = { NULL, 0, id };
	json_t		*src = NULL, *fields = NULL;
	const char	*k;
	json_t		*v;
	int		 rc;

	if (in != NULL && !json_is_object(in))
		return engine_invalid(err, "body must be a JSON object");
	if ((rc = engine_app_get_full(e, id, &src)) != 0)
		return rc;
	/* The copy starts from the source's fields; in overrides them. */
	fields = json_pack("{s:O,s:O,s:O,s:O,s:O}", "name",
	    json_object_get(src, "name"), "description",
	    json_object_get(src, "description"), "icon_type",
	    json_object_get(src, "icon_type"), "icon",
	    json_object_get(src, "icon"), "icon_background",
	    json_object_get(src, "icon_background"));
	if (fields == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	rc = ENGINE_ENOMEM;
	if (in != NULL)
		json_object_foreach((json_t *)in, k, v)
			if ((!json_is_null(v) || strcmp(k, "name") != 0) &&
			    json_object_set(fields, k, v) != 0)
				goto out;
	if ((rc = app_new_record(fields, json_string_value(json_object_get(src,
	    "mode")), 1, err, &p.rec)) != 0)
		goto out;
	rc = ENGINE_ENOMEM;
	if (((v = json_object_get(src, "use_icon_as_answer_icon")) != NULL &&
	    json_object_set(p.rec, "use_icon_as_answer_icon", v) != 0) ||
	    json_object_set_new(p.rec, "dsl",
	    json_deep_copy(json_object_get(src, "dsl"))) != 0)
		goto out;
	if ((rc = store_write(e->store, app_put_fn, &p)) != 0) {
		rc = engine_from_store(rc);
		goto out;
	}
	if ((*out = app_record_strip(p.rec)) == NULL)
		rc = ENGINE_ENOMEM;
out:
	json_decref(p.rec);
	json_decref(fields);
	json_decref(src);
	return rc;
}
