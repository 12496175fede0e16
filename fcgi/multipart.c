/*
 * multipart.c — multipart/form-data bodies (RFC 7578): the parts, their
 * names, file names and content types. Part data points into the body.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "fcgi/internal.h"

#define MP_BOUNDARY_MAX 70
#define MP_HEADERS_MAX 8192

/*
 * Finds parameter name (case-insensitive) in a header value such as
 * `form-data; name="file"; filename="a.txt"` and returns it unquoted in the
 * arena, or NULL. RFC 5987 name*=UTF-8''percent-encoded is preferred over
 * the plain form when both are present.
 */
static char *
header_param(struct arena *a, const char *v, size_t vlen, const char *name)
{
	const char	*p = v, *end = v + vlen, *s, *e;
	size_t		 nlen = strlen(name);
	char		*plain = NULL, *dec, *out;
	int		 dlen;

	while (p < end) {
		while (p < end && (*p == ';' || *p == ' ' || *p == '\t'))
			p++;
		s = p;
		while (p < end && *p != '=' && *p != ';')
			p++;
		if (p >= end || *p != '=') {
			continue;
		}
		e = p++;	/* s..e is the parameter name */
		if (*p == '"') {
			const char *q = ++p;
			char *buf, *w;

			if ((buf = arena_alloc(a, (size_t)(end - q) + 1)) ==
			    NULL)
				return NULL;
			for (w = buf; p < end && *p != '"'; p++) {
				if (*p == '\\' && p + 1 < end)
					p++;
				*w++ = *p;
			}
			*w = '\0';
			if (p < end)
				p++;
			if ((size_t)(e - s) == nlen &&
			    strncasecmp(s, name, nlen) == 0)
				plain = buf;
			continue;
		}
		{
			const char *q = p;

			while (p < end && *p != ';' && *p != ' ')
				p++;
			if ((size_t)(e - s) == nlen + 1 && s[nlen] == '*' &&
			    strncasecmp(s, name, nlen) == 0 &&
			    p - q > 7 && strncasecmp(q, "UTF-8''", 7) == 0) {
				dec = curl_easy_unescape(NULL, q + 7,
				    (int)(p - q - 7), &dlen);
				if (dec == NULL)
					return NULL;
				out = memchr(dec, '\0', (size_t)dlen) ? NULL :
				    arena_strndup(a, dec, (size_t)dlen);
				curl_free(dec);
				if (out != NULL)
					return out;
			} else if ((size_t)(e - s) == nlen &&
			    strncasecmp(s, name, nlen) == 0)
				plain = arena_strndup(a, q, (size_t)(p - q));
		}
	}
	return plain;
}

int
multipart_is_form(const char *content_type)
{
	content_type += strspn(content_type, " ");
	return strncasecmp(content_type, "multipart/form-data", 19) == 0;
}

char *
multipart_boundary(struct arena *a, const char *ct)
{
	const char	*p;
	char		*b;

	if (!multipart_is_form(ct))
		return NULL;
	p = ct + strspn(ct, " ") + strlen("multipart/form-data");
	b = header_param(a, p, strlen(p), "boundary");
	if (b == NULL || *b == '\0' || strlen(b) > MP_BOUNDARY_MAX)
		return NULL;
	return b;
}

int
multipart_parse(struct arena *a, const char *content_type, const char *body,
    size_t len, size_t max_parts, struct mp_part **parts, size_t *nparts,
    char *err, size_t errsz)
{
	const char	*p, *end = body + len, *hend, *next, *line, *eol;
	char		*boundary, *delim;
	size_t		 dlen, n = 0;
	struct mp_part	*out;

	*parts = NULL;
	*nparts = 0;
	if ((boundary = multipart_boundary(a, content_type)) == NULL) {
		snprintf(err, errsz, "expected multipart/form-data with a "
		    "boundary of 1 to %d characters", MP_BOUNDARY_MAX);
		return -1;
	}
	/* "\r\n--boundary": the first one may start the body without CRLF. */
	if ((delim = arena_printf(a, "\r\n--%s", boundary)) == NULL ||
	    (out = arena_alloc(a, (max_parts + 1) * sizeof(*out))) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	dlen = strlen(delim);
	if (len >= dlen - 2 && memcmp(body, delim + 2, dlen - 2) == 0)
		p = body + dlen - 2;
	else if ((p = memmem(body, len, delim, dlen)) != NULL)
		p += dlen;
	else {
		snprintf(err, errsz, "multipart body has no boundary line");
		return -1;
	}
	for (;;) {
		/* After a delimiter: "--" ends the body, CRLF starts a part. */
		if (end - p >= 2 && p[0] == '-' && p[1] == '-')
			break;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (end - p < 2 || p[0] != '\r' || p[1] != '\n') {
			snprintf(err, errsz, "malformed multipart boundary "
			    "line");
			return -1;
		}
		p += 2;
		hend = memmem(p, (size_t)(end - p), "\r\n\r\n", 4);
		if (hend == NULL || hend - p > MP_HEADERS_MAX) {
			snprintf(err, errsz, "multipart part headers are "
			    "missing or longer than %d bytes", MP_HEADERS_MAX);
			return -1;
		}
		/* a NUL would cut a name or a file name short */
		if (memchr(p, '\0', (size_t)(hend - p)) != NULL) {
			snprintf(err, errsz, "multipart part %zu's headers "
			    "hold a NUL byte", n + 1);
			return -1;
		}
		if (n == max_parts) {
			snprintf(err, errsz, "more than %zu multipart parts",
			    max_parts);
			return -1;
		}
		memset(&out[n], 0, sizeof(out[n]));
		for (line = p; line < hend; line = eol + 2) {
			eol = memmem(line, (size_t)(hend + 2 - line), "\r\n",
			    2);
			if (eol == NULL)
				eol = hend;
			if ((size_t)(eol - line) > 20 && strncasecmp(line,
			    "Content-Disposition:", 20) == 0) {
				out[n].name = header_param(a, line + 20,
				    (size_t)(eol - line - 20), "name");
				out[n].filename = header_param(a, line + 20,
				    (size_t)(eol - line - 20), "filename");
			} else if ((size_t)(eol - line) > 13 &&
			    strncasecmp(line, "Content-Type:", 13) == 0) {
				const char *v = line + 13;

				while (v < eol && *v == ' ')
					v++;
				out[n].content_type = arena_strndup(a, v,
				    (size_t)(eol - v));
			}
		}
		if (out[n].name == NULL) {
			snprintf(err, errsz, "multipart part %zu has no "
			    "Content-Disposition name", n + 1);
			return -1;
		}
		p = hend + 4;
		if ((next = memmem(p, (size_t)(end - p), delim, dlen)) ==
		    NULL) {
			snprintf(err, errsz, "multipart body ends inside part "
			    "'%.64s'", out[n].name);
			return -1;
		}
		out[n].data = p;
		out[n].len = (size_t)(next - p);
		n++;
		p = next + dlen;
	}
	*parts = out;
	*nparts = n;
	return 0;
}

int
req_part_text(struct req *r, const struct mp_part *p, const char **out)
{
	*out = NULL;
	if (memchr(p->data, '\0', p->len) != NULL) {
		resp_error(r, 400, "invalid_param", "multipart field %.64s "
		    "holds a NUL byte", p->name);
		return -1;
	}
	if ((*out = arena_strndup(r->a, p->data, p->len)) == NULL) {
		resp_error(r, 500, "internal_server_error", "out of memory");
		return -1;
	}
	return 0;
}
