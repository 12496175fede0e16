/*
 * fuzz_epub.c — the epub reader (engine/documents/epub.c, a zip) on arbitrary bytes; the body is fuzz_documents.h.
 */
#include "fuzz_documents.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_doc("epub", data, size);
}
