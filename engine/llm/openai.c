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
build_body(const struct llm_endpoint *ep, const struct llm_request *rq)
{
	json_t		*body, *msgs, *tools, *t, *stop;
	const char	*k;
	json_t		*v;
	size_t		 i;

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
	stop = json_object_get(rq->params, "stop");
	if (json_is_string(stop) && json_string_length(stop) > 0)
		stop = json_pack("[O]", stop);
	else if (json_is_array(stop) && json_array_size(stop) > 0)
		stop = json_incref(stop);
	else
		stop = NULL;
	if (stop != NULL && json_object_set_new(body, "stop", stop) != 0)
		goto fail;
	if (response_format(rq, body) != 0)
		goto fail;
	if (rq->ntools > 0) {
		if ((tools = json_array()) == NULL ||
		    json_object_set_new(body, "tools", tools) != 0)
			goto fail;
		for (i = 0; i < rq->ntools; i++) {
			const struct llm_tool *tl = &rq->tools[i];

			t = tl->parameters != NULL ?
			    json_pack("{s:s, s:{s:s, s:s, s:O}}", "type",
			    "function", "function", "name", tl->name,
			    "description", tl->description != NULL ?
			    tl->description : "", "parameters",
			    tl->parameters) :
			    json_pack("{s:s, s:{s:s, s:s, s:{s:s, s:{}}}}",
			    "type", "function", "function", "name", tl->name,
			    "description", tl->description != NULL ?
			    tl->description : "", "parameters", "type",
			    "object", "properties");
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

/* A tool call being assembled from stream deltas. */
struct slot {
	struct tpl_sb	id, name, args;
};

struct parse {
	const struct llm_endpoint	*ep;
	const struct llm_request	*rq;
	struct llm_attempt		*at;
	struct llm_response		*out;
	struct slot			*slots;
	size_t				 nslots;
	char				 finish[32];
	int				 done;		/* [DONE] */
	char				*err;
};

/* The model and the usage of a chat.completion or of a chunk. */
static void
model_usage_read(struct parse *p, const json_t *j)
{
	const json_t		*u = json_object_get(j, "usage");
	const char		*s = json_string_value(json_object_get(j,
				    "model"));
	struct llm_usage	*us = &p->out->usage;

	if (s != NULL)
		snprintf(p->out->model, sizeof(p->out->model), "%s", s);
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
emit_content(struct parse *p, const json_t *c, enum llm_delta kind)
{
	const json_t	*part;
	const char	*s;
	size_t		 i;
	int		 rc = 0;

	if (json_is_string(c))
		return llm_emit(p->rq, p->at, p->out, kind,
		    json_string_value(c), json_string_length(c));
	json_array_foreach(c, i, part) {
		s = json_string_value(json_object_get(part, "text"));
		if (s != NULL && (rc = llm_emit(p->rq, p->at, p->out, kind, s,
		    strlen(s))) != 0)
			break;
	}
	return rc;
}

/* The reasoning and the text of a message or of a chunk's delta. */
static int
emit_message(struct parse *p, const json_t *m)
{
	int rc;

	if ((rc = emit_content(p, json_object_get(m, "reasoning_content"),
	    LLM_DELTA_REASONING)) != 0 ||
	    (rc = emit_content(p, json_object_get(m, "reasoning"),
	    LLM_DELTA_REASONING)) != 0)
		return rc;
	return emit_content(p, json_object_get(m, "content"), LLM_DELTA_TEXT);
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
parse_full(struct parse *p, const json_t *j)
{
	const json_t	*ch = json_array_get(json_object_get(j, "choices"),
			    0);
	const json_t	*msg = json_object_get(ch, "message"), *calls, *c;
	const json_t	*fn;
	const char	*s;
	struct llm_tool_call *tc;
	size_t		 i, n;
	int		 rc = 0;

	model_usage_read(p, j);
	if (!json_is_object(msg)) {
		snprintf(p->err, ENGINE_ERRMAX, "%s: the answer has no "
		    "choices[0].message", p->ep->name);
		return ENGINE_EFETCH;
	}
	if ((rc = emit_message(p, msg)) != 0)
		return rc;
	calls = json_object_get(msg, "tool_calls");
	n = json_array_size(calls);
	if (n > MAX_TOOL_CALLS)
		n = MAX_TOOL_CALLS;
	if (n > 0 && (p->out->tool_calls = calloc(n, sizeof(*tc))) == NULL)
		return ENGINE_ENOMEM;
	for (i = 0; i < n; i++) {
		c = json_array_get(calls, i);
		fn = json_object_get(c, "function");
		tc = &p->out->tool_calls[p->out->ntool_calls++];
		s = json_string_value(json_object_get(c, "id"));
		tc->id = strdup(s != NULL ? s : "");
		s = json_string_value(json_object_get(fn, "name"));
		tc->name = strdup(s != NULL ? s : "");
		tc->arguments = args_text(json_object_get(fn, "arguments"));
		if (tc->id == NULL || tc->name == NULL || tc->arguments == NULL)
			return ENGINE_ENOMEM;
	}
	s = json_string_value(json_object_get(ch, "finish_reason"));
	if (s == NULL && n > 0)
		s = "tool_calls";
	llm_finish_reason(s, p->out->finish_reason,
	    sizeof(p->out->finish_reason));
	return 0;
}

/* The slot a tool_calls delta item belongs to, or NULL. */
static struct slot *
slot_for(struct parse *p, const json_t *d, size_t pos)
{
	const json_t	*ji = json_object_get(d, "index");
	const char	*id = json_string_value(json_object_get(d, "id"));
	struct slot	*ns;
	size_t		 idx, i;

	if (json_is_integer(ji) && json_integer_value(ji) >= 0)
		idx = (size_t)json_integer_value(ji);
	else if (id != NULL && *id != '\0') {
		/* No index (some servers): a new id is a new call. */
		for (idx = p->nslots, i = 0; i < p->nslots; i++)
			if (p->slots[i].id.p != NULL &&
			    strcmp(p->slots[i].id.p, id) == 0)
				idx = i;
	} else
		idx = p->nslots > 0 ? p->nslots - 1 : pos;
	if (idx >= MAX_TOOL_CALLS)
		return NULL;
	if (idx >= p->nslots) {
		if ((ns = realloc(p->slots, (idx + 1) * sizeof(*ns))) == NULL)
			return NULL;
		memset(ns + p->nslots, 0, (idx + 1 - p->nslots) * sizeof(*ns));
		p->slots = ns;
		p->nslots = idx + 1;
	}
	return &p->slots[idx];
}

/* One chat.completion.chunk. */
static int
parse_chunk(struct parse *p, const json_t *j)
{
	const json_t	*ch = json_array_get(json_object_get(j, "choices"),
			    0);
	const json_t	*d = json_object_get(ch, "delta"), *calls, *c, *fn;
	const char	*s;
	struct slot	*sl;
	size_t		 i;
	int		 rc;

	model_usage_read(p, j);
	if ((rc = emit_message(p, d)) != 0)
		return rc;
	calls = json_object_get(d, "tool_calls");
	json_array_foreach(calls, i, c) {
		if ((sl = slot_for(p, c, i)) == NULL) {
			snprintf(p->err, ENGINE_ERRMAX, "%s: more than %d "
			    "tool calls in one answer", p->ep->name,
			    MAX_TOOL_CALLS);
			return ENGINE_ELIMIT;
		}
		fn = json_object_get(c, "function");
		if ((s = json_string_value(json_object_get(c, "id"))) != NULL &&
		    sl->id.len == 0)
			tpl_sb_str(&sl->id, s);
		if ((s = json_string_value(json_object_get(fn, "name"))) !=
		    NULL && sl->name.len == 0)
			tpl_sb_str(&sl->name, s);
		if ((s = json_string_value(json_object_get(fn, "arguments")))
		    != NULL)
			tpl_sb_str(&sl->args, s);
		else if (json_is_object(json_object_get(fn, "arguments"))) {
			char *t = json_dumps(json_object_get(fn, "arguments"),
			    JSON_COMPACT);

			if (t != NULL)
				tpl_sb_str(&sl->args, t);
			free(t);
		}
		if (sl->id.oom || sl->name.oom || sl->args.oom)
			return ENGINE_ENOMEM;
	}
	if ((s = json_string_value(json_object_get(ch, "finish_reason"))) !=
	    NULL && *s != '\0')
		snprintf(p->finish, sizeof(p->finish), "%s", s);
	return 0;
}

/* A chunk read with jansson; the errors are worded here. */
static int
chunk_json(struct parse *p, const char *data, size_t len)
{
	json_t		*j;
	const json_t	*er;
	int		 rc;

	if ((j = json_loadb(data, len, 0, NULL)) == NULL) {
		snprintf(p->err, ENGINE_ERRMAX, "%s: a stream event is not "
		    "JSON", p->ep->name);
		return ENGINE_EFETCH;
	}
	if ((er = json_object_get(j, "error")) != NULL && !json_is_null(er)) {
		/* An error in the middle of a stream. */
		llm_error_from_body(p->ep->name, 0, data, len,
		    p->ep->api_key, p->err);
		rc = ENGINE_EFETCH;
	} else
		rc = parse_chunk(p, j);
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

/* An object; fn (or qs_value) reads each member's value. */
static int
qs_object(struct qs *s, int depth, qs_fn fn, void *arg)
{
	struct qspan k;

	if (depth > QUICK_DEPTH || s->p >= s->end || *s->p != '{')
		return -1;
	s->p++;
	qs_ws(s);
	if (s->p < s->end && *s->p == '}') {
		s->p++;
		return 0;
	}
	for (;;) {
		if (qs_string(s, &k) != 0)
			return -1;
		qs_ws(s);
		if (s->p >= s->end || *s->p != ':')
			return -1;
		s->p++;
		qs_ws(s);
		if ((fn != NULL ? fn(s, &k, depth + 1, arg) :
		    qs_value(s, depth + 1)) != 0)
			return -1;
		qs_ws(s);
		if (s->p >= s->end)
			return -1;
		if (*s->p++ == '}')
			return 0;
		if (s->p[-1] != ',')
			return -1;
		qs_ws(s);
	}
}

/* An array; fn (or qs_value) reads its first element. */
static int
qs_array(struct qs *s, int depth, qs_fn fn, void *arg)
{
	int first = 1;

	if (depth > QUICK_DEPTH || s->p >= s->end || *s->p != '[')
		return -1;
	s->p++;
	qs_ws(s);
	if (s->p < s->end && *s->p == ']') {
		s->p++;
		return 0;
	}
	for (;;) {
		if ((first && fn != NULL ? fn(s, NULL, depth + 1, arg) :
		    qs_value(s, depth + 1)) != 0)
			return -1;
		first = 0;
		qs_ws(s);
		if (s->p >= s->end)
			return -1;
		if (*s->p++ == ']')
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
	case '{': return qs_object(s, depth, NULL, NULL);
	case '[': return qs_array(s, depth, NULL, NULL);
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
		    qs_object(s, depth, quick_delta, q) ? -1 : 0;
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
	return qs_object(s, depth, quick_choice, arg);
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
		    qs_array(s, depth, quick_first, q) ? -1 : 0;
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
	if (qs_object(&s, 0, quick_root, q) != 0)
		return -1;
	qs_ws(&s);
	return s.p == s.end ? 0 : -1;
}

static int
quick_emit(struct parse *p, const struct qspan *t, enum llm_delta kind)
{
	if (t->s == NULL)
		return 0;
	return llm_emit(p->rq, p->at, p->out, kind, t->s, t->n);
}

/* What parse_chunk does with the same chunk. */
static int
quick_apply(struct parse *p, const struct quick *q)
{
	int rc;

	if (q->model.s != NULL)
		snprintf(p->out->model, sizeof(p->out->model), "%.*s",
		    (int)q->model.n, q->model.s);
	if ((rc = quick_emit(p, &q->reasoning_content,
	    LLM_DELTA_REASONING)) != 0 ||
	    (rc = quick_emit(p, &q->reasoning, LLM_DELTA_REASONING)) != 0 ||
	    (rc = quick_emit(p, &q->content, LLM_DELTA_TEXT)) != 0)
		return rc;
	if (q->finish.s != NULL && q->finish.n > 0)
		snprintf(p->finish, sizeof(p->finish), "%.*s",
		    (int)q->finish.n, q->finish.s);
	return 0;
}

static int
on_event(void *arg, const char *event, const char *data, size_t len)
{
	struct parse	*p = arg;
	struct quick	 q;

	(void)event;
	if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
		p->done = 1;
		return 0;
	}
	if (quick_read(data, len, &q) == 0)
		return quick_apply(p, &q);
	return chunk_json(p, data, len);
}

/* Moves the assembled stream tool calls into the response. */
static int
slots_take(struct parse *p)
{
	struct llm_tool_call	*tc;
	size_t			 i;

	if (p->nslots == 0)
		return 0;
	if ((p->out->tool_calls = calloc(p->nslots, sizeof(*tc))) == NULL)
		return ENGINE_ENOMEM;
	for (i = 0; i < p->nslots; i++) {
		struct slot *s = &p->slots[i];

		if (s->name.len == 0 && s->args.len == 0)
			continue;	/* an index never used */
		tc = &p->out->tool_calls[p->out->ntool_calls++];
		tc->id = strdup(s->id.p != NULL ? s->id.p : "");
		tc->name = strdup(s->name.p != NULL ? s->name.p : "");
		tc->arguments = strdup(s->args.len > 0 ? s->args.p : "{}");
		if (tc->id == NULL || tc->name == NULL || tc->arguments == NULL)
			return ENGINE_ENOMEM;
	}
	return 0;
}

/* ====== One exchange ====== */

static int
openai_chat(struct engine *e, const struct llm_endpoint *ep,
    const struct llm_request *rq, struct llm_attempt *at, char *err,
    struct llm_response *out)
{
	struct llm_post	 po;
	struct parse	 p;
	json_t		*body, *j = NULL;
	size_t		 i;
	int		 rc;

	memset(&p, 0, sizeof(p));
	p.ep = ep;
	p.rq = rq;
	p.at = at;
	p.out = out;
	p.err = err;
	memset(&po, 0, sizeof(po));
	po.path = "chat/completions";
	po.auth = "Authorization: Bearer ";
	po.on_event = on_event;
	po.arg = &p;
	if ((body = build_body(ep, rq)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	po.body = body;
	if ((rc = llm_post(e, ep, rq, &po, at, err, &j)) != 0)
		goto out;
	if (j != NULL) {
		rc = parse_full(&p, j);
		goto out;
	}
	if (!p.done && p.finish[0] == '\0') {
		snprintf(err, ENGINE_ERRMAX, "%s: the stream ended before the "
		    "answer was complete", ep->name);
		at->transient = 1;
		rc = ENGINE_EFETCH;
		goto out;
	}
	if ((rc = slots_take(&p)) != 0)
		goto out;
	llm_finish_reason(p.finish[0] != '\0' ? p.finish :
	    out->ntool_calls > 0 ? "tool_calls" : "stop", out->finish_reason,
	    sizeof(out->finish_reason));
out:
	for (i = 0; i < p.nslots; i++) {
		tpl_sb_release(&p.slots[i].id);
		tpl_sb_release(&p.slots[i].name);
		tpl_sb_release(&p.slots[i].args);
	}
	free(p.slots);
	json_decref(body);
	json_decref(j);
	return rc;
}

const struct llm_protocol llm_protocol_openai = {
	.name = "openai",
	.chat = openai_chat,
};
