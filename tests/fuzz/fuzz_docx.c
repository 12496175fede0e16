/*
 * fuzz_docx.c — the document readers of engine/documents/ but PDF
 * (fuzz_documents.c) on arbitrary bytes: the first byte picks the format
 * (docx zip, document.xml alone, xml, html, csv, json), the rest is the
 * document. Nothing may crash or leak, and whatever comes out is valid UTF-8 without NUL bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../engine/internal.h"
#include "../../engine/documents/internal.h"

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
	static const char *const exts[] = { "docx", "docxml", "xml", "html",
		"csv", "json" };
	char		 err[ENGINE_ERRMAX], *out = NULL;
	const char	*ext;
	struct doc	 d;
	int		 rc;

	if (size < 1)
		return 0;
	ext = exts[data[0] % (sizeof(exts) / sizeof(exts[0]))];
	if (strcmp(ext, "docxml") == 0)
		rc = doc_docx_xml_text((const char *)data + 1, size - 1, err,
		    sizeof(err), &out);
	else if ((rc = doc_extract(ext, (const char *)data + 1, size - 1,
	    NULL, &d, err, sizeof(err))) == 0) {
		out = d.text;
		d.text = NULL;
		doc_release(&d);
	}
	if (rc == 0) {
		if (out == NULL)
			abort();
		check_utf8(out);
		free(out);
	} else if (err[0] == '\0')
		abort();
	return 0;
}
