/*
 * t_tools_webscraper.c — the webscraper tool against the loopback fake
 * (tests/fakes/fake_mcp.py): readable text from HTML in Dify's template
 * (script, style, nav and noscript skipped, whitespace collapsed, blocks
 * on their own lines), plain text as is, unsupported types and error
 * statuses as Dify words them, the User-Agent sent, and the SSRF guard
 * refusing loopback when http.allow_private is off.
 */
#include "tap.h"
#include "t_node_run.h"
#include "t_tools_fake.h"

static int
scrape(json_t *params, struct tool_result *r, char *err)
{
	return tool_call_simple("webscraper", "builtin", "webscraper", params,
	    r, err);
}

static const char *
scrape_text(const char *path)
{
	static char		 buf[4][1024];
	static int		 i;
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX];

	i = (i + 1) % 4;
	if (scrape(json_pack("{s:s}", "url", fake_url(path)), &r, err) == 0)
		snprintf(buf[i], sizeof(buf[i]), "%s", res_text(&r));
	else
		snprintf(buf[i], sizeof(buf[i]), "(failed: %.200s)", err);
	tool_result_release(&r);
	return buf[i];
}

int
main(void)
{
	struct tool_result	 r;
	json_t			*seen, *last;
	char			 err[ENGINE_ERRMAX];

	tn_open();
	if (!fake_begin()) {
		tn_close();
		return tap_done();
	}
	tn_conf.http_allow_private = 1;
	CHECK_STR(scrape_text("/page"), "\nTITLE: Test Page\nAUTHOR: Ada "
	    "Lovelace\nTEXT:\n\nMain heading\nFirst paragraph with bold text."
	    "\nSecond paragraph.\none\ntwo\n");
	CHECK_STR(scrape_text("/page.txt"), "just text\n");
	CHECK_STR(scrape_text("/page.pdf"),
	    "Unsupported content-type [application/pdf] of URL.");
	CHECK_STR(scrape_text("/missing"), "URL returned status code 404.");
	CHECK_STR(scrape_text("/empty.html"), "");

	/* the user agent of the configuration goes out */
	json_decref(fake_requests(1));
	CHECK(scrape(json_pack("{s:s,s:s,s:n}", "url", fake_url("/page"),
	    "user_agent", "flowcgi-test/1", "generate_summary"), &r, err) ==
	    0);
	tool_result_release(&r);
	seen = fake_requests(0);
	last = json_array_get(seen, json_array_size(seen) - 1);
	CHECK_STR(json_string_value(json_object_get(json_object_get(last,
	    "headers"), "user-agent")), "flowcgi-test/1");
	json_decref(seen);

	CHECK(scrape(json_object(), &r, err) == 0);
	CHECK_STR(res_text(&r), "Please input url");
	tool_result_release(&r);

	/* loopback is refused once private addresses are not allowed */
	tn_conf.http_allow_private = 0;
	CHECK(scrape(json_pack("{s:s}", "url", fake_url("/page")), &r, err) ==
	    ENGINE_EFETCH);
	CHECK(strstr(err, "refused") != NULL);
	tool_result_release(&r);

	fake_stop();
	tn_close();
	return tap_done();
}
