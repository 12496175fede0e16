/*
 * fuzz_docx.c — the document readers of engine/documents/ that have no
 * target of their own, on arbitrary bytes: the first byte picks the
 * format (docx zip, document.xml alone, xml, html, csv, json), the rest is
 * the document; the body is fuzz_documents.h.
 */
#include "fuzz_documents.h"
#include "engine/documents/internal.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const exts[] = { "docx", "docxml", "xml", "html",
		"csv", "json" };
	const size_t	 n = sizeof(exts) / sizeof(exts[0]);
	char		 err[ENGINE_ERRMAX], *out = NULL;
	int		 rc;

	if (size < 1 || strcmp(exts[data[0] % n], "docxml") != 0)
		return fuzz_doc_pick(exts, n, data, size);
	err[0] = '\0';
	rc = doc_docx_xml_text((const char *)data + 1, size - 1, err,
	    sizeof(err), &out);
	fuzz_doc_check_text(rc, out, err);
	return 0;
}
