/*
 * t_fcgi_arena.c — the per-request arena: zeroed, aligned memory from
 * shared blocks, large allocations in blocks of their own, sizes that
 * would wrap refused, strings, and cleanups run last-registered first
 * when the arena is freed.
 */
#include <stdint.h>

#include "fcgi/arena.c"
#include "tap.h"

static char	order[16];
static size_t	norder;

static void
note(void *p)
{
	if (norder < sizeof(order) - 1)
		order[norder++] = *(const char *)p;
}

static void
test_alloc(void)
{
	struct arena	*a;
	unsigned char	*p, *q, *big;
	size_t		 i;
	int		 zero = 1, aligned = 1;

	if (!CHECK((a = arena_new()) != NULL))
		return;
	for (i = 1; i < 3000; i += 7) {
		if ((p = arena_alloc(a, i)) == NULL)
			break;
		aligned &= (uintptr_t)p % _Alignof(max_align_t) == 0;
		zero &= p[0] == 0 && p[i - 1] == 0;
		memset(p, 0xa5, i);	/* ASan sees any overlap */
	}
	CHECK(i >= 3000);
	CHECK(aligned);
	CHECK(zero);
	/* 0 bytes is still a distinct pointer */
	p = arena_alloc(a, 0);
	q = arena_alloc(a, 0);
	CHECK(p != NULL && q != NULL && p != q);
	/* a large one, and small ones after it still come */
	big = arena_alloc(a, 1 << 20);
	CHECK(big != NULL && big[0] == 0 && big[(1 << 20) - 1] == 0);
	if (big != NULL)
		memset(big, 1, 1 << 20);
	CHECK(arena_alloc(a, 16) != NULL);
	arena_free(a);
}

/*
 * Sizes near SIZE_MAX, where rounding up or adding the block header
 * would wrap: refused, never served from a small block. (Sizes below
 * them reach malloc, which fails them: a sanitizer's malloc aborts
 * instead, so they are not tried here.)
 */
static void
test_wrap(void)
{
	struct arena	*a = arena_new();
	size_t		 edge = SIZE_MAX - sizeof(struct arena_block) -
			    sizeof(max_align_t);

	CHECK(arena_alloc(a, SIZE_MAX) == NULL);
	CHECK(arena_alloc(a, SIZE_MAX - 1) == NULL);
	CHECK(arena_alloc(a, SIZE_MAX - sizeof(max_align_t) + 1) == NULL);
	CHECK(arena_alloc(a, SIZE_MAX - sizeof(struct arena_block)) == NULL);
	CHECK(arena_alloc(a, edge + 1) == NULL);
	CHECK(arena_strndup(a, "x", SIZE_MAX) == NULL);
	/* and the arena still works */
	CHECK(arena_alloc(a, 100) != NULL);
	arena_free(a);
}

static void
test_strings(void)
{
	struct arena	*a = arena_new();
	char		 long_s[10000];

	CHECK_STR(arena_strdup(a, "hello"), "hello");
	CHECK_STR(arena_strndup(a, "hello", 3), "hel");
	CHECK_STR(arena_printf(a, "%s-%d", "n", 42), "n-42");
	memset(long_s, 'y', sizeof(long_s) - 1);
	long_s[sizeof(long_s) - 1] = '\0';
	CHECK_STR(arena_printf(a, "%s", long_s), long_s);
	arena_free(a);
}

static void
test_cleanups(void)
{
	struct arena	*a = arena_new();
	static char	 one = '1', two = '2', three = '3';
	json_t		*j;

	norder = 0;
	CHECK_INT(arena_cleanup_add(a, note, &one), 0);
	CHECK_INT(arena_cleanup_add(a, note, &two), 0);
	CHECK_INT(arena_cleanup_add(a, note, &three), 0);
	/* a JSON value lives as long as the arena */
	j = json_string("kept");
	CHECK(arena_json(a, j) == j);
	CHECK(arena_json(a, NULL) == NULL);
	CHECK_INT(j->refcount, 1);
	CHECK_INT(norder, 0);
	arena_free(a);
	order[norder] = '\0';
	CHECK_STR(order, "321");
	arena_free(NULL);
}

int
main(void)
{
	test_alloc();
	test_wrap();
	test_strings();
	test_cleanups();
	return tap_done();
}
