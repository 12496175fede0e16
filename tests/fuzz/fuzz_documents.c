/*
 * fuzz_documents.c — the PDF reader (engine/documents/pdf.c, poppler) on
 * arbitrary bytes; the body is fuzz_documents.h.
 */
#include "fuzz_documents.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_doc("pdf", data, size);
}
