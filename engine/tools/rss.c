/*
 * rss.c — two feed providers.
 *
 * `rss`, tool `rss_fetch` (url, max_items): fetches a feed through
 * outbound_fetch (SSRF guard, redirects followed) and reads RSS 2.0 (and
 * the 0.9x forms), RSS 1.0 (RDF) and Atom 1.0 with libxml2: no network
 * (XML_PARSE_NONET), no DTD loaded, no entity substituted (entity
 * references are dropped, never expanded), at most RSS_MAX_FEED_BYTES of
 * feed, RSS_MAX_ITEMS items and RSS_MAX_FIELD bytes per field. Each item
 * gives title, link, published (the feed's date text as written), author
 * and summary (description, content:encoded, Atom summary or content) as
 * text: HTML markup stripped with libxml2's HTML parser, whitespace
 * collapsed. The answer is a text listing and one json message
 *
 *	{"title", "link", "description", "format": "rss2.0" | "rss1.0" |
 *	 "atom", "items": [{"title", "link", "published", "author",
 *	 "summary"}]}
 *
 * `rookie_rss` serves the Dify plugin jaguarliuu/rookie_rss, tool
 * `rookie_rss` (platform, result_num). Despite its name it reads no feed:
 * it asks a DailyHotApi server (credential daily_hot_url, default
 * https://api-hot.imsyy.top/) for GET /<platform>?limit=<result_num> and
 * answers one json message as the plugin's tools/rookie_rss.py builds it:
 *
 *	{"status": "success", "code", "articles": [{"rank", "id", "title",
 *	 "author", "hot_score", "links": {"pc", "mobile"}, "metadata":
 *	 {"platform", "list_type", "update_time"}}], "pagination": {"total",
 *	 "returned"}}
 *
 * The plugin turns a Chinese platform name into pinyin (pypinyin); here
 * the Chinese labels of its options map to their routes, ASCII names are
 * lower-cased, and any other name answers a text message naming the
 * known platforms.
 *
 * Errors, for both: a transport failure, 401/403, 429 or 5xx is
 * ENGINE_EFETCH with err naming the provider and the status; another
 * non-200 status or an answer that is no feed (no JSON) is a text message,
 * as Dify's tools answer what they could not do.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "engine/tools/tools.h"

/* Limits of the feed reader. */
#define RSS_MAX_FEED_BYTES	(8 * 1024 * 1024)	/* bytes of a feed */
#define RSS_MAX_ITEMS		100	/* items read, and max_items' top */
#define RSS_DEFAULT_ITEMS	10
#define RSS_MAX_FIELD		(64 * 1024)	/* bytes of one field */
#define RSS_MAX_DEPTH		64	/* element nesting walked */
#define RSS_UA			"flowcgi-rss/1.0"

/* rookie_rss */
#define ROOKIE_DEFAULT_URL	"https://api-hot.imsyy.top/"
#define ROOKIE_UA		"Dify-RookieRssTool/1.0"
#define ROOKIE_TIMEOUT		10	/* seconds, as the plugin waits */
#define ROOKIE_MAX_BYTES	(4 * 1024 * 1024)

#define NS_RSS1		"http://purl.org/rss/1.0/"
#define NS_RSS09	"http://my.netscape.com/rdf/simple/0.9/"
#define NS_ATOM		"http://www.w3.org/2005/Atom"
#define NS_DC		"http://purl.org/dc/elements/1.1/"
#define NS_CONTENT	"http://purl.org/rss/1.0/modules/content/"

/* ====== Text ====== */

/* Drops an incomplete UTF-8 sequence at the end of b (after a cut). */
static void
utf8_trim(struct dbuf *b)
{
	size_t	i, need;

	if (b->len == 0)
		return;
	i = b->len;
	while (i > 0 && i > b->len - 4 && ((unsigned char)b->p[i - 1] &
	    0xc0) == 0x80)
		i--;
	if (i == 0)
		return;
	if (((unsigned char)b->p[i - 1] & 0x80) == 0)
		return;
	need = ((unsigned char)b->p[i - 1] & 0xe0) == 0xc0 ? 2 :
	    ((unsigned char)b->p[i - 1] & 0xf0) == 0xe0 ? 3 : 4;
	if (b->len - (i - 1) < need) {
		b->len = i - 1;
		b->p[b->len] = '\0';
	}
}

/* Collapsed text: runs of white space become one space, none at the
 * ends. */
struct ctext {
	struct dbuf	sb;
	int		space;
};

static void
ctext_add(struct ctext *t, const char *s)
{
	for (; *s != '\0' && t->sb.err == 0; s++) {
		if (isspace((unsigned char)*s)) {
			t->space = 1;
			continue;
		}
		if (t->space && t->sb.len > 0)
			dbuf_addc(&t->sb, ' ');
		t->space = 0;
		dbuf_addc(&t->sb, *s);
	}
}

static const char *const html_skip[] = { "script", "style", "noscript",
    "template", "head", "iframe", NULL };
/* Elements that part words (the others are inline). */
static const char *const html_block[] = { "p", "div", "br", "li", "ul",
    "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "td", "th", "table",
    "section", "article", "header", "footer", "blockquote", "pre", "dd",
    "dt", "dl", "hr", "figure", "figcaption", "img", "body", NULL };

static int
in_list(const char *const *list, const xmlNode *n)
{
	size_t	i;

	for (i = 0; list[i] != NULL; i++)
		if (strcasecmp((const char *)n->name, list[i]) == 0)
			return 1;
	return 0;
}

/* The text and CDATA under n (entity references skipped), collapsed. */
static void
ctext_node(struct ctext *t, const xmlNode *n, int depth)
{
	const xmlNode	*c;

	if (depth > RSS_MAX_DEPTH)
		return;
	for (c = n; c != NULL && t->sb.err == 0; c = c->next) {
		if ((c->type == XML_TEXT_NODE || c->type ==
		    XML_CDATA_SECTION_NODE) && c->content != NULL)
			ctext_add(t, (const char *)c->content);
		else if (c->type == XML_ELEMENT_NODE) {
			/* a block element of XHTML content parts words */
			t->space |= in_list(html_block, c);
			ctext_node(t, c->children, depth + 1);
			t->space |= in_list(html_block, c);
		}
	}
}

static void
ctext_html(struct ctext *t, const xmlNode *n, int depth)
{
	const xmlNode	*c;

	if (depth > RSS_MAX_DEPTH)
		return;
	for (c = n; c != NULL && t->sb.err == 0; c = c->next) {
		if ((c->type == XML_TEXT_NODE || c->type ==
		    XML_CDATA_SECTION_NODE) && c->content != NULL) {
			ctext_add(t, (const char *)c->content);
			continue;
		}
		if (c->type != XML_ELEMENT_NODE)
			continue;
		if (in_list(html_skip, c))
			continue;
		t->space |= in_list(html_block, c);
		ctext_html(t, c->children, depth + 1);
		t->space |= in_list(html_block, c);
	}
}

/*
 * s (UTF-8, a field that may hold HTML) as collapsed text into t: markup
 * and the character references of HTML resolved by libxml2's HTML parser
 * when s has any '<' or '&', else s itself.
 */
static void
ctext_strip(struct ctext *t, const char *s)
{
	htmlDocPtr	doc;
	size_t		n = strlen(s);

	if (strpbrk(s, "<&") == NULL || n > RSS_MAX_FIELD * 4) {
		ctext_add(t, s);
		return;
	}
	doc = htmlReadMemory(s, (int)n, NULL, "UTF-8", HTML_PARSE_NONET |
	    HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING);
	if (doc == NULL) {
		ctext_add(t, s);
		return;
	}
	ctext_html(t, doc->children, 0);
	xmlFreeDoc(doc);
}

/* ====== Feed reader ====== */

/* 1 when n is element name in the feed's own namespace (none, RSS 1.0,
 * RSS 0.9 or Atom), or with ns given, in exactly that one. */
static int
is_el(const xmlNode *n, const char *name, const char *ns)
{
	const char	*href;

	if (n == NULL || n->type != XML_ELEMENT_NODE ||
	    strcmp((const char *)n->name, name) != 0)
		return 0;
	href = n->ns != NULL && n->ns->href != NULL ?
	    (const char *)n->ns->href : NULL;
	if (ns != NULL)
		return href != NULL && strcmp(href, ns) == 0;
	return href == NULL || strcmp(href, NS_RSS1) == 0 ||
	    strcmp(href, NS_RSS09) == 0 || strcmp(href, NS_ATOM) == 0;
}

/* The first child of n that is_el(name, ns), or NULL. */
static const xmlNode *
child(const xmlNode *n, const char *name, const char *ns)
{
	const xmlNode	*c;

	for (c = n ? n->children : NULL; c != NULL; c = c->next)
		if (is_el(c, name, ns))
			return c;
	return NULL;
}

/* An attribute's value into buf ("" when absent). */
static const char *
attr(const xmlNode *n, const char *name, char *buf, size_t bufsz)
{
	const xmlAttr	*a;
	const xmlNode	*c;

	buf[0] = '\0';
	for (a = n ? n->properties : NULL; a != NULL; a = a->next)
		if (a->ns == NULL && strcmp((const char *)a->name, name) ==
		    0) {
			for (c = a->children; c != NULL; c = c->next)
				if (c->type == XML_TEXT_NODE && c->content)
					snprintf(buf + strlen(buf), bufsz -
					    strlen(buf), "%s",
					    (const char *)c->content);
			break;
		}
	return buf;
}

/*
 * The text of element n as a new JSON string (html: markup stripped),
 * "" when n is NULL. NULL when out of memory.
 */
static json_t *
field(const xmlNode *n, int html)
{
	struct ctext	 t;
	struct ctext	 raw;
	char		 type[32];
	json_t		*v = NULL;

	memset(&t, 0, sizeof(t));
	memset(&raw, 0, sizeof(raw));
	dbuf_init(&t.sb, RSS_MAX_FIELD);
	dbuf_init(&raw.sb, RSS_MAX_FIELD * 4);
	if (n == NULL)
		goto done;
	attr(n, "type", type, sizeof(type));
	if (strcmp(type, "xhtml") == 0 || !html) {
		/* Atom xhtml content is markup already parsed */
		ctext_node(&t, n->children, 0);
		goto done;
	}
	/* the text as written (HTML escaped or in CDATA), kept raw:
	 * collected without collapsing so that <pre> and markup survive */
	{
		const xmlNode *c;

		for (c = n->children; c != NULL && raw.sb.err == 0;
		    c = c->next)
			if ((c->type == XML_TEXT_NODE || c->type ==
			    XML_CDATA_SECTION_NODE) && c->content != NULL)
				dbuf_addstr(&raw.sb, (const char *)c->content);
	}
	if (raw.sb.err == DBUF_ENOMEM)
		goto out;
	utf8_trim(&raw.sb);
	if (strcmp(type, "text") == 0)
		ctext_add(&t, dbuf_str(&raw.sb));
	else
		ctext_strip(&t, dbuf_str(&raw.sb));
done:
	if (t.sb.err == DBUF_ENOMEM)
		goto out;
	utf8_trim(&t.sb);
	v = json_string(dbuf_str(&t.sb));
	if (v == NULL)	/* not UTF-8 after all: keep nothing rather than fail */
		v = json_string("");
out:
	dbuf_free(&t.sb);
	dbuf_free(&raw.sb);
	return v;
}

/* The first of the named children (ns NULL: the feed's own) present. */
static const xmlNode *
first_of(const xmlNode *n, const char *const *names, const char *const *nss)
{
	const xmlNode	*c;
	size_t		 i;

	for (i = 0; names[i] != NULL; i++)
		if ((c = child(n, names[i], nss[i])) != NULL)
			return c;
	return NULL;
}

/* An Atom element's link: rel alternate (or none), else the first. */
static json_t *
atom_link(const xmlNode *n)
{
	const xmlNode	*c, *first = NULL;
	char		 rel[64], href[2048];

	for (c = n->children; c != NULL; c = c->next) {
		if (!is_el(c, "link", NULL))
			continue;
		if (first == NULL)
			first = c;
		attr(c, "rel", rel, sizeof(rel));
		if (rel[0] == '\0' || strcmp(rel, "alternate") == 0)
			return json_string(attr(c, "href", href,
			    sizeof(href)));
	}
	return json_string(first ? attr(first, "href", href, sizeof(href)) :
	    "");
}

enum feed_format { FEED_RSS2, FEED_RSS1, FEED_ATOM };

/* One item (RSS) or entry (Atom) as {title, link, published, author,
 * summary}. New reference, NULL when out of memory. */
static json_t *
feed_item(const xmlNode *n, enum feed_format fmt)
{
	static const char *const date_n[] = { "pubDate", "date", "published",
	    "updated", "issued", "modified", NULL };
	static const char *const date_ns[] = { NULL, NS_DC, NULL, NULL, NULL,
	    NULL, NULL };
	static const char *const sum_n[] = { "description", "summary",
	    "encoded", "content", NULL };
	static const char *const sum_ns[] = { NULL, NULL, NS_CONTENT, NULL,
	    NULL };
	static const char *const auth_n[] = { "author", "creator", NULL };
	static const char *const auth_ns[] = { NULL, NS_DC, NULL };
	const xmlNode	*a;
	json_t		*o, *link, *author;

	if (fmt == FEED_ATOM)
		link = atom_link(n);
	else
		link = field(child(n, "link", NULL), 0);
	a = first_of(n, auth_n, auth_ns);
	if (fmt == FEED_ATOM && a != NULL && child(a, "name", NULL) != NULL)
		author = field(child(a, "name", NULL), 0);
	else
		author = field(a, 0);
	o = json_pack("{s:o*,s:o*,s:o*,s:o*,s:o*}",
	    "title", field(child(n, "title", NULL), 1),
	    "link", link,
	    "published", field(first_of(n, date_n, date_ns), 0),
	    "author", author,
	    "summary", field(first_of(n, sum_n, sum_ns), 1));
	if (o != NULL && json_object_size(o) != 5) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

/*
 * Reads a feed of len bytes: *out is a new {title, link, description,
 * format, items} with at most max_items items. Returns 0, ENGINE_EINVAL
 * (err says why: not XML, not a feed) or ENGINE_ENOMEM.
 */
int
tool_feed_parse(const char *data, size_t len, size_t max_items, char *err,
    json_t **out)
{
	xmlDocPtr	 doc = NULL;
	const xmlNode	*root, *chan, *c, *items_at;
	enum feed_format fmt;
	json_t		*feed = NULL, *items = NULL, *it;
	const char	*name;
	int		 rc;

	*out = NULL;
	if (len > RSS_MAX_FEED_BYTES) {
		rc = engine_invalid(err, "the feed is larger than %d bytes "
		    "(RSS_MAX_FEED_BYTES)", RSS_MAX_FEED_BYTES);
		goto out;
	}
	xmlInitParser();
	doc = xmlReadMemory(data, (int)len, NULL, NULL, XML_PARSE_NONET |
	    XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (doc == NULL || (root = xmlDocGetRootElement(doc)) == NULL) {
		rc = engine_invalid(err, "the answer is not well-formed XML");
		goto out;
	}
	name = (const char *)root->name;
	if (strcmp(name, "rss") == 0 && root->ns == NULL) {
		fmt = FEED_RSS2;
		chan = child(root, "channel", NULL);
		items_at = chan;
	} else if (strcmp(name, "RDF") == 0) {
		fmt = FEED_RSS1;
		chan = child(root, "channel", NULL);
		items_at = root;
	} else if (is_el(root, "feed", NS_ATOM) || (strcmp(name, "feed") ==
	    0 && root->ns == NULL)) {
		fmt = FEED_ATOM;
		chan = root;
		items_at = root;
	} else {
		rc = engine_invalid(err, "the XML is not an RSS or Atom feed "
		    "(root element <%.64s>)", name);
		goto out;
	}
	if ((items = json_array()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	for (c = items_at ? items_at->children : NULL; c != NULL &&
	    json_array_size(items) < max_items; c = c->next) {
		if (!is_el(c, fmt == FEED_ATOM ? "entry" : "item", NULL))
			continue;
		if ((it = feed_item(c, fmt)) == NULL ||
		    json_array_append_new(items, it) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	}
	feed = json_pack("{s:o*,s:o*,s:o*,s:s,s:O}",
	    "title", field(child(chan, "title", NULL), 1),
	    "link", fmt == FEED_ATOM ? atom_link(chan) :
	    field(child(chan, "link", NULL), 0),
	    "description", field(child(chan, fmt == FEED_ATOM ? "subtitle" :
	    "description", NULL), 1),
	    "format", fmt == FEED_ATOM ? "atom" : fmt == FEED_RSS1 ?
	    "rss1.0" : "rss2.0",
	    "items", items);
	if (feed == NULL || json_object_size(feed) != 5) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	*out = feed;
	feed = NULL;
	rc = 0;
out:
	json_decref(feed);
	json_decref(items);
	if (doc != NULL)
		xmlFreeDoc(doc);
	return rc;
}

/* The text listing of a parsed feed. */
static void
feed_text(const json_t *feed, struct dbuf *sb)
{
	static const char *const keys[] = { "link", "published", "author",
	    NULL };
	static const char *const labels[] = { "Link", "Published", "Author",
	    NULL };
	const json_t	*items = json_object_get(feed, "items"), *it;
	const char	*v;
	size_t		 i, k;

	dbuf_addf(sb, "%s\n", json_string_value(json_object_get(feed,
	    "title")));
	if ((v = json_string_value(json_object_get(feed, "link"))) && *v)
		dbuf_addf(sb, "%s\n", v);
	dbuf_addf(sb, "%zu items\n", json_array_size(items));
	json_array_foreach(items, i, it) {
		dbuf_addf(sb, "\n%zu. %s\n", i + 1, json_string_value(
		    json_object_get(it, "title")));
		for (k = 0; keys[k] != NULL; k++)
			if ((v = json_string_value(json_object_get(it,
			    keys[k]))) != NULL && *v != '\0')
				dbuf_addf(sb, "%s: %s\n", labels[k], v);
		if ((v = json_string_value(json_object_get(it, "summary"))) !=
		    NULL && *v != '\0')
			dbuf_addf(sb, "%s\n", v);
	}
}

/* A text message of string s. */
static int
text_msg(struct tool_result *out, const char *s)
{
	return tool_result_text(out, s, strlen(s));
}

/* ====== Remote errors ====== */

/*
 * The error a remote's status is (provider names who asked; cred the
 * credential to check on 401/403, or NULL): ENGINE_EFETCH with err for
 * 401, 403, 429 and 5xx; 0 for any other status.
 */
static int
remote_status(const char *provider, long status, long retry_after,
    const char *cred, char *err)
{
	if (status == 401 || status == 403) {
		engine_invalid(err, "%s: the server answered %ld (%s)%s%s",
		    provider, status, status == 401 ? "unauthorized" :
		    "forbidden",
		    cred ? ": check the credential " : "", cred ? cred : "");
		return ENGINE_EFETCH;
	}
	if (status == 429) {
		if (retry_after >= 0)
			engine_invalid(err, "%s: the server answered 429 (too "
			    "many requests); retry after %ld s", provider,
			    retry_after);
		else
			engine_invalid(err, "%s: the server answered 429 (too "
			    "many requests)", provider);
		return ENGINE_EFETCH;
	}
	if (status >= 500) {
		engine_invalid(err, "%s: the server failed with status %ld",
		    provider, status);
		return ENGINE_EFETCH;
	}
	return 0;
}

/* err prefixed with "provider: " (a transport failure's message). */
static void
err_prefix(const char *provider, char *err)
{
	char	tmp[ENGINE_ERRMAX];

	snprintf(tmp, sizeof(tmp), "%s", err);
	snprintf(err, ENGINE_ERRMAX, "%.16s: %.230s", provider, tmp);
}

/* ====== rss ====== */

static const struct tool_param rss_params[] = {
	{ "url", "string", 1, "URL of the RSS or Atom feed" },
	{ "max_items", "number", 0, "Most items to return (default 10, at "
	    "most 100)" },
	{ NULL, NULL, 0, NULL },
};

static const struct tool_def rss_defs[] = {
	{ "rss_fetch", "Reads an RSS or Atom feed: each item's title, link, "
	    "date, author and summary.", rss_params },
	{ NULL, NULL, NULL },
};

static int
rss_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	*out = tool_defs_json(rss_defs);
	return *out ? 0 : ENGINE_ENOMEM;
}

static int
rss_fetch(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	struct outbound_req	 req;
	struct outbound_resp	 resp;
	struct curl_slist	*hl = NULL;
	struct dbuf		 sb = { 0 };
	json_t			*feed = NULL;
	const char		*url;
	char			*b1 = NULL, msg[ENGINE_ERRMAX + 64];
	char			 perr[ENGINE_ERRMAX];
	int64_t			 max = RSS_DEFAULT_ITEMS;
	int			 rc;

	memset(&resp, 0, sizeof(resp));
	url = tool_param_str(call->params, "url", &b1);
	if (url == NULL || *url == '\0') {
		rc = text_msg(out, "Please input url");
		goto out;
	}
	if (tool_param_int(call->params, "max_items", &max) < 0 || max < 1) {
		rc = text_msg(out, "max_items must be a positive "
		    "number");
		goto out;
	}
	if (max > RSS_MAX_ITEMS)
		max = RSS_MAX_ITEMS;
	if ((hl = curl_slist_append(NULL, "User-Agent: " RSS_UA)) == NULL ||
	    curl_slist_append(hl, "Accept: application/rss+xml, "
	    "application/atom+xml, application/xml;q=0.9, */*;q=0.8") ==
	    NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.url = url;
	req.headers = hl;
	req.follow = 1;
	req.max_bytes = RSS_MAX_FEED_BYTES;
	if ((rc = outbound_fetch(e, &req, err, &resp)) != 0) {
		err_prefix("rss", err);
		goto out;
	}
	if ((rc = remote_status("rss", resp.status, resp.retry_after, NULL,
	    err)) != 0)
		goto out;
	if (resp.status != 200) {
		snprintf(msg, sizeof(msg), "Feed URL returned status code %ld.",
		    resp.status);
		rc = text_msg(out, msg);
		goto out;
	}
	rc = tool_feed_parse(resp.body, resp.len, (size_t)max, perr, &feed);
	if (rc == ENGINE_EINVAL) {
		snprintf(msg, sizeof(msg), "The URL did not return a feed: %s.",
		    perr);
		rc = text_msg(out, msg);
		goto out;
	}
	if (rc != 0)
		goto out;
	feed_text(feed, &sb);
	if (sb.err) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = tool_result_text(out, sb.p, sb.len)) != 0)
		goto out;
	rc = tool_result_json(out, feed);
	feed = NULL;
out:
	outbound_resp_release(&resp);
	curl_slist_free_all(hl);
	json_decref(feed);
	dbuf_free(&sb);
	free(b1);
	return rc;
}

static int
rss_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	if (strcmp(call->tool, "rss_fetch") != 0) {
		engine_invalid(err, "tool '%s/%s' is not available in "
		    "flowcgi", call->provider, call->tool);
		return ENGINE_ENOTFOUND;
	}
	return rss_fetch(e, call, err, out);
}

const struct tool_provider tool_provider_rss = {
	"rss", rss_list, rss_invoke, 1,
};

/* ====== rookie_rss (DailyHotApi) ====== */

/* The plugin's options by their Chinese labels, as pypinyin reads them
 * (今日头条 gives "jinritoutiao", which is what the plugin asks for). */
static const struct { const char *zh, *route; } rookie_zh[] = {
	{ "知乎", "zhihu" },
	{ "掘金", "juejin" },
	{ "微博", "weibo" },
	{ "今日头条", "jinritoutiao" },
	{ "头条", "toutiao" },
	{ "虎嗅", "huxiu" },
	{ "哔哩哔哩", "bilibili" },
	{ "百度", "baidu" },
	{ "抖音", "douyin" },
	{ "快手", "kuaishou" },
	{ "豆瓣", "douban" },
	{ "少数派", "shaoshupai" },
	{ "贴吧", "tieba" },
	{ "网易新闻", "wangyixinwen" },
	{ NULL, NULL },
};

/*
 * The route of a platform name into buf: Chinese labels by the table,
 * ASCII lower-cased with leading and trailing '/' dropped. 0, or -1 when
 * the name cannot be mapped.
 */
static int
rookie_route(const char *platform, char *buf, size_t bufsz)
{
	size_t	i, n, j = 0;

	while (*platform == ' ')
		platform++;
	for (i = 0; rookie_zh[i].zh != NULL; i++)
		if (strcmp(platform, rookie_zh[i].zh) == 0) {
			snprintf(buf, bufsz, "%s", rookie_zh[i].route);
			return 0;
		}
	while (*platform == '/')
		platform++;
	n = strlen(platform);
	while (n > 0 && (platform[n - 1] == '/' || platform[n - 1] == ' '))
		n--;
	if (n == 0 || n >= bufsz)
		return -1;
	for (i = 0; i < n; i++) {
		if ((unsigned char)platform[i] >= 0x80 ||
		    iscntrl((unsigned char)platform[i]))
			return -1;
		buf[j++] = (char)tolower((unsigned char)platform[i]);
	}
	buf[j] = '\0';
	return 0;
}

/*
 * Python's urljoin(base, "/" + route): the origin of base (scheme and
 * authority) followed by "/" and route, percent-encoded where a URL
 * cannot hold a byte. *out malloc'd. 0, -1 when base is no http(s) URL,
 * ENGINE_ENOMEM.
 */
static int
rookie_url(const char *base, const char *route, int64_t limit, char **out)
{
	struct dbuf	 sb = { 0 };
	const char	*p, *auth;
	size_t		 n;

	*out = NULL;
	if (strncasecmp(base, "http://", 7) != 0 &&
	    strncasecmp(base, "https://", 8) != 0)
		return -1;
	auth = strstr(base, "://") + 3;
	n = strcspn(auth, "/?#");
	if (n == 0)
		return -1;
	dbuf_add(&sb, base, (size_t)(auth - base) + n);
	dbuf_addc(&sb, '/');
	for (p = route; *p != '\0'; p++) {
		if (isalnum((unsigned char)*p) || strchr("-._~/", *p) != NULL)
			dbuf_addc(&sb, *p);
		else
			dbuf_addf(&sb, "%%%02X", (unsigned char)*p);
	}
	dbuf_addf(&sb, "?limit=%lld", (long long)limit);
	if (sb.err || (*out = dbuf_take(&sb, NULL)) == NULL) {
		dbuf_free(&sb);
		return ENGINE_ENOMEM;
	}
	return 0;
}

/* v[key] as Python's dict.get gives it: a new reference, null when
 * absent. */
static json_t *
pyget(const json_t *v, const char *key)
{
	json_t	*x = json_object_get(v, key);

	return x ? json_incref(x) : json_null();
}

/* The plugin's message from the API's answer. New reference or NULL. */
static json_t *
rookie_message(const json_t *data)
{
	const json_t	*list = json_object_get(data, "data"), *it;
	json_t		*arts, *a, *m, *code, *total;
	size_t		 i;

	if ((arts = json_array()) == NULL)
		return NULL;
	json_array_foreach(json_is_array(list) ? list : NULL, i, it) {
		a = json_pack("{s:I,s:o,s:o,s:o,s:o,s:{s:o,s:o},s:{s:o,s:o,"
		    "s:o}}", "rank", (json_int_t)(i + 1),
		    "id", pyget(it, "id"),
		    "title", pyget(it, "title"),
		    "author", pyget(it, "author"),
		    "hot_score", pyget(it, "hot"),
		    "links", "pc", pyget(it, "url"), "mobile", pyget(it,
		    "mobileUrl"),
		    "metadata", "platform", pyget(data, "name"),
		    "list_type", pyget(data, "type"),
		    "update_time", pyget(data, "updateTime"));
		if (a == NULL || json_array_append_new(arts, a) != 0) {
			json_decref(arts);
			return NULL;
		}
	}
	code = json_object_get(data, "code");
	total = json_object_get(data, "total");
	m = json_pack("{s:s,s:o,s:o,s:{s:o,s:I}}", "status", "success",
	    "code", code ? json_incref(code) : json_integer(200),
	    "articles", arts,
	    "pagination", "total", total ? json_incref(total) :
	    json_integer(0), "returned", (json_int_t)(json_is_array(list) ?
	    json_array_size(list) : 0));
	return m;
}

static const struct tool_param rookie_params[] = {
	{ "platform", "string", 1, "Platform name: zhihu, juejin, bilibili, "
	    "acfun, weibo, toutiao, 36kr, huxiu, hellogithub" },
	{ "result_num", "number", 1, "Number of results (1 to 100)" },
	{ NULL, NULL, 0, NULL },
};

static const struct tool_def rookie_defs[] = {
	{ "rookie_rss", "rookie rss 多平台新闻聚合插件: the hot list of a "
	    "platform.", rookie_params },
	{ NULL, NULL, NULL },
};

static int
rookie_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	*out = tool_defs_json(rookie_defs);
	return *out ? 0 : ENGINE_ENOMEM;
}

static int
rookie_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	struct outbound_req	 req;
	struct outbound_resp	 resp;
	struct curl_slist	*hl = NULL;
	json_t			*data = NULL, *msg_json;
	const char		*platform, *base;
	char			*b1 = NULL, *url = NULL, route[128];
	char			 msg[512];
	int64_t			 num = 10;
	int			 rc;

	memset(&resp, 0, sizeof(resp));
	if (strcmp(call->tool, "rookie_rss") != 0) {
		rc = ENGINE_ENOTFOUND;
		engine_invalid(err, "tool '%s/%s' is not available in "
		    "flowcgi", call->provider, call->tool);
		goto out;
	}
	platform = tool_param_str(call->params, "platform", &b1);
	if (platform == NULL || *platform == '\0') {
		rc = text_msg(out, "Missing required parameter: "
		    "platform");
		goto out;
	}
	if (tool_param_int(call->params, "result_num", &num) < 0) {
		rc = text_msg(out, "Invalid parameter value: "
		    "result_num must be a number");
		goto out;
	}
	if (rookie_route(platform, route, sizeof(route)) != 0) {
		snprintf(msg, sizeof(msg), "Unknown platform '%.200s': use "
		    "one of zhihu, juejin, bilibili, acfun, weibo, toutiao, "
		    "36kr, huxiu, hellogithub", platform);
		rc = text_msg(out, msg);
		goto out;
	}
	base = json_string_value(json_object_get(call->credentials,
	    "daily_hot_url"));
	if (base == NULL || *base == '\0')
		base = json_string_value(json_object_get(call->credentials,
		    "base_url"));
	if (base == NULL || *base == '\0')
		base = ROOKIE_DEFAULT_URL;
	if ((rc = rookie_url(base, route, num, &url)) != 0) {
		if (rc == -1)
			rc = engine_invalid(err, "rookie_rss: the credential "
			    "daily_hot_url is not an http(s) URL");
		goto out;
	}
	if ((hl = curl_slist_append(NULL, "User-Agent: " ROOKIE_UA)) ==
	    NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.url = url;
	req.headers = hl;
	req.follow = 1;
	req.timeout = ROOKIE_TIMEOUT;
	req.max_bytes = ROOKIE_MAX_BYTES;
	if ((rc = outbound_fetch(e, &req, err, &resp)) != 0) {
		err_prefix("rookie_rss", err);
		goto out;
	}
	if ((rc = remote_status("rookie_rss", resp.status, resp.retry_after,
	    "daily_hot_url", err)) != 0)
		goto out;
	if (resp.status < 200 || resp.status >= 300) {
		snprintf(msg, sizeof(msg), "API request failed: %ld for url: "
		    "%.300s", resp.status, url);
		rc = text_msg(out, msg);
		goto out;
	}
	data = json_loadb(resp.body, resp.len, 0, NULL);
	if (!json_is_object(data)) {
		rc = text_msg(out, "API request failed: the answer "
		    "is not a JSON object");
		goto out;
	}
	if ((msg_json = rookie_message(data)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	rc = tool_result_json(out, msg_json);
out:
	outbound_resp_release(&resp);
	curl_slist_free_all(hl);
	json_decref(data);
	free(url);
	free(b1);
	return rc;
}

const struct tool_provider tool_provider_rookie_rss = {
	"rookie_rss", rookie_list, rookie_invoke, 1,
};
