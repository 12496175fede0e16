/*
 * t_llm_anthropic.c — the Anthropic Messages protocol against
 * tests/fakes/fake_llm.py: headers, the system prompt, text and streamed
 * text with thinking, tool calls (parallel, both ways) and tool results
 * merged into one user message, images, structured output through a
 * forced tool, stop reasons, usage, errors and retries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/t_llm_fake.h"

#define KEY "sk-ant-test-0123456789"

static struct llm_message	msgs[3];
static struct llm_request	rq;

static void
req_reset(const char *user)
{
	memset(msgs, 0, sizeof(msgs));
	memset(&rq, 0, sizeof(rq));
	msgs[0].role = LLM_SYSTEM;
	msgs[0].content = "You are terse.";
	msgs[1].role = LLM_SYSTEM;
	msgs[1].content = "Answer in English.";
	msgs[2].role = LLM_USER;
	msgs[2].content = user;
	rq.model = "claude-test";
	rq.messages = msgs;
	rq.nmessages = 3;
}

static void
test_plain(void)
{
	struct llm_response	 r;
	json_t			*reqs, *b, *params;
	char			 err[ENGINE_ERRMAX] = "";

	fk_script("[{\"text\": \"Bonjour\", \"usage\": {\"prompt_tokens\": 20,"
	    " \"completion_tokens\": 2}}]");
	req_reset("hi");
	params = json_pack("{s:f, s:i, s:[s], s:f}", "temperature", 0.5,
	    "top_k", 3, "stop", "END", "presence_penalty", 0.1);
	rq.params = params;
	memset(&r, 0, sizeof(r));
	CHECK(llm_chat(fk_eng, "claude", &rq, err, &r) == 0);
	CHECK_STR(r.text, "Bonjour");
	CHECK_STR(r.finish_reason, "stop");	/* end_turn */
	CHECK_STR(r.model, "claude-test");
	CHECK_INT(r.usage.prompt_tokens, 20);
	CHECK_INT(r.usage.completion_tokens, 2);
	CHECK_INT(r.usage.total_tokens, 22);
	reqs = fk_requests();
	CHECK_STR(json_string_value(json_object_get(json_array_get(reqs, 0),
	    "path")), "/v1/messages");
	CHECK_STR(fk_header(reqs, 0, "x-api-key"), KEY);
	CHECK_STR(fk_header(reqs, 0, "anthropic-version"), "2023-06-01");
	CHECK(fk_header(reqs, 0, "authorization") == NULL);
	b = fk_body(reqs, 0);
	CHECK_STR(json_string_value(json_object_get(b, "system")),
	    "You are terse.\n\nAnswer in English.");
	CHECK_INT(json_array_size(json_object_get(b, "messages")), 1);
	CHECK_INT(json_integer_value(json_object_get(b, "max_tokens")), 4096);
	CHECK(json_real_value(json_object_get(b, "temperature")) == 0.5);
	CHECK_INT(json_integer_value(json_object_get(b, "top_k")), 3);
	CHECK_STR(json_string_value(json_array_get(json_object_get(b,
	    "stop_sequences"), 0)), "END");
	CHECK(json_object_get(b, "presence_penalty") == NULL);
	CHECK(json_object_get(b, "stop") == NULL);
	json_decref(reqs);
	json_decref(params);
	llm_response_release(&r);
}

static void
test_stream(void)
{
	struct llm_response	 r;
	struct fk_deltas	 d;
	json_t			*reqs, *params;
	char			 err[ENGINE_ERRMAX] = "";

	fk_script("[{\"chunks\": [\"One\", \" two\", \" three\"], "
	    "\"reasoning\": \"count\", \"delay\": 0.01, \"finish_reason\": "
	    "\"max_tokens\", \"usage\": {\"prompt_tokens\": 9, "
	    "\"completion_tokens\": 3}}]");
	req_reset("count");
	params = json_pack("{s:i}", "max_tokens", 3);
	rq.params = params;
	fk_stream(&rq, &d);
	memset(&r, 0, sizeof(r));
	CHECK(llm_chat(fk_eng, "claude", &rq, err, &r) == 0);
	CHECK_STR(d.text, "One| two| three");
	CHECK_STR(d.reasoning, "count");
	CHECK_STR(r.text, "One two three");
	CHECK_STR(r.reasoning, "count");
	CHECK_STR(r.finish_reason, "length");	/* max_tokens */
	CHECK_INT(r.usage.prompt_tokens, 9);
	CHECK_INT(r.usage.completion_tokens, 3);
	CHECK_INT(r.usage.total_tokens, 12);
	reqs = fk_requests();
	CHECK(json_is_true(json_object_get(fk_body(reqs, 0), "stream")));
	CHECK_INT(json_integer_value(json_object_get(fk_body(reqs, 0),
	    "max_tokens")), 3);
	json_decref(reqs);
	json_decref(params);
	llm_response_release(&r);
}

static void
test_tools(int stream)
{
	struct llm_response	 r;
	struct llm_tool		 tools[2];
	json_t			*reqs, *b, *schema, *t;
	char			 err[ENGINE_ERRMAX] = "";

	fk_script("[{\"text\": \"Let me check.\", \"tool_calls\": [{\"id\": "
	    "\"toolu_a\", \"name\": \"get_weather\", \"arguments\": {\"city\":"
	    " \"Paris\"}}, {\"id\": \"toolu_b\", \"name\": \"get_time\", "
	    "\"arguments\": {}}]}]");
	req_reset("weather and time?");
	schema = json_pack("{s:s, s:{s:{s:s}}}", "type", "object",
	    "properties", "city", "type", "string");
	fk_tools(&rq, tools, schema);
	rq.tool_choice = "required";
	rq.stream = stream;
	memset(&r, 0, sizeof(r));
	CHECK(llm_chat(fk_eng, "claude", &rq, err, &r) == 0);
	CHECK_STR(r.text, "Let me check.");
	CHECK_INT(r.ntool_calls, 2);
	if (r.ntool_calls == 2) {
		CHECK_STR(r.tool_calls[0].id, "toolu_a");
		CHECK_STR(r.tool_calls[0].name, "get_weather");
		CHECK_STR(r.tool_calls[0].arguments, stream ?
		    "{\"city\": \"Paris\"}" : "{\"city\":\"Paris\"}");
		CHECK_STR(r.tool_calls[1].id, "toolu_b");
		CHECK_STR(r.tool_calls[1].arguments, "{}");
	}
	CHECK_STR(r.finish_reason, "tool_calls");	/* tool_use */
	reqs = fk_requests();
	b = fk_body(reqs, 0);
	t = json_array_get(json_object_get(b, "tools"), 0);
	CHECK_STR(json_string_value(json_object_get(t, "name")),
	    "get_weather");
	CHECK(json_equal(json_object_get(t, "input_schema"), schema));
	CHECK_STR(json_string_value(json_object_get(json_object_get(b,
	    "tool_choice"), "type")), "any");
	json_decref(reqs);
	json_decref(schema);
	llm_response_release(&r);
}

static void
test_tool_results_and_images(void)
{
	struct llm_part		 parts[3] = {
		{ LLM_PART_TEXT, "And this picture?", NULL },
		{ LLM_PART_IMAGE, "data:image/jpeg;base64,/9j/4AAQ", NULL },
		{ LLM_PART_IMAGE, "https://example.com/a.png", NULL },
	};
	struct llm_tool_call	 calls[2] = {
		{ "toolu_a", "get_weather", "{\"city\":\"Paris\"}" },
		{ "toolu_b", "get_time", "" },
	};
	struct llm_message	 m[6];
	struct llm_response	 r;
	json_t			*reqs, *ms, *c;
	char			 err[ENGINE_ERRMAX] = "";

	fk_script("[{\"text\": \"Sunny; a cat.\"}]");
	req_reset("weather?");
	memset(m, 0, sizeof(m));
	m[0] = msgs[0];
	m[1] = msgs[2];
	m[2].role = LLM_ASSISTANT;
	m[2].content = "Checking.";
	m[2].tool_calls = calls;
	m[2].ntool_calls = 2;
	m[3].role = LLM_TOOL;
	m[3].tool_call_id = "toolu_a";
	m[3].content = "sunny";
	m[4].role = LLM_TOOL;
	m[4].tool_call_id = "toolu_b";
	m[4].content = "10:00";
	m[5].role = LLM_USER;
	m[5].parts = parts;
	m[5].nparts = 3;
	rq.messages = m;
	rq.nmessages = 6;
	memset(&r, 0, sizeof(r));
	CHECK(llm_chat(fk_eng, "claude", &rq, err, &r) == 0);
	CHECK_STR(r.text, "Sunny; a cat.");
	reqs = fk_requests();
	ms = json_object_get(fk_body(reqs, 0), "messages");
	/* user, assistant, then one user message with both results and the
	 * next question. */
	CHECK_INT(json_array_size(ms), 3);
	c = json_object_get(json_array_get(ms, 1), "content");
	CHECK_STR(json_string_value(json_object_get(json_array_get(c, 0),
	    "text")), "Checking.");
	CHECK_STR(json_string_value(json_object_get(json_array_get(c, 1),
	    "type")), "tool_use");
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    json_array_get(c, 1), "input"), "city")), "Paris");
	CHECK(json_is_object(json_object_get(json_array_get(c, 2), "input")));
	c = json_object_get(json_array_get(ms, 2), "content");
	CHECK_STR(json_string_value(json_object_get(json_array_get(ms, 2),
	    "role")), "user");
	CHECK_INT(json_array_size(c), 5);
	CHECK_STR(json_string_value(json_object_get(json_array_get(c, 0),
	    "type")), "tool_result");
	CHECK_STR(json_string_value(json_object_get(json_array_get(c, 1),
	    "tool_use_id")), "toolu_b");
	CHECK_STR(json_string_value(json_object_get(json_array_get(c, 1),
	    "content")), "10:00");
	CHECK_STR(json_string_value(json_object_get(json_array_get(c, 2),
	    "text")), "And this picture?");
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    json_array_get(c, 3), "source"), "type")), "base64");
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    json_array_get(c, 3), "source"), "media_type")), "image/jpeg");
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    json_array_get(c, 3), "source"), "data")), "/9j/4AAQ");
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    json_array_get(c, 4), "source"), "url")),
	    "https://example.com/a.png");
	json_decref(reqs);
	llm_response_release(&r);
}

static void
test_schema(int stream)
{
	struct llm_response	 r;
	json_t			*reqs, *b, *schema, *out;
	char			 err[ENGINE_ERRMAX] = "";

	fk_script("[{\"tool_calls\": [{\"id\": \"toolu_s\", \"name\": "
	    "\"answer\", \"arguments\": {\"a\": 1}}]}]");
	req_reset("json please");
	schema = json_pack("{s:s, s:{s:{s:s}}}", "type", "object",
	    "properties", "a", "type", "integer");
	rq.response_schema = schema;
	rq.response_schema_name = "answer";
	rq.stream = stream;
	memset(&r, 0, sizeof(r));
	CHECK(llm_chat(fk_eng, "claude", &rq, err, &r) == 0);
	out = json_loads(r.text, 0, NULL);
	CHECK_INT(json_integer_value(json_object_get(out, "a")), 1);
	CHECK_INT(r.ntool_calls, 0);
	CHECK_STR(r.finish_reason, "stop");
	reqs = fk_requests();
	b = fk_body(reqs, 0);
	CHECK_STR(json_string_value(json_object_get(json_array_get(
	    json_object_get(b, "tools"), 0), "name")), "answer");
	CHECK(json_equal(json_object_get(json_array_get(json_object_get(b,
	    "tools"), 0), "input_schema"), schema));
	CHECK_STR(json_string_value(json_object_get(json_object_get(b,
	    "tool_choice"), "type")), "tool");
	CHECK_STR(json_string_value(json_object_get(json_object_get(b,
	    "tool_choice"), "name")), "answer");
	json_decref(out);
	json_decref(reqs);
	json_decref(schema);
	llm_response_release(&r);
}

static void
test_errors(void)
{
	struct llm_response	 r;
	json_t			*reqs;
	char			 err[ENGINE_ERRMAX] = "";

	memset(&r, 0, sizeof(r));
	req_reset("hello");
	fk_script("{\"api_key\": \"sk-ant-right\", \"responses\": []}");
	CHECK_INT(llm_chat(fk_eng, "claude", &rq, err, &r), ENGINE_EFETCH);
	CHECK_STR(err, "claude: 401 invalid x-api-key");
	CHECK(strstr(err, KEY) == NULL);

	/* 529 overloaded, then an answer. */
	fk_script("[{\"status\": 529, \"error\": \"Overloaded\", "
	    "\"error_type\": \"overloaded_error\"}, {\"text\": \"fine\"}]");
	CHECK(llm_chat(fk_eng, "claude", &rq, err, &r) == 0);
	CHECK_STR(r.text, "fine");
	CHECK_INT(r.attempts, 2);
	llm_response_release(&r);
	reqs = fk_requests();
	CHECK_INT(json_array_size(reqs), 2);
	json_decref(reqs);

	/* A streamed request refused before the stream starts. */
	fk_script("[{\"status\": 400, \"error\": \"messages: roles must "
	    "alternate\", \"error_type\": \"invalid_request_error\"}]");
	rq.stream = 1;
	CHECK_INT(llm_chat(fk_eng, "claude", &rq, err, &r), ENGINE_EFETCH);
	CHECK_STR(err, "claude: 400 messages: roles must alternate");

	/* A stream cut before message_stop; retried, as nothing was
	 * passed on yet. */
	fk_script("[{\"chunks\": [\"half\"], \"truncate\": true, "
	    "\"repeat\": true}]");
	CHECK_INT(llm_chat(fk_eng, "claude", &rq, err, &r), ENGINE_EFETCH);
	CHECK(strstr(err, "ended before") != NULL);
	reqs = fk_requests();
	CHECK_INT(json_array_size(reqs), 4);
	json_decref(reqs);
}

int
main(void)
{
	if (fk_setup("claude", "anthropic", KEY) == 0) {
		test_plain();
		test_stream();
		test_tools(0);
		test_tools(1);
		test_tool_results_and_images();
		test_schema(0);
		test_schema(1);
		test_errors();
	}
	fk_cleanup();
	return tap_done();
}
