/*
 * t_secrets.c — secrets at rest: AES-256-GCM round trips, the key file
 * (made once, mode 0600, shared by every engine on the directory), aad
 * binding, tampering, a replaced key file; a key given by configuration
 * (FLOWCGI_SECRET_KEY, secrets.key_file) and the links key derived from
 * it; the check the first sealed secret leaves, which an engine with
 * another key, or none, refuses to open at start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/internal.h"
#include "tests/unit/tap.h"
#include "tests/unit/tmp_engine.h"

#define KEY_A "q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq8w="
#define KEY_B "ERERERERERERERERERERERERERERERERERERERERERE="

/* An engine on dir with the key of the environment (NULL: none). */
static int
open_with(struct conf *c, const char *dir, const char *env, char *err,
    struct engine **e)
{
	conf_defaults(c);
	c->sync = 0;
	snprintf(c->data_dir, sizeof(c->data_dir), "%s", dir);
	if (env != NULL)
		setenv("FLOWCGI_SECRET_KEY", env, 1);
	else
		unsetenv("FLOWCGI_SECRET_KEY");
	err[0] = '\0';
	return engine_open(c, err, e);
}

static void
test_given_key(void)
{
	static struct conf	 c, c2;
	struct engine		*e = NULL, *e2 = NULL;
	unsigned char		 l1[32], l2[32];
	char			 err[ENGINE_ERRMAX], d1[256], d2[256], path[300];
	char			*enc = NULL, *plain = NULL;
	FILE			*f;

	if (tmp_dir_make("t_sk1", d1, sizeof(d1)) != 0 ||
	    tmp_dir_make("t_sk2", d2, sizeof(d2)) != 0)
		return;
	/* given in the environment: no key file, same links key on two
	 * data directories */
	CHECK_INT(open_with(&c, d1, KEY_A, err, &e), 0);
	CHECK_INT(secret_encrypt(e, "p", "sk-given", err, &enc), 0);
	snprintf(path, sizeof(path), "%s/secret.key", d1);
	CHECK(access(path, F_OK) != 0);
	CHECK_INT(open_with(&c2, d2, KEY_A, err, &e2), 0);
	CHECK_INT(secret_decrypt(e2, "p", enc, err, &plain), 0);
	CHECK_STR(plain, "sk-given");
	secret_free(plain);
	plain = NULL;
	CHECK_INT(secret_link_key(e, l1, err), 0);
	CHECK_INT(secret_link_key(e2, l2, err), 0);
	CHECK(memcmp(l1, l2, 32) == 0);
	snprintf(path, sizeof(path), "%s/link.key", d1);
	CHECK(access(path, F_OK) != 0);
	engine_close(e2);
	e2 = NULL;
	engine_close(e);
	e = NULL;

	/* another key: the first sealed secret left a check it cannot open */
	CHECK_INT(open_with(&c, d1, KEY_B, err, &e), ENGINE_EINVAL);
	CHECK(e == NULL);
	CHECK(strstr(err, "FLOWCGI_SECRET_KEY is not the key the secrets in "
	    "this database were sealed with") != NULL);
	CHECK(strstr(err, KEY_B) == NULL);
	/* none at all: the data directory has no secret.key */
	CHECK_INT(open_with(&c, d1, NULL, err, &e), ENGINE_ESTORE);
	CHECK(strstr(err, "secret.key") != NULL);
	CHECK_INT(open_with(&c, d1, "not-base64", err, &e), ENGINE_ESTORE);
	CHECK(strstr(err, "not a base64 32-byte key") != NULL);

	/* secrets.key_file: the same key in a file opens it */
	snprintf(path, sizeof(path), "%s/shared.key", d2);
	if ((f = fopen(path, "w")) != NULL) {
		fprintf(f, "%s\n", KEY_A);
		fclose(f);
	}
	chmod(path, 0600);
	conf_defaults(&c);
	c.sync = 0;
	snprintf(c.data_dir, sizeof(c.data_dir), "%s", d1);
	snprintf(c.secrets_key_file, sizeof(c.secrets_key_file), "%s", path);
	unsetenv("FLOWCGI_SECRET_KEY");
	CHECK_INT(engine_open(&c, err, &e), 0);
	CHECK_INT(secret_decrypt(e, "p", enc, err, &plain), 0);
	CHECK_STR(plain, "sk-given");
	secret_free(plain);
	plain = NULL;
	engine_close(e);
	e = NULL;
	/* a key file that is not there */
	snprintf(c.secrets_key_file, sizeof(c.secrets_key_file), "%s/none",
	    d2);
	CHECK_INT(engine_open(&c, err, &e), ENGINE_ESTORE);
	CHECK(strstr(err, "secrets.key_file") != NULL);
	free(enc);
	tmp_dir_remove(d1);
	tmp_dir_remove(d2);
}

int
main(void)
{
	static struct conf	 c;
	struct engine		*e = NULL, *e2 = NULL;
	struct stat		 st;
	char			 err[ENGINE_ERRMAX], dir[256];
	char			 path[sizeof(c.data_dir) + 16];
	char			*enc = NULL, *enc2 = NULL, *plain = NULL;
	FILE			*f;

	conf_defaults(&c);
	log_init(CONF_LOG_ERROR, NULL);
	if (tmp_engine_open("t_secrets", &c, dir, sizeof(dir), &e) != 0)
		return tap_done();
	snprintf(path, sizeof(path), "%s/secret.key", c.data_dir);
	CHECK(access(path, F_OK) != 0);		/* made on first use */

	CHECK(secret_encrypt(e, "model_providers/openai", "sk-abc123", err,
	    &enc) == 0);
	CHECK(enc != NULL && strncmp(enc, "v1:", 3) == 0);
	CHECK(enc != NULL && strstr(enc, "sk-abc123") == NULL);
	CHECK(stat(path, &st) == 0);
	CHECK_INT(st.st_mode & 0777, 0600);
	CHECK(secret_decrypt(e, "model_providers/openai", enc, err,
	    &plain) == 0);
	CHECK_STR(plain, "sk-abc123");
	secret_free(plain);
	plain = NULL;

	/* A fresh nonce each time. */
	CHECK(secret_encrypt(e, "model_providers/openai", "sk-abc123", err,
	    &enc2) == 0);
	CHECK(enc2 != NULL && strcmp(enc, enc2) != 0);

	/* Bound to its place: another aad does not decrypt. */
	CHECK_INT(secret_decrypt(e, "model_providers/other", enc, err,
	    &plain), ENGINE_EINVAL);
	CHECK(plain == NULL);
	CHECK(strstr(err, "does not decrypt") != NULL);

	/* Tampering is detected. */
	enc2[10] = enc2[10] == 'A' ? 'B' : 'A';
	CHECK_INT(secret_decrypt(e, "model_providers/openai", enc2, err,
	    &plain), ENGINE_EINVAL);
	CHECK_INT(secret_decrypt(e, NULL, "plain text", err, &plain),
	    ENGINE_EINVAL);
	CHECK_INT(secret_decrypt(e, NULL, "v1:abc", err, &plain),
	    ENGINE_EINVAL);
	free(enc2);
	enc2 = NULL;

	/* Empty and long secrets; no aad. */
	CHECK(secret_encrypt(e, NULL, "", err, &enc2) == 0);
	CHECK(secret_decrypt(e, NULL, enc2, err, &plain) == 0);
	CHECK_STR(plain, "");
	secret_free(plain);
	plain = NULL;
	free(enc2);
	enc2 = NULL;

	/* Another engine on the directory shares the key. */
	engine_close(e);
	e = NULL;
	CHECK(engine_open(&c, err, &e2) == 0);
	CHECK(secret_decrypt(e2, "model_providers/openai", enc, err,
	    &plain) == 0);
	CHECK_STR(plain, "sk-abc123");
	secret_free(plain);
	plain = NULL;

	/* A replaced key file: stored secrets no longer decrypt. */
	unlink(path);
	CHECK(secret_encrypt(e2, "x", "y", err, &enc2) == 0); /* new key */
	CHECK_INT(secret_decrypt(e2, "model_providers/openai", enc, err,
	    &plain), ENGINE_EINVAL);
	CHECK(strstr(err, "secret.key") != NULL);
	free(enc2);
	enc2 = NULL;

	/* A damaged key file is an error, not a silent new key. */
	if ((f = fopen(path, "w")) != NULL) {
		fputs("short\n", f);
		fclose(f);
	}
	CHECK_INT(secret_encrypt(e2, "x", "y", err, &enc2), ENGINE_ESTORE);
	CHECK(enc2 == NULL);

	free(enc);
	tmp_engine_close(e2, dir);
	test_given_key();
	return tap_done();
}
