/*
 * pdf_process.c — the Dify plugin `kalochin/pdf_process` (provider
 * pdf_process), tool `pdf_to_png`: each page of a PDF file as a PNG image,
 * so that a vision model can read scanned pages, forms and charts.
 *
 *   pdf_to_png   the PDF: the first file parameter the node passes (the
 *                plugin's own parameter name is not public; `file`,
 *                `pdf_file`, `input_file`, `pdf` and `files` are looked at
 *                first), dpi (36 to 300, default 150), first_page and
 *                last_page (1-based, the whole document by default):
 *                one image/png file per page, named <name>_page_<n>.png,
 *                and a text message saying how many pages were made.
 *
 * Pages are rendered by poppler (the renderer of Debian's pdftoppm)
 * through cairo onto a white RGB surface. Limits: tools.pdf_max_pages
 * pages of one call, tools.pdf_max_pixels pixels of one page (a larger
 * page is rendered at the dpi that fits), export.max_output bytes of one
 * PNG, tools.max_file_size bytes of the PDF. A PDF that poppler cannot
 * open (damaged, encrypted with a password) answers a clear error naming
 * why; nothing is fetched but the input file.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairo.h>
#include <poppler.h>

#include "engine/tools/tools.h"

#define PDF_DPI_DEFAULT	150
#define PDF_DPI_MIN	36
#define PDF_DPI_MAX	300

static const struct tool_param p_png[] = {
	{ "file", "object", 1, "The PDF file" },
	{ "dpi", "number", 0, "Resolution of the images, 36 to 300 (default "
	    "150)" },
	{ "first_page", "number", 0, "First page to convert (1-based, "
	    "default 1)" },
	{ "last_page", "number", 0, "Last page to convert (default the "
	    "last)" },
	{ NULL, NULL, 0, NULL },
};

static const struct tool_def defs[] = {
	{ "pdf_to_png", "Convert each page of a PDF file into a PNG image",
	    p_png },
	{ NULL, NULL, NULL },
};

/* The PDF of a call: a named file parameter, else the first file. */
static const json_t *
pdf_param(const json_t *params)
{
	static const char *const names[] = { "file", "pdf_file", "input_file",
		"pdf", "files", NULL };
	const json_t	*v, *f;
	const char	*k;
	size_t		 i;

	for (i = 0; names[i] != NULL; i++)
		if ((v = json_object_get(params, names[i])) != NULL &&
		    (json_is_object(v) || json_array_size(v) > 0))
			return v;
	json_object_foreach((json_t *)params, k, v) {
		f = json_is_array(v) ? json_array_get(v, 0) : v;
		if (json_is_object(f) && (json_object_get(f, "url") != NULL ||
		    json_object_get(f, "remote_url") != NULL ||
		    json_object_get(f, "transfer_method") != NULL))
			return v;
	}
	return NULL;
}

struct png_out {
	struct dbuf	*b;
	int64_t		 max;
};

static cairo_status_t
png_write(void *closure, const unsigned char *data, unsigned int n)
{
	struct png_out *o = closure;

	if ((int64_t)(o->b->len + n) > o->max ||
	    dbuf_add(o->b, data, n) != DBUF_OK)
		return CAIRO_STATUS_WRITE_ERROR;
	return CAIRO_STATUS_SUCCESS;
}

/* Page i of doc as a PNG at dpi (lowered to fit pdf_max_pixels). */
static int
render_page(struct engine *e, PopplerDocument *doc, int i, double dpi,
    char *err, struct dbuf *png)
{
	PopplerPage		*page = poppler_document_get_page(doc, i);
	cairo_surface_t		*s = NULL;
	cairo_t			*cr = NULL;
	struct png_out		 o = { png, e->conf->export_max_output };
	double			 w, h, scale, px;
	int			 pw, ph, rc = 0;

	if (page == NULL)
		return engine_invalid(err, "pdf_process: page %d cannot be "
		    "read", i + 1);
	poppler_page_get_size(page, &w, &h);
	if (!(w > 0 && h > 0 && w < 1e6 && h < 1e6)) {
		rc = engine_invalid(err, "pdf_process: page %d has no size",
		    i + 1);
		goto out;
	}
	scale = dpi / 72.0;
	px = w * scale * h * scale;
	if (px > (double)e->conf->tools_pdf_max_pixels)
		scale *= sqrt((double)e->conf->tools_pdf_max_pixels / px);
	pw = (int)ceil(w * scale);
	ph = (int)ceil(h * scale);
	if (pw < 1)
		pw = 1;
	if (ph < 1)
		ph = 1;
	s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, pw, ph);
	if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	cr = cairo_create(s);
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_paint(cr);
	cairo_scale(cr, scale, scale);
	poppler_page_render(page, cr);
	cairo_surface_flush(s);
	if (cairo_status(cr) != CAIRO_STATUS_SUCCESS) {
		rc = engine_invalid(err, "pdf_process: page %d could not be "
		    "drawn", i + 1);
		goto out;
	}
	if (cairo_surface_write_to_png_stream(s, png_write, &o) !=
	    CAIRO_STATUS_SUCCESS) {
		rc = png->err ? ENGINE_ENOMEM : engine_invalid(err,
		    "pdf_process: the image of page %d is larger than "
		    "export.max_output", i + 1);
		if (rc == ENGINE_EINVAL)
			rc = ENGINE_ELIMIT;
	}
out:
	if (cr != NULL)
		cairo_destroy(cr);
	if (s != NULL)
		cairo_surface_destroy(s);
	g_object_unref(page);
	return rc;
}

/* name without its directory and its .pdf, into buf. */
static void
stem_of(const json_t *f, char *buf, size_t sz)
{
	const char	*n = json_string_value(json_object_get(f, "filename"));
	size_t		 l;

	if (n == NULL || *n == '\0')
		n = "document.pdf";
	if (strrchr(n, '/') != NULL)
		n = strrchr(n, '/') + 1;
	l = strlen(n);
	if (l > 4 && strcasecmp(n + l - 4, ".pdf") == 0)
		l -= 4;
	if (l >= sz)
		l = sz - 1;
	memcpy(buf, n, l);
	buf[l] = '\0';
}

static int
pdf_to_png(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	const json_t	*f = pdf_param(call->params);
	PopplerDocument	*doc = NULL;
	GBytes		*bytes = NULL;
	GError		*gerr = NULL;
	struct dbuf	 png = { 0 };
	json_t		*file;
	char		*data = NULL, stem[160], name[200], msg[160];
	size_t		 len;
	int64_t		 dpi = PDF_DPI_DEFAULT, first = 1, last = 0;
	int		 n, i, made = 0, rc;

	if (f == NULL) {
		out->final = 1;
		return engine_invalid(err, "pdf_process: pdf_to_png needs a "
		    "PDF file parameter");
	}
	if (tool_param_int(call->params, "dpi", &dpi) < 0 ||
	    tool_param_int(call->params, "first_page", &first) < 0 ||
	    tool_param_int(call->params, "last_page", &last) < 0) {
		out->final = 1;
		return engine_invalid(err, "pdf_process: dpi, first_page and "
		    "last_page must be numbers");
	}
	if (dpi < PDF_DPI_MIN)
		dpi = PDF_DPI_MIN;
	if (dpi > PDF_DPI_MAX)
		dpi = PDF_DPI_MAX;
	if (json_is_array(f))
		f = json_array_get(f, 0);
	if ((rc = tool_file_bytes(e, f, "the PDF", err, &data, &len)) != 0)
		goto out;
	if (len < 5 || memcmp(data, "%PDF-", 5) != 0) {
		out->final = 1;
		rc = engine_invalid(err, "pdf_process: the file is not a PDF");
		goto out;
	}
	bytes = g_bytes_new_static(data, len);
	doc = poppler_document_new_from_bytes(bytes, NULL, &gerr);
	if (doc == NULL) {
		out->final = 1;
		rc = engine_invalid(err, "pdf_process: the PDF cannot be read: "
		    "%s", gerr && gerr->message ? gerr->message : "damaged");
		goto out;
	}
	n = poppler_document_get_n_pages(doc);
	if (first < 1)
		first = 1;
	if (last < 1 || last > n)
		last = n;
	if (first > last) {
		out->final = 1;
		rc = engine_invalid(err, "pdf_process: the PDF has %d pages; "
		    "first_page %lld is past them", n, (long long)first);
		goto out;
	}
	if (last - first + 1 > e->conf->tools_pdf_max_pages)
		last = first + e->conf->tools_pdf_max_pages - 1;
	stem_of(f, stem, sizeof(stem));
	for (i = (int)first - 1; i < (int)last; i++) {
		png.len = 0;
		if ((rc = render_page(e, doc, i, (double)dpi, err, &png)) != 0)
			goto out;
		snprintf(name, sizeof(name), "%s_page_%d.png", stem, i + 1);
		if ((file = file_from_bytes(name, "image/png", png.p,
		    png.len)) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		if ((rc = tool_result_file(out, file)) != 0)
			goto out;
		made++;
	}
	snprintf(msg, sizeof(msg), "Converted %d of %d pages to PNG images "
	    "at %lld dpi", made, n, (long long)dpi);
	rc = tool_result_text(out, msg, strlen(msg));
out:
	if (gerr != NULL)
		g_error_free(gerr);
	if (doc != NULL)
		g_object_unref(doc);
	if (bytes != NULL)
		g_bytes_unref(bytes);
	dbuf_free(&png);
	free(data);
	return rc;
}

static int
pdf_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	*out = tool_defs_json(defs);
	return *out ? 0 : ENGINE_ENOMEM;
}

static int
pdf_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	if (call->tool != NULL && strcmp(call->tool, "pdf_to_png") == 0)
		return pdf_to_png(e, call, err, out);
	engine_invalid(err, "tool '%s/%s' is not available in flowcgi",
	    call->provider, call->tool ? call->tool : "");
	return ENGINE_ENOTFOUND;
}

const struct tool_provider tool_provider_pdf_process = {
	"pdf_process", pdf_list, pdf_invoke, 0,
};
