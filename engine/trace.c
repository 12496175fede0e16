/*
 * trace.c — OpenTelemetry traces of runs, exported over OTLP/HTTP with the
 * JSON encoding (tracing.otlp_endpoint).
 *
 * A run is one trace: a span for the run, one per node execution under it,
 * and under a node one per model request, tool call and sandbox command.
 * Where a span starts, the thread's current span (span_current) is its
 * parent; the executor sets the current span around each node and hands
 * it to the threads of parallel branches.
 *
 * Nothing here may slow a run or make it fail. span_end turns a span into
 * its OTLP JSON object and queues it (a mutex held for a list append); a
 * thread of its own takes up to tracing.batch_max spans at a time, at
 * least every tracing.flush_ms, and POSTs them through outbound_fetch
 * (trusted: the admin configured the endpoint) within tracing.timeout.
 * The queue holds at most tracing.queue_max spans: past it a span is
 * dropped and counted (flowcgi_trace_spans_total{outcome="dropped"}), so a
 * collector that is down or slow costs memory up to that bound and
 * nothing else. A batch the collector refuses or does not answer is
 * dropped and counted as failed, never retried into a growing backlog.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "engine/internal.h"

#define CONTENT_MAX	(16 * 1024)	/* bytes of a content attribute */
#define STOP_WAIT	2		/* s the exit waits for the exporter */

struct span {
	char		 trace_id[33];
	char		 span_id[17];
	char		 parent_id[17];
	char		*name;
	int		 kind;
	int64_t		 start_ns;
	json_t		*attrs;		/* OTLP KeyValue list */
	int		 error;
	char		*message;	/* status message when error */
};

struct tracer {
	struct engine	*e;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	json_t		*queue;		/* OTLP span objects, oldest first */
	int		 quit;
	pthread_t	 tid;
	struct curl_slist *headers;
	json_t		*resource;	/* OTLP resource object */
	int64_t		 last_warn;	/* s: one warning a minute at most */
};

/* One exporter per process: the engine that started it. */
static struct tracer	*tracer;
static atomic_int	 tracing_on;
static int		 include_content;
static __thread struct span *current;

/* ====== Identifiers and time ====== */

/* A per-thread xorshift128+ seeded from the kernel: ids need to be
 * unique, not secret, and a syscall per id would cost more than a span. */
static uint64_t
rand64(void)
{
	static __thread uint64_t s[2];
	uint64_t x, y;

	if (s[0] == 0 && s[1] == 0) {
		if (getrandom(s, sizeof(s), 0) != (ssize_t)sizeof(s)) {
			s[0] = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)&x;
			s[1] = (uint64_t)getpid() << 32 | 0x9e3779b9u;
		}
		s[0] |= 1;
	}
	x = s[0];
	y = s[1];
	s[0] = y;
	x ^= x << 23;
	s[1] = x ^ y ^ (x >> 17) ^ (y >> 26);
	return s[1] + y;
}

static void
hex_id(char *out, size_t bytes)
{
	uint64_t	v = 0;
	size_t		i;

	for (i = 0; i < bytes; i++) {
		if (i % 8 == 0)
			v = rand64();
		snprintf(out + 2 * i, 3, "%02x", (unsigned)(v & 0xff));
		v >>= 8;
	}
}

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ====== Spans ====== */

int
trace_enabled(void)
{
	return atomic_load_explicit(&tracing_on, memory_order_relaxed);
}

int
trace_content(void)
{
	return trace_enabled() && include_content;
}

struct span *
span_start(const char *name, struct span *parent, enum span_kind kind)
{
	struct span *s;

	if (!trace_enabled())
		return NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	if ((s->name = strdup(name != NULL && *name != '\0' ? name :
	    "span")) == NULL || (s->attrs = json_array()) == NULL) {
		free(s->name);
		free(s);
		return NULL;
	}
	if (parent != NULL) {
		memcpy(s->trace_id, parent->trace_id, sizeof(s->trace_id));
		memcpy(s->parent_id, parent->span_id, sizeof(s->parent_id));
	} else
		hex_id(s->trace_id, 16);
	hex_id(s->span_id, 8);
	s->kind = kind;
	s->start_ns = now_ns();
	return s;
}

static void
attr_add(struct span *s, const char *k, json_t *v)
{
	if (s == NULL || v == NULL) {
		json_decref(v);
		return;
	}
	json_array_append_new(s->attrs, json_pack("{s:s,s:o}", "key", k,
	    "value", v));
}

void
span_attr_str(struct span *s, const char *k, const char *v)
{
	if (s != NULL && v != NULL)
		attr_add(s, k, json_pack("{s:s}", "stringValue", v));
}

void
span_attr_int(struct span *s, const char *k, int64_t v)
{
	char buf[32];

	/* OTLP JSON carries 64-bit integers as strings */
	if (s == NULL)
		return;
	snprintf(buf, sizeof(buf), "%" PRId64, v);
	attr_add(s, k, json_pack("{s:s}", "intValue", buf));
}

void
span_attr_double(struct span *s, const char *k, double v)
{
	if (s != NULL)
		attr_add(s, k, json_pack("{s:f}", "doubleValue", v));
}

void
span_attr_strings(struct span *s, const char *k, const char *const *v,
    size_t n)
{
	json_t	*vals;
	size_t	 i;

	if (s == NULL || (vals = json_array()) == NULL)
		return;
	for (i = 0; i < n; i++)
		json_array_append_new(vals, json_pack("{s:s}", "stringValue",
		    v[i] ? v[i] : ""));
	attr_add(s, k, json_pack("{s:{s:o}}", "arrayValue", "values", vals));
}

void
span_attr_content(struct span *s, const char *k, const char *text)
{
	char	*cut;
	size_t	 n;

	if (s == NULL || text == NULL || !include_content)
		return;
	if ((n = strlen(text)) <= CONTENT_MAX) {
		span_attr_str(s, k, text);
		return;
	}
	/* cut on a character boundary, so that the JSON stays valid */
	for (n = CONTENT_MAX; n > 0 && ((unsigned char)text[n] & 0xc0) ==
	    0x80; n--)
		;
	if ((cut = strndup(text, n)) != NULL)
		span_attr_str(s, k, cut);
	free(cut);
}

void
span_attr_content_json(struct span *s, const char *k, const json_t *v)
{
	char *text;

	if (s == NULL || v == NULL || !include_content)
		return;
	if ((text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT)) != NULL)
		span_attr_content(s, k, text);
	free(text);
}

void
span_error(struct span *s, const char *message)
{
	if (s == NULL)
		return;
	s->error = 1;
	free(s->message);
	s->message = message != NULL ? strdup(message) : NULL;
}

struct span *
span_current(void)
{
	return current;
}

struct span *
span_set_current(struct span *s)
{
	struct span *prev = current;

	current = s;
	return prev;
}

const char *
span_trace_id(const struct span *s)
{
	return s != NULL ? s->trace_id : NULL;
}

static void
span_free(struct span *s)
{
	free(s->name);
	free(s->message);
	json_decref(s->attrs);
	free(s);
}

void
span_end(struct span *s)
{
	struct tracer	*t = tracer;
	json_t		*o;
	char		 start[24], end[24];
	int		 dropped = 0;

	if (s == NULL)
		return;
	if (current == s)
		current = NULL;
	snprintf(start, sizeof(start), "%" PRId64, s->start_ns);
	snprintf(end, sizeof(end), "%" PRId64, now_ns());
	o = json_pack("{s:s,s:s,s:s,s:i,s:s,s:s,s:O,s:{s:i,s:s?}}",
	    "traceId", s->trace_id, "spanId", s->span_id, "name", s->name,
	    "kind", s->kind, "startTimeUnixNano", start, "endTimeUnixNano",
	    end, "attributes", s->attrs, "status", "code", s->error ? 2 : 1,
	    "message", s->error ? s->message : NULL);
	if (o != NULL && s->parent_id[0] != '\0')
		json_object_set_new(o, "parentSpanId",
		    json_string(s->parent_id));
	span_free(s);
	if (o == NULL || t == NULL)
		return;
	pthread_mutex_lock(&t->mu);
	if (json_array_size(t->queue) >=
	    (size_t)t->e->conf->tracing_queue_max)
		dropped = 1;
	else {
		json_array_append_new(t->queue, o);
		o = NULL;
		if (json_array_size(t->queue) >=
		    (size_t)t->e->conf->tracing_batch_max)
			pthread_cond_signal(&t->cv);
	}
	pthread_mutex_unlock(&t->mu);
	json_decref(o);
	if (dropped)
		metric_add(METRIC_TRACE_SPANS, METRIC_LABELS("dropped"), 1);
}

/* ====== Export ====== */

/*
 * The request headers: JSON, and tracing.headers ("k=v,k2=v2" with
 * percent-encoded values, as OTEL_EXPORTER_OTLP_HEADERS). NULL when out of
 * memory.
 */
static struct curl_slist *
headers_make(const char *spec)
{
	struct curl_slist	*h = NULL, *nh;
	const char		*p = spec, *comma, *eq;
	char			*val, line[2300];
	int			 n;

	if ((h = curl_slist_append(NULL, "Content-Type: application/json"))
	    == NULL)
		return NULL;
	while (*p != '\0') {
		p += strspn(p, " ,");
		if (*p == '\0')
			break;
		comma = strchr(p, ',');
		if (comma == NULL)
			comma = p + strlen(p);
		eq = memchr(p, '=', (size_t)(comma - p));
		if (eq != NULL && eq > p) {
			val = curl_easy_unescape(NULL, eq + 1,
			    (int)(comma - eq - 1), &n);
			if (val != NULL && memchr(val, '\r', (size_t)n) == NULL &&
			    memchr(val, '\n', (size_t)n) == NULL) {
				snprintf(line, sizeof(line), "%.*s: %s",
				    (int)(eq - p), p, val);
				if ((nh = curl_slist_append(h, line)) != NULL)
					h = nh;
			}
			curl_free(val);
		}
		p = comma;
	}
	return h;
}

/* Sends spans (an array, stolen); counts them exported or failed. */
static void
export_batch(struct tracer *t, json_t *spans)
{
	struct outbound_req	 rq;
	struct outbound_resp	 rs;
	json_t			*body;
	char			*text, err[ENGINE_ERRMAX] = "";
	size_t			 n = json_array_size(spans), len;
	int			 ok = 0;

	body = json_pack("{s:[{s:O,s:[{s:{s:s,s:s},s:o}]}]}", "resourceSpans",
	    "resource", t->resource, "scopeSpans", "scope", "name", "flowcgi",
	    "version", FLOWCGI_VERSION, "spans", spans);
	text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	if (text != NULL) {
		len = strlen(text);
		memset(&rq, 0, sizeof(rq));
		memset(&rs, 0, sizeof(rs));
		rq.method = "POST";
		rq.url = t->e->conf->tracing_endpoint;
		rq.headers = t->headers;
		rq.body = text;
		rq.body_len = len;
		rq.trusted = 1;
		rq.timeout = t->e->conf->tracing_timeout;
		rq.connect_timeout = t->e->conf->tracing_timeout;
		rq.max_bytes = 1 << 20;
		if (outbound_fetch(t->e, &rq, err, &rs) == 0) {
			ok = rs.status >= 200 && rs.status < 300;
			if (!ok)
				snprintf(err, sizeof(err), "HTTP %ld", rs.status);
			outbound_resp_release(&rs);
		}
		free(text);
	} else
		snprintf(err, sizeof(err), "out of memory");
	metric_add(METRIC_TRACE_SPANS, METRIC_LABELS(ok ? "exported" :
	    "failed"), (int64_t)n);
	if (!ok && time(NULL) - t->last_warn >= 60) {
		t->last_warn = time(NULL);
		log_warn("tracing: %zu spans not sent to '%s' "
		    "(tracing.otlp_endpoint): %s", n,
		    t->e->conf->tracing_endpoint, err);
	}
}

/* Takes up to batch_max queued spans (called with t->mu held). */
static json_t *
queue_take(struct tracer *t)
{
	json_t	*batch, *rest;
	size_t	 n = json_array_size(t->queue), max;

	max = (size_t)t->e->conf->tracing_batch_max;
	if (n <= max) {
		batch = t->queue;
		t->queue = json_array();
		if (t->queue == NULL) {	/* keep the old one: drop its spans */
			t->queue = batch;
			json_array_clear(batch);
			return NULL;
		}
		return batch;
	}
	if ((batch = json_array()) == NULL || (rest = json_array()) == NULL) {
		json_decref(batch);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		json_array_append(i < max ? batch : rest,
		    json_array_get(t->queue, i));
	json_decref(t->queue);
	t->queue = rest;
	return batch;
}

static void *
exporter_main(void *arg)
{
	struct tracer	*t = arg;
	struct timespec	 ts;
	json_t		*batch;
	int64_t		 due;
	int		 quit;

	pthread_mutex_lock(&t->mu);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		due = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 +
		    t->e->conf->tracing_flush_ms;
		ts.tv_sec = (time_t)(due / 1000);
		ts.tv_nsec = (long)(due % 1000) * 1000000;
		while (!t->quit && json_array_size(t->queue) <
		    (size_t)t->e->conf->tracing_batch_max &&
		    pthread_cond_timedwait(&t->cv, &t->mu, &ts) != ETIMEDOUT)
			;
		quit = t->quit;
		if (json_array_size(t->queue) > 0 &&
		    (batch = queue_take(t)) != NULL) {
			pthread_mutex_unlock(&t->mu);
			if (json_array_size(batch) > 0)
				export_batch(t, batch);
			else
				json_decref(batch);
			pthread_mutex_lock(&t->mu);
		}
		/* stopping: one batch, not a wait per batch on a collector
		 * that is down */
		if (quit)
			break;
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

int
trace_start(struct engine *e)
{
	const struct conf	*c = e->conf;
	struct tracer		*t;
	pthread_condattr_t	 ca;
	char			 host[64];

	if (c->tracing_endpoint[0] == '\0' || tracer != NULL)
		return 0;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return ENGINE_ENOMEM;
	t->e = e;
	pthread_mutex_init(&t->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	t->queue = json_array();
	t->headers = headers_make(c->tracing_headers);
	t->resource = json_pack("{s:[{s:s,s:{s:s}},{s:s,s:{s:s}},"
	    "{s:s,s:{s:s}},{s:s,s:{s:I}}]}", "attributes",
	    "key", "service.name", "value", "stringValue",
	    c->tracing_service_name, "key", "service.version", "value",
	    "stringValue", FLOWCGI_VERSION, "key", "host.name", "value",
	    "stringValue", host, "key", "process.pid", "value", "intValue",
	    (json_int_t)getpid());
	if (t->queue == NULL || t->headers == NULL || t->resource == NULL ||
	    pthread_create(&t->tid, NULL, exporter_main, t) != 0) {
		json_decref(t->queue);
		json_decref(t->resource);
		curl_slist_free_all(t->headers);
		pthread_cond_destroy(&t->cv);
		pthread_mutex_destroy(&t->mu);
		free(t);
		return ENGINE_ENOMEM;
	}
	include_content = c->tracing_include_content;
	tracer = t;
	atomic_store(&tracing_on, 1);
	return 0;
}

void
trace_stop(struct engine *e)
{
	struct tracer	*t = tracer;
	struct timespec	 ts;

	if (t == NULL || t->e != e)
		return;
	/* spans still queued get one try, within tracing.timeout */
	atomic_store(&tracing_on, 0);
	pthread_mutex_lock(&t->mu);
	t->quit = 1;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
	/* A stuck collector must not hold up the exit: after a few seconds
	 * the thread is left to the process's end, with what it uses. */
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += STOP_WAIT;
	if (pthread_timedjoin_np(t->tid, NULL, &ts) != 0) {
		log_warn("tracing: the collector did not answer within %d s; "
		    "exiting without the last spans", STOP_WAIT);
		tracer = NULL;
		return;
	}
	tracer = NULL;
	json_decref(t->queue);
	json_decref(t->resource);
	curl_slist_free_all(t->headers);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
}
