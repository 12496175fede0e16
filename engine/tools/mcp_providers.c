/*
 * mcp_providers.c — MCP servers the admin registers (Dify's
 * /console/api/workspaces/current/tool-provider/mcp family), and where a
 * tool call's MCP server is and whether it is trusted.
 *
 * A registered server is a custom tool provider of type "mcp" kept with
 * the others (store.c: "tool_provider/<name>" in the settings database):
 * {id, name, type, description, server_identifier, icon, icon_type,
 * icon_background, server_url_enc, server_url_hash, server_url_masked,
 * headers_enc {name: sealed value}, authentication_enc {client_id,
 * client_secret}, configuration {timeout, sse_read_timeout}, authed,
 * tools (the server's tools/list), created_at, updated_at}. The URL (it
 * may carry a key in its query, as Dify's amap example does), every
 * header value and the OAuth client are sealed with secret_encrypt (aad
 * "tool_provider/<id>/<field>"); the URL is also kept as its SHA-256, to
 * find a server an app names by URL without opening every record. What
 * the API shows is Dify's ToolProviderApiEntity with the URL's path and
 * query masked and every secret as ENGINE_SECRET_MASK.
 *
 * Trust. A registered server is trusted like a model provider: it may be
 * on loopback or a private network. A server URL written in app content
 * (an agent's mcp_server, a node's server_url) is trusted only when it is
 * exactly the URL of a registered server, and then that server's headers
 * and timeouts are used; otherwise it meets the SSRF guard
 * (http.allow_private) with the headers the app gave.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/evp.h>

#include "engine/records/records.h"
#include "engine/tools/tools.h"

#define MCP_MAX_IDENT	64	/* bytes of a server_identifier */
#define MCP_MAX_HEADERS	64	/* headers of one server */
#define MCP_MAX_ICON	4096	/* bytes of an icon reference */

/* ====== Helpers ====== */

static const char *
str_of(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* SHA-256 of s, in hex. */
static void
url_hash(const char *s, char hex[65])
{
	unsigned char	md[32];
	unsigned int	n = 0, i;

	hex[0] = '\0';
	if (EVP_Digest(s, strlen(s), md, &n, EVP_sha256(), NULL) != 1 ||
	    n != 32)
		return;
	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

/*
 * An http(s) URL with a host, as Dify's is_valid_url checks. Returns 1
 * when it is one.
 */
static int
url_ok(const char *url)
{
	CURLU	*u;
	char	*scheme = NULL, *host = NULL;
	int	 ok = 0;

	if (url == NULL || strlen(url) > 4096 || (u = curl_url()) == NULL)
		return 0;
	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
	    (strcmp(scheme, "http") == 0 || strcmp(scheme, "https") == 0) &&
	    *host != '\0')
		ok = 1;
	curl_free(scheme);
	curl_free(host);
	curl_url_cleanup(u);
	return ok;
}

int
mcp_url_mask(const char *url, char **out)
{
	CURLU	*u;
	char	*path = NULL, *query = NULL, *s = NULL;
	int	 rc = ENGINE_ENOMEM;

	*out = NULL;
	if ((u = curl_url()) == NULL)
		return ENGINE_ENOMEM;
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK) {
		rc = ENGINE_EINVAL;
		goto out;
	}
	/* Dify masks the path; the query (a key, often) goes as well */
	if (curl_url_get(u, CURLUPART_PATH, &path, 0) == CURLUE_OK &&
	    path != NULL && strcmp(path, "/") != 0 && curl_url_set(u,
	    CURLUPART_PATH, "/******", 0) != CURLUE_OK)
		goto out;
	if (curl_url_get(u, CURLUPART_QUERY, &query, 0) == CURLUE_OK &&
	    curl_url_set(u, CURLUPART_QUERY, "******", 0) != CURLUE_OK)
		goto out;
	curl_url_set(u, CURLUPART_USER, NULL, 0);
	curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
	curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0);
	if (curl_url_get(u, CURLUPART_URL, &s, 0) != CURLUE_OK)
		goto out;
	if ((*out = strdup(s)) != NULL)
		rc = 0;
out:
	curl_free(path);
	curl_free(query);
	curl_free(s);
	curl_url_cleanup(u);
	return rc;
}

/* "tool_provider/<id>/<field>[/<name>]", the aad of a sealed value. */
static void
aad_of(const char *id, const char *field, const char *name, char *buf,
    size_t bufsz)
{
	snprintf(buf, bufsz, "tool_provider/%s/%s%s%s", id, field,
	    name ? "/" : "", name ? name : "");
}

/* Seals plain into obj[k] with the aad of (id, field, k or NULL). */
static int
seal(struct engine *e, json_t *obj, const char *k, const char *id,
    const char *field, int named, const char *plain, char *err)
{
	char	 aad[512], *enc = NULL;
	int	 rc;

	aad_of(id, field, named ? k : NULL, aad, sizeof(aad));
	if ((rc = secret_encrypt(e, aad, plain, err, &enc)) != 0)
		return rc;
	rc = json_object_set_new(obj, k, json_string(enc)) == 0 ? 0 :
	    ENGINE_ENOMEM;
	free(enc);
	return rc;
}

/* Opens obj[k] sealed with (id, field, k or NULL): *out for secret_free. */
static int
unseal(struct engine *e, const json_t *obj, const char *k, const char *id,
    const char *field, int named, char *err, char **out)
{
	const char	*enc = str_of(obj, k);
	char		 aad[512];

	*out = NULL;
	if (enc == NULL)
		return ENGINE_ENOTFOUND;
	aad_of(id, field, named ? k : NULL, aad, sizeof(aad));
	return secret_decrypt(e, aad, enc, err, out);
}

/* ====== Servers of tool calls ====== */

void
mcp_server_release(struct mcp_server *s)
{
	secret_free(s->url);
	json_decref(s->headers);
	memset(s, 0, sizeof(*s));
}

/* The seconds of configuration[k] (a number or a numeric string). */
static int
seconds_of(const json_t *conf, const char *k)
{
	const json_t	*v = json_object_get(conf, k);
	double		 d = 0;

	if (json_is_number(v))
		d = json_number_value(v);
	else if (json_is_string(v))
		d = strtod(json_string_value(v), NULL);
	if (!(d > 0))
		return 0;
	return d > 86400 ? 86400 : d < 1 ? 1 : (int)(d + 0.999);
}

int
mcp_server_from_record(struct engine *e, const json_t *rec, char *err,
    struct mcp_server *out)
{
	const char	*id = str_of(rec, "id"), *k;
	const json_t	*h;
	json_t		*v;
	char		*plain = NULL;
	int		 rc;

	memset(out, 0, sizeof(*out));
	if (id == NULL)
		return engine_invalid(err, "a stored MCP server has no id");
	out->trusted = 1;
	out->timeout = seconds_of(json_object_get(rec, "configuration"),
	    "timeout");
	out->read_timeout = seconds_of(json_object_get(rec, "configuration"),
	    "sse_read_timeout");
	if ((out->headers = json_object()) == NULL)
		return ENGINE_ENOMEM;
	if (str_of(rec, "server_url_enc") == NULL) {
		/* stored before secrets were sealed */
		if (str_of(rec, "server_url") == NULL) {
			rc = engine_invalid(err, "a stored MCP server has no "
			    "server_url");
			goto fail;
		}
		if ((out->url = strdup(str_of(rec, "server_url"))) == NULL)
			goto fail_nomem;
		json_object_foreach((json_t *)json_object_get(rec, "headers"),
		    k, v)
			if (json_is_string(v) &&
			    json_object_set(out->headers, k, v) != 0)
				goto fail_nomem;
		return 0;
	}
	if ((rc = unseal(e, rec, "server_url_enc", id, "server_url", 0, err,
	    &out->url)) != 0)
		goto fail;
	h = json_object_get(rec, "headers_enc");
	json_object_foreach((json_t *)h, k, v) {
		if ((rc = unseal(e, h, k, id, "headers", 1, err, &plain)) !=
		    0)
			goto fail;
		rc = json_object_set_new(out->headers, k, json_string(plain));
		secret_free(plain);
		if (rc != 0)
			goto fail_nomem;
	}
	return 0;
fail_nomem:
	rc = ENGINE_ENOMEM;
fail:
	mcp_server_release(out);
	return rc;
}

/*
 * The first stored MCP server record that match takes, or
 * ENGINE_ENOTFOUND. *out is a new reference.
 */
static int
record_find(struct engine *e, int (*match)(const json_t *, const void *),
    const void *arg, json_t **out)
{
	json_t	*all = NULL, *r;
	size_t	 i;
	int	 rc;

	*out = NULL;
	if ((rc = tool_provider_all(e, &all)) != 0)
		return rc;
	rc = ENGINE_ENOTFOUND;
	json_array_foreach(all, i, r)
		if (str_of(r, "type") != NULL && strcmp(str_of(r, "type"),
		    "mcp") == 0 && match(r, arg)) {
			*out = json_incref(r);
			rc = 0;
			break;
		}
	json_decref(all);
	return rc;
}

/* Matches a record by its URL's hash (hex), or its plain URL in a record
 * stored before URLs were encrypted. */
static int
match_url(const json_t *r, const void *arg)
{
	const char *const *u = arg;	/* { hex, url } */

	return (str_of(r, "server_url_hash") != NULL &&
	    strcmp(str_of(r, "server_url_hash"), u[0]) == 0) ||
	    (str_of(r, "server_url_enc") == NULL && str_of(r, "server_url") !=
	    NULL && strcmp(str_of(r, "server_url"), u[1]) == 0);
}

static int
match_id(const json_t *r, const void *id)
{
	return str_of(r, "id") != NULL && strcmp(str_of(r, "id"), id) == 0;
}

/* The registered server whose URL is url, or ENGINE_ENOTFOUND. */
static int
record_by_url(struct engine *e, const char *url, json_t **out)
{
	char		 hex[65];
	const char	*u[2] = { hex, url };

	url_hash(url, hex);
	return record_find(e, match_url, u, out);
}

int
mcp_server_for_url(struct engine *e, const char *url, const json_t *headers,
    char *err, struct mcp_server *out)
{
	json_t	*rec = NULL;
	int	 rc;

	memset(out, 0, sizeof(*out));
	if (!url_ok(url))
		return engine_invalid(err, "the MCP server URL '%.100s' is not "
		    "an http or https URL", url);
	rc = record_by_url(e, url, &rec);
	if (rc == 0) {
		rc = mcp_server_from_record(e, rec, err, out);
		json_decref(rec);
		return rc;
	}
	if (rc != ENGINE_ENOTFOUND)
		return rc;
	if ((out->url = strdup(url)) == NULL || (out->headers =
	    json_is_object(headers) ? json_deep_copy(headers) :
	    json_object()) == NULL) {
		mcp_server_release(out);
		return ENGINE_ENOMEM;
	}
	return 0;
}

/* The value of a node field: a string, or {type: constant, value}. */
static const char *
node_field(const json_t *node, const char *key)
{
	const json_t *v = json_object_get(node, key);

	if (json_is_object(v))
		v = json_object_get(v, "value");
	return json_string_value(v);
}

int
mcp_server_of_call(struct engine *e, const struct tool_call *call,
    char *err, struct mcp_server *out)
{
	json_t		*rec = NULL;
	const char	*url;
	int		 rc;

	memset(out, 0, sizeof(*out));
	rc = tool_provider_record(e, call, "mcp", err, &rec);
	if (rc == 0) {
		rc = mcp_server_from_record(e, rec, err, out);
		json_decref(rec);
		return rc;
	}
	if (rc != ENGINE_ENOTFOUND)
		return rc;
	/* no registered server: one the node names itself */
	url = node_field(call->node, "server_url");
	if (url == NULL)
		url = node_field(call->node, "mcp_server");
	if (url == NULL)
		url = node_field(json_object_get(call->node,
		    "tool_configurations"), "server_url");
	if (url == NULL)
		return ENGINE_ENOTFOUND;	/* err set by the lookup */
	return mcp_server_for_url(e, url, json_object_get(call->node,
	    "headers"), err, out);
}

/* ====== Checking what the console sends ====== */

/* Dify's payload: what create and update share, checked into *p. */
struct mcp_input {
	const char	*name, *url, *ident, *icon, *icon_type, *icon_bg;
	const json_t	*headers, *conf, *auth;
};

static int
text_ok(const char *s, size_t max)
{
	const unsigned char *p;

	if (s == NULL || *s == '\0' || strlen(s) > max)
		return 0;
	for (p = (const unsigned char *)s; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f)
			return 0;
	return 1;
}

static int
input_check(const json_t *in, struct mcp_input *p, char *err)
{
	const char	*k;
	json_t		*v;

	memset(p, 0, sizeof(*p));
	p->name = str_of(in, "name");
	p->url = str_of(in, "server_url");
	p->ident = str_of(in, "server_identifier");
	p->icon = str_of(in, "icon");
	p->icon_type = str_of(in, "icon_type");
	p->icon_bg = str_of(in, "icon_background");
	p->headers = json_object_get(in, "headers");
	p->conf = json_object_get(in, "configuration");
	p->auth = json_object_get(in, "authentication");
	if (!json_is_object(in))
		return engine_invalid(err, "the body must be a JSON object");
	if (!tool_provider_name_ok(p->name))
		return engine_invalid(err, "name: 1 to 128 characters, no "
		    "control characters");
	if (p->url == NULL)
		return engine_invalid(err, "server_url is required");
	if (!text_ok(p->ident, MCP_MAX_IDENT))
		return engine_invalid(err, "server_identifier: 1 to %d "
		    "characters, no control characters", MCP_MAX_IDENT);
	if ((p->icon != NULL && strlen(p->icon) > MCP_MAX_ICON) ||
	    (p->icon_type != NULL && strlen(p->icon_type) > 32) ||
	    (p->icon_bg != NULL && strlen(p->icon_bg) > 64))
		return engine_invalid(err, "icon: at most %d bytes",
		    MCP_MAX_ICON);
	if (p->headers != NULL && !json_is_null(p->headers)) {
		if (!json_is_object(p->headers) || json_object_size(
		    p->headers) > MCP_MAX_HEADERS)
			return engine_invalid(err, "headers: an object of at "
			    "most %d strings", MCP_MAX_HEADERS);
		json_object_foreach((json_t *)p->headers, k, v)
			if (!json_is_string(v) || *k == '\0' ||
			    strpbrk(k, "\r\n: \t") != NULL ||
			    strpbrk(json_string_value(v), "\r\n") != NULL)
				return engine_invalid(err, "headers: '%.64s' "
				    "is not a header name with a one-line "
				    "string value", k);
	} else
		p->headers = NULL;
	if (p->conf != NULL && !json_is_null(p->conf) &&
	    !json_is_object(p->conf))
		return engine_invalid(err, "configuration: an object "
		    "{timeout, sse_read_timeout}");
	if (p->auth != NULL && !json_is_null(p->auth) &&
	    (!json_is_object(p->auth) || (json_object_get(p->auth,
	    "client_id") != NULL && !json_is_string(json_object_get(p->auth,
	    "client_id"))) || (json_object_get(p->auth, "client_secret") !=
	    NULL && !json_is_null(json_object_get(p->auth,
	    "client_secret")) && !json_is_string(json_object_get(p->auth,
	    "client_secret")))))
		return engine_invalid(err, "authentication: an object "
		    "{client_id, client_secret}");
	return 0;
}

/* Seconds from configuration[k], or dflt; a number in (0, 86400]. */
static int
conf_seconds(const json_t *conf, const char *k, double dflt, double *out,
    char *err)
{
	const json_t	*v = json_object_get(conf, k);
	double		 d;
	char		*end;

	*out = dflt;
	if (v == NULL || json_is_null(v))
		return 0;
	if (json_is_number(v))
		d = json_number_value(v);
	else if (json_is_string(v)) {
		d = strtod(json_string_value(v), &end);
		if (end == json_string_value(v) || *end != '\0')
			d = -1;
	} else
		d = -1;
	if (!(d > 0 && d <= 86400))
		return engine_invalid(err, "configuration.%s: seconds, more "
		    "than 0 and at most 86400", k);
	*out = d;
	return 0;
}

/*
 * The record's sealed fields from p, over old's (NULL when new): the URL
 * unless p's is the mask (or old's masked form), headers whose value is
 * the mask keep old's, the same for the OAuth client. *url_changed says
 * whether the URL is new; *url gets it in the clear (free it).
 */
static int
record_fill(struct engine *e, json_t *rec, const json_t *old,
    const struct mcp_input *p, char *err, int *url_changed, char **url)
{
	const char	*id = str_of(rec, "id"), *k;
	json_t		*h = NULL, *a = NULL, *v, *c;
	struct mcp_server old_srv;
	char		 hex[65], *masked = NULL, *plain = NULL;
	double		 t, r;
	int		 rc;

	*url_changed = 0;
	*url = NULL;
	memset(&old_srv, 0, sizeof(old_srv));
	if (old != NULL && (rc = mcp_server_from_record(e, old, err,
	    &old_srv)) != 0)
		return rc;
	/* the URL */
	if (old != NULL && (strstr(p->url, ENGINE_SECRET_MASK) != NULL ||
	    (str_of(old, "server_url_masked") != NULL && strcmp(p->url,
	    str_of(old, "server_url_masked")) == 0)))
		*url = strdup(old_srv.url);
	else {
		if (!url_ok(p->url)) {
			rc = engine_invalid(err, "Server URL is not valid.");
			goto out;
		}
		*url = strdup(p->url);
		*url_changed = old == NULL || strcmp(p->url, old_srv.url) != 0;
	}
	if (*url == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = mcp_url_mask(*url, &masked)) != 0)
		goto out;
	url_hash(*url, hex);
	json_object_del(rec, "server_url");
	json_object_del(rec, "headers");
	if ((rc = seal(e, rec, "server_url_enc", id, "server_url", 0, *url,
	    err)) != 0)
		goto out;
	/* headers: as given; the mask keeps the value it stands for */
	if (json_object_set_new(rec, "server_url_hash", json_string(hex)) !=
	    0 || json_object_set_new(rec, "server_url_masked",
	    json_string(masked)) != 0 || (h = json_object()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	json_object_foreach((json_t *)p->headers, k, v) {
		const char *val = json_string_value(v);

		if (strcmp(val, ENGINE_SECRET_MASK) == 0) {
			val = str_of(old_srv.headers, k);
			if (val == NULL)
				continue;	/* a mask for nothing */
		}
		if ((rc = seal(e, h, k, id, "headers", 1, val, err)) != 0)
			goto out;
	}
	if (json_object_set(rec, "headers_enc", h) != 0) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	/* the OAuth client, kept sealed (flowcgi runs no OAuth flow) */
	if (p->auth != NULL && json_string_value(json_object_get(p->auth,
	    "client_id")) != NULL && *json_string_value(json_object_get(
	    p->auth, "client_id")) != '\0') {
		const char *f[2] = { "client_id", "client_secret" };
		size_t i;

		if ((a = json_object()) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		for (i = 0; i < 2; i++) {
			const char *val = json_string_value(json_object_get(
			    p->auth, f[i]));

			if (val == NULL || *val == '\0')
				continue;
			if (strcmp(val, ENGINE_SECRET_MASK) == 0) {
				/* keep what was there */
				if (old == NULL || unseal(e, json_object_get(
				    old, "authentication_enc"), f[i],
				    str_of(old, "id"), "authentication", 1,
				    err, &plain) != 0)
					continue;
				val = plain;
			}
			rc = seal(e, a, f[i], id, "authentication", 1, val,
			    err);
			secret_free(plain);
			plain = NULL;
			if (rc != 0)
				goto out;
		}
		if (json_object_set(rec, "authentication_enc", a) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	} else if (old != NULL && json_object_get(old,
	    "authentication_enc") != NULL && strcmp(str_of(old, "id"), id) ==
	    0 && json_object_set(rec, "authentication_enc",
	    json_object_get(old, "authentication_enc")) != 0) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	/* timeouts: given ones replace, others stay (30 and 300 at first) */
	c = old != NULL ? json_object_get(old, "configuration") : NULL;
	if ((rc = conf_seconds(c, "timeout", 30, &t, err)) != 0 ||
	    (rc = conf_seconds(c, "sse_read_timeout", 300, &r, err)) != 0 ||
	    (rc = conf_seconds(p->conf, "timeout", t, &t, err)) != 0 ||
	    (rc = conf_seconds(p->conf, "sse_read_timeout", r, &r, err)) != 0)
		goto out;
	if (json_object_set_new(rec, "configuration", json_pack("{s:f,s:f}",
	    "timeout", t, "sse_read_timeout", r)) != 0) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	rc = 0;
out:
	if (rc != 0) {
		secret_free(*url);
		*url = NULL;
	}
	mcp_server_release(&old_srv);
	json_decref(h);
	json_decref(a);
	free(masked);
	return rc;
}

/* ====== Storing ====== */

struct mcp_put {
	const json_t	*rec;		/* to store */
	const char	*old_name;	/* the key it had, or NULL */
	int		 replace;	/* a record of that name may go */
	char		 err[ENGINE_ERRMAX];
};

/*
 * Stores p->rec under its name, removing p->old_name's record first; no
 * other record may have its name, URL or server_identifier (Dify's
 * rules), unless p->replace lets a record of the same name go.
 */
static int
mcp_put_fn(struct store_txn *t, void *arg)
{
	struct mcp_put	*p = arg;
	json_t		*all = NULL, *r;
	const char	*k, *id = str_of(p->rec, "id");
	const char	*name = str_of(p->rec, "name");
	char		 key[256];
	int		 rc;

	p->err[0] = '\0';
	if ((rc = records_collect(t, STORE_DB_SETTINGS, TOOL_PROVIDER_PREFIX,
	    NULL, TOOL_PROVIDER_MAX, &all)) != 0)
		return rc;
	json_object_foreach(all, k, r) {
		const char *rid = str_of(r, "id"), *rn = str_of(r, "name");

		if (rid != NULL && strcmp(rid, id) == 0)
			continue;	/* itself */
		if (rn != NULL && strcmp(rn, name) == 0) {
			if (p->replace)
				continue;
			rc = engine_invalid(p->err, "MCP tool %s already "
			    "exists", name);
			goto out;
		}
		if (str_of(r, "type") == NULL || strcmp(str_of(r, "type"),
		    "mcp") != 0)
			continue;
		if (str_of(r, "server_url_hash") != NULL && strcmp(str_of(r,
		    "server_url_hash"), str_of(p->rec, "server_url_hash")) ==
		    0) {
			rc = engine_invalid(p->err, "MCP tool with this "
			    "server URL already exists");
			goto out;
		}
		if (str_of(r, "server_identifier") != NULL && strcmp(str_of(r,
		    "server_identifier"), str_of(p->rec,
		    "server_identifier")) == 0) {
			rc = engine_invalid(p->err, "MCP tool %s already "
			    "exists", str_of(r, "server_identifier"));
			goto out;
		}
	}
	if (p->old_name != NULL && strcmp(p->old_name, name) != 0) {
		snprintf(key, sizeof(key), TOOL_PROVIDER_PREFIX "%s",
		    p->old_name);
		if ((rc = store_del(t, STORE_DB_SETTINGS, key, strlen(key))) !=
		    0 && rc != STORE_ENOTFOUND)
			goto out;
	}
	snprintf(key, sizeof(key), TOOL_PROVIDER_PREFIX "%s", name);
	rc = store_put_json(t, STORE_DB_SETTINGS, key, p->rec, 0);
out:
	json_decref(all);
	return rc;
}

static int
record_store(struct engine *e, const json_t *rec, const char *old_name,
    int replace, char *err)
{
	struct mcp_put	p;
	int		rc;

	memset(&p, 0, sizeof(p));
	p.rec = rec;
	p.old_name = old_name;
	p.replace = replace;
	rc = engine_from_store(store_write(e->store, mcp_put_fn, &p));
	if (rc != 0 && p.err[0] != '\0')
		snprintf(err, ENGINE_ERRMAX, "%s", p.err);
	return rc;
}

/* The stored record of MCP server id. */
static int
record_by_id(struct engine *e, const char *id, json_t **out)
{
	*out = NULL;
	if (id == NULL)
		return ENGINE_ENOTFOUND;
	return record_find(e, match_id, id, out);
}

int
mcp_record_build(struct engine *e, const json_t *in, const json_t *old,
    char *err, json_t **out, char **url, int *url_changed)
{
	struct mcp_input	 p;
	json_t			*rec = NULL;
	char			 uuid[37];
	const char		*id;
	int64_t			 now = engine_now();
	int			 rc;

	*out = NULL;
	*url = NULL;
	if ((rc = input_check(in, &p, err)) != 0)
		return rc;
	engine_uuid(uuid);
	id = str_of(in, "id") ? str_of(in, "id") : old != NULL ? str_of(old,
	    "id") : uuid;
	if (id == NULL || *id == '\0' || strlen(id) > 64)
		return engine_invalid(err, "id: 1 to 64 characters");
	rec = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:b,s:o}",
	    "id", id, "name", p.name, "type", "mcp", "description",
	    str_of(in, "description") ? str_of(in, "description") : "",
	    "server_identifier", p.ident, "icon", p.icon ? p.icon : "",
	    "icon_type", p.icon_type ? p.icon_type : "", "icon_background",
	    p.icon_bg ? p.icon_bg : "", "created_at", old != NULL ?
	    json_integer_value(json_object_get(old, "created_at")) :
	    (json_int_t)now, "updated_at", (json_int_t)now, "authed",
	    old != NULL && json_is_true(json_object_get(old, "authed")),
	    "tools", old != NULL && json_is_array(json_object_get(old,
	    "tools")) ? json_incref(json_object_get(old, "tools")) :
	    json_array());
	if (rec == NULL)
		return ENGINE_ENOMEM;
	if ((rc = record_fill(e, rec, old, &p, err, url_changed, url)) != 0) {
		json_decref(rec);
		return rc;
	}
	*out = rec;
	return 0;
}

/* ====== What the API shows (Dify's ToolProviderApiEntity) ====== */

static json_t *
i18n(const char *s)
{
	return json_pack("{s:s,s:s}", "en_US", s, "zh_Hans", s);
}

/* One MCP tool as Dify's ToolApiEntity, parameters from inputSchema. */
static json_t *
tool_view(const json_t *t)
{
	const json_t	*schema = json_object_get(t, "inputSchema"), *pr, *tv;
	const json_t	*req = json_object_get(schema, "required");
	const char	*name = str_of(t, "name"), *desc, *pname, *type;
	json_t		*params, *p, *x;
	size_t		 i;
	int		 required;

	desc = str_of(t, "description") ? str_of(t, "description") : "";
	if ((params = json_array()) == NULL)
		return NULL;
	json_object_foreach((json_t *)json_object_get(schema, "properties"),
	    pname, pr) {
		const char *pd = str_of(pr, "description") ? str_of(pr,
		    "description") : "";

		tv = json_object_get(pr, "type");
		if (json_is_array(tv))
			tv = json_array_get(tv, 0);
		type = json_string_value(tv) ? json_string_value(tv) :
		    "string";
		if (strcmp(type, "integer") == 0 || strcmp(type, "float") == 0)
			type = "number";
		else if (strcmp(type, "string") != 0 && strcmp(type,
		    "number") != 0 && strcmp(type, "boolean") != 0 &&
		    strcmp(type, "array") != 0 && strcmp(type, "object") != 0)
			type = "string";
		required = 0;
		json_array_foreach(req, i, x)
			if (json_is_string(x) && strcmp(json_string_value(x),
			    pname) == 0)
				required = 1;
		p = json_pack("{s:s,s:o,s:n,s:n,s:n,s:n,s:b,s:n,s:n,s:n,s:n,"
		    "s:[],s:s,s:o,s:s,s:s}", "name", pname, "label",
		    i18n(pname), "placeholder", "scope", "auto_generate",
		    "template", "required", required, "default", "min", "max",
		    "precision", "options", "type", type, "human_description",
		    i18n(pd), "form", "llm", "llm_description", pd);
		if (p != NULL && (strcmp(type, "array") == 0 ||
		    strcmp(type, "object") == 0) &&
		    json_object_set(p, "input_schema", (json_t *)pr) != 0) {
			json_decref(p);
			p = NULL;
		}
		if (p == NULL || json_array_append_new(params, p) != 0) {
			json_decref(params);
			return NULL;
		}
	}
	return json_pack("{s:s,s:s,s:o,s:o,s:o,s:[],s:o}", "author",
	    "Anonymous", "name", name, "label", i18n(name), "description",
	    i18n(desc), "parameters", params, "labels", "output_schema",
	    json_is_object(json_object_get(t, "outputSchema")) ?
	    json_deep_copy(json_object_get(t, "outputSchema")) :
	    json_object());
}

json_t *
mcp_provider_view(const json_t *rec)
{
	const char	*name = str_of(rec, "name") ? str_of(rec, "name") : "";
	const char	*icon = str_of(rec, "icon") ? str_of(rec, "icon") : "";
	const char	*k;
	const json_t	*c = json_object_get(rec, "configuration");
	json_t		*v, *tools, *t, *hm, *x;
	size_t		 i;
	int		 bad = 0;

	if ((tools = json_array()) == NULL)
		return NULL;
	/* a tool without a name is not shown; another view failing is
	 * out of memory */
	json_array_foreach(json_object_get(rec, "tools"), i, t)
		if (str_of(t, "name") != NULL && json_array_append_new(tools,
		    tool_view(t)) != 0) {
			json_decref(tools);
			return NULL;
		}
	v = json_pack("{s:s,s:s,s:s,s:s,s:s,s:o,s:s,s:o,s:s,s:{},s:b,s:b,s:o,"
	    "s:[],s:s,s:I,s:s,s:{s:f,s:f},s:b}",
	    "id", str_of(rec, "id") ? str_of(rec, "id") : "", "author",
	    "Anonymous", "name", name, "plugin_id", "",
	    "plugin_unique_identifier", "", "description", i18n(""),
	    "icon_dark", "", "label", i18n(name), "type", "mcp",
	    "team_credentials", "is_team_authorization",
	    json_is_true(json_object_get(rec, "authed")), "allow_delete", 1,
	    "tools", tools, "labels", "server_url",
	    str_of(rec, "server_url_masked") ? str_of(rec,
	    "server_url_masked") : "", "updated_at",
	    json_integer_value(json_object_get(rec, "updated_at")),
	    "server_identifier", str_of(rec, "server_identifier") ?
	    str_of(rec, "server_identifier") : "", "configuration", "timeout",
	    json_number_value(json_object_get(c, "timeout")) > 0 ?
	    json_number_value(json_object_get(c, "timeout")) : 30.0,
	    "sse_read_timeout", json_number_value(json_object_get(c,
	    "sse_read_timeout")) > 0 ? json_number_value(json_object_get(c,
	    "sse_read_timeout")) : 300.0, "is_dynamic_registration", 1);
	if (v == NULL)
		return NULL;
	/* an emoji icon is {content, background}; else a URL */
	if (str_of(rec, "icon_type") != NULL && strcmp(str_of(rec,
	    "icon_type"), "emoji") == 0)
		bad |= json_object_set_new(v, "icon", json_pack("{s:s,s:s}",
		    "content", icon, "background", str_of(rec,
		    "icon_background") ? str_of(rec, "icon_background") :
		    ""));
	else
		bad |= json_object_set_new(v, "icon", json_string(icon));
	/* secrets: their names only */
	hm = json_object();
	json_object_foreach((json_t *)json_object_get(rec, "headers_enc"), k,
	    x)
		bad |= json_object_set_new(hm, k,
		    json_string(ENGINE_SECRET_MASK));
	json_object_foreach((json_t *)json_object_get(rec, "headers"), k, x)
		bad |= json_object_set_new(hm, k,
		    json_string(ENGINE_SECRET_MASK));
	if (json_object_size(hm) > 0)
		bad |= json_object_set(v, "masked_headers", hm);
	json_decref(hm);
	if (json_object_get(rec, "authentication_enc") != NULL) {
		hm = json_object();
		json_object_foreach((json_t *)json_object_get(rec,
		    "authentication_enc"), k, x)
			bad |= json_object_set_new(hm, k,
			    json_string(ENGINE_SECRET_MASK));
		bad |= json_object_set_new(v, "authentication", hm);
	}
	if (bad) {
		json_decref(v);
		return NULL;
	}
	return v;
}

/* ====== Talking to a registered server ====== */

/* 1 when err says the server wants authorization (401 or 403). */
static int
auth_refused(const char *err)
{
	return strstr(err, "HTTP status 401") != NULL || strstr(err,
	    "HTTP status 403") != NULL;
}

/*
 * Lists the tools of server rec over a session of its own: on 0, rec has
 * them and is authed; otherwise rec has no tools and is not authed, and
 * the error (ENGINE_EFETCH for HTTP statuses, 401 and 403 included) is
 * returned with err. ENGINE_ENOMEM: rec may be neither.
 */
static int
record_connect(struct engine *e, json_t *rec, char *err)
{
	struct mcp_server	 s;
	json_t			*tools = NULL;
	int			 rc;

	if ((rc = mcp_server_from_record(e, rec, err, &s)) != 0)
		return rc;
	rc = mcp_tools(e, NULL, &s, err, &tools);
	mcp_server_release(&s);
	if (json_object_set_new(rec, "tools", rc == 0 ? tools :
	    json_array()) != 0 || json_object_set_new(rec, "authed",
	    json_boolean(rc == 0)) != 0 || json_object_set_new(rec,
	    "updated_at", json_integer(engine_now())) != 0) {
		snprintf(err, ENGINE_ERRMAX, "out of memory");
		return ENGINE_ENOMEM;
	}
	return rc;
}

/* ====== The console's calls ====== */

int
engine_mcp_provider_create(struct engine *e, const json_t *in, char *err,
    json_t **out)
{
	json_t	*rec = NULL, *in2 = NULL;
	char	*url = NULL, cerr[ENGINE_ERRMAX];
	int	 changed, rc;

	*out = NULL;
	/* the id is flowcgi's to choose, as Dify's is */
	if ((in2 = json_deep_copy(in)) == NULL)
		return ENGINE_ENOMEM;
	if (json_is_object(in2))
		json_object_del(in2, "id");
	if ((rc = mcp_record_build(e, in2, NULL, err, &rec, &url,
	    &changed)) != 0 || (rc = record_store(e, rec, NULL, 0, err)) != 0)
		goto out;
	/* the tools at once, best effort (Dify does the same) */
	if ((rc = record_connect(e, rec, cerr)) == ENGINE_ENOMEM)
		goto out;
	if (rc != 0)
		log_info("mcp: %s: %s", json_string_value(json_object_get(rec,
		    "name")), cerr);
	if ((rc = record_store(e, rec, NULL, 0, err)) != 0)
		goto out;
	if ((*out = mcp_provider_view(rec)) == NULL)
		rc = ENGINE_ENOMEM;
out:
	secret_free(url);
	json_decref(rec);
	json_decref(in2);
	return rc;
}

int
engine_mcp_provider_update(struct engine *e, const json_t *in, char *err)
{
	json_t	*old = NULL, *rec = NULL, *in2 = NULL;
	char	*url = NULL, cerr[ENGINE_ERRMAX];
	int	 changed, rc;

	if ((rc = record_by_id(e, str_of(in, "provider_id"), &old)) != 0) {
		if (rc == ENGINE_ENOTFOUND)
			snprintf(err, ENGINE_ERRMAX, "MCP tool not found");
		return rc;
	}
	/* the id stays */
	if ((in2 = json_deep_copy(in)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	json_object_del(in2, "id");
	if ((rc = mcp_record_build(e, in2, old, err, &rec, &url, &changed)) !=
	    0)
		goto out;
	if (changed) {
		/* a new URL is tried first, as Dify does */
		rc = record_connect(e, rec, cerr);
		if (rc == ENGINE_ENOMEM)
			goto out;
		if (rc != 0 && !auth_refused(cerr)) {
			rc = engine_invalid(err, "Failed to re-connect MCP "
			    "server: %s", cerr);
			goto out;
		}
	}
	rc = record_store(e, rec, str_of(old, "name"), 0, err);
out:
	secret_free(url);
	json_decref(old);
	json_decref(rec);
	json_decref(in2);
	return rc;
}

int
mcp_provider_put(struct engine *e, const json_t *in, char *err,
    json_t **out)
{
	json_t	*old = NULL, *in2 = NULL, *rec = NULL;
	char	*url = NULL;
	int	 changed, rc;

	*out = NULL;
	/* engine_tool_provider_put's form: the name is the identifier
	 * unless one is given, and a record of the same name is replaced */
	if ((in2 = json_deep_copy(in)) == NULL)
		return ENGINE_ENOMEM;
	if (str_of(in2, "server_identifier") == NULL && str_of(in2, "name") &&
	    json_object_set(in2, "server_identifier", json_object_get(in2,
	    "name")) != 0) {
		json_decref(in2);
		return ENGINE_ENOMEM;
	}
	if (tool_provider_name_ok(str_of(in2, "name")) &&
	    (rc = engine_tool_provider_get(e, str_of(in2, "name"), &old)) !=
	    0 && rc != ENGINE_ENOTFOUND)
		goto out;
	if (old != NULL && (str_of(old, "type") == NULL || strcmp(str_of(old,
	    "type"), "mcp") != 0)) {
		json_decref(old);
		old = NULL;
	}
	if ((rc = mcp_record_build(e, in2, old, err, &rec, &url,
	    &changed)) != 0 || (rc = record_store(e, rec, NULL, 1, err)) != 0)
		goto out;
	if ((*out = mcp_provider_view(rec)) == NULL)
		rc = ENGINE_ENOMEM;
out:
	secret_free(url);
	json_decref(old);
	json_decref(in2);
	json_decref(rec);
	return rc;
}

int
engine_mcp_provider_delete(struct engine *e, const char *provider_id)
{
	json_t	*old = NULL;
	int	 rc;

	if ((rc = record_by_id(e, provider_id, &old)) != 0)
		return rc;
	rc = engine_tool_provider_delete(e, str_of(old, "name"));
	json_decref(old);
	return rc;
}

int
engine_mcp_provider_get(struct engine *e, const char *provider_id,
    json_t **out)
{
	json_t	*rec = NULL;
	int	 rc;

	*out = NULL;
	if ((rc = record_by_id(e, provider_id, &rec)) != 0)
		return rc;
	if ((*out = mcp_provider_view(rec)) == NULL)
		rc = ENGINE_ENOMEM;
	json_decref(rec);
	return rc;
}

int
engine_mcp_provider_list(struct engine *e, json_t **out)
{
	json_t	*all = NULL, *arr, *r;
	size_t	 i;
	int	 rc;

	*out = NULL;
	if ((rc = tool_provider_all(e, &all)) != 0)
		return rc;
	if ((arr = json_array()) == NULL) {
		json_decref(all);
		return ENGINE_ENOMEM;
	}
	json_array_foreach(all, i, r) {
		if (str_of(r, "type") == NULL || strcmp(str_of(r, "type"),
		    "mcp") != 0)
			continue;
		if (json_array_append_new(arr, mcp_provider_view(r)) != 0) {
			rc = ENGINE_ENOMEM;
			break;
		}
	}
	json_decref(all);
	if (rc != 0)
		json_decref(arr);
	else
		*out = arr;
	return rc;
}

int
engine_mcp_provider_refresh(struct engine *e, const char *provider_id,
    int auth, char *err, json_t **out)
{
	json_t	*rec = NULL, *copy = NULL;
	char	 cerr[ENGINE_ERRMAX];
	int	 rc, crc;

	if (out != NULL)
		*out = NULL;
	if ((rc = record_by_id(e, provider_id, &rec)) != 0) {
		if (rc == ENGINE_ENOTFOUND)
			snprintf(err, ENGINE_ERRMAX, "MCP tool not found");
		return rc;
	}
	if ((copy = json_deep_copy(rec)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	crc = record_connect(e, copy, cerr);
	/* what was learnt is kept, good or bad (Dify clears a failed auth) */
	if ((crc == 0 || auth) && (rc = record_store(e, copy, str_of(rec,
	    "name"), 1, err)) != 0)
		goto out;
	if (crc != 0) {
		if (auth_refused(cerr))
			rc = engine_invalid(err, "the MCP server wants "
			    "authorization (%s); flowcgi has no OAuth flow: "
			    "give the server's token in headers", cerr);
		else
			rc = engine_invalid(err, "Failed to connect to MCP "
			    "server: %s", cerr);
		goto out;
	}
	if (out != NULL && (*out = mcp_provider_view(copy)) == NULL)
		rc = ENGINE_ENOMEM;
out:
	json_decref(rec);
	json_decref(copy);
	return rc;
}
