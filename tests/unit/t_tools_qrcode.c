/*
 * t_tools_qrcode.c — Dify's qrcode provider: text2qrcode's PNG (its
 * signature, 1-bit greyscale, 10 pixels a module, the version the text
 * needs, the border, the finder pattern's pixels), Dify's messages for
 * bad parameters and for text too long, and (when zbarimg is installed)
 * the symbol read back by a decoder. The tool makes no request: no fake
 * is started.
 */
#include "tap.h"
#include "t_node_run.h"
#include "t_tools_fake.h"
#include "t_tools_files.h"

/* Calls text2qrcode; on a file, *px is its RGB pixels (free them). */
static const char *
qr(json_t *params, unsigned char **px, unsigned *side, char **png,
    size_t *len)
{
	static struct tool_result	 r;
	static int			 held;
	static char			 text[320];
	char				 err[ENGINE_ERRMAX];
	unsigned			 w = 0, h = 0;
	const json_t			*f;

	if (held)
		tool_result_release(&r);
	held = 1;
	*px = NULL;
	*side = 0;
	*png = NULL;
	if (tool_call_simple("langgenius/qrcode/qrcode", "builtin",
	    "text2qrcode", params, &r, err) != 0) {
		snprintf(text, sizeof(text), "(failed: %s)", err);
		return text;
	}
	snprintf(text, sizeof(text), "%s", res_text(&r));
	if ((f = res_file(&r, 0, png, len)) != NULL) {
		CHECK_STR(json_string_value(json_object_get(f, "mime_type")),
		    "image/png");
		CHECK_STR(json_string_value(json_object_get(f, "filename")),
		    "file.png");
		if (png_rgb(*png, *len, px, &w, &h) == 0 && w == h)
			*side = w;
	}
	return text;
}

/* 1 when the pixel at module (mx, my) (border counted in) is black. */
static int
black(const unsigned char *px, unsigned side, int mx, int my)
{
	size_t x = (size_t)mx * 10 + 5, y = (size_t)my * 10 + 5;

	return px[(y * side + x) * 3] < 128;
}

static void
test_png(void)
{
	unsigned char	*px;
	unsigned	 side, w = 0, h = 0;
	char		*png;
	size_t		 len;

	CHECK(tool_provider_find("qrcode", "builtin") == &tool_provider_qrcode);
	/* 15 bytes: more than version 1-M holds (14), so version 2 (25
	 * modules), with Dify's default border of 2: (25 + 4) * 10 */
	CHECK_STR(qr(json_pack("{s:s}", "content", "https://dify.ai"), &px,
	    &side, &png, &len), "");
	CHECK(png_size(png, len, &w, &h) == 0);
	CHECK_INT(w, 290);
	CHECK_INT(h, 290);
	CHECK(png != NULL && (unsigned char)png[24] == 1 && png[25] == 0);
	CHECK_INT(side, 290);
	if (px != NULL) {
		CHECK(!black(px, side, 0, 0) && !black(px, side, 1, 1));
		/* the finder pattern: a black ring, white ring, black core */
		CHECK(black(px, side, 2, 2) && black(px, side, 8, 2) &&
		    black(px, side, 2, 8));
		CHECK(!black(px, side, 3, 3) && black(px, side, 4, 4) &&
		    black(px, side, 5, 5));
		CHECK(black(px, side, 26, 2) && !black(px, side, 27, 2));
	}
	free(px);
	free(png);

	CHECK_STR(qr(json_pack("{s:s,s:i,s:s}", "content", "hello", "border",
	    0, "error_correction", "L"), &px, &side, &png, &len), "");
	CHECK_INT(side, 210);	/* version 1, no border */
	CHECK(px != NULL && black(px, side, 0, 0));
	free(px);
	free(png);
	CHECK_STR(qr(json_pack("{s:s,s:s}", "text", "hello", "border", "4"),
	    &px, &side, &png, &len), "");
	CHECK_INT(side, 290);	/* `text` read too; border as a string */
	free(px);
	free(png);
	/* H needs a larger symbol than L for the same text */
	{
		unsigned l, hh;

		qr(json_pack("{s:s,s:s}", "content", "0123456789abcdefghijklm"
		    "nopqrstuvwxyz", "error_correction", "L"), &px, &l, &png,
		    &len);
		free(px);
		free(png);
		qr(json_pack("{s:s,s:s}", "content", "0123456789abcdefghijklm"
		    "nopqrstuvwxyz", "error_correction", "H"), &px, &hh, &png,
		    &len);
		free(px);
		free(png);
		CHECK(l > 0 && hh > l);
	}
}

static void
test_messages(void)
{
	struct dbuf	 big = { 0 };
	unsigned char	*px;
	unsigned	 side;
	char		*png;
	size_t		 len;
	int		 i;

	CHECK_STR(qr(json_pack("{s:s}", "content", ""), &px, &side, &png,
	    &len), "Invalid parameter content");
	CHECK_STR(qr(NULL, &px, &side, &png, &len),
	    "Invalid parameter content");
	CHECK_STR(qr(json_pack("{s:s,s:i}", "content", "x", "border", 101),
	    &px, &side, &png, &len), "Invalid parameter border");
	CHECK_STR(qr(json_pack("{s:s,s:i}", "content", "x", "border", -1),
	    &px, &side, &png, &len), "Invalid parameter border");
	CHECK_STR(qr(json_pack("{s:s,s:s}", "content", "x", "border", "wide"),
	    &px, &side, &png, &len), "Invalid parameter border");
	CHECK_STR(qr(json_pack("{s:s,s:s}", "content", "x",
	    "error_correction", "X"), &px, &side, &png, &len),
	    "Invalid parameter error_correction");
	CHECK(png == NULL);
	for (i = 0; i < 1500; i++)
		dbuf_addstr(&big, "ab");
	CHECK(strncmp(qr(json_pack("{s:s,s:s}", "content", big.p,
	    "error_correction", "H"), &px, &side, &png, &len),
	    "Failed to generate QR code for content: abab", 44) == 0);
	CHECK(png == NULL);
	dbuf_free(&big);
}

/* A decoder reads the symbol back (zbarimg, when installed). */
static void
test_decode(void)
{
	char		 path[] = "/tmp/t_qr.XXXXXX", cmd[256], line[256];
	unsigned char	*px;
	unsigned	 side;
	char		*png;
	size_t		 len;
	FILE		*f;
	int		 fd;

	if (system("command -v zbarimg >/dev/null 2>&1") != 0) {
		SKIP("zbarimg (zbar-tools) is not installed: the QR code was "
		    "not decoded");
		return;
	}
	qr(json_pack("{s:s,s:s}", "content", "flowcgi: QR 二维码 & more",
	    "error_correction", "Q"), &px, &side, &png, &len);
	free(px);
	if ((fd = mkstemp(path)) < 0 || png == NULL) {
		CHECK(0);
		free(png);
		return;
	}
	if (write(fd, png, len) != (ssize_t)len)
		printf("# short write\n");
	close(fd);
	free(png);
	snprintf(cmd, sizeof(cmd), "zbarimg -q --raw %s 2>/dev/null", path);
	line[0] = '\0';
	if ((f = popen(cmd, "r")) != NULL) {
		if (fgets(line, sizeof(line), f) == NULL)
			line[0] = '\0';
		pclose(f);
	}
	line[strcspn(line, "\n")] = '\0';
	CHECK_STR(line, "flowcgi: QR 二维码 & more");
	unlink(path);
}

int
main(void)
{
	tn_open();
	test_png();
	test_messages();
	test_decode();
	tn_close();
	tf_fonts_release();
	return tap_done();
}
