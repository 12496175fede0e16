/*
 * store.c — custom tool providers kept in the settings database
 * (engine.h, "Custom tool providers"): "tool_provider/<name>" -> {id,
 * name, type, description, created_at, updated_at, and for api: schema
 * (text), openapi (the parsed document), credentials, tools; for mcp:
 * what mcp_providers.c says}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/records/records.h"
#include "engine/tools/tools.h"

#define TP_PREFIX	TOOL_PROVIDER_PREFIX
#define TP_MAX_NAME	128
#define TP_MAX		TOOL_PROVIDER_MAX

struct tp_put {
	const char	*name;
	json_t		*rec;		/* reset on retries from a copy */
	const json_t	*orig;
	int		 keep_id;
};

int
tool_provider_name_ok(const char *name)
{
	const unsigned char *s;

	if (name == NULL || *name == '\0' || strlen(name) > TP_MAX_NAME)
		return 0;
	for (s = (const unsigned char *)name; *s != '\0'; s++)
		if (*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

static void
key_of(const char *name, char *buf, size_t bufsz)
{
	snprintf(buf, bufsz, TP_PREFIX "%s", name);
}

/* The view of a record: no secrets, no schema text. New reference. */
static json_t *
view_of(const json_t *rec)
{
	json_t *v;

	if (json_string_value(json_object_get(rec, "type")) != NULL &&
	    strcmp(json_string_value(json_object_get(rec, "type")), "mcp") ==
	    0)
		return mcp_provider_view(rec);
	if ((v = json_deep_copy(rec)) == NULL)
		return NULL;
	json_object_del(v, "credentials");
	json_object_del(v, "headers");
	json_object_del(v, "schema");
	json_object_del(v, "openapi");
	return v;
}

static int
tp_put_fn(struct store_txn *t, void *arg)
{
	struct tp_put	*p = arg;
	json_t		*old = NULL, *v;
	char		 key[TP_MAX_NAME + 32];
	int		 rc;

	json_decref(p->rec);
	if ((p->rec = json_deep_copy(p->orig)) == NULL)
		return ENGINE_ENOMEM;
	key_of(p->name, key, sizeof(key));
	rc = store_get_json(t, STORE_DB_SETTINGS, key, &old);
	if (rc == 0) {
		/* the stored record's id and creation stay */
		if ((!p->keep_id && (v = json_object_get(old, "id")) != NULL &&
		    json_object_set(p->rec, "id", v) != 0) ||
		    ((v = json_object_get(old, "created_at")) != NULL &&
		    json_object_set(p->rec, "created_at", v) != 0)) {
			json_decref(old);
			return ENGINE_ENOMEM;
		}
	} else if (rc != STORE_ENOTFOUND)
		return rc;
	json_decref(old);
	return store_put_json(t, STORE_DB_SETTINGS, key, p->rec, 0);
}

int
engine_tool_provider_put(struct engine *e, const json_t *in, char *err,
    json_t **out)
{
	struct tp_put	 p;
	json_t		*rec = NULL, *doc = NULL, *tools = NULL, *cred;
	const char	*name, *type, *id, *schema;
	char		 uuid[37];
	int64_t		 now = engine_now();
	int		 rc;

	*out = NULL;
	memset(&p, 0, sizeof(p));
	name = json_string_value(json_object_get(in, "name"));
	type = json_string_value(json_object_get(in, "type"));
	id = json_string_value(json_object_get(in, "id"));
	if (!tool_provider_name_ok(name)) {
		rc = engine_invalid(err, "name: 1 to %d characters, no control "
		    "characters", TP_MAX_NAME);
		goto out;
	}
	if (type == NULL || (strcmp(type, "api") != 0 &&
	    strcmp(type, "mcp") != 0)) {
		rc = engine_invalid(err, "type: \"api\" or \"mcp\"");
		goto out;
	}
	if (strcmp(type, "mcp") == 0) {
		/* secrets sealed, Dify's fields: mcp_providers.c */
		rc = mcp_provider_put(e, in, err, out);
		goto out;
	}
	if (id != NULL && (*id == '\0' || strlen(id) > 64)) {
		rc = engine_invalid(err, "id: 1 to 64 characters");
		goto out;
	}
	engine_uuid(uuid);
	rec = json_pack("{s:s,s:s,s:s,s:s,s:I,s:I}", "id", id ? id : uuid,
	    "name", name, "type", type, "description", json_string_value(
	    json_object_get(in, "description")) ? json_string_value(
	    json_object_get(in, "description")) : "", "created_at",
	    (json_int_t)now, "updated_at", (json_int_t)now);
	if (rec == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if (strcmp(type, "api") == 0) {
		schema = json_string_value(json_object_get(in, "schema"));
		if (schema == NULL) {
			rc = engine_invalid(err, "schema: the OpenAPI document "
			    "as text is required");
			goto out;
		}
		if (strlen(schema) > TOOL_MAX_SCHEMA) {
			rc = engine_invalid(err, "schema: larger than %d bytes",
			    TOOL_MAX_SCHEMA);
			goto out;
		}
		if ((rc = api_schema_check(schema, err, &doc, &tools)) != 0)
			goto out;
		cred = json_object_get(in, "credentials");
		if (cred != NULL && !json_is_object(cred)) {
			rc = engine_invalid(err, "credentials: an object");
			goto out;
		}
		if (json_object_set_new(rec, "schema",
		    json_string(schema)) != 0 ||
		    json_object_set(rec, "openapi", doc) != 0 ||
		    json_object_set(rec, "tools", tools) != 0 ||
		    json_object_set_new(rec, "credentials", cred ?
		    json_deep_copy(cred) : json_pack("{s:s}", "auth_type",
		    "none")) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	}
	p.name = name;
	p.orig = rec;
	p.keep_id = id != NULL;
	if ((rc = engine_from_store(store_write(e->store, tp_put_fn,
	    &p))) != 0)
		goto out;
	if ((*out = view_of(p.rec)) == NULL)
		rc = ENGINE_ENOMEM;
out:
	json_decref(p.rec);
	json_decref(rec);
	json_decref(doc);
	json_decref(tools);
	return rc;
}

int
engine_tool_provider_get(struct engine *e, const char *name, json_t **out)
{
	struct store_txn	*t = NULL;
	char			 key[TP_MAX_NAME + 32];
	int			 rc;

	*out = NULL;
	if (!tool_provider_name_ok(name))
		return ENGINE_ENOTFOUND;
	key_of(name, key, sizeof(key));
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	rc = store_get_json(t, STORE_DB_SETTINGS, key, out);
	store_read_end(t);
	return engine_from_store(rc);
}

int
tool_provider_all(struct engine *e, json_t **out)
{
	struct store_txn	*t = NULL;
	json_t			*all = NULL, *arr = NULL, *rec;
	const char		*k;
	int			 rc;

	*out = NULL;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	rc = records_collect(t, STORE_DB_SETTINGS, TP_PREFIX, NULL, TP_MAX,
	    &all);
	store_read_end(t);
	if (rc != 0)
		return engine_from_store(rc);
	if ((arr = json_array()) != NULL)
		json_object_foreach(all, k, rec)
			if (!json_is_null(rec) &&
			    json_array_append(arr, rec) != 0) {
				json_decref(arr);
				arr = NULL;
				break;
			}
	json_decref(all);
	*out = arr;
	return arr != NULL ? 0 : ENGINE_ENOMEM;
}

int
engine_tool_provider_list(struct engine *e, json_t **out)
{
	json_t	*all = NULL, *data = NULL, *r;
	size_t	 i;
	int	 rc;

	*out = NULL;
	if ((rc = tool_provider_all(e, &all)) != 0)
		goto out;
	if ((data = json_array()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	json_array_foreach(all, i, r)
		if (json_array_append_new(data, view_of(r)) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	if ((*out = json_pack("{s:O}", "data", data)) == NULL)
		rc = ENGINE_ENOMEM;
out:
	json_decref(all);
	json_decref(data);
	return rc;
}

static int
tp_del_fn(struct store_txn *t, void *arg)
{
	const char	*key = arg;

	return store_del(t, STORE_DB_SETTINGS, key, strlen(key));
}

int
engine_tool_provider_delete(struct engine *e, const char *name)
{
	char key[TP_MAX_NAME + 32];

	if (!tool_provider_name_ok(name))
		return ENGINE_ENOTFOUND;
	key_of(name, key, sizeof(key));
	return engine_from_store(store_write(e->store, tp_del_fn, key));
}

int
tool_provider_record(struct engine *e, const struct tool_call *call,
    const char *type, char *err, json_t **out)
{
	const char	*names[2] = { call->provider_name, call->provider };
	json_t		*rec = NULL, *all = NULL, *r;
	const char	*rt, *id, *si;
	size_t		 i;
	int		 rc = ENGINE_ENOTFOUND;

	*out = NULL;
	for (i = 0; i < 2 && rec == NULL; i++) {
		if (names[i] == NULL)
			continue;
		if ((rc = engine_tool_provider_get(e, names[i], &rec)) != 0 &&
		    rc != ENGINE_ENOTFOUND)
			goto out;
		rt = json_string_value(json_object_get(rec, "type"));
		if (rec != NULL && (rt == NULL || strcmp(rt, type) != 0)) {
			json_decref(rec);
			rec = NULL;
		}
	}
	if (rec == NULL && call->provider != NULL) {
		if ((rc = tool_provider_all(e, &all)) != 0)
			goto out;
		json_array_foreach(all, i, r) {
			id = json_string_value(json_object_get(r, "id"));
			rt = json_string_value(json_object_get(r, "type"));
			si = json_string_value(json_object_get(r,
			    "server_identifier"));
			if (rt != NULL && strcmp(rt, type) == 0 && ((id !=
			    NULL && strcmp(id, call->provider) == 0) || (si !=
			    NULL && strcmp(si, call->provider) == 0))) {
				rec = json_incref(r);
				break;
			}
		}
	}
	if (rec == NULL) {
		rc = ENGINE_ENOTFOUND;
		engine_invalid(err, "tool '%s/%s' is not available in flowcgi: "
		    "no %s tool provider '%s' is configured", call->provider_name ?
		    call->provider_name : call->provider ? call->provider : "",
		    call->tool ? call->tool : "", type, call->provider_name ?
		    call->provider_name : call->provider ? call->provider : "");
		goto out;
	}
	*out = rec;
	rec = NULL;
	rc = 0;
out:
	json_decref(rec);
	json_decref(all);
	return rc;
}
