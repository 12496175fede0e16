/*
 * webscraper.c — Dify's builtin `webscraper` provider, tool `webscraper`
 * (params url, user_agent, generate_summary), after
 * api/core/tools/utils/web_reader_tool.py get_url:
 *
 * The page is fetched through outbound_fetch with the SSRF guard,
 * following redirects. A status other than 200 answers "URL returned
 * status code N."; text/plain and application/json bodies come back as
 * they are; other types but HTML answer "Unsupported content-type [T] of
 * URL.". HTML is read with libxml2's HTML parser (no network, errors
 * ignored) and its readable text taken: script, style, nav, noscript,
 * template, svg, iframe, head and form elements skipped, whitespace
 * collapsed, one line per block element. The answer is Dify's template
 *
 *	"\nTITLE: <title>\nAUTHOR: <meta author>\nTEXT:\n\n<text>\n"
 *
 * or "" when the page has no text. generate_summary (an LLM summary in
 * Dify) is ignored: the full text comes back.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <libxml/HTMLparser.h>
#include <libxml/tree.h>

#include "engine/tools/tools.h"

#define WS_UA	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 " \
		"(KHTML, like Gecko) Chrome/91.0.4472.124 Safari/537.36"
#define WS_MAX_DEPTH	256

static const char *const skip_tags[] = { "script", "style", "nav",
    "noscript", "template", "svg", "iframe", "head", "form", "button",
    "select", NULL };
static const char *const block_tags[] = { "p", "div", "br", "li", "ul",
    "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table", "section",
    "article", "header", "footer", "main", "aside", "blockquote", "pre",
    "dd", "dt", "dl", "hr", "figure", "figcaption", "address", "body",
    "td", "th", NULL };

static int
in_list(const char *const *list, const char *name)
{
	size_t i;

	for (i = 0; list[i] != NULL; i++)
		if (strcasecmp(list[i], name) == 0)
			return 1;
	return 0;
}

/* The text of the page: lines of collapsed text, one per block. */
struct walk {
	struct dbuf	 sb;
	int		 space;		/* a space is pending */
	int		 line;		/* a line break is pending */
};

static void
emit_text(struct walk *w, const char *s)
{
	for (; *s != '\0'; s++) {
		if (isspace((unsigned char)*s)) {
			w->space = 1;
			continue;
		}
		if (w->sb.len > 0) {
			if (w->line)
				dbuf_addstr(&w->sb, "\n");
			else if (w->space)
				dbuf_addstr(&w->sb, " ");
		}
		w->line = w->space = 0;
		dbuf_add(&w->sb, s, 1);
	}
}

static void
walk_node(struct walk *w, xmlNode *n, int depth)
{
	xmlNode	*c;
	int	 block;

	if (depth > WS_MAX_DEPTH)
		return;
	for (c = n; c != NULL; c = c->next) {
		if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
			if (c->content != NULL)
				emit_text(w, (const char *)c->content);
			continue;
		}
		if (c->type != XML_ELEMENT_NODE)
			continue;
		if (in_list(skip_tags, (const char *)c->name))
			continue;
		block = in_list(block_tags, (const char *)c->name);
		if (block)
			w->line = 1;
		walk_node(w, c->children, depth + 1);
		if (block)
			w->line = 1;
	}
}

/* The first element called name under n, depth first. */
static xmlNode *
find_elem(xmlNode *n, const char *name, int depth)
{
	xmlNode	*c, *r;

	if (depth > WS_MAX_DEPTH)
		return NULL;
	for (c = n; c != NULL; c = c->next) {
		if (c->type != XML_ELEMENT_NODE)
			continue;
		if (strcasecmp((const char *)c->name, name) == 0)
			return c;
		if ((r = find_elem(c->children, name, depth + 1)) != NULL)
			return r;
	}
	return NULL;
}

/* content of <meta name="author">, as a malloc'd string or NULL. */
static char *
meta_author(xmlNode *n, int depth)
{
	xmlNode	*c;
	xmlChar	*name, *content;
	char	*r = NULL;

	if (depth > WS_MAX_DEPTH)
		return NULL;
	for (c = n; c != NULL && r == NULL; c = c->next) {
		if (c->type != XML_ELEMENT_NODE)
			continue;
		if (strcasecmp((const char *)c->name, "meta") == 0) {
			name = xmlGetProp(c, (const xmlChar *)"name");
			if (name != NULL && strcasecmp((const char *)name,
			    "author") == 0 && (content = xmlGetProp(c,
			    (const xmlChar *)"content")) != NULL) {
				r = strdup((const char *)content);
				xmlFree(content);
			}
			xmlFree(name);
			continue;
		}
		r = meta_author(c->children, depth + 1);
	}
	return r;
}

/* Collapsed text of the element (for the title). */
static char *
node_text(xmlNode *n)
{
	struct walk	 w;
	xmlChar		*t;

	memset(&w, 0, sizeof(w));
	if (n == NULL || (t = xmlNodeGetContent(n)) == NULL)
		return strdup("");
	emit_text(&w, (const char *)t);
	xmlFree(t);
	return w.sb.p ? dbuf_take(&w.sb, NULL) : strdup("");
}

/* The charset= of a Content-Type, into buf, or NULL. */
static const char *
charset_of(const char *ctype, char *buf, size_t bufsz)
{
	const char	*p;
	size_t		 n;

	if (ctype == NULL || (p = strcasestr(ctype, "charset=")) == NULL)
		return NULL;
	p += 8;
	if (*p == '"')
		p++;
	n = strcspn(p, "\"; ");
	if (n == 0 || n >= bufsz)
		return NULL;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

static int
scrape(struct engine *e, const char *url, const char *ua, char *err,
    struct tool_result *out)
{
	struct outbound_req	 req;
	struct outbound_resp	 resp;
	struct curl_slist	*hl = NULL, *h;
	struct walk		 w;
	htmlDocPtr		 doc = NULL;
	xmlNode			*root;
	struct dbuf		 res = { 0 };
	char			 hdr[1100], mime[128], cs[64], msg[300];
	char			*title = NULL, *author = NULL;
	int			 rc;

	memset(&req, 0, sizeof(req));
	memset(&w, 0, sizeof(w));
	snprintf(hdr, sizeof(hdr), "User-Agent: %s", ua);
	if ((h = curl_slist_append(hl, hdr)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	hl = h;
	req.url = url;
	req.headers = hl;
	req.follow = 1;
	if ((rc = outbound_fetch(e, &req, err, &resp)) != 0)
		goto out;
	if (resp.status != 200) {
		snprintf(msg, sizeof(msg), "URL returned status code %ld.",
		    resp.status);
		rc = tool_result_text(out, msg, strlen(msg));
		goto done;
	}
	snprintf(mime, sizeof(mime), "%.*s", (int)strcspn(resp.content_type ?
	    resp.content_type : "text/html", "; "), resp.content_type ?
	    resp.content_type : "text/html");
	if (strcasecmp(mime, "text/plain") == 0 ||
	    strcasecmp(mime, "application/json") == 0) {
		rc = tool_result_text(out, resp.body, resp.len);
		goto done;
	}
	if (strcasecmp(mime, "text/html") != 0 &&
	    strcasecmp(mime, "application/xhtml+xml") != 0) {
		snprintf(msg, sizeof(msg), "Unsupported content-type [%s] of "
		    "URL.", mime);
		rc = tool_result_text(out, msg, strlen(msg));
		goto done;
	}
	if (resp.len > INT32_MAX) {
		rc = engine_invalid(err, "page too large");
		goto done;
	}
	doc = htmlReadMemory(resp.body, (int)resp.len, url, charset_of(
	    resp.content_type, cs, sizeof(cs)), HTML_PARSE_NONET |
	    HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING);
	if (doc == NULL || (root = xmlDocGetRootElement(doc)) == NULL) {
		rc = tool_result_text(out, "", 0);
		goto done;
	}
	title = node_text(find_elem(root, "title", 0));
	author = meta_author(root, 0);
	walk_node(&w, root, 0);
	if (w.sb.err || title == NULL) {
		rc = ENGINE_ENOMEM;
		goto done;
	}
	if (w.sb.len == 0) {
		rc = tool_result_text(out, "", 0);
		goto done;
	}
	dbuf_addstr(&res, "\nTITLE: ");
	dbuf_addstr(&res, title);
	dbuf_addstr(&res, "\nAUTHOR: ");
	dbuf_addstr(&res, author ? author : "");
	dbuf_addstr(&res, "\nTEXT:\n\n");
	dbuf_add(&res, w.sb.p, w.sb.len);
	dbuf_addstr(&res, "\n");
	rc = res.err ? ENGINE_ENOMEM : tool_result_text(out, res.p, res.len);
done:
	outbound_resp_release(&resp);
out:
	if (doc != NULL)
		xmlFreeDoc(doc);
	curl_slist_free_all(hl);
	dbuf_free(&w.sb);
	dbuf_free(&res);
	free(title);
	free(author);
	return rc;
}

static const struct tool_param params[] = {
	{ "url", "string", 1, "URL of the page to read" },
	{ "user_agent", "string", 0, "User-Agent header to send" },
	{ NULL, NULL, 0, NULL },
};

static const struct tool_def defs[] = {
	{ "webscraper", "A tool for scraping webpages: the page's readable "
	    "text.", params },
	{ NULL, NULL, NULL },
};

static int
ws_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	*out = tool_defs_json(defs);
	return *out ? 0 : ENGINE_ENOMEM;
}

static int
ws_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	const char	*url, *ua;
	char		*b1 = NULL, *b2 = NULL;
	int		 rc;

	if (strcmp(call->tool, "webscraper") != 0) {
		engine_invalid(err, "tool '%s/%s' is not available in "
		    "flowcgi", call->provider, call->tool);
		rc = ENGINE_ENOTFOUND;
		goto out;
	}
	url = tool_param_str(call->params, "url", &b1);
	ua = tool_param_str(call->params, "user_agent", &b2);
	if (url == NULL || *url == '\0') {
		rc = tool_result_text(out, "Please input url", 16);
		goto out;
	}
	if (ua == NULL || *ua == '\0' || strpbrk(ua, "\r\n") != NULL)
		ua = WS_UA;
	rc = scrape(e, url, ua, err, out);
out:
	free(b1);
	free(b2);
	return rc;
}

const struct tool_provider tool_provider_webscraper = {
	"webscraper", ws_list, ws_invoke, 0,
};
