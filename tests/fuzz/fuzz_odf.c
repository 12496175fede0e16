/*
 * fuzz_odf.c — the OpenDocument reader (engine/documents/odf.c, a zip) on
 * arbitrary bytes, the first byte picking odt, ods or odp (the same reader,
 * another name in errors); the body is fuzz_documents.h.
 */
#include "fuzz_documents.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const exts[] = { "odt", "ods", "odp" };

	return fuzz_doc_pick(exts, 3, data, size);
}
