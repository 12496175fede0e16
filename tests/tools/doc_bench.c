/*
 * doc_bench.c — reads one document with engine/documents/ (doc_extract,
 * default limits but pages) and prints "<parts> <text bytes> <seconds>";
 * tests/bench/documents.sh runs it beside the reference tool. Usage:
 * doc_bench <ext> <file>.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/documents/documents.h"

int
main(int argc, char **argv)
{
	struct doc_limits	 lim;
	struct doc		 d;
	struct timespec		 t0, t1;
	char			 err[512], *data = NULL;
	FILE			*f = NULL;
	long			 n;
	int			 rc = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: doc_bench <ext> <file>\n");
		goto out;
	}
	if ((f = fopen(argv[2], "rb")) == NULL || fseek(f, 0, SEEK_END) != 0 ||
	    (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    (data = malloc((size_t)n + 1)) == NULL ||
	    fread(data, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "doc_bench: cannot read %s\n", argv[2]);
		goto out;
	}
	doc_limits_default(&lim);
	lim.max_pages = 100000;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (doc_extract(argv[1], data, (size_t)n, &lim, &d, err,
	    sizeof(err)) != 0) {
		fprintf(stderr, "doc_bench: %s\n", err);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%zu %zu %.4f\n", d.nparts, strlen(d.text),
	    (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	doc_release(&d);
	rc = 0;
out:
	if (f != NULL)
		fclose(f);
	free(data);
	return rc;
}
