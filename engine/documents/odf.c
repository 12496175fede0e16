/*
 * odf.c — OpenDocument's odt, ods and odp (content.xml, unpacked by
 * libarchive, parsed by libxml2). A text's paragraphs and headings one per
 * line, lists flattened, tables as Markdown tables; a spreadsheet's every
 * table a Markdown table as pandas reads it (xlsx.c's writer, cells typed
 * by office:value-type), one part per sheet; a presentation's pages one
 * part per slide, its notes after it. Spaces (text:s), tabs and line
 * breaks as written; annotations, shapes' names and styles dropped.
 */
#include <math.h>
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

/* ====== A spreadsheet's table as pandas reads it ======
 *
 * Dify's xlsx and xls go through pandas (xlsx.c); pandas reads an ods
 * with odfpy, and its reader (pandas/io/excel/_odfreader.py) types each
 * cell by office:value-type: float (an integral value as an int),
 * percentage and currency (floats), boolean (True when the cell shows
 * TRUE), date (a Timestamp), time (a time of day), string (the text of
 * its paragraphs run together, text:s as spaces, annotations left out);
 * "#N/A" and no type at all are missing. Trailing empty cells and rows go,
 * a value repeated (number-columns-repeated, number-rows-repeated) is
 * there as many times. The rows then follow xlsx's rules: xl_sheet_md. */

#define ODF_OFFICE_NS	"urn:oasis:names:tc:opendocument:xmlns:office:1.0"
#define ODF_MAX_ROWS	1048576

struct odf_sheet {
	struct xl_row	*rows;
	size_t		 n, cap;
	unsigned long	 pos;		/* rows of pandas' table so far */
	size_t		 cells, max_cells;
	size_t		 bytes, max_bytes;
	size_t		 width;
};

static void
odf_cell_string(const xmlNode *n, struct dbuf *sb, int depth)
{
	const char	*t;
	size_t		 l;
	long		 k;

	for (; n != NULL && depth < ODF_MAX_DEPTH; n = n->next) {
		if (n->type == XML_TEXT_NODE && n->content != NULL) {
			/* str(fragment).strip("\n") */
			t = (const char *)n->content;
			l = strlen(t);
			while (l > 0 && t[l - 1] == '\n')
				l--;
			while (l > 0 && *t == '\n') {
				t++;
				l--;
			}
			dbuf_add(sb, t, l);
		} else if (n->type != XML_ELEMENT_NODE)
			continue;
		else if (doc_name_is(n, "s"))
			for (k = odf_count(n, "c", 1024); k > 0; k--)
				dbuf_addstr(sb, " ");
		else if (doc_name_is(n, "annotation"))
			continue;
		else
			odf_cell_string(n->children, sb, depth + 1);
	}
}

static char *
odf_office_attr(const xmlNode *n, const char *name)
{
	xmlChar	*v = xmlGetNsProp(n, (const xmlChar *)name,
		    (const xmlChar *)ODF_OFFICE_NS);
	char	*s = v != NULL ? strdup((const char *)v) : NULL;

	xmlFree(v);
	return s;
}

/* office:date-value "2024-01-05" or "2024-01-05T13:30:00.5" as pandas'
 * str(Timestamp), or NULL. */
static char *
odf_date(const char *v)
{
	int	 y, mo, d, h = 0, mi = 0, n = 0;
	double	 sec = 0;
	long	 us;
	char	 buf[64];

	if (v == NULL || sscanf(v, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3)
		return NULL;
	if (v[n] == 'T' && sscanf(v + n + 1, "%2d:%2d:%lf", &h, &mi, &sec) !=
	    3)
		return NULL;
	if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 ||
	    h > 23 || mi < 0 || mi > 59 || !(sec >= 0 && sec < 60))
		return NULL;
	us = lround((sec - floor(sec)) * 1e6);
	if (us >= 1000000)
		us = 999999;
	if (us != 0)
		snprintf(buf, sizeof(buf), "%04d-%02d-%02d %02d:%02d:%02d.%06ld",
		    y, mo, d, h, mi, (int)sec, us);
	else
		snprintf(buf, sizeof(buf), "%04d-%02d-%02d %02d:%02d:%02d", y,
		    mo, d, h, mi, (int)sec);
	return strdup(buf);
}

/* office:time-value "PT13H30M00S" as str(time), or NULL. */
static char *
odf_time(const char *v)
{
	double	 h = 0, m = 0, s = 0, x;
	long	 secs, us;
	char	 buf[64], *end;

	if (v == NULL || strncmp(v, "PT", 2) != 0)
		return NULL;
	for (v += 2; *v != '\0'; v = end + 1) {
		x = strtod(v, &end);
		if (end == v || *end == '\0')
			return NULL;
		if (*end == 'H')
			h = x;
		else if (*end == 'M')
			m = x;
		else if (*end == 'S')
			s = x;
		else
			return NULL;
	}
	x = h * 3600 + m * 60 + s;
	if (!(x >= 0 && x < 86400))
		return NULL;
	secs = (long)floor(x);
	us = lround((x - (double)secs) * 1e6);
	if (us >= 1000000)
		us = 999999;
	if (us != 0)
		snprintf(buf, sizeof(buf), "%02ld:%02ld:%02ld.%06ld", secs / 3600,
		    secs / 60 % 60, secs % 60, us);
	else
		snprintf(buf, sizeof(buf), "%02ld:%02ld:%02ld", secs / 3600,
		    secs / 60 % 60, secs % 60);
	return strdup(buf);
}

/* One table:table-cell as pandas types it. */
static int
odf_sheet_value(const xmlNode *c, struct xl_cell *o)
{
	struct dbuf	 sb = { 0 };
	char		*type = odf_office_attr(c, "value-type"), *text, *v;
	char		*end;
	int		 rc = 0;

	memset(o, 0, sizeof(*o));
	odf_cell_string(c->children, &sb, 0);
	if ((text = dbuf_take(&sb, NULL)) == NULL)
		text = strdup("");
	dbuf_free(&sb);
	if (text == NULL) {
		free(type);
		return DOC_ENOMEM;
	}
	if (strcmp(text, "#N/A") == 0)
		goto out;
	if (type == NULL) {
		/* pandas: missing; a cell that shows text without a type
		 * (no office suite writes one) is read as its string */
		if (text[0] != '\0' && !xl_na(text)) {
			o->kind = XL_STR;
			o->str = text;
			text = NULL;
		}
	} else if (strcmp(type, "float") == 0 || strcmp(type, "percentage") ==
	    0 || strcmp(type, "currency") == 0) {
		v = odf_office_attr(c, "value");
		o->num = v != NULL ? strtod(v, &end) : 0;
		if (v != NULL && end != v && isfinite(o->num)) {
			o->kind = XL_FLOAT;
			if (strcmp(type, "float") == 0 && o->num ==
			    floor(o->num) && fabs(o->num) < 9007199254740992.0)
				o->kind = XL_INT;
		}
		free(v);
	} else if (strcmp(type, "boolean") == 0) {
		o->kind = XL_BOOL;
		o->num = strcmp(text, "TRUE") == 0;
	} else if (strcmp(type, "date") == 0) {
		v = odf_office_attr(c, "date-value");
		if ((o->str = odf_date(v)) != NULL)
			o->kind = XL_DATE;
		free(v);
	} else if (strcmp(type, "time") == 0) {
		v = odf_office_attr(c, "time-value");
		if ((o->str = odf_time(v)) != NULL)
			o->kind = XL_STR;
		free(v);
	} else if (strcmp(type, "string") == 0 && !xl_na(text)) {
		o->kind = XL_STR;
		o->str = text;
		text = NULL;
	}
out:
	free(text);
	free(type);
	return rc;
}

/* A copy of a cell counted against the sheet's bytes (a long text
 * repeated over thousands of columns or rows is a bomb). */
static int
odf_sheet_copy(struct odf_sheet *sh, const struct xl_cell *from,
    struct xl_cell *to)
{
	*to = *from;
	to->str = NULL;
	if (from->str == NULL)
		return 0;
	if ((sh->bytes += strlen(from->str) + 1) > sh->max_bytes)
		return ODF_EBYTES;
	if ((to->str = strdup(from->str)) == NULL)
		return DOC_ENOMEM;
	return 0;
}

static int
odf_sheet_row(const xmlNode *r, struct odf_sheet *sh)
{
	const xmlNode	*c;
	struct xl_row	 row = { 0 }, *nr;
	struct xl_cell	 v, *cp;
	size_t		 col = 0, rcap = 0, k, rep, rrep, need;
	int		 rc = 0;

	for (c = r->children; c != NULL && col < 16384; c = c->next) {
		if (c->type != XML_ELEMENT_NODE ||
		    (!doc_name_is(c, "table-cell") &&
		    !doc_name_is(c, "covered-table-cell")))
			continue;
		rep = (size_t)odf_count(c, "number-columns-repeated", 16384);
		memset(&v, 0, sizeof(v));
		if (doc_name_is(c, "table-cell") && (rc = odf_sheet_value(c,
		    &v)) != 0)
			goto out;
		if (v.kind == XL_NONE) {
			col += rep;
			continue;
		}
		if (rep > 16384 - col)
			rep = 16384 - col;
		if ((sh->cells += rep) > sh->max_cells) {
			free(v.str);
			rc = DOC_ELIMIT;
			goto out;
		}
		if ((need = col + rep) > rcap) {
			size_t ncap = need > rcap * 2 ? need : rcap * 2;

			if ((cp = realloc(row.cells, ncap * sizeof(*cp))) ==
			    NULL) {
				free(v.str);
				rc = DOC_ENOMEM;
				goto out;
			}
			memset(cp + rcap, 0, (ncap - rcap) * sizeof(*cp));
			row.cells = cp;
			rcap = ncap;
		}
		for (k = 0; k < rep && rc == 0; k++)
			rc = odf_sheet_copy(sh, &v, &row.cells[col + k]);
		free(v.str);
		if (rc != 0)
			goto out;
		col += rep;
		row.n = col;
	}
	rrep = (size_t)odf_count(r, "number-rows-repeated", ODF_MAX_ROWS);
	if (row.n == 0) {	/* blank: a gap in pandas' table, never shown */
		sh->pos += rrep;
		goto out;
	}
	for (k = 0; k < rrep; k++) {
		if (k > 0 && (sh->cells += row.n) > sh->max_cells) {
			rc = DOC_ELIMIT;
			goto out;
		}
		if (sh->n == sh->cap) {
			sh->cap = sh->cap ? sh->cap * 2 : 32;
			if ((nr = realloc(sh->rows, sh->cap * sizeof(*nr))) ==
			    NULL) {
				rc = DOC_ENOMEM;
				goto out;
			}
			sh->rows = nr;
		}
		if (k + 1 == rrep) {
			sh->rows[sh->n] = row;
			memset(&row, 0, sizeof(row));
			rcap = 0;
		} else {
			size_t j;

			nr = &sh->rows[sh->n];
			nr->n = row.n;
			if ((nr->cells = calloc(row.n, sizeof(*cp))) == NULL) {
				rc = DOC_ENOMEM;
				goto out;
			}
			for (j = 0; j < row.n && rc == 0; j++)
				rc = odf_sheet_copy(sh, &row.cells[j],
				    &nr->cells[j]);
			if (rc != 0) {
				nr->n = j;
				sh->rows[sh->n].num = ++sh->pos;
				sh->n++;
				goto out;
			}
		}
		sh->rows[sh->n].num = ++sh->pos;
		if (sh->rows[sh->n].n > sh->width)
			sh->width = sh->rows[sh->n].n;
		sh->n++;
	}
out:
	for (k = 0; k < rcap; k++)
		free(row.cells[k].str);
	free(row.cells);
	return rc;
}

static int
odf_sheet_rows(const xmlNode *n, struct odf_sheet *sh, int depth)
{
	int rc;

	for (; n != NULL && depth < ODF_MAX_DEPTH; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (doc_name_is(n, "table-row")) {
			if ((rc = odf_sheet_row(n, sh)) != 0)
				return rc;
		} else if (doc_name_is(n, "table-header-rows") ||
		    doc_name_is(n, "table-rows") ||
		    doc_name_is(n, "table-row-group")) {
			if ((rc = odf_sheet_rows(n->children, sh, depth + 1)) !=
			    0)
				return rc;
		}
	}
	return 0;
}

/* A spreadsheet's table as xlsx.c writes a sheet, into sb. */
static int
odf_sheet(const xmlNode *t, struct dbuf *sb, const struct doc_limits *lim)
{
	struct odf_sheet	sh = { 0 };
	int			rc;

	sh.max_cells = lim->max_cells;
	sh.max_bytes = lim->max_unpacked;
	if ((rc = odf_sheet_rows(t->children, &sh, 0)) == 0 &&
	    xl_sheet_md(sh.rows, sh.n, sh.width, sb) != 0)
		rc = DOC_ENOMEM;
	xl_rows_free(sh.rows, sh.n);
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
	char	*clean = NULL;
	int	 rc;

	if ((rc = doc_take_tidy(sb, err, errsz, &clean)) != 0)
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
			struct dbuf	 u = { 0 };
			char		*clean = NULL;

			if ((rc = odf_sheet(n, &one, lim)) != 0)
				goto fail;
			doc_add_utf8(&u, one.p ? one.p : "", one.len);
			dbuf_free(&one);
			if ((rc = doc_take(&u, err, errsz, &clean)) == 0)
				rc = doc_add_part(d, "sheet", clean, &all,
				    "\n\n", err, errsz);
			free(clean);
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
