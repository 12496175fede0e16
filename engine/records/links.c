/*
 * links.c — signed links: URLs that work without a token until they
 * expire, for a browser that uploads or downloads one file (Dify's
 * presigned URLs of app assets and bundle imports).
 *
 * A link is a request method and path plus three query parameters:
 * expires_at (seconds since the epoch), nonce (random hex) and sign, the
 * HMAC-SHA256 of "flowcgi-link v1", the method, expires_at, the nonce and
 * the path, keyed by the data directory's link.key (secrets.c), in
 * unpadded base64url. The path comes last, so no choice of path can make
 * two different links sign the same text; the other fields hold no
 * separator. Every process sharing the data directory signs and checks
 * with the same key; removing link.key revokes every link given out.
 *
 * An upload link is spent by its first use (engine_link_use): a mark
 * "link-used/<expires_at, 20 digits>/<nonce>" in the meta database, put
 * only when absent, so that of two uses at once (threads, processes,
 * hosts sharing a PostgreSQL database) one finds the other's mark. Marks
 * sort by expiry; each use deletes a few that have expired, as a link
 * past its expiry is refused without one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "engine/records/records.h"

#define LINK_TAG	"flowcgi-link v1"
#define NONCE_BYTES	16
#define SIGN_LEN	43	/* unpadded base64url of 32 bytes */
#define USED_PREFIX	"link-used/"
#define USED_PRUNE	8	/* expired marks one use deletes, at most */

/* Unpadded base64url of the 32 bytes of mac into out[SIGN_LEN + 1]. */
static void
sign_text(const unsigned char mac[32], char out[SIGN_LEN + 1])
{
	unsigned char	b64[48];
	size_t		i;

	EVP_EncodeBlock(b64, mac, 32);
	for (i = 0; i < SIGN_LEN; i++)
		out[i] = b64[i] == '+' ? '-' : b64[i] == '/' ? '_' :
		    (char)b64[i];
	out[SIGN_LEN] = '\0';
}

/* The signature of one link into out. Returns 0 or ENGINE_ESTORE/ENOMEM. */
static int
link_mac(struct engine *e, const char *method, const char *path,
    const char *expires_at, const char *nonce, char out[SIGN_LEN + 1],
    char *err)
{
	unsigned char	 key[32], mac[32];
	unsigned int	 maclen = 0;
	char		*msg = NULL;
	size_t		 len;
	int		 rc;

	if ((rc = secret_link_key(e, key, err)) != 0)
		return rc;
	len = strlen(LINK_TAG) + strlen(method) + strlen(expires_at) +
	    strlen(nonce) + strlen(path) + 5;
	if ((msg = malloc(len)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	snprintf(msg, len, "%s\n%s\n%s\n%s\n%s", LINK_TAG, method, expires_at,
	    nonce, path);
	if (HMAC(EVP_sha256(), key, sizeof(key), (unsigned char *)msg,
	    strlen(msg), mac, &maclen) == NULL || maclen != sizeof(mac)) {
		snprintf(err, ENGINE_ERRMAX, "signing a link failed");
		rc = ENGINE_ESTORE;
		goto out;
	}
	sign_text(mac, out);
out:
	free(msg);
	OPENSSL_cleanse(key, sizeof(key));
	OPENSSL_cleanse(mac, sizeof(mac));
	return rc;
}

int
engine_link_sign(struct engine *e, const char *method, const char *path,
    int64_t ttl, char *query, int64_t *expires_at, char *err)
{
	unsigned char	raw[NONCE_BYTES];
	char		exp[24], nonce[2 * NONCE_BYTES + 1], sign[SIGN_LEN + 1];
	int64_t		at = engine_now() + (ttl > 0 ? ttl : 1);
	size_t		i;
	int		rc;

	if (RAND_bytes(raw, sizeof(raw)) != 1) {
		snprintf(err, ENGINE_ERRMAX, "no random bytes for a link");
		return ENGINE_ESTORE;
	}
	for (i = 0; i < sizeof(raw); i++)
		snprintf(nonce + 2 * i, 3, "%02x", raw[i]);
	snprintf(exp, sizeof(exp), "%lld", (long long)at);
	if ((rc = link_mac(e, method, path, exp, nonce, sign, err)) != 0)
		return rc;
	snprintf(query, ENGINE_LINK_QUERY_MAX, "expires_at=%s&nonce=%s&sign=%s",
	    exp, nonce, sign);
	if (expires_at != NULL)
		*expires_at = at;
	return 0;
}

/* 1 when s is n_min..n_max characters, each one of set. */
static int
chars_of(const char *s, size_t n_min, size_t n_max, const char *set)
{
	size_t n;

	if (s == NULL)
		return 0;
	n = strlen(s);
	return n >= n_min && n <= n_max && strspn(s, set) == n;
}

int
engine_link_verify(struct engine *e, const char *method, const char *path,
    const char *expires_at, const char *nonce, const char *sign,
    int64_t max_ttl, char *err)
{
	char		want[SIGN_LEN + 1], when[32];
	int64_t		at, now;
	time_t		tt;
	struct tm	tm;
	int		rc;

	if (expires_at == NULL || nonce == NULL || sign == NULL)
		return engine_invalid(err, "the link is incomplete: it needs "
		    "expires_at, nonce and sign");
	if (!chars_of(expires_at, 1, 18, "0123456789") ||
	    !chars_of(nonce, 16, 64, "0123456789abcdef") ||
	    !chars_of(sign, SIGN_LEN, SIGN_LEN, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789-_"))
		return engine_invalid(err, "the link is malformed");
	if ((rc = link_mac(e, method, path, expires_at, nonce, want,
	    err)) != 0)
		return rc;
	/* Constant time: a guess learns nothing from how long it took. */
	rc = CRYPTO_memcmp(want, sign, SIGN_LEN);
	OPENSSL_cleanse(want, sizeof(want));
	if (rc != 0)
		return engine_invalid(err, "the link's signature does not "
		    "match: it was changed, or is not one of ours");
	at = strtoll(expires_at, NULL, 10);
	now = engine_now();
	if (at <= now) {
		tt = (time_t)at;
		gmtime_r(&tt, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		return engine_invalid(err, "the link expired at %s; ask for a "
		    "new one", when);
	}
	if (at - now > max_ttl)
		return engine_invalid(err, "the link lives longer than links "
		    "may now (%lld seconds)", (long long)max_ttl);
	return 0;
}

/* ====== Single use ====== */

struct link_use {
	char	key[sizeof(USED_PREFIX) + 20 + 1 + 64];
	int64_t	now;
};

/* The expiry of mark key (USED_PREFIX...), or INT64_MAX when unreadable. */
static int64_t
used_expiry(const char *key)
{
	const char	*p = key + strlen(USED_PREFIX);
	int64_t		 at = 0;
	int		 n;

	for (n = 0; n < 20 && p[n] >= '0' && p[n] <= '9'; n++) {
		if (at > (INT64_MAX - 9) / 10)
			return INT64_MAX;
		at = at * 10 + (p[n] - '0');
	}
	return n == 20 && p[n] == '/' ? at : INT64_MAX;
}

static int
link_use_fn(struct store_txn *t, void *arg)
{
	struct link_use	*u = arg;
	json_t		*old = NULL, *v;
	const char	*k;
	int		 rc;

	/* The check and the mark are one put: two uses cannot both win. */
	rc = store_put(t, STORE_DB_META, u->key, strlen(u->key), "1", 1,
	    STORE_NOOVERWRITE);
	if (rc == STORE_EEXIST)
		return ENGINE_EEXIST;
	if (rc != 0)
		return rc;
	/* The oldest marks come first: delete those past their expiry. */
	if ((rc = records_collect(t, STORE_DB_META, USED_PREFIX, NULL,
	    USED_PRUNE, &old)) != 0)
		return rc;
	json_object_foreach(old, k, v) {
		if (used_expiry(k) >= u->now)
			break;
		if ((rc = store_del(t, STORE_DB_META, k, strlen(k))) != 0 &&
		    rc != STORE_ENOTFOUND)
			break;
		rc = 0;
	}
	json_decref(old);
	return rc;
}

int
engine_link_use(struct engine *e, const char *expires_at, const char *nonce,
    char *err)
{
	struct link_use	u;
	int		rc;

	if (!chars_of(expires_at, 1, 18, "0123456789") ||
	    !chars_of(nonce, 16, 64, "0123456789abcdef"))
		return engine_invalid(err, "the link is malformed");
	snprintf(u.key, sizeof(u.key), USED_PREFIX "%020lld/%s",
	    strtoll(expires_at, NULL, 10), nonce);
	u.now = engine_now();
	rc = engine_from_store(store_write(e->store, link_use_fn, &u));
	if (rc == ENGINE_EEXIST)
		snprintf(err, ENGINE_ERRMAX, "the link was used already: an "
		    "upload link works once; ask for a new one");
	return rc;
}
