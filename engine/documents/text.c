/*
 * text.c — the plain formats: text (txt, md, markdown, yaml, yml) as it
 * is, json re-written indented by 2, csv as a Markdown table, after Dify's
 * nodes/document_extractor/node.py.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "engine/documents/internal.h"

/* Drops a UTF-8 BOM. */
static void
skip_bom(const char **data, size_t *len)
{
	if (*len >= 3 && memcmp(*data, "\xef\xbb\xbf", 3) == 0) {
		*data += 3;
		*len -= 3;
	}
}

/* UTF-8 text, a BOM dropped, malformed bytes as U+FFFD. */
int
doc_read_plain(const char *data, size_t len, const struct doc_limits *lim,
    struct doc *d, char *err, size_t errsz)
{
	struct dbuf sb = { 0 };

	skip_bom(&data, &len);
	doc_add_utf8(&sb, data, len);
	return doc_take(&sb, err, errsz, &d->text);
}

int
doc_read_json(const char *data, size_t len, const struct doc_limits *lim,
    struct doc *d, char *err, size_t errsz)
{
	json_error_t	 je;
	json_t		*v;
	int		 rc = DOC_EDAMAGED;

	skip_bom(&data, &len);
	if ((v = json_loadb(data, len, JSON_DECODE_ANY, &je)) == NULL) {
		snprintf(err, errsz, "Failed to decode JSON file: %s (line "
		    "%d)", je.text, je.line);
		goto out;
	}
	if ((d->text = json_dumps(v, JSON_INDENT(2) | JSON_ENCODE_ANY)) ==
	    NULL) {
		snprintf(err, errsz, "out of memory");
		rc = DOC_ENOMEM;
		goto out;
	}
	rc = 0;
out:
	json_decref(v);
	return rc;
}

/* Python's csv.reader rows -> Dify's Markdown table. */
int
doc_read_csv(const char *data, size_t len, const struct doc_limits *lim,
    struct doc *d, char *err, size_t errsz)
{
	struct dbuf	 sb = { 0 }, cell = { 0 };
	struct doc	 plain = { 0 };
	char		*clean;
	size_t		 i, n, ncols = 0, col = 0, row = 0, k;
	int		 rc, q = 0, any = 0;

	if ((rc = doc_read_plain(data, len, lim, &plain, err, errsz)) != 0)
		goto out;
	clean = plain.text;
	n = strlen(clean);
	for (i = 0; i <= n; i++) {
		char ch = i < n ? clean[i] : '\n';

		if (q) {
			if (ch == '"' && i + 1 < n && clean[i + 1] == '"') {
				dbuf_add(&cell, "\"", 1);
				i++;
			} else if (ch == '"')
				q = 0;
			else if (i == n) {
				q = 0;	/* unterminated: end the cell */
				i--;
			} else
				dbuf_add(&cell, &ch, 1);
			continue;
		}
		if (ch == '"' && cell.len == 0) {
			q = 1;
			any = 1;
			continue;
		}
		if (ch == ',' || ch == '\n' || ch == '\r') {
			if (ch == '\r' && i + 1 < n && clean[i + 1] == '\n')
				i++;
			if ((ch == '\n' || ch == '\r') && col == 0 && !any &&
			    cell.len == 0) {
				continue;	/* an empty line is no row */
			}
			dbuf_addstr(&sb, col == 0 ? "| " : " | ");
			dbuf_add(&sb, cell.p ? cell.p : "", cell.len);
			dbuf_free(&cell);
			memset(&cell, 0, sizeof(cell));
			col++;
			any = 1;
			if (ch != ',') {
				dbuf_addstr(&sb, " |\n");
				if (row++ == 0) {
					ncols = col;
					dbuf_addstr(&sb, "|");
					for (k = 0; k < ncols; k++)
						dbuf_addstr(&sb, " --- |");
					dbuf_addstr(&sb, "\n");
				}
				col = 0;
				any = 0;
			}
			continue;
		}
		dbuf_add(&cell, &ch, 1);
	}
	if ((rc = doc_take(&sb, err, errsz, &d->text)) != 0)
		goto out;
	/* Dify strips the table */
	n = strlen(d->text);
	while (n > 0 && isspace((unsigned char)d->text[n - 1]))
		d->text[--n] = '\0';
out:
	dbuf_free(&sb);
	dbuf_free(&cell);
	doc_release(&plain);
	return rc;
}
