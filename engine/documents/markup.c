/*
 * markup.c — html and xml with libxml2: HTML's text without scripts and
 * styles, blocks on their own lines; XML's text of each element, one per
 * line. No network, no entity expansion, no huge mode.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "engine/documents/internal.h"

#define DOC_MAX_DEPTH 512

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
		if (doc_name_is(n, blocks[i]))
			return 1;
	return 0;
}

static void
html_walk(const xmlNode *n, struct dbuf *sb, int body_only, int depth)
{
	for (; n != NULL; n = n->next) {
		if (n->type == XML_TEXT_NODE || n->type ==
		    XML_CDATA_SECTION_NODE) {
			if (n->content != NULL)
				dbuf_addstr(sb, (const char *)n->content);
			continue;
		}
		if (n->type != XML_ELEMENT_NODE || depth > DOC_MAX_DEPTH)
			continue;
		if (doc_name_is(n, "script") || doc_name_is(n, "style") ||
		    doc_name_is(n, "noscript") || doc_name_is(n, "template") ||
		    (body_only && doc_name_is(n, "head")))
			continue;
		if (html_block(n))
			dbuf_addstr(sb, "\n");
		else if (doc_name_is(n, "td") || doc_name_is(n, "th"))
			dbuf_addstr(sb, " ");
		html_walk(n->children, sb, body_only, depth + 1);
		if (html_block(n))
			dbuf_addstr(sb, "\n");
	}
}

int
doc_html_text(const char *data, size_t len, int body_only, char *err,
    size_t errsz, char **out)
{
	htmlDocPtr	 doc = NULL;
	struct dbuf	 sb = { 0 };
	int		 rc = DOC_ELIMIT;

	if (len > (size_t)INT32_MAX) {
		snprintf(err, errsz, "the document is too large");
		goto out;
	}
	xmlInitParser();
	doc = htmlReadMemory(data, (int)len, NULL, NULL, HTML_PARSE_NONET |
	    HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING);
	if (doc != NULL)
		html_walk(xmlDocGetRootElement(doc), &sb, body_only, 0);
	rc = doc_take_tidy(&sb, err, errsz, out);
out:
	if (doc != NULL)
		xmlFreeDoc(doc);
	dbuf_free(&sb);
	return rc;
}

int
doc_read_html(const char *data, size_t len, const struct doc_limits *lim,
    struct doc *d, char *err, size_t errsz)
{
	return doc_html_text(data, len, 0, err, errsz, &d->text);
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
		} else if (n->type == XML_ELEMENT_NODE && depth <
		    DOC_MAX_DEPTH)
			xml_walk(n->children, sb, depth + 1);
	}
}

int
doc_read_xml(const char *data, size_t len, const struct doc_limits *lim,
    struct doc *d, char *err, size_t errsz)
{
	xmlDocPtr	 doc;
	struct dbuf	 sb = { 0 };
	int		 rc = DOC_EDAMAGED;

	if ((doc = doc_xml_parse(data, len, "the document", err, errsz)) ==
	    NULL)
		goto out;
	xml_walk(xmlDocGetRootElement(doc), &sb, 0);
	rc = doc_take_tidy(&sb, err, errsz, &d->text);
out:
	if (doc != NULL)
		xmlFreeDoc(doc);
	dbuf_free(&sb);
	return rc;
}
