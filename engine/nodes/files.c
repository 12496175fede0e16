/*
 * files.c — Dify file objects for the nodes: reading a file's bytes (data:
 * URLs, remote URLs through the outbound guard; uploads later) and making
 * new files that carry their bytes as data: URLs. See nodes.h.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "engine/nodes/nodes.h"

/* ====== Types ====== */

static const struct {
	const char	*ext;
	const char	*mime;
} mime_table[] = {
	{ "txt", "text/plain" },
	{ "md", "text/markdown" },
	{ "markdown", "text/markdown" },
	{ "csv", "text/csv" },
	{ "html", "text/html" },
	{ "htm", "text/html" },
	{ "xml", "application/xml" },
	{ "xml", "text/xml" },
	{ "json", "application/json" },
	{ "yaml", "application/yaml" },
	{ "yml", "application/x-yaml" },
	{ "yaml", "text/yaml" },
	{ "pdf", "application/pdf" },
	{ "docx", "application/vnd.openxmlformats-officedocument."
	    "wordprocessingml.document" },
	{ "xlsx", "application/vnd.openxmlformats-officedocument."
	    "spreadsheetml.sheet" },
	{ "pptx", "application/vnd.openxmlformats-officedocument."
	    "presentationml.presentation" },
	{ "doc", "application/msword" },
	{ "xls", "application/vnd.ms-excel" },
	{ "odt", "application/vnd.oasis.opendocument.text" },
	{ "ods", "application/vnd.oasis.opendocument.spreadsheet" },
	{ "odp", "application/vnd.oasis.opendocument.presentation" },
	{ "epub", "application/epub+zip" },
	{ "eml", "message/rfc822" },
	{ "msg", "application/vnd.ms-outlook" },
	{ "ppt", "application/vnd.ms-powerpoint" },
	{ "png", "image/png" },
	{ "jpg", "image/jpeg" },
	{ "jpeg", "image/jpeg" },
	{ "gif", "image/gif" },
	{ "webp", "image/webp" },
	{ "svg", "image/svg+xml" },
	{ "mp3", "audio/mpeg" },
	{ "wav", "audio/wav" },
	{ "mp4", "video/mp4" },
	{ "zip", "application/zip" },
	{ "log", "text/plain" },
	{ "py", "text/x-python" },
	{ "js", "text/javascript" },
	{ "sh", "text/x-shellscript" },
	{ "bin", "application/octet-stream" },
};
#define NMIME (sizeof(mime_table) / sizeof(mime_table[0]))

static const char *
ext_of_mime(const char *mime)
{
	size_t	i, n;

	if (mime == NULL)
		return NULL;
	n = strcspn(mime, "; ");
	for (i = 0; i < NMIME; i++)
		if (strlen(mime_table[i].mime) == n &&
		    strncasecmp(mime_table[i].mime, mime, n) == 0)
			return mime_table[i].ext;
	return NULL;
}

/* The type of a file name's extension (its first entry), or NULL. */
static const char *
mime_of_name(const char *name)
{
	const char	*dot = name != NULL ? strrchr(name, '.') : NULL;
	size_t		 i;

	if (dot == NULL || dot[1] == '\0')
		return NULL;
	for (i = 0; i < NMIME; i++)
		if (strcasecmp(mime_table[i].ext, dot + 1) == 0)
			return mime_table[i].mime;
	return NULL;
}

static const char *
dify_type_of(const char *mime, const char *ext)
{
	static const char *const docs[] = { "txt", "md", "markdown", "csv",
		"html", "htm", "xml", "json", "yaml", "yml", "pdf", "docx",
		"xlsx", "pptx", "doc", "xls", "odt", "ods", "odp", "epub",
		"eml", "msg", "ppt", NULL };
	size_t i;

	if (mime != NULL && strncmp(mime, "image/", 6) == 0)
		return "image";
	if (mime != NULL && strncmp(mime, "audio/", 6) == 0)
		return "audio";
	if (mime != NULL && strncmp(mime, "video/", 6) == 0)
		return "video";
	for (i = 0; ext != NULL && docs[i] != NULL; i++)
		if (strcmp(docs[i], ext) == 0)
			return "document";
	return "custom";
}

const char *
file_ext(const json_t *file, char *buf, size_t bufsz)
{
	const char	*e = json_string_value(json_object_get(file,
			    "extension"));
	const char	*name, *dot;
	size_t		 i;

	buf[0] = '\0';
	if (e == NULL || *e == '\0' || strcmp(e, ".") == 0) {
		e = NULL;
		name = json_string_value(json_object_get(file, "filename"));
		if (name != NULL && (dot = strrchr(name, '.')) != NULL &&
		    strchr(dot, '/') == NULL)
			e = dot;
	}
	if (e == NULL)
		e = ext_of_mime(json_string_value(json_object_get(file,
		    "mime_type")));
	if (e == NULL)
		return buf;
	if (*e == '.')
		e++;
	for (i = 0; e[i] != '\0' && i + 1 < bufsz; i++)
		buf[i] = (char)tolower((unsigned char)e[i]);
	buf[i] = '\0';
	return buf;
}

/* ====== base64 ====== */

int
file_b64_decode(const char *s, size_t n, char **out, size_t *outlen)
{
	unsigned char	*norm = NULL, *buf = NULL;
	size_t		 i, m = 0, pad = 0;
	int		 got, rc = -1;

	/* Normalise for OpenSSL: no whitespace, the standard alphabet, and
	 * padding to a multiple of four. */
	if ((norm = malloc(n + 4)) == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		if (isspace((unsigned char)s[i]))
			continue;
		norm[m++] = s[i] == '-' ? '+' : s[i] == '_' ? '/' :
		    (unsigned char)s[i];
	}
	while (m % 4 != 0)
		norm[m++] = '=';
	for (i = m; i > 0 && norm[i - 1] == '=' && pad < 2; i--)
		pad++;
	if ((buf = malloc(m / 4 * 3 + 1)) == NULL)
		goto out;
	if ((got = EVP_DecodeBlock(buf, norm, (int)m)) < 0)
		goto out;
	/* EVP_DecodeBlock counts the bytes the padding stands for */
	*outlen = (size_t)got - pad;
	buf[*outlen] = '\0';
	*out = (char *)buf;
	buf = NULL;
	rc = 0;
out:
	free(norm);
	free(buf);
	return rc;
}

char *
file_b64_encode(const void *data, size_t n)
{
	char	*out;

	if (n > (size_t)1 << 30 || (out = malloc((n + 2) / 3 * 4 + 1)) ==
	    NULL)
		return NULL;
	/* EVP_EncodeBlock takes an int length: feed it in slices whose
	 * size is a multiple of 3 so the pieces join without padding. */
	{
		const unsigned char	*p = data;
		size_t			 done = 0, o = 0, k;

		while (done < n) {
			k = n - done > 3 * 1024 * 1024 ? 3 * 1024 * 1024 :
			    n - done;
			o += (size_t)EVP_EncodeBlock((unsigned char *)out + o,
			    p + done, (int)k);
			done += k;
		}
		out[o] = '\0';
	}
	return out;
}

/* ====== Reading bytes ====== */

static int
hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	ch = tolower(ch);
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return -1;
}

/* Decodes a data: URL. Returns 0 or -1 with c failed. */
static int
data_url(struct node_ctx *c, const char *url, char **data, size_t *len)
{
	const char	*comma = strchr(url, ',');
	char		*buf = NULL;
	size_t		 n, i, o = 0;
	int		 rc = -1, b64, h, l;

	if (comma == NULL) {
		node_fail(c, "the file's data: URL has no ','");
		goto out;
	}
	b64 = comma - url >= 7 && strncmp(comma - 7, ";base64", 7) == 0;
	n = strlen(comma + 1);
	if (b64) {
		if (file_b64_decode(comma + 1, n, data, len) != 0) {
			node_fail(c, "the file's data: URL is not valid "
			    "base64");
			goto out;
		}
		rc = 0;
		goto out;
	}
	if ((buf = malloc(n + 1)) == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	for (i = comma + 1 - url; url[i] != '\0'; i++) {
		if (url[i] == '%' && (h = hexval((unsigned char)url[i + 1])) >=
		    0 && (l = hexval((unsigned char)url[i + 2])) >= 0) {
			buf[o++] = (char)(h << 4 | l);
			i += 2;
		} else
			buf[o++] = url[i];
	}
	buf[o] = '\0';
	*data = buf;
	*len = o;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	return rc;
}

/* Fetches an http(s) URL through the guard. Returns 0 or -1. */
static int
remote_url(struct node_ctx *c, const char *url, char **data, size_t *len)
{
	struct outbound_req	req;
	struct outbound_resp	resp;
	char			err[ENGINE_ERRMAX];
	int			rc = -1, r;

	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	req.url = url;
	req.follow = 1;
	req.max_bytes = c->run->e->conf->http_max_binary_response;
	if ((r = outbound_fetch(c->run->e, &req, err, &resp)) != 0) {
		if (r == ENGINE_ELIMIT)
			node_fail(c, "the file at %s is larger than %lld bytes "
			    "(http.max_binary_response)", url,
			    (long long)req.max_bytes);
		else
			node_fail(c, "cannot download the file: %s", err);
		goto out;
	}
	if (resp.status < 200 || resp.status > 299) {
		node_fail(c, "cannot download the file at %s: HTTP status %ld",
		    url, resp.status);
		goto out;
	}
	*data = resp.body;
	*len = resp.len;
	resp.body = NULL;
	rc = 0;
out:
	outbound_resp_release(&resp);
	return rc;
}

int
file_bytes(struct node_ctx *c, const json_t *file, char **data, size_t *len)
{
	const char	*url = json_string_value(json_object_get(file, "url"));
	const char	*remote = json_string_value(json_object_get(file,
			    "remote_url"));
	const char	*tm = json_string_value(json_object_get(file,
			    "transfer_method"));
	const char	*name = json_string_value(json_object_get(file,
			    "filename"));
	const char	*id;

	*data = NULL;
	*len = 0;
	if (!json_is_object(file))
		return node_fail(c, "the value is not a file");
	if (url == NULL || *url == '\0')
		url = remote;
	if (url != NULL && strncmp(url, "data:", 5) == 0)
		return data_url(c, url, data, len);
	/* Uploaded files: the run's app's uploads
	 * (engine/records/uploads.c). */
	id = json_string_value(json_object_get(file, "related_id"));
	if (id == NULL)
		id = json_string_value(json_object_get(file,
		    "upload_file_id"));
	if (tm != NULL && strcmp(tm, "local_file") == 0 && id != NULL) {
		if (engine_upload_get(c->run->e, c->run->app_id, id, data, len,
		    NULL) == 0)
			return 0;
		*data = NULL;
		*len = 0;
		return node_fail(c, "the file '%s' is not available: no upload "
		    "%s for this app", name ? name : "", id);
	}
	if (url != NULL && (strncasecmp(url, "http://", 7) == 0 ||
	    strncasecmp(url, "https://", 8) == 0))
		return remote_url(c, url, data, len);
	/*
	 * Tool files (transfer_method tool_file with a related_id) live in a
	 * file store flowcgi does not have: the files flowcgi makes carry
	 * their bytes in a data: URL instead.
	 */
	if (tm != NULL && strcmp(tm, "tool_file") == 0 && id != NULL)
		return node_fail(c, "the file '%s' (tool file %s) is not "
		    "available: tool files cannot be read yet", name ? name :
		    "", id);
	return node_fail(c, "the file '%s' has no URL to read it from",
	    name ? name : "");
}

/* ====== Making files ====== */

json_t *
file_from_bytes(const char *name, const char *mime, const void *data,
    size_t len)
{
	json_t		*f = NULL;
	char		*b64 = NULL, *url = NULL, ext[32] = "", nbuf[64];
	const char	*e, *dot;
	size_t		 ul, ml;

	if ((mime == NULL || *mime == '\0') &&
	    (mime = mime_of_name(name)) == NULL)
		mime = "application/octet-stream";
	ml = strcspn(mime, ";");
	while (ml > 0 && mime[ml - 1] == ' ')
		ml--;
	if (name != NULL && (dot = strrchr(name, '.')) != NULL &&
	    dot[1] != '\0')
		snprintf(ext, sizeof(ext), "%s", dot);
	else if ((e = ext_of_mime(mime)) != NULL)
		snprintf(ext, sizeof(ext), ".%s", e);
	if (name == NULL || *name == '\0') {
		snprintf(nbuf, sizeof(nbuf), "file%s", ext);
		name = nbuf;
	}
	if ((b64 = file_b64_encode(data, len)) == NULL)
		goto out;
	ul = strlen(b64) + ml + 16;
	if ((url = malloc(ul)) == NULL)
		goto out;
	snprintf(url, ul, "data:%.*s;base64,%s", (int)ml, mime, b64);
	f = json_pack("{s:s,s:n,s:s,s:s,s:s,s:n,s:n,s:s,s:s,s:s%,s:I,s:s}",
	    "dify_model_identity", "__dify__file__", "id", "tenant_id", "",
	    "type", dify_type_of(mime, ext[0] ? ext + 1 : NULL),
	    "transfer_method", "tool_file", "remote_url", "related_id",
	    "filename", name, "extension", ext, "mime_type", mime, ml,
	    "size", (json_int_t)len, "url", url);
out:
	free(b64);
	free(url);
	return f;
}
