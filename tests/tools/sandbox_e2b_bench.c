/*
 * sandbox_e2b_bench.c — what the e2b provider adds per command, against
 * tests/fakes/fake_e2b.py on loopback: N runs of `true` through
 * sandbox_exec, against N plain HTTP round trips to the same fake (GET
 * /health on one reused curl handle, and through outbound_fetch, which
 * makes a new handle per call), against N local spawns of
 * `/bin/bash -l -c true` with a small environment (what the fake does for
 * each command); and the time of create + destroy.
 *
 *	sandbox_e2b_bench [runs]	(default 100; run from the repository
 *					 root or set FLOWCGI_SRC; needs python3)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "tests/tools/bench_sandbox.h"
#include "tests/unit/fake_proc.h"

#define KEY "e2b_0000000000000000000000000000000000000000"

static size_t
discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

int
main(int argc, char **argv)
{
	struct sandbox_config		 cfg;
	struct sandbox			*sb = NULL;
	struct outbound_req		 orq;
	struct outbound_resp		 ors;
	struct engine			 eng;
	struct conf			 c;
	CURL				*h = NULL;
	json_t				*opts = NULL;
	char				 err[ENGINE_ERRMAX], base[64], url[128];
	int				 n = argc > 1 ? (int)strtol(argv[1],
	    NULL, 10) : 100, i, port = 0, bad = 0, st, rc = 1;
	double				 t0, reuse, fresh, spawn, boxed;
	double				 cd = 0, create = 0, destroy = 0;
	long				 status;
	pid_t				 fake, pid;

	if (n <= 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	log_init(CONF_LOG_ERROR, NULL);
	if ((fake = fake_proc_start("e2b", &port)) < 0) {
		fprintf(stderr, "sandbox_e2b_bench: the fake did not start\n");
		return 1;
	}
	snprintf(base, sizeof(base), "http://127.0.0.1:%d", port);
	snprintf(url, sizeof(url), "%s/health", base);
	conf_defaults(&c);
	eng.conf = &c;
	eng.store = NULL;

	/* Raw round trips: GET /health (502 without a sandbox id: the
	 * proxy's answer, still one full exchange). */
	h = curl_easy_init();
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
	t0 = now_ms();
	for (i = 0; i < n; i++)
		if (curl_easy_perform(h) != CURLE_OK ||
		    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status) !=
		    CURLE_OK || status == 0)
			bad++;
	reuse = (now_ms() - t0) / n;
	curl_easy_cleanup(h);
	memset(&orq, 0, sizeof(orq));
	orq.url = url;
	orq.trusted = 1;
	t0 = now_ms();
	for (i = 0; i < n; i++) {
		if (outbound_fetch(&eng, &orq, err, &ors) != 0)
			bad++;
		outbound_resp_release(&ors);
	}
	fresh = (now_ms() - t0) / n;

	/* What the fake does per command. */
	t0 = now_ms();
	for (i = 0; i < n; i++) {
		if ((pid = fork()) == 0) {
			static char *const env[] = {
				"PATH=/usr/local/bin:/usr/bin:/bin",
				"HOME=/nonexistent", "LANG=C.UTF-8", NULL,
			};

			execle("/bin/bash", "bash", "-l", "-c", "true",
			    (char *)NULL, env);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0)
			bad++;
	}
	spawn = (now_ms() - t0) / n;

	opts = json_pack("{s:s, s:s}", "api_key", KEY, "e2b_api_url", base);
	sandbox_config_init(&cfg, &c);
	cfg.options = opts;
	/* create + destroy, 10 times */
	for (i = 0; i < 10; i++) {
		t0 = now_ms();
		if (sandbox_create(sandbox_provider_find("e2b"), &cfg, err,
		    &sb) != 0) {
			fprintf(stderr, "sandbox_e2b_bench: %s\n", err);
			goto out;
		}
		create += now_ms() - t0;
		t0 = now_ms();
		if (sandbox_destroy(sb, err) != 0)
			bad++;
		destroy += now_ms() - t0;
		sandbox_free(sb);
		sb = NULL;
	}
	cd = (create + destroy) / 10;
	if (sandbox_create(sandbox_provider_find("e2b"), &cfg, err, &sb) != 0) {
		fprintf(stderr, "sandbox_e2b_bench: %s\n", err);
		goto out;
	}
	boxed = bench_exec_true(sb, n, &bad);

	printf("runs: %d against fake_e2b.py on loopback\n", n);
	printf("HTTP round trip, reused curl handle:  %8.3f ms\n", reuse);
	printf("HTTP round trip, outbound_fetch:      %8.3f ms\n", fresh);
	printf("local spawn of bash -l -c true:       %8.3f ms\n", spawn);
	printf("e2b exec of true:                     %8.3f ms per run "
	    "(+%.3f ms over a round trip and a spawn)\n", boxed,
	    boxed - fresh - spawn);
	printf("e2b create + destroy: %.3f ms (create %.3f, destroy %.3f)\n",
	    cd, create / 10, destroy / 10);
	if (bad)
		printf("failed runs: %d\n", bad);
	rc = bad ? 1 : 0;
out:
	sandbox_free(sb);
	json_decref(opts);
	fake_proc_stop(&fake);
	return rc;
}
