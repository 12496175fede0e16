/*
 * json_oom.h — jansson out of memory on demand, for tests of the paths
 * that must report it: json_oom_at(n) lets the calling thread make n more
 * allocations, fails the one after and lets the later ones succeed again
 * (a single failure shows a path that drops a value and carries on, which
 * a failure of everything after would hide); json_oom_at(-1) ends it.
 * Other threads, such as an engine's pruner, are never failed.
 * json_oom_install() must run before the first JSON value is made.
 */
#ifndef FLOWCGI_JSON_OOM_H
#define FLOWCGI_JSON_OOM_H

#include <stdlib.h>

#include <jansson.h>

static __thread long	json_oom_left = -1;	/* -1: never fail */
static __thread int	json_oom_hit;		/* the failure happened */

static void *
json_oom_malloc(size_t n)
{
	if (json_oom_left == 0) {
		json_oom_left = -1;
		json_oom_hit = 1;
		return NULL;
	}
	if (json_oom_left > 0)
		json_oom_left--;
	return malloc(n);
}

static inline void
json_oom_install(void)
{
	json_set_alloc_funcs(json_oom_malloc, free);
}

/* Fails the allocation after the next n; -1 cancels one still to come. */
static inline void
json_oom_at(long n)
{
	json_oom_left = n;
	json_oom_hit = 0;
}

/* 1 when the failure asked for by json_oom_at happened. */
static inline int
json_oom_happened(void)
{
	return json_oom_hit;
}

#endif
