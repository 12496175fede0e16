/*
 * documents.c — dispatch by extension, limits, the helpers the readers
 * share. The readers are one file per format beside this one.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libxml/parser.h>

#include "engine/internal.h"
#include "engine/documents/internal.h"

/* ====== Formats ====== */

static const struct {
	const char	*ext;
	doc_reader_fn	*fn;
} doc_table[] = {
	{ "txt", doc_read_plain },
	{ "md", doc_read_plain },
	{ "markdown", doc_read_plain },
	{ "yaml", doc_read_plain },
	{ "yml", doc_read_plain },
	{ "json", doc_read_json },
	{ "csv", doc_read_csv },
	{ "html", doc_read_html },
	{ "htm", doc_read_html },
	{ "xml", doc_read_xml },
	{ "docx", doc_read_docx },
	{ "pdf", doc_read_pdf },
	{ "xlsx", doc_read_xlsx },
	{ "xls", doc_read_xls },
	{ "pptx", doc_read_pptx },
	{ "odt", doc_read_odf },
	{ "ods", doc_read_odf },
	{ "odp", doc_read_odf },
	{ "epub", doc_read_epub },
	{ "eml", doc_read_eml },
	{ "msg", doc_read_msg },
};
#define DOC_NFORMATS (sizeof(doc_table) / sizeof(doc_table[0]))

const char *
doc_formats(void)
{
	return "txt, md, markdown, csv, json, yaml, yml, html, htm, xml, "
	    "docx, pdf, xlsx, xls, pptx, odt, ods, odp, epub, eml and msg";
}

int
doc_supported(const char *ext)
{
	size_t i;

	for (i = 0; i < DOC_NFORMATS; i++)
		if (strcmp(doc_table[i].ext, ext) == 0)
			return 1;
	return 0;
}

void
doc_limits_default(struct doc_limits *lim)
{
	lim->max_file_size = (size_t)50 << 20;
	lim->max_pages = 1000;
	lim->max_unpacked = (size_t)64 << 20;
	lim->max_ratio = 200;
	lim->max_cells = 1000000;
	lim->timeout_ms = 60000;
	lim->stop = NULL;
	lim->stop_arg = NULL;
	lim->started_ms = 0;
}

static long long
doc_clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
doc_check_stop(const struct doc_limits *lim, char *err, size_t errsz)
{
	if (lim->stop != NULL && lim->stop(lim->stop_arg)) {
		snprintf(err, errsz, "the run was stopped");
		return DOC_ESTOPPED;
	}
	if (lim->timeout_ms > 0 && lim->started_ms > 0 && doc_clock_ms() -
	    lim->started_ms > lim->timeout_ms) {
		snprintf(err, errsz, "reading the file took more than %ld ms "
		    "(documents.timeout)", lim->timeout_ms);
		return DOC_ESTOPPED;
	}
	return 0;
}

const char *
doc_strerror(int rc)
{
	switch (rc) {
	case 0:
		return "success";
	case DOC_EFORMAT:
		return "unsupported file type";
	case DOC_EDAMAGED:
		return "damaged document";
	case DOC_EENCRYPTED:
		return "encrypted document";
	case DOC_ELIMIT:
		return "document limit reached";
	case DOC_ENOMEM:
		return "out of memory";
	case DOC_ESTOPPED:
		return "document reading stopped";
	}
	return "unknown documents error";
}

void
doc_release(struct doc *d)
{
	size_t i;

	if (d == NULL)
		return;
	free(d->text);
	for (i = 0; i < d->nparts; i++)
		free(d->parts[i].text);
	free(d->parts);
	memset(d, 0, sizeof(*d));
}

int
doc_extract(const char *ext, const char *data, size_t len,
    const struct doc_limits *lim, struct doc *d, char *err, size_t errsz)
{
	struct doc_limits	 def;
	size_t			 i;
	int			 rc = DOC_EFORMAT;

	memset(d, 0, sizeof(*d));
	err[0] = '\0';
	if (lim == NULL)
		doc_limits_default(&def);
	else
		def = *lim;
	def.started_ms = doc_clock_ms();
	lim = &def;
	if (len > lim->max_file_size) {
		snprintf(err, errsz, "the file is larger than %zu bytes, the "
		    "most the document extractor reads "
		    "(documents.max_file_size)", lim->max_file_size);
		rc = DOC_ELIMIT;
		goto out;
	}
	for (i = 0; i < DOC_NFORMATS; i++)
		if (strcmp(doc_table[i].ext, ext) == 0)
			break;
	if (i == DOC_NFORMATS) {
		snprintf(err, errsz, "cannot read .%s files: the document "
		    "extractor reads %s", ext, doc_formats());
		goto out;
	}
	rc = doc_table[i].fn(data, len, lim, d, err, errsz);
	if (rc == 0 && d->text == NULL) {
		snprintf(err, errsz, "out of memory");
		rc = DOC_ENOMEM;
	}
	if (rc != 0 && err[0] == '\0')
		snprintf(err, errsz, "%s", doc_strerror(rc));
out:
	if (rc != 0)
		doc_release(d);
	return rc;
}

/* ====== Helpers ====== */

void
doc_add_utf8(struct dbuf *sb, const char *p, size_t n)
{
	size_t i = 0, run, l;

	while (i < n) {
		for (run = i; run < n && (unsigned char)p[run] < 0x80 &&
		    p[run] != '\0'; run++)
			;
		dbuf_add(sb, p + i, run - i);
		if ((i = run) >= n)
			break;
		if (p[i] == '\0') {
			tpl_add_utf8(sb, 0xfffd);
			i++;
			continue;
		}
		tpl_add_utf8(sb, tpl_utf8_next(p + i, n - i, &l));
		i += l;
	}
}

int
doc_take(struct dbuf *sb, char *err, size_t errsz, char **out)
{
	int rc = 0;

	if (sb->err == DBUF_ETOOBIG) {
		snprintf(err, errsz, "the text is larger than the document "
		    "extractor keeps (documents.max_unpacked)");
		rc = DOC_ELIMIT;
	} else if ((*out = dbuf_take(sb, NULL)) == NULL) {
		snprintf(err, errsz, "out of memory");
		rc = DOC_ENOMEM;
	}
	dbuf_free(sb);
	return rc;
}

int
doc_take_tidy(struct dbuf *sb, char *err, size_t errsz, char **out)
{
	struct dbuf	 u = { 0 };
	char		*raw = NULL;
	int		 rc;

	if ((rc = doc_take(sb, err, errsz, &raw)) != 0)
		return rc;
	doc_tidy(raw);
	doc_add_utf8(&u, raw, strlen(raw));
	free(raw);
	return doc_take(&u, err, errsz, out);
}

void
doc_tidy(char *s)
{
	char	*r = s, *w = s, *lineend;
	int	 nl = 0;

	while (*r == '\n' || *r == ' ' || *r == '\t' || *r == '\r')
		r++;
	while (*r != '\0') {
		if (*r == '\n') {
			/* drop blanks before the newline */
			lineend = w;
			while (lineend > s && (lineend[-1] == ' ' ||
			    lineend[-1] == '\t' || lineend[-1] == '\r'))
				lineend--;
			w = lineend;
			if (++nl <= 2)
				*w++ = '\n';
			r++;
			continue;
		}
		/* blanks between newlines do not part them */
		if (*r != ' ' && *r != '\t' && *r != '\r')
			nl = 0;
		*w++ = *r++;
	}
	while (w > s && isspace((unsigned char)w[-1]))
		w--;
	*w = '\0';
}

int
doc_name_is(const xmlNode *n, const char *name)
{
	return n->name != NULL && strcasecmp((const char *)n->name, name) ==
	    0;
}

xmlDocPtr
doc_xml_parse(const char *data, size_t len, const char *what, char *err,
    size_t errsz)
{
	xmlDocPtr doc;

	if (len > (size_t)INT32_MAX) {
		snprintf(err, errsz, "%s is too large", what);
		return NULL;
	}
	xmlInitParser();
	doc = xmlReadMemory(data, (int)len, NULL, NULL, XML_PARSE_NONET |
	    XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (doc == NULL)
		snprintf(err, errsz, "%s is not well-formed XML", what);
	return doc;
}

int
doc_add_part(struct doc *d, const char *unit, const char *text,
    struct dbuf *all, const char *sep, char *err, size_t errsz)
{
	struct doc_part *np;

	if ((np = realloc(d->parts, (d->nparts + 1) * sizeof(*np))) ==
	    NULL || (np[d->nparts].text = strdup(text)) == NULL) {
		if (np != NULL)
			d->parts = np;
		snprintf(err, errsz, "out of memory");
		return DOC_ENOMEM;
	}
	d->parts = np;
	d->nparts++;
	d->unit = unit;
	if (all->len > 0 && *text != '\0')
		dbuf_addstr(all, sep);
	dbuf_addstr(all, text);
	if (all->err == DBUF_ETOOBIG) {
		snprintf(err, errsz, "the text is larger than the document "
		    "extractor keeps (documents.max_unpacked)");
		return DOC_ELIMIT;
	}
	if (all->err != DBUF_OK) {
		snprintf(err, errsz, "out of memory");
		return DOC_ENOMEM;
	}
	return 0;
}

char *
doc_attr(const xmlNode *n, const char *name)
{
	const xmlAttr	*a;
	xmlChar		*v;
	char		*s;

	for (a = n->properties; a != NULL; a = a->next)
		if (a->name != NULL && strcmp((const char *)a->name, name) ==
		    0) {
			v = xmlNodeListGetString(n->doc, a->children, 1);
			s = v != NULL ? strdup((const char *)v) : NULL;
			xmlFree(v);
			return s;
		}
	return NULL;
}
