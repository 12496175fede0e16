/*
 * md_exporter.c — the Markdown Exporter plugin
 * (bowenliang123/md_exporter/md_exporter) as a native provider: Markdown
 * text in, a file out, with the plugin's tool names, parameters, file
 * names and MIME types.
 *
 *   md_to_html       HTML fragment (text/html)
 *   md_to_html_text  the same HTML as a text message
 *   md_to_md         the Markdown itself (text/markdown)
 *   md_to_xml        the HTML as an XML document (text/xml)
 *   md_to_latex      a LaTeX fragment (application/x-tex)
 *   md_to_csv        each table a CSV file (text/csv)
 *   md_to_json       each table a JSON Lines or JSON array file
 *   md_to_xlsx       every table a sheet of one workbook
 *   md_to_docx       a Word document (md_office.c)
 *   md_to_pptx       a presentation, a slide per heading (md_office.c)
 *   md_to_pdf        an A4 PDF laid out with Pango (md_pdf.c)
 *   md_to_png        the same pages as PNG images (a file each, or a zip)
 *   md_to_codeblock  each ``` code block a file (or a zip of them)
 *   md_to_ipynb      a Jupyter notebook, code blocks as code cells
 *
 * md_text is read as the plugin reads it: stripped, <think>...</think>
 * removed, a ```markdown wrapper taken off, a literal backslash-n made a
 * line break. An empty one fails the tool ("Empty input md_text"), as the
 * plugin's ValueError does (one that only <think> makes empty does not:
 * it gives an empty document, as there); a conversion that cannot be made (no table
 * for md_to_csv) answers the plugin's text message. output_filename gets
 * the format's extension when it lacks it (the plugin's get_meta_data);
 * without it the file is named "file.<ext>" (Dify names it after the
 * tool file it stores).
 *
 * The Markdown reader is cmark-gfm (CommonMark with GFM tables and
 * strikethrough), in md_markdown.c. Raw HTML in the Markdown is never passed through: the
 * HTML writer omits it (cmark's safe mode) and the others drop it. No
 * tool here makes a network request.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmark-gfm-extension_api.h>

#include "engine/tools/md.h"
#include "engine/tools/tools.h"

#define MIME_DOCX "application/vnd.openxmlformats-officedocument." \
	"wordprocessingml.document"
#define MIME_XLSX "application/vnd.openxmlformats-officedocument." \
	"spreadsheetml.sheet"
#define MIME_PPTX "application/vnd.openxmlformats-officedocument." \
	"presentationml.presentation"

static const struct tool_param p_md[] = {
	{ "md_text", "string", 1, "Markdown text" },
	{ "output_filename", "string", 0, "Optional custom output file name, "
	    "the filename suffix is not required" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_param p_md_text[] = {
	{ "md_text", "string", 1, "Markdown text" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_param p_json[] = {
	{ "md_text", "string", 1, "Markdown text with tables" },
	{ "output_style", "string", 0, "jsonl (default): one JSON object "
	    "per line; json_array: one array" },
	{ "output_filename", "string", 0, "Optional custom output file name, "
	    "the filename suffix is not required" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_param p_compress[] = {
	{ "md_text", "string", 1, "Markdown text" },
	{ "output_filename", "string", 0, "Optional custom output file name, "
	    "the filename suffix is not required" },
	{ "is_compress", "string", 0, "Whether to generate into ZIP file, "
	    "default to \"false\"" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_param p_xlsx[] = {
	{ "md_text", "string", 1, "Markdown text with tables" },
	{ "force_text_value", "string", 0, "Whether to convert cell values "
	    "into string type, default to \"true\"" },
	{ "output_filename", "string", 0, "Optional custom output file name, "
	    "the filename suffix is not required" },
	{ NULL, NULL, 0, NULL },
};

enum md_kind {
	K_HTML, K_HTML_TEXT, K_MD, K_XML, K_LATEX, K_CSV, K_JSON, K_XLSX,
	K_DOCX, K_PPTX, K_PDF, K_CODEBLOCK, K_PNG, K_IPYNB,
};

static const struct tool_def defs[] = {
	{ "md_to_docx", "Generate DOCX file from Markdown text", p_md },
	{ "md_to_pdf", "Generate PDF file from Markdown text", p_md },
	{ "md_to_html", "Generate HTML file from Markdown text", p_md },
	{ "md_to_html_text", "Convert Markdown text to HTML text",
	    p_md_text },
	{ "md_to_pptx", "Generate PPTX file from Markdown text, a slide for "
	    "each heading", p_md },
	{ "md_to_xlsx", "Generate XLSX file from tables in Markdown text",
	    p_xlsx },
	{ "md_to_csv", "Generate CSV file from a table in Markdown text",
	    p_md },
	{ "md_to_json", "Generate JSON file from tables in Markdown text",
	    p_json },
	{ "md_to_md", "Generate .md file from Markdown text", p_md },
	{ "md_to_xml", "Generate XML file from Markdown text", p_md },
	{ "md_to_latex", "Generate LaTeX file from Markdown text", p_md },
	{ "md_to_codeblock", "Extract the code blocks of Markdown text into "
	    "files", p_compress },
	{ "md_to_png", "Generate PNG images of the pages of Markdown text",
	    p_compress },
	{ "md_to_ipynb", "Generate a Jupyter notebook from Markdown text, "
	    "code blocks as code cells", p_md },
	{ NULL, NULL, NULL },
};

/* defs[i] -> what it makes: kind, MIME type, extension, the plugin's
 * name of the format in its failure message. */
static const struct {
	const char	*tool;
	enum md_kind	 kind;
	const char	*mime;
	const char	*ext;
	const char	*label;
} kinds[] = {
	{ "md_to_docx", K_DOCX, MIME_DOCX, ".docx", "DOCX file" },
	{ "md_to_pdf", K_PDF, "application/pdf", ".pdf", "PDF file" },
	{ "md_to_html", K_HTML, "text/html", ".html", "HTML file" },
	{ "md_to_html_text", K_HTML_TEXT, NULL, NULL, "HTML text" },
	{ "md_to_pptx", K_PPTX, MIME_PPTX, ".pptx", "PPTX file" },
	{ "md_to_xlsx", K_XLSX, MIME_XLSX, ".xlsx", "XLSX file" },
	{ "md_to_csv", K_CSV, "text/csv", ".csv", "CSV file" },
	{ "md_to_json", K_JSON, "application/json", ".json", "JSON file" },
	{ "md_to_md", K_MD, "text/markdown", ".md", "MD file" },
	{ "md_to_xml", K_XML, "text/xml", ".xml", "XML file" },
	{ "md_to_latex", K_LATEX, "application/x-tex", ".tex",
	    "LaTeX file" },
	{ "md_to_codeblock", K_CODEBLOCK, "application/zip", ".zip",
	    "code blocks" },
	{ "md_to_png", K_PNG, "image/png", ".png", "PNG files" },
	{ "md_to_ipynb", K_IPYNB, "application/x-ipynb+json", ".ipynb",
	    "IPYNB file" },
};

/* md_to_codeblock: a code block's language -> its file's suffix and
 * MIME type (the plugin's SUFFIX_MAP and MIME_TYPE_MAP); others .txt,
 * text/plain. */
static const struct {
	const char	*lang, *suffix, *mime;
} langs[] = {
	{ "css", ".css", "text/css" }, { "csv", ".csv", "text/csv" },
	{ "python", ".py", "text/x-python" },
	{ "json", ".json", "application/json" },
	{ "javascript", ".js", "text/javascript" },
	{ "js", ".js", "text/javascript" },
	{ "bash", ".sh", "application/x-sh" },
	{ "sh", ".sh", "application/x-sh" },
	{ "svg", ".svg", "image/svg+xml" }, { "xml", ".xml", "text/xml" },
	{ "html", ".html", "text/html" }, { "ruby", ".rb", "text/x-ruby" },
	{ "markdown", ".md", "text/markdown" },
	{ "yaml", ".yaml", "text/yaml" },
	{ "php", ".php", "application/x-httpd-php" },
	{ "java", ".java", "text/x-java-source" },
};

/* ====== md_text as the plugin reads it ====== */

/*
 * md_text processed (get_md_text_from_tool_params with the wrapper
 * stripped): *out malloc'd. Returns 0, ENGINE_EINVAL ("Empty input
 * md_text"), ENGINE_ELIMIT (export.max_input) or ENGINE_ENOMEM.
 */
static int
md_text_of(struct engine *e, const json_t *params, int table_fix,
    char *err, char **out, size_t *outlen)
{
	struct dbuf	 b = { 0 };
	char		*buf = NULL;
	const char	*s, *end, *think, *close;
	size_t		 n;
	int		 rc = 0;

	*out = NULL;
	s = tool_param_str(params, "md_text", &buf);
	if (s == NULL)
		s = "";
	n = strlen(s);
	if ((int64_t)n > e->conf->export_max_input) {
		rc = ENGINE_ELIMIT;
		snprintf(err, ENGINE_ERRMAX, "md_text has %zu bytes, more than "
		    "export.max_input (%lld)", n,
		    (long long)e->conf->export_max_input);
		goto out;
	}
	/* strip, then drop <think>...</think> */
	end = s + n;
	while (s < end && strchr(" \t\r\n\f\v", *s) != NULL)
		s++;
	while (end > s && strchr(" \t\r\n\f\v", end[-1]) != NULL)
		end--;
	if (s == end) {	/* the plugin's only emptiness check */
		rc = engine_invalid(err, "Empty input md_text");
		goto out;
	}
	while (s < end) {
		think = memmem(s, (size_t)(end - s), "<think>", 7);
		close = think ? memmem(think + 7, (size_t)(end - think - 7),
		    "</think>", 8) : NULL;
		if (think == NULL || close == NULL) {
			dbuf_add(&b, s, (size_t)(end - s));
			break;
		}
		dbuf_add(&b, s, (size_t)(think - s));
		s = close + 8;
	}
	if (b.err) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	s = dbuf_str(&b);
	n = b.len;
	/* the ```markdown wrapper (strip_markdown_wrapper, after a strip) */
	while (n > 0 && strchr(" \t\r\n\f\v", *s) != NULL) {
		s++;
		n--;
	}
	while (n > 0 && strchr(" \t\r\n\f\v", s[n - 1]) != NULL)
		n--;
	if (n >= 3 && memcmp(s + n - 3, "```", 3) == 0) {
		if (n >= 14 && memcmp(s, "```markdown", 11) == 0) {
			s += 11;
			n -= 14;
		} else if (n >= 6 && memcmp(s, "```", 3) == 0) {
			s += 3;
			n -= 6;
		}
	}
	{
		struct dbuf	 o = { 0 };
		size_t		 i;
		int		 literal = memmem(s, n, "\\n", 2) != NULL;

		/* a table after text on one line: the plugin puts a line
		 * break before the first '|' */
		if (table_fix && *s != '|' && memchr(s, '|', n) != NULL) {
			const char *bar = memchr(s, '|', n);

			dbuf_add(&o, s, (size_t)(bar - s));
			dbuf_addc(&o, '\n');
			n -= (size_t)(bar - s);
			s = bar;
		}
		for (i = 0; i < n; i++) {
			if (literal && s[i] == '\\' && i + 1 < n &&
			    s[i + 1] == 'n') {
				dbuf_addc(&o, '\n');
				i++;
			} else
				dbuf_addc(&o, s[i]);
		}
		if (o.err) {
			dbuf_free(&o);
			rc = ENGINE_ENOMEM;
			goto out;
		}
		*out = dbuf_take(&o, outlen);
		if (*out == NULL)
			rc = ENGINE_ENOMEM;
	}
out:
	free(buf);
	dbuf_free(&b);
	return rc;
}

/* ====== Files ====== */

/*
 * The file's name as get_meta_data makes it: output_filename stripped,
 * with ext added unless it ends with it (case-insensitive); suffix
 * ("_2") goes before the extension. NULL (file_from_bytes names it) when
 * there is no name. *out malloc'd or NULL; returns 0 or ENGINE_ENOMEM.
 */
static int
file_name(const json_t *params, const char *ext, const char *suffix,
    const char *base, char **out)
{
	struct dbuf	 b = { 0 };
	char		*buf = NULL;
	const char	*s;
	size_t		 n, el = strlen(ext);

	*out = NULL;
	s = tool_param_str(params, "output_filename", &buf);
	if (s == NULL || *s == '\0')
		s = base;
	if (s == NULL) {
		free(buf);
		return 0;
	}
	while (*s != '\0' && strchr(" \t\r\n", *s) != NULL)
		s++;
	n = strlen(s);
	while (n > 0 && strchr(" \t\r\n", s[n - 1]) != NULL)
		n--;
	if (n == 0) {
		free(buf);
		return 0;
	}
	dbuf_add(&b, s, n);
	if (suffix != NULL)
		dbuf_addstr(&b, suffix);
	if (!(b.len >= el && strcasecmp(b.p + b.len - el, ext) == 0))
		dbuf_addstr(&b, ext);
	free(buf);
	if (b.err || (*out = dbuf_take(&b, NULL)) == NULL) {
		dbuf_free(&b);
		return ENGINE_ENOMEM;
	}
	return 0;
}

static int
give_file_as(struct tool_result *out, const json_t *params, const char *ext,
    const char *mime, const char *suffix, const char *base, const void *data,
    size_t len)
{
	char	*name = NULL, dflt[32];
	json_t	*f;
	int	 rc;

	snprintf(dflt, sizeof(dflt), "file%s", ext);

	if ((rc = file_name(params, ext, suffix, base, &name)) != 0)
		return rc;
	f = file_from_bytes(name ? name : dflt, mime, data, len);
	free(name);
	return tool_result_file(out, f);
}

static int
give_file(struct tool_result *out, const json_t *params, const char *ext,
    const char *mime, const char *suffix, const void *data, size_t len)
{
	return give_file_as(out, params, ext, mime, suffix, NULL, data, len);
}

static int
too_big(struct engine *e, char *err)
{
	snprintf(err, ENGINE_ERRMAX, "the file would pass export.max_output "
	    "(%lld bytes)", (long long)e->conf->export_max_output);
	return ENGINE_ELIMIT;
}

/* ====== Writers of text formats ====== */

static cmark_llist *
render_exts(void)
{
	static pthread_mutex_t	 mu = PTHREAD_MUTEX_INITIALIZER;
	static cmark_llist	*list;
	static int		 built;
	cmark_syntax_extension	*ext;

	pthread_mutex_lock(&mu);
	if (!built) {
		md_extensions_register();
		if ((ext = cmark_find_syntax_extension("table")) != NULL)
			list = cmark_llist_append(
			    cmark_get_default_mem_allocator(), list, ext);
		if ((ext = cmark_find_syntax_extension("strikethrough")) !=
		    NULL)
			list = cmark_llist_append(
			    cmark_get_default_mem_allocator(), list, ext);
		built = 1;
	}
	pthread_mutex_unlock(&mu);
	return list;
}

/* Adds cmark's malloc'd rendering s to b (xml: without the characters
 * XML forbids) and frees it. */
static void
add_rendered(struct dbuf *b, char *s, int xml)
{
	if (s == NULL) {
		b->err = DBUF_ENOMEM;
		return;
	}
	if (xml)
		md_xml_clean(b, s, strlen(s));
	else
		dbuf_addstr(b, s);
	cmark_get_default_mem_allocator()->free(s);
}

static void
csv_field(struct dbuf *b, const char *s)
{
	const char *p;

	if (strpbrk(s, ",\"\r\n") == NULL) {
		dbuf_addstr(b, s);
		return;
	}
	dbuf_addc(b, '"');
	for (p = s; *p != '\0'; p++) {
		if (*p == '"')
			dbuf_addc(b, '"');
		dbuf_addc(b, *p);
	}
	dbuf_addc(b, '"');
}

/* A table as pandas' to_csv(index=False) writes it. */
static void
table_csv(struct dbuf *b, const json_t *t)
{
	const json_t	*row, *v;
	size_t		 i, j;

	json_array_foreach(json_object_get(t, "header"), j, v) {
		if (j > 0)
			dbuf_addc(b, ',');
		csv_field(b, json_string_value(v));
	}
	dbuf_addc(b, '\n');
	json_array_foreach(json_object_get(t, "rows"), i, row) {
		json_array_foreach(row, j, v) {
			if (j > 0)
				dbuf_addc(b, ',');
			csv_field(b, json_string_value(v));
		}
		dbuf_addc(b, '\n');
	}
}

/* A table as pandas' to_json(orient="records", force_ascii=False),
 * lines: JSON Lines. */
static int
table_json(struct dbuf *b, const json_t *t, int lines)
{
	const json_t	*row, *hdr = json_object_get(t, "header");
	json_t		*obj;
	char		*s;
	size_t		 i, j;

	if (!lines)
		dbuf_addc(b, '[');
	json_array_foreach(json_object_get(t, "rows"), i, row) {
		if ((obj = json_object()) == NULL)
			return ENGINE_ENOMEM;
		for (j = 0; j < json_array_size(hdr); j++)
			if (json_object_set(obj, json_string_value(
			    json_array_get(hdr, j)), json_array_get(row, j) ?
			    json_array_get(row, j) : json_null()) != 0) {
				json_decref(obj);
				return ENGINE_ENOMEM;
			}
		s = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER |
		    JSON_ESCAPE_SLASH);
		json_decref(obj);
		if (s == NULL)
			return ENGINE_ENOMEM;
		if (!lines && i > 0)
			dbuf_addc(b, ',');
		dbuf_addstr(b, s);
		free(s);
		if (lines)
			dbuf_addc(b, '\n');
	}
	if (!lines)
		dbuf_addc(b, ']');
	return 0;
}

/* ====== Code blocks, pages, notebooks ====== */

/* "true" unless the parameter says "false" (the plugin compares with
 * "true" after lower-casing; its YAML default is "false"). */
static int
param_true(const json_t *params, const char *name)
{
	char		*buf = NULL;
	const char	*s = tool_param_str(params, name, &buf);
	int		 v = s != NULL && strcasecmp(s, "true") == 0;

	free(buf);
	return v;
}

/* Python's str.strip() of n bytes at s: *start and *len. */
static void
py_strip(const char *s, size_t n, const char **start, size_t *len)
{
	while (n > 0 && strchr(" \t\r\n\f\v", *s) != NULL) {
		s++;
		n--;
	}
	while (n > 0 && strchr(" \t\r\n\f\v", s[n - 1]) != NULL)
		n--;
	*start = s;
	*len = n;
}

/*
 * md_to_codeblock: every ``` fenced code block, its language the first
 * word of its info ("text" when none), its code stripped: a file each
 * (named after output_filename or "code", _1, _2 ... when several), or
 * with is_compress one zip of code_1.<ext>, code_2.<ext> ...
 */
static int
codeblocks(struct engine *e, cmark_node *doc, const json_t *params,
    struct dbuf *b, char *err, struct tool_result *out)
{
	struct md_part	*parts = NULL;
	struct dbuf	 names = { 0 };
	cmark_iter	*it = NULL;
	cmark_node	*n;
	const char	*info, *code, *suffix, *mime, *s;
	char		 lang[64], num[32], **pn = NULL;
	size_t		 i, k, nblocks = 0, cap = 0, len, ll;
	int		 ev, len_f, off_f, compress, rc = ENGINE_ENOMEM;
	char		 ch;
	struct cb { const char *code; size_t len; const char *suffix, *mime; }
			*blocks = NULL, *nb;

	compress = param_true(params, "is_compress");
	if ((it = cmark_iter_new(doc)) == NULL)
		goto out;
	while ((ev = cmark_iter_next(it)) != CMARK_EVENT_DONE) {
		n = cmark_iter_get_node(it);
		if (ev != CMARK_EVENT_ENTER || cmark_node_get_type(n) !=
		    CMARK_NODE_CODE_BLOCK || !cmark_node_get_fenced(n, &len_f,
		    &off_f, &ch) || ch != '`')
			continue;
		info = cmark_node_get_fence_info(n);
		ll = info ? strcspn(info, " \t") : 0;
		if (ll == 0 || ll >= sizeof(lang))
			snprintf(lang, sizeof(lang), "text");
		else
			snprintf(lang, sizeof(lang), "%.*s", (int)ll, info);
		suffix = ".txt";
		mime = "text/plain";
		for (k = 0; k < sizeof(langs) / sizeof(langs[0]); k++)
			if (strcasecmp(langs[k].lang, lang) == 0) {
				suffix = langs[k].suffix;
				mime = langs[k].mime;
			}
		if (nblocks == cap) {
			cap = cap ? cap * 2 : 8;
			if ((nb = realloc(blocks, cap * sizeof(*nb))) == NULL)
				goto out;
			blocks = nb;
		}
		code = cmark_node_get_literal(n);
		py_strip(code ? code : "", code ? strlen(code) : 0, &s, &len);
		blocks[nblocks++] = (struct cb){ s, len, suffix, mime };
	}
	if (nblocks == 0) {
		rc = engine_invalid(err, "No code blocks found in the input "
		    "text");
		goto out;
	}
	if (!compress) {
		for (i = 0; i < nblocks; i++) {
			snprintf(num, sizeof(num), "_%zu", i + 1);
			if ((rc = give_file_as(out, params, blocks[i].suffix,
			    blocks[i].mime, nblocks > 1 ? num : NULL, "code",
			    blocks[i].code, blocks[i].len)) != 0)
				goto out;
		}
		rc = 0;
		goto out;
	}
	if ((parts = calloc(nblocks, sizeof(*parts))) == NULL ||
	    (pn = calloc(nblocks, sizeof(*pn))) == NULL)
		goto out;
	for (i = 0; i < nblocks; i++) {
		dbuf_reset(&names);
		dbuf_addf(&names, "code_%zu%s", i + 1, blocks[i].suffix);
		if (names.err || (pn[i] = strdup(names.p)) == NULL)
			goto out;
		parts[i] = (struct md_part){ pn[i], blocks[i].code,
		    blocks[i].len };
	}
	if ((rc = md_zip(parts, nblocks, b, err)) != 0) {
		if (rc == ENGINE_ELIMIT)
			rc = too_big(e, err);
		goto out;
	}
	rc = give_file(out, params, ".zip", "application/zip", NULL, b->p,
	    b->len);
out:
	for (i = 0; pn != NULL && i < nblocks; i++)
		free(pn[i]);
	free(pn);
	free(parts);
	free(blocks);
	dbuf_free(&names);
	if (it != NULL)
		cmark_iter_free(it);
	return rc;
}

/*
 * md_to_png: the PDF's pages as PNG images, named after output_filename
 * or "output" (<name>_page1.png ... when several), each a file, or with
 * is_compress one zip of them.
 */
static int
png_pages(struct engine *e, cmark_node *doc, const json_t *params,
    struct dbuf *b, char *err, struct tool_result *out)
{
	struct dbuf	*pages = NULL, nm = { 0 };
	struct md_part	*parts = NULL;
	char		*base = NULL, **pn = NULL, num[32];
	int		 npages = 0, i, max = e->conf->export_max_pages, rc;

	rc = ENGINE_ENOMEM;
	if ((pages = calloc((size_t)max, sizeof(*pages))) == NULL)
		goto out;
	for (i = 0; i < max; i++)
		dbuf_init(&pages[i], (size_t)e->conf->export_max_output);
	if ((rc = md_png(doc, max, pages, &npages, err)) != 0) {
		if (rc == ENGINE_ELIMIT && strstr(err, "max_pages") == NULL)
			rc = too_big(e, err);
		goto out;
	}
	if (!param_true(params, "is_compress")) {
		for (i = 0; i < npages; i++) {
			snprintf(num, sizeof(num), "_page%d", i + 1);
			if ((rc = give_file_as(out, params, ".png", "image/png",
			    npages > 1 ? num : NULL, "output", pages[i].p,
			    pages[i].len)) != 0)
				goto out;
		}
		goto out;
	}
	rc = ENGINE_ENOMEM;
	if ((rc = file_name(params, "", NULL, "output", &base)) != 0)
		goto out;
	rc = ENGINE_ENOMEM;
	if ((parts = calloc((size_t)npages, sizeof(*parts))) == NULL ||
	    (pn = calloc((size_t)npages, sizeof(*pn))) == NULL)
		goto out;
	for (i = 0; i < npages; i++) {
		dbuf_reset(&nm);
		if (npages > 1)
			dbuf_addf(&nm, "%s_page%d.png", base, i + 1);
		else
			dbuf_addf(&nm, "%s.png", base);
		if (nm.err || (pn[i] = strdup(nm.p)) == NULL)
			goto out;
		parts[i] = (struct md_part){ pn[i], pages[i].p, pages[i].len };
	}
	if ((rc = md_zip(parts, (size_t)npages, b, err)) != 0) {
		if (rc == ENGINE_ELIMIT)
			rc = too_big(e, err);
		goto out;
	}
	rc = give_file_as(out, params, ".zip", "application/zip", NULL,
	    "output", b->p, b->len);
out:
	for (i = 0; pn != NULL && i < npages; i++)
		free(pn[i]);
	for (i = 0; pages != NULL && i < max; i++)
		dbuf_free(&pages[i]);
	free(pn);
	free(parts);
	free(pages);
	free(base);
	dbuf_free(&nm);
	return rc;
}

/* Appends the lines of text (n bytes) as a notebook cell's source: an
 * array of strings, each line with its "\n" but the last. */
static int
cell_source(json_t *src, const char *text, size_t n)
{
	const char	*p = text, *end = text + n, *nl;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (json_array_append_new(src, json_stringn(p, nl ? (size_t)(nl +
		    1 - p) : (size_t)(end - p))) != 0)
			return ENGINE_ENOMEM;
		p = nl ? nl + 1 : end;
	}
	return 0;
}

static int
add_cell(json_t *cells, const char *type, const char *text, size_t n)
{
	json_t	*c, *src = json_array();
	int	 rc;

	if (src == NULL || (rc = cell_source(src, text, n)) != 0) {
		json_decref(src);
		return ENGINE_ENOMEM;
	}
	if (strcmp(type, "code") == 0)
		c = json_pack("{s:s,s:n,s:{},s:[],s:o}", "cell_type", "code",
		    "execution_count", "metadata", "outputs", "source", src);
	else
		c = json_pack("{s:s,s:{},s:o}", "cell_type", "markdown",
		    "metadata", "source", src);
	return c != NULL && json_array_append_new(cells, c) == 0 ? 0 :
	    ENGINE_ENOMEM;
}

/*
 * md_to_ipynb: a notebook (nbformat 4) whose code cells are the fenced
 * code blocks at the top level and whose markdown cells are the source
 * lines between them, as the plugin makes it through pandoc.
 */
static int
notebook(cmark_node *doc, const char *text, size_t len, struct dbuf *b)
{
	json_t		*nb = NULL, *cells = json_array();
	cmark_node	*n;
	const char	*code, *lines[2] = { NULL, NULL }, *s;
	char		*dump = NULL;
	size_t		 line = 1, from = 1, k, cl;
	int		 rc = ENGINE_ENOMEM, sl, el, fl, fo;
	char		 ch;
	const char	*p;

	if (cells == NULL)
		goto out;
	/* byte offset of a 1-based line number */
#define LINE_AT(want, ptr) do {						\
		for (p = text, k = 1; k < (size_t)(want) && p < text + len;	\
		    p++)						\
			if (*p == '\n')					\
				k++;					\
		(ptr) = p;						\
	} while (0)
	for (n = cmark_node_first_child(doc); n != NULL;
	    n = cmark_node_next(n)) {
		if (cmark_node_get_type(n) != CMARK_NODE_CODE_BLOCK ||
		    !cmark_node_get_fenced(n, &fl, &fo, &ch) || ch != '`')
			continue;
		sl = cmark_node_get_start_line(n);
		el = cmark_node_get_end_line(n);
		if ((size_t)sl > from) {	/* markdown before it */
			LINE_AT(from, lines[0]);
			LINE_AT(sl, lines[1]);
			py_strip(lines[0], (size_t)(lines[1] - lines[0]), &s,
			    &cl);
			if (cl > 0 && add_cell(cells, "markdown", s, cl) != 0)
				goto out;
		}
		code = cmark_node_get_literal(n);
		cl = code ? strlen(code) : 0;
		if (cl > 0 && code[cl - 1] == '\n')
			cl--;
		if (add_cell(cells, "code", code ? code : "", cl) != 0)
			goto out;
		from = (size_t)el + 1;
		line = from;
	}
	(void)line;
	LINE_AT(from, lines[0]);
	py_strip(lines[0], (size_t)(text + len - lines[0]), &s, &cl);
	if (cl > 0 && add_cell(cells, "markdown", s, cl) != 0)
		goto out;
#undef LINE_AT
	nb = json_pack("{s:O,s:{},s:i,s:i}", "cells", cells, "metadata",
	    "nbformat", 4, "nbformat_minor", 4);
	if (nb == NULL || (dump = json_dumps(nb, JSON_INDENT(1) |
	    JSON_PRESERVE_ORDER)) == NULL)
		goto out;
	dbuf_addstr(b, dump);
	dbuf_addc(b, '\n');
	rc = b->err == DBUF_ETOOBIG ? ENGINE_ELIMIT : b->err ? ENGINE_ENOMEM :
	    0;
out:
	free(dump);
	json_decref(nb);
	json_decref(cells);
	return rc;
}

/* ====== The provider ====== */

static int
md_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	if ((*out = tool_defs_json(defs)) == NULL)
		return ENGINE_ENOMEM;
	return 0;
}

static int
md_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	struct dbuf	 b;
	cmark_node	*doc = NULL;
	json_t		*tables = NULL, *t;
	char		*text = NULL, *style = NULL, *force = NULL, suffix[32];
	const char	*s;
	size_t		 i, k, len = 0, ntab;
	int		 rc, kind = -1, table_tool;

	dbuf_init(&b, (size_t)e->conf->export_max_output);
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (call->tool != NULL && strcmp(kinds[k].tool, call->tool) ==
		    0) {
			kind = (int)kinds[k].kind;
			break;
		}
	if (kind < 0) {
		rc = ENGINE_ENOTFOUND;
		engine_invalid(err, "tool 'md_exporter/%s' is not available "
		    "in flowcgi", call->tool ? call->tool : "");
		goto out;
	}
	table_tool = kind == K_CSV || kind == K_JSON || kind == K_XLSX;
	if ((rc = md_text_of(e, call->params, table_tool, err, &text,
	    &len)) != 0)
		goto out;
	if (kind == K_MD) {
		rc = give_file(out, call->params, kinds[k].ext, kinds[k].mime,
		    NULL, text, len);
		goto out;
	}
	if ((rc = md_parse(text, len, &doc)) != 0)
		goto out;
	switch (kind) {
	case K_HTML:
	case K_HTML_TEXT:
		add_rendered(&b, cmark_render_html(doc, CMARK_OPT_DEFAULT,
		    render_exts()), 0);
		break;
	case K_XML:
		dbuf_addstr(&b, "<?xml version='1.0' encoding='UTF-8'?>\n"
		    "<div>\n");
		add_rendered(&b, cmark_render_html(doc, CMARK_OPT_DEFAULT,
		    render_exts()), 1);
		dbuf_addstr(&b, "</div>\n");
		break;
	case K_LATEX:
		add_rendered(&b, cmark_render_latex(doc, CMARK_OPT_DEFAULT,
		    0), 0);
		break;
	case K_DOCX:
		rc = md_docx(doc, &b, err);
		break;
	case K_PPTX:
		rc = md_pptx(doc, e->conf->export_max_pages, &b, err);
		break;
	case K_PDF:
		rc = md_pdf(doc, e->conf->export_max_pages, &b, err);
		break;
	case K_CODEBLOCK:
		rc = codeblocks(e, doc, call->params, &b, err, out);
		goto out;
	case K_PNG:
		rc = png_pages(e, doc, call->params, &b, err, out);
		goto out;
	case K_IPYNB:
		rc = notebook(doc, text, len, &b);
		break;
	default:
		break;
	}
	if (rc == ENGINE_ELIMIT && b.err == DBUF_ETOOBIG)
		rc = too_big(e, err);
	if (rc != 0)
		goto out;
	if (table_tool) {
		if ((tables = md_tables(doc)) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		if (json_array_size(tables) == 0) {
			dbuf_reset(&b);
			dbuf_addf(&b, "Failed to convert markdown text to %s, "
			    "error: Failed to parse markdown to tables, "
			    "exception: No available tables parsed from "
			    "markdown text", kinds[k].label);
			rc = tool_result_text(out, b.p, b.len);
			goto out;
		}
	}
	if (kind == K_XLSX) {
		s = tool_param_str(call->params, "force_text_value", &force);
		rc = md_xlsx(tables, s == NULL || strcasecmp(s, "false") != 0,
		    &b, err);
		if (rc == ENGINE_ELIMIT && b.err == DBUF_ETOOBIG)
			rc = too_big(e, err);
		if (rc != 0)
			goto out;
	}
	if (kind == K_CSV || kind == K_JSON) {
		ntab = json_array_size(tables);
		s = tool_param_str(call->params, "output_style", &style);
		json_array_foreach(tables, i, t) {
			dbuf_reset(&b);
			if (kind == K_CSV)
				table_csv(&b, t);
			else if ((rc = table_json(&b, t, s == NULL ||
			    strcmp(s, "json_array") != 0)) != 0)
				goto out;
			if (b.err == DBUF_ETOOBIG) {
				rc = too_big(e, err);
				goto out;
			}
			if (b.err) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
			snprintf(suffix, sizeof(suffix), "_%zu", i + 1);
			if ((rc = give_file(out, call->params, kinds[k].ext,
			    kinds[k].mime, ntab > 1 ? suffix : NULL, b.p ?
			    b.p : "", b.len)) != 0)
				goto out;
		}
		goto out;
	}
	if (b.err == DBUF_ETOOBIG) {
		rc = too_big(e, err);
		goto out;
	}
	if (b.err) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if (kind == K_HTML_TEXT)
		rc = tool_result_text(out, dbuf_str(&b), b.len);
	else
		rc = give_file(out, call->params, kinds[k].ext, kinds[k].mime,
		    NULL, b.p ? b.p : "", b.len);
out:
	if (doc != NULL)
		cmark_node_free(doc);
	json_decref(tables);
	free(text);
	free(style);
	free(force);
	dbuf_free(&b);
	return rc;
}

const struct tool_provider tool_provider_md_exporter = {
	"md_exporter", md_list, md_invoke, 0,
};
