/*
 * http_request.c — the http-request node, after Dify's
 * nodes/http_request/{node,executor}.py.
 *
 * {{#...#}} references are expanded in the URL, the headers (the whole
 * "k:v" text, then split into lines), each params line, the API key and
 * the body items. Authorization api-key: bearer -> "Bearer <key>", basic
 * -> "Basic " + base64 of "user:pass" (a key without ':' is taken as
 * already encoded, as Dify does), custom -> the named header (default
 * Authorization) set to the key. Body types none, form-data (text items
 * and file items whose bytes files.c can reach), x-www-form-urlencoded,
 * raw-text, json (expanded, then sent as written), binary; a Content-Type
 * is added per body type unless the headers give one. The request goes
 * through outbound_fetch with the SSRF guard, following redirects.
 *
 * Outputs: status_code, body (text; "" for a file), headers (an object
 * with lower-case names), files (a binary response becomes one file
 * object carrying its bytes as a data: URL, see nodes.h). A non-2xx status
 * fails the node only when it has an error strategy or retries, as in
 * Dify, so that retry / default-value / fail-branch apply.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/rand.h>

#include "engine/nodes/nodes.h"

/* Dify's maxima for the node's timeouts, seconds. */
#define HTTP_MAX_CONNECT	10
#define HTTP_MAX_READ		600
#define HTTP_MAX_WRITE		600
/* Bytes of a request body shown in the node's process_data. */
#define HTTP_LOG_BODY		65536

struct req {
	struct node_ctx		*c;
	char			 method[16];
	char			*url;		/* with params */
	json_t			*headers;	/* name -> value, in order */
	struct dbuf		 body;
	int			 has_body;
	const char		*ctype;		/* default Content-Type */
	char			 boundary[64];
	const char		*auth_header;	/* masked in the log */
	int			 connect, read, write;
};

/* ====== Small helpers ====== */

static int
render(struct node_ctx *c, const char *tpl, char **out)
{
	return node_render(c, tpl ? tpl : "", TPL_TEXT, out);
}

/* Appends s urlencoded as Python's quote_plus does. */
static void
sb_quote_plus(struct dbuf *sb, const char *s)
{
	static const char	hex[] = "0123456789ABCDEF";
	char			enc[3];
	unsigned char		ch;

	for (; *s != '\0'; s++) {
		ch = (unsigned char)*s;
		if (isalnum(ch) || ch == '_' || ch == '.' || ch == '-' ||
		    ch == '~')
			dbuf_add(sb, s, 1);
		else if (ch == ' ')
			dbuf_add(sb, "+", 1);
		else {
			enc[0] = '%';
			enc[1] = hex[ch >> 4];
			enc[2] = hex[ch & 15];
			dbuf_add(sb, enc, 3);
		}
	}
}

/* A multipart name: quotes and line breaks escaped as browsers do. */
static void
sb_part_name(struct dbuf *sb, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '"')
			dbuf_addstr(sb, "%22");
		else if (*s == '\r')
			dbuf_addstr(sb, "%0D");
		else if (*s == '\n')
			dbuf_addstr(sb, "%0A");
		else
			dbuf_add(sb, s, 1);
	}
}

static char *
strip(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int
has_header(const json_t *headers, const char *name)
{
	const char	*k;
	json_t		*v;

	json_object_foreach((json_t *)headers, k, v)
		if (strcasecmp(k, name) == 0)
			return 1;
	return 0;
}

static void
del_header(json_t *headers, const char *name)
{
	const char	*k;
	json_t		*v;
	void		*tmp;

	json_object_foreach_safe(headers, tmp, k, v)
		if (strcasecmp(k, name) == 0)
			json_object_del(headers, k);
}

/* Text as valid UTF-8: latin-1 decoded when charset says so, malformed
 * bytes as U+FFFD. *out is malloc'd. */
static int
to_utf8(const char *p, size_t n, const char *ctype, char **out)
{
	struct dbuf	 sb = { 0 };
	const char	*cs = ctype ? strcasestr(ctype, "charset=") : NULL;
	size_t		 i, l;
	int		 latin1 = 0;

	if (cs != NULL) {
		cs += 8;
		if (*cs == '"')
			cs++;
		latin1 = strncasecmp(cs, "iso-8859-1", 10) == 0 ||
		    strncasecmp(cs, "latin1", 6) == 0 ||
		    strncasecmp(cs, "latin-1", 7) == 0;
	}
	for (i = 0; i < n; i += l) {
		if (latin1) {
			tpl_add_utf8(&sb, (unsigned char)p[i]);
			l = 1;
		} else if ((unsigned char)p[i] < 0x80) {
			dbuf_add(&sb, p + i, 1);
			l = 1;
		} else
			tpl_add_utf8(&sb, tpl_utf8_next(p + i, n - i, &l));
	}
	*out = dbuf_take(&sb, NULL);
	return *out == NULL ? -1 : 0;
}

/* Dify's Response.is_file, from the Content-Type alone. */
static int
is_file_type(const char *ct)
{
	char	base[128];
	size_t	n, i;

	if (ct == NULL)
		return 0;
	n = strcspn(ct, ";");
	while (n > 0 && isspace((unsigned char)ct[n - 1]))
		n--;
	if (n == 0 || n >= sizeof(base))
		return 0;
	for (i = 0; i < n; i++)
		base[i] = (char)tolower((unsigned char)ct[i]);
	base[n] = '\0';
	if (strncmp(base, "text/", 5) == 0 || strstr(base, "json") != NULL ||
	    strstr(base, "xml") != NULL || strstr(base, "javascript") !=
	    NULL || strstr(base, "yaml") != NULL || strcmp(base,
	    "application/x-www-form-urlencoded") == 0 || strcmp(base,
	    "application/graphql") == 0)
		return 0;
	return strncmp(base, "application/", 12) == 0 ||
	    strncmp(base, "image/", 6) == 0 || strncmp(base, "audio/", 6) ==
	    0 || strncmp(base, "video/", 6) == 0;
}

/* ====== Building the request ====== */

static int
init_method(struct req *q)
{
	static const char *const ok[] = { "GET", "HEAD", "POST", "PUT",
		"DELETE", "PATCH", "OPTIONS", NULL };
	const char	*m = node_str(q->c->node, "method");
	size_t		 i;

	if (m == NULL)
		m = "get";
	for (i = 0; m[i] != '\0' && i + 1 < sizeof(q->method); i++)
		q->method[i] = (char)toupper((unsigned char)m[i]);
	q->method[i] = '\0';
	for (i = 0; ok[i] != NULL; i++)
		if (strcmp(ok[i], q->method) == 0)
			return 0;
	q->c->error_type = "InvalidHttpMethodError";
	return node_fail(q->c, "Invalid http method %s", m);
}

/* The URL with the params lines appended as a query. */
static int
init_url(struct req *q)
{
	struct dbuf	 sb = { 0 };
	char		*url = NULL, *params = NULL, *line, *next, *colon;
	char		*k = NULL, *v = NULL;
	const char	*ptpl = node_str(q->c->node, "params");
	size_t		 frag;
	int		 rc = -1, first;

	if (render(q->c, node_str(q->c->node, "url"), &url) != 0)
		goto out;
	if (*url == '\0' || (strncasecmp(url, "http://", 7) != 0 &&
	    strncasecmp(url, "https://", 8) != 0)) {
		q->c->error_type = "InvalidURLError";
		node_fail(q->c, *url == '\0' ? "url is required" : "url "
		    "should start with http:// or https://");
		goto out;
	}
	frag = strcspn(url, "#");
	dbuf_add(&sb, url, frag);
	first = memchr(url, '?', frag) == NULL;
	if ((params = strdup(ptpl ? ptpl : "")) == NULL) {
		node_fail(q->c, "out of memory");
		goto out;
	}
	for (line = params; line != NULL; line = next) {
		if ((next = strpbrk(line, "\r\n")) != NULL)
			*next++ = '\0';
		line = strip(line);
		if (*line == '\0')
			continue;
		if ((colon = strchr(line, ':')) != NULL)
			*colon++ = '\0';
		line = strip(line);
		if (*line == '\0')
			continue;
		if (render(q->c, line, &k) != 0 || render(q->c, colon ?
		    strip(colon) : "", &v) != 0)
			goto out;
		dbuf_add(&sb, first ? "?" : "&", 1);
		first = 0;
		sb_quote_plus(&sb, k);
		dbuf_add(&sb, "=", 1);
		sb_quote_plus(&sb, v);
		free(k);
		free(v);
		k = v = NULL;
	}
	if ((q->url = dbuf_take(&sb, NULL)) == NULL) {
		node_fail(q->c, "out of memory");
		goto out;
	}
	rc = 0;
out:
	dbuf_free(&sb);
	free(url);
	free(params);
	free(k);
	free(v);
	return rc;
}

static int
init_headers(struct req *q)
{
	char		*text = NULL, *line, *next, *colon;
	int		 rc = -1;

	if ((q->headers = json_object()) == NULL) {
		node_fail(q->c, "out of memory");
		goto out;
	}
	if (render(q->c, node_str(q->c->node, "headers"), &text) != 0)
		goto out;
	for (line = text; line != NULL; line = next) {
		if ((next = strpbrk(line, "\r\n")) != NULL)
			*next++ = '\0';
		if (*strip(line) == '\0')
			continue;
		if ((colon = strchr(line, ':')) != NULL)
			*colon++ = '\0';
		line = strip(line);
		if (*line == '\0')
			continue;
		if (json_object_set_new(q->headers, line, json_string(colon ?
		    strip(colon) : "")) != 0) {
			node_fail(q->c, "out of memory");
			goto out;
		}
	}
	rc = 0;
out:
	free(text);
	return rc;
}

static int
init_auth(struct req *q)
{
	json_t		*auth = json_object_get(q->c->node->data,
			    "authorization");
	json_t		*cfg = json_object_get(auth, "config");
	const char	*type = json_string_value(json_object_get(auth,
			    "type"));
	const char	*ctype = json_string_value(json_object_get(cfg,
			    "type"));
	const char	*hdr = json_string_value(json_object_get(cfg,
			    "header"));
	const char	*keytpl = json_string_value(json_object_get(cfg,
			    "api_key"));
	char		*key = NULL, *b64 = NULL, *val = NULL;
	struct dbuf	 sb = { 0 };
	int		 rc = -1;

	if (type == NULL || strcmp(type, "api-key") != 0) {
		rc = 0;
		goto out;
	}
	q->c->error_type = "AuthorizationConfigError";
	if (!json_is_object(cfg)) {
		node_fail(q->c, "authorization config is required");
		goto out;
	}
	if (keytpl == NULL) {
		node_fail(q->c, "api_key is required");
		goto out;
	}
	if (render(q->c, keytpl, &key) != 0)
		goto out;
	if (strpbrk(key, "\r\n") != NULL) {
		node_fail(q->c, "the API key holds a line break");
		goto out;
	}
	if (hdr == NULL || *hdr == '\0')
		hdr = "Authorization";
	q->auth_header = hdr;
	if (ctype != NULL && strcmp(ctype, "bearer") == 0) {
		dbuf_addstr(&sb, "Bearer ");
		dbuf_addstr(&sb, key);
	} else if (ctype != NULL && strcmp(ctype, "basic") == 0) {
		dbuf_addstr(&sb, "Basic ");
		if (strchr(key, ':') != NULL) {
			if ((b64 = file_b64_encode(key, strlen(key))) ==
			    NULL) {
				node_fail(q->c, "out of memory");
				goto out;
			}
			dbuf_addstr(&sb, b64);
		} else
			dbuf_addstr(&sb, key);
	} else if (ctype != NULL && strcmp(ctype, "custom") == 0)
		dbuf_addstr(&sb, key);
	else {
		node_fail(q->c, "unknown api-key type '%s' (basic, bearer or "
		    "custom)", ctype ? ctype : "");
		goto out;
	}
	if ((val = dbuf_take(&sb, NULL)) == NULL) {
		node_fail(q->c, "out of memory");
		goto out;
	}
	if (json_object_set_new(q->headers, hdr, json_string(val)) != 0) {
		node_fail(q->c, "out of memory");
		goto out;
	}
	q->c->error_type = "NodeRunError";
	rc = 0;
out:
	dbuf_free(&sb);
	free(key);
	free(b64);
	free(val);
	return rc;
}

/* The body items: a list, or the legacy string (one text item). */
static json_t *
body_items(const json_t *body)
{
	json_t *d = json_object_get(body, "data");

	if (json_is_string(d))
		return json_pack("[{s:s,s:O}]", "type", "text", "value", d);
	if (json_is_array(d))
		return json_incref(d);
	return json_array();
}

static const char *
item_str(const json_t *item, const char *k)
{
	const char *s = json_string_value(json_object_get(item, k));

	return s ? s : "";
}

/* One multipart part for each file of the value at a selector. */
static int
add_file_parts(struct req *q, const char *key, const json_t *sel)
{
	json_t		*v = node_resolve(q->c, sel), *f;
	char		*data = NULL;
	const char	*name, *mime;
	size_t		 len, i;
	int		 rc = -1;

	if (v == NULL || (!tpl_is_file(v) && !json_is_array(v))) {
		q->c->error_type = "FileFetchError";
		node_fail(q->c, "form-data item '%s' names no file", key);
		goto out;
	}
	for (i = 0; i < (json_is_array(v) ? json_array_size(v) : 1); i++) {
		f = json_is_array(v) ? json_array_get(v, i) : v;
		if (!tpl_is_file(f))
			continue;
		if (file_bytes(q->c, f, &data, &len) != 0) {
			q->c->error_type = "FileFetchError";
			goto out;
		}
		name = item_str(f, "filename");
		mime = json_string_value(json_object_get(f, "mime_type"));
		dbuf_addstr(&q->body, "--");
		dbuf_addstr(&q->body, q->boundary);
		dbuf_addstr(&q->body, "\r\nContent-Disposition: form-data; "
		    "name=\"");
		sb_part_name(&q->body, key);
		dbuf_addstr(&q->body, "\"; filename=\"");
		sb_part_name(&q->body, name);
		dbuf_addstr(&q->body, "\"\r\nContent-Type: ");
		dbuf_addstr(&q->body, mime && *mime && !strpbrk(mime, "\r\n") ?
		    mime : "application/octet-stream");
		dbuf_addstr(&q->body, "\r\n\r\n");
		dbuf_add(&q->body, data, len);
		dbuf_addstr(&q->body, "\r\n");
		free(data);
		data = NULL;
	}
	rc = 0;
out:
	free(data);
	json_decref(v);
	return rc;
}

static int
body_form_data(struct req *q, const json_t *items)
{
	unsigned char	 rnd[12];
	json_t		*it;
	char		*k = NULL, *v = NULL;
	size_t		 i, j;
	int		 rc = -1;

	if (RAND_bytes(rnd, sizeof(rnd)) != 1) {
		node_fail(q->c, "no random bytes for a multipart boundary");
		goto out;
	}
	j = (size_t)snprintf(q->boundary, sizeof(q->boundary), "----flowcgi");
	for (i = 0; i < sizeof(rnd); i++)
		j += (size_t)snprintf(q->boundary + j, sizeof(q->boundary) - j,
		    "%02x", rnd[i]);
	/* text fields first, then files, as httpx sends them */
	json_array_foreach(items, i, it) {
		if (strcmp(item_str(it, "type"), "file") == 0)
			continue;
		if (render(q->c, item_str(it, "key"), &k) != 0 ||
		    render(q->c, item_str(it, "value"), &v) != 0)
			goto out;
		dbuf_addstr(&q->body, "--");
		dbuf_addstr(&q->body, q->boundary);
		dbuf_addstr(&q->body, "\r\nContent-Disposition: form-data; "
		    "name=\"");
		sb_part_name(&q->body, k);
		dbuf_addstr(&q->body, "\"\r\n\r\n");
		dbuf_addstr(&q->body, v);
		dbuf_addstr(&q->body, "\r\n");
		free(k);
		free(v);
		k = v = NULL;
	}
	json_array_foreach(items, i, it) {
		if (strcmp(item_str(it, "type"), "file") != 0)
			continue;
		if (render(q->c, item_str(it, "key"), &k) != 0 ||
		    add_file_parts(q, k, json_object_get(it, "file")) != 0)
			goto out;
		free(k);
		k = NULL;
	}
	dbuf_addstr(&q->body, "--");
	dbuf_addstr(&q->body, q->boundary);
	dbuf_addstr(&q->body, "--\r\n");
	rc = 0;
out:
	free(k);
	free(v);
	return rc;
}

static int
body_urlencoded(struct req *q, const json_t *items)
{
	json_t		*form = json_object(), *it, *v;
	char		*k = NULL, *val = NULL;
	const char	*key;
	size_t		 i;
	int		 rc = -1, first = 1;

	if (form == NULL) {
		node_fail(q->c, "out of memory");
		goto out;
	}
	/* a dict: a repeated key keeps its place and takes the last value */
	json_array_foreach(items, i, it) {
		if (render(q->c, item_str(it, "key"), &k) != 0 ||
		    render(q->c, item_str(it, "value"), &val) != 0)
			goto out;
		if (json_object_set_new(form, k, json_string(val)) != 0) {
			node_fail(q->c, "out of memory");
			goto out;
		}
		free(k);
		free(val);
		k = val = NULL;
	}
	json_object_foreach(form, key, v) {
		if (!first)
			dbuf_add(&q->body, "&", 1);
		first = 0;
		sb_quote_plus(&q->body, key);
		dbuf_add(&q->body, "=", 1);
		sb_quote_plus(&q->body, json_string_value(v));
	}
	rc = 0;
out:
	json_decref(form);
	free(k);
	free(val);
	return rc;
}

static int
body_binary(struct req *q, const json_t *item)
{
	json_t		*f = node_resolve(q->c, json_object_get(item, "file"));
	char		*data = NULL;
	const char	*mime;
	size_t		 len;
	int		 rc = -1;

	q->c->error_type = "FileFetchError";
	if (json_is_array(f) && json_array_size(f) > 0) {
		json_t *first = json_incref(json_array_get(f, 0));

		json_decref(f);
		f = first;
	}
	if (!tpl_is_file(f)) {
		node_fail(q->c, "cannot fetch file with selector %s",
		    json_is_array(json_object_get(item, "file")) ? "given" :
		    "(none)");
		goto out;
	}
	if (file_bytes(q->c, f, &data, &len) != 0)
		goto out;
	dbuf_add(&q->body, data, len);
	mime = json_string_value(json_object_get(f, "mime_type"));
	if (!has_header(q->headers, "Content-Type") &&
	    json_object_set_new(q->headers, "Content-Type", json_string(
	    mime && *mime ? mime : "application/octet-stream")) != 0) {
		node_fail(q->c, "out of memory");
		goto out;
	}
	q->c->error_type = "NodeRunError";
	rc = 0;
out:
	free(data);
	json_decref(f);
	return rc;
}

static int
init_body(struct req *q)
{
	json_t		*body = json_object_get(q->c->node->data, "body");
	json_t		*items = body_items(body);
	const char	*type = json_string_value(json_object_get(body,
			    "type"));
	char		*text = NULL;
	int		 rc = -1;

	if (items == NULL) {
		node_fail(q->c, "out of memory");
		goto out;
	}
	if (type == NULL || strcmp(type, "none") == 0) {
		rc = 0;
		goto out;
	}
	q->has_body = 1;
	if (strcmp(type, "raw-text") == 0 || strcmp(type, "json") == 0 ||
	    strcmp(type, "binary") == 0) {
		if (json_array_size(items) != 1) {
			q->c->error_type = "RequestBodyError";
			node_fail(q->c, "%s body type should have exactly one "
			    "item", type);
			goto out;
		}
		if (strcmp(type, "binary") == 0) {
			rc = body_binary(q, json_array_get(items, 0));
			goto out;
		}
		/* json: expanded, then sent as written (Dify parses and
		 * re-serialises it; the bytes differ, the value does not) */
		if (render(q->c, item_str(json_array_get(items, 0), "value"),
		    &text) != 0)
			goto out;
		dbuf_addstr(&q->body, text);
		q->ctype = strcmp(type, "json") == 0 ? "application/json" :
		    "text/plain";
	} else if (strcmp(type, "x-www-form-urlencoded") == 0) {
		if (body_urlencoded(q, items) != 0)
			goto out;
		q->ctype = "application/x-www-form-urlencoded";
	} else if (strcmp(type, "form-data") == 0) {
		if (body_form_data(q, items) != 0)
			goto out;
		/* the boundary is ours: a Content-Type set by hand goes */
		del_header(q->headers, "Content-Type");
		if (json_object_set_new(q->headers, "Content-Type", json_pack(
		    "s++", "multipart/form-data; boundary=", q->boundary,
		    "")) != 0) {
			node_fail(q->c, "out of memory");
			goto out;
		}
	} else {
		q->c->error_type = "RequestBodyError";
		node_fail(q->c, "unknown body type '%s'", type);
		goto out;
	}
	if (q->ctype != NULL && !has_header(q->headers, "Content-Type") &&
	    json_object_set_new(q->headers, "Content-Type",
	    json_string(q->ctype)) != 0) {
		node_fail(q->c, "out of memory");
		goto out;
	}
	rc = 0;
out:
	if (rc == 0 && q->body.err)
		rc = node_fail(q->c, "out of memory");
	free(text);
	json_decref(items);
	return rc;
}

/*
 * obj[name] = the n bytes at v, when both are UTF-8 text (a header in
 * another charset is left out: JSON cannot hold it). 0, or -1 when out of
 * memory.
 */
static int
header_set(json_t *obj, const char *name, const char *v, size_t n)
{
	if (!node_utf8_ok(name, strlen(name)) || !node_utf8_ok(v, n))
		return 0;
	return json_object_set_new(obj, name, json_stringn(v, n));
}

/*
 * The response's header lines into obj, names lower-cased as Dify's
 * httpx-based node gives them; a repeated header keeps the last value.
 * 0, or -1 when out of memory.
 */
static int
parse_headers(const char *h, size_t len, json_t *obj)
{
	const char	*p = h, *end, *eol, *colon, *v;
	char		 name[128];
	size_t		 n, i;

	if (h == NULL)
		return 0;
	end = h + len;
	for (; p < end; p = eol + 1) {
		if ((eol = memchr(p, '\n', (size_t)(end - p))) == NULL)
			eol = end;
		colon = memchr(p, ':', (size_t)(eol - p));
		if (colon == NULL || (n = (size_t)(colon - p)) == 0 ||
		    n >= sizeof(name) || (p[0] == 'H' && n >= 5 &&
		    memcmp(p, "HTTP/", 5) == 0))
			continue;
		for (i = 0; i < n; i++)
			name[i] = (char)tolower((unsigned char)p[i]);
		name[n] = '\0';
		for (v = colon + 1; v < eol && (*v == ' ' || *v == '\t'); v++)
			;
		n = (size_t)(eol - v);
		while (n > 0 && (v[n - 1] == '\r' || v[n - 1] == ' '))
			n--;
		if (header_set(obj, name, v, n) != 0)
			return -1;
		if (eol == end)
			break;
	}
	return 0;
}

static int
timeout_of(const json_t *t, const char *k, int def, int max)
{
	json_t		*v = json_object_get(t, k);
	double		 d = json_number_value(v);
	char		*end;

	if (json_is_string(v))
		d = strtod(json_string_value(v), &end);
	if (!(d >= 1))
		return def;
	return d > max ? max : (int)d;
}

static void
init_timeouts(struct req *q)
{
	json_t *t = json_object_get(q->c->node->data, "timeout");

	q->connect = timeout_of(t, "connect", HTTP_MAX_CONNECT,
	    HTTP_MAX_CONNECT);
	q->read = timeout_of(t, "read", HTTP_MAX_READ, HTTP_MAX_READ);
	q->write = timeout_of(t, "write", HTTP_MAX_WRITE, HTTP_MAX_WRITE);
}

/* Dify's Executor.to_log: the request as raw HTTP text, the API key
 * masked. */
static char *
request_log(const struct req *q)
{
	struct dbuf	 sb = { 0 };
	const char	*host = strstr(q->url, "://"), *path, *k;
	json_t		*v;
	size_t		 hl, i, n;
	char		*bodytext = NULL;

	host = host ? host + 3 : q->url;
	hl = strcspn(host, "/?");
	path = host + hl;
	dbuf_addstr(&sb, q->method);
	dbuf_addstr(&sb, " ");
	if (*path != '/')
		dbuf_addstr(&sb, "/");
	dbuf_addstr(&sb, path);
	dbuf_addstr(&sb, " HTTP/1.1\r\nHost: ");
	dbuf_add(&sb, host, hl);
	dbuf_addstr(&sb, "\r\n");
	json_object_foreach(q->headers, k, v) {
		dbuf_addstr(&sb, k);
		dbuf_addstr(&sb, ": ");
		if (q->auth_header != NULL &&
		    strcasecmp(k, q->auth_header) == 0) {
			n = json_string_length(v);
			for (i = 0; i < n; i++)
				dbuf_add(&sb, "*", 1);
		} else
			dbuf_addstr(&sb, json_string_value(v));
		dbuf_addstr(&sb, "\r\n");
	}
	dbuf_addstr(&sb, "\r\n");
	if (q->body.len > 0 && to_utf8(q->body.p, q->body.len >
	    HTTP_LOG_BODY ? HTTP_LOG_BODY : q->body.len, NULL, &bodytext) ==
	    0)
		dbuf_addstr(&sb, bodytext);
	free(bodytext);
	return dbuf_take(&sb, NULL);
}

/* ====== Running ====== */

static int
http_run(struct node_ctx *c)
{
	struct req		 q;
	struct outbound_req	 oreq;
	struct outbound_resp	 resp;
	const struct conf	*cf = c->run->e->conf;
	struct curl_slist	*hl = NULL, *nl;
	json_t			*files = NULL, *f, *hdrs = NULL, *v, *retry;
	const char		*k, *name, *slash;
	char			 err[ENGINE_ERRMAX], *line = NULL;
	char			*text = NULL, *log = NULL, fname[256];
	size_t			 ll;
	int			 rc = -1, r, strict;

	memset(&q, 0, sizeof(q));
	memset(&oreq, 0, sizeof(oreq));
	memset(&resp, 0, sizeof(resp));
	q.c = c;
	if (init_method(&q) != 0 || init_url(&q) != 0 ||
	    init_headers(&q) != 0 || init_auth(&q) != 0 ||
	    init_body(&q) != 0)
		goto out;
	init_timeouts(&q);
	/* POST, PUT and PATCH always carry a body, if only an empty one */
	if (!q.has_body && (strcmp(q.method, "POST") == 0 ||
	    strcmp(q.method, "PUT") == 0 || strcmp(q.method, "PATCH") == 0))
		q.has_body = 1;
	if ((log = request_log(&q)) != NULL)
		c->process_data = json_pack("{s:s}", "request", log);
	json_object_foreach(q.headers, k, v) {
		if (strpbrk(k, "\r\n") != NULL ||
		    strpbrk(json_string_value(v), "\r\n") != NULL) {
			node_fail(c, "header '%s' holds a line break", k);
			goto out;
		}
		ll = strlen(k) + json_string_length(v) + 3;
		if ((line = malloc(ll)) == NULL) {
			node_fail(c, "out of memory");
			goto out;
		}
		/* "Name;" sends a header with an empty value in curl */
		if (json_string_length(v) == 0)
			snprintf(line, ll, "%s;", k);
		else
			snprintf(line, ll, "%s: %s", k, json_string_value(v));
		if ((nl = curl_slist_append(hl, line)) == NULL) {
			node_fail(c, "out of memory");
			goto out;
		}
		hl = nl;
		free(line);
		line = NULL;
	}
	/* No Expect: 100-continue, and no Content-Type curl would invent. */
	if ((nl = curl_slist_append(hl, "Expect:")) != NULL)
		hl = nl;
	if (q.has_body && !has_header(q.headers, "Content-Type") &&
	    (nl = curl_slist_append(hl, "Content-Type:")) != NULL)
		hl = nl;
	oreq.method = q.method;
	oreq.url = q.url;
	oreq.headers = hl;
	oreq.body = !q.has_body ? NULL : q.body.p ? q.body.p : "";
	oreq.body_len = q.body.len;
	oreq.follow = 1;
	oreq.trusted = 0;
	oreq.timeout = q.connect + q.read + (q.has_body ? q.write : 0);
	oreq.connect_timeout = q.connect;
	/* ssl_verify: false, as the node asks (Dify's default is true) */
	oreq.insecure = json_is_false(json_object_get(c->node->data,
	    "ssl_verify"));
	oreq.max_bytes = cf->http_max_binary_response;
	if ((r = outbound_fetch(c->run->e, &oreq, err, &resp)) != 0) {
		c->error_type = "HttpRequestNodeError";
		if (r == ENGINE_ELIMIT) {
			c->error_type = "ResponseSizeError";
			node_fail(c, "the response is larger than %lld bytes "
			    "(http.max_binary_response)",
			    (long long)oreq.max_bytes);
		} else
			node_fail(c, "%s", err);
		goto out;
	}
	if ((files = json_array()) == NULL || (hdrs = json_object()) == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	if (parse_headers(resp.headers, resp.headers_len, hdrs) != 0 ||
	    (resp.content_type != NULL && json_object_get(hdrs,
	    "content-type") == NULL && header_set(hdrs, "content-type",
	    resp.content_type, strlen(resp.content_type)) != 0)) {
		node_fail(c, "out of memory");
		goto out;
	}
	if (is_file_type(resp.content_type)) {
		/* the file's name: the URL's last path segment */
		slash = strrchr(q.url, '/');
		name = slash && slash > strstr(q.url, "://") + 2 ? slash + 1 :
		    "";
		snprintf(fname, sizeof(fname), "%.*s", (int)strcspn(name,
		    "?#"), name);
		if ((f = file_from_bytes(fname[0] ? fname : NULL,
		    resp.content_type, resp.body, resp.len)) == NULL) {
			node_fail(c, "out of memory");
			goto out;
		}
		if (json_array_append_new(files, f) != 0) {
			node_fail(c, "out of memory");
			goto out;
		}
		text = strdup("");
	} else {
		if ((int64_t)resp.len > cf->http_max_text_response) {
			c->error_type = "ResponseSizeError";
			node_fail(c, "the text response is larger than %lld "
			    "bytes (http.max_text_response)",
			    (long long)cf->http_max_text_response);
			goto out;
		}
		to_utf8(resp.body, resp.len, resp.content_type, &text);
	}
	if (text == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	if (json_object_set_new(c->outputs, "status_code",
	    json_integer(resp.status)) != 0 || json_object_set_new(c->outputs,
	    "body", json_string(text)) != 0 || json_object_set_new(c->outputs,
	    "headers", json_incref(hdrs)) != 0 ||
	    json_object_set_new(c->outputs, "files", json_incref(files)) != 0) {
		node_fail(c, "out of memory");
		goto out;
	}
	retry = json_object_get(c->node->data, "retry_config");
	strict = node_str(c->node, "error_strategy") != NULL ||
	    json_is_true(json_object_get(retry, "retry_enabled"));
	if (strict && (resp.status < 200 || resp.status > 299)) {
		c->error_type = "HTTPResponseCodeError";
		node_fail(c, "Request failed with status code %ld",
		    resp.status);
		goto out;
	}
	rc = 0;
out:
	outbound_resp_release(&resp);
	curl_slist_free_all(hl);
	json_decref(files);
	json_decref(hdrs);
	json_decref(q.headers);
	dbuf_free(&q.body);
	free(q.url);
	free(line);
	free(text);
	free(log);
	return rc;
}

const struct node_type node_http_request = { "http-request", http_run, 0 };
