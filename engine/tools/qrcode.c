/*
 * qrcode.c — Dify's builtin `qrcode` provider
 * (api/core/tools/builtin_tool/providers/qrcode/tools/text2qrcode.py):
 *
 *   text2qrcode   content (the text; `text` is read when it is absent),
 *                 error_correction (L, M (default), Q, H), border (modules
 *                 of quiet zone, 0 to 100, default 2): a PNG file
 *                 (image/png) as the qrcode library's PyPNGImage makes it —
 *                 1-bit greyscale, 10 pixels a module, black on white.
 *
 * Like Dify, a bad parameter answers a text message ("Invalid parameter
 * content", "... border", "... error_correction") and text too long for
 * any QR version answers "Failed to generate QR code for content: ...".
 * The symbol is libqrencode's (the smallest version that holds the text,
 * its modes chosen for it); the PNG is written by libpng. No request is
 * made anywhere.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>
#include <qrencode.h>

#include "engine/tools/tools.h"

#define QR_BOX		10	/* pixels a module, as the qrcode library */

static const struct tool_param p_qr[] = {
	{ "content", "string", 1, "Content of the QR code" },
	{ "error_correction", "string", 0, "Error correction level: L, M "
	    "(default), Q or H" },
	{ "border", "number", 0, "Border size of the QR code, in modules "
	    "(0 to 100, default 2)" },
	{ NULL, NULL, 0, NULL },
};

static const struct tool_def defs[] = {
	{ "text2qrcode", "A tool for generating QR code image", p_qr },
	{ NULL, NULL, NULL },
};

/* ====== PNG ====== */

static void
png_sink(png_structp png, png_bytep data, png_size_t n)
{
	struct dbuf *b = png_get_io_ptr(png);

	if (dbuf_add(b, data, n) != DBUF_OK)
		png_error(png, "output limit");
}

static void
png_flush_none(png_structp png)
{
	(void)png;
}

/*
 * The PNG of qr with border modules around it, into out (its max holds).
 * Returns 0, ENGINE_ELIMIT or ENGINE_ENOMEM.
 */
static int
qr_png(const QRcode *qr, int border, struct dbuf *out)
{
	png_structp		 png = NULL;
	png_infop		 info = NULL;
	png_bytep		 row = NULL;
	size_t			 side, rowbytes, x, y;
	int			 mx, my, rc = ENGINE_ENOMEM;

	side = ((size_t)qr->width + 2 * (size_t)border) * QR_BOX;
	rowbytes = (side + 7) / 8;
	if ((row = malloc(rowbytes)) == NULL)
		return ENGINE_ENOMEM;
	png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL,
	    NULL);
	if (png == NULL || (info = png_create_info_struct(png)) == NULL)
		goto out;
	if (setjmp(png_jmpbuf(png))) {
		rc = out->err == DBUF_ETOOBIG ? ENGINE_ELIMIT : ENGINE_ENOMEM;
		goto out;
	}
	png_set_write_fn(png, out, png_sink, png_flush_none);
	png_set_IHDR(png, info, (png_uint_32)side, (png_uint_32)side, 1,
	    PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
	    PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_write_info(png, info);
	for (y = 0; y < side; y++) {
		memset(row, 0xff, rowbytes);	/* white */
		my = (int)(y / QR_BOX) - border;
		for (x = 0; x < side && my >= 0 && my < qr->width; x++) {
			mx = (int)(x / QR_BOX) - border;
			if (mx >= 0 && mx < qr->width &&
			    (qr->data[my * qr->width + mx] & 1))
				row[x / 8] &= (png_byte)~(0x80 >> (x % 8));
		}
		png_write_row(png, row);
	}
	png_write_end(png, NULL);
	rc = 0;
out:
	png_destroy_write_struct(&png, info ? &info : NULL);
	free(row);
	return rc;
}

/* ====== The provider ====== */

static int
qr_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	if ((*out = tool_defs_json(defs)) == NULL)
		return ENGINE_ENOMEM;
	return 0;
}

static int
message(struct tool_result *out, const char *s)
{
	return tool_result_text(out, s, strlen(s));
}

static int
qr_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	static const struct { const char *name; QRecLevel level; } levels[] = {
		{ "L", QR_ECLEVEL_L }, { "M", QR_ECLEVEL_M },
		{ "Q", QR_ECLEVEL_Q }, { "H", QR_ECLEVEL_H },
	};
	struct dbuf	 png;
	QRcode		*qr = NULL;
	char		*cbuf = NULL, *ebuf = NULL;
	const char	*content, *ec;
	int64_t		 border = 2;
	size_t		 i;
	int		 rc = 0, r, level = -1;

	dbuf_init(&png, (size_t)e->conf->export_max_output);
	if (call->tool == NULL || strcmp(call->tool, "text2qrcode") != 0) {
		rc = ENGINE_ENOTFOUND;
		engine_invalid(err, "tool 'qrcode/%s' is not available in "
		    "flowcgi", call->tool ? call->tool : "");
		goto out;
	}
	content = tool_param_str(call->params, "content", &cbuf);
	if (content == NULL) {
		free(cbuf);
		content = tool_param_str(call->params, "text", &cbuf);
	}
	if (content == NULL || *content == '\0') {
		rc = message(out, "Invalid parameter content");
		goto out;
	}
	if ((r = tool_param_int(call->params, "border", &border)) < 0 ||
	    border < 0 || border > 100) {
		rc = message(out, "Invalid parameter border");
		goto out;
	}
	ec = tool_param_str(call->params, "error_correction", &ebuf);
	if (ec == NULL)
		ec = "M";
	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (strcmp(levels[i].name, ec) == 0)
			level = (int)levels[i].level;
	if (level < 0) {
		rc = message(out, "Invalid parameter error_correction");
		goto out;
	}
	errno = 0;
	qr = QRcode_encodeString(content, 0, (QRecLevel)level, QR_MODE_8, 1);
	if (qr == NULL) {
		if (errno == ENOMEM) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		/* too long for version 40 at this level (ERANGE) */
		dbuf_reset(&png);
		{
			struct dbuf m = { 0 };

			dbuf_addstr(&m, "Failed to generate QR code for content: ");
			dbuf_addstr(&m, content);
			rc = m.err ? ENGINE_ENOMEM : tool_result_text(out,
			    m.p, m.len);
			dbuf_free(&m);
		}
		goto out;
	}
	if ((rc = qr_png(qr, (int)border, &png)) != 0) {
		if (rc == ENGINE_ELIMIT)
			snprintf(err, ENGINE_ERRMAX, "the QR code's PNG would "
			    "pass export.max_output (%lld bytes)",
			    (long long)e->conf->export_max_output);
		goto out;
	}
	rc = tool_result_file(out, file_from_bytes(NULL, "image/png", png.p,
	    png.len));
out:
	if (qr != NULL)
		QRcode_free(qr);
	free(cbuf);
	free(ebuf);
	dbuf_free(&png);
	return rc;
}

const struct tool_provider tool_provider_qrcode = {
	"qrcode", qr_list, qr_invoke, 0,
};
