/*
 * store_poke.c — reads and writes raw records of a data directory, for
 * tests that need what the API never makes (a message whose conversation
 * record is gone, a blob nothing references):
 *
 *     store_poke DIR put DB KEY VALUE
 *     store_poke DIR del DB KEY
 *     store_poke DIR has DB KEY         exit 0 when there, 1 when not
 *     store_poke DIR count DB [PREFIX]  prints the keys starting with PREFIX
 *     store_poke DIR largest DB [PREFIX]  prints the size of their largest
 *                                       value
 *     store_poke DIR dump [DB]          prints every key and value (of DB,
 *                                       or of every database) as stored
 *     store_poke DIR blob TEXT          stores TEXT as a blob without any
 *                                       reference; prints its hash
 *
 * DB is a database's name as storage/store.c names it (runs, messages,
 * blobs, ...). Opens the storage as flowcgi does, so it may run beside a
 * server. Exits 2 on a usage error, 3 when storage fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "storage/storage.h"

struct op {
	const char	*what;
	int		 db;
	const char	*key;
	const char	*val;
};

static int
write_fn(struct store_txn *t, void *arg)
{
	struct op	*o = arg;
	char		 hex[STORE_HASH_HEX];

	if (strcmp(o->what, "put") == 0)
		return store_put(t, (enum store_db)o->db, o->key,
		    strlen(o->key), o->val, strlen(o->val), 0);
	if (strcmp(o->what, "del") == 0)
		return store_del(t, (enum store_db)o->db, o->key,
		    strlen(o->key));
	/* blob: stored as store_blob_ref would, with no count */
	store_hash(o->key, strlen(o->key), hex);
	return store_put(t, STORE_DB_BLOBS, hex, 64, o->key, strlen(o->key),
	    0);
}

/* Writes every record of db to stdout: key, a tab, value, a newline. */
static int
dump(struct store_txn *t, int db)
{
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	int			 rc;

	if ((rc = store_cursor_open(t, (enum store_db)db, &c)) != 0)
		return rc;
	for (rc = store_cursor_first(c, &kv); rc == 0;
	    rc = store_cursor_next(c, &kv)) {
		fwrite(kv.k, 1, kv.klen, stdout);
		putchar('\t');
		fwrite(kv.v, 1, kv.vlen, stdout);
		putchar('\n');
	}
	store_cursor_close(c);
	return rc == STORE_ENOTFOUND ? 0 : rc;
}

static int
usage(void)
{
	fprintf(stderr, "usage: store_poke DIR put|del|has|count|largest|dump|blob "
	    "...\n");
	return 2;
}

int
main(int argc, char **argv)
{
	struct store_opts	 so = { 1 << 20, (int64_t)1 << 34, 0, 0, 1,
				    NULL, NULL, 1, 0 };
	struct store		*s = NULL;
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	struct op		 o;
	const void		*v;
	size_t			 vlen, plen, largest = 0;
	int			 rc, n = 0;

	if (argc < 3 || (argc < 4 && strcmp(argv[2], "dump") != 0))
		return usage();
	/* The backend of the server it pokes at, as the server reads it. */
	so.backend = getenv("FLOWCGI_STORAGE_BACKEND");
	so.postgres_url = getenv("FLOWCGI_STORAGE_POSTGRES_URL");
	memset(&o, 0, sizeof(o));
	o.what = argv[2];
	o.db = -1;
	if (strcmp(o.what, "blob") == 0)
		o.key = argv[3];
	else if (strcmp(o.what, "dump") == 0) {
		if (argc > 3 && (o.db = store_db_find(argv[3])) < 0)
			return usage();
	} else {
		if ((o.db = store_db_find(argv[3])) < 0)
			return usage();
		o.key = argc > 4 ? argv[4] : "";
		o.val = argc > 5 ? argv[5] : "";
	}
	log_init(CONF_LOG_ERROR, NULL);
	if ((rc = store_open(argv[1], &so, &s)) != 0) {
		fprintf(stderr, "store_poke: %s\n", store_strerror(rc));
		return 3;
	}
	if (strcmp(o.what, "dump") == 0) {
		int db;

		if ((rc = store_read_begin(s, &t)) != 0)
			goto out;
		for (db = o.db < 0 ? 0 : o.db; rc == 0 && db < (o.db < 0 ?
		    STORE_DB__COUNT : o.db + 1); db++)
			rc = dump(t, db);
		store_read_end(t);
	} else if (strcmp(o.what, "has") == 0 ||
	    strcmp(o.what, "count") == 0 || strcmp(o.what, "largest") == 0) {
		if ((rc = store_read_begin(s, &t)) != 0)
			goto out;
		if (strcmp(o.what, "has") == 0) {
			rc = store_get(t, (enum store_db)o.db, o.key,
			    strlen(o.key), &v, &vlen);
			store_read_end(t);
			store_close(s);
			return rc == 0 ? 0 : 1;
		}
		plen = strlen(o.key);
		if ((rc = store_cursor_open(t, (enum store_db)o.db, &c)) == 0) {
			for (rc = plen ? store_cursor_seek(c, o.key, plen,
			    &kv) : store_cursor_first(c, &kv); rc == 0 &&
			    kv.klen >= plen && memcmp(kv.k, o.key, plen) == 0;
			    rc = store_cursor_next(c, &kv)) {
				n++;
				if (kv.vlen > largest)
					largest = kv.vlen;
			}
			store_cursor_close(c);
			rc = rc == STORE_ENOTFOUND ? 0 : rc;
		}
		store_read_end(t);
		if (rc == 0 && strcmp(o.what, "largest") == 0)
			printf("%zu\n", largest);
		else if (rc == 0)
			printf("%d\n", n);
	} else if (strcmp(o.what, "put") == 0 || strcmp(o.what, "del") == 0 ||
	    strcmp(o.what, "blob") == 0) {
		if ((rc = store_write(s, write_fn, &o)) == 0 &&
		    strcmp(o.what, "blob") == 0) {
			char hex[STORE_HASH_HEX];

			store_hash(o.key, strlen(o.key), hex);
			printf("%s\n", hex);
		}
	} else {
		store_close(s);
		return usage();
	}
out:
	store_close(s);
	if (rc != 0) {
		fprintf(stderr, "store_poke: %s\n", store_strerror(rc));
		return 3;
	}
	return 0;
}
