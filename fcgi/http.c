/*
 * http.c — reading a request (parameters, query, body, JSON) and writing
 * responses (status, headers, JSON, errors).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "fcgi/internal.h"
#include "storage/storage.h"

/* ====== Request ====== */

const char *
req_param(struct req *r, const char *name)
{
	return r->io->param(r->io->ctx, name);
}

int
http_form_decode(struct arena *a, const char *s, size_t n, char **out)
{
	char	*tmp, *dec = NULL;
	size_t	 i;
	int	 len, rc = 0;

	*out = NULL;
	if (n > INT_MAX)
		return HTTP_ENOMEM;	/* curl counts in int; no URI is so long */
	if ((tmp = arena_strndup(a, s, n)) == NULL)
		return HTTP_ENOMEM;
	for (i = 0; i < n; i++)
		if (tmp[i] == '+')
			tmp[i] = ' ';
	if ((dec = curl_easy_unescape(NULL, tmp, (int)n, &len)) == NULL)
		return HTTP_ENOMEM;
	/* A decoded NUL would cut the C string short: the value would not
	 * be the one sent (user=admin%00x read as admin). Refuse it. */
	if (memchr(dec, '\0', (size_t)len) != NULL)
		rc = HTTP_ENUL;
	else if ((*out = arena_strndup(a, dec, (size_t)len)) == NULL)
		rc = HTTP_ENOMEM;
	curl_free(dec);
	return rc;
}

/* Answers a failed decode of query parameter name: 400 or 500. */
static void
query_decode_error(struct req *r, int rc, const char *name, size_t nlen)
{
	if (rc == HTTP_ENUL)
		resp_error(r, 400, "invalid_param", "query parameter %.*s "
		    "holds a NUL byte (%%00)", (int)(nlen > 64 ? 64 : nlen),
		    name);
	else
		resp_error(r, 500, "internal_server_error", "out of memory");
}

int
req_query_check(struct req *r)
{
	const char	*p = r->query, *amp, *eq;
	char		*dec;
	int		 rc;

	while (*p != '\0') {
		amp = strchr(p, '&');
		if (amp == NULL)
			amp = p + strlen(p);
		eq = memchr(p, '=', (size_t)(amp - p));
		if (eq == NULL)
			eq = amp;
		if ((rc = http_form_decode(r->a, p, (size_t)(eq - p),
		    &dec)) != 0 || (eq < amp && (rc = http_form_decode(r->a,
		    eq + 1, (size_t)(amp - eq - 1), &dec)) != 0)) {
			query_decode_error(r, rc, p, (size_t)(eq - p));
			return -1;
		}
		p = *amp == '&' ? amp + 1 : amp;
	}
	return 0;
}

const char *
req_query(struct req *r, const char *name)
{
	const char	*p = r->query, *amp, *eq;
	char		*dec;
	size_t		 nlen = strlen(name);
	int		 rc;

	while (*p != '\0') {
		amp = strchr(p, '&');
		if (amp == NULL)
			amp = p + strlen(p);
		eq = memchr(p, '=', (size_t)(amp - p));
		if (eq == NULL)
			eq = amp;
		if ((size_t)(eq - p) == nlen && memcmp(p, name, nlen) == 0) {
			if (eq == amp)
				return "";
			rc = http_form_decode(r->a, eq + 1,
			    (size_t)(amp - eq - 1), &dec);
			if (rc != 0)
				query_decode_error(r, rc, name, nlen);
			return dec;
		}
		p = *amp == '&' ? amp + 1 : amp;
	}
	return NULL;
}

int
req_query_true(struct req *r, const char *name)
{
	const char *v = req_query(r, name);

	return v != NULL && (strcasecmp(v, "true") == 0 ||
	    strcmp(v, "1") == 0);
}

int
req_query_int(struct req *r, const char *name, int def, int lo, int hi,
    int *out)
{
	const char	*s = req_query(r, name);
	char		*end;
	long		 v;

	if (s == NULL || *s == '\0') {
		*out = def;
		return 0;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi) {
		resp_error(r, 400, "invalid_param", "%s must be an integer "
		    "from %d to %d", name, lo, hi);
		return -1;
	}
	*out = (int)v;
	return 0;
}

const char *
req_base_url(struct req *r)
{
	const char	*pub = r->conf->public_url, *path, *url;
	size_t		 n = strlen(pub);

	/* The Host header is the client's word: never build links from it.
	 * Without server.public_url the links are relative to the host. */
	if (n == 0)
		return r->prefix;
	while (n > 0 && pub[n - 1] == '/')
		n--;
	/* A public_url with a path names the mount point itself. */
	path = strstr(pub, "://");
	path = path != NULL ? strchr(path + 3, '/') : NULL;
	url = arena_printf(r->a, "%.*s%s", (int)n, pub,
	    path != NULL && path < pub + n ? "" : r->prefix);
	return url ? url : "";
}

int
req_read_body(struct req *r, int64_t max)
{
	size_t	 cap, len = 0;
	ssize_t	 n;
	char	*buf, *nb;

	if (r->body != NULL)
		return 0;
	if (r->content_length > max) {
		resp_error(r, 413, "payload_too_large", "request body of %lld "
		    "bytes is larger than the limit of %lld bytes",
		    (long long)r->content_length, (long long)max);
		return 413;
	}
	cap = r->content_length >= 0 ? (size_t)r->content_length + 1 : 4096;
	if ((buf = malloc(cap)) == NULL)
		goto nomem;
	for (;;) {
		/* A declared length read in full needs no growth and no
		 * further read (the buffer holds exactly it and the NUL). */
		if (r->content_length >= 0 &&
		    (int64_t)len == r->content_length)
			break;
		if (len + 1 >= cap) {
			if ((int64_t)len >= max + 1 || cap > SIZE_MAX / 2)
				break;
			cap *= 2;
			if ((nb = realloc(buf, cap)) == NULL)
				goto nomem;
			buf = nb;
		}
		n = r->io->read(r->io->ctx, buf + len, cap - len - 1);
		if (n <= 0)
			break;
		len += (size_t)n;
		if ((int64_t)len > max)
			break;
	}
	if ((int64_t)len > max) {
		free(buf);
		resp_error(r, 413, "payload_too_large", "request body is larger "
		    "than the limit of %lld bytes", (long long)max);
		return 413;
	}
	if (r->content_length >= 0 && (int64_t)len != r->content_length) {
		free(buf);
		resp_error(r, 400, "bad_request", "request body ended after "
		    "%zu of %lld bytes", len, (long long)r->content_length);
		return 400;
	}
	buf[len] = '\0';
	if (arena_cleanup_add(r->a, free, buf) != 0) {
		free(buf);
		goto nomem;
	}
	r->body = buf;
	r->body_len = len;
	return 0;
nomem:
	free(buf);
	resp_error(r, 500, "internal_server_error", "out of memory");
	return 500;
}

static int
json_depth(const json_t *j, int limit)
{
	const char	*k;
	json_t		*v;
	size_t		 i;
	int		 d, max = 0;

	if (limit < 0)
		return 1;	/* deeper than anyone asked for: stop */
	if (json_is_object(j)) {
		json_object_foreach((json_t *)j, k, v)
			if ((d = json_depth(v, limit - 1)) > max)
				max = d;
		return max + 1;
	}
	if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			if ((d = json_depth(v, limit - 1)) > max)
				max = d;
		return max + 1;
	}
	return 0;
}

/* 0 when the body is declared JSON, else 415 after answering it. */
static int
json_type_check(struct req *r)
{
	const char	*ct = r->content_type;
	size_t		 n = strlen("application/json");

	while (*ct == ' ')
		ct++;
	if (strncasecmp(ct, "application/json", n) == 0 &&
	    (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' '))
		return 0;
	resp_error(r, 415, "unsupported_media_type", "expected Content-Type "
	    "application/json, got '%.64s'", *r->content_type ?
	    r->content_type : "(none)");
	return 415;
}

int
req_read_json(struct req *r)
{
	json_error_t	 jerr;
	json_t		*j;
	int		 rc;

	/* Refuse a body of another type before reading it, when we can. */
	if (r->content_length > 0 && (rc = json_type_check(r)) != 0)
		return rc;
	if ((rc = req_read_body(r, r->conf->max_json_body)) != 0)
		return rc;
	if (r->body_len == 0) {
		if ((r->json = arena_json(r->a, json_object())) == NULL) {
			resp_error(r, 500, "internal_server_error", "out of "
			    "memory");
			return 500;
		}
		return 0;
	}
	if ((rc = json_type_check(r)) != 0)
		return rc;
	/* Without JSON_ALLOW_NUL jansson refuses "\u0000" in any string,
	 * so no field of a body (user, path, an id) can hold a NUL that
	 * json_string_value would cut the value short at. */
	j = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, &jerr);
	if (j == NULL) {
		resp_error(r, 400, "invalid_json", "invalid JSON at line %d "
		    "column %d: %s", jerr.line, jerr.column, jerr.text);
		return 400;
	}
	if (arena_json(r->a, j) == NULL) {
		resp_error(r, 500, "internal_server_error", "out of memory");
		return 500;
	}
	/* Every route that reads a JSON body reads an object (a handler
	 * looking up a field of [] would find nothing, and setting one
	 * fails as if memory ran out). */
	if (!json_is_object(j)) {
		resp_error(r, 400, "invalid_param", "the request body must be "
		    "a JSON object, not %s", json_is_array(j) ? "an array" :
		    "a scalar");
		return 400;
	}
	r->json = j;
	if (json_depth(j, r->conf->max_json_depth) > r->conf->max_json_depth) {
		resp_error(r, 400, "invalid_json", "JSON nesting deeper than "
		    "limits.max_json_depth (%d)", r->conf->max_json_depth);
		return 400;
	}
	return 0;
}

int
req_json_string(struct req *r, const char *k, int required, const char **out)
{
	json_t *v = json_object_get(r->json, k);

	*out = NULL;
	if (v == NULL || json_is_null(v)) {
		if (!required)
			return 0;
		resp_error(r, 400, "invalid_param", "%s is required", k);
		return -1;
	}
	if (!json_is_string(v)) {
		resp_error(r, 400, "invalid_param", "%s must be a string", k);
		return -1;
	}
	/* a NUL inside would cut the C string short (req_read_json's
	 * parser refuses one; a body parsed elsewhere might not) */
	if (strlen(json_string_value(v)) != json_string_length(v)) {
		resp_error(r, 400, "invalid_param", "%s holds a NUL byte", k);
		return -1;
	}
	*out = json_string_value(v);
	return 0;
}

/* ====== Response ====== */

/*
 * The reason phrase of every status flowcgi sends (RFC 9110 section 15),
 * in code order. nginx and Apache pass the phrase of a FastCGI Status:
 * header to the client as it is, so none may be missing.
 */
static const struct {
	int		 code;
	const char	*text;
} status_texts[] = {
	{ 200, "OK" },
	{ 201, "Created" },
	{ 202, "Accepted" },
	{ 204, "No Content" },
	{ 206, "Partial Content" },
	{ 301, "Moved Permanently" },
	{ 302, "Found" },
	{ 303, "See Other" },
	{ 304, "Not Modified" },
	{ 307, "Temporary Redirect" },
	{ 308, "Permanent Redirect" },
	{ 400, "Bad Request" },
	{ 401, "Unauthorized" },
	{ 403, "Forbidden" },
	{ 404, "Not Found" },
	{ 405, "Method Not Allowed" },
	{ 406, "Not Acceptable" },
	{ 408, "Request Timeout" },
	{ 409, "Conflict" },
	{ 410, "Gone" },
	{ 411, "Length Required" },
	{ 412, "Precondition Failed" },
	{ 413, "Content Too Large" },
	{ 414, "URI Too Long" },
	{ 415, "Unsupported Media Type" },
	{ 416, "Range Not Satisfiable" },
	{ 422, "Unprocessable Content" },
	{ 423, "Locked" },
	{ 428, "Precondition Required" },
	{ 429, "Too Many Requests" },
	{ 431, "Request Header Fields Too Large" },
	{ 500, "Internal Server Error" },
	{ 501, "Not Implemented" },
	{ 502, "Bad Gateway" },
	{ 503, "Service Unavailable" },
	{ 504, "Gateway Timeout" },
	{ 507, "Insufficient Storage" },
};

const char *
http_status_text(int status)
{
	size_t i;

	for (i = 0; i < sizeof(status_texts) / sizeof(status_texts[0]); i++)
		if (status_texts[i].code == status)
			return status_texts[i].text;
	/* a code not in the table still gets its class's words */
	return status >= 500 ? "Server Error" : status >= 400 ?
	    "Client Error" : status >= 300 ? "Redirection" : "Success";
}

void
resp_header(struct req *r, const char *name, const char *value)
{
	if (r->nhdrs >= REQ_MAX_HEADERS || value == NULL)
		return;
	r->hdr_name[r->nhdrs] = name;
	r->hdr_value[r->nhdrs] = value;
	r->nhdrs++;
}

void
resp_attachment(struct req *r, const char *filename)
{
	char *enc;

	if (filename == NULL ||
	    (enc = curl_easy_escape(NULL, filename, 0)) == NULL)
		return;
	resp_header(r, "Content-Disposition", arena_printf(r->a,
	    "attachment; filename*=UTF-8''%s", enc));
	curl_free(enc);
}

const char *
resp_mime_of(const char *name)
{
	static const char *const map[][2] = {
		{ "md", "text/markdown; charset=utf-8" },
		{ "txt", "text/plain; charset=utf-8" },
		{ "json", "application/json" },
		{ "yml", "application/yaml" },
		{ "yaml", "application/yaml" },
		{ "csv", "text/csv; charset=utf-8" },
		{ "html", "text/html; charset=utf-8" },
		{ "py", "text/x-python; charset=utf-8" },
		{ "js", "text/javascript; charset=utf-8" },
		{ "sh", "text/x-shellscript; charset=utf-8" },
		{ "png", "image/png" },
		{ "jpg", "image/jpeg" },
		{ "jpeg", "image/jpeg" },
		{ "gif", "image/gif" },
		{ "webp", "image/webp" },
		{ "svg", "image/svg+xml" },
		{ "pdf", "application/pdf" },
		{ "zip", "application/zip" },
	};
	const char	*dot = strrchr(name, '.');
	size_t		 i;

	/* a dot in a folder's name is no extension */
	if (dot != NULL && strchr(dot, '/') == NULL)
		for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
			if (strcasecmp(dot + 1, map[i][0]) == 0)
				return map[i][1];
	return "application/octet-stream";
}

static void
resp_head(struct req *r, int status, const char *ctype, size_t len,
    int has_len)
{
	char	buf[1024];
	int	i, n;

	if (r->status != 0)
		return;	/* a response went out already */
	r->status = status;
	n = snprintf(buf, sizeof(buf), "Status: %d %s\r\n", status,
	    http_status_text(status));
	if (ctype != NULL)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n,
		    "Content-Type: %s\r\n", ctype);
	if (has_len)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n,
		    "Content-Length: %zu\r\n", len);
	/* API answers are never cached, unless a handler says otherwise */
	for (i = 0; i < r->nhdrs; i++)
		if (strcasecmp(r->hdr_name[i], "Cache-Control") == 0)
			break;
	n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s"
	    "X-Content-Type-Options: nosniff\r\n", i < r->nhdrs ? "" :
	    "Cache-Control: no-store\r\n");
	r->io->write(r->io->ctx, buf, (size_t)n);
	for (i = 0; i < r->nhdrs; i++) {
		n = snprintf(buf, sizeof(buf), "%s: %s\r\n", r->hdr_name[i],
		    r->hdr_value[i]);
		if (n > 0 && (size_t)n < sizeof(buf))
			r->io->write(r->io->ctx, buf, (size_t)n);
	}
	r->io->write(r->io->ctx, "\r\n", 2);
}

void
resp_json(struct req *r, int status, json_t *body)
{
	char	*s;
	size_t	 n;

	if (r->status != 0) {
		json_decref(body);
		return;
	}
	/* json_dumps' bytes, without its guard against loops (storage) */
	s = body ? store_json_text(body, &n) : NULL;
	json_decref(body);
	if (s == NULL) {
		static const char oom[] = "{\"code\":\"internal_server_error\","
		    "\"message\":\"out of memory\",\"status\":500}";

		resp_head(r, 500, "application/json", sizeof(oom) - 1, 1);
		r->io->write(r->io->ctx, oom, sizeof(oom) - 1);
		return;
	}
	resp_head(r, status, "application/json", n, 1);
	r->io->write(r->io->ctx, s, n);
	free(s);
}

void
resp_error(struct req *r, int status, const char *code, const char *fmt, ...)
{
	char	msg[512], *clean;
	size_t	n;
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* A message may quote the caller's bytes (a zip entry's name) or be
	 * cut inside a character: JSON needs it well-formed. */
	clean = engine_utf8_clean(msg, strlen(msg), 1, &n);
	if (status >= 500)
		log_error("%s %s%s: %d %s", r->method, r->prefix, r->path,
		    status, clean ? clean : msg);
	resp_json(r, status, json_pack("{s:s,s:s,s:i}", "code", code,
	    "message", clean ? clean : "out of memory", "status", status));
	free(clean);
}

void
resp_bytes(struct req *r, int status, const char *ctype, const void *data,
    size_t len)
{
	if (r->status != 0)
		return;
	resp_head(r, status, ctype, len, 1);
	r->io->write(r->io->ctx, data, len);
}

/* ====== Byte ranges ====== */

/* A decimal of at most 19 digits at *p, moved past: 0, or -1. */
static int
range_num(const char **p, uint64_t *out)
{
	uint64_t	v = 0;
	int		n = 0;

	while (**p >= '0' && **p <= '9') {
		if (++n > 19)
			return -1;
		v = v * 10 + (uint64_t)(**p - '0');
		(*p)++;
	}
	*out = v;
	return n > 0 ? 0 : -1;
}

int
http_range(const char *h, uint64_t size, uint64_t *off, uint64_t *len)
{
	const char	*p;
	uint64_t	 a = 0, b = 0;
	int		 has_a, has_b;

	if (h == NULL || strncasecmp(h, "bytes", 5) != 0)
		return 0;
	p = h + 5;
	p += strspn(p, " \t");
	if (*p++ != '=')
		return 0;
	p += strspn(p, " \t");
	has_a = *p >= '0' && *p <= '9';
	if (has_a && range_num(&p, &a) != 0)
		return 0;
	if (*p++ != '-')
		return 0;
	has_b = *p >= '0' && *p <= '9';
	if (has_b && range_num(&p, &b) != 0)
		return 0;
	p += strspn(p, " \t");
	/* several ranges, or bytes after the one: the whole body */
	if (*p != '\0' || (!has_a && !has_b) || (has_a && has_b && b < a))
		return 0;
	if (!has_a) {
		/* the last b bytes */
		if (b == 0 || size == 0)
			return -1;
		*len = b < size ? b : size;
		*off = size - *len;
		return 1;
	}
	if (a >= size)
		return -1;
	*off = a;
	*len = (has_b && b < size - 1 ? b : size - 1) - a + 1;
	return 1;
}

/* engine_blob_send's out: the answer's next bytes. */
static int
blob_out(void *ctx, const void *buf, size_t n)
{
	struct req *r = ctx;

	return r->io->write(r->io->ctx, buf, n);
}

void
resp_blob(struct req *r, const char *ctype, const char *sum, uint64_t size)
{
	uint64_t	off = 0, len = size;
	int		rc, status = 200;

	if (r->status != 0)
		return;
	resp_header(r, "Accept-Ranges", "bytes");
	rc = http_range(req_param(r, "HTTP_RANGE"), size, &off, &len);
	if (rc < 0) {
		resp_header(r, "Content-Range", arena_printf(r->a,
		    "bytes */%llu", (unsigned long long)size));
		resp_error(r, 416, "range_not_satisfiable", "the file has "
		    "%llu bytes", (unsigned long long)size);
		return;
	}
	if (rc == 1) {
		status = 206;
		resp_header(r, "Content-Range", arena_printf(r->a,
		    "bytes %llu-%llu/%llu", (unsigned long long)off,
		    (unsigned long long)(off + len - 1),
		    (unsigned long long)size));
	}
	resp_head(r, status, ctype, (size_t)len, 1);
	if ((rc = engine_blob_send(r->eng, sum, off, len, blob_out, r)) < 0)
		log_warn("%s %s%s: the answer ended early: %s", r->method,
		    r->prefix, r->path, engine_strerror(rc));
}

void
resp_begin_stream(struct req *r)
{
	resp_header(r, "X-Accel-Buffering", "no");
	resp_header(r, "Connection", "keep-alive");
	resp_head(r, 200, "text/event-stream; charset=utf-8", 0, 0);
	r->io->flush(r->io->ctx);
}

int
resp_write(struct req *r, const char *s, size_t n)
{
	return r->io->write(r->io->ctx, s, n);
}

int
resp_flush(struct req *r)
{
	return r->io->flush(r->io->ctx);
}

void
resp_empty(struct req *r, int status)
{
	resp_head(r, status, NULL, 0, 0);
}

void
resp_engine_error(struct req *r, int rc, const char *err, const char *what)
{
	switch (rc) {
	case ENGINE_EINVAL:
		resp_error(r, 400, "invalid_param", "%s", err);
		break;
	case ENGINE_ENOTFOUND:
		if (err != NULL && *err != '\0')
			resp_error(r, 404, "not_found", "%s", err);
		else
			resp_error(r, 404, "not_found", "%s not found", what);
		break;
	case ENGINE_ECONFLICT:
		resp_error(r, 412, "precondition_failed", "%s changed since "
		    "the revision given in If-Match", what);
		break;
	case ENGINE_EEXIST:
		resp_error(r, 409, "conflict", "%s", err);
		break;
	case ENGINE_ESTOPPED:
		resp_error(r, 409, "stopped", "%s", err && *err ? err :
		    engine_strerror(rc));
		break;
	case ENGINE_ELIMIT:
		resp_error(r, 413, "limit_exceeded", "%s", err);
		break;
	case ENGINE_EFETCH:
		resp_error(r, 502, "upstream_error", "%s", err && *err ? err :
		    engine_strerror(rc));
		break;
	case ENGINE_EUNAVAIL:
		resp_header(r, "Retry-After", "1");
		resp_error(r, 503, "storage_unavailable", "%s",
		    engine_strerror(rc));
		break;
	case ENGINE_EFULL:
		resp_error(r, 507, "insufficient_storage", "%s",
		    engine_strerror(rc));
		break;
	default:
		resp_error(r, 500, "internal_server_error", "%s",
		    engine_strerror(rc));
		break;
	}
}

void
resp_store_error(struct req *r, int rc, const char *what)
{
	/* one answer per kind of storage failure, whichever handler read
	 * the store itself: an outage is 503 storage_unavailable with
	 * Retry-After, as the engine's own errors answer */
	switch (rc) {
	case STORE_EUNAVAIL:
		rc = ENGINE_EUNAVAIL;
		break;
	case STORE_EFULL:
	case STORE_ENOSPC:
		rc = ENGINE_EFULL;
		break;
	case STORE_ENOMEM:
		rc = ENGINE_ENOMEM;
		break;
	case STORE_ENOTFOUND:
		rc = ENGINE_ENOTFOUND;
		break;
	default:
		log_warn("%s: %s", what, store_strerror(rc));
		rc = ENGINE_ESTORE;
		break;
	}
	resp_engine_error(r, rc, "", what);
}

json_t *
req_app_run(struct req *r, const char *app_id, const char *run_id,
    const char *what)
{
	json_t		*run = NULL;
	const char	*app;
	int		 rc;

	if ((rc = engine_run_get(r->eng, run_id, &run)) != 0) {
		resp_engine_error(r, rc, "", what);
		return NULL;
	}
	app = json_string_value(json_object_get(run, "app_id"));
	if (app == NULL || strcmp(app, app_id) != 0) {
		json_decref(run);
		resp_error(r, 404, "not_found", "%s not found", what);
		return NULL;
	}
	return run;
}
