/*
 * t_node_tool.c — the tool node through the real executor (start -> tool
 * -> end, imported and run in a temporary data directory): mixed,
 * variable and constant parameters, null ones dropped, configurations in
 * both forms, Dify's output shapes (text, files, json with its
 * [{"data": []}] default), the trace's inputs, an api and an mcp tool at
 * the loopback fake, and the message for a tool flowcgi lacks.
 */
#include <time.h>

#include "tap.h"
#include "t_node_run.h"
#include "t_tools_fake.h"

static json_t *
tool_node(const char *provider, const char *type, const char *tool,
    json_t *params, json_t *config)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:o,s:o}", "type", "tool",
	    "provider_id", provider, "provider_name", provider,
	    "provider_type", type, "tool_name", tool, "tool_parameters",
	    params ? params : json_object(), "tool_configurations",
	    config ? config : json_object());
}

static json_t *
outs(void)
{
	return json_pack("{s:[s,s],s:[s,s],s:[s,s]}", "text", "n1", "text",
	    "json", "n1", "json", "files", "n1", "files");
}

static void
test_time(void)
{
	struct tn_run	 r;
	char		 year[16];
	time_t		 now = time(NULL);
	struct tm	 tm;

	gmtime_r(&now, &tm);
	snprintf(year, sizeof(year), "%d", tm.tm_year + 1900);
	/* configurations as the corpus writes them (current_time has only
	 * form parameters) */
	if (tn_run1(tool_node("time", "builtin", "current_time", NULL,
	    json_pack("{s:s,s:s}", "format", "%Y", "timezone", "UTC")), outs(),
	    NULL, &r) == 0) {
		CHECK_STR(r.status, "succeeded");
		CHECK_STR(tn_out_str(&r, "text"), year);
		CHECK_STR(tn_dump(json_object_get(r.outputs, "json")),
		    "[{\"data\":[]}]");
		CHECK_STR(tn_dump(json_object_get(r.outputs, "files")), "[]");
		CHECK_STR(tn_dump(json_object_get(json_object_get(r.node,
		    "inputs"), "format")), "\"%Y\"");
	} else
		CHECK(0);
	tn_release(&r);

	/* parameters: mixed, variable, constant; {type, value} configs;
	 * a null parameter dropped */
	if (tn_run1(tool_node("langgenius/time/time", "plugin", "weekday",
	    json_pack("{s:{s:s,s:s},s:{s:s,s:[s,s]},s:{s:s,s:i},s:{s:s,s:n}}",
	    "year", "type", "mixed", "value", "20{{#start.yy#}}", "month",
	    "type", "variable", "value", "start", "m", "day", "type",
	    "constant", "value", 1, "extra", "type", "mixed", "value"),
	    NULL), outs(), json_pack("{s:s,s:i}", "yy", "24", "m", 1),
	    &r) == 0) {
		CHECK_STR(r.status, "succeeded");
		CHECK_STR(tn_out_str(&r, "text"), "January 1, 2024 is Monday.");
		CHECK(json_object_get(json_object_get(r.node, "inputs"),
		    "extra") == NULL);
		CHECK_STR(tn_dump(json_object_get(json_object_get(r.node,
		    "inputs"), "year")), "\"2024\"");
	} else
		CHECK(0);
	tn_release(&r);

	if (tn_run1(tool_node("time", "builtin", "current_time", NULL,
	    json_pack("{s:{s:s,s:s},s:{s:s,s:s}}", "format", "type",
	    "constant", "value", "%Z", "timezone", "type", "mixed", "value",
	    "{{#start.tz#}}")), outs(), json_pack("{s:s}", "tz",
	    "Asia/Tokyo"), &r) == 0)
		CHECK_STR(tn_out_str(&r, "text"), "JST");
	else
		CHECK(0);
	tn_release(&r);
}

static void
test_json(void)
{
	struct tn_run r;

	if (tn_run1(tool_node("json_process", "builtin", "parse", json_pack(
	    "{s:{s:s,s:[s,s]},s:{s:s,s:s}}", "content", "type", "variable",
	    "value", "start", "doc", "json_filter", "type", "constant",
	    "value", "$.a[1].b"), NULL), outs(), json_pack("{s:s}", "doc",
	    "{\"a\": [{}, {\"b\": \"found\"}]}"), &r) == 0) {
		CHECK_STR(r.status, "succeeded");
		CHECK_STR(tn_out_str(&r, "text"), "found");
	} else
		CHECK(0);
	tn_release(&r);
}

static void
test_code(void)
{
	struct tn_run r;

	if (tn_run1(tool_node("code", "builtin", "simple_code", json_pack(
	    "{s:{s:s,s:s},s:{s:s,s:s}}", "language", "type", "constant",
	    "value", "python3", "code", "type", "mixed", "value",
	    "print(6 * 7)"), NULL), outs(), NULL, &r) == 0) {
		CHECK_STR(r.status, "succeeded");
		CHECK_STR(tn_out_str(&r, "text"), "42\n");
	} else
		CHECK(0);
	tn_release(&r);
	if (tn_run1(tool_node("code", "builtin", "simple_code", json_pack(
	    "{s:{s:s,s:s},s:{s:s,s:s}}", "language", "type", "constant",
	    "value", "python3", "code", "type", "constant", "value",
	    "raise ValueError('no')"), NULL), outs(), NULL, &r) == 0) {
		CHECK_STR(r.status, "failed");
		CHECK(r.error != NULL && strstr(r.error, "ValueError: no") !=
		    NULL);
	} else
		CHECK(0);
	tn_release(&r);
}

static void
test_missing(void)
{
	struct tn_run r;

	if (tn_run1(tool_node("someone/nowhere/nowhere", "builtin", "go",
	    NULL, NULL), outs(), NULL, &r) == 0) {
		CHECK_STR(r.status, "failed");
		CHECK(r.error != NULL && strstr(r.error, "tool "
		    "'someone/nowhere/nowhere/go' is not available in flowcgi") !=
		    NULL);
	} else
		CHECK(0);
	tn_release(&r);
	/* a provider declared as data, its required parameter missing */
	if (tn_run1(tool_node("jina", "builtin", "jina_reader", NULL, NULL),
	    outs(), NULL, &r) == 0) {
		CHECK_STR(r.status, "failed");
		CHECK(r.error != NULL && strstr(r.error, "parameter 'url' is "
		    "required") != NULL);
	} else
		CHECK(0);
	tn_release(&r);

	if (tn_run1(tool_node("e64b4c7f-0000", "api", "getMessage", NULL,
	    NULL), outs(), NULL, &r) == 0) {
		CHECK_STR(r.status, "failed");
		CHECK(r.error != NULL && strstr(r.error, "is not available in "
		    "flowcgi") != NULL && strstr(r.error, "getMessage") !=
		    NULL);
	} else
		CHECK(0);
	tn_release(&r);
}

static void
test_remote(void)
{
	struct tn_run	 r;
	json_t		*in, *v = NULL;
	char		 err[ENGINE_ERRMAX], schema[1024];

	in = json_pack("{s:s,s:s,s:s}", "name", "fake-mcp", "type", "mcp",
	    "server_url", fake_url("/mcp-sse"));
	CHECK(engine_tool_provider_put(tn_engine, in, err, &v) == 0);
	json_decref(in);
	json_decref(v);
	if (tn_run1(tool_node("fake-mcp", "mcp", "weather", json_pack(
	    "{s:{s:s,s:s}}", "city", "type", "mixed", "value", "{{#start.c#}}"),
	    NULL), outs(), json_pack("{s:s}", "c", "Lima"), &r) == 0) {
		CHECK_STR(r.status, "succeeded");
		CHECK_STR(tn_dump(json_object_get(r.outputs, "json")),
		    "[{\"city\":\"Lima\",\"temp\":21}]");
		CHECK_STR(tn_out_str(&r, "text"), "");
	} else
		CHECK(0);
	tn_release(&r);

	snprintf(schema, sizeof(schema), "{\"openapi\": \"3.0.0\", "
	    "\"servers\": [{\"url\": \"%s\"}], \"paths\": {\"/echo\": "
	    "{\"get\": {\"operationId\": \"echo\", \"parameters\": [{\"name\": "
	    "\"q\", \"in\": \"query\"}]}}}}", fake_url("/api"));
	in = json_pack("{s:s,s:s,s:s,s:s,s:{s:s,s:s,s:s}}", "name", "Echo API",
	    "id", "038963aa-43c8-47fc-be4b-0255c19959c1", "type", "api",
	    "schema", schema, "credentials", "auth_type", "api_key_header",
	    "api_key_value", "s3", "api_key_header_prefix", "bearer");
	CHECK(engine_tool_provider_put(tn_engine, in, err, &v) == 0);
	json_decref(in);
	json_decref(v);
	/* the DSL names the provider by id, with another display name */
	if (tn_run1(json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:{s:s,s:s}},s:{}}",
	    "type", "tool", "provider_id",
	    "038963aa-43c8-47fc-be4b-0255c19959c1", "provider_name", "Echo",
	    "provider_type", "api", "tool_name", "echo", "tool_parameters",
	    "q", "type", "mixed", "value", "hi {{#start.w#}}",
	    "tool_configurations"), outs(), json_pack("{s:s}", "w", "there"),
	    &r) == 0) {
		json_t *j = json_array_get(json_object_get(r.outputs, "json"),
		    0);

		CHECK_STR(r.status, "succeeded");
		CHECK_STR(tn_dump(json_object_get(j, "query")),
		    "{\"q\":\"hi there\"}");
		CHECK_STR(json_string_value(json_object_get(json_object_get(j,
		    "headers"), "authorization")), "Bearer s3");
		CHECK(strstr(tn_out_str(&r, "text"), "\"path\": \"/api/echo\"")
		    != NULL);
	} else
		CHECK(0);
	tn_release(&r);
}

int
main(void)
{
	tn_open();
	test_time();
	test_json();
	test_code();
	test_missing();
	if (fake_begin()) {
		tn_conf.http_allow_private = 1;
		test_remote();
		fake_stop();
	}
	tn_close();
	return tap_done();
}
