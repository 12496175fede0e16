/*
 * secrets.c — secrets at rest (model provider API keys, sandbox provider
 * credentials): AES-256-GCM through OpenSSL EVP with a 32-byte key kept in
 * a file of the data directory, never in the database. A copy of the
 * database alone reveals no secret.
 *
 * The key file (secret.key, mode 0600) holds the key in base64 and is
 * made on first use; when several processes start at once the first to
 * link its file in wins and the others read that one. An encrypted value
 * is text: "v1:" and the base64 of a 12-byte random nonce, the
 * ciphertext and the 16-byte tag. The caller's aad (a context such as
 * "model_providers/openai") is authenticated, so a value moved to another
 * place no longer decrypts.
 *
 * The key that signs links to files (links.c) is kept the same way in
 * its own file, link.key.
 *
 * Hosts sharing one database share the key by configuration instead: the
 * file secrets.key_file, or the key itself in FLOWCGI_SECRET_KEY (never a
 * setting, so never shown). Then the link key is derived from it
 * (HMAC-SHA256 of a fixed label), so that a link made on one host opens
 * on another. The first secret sealed leaves a check in the meta
 * database (a known text sealed with the key); a process whose key does
 * not open it refuses to start (secret_key_verify) instead of sealing
 * secrets that the other hosts cannot open.
 *
 * The secrets an app's DSL carries are sealed the same way in the stored
 * draft (dsl_secrets, below), opened for a run or an export with
 * include_secret, and masked out of what a run stores (secrets_scrub).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "engine/internal.h"

#define KEY_LEN		32
#define NONCE_LEN	12
#define TAG_LEN		16
#define PREFIX		"v1:"
#define SECRET_MAX	(64 * 1024)	/* bytes of one plain secret */

/*
 * The key in the base64 text b64[0..n) (a line end after it allowed).
 * Returns 0, or -1 with errno EINVAL.
 */
static int
key_decode(const unsigned char *b64, size_t n, unsigned char key[KEY_LEN])
{
	unsigned char	raw[96];
	int		ok;

	while (n > 0 && (b64[n - 1] == '\n' || b64[n - 1] == '\r'))
		n--;
	/* 32 bytes are 44 base64 characters with one '=' of padding. */
	ok = n == 44 && EVP_DecodeBlock(raw, b64, 44) == 33;
	if (ok)
		memcpy(key, raw, KEY_LEN);
	OPENSSL_cleanse(raw, sizeof(raw));
	if (!ok)
		errno = EINVAL;
	return ok ? 0 : -1;
}

/* Reads the base64 key in path into key. Returns 0, or -1 with errno. */
static int
key_read(const char *path, unsigned char key[KEY_LEN])
{
	unsigned char	buf[128];
	struct stat	st;
	ssize_t		n;
	int		fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(fd, &st) == 0 && (st.st_mode & 077) != 0)
		log_warn("%s is readable by others than its owner: chmod 600 "
		    "it", path);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	rc = key_decode(buf, n > 0 ? (size_t)n : 0, key);
	OPENSSL_cleanse(buf, sizeof(buf));
	return rc;
}

/*
 * The key in file name of e's data directory, made when missing. Returns
 * 0, or ENGINE_ESTORE with err saying why.
 */
static int
key_load(struct engine *e, const char *name, unsigned char key[KEY_LEN],
    char *err)
{
	const char	*dir = e->conf->data_dir;
	char		 path[1100], tmp[1150] = "";
	unsigned char	 raw[KEY_LEN], b64[64] = "";
	int		 fd = -1, n, rc = ENGINE_ESTORE;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (key_read(path, key) == 0)
		return 0;
	if (errno != ENOENT) {
		snprintf(err, ENGINE_ERRMAX, "the secret key file %.200s "
		    "cannot be read: %s", path, strerror(errno));
		return ENGINE_ESTORE;
	}
	if (RAND_bytes(raw, sizeof(raw)) != 1) {
		snprintf(err, ENGINE_ERRMAX, "no random bytes for a key");
		goto out;
	}
	n = EVP_EncodeBlock(b64, raw, sizeof(raw));
	snprintf(tmp, sizeof(tmp), "%s/.%s.%ld", dir, name, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, b64, (size_t)n) != n ||
	    write(fd, "\n", 1) != 1 || fsync(fd) != 0) {
		snprintf(err, ENGINE_ERRMAX, "the secret key file %.200s "
		    "cannot be written: %s", path, strerror(errno));
		goto out;
	}
	close(fd);
	fd = -1;
	if (link(tmp, path) != 0 && errno != EEXIST) {
		snprintf(err, ENGINE_ERRMAX, "the secret key file %.200s "
		    "cannot be made: %s", path, strerror(errno));
		goto out;
	}
	/* Ours or a faster process's: read back what is there now. */
	if (key_read(path, key) != 0) {
		snprintf(err, ENGINE_ERRMAX, "the secret key file %.200s is "
		    "not a base64 32-byte key", path);
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (tmp[0] != '\0')
		unlink(tmp);
	OPENSSL_cleanse(raw, sizeof(raw));
	OPENSSL_cleanse(b64, sizeof(b64));
	return rc;
}

/* ====== The key and its check ====== */

static int	seal(struct engine *e, const char *aad, const char *plain,
		    char *err, char **out);

#define KEY_ENV		"FLOWCGI_SECRET_KEY"
#define CHECK_KEY	"secret_key_check"
#define CHECK_AAD	"flowcgi/secret-key-check"
#define CHECK_TEXT	"flowcgi secrets"

/* Where e's key comes from, for messages. */
static const char *
key_source(struct engine *e, char *buf, size_t size)
{
	if (getenv(KEY_ENV) != NULL && *getenv(KEY_ENV) != '\0')
		snprintf(buf, size, "the key in %s", KEY_ENV);
	else if (e->conf->secrets_key_file[0] != '\0')
		snprintf(buf, size, "the key file %.120s (secrets.key_file)",
		    e->conf->secrets_key_file);
	else
		snprintf(buf, size, "the key file secret.key of the data "
		    "directory");
	return buf;
}

/*
 * The configured key (FLOWCGI_SECRET_KEY, secrets.key_file): 0, 1 when
 * none is configured, or ENGINE_ESTORE with err saying why.
 */
static int
key_given(struct engine *e, unsigned char key[KEY_LEN], char *err)
{
	const char	*env = getenv(KEY_ENV), *path = e->conf->secrets_key_file;

	if (env != NULL && *env != '\0') {
		if (key_decode((const unsigned char *)env, strlen(env), key) ==
		    0)
			return 0;
		snprintf(err, ENGINE_ERRMAX, "%s is not a base64 32-byte key "
		    "(openssl rand -base64 32)", KEY_ENV);
		return ENGINE_ESTORE;
	}
	if (*path == '\0')
		return 1;
	if (key_read(path, key) == 0)
		return 0;
	snprintf(err, ENGINE_ERRMAX, "the key file %.120s (secrets.key_file) "
	    "%.100s", path, errno == EINVAL ? "is not a base64 32-byte key "
	    "(openssl rand -base64 32)" : strerror(errno));
	return ENGINE_ESTORE;
}

/* e's key; the data directory's file is made when make and missing. */
static int
key_get(struct engine *e, unsigned char key[KEY_LEN], int make, char *err)
{
	char	path[1100];
	int	rc;

	if ((rc = key_given(e, key, err)) != 1)
		return rc;
	if (make)
		return key_load(e, "secret.key", key, err);
	snprintf(path, sizeof(path), "%s/secret.key", e->conf->data_dir);
	if (key_read(path, key) == 0)
		return 0;
	snprintf(err, ENGINE_ERRMAX, "the secret key file %.200s: %s", path,
	    errno == EINVAL ? "not a base64 32-byte key" : strerror(errno));
	return ENGINE_ESTORE;
}

int
secret_link_key(struct engine *e, unsigned char key[32], char *err)
{
	unsigned char	given[KEY_LEN];
	unsigned int	len = 0;
	int		rc;

	if ((rc = key_given(e, given, err)) == 0) {
		if (HMAC(EVP_sha256(), given, KEY_LEN, (const unsigned char *)
		    "flowcgi link key", 16, key, &len) == NULL || len != 32)
			rc = ENGINE_ESTORE;
		OPENSSL_cleanse(given, sizeof(given));
		return rc;
	}
	if (rc != 1)
		return rc;
	/* Its own file: removing it revokes every link given out, and
	 * nothing else. */
	return key_load(e, "link.key", key, err);
}

int
engine_key_derive(struct engine *e, const char *label, unsigned char out[32],
    char *err)
{
	unsigned char	key[32];
	unsigned int	len = 0;
	int		rc;

	if ((rc = secret_link_key(e, key, err)) != 0)
		return rc;
	if (HMAC(EVP_sha256(), key, sizeof(key), (const unsigned char *)label,
	    strlen(label), out, &len) == NULL || len != 32) {
		snprintf(err, ENGINE_ERRMAX, "deriving the %.100s key failed",
		    label);
		rc = ENGINE_ESTORE;
	}
	OPENSSL_cleanse(key, sizeof(key));
	return rc;
}

static int
check_put_fn(struct store_txn *t, void *arg)
{
	const char *enc = arg;

	return store_put(t, STORE_DB_META, CHECK_KEY, strlen(CHECK_KEY), enc,
	    strlen(enc), STORE_NOOVERWRITE);
}

/*
 * The check sealed with e's key: 0 when it opens, 1 when there is none,
 * else ENGINE_EINVAL with err saying what to do.
 */
static int
check_open(struct engine *e, char *err)
{
	struct store_txn	*t = NULL;
	const void		*v;
	size_t			 vlen;
	char			*enc = NULL, *plain = NULL, src[300];
	int			 rc;

	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	rc = store_get(t, STORE_DB_META, CHECK_KEY, strlen(CHECK_KEY), &v,
	    &vlen);
	if (rc == 0 && (enc = strndup(v, vlen)) == NULL)
		rc = STORE_ENOMEM;
	store_read_end(t);
	if (rc != 0) {
		free(enc);
		return rc == STORE_ENOTFOUND ? 1 : engine_from_store(rc);
	}
	rc = secret_decrypt(e, CHECK_AAD, enc, err, &plain);
	free(enc);
	if (rc == 0 && strcmp(plain, CHECK_TEXT) == 0) {
		secret_free(plain);
		atomic_store(&e->key_checked, 1);
		return 0;
	}
	secret_free(plain);
	if (rc == ENGINE_ESTORE)
		return rc;	/* no key here: err says so */
	snprintf(err, ENGINE_ERRMAX, "%s is not the key the secrets in this "
	    "database were sealed with: give every host that shares it the "
	    "same key (secrets.key_file or %s; docs/scale-out.md)",
	    key_source(e, src, sizeof(src)), KEY_ENV);
	return ENGINE_EINVAL;
}

int
secret_key_verify(struct engine *e, char *err)
{
	unsigned char	key[KEY_LEN];
	char		path[1100];
	int		rc = check_open(e, err);

	if (rc != 1)
		return rc;
	/* no secret sealed yet: the key that will seal the first one must
	 * still be readable now, not make the first import a 500 */
	if ((rc = key_given(e, key, err)) == 1) {
		snprintf(path, sizeof(path), "%s/secret.key",
		    e->conf->data_dir);
		rc = 0;
		if (key_read(path, key) != 0 && errno != ENOENT) {
			snprintf(err, ENGINE_ERRMAX, "the secret key file "
			    "%.120s %.90s", path, errno == EINVAL ? "is not a "
			    "base64 32-byte key (openssl rand -base64 32)" :
			    strerror(errno));
			rc = ENGINE_ESTORE;
		}
	}
	OPENSSL_cleanse(key, sizeof(key));
	return rc;
}

/* After the first secret sealed: leaves the check, or finds one made by
 * another process meanwhile and opens it. */
static int
check_leave(struct engine *e, char *err)
{
	char	*enc = NULL;
	int	 rc;

	if (atomic_load(&e->key_checked))
		return 0;
	if ((rc = seal(e, CHECK_AAD, CHECK_TEXT, err, &enc)) != 0)
		return rc;
	rc = store_write(e->store, check_put_fn, enc);
	free(enc);
	if (rc == 0) {
		atomic_store(&e->key_checked, 1);
		return 0;
	}
	if (rc == STORE_EEXIST)
		return check_open(e, err);
	/* inside another write (STORE_EBUSY), or storage away: next time */
	return 0;
}

/* Seals plain with e's key (made on first use). */
static int
seal(struct engine *e, const char *aad, const char *plain, char *err,
    char **out)
{
	EVP_CIPHER_CTX	*cx = NULL;
	unsigned char	 key[KEY_LEN], *buf = NULL;
	char		*txt = NULL;
	size_t		 plen = strlen(plain), blen, tsz;
	int		 n, rc;

	*out = NULL;
	if (plen > SECRET_MAX) {
		rc = engine_invalid(err, "a secret is longer than %d bytes",
		    SECRET_MAX);
		goto out;
	}
	if ((rc = key_get(e, key, 1, err)) != 0)
		goto out;
	rc = ENGINE_ENOMEM;
	blen = NONCE_LEN + plen + TAG_LEN;
	tsz = sizeof(PREFIX) + 4 * ((blen + 2) / 3) + 1;
	if ((buf = malloc(blen)) == NULL || (txt = malloc(tsz)) == NULL ||
	    (cx = EVP_CIPHER_CTX_new()) == NULL)
		goto out;
	rc = ENGINE_ESTORE;
	snprintf(err, ENGINE_ERRMAX, "encryption failed");
	if (RAND_bytes(buf, NONCE_LEN) != 1 ||
	    EVP_EncryptInit_ex(cx, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1 ||
	    EVP_CIPHER_CTX_ctrl(cx, EVP_CTRL_GCM_SET_IVLEN, NONCE_LEN,
	    NULL) != 1 ||
	    EVP_EncryptInit_ex(cx, NULL, NULL, key, buf) != 1)
		goto out;
	if (aad != NULL && *aad != '\0' &&
	    EVP_EncryptUpdate(cx, NULL, &n, (const unsigned char *)aad,
	    (int)strlen(aad)) != 1)
		goto out;
	if (EVP_EncryptUpdate(cx, buf + NONCE_LEN, &n,
	    (const unsigned char *)plain, (int)plen) != 1 ||
	    EVP_EncryptFinal_ex(cx, buf + NONCE_LEN + n, &n) != 1 ||
	    EVP_CIPHER_CTX_ctrl(cx, EVP_CTRL_GCM_GET_TAG, TAG_LEN,
	    buf + NONCE_LEN + plen) != 1)
		goto out;
	memcpy(txt, PREFIX, sizeof(PREFIX) - 1);
	EVP_EncodeBlock((unsigned char *)txt + sizeof(PREFIX) - 1, buf,
	    (int)blen);
	*out = txt;
	txt = NULL;
	err[0] = '\0';
	rc = 0;
out:
	EVP_CIPHER_CTX_free(cx);
	OPENSSL_cleanse(key, sizeof(key));
	free(buf);
	free(txt);
	return rc;
}

int
secret_encrypt(struct engine *e, const char *aad, const char *plain,
    char *err, char **out)
{
	int rc = seal(e, aad, plain, err, out);

	if (rc == 0 && (rc = check_leave(e, err)) != 0) {
		free(*out);
		*out = NULL;
	}
	return rc;
}

int
secret_decrypt(struct engine *e, const char *aad, const char *enc,
    char *err, char **out)
{
	EVP_CIPHER_CTX	*cx = NULL;
	unsigned char	 key[KEY_LEN], *buf = NULL;
	char		*plain = NULL;
	const char	*b64;
	size_t		 elen, pad = 0, plen = 0;
	int		 n, blen, rc;

	*out = NULL;
	if (strncmp(enc, PREFIX, sizeof(PREFIX) - 1) != 0) {
		rc = engine_invalid(err, "not an encrypted secret");
		goto out;
	}
	b64 = enc + sizeof(PREFIX) - 1;
	elen = strlen(b64);
	if (elen % 4 != 0 || elen > 4 * (SECRET_MAX / 3 + 64)) {
		rc = engine_invalid(err, "a stored secret is damaged");
		goto out;
	}
	while (pad < 2 && elen > pad && b64[elen - 1 - pad] == '=')
		pad++;
	if ((rc = key_get(e, key, 0, err)) != 0)
		goto out;
	rc = ENGINE_ENOMEM;
	if ((buf = malloc(elen / 4 * 3 + 1)) == NULL ||
	    (cx = EVP_CIPHER_CTX_new()) == NULL)
		goto out;
	blen = EVP_DecodeBlock(buf, (const unsigned char *)b64, (int)elen);
	if (blen < 0 || (size_t)blen < pad + NONCE_LEN + TAG_LEN) {
		rc = engine_invalid(err, "a stored secret is damaged");
		goto out;
	}
	blen -= (int)pad;	/* DecodeBlock counts padding as zeros */
	plen = (size_t)blen - NONCE_LEN - TAG_LEN;
	if ((plain = malloc(plen + 1)) == NULL)
		goto out;
	{
		char src[300];

		rc = engine_invalid(err, "a stored secret does not decrypt "
		    "with %s (was the key replaced?)", key_source(e, src,
		    sizeof(src)));
	}
	if (EVP_DecryptInit_ex(cx, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1 ||
	    EVP_CIPHER_CTX_ctrl(cx, EVP_CTRL_GCM_SET_IVLEN, NONCE_LEN,
	    NULL) != 1 ||
	    EVP_DecryptInit_ex(cx, NULL, NULL, key, buf) != 1)
		goto out;
	if (aad != NULL && *aad != '\0' &&
	    EVP_DecryptUpdate(cx, NULL, &n, (const unsigned char *)aad,
	    (int)strlen(aad)) != 1)
		goto out;
	if (EVP_DecryptUpdate(cx, (unsigned char *)plain, &n,
	    buf + NONCE_LEN, (int)plen) != 1 ||
	    EVP_CIPHER_CTX_ctrl(cx, EVP_CTRL_GCM_SET_TAG, TAG_LEN,
	    buf + NONCE_LEN + plen) != 1 ||
	    EVP_DecryptFinal_ex(cx, (unsigned char *)plain + n, &n) != 1)
		goto out;
	plain[plen] = '\0';
	*out = plain;
	plain = NULL;
	err[0] = '\0';
	rc = 0;
out:
	EVP_CIPHER_CTX_free(cx);
	OPENSSL_cleanse(key, sizeof(key));
	if (buf != NULL) {
		OPENSSL_cleanse(buf, elen / 4 * 3 + 1);
		free(buf);
	}
	if (plain != NULL) {
		OPENSSL_cleanse(plain, plen + 1);
		free(plain);
	}
	return rc;
}

void
secret_free(char *s)
{
	if (s == NULL)
		return;
	OPENSSL_cleanse(s, strlen(s));
	free(s);
}

/* ====== Secret fields of an app's DSL ====== */

/*
 * What the DSL can carry as a secret, the only places this file knows:
 *
 *	workflow.environment_variables[].value        value_type "secret"
 *	graph node (type http-request)
 *	    data.authorization.config.api_key          basic, bearer, custom
 *	graph node (type tool or agent)
 *	    data.headers.<name>                        inline MCP server headers
 *
 * An api_key that is only a {{#node.var#}} reference names where the key
 * comes from (an env secret, an input) and is no secret itself. Each
 * sealed value is bound (aad) to its place: "dsl/env/<name>",
 * "dsl/node/<id>/api_key", "dsl/node/<id>/headers/<name>".
 */

#define SCRUB_MIN	4	/* shorter secrets are not looked for in
				 * traces: too many false hits */

/* 1 when s is one {{#...#}} reference and nothing else (blanks aside). */
static int
is_reference(const char *s)
{
	const char	*end;
	size_t		 n;

	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' ||
	    s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	if (n < 7 || strncmp(s, "{{#", 3) != 0 ||
	    strncmp(s + n - 3, "#}}", 3) != 0)
		return 0;
	end = strstr(s + 3, "#}}");
	return end == s + n - 3 && memchr(s + 3, '{', n - 6) == NULL;
}

/* Adds plain to found (no duplicates, longest first). */
static int
found_add(json_t *found, const char *plain)
{
	json_t	*v;
	size_t	 i, n = strlen(plain);

	json_array_foreach(found, i, v) {
		if (strcmp(json_string_value(v), plain) == 0)
			return 0;
		if (json_string_length(v) < n)
			break;
	}
	return json_array_insert_new(found, i, json_string(plain)) == 0 ? 0 :
	    ENGINE_ENOMEM;
}

/* Adds the base64 form of plain to found. */
static int
found_add_b64(json_t *found, const char *plain)
{
	size_t		 n = strlen(plain);
	unsigned char	*b64;
	int		 rc = ENGINE_ENOMEM;

	if (n > SECRET_MAX || (b64 = malloc(4 * ((n + 2) / 3) + 1)) == NULL)
		return n > SECRET_MAX ? 0 : ENGINE_ENOMEM;
	EVP_EncodeBlock(b64, (const unsigned char *)plain, (int)n);
	rc = found_add(found, (const char *)b64);
	OPENSSL_cleanse(b64, strlen((char *)b64));
	free(b64);
	return rc;
}

/* Applies op to the string at obj[key], a secret living at aad. */
static int
secret_field(struct engine *e, json_t *obj, const char *key,
    const char *aad, enum dsl_secret_op op, json_t *found, char *err)
{
	json_t		*v = json_object_get(obj, key);
	const char	*s = json_string_value(v);
	char		*txt = NULL;
	int		 rc = 0;

	if (s == NULL || *s == '\0' || is_reference(s))
		return 0;
	switch (op) {
	case DSL_SECRET_SEAL:
		if ((rc = secret_encrypt(e, aad, s, err, &txt)) == 0 &&
		    json_object_set_new(obj, key, json_string(txt)) != 0)
			rc = ENGINE_ENOMEM;
		free(txt);
		break;
	case DSL_SECRET_OPEN:
		/* A value kept before secrets were sealed is plain text. */
		if (strncmp(s, PREFIX, sizeof(PREFIX) - 1) == 0) {
			if ((rc = secret_decrypt(e, aad, s, err, &txt)) != 0)
				break;
			if (json_object_set_new(obj, key, json_string(txt))
			    != 0)
				rc = ENGINE_ENOMEM;
		}
		if (rc == 0 && found != NULL)
			rc = found_add(found, txt != NULL ? txt : s);
		secret_free(txt);
		break;
	case DSL_SECRET_MASK:
		if (json_object_set_new(obj, key,
		    json_string(ENGINE_SECRET_MASK)) != 0)
			rc = ENGINE_ENOMEM;
		break;
	case DSL_SECRET_BLANK:
		if (json_object_set_new(obj, key, json_string("")) != 0)
			rc = ENGINE_ENOMEM;
		break;
	}
	return rc;
}

/* The secrets of one graph node's data. */
static int
node_secrets(struct engine *e, json_t *node, enum dsl_secret_op op,
    json_t *found, char *err)
{
	json_t		*data = json_object_get(node, "data"), *cfg, *hdrs, *v;
	const char	*type = json_string_value(json_object_get(data,
			    "type"));
	const char	*id = json_string_value(json_object_get(node, "id"));
	const char	*k;
	char		 aad[512];
	int		 rc = 0;

	if (type == NULL)
		return 0;
	if (id == NULL)
		id = "";
	if (strcmp(type, "http-request") == 0) {
		cfg = json_object_get(json_object_get(data, "authorization"),
		    "config");
		if (!json_is_object(cfg))
			return 0;
		snprintf(aad, sizeof(aad), "dsl/node/%.200s/api_key", id);
		if ((rc = secret_field(e, cfg, "api_key", aad, op, found,
		    err)) != 0 || op != DSL_SECRET_OPEN || found == NULL)
			return rc;
		/* A basic "user:pass" goes out (and may echo back) as base64. */
		k = json_string_value(json_object_get(cfg, "api_key"));
		if (k != NULL && strchr(k, ':') != NULL && !is_reference(k) &&
		    json_is_string(json_object_get(cfg, "type")) &&
		    strcmp(json_string_value(json_object_get(cfg, "type")),
		    "basic") == 0)
			rc = found_add_b64(found, k);
		return rc;
	}
	if (strcmp(type, "tool") != 0 && strcmp(type, "agent") != 0)
		return 0;
	hdrs = json_object_get(data, "headers");
	json_object_foreach(hdrs, k, v) {
		snprintf(aad, sizeof(aad), "dsl/node/%.200s/headers/%.200s",
		    id, k);
		if ((rc = secret_field(e, hdrs, k, aad, op, found, err)) != 0)
			break;
	}
	return rc;
}

int
dsl_secrets(struct engine *e, json_t *wf, enum dsl_secret_op op,
    json_t *found, char *err)
{
	json_t		*var, *node;
	const char	*name;
	char		 aad[512];
	size_t		 i;
	int		 rc = 0;

	if (!json_is_object(wf))
		return 0;
	json_array_foreach(json_object_get(wf, "environment_variables"), i,
	    var) {
		if (!json_is_string(json_object_get(var, "value_type")) ||
		    strcmp(json_string_value(json_object_get(var,
		    "value_type")), "secret") != 0)
			continue;
		name = json_string_value(json_object_get(var, "name"));
		snprintf(aad, sizeof(aad), "dsl/env/%.200s", name ? name : "");
		if ((rc = secret_field(e, var, "value", aad, op, found,
		    err)) != 0)
			goto out;
	}
	json_array_foreach(json_object_get(json_object_get(wf, "graph"),
	    "nodes"), i, node)
		if ((rc = node_secrets(e, node, op, found, err)) != 0)
			goto out;
out:
	return rc;
}

int
engine_dsl_mask_secrets(json_t *dsl)
{
	char err[ENGINE_ERRMAX];

	return dsl_secrets(NULL, json_object_get(dsl, "workflow"),
	    DSL_SECRET_MASK, NULL, err);
}

/* ====== Secrets in traces ====== */

/* 1 when some string in v holds one of the secrets (SCRUB_MIN or more). */
static int
holds_secret(const json_t *v, const json_t *secrets)
{
	const char	*k, *s;
	json_t		*x, *sec;
	size_t		 i, j;

	if (json_is_string(v)) {
		s = json_string_value(v);
		json_array_foreach(secrets, j, sec)
			if (json_string_length(sec) >= SCRUB_MIN &&
			    strstr(s, json_string_value(sec)) != NULL)
				return 1;
		return 0;
	}
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x)
			if (holds_secret(x, secrets))
				return 1;
		return 0;
	}
	json_array_foreach(v, i, x)
		if (holds_secret(x, secrets))
			return 1;
	return 0;
}

/* Masks every secret in the strings of v, in place. */
static int
scrub_in_place(json_t *v, const json_t *secrets)
{
	struct dbuf	 sb = { 0 };
	const char	*k, *s, *hit, *best;
	json_t		*x, *sec;
	size_t		 i, j, blen = 0;
	char		*txt;
	int		 rc = 0;

	if (json_is_object(v)) {
		json_object_foreach(v, k, x)
			if ((rc = scrub_in_place(x, secrets)) != 0)
				return rc;
		return 0;
	}
	if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			if ((rc = scrub_in_place(x, secrets)) != 0)
				return rc;
		return 0;
	}
	if (!json_is_string(v) || !holds_secret(v, secrets))
		return 0;
	/* Left to right, the earliest (then longest) secret each time. */
	for (s = json_string_value(v); *s != '\0';) {
		best = NULL;
		json_array_foreach(secrets, j, sec) {
			if (json_string_length(sec) < SCRUB_MIN ||
			    (hit = strstr(s, json_string_value(sec))) == NULL)
				continue;
			if (best == NULL || hit < best) {
				best = hit;
				blen = json_string_length(sec);
			}
		}
		if (best == NULL) {
			dbuf_addstr(&sb, s);
			break;
		}
		dbuf_add(&sb, s, (size_t)(best - s));
		dbuf_addstr(&sb, ENGINE_SECRET_MASK);
		s = best + blen;
	}
	if ((txt = dbuf_take(&sb, NULL)) == NULL)
		rc = ENGINE_ENOMEM;
	else if (json_string_set(v, txt) != 0)
		rc = ENGINE_ENOMEM;
	free(txt);
	dbuf_free(&sb);
	return rc;
}

json_t *
secrets_scrub(const json_t *secrets, json_t *v)
{
	json_t *copy;

	if (v == NULL || json_array_size(secrets) == 0 ||
	    !holds_secret(v, secrets))
		return v;
	copy = json_deep_copy(v);
	json_decref(v);
	if (copy != NULL && scrub_in_place(copy, secrets) != 0) {
		json_decref(copy);
		copy = NULL;
	}
	return copy;
}

int
secrets_maybe_sealed(const void *raw, size_t len)
{
	/* a sealed value is a JSON string that starts with the prefix */
	return memmem(raw, len, "\"" PREFIX, sizeof("\"" PREFIX) - 1) != NULL;
}

/* ====== Secrets sent back masked ====== */

/* obj[key] becomes old[key] ("" without one) when it is the mask. */
static int
keep_field(json_t *obj, const char *key, const json_t *old)
{
	const char	*s = json_string_value(json_object_get(obj, key));
	const char	*o = json_string_value(json_object_get(old, key));

	if (s == NULL || strcmp(s, ENGINE_SECRET_MASK) != 0)
		return 0;
	return json_object_set_new(obj, key, json_string(o != NULL ? o : ""))
	    == 0 ? 0 : ENGINE_ENOMEM;
}

/* The element of array list whose string member k is v, or NULL. */
static json_t *
find_by(const json_t *list, const char *k, const char *v)
{
	json_t	*x;
	size_t	 i;

	if (v == NULL)
		return NULL;
	json_array_foreach(list, i, x)
		if (json_is_string(json_object_get(x, k)) &&
		    strcmp(json_string_value(json_object_get(x, k)), v) == 0)
			return x;
	return NULL;
}

int
dsl_secrets_keep(json_t *wf, const json_t *old)
{
	json_t		*var, *node, *data, *odata, *hdrs, *v;
	const char	*k;
	size_t		 i;
	int		 rc = 0;

	json_array_foreach(json_object_get(wf, "environment_variables"), i,
	    var)
		if ((rc = keep_field(var, "value", find_by(json_object_get(old,
		    "environment_variables"), "name", json_string_value(
		    json_object_get(var, "name"))))) != 0)
			return rc;
	json_array_foreach(json_object_get(json_object_get(wf, "graph"),
	    "nodes"), i, node) {
		data = json_object_get(node, "data");
		odata = json_object_get(find_by(json_object_get(
		    json_object_get(old, "graph"), "nodes"), "id",
		    json_string_value(json_object_get(node, "id"))), "data");
		if ((rc = keep_field(json_object_get(json_object_get(data,
		    "authorization"), "config"), "api_key", json_object_get(
		    json_object_get(odata, "authorization"), "config"))) != 0)
			return rc;
		hdrs = json_object_get(data, "headers");
		if (!json_is_object(hdrs))
			continue;
		json_object_foreach(hdrs, k, v)
			if ((rc = keep_field(hdrs, k, json_object_get(odata,
			    "headers"))) != 0)
				return rc;
	}
	return rc;
}
