/*
 * t_engine_lease.c — the leases of processes on their running runs
 * (engine/run/live.c): a run stored at its start takes a key under this
 * process's lease and its final write drops it; a look for lost hosts
 * fails the runs still "running" of a lease that ran out (nothing else:
 * not finished runs, not a lease in time, not this process's own), drops
 * the lease with its last run, takes many runs in several transactions,
 * and runs by itself every half lease once the process serves.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/tap.h"
#include "tests/unit/t_node_run.h"

static int64_t
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ====== Records written straight into storage ====== */

struct put {
	enum store_db	 db;
	char		 key[96];
	char		*val;
};

static int
put_fn(struct store_txn *t, void *arg)
{
	struct put *p = arg;

	return store_put(t, p->db, p->key, strlen(p->key), p->val,
	    strlen(p->val), 0);
}

static int
put(enum store_db db, const char *key, const char *fmt, ...)
{
	struct put	p;
	va_list		ap;
	int		rc;

	p.db = db;
	snprintf(p.key, sizeof(p.key), "%s", key);
	va_start(ap, fmt);
	rc = vasprintf(&p.val, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return -1;
	rc = store_write(engine_store(tn_engine), put_fn, &p);
	free(p.val);
	return rc;
}

/* A lease of host expiring at ms (wall clock). */
static int
lease(const char *host, int64_t ms)
{
	return put(STORE_DB_LEASES, host, "{\"expires\":%lld,\"pid\":4242,"
	    "\"host\":\"gone.example\"}", (long long)ms);
}

/* Run id of host's lease in status st, its key under the lease. */
static int
run_of(const char *host, const char *id, const char *st)
{
	char key[96];

	snprintf(key, sizeof(key), "%s/%s", host, id);
	if (put(STORE_DB_LEASES, key, "") != 0)
		return -1;
	return put(STORE_DB_RUNS, id, "{\"id\":\"%s\",\"app_id\":"
	    "\"00000000-0000-7000-8000-00000000a001\",\"status\":\"%s\","
	    "\"created_at\":%lld,\"stop_requested\":false}", id, st,
	    (long long)(wall_ms() / 1000 - 5));
}

/* The stored record of run id (new reference), or NULL. */
static json_t *
run_rec(const char *id)
{
	json_t	*rec = NULL;

	if (engine_run_get(tn_engine, id, &rec) != 0)
		return NULL;
	return rec;
}

static const char *
status_of(const char *id)
{
	static char	 buf[32];
	json_t		*rec = run_rec(id);

	snprintf(buf, sizeof(buf), "%s", rec ? json_string_value(
	    json_object_get(rec, "status")) : "(none)");
	json_decref(rec);
	return buf;
}

/* 1 when key is in the leases database. */
static int
has_key(const char *key)
{
	struct store_txn	*t;
	const void		*v;
	size_t			 vlen;
	int			 rc;

	if (store_read_begin(engine_store(tn_engine), &t) != 0)
		return -1;
	rc = store_get(t, STORE_DB_LEASES, key, strlen(key), &v, &vlen);
	store_read_end(t);
	return rc == 0;
}

/* Keys in the leases database that start with pre. */
static int
keys_under(const char *pre)
{
	struct store_txn	*t;
	struct store_cursor	*c;
	struct store_kv		 kv;
	size_t			 plen = strlen(pre);
	int			 n = 0, rc;

	if (store_read_begin(engine_store(tn_engine), &t) != 0)
		return -1;
	if (store_cursor_open(t, STORE_DB_LEASES, &c) == 0) {
		for (rc = store_cursor_seek(c, pre, plen, &kv); rc == 0 &&
		    kv.klen >= plen && memcmp(kv.k, pre, plen) == 0;
		    rc = store_cursor_next(c, &kv))
			n++;
		store_cursor_close(c);
	}
	store_read_end(t);
	return n;
}

#define LOST	"00000000-0000-7000-8000-0000000000a1"
#define ALIVE	"00000000-0000-7000-8000-0000000000a2"
#define MANY	"00000000-0000-7000-8000-0000000000a3"

/* ====== A real run ====== */

static void
test_run_keys(void)
{
	struct tn_run	 r;
	json_t		*rec;
	char		 pre[40];
	int		 rc;

	/* stored at its start: it takes a key, its end drops it */
	tn_conf.run_publish_after = 0;
	rc = tn_run_wf(json_pack("[{s:s,s:s}]", "type", "template-transform",
	    "template", "hi"), json_pack("{s:[s,s]}", "x", "n1", "output"),
	    NULL, NULL, &r);
	CHECK_INT(rc, 0);
	CHECK_STR(r.status, "succeeded");
	snprintf(pre, sizeof(pre), "%s/", tn_engine->host_id);
	CHECK_INT(keys_under(pre), 0);
	/* the lease itself stays until it runs out */
	CHECK_INT(has_key(tn_engine->host_id), 1);
	rec = run_rec(json_string_value(json_object_get(json_object_get(
	    r.res, "data"), "id")));
	CHECK(rec != NULL);
	CHECK_STR(json_string_value(json_object_get(rec, "status")),
	    "succeeded");
	json_decref(rec);
	tn_release(&r);
	tn_conf.run_publish_after = 200;
}

/* ====== Lost hosts ====== */

static void
test_sweep(void)
{
	json_t	*rec;
	int64_t	 now = wall_ms();
	int	 failed = -1;
	char	 key[96];

	CHECK_INT(lease(LOST, now - 1000), 0);
	CHECK_INT(run_of(LOST, "00000000-0000-7000-8000-0000000000b1",
	    "running"), 0);
	CHECK_INT(run_of(LOST, "00000000-0000-7000-8000-0000000000b2",
	    "succeeded"), 0);
	CHECK_INT(lease(ALIVE, now + 60000), 0);
	CHECK_INT(run_of(ALIVE, "00000000-0000-7000-8000-0000000000b3",
	    "running"), 0);
	/* our own lease, out of time: never ours to fail */
	CHECK_INT(lease(tn_engine->host_id, now - 1000), 0);
	CHECK_INT(run_of(tn_engine->host_id,
	    "00000000-0000-7000-8000-0000000000b4", "running"), 0);

	CHECK_INT(engine_sweep_lost(tn_engine, &failed), 0);
	CHECK_INT(failed, 1);
	rec = run_rec("00000000-0000-7000-8000-0000000000b1");
	CHECK_STR(rec ? json_string_value(json_object_get(rec, "status")) :
	    NULL, "failed");
	CHECK(rec && strstr(json_string_value(json_object_get(rec, "error")),
	    "host lost") != NULL);
	CHECK(rec && strstr(json_string_value(json_object_get(rec, "error")),
	    "gone.example pid 4242") != NULL);
	CHECK(rec && json_integer_value(json_object_get(rec, "finished_at"))
	    >= now / 1000);
	CHECK(rec && json_real_value(json_object_get(rec, "elapsed_time")) >=
	    5.0);
	json_decref(rec);
	CHECK_STR(status_of("00000000-0000-7000-8000-0000000000b2"),
	    "succeeded");
	CHECK_STR(status_of("00000000-0000-7000-8000-0000000000b3"),
	    "running");
	CHECK_STR(status_of("00000000-0000-7000-8000-0000000000b4"),
	    "running");
	/* the lost host's lease and keys are gone; the others stay */
	CHECK_INT(has_key(LOST), 0);
	CHECK_INT(keys_under(LOST "/"), 0);
	CHECK_INT(has_key(ALIVE), 1);
	CHECK_INT(keys_under(ALIVE "/"), 1);
	CHECK_INT(keys_under(tn_engine->host_id), 2);
	/* nothing left to do: a second look fails nothing */
	CHECK_INT(engine_sweep_lost(tn_engine, &failed), 0);
	CHECK_INT(failed, 0);
	snprintf(key, sizeof(key), "%s/00000000-0000-7000-8000-0000000000b4",
	    tn_engine->host_id);
	CHECK_INT(has_key(key), 1);
}

static void
test_many(void)
{
	char	id[48];	/* room for any int, as the compiler counts */
	int	i, failed = -1, ok = 1;

	CHECK_INT(lease(MANY, wall_ms() - 1), 0);
	for (i = 0; i < 250; i++) {
		snprintf(id, sizeof(id), "00000000-0000-7000-8000-0000000%05d",
		    i);
		ok &= run_of(MANY, id, "running") == 0;
	}
	CHECK(ok);
	CHECK_INT(engine_sweep_lost(tn_engine, &failed), 0);
	CHECK_INT(failed, 250);
	CHECK_STR(status_of("00000000-0000-7000-8000-000000000000"),
	    "failed");
	CHECK_STR(status_of("00000000-0000-7000-8000-000000000249"),
	    "failed");
	CHECK_INT(has_key(MANY), 0);
	CHECK_INT(keys_under(MANY "/"), 0);
}

/* Serving, the process looks by itself: within a lease of one running out. */
static void
test_background(void)
{
	int64_t	until;

	CHECK_INT(lease(LOST, wall_ms() + 500), 0);
	CHECK_INT(run_of(LOST, "00000000-0000-7000-8000-0000000000c1",
	    "running"), 0);
	engine_serve(tn_engine);
	until = wall_ms() + 10000;
	while (strcmp(status_of("00000000-0000-7000-8000-0000000000c1"),
	    "running") == 0 && wall_ms() < until)
		usleep(50000);
	CHECK_STR(status_of("00000000-0000-7000-8000-0000000000c1"),
	    "failed");
	CHECK_INT(has_key(LOST), 0);
}

int
main(void)
{
	log_init(CONF_LOG_ERROR, NULL);
	tn_open();
	tn_conf.run_host_lease = 2;
	test_run_keys();
	test_sweep();
	test_many();
	test_background();
	tn_close();
	return tap_done();
}
