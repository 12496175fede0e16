/*
 * common.c — helpers every node file uses, and the table of node types.
 *
 * A node type is one file in engine/nodes/ that defines one
 * `const struct node_type node_<name>`; this table lists them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engine/exec.h"

extern const struct node_type node_start, node_end;
extern const struct node_type node_if_else, node_aggregator;
extern const struct node_type node_aggregator_legacy;

static const struct node_type *const node_types[] = {
	&node_start,
	&node_end,
	&node_if_else,
	&node_aggregator,
	&node_aggregator_legacy,
	NULL,
};

const struct node_type *
node_type_find(const char *type)
{
	size_t i;

	for (i = 0; node_types[i] != NULL; i++)
		if (strcmp(node_types[i]->type, type) == 0)
			return node_types[i];
	return NULL;
}

const char *
node_str(const struct gnode *n, const char *key)
{
	return json_string_value(json_object_get(n->data, key));
}

int
node_fail(struct node_ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return -1;
}

json_t *
node_resolve(struct node_ctx *c, const json_t *selector)
{
	return pool_get(c->pool, selector);
}
