/*
 * storage — flowcgi's records: named databases, transactions, JSON records,
 * content-addressed blobs. Two backends fill it (backend.h): LMDB, one
 * environment in the data directory whose map grows (the default), and
 * PostgreSQL, one database that many hosts share (storage.backend:
 * postgres; docs/scale-out.md). The rules below hold on both.
 *
 * Readers never block writers; a write either commits whole or not at all.
 * Many threads and many processes may use one store at once. MDB_* codes
 * and libpq's states never leave this module: every function returns 0 or
 * a negative STORE_E* code (see store_strerror).
 */
#ifndef FLOWCGI_STORAGE_H
#define FLOWCGI_STORAGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

enum store_err {
	STORE_OK = 0,
	STORE_ENOTFOUND = -100,	/* no such key */
	STORE_EEXIST = -101,	/* key exists and overwrite was refused */
	STORE_EFULL = -102,	/* map reached storage.max_map_size */
	STORE_EIO = -103,	/* the environment failed; see the log */
	STORE_ENOMEM = -104,
	STORE_EVERSION = -105,	/* data written by a newer flowcgi */
	STORE_EINVAL = -106,	/* stored bytes are not the expected JSON */
	STORE_EMAPFULL = -107,	/* internal: the map must grow, then retry */
	STORE_EBUSY = -108,	/* too many readers or a lock problem */
	STORE_ENOSPC = -109,	/* the disk has no room for the map to grow */
	STORE_EUNAVAIL = -110,	/* the database server cannot be reached
				   (postgres: for storage.postgres_wait) */
	STORE_ECONFIG = -111,	/* storage.backend or its URL is wrong */
	STORE_ENEEDED = -112,	/* a key store_need asked for is not there:
				   nothing of the write was stored */
};

/* The named databases; DESIGN.md says what each one keys and holds. */
enum store_db {
	STORE_DB_APPS,
	STORE_DB_ASSETS,
	STORE_DB_BLOBS,
	STORE_DB_BLOBREFS,
	STORE_DB_RUNS,
	STORE_DB_RUNS_BY_APP,
	STORE_DB_NODE_RUNS,
	STORE_DB_CONVERSATIONS,
	STORE_DB_MESSAGES,
	STORE_DB_API_KEYS,
	STORE_DB_SETTINGS,
	STORE_DB_META,
	STORE_DB_IMPORTS,
	STORE_DB_DRAFTS,	/* app id -> draft DSL document */
	STORE_DB_UPLOADS,	/* upload id -> file record (bytes in blobs) */
	STORE_DB_VERSIONS,	/* app id/version id -> published version */
	STORE_DB_LEASES,	/* host id -> lease, host id/run id -> ""
				   (engine/run/live.c) */
	STORE_DB__COUNT
};

/* The database named name ("runs", "node_runs", ...), or -1. */
int	store_db_find(const char *name);

/* The schema version this build writes; store_open migrates older data. */
#define STORE_SCHEMA_VERSION 4

struct store;
struct store_txn;
struct store_cursor;

/*
 * Zero after the last field given means the default: an initializer that
 * names the first five (LMDB's) opens LMDB.
 */
struct store_opts {
	int64_t	map_size;	/* initial map size in bytes (LMDB) */
	int64_t	max_map_size;	/* growth stops here (STORE_EFULL; LMDB) */
	int	sync;		/* fsync each commit (postgres: each commit
				   waits for the server's WAL flush) */
	int	max_readers;	/* concurrent read transactions, all processes
				   (LMDB) */
	int	batch_max;	/* most writes in one commit (0, 1: one;
				   LMDB) */
	const char *backend;	/* "lmdb" (NULL, "") or "postgres" */
	const char *postgres_url; /* libpq conninfo or postgres:// URL */
	int	pool_size;	/* connections per process (postgres; 0: 8) */
	int	wait_ms;	/* how long a transaction waits for the server
				   before STORE_EUNAVAIL (postgres; 0: 10 s) */
};

const char *store_strerror(int rc);

/* The postgres pool for a process that admits max_runs runs at once: a
 * quarter of them (a run holds a connection only inside a transaction),
 * from 4 to 32. */
int	store_pool_size(int max_runs);

/*
 * Opens (creating if needed) the store: LMDB's environment in directory
 * dir, which must exist, or the tables of the PostgreSQL database
 * o->postgres_url (dir unused); then migrates the records to
 * STORE_SCHEMA_VERSION. *out is freed with store_close.
 * STORE_ECONFIG: an unknown backend, or postgres without a URL.
 */
int	store_open(const char *dir, const struct store_opts *o,
	    struct store **out);
void	store_close(struct store *s);

/* The current map size in bytes (grows as data is written); 0 on
 * postgres, which has no map. */
int64_t	store_map_size(struct store *s);

/*
 * A read-only snapshot. Values returned by store_get and cursors stay valid
 * until store_read_end. A thread holds at most one transaction at a time.
 */
int	store_read_begin(struct store *s, struct store_txn **out);
void	store_read_end(struct store_txn *t);

/*
 * One key read on its own, outside any transaction: the value of key in db
 * as one committed write left it (never half of one), copied into *val
 * (malloc'd, the caller frees; *vlen its length). For a read that needs
 * one key only: on PostgreSQL it is a single SELECT, one round trip where
 * a read transaction costs two more (BEGIN, ROLLBACK). 0, STORE_ENOTFOUND,
 * or the errors of store_read_begin and store_get.
 */
int	store_get_copy(struct store *s, enum store_db db, const void *key,
	    size_t klen, void **val, size_t *vlen);

/* store_get_copy of a JSON record: a new reference the caller owns;
 * STORE_EINVAL when the stored bytes are not JSON (logged). */
int	store_get_copy_json(struct store *s, enum store_db db, const char *key,
	    json_t **out);

/*
 * The configuration generation: a number that every committed write that
 * changes a record of apps, drafts, versions or api_keys changes, in the
 * same transaction, on any host. A cache of those records may be used
 * without reading them again while the generation it was filled under is
 * the current one; read the generation before the records it tags (so a
 * change committed in between shows as a newer generation later). One
 * round trip on PostgreSQL (a single row). STORE_ENOTFOUND when the
 * backend keeps none (LMDB, whose reads cost no round trip: compare the
 * records themselves); else 0, or STORE_EUNAVAIL / STORE_EIO.
 */
int	store_generation(struct store *s, uint64_t *gen);

/*
 * Runs fn in a write transaction and returns 0 once its changes are
 * committed (on disk, with sync on); any other return of fn is returned and
 * leaves no trace. With sync on, a commit flushes its pages and the flush of
 * its meta page comes after the lead has passed to the next batch (a flush
 * covers every commit written before it), so that the next batch does not
 * wait for it; the writers are answered after both.
 *
 * Group commit: the writers of this process that arrive together share one
 * transaction and one flush (up to batch_max of them). One of them, the
 * leader, runs every fn of the batch in arrival order, each seeing the
 * changes of those before it, and commits once. So:
 *  - fn runs on another thread than its caller's (the caller waits): it must
 *    not rely on thread-local state (errno, __thread variables) of the
 *    caller, nor take a lock its caller may hold;
 *  - fn must not call store_write or store_read_begin (a thread holds at
 *    most one transaction; both refuse with STORE_EBUSY inside fn);
 *  - fn may run more than once: when the map is full (it grows, then the
 *    batch runs again) and when a batch-mate fails (the batch runs again
 *    without it). fn must therefore change things only through t, and reset
 *    any state it keeps in arg when it starts;
 *  - a fn that swallows a storage error and returns 0 anyway fails alone
 *    (STORE_EIO), as it did before batching.
 *
 * On postgres there is no batch: each store_write is one SERIALIZABLE
 * transaction on its own connection of the pool, with fn on the caller's
 * thread, and fn runs again when the server answers that the transaction
 * cannot be serialized (another host or thread wrote what it read) or when
 * the connection was found lost before anything was sent on it. The
 * statements of a write are pipelined (sent without waiting, COMMIT with
 * them), so a connection lost once they went out may have committed:
 * STORE_EUNAVAIL, it may or may not have happened.
 */
typedef int (*store_write_fn)(struct store_txn *t, void *arg);
int	store_write(struct store *s, store_write_fn fn, void *arg);

/* Counts since store_open, for tests, benchmarks and operators. */
struct store_stats {
	uint64_t	writes;		/* store_write calls answered */
	uint64_t	commits;	/* write transactions committed */
	uint64_t	syncs;		/* commits with sync on (flushed, but
					   LMDB skips one that changed
					   nothing) */
	uint64_t	retries;	/* transactions run again (store_write) */
	uint64_t	batch_largest;	/* most writes in one commit */
	uint64_t	waiting;	/* writers queued behind a batch now */
	uint64_t	flushes;	/* flushes of committed meta pages
					   (sync on: one may cover many
					   commits) */
	uint64_t	durable;	/* transactions up to this id are on
					   disk (sync on) */
	uint64_t	round_trips;	/* waits for the database server's
					   answer (0 on LMDB, which has none) */
};
void	store_stats(struct store *s, struct store_stats *out);

/* The id of a write transaction, as store_stats' durable counts them
 * (postgres: a count of this process's write transactions). */
uint64_t store_txn_id(const struct store_txn *t);

/*
 * Raw access. *val points into the map and is valid until the transaction
 * ends; copy what must outlive it.
 */
int	store_get(struct store_txn *t, enum store_db db, const void *key,
	    size_t klen, const void **val, size_t *vlen);
#define STORE_NOOVERWRITE 1
int	store_put(struct store_txn *t, enum store_db db, const void *key,
	    size_t klen, const void *val, size_t vlen, unsigned flags);
int	store_del(struct store_txn *t, enum store_db db, const void *key,
	    size_t klen);

/*
 * The write commits only if key is in db: a check, not a read, for a
 * write function that has nothing to do with the value and would write
 * nothing without it (a run's record without its app). When the key is
 * not there, nothing of the write is stored and store_write returns
 * STORE_ENEEDED. On LMDB the check is made here, at once (STORE_ENEEDED,
 * which fn returns); on postgres it goes out in the write's pipeline
 * without waiting and fails the transaction at the latest at its commit,
 * so a write of a check and puts stays one round trip: store_need
 * answers 0 then, and fn goes on as if the key were there. Under
 * SERIALIZABLE the check is a read of the key: a write that changes or
 * deletes it meanwhile makes one of the two run again.
 */
int	store_need(struct store_txn *t, enum store_db db, const void *key,
	    size_t klen);

/* JSON records. store_get_json gives a new reference the caller owns. */
int	store_get_json(struct store_txn *t, enum store_db db, const char *key,
	    json_t **out);
int	store_put_json(struct store_txn *t, enum store_db db, const char *key,
	    const json_t *val, unsigned flags);

/*
 * Cursors walk one database in key order. store_cursor_first/last position
 * on the first/last key (or the first key >= key with store_cursor_seek);
 * next/prev move. Each returns 0 with kv filled, STORE_ENOTFOUND at the
 * end. The cursor dies with its transaction or store_cursor_close.
 */
struct store_kv {
	const void	*k;
	size_t		 klen;
	const void	*v;
	size_t		 vlen;
};
int	store_cursor_open(struct store_txn *t, enum store_db db,
	    struct store_cursor **out);
void	store_cursor_close(struct store_cursor *c);
int	store_cursor_first(struct store_cursor *c, struct store_kv *kv);
int	store_cursor_last(struct store_cursor *c, struct store_kv *kv);
int	store_cursor_seek(struct store_cursor *c, const void *key, size_t klen,
	    struct store_kv *kv);
int	store_cursor_next(struct store_cursor *c, struct store_kv *kv);
int	store_cursor_prev(struct store_cursor *c, struct store_kv *kv);

/*
 * The text json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) gives, byte for
 * byte, written without jansson's per-container loop check (json.c): j
 * must not contain itself. Free it; *len (may be NULL) gets its length.
 * NULL when out of memory.
 */
char	*store_json_text(const json_t *j, size_t *len);

/* ====== Slots ====== */

/*
 * n slots of a name (app.max_active_requests: an app id), shared by every
 * process on the store, each held by one holder until given back or until
 * its process dies, so that a crash never leaves one taken. name is
 * letters, digits, '-' and '_'. LMDB: the file <dir>/active/<name>.<i>
 * held with flock; postgres: a session advisory lock of the server on a
 * connection of this process kept for them (when it breaks, the server
 * drops its locks: the slots of runs under way are free to others until
 * those runs end).
 * store_slot_take: 0 with *slot held, 1 when all n are held, or a STORE_E*
 * code (STORE_EUNAVAIL: the server cannot be reached).
 */
int	store_slot_take(struct store *s, const char *name, int n,
	    int64_t *slot);
void	store_slot_give(struct store *s, int64_t slot);

/* ====== Content-addressed blobs ====== */

/*
 * Blobs are stored once per content under the lowercase hex SHA-256 of
 * their bytes (blobs), with a reference count (blobrefs). Every function
 * runs inside the caller's transaction, so a blob and the records that
 * point at it change together. A blob larger than STORE_BLOB_CHUNK is
 * stored as chunks of that size and a manifest naming them (blob.c): no
 * stored value is larger than a chunk, and readers and writers below hold
 * one chunk at a time. On postgres the bytes a transaction reads are kept
 * until it ends: read a large blob over several read transactions
 * (store_blob_read at increasing offsets), not in one.
 */
#define STORE_HASH_HEX 65	/* 64 hex digits and a NUL */
#define STORE_BLOB_CHUNK (256 * 1024)

/* hex = SHA-256 of data[0..len) in lowercase hex. */
void	store_hash(const void *data, size_t len, char hex[STORE_HASH_HEX]);

/*
 * Stores data (if not stored yet) and takes one reference to it; hex
 * receives its hash.
 */
int	store_blob_ref(struct store_txn *t, const void *data, size_t len,
	    char hex[STORE_HASH_HEX]);

/*
 * The same, fed piece by piece: store_blob_write stores each chunk as it
 * fills; store_blob_end takes the reference, gives hex and frees w (also
 * when it fails). store_blob_abort frees w and gives back what it stored,
 * for a transaction that goes on without the blob.
 */
struct store_blob_writer;
int	store_blob_begin(struct store_txn *t, struct store_blob_writer **w);
int	store_blob_write(struct store_blob_writer *w, const void *data,
	    size_t len);
int	store_blob_end(struct store_blob_writer *w, char hex[STORE_HASH_HEX]);
void	store_blob_abort(struct store_blob_writer *w);

/* Takes one more reference to an existing blob (STORE_ENOTFOUND if none). */
int	store_blob_addref(struct store_txn *t, const char *hex);

/* Drops one reference; the blob is deleted with its last reference. */
int	store_blob_unref(struct store_txn *t, const char *hex);

/*
 * Deletes blob hex's bytes (whole, or its manifest and a reference to each
 * chunk) whatever its count says: for prune, which finds blobs that lost
 * their count. 0, or STORE_ENOTFOUND when there was nothing.
 */
int	store_blob_drop(struct store_txn *t, const char *hex);

/* The size of blob hex in bytes. */
int	store_blob_size(struct store_txn *t, const char *hex, uint64_t *size);

/*
 * Copies up to n bytes of blob hex from offset off into buf; *got is how
 * many (0 at or past its end). STORE_EINVAL: a chunk is missing or not
 * the size its manifest says.
 */
int	store_blob_read(struct store_txn *t, const char *hex, uint64_t off,
	    void *buf, size_t n, size_t *got);

/*
 * The whole of blob hex in memory of the caller's (free it), with a NUL
 * after its *len bytes, for callers whose records bound its size.
 */
int	store_blob_load(struct store_txn *t, const char *hex, char **data,
	    size_t *len);

/* The reference count of blob hex (0 when absent). */
int64_t	store_blob_refs(struct store_txn *t, const char *hex);

/* ====== Moving a store to another backend ====== */

/*
 * Copies every record of every named database of from into to (flowcgi
 * migrate), as the bytes they are: blobs and their reference counts too,
 * so every content address stays valid. Each database is walked in key
 * order in pieces of at most 1000 records or 16 MiB (a record bigger than
 * that goes alone), each one read transaction of from and one store_write
 * of to, so memory stays bounded whatever the size of the store. Then each
 * database of both is read again: its record count and a SHA-256 over its
 * keys and values in key order must match. Nothing may write either store
 * meanwhile (stop the servers first).
 *
 * report (NULL: nothing) gets one line per database, with the counts of
 * the source, of the copy and of the destination and whether the digests
 * match, and a closing line. Returns 0 when every count and digest
 * matches, else a STORE_E* code and a sentence in err (errlen bytes):
 *  - STORE_EEXIST: to holds records (other than the schema version that
 *    store_open writes into a new store); nothing was written;
 *  - STORE_ECONFIG: from and to are the same store; nothing was written;
 *  - STORE_EINVAL: a database differs after the copy;
 *  - any other: reading or writing failed.
 * After a failure past the first two, to holds part of the copy: empty it
 * before the next attempt.
 */
int	store_migrate(struct store *from, struct store *to, FILE *report,
	    char *err, size_t errlen);

#endif
