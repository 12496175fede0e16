/*
 * web_site.c — the Web App's site of each app, as Dify's sites table: a
 * 16-character share code from a CSPRNG, the page's title, icon, theme,
 * language and texts, and whether the site is enabled; plus Dify's console
 * routes that change it:
 *
 *   POST /console/api/apps/{id}/site                  the settings
 *   POST /console/api/apps/{id}/site/access-token-reset a new code
 *   POST /console/api/apps/{id}/site-enable           {enable_site}
 *   POST /console/api/apps/{id}/api-enable            {enable_api}
 *   GET  /console/api/apps/{id}/site                  (flowcgi's own)
 *
 * Storage: two key families of the settings database, written in one
 * transaction so they always agree:
 *   "webapp_site/<app id>"  -> the site record (JSON)
 *   "webapp_code/<code>"    -> {"app_id": ...}
 * A site is made the first time anything asks for the app's site (the app
 * detail, the admin page, these routes), so every app has one, whether it
 * was created, imported or copied, and whether it existed before this
 * feature: no hook in each way an app comes to be. The code is drawn until
 * it is free (NOOVERWRITE), inside the same write.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "fcgi/internal.h"
#include "storage/storage.h"

#define SITE_KEY	"webapp_site/"
#define CODE_KEY	"webapp_code/"
#define SITE_TEXT_MAX	2048	/* a text setting (description, ...) */
#define SITE_DISCLAIMER_MAX 512	/* Dify's setter caps it at 512 */

/* ====== Codes ====== */

int
web_site_code_new(char out[WEB_CODE_LEN + 1])
{
	static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char	 b[64];
	size_t		 i, n = 0;

	while (n < WEB_CODE_LEN) {
		if (RAND_bytes(b, sizeof(b)) != 1)
			return -1;
		/* 248 = 4 * 62: bytes above it would favour some letters */
		for (i = 0; i < sizeof(b) && n < WEB_CODE_LEN; i++)
			if (b[i] < 248)
				out[n++] = alnum[b[i] % 62];
	}
	out[n] = '\0';
	return 0;
}

/* 1 when s has the shape of a code (16 of [A-Za-z0-9]). */
int
web_code_valid(const char *s)
{
	size_t i;

	for (i = 0; i < WEB_CODE_LEN; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' &&
		    s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')))
			return 0;
	return s[i] == '\0';
}

/* ====== Storage ====== */

struct site_op {
	const char	*app_id;
	const json_t	*app;		/* for a new site: title, icons */
	json_t		*patch;		/* settings to change, or NULL */
	int		 reset_code;
	json_t		*out;		/* the site after the write */
	int		 quiet;		/* a failed write is not answered */
};

static int
code_put(struct store_txn *t, const char *app_id, char code[WEB_CODE_LEN + 1])
{
	char	 key[64];
	json_t	*v = json_pack("{s:s}", "app_id", app_id);
	int	 rc, tries;

	if (v == NULL)
		return STORE_ENOMEM;
	for (tries = 0; tries < 8; tries++) {
		if (web_site_code_new(code) != 0) {
			rc = STORE_EIO;
			break;
		}
		snprintf(key, sizeof(key), CODE_KEY "%s", code);
		rc = store_put_json(t, STORE_DB_SETTINGS, key, v,
		    STORE_NOOVERWRITE);
		if (rc != STORE_EEXIST)
			break;
	}
	json_decref(v);
	return rc;
}

/* A new site record for app (Dify's create_site_record_when_app_created). */
static json_t *
site_new(const char *app_id, const json_t *app, const char *code)
{
	const json_t	*en = json_object_get(app, "enable_site");
	const json_t	*ea = json_object_get(app, "enable_api");
	json_t		*s;

#define A(k) (json_is_string(json_object_get(app, k)) ? \
	json_incref(json_object_get(app, k)) : json_null())
	s = json_pack("{s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:s,s:n,s:b,s:n,s:n,s:n,"
	    "s:s,s:n,s:s,s:b,s:b,s:b,s:n,s:s,s:b,s:b,s:s,s:I}",
	    "app_id", app_id, "code", code, "title", A("name"),
	    "icon_type", A("icon_type"), "icon", A("icon"),
	    "icon_background", A("icon_background"),
	    "description", A("description"), "default_language", "en-US",
	    "chat_color_theme", "chat_color_theme_inverted", 0,
	    "copyright", "privacy_policy", "custom_disclaimer",
	    "customize_token_strategy", "not_allow", "customize_domain",
	    "status", "normal", "prompt_public", 0, "show_workflow_steps", 1,
	    "use_icon_as_answer_icon", json_is_true(json_object_get(app,
	    "use_icon_as_answer_icon")), "input_placeholder",
	    "passcode", "", "enable_site", en == NULL || json_is_true(en),
	    "enable_api", ea == NULL || json_is_true(ea), "created_by", "admin",
	    "created_at", (json_int_t)time(NULL));
#undef A
	return s;
}

/*
 * A patch of enable_api is written on the app's record too, in the same
 * transaction: the service API's check (web_site_api_check) reads it from
 * the app cache with no read of its own, where the site's record would
 * cost every request a read transaction (two round trips on PostgreSQL).
 */
static int
app_flag_put(struct store_txn *t, struct site_op *op)
{
	json_t	*v, *app = NULL;
	int	 rc;

	if (op->patch == NULL || (v = json_object_get(op->patch,
	    "enable_api")) == NULL)
		return 0;
	if ((rc = store_get_json(t, STORE_DB_APPS, op->app_id, &app)) != 0)
		return rc;
	rc = json_object_set(app, "enable_api", v) != 0 ? STORE_ENOMEM :
	    store_put_json(t, STORE_DB_APPS, op->app_id, app, 0);
	json_decref(app);
	return rc;
}

static int
site_write(struct store_txn *t, void *arg)
{
	struct site_op	*op = arg;
	char		 key[128], ckey[64], code[WEB_CODE_LEN + 1];
	const char	*old;
	json_t		*s = NULL;
	int		 rc;

	json_decref(op->out);
	op->out = NULL;
	snprintf(key, sizeof(key), SITE_KEY "%s", op->app_id);
	rc = store_get_json(t, STORE_DB_SETTINGS, key, &s);
	if (rc == STORE_ENOTFOUND) {
		if (op->app == NULL)
			return STORE_ENOTFOUND;
		if ((rc = code_put(t, op->app_id, code)) != 0)
			return rc;
		if ((s = site_new(op->app_id, op->app, code)) == NULL)
			return STORE_ENOMEM;
	} else if (rc != 0)
		return rc;
	else if (op->patch == NULL && !op->reset_code) {
		op->out = s;	/* there, nothing to change */
		return 0;
	}
	if (op->reset_code) {
		old = json_string_value(json_object_get(s, "code"));
		if (old != NULL) {
			snprintf(ckey, sizeof(ckey), CODE_KEY "%s", old);
			if ((rc = store_del(t, STORE_DB_SETTINGS, ckey,
			    strlen(ckey))) != 0 && rc != STORE_ENOTFOUND)
				goto fail;
		}
		if ((rc = code_put(t, op->app_id, code)) != 0)
			goto fail;
		if (json_object_set_new(s, "code", json_string(code)) != 0) {
			rc = STORE_ENOMEM;
			goto fail;
		}
	}
	if (op->patch != NULL && (json_object_update(s, op->patch) != 0 ||
	    json_object_set_new(s, "updated_at", json_integer(
	    (json_int_t)time(NULL))) != 0)) {
		rc = STORE_ENOMEM;
		goto fail;
	}
	if ((rc = store_put_json(t, STORE_DB_SETTINGS, key, s, 0)) != 0 ||
	    (rc = app_flag_put(t, op)) != 0)
		goto fail;
	op->out = s;
	return 0;
fail:
	json_decref(s);
	return rc;
}

/* Runs op for app_id (which must exist); 0 with op->out, or -1 answered. */
static int
site_run(struct req *r, struct site_op *op)
{
	json_t	*app = NULL;
	int	 rc;

	if ((rc = engine_app_get(r->eng, op->app_id, &app)) != 0) {
		resp_engine_error(r, rc, NULL, "app");
		return -1;
	}
	op->app = app;
	rc = store_write(engine_store(r->eng), site_write, op);
	json_decref(app);
	op->app = NULL;
	if (rc != 0) {
		json_decref(op->out);
		op->out = NULL;
		if (op->quiet)
			log_warn("web app: the site of app %s could not be "
			    "stored (%s); it is made when next asked for",
			    op->app_id, store_strerror(rc));
		else
			resp_store_error(r, rc, "site");
		return -1;
	}
	return 0;
}

/* web_site_get; quiet: a site that cannot be stored is not answered. */
static json_t *
site_get(struct req *r, const char *app_id, int quiet)
{
	struct site_op	 op = { app_id, NULL, NULL, 0, NULL, quiet };
	struct store_txn *t = NULL;
	char		 key[128];
	json_t		*s = NULL;
	int		 rc;

	/* The read first: a site made once is only read after. */
	snprintf(key, sizeof(key), SITE_KEY "%s", app_id);
	if (store_read_begin(engine_store(r->eng), &t) == 0) {
		rc = store_get_json(t, STORE_DB_SETTINGS, key, &s);
		store_read_end(t);
		if (rc == 0) {
			/* an app deleted since keeps no site */
			json_t *app = NULL;

			if ((rc = engine_app_get(r->eng, app_id, &app)) != 0) {
				json_decref(s);
				resp_engine_error(r, rc, NULL, "app");
				return NULL;
			}
			json_decref(app);
			return s;
		}
	}
	if (site_run(r, &op) != 0)
		return NULL;
	return op.out;
}

json_t *
web_site_get(struct req *r, const char *app_id)
{
	return site_get(r, app_id, 0);
}

int
web_site_by_code(struct req *r, const char *code, json_t **out)
{
	struct store_txn *t = NULL;
	char		 key[64];
	json_t		*c = NULL, *s = NULL;
	int		 rc;

	*out = NULL;
	if (!web_code_valid(code))
		return 1;
	if ((rc = store_read_begin(engine_store(r->eng), &t)) != 0) {
		resp_store_error(r, rc, "site");
		return -1;
	}
	snprintf(key, sizeof(key), CODE_KEY "%s", code);
	rc = store_get_json(t, STORE_DB_SETTINGS, key, &c);
	if (rc == 0) {
		snprintf(key, sizeof(key), SITE_KEY "%.64s",
		    json_string_value(json_object_get(c, "app_id")) ?
		    json_string_value(json_object_get(c, "app_id")) : "");
		rc = store_get_json(t, STORE_DB_SETTINGS, key, &s);
	}
	store_read_end(t);
	json_decref(c);
	if (rc == STORE_ENOTFOUND)
		return 1;
	if (rc != 0) {
		resp_store_error(r, rc, "site");
		return -1;
	}
	/* a stale code (reset on another host mid-read) is no site */
	if (!json_is_string(json_object_get(s, "code")) || strcmp(
	    json_string_value(json_object_get(s, "code")), code) != 0) {
		json_decref(s);
		return 1;
	}
	*out = s;
	return 0;
}

int
web_site_api_check(struct req *r)
{
	json_t	*app = NULL;
	int	 rc, off;

	/* the app's record as the run reads it (app_flag_put), from the
	 * app cache: no read of its own; an app that is not there is the
	 * handler's to answer */
	rc = engine_app_get_live(r->eng, r->app_id, &app);
	if (rc == ENGINE_EUNAVAIL) {
		resp_store_error(r, STORE_EUNAVAIL, "app");
		return -1;
	}
	off = rc == 0 && json_is_false(json_object_get(app, "enable_api"));
	json_decref(app);
	if (off) {
		resp_error(r, 403, "forbidden", "The app's API service has "
		    "been disabled.");
		return -1;
	}
	return 0;
}

/* ====== Views ====== */

/* The fields of a site Dify's console and web API show. */
static const char *const site_fields[] = {
	"title", "icon_type", "icon", "icon_background", "description",
	"default_language", "chat_color_theme", "chat_color_theme_inverted",
	"customize_domain", "copyright", "privacy_policy", "input_placeholder",
	"custom_disclaimer", "customize_token_strategy", "prompt_public",
	"show_workflow_steps", "use_icon_as_answer_icon", NULL,
};

json_t *
web_site_view(struct req *r, const json_t *s)
{
	json_t	*v = json_object(), *x;
	int	 bad = v == NULL;
	size_t	 i;

	for (i = 0; !bad && site_fields[i] != NULL; i++) {
		x = json_object_get(s, site_fields[i]);
		bad |= json_object_set_new(v, site_fields[i], x ?
		    json_incref(x) : json_null());
	}
	if (bad) {
		json_decref(v);
		return NULL;
	}
	x = json_object_get(s, "code");
	bad |= json_object_set(v, "app_id", json_object_get(s, "app_id"));
	bad |= json_object_set(v, "access_token", x);
	bad |= json_object_set(v, "code", x);
	bad |= json_object_set_new(v, "icon_url", json_null());
	bad |= json_object_set(v, "status", json_object_get(s, "status"));
	bad |= json_object_set_new(v, "app_base_url", json_string(
	    req_base_url(r)));
	bad |= json_object_set(v, "created_by", json_object_get(s,
	    "created_by"));
	bad |= json_object_set(v, "created_at", json_object_get(s,
	    "created_at"));
	bad |= json_object_set_new(v, "updated_by", json_null());
	bad |= json_object_set(v, "updated_at", json_object_get(s,
	    "updated_at") ? json_object_get(s, "updated_at") :
	    json_object_get(s, "created_at"));
	/* flowcgi's own: a passcode is set (never the passcode itself) */
	x = json_object_get(s, "passcode");
	bad |= json_object_set_new(v, "passcode_set", json_boolean(
	    json_is_string(x) && *json_string_value(x) != '\0'));
	if (bad) {
		json_decref(v);
		return NULL;
	}
	return v;
}

/* ====== Console routes ====== */

/* Sends the console view of site s (stolen). */
static void
send_site(struct req *r, json_t *s)
{
	json_t *v = web_site_view(r, s);

	json_decref(s);
	resp_json(r, 200, v);
}

static void
h_site_get(struct req *r)
{
	json_t *s = web_site_get(r, r->captures[0]);

	if (s != NULL)
		send_site(r, s);
}

/* 1 when k is a setting whose value is a string or null. */
static int
text_setting(const char *k)
{
	static const char *const b[] = { "chat_color_theme_inverted",
	    "prompt_public", "show_workflow_steps",
	    "use_icon_as_answer_icon", NULL };
	size_t i;

	for (i = 0; b[i] != NULL; i++)
		if (strcmp(b[i], k) == 0)
			return 0;
	return 1;
}

/*
 * POST /console/api/apps/{id}/site: any of Dify's settings, each checked
 * (a string or null, a boolean for the flags; default_language and
 * customize_token_strategy from Dify's lists), plus flowcgi's "passcode"
 * ("" for none).
 */
static void
h_site_update(struct req *r)
{
	static const char *const langs[] = { "en-US", "zh-Hans", "zh-Hant",
	    "ja-JP", "ko-KR", "fr-FR", "de-DE", "es-ES", "pt-BR", "ru-RU",
	    "it-IT", "uk-UA", "vi-VN", "pl-PL", "ro-RO", "tr-TR", "fa-IR",
	    "hi-IN", "th-TH", "id-ID", "sl-SI", "ar-TN", NULL };
	struct site_op	 op = { r->captures[0], NULL, NULL, 0, NULL, 0 };
	const char	*k, *sv;
	json_t		*v, *patch = NULL;
	size_t		 i, max;

	if (req_read_json(r) != 0)
		return;
	if ((patch = json_object()) == NULL)
		goto nomem;
	for (i = 0; site_fields[i] != NULL; i++) {
		k = site_fields[i];
		if ((v = json_object_get(r->json, k)) == NULL)
			continue;
		if (text_setting(k) ? !json_is_string(v) && !json_is_null(v) :
		    !json_is_boolean(v)) {
			resp_error(r, 400, "invalid_param", "%s must be %s", k,
			    text_setting(k) ? "a string or null" :
			    "a boolean");
			goto out;
		}
		sv = json_string_value(v);
		max = strcmp(k, "custom_disclaimer") == 0 ?
		    SITE_DISCLAIMER_MAX : SITE_TEXT_MAX;
		if (sv != NULL && strlen(sv) > max) {
			resp_error(r, 400, "invalid_param", "%s is longer than "
			    "%zu bytes", k, max);
			goto out;
		}
		if (strcmp(k, "title") == 0 && (sv == NULL || *sv == '\0')) {
			resp_error(r, 400, "invalid_param", "title is "
			    "required");
			goto out;
		}
		if (strcmp(k, "default_language") == 0) {
			size_t j;

			for (j = 0; langs[j] != NULL && (sv == NULL ||
			    strcmp(langs[j], sv) != 0); j++)
				;
			if (langs[j] == NULL) {
				resp_error(r, 400, "invalid_param", "invalid "
				    "language");
				goto out;
			}
		}
		if (strcmp(k, "customize_token_strategy") == 0 && (sv ==
		    NULL || (strcmp(sv, "must") != 0 && strcmp(sv, "allow") !=
		    0 && strcmp(sv, "not_allow") != 0))) {
			resp_error(r, 400, "invalid_param", "customize_token_"
			    "strategy must be must, allow or not_allow");
			goto out;
		}
		if (json_object_set(patch, k, v) != 0)
			goto nomem;
	}
	if ((v = json_object_get(r->json, "passcode")) != NULL) {
		if (!json_is_string(v) || strlen(json_string_value(v)) > 128) {
			resp_error(r, 400, "invalid_param", "passcode must be "
			    "a string of at most 128 bytes");
			goto out;
		}
		if (json_object_set(patch, "passcode", v) != 0)
			goto nomem;
	}
	op.patch = patch;
	if (site_run(r, &op) == 0)
		send_site(r, op.out);
	goto out;
nomem:
	resp_error(r, 500, "internal_server_error", "out of memory");
out:
	json_decref(patch);
}

/* POST .../site/access-token-reset: a new code; the old link stops. */
static void
h_site_reset(struct req *r)
{
	struct site_op op = { r->captures[0], NULL, NULL, 1, NULL, 0 };

	if (site_run(r, &op) == 0)
		send_site(r, op.out);
}

/* POST .../site-enable {enable_site} and .../api-enable {enable_api}:
 * the app detail, as Dify answers them. */
static void
set_flag(struct req *r, const char *k)
{
	struct site_op	 op = { r->captures[0], NULL, NULL, 0, NULL, 0 };
	json_t		*v, *app = NULL;
	int		 rc;

	if (req_read_json(r) != 0)
		return;
	v = json_object_get(r->json, k);
	if (!json_is_boolean(v)) {
		resp_error(r, 400, "invalid_param", "%s must be a boolean", k);
		return;
	}
	if ((op.patch = json_pack("{s:O}", k, v)) == NULL) {
		resp_error(r, 500, "internal_server_error", "out of memory");
		return;
	}
	rc = site_run(r, &op);
	json_decref(op.patch);
	if (rc != 0)
		return;
	json_decref(op.out);
	if ((rc = engine_app_get(r->eng, r->captures[0], &app)) != 0) {
		resp_engine_error(r, rc, NULL, "app");
		return;
	}
	resp_json(r, 200, json_pack("{s:O,s:O,s:O,s:b,s:b}", "id",
	    json_object_get(app, "id"), "name", json_object_get(app, "name"),
	    "mode", json_object_get(app, "mode"), "enable_site",
	    strcmp(k, "enable_site") == 0 ? json_is_true(v) : 1,
	    "enable_api", strcmp(k, "enable_api") == 0 ? json_is_true(v) : 1));
	json_decref(app);
}

static void
h_site_enable(struct req *r)
{
	set_flag(r, "enable_site");
}

static void
h_api_enable(struct req *r)
{
	set_flag(r, "enable_api");
}

int
web_app_detail_site(struct req *r, const char *app_id, json_t *detail)
{
	json_t	*s, *v;
	int	 bad;

	/* The app itself is stored whatever becomes of its site: a site that
	 * cannot be stored now (a full store) leaves `site` null, and the
	 * next ask makes it. */
	if ((s = site_get(r, app_id, 1)) == NULL)
		return r->status != 0 ? -1 : 0;
	v = web_site_view(r, s);
	bad = v == NULL;
	bad |= json_object_set(detail, "enable_site", json_object_get(s,
	    "enable_site"));
	bad |= json_object_set(detail, "enable_api", json_object_get(s,
	    "enable_api"));
	bad |= json_object_set_new(detail, "site", v);
	json_decref(s);
	if (bad) {
		resp_error(r, 500, "internal_server_error", "out of memory");
		return -1;
	}
	return 0;
}

#define A "/console/api/apps/{}"
const struct route web_site_routes[] = {
	{ "GET", A "/site", h_site_get, AUTH_ADMIN },
	{ "POST", A "/site", h_site_update, AUTH_ADMIN },
	{ "POST", A "/site/access-token-reset", h_site_reset, AUTH_ADMIN },
	{ "POST", A "/site-enable", h_site_enable, AUTH_ADMIN },
	{ "POST", A "/api-enable", h_api_enable, AUTH_ADMIN },
	{ NULL, NULL, NULL, AUTH_NONE },
};
#undef A
