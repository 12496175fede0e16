/*
 * md_office.c — Office Open XML packages for md_exporter: DOCX (a Word
 * document with headings, paragraphs, emphasis, code, block quotes,
 * bullet and numbered lists, tables, links) and XLSX (a sheet per table).
 * Each is the smallest package Word, Excel and LibreOffice open: the
 * parts ECMA-376 requires, written as a zip through libarchive with
 * fixed times, so the same Markdown gives the same bytes.
 *
 * Images are not fetched (no tool here makes a network request): an
 * image is written as its alternative text.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>
#include <cmark-gfm-core-extensions.h>

#include "engine/tools/md.h"
#include "engine/tools/tools.h"

#define XML_DECL "<?xml version=\"1.0\" encoding=\"UTF-8\" " \
	"standalone=\"yes\"?>\n"
#define NS_W "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
#define NS_R "http://schemas.openxmlformats.org/officeDocument/2006/" \
	"relationships"
#define NS_PKG_REL "http://schemas.openxmlformats.org/package/2006/" \
	"relationships"
#define NS_CT "http://schemas.openxmlformats.org/package/2006/content-types"
#define NS_SS "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
#define REL_T NS_R "/"
#define CT_OFF "application/vnd.openxmlformats-officedocument."

/* ====== The zip ====== */

struct zip_sink {
	struct dbuf	*out;
};

static la_ssize_t
zip_write(struct archive *a, void *arg, const void *buf, size_t n)
{
	struct zip_sink *s = arg;

	if (dbuf_add(s->out, buf, n) != DBUF_OK) {
		archive_set_error(a, 1, "output limit");
		return -1;
	}
	return (la_ssize_t)n;
}

int
md_zip(const struct md_part *parts, size_t nparts, struct dbuf *out,
    char *err)
{
	struct archive		*a = NULL;
	struct archive_entry	*ent = NULL;
	struct zip_sink		 sink = { out };
	size_t			 i;
	int			 rc = ENGINE_ENOMEM;

	if ((a = archive_write_new()) == NULL ||
	    (ent = archive_entry_new()) == NULL)
		goto out;
	if (archive_write_set_format_zip(a) != ARCHIVE_OK ||
	    archive_write_zip_set_compression_deflate(a) != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(a, 0) != ARCHIVE_OK ||
	    archive_write_open2(a, &sink, NULL, zip_write, NULL, NULL) !=
	    ARCHIVE_OK)
		goto fail;
	for (i = 0; i < nparts; i++) {
		archive_entry_clear(ent);
		archive_entry_set_pathname(ent, parts[i].name);
		archive_entry_set_filetype(ent, AE_IFREG);
		archive_entry_set_perm(ent, 0644);
		archive_entry_set_size(ent, (la_int64_t)parts[i].len);
		archive_entry_set_mtime(ent, 315532800, 0);	/* 1980-01-01 */
		if (archive_write_header(a, ent) != ARCHIVE_OK ||
		    archive_write_data(a, parts[i].data, parts[i].len) !=
		    (la_ssize_t)parts[i].len)
			goto fail;
	}
	if (archive_write_close(a) != ARCHIVE_OK)
		goto fail;
	rc = 0;
	goto out;
fail:
	rc = out->err == DBUF_ETOOBIG ? ENGINE_ELIMIT : out->err ?
	    ENGINE_ENOMEM : ENGINE_EINVAL;
	if (rc == ENGINE_EINVAL)
		engine_invalid(err, "the zip could not be written: %s",
		    archive_error_string(a) ? archive_error_string(a) : "?");
	else if (rc == ENGINE_ELIMIT)
		snprintf(err, ENGINE_ERRMAX, "the file is too large");
out:
	if (ent != NULL)
		archive_entry_free(ent);
	if (a != NULL)
		archive_write_free(a);
	return rc;
}

static void
esc(struct dbuf *b, const char *s)
{
	md_xml_escape(b, s, strlen(s));
}

/* ====== DOCX ====== */

struct docx {
	struct dbuf	 body;
	struct dbuf	 rels;
	int		 nrel;		/* hyperlink relationships so far */
	int		 nlists;	/* numbered lists: numId 2.. */
	struct dbuf	 nums;		/* their <w:num> elements */
};

/* Run properties of the inline context. */
struct runfmt {
	int	bold, italic, strike, code, link;
};

static void
docx_text(struct docx *d, const struct runfmt *f, const char *s)
{
	dbuf_addstr(&d->body, "<w:r>");
	if (f->bold || f->italic || f->strike || f->code || f->link) {
		dbuf_addstr(&d->body, "<w:rPr>");
		if (f->link)
			dbuf_addstr(&d->body, "<w:rStyle w:val=\"Hyperlink\"/>");
		else if (f->code)
			dbuf_addstr(&d->body, "<w:rStyle w:val=\"CodeChar\"/>");
		if (f->bold)
			dbuf_addstr(&d->body, "<w:b/>");
		if (f->italic)
			dbuf_addstr(&d->body, "<w:i/>");
		if (f->strike)
			dbuf_addstr(&d->body, "<w:strike/>");
		dbuf_addstr(&d->body, "</w:rPr>");
	}
	dbuf_addstr(&d->body, "<w:t xml:space=\"preserve\">");
	esc(&d->body, s);
	dbuf_addstr(&d->body, "</w:t></w:r>");
}

static void
docx_inlines(struct docx *d, cmark_node *parent, struct runfmt f, int depth)
{
	cmark_node	*n;
	struct runfmt	 g;
	struct dbuf	 alt = { 0 };
	const char	*s;

	for (n = cmark_node_first_child(parent); n != NULL;
	    n = cmark_node_next(n)) {
		g = f;
		switch (cmark_node_get_type(n)) {
		case CMARK_NODE_TEXT:
			docx_text(d, &f, cmark_node_get_literal(n));
			continue;
		case CMARK_NODE_CODE:
			g.code = 1;
			docx_text(d, &g, cmark_node_get_literal(n));
			continue;
		case CMARK_NODE_SOFTBREAK:
			docx_text(d, &f, " ");
			continue;
		case CMARK_NODE_LINEBREAK:
			dbuf_addstr(&d->body, "<w:r><w:br/></w:r>");
			continue;
		case CMARK_NODE_HTML_INLINE:
			continue;
		case CMARK_NODE_IMAGE:
			md_plain_text(n, &alt);
			g.italic = 1;
			docx_text(d, &g, dbuf_str(&alt));
			dbuf_free(&alt);
			continue;
		case CMARK_NODE_STRONG:
			g.bold = 1;
			break;
		case CMARK_NODE_EMPH:
			g.italic = 1;
			break;
		case CMARK_NODE_LINK:
			s = cmark_node_get_url(n);
			if (s == NULL || *s == '\0' || f.link)
				break;
			d->nrel++;
			dbuf_addf(&d->rels, "<Relationship Id=\"rIdL%d\" "
			    "Type=\"" REL_T "hyperlink\" Target=\"", d->nrel);
			esc(&d->rels, s);
			dbuf_addstr(&d->rels, "\" TargetMode=\"External\"/>");
			dbuf_addf(&d->body, "<w:hyperlink r:id=\"rIdL%d\">",
			    d->nrel);
			g.link = 1;
			if (depth < MD_MAX_DEPTH)
				docx_inlines(d, n, g, depth + 1);
			dbuf_addstr(&d->body, "</w:hyperlink>");
			continue;
		default:
			if (md_is_strike(n))
				g.strike = 1;
			break;
		}
		if (depth < MD_MAX_DEPTH)
			docx_inlines(d, n, g, depth + 1);
		else {
			md_plain_text(n, &alt);
			docx_text(d, &g, dbuf_str(&alt));
			dbuf_free(&alt);
		}
	}
}

/* Where a paragraph is: its style, and the list it numbers in. */
struct blockctx {
	const char	*style;		/* "Quote", "ListParagraph" or NULL */
	int		 num_id;	/* 0: none */
	int		 ilvl;
	int		*first;		/* the item's first paragraph, to number */
};

static void
docx_ppr(struct docx *d, const char *style, const struct blockctx *c)
{
	int numbered = c->num_id > 0 && c->first != NULL && *c->first;

	if (style == NULL && !numbered)
		return;
	dbuf_addstr(&d->body, "<w:pPr>");
	if (style != NULL)
		dbuf_addf(&d->body, "<w:pStyle w:val=\"%s\"/>", style);
	if (numbered) {
		dbuf_addf(&d->body, "<w:numPr><w:ilvl w:val=\"%d\"/><w:numId "
		    "w:val=\"%d\"/></w:numPr>", c->ilvl, c->num_id);
		*c->first = 0;
	} else if (c->num_id > 0)
		dbuf_addf(&d->body, "<w:ind w:left=\"%d\"/>",
		    720 * (c->ilvl + 1));
	dbuf_addstr(&d->body, "</w:pPr>");
}

static void docx_blocks(struct docx *d, cmark_node *parent,
    const struct blockctx *c, int depth);

static void
docx_table(struct docx *d, cmark_node *t, int depth)
{
	cmark_node	*row, *cell;
	struct runfmt	 f = { 0 };
	int		 cols = cmark_gfm_extensions_get_table_columns(t), i;

	dbuf_addstr(&d->body, "<w:tbl><w:tblPr><w:tblStyle w:val=\"TableGrid\"/>"
	    "<w:tblW w:w=\"5000\" w:type=\"pct\"/></w:tblPr><w:tblGrid>");
	for (i = 0; i < cols; i++)
		dbuf_addf(&d->body, "<w:gridCol w:w=\"%d\"/>", 9000 /
		    (cols > 0 ? cols : 1));
	dbuf_addstr(&d->body, "</w:tblGrid>");
	for (row = cmark_node_first_child(t); row != NULL;
	    row = cmark_node_next(row)) {
		if (!md_is_table_row(row))
			continue;
		f.bold = cmark_gfm_extensions_get_table_row_is_header(row);
		dbuf_addstr(&d->body, f.bold ? "<w:tr><w:trPr><w:tblHeader/>"
		    "</w:trPr>" : "<w:tr>");
		i = 0;
		for (cell = cmark_node_first_child(row); cell != NULL;
		    cell = cmark_node_next(cell), i++) {
			dbuf_addstr(&d->body, "<w:tc><w:tcPr><w:tcW w:w=\"0\" "
			    "w:type=\"auto\"/></w:tcPr><w:p>");
			docx_inlines(d, cell, f, depth + 1);
			dbuf_addstr(&d->body, "</w:p></w:tc>");
		}
		/* a short row is padded: every row has every column */
		for (; i < cols; i++)
			dbuf_addstr(&d->body, "<w:tc><w:tcPr><w:tcW w:w=\"0\" "
			    "w:type=\"auto\"/></w:tcPr><w:p/></w:tc>");
		dbuf_addstr(&d->body, "</w:tr>");
	}
	dbuf_addstr(&d->body, "</w:tbl><w:p/>");
}

static void
docx_code(struct docx *d, const char *code)
{
	const char	*p = code, *nl;
	struct dbuf	 line = { 0 };
	struct runfmt	 f = { 0 };
	size_t		 n = strlen(code);

	if (n > 0 && code[n - 1] == '\n')
		n--;
	do {
		nl = memchr(p, '\n', (size_t)(code + n - p));
		dbuf_reset(&line);
		dbuf_add(&line, p, nl ? (size_t)(nl - p) : (size_t)(code + n -
		    p));
		dbuf_addstr(&d->body, "<w:p><w:pPr><w:pStyle w:val=\"Code\"/>"
		    "</w:pPr>");
		docx_text(d, &f, dbuf_str(&line));
		dbuf_addstr(&d->body, "</w:p>");
		p = nl ? nl + 1 : NULL;
	} while (p != NULL && p < code + n);
	dbuf_free(&line);
}

static void
docx_list(struct docx *d, cmark_node *list, const struct blockctx *c,
    int depth)
{
	struct blockctx	 ic;
	cmark_node	*item;
	int		 first, num_id = 1, ilvl;

	ilvl = c->num_id > 0 ? c->ilvl + 1 : 0;
	if (ilvl > 8)
		ilvl = 8;
	if (cmark_node_get_list_type(list) == CMARK_ORDERED_LIST) {
		num_id = 2 + d->nlists++;
		dbuf_addf(&d->nums, "<w:num w:numId=\"%d\"><w:abstractNumId "
		    "w:val=\"1\"/><w:lvlOverride w:ilvl=\"%d\"><w:startOverride "
		    "w:val=\"%d\"/></w:lvlOverride></w:num>", num_id, ilvl,
		    cmark_node_get_list_start(list));
	}
	for (item = cmark_node_first_child(list); item != NULL;
	    item = cmark_node_next(item)) {
		first = 1;
		ic.style = "ListParagraph";
		ic.num_id = num_id;
		ic.ilvl = ilvl;
		ic.first = &first;
		docx_blocks(d, item, &ic, depth + 1);
		if (first) {	/* an empty item still shows its bullet */
			docx_ppr(d, ic.style, &ic);
			dbuf_addstr(&d->body, "<w:p/>");
		}
	}
}

static void
docx_blocks(struct docx *d, cmark_node *parent, const struct blockctx *c,
    int depth)
{
	struct runfmt	 f = { 0 };
	struct blockctx	 qc;
	struct dbuf	 txt = { 0 };
	cmark_node	*n;
	char		 style[16];

	for (n = cmark_node_first_child(parent); n != NULL;
	    n = cmark_node_next(n)) {
		if (depth >= MD_MAX_DEPTH) {	/* too deep: plain text */
			dbuf_reset(&txt);
			md_plain_text(n, &txt);
			dbuf_addstr(&d->body, "<w:p>");
			docx_text(d, &f, dbuf_str(&txt));
			dbuf_addstr(&d->body, "</w:p>");
			continue;
		}
		switch (cmark_node_get_type(n)) {
		case CMARK_NODE_PARAGRAPH:
			dbuf_addstr(&d->body, "<w:p>");
			docx_ppr(d, c->style, c);
			docx_inlines(d, n, f, depth + 1);
			dbuf_addstr(&d->body, "</w:p>");
			break;
		case CMARK_NODE_HEADING:
			snprintf(style, sizeof(style), "Heading%d",
			    cmark_node_get_heading_level(n));
			dbuf_addstr(&d->body, "<w:p>");
			docx_ppr(d, style, c);
			docx_inlines(d, n, f, depth + 1);
			dbuf_addstr(&d->body, "</w:p>");
			break;
		case CMARK_NODE_CODE_BLOCK:
			docx_code(d, cmark_node_get_literal(n));
			break;
		case CMARK_NODE_BLOCK_QUOTE:
			qc = *c;
			qc.style = "Quote";
			docx_blocks(d, n, &qc, depth + 1);
			break;
		case CMARK_NODE_LIST:
			docx_list(d, n, c, depth);
			break;
		case CMARK_NODE_THEMATIC_BREAK:
			dbuf_addstr(&d->body, "<w:p><w:pPr><w:pBdr><w:bottom "
			    "w:val=\"single\" w:sz=\"6\" w:space=\"1\" "
			    "w:color=\"auto\"/></w:pBdr></w:pPr></w:p>");
			break;
		case CMARK_NODE_HTML_BLOCK:
			break;
		default:
			if (md_is_table(n))
				docx_table(d, n, depth);
			else
				docx_blocks(d, n, c, depth + 1);
			break;
		}
	}
	dbuf_free(&txt);
}

static const char docx_ct[] = XML_DECL
    "<Types xmlns=\"" NS_CT "\">"
    "<Default Extension=\"rels\" ContentType=\"application/vnd."
    "openxmlformats-package.relationships+xml\"/>"
    "<Default Extension=\"xml\" ContentType=\"application/xml\"/>"
    "<Override PartName=\"/word/document.xml\" ContentType=\"" CT_OFF
    "wordprocessingml.document.main+xml\"/>"
    "<Override PartName=\"/word/styles.xml\" ContentType=\"" CT_OFF
    "wordprocessingml.styles+xml\"/>"
    "<Override PartName=\"/word/numbering.xml\" ContentType=\"" CT_OFF
    "wordprocessingml.numbering+xml\"/>"
    "</Types>";

static const char docx_root_rels[] = XML_DECL
    "<Relationships xmlns=\"" NS_PKG_REL "\">"
    "<Relationship Id=\"rId1\" Type=\"" REL_T "officeDocument\" "
    "Target=\"word/document.xml\"/></Relationships>";

#define HEADING(n, sz) \
    "<w:style w:type=\"paragraph\" w:styleId=\"Heading" #n "\">" \
    "<w:name w:val=\"heading " #n "\"/><w:basedOn w:val=\"Normal\"/>" \
    "<w:next w:val=\"Normal\"/><w:qFormat/><w:pPr><w:keepNext/>" \
    "<w:spacing w:before=\"240\" w:after=\"120\"/><w:outlineLvl w:val=\"" \
    #n "\"/></w:pPr><w:rPr><w:b/><w:sz w:val=\"" #sz "\"/></w:rPr>" \
    "</w:style>"

static const char docx_styles[] = XML_DECL
    "<w:styles xmlns:w=\"" NS_W "\">"
    "<w:docDefaults><w:rPrDefault><w:rPr><w:rFonts w:ascii=\"Calibri\" "
    "w:hAnsi=\"Calibri\" w:eastAsia=\"SimSun\" w:cs=\"Calibri\"/>"
    "<w:sz w:val=\"22\"/><w:lang w:val=\"en-US\" w:eastAsia=\"zh-CN\"/>"
    "</w:rPr></w:rPrDefault><w:pPrDefault><w:pPr><w:spacing "
    "w:after=\"120\" w:line=\"276\" w:lineRule=\"auto\"/></w:pPr>"
    "</w:pPrDefault></w:docDefaults>"
    "<w:style w:type=\"paragraph\" w:default=\"1\" w:styleId=\"Normal\">"
    "<w:name w:val=\"Normal\"/><w:qFormat/></w:style>"
    HEADING(1, 36) HEADING(2, 32) HEADING(3, 28) HEADING(4, 26)
    HEADING(5, 24) HEADING(6, 22)
    "<w:style w:type=\"paragraph\" w:styleId=\"Code\"><w:name "
    "w:val=\"Code\"/><w:basedOn w:val=\"Normal\"/><w:pPr><w:shd "
    "w:val=\"clear\" w:color=\"auto\" w:fill=\"F2F2F2\"/><w:spacing "
    "w:after=\"0\" w:line=\"240\" w:lineRule=\"auto\"/></w:pPr><w:rPr>"
    "<w:rFonts w:ascii=\"Consolas\" w:hAnsi=\"Consolas\" "
    "w:cs=\"Consolas\"/><w:sz w:val=\"20\"/></w:rPr></w:style>"
    "<w:style w:type=\"paragraph\" w:styleId=\"Quote\"><w:name "
    "w:val=\"Quote\"/><w:basedOn w:val=\"Normal\"/><w:pPr><w:ind "
    "w:left=\"720\"/></w:pPr><w:rPr><w:i/><w:color w:val=\"595959\"/>"
    "</w:rPr></w:style>"
    "<w:style w:type=\"paragraph\" w:styleId=\"ListParagraph\"><w:name "
    "w:val=\"List Paragraph\"/><w:basedOn w:val=\"Normal\"/><w:pPr>"
    "<w:spacing w:after=\"60\"/><w:ind w:left=\"720\"/></w:pPr>"
    "</w:style>"
    "<w:style w:type=\"character\" w:styleId=\"CodeChar\"><w:name "
    "w:val=\"Code Char\"/><w:rPr><w:rFonts w:ascii=\"Consolas\" "
    "w:hAnsi=\"Consolas\" w:cs=\"Consolas\"/><w:shd w:val=\"clear\" "
    "w:color=\"auto\" w:fill=\"F2F2F2\"/></w:rPr></w:style>"
    "<w:style w:type=\"character\" w:styleId=\"Hyperlink\"><w:name "
    "w:val=\"Hyperlink\"/><w:rPr><w:color w:val=\"0563C1\"/><w:u "
    "w:val=\"single\"/></w:rPr></w:style>"
    "<w:style w:type=\"table\" w:styleId=\"TableGrid\"><w:name "
    "w:val=\"Table Grid\"/><w:tblPr><w:tblBorders>"
    "<w:top w:val=\"single\" w:sz=\"4\" w:space=\"0\" w:color=\"auto\"/>"
    "<w:left w:val=\"single\" w:sz=\"4\" w:space=\"0\" w:color=\"auto\"/>"
    "<w:bottom w:val=\"single\" w:sz=\"4\" w:space=\"0\" "
    "w:color=\"auto\"/>"
    "<w:right w:val=\"single\" w:sz=\"4\" w:space=\"0\" w:color=\"auto\"/>"
    "<w:insideH w:val=\"single\" w:sz=\"4\" w:space=\"0\" "
    "w:color=\"auto\"/>"
    "<w:insideV w:val=\"single\" w:sz=\"4\" w:space=\"0\" "
    "w:color=\"auto\"/>"
    "</w:tblBorders></w:tblPr></w:style>"
    "</w:styles>";

/* numbering.xml: abstract list 0 bullets, 1 decimal; each ordered list
 * is a <w:num> of its own (restarting at its start). */
static void
docx_numbering(struct dbuf *b, const struct dbuf *nums)
{
	static const char *const bullets[] = { "\xe2\x80\xa2", "o",
	    "\xe2\x96\xaa" };
	int a, l;

	dbuf_addstr(b, XML_DECL "<w:numbering xmlns:w=\"" NS_W "\">");
	for (a = 0; a < 2; a++) {
		dbuf_addf(b, "<w:abstractNum w:abstractNumId=\"%d\">"
		    "<w:multiLevelType w:val=\"hybridMultilevel\"/>", a);
		for (l = 0; l < 9; l++) {
			dbuf_addf(b, "<w:lvl w:ilvl=\"%d\"><w:start w:val=\"1\"/>"
			    "<w:numFmt w:val=\"%s\"/><w:lvlText w:val=\"", l,
			    a == 0 ? "bullet" : "decimal");
			if (a == 0)
				dbuf_addstr(b, bullets[l % 3]);
			else
				dbuf_addf(b, "%%%d.", l + 1);
			dbuf_addf(b, "\"/><w:lvlJc w:val=\"left\"/><w:pPr><w:ind "
			    "w:left=\"%d\" w:hanging=\"360\"/></w:pPr></w:lvl>",
			    720 * (l + 1));
		}
		dbuf_addstr(b, "</w:abstractNum>");
	}
	dbuf_addstr(b, "<w:num w:numId=\"1\"><w:abstractNumId w:val=\"0\"/>"
	    "</w:num>");
	dbuf_add(b, dbuf_str(nums), nums->len);
	dbuf_addstr(b, "</w:numbering>");
}

int
md_docx(cmark_node *doc, struct dbuf *out, char *err)
{
	struct docx	 d;
	struct blockctx	 c = { NULL, 0, 0, NULL };
	struct dbuf	 document = { 0 }, rels = { 0 }, numbering = { 0 };
	struct md_part	 parts[6];
	int		 rc;

	memset(&d, 0, sizeof(d));
	dbuf_init(&d.body, out->max);
	dbuf_init(&document, out->max);
	docx_blocks(&d, doc, &c, 0);
	dbuf_addstr(&document, XML_DECL "<w:document xmlns:w=\"" NS_W "\" "
	    "xmlns:r=\"" NS_R "\"><w:body>");
	dbuf_add(&document, dbuf_str(&d.body), d.body.len);
	dbuf_addstr(&document, "<w:p/><w:sectPr><w:pgSz w:w=\"11906\" "
	    "w:h=\"16838\"/><w:pgMar w:top=\"1440\" w:right=\"1440\" "
	    "w:bottom=\"1440\" w:left=\"1440\" w:header=\"708\" "
	    "w:footer=\"708\" w:gutter=\"0\"/></w:sectPr></w:body>"
	    "</w:document>");
	dbuf_addstr(&rels, XML_DECL "<Relationships xmlns=\"" NS_PKG_REL "\">"
	    "<Relationship Id=\"rId1\" Type=\"" REL_T "styles\" "
	    "Target=\"styles.xml\"/><Relationship Id=\"rId2\" Type=\"" REL_T
	    "numbering\" Target=\"numbering.xml\"/>");
	dbuf_add(&rels, dbuf_str(&d.rels), d.rels.len);
	dbuf_addstr(&rels, "</Relationships>");
	docx_numbering(&numbering, &d.nums);
	if (d.body.err == DBUF_ETOOBIG || document.err == DBUF_ETOOBIG) {
		rc = ENGINE_ELIMIT;
		out->err = DBUF_ETOOBIG;
		goto out;
	}
	if (d.body.err || d.rels.err || d.nums.err || document.err ||
	    rels.err || numbering.err) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	parts[0] = (struct md_part){ "[Content_Types].xml", docx_ct,
	    sizeof(docx_ct) - 1 };
	parts[1] = (struct md_part){ "_rels/.rels", docx_root_rels,
	    sizeof(docx_root_rels) - 1 };
	parts[2] = (struct md_part){ "word/document.xml", document.p,
	    document.len };
	parts[3] = (struct md_part){ "word/_rels/document.xml.rels", rels.p,
	    rels.len };
	parts[4] = (struct md_part){ "word/styles.xml", docx_styles,
	    sizeof(docx_styles) - 1 };
	parts[5] = (struct md_part){ "word/numbering.xml", numbering.p,
	    numbering.len };
	rc = md_zip(parts, 6, out, err);
out:
	dbuf_free(&d.body);
	dbuf_free(&d.rels);
	dbuf_free(&d.nums);
	dbuf_free(&document);
	dbuf_free(&rels);
	dbuf_free(&numbering);
	return rc;
}

/* ====== XLSX ====== */

/* Column letters of index i (0: A, 26: AA). */
static void
col_name(size_t i, char *buf, size_t n)
{
	char	tmp[16];
	size_t	k = 0, j;

	i++;
	while (i > 0 && k < sizeof(tmp)) {
		tmp[k++] = (char)('A' + (i - 1) % 26);
		i = (i - 1) / 26;
	}
	for (j = 0; j < k && j + 1 < n; j++)
		buf[j] = tmp[k - 1 - j];
	buf[j] = '\0';
}

/* 1 when s is a whole decimal number (what pandas would read as one). */
static int
is_number(const char *s)
{
	const char	*p = s;
	char		*end;
	double		 d;

	if (*p == '-' || *p == '+')
		p++;
	if (!isdigit((unsigned char)*p) && !(*p == '.' &&
	    isdigit((unsigned char)p[1])))
		return 0;
	d = strtod(s, &end);
	return *end == '\0' && isfinite(d);
}

/* Characters of s (UTF-8), for a column's width. */
static size_t
text_width(const char *s)
{
	size_t w = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w += ((unsigned char)*s >= 0xe0) ? 2 : 1;
	return w;
}

static void
xlsx_cell(struct dbuf *b, size_t col, size_t row, const char *s, int style,
    int force_text)
{
	char name[16];

	col_name(col, name, sizeof(name));
	if (!force_text && is_number(s)) {
		dbuf_addf(b, "<c r=\"%s%zu\"%s><v>%s</v></c>", name, row,
		    style ? " s=\"1\"" : "", s);
		return;
	}
	dbuf_addf(b, "<c r=\"%s%zu\" t=\"inlineStr\"%s><is><t "
	    "xml:space=\"preserve\">", name, row, style ? " s=\"1\"" : "");
	esc(b, s);
	dbuf_addstr(b, "</t></is></c>");
}

static void
xlsx_sheet(struct dbuf *b, const json_t *t, int force_text)
{
	const json_t	*hdr = json_object_get(t, "header"), *row, *v;
	size_t		 i, j, w, *width, ncol = json_array_size(hdr);

	dbuf_addstr(b, XML_DECL "<worksheet xmlns=\"" NS_SS "\" xmlns:r=\""
	    NS_R "\">");
	if (ncol > 0 && (width = calloc(ncol, sizeof(*width))) != NULL) {
		json_array_foreach(hdr, j, v)
			width[j] = text_width(json_string_value(v));
		json_array_foreach(json_object_get(t, "rows"), i, row)
			for (j = 0; j < ncol; j++) {
				v = json_array_get(row, j);
				w = v ? text_width(json_string_value(v)) : 0;
				if (w > width[j])
					width[j] = w;
			}
		dbuf_addstr(b, "<cols>");
		for (j = 0; j < ncol; j++)
			dbuf_addf(b, "<col min=\"%zu\" max=\"%zu\" width=\"%zu\" "
			    "customWidth=\"1\"/>", j + 1, j + 1, width[j] + 2 >
			    200 ? 200 : width[j] + 2);
		dbuf_addstr(b, "</cols>");
		free(width);
	}
	dbuf_addstr(b, "<sheetData><row r=\"1\">");
	json_array_foreach(hdr, j, v)
		xlsx_cell(b, j, 1, json_string_value(v), 1, 1);
	dbuf_addstr(b, "</row>");
	json_array_foreach(json_object_get(t, "rows"), i, row) {
		dbuf_addf(b, "<row r=\"%zu\">", i + 2);
		json_array_foreach(row, j, v)
			if (j < ncol || ncol == 0)
				xlsx_cell(b, j, i + 2, json_string_value(v), 0,
				    force_text);
		dbuf_addstr(b, "</row>");
	}
	dbuf_addstr(b, "</sheetData></worksheet>");
}

static const char xlsx_styles[] = XML_DECL
    "<styleSheet xmlns=\"" NS_SS "\">"
    "<fonts count=\"2\"><font><sz val=\"11\"/><name val=\"Calibri\"/>"
    "</font><font><b/><sz val=\"11\"/><name val=\"Calibri\"/></font>"
    "</fonts>"
    "<fills count=\"2\"><fill><patternFill patternType=\"none\"/></fill>"
    "<fill><patternFill patternType=\"gray125\"/></fill></fills>"
    "<borders count=\"2\"><border><left/><right/><top/><bottom/>"
    "<diagonal/></border><border><left style=\"thin\"/><right "
    "style=\"thin\"/><top style=\"thin\"/><bottom style=\"thin\"/>"
    "<diagonal/></border></borders>"
    "<cellStyleXfs count=\"1\"><xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" "
    "borderId=\"0\"/></cellStyleXfs>"
    "<cellXfs count=\"2\"><xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" "
    "borderId=\"0\" xfId=\"0\"/><xf numFmtId=\"0\" fontId=\"1\" "
    "fillId=\"0\" borderId=\"1\" xfId=\"0\" applyFont=\"1\" "
    "applyBorder=\"1\"><alignment horizontal=\"center\"/></xf></cellXfs>"
    "<cellStyles count=\"1\"><cellStyle name=\"Normal\" xfId=\"0\" "
    "builtinId=\"0\"/></cellStyles>"
    "</styleSheet>";

/* A sheet name Excel accepts: at most 31 characters, none of []:*?/\,
 * unique (case-insensitive) among names; else "Sheet<i>". */
static void
sheet_name(const json_t *t, size_t i, char names[][96], char *buf,
    size_t bufsz)
{
	const char	*s = json_string_value(json_object_get(t, "name"));
	size_t		 k = 0, chars = 0, j;

	if (s != NULL)
		for (; s[0] != '\0' && chars < 31 && k + 5 < bufsz; s++) {
			if (((unsigned char)*s & 0xc0) != 0x80)
				chars++;
			if (chars > 31)
				break;
			buf[k++] = strchr("[]:*?/\\", *s) ? '_' : *s;
		}
	buf[k] = '\0';
	/* a cut in the middle of a character is taken back */
	while (k > 0 && ((unsigned char)buf[k - 1] & 0xc0) == 0xc0)
		buf[--k] = '\0';
	for (j = 0; j < i && k > 0; j++)
		if (strcasecmp(names[j], buf) == 0)
			k = 0;
	if (k == 0)
		snprintf(buf, bufsz, "Sheet%zu", i + 1);
}

int
md_xlsx(const json_t *tables, int force_text, struct dbuf *out, char *err)
{
	struct dbuf	 ct = { 0 }, wb = { 0 }, wbrels = { 0 }, *sheets = NULL;
	struct md_part	*parts = NULL;
	char		 (*names)[96] = NULL, pname[64];
	char		**pnames = NULL;
	size_t		 i, n = json_array_size(tables), np = 0;
	int		 rc = ENGINE_ENOMEM, big = 0, bad = 0;

	if ((sheets = calloc(n, sizeof(*sheets))) == NULL ||
	    (parts = calloc(n + 5, sizeof(*parts))) == NULL ||
	    (names = calloc(n, sizeof(*names))) == NULL ||
	    (pnames = calloc(n, sizeof(*pnames))) == NULL)
		goto out;
	dbuf_addstr(&ct, XML_DECL "<Types xmlns=\"" NS_CT "\"><Default "
	    "Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-"
	    "package.relationships+xml\"/><Default Extension=\"xml\" "
	    "ContentType=\"application/xml\"/><Override PartName=\"/xl/"
	    "workbook.xml\" ContentType=\"" CT_OFF "spreadsheetml.sheet.main"
	    "+xml\"/><Override PartName=\"/xl/styles.xml\" ContentType=\""
	    CT_OFF "spreadsheetml.styles+xml\"/>");
	dbuf_addstr(&wb, XML_DECL "<workbook xmlns=\"" NS_SS "\" xmlns:r=\""
	    NS_R "\"><sheets>");
	dbuf_addstr(&wbrels, XML_DECL "<Relationships xmlns=\"" NS_PKG_REL
	    "\">");
	for (i = 0; i < n; i++) {
		sheet_name(json_array_get(tables, i), i, names, names[i],
		    sizeof(names[i]));
		dbuf_addf(&ct, "<Override PartName=\"/xl/worksheets/sheet%zu.xml"
		    "\" ContentType=\"" CT_OFF "spreadsheetml.worksheet+xml\"/>",
		    i + 1);
		dbuf_addstr(&wb, "<sheet name=\"");
		esc(&wb, names[i]);
		dbuf_addf(&wb, "\" sheetId=\"%zu\" r:id=\"rId%zu\"/>", i + 1,
		    i + 1);
		dbuf_addf(&wbrels, "<Relationship Id=\"rId%zu\" Type=\"" REL_T
		    "worksheet\" Target=\"worksheets/sheet%zu.xml\"/>", i + 1,
		    i + 1);
		dbuf_init(&sheets[i], out->max);
		xlsx_sheet(&sheets[i], json_array_get(tables, i), force_text);
		big |= sheets[i].err == DBUF_ETOOBIG;
		bad |= sheets[i].err != 0;
	}
	dbuf_addstr(&ct, "</Types>");
	dbuf_addstr(&wb, "</sheets></workbook>");
	dbuf_addf(&wbrels, "<Relationship Id=\"rId%zu\" Type=\"" REL_T
	    "styles\" Target=\"styles.xml\"/></Relationships>", n + 1);
	if (big) {
		rc = ENGINE_ELIMIT;
		out->err = DBUF_ETOOBIG;
		goto out;
	}
	if (bad || ct.err || wb.err || wbrels.err)
		goto out;
	parts[np++] = (struct md_part){ "[Content_Types].xml", ct.p, ct.len };
	parts[np++] = (struct md_part){ "_rels/.rels", XML_DECL
	    "<Relationships xmlns=\"" NS_PKG_REL "\"><Relationship Id=\"rId1\" "
	    "Type=\"" REL_T "officeDocument\" Target=\"xl/workbook.xml\"/>"
	    "</Relationships>", 0 };
	parts[np - 1].len = strlen(parts[np - 1].data);
	parts[np++] = (struct md_part){ "xl/workbook.xml", wb.p, wb.len };
	parts[np++] = (struct md_part){ "xl/_rels/workbook.xml.rels",
	    wbrels.p, wbrels.len };
	parts[np++] = (struct md_part){ "xl/styles.xml", xlsx_styles,
	    sizeof(xlsx_styles) - 1 };
	for (i = 0; i < n; i++) {
		snprintf(pname, sizeof(pname), "xl/worksheets/sheet%zu.xml",
		    i + 1);
		if ((pnames[i] = strdup(pname)) == NULL)
			goto out;
		parts[np++] = (struct md_part){ pnames[i], sheets[i].p,
		    sheets[i].len };
	}
	rc = md_zip(parts, np, out, err);
out:
	for (i = 0; sheets != NULL && i < n; i++)
		dbuf_free(&sheets[i]);
	for (i = 0; pnames != NULL && i < n; i++)
		free(pnames[i]);
	free(sheets);
	free(parts);
	free(names);
	free(pnames);
	dbuf_free(&ct);
	dbuf_free(&wb);
	dbuf_free(&wbrels);
	return rc;
}

/* ====== PPTX ====== */

#define NS_A "http://schemas.openxmlformats.org/drawingml/2006/main"
#define NS_P "http://schemas.openxmlformats.org/presentationml/2006/main"
#define P_NS "xmlns:a=\"" NS_A "\" xmlns:r=\"" NS_R "\" xmlns:p=\"" NS_P "\""
#define GRP "<p:nvGrpSpPr><p:cNvPr id=\"1\" name=\"\"/><p:cNvGrpSpPr/>" \
	"<p:nvPr/></p:nvGrpSpPr><p:grpSpPr><a:xfrm><a:off x=\"0\" y=\"0\"/>" \
	"<a:ext cx=\"0\" cy=\"0\"/><a:chOff x=\"0\" y=\"0\"/><a:chExt " \
	"cx=\"0\" cy=\"0\"/></a:xfrm></p:grpSpPr>"
#define SLIDE_CX 12192000	/* 16:9, EMU */
#define SLIDE_CY 6858000

/* One slide being made: its title and the paragraphs of its body. */
struct slide {
	struct dbuf	 title;
	struct dbuf	 body;
	int		 section;	/* a title of its own, centred */
};

struct deck {
	struct slide	*s;
	size_t		 n, cap;
	size_t		 max;		/* slides at most */
	int		 over;		/* max passed */
};

static struct slide *
deck_add(struct deck *d)
{
	struct slide *ns;

	if (d->n >= d->max) {
		d->over = 1;
		return NULL;
	}
	if (d->n == d->cap) {
		ns = realloc(d->s, (d->cap ? d->cap * 2 : 16) * sizeof(*ns));
		if (ns == NULL)
			return NULL;
		d->s = ns;
		d->cap = d->cap ? d->cap * 2 : 16;
	}
	memset(&d->s[d->n], 0, sizeof(d->s[d->n]));
	return &d->s[d->n++];
}

struct pfmt {
	int		 bold, italic, strike, code, link;
	int		 size;		/* hundredths of a point */
};

static void
pptx_run(struct dbuf *b, const struct pfmt *f, const char *s)
{
	if (*s == '\0')
		return;
	dbuf_addf(b, "<a:r><a:rPr lang=\"en-US\" sz=\"%d\"%s%s%s%s dirty=\"0\">",
	    f->size, f->bold ? " b=\"1\"" : "", f->italic ? " i=\"1\"" : "",
	    f->link ? " u=\"sng\"" : "", f->strike ? " strike=\"sngStrike\"" :
	    "");
	if (f->link)
		dbuf_addstr(b, "<a:solidFill><a:srgbClr val=\"0563C1\"/>"
		    "</a:solidFill>");
	if (f->code)
		dbuf_addstr(b, "<a:latin typeface=\"Courier New\"/>");
	dbuf_addstr(b, "</a:rPr><a:t>");
	esc(b, s);
	dbuf_addstr(b, "</a:t></a:r>");
}

static void
pptx_inlines(struct dbuf *b, cmark_node *parent, struct pfmt f, int depth)
{
	cmark_node	*n;
	struct pfmt	 g;
	struct dbuf	 t = { 0 };

	for (n = cmark_node_first_child(parent); n != NULL;
	    n = cmark_node_next(n)) {
		g = f;
		switch (cmark_node_get_type(n)) {
		case CMARK_NODE_TEXT:
			pptx_run(b, &f, cmark_node_get_literal(n));
			continue;
		case CMARK_NODE_CODE:
			g.code = 1;
			pptx_run(b, &g, cmark_node_get_literal(n));
			continue;
		case CMARK_NODE_SOFTBREAK:
			pptx_run(b, &f, " ");
			continue;
		case CMARK_NODE_LINEBREAK:
			dbuf_addstr(b, "<a:br/>");
			continue;
		case CMARK_NODE_HTML_INLINE:
			continue;
		case CMARK_NODE_IMAGE:
			md_plain_text(n, &t);
			g.italic = 1;
			pptx_run(b, &g, dbuf_str(&t));
			dbuf_free(&t);
			continue;
		case CMARK_NODE_STRONG:
			g.bold = 1;
			break;
		case CMARK_NODE_EMPH:
			g.italic = 1;
			break;
		case CMARK_NODE_LINK:
			g.link = 1;
			break;
		default:
			if (md_is_strike(n))
				g.strike = 1;
			break;
		}
		if (depth < MD_MAX_DEPTH)
			pptx_inlines(b, n, g, depth + 1);
		else {
			md_plain_text(n, &t);
			pptx_run(b, &g, dbuf_str(&t));
			dbuf_free(&t);
		}
	}
}

/* A paragraph's properties: a bullet (1), a number (2, from start) or
 * none (0), at level lvl. */
static void
pptx_ppr(struct dbuf *b, int bullet, int lvl, int start)
{
	if (bullet == 0) {
		dbuf_addstr(b, "<a:pPr marL=\"0\" indent=\"0\"><a:buNone/>"
		    "</a:pPr>");
		return;
	}
	dbuf_addf(b, "<a:pPr marL=\"%d\" lvl=\"%d\" indent=\"-342900\">",
	    342900 * (lvl + 1), lvl);
	if (bullet == 1)
		dbuf_addstr(b, "<a:buFont typeface=\"Arial\"/><a:buChar "
		    "char=\"\xe2\x80\xa2\"/>");
	else
		dbuf_addf(b, "<a:buAutoNum type=\"arabicPeriod\" "
		    "startAt=\"%d\"/>", start);
	dbuf_addstr(b, "</a:pPr>");
}

static void pptx_blocks(struct dbuf *b, cmark_node *parent, int italic,
    int lvl, int depth);

/* A list: a paragraph per item's paragraph, the first with the item's
 * bullet or number; a nested list one level in. */
static void
pptx_list(struct dbuf *b, cmark_node *n, int italic, int lvl, int depth)
{
	cmark_node	*item, *c;
	struct pfmt	 f = { 0, 0, 0, 0, 0, 2000 };
	struct dbuf	 t = { 0 };
	int		 bullet, start, first;

	f.italic = italic;
	if (lvl > 8)
		lvl = 8;
	bullet = cmark_node_get_list_type(n) == CMARK_ORDERED_LIST ? 2 : 1;
	start = cmark_node_get_list_start(n);
	for (item = cmark_node_first_child(n); item != NULL;
	    item = cmark_node_next(item), start++) {
		first = 1;
		for (c = cmark_node_first_child(item); c != NULL;
		    c = cmark_node_next(c)) {
			if (cmark_node_get_type(c) == CMARK_NODE_LIST) {
				if (depth < MD_MAX_DEPTH)
					pptx_list(b, c, italic, lvl + 1,
					    depth + 1);
				continue;
			}
			dbuf_addstr(b, "<a:p>");
			if (first)
				pptx_ppr(b, bullet, lvl, start);
			else
				dbuf_addf(b, "<a:pPr marL=\"%d\" indent=\"0\">"
				    "<a:buNone/></a:pPr>", 342900 * (lvl + 1));
			first = 0;
			if (cmark_node_get_type(c) == CMARK_NODE_PARAGRAPH)
				pptx_inlines(b, c, f, depth + 2);
			else {
				dbuf_reset(&t);
				md_plain_text(c, &t);
				pptx_run(b, &f, dbuf_str(&t));
			}
			dbuf_addstr(b, "</a:p>");
		}
	}
	dbuf_free(&t);
}

static void
pptx_blocks(struct dbuf *b, cmark_node *parent, int italic, int lvl,
    int depth)
{
	cmark_node	*n, *row, *cell;
	struct pfmt	 f = { 0, 0, 0, 0, 0, 2000 };
	struct dbuf	 t = { 0 };
	const char	*code, *p, *nl;

	f.italic = italic;
	for (n = cmark_node_first_child(parent); n != NULL;
	    n = cmark_node_next(n)) {
		if (depth >= MD_MAX_DEPTH) {
			dbuf_reset(&t);
			md_plain_text(n, &t);
			dbuf_addstr(b, "<a:p>");
			pptx_ppr(b, 0, 0, 0);
			pptx_run(b, &f, dbuf_str(&t));
			dbuf_addstr(b, "</a:p>");
			continue;
		}
		switch (cmark_node_get_type(n)) {
		case CMARK_NODE_PARAGRAPH:
		case CMARK_NODE_HEADING:
			dbuf_addstr(b, "<a:p>");
			pptx_ppr(b, 0, 0, 0);
			f.bold = cmark_node_get_type(n) == CMARK_NODE_HEADING;
			pptx_inlines(b, n, f, depth + 1);
			f.bold = 0;
			dbuf_addstr(b, "</a:p>");
			break;
		case CMARK_NODE_CODE_BLOCK:
			code = cmark_node_get_literal(n);
			for (p = code; p != NULL && *p != '\0';
			    p = nl ? nl + 1 : NULL) {
				struct pfmt cf = { 0, 0, 0, 1, 0, 1400 };

				nl = strchr(p, '\n');
				dbuf_reset(&t);
				dbuf_add(&t, p, nl ? (size_t)(nl - p) :
				    strlen(p));
				dbuf_addstr(b, "<a:p>");
				pptx_ppr(b, 0, 0, 0);
				pptx_run(b, &cf, dbuf_str(&t));
				dbuf_addstr(b, "</a:p>");
			}
			break;
		case CMARK_NODE_BLOCK_QUOTE:
			pptx_blocks(b, n, 1, lvl, depth + 1);
			break;
		case CMARK_NODE_LIST:
			pptx_list(b, n, italic, lvl, depth);
			break;
		case CMARK_NODE_THEMATIC_BREAK:
		case CMARK_NODE_HTML_BLOCK:
			break;
		default:
			if (!md_is_table(n)) {
				pptx_blocks(b, n, italic, lvl, depth + 1);
				break;
			}
			/* a table: a line per row, cells between bars */
			for (row = cmark_node_first_child(n); row != NULL;
			    row = cmark_node_next(row)) {
				struct pfmt tf = f;

				tf.size = 1600;
				tf.bold = cmark_gfm_extensions_get_table_row_is_header(
				    row);
				dbuf_addstr(b, "<a:p>");
				pptx_ppr(b, 0, 0, 0);
				for (cell = cmark_node_first_child(row);
				    cell != NULL; cell = cmark_node_next(cell)) {
					if (cell != cmark_node_first_child(row))
						pptx_run(b, &tf, " | ");
					pptx_inlines(b, cell, tf, depth + 2);
				}
				dbuf_addstr(b, "</a:p>");
			}
			break;
		}
	}
	dbuf_free(&t);
}

/* The slide level as pandoc finds it: the highest heading level that is
 * followed by content rather than another heading; 0 without headings. */
static int
slide_level(cmark_node *doc)
{
	cmark_node	*n, *next;
	int		 level = 0, any = 0, l;

	for (n = cmark_node_first_child(doc); n != NULL;
	    n = cmark_node_next(n)) {
		if (cmark_node_get_type(n) != CMARK_NODE_HEADING)
			continue;
		l = cmark_node_get_heading_level(n);
		if (any == 0 || l < any)
			any = l;
		next = cmark_node_next(n);
		if (next != NULL && cmark_node_get_type(next) !=
		    CMARK_NODE_HEADING && (level == 0 || l < level))
			level = l;
	}
	return level ? level : any;
}

static const char pptx_theme[] = XML_DECL
    "<a:theme xmlns:a=\"" NS_A "\" name=\"Office Theme\"><a:themeElements>"
    "<a:clrScheme name=\"Office\">"
    "<a:dk1><a:sysClr val=\"windowText\" lastClr=\"000000\"/></a:dk1>"
    "<a:lt1><a:sysClr val=\"window\" lastClr=\"FFFFFF\"/></a:lt1>"
    "<a:dk2><a:srgbClr val=\"44546A\"/></a:dk2>"
    "<a:lt2><a:srgbClr val=\"E7E6E6\"/></a:lt2>"
    "<a:accent1><a:srgbClr val=\"4472C4\"/></a:accent1>"
    "<a:accent2><a:srgbClr val=\"ED7D31\"/></a:accent2>"
    "<a:accent3><a:srgbClr val=\"A5A5A5\"/></a:accent3>"
    "<a:accent4><a:srgbClr val=\"FFC000\"/></a:accent4>"
    "<a:accent5><a:srgbClr val=\"5B9BD5\"/></a:accent5>"
    "<a:accent6><a:srgbClr val=\"70AD47\"/></a:accent6>"
    "<a:hlink><a:srgbClr val=\"0563C1\"/></a:hlink>"
    "<a:folHlink><a:srgbClr val=\"954F72\"/></a:folHlink></a:clrScheme>"
    "<a:fontScheme name=\"Office\"><a:majorFont><a:latin "
    "typeface=\"Calibri Light\"/><a:ea typeface=\"\"/><a:cs typeface=\"\"/>"
    "</a:majorFont><a:minorFont><a:latin typeface=\"Calibri\"/><a:ea "
    "typeface=\"\"/><a:cs typeface=\"\"/></a:minorFont></a:fontScheme>"
    "<a:fmtScheme name=\"Office\"><a:fillStyleLst>"
    "<a:solidFill><a:schemeClr val=\"phClr\"/></a:solidFill>"
    "<a:solidFill><a:schemeClr val=\"phClr\"/></a:solidFill>"
    "<a:solidFill><a:schemeClr val=\"phClr\"/></a:solidFill>"
    "</a:fillStyleLst><a:lnStyleLst>"
    "<a:ln w=\"6350\"><a:solidFill><a:schemeClr val=\"phClr\"/>"
    "</a:solidFill></a:ln>"
    "<a:ln w=\"12700\"><a:solidFill><a:schemeClr val=\"phClr\"/>"
    "</a:solidFill></a:ln>"
    "<a:ln w=\"19050\"><a:solidFill><a:schemeClr val=\"phClr\"/>"
    "</a:solidFill></a:ln>"
    "</a:lnStyleLst><a:effectStyleLst>"
    "<a:effectStyle><a:effectLst/></a:effectStyle>"
    "<a:effectStyle><a:effectLst/></a:effectStyle>"
    "<a:effectStyle><a:effectLst/></a:effectStyle>"
    "</a:effectStyleLst><a:bgFillStyleLst>"
    "<a:solidFill><a:schemeClr val=\"phClr\"/></a:solidFill>"
    "<a:solidFill><a:schemeClr val=\"phClr\"/></a:solidFill>"
    "<a:solidFill><a:schemeClr val=\"phClr\"/></a:solidFill>"
    "</a:bgFillStyleLst></a:fmtScheme></a:themeElements>"
    "<a:objectDefaults/><a:extraClrSchemeLst/></a:theme>";

static const char pptx_master[] = XML_DECL
    "<p:sldMaster " P_NS "><p:cSld><p:bg><p:bgRef idx=\"1001\"><a:schemeClr "
    "val=\"bg1\"/></p:bgRef></p:bg><p:spTree>" GRP "</p:spTree></p:cSld>"
    "<p:clrMap bg1=\"lt1\" tx1=\"dk1\" bg2=\"lt2\" tx2=\"dk2\" "
    "accent1=\"accent1\" accent2=\"accent2\" accent3=\"accent3\" "
    "accent4=\"accent4\" accent5=\"accent5\" accent6=\"accent6\" "
    "hlink=\"hlink\" folHlink=\"folHlink\"/><p:sldLayoutIdLst>"
    "<p:sldLayoutId id=\"2147483649\" r:id=\"rId1\"/></p:sldLayoutIdLst>"
    "<p:txStyles><p:titleStyle/><p:bodyStyle/><p:otherStyle/></p:txStyles>"
    "</p:sldMaster>";

static const char pptx_master_rels[] = XML_DECL
    "<Relationships xmlns=\"" NS_PKG_REL "\"><Relationship Id=\"rId1\" "
    "Type=\"" REL_T "slideLayout\" Target=\"../slideLayouts/"
    "slideLayout1.xml\"/><Relationship Id=\"rId2\" Type=\"" REL_T "theme\" "
    "Target=\"../theme/theme1.xml\"/></Relationships>";

static const char pptx_layout[] = XML_DECL
    "<p:sldLayout " P_NS " type=\"blank\" preserve=\"1\"><p:cSld "
    "name=\"Blank\"><p:spTree>" GRP "</p:spTree></p:cSld><p:clrMapOvr>"
    "<a:masterClrMapping/></p:clrMapOvr></p:sldLayout>";

static const char pptx_layout_rels[] = XML_DECL
    "<Relationships xmlns=\"" NS_PKG_REL "\"><Relationship Id=\"rId1\" "
    "Type=\"" REL_T "slideMaster\" Target=\"../slideMasters/"
    "slideMaster1.xml\"/></Relationships>";

static const char pptx_slide_rels[] = XML_DECL
    "<Relationships xmlns=\"" NS_PKG_REL "\"><Relationship Id=\"rId1\" "
    "Type=\"" REL_T "slideLayout\" Target=\"../slideLayouts/"
    "slideLayout1.xml\"/></Relationships>";

static const char pptx_root_rels[] = XML_DECL
    "<Relationships xmlns=\"" NS_PKG_REL "\"><Relationship Id=\"rId1\" "
    "Type=\"" REL_T "officeDocument\" Target=\"ppt/presentation.xml\"/>"
    "</Relationships>";

static const char pptx_pres_props[] = XML_DECL
    "<p:presentationPr " P_NS "/>";

static const char pptx_table_styles[] = XML_DECL
    "<a:tblStyleLst xmlns:a=\"" NS_A "\" def=\"{5C22544A-7EE6-4342-B048-"
    "85BDC9FD1C3A}\"/>";

/* A text box shape: id, name, where, and its paragraphs. */
static void
pptx_box(struct dbuf *b, int id, const char *name, long x, long y, long cx,
    long cy, const char *anchor, const char *paras)
{
	dbuf_addf(b, "<p:sp><p:nvSpPr><p:cNvPr id=\"%d\" name=\"%s\"/>"
	    "<p:cNvSpPr txBox=\"1\"/><p:nvPr/></p:nvSpPr><p:spPr><a:xfrm>"
	    "<a:off x=\"%ld\" y=\"%ld\"/><a:ext cx=\"%ld\" cy=\"%ld\"/>"
	    "</a:xfrm><a:prstGeom prst=\"rect\"><a:avLst/></a:prstGeom>"
	    "</p:spPr><p:txBody><a:bodyPr wrap=\"square\" anchor=\"%s\">"
	    "<a:normAutofit/></a:bodyPr><a:lstStyle/>", id, name, x, y, cx, cy,
	    anchor);
	dbuf_addstr(b, paras);
	dbuf_addstr(b, "</p:txBody></p:sp>");
}

static void
pptx_slide_xml(struct dbuf *b, const struct slide *s)
{
	struct dbuf t = { 0 };

	dbuf_addstr(b, XML_DECL "<p:sld " P_NS "><p:cSld><p:spTree>" GRP);
	if (s->title.len > 0) {
		dbuf_addf(&t, "<a:p><a:pPr algn=\"%s\"/><a:r><a:rPr lang=\"en-US\" "
		    "sz=\"%d\" b=\"1\" dirty=\"0\"/><a:t>", s->section ? "ctr" :
		    "l", s->section ? 4400 : 3200);
		dbuf_add(&t, s->title.p, s->title.len);
		dbuf_addstr(&t, "</a:t></a:r></a:p>");
		if (s->section)
			pptx_box(b, 2, "Title", 609600, 2286000, SLIDE_CX -
			    1219200, 1600200, "ctr", dbuf_str(&t));
		else
			pptx_box(b, 2, "Title", 609600, 304800, SLIDE_CX -
			    1219200, 1143000, "b", dbuf_str(&t));
	}
	if (s->body.len > 0)
		pptx_box(b, 3, "Content", 609600, s->title.len > 0 ? 1600200 :
		    457200, SLIDE_CX - 1219200, s->title.len > 0 ? 4800600 :
		    5943600, "t", dbuf_str(&s->body));
	dbuf_addstr(b, "</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/>"
	    "</p:clrMapOvr></p:sld>");
	dbuf_free(&t);
}

int
md_pptx(cmark_node *doc, int max_slides, struct dbuf *out, char *err)
{
	struct deck	 d = { 0 };
	struct slide	*cur = NULL;
	struct dbuf	 ct = { 0 }, pres = { 0 }, prels = { 0 }, one = { 0 };
	struct dbuf	*xml = NULL;
	struct md_part	*parts = NULL;
	char		**names = NULL, pname[64];
	cmark_node	*n, *next;
	size_t		 i, np = 0;
	int		 level = slide_level(doc), l, rc = ENGINE_ENOMEM, bad = 0;

	d.max = max_slides > 0 ? (size_t)max_slides : 1;
	for (n = cmark_node_first_child(doc); n != NULL; n = next) {
		next = cmark_node_next(n);
		l = cmark_node_get_type(n) == CMARK_NODE_HEADING ?
		    cmark_node_get_heading_level(n) : 0;
		if (l > 0 && l <= level) {
			if ((cur = deck_add(&d)) == NULL)
				break;
			dbuf_reset(&one);
			md_plain_text(n, &one);
			md_xml_escape(&cur->title, dbuf_str(&one), one.len);
			cur->section = l < level;
			if (cur->section)
				cur = NULL;	/* content starts a new slide */
			continue;
		}
		if (cur == NULL && (cur = deck_add(&d)) == NULL)
			break;
		/* one block at a time, through a scratch parent-less walk */
		{
			cmark_node *holder = cmark_node_new(CMARK_NODE_DOCUMENT);

			if (holder == NULL)
				break;
			cmark_node_unlink(n);
			cmark_node_append_child(holder, n);
			pptx_blocks(&cur->body, holder, 0, 0, 1);
			/* put it back where it was */
			cmark_node_unlink(n);
			if (next != NULL)
				cmark_node_insert_before(next, n);
			else
				cmark_node_append_child(doc, n);
			cmark_node_free(holder);
		}
	}
	if (d.over) {
		rc = ENGINE_ELIMIT;
		snprintf(err, ENGINE_ERRMAX, "the presentation would have more "
		    "than export.max_pages (%d) slides", max_slides);
		goto out;
	}
	if (d.n == 0 && deck_add(&d) == NULL)
		goto out;
	if ((xml = calloc(d.n, sizeof(*xml))) == NULL ||
	    (names = calloc(d.n, sizeof(*names))) == NULL ||
	    (parts = calloc(d.n * 2 + 11, sizeof(*parts))) == NULL)
		goto out;
	dbuf_addstr(&ct, XML_DECL "<Types xmlns=\"" NS_CT "\"><Default "
	    "Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-"
	    "package.relationships+xml\"/><Default Extension=\"xml\" "
	    "ContentType=\"application/xml\"/>"
	    "<Override PartName=\"/ppt/presentation.xml\" ContentType=\""
	    CT_OFF "presentationml.presentation.main+xml\"/>"
	    "<Override PartName=\"/ppt/slideMasters/slideMaster1.xml\" "
	    "ContentType=\"" CT_OFF "presentationml.slideMaster+xml\"/>"
	    "<Override PartName=\"/ppt/slideLayouts/slideLayout1.xml\" "
	    "ContentType=\"" CT_OFF "presentationml.slideLayout+xml\"/>"
	    "<Override PartName=\"/ppt/theme/theme1.xml\" ContentType=\""
	    CT_OFF "theme+xml\"/>"
	    "<Override PartName=\"/ppt/presProps.xml\" ContentType=\""
	    CT_OFF "presentationml.presProps+xml\"/>"
	    "<Override PartName=\"/ppt/tableStyles.xml\" ContentType=\""
	    CT_OFF "presentationml.tableStyles+xml\"/>");
	dbuf_addstr(&pres, XML_DECL "<p:presentation " P_NS
	    " saveSubsetFonts=\"1\"><p:sldMasterIdLst><p:sldMasterId "
	    "id=\"2147483648\" r:id=\"rId1\"/></p:sldMasterIdLst><p:sldIdLst>");
	dbuf_addstr(&prels, XML_DECL "<Relationships xmlns=\"" NS_PKG_REL "\">"
	    "<Relationship Id=\"rId1\" Type=\"" REL_T "slideMaster\" "
	    "Target=\"slideMasters/slideMaster1.xml\"/><Relationship "
	    "Id=\"rId2\" Type=\"" REL_T "theme\" Target=\"theme/theme1.xml\"/>"
	    "<Relationship Id=\"rId3\" Type=\"" REL_T "presProps\" "
	    "Target=\"presProps.xml\"/><Relationship Id=\"rId4\" Type=\""
	    REL_T "tableStyles\" Target=\"tableStyles.xml\"/>");
	for (i = 0; i < d.n; i++) {
		dbuf_addf(&ct, "<Override PartName=\"/ppt/slides/slide%zu.xml\" "
		    "ContentType=\"" CT_OFF "presentationml.slide+xml\"/>",
		    i + 1);
		dbuf_addf(&pres, "<p:sldId id=\"%zu\" r:id=\"rId%zu\"/>", 256 + i,
		    i + 5);
		dbuf_addf(&prels, "<Relationship Id=\"rId%zu\" Type=\"" REL_T
		    "slide\" Target=\"slides/slide%zu.xml\"/>", i + 5, i + 1);
		dbuf_init(&xml[i], out->max);
		pptx_slide_xml(&xml[i], &d.s[i]);
		bad |= xml[i].err;
	}
	dbuf_addstr(&ct, "</Types>");
	dbuf_addf(&pres, "</p:sldIdLst><p:sldSz cx=\"%d\" cy=\"%d\"/>"
	    "<p:notesSz cx=\"6858000\" cy=\"9144000\"/></p:presentation>",
	    SLIDE_CX, SLIDE_CY);
	dbuf_addstr(&prels, "</Relationships>");
	if (bad || ct.err || pres.err || prels.err) {
		if (bad == DBUF_ETOOBIG) {
			out->err = DBUF_ETOOBIG;
			rc = ENGINE_ELIMIT;
		}
		goto out;
	}
	parts[np++] = (struct md_part){ "[Content_Types].xml", ct.p, ct.len };
	parts[np++] = (struct md_part){ "_rels/.rels", pptx_root_rels,
	    sizeof(pptx_root_rels) - 1 };
	parts[np++] = (struct md_part){ "ppt/presentation.xml", pres.p,
	    pres.len };
	parts[np++] = (struct md_part){ "ppt/_rels/presentation.xml.rels",
	    prels.p, prels.len };
	parts[np++] = (struct md_part){ "ppt/presProps.xml", pptx_pres_props,
	    sizeof(pptx_pres_props) - 1 };
	parts[np++] = (struct md_part){ "ppt/tableStyles.xml",
	    pptx_table_styles, sizeof(pptx_table_styles) - 1 };
	parts[np++] = (struct md_part){ "ppt/theme/theme1.xml", pptx_theme,
	    sizeof(pptx_theme) - 1 };
	parts[np++] = (struct md_part){ "ppt/slideMasters/slideMaster1.xml",
	    pptx_master, sizeof(pptx_master) - 1 };
	parts[np++] = (struct md_part){
	    "ppt/slideMasters/_rels/slideMaster1.xml.rels", pptx_master_rels,
	    sizeof(pptx_master_rels) - 1 };
	parts[np++] = (struct md_part){ "ppt/slideLayouts/slideLayout1.xml",
	    pptx_layout, sizeof(pptx_layout) - 1 };
	parts[np++] = (struct md_part){
	    "ppt/slideLayouts/_rels/slideLayout1.xml.rels", pptx_layout_rels,
	    sizeof(pptx_layout_rels) - 1 };
	for (i = 0; i < d.n; i++) {
		snprintf(pname, sizeof(pname), "ppt/slides/slide%zu.xml", i + 1);
		if ((names[i] = strdup(pname)) == NULL)
			goto out;
		parts[np++] = (struct md_part){ names[i], xml[i].p, xml[i].len };
	}
	for (i = 0; i < d.n; i++)
		parts[np++] = (struct md_part){ "", pptx_slide_rels,
		    sizeof(pptx_slide_rels) - 1 };
	/* slide rels are named after their slide */
	{
		char	**rn = calloc(d.n, sizeof(*rn));

		if (rn == NULL)
			goto out;
		for (i = 0; i < d.n; i++) {
			snprintf(pname, sizeof(pname),
			    "ppt/slides/_rels/slide%zu.xml.rels", i + 1);
			if ((rn[i] = strdup(pname)) == NULL)
				break;
			parts[np - d.n + i].name = rn[i];
		}
		rc = i == d.n ? md_zip(parts, np, out, err) : ENGINE_ENOMEM;
		for (i = 0; i < d.n; i++)
			free(rn[i]);
		free(rn);
	}
out:
	for (i = 0; i < d.n; i++) {
		dbuf_free(&d.s[i].title);
		dbuf_free(&d.s[i].body);
		if (xml != NULL)
			dbuf_free(&xml[i]);
		if (names != NULL)
			free(names[i]);
	}
	free(d.s);
	free(xml);
	free(names);
	free(parts);
	dbuf_free(&ct);
	dbuf_free(&pres);
	dbuf_free(&prels);
	dbuf_free(&one);
	return rc;
}
