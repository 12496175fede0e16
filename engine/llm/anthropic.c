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
 * becomes the answer text.
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
message_text(const struct llm_message *m, struct tpl_sb *sb)
{
	size_t i;

	if (m->nparts == 0) {
		if (m->content != NULL)
			tpl_sb_str(sb, m->content);
		return;
	}
	for (i = 0; i < m->nparts; i++)
		if (m->parts[i].type == LLM_PART_TEXT &&
		    m->parts[i].text != NULL)
			tpl_sb_str(sb, m->parts[i].text);
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
    struct tpl_sb *system)
{
	json_t		*msgs = json_object_get(body, "messages");
	json_t		*blocks, *input, *b;
	struct tpl_sb	 t;
	size_t		 i, k;
	int		 rc = 0;

	for (i = 0; i < rq->nmessages && rc == 0; i++) {
		const struct llm_message *m = &rq->messages[i];

		if (m->role == LLM_SYSTEM) {
			if (system->len > 0)
				tpl_sb_str(system, "\n\n");
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
			tpl_sb_release(&t);
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

static json_t *
build_body(const struct llm_request *rq)
{
	const json_t	*p = rq->params;
	json_t		*v;
	json_t		*body, *tools, *t, *stop = NULL;
	struct tpl_sb	 system;
	const char	*st = schema_tool(rq);
	json_int_t	 max_tokens = DEFAULT_MAX_TOKENS;
	size_t		 i;

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
		tpl_sb_str(&system, system.len > 0 ? "\n\n" : "");
		tpl_sb_str(&system, "Answer with only JSON that fits this "
		    "JSON schema: ");
		tpl_sb_str(&system, s);
		free(s);
	}
	if (system.oom)
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
	v = json_object_get(p, "stop");
	if (json_is_string(v) && json_string_length(v) > 0)
		stop = json_pack("[O]", v);
	else if (json_is_array(v) && json_array_size(v) > 0)
		stop = json_incref(v);
	if (stop != NULL && json_object_set_new(body, "stop_sequences", stop))
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

			t = tl->parameters != NULL ?
			    json_pack("{s:s, s:s, s:O}", "name", tl->name,
			    "description", tl->description != NULL ?
			    tl->description : "", "input_schema",
			    tl->parameters) :
			    json_pack("{s:s, s:s, s:{s:s, s:{}}}", "name",
			    tl->name, "description", tl->description != NULL ?
			    tl->description : "", "input_schema", "type",
			    "object", "properties");
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
	tpl_sb_release(&system);
	return body;
fail:
	tpl_sb_release(&system);
	json_decref(body);
	return NULL;
}

/* ====== Responses ====== */

struct block {
	int		 tool;		/* a tool_use block */
	struct tpl_sb	 id, name, args;
};

struct parse {
	const struct llm_endpoint	*ep;
	const struct llm_request	*rq;
	struct llm_attempt		*at;
	struct llm_response		*out;
	const char			*schema_tool;
	struct block			*blocks;
	size_t				 nblocks;
	char				 stop[32];
	int				 done;	/* message_stop */
	char				*err;
};

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

/* Adds a tool call (or, for the schema tool, the answer text). */
static int
add_call(struct parse *p, const char *id, const char *name, const char *args)
{
	struct llm_tool_call	*tc, *n;
	size_t			 k = p->out->ntool_calls;

	if (args == NULL || *args == '\0')
		args = "{}";
	if (p->schema_tool != NULL && strcmp(name, p->schema_tool) == 0)
		return llm_emit(p->rq, p->at, p->out, LLM_DELTA_TEXT, args,
		    strlen(args));
	if ((n = realloc(p->out->tool_calls, (k + 1) * sizeof(*n))) == NULL)
		return ENGINE_ENOMEM;
	p->out->tool_calls = n;
	tc = &n[k];
	memset(tc, 0, sizeof(*tc));
	p->out->ntool_calls++;
	tc->id = strdup(id);
	tc->name = strdup(name);
	tc->arguments = strdup(args);
	if (tc->id == NULL || tc->name == NULL || tc->arguments == NULL)
		return ENGINE_ENOMEM;
	return 0;
}

static int
parse_full(struct parse *p, const json_t *j)
{
	const json_t	*c, *content = json_object_get(j, "content");
	const char	*s, *type;
	char		*args;
	size_t		 i;
	int		 rc = 0;

	if ((s = json_string_value(json_object_get(j, "model"))) != NULL)
		snprintf(p->out->model, sizeof(p->out->model), "%s", s);
	usage_read(json_object_get(j, "usage"), &p->out->usage);
	if (!json_is_array(content)) {
		snprintf(p->err, ENGINE_ERRMAX, "%s: the answer has no content",
		    p->ep->name);
		return ENGINE_EFETCH;
	}
	json_array_foreach(content, i, c) {
		type = json_string_value(json_object_get(c, "type"));
		if (type == NULL)
			continue;
		if (strcmp(type, "text") == 0 &&
		    (s = json_string_value(json_object_get(c, "text"))) != NULL)
			rc = llm_emit(p->rq, p->at, p->out, LLM_DELTA_TEXT, s,
			    strlen(s));
		else if (strcmp(type, "thinking") == 0 &&
		    (s = json_string_value(json_object_get(c, "thinking"))) !=
		    NULL)
			rc = llm_emit(p->rq, p->at, p->out,
			    LLM_DELTA_REASONING, s, strlen(s));
		else if (strcmp(type, "tool_use") == 0) {
			if ((args = json_dumps(json_object_get(c, "input"),
			    JSON_COMPACT)) == NULL)
				return ENGINE_ENOMEM;
			s = json_string_value(json_object_get(c, "id"));
			rc = add_call(p, s != NULL ? s : "", json_string_value(
			    json_object_get(c, "name")) != NULL ?
			    json_string_value(json_object_get(c, "name")) : "",
			    args);
			free(args);
		}
		if (rc != 0)
			return rc;
	}
	s = json_string_value(json_object_get(j, "stop_reason"));
	if (p->schema_tool != NULL && s != NULL && strcmp(s, "tool_use") == 0)
		s = "end_turn";
	llm_finish_reason(s, p->out->finish_reason,
	    sizeof(p->out->finish_reason));
	return 0;
}

static struct block *
block_at(struct parse *p, const json_t *j)
{
	json_int_t	 idx;
	struct block	*nb;

	idx = json_integer_value(json_object_get(j, "index"));

	if (idx < 0 || idx >= MAX_BLOCKS)
		return NULL;
	if ((size_t)idx >= p->nblocks) {
		nb = realloc(p->blocks, (size_t)(idx + 1) * sizeof(*nb));
		if (nb == NULL)
			return NULL;
		memset(nb + p->nblocks, 0, ((size_t)idx + 1 - p->nblocks) *
		    sizeof(*nb));
		p->blocks = nb;
		p->nblocks = (size_t)idx + 1;
	}
	return &p->blocks[idx];
}

static int
on_event(void *arg, const char *event, const char *data, size_t len)
{
	struct parse	*p = arg;
	json_t		*j = NULL;
	const json_t	*cb, *d;
	const char	*type, *s;
	struct block	*b;
	int		 rc = 0;

	if ((j = json_loadb(data, len, 0, NULL)) == NULL) {
		snprintf(p->err, ENGINE_ERRMAX, "%s: a stream event is not "
		    "JSON", p->ep->name);
		rc = ENGINE_EFETCH;
		goto out;
	}
	type = json_string_value(json_object_get(j, "type"));
	if (type == NULL)
		type = event;
	if (strcmp(type, "message_start") == 0) {
		cb = json_object_get(j, "message");
		if ((s = json_string_value(json_object_get(cb, "model"))) !=
		    NULL)
			snprintf(p->out->model, sizeof(p->out->model), "%s", s);
		usage_read(json_object_get(cb, "usage"), &p->out->usage);
	} else if (strcmp(type, "content_block_start") == 0) {
		if ((b = block_at(p, j)) == NULL)
			goto toomany;
		cb = json_object_get(j, "content_block");
		s = json_string_value(json_object_get(cb, "type"));
		if (s != NULL && strcmp(s, "tool_use") == 0) {
			b->tool = 1;
			tpl_sb_str(&b->id, json_string_value(json_object_get(cb,
			    "id")) != NULL ? json_string_value(
			    json_object_get(cb, "id")) : "");
			tpl_sb_str(&b->name, json_string_value(json_object_get(
			    cb, "name")) != NULL ? json_string_value(
			    json_object_get(cb, "name")) : "");
		} else if (s != NULL && strcmp(s, "text") == 0 &&
		    (s = json_string_value(json_object_get(cb, "text"))) !=
		    NULL)
			rc = llm_emit(p->rq, p->at, p->out, LLM_DELTA_TEXT, s,
			    strlen(s));
	} else if (strcmp(type, "content_block_delta") == 0) {
		if ((b = block_at(p, j)) == NULL)
			goto toomany;
		d = json_object_get(j, "delta");
		s = json_string_value(json_object_get(d, "type"));
		if (s == NULL)
			s = "";
		if (strcmp(s, "text_delta") == 0)
			rc = llm_emit(p->rq, p->at, p->out, LLM_DELTA_TEXT,
			    json_string_value(json_object_get(d, "text")),
			    json_string_length(json_object_get(d, "text")));
		else if (strcmp(s, "thinking_delta") == 0)
			rc = llm_emit(p->rq, p->at, p->out,
			    LLM_DELTA_REASONING, json_string_value(
			    json_object_get(d, "thinking")),
			    json_string_length(json_object_get(d, "thinking")));
		else if (strcmp(s, "input_json_delta") == 0 &&
		    (s = json_string_value(json_object_get(d,
		    "partial_json"))) != NULL)
			tpl_sb_str(&b->args, s);
	} else if (strcmp(type, "message_delta") == 0) {
		d = json_object_get(j, "delta");
		if ((s = json_string_value(json_object_get(d, "stop_reason")))
		    != NULL)
			snprintf(p->stop, sizeof(p->stop), "%s", s);
		usage_read(json_object_get(j, "usage"), &p->out->usage);
	} else if (strcmp(type, "message_stop") == 0)
		p->done = 1;
	else if (strcmp(type, "error") == 0) {
		llm_error_from_body(p->ep->name, 0, data, len,
		    p->ep->api_key, p->err);
		s = json_string_value(json_object_get(json_object_get(j,
		    "error"), "type"));
		p->at->transient = s != NULL &&
		    (strcmp(s, "overloaded_error") == 0 ||
		    strcmp(s, "rate_limit_error") == 0 ||
		    strcmp(s, "api_error") == 0);
		rc = ENGINE_EFETCH;
	}
	goto out;
toomany:
	snprintf(p->err, ENGINE_ERRMAX, "%s: more than %d content blocks in "
	    "one answer", p->ep->name, MAX_BLOCKS);
	rc = ENGINE_ELIMIT;
out:
	json_decref(j);
	return rc;
}

static int
blocks_take(struct parse *p)
{
	size_t	i;
	int	rc = 0;

	for (i = 0; i < p->nblocks && rc == 0; i++) {
		struct block *b = &p->blocks[i];

		if (b->tool)
			rc = add_call(p, b->id.p != NULL ? b->id.p : "",
			    b->name.p != NULL ? b->name.p : "", b->args.p);
		if (b->id.oom || b->name.oom || b->args.oom)
			rc = ENGINE_ENOMEM;
	}
	return rc;
}

/* ====== One exchange ====== */

static int
anthropic_chat(struct engine *e, const struct llm_endpoint *ep,
    const struct llm_request *rq, struct llm_attempt *at, char *err,
    struct llm_response *out)
{
	struct llm_post	 po;
	struct parse	 p;
	json_t		*body, *j = NULL;
	size_t		 n = strlen(ep->base_url), i;
	int		 rc;

	memset(&p, 0, sizeof(p));
	p.ep = ep;
	p.rq = rq;
	p.at = at;
	p.out = out;
	p.err = err;
	p.schema_tool = schema_tool(rq);
	while (n > 0 && ep->base_url[n - 1] == '/')
		n--;
	memset(&po, 0, sizeof(po));
	po.path = n >= 3 && memcmp(ep->base_url + n - 3, "/v1", 3) == 0 ?
	    "messages" : "v1/messages";
	po.header = "anthropic-version: " API_VERSION;
	po.auth = "x-api-key: ";
	po.on_event = on_event;
	po.arg = &p;
	if ((body = build_body(rq)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	po.body = body;
	/* A 529 (overloaded) is a 5xx, so llm_post marks it transient. */
	if ((rc = llm_post(e, ep, rq, &po, at, err, &j)) != 0)
		goto out;
	if (j != NULL) {
		rc = parse_full(&p, j);
		goto out;
	}
	if (!p.done && p.stop[0] == '\0') {
		snprintf(err, ENGINE_ERRMAX, "%s: the stream ended before the "
		    "answer was complete", ep->name);
		at->transient = 1;
		rc = ENGINE_EFETCH;
		goto out;
	}
	if ((rc = blocks_take(&p)) != 0)
		goto out;
	if (p.schema_tool != NULL && strcmp(p.stop, "tool_use") == 0)
		snprintf(p.stop, sizeof(p.stop), "end_turn");
	llm_finish_reason(p.stop, out->finish_reason,
	    sizeof(out->finish_reason));
out:
	for (i = 0; i < p.nblocks; i++) {
		tpl_sb_release(&p.blocks[i].id);
		tpl_sb_release(&p.blocks[i].name);
		tpl_sb_release(&p.blocks[i].args);
	}
	free(p.blocks);
	json_decref(body);
	json_decref(j);
	return rc;
}

const struct llm_protocol llm_protocol_anthropic = {
	.name = "anthropic",
	.chat = anthropic_chat,
};
