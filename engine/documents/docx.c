/*
 * docx.c — Word's docx: word/document.xml read from the zip with
 * libarchive, paragraphs one per line (a line break <w:br/> a new line;
 * in a table's cell, <br>), tables as Markdown tables, deleted
 * text, drawings and field codes left out (Dify's docx reading in
 * nodes/document_extractor/node.py).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>
#include <libxml/tree.h>

#include "engine/documents/internal.h"

#define DOCX_MAX_ENTRIES	10000
#define DOCX_MAX_DEPTH		256

/* ====== WordprocessingML ====== */

/* The text of a run container (a paragraph, hyperlink, insertion...). */
static void
docx_runs(const xmlNode *n, struct dbuf *sb, const char *br, int depth)
{
	for (; n != NULL; n = n->next) {
		if (n->type != XML_ELEMENT_NODE || depth > DOCX_MAX_DEPTH)
			continue;
		if (doc_name_is(n, "t")) {
			xmlChar *t = xmlNodeGetContent(n);

			if (t != NULL)
				dbuf_addstr(sb, (const char *)t);
			xmlFree(t);
		} else if (doc_name_is(n, "tab"))
			dbuf_addstr(sb, "\t");
		else if (doc_name_is(n, "br") || doc_name_is(n, "cr"))
			dbuf_addstr(sb, br);
		else if (doc_name_is(n, "del") || doc_name_is(n, "drawing") ||
		    doc_name_is(n, "pict") || doc_name_is(n, "instrText") ||
		    doc_name_is(n, "txbxContent") || doc_name_is(n, "pPr") ||
		    doc_name_is(n, "rPr"))
			continue;
		else
			docx_runs(n->children, sb, br, depth + 1);
	}
}

static void docx_blocks(const xmlNode *n, struct dbuf *sb, int depth,
    int *first, const char *sep);

/* A table as a Markdown table; a cell's paragraphs joined by spaces. */
static void
docx_table(const xmlNode *tbl, struct dbuf *sb, int depth)
{
	const xmlNode	*tr, *tc;
	size_t		 ncols, k, row = 0;
	int		 first;

	for (tr = tbl->children; tr != NULL; tr = tr->next) {
		if (tr->type != XML_ELEMENT_NODE || !doc_name_is(tr, "tr"))
			continue;
		ncols = 0;
		dbuf_addstr(sb, "|");
		for (tc = tr->children; tc != NULL; tc = tc->next) {
			if (tc->type != XML_ELEMENT_NODE ||
			    !doc_name_is(tc, "tc"))
				continue;
			dbuf_addstr(sb, " ");
			first = 1;
			docx_blocks(tc->children, sb, depth + 1, &first, " ");
			dbuf_addstr(sb, " |");
			ncols++;
		}
		dbuf_addstr(sb, "\n");
		if (row++ == 0) {
			dbuf_addstr(sb, "|");
			for (k = 0; k < ncols; k++)
				dbuf_addstr(sb, " --- |");
			dbuf_addstr(sb, "\n");
		}
	}
}

/* Block content in document order: paragraphs and tables, with content
 * controls (sdt) looked into. Items are separated by sep. */
static void
docx_blocks(const xmlNode *n, struct dbuf *sb, int depth, int *first,
    const char *sep)
{
	for (; n != NULL; n = n->next) {
		if (n->type != XML_ELEMENT_NODE || depth > DOCX_MAX_DEPTH)
			continue;
		if (doc_name_is(n, "p")) {
			if (!*first)
				dbuf_addstr(sb, sep);
			*first = 0;
			/* a line break in a table's cell is Markdown's <br>,
			 * as Dify writes it: the row stays one line */
			docx_runs(n->children, sb, strcmp(sep, "\n") == 0 ?
			    "\n" : "<br>", depth + 1);
		} else if (doc_name_is(n, "tbl")) {
			if (!*first)
				dbuf_addstr(sb, sep);
			*first = 0;
			if (strcmp(sep, "\n") == 0)
				docx_table(n, sb, depth + 1);
			else	/* a table in a cell: its cells' text */
				docx_blocks(n->children, sb, depth + 1, first,
				    sep);
		} else if (doc_name_is(n, "sdt") ||
		    doc_name_is(n, "sdtContent") || doc_name_is(n, "body") ||
		    doc_name_is(n, "tr") || doc_name_is(n, "tc") ||
		    doc_name_is(n, "customXml"))
			docx_blocks(n->children, sb, depth + 1, first, sep);
	}
}

int
doc_docx_xml_text(const char *xml, size_t len, char *err, size_t errsz,
    char **out)
{
	xmlDocPtr	 doc;
	struct dbuf	 sb = { 0 }, u = { 0 };
	char		*raw = NULL;
	int		 rc = DOC_EDAMAGED, first = 1;

	if ((doc = doc_xml_parse(xml, len, "word/document.xml", err,
	    errsz)) == NULL)
		goto out;
	docx_blocks(xmlDocGetRootElement(doc) ?
	    xmlDocGetRootElement(doc)->children : NULL, &sb, 0, &first, "\n");
	if ((rc = doc_take(&sb, err, errsz, &raw)) != 0)
		goto out;
	doc_add_utf8(&u, raw, strlen(raw));
	rc = doc_take(&u, err, errsz, out);
out:
	if (doc != NULL)
		xmlFreeDoc(doc);
	dbuf_free(&sb);
	free(raw);
	return rc;
}

/* ====== The zip ====== */

int
doc_zip_entry(const char *data, size_t len, const struct doc_limits *lim,
    const char *what, const char *name, char *err, size_t errsz, char **out,
    size_t *outlen)
{
	struct archive		*a = NULL;
	struct archive_entry	*ent;
	struct dbuf		 b;
	char			 chunk[65536];
	la_ssize_t		 r;
	size_t			 max = lim->max_unpacked;
	int			 rc = DOC_EDAMAGED, entries = 0, st;

	/* a zip bomb: no entry may unpack to more than max_ratio times the
	 * whole file */
	if (lim->max_ratio > 0 && len < max / lim->max_ratio)
		max = len * lim->max_ratio;
	dbuf_init(&b, max);
	if ((a = archive_read_new()) == NULL) {
		snprintf(err, errsz, "out of memory");
		rc = DOC_ENOMEM;
		goto out;
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
		if (st == ARCHIVE_EOF || ++entries > DOCX_MAX_ENTRIES) {
			snprintf(err, errsz, "the %s document has no %s", what,
			    name);
			goto out;
		}
		if (st != ARCHIVE_OK && st != ARCHIVE_WARN) {
			snprintf(err, errsz, "the %s (zip) document is damaged:"
			    " %s", what, archive_error_string(a) ?
			    archive_error_string(a) : "unreadable");
			goto out;
		}
		if (archive_entry_pathname(ent) != NULL &&
		    strcmp(archive_entry_pathname(ent), name) == 0)
			break;
	}
	if (archive_entry_size_is_set(ent) &&
	    archive_entry_size(ent) > (la_int64_t)max)
		goto toobig;
	while ((r = archive_read_data(a, chunk, sizeof(chunk))) > 0)
		if (dbuf_add(&b, chunk, (size_t)r) != DBUF_OK)
			break;
	if (b.err == DBUF_ETOOBIG)
		goto toobig;
	if (r < 0) {
		snprintf(err, errsz, "cannot unpack %s: %s", name,
		    archive_error_string(a) ? archive_error_string(a) :
		    "damaged");
		goto out;
	}
	if (b.err != DBUF_OK || (*out = dbuf_take(&b, outlen)) == NULL) {
		snprintf(err, errsz, "out of memory");
		rc = DOC_ENOMEM;
		goto out;
	}
	rc = 0;
	goto out;
toobig:
	snprintf(err, errsz, "%s unpacks to more than %zu bytes "
	    "(documents.max_unpacked, documents.max_ratio)", name, max);
	rc = DOC_ELIMIT;
out:
	dbuf_free(&b);
	if (a != NULL)
		archive_read_free(a);
	return rc;
}

int
doc_read_docx(const char *data, size_t len, const struct doc_limits *lim,
    struct doc *d, char *err, size_t errsz)
{
	char	*xml = NULL;
	size_t	 xlen;
	int	 rc;

	if ((rc = doc_zip_entry(data, len, lim, "docx", "word/document.xml",
	    err, errsz, &xml, &xlen)) == 0)
		rc = doc_docx_xml_text(xml, xlen, err, errsz, &d->text);
	free(xml);
	return rc;
}
