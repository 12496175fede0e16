/*
 * fuzz_msg.c — the Outlook msg reader (engine/documents/msg.c, libgsf) on arbitrary bytes; the body is fuzz_documents.h.
 */
#include "fuzz_documents.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_doc("msg", data, size);
}
