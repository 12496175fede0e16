/*
 * md_markdown.c — reading Markdown for the md_exporter provider's writers:
 * the document parsed by cmark-gfm with the GFM table and strikethrough
 * extensions, the node tests the writers share, plain text of inlines,
 * XML escaping, and the tables of a document as the plugin reads them.
 * It calls none of the writers (md_exporter.c, md_office.c, md_pdf.c
 * call it).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm-extension_api.h>

#include "engine/tools/md.h"
#include "engine/tools/tools.h"

/* ====== Reading Markdown ====== */

static pthread_once_t	ext_once = PTHREAD_ONCE_INIT;

static void
ext_register(void)
{
	cmark_gfm_core_extensions_ensure_registered();
}

void
md_extensions_register(void)
{
	pthread_once(&ext_once, ext_register);
}

int
md_parse(const char *text, size_t n, cmark_node **out)
{
	static const char *const names[] = { "table", "strikethrough" };
	cmark_parser		*p = NULL;
	cmark_syntax_extension	*ext;
	size_t			 i;
	int			 rc = ENGINE_ENOMEM;

	*out = NULL;
	pthread_once(&ext_once, ext_register);
	if ((p = cmark_parser_new(CMARK_OPT_VALIDATE_UTF8)) == NULL)
		goto out;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((ext = cmark_find_syntax_extension(names[i])) != NULL)
			cmark_parser_attach_syntax_extension(p, ext);
	cmark_parser_feed(p, text, n);
	if ((*out = cmark_parser_finish(p)) != NULL)
		rc = 0;
out:
	if (p != NULL)
		cmark_parser_free(p);
	return rc;
}

static int
type_is(cmark_node *node, const char *name)
{
	const char *t = cmark_node_get_type_string(node);

	return t != NULL && strcmp(t, name) == 0;
}

int
md_is_table(cmark_node *node)
{
	return type_is(node, "table");
}

int
md_is_table_row(cmark_node *node)
{
	return type_is(node, "table_row") || type_is(node, "table_header");
}

int
md_is_table_cell(cmark_node *node)
{
	return type_is(node, "table_cell");
}

int
md_is_strike(cmark_node *node)
{
	return type_is(node, "strikethrough");
}

static void
plain(cmark_node *node, struct dbuf *out, int depth)
{
	cmark_node	*c;
	const char	*s;

	switch (cmark_node_get_type(node)) {
	case CMARK_NODE_TEXT:
	case CMARK_NODE_CODE:
		if ((s = cmark_node_get_literal(node)) != NULL)
			dbuf_addstr(out, s);
		return;
	case CMARK_NODE_SOFTBREAK:
	case CMARK_NODE_LINEBREAK:
		dbuf_addc(out, ' ');
		return;
	case CMARK_NODE_HTML_INLINE:
		return;
	default:
		break;
	}
	if (depth >= MD_MAX_DEPTH)
		return;
	for (c = cmark_node_first_child(node); c != NULL;
	    c = cmark_node_next(c))
		plain(c, out, depth + 1);
}

void
md_plain_text(cmark_node *node, struct dbuf *out)
{
	plain(node, out, 0);
}

/* Bytes of a character XML 1.0 forbids at s[i] (a control character,
 * U+FFFE, U+FFFF), else 0. */
static size_t
xml_bad(const char *s, size_t i, size_t n)
{
	unsigned char c = (unsigned char)s[i];

	if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
		return 1;
	if (c == 0xef && i + 2 < n && (unsigned char)s[i + 1] == 0xbf &&
	    ((unsigned char)s[i + 2] == 0xbe ||
	    (unsigned char)s[i + 2] == 0xbf))
		return 3;
	return 0;
}

void
md_xml_escape(struct dbuf *out, const char *s, size_t n)
{
	size_t		i, start = 0, bad;
	unsigned char	c;

	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		bad = xml_bad(s, i, n);
		if (c != '&' && c != '<' && c != '>' && c != '"' && bad == 0)
			continue;
		dbuf_add(out, s + start, i - start);
		start = i + 1;
		if (c == '&')
			dbuf_addstr(out, "&amp;");
		else if (c == '<')
			dbuf_addstr(out, "&lt;");
		else if (c == '>')
			dbuf_addstr(out, "&gt;");
		else if (c == '"')
			dbuf_addstr(out, "&quot;");
		else {	/* not XML: dropped */
			i += bad - 1;
			start = i + 1;
		}
	}
	dbuf_add(out, s + start, n - start);
}

void
md_xml_clean(struct dbuf *out, const char *s, size_t n)
{
	size_t i, start = 0, bad;

	for (i = 0; i < n; i++) {
		if ((bad = xml_bad(s, i, n)) == 0)
			continue;
		dbuf_add(out, s + start, i - start);
		i += bad - 1;
		start = i + 1;
	}
	dbuf_add(out, s + start, n - start);
}

/* ====== Tables ====== */

/* The text of a node as a new JSON string (trimmed). */
static json_t *
cell_string(cmark_node *cell)
{
	struct dbuf	 b = { 0 };
	const char	*s;
	size_t		 n;
	json_t		*v;

	md_plain_text(cell, &b);
	s = dbuf_str(&b);
	n = b.len;
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	while (n > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	v = b.err ? NULL : json_stringn(s, n);
	dbuf_free(&b);
	return v;
}

/* Headings h1..h5 as the plugin lists them: every h1, then every h2, ...
 * (30 characters of each; empty ones left out). */
static json_t *
heading_names(cmark_node *doc)
{
	cmark_iter	*it;
	cmark_node	*n;
	json_t		*names = json_array(), *s;
	int		 level, ev;

	if (names == NULL)
		return NULL;
	for (level = 1; level <= 5; level++) {
		if ((it = cmark_iter_new(doc)) == NULL) {
			json_decref(names);
			return NULL;
		}
		while ((ev = cmark_iter_next(it)) != CMARK_EVENT_DONE) {
			n = cmark_iter_get_node(it);
			if (ev != CMARK_EVENT_ENTER || cmark_node_get_type(n) !=
			    CMARK_NODE_HEADING ||
			    cmark_node_get_heading_level(n) != level)
				continue;
			if ((s = cell_string(n)) == NULL)
				break;
			if (json_string_length(s) == 0) {
				json_decref(s);
				continue;
			}
			/* 30 characters, not bytes */
			{
				const char	*p = json_string_value(s);
				size_t		 i = 0, chars = 0;

				while (p[i] != '\0' && chars < 30) {
					i++;
					while (((unsigned char)p[i] & 0xc0) ==
					    0x80)
						i++;
					chars++;
				}
				if (p[i] != '\0') {
					json_t *cut = json_stringn(p, i);

					json_decref(s);
					s = cut;
				}
			}
			if (s == NULL || json_array_append_new(names, s) != 0)
				break;
		}
		cmark_iter_free(it);
	}
	return names;
}

/* A column name as pandas makes it: "Unnamed: i" for an empty one, and
 * ".1", ".2" after a repeated one. */
static json_t *
column_name(json_t *header, size_t i, json_t *cell)
{
	char		 buf[64];
	const char	*s = json_string_value(cell);
	json_t		*v;
	size_t		 j, k;
	int		 dup;

	if (s == NULL || *s == '\0') {
		snprintf(buf, sizeof(buf), "Unnamed: %zu", i);
		return json_string(buf);
	}
	for (k = 0;; k++) {
		struct dbuf b = { 0 };

		dbuf_addstr(&b, s);
		if (k > 0)
			dbuf_addf(&b, ".%zu", k);
		dup = 0;
		for (j = 0; j < json_array_size(header); j++)
			if (strcmp(json_string_value(json_array_get(header,
			    j)), dbuf_str(&b)) == 0)
				dup = 1;
		v = dup || b.err ? NULL : json_string(dbuf_str(&b));
		dbuf_free(&b);
		if (!dup)
			return v;
	}
}

json_t *
md_tables(cmark_node *doc)
{
	cmark_iter	*it = NULL;
	cmark_node	*n, *row, *cell;
	json_t		*tables = json_array(), *names = NULL, *header, *rows;
	json_t		*r, *t, *v;
	size_t		 i, ntab = 0, width;
	int		 ev, bad = 0;

	if (tables == NULL || (names = heading_names(doc)) == NULL ||
	    (it = cmark_iter_new(doc)) == NULL)
		goto fail;
	while ((ev = cmark_iter_next(it)) != CMARK_EVENT_DONE && !bad) {
		n = cmark_iter_get_node(it);
		if (ev != CMARK_EVENT_ENTER || !md_is_table(n))
			continue;
		header = json_array();
		rows = json_array();
		t = json_pack("{s:O,s:o,s:o}", "name", json_array_get(names,
		    ntab) ? json_array_get(names, ntab) : json_null(),
		    "header", header, "rows", rows);
		ntab++;
		if (t == NULL || header == NULL || rows == NULL) {
			bad = 1;
			json_decref(t);
			break;
		}
		width = 0;
		for (row = cmark_node_first_child(n); row != NULL && !bad;
		    row = cmark_node_next(row)) {
			if (!md_is_table_row(row))
				continue;
			if (cmark_gfm_extensions_get_table_row_is_header(row)) {
				i = 0;
				for (cell = cmark_node_first_child(row);
				    cell != NULL; cell = cmark_node_next(cell),
				    i++) {
					v = cell_string(cell);
					bad |= v == NULL || json_array_append_new(
					    header, column_name(header, i, v));
					json_decref(v);
				}
				width = json_array_size(header);
				continue;
			}
			if ((r = json_array()) == NULL ||
			    json_array_append_new(rows, r) != 0) {
				bad = 1;
				break;
			}
			for (cell = cmark_node_first_child(row); cell != NULL;
			    cell = cmark_node_next(cell))
				bad |= json_array_append_new(r,
				    cell_string(cell)) != 0;
			while (json_array_size(r) < width)
				bad |= json_array_append_new(r,
				    json_string("")) != 0;
		}
		/* pandas drops a table without rows (DataFrame.empty) */
		if (!bad && json_array_size(rows) > 0)
			bad |= json_array_append(tables, t) != 0;
		json_decref(t);
	}
	cmark_iter_free(it);
	json_decref(names);
	if (bad) {
		json_decref(tables);
		return NULL;
	}
	return tables;
fail:
	if (it != NULL)
		cmark_iter_free(it);
	json_decref(names);
	json_decref(tables);
	return NULL;
}
