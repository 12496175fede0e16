/*
 * document_extractor.c — the document-extractor node: the text of a file,
 * or of each file of an array (then `text` is an array of strings), after
 * Dify's nodes/document_extractor/node.py.
 *
 * Formats, chosen by the file's extension (else its MIME type):
 *   txt, md, markdown, yaml, yml  the text itself (UTF-8; a BOM dropped,
 *                                 malformed bytes as U+FFFD)
 *   json                          parsed, re-written indented by 2
 *   csv                           a Markdown table, as Dify makes it
 *   html, htm                     libxml2's HTML parser: the text, without
 *                                 scripts and styles, blocks on their lines
 *   xml                           libxml2 (no network, no huge mode): the
 *                                 text of each element, one per line
 *   docx                          word/document.xml read from the zip with
 *                                 libarchive: paragraphs one per line,
 *                                 tables as Markdown tables
 * Anything else (pdf, doc, xlsx, pptx, images...) is refused with an error
 * that names the extension. Limits: DOC_MAX_INPUT bytes of one file,
 * DOCX_MAX_XML bytes of the unpacked document.xml, DOCX_MAX_ENTRIES zip
 * entries looked at.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>
#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "engine/nodes/nodes.h"

#define DOC_MAX_INPUT		((size_t)50 << 20)
#define DOCX_MAX_XML		((size_t)64 << 20)
#define DOCX_MAX_ENTRIES	10000

/* ====== Text helpers ====== */

/* Appends n bytes as valid UTF-8 (malformed bytes as U+FFFD). */
static void
sb_utf8(struct dbuf *sb, const char *p, size_t n)
{
	size_t i = 0, run, l;

	while (i < n) {
		for (run = i; run < n && (unsigned char)p[run] < 0x80; run++)
			;
		dbuf_add(sb, p + i, run - i);
		if ((i = run) >= n)
			break;
		tpl_add_utf8(sb, tpl_utf8_next(p + i, n - i, &l));
		i += l;
	}
}

static int
take(struct dbuf *sb, char *err, size_t errsz, char **out)
{
	if ((*out = dbuf_take(sb, NULL)) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	return 0;
}

/* Trims trailing blanks of lines, squeezes 3+ newlines to 2, trims the
 * ends. In place. */
static void
tidy(char *s)
{
	char	*r = s, *w = s, *lineend;
	int	 nl = 0;

	while (*r == '\n' || *r == ' ' || *r == '\t' || *r == '\r')
		r++;
	while (*r != '\0') {
		if (*r == '\n') {
			/* drop blanks before the newline */
			lineend = w;
			while (lineend > s && (lineend[-1] == ' ' ||
			    lineend[-1] == '\t' || lineend[-1] == '\r'))
				lineend--;
			w = lineend;
			if (++nl <= 2)
				*w++ = '\n';
			r++;
			continue;
		}
		nl = 0;
		*w++ = *r++;
	}
	while (w > s && isspace((unsigned char)w[-1]))
		w--;
	*w = '\0';
}

/* ====== Plain formats ====== */

static int
text_plain(const char *data, size_t len, char *err, size_t errsz,
    char **out)
{
	struct dbuf sb = { 0 };

	if (len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0) {
		data += 3;
		len -= 3;
	}
	sb_utf8(&sb, data, len);
	return take(&sb, err, errsz, out);
}

static int
text_json(const char *data, size_t len, char *err, size_t errsz,
    char **out)
{
	json_error_t	 je;
	json_t		*v;
	int		 rc = -1;

	if (len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0) {
		data += 3;
		len -= 3;
	}
	if ((v = json_loadb(data, len, JSON_DECODE_ANY | JSON_ALLOW_NUL,
	    &je)) == NULL) {
		snprintf(err, errsz, "Failed to decode JSON file: %s (line "
		    "%d)", je.text, je.line);
		goto out;
	}
	if ((*out = json_dumps(v, JSON_INDENT(2) | JSON_ENCODE_ANY)) == NULL) {
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	rc = 0;
out:
	json_decref(v);
	return rc;
}

/* Python's csv.reader rows -> Dify's Markdown table. */
static int
text_csv(const char *data, size_t len, char *err, size_t errsz, char **out)
{
	struct dbuf	 sb = { 0 }, cell = { 0 };
	char		*clean = NULL;
	size_t		 i, n, ncols = 0, col = 0, row = 0, k;
	int		 rc = -1, q = 0, any = 0;

	if (text_plain(data, len, err, errsz, &clean) != 0)
		goto out;
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
	if (take(&sb, err, errsz, out) != 0)
		goto out;
	/* Dify strips the table */
	n = strlen(*out);
	while (n > 0 && isspace((unsigned char)(*out)[n - 1]))
		(*out)[--n] = '\0';
	rc = 0;
out:
	dbuf_free(&sb);
	dbuf_free(&cell);
	free(clean);
	return rc;
}

/* ====== HTML and XML (libxml2) ====== */

static int
name_is(const xmlNode *n, const char *name)
{
	return n->name != NULL && strcasecmp((const char *)n->name, name) ==
	    0;
}

static int
html_block(const xmlNode *n)
{
	static const char *const blocks[] = { "p", "div", "br", "li", "ul",
		"ol", "tr", "table", "h1", "h2", "h3", "h4", "h5", "h6",
		"section", "article", "header", "footer", "blockquote", "pre",
		"title", "dd", "dt", "dl", "hr", "form", "nav", "aside",
		"main", "figure", "figcaption", "address", NULL };
	size_t i;

	for (i = 0; blocks[i] != NULL; i++)
		if (name_is(n, blocks[i]))
			return 1;
	return 0;
}

static void
html_walk(const xmlNode *n, struct dbuf *sb, int depth)
{
	const xmlNode *ch;

	for (; n != NULL; n = n->next) {
		if (n->type == XML_TEXT_NODE || n->type ==
		    XML_CDATA_SECTION_NODE) {
			if (n->content != NULL)
				dbuf_addstr(sb, (const char *)n->content);
			continue;
		}
		if (n->type != XML_ELEMENT_NODE || depth > 512)
			continue;
		if (name_is(n, "script") || name_is(n, "style") ||
		    name_is(n, "noscript") || name_is(n, "template"))
			continue;
		ch = n->children;
		if (html_block(n))
			dbuf_addstr(sb, "\n");
		else if (name_is(n, "td") || name_is(n, "th"))
			dbuf_addstr(sb, " ");
		html_walk(ch, sb, depth + 1);
		if (html_block(n))
			dbuf_addstr(sb, "\n");
	}
}

static int
text_html(const char *data, size_t len, char *err, size_t errsz,
    char **out)
{
	htmlDocPtr	 doc = NULL;
	struct dbuf	 sb = { 0 };
	char		*raw = NULL;
	int		 rc = -1;

	if (len > (size_t)INT32_MAX) {
		snprintf(err, errsz, "the document is too large");
		goto out;
	}
	xmlInitParser();
	doc = htmlReadMemory(data, (int)len, NULL, NULL, HTML_PARSE_NONET |
	    HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING);
	if (doc != NULL)
		html_walk(xmlDocGetRootElement(doc), &sb, 0);
	if (take(&sb, err, errsz, &raw) != 0)
		goto out;
	tidy(raw);
	/* libxml2 hands out UTF-8; make sure of it */
	if (text_plain(raw, strlen(raw), err, errsz, out) != 0)
		goto out;
	rc = 0;
out:
	if (doc != NULL)
		xmlFreeDoc(doc);
	free(raw);
	return rc;
}

static void
xml_walk(const xmlNode *n, struct dbuf *sb, int depth)
{
	const char	*s;
	size_t		 l;

	for (; n != NULL; n = n->next) {
		if ((n->type == XML_TEXT_NODE || n->type ==
		    XML_CDATA_SECTION_NODE) && n->content != NULL) {
			s = (const char *)n->content;
			while (isspace((unsigned char)*s))
				s++;
			l = strlen(s);
			while (l > 0 && isspace((unsigned char)s[l - 1]))
				l--;
			if (l > 0) {
				dbuf_add(sb, s, l);
				dbuf_addstr(sb, "\n");
			}
		} else if (n->type == XML_ELEMENT_NODE && depth < 512)
			xml_walk(n->children, sb, depth + 1);
	}
}

/* Parses XML safely: no network, no entity expansion, no huge mode. */
static xmlDocPtr
xml_parse(const char *data, size_t len, const char *what, char *err,
    size_t errsz)
{
	xmlDocPtr doc;

	if (len > (size_t)INT32_MAX) {
		snprintf(err, errsz, "%s is too large", what);
		return NULL;
	}
	xmlInitParser();
	doc = xmlReadMemory(data, (int)len, NULL, NULL, XML_PARSE_NONET |
	    XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (doc == NULL)
		snprintf(err, errsz, "%s is not well-formed XML", what);
	return doc;
}

static int
text_xml(const char *data, size_t len, char *err, size_t errsz, char **out)
{
	xmlDocPtr	 doc;
	struct dbuf	 sb = { 0 };
	char		*raw = NULL;
	int		 rc = -1;

	if ((doc = xml_parse(data, len, "the document", err, errsz)) == NULL)
		goto out;
	xml_walk(xmlDocGetRootElement(doc), &sb, 0);
	if (take(&sb, err, errsz, &raw) != 0)
		goto out;
	tidy(raw);
	rc = text_plain(raw, strlen(raw), err, errsz, out);
out:
	if (doc != NULL)
		xmlFreeDoc(doc);
	free(raw);
	return rc;
}

/* ====== docx ====== */

/* The text of a run container (a paragraph, hyperlink, insertion...). */
static void
docx_runs(const xmlNode *n, struct dbuf *sb, int depth)
{
	for (; n != NULL; n = n->next) {
		if (n->type != XML_ELEMENT_NODE || depth > 256)
			continue;
		if (name_is(n, "t")) {
			xmlChar *t = xmlNodeGetContent(n);

			if (t != NULL)
				dbuf_addstr(sb, (const char *)t);
			xmlFree(t);
		} else if (name_is(n, "tab"))
			dbuf_addstr(sb, "\t");
		else if (name_is(n, "br") || name_is(n, "cr"))
			dbuf_addstr(sb, "\n");
		else if (name_is(n, "del") || name_is(n, "drawing") ||
		    name_is(n, "pict") || name_is(n, "instrText") ||
		    name_is(n, "txbxContent") || name_is(n, "pPr") ||
		    name_is(n, "rPr"))
			continue;
		else
			docx_runs(n->children, sb, depth + 1);
	}
}

static void docx_blocks(const xmlNode *n, struct dbuf *sb, int depth,
    int *first, const char *sep);

/* A table as a Markdown table; a cell's paragraphs joined by spaces. */
static void
docx_table(const xmlNode *tbl, struct dbuf *sb, int depth)
{
	const xmlNode	*tr, *tc;
	size_t		 ncols, k, row = 0;
	int		 first;

	for (tr = tbl->children; tr != NULL; tr = tr->next) {
		if (tr->type != XML_ELEMENT_NODE || !name_is(tr, "tr"))
			continue;
		ncols = 0;
		dbuf_addstr(sb, "|");
		for (tc = tr->children; tc != NULL; tc = tc->next) {
			if (tc->type != XML_ELEMENT_NODE || !name_is(tc, "tc"))
				continue;
			dbuf_addstr(sb, " ");
			first = 1;
			docx_blocks(tc->children, sb, depth + 1, &first, " ");
			dbuf_addstr(sb, " |");
			ncols++;
		}
		dbuf_addstr(sb, "\n");
		if (row++ == 0) {
			dbuf_addstr(sb, "|");
			for (k = 0; k < ncols; k++)
				dbuf_addstr(sb, " --- |");
			dbuf_addstr(sb, "\n");
		}
	}
}

/* Block content in document order: paragraphs and tables, with content
 * controls (sdt) looked into. Items are separated by sep. */
static void
docx_blocks(const xmlNode *n, struct dbuf *sb, int depth, int *first,
    const char *sep)
{
	for (; n != NULL; n = n->next) {
		if (n->type != XML_ELEMENT_NODE || depth > 256)
			continue;
		if (name_is(n, "p")) {
			if (!*first)
				dbuf_addstr(sb, sep);
			*first = 0;
			docx_runs(n->children, sb, depth + 1);
		} else if (name_is(n, "tbl")) {
			if (!*first)
				dbuf_addstr(sb, sep);
			*first = 0;
			if (strcmp(sep, "\n") == 0)
				docx_table(n, sb, depth + 1);
			else	/* a table in a cell: its cells' text */
				docx_blocks(n->children, sb, depth + 1, first,
				    sep);
		} else if (name_is(n, "sdt") || name_is(n, "sdtContent") ||
		    name_is(n, "body") || name_is(n, "tr") ||
		    name_is(n, "tc") || name_is(n, "customXml"))
			docx_blocks(n->children, sb, depth + 1, first, sep);
	}
}

/* word/document.xml of a zip, at most DOCX_MAX_XML bytes. */
static int
docx_xml(const char *data, size_t len, char *err, size_t errsz, char **xml,
    size_t *xlen)
{
	struct archive		*a = NULL;
	struct archive_entry	*ent;
	struct dbuf		 b;
	char			 chunk[65536];
	la_ssize_t		 r;
	int			 rc = -1, entries = 0, st;

	dbuf_init(&b, DOCX_MAX_XML);
	if ((a = archive_read_new()) == NULL) {
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	archive_read_support_format_zip(a);
	if (archive_read_open_memory(a, data, len) != ARCHIVE_OK) {
		snprintf(err, errsz, "the file is not a docx (zip) "
		    "document: %s", archive_error_string(a) ?
		    archive_error_string(a) : "unreadable");
		goto out;
	}
	for (;;) {
		st = archive_read_next_header(a, &ent);
		if (st == ARCHIVE_EOF || ++entries > DOCX_MAX_ENTRIES) {
			snprintf(err, errsz, "the docx document has no "
			    "word/document.xml");
			goto out;
		}
		if (st != ARCHIVE_OK && st != ARCHIVE_WARN) {
			snprintf(err, errsz, "the docx (zip) document is "
			    "damaged: %s", archive_error_string(a) ?
			    archive_error_string(a) : "unreadable");
			goto out;
		}
		if (archive_entry_pathname(ent) != NULL &&
		    strcmp(archive_entry_pathname(ent),
		    "word/document.xml") == 0)
			break;
	}
	if (archive_entry_size_is_set(ent) &&
	    archive_entry_size(ent) > (la_int64_t)DOCX_MAX_XML) {
		snprintf(err, errsz, "word/document.xml unpacks to more than "
		    "%zu bytes", DOCX_MAX_XML);
		goto out;
	}
	while ((r = archive_read_data(a, chunk, sizeof(chunk))) > 0)
		if (dbuf_add(&b, chunk, (size_t)r) != DBUF_OK)
			break;
	if (r < 0) {
		snprintf(err, errsz, "cannot unpack word/document.xml: %s",
		    archive_error_string(a) ? archive_error_string(a) :
		    "damaged");
		goto out;
	}
	if (b.err == DBUF_ETOOBIG) {
		snprintf(err, errsz, "word/document.xml unpacks to more than "
		    "%zu bytes", DOCX_MAX_XML);
		goto out;
	}
	if (b.err != DBUF_OK || (*xml = dbuf_take(&b, xlen)) == NULL) {
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	rc = 0;
out:
	dbuf_free(&b);
	if (a != NULL)
		archive_read_free(a);
	return rc;
}

/* The text of a WordprocessingML document.xml. */
static int
docx_text_xml(const char *xml, size_t len, char *err, size_t errsz,
    char **out)
{
	xmlDocPtr	 doc;
	struct dbuf	 sb = { 0 };
	char		*raw = NULL;
	int		 rc = -1, first = 1;

	if ((doc = xml_parse(xml, len, "word/document.xml", err, errsz)) ==
	    NULL)
		goto out;
	docx_blocks(xmlDocGetRootElement(doc) ?
	    xmlDocGetRootElement(doc)->children : NULL, &sb, 0, &first, "\n");
	if (take(&sb, err, errsz, &raw) != 0)
		goto out;
	rc = text_plain(raw, strlen(raw), err, errsz, out);
out:
	if (doc != NULL)
		xmlFreeDoc(doc);
	free(raw);
	return rc;
}

static int
text_docx(const char *data, size_t len, char *err, size_t errsz,
    char **out)
{
	char	*xml = NULL;
	size_t	 xlen;
	int	 rc;

	if ((rc = docx_xml(data, len, err, errsz, &xml, &xlen)) == 0)
		rc = docx_text_xml(xml, xlen, err, errsz, out);
	free(xml);
	return rc;
}

/* ====== Dispatch ====== */

static const struct {
	const char	*ext;
	int		 (*fn)(const char *, size_t, char *, size_t, char **);
} doc_formats[] = {
	{ "txt", text_plain },
	{ "md", text_plain },
	{ "markdown", text_plain },
	{ "yaml", text_plain },
	{ "yml", text_plain },
	{ "json", text_json },
	{ "csv", text_csv },
	{ "html", text_html },
	{ "htm", text_html },
	{ "xml", text_xml },
	{ "docx", text_docx },
};
#define NFORMATS (sizeof(doc_formats) / sizeof(doc_formats[0]))

/*
 * The text of len bytes of a document of extension ext (lower case, no
 * dot). Returns 0 with *out malloc'd (caller frees), or -1 with err.
 */
static int
doc_text(const char *ext, const char *data, size_t len, char *err,
    size_t errsz, char **out)
{
	size_t i;

	*out = NULL;
	if (len > DOC_MAX_INPUT) {
		snprintf(err, errsz, "the file is larger than %zu bytes, the "
		    "most the document extractor reads", DOC_MAX_INPUT);
		return -1;
	}
	for (i = 0; i < NFORMATS; i++)
		if (strcmp(doc_formats[i].ext, ext) == 0)
			return doc_formats[i].fn(data, len, err, errsz, out);
	snprintf(err, errsz, "cannot read .%s files: the document extractor "
	    "reads txt, md, markdown, csv, json, yaml, yml, html, htm, xml "
	    "and docx", ext);
	return -1;
}

static int
doc_supported(const char *ext)
{
	size_t i;

	for (i = 0; i < NFORMATS; i++)
		if (strcmp(doc_formats[i].ext, ext) == 0)
			return 1;
	return 0;
}

/* ====== The node ====== */

static int
extract_one(struct node_ctx *c, const json_t *file, char **out)
{
	char		 ext[32], *data = NULL, err[ENGINE_ERRMAX];
	const char	*name = json_string_value(json_object_get(file,
			    "filename"));
	size_t		 len;
	int		 rc = -1;

	file_ext(file, ext, sizeof(ext));
	if (ext[0] == '\0') {
		c->error_type = "UnsupportedFileTypeError";
		node_fail(c, "Unable to determine file type of '%s': file "
		    "extension or MIME type is missing", name ? name : "");
		goto out;
	}
	if (!doc_supported(ext)) {
		c->error_type = "UnsupportedFileTypeError";
		node_fail(c, "cannot read '%s': .%s files are not supported "
		    "(the document extractor reads txt, md, markdown, csv, "
		    "json, yaml, yml, html, htm, xml and docx)", name ? name :
		    "", ext);
		goto out;
	}
	if (file_bytes(c, file, &data, &len) != 0) {
		c->error_type = "FileDownloadError";
		goto out;
	}
	if (doc_text(ext, data, len, err, sizeof(err), out) != 0) {
		c->error_type = "TextExtractionError";
		node_fail(c, "cannot extract text from '%s': %s", name ? name :
		    "", err);
		goto out;
	}
	rc = 0;
out:
	free(data);
	return rc;
}

static int
docx_node_run(struct node_ctx *c)
{
	json_t		*sel = json_object_get(c->node->data,
			    "variable_selector");
	json_t		*v = node_resolve(c, sel), *f, *list = NULL;
	json_t		*res = NULL;
	char		*text = NULL;
	size_t		 i;
	int		 rc = -1;

	if (json_object_set_new(c->inputs, "variable_selector", sel ?
	    json_incref(sel) : json_null()) != 0) {
		node_fail(c, "out of memory");
		goto out;
	}
	if (v == NULL) {
		node_fail(c, "File variable not found for selector: %s",
		    node_selector_tail(sel));
		goto out;
	}
	if (json_is_array(v)) {
		if ((list = json_array()) == NULL) {
			node_fail(c, "out of memory");
			goto out;
		}
		json_array_foreach(v, i, f) {
			if (!tpl_is_file(f)) {
				node_fail(c, "item %zu of the variable is not "
				    "a file", i + 1);
				goto out;
			}
			if (extract_one(c, f, &text) != 0)
				goto out;
			if (json_array_append_new(list, json_string(text))
			    != 0) {
				node_fail(c, "out of memory");
				goto out;
			}
			free(text);
			text = NULL;
		}
		res = json_incref(list);
	} else if (tpl_is_file(v)) {
		if (extract_one(c, v, &text) != 0)
			goto out;
		res = json_string(text);
	} else {
		node_fail(c, "the document extractor reads a file or an array "
		    "of files; the variable holds neither");
		goto out;
	}
	if (res == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	c->process_data = json_pack("{s:O}", "documents", res);
	if (json_object_set(c->outputs, "text", res) != 0) {
		node_fail(c, "out of memory");
		goto out;
	}
	rc = 0;
out:
	json_decref(res);
	json_decref(list);
	json_decref(v);
	free(text);
	return rc;
}

const struct node_type node_document_extractor = {
	"document-extractor", docx_node_run, 0
};
