/*
 * tap.h — the unit-test harness: TAP lines, a closing "N passed, N failed"
 * and a non-zero exit on any failure.
 *
 *	int main(void) { CHECK(1 + 1 == 2); return tap_done(); }
 */
#ifndef FLOWCGI_TAP_H
#define FLOWCGI_TAP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed, tap_skipped;

static inline int
tap_check(int cond, const char *file, int line, const char *expr)
{
	tap_n++;
	if (cond)
		printf("ok %d - %s:%d: %s\n", tap_n, file, line, expr);
	else {
		tap_failed++;
		printf("not ok %d - %s:%d: %s\n", tap_n, file, line, expr);
	}
	return cond;
}

/* CHECK(expr): one test; evaluates to expr's truth. */
#define CHECK(e) tap_check(!!(e), __FILE__, __LINE__, #e)

/* CHECK_STR(got, want): string equality, printing both on failure. */
#define CHECK_STR(got, want)                                                  \
	do {                                                                  \
		const char *g_ = (got), *w_ = (want);                         \
		if (!tap_check(g_ != NULL && strcmp(g_, w_) == 0, __FILE__,   \
		    __LINE__, #got " == " #want))                             \
			printf("#   got:  '%s'\n#   want: '%s'\n",                \
			    g_ ? g_ : "(null)", w_);                          \
	} while (0)

/* CHECK_INT(got, want): integer equality, printing both on failure. */
#define CHECK_INT(got, want)                                                  \
	do {                                                                  \
		long long g_ = (long long)(got), w_ = (long long)(want);      \
		if (!tap_check(g_ == w_, __FILE__, __LINE__,                  \
		    #got " == " #want))                                       \
			printf("#   got:  %lld\n#   want: %lld\n", g_, w_);       \
	} while (0)

/*
 * SKIP(why): one test that cannot run here (a missing prerequisite that a
 * user's machine may lack, such as the shared DSL corpus). It is counted
 * as skipped by tests/run-all.sh, never as passed.
 */
static inline void
tap_skip(const char *why)
{
	tap_n++;
	tap_skipped++;
	printf("ok %d # SKIP %s\n", tap_n, why);
}
#define SKIP(why) tap_skip(why)

/*
 * NEED(cmd): 1 when the command (bwrap, node, python3) is on the PATH
 * (or in /usr/bin, /bin); else one counted skip "needs <cmd>: ...", which
 * tests/run-all.sh says once in its closing line, and 0: the test ends
 * there (return tap_done()). The one rule for a missing tool, the same as
 * tests/e2e/lib.sh's need.
 */
static inline int
tap_need(const char *cmd)
{
	char	line[256];
	int	n;

	n = snprintf(line, sizeof(line), "PATH=\"$PATH:/usr/bin:/bin\" "
	    "command -v '%s' >/dev/null 2>&1", cmd);
	if (n > 0 && (size_t)n < sizeof(line) && system(line) == 0)
		return 1;
	n = snprintf(line, sizeof(line), "needs %s: not installed "
	    "(contrib/install-deps.sh)", cmd);
	tap_skip(n > 0 ? line : "needs a tool");
	return 0;
}
#define NEED(cmd) tap_need(cmd)

static inline int
tap_done(void)
{
	printf("1..%d\n# %d passed, %d failed, %d skipped\n", tap_n,
	    tap_n - tap_failed - tap_skipped, tap_failed, tap_skipped);
	return tap_failed == 0 && tap_n > 0 ? 0 : 1;
}

#endif
