/*
 * t_secrets.c — secrets at rest: AES-256-GCM round trips, the key file
 * (made once, mode 0600, shared by every engine on the directory), aad
 * binding, tampering, a replaced key file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/internal.h"
#include "tests/unit/tap.h"
#include "tests/unit/tmp_engine.h"

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
	return tap_done();
}
