/*
 * zip.c — the entries of a zip document (pptx, odt/ods/odp, epub) that a
 * reader wants, unpacked by libarchive in one pass over the file, all of
 * them together within documents.max_unpacked and documents.max_ratio
 * times the file's size (a zip bomb stops there), with the run's stop and
 * documents.timeout asked between entries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>

#include "engine/documents/internal.h"

#define ZIP_MAX_ENTRIES	20000

void
doc_zip_free(struct doc_zip *z)
{
	size_t i;

	for (i = 0; i < z->n; i++) {
		free(z->ents[i].name);
		free(z->ents[i].data);
	}
	free(z->ents);
	memset(z, 0, sizeof(*z));
}

const struct doc_zip_ent *
doc_zip_find(const struct doc_zip *z, const char *name)
{
	size_t i;

	for (i = 0; i < z->n; i++)
		if (strcmp(z->ents[i].name, name) == 0)
			return &z->ents[i];
	return NULL;
}

int
doc_zip_read(const char *data, size_t len, const struct doc_limits *lim,
    const char *what, int (*want)(const char *name), struct doc_zip *z,
    char *err, size_t errsz)
{
	struct archive		*a = NULL;
	struct archive_entry	*ent;
	struct doc_zip_ent	*ne;
	struct dbuf		 b;
	char			 chunk[65536];
	const char		*name;
	la_ssize_t		 r;
	size_t			 max = lim->max_unpacked, used = 0;
	int			 rc = DOC_EDAMAGED, entries = 0, st;

	memset(z, 0, sizeof(*z));
	if (lim->max_ratio > 0 && len < max / lim->max_ratio)
		max = len * lim->max_ratio;
	if ((a = archive_read_new()) == NULL) {
		snprintf(err, errsz, "out of memory");
		return DOC_ENOMEM;
	}
	archive_read_support_format_zip(a);
	if (archive_read_open_memory(a, data, len) != ARCHIVE_OK) {
		snprintf(err, errsz, "the file is not a %s (zip) document: %s",
		    what, archive_error_string(a) ? archive_error_string(a) :
		    "unreadable");
		goto out;
	}
	for (;;) {
		st = archive_read_next_header(a, &ent);
		if (st == ARCHIVE_EOF)
			break;
		if (st != ARCHIVE_OK && st != ARCHIVE_WARN) {
			snprintf(err, errsz, "the %s (zip) document is damaged:"
			    " %s", what, archive_error_string(a) ?
			    archive_error_string(a) : "unreadable");
			goto out;
		}
		if (++entries > ZIP_MAX_ENTRIES) {
			snprintf(err, errsz, "the %s document has more than %d "
			    "entries", what, ZIP_MAX_ENTRIES);
			rc = DOC_ELIMIT;
			goto out;
		}
		if ((rc = doc_check_stop(lim, err, errsz)) != 0)
			goto out;
		rc = DOC_EDAMAGED;
		name = archive_entry_pathname(ent);
		if (name == NULL || !want(name) || doc_zip_find(z, name))
			continue;
		if (archive_entry_size_is_set(ent) &&
		    archive_entry_size(ent) > (la_int64_t)(max - used))
			goto toobig;
		dbuf_init(&b, max - used);
		while ((r = archive_read_data(a, chunk, sizeof(chunk))) > 0)
			if (dbuf_add(&b, chunk, (size_t)r) != DBUF_OK)
				break;
		if (b.err == DBUF_ETOOBIG) {
			dbuf_free(&b);
			goto toobig;
		}
		if (r < 0) {
			snprintf(err, errsz, "cannot unpack %s: %s", name,
			    archive_error_string(a) ? archive_error_string(a) :
			    "damaged");
			dbuf_free(&b);
			goto out;
		}
		if (b.err != DBUF_OK || (ne = realloc(z->ents, (z->n + 1) *
		    sizeof(*ne))) == NULL) {
			dbuf_free(&b);
			goto nomem;
		}
		z->ents = ne;
		ne[z->n].len = b.len;
		ne[z->n].data = dbuf_take(&b, NULL);
		if (ne[z->n].data == NULL)
			ne[z->n].data = calloc(1, 1);
		ne[z->n].name = strdup(name);
		dbuf_free(&b);
		z->n++;
		if (ne[z->n - 1].data == NULL || ne[z->n - 1].name == NULL)
			goto nomem;
		used += ne[z->n - 1].len;
	}
	rc = 0;
	goto out;
nomem:
	snprintf(err, errsz, "out of memory");
	rc = DOC_ENOMEM;
	goto out;
toobig:
	snprintf(err, errsz, "the %s document unpacks to more than %zu bytes "
	    "(documents.max_unpacked, documents.max_ratio)", what, max);
	rc = DOC_ELIMIT;
out:
	archive_read_free(a);
	if (rc != 0)
		doc_zip_free(z);
	return rc;
}

int
doc_zip_resolve(const char *from, const char *target, char *out,
    size_t outsz)
{
	char		 buf[1024], *seg, *save = NULL;
	const char	*slash;
	size_t		 n = 0, l;
	int		 w;

	if (target[0] == '/')
		w = snprintf(buf, sizeof(buf), "%s", target + 1);
	else {
		slash = strrchr(from, '/');
		w = snprintf(buf, sizeof(buf), "%.*s%s%s", slash ? (int)(slash -
		    from) : 0, from, slash ? "/" : "", target);
	}
	if (w < 0 || (size_t)w >= sizeof(buf) || outsz == 0)
		return -1;
	out[0] = '\0';
	for (seg = strtok_r(buf, "/", &save); seg != NULL;
	    seg = strtok_r(NULL, "/", &save)) {
		if (strcmp(seg, ".") == 0)
			continue;
		if (strcmp(seg, "..") == 0) {
			if (n == 0)
				return -1;
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--;
			out[n] = '\0';
			continue;
		}
		l = strlen(seg);
		if (n + (n > 0) + l + 1 > outsz)
			return -1;
		if (n > 0)
			out[n++] = '/';
		memcpy(out + n, seg, l + 1);
		n += l;
	}
	return n > 0 ? 0 : -1;
}

/* ====== One entry streamed into libxml2's reader ====== */

static int
zip_xml_read(void *ctx, char *buf, int n)
{
	struct doc_zip_xml	*zx = ctx;
	la_ssize_t		 r;

	if (n <= 0)
		return 0;
	r = archive_read_data(zx->a, buf, (size_t)n);
	if (r < 0) {
		zx->damaged = 1;
		return -1;
	}
	if ((size_t)r > zx->max - zx->used) {
		zx->toobig = 1;
		return -1;
	}
	zx->used += (size_t)r;
	return (int)r;
}

static int
zip_xml_close(void *ctx)
{
	(void)ctx;
	return 0;
}

int
doc_zip_xml_open(const char *data, size_t len, const struct doc_limits *lim,
    const char *what, const char *name, struct doc_zip_xml *zx, char *err,
    size_t errsz)
{
	struct archive_entry	*ent;
	int			 rc = DOC_EDAMAGED, entries = 0, st;

	memset(zx, 0, sizeof(*zx));
	zx->name = name;
	zx->max = lim->max_unpacked;
	if (lim->max_ratio > 0 && len < zx->max / lim->max_ratio)
		zx->max = len * lim->max_ratio;
	if ((zx->a = archive_read_new()) == NULL) {
		snprintf(err, errsz, "out of memory");
		return DOC_ENOMEM;
	}
	archive_read_support_format_zip(zx->a);
	if (archive_read_open_memory(zx->a, data, len) != ARCHIVE_OK) {
		snprintf(err, errsz, "the file is not a %s (zip) document: %s",
		    what, archive_error_string(zx->a) ?
		    archive_error_string(zx->a) : "unreadable");
		goto out;
	}
	for (;;) {
		st = archive_read_next_header(zx->a, &ent);
		if (st == ARCHIVE_EOF || ++entries > ZIP_MAX_ENTRIES) {
			snprintf(err, errsz, "the %s document has no %s", what,
			    name);
			goto out;
		}
		if (st != ARCHIVE_OK && st != ARCHIVE_WARN) {
			snprintf(err, errsz, "the %s (zip) document is damaged:"
			    " %s", what, archive_error_string(zx->a) ?
			    archive_error_string(zx->a) : "unreadable");
			goto out;
		}
		if (archive_entry_pathname(ent) != NULL &&
		    strcmp(archive_entry_pathname(ent), name) == 0)
			break;
	}
	if (archive_entry_size_is_set(ent) &&
	    archive_entry_size(ent) > (la_int64_t)zx->max) {
		zx->toobig = 1;
		rc = doc_zip_xml_error(zx, err, errsz);
		goto out;
	}
	xmlInitParser();
	if ((zx->reader = xmlReaderForIO(zip_xml_read, zip_xml_close, zx,
	    NULL, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR |
	    XML_PARSE_NOWARNING)) == NULL) {
		snprintf(err, errsz, "out of memory");
		rc = DOC_ENOMEM;
		goto out;
	}
	return 0;
out:
	doc_zip_xml_close(zx);
	return rc;
}

int
doc_zip_xml_error(const struct doc_zip_xml *zx, char *err, size_t errsz)
{
	if (zx->toobig) {
		snprintf(err, errsz, "%s unpacks to more than %zu bytes "
		    "(documents.max_unpacked, documents.max_ratio)", zx->name,
		    zx->max);
		return DOC_ELIMIT;
	}
	if (zx->damaged) {
		snprintf(err, errsz, "cannot unpack %s: %s", zx->name,
		    archive_error_string(zx->a) ?
		    archive_error_string(zx->a) : "damaged");
		return DOC_EDAMAGED;
	}
	snprintf(err, errsz, "%s is not well-formed XML", zx->name);
	return DOC_EDAMAGED;
}

void
doc_zip_xml_close(struct doc_zip_xml *zx)
{
	if (zx->reader != NULL)
		xmlFreeTextReader(zx->reader);
	if (zx->a != NULL)
		archive_read_free(zx->a);
	zx->reader = NULL;
	zx->a = NULL;
}
