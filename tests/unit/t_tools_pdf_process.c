/*
 * t_tools_pdf_process.c — the pdf_process provider's pdf_to_png on PDFs
 * made here with cairo's PDF writer (no fixture to commit): one PNG per
 * page at the dpi asked, its pixels (a black square where the page has
 * one), the page range, tools.pdf_max_pages and tools.pdf_max_pixels, and
 * clear errors for a file that is not a PDF, a damaged one and a call
 * with no file. The tool makes no request: no fake is started.
 */
#include <cairo-pdf.h>

#include "tap.h"
#include "t_node_run.h"
#include "t_tools_fake.h"
#include "t_tools_files.h"

#define PROVIDER "kalochin/pdf_process/pdf_process"

static cairo_status_t
sink(void *closure, const unsigned char *data, unsigned int n)
{
	return dbuf_add(closure, data, n) == DBUF_OK ? CAIRO_STATUS_SUCCESS :
	    CAIRO_STATUS_WRITE_ERROR;
}

/*
 * A PDF of pages pages of w x h points; page i (0-based) has a black
 * square of h/2 points at its top left when i is even. *out malloc'd.
 */
static void
make_pdf(int pages, double w, double h, struct dbuf *out)
{
	cairo_surface_t	*s;
	cairo_t		*cr;
	int		 i;

	memset(out, 0, sizeof(*out));
	s = cairo_pdf_surface_create_for_stream(sink, out, w, h);
	cr = cairo_create(s);
	for (i = 0; i < pages; i++) {
		if (i % 2 == 0) {
			cairo_set_source_rgb(cr, 0, 0, 0);
			cairo_rectangle(cr, 0, 0, h / 2, h / 2);
			cairo_fill(cr);
		}
		cairo_show_page(cr);
	}
	cairo_destroy(cr);
	cairo_surface_finish(s);
	cairo_surface_destroy(s);
}

static json_t *
pdf_file(const struct dbuf *pdf, const char *name)
{
	return file_from_bytes(name, "application/pdf", pdf->p, pdf->len);
}

static void
test_pages(void)
{
	struct tool_result	 r;
	struct dbuf		 pdf;
	unsigned char		*px = NULL;
	unsigned		 w = 0, h = 0;
	char			 err[ENGINE_ERRMAX], *png;
	size_t			 len;
	const json_t		*f;

	make_pdf(3, 144, 72, &pdf);
	CHECK(pdf.len > 100 && memcmp(pdf.p, "%PDF-", 5) == 0);
	CHECK(tool_provider_find(PROVIDER, "plugin") ==
	    &tool_provider_pdf_process);
	/* the plugin's parameter name is not known: any file parameter */
	CHECK(tool_call_simple(PROVIDER, "plugin", "pdf_to_png",
	    json_pack("{s:o,s:i}", "pdf_input", pdf_file(&pdf, "report.pdf"),
	    "dpi", 72), &r, err) == 0);
	CHECK_INT(json_array_size(r.files), 3);
	CHECK_STR(res_text(&r), "Converted 3 of 3 pages to PNG images at 72 "
	    "dpi");
	f = res_file(&r, 0, &png, &len);
	CHECK_STR(json_string_value(json_object_get(f, "filename")),
	    "report_page_1.png");
	CHECK_STR(json_string_value(json_object_get(f, "mime_type")),
	    "image/png");
	/* 2 x 1 inches at 72 dpi */
	CHECK(png_size(png, len, &w, &h) == 0);
	CHECK_INT(w, 144);
	CHECK_INT(h, 72);
	/* the black square at the top left, white beside it */
	if (CHECK(png_rgb(png, len, &px, &w, &h) == 0)) {
		CHECK(px[(10 * w + 10) * 3] < 40);
		CHECK(px[(10 * w + 100) * 3] > 215);
		CHECK(px[(60 * w + 10) * 3] > 215);
		free(px);
	}
	free(png);
	/* page 2 has no square */
	f = res_file(&r, 1, &png, &len);
	CHECK_STR(json_string_value(json_object_get(f, "filename")),
	    "report_page_2.png");
	if (CHECK(png_rgb(png, len, &px, &w, &h) == 0)) {
		CHECK(px[(10 * w + 10) * 3] > 215);
		free(px);
	}
	free(png);
	tool_result_release(&r);

	/* the default 150 dpi; a range of pages */
	CHECK(tool_call_simple(PROVIDER, "plugin", "pdf_to_png",
	    json_pack("{s:o,s:i,s:s}", "file", pdf_file(&pdf, "a.pdf"),
	    "first_page", 2, "last_page", "3"), &r, err) == 0);
	CHECK_INT(json_array_size(r.files), 2);
	f = res_file(&r, 0, &png, &len);
	CHECK_STR(json_string_value(json_object_get(f, "filename")),
	    "a_page_2.png");
	CHECK(png_size(png, len, &w, &h) == 0);
	CHECK_INT(w, 300);
	CHECK_INT(h, 150);
	free(png);
	tool_result_release(&r);

	/* tools.pdf_max_pages */
	tn_conf.tools_pdf_max_pages = 2;
	CHECK(tool_call_simple(PROVIDER, "plugin", "pdf_to_png",
	    json_pack("{s:[o]}", "files", pdf_file(&pdf, "a.pdf")), &r,
	    err) == 0);
	CHECK_INT(json_array_size(r.files), 2);
	CHECK_STR(res_text(&r), "Converted 2 of 3 pages to PNG images at 150 "
	    "dpi");
	tool_result_release(&r);
	tn_conf.tools_pdf_max_pages = 20;

	CHECK(tool_call_simple(PROVIDER, "plugin", "pdf_to_png",
	    json_pack("{s:o,s:i}", "file", pdf_file(&pdf, "a.pdf"),
	    "first_page", 9), &r, err) == ENGINE_EINVAL);
	CHECK_STR(err, "pdf_process: the PDF has 3 pages; first_page 9 is "
	    "past them");
	CHECK(r.final);
	tool_result_release(&r);
	dbuf_free(&pdf);
}

static void
test_limits_and_errors(void)
{
	struct tool_result	 r;
	struct dbuf		 pdf;
	unsigned		 w = 0, h = 0;
	char			 err[ENGINE_ERRMAX], *png;
	size_t			 len;
	json_t			*f;

	/* a 100 x 100 inch page at 300 dpi would be 900 Mpx: rendered at
	 * the dpi that fits tools.pdf_max_pixels */
	make_pdf(1, 7200, 7200, &pdf);
	tn_conf.tools_pdf_max_pixels = 1000000;
	CHECK(tool_call_simple(PROVIDER, "plugin", "pdf_to_png",
	    json_pack("{s:o,s:i}", "file", pdf_file(&pdf, "big.pdf"), "dpi",
	    300), &r, err) == 0);
	res_file(&r, 0, &png, &len);
	CHECK(png_size(png, len, &w, &h) == 0);
	CHECK(w <= 1001 && w >= 990 && w == h);
	free(png);
	tool_result_release(&r);
	tn_conf.tools_pdf_max_pixels = 25000000;

	/* damaged: the first half of a PDF */
	f = file_from_bytes("cut.pdf", "application/pdf", pdf.p, pdf.len / 2);
	CHECK(tool_call_simple(PROVIDER, "plugin", "pdf_to_png",
	    json_pack("{s:o}", "file", f), &r, err) != 0);
	CHECK(strncmp(err, "pdf_process: ", 13) == 0);
	tool_result_release(&r);
	dbuf_free(&pdf);

	f = file_from_bytes("a.pdf", "application/pdf", "hello", 5);
	CHECK(tool_call_simple(PROVIDER, "plugin", "pdf_to_png",
	    json_pack("{s:o}", "file", f), &r, err) == ENGINE_EINVAL);
	CHECK_STR(err, "pdf_process: the file is not a PDF");
	CHECK(r.final);
	tool_result_release(&r);
	f = file_from_bytes("bad.pdf", "application/pdf", "%PDF-1.4\nxx", 11);
	CHECK(tool_call_simple(PROVIDER, "plugin", "pdf_to_png",
	    json_pack("{s:o}", "file", f), &r, err) == ENGINE_EINVAL);
	CHECK(strstr(err, "pdf_process: the PDF cannot be read") != NULL);
	tool_result_release(&r);
	CHECK(tool_call_simple(PROVIDER, "plugin", "pdf_to_png",
	    json_pack("{s:s}", "query", "no file"), &r, err) == ENGINE_EINVAL);
	CHECK_STR(err, "pdf_process: pdf_to_png needs a PDF file parameter");
	CHECK(r.final);
	tool_result_release(&r);
}

int
main(void)
{
	tn_open();
	test_pages();
	test_limits_and_errors();
	tn_close();
	return tap_done();
}
