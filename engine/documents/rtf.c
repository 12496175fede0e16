/*
 * rtf.c — the text of RTF, as an Outlook message's body holds it once its
 * LZFu is unpacked (msg.c). Debian has no C library that reads RTF's text
 * (unrtf is a program), and a body's RTF is plain: so a small reader of
 * its tokens (RTF 1.9.1: groups, control words with their parameter,
 * control symbols, \'hh, \uN with \ucN). Destinations that hold no body
 * text (font and colour tables, styles, info, pictures, objects, fields'
 * instructions, every \* one) are skipped; \par and \line are new lines,
 * \tab a tab; bytes of \'hh are in the \ansicpg code page (1252 when
 * none). A body that encapsulates HTML (\fromhtml1) keeps its text and
 * drops the \htmlrtf parts, which only render the HTML in RTF.
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include <libpst/lzfu.h>

#include "engine/documents/internal.h"

#define RTF_MAX_DEPTH	256

static const char *const rtf_skip[] = { "fonttbl", "colortbl",
	"stylesheet", "info", "pict", "object", "fldinst", "header", "footer",
	"headerl", "headerr", "footerl", "footerr", "listtable",
	"listoverridetable", "revtbl", "rsidtbl", "generator", "xmlnstbl",
	"themedata", "colorschememapping", "datastore", "latentstyles",
	"filetbl", "bkmkstart", "bkmkend", NULL };

struct rtf {
	struct dbuf	*sb;
	char		 bytes[256];	/* \'hh and 8-bit text, not yet UTF-8 */
	size_t		 nbytes;
	char		 cs[32];
	size_t		 max;
};

static void
rtf_flush(struct rtf *r)
{
	char err[64];

	if (r->nbytes == 0)
		return;
	if (doc_to_utf8(r->cs, r->bytes, r->nbytes, r->max, r->sb, err,
	    sizeof(err)) != 0)
		doc_add_utf8(r->sb, r->bytes, r->nbytes);
	r->nbytes = 0;
}

static void
rtf_byte(struct rtf *r, char c)
{
	if (r->nbytes == sizeof(r->bytes))
		rtf_flush(r);
	r->bytes[r->nbytes++] = c;
}

static void
rtf_unicode(struct rtf *r, long u)
{
	char	b[4];
	size_t	n;

	rtf_flush(r);
	if (u < 0)
		u += 65536;
	if (u <= 0 || u > 0x10ffff || (u >= 0xd800 && u <= 0xdfff))
		u = 0xfffd;
	if (u < 0x80) {
		b[0] = (char)u;
		n = 1;
	} else if (u < 0x800) {
		b[0] = (char)(0xc0 | (u >> 6));
		b[1] = (char)(0x80 | (u & 0x3f));
		n = 2;
	} else if (u < 0x10000) {
		b[0] = (char)(0xe0 | (u >> 12));
		b[1] = (char)(0x80 | ((u >> 6) & 0x3f));
		b[2] = (char)(0x80 | (u & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | (u >> 18));
		b[1] = (char)(0x80 | ((u >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((u >> 6) & 0x3f));
		b[3] = (char)(0x80 | (u & 0x3f));
		n = 4;
	}
	dbuf_add(r->sb, b, n);
}

static int
rtf_hex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
doc_rtf_text(const char *p, size_t len, size_t max, struct dbuf *sb,
    char *err, size_t errsz)
{
	struct rtf	 r;
	/* per group: skipped, \uc count; htmlrtf is a state of its own */
	unsigned char	 skip[RTF_MAX_DEPTH], uc[RTF_MAX_DEPTH];
	char		 word[33];
	size_t		 i = 0, w, k;
	long		 param, pending = 0;
	int		 depth = 0, hasparam, neg, htmlrtf = 0, star = 0, h1, h2;

	memset(&r, 0, sizeof(r));
	r.sb = sb;
	r.max = max;
	snprintf(r.cs, sizeof(r.cs), "WINDOWS-1252");
	skip[0] = 0;
	uc[0] = 1;
	if (len < 5 || memcmp(p, "{\\rtf", 5) != 0) {
		snprintf(err, errsz, "the message's RTF body is not RTF");
		return DOC_EDAMAGED;
	}
	while (i < len && sb->err == DBUF_OK) {
		char c = p[i++];

		if (c == '{') {
			if (depth + 1 >= RTF_MAX_DEPTH) {
				snprintf(err, errsz, "the message's RTF body "
				    "nests deeper than %d", RTF_MAX_DEPTH);
				return DOC_ELIMIT;
			}
			depth++;
			skip[depth] = skip[depth - 1];
			uc[depth] = uc[depth - 1];
			star = 0;
			continue;
		}
		if (c == '}') {
			if (depth > 0)
				depth--;
			star = 0;
			continue;
		}
		if (c == '\r' || c == '\n')
			continue;
		if (c != '\\') {
			if (pending > 0) {
				pending--;
				continue;
			}
			if (!skip[depth] && !htmlrtf)
				rtf_byte(&r, c);
			continue;
		}
		if (i >= len)
			break;
		c = p[i];
		if (c == '\'') {	/* \'hh */
			h1 = i + 1 < len ? rtf_hex((unsigned char)p[i + 1]) : -1;
			h2 = i + 2 < len ? rtf_hex((unsigned char)p[i + 2]) : -1;
			i += 3;
			if (h1 < 0 || h2 < 0)
				continue;
			if (pending > 0) {
				pending--;
				continue;
			}
			if (!skip[depth] && !htmlrtf)
				rtf_byte(&r, (char)(h1 * 16 + h2));
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
			i++;	/* a control symbol */
			if (c == '*') {
				star = 1;
				skip[depth] = 1;
				continue;
			}
			if (skip[depth] || htmlrtf)
				continue;
			if (pending > 0) {
				pending--;
				continue;
			}
			if (c == '\\' || c == '{' || c == '}')
				rtf_byte(&r, c);
			else if (c == '~')
				rtf_unicode(&r, 0xa0);
			else if (c == '_')
				rtf_byte(&r, '-');
			else if (c == '\n' || c == '\r') {
				rtf_flush(&r);
				dbuf_addstr(sb, "\n");
			}
			continue;
		}
		for (w = 0; i < len && w < sizeof(word) - 1 && ((p[i] >= 'a' &&
		    p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z')); i++)
			word[w++] = p[i];
		word[w] = '\0';
		while (i < len && ((p[i] >= 'a' && p[i] <= 'z') || (p[i] >=
		    'A' && p[i] <= 'Z')))
			i++;	/* a word too long: its tail */
		neg = i < len && p[i] == '-';
		if (neg)
			i++;
		hasparam = i < len && p[i] >= '0' && p[i] <= '9';
		for (param = 0; i < len && p[i] >= '0' && p[i] <= '9'; i++)
			if (param < 100000000)
				param = param * 10 + (p[i] - '0');
		if (neg)
			param = -param;
		if (i < len && p[i] == ' ')
			i++;
		if (strcmp(word, "htmlrtf") == 0) {
			htmlrtf = !hasparam || param != 0;
			continue;
		}
		if (star) {	/* \*\word: a destination to skip */
			star = 0;
			continue;
		}
		for (k = 0; rtf_skip[k] != NULL; k++)
			if (strcmp(word, rtf_skip[k]) == 0)
				skip[depth] = 1;
		if (strcmp(word, "ansicpg") == 0 && hasparam && param > 0 &&
		    param < 100000) {
			rtf_flush(&r);
			snprintf(r.cs, sizeof(r.cs), "CP%ld", param);
		} else if (strcmp(word, "uc") == 0 && hasparam && param >= 0 &&
		    param < 16)
			uc[depth] = (unsigned char)param;
		if (skip[depth] || htmlrtf)
			continue;
		if (strcmp(word, "u") == 0 && hasparam) {
			rtf_unicode(&r, param);
			pending = uc[depth];
		} else if (strcmp(word, "par") == 0 || strcmp(word, "line") ==
		    0 || strcmp(word, "sect") == 0 || strcmp(word, "row") == 0) {
			rtf_flush(&r);
			dbuf_addstr(sb, "\n");
		} else if (strcmp(word, "tab") == 0 || strcmp(word, "cell") ==
		    0) {
			rtf_flush(&r);
			dbuf_addstr(sb, "\t");
		} else if (strcmp(word, "emdash") == 0)
			rtf_unicode(&r, 0x2014);
		else if (strcmp(word, "endash") == 0)
			rtf_unicode(&r, 0x2013);
		else if (strcmp(word, "bullet") == 0)
			rtf_unicode(&r, 0x2022);
		else if (strcmp(word, "lquote") == 0)
			rtf_unicode(&r, 0x2018);
		else if (strcmp(word, "rquote") == 0)
			rtf_unicode(&r, 0x2019);
		else if (strcmp(word, "ldblquote") == 0)
			rtf_unicode(&r, 0x201c);
		else if (strcmp(word, "rdblquote") == 0)
			rtf_unicode(&r, 0x201d);
	}
	rtf_flush(&r);
	if (sb->err == DBUF_ETOOBIG) {
		snprintf(err, errsz, "the message's text is larger than %zu "
		    "bytes (documents.max_unpacked)", max);
		return DOC_ELIMIT;
	}
	return 0;
}

/* ====== Compressed RTF (MS-OXRTFCP) ====== */

int
doc_rtf_compressed_text(const char *data, size_t n,
    const struct doc_limits *lim, struct dbuf *sb, char *err, size_t errsz)
{
	char	*rtf;
	size_t	 rawsize, rlen;
	int	 rc;

	/* the header: compressed size, raw size, "LZFu" or "MELA", CRC */
	rawsize = n >= 16 ? ((size_t)(unsigned char)data[4] |
	    (size_t)(unsigned char)data[5] << 8 |
	    (size_t)(unsigned char)data[6] << 16 |
	    (size_t)(unsigned char)data[7] << 24) : 0;
	if (n < 16 || n > UINT32_MAX || (memcmp(data + 8, "LZFu", 4) != 0 &&
	    memcmp(data + 8, "MELA", 4) != 0))
		return 0;	/* not compressed RTF: no body */
	if (rawsize > lim->max_unpacked || (lim->max_ratio > 0 && rawsize /
	    lim->max_ratio > n)) {
		snprintf(err, errsz, "the message's RTF body unpacks to more "
		    "than %zu bytes (documents.max_unpacked, "
		    "documents.max_ratio)", lim->max_unpacked);
		return DOC_ELIMIT;
	}
	if (memcmp(data + 8, "MELA", 4) == 0) {	/* stored uncompressed */
		rlen = rawsize < n - 16 ? rawsize : n - 16;
		rtf = malloc(rlen + 1);
		if (rtf != NULL)
			memcpy(rtf, data + 16, rlen);
	} else
		rtf = pst_lzfu_decompress((char *)data, (uint32_t)n, &rlen);
	if (rtf == NULL) {
		snprintf(err, errsz, "the message's RTF body is damaged");
		return DOC_EDAMAGED;
	}
	if (rlen > rawsize)
		rlen = rawsize;
	rc = doc_rtf_text(rtf, rlen, lim->max_unpacked, sb, err, errsz);
	free(rtf);
	return rc;
}
