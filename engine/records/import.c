/*
 * import.c — DSL import (YAML text, a URL, a .zip bundle), the pending /
 * confirm flow for other DSL versions, and export (YAML or bundle).
 *
 * Pending imports live in the imports database for 10 minutes, so any
 * process can confirm them: key import id, value {created_at, doc, opts,
 * bundle_blob?}. A pending bundle keeps its zip as a blob reference until
 * it is confirmed or expires.
 *
 * Bundles also come in three steps, as Dify's web client sends them:
 * prepare, an upload of the .zip, confirm. A prepared import is a record
 * of the same database under a 32-hex-digit id (never a UUID, so neither
 * confirm takes the other's), {kind: "bundle", created_at, expires_at,
 * bundle_blob?, size?}, kept until confirmed or bundle.import_ttl is over.
 *
 * Secrets the DSL carries (dsl_secrets) are sealed before anything is
 * stored: in the draft, in a pending doc, and a pending bundle's zip is
 * kept without its DSL file when that holds any. Export opens them with
 * include_secret and blanks them without.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/records/records.h"

#define IMPORT_TTL	600		/* seconds a pending import is kept */
#define DSL_MAX_BYTES	(10 << 20)	/* as Dify: 10 MB */

/* ====== Results ====== */

static json_t *
import_result(const char *id, const char *status, const char *app_id,
    const char *mode, const char *imported, const char *error)
{
	return json_pack("{s:s,s:s,s:s?,s:s?,s:s,s:s,s:s}", "id", id, "status",
	    status, "app_id", app_id, "app_mode", mode,
	    "current_dsl_version", DSL_VERSION_CURRENT,
	    "imported_dsl_version", imported ? imported : "", "error",
	    error ? error : "");
}

static int
import_failed(const char *id, const char *imported, const char *error,
    json_t **out)
{
	*out = import_result(id, "failed", NULL, NULL, imported, error);
	return *out != NULL ? 0 : ENGINE_ENOMEM;
}

/* ====== Pending imports ====== */

static json_t *
opts_json(const struct import_opts *o)
{
	return json_pack("{s:s?,s:s?,s:s?,s:s?,s:s?,s:s?,s:b}", "name",
	    o->name, "description", o->description, "icon_type", o->icon_type,
	    "icon", o->icon, "icon_background", o->icon_background, "app_id",
	    o->app_id, "draft_only", o->draft_only);
}

static void
opts_from_json(const json_t *j, struct import_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->name = json_string_value(json_object_get(j, "name"));
	o->description = json_string_value(json_object_get(j, "description"));
	o->icon_type = json_string_value(json_object_get(j, "icon_type"));
	o->icon = json_string_value(json_object_get(j, "icon"));
	o->icon_background = json_string_value(json_object_get(j,
	    "icon_background"));
	o->app_id = json_string_value(json_object_get(j, "app_id"));
	o->draft_only = json_is_true(json_object_get(j, "draft_only"));
}

struct pending_put {
	const char	*id;
	json_t		*rec;
	const void	*zip;
	size_t		 zip_len;
	const char	*consume;	/* a prepared bundle import it ends */
};

/*
 * 1 when imports record rec is past its time: its expires_at (a prepared
 * bundle import), else ten minutes after created_at (a pending one).
 */
static int
import_expired(const json_t *rec, int64_t now)
{
	const json_t *exp = json_object_get(rec, "expires_at");

	if (json_is_integer(exp))
		return now >= json_integer_value(exp);
	return now - json_integer_value(json_object_get(rec, "created_at")) >
	    IMPORT_TTL;
}

/*
 * Takes imports record id away inside t, with its bundle's blob
 * reference: a confirm ends what it confirms in its own transaction. A
 * record gone already (a confirm that raced this one, the pruner) is
 * STORE_ENOTFOUND, so that one import never makes two apps.
 */
static int
import_consume(struct store_txn *t, const char *id)
{
	json_t		*rec = NULL;
	const char	*blob;
	int		 rc;

	if ((rc = store_get_json(t, STORE_DB_IMPORTS, id, &rec)) != 0)
		return rc;
	blob = json_string_value(json_object_get(rec, "bundle_blob"));
	if (blob != NULL && (rc = store_blob_unref(t, blob)) != 0)
		goto out;
	rc = store_del(t, STORE_DB_IMPORTS, id, strlen(id));
out:
	json_decref(rec);
	return rc;
}

int
imports_purge_expired(struct store_txn *t, int64_t *n)
{
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	json_t			*rec, *old = NULL;
	int64_t			 now = engine_now();
	const char		*blob;
	size_t			 i;
	int			 rc;

	if ((old = json_array()) == NULL)
		return STORE_ENOMEM;
	if ((rc = store_cursor_open(t, STORE_DB_IMPORTS, &c)) != 0)
		goto out;
	for (rc = store_cursor_first(c, &kv); rc == 0;
	     rc = store_cursor_next(c, &kv)) {
		if ((rec = json_loadb(kv.v, kv.vlen, 0, NULL)) == NULL)
			continue;
		if (import_expired(rec, now) && (json_object_set_new(rec,
		    "_key", json_stringn(kv.k, kv.klen)) != 0 ||
		    json_array_append(old, rec) != 0)) {
			json_decref(rec);
			rc = STORE_ENOMEM;
			goto out;
		}
		json_decref(rec);
	}
	store_cursor_close(c);
	c = NULL;
	rc = 0;
	if (n != NULL)
		*n = (int64_t)json_array_size(old);
	json_array_foreach(old, i, rec) {
		blob = json_string_value(json_object_get(rec, "bundle_blob"));
		if (blob != NULL)
			store_blob_unref(t, blob);
		store_del(t, STORE_DB_IMPORTS, json_string_value(
		    json_object_get(rec, "_key")), strlen(json_string_value(
		    json_object_get(rec, "_key"))));
	}
out:
	store_cursor_close(c);
	json_decref(old);
	return rc;
}

static int
pending_put_fn(struct store_txn *t, void *arg)
{
	struct pending_put	*p = arg;
	char			 hex[STORE_HASH_HEX];
	int			 rc;

	if ((rc = imports_purge_expired(t, NULL)) != 0)
		return rc;
	if (p->consume != NULL && (rc = import_consume(t, p->consume)) != 0)
		return rc;
	if (p->zip != NULL) {
		if ((rc = store_blob_ref(t, p->zip, p->zip_len, hex)) != 0)
			return rc;
		if (json_object_set_new(p->rec, "bundle_blob",
		    json_string(hex)) != 0)
			return STORE_ENOMEM;
	}
	return store_put_json(t, STORE_DB_IMPORTS, p->id, p->rec,
	    STORE_NOOVERWRITE);
}

/*
 * The zip a pending import of bundle b keeps when its DSL carries secrets:
 * the same files and manifest, and a DSL file without content (confirm
 * takes the sealed doc of the pending record, never this file).
 */
static int
pending_zip(const struct bundle *b, char *err, char **zip, size_t *len)
{
	static const char	 empty[] = "# kept in the pending import\n";
	json_t			*man = NULL;
	char			*name = NULL, *dot;
	int			 rc = ENGINE_ENOMEM;

	if ((name = strdup(b->dsl_name)) == NULL)
		goto out;
	if ((dot = strrchr(name, '.')) != NULL)
		*dot = '\0';
	if (b->manifest != NULL) {
		if ((man = json_deep_copy(b->manifest)) == NULL)
			goto out;
		if (json_object_get(man, "dsl_filename") != NULL &&
		    json_object_set_new(man, "dsl_filename", json_sprintf(
		    "%s.yml", name)) != 0)
			goto out;
	}
	rc = bundle_write(name, empty, sizeof(empty) - 1, man, b->files,
	    b->nfiles, err, zip, len);
out:
	json_decref(man);
	free(name);
	return rc;
}

/* ====== Creating or overwriting the app ====== */

struct import_put {
	struct engine		*e;
	json_t			*rec;		/* new app, or NULL */
	const char		*app_id;	/* overwrite: this app */
	json_t			*dsl;		/* overwrite: its new draft */
	const struct bundle	*bundle;
	const char		*consume;	/* confirmed: end this */
	int			 publish;	/* a workflow: publish it */
	char			*err;
	char			 mode[32];	/* out: mode of app_id */
};

static int
import_put_fn(struct store_txn *t, void *arg)
{
	struct import_put	*p = arg;
	json_t			*rec = NULL, *wf;
	const char		*id;
	int			 rc;

	if (p->consume != NULL && (rc = import_consume(t, p->consume)) != 0)
		goto out;
	if (p->rec != NULL) {
		id = json_string_value(json_object_get(p->rec, "id"));
		if ((rc = app_store_put(t, p->rec, STORE_NOOVERWRITE)) != 0)
			goto out;
		if (p->publish && (rc = versions_publish(t, p->e->conf, id,
		    json_object_get(p->rec, "dsl"), NULL, NULL, NULL)) != 0)
			goto out;
		if (p->bundle != NULL)
			rc = assets_import(t, p->e->conf, id, p->bundle,
			    p->err);
		goto out;
	}
	/* Overwrite the draft of an existing workflow or chatflow app. */
	if ((rc = app_store_get(t, p->app_id, 0, &rec)) != 0)
		goto out;
	snprintf(p->mode, sizeof(p->mode), "%s", json_string_value(
	    json_object_get(rec, "mode")));
	if (json_object_set(rec, "dsl", p->dsl) != 0 ||
	    json_object_set_new(rec, "updated_at",
	    json_integer(engine_now())) != 0 ||
	    json_object_set_new(rec, "revision", json_integer(
	    json_integer_value(json_object_get(rec, "revision")) + 1)) != 0 ||
	    (json_is_object(wf = json_object_get(rec, "workflow")) &&
	    json_object_set_new(wf, "updated_at",
	    json_integer(engine_now())) != 0)) {
		rc = STORE_ENOMEM;
		goto out;
	}
	if ((rc = app_store_put(t, rec, 0)) != 0)
		goto out;
	if (p->publish && (rc = versions_publish(t, p->e->conf, p->app_id,
	    p->dsl, NULL, NULL, NULL)) != 0)
		goto out;
	if (p->bundle != NULL) {
		if ((rc = assets_delete_all(t, p->app_id)) != 0)
			goto out;
		rc = assets_import(t, p->e->conf, p->app_id, p->bundle, p->err);
	}
out:
	json_decref(rec);
	return rc;
}

/*
 * An app header field: the caller's override, else the DSL's. 0, or -1
 * when out of memory.
 */
static int
field(json_t *fields, const char *k, const char *override, const json_t *app)
{
	json_t *v = json_object_get(app, k);

	if (override != NULL)
		return json_object_set_new(fields, k, json_string(override));
	if (json_is_string(v))
		return json_object_set(fields, k, v);
	return 0;
}

/*
 * Sets leaked_dependencies of import answer res (engine_tool_deps of the
 * DSL dsl) and adds a warning per node of each; an import with any is
 * completed-with-warnings. Returns 0 or ENGINE_ENOMEM.
 */
static int
import_leaked(struct engine *e, const json_t *dsl, json_t *res)
{
	json_t		*leaked = NULL, *warnings, *ent, *node;
	const char	*st;
	size_t		 i, j;
	int		 rc;

	if ((rc = engine_tool_deps(e, dsl, &leaked)) != 0)
		return rc;
	warnings = json_object_get(res, "warnings");
	if (!json_is_array(warnings)) {
		if ((warnings = json_array()) == NULL ||
		    json_object_set_new(res, "warnings", warnings) != 0) {
			json_decref(leaked);
			return ENGINE_ENOMEM;
		}
	} else if ((warnings = json_copy(warnings)) == NULL ||
	    json_object_set_new(res, "warnings", warnings) != 0) {
		json_decref(leaked);
		return ENGINE_ENOMEM;
	}
	json_array_foreach(leaked, i, ent) {
		json_array_foreach(json_object_get(ent, "nodes"), j, node)
			if (json_array_append_new(warnings, json_pack(
			    "{s:O,s:s,s:O}", "node_id", node, "field",
			    "provider_id", "message", json_object_get(ent,
			    "message"))) != 0)
				rc = ENGINE_ENOMEM;
		if (json_array_size(json_object_get(ent, "nodes")) == 0 &&
		    json_array_append_new(warnings, json_pack("{s:s,s:s,s:O}",
		    "node_id", "", "field", "tools", "message",
		    json_object_get(ent, "message"))) != 0)
			rc = ENGINE_ENOMEM;
	}
	st = json_string_value(json_object_get(res, "status"));
	if (rc == 0 && json_array_size(leaked) > 0 && st != NULL &&
	    strcmp(st, "completed") == 0 && json_object_set_new(res, "status",
	    json_string("completed-with-warnings")) != 0)
		rc = ENGINE_ENOMEM;
	if (rc == 0 && json_object_set_new(res, "leaked_dependencies",
	    leaked) != 0)
		return ENGINE_ENOMEM;
	if (rc != 0)
		json_decref(leaked);
	return rc;
}

/*
 * Finishes an import of the parsed document doc (and bundle b, if any):
 * checks it, holds it pending, or creates / overwrites the app. Always
 * answers with an Import object in *out, unless it returns an error code.
 * pending_id: the pending import being confirmed (its id is the answer's);
 * consume: the imports record the write ends (the confirmed pending
 * import, or a prepared bundle import), which must still be there.
 */
static int
import_doc(struct engine *e, const json_t *doc, const struct bundle *b,
    const void *zip, size_t zip_len, const struct import_opts *o,
    const char *pending_id, const char *consume, char *err, json_t **out)
{
	struct dsl_report	 rep;
	struct import_put	 ip;
	struct pending_put	 pp;
	json_t			*norm = NULL, *fields = NULL, *rec = NULL;
	json_t			*app, *cur = NULL, *sealed = NULL;
	const char		*mode;
	char			 id[37], msg[ENGINE_ERRMAX] = "";
	char			*szip = NULL;
	size_t			 szip_len = 0;
	struct dsl_check_limits	 lim;
	int			 rc;

	memset(&rep, 0, sizeof(rep));
	if (pending_id != NULL)
		snprintf(id, sizeof(id), "%s", pending_id);
	else
		engine_uuid(id);
	/* the checks a draft save and a publish make (versions.c) */
	lim.max_variable_size = (size_t)e->conf->workflow_max_variable_size;
	rc = dsl_check_limits(doc, (pending_id ? DSL_CHECK_CONFIRM : 0) |
	    DSL_CHECK_RUNNABLE, &lim, msg, &rep, &norm);
	if (rc == ENGINE_EINVAL) {
		rc = import_failed(id, rep.imported_version, msg, out);
		goto out;
	}
	if (rc != 0)
		goto out;
	app = json_object_get(norm, "app");
	mode = json_string_value(json_object_get(app, "mode"));
	if (rep.status == DSL_PENDING) {
		if ((sealed = json_deep_copy(doc)) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		if ((rc = dsl_secrets(e, json_object_get(sealed, "workflow"),
		    DSL_SECRET_SEAL, NULL, msg)) != 0) {
			rc = rc == ENGINE_EINVAL ? import_failed(id,
			    rep.imported_version, msg, out) : rc;
			goto out;
		}
		memset(&pp, 0, sizeof(pp));
		pp.id = id;
		pp.zip = zip;
		pp.zip_len = zip_len;
		pp.consume = consume;
		if (zip != NULL && b != NULL && !json_equal(sealed, doc)) {
			if ((rc = pending_zip(b, msg, &szip, &szip_len)) != 0)
				goto out;
			pp.zip = szip;
			pp.zip_len = szip_len;
		}
		pp.rec = json_pack("{s:I,s:O,s:o}", "created_at",
		    (json_int_t)engine_now(), "doc", sealed, "opts",
		    opts_json(o));
		if (pp.rec == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		rc = engine_from_store(store_write(e->store, pending_put_fn,
		    &pp));
		json_decref(pp.rec);
		if (rc == ENGINE_ENOTFOUND && consume != NULL) {
			rc = import_failed(id, rep.imported_version, "import "
			    "expired or does not exist", out);
			goto out;
		}
		if (rc != 0)
			goto out;
		*out = import_result(id, "pending", NULL, mode,
		    rep.imported_version, NULL);
		rc = *out ? 0 : ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = dsl_secrets(e, json_object_get(norm, "workflow"),
	    DSL_SECRET_SEAL, NULL, msg)) != 0) {
		rc = rc == ENGINE_EINVAL ? import_failed(id,
		    rep.imported_version, msg, out) : rc;
		goto out;
	}
	memset(&ip, 0, sizeof(ip));
	ip.e = e;
	ip.bundle = b;
	ip.consume = consume;
	ip.err = msg;
	/* what is imported runs at once, as before versions existed */
	ip.publish = !o->draft_only && (strcmp(mode, "workflow") == 0 ||
	    strcmp(mode, "advanced-chat") == 0);
	if (o->app_id != NULL && *o->app_id != '\0') {
		/* Dify overwrites only workflow and advanced-chat apps, and
		 * only with a DSL of the same mode. */
		if ((rc = engine_app_get(e, o->app_id, &cur)) != 0) {
			rc = rc == ENGINE_ENOTFOUND ? import_failed(id,
			    rep.imported_version, "app_id names no app", out) :
			    rc;
			goto out;
		}
		if (strcmp(json_string_value(json_object_get(cur, "mode")),
		    mode) != 0 || (strcmp(mode, "workflow") != 0 &&
		    strcmp(mode, "advanced-chat") != 0)) {
			rc = import_failed(id, rep.imported_version, "only a "
			    "workflow or advanced-chat app can be overwritten, "
			    "by a DSL of the same mode", out);
			goto out;
		}
		ip.app_id = o->app_id;
		ip.dsl = norm;
	} else {
		if ((fields = json_object()) == NULL ||
		    field(fields, "name", o->name, app) != 0 ||
		    field(fields, "description", o->description, app) != 0 ||
		    field(fields, "icon_type", o->icon_type, app) != 0 ||
		    field(fields, "icon", o->icon, app) != 0 ||
		    field(fields, "icon_background", o->icon_background,
		    app) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		if ((rc = app_new_record(fields, mode, 1, msg, &rec)) != 0) {
			rc = rc == ENGINE_EINVAL ? import_failed(id,
			    rep.imported_version, msg, out) : rc;
			goto out;
		}
		if ((json_is_boolean(json_object_get(app,
		    "use_icon_as_answer_icon")) && json_object_set(rec,
		    "use_icon_as_answer_icon", json_object_get(app,
		    "use_icon_as_answer_icon")) != 0) ||
		    json_object_set(rec, "dsl", norm) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		ip.rec = rec;
	}
	rc = engine_from_store(store_write(e->store, import_put_fn, &ip));
	if (rc == ENGINE_EINVAL || rc == ENGINE_ELIMIT) {
		rc = import_failed(id, rep.imported_version, msg, out);
		goto out;
	}
	if (rc == ENGINE_ENOTFOUND && consume != NULL && ip.app_id == NULL) {
		rc = import_failed(id, rep.imported_version, "import expired "
		    "or does not exist", out);
		goto out;
	}
	if (rc != 0)
		goto out;
	*out = import_result(id, dsl_status_name(rep.status), rec ?
	    json_string_value(json_object_get(rec, "id")) : o->app_id, mode,
	    rep.imported_version, NULL);
	/* what dsl_check found: the draft is kept, but may not run */
	if (*out != NULL && json_object_set(*out, "warnings",
	    rep.problems) != 0) {
		json_decref(*out);
		*out = NULL;
	}
	/* and the tools it names that will not run here (Dify's
	 * leaked_dependencies), each also a warning on its nodes */
	if (*out != NULL && (rc = import_leaked(e, norm, *out)) != 0) {
		json_decref(*out);
		*out = NULL;
		goto out;
	}
	rc = *out ? 0 : ENGINE_ENOMEM;
out:
	if (err != NULL && msg[0] != '\0')
		snprintf(err, ENGINE_ERRMAX, "%s", msg);
	dsl_report_release(&rep);
	json_decref(norm);
	json_decref(sealed);
	free(szip);
	json_decref(fields);
	json_decref(rec);
	json_decref(cur);
	return rc;
}

/* ====== Entry points ====== */

int
engine_import(struct engine *e, const char *yaml, size_t len,
    const struct import_opts *o, char *err, json_t **out)
{
	struct dsl_limits	 lim;
	json_t			*doc = NULL;
	char			 id[37], msg[ENGINE_ERRMAX] = "";
	int			 rc;

	engine_uuid(id);
	if (len > DSL_MAX_BYTES) {
		snprintf(msg, sizeof(msg), "DSL of %zu bytes is larger than "
		    "10 MB", len);
		return import_failed(id, NULL, msg, out);
	}
	dsl_limits_default(&lim);
	if ((rc = dsl_parse(yaml, len, &lim, msg, &doc)) != 0)
		return rc == ENGINE_EINVAL ? import_failed(id, NULL, msg, out) :
		    rc;
	rc = import_doc(e, doc, NULL, NULL, 0, o, NULL, NULL, err, out);
	json_decref(doc);
	return rc;
}

/* GitHub page URLs (/blob/) become their raw file URLs, as in Dify. */
static char *
github_raw(const char *url)
{
	const char	*p = "https://github.com/", *blob;
	char		*raw;
	size_t		 n;

	if (strncmp(url, p, strlen(p)) != 0 ||
	    (blob = strstr(url, "/blob/")) == NULL)
		return strdup(url);
	n = strlen(url) + 64;
	if ((raw = malloc(n)) == NULL)
		return NULL;
	snprintf(raw, n, "https://raw.githubusercontent.com/%.*s/%s",
	    (int)(blob - url - strlen(p)), url + strlen(p), blob + 6);
	return raw;
}

int
engine_import_url(struct engine *e, const char *url,
    const struct import_opts *o, char *err, json_t **out)
{
	struct outbound_req	 rq;
	struct outbound_resp	 rs;
	char			 id[37], msg[ENGINE_ERRMAX] = "", *raw;
	int			 rc;

	engine_uuid(id);
	if ((raw = github_raw(url)) == NULL)
		return ENGINE_ENOMEM;
	memset(&rq, 0, sizeof(rq));
	rq.url = raw;
	rq.follow = 1;
	rq.max_bytes = DSL_MAX_BYTES;
	rc = outbound_fetch(e, &rq, msg, &rs);
	free(raw);
	if (rc == ENGINE_EFETCH || rc == ENGINE_ELIMIT)
		return import_failed(id, NULL, msg, out);
	if (rc != 0)
		return rc;
	if (rs.status != 200) {
		snprintf(msg, sizeof(msg), "fetching the DSL: HTTP %ld",
		    rs.status);
		outbound_resp_release(&rs);
		return import_failed(id, NULL, msg, out);
	}
	rc = engine_import(e, rs.body, rs.len, o, err, out);
	outbound_resp_release(&rs);
	return rc;
}

int
engine_import_bundle(struct engine *e, const void *zip, size_t len,
    const struct import_opts *o, char *err, json_t **out)
{
	struct bundle		 b;
	struct dsl_limits	 lim;
	json_t			*doc = NULL;
	char			 id[37], msg[ENGINE_ERRMAX] = "";
	int			 rc;

	engine_uuid(id);
	if ((rc = bundle_read(e->conf, zip, len, msg, &b)) != 0)
		return rc == ENGINE_EINVAL || rc == ENGINE_ELIMIT ?
		    import_failed(id, NULL, msg, out) : rc;
	dsl_limits_default(&lim);
	if ((rc = dsl_parse(b.dsl, b.dsl_len, &lim, msg, &doc)) != 0) {
		rc = rc == ENGINE_EINVAL ? import_failed(id, NULL, msg, out) :
		    rc;
		goto out;
	}
	rc = import_doc(e, doc, &b, zip, len, o, NULL, NULL, err, out);
out:
	json_decref(doc);
	bundle_release(&b);
	return rc;
}

int
engine_import_confirm(struct engine *e, const char *import_id, char *err,
    json_t **out)
{
	struct store_txn	*t = NULL;
	struct import_opts	 o;
	struct bundle		 b;
	size_t			 zip_len = 0;
	const char		*blob;
	json_t			*pend = NULL;
	char			 msg[ENGINE_ERRMAX] = "", *zcopy = NULL;
	int			 rc, have_bundle = 0;

	memset(&b, 0, sizeof(b));
	if (engine_uuid_check(import_id) != 0)
		return import_failed(import_id, NULL, "import expired or does "
		    "not exist", out);
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	rc = store_get_json(t, STORE_DB_IMPORTS, import_id, &pend);
	if (rc == 0 && (blob = json_string_value(json_object_get(pend,
	    "bundle_blob"))) != NULL)
		rc = store_blob_load(t, blob, &zcopy, &zip_len);
	store_read_end(t);
	if (rc == STORE_ENOTFOUND || (rc == 0 && engine_now() -
	    json_integer_value(json_object_get(pend, "created_at")) >
	    IMPORT_TTL)) {
		rc = import_failed(import_id, NULL, "import expired or does "
		    "not exist", out);
		goto out;
	}
	if (rc != 0) {
		rc = engine_from_store(rc);
		goto out;
	}
	if (json_object_get(pend, "bundle_blob") != NULL) {
		if (zcopy == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		if ((rc = bundle_read(e->conf, zcopy, zip_len, msg, &b)) != 0) {
			rc = import_failed(import_id, NULL, msg, out);
			goto out;
		}
		have_bundle = 1;
	}
	opts_from_json(json_object_get(pend, "opts"), &o);
	/* import_doc seals the doc again, as it came. */
	if ((rc = dsl_secrets(e, json_object_get(json_object_get(pend, "doc"),
	    "workflow"), DSL_SECRET_OPEN, NULL, msg)) != 0) {
		rc = rc == ENGINE_EINVAL ? import_failed(import_id, NULL, msg,
		    out) : rc;
		goto out;
	}
	rc = import_doc(e, json_object_get(pend, "doc"), have_bundle ? &b :
	    NULL, NULL, 0, &o, import_id, import_id, err, out);
out:
	if (have_bundle)
		bundle_release(&b);
	free(zcopy);
	json_decref(pend);
	return rc;
}

/* ====== Bundle imports in three steps ====== */

/* 1 when id has the form of a prepared import's id: 32 hex digits. */
static int
prepared_id_ok(const char *id)
{
	return id != NULL && strlen(id) == ENGINE_BUNDLE_ID_LEN &&
	    strspn(id, "0123456789abcdef") == ENGINE_BUNDLE_ID_LEN;
}

/* The prepared import rec, when it is one and still waiting. */
static int
prepared_live(const json_t *rec, int64_t now)
{
	const char *kind = json_string_value(json_object_get(rec, "kind"));

	return kind != NULL && strcmp(kind, "bundle") == 0 &&
	    !import_expired(rec, now);
}

struct prepare_put {
	const struct conf	*conf;
	const char		*id;
	json_t			*rec;
};

static int
prepare_fn(struct store_txn *t, void *arg)
{
	struct prepare_put	*p = arg;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	json_t			*rec;
	int64_t			 now = engine_now(), n = 0;
	int			 rc;

	if ((rc = imports_purge_expired(t, NULL)) != 0)
		return rc;
	if ((rc = store_cursor_open(t, STORE_DB_IMPORTS, &c)) != 0)
		return rc;
	for (rc = store_cursor_first(c, &kv); rc == 0;
	     rc = store_cursor_next(c, &kv)) {
		if (kv.klen != ENGINE_BUNDLE_ID_LEN ||
		    (rec = json_loadb(kv.v, kv.vlen, 0, NULL)) == NULL)
			continue;
		n += prepared_live(rec, now);
		json_decref(rec);
	}
	store_cursor_close(c);
	if (rc != STORE_ENOTFOUND)
		return rc;
	if (n >= p->conf->bundle_max_pending)
		return ENGINE_ELIMIT;
	return store_put_json(t, STORE_DB_IMPORTS, p->id, p->rec,
	    STORE_NOOVERWRITE);
}

int
engine_bundle_prepare(struct engine *e, char id[ENGINE_BUNDLE_ID_LEN + 1],
    int64_t *expires_at)
{
	struct prepare_put	 p;
	char			 uuid[37];
	int64_t			 now = engine_now();
	size_t			 i, n = 0;
	int			 rc;

	engine_uuid(uuid);
	for (i = 0; uuid[i] != '\0'; i++)
		if (uuid[i] != '-')
			id[n++] = uuid[i];
	id[n] = '\0';
	p.conf = e->conf;
	p.id = id;
	p.rec = json_pack("{s:s,s:I,s:I}", "kind", "bundle", "created_at",
	    (json_int_t)now, "expires_at",
	    (json_int_t)(now + e->conf->bundle_import_ttl));
	if (p.rec == NULL)
		return ENGINE_ENOMEM;
	rc = engine_from_store(store_write(e->store, prepare_fn, &p));
	json_decref(p.rec);
	if (rc == 0 && expires_at != NULL)
		*expires_at = now + e->conf->bundle_import_ttl;
	return rc;
}

struct upload_put {
	const char	*id;
	const void	*zip;
	size_t		 len;
};

static int
upload_fn(struct store_txn *t, void *arg)
{
	struct upload_put	*u = arg;
	json_t			*rec = NULL;
	const char		*old;
	char			 hex[STORE_HASH_HEX];
	int			 rc;

	if ((rc = store_get_json(t, STORE_DB_IMPORTS, u->id, &rec)) != 0)
		return rc;
	if (!prepared_live(rec, engine_now())) {
		rc = STORE_ENOTFOUND;
		goto out;
	}
	/* The new reference first: the same bytes again keep their blob. */
	if ((rc = store_blob_ref(t, u->zip, u->len, hex)) != 0)
		goto out;
	old = json_string_value(json_object_get(rec, "bundle_blob"));
	if (old != NULL && (rc = store_blob_unref(t, old)) != 0)
		goto out;
	if (json_object_set_new(rec, "bundle_blob", json_string(hex)) != 0 ||
	    json_object_set_new(rec, "size", json_integer(
	    (json_int_t)u->len)) != 0 ||
	    json_object_set_new(rec, "uploaded_at", json_integer(
	    engine_now())) != 0) {
		rc = STORE_ENOMEM;
		goto out;
	}
	rc = store_put_json(t, STORE_DB_IMPORTS, u->id, rec, 0);
out:
	json_decref(rec);
	return rc;
}

int
engine_bundle_upload(struct engine *e, const char *id, const void *zip,
    size_t len, char *err)
{
	struct upload_put u = { id, zip, len };

	if (!prepared_id_ok(id))
		return ENGINE_ENOTFOUND;
	if ((int64_t)len > e->conf->bundle_max_size) {
		engine_invalid(err, "bundle of %zu bytes is larger than %lld "
		    "bytes (bundle.max_size)", len,
		    (long long)e->conf->bundle_max_size);
		return ENGINE_ELIMIT;
	}
	return engine_from_store(store_write(e->store, upload_fn, &u));
}

static int
drop_fn(struct store_txn *t, void *arg)
{
	return import_consume(t, arg);
}

/*
 * Ends prepared import id after a confirm that failed on the bundle
 * itself, as Dify ends its import session whatever the outcome; the next
 * try starts with a new prepare. Gone already is fine.
 */
static void
prepared_drop(struct engine *e, const char *id)
{
	int rc;

	rc = store_write(e->store, drop_fn, (void *)(uintptr_t)id);
	if (rc != 0 && rc != STORE_ENOTFOUND)
		log_warn("prepared import %s: %s", id, store_strerror(rc));
}

int
engine_bundle_confirm(struct engine *e, const char *id,
    const struct import_opts *o, char *err, json_t **out)
{
	struct store_txn	*t = NULL;
	struct import_opts	 oo;
	struct bundle		 b;
	struct dsl_limits	 lim;
	const char		*blob = NULL, *st;
	size_t			 len = 0;
	json_t			*rec = NULL, *doc = NULL;
	char			 imp[37], msg[ENGINE_ERRMAX] = "";
	char			*zcopy = NULL;
	int			 rc, have_bundle = 0, failed = 0;

	memset(&b, 0, sizeof(b));
	if (!prepared_id_ok(id))
		return ENGINE_ENOTFOUND;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	rc = store_get_json(t, STORE_DB_IMPORTS, id, &rec);
	if (rc == 0 && !prepared_live(rec, engine_now()))
		rc = STORE_ENOTFOUND;
	if (rc == 0 && (blob = json_string_value(json_object_get(rec,
	    "bundle_blob"))) != NULL)
		rc = store_blob_load(t, blob, &zcopy, &len);
	store_read_end(t);
	if (rc != 0) {
		rc = engine_from_store(rc);
		goto out;
	}
	if (blob == NULL) {
		rc = engine_invalid(err, "nothing was uploaded for this import "
		    "yet: PUT the .zip to its upload_url first");
		goto out;
	}
	oo = *o;
	oo.app_id = NULL;
	engine_uuid(imp);
	if ((rc = bundle_read(e->conf, zcopy, len, msg, &b)) != 0) {
		if (rc == ENGINE_EINVAL || rc == ENGINE_ELIMIT) {
			failed = 1;
			rc = import_failed(imp, NULL, msg, out);
		}
		goto out;
	}
	have_bundle = 1;
	dsl_limits_default(&lim);
	if ((rc = dsl_parse(b.dsl, b.dsl_len, &lim, msg, &doc)) != 0) {
		if (rc == ENGINE_EINVAL) {
			failed = 1;
			rc = import_failed(imp, NULL, msg, out);
		}
		goto out;
	}
	rc = import_doc(e, doc, &b, zcopy, len, &oo, NULL, id, err, out);
	st = rc == 0 ? json_string_value(json_object_get(*out, "status")) :
	    NULL;
	failed = st != NULL && strcmp(st, "failed") == 0;
out:
	if (failed)
		prepared_drop(e, id);
	if (err != NULL && msg[0] != '\0' && rc != 0)
		snprintf(err, ENGINE_ERRMAX, "%s", msg);
	if (have_bundle)
		bundle_release(&b);
	json_decref(doc);
	json_decref(rec);
	free(zcopy);
	return rc;
}

/* ====== Export ====== */

/*
 * The export document of record rec: its draft with the app header, its
 * secrets opened with include_secret and blanked without.
 */
static int
export_doc(struct engine *e, const json_t *rec, int include_secret,
    char *err, json_t **out)
{
	json_t	*doc = NULL, *app;
	int	 rc;

	if ((doc = json_deep_copy(json_object_get(rec, "dsl"))) == NULL)
		return ENGINE_ENOMEM;
	if ((rc = dsl_secrets(e, json_object_get(doc, "workflow"),
	    include_secret ? DSL_SECRET_OPEN : DSL_SECRET_BLANK, NULL,
	    err)) != 0) {
		json_decref(doc);
		return rc;
	}
	app = json_pack("{s:O,s:O,s:O,s:O,s:O,s:O,s:O}", "name",
	    json_object_get(rec, "name"), "mode", json_object_get(rec, "mode"),
	    "icon", json_object_get(rec, "icon"), "icon_type",
	    json_object_get(rec, "icon_type"), "icon_background",
	    json_object_get(rec, "icon_background"), "description",
	    json_object_get(rec, "description"), "use_icon_as_answer_icon",
	    json_object_get(rec, "use_icon_as_answer_icon"));
	if (app == NULL) {
		json_decref(doc);
		return ENGINE_ENOMEM;
	}
	if (json_object_set_new(doc, "app", app) != 0) {
		json_decref(doc);
		return ENGINE_ENOMEM;
	}
	rc = dsl_export(doc, include_secret, err, out);
	json_decref(doc);
	return rc;
}

int
engine_export(struct engine *e, const char *app_id, int include_secret,
    char *err, char **yaml, size_t *len)
{
	json_t	*rec = NULL, *doc = NULL;
	int	 rc;

	if ((rc = engine_app_get_full(e, app_id, &rec)) != 0)
		return rc;
	if ((rc = export_doc(e, rec, include_secret, err, &doc)) == 0)
		rc = dsl_emit(doc, err, yaml, len);
	json_decref(doc);
	json_decref(rec);
	return rc;
}

int
engine_export_version(struct engine *e, const char *app_id, const char *vid,
    int include_secret, char *err, char **yaml, size_t *len)
{
	json_t	*rec = NULL, *ver = NULL, *doc = NULL;
	int	 rc;

	if ((rc = engine_app_get(e, app_id, &rec)) != 0)
		return rc;
	if ((rc = version_get(e, app_id, vid, &ver)) != 0) {
		snprintf(err, ENGINE_ERRMAX, "workflow %s is no published "
		    "version of this app", vid);
		goto out;
	}
	if (json_object_set(rec, "dsl", json_object_get(ver, "dsl")) != 0) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = export_doc(e, rec, include_secret, err, &doc)) == 0)
		rc = dsl_emit(doc, err, yaml, len);
out:
	json_decref(doc);
	json_decref(ver);
	json_decref(rec);
	return rc;
}

int
engine_export_bundle(struct engine *e, const char *app_id,
    int include_secret, char *err, char **zip, size_t *len, char **filename)
{
	struct store_txn	*t = NULL;
	struct bundle_file	*files = NULL;
	json_t			*rec = NULL, *doc = NULL, *nodes = NULL;
	json_t			*man = NULL, *flist = NULL, *n;
	char			*yaml = NULL, name[401], ts[32];
	size_t			 ylen, nfiles = 0, i, nf = 0;
	time_t			 now = time(NULL);
	struct tm		 tm;
	int			 rc;

	if ((rc = engine_app_get_full(e, app_id, &rec)) != 0)
		return rc;
	if ((rc = export_doc(e, rec, include_secret, err, &doc)) != 0 ||
	    (rc = dsl_emit(doc, err, &yaml, &ylen)) != 0)
		goto out;
	if ((rc = store_read_begin(e->store, &t)) != 0) {
		rc = engine_from_store(rc);
		goto out;
	}
	rc = assets_export(t, app_id, &nodes, &files, &nfiles);
	store_read_end(t);
	if (rc != 0) {
		rc = engine_from_store(rc);
		goto out;
	}
	bundle_safe_name(json_string_value(json_object_get(rec, "name")),
	    name, sizeof(name));
	if ((flist = json_array()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	json_array_foreach(nodes, i, n) {
		if (strcmp(json_string_value(json_object_get(n, "node_type")),
		    "file") != 0)
			continue;
		if (json_array_append_new(flist, json_pack("{s:O,s:s}",
		    "node_id", json_object_get(n, "id"), "path",
		    json_string_value(json_object_get(n, "path")) + 1)) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		nf++;
	}
	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	man = json_pack("{s:s,s:s,s:s+,s:{s:{s:O}},s:O,s:{s:I}}",
	    "schema_version", "1.0", "generated_at", ts, "dsl_filename", name,
	    ".yml", "app_assets", "tree", "nodes", nodes, "files", flist,
	    "integrity", "file_count", (json_int_t)nf);
	if (man == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = bundle_write(name, yaml, ylen, man, files, nfiles, err, zip,
	    len)) != 0)
		goto out;
	if ((*filename = malloc(strlen(name) + 5)) == NULL) {
		free(*zip);
		rc = ENGINE_ENOMEM;
		goto out;
	}
	snprintf(*filename, strlen(name) + 5, "%s.zip", name);
out:
	bundle_files_free(files, nfiles);
	json_decref(man);
	json_decref(flist);
	json_decref(nodes);
	json_decref(doc);
	json_decref(rec);
	free(yaml);
	return rc;
}

int
engine_app_is_sandboxed(const json_t *rec)
{
	return json_is_true(json_object_get(rec, "sandboxed"));
}

void
engine_bundle_filename(const json_t *rec, char *buf, size_t bufsz)
{
	char name[401];

	bundle_safe_name(json_string_value(json_object_get(rec, "name")),
	    name, sizeof(name));
	snprintf(buf, bufsz, "%s.zip", name);
}
