/*
 * sse.c — running an engine run as a server-sent event stream: the
 * response starts when the run has its ids (errors before that are plain
 * JSON answers), each event is one "data: {json}" line and a blank line,
 * and a side thread writes "event: ping" every 10 s so proxies keep the
 * stream open during long nodes. A client that goes away does not stop
 * the run (unless run.stop_on_disconnect says so: see run_cancelled), but
 * from then on no event is made for it.
 *
 * Flushes are coalesced: every flush is a FastCGI record, a write to nginx
 * and a chunk for the client, which made a fast model's answer cost a
 * flush per token. An event that finds the stream idle (nothing flushed for
 * server.stream_flush_ms) is flushed at once, so a first token or a slow
 * model's tokens leave as soon as they are made; one that follows closely
 * is written to the record buffer and the side thread flushes it when that
 * window ends, with whatever came meanwhile. A full record buffer (libfcgi's
 * 8 KB) goes out by itself. The last events are flushed before the answer ends.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fcgi/internal.h"

#define PING_MS	10000

struct sse {
	struct req	*r;
	pthread_mutex_t	 mu;		/* the response is written under it */
	pthread_cond_t	 cv;		/* wakes the side thread */
	pthread_t	 side;		/* pings and late flushes */
	int		 have_side;
	int		 started;
	int		 done;
	int		 window;	/* server.stream_flush_ms */
	int		 pending;	/* events written, not flushed */
	int64_t		 flushed;	/* ms of the last flush */
};

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 1 once the client is gone: a write failed, or it hung up. */
static int
client_gone(const struct req *r)
{
	return r->io->gone(r->io->ctx);
}

/* Flushes what was written; a write error means the client left. */
static void
flush_locked(struct sse *s, int64_t now)
{
	s->pending = 0;
	s->flushed = now;
	if (!client_gone(s->r))
		resp_flush(s->r);
}

/* ====== Events as text ====== */

/*
 * An event's JSON text, as json_dumps(JSON_COMPACT) writes it. Jansson's
 * dump guards against loops with a hash table keyed by formatted
 * pointers, which costs more than the writing for the small events a fast
 * model makes by the thousand; events are trees the engine built, so they
 * are written here. What this does not write (a real, nesting deeper than
 * EV_DEPTH) or what does not fit the buffer is left to jansson.
 */
#define EV_DEPTH 16

struct evbuf {
	char	*p;
	size_t	 len, cap;
	int	 fail;		/* did not fit, or not written here */
};

static void
ev_add(struct evbuf *b, const char *s, size_t n)
{
	if (n > b->cap - b->len) {
		b->fail = 1;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

/* Jansson's escapes: the quote, the backslash and control characters. */
static void
ev_string(struct evbuf *b, const char *s, size_t n)
{
	static const char	 hex[] = "0123456789ABCDEF";
	char			 u[6] = "\\u00";
	const char		*e;
	size_t			 i, from = 0;
	unsigned char		 c;

	ev_add(b, "\"", 1);
	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		ev_add(b, s + from, i - from);
		from = i + 1;
		switch (c) {
		case '"':  e = "\\\""; break;
		case '\\': e = "\\\\"; break;
		case '\b': e = "\\b"; break;
		case '\f': e = "\\f"; break;
		case '\n': e = "\\n"; break;
		case '\r': e = "\\r"; break;
		case '\t': e = "\\t"; break;
		default:   e = NULL; break;
		}
		if (e != NULL)
			ev_add(b, e, 2);
		else {
			u[4] = hex[c >> 4];
			u[5] = hex[c & 15];
			ev_add(b, u, sizeof(u));
		}
	}
	ev_add(b, s + from, n - from);
	ev_add(b, "\"", 1);
}

static void
ev_value(struct evbuf *b, const json_t *j, int depth)
{
	const char	*k;
	json_t		*v;
	size_t		 i, klen;
	char		 num[32];
	int		 n;

	if (b->fail || depth > EV_DEPTH) {
		b->fail = 1;
		return;
	}
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		ev_add(b, "{", 1);
		i = 0;
		json_object_keylen_foreach((json_t *)j, k, klen, v) {
			if (i++ > 0)
				ev_add(b, ",", 1);
			ev_string(b, k, klen);
			ev_add(b, ":", 1);
			ev_value(b, v, depth + 1);
			if (b->fail)
				return;
		}
		ev_add(b, "}", 1);
		break;
	case JSON_ARRAY:
		ev_add(b, "[", 1);
		json_array_foreach(j, i, v) {
			if (i > 0)
				ev_add(b, ",", 1);
			ev_value(b, v, depth + 1);
			if (b->fail)
				return;
		}
		ev_add(b, "]", 1);
		break;
	case JSON_STRING:
		ev_string(b, json_string_value(j), json_string_length(j));
		break;
	case JSON_INTEGER:
		n = snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(j));
		ev_add(b, num, (size_t)n);
		break;
	case JSON_TRUE:
		ev_add(b, "true", 4);
		break;
	case JSON_FALSE:
		ev_add(b, "false", 5);
		break;
	case JSON_NULL:
		ev_add(b, "null", 4);
		break;
	default:	/* a real: jansson's own format */
		b->fail = 1;
		break;
	}
}

/* Writes ev as one "data: {json}" event, not flushed. */
static void
put_event(struct req *r, const json_t *ev)
{
	char		 buf[4096], *j;
	struct evbuf	 b = { buf, 0, sizeof(buf), 0 };

	ev_add(&b, "data: ", 6);
	ev_value(&b, ev, 0);
	ev_add(&b, "\n\n", 2);
	if (!b.fail) {
		resp_write(r, buf, b.len);
		return;
	}
	if ((j = json_dumps(ev, JSON_COMPACT)) == NULL)
		return;
	resp_write(r, "data: ", 6);
	resp_write(r, j, strlen(j));
	resp_write(r, "\n\n", 2);
	free(j);
}

/* ====== The stream ====== */

/*
 * The side thread: flushes events held back when their window ends, and
 * pings every PING_MS. It writes only under s->mu, like on_event.
 */
static void *
side_main(void *arg)
{
	struct sse	*s = arg;
	struct timespec	 ts;
	int64_t		 now, due, ping;

	pthread_mutex_lock(&s->mu);
	ping = now_ms() + PING_MS;
	while (!s->done) {
		due = s->pending && s->flushed + s->window < ping ?
		    s->flushed + s->window : ping;
		if ((now = now_ms()) < due) {
			ts.tv_sec = due / 1000;
			ts.tv_nsec = (long)(due % 1000) * 1000000;
			pthread_cond_timedwait(&s->cv, &s->mu, &ts);
			continue;
		}
		if (now >= ping) {
			if (!client_gone(s->r))
				resp_write(s->r, "event: ping\n\n", 13);
			ping = now + PING_MS;
		}
		flush_locked(s, now);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

static void
on_start(void *arg, const char *task_id, const char *run_id)
{
	struct sse *s = arg;

	(void)task_id;
	(void)run_id;
	pthread_mutex_lock(&s->mu);
	resp_begin_stream(s->r);
	s->started = 1;
	s->flushed = now_ms() - s->window;	/* the first event leaves */
	s->have_side = pthread_create(&s->side, NULL, side_main, s) == 0;
	pthread_mutex_unlock(&s->mu);
}

static void
on_event(void *arg, const json_t *ev)
{
	struct sse	*s = arg;
	int64_t		 now;

	pthread_mutex_lock(&s->mu);
	if (s->started && !client_gone(s->r)) {
		put_event(s->r, ev);
		/*
		 * Within the window of the last flush an event waits for the
		 * side thread's; the first one to wait wakes it to set its
		 * deadline. The later ones just join it.
		 */
		if (!s->pending) {
			now = now_ms();
			if (s->window == 0 || !s->have_side ||
			    now - s->flushed >= s->window)
				flush_locked(s, now);
			else {
				s->pending = 1;
				pthread_cond_signal(&s->cv);
			}
		}
	}
	pthread_mutex_unlock(&s->mu);
}

/*
 * Ends the stream of a run that returned rc (err: its message): the side
 * thread stops, an error after the stream began travels in it, and what
 * is still held back leaves.
 */
static void
sse_end(struct sse *s, int rc, const char *err)
{
	json_t *ev;

	pthread_mutex_lock(&s->mu);
	s->done = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (s->have_side)
		pthread_join(s->side, NULL);
	/* nothing else writes the stream now */
	if (!s->started || client_gone(s->r))
		return;
	if (rc != 0) {
		ev = json_pack("{s:s,s:i,s:s,s:s}", "event", "error", "status",
		    500, "code", "internal_server_error", "message",
		    err[0] ? err : engine_strerror(rc));
		if (ev != NULL)
			put_event(s->r, ev);
		json_decref(ev);
	}
	flush_locked(s, now_ms());
}

int
sse_run(struct req *r, struct run_opts *o, char *err, json_t **out)
{
	struct sse	 s;
	int		 rc;

	memset(&s, 0, sizeof(s));
	s.r = r;
	s.window = r->conf->stream_flush_ms;
	pthread_mutex_init(&s.mu, NULL);
	cond_init_monotonic(&s.cv);
	o->on_start = on_start;
	o->on_event = on_event;
	o->arg = &s;
	rc = engine_run(r->eng, o, err, out);
	sse_end(&s, rc, err);
	pthread_cond_destroy(&s.cv);
	pthread_mutex_destroy(&s.mu);
	if (rc != 0 && !s.started)
		resp_engine_error(r, rc, err, "app or conversation");
	return rc;
}
