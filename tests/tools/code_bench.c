/*
 * code_bench.c — what a code node costs: a start -> code -> end workflow
 * run in process through engine_run, RUNS times per language, with the
 * warm interpreter pool off (code.pool_size 0, every node starts a
 * sandbox and an interpreter) and on, in the same command:
 *
 *	code_bench DATA_DIR RUNS
 *
 * For each it prints p50 and p99 of the whole run and of the code node
 * alone (node_started to node_finished, timed in the event callback), and
 * the ratio on / off. With the pool on, each run waits (outside the timed
 * part) until the pool's runners of its language are warm again, as a
 * server whose code nodes come less often than one refill sees it; "warm"
 * counts the runs that found a ready runner. A last line runs the same
 * nodes back to back (no waiting): a burst, where runs take runners still
 * starting or start cold.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "engine/sandbox/sandbox.h"
#include "tests/tools/bench_stats.h"

struct timing {
	double	t_start;	/* node_started of the code node, us */
	double	t_end;		/* node_finished */
	int	failed;
};

static void
on_event(void *arg, const json_t *ev)
{
	struct timing	*t = arg;
	json_t		*d = json_object_get(ev, "data");
	const char	*name, *type, *status;

	name = json_string_value(json_object_get(ev, "event"));
	type = json_string_value(json_object_get(d, "node_type"));
	status = json_string_value(json_object_get(d, "status"));
	if (name == NULL || type == NULL || strcmp(type, "code") != 0)
		return;
	if (strcmp(name, "node_started") == 0)
		t->t_start = now_us();
	else if (strcmp(name, "node_finished") == 0) {
		t->t_end = now_us();
		t->failed = status == NULL || strcmp(status, "succeeded") != 0;
		if (t->failed)
			fprintf(stderr, "code node failed: %s\n",
			    json_string_value(json_object_get(d, "error")));
	}
}

static const char *
app_yaml(const char *lang)
{
	static char y[2048];

	snprintf(y, sizeof(y),
	    "version: 0.6.0\nkind: app\napp: {name: code, mode: workflow}\n"
	    "workflow:\n  features: {}\n  graph:\n    nodes:\n"
	    "    - id: s\n      data: {type: start, title: S, variables:"
	    " [{variable: a, type: number, label: a}]}\n"
	    "    - id: c\n      data:\n        type: code\n        title: C\n"
	    "        code_language: %s\n        code: \"%s\"\n"
	    "        variables: [{variable: a, value_selector: [s, a]}]\n"
	    "        outputs: {r: {type: number}}\n"
	    "    - id: e\n      data: {type: end, title: E, outputs: "
	    "[{variable: r, value_selector: [c, r]}]}\n    edges:\n"
	    "    - {id: x, source: s, target: c}\n"
	    "    - {id: y, source: c, target: e}\n", lang,
	    strcmp(lang, "python3") == 0 ?
	    "def main(a):\\n    return {\\\"r\\\": a + 1}\\n" :
	    "function main({a}) {\\n  return {r: a + 1};\\n}\\n");
	return y;
}

static int
import_app(struct engine *e, const char *lang, char *id)
{
	struct import_opts	 o;
	const char		*y = app_yaml(lang);
	char			 err[ENGINE_ERRMAX];
	json_t			*imp = NULL;

	memset(&o, 0, sizeof(o));
	if (engine_import(e, y, strlen(y), &o, err, &imp) != 0 ||
	    json_string_value(json_object_get(imp, "app_id")) == NULL) {
		fprintf(stderr, "import: %s\n", err);
		json_decref(imp);
		return -1;
	}
	snprintf(id, 37, "%s", json_string_value(json_object_get(imp,
	    "app_id")));
	json_decref(imp);
	return 0;
}

/* One run; its time into *run_us and the code node's into *node_us. */
static int
one_run(struct engine *e, const char *app, double *run_us, double *node_us)
{
	struct run_opts	 o;
	struct timing	 t = {0, 0, 0};
	json_t		*in = json_pack("{s:i}", "a", 41), *res = NULL;
	char		 err[ENGINE_ERRMAX];
	double		 t0;
	int		 rc;

	memset(&o, 0, sizeof(o));
	o.app_id = app;
	o.inputs = in;
	o.user = "bench";
	o.on_event = on_event;
	o.arg = &t;
	t0 = now_us();
	rc = engine_run(e, &o, err, &res);
	*run_us = now_us() - t0;
	*node_us = t.t_end - t.t_start;
	json_decref(res);
	json_decref(in);
	if (rc != 0 || t.failed || t.t_end == 0) {
		fprintf(stderr, "run failed: %s\n", rc ? err : "code node");
		return -1;
	}
	return 0;
}

struct figures {
	double	run50, run99, node50, node99;
	long	hits;	/* runs that found a ready runner */
	double	idle_kb;	/* PSS of an idle fork server and its child */
};

/* pid's /proc/<pid>/<what> into buf (NULs as spaces); length or -1. */
static long
proc_read(long pid, const char *what, char *buf, size_t size)
{
	char	 path[64];
	FILE	*f;
	size_t	 n, i;

	snprintf(path, sizeof(path), "/proc/%ld/%s", pid, what);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	for (i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return (long)n;
}

/* The parent of pid, or -1. */
static long
proc_parent(long pid)
{
	char	buf[1024], *p;

	if (proc_read(pid, "stat", buf, sizeof(buf)) < 0 ||
	    (p = strrchr(buf, ')')) == NULL)
		return -1;
	return strtol(p + 4, NULL, 10);
}

/*
 * The proportional set size (kB) of the fork servers below this process
 * and of their children (the one waiting for the next job), per server:
 * what an idle runner costs, its pages shared with its child counted once.
 */
static double
idle_runner_kb(void)
{
	DIR		*d = opendir("/proc");
	struct dirent	*de;
	char		 buf[4096], *p;
	long		 pid, q, depth, servers = 0;
	double		 kb = 0;

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if ((pid = strtol(de->d_name, NULL, 10)) <= 0)
			continue;
		for (q = pid, depth = 0; q > 1 && q != getpid() && depth < 64;
		    depth++)
			q = proc_parent(q);
		if (q != getpid() || proc_read(pid, "cmdline", buf,
		    sizeof(buf)) < 0)
			continue;
		if (strncmp(buf, "python3 ", 8) != 0 &&
		    strncmp(buf, "node -e ", 8) != 0)
			continue;
		if (strncmp(buf, "python3 ", 8) == 0 &&
		    strstr(buf, "runner.py") != NULL &&
		    (q = proc_parent(pid)) > 0 &&
		    proc_read(q, "cmdline", buf, sizeof(buf)) >= 0 &&
		    strstr(buf, "bwrap") != NULL)
			servers++;
		if (proc_read(pid, "smaps_rollup", buf, sizeof(buf)) > 0 &&
		    (p = strstr(buf, "\nPss:")) != NULL)
			kb += strtod(p + 5, NULL);
	}
	closedir(d);
	return servers > 0 ? kb / (double)servers : 0;
}

/*
 * runs runs of lang with code.pool_size pool into *f; paced: each waits
 * until the pool is warm again.
 */
static int
measure(const char *dir, const char *lang, int pool, int fork, int runs,
    int paced, struct figures *f)
{
	static struct conf	 c;
	struct sandbox_code_pool_stats st0, st1;
	struct engine		*e = NULL;
	char			 err[ENGINE_ERRMAX], app[37], sub[1024];
	double			*rv = calloc((size_t)runs, sizeof(*rv));
	double			*nv = calloc((size_t)runs, sizeof(*nv));
	int			 i, rc = -1;

	memset(f, 0, sizeof(*f));
	conf_defaults(&c);
	snprintf(sub, sizeof(sub), "%s/%s-%d-%d-%d", dir, lang, pool, fork,
	    paced);
	snprintf(c.data_dir, sizeof(c.data_dir), "%s", sub);
	c.sync = 0;	/* fsync would drown the figures */
	c.code_pool_size = pool;
	c.code_fork_server = fork;
	c.code_fork_server_javascript = fork;
	if (rv == NULL || nv == NULL || engine_open(&c, err, &e) != 0) {
		fprintf(stderr, "engine: %s\n", err);
		goto out;
	}
	if (import_app(e, lang, app) != 0)
		goto out;
	for (i = 0; i < 3; i++)		/* warm up */
		if (one_run(e, app, &rv[0], &nv[0]) != 0)
			goto out;
	sandbox_code_pool_stats(e->code_pool, &st0);
	for (i = 0; i < runs; i++) {
		if (paced && e->code_pool != NULL &&
		    sandbox_code_pool_wait(e->code_pool, lang, pool, 30000) !=
		    0) {
			fprintf(stderr, "%s: no warm runner after 30 s\n",
			    lang);
			goto out;
		}
		if (one_run(e, app, &rv[i], &nv[i]) != 0)
			goto out;
	}
	sandbox_code_pool_stats(e->code_pool, &st1);
	if (fork && paced && e->code_pool != NULL &&
	    sandbox_code_pool_wait(e->code_pool, lang, pool, 30000) == 0)
		f->idle_kb = idle_runner_kb();
	f->hits = st1.hits - st0.hits - (st1.early - st0.early);
	f->run50 = pct(rv, runs, 50) / 1000;
	f->run99 = pct(rv, runs, 99) / 1000;
	f->node50 = pct(nv, runs, 50) / 1000;
	f->node99 = pct(nv, runs, 99) / 1000;
	rc = 0;
out:
	engine_close(e);
	free(rv);
	free(nv);
	return rc;
}

int
main(int argc, char **argv)
{
	static const char *const langs[] = {"python3", "javascript"};
	static struct conf	 def;
	struct figures		 off, on, burst, fon, fburst;
	int			 runs, i, size;

	if (argc != 3 || (runs = (int)strtol(argv[2], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: code_bench DATA_DIR RUNS\n");
		return 2;
	}
	json_object_seed(0);
	conf_defaults(&def);
	size = def.code_pool_size > 0 ? def.code_pool_size : 2;
	printf("code node (start -> code -> end through engine_run, %d runs "
	    "each; pool on: code.pool_size %d; ms)\n", runs, size);
	printf("  %-10s %-22s %8s %8s %8s %8s %6s\n", "", "", "run p50",
	    "run p99", "node p50", "node p99", "warm");
	for (i = 0; i < 2; i++) {
		if (measure(argv[1], langs[i], 0, 0, runs, 0, &off) != 0 ||
		    measure(argv[1], langs[i], size, 0, runs, 1, &on) != 0 ||
		    measure(argv[1], langs[i], size, 0, runs, 0, &burst) != 0)
			return 1;
		if (measure(argv[1], langs[i], size, 1, runs, 1, &fon) != 0 ||
		    measure(argv[1], langs[i], size, 1, runs, 0, &fburst) != 0)
			return 1;
		printf("  %-10s %-22s %8.2f %8.2f %8.2f %8.2f %6s\n", langs[i],
		    "pool off (baseline)", off.run50, off.run99, off.node50,
		    off.node99, "-");
		printf("  %-10s %-22s %8.2f %8.2f %8.2f %8.2f %3ld/%d\n", "",
		    "pool on, paced", on.run50, on.run99, on.node50,
		    on.node99, on.hits, runs);
		printf("  %-10s %-22s %8.2f %8.2f %8.2f %8.2f %3ld/%d\n", "",
		    "pool on, back to back", burst.run50, burst.run99,
		    burst.node50, burst.node99, burst.hits, runs);
		printf("  %-10s %-22s %8.3f %8.3f %8.3f %8.3f  (target: "
		    "paced node p50 < 5 ms)\n", "", "on paced / off",
		    on.run50 / off.run50, on.run99 / off.run99,
		    on.node50 / off.node50, on.node99 / off.node99);
		printf("  %-10s %-22s %8.2f %8.2f %8.2f %8.2f %3ld/%d\n", "",
		    "fork server, paced", fon.run50, fon.run99, fon.node50,
		    fon.node99, fon.hits, runs);
		printf("  %-10s %-22s %8.1f MB PSS (server and its waiting "
		    "child)\n", "", "idle fork server", fon.idle_kb / 1024);
		printf("  %-10s %-22s %8.2f %8.2f %8.2f %8.2f %3ld/%d\n", "",
		    "fork server, b2b", fburst.run50, fburst.run99,
		    fburst.node50, fburst.node99, fburst.hits, runs);
		printf("  %-10s %-22s %8.3f %8.3f %8.3f %8.3f  (target: "
		    "b2b node p50 <= %d ms)\n", "", "fork b2b / pool b2b",
		    fburst.run50 / burst.run50, fburst.run99 / burst.run99,
		    fburst.node50 / burst.node50, fburst.node99 /
		    burst.node99, i == 0 ? 2 : 5);
		printf("  %-10s %-22s %8.3f %8.3f %8.3f %8.3f\n", "",
		    "fork b2b / pool off", fburst.run50 / off.run50,
		    fburst.run99 / off.run99, fburst.node50 / off.node50,
		    fburst.node99 / off.node99);
	}
	return 0;
}
