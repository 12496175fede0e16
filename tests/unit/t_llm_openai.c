/*
 * t_llm_openai.c — the OpenAI-compatible protocol against
 * tests/fakes/fake_llm.py: plain and streamed text, reasoning, tool calls
 * (parallel, both ways), usage, finish reasons, vision parts, structured
 * output, completion params, retries on 429 / 5xx, provider errors without
 * the key, timeouts, a stopped stream, a truncated stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/t_llm_fake.h"

#define KEY "sk-test-secret-0123456789"

static struct llm_message	msgs[2];
static struct llm_request	rq;

/* A request with a system and a user message for model "gpt-test". */
static void
req_reset(const char *user)
{
	memset(msgs, 0, sizeof(msgs));
	memset(&rq, 0, sizeof(rq));
	msgs[0].role = LLM_SYSTEM;
	msgs[0].content = "You are terse.";
	msgs[1].role = LLM_USER;
	msgs[1].content = user;
	rq.model = "gpt-test";
	rq.messages = msgs;
	rq.nmessages = 2;
}

static void
test_plain(void)
{
	struct llm_response	 r;
	json_t			*reqs, *b, *params;
	char			 err[ENGINE_ERRMAX] = "";

	fk_script("[{\"text\": \"Hello there\", \"usage\": {\"prompt_tokens\":"
	    " 12, \"completion_tokens\": 3}, \"model\": \"gpt-test-0613\"}]");
	req_reset("hi");
	params = json_pack("{s:f, s:i, s:[s], s:i, s:s, s:n}", "temperature",
	    0.25, "max_tokens", 99, "stop", "END", "top_k", 5, "json_schema",
	    "x", "seed");
	rq.params = params;
	memset(&r, 0, sizeof(r));
	CHECK(llm_chat(fk_eng, "langgenius/fake/fake", &rq, err, &r) == 0);
	CHECK_STR(r.text, "Hello there");
	CHECK_INT(r.text_len, 11);
	CHECK_STR(r.reasoning == NULL ? "" : r.reasoning, "");
	CHECK_STR(r.finish_reason, "stop");
	CHECK_STR(r.model, "gpt-test-0613");
	CHECK_INT(r.usage.prompt_tokens, 12);
	CHECK_INT(r.usage.completion_tokens, 3);
	CHECK_INT(r.usage.total_tokens, 15);
	CHECK_INT(r.attempts, 1);
	CHECK(r.latency > 0);
	CHECK_INT(r.ntool_calls, 0);
	reqs = fk_requests();
	CHECK_INT(json_array_size(reqs), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(reqs, 0),
	    "path")), "/v1/chat/completions");
	CHECK_STR(fk_header(reqs, 0, "authorization"), "Bearer " KEY);
	b = fk_body(reqs, 0);
	CHECK_STR(json_string_value(json_object_get(b, "model")), "gpt-test");
	CHECK(json_object_get(b, "stream") == NULL);
	CHECK_STR(json_string_value(json_object_get(json_array_get(
	    json_object_get(b, "messages"), 0), "role")), "system");
	CHECK_STR(json_string_value(json_object_get(json_array_get(
	    json_object_get(b, "messages"), 1), "content")), "hi");
	CHECK(json_real_value(json_object_get(b, "temperature")) == 0.25);
	CHECK_INT(json_integer_value(json_object_get(b, "max_tokens")), 99);
	CHECK_STR(json_string_value(json_array_get(json_object_get(b, "stop"),
	    0)), "END");
	/* Extra params reach a server that is not api.openai.com; Dify's
	 * own json_schema param and null values do not. */
	CHECK_INT(json_integer_value(json_object_get(b, "top_k")), 5);
	CHECK(json_object_get(b, "json_schema") == NULL);
	CHECK(json_object_get(b, "seed") == NULL);
	json_decref(reqs);
	json_decref(params);
	llm_response_release(&r);
}

static void
test_stream(void)
{
	struct llm_response	 r;
	struct fk_deltas	 d;
	json_t			*reqs, *b;
	char			 err[ENGINE_ERRMAX] = "";

	fk_script("[{\"chunks\": [\"Hel\", \"lo \", \"wor\", \"ld\"], "
	    "\"reasoning\": \"thinking it over\", \"delay\": 0.01, "
	    "\"usage\": {\"prompt_tokens\": 7, \"completion_tokens\": 4}}]");
	req_reset("stream please");
	fk_stream(&rq, &d);
	memset(&r, 0, sizeof(r));
	CHECK(llm_chat(fk_eng, "fake", &rq, err, &r) == 0);
	CHECK_STR(d.text, "Hel|lo |wor|ld");
	CHECK_INT(d.ntext, 4);
	CHECK_STR(d.reasoning, "thinking it over");
	CHECK_STR(r.text, "Hello world");
	CHECK_STR(r.reasoning, "thinking it over");
	CHECK_STR(r.finish_reason, "stop");
	CHECK_INT(r.usage.prompt_tokens, 7);
	CHECK_INT(r.usage.completion_tokens, 4);
	CHECK_INT(r.usage.total_tokens, 11);
	CHECK(r.first_token > 0 && r.first_token <= r.latency);
	reqs = fk_requests();
	b = fk_body(reqs, 0);
	CHECK(json_is_true(json_object_get(b, "stream")));
	CHECK(json_is_true(json_object_get(json_object_get(b,
	    "stream_options"), "include_usage")));
	CHECK_STR(fk_header(reqs, 0, "accept"), "text/event-stream");
	json_decref(reqs);
	llm_response_release(&r);
}

static void
check_calls(const struct llm_response *r)
{
	CHECK_INT(r->ntool_calls, 2);
	if (r->ntool_calls != 2)
		return;
	CHECK_STR(r->tool_calls[0].id, "call_a");
	CHECK_STR(r->tool_calls[0].name, "get_weather");
	CHECK_STR(r->tool_calls[0].arguments, "{\"city\": \"Paris\"}");
	CHECK_STR(r->tool_calls[1].id, "call_b");
	CHECK_STR(r->tool_calls[1].name, "get_time");
	CHECK_STR(r->tool_calls[1].arguments, "{\"tz\": \"CET\"}");
	CHECK_STR(r->finish_reason, "tool_calls");
}

static void
test_tools(int stream)
{
	struct llm_response	 r;
	struct llm_tool		 tools[2];
	json_t			*reqs, *b, *schema, *t;
	char			 err[ENGINE_ERRMAX] = "";

	fk_script("[{\"tool_calls\": [{\"id\": \"call_a\", \"name\": "
	    "\"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, {\"id\": "
	    "\"call_b\", \"name\": \"get_time\", \"arguments\": {\"tz\": "
	    "\"CET\"}}]}]");
	req_reset("weather and time in Paris?");
	schema = json_pack("{s:s, s:{s:{s:s}}, s:[s]}", "type", "object",
	    "properties", "city", "type", "string", "required", "city");
	fk_tools(&rq, tools, schema);
	rq.tool_choice = "auto";
	rq.stream = stream;
	memset(&r, 0, sizeof(r));
	CHECK(llm_chat(fk_eng, "fake", &rq, err, &r) == 0);
	check_calls(&r);
	CHECK_STR(r.text, "");
	reqs = fk_requests();
	b = fk_body(reqs, 0);
	t = json_array_get(json_object_get(b, "tools"), 0);
	CHECK_STR(json_string_value(json_object_get(t, "type")), "function");
	CHECK_STR(json_string_value(json_object_get(json_object_get(t,
	    "function"), "name")), "get_weather");
	CHECK(json_equal(json_object_get(json_object_get(t, "function"),
	    "parameters"), schema));
	t = json_array_get(json_object_get(b, "tools"), 1);
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    json_object_get(t, "function"), "parameters"), "type")), "object");
	CHECK_STR(json_string_value(json_object_get(b, "tool_choice")), "auto");
	json_decref(reqs);
	json_decref(schema);
	llm_response_release(&r);
}

/* The calls and their results sent back for the next turn. */
static void
test_tool_results(void)
{
	struct llm_message	 m[5];
	struct llm_tool_call	 calls[2] = {
		{ "call_a", "get_weather", "{\"city\":\"Paris\"}" },
		{ "call_b", "get_time", "{}" },
	};
	struct llm_response	 r;
	json_t			*reqs, *ms, *a;
	char			 err[ENGINE_ERRMAX] = "";

	fk_script("[{\"text\": \"Sunny, 10:00\"}]");
	req_reset("weather?");
	memset(m, 0, sizeof(m));
	m[0] = msgs[1];
	m[1].role = LLM_ASSISTANT;
	m[1].tool_calls = calls;
	m[1].ntool_calls = 2;
	m[2].role = LLM_TOOL;
	m[2].tool_call_id = "call_a";
	m[2].content = "sunny";
	m[3].role = LLM_TOOL;
	m[3].tool_call_id = "call_b";
	m[3].content = "10:00";
	rq.messages = m;
	rq.nmessages = 4;
	memset(&r, 0, sizeof(r));
	CHECK(llm_chat(fk_eng, "fake", &rq, err, &r) == 0);
	CHECK_STR(r.text, "Sunny, 10:00");
	reqs = fk_requests();
	ms = json_object_get(fk_body(reqs, 0), "messages");
	CHECK_INT(json_array_size(ms), 4);
	a = json_array_get(ms, 1);
	CHECK_STR(json_string_value(json_object_get(a, "role")), "assistant");
	CHECK(json_is_null(json_object_get(a, "content")));
	CHECK_STR(json_string_value(json_object_get(json_array_get(
	    json_object_get(a, "tool_calls"), 1), "id")), "call_b");
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    json_array_get(json_object_get(a, "tool_calls"), 0), "function"),
	    "arguments")), "{\"city\":\"Paris\"}");
	CHECK_STR(json_string_value(json_object_get(json_array_get(ms, 2),
	    "role")), "tool");
	CHECK_STR(json_string_value(json_object_get(json_array_get(ms, 3),
	    "tool_call_id")), "call_b");
	CHECK_STR(json_string_value(json_object_get(json_array_get(ms, 3),
	    "content")), "10:00");
	json_decref(reqs);
	llm_response_release(&r);
}

static void
test_vision(void)
{
	struct llm_part		 parts[3] = {
		{ LLM_PART_TEXT, "What is in these images?", NULL },
		{ LLM_PART_IMAGE, "data:image/png;base64,iVBORw0KGgo=", "low" },
		{ LLM_PART_IMAGE, "https://example.com/cat.jpg", NULL },
	};
	struct llm_response	 r;
	json_t			*reqs, *c;
	char			 err[ENGINE_ERRMAX] = "";

	fk_script("[{\"text\": \"A cat.\"}]");
	req_reset(NULL);
	msgs[1].parts = parts;
	msgs[1].nparts = 3;
	memset(&r, 0, sizeof(r));
	CHECK(llm_chat(fk_eng, "fake", &rq, err, &r) == 0);
	CHECK_STR(r.text, "A cat.");
	reqs = fk_requests();
	c = json_object_get(json_array_get(json_object_get(fk_body(reqs, 0),
	    "messages"), 1), "content");
	CHECK_INT(json_array_size(c), 3);
	CHECK_STR(json_string_value(json_object_get(json_array_get(c, 0),
	    "type")), "text");
	CHECK_STR(json_string_value(json_object_get(json_array_get(c, 1),
	    "type")), "image_url");
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    json_array_get(c, 1), "image_url"), "url")),
	    "data:image/png;base64,iVBORw0KGgo=");
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    json_array_get(c, 1), "image_url"), "detail")), "low");
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    json_array_get(c, 2), "image_url"), "url")),
	    "https://example.com/cat.jpg");
	json_decref(reqs);
	llm_response_release(&r);
}

static void
test_schema(void)
{
	struct llm_response	 r;
	json_t			*reqs, *rf, *schema, *params;
	char			 err[ENGINE_ERRMAX] = "";

	fk_script("[{\"text\": \"{\\\"a\\\": 1}\"}, {\"text\": \"{}\"}, "
	    "{\"text\": \"{}\"}]");
	req_reset("json please");
	schema = json_pack("{s:s, s:{s:{s:s}}}", "type", "object",
	    "properties", "a", "type", "integer");
	rq.response_schema = schema;
	rq.response_schema_name = "answer";
	memset(&r, 0, sizeof(r));
	CHECK(llm_chat(fk_eng, "fake", &rq, err, &r) == 0);
	CHECK_STR(r.text, "{\"a\": 1}");
	llm_response_release(&r);
	/* Dify's completion params: response_format json_object, and
	 * json_schema text with response_format json_schema. */
	req_reset("json please");
	params = json_pack("{s:s}", "response_format", "json_object");
	rq.params = params;
	CHECK(llm_chat(fk_eng, "fake", &rq, err, &r) == 0);
	llm_response_release(&r);
	json_decref(params);
	params = json_pack("{s:s, s:s}", "response_format", "json_schema",
	    "json_schema", "{\"name\": \"n\", \"schema\": {\"type\": "
	    "\"object\"}}");
	rq.params = params;
	CHECK(llm_chat(fk_eng, "fake", &rq, err, &r) == 0);
	llm_response_release(&r);
	reqs = fk_requests();
	rf = json_object_get(fk_body(reqs, 0), "response_format");
	CHECK_STR(json_string_value(json_object_get(rf, "type")),
	    "json_schema");
	CHECK_STR(json_string_value(json_object_get(json_object_get(rf,
	    "json_schema"), "name")), "answer");
	CHECK(json_equal(json_object_get(json_object_get(rf, "json_schema"),
	    "schema"), schema));
	rf = json_object_get(fk_body(reqs, 1), "response_format");
	CHECK_STR(json_string_value(json_object_get(rf, "type")),
	    "json_object");
	rf = json_object_get(fk_body(reqs, 2), "response_format");
	CHECK_STR(json_string_value(json_object_get(json_object_get(rf,
	    "json_schema"), "name")), "n");
	CHECK(json_object_get(fk_body(reqs, 2), "json_schema") == NULL);
	json_decref(reqs);
	json_decref(params);
	json_decref(schema);
}

static void
test_retry(void)
{
	struct llm_response	 r;
	json_t			*reqs;
	char			 err[ENGINE_ERRMAX] = "";
	double			 t0;
	int			 rc;

	/*
	 * 429 with Retry-After, then an answer. Retry-After is 30 s and
	 * llm.max_backoff_ms 50 ms: under 10 s is the cap however loaded the
	 * machine, over it the cap is gone (how fast is make bench's).
	 */
	fk_script("[{\"status\": 429, \"retry_after\": 30, \"error\": "
	    "\"Rate limit reached for requests\", \"error_type\": "
	    "\"requests\"}, {\"text\": \"after retry\"}]");
	req_reset("retry me");
	memset(&r, 0, sizeof(r));
	t0 = llm_clock();
	CHECK(llm_chat(fk_eng, "fake", &rq, err, &r) == 0);
	CHECK(llm_clock() - t0 >= 0.01);	/* llm.backoff_ms */
	CHECK(llm_clock() - t0 < 10);	/* llm.max_backoff_ms caps */
	CHECK_STR(r.text, "after retry");
	CHECK_INT(r.attempts, 2);
	reqs = fk_requests();
	CHECK_INT(json_array_size(reqs), 2);
	json_decref(reqs);
	llm_response_release(&r);

	/* 500 every time: llm.retries + 1 requests, then a clear error. */
	fk_script("[{\"status\": 500, \"error\": \"The server had an "
	    "error\", \"repeat\": true}]");
	rc = llm_chat(fk_eng, "fake", &rq, err, &r);
	CHECK_INT(rc, ENGINE_EFETCH);
	CHECK_STR(err, "fake: 500 The server had an error (after 4 attempts)");
	reqs = fk_requests();
	CHECK_INT(json_array_size(reqs), 4);
	json_decref(reqs);
	CHECK(r.text == NULL);

	/* 400 is not retried. */
	fk_script("[{\"status\": 400, \"error\": \"Invalid 'messages'\", "
	    "\"repeat\": true}]");
	CHECK_INT(llm_chat(fk_eng, "fake", &rq, err, &r), ENGINE_EFETCH);
	CHECK_STR(err, "fake: 400 Invalid 'messages'");
	reqs = fk_requests();
	CHECK_INT(json_array_size(reqs), 1);
	json_decref(reqs);
}

static void
test_errors(void)
{
	struct llm_response	 r;
	json_t			*reqs;
	char			 err[ENGINE_ERRMAX] = "";
	double			 t0;

	memset(&r, 0, sizeof(r));
	req_reset("hello");
	/* A wrong key: the provider's message, never the key. */
	fk_script("{\"api_key\": \"sk-the-right-one\", \"responses\": []}");
	CHECK_INT(llm_chat(fk_eng, "fake", &rq, err, &r), ENGINE_EFETCH);
	CHECK_STR(err, "fake: 401 Incorrect API key provided");
	reqs = fk_requests();
	CHECK_INT(json_array_size(reqs), 1);
	json_decref(reqs);

	/* A provider that echoes the key back: it is redacted. */
	fk_script("[{\"status\": 403, \"error\": \"key " KEY " is "
	    "suspended\"}]");
	CHECK_INT(llm_chat(fk_eng, "fake", &rq, err, &r), ENGINE_EFETCH);
	CHECK(strstr(err, KEY) == NULL);
	CHECK_STR(err, "fake: 403 key [redacted] is suspended");

	/* A body that is not JSON. */
	fk_script("[{\"status\": 502, \"raw\": \"<html>Bad gateway</html>\","
	    " \"content_type\": \"text/html\", \"repeat\": true}]");
	CHECK_INT(llm_chat(fk_eng, "fake", &rq, err, &r), ENGINE_EFETCH);
	CHECK_STR(err, "fake: 502 <html>Bad gateway</html> (after 4 "
	    "attempts)");

	/* A slow first token past the request's timeout. */
	fk_script("[{\"text\": \"late\", \"first_delay\": 3}]");
	rq.timeout = 1;
	t0 = llm_clock();
	CHECK_INT(llm_chat(fk_eng, "fake", &rq, err, &r), ENGINE_EFETCH);
	CHECK(llm_clock() - t0 < 2.5);
	CHECK(strncmp(err, "fake: ", 6) == 0);
	CHECK(strstr(err, "timed out") != NULL);
	printf("# timeout: %s\n", err);
	rq.timeout = 0;

	/* No model name. */
	rq.model = "";
	CHECK_INT(llm_chat(fk_eng, "fake", &rq, err, &r), ENGINE_EINVAL);
	CHECK(strstr(err, "model.name") != NULL);
}

static void
test_stream_edges(void)
{
	struct llm_response	 r;
	struct fk_deltas	 d;
	json_t			*reqs;
	char			 err[ENGINE_ERRMAX] = "";

	memset(&r, 0, sizeof(r));
	/* on_delta asks to stop. */
	fk_script("[{\"chunks\": [\"a\", \"b\", \"c\", \"d\"]}]");
	req_reset("stop me");
	fk_stream(&rq, &d);
	d.stop_after = 2;
	CHECK_INT(llm_chat(fk_eng, "fake", &rq, err, &r), ENGINE_ESTOPPED);
	CHECK_STR(d.text, "a|b");
	CHECK_STR(err, "stopped");

	/* A stream cut before it ends: an error, and not retried once text
	 * went out. */
	fk_script("[{\"chunks\": [\"par\", \"tial\"], \"truncate\": true, "
	    "\"repeat\": true}]");
	memset(&d, 0, sizeof(d));
	CHECK_INT(llm_chat(fk_eng, "fake", &rq, err, &r), ENGINE_EFETCH);
	CHECK(strstr(err, "ended before") != NULL);
	reqs = fk_requests();
	CHECK_INT(json_array_size(reqs), 1);
	json_decref(reqs);

	/* A server that ignores "stream" and answers with one object. */
	fk_script("[{\"raw\": \"{\\\"choices\\\": [{\\\"message\\\": "
	    "{\\\"content\\\": \\\"whole\\\"}, \\\"finish_reason\\\": "
	    "\\\"length\\\"}], \\\"usage\\\": {\\\"prompt_tokens\\\": 2, "
	    "\\\"completion_tokens\\\": 1}}\"}]");
	memset(&d, 0, sizeof(d));
	CHECK(llm_chat(fk_eng, "fake", &rq, err, &r) == 0);
	CHECK_STR(r.text, "whole");
	CHECK_STR(d.text, "whole");
	CHECK_STR(r.finish_reason, "length");
	CHECK_INT(r.usage.total_tokens, 3);
	llm_response_release(&r);

	/* finish_reason length while streaming. */
	fk_script("[{\"chunks\": [\"cut\"], \"finish_reason\": \"length\"}]");
	memset(&d, 0, sizeof(d));
	CHECK(llm_chat(fk_eng, "fake", &rq, err, &r) == 0);
	CHECK_STR(r.finish_reason, "length");
	llm_response_release(&r);
}

static void
test_usage_json(void)
{
	struct llm_response	 r;
	json_t			*u;

	memset(&r, 0, sizeof(r));
	r.usage.prompt_tokens = 5;
	r.usage.completion_tokens = 6;
	r.usage.total_tokens = 11;
	r.latency = 1.5;
	u = llm_usage_json(&r);
	CHECK_INT(json_integer_value(json_object_get(u, "total_tokens")), 11);
	CHECK_STR(json_string_value(json_object_get(u, "currency")), "USD");
	CHECK(json_real_value(json_object_get(u, "latency")) == 1.5);
	json_decref(u);
}

int
main(void)
{
	if (fk_setup("fake", "openai", KEY) == 0) {
		test_plain();
		test_stream();
		test_tools(0);
		test_tools(1);
		test_tool_results();
		test_vision();
		test_schema();
		test_retry();
		test_errors();
		test_stream_edges();
		test_usage_json();
	}
	fk_cleanup();
	return tap_done();
}
