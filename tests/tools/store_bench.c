/*
 * store_bench.c — what a failing writer costs a group commit batch, two
 * ways, measured on LMDB itself:
 *
 *   store_bench DATA_DIR [BATCH [ROUNDS]]
 *
 * Each writer of a batch of BATCH (32) writes what a finished run writes:
 * a 1.5 KB record, an index key and ten 400-byte node records.
 *   flat     one transaction for the batch (what storage/store.c does);
 *   nested   the same, each writer in a nested transaction of its own;
 * each without a failure, and with one writer in the middle failing after
 * its writes: flat aborts and runs the others again in a fresh
 * transaction, nested aborts that writer's child only. Medians over ROUNDS
 * (200) batches, with MDB_NOSYNC so that only CPU is compared (the flush is
 * the same for both); then the cost of one durable commit on this disk, for
 * scale. Prints microseconds, and how often a writer must fail for nested
 * transactions to pay off.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <lmdb.h>

#include "tests/tools/bench_stats.h"

static MDB_dbi	dbi_runs, dbi_index, dbi_nodes;
static char	rec[1536], node[400];
static long	seq;

static int
put(MDB_txn *txn, MDB_dbi dbi, const char *k, const char *v, size_t vlen)
{
	MDB_val key = { strlen(k), (void *)k }, val = { vlen, (void *)v };

	return mdb_put(txn, dbi, &key, &val, 0);
}

/* One writer: a run record, its index key, ten node records. */
static int
writer(MDB_txn *txn, long id)
{
	char	k[64];
	int	i, rc;

	snprintf(k, sizeof(k), "%016lx-run", id * 2654435761UL);
	if ((rc = put(txn, dbi_runs, k, rec, sizeof(rec))) != 0)
		return rc;
	snprintf(k, sizeof(k), "app/%016lx", id * 2654435761UL);
	if ((rc = put(txn, dbi_index, k, k, 20)) != 0)
		return rc;
	for (i = 0; i < 10; i++) {
		snprintf(k, sizeof(k), "%016lx/%06d", id * 2654435761UL, i);
		if ((rc = put(txn, dbi_nodes, k, node, sizeof(node))) != 0)
			return rc;
	}
	return 0;
}

/*
 * One batch of n writers, writer fail (or -1) failing after its writes.
 * Returns the microseconds it took, or -1.
 */
static double
batch_flat(MDB_env *env, int n, int fail)
{
	MDB_txn	*txn;
	long	 base = seq;
	double	 t0 = now_us();
	int	 i, failed = -1;

	seq += n;
	for (;;) {
		if (mdb_txn_begin(env, NULL, 0, &txn) != 0)
			return -1;
		for (i = 0; i < n; i++) {
			if (i == failed)
				continue;
			if (writer(txn, base + i) != 0)
				return -1;
			if (i == fail && failed < 0)
				break;
		}
		if (i < n) {	/* writer i failed: again without it */
			mdb_txn_abort(txn);
			failed = i;
			continue;
		}
		if (mdb_txn_commit(txn) != 0)
			return -1;
		return now_us() - t0;
	}
}

static double
batch_nested(MDB_env *env, int n, int fail)
{
	MDB_txn	*txn, *child;
	long	 base = seq;
	double	 t0 = now_us();
	int	 i;

	seq += n;
	if (mdb_txn_begin(env, NULL, 0, &txn) != 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (mdb_txn_begin(env, txn, 0, &child) != 0 ||
		    writer(child, base + i) != 0)
			return -1;
		if (i == fail)
			mdb_txn_abort(child);
		else if (mdb_txn_commit(child) != 0)
			return -1;
	}
	if (mdb_txn_commit(txn) != 0)
		return -1;
	return now_us() - t0;
}

static MDB_env *
env_open(const char *dir, unsigned flags)
{
	MDB_env	*env = NULL;
	MDB_txn	*txn;

	mkdir(dir, 0700);
	if (mdb_env_create(&env) != 0 ||
	    mdb_env_set_mapsize(env, (size_t)4 << 30) != 0 ||
	    mdb_env_set_maxdbs(env, 8) != 0 ||
	    mdb_env_open(env, dir, flags, 0600) != 0 ||
	    mdb_txn_begin(env, NULL, 0, &txn) != 0)
		goto fail;
	if (mdb_dbi_open(txn, "runs", MDB_CREATE, &dbi_runs) != 0 ||
	    mdb_dbi_open(txn, "index", MDB_CREATE, &dbi_index) != 0 ||
	    mdb_dbi_open(txn, "nodes", MDB_CREATE, &dbi_nodes) != 0 ||
	    mdb_txn_commit(txn) != 0)
		goto fail;
	return env;
fail:
	fprintf(stderr, "store_bench: cannot open an environment in %s\n",
	    dir);
	if (env != NULL)
		mdb_env_close(env);
	return NULL;
}

int
main(int argc, char **argv)
{
	MDB_env	*env;
	MDB_txn	*txn;
	char	 dir[1024];
	double	*v[4], sync_us[50], fl, ne, flf, nef, be;
	int	 batch = argc > 2 ? (int)strtol(argv[2], NULL, 10) : 32;
	int	 rounds = argc > 3 ? (int)strtol(argv[3], NULL, 10) : 200;
	int	 r, k;

	if (argc < 2 || batch < 2 || rounds < 1) {
		fprintf(stderr, "usage: store_bench DATA_DIR [BATCH "
		    "[ROUNDS]]\n");
		return 2;
	}
	memset(rec, 'r', sizeof(rec));
	memset(node, 'n', sizeof(node));
	snprintf(dir, sizeof(dir), "%s/nosync", argv[1]);
	if ((env = env_open(dir, MDB_NOSYNC)) == NULL)
		return 1;
	for (k = 0; k < 4; k++)
		if ((v[k] = calloc((size_t)rounds, sizeof(double))) == NULL)
			return 1;
	/* a warm-up, then the four kinds interleaved round by round */
	for (r = 0; r < 20; r++)
		batch_flat(env, batch, -1);
	for (r = 0; r < rounds; r++) {
		v[0][r] = batch_flat(env, batch, -1);
		v[1][r] = batch_nested(env, batch, -1);
		v[2][r] = batch_flat(env, batch, batch / 2);
		v[3][r] = batch_nested(env, batch, batch / 2);
		for (k = 0; k < 4; k++)
			if (v[k][r] < 0) {
				fprintf(stderr, "store_bench: a batch "
				    "failed\n");
				return 1;
			}
	}
	mdb_env_close(env);
	fl = median(v[0], (size_t)rounds);
	ne = median(v[1], (size_t)rounds);
	flf = median(v[2], (size_t)rounds);
	nef = median(v[3], (size_t)rounds);

	/* one durable commit of one writer, for scale */
	snprintf(dir, sizeof(dir), "%s/sync", argv[1]);
	if ((env = env_open(dir, 0)) == NULL)
		return 1;
	for (r = 0; r < 50; r++) {
		double t0 = now_us();

		if (mdb_txn_begin(env, NULL, 0, &txn) != 0 ||
		    writer(txn, seq++) != 0 || mdb_txn_commit(txn) != 0)
			return 1;
		sync_us[r] = now_us() - t0;
	}
	mdb_env_close(env);

	printf("batch of %d writers (a run's records each), median of %d, "
	    "no flush:\n", batch, rounds);
	printf("  one transaction            %8.1f us  (%.2f us a writer)\n",
	    fl, fl / batch);
	printf("  a nested one per writer    %8.1f us  (%.2f us a writer, "
	    "+%.2f)\n", ne, ne / batch, (ne - fl) / batch);
	printf("  one fails, rerun the rest  %8.1f us  (%+.1f us for the "
	    "failure)\n", flf, flf - fl);
	printf("  one fails, nested          %8.1f us  (%+.1f us)\n", nef,
	    nef - ne);
	/* break-even: fl + p (flf - fl) = ne + p (nef - ne) */
	be = (flf - fl) - (nef - ne) > 0 ?
	    (ne - fl) / ((flf - fl) - (nef - ne)) : 2;
	if (be <= 1)
		printf("  nested is cheaper once more than %.0f%% of batches "
		    "have a failing writer\n", be * 100);
	else
		printf("  nested is dearer even if every batch has a failing "
		    "writer\n");
	printf("one durable commit (fdatasync) of one writer: %.1f us "
	    "median\n", median(sync_us, 50));
	return 0;
}
