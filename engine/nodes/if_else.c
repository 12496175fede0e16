/*
 * if_else.c — the if-else node: cases in order, first match wins (handle =
 * its case_id), else "false"; the legacy form (top-level conditions) takes
 * "true" or "false". Operators and coercions follow Dify's condition
 * processor.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/nodes/nodes.h"

/* The text of a scalar for string operators; NULL for other kinds. */
static const char *
scalar_text(const json_t *v, char *buf, size_t bufsz)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		snprintf(buf, bufsz, "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
		return buf;
	}
	if (json_is_real(v)) {
		snprintf(buf, bufsz, "%.17g", json_real_value(v));
		return buf;
	}
	if (json_is_boolean(v))
		return json_is_true(v) ? "true" : "false";
	return NULL;
}

static int
is_empty(const json_t *v)
{
	return v == NULL || json_is_null(v) ||
	    (json_is_string(v) && json_string_length(v) == 0) ||
	    (json_is_array(v) && json_array_size(v) == 0) ||
	    (json_is_object(v) && json_object_size(v) == 0);
}

/* Does array a hold a scalar equal to text t? */
static int
array_has(const json_t *a, const char *t)
{
	json_t		*e;
	size_t		 i;
	char		 buf[64];
	const char	*s;

	json_array_foreach(a, i, e)
		if ((s = scalar_text(e, buf, sizeof(buf))) != NULL &&
		    strcmp(s, t) == 0)
			return 1;
	return 0;
}

static int
num_of(const json_t *v, double *d)
{
	char *end;

	if (json_is_number(v)) {
		*d = json_number_value(v);
		return 0;
	}
	if (json_is_boolean(v)) {
		*d = json_is_true(v);
		return 0;
	}
	if (json_is_string(v)) {
		*d = strtod(json_string_value(v), &end);
		return *end == '\0' && end != json_string_value(v) ? 0 : -1;
	}
	return -1;
}

/*
 * Evaluates one comparison. Returns 1 or 0, or -1 with err set.
 */
static int
compare(struct node_ctx *c, const char *op, const json_t *actual,
    const json_t *expected)
{
	char		 abuf[64], ebuf[64];
	const char	*a = scalar_text(actual, abuf, sizeof(abuf));
	const char	*x = scalar_text(expected, ebuf, sizeof(ebuf));
	double		 da, dx;
	size_t		 la, lx, i;
	json_t		*e;

	if (strcmp(op, "empty") == 0)
		return is_empty(actual);
	if (strcmp(op, "not empty") == 0)
		return !is_empty(actual);
	if (strcmp(op, "null") == 0)
		return actual == NULL || json_is_null(actual);
	if (strcmp(op, "not null") == 0)
		return actual != NULL && !json_is_null(actual);
	if (strcmp(op, "exists") == 0)
		return actual != NULL && !json_is_null(actual);
	if (strcmp(op, "not exists") == 0)
		return actual == NULL || json_is_null(actual);
	if (actual == NULL || json_is_null(actual)) {
		/* Dify: a missing value matches only the negative tests */
		return strcmp(op, "not contains") == 0 ||
		    strcmp(op, "is not") == 0 || strcmp(op, "≠") == 0 ||
		    strcmp(op, "not in") == 0;
	}
	if (strcmp(op, "contains") == 0 || strcmp(op, "not contains") == 0) {
		int has = 0;

		if (x == NULL)
			x = "";
		if (json_is_string(actual))
			has = strstr(a, x) != NULL;
		else if (json_is_array(actual))
			has = array_has(actual, x);
		return strcmp(op, "contains") == 0 ? has : !has;
	}
	if (strcmp(op, "start with") == 0 || strcmp(op, "end with") == 0) {
		if (a == NULL || x == NULL)
			return 0;
		la = strlen(a);
		lx = strlen(x);
		if (lx > la)
			return 0;
		return strcmp(op, "start with") == 0 ?
		    strncmp(a, x, lx) == 0 : strcmp(a + la - lx, x) == 0;
	}
	if (strcmp(op, "is") == 0 || strcmp(op, "is not") == 0) {
		int eq = a != NULL && x != NULL && strcmp(a, x) == 0;

		if (json_is_boolean(actual) && x != NULL)
			eq = (strcmp(x, "true") == 0 || strcmp(x, "True") == 0 ||
			    strcmp(x, "1") == 0) == json_is_true(actual);
		return strcmp(op, "is") == 0 ? eq : !eq;
	}
	if (strcmp(op, "in") == 0 || strcmp(op, "not in") == 0) {
		int in = a != NULL && ((json_is_array(expected) &&
		    array_has(expected, a)) || (x != NULL &&
		    strstr(x, a) != NULL));

		return strcmp(op, "in") == 0 ? in : !in;
	}
	if (strcmp(op, "all of") == 0) {
		if (!json_is_array(expected) || !json_is_array(actual))
			return 0;
		json_array_foreach(expected, i, e)
			if ((x = scalar_text(e, ebuf, sizeof(ebuf))) == NULL ||
			    !array_has(actual, x))
				return 0;
		return 1;
	}
	if (strcmp(op, "=") == 0 || strcmp(op, "≠") == 0 ||
	    strcmp(op, ">") == 0 || strcmp(op, "<") == 0 ||
	    strcmp(op, "≥") == 0 || strcmp(op, "≤") == 0) {
		if (num_of(actual, &da) != 0) {
			node_fail(c, "'%s' needs a number, got a non-number "
			    "value", op);
			return -1;
		}
		if (num_of(expected, &dx) != 0) {
			node_fail(c, "'%s' needs a number to compare with",
			    op);
			return -1;
		}
		if (strcmp(op, "=") == 0)
			return da == dx;
		if (strcmp(op, "≠") == 0)
			return da != dx;
		if (strcmp(op, ">") == 0)
			return da > dx;
		if (strcmp(op, "<") == 0)
			return da < dx;
		if (strcmp(op, "≥") == 0)
			return da >= dx;
		return da <= dx;
	}
	node_fail(c, "unknown comparison operator '%s'", op);
	return -1;
}

/* File-array conditions on file attributes (sub_variable_condition). */
static int
sub_conditions(struct node_ctx *c, const char *op, const json_t *files,
    const json_t *sub)
{
	json_t		*f, *cond;
	const char	*lop = json_string_value(json_object_get(sub,
			    "logical_operator"));
	size_t		 i, j;
	int		 any = 0, all = 1, m, r;

	json_array_foreach(files, i, f) {
		m = lop != NULL && strcmp(lop, "or") == 0 ? 0 : 1;
		json_array_foreach(json_object_get(sub, "conditions"), j,
		    cond) {
			r = compare(c, json_string_value(json_object_get(cond,
			    "comparison_operator")), json_object_get(f,
			    json_string_value(json_object_get(cond, "key"))),
			    json_object_get(cond, "value"));
			if (r < 0)
				return -1;
			if (lop != NULL && strcmp(lop, "or") == 0)
				m = m || r;
			else
				m = m && r;
		}
		any = any || m;
		all = all && m;
	}
	if (strcmp(op, "contains") == 0)
		return any;
	if (strcmp(op, "not contains") == 0)
		return !any;
	if (strcmp(op, "all of") == 0)
		return all && json_array_size(files) > 0;
	node_fail(c, "operator '%s' does not take file conditions", op);
	return -1;
}

/*
 * A condition's expected value with its {{#a.b#}} references filled in,
 * as Dify's condition processor does (variable_pool.convert_template) for
 * a string and for each string of a list. New reference, or NULL with the
 * node failed.
 */
static json_t *
expected_value(struct node_ctx *c, json_t *v)
{
	json_t	*out, *e, *r;
	char	*text;
	size_t	 i;

	if (json_is_string(v) && strstr(json_string_value(v), "{{#") != NULL) {
		if (node_render(c, json_string_value(v), TPL_TEXT, &text) != 0)
			return NULL;
		/* text that is not UTF-8 compares as "" */
		out = json_string(node_utf8_ok(text, strlen(text)) ? text : "");
		free(text);
		if (out == NULL)
			node_fail(c, "out of memory");
		return out;
	}
	if (!json_is_array(v))
		return json_incref(v);
	if ((out = json_array()) == NULL) {
		node_fail(c, "out of memory");
		return NULL;
	}
	json_array_foreach(v, i, e) {
		if ((r = expected_value(c, e)) == NULL) {
			json_decref(out);
			return NULL;
		}
		if (json_array_append_new(out, r) != 0) {
			json_decref(out);
			node_fail(c, "out of memory");
			return NULL;
		}
	}
	return out;
}

/* Evaluates a list of conditions joined by logical_operator. */
static int
conditions_match(struct node_ctx *c, const json_t *conds, const char *lop,
    json_t *trace)
{
	json_t		*cond, *actual, *sub, *want;
	const char	*op;
	size_t		 i;
	int		 or = lop != NULL && strcmp(lop, "or") == 0, r;

	json_array_foreach(conds, i, cond) {
		op = json_string_value(json_object_get(cond,
		    "comparison_operator"));
		if (op == NULL)
			return node_fail(c, "condition %zu has no "
			    "comparison_operator", i + 1);
		want = NULL;
		if (json_object_get(cond, "value") != NULL &&
		    (want = expected_value(c, json_object_get(cond,
		    "value"))) == NULL)
			return -1;
		actual = node_resolve(c, json_object_get(cond,
		    "variable_selector"));
		sub = json_object_get(cond, "sub_variable_condition");
		if (json_is_array(actual) && json_is_object(sub) &&
		    json_array_size(json_object_get(sub, "conditions")) > 0)
			r = sub_conditions(c, op, actual, sub);
		else
			r = compare(c, op, actual, want);
		if (json_array_append_new(trace, json_pack(
		    "{s:O,s:s,s:O,s:o,s:b}", "actual_value", actual ? actual :
		    json_null(), "comparison_operator", op, "expected_value",
		    want ? want : json_null(), "variable_selector",
		    json_incref(json_object_get(cond, "variable_selector")) ?
		    json_object_get(cond, "variable_selector") : json_null(),
		    "result", r > 0)) != 0 && r >= 0)
			r = node_fail(c, "out of memory");
		json_decref(actual);
		json_decref(want);
		if (r < 0)
			return -1;
		if (or && r)
			return 1;
		if (!or && !r)
			return 0;
	}
	return or ? 0 : 1;
}

/* The outputs {result, selected_case_id}: 0, or -1 with the node failed. */
static int
case_outputs(struct node_ctx *c, int result, const char *case_id)
{
	if (json_object_set_new(c->outputs, "result", json_boolean(result)) !=
	    0 || json_object_set_new(c->outputs, "selected_case_id",
	    json_string(case_id)) != 0)
		return node_fail(c, "out of memory");
	return 0;
}

static int
if_else_run(struct node_ctx *c)
{
	json_t		*cases = json_object_get(c->node->data, "cases");
	json_t		*cs, *trace;
	const char	*id;
	size_t		 i;
	int		 r;

	/* the trace fills as the conditions are evaluated */
	if ((trace = json_array()) == NULL || (c->process_data = json_pack(
	    "{s:o}", "condition_results", trace)) == NULL)
		return node_fail(c, "out of memory");
	if (!json_is_array(cases)) {
		/* legacy: one set of conditions, handles true / false */
		r = conditions_match(c, json_object_get(c->node->data,
		    "conditions"), json_string_value(json_object_get(
		    c->node->data, "logical_operator")), trace);
		if (r < 0)
			return -1;
		c->handle = r ? "true" : "false";
		return case_outputs(c, r, c->handle);
	}
	json_array_foreach(cases, i, cs) {
		r = conditions_match(c, json_object_get(cs, "conditions"),
		    json_string_value(json_object_get(cs, "logical_operator")),
		    trace);
		if (r < 0)
			return -1;
		if (r && (id = json_string_value(json_object_get(cs,
		    "case_id"))) != NULL) {
			snprintf(c->handle_buf, sizeof(c->handle_buf), "%s",
			    id);
			c->handle = c->handle_buf;
			return case_outputs(c, 1, id);
		}
	}
	c->handle = "false";
	return case_outputs(c, 0, "false");
}

const struct node_type node_if_else = { "if-else", if_else_run, 0 };

/* ====== Shared with loop break conditions ====== */

int
condition_eval(struct node_ctx *c, const json_t *conds, const char *lop)
{
	json_t	*trace = json_array();
	int	 r;

	r = conditions_match(c, conds, lop, trace);
	json_decref(trace);
	return r;
}
