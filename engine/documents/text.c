/*
 * text.c — the plain formats: text (txt, md, markdown, yaml, yml) as it
 * is, json re-written indented by 2, csv as a Markdown table, after Dify's
 * nodes/document_extractor/node.py. Text with a UTF-16 or UTF-32 byte order
 * mark is converted with iconv; text that is not UTF-8 is converted from
 * the charset uchardet guesses (GBK/GB18030, Big5, Shift-JIS... as Dify's
 * chardet does).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <stdint.h>
#include <iconv.h>

#include <jansson.h>
#include <uchardet/uchardet.h>

#include "engine/internal.h"
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

/* The encoding a byte order mark names (UTF-32 before UTF-16: FF FE 00 00
 * starts both), its length in *bom; NULL without one (or for UTF-8). */
static const char *
bom_charset(const char *data, size_t len, size_t *bom)
{
	const unsigned char *p = (const unsigned char *)data;

	*bom = 4;
	if (len >= 4 && memcmp(p, "\xff\xfe\0\0", 4) == 0)
		return "UTF-32LE";
	if (len >= 4 && memcmp(p, "\0\0\xfe\xff", 4) == 0)
		return "UTF-32BE";
	*bom = 2;
	if (len >= 2 && p[0] == 0xff && p[1] == 0xfe)
		return "UTF-16LE";
	if (len >= 2 && p[0] == 0xfe && p[1] == 0xff)
		return "UTF-16BE";
	*bom = 0;
	return NULL;
}

int
doc_to_utf8(const char *cs, const char *data, size_t len, size_t max,
    struct dbuf *sb, char *err, size_t errsz)
{
	iconv_t	 cd;
	char	 out[8192], *in = (char *)(uintptr_t)data, *o;
	size_t	 inleft = len, oleft, r;
	int	 rc = 0;

	if ((cd = iconv_open("UTF-8", cs)) == (iconv_t)-1) {
		snprintf(err, errsz, "cannot read text in %s", cs);
		return DOC_EFORMAT;
	}
	while (inleft > 0) {
		o = out;
		oleft = sizeof(out);
		r = iconv(cd, &in, &inleft, &o, &oleft);
		dbuf_add(sb, out, sizeof(out) - oleft);
		if (r == (size_t)-1 && errno != E2BIG) {
			/* EILSEQ or EINVAL: one unit lost, U+FFFD */
			tpl_add_utf8(sb, 0xfffd);
			if (inleft == 0)
				break;
			in++;
			inleft--;
		}
		if (sb->len > max) {
			snprintf(err, errsz, "the text is larger than %zu "
			    "bytes (documents.max_unpacked)", max);
			rc = DOC_ELIMIT;
			break;
		}
	}
	iconv_close(cd);
	return rc;
}

/* 1 when n bytes are valid UTF-8 (NUL allowed: it becomes U+FFFD). */
static int
valid_utf8(const char *p, size_t n)
{
	size_t i = 0, l;

	while (i < n) {
		if ((unsigned char)p[i] < 0x80) {
			i++;
			continue;
		}
		if (tpl_utf8_next(p + i, n - i, &l) == 0xfffd && (l <= 1 ||
		    memcmp(p + i, "\xef\xbf\xbd", 3) != 0))
			return 0;
		i += l;
	}
	return 1;
}

/* The charset of text that is not UTF-8, as uchardet guesses it from its
 * first SNIFF_MAX bytes (GB18030 for GBK, BIG5, SHIFT_JIS, EUC-KR,
 * WINDOWS-125x...), in buf; NULL when it is UTF-8 or unknown. */
#define SNIFF_MAX ((size_t)1 << 18)
static const char *
sniff_charset(const char *data, size_t len, char *buf, size_t bufsz)
{
	uchardet_t	 ud;
	const char	*cs;

	if (valid_utf8(data, len) || (ud = uchardet_new()) == NULL)
		return NULL;
	uchardet_handle_data(ud, data, len < SNIFF_MAX ? len : SNIFF_MAX);
	uchardet_data_end(ud);
	cs = uchardet_get_charset(ud);
	snprintf(buf, bufsz, "%s", cs != NULL ? cs : "");
	uchardet_delete(ud);
	if (buf[0] == '\0' || strcasecmp(buf, "ASCII") == 0 ||
	    strcasecmp(buf, "UTF-8") == 0)
		return NULL;
	return buf;
}

/* Text as UTF-8: one with a UTF-16 or UTF-32 byte order mark converted,
 * a UTF-8 BOM dropped, malformed bytes and NUL as U+FFFD. */
int
doc_read_plain(const char *data, size_t len, const struct doc_limits *lim,
    struct doc *d, char *err, size_t errsz)
{
	struct dbuf	 sb = { 0 }, u = { 0 };
	const char	*cs;
	char		 cs_buf[64];
	size_t		 bom;
	int		 rc;

	if ((cs = bom_charset(data, len, &bom)) != NULL) {
		if ((rc = doc_to_utf8(cs, data + bom, len - bom, lim->max_unpacked,
		    &u, err, errsz)) != 0)
			goto out;
		/* NUL and anything iconv let through made safe */
		doc_add_utf8(&sb, u.p ? u.p : "", u.len);
	} else if ((cs = sniff_charset(data, len, cs_buf, sizeof(cs_buf))) !=
	    NULL) {
		if ((rc = doc_to_utf8(cs, data, len, lim->max_unpacked, &u,
		    err, errsz)) != 0)
			goto out;
		doc_add_utf8(&sb, u.p ? u.p : "", u.len);
	} else {
		skip_bom(&data, &len);
		doc_add_utf8(&sb, data, len);
	}
	rc = doc_take(&sb, err, errsz, &d->text);
out:
	dbuf_free(&u);
	dbuf_free(&sb);
	return rc;
}

int
doc_read_json(const char *data, size_t len, const struct doc_limits *lim,
    struct doc *d, char *err, size_t errsz)
{
	json_error_t	 je;
	json_t		*v = NULL;
	struct doc	 plain = { 0 };
	size_t		 bom;
	int		 rc = DOC_EDAMAGED;

	skip_bom(&data, &len);
	if (bom_charset(data, len, &bom) != NULL) {
		/* JSON in UTF-16 or UTF-32: read as text first */
		if ((rc = doc_read_plain(data, len, lim, &plain, err,
		    errsz)) != 0)
			goto out;
		data = plain.text;
		len = strlen(plain.text);
		rc = DOC_EDAMAGED;
	}
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
	doc_release(&plain);
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
