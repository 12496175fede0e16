/*
 * t_node_docx.c — the document-extractor node through the real executor:
 * a .docx made here with libarchive, html, xml, csv, json, text, arrays of
 * files, refusals; and the extractor's pieces on damaged input.
 */
#include <archive.h>
#include <archive_entry.h>

#include "tap.h"
#include "t_node_run.h"
#include "../../engine/nodes/document_extractor.c"

/* The readers through their API, as the node calls them. */
static int
doc_text(const char *ext, const char *data, size_t len, char *err,
    size_t errsz, char **out)
{
	struct doc	d;
	int		rc;

	*out = NULL;
	if ((rc = doc_extract(ext, data, len, NULL, &d, err, errsz)) == 0) {
		*out = d.text;
		d.text = NULL;
	}
	doc_release(&d);
	return rc;
}

/* A zip of (name, text) pairs, in memory. *out malloc'd. */
static size_t
make_zip(const char *const *entries, size_t n, char **out)
{
	struct archive		*a = archive_write_new();
	struct archive_entry	*e;
	size_t			 cap = 1 << 20, used = 0, i;

	*out = malloc(cap);
	archive_write_set_format_zip(a);
	archive_write_open_memory(a, *out, cap, &used);
	for (i = 0; i + 1 < n; i += 2) {
		e = archive_entry_new();
		archive_entry_set_pathname(e, entries[i]);
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0644);
		archive_entry_set_size(e, (la_int64_t)strlen(entries[i + 1]));
		archive_write_header(a, e);
		archive_write_data(a, entries[i + 1], strlen(entries[i + 1]));
		archive_entry_free(e);
	}
	archive_write_close(a);
	archive_write_free(a);
	return used;
}

static const char docxml[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
    "<w:document xmlns:w=\"http://schemas.openxmlformats.org/"
    "wordprocessingml/2006/main\"><w:body>"
    "<w:p><w:r><w:t>Hello </w:t></w:r><w:r><w:rPr><w:b/></w:rPr>"
    "<w:t>world</w:t></w:r></w:p>"
    "<w:p><w:r><w:t>a</w:t><w:tab/><w:t>b</w:t><w:br/><w:t>c</w:t></w:r>"
    "<w:del><w:r><w:delText>gone</w:delText></w:r></w:del></w:p>"
    "<w:tbl><w:tr><w:tc><w:p><w:r><w:t>H1</w:t></w:r></w:p></w:tc>"
    "<w:tc><w:p><w:r><w:t>H2</w:t></w:r></w:p></w:tc></w:tr>"
    "<w:tr><w:tc><w:p><w:r><w:t>x</w:t></w:r></w:p><w:p><w:r><w:t>y</w:t>"
    "</w:r></w:p></w:tc><w:tc><w:p><w:hyperlink><w:r><w:t>link</w:t>"
    "</w:r></w:hyperlink></w:p></w:tc></w:tr></w:tbl>"
    "<w:p><w:r><w:t>Caf\xc3\xa9 &amp; end</w:t></w:r></w:p>"
    "<w:sectPr/></w:body></w:document>";

static json_t *
de_node(void)
{
	return json_pack("{s:s,s:[s,s]}", "type", "document-extractor",
	    "variable_selector", "start", "f");
}

static json_t *
outs(void)
{
	return json_pack("{s:[s,s]}", "text", "n1", "text");
}

/* Runs the extractor on one file; returns the run (release it). */
static void
run_file(const char *name, const char *mime, const void *data, size_t len,
    struct tn_run *r)
{
	if (tn_run1(de_node(), outs(), json_pack("{s:o}", "f", tn_file(name,
	    mime, data, len)), r) != 0)
		printf("# run did not start\n");
}

static void
test_docx(void)
{
	const char *const ents[] = { "[Content_Types].xml", "<Types/>",
		"word/document.xml", docxml };
	struct tn_run	 r;
	char		*zip;
	size_t		 n = make_zip(ents, 4, &zip);

	run_file("report.docx", "application/vnd.openxmlformats-"
	    "officedocument.wordprocessingml.document", zip, n, &r);
	CHECK_STR(r.status, "succeeded");
	CHECK_STR(tn_out_str(&r, "text"), "Hello world\na\tb\nc\n"
	    "| H1 | H2 |\n| --- | --- |\n| x y | link |\n\n"
	    "Caf\xc3\xa9 & end");
	CHECK_STR(json_string_value(json_object_get(json_object_get(r.node,
	    "outputs"), "text")), tn_out_str(&r, "text"));
	CHECK_STR(tn_dump(json_object_get(r.node, "inputs")),
	    "{\"variable_selector\":[\"start\",\"f\"]}");
	tn_release(&r);
	free(zip);

	/* a zip without word/document.xml, and not a zip at all */
	{
		const char *const e2[] = { "other.xml", "<a/>" };

		n = make_zip(e2, 2, &zip);
		run_file("x.docx", NULL, zip, n, &r);
		CHECK_STR(r.status, "failed");
		CHECK(r.error && strstr(r.error, "no word/document.xml"));
		tn_release(&r);
		free(zip);
	}
	run_file("x.docx", NULL, "PK\3\4 not really", 15, &r);
	CHECK_STR(r.status, "failed");
	CHECK(r.error && strstr(r.error, "cannot extract text from 'x.docx'"));
	tn_release(&r);
	/* damaged XML inside */
	{
		const char *const e3[] = { "word/document.xml", "<w:document>"
			"<w:body><w:p>" };

		n = make_zip(e3, 2, &zip);
		run_file("bad.docx", NULL, zip, n, &r);
		CHECK_STR(r.status, "failed");
		CHECK(r.error && strstr(r.error, "not well-formed"));
		tn_release(&r);
		free(zip);
	}
}

static void
test_formats(void)
{
	static const char html[] = "<html><head><title>T</title><style>p{}"
	    "</style><script>alert(1)</script></head><body><h1>Head</h1>"
	    "<p>One <b>bold</b></p><div>Two</div><ul><li>a</li><li>b</li>"
	    "</ul></body></html>";
	static const char xml[] = "<?xml version=\"1.0\"?><r><a>one</a>"
	    "<b> two </b><c><![CDATA[three]]></c></r>";
	static const char xxe[] = "<?xml version=\"1.0\"?><!DOCTYPE r ["
	    "<!ENTITY x SYSTEM \"file:///etc/passwd\">]><r>&x;ok</r>";
	static const char csv[] = "name,note\r\nann,\"a, \"\"b\"\"\"\n\nbob,"
	    "\"two\nlines\"\n";
	struct tn_run	r;

	run_file("page.html", "text/html", html, strlen(html), &r);
	CHECK_STR(r.status, "succeeded");
	CHECK_STR(tn_out_str(&r, "text"), "T\n\nHead\n\nOne bold\n\nTwo\n\n"
	    "a\n\nb");
	tn_release(&r);

	run_file("data.xml", NULL, xml, strlen(xml), &r);
	CHECK_STR(tn_out_str(&r, "text"), "one\ntwo\nthree");
	tn_release(&r);

	/* no external entities are read */
	run_file("x.xml", NULL, xxe, strlen(xxe), &r);
	CHECK_STR(r.status, "succeeded");
	CHECK(strstr(tn_out_str(&r, "text"), "root:") == NULL);
	CHECK(strstr(tn_out_str(&r, "text"), "ok") != NULL);
	tn_release(&r);

	run_file("t.csv", "text/csv", csv, strlen(csv), &r);
	CHECK_STR(tn_out_str(&r, "text"), "| name | note |\n| --- | --- |\n"
	    "| ann | a, \"b\" |\n| bob | two\nlines |");
	tn_release(&r);

	run_file("d.json", NULL, "{\"a\": [1, 2.5], \"b\": \"\xc3\xa9\"}", 26,
	    &r);
	CHECK_STR(tn_out_str(&r, "text"), "{\n  \"a\": [\n    1,\n    2.5\n  ],"
	    "\n  \"b\": \"\xc3\xa9\"\n}");
	tn_release(&r);
	run_file("d.json", NULL, "{broken", 7, &r);
	CHECK_STR(r.status, "failed");
	CHECK(r.error && strstr(r.error, "Failed to decode JSON"));
	tn_release(&r);

	/* text: BOM dropped, bad bytes replaced; md and yaml as they are */
	run_file("a.txt", "text/plain", "\xef\xbb\xbfhi\xff", 6, &r);
	CHECK_STR(tn_out_str(&r, "text"), "hi\xef\xbf\xbd");
	tn_release(&r);
	run_file("r.md", NULL, "# T\n\n- x\n", 9, &r);
	CHECK_STR(tn_out_str(&r, "text"), "# T\n\n- x\n");
	tn_release(&r);
	run_file("c.yaml", NULL, "a: 1\n", 5, &r);
	CHECK_STR(tn_out_str(&r, "text"), "a: 1\n");
	tn_release(&r);
	/* no extension: the MIME type decides */
	run_file("noext", "text/markdown", "*m*", 3, &r);
	CHECK_STR(tn_out_str(&r, "text"), "*m*");
	tn_release(&r);
}

static void
test_refusals(void)
{
	static const char *const exts[] = { "doc", "ppt", "png" };
	struct tn_run	r;
	char		name[32], want[64];
	size_t		i;

	for (i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		snprintf(name, sizeof(name), "f.%s", exts[i]);
		run_file(name, NULL, "%PDF-1.4", 8, &r);
		CHECK_STR(r.status, "failed");
		snprintf(want, sizeof(want), ".%s files are not supported",
		    exts[i]);
		CHECK(r.error && strstr(r.error, want));
		CHECK_STR(json_string_value(json_object_get(r.node, "status")),
		    "failed");
		tn_release(&r);
	}
	/* not a file */
	CHECK(tn_run1(de_node(), outs(), json_pack("{s:s}", "f", "text"), &r)
	    == 0);
	CHECK_STR(r.status, "failed");
	CHECK(r.error && strstr(r.error, "reads a file or an array of files"));
	tn_release(&r);
	/* a file nobody can read: its download fails */
	CHECK(tn_run1(de_node(), outs(), json_pack("{s:{s:s,s:s,s:s}}", "f",
	    "type", "document", "transfer_method", "remote_url", "url",
	    "http://127.0.0.1:1/x.txt"), &r) == 0);
	CHECK_STR(r.status, "failed");
	CHECK(r.error && strstr(r.error, "cannot download the file"));
	tn_release(&r);
}

/* The bytes of tests/documents/<name>, malloc'd, or NULL. */
static char *
fixture(const char *name, size_t *len)
{
	char	 path[256], *p;
	FILE	*f;
	long	 n;

	snprintf(path, sizeof(path), "tests/documents/%s", name);
	if ((f = fopen(path, "rb")) == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	if (n < 0 || (p = malloc((size_t)n + 1)) == NULL ||
	    fread(p, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return p;
}

/* The second round of readers through the node: a pptx by its name, an
 * eml by its MIME type alone; damaged ones fail with the reader's error. */
static void
test_more_formats(void)
{
	struct tn_run	 r;
	char		*data;
	size_t		 len = 0;

	if ((data = fixture("deck.pptx", &len)) != NULL) {
		run_file("deck.pptx", NULL, data, len, &r);
		CHECK_STR(r.status, "succeeded");
		CHECK(tn_out_str(&r, "text") != NULL && strncmp(tn_out_str(&r,
		    "text"), "Roadmap 2025\n", 13) == 0);
		tn_release(&r);
		free(data);
	} else
		CHECK(!"deck.pptx missing");
	if ((data = fixture("mail.eml", &len)) != NULL) {
		run_file("noext", "message/rfc822", data, len, &r);
		CHECK_STR(r.status, "succeeded");
		CHECK(tn_out_str(&r, "text") != NULL && strstr(tn_out_str(&r,
		    "text"), "Attachment: report.pdf") != NULL);
		tn_release(&r);
		free(data);
	} else
		CHECK(!"mail.eml missing");
	run_file("f.xls", NULL, "%PDF-1.4", 8, &r);
	CHECK_STR(r.status, "failed");
	CHECK(r.error && strstr(r.error, "not an xls workbook"));
	tn_release(&r);
	run_file("f.pptx", NULL, "%PDF-1.4", 8, &r);
	CHECK_STR(r.status, "failed");
	CHECK(r.error && strstr(r.error, "not a pptx"));
	tn_release(&r);
}

static void
test_array(void)
{
	struct tn_run	 r;
	json_t		*t;

	CHECK(tn_run1(de_node(), outs(), json_pack("{s:[o,o]}", "f",
	    tn_file("a.txt", "text/plain", "first", 5), tn_file("b.md", NULL,
	    "second", 6)), &r) == 0);
	CHECK_STR(r.status, "succeeded");
	t = json_object_get(r.outputs, "text");
	CHECK_INT(json_array_size(t), 2);
	CHECK_STR(json_string_value(json_array_get(t, 0)), "first");
	CHECK_STR(json_string_value(json_array_get(t, 1)), "second");
	CHECK_STR(tn_dump(json_object_get(json_object_get(r.node,
	    "process_data"), "documents")), "[\"first\",\"second\"]");
	tn_release(&r);
	/* an empty list gives an empty list */
	CHECK(tn_run1(de_node(), outs(), json_pack("{s:[]}", "f"), &r) == 0);
	CHECK_STR(tn_dump(json_object_get(r.outputs, "text")), "[]");
	tn_release(&r);
}

/* The extractor's pieces directly: limits and odd input. */
static void
test_pieces(void)
{
	char	 err[ENGINE_ERRMAX], *out = NULL;
	char	 big[64];

	CHECK(doc_text("docx", "", 0, err, sizeof(err), &out) != 0);
	CHECK(doc_text("xml", "<a>&undefined;</a>", 18, err, sizeof(err),
	    &out) != 0 || (free(out), 1));
	out = NULL;
	CHECK(doc_text("csv", "", 0, err, sizeof(err), &out) == 0);
	CHECK_STR(out, "");
	free(out);
	CHECK(doc_text("exe", "x", 1, err, sizeof(err), &out) != 0);
	CHECK(strstr(err, "cannot read .exe files") != NULL);
	CHECK(doc_text("txt", big, ((size_t)50 << 20) + 1, err, sizeof(err),
	    &out) != 0);
	CHECK(strstr(err, "larger than") != NULL);
	/* billion laughs: libxml2's amplification limit holds */
	{
		const char *bomb = "<?xml version=\"1.0\"?><!DOCTYPE l ["
		    "<!ENTITY a \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\">"
		    "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">"
		    "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">"
		    "<!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">"
		    "<!ENTITY e \"&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;\">"
		    "<!ENTITY f \"&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;\">"
		    "<!ENTITY g \"&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;\">]>"
		    "<l>&g;</l>";
		int rc = doc_text("xml", bomb, strlen(bomb), err, sizeof(err),
		    &out);

		CHECK(rc != 0 || strlen(out) < 1000);
		if (rc == 0)
			free(out);
	}
}

int
main(void)
{
	tn_open();
	test_docx();
	test_formats();
	test_refusals();
	test_more_formats();
	test_array();
	test_pieces();
	tn_close();
	return tap_done();
}
