/*
 * loop.c — the loop container: loop variables live under the loop's id in
 * a pool of the loop's own (children's assigners update them there);
 * break_conditions are checked before the first round and after each; a
 * loop-end node reached in a round ends the loop; at most loop_count
 * rounds (and never more than workflow.max_loop). Outputs: the final loop
 * variables and loop_round.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/run/run.h"

/* The value of a loop variable's initial definition. */
static json_t *
loop_var_value(struct node_ctx *c, const json_t *lv)
{
	const char	*vt = json_string_value(json_object_get(lv,
			    "value_type"));
	const char	*type = json_string_value(json_object_get(lv,
			    "var_type"));
	json_t		*v = json_object_get(lv, "value"), *parsed;

	if (vt != NULL && strcmp(vt, "variable") == 0)
		return node_resolve(c, v);
	/* constants of non-string types may be written as JSON text */
	if (json_is_string(v) && type != NULL && strcmp(type, "string") != 0 &&
	    (parsed = json_loads(json_string_value(v), JSON_DECODE_ANY,
	    NULL)) != NULL)
		return parsed;
	return v ? json_incref(v) : json_null();
}

static int
loop_run(struct node_ctx *c)
{
	const json_t	*d = c->node->data;
	const struct graph *g = c->run->g;
	struct pool	*p = NULL;
	struct node_ctx	 cc;
	json_t		*lv, *v, *brk = json_object_get(d, "break_conditions");
	json_t		*ended;
	const char	*label, *lop = json_string_value(json_object_get(d,
			    "logical_operator"));
	const char	*parts[2];
	char		 err[ENGINE_ERRMAX] = "";
	int64_t		 t0 = run_now_ms();
	long		 count = (long)json_integer_value(json_object_get(d,
			    "loop_count"));
	long		 round = 0;
	size_t		 i;
	int		 rc = -1, b, set;

	if (count <= 0 || count > c->run->lim.max_loop)
		count = c->run->lim.max_loop;
	if ((p = pool_new(c->pool)) == NULL)
		return node_fail(c, "out of memory");
	set = pool_own(p, c->node->id);
	for (i = 0; set == 0 && i < g->nnodes; i++)
		if (g->nodes[i].parent != NULL &&
		    strcmp(g->nodes[i].parent, c->node->id) == 0)
			set = pool_own(p, g->nodes[i].id);
	json_array_foreach(json_object_get(d, "loop_variables"), i, lv) {
		if (set != 0)
			break;
		if ((label = json_string_value(json_object_get(lv, "label")))
		    == NULL)
			continue;
		v = loop_var_value(c, lv);
		set = pool_set(p, c->node->id, label, v ? v : json_null());
		set |= json_object_set(c->inputs, label, v ? v : json_null());
		json_decref(v);
	}
	if (set != 0) {
		pool_free(p);
		return node_fail(c, "out of memory");
	}
	/* break conditions read the loop's own pool */
	cc = *c;
	cc.pool = p;
	run_emit(c->run, "loop_started", json_pack("{s:s,s:s,s:s,s:s,s:I,"
	    "s:{},s:{s:I},s:O}", "id", c->node->id, "node_id", c->node->id,
	    "node_type", "loop", "title", c->node->title, "created_at",
	    (json_int_t)(t0 / 1000), "extras", "metadata", "loop_length",
	    (json_int_t)count, "inputs", c->inputs));
	for (;;) {
		if (json_array_size(brk) > 0) {
			if ((b = condition_eval(&cc, brk, lop)) < 0) {
				snprintf(c->err, sizeof(c->err), "%s",
				    cc.err);
				goto done;
			}
			if (b)
				break;
		}
		if (round >= count)
			break;
		run_emit(c->run, "loop_next", json_pack("{s:s,s:s,s:s,s:s,s:I,"
		    "s:I,s:{}}", "id", c->node->id, "node_id", c->node->id,
		    "node_type", "loop", "title", c->node->title, "index",
		    (json_int_t)round, "created_at",
		    (json_int_t)(run_now_ms() / 1000), "extras"));
		if (run_scope(c->run, c->node->id, p, NULL, c->node->id, err)
		    != 0) {
			node_fail(c, "%s", err[0] ? err : "the round failed");
			goto done;
		}
		round++;
		parts[0] = c->node->id;
		parts[1] = "__loop_end";
		if ((ended = pool_get_parts(p, parts, 2)) != NULL) {
			json_decref(ended);
			break;
		}
	}
	json_array_foreach(json_object_get(d, "loop_variables"), i, lv) {
		if ((label = json_string_value(json_object_get(lv, "label")))
		    == NULL)
			continue;
		parts[0] = c->node->id;
		parts[1] = label;
		v = pool_get_parts(p, parts, 2);
		if (json_object_set_new(c->outputs, label, v ? v :
		    json_null()) != 0) {
			node_fail(c, "out of memory");
			goto done;
		}
	}
	if (json_object_set_new(c->outputs, "loop_round",
	    json_integer(round)) != 0) {
		node_fail(c, "out of memory");
		goto done;
	}
	rc = 0;
done:
	run_emit(c->run, "loop_completed", json_pack("{s:s,s:s,s:s,s:s,s:O,"
	    "s:s,s:s?,s:f,s:I,s:I,s:I,s:I}", "id", c->node->id, "node_id",
	    c->node->id, "node_type", "loop", "title", c->node->title,
	    "outputs", c->outputs, "status", rc == 0 ? "succeeded" : "failed",
	    "error", rc == 0 ? NULL : c->err, "elapsed_time",
	    (double)(run_now_ms() - t0) / 1000.0, "total_tokens",
	    (json_int_t)atomic_load(&c->run->total_tokens), "created_at",
	    (json_int_t)(t0 / 1000), "finished_at",
	    (json_int_t)(run_now_ms() / 1000), "steps", (json_int_t)round));
	pool_free(p);
	return rc;
}

const struct node_type node_loop = { "loop", loop_run, 1 };

/* loop-end: ends the loop that holds it after this round. */
static int
loop_end_run(struct node_ctx *c)
{
	/* json_true() is a singleton: no reference to drop */
	if (c->loop_id != NULL &&
	    pool_set(c->pool, c->loop_id, "__loop_end", json_true()) != 0)
		return node_fail(c, "out of memory");
	return 0;
}

const struct node_type node_loop_end = { "loop-end", loop_end_run, 0 };
