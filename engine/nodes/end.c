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

	json_array_foreach(json_object_get(c->node->data, "outputs"), i, o) {
		if ((name = json_string_value(json_object_get(o,
		    "variable"))) == NULL)
			continue;
		v = node_resolve(c, json_object_get(o, "value_selector"));
		json_object_set_new(c->outputs, name, v ? v : json_null());
	}
	json_object_update(c->inputs, c->outputs);
	pthread_mutex_lock(&c->run->mu);
	json_object_update(c->run->outputs, c->outputs);
	pthread_mutex_unlock(&c->run->mu);
	return 0;
}

const struct node_type node_end = { "end", end_run, 0 };
