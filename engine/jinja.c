/*
 * jinja.c — a Jinja2 engine for template-transform nodes.
 *
 * Dify renders these with jinja2.Template(template).render(**inputs) in
 * Python 3 (default Undefined, no autoescape, trim_blocks and
 * lstrip_blocks off, keep_trailing_newline off), so output here follows
 * Jinja2 3.x and Python's str()/repr() exactly for the subset below and is
 * a clear error (naming the construct and the line) for everything else:
 *
 *   {{ expr }}  {% if/elif/else %}  {% for a[, b] in x [if c] %}...
 *   {% else %}  {% set a[, b] = x %}  {% set ns.a = x %}  {% set a %}...
 *   {% endset %}  {% filter f %}  {% raw %}  {# comments #}  -/+ markers
 *   literals, a.b a['b'] a[0] a[1:-1], + - * / // % ** ~, comparisons,
 *   in / not in, and / or / not, x if c else y, is tests, |filters,
 *   str/dict/list methods, range(), dict(), namespace(), loop.*
 *
 * Outside the subset: macros, call blocks, include/import/extends/block,
 * with, autoescape, break/continue and the do tag (extensions), recursive
 * loops, % string formatting, integers beyond 64 bits, unknown filters,
 * tests and methods. Case mapping covers Latin, Greek and Cyrillic;
 * Python's printable/whitespace tables are approximated.
 *
 * Sections: values, conversions, lexer, parser, evaluation, filters,
 * statements, entry points.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"

/* ====== Values ====== */

enum jt {
	JT_UNDEF,
	JT_NONE,
	JT_BOOL,
	JT_INT,
	JT_FLOAT,
	JT_STR,
	JT_LIST,
	JT_TUPLE,
	JT_DICT,
	JT_METHOD,	/* a bound method: self + name */
	JT_FUNC,	/* a global: range, dict, namespace */
	JT_LOOP,
	JT_NS		/* namespace(): a mutable dict */
};

/* Kinds of JT_LIST that print differently or are used up by iterating. */
enum jview {
	JV_PLAIN,
	JV_ITER,	/* a generator: map, select, unique, reverse */
	JV_KEYS,	/* dict_keys([...]) */
	JV_VALUES,
	JV_ITEMS
};

struct jv {
	enum jt		 t;
	unsigned	 refs;
	unsigned char	 markup;	/* JT_STR: a markupsafe.Markup */
	unsigned char	 view;		/* JT_LIST: enum jview */
	unsigned char	 used;		/* JV_ITER: iterated already */
	union {
		int		 b;
		int64_t		 i;
		double		 f;
		struct {
			char	*p;	/* NUL-terminated; also JT_UNDEF's hint */
			size_t	 n;
		} s;
		struct {
			struct jv	**v;
			size_t		  n;
		} l;
		struct {
			struct jv	**k, **v;
			size_t		  n;
		} d;
		struct {
			struct jv	*self;
			const char	*name;
		} m;
		struct {
			struct jv	*items;	/* the list being looped over */
			size_t		 i;
		} loop;
	} u;
};

static struct jv jv_none_s = { .t = JT_NONE, .refs = 1 };
static struct jv jv_true_s = { .t = JT_BOOL, .refs = 1, .u.b = 1 };
static struct jv jv_false_s = { .t = JT_BOOL, .refs = 1, .u.b = 0 };

#define IMMORTAL(v) ((v) == &jv_none_s || (v) == &jv_true_s || \
    (v) == &jv_false_s)

static struct jv *
jv_ref(struct jv *v)
{
	if (v != NULL && !IMMORTAL(v))
		v->refs++;
	return v;
}

static void
jv_unref(struct jv *v)
{
	size_t i;

	if (v == NULL || IMMORTAL(v) || --v->refs > 0)
		return;
	switch (v->t) {
	case JT_STR:
	case JT_UNDEF:
		free(v->u.s.p);
		break;
	case JT_LIST:
	case JT_TUPLE:
		for (i = 0; i < v->u.l.n; i++)
			jv_unref(v->u.l.v[i]);
		free(v->u.l.v);
		break;
	case JT_DICT:
	case JT_NS:
		for (i = 0; i < v->u.d.n; i++) {
			jv_unref(v->u.d.k[i]);
			jv_unref(v->u.d.v[i]);
		}
		free(v->u.d.k);
		free(v->u.d.v);
		break;
	case JT_METHOD:
		jv_unref(v->u.m.self);
		break;
	case JT_LOOP:
		jv_unref(v->u.loop.items);
		break;
	default:
		break;
	}
	free(v);
}

static struct jv *
jv_new(enum jt t)
{
	struct jv *v;

	if ((v = calloc(1, sizeof(*v))) == NULL)
		return NULL;
	v->t = t;
	v->refs = 1;
	return v;
}

static struct jv *
jv_bool(int b)
{
	return b ? &jv_true_s : &jv_false_s;
}

static struct jv *
jv_int(int64_t i)
{
	struct jv *v;

	if ((v = jv_new(JT_INT)) != NULL)
		v->u.i = i;
	return v;
}

static struct jv *
jv_float(double f)
{
	struct jv *v;

	if ((v = jv_new(JT_FLOAT)) != NULL)
		v->u.f = f;
	return v;
}

/* A string of n bytes copied from s. */
static struct jv *
jv_strn(const char *s, size_t n)
{
	struct jv *v;

	if ((v = jv_new(JT_STR)) == NULL)
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

static struct jv *
jv_str(const char *s)
{
	return jv_strn(s, strlen(s));
}

/* A string taking over sb's bytes. */
static struct jv *
jv_str_sb(struct tpl_sb *sb)
{
	struct jv	*v;
	size_t		 n = sb->len;
	char		*p;

	if ((p = tpl_sb_take(sb)) == NULL)
		return NULL;
	if ((v = jv_new(JT_STR)) == NULL) {
		free(p);
		return NULL;
	}
	v->u.s.p = p;
	v->u.s.n = n;
	return v;
}

/* An undefined value; hint (may be NULL) is the UndefinedError message. */
static struct jv *
jv_undef(const char *hint)
{
	struct jv *v;

	if ((v = jv_new(JT_UNDEF)) == NULL)
		return NULL;
	if (hint != NULL && (v->u.s.p = strdup(hint)) == NULL) {
		free(v);
		return NULL;
	}
	return v;
}

/* An empty list (or tuple) with room for cap items. */
static struct jv *
jv_list(enum jt t, size_t cap)
{
	struct jv *v;

	if ((v = jv_new(t)) == NULL)
		return NULL;
	if ((v->u.l.v = calloc(cap ? cap : 1, sizeof(*v->u.l.v))) == NULL) {
		free(v);
		return NULL;
	}
	return v;
}

/* Appends item (taking the reference) to a list made with room for it. */
static void
jv_push(struct jv *l, struct jv *item)
{
	l->u.l.v[l->u.l.n++] = item;
}

static struct jv *
jv_dict(size_t cap)
{
	struct jv *v;

	if ((v = jv_new(JT_DICT)) == NULL)
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

static int
is_num(const struct jv *v)
{
	return v->t == JT_INT || v->t == JT_FLOAT || v->t == JT_BOOL;
}

static int
is_seq(const struct jv *v)
{
	return v->t == JT_LIST || v->t == JT_TUPLE;
}

static double
num_f(const struct jv *v)
{
	return v->t == JT_FLOAT ? v->u.f :
	    v->t == JT_INT ? (double)v->u.i : (double)v->u.b;
}

static int64_t
num_i(const struct jv *v)
{
	return v->t == JT_INT ? v->u.i : v->u.b;
}

/* Python's type name, for error messages. */
static const char *
jv_type(const struct jv *v)
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
static size_t
str_len(const struct jv *v)
{
	size_t i, n = 0;

	for (i = 0; i < v->u.s.n; i++)
		n += ((unsigned char)v->u.s.p[i] & 0xC0) != 0x80;
	return n;
}

/* Byte offset of code point index ci in s (n bytes). */
static size_t
str_off(const char *s, size_t n, size_t ci)
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

/* ====== Unicode helpers ====== */

/* Python's str.isspace(). */
static int
u_space(uint32_t c)
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
sb_upper(struct tpl_sb *sb, uint32_t c)
{
	if (c == 0xDF)
		tpl_sb_add(sb, "SS", 2);
	else
		tpl_sb_utf8(sb, u_upper(c));
}

/* Python's \w for one code point (letters, digits, _ and most non-ASCII
 * that is not space or CJK / general punctuation). */
static int
u_word(uint32_t c)
{
	if (c < 0x80)
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_';
	if (u_space(c) || (c >= 0x80 && c <= 0xBF && c != 0xAA &&
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
static int
u_linebreak(uint32_t c)
{
	return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C ||
	    c == 0x1C || c == 0x1D || c == 0x1E || c == 0x85 || c == 0x2028 ||
	    c == 0x2029;
}

/* ====== Syntax tree and run state ====== */

enum nk {
	N_CONST,
	N_NAME,
	N_ATTR,		/* a.name */
	N_ITEM,		/* a[b] */
	N_SLICE,	/* a[args0:args1:args2] */
	N_CALL,		/* a(args) */
	N_FILTER,	/* a|name(args) */
	N_TEST,		/* a is [not] name(args); op: negated */
	N_BIN,		/* a op b */
	N_NEG,
	N_POS,
	N_NOT,
	N_AND,
	N_OR,
	N_CMP,		/* args0 ops0 args1 ops1 args2 ... */
	N_COND,		/* a if b else c */
	N_LIST,
	N_TUPLE,
	N_DICT,		/* args: key, value, key, value ... */
	N_CONCAT	/* args0 ~ args1 ~ ... */
};

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FDIV, OP_MOD, OP_POW };
enum { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_IN, CMP_NOTIN };

struct rt;
struct node;
typedef struct jv *(*jfilter_fn)(struct rt *, const struct node *,
    struct jv *, struct jv **);

/* A filter or test: its Python parameters after the value. */
struct jfunc {
	const char	*name;
	const char	*params[5];
	jfilter_fn	 fn;
};

struct node {
	enum nk			 kind;
	int			 op, line;
	size_t			 depth;
	char			*name;
	struct jv		*val;
	struct node		*a, *b, *c;
	struct node		**args;
	char			**kw;	/* per arg: keyword name or NULL */
	int			*ops;
	size_t			 nargs;
	const struct jfunc	*fn;
};

enum sk { S_TEXT, S_PRINT, S_IF, S_FOR, S_SET, S_SETBLOCK, S_FILTER };

struct block {
	struct stmt	**v;
	size_t		  n, cap;
};

struct stmt {
	enum sk		 kind;
	int		 line;
	char		*text;		/* S_TEXT */
	size_t		 len;
	struct node	*e;		/* printed, tested, looped, assigned */
	struct node	*cond;		/* S_FOR: the inline if */
	struct node	*filt;		/* S_SETBLOCK, S_FILTER: the chain */
	char		**tg;		/* targets */
	size_t		 ntg;
	int		 tuple;		/* targets were written as a tuple */
	char		*attr;		/* {% set ns.attr = ... %} */
	struct block	 body, orelse;
};

struct jinja_tpl {
	struct jinja_limits	 lim;
	struct block		 root;
};

struct frame {
	struct frame	*up;
	char		**names;	/* borrowed from the tree */
	struct jv	**vals;
	size_t		  n, cap;
};

struct rt {
	const struct jinja_limits	*lim;
	struct tpl_sb			*out;
	size_t				 out_chars;
	int				 capturing;
	size_t				 loops, steps;
	int				 rc;
	char				*err;
	struct frame			*top;
	struct jv			*vars;
};

/* Records the first error; always returns NULL. */
static void *
fail(struct rt *rt, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void *
fail(struct rt *rt, int line, const char *fmt, ...)
{
	va_list	ap;
	char	msg[ENGINE_ERRMAX];

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

static void *
limit(struct rt *rt, int line, const char *what, size_t max)
{
	if (rt->rc != 0)
		return NULL;
	rt->rc = ENGINE_ELIMIT;
	if (rt->err != NULL)
		snprintf(rt->err, ENGINE_ERRMAX, "line %d: %s: more than %zu",
		    line, what, max);
	return NULL;
}

static void *
oom(struct rt *rt)
{
	if (rt->rc == 0) {
		rt->rc = ENGINE_ENOMEM;
		if (rt->err != NULL)
			snprintf(rt->err, ENGINE_ERRMAX, "out of memory");
	}
	return NULL;
}

/* Counts n steps of work; NULL (and the limit's error) past the budget. */
static int
step(struct rt *rt, int line, size_t n)
{
	rt->steps += n;
	if (rt->steps > rt->lim->max_steps) {
		limit(rt, line, "evaluation steps", rt->lim->max_steps);
		return -1;
	}
	return 0;
}

/* UndefinedError for an undefined value used where Jinja2 raises. */
static void *
undef_error(struct rt *rt, int line, const struct jv *v)
{
	return fail(rt, line, "UndefinedError: %s",
	    v->u.s.p != NULL ? v->u.s.p : "value is undefined");
}

/* ====== Conversions ====== */

static int jv_write(struct rt *rt, int line, struct tpl_sb *sb,
    const struct jv *v, int repr, int depth);

/* str() (repr 0) or repr() (repr 1) of v into sb; -1 with the error set
 * for values whose text is an object address in Python. */
static int
jv_write(struct rt *rt, int line, struct tpl_sb *sb, const struct jv *v,
    int repr, int depth)
{
	size_t	i;
	int	rc = 0;

	if (depth > 1100) {
		fail(rt, line, "value nested too deeply to print");
		return -1;
	}
	switch (v->t) {
	case JT_UNDEF:
		if (repr)
			tpl_sb_str(sb, "Undefined");
		return 0;
	case JT_NONE: tpl_sb_str(sb, "None"); return 0;
	case JT_BOOL: tpl_sb_str(sb, v->u.b ? "True" : "False"); return 0;
	case JT_INT: tpl_sb_py_int(sb, v->u.i); return 0;
	case JT_FLOAT: tpl_sb_py_float(sb, v->u.f); return 0;
	case JT_STR:
		if (!repr)
			tpl_sb_add(sb, v->u.s.p, v->u.s.n);
		else {
			if (v->markup)
				tpl_sb_str(sb, "Markup(");
			tpl_sb_py_str(sb, v->u.s.p, v->u.s.n);
			if (v->markup)
				tpl_sb_str(sb, ")");
		}
		return 0;
	case JT_LIST:
	case JT_TUPLE:
		if (v->view == JV_ITER) {
			fail(rt, line, "cannot print a generator (Jinja2 "
			    "prints its address): add |list");
			return -1;
		}
		if (v->view == JV_KEYS)
			tpl_sb_str(sb, "dict_keys(");
		else if (v->view == JV_VALUES)
			tpl_sb_str(sb, "dict_values(");
		else if (v->view == JV_ITEMS)
			tpl_sb_str(sb, "dict_items(");
		tpl_sb_str(sb, v->t == JT_LIST ? "[" : "(");
		for (i = 0; rc == 0 && i < v->u.l.n; i++) {
			if (i > 0)
				tpl_sb_add(sb, ", ", 2);
			rc = jv_write(rt, line, sb, v->u.l.v[i], 1, depth + 1);
		}
		if (v->t == JT_TUPLE && v->u.l.n == 1)
			tpl_sb_add(sb, ",", 1);
		tpl_sb_str(sb, v->t == JT_LIST ? "]" : ")");
		if (v->view != JV_PLAIN)
			tpl_sb_add(sb, ")", 1);
		return rc;
	case JT_DICT:
		tpl_sb_add(sb, "{", 1);
		for (i = 0; rc == 0 && i < v->u.d.n; i++) {
			if (i > 0)
				tpl_sb_add(sb, ", ", 2);
			rc = jv_write(rt, line, sb, v->u.d.k[i], 1, depth + 1);
			tpl_sb_add(sb, ": ", 2);
			if (rc == 0)
				rc = jv_write(rt, line, sb, v->u.d.v[i], 1,
				    depth + 1);
		}
		tpl_sb_add(sb, "}", 1);
		return rc;
	default:
		fail(rt, line, "cannot print a %s (Jinja2 prints its address)",
		    jv_type(v));
		return -1;
	}
}

/* Python's str(v) as a new string value (v itself when it is a str). */
static struct jv *
jv_to_str(struct rt *rt, int line, struct jv *v)
{
	struct tpl_sb	 sb = { 0 };
	struct jv	*s;

	if (v->t == JT_STR)
		return jv_ref(v);
	if (jv_write(rt, line, &sb, v, 0, 0) != 0) {
		tpl_sb_release(&sb);
		return NULL;
	}
	if (sb.len > rt->lim->max_value) {
		tpl_sb_release(&sb);
		return limit(rt, line, "value size", rt->lim->max_value);
	}
	if ((s = jv_str_sb(&sb)) == NULL)
		return oom(rt);
	return s;
}

/* Python truthiness. */
static int
jv_truth(const struct jv *v)
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
static int
jv_eq(const struct jv *a, const struct jv *b)
{
	size_t i, j;

	if (a == b)
		return 1;
	if (is_num(a) && is_num(b)) {
		if (a->t != JT_FLOAT && b->t != JT_FLOAT)
			return num_i(a) == num_i(b);
		return num_f(a) == num_f(b);
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
			if (!jv_eq(a->u.l.v[i], b->u.l.v[i]))
				return 0;
		return 1;
	case JT_DICT:
		if (a->u.d.n != b->u.d.n)
			return 0;
		for (i = 0; i < a->u.d.n; i++) {
			for (j = 0; j < b->u.d.n; j++)
				if (jv_eq(a->u.d.k[i], b->u.d.k[j]))
					break;
			if (j == b->u.d.n || !jv_eq(a->u.d.v[i], b->u.d.v[j]))
				return 0;
		}
		return 1;
	default:
		return 0;
	}
}

/* Python's <-ordering: *res < 0, 0, > 0; -1 with a TypeError set. */
static int
jv_cmp(struct rt *rt, int line, const struct jv *a, const struct jv *b,
    const char *op, int *res)
{
	size_t	i, n;
	double	x, y;
	int	c;

	if (a->t == JT_UNDEF || b->t == JT_UNDEF) {
		undef_error(rt, line, a->t == JT_UNDEF ? a : b);
		return -1;
	}
	if (is_num(a) && is_num(b)) {
		if (a->t != JT_FLOAT && b->t != JT_FLOAT)
			*res = num_i(a) < num_i(b) ? -1 : num_i(a) > num_i(b);
		else {
			x = num_f(a);
			y = num_f(b);
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
	if (a->t == b->t && is_seq(a) && a->view == JV_PLAIN &&
	    b->view == JV_PLAIN) {
		for (i = 0; i < a->u.l.n && i < b->u.l.n; i++)
			if (!jv_eq(a->u.l.v[i], b->u.l.v[i]))
				return jv_cmp(rt, line, a->u.l.v[i],
				    b->u.l.v[i], op, res);
		*res = a->u.l.n < b->u.l.n ? -1 : a->u.l.n > b->u.l.n;
		return 0;
	}
	fail(rt, line, "TypeError: '%s' not supported between instances of "
	    "'%s' and '%s'", op, jv_type(a), jv_type(b));
	return -1;
}

/* A JSON value as a Jinja value; NULL on allocation failure or when
 * nested deeper than the limit (*deep set). */
static struct jv *
jv_from_json(const json_t *j, int depth, int *deep)
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
	case JSON_NULL: return &jv_none_s;
	case JSON_TRUE: return &jv_true_s;
	case JSON_FALSE: return &jv_false_s;
	case JSON_INTEGER: return jv_int(json_integer_value(j));
	case JSON_REAL: return jv_float(json_real_value(j));
	case JSON_STRING:
		return jv_strn(json_string_value(j), json_string_length(j));
	case JSON_ARRAY:
		if ((v = jv_list(JT_LIST, json_array_size(j))) == NULL)
			return NULL;
		for (i = 0; i < json_array_size(j); i++) {
			item = jv_from_json(json_array_get(j, i), depth + 1,
			    deep);
			if (item == NULL) {
				jv_unref(v);
				return NULL;
			}
			jv_push(v, item);
		}
		return v;
	case JSON_OBJECT:
		if ((v = jv_dict(json_object_size(j))) == NULL)
			return NULL;
		json_object_foreach((json_t *)j, key, m) {
			k = jv_str(key);
			item = k ? jv_from_json(m, depth + 1, deep) : NULL;
			if (item == NULL) {
				jv_unref(k);
				jv_unref(v);
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
static struct jv *
jv_iter(struct rt *rt, int line, struct jv *v)
{
	struct jv	*l, *c;
	size_t		 i, k;

	switch (v->t) {
	case JT_LIST:
	case JT_TUPLE:
		if (v->view == JV_ITER) {
			if (v->used)
				return jv_list(JT_LIST, 0) ?: oom(rt);
			v->used = 1;
		}
		return jv_ref(v);
	case JT_UNDEF:
		return jv_list(JT_LIST, 0) ?: oom(rt);
	case JT_STR:
		if ((l = jv_list(JT_LIST, v->u.s.n)) == NULL)
			return oom(rt);
		for (i = 0; i < v->u.s.n; i += k) {
			tpl_utf8_next(v->u.s.p + i, v->u.s.n - i, &k);
			if ((c = jv_strn(v->u.s.p + i, k)) == NULL) {
				jv_unref(l);
				return oom(rt);
			}
			jv_push(l, c);
		}
		return l;
	case JT_DICT:
	case JT_NS:
		if ((l = jv_list(JT_LIST, v->u.d.n)) == NULL)
			return oom(rt);
		for (i = 0; i < v->u.d.n; i++)
			jv_push(l, jv_ref(v->u.d.k[i]));
		return l;
	default:
		return fail(rt, line, "TypeError: '%s' object is not iterable",
		    jv_type(v));
	}
}

/* len(v), or -1 with a TypeError set. */
static int64_t
jv_len(struct rt *rt, int line, const struct jv *v)
{
	switch (v->t) {
	case JT_UNDEF: return 0;
	case JT_STR: return (int64_t)str_len(v);
	case JT_LIST:
		if (v->view == JV_ITER)
			break;
		return (int64_t)v->u.l.n;
	case JT_TUPLE: return (int64_t)v->u.l.n;
	case JT_DICT: return (int64_t)v->u.d.n;
	default: break;
	}
	fail(rt, line, "TypeError: object of type '%s' has no len()",
	    jv_type(v));
	return -1;
}
