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
