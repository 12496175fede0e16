/*
 * engine.c — opening the data directory, identifiers, time, errors.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "engine/internal.h"
#include "engine/records/records.h"
#include "engine/sandbox/sandbox.h"

const char *
engine_strerror(int rc)
{
	switch (rc) {
	case ENGINE_OK: return "success";
	case ENGINE_EINVAL: return "invalid input";
	case ENGINE_ENOTFOUND: return "not found";
	case ENGINE_ECONFLICT: return "the record changed since it was read";
	case ENGINE_ESTORE: return "storage error";
	case ENGINE_ENOMEM: return "out of memory";
	case ENGINE_EFULL:
		return "storage is full (storage.max_map_size, or the disk)";
	case ENGINE_EEXIST: return "already exists";
	case ENGINE_ELIMIT: return "a configured limit was reached";
	case ENGINE_EFETCH: return "outbound request failed";
	case ENGINE_ESANDBOX: return "sandbox error";
	case ENGINE_ESTOPPED: return "stopped";
	case ENGINE_EUNAVAIL:
		return "storage unavailable: the database server cannot be "
		    "reached; try again shortly";
	default: return "unknown engine error";
	}
}

int
engine_from_store(int rc)
{
	switch (rc) {
	case STORE_OK: return ENGINE_OK;
	case STORE_ENOTFOUND: return ENGINE_ENOTFOUND;
	case STORE_ENOMEM: return ENGINE_ENOMEM;
	case STORE_EFULL: return ENGINE_EFULL;
	case STORE_ENOSPC: return ENGINE_EFULL;
	case STORE_EUNAVAIL: return ENGINE_EUNAVAIL;
	default:
		/* Codes of the engine's own range pass through unchanged. */
		if (rc <= ENGINE_EINVAL && rc > ENGINE_EINVAL - 100)
			return rc;
		return ENGINE_ESTORE;
	}
}

static size_t	utf8_check(const unsigned char *s, size_t n, size_t *bad);

/* Replaces each byte of s that is not part of well-formed UTF-8 by '?'. */
static void
utf8_fix(char *s)
{
	unsigned char	*u = (unsigned char *)s;
	size_t		 n = strlen(s), i = 0, k, bad;

	while (i < n) {
		if ((k = utf8_check(u + i, n - i, &bad)) != 0) {
			i += k;
			continue;
		}
		for (k = 0; k < bad && i < n; k++)
			u[i++] = '?';
	}
}

int
engine_invalid(char *err, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL) {
		va_start(ap, fmt);
		vsnprintf(err, ENGINE_ERRMAX, fmt, ap);
		va_end(ap);
		/* It may quote input (a zip entry's name) or be cut inside a
		 * character; answers are JSON, so it must be UTF-8. */
		utf8_fix(err);
	}
	return ENGINE_EINVAL;
}

size_t
engine_utf8_len(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			n++;
	return n;
}

/* ====== Identifiers and time ====== */

int64_t
engine_now(void)
{
	return (int64_t)time(NULL);
}

/*
 * 16 random bytes for an id. RAND_bytes costs a lock and a getpid per
 * call; each thread draws 32 ids' worth at once. The buffer is dropped
 * in a forked child (its ids must differ from the parent's).
 */
static unsigned int	uuid_forks;	/* forks of this process so far */
static pthread_once_t	uuid_once = PTHREAD_ONCE_INIT;

static void
uuid_forked(void)
{
	uuid_forks++;
}

static void
uuid_atfork(void)
{
	pthread_atfork(NULL, NULL, uuid_forked);
}

static int
uuid_random(unsigned char b[16])
{
	static _Thread_local unsigned char	buf[512];
	static _Thread_local size_t		left;
	static _Thread_local unsigned int	gen;

	pthread_once(&uuid_once, uuid_atfork);
	if (left < 16 || gen != uuid_forks) {
		if (RAND_bytes(buf, sizeof(buf)) != 1)
			return -1;
		left = sizeof(buf);
		gen = uuid_forks;
	}
	memcpy(b, buf + sizeof(buf) - left, 16);
	OPENSSL_cleanse(buf + sizeof(buf) - left, 16);
	left -= 16;
	return 0;
}

void
engine_uuid(char buf[37])
{
	static const char	 hex[] = "0123456789abcdef";
	static pthread_mutex_t	 mu = PTHREAD_MUTEX_INITIALIZER;
	static uint64_t		 last_ms;
	static uint16_t		 seq;
	unsigned char		 b[16];
	struct timespec		 ts;
	uint64_t		 ms;
	uint16_t		 s;
	int			 i, o;

	clock_gettime(CLOCK_REALTIME, &ts);
	ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	if (uuid_random(b) != 0) {
		/* Never expected; keep uniqueness with the clock alone. */
		memset(b, 0, sizeof(b));
		memcpy(b + 8, &ts.tv_nsec, sizeof(ts.tv_nsec));
	}
	/*
	 * Ids made in the same millisecond by this process keep their order:
	 * the 12 bits after the version hold a counter (RFC 9562 method 1).
	 */
	pthread_mutex_lock(&mu);
	if (ms <= last_ms) {
		ms = last_ms;
		seq++;
		if (seq > 0x0fff) {	/* counter overflow: borrow a ms */
			ms = ++last_ms;
			seq = 0;
		}
	} else {
		last_ms = ms;
		seq = (uint16_t)(b[6] & 0x03);	/* small random start */
	}
	s = seq;
	pthread_mutex_unlock(&mu);
	b[0] = (unsigned char)(ms >> 40);
	b[1] = (unsigned char)(ms >> 32);
	b[2] = (unsigned char)(ms >> 24);
	b[3] = (unsigned char)(ms >> 16);
	b[4] = (unsigned char)(ms >> 8);
	b[5] = (unsigned char)ms;
	b[6] = (unsigned char)(0x70 | ((s >> 8) & 0x0f));
	b[7] = (unsigned char)s;
	b[8] = (unsigned char)(0x80 | (b[8] & 0x3f));
	for (i = 0, o = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			buf[o++] = '-';
		buf[o++] = hex[b[i] >> 4];
		buf[o++] = hex[b[i] & 0x0f];
	}
	buf[o] = '\0';
}

int
engine_uuid_check(const char *s)
{
	size_t i;

	for (i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return -1;
		} else if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return -1;
	}
	return s[36] == '\0' ? 0 : -1;
}

/* ====== Text ====== */

/*
 * Checks the sequence at s (n bytes) against the Unicode table of
 * well-formed UTF-8 (Unicode 15, table 3-7). Returns its length when it is
 * whole and valid; else 0, with *bad set to the bytes that make up its
 * maximal valid prefix (at least 1), which become one U+FFFD.
 */
static size_t
utf8_check(const unsigned char *s, size_t n, size_t *bad)
{
	unsigned char	lo = 0x80, hi = 0xBF;
	size_t		k, i;

	*bad = 1;
	if (n == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		k = 2;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		k = 3;
		if (s[0] == 0xE0)
			lo = 0xA0;
		else if (s[0] == 0xED)
			hi = 0x9F;
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		k = 4;
		if (s[0] == 0xF0)
			lo = 0x90;
		else if (s[0] == 0xF4)
			hi = 0x8F;
	} else
		return 0;
	for (i = 1; i < k; i++) {
		if (i >= n || s[i] < lo || s[i] > hi) {
			*bad = i;
			return 0;
		}
		lo = 0x80, hi = 0xBF;
	}
	return k;
}

size_t
engine_utf8_seq(const unsigned char *s, size_t n)
{
	size_t bad;

	return utf8_check(s, n, &bad);
}

char *
engine_utf8_clean(const char *s, size_t len, int nul_too, size_t *outlen)
{
	const unsigned char	*u = (const unsigned char *)s;
	char			*out, *o;
	size_t			 i = 0, k, bad;

	/* At worst every byte becomes the 3-byte U+FFFD. */
	if (len > (SIZE_MAX - 1) / 3 || (out = malloc(len * 3 + 1)) == NULL)
		return NULL;
	o = out;
	while (i < len) {
		k = utf8_check(u + i, len - i, &bad);
		if (k == 0 || (nul_too && u[i] == 0)) {
			memcpy(o, "\xEF\xBF\xBD", 3);
			o += 3;
			i += k == 0 ? bad : 1;
			continue;
		}
		memcpy(o, u + i, k);
		o += k;
		i += k;
	}
	*o = '\0';
	if (outlen != NULL)
		*outlen = (size_t)(o - out);
	return out;
}

/* ====== Open and close ====== */

int
engine_open(const struct conf *c, char *err, struct engine **out)
{
	struct engine		*e = NULL;
	struct store_opts	 o;
	struct sandbox_config	 sc;
	int			 rc;

	if (mkdir(c->data_dir, 0700) != 0 && errno != EEXIST) {
		snprintf(err, ENGINE_ERRMAX, "data directory '%.200s': %s",
		    c->data_dir, strerror(errno));
		return ENGINE_ESTORE;
	}
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return ENGINE_ENOMEM;
	/* Reference-counted by libcurl; done before any worker thread. A
	 * failure leaves no count to drop. */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(err, ENGINE_ERRMAX, "libcurl could not start (its "
		    "TLS library or out of memory)");
		free(e);
		return ENGINE_ENOMEM;
	}
	e->conf = c;
	engine_uuid(e->host_id);
	live_init(e);
	memset(&o, 0, sizeof(o));
	o.map_size = c->map_size;
	o.max_map_size = c->max_map_size;
	o.sync = c->sync;
	o.max_readers = 0;
	/* Batches share flushes; with sync off there are none to share,
	 * and writers taking the write lock each beat a hand-off to a
	 * leader (tests/bench/fsync.sh). */
	o.batch_max = c->batch_max > 0 ? c->batch_max : c->sync ? 64 : 1;
	o.backend = c->storage_backend;
	o.postgres_url = c->postgres_url;
	o.pool_size = c->postgres_pool > 0 ? c->postgres_pool :
	    store_pool_size(c->max_runs > 0 ? c->max_runs :
	    c->max_connections / 4 * 3);
	o.wait_ms = c->postgres_wait * 1000;
	if ((rc = store_open(c->data_dir, &o, &e->store)) != 0) {
		snprintf(err, ENGINE_ERRMAX, "storage in '%.200s': %s",
		    c->data_dir, store_strerror(rc));
		curl_global_cleanup();
		live_fini(e);
		free(e);
		return engine_from_store(rc);
	}
	/* A host with another key than the one the secrets here were sealed
	 * with would seal secrets nobody else can open: refuse now. */
	if ((rc = secret_key_verify(e, err)) != 0) {
		store_close(e->store);
		curl_global_cleanup();
		live_fini(e);
		free(e);
		return rc;
	}
	/* Costs nothing until a code node runs. */
	sandbox_config_init(&sc, c);
	if ((rc = sandbox_code_pool_new(&sc, c->code_pool_size,
	    c->code_pool_idle, &e->code_pool)) == 0)
		sandbox_code_pool_tune(e->code_pool, c->code_fork_server,
		    c->code_pool_max, c->code_pool_spare_idle);
	if (rc != 0 ||
	    (rc = app_cache_init(e)) != 0 || (rc = trace_start(e)) != 0) {
		snprintf(err, ENGINE_ERRMAX, "out of memory");
		engine_close(e);
		return rc;
	}
	if ((rc = tool_manifests_open(e, err)) != 0) {
		if (rc == ENGINE_ENOMEM)
			snprintf(err, ENGINE_ERRMAX, "out of memory");
		engine_close(e);
		return rc;
	}
	*out = e;
	return 0;
}

void
engine_close(struct engine *e)
{
	if (e == NULL)
		return;
	trace_stop(e);
	tool_manifests_close(e);
	sandbox_code_pool_free(e->code_pool);
	live_fini(e);
	app_cache_fini(e);
	store_close(e->store);
	curl_global_cleanup();
	free(e);
}

struct store *
engine_store(struct engine *e)
{
	return e->store;
}

int
engine_app_slot_take(struct engine *e, const char *app_id, int n,
    int64_t *slot)
{
	int rc = store_slot_take(e->store, app_id, n, slot);

	return rc == 1 ? 1 : engine_from_store(rc);
}

void
engine_app_slot_give(struct engine *e, int64_t slot)
{
	store_slot_give(e->store, slot);
}

int
engine_health(struct engine *e)
{
	struct store_txn	*t = NULL;
	int			 rc;

	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	store_read_end(t);
	return 0;
}

void
engine_sandbox_stop(struct engine *e)
{
	sandbox_code_pool_stop(e->code_pool);
}

int
engine_sandbox_probe(struct engine *e, char *err)
{
	sandbox_sweep_active(e);
	return sandbox_probe("local", e->conf, err);
}
