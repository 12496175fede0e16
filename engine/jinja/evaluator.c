/*
 * evaluator.c — the Jinja2 evaluator: looks up names, attributes, items
 * and slices, applies operators with Python's rules, evaluates
 * expressions, runs statements into the output, and renders a compiled
 * template (jinja_render_compiled, jinja_render).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/jinja/jinja.h"

/* ====== Evaluation: names, attributes, items ====== */

/* Python method names per type: a name here is a method (called, it runs
 * or is refused); any other attribute is looked up as an item. */
static const char *const str_methods[] = { "capitalize", "casefold",
    "center", "count", "encode", "endswith", "expandtabs", "find", "format",
    "format_map", "index", "isalnum", "isalpha", "isascii", "isdecimal",
    "isdigit", "isidentifier", "islower", "isnumeric", "isprintable",
    "isspace", "istitle", "isupper", "join", "ljust", "lower", "lstrip",
    "maketrans", "partition", "removeprefix", "removesuffix", "replace",
    "rfind", "rindex", "rjust", "rpartition", "rsplit", "rstrip", "split",
    "splitlines", "startswith", "strip", "swapcase", "title", "translate",
    "upper", "zfill", NULL };
static const char *const list_methods[] = { "append", "clear", "copy",
    "count", "extend", "index", "insert", "pop", "remove", "reverse", "sort",
    NULL };
static const char *const dict_methods[] = { "clear", "copy", "fromkeys",
    "get", "items", "keys", "pop", "popitem", "setdefault", "update",
    "values", NULL };
static const char *const num_methods[] = { "as_integer_ratio", "bit_count",
    "bit_length", "conjugate", "denominator", "from_bytes", "imag",
    "numerator", "real", "to_bytes", "fromhex", "hex", "is_integer", NULL };
static const char *const loop_attrs[] = { "index", "index0", "revindex",
    "revindex0", "first", "last", "length", "depth", "depth0", "previtem",
    "nextitem", "cycle", "changed", NULL };

const char *
jinja_in_list(const char *const *l, const char *name)
{
	for (; *l != NULL; l++)
		if (strcmp(*l, name) == 0)
			return *l;
	return NULL;
}

struct jv *
jinja_method(struct rt *rt, struct jv *self, const char *name)
{
	struct jv *m;

	if ((m = jinja_jv_new(JT_METHOD)) == NULL)
		return jinja_oom(rt);
	m->u.m.self = jinja_jv_ref(self);
	m->u.m.name = name;
	return m;
}

/* Jinja2's object_type_repr, for undefined hints. */
static void
type_repr(const struct jv *v, char *buf, size_t sz)
{
	if (v->t == JT_NONE)
		snprintf(buf, sz, "None");
	else
		snprintf(buf, sz, "%s object", jinja_jv_type(v));
}

static struct jv *
undef_attr(struct rt *rt, const struct jv *obj, const char *name)
{
	char	 t[40], hint[160];
	struct jv *u;

	type_repr(obj, t, sizeof(t));
	snprintf(hint, sizeof(hint), "'%s' has no attribute '%.60s'", t, name);
	if ((u = jinja_jv_undef(hint)) == NULL)
		return jinja_oom(rt);
	return u;
}

static struct jv *
loop_attr(struct rt *rt, int line, struct jv *lp, const char *name)
{
	struct jv	*items = lp->u.loop.items;
	size_t		 i = lp->u.loop.i, n = items->u.l.n;

	if (!strcmp(name, "index"))
		return jinja_jv_int((int64_t)i + 1) ?: jinja_oom(rt);
	if (!strcmp(name, "index0"))
		return jinja_jv_int((int64_t)i) ?: jinja_oom(rt);
	if (!strcmp(name, "revindex"))
		return jinja_jv_int((int64_t)(n - i)) ?: jinja_oom(rt);
	if (!strcmp(name, "revindex0"))
		return jinja_jv_int((int64_t)(n - i - 1)) ?: jinja_oom(rt);
	if (!strcmp(name, "first"))
		return jinja_jv_bool(i == 0);
	if (!strcmp(name, "last"))
		return jinja_jv_bool(i + 1 == n);
	if (!strcmp(name, "length"))
		return jinja_jv_int((int64_t)n) ?: jinja_oom(rt);
	if (!strcmp(name, "depth"))
		return jinja_jv_int(1) ?: jinja_oom(rt);
	if (!strcmp(name, "depth0"))
		return jinja_jv_int(0) ?: jinja_oom(rt);
	if (!strcmp(name, "previtem"))
		return i > 0 ? jinja_jv_ref(items->u.l.v[i - 1]) :
		    jinja_jv_undef("there is no previous item") ?:
		    jinja_oom(rt);
	if (!strcmp(name, "nextitem"))
		return i + 1 < n ? jinja_jv_ref(items->u.l.v[i + 1]) :
		    jinja_jv_undef("there is no next item") ?: jinja_oom(rt);
	if (!strcmp(name, "cycle"))
		return jinja_method(rt, lp, "cycle");
	if (jinja_in_list(loop_attrs, name) != NULL)
		return jinja_fail(rt, line, "loop.%s is not supported", name);
	return undef_attr(rt, lp, name);
}

/* Key lookup in a dict; NULL when absent (borrowed). */
struct jv *
jinja_dict_get(const struct jv *d, const struct jv *key)
{
	size_t i;

	for (i = 0; i < d->u.d.n; i++)
		if (jinja_jv_eq(d->u.d.k[i], key))
			return d->u.d.v[i];
	return NULL;
}

static struct jv *
dict_get_s(const struct jv *d, const char *key)
{
	size_t i, n = strlen(key);

	for (i = 0; i < d->u.d.n; i++)
		if (d->u.d.k[i]->t == JT_STR && d->u.d.k[i]->u.s.n == n &&
		    !memcmp(d->u.d.k[i]->u.s.p, key, n))
			return d->u.d.v[i];
	return NULL;
}

/* environment.getattr: Python attribute first, then item. */
static struct jv *
get_attr(struct rt *rt, int line, struct jv *obj, const char *name)
{
	const char	*m = NULL;
	struct jv	*v;

	if (obj->t == JT_UNDEF)
		return jinja_undef_error(rt, line, obj);
	if (name[0] == '_')
		return jinja_fail(rt, line, "access to the attribute '%s' is "
		    "not supported", name);
	switch (obj->t) {
	case JT_STR: m = jinja_in_list(str_methods, name); break;
	case JT_LIST:
	case JT_TUPLE: m = jinja_in_list(list_methods, name); break;
	case JT_DICT: m = jinja_in_list(dict_methods, name); break;
	case JT_INT:
	case JT_FLOAT:
	case JT_BOOL: m = jinja_in_list(num_methods, name); break;
	case JT_LOOP: return loop_attr(rt, line, obj, name);
	case JT_NS:
		if ((v = dict_get_s(obj, name)) != NULL)
			return jinja_jv_ref(v);
		return undef_attr(rt, obj, name);
	default: break;
	}
	if (m != NULL)
		return jinja_method(rt, obj, m);
	if (obj->t == JT_DICT && (v = dict_get_s(obj, name)) != NULL)
		return jinja_jv_ref(v);
	return undef_attr(rt, obj, name);
}

/* Python index i (negative from the end) into n items; -1 when out. */
static int64_t
norm_index(int64_t i, size_t n)
{
	if (i < 0)
		i += (int64_t)n;
	return i < 0 || i >= (int64_t)n ? -1 : i;
}

/* environment.getitem: item first, then attribute for string keys. */
struct jv *
jinja_get_item(struct rt *rt, int line, struct jv *obj, struct jv *key)
{
	struct jv	*v;
	struct dbuf	 sb = { 0 };
	char		 t[40], hint[160];
	int64_t		 i;
	size_t		 off, k;

	if (obj->t == JT_UNDEF)
		return jinja_undef_error(rt, line, obj);
	if (obj->t == JT_DICT && (v = jinja_dict_get(obj, key)) != NULL)
		return jinja_jv_ref(v);
	if ((key->t == JT_INT || key->t == JT_BOOL) && ((jinja_is_seq(obj) &&
	    obj->view == JV_PLAIN) || obj->t == JT_STR)) {
		if (obj->t == JT_STR) {
			i = norm_index(jinja_num_i(key), jinja_str_len(obj));
			if (i >= 0) {
				off = jinja_str_off(obj->u.s.p, obj->u.s.n,
				    (size_t)i);
				tpl_utf8_next(obj->u.s.p + off,
				    obj->u.s.n - off, &k);
				return jinja_jv_strn(obj->u.s.p + off, k) ?:
				    jinja_oom(rt);
			}
		} else if ((i = norm_index(jinja_num_i(key), obj->u.l.n)) >= 0)
			return jinja_jv_ref(obj->u.l.v[i]);
	}
	if (key->t == JT_STR)
		return get_attr(rt, line, obj, key->u.s.p);
	type_repr(obj, t, sizeof(t));
	if (jinja_jv_write(rt, line, &sb, key, 1, 0) != 0) {
		dbuf_free(&sb);
		return NULL;
	}
	snprintf(hint, sizeof(hint), "'%s' has no element %.60s", t,
	    sb.p ? sb.p : "");
	dbuf_free(&sb);
	return jinja_jv_undef(hint) ?: jinja_oom(rt);
}

/* Python slice bounds: *start, *stop, *step for n items. */
static int
slice_bounds(struct rt *rt, int line, struct jv **p, size_t n,
    int64_t *start, int64_t *stop, int64_t *stepv)
{
	int64_t	v[3];
	int	k;

	for (k = 0; k < 3; k++) {
		if (p[k] == NULL || p[k]->t == JT_NONE) {
			v[k] = INT64_MIN;
			continue;
		}
		if (p[k]->t != JT_INT && p[k]->t != JT_BOOL) {
			jinja_fail(rt, line, "TypeError: slice indices must be "
			    "integers or None");
			return -1;
		}
		v[k] = jinja_num_i(p[k]);
	}
	*stepv = v[2] == INT64_MIN ? 1 : v[2];
	if (*stepv == 0) {
		jinja_fail(rt, line, "ValueError: slice step cannot be zero");
		return -1;
	}
	for (k = 0; k < 2; k++) {
		if (v[k] == INT64_MIN) {
			if (k == 0)
				v[k] = *stepv > 0 ? 0 : (int64_t)n - 1;
			else
				v[k] = *stepv > 0 ? (int64_t)n : -1;
			continue;
		}
		if (v[k] < 0)
			v[k] += (int64_t)n;
		if (v[k] < 0)
			v[k] = *stepv > 0 ? 0 : -1;
		else if (v[k] >= (int64_t)n)
			v[k] = *stepv > 0 ? (int64_t)n : (int64_t)n - 1;
	}
	*start = v[0];
	*stop = v[1];
	return 0;
}

static struct jv *
get_slice(struct rt *rt, int line, struct jv *obj, struct jv **p)
{
	struct jv	*items = NULL, *r = NULL;
	struct dbuf	 sb = { 0 };
	int64_t		 a, b, st, i;
	size_t		 n;

	if (obj->t == JT_UNDEF)
		return jinja_undef_error(rt, line, obj);
	if (obj->t != JT_STR && !(jinja_is_seq(obj) && obj->view == JV_PLAIN))
		return jinja_fail(rt, line, "TypeError: '%s' object is not "
		    "subscriptable", jinja_jv_type(obj));
	if ((items = jinja_jv_iter(rt, line, obj)) == NULL)
		return NULL;
	n = items->u.l.n;
	if (slice_bounds(rt, line, p, n, &a, &b, &st) != 0)
		goto out;
	if (jinja_step(rt, line, n) != 0)
		goto out;
	if (obj->t == JT_STR) {
		for (i = a; st > 0 ? i < b : i > b; i += st)
			dbuf_add(&sb, items->u.l.v[i]->u.s.p,
			    items->u.l.v[i]->u.s.n);
		if (sb.err || (r = jinja_jv_str_sb(&sb)) == NULL)
			jinja_oom(rt);
		goto out;
	}
	if ((r = jinja_jv_list(obj->t, n)) == NULL) {
		jinja_oom(rt);
		goto out;
	}
	for (i = a; st > 0 ? i < b : i > b; i += st)
		jinja_jv_push(r, jinja_jv_ref(items->u.l.v[i]));
out:
	dbuf_free(&sb);
	jinja_jv_unref(items);
	return r;
}

static struct jv *
lookup(struct rt *rt, const struct node *n)
{
	struct frame	*f;
	struct jv	*v, *g;
	size_t		 i;
	char		 hint[160];
	static const char *const globals[] = { "range", "dict", "namespace",
	    NULL };
	static const char *const unsupported[] = { "lipsum", "cycler",
	    "joiner", "self", "varargs", "kwargs", "caller", NULL };

	for (f = rt->top; f != NULL; f = f->up)
		for (i = f->n; i > 0; i--)
			if (!strcmp(f->names[i - 1], n->name))
				return jinja_jv_ref(f->vals[i - 1]);
	if (rt->vars != NULL && (v = dict_get_s(rt->vars, n->name)) != NULL)
		return jinja_jv_ref(v);
	if (jinja_in_list(globals, n->name) != NULL) {
		if ((g = jinja_jv_new(JT_FUNC)) == NULL)
			return jinja_oom(rt);
		g->u.m.name = jinja_in_list(globals, n->name);
		return g;
	}
	if (jinja_in_list(unsupported, n->name) != NULL)
		return jinja_fail(rt, n->line, "the global '%s' is not "
		    "supported", n->name);
	snprintf(hint, sizeof(hint), "'%.60s' is undefined", n->name);
	return jinja_jv_undef(hint) ?: jinja_oom(rt);
}

/* ====== Evaluation: operators ====== */

struct jv *
jinja_checked_str(struct rt *rt, int line, struct dbuf *sb)
{
	struct jv *v;

	if (sb->err) {
		dbuf_free(sb);
		return jinja_oom(rt);
	}
	if (sb->len > rt->lim->max_value) {
		dbuf_free(sb);
		return jinja_limit(rt, line, "value size", rt->lim->max_value);
	}
	if ((v = jinja_jv_str_sb(sb)) == NULL)
		return jinja_oom(rt);
	return v;
}

/* markupsafe.escape of s into sb. */
void
jinja_html_escape(struct dbuf *sb, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		switch (s[i]) {
		case '&': dbuf_addstr(sb, "&amp;"); break;
		case '<': dbuf_addstr(sb, "&lt;"); break;
		case '>': dbuf_addstr(sb, "&gt;"); break;
		case '"': dbuf_addstr(sb, "&#34;"); break;
		case '\'': dbuf_addstr(sb, "&#39;"); break;
		default: dbuf_add(sb, s + i, 1);
		}
}

static const char *const op_names[] = { "+", "-", "*", "/", "//", "%",
    "**" };

static struct jv *
op_error(struct rt *rt, int line, int op, const struct jv *a,
    const struct jv *b)
{
	if (op == OP_ADD && a->t == JT_STR)
		return jinja_fail(rt, line, "TypeError: can only concatenate "
		    "str (not \"%s\") to str", jinja_jv_type(b));
	if (op == OP_MOD && a->t == JT_STR)
		return jinja_fail(rt, line, "printf-style string formatting "
		    "(%%) is not supported");
	return jinja_fail(rt, line, "TypeError: unsupported operand type(s) "
	    "for %s: '%s' and '%s'", op_names[op], jinja_jv_type(a),
	    jinja_jv_type(b));
}

/* seq * count for str, list and tuple. */
static struct jv *
repeat(struct rt *rt, int line, struct jv *seq, int64_t count)
{
	struct dbuf	 sb = { 0 };
	struct jv	*r;
	size_t		 unit, i, k;

	if (count < 0)
		count = 0;
	unit = seq->t == JT_STR ? seq->u.s.n : seq->u.l.n;
	if (unit > 0 && (uint64_t)count > rt->lim->max_value / unit)
		return jinja_limit(rt, line, "value size", rt->lim->max_value);
	if (jinja_step(rt, line, unit * (size_t)count) != 0)
		return NULL;
	if (seq->t == JT_STR) {
		for (i = 0; i < (size_t)count; i++)
			dbuf_add(&sb, seq->u.s.p, seq->u.s.n);
		return jinja_checked_str(rt, line, &sb);
	}
	if ((r = jinja_jv_list(seq->t, unit * (size_t)count)) == NULL)
		return jinja_oom(rt);
	for (i = 0; i < (size_t)count; i++)
		for (k = 0; k < unit; k++)
			jinja_jv_push(r, jinja_jv_ref(seq->u.l.v[k]));
	return r;
}

static struct jv *
float_result(struct rt *rt, int line, double r, double x, double y)
{
	if (isinf(r) && !isinf(x) && !isinf(y) && !isnan(x) && !isnan(y))
		return jinja_fail(rt, line, "OverflowError: numerical result "
		    "out of range");
	return jinja_jv_float(r) ?: jinja_oom(rt);
}

struct jv *
jinja_arith(struct rt *rt, int line, int op, struct jv *a, struct jv *b)
{
	struct dbuf	 sb = { 0 };
	struct jv	*r;
	int64_t		 x, y, z;
	double		 fx, fy, m;
	size_t		 i;

	if (a->t == JT_UNDEF || b->t == JT_UNDEF)
		return jinja_undef_error(rt, line, a->t == JT_UNDEF ? a : b);
	if (op == OP_ADD && a->t == JT_STR && b->t == JT_STR) {
		/* Markup + str escapes the str, and the other way round. */
		if (a->markup && !b->markup) {
			dbuf_add(&sb, a->u.s.p, a->u.s.n);
			jinja_html_escape(&sb, b->u.s.p, b->u.s.n);
		} else if (!a->markup && b->markup) {
			jinja_html_escape(&sb, a->u.s.p, a->u.s.n);
			dbuf_add(&sb, b->u.s.p, b->u.s.n);
		} else {
			dbuf_add(&sb, a->u.s.p, a->u.s.n);
			dbuf_add(&sb, b->u.s.p, b->u.s.n);
		}
		if ((r = jinja_checked_str(rt, line, &sb)) != NULL)
			r->markup = a->markup || b->markup;
		return r;
	}
	if (op == OP_ADD && a->t == b->t && jinja_is_seq(a) &&
	    a->view == JV_PLAIN && b->view == JV_PLAIN) {
		if (a->u.l.n + b->u.l.n > rt->lim->max_value)
			return jinja_limit(rt, line, "value size",
			    rt->lim->max_value);
		if ((r = jinja_jv_list(a->t, a->u.l.n + b->u.l.n)) == NULL)
			return jinja_oom(rt);
		for (i = 0; i < a->u.l.n; i++)
			jinja_jv_push(r, jinja_jv_ref(a->u.l.v[i]));
		for (i = 0; i < b->u.l.n; i++)
			jinja_jv_push(r, jinja_jv_ref(b->u.l.v[i]));
		return r;
	}
	if (op == OP_MUL && (a->t == JT_INT || a->t == JT_BOOL) &&
	    (b->t == JT_STR || (jinja_is_seq(b) && b->view == JV_PLAIN)))
		return repeat(rt, line, b, jinja_num_i(a));
	if (op == OP_MUL && (b->t == JT_INT || b->t == JT_BOOL) &&
	    (a->t == JT_STR || (jinja_is_seq(a) && a->view == JV_PLAIN)))
		return repeat(rt, line, a, jinja_num_i(b));
	if (!jinja_is_num(a) || !jinja_is_num(b))
		return op_error(rt, line, op, a, b);
	if (a->t != JT_FLOAT && b->t != JT_FLOAT && op != OP_DIV) {
		x = jinja_num_i(a);
		y = jinja_num_i(b);
		switch (op) {
		case OP_ADD:
			if (__builtin_add_overflow(x, y, &z))
				goto big;
			break;
		case OP_SUB:
			if (__builtin_sub_overflow(x, y, &z))
				goto big;
			break;
		case OP_MUL:
			if (__builtin_mul_overflow(x, y, &z))
				goto big;
			break;
		case OP_FDIV:
		case OP_MOD:
			if (y == 0)
				return jinja_fail(rt, line,
				    "ZeroDivisionError: integer division or "
				    "modulo by zero");
			if (x == INT64_MIN && y == -1)
				goto big;
			z = op == OP_FDIV ? x / y : x % y;
			if (op == OP_FDIV && x % y != 0 &&
			    (x < 0) != (y < 0))
				z--;
			if (op == OP_MOD && z != 0 && ((z < 0) != (y < 0)))
				z += y;
			break;
		default:		/* OP_POW */
			if (y < 0) {
				if (x == 0)
					return jinja_fail(rt, line,
					    "ZeroDivisionError: 0.0 cannot be "
					    "raised to a negative power");
				return jinja_jv_float(pow((double)x,
				    (double)y)) ?: jinja_oom(rt);
			}
			for (z = 1; y > 0; y--)
				if (__builtin_mul_overflow(z, x, &z))
					goto big;
			break;
		}
		return jinja_jv_int(z) ?: jinja_oom(rt);
	}
	fx = jinja_num_f(a);
	fy = jinja_num_f(b);
	switch (op) {
	case OP_ADD: return jinja_jv_float(fx + fy) ?: jinja_oom(rt);
	case OP_SUB: return jinja_jv_float(fx - fy) ?: jinja_oom(rt);
	case OP_MUL: return jinja_jv_float(fx * fy) ?: jinja_oom(rt);
	case OP_DIV:
		if (fy == 0)
			return jinja_fail(rt, line, "ZeroDivisionError: "
			    "division by zero");
		return jinja_jv_float(fx / fy) ?: jinja_oom(rt);
	case OP_FDIV:
	case OP_MOD:
		if (fy == 0)
			return jinja_fail(rt, line, "ZeroDivisionError: float "
			    "%s by zero", op == OP_MOD ? "modulo" :
			    "floor division");
		m = fmod(fx, fy);
		if (m != 0) {
			if ((fy < 0) != (m < 0))
				m += fy;
		} else
			m = copysign(0.0, fy);
		if (op == OP_MOD)
			return jinja_jv_float(m) ?: jinja_oom(rt);
		{
			double div = (fx - m) / fy, fl;

			if (div != 0) {
				fl = floor(div);
				if (div - fl > 0.5)
					fl += 1.0;
			} else
				fl = copysign(0.0, fx / fy);
			return jinja_jv_float(fl) ?: jinja_oom(rt);
		}
	default:
		if (fx == 0 && fy < 0)
			return jinja_fail(rt, line, "ZeroDivisionError: 0.0 "
			    "cannot be raised to a negative power");
		if (fx < 0 && fy != floor(fy))
			return jinja_fail(rt, line, "a negative number to a "
			    "fractional power (a complex result) is not "
			    "supported");
		return float_result(rt, line, pow(fx, fy), fx, fy);
	}
big:
	return jinja_fail(rt, line, "integers beyond 64 bits are not "
	    "supported");
}

/* Python's "a in b". */
static int
contains(struct rt *rt, int line, struct jv *a, struct jv *b)
{
	struct jv	*items;
	size_t		 i;
	int		 r = 0;

	if (b->t == JT_STR) {
		if (a->t != JT_STR) {
			jinja_fail(rt, line, "TypeError: 'in <string>' "
			    "requires string as left operand, not %s",
			    jinja_jv_type(a));
			return -1;
		}
		return a->u.s.n == 0 || memmem(b->u.s.p, b->u.s.n, a->u.s.p,
		    a->u.s.n) != NULL;
	}
	if (b->t == JT_DICT || b->t == JT_NS)
		return jinja_dict_get(b, a) != NULL;
	if ((items = jinja_jv_iter(rt, line, b)) == NULL)
		return -1;
	if (jinja_step(rt, line, items->u.l.n) == 0)
		for (i = 0; i < items->u.l.n && !r; i++)
			r = jinja_jv_eq(a, items->u.l.v[i]);
	jinja_jv_unref(items);
	return rt->rc != 0 ? -1 : r;
}

int
jinja_compare(struct rt *rt, int line, int op, struct jv *a, struct jv *b)
{
	static const char *const names[] = { "==", "!=", "<", "<=", ">",
	    ">=" };
	int c, r;

	switch (op) {
	case CMP_EQ: return jinja_jv_eq(a, b);
	case CMP_NE: return !jinja_jv_eq(a, b);
	case CMP_IN: return contains(rt, line, a, b);
	case CMP_NOTIN:
		r = contains(rt, line, a, b);
		return r < 0 ? -1 : !r;
	default: break;
	}
	if (jinja_jv_cmp(rt, line, a, b, names[op], &c) != 0)
		return -1;
	if (c == 2)		/* NaN */
		return 0;
	switch (op) {
	case CMP_LT: return c < 0;
	case CMP_LE: return c <= 0;
	case CMP_GT: return c > 0;
	default: return c >= 0;
	}
}

/* ====== Evaluation ====== */

static struct jv *
eval_filter(struct rt *rt, const struct node *n, struct jv *subject)
{
	struct cargs	 ca;
	struct jv	*v, *a[5], *r = NULL;
	char		 what[64];

	if (n->a != NULL) {
		if ((v = jinja_eval(rt, n->a)) == NULL)
			return NULL;
	} else
		v = jinja_jv_ref(subject);
	if (jinja_eval_args(rt, n, &ca) != 0)
		goto out;
	snprintf(what, sizeof(what), "filter '%s'", n->fn->name);
	if (n->fn->fn == NULL)
		r = jinja_seq_filter(rt, n, v, &ca);
	else if (jinja_bind(rt, n->line, what, n->fn->params, &ca, a) == 0)
		r = n->fn->fn(rt, n, v, a);
out:
	jinja_cargs_release(&ca);
	jinja_jv_unref(v);
	return r;
}

/* A filter chain (subject NULL at its start) applied to subject. */
static struct jv *
eval_chain(struct rt *rt, const struct node *n, struct jv *subject)
{
	struct jv *in, *out;

	if (n->a == NULL)
		return eval_filter(rt, n, subject);
	if ((in = eval_chain(rt, n->a, subject)) == NULL)
		return NULL;
	{
		struct node	 tmp = *n;

		tmp.a = NULL;
		out = eval_filter(rt, &tmp, in);
	}
	jinja_jv_unref(in);
	return out;
}

static struct jv *
eval_call(struct rt *rt, const struct node *n)
{
	struct cargs	 ca;
	struct jv	*f, *r = NULL;

	if ((f = jinja_eval(rt, n->a)) == NULL)
		return NULL;
	if (f->t == JT_UNDEF) {
		jinja_undef_error(rt, n->line, f);
		jinja_jv_unref(f);
		return NULL;
	}
	if (f->t != JT_METHOD && f->t != JT_FUNC) {
		jinja_fail(rt, n->line, "TypeError: '%s' object is not "
		    "callable", jinja_jv_type(f));
		jinja_jv_unref(f);
		return NULL;
	}
	if (jinja_eval_args(rt, n, &ca) == 0)
		r = f->t == JT_METHOD ? jinja_call_method(rt, n->line, f, &ca) :
		    jinja_call_global(rt, n->line, f->u.m.name, &ca);
	jinja_cargs_release(&ca);
	jinja_jv_unref(f);
	return r;
}

static struct jv *
eval_seq(struct rt *rt, const struct node *n)
{
	struct jv	*r, *v;
	size_t		 i;

	if (n->kind == N_DICT) {
		if ((r = jinja_jv_dict(n->nargs / 2)) == NULL)
			return jinja_oom(rt);
		for (i = 0; i + 1 < n->nargs; i += 2) {
			struct jv *k = jinja_eval(rt, n->args[i]), *old;

			if (k == NULL || (v = jinja_eval(rt, n->args[i + 1])) ==
			    NULL) {
				jinja_jv_unref(k);
				jinja_jv_unref(r);
				return NULL;
			}
			if ((old = jinja_dict_get(r, k)) != NULL) {
				size_t j;

				for (j = 0; r->u.d.v[j] != old; j++)
					;
				r->u.d.v[j] = v;
				jinja_jv_unref(old);
				jinja_jv_unref(k);
				continue;
			}
			r->u.d.k[r->u.d.n] = k;
			r->u.d.v[r->u.d.n++] = v;
		}
		return r;
	}
	if ((r = jinja_jv_list(n->kind == N_LIST ? JT_LIST : JT_TUPLE,
	    n->nargs)) == NULL)
		return jinja_oom(rt);
	for (i = 0; i < n->nargs; i++) {
		if ((v = jinja_eval(rt, n->args[i])) == NULL) {
			jinja_jv_unref(r);
			return NULL;
		}
		jinja_jv_push(r, v);
	}
	return r;
}

struct jv *
jinja_eval(struct rt *rt, const struct node *n)
{
	struct jv	*a = NULL, *b = NULL, *r = NULL, *p[3] = { 0 };
	struct dbuf	 sb = { 0 };
	size_t		 i;
	int		 t;
	struct cargs	 ca;

	if (rt->rc != 0 || jinja_step(rt, n->line, 1) != 0)
		return NULL;
	switch (n->kind) {
	case N_CONST: return jinja_jv_ref(n->val);
	case N_NAME: return lookup(rt, n);
	case N_ATTR:
		if ((a = jinja_eval(rt, n->a)) != NULL)
			r = get_attr(rt, n->line, a, n->name);
		break;
	case N_ITEM:
		if ((a = jinja_eval(rt, n->a)) != NULL &&
		    (b = jinja_eval(rt, n->b)) != NULL)
			r = jinja_get_item(rt, n->line, a, b);
		break;
	case N_SLICE:
		if ((a = jinja_eval(rt, n->a)) == NULL)
			break;
		for (i = 0; i < 3; i++)
			if (n->args[i] != NULL &&
			    (p[i] = jinja_eval(rt, n->args[i])) == NULL)
				break;
		if (i == 3)
			r = get_slice(rt, n->line, a, p);
		for (i = 0; i < 3; i++)
			jinja_jv_unref(p[i]);
		break;
	case N_CALL: return eval_call(rt, n);
	case N_FILTER: return eval_filter(rt, n, NULL);
	case N_TEST:
		if ((a = jinja_eval(rt, n->a)) == NULL)
			break;
		if (jinja_eval_args(rt, n, &ca) == 0 &&
		    (t = jinja_run_test(rt, n, n->fn, a, &ca)) >= 0)
			r = jinja_jv_bool(n->op ? !t : t);
		jinja_cargs_release(&ca);
		break;
	case N_BIN:
		if ((a = jinja_eval(rt, n->a)) != NULL &&
		    (b = jinja_eval(rt, n->b)) != NULL)
			r = jinja_arith(rt, n->line, n->op, a, b);
		break;
	case N_NEG:
	case N_POS:
		if ((a = jinja_eval(rt, n->a)) == NULL)
			break;
		if (a->t == JT_UNDEF)
			jinja_undef_error(rt, n->line, a);
		else if (!jinja_is_num(a))
			jinja_fail(rt, n->line, "TypeError: bad operand type "
			    "for unary %c: '%s'", n->kind == N_NEG ? '-' : '+',
			    jinja_jv_type(a));
		else if (a->t == JT_FLOAT)
			r = jinja_jv_float(n->kind == N_NEG ? -a->u.f :
			    a->u.f) ?: jinja_oom(rt);
		else if (n->kind == N_NEG && jinja_num_i(a) == INT64_MIN)
			jinja_fail(rt, n->line, "integers beyond 64 bits are "
			    "not supported");
		else
			r = jinja_jv_int(n->kind == N_NEG ? -jinja_num_i(a) :
			    jinja_num_i(a)) ?: jinja_oom(rt);
		break;
	case N_NOT:
		if ((a = jinja_eval(rt, n->a)) != NULL)
			r = jinja_jv_bool(!jinja_jv_truth(a));
		break;
	case N_AND:
	case N_OR:
		if ((a = jinja_eval(rt, n->a)) == NULL)
			break;
		if (jinja_jv_truth(a) == (n->kind == N_OR))
			return a;
		jinja_jv_unref(a);
		return jinja_eval(rt, n->b);
	case N_CMP:
		if ((a = jinja_eval(rt, n->args[0])) == NULL)
			break;
		for (i = 1; i < n->nargs; i++) {
			if ((b = jinja_eval(rt, n->args[i])) == NULL ||
			    (t = jinja_compare(rt, n->line, n->ops[i - 1],
			    a, b)) < 0)
				break;
			jinja_jv_unref(a);
			a = b;
			b = NULL;
			if (!t)
				break;
		}
		if (rt->rc == 0)
			r = jinja_jv_bool(i == n->nargs);
		break;
	case N_COND:
		if ((a = jinja_eval(rt, n->b)) == NULL)
			break;
		if (jinja_jv_truth(a))
			r = jinja_eval(rt, n->a);
		else if (n->c != NULL)
			r = jinja_eval(rt, n->c);
		else
			r = jinja_jv_undef("the inline if-expression evaluated "
			    "to false and no else section was defined.") ?:
			    jinja_oom(rt);
		break;
	case N_LIST:
	case N_TUPLE:
	case N_DICT: return eval_seq(rt, n);
	case N_CONCAT:
		for (i = 0; i < n->nargs; i++) {
			if ((a = jinja_eval(rt, n->args[i])) == NULL ||
			    (b = jinja_jv_to_str(rt, n->line, a)) == NULL)
				break;
			dbuf_add(&sb, b->u.s.p, b->u.s.n);
			jinja_jv_unref(a);
			jinja_jv_unref(b);
			a = b = NULL;
			if (sb.len > rt->lim->max_value)
				break;
		}
		if (rt->rc == 0) {
			if (sb.p == NULL)
				dbuf_add(&sb, "", 0);
			r = jinja_checked_str(rt, n->line, &sb);
		}
		dbuf_free(&sb);
		break;
	}
	jinja_jv_unref(a);
	jinja_jv_unref(b);
	if (r == NULL && rt->rc == 0)
		jinja_oom(rt);
	return r;
}

/* ====== Statements ====== */

static int exec_block(struct rt *rt, const struct block *b);

/* Writes n bytes of output, counting code points against the limit. */
static int
emit(struct rt *rt, int line, const char *s, size_t n)
{
	size_t i;

	if (rt->capturing) {
		dbuf_add(rt->out, s, n);
		if (rt->out->len > rt->lim->max_value) {
			jinja_limit(rt, line, "value size", rt->lim->max_value);
			return -1;
		}
	} else {
		for (i = 0; i < n; i++)
			rt->out_chars += ((unsigned char)s[i] & 0xC0) != 0x80;
		if (rt->out_chars > rt->lim->max_output) {
			jinja_limit(rt, line, "output length",
			    rt->lim->max_output);
			return -1;
		}
		dbuf_add(rt->out, s, n);
	}
	if (rt->out->err) {
		jinja_oom(rt);
		return -1;
	}
	return 0;
}

static int
frame_set(struct rt *rt, struct frame *f, char *name, struct jv *v)
{
	char		**nn;
	struct jv	**nv;
	size_t		  i, cap;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->names[i], name)) {
			jinja_jv_unref(f->vals[i]);
			f->vals[i] = v;
			return 0;
		}
	if (f->n == f->cap) {
		cap = f->cap ? f->cap * 2 : 4;
		nn = realloc(f->names, cap * sizeof(*nn));
		if (nn != NULL)
			f->names = nn;
		nv = nn ? realloc(f->vals, cap * sizeof(*nv)) : NULL;
		if (nv == NULL) {
			jinja_jv_unref(v);
			jinja_oom(rt);
			return -1;
		}
		f->vals = nv;
		f->cap = cap;
	}
	f->names[f->n] = name;
	f->vals[f->n++] = v;
	return 0;
}

static void
frame_release(struct frame *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		jinja_jv_unref(f->vals[i]);
	free(f->names);
	free(f->vals);
}

/* Binds st's targets to v in f (unpacking a tuple target). */
static int
assign(struct rt *rt, const struct stmt *st, struct frame *f, struct jv *v)
{
	struct jv	*items;
	size_t		 i;

	if (!st->tuple)
		return frame_set(rt, f, st->tg[0], jinja_jv_ref(v));
	if ((items = jinja_jv_iter(rt, st->line, v)) == NULL)
		return -1;
	if (items->u.l.n != st->ntg) {
		if (items->u.l.n < st->ntg)
			jinja_fail(rt, st->line, "ValueError: not enough "
			    "values to unpack (expected %zu, got %zu)", st->ntg,
			    items->u.l.n);
		else
			jinja_fail(rt, st->line, "ValueError: too many values "
			    "to unpack (expected %zu)", st->ntg);
		jinja_jv_unref(items);
		return -1;
	}
	for (i = 0; i < st->ntg; i++)
		if (frame_set(rt, f, st->tg[i],
		    jinja_jv_ref(items->u.l.v[i])) != 0)
			break;
	jinja_jv_unref(items);
	return rt->rc != 0 ? -1 : 0;
}

static int
exec_for(struct rt *rt, const struct stmt *st)
{
	struct jv	*it = NULL, *items = NULL, *kept = NULL, *lp = NULL;
	struct frame	 f;
	size_t		 i;
	int		 rc = -1, t;
	struct jv	*c;

	if ((it = jinja_eval(rt, st->e)) == NULL ||
	    (items = jinja_jv_iter(rt, st->line, it)) == NULL)
		goto out;
	if (st->cond != NULL) {
		if ((kept = jinja_jv_list(JT_LIST, items->u.l.n)) == NULL) {
			jinja_oom(rt);
			goto out;
		}
		for (i = 0; i < items->u.l.n; i++) {
			memset(&f, 0, sizeof(f));
			f.up = rt->top;
			rt->top = &f;
			t = assign(rt, st, &f, items->u.l.v[i]) == 0 &&
			    (c = jinja_eval(rt, st->cond)) != NULL ?
			    (jinja_jv_truth(c) + 0 * (jinja_jv_unref(c), 0)) :
			    -1;
			rt->top = f.up;
			frame_release(&f);
			if (t < 0)
				goto out;
			if (t)
				jinja_jv_push(kept,
				    jinja_jv_ref(items->u.l.v[i]));
		}
		jinja_jv_unref(items);
		items = kept;
		kept = NULL;
	}
	if (items->u.l.n == 0) {
		rc = exec_block(rt, &st->orelse);
		goto out;
	}
	if ((lp = jinja_jv_new(JT_LOOP)) == NULL) {
		jinja_oom(rt);
		goto out;
	}
	lp->u.loop.items = jinja_jv_ref(items);
	for (i = 0; i < items->u.l.n; i++) {
		if (++rt->loops > rt->lim->max_loop) {
			jinja_limit(rt, st->line, "loop iterations",
			    rt->lim->max_loop);
			goto out;
		}
		lp->u.loop.i = i;
		memset(&f, 0, sizeof(f));
		f.up = rt->top;
		rt->top = &f;
		t = assign(rt, st, &f, items->u.l.v[i]);
		if (t == 0)
			t = frame_set(rt, &f, "loop", jinja_jv_ref(lp));
		if (t == 0)
			t = exec_block(rt, &st->body);
		rt->top = f.up;
		frame_release(&f);
		if (t != 0)
			goto out;
	}
	rc = 0;
out:
	jinja_jv_unref(lp);
	jinja_jv_unref(kept);
	jinja_jv_unref(items);
	jinja_jv_unref(it);
	return rt->rc != 0 ? -1 : rc;
}

/* Runs body into a fresh buffer; the text as a string value. */
static struct jv *
capture(struct rt *rt, const struct block *body, int line)
{
	struct dbuf	 sb = { 0 }, *saved = rt->out;
	struct jv	*v = NULL;

	rt->out = &sb;
	rt->capturing++;
	if (exec_block(rt, body) == 0) {
		if (sb.p == NULL)
			dbuf_add(&sb, "", 0);
		v = jinja_checked_str(rt, line, &sb);
	}
	rt->capturing--;
	rt->out = saved;
	dbuf_free(&sb);
	return v;
}

static int
exec_stmt(struct rt *rt, const struct stmt *st)
{
	struct dbuf	 sb = { 0 };
	struct jv	*v = NULL, *ns, *r;
	int		 rc = -1;
	size_t		 i;

	switch (st->kind) {
	case S_TEXT:
		return emit(rt, st->line, st->text, st->len);
	case S_PRINT:
		if ((v = jinja_eval(rt, st->e)) == NULL)
			break;
		if (v->t == JT_STR)
			rc = emit(rt, st->line, v->u.s.p, v->u.s.n);
		else if (jinja_jv_write(rt, st->line, &sb, v, 0, 0) == 0) {
			if (sb.err)
				jinja_oom(rt);
			else
				rc = emit(rt, st->line, sb.p ? sb.p : "",
				    sb.len);
		}
		break;
	case S_IF:
		if ((v = jinja_eval(rt, st->e)) == NULL)
			break;
		rc = exec_block(rt, jinja_jv_truth(v) ? &st->body :
		    &st->orelse);
		break;
	case S_FOR:
		return exec_for(rt, st);
	case S_SET:
		if ((v = jinja_eval(rt, st->e)) == NULL)
			break;
		if (st->attr == NULL) {
			rc = assign(rt, st, rt->top, v);
			break;
		}
		{
			struct node n = { .kind = N_NAME, .line = st->line,
			    .name = st->tg[0] };

			if ((ns = lookup(rt, &n)) == NULL)
				break;
			if (ns->t != JT_NS) {
				jinja_fail(rt, st->line, "cannot assign "
				    "attribute on non-namespace object");
				jinja_jv_unref(ns);
				break;
			}
			for (i = 0; i < ns->u.d.n; i++)
				if (!strcmp(ns->u.d.k[i]->u.s.p, st->attr))
					break;
			if (i < ns->u.d.n) {
				jinja_jv_unref(ns->u.d.v[i]);
				ns->u.d.v[i] = jinja_jv_ref(v);
				rc = 0;
			} else {
				struct jv **nk, **nv;

				nk = realloc(ns->u.d.k, (ns->u.d.n + 1) *
				    sizeof(*nk));
				if (nk != NULL)
					ns->u.d.k = nk;
				nv = nk ? realloc(ns->u.d.v, (ns->u.d.n + 1) *
				    sizeof(*nv)) : NULL;
				if (nv != NULL)
					ns->u.d.v = nv;
				if (nv == NULL || (ns->u.d.k[ns->u.d.n] =
				    jinja_jv_str(st->attr)) == NULL)
					jinja_oom(rt);
				else {
					ns->u.d.v[ns->u.d.n++] =
					    jinja_jv_ref(v);
					rc = 0;
				}
			}
			jinja_jv_unref(ns);
		}
		break;
	case S_SETBLOCK:
	case S_FILTER:
		if ((v = capture(rt, &st->body, st->line)) == NULL)
			break;
		if (st->filt != NULL) {
			r = eval_chain(rt, st->filt, v);
			jinja_jv_unref(v);
			if ((v = r) == NULL)
				break;
		}
		if (st->kind == S_SETBLOCK) {
			rc = frame_set(rt, rt->top, st->tg[0], jinja_jv_ref(v));
			break;
		}
		if (jinja_jv_write(rt, st->line, &sb, v, 0, 0) == 0) {
			if (sb.err)
				jinja_oom(rt);
			else
				rc = emit(rt, st->line, sb.p ? sb.p : "",
				    sb.len);
		}
		break;
	}
	dbuf_free(&sb);
	jinja_jv_unref(v);
	return rt->rc != 0 ? -1 : rc;
}

static int
exec_block(struct rt *rt, const struct block *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		if (exec_stmt(rt, b->v[i]) != 0)
			return -1;
	return 0;
}

/* ====== Entry points ====== */

int
jinja_render_compiled(const struct jinja_tpl *t, const json_t *vars,
    char *err, char **out, size_t *outlen)
{
	struct rt	 rt;
	struct dbuf	 sb = { 0 };
	struct frame	 root;
	int		 deep = 0, rc;

	*out = NULL;
	if (outlen != NULL)
		*outlen = 0;
	memset(&rt, 0, sizeof(rt));
	memset(&root, 0, sizeof(root));
	rt.lim = &t->lim;
	rt.err = err;
	rt.out = &sb;
	rt.top = &root;
	if (vars != NULL && !json_is_object(vars)) {
		rc = engine_invalid(err, "the variables are not an object");
		goto out;
	}
	if (vars != NULL && (rt.vars = jinja_jv_from_json(vars, 0,
	    &deep)) == NULL) {
		if (deep) {
			rc = ENGINE_ELIMIT;
			if (err != NULL)
				snprintf(err, ENGINE_ERRMAX, "nesting depth: "
				    "a variable nests more than 1000 levels");
		} else
			rc = ENGINE_ENOMEM;
		goto out;
	}
	if (exec_block(&rt, &t->root) != 0) {
		rc = rt.rc != 0 ? rt.rc : ENGINE_EINVAL;
		goto out;
	}
	if (sb.p == NULL)
		dbuf_add(&sb, "", 0);
	if (outlen != NULL)
		*outlen = sb.len;
	if ((*out = dbuf_take(&sb, NULL)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	rc = 0;
out:
	frame_release(&root);
	jinja_jv_unref(rt.vars);
	dbuf_free(&sb);
	return rc;
}

int
jinja_render(const char *src, size_t len, const json_t *vars,
    const struct jinja_limits *lim, char *err, char **out, size_t *outlen)
{
	struct jinja_tpl	*t = NULL;
	int			 rc;

	*out = NULL;
	if ((rc = jinja_compile(src, len, lim, err, &t)) != 0)
		goto out;
	rc = jinja_render_compiled(t, vars, err, out, outlen);
out:
	jinja_free(t);
	return rc;
}
