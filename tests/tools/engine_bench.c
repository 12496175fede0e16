/*
 * engine_bench.c — the engine's own costs, without a web server:
 *
 *   engine_bench nodes DATA_DIR RUNS
 *	runs a chain of 10 and a chain of 110 simple nodes (start, if-else,
 *	template-transform, variable-aggregator, end) RUNS times each
 *	through engine_run and prints the CPU time (all threads) and the wall
 *	time per run of each, and the marginal CPU cost of one node in
 *	microseconds ((t110 - t10) / 100): what the executor adds per node,
 *	with the run's fixed costs (records, the storage write) cancelled
 *	out.
 *   engine_bench corpus DATA_DIR DIR
 *	imports and exports every .yml file of DIR five times and prints the
 *	median import and export time per file, and the slowest file.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "tests/tools/bench_stats.h"

/* CPU time of the whole process (every thread), microseconds. */
static double
cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

struct timing {
	double	wall;	/* us per run */
	double	cpu;	/* us of CPU per run */
};

/*
 * A workflow: start -> n simple nodes in a chain -> end, as DSL YAML. The
 * nodes take turns: if-else (its true branch), template-transform,
 * variable-aggregator, each reading the last value made before it.
 */
static char *
chain_yaml(int n)
{
	size_t	 cap = 4096 + (size_t)n * 640, len = 0;
	char	*y = malloc(cap), last[32] = "[s, q]", prev[16] = "s";
	char	 handle[8], target[16];
	int	 i;

	len += (size_t)snprintf(y + len, cap - len,
	    "version: 0.6.0\nkind: app\napp: {name: chain, mode: workflow}\n"
	    "workflow:\n  features: {}\n  graph:\n    nodes:\n"
	    "    - id: s\n      data: {type: start, title: S, variables:"
	    " [{variable: q, type: text-input, label: q}]}\n");
	for (i = 0; i < n; i++) {
		switch (i % 3) {
		case 0:
			len += (size_t)snprintf(y + len, cap - len,
			    "    - id: n%d\n      data: {type: if-else, title: "
			    "I%d, cases: [{case_id: 'true', logical_operator: "
			    "and, conditions: [{variable_selector: %s, "
			    "comparison_operator: not empty, value: ''}]}]}\n",
			    i, i, last);
			break;
		case 1:
			len += (size_t)snprintf(y + len, cap - len,
			    "    - id: n%d\n      data: {type: template-transform"
			    ", title: T%d, template: '{{ x }}!', variables: "
			    "[{variable: x, value_selector: %s}]}\n", i, i, last);
			snprintf(last, sizeof(last), "[n%d, output]", i);
			break;
		default:
			len += (size_t)snprintf(y + len, cap - len,
			    "    - id: n%d\n      data: {type: variable-aggregator"
			    ", title: A%d, variables: [%s]}\n", i, i, last);
			snprintf(last, sizeof(last), "[n%d, output]", i);
			break;
		}
	}
	len += (size_t)snprintf(y + len, cap - len,
	    "    - id: e\n      data: {type: end, title: E, outputs: "
	    "[{variable: out, value_selector: %s}]}\n    edges:\n", last);
	for (i = 0; i <= n; i++) {
		/* an if-else leaves by its case's handle */
		snprintf(handle, sizeof(handle), "%s", i > 0 &&
		    (i - 1) % 3 == 0 ? "true" : "source");
		if (i < n)
			snprintf(target, sizeof(target), "n%d", i);
		else
			snprintf(target, sizeof(target), "e");
		len += (size_t)snprintf(y + len, cap - len,
		    "    - {id: x%d, source: %s, sourceHandle: '%s', target: "
		    "%s}\n", i, prev, handle, target);
		snprintf(prev, sizeof(prev), "%s", target);
	}
	return y;
}

static const char *
import_text(struct engine *e, const char *y, size_t len)
{
	struct import_opts	 o;
	static char		 id[37];
	char			 err[ENGINE_ERRMAX];
	json_t			*imp = NULL;

	memset(&o, 0, sizeof(o));
	if (engine_import(e, y, len, &o, err, &imp) != 0 ||
	    json_string_value(json_object_get(imp, "app_id")) == NULL) {
		json_decref(imp);
		return NULL;
	}
	snprintf(id, sizeof(id), "%s", json_string_value(json_object_get(imp,
	    "app_id")));
	json_decref(imp);
	return id;
}

static struct timing
time_runs(struct engine *e, const char *app, int runs)
{
	struct run_opts	 o;
	struct timing	 tm;
	json_t		*in = json_pack("{s:s}", "q", "hello"), *res;
	char		 err[ENGINE_ERRMAX];
	double		 t0, c0;
	int		 i;

	memset(&o, 0, sizeof(o));
	o.app_id = app;
	o.inputs = in;
	o.user = "bench";
	t0 = now_us();
	c0 = cpu_us();
	for (i = 0; i < runs; i++) {
		res = NULL;
		if (engine_run(e, &o, err, &res) != 0) {
			fprintf(stderr, "run failed: %s\n", err);
			exit(1);
		}
		json_decref(res);
	}
	tm.cpu = (cpu_us() - c0) / runs;
	tm.wall = (now_us() - t0) / runs;
	json_decref(in);
	return tm;
}

static int
bench_nodes(struct engine *e, int runs)
{
	char		*y10 = chain_yaml(8), *y110 = chain_yaml(108);
	char		 a10[37], a110[37];
	const char	*id;
	struct timing	 t10, t110;

	/* 8 + start + end = 10 nodes; 108 + 2 = 110 */
	if ((id = import_text(e, y10, strlen(y10))) == NULL)
		return 1;
	snprintf(a10, sizeof(a10), "%s", id);
	if ((id = import_text(e, y110, strlen(y110))) == NULL)
		return 1;
	snprintf(a110, sizeof(a110), "%s", id);
	time_runs(e, a10, runs / 10 + 1);	/* warm up */
	t10 = time_runs(e, a10, runs);
	t110 = time_runs(e, a110, runs);
	printf("engine (in-process, storage.sync off): 10-node run %.1f us "
	    "CPU (target < 150), 110-node run %.1f us CPU, per node %.2f us "
	    "CPU (target < 5); wall %.1f / %.1f us (%d runs each)\n",
	    t10.cpu, t110.cpu, (t110.cpu - t10.cpu) / 100.0, t10.wall,
	    t110.wall, runs);
	free(y10);
	free(y110);
	return 0;
}

static int
bench_corpus(struct engine *e, const char *dir)
{
	DIR		*d = opendir(dir);
	struct dirent	*de;
	char		 path[4096], err[ENGINE_ERRMAX], *text, *out, slow[256];
	double		 imp[5], exp[5], *mi = NULL, *me = NULL, worst = 0, t0;
	size_t		 n = 0, len, olen;
	long		 sz;
	FILE		*f;
	const char	*id;
	int		 k;

	if (d == NULL)
		return 1;
	slow[0] = '\0';
	mi = calloc(512, sizeof(*mi));
	me = calloc(512, sizeof(*me));
	while ((de = readdir(d)) != NULL && n < 512) {
		if (strstr(de->d_name, ".yml") == NULL)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if ((f = fopen(path, "rb")) == NULL)
			continue;
		fseek(f, 0, SEEK_END);
		sz = ftell(f);
		fseek(f, 0, SEEK_SET);
		text = malloc((size_t)sz + 1);
		len = fread(text, 1, (size_t)sz, f);
		fclose(f);
		id = NULL;
		for (k = 0; k < 5; k++) {
			t0 = now_us();
			id = import_text(e, text, len);
			imp[k] = now_us() - t0;
			if (id == NULL)
				break;
			t0 = now_us();
			out = NULL;
			engine_export(e, id, 1, err, &out, &olen);
			exp[k] = now_us() - t0;
			free(out);
		}
		free(text);
		if (id == NULL)
			continue;
		mi[n] = median(imp, 5);
		me[n] = median(exp, 5);
		if (mi[n] + me[n] > worst) {
			worst = mi[n] + me[n];
			snprintf(slow, sizeof(slow), "%s", de->d_name);
		}
		n++;
	}
	closedir(d);
	printf("dsl: %zu corpus files, median per file: import %.0f us, "
	    "export %.0f us; slowest %s (%.0f us both)\n", n,
	    median(mi, n), median(me, n), slow, worst);
	free(mi);
	free(me);
	return 0;
}

int
main(int argc, char **argv)
{
	static struct conf	 c;
	struct engine		*e = NULL;
	char			 err[ENGINE_ERRMAX];
	int			 rc;

	if (argc != 4) {
		fprintf(stderr, "usage: engine_bench nodes DIR RUNS | corpus "
		    "DIR CORPUS\n");
		return 2;
	}
	conf_defaults(&c);
	snprintf(c.data_dir, sizeof(c.data_dir), "%s", argv[2]);
	/* fsync times vary by the millisecond and would drown the figures;
	 * the run's two commits are the same for both chains anyway */
	c.sync = 0;
	json_object_seed(0);
	if (engine_open(&c, err, &e) != 0) {
		fprintf(stderr, "engine: %s\n", err);
		return 1;
	}
	if (strcmp(argv[1], "nodes") == 0)
		rc = bench_nodes(e, (int)strtol(argv[3], NULL, 10));
	else
		rc = bench_corpus(e, argv[3]);
	engine_close(e);
	return rc;
}
