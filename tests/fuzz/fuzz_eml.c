/*
 * fuzz_eml.c — the mail message reader (engine/documents/eml.c, GMime) on arbitrary bytes; the body is fuzz_documents.h.
 */
#include "fuzz_documents.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_doc("eml", data, size);
}
