/*
 * providers.c — model provider entries: which endpoint, protocol and key
 * serve a DSL's model.provider; and the console's list / set / delete /
 * test of them.
 *
 * Stored entries live in the settings database under "model_providers":
 * {providers: {name: {protocol, base_url, api_key ("v1:..." encrypted with
 * aad "model_providers/<name>", or ""), models: [...], updated_at}}}.
 * Built-in entries come from the table below and the environment; the
 * catch-all "*" from storage or the llm.base_url setting.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "engine/llm/llm.h"

#define SETTINGS_KEY	"model_providers"
#define MAX_MODELS	1000
#define MAX_MODEL_NAME	256

/* ====== Built-in entries ====== */

/*
 * Providers with a well-known OpenAI-compatible (or Anthropic) endpoint.
 * <env>_API_KEY and <env>_BASE_URL configure one; an entry with
 * needs_key is only used when one of them is set.
 */
struct builtin {
	const char	*name;
	const char	*protocol;
	const char	*base_url;
	const char	*env;
	int		 needs_key;
};

static const struct builtin builtins[] = {
	{ "openai", "openai", "https://api.openai.com/v1", "OPENAI", 1 },
	{ "anthropic", "anthropic", "https://api.anthropic.com", "ANTHROPIC",
	    1 },
	{ "ollama", "openai", "http://127.0.0.1:11434/v1", "OLLAMA", 0 },
	{ "deepseek", "openai", "https://api.deepseek.com/v1", "DEEPSEEK", 1 },
	{ "siliconflow", "openai", "https://api.siliconflow.cn/v1",
	    "SILICONFLOW", 1 },
	{ "groq", "openai", "https://api.groq.com/openai/v1", "GROQ", 1 },
	{ "openrouter", "openai", "https://openrouter.ai/api/v1", "OPENROUTER",
	    1 },
	{ "moonshot", "openai", "https://api.moonshot.cn/v1", "MOONSHOT", 1 },
	{ "google", "openai",
	    "https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI",
	    1 },
};
#define NBUILTINS (sizeof(builtins) / sizeof(*builtins))

static const struct builtin *
builtin_find(const char *name)
{
	size_t i;

	for (i = 0; i < NBUILTINS; i++)
		if (strcmp(builtins[i].name, name) == 0)
			return &builtins[i];
	return NULL;
}

/* The environment variable <env>_<what>, or NULL when unset or empty. */
static const char *
builtin_env(const struct builtin *b, const char *what)
{
	char		 var[64];
	const char	*v;

	snprintf(var, sizeof(var), "%s_%s", b->env, what);
	v = getenv(var);
	return v != NULL && *v != '\0' ? v : NULL;
}

static int
builtin_configured(const struct builtin *b)
{
	return !b->needs_key || builtin_env(b, "API_KEY") != NULL ||
	    builtin_env(b, "BASE_URL") != NULL;
}

/* Fills out's fixed-size fields (api_key is the caller's). */
static void
endpoint_set(struct llm_endpoint *out, const char *name,
    const char *protocol, const char *base_url, const char *source)
{
	snprintf(out->name, sizeof(out->name), "%s", name);
	snprintf(out->protocol, sizeof(out->protocol), "%s", protocol);
	snprintf(out->base_url, sizeof(out->base_url), "%s", base_url);
	snprintf(out->source, sizeof(out->source), "%s", source);
}

static int
builtin_fill(const struct builtin *b, struct llm_endpoint *out)
{
	const char *url = builtin_env(b, "BASE_URL");
	const char *key = builtin_env(b, "API_KEY");

	endpoint_set(out, b->name, b->protocol,
	    url != NULL ? url : b->base_url,
	    url != NULL || key != NULL ? "environment" : "default");
	out->api_key = strdup(key != NULL ? key : "");
	return out->api_key != NULL ? 0 : ENGINE_ENOMEM;
}

/* ====== Stored entries ====== */

void
llm_endpoint_release(struct llm_endpoint *ep)
{
	secret_free(ep->api_key);
	memset(ep, 0, sizeof(*ep));
}

/* s, or def when s is NULL. */
static const char *
str_or(const char *s, const char *def)
{
	return s != NULL ? s : def;
}

const char *
llm_provider_name(const char *dsl_provider, char *buf, size_t bufsz)
{
	const char *s = dsl_provider != NULL ? dsl_provider : "";
	const char *slash = strrchr(s, '/');

	snprintf(buf, bufsz, "%s", slash != NULL ? slash + 1 : s);
	return buf;
}

/* The stored {name: entry} object (empty when none); new reference. */
static int
stored_load(struct engine *e, json_t **out)
{
	struct store_txn	*t = NULL;
	json_t			*rec = NULL, *p;
	int			 rc;

	*out = NULL;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		goto out;
	rc = store_get_json(t, STORE_DB_SETTINGS, SETTINGS_KEY, &rec);
	if (rc == STORE_ENOTFOUND)
		rc = 0;
	if (rc != 0)
		goto out;
	p = json_object_get(rec, "providers");
	*out = json_is_object(p) ? json_incref(p) : json_object();
	rc = *out != NULL ? 0 : STORE_ENOMEM;
out:
	if (t != NULL)
		store_read_end(t);
	json_decref(rec);
	return engine_from_store(rc);
}

/* Fills out from stored entry ent of name, decrypting its key. */
static int
stored_fill(struct engine *e, const char *name, const json_t *ent,
    char *err, struct llm_endpoint *out)
{
	const char	*enc = json_string_value(json_object_get(ent,
			    "api_key"));
	const char	*proto = json_string_value(json_object_get(ent,
			    "protocol"));
	const char	*url = json_string_value(json_object_get(ent,
			    "base_url"));
	char		 aad[128], why[ENGINE_ERRMAX];
	int		 rc;

	endpoint_set(out, name, str_or(proto, "openai"), str_or(url, ""),
	    "settings");
	if (enc == NULL || *enc == '\0') {
		out->api_key = strdup("");
		rc = out->api_key != NULL ? 0 : ENGINE_ENOMEM;
	} else {
		snprintf(aad, sizeof(aad), SETTINGS_KEY "/%s", name);
		rc = secret_decrypt(e, aad, enc, err, &out->api_key);
		if (rc == ENGINE_EINVAL) {
			snprintf(why, sizeof(why), "%s", err);
			engine_invalid(err, "the API key of model provider "
			    "'%s': %s; set it again in Settings > Model "
			    "Providers", name, why);
		}
	}
	return rc;
}

/* 1 when stored entry ent lists no models or lists model. */
static int
serves_model(const json_t *ent, const char *model)
{
	const json_t	*models = json_object_get(ent, "models"), *m;
	size_t		 i;

	if (!json_is_array(models) || json_array_size(models) == 0 ||
	    model == NULL)
		return 1;
	json_array_foreach(models, i, m)
		if (json_is_string(m) &&
		    strcmp(json_string_value(m), model) == 0)
			return 1;
	return 0;
}

/* The catch-all from the llm.base_url setting. */
static int
config_fill(struct engine *e, struct llm_endpoint *out)
{
	const struct conf *c = e->conf;

	endpoint_set(out, "*", "openai", c->llm_base_url, "config");
	out->api_key = strdup(c->llm_api_key);
	return out->api_key != NULL ? 0 : ENGINE_ENOMEM;
}

int
llm_provider_lookup(struct engine *e, const char *name, char *err,
    struct llm_endpoint *out)
{
	json_t			*stored = NULL, *ent;
	const struct builtin	*b;
	int			 rc;

	memset(out, 0, sizeof(*out));
	if ((rc = stored_load(e, &stored)) != 0)
		goto out;
	if ((ent = json_object_get(stored, name)) != NULL)
		rc = stored_fill(e, name, ent, err, out);
	else if ((b = builtin_find(name)) != NULL)
		rc = builtin_fill(b, out);
	else if (strcmp(name, "*") == 0 && e->conf->llm_base_url[0] != '\0')
		rc = config_fill(e, out);
	else
		rc = ENGINE_ENOTFOUND;
out:
	json_decref(stored);
	if (rc != 0)
		llm_endpoint_release(out);
	return rc;
}

int
llm_provider_resolve(struct engine *e, const char *dsl_provider,
    const char *model, char *err, struct llm_endpoint *out)
{
	json_t			*stored = NULL, *ent;
	const struct builtin	*b;
	char			 name[256];
	int			 rc;

	memset(out, 0, sizeof(*out));
	llm_provider_name(dsl_provider, name, sizeof(name));
	if (name[0] == '\0') {
		rc = engine_invalid(err, "the node names no model provider "
		    "(model.provider)");
		goto out;
	}
	if ((rc = stored_load(e, &stored)) != 0)
		goto out;
	if ((ent = json_object_get(stored, name)) != NULL) {
		if (!serves_model(ent, model)) {
			rc = engine_invalid(err, "model provider '%s' does "
			    "not serve model '%s': add it to the entry's "
			    "models in Settings > Model Providers", name,
			    model);
			goto out;
		}
		rc = stored_fill(e, name, ent, err, out);
		goto out;
	}
	/* a built-in that needs no key (ollama) is configured by its
	 * environment; its default local address only serves when no
	 * catch-all does (llm.base_url, a stored '*') */
	if ((b = builtin_find(name)) != NULL && (b->needs_key ?
	    builtin_configured(b) : builtin_env(b, "API_KEY") != NULL ||
	    builtin_env(b, "BASE_URL") != NULL)) {
		rc = builtin_fill(b, out);
		goto out;
	}
	if ((ent = json_object_get(stored, "*")) != NULL &&
	    serves_model(ent, model)) {
		rc = stored_fill(e, "*", ent, err, out);
		goto out;
	}
	if (ent == NULL && e->conf->llm_base_url[0] != '\0') {
		rc = config_fill(e, out);
		goto out;
	}
	if (b != NULL && !b->needs_key) {
		rc = builtin_fill(b, out);
		goto out;
	}
	if (b != NULL)
		rc = engine_invalid(err, "no model provider '%s' is "
		    "configured: set %s_API_KEY (or %s_BASE_URL) in "
		    "flowcgi's environment, add '%s' in Settings > Model "
		    "Providers, or set llm.base_url", name, b->env, b->env,
		    name);
	else
		rc = engine_invalid(err, "no model provider '%s' is "
		    "configured: add it in Settings > Model Providers (or a "
		    "catch-all '*' entry, or set llm.base_url / "
		    "OPENAI_BASE_URL to an OpenAI-compatible endpoint)", name);
out:
	json_decref(stored);
	if (rc != 0)
		llm_endpoint_release(out);
	return rc;
}

/* ====== Console: list ====== */

static json_t *
entry_view(const char *name, const char *protocol, const char *base_url,
    int has_key, const json_t *models, const char *source, int configured,
    int builtin)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:O, s:s, s:b, s:b}",
	    "name", name, "protocol", protocol, "base_url", base_url,
	    "api_key", has_key ? ENGINE_SECRET_MASK : "",
	    "models", models, "source", source, "configured", configured,
	    "builtin", builtin);
}

static json_t *
stored_view(const char *name, const json_t *ent)
{
	const json_t	*models = json_object_get(ent, "models");
	const char	*key = json_string_value(json_object_get(ent,
			    "api_key"));
	json_t		*none = NULL, *v;

	if (!json_is_array(models))
		models = none = json_array();
	v = entry_view(name,
	    str_or(json_string_value(json_object_get(ent, "protocol")),
	    "openai"),
	    str_or(json_string_value(json_object_get(ent, "base_url")), ""),
	    key != NULL && *key != '\0', models, "settings", 1,
	    builtin_find(name) != NULL);
	json_decref(none);
	return v;
}

/* The keys of obj in byte order (malloc'd array; the strings are obj's). */
static const char **
sorted_keys(json_t *obj, size_t *n)
{
	const char	**keys, *t;
	void		 *it;
	size_t		  k = 0, a, b;

	if ((keys = calloc(json_object_size(obj) + 1, sizeof(*keys))) == NULL)
		return NULL;
	for (it = json_object_iter(obj); it != NULL;
	     it = json_object_iter_next(obj, it))
		keys[k++] = json_object_iter_key(it);
	for (a = 1; a < k; a++)
		for (b = a; b > 0 && strcmp(keys[b - 1], keys[b]) > 0; b--) {
			t = keys[b];
			keys[b] = keys[b - 1];
			keys[b - 1] = t;
		}
	*n = k;
	return keys;
}

int
engine_model_provider_list(struct engine *e, json_t **out)
{
	json_t			*stored = NULL, *data = NULL, *v;
	json_t			*empty = NULL;
	const json_t		*ent;
	const char		**keys = NULL;
	struct llm_endpoint	 ep;
	size_t			 i, k, n;
	int			 rc;

	*out = NULL;
	memset(&ep, 0, sizeof(ep));
	if ((rc = stored_load(e, &stored)) != 0)
		goto out;
	rc = ENGINE_ENOMEM;
	if ((data = json_array()) == NULL || (empty = json_array()) == NULL)
		goto out;
	if ((keys = sorted_keys(stored, &n)) == NULL)
		goto out;
	for (k = 0; k < n; k++) {
		ent = json_object_get(stored, keys[k]);
		if ((v = stored_view(keys[k], ent)) == NULL ||
		    json_array_append_new(data, v) != 0)
			goto out;
	}
	for (i = 0; i < NBUILTINS; i++) {
		if (json_object_get(stored, builtins[i].name) != NULL)
			continue;
		if (builtin_fill(&builtins[i], &ep) != 0)
			goto out;
		v = entry_view(ep.name, ep.protocol, ep.base_url,
		    ep.api_key[0] != '\0', empty, ep.source,
		    builtin_configured(&builtins[i]), 1);
		llm_endpoint_release(&ep);
		if (v == NULL || json_array_append_new(data, v) != 0)
			goto out;
	}
	if (json_object_get(stored, "*") == NULL &&
	    e->conf->llm_base_url[0] != '\0') {
		v = entry_view("*", "openai", e->conf->llm_base_url,
		    e->conf->llm_api_key[0] != '\0', empty, "config", 1, 0);
		if (v == NULL || json_array_append_new(data, v) != 0)
			goto out;
	}
	if ((*out = json_pack("{s:O}", "data", data)) == NULL)
		goto out;
	rc = 0;
out:
	llm_endpoint_release(&ep);
	free(keys);
	json_decref(stored);
	json_decref(data);
	json_decref(empty);
	return rc;
}

/* ====== Console: set and delete ====== */

static int
name_valid(const char *name)
{
	size_t n = strlen(name), i;

	if (strcmp(name, "*") == 0)
		return 1;
	if (n == 0 || n > 64)
		return 0;
	for (i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		    (name[i] >= 'A' && name[i] <= 'Z') ||
		    (name[i] >= '0' && name[i] <= '9') || name[i] == '_' ||
		    name[i] == '-' || name[i] == '.'))
			return 0;
	return 1;
}

static int
url_valid(const char *url)
{
	size_t i, n = strlen(url);

	if (strncmp(url, "http://", 7) != 0 &&
	    strncmp(url, "https://", 8) != 0)
		return 0;
	if (n >= 1000 || n <= 8)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)url[i] <= 0x20 || url[i] == 0x7f)
			return 0;
	return 1;
}

struct set_arg {
	const char	*name;
	json_t		*ent;		/* the new entry, without its key */
	const char	*enc_new;	/* encrypted new key, or NULL */
	const char	*enc_current;	/* kept key not stored yet */
	int		 keep;		/* the mask was sent back */
};

static int
set_tx(struct store_txn *t, void *arg)
{
	struct set_arg	*a = arg;
	json_t		*rec = NULL, *prov, *old;
	const char	*key = "";
	int		 rc;

	rc = store_get_json(t, STORE_DB_SETTINGS, SETTINGS_KEY, &rec);
	if (rc == STORE_ENOTFOUND) {
		rc = 0;
		rec = json_object();
	}
	if (rc != 0 || rec == NULL) {
		rc = rc != 0 ? rc : STORE_ENOMEM;
		goto out;
	}
	prov = json_object_get(rec, "providers");
	if (!json_is_object(prov)) {
		prov = json_object();
		if (json_object_set_new(rec, "providers", prov) != 0) {
			rc = STORE_ENOMEM;
			goto out;
		}
	}
	old = json_object_get(prov, a->name);
	if (!a->keep)
		key = a->enc_new != NULL ? a->enc_new : "";
	else if (old != NULL)
		key = str_or(json_string_value(json_object_get(old,
		    "api_key")), "");
	else
		key = a->enc_current != NULL ? a->enc_current : "";
	if (json_object_set_new(a->ent, "api_key", json_string(key)) != 0 ||
	    json_object_set(prov, a->name, a->ent) != 0) {
		rc = STORE_ENOMEM;
		goto out;
	}
	rc = store_put_json(t, STORE_DB_SETTINGS, SETTINGS_KEY, rec, 0);
out:
	json_decref(rec);
	return rc;
}

int
engine_model_provider_set(struct engine *e, const char *name,
    const json_t *in, char *err, json_t **out)
{
	struct set_arg		 a;
	struct llm_endpoint	 cur;
	json_t			*models = NULL, *m;
	const json_t		*jm;
	const char		*proto, *url, *key;
	char			 aad[128];
	char			*enc_new = NULL, *enc_cur = NULL;
	size_t			 i;
	int			 rc;

	*out = NULL;
	memset(&a, 0, sizeof(a));
	memset(&cur, 0, sizeof(cur));
	if (!name_valid(name)) {
		rc = engine_invalid(err, "name: 1 to 64 letters, digits, '_', "
		    "'-' or '.', or '*' for the catch-all");
		goto out;
	}
	if (!json_is_object(in)) {
		rc = engine_invalid(err, "expected a JSON object");
		goto out;
	}
	proto = json_string_value(json_object_get(in, "protocol"));
	if (json_object_get(in, "protocol") != NULL && proto == NULL) {
		rc = engine_invalid(err, "protocol: expected a string");
		goto out;
	}
	if (proto == NULL || *proto == '\0')
		proto = "openai";
	if (llm_protocol_find(proto) == NULL) {
		rc = engine_invalid(err, "protocol: openai or anthropic");
		goto out;
	}
	url = json_string_value(json_object_get(in, "base_url"));
	if (url == NULL || !url_valid(url)) {
		rc = engine_invalid(err, "base_url: an http:// or https:// "
		    "URL of at most 999 bytes is required");
		goto out;
	}
	jm = json_object_get(in, "api_key");
	key = json_string_value(jm);
	if (jm != NULL && !json_is_null(jm) && key == NULL) {
		rc = engine_invalid(err, "api_key: expected a string");
		goto out;
	}
	if (key != NULL && strlen(key) > 4096) {
		rc = engine_invalid(err, "api_key: longer than 4096 bytes");
		goto out;
	}
	a.keep = key == NULL || strcmp(key, ENGINE_SECRET_MASK) == 0;
	if ((models = json_array()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	jm = json_object_get(in, "models");
	if (jm != NULL && !json_is_null(jm)) {
		if (!json_is_array(jm) || json_array_size(jm) > MAX_MODELS) {
			rc = engine_invalid(err, "models: expected an array of "
			    "at most %d model names", MAX_MODELS);
			goto out;
		}
		json_array_foreach(jm, i, m) {
			if (!json_is_string(m) ||
			    json_string_length(m) == 0 ||
			    json_string_length(m) > MAX_MODEL_NAME) {
				rc = engine_invalid(err, "models[%zu]: "
				    "expected a model name of 1 to %d bytes",
				    i, MAX_MODEL_NAME);
				goto out;
			}
			if (json_array_append(models, m) != 0) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
		}
	}
	snprintf(aad, sizeof(aad), SETTINGS_KEY "/%s", name);
	if (!a.keep && *key != '\0' &&
	    (rc = secret_encrypt(e, aad, key, err, &enc_new)) != 0)
		goto out;
	/* The mask for an entry not stored yet keeps the key it has now
	 * (from the environment or the config file). */
	if (a.keep && llm_provider_lookup(e, name, err, &cur) == 0 &&
	    strcmp(cur.source, "settings") != 0 && cur.api_key[0] != '\0' &&
	    (rc = secret_encrypt(e, aad, cur.api_key, err, &enc_cur)) != 0)
		goto out;
	err[0] = '\0';
	a.name = name;
	a.enc_new = enc_new;
	a.enc_current = enc_cur;
	a.ent = json_pack("{s:s, s:s, s:O, s:I}", "protocol", proto,
	    "base_url", url, "models", models, "updated_at",
	    (json_int_t)engine_now());
	if (a.ent == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = engine_from_store(store_write(e->store, set_tx, &a))) != 0)
		goto out;
	if ((*out = stored_view(name, a.ent)) == NULL)
		rc = ENGINE_ENOMEM;
	log_info("model provider '%s' set (%s, %s)", name, proto, url);
out:
	llm_endpoint_release(&cur);
	json_decref(models);
	json_decref(a.ent);
	free(enc_new);
	free(enc_cur);
	return rc;
}

static int
delete_tx(struct store_txn *t, void *arg)
{
	const char	*name = arg;
	json_t		*rec = NULL, *prov;
	int		 rc;

	if ((rc = store_get_json(t, STORE_DB_SETTINGS, SETTINGS_KEY, &rec))
	    != 0)
		goto out;
	prov = json_object_get(rec, "providers");
	if (json_object_get(prov, name) == NULL) {
		rc = STORE_ENOTFOUND;
		goto out;
	}
	json_object_del(prov, name);
	rc = store_put_json(t, STORE_DB_SETTINGS, SETTINGS_KEY, rec, 0);
out:
	json_decref(rec);
	return rc;
}

int
engine_model_provider_delete(struct engine *e, const char *name)
{
	int rc;

	rc = engine_from_store(store_write(e->store, delete_tx,
	    (void *)name));
	if (rc == 0)
		log_info("model provider '%s' deleted", name);
	return rc;
}

/* ====== The first model of a provider ====== */

int
llm_provider_first_model(struct engine *e, const char *name, char *buf,
    size_t bufsz)
{
	json_t		*stored = NULL;
	const char	*m;
	int		 rc;

	buf[0] = '\0';
	if ((rc = stored_load(e, &stored)) != 0)
		return rc;
	m = json_string_value(json_array_get(json_object_get(json_object_get(
	    stored, name), "models"), 0));
	if (m != NULL && strlen(m) < bufsz)
		memcpy(buf, m, strlen(m) + 1);
	json_decref(stored);
	return 0;
}
