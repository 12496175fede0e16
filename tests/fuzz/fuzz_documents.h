/*
 * fuzz_documents.h — the one body of the document readers' fuzz targets
 * (fuzz_documents.c for PDF, fuzz_xlsx.c, fuzz_docx.c, ...): a reader of
 * engine/documents/ on arbitrary bytes, with small limits so that a long
 * input meets them. Nothing may crash or leak; a success gives valid UTF-8
 * text (and parts), a failure a DOC_E* code, a message and an empty doc.
 *
 *	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
 *	{ return fuzz_doc("pdf", data, size); }
 */
#ifndef FLOWCGI_FUZZ_DOCUMENTS_H
#define FLOWCGI_FUZZ_DOCUMENTS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/documents/documents.h"
#include "engine/internal.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts unless s is valid UTF-8 (U+FFFD only where written as such). */
static inline void
fuzz_doc_check_utf8(const char *s)
{
	size_t	n = strlen(s), i = 0, l;

	while (i < n) {
		if ((unsigned char)s[i] < 0x80) {
			i++;
			continue;
		}
		if (tpl_utf8_next(s + i, n - i, &l) == 0xfffd && l == 1 &&
		    strncmp(s + i, "\xef\xbf\xbd", 3) != 0)
			abort();
		i += l;
	}
}

/* Aborts unless rc, out and err keep a reader's contract; frees out. */
static inline void
fuzz_doc_check_text(int rc, char *out, const char *err)
{
	if (rc == 0) {
		if (out == NULL)
			abort();
		fuzz_doc_check_utf8(out);
	} else if (err[0] == '\0' || out != NULL)
		abort();
	free(out);
}

/* The small limits of every target. */
static inline void
fuzz_doc_limits(struct doc_limits *lim)
{
	doc_limits_default(lim);
	lim->max_pages = 50;
	lim->max_cells = 100000;
	lim->max_unpacked = 1 << 20;
}

/* doc_extract(ext) on size bytes, its result checked. Returns 0. */
static inline int
fuzz_doc(const char *ext, const uint8_t *data, size_t size)
{
	struct doc_limits	lim;
	struct doc		d;
	char			err[512];
	size_t			i;
	int			rc;

	fuzz_doc_limits(&lim);
	rc = doc_extract(ext, (const char *)data, size, &lim, &d, err,
	    sizeof(err));
	if (rc == 0) {
		for (i = 0; i < d.nparts; i++)
			fuzz_doc_check_utf8(d.parts[i].text);
	} else if (d.nparts != 0 || d.parts != NULL)
		abort();
	fuzz_doc_check_text(rc, d.text, err);
	d.text = NULL;
	doc_release(&d);
	return 0;
}

/* As fuzz_doc, the format picked by the first byte among n extensions. */
static inline int
fuzz_doc_pick(const char *const *exts, size_t n, const uint8_t *data,
    size_t size)
{
	if (size < 1)
		return 0;
	return fuzz_doc(exts[data[0] % n], data + 1, size - 1);
}

#endif
