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

int
engine_upload_fetch(struct engine *e, const char *app_id, const char *user,
    const char *url, char *err, json_t **out)
{
	struct outbound_req	 req;
	struct outbound_resp	 resp;
	char			*name = NULL, *semi;
	int			 rc;

	if (url == NULL || (strncmp(url, "http://", 7) != 0 &&
	    strncmp(url, "https://", 8) != 0))
		return engine_invalid(err, "url must be an http or https URL");
	memset(&req, 0, sizeof(req));
	req.url = url;
	req.follow = 1;
	req.max_bytes = e->conf->upload_max_file;
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
	if ((name = url_file_name(url)) == NULL) {
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

/* ====== The HEAD probe ====== */

/* The headers of the final response of a probe (redirects start over). */
struct probe {
	char	type[256];
	int64_t	length;
};

/* Copies the value of header line p[0..n) named name into out (at most
 * size - 1 bytes, spaces trimmed); 1 when the line is that header. */
static int
probe_header_value(const char *p, size_t n, const char *name, char *out,
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

static void
probe_on_header(const char *p, size_t n, void *arg)
{
	struct probe	*pr = arg;
	char		 v[32], *end;
	long long	 len;

	if (n >= 5 && memcmp(p, "HTTP/", 5) == 0) {
		pr->type[0] = '\0';
		pr->length = -1;
	} else if (probe_header_value(p, n, "Content-Length", v, sizeof(v))) {
		errno = 0;
		len = strtoll(v, &end, 10);
		pr->length = errno == 0 && end != v && *end == '\0' &&
		    len >= 0 ? (int64_t)len : -1;
	} else
		probe_header_value(p, n, "Content-Type", pr->type,
		    sizeof(pr->type));
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
	struct probe		 pr;
	long			 status;
	int			 rc, pass;

	*out = NULL;
	if (url == NULL || (strncmp(url, "http://", 7) != 0 &&
	    strncmp(url, "https://", 8) != 0))
		return engine_invalid(err, "url must be an http or https URL");
	/* a HEAD, then (Dify's fallback) a GET whose head is all we read */
	for (pass = 0; pass < 2; pass++) {
		memset(&req, 0, sizeof(req));
		memset(&pr, 0, sizeof(pr));
		pr.length = -1;
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
