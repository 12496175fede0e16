/*
 * llm.c — llm_chat: resolve the provider entry, dispatch to its protocol,
 * retry with backoff; and the helpers protocol files share (SSE parsing,
 * provider error messages, response accumulation).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/llm/llm.h"

/* ====== Protocols ====== */

/* Adding a protocol: its file, plus one line here. */
static const struct llm_protocol *const protocols[] = {
	&llm_protocol_openai,
	&llm_protocol_anthropic,
};

const struct llm_protocol *
llm_protocol_find(const char *name)
{
	const struct llm_protocol	*p = NULL;
	size_t				 i;

	for (i = 0; name != NULL && i < sizeof(protocols) / sizeof(*protocols);
	     i++)
		if (strcmp(protocols[i]->name, name) == 0) {
			p = protocols[i];
			break;
		}
	return p;
}

/* ====== Responses ====== */

void
llm_response_release(struct llm_response *r)
{
	size_t i;

	free(r->text);
	free(r->reasoning);
	for (i = 0; i < r->ntool_calls; i++) {
		free(r->tool_calls[i].id);
		free(r->tool_calls[i].name);
		free(r->tool_calls[i].arguments);
	}
	free(r->tool_calls);
	memset(r, 0, sizeof(*r));
}

json_t *
llm_usage_json(const struct llm_response *r)
{
	return json_pack("{s:I, s:s, s:s, s:s, s:I, s:s, s:s, s:s, s:I, "
	    "s:s, s:s, s:f, s:f}",
	    "prompt_tokens", (json_int_t)r->usage.prompt_tokens,
	    "prompt_unit_price", "0", "prompt_price_unit", "0",
	    "prompt_price", "0",
	    "completion_tokens", (json_int_t)r->usage.completion_tokens,
	    "completion_unit_price", "0", "completion_price_unit", "0",
	    "completion_price", "0",
	    "total_tokens", (json_int_t)r->usage.total_tokens,
	    "total_price", "0", "currency", "USD",
	    "latency", r->latency, "time_to_first_token", r->first_token);
}

/* Appends s[0..n) to *buf (of *len bytes in *cap), NUL-terminated. */
static int
buf_add(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	char	*nb;
	size_t	 c;

	if (*len + n + 1 > *cap) {
		c = *cap ? *cap : 256;
		while (c < *len + n + 1)
			c *= 2;
		if ((nb = realloc(*buf, c)) == NULL)
			return ENGINE_ENOMEM;
		*buf = nb;
		*cap = c;
	}
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
	return 0;
}

int
llm_emit(const struct llm_request *rq, struct llm_attempt *at,
    struct llm_response *out, enum llm_delta kind, const char *text,
    size_t len)
{
	int rc;

	if (len == 0)
		return 0;
	if (kind == LLM_DELTA_REASONING)
		rc = buf_add(&out->reasoning, &out->reasoning_len,
		    &out->reasoning_cap, text, len);
	else
		rc = buf_add(&out->text, &out->text_len, &out->text_cap, text,
		    len);
	if (rc != 0)
		return rc;
	if (out->first_token == 0)
		out->first_token = llm_clock() - at->t0;
	if (rq->stream && rq->on_delta != NULL) {
		at->delivered = 1;
		if (rq->on_delta(rq->arg, kind, text, len) != 0)
			return ENGINE_ESTOPPED;
	}
	return 0;
}

void
llm_finish_reason(const char *raw, char *out, size_t outsz)
{
	static const char *const map[][2] = {
		{ "stop", "stop" },
		{ "end_turn", "stop" },
		{ "stop_sequence", "stop" },
		{ "pause_turn", "stop" },
		{ "length", "length" },
		{ "max_tokens", "length" },
		{ "model_context_window_exceeded", "length" },
		{ "tool_calls", "tool_calls" },
		{ "tool_use", "tool_calls" },
		{ "function_call", "tool_calls" },
		{ "content_filter", "content_filter" },
		{ "refusal", "content_filter" },
	};
	size_t i;

	if (raw == NULL || *raw == '\0') {
		snprintf(out, outsz, "%s", "stop");
		return;
	}
	for (i = 0; i < sizeof(map) / sizeof(*map); i++)
		if (strcmp(raw, map[i][0]) == 0) {
			snprintf(out, outsz, "%s", map[i][1]);
			return;
		}
	snprintf(out, outsz, "%s", raw);
}

/* ====== Small helpers ====== */

char *
llm_url(const char *base_url, const char *path)
{
	size_t	 n = strlen(base_url);
	char	*u;
	size_t	 sz;

	while (n > 0 && base_url[n - 1] == '/')
		n--;
	while (*path == '/')
		path++;
	sz = n + strlen(path) + 2;
	if ((u = malloc(sz)) == NULL)
		return NULL;
	snprintf(u, sz, "%.*s/%s", (int)n, base_url, path);
	return u;
}

double
llm_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
llm_status_transient(long status)
{
	return status == 408 || status == 409 || status == 429 ||
	    (status >= 500 && status <= 599);
}

void
llm_attempt_status(struct llm_attempt *at, const struct outbound_resp *resp)
{
	at->status = resp->status;
	at->transient = llm_status_transient(resp->status);
	at->retry_after_ms = -1;
	/*
	 * outbound_resp does not carry response headers yet; once it has
	 * retry_after (CURLINFO_RETRY_AFTER: seconds, -1 when absent) and
	 * defines OUTBOUND_RETRY_AFTER, Retry-After is honoured here.
	 */
#ifdef OUTBOUND_RETRY_AFTER
	if (resp->retry_after >= 0)
		at->retry_after_ms = resp->retry_after > 86400 ? 86400000 :
		    (int)resp->retry_after * 1000;
#endif
}

void
llm_scrub(char *msg, const char *key)
{
	static const char	 rep[] = "[redacted]";
	char			 tmp[ENGINE_ERRMAX];
	size_t			 klen, o = 0, n;
	const char		*p, *hit;

	if (key == NULL || (klen = strlen(key)) < 4 ||
	    strstr(msg, key) == NULL)
		return;
	for (p = msg; *p != '\0' && o + 1 < sizeof(tmp);) {
		if ((hit = strstr(p, key)) == NULL)
			hit = p + strlen(p);
		n = (size_t)(hit - p);
		if (n > sizeof(tmp) - 1 - o)
			n = sizeof(tmp) - 1 - o;
		memcpy(tmp + o, p, n);
		o += n;
		if (*hit == '\0')
			break;
		n = sizeof(rep) - 1;
		if (n > sizeof(tmp) - 1 - o)
			n = sizeof(tmp) - 1 - o;
		memcpy(tmp + o, rep, n);
		o += n;
		p = hit + klen;
	}
	tmp[o] = '\0';
	/* msg is an err buffer of ENGINE_ERRMAX bytes. */
	memcpy(msg, tmp, o + 1);
}

/* The first of a few well-known message fields of a JSON error body. */
static const char *
body_message(const json_t *j)
{
	const json_t	*err;
	const char	*s;

	if (!json_is_object(j))
		return NULL;
	err = json_object_get(j, "error");
	if (json_is_string(err))
		return json_string_value(err);
	if (json_is_object(err)) {
		if ((s = json_string_value(json_object_get(err, "message")))
		    != NULL && *s != '\0')
			return s;
		if ((s = json_string_value(json_object_get(err, "type")))
		    != NULL)
			return s;
	}
	if ((s = json_string_value(json_object_get(j, "message"))) != NULL)
		return s;
	if ((s = json_string_value(json_object_get(j, "detail"))) != NULL)
		return s;
	if ((s = json_string_value(json_object_get(j, "msg"))) != NULL)
		return s;
	return NULL;
}

void
llm_error_from_body(const char *name, long status, const char *body,
    size_t len, const char *key, char *err)
{
	json_t		*j = NULL;
	const char	*msg = NULL;
	char		 line[201];
	size_t		 i, n = 0;

	if (body != NULL && len > 0)
		j = json_loadb(body, len, 0, NULL);
	msg = body_message(j);
	if (msg == NULL && j == NULL && body != NULL) {
		/* The first line of a text body, printable bytes only. */
		for (i = 0; i < len && n + 1 < sizeof(line); i++) {
			if (body[i] == '\n' && n > 0)
				break;
			if ((unsigned char)body[i] >= 0x20)
				line[n++] = body[i];
		}
		line[n] = '\0';
		if (n > 0)
			msg = line;
	}
	if (msg == NULL)
		msg = status > 0 ? "the provider gave no message" :
		    "no answer";
	if (status > 0)
		snprintf(err, ENGINE_ERRMAX, "%s: %ld %s", name, status, msg);
	else
		snprintf(err, ENGINE_ERRMAX, "%s: %s", name, msg);
	llm_scrub(err, key);
	json_decref(j);
}

/* ====== Server-sent events ====== */

/* One complete line (no newline). */
static int
sse_line(struct llm_sse *s, const char *l, size_t n)
{
	const char	*v;
	size_t		 flen, vlen;
	int		 rc = 0;

	if (n > 0 && l[n - 1] == '\r')
		n--;
	if (n == 0) {
		if (s->have_data) {
			rc = s->on_event(s->arg, s->event,
			    s->data.p != NULL ? s->data.p : "", s->data.len);
			if (s->data.oom && rc == 0)
				rc = ENGINE_ENOMEM;
		}
		s->data.len = 0;
		if (s->data.p != NULL)
			s->data.p[0] = '\0';
		s->have_data = 0;
		s->event[0] = '\0';
		goto out;
	}
	if (l[0] == ':')	/* a comment: keep-alive */
		goto out;
	v = memchr(l, ':', n);
	flen = v != NULL ? (size_t)(v - l) : n;
	if (v != NULL) {
		v++;
		if (v < l + n && *v == ' ')
			v++;
		vlen = (size_t)(l + n - v);
	} else {
		v = "";
		vlen = 0;
	}
	if (flen == 5 && memcmp(l, "event", 5) == 0) {
		if (vlen >= sizeof(s->event))
			vlen = sizeof(s->event) - 1;
		memcpy(s->event, v, vlen);
		s->event[vlen] = '\0';
	} else if (flen == 4 && memcmp(l, "data", 4) == 0) {
		if (s->have_data)
			tpl_sb_add(&s->data, "\n", 1);
		tpl_sb_add(&s->data, v, vlen);
		s->have_data = 1;
	}
out:
	return rc;
}

int
llm_sse_feed(struct llm_sse *s, const char *p, size_t n)
{
	const char	*nl;
	size_t		 k;

	while (s->rc == 0 && n > 0) {
		nl = memchr(p, '\n', n);
		if (nl == NULL) {
			tpl_sb_add(&s->line, p, n);
			if (s->line.oom)
				s->rc = ENGINE_ENOMEM;
			break;
		}
		k = (size_t)(nl - p);
		if (s->line.len > 0) {
			tpl_sb_add(&s->line, p, k);
			if (s->line.oom)
				s->rc = ENGINE_ENOMEM;
			else
				s->rc = sse_line(s, s->line.p, s->line.len);
			s->line.len = 0;
		} else
			s->rc = sse_line(s, p, k);
		p += k + 1;
		n -= k + 1;
	}
	return s->rc;
}

int
llm_sse_finish(struct llm_sse *s)
{
	if (s->rc == 0 && s->line.len > 0) {
		s->rc = sse_line(s, s->line.p, s->line.len);
		s->line.len = 0;
	}
	if (s->rc == 0)
		s->rc = sse_line(s, "", 0);
	tpl_sb_release(&s->line);
	tpl_sb_release(&s->data);
	return s->rc;
}

/* ====== Chat with retries ====== */

/* The span of a model request: the GenAI semantic conventions. */
static struct span *
llm_span_start(const char *label, const struct llm_endpoint *ep,
    const struct llm_request *rq)
{
	char		 name[160];
	struct span	*s;
	json_t		*v;

	/* within a run's trace only */
	if (!trace_enabled() || span_current() == NULL)
		return NULL;
	snprintf(name, sizeof(name), "chat %s", rq->model ? rq->model : "");
	if ((s = span_start(name, span_current(), SPAN_CLIENT)) == NULL)
		return NULL;
	span_attr_str(s, "gen_ai.operation.name", "chat");
	span_attr_str(s, "gen_ai.system", label);
	span_attr_str(s, "dify.llm.endpoint", ep->name);
	span_attr_str(s, "gen_ai.request.model", rq->model);
	span_attr_str(s, "dify.llm.protocol", ep->protocol);
	if ((v = json_object_get(rq->params, "temperature")) != NULL &&
	    json_is_number(v))
		span_attr_double(s, "gen_ai.request.temperature",
		    json_number_value(v));
	if ((v = json_object_get(rq->params, "top_p")) != NULL &&
	    json_is_number(v))
		span_attr_double(s, "gen_ai.request.top_p",
		    json_number_value(v));
	if ((v = json_object_get(rq->params, "max_tokens")) != NULL &&
	    json_is_integer(v))
		span_attr_int(s, "gen_ai.request.max_tokens",
		    json_integer_value(v));
	return s;
}

/* Counts a model request in the metrics and ends its span. */
static void
llm_observe(struct span *s, const char *label, const struct llm_request *rq,
    int rc, const char *err, const struct llm_response *out, double secs,
    int attempts)
{
	const char *reason = out->finish_reason;

	metric_add(METRIC_LLM_CALLS, METRIC_LABELS(label, rq->model,
	    rc == 0 ? "ok" : "error"), 1);
	metric_observe(METRIC_LLM_DURATION, METRIC_LABELS(label, rq->model),
	    secs);
	if (rc == 0) {
		metric_add(METRIC_LLM_TOKENS, METRIC_LABELS(label,
		    rq->model, "prompt"), out->usage.prompt_tokens);
		metric_add(METRIC_LLM_TOKENS, METRIC_LABELS(label,
		    rq->model, "completion"), out->usage.completion_tokens);
	}
	if (s == NULL)
		return;
	span_attr_int(s, "dify.llm.attempts", attempts);
	if (rc == 0) {
		span_attr_str(s, "gen_ai.response.model", out->model[0] ?
		    out->model : rq->model);
		span_attr_int(s, "gen_ai.usage.input_tokens",
		    out->usage.prompt_tokens);
		span_attr_int(s, "gen_ai.usage.output_tokens",
		    out->usage.completion_tokens);
		if (reason[0] != '\0')
			span_attr_strings(s, "gen_ai.response.finish_reasons",
			    &reason, 1);
		span_attr_content(s, "gen_ai.completion", out->text);
	} else {
		span_attr_str(s, "error.type", engine_strerror(rc));
		span_error(s, err);
	}
	span_end(s);
}

static void
sleep_ms(long ms)
{
	struct timespec ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * llm_chat_endpoint, with the provider named label in metrics and spans
 * (the DSL's provider rather than the entry serving it, which may be the
 * catch-all "*").
 */
static int
chat_with(struct engine *e, const struct llm_endpoint *ep, const char *label,
    const struct llm_request *rq, char *err, struct llm_response *out)
{
	const struct conf		*c = e->conf;
	const struct llm_protocol	*p;
	struct llm_attempt		 at;
	struct span			*span = llm_span_start(label, ep, rq);
	double				 t0 = llm_clock();
	long				 delay;
	int				 rc, attempt, attempts = 0;
	size_t				 n;

	if ((p = llm_protocol_find(ep->protocol)) == NULL) {
		rc = engine_invalid(err, "model provider '%s' has protocol "
		    "'%s': use openai or anthropic", ep->name, ep->protocol);
		goto out;
	}
	if (rq->model == NULL || *rq->model == '\0') {
		rc = engine_invalid(err, "no model name is set (model.name)");
		goto out;
	}
	if (rq->nmessages == 0) {
		rc = engine_invalid(err, "a model request needs a message");
		goto out;
	}
	for (attempt = 0;; attempt++) {
		memset(&at, 0, sizeof(at));
		at.retry_after_ms = -1;
		at.t0 = t0;
		llm_response_release(out);
		attempts++;
		rc = p->chat(e, ep, rq, &at, err, out);
		if (rc == 0 || at.delivered || !at.transient ||
		    attempt >= c->llm_retries)
			break;
		delay = (long)c->llm_backoff_ms <<
		    (attempt < 20 ? attempt : 20);
		if (at.retry_after_ms > delay)
			delay = at.retry_after_ms;
		if (delay > c->llm_max_backoff_ms)
			delay = c->llm_max_backoff_ms;
		log_info("model provider %s: %s; retry %d of %d in %ld ms",
		    ep->name, err, attempt + 1, c->llm_retries, delay);
		sleep_ms(delay);
	}
	if (rc != 0 && attempts > 1 && (n = strlen(err)) + 1 < ENGINE_ERRMAX)
		snprintf(err + n, ENGINE_ERRMAX - n, " (after %d attempts)",
		    attempts);
	if (rc == 0 && ((out->text == NULL && (out->text = calloc(1, 1)) ==
	    NULL) || (out->reasoning == NULL &&
	    (out->reasoning = calloc(1, 1)) == NULL)))
		rc = ENGINE_ENOMEM;
	if (rc == 0) {
		out->attempts = attempts;
		out->latency = llm_clock() - t0;
	}
out:
	llm_observe(span, label, rq, rc, err, out, llm_clock() - t0,
	    attempts);
	if (rc != 0)
		llm_response_release(out);
	return rc;
}

int
llm_chat_endpoint(struct engine *e, const struct llm_endpoint *ep,
    const struct llm_request *rq, char *err, struct llm_response *out)
{
	return chat_with(e, ep, ep->name, rq, err, out);
}

int
llm_chat(struct engine *e, const char *dsl_provider,
    const struct llm_request *rq, char *err, struct llm_response *out)
{
	struct llm_endpoint	ep;
	char			label[65];
	int			rc;

	memset(&ep, 0, sizeof(ep));
	if ((rc = llm_provider_resolve(e, dsl_provider, rq->model, err,
	    &ep)) != 0)
		goto out;
	rc = chat_with(e, &ep, llm_provider_name(dsl_provider, label,
	    sizeof(label)), rq, err, out);
out:
	llm_endpoint_release(&ep);
	return rc;
}
