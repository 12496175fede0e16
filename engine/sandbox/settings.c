/*
 * settings.c — sandbox provider settings: which provider runs commands and
 * each provider's config, as Dify's console shows them
 * (/workspaces/current/sandbox-providers), and sandbox_active for runs.
 *
 * Stored in the settings database under "sandbox_providers":
 *	{active: "<type>", providers: {<type>: {config: {plain fields},
 *	 secrets: {field: "v1:..."}, updated_at}}}
 * Secrets are encrypted with secret_encrypt (aad
 * "sandbox_providers/<type>/<field>"), listed as ENGINE_SECRET_MASK, never
 * logged; a secret sent back as the mask keeps its stored value.
 *
 * The providers offered are those of the registry (sandbox.c), in its
 * order, each with the config fields of its table; local needs no config
 * and is the default.
 * Saving validates by connecting: the provider's own create, exec `true`
 * and destroy, so a wrong config is refused with the provider's message.
 * Before that, the provider's check (struct sandbox_provider): docker
 * checks the engine and the image, and Test connection answers what it
 * found; ssh, when no host key is pinned for the host and port
 * (ssh_host_key empty or the host changed), scans it first (trust on
 * first use, by the admin's action); afterwards a different server key is
 * refused until the admin clears ssh_host_key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sandbox/sandbox.h"

#define SETTINGS_KEY	"sandbox_providers"
#define VALUE_MAX	16384

/* ====== Storage ====== */

/* The stored record ({} when none); new reference. */
static int
record_load(struct engine *e, json_t **out)
{
	struct store_txn	*t = NULL;
	json_t			*rec = NULL;
	int			 rc;

	*out = NULL;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		goto out;
	rc = store_get_json(t, STORE_DB_SETTINGS, SETTINGS_KEY, &rec);
	if (rc == STORE_ENOTFOUND) {
		rc = 0;
		rec = json_object();
	}
	if (rc == 0 && !json_is_object(rec)) {
		json_decref(rec);
		rec = json_object();
	}
	if (rc == 0 && rec == NULL)
		rc = STORE_ENOMEM;
	if (rc == 0) {
		*out = rec;
		rec = NULL;
	}
out:
	if (t != NULL)
		store_read_end(t);
	json_decref(rec);
	return engine_from_store(rc);
}

/* The stored entry of type in rec, or NULL (borrowed). */
static json_t *
entry_of(json_t *rec, const char *type)
{
	json_t *e = json_object_get(json_object_get(rec, "providers"), type);

	return json_is_object(e) ? e : NULL;
}

static const char *
active_of(json_t *rec)
{
	const char *a = json_string_value(json_object_get(rec, "active"));

	return a != NULL && sandbox_provider_find(a) != NULL ? a : "local";
}

/*
 * The stored config of entry ent with secrets decrypted: a new object of
 * the schema's fields. Returns 0 or a secret_decrypt error.
 */
static int
entry_config(struct engine *e, const struct sandbox_provider *s, json_t *ent,
    char *err, json_t **out)
{
	json_t		*cfg = NULL, *v;
	const char	*enc;
	char		 aad[128], *plain = NULL;
	size_t		 i;
	int		 rc = 0;

	*out = NULL;
	if ((cfg = json_object()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	for (i = 0; i < s->nfields; i++) {
		if (strcmp(s->fields[i].type, "secret-input") == 0) {
			enc = json_string_value(json_object_get(
			    json_object_get(ent, "secrets"), s->fields[i].name));
			if (enc == NULL || enc[0] == '\0')
				continue;
			snprintf(aad, sizeof(aad), "sandbox_providers/%s/%s",
			    s->name, s->fields[i].name);
			if ((rc = secret_decrypt(e, aad, enc, err, &plain))
			    != 0) {
				/* err never holds the secret */
				goto out;
			}
			rc = json_object_set_new(cfg, s->fields[i].name,
			    json_string(plain)) != 0 ? ENGINE_ENOMEM : 0;
			secret_free(plain);
			plain = NULL;
			if (rc != 0)
				goto out;
		} else if ((v = json_object_get(json_object_get(ent, "config"),
		    s->fields[i].name)) != NULL &&
		    json_object_set(cfg, s->fields[i].name, v) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	}
	*out = cfg;
	cfg = NULL;
out:
	json_decref(cfg);
	return rc;
}

/* ====== Listing ====== */

static json_t *
schema_view(const struct sandbox_provider *s)
{
	json_t	*arr = json_array(), *f;
	size_t	 i;

	for (i = 0; arr != NULL && i < s->nfields; i++) {
		f = json_pack("{s:s, s:s, s:b, s:o, s:{s:s, s:s}}", "type",
		    s->fields[i].type, "name", s->fields[i].name, "required",
		    s->fields[i].required, "default", s->fields[i].def ?
		    json_string(s->fields[i].def) : json_null(), "label",
		    "en_US", s->fields[i].label, "zh_Hans", s->fields[i].label);
		if (f == NULL || json_array_append_new(arr, f) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	return arr;
}

int
engine_sandbox_provider_list(struct engine *e, json_t **out)
{
	const struct sandbox_provider	*p;
	json_t				*rec = NULL, *arr = NULL, *ent, *cfg;
	json_t				*item, *v;
	const char			*active, *key;
	size_t				 i, k;
	int				 rc;

	*out = NULL;
	if ((rc = record_load(e, &rec)) != 0)
		goto out;
	active = active_of(rec);
	if ((arr = json_array()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	for (i = 0; (p = sandbox_provider_at(i)) != NULL; i++) {
		ent = entry_of(rec, p->name);
		cfg = json_object();
		/* Plain fields as stored; secrets only as the mask. */
		for (k = 0; cfg != NULL && ent != NULL && k < p->nfields;
		    k++) {
			key = p->fields[k].name;
			if (strcmp(p->fields[k].type, "secret-input")
			    == 0)
				v = json_object_get(json_object_get(ent,
				    "secrets"), key) ? json_string(
				    ENGINE_SECRET_MASK) : NULL;
			else
				v = json_incref(json_object_get(
				    json_object_get(ent, "config"), key));
			if (v != NULL && json_object_set_new(cfg, key, v) !=
			    0) {
				json_decref(cfg);
				cfg = NULL;	/* item fails: ENOMEM */
			}
		}
		item = json_pack("{s:s, s:b, s:b, s:b, s:o, s:o}",
		    "provider_type", p->name, "is_system_configured",
		    strcmp(p->name, "local") == 0, "is_tenant_configured",
		    ent != NULL, "is_active", strcmp(active, p->name) ==
		    0, "config", cfg, "config_schema", schema_view(p));
		if (item == NULL || json_array_append_new(arr, item) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	}
	*out = arr;
	arr = NULL;
out:
	json_decref(rec);
	json_decref(arr);
	return rc;
}

/* ====== Validation ====== */

/*
 * The config to use: the stored one (decrypted) overlaid with the fields
 * of in, or of in.config when present (a secret equal to the mask keeps
 * the stored value); defaults for what is missing; required fields
 * checked. *out: new reference.
 */
static int
config_merge(struct engine *e, const struct sandbox_provider *s, json_t *rec,
    const json_t *in, char *err, json_t **out)
{
	json_t		*cfg = NULL, *ent, *v;
	const char	*name, *str;
	char		 num[32];
	size_t		 i;
	int		 rc = 0;

	*out = NULL;
	if (json_object_get(in, "config") != NULL)
		in = json_object_get(in, "config");
	if (in != NULL && !json_is_object(in)) {
		rc = engine_invalid(err, "config: expected an object");
		goto out;
	}
	ent = entry_of(rec, s->name);
	if (ent != NULL) {
		if ((rc = entry_config(e, s, ent, err, &cfg)) != 0)
			goto out;
	} else if ((cfg = json_object()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	for (i = 0; i < s->nfields; i++) {
		name = s->fields[i].name;
		v = json_object_get(in, name);
		if (v == NULL || json_is_null(v))
			continue;
		if (json_is_integer(v)) {
			snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
			    json_integer_value(v));
			str = num;
		} else if (json_is_string(v))
			str = json_string_value(v);
		else {
			rc = engine_invalid(err, "config.%s: expected a string",
			    name);
			goto out;
		}
		if (strlen(str) > VALUE_MAX) {
			rc = engine_invalid(err, "config.%s: longer than %d "
			    "bytes", name, VALUE_MAX);
			goto out;
		}
		if (strcmp(s->fields[i].type, "secret-input") == 0 &&
		    strcmp(str, ENGINE_SECRET_MASK) == 0)
			continue;	/* keep the stored value */
		/* A new ssh host or port drops the pinned key. */
		if ((strcmp(name, "ssh_host") == 0 ||
		    strcmp(name, "ssh_port") == 0) && json_object_get(in,
		    "ssh_host_key") == NULL) {
			const char *old = json_string_value(json_object_get(cfg,
			    name));

			if ((old == NULL || strcmp(old, str) != 0) &&
			    json_object_set_new(cfg, "ssh_host_key",
			    json_string("")) != 0) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
		}
		if (json_object_set_new(cfg, name, json_string(str)) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	}
	for (i = 0; i < s->nfields; i++) {
		name = s->fields[i].name;
		str = json_string_value(json_object_get(cfg, name));
		if ((str == NULL || str[0] == '\0') && s->fields[i].def !=
		    NULL && json_object_set_new(cfg, name,
		    json_string(s->fields[i].def)) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		str = json_string_value(json_object_get(cfg, name));
		if (s->fields[i].required && (str == NULL || str[0] == '\0' ||
		    strcmp(str, ENGINE_SECRET_MASK) == 0)) {
			rc = engine_invalid(err, "config.%s: required", name);
			goto out;
		}
	}
	*out = cfg;
	cfg = NULL;
out:
	json_decref(cfg);
	return rc;
}

/*
 * Connects with cfg the provider's own way: create, exec true, destroy.
 * ssh without a pinned key scans and pins it into cfg first. Returns 0 or
 * ENGINE_ESANDBOX (ENGINE_EINVAL for a config field) with the provider's
 * message in err.
 */
static int
config_check(struct engine *e, const struct sandbox_provider *s,
    json_t *cfg, char *err, char **info)
{
	struct sandbox_config		 sc;
	struct sandbox			*sb = NULL;
	struct sandbox_exec_result	 res;
	struct sandbox_exec_req		 req;
	static const char *const	 argv[] = {"true", NULL};
	int				 rc;

	memset(&res, 0, sizeof(res));
	/* The provider's own check first (docker: the engine and the
	 * image, each failure by name; ssh: pins the host key). */
	if ((rc = sandbox_check(s, cfg, err, info)) != 0)
		goto out;
	sandbox_config_init(&sc, e->conf);
	sc.options = cfg;
	if ((rc = sandbox_create(s, &sc, err, &sb)) != 0)
		goto out;
	memset(&req, 0, sizeof(req));
	req.argv = argv;
	req.timeout_ms = 30000;
	if ((rc = sandbox_exec(sb, &req, err, &res)) != 0)
		goto out;
	if (res.exit_code != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "%s sandbox: `true` "
		    "exited with %d: %.150s", s->name, res.exit_code,
		    res.err ? res.err : "");
		goto out;
	}
	rc = sandbox_destroy(sb, err);
out:
	sandbox_exec_result_release(&res);
	sandbox_free(sb);
	if (rc == ENGINE_EINVAL || rc == ENGINE_ENOMEM)
		return rc;
	return rc != 0 ? ENGINE_ESANDBOX : 0;
}

/* ====== Changes ====== */

struct write_arg {
	const char	*type;
	json_t		*entry;		/* NULL: delete; steals */
	const char	*activate;	/* set active to this */
	int		 pin_only;	/* only update a stored entry's pin */
	const char	*pin;
};

static int
write_tx(struct store_txn *t, void *arg)
{
	struct write_arg	*a = arg;
	json_t			*rec = NULL, *prov, *ent;
	const char		*act;
	int			 rc;

	rc = store_get_json(t, STORE_DB_SETTINGS, SETTINGS_KEY, &rec);
	if (rc == STORE_ENOTFOUND) {
		rc = 0;
		rec = json_object();
	}
	if (rc != 0 || rec == NULL || !json_is_object(rec)) {
		rc = rc != 0 ? rc : STORE_ENOMEM;
		goto out;
	}
	prov = json_object_get(rec, "providers");
	if (!json_is_object(prov)) {
		prov = json_object();
		if (prov == NULL || json_object_set_new(rec, "providers", prov)
		    != 0) {
			rc = STORE_ENOMEM;
			goto out;
		}
	}
	if (a->pin_only) {
		ent = json_object_get(prov, a->type);
		if (ent == NULL)
			goto out;	/* nothing stored: nothing to pin */
		if (json_object_set_new(json_object_get(ent, "config"),
		    "ssh_host_key", json_string(a->pin)) != 0) {
			rc = STORE_ENOMEM;
			goto out;
		}
	} else if (a->activate != NULL) {
		if (strcmp(a->activate, "local") != 0 &&
		    json_object_get(prov, a->activate) == NULL) {
			rc = STORE_ENOTFOUND;
			goto out;
		}
		if (json_object_set_new(rec, "active",
		    json_string(a->activate)) != 0) {
			rc = STORE_ENOMEM;
			goto out;
		}
	} else if (a->entry != NULL) {
		if (json_object_set(prov, a->type, a->entry) != 0) {
			rc = STORE_ENOMEM;
			goto out;
		}
	} else {
		if (json_object_del(prov, a->type) != 0) {
			rc = STORE_ENOTFOUND;
			goto out;
		}
		act = json_string_value(json_object_get(rec, "active"));
		if (act != NULL && strcmp(act, a->type) == 0 &&
		    json_object_set_new(rec, "active", json_string("local"))
		    != 0) {
			rc = STORE_ENOMEM;
			goto out;
		}
	}
	rc = store_put_json(t, STORE_DB_SETTINGS, SETTINGS_KEY, rec, 0);
out:
	json_decref(rec);
	return rc;
}

/* The entry to store for cfg: plain fields, encrypted secrets. */
static int
entry_make(struct engine *e, const struct sandbox_provider *s,
    const json_t *cfg, char *err, json_t **out)
{
	json_t		*ent = NULL, *plain, *secrets;
	const char	*v;
	char		 aad[128], *enc = NULL;
	size_t		 i;
	int		 rc = 0;

	*out = NULL;
	ent = json_pack("{s:{}, s:{}, s:I}", "config", "secrets",
	    "updated_at", (json_int_t)engine_now());
	if (ent == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	plain = json_object_get(ent, "config");
	secrets = json_object_get(ent, "secrets");
	for (i = 0; i < s->nfields; i++) {
		v = json_string_value(json_object_get(cfg, s->fields[i].name));
		if (v == NULL)
			continue;
		if (strcmp(s->fields[i].type, "secret-input") != 0) {
			if (json_object_set_new(plain, s->fields[i].name,
			    json_string(v)) != 0) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
			continue;
		}
		snprintf(aad, sizeof(aad), "sandbox_providers/%s/%s", s->name,
		    s->fields[i].name);
		if ((rc = secret_encrypt(e, aad, v, err, &enc)) != 0)
			goto out;
		if (json_object_set_new(secrets, s->fields[i].name,
		    json_string(enc)) != 0)
			rc = ENGINE_ENOMEM;
		free(enc);
		enc = NULL;
		if (rc != 0)
			goto out;
	}
	*out = ent;
	ent = NULL;
out:
	json_decref(ent);
	return rc;
}

int
engine_sandbox_provider_set(struct engine *e, const char *type,
    const json_t *in, char *err)
{
	const struct sandbox_provider	*s = sandbox_provider_find(type);
	struct write_arg		 a;
	json_t				*rec = NULL, *cfg = NULL, *ent = NULL;
	char				*info = NULL;
	int				 rc;

	memset(&a, 0, sizeof(a));
	err[0] = '\0';
	if (s == NULL) {
		rc = ENGINE_ENOTFOUND;
		goto out;
	}
	if (s->nfields == 0) {
		rc = engine_invalid(err, "the %s sandbox has no settings", type);
		goto out;
	}
	if ((rc = record_load(e, &rec)) != 0 ||
	    (rc = config_merge(e, s, rec, in, err, &cfg)) != 0 ||
	    (rc = config_check(e, s, cfg, err, &info)) != 0 ||
	    (rc = entry_make(e, s, cfg, err, &ent)) != 0)
		goto out;
	a.type = type;
	a.entry = ent;
	rc = engine_from_store(store_write(e->store, write_tx, &a));
out:
	json_decref(rec);
	json_decref(cfg);
	json_decref(ent);
	free(info);
	return rc;
}

int
engine_sandbox_provider_test(struct engine *e, const char *type,
    const json_t *in, char *err, json_t **out)
{
	const struct sandbox_provider	*s = sandbox_provider_find(type);
	struct write_arg		 a;
	json_t				*rec = NULL, *cfg = NULL, *old;
	const char			*pin, *before = NULL;
	char				*info = NULL;
	int				 rc;

	memset(&a, 0, sizeof(a));
	*out = NULL;
	err[0] = '\0';
	if (s == NULL) {
		rc = ENGINE_ENOTFOUND;
		goto out;
	}
	if ((rc = record_load(e, &rec)) != 0 ||
	    (rc = config_merge(e, s, rec, in, err, &cfg)) != 0)
		goto out;
	old = json_object_get(json_object_get(entry_of(rec, type), "config"),
	    "ssh_host_key");
	before = json_string_value(old);
	if ((rc = config_check(e, s, cfg, err, &info)) != 0)
		goto out;
	pin = json_string_value(json_object_get(cfg, "ssh_host_key"));
	/* A key pinned now is kept with the stored config. */
	if (pin != NULL && (before == NULL || strcmp(before, pin) != 0)) {
		a.type = type;
		a.pin_only = 1;
		a.pin = pin;
		if ((rc = engine_from_store(store_write(e->store, write_tx,
		    &a))) != 0)
			goto out;
	}
	*out = pin != NULL ? json_pack("{s:s, s:s}", "result", "success",
	    "ssh_host_key", pin) : json_pack("{s:s}", "result", "success");
	if (*out != NULL && info != NULL && json_object_set_new(*out,
	    "message", json_string(info)) != 0) {
		json_decref(*out);
		*out = NULL;
	}
	if (*out == NULL)
		rc = ENGINE_ENOMEM;
out:
	json_decref(rec);
	json_decref(cfg);
	free(info);
	return rc;
}

int
engine_sandbox_provider_delete(struct engine *e, const char *type)
{
	struct write_arg	a;

	memset(&a, 0, sizeof(a));
	if (sandbox_provider_find(type) == NULL)
		return ENGINE_ENOTFOUND;
	a.type = type;
	return engine_from_store(store_write(e->store, write_tx, &a));
}

int
engine_sandbox_provider_activate(struct engine *e, const char *type,
    char *err)
{
	struct write_arg	a;
	int			rc;

	memset(&a, 0, sizeof(a));
	err[0] = '\0';
	if (sandbox_provider_find(type) == NULL)
		return ENGINE_ENOTFOUND;
	a.type = type;
	a.activate = type;
	rc = engine_from_store(store_write(e->store, write_tx, &a));
	if (rc == ENGINE_ENOTFOUND)
		rc = engine_invalid(err, "the %s sandbox is not configured; "
		    "save its config first", type);
	return rc;
}

/* ====== For runs ====== */

int
sandbox_active(struct engine *e, char *err, const struct sandbox_provider **p,
    struct sandbox_config *cfg)
{
	const struct sandbox_provider	*s;
	json_t				*rec = NULL, *ent, *opts = NULL;
	const char			*type;
	int				 rc;

	err[0] = '\0';
	*p = &sandbox_provider_local;
	sandbox_config_init(cfg, e->conf);
	if ((rc = record_load(e, &rec)) != 0) {
		snprintf(err, ENGINE_ERRMAX, "sandbox settings: cannot read "
		    "them from storage");
		goto out;
	}
	type = active_of(rec);
	if (strcmp(type, "local") == 0)
		goto out;
	/* a provider this binary does not have (stored by another
	 * build): as without a config */
	if ((s = sandbox_provider_find(type)) == NULL) {
		log_warn("sandbox: active provider %s is not built in; using "
		    "local", type);
		goto out;
	}
	if ((ent = entry_of(rec, type)) == NULL) {
		log_warn("sandbox: active provider %s has no config; using "
		    "local", type);
		goto out;
	}
	if ((rc = entry_config(e, s, ent, err, &opts)) != 0)
		goto out;
	*p = sandbox_provider_find(type);
	cfg->options = opts;
	opts = NULL;
out:
	json_decref(rec);
	json_decref(opts);
	return rc;
}

void
sandbox_config_release(struct sandbox_config *cfg)
{
	json_decref((json_t *)(uintptr_t)cfg->options);
	cfg->options = NULL;
}

/* p's sweep for cfg, its count or failure logged. */
static void
sweep_log(const struct sandbox_provider *p, const struct sandbox_config *cfg)
{
	char	err[ENGINE_ERRMAX];
	int	n = 0;

	if (sandbox_sweep(p, cfg, err, &n) != 0)
		log_warn("sandbox: %s", err);
	else if (n > 0)
		log_info("sandbox: removed %d %s sandbox(es) left by flowcgi "
		    "processes that are gone", n, p->name);
}

void
sandbox_sweep_active(struct engine *e)
{
	const struct sandbox_provider	*p;
	struct sandbox_config		 cfg;
	char				 err[ENGINE_ERRMAX];

	/* cfg holds the sandbox.* settings even when this fails. */
	if (sandbox_active(e, err, &p, &cfg) != 0) {
		log_warn("sandbox: %s", err);
		p = &sandbox_provider_local;
	}
	/* Code nodes use the local provider whichever is active. */
	sweep_log(&sandbox_provider_local, &cfg);
	if (p != &sandbox_provider_local)
		sweep_log(p, &cfg);
	sandbox_config_release(&cfg);
}
