/*
 * blob.c — content-addressed, reference-counted blobs, stored in chunks.
 *
 * blobs:    <hex>          -> the bytes, for a blob of at most
 *                             STORE_BLOB_CHUNK bytes (and for any blob an
 *                             older flowcgi stored whole)
 *           <hex>.chunks   -> the manifest of a larger blob: the line
 *                             "flowcgi-chunks 1 <size> <chunk size>" then
 *                             the hash of each chunk, a line each
 * blobrefs: <hex>          -> reference count, decimal text
 *
 * The chunks of a large blob are blobs themselves (each under its own
 * hash, each holding one reference per manifest line that names it), so
 * no value is ever larger than a chunk: PostgreSQL never sends a whole
 * file in one row, and a reader or writer holds one chunk at a time. A
 * writer hashes the whole as it goes and stores each chunk as it fills; if
 * the whole turns out to be stored already, it takes a reference to that
 * and gives back the chunks it stored. The manifest is text of fixed-width
 * lines, so chunk i is found without parsing the others.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "storage/storage.h"

#define MANIFEST_SUFFIX	".chunks"
#define MANIFEST_KEYLEN	(64 + sizeof(MANIFEST_SUFFIX) - 1)
#define MANIFEST_MAGIC	"flowcgi-chunks 1 "
#define HEX_LINE	65	/* 64 hex digits and '\n' */

static void
hex_of(const unsigned char md[SHA256_DIGEST_LENGTH],
    char hex[STORE_HASH_HEX])
{
	static const char	digits[] = "0123456789abcdef";
	size_t			i;

	for (i = 0; i < SHA256_DIGEST_LENGTH; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
}

void
store_hash(const void *data, size_t len, char hex[STORE_HASH_HEX])
{
	unsigned char md[SHA256_DIGEST_LENGTH];

	SHA256(data, len, md);
	hex_of(md, hex);
}

int64_t
store_blob_refs(struct store_txn *t, const char *hex)
{
	const void	*v = NULL;
	size_t		 vlen = 0;
	char		 buf[24];

	if (store_get(t, STORE_DB_BLOBREFS, hex, 64, &v, &vlen) != 0 ||
	    vlen >= sizeof(buf))
		return 0;
	memcpy(buf, v, vlen);
	buf[vlen] = '\0';
	return strtoll(buf, NULL, 10);
}

static int
refs_set(struct store_txn *t, const char *hex, int64_t n)
{
	char	buf[24];
	int	len;

	if (n <= 0)
		return store_del(t, STORE_DB_BLOBREFS, hex, 64);
	len = snprintf(buf, sizeof(buf), "%" PRId64, n);
	return store_put(t, STORE_DB_BLOBREFS, hex, 64, buf, (size_t)len, 0);
}

/* Stores a chunk-sized blob whole (if new) and takes a reference. */
static int
ref_whole(struct store_txn *t, const void *data, size_t len,
    const char *hex)
{
	int64_t	n = store_blob_refs(t, hex);
	int	rc;

	if (n == 0 && (rc = store_put(t, STORE_DB_BLOBS, hex, 64, data, len,
	    0)) != 0)
		return rc;
	return refs_set(t, hex, n + 1);
}

/* ====== Manifests ====== */

struct manifest {
	const char	*v;		/* valid while the transaction lives */
	size_t		 vlen;
	uint64_t	 size;
	uint64_t	 chunk;
	uint64_t	 nchunks;
	size_t		 head;		/* bytes before the first hash */
};

static void
manifest_key(const char *hex, char key[MANIFEST_KEYLEN + 1])
{
	memcpy(key, hex, 64);
	memcpy(key + 64, MANIFEST_SUFFIX, sizeof(MANIFEST_SUFFIX));
}

/* Reads and checks blob hex's manifest: 0, STORE_ENOTFOUND or < 0. */
static int
manifest_get(struct store_txn *t, const char *hex, struct manifest *m)
{
	char		 key[MANIFEST_KEYLEN + 1], head[80], *end;
	const char	*nl;
	size_t		 n;
	int		 rc;

	manifest_key(hex, key);
	if ((rc = store_get(t, STORE_DB_BLOBS, key, MANIFEST_KEYLEN,
	    (const void **)&m->v, &m->vlen)) != 0)
		return rc;
	if ((nl = memchr(m->v, '\n', m->vlen < sizeof(head) ? m->vlen :
	    sizeof(head))) == NULL)
		return STORE_EINVAL;
	n = (size_t)(nl - m->v);
	memcpy(head, m->v, n);
	head[n] = '\0';
	if (strncmp(head, MANIFEST_MAGIC, sizeof(MANIFEST_MAGIC) - 1) != 0)
		return STORE_EINVAL;
	m->size = strtoull(head + sizeof(MANIFEST_MAGIC) - 1, &end, 10);
	if (*end != ' ')
		return STORE_EINVAL;
	m->chunk = strtoull(end + 1, &end, 10);
	if (*end != '\0' || m->chunk == 0 || m->size == 0)
		return STORE_EINVAL;
	m->head = n + 1;
	m->nchunks = (m->size + m->chunk - 1) / m->chunk;
	if ((m->vlen - m->head) / HEX_LINE != m->nchunks ||
	    (m->vlen - m->head) % HEX_LINE != 0)
		return STORE_EINVAL;
	return 0;
}

/* The hash of chunk i of m, NUL-terminated into hex. */
static void
manifest_chunk(const struct manifest *m, uint64_t i, char hex[STORE_HASH_HEX])
{
	memcpy(hex, m->v + m->head + i * HEX_LINE, 64);
	hex[64] = '\0';
}

/* Drops one reference to each of the n chunks named by hash lines. */
static int
unref_lines(struct store_txn *t, const char *lines, uint64_t n)
{
	char		hex[STORE_HASH_HEX];
	uint64_t	i;
	int		rc;

	for (i = 0; i < n; i++) {
		memcpy(hex, lines + i * HEX_LINE, 64);
		hex[64] = '\0';
		if ((rc = store_blob_unref(t, hex)) != 0 &&
		    rc != STORE_ENOTFOUND)
			return rc;
	}
	return 0;
}

/*
 * Deletes whatever holds blob hex's bytes: the whole value, or the manifest
 * and one reference to each chunk it names. 0 when something was deleted,
 * STORE_ENOTFOUND when nothing was there.
 */
int
store_blob_drop(struct store_txn *t, const char *hex)
{
	struct manifest	 m;
	char		 key[MANIFEST_KEYLEN + 1], *lines;
	size_t		 n;
	int		 rc, found;

	rc = store_del(t, STORE_DB_BLOBS, hex, 64);
	if (rc != 0 && rc != STORE_ENOTFOUND)
		return rc;
	found = rc == 0;
	rc = manifest_get(t, hex, &m);
	if (rc == STORE_ENOTFOUND)
		return found ? 0 : STORE_ENOTFOUND;
	if (rc == STORE_EINVAL) {
		/* unreadable: its chunks cannot be named, and stay */
		manifest_key(hex, key);
		return store_del(t, STORE_DB_BLOBS, key, MANIFEST_KEYLEN);
	}
	if (rc != 0)
		return rc;
	/* the writes below may move m.v (LMDB's pages): the hashes, copied */
	n = m.vlen - m.head;
	if ((lines = malloc(n)) == NULL)
		return STORE_ENOMEM;
	memcpy(lines, m.v + m.head, n);
	rc = unref_lines(t, lines, m.nchunks);
	free(lines);
	if (rc != 0)
		return rc;
	manifest_key(hex, key);
	return store_del(t, STORE_DB_BLOBS, key, MANIFEST_KEYLEN);
}

/* ====== Writing ====== */

struct store_blob_writer {
	struct store_txn	*t;
	EVP_MD_CTX		*md;
	unsigned char		*buf;	/* the chunk being filled */
	size_t			 fill;
	uint64_t		 size;
	char			*hashes;	/* HEX_LINE per stored chunk */
	uint64_t		 nchunks;
	uint64_t		 cap;
};

int
store_blob_begin(struct store_txn *t, struct store_blob_writer **out)
{
	struct store_blob_writer *w;

	*out = NULL;
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return STORE_ENOMEM;
	w->t = t;
	if ((w->md = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(w->md, EVP_sha256(), NULL) != 1 ||
	    (w->buf = malloc(STORE_BLOB_CHUNK)) == NULL) {
		EVP_MD_CTX_free(w->md);
		free(w);
		return STORE_ENOMEM;
	}
	*out = w;
	return 0;
}

static void
writer_free(struct store_blob_writer *w)
{
	EVP_MD_CTX_free(w->md);
	free(w->buf);
	free(w->hashes);
	free(w);
}

/* Stores the full chunk in w->buf as a blob of its own. */
static int
writer_flush(struct store_blob_writer *w)
{
	char	hex[STORE_HASH_HEX], *nh;
	int	rc;

	if (w->nchunks == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 16;
		if ((nh = realloc(w->hashes, w->cap * HEX_LINE)) == NULL)
			return STORE_ENOMEM;
		w->hashes = nh;
	}
	store_hash(w->buf, w->fill, hex);
	if ((rc = ref_whole(w->t, w->buf, w->fill, hex)) != 0)
		return rc;
	memcpy(w->hashes + w->nchunks * HEX_LINE, hex, 64);
	w->hashes[w->nchunks * HEX_LINE + 64] = '\n';
	w->nchunks++;
	w->fill = 0;
	return 0;
}

int
store_blob_write(struct store_blob_writer *w, const void *data, size_t len)
{
	const unsigned char	*p = data;
	size_t			 n;
	int			 rc;

	if (len > 0 && EVP_DigestUpdate(w->md, data, len) != 1)
		return STORE_ENOMEM;
	w->size += len;
	while (len > 0) {
		/* a full chunk waits until more comes: the last one may be
		 * the whole blob, stored whole */
		if (w->fill == STORE_BLOB_CHUNK &&
		    (rc = writer_flush(w)) != 0)
			return rc;
		n = STORE_BLOB_CHUNK - w->fill;
		if (n > len)
			n = len;
		memcpy(w->buf + w->fill, p, n);
		w->fill += n;
		p += n;
		len -= n;
	}
	return 0;
}

/* Gives back the references this writer took on its chunks. */
static int
writer_unref_chunks(struct store_blob_writer *w)
{
	int rc;

	if ((rc = unref_lines(w->t, w->hashes, w->nchunks)) == 0)
		w->nchunks = 0;
	return rc;
}

int
store_blob_end(struct store_blob_writer *w, char hex[STORE_HASH_HEX])
{
	unsigned char	 md[SHA256_DIGEST_LENGTH];
	unsigned int	 mdlen = 0;
	char		 key[MANIFEST_KEYLEN + 1], head[80], *man = NULL;
	size_t		 hlen, mlen;
	int64_t		 n;
	int		 rc;

	if (EVP_DigestFinal_ex(w->md, md, &mdlen) != 1) {
		rc = STORE_ENOMEM;
		goto out;
	}
	hex_of(md, hex);
	if (w->nchunks == 0) {
		/* one chunk or less: stored whole, as always */
		rc = ref_whole(w->t, w->buf, w->fill, hex);
		goto out;
	}
	if ((n = store_blob_refs(w->t, hex)) > 0) {
		/* stored already: its chunks hold their own references */
		if ((rc = writer_unref_chunks(w)) == 0)
			rc = refs_set(w->t, hex, n + 1);
		goto out;
	}
	if (w->fill > 0 && (rc = writer_flush(w)) != 0)
		goto out;
	hlen = (size_t)snprintf(head, sizeof(head), MANIFEST_MAGIC "%" PRIu64
	    " %d\n", w->size, STORE_BLOB_CHUNK);
	mlen = hlen + w->nchunks * HEX_LINE;
	if ((man = malloc(mlen)) == NULL) {
		rc = STORE_ENOMEM;
		goto out;
	}
	memcpy(man, head, hlen);
	memcpy(man + hlen, w->hashes, w->nchunks * HEX_LINE);
	manifest_key(hex, key);
	if ((rc = store_put(w->t, STORE_DB_BLOBS, key, MANIFEST_KEYLEN, man,
	    mlen, 0)) == 0)
		rc = refs_set(w->t, hex, 1);
out:
	free(man);
	writer_free(w);
	return rc;
}

void
store_blob_abort(struct store_blob_writer *w)
{
	if (w == NULL)
		return;
	(void)writer_unref_chunks(w);
	writer_free(w);
}

int
store_blob_ref(struct store_txn *t, const void *data, size_t len,
    char hex[STORE_HASH_HEX])
{
	struct store_blob_writer	*w;
	int				 rc;

	if (len <= STORE_BLOB_CHUNK) {
		store_hash(data, len, hex);
		return ref_whole(t, data, len, hex);
	}
	if ((rc = store_blob_begin(t, &w)) != 0)
		return rc;
	if ((rc = store_blob_write(w, data, len)) != 0) {
		store_blob_abort(w);
		return rc;
	}
	return store_blob_end(w, hex);
}

int
store_blob_addref(struct store_txn *t, const char *hex)
{
	int64_t n = store_blob_refs(t, hex);

	if (n == 0)
		return STORE_ENOTFOUND;
	return refs_set(t, hex, n + 1);
}

int
store_blob_unref(struct store_txn *t, const char *hex)
{
	int64_t	n = store_blob_refs(t, hex);
	int	rc;

	if (n == 0)
		return STORE_ENOTFOUND;
	if (n == 1 && (rc = store_blob_drop(t, hex)) != 0 &&
	    rc != STORE_ENOTFOUND)
		return rc;
	return refs_set(t, hex, n - 1);
}

/* ====== Reading ====== */

int
store_blob_size(struct store_txn *t, const char *hex, uint64_t *size)
{
	struct manifest	 m;
	const void	*v;
	size_t		 vlen;
	int		 rc;

	if (strlen(hex) != 64)
		return STORE_ENOTFOUND;
	if ((rc = store_get(t, STORE_DB_BLOBS, hex, 64, &v, &vlen)) == 0) {
		*size = vlen;
		return 0;
	}
	if (rc != STORE_ENOTFOUND || (rc = manifest_get(t, hex, &m)) != 0)
		return rc;
	*size = m.size;
	return 0;
}

int
store_blob_read(struct store_txn *t, const char *hex, uint64_t off,
    void *buf, size_t n, size_t *got)
{
	struct manifest	 m;
	const void	*v;
	size_t		 vlen, take, done = 0;
	uint64_t	 i, at;
	char		 chunk[STORE_HASH_HEX];
	int		 rc;

	*got = 0;
	if (strlen(hex) != 64)
		return STORE_ENOTFOUND;
	if ((rc = store_get(t, STORE_DB_BLOBS, hex, 64, &v, &vlen)) == 0) {
		if (off < vlen) {
			take = vlen - (size_t)off < n ? vlen - (size_t)off : n;
			memcpy(buf, (const char *)v + off, take);
			*got = take;
		}
		return 0;
	}
	if (rc != STORE_ENOTFOUND || (rc = manifest_get(t, hex, &m)) != 0)
		return rc;
	while (done < n && off < m.size) {
		i = off / m.chunk;
		at = off % m.chunk;
		manifest_chunk(&m, i, chunk);
		if ((rc = store_get(t, STORE_DB_BLOBS, chunk, 64, &v,
		    &vlen)) != 0)
			return rc == STORE_ENOTFOUND ? STORE_EINVAL : rc;
		/* every chunk but the last is whole */
		if (vlen != (i + 1 < m.nchunks ? m.chunk :
		    m.size - i * m.chunk) || at >= vlen)
			return STORE_EINVAL;
		take = vlen - (size_t)at < n - done ? vlen - (size_t)at :
		    n - done;
		memcpy((char *)buf + done, (const char *)v + at, take);
		done += take;
		off += take;
	}
	*got = done;
	return 0;
}

int
store_blob_load(struct store_txn *t, const char *hex, char **data,
    size_t *len)
{
	uint64_t	 size;
	size_t		 got;
	char		*buf;
	int		 rc;

	*data = NULL;
	*len = 0;
	if ((rc = store_blob_size(t, hex, &size)) != 0)
		return rc;
	if (size >= SIZE_MAX || (buf = malloc((size_t)size + 1)) == NULL)
		return STORE_ENOMEM;
	if ((rc = store_blob_read(t, hex, 0, buf, (size_t)size, &got)) != 0 ||
	    got != size) {
		free(buf);
		return rc != 0 ? rc : STORE_EINVAL;
	}
	buf[size] = '\0';
	*data = buf;
	*len = (size_t)size;
	return 0;
}
