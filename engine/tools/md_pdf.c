/*
 * md_pdf.c — md_to_pdf: the Markdown laid out on A4 pages with Pango
 * (line breaking, font fallback through fontconfig, bidirectional text)
 * and written as PDF by cairo, with the fonts it used embedded.
 *
 * Headings, paragraphs with emphasis, strong, code, strikethrough and
 * links, bullet and numbered lists, block quotes, code blocks on a grey
 * ground, rules and tables (equal columns, cells wrapped, a row never
 * split across pages) are drawn; text flows onto new pages line by line.
 * Images are not fetched: their alternative text is drawn. The text is
 * set in DejaVu Sans (fonts-dejavu-core); Chinese, Japanese or Korean
 * text needs a font that has it (fonts-noto-cjk), which fontconfig then
 * finds by itself. Past export.max_pages pages it is ENGINE_ELIMIT.
 * The creation date is fixed, so the same Markdown gives the same bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairo-pdf.h>
#include <cairo.h>
#include <cmark-gfm-core-extensions.h>
#include <pango/pangocairo.h>

#include "engine/tools/md.h"
#include "engine/tools/tools.h"

#define PAGE_W		595.28	/* A4, points */
#define PAGE_H		841.89
#define MARGIN		56.69	/* 2 cm */
#define INDENT		18.0	/* a list level, a quote */
#define BODY_FONT	"DejaVu Sans 10.5"
#define MONO_FONT	"DejaVu Sans Mono 9"

struct pdf {
	cairo_t			*cr;
	cairo_surface_t		*surf;
	PangoContext		*ctx;
	struct dbuf		*out;
	double			 y;		/* the next line's top */
	int			 pages;		/* pages begun */
	int			 max_pages;
	int			 over;		/* max_pages passed */
	struct dbuf		*pngs;		/* md_png: a PNG per page */
	int			 rc;		/* md_png: a page not written */
};

/* ====== Pages ====== */

static cairo_status_t
sink(void *arg, const unsigned char *data, unsigned int n)
{
	return dbuf_add(arg, data, n) == DBUF_OK ? CAIRO_STATUS_SUCCESS :
	    CAIRO_STATUS_WRITE_ERROR;
}

/* Ends the page being drawn: the PDF's next page, or the page's PNG. */
static void
end_page(struct pdf *p)
{
	struct dbuf *b;

	if (p->pngs == NULL) {
		cairo_show_page(p->cr);
		return;
	}
	b = &p->pngs[p->pages - 1];
	cairo_surface_flush(p->surf);
	if (cairo_surface_write_to_png_stream(p->surf, sink, b) !=
	    CAIRO_STATUS_SUCCESS && p->rc == 0)
		p->rc = b->err == DBUF_ETOOBIG ? ENGINE_ELIMIT : ENGINE_ENOMEM;
}

static void
new_page(struct pdf *p)
{
	if (p->over)
		return;
	if (p->pages >= p->max_pages) {
		p->over = 1;
		return;
	}
	if (p->pages > 0)
		end_page(p);
	p->pages++;
	p->y = MARGIN;
	if (p->pngs != NULL) {	/* a white page */
		cairo_save(p->cr);
		cairo_set_source_rgb(p->cr, 1, 1, 1);
		cairo_paint(p->cr);
		cairo_restore(p->cr);
	}
}

/* Room for h more points on this page, else a new page. */
static void
need(struct pdf *p, double h)
{
	if (p->y + h > PAGE_H - MARGIN && p->y > MARGIN)
		new_page(p);
}

/* ====== Pango markup of inlines ====== */

static void
markup(cmark_node *parent, struct dbuf *b, int depth)
{
	cmark_node	*n;
	struct dbuf	 t = { 0 };
	const char	*s, *open, *close;

	for (n = cmark_node_first_child(parent); n != NULL;
	    n = cmark_node_next(n)) {
		open = close = NULL;
		switch (cmark_node_get_type(n)) {
		case CMARK_NODE_TEXT:
			s = cmark_node_get_literal(n);
			md_xml_escape(b, s, strlen(s));
			continue;
		case CMARK_NODE_CODE:
			s = cmark_node_get_literal(n);
			dbuf_addstr(b, "<span font_family=\"DejaVu Sans Mono\" "
			    "background=\"#f2f2f2\">");
			md_xml_escape(b, s, strlen(s));
			dbuf_addstr(b, "</span>");
			continue;
		case CMARK_NODE_SOFTBREAK:
			dbuf_addc(b, ' ');
			continue;
		case CMARK_NODE_LINEBREAK:
			dbuf_addc(b, '\n');
			continue;
		case CMARK_NODE_HTML_INLINE:
			continue;
		case CMARK_NODE_IMAGE:
			md_plain_text(n, &t);
			dbuf_addstr(b, "<i>[");
			md_xml_escape(b, dbuf_str(&t), t.len);
			dbuf_addstr(b, "]</i>");
			dbuf_free(&t);
			continue;
		case CMARK_NODE_STRONG:
			open = "<b>";
			close = "</b>";
			break;
		case CMARK_NODE_EMPH:
			open = "<i>";
			close = "</i>";
			break;
		case CMARK_NODE_LINK:
			open = "<span foreground=\"#0563c1\" "
			    "underline=\"single\">";
			close = "</span>";
			break;
		default:
			if (md_is_strike(n)) {
				open = "<s>";
				close = "</s>";
			}
			break;
		}
		if (open != NULL)
			dbuf_addstr(b, open);
		if (depth < MD_MAX_DEPTH)
			markup(n, b, depth + 1);
		else {
			md_plain_text(n, &t);
			md_xml_escape(b, dbuf_str(&t), t.len);
			dbuf_free(&t);
		}
		if (close != NULL)
			dbuf_addstr(b, close);
	}
}

/* A layout of markup m (plain text when it does not parse) in font,
 * width points wide. NULL when out of memory. */
static PangoLayout *
layout_of(struct pdf *p, const char *m, const char *font, double width)
{
	PangoLayout		*l;
	PangoFontDescription	*fd;
	PangoAttrList		*attrs = NULL;
	char			*text = NULL;

	if ((l = pango_layout_new(p->ctx)) == NULL)
		return NULL;
	fd = pango_font_description_from_string(font);
	pango_layout_set_font_description(l, fd);
	pango_font_description_free(fd);
	pango_layout_set_width(l, (int)(width * PANGO_SCALE));
	pango_layout_set_wrap(l, PANGO_WRAP_WORD_CHAR);
	if (pango_parse_markup(m, -1, 0, &attrs, &text, NULL, NULL)) {
		pango_layout_set_text(l, text, -1);
		pango_layout_set_attributes(l, attrs);
		pango_attr_list_unref(attrs);
		g_free(text);
	} else
		pango_layout_set_text(l, m, -1);
	return l;
}

/*
 * Draws markup m at x (from the left margin), line by line, each line on
 * the page it fits (bg: a grey ground behind each line). Then space
 * after.
 */
static void
draw_text(struct pdf *p, const char *m, const char *font, double x,
    int bg, double after)
{
	PangoLayout		*l;
	PangoLayoutIter		*it;
	PangoRectangle		 log;
	double			 h, base, top;

	if (p->over || (l = layout_of(p, m, font, PAGE_W - 2 * MARGIN - x)) ==
	    NULL)
		return;
	it = pango_layout_get_iter(l);
	do {
		pango_layout_iter_get_line_extents(it, NULL, &log);
		h = (double)log.height / PANGO_SCALE;
		need(p, h);
		if (p->over)
			break;
		top = (double)log.y / PANGO_SCALE;
		base = (double)pango_layout_iter_get_baseline(it) /
		    PANGO_SCALE - top;
		if (bg) {
			cairo_set_source_rgb(p->cr, 0.95, 0.95, 0.95);
			cairo_rectangle(p->cr, MARGIN + x - 4, p->y, PAGE_W -
			    2 * MARGIN - x + 8, h);
			cairo_fill(p->cr);
		}
		cairo_set_source_rgb(p->cr, 0, 0, 0);
		cairo_move_to(p->cr, MARGIN + x + (double)log.x / PANGO_SCALE,
		    p->y + base);
		pango_cairo_show_layout_line(p->cr,
		    pango_layout_iter_get_line_readonly(it));
		p->y += h;
	} while (pango_layout_iter_next_line(it));
	pango_layout_iter_free(it);
	g_object_unref(l);
	p->y += after;
}

/* ====== Blocks ====== */

static void blocks(struct pdf *p, cmark_node *parent, double x,
    const char *wrap, int depth);

static void
table(struct pdf *p, cmark_node *t, double x, int depth)
{
	cmark_node	*row, *cell;
	PangoLayout	*cells[64];
	struct dbuf	 m = { 0 };
	int		 cols = cmark_gfm_extensions_get_table_columns(t), i, n;
	int		 header;
	double		 cw, rh, pad = 4, ch;
	PangoRectangle	 log;

	if (cols <= 0)
		return;
	if (cols > 64)
		cols = 64;
	cw = (PAGE_W - 2 * MARGIN - x) / cols;
	for (row = cmark_node_first_child(t); row != NULL && !p->over;
	    row = cmark_node_next(row)) {
		if (!md_is_table_row(row))
			continue;
		header = cmark_gfm_extensions_get_table_row_is_header(row);
		rh = 0;
		n = 0;
		for (cell = cmark_node_first_child(row); cell != NULL &&
		    n < cols; cell = cmark_node_next(cell)) {
			dbuf_reset(&m);
			if (header)
				dbuf_addstr(&m, "<b>");
			markup(cell, &m, depth + 1);
			if (header)
				dbuf_addstr(&m, "</b>");
			cells[n] = layout_of(p, dbuf_str(&m), BODY_FONT, cw - 2 *
			    pad);
			if (cells[n] == NULL)
				break;
			pango_layout_get_extents(cells[n], NULL, &log);
			ch = (double)log.height / PANGO_SCALE + 2 * pad;
			if (ch > rh)
				rh = ch;
			n++;
		}
		if (rh == 0)
			rh = 2 * pad + 12;
		need(p, rh);
		for (i = 0; i < cols && !p->over; i++) {
			cairo_set_source_rgb(p->cr, header ? 0.93 : 1, header ?
			    0.93 : 1, header ? 0.93 : 1);
			cairo_rectangle(p->cr, MARGIN + x + i * cw, p->y, cw, rh);
			cairo_fill_preserve(p->cr);
			cairo_set_source_rgb(p->cr, 0.4, 0.4, 0.4);
			cairo_set_line_width(p->cr, 0.5);
			cairo_stroke(p->cr);
			if (i < n) {
				cairo_set_source_rgb(p->cr, 0, 0, 0);
				cairo_move_to(p->cr, MARGIN + x + i * cw + pad,
				    p->y + pad);
				pango_cairo_show_layout(p->cr, cells[i]);
			}
		}
		for (i = 0; i < n; i++)
			g_object_unref(cells[i]);
		p->y += rh;
	}
	dbuf_free(&m);
	p->y += 8;
}

static void
list(struct pdf *p, cmark_node *l, double x, const char *wrap, int depth)
{
	cmark_node	*item;
	char		 mark[32];
	double		 y0;
	int		 num = cmark_node_get_list_start(l);
	int		 ordered = cmark_node_get_list_type(l) ==
			    CMARK_ORDERED_LIST;

	for (item = cmark_node_first_child(l); item != NULL && !p->over;
	    item = cmark_node_next(item)) {
		if (ordered)
			snprintf(mark, sizeof(mark), "%d.", num++);
		else
			snprintf(mark, sizeof(mark), "%s", depth % 2 ?
			    "\xe2\x97\xa6" : "\xe2\x80\xa2");
		need(p, 14);
		y0 = p->y;
		draw_text(p, mark, BODY_FONT, x, 0, 0);
		if (p->y > y0)	/* the mark's line; the item starts there */
			p->y = y0;
		blocks(p, item, x + INDENT, wrap, depth + 1);
		if (cmark_node_first_child(item) == NULL)
			p->y += 14;
	}
	p->y += 4;
}

static void
blocks(struct pdf *p, cmark_node *parent, double x, const char *wrap,
    int depth)
{
	static const char *const hfont[] = { "DejaVu Sans Bold 20",
	    "DejaVu Sans Bold 16", "DejaVu Sans Bold 14",
	    "DejaVu Sans Bold 12", "DejaVu Sans Bold 11",
	    "DejaVu Sans Bold 10.5" };
	struct dbuf	 m = { 0 };
	cmark_node	*n;
	const char	*s;
	int		 level;

	for (n = cmark_node_first_child(parent); n != NULL && !p->over;
	    n = cmark_node_next(n)) {
		dbuf_reset(&m);
		if (depth >= MD_MAX_DEPTH) {
			md_plain_text(n, &m);
			draw_text(p, dbuf_str(&m), BODY_FONT, x, 0, 6);
			continue;
		}
		switch (cmark_node_get_type(n)) {
		case CMARK_NODE_PARAGRAPH:
			if (wrap)
				dbuf_addstr(&m, wrap);
			markup(n, &m, depth + 1);
			if (wrap)
				dbuf_addstr(&m, "</span>");
			draw_text(p, dbuf_str(&m), BODY_FONT, x, 0, 6);
			break;
		case CMARK_NODE_HEADING:
			level = cmark_node_get_heading_level(n);
			if (level < 1 || level > 6)
				level = 6;
			markup(n, &m, depth + 1);
			if (p->y > MARGIN)
				p->y += level <= 2 ? 10 : 6;
			need(p, 48);	/* not alone at a page's foot */
			draw_text(p, dbuf_str(&m), hfont[level - 1], x, 0, 6);
			break;
		case CMARK_NODE_CODE_BLOCK:
			s = cmark_node_get_literal(n);
			md_xml_escape(&m, s, strlen(s));
			while (m.len > 0 && m.p[m.len - 1] == '\n')
				m.p[--m.len] = '\0';
			draw_text(p, dbuf_str(&m), MONO_FONT, x + 4, 1, 8);
			break;
		case CMARK_NODE_BLOCK_QUOTE:
			blocks(p, n, x + INDENT, "<span foreground=\"#595959\" "
			    "style=\"italic\">", depth + 1);
			break;
		case CMARK_NODE_LIST:
			list(p, n, x, wrap, depth);
			break;
		case CMARK_NODE_THEMATIC_BREAK:
			need(p, 12);
			cairo_set_source_rgb(p->cr, 0.6, 0.6, 0.6);
			cairo_set_line_width(p->cr, 0.75);
			cairo_move_to(p->cr, MARGIN + x, p->y + 6);
			cairo_line_to(p->cr, PAGE_W - MARGIN, p->y + 6);
			cairo_stroke(p->cr);
			p->y += 12;
			break;
		case CMARK_NODE_HTML_BLOCK:
			break;
		default:
			if (md_is_table(n))
				table(p, n, x, depth);
			else
				blocks(p, n, x, wrap, depth + 1);
			break;
		}
	}
	dbuf_free(&m);
}

/* ====== The PDF ====== */

int
md_pdf(cmark_node *doc, int max_pages, struct dbuf *out, char *err)
{
	struct pdf	p;
	int		rc = ENGINE_ENOMEM;

	memset(&p, 0, sizeof(p));
	p.out = out;
	p.max_pages = max_pages;
	p.surf = cairo_pdf_surface_create_for_stream(sink, out, PAGE_W,
	    PAGE_H);
	if (cairo_surface_status(p.surf) != CAIRO_STATUS_SUCCESS)
		goto out;
	cairo_pdf_surface_set_metadata(p.surf, CAIRO_PDF_METADATA_CREATE_DATE,
	    "2000-01-01T00:00:00Z");
	cairo_pdf_surface_set_metadata(p.surf, CAIRO_PDF_METADATA_CREATOR,
	    "flowcgi md_exporter");
	p.cr = cairo_create(p.surf);
	if (cairo_status(p.cr) != CAIRO_STATUS_SUCCESS ||
	    (p.ctx = pango_cairo_create_context(p.cr)) == NULL)
		goto out;
	new_page(&p);
	blocks(&p, doc, 0, NULL, 0);
	if (p.over) {
		rc = ENGINE_ELIMIT;
		snprintf(err, ENGINE_ERRMAX, "the PDF would have more than "
		    "export.max_pages (%d) pages", max_pages);
		goto out;
	}
	cairo_show_page(p.cr);
	cairo_destroy(p.cr);
	p.cr = NULL;
	cairo_surface_finish(p.surf);
	if (cairo_surface_status(p.surf) != CAIRO_STATUS_SUCCESS) {
		rc = out->err == DBUF_ETOOBIG ? ENGINE_ELIMIT : ENGINE_ENOMEM;
		goto out;
	}
	rc = 0;
out:
	if (p.ctx != NULL)
		g_object_unref(p.ctx);
	if (p.cr != NULL)
		cairo_destroy(p.cr);
	if (p.surf != NULL)
		cairo_surface_destroy(p.surf);
	return rc;
}

/* ====== PNG pages ====== */

int
md_png(cmark_node *doc, int max_pages, struct dbuf *pages, int *npages,
    char *err)
{
	struct pdf	p;
	int		rc = ENGINE_ENOMEM;

	memset(&p, 0, sizeof(p));
	*npages = 0;
	p.max_pages = max_pages;
	p.pngs = pages;
	p.surf = cairo_image_surface_create(CAIRO_FORMAT_RGB24,
	    (int)(PAGE_W * MD_PNG_ZOOM), (int)(PAGE_H * MD_PNG_ZOOM));
	if (cairo_surface_status(p.surf) != CAIRO_STATUS_SUCCESS)
		goto out;
	p.cr = cairo_create(p.surf);
	if (cairo_status(p.cr) != CAIRO_STATUS_SUCCESS ||
	    (p.ctx = pango_cairo_create_context(p.cr)) == NULL)
		goto out;
	cairo_scale(p.cr, MD_PNG_ZOOM, MD_PNG_ZOOM);
	pango_cairo_update_context(p.cr, p.ctx);
	new_page(&p);
	blocks(&p, doc, 0, NULL, 0);
	if (p.over) {
		rc = ENGINE_ELIMIT;
		snprintf(err, ENGINE_ERRMAX, "the pages would be more than "
		    "export.max_pages (%d)", max_pages);
		goto out;
	}
	end_page(&p);
	if ((rc = p.rc) != 0)
		goto out;
	*npages = p.pages;
out:
	if (p.ctx != NULL)
		g_object_unref(p.ctx);
	if (p.cr != NULL)
		cairo_destroy(p.cr);
	if (p.surf != NULL)
		cairo_surface_destroy(p.surf);
	return rc;
}
