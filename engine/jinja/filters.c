/*
 * filters.c — the Jinja2 filters (|upper, |join, |tojson, |map, ...) and
 * is-tests (defined, odd, in, ...) of the engine's subset, with Jinja2
 * 3.x's parameters and results.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "engine/jinja/jinja.h"

/* ====== Filters ====== */

/* soft_str: str(v), keeping a Markup a Markup. */
static struct jv *
soft_str(struct rt *rt, int line, struct jv *v)
{
	return jinja_jv_to_str(rt, line, v);
}

/* A string result with the Markup flag. */
static struct jv *
markup(struct jv *v)
{
	if (v != NULL)
		v->markup = 1;
	return v;
}

/* make_attrgetter: "a.b.0" walked with getitem. */
static struct jv *
attr_path(struct rt *rt, int line, struct jv *item, const struct jv *path)
{
	struct jv	*cur, *key, *next;
	const char	*p, *dot, *end;
	int64_t		 iv;

	if (path->t == JT_INT)
		return jinja_get_item(rt, line, item, (struct jv *)path);
	if (path->t != JT_STR)
		return jinja_fail(rt, line, "TypeError: attribute must be a "
		    "str");
	cur = jinja_jv_ref(item);
	p = path->u.s.p;
	end = p + path->u.s.n;
	for (;;) {
		dot = memchr(p, '.', (size_t)(end - p));
		if (dot == NULL)
			dot = end;
		if (jinja_py_parse_int(p, (size_t)(dot - p), 10, &iv) == 0 &&
		    jinja_is_digit(*p))
			key = jinja_jv_int(iv);
		else
			key = jinja_jv_strn(p, (size_t)(dot - p));
		if (key == NULL) {
			jinja_jv_unref(cur);
			return jinja_oom(rt);
		}
		next = jinja_get_item(rt, line, cur, key);
		jinja_jv_unref(key);
		jinja_jv_unref(cur);
		if ((cur = next) == NULL || dot == end)
			return cur;
		p = dot + 1;
	}
}

/* The items of v, each mapped through attribute (if given) for sorting
 * keys: lowercase strings unless case_sensitive. */
static struct jv *
sort_key(struct rt *rt, int line, struct jv *item, const struct jv *attr,
    int cs)
{
	struct jv	*k, *low;
	struct dbuf	 sb = { 0 };

	k = attr != NULL ? attr_path(rt, line, item, attr) : jinja_jv_ref(item);
	if (k == NULL || cs || k->t != JT_STR)
		return k;
	jinja_str_case(&sb, k->u.s.p, k->u.s.n, 'L');
	jinja_jv_unref(k);
	if (sb.err || (low = jinja_jv_str_sb(&sb)) == NULL) {
		dbuf_free(&sb);
		return jinja_oom(rt);
	}
	return low;
}

/* Stable merge sort of items by keys; -1 when a comparison fails. */
static int
merge_sort(struct rt *rt, int line, struct jv **items, struct jv **keys,
    size_t n, struct jv **ti, struct jv **tk, int rev)
{
	size_t	mid = n / 2, i = 0, j, k = 0;
	int	c;

	if (n < 2)
		return 0;
	if (merge_sort(rt, line, items, keys, mid, ti, tk, rev) != 0 ||
	    merge_sort(rt, line, items + mid, keys + mid, n - mid, ti, tk,
	    rev) != 0)
		return -1;
	j = mid;
	while (i < mid && j < n) {
		if (jinja_jv_cmp(rt, line, keys[j], keys[i], "<", &c) != 0)
			return -1;
		/* reverse=True keeps equal items in order, as Python does. */
		if (rev ? (jinja_jv_cmp(rt, line, keys[i], keys[j], "<",
		    &c) == 0 && c < 0) : c < 0) {
			ti[k] = items[j];
			tk[k++] = keys[j++];
		} else {
			ti[k] = items[i];
			tk[k++] = keys[i++];
		}
		if (rt->rc != 0)
			return -1;
	}
	for (; i < mid; i++, k++) {
		ti[k] = items[i];
		tk[k] = keys[i];
	}
	for (; j < n; j++, k++) {
		ti[k] = items[j];
		tk[k] = keys[j];
	}
	memcpy(items, ti, n * sizeof(*items));
	memcpy(keys, tk, n * sizeof(*keys));
	return 0;
}

/* sorted(v, key=..., reverse=rev) as a new list. */
static struct jv *
sorted(struct rt *rt, int line, struct jv *v, int rev, int cs,
    const struct jv *attr)
{
	struct jv	*items, *r = NULL, **keys = NULL, **ti = NULL,
			**tk = NULL;
	size_t		 i, n;

	if ((items = jinja_jv_iter(rt, line, v)) == NULL)
		return NULL;
	n = items->u.l.n;
	if (jinja_step(rt, line, n * 8) != 0)
		goto out;
	keys = calloc(n + 1, sizeof(*keys));
	ti = calloc(n + 1, sizeof(*ti));
	tk = calloc(n + 1, sizeof(*tk));
	if (keys == NULL || ti == NULL || tk == NULL ||
	    (r = jinja_jv_list(JT_LIST, n)) == NULL) {
		jinja_oom(rt);
		goto out;
	}
	for (i = 0; i < n; i++) {
		jinja_jv_push(r, jinja_jv_ref(items->u.l.v[i]));
		if ((keys[i] = sort_key(rt, line, items->u.l.v[i], attr,
		    cs)) == NULL)
			goto out;
	}
	if (merge_sort(rt, line, r->u.l.v, keys, n, ti, tk, rev) != 0)
		goto out;
out:
	if (keys != NULL)
		for (i = 0; i < n; i++)
			jinja_jv_unref(keys[i]);
	free(keys);
	free(ti);
	free(tk);
	jinja_jv_unref(items);
	if (rt->rc != 0) {
		jinja_jv_unref(r);
		return NULL;
	}
	return r;
}

static struct jv *
gen(struct jv *l)
{
	if (l != NULL)
		l->view = JV_ITER;
	return l;
}

static int
arg_bool(const struct jv *v, int dflt)
{
	return v == NULL ? dflt : jinja_jv_truth(v);
}

static struct jv *
f_abs(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	if (v->t == JT_FLOAT)
		return jinja_jv_float(fabs(v->u.f)) ?: jinja_oom(rt);
	if (v->t == JT_INT || v->t == JT_BOOL) {
		if (jinja_num_i(v) == INT64_MIN)
			return jinja_fail(rt, n->line, "integers beyond 64 "
			    "bits are not supported");
		return jinja_jv_int(jinja_num_i(v) < 0 ? -jinja_num_i(v) :
		    jinja_num_i(v)) ?: jinja_oom(rt);
	}
	if (v->t == JT_UNDEF)
		return jinja_undef_error(rt, n->line, v);
	return jinja_fail(rt, n->line, "TypeError: bad operand type for abs(): "
	    "'%s'", jinja_jv_type(v));
}

static struct jv *
f_strcase(struct rt *rt, const struct node *n, struct jv *v, char mode)
{
	struct dbuf	 sb = { 0 };
	struct jv	*s, *r;

	if ((s = soft_str(rt, n->line, v)) == NULL)
		return NULL;
	jinja_str_case(&sb, s->u.s.p, s->u.s.n, mode);
	r = jinja_checked_str(rt, n->line, &sb);
	jinja_jv_unref(s);
	return r;
}

static struct jv *
f_upper(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	return f_strcase(rt, n, v, 'U');
}

static struct jv *
f_lower(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	return f_strcase(rt, n, v, 'L');
}

static struct jv *
f_title(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	return f_strcase(rt, n, v, 'J');
}

static struct jv *
f_capitalize(struct rt *rt, const struct node *n, struct jv *v,
    struct jv **a)
{
	return f_strcase(rt, n, v, 'C');
}

static struct jv *
f_center(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct jv	*s, *r;
	int64_t		 w = 80;

	if (a[0] != NULL && jinja_want_int(rt, n->line, a[0], "width", &w) != 0)
		return NULL;
	if ((s = soft_str(rt, n->line, v)) == NULL)
		return NULL;
	r = jinja_str_pad(rt, n->line, s, w, NULL, 'c');
	jinja_jv_unref(s);
	return r;
}

static struct jv *
f_length(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	int64_t len = jinja_jv_len(rt, n->line, v);

	return len < 0 ? NULL : jinja_jv_int(len) ?: jinja_oom(rt);
}

static struct jv *
f_default(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	if (v->t == JT_UNDEF || (arg_bool(a[1], 0) && !jinja_jv_truth(v)))
		return a[0] != NULL ? jinja_jv_ref(a[0]) : jinja_jv_str("") ?:
		    jinja_oom(rt);
	return jinja_jv_ref(v);
}

static struct jv *
f_escape(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct dbuf	 sb = { 0 };
	struct jv	*s;

	if (v->t == JT_STR && v->markup)
		return jinja_jv_ref(v);
	if ((s = soft_str(rt, n->line, v)) == NULL)
		return NULL;
	jinja_html_escape(&sb, s->u.s.p, s->u.s.n);
	jinja_jv_unref(s);
	return markup(jinja_checked_str(rt, n->line, &sb));
}

static struct jv *
f_forceescape(struct rt *rt, const struct node *n, struct jv *v,
    struct jv **a)
{
	struct dbuf	 sb = { 0 };
	struct jv	*s;

	if ((s = soft_str(rt, n->line, v)) == NULL)
		return NULL;
	jinja_html_escape(&sb, s->u.s.p, s->u.s.n);
	jinja_jv_unref(s);
	return markup(jinja_checked_str(rt, n->line, &sb));
}

static struct jv *
f_safe(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct jv *s, *r;

	if ((s = soft_str(rt, n->line, v)) == NULL)
		return NULL;
	r = jinja_jv_strn(s->u.s.p, s->u.s.n);
	jinja_jv_unref(s);
	return r != NULL ? markup(r) : jinja_oom(rt);
}

static struct jv *
f_string(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	return soft_str(rt, n->line, v);
}

static struct jv *
f_first(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct jv *items, *r;

	if ((items = jinja_jv_iter(rt, n->line, v)) == NULL)
		return NULL;
	r = items->u.l.n > 0 ? jinja_jv_ref(items->u.l.v[0]) :
	    jinja_jv_undef("No first item, sequence was empty.") ?:
	    jinja_oom(rt);
	jinja_jv_unref(items);
	return r;
}

static struct jv *
f_last(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct jv *items, *r;

	if (v->t == JT_LIST && v->view == JV_ITER)
		return jinja_fail(rt, n->line, "TypeError: 'generator' object "
		    "is not reversible");
	if ((items = jinja_jv_iter(rt, n->line, v)) == NULL)
		return NULL;
	r = items->u.l.n > 0 ? jinja_jv_ref(items->u.l.v[items->u.l.n - 1]) :
	    jinja_jv_undef("No last item, sequence was empty.") ?:
	    jinja_oom(rt);
	jinja_jv_unref(items);
	return r;
}

/* A plain list copy of what iterating v yields. */
static struct jv *
f_list(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct jv	*items, *r;
	size_t		 i;

	if ((items = jinja_jv_iter(rt, n->line, v)) == NULL)
		return NULL;
	if ((r = jinja_jv_list(JT_LIST, items->u.l.n)) == NULL) {
		jinja_jv_unref(items);
		return jinja_oom(rt);
	}
	for (i = 0; i < items->u.l.n; i++)
		jinja_jv_push(r, jinja_jv_ref(items->u.l.v[i]));
	jinja_jv_unref(items);
	return r;
}

static struct jv *
f_join(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct dbuf	 sb = { 0 };
	struct jv	*items, *d = NULL, *it, *s;
	size_t		 i;

	if (a[0] != NULL && (d = soft_str(rt, n->line, a[0])) == NULL)
		return NULL;
	if ((items = jinja_jv_iter(rt, n->line, v)) == NULL) {
		jinja_jv_unref(d);
		return NULL;
	}
	for (i = 0; i < items->u.l.n && rt->rc == 0; i++) {
		it = a[1] != NULL ? attr_path(rt, n->line, items->u.l.v[i],
		    a[1]) : jinja_jv_ref(items->u.l.v[i]);
		if (it == NULL || (s = jinja_jv_to_str(rt, n->line,
		    it)) == NULL) {
			jinja_jv_unref(it);
			break;
		}
		if (i > 0 && d != NULL)
			dbuf_add(&sb, d->u.s.p, d->u.s.n);
		dbuf_add(&sb, s->u.s.p, s->u.s.n);
		jinja_jv_unref(s);
		jinja_jv_unref(it);
		if (sb.len > rt->lim->max_value)
			break;
	}
	jinja_jv_unref(items);
	jinja_jv_unref(d);
	if (rt->rc != 0) {
		dbuf_free(&sb);
		return NULL;
	}
	return jinja_checked_str(rt, n->line, &sb);
}

static struct jv *
f_trim(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct jv	*s, *r;
	size_t		 b, e;

	if (a[0] != NULL && a[0]->t != JT_NONE &&
	    jinja_want_str(rt, n->line, a[0], "chars") != 0)
		return NULL;
	if ((s = soft_str(rt, n->line, v)) == NULL)
		return NULL;
	jinja_str_strip(s->u.s.p, s->u.s.n, a[0] && a[0]->t == JT_STR ? a[0] :
	    NULL, 1, 1, &b, &e);
	r = jinja_jv_strn(s->u.s.p + b, e - b) ?: jinja_oom(rt);
	jinja_jv_unref(s);
	return r;
}

/* Jinja2's urlencode of a string: percent-encoded as urllib's quote()
 * with "/" kept (libcurl escapes; "%2F" is put back). */
static struct jv *
f_urlencode(struct rt *rt, const struct node *n, struct jv *v,
    struct jv **a)
{
	struct dbuf	 b = { 0 };
	struct jv	*s, *r;
	char		*e, *p;

	if ((s = soft_str(rt, n->line, v)) == NULL)
		return NULL;
	if (s->u.s.n > INT_MAX || (e = curl_easy_escape(NULL, s->u.s.p,
	    (int)s->u.s.n)) == NULL) {
		jinja_jv_unref(s);
		return jinja_oom(rt);
	}
	jinja_jv_unref(s);
	for (p = e; *p != '\0'; p++)
		if (strncmp(p, "%2F", 3) == 0) {
			dbuf_addc(&b, '/');
			p += 2;
		} else
			dbuf_addc(&b, *p);
	curl_free(e);
	if (b.err) {
		dbuf_free(&b);
		return jinja_oom(rt);
	}
	r = jinja_jv_strn(b.p ? b.p : "", b.len) ?: jinja_oom(rt);
	dbuf_free(&b);
	return r;
}

static struct jv *
f_replace(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct jv	*s = NULL, *o = NULL, *w = NULL, *r = NULL;
	int64_t		 cnt = -1;

	if (a[0] == NULL || a[1] == NULL)
		return jinja_fail(rt, n->line, "TypeError: replace() needs old "
		    "and new");
	if (a[2] != NULL && a[2]->t != JT_NONE &&
	    jinja_want_int(rt, n->line, a[2], "count", &cnt) != 0)
		return NULL;
	if ((s = soft_str(rt, n->line, v)) != NULL &&
	    (o = soft_str(rt, n->line, a[0])) != NULL &&
	    (w = soft_str(rt, n->line, a[1])) != NULL)
		r = jinja_str_replace(rt, n->line, s, o, w, cnt);
	jinja_jv_unref(s);
	jinja_jv_unref(o);
	jinja_jv_unref(w);
	return r;
}

static struct jv *
f_float(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	double d;

	if (jinja_is_num(v))
		return jinja_jv_float(jinja_num_f(v)) ?: jinja_oom(rt);
	if (v->t == JT_UNDEF)
		return jinja_undef_error(rt, n->line, v);
	if (v->t == JT_STR && jinja_py_parse_float(v->u.s.p, v->u.s.n, &d) == 0)
		return jinja_jv_float(d) ?: jinja_oom(rt);
	return a[0] != NULL ? jinja_jv_ref(a[0]) : jinja_jv_float(0.0) ?:
	    jinja_oom(rt);
}

static struct jv *
f_int(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	int64_t	 base = 10, iv;
	double	 d;
	int	 rc;

	if (a[1] != NULL && jinja_want_int(rt, n->line, a[1], "base",
	    &base) != 0)
		return NULL;
	if (base < 2 || base > 36)
		return jinja_fail(rt, n->line, "ValueError: int() base must be "
		    ">= 2 and <= 36");
	if (v->t == JT_UNDEF)
		return jinja_undef_error(rt, n->line, v);
	if (v->t == JT_INT || v->t == JT_BOOL)
		return jinja_jv_int(jinja_num_i(v)) ?: jinja_oom(rt);
	if (v->t == JT_STR) {
		rc = jinja_py_parse_int(v->u.s.p, v->u.s.n, (int)base, &iv);
		if (rc == 0)
			return jinja_jv_int(iv) ?: jinja_oom(rt);
		if (rc == -2)
			return jinja_fail(rt, n->line, "integers beyond 64 "
			    "bits are not supported");
		if (jinja_py_parse_float(v->u.s.p, v->u.s.n, &d) != 0)
			goto dflt;
	} else if (v->t == JT_FLOAT)
		d = v->u.f;
	else
		goto dflt;
	if (isnan(d))
		goto dflt;
	if (isinf(d))
		return jinja_fail(rt, n->line, "OverflowError: cannot convert "
		    "float infinity to integer");
	if (d >= 9223372036854775808.0 || d < -9223372036854775808.0)
		return jinja_fail(rt, n->line, "integers beyond 64 bits are "
		    "not supported");
	return jinja_jv_int((int64_t)d) ?: jinja_oom(rt);
dflt:
	return a[0] != NULL ? jinja_jv_ref(a[0]) : jinja_jv_int(0) ?:
	    jinja_oom(rt);
}

/* Python's round(x, nd) for a float: correctly rounded, half to even. */
static double
py_round(double x, int64_t nd)
{
	char	buf[400];
	double	p, y;
	int	digits;

	if (!isfinite(x) || nd > 320)
		return x;
	if (nd >= 0) {
		snprintf(buf, sizeof(buf), "%.*f", (int)nd, x);
		return strtod(buf, NULL);
	}
	if (nd < -308)
		return copysign(0.0, x);
	p = pow(10.0, (double)-nd);
	y = fabs(x);
	if (y < p) {
		if (y > p / 2)
			return copysign(p, x);
		return copysign(0.0, x);
	}
	digits = (int)floor(log10(y)) + 1 + (int)nd;
	if (digits < 1)
		digits = 1;
	snprintf(buf, sizeof(buf), "%.*e", digits - 1, x);
	return strtod(buf, NULL);
}

static struct jv *
f_round(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	int64_t		 prec = 0, q, r, m, x;
	const char	*meth = "common";
	double		 p;

	if (a[0] != NULL && jinja_want_int(rt, n->line, a[0], "precision",
	    &prec))
		return NULL;
	if (a[1] != NULL) {
		if (jinja_want_str(rt, n->line, a[1], "method") != 0)
			return NULL;
		meth = a[1]->u.s.p;
	}
	if (strcmp(meth, "common") && strcmp(meth, "ceil") &&
	    strcmp(meth, "floor"))
		return jinja_fail(rt, n->line, "FilterArgumentError: method "
		    "must be common, ceil or floor");
	if (v->t == JT_UNDEF)
		return jinja_undef_error(rt, n->line, v);
	if (!jinja_is_num(v))
		return jinja_fail(rt, n->line, "TypeError: type %s doesn't "
		    "define __round__ method", jinja_jv_type(v));
	if (!strcmp(meth, "common")) {
		if (v->t == JT_FLOAT)
			return jinja_jv_float(py_round(v->u.f, prec)) ?:
			    jinja_oom(rt);
		x = jinja_num_i(v);
		if (prec >= 0)
			return jinja_jv_int(x) ?: jinja_oom(rt);
		if (prec < -18)
			return jinja_jv_int(0) ?: jinja_oom(rt);
		for (m = 1; prec < 0; prec++)
			m *= 10;
		q = x / m;
		r = x % m;
		if (r < 0) {
			r += m;
			q--;
		}
		if (r * 2 > m || (r * 2 == m && (q & 1)))
			q++;
		if (__builtin_mul_overflow(q, m, &x))
			return jinja_fail(rt, n->line, "integers beyond 64 "
			    "bits are not supported");
		return jinja_jv_int(x) ?: jinja_oom(rt);
	}
	if (prec > 308 || prec < -308)
		return jinja_fail(rt, n->line, "round precision out of range");
	p = pow(10.0, (double)prec);
	x = 0;
	{
		double y = jinja_num_f(v) * p;

		y = meth[0] == 'c' ? ceil(y) : floor(y);
		if (!isfinite(y))
			return jinja_fail(rt, n->line, "OverflowError: cannot "
			    "convert float infinity to integer");
		return jinja_jv_float(y / p) ?: jinja_oom(rt);
	}
}

/* htmlsafe_json_dumps: sorted keys, ensure_ascii, < > & ' escaped. */
static int
to_json(struct rt *rt, int line, struct dbuf *sb, struct jv *v,
    int64_t indent, int depth)
{
	struct jv	*keys = NULL;
	size_t		 i, n;
	int64_t		 j;
	int		 rc = 0;

	if (depth > 1000) {
		jinja_fail(rt, line, "tojson: value nested too deeply");
		return -1;
	}
	switch (v->t) {
	case JT_NONE: dbuf_addstr(sb, "null"); return 0;
	case JT_BOOL: dbuf_addstr(sb, v->u.b ? "true" : "false"); return 0;
	case JT_INT: tpl_add_py_int(sb, v->u.i); return 0;
	case JT_FLOAT:
		if (isnan(v->u.f))
			dbuf_addstr(sb, "NaN");
		else if (isinf(v->u.f))
			dbuf_addstr(sb, v->u.f < 0 ? "-Infinity" : "Infinity");
		else
			tpl_add_py_float(sb, v->u.f);
		return 0;
	case JT_STR:
		tpl_add_json_str(sb, v->u.s.p, v->u.s.n, 1);
		return 0;
	case JT_LIST:
	case JT_TUPLE:
	case JT_DICT:
		if (v->t == JT_LIST && v->view != JV_PLAIN)
			break;
		if (v->t == JT_DICT) {
			for (i = 0; i < v->u.d.n; i++)
				if (v->u.d.k[i]->t != JT_STR) {
					jinja_fail(rt, line, "tojson: keys "
					    "other than strings are not "
					    "supported");
					return -1;
				}
			if ((keys = sorted(rt, line, v, 0, 1, NULL)) == NULL)
				return -1;
			n = keys->u.l.n;
		} else
			n = v->u.l.n;
		dbuf_addstr(sb, v->t == JT_DICT ? "{" : "[");
		for (i = 0; i < n && rc == 0; i++) {
			if (i > 0)
				dbuf_addstr(sb, indent < 0 ? ", " : ",");
			if (indent >= 0) {
				dbuf_add(sb, "\n", 1);
				for (j = 0; j < indent * (depth + 1); j++)
					dbuf_add(sb, " ", 1);
			}
			if (v->t == JT_DICT) {
				tpl_add_json_str(sb, keys->u.l.v[i]->u.s.p,
				    keys->u.l.v[i]->u.s.n, 1);
				dbuf_add(sb, ": ", 2);
				rc = to_json(rt, line, sb, jinja_dict_get(v,
				    keys->u.l.v[i]), indent, depth + 1);
			} else
				rc = to_json(rt, line, sb, v->u.l.v[i], indent,
				    depth + 1);
			if (sb->len > rt->lim->max_value) {
				jinja_limit(rt, line, "value size",
				    rt->lim->max_value);
				rc = -1;
			}
		}
		if (indent >= 0 && n > 0) {
			dbuf_add(sb, "\n", 1);
			for (j = 0; j < indent * depth; j++)
				dbuf_add(sb, " ", 1);
		}
		dbuf_addstr(sb, v->t == JT_DICT ? "}" : "]");
		jinja_jv_unref(keys);
		return rc;
	default:
		break;
	}
	jinja_fail(rt, line, "TypeError: Object of type %s is not JSON "
	    "serializable", v->t == JT_UNDEF ? "Undefined" : jinja_jv_type(v));
	return -1;
}

static struct jv *
f_tojson(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct dbuf	 sb = { 0 }, out = { 0 };
	int64_t		 indent = -1;
	size_t		 i;

	if (a[0] != NULL && a[0]->t != JT_NONE &&
	    jinja_want_int(rt, n->line, a[0], "indent", &indent) != 0)
		return NULL;
	if (indent > 64)
		return jinja_fail(rt, n->line, "tojson: indent above 64 is not "
		    "supported");
	if (to_json(rt, n->line, &sb, v, indent, 0) != 0) {
		dbuf_free(&sb);
		return NULL;
	}
	for (i = 0; i < sb.len; i++)
		switch (sb.p[i]) {
		case '<': dbuf_addstr(&out, "\\u003c"); break;
		case '>': dbuf_addstr(&out, "\\u003e"); break;
		case '&': dbuf_addstr(&out, "\\u0026"); break;
		case '\'': dbuf_addstr(&out, "\\u0027"); break;
		default: dbuf_add(&out, sb.p + i, 1);
		}
	dbuf_free(&sb);
	if (out.p == NULL)
		dbuf_add(&out, "", 0);
	return markup(jinja_checked_str(rt, n->line, &out));
}

static struct jv *
f_reverse(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct dbuf	 sb = { 0 };
	struct jv	*items, *r;
	size_t		 i;
	int		 was_gen = v->t == JT_LIST && v->view == JV_ITER;

	if ((items = jinja_jv_iter(rt, n->line, v)) == NULL)
		return NULL;
	if (v->t == JT_STR) {
		for (i = items->u.l.n; i-- > 0;)
			dbuf_add(&sb, items->u.l.v[i]->u.s.p,
			    items->u.l.v[i]->u.s.n);
		jinja_jv_unref(items);
		return jinja_checked_str(rt, n->line, &sb);
	}
	if ((r = jinja_jv_list(JT_LIST, items->u.l.n)) == NULL) {
		jinja_jv_unref(items);
		return jinja_oom(rt);
	}
	for (i = items->u.l.n; i-- > 0;)
		jinja_jv_push(r, jinja_jv_ref(items->u.l.v[i]));
	jinja_jv_unref(items);
	/* reversed() gives an iterator; a generator becomes a list. */
	return was_gen ? r : gen(r);
}

static struct jv *
f_sort(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	return sorted(rt, n->line, v, arg_bool(a[0], 0), arg_bool(a[1], 0),
	    a[2]);
}

static struct jv *
f_unique(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct jv	*items, *r, **seen = NULL, *k;
	size_t		 i, j, ns = 0;

	if ((items = jinja_jv_iter(rt, n->line, v)) == NULL)
		return NULL;
	if (jinja_step(rt, n->line, items->u.l.n * items->u.l.n / 16 + 1) !=
	    0 || (r = jinja_jv_list(JT_LIST, items->u.l.n)) == NULL ||
	    (seen = calloc(items->u.l.n + 1, sizeof(*seen))) == NULL) {
		if (rt->rc == 0)
			jinja_oom(rt);
		jinja_jv_unref(items);
		return NULL;
	}
	for (i = 0; i < items->u.l.n; i++) {
		if ((k = sort_key(rt, n->line, items->u.l.v[i], a[1],
		    arg_bool(a[0], 0))) == NULL)
			break;
		for (j = 0; j < ns && !jinja_jv_eq(seen[j], k); j++)
			;
		if (j < ns) {
			jinja_jv_unref(k);
			continue;
		}
		seen[ns++] = k;
		jinja_jv_push(r, jinja_jv_ref(items->u.l.v[i]));
	}
	for (j = 0; j < ns; j++)
		jinja_jv_unref(seen[j]);
	free(seen);
	jinja_jv_unref(items);
	if (rt->rc != 0) {
		jinja_jv_unref(r);
		return NULL;
	}
	return gen(r);
}

static struct jv *
minmax(struct rt *rt, const struct node *n, struct jv *v, struct jv **a,
    int want_max)
{
	struct jv	*items, *best = NULL, *bk = NULL, *k, *r;
	size_t		 i;
	int		 c;

	if ((items = jinja_jv_iter(rt, n->line, v)) == NULL)
		return NULL;
	for (i = 0; i < items->u.l.n; i++) {
		if ((k = sort_key(rt, n->line, items->u.l.v[i], a[1],
		    arg_bool(a[0], 0))) == NULL)
			break;
		if (bk != NULL && jinja_jv_cmp(rt, n->line, k, bk, want_max ?
		    ">" : "<", &c) != 0) {
			jinja_jv_unref(k);
			break;
		}
		if (bk == NULL || (want_max ? c > 0 && c != 2 : c < 0)) {
			jinja_jv_unref(bk);
			bk = k;
			best = items->u.l.v[i];
		} else
			jinja_jv_unref(k);
	}
	jinja_jv_unref(bk);
	r = rt->rc != 0 ? NULL : best != NULL ? jinja_jv_ref(best) :
	    jinja_jv_undef("No aggregated item, sequence was empty.") ?:
	    jinja_oom(rt);
	jinja_jv_unref(items);
	return r;
}

static struct jv *
f_min(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	return minmax(rt, n, v, a, 0);
}

static struct jv *
f_max(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	return minmax(rt, n, v, a, 1);
}

static struct jv *
f_sum(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct jv	*items, *acc, *it, *next;
	size_t		 i;

	if ((items = jinja_jv_iter(rt, n->line, v)) == NULL)
		return NULL;
	acc = a[1] != NULL ? jinja_jv_ref(a[1]) : jinja_jv_int(0);
	for (i = 0; acc != NULL && i < items->u.l.n; i++) {
		it = a[0] != NULL ? attr_path(rt, n->line, items->u.l.v[i],
		    a[0]) : jinja_jv_ref(items->u.l.v[i]);
		next = it != NULL ? jinja_arith(rt, n->line, OP_ADD, acc, it) :
		    NULL;
		jinja_jv_unref(it);
		jinja_jv_unref(acc);
		acc = next;
	}
	jinja_jv_unref(items);
	return acc != NULL ? acc : rt->rc ? NULL : jinja_oom(rt);
}

static struct jv *
f_wordcount(struct rt *rt, const struct node *n, struct jv *v,
    struct jv **a)
{
	struct jv	*s;
	size_t		 i, k, cnt = 0;
	int		 in = 0, w;

	if ((s = soft_str(rt, n->line, v)) == NULL)
		return NULL;
	for (i = 0; i < s->u.s.n; i += k) {
		w = jinja_u_word(tpl_utf8_next(s->u.s.p + i, s->u.s.n - i, &k));
		cnt += w && !in;
		in = w;
	}
	jinja_jv_unref(s);
	return jinja_jv_int((int64_t)cnt) ?: jinja_oom(rt);
}

static struct jv *
f_truncate(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct dbuf	 sb = { 0 };
	struct jv	*s, *end = NULL, *r = NULL;
	int64_t		 len = 255, leeway = 5, el, cut;
	size_t		 off, i;

	if ((a[0] != NULL && jinja_want_int(rt, n->line, a[0], "length",
	    &len)) || (a[3] != NULL && a[3]->t != JT_NONE && jinja_want_int(rt,
	    n->line, a[3], "leeway", &leeway)))
		return NULL;
	if ((s = soft_str(rt, n->line, v)) == NULL)
		return NULL;
	if (a[2] != NULL && (end = soft_str(rt, n->line, a[2])) == NULL)
		goto out;
	el = end != NULL ? (int64_t)jinja_str_len(end) : 3;
	if (len < el) {
		jinja_fail(rt, n->line, "AssertionError: expected length >= "
		    "%lld, got %lld", (long long)el, (long long)len);
		goto out;
	}
	if (leeway < 0) {
		jinja_fail(rt, n->line, "AssertionError: expected leeway >= 0, "
		    "got %lld", (long long)leeway);
		goto out;
	}
	if ((int64_t)jinja_str_len(s) <= len + leeway) {
		r = jinja_jv_ref(s);
		goto out;
	}
	cut = len - el;
	off = jinja_str_off(s->u.s.p, s->u.s.n, (size_t)cut);
	if (!arg_bool(a[1], 0)) {
		/* rsplit(" ", 1)[0] of the cut text */
		for (i = off; i > 0 && s->u.s.p[i - 1] != ' '; i--)
			;
		if (i > 0)
			off = i - 1;
	}
	dbuf_add(&sb, s->u.s.p, off);
	if (end != NULL)
		dbuf_add(&sb, end->u.s.p, end->u.s.n);
	else
		dbuf_add(&sb, "...", 3);
	r = jinja_checked_str(rt, n->line, &sb);
out:
	jinja_jv_unref(s);
	jinja_jv_unref(end);
	return r;
}

/* html.unescape for the entities markupsafe's striptags meets most. */
static void
html_unescape(struct dbuf *sb, const char *s, size_t n)
{
	static const struct {
		const char	*name;
		uint32_t	 cp;
	} ents[] = { { "amp", '&' }, { "lt", '<' }, { "gt", '>' },
	    { "quot", '"' }, { "apos", '\'' }, { "nbsp", 0xA0 },
	    { "copy", 0xA9 }, { "reg", 0xAE }, { "hellip", 0x2026 },
	    { "mdash", 0x2014 }, { "ndash", 0x2013 }, { "laquo", 0xAB },
	    { "raquo", 0xBB }, { "middot", 0xB7 }, { "times", 0xD7 } };
	size_t		i, j, k;
	uint32_t	c;
	int		base;

	for (i = 0; i < n; i++) {
		if (s[i] != '&') {
			dbuf_add(sb, s + i, 1);
			continue;
		}
		if (i + 2 < n && s[i + 1] == '#') {
			base = (s[i + 2] == 'x' || s[i + 2] == 'X') ? 16 : 10;
			j = i + 2 + (base == 16);
			for (c = 0, k = j; k < n && k < j + 7 && (base == 16 ?
			    jinja_hexval(s[k]) >= 0 : jinja_is_digit(s[k]));
			    k++)
				c = c * (uint32_t)base +
				    (uint32_t)jinja_hexval(s[k]);
			if (k > j && c > 0 && c <= 0x10FFFF &&
			    !(c >= 0xD800 && c <= 0xDFFF)) {
				tpl_add_utf8(sb, c);
				i = k < n && s[k] == ';' ? k : k - 1;
				continue;
			}
		}
		for (k = 0; k < sizeof(ents) / sizeof(ents[0]); k++) {
			j = strlen(ents[k].name);
			if (i + 1 + j < n && !memcmp(s + i + 1, ents[k].name,
			    j) && s[i + 1 + j] == ';')
				break;
		}
		if (k < sizeof(ents) / sizeof(ents[0])) {
			tpl_add_utf8(sb, ents[k].cp);
			i += strlen(ents[k].name) + 1;
		} else
			dbuf_add(sb, s + i, 1);
	}
}

static struct jv *
f_striptags(struct rt *rt, const struct node *n, struct jv *v,
    struct jv **a)
{
	struct dbuf	 sb = { 0 }, ws = { 0 }, out = { 0 };
	struct jv	*s;
	const char	*p, *e, *q;
	size_t		 len, i, k, b;
	int		 pass;

	if ((s = soft_str(rt, n->line, v)) == NULL)
		return NULL;
	dbuf_add(&sb, s->u.s.p, s->u.s.n);
	jinja_jv_unref(s);
	/* Comments first, then tags, as markupsafe 2.1+ does. */
	for (pass = 0; pass < 2 && sb.p != NULL; pass++) {
		for (;;) {
			len = sb.len;
			p = pass == 0 ? memmem(sb.p, len, "<!--", 4) :
			    memchr(sb.p, '<', len);
			if (p == NULL)
				break;
			q = pass == 0 ? memmem(p, len - (size_t)(p - sb.p),
			    "-->", 3) : memchr(p, '>', len -
			    (size_t)(p - sb.p));
			if (q == NULL)
				break;
			e = q + (pass == 0 ? 3 : 1);
			memmove((char *)p, e, len - (size_t)(e - sb.p) + 1);
			sb.len -= (size_t)(e - p);
		}
	}
	/* " ".join(value.split()) */
	for (i = 0; sb.p != NULL && i < sb.len;) {
		i += jinja_ws_len(sb.p + i, sb.len - i);
		if (i >= sb.len)
			break;
		for (b = i; i < sb.len; i += k)
			if (jinja_u_space(tpl_utf8_next(sb.p + i, sb.len - i,
			    &k)))
				break;
		if (ws.len > 0)
			dbuf_add(&ws, " ", 1);
		dbuf_add(&ws, sb.p + b, i - b);
	}
	dbuf_free(&sb);
	if (ws.p != NULL)
		html_unescape(&out, ws.p, ws.len);
	dbuf_free(&ws);
	if (out.p == NULL)
		dbuf_add(&out, "", 0);
	return jinja_checked_str(rt, n->line, &out);
}

static struct jv *
f_indent(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct dbuf	 sb = { 0 }, ind = { 0 };
	struct jv	*s, *lines = NULL;
	int64_t		 w = 4, j;
	size_t		 i, k, b, cnt = 0;
	uint32_t	 c;
	int		 blank = arg_bool(a[2], 0), first = arg_bool(a[1], 0);

	if (a[0] != NULL && a[0]->t == JT_STR)
		dbuf_add(&ind, a[0]->u.s.p, a[0]->u.s.n);
	else {
		if (a[0] != NULL && jinja_want_int(rt, n->line, a[0], "width",
		    &w))
			return NULL;
		if (w > 1000)
			return jinja_fail(rt, n->line, "indent: width above "
			    "1000 is not supported");
		for (j = 0; j < w; j++)
			dbuf_add(&ind, " ", 1);
	}
	if ((s = soft_str(rt, n->line, v)) == NULL) {
		dbuf_free(&ind);
		return NULL;
	}
	(void)lines;
	/* s + "\n", split into lines (str.splitlines), joined back. */
	for (i = 0, b = 0; i <= s->u.s.n; i += k) {
		if (i < s->u.s.n)
			c = tpl_utf8_next(s->u.s.p + i, s->u.s.n - i, &k);
		else {
			c = '\n';
			k = 1;
		}
		if (!jinja_u_linebreak(c))
			continue;
		if (cnt > 0) {
			dbuf_add(&sb, "\n", 1);
			if (blank || i > b)
				dbuf_add(&sb, ind.p ? ind.p : "", ind.len);
		} else if (first)
			dbuf_add(&sb, ind.p ? ind.p : "", ind.len);
		dbuf_add(&sb, s->u.s.p + b, i - b);
		cnt++;
		if (c == '\r' && i + 1 < s->u.s.n && s->u.s.p[i + 1] == '\n')
			k = 2;
		b = i + k;
		if (sb.len > rt->lim->max_value)
			break;
	}
	dbuf_free(&ind);
	jinja_jv_unref(s);
	if (sb.p == NULL)
		dbuf_add(&sb, "", 0);
	return jinja_checked_str(rt, n->line, &sb);
}

static struct jv *
f_items(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct cargs	 ca = { 0 };
	struct jv	*m, *r;

	if (v->t == JT_UNDEF)
		return gen(jinja_jv_list(JT_LIST, 0)) ?: jinja_oom(rt);
	if (v->t != JT_DICT)
		return jinja_fail(rt, n->line, "TypeError: Can only get item "
		    "pairs from a mapping.");
	if ((m = jinja_method(rt, v, "items")) == NULL)
		return NULL;
	r = jinja_call_method(rt, n->line, m, &ca);
	jinja_jv_unref(m);
	if (r != NULL)
		r->view = JV_ITER;
	return r;
}

static struct jv *
f_dictsort(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct cargs	 ca = { 0 };
	struct jv	*m, *items, *r = NULL, *key;
	const char	*by = "key";

	if (v->t != JT_DICT)
		return jinja_fail(rt, n->line, "TypeError: dictsort needs a "
		    "dict");
	if (a[1] != NULL) {
		if (jinja_want_str(rt, n->line, a[1], "by") != 0)
			return NULL;
		by = a[1]->u.s.p;
	}
	if (strcmp(by, "key") && strcmp(by, "value"))
		return jinja_fail(rt, n->line, "FilterArgumentError: You can "
		    "only sort by either \"key\" or \"value\"");
	if ((m = jinja_method(rt, v, "items")) == NULL)
		return NULL;
	items = jinja_call_method(rt, n->line, m, &ca);
	jinja_jv_unref(m);
	if (items == NULL)
		return NULL;
	items->view = JV_PLAIN;
	if ((key = jinja_jv_int(by[0] == 'k' ? 0 : 1)) != NULL)
		r = sorted(rt, n->line, items, arg_bool(a[2], 0),
		    arg_bool(a[0], 0), key);
	else
		jinja_oom(rt);
	jinja_jv_unref(key);
	jinja_jv_unref(items);
	return r;
}

static const struct jfunc *find_test_fn(const char *name);

/* map / select / reject / selectattr / rejectattr: their arguments come
 * unbound in ca. */
struct jv *
jinja_seq_filter(struct rt *rt, const struct node *n, struct jv *v,
    struct cargs *ca)
{
	const char		*name = n->fn->name;
	struct jv		*items, *r = NULL, *x, *attr = NULL;
	struct jv		*dflt = NULL;
	const struct jfunc	*fn = NULL;
	struct cargs		 sub = { 0 };
	size_t			 i, k, skip = 0;
	int			 want, t, is_attr, is_map = name[0] == 'm';

	is_attr = strstr(name, "attr") != NULL;
	want = name[0] == 's';
	for (k = 0; k < ca->nkw; k++) {
		if (is_map && !strcmp(ca->kwn[k], "attribute"))
			attr = ca->kwv[k];
		else if (is_map && !strcmp(ca->kwn[k], "default"))
			dflt = ca->kwv[k];
		else
			return jinja_fail(rt, n->line, "TypeError: %s() got an "
			    "unexpected keyword argument '%s'", name,
			    ca->kwn[k]);
	}
	if (is_map && attr == NULL && ca->npos == 0)
		return jinja_fail(rt, n->line, "map requires a filter "
		    "argument");
	if (is_attr) {
		if (ca->npos == 0)
			return jinja_fail(rt, n->line, "%s requires an "
			    "attribute name", name);
		attr = ca->pos[0];
		skip = 1;
	}
	if (!is_map || attr == NULL) {
		if (ca->npos > skip) {
			if (jinja_want_str(rt, n->line, ca->pos[skip],
			    "name") != 0)
				return NULL;
			fn = is_map ? jinja_find_filter(ca->pos[skip]->u.s.p) :
			    find_test_fn(ca->pos[skip]->u.s.p);
			if (fn == NULL || (fn->params[0] != NULL &&
			    !strcmp(fn->params[0], "*")))
				return jinja_fail(rt, n->line, "no %s named "
				    "'%s'", is_map ? "filter" : "test",
				    ca->pos[skip]->u.s.p);
			skip++;
		}
		for (i = skip; i < ca->npos; i++)
			sub.pos[sub.npos++] = ca->pos[i];
	}
	if ((items = jinja_jv_iter(rt, n->line, v)) == NULL)
		return NULL;
	if ((r = jinja_jv_list(JT_LIST, items->u.l.n)) == NULL) {
		jinja_jv_unref(items);
		return jinja_oom(rt);
	}
	for (i = 0; i < items->u.l.n && rt->rc == 0; i++) {
		x = attr != NULL ? attr_path(rt, n->line, items->u.l.v[i],
		    attr) : jinja_jv_ref(items->u.l.v[i]);
		if (x == NULL)
			break;
		if (is_map) {
			struct jv	*y = NULL, *ba[5];
			struct node	 fake;	/* n, calling fn */

			if (attr != NULL) {
				if (x->t == JT_UNDEF && dflt != NULL) {
					jinja_jv_unref(x);
					x = jinja_jv_ref(dflt);
				}
				jinja_jv_push(r, x);
				continue;
			}
			/* fn is set: a map without attribute names a filter */
			if (fn != NULL && jinja_bind(rt, n->line, fn->name,
			    fn->params, &sub, ba) == 0) {
				fake = *n;
				fake.fn = fn;
				y = fn->fn(rt, &fake, x, ba);
			}
			jinja_jv_unref(x);
			if (y == NULL)
				break;
			jinja_jv_push(r, y);
			continue;
		}
		if (fn == NULL)
			t = jinja_jv_truth(x);
		else
			t = jinja_run_test(rt, n, fn, x, &sub);
		jinja_jv_unref(x);
		if (t < 0)
			break;
		if (t == want)
			jinja_jv_push(r, jinja_jv_ref(items->u.l.v[i]));
	}
	jinja_jv_unref(items);
	if (rt->rc != 0) {
		jinja_jv_unref(r);
		return NULL;
	}
	return gen(r);
}

static const struct jfunc filters[] = {
	{ "abs", { NULL }, f_abs },
	{ "capitalize", { NULL }, f_capitalize },
	{ "center", { "width", NULL }, f_center },
	{ "count", { NULL }, f_length },
	{ "d", { "default_value", "boolean", NULL }, f_default },
	{ "default", { "default_value", "boolean", NULL }, f_default },
	{ "dictsort", { "case_sensitive", "by", "reverse", NULL },
	    f_dictsort },
	{ "e", { NULL }, f_escape },
	{ "escape", { NULL }, f_escape },
	{ "first", { NULL }, f_first },
	{ "float", { "default", NULL }, f_float },
	{ "forceescape", { NULL }, f_forceescape },
	{ "indent", { "width", "first", "blank", NULL }, f_indent },
	{ "int", { "default", "base", NULL }, f_int },
	{ "items", { NULL }, f_items },
	{ "join", { "d", "attribute", NULL }, f_join },
	{ "last", { NULL }, f_last },
	{ "length", { NULL }, f_length },
	{ "list", { NULL }, f_list },
	{ "lower", { NULL }, f_lower },
	{ "map", { "*", NULL }, NULL },
	{ "max", { "case_sensitive", "attribute", NULL }, f_max },
	{ "min", { "case_sensitive", "attribute", NULL }, f_min },
	{ "reject", { "*", NULL }, NULL },
	{ "rejectattr", { "*", NULL }, NULL },
	{ "replace", { "old", "new", "count", NULL }, f_replace },
	{ "reverse", { NULL }, f_reverse },
	{ "round", { "precision", "method", NULL }, f_round },
	{ "safe", { NULL }, f_safe },
	{ "select", { "*", NULL }, NULL },
	{ "selectattr", { "*", NULL }, NULL },
	{ "sort", { "reverse", "case_sensitive", "attribute", NULL }, f_sort },
	{ "string", { NULL }, f_string },
	{ "striptags", { NULL }, f_striptags },
	{ "sum", { "attribute", "start", NULL }, f_sum },
	{ "title", { NULL }, f_title },
	{ "tojson", { "indent", NULL }, f_tojson },
	{ "trim", { "chars", NULL }, f_trim },
	{ "truncate", { "length", "killwords", "end", "leeway", NULL },
	    f_truncate },
	{ "unique", { "case_sensitive", "attribute", NULL }, f_unique },
	{ "upper", { NULL }, f_upper },
	{ "urlencode", { NULL }, f_urlencode },
	{ "wordcount", { NULL }, f_wordcount },
	{ NULL, { NULL }, NULL }
};

const struct jfunc *
jinja_find_filter(const char *name)
{
	size_t i;

	for (i = 0; filters[i].name != NULL; i++)
		if (!strcmp(filters[i].name, name))
			return &filters[i];
	return NULL;
}

/* ====== Tests ====== */

enum {
	TS_DEFINED, TS_UNDEFINED, TS_NONE, TS_BOOLEAN, TS_TRUE, TS_FALSE,
	TS_INTEGER, TS_FLOAT, TS_NUMBER, TS_STRING, TS_MAPPING, TS_SEQUENCE,
	TS_ITERABLE, TS_CALLABLE, TS_ODD, TS_EVEN, TS_DIVISIBLEBY, TS_EQ,
	TS_NE, TS_LT, TS_LE, TS_GT, TS_GE, TS_IN, TS_LOWER, TS_UPPER,
	TS_SAMEAS, TS_ESCAPED
};

/* A test: its descriptor (params: the argument it takes) and code. */
struct jtest {
	struct jfunc	f;
	int		code;
};

static const struct jtest tests[] = {
	{ { "defined", { NULL }, NULL }, TS_DEFINED },
	{ { "undefined", { NULL }, NULL }, TS_UNDEFINED },
	{ { "none", { NULL }, NULL }, TS_NONE },
	{ { "boolean", { NULL }, NULL }, TS_BOOLEAN },
	{ { "true", { NULL }, NULL }, TS_TRUE },
	{ { "false", { NULL }, NULL }, TS_FALSE },
	{ { "integer", { NULL }, NULL }, TS_INTEGER },
	{ { "float", { NULL }, NULL }, TS_FLOAT },
	{ { "number", { NULL }, NULL }, TS_NUMBER },
	{ { "string", { NULL }, NULL }, TS_STRING },
	{ { "mapping", { NULL }, NULL }, TS_MAPPING },
	{ { "sequence", { NULL }, NULL }, TS_SEQUENCE },
	{ { "iterable", { NULL }, NULL }, TS_ITERABLE },
	{ { "callable", { NULL }, NULL }, TS_CALLABLE },
	{ { "odd", { NULL }, NULL }, TS_ODD },
	{ { "even", { NULL }, NULL }, TS_EVEN },
	{ { "divisibleby", { "other", NULL }, NULL }, TS_DIVISIBLEBY },
	{ { "eq", { "other", NULL }, NULL }, TS_EQ },
	{ { "equalto", { "other", NULL }, NULL }, TS_EQ },
	{ { "==", { "other", NULL }, NULL }, TS_EQ },
	{ { "ne", { "other", NULL }, NULL }, TS_NE },
	{ { "!=", { "other", NULL }, NULL }, TS_NE },
	{ { "lt", { "other", NULL }, NULL }, TS_LT },
	{ { "lessthan", { "other", NULL }, NULL }, TS_LT },
	{ { "<", { "other", NULL }, NULL }, TS_LT },
	{ { "le", { "other", NULL }, NULL }, TS_LE },
	{ { "<=", { "other", NULL }, NULL }, TS_LE },
	{ { "gt", { "other", NULL }, NULL }, TS_GT },
	{ { "greaterthan", { "other", NULL }, NULL }, TS_GT },
	{ { ">", { "other", NULL }, NULL }, TS_GT },
	{ { "ge", { "other", NULL }, NULL }, TS_GE },
	{ { ">=", { "other", NULL }, NULL }, TS_GE },
	{ { "in", { "other", NULL }, NULL }, TS_IN },
	{ { "lower", { NULL }, NULL }, TS_LOWER },
	{ { "upper", { NULL }, NULL }, TS_UPPER },
	{ { "sameas", { "other", NULL }, NULL }, TS_SAMEAS },
	{ { "escaped", { NULL }, NULL }, TS_ESCAPED },
};

#define NTESTS (sizeof(tests) / sizeof(tests[0]))

static const struct jfunc *
find_test_fn(const char *name)
{
	size_t i;

	for (i = 0; i < NTESTS; i++)
		if (!strcmp(tests[i].f.name, name))
			return &tests[i].f;
	return NULL;
}

const struct jfunc *
jinja_find_test(const char *name)
{
	return find_test_fn(name);
}

/* Applies test name (with extra args) to x: 1, 0 or -1 on error. */
int
jinja_run_test(struct rt *rt, const struct node *n, const struct jfunc *t,
    struct jv *x, struct cargs *ca)
{
	struct jv	*a[5], *o, *r;
	int		 code = 0, c;
	char		 what[64];

	code = ((const struct jtest *)(const void *)t)->code;
	snprintf(what, sizeof(what), "test '%s'", t->name);
	if (jinja_bind(rt, n->line, what, t->params, ca, a) != 0)
		return -1;
	o = a[0];
	if (t->params[0] != NULL && o == NULL) {
		jinja_fail(rt, n->line, "TypeError: %s needs an argument",
		    what);
		return -1;
	}
	switch (code) {
	case TS_DEFINED: return x->t != JT_UNDEF;
	case TS_UNDEFINED: return x->t == JT_UNDEF;
	case TS_NONE: return x->t == JT_NONE;
	case TS_BOOLEAN: return x->t == JT_BOOL;
	case TS_TRUE: return x == &jinja_jv_true_s;
	case TS_FALSE: return x == &jinja_jv_false_s;
	case TS_INTEGER: return x->t == JT_INT;
	case TS_FLOAT: return x->t == JT_FLOAT;
	case TS_NUMBER: return jinja_is_num(x);
	case TS_STRING: return x->t == JT_STR;
	case TS_MAPPING: return x->t == JT_DICT;
	case TS_SEQUENCE:
		return x->t == JT_STR || x->t == JT_DICT || x->t == JT_UNDEF ||
		    (jinja_is_seq(x) && x->view == JV_PLAIN);
	case TS_ITERABLE:
		return x->t == JT_STR || x->t == JT_DICT || x->t == JT_UNDEF ||
		    jinja_is_seq(x) || x->t == JT_NS;
	case TS_CALLABLE: return x->t == JT_METHOD || x->t == JT_FUNC;
	case TS_ESCAPED: return x->t == JT_STR && x->markup;
	case TS_SAMEAS:
		return x == o || (x->t == JT_NONE && o->t == JT_NONE);
	case TS_ODD:
	case TS_EVEN:
	case TS_DIVISIBLEBY:
		if ((o = code == TS_DIVISIBLEBY ? jinja_jv_ref(o) :
		    jinja_jv_int(2)) == NULL) {
			jinja_oom(rt);
			return -1;
		}
		r = jinja_arith(rt, n->line, OP_MOD, x, o);
		jinja_jv_unref(o);
		if (r == NULL)
			return -1;
		c = jinja_num_f(r) == (code == TS_ODD ? 1.0 : 0.0);
		jinja_jv_unref(r);
		return c;
	case TS_EQ: return jinja_compare(rt, n->line, CMP_EQ, x, o);
	case TS_NE: return jinja_compare(rt, n->line, CMP_NE, x, o);
	case TS_LT: return jinja_compare(rt, n->line, CMP_LT, x, o);
	case TS_LE: return jinja_compare(rt, n->line, CMP_LE, x, o);
	case TS_GT: return jinja_compare(rt, n->line, CMP_GT, x, o);
	case TS_GE: return jinja_compare(rt, n->line, CMP_GE, x, o);
	case TS_IN: return jinja_compare(rt, n->line, CMP_IN, x, o);
	default:		/* lower, upper */
		if ((r = soft_str(rt, n->line, x)) == NULL)
			return -1;
		o = jinja_str_is(r, code == TS_LOWER ? "islower" : "isupper");
		jinja_jv_unref(r);
		return o == &jinja_jv_true_s;
	}
}
