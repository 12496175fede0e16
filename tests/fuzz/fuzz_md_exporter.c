/*
 * fuzz_md_exporter.c — the md_exporter provider on arbitrary Markdown:
 * the first byte picks the tool (HTML, XML, LaTeX, CSV, JSON, XLSX,
 * DOCX, PPTX, PDF, MD, code blocks, notebook, PNG pages; its high bit
 * asks for JSON arrays and zips), the rest is md_text. Nothing may crash or leak; a
 * failure says why; every file decodes; the XML document and the XML
 * parts of the Office packages are well-formed; a PDF starts as one.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>
#include <libxml/parser.h>

#include "fuzz_engine.h"
#include "fuzz_fonts.h"
#include "engine/internal.h"
#include "engine/tools/tools.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int	LLVMFuzzerInitialize(int *argc, char ***argv);

static void
check_xml(const char *s, size_t n)
{
	xmlDocPtr d = xmlReadMemory(s, (int)n, "x.xml", NULL, XML_PARSE_NONET |
	    XML_PARSE_NOERROR | XML_PARSE_NOWARNING);

	if (d == NULL)
		abort();
	xmlFreeDoc(d);
}

/* Every .xml and .rels part of an Office package is well-formed. */
static void
check_zip(const char *zip, size_t n)
{
	struct archive		*a = archive_read_new();
	struct archive_entry	*ent;
	const char		*name;
	char			*buf;
	la_int64_t		 sz;
	int			 parts = 0;

	archive_read_support_format_zip(a);
	if (archive_read_open_memory(a, zip, n) != ARCHIVE_OK)
		abort();
	while (archive_read_next_header(a, &ent) == ARCHIVE_OK) {
		name = archive_entry_pathname(ent);
		sz = archive_entry_size(ent);
		parts++;
		if ((buf = malloc((size_t)sz + 1)) == NULL)
			abort();
		if (archive_read_data(a, buf, (size_t)sz) != sz)
			abort();
		if (strstr(name, ".xml") != NULL || strstr(name, ".rels") != NULL)
			check_xml(buf, (size_t)sz);
		free(buf);
	}
	archive_read_free(a);
	if (parts < 4)
		abort();
}

static void run_one(const char *tool, const char *md, size_t n, int flags);

/*
 * The engine, then one PDF, PNG page and DOCX made before any input:
 * fontconfig, Pango and cairo fill their caches on first use, which
 * libFuzzer's per-input leak check would take for a leak.
 */
static void
setup(void)
{
	static const char warm[] = "# T\n\n**b** *i* `c` 月\n\n| a |\n|---|\n| b |";

	conf_defaults(&conf);
	conf.map_size = 8 << 20;
	conf.export_max_pages = 4;
	conf.export_max_output = 4 << 20;
	fuzz_engine_open("fuzz_md_exporter");
	atexit(fuzz_fonts_release);
	run_one("md_to_pdf", warm, sizeof(warm) - 1, 0);
	run_one("md_to_png", warm, sizeof(warm) - 1, 0);
	run_one("md_to_docx", warm, sizeof(warm) - 1, 0);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (eng == NULL)
		setup();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (eng == NULL)
		setup();
	if (size < 1)
		return 0;
	run_one(NULL, (const char *)data + 1, size - 1, data[0]);
	return 0;
}

/* Runs tool (NULL: the one flags picks) on md; checks what comes back. */
static void
run_one(const char *tool_name, const char *md, size_t n, int flags)
{
	static const char *const tools[] = { "md_to_html", "md_to_xml",
	    "md_to_latex", "md_to_csv", "md_to_json", "md_to_xlsx",
	    "md_to_docx", "md_to_pptx", "md_to_pdf", "md_to_md",
	    "md_to_html_text", "md_to_codeblock", "md_to_ipynb",
	    "md_to_png" };
	struct tool_call	 call;
	struct tool_result	 r;
	json_t			*params, *f;
	const char		*tool, *url, *comma;
	char			 err[ENGINE_ERRMAX] = "", *bytes, *clean;
	size_t			 i, len, cn;
	int			 rc;

	tool = tool_name ? tool_name : tools[(flags & 0x7f) %
	    (sizeof(tools) / sizeof(tools[0]))];
	/* a parameter is a JSON string: well-formed UTF-8, as here */
	if ((clean = engine_utf8_clean(md, n, 0, &cn)) == NULL)
		abort();
	params = json_object();
	json_object_set_new(params, "md_text", json_stringn_nocheck(clean,
	    cn));
	free(clean);
	json_object_set_new(params, "output_filename", json_string("f"));
	if (flags & 0x80) {
		json_object_set_new(params, "output_style",
		    json_string("json_array"));
		json_object_set_new(params, "is_compress", json_string("true"));
	}
	memset(&call, 0, sizeof(call));
	memset(&r, 0, sizeof(r));
	call.provider = "bowenliang123/md_exporter/md_exporter";
	call.provider_type = "plugin";
	call.tool = tool;
	call.params = params;
	rc = tool_invoke(eng, &call, err, &r);
	if (rc != 0 && err[0] == '\0')
		abort();
	json_array_foreach(r.files, i, f) {
		url = json_string_value(json_object_get(f, "url"));
		if (url == NULL || (comma = strstr(url, ";base64,")) == NULL ||
		    file_b64_decode(comma + 8, strlen(comma + 8), &bytes,
		    &len) != 0)
			abort();
		if (strcmp(tool, "md_to_xml") == 0)
			check_xml(bytes, len);
		else if (strcmp(tool, "md_to_xlsx") == 0 ||
		    strcmp(tool, "md_to_docx") == 0 ||
		    strcmp(tool, "md_to_pptx") == 0)
			check_zip(bytes, len);
		else if (strcmp(tool, "md_to_pdf") == 0 && (len < 5 ||
		    memcmp(bytes, "%PDF-", 5) != 0))
			abort();
		else if (strcmp(tool, "md_to_png") == 0 && (len < 8 ||
		    (memcmp(bytes, "\x89PNG", 4) != 0 &&
		    memcmp(bytes, "PK", 2) != 0)))
			abort();
		else if (strcmp(tool, "md_to_ipynb") == 0) {
			json_t *nb = json_loadb(bytes, len, 0, NULL);

			if (!json_is_array(json_object_get(nb, "cells")))
				abort();
			json_decref(nb);
		}
		free(bytes);
	}
	tool_result_release(&r);
	json_decref(params);
}
