/*
 * odf.c — OpenDocument's odt, ods and odp (content.xml, unpacked by
 * libarchive, parsed by libxml2). A text's paragraphs and headings one per
 * line, lists flattened, tables as Markdown tables; a spreadsheet's every
 * table a Markdown table (the first row its header; trailing empty rows
 * and columns dropped), one part per sheet; a presentation's pages one
 * part per slide, its notes after it. Spaces (text:s), tabs and line
 * breaks as written; annotations, shapes' names and styles dropped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "engine/documents/internal.h"

#define ODF_MAX_DEPTH	256
#define ODF_MAX_REPEAT	16384	/* columns of a row; rows repeated */
#define ODF_EBYTES	(-1)	/* internal: documents.max_unpacked */

static int
odf_want(const char *name)
{
	return strcmp(name, "content.xml") == 0 || strcmp(name, "mimetype") ==
	    0;
}

/* A number attribute (number-columns-repeated, text:c), at least 1. */
static long
odf_count(const xmlNode *n, const char *name, long cap)
{
	char	*v = doc_attr(n, name);
	long	 k = v != NULL ? strtol(v, NULL, 10) : 1;

	free(v);
	return k < 1 ? 1 : k > cap ? cap : k;
}

/* Inline text of a paragraph (text:span, text:a, text:s...). */
static void
odf_inline(const xmlNode *n, struct dbuf *sb, const char *br, int depth)
{
	long k;

	for (; n != NULL && depth < ODF_MAX_DEPTH; n = n->next) {
		if (n->type == XML_TEXT_NODE && n->content != NULL) {
			dbuf_addstr(sb, (const char *)n->content);
			continue;
		}
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (doc_name_is(n, "s"))
			for (k = odf_count(n, "c", 1024); k > 0; k--)
				dbuf_addstr(sb, " ");
		else if (doc_name_is(n, "tab"))
			dbuf_addstr(sb, "\t");
		else if (doc_name_is(n, "line-break"))
			dbuf_addstr(sb, br);
		else if (doc_name_is(n, "annotation") ||
		    doc_name_is(n, "note-citation") ||
		    doc_name_is(n, "bookmark-ref"))
			continue;
		else
			odf_inline(n->children, sb, br, depth + 1);
	}
}

/* A cell's paragraphs joined by spaces. */
static void
odf_cell(const xmlNode *c, struct dbuf *sb)
{
	const xmlNode	*p;
	int		 first = 1;

	for (p = c->children; p != NULL; p = p->next)
		if (p->type == XML_ELEMENT_NODE && (doc_name_is(p, "p") ||
		    doc_name_is(p, "h"))) {
			if (!first)
				dbuf_addstr(sb, " ");
			first = 0;
			odf_inline(p->children, sb, "<br>", 1);
		}
}

/* The rows of a table (header-rows, row-groups looked into), cells as
 * text, within max cells; a table is a grid of strings. */
struct odf_grid {
	char	***rows;
	size_t	  *ncols;
	size_t	   n;
	size_t	   cells;
	size_t	   bytes;	/* of the cells' text, repeats included */
	size_t	   max_bytes;	/* documents.max_unpacked */
};

/* A copy of a cell's text counted against the grid's bytes: a long text
 * repeated over thousands of columns or rows is a bomb. NULL with *rc. */
static char *
odf_dup(struct odf_grid *g, const char *text, int *rc)
{
	char *s;

	if ((g->bytes += strlen(text) + 1) > g->max_bytes) {
		*rc = ODF_EBYTES;
		return NULL;
	}
	if ((s = strdup(text)) == NULL)
		*rc = DOC_ENOMEM;
	return s;
}

static void
odf_grid_free(struct odf_grid *g)
{
	size_t i, j;

	for (i = 0; i < g->n; i++) {
		for (j = 0; j < g->ncols[i]; j++)
			free(g->rows[i][j]);
		free(g->rows[i]);
	}
	free(g->rows);
	free(g->ncols);
	memset(g, 0, sizeof(*g));
}

static int
odf_grid_rows(const xmlNode *n, struct odf_grid *g, size_t max, int depth)
{
	const xmlNode	*c;
	struct dbuf	 cell;
	char		**row, ***nr, *text;
	size_t		 ncols, *nc, last, j;
	long		 rep, crep, k;
	int		 rc, drc = DOC_ENOMEM;

	for (; n != NULL && depth < ODF_MAX_DEPTH; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (!doc_name_is(n, "table-row")) {
			if (doc_name_is(n, "table-header-rows") ||
			    doc_name_is(n, "table-rows") ||
			    doc_name_is(n, "table-row-group"))
				if ((rc = odf_grid_rows(n->children, g, max,
				    depth + 1)) != 0)
					return rc;
			continue;
		}
		row = NULL;
		ncols = 0;
		last = 0;
		for (c = n->children; c != NULL; c = c->next) {
			if (c->type != XML_ELEMENT_NODE ||
			    (!doc_name_is(c, "table-cell") &&
			    !doc_name_is(c, "covered-table-cell")))
				continue;
			memset(&cell, 0, sizeof(cell));
			odf_cell(c, &cell);
			crep = odf_count(c, "number-columns-repeated",
			    ODF_MAX_REPEAT);
			text = dbuf_take(&cell, NULL);
			for (k = 0; k < crep && ncols < ODF_MAX_REPEAT; k++) {
				char **grow = realloc(row, (ncols + 1) *
				    sizeof(*row));

				if (grow == NULL || text == NULL)
					goto nomem;
				row = grow;
				row[ncols] = odf_dup(g, text, &drc);
				if (row[ncols] == NULL)
					goto nomem;
				if (text[0] != '\0')
					last = ncols + 1;
				ncols++;
				/* an empty cell repeated to the sheet's end
				 * is dropped below; do not hold 16k of them */
				if (text[0] == '\0' && k > 0 && ncols > last +
				    256)
					break;
			}
			free(text);
			continue;
nomem:
			free(text);
			for (j = 0; j < ncols; j++)
				free(row[j]);
			free(row);
			return drc;
		}
		for (j = last; j < ncols; j++)
			free(row[j]);
		ncols = last;
		rep = odf_count(n, "number-rows-repeated", ODF_MAX_REPEAT);
		if (ncols == 0)
			rep = 1;	/* an empty row repeated to the end */
		for (k = 0; k < rep; k++) {
			if ((g->cells += ncols + 1) > max) {
				for (j = 0; j < ncols; j++)
					free(row[j]);
				free(row);
				return DOC_ELIMIT;
			}
			nr = realloc(g->rows, (g->n + 1) * sizeof(*nr));
			if (nr != NULL)
				g->rows = nr;
			nc = realloc(g->ncols, (g->n + 1) * sizeof(*nc));
			if (nc != NULL)
				g->ncols = nc;
			if (nr == NULL || nc == NULL) {
				drc = DOC_ENOMEM;
				goto rownomem;
			}
			if (k + 1 == rep) {
				g->rows[g->n] = row;
				row = NULL;
			} else {
				g->rows[g->n] = calloc(ncols + 1,
				    sizeof(char *));
				if (g->rows[g->n] == NULL) {
					drc = DOC_ENOMEM;
					goto rownomem;
				}
				for (j = 0; j < ncols; j++)
					if ((g->rows[g->n][j] = odf_dup(g,
					    row[j], &drc)) == NULL) {
						g->ncols[g->n++] = j;
						goto rownomem;
					}
			}
			g->ncols[g->n++] = ncols;
		}
		continue;
rownomem:
		for (j = 0; row != NULL && j < ncols; j++)
			free(row[j]);
		free(row);
		return drc;
	}
	return 0;
}

/* A grid as a Markdown table: trailing empty rows dropped, every row as
 * wide as the widest. */
static void
odf_grid_md(const struct odf_grid *g, struct dbuf *sb)
{
	size_t	n = g->n, w = 0, i, j;

	while (n > 0 && g->ncols[n - 1] == 0)
		n--;
	for (i = 0; i < n; i++)
		if (g->ncols[i] > w)
			w = g->ncols[i];
	for (i = 0; i < n && w > 0; i++) {
		dbuf_addstr(sb, "|");
		for (j = 0; j < w; j++) {
			dbuf_addstr(sb, " ");
			if (j < g->ncols[i])
				dbuf_addstr(sb, g->rows[i][j]);
			dbuf_addstr(sb, " |");
		}
		dbuf_addstr(sb, "\n");
		if (i == 0) {
			dbuf_addstr(sb, "|");
			for (j = 0; j < w; j++)
				dbuf_addstr(sb, " --- |");
			dbuf_addstr(sb, "\n");
		}
	}
}

static int
odf_table(const xmlNode *t, struct dbuf *sb, const struct doc_limits *lim)
{
	struct odf_grid	g = { 0 };
	int		rc;

	g.max_bytes = lim->max_unpacked;
	if ((rc = odf_grid_rows(t->children, &g, lim->max_cells, 0)) == 0)
		odf_grid_md(&g, sb);
	odf_grid_free(&g);
	return rc;
}

/* Block content: paragraphs and headings a line each, lists, sections,
 * frames and text boxes looked into, tables as Markdown. */
static int
odf_blocks(const xmlNode *n, struct dbuf *sb, const struct doc_limits *lim,
    int depth)
{
	int rc;

	for (; n != NULL && depth < ODF_MAX_DEPTH; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (doc_name_is(n, "p") || doc_name_is(n, "h")) {
			odf_inline(n->children, sb, "\n", depth + 1);
			dbuf_addstr(sb, "\n");
		} else if (doc_name_is(n, "table")) {
			if ((rc = odf_table(n, sb, lim)) != 0)
				return rc;
		} else if (doc_name_is(n, "annotation") ||
		    doc_name_is(n, "tracked-changes") ||
		    doc_name_is(n, "sequence-decls") ||
		    doc_name_is(n, "variable-decls") ||
		    doc_name_is(n, "forms"))
			continue;
		else if ((rc = odf_blocks(n->children, sb, lim, depth + 1)) !=
		    0)
			return rc;
	}
	return 0;
}

/* The valid UTF-8 of sb, tidied, as a part of unit (or the whole text
 * when unit is NULL). */
static int
odf_emit(struct dbuf *sb, struct doc *d, const char *unit,
    struct dbuf *all, const char *sep, char *err, size_t errsz)
{
	struct dbuf	 u = { 0 };
	char		*raw = NULL, *clean = NULL;
	int		 rc;

	if ((rc = doc_take(sb, err, errsz, &raw)) != 0)
		return rc;
	doc_tidy(raw);
	doc_add_utf8(&u, raw, strlen(raw));
	free(raw);
	if ((rc = doc_take(&u, err, errsz, &clean)) != 0)
		return rc;
	if (unit == NULL)
		d->text = clean;
	else {
		rc = doc_add_part(d, unit, clean, all, sep, err, errsz);
		free(clean);
	}
	return rc;
}

int
doc_read_odf(const char *data, size_t len, const struct doc_limits *lim,
    struct doc *d, char *err, size_t errsz)
{
	struct doc_zip			 z;
	const struct doc_zip_ent	*ce, *me;
	xmlDocPtr			 doc = NULL;
	const xmlNode			*root, *body = NULL, *kind = NULL, *n;
	const xmlNode			*c;
	struct dbuf			 all, one = { 0 };
	size_t				 parts = 0;
	int				 rc;

	dbuf_init(&all, lim->max_unpacked);
	if ((rc = doc_zip_read(data, len, lim, "OpenDocument", odf_want, &z,
	    err, errsz)) != 0)
		goto out;
	rc = DOC_EDAMAGED;
	me = doc_zip_find(&z, "mimetype");
	if (me == NULL || strncmp(me->data, "application/vnd.oasis."
	    "opendocument.", 35) != 0) {
		snprintf(err, errsz, "the file is not an OpenDocument (no "
		    "mimetype of application/vnd.oasis.opendocument.*)");
		goto out;
	}
	if ((ce = doc_zip_find(&z, "content.xml")) == NULL) {
		snprintf(err, errsz, "the OpenDocument has no content.xml");
		goto out;
	}
	if ((doc = doc_xml_parse(ce->data, ce->len, "content.xml", err,
	    errsz)) == NULL)
		goto out;
	root = xmlDocGetRootElement(doc);
	for (n = root ? root->children : NULL; n != NULL; n = n->next)
		if (n->type == XML_ELEMENT_NODE && doc_name_is(n, "body"))
			body = n;
	for (n = body ? body->children : NULL; n != NULL; n = n->next)
		if (n->type == XML_ELEMENT_NODE && kind == NULL)
			kind = n;
	dbuf_init(&one, lim->max_unpacked);
	if (kind == NULL || doc_name_is(kind, "text")) {
		if ((rc = odf_blocks(kind ? kind->children : NULL, &one, lim,
		    0)) != 0)
			goto fail;
		rc = odf_emit(&one, d, NULL, &all, "", err, errsz);
		goto out;
	}
	for (n = kind->children; n != NULL; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (doc_name_is(kind, "spreadsheet") && doc_name_is(n,
		    "table")) {
			if ((rc = odf_table(n, &one, lim)) != 0)
				goto fail;
			dbuf_addstr(&one, "\n");
			rc = odf_emit(&one, d, "sheet", &all, "\n\n", err,
			    errsz);
		} else if (doc_name_is(kind, "presentation") && doc_name_is(n,
		    "page")) {
			/* the notes after the slide's own shapes */
			for (c = n->children; c != NULL; c = c->next)
				if (c->type == XML_ELEMENT_NODE &&
				    !doc_name_is(c, "notes") && (rc =
				    odf_blocks(c->children, &one, lim, 1)) !=
				    0)
					goto fail;
			for (c = n->children; c != NULL; c = c->next)
				if (c->type == XML_ELEMENT_NODE &&
				    doc_name_is(c, "notes") && (rc =
				    odf_blocks(c->children, &one, lim, 1)) !=
				    0)
					goto fail;
			rc = odf_emit(&one, d, "slide", &all, "\n", err,
			    errsz);
		} else
			continue;
		if (rc != 0)
			goto out;
		if (++parts > lim->max_pages) {
			snprintf(err, errsz, "the document has more than %zu "
			    "sheets or slides (documents.max_pages)",
			    lim->max_pages);
			rc = DOC_ELIMIT;
			goto out;
		}
		if ((rc = doc_check_stop(lim, err, errsz)) != 0)
			goto out;
		dbuf_init(&one, lim->max_unpacked);
	}
	if (doc_name_is(kind, "spreadsheet") && all.len > 0)
		dbuf_addstr(&all, "\n\n");
	rc = doc_take(&all, err, errsz, &d->text);
	goto out;
fail:
	if (rc == ODF_EBYTES) {
		snprintf(err, errsz, "a table's text, its repeated cells "
		    "counted, is larger than %zu bytes "
		    "(documents.max_unpacked)", lim->max_unpacked);
		rc = DOC_ELIMIT;
	} else if (rc == DOC_ELIMIT)
		snprintf(err, errsz, "a table has more than %zu cells "
		    "(documents.max_cells)", lim->max_cells);
	else
		snprintf(err, errsz, "out of memory");
out:
	dbuf_free(&all);
	dbuf_free(&one);
	if (doc != NULL)
		xmlFreeDoc(doc);
	doc_zip_free(&z);
	return rc;
}
