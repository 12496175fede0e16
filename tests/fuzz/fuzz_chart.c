/*
 * fuzz_chart.c — the chart provider on arbitrary data: the first byte
 * picks the chart (bar, line, pie) and the image (SVG, or PNG when its
 * high bit is set), the rest is data, then after a NUL byte the labels.
 * Nothing may crash, leak or hang; a failure says why; an SVG is
 * well-formed XML without NaN; a PNG starts as one.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>

#include "fuzz_engine.h"
#include "fuzz_fonts.h"
#include "engine/internal.h"
#include "engine/tools/tools.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int	LLVMFuzzerInitialize(int *argc, char ***argv);

/* 1 when an attribute of n or below holds "nan" or "inf" (a coordinate
 * that was not a number). Labels are text, never attributes. */
static int
bad_number(xmlNodePtr n)
{
	xmlAttrPtr	 a;
	xmlChar		*v;
	int		 bad = 0;

	for (; n != NULL && !bad; n = n->next) {
		for (a = n->properties; a != NULL && !bad; a = a->next) {
			v = xmlNodeGetContent((xmlNodePtr)a);
			bad = v != NULL && (strstr((char *)v, "nan") != NULL ||
			    strstr((char *)v, "inf") != NULL);
			xmlFree(v);
		}
		if (!bad)
			bad = bad_number(n->children);
	}
	return bad;
}

static void chart_one(const char *tool, const char *data, size_t dl,
    const char *labels, size_t ll, int png);

/* The engine, then a PNG chart made before any input: fontconfig, Pango
 * and cairo fill their caches on first use, which libFuzzer's per-input
 * leak check would take for a leak. */
static void
setup(void)
{
	conf_defaults(&conf);
	conf.map_size = 8 << 20;
	conf.export_max_points = 2000;
	fuzz_engine_open("fuzz_chart");
	atexit(fuzz_fonts_release);
	chart_one("bar_chart", "1;2", 3, "a;月", 5, 1);
	chart_one("pie_chart", "1;2", 3, "a;月", 5, 1);
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
	static const char *const tools[] = { "bar_chart", "line_chart",
	    "pie_chart" };
	const char	*nul;
	size_t		 dl;

	if (eng == NULL)
		setup();
	if (size < 1)
		return 0;
	nul = memchr(data + 1, '\0', size - 1);
	dl = nul ? (size_t)(nul - (const char *)data - 1) : size - 1;
	chart_one(tools[(data[0] & 0x7f) % 3], (const char *)data + 1, dl, nul ?
	    nul + 1 : NULL, nul ? size - 1 - dl - 1 : 0, (data[0] & 0x80) != 0);
	return 0;
}

/* One chart of data (and labels, may be NULL); checks what comes back.
 * Parameters reach a tool as JSON strings, valid UTF-8: other bytes are
 * not tried. */
static void
chart_one(const char *tool, const char *data, size_t dl, const char *labels,
    size_t ll, int png)
{
	struct tool_call	 call;
	struct tool_result	 r;
	json_t			*params, *f, *dv, *lv = NULL;
	const char		*url, *comma;
	char			 err[ENGINE_ERRMAX] = "", *bytes;
	size_t			 i, len;
	int			 rc;
	xmlDocPtr		 doc;

	if ((dv = json_stringn(data, dl)) == NULL || (labels != NULL &&
	    (lv = json_stringn(labels, ll)) == NULL)) {
		json_decref(dv);
		return;
	}
	params = json_object();
	json_object_set_new(params, "data", dv);
	if (lv != NULL)
		json_object_set_new(params, strcmp(tool, "pie_chart") == 0 ?
		    "categories" : "x_axis", lv);
	json_object_set_new(params, "title", json_string("t <&>"));
	json_object_set_new(params, "image_format", json_string(png ? "png" :
	    "svg"));
	memset(&call, 0, sizeof(call));
	memset(&r, 0, sizeof(r));
	call.provider = "chart";
	call.provider_type = "builtin";
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
		if (png && (len < 8 || memcmp(bytes, "\x89PNG", 4) != 0))
			abort();
		if (!png) {
			doc = xmlReadMemory(bytes, (int)len, "c.svg", NULL,
			    XML_PARSE_NONET | XML_PARSE_NOERROR |
			    XML_PARSE_NOWARNING);
			if (doc == NULL || bad_number(xmlDocGetRootElement(
			    doc)))
				abort();
			xmlFreeDoc(doc);
		}
		free(bytes);
	}
	tool_result_release(&r);
	json_decref(params);
}
