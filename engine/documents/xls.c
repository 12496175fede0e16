/*
 * xls.c — Excel's old binary xls (BIFF in an OLE compound file) read with
 * libfreexl, every worksheet a Markdown table as Dify's pandas makes it
 * (the rules of xlsx.c, whose table writer this shares): an integral
 * number prints as an integer, as pandas' xlrd reader gives it, dates as
 * "YYYY-MM-DD HH:MM:SS", times as "HH:MM:SS". One part per sheet.
 *
 * freexl opens a path only: the bytes go into an anonymous memory file
 * (memfd_create) opened as /proc/self/fd/N, so nothing touches the disk.
 * freexl runs in a child process (child.c: it reads out of bounds on
 * some damaged files).
 * An obfuscated (password) workbook fails with DOC_EENCRYPTED. freexl
 * holds a sheet's whole grid once opened (BIFF8 caps it at 65536 x 256);
 * documents.max_cells bounds the cells read out of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <freexl.h>

#include "engine/documents/internal.h"

#define XLS_MAX_SHEETS	1024

/* One freexl value as pandas' cell. */
static int
xls_cell(const FreeXL_CellValue *v, struct xl_cell *o)
{
	char buf[64];

	memset(o, 0, sizeof(*o));
	switch (v->type) {
	case FREEXL_CELL_INT:
		o->kind = XL_INT;
		o->num = v->value.int_value;
		return 0;
	case FREEXL_CELL_DOUBLE:
		o->num = v->value.double_value;
		o->kind = o->num == (double)(long long)o->num && o->num <
		    9007199254740992.0 && o->num > -9007199254740992.0 ?
		    XL_INT : XL_FLOAT;
		return 0;
	case FREEXL_CELL_TEXT:
	case FREEXL_CELL_SST_TEXT:
		if (v->value.text_value == NULL || xl_na(v->value.text_value))
			return 0;
		o->kind = XL_STR;
		break;
	case FREEXL_CELL_DATE:
	case FREEXL_CELL_DATETIME:
	case FREEXL_CELL_TIME:
		if (v->value.text_value == NULL)
			return 0;
		o->kind = XL_DATE;
		if (v->type == FREEXL_CELL_DATE) {
			snprintf(buf, sizeof(buf), "%.20s 00:00:00",
			    v->value.text_value);
			return (o->str = strdup(buf)) == NULL ? DOC_ENOMEM : 0;
		}
		break;
	default:
		return 0;
	}
	return (o->str = strdup(v->value.text_value)) == NULL ? DOC_ENOMEM :
	    0;
}

/* The active sheet's non-blank rows. */
static int
xls_rows(const void *h, const struct doc_limits *lim, struct xl_row **out,
    size_t *nout, size_t *width, char *err, size_t errsz)
{
	FreeXL_CellValue	 v;
	struct xl_row		*rows = NULL, *nr;
	struct xl_cell		*cells = NULL;
	unsigned int		 nrow = 0, r;
	unsigned short		 ncol = 0, c;
	size_t			 n = 0, last;
	int			 rc = 0;

	*out = NULL;
	*nout = *width = 0;
	if (freexl_worksheet_dimensions(h, &nrow, &ncol) != FREEXL_OK)
		return 0;
	if ((size_t)nrow * ncol > lim->max_cells) {
		snprintf(err, errsz, "a sheet has more than %zu cells "
		    "(documents.max_cells)", lim->max_cells);
		return DOC_ELIMIT;
	}
	for (r = 0; r < nrow; r++) {
		if ((cells = calloc(ncol ? ncol : 1, sizeof(*cells))) == NULL)
			goto nomem;
		last = 0;
		for (c = 0; c < ncol; c++) {
			if (freexl_get_cell_value(h, r, c, &v) != FREEXL_OK)
				continue;
			if ((rc = xls_cell(&v, &cells[c])) != 0)
				goto nomem;
			if (cells[c].kind != XL_NONE)
				last = (size_t)c + 1;
		}
		if (last == 0) {	/* a blank row: dropna(how="all") */
			free(cells);
			cells = NULL;
			continue;
		}
		if ((nr = realloc(rows, (n + 1) * sizeof(*nr))) == NULL)
			goto nomem;
		rows = nr;
		rows[n].cells = cells;
		rows[n].n = last;
		rows[n].num = r + 1;
		cells = NULL;
		if (last > *width)
			*width = last;
		n++;
	}
	*out = rows;
	*nout = n;
	return 0;
nomem:
	for (c = 0; cells != NULL && c < ncol; c++)
		free(cells[c].str);
	free(cells);
	xl_rows_free(rows, n);
	snprintf(err, errsz, "out of memory");
	return DOC_ENOMEM;
}

/* The reading itself, in the child (doc_read_xls below). */
static int
xls_read_here(const char *data, size_t len, const struct doc_limits *lim,
    struct doc *d, char *err, size_t errsz)
{
	const void	*h = NULL;
	struct xl_row	*rows = NULL;
	struct dbuf	 all, one = { 0 }, u = { 0 };
	char		 path[64], *t = NULL;
	unsigned int	 nsheets = 0, info = 0, i;
	size_t		 nrows = 0, width, off = 0;
	ssize_t		 w;
	int		 fd = -1, rc = DOC_EDAMAGED, frc;

	dbuf_init(&all, lim->max_unpacked);
	if ((fd = memfd_create("flowcgi-xls", MFD_CLOEXEC)) < 0) {
		snprintf(err, errsz, "cannot hold the workbook in memory");
		rc = DOC_ENOMEM;
		goto out;
	}
	while (off < len) {
		if ((w = write(fd, data + off, len - off)) <= 0) {
			snprintf(err, errsz, "cannot hold the workbook in "
			    "memory");
			rc = DOC_ENOMEM;
			goto out;
		}
		off += (size_t)w;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if ((frc = freexl_open(path, &h)) != FREEXL_OK) {
		h = NULL;
		snprintf(err, errsz, frc == FREEXL_INSUFFICIENT_MEMORY ? "out "
		    "of memory" : "the xls workbook is damaged (freexl error "
		    "%d)", frc);
		if (frc == FREEXL_INSUFFICIENT_MEMORY)
			rc = DOC_ENOMEM;
		goto out;
	}
	if (freexl_get_info(h, FREEXL_BIFF_PASSWORD, &info) == FREEXL_OK &&
	    info == FREEXL_BIFF_OBFUSCATED) {
		snprintf(err, errsz, "the xls workbook is protected by a "
		    "password");
		rc = DOC_EENCRYPTED;
		goto out;
	}
	if (freexl_get_info(h, FREEXL_BIFF_SHEET_COUNT, &nsheets) !=
	    FREEXL_OK)
		nsheets = 0;
	if (nsheets > XLS_MAX_SHEETS)
		nsheets = XLS_MAX_SHEETS;
	for (i = 0; i < nsheets; i++) {
		if ((rc = doc_check_stop(lim, err, errsz)) != 0)
			goto out;
		if (freexl_select_active_worksheet(h, (unsigned short)i) !=
		    FREEXL_OK)
			continue;
		if ((rc = xls_rows(h, lim, &rows, &nrows, &width, err,
		    errsz)) != 0)
			goto out;
		dbuf_init(&one, lim->max_unpacked);
		rc = xl_sheet_md(rows, nrows, width, &one);
		xl_rows_free(rows, nrows);
		rows = NULL;
		if (rc != 0) {
			snprintf(err, errsz, "out of memory");
			rc = DOC_ENOMEM;
			goto out;
		}
		doc_add_utf8(&u, one.p ? one.p : "", one.len);
		dbuf_free(&one);
		if ((rc = doc_take(&u, err, errsz, &t)) != 0)
			goto out;
		rc = doc_add_part(d, "sheet", t, &all, "\n\n", err, errsz);
		free(t);
		t = NULL;
		if (rc != 0)
			goto out;
	}
	if (all.len > 0)
		dbuf_addstr(&all, "\n\n");
	rc = doc_take(&all, err, errsz, &d->text);
out:
	dbuf_free(&all);
	dbuf_free(&one);
	dbuf_free(&u);
	if (h != NULL)
		freexl_close(h);
	if (fd >= 0)
		close(fd);
	return rc;
}

/*
 * libfreexl reads out of bounds on some damaged workbooks: the workbook is
 * read in a child process (child.c).
 */
int
doc_read_xls(const char *data, size_t len, const struct doc_limits *lim,
    struct doc *d, char *err, size_t errsz)
{
	if (len < 8 || memcmp(data, "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", 8) !=
	    0) {
		snprintf(err, errsz, "the file is not an xls workbook (no OLE "
		    "compound file)");
		return DOC_EDAMAGED;
	}
	return doc_read_in_child(xls_read_here, "xls workbook", "sheet", data,
	    len, lim, d, err, errsz);
}
