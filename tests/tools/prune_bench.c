/*
 * prune_bench.c — what pruning run history costs the runs beside it:
 *
 *   prune_bench DATA_DIR RUNS
 *	fills DATA_DIR with RUNS runs of one app, ten node executions of
 *	about 700 bytes each, and prunes all but the newest 5% of them with
 *	the default settings (storage.sync on, run.prune_batch 200). Meanwhile
 *	another thread makes one-record writes (the size of a run's stop
 *	mark) every 2 ms; their latency is compared with the same writes
 *	for 2 s without a pass. Prints the pass's time and rate and the
 *	writes' mean and longest latency, each as a ratio to the baseline.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "tests/tools/bench_stats.h"

#define APP	"0190a000-0000-7000-8000-00000000000a"

static struct engine	*eng;
static int		 nruns;
static atomic_int	 stop;

struct lat {
	double	sum, max;
	long	n;
};

/* Runs [*first, *first + 1000) with their node executions. */
static int
fill_fn(struct store_txn *t, void *arg)
{
	const int	*first = arg;
	char		 id[37], key[128], val[1024], pad[600];
	long long	 ms;
	int		 i, j, rc;

	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	for (i = *first; i < *first + 1000 && i < nruns; i++) {
		ms = 1700000000000LL + i;
		snprintf(id, sizeof(id), "%08llx-%04llx-7%03x-8000-%012x",
		    ms >> 16, ms & 0xffff, (unsigned)i & 0xfff, (unsigned)i);
		snprintf(val, sizeof(val), "{\"id\":\"%s\",\"app_id\":\"%s\","
		    "\"status\":\"succeeded\",\"outputs\":\"%s\"}", id, APP,
		    pad);
		if ((rc = store_put(t, STORE_DB_RUNS, id, 36, val, strlen(val),
		    0)) != 0)
			return rc;
		snprintf(key, sizeof(key), "%s/%s", APP, id);
		if ((rc = store_put(t, STORE_DB_RUNS_BY_APP, key, strlen(key),
		    id, 36, 0)) != 0)
			return rc;
		for (j = 0; j < 10; j++) {
			snprintf(key, sizeof(key), "%s/%06d", id, j + 1);
			if ((rc = store_put(t, STORE_DB_NODE_RUNS, key,
			    strlen(key), val, strlen(val), 0)) != 0)
				return rc;
		}
	}
	return 0;
}

static int
mark_fn(struct store_txn *t, void *arg)
{
	(void)arg;
	return store_put(t, STORE_DB_META, "bench", 5, "1", 1, 0);
}

static void *
writer(void *arg)
{
	struct lat	*l = arg;
	struct timespec	 gap = { 0, 2000000 };
	double		 t0, d;

	while (!atomic_load(&stop)) {
		t0 = now_ms();
		if (store_write(engine_store(eng), mark_fn, NULL) != 0)
			break;
		d = now_ms() - t0;
		l->sum += d;
		l->max = d > l->max ? d : l->max;
		l->n++;
		nanosleep(&gap, NULL);
	}
	return NULL;
}

/* Writes beside a pass (prune) or beside nothing for 2 s. */
static double
measure(int prune, struct lat *l, struct prune_stats *st)
{
	struct timespec	 two = { 2, 0 };
	pthread_t	 th;
	double		 t0;

	memset(l, 0, sizeof(*l));
	atomic_store(&stop, 0);
	if (pthread_create(&th, NULL, writer, l) != 0)
		return -1;
	t0 = now_ms();
	if (prune)
		engine_prune(eng, PRUNE_WAIT, st);
	else
		nanosleep(&two, NULL);
	t0 = now_ms() - t0;
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	return t0;
}

int
main(int argc, char **argv)
{
	static struct conf	c;
	struct prune_stats	st;
	struct lat		base, during;
	char			err[ENGINE_ERRMAX] = "";
	double			ms;
	int			i;

	if (argc != 3 || (nruns = atoi(argv[2])) < 100) {
		fprintf(stderr, "usage: prune_bench DATA_DIR RUNS (>= 100)\n");
		return 2;
	}
	log_init(CONF_LOG_ERROR, NULL);
	conf_defaults(&c);
	snprintf(c.data_dir, sizeof(c.data_dir), "%s", argv[1]);
	c.sync = 0;	/* filling is not what is measured */
	if (engine_open(&c, err, &eng) != 0) {
		fprintf(stderr, "prune_bench: %s\n", err);
		return 1;
	}
	for (i = 0; i < nruns; i += 1000)
		if (store_write(engine_store(eng), fill_fn, &i) != 0) {
			fprintf(stderr, "prune_bench: cannot fill\n");
			return 1;
		}
	engine_close(eng);
	conf_defaults(&c);
	snprintf(c.data_dir, sizeof(c.data_dir), "%s", argv[1]);
	c.run_history_max_count = nruns / 20;
	c.run_history_max_age = 0;	/* the runs are made in 2023 */
	if (engine_open(&c, err, &eng) != 0) {
		fprintf(stderr, "prune_bench: %s\n", err);
		return 1;
	}
	measure(0, &base, NULL);
	ms = measure(1, &during, &st);
	engine_close(eng);
	if (base.n == 0 || during.n == 0 || st.runs == 0) {
		fprintf(stderr, "prune_bench: nothing measured\n");
		return 1;
	}
	printf("prune: %lld runs, %lld records in %.1f s (%.0f records/s); "
	    "1-record writes beside it: mean %.2f ms (%.2fx without), "
	    "longest %.1f ms (%.2fx without)\n", (long long)st.runs,
	    (long long)(st.runs * 2 + st.node_runs), ms / 1e3,
	    (double)(st.runs * 2 + st.node_runs) / (ms / 1e3),
	    during.sum / (double)during.n, (during.sum / (double)during.n) /
	    (base.sum / (double)base.n), during.max, during.max / base.max);
	return 0;
}
