/*
 * t_engine_links.c — signed links (engine/records/links.c): a link verifies
 * for its own method and path only, and not once any of its parts changed;
 * malformed values are refused without a crash; expiry and the longest
 * lifetime are kept; the key is made 0600 on first use, lasts across
 * restarts, and removing it revokes every link; a link spent once
 * (engine_link_use) is spent for good, of racing uses exactly one wins,
 * and spent marks past their expiry are deleted by later uses.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/records/links.c"
#include "tests/unit/tap.h"
#include "tests/unit/tmp_engine.h"

static struct engine	*eng;

/* The expires_at, nonce and sign values of query q, into the buffers. */
static void
split(const char *q, char *exp, char *nonce, char *sign)
{
	CHECK(sscanf(q, "expires_at=%31[0-9]&nonce=%80[0-9a-f]&sign=%80s",
	    exp, nonce, sign) == 3);
}

static int
verify(const char *m, const char *p, const char *exp, const char *nonce,
    const char *sign, char *err)
{
	return engine_link_verify(eng, m, p, exp, nonce, sign, 3600, err);
}

static void
test_round_trip(void)
{
	char	q[ENGINE_LINK_QUERY_MAX], err[ENGINE_ERRMAX] = "";
	char	exp[32], nonce[81], sign[81], bad[81], longer[32];
	char	q2[ENGINE_LINK_QUERY_MAX];
	const char *p = "/console/api/files/app-assets/a/b/download";
	int64_t	at = 0;

	CHECK_INT(engine_link_sign(eng, "GET", p, 600, q, &at, err), 0);
	CHECK(at > engine_now() + 590 && at <= engine_now() + 600);
	split(q, exp, nonce, sign);
	CHECK_INT(strlen(nonce), 32);
	CHECK_INT(strlen(sign), 43);
	CHECK_INT(verify("GET", p, exp, nonce, sign, err), 0);
	/* Each part changed: the method, the path, the expiry, the nonce,
	 * one character of the signature. */
	CHECK_INT(verify("PUT", p, exp, nonce, sign, err), ENGINE_EINVAL);
	CHECK(strstr(err, "signature does not match") != NULL);
	CHECK_INT(verify("GET", "/console/api/files/app-assets/a/c/download",
	    exp, nonce, sign, err), ENGINE_EINVAL);
	CHECK_INT(verify("GET", "/console/api/files/app-assets/a/b/download/",
	    exp, nonce, sign, err), ENGINE_EINVAL);
	snprintf(longer, sizeof(longer), "%lld", (long long)at + 1);
	CHECK_INT(verify("GET", p, longer, nonce, sign, err), ENGINE_EINVAL);
	snprintf(bad, sizeof(bad), "%s", nonce);
	bad[0] = bad[0] == '0' ? '1' : '0';
	CHECK_INT(verify("GET", p, exp, bad, sign, err), ENGINE_EINVAL);
	snprintf(bad, sizeof(bad), "%s", sign);
	bad[42] = bad[42] == 'A' ? 'B' : 'A';
	CHECK_INT(verify("GET", p, exp, nonce, bad, err), ENGINE_EINVAL);
	/* Two links to one path differ (their nonces). */
	CHECK_INT(engine_link_sign(eng, "GET", p, 600, q2, NULL, err), 0);
	CHECK(strcmp(q, q2) != 0);
	/* A lifetime longer than allowed now: refused though well signed. */
	CHECK_INT(engine_link_verify(eng, "GET", p, exp, nonce, sign, 60, err),
	    ENGINE_EINVAL);
	CHECK(strstr(err, "longer than") != NULL);
}

static void
test_malformed(void)
{
	char		 q[ENGINE_LINK_QUERY_MAX], err[ENGINE_ERRMAX];
	char		 exp[32], nonce[81], sign[81], s2[90];
	const char	*p = "/x";

	CHECK_INT(engine_link_sign(eng, "PUT", p, 60, q, NULL, err), 0);
	split(q, exp, nonce, sign);
	CHECK_INT(verify("PUT", p, NULL, nonce, sign, err), ENGINE_EINVAL);
	CHECK(strstr(err, "expires_at, nonce and sign") != NULL);
	CHECK_INT(verify("PUT", p, exp, NULL, sign, err), ENGINE_EINVAL);
	CHECK_INT(verify("PUT", p, exp, nonce, NULL, err), ENGINE_EINVAL);
	CHECK_INT(verify("PUT", p, "", nonce, sign, err), ENGINE_EINVAL);
	CHECK_INT(verify("PUT", p, "-5", nonce, sign, err), ENGINE_EINVAL);
	CHECK_INT(verify("PUT", p, "12x", nonce, sign, err), ENGINE_EINVAL);
	CHECK_INT(verify("PUT", p, "99999999999999999999999", nonce, sign,
	    err), ENGINE_EINVAL);
	CHECK(strstr(err, "malformed") != NULL);
	CHECK_INT(verify("PUT", p, exp, "ABCDEF0123456789", sign, err),
	    ENGINE_EINVAL);
	CHECK_INT(verify("PUT", p, exp, "abc", sign, err), ENGINE_EINVAL);
	snprintf(s2, sizeof(s2), "%s=", sign);
	CHECK_INT(verify("PUT", p, exp, nonce, s2, err), ENGINE_EINVAL);
	snprintf(s2, sizeof(s2), "%s", sign);
	s2[5] = '+';
	CHECK_INT(verify("PUT", p, exp, nonce, s2, err), ENGINE_EINVAL);
	CHECK(strstr(err, "malformed") != NULL);
	CHECK_INT(verify("PUT", p, exp, nonce, "", err), ENGINE_EINVAL);
	CHECK_INT(verify("PUT", p, exp, nonce, sign, err), 0);
}

static void
test_expired(void)
{
	char	 exp[32], sign[SIGN_LEN + 1], err[ENGINE_ERRMAX];
	char	 nonce[] = "00112233445566778899aabbccddeeff";

	/* Signed properly, but for a moment already past. */
	snprintf(exp, sizeof(exp), "%lld", (long long)engine_now() - 1);
	CHECK_INT(link_mac(eng, "GET", "/x", exp, nonce, sign, err), 0);
	CHECK_INT(verify("GET", "/x", exp, nonce, sign, err), ENGINE_EINVAL);
	CHECK(strstr(err, "expired at") != NULL);
	snprintf(exp, sizeof(exp), "%lld", (long long)engine_now());
	CHECK_INT(link_mac(eng, "GET", "/x", exp, nonce, sign, err), 0);
	CHECK_INT(verify("GET", "/x", exp, nonce, sign, err), ENGINE_EINVAL);
	snprintf(exp, sizeof(exp), "%lld", (long long)engine_now() + 30);
	CHECK_INT(link_mac(eng, "GET", "/x", exp, nonce, sign, err), 0);
	CHECK_INT(verify("GET", "/x", exp, nonce, sign, err), 0);
}

/* ====== Single use ====== */

#define RACERS 8

static const char	*race_exp, *race_nonce;
static atomic_int	 race_won, race_lost, race_other;

static void *
racer(void *arg)
{
	char	err[ENGINE_ERRMAX] = "";
	int	rc;

	(void)arg;
	rc = engine_link_use(eng, race_exp, race_nonce, err);
	if (rc == 0)
		atomic_fetch_add(&race_won, 1);
	else if (rc == ENGINE_EEXIST)
		atomic_fetch_add(&race_lost, 1);
	else
		atomic_fetch_add(&race_other, 1);
	return NULL;
}

/* The marks in the meta database, counted in a read transaction. */
static int
used_marks(void)
{
	struct store_txn	*t = NULL;
	json_t			*all = NULL;
	int			 n = -1;

	if (store_read_begin(eng->store, &t) != 0)
		return -1;
	if (records_collect(t, STORE_DB_META, USED_PREFIX, NULL, 0,
	    &all) == 0)
		n = (int)json_object_size(all);
	json_decref(all);
	store_read_end(t);
	return n;
}

static void
test_single_use(void)
{
	char		 exp[32], err[ENGINE_ERRMAX] = "";
	char		 nonce[] = "0123456789abcdef0123456789abcdef";
	char		 old[32];
	pthread_t	 th[RACERS];
	int		 i, n0;

	snprintf(exp, sizeof(exp), "%lld", (long long)engine_now() + 60);
	CHECK_INT(engine_link_use(eng, exp, nonce, err), 0);
	CHECK_INT(engine_link_use(eng, exp, nonce, err), ENGINE_EEXIST);
	CHECK(strstr(err, "used already") != NULL);
	/* another nonce, or another expiry, is another link */
	nonce[0] = '1';
	CHECK_INT(engine_link_use(eng, exp, nonce, err), 0);
	snprintf(exp, sizeof(exp), "%lld", (long long)engine_now() + 61);
	CHECK_INT(engine_link_use(eng, exp, nonce, err), 0);
	CHECK_INT(engine_link_use(eng, "x", nonce, err), ENGINE_EINVAL);
	CHECK_INT(engine_link_use(eng, exp, "zz", err), ENGINE_EINVAL);

	/* of uses at once, exactly one wins */
	nonce[0] = '2';
	race_exp = exp;
	race_nonce = nonce;
	for (i = 0; i < RACERS; i++)
		CHECK_INT(pthread_create(&th[i], NULL, racer, NULL), 0);
	for (i = 0; i < RACERS; i++)
		pthread_join(th[i], NULL);
	CHECK_INT(atomic_load(&race_won), 1);
	CHECK_INT(atomic_load(&race_lost), RACERS - 1);
	CHECK_INT(atomic_load(&race_other), 0);

	/* marks past their expiry go with the next use */
	n0 = used_marks();
	CHECK_INT(n0, 4);
	for (i = 0; i < 3; i++) {
		snprintf(old, sizeof(old), "%lld", (long long)engine_now() -
		    100 + i);
		nonce[0] = (char)('a' + i);
		CHECK_INT(engine_link_use(eng, old, nonce, err), 0);
	}
	CHECK(used_marks() <= n0 + 1);
	nonce[0] = 'f';
	CHECK_INT(engine_link_use(eng, exp, nonce, err), 0);
	CHECK_INT(used_marks(), n0 + 1);
}

int
main(void)
{
	static struct conf	 c;
	struct stat		 st;
	char			 err[ENGINE_ERRMAX], dir[256];
	char			 path[sizeof(c.data_dir) + 16];
	char			 q[ENGINE_LINK_QUERY_MAX];
	char			 exp[32], nonce[81], sign[81];

	conf_defaults(&c);
	c.map_size = 1 << 20;
	log_init(CONF_LOG_ERROR, NULL);
	if (tmp_engine_open("t_engine_links", &c, dir, sizeof(dir), &eng) != 0)
		return tap_done();
	snprintf(path, sizeof(path), "%s/link.key", c.data_dir);
	CHECK(access(path, F_OK) != 0);		/* made on first use */

	test_round_trip();
	CHECK(stat(path, &st) == 0);
	CHECK_INT(st.st_mode & 0777, 0600);
	test_malformed();
	test_expired();
	test_single_use();

	/* The key lasts across a restart; removing it revokes the links. */
	CHECK_INT(engine_link_sign(eng, "GET", "/k", 60, q, NULL, err), 0);
	split(q, exp, nonce, sign);
	engine_close(eng);
	CHECK(engine_open(&c, err, &eng) == 0);
	CHECK_INT(verify("GET", "/k", exp, nonce, sign, err), 0);
	CHECK(unlink(path) == 0);
	CHECK_INT(verify("GET", "/k", exp, nonce, sign, err), ENGINE_EINVAL);
	tmp_engine_close(eng, dir);
	return tap_done();
}
