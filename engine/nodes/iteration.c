/*
 * iteration.c — the iteration container: runs its children once per item
 * of an array, each round in a pool of its own that owns the container's
 * item and index and the children's outputs; sequentially or, with
 * is_parallel, up to parallel_nums rounds at a time. error_handle_mode
 * says what a failed round does: terminated (the node fails),
 * continue-on-error (its output is null), remove-abnormal-output (it is
 * left out). With flatten_output (the default) an output made only of
 * lists is flattened one level.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/run/run.h"

struct iter {
	struct node_ctx	*c;
	json_t		*items;
	json_t		**results;	/* per round; NULL = removed */
	char		**errors;	/* per round failure, or NULL */
	atomic_size_t	 next;
	const char	*mode;
	struct span	*span;		/* the iteration node's */
};

/* The pool of one round: item, index and the children's outputs. */
static struct pool *
round_pool(struct node_ctx *c, json_t *item, size_t index)
{
	const struct graph	*g = c->run->g;
	struct pool		*p;
	json_t			*ix = NULL;
	size_t			 i;
	int			 rc;

	if ((p = pool_new(c->pool)) == NULL)
		return NULL;
	rc = pool_own(p, c->node->id);
	for (i = 0; rc == 0 && i < g->nnodes; i++)
		if (g->nodes[i].parent != NULL &&
		    strcmp(g->nodes[i].parent, c->node->id) == 0)
			rc = pool_own(p, g->nodes[i].id);
	if (rc == 0)
		rc = pool_set(p, c->node->id, "item", item);
	if (rc == 0)
		rc = pool_set(p, c->node->id, "index",
		    ix = json_integer((json_int_t)index));
	json_decref(ix);
	if (rc != 0) {
		pool_free(p);
		return NULL;
	}
	return p;
}

static void
one_round(struct iter *it, size_t i)
{
	struct node_ctx	*c = it->c;
	struct pool	*p;
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*out;

	run_emit(c->run, "iteration_next", json_pack("{s:s,s:s,s:s,s:s,s:I,"
	    "s:I,s:{}}", "id", c->node->id, "node_id", c->node->id,
	    "node_type", "iteration", "title", c->node->title, "index",
	    (json_int_t)i, "created_at", (json_int_t)(run_now_ms() / 1000),
	    "extras"));
	if ((p = round_pool(c, json_array_get(it->items, i), i)) == NULL) {
		it->errors[i] = strdup("out of memory");
		return;
	}
	if (run_scope(c->run, c->node->id, p, c->node->id, NULL, err) != 0) {
		it->errors[i] = strdup(err[0] ? err : "the round failed");
		pool_free(p);
		return;
	}
	out = pool_get(p, json_object_get(c->node->data, "output_selector"));
	it->results[i] = out ? out : json_null();
	pool_free(p);
}

static void *
worker(void *arg)
{
	struct iter	*it = arg;
	size_t		 i, n = json_array_size(it->items);

	span_set_current(it->span);	/* the rounds' nodes are its children */
	while ((i = atomic_fetch_add(&it->next, 1)) < n) {
		one_round(it, i);
		/* terminated mode: the first failure ends the other rounds */
		if (it->errors[i] != NULL &&
		    strcmp(it->mode, "terminated") == 0) {
			atomic_store(&it->next, n);
			break;
		}
	}
	return NULL;
}

/* A worker thread: gives its place in the run's thread budget back. */
static void *
worker_main(void *arg)
{
	struct iter *it = arg;

	worker(it);
	run_thread_give(it->c->run);
	return NULL;
}

static int
all_lists(const json_t *a)
{
	json_t	*v;
	size_t	 i;

	json_array_foreach(a, i, v)
		if (!json_is_array(v))
			return 0;
	return json_array_size(a) > 0;
}

static int
iteration_run(struct node_ctx *c)
{
	struct iter	 it;
	json_t		*items, *output = NULL, *v, *x;
	const json_t	*d = c->node->data;
	pthread_t	 th[64];
	size_t		 n, i, j, nth = 0, want;
	int64_t		 t0 = run_now_ms();
	int		 rc = -1, bad = 0;
	const char	*failed = NULL;

	memset(&it, 0, sizeof(it));
	items = node_resolve(c, json_object_get(d, "iterator_selector"));
	if ((items == NULL || json_is_null(items)) &&
	    (items = json_array()) == NULL)
		return node_fail(c, "out of memory");
	if (!json_is_array(items)) {
		json_decref(items);
		return node_fail(c, "iterator_selector must point at an array");
	}
	n = json_array_size(items);
	if (json_object_set_new(c->inputs, "iterator_selector",
	    json_incref(items)) != 0) {
		node_fail(c, "out of memory");
		goto out;
	}
	if ((int)n > c->run->lim.max_loop) {
		node_fail(c, "the iteration has %zu items, more than %d "
		    "(workflow.max_loop)", n, c->run->lim.max_loop);
		goto out;
	}
	it.c = c;
	it.span = span_current();
	it.items = items;
	it.mode = json_string_value(json_object_get(d, "error_handle_mode"));
	if (it.mode == NULL)
		it.mode = "terminated";
	it.results = calloc(n + 1, sizeof(*it.results));
	it.errors = calloc(n + 1, sizeof(*it.errors));
	if (it.results == NULL || it.errors == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	run_emit(c->run, "iteration_started", json_pack("{s:s,s:s,s:s,s:s,"
	    "s:I,s:{},s:{s:I},s:{s:O}}", "id", c->node->id, "node_id",
	    c->node->id, "node_type", "iteration", "title", c->node->title,
	    "created_at", (json_int_t)(t0 / 1000), "extras", "metadata",
	    "iterator_length", (json_int_t)n, "inputs", "iterator_selector",
	    items));
	want = 1;
	if (json_is_true(json_object_get(d, "is_parallel"))) {
		want = (size_t)json_integer_value(json_object_get(d,
		    "parallel_nums"));
		if (want == 0)
			want = 10;
		if (want > (size_t)c->run->lim.max_parallel)
			want = (size_t)c->run->lim.max_parallel;
		if (want > sizeof(th) / sizeof(th[0]))
			want = sizeof(th) / sizeof(th[0]);
	}
	if (want <= 1 || n <= 1)
		worker(&it);
	else {
		/* the calling thread waits: the rounds get the threads the
		 * run's budget has (workflow.max_threads), maybe none */
		for (nth = 0; nth < want && nth < n; nth++) {
			if (!run_thread_take(c->run))
				break;
			if (pthread_create(&th[nth], NULL, worker_main,
			    &it) != 0) {
				run_thread_give(c->run);
				break;
			}
		}
		if (nth == 0)
			worker(&it);
		for (j = 0; j < nth; j++)
			pthread_join(th[j], NULL);
	}
	output = json_array();
	for (i = 0; i < n; i++) {
		if (it.errors[i] != NULL) {
			if (strcmp(it.mode, "continue-on-error") == 0)
				bad |= json_array_append_new(output,
				    json_null());
			else if (strcmp(it.mode, "remove-abnormal-output") != 0
			    && failed == NULL)
				failed = it.errors[i];
			continue;
		}
		if (it.results[i] != NULL)
			bad |= json_array_append(output, it.results[i]);
	}
	if (failed != NULL || atomic_load(&c->run->stopping)) {
		node_fail(c, "%s", failed ? failed : "stopped");
		goto done;
	}
	if (!json_is_false(json_object_get(d, "flatten_output")) &&
	    all_lists(output)) {
		v = json_array();
		json_array_foreach(output, i, x)
			bad |= json_array_extend(v, x);
		json_decref(output);
		output = v;
	}
	if (bad || json_object_set(c->outputs, "output", output) != 0) {
		node_fail(c, "out of memory");
		goto done;
	}
	rc = 0;
done:
	run_emit(c->run, "iteration_completed", json_pack("{s:s,s:s,s:s,s:s,"
	    "s:o,s:s,s:s?,s:f,s:I,s:I,s:I,s:I}", "id", c->node->id,
	    "node_id", c->node->id, "node_type", "iteration", "title",
	    c->node->title, "outputs", rc == 0 ? json_pack("{s:O}", "output",
	    output) : json_null(), "status", rc == 0 ? "succeeded" : "failed",
	    "error", rc == 0 ? NULL : c->err, "elapsed_time",
	    (double)(run_now_ms() - t0) / 1000.0, "total_tokens",
	    (json_int_t)atomic_load(&c->run->total_tokens), "created_at",
	    (json_int_t)(t0 / 1000), "finished_at",
	    (json_int_t)(run_now_ms() / 1000), "steps", (json_int_t)n));
out:
	for (i = 0; i < n && it.results != NULL; i++) {
		json_decref(it.results[i]);
		free(it.errors[i]);
	}
	free(it.results);
	free(it.errors);
	json_decref(output);
	json_decref(items);
	return rc;
}

const struct node_type node_iteration = { "iteration", iteration_run, 1 };

/* The container's start pseudo node: nothing to do. */
static int
pseudo_run(struct node_ctx *c)
{
	(void)c;
	return 0;
}

const struct node_type node_iteration_start = {
	"iteration-start", pseudo_run, 0
};
const struct node_type node_loop_start = { "loop-start", pseudo_run, 0 };
