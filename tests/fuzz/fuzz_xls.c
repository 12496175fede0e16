/*
 * fuzz_xls.c — the xls reader (engine/documents/xls.c, libfreexl) on arbitrary bytes; the body is fuzz_documents.h.
 */
#include "fuzz_documents.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_doc("xls", data, size);
}
