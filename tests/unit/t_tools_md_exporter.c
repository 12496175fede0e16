/*
 * t_tools_md_exporter.c — the md_exporter provider: md_text read as the
 * plugin reads it (strip, <think>, the ```markdown wrapper, literal \n),
 * the plugin's file names and MIME types, each format read back (HTML
 * escaped and well-formed as XML, CSV and JSON exact, the DOCX, XLSX and
 * PPTX zips' parts well-formed with the content asked for, the PDF's
 * pages), the limits, and (when LibreOffice is installed) the packages
 * opened by LibreOffice. The tools make no request: no fake is started.
 */
#include <pthread.h>

#include "tap.h"
#include "t_node_run.h"
#include "t_tools_fake.h"
#include "t_tools_files.h"

#define P "bowenliang123/md_exporter/md_exporter"

/* Runs tool with md_text (and extra params, stolen, may be NULL). */
static int
md_call(const char *tool, const char *md, json_t *extra,
    struct tool_result *r, char *err)
{
	json_t *p = extra ? extra : json_object();

	json_object_set_new(p, "md_text", json_string(md));
	return tool_call_simple(P, "plugin", tool, p, r, err);
}

/* The only file of a call as a string (malloc'd) and its object. */
static char *
one_file(const char *tool, const char *md, json_t *extra, size_t *len,
    const char **name, const char **mime)
{
	static struct tool_result	 r;
	static int			 held;
	char				 err[ENGINE_ERRMAX], *data = NULL;
	const json_t			*f;

	if (held)
		tool_result_release(&r);
	held = 1;
	*name = *mime = NULL;
	*len = 0;
	if (md_call(tool, md, extra, &r, err) != 0)
		return NULL;
	if ((f = res_file(&r, 0, &data, len)) == NULL) {
		printf("# %s: no file; text '%s'\n", tool, res_text(&r));
		return NULL;
	}
	*name = json_string_value(json_object_get(f, "filename"));
	*mime = json_string_value(json_object_get(f, "mime_type"));
	return data;
}

static void
test_registry(void)
{
	struct tool_call	 c;
	json_t			*all = NULL;
	char			 err[ENGINE_ERRMAX];
	size_t			 i;
	const char		*want[] = { "md_to_docx", "md_to_pdf",
				    "md_to_html", "md_to_pptx", "md_to_xlsx",
				    "md_to_csv", "md_to_json", "md_to_md" };
	int			 found;

	CHECK(tool_provider_find(P, "plugin") == &tool_provider_md_exporter);
	CHECK(tool_provider_find("md_exporter", "builtin") ==
	    &tool_provider_md_exporter);
	memset(&c, 0, sizeof(c));
	c.provider = P;
	c.provider_type = "plugin";
	CHECK(tool_describe(tn_engine, &c, err, &all) == 0);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		size_t		 j;
		json_t		*t;

		found = 0;
		json_array_foreach(all, j, t)
			if (strcmp(json_string_value(json_object_get(t,
			    "name")), want[i]) == 0 && json_object_get(
			    json_object_get(json_object_get(t, "parameters"),
			    "properties"), "md_text") != NULL)
				found = 1;
		CHECK(found);
	}
	json_decref(all);
}

static void
test_md_text(void)
{
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX], *d;
	const char		*name, *mime;
	size_t			 len;

	CHECK_INT(md_call("md_to_docx", "  \n ", NULL, &r, err), ENGINE_EINVAL);
	CHECK_STR(err, "Empty input md_text");
	tool_result_release(&r);
	/* emptied by <think> only: an empty document, as the plugin makes */
	CHECK_INT(md_call("md_to_html", "<think>plan</think>", NULL, &r, err),
	    0);
	CHECK_INT(json_array_size(r.files), 1);
	tool_result_release(&r);
	CHECK_INT(tool_call_simple(P, "plugin", "md_to_html", NULL, &r, err),
	    ENGINE_EINVAL);
	tool_result_release(&r);

	d = one_file("md_to_md", "```markdown\n<think>x</think># T\\nbody\n```",
	    json_pack("{s:s}", "output_filename", " report "), &len, &name,
	    &mime);
	CHECK_STR(d, "\n# T\nbody\n");
	CHECK_STR(name, "report.md");
	CHECK_STR(mime, "text/markdown");
	free(d);
	d = one_file("md_to_md", "x", json_pack("{s:s}", "output_filename",
	    "Notes.MD"), &len, &name, &mime);
	CHECK_STR(name, "Notes.MD");
	free(d);
	d = one_file("md_to_md", "x", NULL, &len, &name, &mime);
	CHECK_STR(name, "file.md");
	free(d);
}

static void
test_html_xml_latex(void)
{
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX], *d, *x;
	const char		*name, *mime;
	const char		*md = "# Title & 1 < 2\n\nText with **bold**, "
				    "*it*, `a<b`, ~~gone~~ and "
				    "[a link](https://example.com/?a=1&b=2)."
				    "\n\n<script>alert(1)</script>\n\n"
				    "| Name | Age |\n|---|---|\n| Al & Bo | 30 "
				    "|\n\n- one\n- two\n";
	size_t			 len;

	d = one_file("md_to_html", md, json_pack("{s:s}", "output_filename",
	    "page"), &len, &name, &mime);
	CHECK_STR(name, "page.html");
	CHECK_STR(mime, "text/html");
	CHECK(d && strstr(d, "<h1>Title &amp; 1 &lt; 2</h1>") != NULL);
	CHECK(d && strstr(d, "<strong>bold</strong>") != NULL);
	CHECK(d && strstr(d, "<code>a&lt;b</code>") != NULL);
	CHECK(d && strstr(d, "<del>gone</del>") != NULL);
	CHECK(d && strstr(d, "href=\"https://example.com/?a=1&amp;b=2\"") !=
	    NULL);
	CHECK(d && strstr(d, "<script>") == NULL);	/* raw HTML omitted */
	CHECK(d && strstr(d, "<td>Al &amp; Bo</td>") != NULL);
	CHECK(d && strstr(d, "<li>two</li>") != NULL);
	CHECK(md_call("md_to_html_text", md, NULL, &r, err) == 0);
	CHECK_STR(res_text(&r), d ? d : "");
	CHECK(r.files == NULL);
	tool_result_release(&r);
	free(d);

	x = one_file("md_to_xml", md, NULL, &len, &name, &mime);
	CHECK_STR(mime, "text/xml");
	CHECK_STR(name, "file.xml");
	CHECK(xml_ok(x));
	CHECK(x && strncmp(x, "<?xml version='1.0' encoding='UTF-8'?>", 38) ==
	    0);
	free(x);

	x = one_file("md_to_latex", md, NULL, &len, &name, &mime);
	CHECK_STR(mime, "application/x-tex");
	CHECK_STR(name, "file.tex");
	CHECK(x && strstr(x, "\\section{Title \\& 1 \\textless{} 2}") != NULL);
	CHECK(x && strstr(x, "\\textbf{bold}") != NULL);
	free(x);
}

static const char tables_md[] =
    "# Staff\n\nIntro.\n\n"
    "| Name | Age | City |\n|------|-----|------|\n"
    "| Alice | 30 | New York |\n| Bob, Jr. | 25 | \"Quoted\" |\n"
    "| Ann/Lee | 7 |\n\n"
    "## Second sheet with a long heading over thirty characters\n\n"
    "| k | k |\n|---|---|\n| 1.5 | x |\n";

static void
test_csv_json(void)
{
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX], *d = NULL;
	const json_t		*f;
	size_t			 len;

	CHECK(md_call("md_to_csv", tables_md, json_pack("{s:s}",
	    "output_filename", "staff"), &r, err) == 0);
	CHECK_INT(json_array_size(r.files), 2);
	f = res_file(&r, 0, &d, &len);
	CHECK_STR(json_string_value(json_object_get(f, "filename")),
	    "staff_1.csv");
	CHECK_STR(json_string_value(json_object_get(f, "mime_type")),
	    "text/csv");
	CHECK_STR(d, "Name,Age,City\nAlice,30,New York\n\"Bob, Jr.\",25,"
	    "\"\"\"Quoted\"\"\"\nAnn/Lee,7,\n");
	free(d);
	f = res_file(&r, 1, &d, &len);
	CHECK_STR(json_string_value(json_object_get(f, "filename")),
	    "staff_2.csv");
	CHECK_STR(d, "k,k.1\n1.5,x\n");	/* pandas renames a repeated column */
	free(d);
	tool_result_release(&r);

	CHECK(md_call("md_to_json", tables_md, NULL, &r, err) == 0);
	f = res_file(&r, 0, &d, &len);
	CHECK_STR(json_string_value(json_object_get(f, "mime_type")),
	    "application/json");
	CHECK_STR(d, "{\"Name\":\"Alice\",\"Age\":\"30\",\"City\":\"New York\"}\n"
	    "{\"Name\":\"Bob, Jr.\",\"Age\":\"25\",\"City\":\"\\\"Quoted\\\"\"}\n"
	    "{\"Name\":\"Ann\\/Lee\",\"Age\":\"7\",\"City\":\"\"}\n");
	free(d);
	tool_result_release(&r);
	CHECK(md_call("md_to_json", "| a |\n|---|\n| 1 |\n| 2 |", json_pack(
	    "{s:s,s:s}", "output_style", "json_array", "output_filename", "t"),
	    &r, err) == 0);
	f = res_file(&r, 0, &d, &len);
	CHECK_STR(json_string_value(json_object_get(f, "filename")), "t.json");
	CHECK_STR(d, "[{\"a\":\"1\"},{\"a\":\"2\"}]");
	free(d);
	tool_result_release(&r);

	/* text before the table on one line: the plugin's line break */
	CHECK(md_call("md_to_csv", "Result: | a | b |\n|---|---|\n| 1 | 2 |",
	    NULL, &r, err) == 0);
	res_file(&r, 0, &d, &len);
	CHECK_STR(d, "a,b\n1,2\n");
	free(d);
	tool_result_release(&r);

	CHECK(md_call("md_to_csv", "no table here", NULL, &r, err) == 0);
	CHECK_STR(res_text(&r), "Failed to convert markdown text to CSV file, "
	    "error: Failed to parse markdown to tables, exception: No "
	    "available tables parsed from markdown text");
	CHECK(r.files == NULL);
	tool_result_release(&r);
}

static void
test_xlsx(void)
{
	char		*d, *names = NULL, *wb, *s1, *s2, *ct;
	const char	*name, *mime;
	size_t		 len;

	d = one_file("md_to_xlsx", tables_md, NULL, &len, &name, &mime);
	CHECK_STR(mime, "application/vnd.openxmlformats-officedocument."
	    "spreadsheetml.sheet");
	CHECK_STR(name, "file.xlsx");
	wb = zip_part(d, len, "xl/workbook.xml", &names);
	CHECK(names && strstr(names, "[Content_Types].xml\n_rels/.rels\n"
	    "xl/workbook.xml\nxl/_rels/workbook.xml.rels\nxl/styles.xml\n"
	    "xl/worksheets/sheet1.xml\nxl/worksheets/sheet2.xml\n") != NULL);
	CHECK(xml_ok(wb));
	CHECK(wb && strstr(wb, "<sheet name=\"Staff\" sheetId=\"1\"") != NULL);
	CHECK(wb && strstr(wb, "<sheet name=\"Second sheet with a long headi\""
	    " sheetId=\"2\"") != NULL);
	s1 = zip_part(d, len, "xl/worksheets/sheet1.xml", NULL);
	CHECK(xml_ok(s1));
	CHECK(s1 && strstr(s1, "<c r=\"B2\" t=\"inlineStr\"><is><t "
	    "xml:space=\"preserve\">30</t></is></c>") != NULL);
	CHECK(s1 && strstr(s1, "&quot;Quoted&quot;") != NULL);
	CHECK_INT(count_of(s1, "<row "), 4);
	ct = zip_part(d, len, "[Content_Types].xml", NULL);
	CHECK(xml_ok(ct));
	CHECK(part_ok(d, len, "xl/styles.xml"));
	free(d);
	free(names);
	free(wb);
	free(s1);
	free(ct);
	d = one_file("md_to_xlsx", tables_md, json_pack("{s:s}",
	    "force_text_value", "false"), &len, &name, &mime);
	s1 = zip_part(d, len, "xl/worksheets/sheet1.xml", NULL);
	s2 = zip_part(d, len, "xl/worksheets/sheet2.xml", NULL);
	CHECK(s1 && strstr(s1, "<c r=\"B2\"><v>30</v></c>") != NULL);
	CHECK(s2 && strstr(s2, "<c r=\"A2\"><v>1.5</v></c>") != NULL);
	free(d);
	free(s1);
	free(s2);
}

static const char doc_md[] =
    "# Report\n\nFirst *para* with **bold** & `code` <x>.\n\n"
    "## Lists\n\n- a\n- b\n  1. nested one\n  2. nested two\n\n"
    "3. three\n4. four\n\n> quoted\n\n```c\nint x = 1 < 2;\nreturn x;\n```\n"
    "\n---\n\nSee [site](https://example.com/a?b=1&c=2).\n\n"
    "| H1 | H2 |\n|----|----|\n| c1 | c2 |\n| c3 |\n\n"
    "# 月球\n月球是一个围绕地球运行的星球。\n";

static void
test_docx(void)
{
	char		*d, *names = NULL, *doc, *rels, *num, *sty;
	const char	*name, *mime;
	size_t		 len;

	d = one_file("md_to_docx", doc_md, json_pack("{s:s}",
	    "output_filename", "out.docx"), &len, &name, &mime);
	CHECK_STR(mime, "application/vnd.openxmlformats-officedocument."
	    "wordprocessingml.document");
	CHECK_STR(name, "out.docx");
	doc = zip_part(d, len, "word/document.xml", &names);
	CHECK_STR(names, "[Content_Types].xml\n_rels/.rels\nword/document.xml\n"
	    "word/_rels/document.xml.rels\nword/styles.xml\n"
	    "word/numbering.xml\n");
	rels = zip_part(d, len, "word/_rels/document.xml.rels", NULL);
	num = zip_part(d, len, "word/numbering.xml", NULL);
	sty = zip_part(d, len, "word/styles.xml", NULL);
	CHECK(xml_ok(doc));
	CHECK(xml_ok(rels));
	CHECK(xml_ok(num));
	CHECK(xml_ok(sty));
	CHECK(part_ok(d, len, "[Content_Types].xml"));
	CHECK_INT(count_of(doc, "<w:pStyle w:val=\"Heading1\"/>"), 2);
	CHECK_INT(count_of(doc, "<w:pStyle w:val=\"Heading2\"/>"), 1);
	CHECK(doc && strstr(doc, "<w:b/></w:rPr><w:t xml:space=\"preserve\">"
	    "bold</w:t>") != NULL);
	CHECK(doc && strstr(doc, " &amp; </w:t>") != NULL);
	CHECK(doc && strstr(doc, "int x = 1 &lt; 2;") != NULL);
	CHECK_INT(count_of(doc, "<w:pStyle w:val=\"Code\"/>"), 2);
	CHECK(doc && strstr(doc, "<w:ilvl w:val=\"1\"/>") != NULL);
	CHECK(doc && strstr(doc, "<w:hyperlink r:id=\"rIdL1\">") != NULL);
	CHECK(rels && strstr(rels, "Target=\"https://example.com/a?b=1&amp;"
	    "c=2\" TargetMode=\"External\"") != NULL);
	CHECK(num && strstr(num, "<w:startOverride w:val=\"3\"/>") != NULL);
	CHECK_INT(count_of(doc, "<w:tc>"), 6);	/* the short row padded */
	CHECK(doc && strstr(doc, "月球是一个围绕地球运行的星球。") != NULL);
	CHECK(doc && strstr(doc, "<w:pStyle w:val=\"Quote\"/>") != NULL);
	free(d);
	free(names);
	free(doc);
	free(rels);
	free(num);
	free(sty);
}

static void
test_pdf_pptx(void)
{
	struct tool_result	 r;
	struct dbuf		 big = { 0 };
	char			 err[ENGINE_ERRMAX], *d, *names = NULL, *s;
	const char		*name, *mime;
	size_t			 len;
	int			 i;

	d = one_file("md_to_pdf", doc_md, NULL, &len, &name, &mime);
	CHECK_STR(mime, "application/pdf");
	CHECK_STR(name, "file.pdf");
	CHECK(d && len > 1000 && memcmp(d, "%PDF-", 5) == 0);
	CHECK(d && memmem(d, len, "%%EOF", 5) != NULL);
	/* the Chinese heading and line: fontconfig finds a font that has
	 * them, embedded in the PDF */
	if (system("fc-list 2>/dev/null | grep -qi wenquanyi") == 0)
		CHECK(d && memmem(d, len, "WenQuanYi", 9) != NULL);
	else
		SKIP("fonts-wqy-microhei is not installed: Chinese text is "
		    "drawn without a font that has it");
	free(d);
	for (i = 0; i < 400; i++)
		dbuf_addf(&big, "Paragraph %d of a long document, long enough "
		    "to wrap onto a second line of the page it is on.\n\n", i);
	d = one_file("md_to_pdf", big.p, NULL, &len, &name, &mime);
	/* cairo writes one /Type /Page object per page */
	CHECK(d && count_mem(d, len, "/Type /Page\n") + count_mem(d, len,
	    "/Type /Page ") > 5);
	free(d);
	tn_conf.export_max_pages = 2;
	CHECK_INT(md_call("md_to_pdf", big.p, NULL, &r, err), ENGINE_ELIMIT);
	CHECK(strstr(err, "export.max_pages") != NULL);
	tool_result_release(&r);
	tn_conf.export_max_pages = 3;	/* slides too */
	CHECK_INT(md_call("md_to_pptx", "# a\n\nx\n\n# b\n\nx\n\n# c\n\nx\n\n"
	    "# d\n\nx\n", NULL, &r, err), ENGINE_ELIMIT);
	CHECK(strstr(err, "export.max_pages") != NULL);
	tool_result_release(&r);
	tn_conf.export_max_pages = 500;
	dbuf_free(&big);

	d = one_file("md_to_pptx", "# Deck\n\n## One\n\n- a\n- b\n\n## Two\n\n"
	    "Text & more\n", NULL, &len, &name, &mime);
	CHECK_STR(mime, "application/vnd.openxmlformats-officedocument."
	    "presentationml.presentation");
	CHECK_STR(name, "file.pptx");
	s = zip_part(d, len, "ppt/presentation.xml", &names);
	CHECK(xml_ok(s));
	CHECK(names && strstr(names, "ppt/slides/slide3.xml") != NULL);
	CHECK(names && strstr(names, "ppt/slides/slide4.xml") == NULL);
	free(s);
	s = zip_part(d, len, "ppt/slides/slide3.xml", NULL);
	CHECK(xml_ok(s));
	CHECK(s && strstr(s, "<a:t>Two</a:t>") != NULL);
	CHECK(s && strstr(s, "<a:t>Text &amp; more</a:t>") != NULL);
	free(s);
	CHECK(part_ok(d, len, "ppt/theme/theme1.xml"));
	CHECK(part_ok(d, len, "ppt/slideMasters/slideMaster1.xml"));
	free(names);
	free(d);
}

static void
test_limits(void)
{
	struct tool_result	 r;
	struct dbuf		 b = { 0 };
	char			 err[ENGINE_ERRMAX];
	int			 i;

	for (i = 0; i < 3000; i++)
		dbuf_addstr(&b, "| cell | another cell |\n");
	tn_conf.export_max_output = 8192;
	CHECK_INT(md_call("md_to_html", b.p, NULL, &r, err), ENGINE_ELIMIT);
	CHECK(strstr(err, "export.max_output") != NULL);
	tool_result_release(&r);
	CHECK_INT(md_call("md_to_docx", b.p, NULL, &r, err), ENGINE_ELIMIT);
	CHECK(strstr(err, "export.max_output") != NULL);
	tool_result_release(&r);
	tn_conf.export_max_output = 32 << 20;
	tn_conf.export_max_input = 1024;
	CHECK_INT(md_call("md_to_md", b.p, NULL, &r, err), ENGINE_ELIMIT);
	CHECK(strstr(err, "export.max_input") != NULL);
	tool_result_release(&r);
	tn_conf.export_max_input = 4 << 20;
	dbuf_free(&b);
	/* deep nesting is bounded, not a crash */
	for (i = 0; i < 5000; i++)
		dbuf_addstr(&b, "> ");
	dbuf_addstr(&b, "deep *and **deeper***\n");
	CHECK(md_call("md_to_docx", b.p, NULL, &r, err) == 0);
	CHECK_INT(json_array_size(r.files), 1);
	tool_result_release(&r);
	CHECK(md_call("md_to_pdf", b.p, NULL, &r, err) == 0);
	tool_result_release(&r);
	dbuf_free(&b);
}

static void
test_codeblock_png_ipynb(void)
{
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX], *d = NULL, *names = NULL;
	char			*part;
	const char		*md = "# Code\n\n```python\nprint(1)\n```\n\n"
				    "text\n\n```\n  plain  \n```\n\n~~~sh\n"
				    "not fenced with backticks\n~~~\n";
	const json_t		*f;
	json_t			*nb;
	unsigned		 w = 0, h = 0;
	size_t			 len;

	CHECK(md_call("md_to_codeblock", md, NULL, &r, err) == 0);
	CHECK_INT(json_array_size(r.files), 2);
	f = res_file(&r, 0, &d, &len);
	CHECK_STR(json_string_value(json_object_get(f, "filename")),
	    "code_1.py");
	CHECK_STR(json_string_value(json_object_get(f, "mime_type")),
	    "text/x-python");
	CHECK_STR(d, "print(1)");
	free(d);
	f = res_file(&r, 1, &d, &len);
	CHECK_STR(json_string_value(json_object_get(f, "filename")),
	    "code_2.txt");
	CHECK_STR(d, "plain");	/* stripped, as the plugin strips */
	free(d);
	tool_result_release(&r);
	CHECK(md_call("md_to_codeblock", md, json_pack("{s:s}", "is_compress",
	    "true"), &r, err) == 0);
	f = res_file(&r, 0, &d, &len);
	CHECK_STR(json_string_value(json_object_get(f, "filename")),
	    "file.zip");
	CHECK_STR(json_string_value(json_object_get(f, "mime_type")),
	    "application/zip");
	part = zip_part(d, len, "code_1.py", &names);
	CHECK_STR(names, "code_1.py\ncode_2.txt\n");
	CHECK_STR(part, "print(1)");
	free(part);
	free(names);
	free(d);
	tool_result_release(&r);
	CHECK_INT(md_call("md_to_codeblock", "no code", NULL, &r, err),
	    ENGINE_EINVAL);
	CHECK_STR(err, "No code blocks found in the input text");
	tool_result_release(&r);

	CHECK(md_call("md_to_png", "# Page\n\nOne page.", NULL, &r, err) ==
	    0);
	f = res_file(&r, 0, &d, &len);
	CHECK_STR(json_string_value(json_object_get(f, "filename")),
	    "output.png");
	CHECK(png_size(d, len, &w, &h) == 0 && w == 1190 && h == 1683);
	free(d);
	tool_result_release(&r);
	{
		struct dbuf big = { 0 };
		int i;

		for (i = 0; i < 120; i++)
			dbuf_addf(&big, "Paragraph %d.\n\n", i);
		CHECK(md_call("md_to_png", big.p, json_pack("{s:s,s:s}",
		    "output_filename", "pages", "is_compress", "true"), &r,
		    err) == 0);
		dbuf_free(&big);
	}
	f = res_file(&r, 0, &d, &len);
	CHECK_STR(json_string_value(json_object_get(f, "filename")),
	    "pages.zip");
	part = zip_part(d, len, "pages_page2.png", &names);
	CHECK(names && strncmp(names, "pages_page1.png\npages_page2.png\n",
	    32) == 0);
	CHECK(part && png_size(part, 1683, &w, &h) == 0 && w == 1190);
	free(part);
	free(names);
	free(d);
	tool_result_release(&r);

	CHECK(md_call("md_to_ipynb", md, NULL, &r, err) == 0);
	f = res_file(&r, 0, &d, &len);
	CHECK_STR(json_string_value(json_object_get(f, "filename")),
	    "file.ipynb");
	CHECK_STR(json_string_value(json_object_get(f, "mime_type")),
	    "application/x-ipynb+json");
	nb = json_loads(d ? d : "", 0, NULL);
	CHECK_INT(json_integer_value(json_object_get(nb, "nbformat")), 4);
	CHECK_STR(tn_dump(json_object_get(nb, "cells")),
	    "[{\"cell_type\":\"markdown\",\"metadata\":{},\"source\":"
	    "[\"# Code\"]},{\"cell_type\":\"code\",\"execution_count\":"
	    "null,\"metadata\":{},\"outputs\":[],\"source\":[\"print(1)\"]},"
	    "{\"cell_type\":\"markdown\",\"metadata\":{},\"source\":"
	    "[\"text\"]},{\"cell_type\":\"code\",\"execution_count\":null,"
	    "\"metadata\":{},\"outputs\":[],\"source\":[\"  plain  \"]},"
	    "{\"cell_type\":\"markdown\",\"metadata\":{},\"source\":"
	    "[\"~~~sh\\n\",\"not fenced with backticks\\n\",\"~~~\"]}]");
	json_decref(nb);
	free(d);
	tool_result_release(&r);
}

/* Serving threads run tools side by side: Pango, cairo, librsvg and
 * cmark-gfm are used from several threads at once, and each thread's
 * files are the same bytes as a lone call's. */
struct worker {
	int	 ok;
	size_t	 pdf_len, png_len;
	char	*pdf;
};

static void *
work(void *arg)
{
	struct worker		*w = arg;
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX], *d;
	size_t			 len;
	int			 i;

	w->ok = 1;
	for (i = 0; i < 4; i++) {
		if (md_call("md_to_pdf", doc_md, NULL, &r, err) != 0 ||
		    res_file(&r, 0, &d, &len) == NULL) {
			w->ok = 0;
			tool_result_release(&r);
			break;
		}
		free(w->pdf);
		w->pdf = d;
		w->pdf_len = len;
		tool_result_release(&r);
		if (tool_call_simple("chart", "builtin", i % 2 ? "pie_chart" :
		    "bar_chart", json_pack("{s:s,s:s}", "data", "1;2;3",
		    i % 2 ? "categories" : "x_axis", "a;b;c"), &r, err) != 0 ||
		    res_file(&r, 0, &d, &len) == NULL)
			w->ok = 0;
		else
			free(d);
		tool_result_release(&r);
		if (md_call("md_to_docx", doc_md, NULL, &r, err) != 0 ||
		    r.files == NULL)
			w->ok = 0;
		tool_result_release(&r);
	}
	return NULL;
}

static void
test_threads(void)
{
	struct worker	 w[4];
	pthread_t	 t[4];
	char		*one;
	const char	*name, *mime;
	size_t		 len, i;
	int		 started[4];

	one = one_file("md_to_pdf", doc_md, NULL, &len, &name, &mime);
	memset(w, 0, sizeof(w));
	for (i = 0; i < 4; i++)
		started[i] = pthread_create(&t[i], NULL, work, &w[i]) == 0;
	for (i = 0; i < 4; i++) {
		if (started[i])
			pthread_join(t[i], NULL);
		CHECK(started[i] && w[i].ok);
		CHECK(one != NULL && w[i].pdf_len == len && w[i].pdf != NULL &&
		    memcmp(w[i].pdf, one, len) == 0);
		free(w[i].pdf);
	}
	free(one);
}

/* A tool node of a workflow (as a Dify export writes it) through the real
 * executor: the file is the node's `files` output. */
static void
test_node(void)
{
	struct tn_run	 r;
	const json_t	*f;

	if (tn_run1(json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:{s:s,s:s},s:{s:s,"
	    "s:s}},s:{}}", "type", "tool", "provider_id", P, "provider_name",
	    "md_exporter", "provider_type", "builtin", "tool_name",
	    "md_to_docx", "tool_parameters", "md_text", "type", "mixed",
	    "value", "# Hi\n\nfrom a node", "output_filename", "type", "mixed",
	    "value", "r", "tool_configurations"), json_pack("{s:[s,s],s:[s,s]}",
	    "text", "n1", "text", "files", "n1", "files"), NULL, &r) != 0) {
		CHECK(0);
		return;
	}
	CHECK_STR(r.status, "succeeded");
	f = json_array_get(json_object_get(r.outputs, "files"), 0);
	CHECK_STR(json_string_value(json_object_get(f, "filename")), "r.docx");
	CHECK_STR(json_string_value(json_object_get(f, "extension")),
	    ".docx");
	CHECK_STR(json_string_value(json_object_get(f, "type")), "document");
	tn_release(&r);
}

/* LibreOffice opens what we write (converted to PDF); a counted skip
 * where it is not installed. */
static void
test_libreoffice(void)
{
	static const struct { const char *tool, *ext; } t[] = {
		{ "md_to_docx", "docx" }, { "md_to_xlsx", "xlsx" },
		{ "md_to_pptx", "pptx" },
	};
	char		 dir[] = "/tmp/t_mdx.XXXXXX", path[256], cmd[768], *d;
	const char	*name, *mime;
	size_t		 len, i;
	FILE		*f;

	if (system("command -v soffice >/dev/null 2>&1") != 0) {
		for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
			SKIP("LibreOffice (soffice) is not installed: the "
			    "packages were not opened by it");
		return;
	}
	if (mkdtemp(dir) == NULL) {
		CHECK(0);
		return;
	}
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		d = one_file(t[i].tool, strcmp(t[i].ext, "xlsx") == 0 ?
		    tables_md : doc_md, NULL, &len, &name, &mime);
		snprintf(path, sizeof(path), "%s/in.%s", dir, t[i].ext);
		if (d != NULL && (f = fopen(path, "wb")) != NULL) {
			fwrite(d, 1, len, f);
			fclose(f);
		}
		free(d);
		snprintf(cmd, sizeof(cmd), "cd %s && HOME=%s timeout 120 soffice "
		    "--headless --convert-to pdf in.%s >/dev/null 2>&1 && "
		    "test -s in.pdf && rm -f in.pdf", dir, dir, t[i].ext);
		if (!CHECK(system(cmd) == 0))
			printf("# soffice did not convert %s\n", t[i].ext);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
}

int
main(void)
{
	tn_open();
	test_registry();
	test_md_text();
	test_html_xml_latex();
	test_csv_json();
	test_xlsx();
	test_docx();
	test_pdf_pptx();
	test_limits();
	test_codeblock_png_ipynb();
	test_threads();
	test_node();
	test_libreoffice();
	tn_close();
	tf_fonts_release();
	return tap_done();
}
