/*
 * versions.c — an app's draft and its published versions, as in Dify.
 *
 * The console edits the draft (the drafts database). Publishing copies the
 * draft into a version, in the versions database under "<app id>/<version
 * id>":
 *
 *	{id, app_id, version, marked_name, marked_comment, created_at,
 *	 created_by, dsl: {the whole DSL document, secrets sealed}}
 *
 * Version ids are time-ordered UUIDs, so the last key under an app's prefix
 * is its latest published version: the one the service API runs
 * (app_cache.c). An app never published runs its draft. version is Dify's
 * text, the UTC time of publishing ("2026-01-02 03:04:05.678901"); a draft
 * answers "draft". Sealed secrets are bound to their place in the
 * document, not to the record, so a version holds the draft's sealed
 * values as they are and a restore puts them back unchanged.
 *
 * A draft is checked as an import checks its DSL (dsl_check_limits with
 * DSL_CHECK_RUNNABLE). A save keeps a draft whose graph has problems (Dify
 * lets an editor save work in progress) and names them in its warnings,
 * but refuses variables that can never be valid; publishing refuses a
 * draft with any problem, so the version the service API runs is one the
 * executor can run, and the versions published before stay as they were.
 *
 * Only workflow and advanced-chat apps have versions (Dify publishes only
 * those); chat, agent-chat and completion apps change their model config
 * in place (engine_model_config_set) and always run it.
 *
 * The draft's hash (Dify's unique_hash) is the SHA-256 of its graph,
 * features, environment and conversation variables as compact JSON with
 * sorted keys. A save must bring the hash of the draft it was made from: a
 * stale one is ENGINE_ECONFLICT, so two editors never overwrite each other
 * unseen. The comparison happens inside the write transaction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/records/records.h"

#define VER_KEY_MAX	80	/* "<36>/<36>" and a NUL */
#define MARKED_NAME_MAX	20	/* Dify's PublishWorkflowPayload */
#define MARKED_COMMENT_MAX 100

static int
mode_has_versions(const char *mode)
{
	return mode != NULL && (strcmp(mode, "workflow") == 0 ||
	    strcmp(mode, "advanced-chat") == 0);
}

/* key = "<app_id>/<vid>", or the prefix "<app_id>/" when vid is NULL. */
static size_t
ver_key(char key[VER_KEY_MAX], const char *app_id, const char *vid)
{
	return (size_t)snprintf(key, VER_KEY_MAX, "%s/%s", app_id,
	    vid != NULL ? vid : "");
}

/* ====== Reading versions ====== */

int
versions_latest(struct store_txn *t, const char *app_id, char vid[37],
    const void **val, size_t *len)
{
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	char			 key[VER_KEY_MAX];
	size_t			 plen = ver_key(key, app_id, NULL);
	int			 rc;

	if ((rc = store_cursor_open(t, STORE_DB_VERSIONS, &c)) != 0)
		return rc;
	/* just past the prefix ('0' follows '/'), then one back */
	key[plen - 1] = '0';
	rc = store_cursor_seek(c, key, plen, &kv);
	if (rc == 0)
		rc = store_cursor_prev(c, &kv);
	else if (rc == STORE_ENOTFOUND)
		rc = store_cursor_last(c, &kv);
	key[plen - 1] = '/';
	if (rc == 0 && (kv.klen != plen + 36 || memcmp(kv.k, key, plen) != 0))
		rc = STORE_ENOTFOUND;
	if (rc == 0) {
		memcpy(vid, (const char *)kv.k + plen, 36);
		vid[36] = '\0';
		*val = kv.v;
		*len = kv.vlen;
	}
	store_cursor_close(c);
	return rc;
}

int
versions_get(struct store_txn *t, const char *app_id, const char *vid,
    const void **val, size_t *len)
{
	char key[VER_KEY_MAX];

	if (engine_uuid_check(vid) != 0)
		return STORE_ENOTFOUND;
	ver_key(key, app_id, vid);
	return store_get(t, STORE_DB_VERSIONS, key, strlen(key), val, len);
}

/* The keys of app_id's versions, oldest first, into *out (a new array). */
static int
version_keys(struct store_txn *t, const char *app_id, json_t **out)
{
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	char			 key[VER_KEY_MAX];
	size_t			 plen = ver_key(key, app_id, NULL);
	int			 rc;

	if ((*out = json_array()) == NULL)
		return STORE_ENOMEM;
	if ((rc = store_cursor_open(t, STORE_DB_VERSIONS, &c)) != 0)
		return rc;
	for (rc = store_cursor_seek(c, key, plen, &kv); rc == 0;
	    rc = store_cursor_next(c, &kv)) {
		if (kv.klen < plen || memcmp(kv.k, key, plen) != 0)
			break;
		if (json_array_append_new(*out, json_stringn(kv.k, kv.klen))
		    != 0) {
			rc = STORE_ENOMEM;
			break;
		}
	}
	store_cursor_close(c);
	return rc == STORE_ENOTFOUND ? 0 : rc;
}

int
versions_delete_all(struct store_txn *t, const char *app_id)
{
	json_t	*keys = NULL, *k;
	size_t	 i;
	int	 rc;

	if ((rc = version_keys(t, app_id, &keys)) == 0)
		json_array_foreach(keys, i, k)
			if ((rc = store_del(t, STORE_DB_VERSIONS,
			    json_string_value(k), json_string_length(k))) != 0)
				break;
	json_decref(keys);
	return rc;
}

/* ====== The draft's hash ====== */

void
draft_hash(const json_t *dsl, char hex[STORE_HASH_HEX])
{
	const json_t	*wf = json_object_get(dsl, "workflow");
	json_t		*parts;
	char		*txt = NULL;

	parts = json_pack("{s:O?,s:O?,s:O?,s:O?}", "graph",
	    json_object_get(wf, "graph"), "features",
	    json_object_get(wf, "features"), "environment_variables",
	    json_object_get(wf, "environment_variables"),
	    "conversation_variables",
	    json_object_get(wf, "conversation_variables"));
	if (parts != NULL)
		txt = json_dumps(parts, JSON_COMPACT | JSON_SORT_KEYS);
	/* out of memory: a hash no client holds, so the save is refused */
	store_hash(txt ? txt : "", txt ? strlen(txt) : 0, hex);
	if (txt == NULL)
		hex[0] = '!';
	free(txt);
	json_decref(parts);
}

/* ====== Views ====== */

/* The list k of workflow wf, or a new empty one. */
static json_t *
wf_list(const json_t *wf, const char *k)
{
	json_t *v = json_object_get(wf, k);

	return json_is_array(v) ? json_incref(v) : json_array();
}

/*
 * Dify's Workflow view of dsl: {id, graph, features, hash, version,
 * marked_name, marked_comment, created_by, created_at, updated_by,
 * updated_at, tool_published, environment_variables,
 * conversation_variables, rag_pipeline_variables}, secrets masked.
 * meta gives id, version, marked_name, marked_comment, created_at and
 * updated_at.
 */
static json_t *
version_view(const json_t *dsl, const json_t *meta)
{
	json_t		*doc, *wf, *v = NULL;
	const char	*name, *comment;
	char		 hex[STORE_HASH_HEX];

	if ((doc = json_deep_copy(dsl)) == NULL)
		return NULL;
	draft_hash(doc, hex);
	if (engine_dsl_mask_secrets(doc) != 0)
		goto out;
	wf = json_object_get(doc, "workflow");
	name = json_string_value(json_object_get(meta, "marked_name"));
	comment = json_string_value(json_object_get(meta, "marked_comment"));
	v = json_pack("{s:O?,s:O?,s:O?,s:s,s:O?,s:s,s:s,s:n,s:O?,s:n,s:O?,"
	    "s:b,s:o,s:o,s:[]}",
	    "id", json_object_get(meta, "id"),
	    "graph", json_object_get(wf, "graph"),
	    "features", json_object_get(wf, "features"), "hash", hex,
	    "version", json_object_get(meta, "version"),
	    "marked_name", name ? name : "",
	    "marked_comment", comment ? comment : "",
	    "created_by", "created_at", json_object_get(meta, "created_at"),
	    "updated_by", "updated_at", json_object_get(meta, "updated_at") ?
	    json_object_get(meta, "updated_at") : json_object_get(meta,
	    "created_at"), "tool_published", 0,
	    "environment_variables", wf_list(wf, "environment_variables"),
	    "conversation_variables", wf_list(wf, "conversation_variables"),
	    "rag_pipeline_variables");
out:
	json_decref(doc);
	return v;
}

/* Dify's version text of the time now, UTC, with microseconds. */
static void
version_text(char buf[40])
{
	struct timespec	ts;
	struct tm	tm;
	char		day[24];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf, 40, "%.19s.%06d", day, (int)(ts.tv_nsec / 1000 %
	    1000000));
}

/* ====== Checking a draft ====== */

/*
 * A copy of the stored record rec's DSL, with app.mode set from the
 * record (a fresh app's document has an empty app header), for dsl_check.
 * NULL when out of memory.
 */
static json_t *
draft_doc(const json_t *rec)
{
	json_t *doc;

	if ((doc = json_deep_copy(json_object_get(rec, "dsl"))) == NULL)
		return NULL;
	if ((!json_is_object(json_object_get(doc, "workflow")) &&
	    json_object_set_new(doc, "workflow", json_object()) != 0) ||
	    (!json_is_object(json_object_get(doc, "app")) &&
	    json_object_set_new(doc, "app", json_object()) != 0) ||
	    json_object_set(json_object_get(doc, "app"), "mode",
	    json_object_get(rec, "mode")) != 0) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

/* dsl_check_limits as drafts, publishing and imports run it. */
int
draft_check(struct engine *e, const json_t *doc, char *err,
    struct dsl_report *rep, json_t **out)
{
	struct dsl_check_limits lim;

	lim.max_variable_size = (size_t)e->conf->workflow_max_variable_size;
	return dsl_check_limits(doc, DSL_CHECK_CONFIRM | DSL_CHECK_RUNNABLE,
	    &lim, err, rep, out);
}

/*
 * Whether the stored record rec's draft may be published: 0, or
 * ENGINE_EINVAL with err the first problem and *problems all of them (a
 * new array), or ENGINE_ENOMEM.
 */
static int
draft_publishable(struct engine *e, const json_t *rec, char *err,
    json_t **problems)
{
	struct dsl_report	 rep;
	json_t			*doc = NULL, *norm = NULL;
	int			 rc;

	*problems = NULL;
	memset(&rep, 0, sizeof(rep));
	if ((doc = draft_doc(rec)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	rc = draft_check(e, doc, err, &rep, &norm);
	if (rc == ENGINE_ENOMEM)
		goto out;
	if (rc == 0 && json_array_size(rep.problems) == 0)
		goto out;
	if (json_array_size(rep.problems) == 0 &&
	    (rc = json_array_append_new(rep.problems, json_pack(
	    "{s:s,s:s,s:s}", "node_id", "", "field", "", "message", err))) !=
	    0) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	rc = engine_invalid(err, "%s", json_string_value(json_object_get(
	    json_array_get(rep.problems, 0), "message")));
	*problems = rep.problems;
	rep.problems = NULL;
out:
	dsl_report_release(&rep);
	json_decref(norm);
	json_decref(doc);
	return rc;
}

/* ====== Publishing ====== */

int
versions_publish(struct store_txn *t, const struct conf *c,
    const char *app_id, const json_t *dsl, const char *name,
    const char *comment, json_t **out)
{
	json_t	*rec = NULL, *keys = NULL;
	char	 vid[37], key[VER_KEY_MAX], text[40];
	size_t	 i, n;
	int	 rc;

	engine_uuid(vid);
	version_text(text);
	rec = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:n,s:O}", "id", vid,
	    "app_id", app_id, "version", text, "marked_name", name ? name : "",
	    "marked_comment", comment ? comment : "", "created_at",
	    (json_int_t)engine_now(), "created_by", "dsl", dsl);
	if (rec == NULL)
		return STORE_ENOMEM;
	ver_key(key, app_id, vid);
	if ((rc = store_put_json(t, STORE_DB_VERSIONS, key, rec,
	    STORE_NOOVERWRITE)) != 0)
		goto out;
	/* the oldest go past workflow.max_versions */
	if (c->workflow_max_versions > 0) {
		if ((rc = version_keys(t, app_id, &keys)) != 0)
			goto out;
		n = json_array_size(keys);
		for (i = 0; n - i > (size_t)c->workflow_max_versions; i++)
			if ((rc = store_del(t, STORE_DB_VERSIONS,
			    json_string_value(json_array_get(keys, i)),
			    json_string_length(json_array_get(keys, i)))) != 0)
				goto out;
	}
	if (out != NULL) {
		json_object_del(rec, "dsl");
		*out = rec;
		rec = NULL;
	}
out:
	json_decref(keys);
	json_decref(rec);
	return rc;
}

struct publish {
	struct engine	*e;
	const char	*app_id;
	const char	*name;
	const char	*comment;
	char		*err;
	json_t		*meta;		/* out */
	json_t		*problems;	/* out: why the draft was refused */
};

static int
publish_fn(struct store_txn *t, void *arg)
{
	struct publish	*p = arg;
	json_t		*rec = NULL;
	int		 rc;

	json_decref(p->meta);	/* a retry starts over */
	p->meta = NULL;
	json_decref(p->problems);
	p->problems = NULL;
	if ((rc = app_store_get(t, p->app_id, 1, &rec)) != 0)
		return rc;
	if (!mode_has_versions(json_string_value(json_object_get(rec,
	    "mode")))) {
		rc = ENGINE_EINVAL;
		goto out;
	}
	/* checked in the transaction that publishes: what is checked is
	 * what becomes the version */
	if ((rc = draft_publishable(p->e, rec, p->err, &p->problems)) != 0)
		goto out;
	rc = versions_publish(t, p->e->conf, p->app_id, json_object_get(rec,
	    "dsl"), p->name, p->comment, &p->meta);
out:
	json_decref(rec);
	return rc;
}

int
engine_publish(struct engine *e, const char *app_id, const char *name,
    const char *comment, char *err, json_t **out)
{
	struct publish	p = { e, app_id, name, comment, err, NULL, NULL };
	int		rc;

	*out = NULL;
	if (engine_uuid_check(app_id) != 0)
		return ENGINE_ENOTFOUND;
	if (name != NULL && engine_utf8_len(name) > MARKED_NAME_MAX)
		return engine_invalid(err, "marked_name must be at most %d "
		    "characters", MARKED_NAME_MAX);
	if (comment != NULL && engine_utf8_len(comment) > MARKED_COMMENT_MAX)
		return engine_invalid(err, "marked_comment must be at most %d "
		    "characters", MARKED_COMMENT_MAX);
	rc = store_write(e->store, publish_fn, &p);
	if (rc == ENGINE_EINVAL && p.problems != NULL) {
		/* err names the first problem */
		json_decref(p.meta);
		*out = p.problems;
		return rc;
	}
	json_decref(p.problems);
	if (rc == ENGINE_ENOMEM) {
		json_decref(p.meta);
		return rc;
	}
	if (rc == ENGINE_EINVAL) {
		json_decref(p.meta);
		return engine_invalid(err, "only workflow and advanced-chat "
		    "apps are published; the others run their model config");
	}
	if (rc != 0) {
		json_decref(p.meta);
		return engine_from_store(rc);
	}
	*out = p.meta;
	return 0;
}

/* ====== Listing and reading ====== */

int
engine_versions_list(struct engine *e, const char *app_id, int page,
    int limit, int named_only, json_t **out)
{
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	json_t			*items = NULL, *rec, *v;
	const void		*val;
	size_t			 vlen, plen;
	char			 key[VER_KEY_MAX];
	int64_t			 seen = 0, first;
	int			 rc, more = 0;

	if (engine_uuid_check(app_id) != 0)
		return ENGINE_ENOTFOUND;
	first = (int64_t)(page - 1) * limit;
	if ((items = json_array()) == NULL)
		return ENGINE_ENOMEM;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		goto out;
	if ((rc = store_get(t, STORE_DB_APPS, app_id, 36, &val, &vlen)) != 0)
		goto out;
	if ((rc = store_cursor_open(t, STORE_DB_VERSIONS, &c)) != 0)
		goto out;
	/* newest first, as Dify orders by version descending */
	plen = ver_key(key, app_id, NULL);
	key[plen - 1] = '0';
	rc = store_cursor_seek(c, key, plen, &kv);
	rc = rc == 0 ? store_cursor_prev(c, &kv) : rc == STORE_ENOTFOUND ?
	    store_cursor_last(c, &kv) : rc;
	key[plen - 1] = '/';
	for (; rc == 0; rc = store_cursor_prev(c, &kv)) {
		if (kv.klen < plen || memcmp(kv.k, key, plen) != 0)
			break;
		if ((rec = json_loadb(kv.v, kv.vlen, 0, NULL)) == NULL) {
			rc = STORE_EINVAL;
			goto out;
		}
		if (named_only && json_string_length(json_object_get(rec,
		    "marked_name")) == 0) {
			json_decref(rec);
			continue;
		}
		if (seen >= first + limit) {
			more = 1;
			json_decref(rec);
			break;
		}
		if (seen++ >= first) {
			v = version_view(json_object_get(rec, "dsl"), rec);
			if (v == NULL || json_array_append_new(items, v) != 0) {
				json_decref(rec);
				rc = STORE_ENOMEM;
				goto out;
			}
		}
		json_decref(rec);
	}
	if (rc == STORE_ENOTFOUND)
		rc = 0;
out:
	store_cursor_close(c);
	store_read_end(t);
	if (rc != 0) {
		json_decref(items);
		return engine_from_store(rc);
	}
	*out = json_pack("{s:o,s:i,s:i,s:b}", "items", items, "page", page,
	    "limit", limit, "has_more", more);
	return *out ? 0 : ENGINE_ENOMEM;
}

/*
 * Version vid of app_id (NULL: the latest) as stored, with its dsl, into
 * *out; ENGINE_ENOTFOUND when there is none.
 */
int
version_get(struct engine *e, const char *app_id, const char *vid,
    json_t **out)
{
	struct store_txn	*t = NULL;
	const void		*val;
	size_t			 vlen;
	char			 key[VER_KEY_MAX], latest[37];
	int			 rc;

	if (engine_uuid_check(app_id) != 0 ||
	    (vid != NULL && engine_uuid_check(vid) != 0))
		return ENGINE_ENOTFOUND;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	if (vid != NULL) {
		ver_key(key, app_id, vid);
		rc = store_get(t, STORE_DB_VERSIONS, key, strlen(key), &val,
		    &vlen);
	} else
		rc = versions_latest(t, app_id, latest, &val, &vlen);
	if (rc == 0 && (*out = json_loadb(val, vlen, 0, NULL)) == NULL)
		rc = STORE_EINVAL;
	store_read_end(t);
	return engine_from_store(rc);
}

int
engine_version_view(struct engine *e, const char *app_id, const char *vid,
    json_t **out)
{
	json_t	*rec = NULL;
	int	 rc;

	if ((rc = version_get(e, app_id, vid, &rec)) != 0)
		return rc;
	*out = version_view(json_object_get(rec, "dsl"), rec);
	json_decref(rec);
	return *out ? 0 : ENGINE_ENOMEM;
}

int
engine_draft_view(struct engine *e, const char *app_id, json_t **out)
{
	json_t	*rec = NULL, *meta = NULL;
	int	 rc;

	if ((rc = engine_app_get_full(e, app_id, &rec)) != 0)
		return rc;
	if (!json_is_object(json_object_get(json_object_get(rec, "dsl"),
	    "workflow"))) {
		rc = ENGINE_EINVAL;
		goto out;
	}
	if ((meta = json_deep_copy(json_object_get(rec, "workflow"))) == NULL ||
	    json_object_set_new(meta, "version", json_string("draft")) != 0) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((*out = version_view(json_object_get(rec, "dsl"), meta)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if (json_object_set(*out, "app_mode", json_object_get(rec,
	    "mode")) != 0 || json_object_set_new(*out, "runtime_type",
	    json_string(engine_app_is_sandboxed(rec) ? "sandboxed" :
	    "classic")) != 0) {
		json_decref(*out);
		*out = NULL;
		rc = ENGINE_ENOMEM;
	}
out:
	json_decref(meta);
	json_decref(rec);
	return rc;
}

/* ====== Saving and restoring the draft ====== */

struct draft_put {
	const char	*app_id;
	const char	*want_hash;	/* NULL: no check (restore) */
	json_t		*dsl;		/* the new draft */
	int64_t		 now;
};

static int
draft_put_fn(struct store_txn *t, void *arg)
{
	struct draft_put	*p = arg;
	json_t			*rec = NULL, *wf;
	char			 hex[STORE_HASH_HEX];
	int			 rc;

	if ((rc = app_store_get(t, p->app_id, 1, &rec)) != 0)
		return rc;
	if (p->want_hash != NULL) {
		draft_hash(json_object_get(rec, "dsl"), hex);
		if (strcmp(hex, p->want_hash) != 0) {
			rc = ENGINE_ECONFLICT;
			goto out;
		}
	}
	if (json_object_set(rec, "dsl", p->dsl) != 0 ||
	    json_object_set_new(rec, "updated_at", json_integer(p->now)) != 0 ||
	    json_object_set_new(rec, "revision", json_integer(
	    json_integer_value(json_object_get(rec, "revision")) + 1)) != 0 ||
	    (json_is_object(wf = json_object_get(rec, "workflow")) &&
	    json_object_set_new(wf, "updated_at", json_integer(p->now)) != 0)) {
		rc = STORE_ENOMEM;
		goto out;
	}
	rc = app_store_put(t, rec, 0);
out:
	json_decref(rec);
	return rc;
}

/* {result, hash, updated_at} of a stored draft dsl. */
static json_t *
draft_answer(const json_t *dsl, int64_t now)
{
	char hex[STORE_HASH_HEX];

	draft_hash(dsl, hex);
	return json_pack("{s:s,s:s,s:I}", "result", "success", "hash", hex,
	    "updated_at", (json_int_t)now);
}

int
engine_draft_save(struct engine *e, const char *app_id, const json_t *in,
    char *err, json_t **out)
{
	static const char *const parts[] = {
		"graph", "features", "environment_variables",
		"conversation_variables", NULL,
	};
	struct draft_put	 p;
	struct dsl_report	 rep;
	json_t			*rec = NULL, *doc = NULL, *norm = NULL;
	json_t			*old = NULL, *wf, *v;
	const char		*mode, *hash;
	size_t			 i;
	int			 rc;

	memset(&rep, 0, sizeof(rep));
	if (!json_is_object(in))
		return engine_invalid(err, "body must be a JSON object");
	if (!json_is_object(json_object_get(in, "graph")))
		return engine_invalid(err, "graph is required: an object");
	if (!json_is_object(json_object_get(in, "features")))
		return engine_invalid(err, "features is required: an object");
	for (i = 2; parts[i] != NULL; i++)
		if ((v = json_object_get(in, parts[i])) != NULL &&
		    !json_is_null(v) && !json_is_array(v))
			return engine_invalid(err, "%s must be a list",
			    parts[i]);
	v = json_object_get(in, "hash");
	if (v != NULL && !json_is_null(v) && !json_is_string(v))
		return engine_invalid(err, "hash must be a string");
	hash = json_is_string(v) ? json_string_value(v) : "";
	if ((rc = engine_app_get_full(e, app_id, &rec)) != 0)
		return rc;
	mode = json_string_value(json_object_get(rec, "mode"));
	if (!mode_has_versions(mode)) {
		rc = engine_invalid(err, "a %s app has no workflow draft: "
		    "change its model config instead", mode ? mode : "");
		goto out;
	}
	/* the stored document with the client's four parts, checked as an
	 * import checks it (same normalisation, same warnings) */
	if ((doc = draft_doc(rec)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	wf = json_object_get(doc, "workflow");
	for (i = 0; parts[i] != NULL; i++) {
		v = json_object_get(in, parts[i]);
		if (json_object_set_new(wf, parts[i], v != NULL &&
		    !json_is_null(v) ? json_deep_copy(v) : json_array()) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	}
	/* variables that can never be valid fail here: 400, nothing kept */
	if ((rc = draft_check(e, doc, err, &rep, &norm)) != 0)
		goto out;
	/* a secret sent back masked keeps its stored value; the others
	 * are sealed as an import seals them */
	if ((old = json_deep_copy(json_object_get(json_object_get(rec, "dsl"),
	    "workflow"))) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = dsl_secrets(e, old, DSL_SECRET_OPEN, NULL, err)) != 0 ||
	    (rc = dsl_secrets_keep(json_object_get(norm, "workflow"), old))
	    != 0 || (rc = dsl_secrets(e, json_object_get(norm, "workflow"),
	    DSL_SECRET_SEAL, NULL, err)) != 0)
		goto out;
	p.app_id = app_id;
	p.want_hash = hash;
	p.dsl = norm;
	p.now = engine_now();
	if ((rc = store_write(e->store, draft_put_fn, &p)) != 0) {
		rc = engine_from_store(rc);
		goto out;
	}
	if ((*out = draft_answer(norm, p.now)) == NULL ||
	    json_object_set(*out, "warnings", rep.problems) != 0) {
		json_decref(*out);
		rc = ENGINE_ENOMEM;
	}
out:
	if (old != NULL)
		dsl_secrets(e, old, DSL_SECRET_BLANK, NULL, err);
	json_decref(old);
	dsl_report_release(&rep);
	json_decref(norm);
	json_decref(doc);
	json_decref(rec);
	return rc;
}

int
engine_version_restore(struct engine *e, const char *app_id,
    const char *vid, char *err, json_t **out)
{
	struct draft_put	 p;
	json_t			*ver = NULL;
	int			 rc;

	(void)err;
	if ((rc = version_get(e, app_id, vid, &ver)) != 0)
		return rc;
	p.app_id = app_id;
	p.want_hash = NULL;
	p.dsl = json_object_get(ver, "dsl");
	p.now = engine_now();
	if ((rc = store_write(e->store, draft_put_fn, &p)) != 0)
		rc = engine_from_store(rc);
	else if ((*out = draft_answer(p.dsl, p.now)) == NULL)
		rc = ENGINE_ENOMEM;
	json_decref(ver);
	return rc;
}

/* ====== Chat apps' model config ====== */

int
engine_model_config_set(struct engine *e, const char *app_id,
    const json_t *mc, char *err)
{
	struct draft_put	 p = { app_id, NULL, NULL, 0 };
	json_t			*rec = NULL, *model;
	const char		*mode;
	int			 rc;

	if (!json_is_object(mc))
		return engine_invalid(err, "body must be a JSON object");
	model = json_object_get(mc, "model");
	if (!json_is_object(model) ||
	    !json_is_string(json_object_get(model, "provider")) ||
	    !json_is_string(json_object_get(model, "name")))
		return engine_invalid(err, "model is required: {provider, "
		    "name, mode, completion_params}");
	if ((rc = engine_app_get_full(e, app_id, &rec)) != 0)
		return rc;
	mode = json_string_value(json_object_get(rec, "mode"));
	if (mode_has_versions(mode)) {
		rc = engine_invalid(err, "a %s app keeps its model in its "
		    "workflow's nodes: save the draft instead", mode);
		goto out;
	}
	/* as Dify's, the body is the whole new config */
	if ((p.dsl = json_deep_copy(json_object_get(rec, "dsl"))) == NULL ||
	    json_object_set_new(p.dsl, "model_config", json_deep_copy(mc))
	    != 0) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	p.now = engine_now();
	rc = engine_from_store(store_write(e->store, draft_put_fn, &p));
out:
	json_decref(p.dsl);
	json_decref(rec);
	return rc;
}
