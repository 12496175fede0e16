/*
 * bench_stats.h — the clock and the order statistics the in-process
 * benchmarks under tests/tools share.
 */
#ifndef BENCH_STATS_H
#define BENCH_STATS_H

#include <stdlib.h>
#include <time.h>

/* CLOCK_MONOTONIC in microseconds. */
static inline double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* CLOCK_MONOTONIC in milliseconds. */
static inline double
now_ms(void)
{
	return now_us() / 1e3;
}

static inline int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of v[0..n) (sorts v); 0 when empty. */
static inline double
median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The p-th percentile of v[0..n) (sorts v), nearest rank; 0 when empty. */
static inline double
pct(double *v, int n, double p)
{
	int i;

	if (n == 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	i = (int)(p / 100.0 * (n - 1) + 0.5);
	return v[i];
}

#endif
