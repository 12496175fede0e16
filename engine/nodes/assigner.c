/*
 * assigner.c — the variable assigner (data.type "assigner"), after Dify's
 * nodes/variable_assigner/{v1,v2}.
 *
 * v1 (no version, or "1"): assigned_variable_selector, write_mode
 * over-write | append | clear, input_variable_selector.
 * v2 (version "2"): items[] {variable_selector, input_type variable |
 * constant, operation, value}, applied in order; operations over-write,
 * clear, set, +=, -=, *=, /=, append, extend, remove-first, remove-last
 * with Dify's rules (helpers.py): set and arithmetic on scalars and with
 * constants only, append / extend / remove-* on arrays only, clear gives
 * the type's empty value, values type-checked against the target.
 *
 * Targets are conversation variables (["conversation", name]) and loop
 * variables ([loop node id, name]); their type is the declared one
 * (workflow.conversation_variables[].value_type, the loop's
 * loop_variables[].var_type), else the current value's. New values are
 * built, never the pool's changed in place, and written with pool_set.
 * The node has no outputs; process_data holds each updated variable by
 * name and "updated_variables": [{name, selector, value_type, new_value}]
 * as Dify records it — the run persists conversation variables from
 * there (or from the pool) at its end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/run/run.h"

struct target {
	const char	*ns;		/* "conversation" or a loop id */
	const char	*name;
	char		 type[32];	/* Dify's SegmentType name */
	char		 label[160];	/* "conversation.name" for messages */
};

/* ====== Types ====== */

static const char *
array_type(const json_t *a)
{
	json_t		*e;
	size_t		 i;
	const char	*t = NULL, *et;

	json_array_foreach(a, i, e) {
		if (json_is_string(e))
			et = "array[string]";
		else if (json_is_number(e))
			et = "array[number]";
		else if (json_is_boolean(e))
			et = "array[boolean]";
		else if (tpl_is_file(e))
			et = "array[file]";
		else if (json_is_object(e))
			et = "array[object]";
		else
			return "array[any]";
		if (t != NULL && strcmp(t, et) != 0)
			return "array[any]";
		t = et;
	}
	return t ? t : "array[any]";
}

static const char *
value_type(const json_t *v)
{
	if (v == NULL || json_is_null(v))
		return "any";
	if (json_is_string(v))
		return "string";
	if (json_is_number(v))
		return "number";
	if (json_is_boolean(v))
		return "boolean";
	if (tpl_is_file(v))
		return "file";
	if (json_is_object(v))
		return "object";
	return array_type(v);
}

/* Lower-cases a declared type and folds integer / float / secret. */
static void
norm_type(const char *t, char *buf, size_t bufsz)
{
	size_t i;

	for (i = 0; t[i] != '\0' && i + 1 < bufsz; i++)
		buf[i] = (char)(t[i] >= 'A' && t[i] <= 'Z' ? t[i] + 32 : t[i]);
	buf[i] = '\0';
	if (strcmp(buf, "integer") == 0 || strcmp(buf, "float") == 0)
		snprintf(buf, bufsz, "number");
	else if (strcmp(buf, "secret") == 0)
		snprintf(buf, bufsz, "string");
}

static int
is_array(const char *t)
{
	return strncmp(t, "array[", 6) == 0;
}

static int
is_number(const char *t)
{
	return strcmp(t, "number") == 0;
}

/* The type's empty value (SegmentType.get_zero_value). */
static json_t *
zero_value(const char *t)
{
	if (is_array(t))
		return json_array();
	if (strcmp(t, "string") == 0)
		return json_string("");
	if (is_number(t))
		return json_integer(0);
	if (strcmp(t, "object") == 0)
		return json_object();
	if (strcmp(t, "boolean") == 0)
		return json_false();
	return json_null();
}

/* ====== Targets ====== */

/*
 * Resolves a target selector: a conversation variable or a loop variable
 * that exists. Fills t and *cur (new reference). Returns 0 or -1 with c
 * failed.
 */
static int
target_of(struct node_ctx *c, const json_t *sel, struct target *t,
    json_t **cur)
{
	const struct graph	*g = c->run->g;
	json_t			*decl, *d, *parts = NULL;
	const char		*dt = NULL, *lbl;
	size_t			 i;
	long			 li;
	int			 rc = -1;

	memset(t, 0, sizeof(*t));
	*cur = NULL;
	t->ns = json_string_value(json_array_get(sel, 0));
	t->name = json_string_value(json_array_get(sel, 1));
	if (t->ns == NULL || t->name == NULL) {
		node_fail(c, "Variable selector is missing or not a list of "
		    "names");
		goto out;
	}
	snprintf(t->label, sizeof(t->label), "%s.%s", t->ns, t->name);
	if (strcmp(t->ns, "conversation") == 0) {
		decl = json_object_get(g->doc, "conversation_variables");
		json_array_foreach(decl, i, d)
			if ((lbl = json_string_value(json_object_get(d,
			    "name"))) != NULL && strcmp(lbl, t->name) == 0)
				dt = json_string_value(json_object_get(d,
				    "value_type"));
	} else if ((li = graph_find(g, t->ns)) >= 0 &&
	    strcmp(g->nodes[li].type, "loop") == 0) {
		decl = json_object_get(g->nodes[li].data, "loop_variables");
		json_array_foreach(decl, i, d)
			if ((lbl = json_string_value(json_object_get(d,
			    "label"))) != NULL && strcmp(lbl, t->name) == 0)
				dt = json_string_value(json_object_get(d,
				    "var_type"));
	} else {
		node_fail(c, "Variable %s not found: the assigner writes "
		    "conversation variables and loop variables", t->label);
		goto out;
	}
	if ((parts = json_pack("[s,s]", t->ns, t->name)) == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	if ((*cur = node_resolve(c, parts)) == NULL) {
		node_fail(c, "Variable %s not found", t->label);
		goto out;
	}
	norm_type(dt ? dt : value_type(*cur), t->type, sizeof(t->type));
	rc = 0;
out:
	json_decref(parts);
	return rc;
}

/* {name, selector, value_type, new_value}, as Dify records an update. */
static json_t *
update_record(const struct target *t, json_t *v)
{
	return json_pack("{s:s,s:[s,s],s:s,s:O}", "name", t->name, "selector",
	    t->ns, t->name, "value_type", t->type, "new_value", v);
}

/*
 * Writes v (reference taken) to t; records the update once. Returns 0, or
 * -1 after failing the node when out of memory.
 */
static int
write_target(struct node_ctx *c, const struct target *t, json_t *v,
    json_t *updated)
{
	json_t	*u;
	size_t	 i;

	if (pool_set(c->pool, t->ns, t->name, v) != 0)
		return node_fail(c, "out of memory");
	json_array_foreach(updated, i, u)
		if (strcmp(json_string_value(json_object_get(u, "name")),
		    t->name) == 0 && strcmp(json_string_value(json_array_get(
		    json_object_get(u, "selector"), 0)), t->ns) == 0) {
			if (json_array_set_new(updated, i,
			    update_record(t, v)) != 0)
				return node_fail(c, "out of memory");
			return 0;
		}
	if (json_array_append_new(updated, update_record(t, v)) != 0)
		return node_fail(c, "out of memory");
	return 0;
}

/*
 * Sets c->process_data to {name: value..., updated_variables}. Returns 0,
 * or -1 when out of memory (c->process_data is then NULL).
 */
static int
record_updates(struct node_ctx *c, json_t *updated)
{
	json_t	*u;
	size_t	 i;

	if ((c->process_data = json_object()) == NULL)
		return -1;
	json_array_foreach(updated, i, u)
		if (json_object_set(c->process_data, json_string_value(
		    json_object_get(u, "name")), json_object_get(u,
		    "new_value")) != 0)
			goto fail;
	if (json_object_set(c->process_data, "updated_variables",
	    updated) != 0)
		goto fail;
	return 0;
fail:
	json_decref(c->process_data);
	c->process_data = NULL;
	return -1;
}

/* ====== v1 ====== */

static int
assigner_v1(struct node_ctx *c, json_t *updated)
{
	json_t		*data = c->node->data, *cur = NULL, *in = NULL;
	json_t		*nv = NULL;
	const char	*mode = node_str(c->node, "write_mode");
	struct target	 t;
	int		 rc = -1;

	if (mode == NULL)
		mode = "over-write";
	if (target_of(c, json_object_get(data, "assigned_variable_selector"),
	    &t, &cur) != 0)
		goto out;
	if (strcmp(mode, "clear") == 0)
		in = zero_value(t.type);
	else if (strcmp(mode, "over-write") == 0 ||
	    strcmp(mode, "append") == 0) {
		if ((in = node_resolve(c, json_object_get(data,
		    "input_variable_selector"))) == NULL) {
			node_fail(c, "input value not found");
			goto out;
		}
	} else {
		node_fail(c, "unknown write_mode '%s' (over-write, append or "
		    "clear)", mode);
		goto out;
	}
	if (strcmp(mode, "append") == 0) {
		if (!json_is_array(cur)) {
			node_fail(c, "append needs an array variable; %s is "
			    "%s", t.label, t.type);
			goto out;
		}
		if ((nv = json_copy(cur)) != NULL &&
		    json_array_append(nv, in) != 0) {
			json_decref(nv);
			nv = NULL;
		}
	} else
		nv = json_incref(in);
	if (nv == NULL || json_object_set(c->inputs, "value", in) != 0) {
		node_fail(c, "out of memory");
		goto out;
	}
	if (write_target(c, &t, nv, updated) != 0)
		goto out;
	rc = 0;
out:
	json_decref(cur);
	json_decref(in);
	json_decref(nv);
	return rc;
}

/* ====== v2 ====== */

static int
op_is(const char *op, const char *name)
{
	return strcmp(op, name) == 0;
}

static int
op_arith(const char *op)
{
	return op_is(op, "+=") || op_is(op, "-=") || op_is(op, "*=") ||
	    op_is(op, "/=");
}

static int
op_supported(const char *type, const char *op)
{
	if (op_is(op, "over-write") || op_is(op, "clear"))
		return 1;
	if (op_is(op, "set"))
		return strcmp(type, "object") == 0 || strcmp(type, "string") ==
		    0 || is_number(type) || strcmp(type, "boolean") == 0;
	if (op_arith(op))
		return is_number(type);
	if (op_is(op, "append") || op_is(op, "extend") ||
	    op_is(op, "remove-first") || op_is(op, "remove-last"))
		return is_array(type);
	return 0;
}

static int
constant_supported(const char *type, const char *op)
{
	if (strcmp(type, "string") == 0 || strcmp(type, "object") == 0 ||
	    strcmp(type, "boolean") == 0)
		return op_is(op, "over-write") || op_is(op, "set");
	if (is_number(type))
		return op_is(op, "over-write") || op_is(op, "set") ||
		    op_arith(op);
	return 0;
}

/* Is every element of array a of the element kind of type t? */
static int
elems_valid(const char *t, const json_t *a)
{
	json_t	*e;
	size_t	 i;

	json_array_foreach(a, i, e) {
		if (strcmp(t, "array[string]") == 0 && !json_is_string(e))
			return 0;
		if (strcmp(t, "array[number]") == 0 && !json_is_number(e))
			return 0;
		if (strcmp(t, "array[object]") == 0 && !json_is_object(e))
			return 0;
		if (strcmp(t, "array[boolean]") == 0 && !json_is_boolean(e))
			return 0;
		if (strcmp(t, "array[any]") == 0 && !json_is_string(e) &&
		    !json_is_number(e) && !json_is_object(e))
			return 0;
	}
	return 1;
}

/* helpers.is_input_value_valid */
static int
value_valid(const char *t, const char *op, const json_t *v)
{
	if (op_is(op, "clear") || op_is(op, "remove-first") ||
	    op_is(op, "remove-last"))
		return 1;
	if (strcmp(t, "any") == 0)
		return op_is(op, "over-write");
	if (strcmp(t, "string") == 0)
		return json_is_string(v);
	if (strcmp(t, "boolean") == 0)
		return json_is_boolean(v);
	if (is_number(t))
		return json_is_number(v) && !(op_is(op, "/=") &&
		    json_number_value(v) == 0);
	if (strcmp(t, "object") == 0)
		return json_is_object(v);
	if (strcmp(t, "array[file]") == 0 || !is_array(t))
		return 0;
	if (op_is(op, "append")) {
		if (json_is_array(v) || json_is_null(v) ||
		    (json_is_boolean(v) && strcmp(t, "array[boolean]") != 0))
			return 0;
		if (strcmp(t, "array[string]") == 0)
			return json_is_string(v);
		if (strcmp(t, "array[number]") == 0)
			return json_is_number(v);
		if (strcmp(t, "array[object]") == 0)
			return json_is_object(v);
		if (strcmp(t, "array[boolean]") == 0)
			return json_is_boolean(v);
		return json_is_string(v) || json_is_number(v) ||
		    json_is_object(v);
	}
	if (op_is(op, "extend") || op_is(op, "over-write"))
		return json_is_array(v) && elems_valid(t, v);
	return 0;
}

/* Python arithmetic on two JSON numbers; NULL on overflow-free failure. */
static json_t *
arith(const char *op, const json_t *a, const json_t *b)
{
	json_int_t	x, y, r;
	double		dx = json_number_value(a), dy = json_number_value(b);

	if (json_is_integer(a) && json_is_integer(b) && !op_is(op, "/=")) {
		x = json_integer_value(a);
		y = json_integer_value(b);
		if (op_is(op, "+=") && !__builtin_add_overflow(x, y, &r))
			return json_integer(r);
		if (op_is(op, "-=") && !__builtin_sub_overflow(x, y, &r))
			return json_integer(r);
		if (op_is(op, "*=") && !__builtin_mul_overflow(x, y, &r))
			return json_integer(r);
	}
	if (op_is(op, "+="))
		return json_real(dx + dy);
	if (op_is(op, "-="))
		return json_real(dx - dy);
	if (op_is(op, "*="))
		return json_real(dx * dy);
	return json_real(dx / dy);
}

/* The new value of one item's operation. New reference or NULL. */
static json_t *
apply(const struct target *t, const char *op, const json_t *cur,
    const json_t *v)
{
	json_t	*nv;
	size_t	 i, n = json_array_size(cur);

	if (op_is(op, "over-write") || op_is(op, "set"))
		return json_incref((json_t *)v);
	if (op_is(op, "clear"))
		return zero_value(t->type);
	if (op_arith(op))
		return arith(op, cur, v);
	if (!json_is_array(cur))
		return json_array();
	if (op_is(op, "append") || op_is(op, "extend")) {
		if ((nv = json_copy((json_t *)cur)) == NULL)
			return NULL;
		if ((op_is(op, "append") ? json_array_append(nv, (json_t *)v) :
		    json_array_extend(nv, (json_t *)v)) != 0)
			goto fail;
		return nv;
	}
	/* remove-first / remove-last: a new array without that end */
	if ((nv = json_array()) == NULL || n == 0)
		return nv;
	for (i = op_is(op, "remove-first") ? 1 : 0;
	    i < (op_is(op, "remove-last") ? n - 1 : n); i++)
		if (json_array_append(nv, json_array_get(cur, i)) != 0)
			goto fail;
	return nv;
fail:
	json_decref(nv);
	return NULL;
}

static int
assigner_item(struct node_ctx *c, const json_t *item, json_t *updated)
{
	const char	*op = json_string_value(json_object_get(item,
			    "operation"));
	const char	*it = json_string_value(json_object_get(item,
			    "input_type"));
	json_t		*cur = NULL, *v = NULL, *parsed, *nv = NULL;
	struct target	 t;
	char		*vtext = NULL;
	int		 rc = -1, from_var;

	if (op == NULL)
		op = "over-write";
	if (it == NULL)
		it = "variable";
	if (target_of(c, json_object_get(item, "variable_selector"), &t,
	    &cur) != 0)
		goto out;
	if (!op_supported(t.type, op)) {
		node_fail(c, "Operation %s is not supported for type %s", op,
		    t.type);
		goto out;
	}
	from_var = strcmp(it, "variable") == 0;
	if (from_var && (op_is(op, "set") || op_arith(op))) {
		node_fail(c, "Input type variable is not supported for "
		    "operation %s", op);
		goto out;
	}
	if (!from_var && !constant_supported(t.type, op)) {
		node_fail(c, "Input type constant is not supported for "
		    "operation %s", op);
		goto out;
	}
	if (from_var && !op_is(op, "clear") && !op_is(op, "remove-first") &&
	    !op_is(op, "remove-last")) {
		if ((v = node_resolve(c, json_object_get(item, "value"))) ==
		    NULL) {
			node_fail(c, "Variable %s not found", json_is_array(
			    json_object_get(item, "value")) ? "of the item's "
			    "value" : "(no selector in value)");
			goto out;
		}
		if (json_is_null(v)) {	/* Dify skips a None input */
			rc = 0;
			goto out;
		}
	} else
		v = json_incref(json_object_get(item, "value"));
	if ((op_is(op, "over-write") || op_is(op, "set")) &&
	    strcmp(t.type, "object") == 0 && json_is_string(v)) {
		if ((parsed = json_loads(json_string_value(v), JSON_DECODE_ANY,
		    NULL)) == NULL) {
			node_fail(c, "Invalid input value %s",
			    json_string_value(v));
			goto out;
		}
		json_decref(v);
		v = parsed;
	}
	if (!value_valid(t.type, op, v)) {
		vtext = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) :
		    NULL;
		node_fail(c, "Invalid input value %s for %s (%s, operation "
		    "%s)", vtext ? vtext : "null", t.label, t.type, op);
		goto out;
	}
	if ((nv = apply(&t, op, cur, v)) == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	if (write_target(c, &t, nv, updated) != 0)
		goto out;
	rc = 0;
out:
	free(vtext);
	json_decref(cur);
	json_decref(v);
	json_decref(nv);
	return rc;
}

static int
assigner_run(struct node_ctx *c)
{
	const char	*ver = node_str(c->node, "version");
	json_t		*updated = json_array(), *items, *item;
	size_t		 i;
	int		 rc = -1;

	if (updated == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	if (ver == NULL || strcmp(ver, "1") == 0) {
		if (assigner_v1(c, updated) != 0)
			goto out;
	} else if (strcmp(ver, "2") == 0) {
		items = json_object_get(c->node->data, "items");
		if (json_object_set_new(c->inputs, "version",
		    json_string("2")) != 0 || json_object_set_new(c->inputs,
		    "items", items ? json_deep_copy(items) : json_array()) !=
		    0) {
			node_fail(c, "out of memory");
			goto out;
		}
		json_array_foreach(items, i, item)
			if (assigner_item(c, item, updated) != 0)
				goto out;
	} else {
		node_fail(c, "unknown assigner version '%s'", ver);
		goto out;
	}
	rc = 0;
out:
	/* the trace shows what was written, also when a later item failed */
	if (updated != NULL && record_updates(c, updated) != 0 && rc == 0)
		rc = node_fail(c, "out of memory");
	json_decref(updated);
	return rc;
}

const struct node_type node_assigner = { "assigner", assigner_run, 0 };
