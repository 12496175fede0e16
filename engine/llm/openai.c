/*
 * openai.c — the OpenAI-compatible chat completions protocol
 * (POST <base_url>/chat/completions): OpenAI, Ollama, vLLM, llama.cpp
 * server, DeepSeek, SiliconFlow, Groq, OpenRouter and Dify's
 * openai_api_compatible.
 *
 * Streams are server-sent events of chat.completion.chunk objects ending
 * with "data: [DONE]"; tool calls arrive as deltas keyed by index, usage
 * in a last chunk without choices (stream_options.include_usage). A server
 * that ignores "stream" and answers with one JSON object is read as well.
 * This file fills the hooks of struct llm_protocol; the exchange itself
 * (HTTP, retries, gathering the answer) is chat.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/llm/llm.h"

#define MAX_TOOL_CALLS	128

/* ====== Request body ====== */

/* Completion params api.openai.com accepts, passed as they are. */
static const char *const known_params[] = {
	"temperature", "top_p", "max_tokens", "max_completion_tokens",
	"presence_penalty", "frequency_penalty", "seed", "logit_bias", "user",
	"reasoning_effort", "logprobs", "top_logprobs", "parallel_tool_calls",
	"service_tier", "verbosity", NULL,
};

/* Dify's own completion params that are no API field anywhere. */
static const char *const dify_params[] = {
	"json_schema", "response_format", "stop", NULL,
};

static int
in_list(const char *const *list, const char *s)
{
	for (; *list != NULL; list++)
		if (strcmp(*list, s) == 0)
			return 1;
	return 0;
}

/* 1 when the endpoint is OpenAI's own, which refuses unknown fields. */
static int
strict_host(const struct llm_endpoint *ep)
{
	return strstr(ep->base_url, "://api.openai.com") != NULL;
}

static json_t *
content_json(const struct llm_message *m)
{
	json_t	*arr, *p;
	size_t	 i;

	if (m->nparts == 0)
		return m->content != NULL ? json_string(m->content) :
		    json_null();
	if ((arr = json_array()) == NULL)
		return NULL;
	for (i = 0; i < m->nparts; i++) {
		const struct llm_part *pt = &m->parts[i];

		if (pt->type == LLM_PART_IMAGE)
			p = pt->detail != NULL ?
			    json_pack("{s:s, s:{s:s, s:s}}", "type",
			    "image_url", "image_url", "url", pt->text,
			    "detail", pt->detail) :
			    json_pack("{s:s, s:{s:s}}", "type", "image_url",
			    "image_url", "url", pt->text);
		else
			p = json_pack("{s:s, s:s}", "type", "text", "text",
			    pt->text != NULL ? pt->text : "");
		if (p == NULL || json_array_append_new(arr, p) != 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static json_t *
message_json(const struct llm_message *m)
{
	static const char *const roles[] = {
		"system", "user", "assistant", "tool"
	};
	json_t	*o, *calls, *c;
	size_t	 i;

	o = json_pack("{s:s, s:o}", "role", roles[m->role], "content",
	    content_json(m));
	if (o == NULL)
		return NULL;
	if (m->role == LLM_TOOL && json_object_set_new(o, "tool_call_id",
	    json_string(m->tool_call_id != NULL ? m->tool_call_id : "")) != 0)
		goto fail;
	if (m->role == LLM_ASSISTANT && m->ntool_calls > 0) {
		if ((calls = json_array()) == NULL ||
		    json_object_set_new(o, "tool_calls", calls) != 0)
			goto fail;
		for (i = 0; i < m->ntool_calls; i++) {
			const struct llm_tool_call *tc = &m->tool_calls[i];

			c = json_pack("{s:s, s:s, s:{s:s, s:s}}", "id",
			    tc->id != NULL ? tc->id : "", "type", "function",
			    "function", "name", tc->name != NULL ? tc->name :
			    "", "arguments", tc->arguments != NULL ?
			    tc->arguments : "{}");
			if (c == NULL || json_array_append_new(calls, c) != 0)
				goto fail;
		}
	}
	return o;
fail:
	json_decref(o);
	return NULL;
}

/* Dify's response_format / json_schema params into body. */
static int
response_format(const struct llm_request *rq, json_t *body)
{
	const json_t	*rf, *js;
	json_t		*schema = NULL, *v = NULL;
	const char	*s;
	int		 rc = 0;

	rf = json_object_get(rq->params, "response_format");
	js = json_object_get(rq->params, "json_schema");
	s = json_string_value(rf);

	if (rq->response_schema != NULL)
		v = json_pack("{s:s, s:{s:s, s:O}}", "type", "json_schema",
		    "json_schema", "name", rq->response_schema_name != NULL ?
		    rq->response_schema_name : "output", "schema",
		    rq->response_schema);
	else if (s != NULL && strcmp(s, "json_schema") == 0 && js != NULL) {
		/* Dify keeps the schema as JSON text:
		 * {"name": ..., "schema": {...}} or a bare schema. */
		schema = json_is_string(js) ?
		    json_loads(json_string_value(js), 0, NULL) :
		    json_incref((json_t *)js);
		if (json_object_get(schema, "schema") != NULL)
			v = json_pack("{s:s, s:O}", "type", "json_schema",
			    "json_schema", schema);
		else if (schema != NULL)
			v = json_pack("{s:s, s:{s:s, s:O}}", "type",
			    "json_schema", "json_schema", "name", "output",
			    "schema", schema);
	} else if (s != NULL && strcmp(s, "json_object") == 0)
		v = json_pack("{s:s}", "type", "json_object");
	else if (json_is_object(rf))
		v = json_incref((json_t *)rf);
	if (v != NULL && json_object_set_new(body, "response_format", v) != 0)
		rc = ENGINE_ENOMEM;
	json_decref(schema);
	return rc;
}

/* The request body; NULL when out of memory. */
static json_t *
openai_body(struct llm_chat *c)
{
	const struct llm_endpoint	*ep = c->ep;
	const struct llm_request	*rq = c->rq;
	json_t				*body, *msgs, *tools, *t, *stop;
	const char			*k;
	json_t				*v;
	size_t				 i;

	body = json_pack("{s:s, s:[]}", "model", rq->model, "messages");
	if (body == NULL)
		return NULL;
	msgs = json_object_get(body, "messages");
	for (i = 0; i < rq->nmessages; i++)
		if ((t = message_json(&rq->messages[i])) == NULL ||
		    json_array_append_new(msgs, t) != 0)
			goto fail;
	json_object_foreach((json_t *)rq->params, k, v) {
		if (json_is_null(v) || in_list(dify_params, k))
			continue;
		if (!in_list(known_params, k) && strict_host(ep))
			continue;
		/* OpenAI's newer models refuse max_tokens. */
		if (strcmp(k, "max_tokens") == 0 && strict_host(ep))
			k = "max_completion_tokens";
		if (json_object_set(body, k, v) != 0)
			goto fail;
	}
	if ((stop = llm_stop_list(rq->params)) != NULL &&
	    json_object_set_new(body, "stop", stop) != 0)
		goto fail;
	if (response_format(rq, body) != 0)
		goto fail;
	if (rq->ntools > 0) {
		if ((tools = json_array()) == NULL ||
		    json_object_set_new(body, "tools", tools) != 0)
			goto fail;
		for (i = 0; i < rq->ntools; i++) {
			const struct llm_tool *tl = &rq->tools[i];

			t = json_pack("{s:s, s:{s:s, s:s, s:o}}", "type",
			    "function", "function", "name", tl->name,
			    "description", tl->description != NULL ?
			    tl->description : "", "parameters",
			    llm_tool_schema(tl));
			if (t == NULL || json_array_append_new(tools, t) != 0)
				goto fail;
		}
	}
	if (rq->tool_choice != NULL && *rq->tool_choice != '\0') {
		if (strcmp(rq->tool_choice, "auto") == 0 ||
		    strcmp(rq->tool_choice, "none") == 0 ||
		    strcmp(rq->tool_choice, "required") == 0)
			v = json_string(rq->tool_choice);
		else
			v = json_pack("{s:s, s:{s:s}}", "type", "function",
			    "function", "name", rq->tool_choice);
		if (v == NULL || json_object_set_new(body, "tool_choice", v))
			goto fail;
	}
	if (rq->stream && (json_object_set_new(body, "stream",
	    json_true()) != 0 || json_object_set_new(body, "stream_options",
	    json_pack("{s:b}", "include_usage", 1)) != 0))
		goto fail;
	return body;
fail:
	json_decref(body);
	return NULL;
}

/* ====== Responses ====== */

/* The model and the usage of a chat.completion or of a chunk. */
static void
model_usage_read(struct llm_chat *c, const json_t *j)
{
	const json_t		*u = json_object_get(j, "usage");
	const char		*s = json_string_value(json_object_get(j,
				    "model"));
	struct llm_usage	*us = &c->out->usage;

	if (s != NULL)
		snprintf(c->out->model, sizeof(c->out->model), "%s", s);
	if (!json_is_object(u))
		return;
	us->prompt_tokens = json_integer_value(json_object_get(u,
	    "prompt_tokens"));
	us->completion_tokens = json_integer_value(json_object_get(u,
	    "completion_tokens"));
	us->total_tokens = json_integer_value(json_object_get(u,
	    "total_tokens"));
	if (us->total_tokens == 0)
		us->total_tokens = us->prompt_tokens + us->completion_tokens;
}

/* Text of a content value: a string, or an array of text parts. */
static int
emit_content(struct llm_chat *c, const json_t *v, enum llm_delta kind)
{
	const json_t	*part;
	const char	*s;
	size_t		 i;
	int		 rc = 0;

	if (json_is_string(v))
		return llm_chat_emit(c, kind, json_string_value(v),
		    json_string_length(v));
	json_array_foreach(v, i, part) {
		s = json_string_value(json_object_get(part, "text"));
		if (s != NULL && (rc = llm_chat_emit(c, kind, s,
		    strlen(s))) != 0)
			break;
	}
	return rc;
}

/* The reasoning and the text of a message or of a chunk's delta. */
static int
emit_message(struct llm_chat *c, const json_t *m)
{
	int rc;

	if ((rc = emit_content(c, json_object_get(m, "reasoning_content"),
	    LLM_DELTA_REASONING)) != 0 ||
	    (rc = emit_content(c, json_object_get(m, "reasoning"),
	    LLM_DELTA_REASONING)) != 0)
		return rc;
	return emit_content(c, json_object_get(m, "content"), LLM_DELTA_TEXT);
}

static char *
args_text(const json_t *a)
{
	if (json_is_string(a))
		return strdup(json_string_value(a));
	if (json_is_object(a))
		return json_dumps(a, JSON_COMPACT);
	return strdup("{}");
}

/* A whole chat.completion object. */
static int
openai_whole(struct llm_chat *c, const json_t *j)
{
	const json_t	*ch = json_array_get(json_object_get(j, "choices"),
			    0);
	const json_t	*msg = json_object_get(ch, "message"), *calls, *tc;
	const json_t	*fn;
	const char	*id, *name, *s;
	char		*args;
	size_t		 i, n;
	int		 rc = 0;

	model_usage_read(c, j);
	if (!json_is_object(msg)) {
		snprintf(c->err, ENGINE_ERRMAX, "%s: the answer has no "
		    "choices[0].message", c->ep->name);
		return ENGINE_EFETCH;
	}
	if ((rc = emit_message(c, msg)) != 0)
		return rc;
	calls = json_object_get(msg, "tool_calls");
	n = json_array_size(calls);
	if (n > MAX_TOOL_CALLS)
		n = MAX_TOOL_CALLS;
	for (i = 0; i < n; i++) {
		tc = json_array_get(calls, i);
		fn = json_object_get(tc, "function");
		id = json_string_value(json_object_get(tc, "id"));
		name = json_string_value(json_object_get(fn, "name"));
		if ((args = args_text(json_object_get(fn, "arguments"))) ==
		    NULL)
			return ENGINE_ENOMEM;
		rc = llm_chat_call(c, id != NULL ? id : "", name != NULL ?
		    name : "", args);
		free(args);
		if (rc != 0)
			return rc;
	}
	s = json_string_value(json_object_get(ch, "finish_reason"));
	if (s == NULL && n > 0)
		s = "tool_calls";
	llm_finish_reason(s, c->out->finish_reason,
	    sizeof(c->out->finish_reason));
	return 0;
}

/* The slot a tool_calls delta item belongs to, or NULL (c->err set). */
static struct llm_slot *
slot_for(struct llm_chat *c, const json_t *d, size_t pos)
{
	const json_t	*ji = json_object_get(d, "index");
	const char	*id = json_string_value(json_object_get(d, "id"));
	size_t		 idx, i;

	if (json_is_integer(ji) && json_integer_value(ji) >= 0)
		return llm_chat_slot(c, json_integer_value(ji));
	if (id != NULL && *id != '\0') {
		/* No index (some servers): a new id is a new call. */
		for (idx = c->nslots, i = 0; i < c->nslots; i++)
			if (c->slots[i].id.p != NULL &&
			    strcmp(c->slots[i].id.p, id) == 0)
				idx = i;
	} else
		idx = c->nslots > 0 ? c->nslots - 1 : pos;
	return llm_chat_slot(c, (json_int_t)idx);
}

/* One chat.completion.chunk. */
static int
parse_chunk(struct llm_chat *c, const json_t *j)
{
	const json_t	*ch = json_array_get(json_object_get(j, "choices"),
			    0);
	const json_t	*d = json_object_get(ch, "delta"), *calls, *tc, *fn;
	const char	*s;
	struct llm_slot	*sl;
	size_t		 i;
	int		 rc;

	model_usage_read(c, j);
	if ((rc = emit_message(c, d)) != 0)
		return rc;
	calls = json_object_get(d, "tool_calls");
	json_array_foreach(calls, i, tc) {
		if ((sl = slot_for(c, tc, i)) == NULL)
			return ENGINE_ELIMIT;
		fn = json_object_get(tc, "function");
		if ((s = json_string_value(json_object_get(tc, "id"))) !=
		    NULL && sl->id.len == 0)
			dbuf_addstr(&sl->id, s);
		if ((s = json_string_value(json_object_get(fn, "name"))) !=
		    NULL && sl->name.len == 0)
			dbuf_addstr(&sl->name, s);
		if ((s = json_string_value(json_object_get(fn, "arguments")))
		    != NULL)
			dbuf_addstr(&sl->args, s);
		else if (json_is_object(json_object_get(fn, "arguments"))) {
			char *t = json_dumps(json_object_get(fn, "arguments"),
			    JSON_COMPACT);

			if (t != NULL)
				dbuf_addstr(&sl->args, t);
			free(t);
		}
		if (sl->id.err || sl->name.err || sl->args.err)
			return ENGINE_ENOMEM;
		/* an index that never gets a name or arguments is no call */
		if (sl->name.len > 0 || sl->args.len > 0)
			sl->tool = 1;
	}
	if ((s = json_string_value(json_object_get(ch, "finish_reason"))) !=
	    NULL && *s != '\0')
		snprintf(c->finish, sizeof(c->finish), "%s", s);
	return 0;
}

/* A chunk read with jansson; the errors are worded here. */
static int
chunk_json(struct llm_chat *c, const char *data, size_t len)
{
	json_t		*j;
	const json_t	*er;
	int		 rc;

	if ((j = llm_chat_json(c, data, len)) == NULL)
		return ENGINE_EFETCH;
	if ((er = json_object_get(j, "error")) != NULL && !json_is_null(er))
		/* An error in the middle of a stream. */
		rc = llm_chat_error(c, data, len, er);
	else
		rc = parse_chunk(c, j);
	json_decref(j);
	return rc;
}

/* ====== The common chunk, read in place ====== */

/*
 * Most chunks of a streamed answer carry one piece of text:
 * {"id":"..","object":"chat.completion.chunk","created":1,"model":"m",
 * "choices":[{"index":0,"delta":{"content":".."},"finish_reason":null}]}.
 * Building that with jansson, a dozen values each allocated and freed, was
 * the largest part of what relaying a token cost. quick_read reads such a
 * chunk where it lies, and only when it is sure jansson and parse_chunk
 * would see the same: strings without escapes, of well-formed UTF-8 (as
 * jansson checks it); integers of at most 18 digits; no reals; "usage",
 * "error" and "tool_calls" null or absent; no key it reads given twice;
 * nesting within QUICK_DEPTH. Anything else, malformed input included, is
 * left to chunk_json, which also words the errors.
 */
#define QUICK_DEPTH	32

/* What is left to read: p up to end. */
struct qs {
	const unsigned char	*p, *end;
};

struct qspan {
	const char	*s;	/* NULL: absent, or not a string */
	size_t		 n;
};

/* What parse_chunk would take from the chunk. */
struct quick {
	struct qspan	model, content, reasoning_content, reasoning;
	struct qspan	finish;
	unsigned	seen;	/* Q_* keys met */
};

enum {
	Q_MODEL = 1 << 0, Q_USAGE = 1 << 1, Q_ERROR = 1 << 2,
	Q_CHOICES = 1 << 3, Q_DELTA = 1 << 4, Q_FINISH = 1 << 5,
	Q_CONTENT = 1 << 6, Q_RCONTENT = 1 << 7, Q_REASONING = 1 << 8,
	Q_TOOLS = 1 << 9,
};

typedef int (*qs_fn)(struct qs *, const struct qspan *, int, void *);

static int	qs_value(struct qs *, int);

static void
qs_ws(struct qs *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' ||
	    *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/* A string without escapes; its bytes to *out when out is not NULL. */
static int
qs_string(struct qs *s, struct qspan *out)
{
	const unsigned char	*b;
	size_t			 k;

	if (s->p >= s->end || *s->p != '"')
		return -1;
	b = ++s->p;
	while (s->p < s->end && *s->p != '"') {
		if (*s->p == '\\' || *s->p < 0x20)
			return -1;
		if (*s->p < 0x80)
			s->p++;
		else if ((k = engine_utf8_seq(s->p, (size_t)(s->end - s->p)))
		    == 0)
			return -1;
		else
			s->p += k;
	}
	if (s->p >= s->end)
		return -1;
	if (out != NULL) {
		out->s = (const char *)b;
		out->n = (size_t)(s->p - b);
	}
	s->p++;
	return 0;
}

/* An integer that fits json_int_t. */
static int
qs_integer(struct qs *s)
{
	const unsigned char *b;

	if (s->p < s->end && *s->p == '-')
		s->p++;
	b = s->p;
	while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
		s->p++;
	if (s->p == b || s->p - b > 18 || (*b == '0' && s->p - b > 1))
		return -1;
	if (s->p < s->end && (*s->p == '.' || *s->p == 'e' || *s->p == 'E'))
		return -1;
	return 0;
}

static int
qs_word(struct qs *s, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0)
		return -1;
	s->p += n;
	return 0;
}

/*
 * An object ('{') or an array ('['): fn (or qs_value) reads each member's
 * value of an object and the first element of an array (with k NULL).
 */
static int
qs_list(struct qs *s, int depth, int open, qs_fn fn, void *arg)
{
	struct qspan	k;
	int		close = open == '{' ? '}' : ']', first = 1;

	if (depth > QUICK_DEPTH || s->p >= s->end || *s->p != open)
		return -1;
	s->p++;
	qs_ws(s);
	if (s->p < s->end && *s->p == close) {
		s->p++;
		return 0;
	}
	for (;;) {
		if (open == '{') {
			if (qs_string(s, &k) != 0)
				return -1;
			qs_ws(s);
			if (s->p >= s->end || *s->p != ':')
				return -1;
			s->p++;
			qs_ws(s);
		}
		if ((fn != NULL && (open == '{' || first) ?
		    fn(s, open == '{' ? &k : NULL, depth + 1, arg) :
		    qs_value(s, depth + 1)) != 0)
			return -1;
		first = 0;
		qs_ws(s);
		if (s->p >= s->end)
			return -1;
		if (*s->p++ == close)
			return 0;
		if (s->p[-1] != ',')
			return -1;
		qs_ws(s);
	}
}

/* Any value, read and left. */
static int
qs_value(struct qs *s, int depth)
{
	if (s->p >= s->end)
		return -1;
	switch (*s->p) {
	case '"': return qs_string(s, NULL);
	case '{': return qs_list(s, depth, '{', NULL, NULL);
	case '[': return qs_list(s, depth, '[', NULL, NULL);
	case 't': return qs_word(s, "true");
	case 'f': return qs_word(s, "false");
	case 'n': return qs_word(s, "null");
	default:  return qs_integer(s);
	}
}

static int
key_is(const struct qspan *k, const char *name)
{
	return k->n == strlen(name) && memcmp(k->s, name, k->n) == 0;
}

/* Marks bit seen; 0 the first time. */
static int
quick_once(struct quick *q, unsigned bit)
{
	if (q->seen & bit)
		return -1;
	q->seen |= bit;
	return 0;
}

/* A string read into *out, or null; anything else is not for here. */
static int
qs_text(struct qs *s, struct qspan *out)
{
	if (s->p < s->end && *s->p == 'n')
		return qs_word(s, "null");
	return qs_string(s, out);
}

static int
quick_delta(struct qs *s, const struct qspan *k, int depth, void *arg)
{
	struct quick *q = arg;

	if (key_is(k, "content"))
		return quick_once(q, Q_CONTENT) ||
		    qs_text(s, &q->content) ? -1 : 0;
	if (key_is(k, "reasoning_content"))
		return quick_once(q, Q_RCONTENT) ||
		    qs_text(s, &q->reasoning_content) ? -1 : 0;
	if (key_is(k, "reasoning"))
		return quick_once(q, Q_REASONING) ||
		    qs_text(s, &q->reasoning) ? -1 : 0;
	if (key_is(k, "tool_calls"))
		return quick_once(q, Q_TOOLS) || qs_word(s, "null") ? -1 : 0;
	return qs_value(s, depth);
}

static int
quick_choice(struct qs *s, const struct qspan *k, int depth, void *arg)
{
	struct quick *q = arg;

	if (key_is(k, "delta"))
		return quick_once(q, Q_DELTA) ||
		    qs_list(s, depth, '{', quick_delta, q) ? -1 : 0;
	if (key_is(k, "finish_reason")) {
		if (quick_once(q, Q_FINISH))
			return -1;
		/* what is not a string is no finish reason */
		if (s->p < s->end && *s->p == '"')
			return qs_string(s, &q->finish);
	}
	return qs_value(s, depth);
}

/* The first choice. */
static int
quick_first(struct qs *s, const struct qspan *k, int depth, void *arg)
{
	(void)k;
	return qs_list(s, depth, '{', quick_choice, arg);
}

static int
quick_root(struct qs *s, const struct qspan *k, int depth, void *arg)
{
	struct quick *q = arg;

	if (key_is(k, "model")) {
		if (quick_once(q, Q_MODEL))
			return -1;
		if (s->p < s->end && *s->p == '"')
			return qs_string(s, &q->model);
	} else if (key_is(k, "usage"))
		return quick_once(q, Q_USAGE) || qs_word(s, "null") ? -1 : 0;
	else if (key_is(k, "error"))
		return quick_once(q, Q_ERROR) || qs_word(s, "null") ? -1 : 0;
	else if (key_is(k, "choices"))
		return quick_once(q, Q_CHOICES) ||
		    qs_list(s, depth, '[', quick_first, q) ? -1 : 0;
	return qs_value(s, depth);
}

/* 0 when data is a chunk quick_apply may take in jansson's stead. */
static int
quick_read(const char *data, size_t len, struct quick *q)
{
	struct qs s = { (const unsigned char *)data,
	    (const unsigned char *)data + len };

	memset(q, 0, sizeof(*q));
	qs_ws(&s);
	if (qs_list(&s, 0, '{', quick_root, q) != 0)
		return -1;
	qs_ws(&s);
	return s.p == s.end ? 0 : -1;
}

static int
quick_emit(struct llm_chat *c, const struct qspan *t, enum llm_delta kind)
{
	if (t->s == NULL)
		return 0;
	return llm_chat_emit(c, kind, t->s, t->n);
}

/* What parse_chunk does with the same chunk. */
static int
quick_apply(struct llm_chat *c, const struct quick *q)
{
	int rc;

	if (q->model.s != NULL)
		snprintf(c->out->model, sizeof(c->out->model), "%.*s",
		    (int)q->model.n, q->model.s);
	if ((rc = quick_emit(c, &q->reasoning_content,
	    LLM_DELTA_REASONING)) != 0 ||
	    (rc = quick_emit(c, &q->reasoning, LLM_DELTA_REASONING)) != 0 ||
	    (rc = quick_emit(c, &q->content, LLM_DELTA_TEXT)) != 0)
		return rc;
	if (q->finish.s != NULL && q->finish.n > 0)
		snprintf(c->finish, sizeof(c->finish), "%.*s",
		    (int)q->finish.n, q->finish.s);
	return 0;
}

/* ====== The protocol ====== */

static const char *
openai_path(const struct llm_endpoint *ep)
{
	(void)ep;
	return "chat/completions";
}

static int
openai_event(struct llm_chat *c, const char *event, const char *data,
    size_t len)
{
	struct quick q;

	(void)event;
	if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
		c->done = 1;
		return 0;
	}
	if (quick_read(data, len, &q) == 0)
		return quick_apply(c, &q);
	return chunk_json(c, data, len);
}

/* A stream that named no finish reason: the calls it made say it. */
static void
openai_end(struct llm_chat *c)
{
	if (c->finish[0] == '\0')
		snprintf(c->finish, sizeof(c->finish), "%s",
		    c->out->ntool_calls > 0 ? "tool_calls" : "stop");
}

const struct llm_protocol llm_protocol_openai = {
	.name = "openai",
	.auth = "Authorization: Bearer ",
	.max_slots = MAX_TOOL_CALLS,
	.slots = "tool calls",
	.path = openai_path,
	.body = openai_body,
	.event = openai_event,
	.whole = openai_whole,
	.end = openai_end,
};
