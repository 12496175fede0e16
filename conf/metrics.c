/*
 * metrics.c — counters, gauges and histograms for GET /metrics, in the
 * Prometheus text exposition format (version 0.0.4).
 *
 * Every layer counts here (storage its commits, the engine its runs and
 * model calls, the front its requests), so the registry lives in conf/,
 * which every module may include. A family is one row of families[]; its
 * series (one per set of label values) sit in a fixed table of
 * metrics.max_series slots made at start-up. Counting is lock-free: a
 * series is found by the hash of its label values with relaxed atomic
 * loads, and its numbers are atomics. Only the first sight of a new set of
 * label values takes the table's mutex to claim a slot, whose key, once
 * published, never changes. A family whose table is full counts new sets
 * of labels in one series whose label values are all "_overflow", so a
 * caller that labels by something unbounded can never grow memory or the
 * scrape without limit.
 *
 * Several processes on one data directory: each labels its series with
 * instance="<host>:<pid>" and, when metrics.share_interval is set, writes
 * them to <data_dir>/metrics/<pid>.prom (a thread, every that many
 * seconds, and at each scrape before it answers). A scrape answers its own
 * series and those of the other live processes' files, family by family;
 * a process is live while it holds the flock of its <pid>.lock. A process
 * writes its file before it answers a scrape, so whichever process the web
 * server hands a scrape, no counter ever seems to go back.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conf/conf.h"
#include "conf/dbuf.h"

#define LABELS_MAX	3
#define LABEL_VALUE_MAX	64
#define KEY_MAX		(LABELS_MAX * (LABEL_VALUE_MAX + 1) + 1)
#define BUCKETS_MAX	16
#define OVERFLOW_VALUE	"_overflow"

static const double b_run[] = { .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5,
    10, 30, 60, 120, 300, 600 };
static const double b_node[] = { .0005, .001, .0025, .005, .01, .025, .05,
    .1, .25, .5, 1, 2.5, 5, 10, 30, 120 };
static const double b_llm[] = { .1, .25, .5, 1, 2.5, 5, 10, 20, 30, 60, 120,
    300 };
static const double b_sandbox[] = { .005, .01, .025, .05, .1, .25, .5, 1,
    2.5, 5, 10, 30, 60, 300 };
static const double b_http[] = { .001, .0025, .005, .01, .025, .05, .1, .25,
    .5, 1, 2.5, 5, 10, 30 };
static const double b_store[] = { .0001, .00025, .0005, .001, .0025, .005,
    .01, .025, .05, .1, .25, 1 };

#define NB(b) (sizeof(b) / sizeof((b)[0]))

struct family {
	const char	*name;
	const char	*help;
	enum metric_kind kind;
	const char	*labels[LABELS_MAX];	/* NULL-ended */
	const double	*bounds;		/* histogram upper bounds */
	size_t		 nbounds;
};

#define L(...) { __VA_ARGS__ }
static const struct family families[METRIC__COUNT] = {
	[METRIC_RUNS_STARTED] = { "flowcgi_runs_started_total",
	    "Runs started, by app and app mode.", METRIC_COUNTER,
	    L("app", "mode"), NULL, 0 },
	[METRIC_RUNS_FINISHED] = { "flowcgi_runs_finished_total",
	    "Runs ended, by app, app mode and final status.", METRIC_COUNTER,
	    L("app", "mode", "status"), NULL, 0 },
	[METRIC_RUN_DURATION] = { "flowcgi_run_duration_seconds",
	    "Wall-clock time of a run, start to stored record.",
	    METRIC_HISTOGRAM, L("app", "mode"), b_run, NB(b_run) },
	[METRIC_RUNS_ACTIVE] = { "flowcgi_runs_in_progress",
	    "Runs going on in this process now.", METRIC_GAUGE, L(NULL),
	    NULL, 0 },
	[METRIC_STREAMS_ACTIVE] = { "flowcgi_streams_in_progress",
	    "Streamed (SSE) answers open in this process now.", METRIC_GAUGE,
	    L(NULL), NULL, 0 },
	[METRIC_NODE_DURATION] = { "flowcgi_node_duration_seconds",
	    "Time of one node execution, by node type and status.",
	    METRIC_HISTOGRAM, L("node_type", "status"), b_node, NB(b_node) },
	[METRIC_REJECTED] = { "flowcgi_runs_rejected_total",
	    "Runs refused at once by a limit: 429 app.max_active_requests, "
	    "503 server.max_runs.", METRIC_COUNTER, L("limit", "status"),
	    NULL, 0 },
	[METRIC_LLM_CALLS] = { "flowcgi_llm_requests_total",
	    "Model requests (retries included), by provider, model and "
	    "outcome.", METRIC_COUNTER, L("provider", "model", "status"),
	    NULL, 0 },
	[METRIC_LLM_DURATION] = { "flowcgi_llm_request_duration_seconds",
	    "Time of one model request, retries included.", METRIC_HISTOGRAM,
	    L("provider", "model"), b_llm, NB(b_llm) },
	[METRIC_LLM_TOKENS] = { "flowcgi_llm_tokens_total",
	    "Tokens models reported, by provider, model and type (prompt or "
	    "completion).", METRIC_COUNTER, L("provider", "model", "type"),
	    NULL, 0 },
	[METRIC_SANDBOX_OPS] = { "flowcgi_sandbox_operations_total",
	    "Sandbox operations (create, exec, destroy), by provider and "
	    "outcome.", METRIC_COUNTER, L("provider", "op", "status"), NULL,
	    0 },
	[METRIC_SANDBOX_DURATION] = { "flowcgi_sandbox_operation_duration_"
	    "seconds", "Time of one sandbox operation, by provider.",
	    METRIC_HISTOGRAM, L("provider", "op"), b_sandbox, NB(b_sandbox) },
	[METRIC_HTTP_REQUESTS] = { "flowcgi_http_requests_total",
	    "Requests answered, by route and status.", METRIC_COUNTER,
	    L("route", "status"), NULL, 0 },
	[METRIC_HTTP_DURATION] = { "flowcgi_http_request_duration_seconds",
	    "Time to answer a request (a stream: until its last event), by "
	    "route.", METRIC_HISTOGRAM, L("route"), b_http, NB(b_http) },
	[METRIC_STORE_COMMIT_DURATION] = { "flowcgi_storage_commit_duration_"
	    "seconds", "Time of one write transaction's commit (a group "
	    "commit counts once), flush included.", METRIC_HISTOGRAM, L(NULL),
	    b_store, NB(b_store) },
	[METRIC_STORE_FSYNCS] = { "flowcgi_storage_fsyncs_total",
	    "Flushes to disk (storage.sync): of commits, and of the "
	    "meta pages committed without one.", METRIC_COUNTER, L(NULL),
	    NULL, 0 },
	[METRIC_CONNECTIONS] = { "flowcgi_connections_open",
	    "FastCGI connections open in this process now.", METRIC_GAUGE,
	    L(NULL), NULL, 0 },
	[METRIC_CONNECTIONS_DROPPED] = { "flowcgi_connections_dropped_total",
	    "FastCGI connections closed before a request: not_allowed "
	    "(server.allowed_clients, allowed_users, allowed_groups), "
	    "idle_for_room (idle the longest at server.max_connections), "
	    "full (every connection busy).", METRIC_COUNTER, L("reason"),
	    NULL, 0 },
	[METRIC_TRACE_SPANS] = { "flowcgi_trace_spans_total",
	    "Trace spans by outcome: exported, dropped (queue full), failed "
	    "(the collector refused or was not reached).", METRIC_COUNTER,
	    L("outcome"), NULL, 0 },
	[METRIC_PROCESS_RSS] = { "flowcgi_process_resident_memory_bytes",
	    "Resident memory of this process.", METRIC_GAUGE, L(NULL), NULL,
	    0 },
	[METRIC_PROCESS_THREADS] = { "flowcgi_process_threads",
	    "Threads of this process.", METRIC_GAUGE, L(NULL), NULL, 0 },
	[METRIC_PROCESS_START] = { "flowcgi_process_start_time_seconds",
	    "When this process started, seconds since the epoch.",
	    METRIC_GAUGE, L(NULL), NULL, 0 },
	[METRIC_SERIES_OVERFLOW] = { "flowcgi_metric_series_overflow_total",
	    "Counts that went to an \"_overflow\" series because a family "
	    "had metrics.max_series series already.", METRIC_COUNTER,
	    L("family"), NULL, 0 },
};
#undef L

struct series {
	_Atomic(char *)		 key;	/* label values, each ending in \x1f;
					 * NULL: a free slot */
	uint64_t		 hash;	/* set before key is published */
	atomic_int_fast64_t	 value;	/* counter, gauge */
	atomic_uint_fast64_t	*buckets; /* histogram: nbounds + 1 (+Inf) */
	atomic_uint_fast64_t	 sum;	/* histogram: bits of a double */
};

struct table {
	struct series	*slots;
	size_t		 cap;		/* slots: max_series + 1 */
	size_t		 used;		/* under mu */
	struct series	*overflow;	/* made when the table fills */
};

static struct table	 tables[METRIC__COUNT];
static pthread_mutex_t	 tables_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int	 metrics_on;
static char		 instance[128];

/* ====== Series ====== */

static uint64_t
fnv1a(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ULL;

	while (n-- > 0)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

/*
 * The key of a set of label values: each value, cut to LABEL_VALUE_MAX
 * bytes, with bytes that are not printable ASCII made '_', then \x1f.
 * Returns its length.
 */
static size_t
key_make(const struct family *f, const char *const *values, char *key)
{
	const char	*v;
	size_t		 i, j, n = 0;

	for (i = 0; i < LABELS_MAX && f->labels[i] != NULL; i++) {
		v = values != NULL && values[i] != NULL ? values[i] : "";
		for (j = 0; j < LABEL_VALUE_MAX && v[j] != '\0'; j++)
			key[n++] = (unsigned char)v[j] < 0x20 ||
			    (unsigned char)v[j] >= 0x7f ? '_' : v[j];
		key[n++] = '\x1f';
	}
	key[n] = '\0';
	return n;
}

static int
series_init(const struct family *f, struct series *s)
{
	if (f->kind != METRIC_HISTOGRAM)
		return 0;
	s->buckets = calloc(f->nbounds + 1, sizeof(*s->buckets));
	return s->buckets != NULL ? 0 : -1;
}

/* The overflow series of table t (made under tables_mu), or NULL. */
static struct series *
overflow_get(const struct family *f, struct table *t)
{
	struct series	*s;
	char		 key[KEY_MAX], *dup = NULL;
	const char	*v[LABELS_MAX] = { OVERFLOW_VALUE, OVERFLOW_VALUE,
			    OVERFLOW_VALUE };

	if (t->overflow != NULL)
		return t->overflow;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	key_make(f, v, key);
	if (series_init(f, s) != 0 || (dup = strdup(key)) == NULL) {
		free(s->buckets);
		free(s);
		return NULL;
	}
	atomic_init(&s->key, dup);
	t->overflow = s;
	return s;
}

static struct series *
series_find(enum metric_id id, const char *const *values)
{
	const struct family	*f = &families[id];
	struct table		*t = &tables[id];
	struct series		*s = NULL;
	char			 key[KEY_MAX], *k, *dup;
	uint64_t		 h;
	size_t			 n, i, at;
	int			 overflowed = 0;

	if (t->slots == NULL)
		return NULL;
	n = key_make(f, values, key);
	h = fnv1a(key, n);
	/* Lock-free: a published key never changes. */
	for (i = 0, at = h % t->cap; i < t->cap; i++, at = (at + 1) % t->cap) {
		k = atomic_load_explicit(&t->slots[at].key,
		    memory_order_acquire);
		if (k == NULL)
			break;
		if (t->slots[at].hash == h && strcmp(k, key) == 0)
			return &t->slots[at];
	}
	pthread_mutex_lock(&tables_mu);
	for (i = 0, at = h % t->cap; i < t->cap; i++, at = (at + 1) % t->cap) {
		k = atomic_load_explicit(&t->slots[at].key,
		    memory_order_acquire);
		if (k != NULL && t->slots[at].hash == h &&
		    strcmp(k, key) == 0) {
			s = &t->slots[at];
			goto out;
		}
		if (k == NULL)
			break;
	}
	/* A slot stays free so that a probe always ends. */
	if (i == t->cap || t->used + 1 >= t->cap ||
	    series_init(f, &t->slots[at]) != 0 ||
	    (dup = strdup(key)) == NULL) {
		s = overflow_get(f, t);
		overflowed = id != METRIC_SERIES_OVERFLOW;
		goto out;
	}
	s = &t->slots[at];
	s->hash = h;
	atomic_store_explicit(&s->key, dup, memory_order_release);
	t->used++;
out:
	pthread_mutex_unlock(&tables_mu);
	if (overflowed)
		metric_add(METRIC_SERIES_OVERFLOW, METRIC_LABELS(f->name), 1);
	return s;
}

int
metrics_enabled(void)
{
	return atomic_load_explicit(&metrics_on, memory_order_relaxed);
}

void
metric_add(enum metric_id id, const char *const *labels, int64_t n)
{
	struct series *s;

	if (!metrics_enabled() || (s = series_find(id, labels)) == NULL)
		return;
	atomic_fetch_add_explicit(&s->value, n, memory_order_relaxed);
}

void
metric_set(enum metric_id id, const char *const *labels, int64_t v)
{
	struct series *s;

	if (!metrics_enabled() || (s = series_find(id, labels)) == NULL)
		return;
	atomic_store_explicit(&s->value, v, memory_order_relaxed);
}

void
metric_observe(enum metric_id id, const char *const *labels, double v)
{
	const struct family	*f = &families[id];
	struct series		*s;
	uint64_t		 old, nw;
	double			 d;
	size_t			 b;

	if (!metrics_enabled() || f->kind != METRIC_HISTOGRAM ||
	    (s = series_find(id, labels)) == NULL)
		return;
	if (isnan(v))
		v = 0;
	for (b = 0; b < f->nbounds && v > f->bounds[b]; b++)
		;
	atomic_fetch_add_explicit(&s->buckets[b], 1, memory_order_relaxed);
	old = atomic_load_explicit(&s->sum, memory_order_relaxed);
	do {
		memcpy(&d, &old, sizeof(d));
		d += v;
		memcpy(&nw, &d, sizeof(nw));
	} while (!atomic_compare_exchange_weak_explicit(&s->sum, &old, nw,
	    memory_order_relaxed, memory_order_relaxed));
}

double
metric_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ====== Set-up ====== */

const char *
conf_hostname(char *buf, size_t n)
{
	if (gethostname(buf, n) != 0)
		snprintf(buf, n, "localhost");
	buf[n - 1] = '\0';
	return buf;
}

static pthread_once_t	instance_once = PTHREAD_ONCE_INIT;

static void
instance_make(void)
{
	char host[64];

	snprintf(instance, sizeof(instance), "%s:%ld",
	    conf_hostname(host, sizeof(host)), (long)getpid());
}

const char *
metrics_instance(void)
{
	pthread_once(&instance_once, instance_make);
	return instance;
}

int
metrics_init(int enabled, int max_series)
{
	size_t	i;

	if (!enabled || atomic_load(&metrics_on))
		return 0;
	(void)metrics_instance();
	for (i = 0; i < METRIC__COUNT; i++) {
		tables[i].cap = (size_t)max_series + 1;
		/* one series, whatever the cap */
		if (families[i].labels[0] == NULL)
			tables[i].cap = 2;
		tables[i].slots = calloc(tables[i].cap,
		    sizeof(*tables[i].slots));
		if (tables[i].slots == NULL)
			return -1;
	}
	atomic_store(&metrics_on, 1);
	metric_set(METRIC_PROCESS_START, NULL, (int64_t)time(NULL));
	return 0;
}

/* ====== Exposition ====== */

size_t
metrics_escape(const char *s, size_t n, int help, char *out, size_t outsz)
{
	size_t i, o = 0;

	for (i = 0; i < n && o + 3 < outsz; i++) {
		if (s[i] == '\\' || (!help && s[i] == '"')) {
			out[o++] = '\\';
			out[o++] = s[i];
		} else if (s[i] == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
		} else
			out[o++] = s[i];
	}
	out[o] = '\0';
	return o;
}

/* A number as the format writes it: +Inf, -Inf, NaN or %.17g. */
static void
mb_number(struct dbuf *b, double v)
{
	if (isinf(v))
		dbuf_addf(b, "%s", v > 0 ? "+Inf" : "-Inf");
	else if (isnan(v))
		dbuf_addf(b, "NaN");
	else if (v == (double)(int64_t)v && fabs(v) < 1e15)
		dbuf_addf(b, "%" PRId64, (int64_t)v);
	else
		dbuf_addf(b, "%.17g", v);
}

/*
 * "{a="x",b="y",instance="..."}" for key (values ending in \x1f), with le
 * last when le is not NULL.
 */
static void
mb_labels(struct dbuf *b, const struct family *f, const char *key,
    const char *le)
{
	char		 esc[LABEL_VALUE_MAX * 2 + 4];
	const char	*end;
	size_t		 i, n;

	dbuf_add(b, "{", 1);
	for (i = 0; i < LABELS_MAX && f->labels[i] != NULL; i++) {
		end = strchr(key, '\x1f');
		n = end ? (size_t)(end - key) : strlen(key);
		metrics_escape(key, n, 0, esc, sizeof(esc));
		dbuf_addf(b, "%s=\"%s\",", f->labels[i], esc);
		key = end ? end + 1 : key + n;
	}
	dbuf_addf(b, "instance=\"%s\"", instance);
	if (le != NULL)
		dbuf_addf(b, ",le=\"%s\"", le);
	dbuf_add(b, "}", 1);
}

static void
render_series(struct dbuf *b, const struct family *f, struct series *s,
    const char *key)
{
	uint64_t	cum = 0, sumbits;
	double		sum;
	char		le[32];
	size_t		i;

	if (f->kind != METRIC_HISTOGRAM) {
		dbuf_add(b, f->name, strlen(f->name));
		mb_labels(b, f, key, NULL);
		dbuf_addf(b, " %" PRIdFAST64 "\n", atomic_load_explicit(
		    &s->value, memory_order_relaxed));
		return;
	}
	/* Read the sum first: a count never trails the sum it is given
	 * with by more than the observations in between. */
	sumbits = atomic_load_explicit(&s->sum, memory_order_relaxed);
	memcpy(&sum, &sumbits, sizeof(sum));
	for (i = 0; i <= f->nbounds; i++) {
		cum += atomic_load_explicit(&s->buckets[i],
		    memory_order_relaxed);
		if (i < f->nbounds)
			snprintf(le, sizeof(le), "%.15g", f->bounds[i]);
		else
			snprintf(le, sizeof(le), "+Inf");
		dbuf_addf(b, "%s_bucket", f->name);
		mb_labels(b, f, key, le);
		dbuf_addf(b, " %" PRIu64 "\n", cum);
	}
	dbuf_addf(b, "%s_sum", f->name);
	mb_labels(b, f, key, NULL);
	dbuf_add(b, " ", 1);
	mb_number(b, sum);
	dbuf_add(b, "\n", 1);
	dbuf_addf(b, "%s_count", f->name);
	mb_labels(b, f, key, NULL);
	dbuf_addf(b, " %" PRIu64 "\n", cum);
}

/* The samples of family i (no HELP or TYPE lines). */
static void
render_family(struct dbuf *b, size_t i)
{
	const struct family	*f = &families[i];
	struct table		*t = &tables[i];
	char			*k;
	size_t			 j;

	for (j = 0; j < t->cap; j++)
		if ((k = atomic_load_explicit(&t->slots[j].key,
		    memory_order_acquire)) != NULL)
			render_series(b, f, &t->slots[j], k);
	pthread_mutex_lock(&tables_mu);
	if (t->overflow != NULL)
		render_series(b, f, t->overflow, t->overflow->key);
	pthread_mutex_unlock(&tables_mu);
}

/* Resident memory and threads, from /proc/self/status. */
static void
sample_process(void)
{
	char	line[256];
	FILE	*fp;
	long long v;

	if ((fp = fopen("/proc/self/status", "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (sscanf(line, "VmRSS: %lld kB", &v) == 1)
			metric_set(METRIC_PROCESS_RSS, NULL, v * 1024);
		else if (sscanf(line, "Threads: %lld", &v) == 1)
			metric_set(METRIC_PROCESS_THREADS, NULL, v);
	}
	fclose(fp);
}

/* ====== Sharing between processes ====== */

static char	 share_dir[1100];
static int	 share_lock_fd = -1;
static pthread_t share_thread;
static int	 share_thread_on;
static pthread_mutex_t share_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t share_cv = PTHREAD_COND_INITIALIZER;
static int	 share_quit;
static int	 share_interval;

/*
 * This process's samples: one "# family <index>" line before those of
 * each family, the form of a <pid>.prom file.
 */
static int
render_own(struct dbuf *b)
{
	size_t i;

	sample_process();
	for (i = 0; i < METRIC__COUNT; i++) {
		dbuf_addf(b, "# family %zu\n", i);
		render_family(b, i);
	}
	return b->err != DBUF_OK ? -1 : 0;
}

/* Writes this process's samples to its file (tmp + rename). */
static void
share_write(const char *text, size_t len)
{
	char	path[1200], tmp[1220];
	int	fd, ok;

	snprintf(path, sizeof(path), "%s/%ld.prom", share_dir,
	    (long)getpid());
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) <
	    0)
		return;
	ok = write(fd, text, len) == (ssize_t)len;
	close(fd);
	if (!ok || rename(tmp, path) != 0)
		unlink(tmp);
}

static void
share_snapshot(void)
{
	struct dbuf b = { 0 };

	if (render_own(&b) == 0)
		share_write(b.p, b.len);
	dbuf_free(&b);
}

static void *
share_main(void *arg)
{
	struct timespec	ts;
	sigset_t	all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);	/* signals are the server's */
	pthread_mutex_lock(&share_mu);
	while (!share_quit) {
		pthread_mutex_unlock(&share_mu);
		share_snapshot();
		pthread_mutex_lock(&share_mu);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += share_interval;
		while (!share_quit && pthread_cond_timedwait(&share_cv,
		    &share_mu, &ts) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&share_mu);
	return NULL;
}

int
metrics_share_start(const char *data_dir, int interval)
{
	char path[1200];

	if (!metrics_enabled() || interval <= 0)
		return 0;
	snprintf(share_dir, sizeof(share_dir), "%s/metrics", data_dir);
	if (mkdir(share_dir, 0700) != 0 && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), "%s/%ld.lock", share_dir,
	    (long)getpid());
	share_lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (share_lock_fd < 0 || flock(share_lock_fd, LOCK_EX) != 0)
		return -1;
	share_interval = interval;
	share_quit = 0;
	if (pthread_create(&share_thread, NULL, share_main, NULL) != 0)
		return -1;
	share_thread_on = 1;
	return 0;
}

void
metrics_share_stop(void)
{
	char path[1200];

	if (!share_thread_on)
		return;
	pthread_mutex_lock(&share_mu);
	share_quit = 1;
	pthread_cond_signal(&share_cv);
	pthread_mutex_unlock(&share_mu);
	pthread_join(share_thread, NULL);
	share_thread_on = 0;
	snprintf(path, sizeof(path), "%s/%ld.prom", share_dir,
	    (long)getpid());
	unlink(path);
	snprintf(path, sizeof(path), "%s/%ld.lock", share_dir,
	    (long)getpid());
	unlink(path);
	close(share_lock_fd);
	share_lock_fd = -1;
}

/* The files of the other live processes, read whole; dead ones removed. */
#define SHARE_PEERS_MAX	64
#define SHARE_FILE_MAX	(16 << 20)

static size_t
peers_read(char **texts)
{
	DIR		*d;
	struct dirent	*de;
	struct stat	 st;
	char		 path[1400], *end, *p;
	long		 pid;
	size_t		 n = 0;
	int		 fd, lfd;
	ssize_t		 got;

	if ((d = opendir(share_dir)) == NULL)
		return 0;
	while (n < SHARE_PEERS_MAX && (de = readdir(d)) != NULL) {
		pid = strtol(de->d_name, &end, 10);
		if (end == de->d_name || strcmp(end, ".lock") != 0 ||
		    pid == (long)getpid())
			continue;
		snprintf(path, sizeof(path), "%s/%s", share_dir, de->d_name);
		if ((lfd = open(path, O_RDWR | O_CLOEXEC)) < 0)
			continue;
		if (flock(lfd, LOCK_EX | LOCK_NB) == 0) {
			/* its process is gone: so are its series */
			unlink(path);
			snprintf(path, sizeof(path), "%s/%ld.prom", share_dir,
			    pid);
			unlink(path);
			close(lfd);
			continue;
		}
		close(lfd);
		snprintf(path, sizeof(path), "%s/%ld.prom", share_dir, pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		if (fstat(fd, &st) == 0 && st.st_size > 0 &&
		    st.st_size < SHARE_FILE_MAX &&
		    (p = malloc((size_t)st.st_size + 1)) != NULL) {
			got = read(fd, p, (size_t)st.st_size);
			if (got == (ssize_t)st.st_size) {
				p[got] = '\0';
				texts[n++] = p;
			} else
				free(p);
		}
		close(fd);
	}
	closedir(d);
	return n;
}

/* The samples of family i in text t (a <pid>.prom file). */
static void
peer_family(struct dbuf *b, const char *t, size_t i)
{
	char		 mark[40];
	const char	*p, *end;
	size_t		 n;

	/* marks start lines, and no label value holds a newline */
	n = (size_t)snprintf(mark, sizeof(mark), "\n# family %zu\n", i);
	if (strncmp(t, mark + 1, n - 1) == 0)
		p = t + n - 1;
	else if ((p = strstr(t, mark)) != NULL)
		p += n;
	else
		return;
	end = strstr(p - 1, "\n# family ");
	dbuf_add(b, p, end ? (size_t)(end + 1 - p) : strlen(p));
}

int
metrics_render(char **out, size_t *len)
{
	struct dbuf	 own = { 0 }, b = { 0 };
	char		*peers[SHARE_PEERS_MAX], help[512];
	const char	*types[] = { "counter", "gauge", "histogram" };
	size_t		 npeers = 0, i, j;

	*out = NULL;
	*len = 0;
	if (!metrics_enabled())
		return -1;
	if (render_own(&own) != 0) {
		dbuf_free(&own);
		return -1;
	}
	if (share_thread_on) {
		share_write(own.p, own.len);
		npeers = peers_read(peers);
	}
	for (i = 0; i < METRIC__COUNT; i++) {
		metrics_escape(families[i].help, strlen(families[i].help), 1,
		    help, sizeof(help));
		dbuf_addf(&b, "# HELP %s ", families[i].name);
		dbuf_add(&b, help, strlen(help));
		dbuf_addf(&b, "\n# TYPE %s %s\n", families[i].name,
		    types[families[i].kind]);
		peer_family(&b, own.p, i);
		for (j = 0; j < npeers; j++)
			peer_family(&b, peers[j], i);
	}
	for (j = 0; j < npeers; j++)
		free(peers[j]);
	dbuf_free(&own);
	if (b.err != DBUF_OK) {
		dbuf_free(&b);
		return -1;
	}
	return (*out = dbuf_take(&b, len)) != NULL ? 0 : -1;
}
