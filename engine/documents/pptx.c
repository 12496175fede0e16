/*
 * pptx.c — PowerPoint's pptx, slide by slide in the presentation's order
 * (ppt/presentation.xml's sldIdLst through its relationships), each
 * slide's paragraphs one per line (tables as Markdown tables), then the
 * slide's notes; one part per slide, the parts joined by a newline as
 * Dify's Unstructured elements are. Slide-number fields, pictures and
 * charts are left out. libarchive unpacks, libxml2 parses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "engine/documents/internal.h"

#define PPTX_MAX_DEPTH	256
#define PPTX_MAX_SLIDES	10000

static int
pptx_want(const char *name)
{
	size_t n = strlen(name);

	return strncmp(name, "ppt/", 4) == 0 && ((n > 4 && strcmp(name + n -
	    4, ".xml") == 0) || (n > 5 && strcmp(name + n - 5, ".rels") ==
	    0));
}

static void pptx_walk(const xmlNode *n, struct dbuf *sb, int depth);

/* One a:p: its runs, line breaks and fields (not slide numbers). */
static void
pptx_runs(const xmlNode *n, struct dbuf *sb, int depth)
{
	char *type;

	for (; n != NULL && depth < PPTX_MAX_DEPTH; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (doc_name_is(n, "t")) {
			xmlChar *t = xmlNodeGetContent(n);

			if (t != NULL)
				dbuf_addstr(sb, (const char *)t);
			xmlFree(t);
		} else if (doc_name_is(n, "br"))
			dbuf_addstr(sb, "\n");
		else if (doc_name_is(n, "fld")) {
			type = doc_attr(n, "type");
			if (type == NULL || strcmp(type, "slidenum") != 0)
				pptx_runs(n->children, sb, depth + 1);
			free(type);
		} else if (doc_name_is(n, "r"))
			pptx_runs(n->children, sb, depth + 1);
	}
}

/* A text body's paragraphs, joined by sep. */
static void
pptx_paras(const xmlNode *n, struct dbuf *sb, const char *sep, int depth)
{
	int first = 1;

	for (; n != NULL; n = n->next) {
		if (n->type != XML_ELEMENT_NODE || !doc_name_is(n, "p"))
			continue;
		if (!first)
			dbuf_addstr(sb, sep);
		first = 0;
		pptx_runs(n->children, sb, depth + 1);
	}
}

/* a:tbl as a Markdown table, a cell's paragraphs joined by spaces. */
static void
pptx_table(const xmlNode *tbl, struct dbuf *sb, int depth)
{
	const xmlNode	*tr, *tc, *body;
	size_t		 ncols, k, row = 0;

	for (tr = tbl->children; tr != NULL; tr = tr->next) {
		if (tr->type != XML_ELEMENT_NODE || !doc_name_is(tr, "tr"))
			continue;
		dbuf_addstr(sb, "|");
		ncols = 0;
		for (tc = tr->children; tc != NULL; tc = tc->next) {
			if (tc->type != XML_ELEMENT_NODE ||
			    !doc_name_is(tc, "tc"))
				continue;
			dbuf_addstr(sb, " ");
			for (body = tc->children; body != NULL; body =
			    body->next)
				if (body->type == XML_ELEMENT_NODE &&
				    doc_name_is(body, "txBody"))
					pptx_paras(body->children, sb, " ",
					    depth + 1);
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

/* A slide's (or notes page's) shapes in document order. */
static void
pptx_walk(const xmlNode *n, struct dbuf *sb, int depth)
{
	for (; n != NULL && depth < PPTX_MAX_DEPTH; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (doc_name_is(n, "txBody")) {
			pptx_paras(n->children, sb, "\n", depth + 1);
			dbuf_addstr(sb, "\n");
		} else if (doc_name_is(n, "tbl")) {
			pptx_table(n, sb, depth + 1);
		} else if (!doc_name_is(n, "nvSpPr") &&
		    !doc_name_is(n, "spPr") && !doc_name_is(n, "pic"))
			pptx_walk(n->children, sb, depth + 1);
	}
}

/* The text of one slide part into sb (tidied later). */
static int
pptx_part(const struct doc_zip *z, const char *name, struct dbuf *sb,
    char *err, size_t errsz)
{
	const struct doc_zip_ent	*e = doc_zip_find(z, name);
	xmlDocPtr			 doc;

	if (e == NULL)
		return 0;	/* a missing part reads as empty */
	if ((doc = doc_xml_parse(e->data, e->len, name, err, errsz)) == NULL)
		return DOC_EDAMAGED;
	pptx_walk(xmlDocGetRootElement(doc), sb, 0);
	xmlFreeDoc(doc);
	return 0;
}

/* The parsed .rels of part, or NULL when it has none (or a broken one). */
static xmlDocPtr
pptx_rels(const struct doc_zip *z, const char *part)
{
	const struct doc_zip_ent	*e;
	const char			*slash = strrchr(part, '/');
	char				 rels[1024], err[64];

	snprintf(rels, sizeof(rels), "%.*s/_rels/%s.rels", slash ? (int)(slash
	    - part) : 0, part, slash ? slash + 1 : part);
	if ((e = doc_zip_find(z, rels)) == NULL)
		return NULL;
	return doc_xml_parse(e->data, e->len, rels, err, sizeof(err));
}

/* The target of relationship id (or of the first of type suffix) in rels,
 * the .rels of part, resolved into out. 0, or -1 when none. */
static int
pptx_rel(xmlDocPtr rels, const char *part, const char *id,
    const char *type, char *out, size_t outsz)
{
	const xmlNode	*r;
	char		*v, *t;
	int		 found = -1;
	size_t		 l;

	for (r = rels && xmlDocGetRootElement(rels) ?
	    xmlDocGetRootElement(rels)->children : NULL; r != NULL && found !=
	    0; r = r->next) {
		if (r->type != XML_ELEMENT_NODE)
			continue;
		v = doc_attr(r, id != NULL ? "Id" : "Type");
		l = v != NULL && type != NULL ? strlen(v) : 0;
		if (v != NULL && (id != NULL ? strcmp(v, id) == 0 : (l >=
		    strlen(type) && strcmp(v + l - strlen(type), type) == 0))) {
			if ((t = doc_attr(r, "Target")) != NULL)
				found = doc_zip_resolve(part, t, out, outsz);
			free(t);
		}
		free(v);
	}
	return found;
}

int
doc_read_pptx(const char *data, size_t len, const struct doc_limits *lim,
    struct doc *d, char *err, size_t errsz)
{
	struct doc_zip			 z;
	const struct doc_zip_ent	*pres;
	xmlDocPtr			 doc = NULL, prels = NULL, srels;
	const xmlNode			*lst = NULL, *s;
	struct dbuf			 all, one;
	char				 slide[1024], notes[1024], *rid, *t;
	int				 rc, nslides = 0;

	dbuf_init(&all, lim->max_unpacked);
	memset(&one, 0, sizeof(one));
	if ((rc = doc_zip_read(data, len, lim, "pptx", pptx_want, &z, err,
	    errsz)) != 0)
		goto out;
	rc = DOC_EDAMAGED;
	if ((pres = doc_zip_find(&z, "ppt/presentation.xml")) == NULL) {
		snprintf(err, errsz, "the pptx document has no "
		    "ppt/presentation.xml");
		goto out;
	}
	if ((doc = doc_xml_parse(pres->data, pres->len, "ppt/presentation.xml",
	    err, errsz)) == NULL)
		goto out;
	for (s = xmlDocGetRootElement(doc) ? xmlDocGetRootElement(doc)->children
	    : NULL; s != NULL; s = s->next)
		if (s->type == XML_ELEMENT_NODE && doc_name_is(s, "sldIdLst"))
			lst = s;
	prels = pptx_rels(&z, "ppt/presentation.xml");
	for (s = lst ? lst->children : NULL; s != NULL; s = s->next) {
		if (s->type != XML_ELEMENT_NODE || !doc_name_is(s, "sldId"))
			continue;
		if (++nslides > PPTX_MAX_SLIDES ||
		    (size_t)nslides > lim->max_pages) {
			snprintf(err, errsz, "the presentation has more than "
			    "%zu slides (documents.max_pages)",
			    lim->max_pages);
			rc = DOC_ELIMIT;
			goto out;
		}
		if ((rc = doc_check_stop(lim, err, errsz)) != 0)
			goto out;
		rid = doc_attr(s, "id");	/* r:id; the bare id is a number */
		{
			xmlChar *x = xmlGetNsProp(s, (const xmlChar *)"id",
			    (const xmlChar *)"http://schemas.openxmlformats."
			    "org/officeDocument/2006/relationships");

			free(rid);
			rid = x ? strdup((const char *)x) : NULL;
			xmlFree(x);
		}
		if (rid == NULL || pptx_rel(prels, "ppt/presentation.xml", rid,
		    NULL, slide, sizeof(slide)) != 0) {
			free(rid);
			continue;
		}
		free(rid);
		dbuf_init(&one, lim->max_unpacked);
		if ((rc = pptx_part(&z, slide, &one, err, errsz)) != 0)
			goto out;
		srels = pptx_rels(&z, slide);
		rc = pptx_rel(srels, slide, NULL, "/notesSlide", notes,
		    sizeof(notes));
		if (srels != NULL)
			xmlFreeDoc(srels);
		if (rc == 0 && (rc = pptx_part(&z, notes, &one, err, errsz)) !=
		    0)
			goto out;
		rc = 0;
		if ((rc = doc_take(&one, err, errsz, &t)) != 0)
			goto out;
		doc_tidy(t);
		{
			struct dbuf u = { 0 };
			char *clean = NULL;

			doc_add_utf8(&u, t, strlen(t));
			free(t);
			if ((rc = doc_take(&u, err, errsz, &clean)) != 0)
				goto out;
			rc = doc_add_part(d, "slide", clean, &all, "\n", err,
			    errsz);
			free(clean);
			if (rc != 0)
				goto out;
		}
	}
	rc = doc_take(&all, err, errsz, &d->text);
out:
	dbuf_free(&all);
	dbuf_free(&one);
	if (doc != NULL)
		xmlFreeDoc(doc);
	if (prels != NULL)
		xmlFreeDoc(prels);
	doc_zip_free(&z);
	return rc;
}
