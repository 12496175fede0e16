/*
 * fuzz_rtf.c — an Outlook body's compressed RTF (engine/documents/rtf.c:
 * the LZFu header checks, libpst's pst_lzfu_decompress, the RTF text
 * reader) on arbitrary bytes; input not starting with an LZFu or MELA
 * header is read as RTF directly. Valid UTF-8 out, a message on failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/documents/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct doc_limits	 lim;
	struct dbuf		 sb;
	char			 err[256] = "";
	int			 rc;

	doc_limits_default(&lim);
	lim.max_unpacked = 1 << 20;
	dbuf_init(&sb, lim.max_unpacked);
	if (size >= 16 && (memcmp(data + 8, "LZFu", 4) == 0 ||
	    memcmp(data + 8, "MELA", 4) == 0))
		rc = doc_rtf_compressed_text((const char *)data, size, &lim,
		    &sb, err, sizeof(err));
	else
		rc = doc_rtf_text((const char *)data, size, lim.max_unpacked,
		    &sb, err, sizeof(err));
	if (rc != 0 && err[0] == '\0')
		abort();
	dbuf_free(&sb);
	return 0;
}
