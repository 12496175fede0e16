/*
 * t_fcgi_sse.c — the event stream: flushes coalesced by
 * server.stream_flush_ms (an event after a pause leaves at once, the ones
 * that follow share the side thread's flush, the last ones leave at the
 * end, 0 flushes each event), and sse_run leaving no pointer to its
 * frame in the run options. The events' text is t_storage_json's.
 */
#include <time.h>

#include "fcgi/sse.c"
#include "tap.h"

/* ====== Flushes ====== */

/* A response that records what is written and what each flush sent. */
struct fake {
	pthread_mutex_t	 mu;
	char		 out[65536];	/* everything written, a string */
	size_t		 len;
	size_t		 at[64];	/* len at each flush */
	int		 flushes;
	int		 gone;
};

static int
fake_write(void *ctx, const char *buf, size_t n)
{
	struct fake *f = ctx;

	pthread_mutex_lock(&f->mu);
	if (f->len + n < sizeof(f->out)) {
		memcpy(f->out + f->len, buf, n);
		f->len += n;
		f->out[f->len] = '\0';
	}
	pthread_mutex_unlock(&f->mu);
	return 0;
}

static int
fake_flush(void *ctx)
{
	struct fake *f = ctx;

	pthread_mutex_lock(&f->mu);
	if (f->flushes < 64)
		f->at[f->flushes] = f->len;
	f->flushes++;
	pthread_mutex_unlock(&f->mu);
	return 0;
}

static int
fake_gone(void *ctx)
{
	return ((struct fake *)ctx)->gone;
}

static int
fake_flushes(struct fake *f)
{
	int n;

	pthread_mutex_lock(&f->mu);
	n = f->flushes;
	pthread_mutex_unlock(&f->mu);
	return n;
}

/* Counts "data: " events in f->out[from..to). */
static int
events_in(const struct fake *f, size_t from, size_t to)
{
	const char	*p = f->out + from, *end = f->out + to;
	int		 n = 0;

	while ((p = memmem(p, (size_t)(end - p), "data: ", 6)) != NULL) {
		n++;
		p += 6;
	}
	return n;
}

struct bench {
	struct fake	 f;
	struct req_io	 io;
	struct conf	 conf;
	struct req	 r;
	struct sse	 s;
	size_t		 head;		/* bytes of the response head */
};

/* A started stream with the given window; the head is flush 1. */
static void
stream_start(struct bench *b, int window)
{
	memset(b, 0, sizeof(*b));
	pthread_mutex_init(&b->f.mu, NULL);
	b->io.write = fake_write;
	b->io.flush = fake_flush;
	b->io.gone = fake_gone;
	b->io.ctx = &b->f;
	b->conf.stream_flush_ms = window;
	b->r.io = &b->io;
	b->r.conf = &b->conf;
	b->s.r = &b->r;
	b->s.window = window;
	pthread_mutex_init(&b->s.mu, NULL);
	cond_init_monotonic(&b->s.cv);
	on_start(&b->s, "task", "run");
	b->head = b->f.len;
}

static void
stream_end(struct bench *b, int rc)
{
	sse_end(&b->s, rc, "");
	pthread_cond_destroy(&b->s.cv);
	pthread_mutex_destroy(&b->s.mu);
	pthread_mutex_destroy(&b->f.mu);
}

static void
token(struct bench *b, int i)
{
	json_t *ev = json_pack("{s:s,s:s%}", "event", "message", "answer",
	    "t", (size_t)1);

	json_object_set_new(ev, "i", json_integer(i));
	on_event(&b->s, ev);
	json_decref(ev);
}

static void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void
test_flushes(void)
{
	struct bench	 b;
	int		 i, n;

	/* window 0: each event is its own flush, as before coalescing */
	stream_start(&b, 0);
	CHECK_INT(b.f.flushes, 1);
	for (i = 0; i < 5; i++)
		token(&b, i);
	CHECK_INT(b.f.flushes, 6);
	CHECK_INT(events_in(&b.f, b.f.at[4], b.f.at[5]), 1);
	stream_end(&b, 0);
	CHECK_INT(b.f.flushes, 7);

	/* A long window: the first event leaves at once, the burst after it
	 * is held, and the end sends all of it, in order. */
	stream_start(&b, 60000);
	for (i = 0; i < 100; i++)
		token(&b, i);
	CHECK_INT(b.f.flushes, 2);
	CHECK_INT(events_in(&b.f, b.head, b.f.at[1]), 1);
	stream_end(&b, 0);
	CHECK_INT(b.f.flushes, 3);
	CHECK_INT(events_in(&b.f, b.head, b.f.len), 100);
	CHECK(strstr(b.f.out, "\"i\":0}") < strstr(b.f.out, "\"i\":99}"));

	/* The end of a failed run: the error event, then the last flush. */
	stream_start(&b, 60000);
	token(&b, 0);
	token(&b, 1);
	stream_end(&b, ENGINE_ENOMEM);
	CHECK_INT(b.f.flushes, 3);
	CHECK_INT(events_in(&b.f, b.f.at[1], b.f.at[2]), 2);
	CHECK(memmem(b.f.out + b.f.at[1], b.f.at[2] - b.f.at[1],
	    "\"event\":\"error\"", 15) != NULL);

	/* A short window: the side thread flushes what was held when the
	 * window ends, without another event; after a pause as long as the
	 * window the next event leaves at once again. The last flush is
	 * dated a little ahead, so the next event is held however the test
	 * is scheduled. */
	stream_start(&b, 20);
	token(&b, 0);
	pthread_mutex_lock(&b.s.mu);
	b.s.flushed = now_ms() + 200;
	pthread_mutex_unlock(&b.s.mu);
	token(&b, 1);
	CHECK_INT(fake_flushes(&b.f), 2);
	for (i = 0; i < 500 && fake_flushes(&b.f) < 3; i++)
		sleep_ms(10);
	CHECK_INT(fake_flushes(&b.f), 3);
	CHECK_INT(events_in(&b.f, b.f.at[1], b.f.at[2]), 1);
	sleep_ms(40);
	n = fake_flushes(&b.f);
	token(&b, 2);
	CHECK_INT(fake_flushes(&b.f), n + 1);
	stream_end(&b, 0);

	/* A client gone: nothing more is written or flushed. */
	stream_start(&b, 0);
	b.f.gone = 1;
	token(&b, 0);
	stream_end(&b, ENGINE_ENOMEM);
	CHECK_INT(b.f.flushes, 1);
	CHECK_INT(b.f.len, b.head);
}

/* ====== The run options ====== */

/*
 * sse_run points the run's callbacks at its own stack frame: once it
 * returns they must point nowhere (the caller may keep o). A run that
 * cannot start answers as JSON, with no stream begun.
 */
static void
test_options(void)
{
	struct conf	 c;
	struct engine	*e = NULL;
	struct bench	 b;
	struct run_opts	 o;
	char		 err[ENGINE_ERRMAX] = "", dir[256], cmd[300];
	json_t		*out = NULL;

	conf_defaults(&c);
	snprintf(dir, sizeof(dir), "%s/t_fcgi_sse.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!CHECK(mkdtemp(dir) != NULL))
		return;
	snprintf(c.data_dir, sizeof(c.data_dir), "%s", dir);
	c.sync = 0;
	c.map_size = 4 << 20;
	if (!CHECK(engine_open(&c, err, &e) == 0))
		return;
	memset(&b, 0, sizeof(b));
	pthread_mutex_init(&b.f.mu, NULL);
	b.io.write = fake_write;
	b.io.flush = fake_flush;
	b.io.gone = fake_gone;
	b.io.ctx = &b.f;
	b.r.io = &b.io;
	b.r.conf = &c;
	b.r.eng = e;
	b.r.method = "POST";
	b.r.prefix = "";
	b.r.path = "/v1/workflows/run";
	memset(&o, 0, sizeof(o));
	o.app_id = "01a235ce-0000-7000-8000-000000000000";
	CHECK_INT(sse_run(&b.r, &o, err, &out), ENGINE_ENOTFOUND);
	CHECK(o.arg == NULL);
	CHECK(o.on_event == NULL);
	CHECK(o.on_start == NULL);
	CHECK(strncmp(b.f.out, "Status: 404", 11) == 0);
	CHECK(strstr(b.f.out, "text/event-stream") == NULL);
	json_decref(out);
	pthread_mutex_destroy(&b.f.mu);
	engine_close(e);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
}

int
main(void)
{
	test_flushes();
	test_options();
	return tap_done();
}
