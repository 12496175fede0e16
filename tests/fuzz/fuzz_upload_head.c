/*
 * fuzz_upload_head.c — the head of a remote file's response
 * (engine/records/uploads.c upload_head_line, behind GET
 * /api/remote-files/{url} and remote-files/upload) from any input: each
 * line is a header line. Whatever comes, the type and the name are
 * NUL-terminated within their buffers, the length is -1 or a size, and a
 * name is valid UTF-8 without a path separator or a control character.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "engine/records/records.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct upload_head	 h;
	const char		*p = (const char *)data, *end = p + size, *nl;
	size_t			 i, n;
	json_t			*j;

	upload_head_init(&h);
	while (p < end) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		n = (size_t)(nl - p);
		if (n > 0 && p[n - 1] == '\r')
			n--;
		upload_head_line(&h, p, n);
		p = nl + 1;
	}
	if (memchr(h.type, '\0', sizeof(h.type)) == NULL ||
	    memchr(h.name, '\0', sizeof(h.name)) == NULL || h.length < -1)
		abort();
	n = strlen(h.name);
	for (i = 0; i < n; i++)
		if ((unsigned char)h.name[i] < 0x20 || h.name[i] == '/' ||
		    h.name[i] == '\\' || h.name[i] == 0x7f)
			abort();
	if (n > 0) {
		if ((j = json_stringn(h.name, n)) == NULL)
			abort();
		json_decref(j);
	} else if (h.name_star)
		abort();
	return 0;
}
