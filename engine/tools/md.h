/*
 * md.h — what the md_exporter provider's files share (private to
 * engine/tools/): md_markdown.c reads the Markdown (cmark-gfm, with the
 * GFM table and strikethrough extensions); md_exporter.c is the provider
 * and writes the text formats;
 * md_office.c writes the Office Open XML packages (DOCX, XLSX, PPTX) as
 * zips through libarchive; md_pdf.c lays the document out with Pango and
 * writes a PDF through cairo.
 *
 * Every writer appends to a struct dbuf whose max is export.max_output:
 * a writer that would pass it returns ENGINE_ELIMIT with err naming the
 * setting. Errors: 0 or a negative ENGINE_E* code with err (ENGINE_ERRMAX
 * bytes) saying why.
 */
#ifndef FLOWCGI_ENGINE_TOOLS_MD_H
#define FLOWCGI_ENGINE_TOOLS_MD_H

#include <cmark-gfm.h>
#include <jansson.h>

#include "conf/dbuf.h"

/* Deepest nesting of blocks and inlines a writer follows; deeper content
 * is written as plain text of its parent. */
#define MD_MAX_DEPTH	64

/*
 * Parses Markdown text (n bytes) with the GFM table and strikethrough
 * extensions: *out is the document (cmark_node_free). Returns 0 or
 * ENGINE_ENOMEM.
 */
int	md_parse(const char *text, size_t n, cmark_node **out);

/* Registers cmark-gfm's core extensions (table, strikethrough) once per
 * process, before a renderer looks them up (md_parse does it too). */
void	md_extensions_register(void);

/* 1 when node is a GFM table, row or cell (md_markdown.c). */
int	md_is_table(cmark_node *node);
int	md_is_table_row(cmark_node *node);
int	md_is_table_cell(cmark_node *node);
int	md_is_strike(cmark_node *node);

/* Appends the plain text of node's inlines (line breaks as spaces). */
void	md_plain_text(cmark_node *node, struct dbuf *out);

/* Appends s (n bytes) escaped for XML text and attribute values, with
 * the characters XML 1.0 forbids dropped. */
void	md_xml_escape(struct dbuf *out, const char *s, size_t n);
/* Appends s (n bytes) without the characters XML 1.0 forbids. */
void	md_xml_clean(struct dbuf *out, const char *s, size_t n);

/*
 * The tables of doc as the plugin reads them (pandas.read_html over the
 * HTML): [{name: the i-th heading's text (30 characters) or null, header:
 * [..], rows: [[..], ..]}]; cells are strings, rows padded to the header's
 * width. New reference, NULL when out of memory.
 */
json_t	*md_tables(cmark_node *doc);

/*
 * Writes the zip of parts into out: a NULL-ended array of names and of
 * NUL-terminated contents, in that order (md_office.c). Deterministic:
 * fixed times. Returns 0, ENGINE_ELIMIT (out's max) or ENGINE_ENOMEM.
 */
struct md_part {
	const char	*name;
	const char	*data;
	size_t		 len;
};
int	md_zip(const struct md_part *parts, size_t nparts, struct dbuf *out,
	    char *err);

/* The DOCX of doc (md_office.c). */
int	md_docx(cmark_node *doc, struct dbuf *out, char *err);
/* The XLSX of tables (md_tables' shape); force_text: every cell a string,
 * else numbers are numbers (md_office.c). */
int	md_xlsx(const json_t *tables, int force_text, struct dbuf *out,
	    char *err);
/* The PPTX of doc: a slide per heading of the slide level, at most
 * max_slides (md_office.c). */
int	md_pptx(cmark_node *doc, int max_slides, struct dbuf *out, char *err);
/* The PDF of doc, A4, at most max_pages pages (md_pdf.c). */
int	md_pdf(cmark_node *doc, int max_pages, struct dbuf *out, char *err);
/*
 * The same pages as PNG images, MD_PNG_ZOOM times 72 dpi (the plugin's
 * zoom 2: 1190 x 1683 pixels): pages[i] (max_pages initialised buffers,
 * the caller's) gets page i; *npages how many (md_pdf.c).
 */
#define MD_PNG_ZOOM	2
int	md_png(cmark_node *doc, int max_pages, struct dbuf *pages, int *npages,
	    char *err);

#endif
