/*
 * t_conf_metrics.c — conf/metrics.c: the text exposition format (escaping,
 * histogram buckets and +Inf, one HELP and TYPE per metric), counters that
 * never go back while threads count, label bounding (max_series, the
 * _overflow series, cut and cleaned values) and the series other
 * processes share through the data directory.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/conf.h"
#include "tests/unit/tap.h"

#define MAX_SERIES 10

static char *
render(void)
{
	char	*text = NULL;
	size_t	 len;

	if (metrics_render(&text, &len) != 0)
		return NULL;
	CHECK(strlen(text) == len);
	return text;
}

/* The value of the sample line that starts with prefix, or -1. */
static double
sample(const char *text, const char *prefix)
{
	const char	*p = text;
	size_t		 n = strlen(prefix);

	while (p != NULL && *p != '\0') {
		if (strncmp(p, prefix, n) == 0) {
			const char *sp = strchr(p, '\n');
			const char *v = p;

			/* the value follows the last blank of the line */
			while (v < (sp ? sp : p + strlen(p)) &&
			    strchr(v, ' ') != NULL && strchr(v, ' ') <
			    (sp ? sp : p + strlen(p)))
				v = strchr(v, ' ') + 1;
			return strtod(v, NULL);
		}
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return -1;
}

static int
count_lines(const char *text, const char *prefix)
{
	const char	*p = text;
	int		 n = 0;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, prefix, strlen(prefix)) == 0)
			n++;
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return n;
}

static void
test_escape(void)
{
	char out[64];

	metrics_escape("a\"b\\c\nd", 7, 0, out, sizeof(out));
	CHECK_STR(out, "a\\\"b\\\\c\\nd");
	/* HELP text keeps its quotes */
	metrics_escape("say \"hi\"\\\n", 10, 1, out, sizeof(out));
	CHECK_STR(out, "say \"hi\"\\\\\\n");
	/* cut to fit, never a half escape */
	metrics_escape("\"\"\"\"\"\"", 6, 0, out, 6);
	CHECK(strlen(out) < 6 && strlen(out) % 2 == 0);
}

static void
test_counter_labels(void)
{
	char	*t, want[256], longv[200];
	int	 i;

	for (i = 0; i < 3; i++)
		metric_add(METRIC_RUNS_STARTED, METRIC_LABELS("app1",
		    "workflow"), 1);
	metric_add(METRIC_RUNS_STARTED, METRIC_LABELS("x\"y\\z\nw",
	    "chat"), 2);
	memset(longv, 'a', sizeof(longv) - 1);
	longv[sizeof(longv) - 1] = '\0';
	longv[3] = (char)0xc3;	/* not ASCII: made '_' */
	metric_add(METRIC_RUNS_STARTED, METRIC_LABELS(longv, "chat"), 1);
	metric_add(METRIC_RUNS_ACTIVE, NULL, 2);
	metric_add(METRIC_RUNS_ACTIVE, NULL, -1);
	if ((t = render()) == NULL) {
		CHECK(0);
		return;
	}
	snprintf(want, sizeof(want), "flowcgi_runs_started_total{app=\"app1\","
	    "mode=\"workflow\",instance=\"%s\"} ", metrics_instance());
	CHECK(sample(t, want) == 3);
	/* a quote and a backslash escaped; a newline made '_' */
	snprintf(want, sizeof(want), "flowcgi_runs_started_total{app="
	    "\"x\\\"y\\\\z_w\",mode=\"chat\",instance=\"%s\"} ",
	    metrics_instance());
	CHECK(sample(t, want) == 2);
	/* cut to 64 bytes */
	snprintf(want, sizeof(want), "flowcgi_runs_started_total{app=\"aaa_"
	    "%.60s\",mode=\"chat\"", longv + 4);
	CHECK(sample(t, want) == 1);
	snprintf(want, sizeof(want), "flowcgi_runs_in_progress{instance="
	    "\"%s\"} ", metrics_instance());
	CHECK(sample(t, want) == 1);
	CHECK_INT(count_lines(t, "# TYPE flowcgi_runs_started_total counter"),
	    1);
	CHECK_INT(count_lines(t, "# HELP flowcgi_runs_started_total "), 1);
	CHECK_INT(count_lines(t, "# TYPE flowcgi_runs_in_progress gauge"), 1);
	CHECK_INT(count_lines(t, "# TYPE flowcgi_node_duration_seconds "
	    "histogram"), 1);
	/* process figures are there */
	CHECK(count_lines(t, "flowcgi_process_resident_memory_bytes{") == 1);
	CHECK(count_lines(t, "flowcgi_process_start_time_seconds{") == 1);
	free(t);
}

static void
test_histogram(void)
{
	const char	*pre = "flowcgi_node_duration_seconds";
	char		*t, want[256];
	double		 sum;

	metric_observe(METRIC_NODE_DURATION, METRIC_LABELS("llm",
	    "succeeded"), 0.0001);
	metric_observe(METRIC_NODE_DURATION, METRIC_LABELS("llm",
	    "succeeded"), 0.003);
	metric_observe(METRIC_NODE_DURATION, METRIC_LABELS("llm",
	    "succeeded"), 0.2);
	metric_observe(METRIC_NODE_DURATION, METRIC_LABELS("llm",
	    "succeeded"), 1000);
	/* exactly on a bound counts in that bucket (le: less or equal) */
	metric_observe(METRIC_NODE_DURATION, METRIC_LABELS("llm",
	    "succeeded"), 0.5);
	if ((t = render()) == NULL) {
		CHECK(0);
		return;
	}
#define B(le) (snprintf(want, sizeof(want), "%s_bucket{node_type=\"llm\","    \
	"status=\"succeeded\",instance=\"%s\",le=\"%s\"} ", pre,              \
	metrics_instance(), le), sample(t, want))
	CHECK(B("0.0005") == 1);
	CHECK(B("0.001") == 1);
	CHECK(B("0.005") == 2);
	CHECK(B("0.25") == 3);
	CHECK(B("0.5") == 4);
	CHECK(B("120") == 4);
	CHECK(B("+Inf") == 5);
#undef B
	snprintf(want, sizeof(want), "%s_count{node_type=\"llm\",status="
	    "\"succeeded\",instance=\"%s\"} ", pre, metrics_instance());
	CHECK(sample(t, want) == 5);
	snprintf(want, sizeof(want), "%s_sum{node_type=\"llm\",status="
	    "\"succeeded\",instance=\"%s\"} ", pre, metrics_instance());
	sum = sample(t, want);
	CHECK(sum > 1000.7030 && sum < 1000.7032);
	/* 16 bounds and +Inf */
	CHECK_INT(count_lines(t, "flowcgi_node_duration_seconds_bucket{node_"
	    "type=\"llm\",status=\"succeeded\""), 17);
	free(t);
}

/* ====== Counters never go back ====== */

static void *
counter_thread(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 20000; i++) {
		metric_add(METRIC_HTTP_REQUESTS, METRIC_LABELS("/v1/x",
		    "200"), 1);
		metric_observe(METRIC_HTTP_DURATION, METRIC_LABELS("/v1/x"),
		    0.001);
	}
	return NULL;
}

static void
test_monotonic(void)
{
	pthread_t	 th[4];
	char		*t, want[256], cnt[256];
	double		 v, last = 0, c, lastc = 0;
	int		 i, back = 0, rounds = 0;

	snprintf(want, sizeof(want), "flowcgi_http_requests_total{route="
	    "\"/v1/x\",status=\"200\",instance=\"%s\"} ", metrics_instance());
	snprintf(cnt, sizeof(cnt), "flowcgi_http_request_duration_seconds_"
	    "count{route=\"/v1/x\",instance=\"%s\"} ", metrics_instance());
	for (i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, counter_thread, NULL);
	for (i = 0; i < 50; i++) {
		if ((t = render()) == NULL)
			continue;
		v = sample(t, want);
		c = sample(t, cnt);
		if ((v >= 0 && v < last) || (c >= 0 && c < lastc))
			back++;
		if (v >= 0)
			last = v;
		if (c >= 0)
			lastc = c;
		rounds++;
		free(t);
		usleep(1000);
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	CHECK_INT(back, 0);
	CHECK(rounds > 0);
	t = render();
	CHECK(t != NULL && sample(t, want) == 80000);
	CHECK(t != NULL && sample(t, cnt) == 80000);
	free(t);
}

/* ====== Label bounding ====== */

static void
test_bounding(void)
{
	char	*t, app[32], want[256];
	int	 i, n;

	for (i = 0; i < 50; i++) {
		snprintf(app, sizeof(app), "bound-%d", i);
		metric_add(METRIC_RUNS_FINISHED, METRIC_LABELS(app, "workflow",
		    "succeeded"), 1);
	}
	if ((t = render()) == NULL) {
		CHECK(0);
		return;
	}
	n = count_lines(t, "flowcgi_runs_finished_total{");
	/* MAX_SERIES label sets, then one overflow series */
	CHECK_INT(n, MAX_SERIES + 1);
	snprintf(want, sizeof(want), "flowcgi_runs_finished_total{app=\""
	    "_overflow\",mode=\"_overflow\",status=\"_overflow\",instance="
	    "\"%s\"} ", metrics_instance());
	CHECK(sample(t, want) == 50 - MAX_SERIES);
	snprintf(want, sizeof(want), "flowcgi_metric_series_overflow_total{"
	    "family=\"flowcgi_runs_finished_total\",instance=\"%s\"} ",
	    metrics_instance());
	CHECK(sample(t, want) == 50 - MAX_SERIES);
	free(t);
}

/* ====== Shared between processes ====== */

static void
write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

static void
test_share(void)
{
	char		 dir[256], path[1024], *t;
	const char	*p, *next, *tmp = getenv("TMPDIR");
	int		 live, rc;

	snprintf(dir, sizeof(dir), "%s/t_metrics.XXXXXX", tmp && *tmp ? tmp :
	    "/tmp");
	if (mkdtemp(dir) == NULL) {
		CHECK(0);
		return;
	}
	rc = metrics_share_start(dir, 3600);
	CHECK_INT(rc, 0);
	/* a live peer: its lock held (another open file description) */
	snprintf(path, sizeof(path), "%s/metrics/99999.lock", dir);
	live = open(path, O_RDWR | O_CREAT, 0600);
	CHECK(live >= 0 && flock(live, LOCK_EX) == 0);
	snprintf(path, sizeof(path), "%s/metrics/99999.prom", dir);
	write_text(path, "# family 0\nflowcgi_runs_started_total{app=\"peer\","
	    "mode=\"chat\",instance=\"h:99999\"} 7\n# family 1\n"
	    "flowcgi_runs_finished_total{app=\"peer\",mode=\"chat\",status="
	    "\"succeeded\",instance=\"h:99999\"} 6\n");
	/* a dead one: nobody holds its lock */
	snprintf(path, sizeof(path), "%s/metrics/88888.lock", dir);
	write_text(path, "");
	snprintf(path, sizeof(path), "%s/metrics/88888.prom", dir);
	write_text(path, "# family 0\nflowcgi_runs_started_total{app=\"dead\","
	    "mode=\"chat\",instance=\"h:88888\"} 9\n");
	if ((t = render()) == NULL) {
		CHECK(0);
		goto out;
	}
	CHECK(sample(t, "flowcgi_runs_started_total{app=\"peer\"") == 7);
	CHECK(sample(t, "flowcgi_runs_finished_total{app=\"peer\"") == 6);
	CHECK(sample(t, "flowcgi_runs_started_total{app=\"dead\"") == -1);
	CHECK(access(path, F_OK) != 0);	/* the dead one's file is gone */
	/* the peer's sample sits in its family's group */
	p = strstr(t, "flowcgi_runs_started_total{app=\"peer\"");
	next = strstr(t, "# HELP flowcgi_runs_finished_total");
	CHECK(p != NULL && next != NULL && p < next &&
	    p > strstr(t, "# TYPE flowcgi_runs_started_total"));
	/* this process's own file is written before it answers */
	snprintf(path, sizeof(path), "%s/metrics/%ld.prom", dir,
	    (long)getpid());
	CHECK(access(path, F_OK) == 0);
	free(t);
out:
	metrics_share_stop();
	CHECK(access(path, F_OK) != 0);
	close(live);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	CHECK(system(path) == 0);
}

int
main(void)
{
	char *t;

	/* off: nothing counts, nothing renders */
	metric_add(METRIC_RUNS_STARTED, METRIC_LABELS("a", "b"), 1);
	CHECK(metrics_render(&t, &(size_t){ 0 }) != 0 && t == NULL);
	CHECK(!metrics_enabled());
	CHECK_INT(metrics_init(1, MAX_SERIES), 0);
	CHECK(metrics_enabled());
	test_escape();
	test_counter_labels();
	test_histogram();
	test_monotonic();
	test_bounding();
	test_share();
	return tap_done();
}
