/*
 * migrate.c — copies every record of one store into another, empty one
 * (flowcgi migrate: LMDB to PostgreSQL and back), then checks the copy.
 *
 * Only the public calls of storage.h are used, so any backend copies into
 * any other. Records are copied as the bytes they are: JSON records,
 * blobs under their hashes, the reference counts in blobrefs, so every
 * content address stays valid. Each database is walked in key order in
 * read transactions of a bounded size, each followed by one write
 * transaction into the destination: memory stays bounded (PostgreSQL keeps
 * every result of a transaction until it ends) however big the store is.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "conf/dbuf.h"
#include "storage/backend.h"	/* store_db_names */

/*
 * One read and one write transaction carry at most this many records, or
 * stop at the record whose bytes pass MIGRATE_BYTES (a single record
 * bigger than that goes alone).
 */
#define MIGRATE_KEYS	1000
#define MIGRATE_BYTES	(16 << 20)

/*
 * The record store_open writes into a new store (store.c, schema_migrate):
 * a destination holding only this is empty. Both stores hold the same
 * value, as both were opened by this build.
 */
#define SCHEMA_KEY	"schema_version"

/* ====== Walking a database in bounded pieces ====== */

struct mig_walk {
	struct store	*s;
	enum store_db	 db;
	struct dbuf	 last;		/* the last key given to fn */
	int		 started;	/* last holds a key */
	int		 done;		/* the last record was given */
};

typedef int (*mig_walk_fn)(const struct store_kv *kv, void *arg);

/*
 * Calls fn on the next records of w's database in key order inside one
 * read transaction: at most MIGRATE_KEYS of them, or up to the one whose
 * bytes pass MIGRATE_BYTES. Sets w->done after the last record of the
 * database. Returns 0, fn's non-zero return, or a STORE_E* code.
 */
static int
walk_next(struct mig_walk *w, mig_walk_fn fn, void *arg)
{
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv = { NULL, 0, NULL, 0 };
	size_t			 n = 0, bytes = 0;
	int			 rc;

	if ((rc = store_read_begin(w->s, &t)) != 0)
		return rc;
	if ((rc = store_cursor_open(t, w->db, &c)) != 0)
		goto out;
	if (!w->started)
		rc = store_cursor_first(c, &kv);
	else {
		/* The first key after the last one given (the records are
		 * not expected to change meanwhile: verify would say so). */
		rc = store_cursor_seek(c, w->last.p != NULL ? w->last.p : "",
		    w->last.len, &kv);
		if (rc == 0 && kv.klen == w->last.len && (kv.klen == 0 ||
		    memcmp(kv.k, w->last.p, kv.klen) == 0))
			rc = store_cursor_next(c, &kv);
	}
	for (; rc == 0; rc = store_cursor_next(c, &kv)) {
		if ((rc = fn(&kv, arg)) != 0)
			goto out;
		n++;
		bytes += kv.klen + kv.vlen;
		if (n >= MIGRATE_KEYS || bytes >= MIGRATE_BYTES)
			break;
	}
	if (rc == STORE_ENOTFOUND) {
		w->done = 1;
		rc = 0;
	} else if (rc == 0) {
		dbuf_reset(&w->last);
		if (dbuf_add(&w->last, kv.k, kv.klen) != DBUF_OK)
			rc = STORE_ENOMEM;
		w->started = 1;
	}
out:
	store_cursor_close(c);
	store_read_end(t);
	return rc;
}

/* ====== Copying ====== */

/* A piece of records copied out of the source: per record its struct
 * mig_rec, then the key's and the value's bytes. */
struct mig_rec {
	size_t	klen;
	size_t	vlen;
};

struct mig_copy {
	enum store_db	 db;
	struct dbuf	 buf;
	size_t		 n;
};

static int
copy_take(const struct store_kv *kv, void *arg)
{
	struct mig_copy	*cp = arg;
	struct mig_rec	 r = { kv->klen, kv->vlen };

	dbuf_add(&cp->buf, &r, sizeof(r));
	dbuf_add(&cp->buf, kv->k, kv->klen);
	if (dbuf_add(&cp->buf, kv->v, kv->vlen) != DBUF_OK)
		return STORE_ENOMEM;
	cp->n++;
	return 0;
}

/* The write function: puts the piece; reads arg only, so it may run
 * again. */
static int
copy_put(struct store_txn *t, void *arg)
{
	const struct mig_copy	*cp = arg;
	const char		*p = cp->buf.p, *end = p + cp->buf.len;
	struct mig_rec		 r;
	int			 rc;

	while (p < end) {
		memcpy(&r, p, sizeof(r));
		p += sizeof(r);
		if ((rc = store_put(t, cp->db, p, r.klen, p + r.klen, r.vlen,
		    0)) != 0)
			return rc;
		p += r.klen + r.vlen;
	}
	return 0;
}

/* Copies database db of from into to; *n gets the records copied. */
static int
copy_db(struct store *from, struct store *to, enum store_db db, int64_t *n,
    int64_t *bytes)
{
	struct mig_walk	w;
	struct mig_copy	cp;
	int		rc = 0;

	memset(&w, 0, sizeof(w));
	w.s = from;
	w.db = db;
	memset(&cp, 0, sizeof(cp));
	cp.db = db;
	while (!w.done) {
		dbuf_reset(&cp.buf);
		cp.n = 0;
		if ((rc = walk_next(&w, copy_take, &cp)) != 0)
			break;
		if (cp.n == 0)
			continue;
		if ((rc = store_write(to, copy_put, &cp)) != 0)
			break;
		*n += (int64_t)cp.n;
		*bytes += (int64_t)(cp.buf.len - cp.n * sizeof(struct mig_rec));
	}
	dbuf_free(&w.last);
	dbuf_free(&cp.buf);
	return rc;
}

/* ====== Verifying ====== */

struct mig_sum {
	EVP_MD_CTX	*md;
	int64_t		 n;
	unsigned char	 digest[EVP_MAX_MD_SIZE];
};

/* Each record goes in as its key's length, the key, its value's length and
 * the value (lengths as 8 bytes, big-endian), so no two different sets of
 * records give the same bytes. */
static int
sum_add(const struct store_kv *kv, void *arg)
{
	struct mig_sum	*sm = arg;
	unsigned char	 len[8];
	uint64_t	 l;
	int		 i, ok;

	for (l = kv->klen, i = 7; i >= 0; i--, l >>= 8)
		len[i] = (unsigned char)(l & 0xff);
	ok = EVP_DigestUpdate(sm->md, len, sizeof(len)) &&
	    EVP_DigestUpdate(sm->md, kv->k, kv->klen);
	for (l = kv->vlen, i = 7; i >= 0; i--, l >>= 8)
		len[i] = (unsigned char)(l & 0xff);
	ok = ok && EVP_DigestUpdate(sm->md, len, sizeof(len)) &&
	    EVP_DigestUpdate(sm->md, kv->v, kv->vlen);
	sm->n++;
	return ok ? 0 : STORE_ENOMEM;
}

/* The record count and SHA-256 of database db of s, read afresh. */
static int
sum_db(struct store *s, enum store_db db, struct mig_sum *sm)
{
	struct mig_walk	w;
	unsigned int	mdlen = 0;
	int		rc = 0;

	memset(&w, 0, sizeof(w));
	w.s = s;
	w.db = db;
	sm->n = 0;
	memset(sm->digest, 0, sizeof(sm->digest));
	if ((sm->md = EVP_MD_CTX_new()) == NULL ||
	    !EVP_DigestInit_ex(sm->md, EVP_sha256(), NULL)) {
		rc = STORE_ENOMEM;
		goto out;
	}
	while (!w.done && rc == 0)
		rc = walk_next(&w, sum_add, sm);
	if (rc == 0 && !EVP_DigestFinal_ex(sm->md, sm->digest, &mdlen))
		rc = STORE_ENOMEM;
out:
	EVP_MD_CTX_free(sm->md);
	sm->md = NULL;
	dbuf_free(&w.last);
	return rc;
}

/* ====== The destination must be empty ====== */

/*
 * 0 when to holds no record but store_open's schema version; STORE_EEXIST
 * (and the first database with records in err) otherwise.
 */
static int
check_empty(struct store *to, char *err, size_t errlen)
{
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	int			 db, rc = 0;

	if ((rc = store_read_begin(to, &t)) != 0)
		return rc;
	for (db = 0; db < STORE_DB__COUNT; db++) {
		if ((rc = store_cursor_open(t, (enum store_db)db, &c)) != 0)
			break;
		for (rc = store_cursor_first(c, &kv); rc == 0;
		     rc = store_cursor_next(c, &kv))
			if (db != STORE_DB_META ||
			    kv.klen != sizeof(SCHEMA_KEY) - 1 ||
			    memcmp(kv.k, SCHEMA_KEY, kv.klen) != 0)
				break;
		store_cursor_close(c);
		c = NULL;
		if (rc == 0) {
			snprintf(err, errlen, "the destination is not empty "
			    "(database %s has records); migrate copies into "
			    "an empty store only", store_db_names[db]);
			rc = STORE_EEXIST;
			break;
		}
		if (rc != STORE_ENOTFOUND)
			break;
		rc = 0;
	}
	store_read_end(t);
	return rc;
}

/* ====== Migrate ====== */

int
store_migrate(struct store *from, struct store *to, FILE *report, char *err,
    size_t errlen)
{
	struct mig_sum	 a, b;
	struct timespec	 t0, t1;
	int64_t		 copied, bytes = 0, total = 0;
	int		 db, rc, bad = 0;
	const char	*what;

	err[0] = '\0';
	if (from == to) {
		snprintf(err, errlen, "the source and the destination are the "
		    "same store");
		return STORE_ECONFIG;
	}
	if ((rc = check_empty(to, err, errlen)) != 0) {
		if (err[0] == '\0')
			snprintf(err, errlen, "destination: %s",
			    store_strerror(rc));
		return rc;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (report != NULL)
		fprintf(report, "%-16s %12s %12s %12s  %s\n", "database",
		    "source", "copied", "destination", "digest");
	for (db = 0; db < STORE_DB__COUNT; db++) {
		copied = 0;
		if ((rc = copy_db(from, to, (enum store_db)db, &copied,
		    &bytes)) != 0) {
			snprintf(err, errlen, "copying %s after %" PRId64
			    " records: %s", store_db_names[db], copied,
			    store_strerror(rc));
			goto out;
		}
		/* Read both afresh: what the destination holds now against
		 * what the source holds now. */
		if ((rc = sum_db(from, (enum store_db)db, &a)) != 0 ||
		    (rc = sum_db(to, (enum store_db)db, &b)) != 0) {
			snprintf(err, errlen, "verifying %s: %s",
			    store_db_names[db], store_strerror(rc));
			goto out;
		}
		if (a.n != b.n || a.n != copied)
			what = "COUNT DIFFERS";
		else if (memcmp(a.digest, b.digest, sizeof(a.digest)) != 0)
			what = "DIGEST DIFFERS";
		else
			what = "ok";
		bad += strcmp(what, "ok") != 0;
		total += a.n;
		if (report != NULL) {
			fprintf(report, "%-16s %12" PRId64 " %12" PRId64 " %12"
			    PRId64 "  %s\n", store_db_names[db], a.n, copied,
			    b.n, what);
			fflush(report);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (bad > 0) {
		snprintf(err, errlen, "%d of %d databases differ after the "
		    "copy (was the source written meanwhile?); the destination "
		    "holds a partial copy: empty it before the next attempt",
		    bad, STORE_DB__COUNT);
		rc = STORE_EINVAL;
	} else if (report != NULL)
		fprintf(report, "migrated %" PRId64 " records (%" PRId64
		    " bytes) in %d databases in %.1f s: every count and "
		    "digest matches\n", total, bytes, STORE_DB__COUNT,
		    (double)(t1.tv_sec - t0.tv_sec) +
		    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
out:
	return rc;
}
