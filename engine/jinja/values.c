/*
 * values.c — the value model of the Jinja2 engine: values (Python's
 * None, bool, int, float, str, list, tuple, dict and Jinja2's Undefined,
 * loop and namespace objects) with their reference counts, the errors a
 * render records, and the conversions Python applies to them: str() and
 * repr(), truthiness, == and <, iteration, len() and JSON input.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/jinja/jinja.h"

/* ====== Values ====== */

struct jv jinja_jv_none_s = { .t = JT_NONE, .refs = 1 };
struct jv jinja_jv_true_s = { .t = JT_BOOL, .refs = 1, .u.b = 1 };
struct jv jinja_jv_false_s = { .t = JT_BOOL, .refs = 1, .u.b = 0 };

struct jv *
jinja_jv_ref(struct jv *v)
{
	/* Atomic: literals of a compiled template are shared by renders
	 * running in several threads. */
	if (v != NULL && !IMMORTAL(v))
		__atomic_add_fetch(&v->refs, 1, __ATOMIC_RELAXED);
	return v;
}

void
jinja_jv_unref(struct jv *v)
{
	size_t i;

	if (v == NULL || IMMORTAL(v) ||
	    __atomic_sub_fetch(&v->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	switch (v->t) {
	case JT_STR:
	case JT_UNDEF:
		free(v->u.s.p);
		break;
	case JT_LIST:
	case JT_TUPLE:
		for (i = 0; i < v->u.l.n; i++)
			jinja_jv_unref(v->u.l.v[i]);
		free(v->u.l.v);
		break;
	case JT_DICT:
	case JT_NS:
		for (i = 0; i < v->u.d.n; i++) {
			jinja_jv_unref(v->u.d.k[i]);
			jinja_jv_unref(v->u.d.v[i]);
		}
		free(v->u.d.k);
		free(v->u.d.v);
		break;
	case JT_METHOD:
		jinja_jv_unref(v->u.m.self);
		break;
	case JT_LOOP:
		jinja_jv_unref(v->u.loop.items);
		break;
	default:
		break;
	}
	free(v);
}

struct jv *
jinja_jv_new(enum jt t)
{
	struct jv *v;

	if ((v = calloc(1, sizeof(*v))) == NULL)
		return NULL;
	v->t = t;
	v->refs = 1;
	return v;
}

struct jv *
jinja_jv_bool(int b)
{
	return b ? &jinja_jv_true_s : &jinja_jv_false_s;
}

struct jv *
jinja_jv_int(int64_t i)
{
	struct jv *v;

	if ((v = jinja_jv_new(JT_INT)) != NULL)
		v->u.i = i;
	return v;
}

struct jv *
jinja_jv_float(double f)
{
	struct jv *v;

	if ((v = jinja_jv_new(JT_FLOAT)) != NULL)
		v->u.f = f;
	return v;
}

/* A string of n bytes copied from s. */
struct jv *
jinja_jv_strn(const char *s, size_t n)
{
	struct jv *v;

	if ((v = jinja_jv_new(JT_STR)) == NULL)
		return NULL;
	if ((v->u.s.p = malloc(n + 1)) == NULL) {
		free(v);
		return NULL;
	}
	if (n > 0)
		memcpy(v->u.s.p, s, n);
	v->u.s.p[n] = '\0';
	v->u.s.n = n;
	return v;
}

struct jv *
jinja_jv_str(const char *s)
{
	return jinja_jv_strn(s, strlen(s));
}

/* A string taking over sb's bytes. */
struct jv *
jinja_jv_str_sb(struct dbuf *sb)
{
	struct jv	*v;
	size_t		 n = sb->len;
	char		*p;

	if ((p = dbuf_take(sb, NULL)) == NULL)
		return NULL;
	if ((v = jinja_jv_new(JT_STR)) == NULL) {
		free(p);
		return NULL;
	}
	v->u.s.p = p;
	v->u.s.n = n;
	return v;
}

/* An undefined value; hint (may be NULL) is the UndefinedError message. */
struct jv *
jinja_jv_undef(const char *hint)
{
	struct jv *v;

	if ((v = jinja_jv_new(JT_UNDEF)) == NULL)
		return NULL;
	if (hint != NULL && (v->u.s.p = strdup(hint)) == NULL) {
		free(v);
		return NULL;
	}
	return v;
}

/* An empty list (or tuple) with room for cap items. */
struct jv *
jinja_jv_list(enum jt t, size_t cap)
{
	struct jv *v;

	if ((v = jinja_jv_new(t)) == NULL)
		return NULL;
	if ((v->u.l.v = calloc(cap ? cap : 1, sizeof(*v->u.l.v))) == NULL) {
		free(v);
		return NULL;
	}
	return v;
}

/* Appends item (taking the reference) to a list made with room for it. */
void
jinja_jv_push(struct jv *l, struct jv *item)
{
	l->u.l.v[l->u.l.n++] = item;
}

struct jv *
jinja_jv_dict(size_t cap)
{
	struct jv *v;

	if ((v = jinja_jv_new(JT_DICT)) == NULL)
		return NULL;
	v->u.d.k = calloc(cap ? cap : 1, sizeof(*v->u.d.k));
	v->u.d.v = calloc(cap ? cap : 1, sizeof(*v->u.d.v));
	if (v->u.d.k == NULL || v->u.d.v == NULL) {
		free(v->u.d.k);
		free(v->u.d.v);
		free(v);
		return NULL;
	}
	return v;
}

int
jinja_is_num(const struct jv *v)
{
	return v->t == JT_INT || v->t == JT_FLOAT || v->t == JT_BOOL;
}

int
jinja_is_seq(const struct jv *v)
{
	return v->t == JT_LIST || v->t == JT_TUPLE;
}

double
jinja_num_f(const struct jv *v)
{
	return v->t == JT_FLOAT ? v->u.f :
	    v->t == JT_INT ? (double)v->u.i : (double)v->u.b;
}

int64_t
jinja_num_i(const struct jv *v)
{
	return v->t == JT_INT ? v->u.i : v->u.b;
}

/* Python's type name, for error messages. */
const char *
jinja_jv_type(const struct jv *v)
{
	switch (v->t) {
	case JT_UNDEF: return "Undefined";
	case JT_NONE: return "NoneType";
	case JT_BOOL: return "bool";
	case JT_INT: return "int";
	case JT_FLOAT: return "float";
	case JT_STR: return "str";
	case JT_LIST:
		switch (v->view) {
		case JV_ITER: return "generator";
		case JV_KEYS: return "dict_keys";
		case JV_VALUES: return "dict_values";
		case JV_ITEMS: return "dict_items";
		default: return "list";
		}
	case JT_TUPLE: return "tuple";
	case JT_DICT: return "dict";
	case JT_METHOD:
	case JT_FUNC: return "builtin_function_or_method";
	case JT_LOOP: return "LoopContext";
	case JT_NS: return "Namespace";
	}
	return "object";
}

/* Number of code points in a string value. */
size_t
jinja_str_len(const struct jv *v)
{
	size_t i, n = 0;

	for (i = 0; i < v->u.s.n; i++)
		n += ((unsigned char)v->u.s.p[i] & 0xC0) != 0x80;
	return n;
}

/* Byte offset of code point index ci in s (n bytes). */
size_t
jinja_str_off(const char *s, size_t n, size_t ci)
{
	size_t i = 0;

	while (i < n && ci > 0) {
		i++;
		while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80)
			i++;
		ci--;
	}
	return i;
}

/* ====== Conversions ====== */

/* str() (repr 0) or repr() (repr 1) of v into sb; -1 with the error set
 * for values whose text is an object address in Python. */
int
jinja_jv_write(struct rt *rt, int line, struct dbuf *sb, const struct jv *v,
    int repr, int depth)
{
	size_t	i;
	int	rc = 0;

	if (depth > 1100) {
		jinja_fail(rt, line, "value nested too deeply to print");
		return -1;
	}
	switch (v->t) {
	case JT_UNDEF:
		if (repr)
			dbuf_addstr(sb, "Undefined");
		return 0;
	case JT_NONE: dbuf_addstr(sb, "None"); return 0;
	case JT_BOOL: dbuf_addstr(sb, v->u.b ? "True" : "False"); return 0;
	case JT_INT: tpl_add_py_int(sb, v->u.i); return 0;
	case JT_FLOAT: tpl_add_py_float(sb, v->u.f); return 0;
	case JT_STR:
		if (!repr)
			dbuf_add(sb, v->u.s.p, v->u.s.n);
		else {
			if (v->markup)
				dbuf_addstr(sb, "Markup(");
			tpl_add_py_str(sb, v->u.s.p, v->u.s.n);
			if (v->markup)
				dbuf_addstr(sb, ")");
		}
		return 0;
	case JT_LIST:
	case JT_TUPLE:
		if (v->view == JV_ITER) {
			jinja_fail(rt, line, "cannot print a generator (Jinja2 "
			    "prints its address): add |list");
			return -1;
		}
		if (v->view == JV_KEYS)
			dbuf_addstr(sb, "dict_keys(");
		else if (v->view == JV_VALUES)
			dbuf_addstr(sb, "dict_values(");
		else if (v->view == JV_ITEMS)
			dbuf_addstr(sb, "dict_items(");
		dbuf_addstr(sb, v->t == JT_LIST ? "[" : "(");
		for (i = 0; rc == 0 && i < v->u.l.n; i++) {
			if (i > 0)
				dbuf_add(sb, ", ", 2);
			rc = jinja_jv_write(rt, line, sb, v->u.l.v[i], 1,
			    depth + 1);
		}
		if (v->t == JT_TUPLE && v->u.l.n == 1)
			dbuf_add(sb, ",", 1);
		dbuf_addstr(sb, v->t == JT_LIST ? "]" : ")");
		if (v->view != JV_PLAIN)
			dbuf_add(sb, ")", 1);
		return rc;
	case JT_DICT:
		dbuf_add(sb, "{", 1);
		for (i = 0; rc == 0 && i < v->u.d.n; i++) {
			if (i > 0)
				dbuf_add(sb, ", ", 2);
			rc = jinja_jv_write(rt, line, sb, v->u.d.k[i], 1,
			    depth + 1);
			dbuf_add(sb, ": ", 2);
			if (rc == 0)
				rc = jinja_jv_write(rt, line, sb, v->u.d.v[i],
				    1, depth + 1);
		}
		dbuf_add(sb, "}", 1);
		return rc;
	default:
		jinja_fail(rt, line, "cannot print a %s (Jinja2 prints its "
		    "address)", jinja_jv_type(v));
		return -1;
	}
}

/* Python's str(v) as a new string value (v itself when it is a str). */
struct jv *
jinja_jv_to_str(struct rt *rt, int line, struct jv *v)
{
	struct dbuf	 sb = { 0 };
	struct jv	*s;

	if (v->t == JT_STR)
		return jinja_jv_ref(v);
	if (jinja_jv_write(rt, line, &sb, v, 0, 0) != 0) {
		dbuf_free(&sb);
		return NULL;
	}
	if (sb.len > rt->lim->max_value) {
		dbuf_free(&sb);
		return jinja_limit(rt, line, "value size", rt->lim->max_value);
	}
	if ((s = jinja_jv_str_sb(&sb)) == NULL)
		return jinja_oom(rt);
	return s;
}

/* Python truthiness. */
int
jinja_jv_truth(const struct jv *v)
{
	switch (v->t) {
	case JT_UNDEF:
	case JT_NONE: return 0;
	case JT_BOOL: return v->u.b;
	case JT_INT: return v->u.i != 0;
	case JT_FLOAT: return v->u.f != 0.0;
	case JT_STR: return v->u.s.n > 0;
	case JT_LIST:
		if (v->view == JV_ITER)
			return 1;
		return v->u.l.n > 0;
	case JT_TUPLE: return v->u.l.n > 0;
	case JT_DICT: return v->u.d.n > 0;
	default: return 1;
	}
}

/* Python ==. */
int
jinja_jv_eq(const struct jv *a, const struct jv *b)
{
	size_t i, j;

	if (a == b)
		return 1;
	if (jinja_is_num(a) && jinja_is_num(b)) {
		if (a->t != JT_FLOAT && b->t != JT_FLOAT)
			return jinja_num_i(a) == jinja_num_i(b);
		return jinja_num_f(a) == jinja_num_f(b);
	}
	if (a->t != b->t)
		return 0;
	switch (a->t) {
	case JT_UNDEF:
	case JT_NONE: return 1;
	case JT_STR:
		return a->u.s.n == b->u.s.n &&
		    memcmp(a->u.s.p, b->u.s.p, a->u.s.n) == 0;
	case JT_LIST:
	case JT_TUPLE:
		if (a->u.l.n != b->u.l.n || a->view == JV_ITER ||
		    b->view == JV_ITER)
			return 0;
		for (i = 0; i < a->u.l.n; i++)
			if (!jinja_jv_eq(a->u.l.v[i], b->u.l.v[i]))
				return 0;
		return 1;
	case JT_DICT:
		if (a->u.d.n != b->u.d.n)
			return 0;
		for (i = 0; i < a->u.d.n; i++) {
			for (j = 0; j < b->u.d.n; j++)
				if (jinja_jv_eq(a->u.d.k[i], b->u.d.k[j]))
					break;
			if (j == b->u.d.n || !jinja_jv_eq(a->u.d.v[i],
			    b->u.d.v[j]))
				return 0;
		}
		return 1;
	default:
		return 0;
	}
}

/* Python's <-ordering: *res < 0, 0, > 0; -1 with a TypeError set. */
int
jinja_jv_cmp(struct rt *rt, int line, const struct jv *a, const struct jv *b,
    const char *op, int *res)
{
	size_t	i, n;
	double	x, y;
	int	c;

	if (a->t == JT_UNDEF || b->t == JT_UNDEF) {
		jinja_undef_error(rt, line, a->t == JT_UNDEF ? a : b);
		return -1;
	}
	if (jinja_is_num(a) && jinja_is_num(b)) {
		if (a->t != JT_FLOAT && b->t != JT_FLOAT)
			*res = jinja_num_i(a) < jinja_num_i(b) ? -1 :
			    jinja_num_i(a) > jinja_num_i(b);
		else {
			x = jinja_num_f(a);
			y = jinja_num_f(b);
			*res = x < y ? -1 : x > y ? 1 : x == y ? 0 : 2;
		}
		return 0;
	}
	if (a->t == JT_STR && b->t == JT_STR) {
		n = a->u.s.n < b->u.s.n ? a->u.s.n : b->u.s.n;
		c = memcmp(a->u.s.p, b->u.s.p, n);
		*res = c != 0 ? c : a->u.s.n < b->u.s.n ? -1 :
		    a->u.s.n > b->u.s.n;
		return 0;
	}
	if (a->t == b->t && jinja_is_seq(a) && a->view == JV_PLAIN &&
	    b->view == JV_PLAIN) {
		for (i = 0; i < a->u.l.n && i < b->u.l.n; i++)
			if (!jinja_jv_eq(a->u.l.v[i], b->u.l.v[i]))
				return jinja_jv_cmp(rt, line, a->u.l.v[i],
				    b->u.l.v[i], op, res);
		*res = a->u.l.n < b->u.l.n ? -1 : a->u.l.n > b->u.l.n;
		return 0;
	}
	jinja_fail(rt, line, "TypeError: '%s' not supported between instances "
	    "of '%s' and '%s'", op, jinja_jv_type(a), jinja_jv_type(b));
	return -1;
}

/* A JSON value as a Jinja value; NULL on allocation failure or when
 * nested deeper than the limit (*deep set). */
struct jv *
jinja_jv_from_json(const json_t *j, int depth, int *deep)
{
	struct jv	*v = NULL, *k, *item;
	const char	*key;
	json_t		*m;
	size_t		 i;

	if (depth > 1000) {
		*deep = 1;
		return NULL;
	}
	switch (json_typeof(j)) {
	case JSON_NULL: return &jinja_jv_none_s;
	case JSON_TRUE: return &jinja_jv_true_s;
	case JSON_FALSE: return &jinja_jv_false_s;
	case JSON_INTEGER: return jinja_jv_int(json_integer_value(j));
	case JSON_REAL: return jinja_jv_float(json_real_value(j));
	case JSON_STRING:
		return jinja_jv_strn(json_string_value(j),
		    json_string_length(j));
	case JSON_ARRAY:
		if ((v = jinja_jv_list(JT_LIST, json_array_size(j))) == NULL)
			return NULL;
		for (i = 0; i < json_array_size(j); i++) {
			item = jinja_jv_from_json(json_array_get(j, i),
			    depth + 1, deep);
			if (item == NULL) {
				jinja_jv_unref(v);
				return NULL;
			}
			jinja_jv_push(v, item);
		}
		return v;
	case JSON_OBJECT:
		if ((v = jinja_jv_dict(json_object_size(j))) == NULL)
			return NULL;
		json_object_foreach((json_t *)j, key, m) {
			k = jinja_jv_str(key);
			item = k ? jinja_jv_from_json(m, depth + 1, deep) :
			    NULL;
			if (item == NULL) {
				jinja_jv_unref(k);
				jinja_jv_unref(v);
				return NULL;
			}
			v->u.d.k[v->u.d.n] = k;
			v->u.d.v[v->u.d.n++] = item;
		}
		return v;
	}
	return NULL;
}

/*
 * The items iterating v yields, as a list (a new reference): list and
 * tuple items, a string's characters, a dict's keys; Undefined yields
 * nothing and a generator only once.
 */
struct jv *
jinja_jv_iter(struct rt *rt, int line, struct jv *v)
{
	struct jv	*l, *c;
	size_t		 i, k;

	switch (v->t) {
	case JT_LIST:
	case JT_TUPLE:
		if (v->view == JV_ITER) {
			if (v->used)
				return jinja_jv_list(JT_LIST, 0) ?:
				    jinja_oom(rt);
			v->used = 1;
		}
		return jinja_jv_ref(v);
	case JT_UNDEF:
		return jinja_jv_list(JT_LIST, 0) ?: jinja_oom(rt);
	case JT_STR:
		if ((l = jinja_jv_list(JT_LIST, v->u.s.n)) == NULL)
			return jinja_oom(rt);
		for (i = 0; i < v->u.s.n; i += k) {
			tpl_utf8_next(v->u.s.p + i, v->u.s.n - i, &k);
			if ((c = jinja_jv_strn(v->u.s.p + i, k)) == NULL) {
				jinja_jv_unref(l);
				return jinja_oom(rt);
			}
			jinja_jv_push(l, c);
		}
		return l;
	case JT_DICT:
	case JT_NS:
		if ((l = jinja_jv_list(JT_LIST, v->u.d.n)) == NULL)
			return jinja_oom(rt);
		for (i = 0; i < v->u.d.n; i++)
			jinja_jv_push(l, jinja_jv_ref(v->u.d.k[i]));
		return l;
	default:
		return jinja_fail(rt, line, "TypeError: '%s' object is not "
		    "iterable", jinja_jv_type(v));
	}
}

/* len(v), or -1 with a TypeError set. */
int64_t
jinja_jv_len(struct rt *rt, int line, const struct jv *v)
{
	switch (v->t) {
	case JT_UNDEF: return 0;
	case JT_STR: return (int64_t)jinja_str_len(v);
	case JT_LIST:
		if (v->view == JV_ITER)
			break;
		return (int64_t)v->u.l.n;
	case JT_TUPLE: return (int64_t)v->u.l.n;
	case JT_DICT: return (int64_t)v->u.d.n;
	default: break;
	}
	jinja_fail(rt, line, "TypeError: object of type '%s' has no len()",
	    jinja_jv_type(v));
	return -1;
}

/* ====== Errors ====== */

/* Records the first error; always returns NULL. */
void *
jinja_fail(struct rt *rt, int line, const char *fmt, ...)
{
	va_list	ap;
	char	msg[ENGINE_ERRMAX - 24];

	if (rt->rc != 0)
		return NULL;
	rt->rc = ENGINE_EINVAL;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (rt->err != NULL)
		snprintf(rt->err, ENGINE_ERRMAX, "line %d: %s", line, msg);
	return NULL;
}

void *
jinja_limit(struct rt *rt, int line, const char *what, size_t max)
{
	if (rt->rc != 0)
		return NULL;
	rt->rc = ENGINE_ELIMIT;
	if (rt->err != NULL)
		snprintf(rt->err, ENGINE_ERRMAX, "line %d: %s: more than %zu",
		    line, what, max);
	return NULL;
}

void *
jinja_oom(struct rt *rt)
{
	if (rt->rc == 0) {
		rt->rc = ENGINE_ENOMEM;
		if (rt->err != NULL)
			snprintf(rt->err, ENGINE_ERRMAX, "out of memory");
	}
	return NULL;
}

/* Counts n steps of work; NULL (and the limit's error) past the budget. */
int
jinja_step(struct rt *rt, int line, size_t n)
{
	rt->steps += n;
	if (rt->steps > rt->lim->max_steps) {
		jinja_limit(rt, line, "evaluation steps", rt->lim->max_steps);
		return -1;
	}
	return 0;
}

/* UndefinedError for an undefined value used where Jinja2 raises. */
void *
jinja_undef_error(struct rt *rt, int line, const struct jv *v)
{
	return jinja_fail(rt, line, "UndefinedError: %s",
	    v->u.s.p != NULL ? v->u.s.p : "value is undefined");
}
