/*
 * blob.c — content-addressed, reference-counted blobs.
 *
 * blobs:    sha256 hex -> bytes
 * blobrefs: sha256 hex -> reference count, decimal text
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "storage/storage.h"

void
store_hash(const void *data, size_t len, char hex[STORE_HASH_HEX])
{
	static const char	digits[] = "0123456789abcdef";
	unsigned char		md[SHA256_DIGEST_LENGTH];
	size_t			i;

	SHA256(data, len, md);
	for (i = 0; i < sizeof(md); i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
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

int
store_blob_ref(struct store_txn *t, const void *data, size_t len,
    char hex[STORE_HASH_HEX])
{
	int64_t	n;
	int	rc;

	store_hash(data, len, hex);
	n = store_blob_refs(t, hex);
	if (n == 0 && (rc = store_put(t, STORE_DB_BLOBS, hex, 64, data, len,
	    0)) != 0)
		return rc;
	return refs_set(t, hex, n + 1);
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
	if (n == 1 && (rc = store_del(t, STORE_DB_BLOBS, hex, 64)) != 0 &&
	    rc != STORE_ENOTFOUND)
		return rc;
	return refs_set(t, hex, n - 1);
}

int
store_blob_get(struct store_txn *t, const char *hex, const void **data,
    size_t *len)
{
	return store_get(t, STORE_DB_BLOBS, hex, strlen(hex), data, len);
}
