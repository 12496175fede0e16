/*
 * llm.c — the table of protocols, and the helpers the chat driver and the
 * protocol files share: SSE parsing, provider error messages, finish
 * reasons, the usage object.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/llm/llm.h"

/* ====== Protocols ====== */

/* Adding a protocol: its file of hooks, plus one line here. */
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

json_t *
llm_tool_schema(const struct llm_tool *tl)
{
	if (tl->parameters != NULL)
		return json_incref((json_t *)tl->parameters);
	return json_pack("{s:s, s:{}}", "type", "object", "properties");
}

json_t *
llm_stop_list(const json_t *params)
{
	const json_t *v = json_object_get(params, "stop");

	if (json_is_string(v) && json_string_length(v) > 0)
		return json_pack("[O]", v);
	if (json_is_array(v) && json_array_size(v) > 0)
		return json_incref((json_t *)v);
	return NULL;
}

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
			if (s->data.err && rc == 0)
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
			dbuf_add(&s->data, "\n", 1);
		dbuf_add(&s->data, v, vlen);
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
			dbuf_add(&s->line, p, n);
			if (s->line.err)
				s->rc = ENGINE_ENOMEM;
			break;
		}
		k = (size_t)(nl - p);
		if (s->line.len > 0) {
			dbuf_add(&s->line, p, k);
			if (s->line.err)
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
	dbuf_free(&s->line);
	dbuf_free(&s->data);
	return s->rc;
}
