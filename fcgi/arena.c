/*
 * arena.c — per-request allocation with cleanups, in the manner of nginx
 * pools: many small allocations, one free at the end of the request.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi/internal.h"

#define ARENA_BLOCK 8192

struct arena_block {
	struct arena_block	*next;
	size_t			 used, size;
	max_align_t		 data[];
};

struct arena_cleanup {
	struct arena_cleanup	*next;
	void			 (*fn)(void *);
	void			*p;
};

struct arena {
	struct arena_block	*blocks;
	struct arena_cleanup	*cleanups;
};

struct arena *
arena_new(void)
{
	return calloc(1, sizeof(struct arena));
}

void
arena_free(struct arena *a)
{
	struct arena_block	*b, *nb;
	struct arena_cleanup	*c;

	if (a == NULL)
		return;
	/* Cleanups live in the blocks: run them all before freeing any. */
	for (c = a->cleanups; c != NULL; c = c->next)
		c->fn(c->p);
	for (b = a->blocks; b != NULL; b = nb) {
		nb = b->next;
		free(b);
	}
	free(a);
}

void *
arena_alloc(struct arena *a, size_t n)
{
	struct arena_block	*b = a->blocks;
	size_t			 al = sizeof(max_align_t), size;
	void			*p;

	/* Rounding up and the block header must not wrap a size near
	 * SIZE_MAX into a small one. */
	if (n > SIZE_MAX - sizeof(*b) - al)
		return NULL;
	n = (n + al - 1) / al * al;
	if (n == 0)
		n = al;
	if (b == NULL || b->size - b->used < n) {
		size = n > ARENA_BLOCK / 2 ? n : ARENA_BLOCK;
		if ((b = malloc(sizeof(*b) + size)) == NULL)
			return NULL;
		b->used = 0;
		b->size = size;
		/* A large one-off block goes second so the current block
		 * keeps serving small allocations. */
		if (size > ARENA_BLOCK && a->blocks != NULL) {
			b->next = a->blocks->next;
			a->blocks->next = b;
		} else {
			b->next = a->blocks;
			a->blocks = b;
		}
	}
	p = (char *)b->data + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

char *
arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p;

	if (n == SIZE_MAX || (p = arena_alloc(a, n + 1)) == NULL)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *
arena_printf(struct arena *a, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;
	char	*p;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || (p = arena_alloc(a, (size_t)n + 1)) == NULL)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

int
arena_cleanup_add(struct arena *a, void (*fn)(void *), void *p)
{
	struct arena_cleanup *c;

	if ((c = arena_alloc(a, sizeof(*c))) == NULL)
		return -1;
	c->fn = fn;
	c->p = p;
	c->next = a->cleanups;
	a->cleanups = c;
	return 0;
}

static void
cleanup_json(void *p)
{
	json_decref(p);
}

json_t *
arena_json(struct arena *a, json_t *j)
{
	if (j != NULL && arena_cleanup_add(a, cleanup_json, j) != 0) {
		json_decref(j);
		return NULL;
	}
	return j;
}
