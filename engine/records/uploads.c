/*
 * uploads.c — files uploaded through the service API for runs: a record
 * per upload (uploads database) and the bytes as a content-addressed blob.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "engine/internal.h"
#include "engine/records/records.h"

struct upload_put {
	json_t		*rec;
	const void	*data;
	size_t		 len;
};

static int
upload_put_fn(struct store_txn *t, void *arg)
{
	struct upload_put	*p = arg;
	json_t			*app = NULL;
	char			 hex[STORE_HASH_HEX];
	int			 rc;

	if ((rc = store_get_json(t, STORE_DB_APPS, json_string_value(
	    json_object_get(p->rec, "app_id")), &app)) != 0)
		return rc;
	json_decref(app);
	if ((rc = store_blob_ref(t, p->data, p->len, hex)) != 0)
		return rc;
	if (json_object_set_new(p->rec, "checksum", json_string(hex)) != 0)
		return STORE_ENOMEM;
	return store_put_json(t, STORE_DB_UPLOADS, json_string_value(
	    json_object_get(p->rec, "id")), p->rec, STORE_NOOVERWRITE);
}

int
engine_upload_put(struct engine *e, const char *app_id, const char *user,
    const char *name, const char *mime, const void *data, size_t len,
    char *err, json_t **out)
{
	struct upload_put	 p;
	const char		*dot;
	char			 id[37];
	int			 rc;

	if ((int64_t)len > e->conf->upload_max_file) {
		engine_invalid(err, "file of %zu bytes is larger than %lld "
		    "bytes (uploads.max_file_size)", len,
		    (long long)e->conf->upload_max_file);
		return ENGINE_ELIMIT;
	}
	if (name == NULL || *name == '\0' || strlen(name) > 255 ||
	    strchr(name, '/') != NULL)
		return engine_invalid(err, "the file needs a name of 1 to 255 "
		    "bytes without '/'");
	engine_uuid(id);
	dot = strrchr(name, '.');
	memset(&p, 0, sizeof(p));
	p.data = data;
	p.len = len;
	p.rec = json_pack("{s:s,s:s,s:s,s:I,s:s,s:s,s:s,s:I}", "id", id,
	    "app_id", app_id, "name", name, "size", (json_int_t)len,
	    "extension", dot ? dot + 1 : "", "mime_type", mime && *mime ?
	    mime : "application/octet-stream", "created_by", user ? user : "",
	    "created_at", (json_int_t)engine_now());
	if (p.rec == NULL)
		return ENGINE_ENOMEM;
	rc = engine_from_store(store_write(e->store, upload_put_fn, &p));
	if (rc == 0) {
		json_object_del(p.rec, "app_id");
		json_object_del(p.rec, "checksum");
		/* Dify's file_fields: preview_url, null for an upload */
		if (json_object_set_new(p.rec, "preview_url", json_null()) !=
		    0) {
			json_decref(p.rec);
			return ENGINE_ENOMEM;
		}
		*out = p.rec;
		return 0;
	}
	json_decref(p.rec);
	return rc;
}

int
engine_upload_get(struct engine *e, const char *app_id, const char *id,
    char **data, size_t *len, json_t **meta)
{
	struct store_txn	*t = NULL;
	json_t			*rec = NULL;
	const char		*app, *sum;
	int			 rc;

	if (engine_uuid_check(id) != 0)
		return ENGINE_ENOTFOUND;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	if ((rc = store_get_json(t, STORE_DB_UPLOADS, id, &rec)) != 0)
		goto out;
	app = json_string_value(json_object_get(rec, "app_id"));
	sum = json_string_value(json_object_get(rec, "checksum"));
	if (app == NULL || strcmp(app, app_id) != 0 || sum == NULL) {
		rc = STORE_ENOTFOUND;
		goto out;
	}
	/* data and len come together (both NULL: only the record) */
	if (data != NULL && len != NULL &&
	    (rc = store_blob_load(t, sum, data, len)) != 0)
		goto out;
	if (meta != NULL) {
		*meta = rec;
		rec = NULL;
	}
out:
	store_read_end(t);
	json_decref(rec);
	return engine_from_store(rc);
}

int
engine_upload_open(struct engine *e, const char *app_id, const char *id,
    json_t **meta, char sum[65], uint64_t *size)
{
	struct store_txn	*t = NULL;
	json_t			*rec = NULL;
	const char		*s;
	int			 rc;

	*meta = NULL;
	if (engine_uuid_check(id) != 0)
		return ENGINE_ENOTFOUND;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	if ((rc = store_get_json(t, STORE_DB_UPLOADS, id, &rec)) == 0) {
		s = json_string_value(json_object_get(rec, "checksum"));
		if (!record_field_is(rec, "app_id", app_id) || s == NULL ||
		    strlen(s) != 64)
			rc = STORE_ENOTFOUND;
		else {
			memcpy(sum, s, 65);
			rc = store_blob_size(t, sum, size);
		}
	}
	store_read_end(t);
	if (rc != 0) {
		json_decref(rec);
		return engine_from_store(rc);
	}
	*meta = rec;
	return 0;
}

/*
 * The name of the file at url: its path's last segment, percent-decoded,
 * without the query (on success malloc'd into *out), else "file".
 */
static char *
url_file_name(const char *url)
{
	const char	*p = strstr(url, "://"), *end, *slash;
	char		*dec;
	int		 n;

	p = p ? p + 3 : url;
	end = p + strcspn(p, "?#");
	slash = NULL;
	for (const char *q = p; q < end; q++)
		if (*q == '/')
			slash = q;
	if (slash != NULL && slash + 1 < end &&
	    (dec = curl_easy_unescape(NULL, slash + 1, (int)(end - slash - 1),
	    &n)) != NULL) {
		char *name = NULL;

		if (n > 0 && n <= 255 && memchr(dec, '/', (size_t)n) == NULL &&
		    memchr(dec, '\0', (size_t)n) == NULL)
			name = strdup(dec);
		curl_free(dec);
		if (name != NULL)
			return name;
	}
	return strdup("file");
}

static void	probe_on_header(const char *, size_t, void *);

int
engine_upload_fetch(struct engine *e, const char *app_id, const char *user,
    const char *url, char *err, json_t **out)
{
	struct outbound_req	 req;
	struct outbound_resp	 resp;
	struct upload_head	 head;
	char			*name = NULL, *semi;
	int			 rc;

	if (url == NULL || (strncmp(url, "http://", 7) != 0 &&
	    strncmp(url, "https://", 8) != 0))
		return engine_invalid(err, "url must be an http or https URL");
	memset(&req, 0, sizeof(req));
	req.url = url;
	req.follow = 1;
	req.max_bytes = e->conf->upload_max_file;
	upload_head_init(&head);
	req.on_header = probe_on_header;
	req.header_arg = &head;
	if ((rc = outbound_fetch(e, &req, err, &resp)) != 0) {
		if (rc == ENGINE_ELIMIT)
			engine_invalid(err, "the file at the URL is larger "
			    "than %lld bytes (uploads.max_file_size)",
			    (long long)req.max_bytes);
		goto out;
	}
	if (resp.status < 200 || resp.status > 299) {
		rc = ENGINE_EFETCH;
		snprintf(err, ENGINE_ERRMAX, "the URL answered HTTP status %ld",
		    resp.status);
		goto out;
	}
	/* Dify's _extract_filename: Content-Disposition's name first */
	if ((name = head.name[0] != '\0' ? strdup(head.name) :
	    url_file_name(url)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if (resp.content_type != NULL &&
	    (semi = strchr(resp.content_type, ';')) != NULL)
		*semi = '\0';
	rc = engine_upload_put(e, app_id, user, name, resp.content_type,
	    resp.body ? resp.body : "", resp.len, err, out);
out:
	free(name);
	outbound_resp_release(&resp);
	return rc;
}

/* ====== The head of a response ====== */

/* Copies the value of header line p[0..n) named name into out (at most
 * size - 1 bytes, spaces trimmed); 1 when the line is that header. */
static int
head_value(const char *p, size_t n, const char *name, char *out,
    size_t size)
{
	size_t	nl = strlen(name), i, j;

	if (n <= nl || p[nl] != ':' || strncasecmp(p, name, nl) != 0)
		return 0;
	for (i = nl + 1; i < n && (p[i] == ' ' || p[i] == '\t'); i++)
		;
	for (j = n; j > i && (p[j - 1] == ' ' || p[j - 1] == '\t'); j--)
		;
	if (j - i >= size)
		j = i + size - 1;
	memcpy(out, p + i, j - i);
	out[j - i] = '\0';
	return 1;
}

void
upload_head_init(struct upload_head *h)
{
	memset(h, 0, sizeof(*h));
	h->length = -1;
}

/*
 * Sets h->name to name v[0..n) (raw bytes of a parameter, percent-encoded;
 * latin1: ISO-8859-1, made UTF-8) when it is a usable one.
 */
static void
head_name(struct upload_head *h, const char *v, size_t n, int latin1,
    int star)
{
	char		*dec = NULL, buf[512];
	const char	*base;
	json_t		*ok;
	size_t		 i, bl, o = 0;
	int		 len;

	if (n == 0 || n > 2048 || (dec = curl_easy_unescape(NULL, v, (int)n,
	    &len)) == NULL)
		goto out;
	/* the last path segment only: no "../" reaches a name */
	base = dec;
	for (i = 0; i < (size_t)len; i++)
		if (dec[i] == '/' || dec[i] == '\\')
			base = dec + i + 1;
	bl = (size_t)len - (size_t)(base - dec);
	for (i = 0; i < bl; i++) {
		unsigned char c = (unsigned char)base[i];

		if (c < 0x20 || c == 0x7f || o + 2 >= sizeof(buf))
			goto out;	/* a control character, or too long */
		if (latin1 && c >= 0x80) {
			buf[o++] = (char)(0xc0 | c >> 6);
			buf[o++] = (char)(0x80 | (c & 0x3f));
		} else
			buf[o++] = (char)c;
	}
	/* all spaces or dots is no name */
	for (i = 0; i < o && (buf[i] == ' ' || buf[i] == '.'); i++)
		;
	if (i == o || o >= sizeof(h->name))
		goto out;
	/* jansson's check: the name goes into JSON records */
	if ((ok = json_stringn(buf, o)) == NULL)
		goto out;
	json_decref(ok);
	memcpy(h->name, buf, o);
	h->name[o] = '\0';
	h->name_star = star;
out:
	curl_free(dec);
}

/*
 * Content-Disposition's parameters (RFC 6266): filename*=charset'lang'
 * pct-encoded (RFC 5987: UTF-8 or ISO-8859-1; another charset only when
 * its bytes are UTF-8) wins over filename= (a token or a quoted string
 * with \-escapes, percent-decoded as Dify's _extract_filename does).
 */
static void
head_disposition(struct upload_head *h, const char *p, size_t n)
{
	char		 v[1024];
	size_t		 i = 0, ks, kl, vl;
	int		 star;

	while (i < n) {
		while (i < n && (p[i] == ';' || p[i] == ' ' || p[i] == '\t'))
			i++;
		ks = i;
		while (i < n && p[i] != '=' && p[i] != ';')
			i++;
		kl = i - ks;
		while (kl > 0 && (p[ks + kl - 1] == ' ' || p[ks + kl - 1] ==
		    '\t'))
			kl--;
		if (i >= n || p[i] != '=')
			continue;	/* "attachment", or a broken one */
		i++;
		while (i < n && (p[i] == ' ' || p[i] == '\t'))
			i++;
		vl = 0;
		if (i < n && p[i] == '"') {
			for (i++; i < n && p[i] != '"'; i++) {
				if (p[i] == '\\' && i + 1 < n)
					i++;
				if (vl < sizeof(v))
					v[vl++] = p[i];
			}
			if (i < n)
				i++;	/* the closing quote */
			while (i < n && p[i] != ';')
				i++;
		} else {
			for (; i < n && p[i] != ';'; i++)
				if (vl < sizeof(v))
					v[vl++] = p[i];
			while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] ==
			    '\t'))
				vl--;
		}
		if (vl == sizeof(v))
			continue;	/* longer than any name we keep */
		star = kl == 9 && strncasecmp(p + ks, "filename*", 9) == 0;
		if (star) {
			const char	*q1 = memchr(v, '\'', vl), *q2;
			size_t		 cl;

			if (q1 == NULL || (q2 = memchr(q1 + 1, '\'', vl -
			    (size_t)(q1 + 1 - v))) == NULL)
				continue;	/* not charset'lang'value */
			cl = (size_t)(q1 - v);
			head_name(h, q2 + 1, vl - (size_t)(q2 + 1 - v),
			    (cl == 10 && strncasecmp(v, "iso-8859-1", 10) ==
			    0) || (cl == 6 && strncasecmp(v, "latin1", 6) == 0),
			    1);
		} else if (kl == 8 && strncasecmp(p + ks, "filename", 8) == 0 &&
		    !h->name_star)
			head_name(h, v, vl, 0, 0);
	}
}

void
upload_head_line(struct upload_head *h, const char *p, size_t n)
{
	char		 v[32], *end;
	long long	 len;
	static const char cd[] = "Content-Disposition";

	if (n >= 5 && memcmp(p, "HTTP/", 5) == 0)
		upload_head_init(h);
	else if (head_value(p, n, "Content-Length", v, sizeof(v))) {
		errno = 0;
		len = strtoll(v, &end, 10);
		h->length = errno == 0 && end != v && *end == '\0' &&
		    len >= 0 && v[0] != '-' && v[0] != '+' ? (int64_t)len : -1;
	} else if (n > sizeof(cd) && p[sizeof(cd) - 1] == ':' &&
	    strncasecmp(p, cd, sizeof(cd) - 1) == 0)
		head_disposition(h, p + sizeof(cd), n - sizeof(cd));
	else
		head_value(p, n, "Content-Type", h->type, sizeof(h->type));
}

/* ====== The HEAD probe ====== */

static void
probe_on_header(const char *p, size_t n, void *arg)
{
	upload_head_line(arg, p, n);
}

/* The body of a probe's GET: dropped. */
static int
probe_on_data(const char *p, size_t n, void *arg)
{
	return 0;
}

int
engine_upload_probe(struct engine *e, const char *url, char *err,
    json_t **out)
{
	struct outbound_req	 req;
	struct outbound_stream	*s = NULL;
	struct upload_head	 pr;
	long			 status;
	int			 rc, pass;

	*out = NULL;
	if (url == NULL || (strncmp(url, "http://", 7) != 0 &&
	    strncmp(url, "https://", 8) != 0))
		return engine_invalid(err, "url must be an http or https URL");
	/* a HEAD, then (Dify's fallback) a GET whose head is all we read */
	for (pass = 0; pass < 2; pass++) {
		memset(&req, 0, sizeof(req));
		upload_head_init(&pr);
		req.method = pass == 0 ? "HEAD" : NULL;
		req.url = url;
		req.follow = 1;
		req.on_data = probe_on_data;
		req.on_header = probe_on_header;
		req.header_arg = &pr;
		if ((rc = outbound_stream_open(e, &req, err, &s)) != 0)
			return rc;
		status = outbound_stream_status(s);
		outbound_stream_close(s);
		if (status == 200)
			break;
	}
	if (status < 200 || status > 299) {
		snprintf(err, ENGINE_ERRMAX, "the URL answered HTTP status %ld",
		    status);
		return ENGINE_EFETCH;
	}
	*out = json_pack("{s:s,s:I}", "file_type", pr.type[0] ? pr.type :
	    "application/octet-stream", "file_length", (json_int_t)pr.length);
	return *out != NULL ? 0 : ENGINE_ENOMEM;
}
