/*
 * t_tools_rss.c — the rss and rookie_rss providers against the loopback
 * fake (tests/fakes/fake_feeds.py): RSS 2.0, RSS 1.0 and Atom read into
 * Dify's text and json messages (HTML stripped, namespaced fields, Atom
 * links and authors), entities never expanded, the item cap, errors
 * (401, 429, 5xx, a timeout, no XML, no feed) with clear messages, and
 * the rookie_rss plugin's DailyHotApi request and json message.
 */
#include "engine/tools/rss.c"

#include "tap.h"
#include "t_node_run.h"
#include "t_tools_fake.h"

static int
fetch(const char *path, json_t *extra, struct tool_result *r, char *err)
{
	json_t *p = json_pack("{s:s}", "url", fake_url(path));

	if (extra != NULL) {
		json_object_update(p, extra);
		json_decref(extra);
	}
	return tool_call_simple("rss", "builtin", "rss_fetch", p, r, err);
}

/* The json message of a fetch (borrowed from r). */
static const json_t *
feed_of(const struct tool_result *r)
{
	return json_array_get(r->json, 0);
}

static const char *
item_str(const struct tool_result *r, size_t i, const char *key)
{
	const char *s = json_string_value(json_object_get(json_array_get(
	    json_object_get(feed_of(r), "items"), i), key));

	return s ? s : "(none)";
}

static void
test_rss2(void)
{
	struct tool_result	r;
	char			err[ENGINE_ERRMAX];

	CHECK(fetch("/feed/rss2.xml", NULL, &r, err) == 0);
	CHECK_STR(json_string_value(json_object_get(feed_of(&r), "format")),
	    "rss2.0");
	CHECK_STR(json_string_value(json_object_get(feed_of(&r), "title")),
	    "Example & Co News");
	CHECK_INT(json_array_size(json_object_get(feed_of(&r), "items")), 3);
	CHECK_STR(item_str(&r, 0, "title"), "First post");
	CHECK_STR(item_str(&r, 0, "link"), "https://news.example.com/1");
	CHECK_STR(item_str(&r, 0, "published"),
	    "Tue, 01 Dec 2026 08:30:00 +0000");
	CHECK_STR(item_str(&r, 0, "author"), "editor@example.com (Ed Itor)");
	/* markup stripped, script dropped, &nbsp; a no-break space */
	CHECK_STR(item_str(&r, 0, "summary"), "Hello world\xc2\xa0" "and more");
	CHECK_STR(item_str(&r, 1, "title"), "Second post");
	CHECK_STR(item_str(&r, 1, "published"), "2026-12-02T10:00:00Z");
	CHECK_STR(item_str(&r, 1, "author"), "Ada Lovelace");
	CHECK_STR(item_str(&r, 1, "summary"), "Full content here");
	CHECK_STR(item_str(&r, 2, "title"), "数据 第三");
	CHECK_STR(item_str(&r, 2, "author"), "");
	CHECK(strstr(res_text(&r), "Example & Co News\n"
	    "https://news.example.com/\n3 items\n\n1. First post\n"
	    "Link: https://news.example.com/1\n"
	    "Published: Tue, 01 Dec 2026 08:30:00 +0000\n"
	    "Author: editor@example.com (Ed Itor)\n") == res_text(&r));
	tool_result_release(&r);

	/* max_items cuts the list */
	CHECK(fetch("/feed/rss2.xml", json_pack("{s:s}", "max_items", "1"),
	    &r, err) == 0);
	CHECK_INT(json_array_size(json_object_get(feed_of(&r), "items")), 1);
	tool_result_release(&r);
	/* and is held to RSS_MAX_ITEMS */
	CHECK(fetch("/feed/many", json_pack("{s:i}", "max_items", 1000), &r,
	    err) == 0);
	CHECK_INT(json_array_size(json_object_get(feed_of(&r), "items")),
	    RSS_MAX_ITEMS);
	tool_result_release(&r);
	CHECK(fetch("/feed/many", NULL, &r, err) == 0);
	CHECK_INT(json_array_size(json_object_get(feed_of(&r), "items")),
	    RSS_DEFAULT_ITEMS);
	tool_result_release(&r);
}

static void
test_rss1_atom(void)
{
	struct tool_result	r;
	char			err[ENGINE_ERRMAX];

	CHECK(fetch("/feed/rss1.xml", NULL, &r, err) == 0);
	CHECK_STR(json_string_value(json_object_get(feed_of(&r), "format")),
	    "rss1.0");
	CHECK_STR(json_string_value(json_object_get(feed_of(&r), "title")),
	    "RDF Site");
	CHECK_INT(json_array_size(json_object_get(feed_of(&r), "items")), 2);
	CHECK_STR(item_str(&r, 0, "link"), "https://rdf.example.org/a");
	CHECK_STR(item_str(&r, 0, "published"), "2026-11-30T12:00:00+08:00");
	CHECK_STR(item_str(&r, 0, "author"), "Grace Hopper");
	CHECK_STR(item_str(&r, 0, "summary"), "About A");
	tool_result_release(&r);

	CHECK(fetch("/feed/atom.xml", NULL, &r, err) == 0);
	CHECK_STR(json_string_value(json_object_get(feed_of(&r), "format")),
	    "atom");
	CHECK_STR(json_string_value(json_object_get(feed_of(&r), "link")),
	    "https://blog.example.net/");
	CHECK_STR(json_string_value(json_object_get(feed_of(&r),
	    "description")), "Notes and more");
	CHECK_STR(item_str(&r, 0, "title"), "A bold entry");
	CHECK_STR(item_str(&r, 0, "link"), "https://blog.example.net/1");
	CHECK_STR(item_str(&r, 0, "published"), "2026-12-01T09:00:00Z");
	CHECK_STR(item_str(&r, 0, "author"), "Linus");
	CHECK_STR(item_str(&r, 0, "summary"), "Short & sweet");
	CHECK_STR(item_str(&r, 1, "link"), "https://blog.example.net/2");
	CHECK_STR(item_str(&r, 1, "published"), "2026-12-02T11:00:00Z");
	CHECK_STR(item_str(&r, 1, "summary"), "XHTML body");
	tool_result_release(&r);

	/* entities are neither loaded nor expanded */
	CHECK(fetch("/feed/xxe.xml", NULL, &r, err) == 0);
	CHECK_STR(json_string_value(json_object_get(feed_of(&r), "title")),
	    "XXE test");
	CHECK_STR(item_str(&r, 0, "title"), "T end");
	tool_result_release(&r);
}

static void
test_errors(void)
{
	struct tool_result	r;
	char			err[ENGINE_ERRMAX];

	CHECK(fetch("/feed/notxml", NULL, &r, err) == 0);
	CHECK_STR(res_text(&r), "The URL did not return a feed: the answer "
	    "is not well-formed XML.");
	CHECK(r.json == NULL);
	tool_result_release(&r);
	CHECK(fetch("/feed/html", NULL, &r, err) == 0);
	CHECK_STR(res_text(&r), "The URL did not return a feed: the XML is "
	    "not an RSS or Atom feed (root element <html>).");
	tool_result_release(&r);
	CHECK(fetch("/feed/missing.xml", NULL, &r, err) == 0);
	CHECK_STR(res_text(&r), "Feed URL returned status code 404.");
	tool_result_release(&r);

	CHECK(fetch("/status/401", NULL, &r, err) == ENGINE_EFETCH);
	CHECK_STR(err, "rss: the server answered 401 (unauthorized)");
	tool_result_release(&r);
	CHECK(fetch("/status/429", NULL, &r, err) == ENGINE_EFETCH);
	CHECK_STR(err, "rss: the server answered 429 (too many requests); "
	    "retry after 7 s");
	tool_result_release(&r);
	CHECK(fetch("/status/503", NULL, &r, err) == ENGINE_EFETCH);
	CHECK_STR(err, "rss: the server failed with status 503");
	tool_result_release(&r);

	tn_conf.http_timeout = 1;
	CHECK(fetch("/slow", NULL, &r, err) == ENGINE_EFETCH);
	CHECK(strncmp(err, "rss: ", 5) == 0 && strstr(err, "/slow") != NULL);
	tool_result_release(&r);
	tn_conf.http_timeout = 30;

	CHECK(tool_call_simple("rss", "builtin", "rss_fetch", NULL, &r, err) ==
	    0);
	CHECK_STR(res_text(&r), "Please input url");
	tool_result_release(&r);
	CHECK(tool_call_simple("rss", "builtin", "nope", NULL, &r, err) ==
	    ENGINE_ENOTFOUND);
	tool_result_release(&r);
}

static int
rookie(json_t *params, json_t *cred, struct tool_result *r, char *err)
{
	struct tool_call	call;
	int			rc;

	memset(&call, 0, sizeof(call));
	memset(r, 0, sizeof(*r));
	call.provider = "jaguarliuu/rookie_rss/rookie_rss";
	call.provider_type = "plugin";
	call.tool = "rookie_rss";
	call.params = params;
	call.credentials = cred;
	err[0] = '\0';
	rc = tool_invoke(tn_engine, &call, err, r);
	json_decref(params);
	return rc;
}

static void
test_rookie(void)
{
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX];
	json_t			*cred, *seen, *last, *m, *a;

	cred = json_pack("{s:s}", "daily_hot_url", fake_url("/"));
	json_decref(fake_requests(1));
	CHECK(rookie(json_pack("{s:s,s:i}", "platform", "知乎", "result_num",
	    3), cred, &r, err) == 0);
	seen = fake_requests(0);
	last = json_array_get(seen, json_array_size(seen) - 1);
	CHECK_STR(json_string_value(json_object_get(last, "path")),
	    "/zhihu?limit=3");
	CHECK_STR(json_string_value(json_object_get(json_object_get(last,
	    "headers"), "user-agent")), "Dify-RookieRssTool/1.0");
	json_decref(seen);
	CHECK_STR(res_text(&r), "");
	CHECK_INT(json_array_size(r.json), 1);
	m = json_array_get(r.json, 0);
	CHECK_STR(json_string_value(json_object_get(m, "status")), "success");
	CHECK_INT(json_integer_value(json_object_get(m, "code")), 200);
	CHECK_INT(json_array_size(json_object_get(m, "articles")), 3);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(m,
	    "pagination"), "total")), 50);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(m,
	    "pagination"), "returned")), 3);
	a = json_array_get(json_object_get(m, "articles"), 0);
	CHECK_INT(json_integer_value(json_object_get(a, "rank")), 1);
	CHECK_INT(json_integer_value(json_object_get(a, "id")), 1000);
	CHECK_STR(json_string_value(json_object_get(a, "title")),
	    "zhihu hot 1");
	CHECK_STR(json_string_value(json_object_get(a, "author")), "作者");
	CHECK_INT(json_integer_value(json_object_get(a, "hot_score")), 5000);
	CHECK_STR(json_string_value(json_object_get(json_object_get(a,
	    "links"), "mobile")), "https://m.zhihu.example/p/0");
	CHECK_STR(json_string_value(json_object_get(json_object_get(a,
	    "metadata"), "list_type")), "热榜");
	CHECK_STR(json_string_value(json_object_get(json_object_get(a,
	    "metadata"), "update_time")), "2026-12-03T01:02:03.000Z");
	/* a missing author is null, as dict.get gives it */
	CHECK(json_is_null(json_object_get(json_array_get(json_object_get(m,
	    "articles"), 1), "author")));
	tool_result_release(&r);

	/* ASCII names lower-cased; a string number of results */
	json_decref(fake_requests(1));
	CHECK(rookie(json_pack("{s:s,s:s}", "platform", "JueJin",
	    "result_num", "2"), cred, &r, err) == 0);
	seen = fake_requests(0);
	CHECK_STR(json_string_value(json_object_get(json_array_get(seen, 0),
	    "path")), "/juejin?limit=2");
	json_decref(seen);
	tool_result_release(&r);

	CHECK(rookie(json_pack("{s:s,s:i}", "platform", "未知平台",
	    "result_num", 2), cred, &r, err) == 0);
	CHECK(strncmp(res_text(&r), "Unknown platform '未知平台'", 28) == 0);
	tool_result_release(&r);
	CHECK(rookie(json_pack("{s:s,s:i}", "platform", "unknown",
	    "result_num", 2), cred, &r, err) == 0);
	CHECK(strncmp(res_text(&r), "API request failed: 404", 23) == 0);
	tool_result_release(&r);
	json_decref(cred);

	/* 401 names the credential to check */
	cred = json_pack("{s:s}", "daily_hot_url", fake_url("/status/401"));
	CHECK(rookie(json_pack("{s:s,s:i}", "platform", "status/401",
	    "result_num", 1), cred, &r, err) == ENGINE_EFETCH);
	CHECK_STR(err, "rookie_rss: the server answered 401 (unauthorized): "
	    "check the credential daily_hot_url");
	tool_result_release(&r);
	json_decref(cred);

	/* no credential: the plugin's public default, refused here by the
	 * guard only if it resolves; an http(s) URL is required */
	cred = json_pack("{s:s}", "daily_hot_url", "ftp://example.com/");
	CHECK(rookie(json_pack("{s:s,s:i}", "platform", "zhihu",
	    "result_num", 1), cred, &r, err) == ENGINE_EINVAL);
	CHECK(strstr(err, "daily_hot_url") != NULL);
	tool_result_release(&r);
	json_decref(cred);
}

static void
test_parser(void)
{
	char	 err[ENGINE_ERRMAX];
	json_t	*feed = NULL;

	/* straight into the reader: a field is cut at RSS_MAX_FIELD on a
	 * character boundary */
	{
		size_t	 n = RSS_MAX_FIELD + 100, i;
		char	*doc = malloc(n * 3 + 200), *p = doc;

		p += snprintf(p, 200, "<rss><channel><title>");
		for (i = 0; i < n / 3 + 10; i++)
			p += snprintf(p, 8, "\xe6\x95\xb0");
		snprintf(p, 200, "</title></channel></rss>");
		CHECK(tool_feed_parse(doc, strlen(doc), 10, err, &feed) == 0);
		CHECK(json_string_length(json_object_get(feed, "title")) <=
		    RSS_MAX_FIELD && json_string_length(json_object_get(feed,
		    "title")) >= RSS_MAX_FIELD - 3);
		json_decref(feed);
		free(doc);
	}
	CHECK(tool_feed_parse("<feed/>", 7, 10, err, &feed) == 0);
	CHECK_STR(json_string_value(json_object_get(feed, "format")), "atom");
	json_decref(feed);
	CHECK(tool_feed_parse("<x/>", 4, 10, err, &feed) == ENGINE_EINVAL);
}

int
main(void)
{
	tn_open();
	setenv("FLOWCGI_FAKE_MCP", "tests/fakes/fake_feeds.py", 1);
	test_parser();
	if (!fake_begin()) {
		tn_close();
		return tap_done();
	}
	tn_conf.http_allow_private = 1;
	test_rss2();
	test_rss1_atom();
	test_errors();
	test_rookie();
	fake_stop();
	tn_close();
	return tap_done();
}
