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
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
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

/* Text that grows, with a sticky out-of-memory flag. It may start in a
 * caller's array (heap 0): most spans never need the heap for theirs. */
struct tbuf {
	char	*p;
	size_t	 len, cap;
	int	 oom;
	int	 heap;		/* p is malloc'd */
};

struct span {
	char		 trace_id[33];
	char		 span_id[17];
	char		 parent_id[17];
	int		 kind;
	int64_t		 start_ns;
	struct tbuf	 name;		/* escaped */
	struct tbuf	 attrs;		/* OTLP KeyValue objects, comma-joined */
	struct tbuf	 message;	/* escaped status message */
	int		 error;
	char		 name_buf[128];
	char		 attrs_buf[1536];
};

/* A finished span, its OTLP JSON text, queued for the exporter. */
struct qspan {
	struct qspan	*next;
	size_t		 len;
	char		 text[];
};

struct tracer {
	struct engine	*e;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	struct qspan	*head, **tail;	/* oldest first */
	size_t		 queued;
	int		 quit;
	pthread_t	 tid;
	struct curl_slist *headers;
	char		*resource;	/* OTLP resource object, JSON text */
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
	static const char	 hex[] = "0123456789abcdef";
	uint64_t		 v = 0;
	size_t			 i;

	for (i = 0; i < bytes; i++) {
		if (i % 8 == 0)
			v = rand64();
		out[2 * i] = hex[(v >> 4) & 0xf];
		out[2 * i + 1] = hex[v & 0xf];
		v >>= 8;
	}
	out[2 * bytes] = '\0';
}

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ====== Text ====== */

static void
tb_add(struct tbuf *b, const char *s, size_t n)
{
	char	*np;
	size_t	 cap;

	if (b->oom || n == 0)
		return;
	if (b->len + n + 1 > b->cap) {
		cap = b->cap ? b->cap : 1024;
		while (cap < b->len + n + 1)
			cap *= 2;
		if ((np = b->heap ? realloc(b->p, cap) : malloc(cap)) == NULL) {
			b->oom = 1;
			return;
		}
		if (!b->heap && b->len > 0)
			memcpy(np, b->p, b->len);
		b->p = np;
		b->cap = cap;
		b->heap = 1;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void
tb_str(struct tbuf *b, const char *s)
{
	tb_add(b, s, strlen(s));
}

/*
 * s[0..n) as the inside of a JSON string: quotes, backslashes and control
 * characters escaped, a byte that does not start a well-formed UTF-8
 * sequence made '?', so that a collector never sees invalid JSON.
 */
static void
tb_esc(struct tbuf *b, const char *s, size_t n)
{
	const unsigned char	*p = (const unsigned char *)s, *end = p + n;
	const unsigned char	*run = p;
	char			 u[8];
	size_t			 k, i;

	while (p < end) {
		if (*p >= 0x20 && *p != '"' && *p != '\\' && *p < 0x80) {
			p++;
			continue;
		}
		tb_add(b, (const char *)run, (size_t)(p - run));
		if (*p < 0x80) {
			if (*p == '"' || *p == '\\') {
				u[0] = '\\';
				u[1] = (char)*p;
				tb_add(b, u, 2);
			} else {
				snprintf(u, sizeof(u), "\\u%04x", *p);
				tb_add(b, u, 6);
			}
			run = ++p;
			continue;
		}
		k = *p >= 0xf0 && *p < 0xf5 ? 4 : *p >= 0xe0 ? 3 :
		    *p >= 0xc2 && *p < 0xe0 ? 2 : 0;
		if (k == 3 && *p >= 0xf0)
			k = 0;
		for (i = 1; k > 0 && i < k; i++)
			if (p + i >= end || (p[i] & 0xc0) != 0x80)
				k = 0;
		if (k == 0) {
			tb_add(b, "?", 1);
			run = ++p;
		} else {
			tb_add(b, (const char *)p, k);
			run = p += k;
		}
	}
	tb_add(b, (const char *)run, (size_t)(p - run));
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
	if ((s = malloc(sizeof(*s))) == NULL)
		return NULL;
	memset(s, 0, offsetof(struct span, name_buf));
	s->name.p = s->name_buf;
	s->name.cap = sizeof(s->name_buf);
	s->attrs.p = s->attrs_buf;
	s->attrs.cap = sizeof(s->attrs_buf);
	if (name == NULL || *name == '\0')
		name = "span";
	tb_esc(&s->name, name, strlen(name));
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

/* Opens attribute k: {"key":"k","value":{ ... the caller closes "}}". */
static void
attr_open(struct span *s, const char *k)
{
	if (s->attrs.len > 0)
		tb_add(&s->attrs, ",", 1);
	tb_str(&s->attrs, "{\"key\":\"");
	tb_esc(&s->attrs, k, strlen(k));
	tb_str(&s->attrs, "\",\"value\":{");
}

void
span_attr_str(struct span *s, const char *k, const char *v)
{
	if (s == NULL || v == NULL)
		return;
	attr_open(s, k);
	tb_str(&s->attrs, "\"stringValue\":\"");
	tb_esc(&s->attrs, v, strlen(v));
	tb_str(&s->attrs, "\"}}");
}

void
span_attr_int(struct span *s, const char *k, int64_t v)
{
	char buf[48];

	if (s == NULL)
		return;
	attr_open(s, k);
	/* OTLP JSON carries 64-bit integers as strings */
	snprintf(buf, sizeof(buf), "\"intValue\":\"%" PRId64 "\"}}", v);
	tb_str(&s->attrs, buf);
}

void
span_attr_double(struct span *s, const char *k, double v)
{
	char buf[64];

	if (s == NULL)
		return;
	if (isnan(v) || isinf(v))
		v = 0;
	attr_open(s, k);
	snprintf(buf, sizeof(buf), "\"doubleValue\":%.17g}}", v);
	tb_str(&s->attrs, buf);
}

void
span_attr_strings(struct span *s, const char *k, const char *const *v,
    size_t n)
{
	size_t i;

	if (s == NULL)
		return;
	attr_open(s, k);
	tb_str(&s->attrs, "\"arrayValue\":{\"values\":[");
	for (i = 0; i < n; i++) {
		tb_str(&s->attrs, i > 0 ? ",{\"stringValue\":\"" :
		    "{\"stringValue\":\"");
		tb_esc(&s->attrs, v[i] ? v[i] : "", v[i] ? strlen(v[i]) : 0);
		tb_str(&s->attrs, "\"}");
	}
	tb_str(&s->attrs, "]}}}");
}

void
span_attr_content(struct span *s, const char *k, const char *text)
{
	size_t n;

	if (s == NULL || text == NULL || !include_content)
		return;
	/* cut on a character boundary */
	if ((n = strlen(text)) > CONTENT_MAX)
		for (n = CONTENT_MAX; n > 0 &&
		    ((unsigned char)text[n] & 0xc0) == 0x80; n--)
			;
	attr_open(s, k);
	tb_str(&s->attrs, "\"stringValue\":\"");
	tb_esc(&s->attrs, text, n);
	tb_str(&s->attrs, "\"}}");
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
	s->message.len = 0;
	if (message != NULL)
		tb_esc(&s->message, message, strlen(message));
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
	if (s->name.heap)
		free(s->name.p);
	if (s->attrs.heap)
		free(s->attrs.p);
	if (s->message.heap)
		free(s->message.p);
	free(s);
}

void
span_end(struct span *s)
{
	struct tracer	*t = tracer;
	struct qspan	*q = NULL;
	char		 head[256], tail[64];
	size_t		 hl, tl, n;
	int		 dropped = 0;

	if (s == NULL)
		return;
	if (current == s)
		current = NULL;
	hl = (size_t)snprintf(head, sizeof(head), "{\"traceId\":\"%s\","
	    "\"spanId\":\"%s\",%s%s%s\"kind\":%d,\"startTimeUnixNano\":\"%"
	    PRId64 "\",\"endTimeUnixNano\":\"%" PRId64 "\",\"name\":\"",
	    s->trace_id, s->span_id, s->parent_id[0] ? "\"parentSpanId\":\"" :
	    "", s->parent_id, s->parent_id[0] ? "\"," : "", s->kind,
	    s->start_ns, now_ns());
	tl = (size_t)snprintf(tail, sizeof(tail), "],\"status\":{\"code\":%d%s",
	    s->error ? 2 : 1, s->error ? ",\"message\":\"" : "}}");
	/* one allocation: the span's text is written straight into it */
	n = hl + s->name.len + 17 + s->attrs.len + tl + s->message.len + 4;
	if (t != NULL && !s->name.oom && !s->attrs.oom && !s->message.oom &&
	    hl < sizeof(head) && (q = malloc(sizeof(*q) + n)) != NULL) {
		q->next = NULL;
		q->len = 0;
#define PUT(p, k) (memcpy(q->text + q->len, (p), (k)), q->len += (k))
		PUT(head, hl);
		PUT(s->name.p, s->name.len);
		PUT("\",\"attributes\":[", 16);
		PUT(s->attrs.p, s->attrs.len);
		PUT(tail, tl);
		if (s->error) {
			PUT(s->message.p, s->message.len);
			PUT("\"}}", 3);
		}
#undef PUT
		q->text[q->len] = '\0';
	}
	span_free(s);
	if (q == NULL)
		return;
	pthread_mutex_lock(&t->mu);
	if (t->queued >= (size_t)t->e->conf->tracing_queue_max)
		dropped = 1;
	else {
		*t->tail = q;
		t->tail = &q->next;
		q = NULL;
		if (++t->queued >= (size_t)t->e->conf->tracing_batch_max)
			pthread_cond_signal(&t->cv);
	}
	pthread_mutex_unlock(&t->mu);
	free(q);
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

/* Sends the n spans of list (freed here); counts them exported or
 * failed. */
static void
export_batch(struct tracer *t, struct qspan *list, size_t n)
{
	struct outbound_req	 rq;
	struct outbound_resp	 rs;
	struct tbuf		 b = { NULL, 0, 0, 0, 0 };
	struct qspan		*q, *next;
	char			 err[ENGINE_ERRMAX] = "";
	int			 ok = 0;

	tb_str(&b, "{\"resourceSpans\":[{\"resource\":");
	tb_str(&b, t->resource);
	tb_str(&b, ",\"scopeSpans\":[{\"scope\":{\"name\":\"flowcgi\","
	    "\"version\":\"" FLOWCGI_VERSION "\"},\"spans\":[");
	for (q = list; q != NULL; q = next) {
		next = q->next;
		if (q != list)
			tb_add(&b, ",", 1);
		tb_add(&b, q->text, q->len);
		free(q);
	}
	tb_str(&b, "]}]}]}");
	if (!b.oom) {
		memset(&rq, 0, sizeof(rq));
		memset(&rs, 0, sizeof(rs));
		rq.method = "POST";
		rq.url = t->e->conf->tracing_endpoint;
		rq.headers = t->headers;
		rq.body = b.p;
		rq.body_len = b.len;
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
	} else
		snprintf(err, sizeof(err), "out of memory");
	free(b.p);
	metric_add(METRIC_TRACE_SPANS, METRIC_LABELS(ok ? "exported" :
	    "failed"), (int64_t)n);
	if (!ok && time(NULL) - t->last_warn >= 60) {
		t->last_warn = time(NULL);
		log_warn("tracing: %zu spans not sent to '%s' "
		    "(tracing.otlp_endpoint): %s", n,
		    t->e->conf->tracing_endpoint, err);
	}
}

/* Takes up to batch_max queued spans (called with t->mu held); *n gets
 * their number. */
static struct qspan *
queue_take(struct tracer *t, size_t *n)
{
	struct qspan	*list = t->head, *q;
	size_t		 max = (size_t)t->e->conf->tracing_batch_max, i;

	if (list == NULL) {
		*n = 0;
		return NULL;
	}
	for (q = list, i = 1; i < max && q->next != NULL; i++)
		q = q->next;
	t->head = q->next;
	q->next = NULL;
	if (t->head == NULL)
		t->tail = &t->head;
	t->queued -= i;
	*n = i;
	return list;
}

static void *
exporter_main(void *arg)
{
	struct tracer	*t = arg;
	struct timespec	 ts;
	struct qspan	*batch;
	sigset_t	 all;
	int64_t		 due;
	size_t		 n;
	int		 quit;

	/* Started before the server blocks its signals: a SIGTERM must
	 * reach the server's signalfd, never this thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&t->mu);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		due = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 +
		    t->e->conf->tracing_flush_ms;
		ts.tv_sec = (time_t)(due / 1000);
		ts.tv_nsec = (long)(due % 1000) * 1000000;
		while (!t->quit && t->queued <
		    (size_t)t->e->conf->tracing_batch_max &&
		    pthread_cond_timedwait(&t->cv, &t->mu, &ts) != ETIMEDOUT)
			;
		quit = t->quit;
		if ((batch = queue_take(t, &n)) != NULL) {
			pthread_mutex_unlock(&t->mu);
			export_batch(t, batch, n);
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
	json_t			*res;
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
	conf_hostname(host, sizeof(host));
	t->tail = &t->head;
	t->headers = headers_make(c->tracing_headers);
	res = json_pack("{s:[{s:s,s:{s:s}},{s:s,s:{s:s}},{s:s,s:{s:s}},"
	    "{s:s,s:{s:s}}]}", "attributes", "key", "service.name", "value",
	    "stringValue", c->tracing_service_name, "key", "service.version",
	    "value", "stringValue", FLOWCGI_VERSION, "key", "host.name",
	    "value", "stringValue", host, "key", "service.instance.id",
	    "value", "stringValue", metrics_instance());
	t->resource = res != NULL ? json_dumps(res, JSON_COMPACT) : NULL;
	json_decref(res);
	if (t->headers == NULL || t->resource == NULL ||
	    pthread_create(&t->tid, NULL, exporter_main, t) != 0) {
		free(t->resource);
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
	struct qspan	*q, *next;
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
	for (q = t->head; q != NULL; q = next) {
		next = q->next;
		free(q);
	}
	free(t->resource);
	curl_slist_free_all(t->headers);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
}
