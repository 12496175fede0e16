/*
 * t_fcgi_auth.c — the admin token: made once per data directory (0600,
 * "fca-" and 43 URL-safe characters), read back by every later start,
 * and compared as a hash in constant time against what Authorization:
 * Bearer carries.
 */
#include <sys/stat.h>

#include "fcgi/auth.c"
#include "tap.h"
#include "fcgi_fake.h"

static struct conf conf;

static void
test_token(const char *dir)
{
	char		 tok[AUTH_TOKEN_MAX], again[AUTH_TOKEN_MAX];
	char		 path[600];
	struct stat	 st;
	size_t		 i;
	int		 safe = 1;
	FILE		*fp;

	CHECK_INT(auth_token_load(dir, tok), 0);
	CHECK(strncmp(tok, "fca-", 4) == 0);
	CHECK_INT(strlen(tok), 4 + 43);
	for (i = 4; tok[i] != '\0'; i++)
		safe &= (tok[i] >= 'a' && tok[i] <= 'z') || (tok[i] >= 'A' &&
		    tok[i] <= 'Z') || (tok[i] >= '0' && tok[i] <= '9') ||
		    tok[i] == '-' || tok[i] == '_';
	CHECK(safe);
	snprintf(path, sizeof(path), "%s/admin_token", dir);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK_INT(auth_token_load(dir, again), 0);
	CHECK_STR(again, tok);
	/* an edited file: its line, without the line end */
	if ((fp = fopen(path, "w")) != NULL) {
		fputs("mine\r\n", fp);
		fclose(fp);
	}
	CHECK_INT(auth_token_load(dir, again), 0);
	CHECK_STR(again, "mine");
	/* an empty one is no token */
	if ((fp = fopen(path, "w")) != NULL)
		fclose(fp);
	CHECK_INT(auth_token_load(dir, again), -1);
	CHECK_INT(auth_token_load("/nonexistent/dir", again), -1);
}

static int
check_with(const unsigned char *hash, const char *authorization)
{
	struct fake	f;
	int		rc;

	if (authorization != NULL)
		fake_init(&f, &conf, "HTTP_AUTHORIZATION", authorization,
		    NULL);
	else
		fake_init(&f, &conf, NULL);
	f.r.admin_token_hash = hash;
	rc = auth_check_admin(&f.r);
	fake_release(&f);
	return rc;
}

static void
test_check(void)
{
	static const unsigned char abc[32] = {
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41,
		0x40, 0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3,
		0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00,
		0x15, 0xad,
	};
	unsigned char	h[32];

	auth_hash("abc", h);	/* FIPS 180-2's example */
	CHECK(memcmp(h, abc, 32) == 0);
	auth_hash("fca-secret", h);
	CHECK_INT(check_with(h, "Bearer fca-secret"), 0);
	CHECK_INT(check_with(h, "bearer   fca-secret"), 0);
	CHECK_INT(check_with(h, "Bearer fca-secreT"), -1);
	CHECK_INT(check_with(h, "Bearer fca-secret "), -1);
	CHECK_INT(check_with(h, "Bearer fca-secre"), -1);
	CHECK_INT(check_with(h, "Bearer "), -1);
	CHECK_INT(check_with(h, "Basic fca-secret"), -1);
	CHECK_INT(check_with(h, "fca-secret"), -1);
	CHECK_INT(check_with(h, NULL), -1);
}

int
main(void)
{
	char	dir[256], cmd[300];

	conf_defaults(&conf);
	snprintf(dir, sizeof(dir), "%s/t_fcgi_auth.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!CHECK(mkdtemp(dir) != NULL))
		return tap_done();
	test_token(dir);
	test_check();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return tap_done();
}
