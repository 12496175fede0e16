/*
 * internal.h — what the readers of engine/documents/ share: their
 * signature, the text helpers, and the safe XML parse. Not for use
 * outside this folder.
 */
#ifndef FLOWCGI_DOCUMENTS_INTERNAL_H
#define FLOWCGI_DOCUMENTS_INTERNAL_H

#include <stddef.h>

#include <libxml/tree.h>

#include "conf/dbuf.h"
#include "engine/documents/documents.h"

/*
 * A reader: len bytes in, d->text (and parts) out. 0, or a DOC_E* code
 * with err filled. On failure the caller releases whatever is in *d.
 */
typedef int doc_reader_fn(const char *data, size_t len,
    const struct doc_limits *lim, struct doc *d, char *err, size_t errsz);

doc_reader_fn	doc_read_plain, doc_read_json, doc_read_csv, doc_read_html,
		doc_read_xml, doc_read_docx, doc_read_pdf, doc_read_xlsx;

/* Appends n bytes as valid UTF-8 without NUL (malformed bytes, and NUL,
 * as U+FFFD). */
void	doc_add_utf8(struct dbuf *sb, const char *p, size_t n);

/* *out = the buffer's text (malloc'd), or DOC_ENOMEM with err. Frees sb's
 * storage either way. */
int	doc_take(struct dbuf *sb, char *err, size_t errsz, char **out);

/* Trims trailing blanks of lines, squeezes 3+ newlines to 2, trims the
 * ends. In place. */
void	doc_tidy(char *s);

/* Parses XML with no network, no entity expansion and no huge mode; NULL
 * with err (naming what) when it is not well-formed. Caller xmlFreeDoc's. */
xmlDocPtr doc_xml_parse(const char *data, size_t len, const char *what,
	    char *err, size_t errsz);

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
