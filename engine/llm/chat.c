/*
 * chat.c — the chat driver, the same for every protocol. llm_chat resolves
 * the provider entry and retries; one attempt POSTs the body the
 * protocol's hooks build, feeds a streamed answer to them event by event
 * (or hands them an answer that came whole), gathers text, reasoning and
 * tool calls into the response and turns a refusal into a message. A
 * protocol file keeps only what differs, in its struct llm_protocol.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "engine/llm/llm.h"

/* ====== The answer ====== */

/*
 * Appends s[0..n) to *buf (of *len bytes in *cap, the NUL included), the
 * response's text or reasoning, growing it as a dbuf does.
 */
static int
buf_add(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	struct dbuf	b = { *buf, *len, *cap, 0, DBUF_OK };
	int		rc = dbuf_add(&b, s, n);

	*buf = b.p;
	*len = b.len;
	*cap = b.cap;
	return rc == DBUF_OK ? 0 : ENGINE_ENOMEM;
}

int
llm_chat_emit(struct llm_chat *c, enum llm_delta kind, const char *text,
    size_t len)
{
	const struct llm_request	*rq = c->rq;
	struct llm_attempt		*at = c->at;
	struct llm_response		*out = c->out;
	int				 rc;

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

int
llm_chat_call(struct llm_chat *c, const char *id, const char *name,
    const char *args)
{
	struct llm_tool_call	*tc, *n;
	size_t			 k = c->out->ntool_calls;

	if (args == NULL)
		args = "{}";
	if (c->answer_tool != NULL && strcmp(name, c->answer_tool) == 0)
		return llm_chat_emit(c, LLM_DELTA_TEXT, args, strlen(args));
	if ((n = realloc(c->out->tool_calls, (k + 1) * sizeof(*n))) == NULL)
		return ENGINE_ENOMEM;
	c->out->tool_calls = n;
	tc = &n[k];
	memset(tc, 0, sizeof(*tc));
	c->out->ntool_calls++;
	tc->id = strdup(id);
	tc->name = strdup(name);
	tc->arguments = strdup(args);
	if (tc->id == NULL || tc->name == NULL || tc->arguments == NULL)
		return ENGINE_ENOMEM;
	return 0;
}

struct llm_slot *
llm_chat_slot(struct llm_chat *c, json_int_t idx)
{
	struct llm_slot	*ns;
	size_t		 n;

	if (idx < 0 || idx >= c->proto->max_slots)
		goto toomany;
	if ((n = (size_t)idx + 1) > c->nslots) {
		/* out of memory is reported as the limit too */
		if ((ns = realloc(c->slots, n * sizeof(*ns))) == NULL)
			goto toomany;
		memset(ns + c->nslots, 0, (n - c->nslots) * sizeof(*ns));
		c->slots = ns;
		c->nslots = n;
	}
	return &c->slots[idx];
toomany:
	snprintf(c->err, ENGINE_ERRMAX, "%s: more than %lld %s in one answer",
	    c->ep->name, (long long)c->proto->max_slots, c->proto->slots);
	return NULL;
}

/* Moves the tool calls a stream assembled into the response. */
static int
slots_take(struct llm_chat *c)
{
	struct llm_slot	*sl;
	size_t		 i;
	int		 rc = 0;

	for (i = 0; i < c->nslots && rc == 0; i++) {
		sl = &c->slots[i];
		if (sl->id.err || sl->name.err || sl->args.err)
			rc = ENGINE_ENOMEM;
		else if (sl->tool)
			rc = llm_chat_call(c, sl->id.p != NULL ? sl->id.p : "",
			    sl->name.p != NULL ? sl->name.p : "",
			    sl->args.len > 0 ? sl->args.p : NULL);
	}
	return rc;
}

void
llm_chat_release(struct llm_chat *c)
{
	size_t i;

	for (i = 0; i < c->nslots; i++) {
		dbuf_free(&c->slots[i].id);
		dbuf_free(&c->slots[i].name);
		dbuf_free(&c->slots[i].args);
	}
	free(c->slots);
	c->slots = NULL;
	c->nslots = 0;
}

json_t *
llm_chat_json(struct llm_chat *c, const char *data, size_t len)
{
	json_t *j;

	if ((j = json_loadb(data, len, 0, NULL)) == NULL)
		snprintf(c->err, ENGINE_ERRMAX, "%s: a stream event is not "
		    "JSON", c->ep->name);
	return j;
}

int
llm_chat_error(struct llm_chat *c, const char *data, size_t len,
    const json_t *error)
{
	llm_error_from_body(c->ep->name, 0, data, len, c->ep->api_key,
	    c->err);
	c->at->transient = c->proto->transient != NULL &&
	    c->proto->transient(error);
	return ENGINE_EFETCH;
}

/* ====== The HTTP exchange ====== */

/* A streamed answer on its way to the protocol's event hook. */
struct stream {
	struct llm_chat		*c;
	int			 events;	/* SSE events seen */
	int			 rc;		/* what stopped the transfer */
	struct dbuf		 raw;		/* the body before any event */
	struct llm_sse		 sse;
};

static int
on_event(void *arg, const char *event, const char *data, size_t len)
{
	struct stream *st = arg;

	st->events++;
	dbuf_free(&st->raw);
	return st->c->proto->event(st->c, event, data, len);
}

static int
on_data(const char *buf, size_t n, void *arg)
{
	struct stream *st = arg;

	if (st->events == 0) {
		dbuf_add(&st->raw, buf, n);
		if (st->raw.err)
			st->rc = ENGINE_ENOMEM;
	}
	if (st->rc == 0)
		st->rc = llm_sse_feed(&st->sse, buf, n);
	return st->rc;
}

/* The request headers; NULL when out of memory. */
static struct curl_slist *
headers(const struct llm_endpoint *ep, const struct llm_protocol *pr,
    int stream)
{
	struct curl_slist	*hl = NULL, *nl;
	const char		*fixed[] = {
		"Content-Type: application/json",
		pr->header,
		stream ? "Accept: text/event-stream" :
		    "Accept: application/json",
		"Expect:",
	};
	char			*h;
	size_t			 i, sz;

	for (i = 0; i < sizeof(fixed) / sizeof(*fixed); i++) {
		if (fixed[i] == NULL)
			continue;
		if ((nl = curl_slist_append(hl, fixed[i])) == NULL)
			goto fail;
		hl = nl;
	}
	if (ep->api_key[0] != '\0') {
		sz = strlen(pr->auth) + strlen(ep->api_key) + 1;
		if ((h = malloc(sz)) == NULL)
			goto fail;
		snprintf(h, sz, "%s%s", pr->auth, ep->api_key);
		nl = curl_slist_append(hl, h);
		secret_free(h);
		if (nl == NULL)
			goto fail;
		hl = nl;
	}
	return hl;
fail:
	curl_slist_free_all(hl);
	return NULL;
}

/*
 * POSTs body to c->ep with Content-Type, the protocol's header, Accept
 * (SSE when streaming), the key and rq's timeout, and fills c->at from
 * the HTTP status. Returns 0 with *whole NULL when a stream of events was
 * read (exchange checks it was complete), 0 with *whole the answer's JSON
 * (a new reference) when it came whole — not streamed, or a server that
 * ignored "stream" — or a negative ENGINE_E* code with err set:
 * ENGINE_EFETCH (unreachable, a refusal, an answer that is not JSON),
 * ENGINE_ESTOPPED ("stopped"), ENGINE_ENOMEM, or what a hook returned.
 */
static int
post(struct engine *e, struct llm_chat *c, const json_t *body,
    json_t **whole)
{
	const struct llm_endpoint	*ep = c->ep;
	const struct llm_request	*rq = c->rq;
	char				*err = c->err;
	struct curl_slist		*hl = NULL;
	struct outbound_req		 oreq;
	struct outbound_resp		 resp;
	struct stream			 st;
	char				*text = NULL, *url = NULL;
	char				 ferr[ENGINE_ERRMAX];
	int				 rc;

	*whole = NULL;
	memset(&resp, 0, sizeof(resp));
	memset(&st, 0, sizeof(st));
	st.c = c;
	st.sse.on_event = on_event;
	st.sse.arg = &st;
	rc = ENGINE_ENOMEM;
	if ((text = json_dumps(body, JSON_COMPACT)) == NULL ||
	    (url = llm_url(ep->base_url, c->proto->path(ep))) == NULL ||
	    (hl = headers(ep, c->proto, rq->stream)) == NULL)
		goto out;
	memset(&oreq, 0, sizeof(oreq));
	oreq.method = "POST";
	oreq.url = url;
	oreq.headers = hl;
	oreq.body = text;
	oreq.body_len = strlen(text);
	oreq.trusted = 1;	/* the admin configured this endpoint */
	oreq.timeout = rq->timeout > 0 ? rq->timeout : e->conf->llm_timeout;
	if (rq->stream) {
		oreq.on_data = on_data;
		oreq.arg = &st;
	}
	rc = outbound_fetch(e, &oreq, ferr, &resp);
	if (st.rc != 0) {	/* the stream parse stopped the transfer */
		rc = st.rc;
		if (rc == ENGINE_ESTOPPED)
			snprintf(err, ENGINE_ERRMAX, "stopped");
		else if (rc == ENGINE_ENOMEM)
			snprintf(err, ENGINE_ERRMAX, "out of memory");
		goto out;
	}
	if (rc != 0) {
		snprintf(err, ENGINE_ERRMAX, "%.64s: %.180s", ep->name, ferr);
		llm_scrub(err, ep->api_key);
		goto out;
	}
	llm_attempt_status(c->at, &resp);
	if (resp.status < 200 || resp.status > 299) {
		if (rq->stream)
			llm_error_from_body(ep->name, resp.status, st.raw.p,
			    st.raw.len, ep->api_key, err);
		else
			llm_error_from_body(ep->name, resp.status, resp.body,
			    resp.len, ep->api_key, err);
		rc = ENGINE_EFETCH;
		goto out;
	}
	if (rq->stream && (rc = llm_sse_finish(&st.sse)) != 0)
		goto out;
	if (rq->stream && st.events > 0)
		goto out;
	/* Not streamed, or a server that answered a stream request with
	 * one JSON object. */
	*whole = rq->stream ? json_loadb(st.raw.p != NULL ? st.raw.p : "",
	    st.raw.len, 0, NULL) : json_loadb(resp.body, resp.len, 0, NULL);
	if (*whole == NULL) {
		snprintf(err, ENGINE_ERRMAX, "%s: the answer is not JSON",
		    ep->name);
		rc = ENGINE_EFETCH;
	}
out:
	dbuf_free(&st.sse.line);
	dbuf_free(&st.sse.data);
	dbuf_free(&st.raw);
	outbound_resp_release(&resp);
	curl_slist_free_all(hl);
	free(text);
	free(url);
	return rc;
}

/* ====== One attempt ====== */

/*
 * One HTTP exchange of rq with ep through protocol pr. Returns 0 with out
 * filled, or a negative ENGINE_E* code with err ("<entry>: <status>
 * <message>") and at saying whether a retry may help. out may hold
 * partial results on failure; the caller releases it either way.
 */
static int
exchange(struct engine *e, const struct llm_protocol *pr,
    const struct llm_endpoint *ep, const struct llm_request *rq,
    struct llm_attempt *at, char *err, struct llm_response *out)
{
	struct llm_chat	 c;
	json_t		*body, *j = NULL;
	int		 rc;

	memset(&c, 0, sizeof(c));
	c.proto = pr;
	c.ep = ep;
	c.rq = rq;
	c.at = at;
	c.out = out;
	c.err = err;
	if ((body = pr->body(&c)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = post(e, &c, body, &j)) != 0)
		goto out;
	if (j != NULL) {
		rc = pr->whole(&c, j);
		goto out;
	}
	if (!c.done && c.finish[0] == '\0') {
		snprintf(err, ENGINE_ERRMAX, "%s: the stream ended before the "
		    "answer was complete", ep->name);
		at->transient = 1;
		rc = ENGINE_EFETCH;
		goto out;
	}
	if ((rc = slots_take(&c)) != 0)
		goto out;
	if (pr->end != NULL)
		pr->end(&c);
	llm_finish_reason(c.finish, out->finish_reason,
	    sizeof(out->finish_reason));
out:
	llm_chat_release(&c);
	json_decref(body);
	json_decref(j);
	return rc;
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
		rc = exchange(e, p, ep, rq, &at, err, out);
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

/* ====== Console: a provider's test (a chat of one short turn) ====== */

int
engine_model_provider_test(struct engine *e, const char *name,
    const json_t *in, char *err, json_t **out)
{
	struct llm_endpoint	 ep;
	struct llm_response	 rs;
	struct llm_request	 rq;
	struct llm_message	 msg;
	json_t			*params = NULL;
	const char		*model;
	char			 first[256];
	int			 rc;

	*out = NULL;
	memset(&rs, 0, sizeof(rs));
	memset(&rq, 0, sizeof(rq));
	memset(&msg, 0, sizeof(msg));
	if ((rc = llm_provider_lookup(e, name, err, &ep)) != 0)
		goto out;
	model = json_string_value(json_object_get(in, "model"));
	if ((model == NULL || *model == '\0') &&
	    llm_provider_first_model(e, name, first, sizeof(first)) == 0)
		model = first;
	if (model == NULL || *model == '\0') {
		rc = engine_invalid(err, "name a model to test with (model)");
		goto out;
	}
	msg.role = LLM_USER;
	msg.content = "Say OK.";
	if ((params = json_pack("{s:i}", "max_tokens", 16)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	rq.model = model;
	rq.messages = &msg;
	rq.nmessages = 1;
	rq.params = params;
	rq.timeout = e->conf->llm_timeout < 60 ? e->conf->llm_timeout : 60;
	if ((rc = chat_with(e, &ep, ep.name, &rq, err, &rs)) != 0)
		goto out;
	*out = json_pack("{s:s, s:s, s:s, s:f, s:o}", "result", "success",
	    "model", model, "text", rs.text != NULL ? rs.text : "", "latency",
	    rs.latency, "usage", llm_usage_json(&rs));
	if (*out == NULL)
		rc = ENGINE_ENOMEM;
out:
	llm_endpoint_release(&ep);
	llm_response_release(&rs);
	json_decref(params);
	return rc;
}
