/*
 * anthropic.c — the Anthropic Messages protocol (POST <base_url>/v1/messages,
 * anthropic-version 2023-06-01).
 *
 * System messages become the top-level system text; tool results become
 * tool_result blocks of a user message, and consecutive messages of one
 * role are merged as the API requires. A stream is the event sequence
 * message_start, content_block_start / _delta (text_delta, thinking_delta,
 * input_json_delta) / _stop, message_delta (stop_reason, usage),
 * message_stop, with ping and error events. Structured output is asked for
 * with a forced tool whose input schema is the response schema; its input
 * becomes the answer text. This file fills the hooks of struct
 * llm_protocol; the exchange itself is chat.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/llm/llm.h"

#define API_VERSION	"2023-06-01"
#define MAX_BLOCKS	256
#define DEFAULT_MAX_TOKENS 4096

/* ====== Request body ====== */

static int
add_block(json_t *blocks, json_t *b)
{
	return b != NULL && json_array_append_new(blocks, b) == 0 ? 0 : -1;
}

/* An image part: a data: URL becomes a base64 source, else a URL one. */
static json_t *
image_block(const char *url)
{
	const char	*semi, *comma;
	char		 mt[64];

	if (strncmp(url, "data:", 5) == 0 &&
	    (comma = strchr(url, ',')) != NULL &&
	    (semi = strchr(url, ';')) != NULL && semi < comma &&
	    (size_t)(semi - url - 5) < sizeof(mt)) {
		snprintf(mt, sizeof(mt), "%.*s", (int)(semi - url - 5),
		    url + 5);
		return json_pack("{s:s, s:{s:s, s:s, s:s}}", "type", "image",
		    "source", "type", "base64", "media_type", mt, "data",
		    comma + 1);
	}
	return json_pack("{s:s, s:{s:s, s:s}}", "type", "image", "source",
	    "type", "url", "url", url);
}

/* The blocks of m's own content (text and images). */
static int
content_blocks(const struct llm_message *m, json_t *blocks)
{
	size_t i;

	if (m->nparts == 0) {
		if (m->content != NULL && *m->content != '\0')
			return add_block(blocks, json_pack("{s:s, s:s}",
			    "type", "text", "text", m->content));
		return 0;
	}
	for (i = 0; i < m->nparts; i++) {
		const struct llm_part *p = &m->parts[i];

		if (p->type == LLM_PART_IMAGE) {
			if (add_block(blocks, image_block(p->text)) != 0)
				return -1;
		} else if (p->text != NULL && *p->text != '\0' &&
		    add_block(blocks, json_pack("{s:s, s:s}", "type", "text",
		    "text", p->text)) != 0)
			return -1;
	}
	return 0;
}

/* The text of a message (system prompts, tool results). */
static void
message_text(const struct llm_message *m, struct dbuf *sb)
{
	size_t i;

	if (m->nparts == 0) {
		if (m->content != NULL)
			dbuf_addstr(sb, m->content);
		return;
	}
	for (i = 0; i < m->nparts; i++)
		if (m->parts[i].type == LLM_PART_TEXT &&
		    m->parts[i].text != NULL)
			dbuf_addstr(sb, m->parts[i].text);
}

/* Appends one message, merged into the last one when the role repeats. */
static int
push(json_t *msgs, const char *role, json_t *blocks)
{
	json_t	*last = json_array_get(msgs, json_array_size(msgs) - 1);
	int	 rc;

	if (json_array_size(blocks) == 0) {
		json_decref(blocks);
		return 0;
	}
	if (last != NULL && strcmp(json_string_value(json_object_get(last,
	    "role")), role) == 0) {
		rc = json_array_extend(json_object_get(last, "content"),
		    blocks);
		json_decref(blocks);
		return rc;
	}
	return json_array_append_new(msgs, json_pack("{s:s, s:o}", "role",
	    role, "content", blocks));
}

static int
build_messages(const struct llm_request *rq, json_t *body,
    struct dbuf *system)
{
	json_t		*msgs = json_object_get(body, "messages");
	json_t		*blocks, *input, *b;
	struct dbuf	 t;
	size_t		 i, k;
	int		 rc = 0;

	for (i = 0; i < rq->nmessages && rc == 0; i++) {
		const struct llm_message *m = &rq->messages[i];

		if (m->role == LLM_SYSTEM) {
			if (system->len > 0)
				dbuf_addstr(system, "\n\n");
			message_text(m, system);
			continue;
		}
		if ((blocks = json_array()) == NULL)
			return -1;
		if (m->role == LLM_TOOL) {
			memset(&t, 0, sizeof(t));
			message_text(m, &t);
			b = json_pack("{s:s, s:s, s:s}", "type", "tool_result",
			    "tool_use_id", m->tool_call_id != NULL ?
			    m->tool_call_id : "", "content", t.p != NULL ?
			    t.p : "");
			dbuf_free(&t);
			rc = add_block(blocks, b);
		} else
			rc = content_blocks(m, blocks);
		for (k = 0; rc == 0 && m->role == LLM_ASSISTANT &&
		    k < m->ntool_calls; k++) {
			const struct llm_tool_call *tc = &m->tool_calls[k];

			input = tc->arguments != NULL ?
			    json_loads(tc->arguments, 0, NULL) : NULL;
			if (!json_is_object(input)) {
				json_decref(input);
				input = json_object();
			}
			rc = add_block(blocks, json_pack("{s:s, s:s, s:s, s:o}",
			    "type", "tool_use", "id", tc->id != NULL ? tc->id :
			    "", "name", tc->name != NULL ? tc->name : "",
			    "input", input));
		}
		if (rc != 0) {
			json_decref(blocks);
			break;
		}
		rc = push(msgs, m->role == LLM_ASSISTANT ? "assistant" : "user",
		    blocks);
	}
	return rc;
}

/* The tool that carries structured output, when one is used. */
static const char *
schema_tool(const struct llm_request *rq)
{
	if (rq->response_schema == NULL || rq->ntools > 0)
		return NULL;
	return rq->response_schema_name != NULL ? rq->response_schema_name :
	    "output";
}

/* The request body; NULL when out of memory. */
static json_t *
anthropic_body(struct llm_chat *c)
{
	const struct llm_request	*rq = c->rq;
	const json_t			*p = rq->params;
	json_t				*v;
	json_t				*body, *tools, *t, *stop;
	struct dbuf			 system;
	const char			*st = schema_tool(rq);
	json_int_t			 max_tokens = DEFAULT_MAX_TOKENS;
	size_t				 i;

	c->answer_tool = st;
	memset(&system, 0, sizeof(system));
	if (json_is_integer(json_object_get(p, "max_tokens")))
		max_tokens = json_integer_value(json_object_get(p,
		    "max_tokens"));
	body = json_pack("{s:s, s:I, s:[]}", "model", rq->model,
	    "max_tokens", max_tokens, "messages");
	if (body == NULL)
		return NULL;
	if (build_messages(rq, body, &system) != 0)
		goto fail;
	if (rq->response_schema != NULL && st == NULL) {
		char *s = json_dumps(rq->response_schema, JSON_COMPACT);

		if (s == NULL)
			goto fail;
		dbuf_addstr(&system, system.len > 0 ? "\n\n" : "");
		dbuf_addstr(&system, "Answer with only JSON that fits this "
		    "JSON schema: ");
		dbuf_addstr(&system, s);
		free(s);
	}
	if (system.err)
		goto fail;
	if (system.len > 0 && json_object_set_new(body, "system",
	    json_string(system.p)) != 0)
		goto fail;
	if ((v = json_object_get(p, "temperature")) != NULL &&
	    json_is_number(v) && json_object_set(body, "temperature", v) != 0)
		goto fail;
	if ((v = json_object_get(p, "top_p")) != NULL && json_is_number(v) &&
	    json_object_set(body, "top_p", v) != 0)
		goto fail;
	if ((v = json_object_get(p, "top_k")) != NULL && json_is_integer(v) &&
	    json_object_set(body, "top_k", v) != 0)
		goto fail;
	if ((stop = llm_stop_list(p)) != NULL &&
	    json_object_set_new(body, "stop_sequences", stop) != 0)
		goto fail;
	v = json_object_get(p, "thinking");
	if (json_is_true(v)) {
		const json_t *bt = json_object_get(p, "thinking_budget");

		if (json_object_set_new(body, "thinking",
		    json_pack("{s:s, s:I}", "type", "enabled", "budget_tokens",
		    json_is_integer(bt) ? json_integer_value(bt) :
		    (json_int_t)1024)) != 0)
			goto fail;
	} else if (json_is_object(v) && json_object_set(body, "thinking", v))
		goto fail;
	if (rq->ntools > 0 || st != NULL) {
		if ((tools = json_array()) == NULL ||
		    json_object_set_new(body, "tools", tools) != 0)
			goto fail;
		for (i = 0; i < rq->ntools; i++) {
			const struct llm_tool *tl = &rq->tools[i];

			t = json_pack("{s:s, s:s, s:o}", "name", tl->name,
			    "description", tl->description != NULL ?
			    tl->description : "", "input_schema",
			    llm_tool_schema(tl));
			if (add_block(tools, t) != 0)
				goto fail;
		}
		if (st != NULL && (add_block(tools, json_pack("{s:s, s:s, s:O}",
		    "name", st, "description", "Give the answer as this "
		    "tool's input.", "input_schema", rq->response_schema))
		    != 0 || json_object_set_new(body, "tool_choice",
		    json_pack("{s:s, s:s}", "type", "tool", "name", st)) != 0))
			goto fail;
	}
	if (st == NULL && rq->tool_choice != NULL && *rq->tool_choice != '\0') {
		if (strcmp(rq->tool_choice, "auto") == 0 ||
		    strcmp(rq->tool_choice, "none") == 0)
			t = json_pack("{s:s}", "type", rq->tool_choice);
		else if (strcmp(rq->tool_choice, "required") == 0)
			t = json_pack("{s:s}", "type", "any");
		else
			t = json_pack("{s:s, s:s}", "type", "tool", "name",
			    rq->tool_choice);
		if (t == NULL || json_object_set_new(body, "tool_choice", t))
			goto fail;
	}
	if (rq->stream && json_object_set_new(body, "stream", json_true()))
		goto fail;
	dbuf_free(&system);
	return body;
fail:
	dbuf_free(&system);
	json_decref(body);
	return NULL;
}

/* ====== Responses ====== */

static void
usage_read(const json_t *u, struct llm_usage *us)
{
	const json_t *v;

	if (!json_is_object(u))
		return;
	/* message_start has input tokens; message_delta the final output
	 * count (and, from some servers, input tokens again). */
	if ((v = json_object_get(u, "input_tokens")) != NULL &&
	    json_is_integer(v))
		us->prompt_tokens = json_integer_value(v) +
		    json_integer_value(json_object_get(u,
		    "cache_creation_input_tokens")) +
		    json_integer_value(json_object_get(u,
		    "cache_read_input_tokens"));
	if ((v = json_object_get(u, "output_tokens")) != NULL &&
	    json_is_integer(v))
		us->completion_tokens = json_integer_value(v);
	us->total_tokens = us->prompt_tokens + us->completion_tokens;
}

/* 1 when stop reason s is the forced answer tool's: a plain end of turn. */
static int
answer_ended(const struct llm_chat *c, const char *s)
{
	return c->answer_tool != NULL && s != NULL &&
	    strcmp(s, "tool_use") == 0;
}

static int
anthropic_whole(struct llm_chat *c, const json_t *j)
{
	const json_t	*b, *content = json_object_get(j, "content");
	const char	*s, *type;
	char		*args;
	size_t		 i;
	int		 rc = 0;

	if ((s = json_string_value(json_object_get(j, "model"))) != NULL)
		snprintf(c->out->model, sizeof(c->out->model), "%s", s);
	usage_read(json_object_get(j, "usage"), &c->out->usage);
	if (!json_is_array(content)) {
		snprintf(c->err, ENGINE_ERRMAX, "%s: the answer has no content",
		    c->ep->name);
		return ENGINE_EFETCH;
	}
	json_array_foreach(content, i, b) {
		type = json_string_value(json_object_get(b, "type"));
		if (type == NULL)
			continue;
		if (strcmp(type, "text") == 0 &&
		    (s = json_string_value(json_object_get(b, "text"))) != NULL)
			rc = llm_chat_emit(c, LLM_DELTA_TEXT, s, strlen(s));
		else if (strcmp(type, "thinking") == 0 &&
		    (s = json_string_value(json_object_get(b, "thinking"))) !=
		    NULL)
			rc = llm_chat_emit(c, LLM_DELTA_REASONING, s,
			    strlen(s));
		else if (strcmp(type, "tool_use") == 0) {
			if ((args = json_dumps(json_object_get(b, "input"),
			    JSON_COMPACT)) == NULL)
				return ENGINE_ENOMEM;
			s = json_string_value(json_object_get(b, "id"));
			rc = llm_chat_call(c, s != NULL ? s : "",
			    json_string_value(json_object_get(b, "name")) !=
			    NULL ? json_string_value(json_object_get(b,
			    "name")) : "", args);
			free(args);
		}
		if (rc != 0)
			return rc;
	}
	s = json_string_value(json_object_get(j, "stop_reason"));
	llm_finish_reason(answer_ended(c, s) ? "end_turn" : s,
	    c->out->finish_reason, sizeof(c->out->finish_reason));
	return 0;
}

/* A string member of o, or "". */
static const char *
str_or_empty(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "";
}

static int
anthropic_event(struct llm_chat *c, const char *event, const char *data,
    size_t len)
{
	json_t		*j;
	const json_t	*cb, *d;
	const char	*type, *s;
	struct llm_slot	*b = NULL;
	int		 rc = 0, start, delta;

	if ((j = llm_chat_json(c, data, len)) == NULL)
		return ENGINE_EFETCH;
	type = json_string_value(json_object_get(j, "type"));
	if (type == NULL)
		type = event;
	/* the block a content_block_ event is about */
	start = strcmp(type, "content_block_start") == 0;
	delta = strcmp(type, "content_block_delta") == 0;
	if ((start || delta) && (b = llm_chat_slot(c,
	    json_integer_value(json_object_get(j, "index")))) == NULL) {
		rc = ENGINE_ELIMIT;
		goto out;
	}
	if (strcmp(type, "message_start") == 0) {
		cb = json_object_get(j, "message");
		if ((s = json_string_value(json_object_get(cb, "model"))) !=
		    NULL)
			snprintf(c->out->model, sizeof(c->out->model), "%s", s);
		usage_read(json_object_get(cb, "usage"), &c->out->usage);
	} else if (start && b != NULL) {
		cb = json_object_get(j, "content_block");
		s = json_string_value(json_object_get(cb, "type"));
		if (s != NULL && strcmp(s, "tool_use") == 0) {
			b->tool = 1;
			dbuf_addstr(&b->id, str_or_empty(cb, "id"));
			dbuf_addstr(&b->name, str_or_empty(cb, "name"));
		} else if (s != NULL && strcmp(s, "text") == 0 &&
		    (s = json_string_value(json_object_get(cb, "text"))) !=
		    NULL)
			rc = llm_chat_emit(c, LLM_DELTA_TEXT, s, strlen(s));
	} else if (delta && b != NULL) {
		d = json_object_get(j, "delta");
		s = str_or_empty(d, "type");
		if (strcmp(s, "text_delta") == 0)
			rc = llm_chat_emit(c, LLM_DELTA_TEXT,
			    json_string_value(json_object_get(d, "text")),
			    json_string_length(json_object_get(d, "text")));
		else if (strcmp(s, "thinking_delta") == 0)
			rc = llm_chat_emit(c, LLM_DELTA_REASONING,
			    json_string_value(json_object_get(d, "thinking")),
			    json_string_length(json_object_get(d, "thinking")));
		else if (strcmp(s, "input_json_delta") == 0 &&
		    (s = json_string_value(json_object_get(d,
		    "partial_json"))) != NULL)
			dbuf_addstr(&b->args, s);
	} else if (strcmp(type, "message_delta") == 0) {
		d = json_object_get(j, "delta");
		if ((s = json_string_value(json_object_get(d, "stop_reason")))
		    != NULL)
			snprintf(c->finish, sizeof(c->finish), "%s", s);
		usage_read(json_object_get(j, "usage"), &c->out->usage);
	} else if (strcmp(type, "message_stop") == 0)
		c->done = 1;
	else if (strcmp(type, "error") == 0)
		rc = llm_chat_error(c, data, len, json_object_get(j, "error"));
out:
	json_decref(j);
	return rc;
}

/* ====== The protocol ====== */

/* v1/messages, or messages when base_url already ends in /v1. */
static const char *
anthropic_path(const struct llm_endpoint *ep)
{
	size_t n = strlen(ep->base_url);

	while (n > 0 && ep->base_url[n - 1] == '/')
		n--;
	return n >= 3 && memcmp(ep->base_url + n - 3, "/v1", 3) == 0 ?
	    "messages" : "v1/messages";
}

static void
anthropic_end(struct llm_chat *c)
{
	if (answer_ended(c, c->finish))
		snprintf(c->finish, sizeof(c->finish), "end_turn");
}

/* Overloaded, rate-limited and internal errors pass; a retry may help. */
static int
anthropic_transient(const json_t *error)
{
	const char *s = json_string_value(json_object_get(error, "type"));

	return s != NULL && (strcmp(s, "overloaded_error") == 0 ||
	    strcmp(s, "rate_limit_error") == 0 ||
	    strcmp(s, "api_error") == 0);
}

/* A 529 (overloaded) is a 5xx, so the driver marks it transient. */
const struct llm_protocol llm_protocol_anthropic = {
	.name = "anthropic",
	.auth = "x-api-key: ",
	.header = "anthropic-version: " API_VERSION,
	.max_slots = MAX_BLOCKS,
	.slots = "content blocks",
	.path = anthropic_path,
	.body = anthropic_body,
	.event = anthropic_event,
	.whole = anthropic_whole,
	.end = anthropic_end,
	.transient = anthropic_transient,
};
