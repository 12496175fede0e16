/*
 * fuzz_xlsx.c — the xlsx reader (engine/documents/xlsx.c) on arbitrary
 * bytes (a zip), with small limits so that a long input meets them.
 * Nothing may crash or leak; a success gives one part per sheet and valid
 * UTF-8 text, a failure a DOC_E* code and a message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/documents/documents.h"
#include "engine/internal.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_utf8(const char *s)
{
	size_t	n = strlen(s), i = 0, l;

	while (i < n) {
		if ((unsigned char)s[i] < 0x80) {
			i++;
			continue;
		}
		if (tpl_utf8_next(s + i, n - i, &l) == 0xfffd && l == 1 &&
		    strncmp(s + i, "\xef\xbf\xbd", 3) != 0)
			abort();
		i += l;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct doc_limits	lim;
	struct doc		d;
	char			err[512];
	size_t			i;
	int			rc;

	doc_limits_default(&lim);
	lim.max_cells = 100000;
	lim.max_unpacked = 1 << 20;
	rc = doc_extract("xlsx", (const char *)data, size, &lim, &d, err,
	    sizeof(err));
	if (rc == 0) {
		if (d.text == NULL)
			abort();
		check_utf8(d.text);
		for (i = 0; i < d.nparts; i++)
			check_utf8(d.parts[i].text);
		doc_release(&d);
	} else if (err[0] == '\0' || d.text != NULL || d.nparts != 0)
		abort();
	return 0;
}
