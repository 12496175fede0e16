/*
 * fcgi_trivial.c — the baseline for `make bench`: a FastCGI responder with
 * flowcgi's process model and none of its work.
 *
 *     fcgi_trivial HOST:PORT THREADS
 *
 * Like `flowcgi serve`, it calls FCGX_Init, opens its own socket with
 * FCGX_OpenSocket (backlog 1024) and runs THREADS worker threads, each with
 * its own FCGX_Request in an FCGX_Accept_r loop. Every request, whatever its
 * method and path, gets the same 200 answer: a JSON body shaped and sized like
 * flowcgi's app detail (GET /console/api/apps/{id}), built once at start.
 * Measured through the same nginx as flowcgi, the difference between the two
 * is what flowcgi itself costs. SIGTERM or SIGINT ends it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcgiapp.h>

#define TRIVIAL_THREADS_MAX 1024

/* An app detail as flowcgi sends it for a new workflow app (668 bytes). */
static const char body[] =
    "{\"id\":\"01a22b55-49ba-7003-a3d4-6fa3e9c177cf\",\"name\":\"bench\","
    "\"description\":\"\",\"mode\":\"workflow\",\"icon_type\":\"emoji\","
    "\"icon\":\"\xf0\x9f\xa4\x96\",\"icon_background\":\"#FFEAD5\","
    "\"use_icon_as_answer_icon\":false,\"max_active_requests\":null,"
    "\"created_at\":1796023339,\"updated_at\":1796023339,\"icon_url\":null,"
    "\"model_config\":null,\"workflow\":{\"id\":"
    "\"01a22b55-49ba-7004-83aa-3b89f09eff7c\",\"created_by\":null,"
    "\"created_at\":1796023339,\"updated_by\":null,"
    "\"updated_at\":1796023339},\"created_by\":null,\"updated_by\":null,"
    "\"tags\":[],\"access_mode\":\"public\",\"runtime_type\":\"classic\","
    "\"enable_site\":true,\"enable_api\":true,\"tracing\":null,"
    "\"deleted_tools\":[],\"site\":null,"
    "\"api_base_url\":\"http://127.0.0.1/v1\",\"revision\":1}";

/* Headers and body, filled once by main() before any thread starts. */
static char	response[sizeof(body) + 256];
static int	response_len;
static int	listen_fd = -1;

static void *
worker_main(void *arg)
{
	FCGX_Request r;

	(void)arg;
	if (FCGX_InitRequest(&r, listen_fd, 0) != 0) {
		fprintf(stderr, "fcgi_trivial: cannot set up a request\n");
		return NULL;
	}
	while (FCGX_Accept_r(&r) >= 0) {
		FCGX_PutStr(response, response_len, r.out);
		FCGX_Finish_r(&r);
	}
	fprintf(stderr, "fcgi_trivial: accept: %s\n", strerror(errno));
	FCGX_Free(&r, 0);
	return NULL;
}

/* Parses a decimal count within [1, TRIVIAL_THREADS_MAX]; -1 if invalid. */
static int
parse_threads(const char *s)
{
	char	*end;
	long	 v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 1 ||
	    v > TRIVIAL_THREADS_MAX)
		return -1;
	return (int)v;
}

int
main(int argc, char **argv)
{
	pthread_t	*tids = NULL;
	sigset_t	 stop;
	int		 i, n, nthreads, sig, rc = 1;

	if (argc != 3 || (nthreads = parse_threads(argv[2])) < 0) {
		fprintf(stderr, "usage: fcgi_trivial HOST:PORT THREADS "
		    "(1-%d)\n", TRIVIAL_THREADS_MAX);
		return 2;
	}
	n = snprintf(response, sizeof(response), "Status: 200 OK\r\n"
	    "Content-Type: application/json\r\n"
	    "Content-Length: %zu\r\n\r\n%s", sizeof(body) - 1, body);
	if (n < 0 || (size_t)n >= sizeof(response))
		return 1;
	response_len = n;

	signal(SIGPIPE, SIG_IGN);
	/* Workers inherit a mask that leaves the stop signals to main(). */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);

	if (FCGX_Init() != 0) {
		fprintf(stderr, "fcgi_trivial: cannot initialise libfcgi\n");
		goto out;
	}
	if ((listen_fd = FCGX_OpenSocket(argv[1], 1024)) < 0) {
		fprintf(stderr, "fcgi_trivial: cannot listen on '%s': %s\n",
		    argv[1], strerror(errno));
		goto out;
	}
	if ((tids = calloc((size_t)nthreads, sizeof(*tids))) == NULL)
		goto out;
	for (i = 0; i < nthreads; i++) {
		if (pthread_create(&tids[i], NULL, worker_main, NULL) != 0) {
			fprintf(stderr, "fcgi_trivial: cannot start thread "
			    "%d\n", i);
			goto out;
		}
	}
	fprintf(stderr, "fcgi_trivial: %d threads on %s\n", nthreads,
	    argv[1]);
	if (sigwait(&stop, &sig) == 0)
		rc = 0;
out:
	/* Workers may sit in accept() or in a request: end the process
	 * without joining them; the kernel closes every socket. */
	free(tids);
	return rc;
}
