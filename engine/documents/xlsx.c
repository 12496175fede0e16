/*
 * xlsx.c — Excel's xlsx: every sheet a Markdown table, in workbook order,
 * as Dify's document extractor makes it with pandas (read_excel, then
 * dropna(how="all"), header from the first non-blank row, "-" times the
 * header's length under it, each sheet followed by a blank line). One part
 * per sheet.
 *
 * Values as pandas prints them: shared and inline strings as they are
 * (newlines as spaces); numbers as Python's repr, an integer column
 * without gaps as integers, a numeric column with a gap as floats; empty
 * cells and pandas' NA strings ("", "NA", "N/A", "null"...) as "nan" ("NaT"
 * in a date column); dates (a date number format in styles.xml) as
 * "YYYY-MM-DD HH:MM:SS"; booleans as True/False; an empty header cell as
 * "Unnamed: <column>", a repeated one with ".1", ".2". Cached values of
 * formulas are read (openpyxl's data_only=True).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/tree.h>

#include "engine/documents/internal.h"

#define XLSX_MAX_COLS	16384	/* Excel's own: XFD */
#define XLSX_MAX_SHEETS	1024

struct xl_book {
	char		**strings;	/* shared strings */
	size_t		  nstrings;
	unsigned char	 *date_xf;	/* cellXfs index -> date format */
	size_t		  nxf;
	int		  date1904;
};

/* ====== Small helpers ====== */

static char *
xstrdup(const char *s)
{
	size_t	 n = strlen(s);
	char	*p = malloc(n + 1);

	if (p != NULL)
		memcpy(p, s, n + 1);
	return p;
}

/* The concatenated <t> text under n, phonetic runs (rPh) left out. */
static void
xl_text(const xmlNode *n, struct dbuf *sb, int depth)
{
	for (; n != NULL; n = n->next) {
		if (n->type != XML_ELEMENT_NODE || depth > 64)
			continue;
		if (doc_name_is(n, "rPh"))
			continue;
		if (doc_name_is(n, "t")) {
			xmlChar *t = xmlNodeGetContent(n);

			if (t != NULL)
				dbuf_addstr(sb, (const char *)t);
			xmlFree(t);
		} else
			xl_text(n->children, sb, depth + 1);
	}
}

static char *
xl_node_text(const xmlNode *n)
{
	struct dbuf	 sb = { 0 };
	char		*s;

	xl_text(n, &sb, 0);
	s = dbuf_take(&sb, NULL);
	dbuf_free(&sb);
	return s;
}

static const xmlNode *
xl_child(const xmlNode *n, const char *name)
{
	for (n = n != NULL ? n->children : NULL; n != NULL; n = n->next)
		if (n->type == XML_ELEMENT_NODE && doc_name_is(n, name))
			return n;
	return NULL;
}

static char *
xl_attr(const xmlNode *n, const char *name)
{
	xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
	char	*s = v != NULL ? xstrdup((const char *)v) : NULL;

	xmlFree(v);
	return s;
}

/* Python's repr of a float: the shortest digits that read back, in
 * exponent form below 1e-4 or from 1e16. */
static void
py_float(struct dbuf *sb, double v)
{
	char	 buf[64], digits[32], *e;
	int	 p, exp, nd, i;

	if (isnan(v)) {
		dbuf_addstr(sb, "nan");
		return;
	}
	if (isinf(v)) {
		dbuf_addstr(sb, v < 0 ? "-inf" : "inf");
		return;
	}
	for (p = 1; p <= 17; p++) {
		snprintf(buf, sizeof(buf), "%.*e", p - 1, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	/* buf: [-]d.ddde[+-]xx */
	e = strchr(buf, 'e');
	exp = (int)strtol(e + 1, NULL, 10);
	nd = 0;
	for (i = 0; buf + i < e && nd < (int)sizeof(digits) - 1; i++)
		if (isdigit((unsigned char)buf[i]))
			digits[nd++] = buf[i];
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	if (buf[0] == '-')
		dbuf_addstr(sb, "-");
	if (exp < -4 || exp >= 16) {
		dbuf_add(sb, digits, 1);
		if (nd > 1) {
			dbuf_addstr(sb, ".");
			dbuf_add(sb, digits + 1, (size_t)nd - 1);
		}
		snprintf(buf, sizeof(buf), "e%c%02d", exp < 0 ? '-' : '+',
		    exp < 0 ? -exp : exp);
		dbuf_addstr(sb, buf);
	} else if (exp < 0) {
		dbuf_addstr(sb, "0.");
		for (i = 0; i < -exp - 1; i++)
			dbuf_addstr(sb, "0");
		dbuf_add(sb, digits, (size_t)nd);
	} else {
		for (i = 0; i <= exp; i++)
			dbuf_add(sb, i < nd ? digits + i : "0", 1);
		dbuf_addstr(sb, ".");
		if (nd > exp + 1)
			dbuf_add(sb, digits + exp + 1, (size_t)(nd - exp - 1));
		else
			dbuf_addstr(sb, "0");
	}
}

/* An Excel serial date as Python's str(datetime), or str(time) when only
 * a time of day. Microseconds rounded as openpyxl does. */
char *
xl_date(double serial, int date1904, int time_only)
{
	char		buf[128];
	long long	days, us, secs;
	long long	y, m, d, z, era, doe, yoe, doy, mp;

	if (!isfinite(serial) || serial < -1e7 || serial > 1e7)
		return NULL;
	days = (long long)floor(serial);
	us = llround((serial - (double)days) * 86400e6);
	if (us >= 86400000000LL) {
		days++;
		us -= 86400000000LL;
	}
	secs = us / 1000000;
	us %= 1000000;
	if (time_only && days == 0) {
		if (us != 0)
			snprintf(buf, sizeof(buf), "%02lld:%02lld:%02lld.%06lld",
			    secs / 3600, secs / 60 % 60, secs % 60, us);
		else
			snprintf(buf, sizeof(buf), "%02lld:%02lld:%02lld",
			    secs / 3600, secs / 60 % 60, secs % 60);
		return xstrdup(buf);
	}
	/* days since 1970-01-01: 1900 system counts the phantom 1900-02-29 */
	if (date1904)
		z = days + 24107;
	else
		z = days - 25569 + (days < 60 ? 1 : 0);
	/* civil_from_days (H. Hinnant) */
	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y += m <= 2;
	if (y < 1 || y > 9999)
		return NULL;
	if (us != 0)
		snprintf(buf, sizeof(buf), "%04lld-%02lld-%02lld "
		    "%02lld:%02lld:%02lld.%06lld", y, m, d, secs / 3600,
		    secs / 60 % 60, secs % 60, us);
	else
		snprintf(buf, sizeof(buf), "%04lld-%02lld-%02lld "
		    "%02lld:%02lld:%02lld", y, m, d, secs / 3600,
		    secs / 60 % 60, secs % 60);
	return xstrdup(buf);
}

/* 1 date, 2 time of day only, 0 neither: a number format code. */
static int
xl_fmt_kind(const char *code)
{
	int	q = 0, date = 0, time = 0;
	char	c;

	for (; *code != '\0'; code++) {
		c = (char)tolower((unsigned char)*code);
		if (c == '"')
			q = !q;
		else if (q)
			continue;
		else if (c == '\\' && code[1] != '\0')
			code++;
		else if (c == '[') {	/* [Red], [$-409]: not a token */
			c = (char)tolower((unsigned char)code[1]);
			if (c == 'h' || c == 'm' || c == 's')
				time = 1;	/* [h]: elapsed time */
			while (code[1] != '\0' && code[1] != ']')
				code++;
		} else if (c == 'd' || c == 'y')
			date = 1;
		else if (c == 'm' && !time)
			date = 1;
		else if (c == 'h' || c == 's')
			time = 1;
	}
	return date ? 1 : time ? 2 : 0;
}

static int
xl_builtin_kind(long id)
{
	if ((id >= 14 && id <= 17) || id == 22)
		return 1;
	if ((id >= 18 && id <= 21) || (id >= 45 && id <= 47))
		return 2;
	return 0;
}

/* ====== Workbook parts ====== */

static void
xl_book_free(struct xl_book *b)
{
	size_t i;

	for (i = 0; i < b->nstrings; i++)
		free(b->strings[i]);
	free(b->strings);
	free(b->date_xf);
	memset(b, 0, sizeof(*b));
}

/* A zip entry parsed as XML, or NULL: *rc DOC_E* when it failed for a
 * reason other than its absence (then err says why). */
static xmlDocPtr
xl_part(const char *data, size_t len, const struct doc_limits *lim,
    const char *name, int optional, char *err, size_t errsz, int *rc)
{
	xmlDocPtr	 doc = NULL;
	char		*xml = NULL;
	size_t		 xlen;

	*rc = doc_zip_entry(data, len, lim, "xlsx", name, err, errsz, &xml,
	    &xlen);
	if (*rc == DOC_EDAMAGED && optional && strstr(err, "has no ") !=
	    NULL) {
		*rc = 0;
		err[0] = '\0';
		goto out;
	}
	if (*rc != 0)
		goto out;
	if ((doc = doc_xml_parse(xml, xlen, name, err, errsz)) == NULL)
		*rc = DOC_EDAMAGED;
out:
	free(xml);
	return doc;
}

/* Streams the next element of zx at depth depth named name (any
 * namespace) and expands it: 1 with *out the subtree (valid until the next
 * read), 0 at the end, or a DOC_E* code with err. */
static int
xl_next(struct doc_zip_xml *zx, int depth, const char *parent,
    const char *name, int *inside, xmlNodePtr *out, char *err, size_t errsz)
{
	xmlTextReaderPtr	 r = zx->reader;
	const char		*ln;
	int			 st, dp;

	for (;;) {
		if ((st = xmlTextReaderRead(r)) == 0)
			return 0;
		if (st < 0)
			return doc_zip_xml_error(zx, err, errsz);
		if (xmlTextReaderNodeType(r) != XML_READER_TYPE_ELEMENT)
			continue;
		dp = xmlTextReaderDepth(r);
		ln = (const char *)xmlTextReaderConstLocalName(r);
		if (ln == NULL)
			continue;
		if (parent != NULL && dp == depth - 1)
			*inside = strcasecmp(ln, parent) == 0;
		if (dp != depth || (parent != NULL && !*inside) ||
		    strcasecmp(ln, name) != 0)
			continue;
		if ((*out = xmlTextReaderExpand(r)) == NULL)
			return doc_zip_xml_error(zx, err, errsz);
		return 1;
	}
}

/* The shared strings, streamed: <sst><si>...</si>... */
/* An optional zip entry opened for streaming: 0 with zx->reader NULL
 * when the entry is absent, or a DOC_E* code with err. */
static int
xl_stream(const char *data, size_t len, const struct doc_limits *lim,
    const char *name, struct doc_zip_xml *zx, char *err, size_t errsz)
{
	int rc = doc_zip_xml_open(data, len, lim, "xlsx", name, zx, err,
	    errsz);

	if (rc == DOC_EDAMAGED && strstr(err, "has no ") != NULL) {
		err[0] = '\0';
		return 0;
	}
	return rc;
}

static int
xl_strings(struct doc_zip_xml *zx, struct xl_book *b, size_t max, char *err,
    size_t errsz)
{
	xmlNodePtr	  n;
	size_t		  cap = 0;
	char		**p;
	int		  rc, inside = 1;

	while ((rc = xl_next(zx, 1, NULL, "si", &inside, &n, err, errsz)) ==
	    1) {
		if (b->nstrings >= max) {
			snprintf(err, errsz, "the workbook has more than %zu "
			    "shared strings (documents.max_cells)", max);
			return DOC_ELIMIT;
		}
		if (b->nstrings == cap) {
			cap = cap ? cap * 2 : 64;
			if ((p = realloc(b->strings, cap * sizeof(*p))) ==
			    NULL)
				goto nomem;
			b->strings = p;
		}
		if ((b->strings[b->nstrings] = xl_node_text(n->children)) ==
		    NULL)
			goto nomem;
		b->nstrings++;
	}
	return rc;
nomem:
	snprintf(err, errsz, "out of memory");
	return DOC_ENOMEM;
}

static int
xl_styles(xmlDocPtr doc, struct xl_book *b)
{
	const xmlNode	*root = xmlDocGetRootElement(doc), *n;
	const xmlNode	*fmts = xl_child(root, "numFmts");
	const xmlNode	*xfs = xl_child(root, "cellXfs");
	long		 ids[256];
	int		 kinds[256];
	size_t		 nfmt = 0, i, cap = 0;
	char		*s, *code;
	long		 id;
	int		 k;

	for (n = fmts ? fmts->children : NULL; n != NULL && nfmt < 256;
	    n = n->next) {
		if (n->type != XML_ELEMENT_NODE || !doc_name_is(n, "numFmt"))
			continue;
		s = xl_attr(n, "numFmtId");
		code = xl_attr(n, "formatCode");
		ids[nfmt] = s ? strtol(s, NULL, 10) : -1;
		kinds[nfmt++] = code ? xl_fmt_kind(code) : 0;
		free(s);
		free(code);
	}
	for (n = xfs ? xfs->children : NULL; n != NULL; n = n->next) {
		if (n->type != XML_ELEMENT_NODE || !doc_name_is(n, "xf"))
			continue;
		if (b->nxf == cap) {
			unsigned char *p;

			cap = cap ? cap * 2 : 32;
			if (cap > 65536)
				break;
			if ((p = realloc(b->date_xf, cap)) == NULL)
				return DOC_ENOMEM;
			b->date_xf = p;
		}
		s = xl_attr(n, "numFmtId");
		id = s ? strtol(s, NULL, 10) : 0;
		free(s);
		k = xl_builtin_kind(id);
		for (i = 0; i < nfmt; i++)
			if (ids[i] == id)
				k = kinds[i];
		b->date_xf[b->nxf++] = (unsigned char)k;
	}
	return 0;
}

/* ====== A sheet ====== */

static void
xl_row_release(struct xl_row *r)
{
	size_t j;

	for (j = 0; j < r->n; j++)
		free(r->cells[j].str);
	free(r->cells);
	memset(r, 0, sizeof(*r));
}

void
xl_rows_free(struct xl_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		xl_row_release(&rows[i]);
	free(rows);
}

/* Column index (0-based) of a cell reference "BC12", or -1. */
static long
xl_col(const char *ref)
{
	long c = 0;

	if (ref == NULL || !isalpha((unsigned char)*ref))
		return -1;
	for (; isalpha((unsigned char)*ref); ref++) {
		c = c * 26 + (toupper((unsigned char)*ref) - 'A' + 1);
		if (c > XLSX_MAX_COLS)
			return -1;
	}
	return c - 1;
}

/* pandas' default NA strings: such a cell is NaN. */
int
xl_na(const char *s)
{
	static const char *const na[] = { "", "#N/A", "#N/A N/A", "#NA",
		"-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
		"<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan",
		"null", NULL };
	size_t i;

	for (i = 0; na[i] != NULL; i++)
		if (strcmp(s, na[i]) == 0)
			return 1;
	return 0;
}

/* One <c>: kind and value. */
static int
xl_cell_read(const xmlNode *c, const struct xl_book *b, struct xl_cell *o)
{
	const xmlNode	*v = xl_child(c, "v");
	char		*t = xl_attr(c, "t"), *s = xl_attr(c, "s");
	char		*val = NULL, *end;
	long		 idx;
	int		 rc = 0, k;

	memset(o, 0, sizeof(*o));
	if (t != NULL && strcmp(t, "inlineStr") == 0) {
		if ((o->str = xl_node_text(xl_child(c, "is") ?
		    xl_child(c, "is")->children : NULL)) == NULL)
			rc = DOC_ENOMEM;
		o->kind = XL_STR;
		goto out;
	}
	if (v == NULL)
		goto out;
	if ((val = (char *)xmlNodeGetContent(v)) == NULL)
		goto out;
	if (t != NULL && strcmp(t, "s") == 0) {
		idx = strtol(val, &end, 10);
		if (*end == '\0' && idx >= 0 && (size_t)idx < b->nstrings) {
			if ((o->str = xstrdup(b->strings[idx])) == NULL)
				rc = DOC_ENOMEM;
			o->kind = XL_STR;
		}
	} else if (t != NULL && (strcmp(t, "str") == 0 || strcmp(t, "e") ==
	    0)) {
		if ((o->str = xstrdup(val)) == NULL)
			rc = DOC_ENOMEM;
		o->kind = XL_STR;
	} else if (t != NULL && strcmp(t, "b") == 0) {
		o->kind = XL_BOOL;
		o->num = strcmp(val, "0") != 0;
	} else if (t == NULL || strcmp(t, "n") == 0 || strcmp(t, "d") == 0) {
		o->num = strtod(val, &end);
		if (end == val || *end != '\0')
			goto out;
		o->kind = strpbrk(val, ".eE") ? XL_FLOAT : XL_INT;
		idx = s ? strtol(s, NULL, 10) : 0;
		k = idx >= 0 && (size_t)idx < b->nxf ? b->date_xf[idx] : 0;
		if (k != 0 && (o->str = xl_date(o->num, b->date1904, k == 2))
		    != NULL)
			o->kind = XL_DATE;
		if (o->kind == XL_INT && fabs(o->num) >= 9007199254740992.0)
			o->kind = XL_FLOAT;
	}
out:
	if (rc == 0 && o->kind == XL_STR && o->str != NULL && xl_na(o->str)) {
		free(o->str);
		o->str = NULL;
		o->kind = XL_NONE;
	}
	xmlFree(val);
	free(t);
	free(s);
	return rc;
}

/* The sheet's non-blank rows with their numbers, each as wide as its
 * last value. */
static int
xl_sheet_rows(struct doc_zip_xml *zx, const struct xl_book *b,
    size_t max_cells, struct xl_row **out, size_t *nout, size_t *width,
    char *err, size_t errsz)
{
	xmlNodePtr	 r;
	const xmlNode	*c;
	struct xl_row	*rows = NULL, *p, row;
	struct xl_cell	 cell, *cp;
	size_t		 n = 0, cap = 0, cells = 0, rcap;
	unsigned long	 lastnum = 0;
	char		*ref;
	long		 col, next;
	int		 rc = 0, st, inside = 0;

	*width = 0;
	memset(&row, 0, sizeof(row));
	while ((st = xl_next(zx, 2, "sheetData", "row", &inside, &r, err,
	    errsz)) == 1) {
		memset(&row, 0, sizeof(row));
		rcap = 0;
		next = 0;
		ref = xl_attr(r, "r");
		row.num = ref ? strtoul(ref, NULL, 10) : 0;
		free(ref);
		if (row.num <= lastnum || row.num > 1048576)
			row.num = lastnum + 1;
		lastnum = row.num;
		for (c = r->children; c != NULL; c = c->next) {
			if (c->type != XML_ELEMENT_NODE || !doc_name_is(c, "c"))
				continue;
			ref = xl_attr(c, "r");
			col = ref ? xl_col(ref) : next;
			free(ref);
			if (col < 0 || col < next)
				col = next;
			if (col >= XLSX_MAX_COLS)
				break;
			if ((rc = xl_cell_read(c, b, &cell)) != 0)
				goto fail;
			next = col + 1;
			if (cell.kind == XL_NONE)
				continue;
			if (++cells > max_cells) {
				free(cell.str);
				snprintf(err, errsz, "a sheet has more than "
				    "%zu cells (documents.max_cells)",
				    max_cells);
				rc = DOC_ELIMIT;
				goto fail;
			}
			if ((size_t)col >= rcap) {
				size_t ncap = (size_t)col + 1 > rcap * 2 ?
				    (size_t)col + 1 : rcap * 2;

				if ((cp = realloc(row.cells, ncap *
				    sizeof(*cp))) == NULL) {
					free(cell.str);
					rc = DOC_ENOMEM;
					goto fail;
				}
				memset(cp + rcap, 0, (ncap - rcap) *
				    sizeof(*cp));
				row.cells = cp;
				rcap = ncap;
			}
			row.cells[col] = cell;
			row.n = (size_t)col + 1;
		}
		if (row.n == 0) {	/* a blank row: a gap, never shown */
			free(row.cells);
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			if ((p = realloc(rows, cap * sizeof(*p))) == NULL) {
				rc = DOC_ENOMEM;
				goto fail;
			}
			rows = p;
		}
		rows[n++] = row;
		memset(&row, 0, sizeof(row));
		if (rows[n - 1].n > *width)
			*width = rows[n - 1].n;
	}
	if (st < 0) {
		xl_rows_free(rows, n);
		return st;
	}
	*out = rows;
	*nout = n;
	return 0;
fail:
	xl_row_release(&row);
	xl_rows_free(rows, n);
	if (rc == DOC_ENOMEM)
		snprintf(err, errsz, "out of memory");
	return rc;
}

static const struct xl_cell *
xl_at(const struct xl_row *r, size_t col)
{
	static const struct xl_cell none = { XL_NONE, 0, NULL };

	return col < r->n ? &r->cells[col] : &none;
}

/* A string cell with its newlines as spaces (" ".join(splitlines())). */
static void
xl_add_str(struct dbuf *sb, const char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	for (; n > 0; s++, n--) {
		if (*s == '\r' && n > 1 && s[1] == '\n')
			continue;
		dbuf_add(sb, *s == '\n' || *s == '\r' ? " " : s, 1);
	}
}

/* A value as pandas prints it in a column of kind colkind. */
static void
xl_add_value(struct dbuf *sb, const struct xl_cell *c, enum xl_kind colkind)
{
	char buf[32];

	switch (c->kind) {
	case XL_NONE:
		dbuf_addstr(sb, colkind == XL_DATE ? "NaT" : "nan");
		break;
	case XL_INT:
		if (colkind == XL_FLOAT)
			py_float(sb, c->num);
		else {
			snprintf(buf, sizeof(buf), "%.0f", c->num);
			dbuf_addstr(sb, buf);
		}
		break;
	case XL_FLOAT:
		py_float(sb, c->num);
		break;
	case XL_BOOL:
		if (colkind == XL_FLOAT)
			dbuf_addstr(sb, c->num != 0 ? "1.0" : "0.0");
		else
			dbuf_addstr(sb, c->num != 0 ? "True" : "False");
		break;
	case XL_STR:
	case XL_DATE:
		xl_add_str(sb, c->str);
		break;
	}
}

/* The kind pandas gives column col of the data rows (rows[first..n)),
 * gap set when some row of the sheet between row 2 and the last has no
 * value there. */
static enum xl_kind
xl_col_kind(const struct xl_row *rows, size_t first, size_t n, size_t col,
    int gap)
{
	enum xl_kind	kind = XL_NONE, k;
	size_t		i;
	int		mixed = 0;

	for (i = first; i < n; i++) {
		k = xl_at(&rows[i], col)->kind;
		if (k == XL_NONE) {
			gap = 1;
			continue;
		}
		if (k == XL_INT && kind == XL_FLOAT)
			continue;
		if (k == XL_FLOAT && kind == XL_INT) {
			kind = XL_FLOAT;
			continue;
		}
		if (kind != XL_NONE && k != kind)
			mixed = 1;
		kind = k;
	}
	if (mixed)
		return XL_STR;
	if (kind == XL_INT && gap)
		return XL_FLOAT;
	if (kind == XL_BOOL && gap)	/* pandas: bools and NaN, floats */
		return XL_FLOAT;
	return kind;
}

int
xl_sheet_md(const struct xl_row *rows, size_t n, size_t width,
    struct dbuf *sb)
{
	static const struct xl_row noheader = { NULL, 0, 1 };
	const struct xl_row	*head = &noheader;
	enum xl_kind		*kinds = NULL;
	struct dbuf		*heads = NULL;
	size_t			 i, j, k, dup, hl, first = 0;
	int			 rc = DOC_ENOMEM, gap;
	char			 buf[64];

	if (n == 0 || width == 0) {	/* an empty sheet: "| |" in pandas */
		dbuf_addstr(sb, "|  |\n|  |");
		return 0;
	}
	/* pandas' header is the sheet's row 1, blank or not */
	if (rows[0].num == 1) {
		head = &rows[0];
		first = 1;
	}
	/* a blank row of the data is a gap in every column */
	gap = rows[n - 1].num - 1 > n - first;
	if ((kinds = calloc(width, sizeof(*kinds))) == NULL ||
	    (heads = calloc(width, sizeof(*heads))) == NULL)
		goto out;
	for (j = 0; j < width; j++) {
		const struct xl_cell *h = xl_at(head, j);

		kinds[j] = xl_col_kind(rows, first, n, j, gap);
		if (h->kind == XL_NONE) {
			snprintf(buf, sizeof(buf), "Unnamed: %zu", j);
			dbuf_addstr(&heads[j], buf);
		} else
			xl_add_value(&heads[j], h, XL_STR);
		/* a repeated name gets .1, .2 (pandas' mangle_dupe_cols) */
		for (dup = 0, k = 0; k < j; k++)
			if (heads[k].len >= heads[j].len && heads[j].p &&
			    heads[k].p && strncmp(heads[k].p, heads[j].p,
			    heads[j].len) == 0 && (heads[k].len ==
			    heads[j].len || heads[k].p[heads[j].len] == '.'))
				dup++;
		if (dup > 0) {
			snprintf(buf, sizeof(buf), ".%zu", dup);
			dbuf_addstr(&heads[j], buf);
		}
	}
	dbuf_addstr(sb, "|");
	for (j = 0; j < width; j++) {
		dbuf_addstr(sb, " ");
		dbuf_add(sb, heads[j].p ? heads[j].p : "", heads[j].len);
		dbuf_addstr(sb, " |");
	}
	dbuf_addstr(sb, "\n|");
	for (j = 0; j < width; j++) {
		dbuf_addstr(sb, " ");
		/* "-" times the name's length in characters */
		for (hl = 0, k = 0; k < heads[j].len; k++)
			if (((unsigned char)heads[j].p[k] & 0xc0) != 0x80)
				hl++;
		for (k = 0; k < hl; k++)
			dbuf_addstr(sb, "-");
		dbuf_addstr(sb, " |");
	}
	for (i = first; i < n; i++) {
		dbuf_addstr(sb, "\n|");
		for (j = 0; j < width; j++) {
			dbuf_addstr(sb, " ");
			xl_add_value(sb, xl_at(&rows[i], j), kinds[j]);
			dbuf_addstr(sb, " |");
		}
	}
	rc = 0;
out:
	if (heads != NULL)
		for (j = 0; j < width; j++)
			dbuf_free(&heads[j]);
	free(heads);
	free(kinds);
	return rc;
}

/* ====== The workbook ====== */

int
doc_read_xlsx(const char *data, size_t len, const struct doc_limits *lim,
    struct doc *d, char *err, size_t errsz)
{
	struct xl_book	 b = { 0 };
	xmlDocPtr	 wb = NULL, rels = NULL, part = NULL;
	struct doc_zip_xml zx = { 0 };
	const xmlNode	*sheets, *s, *r, *pr;
	struct xl_row	*rows = NULL;
	struct dbuf	 all, one = { 0 };
	char		 path[1024], *rid = NULL, *target, *v;
	size_t		 nrows = 0, width, nsheets = 0;
	int		 rc;

	dbuf_init(&all, lim->max_unpacked);
	if ((wb = xl_part(data, len, lim, "xl/workbook.xml", 0, err, errsz,
	    &rc)) == NULL)
		goto out;
	if ((rels = xl_part(data, len, lim, "xl/_rels/workbook.xml.rels", 0,
	    err, errsz, &rc)) == NULL)
		goto out;
	if ((rc = xl_stream(data, len, lim, "xl/sharedStrings.xml", &zx, err,
	    errsz)) != 0)
		goto out;
	if (zx.reader != NULL && (rc = xl_strings(&zx, &b, lim->max_cells,
	    err, errsz)) != 0)
		goto out;
	doc_zip_xml_close(&zx);
	if ((part = xl_part(data, len, lim, "xl/styles.xml", 1, err, errsz,
	    &rc)) == NULL && rc != 0)
		goto out;
	if (part != NULL && (rc = xl_styles(part, &b)) != 0) {
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	if ((pr = xl_child(xmlDocGetRootElement(wb), "workbookPr")) != NULL &&
	    (v = xl_attr(pr, "date1904")) != NULL) {
		b.date1904 = strcmp(v, "1") == 0 || strcmp(v, "true") == 0;
		free(v);
	}
	sheets = xl_child(xmlDocGetRootElement(wb), "sheets");
	for (s = sheets ? sheets->children : NULL; s != NULL; s = s->next) {
		if (s->type != XML_ELEMENT_NODE || !doc_name_is(s, "sheet"))
			continue;
		if (nsheets >= XLSX_MAX_SHEETS)
			break;
		free(rid);
		rid = NULL;
		{
			xmlChar *x = xmlGetNsProp(s, (const xmlChar *)"id",
			    (const xmlChar *)"http://schemas.openxmlformats."
			    "org/officeDocument/2006/relationships");

			rid = x ? xstrdup((const char *)x) : NULL;
			xmlFree(x);
		}
		target = NULL;
		for (r = xmlDocGetRootElement(rels)->children; r != NULL &&
		    rid != NULL; r = r->next) {
			char *id;

			if (r->type != XML_ELEMENT_NODE)
				continue;
			id = xl_attr(r, "Id");
			if (id != NULL && strcmp(id, rid) == 0)
				target = xl_attr(r, "Target");
			free(id);
			if (target != NULL)
				break;
		}
		if (target == NULL || strstr(target, "worksheets/") == NULL) {
			free(target);	/* a chartsheet: pandas skips it */
			continue;
		}
		if (target[0] == '/')
			snprintf(path, sizeof(path), "%s", target + 1);
		else
			snprintf(path, sizeof(path), "xl/%s", target);
		free(target);
		if ((rc = xl_stream(data, len, lim, path, &zx, err, errsz)) !=
		    0)
			goto out;
		if (zx.reader == NULL)
			continue;
		if ((rc = xl_sheet_rows(&zx, &b, lim->max_cells, &rows,
		    &nrows, &width, err, errsz)) != 0)
			goto out;
		doc_zip_xml_close(&zx);
		if (xl_sheet_md(rows, nrows, width, &one) != 0) {
			rc = DOC_ENOMEM;
			snprintf(err, errsz, "out of memory");
			goto out;
		}
		xl_rows_free(rows, nrows);
		rows = NULL;
		nrows = 0;
		{
			struct doc_part	*np = realloc(d->parts, (d->nparts +
			    1) * sizeof(*np));
			struct dbuf	 u = { 0 };

			if (np == NULL) {
				rc = DOC_ENOMEM;
				snprintf(err, errsz, "out of memory");
				goto out;
			}
			d->parts = np;
			doc_add_utf8(&u, one.p ? one.p : "", one.len);
			dbuf_free(&one);
			memset(&one, 0, sizeof(one));
			if ((rc = doc_take(&u, err, errsz,
			    &d->parts[d->nparts].text)) != 0)
				goto out;
			dbuf_addstr(&all, d->parts[d->nparts].text);
			dbuf_addstr(&all, "\n\n");
			d->nparts++;
		}
		nsheets++;
	}
	d->unit = "sheet";
	rc = doc_take(&all, err, errsz, &d->text);
out:
	dbuf_free(&all);
	dbuf_free(&one);
	xl_rows_free(rows, nrows);
	free(rid);
	xl_book_free(&b);
	doc_zip_xml_close(&zx);
	if (part != NULL)
		xmlFreeDoc(part);
	if (rels != NULL)
		xmlFreeDoc(rels);
	if (wb != NULL)
		xmlFreeDoc(wb);
	return rc;
}
