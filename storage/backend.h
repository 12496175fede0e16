/*
 * backend.h — what a storage backend fills (private to storage/).
 *
 * storage/store.c is the public API of storage.h: it keeps what every
 * backend shares (names of the databases, error texts, JSON records, the
 * schema migrations of the records) and calls the backend of each store
 * through the table below. A backend is one file (lmdb.c, pg.c) whose
 * store, transaction and cursor structs begin with the public struct
 * below, so a pointer to either is a pointer to the other.
 */
#ifndef FLOWCGI_STORAGE_BACKEND_H
#define FLOWCGI_STORAGE_BACKEND_H

#include "storage/storage.h"

struct store_backend;

struct store {
	const struct store_backend	*be;
};

struct store_txn {
	const struct store_backend	*be;
};

struct store_cursor {
	const struct store_backend	*be;
};

/*
 * The contracts are those of the store_* function of the same name in
 * storage.h. open makes the store and its named databases; store_open then
 * runs the record migrations through write.
 */
struct store_backend {
	const char	*name;
	int		(*open)(const char *dir, const struct store_opts *o,
			    struct store **out);
	void		(*close)(struct store *s);
	int64_t		(*map_size)(struct store *s);
	void		(*stats)(struct store *s, struct store_stats *out);
	int		(*read_begin)(struct store *s, struct store_txn **out);
	void		(*read_end)(struct store_txn *t);
	int		(*write)(struct store *s, store_write_fn fn, void *arg);
	uint64_t	(*txn_id)(const struct store_txn *t);
	int		(*get)(struct store_txn *t, enum store_db db,
			    const void *key, size_t klen, const void **val,
			    size_t *vlen);
	int		(*put)(struct store_txn *t, enum store_db db,
			    const void *key, size_t klen, const void *val,
			    size_t vlen, unsigned flags);
	int		(*del)(struct store_txn *t, enum store_db db,
			    const void *key, size_t klen);
	int		(*cursor_open)(struct store_txn *t, enum store_db db,
			    struct store_cursor **out);
	void		(*cursor_close)(struct store_cursor *c);
	/* op: one of the moves below; key/klen for CURSOR_SEEK only */
	int		(*cursor_move)(struct store_cursor *c, int op,
			    const void *key, size_t klen, struct store_kv *kv);
	int		(*slot_take)(struct store *s, const char *name, int n,
			    int64_t *slot);
	void		(*slot_give)(struct store *s, int64_t slot);
	/* NULL: store.c reads in a transaction of its own */
	int		(*get_copy)(struct store *s, enum store_db db,
			    const void *key, size_t klen, void **val,
			    size_t *vlen);
	/* NULL: store.c checks with get at once */
	int		(*need)(struct store_txn *t, enum store_db db,
			    const void *key, size_t klen);
	/* NULL: the backend keeps no generation (STORE_ENOTFOUND) */
	int		(*generation)(struct store *s, uint64_t *gen);
};

enum store_cursor_op {
	STORE_CURSOR_FIRST,
	STORE_CURSOR_LAST,
	STORE_CURSOR_SEEK,
	STORE_CURSOR_NEXT,
	STORE_CURSOR_PREV,
};

/* The names of the named databases, indexed by enum store_db. */
extern const char *const store_db_names[STORE_DB__COUNT];

extern const struct store_backend store_backend_lmdb;
extern const struct store_backend store_backend_pg;

#endif
