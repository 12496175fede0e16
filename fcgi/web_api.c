/*
 * web_api.c — Dify's web API under /api, for the Web App's pages and for
 * Dify's own front end pointed at flowcgi.
 *
 * The passport: GET /api/passport with X-App-Code: <site code> answers
 * {"access_token": <JWT>}, HS256 over {iss, sub: "Web API Passport",
 * app_id, app_code, end_user_id, session_id} with a key derived from the
 * link key (engine_key_derive), so every host sharing that key verifies
 * it and no database row is written for an end user. session_id is the
 * end user of the runs and conversations: the query's user_id (the embed's
 * systemVariables.user_id) or a new UUID. As in Dify there is no expiry;
 * resetting the site's code ends every passport of it.
 *
 * Every other route reads the passport from X-App-Passport (or the older
 * "Authorization: Bearer"), refuses it when X-App-Code names another site,
 * when the site's code was reset, or when the site is disabled ("Site is
 * disabled.", 400, as Dify). The service routes flagged WEB_ROUTE in their
 * own tables (service.c, service_conv.c, service_audio.c) are answered
 * under /api by the router through web_api_enter: the passport's app as
 * the key's app and its session as "user", one implementation of runs,
 * streams, stop, uploads, audio, conversations and messages, so the end
 * user's own conversations are all the engine lets them see. Pinned
 * conversations, saved messages, more-like-this and remote uploads are
 * the web app's own (below).
 *
 * Abuse: the routes that start a run or call a model, and the passport,
 * are limited per client address and per end user (webapp.rate_limit a
 * minute, counted in the store so that every process and host shares the
 * count) with 429 and Retry-After.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "fcgi/internal.h"
#include "storage/storage.h"

#define PASSPORT_LABEL	"flowcgi web passport"
#define PASSPORT_MAX	2048	/* bytes of a passport we read */
#define USER_ID_MAX	255	/* bytes of an embed's user_id */
#define PINS_MAX	100	/* pinned conversations of an end user:
				   one page of /api/conversations */
#define PINS_KEY	"webapp_pins/"
#define SAVED_KEY	"webapp_saved/"

/* ====== base64url ====== */

/* base64url of in[0..n) without padding, in a; NULL when out of memory. */
static char *
b64url(struct arena *a, const unsigned char *in, size_t n)
{
	char	*out = arena_alloc(a, 4 * ((n + 2) / 3) + 1);
	int	 len;

	if (out == NULL)
		return NULL;
	len = EVP_EncodeBlock((unsigned char *)out, in, (int)n);
	while (len > 0 && out[len - 1] == '=')
		len--;
	out[len] = '\0';
	for (int i = 0; i < len; i++)
		if (out[i] == '+')
			out[i] = '-';
		else if (out[i] == '/')
			out[i] = '_';
	return out;
}

/* Decodes base64url s[0..n) into a (NUL-terminated); NULL when it is not
 * base64url or out of memory. *outlen gets the length. */
static unsigned char *
b64url_decode(struct arena *a, const char *s, size_t n, size_t *outlen)
{
	char		*t;
	unsigned char	*out;
	size_t		 i, m = n + (4 - n % 4) % 4;
	int		 len;

	if (n % 4 == 1 || (t = arena_alloc(a, m + 1)) == NULL ||
	    (out = arena_alloc(a, m + 1)) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (c == '-')
			c = '+';
		else if (c == '_')
			c = '/';
		else if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9')))
			return NULL;
		t[i] = c;
	}
	for (; i < m; i++)
		t[i] = '=';
	len = EVP_DecodeBlock(out, (unsigned char *)t, (int)m);
	if (len < 0)
		return NULL;
	len -= (int)(m - n);	/* DecodeBlock counts the padding */
	out[len] = '\0';
	*outlen = (size_t)len;
	return out;
}

/* ====== The passport ====== */

/* HMAC-SHA256 of data under the passport key; 0, or -1 after a 500. */
static int
passport_mac(struct req *r, const char *data, size_t n,
    unsigned char mac[32])
{
	unsigned char	key[32];
	unsigned int	len = 0;
	char		err[ENGINE_ERRMAX] = "";
	int		rc = -1;

	if (engine_key_derive(r->eng, PASSPORT_LABEL, key, err) != 0) {
		resp_error(r, 500, "internal_server_error", "%s", err);
		return -1;
	}
	if (HMAC(EVP_sha256(), key, sizeof(key), (const unsigned char *)data,
	    n, mac, &len) != NULL && len == 32)
		rc = 0;
	else
		resp_error(r, 500, "internal_server_error", "HMAC failed");
	OPENSSL_cleanse(key, sizeof(key));
	return rc;
}

/* The signed JWT of claims, in r's arena; NULL after a 500. */
static char *
passport_sign(struct req *r, const json_t *claims)
{
	static const char hdr[] = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
	unsigned char	 mac[32];
	char		*body, *h64, *b64, *signing, *sig;

	body = json_dumps(claims, JSON_COMPACT);
	if (body == NULL)
		goto nomem;
	h64 = b64url(r->a, (const unsigned char *)hdr, sizeof(hdr) - 1);
	b64 = b64url(r->a, (const unsigned char *)body, strlen(body));
	free(body);
	if (h64 == NULL || b64 == NULL ||
	    (signing = arena_printf(r->a, "%s.%s", h64, b64)) == NULL)
		goto nomem;
	if (passport_mac(r, signing, strlen(signing), mac) != 0)
		return NULL;
	if ((sig = b64url(r->a, mac, sizeof(mac))) == NULL)
		goto nomem;
	return arena_printf(r->a, "%s.%s", signing, sig);
nomem:
	resp_error(r, 500, "internal_server_error", "out of memory");
	return NULL;
}

/*
 * The claims of passport tok when its signature is ours (a new reference,
 * kept on r's arena), or NULL after answering 401 as Dify does.
 */
static json_t *
passport_verify(struct req *r, const char *tok)
{
	const char	*d1, *d2;
	unsigned char	 mac[32], *sig, *body, *hdr;
	size_t		 siglen = 0, blen = 0, hlen = 0;
	json_t		*h, *claims;

	if (strlen(tok) > PASSPORT_MAX || (d1 = strchr(tok, '.')) == NULL ||
	    (d2 = strchr(d1 + 1, '.')) == NULL || strchr(d2 + 1, '.'))
		goto invalid;
	if (passport_mac(r, tok, (size_t)(d2 - tok), mac) != 0)
		return NULL;
	sig = b64url_decode(r->a, d2 + 1, strlen(d2 + 1), &siglen);
	if (sig == NULL || siglen != sizeof(mac) ||
	    CRYPTO_memcmp(sig, mac, sizeof(mac)) != 0) {
		resp_error(r, 401, "unauthorized", "Invalid token signature.");
		return NULL;
	}
	hdr = b64url_decode(r->a, tok, (size_t)(d1 - tok), &hlen);
	body = b64url_decode(r->a, d1 + 1, (size_t)(d2 - d1 - 1), &blen);
	if (hdr == NULL || body == NULL)
		goto invalid;
	h = arena_json(r->a, json_loadb((const char *)hdr, hlen, 0, NULL));
	if (!json_is_string(json_object_get(h, "alg")) ||
	    strcmp(json_string_value(json_object_get(h, "alg")), "HS256"))
		goto invalid;
	claims = arena_json(r->a, json_loadb((const char *)body, blen, 0,
	    NULL));
	if (!json_is_string(json_object_get(claims, "app_id")) ||
	    !json_is_string(json_object_get(claims, "app_code")) ||
	    !json_is_string(json_object_get(claims, "session_id")) ||
	    !json_is_string(json_object_get(claims, "end_user_id")))
		goto invalid;
	return claims;
invalid:
	resp_error(r, 401, "unauthorized", "Invalid token.");
	return NULL;
}

/* ====== Rate limits ====== */

#define RL_SLOTS	4096	/* counters in the store at most */
#define RL_KEY		"webapp_rl/"

/*
 * One count of a rate limit in the store, so that every process (and
 * every host on PostgreSQL) counts against the same limit: the counter
 * of slot (a hash of who, RL_SLOTS of them) holds the hash it counts, its
 * minute and the count. A slot shared by two keys (a collision) is taken
 * by the newer: a limit may then forget, never refuse someone it should
 * not.
 */
struct rl_counter {
	char		 key[32];
	char		 who[24];	/* the hash it counts, in hex */
	json_t		*next;		/* the record to write */
};

struct rl_op {
	struct rl_counter c[2];	/* the address, the end user */
	int		 n;
	int64_t		 window;	/* minute since the epoch */
	int		 limit;
	int		 over;		/* out: one is past the limit */
};

/* Counts every counter of op in one write: all, or none when one is
 * past the limit. */
static int
rl_count(struct store_txn *t, void *arg)
{
	struct rl_op	*op = arg;
	json_t		*rec;
	int		 i, rc = 0, n;

	op->over = 0;
	for (i = 0; i < op->n; i++) {
		json_decref(op->c[i].next);
		op->c[i].next = NULL;
	}
	for (i = 0; i < op->n && rc == 0 && !op->over; i++) {
		rec = NULL;
		n = 0;
		rc = store_get_json(t, STORE_DB_SETTINGS, op->c[i].key, &rec);
		if (rc != 0 && rc != STORE_ENOTFOUND)
			break;
		if (rc == 0 && json_is_string(json_object_get(rec, "who")) &&
		    strcmp(json_string_value(json_object_get(rec, "who")),
		    op->c[i].who) == 0 && json_integer_value(json_object_get(
		    rec, "window")) == op->window)
			n = (int)json_integer_value(json_object_get(rec,
			    "count"));
		json_decref(rec);
		rc = 0;
		if (n >= op->limit)
			op->over = 1;
		else if ((op->c[i].next = json_pack("{s:s,s:I,s:i}", "who",
		    op->c[i].who, "window", (json_int_t)op->window, "count",
		    n + 1)) == NULL)
			rc = STORE_ENOMEM;
	}
	for (i = 0; i < op->n && rc == 0 && !op->over; i++)
		rc = store_put_json(t, STORE_DB_SETTINGS, op->c[i].key,
		    op->c[i].next, 0);
	return rc;
}

/* Adds the counter of who to op. */
static void
rl_add(struct rl_op *op, const char *who)
{
	unsigned char	md[SHA256_DIGEST_LENGTH];
	uint64_t	h;

	SHA256((const unsigned char *)who, strlen(who), md);
	memcpy(&h, md, sizeof(h));
	snprintf(op->c[op->n].key, sizeof(op->c[op->n].key), RL_KEY "%u",
	    (unsigned)(h % RL_SLOTS));
	snprintf(op->c[op->n].who, sizeof(op->c[op->n].who), "%016llx",
	    (unsigned long long)h);
	op->n++;
}

/*
 * Counts one request of the client address and, when known, of the end
 * user (app_id, session) in this minute, in one write to the store: 0
 * while both are within webapp.rate_limit, else -1 after answering 429
 * with Retry-After (the seconds left of the minute), or 5xx when the
 * store cannot count.
 */
static int
rate_limit(struct req *r, const char *app_id, const char *session)
{
	const char	*ip = req_param(r, "REMOTE_ADDR"), *who, *uk;
	struct rl_op	 op;
	int64_t		 now = (int64_t)time(NULL);
	int		 rc, i;
	char		 ra[16];

	if (r->conf->webapp_rate_limit <= 0)
		return 0;
	memset(&op, 0, sizeof(op));
	who = arena_printf(r->a, "ip:%s", ip ? ip : "");
	uk = session ? arena_printf(r->a, "u:%s/%s", app_id, session) : NULL;
	if (who == NULL || (session != NULL && uk == NULL)) {
		resp_error(r, 500, "internal_server_error", "out of memory");
		return -1;
	}
	rl_add(&op, who);
	if (uk != NULL)
		rl_add(&op, uk);
	op.window = now / 60;
	op.limit = r->conf->webapp_rate_limit;
	rc = store_write(engine_store(r->eng), rl_count, &op);
	for (i = 0; i < op.n; i++)
		json_decref(op.c[i].next);
	if (rc != 0) {
		resp_store_error(r, rc, "rate limit");
		return -1;
	}
	if (!op.over)
		return 0;
	snprintf(ra, sizeof(ra), "%lld", (long long)(60 - now % 60));
	resp_header(r, "Retry-After", arena_strdup(r->a, ra));
	resp_error(r, 429, "rate_limit_error", "Too many requests: at most "
	    "%d a minute (webapp.rate_limit); try again in %s s",
	    r->conf->webapp_rate_limit, ra);
	return -1;
}

/* ====== Who asks ====== */

struct web_user {
	const char	*app_id;
	const char	*code;
	const char	*session;	/* the runs' "user" */
	const char	*end_user_id;
	json_t		*site;		/* on r's arena */
};

/* The passport of the request: X-App-Passport, else a Bearer token. */
static const char *
passport_of(struct req *r)
{
	const char *h = req_param(r, "HTTP_X_APP_PASSPORT");

	if (h != NULL && *h != '\0')
		return h;
	h = req_param(r, "HTTP_AUTHORIZATION");
	if (h != NULL && strncasecmp(h, "Bearer ", 7) == 0)
		return h + 7 + strspn(h + 7, " ");
	return NULL;
}

/*
 * Checks the passport, the site and the app: 0 with *u (r->app_id set),
 * or -1 after answering as Dify does.
 */
static int
web_auth(struct req *r, struct web_user *u)
{
	const char	*tok = passport_of(r), *code;
	json_t		*claims, *site = NULL;
	int		 rc;

	memset(u, 0, sizeof(*u));
	if (tok == NULL || *tok == '\0') {
		resp_error(r, 401, "unauthorized", "App token is missing.");
		return -1;
	}
	if ((claims = passport_verify(r, tok)) == NULL)
		return -1;
	u->app_id = json_string_value(json_object_get(claims, "app_id"));
	u->code = json_string_value(json_object_get(claims, "app_code"));
	u->session = json_string_value(json_object_get(claims, "session_id"));
	u->end_user_id = json_string_value(json_object_get(claims,
	    "end_user_id"));
	code = req_param(r, "HTTP_X_APP_CODE");
	if (code != NULL && *code != '\0' && strcmp(code, u->code) != 0) {
		resp_error(r, 401, "unauthorized", "Invalid token: the "
		    "passport is for another app.");
		return -1;
	}
	if ((rc = web_site_by_code(r, u->code, &site)) < 0)
		return -1;
	if (rc > 0 || strcmp(json_string_value(json_object_get(site,
	    "app_id")), u->app_id) != 0) {
		json_decref(site);
		resp_error(r, 400, "bad_request", "Site URL is no longer "
		    "valid.");
		return -1;
	}
	u->site = arena_json(r->a, site);
	if (!json_is_true(json_object_get(site, "enable_site"))) {
		resp_error(r, 400, "bad_request", "Site is disabled.");
		return -1;
	}
	if (strlen(u->app_id) >= sizeof(r->app_id)) {
		resp_error(r, 401, "unauthorized", "Invalid token.");
		return -1;
	}
	memcpy(r->app_id, u->app_id, strlen(u->app_id) + 1);
	return 0;
}

/* A UUID-shaped id for the end user of session in app: the same each
 * time, so the same embed user_id is the same end user. */
static void
end_user_id(const char *app_id, const char *session, char out[37])
{
	unsigned char	md[SHA256_DIGEST_LENGTH];
	char		buf[512];

	/* app ids are UUIDs and sessions at most USER_ID_MAX bytes */
	snprintf(buf, sizeof(buf), "%s/%s", app_id, session);
	SHA256((const unsigned char *)buf, strlen(buf), md);
	md[6] = (unsigned char)((md[6] & 0x0f) | 0x50);
	md[8] = (unsigned char)((md[8] & 0x3f) | 0x80);
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x", md[0], md[1], md[2], md[3], md[4],
	    md[5], md[6], md[7], md[8], md[9], md[10], md[11], md[12], md[13],
	    md[14], md[15]);
}

/*
 * GET /api/passport (X-App-Code; ?user_id=): a passport for the site's
 * app. An unknown, disabled or stopped site is 404, as Dify's. With a
 * passcode set (flowcgi's option) it must come in X-App-Passcode.
 */
static void
h_passport(struct req *r)
{
	const char	*code = req_param(r, "HTTP_X_APP_CODE"), *uid, *pc;
	const char	*want, *app_id, *tok;
	unsigned char	 a[32], b[32];
	char		 sess[37], eu[37];
	json_t		*site = NULL, *claims = NULL, *app = NULL;
	int		 rc;

	if (code == NULL || *code == '\0') {
		resp_error(r, 401, "unauthorized", "X-App-Code header is "
		    "missing.");
		return;
	}
	if (rate_limit(r, "", NULL) != 0)
		return;
	if ((rc = web_site_by_code(r, code, &site)) < 0)
		return;
	if (rc > 0 || !json_is_true(json_object_get(site, "enable_site")) ||
	    strcmp(json_string_value(json_object_get(site, "status")) ?
	    json_string_value(json_object_get(site, "status")) : "",
	    "normal") != 0)
		goto notfound;
	app_id = json_string_value(json_object_get(site, "app_id"));
	if (engine_app_get(r->eng, app_id, &app) != 0)
		goto notfound;
	json_decref(app);
	want = json_string_value(json_object_get(site, "passcode"));
	if (want != NULL && *want != '\0') {
		pc = req_param(r, "HTTP_X_APP_PASSCODE");
		auth_hash(want, a);
		auth_hash(pc ? pc : "", b);
		if (pc == NULL || CRYPTO_memcmp(a, b, sizeof(a)) != 0) {
			resp_error(r, 401, "passcode_required", "This app "
			    "needs its passcode (X-App-Passcode).");
			goto out;
		}
	}
	uid = req_query(r, "user_id");
	if (uid != NULL && strlen(uid) > USER_ID_MAX) {
		resp_error(r, 400, "invalid_param", "user_id is longer than "
		    "%d bytes", USER_ID_MAX);
		goto out;
	}
	if (uid == NULL || *uid == '\0') {
		engine_uuid(sess);
		uid = sess;
	}
	end_user_id(app_id, uid, eu);
	claims = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "iss", app_id, "sub",
	    "Web API Passport", "app_id", app_id, "app_code", code,
	    "end_user_id", eu, "session_id", uid);
	if (claims == NULL) {
		resp_error(r, 500, "internal_server_error", "out of memory");
		goto out;
	}
	if ((tok = passport_sign(r, claims)) != NULL)
		resp_json(r, 200, json_pack("{s:s}", "access_token", tok));
	goto out;
notfound:
	resp_error(r, 404, "not_found", "The requested URL was not found on "
	    "the server.");
out:
	json_decref(claims);
	json_decref(site);
}

/* ====== Through the service API ====== */

/* The service API's handler of method and pattern (never NULL for the
 * pairs used here: the tables are fixed at build time). */
static void (*service_handler(const char *method, const char *pattern))(
    struct req *)
{
	static const struct route *const tabs[] = { service_routes,
	    service_conv_routes, NULL };
	const struct route *rt;
	size_t i;

	for (i = 0; tabs[i] != NULL; i++)
		for (rt = tabs[i]; rt->method != NULL; rt++)
			if (strcmp(rt->method, method) == 0 &&
			    strcmp(rt->pattern, pattern) == 0)
				return rt->handler;
	return NULL;
}

/* Where as_user puts the end user. */
enum user_in {
	USER_QUERY,	/* ?user= */
	USER_JSON,	/* the JSON body's "user" */
	USER_FORM,	/* a first multipart part "user" (the handlers take
			   the first) */
};

/*
 * Sets the end user as the request's "user", replacing any the client
 * sent: in the query, the JSON body (with the fields of set, a JSON
 * object, merged in) or the multipart body. 0, or -1 after answering.
 */
static int
as_user(struct req *r, const struct web_user *u, enum user_in in,
    const char *set)
{
	const char	*q = r->query, *amp, *bnd;
	char		*esc, *dump, *nb;
	size_t		 n;
	json_t		*extra;

	if (in == USER_FORM) {
		if (req_read_body(r, r->conf->max_body) != 0)
			return -1;
		if ((bnd = multipart_boundary(r->a, r->content_type)) == NULL) {
			resp_error(r, 400, "invalid_multipart", "no "
			    "multipart boundary in Content-Type");
			return -1;
		}
		dump = arena_printf(r->a, "--%s\r\nContent-Disposition: "
		    "form-data; name=\"user\"\r\n\r\n%s\r\n", bnd, u->session);
		if (dump == NULL || (nb = arena_alloc(r->a, strlen(dump) +
		    r->body_len + 1)) == NULL)
			goto nomem;
		n = strlen(dump);
		memcpy(nb, dump, n);
		memcpy(nb + n, r->body, r->body_len);
		nb[n + r->body_len] = '\0';
		r->body = nb;
		r->body_len += n;
		r->content_length = (int64_t)r->body_len;
		return 0;
	}
	if (in == USER_JSON) {
		if (req_read_json(r) != 0)
			return -1;
		if (!json_is_object(r->json)) {
			resp_error(r, 400, "invalid_param", "the body must be "
			    "a JSON object");
			return -1;
		}
		if (set != NULL && (extra = json_loads(set, 0, NULL)) != NULL) {
			json_object_update(r->json, extra);
			json_decref(extra);
		}
		if (json_object_set_new(r->json, "user", json_string(
		    u->session)) != 0 || (dump = json_dumps(r->json,
		    JSON_COMPACT)) == NULL)
			goto nomem;
		r->body = arena_strdup(r->a, dump);
		free(dump);
		if (r->body == NULL)
			goto nomem;
		r->body_len = strlen(r->body);
		r->content_length = (int64_t)r->body_len;
		r->content_type = "application/json";
		r->json = NULL;
		return 0;
	}
	if ((esc = curl_easy_escape(NULL, u->session, 0)) == NULL)
		goto nomem;
	dump = arena_printf(r->a, "user=%s", esc);
	curl_free(esc);
	if (dump == NULL)
		goto nomem;
	/* keep every parameter but the client's own user */
	for (; *q != '\0'; q = *amp ? amp + 1 : amp) {
		amp = strchr(q, '&');
		if (amp == NULL)
			amp = q + strlen(q);
		n = (size_t)(amp - q);
		if (n == 0 || (n >= 5 && strncmp(q, "user=", 5) == 0) ||
		    (n == 4 && strncmp(q, "user", 4) == 0))
			continue;
		if ((dump = arena_printf(r->a, "%s&%.*s", dump, (int)n, q)) ==
		    NULL)
			goto nomem;
	}
	r->query = dump;
	return 0;
nomem:
	resp_error(r, 500, "internal_server_error", "out of memory");
	return -1;
}

int
web_api_enter(struct req *r, unsigned flags)
{
	struct web_user	 u;
	const char	*ct;

	if (web_auth(r, &u) != 0)
		return -1;
	if ((flags & WEB_RUN) && rate_limit(r, u.app_id, u.session) != 0)
		return -1;
	if (strcmp(r->method, "GET") == 0)
		return as_user(r, &u, USER_QUERY, NULL);
	ct = r->content_type ? r->content_type : "";
	if (multipart_is_form(ct))
		return as_user(r, &u, USER_FORM, NULL);
	return as_user(r, &u, USER_JSON, (flags & WEB_STREAM) ?
	    "{\"response_mode\":\"streaming\"}" : NULL);
}

/* GET /api/messages/{id}/suggested-questions: the service API's
 * .../suggested under another name. */
static void
h_suggested(struct req *r)
{
	void (*h)(struct req *) = service_handler("GET",
	    "/v1/messages/{}/suggested");

	if (web_api_enter(r, WEB_ROUTE) == 0)
		h(r);
}

/* ====== Pinned conversations ====== */

/*
 * Pins and saved messages are the web app's own (the service API has
 * neither): a list of ids an end user keeps, newest first, under
 * "<family>/<app id>/<end user id>" in the settings database.
 */
struct id_list_op {
	const char	*key;
	const char	*id;
	int		 add;		/* else remove */
	int		 max;		/* ids at most: STORE_EFULL past it */
};

static int
id_list_write(struct store_txn *t, void *arg)
{
	struct id_list_op	*op = arg;
	json_t			*rec = NULL, *ids, *v;
	size_t			 i;
	int			 rc = 0;

	rc = store_get_json(t, STORE_DB_SETTINGS, op->key, &rec);
	if (rc == STORE_ENOTFOUND)
		rec = json_pack("{s:[]}", "ids");
	else if (rc != 0)
		return rc;
	ids = json_object_get(rec, "ids");
	if (!json_is_array(ids)) {
		json_decref(rec);
		return STORE_EINVAL;
	}
	json_array_foreach(ids, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v),
		    op->id) == 0)
			break;
	rc = 0;
	if (op->add && i == json_array_size(ids)) {
		if ((int)i >= op->max) {
			json_decref(rec);
			return STORE_EFULL;
		}
		rc = json_array_insert_new(ids, 0, json_string(op->id));
	} else if (!op->add && i < json_array_size(ids))
		rc = json_array_remove(ids, i);
	if (rc == 0)
		rc = store_put_json(t, STORE_DB_SETTINGS, op->key, rec, 0);
	else
		rc = STORE_ENOMEM;
	json_decref(rec);
	return rc;
}

/*
 * Adds (or removes) id in the list family of u, at most max: 0, or -1
 * after answering (400 naming what past max).
 */
static int
id_list_set(struct req *r, const struct web_user *u, const char *family,
    const char *id, int add, int max, const char *what)
{
	struct id_list_op	op;
	int			rc;

	op.key = arena_printf(r->a, "%s%s/%s", family, u->app_id,
	    u->end_user_id);
	op.id = id;
	op.add = add;
	op.max = max;
	if (op.key == NULL) {
		resp_error(r, 500, "internal_server_error", "out of memory");
		return -1;
	}
	rc = store_write(engine_store(r->eng), id_list_write, &op);
	if (rc == STORE_EFULL)
		resp_error(r, 400, "invalid_param", "at most %d %s", max, what);
	else if (rc != 0)
		resp_store_error(r, rc, what);
	return rc == 0 ? 0 : -1;
}

/* The ids of list family of u (a new reference, an array), or NULL after
 * a 5xx. */
static json_t *
id_list_of(struct req *r, const struct web_user *u, const char *family)
{
	struct store_txn	*t = NULL;
	const char		*key;
	json_t			*rec = NULL, *ids;
	int			 rc;

	key = arena_printf(r->a, "%s%s/%s", family, u->app_id,
	    u->end_user_id);
	if (key == NULL) {
		resp_error(r, 500, "internal_server_error", "out of memory");
		return NULL;
	}
	if ((rc = store_read_begin(engine_store(r->eng), &t)) != 0) {
		resp_store_error(r, rc, family);
		return NULL;
	}
	rc = store_get_json(t, STORE_DB_SETTINGS, key, &rec);
	store_read_end(t);
	if (rc != 0 && rc != STORE_ENOTFOUND) {
		resp_store_error(r, rc, family);
		return NULL;
	}
	ids = json_object_get(rec, "ids");
	ids = json_is_array(ids) ? json_incref(ids) : json_array();
	json_decref(rec);
	return ids;
}

static int
pinned(const json_t *ids, const char *id)
{
	const json_t	*v;
	size_t		 i;

	json_array_foreach(ids, i, v)
		if (id != NULL && json_is_string(v) &&
		    strcmp(json_string_value(v), id) == 0)
			return 1;
	return 0;
}

/* PATCH /api/conversations/{id}/pin and .../unpin */
static void
pin_set(struct req *r, int pin)
{
	struct web_user	 u;
	json_t		*conv = NULL;
	int		 rc;

	if (web_auth(r, &u) != 0)
		return;
	/* only a conversation of this end user (another's is 404) */
	if ((rc = engine_conversation_get(r->eng, u.app_id, u.session,
	    r->captures[0], &conv)) != 0) {
		if (rc == ENGINE_ENOTFOUND)
			resp_error(r, 404, "not_found", "Conversation Not "
			    "Exists.");
		else
			resp_engine_error(r, rc, "", "conversation");
		return;
	}
	json_decref(conv);
	if (id_list_set(r, &u, PINS_KEY, r->captures[0], pin, PINS_MAX,
	    "conversations can be pinned") == 0)
		resp_json(r, 200, json_pack("{s:s}", "result", "success"));
}

static void h_pin(struct req *r) { pin_set(r, 1); }
static void h_unpin(struct req *r) { pin_set(r, 0); }

/*
 * GET /api/conversations?pinned=&last_id=&limit=&sort_by=: the service
 * API's list with "pinned" on each; pinned=true keeps the pinned ones,
 * pinned=false the others (within the page the engine gave).
 */
static void
h_conversations(struct req *r)
{
	struct web_user		 u;
	struct conv_page	 pg;
	const char		*want;
	char			 err[ENGINE_ERRMAX] = "";
	json_t			*out = NULL, *ids = NULL, *data, *keep, *c;
	size_t			 i;
	int			 rc, p;

	if (web_auth(r, &u) != 0)
		return;
	memset(&pg, 0, sizeof(pg));
	if (req_query_int(r, "limit", 20, 1, 100, &pg.limit) != 0)
		return;
	pg.last_id = req_query(r, "last_id");
	pg.sort_by = req_query(r, "sort_by");
	want = req_query(r, "pinned");
	if ((ids = id_list_of(r, &u, PINS_KEY)) == NULL)
		return;
	rc = engine_conversation_list(r->eng, u.app_id, u.session, &pg, err,
	    &out);
	if (rc != 0) {
		json_decref(ids);
		if (rc == ENGINE_ENOTFOUND)
			resp_error(r, 404, "not_found", "%s", *err ? err :
			    "Last Conversation Not Exists.");
		else
			resp_engine_error(r, rc, err, "conversation");
		return;
	}
	data = json_object_get(out, "data");
	keep = json_array();
	json_array_foreach(data, i, c) {
		p = pinned(ids, json_string_value(json_object_get(c, "id")));
		if (want != NULL && *want != '\0' &&
		    (strcmp(want, "true") == 0) != p)
			continue;
		json_object_set_new(c, "pinned", json_boolean(p));
		json_array_append(keep, c);
	}
	json_object_set_new(out, "data", keep);
	json_decref(ids);
	resp_json(r, 200, out);
}

/* ====== Completion apps: saved messages, more like this ====== */

/*
 * The passport's app when it is a completion app: 0 with *app (the live
 * app, a new reference), or -1 after answering (Dify's not_completion_app
 * for another mode).
 */
static int
completion_app(struct req *r, const struct web_user *u, json_t **app)
{
	const char	*mode;
	int		 rc;

	*app = NULL;
	if ((rc = engine_app_get_live(r->eng, u->app_id, app)) != 0) {
		resp_engine_error(r, rc, "", "app");
		return -1;
	}
	mode = json_string_value(json_object_get(*app, "mode"));
	if (mode == NULL || strcmp(mode, "completion") != 0) {
		json_decref(*app);
		*app = NULL;
		resp_error(r, 400, "not_completion_app", "Please check if your "
		    "Completion app mode matches the right API route.");
		return -1;
	}
	return 0;
}

/* The end user's message id (a new reference), or NULL after 404. */
static json_t *
own_message(struct req *r, const struct web_user *u, const char *id)
{
	json_t	*msg = NULL;
	int	 rc;

	if ((rc = engine_message_get(r->eng, u->app_id, u->session, id,
	    &msg)) != 0) {
		if (rc == ENGINE_ENOTFOUND)
			resp_error(r, 404, "not_found", "Message Not Exists.");
		else
			resp_engine_error(r, rc, "", "message");
		return NULL;
	}
	return msg;
}

/*
 * GET /api/saved-messages?last_id=&limit=: the end user's saved messages,
 * newest saved first, as Dify's SavedMessageInfiniteScrollPagination
 * ({limit, has_more, data: [{id, inputs, query, answer, message_files,
 * feedback, created_at}]}); a message deleted since is left out.
 */
static void
h_saved_list(struct req *r)
{
	struct web_user	 u;
	const char	*last;
	json_t		*app = NULL, *ids = NULL, *data = NULL, *v, *msg;
	size_t		 i, start = 0;
	int		 limit, n = 0, more = 0;

	if (web_auth(r, &u) != 0 || completion_app(r, &u, &app) != 0)
		return;
	if (req_query_int(r, "limit", 20, 1, 100, &limit) != 0 ||
	    (ids = id_list_of(r, &u, SAVED_KEY)) == NULL)
		goto out;
	last = req_query(r, "last_id");
	if (last != NULL && *last != '\0') {
		json_array_foreach(ids, i, v)
			if (strcmp(json_string_value(v) ?
			    json_string_value(v) : "", last) == 0)
				break;
		if (i == json_array_size(ids)) {
			resp_error(r, 404, "not_found", "Message Not Exists.");
			goto out;
		}
		start = i + 1;
	}
	data = json_array();
	for (i = start; data != NULL && i < json_array_size(ids); i++) {
		if (engine_message_get(r->eng, u.app_id, u.session,
		    json_string_value(json_array_get(ids, i)), &msg) != 0)
			continue;
		if (n == limit) {
			json_decref(msg);
			more = 1;
			break;
		}
		json_array_append_new(data, json_pack("{s:O?,s:O?,s:O?,s:O?,"
		    "s:[],s:O?,s:O?}", "id", json_object_get(msg, "id"),
		    "inputs", json_object_get(msg, "inputs"), "query",
		    json_object_get(msg, "query"), "answer",
		    json_object_get(msg, "answer"), "message_files", "feedback",
		    json_object_get(msg, "feedback"), "created_at",
		    json_object_get(msg, "created_at")));
		json_decref(msg);
		n++;
	}
	resp_json(r, 200, json_pack("{s:i,s:b,s:o}", "limit", limit,
	    "has_more", more, "data", data));
out:
	json_decref(ids);
	json_decref(app);
}

/* POST /api/saved-messages {message_id}: saves one of the end user's
 * messages (again: nothing changes). */
static void
h_saved_add(struct req *r)
{
	struct web_user	 u;
	const char	*id;
	json_t		*app = NULL, *msg = NULL;

	if (web_auth(r, &u) != 0 || completion_app(r, &u, &app) != 0)
		return;
	if (req_read_json(r) != 0 ||
	    req_json_string(r, "message_id", 1, &id) != 0)
		goto out;
	if ((msg = own_message(r, &u, id)) == NULL)
		goto out;
	if (id_list_set(r, &u, SAVED_KEY, id, 1, r->conf->webapp_saved_max,
	    "saved messages (webapp.saved_messages_max)") == 0)
		resp_json(r, 200, json_pack("{s:s}", "result", "success"));
out:
	json_decref(msg);
	json_decref(app);
}

/* DELETE /api/saved-messages/{id}: 204, as Dify's (also for one that was
 * not saved). */
static void
h_saved_delete(struct req *r)
{
	struct web_user	 u;
	json_t		*app = NULL;

	if (web_auth(r, &u) != 0 || completion_app(r, &u, &app) != 0)
		return;
	if (id_list_set(r, &u, SAVED_KEY, r->captures[0], 0, 0,
	    "saved messages") == 0)
		resp_empty(r, 204);
	json_decref(app);
}

/*
 * GET /api/messages/{id}/more-like-this?response_mode=blocking|streaming:
 * a completion app (with more_like_this enabled) answers the end user's
 * message's inputs and query again, as a new message, through the service
 * API's completion handler, at temperature 0.9 as Dify's
 * generate_more_like_this sets it (the app's other parameters kept).
 */
static void
h_more_like_this(struct req *r)
{
	struct web_user	 u;
	const char	*mode = req_query(r, "response_mode");
	const json_t	*feat;
	json_t		*app = NULL, *msg = NULL, *body = NULL, *params = NULL;
	char		*dump = NULL;
	void		 (*h)(struct req *) = service_handler("POST",
	    "/v1/completion-messages");

	if (web_auth(r, &u) != 0 || completion_app(r, &u, &app) != 0)
		return;
	if (mode == NULL || (strcmp(mode, "blocking") != 0 &&
	    strcmp(mode, "streaming") != 0)) {
		resp_error(r, 400, "invalid_param", "response_mode must be "
		    "blocking or streaming");
		goto out;
	}
	feat = json_object_get(json_object_get(json_object_get(app, "dsl"),
	    "model_config"), "more_like_this");
	if (!json_is_true(json_object_get(feat, "enabled"))) {
		resp_error(r, 403, "app_more_like_this_disabled", "The 'More "
		    "like this' feature is disabled. Please refresh your "
		    "page.");
		goto out;
	}
	if ((msg = own_message(r, &u, r->captures[0])) == NULL)
		goto out;
	if (rate_limit(r, u.app_id, u.session) != 0)
		goto out;
	body = json_pack("{s:O?,s:O?,s:s,s:s}", "inputs",
	    json_object_get(msg, "inputs"), "query", json_object_get(msg,
	    "query"), "response_mode", mode, "user", u.session);
	params = json_pack("{s:f}", "temperature", 0.9);
	if (body == NULL || params == NULL || (dump = json_dumps(body,
	    JSON_COMPACT)) == NULL || (r->body = arena_strdup(r->a, dump)) ==
	    NULL) {
		resp_error(r, 500, "internal_server_error", "out of memory");
		goto out;
	}
	r->body_len = strlen(r->body);
	r->content_length = (int64_t)r->body_len;
	r->content_type = "application/json";
	r->json = NULL;
	r->model_params = params;
	h(r);
	r->model_params = NULL;
out:
	free(dump);
	json_decref(params);
	json_decref(body);
	json_decref(msg);
	json_decref(app);
}

/* ====== Remote files ====== */

/*
 * POST /api/remote-files/upload {url}: the file at url fetched through
 * the outbound guard (no private addresses unless http.allow_private) and
 * kept as an upload of the app, 201 with Dify's file fields and the url.
 */
static void
h_remote_upload(struct req *r)
{
	struct web_user	 u;
	const char	*url;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*out = NULL;
	int		 rc;

	if (web_auth(r, &u) != 0)
		return;
	if (req_read_json(r) != 0 || req_json_string(r, "url", 1, &url) != 0)
		return;
	if (rate_limit(r, u.app_id, u.session) != 0)
		return;
	rc = engine_upload_fetch(r->eng, u.app_id, u.session, url, err, &out);
	if (rc == ENGINE_EFETCH) {
		resp_error(r, 400, "remote_file_upload_failed", "Failed to "
		    "fetch file from %s: %s", url, err);
		return;
	}
	if (rc != 0) {
		resp_engine_error(r, rc, err, "file");
		return;
	}
	json_object_set_new(out, "url", json_string(url));
	resp_json(r, 201, out);
}

/*
 * GET /api/remote-files/{url}: Dify's RemoteFileInfoApi, the url (one
 * path segment, percent-encoded as Dify's front end sends it) probed with
 * a HEAD through the outbound guard: {file_type, file_length}. A probe
 * that fails is 400 remote_file_upload_failed, as Dify's.
 */
static void
h_remote_info(struct req *r)
{
	struct web_user	 u;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*out = NULL;
	int		 rc;

	if (web_auth(r, &u) != 0)
		return;
	/* it makes an outbound request: counted as a run is */
	if (rate_limit(r, u.app_id, u.session) != 0)
		return;
	rc = engine_upload_probe(r->eng, r->captures[0], err, &out);
	if (rc == ENGINE_EFETCH) {
		resp_error(r, 400, "remote_file_upload_failed", "Failed to "
		    "fetch file from %s: %s", r->captures[0], err);
		return;
	}
	if (rc != 0) {
		resp_engine_error(r, rc, err, "file");
		return;
	}
	resp_json(r, 200, out);
}

/* ====== Workflow events ====== */

/*
 * GET /api/workflow/{task_id}/events: Dify's WorkflowEventsApi, the
 * events of a workflow or chatflow run the end user started, for a page
 * that reloads mid-run (engine_run_events: the run's event log replayed
 * then followed, or its stored end). Another end user's run is 404.
 * Dify's include_state_snapshot and Last-Event-ID cursor are not read:
 * the replay is always from the run's first event kept.
 */
static void
h_workflow_events(struct req *r)
{
	struct web_user u;

	if (web_auth(r, &u) != 0)
		return;
	sse_follow(r, u.app_id, u.session, r->captures[0]);
}

/* ====== The site, features, access ====== */

/* GET /api/site: Dify's WebAppSiteResponse. */
static void
h_site(struct req *r)
{
	struct web_user	 u;
	json_t		*app = NULL, *site, *res;
	int		 rc;

	if (web_auth(r, &u) != 0)
		return;
	if ((rc = engine_app_get(r->eng, u.app_id, &app)) != 0) {
		resp_engine_error(r, rc, NULL, "app");
		return;
	}
	site = web_site_view(r, u.site);
	res = site == NULL ? NULL : json_pack("{s:s,s:O,s:s,s:b,s:o,s:n,"
	    "s:s,s:b,s:n}", "app_id", u.app_id, "mode", json_object_get(app,
	    "mode"), "end_user_id", u.end_user_id, "enable_site", 1, "site",
	    site, "model_config", "plan", "basic", "can_replace_logo", 0,
	    "custom_config");
	if (res != NULL) {
		/* what the page needs of the web app, not the console's */
		json_object_del(json_object_get(res, "site"), "access_token");
		json_object_del(json_object_get(res, "site"), "code");
		json_object_del(json_object_get(res, "site"), "app_base_url");
		json_object_del(json_object_get(res, "site"),
		    "customize_token_strategy");
		json_object_del(json_object_get(res, "site"),
		    "customize_domain");
		json_object_del(json_object_get(res, "site"), "created_by");
		json_object_del(json_object_get(res, "site"), "updated_by");
	}
	json_decref(app);
	resp_json(r, 200, res);
}

/* GET /api/system-features: the community edition's, no web app login. */
static void
h_system_features(struct req *r)
{
	resp_json(r, 200, json_pack("{s:s,s:{s:b,s:b,s:n,s:b,s:b,s:b},"
	    "s:{s:b},s:b,s:b}", "deployment_edition", "COMMUNITY",
	    "webapp_auth", "enabled", 0, "allow_sso", 0, "sso_config",
	    "allow_email_code_login", 0, "allow_email_password_login", 0,
	    "allow_public_access", 1, "branding", "enabled", 0,
	    "enable_marketplace", 0, "enable_web_sso_switch_component", 0));
}

/* GET /api/webapp/access-mode?appCode= or ?appId=: always public. */
static void
h_access_mode(struct req *r)
{
	resp_json(r, 200, json_pack("{s:s}", "accessMode", "public"));
}

/* GET /api/login/status: no web app login here, so always logged in; the
 * app is when the request carries a passport that checks. */
static void
h_login_status(struct req *r)
{
	resp_json(r, 200, json_pack("{s:b,s:b}", "logged_in", 1,
	    "app_logged_in", 0));
}

const struct route web_api_routes[] = {
	{ "GET", "/api/passport", h_passport, AUTH_NONE },
	{ "GET", "/api/system-features", h_system_features, AUTH_NONE },
	{ "GET", "/api/webapp/access-mode", h_access_mode, AUTH_NONE },
	{ "GET", "/api/login/status", h_login_status, AUTH_NONE },
	{ "GET", "/api/site", h_site, AUTH_NONE },
	{ "GET", "/api/conversations", h_conversations, AUTH_NONE },
	{ "PATCH", "/api/conversations/{}/pin", h_pin, AUTH_NONE },
	{ "PATCH", "/api/conversations/{}/unpin", h_unpin, AUTH_NONE },
	{ "GET", "/api/messages/{}/suggested-questions", h_suggested,
	    AUTH_NONE },
	{ "GET", "/api/messages/{}/more-like-this", h_more_like_this,
	    AUTH_NONE },
	{ "GET", "/api/saved-messages", h_saved_list, AUTH_NONE },
	{ "POST", "/api/saved-messages", h_saved_add, AUTH_NONE },
	{ "DELETE", "/api/saved-messages/{}", h_saved_delete, AUTH_NONE },
	{ "POST", "/api/remote-files/upload", h_remote_upload, AUTH_NONE },
	{ "GET", "/api/remote-files/{}", h_remote_info, AUTH_NONE },
	{ "GET", "/api/workflow/{}/events", h_workflow_events, AUTH_NONE },
	{ NULL, NULL, NULL, AUTH_NONE },
};
