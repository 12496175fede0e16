/*
 * credentials.c — the credentials of built-in tool providers (Dify's
 * Settings > Tools), one settings record per provider:
 *
 *	"tool_credentials/<provider>" -> {provider, credentials: {key:
 *	    value}, updated_at}
 *
 * A secret-input value is sealed (secrets.c, aad "tool_credentials/
 * <provider>/<key>"), so a record read from the database or a backup
 * holds no key in the clear; every process and every host on PostgreSQL
 * reads the same record. `base_url` may be set for any provider: it
 * points the provider at a self-hosted instance (searxng, firecrawl) or a
 * fake in the tests, and such a request is trusted as a model provider's.
 * Answers show secrets as ENGINE_SECRET_MASK, which an update keeps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/records/records.h"
#include "engine/tools/tools.h"

#define TC_PREFIX	"tool_credentials/"
#define TC_MAX_VALUE	(64 * 1024)

/* ====== The provider a name gives ====== */

/*
 * The provider name records are kept under for id (a manifest's name, or
 * a native provider's), and its manifest (NULL for a native one). 0, or
 * ENGINE_ENOTFOUND when flowcgi has no such built-in provider.
 */
static int
provider_of(struct engine *e, const char *id, const char **name,
    const struct tool_manifest **m)
{
	const struct tool_provider *p;

	*m = tool_manifest_find(e, id);
	if (*m != NULL) {
		*name = (*m)->name;
		return 0;
	}
	p = tool_provider_find(id, "builtin");
	if (p == NULL)
		return ENGINE_ENOTFOUND;
	*name = p->name;
	return 0;
}

static const json_t *
schema_of(const struct tool_manifest *m)
{
	return m ? json_object_get(m->doc, "credentials_for_provider") : NULL;
}

static int
is_secret(const struct tool_manifest *m, const char *key)
{
	const char *t = json_string_value(json_object_get(json_object_get(
	    schema_of(m), key), "type"));

	return t != NULL && strcmp(t, "secret-input") == 0;
}

static void
key_of(const char *name, char *buf, size_t n)
{
	snprintf(buf, n, TC_PREFIX "%s", name);
}

static void
aad_of(const char *name, const char *key, char *buf, size_t n)
{
	snprintf(buf, n, TC_PREFIX "%s/%s", name, key);
}

static int
load(struct engine *e, const char *name, json_t **out)
{
	struct store_txn	*t = NULL;
	char			 key[200];
	int			 rc;

	*out = NULL;
	key_of(name, key, sizeof(key));
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	rc = store_get_json(t, STORE_DB_SETTINGS, key, out);
	store_read_end(t);
	if (rc == STORE_ENOTFOUND)
		return 0;
	return engine_from_store(rc);
}

/* ====== Opened, for a call ====== */

int
tool_credentials_open(struct engine *e, const char *id, char *err,
    json_t **out)
{
	const struct tool_manifest	*m;
	const char			*name, *k;
	json_t				*rec = NULL, *creds = NULL, *v;
	char				 aad[300], *plain = NULL;
	int				 rc;

	*out = NULL;
	if (provider_of(e, id, &name, &m) != 0)
		return 0;
	if ((rc = load(e, name, &rec)) != 0) {
		engine_invalid(err, "the credentials of tool provider '%s' "
		    "cannot be read now", name);
		goto out;
	}
	if (rec == NULL)
		goto out;
	if ((creds = json_object()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	json_object_foreach(json_object_get(rec, "credentials"), k, v) {
		if (is_secret(m, k) && json_is_string(v) &&
		    json_string_length(v) > 0) {
			aad_of(name, k, aad, sizeof(aad));
			if ((rc = secret_decrypt(e, aad, json_string_value(v),
			    err, &plain)) != 0)
				goto out;
			rc = json_object_set_new(creds, k, json_string(plain)) ?
			    ENGINE_ENOMEM : 0;
			secret_free(plain);
			plain = NULL;
			if (rc != 0)
				goto out;
		} else if (json_object_set(creds, k, v) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	}
	*out = creds;
	creds = NULL;
out:
	json_decref(rec);
	json_decref(creds);
	return rc;
}

/* ====== The console's view ====== */

int
engine_tool_credentials_get(struct engine *e, const char *id, json_t **out)
{
	const struct tool_manifest	*m;
	const char			*name, *k;
	json_t				*rec = NULL, *v, *view = NULL;
	int				 rc;

	*out = NULL;
	if ((rc = provider_of(e, id, &name, &m)) != 0)
		return rc;
	if ((rc = load(e, name, &rec)) != 0)
		return rc;
	if ((view = json_object()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	json_object_foreach(json_object_get(rec, "credentials"), k, v)
		if (json_object_set_new(view, k, is_secret(m, k) &&
		    json_string_length(v) > 0 ? json_string(ENGINE_SECRET_MASK) :
		    json_deep_copy(v)) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	*out = view;
	view = NULL;
out:
	json_decref(rec);
	json_decref(view);
	return rc;
}

int
engine_tool_credentials_set(struct engine *e, const char *id)
{
	const struct tool_manifest	*m;
	const char			*name;
	json_t				*rec = NULL;
	int				 set;

	if (provider_of(e, id, &name, &m) != 0 || load(e, name, &rec) != 0)
		return 0;
	set = rec != NULL;
	json_decref(rec);
	return set;
}

/* ====== Update and delete ====== */

struct tc_put {
	const char	*key;
	json_t		*rec;
};

static int
tc_put_fn(struct store_txn *t, void *arg)
{
	struct tc_put *p = arg;

	int rc;

	if (p->rec == NULL) {
		rc = store_del(t, STORE_DB_SETTINGS, p->key, strlen(p->key));
		return rc == STORE_ENOTFOUND ? 0 : rc;
	}
	return store_put_json(t, STORE_DB_SETTINGS, p->key, p->rec, 0);
}

int
engine_tool_credentials_put(struct engine *e, const char *id,
    const json_t *in, char *err)
{
	const struct tool_manifest	*m;
	const json_t			*schema, *c, *old_creds;
	struct tc_put			 p;
	const char			*name, *k, *s;
	json_t				*old = NULL, *creds = NULL, *v;
	char				 key[200], aad[300], *sealed = NULL;
	int				 rc;

	memset(&p, 0, sizeof(p));
	if ((rc = provider_of(e, id, &name, &m)) != 0) {
		engine_invalid(err, "flowcgi has no built-in tool provider "
		    "'%s'", id);
		return rc;
	}
	if (!json_is_object(in))
		return engine_invalid(err, "credentials: must be an object");
	schema = schema_of(m);
	if ((rc = load(e, name, &old)) != 0)
		return rc;
	old_creds = json_object_get(old, "credentials");
	if ((creds = json_object()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	json_object_foreach((json_t *)in, k, v) {
		/* a native provider (no manifest) takes any key, none
		 * secret: rookie_rss's daily_hot_url */
		if (m != NULL && json_object_get(schema, k) == NULL &&
		    strcmp(k, "base_url") != 0) {
			rc = engine_invalid(err, "credentials.%s: tool provider "
			    "'%s' has no such credential", k, name);
			goto out;
		}
		if (json_is_null(v))
			continue;
		if (!json_is_string(v) && !json_is_number(v) &&
		    !json_is_boolean(v)) {
			rc = engine_invalid(err, "credentials.%s: must be text",
			    k);
			goto out;
		}
		s = json_string_value(v);
		if (s != NULL && (json_string_length(v) > TC_MAX_VALUE ||
		    strlen(s) != json_string_length(v))) {
			rc = engine_invalid(err, "credentials.%s: at most %d "
			    "bytes, no NUL", k, TC_MAX_VALUE);
			goto out;
		}
		if (strcmp(k, "base_url") == 0 && s != NULL && *s != '\0' &&
		    strncmp(s, "http://", 7) != 0 &&
		    strncmp(s, "https://", 8) != 0) {
			rc = engine_invalid(err, "credentials.base_url: an "
			    "http(s) URL");
			goto out;
		}
		if (is_secret(m, k) && s != NULL && strcmp(s,
		    ENGINE_SECRET_MASK) == 0) {
			/* the masked value an answer gave: keep the stored one */
			if (json_object_get(old_creds, k) != NULL &&
			    json_object_set(creds, k, json_object_get(old_creds,
			    k)) != 0) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
			continue;
		}
		if (is_secret(m, k) && s != NULL && *s != '\0') {
			aad_of(name, k, aad, sizeof(aad));
			if ((rc = secret_encrypt(e, aad, s, err, &sealed)) != 0)
				goto out;
			rc = json_object_set_new(creds, k, json_string(sealed)) ?
			    ENGINE_ENOMEM : 0;
			free(sealed);
			sealed = NULL;
			if (rc != 0)
				goto out;
		} else if (json_object_set(creds, k, v) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	}
	json_object_foreach((json_t *)schema, k, c) {
		v = json_object_get(creds, k);
		if (json_is_true(json_object_get(c, "required")) && (v == NULL ||
		    (json_is_string(v) && json_string_length(v) == 0))) {
			rc = engine_invalid(err, "credentials.%s: required (%s)",
			    k, tool_manifest_label(json_object_get(c, "label"),
			    k));
			goto out;
		}
	}
	key_of(name, key, sizeof(key));
	p.key = key;
	if ((p.rec = json_pack("{s:s,s:O,s:I}", "provider", name,
	    "credentials", creds, "updated_at", (json_int_t)engine_now())) ==
	    NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	rc = engine_from_store(store_write(e->store, tc_put_fn, &p));
out:
	json_decref(p.rec);
	json_decref(old);
	json_decref(creds);
	return rc;
}

int
engine_tool_credentials_delete(struct engine *e, const char *id)
{
	const struct tool_manifest	*m;
	struct tc_put			 p;
	const char			*name;
	char				 key[200];
	int				 rc;

	if ((rc = provider_of(e, id, &name, &m)) != 0)
		return rc;
	key_of(name, key, sizeof(key));
	p.key = key;
	p.rec = NULL;
	return engine_from_store(store_write(e->store, tc_put_fn, &p));
}

/* ====== Test ====== */

int
engine_tool_credentials_test(struct engine *e, const char *id,
    const json_t *in, char *err)
{
	const struct tool_manifest	*m;
	const json_t			*test;
	struct tool_result		 res;
	struct tool_call		 call;
	const char			*name, *k;
	json_t				*creds = NULL, *v;
	int				 rc;

	memset(&res, 0, sizeof(res));
	if ((rc = provider_of(e, id, &name, &m)) != 0)
		return rc;
	test = m ? json_object_get(m->doc, "test") : NULL;
	if (test == NULL)
		return engine_invalid(err, "tool provider '%s' has no test "
		    "call", name);
	if ((rc = tool_credentials_open(e, name, err, &creds)) != 0)
		return rc;
	if (creds == NULL && (creds = json_object()) == NULL)
		return ENGINE_ENOMEM;
	/* the values being tried, over the stored ones (a masked secret
	 * stands for the stored one) */
	json_object_foreach((json_t *)in, k, v)
		if (!(json_is_string(v) && strcmp(json_string_value(v),
		    ENGINE_SECRET_MASK) == 0) && json_object_set(creds, k, v) !=
		    0) {
			json_decref(creds);
			return ENGINE_ENOMEM;
		}
	if (json_is_true(json_object_get(test, "steps"))) {
		rc = tool_manifest_test_steps(e, m, creds, err);
		json_decref(creds);
		return rc;
	}
	memset(&call, 0, sizeof(call));
	call.provider = name;
	call.provider_type = "builtin";
	call.tool = json_string_value(json_object_get(test, "tool"));
	call.params = json_object_get(test, "parameters");
	call.credentials = creds;
	rc = tool_invoke(e, &call, err, &res);
	tool_result_release(&res);
	json_decref(creds);
	return rc;
}
