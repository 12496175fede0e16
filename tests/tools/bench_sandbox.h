/*
 * bench_sandbox.h — what the sandbox benchmarks under tests/tools share:
 * runs of `true` through sandbox_exec, timed.
 */
#ifndef BENCH_SANDBOX_H
#define BENCH_SANDBOX_H

#include "engine/sandbox/sandbox.h"
#include "tests/tools/bench_stats.h"

/*
 * Runs `true` n times through sandbox_exec in sb; returns the mean in ms
 * per run and adds the runs that failed or exited non-zero to *bad.
 */
static inline double
bench_exec_true(struct sandbox *sb, int n, int *bad)
{
	static const char *const	 argv[] = {"true", NULL};
	struct sandbox_exec_req		 req = {0};
	struct sandbox_exec_result	 res;
	char				 err[ENGINE_ERRMAX];
	double				 t0 = now_ms();
	int				 i;

	req.argv = argv;
	for (i = 0; i < n; i++) {
		if (sandbox_exec(sb, &req, err, &res) != 0 ||
		    res.exit_code != 0)
			(*bad)++;
		sandbox_exec_result_release(&res);
	}
	return (now_ms() - t0) / n;
}

#endif
