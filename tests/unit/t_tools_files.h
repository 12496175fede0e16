/*
 * t_tools_files.h — what the tests of the file-making tools (md_exporter,
 * chart, qrcode) share: a tool's file read back from its data: URL, a
 * zip's parts read with libarchive, XML checked with libxml2, a PNG's
 * header read. These tools make no request, so no fake server is
 * started. Include after tap.h, t_node_run.h and t_tools_fake.h.
 */
#ifndef FLOWCGI_T_TOOLS_FILES_H
#define FLOWCGI_T_TOOLS_FILES_H

#include <archive.h>
#include <archive_entry.h>
#include <libxml/parser.h>
#include <png.h>
#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <pango/pangocairo.h>

/* The bytes of file object f (from its data: URL), malloc'd into *data;
 * 0, or -1 when it has none. */
static TN_UNUSED int
tf_file_bytes(const json_t *f, char **data, size_t *len)
{
	const char *url = json_string_value(json_object_get(f, "url"));
	const char *comma;

	*data = NULL;
	*len = 0;
	if (url == NULL || strncmp(url, "data:", 5) != 0 ||
	    (comma = strstr(url, ";base64,")) == NULL)
		return -1;
	comma += 8;
	return file_b64_decode(comma, strlen(comma), data, len);
}

/* The i-th file of a result and its bytes (*data malloc'd); NULL when
 * there is no such file. */
static TN_UNUSED const json_t *
res_file(const struct tool_result *r, size_t i, char **data, size_t *len)
{
	const json_t *f = json_array_get(r->files, i);

	*data = NULL;
	*len = 0;
	if (f == NULL || tf_file_bytes(f, data, len) != 0)
		return NULL;
	return f;
}

/* The part called name of zip (n bytes): malloc'd, NUL-terminated, or
 * NULL. *names (when not NULL) gets every part's name joined by "\n"
 * (malloc'd). */
static TN_UNUSED char *
zip_part(const char *zip, size_t n, const char *name, char **names)
{
	struct archive		*a = archive_read_new();
	struct archive_entry	*ent;
	struct dbuf		 list = { 0 };
	char			*out = NULL;
	la_int64_t		 sz;

	archive_read_support_format_zip(a);
	if (archive_read_open_memory(a, zip, n) != ARCHIVE_OK) {
		printf("# zip: %s\n", archive_error_string(a));
		archive_read_free(a);
		if (names)
			*names = NULL;
		return NULL;
	}
	while (archive_read_next_header(a, &ent) == ARCHIVE_OK) {
		dbuf_addstr(&list, archive_entry_pathname(ent));
		dbuf_addc(&list, '\n');
		if (name == NULL || out != NULL ||
		    strcmp(archive_entry_pathname(ent), name) != 0)
			continue;
		sz = archive_entry_size(ent);
		if ((out = calloc(1, (size_t)sz + 1)) != NULL &&
		    archive_read_data(a, out, (size_t)sz) != sz) {
			free(out);
			out = NULL;
		}
	}
	archive_read_free(a);
	if (names)
		*names = dbuf_take(&list, NULL);
	dbuf_free(&list);
	return out;
}

/* 1 when s is well-formed XML. */
static TN_UNUSED int
xml_ok(const char *s)
{
	xmlDocPtr d;

	if (s == NULL)
		return 0;
	d = xmlReadMemory(s, (int)strlen(s), "part.xml", NULL, XML_PARSE_NONET |
	    XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (d == NULL)
		return 0;
	xmlFreeDoc(d);
	return 1;
}

/* 1 when part name of zip is there and well-formed XML. */
static TN_UNUSED int
part_ok(const char *zip, size_t n, const char *name)
{
	char	*s = zip_part(zip, n, name, NULL);
	int	 ok = xml_ok(s);

	free(s);
	return ok;
}

/* A PNG's width and height from its IHDR; -1 when data is not a PNG. */
static TN_UNUSED int
png_size(const char *data, size_t len, unsigned *w, unsigned *h)
{
	const unsigned char *p = (const unsigned char *)data;

	if (len < 24 || memcmp(p, "\x89PNG\r\n\x1a\n", 8) != 0 ||
	    memcmp(p + 12, "IHDR", 4) != 0)
		return -1;
	*w = (unsigned)p[16] << 24 | (unsigned)p[17] << 16 |
	    (unsigned)p[18] << 8 | p[19];
	*h = (unsigned)p[20] << 24 | (unsigned)p[21] << 16 |
	    (unsigned)p[22] << 8 | p[23];
	return 0;
}

/* Occurrences of needle in s. */
static TN_UNUSED int
count_of(const char *s, const char *needle)
{
	int n = 0;

	while (s != NULL && (s = strstr(s, needle)) != NULL) {
		n++;
		s += strlen(needle);
	}
	return n;
}

/*
 * Frees the font caches Pango, cairo and fontconfig keep for the process
 * (this thread's font map, cairo's static data, fontconfig's
 * configuration), so that LeakSanitizer sees only real leaks at exit.
 * A server keeps them: their size stays the same call after call.
 */
static TN_UNUSED void
tf_fonts_release(void)
{
	pango_cairo_font_map_set_default(NULL);
	cairo_debug_reset_static_data();
	FcFini();
}

/*
 * A PNG decoded to 8-bit RGB (libpng's simplified API): *px malloc'd,
 * 3 bytes a pixel, rows top to bottom. 0, or -1 when it does not decode.
 */
static TN_UNUSED int
png_rgb(const char *data, size_t len, unsigned char **px, unsigned *w,
    unsigned *h)
{
	png_image img;

	*px = NULL;
	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_memory(&img, data, len))
		return -1;
	img.format = PNG_FORMAT_RGB;
	if ((*px = malloc(PNG_IMAGE_SIZE(img))) == NULL ||
	    !png_image_finish_read(&img, NULL, *px, 0, NULL)) {
		free(*px);
		*px = NULL;
		png_image_free(&img);
		return -1;
	}
	*w = img.width;
	*h = img.height;
	return 0;
}

/* Occurrences of needle in the n bytes at s (NUL bytes and all). */
static TN_UNUSED int
count_mem(const char *s, size_t n, const char *needle)
{
	const char	*p = s, *end = s + n;
	size_t		 k = strlen(needle);
	int		 c = 0;

	while (p < end && (p = memmem(p, (size_t)(end - p), needle, k)) !=
	    NULL) {
		c++;
		p += k;
	}
	return c;
}

#endif
