/*
 * pdf.c — PDF with poppler (poppler-glib, the library of Debian's
 * pdftotext): each page's text in reading order, one part per page; the
 * node's text is the pages joined by a newline. Why poppler and not mupdf:
 * docs/documents.md.
 *
 * A password-protected PDF fails with DOC_EENCRYPTED (one encrypted with
 * an empty user password opens, as in any viewer); a damaged one poppler
 * cannot rebuild with DOC_EDAMAGED; more pages than lim->max_pages with
 * DOC_ELIMIT before any page is read. The run's stop and
 * documents.timeout are asked before each page (DOC_ESTOPPED).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <poppler.h>

#include "engine/documents/internal.h"

/* The text of page i as valid UTF-8, its trailing blank lines dropped. */
static int
pdf_page(PopplerDocument *doc, int i, char *err, size_t errsz, char **out)
{
	PopplerPage	*page = NULL;
	struct dbuf	 sb = { 0 };
	char		*t = NULL;
	size_t		 n;
	int		 rc = DOC_EDAMAGED;

	if ((page = poppler_document_get_page(doc, i)) == NULL) {
		snprintf(err, errsz, "page %d of the PDF cannot be read",
		    i + 1);
		goto out;
	}
	t = poppler_page_get_text(page);
	n = t != NULL ? strlen(t) : 0;
	while (n > 0 && (t[n - 1] == '\n' || t[n - 1] == '\r' ||
	    t[n - 1] == ' ' || t[n - 1] == '\f'))
		n--;
	doc_add_utf8(&sb, t != NULL ? t : "", n);
	rc = doc_take(&sb, err, errsz, out);
out:
	g_free(t);
	if (page != NULL)
		g_object_unref(page);
	return rc;
}

int
doc_read_pdf(const char *data, size_t len, const struct doc_limits *lim,
    struct doc *d, char *err, size_t errsz)
{
	PopplerDocument	*doc = NULL;
	GBytes		*bytes = NULL;
	GError		*gerr = NULL;
	struct dbuf	 all;
	int		 rc = DOC_EDAMAGED, n, i;

	dbuf_init(&all, lim->max_unpacked);
	if (len < 5 || memcmp(data, "%PDF-", 5) != 0) {
		/* poppler also looks further in, as viewers do */
		if (len < 5 || memmem(data, len < 1024 ? len : 1024, "%PDF-",
		    5) == NULL) {
			snprintf(err, errsz, "the file is not a PDF document");
			goto out;
		}
	}
	if ((bytes = g_bytes_new_static(data, len)) == NULL) {
		snprintf(err, errsz, "out of memory");
		rc = DOC_ENOMEM;
		goto out;
	}
	if ((doc = poppler_document_new_from_bytes(bytes, NULL, &gerr)) ==
	    NULL) {
		if (gerr != NULL && gerr->domain == POPPLER_ERROR &&
		    gerr->code == POPPLER_ERROR_ENCRYPTED) {
			snprintf(err, errsz, "the PDF is protected by a "
			    "password");
			rc = DOC_EENCRYPTED;
		} else
			snprintf(err, errsz, "the PDF is damaged: %s",
			    gerr != NULL && gerr->message != NULL ?
			    gerr->message : "unreadable");
		goto out;
	}
	if ((n = poppler_document_get_n_pages(doc)) < 0)
		n = 0;
	if ((size_t)n > lim->max_pages) {
		snprintf(err, errsz, "the PDF has %d pages, more than %zu "
		    "(documents.max_pages)", n, lim->max_pages);
		rc = DOC_ELIMIT;
		goto out;
	}
	if (n > 0 && (d->parts = calloc((size_t)n, sizeof(*d->parts))) ==
	    NULL) {
		snprintf(err, errsz, "out of memory");
		rc = DOC_ENOMEM;
		goto out;
	}
	d->unit = "page";
	for (i = 0; i < n; i++) {
		/* a long PDF is read within the run's stop and timeout */
		if ((rc = doc_check_stop(lim, err, errsz)) != 0)
			goto out;
		if ((rc = pdf_page(doc, i, err, errsz, &d->parts[i].text)) !=
		    0)
			goto out;
		d->nparts++;
		if (i > 0)
			dbuf_addstr(&all, "\n");
		dbuf_addstr(&all, d->parts[i].text);
		if (all.err == DBUF_ETOOBIG) {
			snprintf(err, errsz, "the PDF's text is larger than "
			    "%zu bytes (documents.max_unpacked)",
			    lim->max_unpacked);
			rc = DOC_ELIMIT;
			goto out;
		}
	}
	rc = doc_take(&all, err, errsz, &d->text);
out:
	dbuf_free(&all);
	if (gerr != NULL)
		g_error_free(gerr);
	if (doc != NULL)
		g_object_unref(doc);
	if (bytes != NULL)
		g_bytes_unref(bytes);
	return rc;
}
