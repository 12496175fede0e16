/*
 * t_tools_providers.c — every provider manifest against its API's fake
 * (tests/fakes/fake_tools.py), one case file per provider in
 * tests/unit/tool_cases/<provider>.json: a list of cases
 *
 *   {provider, tool, credentials {k: v}, params {k: v}, allow_private,
 *    request {method, path, headers {k: v}, query {k: v}, body {k: v},
 *             no_headers [k], no_query [k], no_body [k]},
 *    requests [request...] (every request, in order),
 *    text [substrings], text_exact, json N, json_first {k: v}, files N, mime,
 *    error substring, error_not substring, final, final_notfound}
 *
 * "FAKE" at the start of a credential or parameter stands for the fake's
 * http://127.0.0.1:<port>. Each case sets the provider's credentials
 * through engine_tool_credentials_put (sealed and opened as in a run),
 * calls the tool through tool_invoke and the real outbound client, and
 * checks what reached the fake and what came back. body and query are
 * subsets: each key given must be there with that value.
 */
#include <dirent.h>

#include "tap.h"
#include "t_node_run.h"
#include "t_tools_fake.h"

#define CASES_DIR "tests/unit/tool_cases"

/* v with "FAKE" at the start of each string replaced by the fake's URL. */
static json_t *
fake_in(const json_t *v)
{
	json_t		*o = json_object(), *x;
	const char	*k, *s;

	json_object_foreach((json_t *)v, k, x) {
		s = json_string_value(x);
		if (s != NULL && strncmp(s, "FAKE", 4) == 0)
			json_object_set_new(o, k, json_string(fake_url(s + 4)));
		else
			json_object_set(o, k, x);
	}
	return o;
}

/* Each key of want is in got with an equal value. */
static int
subset(const char *what, const json_t *want, const json_t *got)
{
	const char	*k;
	json_t		*w;
	char		*a, *b;
	int		 ok = 1;

	json_object_foreach((json_t *)want, k, w)
		if (!json_equal(w, json_object_get(got, k))) {
			a = json_dumps(w, JSON_ENCODE_ANY);
			b = json_dumps(json_object_get(got, k), JSON_ENCODE_ANY);
			printf("# %s.%s: want %s, got %s\n", what, k, a,
			    b ? b : "(none)");
			free(a);
			free(b);
			ok = 0;
		}
	return ok;
}

static int
none_of(const char *what, const json_t *keys, const json_t *got)
{
	json_t	*k;
	size_t	 i;
	int	 ok = 1;

	json_array_foreach(keys, i, k)
		if (json_object_get(got, json_string_value(k)) != NULL) {
			printf("# %s.%s should not be sent\n", what,
			    json_string_value(k));
			ok = 0;
		}
	return ok;
}

/* The request got is as want says (a case's `request`). */
static int
one_request(const json_t *want, const json_t *got)
{
	const char	*s;
	int		 ok = 1;

	if (got == NULL) {
		printf("# no request reached the fake\n");
		return 0;
	}
	if ((s = json_string_value(json_object_get(want, "method"))) != NULL &&
	    strcmp(json_string_value(json_object_get(got, "method")), s) != 0) {
		printf("# method: want %s, got %s\n", s, json_string_value(
		    json_object_get(got, "method")));
		ok = 0;
	}
	if ((s = json_string_value(json_object_get(want, "path"))) != NULL &&
	    strcmp(json_string_value(json_object_get(got, "path")), s) != 0) {
		printf("# path: want %s, got %s\n", s, json_string_value(
		    json_object_get(got, "path")));
		ok = 0;
	}
	ok &= subset("headers", json_object_get(want, "headers"),
	    json_object_get(got, "headers"));
	ok &= subset("query", json_object_get(want, "query"),
	    json_object_get(got, "query"));
	ok &= subset("body", json_object_get(want, "body"),
	    json_object_get(got, "body"));
	ok &= none_of("headers", json_object_get(want, "no_headers"),
	    json_object_get(got, "headers"));
	ok &= none_of("query", json_object_get(want, "no_query"),
	    json_object_get(got, "query"));
	ok &= none_of("body", json_object_get(want, "no_body"),
	    json_object_get(got, "body"));
	return ok;
}

static void
run_case(const json_t *c, const char *file, size_t idx)
{
	struct tool_call	 call;
	struct tool_result	 r;
	const char		*provider = json_string_value(json_object_get(c,
				    "provider"));
	const char		*tool = json_string_value(json_object_get(c,
				    "tool"));
	const json_t		*want = json_object_get(c, "request");
	json_t			*t;
	json_t			*creds = NULL, *params, *seen, *api;
	const json_t		*all;
	char			 err[ENGINE_ERRMAX] = "";
	const char		*s;
	size_t			 i;
	int			 rc;

	printf("# %s case %zu: %s/%s\n", file, idx, provider, tool);
	engine_tool_credentials_delete(tn_engine, provider);
	if (json_object_get(c, "credentials") != NULL &&
	    json_object_size(json_object_get(c, "credentials")) > 0) {
		creds = fake_in(json_object_get(c, "credentials"));
		if (!CHECK(engine_tool_credentials_put(tn_engine, provider,
		    creds, err) == 0))
			printf("# credentials: %s\n", err);
		json_decref(creds);
	}
	tn_conf.http_allow_private = json_is_true(json_object_get(c,
	    "allow_private"));
	params = fake_in(json_object_get(c, "params"));
	json_decref(fake_requests(1));
	memset(&call, 0, sizeof(call));
	memset(&r, 0, sizeof(r));
	call.provider = provider;
	call.provider_type = "builtin";
	call.tool = tool;
	call.params = params;
	rc = tool_invoke(tn_engine, &call, err, &r);
	json_decref(params);
	if ((s = json_string_value(json_object_get(c, "error"))) != NULL) {
		CHECK(rc != 0);
		if (!CHECK(strstr(err, s) != NULL))
			printf("# error: want '%s' in '%s'\n", s, err);
		if ((s = json_string_value(json_object_get(c, "error_not"))) !=
		    NULL)
			CHECK(strstr(err, s) == NULL);
		if (json_is_true(json_object_get(c, "final")))
			CHECK(r.final);
		if (json_is_true(json_object_get(c, "final_notfound")))
			CHECK(rc == ENGINE_ENOTFOUND);
	} else if (!CHECK(rc == 0))
		printf("# failed: %s\n", err);
	/* the API's requests, those that are not a file of the answer
	 * being fetched: `request` is the last, `requests` each in order */
	seen = fake_requests(0);
	api = json_array();
	json_array_foreach(seen, i, t)
		if (strncmp(json_string_value(json_object_get(t, "path")),
		    "/img/", 5) != 0)
			json_array_append(api, t);
	if (want != NULL)
		CHECK(one_request(want, json_array_get(api,
		    json_array_size(api) ? json_array_size(api) - 1 : 0)));
	if ((all = json_object_get(c, "requests")) != NULL) {
		if (!CHECK(json_array_size(api) == json_array_size(all)))
			printf("# requests: want %zu, got %zu\n",
			    json_array_size(all), json_array_size(api));
		json_array_foreach(all, i, t)
			CHECK(one_request(t, json_array_get(api, i)));
	}
	json_decref(api);
	json_decref(seen);
	if ((all = json_object_get(c, "json_first")) != NULL)
		CHECK(subset("json", all, json_array_get(r.json, 0)));
	json_array_foreach(json_object_get(c, "text"), i, t)
		if (!CHECK(strstr(res_text(&r), json_string_value(t)) != NULL))
			printf("# text: want '%s' in '%.300s'\n",
			    json_string_value(t), res_text(&r));
	if ((s = json_string_value(json_object_get(c, "text_exact"))) != NULL)
		CHECK_STR(res_text(&r), s);
	if (json_is_integer(json_object_get(c, "json")))
		CHECK(json_array_size(r.json) == (size_t)json_integer_value(
		    json_object_get(c, "json")));
	if (json_is_integer(json_object_get(c, "files")))
		CHECK(json_array_size(r.files) == (size_t)json_integer_value(
		    json_object_get(c, "files")));
	if ((s = json_string_value(json_object_get(c, "mime"))) != NULL)
		CHECK_STR(json_string_value(json_object_get(json_array_get(
		    r.files, 0), "mime_type")), s);
	tool_result_release(&r);
	engine_tool_credentials_delete(tn_engine, provider);
}

/*
 * Settings > Tools' Test of a provider whose test is its steps (Feishu's
 * token request): the stored secret good, then a wrong one tried over it,
 * which must fail naming the credentials and not show the secret.
 */
static void
test_steps_test(void)
{
	json_t	*creds, *wrong;
	char	 err[ENGINE_ERRMAX] = "";

	creds = json_pack("{s:s,s:s,s:s}", "app_id", "cli_fake", "app_secret",
	    "s3cret-app", "base_url", fake_url("/lark"));
	wrong = json_pack("{s:s}", "app_secret", "wrong-s3cret");
	CHECK(engine_tool_credentials_put(tn_engine, "feishu_base", creds,
	    err) == 0);
	json_decref(fake_requests(1));
	if (!CHECK(engine_tool_credentials_test(tn_engine, "feishu_base",
	    NULL, err) == 0))
		printf("# test: %s\n", err);
	CHECK(engine_tool_credentials_test(tn_engine, "feishu_base", wrong,
	    err) != 0);
	CHECK(strstr(err, "check app_id and app_secret") != NULL);
	CHECK(strstr(err, "wrong-s3cret") == NULL);
	json_decref(wrong);
	json_decref(creds);
	wrong = fake_requests(0);
	/* two token requests, nothing else */
	CHECK(json_array_size(wrong) == 2);
	CHECK_STR(json_string_value(json_object_get(json_array_get(wrong, 1),
	    "path")), "/lark/access_token/get_tenant_access_token");
	json_decref(wrong);
	engine_tool_credentials_delete(tn_engine, "feishu_base");
}

static int
cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
main(void)
{
	struct dirent	*de;
	json_error_t	 je;
	json_t		*cases, *c;
	DIR		*d;
	char		*names[128], path[512];
	size_t		 n = 0, i, j, total = 0;

	setenv("FLOWCGI_FAKE_MCP", "tests/fakes/fake_tools.py", 1);
	tn_open();
	tn_conf.tools_max_retries = 0;
	if (!fake_begin()) {
		tn_close();
		return tap_done();
	}
	if (!CHECK((d = opendir(CASES_DIR)) != NULL))
		goto out;
	while ((de = readdir(d)) != NULL && n < 128)
		if (strstr(de->d_name, ".json") != NULL)
			names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, n, sizeof(*names), cmp);
	CHECK(n >= 10);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", CASES_DIR, names[i]);
		cases = json_load_file(path, 0, &je);
		if (!CHECK(json_is_array(cases)))
			printf("# %s: %s (line %d)\n", path, je.text, je.line);
		json_array_foreach(cases, j, c) {
			run_case(c, names[i], j);
			total++;
		}
		json_decref(cases);
		free(names[i]);
	}
	printf("# %zu cases in %zu files\n", total, n);
	test_steps_test();
out:
	fake_stop();
	tn_close();
	return tap_done();
}
