/*
 * duckduckgo.c — Dify's `duckduckgo` provider (ids duckduckgo,
 * langgenius/duckduckgo/duckduckgo), after the plugin's
 * tools/ddgo_search.py, which asks the duckduckgo_search library for
 * DDGS().text(query, max_results).
 *
 * ddgo_search (query, max_results, require_summary) POSTs the form
 * q=<query>&b=&kl=wt-wt to DuckDuckGo's HTML endpoint (base URL from the
 * credential base_url, else https://html.duckduckgo.com; path /html/),
 * as the library's html backend does, and reads the page with libxml2's
 * HTML parser (no network, errors ignored): every element with an <h2>
 * child is a result, its title the text of the h2's link, its href the
 * link (DuckDuckGo's //duckduckgo.com/l/?uddg=<urlencoded> redirect
 * unwrapped), its body the text of the snippet link; ads (y.js links) and
 * repeated links are skipped. While fewer than max_results were found,
 * the page's "Next" form is posted, at most DDG_MAX_PAGES pages. Each
 * result is one json message {"title", "href", "body"}, as Dify gives
 * them; no text message. require_summary asks Dify for an LLM summary of
 * the bodies; flowcgi has no model for a tool, so it answers the bodies
 * joined by newlines (what the summary would have been made from) as the
 * text message, ahead of the json messages.
 *
 * ddgo_img, ddgo_news, ddgo_video, ddgo_translate and ddgo_ai are not
 * served: the HTML endpoint has no images, news, translation or chat, and
 * the library reaches those through undocumented duckduckgo.com JSON
 * endpoints behind a token scraped from the site (vqd), which flowcgi
 * does not imitate. Translation is gone from the library itself
 * (duckduckgo_search 7.0.0 dropped translate(); the plugin requires 7.5),
 * so Dify's own ddgo_translate fails too. Their calls fail with a message
 * that says why.
 *
 * A 202 (DuckDuckGo's rate-limit answer, with a challenge page), 429,
 * 401/403 or 5xx is ENGINE_EFETCH naming the provider and the status.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <libxml/HTMLparser.h>
#include <libxml/tree.h>

#include "engine/tools/tools.h"

#define DDG_DEFAULT_URL		"https://html.duckduckgo.com"
#define DDG_UA			"Mozilla/5.0 (Windows NT 10.0; Win64; x64) " \
				"AppleWebKit/537.36 (KHTML, like Gecko) " \
				"Chrome/124.0 Safari/537.36"
#define DDG_DEFAULT_RESULTS	5	/* max_results when not given */
#define DDG_MAX_RESULTS		50	/* max_results' top */
#define DDG_MAX_PAGES		5	/* result pages asked for per search */
#define DDG_MAX_PAGE_BYTES	(4 * 1024 * 1024)	/* bytes of one page */
#define DDG_MAX_FIELD		(16 * 1024)	/* bytes of a title or body */
#define DDG_MAX_DEPTH		256	/* element nesting walked */
#define DDG_MAX_FORM		32	/* fields of the next-page form */

/* ====== Page reader ====== */

static int
has_class(const xmlNode *n, const char *cls)
{
	xmlChar		*v = xmlGetProp(n, (const xmlChar *)"class");
	const char	*p;
	size_t		 l = strlen(cls);
	int		 r = 0;

	for (p = (const char *)v; p != NULL && (p = strstr(p, cls)) != NULL;
	    p += l)
		if ((p == (const char *)v || isspace((unsigned char)p[-1])) &&
		    (p[l] == '\0' || isspace((unsigned char)p[l]))) {
			r = 1;
			break;
		}
	xmlFree(v);
	return r;
}

static int
is_tag(const xmlNode *n, const char *name)
{
	return n != NULL && n->type == XML_ELEMENT_NODE &&
	    strcasecmp((const char *)n->name, name) == 0;
}

static const xmlNode *
first_child(const xmlNode *n, const char *name)
{
	const xmlNode	*c;

	for (c = n ? n->children : NULL; c != NULL; c = c->next)
		if (is_tag(c, name))
			return c;
	return NULL;
}

/* Collapsed text under n into sb (at most DDG_MAX_FIELD bytes). */
static void
text_of(const xmlNode *n, struct dbuf *sb, int *space, int depth)
{
	const xmlNode	*c;
	const char	*s;

	if (depth > DDG_MAX_DEPTH)
		return;
	for (c = n; c != NULL && sb->err == 0; c = c->next) {
		if (c->type == XML_ELEMENT_NODE) {
			text_of(c->children, sb, space, depth + 1);
			continue;
		}
		if (c->type != XML_TEXT_NODE || c->content == NULL)
			continue;
		for (s = (const char *)c->content; *s != '\0'; s++) {
			if (isspace((unsigned char)*s)) {
				*space = 1;
				continue;
			}
			if (*space && sb->len > 0)
				dbuf_addc(sb, ' ');
			*space = 0;
			dbuf_addc(sb, *s);
		}
	}
}

/* The text of element n as a new JSON string ("" for NULL). */
static json_t *
text_json(const xmlNode *n)
{
	struct dbuf	 sb;
	json_t		*v;
	int		 space = 0;
	size_t		 i;

	dbuf_init(&sb, DDG_MAX_FIELD);
	if (n != NULL)
		text_of(n->children, &sb, &space, 0);
	if (sb.err == DBUF_ENOMEM) {
		dbuf_free(&sb);
		return NULL;
	}
	/* a cut may split a character: drop its start */
	if (sb.err == DBUF_ETOOBIG) {
		i = sb.len;
		while (i > 0 && ((unsigned char)sb.p[i - 1] & 0xc0) == 0x80)
			i--;
		if (i > 0 && ((unsigned char)sb.p[i - 1] & 0x80) != 0)
			sb.len = i - 1;
		if (sb.p != NULL)
			sb.p[sb.len] = '\0';
	}
	v = json_string(dbuf_str(&sb));
	if (v == NULL)
		v = json_string("");
	dbuf_free(&sb);
	return v;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decodes n bytes of s into sb, as Python's unquote ('+' kept). */
static void
url_unquote(struct dbuf *sb, const char *s, size_t n)
{
	size_t	i;
	int	hi, lo;

	for (i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && (hi = hexval((unsigned char)s[i +
		    1])) >= 0 && (lo = hexval((unsigned char)s[i + 2])) >= 0) {
			dbuf_addc(sb, (char)(hi * 16 + lo));
			i += 2;
		} else
			dbuf_addc(sb, s[i]);
	}
}

/*
 * The destination of a result link as a new JSON string: the uddg
 * parameter of DuckDuckGo's /l/ redirect decoded, else the link itself
 * (a protocol-relative one with https:). NULL when out of memory or the
 * decoded link is not UTF-8.
 */
static json_t *
ddg_unwrap(const char *href)
{
	struct dbuf	 sb = { 0 };
	const char	*q, *p;
	json_t		*v;

	if ((strstr(href, "duckduckgo.com/l/") != NULL ||
	    strncmp(href, "/l/", 3) == 0) && (q = strchr(href, '?')) !=
	    NULL) {
		for (p = q + 1; *p != '\0'; p += strcspn(p, "&"),
		    p += *p == '&') {
			if (strncmp(p, "uddg=", 5) == 0) {
				url_unquote(&sb, p + 5, strcspn(p + 5, "&#"));
				goto done;
			}
		}
	}
	if (strncmp(href, "//", 2) == 0)
		dbuf_addstr(&sb, "https:");
	dbuf_addstr(&sb, href);
done:
	if (sb.err) {
		dbuf_free(&sb);
		return NULL;
	}
	v = json_string(dbuf_str(&sb));
	dbuf_free(&sb);
	return v;
}

struct ddg_page {
	json_t	*results;	/* [{title, href, body}] */
	json_t	*seen;		/* {href: true}, across pages */
	json_t	*next;		/* the next-page form's fields, or NULL */
	size_t	 max;		/* results wanted in all */
	int	 oom;
};

/* An ad, or a link the library drops. */
static int
ddg_skip(const char *href)
{
	return strncmp(href, "http://www.google.com/search?q=", 31) == 0 ||
	    strstr(href, "duckduckgo.com/y.js") != NULL ||
	    strncmp(href, "/y.js", 5) == 0;
}

/* The result of element n (which has an <h2> child), if any. */
static void
ddg_result(struct ddg_page *pg, const xmlNode *n)
{
	const xmlNode	*h2 = first_child(n, "h2"), *ta, *snip;
	xmlChar		*href = NULL;
	json_t		*o = NULL, *h = NULL;

	ta = first_child(h2, "a");
	snip = first_child(n, "a");
	if (snip != NULL)
		href = xmlGetProp(snip, (const xmlChar *)"href");
	if (href == NULL && ta != NULL)
		href = xmlGetProp(ta, (const xmlChar *)"href");
	if (href == NULL || *href == '\0' || ddg_skip((const char *)href) ||
	    has_class(n, "result--ad"))
		goto out;
	if ((h = ddg_unwrap((const char *)href)) == NULL)
		goto out;	/* not UTF-8 once decoded: skipped */
	if (json_object_get(pg->seen, json_string_value(h)) != NULL ||
	    json_array_size(pg->results) >= pg->max)
		goto out;
	o = json_pack("{s:o*,s:O,s:o*}", "title", text_json(ta ? ta : h2),
	    "href", h, "body", text_json(snip));
	if (o == NULL || json_object_size(o) != 3 ||
	    json_object_set(pg->seen, json_string_value(h), json_true()) !=
	    0 || json_array_append(pg->results, o) != 0)
		pg->oom = 1;
out:
	json_decref(o);
	json_decref(h);
	xmlFree(href);
}

/* The hidden fields of the "Next" form under n into pg->next. */
static void
ddg_form(struct ddg_page *pg, const xmlNode *n, int depth)
{
	const xmlNode	*c;
	xmlChar		*type, *name, *value;

	if (depth > DDG_MAX_DEPTH)
		return;
	for (c = n; c != NULL && !pg->oom; c = c->next) {
		if (c->type != XML_ELEMENT_NODE)
			continue;
		if (is_tag(c, "input") && json_object_size(pg->next) <
		    DDG_MAX_FORM) {
			type = xmlGetProp(c, (const xmlChar *)"type");
			name = xmlGetProp(c, (const xmlChar *)"name");
			value = xmlGetProp(c, (const xmlChar *)"value");
			if (type != NULL && name != NULL && strcasecmp(
			    (const char *)type, "hidden") == 0 &&
			    json_object_set_new(pg->next, (const char *)name,
			    json_string(value ? (const char *)value : "")) !=
			    0)
				pg->oom = 1;
			xmlFree(type);
			xmlFree(name);
			xmlFree(value);
		}
		ddg_form(pg, c->children, depth + 1);
	}
}

static void
ddg_walk(struct ddg_page *pg, const xmlNode *n, int depth)
{
	const xmlNode	*c;

	if (depth > DDG_MAX_DEPTH)
		return;
	for (c = n; c != NULL && !pg->oom; c = c->next) {
		if (c->type != XML_ELEMENT_NODE)
			continue;
		if (is_tag(c, "div") && has_class(c, "nav-link")) {
			/* the last such form is the next page's */
			json_decref(pg->next);
			if ((pg->next = json_object()) == NULL)
				pg->oom = 1;
			else
				ddg_form(pg, c->children, 0);
			continue;
		}
		if (first_child(c, "h2") != NULL)
			ddg_result(pg, c);
		ddg_walk(pg, c->children, depth + 1);
	}
}

/*
 * Reads one result page of len bytes into pg (results appended, next set
 * to the next page's form or NULL). Returns 0 or ENGINE_ENOMEM.
 */
static int
ddg_parse(struct ddg_page *pg, const char *html, size_t len)
{
	htmlDocPtr	doc;

	json_decref(pg->next);
	pg->next = NULL;
	if (len == 0 || len > DDG_MAX_PAGE_BYTES)
		return 0;
	doc = htmlReadMemory(html, (int)len, NULL, "UTF-8", HTML_PARSE_NONET |
	    HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING);
	if (doc == NULL)
		return 0;
	ddg_walk(pg, xmlDocGetRootElement(doc), 0);
	xmlFreeDoc(doc);
	if (pg->next != NULL && json_object_get(pg->next, "q") == NULL) {
		json_decref(pg->next);	/* the "Previous" form of a last page */
		pg->next = NULL;
	}
	return pg->oom ? ENGINE_ENOMEM : 0;
}

static void
ddg_page_release(struct ddg_page *pg)
{
	json_decref(pg->results);
	json_decref(pg->seen);
	json_decref(pg->next);
	memset(pg, 0, sizeof(*pg));
}

/* ====== Search ====== */

/* form as an application/x-www-form-urlencoded body into sb. */
static void
form_body(struct dbuf *sb, const json_t *form)
{
	const char	*k, *v;
	json_t		*x;
	char		*ek, *ev;

	json_object_foreach((json_t *)form, k, x) {
		v = json_string_value(x);
		ek = curl_easy_escape(NULL, k, 0);
		ev = curl_easy_escape(NULL, v ? v : "", 0);
		if (ek == NULL || ev == NULL)
			sb->err = DBUF_ENOMEM;
		else
			dbuf_addf(sb, "%s%s=%s", sb->len ? "&" : "", ek, ev);
		curl_free(ek);
		curl_free(ev);
	}
}

static int
ddg_status(long status, long retry_after, char *err)
{
	if (status == 202 || status == 429) {
		engine_invalid(err, "duckduckgo: rate limited (status %ld)%s",
		    status, retry_after >= 0 ? "; retry later" : "");
		return ENGINE_EFETCH;
	}
	if (status == 401 || status == 403) {
		engine_invalid(err, "duckduckgo: the server answered %ld (%s): "
		    "check the credential base_url", status, status == 401 ?
		    "unauthorized" : "forbidden");
		return ENGINE_EFETCH;
	}
	if (status >= 500) {
		engine_invalid(err, "duckduckgo: the server failed with status "
		    "%ld", status);
		return ENGINE_EFETCH;
	}
	if (status != 200) {
		engine_invalid(err, "duckduckgo: the search answered status "
		    "%ld", status);
		return ENGINE_EFETCH;
	}
	return 0;
}

/* Up to max results for query into pg->results. */
static int
ddg_text(struct engine *e, const struct tool_call *call, const char *query,
    size_t max, char *err, struct ddg_page *pg)
{
	struct outbound_req	 req;
	struct outbound_resp	 resp;
	struct curl_slist	*hl = NULL;
	struct dbuf		 body = { 0 }, url = { 0 };
	json_t			*form = NULL;
	const char		*base;
	int			 page, rc = 0;

	memset(&resp, 0, sizeof(resp));
	base = json_string_value(json_object_get(call->credentials,
	    "base_url"));
	if (base == NULL || *base == '\0')
		base = DDG_DEFAULT_URL;
	dbuf_add(&url, base, strlen(base) - (base[strlen(base) - 1] == '/'));
	dbuf_addstr(&url, "/html/");
	pg->max = max;
	if (url.err || (pg->results = json_array()) == NULL ||
	    (pg->seen = json_object()) == NULL || (form = json_pack(
	    "{s:s,s:s,s:s}", "q", query, "b", "", "kl", "wt-wt")) == NULL ||
	    (hl = curl_slist_append(NULL, "User-Agent: " DDG_UA)) == NULL ||
	    curl_slist_append(hl, "Referer: https://html.duckduckgo.com/") ==
	    NULL || curl_slist_append(hl, "Content-Type: "
	    "application/x-www-form-urlencoded") == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	for (page = 0; page < DDG_MAX_PAGES && form != NULL &&
	    json_array_size(pg->results) < max; page++) {
		dbuf_reset(&body);
		form_body(&body, form);
		if (body.err) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		memset(&req, 0, sizeof(req));
		req.method = "POST";
		req.url = url.p;
		req.headers = hl;
		req.body = dbuf_str(&body);
		req.body_len = body.len;
		req.follow = 1;
		req.max_bytes = DDG_MAX_PAGE_BYTES;
		outbound_resp_release(&resp);
		if ((rc = outbound_fetch(e, &req, err, &resp)) != 0) {
			char tmp[ENGINE_ERRMAX];

			snprintf(tmp, sizeof(tmp), "%s", err);
			snprintf(err, ENGINE_ERRMAX, "duckduckgo: %.230s", tmp);
			goto out;
		}
		if ((rc = ddg_status(resp.status, resp.retry_after, err)) != 0)
			goto out;
		if ((rc = ddg_parse(pg, resp.body, resp.len)) != 0)
			goto out;
		json_decref(form);
		form = pg->next ? json_incref(pg->next) : NULL;
	}
out:
	outbound_resp_release(&resp);
	curl_slist_free_all(hl);
	json_decref(form);
	dbuf_free(&body);
	dbuf_free(&url);
	return rc;
}

static int
ddg_search(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	struct ddg_page	 pg;
	struct dbuf	 sb = { 0 };
	const char	*query;
	char		*b1 = NULL;
	int64_t		 max = DDG_DEFAULT_RESULTS;
	json_t		*r;
	size_t		 i;
	int		 rc;

	memset(&pg, 0, sizeof(pg));
	query = tool_param_str(call->params, "query", &b1);
	if (query == NULL || *query == '\0') {
		rc = tool_result_text(out, "Please input query", 18);
		goto out;
	}
	if (tool_param_int(call->params, "max_results", &max) < 0 || max < 1)
		max = DDG_DEFAULT_RESULTS;
	if (max > DDG_MAX_RESULTS)
		max = DDG_MAX_RESULTS;
	if ((rc = ddg_text(e, call, query, (size_t)max, err, &pg)) != 0)
		goto out;
	if (tool_param_bool(call->params, "require_summary", 0)) {
		/* no model here: the text a summary would be made of */
		json_array_foreach(pg.results, i, r)
			dbuf_addf(&sb, "%s%s", i ? "\n" : "",
			    json_string_value(json_object_get(r, "body")));
		if (sb.err) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		if ((rc = tool_result_text(out, dbuf_str(&sb), sb.len)) != 0)
			goto out;
	}
	json_array_foreach(pg.results, i, r)
		if ((rc = tool_result_json(out, json_incref(r))) != 0)
			goto out;
	rc = 0;
out:
	ddg_page_release(&pg);
	dbuf_free(&sb);
	free(b1);
	return rc;
}

/* ====== Provider ====== */

static const struct tool_param search_params[] = {
	{ "query", "string", 1, "Key words for searching" },
	{ "max_results", "number", 0, "The maximum number of results to "
	    "return (default 5)" },
	{ "require_summary", "boolean", 0, "Whether to pass the search "
	    "results to llm for summarization (flowcgi: the snippets as "
	    "text)" },
	{ NULL, NULL, 0, NULL },
};

static const struct tool_def defs[] = {
	{ "ddgo_search", "Perform searches on DuckDuckGo and get results.",
	    search_params },
	{ NULL, NULL, NULL },
};

/* Tools of Dify's provider that flowcgi does not serve, and why. */
static const struct { const char *tool, *why; } unsupported[] = {
	{ "ddgo_translate", "DuckDuckGo's HTML endpoint does not translate, "
	    "and Dify's own plugin cannot either: duckduckgo_search dropped "
	    "translate() in 7.0.0 and the plugin requires 7.5" },
	{ "ddgo_img", "DuckDuckGo's HTML endpoint has no image search; Dify "
	    "reaches it through an undocumented duckduckgo.com API behind a "
	    "scraped token" },
	{ "ddgo_news", "DuckDuckGo's HTML endpoint has no news search; Dify "
	    "reaches it through an undocumented duckduckgo.com API behind a "
	    "scraped token" },
	{ "ddgo_video", "DuckDuckGo's HTML endpoint has no video search; "
	    "Dify reaches it through an undocumented duckduckgo.com API "
	    "behind a scraped token" },
	{ "ddgo_ai", "DuckDuckGo AI Chat has no endpoint meant for other "
	    "programs; use an LLM node" },
	{ NULL, NULL },
};

static int
ddg_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	*out = tool_defs_json(defs);
	return *out ? 0 : ENGINE_ENOMEM;
}

static int
ddg_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	size_t	i;

	if (strcmp(call->tool, "ddgo_search") == 0)
		return ddg_search(e, call, err, out);
	for (i = 0; unsupported[i].tool != NULL; i++)
		if (strcmp(call->tool, unsupported[i].tool) == 0) {
			engine_invalid(err, "duckduckgo: %s is not supported "
			    "in flowcgi: %s", call->tool, unsupported[i].why);
			return ENGINE_ENOTFOUND;
		}
	engine_invalid(err, "tool '%s/%s' is not available in flowcgi",
	    call->provider, call->tool);
	return ENGINE_ENOTFOUND;
}

const struct tool_provider tool_provider_duckduckgo = {
	"duckduckgo", ddg_list, ddg_invoke, 1,
};
