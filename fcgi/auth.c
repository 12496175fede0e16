/*
 * auth.c — the admin token: created once per data directory, compared in
 * constant time.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "fcgi/internal.h"

#define TOKEN_FILE "admin_token"

static EVP_MD	*auth_md;

static void
auth_md_init(void)
{
	auth_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

static int
token_read(const char *path, char *buf)
{
	int	fd;
	ssize_t	n;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, AUTH_TOKEN_MAX - 1);
	close(fd);
	if (n <= 0) {
		errno = EINVAL;
		return -1;
	}
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	buf[n] = '\0';
	return n > 0 ? 0 : -1;
}

int
auth_token_load(const char *data_dir, char *buf)
{
	char		path[1100], tmp[1150];
	unsigned char	raw[32], b64[64];
	int		fd, n, rc = -1;

	snprintf(path, sizeof(path), "%s/%s", data_dir, TOKEN_FILE);
	if (token_read(path, buf) == 0)
		return 0;
	if (errno != ENOENT)
		return -1;
	if (RAND_bytes(raw, sizeof(raw)) != 1) {
		errno = EIO;
		return -1;
	}
	n = EVP_EncodeBlock(b64, raw, sizeof(raw));
	/* URL-safe and without padding, so it pastes cleanly anywhere. */
	while (n > 0 && b64[n - 1] == '=')
		n--;
	for (int i = 0; i < n; i++)
		if (b64[i] == '+')
			b64[i] = '-';
		else if (b64[i] == '/')
			b64[i] = '_';
	snprintf(buf, AUTH_TOKEN_MAX, "fca-%.*s", n, (char *)b64);
	/* Write a private temp file, then link it in: the first process to
	 * link wins and every other one reads the winner's token. */
	snprintf(tmp, sizeof(tmp), "%s/.%s.%ld", data_dir, TOKEN_FILE,
	    (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (write(fd, buf, strlen(buf)) == (ssize_t)strlen(buf) &&
	    write(fd, "\n", 1) == 1 && fsync(fd) == 0)
		rc = 0;
	close(fd);
	if (rc == 0 && link(tmp, path) != 0)
		rc = errno == EEXIST ? token_read(path, buf) : -1;
	unlink(tmp);
	OPENSSL_cleanse(raw, sizeof(raw));
	return rc;
}

void
auth_hash(const char *s, unsigned char out[32])
{
	static pthread_once_t	once = PTHREAD_ONCE_INIT;
	unsigned int		len = 32;

	/* Fetch the digest once: a fetch per call costs more than the hash. */
	pthread_once(&once, auth_md_init);
	if (auth_md == NULL ||
	    EVP_Digest(s, strlen(s), out, &len, auth_md, NULL) != 1)
		SHA256((const unsigned char *)s, strlen(s), out);
}

/* The credential of "Authorization: Bearer <credential>", or NULL. */
static const char *
auth_bearer(struct req *r)
{
	const char *h = req_param(r, "HTTP_AUTHORIZATION");

	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0)
		return NULL;
	return h + 7 + strspn(h + 7, " ");
}

int
auth_check_admin(struct req *r)
{
	const char	*h = auth_bearer(r);
	unsigned char	 a[SHA256_DIGEST_LENGTH];

	if (h == NULL)
		return -1;
	/* Compare hashes so the comparison takes the same time whatever
	 * the lengths and contents; the token's hash is made at start-up. */
	auth_hash(h, a);
	return CRYPTO_memcmp(a, r->admin_token_hash, sizeof(a)) == 0 ? 0 : -1;
}

int
auth_check_app(struct req *r)
{
	const char	*h = auth_bearer(r);
	int		 rc;

	if (h == NULL)
		return -1;
	rc = engine_key_resolve(r->eng, h, r->app_id);
	if (rc == ENGINE_EUNAVAIL || rc == ENGINE_ENOMEM || rc == ENGINE_ESTORE)
		return rc;
	return rc == 0 ? 0 : -1;
}
