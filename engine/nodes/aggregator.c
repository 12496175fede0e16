/*
 * aggregator.c — variable-aggregator (and its legacy name
 * variable-assigner): the first selector that resolves wins, which merges
 * exclusive branches; with groups, one output object per group.
 */
#include "engine/run/run.h"

static json_t *
first_of(struct node_ctx *c, const json_t *selectors)
{
	json_t	*sel, *v;
	size_t	 i;

	json_array_foreach(selectors, i, sel)
		if ((v = node_resolve(c, sel)) != NULL)
			return v;
	return NULL;
}

static int
aggregator_run(struct node_ctx *c)
{
	json_t		*adv = json_object_get(c->node->data,
			    "advanced_settings"), *g, *v;
	const char	*name;
	size_t		 i;

	if (json_is_true(json_object_get(adv, "group_enabled"))) {
		json_array_foreach(json_object_get(adv, "groups"), i, g) {
			if ((name = json_string_value(json_object_get(g,
			    "group_name"))) == NULL)
				continue;
			v = first_of(c, json_object_get(g, "variables"));
			if (json_object_set_new(c->outputs, name, json_pack(
			    "{s:o}", "output", v ? v : json_null())) != 0)
				return node_fail(c, "out of memory");
		}
		return 0;
	}
	v = first_of(c, json_object_get(c->node->data, "variables"));
	if (json_object_set_new(c->outputs, "output", v ? v : json_null()) != 0)
		return node_fail(c, "out of memory");
	return 0;
}

const struct node_type node_aggregator = {
	"variable-aggregator", aggregator_run, 0
};
const struct node_type node_aggregator_legacy = {
	"variable-assigner", aggregator_run, 0
};
