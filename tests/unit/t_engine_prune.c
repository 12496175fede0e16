/*
 * t_engine_prune.c — run history pruning (engine/records/prune.c) on records
 * written straight into storage: the newest run.history_max_count runs of
 * each app stay, runs older than run.history_max_age go, running runs
 * stay until they end, node executions go with their run in both forms,
 * messages of conversations that are gone, expired pending imports and
 * unreferenced blobs go while everything referenced stays; small batches
 * and walks longer than one read transaction; the lock that lets one
 * process prune at a time; the background pruner.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/internal.h"
#include "tests/unit/tap.h"
#include "tests/unit/tmp_engine.h"

static struct conf	 conf;
static struct engine	*eng;
static char		 tmpdir[256];

static int64_t
ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A version-7 UUID made at ms, the rest from seq, in buf[37]. */
static void
uuid_at(int64_t ms, unsigned seq, char buf[37])
{
	snprintf(buf, 37, "%08llx-%04llx-7%03x-8000-%012x",
	    (unsigned long long)(ms >> 16), (unsigned long long)(ms & 0xffff),
	    seq & 0xfff, seq);
}

/* ====== Writing records ====== */

struct put {
	enum store_db	 db;
	const char	*key;
	const void	*val;
	size_t		 len;
};

static int
put_fn(struct store_txn *t, void *arg)
{
	struct put *p = arg;

	return store_put(t, p->db, p->key, strlen(p->key), p->val, p->len, 0);
}

static int
put(enum store_db db, const char *key, const char *val)
{
	struct put p = { db, key, val, strlen(val) };

	return store_write(engine_store(eng), put_fn, &p);
}

static int
del_fn(struct store_txn *t, void *arg)
{
	struct put *p = arg;

	return store_del(t, p->db, p->key, strlen(p->key));
}

static int
del(enum store_db db, const char *key)
{
	struct put p = { db, key, NULL, 0 };

	return store_write(engine_store(eng), del_fn, &p);
}

/* 1 when key is in db. */
static int
has(enum store_db db, const char *key)
{
	struct store_txn	*t = NULL;
	const void		*v;
	size_t			 vlen;
	int			 rc;

	if (store_read_begin(engine_store(eng), &t) != 0)
		return -1;
	rc = store_get(t, db, key, strlen(key), &v, &vlen);
	store_read_end(t);
	return rc == 0;
}

/* Keys of db that start with prefix ("" = all). */
static int
count(enum store_db db, const char *prefix)
{
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	size_t			 plen = strlen(prefix);
	int			 n = 0, rc;

	if (store_read_begin(engine_store(eng), &t) != 0)
		return -1;
	if (store_cursor_open(t, db, &c) == 0) {
		for (rc = plen ? store_cursor_seek(c, prefix, plen, &kv) :
		    store_cursor_first(c, &kv); rc == 0;
		    rc = store_cursor_next(c, &kv)) {
			if (kv.klen < plen || memcmp(kv.k, prefix, plen) != 0)
				break;
			n++;
		}
		store_cursor_close(c);
	}
	store_read_end(t);
	return n;
}

/*
 * A run of app at ms with status and nodes node executions: one record
 * per node ("<id>/<index>"), or with whole set the trace as one record
 * ("<id>"). Its id goes to id.
 */
static void
run_put(const char *app, int64_t ms, unsigned seq, const char *status,
    int nodes, int whole, char id[37])
{
	char	key[128], val[256];
	int	i;

	uuid_at(ms, seq, id);
	snprintf(val, sizeof(val), "{\"id\":\"%s\",\"app_id\":\"%s\","
	    "\"status\":\"%s\",\"created_at\":%lld}", id, app, status,
	    (long long)(ms / 1000));
	put(STORE_DB_RUNS, id, val);
	snprintf(key, sizeof(key), "%s/%s", app, id);
	put(STORE_DB_RUNS_BY_APP, key, id);
	if (whole && nodes > 0)
		put(STORE_DB_NODE_RUNS, id, "[{\"node_id\":\"start\"}]");
	for (i = 0; !whole && i < nodes; i++) {
		snprintf(key, sizeof(key), "%s/%06d", id, i + 1);
		put(STORE_DB_NODE_RUNS, key, "{\"node_id\":\"n\"}");
	}
}

/* 1 when run id is wholly there (record, index key, traces), 0 when
 * wholly gone, -1 when in between. */
static int
run_state(const char *app, const char *id)
{
	char	key[128];
	int	r, i, n;

	snprintf(key, sizeof(key), "%s/%s", app, id);
	r = has(STORE_DB_RUNS, id);
	i = has(STORE_DB_RUNS_BY_APP, key);
	snprintf(key, sizeof(key), "%s/", id);
	n = count(STORE_DB_NODE_RUNS, key) + has(STORE_DB_NODE_RUNS, id);
	if (r && i && n > 0)
		return 1;
	if (!r && !i && n == 0)
		return 0;
	return -1;
}

static void
set_status(const char *app, const char *id, const char *status)
{
	char val[256];

	snprintf(val, sizeof(val), "{\"id\":\"%s\",\"app_id\":\"%s\","
	    "\"status\":\"%s\"}", id, app, status);
	put(STORE_DB_RUNS, id, val);
}

static void
limits(int64_t age, int count_, int batch)
{
	conf.run_history_max_age = age;
	conf.run_history_max_count = count_;
	conf.run_prune_batch = batch;
}

/* ====== Runs past max_count ====== */

#define APP_A "0190a000-0000-7000-8000-00000000000a"
#define APP_B "0190b000-0000-7000-8000-00000000000b"

static void
test_count(void)
{
	struct prune_stats	st;
	char			a[10][37], b[2][37];
	int64_t			t0 = ms_now() - 60000;
	int			i, bad;

	/* A: ten runs, the oldest still running; odd ones keep their trace
	 * in one record, even ones one record per node (3). B: two. */
	for (i = 0; i < 10; i++)
		run_put(APP_A, t0 + i * 1000, (unsigned)i, i == 0 ? "running" :
		    "succeeded", 3, i % 2, a[i]);
	for (i = 0; i < 2; i++)
		run_put(APP_B, t0 + 500 + i * 1000, 100 + (unsigned)i,
		    "succeeded", 3, 0, b[i]);
	limits(0, 3, 2);	/* batches of 2 records: a run at a time */
	CHECK_INT(engine_prune(eng, 0, &st), 0);
	CHECK_INT(st.busy, 0);
	/* a[1..6] go: three whole, three per node */
	CHECK_INT(st.runs, 6);
	CHECK_INT(st.node_runs, 3 * 1 + 3 * 3);
	CHECK_INT(st.running, 1);
	CHECK_INT(run_state(APP_A, a[0]), 1);
	for (bad = 0, i = 1; i < 7; i++)
		bad += run_state(APP_A, a[i]) != 0;
	CHECK_INT(bad, 0);
	for (bad = 0, i = 7; i < 10; i++)
		bad += run_state(APP_A, a[i]) != 1;
	CHECK_INT(bad, 0);
	CHECK_INT(run_state(APP_B, b[0]), 1);
	CHECK_INT(run_state(APP_B, b[1]), 1);
	CHECK_INT(count(STORE_DB_RUNS_BY_APP, APP_A "/"), 4);

	/* the list the console shows: the newest three and the running one */
	{
		json_t *l = NULL;

		/* engine_run_list wants the app to exist */
		put(STORE_DB_APPS, APP_A, "{\"id\":\"" APP_A "\"}");
		CHECK_INT(engine_run_list(eng, APP_A, 1, 20, &l), 0);
		CHECK_INT(json_integer_value(json_object_get(l, "total")), 4);
		CHECK_STR(json_string_value(json_object_get(json_array_get(
		    json_object_get(l, "data"), 0), "id")), a[9]);
		json_decref(l);
		del(STORE_DB_APPS, APP_A);
	}

	/* nothing more to do: a second pass removes nothing */
	CHECK_INT(engine_prune(eng, 0, &st), 0);
	CHECK_INT(st.runs + st.node_runs, 0);
	CHECK_INT(st.running, 1);

	/* once it has ended, the old running run goes */
	set_status(APP_A, a[0], "failed");
	CHECK_INT(engine_prune(eng, 0, &st), 0);
	CHECK_INT(st.runs, 1);
	CHECK_INT(st.running, 0);
	CHECK_INT(run_state(APP_A, a[0]), 0);
	CHECK_INT(count(STORE_DB_RUNS_BY_APP, APP_A "/"), 3);

	/* 0: any number */
	limits(0, 0, 200);
	run_put(APP_B, t0 + 5000, 200, "succeeded", 1, 0, b[0]);
	CHECK_INT(engine_prune(eng, 0, &st), 0);
	CHECK_INT(st.runs, 0);
	CHECK_INT(count(STORE_DB_RUNS_BY_APP, APP_B "/"), 3);
}

/* ====== Runs older than max_age ====== */

static void
test_age(void)
{
	struct prune_stats	st;
	char			o1[37], o2[37], run[37], young[37];
	char			v4[] = "4a6f0000-0000-4000-8000-000000000001";
	int64_t			now = ms_now();
	int			before;

	run_put(APP_B, now - 7200 * 1000, 300, "succeeded", 2, 0, o1);
	run_put(APP_B, now - 7100 * 1000, 301, "stopped", 1, 1, o2);
	run_put(APP_B, now - 7000 * 1000, 302, "running", 2, 0, run);
	run_put(APP_B, now - 1800 * 1000, 303, "succeeded", 2, 0, young);
	/* keys that are no run id of ours stay where they are */
	put(STORE_DB_RUNS, v4, "{\"status\":\"succeeded\"}");
	put(STORE_DB_RUNS, "zz-not-an-id", "{}");
	before = count(STORE_DB_RUNS, "");
	limits(3600, 0, 200);
	CHECK_INT(engine_prune(eng, 0, &st), 0);
	CHECK_INT(st.runs, 2);
	CHECK_INT(st.node_runs, 3);
	CHECK_INT(st.running, 1);
	CHECK_INT(run_state(APP_B, o1), 0);
	CHECK_INT(run_state(APP_B, o2), 0);
	CHECK_INT(run_state(APP_B, run), 1);
	CHECK_INT(run_state(APP_B, young), 1);
	CHECK_INT(has(STORE_DB_RUNS, v4), 1);
	CHECK_INT(has(STORE_DB_RUNS, "zz-not-an-id"), 1);
	CHECK_INT(count(STORE_DB_RUNS, ""), before - 2);

	/* with both limits, a run past both is counted once */
	limits(3600, 1, 200);
	CHECK_INT(engine_prune(eng, 0, &st), 0);
	CHECK_INT(st.running, 1);
	CHECK_INT(run_state(APP_B, run), 1);
	set_status(APP_B, run, "succeeded");
	CHECK_INT(engine_prune(eng, 0, &st), 0);
	CHECK_INT(run_state(APP_B, run), 0);
	CHECK_INT(count(STORE_DB_RUNS_BY_APP, APP_B "/"), 1);
	del(STORE_DB_RUNS, v4);
	del(STORE_DB_RUNS, "zz-not-an-id");
}

/* ====== Many runs, small batches ====== */

static int
many_fn(struct store_txn *t, void *arg)
{
	const char	*app = arg;
	char		 id[37], key[128];
	int64_t		 t0 = ms_now() - 100000;
	int		 i, rc;

	for (i = 0; i < 5000; i++) {
		uuid_at(t0 + i, (unsigned)i, id);
		snprintf(key, sizeof(key), "{\"id\":\"%s\",\"app_id\":\"%s\","
		    "\"status\":\"succeeded\"}", id, app);
		if ((rc = store_put(t, STORE_DB_RUNS, id, 36, key,
		    strlen(key), 0)) != 0)
			return rc;
		snprintf(key, sizeof(key), "%s/%s", app, id);
		if ((rc = store_put(t, STORE_DB_RUNS_BY_APP, key, strlen(key),
		    id, 36, 0)) != 0)
			return rc;
		snprintf(key, sizeof(key), "%s/000001", id);
		if ((rc = store_put(t, STORE_DB_NODE_RUNS, key, strlen(key),
		    "{}", 2, 0)) != 0)
			return rc;
	}
	return 0;
}

static void
test_many(void)
{
#define APP_C "0190c000-0000-7000-8000-00000000000c"
	static const char app[] = APP_C;
	struct prune_stats	st;
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	char			 newest[128] = "";
	int			 rc;

	/* more keys than one read transaction walks (4096) */
	CHECK_INT(store_write(engine_store(eng), many_fn, (void *)app), 0);
	CHECK_INT(store_read_begin(engine_store(eng), &t), 0);
	if (t != NULL && store_cursor_open(t, STORE_DB_RUNS_BY_APP, &c) == 0) {
		rc = store_cursor_seek(c, APP_C "0", strlen(APP_C) + 1, &kv);
		rc = rc == 0 ? store_cursor_prev(c, &kv) :
		    store_cursor_last(c, &kv);
		if (rc == 0 && kv.klen < sizeof(newest))
			memcpy(newest, kv.k, kv.klen);
		store_cursor_close(c);
	}
	store_read_end(t);
	limits(0, 10, 7);
	CHECK_INT(engine_prune(eng, 0, &st), 0);
	CHECK_INT(st.runs, 4990);
	CHECK_INT(st.node_runs, 4990);
	CHECK_INT(count(STORE_DB_RUNS_BY_APP, app), 10);
	CHECK_INT(has(STORE_DB_RUNS_BY_APP, newest), 1);
	/* the other apps were not touched */
	CHECK_INT(count(STORE_DB_RUNS_BY_APP, APP_A "/"), 1);
	CHECK_INT(count(STORE_DB_RUNS_BY_APP, APP_B "/"), 1);
	/* by age, in small batches too */
	limits(1, 0, 3);
	conf.run_history_max_age = 1;
	CHECK_INT(engine_prune(eng, 0, &st), 0);
	CHECK_INT(count(STORE_DB_RUNS_BY_APP, app), 0);
	CHECK_INT(st.runs, 10 + 1 + 1);
}

/* ====== Messages, imports, blobs ====== */

#define CONV(n) "0190d000-0000-7000-8000-00000000000" #n

/*
 * A blob of three equal chunks (one chunk blob counted three times by its
 * manifest) whose own count was lost: hex gets its hash.
 */
static int
orphan_chunks_fn(struct store_txn *t, void *arg)
{
	unsigned char	*big;
	int		 rc;

	if ((big = malloc(3 * STORE_BLOB_CHUNK)) == NULL)
		return STORE_ENOMEM;
	memset(big, 'c', 3 * STORE_BLOB_CHUNK);
	rc = store_blob_ref(t, big, 3 * STORE_BLOB_CHUNK, arg);
	free(big);
	return rc != 0 ? rc : store_del(t, STORE_DB_BLOBREFS, arg, 64);
}

static void
test_orphans(void)
{
	struct prune_stats	 st;
	struct store_txn	*t = NULL;
	char			 key[128], val[256];
	char			 hex_ref[STORE_HASH_HEX];
	char			 hex_free[STORE_HASH_HEX];
	char			 hex_zero[STORE_HASH_HEX];
	char			 hex_odd[STORE_HASH_HEX];
	char			 hex_imp[STORE_HASH_HEX];
	char			 hex_new[STORE_HASH_HEX];
	char			 hex_big[STORE_HASH_HEX], hex_chunk[80];
	unsigned char		*chunk;
	int			 i, c;

	/* conversations 1, 3, 5 live; 2 and 4 deleted, messages left */
	for (c = 1; c <= 5; c++) {
		if (c % 2)
			put(STORE_DB_CONVERSATIONS, c == 1 ? CONV(1) : c == 3 ?
			    CONV(3) : CONV(5), "{}");
		for (i = 0; i < 3; i++) {
			snprintf(key, sizeof(key), "0190d000-0000-7000-8000-"
			    "00000000000%d/0190e000-0000-7000-8000-"
			    "0000000000%02d", c, i);
			put(STORE_DB_MESSAGES, key, "{}");
		}
	}
	/* a blob with a reference, one with none, one with a count of 0, one
	 * with a count that does not read as one; an expired pending bundle
	 * import and a fresh one, each holding a blob */
	store_hash("referenced", 10, hex_ref);
	store_hash("free", 4, hex_free);
	store_hash("zero", 4, hex_zero);
	store_hash("odd", 3, hex_odd);
	store_hash("imported", 8, hex_imp);
	store_hash("new import", 10, hex_new);
	put(STORE_DB_BLOBS, hex_ref, "referenced");
	put(STORE_DB_BLOBREFS, hex_ref, "2");
	put(STORE_DB_BLOBS, hex_free, "free");
	put(STORE_DB_BLOBS, hex_zero, "zero");
	put(STORE_DB_BLOBREFS, hex_zero, "0");
	put(STORE_DB_BLOBS, hex_odd, "odd");
	put(STORE_DB_BLOBREFS, hex_odd, "x");
	put(STORE_DB_BLOBS, hex_imp, "imported");
	put(STORE_DB_BLOBREFS, hex_imp, "1");
	put(STORE_DB_BLOBS, hex_new, "new import");
	put(STORE_DB_BLOBREFS, hex_new, "1");
	snprintf(val, sizeof(val), "{\"created_at\":%lld,\"bundle_blob\":"
	    "\"%s\"}", (long long)(engine_now() - 3600), hex_imp);
	put(STORE_DB_IMPORTS, "0190f000-0000-7000-8000-000000000001", val);
	snprintf(val, sizeof(val), "{\"created_at\":%lld,\"bundle_blob\":"
	    "\"%s\"}", (long long)engine_now(), hex_new);
	put(STORE_DB_IMPORTS, "0190f000-0000-7000-8000-000000000002", val);
	CHECK_INT(store_write(engine_store(eng), orphan_chunks_fn, hex_big), 0);
	if ((chunk = malloc(STORE_BLOB_CHUNK)) != NULL) {
		memset(chunk, 'c', STORE_BLOB_CHUNK);
		store_hash(chunk, STORE_BLOB_CHUNK, hex_chunk);
		free(chunk);
	} else
		hex_chunk[0] = '\0';
	CHECK_INT(has(STORE_DB_BLOBS, hex_chunk), 1);
	CHECK_INT(store_read_begin(engine_store(eng), &t), 0);
	CHECK_INT(store_blob_refs(t, hex_chunk), 3);
	store_read_end(t);

	limits(0, 0, 2);
	CHECK_INT(engine_prune(eng, 0, &st), 0);
	CHECK_INT(st.messages, 6);
	CHECK_INT(st.imports, 1);
	CHECK_INT(st.blobs, 3);
	CHECK_INT(st.runs, 0);
	CHECK_INT(count(STORE_DB_MESSAGES, CONV(1) "/"), 3);
	CHECK_INT(count(STORE_DB_MESSAGES, CONV(2) "/"), 0);
	CHECK_INT(count(STORE_DB_MESSAGES, CONV(3) "/"), 3);
	CHECK_INT(count(STORE_DB_MESSAGES, CONV(4) "/"), 0);
	CHECK_INT(count(STORE_DB_MESSAGES, CONV(5) "/"), 3);
	CHECK_INT(has(STORE_DB_BLOBS, hex_ref), 1);
	CHECK_INT(has(STORE_DB_BLOBS, hex_free), 0);
	CHECK_INT(has(STORE_DB_BLOBS, hex_zero), 0);
	CHECK_INT(has(STORE_DB_BLOBREFS, hex_zero), 0);
	CHECK_INT(has(STORE_DB_BLOBS, hex_odd), 1);
	/* the orphan manifest went, and its chunk with its three counts */
	snprintf(key, sizeof(key), "%s.chunks", hex_big);
	CHECK_INT(has(STORE_DB_BLOBS, key), 0);
	CHECK_INT(has(STORE_DB_BLOBS, hex_chunk), 0);
	CHECK_INT(has(STORE_DB_BLOBREFS, hex_chunk), 0);
	/* the expired import's blob went with it (its last reference) */
	CHECK_INT(has(STORE_DB_IMPORTS,
	    "0190f000-0000-7000-8000-000000000001"), 0);
	CHECK_INT(has(STORE_DB_BLOBS, hex_imp), 0);
	CHECK_INT(has(STORE_DB_IMPORTS,
	    "0190f000-0000-7000-8000-000000000002"), 1);
	CHECK_INT(has(STORE_DB_BLOBS, hex_new), 1);
	CHECK_INT(store_read_begin(engine_store(eng), &t), 0);
	CHECK_INT(store_blob_refs(t, hex_ref), 2);
	store_read_end(t);
	CHECK_INT(engine_prune(eng, 0, &st), 0);
	CHECK_INT(st.messages + st.blobs + st.imports, 0);
}

/* ====== One process at a time ====== */

static void
test_lock(void)
{
	struct prune_stats	st;
	char			path[1100], id[37];
	int			fd, i;

	for (i = 0; i < 4; i++)
		run_put(APP_A, ms_now() - 1000 + i, 900 + (unsigned)i,
		    "succeeded", 1, 0, id);
	limits(0, 3, 200);
	snprintf(path, sizeof(path), "%s/prune.lock", conf.data_dir);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	CHECK(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0);
	memset(&st, 0x55, sizeof(st));
	CHECK_INT(engine_prune(eng, 0, &st), 0);
	CHECK_INT(st.busy, 1);
	CHECK_INT(st.runs, 0);
	CHECK_INT(count(STORE_DB_RUNS_BY_APP, APP_A "/"), 4);
	close(fd);
	CHECK_INT(engine_prune(eng, 0, &st), 0);
	CHECK_INT(st.busy, 0);
	CHECK_INT(st.runs, 1);
	CHECK_INT(count(STORE_DB_RUNS_BY_APP, APP_A "/"), 3);
}

/* ====== The background pruner ====== */

static void
test_background(void)
{
	struct pruner	*pr = NULL;
	char		 id[37];
	int		 i;

	conf.run_prune_interval = 0;
	CHECK_INT(engine_pruner_start(eng, &pr), 0);
	CHECK(pr == NULL);
	conf.run_prune_interval = 1;
	limits(0, 3, 200);
	for (i = 0; i < 4; i++)
		run_put(APP_A, ms_now() + i, 950 + (unsigned)i, "succeeded", 1,
		    0, id);
	CHECK_INT(count(STORE_DB_RUNS_BY_APP, APP_A "/"), 7);
	CHECK_INT(engine_pruner_start(eng, &pr), 0);
	CHECK(pr != NULL);
	for (i = 0; i < 100 && count(STORE_DB_RUNS_BY_APP, APP_A "/") > 3; i++)
		usleep(50000);
	CHECK_INT(count(STORE_DB_RUNS_BY_APP, APP_A "/"), 3);
	CHECK_INT(run_state(APP_A, id), 1);
	engine_pruner_stop(pr);
	/* stopped while it waits for its next pass */
	conf.run_prune_interval = 3600;
	CHECK_INT(engine_pruner_start(eng, &pr), 0);
	engine_pruner_stop(pr);
	engine_pruner_stop(NULL);
}

int
main(void)
{
	log_init(CONF_LOG_ERROR, NULL);
	conf_defaults(&conf);
	conf.map_size = 1 << 20;
	if (tmp_engine_open("t_engine_prune", &conf, tmpdir, sizeof(tmpdir),
	    &eng) != 0)
		return tap_done();
	test_count();
	test_age();
	test_many();
	test_orphans();
	test_lock();
	test_background();
	tmp_engine_close(eng, tmpdir);
	return tap_done();
}
