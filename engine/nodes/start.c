/*
 * start.c — the start node. The run put the checked inputs in the pool
 * under the start node's id before the graph began; the node reports them
 * with the sys.* copies, as Dify's start node does.
 */
#include "engine/run/run.h"

static int
start_run(struct node_ctx *c)
{
	json_t		*var, *v;
	const char	*name, *sys[] = { "query", "files", "user_id",
			    "app_id", "workflow_id", "workflow_run_id",
			    "conversation_id", "dialogue_count", NULL };
	const char	*parts[2];
	size_t		 i;
	int		 bad = 0;

	json_array_foreach(json_object_get(c->node->data, "variables"), i,
	    var) {
		if ((name = json_string_value(json_object_get(var,
		    "variable"))) == NULL)
			continue;
		parts[0] = c->node->id;
		parts[1] = name;
		if ((v = pool_get_parts(c->pool, parts, 2)) != NULL) {
			bad |= json_object_set(c->inputs, name, v);
			bad |= json_object_set_new(c->outputs, name, v);
		}
	}
	for (i = 0; sys[i] != NULL; i++) {
		char key[48];

		parts[0] = "sys";
		parts[1] = sys[i];
		if ((v = pool_get_parts(c->pool, parts, 2)) == NULL)
			continue;
		snprintf(key, sizeof(key), "sys.%s", sys[i]);
		bad |= json_object_set(c->inputs, key, v);
		bad |= json_object_set_new(c->outputs, key, v);
	}
	return bad ? node_fail(c, "out of memory") : 0;
}

const struct node_type node_start = { "start", start_run, 0 };
