/*
 * t_tools_manifest.c — tool providers declared as data: every built-in
 * manifest loads and describes its tools; a broken manifest names its
 * file, line and key; tools.providers_dir adds and replaces providers;
 * credentials are sealed, masked and kept; and the tavily manifest runs
 * against tests/fakes/fake_tools.py through the real outbound client:
 * parameters typed into the request, the answer as Dify's text, json
 * and files, 401 / 429 / 503 / a timeout as clear errors, retries only
 * where they can help. Also the leaked dependencies of a DSL.
 */
#include <sys/stat.h>

#include "tap.h"
#include "t_node_run.h"
#include "t_tools_fake.h"
#include "storage/storage.h"

static int
call(const char *provider, const char *tool, json_t *params,
    struct tool_result *r, char *err)
{
	return tool_call_simple(provider, "builtin", tool, params, r, err);
}

static int
set_creds(const char *provider, const char *key, const char *prefix)
{
	char	 err[ENGINE_ERRMAX] = "";
	json_t	*in = json_pack("{s:s,s:s}", "base_url", fake_url(prefix), key ?
		    key : "unused", "tvly-good");
	int	 rc;

	if (key == NULL)
		json_object_del(in, "unused");
	rc = engine_tool_credentials_put(tn_engine, provider, in, err);
	if (rc != 0)
		printf("# credentials_put %s: %s\n", provider, err);
	json_decref(in);
	return rc;
}

/* The last request the fake saw (new reference). */
static json_t *
last_request(void)
{
	json_t *all = fake_requests(0), *last;

	last = json_incref(json_array_get(all, json_array_size(all) - 1));
	json_decref(all);
	return last;
}

static size_t
request_count(void)
{
	json_t	*all = fake_requests(0);
	size_t	 n = json_array_size(all);

	json_decref(all);
	return n;
}

static void
test_builtin(void)
{
	const struct tool_manifest	*m;
	json_t				*s, *list = NULL;
	const json_t			*t;
	size_t				 i, j, tools = 0;
	int				 ok = 1;

	CHECK(tool_manifest_count(tn_engine) >= 1);
	for (i = 0; i < tool_manifest_count(tn_engine); i++) {
		m = tool_manifest_at(tn_engine, i);
		CHECK(tool_manifest_find(tn_engine, m->name) == m);
		json_array_foreach(json_object_get(m->doc, "tools"), j, t) {
			s = tool_manifest_schema(t, 1);
			ok &= json_is_object(json_object_get(s, "properties"));
			json_decref(s);
			tools++;
		}
	}
	CHECK(ok);
	printf("# %zu built-in manifests, %zu tools\n",
	    tool_manifest_count(tn_engine), tools);
	/* Dify's ids for a provider */
	m = tool_manifest_find(tn_engine, "tavily");
	CHECK(m != NULL);
	CHECK(tool_manifest_find(tn_engine, "langgenius/tavily/tavily") == m);
	CHECK(tool_manifest_find(tn_engine, "langgenius/tavily") == m);
	CHECK(tool_manifest_find(tn_engine,
	    "langgenius/tavily:0.0.5@abc") == m);
	CHECK(tool_manifest_find(tn_engine, "no_such_provider") == NULL);
	CHECK(tool_provider_lookup(tn_engine, "tavily", "builtin") ==
	    &tool_provider_manifest);
	CHECK(tool_provider_lookup(tn_engine, "tavily", "api") ==
	    &tool_provider_api);
	CHECK(tool_provider_lookup(tn_engine, "time", "builtin") ==
	    &tool_provider_time);
	/* the console's list holds every manifest, in Dify's shape */
	CHECK(engine_tool_builtin_list(tn_engine, 1, &list) == 0);
	CHECK(json_array_size(list) >= tool_manifest_count(tn_engine));
	ok = 0;
	json_array_foreach(list, i, s)
		if (strcmp(json_string_value(json_object_get(s, "name")),
		    "tavily") == 0) {
			ok = strcmp(json_string_value(json_object_get(s,
			    "type")), "builtin") == 0 &&
			    json_is_false(json_object_get(s,
			    "is_team_authorization")) &&
			    json_array_size(json_object_get(s, "tools")) >= 2 &&
			    json_array_size(json_object_get(s,
			    "credentials_schema")) == 1;
		}
	CHECK(ok);
	json_decref(list);
}

static void
test_describe(void)
{
	struct tool_call	 c;
	json_t			*d = NULL, *props;
	char			 err[ENGINE_ERRMAX];

	memset(&c, 0, sizeof(c));
	c.provider = "langgenius/tavily/tavily";
	c.provider_type = "builtin";
	c.tool = "tavily_search";
	CHECK(tool_describe(tn_engine, &c, err, &d) == 0);
	props = json_object_get(json_object_get(json_array_get(d, 0),
	    "parameters"), "properties");
	/* what a model fills: the llm parameters, with their enums */
	CHECK(json_object_get(props, "query") != NULL);
	CHECK(json_array_size(json_object_get(json_object_get(props,
	    "search_depth"), "enum")) == 2);
	CHECK(json_object_get(props, "max_results") == NULL);
	CHECK_STR(json_string_value(json_array_get(json_object_get(
	    json_object_get(json_array_get(d, 0), "parameters"), "required"),
	    0)), "query");
	json_decref(d);
}

static const char good[] =
    "identity: {name: demo}\n"
    "tools:\n"
    "  - identity: {name: hello}\n"
    "    request: {url: 'https://example.org/{{ params.x }}'}\n";

static void
test_parse_errors(void)
{
	struct tool_manifest	*m = NULL;
	char			 err[ENGINE_ERRMAX];

	CHECK(tool_manifest_parse("demo.yml", good, strlen(good), err,
	    &m) == 0);
	tool_manifest_free(m);
	CHECK(tool_manifest_parse("demo.yml", "identity: {name: x}\n", 20,
	    err, &m) == ENGINE_EINVAL);
	CHECK(strstr(err, "demo.yml") != NULL && strstr(err, "tools") !=
	    NULL);
	/* the line of the key that is wrong, under the tool it belongs to */
	static const char nourl[] =
	    "identity:\n"
	    "  name: demo\n"
	    "tools:\n"
	    "  - identity:\n"
	    "      name: first\n"
	    "    request:\n"
	    "      url: https://example.org\n"
	    "  - identity:\n"
	    "      name: second\n"
	    "    request:\n"
	    "      method: FETCH\n"
	    "      url: https://example.org\n";
	CHECK(tool_manifest_parse("x.yml", nourl, strlen(nourl), err, &m) ==
	    ENGINE_EINVAL);
	CHECK_STR(err, "tool manifest x.yml:11: tool second: method: GET, "
	    "POST, PUT, PATCH or DELETE");
	static const char badtpl[] =
	    "identity: {name: demo}\n"
	    "tools:\n"
	    "  - identity: {name: t}\n"
	    "    request:\n"
	    "      url: 'https://example.org/{{ params.x '\n";
	CHECK(tool_manifest_parse("t.yml", badtpl, strlen(badtpl), err, &m) ==
	    ENGINE_EINVAL);
	CHECK(strstr(err, "t.yml:5: tool t: url: template") != NULL);
	printf("# %s\n", err);
	static const char badcred[] =
	    "identity: {name: demo}\n"
	    "credentials_for_provider:\n"
	    "  api_key: {type: password}\n"
	    "tools: [{identity: {name: t}, request: {url: 'https://x'}}]\n";
	CHECK(tool_manifest_parse("c.yml", badcred, strlen(badcred), err,
	    &m) == ENGINE_EINVAL);
	CHECK(strstr(err, "c.yml:3: api_key: type") != NULL);
	CHECK(tool_manifest_parse("y.yml", "a: [", 4, err, &m) ==
	    ENGINE_EINVAL);
	CHECK(strstr(err, "y.yml") != NULL);
	static const char notnative[] =
	    "identity: {name: nosuch}\nnative: true\n"
	    "tools: [{identity: {name: t}}]\n";
	CHECK(tool_manifest_parse("n.yml", notnative, strlen(notnative), err,
	    &m) == ENGINE_EINVAL);
	CHECK(strstr(err, "n.yml:2: native") != NULL);
	static const char unsup[] =
	    "identity: {name: comfyui}\n"
	    "unsupported: it needs a ComfyUI server's own workflow API\n";
	CHECK(tool_manifest_parse("u.yml", unsup, strlen(unsup), err, &m) ==
	    0);
	tool_manifest_free(m);
	/* steps: a tool of steps alone; names unique; test: {steps: true}
	 * needs the provider's steps */
	static const char steps[] =
	    "identity: {name: demo}\n"
	    "steps: [{name: token, request: {url: 'https://x/t'}}]\n"
	    "test: {steps: true}\n"
	    "tools:\n"
	    "  - identity: {name: t}\n"
	    "    steps:\n"
	    "      - {name: a, request: {url: 'https://x/a'}}\n"
	    "      - {name: b, each: steps.a.items, request: {url: "
	    "'https://x/{{ item.id }}'}}\n";
	CHECK(tool_manifest_parse("s.yml", steps, strlen(steps), err, &m) ==
	    0);
	tool_manifest_free(m);
	static const char twice[] =
	    "identity: {name: demo}\n"
	    "tools:\n"
	    "  - identity: {name: t}\n"
	    "    steps:\n"
	    "      - {name: a, request: {url: 'https://x/a'}}\n"
	    "      - {name: a, request: {url: 'https://x/b'}}\n";
	CHECK(tool_manifest_parse("s.yml", twice, strlen(twice), err, &m) ==
	    ENGINE_EINVAL);
	CHECK(strstr(err, "tool t: steps: two steps of one name") != NULL);
	static const char stepurl[] =
	    "identity: {name: demo}\n"
	    "tools:\n"
	    "  - identity: {name: t}\n"
	    "    steps:\n"
	    "      - name: a\n"
	    "        request: {method: GET}\n";
	CHECK(tool_manifest_parse("s.yml", stepurl, strlen(stepurl), err,
	    &m) == ENGINE_EINVAL);
	CHECK(strstr(err, "tool t: url: the request needs a url") != NULL);
	static const char notest[] =
	    "identity: {name: demo}\n"
	    "test: {steps: true}\n"
	    "tools: [{identity: {name: t}, request: {url: 'https://x'}}]\n";
	CHECK(tool_manifest_parse("s.yml", notest, strlen(notest), err, &m) ==
	    ENGINE_EINVAL);
	CHECK(strstr(err, "s.yml:2: test: steps: true needs") != NULL);
	static const char norequest[] =
	    "identity: {name: demo}\n"
	    "tools: [{identity: {name: t}}]\n";
	CHECK(tool_manifest_parse("s.yml", norequest, strlen(norequest), err,
	    &m) == ENGINE_EINVAL);
	CHECK(strstr(err, "needs a request") != NULL);
}

static void
test_providers_dir(void)
{
	struct conf	 c = tn_conf;
	struct engine	*e = NULL;
	char		 dir[] = "/tmp/t_manifest.XXXXXX", path[256];
	char		 err[ENGINE_ERRMAX];
	FILE		*f;

	if (!CHECK(mkdtemp(dir) != NULL))
		return;
	snprintf(path, sizeof(path), "%s/demo.yml", dir);
	f = fopen(path, "w");
	fputs(good, f);
	fclose(f);
	/* a file of a built-in's name replaces it */
	snprintf(path, sizeof(path), "%s/tavily.yaml", dir);
	f = fopen(path, "w");
	fputs("identity: {name: tavily}\nunsupported: not here\n", f);
	fclose(f);
	/* a native provider's manifest: its credentials' schema, no request */
	snprintf(path, sizeof(path), "%s/rss.yml", dir);
	f = fopen(path, "w");
	fputs("identity: {name: rss}\nnative: true\ncredentials_for_provider:"
	    "\n  token: {type: secret-input}\ntools:\n  - identity: "
	    "{name: rss_fetch}\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/tavily.yaml", dir);
	snprintf(c.tools_providers_dir, sizeof(c.tools_providers_dir), "%s",
	    dir);
	CHECK(engine_open(&c, err, &e) == 0);
	CHECK(e != NULL && tool_manifest_find(e, "rss") != NULL &&
	    tool_provider_lookup(e, "rss", "builtin") == &tool_provider_rss);
	CHECK(e != NULL && tool_manifest_find(e, "demo") != NULL);
	CHECK(e != NULL && json_is_string(json_object_get(
	    tool_manifest_find(e, "tavily")->doc, "unsupported")));
	engine_close(e);
	e = NULL;
	/* a broken one stops the engine, naming the file and the line */
	f = fopen(path, "w");
	fputs("identity: {name: tavily}\ntools:\n  - identity: {name: x}\n",
	    f);
	fclose(f);
	CHECK(engine_open(&c, err, &e) == ENGINE_EINVAL);
	CHECK(strstr(err, "tavily.yaml:3: tool x: request") != NULL);
	printf("# %s\n", err);
	snprintf(c.tools_providers_dir, sizeof(c.tools_providers_dir),
	    "%s/missing", dir);
	CHECK(engine_open(&c, err, &e) == ENGINE_EINVAL);
	CHECK(strstr(err, "tools.providers_dir") != NULL);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK(system(path) == 0);
}

static void
test_credentials(void)
{
	struct store_txn	*t = NULL;
	json_t			*v = NULL, *in;
	char			 err[ENGINE_ERRMAX];
	char			*raw;

	CHECK(engine_tool_credentials_get(tn_engine, "tavily", &v) == 0);
	CHECK(json_object_size(v) == 0);
	json_decref(v);
	/* a required one missing, an unknown key, a bad base_url */
	in = json_pack("{s:s}", "base_url", "https://example.org");
	CHECK(engine_tool_credentials_put(tn_engine, "tavily", in, err) ==
	    ENGINE_EINVAL);
	CHECK(strstr(err, "tavily_api_key") != NULL);
	json_decref(in);
	in = json_pack("{s:s,s:s}", "tavily_api_key", "k", "other", "x");
	CHECK(engine_tool_credentials_put(tn_engine, "tavily", in, err) ==
	    ENGINE_EINVAL);
	json_decref(in);
	in = json_pack("{s:s,s:s}", "tavily_api_key", "k", "base_url",
	    "file:///etc");
	CHECK(engine_tool_credentials_put(tn_engine, "tavily", in, err) ==
	    ENGINE_EINVAL);
	json_decref(in);
	in = json_pack("{s:s}", "tavily_api_key", "tvly-secret-1234");
	CHECK(engine_tool_credentials_put(tn_engine, "no_such", in, err) ==
	    ENGINE_ENOTFOUND);
	CHECK(engine_tool_credentials_put(tn_engine,
	    "langgenius/tavily/tavily", in, err) == 0);
	json_decref(in);
	/* sealed at rest */
	CHECK(store_read_begin(engine_store(tn_engine), &t) == 0);
	CHECK(store_get_json(t, STORE_DB_SETTINGS, "tool_credentials/tavily",
	    &v) == 0);
	store_read_end(t);
	raw = json_dumps(v, 0);
	CHECK(raw != NULL && strstr(raw, "tvly-secret-1234") == NULL &&
	    strstr(raw, "v1:") != NULL);
	free(raw);
	json_decref(v);
	/* masked in answers; the mask sent back keeps the key */
	CHECK(engine_tool_credentials_get(tn_engine, "tavily", &v) == 0);
	CHECK_STR(json_string_value(json_object_get(v, "tavily_api_key")),
	    ENGINE_SECRET_MASK);
	json_decref(v);
	in = json_pack("{s:s,s:s}", "tavily_api_key", ENGINE_SECRET_MASK,
	    "base_url", "https://example.org");
	CHECK(engine_tool_credentials_put(tn_engine, "tavily", in, err) == 0);
	json_decref(in);
	CHECK(tool_credentials_open(tn_engine, "tavily", err, &v) == 0);
	CHECK_STR(json_string_value(json_object_get(v, "tavily_api_key")),
	    "tvly-secret-1234");
	CHECK_STR(json_string_value(json_object_get(v, "base_url")),
	    "https://example.org");
	json_decref(v);
	CHECK(engine_tool_credentials_delete(tn_engine, "tavily") == 0);
	CHECK(engine_tool_credentials_set(tn_engine, "tavily") == 0);
}

static void
test_tavily(void)
{
	struct tool_result	 r;
	json_t			*req, *in;
	char			 err[ENGINE_ERRMAX];
	const char		*s;
	int			 rc;

	/* no key yet: a clear error at once, that no retry can mend */
	rc = call("tavily", "tavily_search", json_pack("{s:s}", "query", "x"),
	    &r, err);
	CHECK(rc == ENGINE_EINVAL && r.final);
	CHECK(strstr(err, "'tavily_api_key'") != NULL &&
	    strstr(err, "Settings > Tools") != NULL);
	tool_result_release(&r);
	CHECK(set_creds("tavily", "tavily_api_key", "/tavily") == 0);
	json_decref(fake_requests(1));
	CHECK(call("tavily", "tavily_search", json_pack("{s:s,s:s}", "query",
	    "c programming", "max_results", "2"), &r, err) == 0);
	req = last_request();
	CHECK_STR(json_string_value(json_object_get(req, "path")),
	    "/tavily/search");
	CHECK_STR(json_string_value(json_object_get(json_object_get(req,
	    "headers"), "authorization")), "Bearer tvly-good");
	in = json_object_get(req, "body");
	CHECK_STR(json_string_value(json_object_get(in, "query")),
	    "c programming");
	/* typed as the API wants: a number, a boolean, defaults filled */
	CHECK(json_is_integer(json_object_get(in, "max_results")) &&
	    json_integer_value(json_object_get(in, "max_results")) == 2);
	CHECK(json_is_false(json_object_get(in, "include_answer")));
	CHECK_STR(json_string_value(json_object_get(in, "search_depth")),
	    "basic");
	/* an empty optional parameter is left out */
	CHECK(json_object_get(in, "include_domains") == NULL ||
	    strcmp(json_string_value(json_object_get(in,
	    "include_domains")), "") == 0);
	json_decref(req);
	s = res_text(&r);
	CHECK(strstr(s, "# Result 1: [Result 1 for c programming]"
	    "(https://example.org/1)") != NULL);
	CHECK(strstr(s, "**Content:**\nContent 2 about c programming.") !=
	    NULL);
	CHECK(json_array_size(r.json) == 1 && json_array_size(json_object_get(
	    json_array_get(r.json, 0), "results")) == 2);
	CHECK(r.files == NULL);
	tool_result_release(&r);
	/* nothing found: Dify's words */
	CHECK(call("tavily", "tavily_search", json_pack("{s:s}", "query",
	    "empty"), &r, err) == 0);
	CHECK_STR(res_text(&r), "No results found for 'empty' in Tavily.");
	tool_result_release(&r);
	/* an answer's URL is app content: the SSRF guard holds for it */
	CHECK(call("tavily", "tavily_search", json_pack("{s:s,s:b}", "query",
	    "pictures", "include_images", 1), &r, err) == ENGINE_EFETCH);
	CHECK(strstr(err, "refused to connect") != NULL);
	tool_result_release(&r);
	/* images become files fetched into the run */
	tn_conf.http_allow_private = 1;
	CHECK(call("tavily", "tavily_search", json_pack("{s:s,s:b}", "query",
	    "pictures", "include_images", 1), &r, err) == 0);
	tn_conf.http_allow_private = 0;
	CHECK(json_array_size(r.files) == 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(r.files, 0),
	    "mime_type")), "image/png");
	tool_result_release(&r);
	/* extract */
	CHECK(call("tavily", "tavily_extract", json_pack("{s:s}", "urls",
	    "https://a.example,https://b.example"), &r, err) == 0);
	CHECK(strstr(res_text(&r), "# https://b.example\n\nRaw text of "
	    "https://b.example") != NULL);
	tool_result_release(&r);
	/* a required parameter missing */
	CHECK(call("tavily", "tavily_search", NULL, &r, err) ==
	    ENGINE_EINVAL && r.final);
	CHECK(strstr(err, "'query' is required") != NULL);
	tool_result_release(&r);
	CHECK(call("tavily", "no_such_tool", NULL, &r, err) ==
	    ENGINE_ENOTFOUND);
	tool_result_release(&r);
}

static void
test_errors(void)
{
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX];
	json_t			*in;
	size_t			 n;

	/* 401: which credential to check, and never its value */
	in = json_pack("{s:s,s:s}", "base_url", fake_url("/tavily"),
	    "tavily_api_key", "tvly-bad-secret-key");
	CHECK(engine_tool_credentials_put(tn_engine, "tavily", in, err) == 0);
	json_decref(in);
	CHECK(call("tavily", "tavily_search", json_pack("{s:s}", "query", "q"),
	    &r, err) == ENGINE_EFETCH);
	CHECK(strstr(err, "answered 401 (Unauthorized: invalid API key)") !=
	    NULL && strstr(err, "'tavily_api_key'") != NULL);
	CHECK(strstr(err, "tvly-bad-secret-key") == NULL);
	CHECK(!r.final);
	tool_result_release(&r);
	CHECK(set_creds("tavily", "tavily_api_key", "/tavily") == 0);
	/* 429 is tried again tools.max_retries times, then says so */
	tn_conf.tools_max_retries = 2;
	json_decref(fake_requests(1));
	CHECK(call("tavily", "tavily_search", json_pack("{s:s}", "query",
	    "ratelimit"), &r, err) == ENGINE_EFETCH);
	CHECK(strstr(err, "429") != NULL && strstr(err, "rate limited") !=
	    NULL);
	tool_result_release(&r);
	CHECK((n = request_count()) == 3);
	printf("# 429: %zu requests\n", n);
	/* a 503 once, then served */
	json_decref(fake_requests(1));
	CHECK(call("tavily", "tavily_search", json_pack("{s:s}", "query",
	    "flaky"), &r, err) == 0);
	CHECK(strstr(res_text(&r), "Result 1 for flaky") != NULL);
	tool_result_release(&r);
	CHECK(request_count() == 2);
	/* a 404 is not tried again */
	json_decref(fake_requests(1));
	in = json_pack("{s:s,s:s}", "base_url", fake_url("/nowhere"),
	    "tavily_api_key", "tvly-good");
	CHECK(engine_tool_credentials_put(tn_engine, "tavily", in, err) == 0);
	json_decref(in);
	CHECK(call("tavily", "tavily_search", json_pack("{s:s}", "query", "q"),
	    &r, err) == ENGINE_EFETCH);
	CHECK(strstr(err, "answered 404") != NULL);
	tool_result_release(&r);
	CHECK(request_count() == 1);
	/* a timeout */
	CHECK(set_creds("tavily", "tavily_api_key", "/tavily") == 0);
	tn_conf.tools_timeout = 1;
	tn_conf.tools_max_retries = 0;
	CHECK(call("tavily", "tavily_search", json_pack("{s:s}", "query",
	    "slow"), &r, err) == ENGINE_EFETCH);
	printf("# timeout: %s\n", err);
	tool_result_release(&r);
	tn_conf.tools_timeout = 60;
	tn_conf.tools_max_retries = 2;
}

static void
test_deps(void)
{
	json_t	*dsl, *out = NULL, *e;
	size_t	 i;
	int	 jina = 0, tavily = 0, time_ = 0, mcp = 0;

	dsl = json_pack("{s:[{s:s,s:{s:s}}],s:{s:{s:[{s:s,s:{s:s,s:s,s:s,"
	    "s:s}},{s:s,s:{s:s,s:s,s:s,s:s}},{s:s,s:{s:s,s:s,s:s,s:s}},{s:s,"
	    "s:{s:s,s:s,s:s,s:s}}]}}}",
	    "dependencies", "type", "marketplace", "value",
	    "marketplace_plugin_unique_identifier",
	    "someone/nowhere_tool:0.0.1@abc",
	    "workflow", "graph", "nodes",
	    "id", "n1", "data", "type", "tool", "provider_id",
	    "someone/nowhere_tool/nowhere_tool", "provider_type", "builtin",
	    "tool_name", "go",
	    "id", "n2", "data", "type", "tool", "provider_id", "tavily",
	    "provider_type", "builtin", "tool_name", "tavily_search",
	    "id", "n3", "data", "type", "tool", "provider_id", "time",
	    "provider_type", "builtin", "tool_name", "current_time",
	    "id", "n4", "data", "type", "tool", "provider_id", "srv",
	    "provider_type", "mcp", "tool_name", "echo");
	CHECK(engine_tool_credentials_delete(tn_engine, "tavily") == 0);
	CHECK(engine_tool_deps(tn_engine, dsl, &out) == 0);
	json_array_foreach(out, i, e) {
		const char *p = json_string_value(json_object_get(e,
		    "provider")), *why = json_string_value(json_object_get(e,
		    "reason"));

		if (strcmp(p, "someone/nowhere_tool/nowhere_tool") == 0)
			jina = strcmp(why, "not_served") == 0 && strcmp(
			    json_string_value(json_object_get(e, "type")),
			    "marketplace") == 0;
		if (strcmp(p, "tavily") == 0)
			tavily = strcmp(why, "needs_credentials") == 0;
		time_ |= strcmp(p, "time") == 0;
		mcp |= strcmp(p, "srv") == 0;
	}
	CHECK(jina);
	CHECK(tavily);
	CHECK(!time_ && !mcp);
	CHECK(json_array_size(out) == 2);
	json_decref(out);
	json_decref(dsl);
}

int
main(void)
{
	setenv("FLOWCGI_FAKE_MCP", "tests/fakes/fake_tools.py", 1);
	tn_open();
	test_builtin();
	test_describe();
	test_parse_errors();
	test_providers_dir();
	test_credentials();
	test_deps();
	if (fake_begin()) {
		tn_conf.http_allow_private = 0;	/* base_url is trusted */
		test_tavily();
		test_errors();
		fake_stop();
	}
	tn_close();
	return tap_done();
}
