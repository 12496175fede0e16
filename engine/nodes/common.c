/*
 * common.c — helpers every node file uses, and the table of node types.
 *
 * A node type is one file in engine/nodes/ that defines one
 * `const struct node_type node_<name>`; this table lists them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/run/run.h"

extern const struct node_type node_start, node_end;
extern const struct node_type node_if_else, node_aggregator;
extern const struct node_type node_aggregator_legacy;
extern const struct node_type node_answer, node_template_transform;
extern const struct node_type node_llm, node_agent;
extern const struct node_type node_question_classifier;
extern const struct node_type node_parameter_extractor;
extern const struct node_type node_command, node_file_upload;
extern const struct node_type node_knowledge_retrieval;
extern const struct node_type node_knowledge_retrieval_v2;
extern const struct node_type node_http_request;
extern const struct node_type node_document_extractor;
extern const struct node_type node_list_operator;
extern const struct node_type node_assigner;
extern const struct node_type node_iteration, node_loop;
extern const struct node_type node_iteration_start, node_loop_start;
extern const struct node_type node_loop_end, node_code;
extern const struct node_type node_tool;

static const struct node_type *const node_types[] = {
	&node_start,
	&node_end,
	&node_if_else,
	&node_aggregator,
	&node_aggregator_legacy,
	&node_answer,
	&node_template_transform,
	&node_llm,
	&node_agent,
	&node_question_classifier,
	&node_parameter_extractor,
	&node_command,
	&node_file_upload,
	&node_knowledge_retrieval,
	&node_knowledge_retrieval_v2,
	&node_http_request,
	&node_document_extractor,
	&node_list_operator,
	&node_assigner,
	&node_iteration,
	&node_iteration_start,
	&node_loop,
	&node_loop_start,
	&node_loop_end,
	&node_code,
	&node_tool,
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

const struct node_type *
node_type_at(size_t i)
{
	return i < sizeof(node_types) / sizeof(node_types[0]) ?
	    node_types[i] : NULL;
}

const char *
node_str(const struct gnode *n, const char *key)
{
	return json_string_value(json_object_get(n->data, key));
}

int
node_stop_asked(void *run)
{
	return run_stop_requested(run);
}

const char *
node_selector_tail(const json_t *sel)
{
	const char *name = json_string_value(json_array_get(sel,
	    json_array_size(sel) - 1));

	return json_array_size(sel) > 0 && name != NULL ? name : "(none)";
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

/* ====== Templates against the pool ====== */

/* Keeps the values lookup hands out until the render is over. */
struct render_ctx {
	struct pool	*pool;
	json_t		*held;
	int		 nomem;	/* a value could not be held */
};

static const json_t *
render_lookup(void *arg, const char *const *parts, size_t nparts)
{
	struct render_ctx	*rc = arg;
	json_t			*v;

	if ((v = pool_get_parts(rc->pool, parts, nparts)) == NULL)
		return NULL;
	if (json_array_append_new(rc->held, v) != 0) {
		rc->nomem = 1;	/* v is gone: the render must not count */
		return NULL;
	}
	return v;
}

int
node_render(struct node_ctx *c, const char *tpl, enum tpl_form form,
    char **out)
{
	struct render_ctx	 rc = { c->pool, json_array(), 0 };
	int			 r;

	if (rc.held == NULL)
		return node_fail(c, "out of memory");
	r = tpl_render(tpl ? tpl : "", form, 0, render_lookup, &rc, 0, c->err,
	    out);
	json_decref(rc.held);
	if (r == 0 && rc.nomem) {
		free(*out);
		*out = NULL;
		return node_fail(c, "out of memory");
	}
	return r == 0 ? 0 : -1;
}

/* NULL when out of memory. */
json_t *
node_variables(struct node_ctx *c)
{
	json_t		*vars = json_object(), *v, *val;
	const char	*name;
	size_t		 i;

	json_array_foreach(json_object_get(c->node->data, "variables"), i, v) {
		if ((name = json_string_value(json_object_get(v,
		    "variable"))) == NULL)
			continue;
		val = node_resolve(c, json_object_get(v, "value_selector"));
		if (json_object_set_new(vars, name, val ? val : json_null())
		    != 0) {
			json_decref(vars);
			return NULL;
		}
	}
	return vars;
}
