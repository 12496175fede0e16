/*
 * t_tools_duckduckgo.c — the duckduckgo provider against the loopback
 * fake (tests/fakes/fake_feeds.py, pages of DuckDuckGo's HTML endpoint's
 * shape): the form posted, results as Dify's json messages (ads and
 * repeated links skipped, /l/?uddg= links unwrapped, snippets as text),
 * the next page followed while results are short, require_summary
 * without a model, rate limiting and failures as errors, and the tools
 * flowcgi does not serve failing with a message that says why.
 */
#include "engine/tools/duckduckgo.c"

#include "tap.h"
#include "t_node_run.h"
#include "t_tools_fake.h"

static json_t	*cred;

static int
ddg(const char *provider, const char *tool, json_t *params,
    struct tool_result *r, char *err)
{
	struct tool_call	call;
	int			rc;

	memset(&call, 0, sizeof(call));
	memset(r, 0, sizeof(*r));
	call.provider = provider;
	call.provider_type = "builtin";
	call.tool = tool;
	call.params = params ? params : json_object();
	call.credentials = cred;
	err[0] = '\0';
	rc = tool_invoke(tn_engine, &call, err, r);
	json_decref((json_t *)call.params);
	return rc;
}

static const char *
res_str(const struct tool_result *r, size_t i, const char *key)
{
	const char *s = json_string_value(json_object_get(json_array_get(
	    r->json, i), key));

	return s ? s : "(none)";
}

static void
test_search(void)
{
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX];
	json_t			*seen, *first;
	const char		*body;

	json_decref(fake_requests(1));
	CHECK(ddg("duckduckgo", "ddgo_search", json_pack("{s:s,s:i,s:b}",
	    "query", "python", "max_results", 3, "require_summary", 0), &r,
	    err) == 0);
	seen = fake_requests(0);
	CHECK_INT(json_array_size(seen), 1);
	first = json_array_get(seen, 0);
	CHECK_STR(json_string_value(json_object_get(first, "method")), "POST");
	CHECK_STR(json_string_value(json_object_get(first, "path")), "/html/");
	body = json_string_value(json_object_get(first, "body"));
	CHECK(body != NULL && strstr(body, "q=python") != NULL &&
	    strstr(body, "kl=wt-wt") != NULL);
	CHECK_STR(json_string_value(json_object_get(json_object_get(first,
	    "headers"), "content-type")), "application/x-www-form-urlencoded");
	json_decref(seen);
	CHECK_STR(res_text(&r), "");
	CHECK_INT(json_array_size(r.json), 3);
	CHECK_STR(res_str(&r, 0, "title"), "Welcome to Python.org");
	CHECK_STR(res_str(&r, 0, "href"), "https://www.python.org/");
	CHECK_STR(res_str(&r, 0, "body"), "The official home of the Python "
	    "Programming Language.");
	CHECK_STR(res_str(&r, 1, "href"), "https://en.wikipedia.org/wiki/"
	    "Python_(programming_language)?a=1&b=2");
	CHECK_STR(res_str(&r, 1, "body"), "Python is a high-level, "
	    "general-purpose programming language & more.");
	/* the repeated python.org link is skipped; a direct link kept */
	CHECK_STR(res_str(&r, 2, "href"), "https://docs.python.org/3/"
	    "tutorial/");
	CHECK_STR(res_str(&r, 2, "body"), "Python 教程 — an easy to learn "
	    "language.");
	CHECK_INT(json_object_size(json_array_get(r.json, 0)), 3);
	tool_result_release(&r);

	/* more than a page holds: the Next form is posted */
	json_decref(fake_requests(1));
	CHECK(ddg("langgenius/duckduckgo/duckduckgo", "ddgo_search",
	    json_pack("{s:s,s:s}", "query", "python", "max_results", "10"),
	    &r, err) == 0);
	seen = fake_requests(0);
	CHECK_INT(json_array_size(seen), 2);
	body = json_string_value(json_object_get(json_array_get(seen, 1),
	    "body"));
	CHECK(body != NULL && strstr(body, "s=10") != NULL &&
	    strstr(body, "vqd=4-123456789") != NULL);
	json_decref(seen);
	CHECK_INT(json_array_size(r.json), 5);
	CHECK_STR(res_str(&r, 3, "href"), "https://pypi.org/");
	CHECK_STR(res_str(&r, 4, "title"), "Real Python");
	tool_result_release(&r);

	/* require_summary: no model, the snippets as the text */
	CHECK(ddg("duckduckgo", "ddgo_search", json_pack("{s:s,s:i,s:i}",
	    "query", "python", "max_results", 2, "require_summary", 1), &r,
	    err) == 0);
	CHECK_STR(res_text(&r), "The official home of the Python Programming "
	    "Language.\nPython is a high-level, general-purpose programming "
	    "language & more.");
	CHECK_INT(json_array_size(r.json), 2);
	tool_result_release(&r);

	/* nothing found: no message at all, as Dify */
	CHECK(ddg("duckduckgo", "ddgo_search", json_pack("{s:s}", "query",
	    "zzqqxx"), &r, err) == 0);
	CHECK(r.json == NULL);
	CHECK_STR(res_text(&r), "");
	tool_result_release(&r);

	CHECK(ddg("duckduckgo", "ddgo_search", NULL, &r, err) == 0);
	CHECK_STR(res_text(&r), "Please input query");
	tool_result_release(&r);
}

static void
test_errors(void)
{
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX];
	json_t			*saved = cred;

	CHECK(ddg("duckduckgo", "ddgo_search", json_pack("{s:s}", "query",
	    "ratelimit"), &r, err) == ENGINE_EFETCH);
	CHECK_STR(err, "duckduckgo: rate limited (status 202)");
	tool_result_release(&r);
	CHECK(ddg("duckduckgo", "ddgo_search", json_pack("{s:s}", "query",
	    "fail"), &r, err) == ENGINE_EFETCH);
	CHECK_STR(err, "duckduckgo: the server failed with status 500");
	tool_result_release(&r);

	/* a base URL whose /html/ answers 401, 429 */
	cred = json_pack("{s:s}", "base_url", fake_url("/status/401"));
	CHECK(ddg("duckduckgo", "ddgo_search", json_pack("{s:s}", "query",
	    "x"), &r, err) == ENGINE_EFETCH);
	CHECK_STR(err, "duckduckgo: the server answered 401 (unauthorized): "
	    "check the credential base_url");
	tool_result_release(&r);
	json_decref(cred);
	cred = json_pack("{s:s}", "base_url", fake_url("/status/429"));
	CHECK(ddg("duckduckgo", "ddgo_search", json_pack("{s:s}", "query",
	    "x"), &r, err) == ENGINE_EFETCH);
	CHECK_STR(err, "duckduckgo: rate limited (status 429); retry later");
	tool_result_release(&r);
	json_decref(cred);
	cred = saved;

	CHECK(ddg("duckduckgo", "ddgo_translate", json_pack("{s:s,s:s}",
	    "query", "你好", "translate_to", "en"), &r, err) ==
	    ENGINE_ENOTFOUND);
	CHECK(strstr(err, "ddgo_translate is not supported") != NULL &&
	    strstr(err, "dropped translate()") != NULL);
	tool_result_release(&r);
	CHECK(ddg("duckduckgo", "ddgo_img", NULL, &r, err) ==
	    ENGINE_ENOTFOUND);
	CHECK(strstr(err, "ddgo_img is not supported") != NULL);
	tool_result_release(&r);

	/* loopback refused once private addresses are not allowed */
	tn_conf.http_allow_private = 0;
	CHECK(ddg("duckduckgo", "ddgo_search", json_pack("{s:s}", "query",
	    "python"), &r, err) == ENGINE_EFETCH);
	CHECK(strstr(err, "refused") != NULL);
	tool_result_release(&r);
	tn_conf.http_allow_private = 1;
}

static void
test_describe(void)
{
	struct tool_call	 call;
	char			 err[ENGINE_ERRMAX];
	json_t			*d = NULL;

	memset(&call, 0, sizeof(call));
	call.provider = "langgenius/duckduckgo/duckduckgo";
	call.provider_type = "builtin";
	CHECK(tool_describe(tn_engine, &call, err, &d) == 0);
	CHECK_INT(json_array_size(d), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(d, 0),
	    "name")), "ddgo_search");
	json_decref(d);
}

static void
test_parser(void)
{
	struct ddg_page	pg;
	const char	*page = "<div><h2><a href=\"/l/?uddg=https%3A%2F%2Fa."
			    "example%2F%E4%BD%A0\">T</a></h2><a href=\"x\">"
			    "B</a></div><div><h2>no link</h2></div>";

	memset(&pg, 0, sizeof(pg));
	pg.results = json_array();
	pg.seen = json_object();
	pg.max = 10;
	CHECK(ddg_parse(&pg, page, strlen(page)) == 0);
	CHECK_INT(json_array_size(pg.results), 1);
	/* the snippet's link wins, as the library reads ./a/@href */
	CHECK_STR(json_string_value(json_object_get(json_array_get(
	    pg.results, 0), "href")), "x");
	CHECK(pg.next == NULL);
	ddg_page_release(&pg);

	memset(&pg, 0, sizeof(pg));
	pg.results = json_array();
	pg.seen = json_object();
	pg.max = 10;
	page = "<div><h2><a href=\"//duckduckgo.com/l/?rut=1&uddg=https%3A%2F"
	    "%2Fa.example%2F%E4%BD%A0\">T</a></h2></div>";
	CHECK(ddg_parse(&pg, page, strlen(page)) == 0);
	CHECK_STR(json_string_value(json_object_get(json_array_get(
	    pg.results, 0), "href")), "https://a.example/你");
	CHECK_STR(json_string_value(json_object_get(json_array_get(
	    pg.results, 0), "body")), "");
	ddg_page_release(&pg);
}

int
main(void)
{
	tn_open();
	setenv("FLOWCGI_FAKE_MCP", "tests/fakes/fake_feeds.py", 1);
	test_parser();
	test_describe();
	if (!fake_begin()) {
		tn_close();
		return tap_done();
	}
	tn_conf.http_allow_private = 1;
	cred = json_pack("{s:s}", "base_url", fake_url(""));
	test_search();
	test_errors();
	json_decref(cred);
	fake_stop();
	tn_close();
	return tap_done();
}
