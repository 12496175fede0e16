/*
 * epub.c — EPUB: META-INF/container.xml names the package (OPF), whose
 * spine gives the reading order of its XHTML documents; each is read as
 * the html reader reads HTML (text without scripts and styles, blocks on
 * their own lines), one part per spine item, the parts joined by a blank
 * line. Images, styles, the navigation document when it is not in the
 * spine, and DRM-encrypted content (META-INF/encryption.xml naming a
 * spine item: refused) are not read. libarchive unpacks, libxml2 parses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "engine/documents/internal.h"

#define EPUB_MAX_DEPTH	64

static int
epub_want(const char *name)
{
	static const char *const ext[] = { ".xml", ".opf", ".xhtml", ".html",
		".htm", NULL };
	size_t	n = strlen(name), i, l;

	for (i = 0; ext[i] != NULL; i++) {
		l = strlen(ext[i]);
		if (n > l && strcasecmp(name + n - l, ext[i]) == 0)
			return 1;
	}
	return 0;
}

/* The first element named name under n (depth-first), or NULL. */
static const xmlNode *
epub_find(const xmlNode *n, const char *name, int depth)
{
	const xmlNode *f;

	for (; n != NULL && depth < EPUB_MAX_DEPTH; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (doc_name_is(n, name))
			return n;
		if ((f = epub_find(n->children, name, depth + 1)) != NULL)
			return f;
	}
	return NULL;
}

/* The href of manifest item id, resolved against the OPF, in out. */
static int
epub_href(const xmlNode *manifest, const char *opf, const char *id,
    char *out, size_t outsz)
{
	const xmlNode	*i;
	char		*v, *href;
	int		 rc = -1;

	for (i = manifest ? manifest->children : NULL; i != NULL && rc != 0;
	    i = i->next) {
		if (i->type != XML_ELEMENT_NODE || !doc_name_is(i, "item"))
			continue;
		v = doc_attr(i, "id");
		if (v != NULL && strcmp(v, id) == 0 && (href = doc_attr(i,
		    "href")) != NULL) {
			rc = doc_zip_resolve(opf, href, out, outsz);
			free(href);
		}
		free(v);
	}
	return rc;
}

int
doc_read_epub(const char *data, size_t len, const struct doc_limits *lim,
    struct doc *d, char *err, size_t errsz)
{
	struct doc_zip			 z;
	const struct doc_zip_ent	*e, *enc;
	xmlDocPtr			 cont = NULL, opf = NULL;
	const xmlNode			*root, *manifest, *spine, *ir;
	struct dbuf			 all;
	char				 opfpath[1024], path[1024], *v, *t;
	size_t				 parts = 0;
	int				 rc;

	dbuf_init(&all, lim->max_unpacked);
	if ((rc = doc_zip_read(data, len, lim, "epub", epub_want, &z, err,
	    errsz)) != 0)
		goto out;
	rc = DOC_EDAMAGED;
	if ((e = doc_zip_find(&z, "META-INF/container.xml")) == NULL) {
		snprintf(err, errsz, "the epub has no META-INF/container.xml");
		goto out;
	}
	if ((cont = doc_xml_parse(e->data, e->len, "META-INF/container.xml",
	    err, errsz)) == NULL)
		goto out;
	root = epub_find(xmlDocGetRootElement(cont), "rootfile", 0);
	v = root != NULL ? doc_attr(root, "full-path") : NULL;
	if (v == NULL || doc_zip_resolve("", v, opfpath, sizeof(opfpath)) !=
	    0 || (e = doc_zip_find(&z, opfpath)) == NULL) {
		snprintf(err, errsz, "the epub's container names no package "
		    "document it holds");
		free(v);
		goto out;
	}
	free(v);
	if ((opf = doc_xml_parse(e->data, e->len, opfpath, err, errsz)) ==
	    NULL)
		goto out;
	manifest = epub_find(xmlDocGetRootElement(opf), "manifest", 0);
	spine = epub_find(xmlDocGetRootElement(opf), "spine", 0);
	enc = doc_zip_find(&z, "META-INF/encryption.xml");
	for (ir = spine ? spine->children : NULL; ir != NULL; ir = ir->next) {
		if (ir->type != XML_ELEMENT_NODE || !doc_name_is(ir, "itemref"))
			continue;
		if ((v = doc_attr(ir, "idref")) == NULL)
			continue;
		rc = epub_href(manifest, opfpath, v, path, sizeof(path));
		free(v);
		if (rc != 0 || (e = doc_zip_find(&z, path)) == NULL)
			continue;
		if (enc != NULL && memmem(enc->data, enc->len, path,
		    strlen(path)) != NULL) {
			snprintf(err, errsz, "the epub is encrypted (DRM): %s "
			    "cannot be read", path);
			rc = DOC_EENCRYPTED;
			goto out;
		}
		if (++parts > lim->max_pages) {
			snprintf(err, errsz, "the epub has more than %zu "
			    "chapters (documents.max_pages)", lim->max_pages);
			rc = DOC_ELIMIT;
			goto out;
		}
		if ((rc = doc_check_stop(lim, err, errsz)) != 0)
			goto out;
		if ((rc = doc_html_text(e->data, e->len, 1, err, errsz,
		    &t)) != 0)
			goto out;
		rc = doc_add_part(d, "chapter", t, &all, "\n\n", err, errsz);
		free(t);
		if (rc != 0)
			goto out;
	}
	rc = doc_take(&all, err, errsz, &d->text);
out:
	dbuf_free(&all);
	if (cont != NULL)
		xmlFreeDoc(cont);
	if (opf != NULL)
		xmlFreeDoc(opf);
	doc_zip_free(&z);
	return rc;
}
