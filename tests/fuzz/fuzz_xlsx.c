/*
 * fuzz_xlsx.c — the xlsx reader (engine/documents/xlsx.c) on arbitrary
 * bytes (a zip); the body is fuzz_documents.h.
 */
#include "fuzz_documents.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_doc("xlsx", data, size);
}
