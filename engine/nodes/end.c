/*
 * end.c — the end node of a workflow: its outputs are the run's outputs.
 * A selector that resolves to nothing gives null, as in Dify.
 */
#include "engine/run/run.h"

static int
end_run(struct node_ctx *c)
{
	json_t		*o, *v;
	const char	*name;
	size_t		 i;
	int		 rc;

	json_array_foreach(json_object_get(c->node->data, "outputs"), i, o) {
		if ((name = json_string_value(json_object_get(o,
		    "variable"))) == NULL)
			continue;
		v = node_resolve(c, json_object_get(o, "value_selector"));
		if (json_object_set_new(c->outputs, name, v ? v : json_null())
		    != 0)
			return node_fail(c, "out of memory");
	}
	if (json_object_update(c->inputs, c->outputs) != 0)
		return node_fail(c, "out of memory");
	pthread_mutex_lock(&c->run->mu);
	rc = json_object_update(c->run->outputs, c->outputs);
	pthread_mutex_unlock(&c->run->mu);
	return rc != 0 ? node_fail(c, "out of memory") : 0;
}

const struct node_type node_end = { "end", end_run, 0 };
