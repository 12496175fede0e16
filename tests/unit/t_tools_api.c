/*
 * t_tools_api.c — custom OpenAPI tools (Dify's `api` provider type):
 * importing schemas (YAML and JSON, the refusals), listing, replacing and
 * deleting providers; invoking operations against the loopback fake with
 * path, query and header parameters, JSON and form bodies ($ref schemas,
 * types converted, required and default properties), every auth form
 * (checked at the fake), answers (JSON object, text, list, empty, error
 * status), lookup by provider id, descriptions for agents, the SSRF guard.
 */
#include "tap.h"
#include "t_node_run.h"
#include "t_tools_fake.h"

static char schema[4096];

static void
make_schema(void)
{
	snprintf(schema, sizeof(schema),
	    "openapi: 3.0.1\n"
	    "info: {title: Pets, version: '1'}\n"
	    "servers:\n"
	    "  - url: %s\n"
	    "paths:\n"
	    "  /pets/{petId}:\n"
	    "    get:\n"
	    "      operationId: getPet\n"
	    "      summary: Get a pet\n"
	    "      parameters:\n"
	    "        - {name: petId, in: path, required: true, schema: "
	    "{type: string}}\n"
	    "        - {name: verbose, in: query, schema: {type: string}}\n"
	    "        - {name: lang, in: query, schema: {type: string, "
	    "default: en}}\n"
	    "        - {name: X-Trace, in: header, schema: {type: string}}\n"
	    "  /pets:\n"
	    "    post:\n"
	    "      operationId: createPet\n"
	    "      description: Make a pet\n"
	    "      requestBody:\n"
	    "        content:\n"
	    "          application/json:\n"
	    "            schema: {$ref: '#/components/schemas/Pet'}\n"
	    "  /text:\n"
	    "    get: {summary: Some text}\n"
	    "  /fail:\n"
	    "    get: {operationId: failOp}\n"
	    "  /empty:\n"
	    "    get: {operationId: emptyOp}\n"
	    "  /list:\n"
	    "    get: {operationId: listOp}\n"
	    "  /form:\n"
	    "    post:\n"
	    "      operationId: formOp\n"
	    "      requestBody:\n"
	    "        content:\n"
	    "          application/x-www-form-urlencoded:\n"
	    "            schema:\n"
	    "              type: object\n"
	    "              properties: {q: {type: string}, n: {type: "
	    "integer, default: 5}}\n"
	    "components:\n"
	    "  schemas:\n"
	    "    Pet:\n"
	    "      type: object\n"
	    "      required: [name]\n"
	    "      properties:\n"
	    "        name: {type: string, description: The name}\n"
	    "        age: {type: integer}\n"
	    "        tags: {type: array}\n",
	    fake_url("/api"));
}

static int
put(const char *name, const char *id, json_t *cred, json_t **view,
    char *err)
{
	json_t	*in = json_pack("{s:s,s:s,s:s}", "name", name, "type", "api",
		    "schema", schema);
	int	 rc;

	if (id != NULL)
		json_object_set_new(in, "id", json_string(id));
	if (cred != NULL)
		json_object_set_new(in, "credentials", cred);
	rc = engine_tool_provider_put(tn_engine, in, err, view);
	json_decref(in);
	return rc;
}

/* Calls op of provider pets; the JSON echo of the fake in *echo. */
static int
call_op(const char *op, json_t *params, struct tool_result *r, char *err)
{
	return tool_call_simple("pets", "api", op, params, r, err);
}

static json_t *
echo(const struct tool_result *r)
{
	return json_array_get(r->json, 0);
}

static const char *
echo_header(const struct tool_result *r, const char *h)
{
	return json_string_value(json_object_get(json_object_get(echo(r),
	    "headers"), h));
}

static void
test_import(void)
{
	json_t	*v = NULL, *in, *l = NULL;
	char	 err[ENGINE_ERRMAX];

	in = json_pack("{s:s,s:s}", "name", "x", "type", "api");
	CHECK(engine_tool_provider_put(tn_engine, in, err, &v) ==
	    ENGINE_EINVAL);
	CHECK(strstr(err, "schema") != NULL);
	json_object_set_new(in, "schema", json_string("swagger: '2.0'\n"));
	CHECK(engine_tool_provider_put(tn_engine, in, err, &v) ==
	    ENGINE_EINVAL);
	CHECK(strstr(err, "OpenAPI 3") != NULL);
	json_object_set_new(in, "schema", json_string("{\"openapi\": "
	    "\"3.1.0\", \"paths\": {}}"));
	CHECK(engine_tool_provider_put(tn_engine, in, err, &v) ==
	    ENGINE_EINVAL);
	CHECK(strstr(err, "No server found") != NULL);
	json_object_set_new(in, "schema", json_string("{\"openapi\": "
	    "\"3.1.0\", \"servers\": [{\"url\": \"http://x\"}], "
	    "\"paths\": {}}"));
	CHECK(engine_tool_provider_put(tn_engine, in, err, &v) ==
	    ENGINE_EINVAL);
	CHECK(strstr(err, "no operations") != NULL);
	json_object_set_new(in, "schema", json_string("openapi: [3\n"));
	CHECK(engine_tool_provider_put(tn_engine, in, err, &v) ==
	    ENGINE_EINVAL);
	json_object_set_new(in, "type", json_string("grpc"));
	CHECK(engine_tool_provider_put(tn_engine, in, err, &v) ==
	    ENGINE_EINVAL);
	json_object_set_new(in, "type", json_string("api"));
	json_object_set_new(in, "name", json_string("bad\nname"));
	CHECK(engine_tool_provider_put(tn_engine, in, err, &v) ==
	    ENGINE_EINVAL);
	json_decref(in);

	CHECK(put("pets", NULL, json_pack("{s:s,s:s,s:s}", "auth_type",
	    "api_key_header", "api_key_value", "tok",
	    "api_key_header_prefix", "bearer"), &v, err) == 0);
	CHECK_STR(json_string_value(json_object_get(v, "type")), "api");
	CHECK_INT(json_array_size(json_object_get(v, "tools")), 7);
	CHECK(json_object_get(v, "credentials") == NULL);
	CHECK(engine_uuid_check(json_string_value(json_object_get(v,
	    "id"))) == 0);
	/* an operation without an id is named as Dify names it */
	CHECK(strstr(tn_dump(json_object_get(v, "tools")),
	    "\"name\":\"text_get\"") != NULL);
	json_decref(v);
	CHECK(engine_tool_provider_list(tn_engine, &l) == 0);
	CHECK_INT(json_array_size(json_object_get(l, "data")), 1);
	json_decref(l);
	CHECK(engine_tool_provider_get(tn_engine, "pets", &v) == 0);
	CHECK_STR(json_string_value(json_object_get(json_object_get(v,
	    "credentials"), "api_key_value")), "tok");
	json_decref(v);
}

static void
test_invoke(void)
{
	struct tool_result	 r;
	char			 err[ENGINE_ERRMAX];
	json_t			*e;

	CHECK(call_op("getPet", json_pack("{s:s,s:s}", "petId", "7 a",
	    "X-Trace", "t1"), &r, err) == 0);
	e = echo(&r);
	CHECK_STR(json_string_value(json_object_get(e, "method")), "GET");
	CHECK_STR(json_string_value(json_object_get(e, "path")),
	    "/api/pets/7%20a");
	CHECK_STR(tn_dump(json_object_get(e, "query")), "{\"lang\":\"en\"}");
	CHECK_STR(echo_header(&r, "authorization"), "Bearer tok");
	CHECK_STR(echo_header(&r, "x-trace"), "t1");
	/* the raw text comes along with the json message */
	CHECK(strstr(res_text(&r), "\"method\": \"GET\"") != NULL);
	tool_result_release(&r);

	CHECK(call_op("getPet", json_pack("{s:i,s:b}", "petId", 7, "verbose",
	    1), &r, err) == 0);
	CHECK_STR(json_string_value(json_object_get(echo(&r), "path")),
	    "/api/pets/7");
	CHECK_STR(tn_dump(json_object_get(echo(&r), "query")),
	    "{\"lang\":\"en\",\"verbose\":\"True\"}");
	tool_result_release(&r);

	CHECK(call_op("createPet", json_pack("{s:s,s:s}", "name", "Rex",
	    "age", "3"), &r, err) == 0);
	e = echo(&r);
	CHECK_STR(json_string_value(json_object_get(e, "method")), "POST");
	CHECK_STR(tn_dump(json_object_get(e, "body")),
	    "{\"age\":3,\"name\":\"Rex\",\"tags\":null}");
	CHECK_STR(echo_header(&r, "content-type"), "application/json");
	tool_result_release(&r);

	CHECK(call_op("createPet", json_pack("{s:s}", "age", "3"), &r, err) ==
	    ENGINE_EINVAL);
	CHECK_STR(err, "Missing required parameter name in operation "
	    "createPet");
	tool_result_release(&r);
	CHECK(call_op("getPet", NULL, &r, err) == ENGINE_EINVAL);
	CHECK_STR(err, "Missing required parameter petId");
	tool_result_release(&r);

	CHECK(call_op("formOp", json_pack("{s:s}", "q", "a b&c"), &r, err) ==
	    0);
	CHECK_STR(json_string_value(json_object_get(echo(&r), "body")),
	    "q=a+b%26c&n=5");
	CHECK_STR(echo_header(&r, "content-type"),
	    "application/x-www-form-urlencoded");
	tool_result_release(&r);

	CHECK(call_op("text_get", NULL, &r, err) == 0);
	CHECK_STR(res_text(&r), "plain answer");
	CHECK(r.json == NULL);
	tool_result_release(&r);
	CHECK(call_op("listOp", NULL, &r, err) == 0);
	CHECK_STR(res_text(&r), "[1, \"two\", {\"three\": 3}]");
	CHECK(r.json == NULL);
	tool_result_release(&r);
	CHECK(call_op("emptyOp", NULL, &r, err) == 0);
	CHECK_STR(res_text(&r), "Empty response from the tool, please check "
	    "your parameters and try again.");
	tool_result_release(&r);
	CHECK(call_op("failOp", NULL, &r, err) == ENGINE_EINVAL);
	CHECK_STR(err, "Request failed with status code 500 and server "
	    "exploded");
	tool_result_release(&r);
	CHECK(call_op("nope", NULL, &r, err) == ENGINE_ENOTFOUND);
	CHECK(strstr(err, "'pets/nope' is not available in flowcgi") != NULL);
	tool_result_release(&r);
	CHECK(tool_call_simple("no-such", "api", "getPet", NULL, &r, err) ==
	    ENGINE_ENOTFOUND);
	CHECK(strstr(err, "'no-such/getPet' is not available in flowcgi") !=
	    NULL);
	tool_result_release(&r);
}

static void
test_auth(void)
{
	struct tool_result	 r;
	json_t			*v = NULL;
	char			 err[ENGINE_ERRMAX];

	CHECK(put("pets", NULL, json_pack("{s:s,s:s,s:s,s:s}", "auth_type",
	    "api_key_header", "api_key_value", "k1", "api_key_header",
	    "X-Api-Key", "api_key_header_prefix", "custom"), &v, err) == 0);
	json_decref(v);
	CHECK(call_op("getPet", json_pack("{s:s}", "petId", "1"), &r, err) ==
	    0);
	CHECK_STR(echo_header(&r, "x-api-key"), "k1");
	CHECK(echo_header(&r, "authorization") == NULL);
	tool_result_release(&r);

	CHECK(put("pets", NULL, json_pack("{s:s,s:s,s:s}", "auth_type",
	    "api_key_header", "api_key_value", "dXNlcjpwYXNz",
	    "api_key_header_prefix", "basic"), &v, err) == 0);
	json_decref(v);
	CHECK(call_op("getPet", json_pack("{s:s}", "petId", "1"), &r, err) ==
	    0);
	CHECK_STR(echo_header(&r, "authorization"), "Basic dXNlcjpwYXNz");
	tool_result_release(&r);

	CHECK(put("pets", NULL, json_pack("{s:s,s:s,s:s}", "auth_type",
	    "api_key_query", "api_key_value", "q1", "api_key_query_param",
	    "token"), &v, err) == 0);
	json_decref(v);
	CHECK(call_op("getPet", json_pack("{s:s}", "petId", "1"), &r, err) ==
	    0);
	CHECK_STR(tn_dump(json_object_get(echo(&r), "query")),
	    "{\"lang\":\"en\",\"token\":\"q1\"}");
	tool_result_release(&r);

	CHECK(put("pets", NULL, json_pack("{s:s,s:s}", "auth_type",
	    "api_key_header", "api_key_value", ""), &v, err) == 0);
	json_decref(v);
	CHECK(call_op("getPet", json_pack("{s:s}", "petId", "1"), &r, err) ==
	    ENGINE_EINVAL);
	CHECK(strstr(err, "api_key_value") != NULL);
	tool_result_release(&r);

	CHECK(put("pets", NULL, NULL, &v, err) == 0);
	json_decref(v);
	CHECK(call_op("getPet", json_pack("{s:s}", "petId", "1"), &r, err) ==
	    0);
	CHECK(echo_header(&r, "authorization") == NULL);
	tool_result_release(&r);
}

static void
test_by_id(void)
{
	struct tool_call	 call;
	struct tool_result	 r;
	json_t			*v = NULL, *d = NULL, *p;
	char			 err[ENGINE_ERRMAX];

	CHECK(put("List and Get Pets", "e64b4c7f-2795-499c-8d11-a971a7d57fc9",
	    NULL, &v, err) == 0);
	CHECK_STR(json_string_value(json_object_get(v, "id")),
	    "e64b4c7f-2795-499c-8d11-a971a7d57fc9");
	json_decref(v);
	memset(&call, 0, sizeof(call));
	memset(&r, 0, sizeof(r));
	call.provider = "e64b4c7f-2795-499c-8d11-a971a7d57fc9";
	call.provider_type = "api";
	call.provider_name = "renamed in the DSL";
	call.tool = "getPet";
	call.params = p = json_pack("{s:s}", "petId", "9");
	CHECK(tool_invoke(tn_engine, &call, err, &r) == 0);
	CHECK_STR(json_string_value(json_object_get(echo(&r), "path")),
	    "/api/pets/9");
	tool_result_release(&r);

	call.tool = "createPet";
	CHECK(tool_describe(tn_engine, &call, err, &d) == 0);
	CHECK_STR(json_string_value(json_object_get(json_array_get(d, 0),
	    "description")), "Make a pet");
	CHECK_STR(tn_dump(json_object_get(json_object_get(json_array_get(d,
	    0), "parameters"), "required")), "[\"name\"]");
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    json_object_get(json_object_get(json_array_get(d, 0),
	    "parameters"), "properties"), "age"), "type")), "integer");
	json_decref(d);
	call.tool = NULL;
	CHECK(tool_describe(tn_engine, &call, err, &d) == 0);
	CHECK_INT(json_array_size(d), 7);
	json_decref(d);

	/* the guard: the server URL comes from app content */
	tn_conf.http_allow_private = 0;
	call.tool = "getPet";
	CHECK(tool_invoke(tn_engine, &call, err, &r) == ENGINE_EFETCH);
	tool_result_release(&r);
	tn_conf.http_allow_private = 1;
	json_decref(p);

	CHECK(engine_tool_provider_delete(tn_engine, "List and Get Pets") ==
	    0);
	CHECK(engine_tool_provider_delete(tn_engine, "List and Get Pets") ==
	    ENGINE_ENOTFOUND);
	CHECK(engine_tool_provider_list(tn_engine, &v) == 0);
	CHECK_INT(json_array_size(json_object_get(v, "data")), 1);
	json_decref(v);
}

int
main(void)
{
	tn_open();
	if (!fake_begin()) {
		tn_close();
		return tap_done();
	}
	tn_conf.http_allow_private = 1;
	make_schema();
	test_import();
	test_invoke();
	test_auth();
	test_by_id();
	fake_stop();
	tn_close();
	return tap_done();
}
