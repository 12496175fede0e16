/*
 * internal.h — what the readers of engine/documents/ share: their
 * signature, the text helpers, and the safe XML parse. Not for use
 * outside this folder.
 */
#ifndef FLOWCGI_DOCUMENTS_INTERNAL_H
#define FLOWCGI_DOCUMENTS_INTERNAL_H

#include <stddef.h>

#include <libxml/tree.h>
#include <libxml/xmlreader.h>

#include "conf/dbuf.h"
#include "engine/documents/documents.h"

/*
 * A reader: len bytes in, d->text (and parts) out. 0, or a DOC_E* code
 * with err filled. On failure the caller releases whatever is in *d.
 */
typedef int doc_reader_fn(const char *data, size_t len,
    const struct doc_limits *lim, struct doc *d, char *err, size_t errsz);

doc_reader_fn	doc_read_plain, doc_read_json, doc_read_csv, doc_read_html,
		doc_read_xml, doc_read_docx, doc_read_pdf, doc_read_xlsx,
		doc_read_pptx, doc_read_odf, doc_read_epub, doc_read_eml,
		doc_read_msg, doc_read_xls;

/* fn run in a child process (child.c), for a library that is not safe on
 * hostile files; what names the format in errors ("xls workbook"), unit
 * the parts'. As fn, with the child's crash a DOC_EDAMAGED. */
int	doc_read_in_child(doc_reader_fn *fn, const char *what,
	    const char *unit, const char *data, size_t len,
	    const struct doc_limits *lim, struct doc *d, char *err,
	    size_t errsz);

/* 0, or DOC_ESTOPPED with err when lim's stop says so or its timeout has
 * passed since doc_extract began. Readers ask between pages. */
int	doc_check_stop(const struct doc_limits *lim, char *err, size_t errsz);

/* Appends text as part unit of d (a copy) and to all, after sep when all
 * holds something already. 0, or a DOC_E* code with err. */
int	doc_add_part(struct doc *d, const char *unit, const char *text,
	    struct dbuf *all, const char *sep, char *err, size_t errsz);

/* The text of an HTML (or XHTML) document, as the html reader gives it
 * (body_only: without <head>, its title): 0 with *out malloc'd, or a
 * DOC_E* code with err. */
int	doc_html_text(const char *data, size_t len, int body_only, char *err,
	    size_t errsz, char **out);

/* ====== Zips: the entries a reader wants, unpacked in one pass ====== */

struct archive;

struct doc_zip_ent {
	char	*name;
	char	*data;	/* NUL-terminated, len bytes */
	size_t	 len;
};

struct doc_zip {
	struct doc_zip_ent	*ents;
	size_t			 n;
};

/* Unpacks every entry whose name want() accepts, within lim (the sum of
 * them at most lim->max_unpacked and lim->max_ratio times len). what names
 * the format in errors. 0, or a DOC_E* code with err; doc_zip_free either
 * way. */
int	doc_zip_read(const char *data, size_t len,
	    const struct doc_limits *lim, const char *what,
	    int (*want)(const char *name), struct doc_zip *z, char *err,
	    size_t errsz);
const struct doc_zip_ent *doc_zip_find(const struct doc_zip *z,
	    const char *name);
void	doc_zip_free(struct doc_zip *z);

/* One zip entry read as it unpacks, by libxml2's streaming reader
 * (xmlTextReader: no tree of the whole entry), within lim->max_unpacked
 * and lim->max_ratio times the file's size. */
struct doc_zip_xml {
	xmlTextReaderPtr	 reader;
	struct archive		*a;
	const char		*name;
	size_t			 max, used;
	int			 toobig, damaged;
};

/* Opens entry name (what names the format in errors) with zx->reader
 * before its first node. 0, or a DOC_E* code with err (an absent entry:
 * DOC_EDAMAGED, "has no <name>"); doc_zip_xml_close either way. */
int	doc_zip_xml_open(const char *data, size_t len,
	    const struct doc_limits *lim, const char *what, const char *name,
	    struct doc_zip_xml *zx, char *err, size_t errsz);
/* The error after xmlTextReaderRead failed: the limit, the unpacking, or
 * not well-formed XML. A DOC_E* code with err. */
int	doc_zip_xml_error(const struct doc_zip_xml *zx, char *err,
	    size_t errsz);
void	doc_zip_xml_close(struct doc_zip_xml *zx);

/* The zip path of a relationship's target: absolute ("/ppt/x.xml") or
 * relative to the folder of part from ("ppt/slides/slide1.xml"), with ".."
 * resolved. 0, or -1 when it leaves the zip or is too long. */
int	doc_zip_resolve(const char *from, const char *target, char *out,
	    size_t outsz);

/* The attribute of n of local name name in any namespace (or none),
 * malloc'd, or NULL. */
char	*doc_attr(const xmlNode *n, const char *name);

/* ====== Sheets as Dify's pandas shows them (xlsx.c; xls.c too) ====== */

enum xl_kind { XL_NONE, XL_INT, XL_FLOAT, XL_STR, XL_BOOL, XL_DATE };

struct xl_cell {
	enum xl_kind	 kind;
	double		 num;
	char		*str;	/* XL_STR, XL_DATE (formatted) */
};

struct xl_row {
	struct xl_cell	*cells;
	size_t		 n;
	unsigned long	 num;	/* 1-based row number in the sheet */
};

/* rows (n of them, at most width cells) as pandas' Markdown into sb. */
int	xl_sheet_md(const struct xl_row *rows, size_t n, size_t width,
	    struct dbuf *sb);
void	xl_rows_free(struct xl_row *rows, size_t n);
/* 1 when pandas reads s as missing ("", "NA", "N/A", ...). */
int	xl_na(const char *s);
/* An Excel serial date as pandas prints it (malloc'd), or NULL. */
char	*xl_date(double serial, int date1904, int time_only);

/* Appends n bytes as valid UTF-8 without NUL (malformed bytes, and NUL,
 * as U+FFFD). */
void	doc_add_utf8(struct dbuf *sb, const char *p, size_t n);

/* *out = the buffer's text (malloc'd), or DOC_ENOMEM with err. Frees sb's
 * storage either way. */
int	doc_take(struct dbuf *sb, char *err, size_t errsz, char **out);

/* The same, tidied (doc_tidy) and as valid UTF-8 (doc_add_utf8): the
 * readers' last step. Frees sb's storage either way. */
int	doc_take_tidy(struct dbuf *sb, char *err, size_t errsz, char **out);

/* len bytes in charset cs to UTF-8 with iconv into sb, at most max bytes
 * out; an invalid or cut sequence as U+FFFD. 0, or a DOC_E* code with
 * err. */
int	doc_to_utf8(const char *cs, const char *data, size_t len, size_t max,
	    struct dbuf *sb, char *err, size_t errsz);

/* Trims trailing blanks of lines, squeezes 3+ newlines to 2, trims the
 * ends. In place. */
void	doc_tidy(char *s);

/* Parses XML with no network, no entity expansion and no huge mode; NULL
 * with err (naming what) when it is not well-formed. Caller xmlFreeDoc's. */
xmlDocPtr doc_xml_parse(const char *data, size_t len, const char *what,
	    char *err, size_t errsz);

/* The text of RTF (rtf.c): groups and control words dropped, \\par as a
 * new line, \\'hh in the \\ansicpg code page, \\uN; an Outlook body
 * encapsulating HTML (\\fromhtml) without its \\htmlrtf parts. Appended
 * to sb, at most max bytes. 0, or a DOC_E* code with err. */
int	doc_rtf_text(const char *rtf, size_t len, size_t max, struct dbuf *sb,
	    char *err, size_t errsz);

/* The text of an Outlook body's compressed RTF (PidTagRtfCompressed: a
 * 16-byte header, then LZFu, unpacked by libpst's pst_lzfu_decompress; or
 * MELA, stored), its raw size within lim. Nothing when it is neither. 0,
 * or a DOC_E* code with err. */
int	doc_rtf_compressed_text(const char *data, size_t n,
	    const struct doc_limits *lim, struct dbuf *sb, char *err,
	    size_t errsz);

/* The text of a WordprocessingML document.xml: 0 with *out malloc'd, or
 * a DOC_E* code with err. */
int	doc_docx_xml_text(const char *xml, size_t len, char *err, size_t errsz,
	    char **out);

/* Entry name of a zip (what names the format for errors), unpacked into
 * *out (malloc'd, *outlen bytes) within lim->max_unpacked and
 * lim->max_ratio times len. 0, or a DOC_E* code with err. */
int	doc_zip_entry(const char *data, size_t len,
	    const struct doc_limits *lim, const char *what, const char *name,
	    char *err, size_t errsz, char **out, size_t *outlen);

/* Case-insensitive test of an element's local name. */
int	doc_name_is(const xmlNode *n, const char *name);

#endif
