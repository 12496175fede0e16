/*
 * sandbox_bench.c — what the local sandbox adds to running a program:
 * N runs of `true` through sandbox_exec against N plain fork/exec/wait of
 * the same program, and the ratio; then what sandbox.network adds (the
 * forwarder and the proxy's mount, engine/sandbox/net.c): N runs in a
 * sandbox with network against N in one without, taken in turns so that
 * both see the same load.
 *
 *	sandbox_bench [runs]	(default 200; needs bwrap)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/tools/bench_sandbox.h"

int
main(int argc, char **argv)
{
	static const char *const	 cmd[] = {"true", NULL};
	struct sandbox_exec_req		 req = {0};
	struct sandbox_exec_result	 res;
	struct sandbox_config		 cfg;
	struct sandbox			*sb = NULL, *sbn = NULL;
	struct conf			 c;
	char				 err[ENGINE_ERRMAX], dir[] =
	    "/tmp/sandbox_bench_XXXXXX", rm[64];
	int				 n = argc > 1 ? (int)strtol(argv[1],
	    NULL, 10) : 200, i, st, bad = 0;
	double				 t0, plain, boxed, create, destroy;
	double				 net_on = 0, net_off = 0;
	pid_t				 pid;

	if (n <= 0 || mkdtemp(dir) == NULL)
		return 2;
	/* plain fork + exec + wait */
	t0 = now_ms();
	for (i = 0; i < n; i++) {
		if ((pid = fork()) == 0) {
			execlp("true", "true", (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0)
			bad++;
	}
	plain = (now_ms() - t0) / n;

	conf_defaults(&c);
	snprintf(c.data_dir, sizeof(c.data_dir), "%s", dir);
	sandbox_config_init(&cfg, &c);
	t0 = now_ms();
	if (sandbox_create(&sandbox_provider_local, &cfg, err, &sb) != 0) {
		fprintf(stderr, "sandbox_bench: %s\n", err);
		return 1;
	}
	create = now_ms() - t0;
	boxed = bench_exec_true(sb, n, &bad);
	req.argv = cmd;
	cfg.network = 1;
	if (sandbox_create(&sandbox_provider_local, &cfg, err, &sbn) != 0) {
		fprintf(stderr, "sandbox_bench: network: %s\n", err);
		return 1;
	}
	for (i = 0; i < 2 * n; i++) {
		t0 = now_ms();
		if (sandbox_exec(i % 2 ? sbn : sb, &req, err, &res) != 0 ||
		    res.exit_code != 0)
			bad++;
		*(i % 2 ? &net_on : &net_off) += now_ms() - t0;
		sandbox_exec_result_release(&res);
	}
	sandbox_free(sbn);
	cfg.network = 0;
	t0 = now_ms();
	sandbox_free(sb);
	destroy = now_ms() - t0;
	snprintf(rm, sizeof(rm), "rm -rf %s", dir);
	(void)system(rm);

	printf("runs: %d (%s, %s)\n", n, geteuid() == 0 ?
	    "root: setpriv to sandbox.uid, tmpfs workspace" :
	    "unprivileged: user namespace", cfg.network ? "network" :
	    "no network");
	printf("plain fork/exec of true: %8.3f ms per run\n", plain);
	printf("sandbox exec of true:    %8.3f ms per run\n", boxed);
	printf("ratio:                   %8.1fx (+%.3f ms per run)\n",
	    boxed / plain, boxed - plain);
	printf("with sandbox.network:    %8.3f ms per run, without %.3f "
	    "(in turns): %.2fx\n", net_on / n, net_off / n, net_on / net_off);
	printf("sandbox create: %.3f ms, destroy: %.3f ms\n", create, destroy);
	if (bad)
		printf("failed runs: %d\n", bad);
	return bad ? 1 : 0;
}
