/*
 * t_documents_pdf.c — engine/documents/ on PDF: the committed fixtures of
 * tests/documents/ (made by reportlab, expected text written by hand from
 * what the pages show), one part per page, and the hostile cases: a
 * password, a truncated file, bytes that are no PDF, the page and size
 * limits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "t_documents_util.h"

static void
test_pages(void)
{
	struct doc	d;
	char		err[256];

	CHECK(read_fixture("two-pages.pdf", "pdf", NULL, &d, err,
	    sizeof(err)) == 0);
	CHECK_INT(d.nparts, 2);
	CHECK_STR(d.unit, "page");
	if (d.nparts == 2) {
		CHECK_STR(d.parts[0].text, "Quarterly report\n"
		    "Revenue rose by 12 percent.");
		CHECK_STR(d.parts[1].text, "第二页：文档提取器\n"
		    "繁體中文與日本語のテキスト");
	}
	CHECK_STR(d.text, "Quarterly report\nRevenue rose by 12 percent.\n"
	    "第二页：文档提取器\n繁體中文與日本語のテキスト");
	doc_release(&d);
	CHECK(d.text == NULL && d.parts == NULL && d.nparts == 0);
}

static void
test_hostile(void)
{
	struct doc_limits	lim;
	struct doc		d;
	char			err[256];
	int			rc;

	rc = read_fixture("encrypted.pdf", "pdf", NULL, &d, err,
	    sizeof(err));
	CHECK_INT(rc, DOC_EENCRYPTED);
	CHECK(strstr(err, "password") != NULL);
	CHECK(d.text == NULL);

	/* a third of a PDF: no trailer, no xref; poppler gives up or
	 * rebuilds, never a crash, and says so in words */
	rc = read_fixture("truncated.pdf", "pdf", NULL, &d, err,
	    sizeof(err));
	CHECK(rc == 0 || (rc == DOC_EDAMAGED && err[0] != '\0'));
	if (rc == 0)
		CHECK(d.text != NULL);
	doc_release(&d);

	rc = doc_extract("pdf", "hello, not a pdf", 16, NULL, &d, err,
	    sizeof(err));
	CHECK_INT(rc, DOC_EDAMAGED);
	CHECK(strstr(err, "not a PDF") != NULL);
	rc = doc_extract("pdf", "", 0, NULL, &d, err, sizeof(err));
	CHECK_INT(rc, DOC_EDAMAGED);
	rc = doc_extract("pdf", "%PDF-1.4\n%%EOF\n", 15, NULL, &d, err,
	    sizeof(err));
	CHECK_INT(rc, DOC_EDAMAGED);
	CHECK(strstr(err, "damaged") != NULL);

	doc_limits_default(&lim);
	lim.max_pages = 1;
	rc = read_fixture("two-pages.pdf", "pdf", &lim, &d, err,
	    sizeof(err));
	CHECK_INT(rc, DOC_ELIMIT);
	CHECK(strstr(err, "documents.max_pages") != NULL);
	CHECK(d.text == NULL && d.nparts == 0);

	doc_limits_default(&lim);
	lim.max_file_size = 1000;
	rc = read_fixture("two-pages.pdf", "pdf", &lim, &d, err,
	    sizeof(err));
	CHECK_INT(rc, DOC_ELIMIT);
	CHECK(strstr(err, "documents.max_file_size") != NULL);

	doc_limits_default(&lim);
	lim.max_unpacked = 20;
	rc = read_fixture("two-pages.pdf", "pdf", &lim, &d, err,
	    sizeof(err));
	CHECK_INT(rc, DOC_ELIMIT);
	CHECK(strstr(err, "documents.max_unpacked") != NULL);
}

static void
test_api(void)
{
	struct doc	d;
	char		err[256];

	CHECK(doc_supported("pdf"));
	CHECK(doc_supported("docx"));
	CHECK(!doc_supported("exe"));
	CHECK(strstr(doc_formats(), "pdf") != NULL);
	CHECK_INT(doc_extract("exe", "x", 1, NULL, &d, err, sizeof(err)),
	    DOC_EFORMAT);
	CHECK(strstr(err, "cannot read .exe files") != NULL);
	CHECK_STR(doc_strerror(DOC_EENCRYPTED), "encrypted document");
	/* text with a UTF-16 byte order mark: "中a" */
	CHECK_INT(doc_extract("txt", "\xff\xfe\x2d\x4e\x61\x00", 6, NULL,
	    &d, err, sizeof(err)), 0);
	CHECK_STR(d.text, "中a");
	doc_release(&d);
	CHECK_INT(doc_extract("txt", "\xfe\xff\x4e\x2d\x00", 5, NULL, &d,
	    err, sizeof(err)), 0);
	CHECK_STR(d.text, "中\xef\xbf\xbd");
	doc_release(&d);
	CHECK_INT(doc_extract("json", "\xff\xfe{\0}\0", 6, NULL, &d, err,
	    sizeof(err)), 0);
	CHECK_STR(d.text, "{}");
	doc_release(&d);
	/* the python-docx fixture: CJK and a table */
	CHECK(read_fixture("notes.docx", "docx", NULL, &d, err,
	    sizeof(err)) == 0);
	CHECK_STR(d.text, "Meeting notes\n会议纪要：下周发布\n"
	    "| Name | Role |\n| --- | --- |\n| 李雷 | Engineer |\n");
	CHECK_INT(d.nparts, 0);
	doc_release(&d);
}

int
main(void)
{
	test_pages();
	test_hostile();
	test_api();
	return tap_done();
}
