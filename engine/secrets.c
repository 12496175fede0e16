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
#include <openssl/rand.h>

#include "engine/internal.h"

#define KEY_LEN		32
#define NONCE_LEN	12
#define TAG_LEN		16
#define PREFIX		"v1:"
#define SECRET_MAX	(64 * 1024)	/* bytes of one plain secret */

/* Reads the base64 key in path into key. Returns 0, or -1 with errno. */
static int
key_read(const char *path, unsigned char key[KEY_LEN])
{
	unsigned char	buf[128], raw[96];
	struct stat	st;
	ssize_t		n;
	int		fd, rc = -1, len;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(fd, &st) == 0 && (st.st_mode & 077) != 0)
		log_warn("%s is readable by others than its owner: chmod 600 "
		    "it", path);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	/* 32 bytes are 44 base64 characters with one '=' of padding. */
	if (n != 44 || (len = EVP_DecodeBlock(raw, buf, (int)n)) != 33) {
		errno = EINVAL;
		goto out;
	}
	memcpy(key, raw, KEY_LEN);
	rc = 0;
out:
	OPENSSL_cleanse(buf, sizeof(buf));
	OPENSSL_cleanse(raw, sizeof(raw));
	return rc;
}

/*
 * The key of e's data directory, made when missing. Returns 0, or
 * ENGINE_ESTORE with err saying why.
 */
static int
key_load(struct engine *e, unsigned char key[KEY_LEN], char *err)
{
	const char	*dir = e->conf->data_dir;
	char		 path[1100], tmp[1150] = "";
	unsigned char	 raw[KEY_LEN], b64[64] = "";
	int		 fd = -1, n, rc = ENGINE_ESTORE;

	snprintf(path, sizeof(path), "%s/secret.key", dir);
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
	snprintf(tmp, sizeof(tmp), "%s/.secret.key.%ld", dir, (long)getpid());
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

int
secret_encrypt(struct engine *e, const char *aad, const char *plain,
    char *err, char **out)
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
	if ((rc = key_load(e, key, err)) != 0)
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
	if ((rc = key_load(e, key, err)) != 0)
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
	rc = engine_invalid(err, "a stored secret does not decrypt with "
	    "the key file secret.key of the data directory (was the key "
	    "file replaced?)");
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
