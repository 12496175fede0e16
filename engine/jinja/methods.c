/*
 * methods.c — Python's str methods and the calls of the Jinja2 engine:
 * Unicode case and class tables, str/list/dict methods called on values,
 * argument binding (for calls, filters and tests) and the globals
 * range(), dict() and namespace().
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/jinja/jinja.h"

/* ====== Unicode helpers ====== */

/* Python's str.isspace(). */
int
jinja_u_space(uint32_t c)
{
	return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) ||
	    c == 0x85 || c == 0xA0 || c == 0x1680 ||
	    (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
	    c == 0x202F || c == 0x205F || c == 0x3000;
}

static uint32_t
u_upper(uint32_t c)
{
	if (c >= 'a' && c <= 'z')
		return c - 32;
	if (c < 0x80)
		return c;
	if ((c >= 0xE0 && c <= 0xFE && c != 0xF7))
		return c - 32;
	if (c == 0xFF)
		return 0x178;
	if (c == 0xB5)
		return 0x39C;
	if (c >= 0x100 && c <= 0x17F && c != 0x130 && c != 0x131 &&
	    c != 0x138 && c != 0x149 && c != 0x17F) {
		if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E))
			return (c & 1) ? c : c - 1;
		return (c & 1) ? c - 1 : c;
	}
	if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2)
		return c - 32;
	if (c == 0x3C2)
		return 0x3A3;
	if (c >= 0x430 && c <= 0x44F)
		return c - 32;
	if (c >= 0x450 && c <= 0x45F)
		return c - 80;
	return c;
}

static uint32_t
u_lower(uint32_t c)
{
	if (c >= 'A' && c <= 'Z')
		return c + 32;
	if (c < 0x80)
		return c;
	if (c >= 0xC0 && c <= 0xDE && c != 0xD7)
		return c + 32;
	if (c == 0x178)
		return 0xFF;
	if (c >= 0x100 && c <= 0x17F && c != 0x130 && c != 0x131 &&
	    c != 0x138 && c != 0x149 && c != 0x17F) {
		if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E))
			return (c & 1) ? c + 1 : c;
		return (c & 1) ? c : c + 1;
	}
	if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2)
		return c + 32;
	if (c >= 0x410 && c <= 0x42F)
		return c + 32;
	if (c >= 0x400 && c <= 0x40F)
		return c + 80;
	return c;
}

/* A letter with case (so title() and capitalize() treat it as such). */
static int
u_cased(uint32_t c)
{
	return u_upper(c) != c || u_lower(c) != c || c == 0xDF;
}

static void
sb_upper(struct dbuf *sb, uint32_t c)
{
	if (c == 0xDF)
		dbuf_add(sb, "SS", 2);
	else
		tpl_add_utf8(sb, u_upper(c));
}

/* Python's \w for one code point (letters, digits, _ and most non-ASCII
 * that is not space or CJK / general punctuation). */
int
jinja_u_word(uint32_t c)
{
	if (c < 0x80)
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_';
	if (jinja_u_space(c) || (c >= 0x80 && c <= 0xBF && c != 0xAA &&
	    c != 0xB2 && c != 0xB3 && c != 0xB5 && c != 0xB9 && c != 0xBA &&
	    c != 0xBC && c != 0xBD && c != 0xBE) || c == 0xD7 || c == 0xF7)
		return 0;
	if ((c >= 0x2000 && c <= 0x206F) || (c >= 0x3000 && c <= 0x303F) ||
	    (c >= 0xFF00 && c <= 0xFF0F) || (c >= 0xFF1A && c <= 0xFF20) ||
	    (c >= 0xFF3B && c <= 0xFF40) || (c >= 0xFF5B && c <= 0xFF65) ||
	    (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0x2190 && c <= 0x2BFF))
		return 0;
	return 1;
}

/* Code point positions of str.splitlines() line breaks. */
int
jinja_u_linebreak(uint32_t c)
{
	return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C ||
	    c == 0x1C || c == 0x1D || c == 0x1E || c == 0x85 || c == 0x2028 ||
	    c == 0x2029;
}

/* ====== String operations (Python's str methods) ====== */

/* Case conversions of s into sb: 'U'pper, 'L'ower, 'S'wapcase,
 * 'T'itle (str.title), 'C'apitalize, 'J'inja's title filter. */
void
jinja_str_case(struct dbuf *sb, const char *s, size_t n, char mode)
{
	size_t		i, k;
	uint32_t	c;
	int		prev_cased = 0, start = 1;

	for (i = 0; i < n; i += k) {
		c = tpl_utf8_next(s + i, n - i, &k);
		switch (mode) {
		case 'U': sb_upper(sb, c); break;
		case 'L': tpl_add_utf8(sb, u_lower(c)); break;
		case 'S':
			if (u_lower(c) != c)
				tpl_add_utf8(sb, u_lower(c));
			else
				sb_upper(sb, c);
			break;
		case 'T':
			if (prev_cased)
				tpl_add_utf8(sb, u_lower(c));
			else
				sb_upper(sb, c);
			prev_cased = u_cased(c);
			break;
		case 'C':
			if (i == 0)
				sb_upper(sb, c);
			else
				tpl_add_utf8(sb, u_lower(c));
			break;
		default:	/* 'J': words split at -, space, ( { [ < */
			if (c == '-' || jinja_u_space(c) || c == '(' || c ==
			    '{' || c == '[' || c == '<') {
				tpl_add_utf8(sb, c);
				start = 1;
			} else if (start) {
				sb_upper(sb, c);
				start = 0;
			} else
				tpl_add_utf8(sb, u_lower(c));
			break;
		}
	}
}

/* Whether code point c is in the set chars (NULL: whitespace). */
static int
in_chars(uint32_t c, const struct jv *chars)
{
	size_t		i, k;

	if (chars == NULL)
		return jinja_u_space(c);
	for (i = 0; i < chars->u.s.n; i += k)
		if (tpl_utf8_next(chars->u.s.p + i, chars->u.s.n - i, &k) == c)
			return 1;
	return 0;
}

/* str.strip / lstrip / rstrip: byte range [*b, *e) of the result. */
void
jinja_str_strip(const char *s, size_t n, const struct jv *chars, int left,
    int right, size_t *b, size_t *e)
{
	size_t	i, k, last = 0;

	*b = 0;
	if (left)
		while (*b < n && in_chars(tpl_utf8_next(s + *b, n - *b, &k),
		    chars))
			*b += k;
	*e = n;
	if (right) {
		last = *b;
		for (i = *b; i < n; i += k)
			if (!in_chars(tpl_utf8_next(s + i, n - i, &k), chars))
				last = i + k;
		*e = last;
	}
}

static int
list_add(struct rt *rt, struct jv **l, size_t *cap, struct jv *item)
{
	struct jv	**v;
	size_t		  nc;

	if (item == NULL)
		return -1;
	if ((*l)->u.l.n == *cap) {
		nc = *cap * 2 + 8;
		if ((v = realloc((*l)->u.l.v, nc * sizeof(*v))) == NULL) {
			jinja_jv_unref(item);
			jinja_oom(rt);
			return -1;
		}
		(*l)->u.l.v = v;
		*cap = nc;
	}
	(*l)->u.l.v[(*l)->u.l.n++] = item;
	return 0;
}

/* The code point that ends at byte j of p (j > 0); *start gets its
 * first byte. */
static uint32_t
prev_cp(const char *p, size_t j, size_t *start)
{
	size_t i = j - 1, k;

	while (i > 0 && ((unsigned char)p[i] & 0xC0) == 0x80)
		i--;
	*start = i;
	return tpl_utf8_next(p + i, j - i, &k);
}

/* str.split (right 0) or str.rsplit (right 1); sep NULL: whitespace. */
static struct jv *
str_split(struct rt *rt, int line, const struct jv *s, const struct jv *sep,
    int64_t maxsplit, int right)
{
	struct jv	*l, *tmp;
	size_t		 cap = 0, i, j, k, n = s->u.s.n, b;
	const char	*p = s->u.s.p, *hit;
	int64_t		 splits = 0;

	if (sep != NULL && sep->u.s.n == 0)
		return jinja_fail(rt, line, "ValueError: empty separator");
	if ((l = jinja_jv_list(JT_LIST, 0)) == NULL)
		return jinja_oom(rt);
	if (sep == NULL) {
		if (!right) {
			for (i = 0; i < n;) {
				i += jinja_ws_len(p + i, n - i);
				if (i >= n)
					break;
				if (maxsplit >= 0 && splits >= maxsplit) {
					tmp = jinja_jv_strn(p + i, n - i);
					if (list_add(rt, &l, &cap, tmp ?:
					    jinja_oom(rt)) != 0)
						goto err;
					break;
				}
				for (j = i; j < n; j += k)
					if (jinja_u_space(tpl_utf8_next(p + j,
					    n - j, &k)))
						break;
				if (list_add(rt, &l, &cap, jinja_jv_strn(p + i,
				    j - i) ?: jinja_oom(rt)) != 0)
					goto err;
				splits++;
				i = j;
			}
			return l;
		}
		/* rsplit on whitespace: words from the right; the head keeps
		 * its leading whitespace. */
		for (j = n;;) {
			while (j > 0 && jinja_u_space(prev_cp(p, j, &i)))
				j = i;
			if (j == 0)
				break;
			if (maxsplit >= 0 && splits >= maxsplit) {
				if (list_add(rt, &l, &cap,
				    jinja_jv_strn(p, j) ?: jinja_oom(rt)) != 0)
					goto err;
				break;
			}
			for (b = j; b > 0 && !jinja_u_space(prev_cp(p, b, &i));)
				b = i;
			if (list_add(rt, &l, &cap, jinja_jv_strn(p + b,
			    j - b) ?: jinja_oom(rt)) != 0)
				goto err;
			splits++;
			j = b;
		}
		goto reverse;
	}
	if (!right) {
		for (i = 0;;) {
			hit = (maxsplit >= 0 && splits >= maxsplit) ? NULL :
			    memmem(p + i, n - i, sep->u.s.p, sep->u.s.n);
			if (hit == NULL) {
				if (list_add(rt, &l, &cap, jinja_jv_strn(p + i,
				    n - i) ?: jinja_oom(rt)) != 0)
					goto err;
				return l;
			}
			if (list_add(rt, &l, &cap, jinja_jv_strn(p + i,
			    (size_t)(hit - p) - i) ?: jinja_oom(rt)) != 0)
				goto err;
			splits++;
			i = (size_t)(hit - p) + sep->u.s.n;
		}
	}
	/* rsplit with a separator: collect from the right, then reverse. */
	j = n;
	for (;;) {
		hit = NULL;
		if (maxsplit < 0 || splits < maxsplit)
			for (i = j; i >= sep->u.s.n && hit == NULL; i--)
				if (!memcmp(p + i - sep->u.s.n, sep->u.s.p,
				    sep->u.s.n))
					hit = p + i - sep->u.s.n;
		if (hit == NULL) {
			if (list_add(rt, &l, &cap, jinja_jv_strn(p, j) ?:
			    jinja_oom(rt)))
				goto err;
			break;
		}
		b = (size_t)(hit - p) + sep->u.s.n;
		if (list_add(rt, &l, &cap, jinja_jv_strn(p + b, j - b) ?:
		    jinja_oom(rt)))
			goto err;
		splits++;
		j = (size_t)(hit - p);
	}
reverse:
	for (i = 0; i < l->u.l.n / 2; i++) {
		tmp = l->u.l.v[i];
		l->u.l.v[i] = l->u.l.v[l->u.l.n - 1 - i];
		l->u.l.v[l->u.l.n - 1 - i] = tmp;
	}
	return l;
err:
	jinja_jv_unref(l);
	return NULL;
}

struct jv *
jinja_str_replace(struct rt *rt, int line, const struct jv *s, const struct jv
    *old, const struct jv *new, int64_t count)
{
	struct dbuf	 sb = { 0 };
	const char	*p = s->u.s.p, *hit;
	size_t		 n = s->u.s.n, i = 0, k;
	int64_t		 done = 0;

	if (old->u.s.n == 0) {
		/* Python inserts new before every character and at the end. */
		for (i = 0; i <= n; i += k) {
			k = 1;
			if (count < 0 || done < count) {
				dbuf_add(&sb, new->u.s.p, new->u.s.n);
				done++;
			}
			if (i < n) {
				tpl_utf8_next(p + i, n - i, &k);
				dbuf_add(&sb, p + i, k);
			}
			if (sb.len > rt->lim->max_value)
				break;
		}
		return jinja_checked_str(rt, line, &sb);
	}
	while ((count < 0 || done < count) &&
	    (hit = memmem(p + i, n - i, old->u.s.p, old->u.s.n)) != NULL) {
		dbuf_add(&sb, p + i, (size_t)(hit - p) - i);
		dbuf_add(&sb, new->u.s.p, new->u.s.n);
		i = (size_t)(hit - p) + old->u.s.n;
		done++;
		if (sb.len > rt->lim->max_value)
			break;
	}
	dbuf_add(&sb, p + i, n - i);
	return jinja_checked_str(rt, line, &sb);
}

/* Python's float(str): whitespace, sign, digits with single underscores,
 * inf / infinity / nan; 0 on success. */
int
jinja_py_parse_float(const char *s, size_t n, double *out)
{
	char	 buf[400], *end;
	size_t	 b, e, i, m = 0;

	jinja_str_strip(s, n, NULL, 1, 1, &b, &e);
	if (e - b == 0 || e - b >= sizeof(buf))
		return -1;
	for (i = b; i < e; i++) {
		if (s[i] == '_') {
			if (i == b || i + 1 >= e || !jinja_is_digit(s[i - 1]) ||
			    !jinja_is_digit(s[i + 1]))
				return -1;
			continue;
		}
		if (!jinja_is_digit(s[i]) && !strchr("+-.eEinfatyINFATY", s[i]))
			return -1;
		buf[m++] = s[i];
	}
	buf[m] = '\0';
	i = buf[0] == '+' || buf[0] == '-';
	if (strcasecmp(buf + i, "inf") && strcasecmp(buf + i, "infinity") &&
	    strcasecmp(buf + i, "nan") && !jinja_is_digit(buf[i]) &&
	    !(buf[i] == '.' && jinja_is_digit(buf[i + 1])))
		return -1;
	*out = strtod(buf, &end);
	return *end == '\0' ? 0 : -1;
}

/* Python's int(str, base) for bases 2-36 (and 0x/0o/0b prefixes that
 * match the base); 0 on success, -1 invalid, -2 beyond 64 bits. */
int
jinja_py_parse_int(const char *s, size_t n, int base, int64_t *out)
{
	size_t	 b, e, i;
	int	 neg = 0, d, any = 0;
	int64_t	 v = 0;

	jinja_str_strip(s, n, NULL, 1, 1, &b, &e);
	if (b < e && (s[b] == '+' || s[b] == '-'))
		neg = s[b++] == '-';
	if (e - b > 2 && s[b] == '0' && ((base == 16 && (s[b + 1] == 'x' ||
	    s[b + 1] == 'X')) || (base == 8 && (s[b + 1] == 'o' ||
	    s[b + 1] == 'O')) || (base == 2 && (s[b + 1] == 'b' ||
	    s[b + 1] == 'B')))) {
		b += 2;
		if (b < e && s[b] == '_')
			b++;
	}
	for (i = b; i < e; i++) {
		if (s[i] == '_' && any && i + 1 < e && s[i + 1] != '_')
			continue;
		d = jinja_is_digit(s[i]) ? s[i] - '0' :
		    (s[i] >= 'a' && s[i] <= 'z') ? s[i] - 'a' + 10 :
		    (s[i] >= 'A' && s[i] <= 'Z') ? s[i] - 'A' + 10 : 99;
		if (d >= base)
			return -1;
		if (__builtin_mul_overflow(v, base, &v) ||
		    __builtin_sub_overflow(v, d, &v))
			return -2;
		any = 1;
	}
	if (!any)
		return -1;
	if (!neg && v == INT64_MIN)
		return -2;
	*out = neg ? v : -v;
	return 0;
}

/* ====== Calls and methods ====== */

void
jinja_cargs_release(struct cargs *ca)
{
	size_t i;

	for (i = 0; i < ca->npos; i++)
		jinja_jv_unref(ca->pos[i]);
	for (i = 0; i < ca->nkw; i++)
		jinja_jv_unref(ca->kwv[i]);
	ca->npos = ca->nkw = 0;
}

int
jinja_eval_args(struct rt *rt, const struct node *n, struct cargs *ca)
{
	struct jv	*v;
	size_t		 i;

	memset(ca, 0, sizeof(*ca));
	for (i = 0; i < n->nargs; i++) {
		if ((n->kw[i] == NULL ? ca->npos : ca->nkw) == MAXARGS) {
			jinja_fail(rt, n->line, "more than %d arguments",
			    MAXARGS);
			return -1;
		}
		if ((v = jinja_eval(rt, n->args[i])) == NULL)
			return -1;
		if (n->kw[i] == NULL)
			ca->pos[ca->npos++] = v;
		else {
			ca->kwn[ca->nkw] = n->kw[i];
			ca->kwv[ca->nkw++] = v;
		}
	}
	return 0;
}

/* Binds ca to the parameter names params (at most 5): a[i] borrowed or
 * NULL when not given. */
int
jinja_bind(struct rt *rt, int line, const char *what, const char *const *params,
    const struct cargs *ca, struct jv **a)
{
	size_t	np = 0, i, k;

	while (np < 5 && params[np] != NULL)
		np++;
	for (i = 0; i < 5; i++)
		a[i] = NULL;
	if (ca->npos > np) {
		jinja_fail(rt, line, "TypeError: %s takes at most %zu "
		    "arguments (%zu given)", what, np, ca->npos);
		return -1;
	}
	for (i = 0; i < ca->npos; i++)
		a[i] = ca->pos[i];
	for (k = 0; k < ca->nkw; k++) {
		for (i = 0; i < np; i++)
			if (!strcmp(params[i], ca->kwn[k]))
				break;
		if (i == np) {
			jinja_fail(rt, line, "TypeError: %s got an unexpected "
			    "keyword argument '%s'", what, ca->kwn[k]);
			return -1;
		}
		if (a[i] != NULL) {
			jinja_fail(rt, line, "TypeError: %s got multiple "
			    "values for argument '%s'", what, ca->kwn[k]);
			return -1;
		}
		a[i] = ca->kwv[k];
	}
	return 0;
}

int
jinja_want_str(struct rt *rt, int line, const struct jv *v, const char *what)
{
	if (v != NULL && v->t == JT_STR)
		return 0;
	jinja_fail(rt, line, "TypeError: %s must be str, not %s", what,
	    v ? jinja_jv_type(v) : "nothing");
	return -1;
}

int
jinja_want_int(struct rt *rt, int line, const struct jv *v, const char *what,
    int64_t *out)
{
	if (v != NULL && (v->t == JT_INT || v->t == JT_BOOL)) {
		*out = jinja_num_i(v);
		return 0;
	}
	if (v != NULL && v->t == JT_UNDEF) {
		jinja_undef_error(rt, line, v);
		return -1;
	}
	jinja_fail(rt, line, "TypeError: %s must be an integer, not %s", what,
	    v ? jinja_jv_type(v) : "nothing");
	return -1;
}

/* str.startswith / endswith with a str or a tuple of str. */
static struct jv *
str_affix(struct rt *rt, int line, const struct jv *s, const struct jv *x,
    int end)
{
	size_t i;

	if (x != NULL && x->t == JT_TUPLE) {
		for (i = 0; i < x->u.l.n; i++) {
			if (jinja_want_str(rt, line, x->u.l.v[i],
			    "prefix") != 0)
				return NULL;
			if (str_affix(rt, line, s, x->u.l.v[i], end) ==
			    &jinja_jv_true_s)
				return &jinja_jv_true_s;
		}
		return &jinja_jv_false_s;
	}
	if (jinja_want_str(rt, line, x, "prefix") != 0)
		return NULL;
	if (x->u.s.n > s->u.s.n)
		return &jinja_jv_false_s;
	return jinja_jv_bool(!memcmp(s->u.s.p + (end ? s->u.s.n - x->u.s.n : 0),
	    x->u.s.p, x->u.s.n));
}

/* str.center / ljust / rjust: pad to width code points with fill. */
struct jv *
jinja_str_pad(struct rt *rt, int line, const struct jv *s, int64_t width,
    const struct jv *fill, char how)
{
	struct dbuf	 sb = { 0 };
	const char	*f = " ";
	size_t		 fl = 1, len = jinja_str_len(s), left, right, i;
	int64_t		 marg;

	if (fill != NULL) {
		if (jinja_want_str(rt, line, fill, "fill character") != 0)
			return NULL;
		if (jinja_str_len(fill) != 1)
			return jinja_fail(rt, line, "TypeError: The fill "
			    "character must be exactly one character long");
		f = fill->u.s.p;
		fl = fill->u.s.n;
	}
	if (width > (int64_t)rt->lim->max_value)
		return jinja_limit(rt, line, "value size", rt->lim->max_value);
	if (width <= (int64_t)len)
		return jinja_jv_strn(s->u.s.p, s->u.s.n) ?: jinja_oom(rt);
	marg = width - (int64_t)len;
	if (how == 'c')
		left = (size_t)(marg / 2 + (marg & width & 1));
	else
		left = how == 'r' ? (size_t)marg : 0;
	right = (size_t)marg - left;
	for (i = 0; i < left; i++)
		dbuf_add(&sb, f, fl);
	dbuf_add(&sb, s->u.s.p, s->u.s.n);
	for (i = 0; i < right; i++)
		dbuf_add(&sb, f, fl);
	return jinja_checked_str(rt, line, &sb);
}

static struct jv *
str_find(struct rt *rt, int line, const struct jv *s, const struct jv *sub,
    int mode)
{
	const char	*hit = NULL, *p = s->u.s.p;
	size_t		 i, n = s->u.s.n, cnt = 0;

	if (jinja_want_str(rt, line, sub, "substring") != 0)
		return NULL;
	if (mode == 'c') {		/* count */
		if (sub->u.s.n == 0)
			return jinja_jv_int((int64_t)jinja_str_len(s) + 1) ?:
			    jinja_oom(rt);
		for (i = 0; (hit = memmem(p + i, n - i, sub->u.s.p,
		    sub->u.s.n)) != NULL; cnt++)
			i = (size_t)(hit - p) + sub->u.s.n;
		return jinja_jv_int((int64_t)cnt) ?: jinja_oom(rt);
	}
	if (mode == 'f' || mode == 'i')
		hit = memmem(p, n, sub->u.s.p, sub->u.s.n);
	else
		for (i = n + 1; i-- > 0 && hit == NULL;)
			if (i + sub->u.s.n <= n &&
			    !memcmp(p + i, sub->u.s.p, sub->u.s.n))
				hit = p + i;
	if (hit == NULL) {
		if (mode == 'i' || mode == 'I')
			return jinja_fail(rt, line, "ValueError: substring not "
			    "found");
		return jinja_jv_int(-1) ?: jinja_oom(rt);
	}
	for (i = 0; p + i < hit; i++)
		cnt += ((unsigned char)p[i] & 0xC0) != 0x80;
	return jinja_jv_int((int64_t)cnt) ?: jinja_oom(rt);
}

/* A str predicate: isdigit, isalpha, isalnum, isspace, islower, isupper. */
struct jv *
jinja_str_is(const struct jv *s, const char *name)
{
	size_t		i, k;
	uint32_t	c;
	int		cased = 0, ok = s->u.s.n > 0;

	for (i = 0; i < s->u.s.n && ok; i += k) {
		c = tpl_utf8_next(s->u.s.p + i, s->u.s.n - i, &k);
		if (!strcmp(name, "isdigit") || !strcmp(name, "isdecimal") ||
		    !strcmp(name, "isnumeric"))
			ok = c >= '0' && c <= '9';
		else if (!strcmp(name, "isalpha"))
			ok = jinja_u_word(c) && !(c >= '0' && c <= '9') &&
			    c != '_';
		else if (!strcmp(name, "isalnum"))
			ok = jinja_u_word(c) && c != '_';
		else if (!strcmp(name, "isspace"))
			ok = jinja_u_space(c);
		else if (!strcmp(name, "islower")) {
			ok = u_upper(c) == c || u_lower(c) == c;
			if (u_cased(c))
				ok = u_lower(c) == c, cased = 1;
		} else {
			ok = 1;
			if (u_cased(c))
				ok = u_upper(c) == c, cased = 1;
		}
	}
	if (!strcmp(name, "islower") || !strcmp(name, "isupper"))
		ok = ok && cased;
	return jinja_jv_bool(ok);
}

static struct jv *
call_str_method(struct rt *rt, int line, struct jv *s, const char *name,
    struct cargs *ca)
{
	static const char *const p_split[] = { "sep", "maxsplit", NULL };
	static const char *const p_chars[] = { "chars", NULL };
	static const char *const p_repl[] = { "old", "new", "count", NULL };
	static const char *const p_one[] = { "x", "start", "end", NULL };
	static const char *const p_pad[] = { "width", "fillchar", NULL };
	static const char *const p_none[] = { NULL };
	struct dbuf	 sb = { 0 };
	struct jv	*a[5], *items = NULL, *r = NULL, *sep;
	size_t		 b, e, i;
	int64_t		 k = -1;
	char		 what[64];
	int		 right;

	snprintf(what, sizeof(what), "str.%s()", name);
	if (!strcmp(name, "split") || !strcmp(name, "rsplit")) {
		if (jinja_bind(rt, line, what, p_split, ca, a) != 0)
			return NULL;
		sep = a[0] != NULL && a[0]->t != JT_NONE ? a[0] : NULL;
		if ((sep != NULL && jinja_want_str(rt, line, sep, "sep") !=
		    0) || (a[1] != NULL && jinja_want_int(rt, line, a[1],
		    "maxsplit", &k) != 0))
			return NULL;
		return str_split(rt, line, s, sep, k, name[0] == 'r');
	}
	if (!strcmp(name, "strip") || !strcmp(name, "lstrip") ||
	    !strcmp(name, "rstrip") || !strcmp(name, "removeprefix") ||
	    !strcmp(name, "removesuffix")) {
		if (jinja_bind(rt, line, what, p_chars, ca, a) != 0)
			return NULL;
		if (name[0] == 'r' && name[1] == 'e') {
			if (jinja_want_str(rt, line, a[0], "prefix") != 0)
				return NULL;
			right = name[6] == 's';
			if (str_affix(rt, line, s, a[0],
			    right) != &jinja_jv_true_s)
				return jinja_jv_ref(s);
			return jinja_jv_strn(s->u.s.p + (right ? 0 :
			    a[0]->u.s.n), s->u.s.n - a[0]->u.s.n) ?:
			    jinja_oom(rt);
		}
		if (a[0] != NULL && a[0]->t == JT_NONE)
			a[0] = NULL;
		if (a[0] != NULL && jinja_want_str(rt, line, a[0],
		    "chars") != 0)
			return NULL;
		jinja_str_strip(s->u.s.p, s->u.s.n, a[0], name[0] != 'r',
		    name[0] != 'l', &b, &e);
		return jinja_jv_strn(s->u.s.p + b, e - b) ?: jinja_oom(rt);
	}
	if (!strcmp(name, "replace")) {
		if (jinja_bind(rt, line, what, p_repl, ca, a) != 0 ||
		    jinja_want_str(rt, line, a[0], "old") != 0 ||
		    jinja_want_str(rt, line, a[1], "new") != 0 || (a[2] !=
		    NULL && jinja_want_int(rt, line, a[2], "count", &k)))
			return NULL;
		return jinja_str_replace(rt, line, s, a[0], a[1], k);
	}
	if (!strcmp(name, "startswith") || !strcmp(name, "endswith")) {
		if (jinja_bind(rt, line, what, p_one, ca, a) != 0)
			return NULL;
		if (a[1] != NULL || a[2] != NULL)
			return jinja_fail(rt, line, "%s with start/end is not "
			    "supported", what);
		return str_affix(rt, line, s, a[0], name[0] == 'e');
	}
	if (!strcmp(name, "find") || !strcmp(name, "rfind") ||
	    !strcmp(name, "index") || !strcmp(name, "rindex") ||
	    !strcmp(name, "count")) {
		if (jinja_bind(rt, line, what, p_one, ca, a) != 0)
			return NULL;
		if (a[1] != NULL || a[2] != NULL)
			return jinja_fail(rt, line, "%s with start/end is not "
			    "supported", what);
		return str_find(rt, line, s, a[0], !strcmp(name, "count") ?
		    'c' : !strcmp(name, "find") ? 'f' : !strcmp(name, "rfind") ?
		    'F' : !strcmp(name, "index") ? 'i' : 'I');
	}
	if (!strcmp(name, "center") || !strcmp(name, "ljust") ||
	    !strcmp(name, "rjust") || !strcmp(name, "zfill")) {
		if (jinja_bind(rt, line, what, p_pad, ca, a) != 0 ||
		    jinja_want_int(rt, line, a[0], "width", &k) != 0)
			return NULL;
		if (name[0] == 'z') {
			if (a[1] != NULL)
				return jinja_fail(rt, line, "TypeError: %s "
				    "takes one argument", what);
			if (k <= (int64_t)jinja_str_len(s))
				return jinja_jv_ref(s);
			if (k > (int64_t)rt->lim->max_value)
				return jinja_limit(rt, line, "value size",
				    rt->lim->max_value);
			i = s->u.s.n > 0 && (s->u.s.p[0] == '-' ||
			    s->u.s.p[0] == '+');
			dbuf_add(&sb, s->u.s.p, i);
			for (b = jinja_str_len(s); (int64_t)b < k; b++)
				dbuf_add(&sb, "0", 1);
			dbuf_add(&sb, s->u.s.p + i, s->u.s.n - i);
			return jinja_checked_str(rt, line, &sb);
		}
		return jinja_str_pad(rt, line, s, k, a[1],
		    name[0] == 'c' ? 'c' : name[0] == 'l' ? 'l' : 'r');
	}
	if (!strcmp(name, "join")) {
		if (jinja_bind(rt, line, what, p_chars, ca, a) != 0)
			return NULL;
		if (a[0] == NULL)
			return jinja_fail(rt, line, "TypeError: %s takes "
			    "exactly one argument", what);
		if ((items = jinja_jv_iter(rt, line, a[0])) == NULL)
			return NULL;
		for (i = 0; i < items->u.l.n; i++) {
			if (items->u.l.v[i]->t != JT_STR) {
				jinja_fail(rt, line, "TypeError: sequence item "
				    "%zu: expected str instance, %s found", i,
				    jinja_jv_type(items->u.l.v[i]));
				goto out;
			}
			if (i > 0)
				dbuf_add(&sb, s->u.s.p, s->u.s.n);
			dbuf_add(&sb, items->u.l.v[i]->u.s.p,
			    items->u.l.v[i]->u.s.n);
		}
		r = jinja_checked_str(rt, line, &sb);
		goto out;
	}
	if (strcmp(name, "lower") && strcmp(name, "upper") &&
	    strcmp(name, "title") && strcmp(name, "capitalize") &&
	    strcmp(name, "swapcase") && strcmp(name, "casefold") &&
	    strcmp(name, "splitlines") && strncmp(name, "is", 2))
		return jinja_fail(rt, line, "the method str.%s() is not "
		    "supported", name);
	if (jinja_bind(rt, line, what, p_none, ca, a) != 0)
		return NULL;
	if (!strcmp(name, "splitlines")) {
		size_t	cap = 0, k2;
		uint32_t c;

		if ((r = jinja_jv_list(JT_LIST, 0)) == NULL)
			return jinja_oom(rt);
		for (i = 0, b = 0; i < s->u.s.n; i += k2) {
			c = tpl_utf8_next(s->u.s.p + i, s->u.s.n - i, &k2);
			if (!jinja_u_linebreak(c))
				continue;
			if (list_add(rt, &r, &cap, jinja_jv_strn(s->u.s.p + b,
			    i - b) ?: jinja_oom(rt)) != 0) {
				jinja_jv_unref(r);
				return NULL;
			}
			if (c == '\r' && i + 1 < s->u.s.n &&
			    s->u.s.p[i + 1] == '\n')
				k2 = 2;
			b = i + k2;
		}
		if (b < s->u.s.n && list_add(rt, &r, &cap,
		    jinja_jv_strn(s->u.s.p + b, s->u.s.n - b) ?:
		    jinja_oom(rt)) != 0) {
			jinja_jv_unref(r);
			return NULL;
		}
		return r;
	}
	if (!strcmp(name, "lower") || !strcmp(name, "upper") ||
	    !strcmp(name, "title") || !strcmp(name, "capitalize") ||
	    !strcmp(name, "swapcase") || !strcmp(name, "casefold")) {
		jinja_str_case(&sb, s->u.s.p, s->u.s.n, !strcmp(name, "upper") ?
		    'U' : !strcmp(name, "title") ? 'T' : !strcmp(name,
		    "capitalize") ? 'C' : !strcmp(name, "swapcase") ? 'S' :
		    'L');
		return jinja_checked_str(rt, line, &sb);
	}
	if (!strcmp(name, "isdigit") || !strcmp(name, "isalpha") ||
	    !strcmp(name, "isalnum") || !strcmp(name, "isspace") ||
	    !strcmp(name, "islower") || !strcmp(name, "isupper") ||
	    !strcmp(name, "isdecimal") || !strcmp(name, "isnumeric"))
		return jinja_str_is(s, name);
	return jinja_fail(rt, line, "the method str.%s() is not supported",
	    name);
out:
	dbuf_free(&sb);
	jinja_jv_unref(items);
	return r;
}

struct jv *
jinja_call_method(struct rt *rt, int line, struct jv *m, struct cargs *ca)
{
	static const char *const p_get[] = { "key", "default", NULL };
	static const char *const p_none[] = { NULL };
	static const char *const p_one[] = { "x", NULL };
	struct jv	*self = m->u.m.self, *a[5], *r, *v;
	const char	*name = m->u.m.name;
	size_t		 i;
	char		 what[64];

	snprintf(what, sizeof(what), "%s.%s()", jinja_jv_type(self), name);
	if (self->t == JT_STR)
		return call_str_method(rt, line, self, name, ca);
	if (self->t == JT_LOOP && !strcmp(name, "cycle")) {
		if (ca->nkw > 0 || ca->npos == 0)
			return jinja_fail(rt, line, "TypeError: loop.cycle() "
			    "needs positional arguments");
		return jinja_jv_ref(ca->pos[self->u.loop.i % ca->npos]);
	}
	if (self->t == JT_DICT && !strcmp(name, "get")) {
		if (jinja_bind(rt, line, what, p_get, ca, a) != 0)
			return NULL;
		if (a[0] == NULL)
			return jinja_fail(rt, line, "TypeError: get expected "
			    "at least 1 argument, got 0");
		if ((v = jinja_dict_get(self, a[0])) != NULL)
			return jinja_jv_ref(v);
		return a[1] != NULL ? jinja_jv_ref(a[1]) : &jinja_jv_none_s;
	}
	if (self->t == JT_DICT && (!strcmp(name, "items") ||
	    !strcmp(name, "keys") || !strcmp(name, "values"))) {
		if (jinja_bind(rt, line, what, p_none, ca, a) != 0)
			return NULL;
		if ((r = jinja_jv_list(JT_LIST, self->u.d.n)) == NULL)
			return jinja_oom(rt);
		r->view = name[0] == 'i' ? JV_ITEMS : name[0] == 'k' ?
		    JV_KEYS : JV_VALUES;
		for (i = 0; i < self->u.d.n; i++) {
			if (r->view == JV_KEYS)
				jinja_jv_push(r, jinja_jv_ref(self->u.d.k[i]));
			else if (r->view == JV_VALUES)
				jinja_jv_push(r, jinja_jv_ref(self->u.d.v[i]));
			else {
				if ((v = jinja_jv_list(JT_TUPLE, 2)) == NULL) {
					jinja_jv_unref(r);
					return jinja_oom(rt);
				}
				jinja_jv_push(v, jinja_jv_ref(self->u.d.k[i]));
				jinja_jv_push(v, jinja_jv_ref(self->u.d.v[i]));
				jinja_jv_push(r, v);
			}
		}
		return r;
	}
	if (jinja_is_seq(self) && self->view == JV_PLAIN &&
	    (!strcmp(name, "count") || !strcmp(name, "index"))) {
		if (jinja_bind(rt, line, what, p_one, ca, a) != 0)
			return NULL;
		if (a[0] == NULL)
			return jinja_fail(rt, line, "TypeError: %s takes "
			    "exactly one argument", what);
		int64_t cnt = 0;

		for (i = 0; i < self->u.l.n; i++)
			if (jinja_jv_eq(self->u.l.v[i], a[0])) {
				if (name[0] == 'i')
					return jinja_jv_int((int64_t)i) ?:
					    jinja_oom(rt);
				cnt++;
			}
		if (name[0] == 'i')
			return jinja_fail(rt, line, "ValueError: item is not "
			    "in list");
		return jinja_jv_int(cnt) ?: jinja_oom(rt);
	}
	return jinja_fail(rt, line, "the method %s.%s() is not supported",
	    jinja_jv_type(self), name);
}

/* range(), dict(), namespace(). */
struct jv *
jinja_call_global(struct rt *rt, int line, const char *name, struct cargs *ca)
{
	struct jv	*r;
	int64_t		 v[3] = { 0, 0, 1 }, i, cnt;
	size_t		 k;

	if (!strcmp(name, "range")) {
		if (ca->nkw > 0 || ca->npos < 1 || ca->npos > 3)
			return jinja_fail(rt, line, "TypeError: range expected "
			    "1 to 3 positional arguments");
		for (k = 0; k < ca->npos; k++)
			if (jinja_want_int(rt, line, ca->pos[k], "range() "
			    "argument", &v[ca->npos == 1 ? 1 : k]) != 0)
				return NULL;
		if (v[2] == 0)
			return jinja_fail(rt, line, "ValueError: range() arg 3 "
			    "must not be zero");
		cnt = v[2] > 0 ? (v[1] > v[0] ? (v[1] - v[0] - 1) / v[2] + 1 :
		    0) : (v[0] > v[1] ? (v[0] - v[1] - 1) / -v[2] + 1 : 0);
		if ((uint64_t)cnt > rt->lim->max_value)
			return jinja_limit(rt, line, "value size",
			    rt->lim->max_value);
		if (jinja_step(rt, line, (size_t)cnt) != 0)
			return NULL;
		if ((r = jinja_jv_list(JT_LIST, (size_t)cnt)) == NULL)
			return jinja_oom(rt);
		for (i = 0; i < cnt; i++) {
			struct jv *x = jinja_jv_int(v[0] + i * v[2]);

			if (x == NULL) {
				jinja_jv_unref(r);
				return jinja_oom(rt);
			}
			jinja_jv_push(r, x);
		}
		return r;
	}
	/* dict(k=v) and namespace(k=v). */
	if (ca->npos > 0)
		return jinja_fail(rt, line, "%s() with positional arguments is "
		    "not supported", name);
	if ((r = jinja_jv_dict(ca->nkw)) == NULL)
		return jinja_oom(rt);
	if (name[0] == 'n')
		r->t = JT_NS;
	for (k = 0; k < ca->nkw; k++) {
		if ((r->u.d.k[k] = jinja_jv_str(ca->kwn[k])) == NULL) {
			jinja_jv_unref(r);
			return jinja_oom(rt);
		}
		r->u.d.v[k] = jinja_jv_ref(ca->kwv[k]);
		r->u.d.n++;
	}
	return r;
}
