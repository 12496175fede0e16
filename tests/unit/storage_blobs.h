/*
 * storage_blobs.h — blobs in chunks, for t_storage_store.c (LMDB) and
 * t_storage_pg.c (PostgreSQL), which include it through the first: a blob
 * of a chunk or less is one value; a larger one is chunks and a manifest,
 * no value larger than a chunk; reads at any offset across chunk edges; the
 * writer fed in odd pieces gives the same hash and shares the stored blob;
 * shared chunks count their holders; abort and unref leave nothing; a
 * blob stored whole by an older flowcgi still reads; a missing chunk is
 * STORE_EINVAL, not wrong bytes.
 *
 * Needs open_store, new_dir, MIB and the tap macros of its includer.
 */

/* Bytes that differ from chunk to chunk: seed picks the sequence. */
static void
blob_fill(unsigned char *p, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (unsigned char)(seed >> 16);
	}
}

/* Keys in db, and the largest value, in one read. */
static long
blob_keys(struct store *s, enum store_db db, size_t *largest)
{
	struct store_txn	*t = NULL;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	long			 n = 0;
	int			 rc;

	*largest = 0;
	if (store_read_begin(s, &t) != 0)
		return -1;
	if (store_cursor_open(t, db, &c) != 0) {
		store_read_end(t);
		return -1;
	}
	for (rc = store_cursor_first(c, &kv); rc == 0;
	    rc = store_cursor_next(c, &kv)) {
		n++;
		if (kv.vlen > *largest)
			*largest = kv.vlen;
	}
	store_cursor_close(c);
	store_read_end(t);
	return rc == STORE_ENOTFOUND ? n : -1;
}

enum blob_op { BLOB_REF, BLOB_STREAM, BLOB_UNREF, BLOB_ABORT, BLOB_RAW };

struct blob_arg {
	enum blob_op		 op;
	const unsigned char	*data;
	size_t			 len;
	size_t			 piece;	/* BLOB_STREAM, BLOB_ABORT */
	char			 hex[STORE_HASH_HEX];
};

static int
blob_fn(struct store_txn *t, void *arg)
{
	struct blob_arg			*a = arg;
	struct store_blob_writer	*w = NULL;
	size_t				 off, n;
	int				 rc;

	switch (a->op) {
	case BLOB_REF:
		return store_blob_ref(t, a->data, a->len, a->hex);
	case BLOB_UNREF:
		return store_blob_unref(t, a->hex);
	case BLOB_RAW:
		/* what flowcgi stored before chunks: one value, any size */
		store_hash(a->data, a->len, a->hex);
		if ((rc = store_put(t, STORE_DB_BLOBS, a->hex, 64, a->data,
		    a->len, 0)) != 0)
			return rc;
		return store_put(t, STORE_DB_BLOBREFS, a->hex, 64, "1", 1, 0);
	case BLOB_STREAM:
	case BLOB_ABORT:
		if ((rc = store_blob_begin(t, &w)) != 0)
			return rc;
		for (off = 0; off < a->len; off += n) {
			n = a->len - off < a->piece ? a->len - off : a->piece;
			if ((rc = store_blob_write(w, a->data + off, n)) != 0) {
				store_blob_abort(w);
				return rc;
			}
		}
		if (a->op == BLOB_ABORT) {
			store_blob_abort(w);
			return 0;
		}
		return store_blob_end(w, a->hex);
	}
	return STORE_EINVAL;
}

static int
blob_do(struct store *s, enum blob_op op, const void *data, size_t len,
    size_t piece, char hex[STORE_HASH_HEX])
{
	struct blob_arg	a;
	int		rc;

	memset(&a, 0, sizeof(a));
	a.op = op;
	a.data = data;
	a.len = len;
	a.piece = piece;
	if (hex != NULL && op == BLOB_UNREF)
		memcpy(a.hex, hex, STORE_HASH_HEX);
	rc = store_write(s, blob_fn, &a);
	if (hex != NULL && op != BLOB_UNREF)
		memcpy(hex, a.hex, STORE_HASH_HEX);
	return rc;
}

/* 1 when blob hex reads back as data[0..len) at every offset probed. */
static int
blob_reads_as(struct store *s, const char *hex, const unsigned char *data,
    size_t len)
{
	static const size_t	 offs[] = { 0, 1, STORE_BLOB_CHUNK - 3,
				    STORE_BLOB_CHUNK, 2 * STORE_BLOB_CHUNK + 5 };
	struct store_txn	*t = NULL;
	unsigned char		 buf[8192];
	char			*all = NULL;
	uint64_t		 size = 0;
	size_t			 i, got, alen = 0, want;
	int			 ok = 1;

	if (store_read_begin(s, &t) != 0)
		return 0;
	if (store_blob_size(t, hex, &size) != 0 || size != len)
		ok = 0;
	for (i = 0; ok && i < sizeof(offs) / sizeof(offs[0]); i++) {
		if (store_blob_read(t, hex, offs[i], buf, sizeof(buf),
		    &got) != 0) {
			ok = 0;
			break;
		}
		want = offs[i] >= len ? 0 : len - offs[i] < sizeof(buf) ?
		    len - offs[i] : sizeof(buf);
		if (got != want || (got > 0 && memcmp(buf, data + offs[i],
		    got) != 0))
			ok = 0;
	}
	if (ok && (store_blob_load(t, hex, &all, &alen) != 0 ||
	    alen != len || memcmp(all, data, len) != 0 || all[len] != '\0'))
		ok = 0;
	free(all);
	store_read_end(t);
	return ok;
}

static int64_t
blob_refs(struct store *s, const char *hex)
{
	struct store_txn	*t = NULL;
	int64_t			 n;

	if (store_read_begin(s, &t) != 0)
		return -1;
	n = store_blob_refs(t, hex);
	store_read_end(t);
	return n;
}

static void
test_blobs(void)
{
	struct store		*s = NULL;
	struct store_txn	*t = NULL;
	unsigned char		*big, *other;
	char			 small_hex[STORE_HASH_HEX], hex[STORE_HASH_HEX];
	char			 hex2[STORE_HASH_HEX], hex3[STORE_HASH_HEX];
	char			 first[STORE_HASH_HEX], key[80], buf[16];
	size_t			 largest = 0, got = 0;
	uint64_t		 size = 0;
	const size_t		 len = 3 * STORE_BLOB_CHUNK + 1000;

	CHECK_INT(open_store(new_dir("blobs"), MIB, 256 * MIB, &s), 0);
	if (s == NULL)
		return;
	big = malloc(len);
	other = malloc(len);
	if (big == NULL || other == NULL) {
		CHECK(!"memory for the blobs");
		goto out;
	}
	blob_fill(big, len, 1);
	memcpy(other, big, len);
	other[len - 1] ^= 0xff;	/* the same first three chunks */

	/* Up to a chunk: one value, as always. */
	CHECK_INT(blob_do(s, BLOB_REF, big, STORE_BLOB_CHUNK, 0, small_hex), 0);
	CHECK_INT(blob_keys(s, STORE_DB_BLOBS, &largest), 1);
	CHECK(largest == STORE_BLOB_CHUNK);
	CHECK(blob_reads_as(s, small_hex, big, STORE_BLOB_CHUNK));
	CHECK_INT(blob_do(s, BLOB_UNREF, NULL, 0, 0, small_hex), 0);
	CHECK_INT(blob_keys(s, STORE_DB_BLOBS, &largest), 0);
	CHECK_INT(blob_keys(s, STORE_DB_BLOBREFS, &largest), 0);

	/* Larger: four chunks and a manifest, none above a chunk. */
	CHECK_INT(blob_do(s, BLOB_REF, big, len, 0, hex), 0);
	store_hash(big, len, hex2);
	CHECK_STR(hex, hex2);
	CHECK_INT(blob_keys(s, STORE_DB_BLOBS, &largest), 5);
	CHECK(largest <= STORE_BLOB_CHUNK);
	CHECK(blob_reads_as(s, hex, big, len));
	CHECK_INT(blob_refs(s, hex), 1);
	store_hash(big, STORE_BLOB_CHUNK, first);
	CHECK_INT(blob_refs(s, first), 1);

	/* The writer, fed 7 bytes, then 100,000, at a time: the same blob,
	 * its chunks still held once. */
	CHECK_INT(blob_do(s, BLOB_STREAM, big, len, 7, hex2), 0);
	CHECK_STR(hex2, hex);
	CHECK_INT(blob_do(s, BLOB_STREAM, big, len, 100000, hex2), 0);
	CHECK_STR(hex2, hex);
	CHECK_INT(blob_refs(s, hex), 3);
	CHECK_INT(blob_refs(s, first), 1);
	CHECK_INT(blob_keys(s, STORE_DB_BLOBS, &largest), 5);

	/* Another blob with the same first chunks shares them. */
	CHECK_INT(blob_do(s, BLOB_STREAM, other, len, 65536, hex3), 0);
	CHECK(strcmp(hex3, hex) != 0);
	CHECK_INT(blob_refs(s, first), 2);
	CHECK_INT(blob_keys(s, STORE_DB_BLOBS, &largest), 7);
	CHECK(blob_reads_as(s, hex3, other, len));

	/* Gone with its last reference; the other keeps the shared. */
	CHECK_INT(blob_do(s, BLOB_UNREF, NULL, 0, 0, hex), 0);
	CHECK_INT(blob_do(s, BLOB_UNREF, NULL, 0, 0, hex), 0);
	CHECK(blob_reads_as(s, hex, big, len));
	CHECK_INT(blob_do(s, BLOB_UNREF, NULL, 0, 0, hex), 0);
	CHECK_INT(blob_refs(s, hex), 0);
	CHECK_INT(blob_refs(s, first), 1);
	CHECK_INT(blob_keys(s, STORE_DB_BLOBS, &largest), 5);
	CHECK(blob_reads_as(s, hex3, other, len));
	CHECK_INT(blob_do(s, BLOB_UNREF, NULL, 0, 0, hex), STORE_ENOTFOUND);

	/* An aborted writer gives back what it stored. */
	CHECK_INT(blob_do(s, BLOB_ABORT, big, len, 50000, NULL), 0);
	CHECK_INT(blob_keys(s, STORE_DB_BLOBS, &largest), 5);
	CHECK_INT(blob_refs(s, first), 1);
	CHECK_INT(blob_do(s, BLOB_UNREF, NULL, 0, 0, hex3), 0);
	CHECK_INT(blob_keys(s, STORE_DB_BLOBS, &largest), 0);
	CHECK_INT(blob_keys(s, STORE_DB_BLOBREFS, &largest), 0);

	/* Exactly two chunks, and nothing: edges of the chunking. */
	CHECK_INT(blob_do(s, BLOB_STREAM, big, 2 * STORE_BLOB_CHUNK,
	    STORE_BLOB_CHUNK, hex), 0);
	CHECK_INT(blob_keys(s, STORE_DB_BLOBS, &largest), 3);
	CHECK(blob_reads_as(s, hex, big, 2 * STORE_BLOB_CHUNK));
	CHECK_INT(blob_do(s, BLOB_UNREF, NULL, 0, 0, hex), 0);
	CHECK_INT(blob_do(s, BLOB_STREAM, big, 0, 1, hex), 0);
	store_hash("", 0, hex2);
	CHECK_STR(hex, hex2);
	CHECK(blob_reads_as(s, hex, big, 0));
	CHECK_INT(blob_do(s, BLOB_UNREF, NULL, 0, 0, hex), 0);

	/* Stored whole by an older flowcgi: read, counted, deleted alike. */
	CHECK_INT(blob_do(s, BLOB_RAW, big, len, 0, hex), 0);
	CHECK(blob_reads_as(s, hex, big, len));
	CHECK_INT(blob_do(s, BLOB_REF, big, len, 0, hex2), 0);
	CHECK_STR(hex2, hex);
	CHECK_INT(blob_refs(s, hex), 2);
	CHECK_INT(blob_keys(s, STORE_DB_BLOBS, &largest), 1);
	CHECK_INT(blob_do(s, BLOB_UNREF, NULL, 0, 0, hex), 0);
	CHECK_INT(blob_do(s, BLOB_UNREF, NULL, 0, 0, hex), 0);
	CHECK_INT(blob_keys(s, STORE_DB_BLOBS, &largest), 0);

	/* A chunk lost from under its manifest: an error, never bytes. */
	CHECK_INT(blob_do(s, BLOB_REF, big, len, 0, hex), 0);
	CHECK_INT(put1(s, STORE_DB_BLOBREFS, first, "1", 0), 0);
	{
		struct kv_arg del = { STORE_DB_BLOBS, first, "", 0 };

		CHECK_INT(store_write(s, del_fn, &del), 0);
	}
	CHECK_INT(store_read_begin(s, &t), 0);
	if (t != NULL) {
		CHECK_INT(store_blob_read(t, hex, 10, buf, sizeof(buf), &got),
		    STORE_EINVAL);
		CHECK_INT(store_blob_read(t, hex, STORE_BLOB_CHUNK, buf,
		    sizeof(buf), &got), 0);
		CHECK(got == sizeof(buf) && memcmp(buf, big +
		    STORE_BLOB_CHUNK, sizeof(buf)) == 0);
		CHECK_INT(store_blob_size(t, "nothex", &size),
		    STORE_ENOTFOUND);
		store_read_end(t);
	}
	/* a manifest that is not one reads as STORE_EINVAL */
	snprintf(key, sizeof(key), "%s.chunks", hex);
	CHECK_INT(put1(s, STORE_DB_BLOBS, key, "flowcgi-chunks 1 5 x\n", 0),
	    0);
	CHECK_INT(store_read_begin(s, &t), 0);
	if (t != NULL) {
		CHECK_INT(store_blob_read(t, hex, 0, buf, sizeof(buf), &got),
		    STORE_EINVAL);
		store_read_end(t);
	}
out:
	free(big);
	free(other);
	store_close(s);
}
