/*
 * pg_private.h — the PostgreSQL server of a unit test (t_storage_pg,
 * t_storage_migrate): FLOWCGI_TEST_PG_URL when given, else a private
 * server that tests/e2e/postgres.sh starts under the test's directory and
 * pg_ctl("stop") removes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* The private server's directory for postgres.sh; "" when given a URL or
 * when there is none. */
static char pg_dir[300];
static char pg_url_buf[256];

static int
pg_ctl(const char *what)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "sh tests/e2e/postgres.sh %s '%s'", what,
	    pg_dir);
	return system(cmd);
}

/* libpq's notices (of DROP ... CASCADE), unwanted in TAP output. */
static void
notice_quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/*
 * The database's URL into *url (a private server under dir): 0, 77 when there is no PostgreSQL here
 * (the caller skips), -1 when the private server did not start.
 */
static int
pg_private_start(const char *dir, const char **url)
{
	const char	*env;
	char		 path[400];
	FILE		*f;
	int		 rc;

	if ((env = getenv("FLOWCGI_TEST_PG_URL")) != NULL && *env != '\0') {
		*url = env;
		return 0;
	}
	snprintf(pg_dir, sizeof(pg_dir), "%s/pg", dir);
	fflush(stdout);
	rc = pg_ctl("start");
	if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) {
		pg_dir[0] = '\0';
		return 77;
	}
	snprintf(path, sizeof(path), "%s/url", pg_dir);
	if (rc != 0 || (f = fopen(path, "r")) == NULL)
		return -1;
	if (fgets(pg_url_buf, sizeof(pg_url_buf), f) == NULL) {
		fclose(f);
		return -1;
	}
	fclose(f);
	pg_url_buf[strcspn(pg_url_buf, "\n")] = '\0';
	*url = pg_url_buf;
	return 0;
}
