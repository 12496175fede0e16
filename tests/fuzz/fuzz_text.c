/*
 * fuzz_text.c — the plain-text readers (engine/documents/text.c) on
 * arbitrary bytes, the first byte picking txt or csv: byte order marks,
 * the charset uchardet guesses and iconv's conversion; the body is
 * fuzz_documents.h.
 */
#include "fuzz_documents.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const exts[] = { "txt", "csv" };

	return fuzz_doc_pick(exts, 2, data, size);
}
