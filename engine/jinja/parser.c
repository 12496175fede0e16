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
			char	*p;	/* NUL-terminated; JT_UNDEF: hint */
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
	/* Atomic: literals of a compiled template are shared by renders
	 * running in several threads. */
	if (v != NULL && !IMMORTAL(v))
		__atomic_add_fetch(&v->refs, 1, __ATOMIC_RELAXED);
	return v;
}

static void
jv_unref(struct jv *v)
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

/* Jinja2 filters that exist but are outside the subset. */
static const char *const unsupported_filters[] = { "batch",
    "filesizeformat", "format", "groupby", "pprint", "random", "slice",
    "urlencode", "urlize", "wordwrap", "xmlattr", "attr", NULL };

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

/* ====== Lexer ====== */

enum tk { T_EOF, T_NAME, T_STR, T_INT, T_FLOAT, T_OP, T_END };

struct tok {
	enum tk		 t;
	int		 line;
	const char	*p;	/* source text of names and operators */
	size_t		 n;
	struct jv	*val;	/* literals; owned by the token list */
};

struct ps {
	struct rt		 rt;
	const struct jinja_limits *lim;
	const char		*src;
	size_t			 len, pos;
	int			 line;
	size_t			 lpos;	/* line is the line of src[lpos] */
	struct tok		*toks;
	size_t			 ntok, itok, captok;
	size_t			 depth, edepth;
};

static int
ps_line(struct ps *ps, size_t pos)
{
	for (; ps->lpos < pos && ps->lpos < ps->len; ps->lpos++)
		if (ps->src[ps->lpos] == '\n')
			ps->line++;
	return ps->line;
}

/* Length of the Unicode whitespace at s (n bytes), or 0. */
static size_t
ws_len(const char *s, size_t n)
{
	size_t	 i = 0, k;

	while (i < n && u_space(tpl_utf8_next(s + i, n - i, &k)))
		i += k;
	return i;
}

/* Length of s without its trailing Unicode whitespace. */
static size_t
rstrip_len(const char *s, size_t n)
{
	size_t	 i, k, end = 0;

	for (i = 0; i < n; i += k)
		if (!u_space(tpl_utf8_next(s + i, n - i, &k)))
			end = i + k;
	return end;
}

static void
toks_clear(struct ps *ps)
{
	size_t i;

	for (i = 0; i < ps->ntok; i++)
		jv_unref(ps->toks[i].val);
	ps->ntok = ps->itok = 0;
}

static struct tok *
tok_add(struct ps *ps, enum tk t, const char *p, size_t n)
{
	struct tok	*nt;
	size_t		 cap;

	if (ps->ntok == ps->captok) {
		cap = ps->captok ? ps->captok * 2 : 32;
		if ((nt = realloc(ps->toks, cap * sizeof(*nt))) == NULL)
			return oom(&ps->rt);
		ps->toks = nt;
		ps->captok = cap;
	}
	nt = &ps->toks[ps->ntok++];
	nt->t = t;
	nt->p = p;
	nt->n = n;
	nt->val = NULL;
	nt->line = ps_line(ps, (size_t)(p - ps->src));
	return nt;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A string literal's value, as Python's unicode-escape decodes it. */
static struct jv *
lex_string(struct ps *ps, const char *s, size_t n, int line)
{
	struct tpl_sb	 sb = { 0 };
	char		 buf[16];
	uint32_t	 c;
	size_t		 i, k, j, want;
	int		 h, m;

	for (i = 0; i < n; i++) {
		if (s[i] != '\\' || i + 1 == n) {
			tpl_sb_add(&sb, s + i, 1);
			continue;
		}
		i++;
		switch (s[i]) {
		case '\n': continue;
		case '\\': tpl_sb_add(&sb, "\\", 1); continue;
		case '\'': tpl_sb_add(&sb, "'", 1); continue;
		case '"': tpl_sb_add(&sb, "\"", 1); continue;
		case 'a': tpl_sb_add(&sb, "\a", 1); continue;
		case 'b': tpl_sb_add(&sb, "\b", 1); continue;
		case 'f': tpl_sb_add(&sb, "\f", 1); continue;
		case 'n': tpl_sb_add(&sb, "\n", 1); continue;
		case 'r': tpl_sb_add(&sb, "\r", 1); continue;
		case 't': tpl_sb_add(&sb, "\t", 1); continue;
		case 'v': tpl_sb_add(&sb, "\v", 1); continue;
		case 'x': want = 2; break;
		case 'u': want = 4; break;
		case 'U': want = 8; break;
		case 'N':
			tpl_sb_release(&sb);
			return fail(&ps->rt, line, "\\N{...} escapes are not "
			    "supported");
		default:
			if (s[i] >= '0' && s[i] <= '7') {
				c = 0;
				for (j = 0; j < 3 && i < n && s[i] >= '0' &&
				    s[i] <= '7'; j++, i++)
					c = c * 8 + (uint32_t)(s[i] - '0');
				i--;
				tpl_sb_utf8(&sb, c);
			} else if ((unsigned char)s[i] >= 0x80) {
				/* backslashreplace, then "\\" decodes. */
				c = tpl_utf8_next(s + i, n - i, &k);
				m = snprintf(buf, sizeof(buf), c < 0x100 ?
				    "\\x%02x" : c < 0x10000 ? "\\u%04x" :
				    "\\U%08x", c);
				tpl_sb_add(&sb, buf, (size_t)m);
				i += k - 1;
			} else {
				tpl_sb_add(&sb, "\\", 1);
				tpl_sb_add(&sb, s + i, 1);
			}
			continue;
		}
		c = 0;
		for (j = 1; j <= want; j++) {
			if (i + j >= n || (h = hexval(s[i + j])) < 0) {
				tpl_sb_release(&sb);
				return fail(&ps->rt, line, "truncated \\%c "
				    "escape in a string", s[i]);
			}
			c = c * 16 + (uint32_t)h;
		}
		if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
			tpl_sb_release(&sb);
			return fail(&ps->rt, line, "\\%c escape outside "
			    "Unicode scalar values in a string", s[i]);
		}
		tpl_sb_utf8(&sb, c);
		i += want;
	}
	if (sb.oom) {
		tpl_sb_release(&sb);
		return oom(&ps->rt);
	}
	{
		struct jv *v = jv_str_sb(&sb);

		return v != NULL ? v : oom(&ps->rt);
	}
}

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int
is_name_char(char c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	    (unsigned char)c >= 0x80 || (!first && is_digit(c));
}

/* Digits with single underscores between them, as Jinja2's regexes
 * allow; returns the length matched (0 when none). */
static size_t
digits_run(const char *s, size_t n, int (*ok)(char))
{
	size_t i = 0;

	if (n == 0 || !ok(s[0]))
		return 0;
	for (i = 1; i < n; i++) {
		if (ok(s[i]))
			continue;
		if (s[i] == '_' && i + 1 < n && ok(s[i + 1]))
			continue;
		break;
	}
	return i;
}

static int
is_dec(char c)
{
	return is_digit(c);
}

static int
is_hex(char c)
{
	return hexval(c) >= 0;
}

static int
is_oct(char c)
{
	return c >= '0' && c <= '7';
}

static int
is_bin(char c)
{
	return c == '0' || c == '1';
}

/* A number token at s: float (Jinja2's float_re) or integer (0x.., 0o..,
 * 0b.., decimal); returns its length or -1. */
static int
lex_number(struct ps *ps, const char *s, size_t n, int after_dot)
{
	struct tok	*t;
	char		 buf[512];
	size_t		 i, k, m, from = 0;
	int		 base = 10, isf = 0, line;
	int64_t		 iv = 0;
	int		 (*ok)(char) = is_dec;
	char		*end;

	line = ps_line(ps, (size_t)(s - ps->src));
	i = digits_run(s, n, is_dec);
	if (!after_dot) {
		m = i;
		if (m < n && s[m] == '.' && (k = digits_run(s + m + 1,
		    n - m - 1, is_dec)) > 0) {
			m += 1 + k;
			isf = 1;
		}
		if (m < n && (s[m] == 'e' || s[m] == 'E')) {
			k = m + 1;
			if (k < n && (s[k] == '+' || s[k] == '-'))
				k++;
			if ((k = digits_run(s + k, n - k, is_dec)) > 0) {
				m = m + 1 + (s[m + 1] == '+' ||
				    s[m + 1] == '-') + k;
				isf = 1;
			}
		}
		if (isf)
			i = m;
	}
	if (!isf && s[0] == '0') {
		if (n > 2 && (s[1] == 'x' || s[1] == 'X'))
			base = 16, ok = is_hex;
		else if (n > 2 && (s[1] == 'o' || s[1] == 'O'))
			base = 8, ok = is_oct;
		else if (n > 2 && (s[1] == 'b' || s[1] == 'B'))
			base = 2, ok = is_bin;
		i = 1;
		if (base != 10) {
			k = 2 + (s[2] == '_');
			if ((m = digits_run(s + k, n - k, ok)) > 0) {
				i = k + m;
				from = k;
			} else
				base = 10;
		} else
			while (i < n && (s[i] == '0' || (s[i] == '_' &&
			    i + 1 < n && s[i + 1] == '0')))
				i++;
	}
	for (k = from, m = 0; k < i && m < sizeof(buf) - 1; k++)
		if (s[k] != '_')
			buf[m++] = s[k];
	buf[m] = '\0';
	if (m >= sizeof(buf) - 1) {
		fail(&ps->rt, line, "number literal too long");
		return -1;
	}
	if ((t = tok_add(ps, isf ? T_FLOAT : T_INT, s, i)) == NULL)
		return -1;
	if (isf)
		t->val = jv_float(strtod(buf, &end));
	else {
		for (k = 0; k < m; k++)
			if (__builtin_mul_overflow(iv, base, &iv) ||
			    __builtin_add_overflow(iv, hexval(buf[k]), &iv)) {
				fail(&ps->rt, line, "integer literal beyond 64 "
				    "bits is not supported");
				return -1;
			}
		t->val = jv_int(iv);
	}
	if (t->val == NULL) {
		oom(&ps->rt);
		return -1;
	}
	return (int)i;
}

/*
 * Tokens of one {{ }} (var 1) or {% %} tag from ps->pos to its end,
 * brackets balanced as Jinja2 does; ends with a T_END token whose n is 1
 * when it was "-%}" / "-}}" (the whitespace after is then skipped).
 */
static int
lex_tag(struct ps *ps, int var)
{
	static const char *const ops[] = { "//", "**", "==", "!=", ">=", "<=",
	    "+", "-", "/", "*", "%", "~", "[", "]", "(", ")", "{", "}", ">",
	    "<", "=", ".", ":", "|", ",", ";" };
	const char	*s = ps->src;
	char		 stack[256];
	size_t		 nst = 0, i, k, q;
	int		 m, line;
	struct tok	*t;

	toks_clear(ps);
	for (;;) {
		ps->pos += ws_len(s + ps->pos, ps->len - ps->pos);
		i = ps->pos;
		line = ps_line(ps, i);
		if (i >= ps->len)
			return fail(&ps->rt, line, "unexpected end of template "
			    "(an unclosed %s)", var ? "{{" : "{%"), -1;
		if (nst == 0) {
			m = 0;
			if (var && ps->len - i >= 3 && !memcmp(s + i, "-}}", 3))
				m = 3;
			else if (var && ps->len - i >= 2 &&
			    !memcmp(s + i, "}}", 2))
				m = 2;
			else if (!var && ps->len - i >= 3 &&
			    (!memcmp(s + i, "-%}", 3) ||
			    !memcmp(s + i, "+%}", 3)))
				m = 3;
			else if (!var && ps->len - i >= 2 &&
			    !memcmp(s + i, "%}", 2))
				m = 2;
			if (m > 0) {
				if (tok_add(ps, T_END, s + i, s[i] == '-') ==
				    NULL)
					return -1;
				ps->pos = i + (size_t)m;
				if (s[i] == '-')
					ps->pos += ws_len(s + ps->pos,
					    ps->len - ps->pos);
				return 0;
			}
		}
		if (is_digit(s[i])) {
			if ((m = lex_number(ps, s + i, ps->len - i,
			    i > 0 && s[i - 1] == '.')) < 0)
				return -1;
			ps->pos += (size_t)m;
			continue;
		}
		if (is_name_char(s[i], 1)) {
			for (k = i + 1; k < ps->len && is_name_char(s[k], 0);)
				k++;
			if (tok_add(ps, T_NAME, s + i, k - i) == NULL)
				return -1;
			ps->pos = k;
			continue;
		}
		if (s[i] == '\'' || s[i] == '"') {
			for (q = i + 1; q < ps->len && s[q] != s[i]; q++)
				if (s[q] == '\\')
					q++;
			if (q >= ps->len)
				return fail(&ps->rt, line, "unterminated "
				    "string"), -1;
			if ((t = tok_add(ps, T_STR, s + i, q + 1 - i)) == NULL)
				return -1;
			if ((t->val = lex_string(ps, s + i + 1, q - i - 1,
			    line)) == NULL)
				return -1;
			ps->pos = q + 1;
			continue;
		}
		for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
			if (!strncmp(s + i, ops[k], strlen(ops[k])))
				break;
		if (k == sizeof(ops) / sizeof(ops[0]))
			return fail(&ps->rt, line, "unexpected char '%c'",
			    s[i]), -1;
		if (ops[k][0] == '(' || ops[k][0] == '[' || ops[k][0] == '{') {
			if (nst == sizeof(stack))
				return limit(&ps->rt, line, "expression depth",
				    sizeof(stack)), -1;
			stack[nst++] = ops[k][0] == '(' ? ')' :
			    ops[k][0] == '[' ? ']' : '}';
		} else if (ops[k][0] == ')' || ops[k][0] == ']' ||
		    ops[k][0] == '}') {
			if (nst == 0 || stack[nst - 1] != ops[k][0])
				return fail(&ps->rt, line, "unexpected '%c'",
				    ops[k][0]), -1;
			nst--;
		}
		if (tok_add(ps, T_OP, s + i, strlen(ops[k])) == NULL)
			return -1;
		ps->pos += strlen(ops[k]);
	}
}

/* ====== Parser: expressions ====== */

static void node_free(struct node *n);

static void
node_free(struct node *n)
{
	size_t i;

	if (n == NULL)
		return;
	free(n->name);
	jv_unref(n->val);
	node_free(n->a);
	node_free(n->b);
	node_free(n->c);
	for (i = 0; i < n->nargs; i++) {
		node_free(n->args[i]);
		if (n->kw != NULL)
			free(n->kw[i]);
	}
	free(n->args);
	free(n->kw);
	free(n->ops);
	free(n);
}

static struct tok *
cur(struct ps *ps)
{
	return &ps->toks[ps->itok];
}

static struct tok *
peek(struct ps *ps, size_t k)
{
	size_t i = ps->itok + k;

	return &ps->toks[i < ps->ntok ? i : ps->ntok - 1];
}

static int
tok_op(const struct tok *t, const char *op)
{
	return t->t == T_OP && t->n == strlen(op) && !memcmp(t->p, op, t->n);
}

static int
tok_name(const struct tok *t, const char *name)
{
	return t->t == T_NAME && t->n == strlen(name) &&
	    !memcmp(t->p, name, t->n);
}

/* A description of t for "unexpected ..." errors. */
static void
tok_desc(const struct tok *t, char *buf, size_t sz)
{
	if (t->t == T_END)
		snprintf(buf, sz, "end of tag");
	else if (t->t == T_EOF)
		snprintf(buf, sz, "end of template");
	else
		snprintf(buf, sz, "'%.*s'", (int)(t->n > 40 ? 40 : t->n), t->p);
}

static void *
unexpected(struct ps *ps)
{
	char d[64];

	tok_desc(cur(ps), d, sizeof(d));
	return fail(&ps->rt, cur(ps)->line, "syntax error: unexpected %s", d);
}

static int
expect_op(struct ps *ps, const char *op)
{
	char d[64];

	if (tok_op(cur(ps), op)) {
		ps->itok++;
		return 0;
	}
	tok_desc(cur(ps), d, sizeof(d));
	fail(&ps->rt, cur(ps)->line, "syntax error: expected '%s', got %s",
	    op, d);
	return -1;
}

static struct node *
mknode(struct ps *ps, enum nk kind, int line)
{
	struct node *n;

	if ((n = calloc(1, sizeof(*n))) == NULL)
		return oom(&ps->rt);
	n->kind = kind;
	n->line = line;
	n->depth = 1;
	return n;
}

/* Sets n's depth from its children; NULL (n freed) past the limit. */
static struct node *
seal(struct ps *ps, struct node *n)
{
	size_t	d = 0, i;

	if (n == NULL)
		return NULL;
	if (n->a && n->a->depth > d)
		d = n->a->depth;
	if (n->b && n->b->depth > d)
		d = n->b->depth;
	if (n->c && n->c->depth > d)
		d = n->c->depth;
	for (i = 0; i < n->nargs; i++)
		if (n->args[i] && n->args[i]->depth > d)
			d = n->args[i]->depth;
	n->depth = d + 1;
	if (n->depth > ps->lim->max_expr_depth) {
		limit(&ps->rt, n->line, "expression depth",
		    ps->lim->max_expr_depth);
		node_free(n);
		return NULL;
	}
	return n;
}

/* Appends arg (and its keyword, NULL for positional) to n. */
static int
add_arg(struct ps *ps, struct node *n, struct node *arg, char *kw)
{
	struct node	**a;
	char		**k;

	a = realloc(n->args, (n->nargs + 1) * sizeof(*a));
	if (a != NULL)
		n->args = a;
	k = a ? realloc(n->kw, (n->nargs + 1) * sizeof(*k)) : NULL;
	if (k != NULL)
		n->kw = k;
	if (a == NULL || k == NULL) {
		node_free(arg);
		free(kw);
		oom(&ps->rt);
		return -1;
	}
	n->args[n->nargs] = arg;
	n->kw[n->nargs++] = kw;
	return 0;
}

static struct node *parse_expr(struct ps *ps, int with_cond);
static struct node *parse_unary(struct ps *ps, int with_filter);
static struct node *parse_or(struct ps *ps);

static int
enter(struct ps *ps)
{
	if (++ps->edepth > ps->lim->max_expr_depth) {
		limit(&ps->rt, cur(ps)->line, "expression depth",
		    ps->lim->max_expr_depth);
		return -1;
	}
	return 0;
}

static char *
tok_dup(struct ps *ps, const struct tok *t)
{
	char *s;

	if ((s = strndup(t->p, t->n)) == NULL)
		oom(&ps->rt);
	return s;
}

/*
 * Call arguments after "(": positional and name=value; *args and
 * **kwargs are refused. Fills n's args; consumes the ")".
 */
static int
parse_args(struct ps *ps, struct node *n)
{
	struct node	*e;
	char		*kw;
	int		 seen_kw = 0;

	while (!tok_op(cur(ps), ")")) {
		if (n->nargs > 0 && expect_op(ps, ",") != 0)
			return -1;
		if (tok_op(cur(ps), ")"))
			break;
		if (tok_op(cur(ps), "*") || tok_op(cur(ps), "**")) {
			fail(&ps->rt, cur(ps)->line, "*args and **kwargs in "
			    "calls are not supported");
			return -1;
		}
		kw = NULL;
		if (cur(ps)->t == T_NAME && tok_op(peek(ps, 1), "=")) {
			if ((kw = tok_dup(ps, cur(ps))) == NULL)
				return -1;
			ps->itok += 2;
			seen_kw = 1;
		} else if (seen_kw) {
			fail(&ps->rt, cur(ps)->line, "syntax error: positional "
			    "argument after a keyword argument");
			return -1;
		}
		if ((e = parse_expr(ps, 1)) == NULL) {
			free(kw);
			return -1;
		}
		if (add_arg(ps, n, e, kw) != 0)
			return -1;
	}
	ps->itok++;
	return 0;
}

static const struct jfunc *find_filter(const char *name);
static const struct jfunc *find_test(const char *name);
static const char *in_list(const char *const *l, const char *name);

/* "|name(args)" after subject a (may be NULL for filter blocks). */
static struct node *
parse_filter(struct ps *ps, struct node *a)
{
	struct node	*n;
	int		 line = cur(ps)->line;

	if ((n = mknode(ps, N_FILTER, line)) == NULL) {
		node_free(a);
		return NULL;
	}
	n->a = a;
	if (cur(ps)->t != T_NAME) {
		node_free(n);
		return unexpected(ps);
	}
	if ((n->name = tok_dup(ps, cur(ps))) == NULL) {
		node_free(n);
		return NULL;
	}
	ps->itok++;
	while (tok_op(cur(ps), ".") && peek(ps, 1)->t == T_NAME) {
		node_free(n);
		return fail(&ps->rt, line, "no filter named '%.*s.%.*s'",
		    (int)ps->toks[ps->itok - 1].n, ps->toks[ps->itok - 1].p,
		    (int)peek(ps, 1)->n, peek(ps, 1)->p);
	}
	if ((n->fn = find_filter(n->name)) == NULL) {
		if (in_list(unsupported_filters, n->name) != NULL)
			fail(&ps->rt, line, "the filter '%s' is not supported",
			    n->name);
		else
			fail(&ps->rt, line, "no filter named '%s'", n->name);
		node_free(n);
		return NULL;
	}
	if (tok_op(cur(ps), "(")) {
		ps->itok++;
		if (parse_args(ps, n) != 0) {
			node_free(n);
			return NULL;
		}
	}
	return seal(ps, n);
}

/* "is [not] name [arg | (args)]" after subject a. */
static struct node *
parse_test(struct ps *ps, struct node *a)
{
	struct node	*n, *arg;
	struct tok	*t;
	int		 line = cur(ps)->line;

	if ((n = mknode(ps, N_TEST, line)) == NULL) {
		node_free(a);
		return NULL;
	}
	n->a = a;
	ps->itok++;			/* is */
	if (tok_name(cur(ps), "not")) {
		n->op = 1;
		ps->itok++;
	}
	if (cur(ps)->t != T_NAME) {
		node_free(n);
		return unexpected(ps);
	}
	if ((n->name = tok_dup(ps, cur(ps))) == NULL) {
		node_free(n);
		return NULL;
	}
	ps->itok++;
	if ((n->fn = find_test(n->name)) == NULL) {
		fail(&ps->rt, line, "no test named '%s'", n->name);
		node_free(n);
		return NULL;
	}
	t = cur(ps);
	if (tok_op(t, "(")) {
		ps->itok++;
		if (parse_args(ps, n) != 0) {
			node_free(n);
			return NULL;
		}
	} else if ((t->t == T_NAME || t->t == T_STR || t->t == T_INT ||
	    t->t == T_FLOAT || tok_op(t, "[") || tok_op(t, "{")) &&
	    !tok_name(t, "else") && !tok_name(t, "or") &&
	    !tok_name(t, "and")) {
		if (tok_name(t, "is")) {
			node_free(n);
			return fail(&ps->rt, line, "syntax error: "
			    "you cannot chain multiple tests with is");
		}
		if ((arg = parse_unary(ps, 0)) == NULL ||
		    add_arg(ps, n, arg, NULL) != 0) {
			node_free(n);
			return NULL;
		}
	}
	return seal(ps, n);
}

/* The part after "[": an index or a slice; consumes "]". */
static struct node *
parse_subscript(struct ps *ps, struct node *obj)
{
	struct node	*n, *parts[3] = { NULL, NULL, NULL };
	int		 line = cur(ps)->line, slice = 0, k = 0;
	size_t		 i;

	for (;;) {
		if (tok_op(cur(ps), ":")) {
			if (++k > 2)
				goto bad;
			slice = 1;
			ps->itok++;
			continue;
		}
		if (tok_op(cur(ps), "]"))
			break;
		if (parts[k] != NULL)
			goto bad;
		if ((parts[k] = parse_expr(ps, 1)) == NULL)
			goto err;
	}
	ps->itok++;
	if (!slice && parts[0] == NULL)
		goto bad;
	if ((n = mknode(ps, slice ? N_SLICE : N_ITEM, line)) == NULL)
		goto err;
	n->a = obj;
	if (!slice)
		n->b = parts[0];
	else {
		if ((n->args = calloc(3, sizeof(*n->args))) == NULL) {
			n->a = NULL;
			node_free(n);
			oom(&ps->rt);
			goto err;
		}
		n->nargs = 3;
		for (i = 0; i < 3; i++)
			n->args[i] = parts[i];
	}
	return seal(ps, n);
bad:
	unexpected(ps);
err:
	for (i = 0; i < 3; i++)
		node_free(parts[i]);
	node_free(obj);
	return NULL;
}

static struct node *
parse_postfix(struct ps *ps, struct node *n)
{
	struct node	*m;
	struct tok	*t;

	while (n != NULL) {
		t = cur(ps);
		if (tok_op(t, ".")) {
			t = peek(ps, 1);
			if (t->t == T_NAME) {
				if ((m = mknode(ps, N_ATTR, t->line)) == NULL ||
				    (m->name = tok_dup(ps, t)) == NULL) {
					node_free(m);
					node_free(n);
					return NULL;
				}
				m->a = n;
				ps->itok += 2;
				n = seal(ps, m);
			} else if (t->t == T_INT) {
				if ((m = mknode(ps, N_ITEM, t->line)) == NULL ||
				    (m->b = mknode(ps, N_CONST, t->line)) ==
				    NULL) {
					node_free(m);
					node_free(n);
					return NULL;
				}
				m->b->val = jv_ref(t->val);
				m->a = n;
				ps->itok += 2;
				n = seal(ps, m);
			} else {
				node_free(n);
				ps->itok++;
				return unexpected(ps);
			}
		} else if (tok_op(t, "[")) {
			ps->itok++;
			n = parse_subscript(ps, n);
		} else if (tok_op(t, "(")) {
			if ((m = mknode(ps, N_CALL, t->line)) == NULL) {
				node_free(n);
				return NULL;
			}
			m->a = n;
			ps->itok++;
			if (parse_args(ps, m) != 0) {
				node_free(m);
				return NULL;
			}
			n = seal(ps, m);
		} else
			break;
	}
	return n;
}

static struct node *
parse_filter_expr(struct ps *ps, struct node *n)
{
	struct node *m;

	while (n != NULL) {
		if (tok_op(cur(ps), "|")) {
			ps->itok++;
			n = parse_filter(ps, n);
		} else if (tok_name(cur(ps), "is"))
			n = parse_test(ps, n);
		else if (tok_op(cur(ps), "(")) {
			if ((m = mknode(ps, N_CALL, cur(ps)->line)) == NULL) {
				node_free(n);
				return NULL;
			}
			m->a = n;
			ps->itok++;
			if (parse_args(ps, m) != 0) {
				node_free(m);
				return NULL;
			}
			n = seal(ps, m);
		} else
			break;
	}
	return n;
}

/* Items of a list, tuple or dict display up to close; consumes it. */
static struct node *
parse_items(struct ps *ps, struct node *n, const char *close, int dict)
{
	struct node *e;

	while (!tok_op(cur(ps), close)) {
		if (n->nargs > 0 && expect_op(ps, ",") != 0)
			goto err;
		if (tok_op(cur(ps), close))
			break;
		if ((e = parse_expr(ps, 1)) == NULL ||
		    add_arg(ps, n, e, NULL) != 0)
			goto err;
		if (dict) {
			if (expect_op(ps, ":") != 0 ||
			    (e = parse_expr(ps, 1)) == NULL ||
			    add_arg(ps, n, e, NULL) != 0)
				goto err;
		}
	}
	ps->itok++;
	return seal(ps, n);
err:
	node_free(n);
	return NULL;
}

static struct node *
parse_primary(struct ps *ps)
{
	struct tok	*t = cur(ps);
	struct node	*n = NULL;
	struct tpl_sb	 sb = { 0 };

	if (t->t == T_NAME) {
		if ((n = mknode(ps, N_CONST, t->line)) == NULL)
			return NULL;
		if (tok_name(t, "true") || tok_name(t, "True"))
			n->val = &jv_true_s;
		else if (tok_name(t, "false") || tok_name(t, "False"))
			n->val = &jv_false_s;
		else if (tok_name(t, "none") || tok_name(t, "None"))
			n->val = &jv_none_s;
		else {
			n->kind = N_NAME;
			if ((n->name = tok_dup(ps, t)) == NULL) {
				node_free(n);
				return NULL;
			}
		}
		ps->itok++;
		return n;
	}
	if (t->t == T_STR) {
		/* Adjacent string literals join, as in Python. */
		for (; cur(ps)->t == T_STR; ps->itok++)
			tpl_sb_add(&sb, cur(ps)->val->u.s.p,
			    cur(ps)->val->u.s.n);
		if (sb.oom || (n = mknode(ps, N_CONST, t->line)) == NULL) {
			tpl_sb_release(&sb);
			return sb.oom ? oom(&ps->rt) : NULL;
		}
		if ((n->val = jv_str_sb(&sb)) == NULL) {
			node_free(n);
			return oom(&ps->rt);
		}
		return n;
	}
	if (t->t == T_INT || t->t == T_FLOAT) {
		if ((n = mknode(ps, N_CONST, t->line)) == NULL)
			return NULL;
		n->val = jv_ref(t->val);
		ps->itok++;
		return n;
	}
	if (tok_op(t, "(")) {
		ps->itok++;
		if ((n = mknode(ps, N_TUPLE, t->line)) == NULL)
			return NULL;
		while (!tok_op(cur(ps), ")")) {
			struct node *e;

			if (n->nargs > 0 && expect_op(ps, ",") != 0)
				goto err;
			if (tok_op(cur(ps), ")"))
				break;
			if ((e = parse_expr(ps, 1)) == NULL ||
			    add_arg(ps, n, e, NULL) != 0)
				goto err;
			if (n->nargs == 1 && tok_op(cur(ps), ")")) {
				/* (x) is x itself. */
				ps->itok++;
				e = n->args[0];
				n->nargs = 0;
				node_free(n);
				return e;
			}
		}
		ps->itok++;
		return seal(ps, n);
	}
	if (tok_op(t, "[")) {
		ps->itok++;
		if ((n = mknode(ps, N_LIST, t->line)) == NULL)
			return NULL;
		return parse_items(ps, n, "]", 0);
	}
	if (tok_op(t, "{")) {
		ps->itok++;
		if ((n = mknode(ps, N_DICT, t->line)) == NULL)
			return NULL;
		return parse_items(ps, n, "}", 1);
	}
	return unexpected(ps);
err:
	node_free(n);
	return NULL;
}

static struct node *
parse_unary(struct ps *ps, int with_filter)
{
	struct node	*n, *m;
	int		 line = cur(ps)->line;

	if (enter(ps) != 0)
		return NULL;
	if (tok_op(cur(ps), "-") || tok_op(cur(ps), "+")) {
		if ((m = mknode(ps, tok_op(cur(ps), "-") ? N_NEG : N_POS,
		    line)) == NULL)
			return NULL;
		ps->itok++;
		if ((m->a = parse_unary(ps, 0)) == NULL) {
			node_free(m);
			return NULL;
		}
		n = seal(ps, m);
	} else
		n = parse_primary(ps);
	n = parse_postfix(ps, n);
	if (with_filter)
		n = parse_filter_expr(ps, n);
	ps->edepth--;
	return n;
}

/* Left-associative binary levels: which operators, and the next level. */
static struct node *
binary(struct ps *ps, struct node *(*next)(struct ps *),
    const char *const *ops, const int *codes, enum nk kind)
{
	struct node	*n, *m;
	size_t		 i;

	if ((n = next(ps)) == NULL)
		return NULL;
	for (;;) {
		for (i = 0; ops[i] != NULL; i++)
			if (tok_op(cur(ps), ops[i]))
				break;
		if (ops[i] == NULL)
			return n;
		if ((m = mknode(ps, kind, cur(ps)->line)) == NULL) {
			node_free(n);
			return NULL;
		}
		ps->itok++;
		m->op = codes[i];
		m->a = n;
		if ((m->b = next(ps)) == NULL) {
			node_free(m);
			return NULL;
		}
		if ((n = seal(ps, m)) == NULL)
			return NULL;
	}
}

static struct node *
parse_unary_f(struct ps *ps)
{
	return parse_unary(ps, 1);
}

static struct node *
parse_pow(struct ps *ps)
{
	static const char *const ops[] = { "**", NULL };
	static const int codes[] = { OP_POW };

	return binary(ps, parse_unary_f, ops, codes, N_BIN);
}

static struct node *
parse_math2(struct ps *ps)
{
	static const char *const ops[] = { "*", "/", "//", "%", NULL };
	static const int codes[] = { OP_MUL, OP_DIV, OP_FDIV, OP_MOD };

	return binary(ps, parse_pow, ops, codes, N_BIN);
}

static struct node *
parse_concat(struct ps *ps)
{
	struct node *n, *m = NULL, *e;

	if ((n = parse_math2(ps)) == NULL)
		return NULL;
	if (!tok_op(cur(ps), "~"))
		return n;
	if ((m = mknode(ps, N_CONCAT, cur(ps)->line)) == NULL ||
	    add_arg(ps, m, n, NULL) != 0) {
		if (m == NULL)
			node_free(n);
		node_free(m);
		return NULL;
	}
	while (tok_op(cur(ps), "~")) {
		ps->itok++;
		if ((e = parse_math2(ps)) == NULL ||
		    add_arg(ps, m, e, NULL) != 0) {
			node_free(m);
			return NULL;
		}
	}
	return seal(ps, m);
}

static struct node *
parse_math1(struct ps *ps)
{
	static const char *const ops[] = { "+", "-", NULL };
	static const int codes[] = { OP_ADD, OP_SUB };

	return binary(ps, parse_concat, ops, codes, N_BIN);
}

static struct node *
parse_compare(struct ps *ps)
{
	static const char *const ops[] = { "==", "!=", "<", "<=", ">", ">=",
	    NULL };
	struct node	*n, *m = NULL, *e;
	int		 code, *o;
	size_t		 i;

	if ((n = parse_math1(ps)) == NULL)
		return NULL;
	for (;;) {
		code = -1;
		for (i = 0; ops[i] != NULL && code < 0; i++)
			if (tok_op(cur(ps), ops[i])) {
				code = (int)i;
				ps->itok++;
			}
		if (code < 0 && tok_name(cur(ps), "in")) {
			code = CMP_IN;
			ps->itok++;
		} else if (code < 0 && tok_name(cur(ps), "not") &&
		    tok_name(peek(ps, 1), "in")) {
			code = CMP_NOTIN;
			ps->itok += 2;
		}
		if (code < 0)
			break;
		if (m == NULL) {
			if ((m = mknode(ps, N_CMP, cur(ps)->line)) == NULL ||
			    add_arg(ps, m, n, NULL) != 0) {
				if (m == NULL)
					node_free(n);
				node_free(m);
				return NULL;
			}
		}
		if ((o = realloc(m->ops, m->nargs * sizeof(*o))) == NULL) {
			node_free(m);
			return oom(&ps->rt);
		}
		m->ops = o;
		m->ops[m->nargs - 1] = code;
		if ((e = parse_math1(ps)) == NULL ||
		    add_arg(ps, m, e, NULL) != 0) {
			node_free(m);
			return NULL;
		}
	}
	return m != NULL ? seal(ps, m) : n;
}

static struct node *
parse_not(struct ps *ps)
{
	struct node *m;

	if (!tok_name(cur(ps), "not"))
		return parse_compare(ps);
	if (enter(ps) != 0 ||
	    (m = mknode(ps, N_NOT, cur(ps)->line)) == NULL)
		return NULL;
	ps->itok++;
	if ((m->a = parse_not(ps)) == NULL) {
		node_free(m);
		return NULL;
	}
	ps->edepth--;
	return seal(ps, m);
}

/* "a and b", "a or b": left-associative, the keyword between levels. */
static struct node *
logical(struct ps *ps, struct node *(*next)(struct ps *), const char *word,
    enum nk kind)
{
	struct node *n, *m;

	if ((n = next(ps)) == NULL)
		return NULL;
	while (tok_name(cur(ps), word)) {
		if ((m = mknode(ps, kind, cur(ps)->line)) == NULL) {
			node_free(n);
			return NULL;
		}
		ps->itok++;
		m->a = n;
		if ((m->b = next(ps)) == NULL) {
			node_free(m);
			return NULL;
		}
		if ((n = seal(ps, m)) == NULL)
			return NULL;
	}
	return n;
}

static struct node *
parse_and(struct ps *ps)
{
	return logical(ps, parse_not, "and", N_AND);
}

static struct node *
parse_or(struct ps *ps)
{
	return logical(ps, parse_and, "or", N_OR);
}

static struct node *
parse_expr(struct ps *ps, int with_cond)
{
	struct node *n, *m;

	if (enter(ps) != 0)
		return NULL;
	n = parse_or(ps);
	while (n != NULL && with_cond && tok_name(cur(ps), "if")) {
		if ((m = mknode(ps, N_COND, cur(ps)->line)) == NULL) {
			node_free(n);
			return NULL;
		}
		ps->itok++;
		m->a = n;
		if ((m->b = parse_or(ps)) == NULL) {
			node_free(m);
			return NULL;
		}
		if (tok_name(cur(ps), "else")) {
			ps->itok++;
			if ((m->c = parse_expr(ps, 1)) == NULL) {
				node_free(m);
				return NULL;
			}
		}
		n = seal(ps, m);
	}
	ps->edepth--;
	return n;
}

/* An expression, or a tuple when commas follow (a, b); with_cond 0 for
 * the iterable of a for loop, whose "if" filters. */
static struct node *
parse_tuple(struct ps *ps, int with_cond)
{
	struct node *n, *m = NULL;

	if ((n = parse_expr(ps, with_cond)) == NULL)
		return NULL;
	if (!tok_op(cur(ps), ","))
		return n;
	if ((m = mknode(ps, N_TUPLE, n->line)) == NULL ||
	    add_arg(ps, m, n, NULL) != 0) {
		if (m == NULL)
			node_free(n);
		node_free(m);
		return NULL;
	}
	while (tok_op(cur(ps), ",")) {
		ps->itok++;
		if (cur(ps)->t == T_END || tok_name(cur(ps), "if") ||
		    tok_name(cur(ps), "recursive"))
			break;
		if ((n = parse_expr(ps, with_cond)) == NULL ||
		    add_arg(ps, m, n, NULL) != 0) {
			node_free(m);
			return NULL;
		}
	}
	return seal(ps, m);
}

/* ====== Parser: statements ====== */

static void block_free(struct block *b);

static void
stmt_free(struct stmt *st)
{
	size_t i;

	if (st == NULL)
		return;
	free(st->text);
	node_free(st->e);
	node_free(st->cond);
	node_free(st->filt);
	for (i = 0; i < st->ntg; i++)
		free(st->tg[i]);
	free(st->tg);
	free(st->attr);
	block_free(&st->body);
	block_free(&st->orelse);
	free(st);
}

static void
block_free(struct block *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		stmt_free(b->v[i]);
	free(b->v);
	memset(b, 0, sizeof(*b));
}

static struct stmt *
stmt_add(struct ps *ps, struct block *b, enum sk kind, int line)
{
	struct stmt	**v, *st;
	size_t		  cap;

	if (b->n == b->cap) {
		cap = b->cap ? b->cap * 2 : 8;
		if ((v = realloc(b->v, cap * sizeof(*v))) == NULL)
			return oom(&ps->rt);
		b->v = v;
		b->cap = cap;
	}
	if ((st = calloc(1, sizeof(*st))) == NULL)
		return oom(&ps->rt);
	st->kind = kind;
	st->line = line;
	b->v[b->n++] = st;
	return st;
}

static int
text_add(struct ps *ps, struct block *b, const char *s, size_t n, int line)
{
	struct stmt *st;

	if (n == 0)
		return 0;
	if ((st = stmt_add(ps, b, S_TEXT, line)) == NULL)
		return -1;
	if ((st->text = malloc(n + 1)) == NULL) {
		oom(&ps->rt);
		return -1;
	}
	memcpy(st->text, s, n);
	st->text[n] = '\0';
	st->len = n;
	return 0;
}

static int
expect_end(struct ps *ps)
{
	char d[64];

	if (cur(ps)->t == T_END)
		return 0;
	tok_desc(cur(ps), d, sizeof(d));
	fail(&ps->rt, cur(ps)->line, "syntax error: expected end of tag, "
	    "got %s", d);
	return -1;
}

/* Assignment targets: a name, or names separated by commas (optionally
 * in parentheses). */
static int
parse_targets(struct ps *ps, struct stmt *st)
{
	char	**tg;
	int	  paren = 0;

	if (tok_op(cur(ps), "(")) {
		paren = 1;
		st->tuple = 1;
		ps->itok++;
	}
	for (;;) {
		if (cur(ps)->t != T_NAME) {
			unexpected(ps);
			return -1;
		}
		if ((tg = realloc(st->tg, (st->ntg + 1) * sizeof(*tg))) ==
		    NULL) {
			oom(&ps->rt);
			return -1;
		}
		st->tg = tg;
		if ((st->tg[st->ntg] = tok_dup(ps, cur(ps))) == NULL)
			return -1;
		st->ntg++;
		ps->itok++;
		if (!tok_op(cur(ps), ","))
			break;
		st->tuple = 1;
		ps->itok++;
		if (tok_op(cur(ps), ")") || tok_name(cur(ps), "in") ||
		    tok_op(cur(ps), "="))
			break;
	}
	if (paren && expect_op(ps, ")") != 0)
		return -1;
	return 0;
}

static int parse_body(struct ps *ps, struct block *b,
    const char *const *ends, size_t *which);

/* Enters a block; the nesting depth limit. */
static int
nest(struct ps *ps)
{
	if (++ps->depth > ps->lim->max_depth) {
		limit(&ps->rt, cur(ps)->line, "nesting depth",
		    ps->lim->max_depth);
		return -1;
	}
	return 0;
}

static int
parse_if(struct ps *ps, struct block *b, int line)
{
	static const char *const ends[] = { "elif", "else", "endif", NULL };
	struct stmt	*st;
	size_t		 which;

	if (nest(ps) != 0 || (st = stmt_add(ps, b, S_IF, line)) == NULL ||
	    (st->e = parse_tuple(ps, 0)) == NULL || expect_end(ps) != 0 ||
	    parse_body(ps, &st->body, ends, &which) != 0)
		return -1;
	for (;;) {
		if (which == 0) {		/* elif: a nested if */
			line = cur(ps)->line;
			if ((st = stmt_add(ps, &st->orelse, S_IF, line)) ==
			    NULL || (st->e = parse_tuple(ps, 0)) == NULL ||
			    expect_end(ps) != 0 ||
			    parse_body(ps, &st->body, ends, &which) != 0)
				return -1;
			continue;
		}
		if (which == 1) {
			if (expect_end(ps) != 0 ||
			    parse_body(ps, &st->orelse, ends + 2, &which) != 0)
				return -1;
		}
		break;
	}
	ps->depth--;
	return expect_end(ps);
}

static int
parse_for(struct ps *ps, struct block *b, int line)
{
	static const char *const ends[] = { "else", "endfor", NULL };
	struct stmt	*st;
	size_t		 which;

	if (nest(ps) != 0 || (st = stmt_add(ps, b, S_FOR, line)) == NULL ||
	    parse_targets(ps, st) != 0)
		return -1;
	if (!tok_name(cur(ps), "in")) {
		unexpected(ps);
		return -1;
	}
	ps->itok++;
	if ((st->e = parse_tuple(ps, 0)) == NULL)
		return -1;
	if (tok_name(cur(ps), "if")) {
		ps->itok++;
		if ((st->cond = parse_expr(ps, 1)) == NULL)
			return -1;
	}
	if (tok_name(cur(ps), "recursive")) {
		fail(&ps->rt, line, "recursive for loops are not supported");
		return -1;
	}
	if (expect_end(ps) != 0 || parse_body(ps, &st->body, ends, &which))
		return -1;
	if (which == 0 && (expect_end(ps) != 0 ||
	    parse_body(ps, &st->orelse, ends + 1, &which) != 0))
		return -1;
	ps->depth--;
	return expect_end(ps);
}

/* A filter chain with no subject: "upper|replace('a', 'b')". */
static struct node *
parse_chain(struct ps *ps)
{
	struct node *n;

	n = parse_filter(ps, NULL);
	while (n != NULL && tok_op(cur(ps), "|")) {
		ps->itok++;
		n = parse_filter(ps, n);
	}
	return n;
}

static int
parse_set(struct ps *ps, struct block *b, int line)
{
	static const char *const ends[] = { "endset", NULL };
	struct stmt	*st;
	size_t		 which;

	if ((st = stmt_add(ps, b, S_SET, line)) == NULL)
		return -1;
	if (cur(ps)->t == T_NAME && tok_op(peek(ps, 1), ".") &&
	    peek(ps, 2)->t == T_NAME) {
		if (parse_targets(ps, st) != 0)
			return -1;
		ps->itok++;
		if ((st->attr = tok_dup(ps, cur(ps))) == NULL)
			return -1;
		ps->itok++;
	} else if (parse_targets(ps, st) != 0)
		return -1;
	if (tok_op(cur(ps), "=")) {
		ps->itok++;
		if ((st->e = parse_tuple(ps, 1)) == NULL)
			return -1;
		return expect_end(ps);
	}
	if (st->tuple || st->attr != NULL) {
		unexpected(ps);
		return -1;
	}
	st->kind = S_SETBLOCK;
	if (tok_op(cur(ps), "|")) {
		ps->itok++;
		if ((st->filt = parse_chain(ps)) == NULL)
			return -1;
	}
	if (expect_end(ps) != 0 || nest(ps) != 0 ||
	    parse_body(ps, &st->body, ends, &which) != 0)
		return -1;
	ps->depth--;
	return expect_end(ps);
}

static int
parse_filter_block(struct ps *ps, struct block *b, int line)
{
	static const char *const ends[] = { "endfilter", NULL };
	struct stmt	*st;
	size_t		 which;

	if ((st = stmt_add(ps, b, S_FILTER, line)) == NULL ||
	    (st->filt = parse_chain(ps)) == NULL || expect_end(ps) != 0 ||
	    nest(ps) != 0 || parse_body(ps, &st->body, ends, &which) != 0)
		return -1;
	ps->depth--;
	return expect_end(ps);
}

/*
 * The tag just lexed: a statement added to b, or (returning 1 with *which
 * set) one of the end tags the enclosing block waits for, with the
 * tokens after its name left to read.
 */
static int
parse_tag(struct ps *ps, struct block *b, const char *const *ends,
    size_t *which)
{
	static const char *const unsupported[] = { "macro", "call", "include",
	    "import", "from", "extends", "block", "with", "autoescape",
	    "trans", "do", "break", "continue", "endmacro", "endcall",
	    "endblock", "endwith", "endautoescape", NULL };
	struct tok	*t = cur(ps);
	size_t		 i;
	char		 d[64];

	if (t->t != T_NAME) {
		tok_desc(t, d, sizeof(d));
		fail(&ps->rt, t->line, "syntax error: expected a tag name, "
		    "got %s", d);
		return -1;
	}
	for (i = 0; ends != NULL && ends[i] != NULL; i++)
		if (tok_name(t, ends[i])) {
			ps->itok++;
			*which = i;
			return 1;
		}
	ps->itok++;
	if (tok_name(t, "if"))
		return parse_if(ps, b, t->line);
	if (tok_name(t, "for"))
		return parse_for(ps, b, t->line);
	if (tok_name(t, "set"))
		return parse_set(ps, b, t->line);
	if (tok_name(t, "filter"))
		return parse_filter_block(ps, b, t->line);
	for (i = 0; unsupported[i] != NULL; i++)
		if (tok_name(t, unsupported[i])) {
			fail(&ps->rt, t->line, "the '%s' tag is not supported "
			    "(macros, call blocks, include/import/extends, "
			    "blocks, with and loop controls are outside the "
			    "subset)", unsupported[i]);
			return -1;
		}
	fail(&ps->rt, t->line, "unknown tag '%.*s'",
	    (int)(t->n > 40 ? 40 : t->n), t->p);
	return -1;
}

/* Matches "{%[-+]? \s* word \s*" at s; returns the length or 0. */
static size_t
raw_tag(const char *s, size_t n, const char *word, int *minus)
{
	size_t	i = 2, w = strlen(word);

	if (n < 2 || s[0] != '{' || s[1] != '%')
		return 0;
	*minus = 0;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		*minus = s[i++] == '-';
	i += ws_len(s + i, n - i);
	if (n - i < w || memcmp(s + i, word, w) != 0)
		return 0;
	i += w;
	return i + ws_len(s + i, n - i);
}

/* {% raw %} at pos (already matched, len m): its text up to endraw. */
static int
parse_raw(struct ps *ps, struct block *b, size_t pos, size_t m)
{
	const char	*s = ps->src;
	size_t		 i = pos + m, j, k, end;
	int		 minus, line = ps_line(ps, pos), endline;

	if (s[i] == '-') {
		i += 3;
		i += ws_len(s + i, ps->len - i);
	} else
		i += 2;
	for (j = i; j + 1 < ps->len; j++) {
		if (s[j] != '{' || s[j + 1] != '%')
			continue;
		if ((k = raw_tag(s + j, ps->len - j, "endraw", &minus)) == 0)
			continue;
		k += j;
		if (ps->len - k >= 3 && (!memcmp(s + k, "-%}", 3) ||
		    !memcmp(s + k, "+%}", 3)))
			end = k + 3;
		else if (ps->len - k >= 2 && !memcmp(s + k, "%}", 2))
			end = k + 2;
		else
			continue;
		endline = ps_line(ps, j);
		(void)endline;
		if (text_add(ps, b, s + i, minus ? rstrip_len(s + i, j - i) :
		    j - i, line) != 0)
			return -1;
		if (s[k] == '-')
			end += ws_len(s + end, ps->len - end);
		ps->pos = end;
		return 0;
	}
	fail(&ps->rt, line, "missing end of raw directive");
	return -1;
}

static int
parse_body(struct ps *ps, struct block *b, const char *const *ends,
    size_t *which)
{
	const char	*s = ps->src;
	size_t		 start, idx, dend, m;
	int		 strip, minus, rc, line;
	char		 kind;
	struct stmt	*st;
	const char	*c;

	for (;;) {
		start = ps->pos;
		for (idx = start; idx + 1 < ps->len; idx++)
			if (s[idx] == '{' && (s[idx + 1] == '{' ||
			    s[idx + 1] == '%' || s[idx + 1] == '#'))
				break;
		if (idx + 1 >= ps->len)
			idx = ps->len;
		kind = idx < ps->len ? s[idx + 1] : 0;
		strip = idx + 2 < ps->len && s[idx + 2] == '-';
		dend = strip ? start + rstrip_len(s + start, idx - start) : idx;
		line = ps_line(ps, start);
		if (text_add(ps, b, s + start, dend - start, line) != 0)
			return -1;
		if (idx == ps->len) {
			ps->pos = idx;
			if (ends != NULL) {
				for (m = 0; ends[m + 1] != NULL; m++)
					;
				fail(&ps->rt, ps_line(ps, idx), "unexpected "
				    "end of template: expected '{%% %s %%}'",
				    ends[m]);
				return -1;
			}
			return 0;
		}
		line = ps_line(ps, idx);
		if (kind == '%' && (m = raw_tag(s + idx, ps->len - idx, "raw",
		    &minus)) > 0 && ((ps->len - idx - m >= 3 &&
		    !memcmp(s + idx + m, "-%}", 3)) || (ps->len - idx - m >=
		    2 && !memcmp(s + idx + m, "%}", 2)))) {
			if (parse_raw(ps, b, idx, m) != 0)
				return -1;
			continue;
		}
		m = idx + 2;
		if (m < ps->len && (s[m] == '-' || s[m] == '+'))
			m++;
		if (kind == '#') {
			for (c = s + m; c + 1 < s + ps->len; c++)
				if (c[0] == '#' && c[1] == '}')
					break;
			if (c + 1 >= s + ps->len) {
				fail(&ps->rt, line, "missing end of comment "
				    "tag");
				return -1;
			}
			ps->pos = (size_t)(c - s) + 2;
			if (c > s + m && c[-1] == '-')
				ps->pos += ws_len(s + ps->pos,
				    ps->len - ps->pos);
			continue;
		}
		ps->pos = m;
		if (lex_tag(ps, kind == '{') != 0)
			return -1;
		if (kind == '{') {
			if ((st = stmt_add(ps, b, S_PRINT, line)) == NULL ||
			    (st->e = parse_tuple(ps, 1)) == NULL ||
			    expect_end(ps) != 0)
				return -1;
			continue;
		}
		if ((rc = parse_tag(ps, b, ends, which)) != 0)
			return rc > 0 ? 0 : -1;
	}
}

/* ====== Evaluation: names, attributes, items ====== */

static struct jv *eval(struct rt *rt, const struct node *n);

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

static const char *
in_list(const char *const *l, const char *name)
{
	for (; *l != NULL; l++)
		if (strcmp(*l, name) == 0)
			return *l;
	return NULL;
}

static struct jv *
method(struct rt *rt, struct jv *self, const char *name)
{
	struct jv *m;

	if ((m = jv_new(JT_METHOD)) == NULL)
		return oom(rt);
	m->u.m.self = jv_ref(self);
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
		snprintf(buf, sz, "%s object", jv_type(v));
}

static struct jv *
undef_attr(struct rt *rt, const struct jv *obj, const char *name)
{
	char	 t[40], hint[160];
	struct jv *u;

	type_repr(obj, t, sizeof(t));
	snprintf(hint, sizeof(hint), "'%s' has no attribute '%.60s'", t, name);
	if ((u = jv_undef(hint)) == NULL)
		return oom(rt);
	return u;
}

static struct jv *
loop_attr(struct rt *rt, int line, struct jv *lp, const char *name)
{
	struct jv	*items = lp->u.loop.items;
	size_t		 i = lp->u.loop.i, n = items->u.l.n;

	if (!strcmp(name, "index"))
		return jv_int((int64_t)i + 1) ?: oom(rt);
	if (!strcmp(name, "index0"))
		return jv_int((int64_t)i) ?: oom(rt);
	if (!strcmp(name, "revindex"))
		return jv_int((int64_t)(n - i)) ?: oom(rt);
	if (!strcmp(name, "revindex0"))
		return jv_int((int64_t)(n - i - 1)) ?: oom(rt);
	if (!strcmp(name, "first"))
		return jv_bool(i == 0);
	if (!strcmp(name, "last"))
		return jv_bool(i + 1 == n);
	if (!strcmp(name, "length"))
		return jv_int((int64_t)n) ?: oom(rt);
	if (!strcmp(name, "depth"))
		return jv_int(1) ?: oom(rt);
	if (!strcmp(name, "depth0"))
		return jv_int(0) ?: oom(rt);
	if (!strcmp(name, "previtem"))
		return i > 0 ? jv_ref(items->u.l.v[i - 1]) :
		    jv_undef("there is no previous item") ?: oom(rt);
	if (!strcmp(name, "nextitem"))
		return i + 1 < n ? jv_ref(items->u.l.v[i + 1]) :
		    jv_undef("there is no next item") ?: oom(rt);
	if (!strcmp(name, "cycle"))
		return method(rt, lp, "cycle");
	if (in_list(loop_attrs, name) != NULL)
		return fail(rt, line, "loop.%s is not supported", name);
	return undef_attr(rt, lp, name);
}

/* Key lookup in a dict; NULL when absent (borrowed). */
static struct jv *
dict_get(const struct jv *d, const struct jv *key)
{
	size_t i;

	for (i = 0; i < d->u.d.n; i++)
		if (jv_eq(d->u.d.k[i], key))
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
		return undef_error(rt, line, obj);
	if (name[0] == '_')
		return fail(rt, line, "access to the attribute '%s' is not "
		    "supported", name);
	switch (obj->t) {
	case JT_STR: m = in_list(str_methods, name); break;
	case JT_LIST:
	case JT_TUPLE: m = in_list(list_methods, name); break;
	case JT_DICT: m = in_list(dict_methods, name); break;
	case JT_INT:
	case JT_FLOAT:
	case JT_BOOL: m = in_list(num_methods, name); break;
	case JT_LOOP: return loop_attr(rt, line, obj, name);
	case JT_NS:
		if ((v = dict_get_s(obj, name)) != NULL)
			return jv_ref(v);
		return undef_attr(rt, obj, name);
	default: break;
	}
	if (m != NULL)
		return method(rt, obj, m);
	if (obj->t == JT_DICT && (v = dict_get_s(obj, name)) != NULL)
		return jv_ref(v);
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
static struct jv *
get_item(struct rt *rt, int line, struct jv *obj, struct jv *key)
{
	struct jv	*v;
	struct tpl_sb	 sb = { 0 };
	char		 t[40], hint[160];
	int64_t		 i;
	size_t		 off, k;

	if (obj->t == JT_UNDEF)
		return undef_error(rt, line, obj);
	if (obj->t == JT_DICT && (v = dict_get(obj, key)) != NULL)
		return jv_ref(v);
	if ((key->t == JT_INT || key->t == JT_BOOL) &&
	    ((is_seq(obj) && obj->view == JV_PLAIN) || obj->t == JT_STR)) {
		if (obj->t == JT_STR) {
			i = norm_index(num_i(key), str_len(obj));
			if (i >= 0) {
				off = str_off(obj->u.s.p, obj->u.s.n,
				    (size_t)i);
				tpl_utf8_next(obj->u.s.p + off,
				    obj->u.s.n - off, &k);
				return jv_strn(obj->u.s.p + off, k) ?: oom(rt);
			}
		} else if ((i = norm_index(num_i(key), obj->u.l.n)) >= 0)
			return jv_ref(obj->u.l.v[i]);
	}
	if (key->t == JT_STR)
		return get_attr(rt, line, obj, key->u.s.p);
	type_repr(obj, t, sizeof(t));
	if (jv_write(rt, line, &sb, key, 1, 0) != 0) {
		tpl_sb_release(&sb);
		return NULL;
	}
	snprintf(hint, sizeof(hint), "'%s' has no element %.60s", t,
	    sb.p ? sb.p : "");
	tpl_sb_release(&sb);
	return jv_undef(hint) ?: oom(rt);
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
			fail(rt, line, "TypeError: slice indices must be "
			    "integers or None");
			return -1;
		}
		v[k] = num_i(p[k]);
	}
	*stepv = v[2] == INT64_MIN ? 1 : v[2];
	if (*stepv == 0) {
		fail(rt, line, "ValueError: slice step cannot be zero");
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
	struct tpl_sb	 sb = { 0 };
	int64_t		 a, b, st, i;
	size_t		 n;

	if (obj->t == JT_UNDEF)
		return undef_error(rt, line, obj);
	if (obj->t != JT_STR && !(is_seq(obj) && obj->view == JV_PLAIN))
		return fail(rt, line, "TypeError: '%s' object is not "
		    "subscriptable", jv_type(obj));
	if ((items = jv_iter(rt, line, obj)) == NULL)
		return NULL;
	n = items->u.l.n;
	if (slice_bounds(rt, line, p, n, &a, &b, &st) != 0)
		goto out;
	if (step(rt, line, n) != 0)
		goto out;
	if (obj->t == JT_STR) {
		for (i = a; st > 0 ? i < b : i > b; i += st)
			tpl_sb_add(&sb, items->u.l.v[i]->u.s.p,
			    items->u.l.v[i]->u.s.n);
		if (sb.oom || (r = jv_str_sb(&sb)) == NULL)
			oom(rt);
		goto out;
	}
	if ((r = jv_list(obj->t, n)) == NULL) {
		oom(rt);
		goto out;
	}
	for (i = a; st > 0 ? i < b : i > b; i += st)
		jv_push(r, jv_ref(items->u.l.v[i]));
out:
	tpl_sb_release(&sb);
	jv_unref(items);
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
				return jv_ref(f->vals[i - 1]);
	if (rt->vars != NULL && (v = dict_get_s(rt->vars, n->name)) != NULL)
		return jv_ref(v);
	if (in_list(globals, n->name) != NULL) {
		if ((g = jv_new(JT_FUNC)) == NULL)
			return oom(rt);
		g->u.m.name = in_list(globals, n->name);
		return g;
	}
	if (in_list(unsupported, n->name) != NULL)
		return fail(rt, n->line, "the global '%s' is not supported",
		    n->name);
	snprintf(hint, sizeof(hint), "'%.60s' is undefined", n->name);
	return jv_undef(hint) ?: oom(rt);
}

/* ====== Evaluation: operators ====== */

static struct jv *
checked_str(struct rt *rt, int line, struct tpl_sb *sb)
{
	struct jv *v;

	if (sb->oom) {
		tpl_sb_release(sb);
		return oom(rt);
	}
	if (sb->len > rt->lim->max_value) {
		tpl_sb_release(sb);
		return limit(rt, line, "value size", rt->lim->max_value);
	}
	if ((v = jv_str_sb(sb)) == NULL)
		return oom(rt);
	return v;
}

/* markupsafe.escape of s into sb. */
static void
html_escape(struct tpl_sb *sb, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		switch (s[i]) {
		case '&': tpl_sb_str(sb, "&amp;"); break;
		case '<': tpl_sb_str(sb, "&lt;"); break;
		case '>': tpl_sb_str(sb, "&gt;"); break;
		case '"': tpl_sb_str(sb, "&#34;"); break;
		case '\'': tpl_sb_str(sb, "&#39;"); break;
		default: tpl_sb_add(sb, s + i, 1);
		}
}

static const char *const op_names[] = { "+", "-", "*", "/", "//", "%",
    "**" };

static struct jv *
op_error(struct rt *rt, int line, int op, const struct jv *a,
    const struct jv *b)
{
	if (op == OP_ADD && a->t == JT_STR)
		return fail(rt, line, "TypeError: can only concatenate str "
		    "(not \"%s\") to str", jv_type(b));
	if (op == OP_MOD && a->t == JT_STR)
		return fail(rt, line, "printf-style string formatting (%%) "
		    "is not supported");
	return fail(rt, line, "TypeError: unsupported operand type(s) for "
	    "%s: '%s' and '%s'", op_names[op], jv_type(a), jv_type(b));
}

/* seq * count for str, list and tuple. */
static struct jv *
repeat(struct rt *rt, int line, struct jv *seq, int64_t count)
{
	struct tpl_sb	 sb = { 0 };
	struct jv	*r;
	size_t		 unit, i, k;

	if (count < 0)
		count = 0;
	unit = seq->t == JT_STR ? seq->u.s.n : seq->u.l.n;
	if (unit > 0 && (uint64_t)count > rt->lim->max_value / unit)
		return limit(rt, line, "value size", rt->lim->max_value);
	if (step(rt, line, unit * (size_t)count) != 0)
		return NULL;
	if (seq->t == JT_STR) {
		for (i = 0; i < (size_t)count; i++)
			tpl_sb_add(&sb, seq->u.s.p, seq->u.s.n);
		return checked_str(rt, line, &sb);
	}
	if ((r = jv_list(seq->t, unit * (size_t)count)) == NULL)
		return oom(rt);
	for (i = 0; i < (size_t)count; i++)
		for (k = 0; k < unit; k++)
			jv_push(r, jv_ref(seq->u.l.v[k]));
	return r;
}

static struct jv *
float_result(struct rt *rt, int line, double r, double x, double y)
{
	if (isinf(r) && !isinf(x) && !isinf(y) && !isnan(x) && !isnan(y))
		return fail(rt, line, "OverflowError: numerical result out "
		    "of range");
	return jv_float(r) ?: oom(rt);
}

static struct jv *
arith(struct rt *rt, int line, int op, struct jv *a, struct jv *b)
{
	struct tpl_sb	 sb = { 0 };
	struct jv	*r;
	int64_t		 x, y, z;
	double		 fx, fy, m;
	size_t		 i;

	if (a->t == JT_UNDEF || b->t == JT_UNDEF)
		return undef_error(rt, line, a->t == JT_UNDEF ? a : b);
	if (op == OP_ADD && a->t == JT_STR && b->t == JT_STR) {
		/* Markup + str escapes the str, and the other way round. */
		if (a->markup && !b->markup) {
			tpl_sb_add(&sb, a->u.s.p, a->u.s.n);
			html_escape(&sb, b->u.s.p, b->u.s.n);
		} else if (!a->markup && b->markup) {
			html_escape(&sb, a->u.s.p, a->u.s.n);
			tpl_sb_add(&sb, b->u.s.p, b->u.s.n);
		} else {
			tpl_sb_add(&sb, a->u.s.p, a->u.s.n);
			tpl_sb_add(&sb, b->u.s.p, b->u.s.n);
		}
		if ((r = checked_str(rt, line, &sb)) != NULL)
			r->markup = a->markup || b->markup;
		return r;
	}
	if (op == OP_ADD && a->t == b->t && is_seq(a) &&
	    a->view == JV_PLAIN && b->view == JV_PLAIN) {
		if (a->u.l.n + b->u.l.n > rt->lim->max_value)
			return limit(rt, line, "value size",
			    rt->lim->max_value);
		if ((r = jv_list(a->t, a->u.l.n + b->u.l.n)) == NULL)
			return oom(rt);
		for (i = 0; i < a->u.l.n; i++)
			jv_push(r, jv_ref(a->u.l.v[i]));
		for (i = 0; i < b->u.l.n; i++)
			jv_push(r, jv_ref(b->u.l.v[i]));
		return r;
	}
	if (op == OP_MUL && (a->t == JT_INT || a->t == JT_BOOL) &&
	    (b->t == JT_STR || (is_seq(b) && b->view == JV_PLAIN)))
		return repeat(rt, line, b, num_i(a));
	if (op == OP_MUL && (b->t == JT_INT || b->t == JT_BOOL) &&
	    (a->t == JT_STR || (is_seq(a) && a->view == JV_PLAIN)))
		return repeat(rt, line, a, num_i(b));
	if (!is_num(a) || !is_num(b))
		return op_error(rt, line, op, a, b);
	if (a->t != JT_FLOAT && b->t != JT_FLOAT && op != OP_DIV) {
		x = num_i(a);
		y = num_i(b);
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
				return fail(rt, line, "ZeroDivisionError: "
				    "integer division or modulo by zero");
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
					return fail(rt, line, "ZeroDivision"
					    "Error: 0.0 cannot be raised to "
					    "a negative power");
				return jv_float(pow((double)x, (double)y)) ?:
				    oom(rt);
			}
			for (z = 1; y > 0; y--)
				if (__builtin_mul_overflow(z, x, &z))
					goto big;
			break;
		}
		return jv_int(z) ?: oom(rt);
	}
	fx = num_f(a);
	fy = num_f(b);
	switch (op) {
	case OP_ADD: return jv_float(fx + fy) ?: oom(rt);
	case OP_SUB: return jv_float(fx - fy) ?: oom(rt);
	case OP_MUL: return jv_float(fx * fy) ?: oom(rt);
	case OP_DIV:
		if (fy == 0)
			return fail(rt, line, "ZeroDivisionError: division by "
			    "zero");
		return jv_float(fx / fy) ?: oom(rt);
	case OP_FDIV:
	case OP_MOD:
		if (fy == 0)
			return fail(rt, line, "ZeroDivisionError: float "
			    "%s by zero", op == OP_MOD ? "modulo" :
			    "floor division");
		m = fmod(fx, fy);
		if (m != 0) {
			if ((fy < 0) != (m < 0))
				m += fy;
		} else
			m = copysign(0.0, fy);
		if (op == OP_MOD)
			return jv_float(m) ?: oom(rt);
		{
			double div = (fx - m) / fy, fl;

			if (div != 0) {
				fl = floor(div);
				if (div - fl > 0.5)
					fl += 1.0;
			} else
				fl = copysign(0.0, fx / fy);
			return jv_float(fl) ?: oom(rt);
		}
	default:
		if (fx == 0 && fy < 0)
			return fail(rt, line, "ZeroDivisionError: 0.0 cannot "
			    "be raised to a negative power");
		if (fx < 0 && fy != floor(fy))
			return fail(rt, line, "a negative number to a "
			    "fractional power (a complex result) is not "
			    "supported");
		return float_result(rt, line, pow(fx, fy), fx, fy);
	}
big:
	return fail(rt, line, "integers beyond 64 bits are not supported");
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
			fail(rt, line, "TypeError: 'in <string>' requires "
			    "string as left operand, not %s", jv_type(a));
			return -1;
		}
		return a->u.s.n == 0 || memmem(b->u.s.p, b->u.s.n, a->u.s.p,
		    a->u.s.n) != NULL;
	}
	if (b->t == JT_DICT || b->t == JT_NS)
		return dict_get(b, a) != NULL;
	if ((items = jv_iter(rt, line, b)) == NULL)
		return -1;
	if (step(rt, line, items->u.l.n) == 0)
		for (i = 0; i < items->u.l.n && !r; i++)
			r = jv_eq(a, items->u.l.v[i]);
	jv_unref(items);
	return rt->rc != 0 ? -1 : r;
}

static int
compare(struct rt *rt, int line, int op, struct jv *a, struct jv *b)
{
	static const char *const names[] = { "==", "!=", "<", "<=", ">",
	    ">=" };
	int c, r;

	switch (op) {
	case CMP_EQ: return jv_eq(a, b);
	case CMP_NE: return !jv_eq(a, b);
	case CMP_IN: return contains(rt, line, a, b);
	case CMP_NOTIN:
		r = contains(rt, line, a, b);
		return r < 0 ? -1 : !r;
	default: break;
	}
	if (jv_cmp(rt, line, a, b, names[op], &c) != 0)
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

/* ====== String operations (Python's str methods) ====== */

/* Case conversions of s into sb: 'U'pper, 'L'ower, 'S'wapcase,
 * 'T'itle (str.title), 'C'apitalize, 'J'inja's title filter. */
static void
str_case(struct tpl_sb *sb, const char *s, size_t n, char mode)
{
	size_t		i, k;
	uint32_t	c;
	int		prev_cased = 0, start = 1;

	for (i = 0; i < n; i += k) {
		c = tpl_utf8_next(s + i, n - i, &k);
		switch (mode) {
		case 'U': sb_upper(sb, c); break;
		case 'L': tpl_sb_utf8(sb, u_lower(c)); break;
		case 'S':
			if (u_lower(c) != c)
				tpl_sb_utf8(sb, u_lower(c));
			else
				sb_upper(sb, c);
			break;
		case 'T':
			if (prev_cased)
				tpl_sb_utf8(sb, u_lower(c));
			else
				sb_upper(sb, c);
			prev_cased = u_cased(c);
			break;
		case 'C':
			if (i == 0)
				sb_upper(sb, c);
			else
				tpl_sb_utf8(sb, u_lower(c));
			break;
		default:	/* 'J': words split at -, space, ( { [ < */
			if (c == '-' || u_space(c) || c == '(' || c == '{' ||
			    c == '[' || c == '<') {
				tpl_sb_utf8(sb, c);
				start = 1;
			} else if (start) {
				sb_upper(sb, c);
				start = 0;
			} else
				tpl_sb_utf8(sb, u_lower(c));
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
		return u_space(c);
	for (i = 0; i < chars->u.s.n; i += k)
		if (tpl_utf8_next(chars->u.s.p + i, chars->u.s.n - i, &k) == c)
			return 1;
	return 0;
}

/* str.strip / lstrip / rstrip: byte range [*b, *e) of the result. */
static void
str_strip(const char *s, size_t n, const struct jv *chars, int left,
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
			jv_unref(item);
			oom(rt);
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
		return fail(rt, line, "ValueError: empty separator");
	if ((l = jv_list(JT_LIST, 0)) == NULL)
		return oom(rt);
	if (sep == NULL) {
		if (!right) {
			for (i = 0; i < n;) {
				i += ws_len(p + i, n - i);
				if (i >= n)
					break;
				if (maxsplit >= 0 && splits >= maxsplit) {
					tmp = jv_strn(p + i, n - i);
					if (list_add(rt, &l, &cap, tmp ?:
					    oom(rt)) != 0)
						goto err;
					break;
				}
				for (j = i; j < n; j += k)
					if (u_space(tpl_utf8_next(p + j, n - j,
					    &k)))
						break;
				if (list_add(rt, &l, &cap, jv_strn(p + i,
				    j - i) ?: oom(rt)) != 0)
					goto err;
				splits++;
				i = j;
			}
			return l;
		}
		/* rsplit on whitespace: words from the right; the head keeps
		 * its leading whitespace. */
		for (j = n;;) {
			while (j > 0 && u_space(prev_cp(p, j, &i)))
				j = i;
			if (j == 0)
				break;
			if (maxsplit >= 0 && splits >= maxsplit) {
				if (list_add(rt, &l, &cap, jv_strn(p, j) ?:
				    oom(rt)) != 0)
					goto err;
				break;
			}
			for (b = j; b > 0 && !u_space(prev_cp(p, b, &i));)
				b = i;
			if (list_add(rt, &l, &cap, jv_strn(p + b, j - b) ?:
			    oom(rt)) != 0)
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
				if (list_add(rt, &l, &cap, jv_strn(p + i,
				    n - i) ?: oom(rt)) != 0)
					goto err;
				return l;
			}
			if (list_add(rt, &l, &cap, jv_strn(p + i,
			    (size_t)(hit - p) - i) ?: oom(rt)) != 0)
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
			if (list_add(rt, &l, &cap, jv_strn(p, j) ?: oom(rt)))
				goto err;
			break;
		}
		b = (size_t)(hit - p) + sep->u.s.n;
		if (list_add(rt, &l, &cap, jv_strn(p + b, j - b) ?: oom(rt)))
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
	jv_unref(l);
	return NULL;
}

static struct jv *
str_replace(struct rt *rt, int line, const struct jv *s, const struct jv *old,
    const struct jv *new, int64_t count)
{
	struct tpl_sb	 sb = { 0 };
	const char	*p = s->u.s.p, *hit;
	size_t		 n = s->u.s.n, i = 0, k;
	int64_t		 done = 0;

	if (old->u.s.n == 0) {
		/* Python inserts new before every character and at the end. */
		for (i = 0; i <= n; i += k) {
			k = 1;
			if (count < 0 || done < count) {
				tpl_sb_add(&sb, new->u.s.p, new->u.s.n);
				done++;
			}
			if (i < n) {
				tpl_utf8_next(p + i, n - i, &k);
				tpl_sb_add(&sb, p + i, k);
			}
			if (sb.len > rt->lim->max_value)
				break;
		}
		return checked_str(rt, line, &sb);
	}
	while ((count < 0 || done < count) &&
	    (hit = memmem(p + i, n - i, old->u.s.p, old->u.s.n)) != NULL) {
		tpl_sb_add(&sb, p + i, (size_t)(hit - p) - i);
		tpl_sb_add(&sb, new->u.s.p, new->u.s.n);
		i = (size_t)(hit - p) + old->u.s.n;
		done++;
		if (sb.len > rt->lim->max_value)
			break;
	}
	tpl_sb_add(&sb, p + i, n - i);
	return checked_str(rt, line, &sb);
}

/* Python's float(str): whitespace, sign, digits with single underscores,
 * inf / infinity / nan; 0 on success. */
static int
py_parse_float(const char *s, size_t n, double *out)
{
	char	 buf[400], *end;
	size_t	 b, e, i, m = 0;

	str_strip(s, n, NULL, 1, 1, &b, &e);
	if (e - b == 0 || e - b >= sizeof(buf))
		return -1;
	for (i = b; i < e; i++) {
		if (s[i] == '_') {
			if (i == b || i + 1 >= e || !is_digit(s[i - 1]) ||
			    !is_digit(s[i + 1]))
				return -1;
			continue;
		}
		if (!is_digit(s[i]) && !strchr("+-.eEinfatyINFATY", s[i]))
			return -1;
		buf[m++] = s[i];
	}
	buf[m] = '\0';
	i = buf[0] == '+' || buf[0] == '-';
	if (strcasecmp(buf + i, "inf") && strcasecmp(buf + i, "infinity") &&
	    strcasecmp(buf + i, "nan") && !is_digit(buf[i]) &&
	    !(buf[i] == '.' && is_digit(buf[i + 1])))
		return -1;
	*out = strtod(buf, &end);
	return *end == '\0' ? 0 : -1;
}

/* Python's int(str, base) for bases 2-36 (and 0x/0o/0b prefixes that
 * match the base); 0 on success, -1 invalid, -2 beyond 64 bits. */
static int
py_parse_int(const char *s, size_t n, int base, int64_t *out)
{
	size_t	 b, e, i;
	int	 neg = 0, d, any = 0;
	int64_t	 v = 0;

	str_strip(s, n, NULL, 1, 1, &b, &e);
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
		d = is_digit(s[i]) ? s[i] - '0' :
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

#define MAXARGS 8

struct cargs {
	struct jv	*pos[MAXARGS];
	size_t		 npos;
	const char	*kwn[MAXARGS];
	struct jv	*kwv[MAXARGS];
	size_t		 nkw;
};

static void
cargs_release(struct cargs *ca)
{
	size_t i;

	for (i = 0; i < ca->npos; i++)
		jv_unref(ca->pos[i]);
	for (i = 0; i < ca->nkw; i++)
		jv_unref(ca->kwv[i]);
	ca->npos = ca->nkw = 0;
}

static int
eval_args(struct rt *rt, const struct node *n, struct cargs *ca)
{
	struct jv	*v;
	size_t		 i;

	memset(ca, 0, sizeof(*ca));
	for (i = 0; i < n->nargs; i++) {
		if ((n->kw[i] == NULL ? ca->npos : ca->nkw) == MAXARGS) {
			fail(rt, n->line, "more than %d arguments", MAXARGS);
			return -1;
		}
		if ((v = eval(rt, n->args[i])) == NULL)
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
static int
bind(struct rt *rt, int line, const char *what, const char *const *params,
    const struct cargs *ca, struct jv **a)
{
	size_t	np = 0, i, k;

	while (np < 5 && params[np] != NULL)
		np++;
	for (i = 0; i < 5; i++)
		a[i] = NULL;
	if (ca->npos > np) {
		fail(rt, line, "TypeError: %s takes at most %zu arguments "
		    "(%zu given)", what, np, ca->npos);
		return -1;
	}
	for (i = 0; i < ca->npos; i++)
		a[i] = ca->pos[i];
	for (k = 0; k < ca->nkw; k++) {
		for (i = 0; i < np; i++)
			if (!strcmp(params[i], ca->kwn[k]))
				break;
		if (i == np) {
			fail(rt, line, "TypeError: %s got an unexpected "
			    "keyword argument '%s'", what, ca->kwn[k]);
			return -1;
		}
		if (a[i] != NULL) {
			fail(rt, line, "TypeError: %s got multiple values for "
			    "argument '%s'", what, ca->kwn[k]);
			return -1;
		}
		a[i] = ca->kwv[k];
	}
	return 0;
}

static int
want_str(struct rt *rt, int line, const struct jv *v, const char *what)
{
	if (v != NULL && v->t == JT_STR)
		return 0;
	fail(rt, line, "TypeError: %s must be str, not %s", what,
	    v ? jv_type(v) : "nothing");
	return -1;
}

static int
want_int(struct rt *rt, int line, const struct jv *v, const char *what,
    int64_t *out)
{
	if (v != NULL && (v->t == JT_INT || v->t == JT_BOOL)) {
		*out = num_i(v);
		return 0;
	}
	if (v != NULL && v->t == JT_UNDEF) {
		undef_error(rt, line, v);
		return -1;
	}
	fail(rt, line, "TypeError: %s must be an integer, not %s", what,
	    v ? jv_type(v) : "nothing");
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
			if (want_str(rt, line, x->u.l.v[i], "prefix") != 0)
				return NULL;
			if (str_affix(rt, line, s, x->u.l.v[i], end) ==
			    &jv_true_s)
				return &jv_true_s;
		}
		return &jv_false_s;
	}
	if (want_str(rt, line, x, "prefix") != 0)
		return NULL;
	if (x->u.s.n > s->u.s.n)
		return &jv_false_s;
	return jv_bool(!memcmp(s->u.s.p + (end ? s->u.s.n - x->u.s.n : 0),
	    x->u.s.p, x->u.s.n));
}

/* str.center / ljust / rjust: pad to width code points with fill. */
static struct jv *
str_pad(struct rt *rt, int line, const struct jv *s, int64_t width,
    const struct jv *fill, char how)
{
	struct tpl_sb	 sb = { 0 };
	const char	*f = " ";
	size_t		 fl = 1, len = str_len(s), left, right, i;
	int64_t		 marg;

	if (fill != NULL) {
		if (want_str(rt, line, fill, "fill character") != 0)
			return NULL;
		if (str_len(fill) != 1)
			return fail(rt, line, "TypeError: The fill character "
			    "must be exactly one character long");
		f = fill->u.s.p;
		fl = fill->u.s.n;
	}
	if (width > (int64_t)rt->lim->max_value)
		return limit(rt, line, "value size", rt->lim->max_value);
	if (width <= (int64_t)len)
		return jv_strn(s->u.s.p, s->u.s.n) ?: oom(rt);
	marg = width - (int64_t)len;
	if (how == 'c')
		left = (size_t)(marg / 2 + (marg & width & 1));
	else
		left = how == 'r' ? (size_t)marg : 0;
	right = (size_t)marg - left;
	for (i = 0; i < left; i++)
		tpl_sb_add(&sb, f, fl);
	tpl_sb_add(&sb, s->u.s.p, s->u.s.n);
	for (i = 0; i < right; i++)
		tpl_sb_add(&sb, f, fl);
	return checked_str(rt, line, &sb);
}

static struct jv *
str_find(struct rt *rt, int line, const struct jv *s, const struct jv *sub,
    int mode)
{
	const char	*hit = NULL, *p = s->u.s.p;
	size_t		 i, n = s->u.s.n, cnt = 0;

	if (want_str(rt, line, sub, "substring") != 0)
		return NULL;
	if (mode == 'c') {		/* count */
		if (sub->u.s.n == 0)
			return jv_int((int64_t)str_len(s) + 1) ?: oom(rt);
		for (i = 0; (hit = memmem(p + i, n - i, sub->u.s.p,
		    sub->u.s.n)) != NULL; cnt++)
			i = (size_t)(hit - p) + sub->u.s.n;
		return jv_int((int64_t)cnt) ?: oom(rt);
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
			return fail(rt, line, "ValueError: substring not "
			    "found");
		return jv_int(-1) ?: oom(rt);
	}
	for (i = 0; p + i < hit; i++)
		cnt += ((unsigned char)p[i] & 0xC0) != 0x80;
	return jv_int((int64_t)cnt) ?: oom(rt);
}

/* A str predicate: isdigit, isalpha, isalnum, isspace, islower, isupper. */
static struct jv *
str_is(const struct jv *s, const char *name)
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
			ok = u_word(c) && !(c >= '0' && c <= '9') && c != '_';
		else if (!strcmp(name, "isalnum"))
			ok = u_word(c) && c != '_';
		else if (!strcmp(name, "isspace"))
			ok = u_space(c);
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
	return jv_bool(ok);
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
	struct tpl_sb	 sb = { 0 };
	struct jv	*a[5], *items = NULL, *r = NULL, *sep;
	size_t		 b, e, i;
	int64_t		 k = -1;
	char		 what[64];
	int		 right;

	snprintf(what, sizeof(what), "str.%s()", name);
	if (!strcmp(name, "split") || !strcmp(name, "rsplit")) {
		if (bind(rt, line, what, p_split, ca, a) != 0)
			return NULL;
		sep = a[0] != NULL && a[0]->t != JT_NONE ? a[0] : NULL;
		if ((sep != NULL && want_str(rt, line, sep, "sep") != 0) ||
		    (a[1] != NULL && want_int(rt, line, a[1], "maxsplit",
		    &k) != 0))
			return NULL;
		return str_split(rt, line, s, sep, k, name[0] == 'r');
	}
	if (!strcmp(name, "strip") || !strcmp(name, "lstrip") ||
	    !strcmp(name, "rstrip") || !strcmp(name, "removeprefix") ||
	    !strcmp(name, "removesuffix")) {
		if (bind(rt, line, what, p_chars, ca, a) != 0)
			return NULL;
		if (name[0] == 'r' && name[1] == 'e') {
			if (want_str(rt, line, a[0], "prefix") != 0)
				return NULL;
			right = name[6] == 's';
			if (str_affix(rt, line, s, a[0], right) != &jv_true_s)
				return jv_ref(s);
			return jv_strn(s->u.s.p + (right ? 0 : a[0]->u.s.n),
			    s->u.s.n - a[0]->u.s.n) ?: oom(rt);
		}
		if (a[0] != NULL && a[0]->t == JT_NONE)
			a[0] = NULL;
		if (a[0] != NULL && want_str(rt, line, a[0], "chars") != 0)
			return NULL;
		str_strip(s->u.s.p, s->u.s.n, a[0], name[0] != 'r',
		    name[0] != 'l', &b, &e);
		return jv_strn(s->u.s.p + b, e - b) ?: oom(rt);
	}
	if (!strcmp(name, "replace")) {
		if (bind(rt, line, what, p_repl, ca, a) != 0 ||
		    want_str(rt, line, a[0], "old") != 0 ||
		    want_str(rt, line, a[1], "new") != 0 ||
		    (a[2] != NULL && want_int(rt, line, a[2], "count", &k)))
			return NULL;
		return str_replace(rt, line, s, a[0], a[1], k);
	}
	if (!strcmp(name, "startswith") || !strcmp(name, "endswith")) {
		if (bind(rt, line, what, p_one, ca, a) != 0)
			return NULL;
		if (a[1] != NULL || a[2] != NULL)
			return fail(rt, line, "%s with start/end is not "
			    "supported", what);
		return str_affix(rt, line, s, a[0], name[0] == 'e');
	}
	if (!strcmp(name, "find") || !strcmp(name, "rfind") ||
	    !strcmp(name, "index") || !strcmp(name, "rindex") ||
	    !strcmp(name, "count")) {
		if (bind(rt, line, what, p_one, ca, a) != 0)
			return NULL;
		if (a[1] != NULL || a[2] != NULL)
			return fail(rt, line, "%s with start/end is not "
			    "supported", what);
		return str_find(rt, line, s, a[0], !strcmp(name, "count") ?
		    'c' : !strcmp(name, "find") ? 'f' : !strcmp(name, "rfind") ?
		    'F' : !strcmp(name, "index") ? 'i' : 'I');
	}
	if (!strcmp(name, "center") || !strcmp(name, "ljust") ||
	    !strcmp(name, "rjust") || !strcmp(name, "zfill")) {
		if (bind(rt, line, what, p_pad, ca, a) != 0 ||
		    want_int(rt, line, a[0], "width", &k) != 0)
			return NULL;
		if (name[0] == 'z') {
			if (a[1] != NULL)
				return fail(rt, line, "TypeError: %s takes one "
				    "argument", what);
			if (k <= (int64_t)str_len(s))
				return jv_ref(s);
			if (k > (int64_t)rt->lim->max_value)
				return limit(rt, line, "value size",
				    rt->lim->max_value);
			i = s->u.s.n > 0 && (s->u.s.p[0] == '-' ||
			    s->u.s.p[0] == '+');
			tpl_sb_add(&sb, s->u.s.p, i);
			for (b = str_len(s); (int64_t)b < k; b++)
				tpl_sb_add(&sb, "0", 1);
			tpl_sb_add(&sb, s->u.s.p + i, s->u.s.n - i);
			return checked_str(rt, line, &sb);
		}
		return str_pad(rt, line, s, k, a[1], name[0] == 'c' ? 'c' :
		    name[0] == 'l' ? 'l' : 'r');
	}
	if (!strcmp(name, "join")) {
		if (bind(rt, line, what, p_chars, ca, a) != 0)
			return NULL;
		if (a[0] == NULL)
			return fail(rt, line, "TypeError: %s takes exactly one "
			    "argument", what);
		if ((items = jv_iter(rt, line, a[0])) == NULL)
			return NULL;
		for (i = 0; i < items->u.l.n; i++) {
			if (items->u.l.v[i]->t != JT_STR) {
				fail(rt, line, "TypeError: sequence item %zu: "
				    "expected str instance, %s found", i,
				    jv_type(items->u.l.v[i]));
				goto out;
			}
			if (i > 0)
				tpl_sb_add(&sb, s->u.s.p, s->u.s.n);
			tpl_sb_add(&sb, items->u.l.v[i]->u.s.p,
			    items->u.l.v[i]->u.s.n);
		}
		r = checked_str(rt, line, &sb);
		goto out;
	}
	if (strcmp(name, "lower") && strcmp(name, "upper") &&
	    strcmp(name, "title") && strcmp(name, "capitalize") &&
	    strcmp(name, "swapcase") && strcmp(name, "casefold") &&
	    strcmp(name, "splitlines") && strncmp(name, "is", 2))
		return fail(rt, line, "the method str.%s() is not supported",
		    name);
	if (bind(rt, line, what, p_none, ca, a) != 0)
		return NULL;
	if (!strcmp(name, "splitlines")) {
		size_t	cap = 0, k2;
		uint32_t c;

		if ((r = jv_list(JT_LIST, 0)) == NULL)
			return oom(rt);
		for (i = 0, b = 0; i < s->u.s.n; i += k2) {
			c = tpl_utf8_next(s->u.s.p + i, s->u.s.n - i, &k2);
			if (!u_linebreak(c))
				continue;
			if (list_add(rt, &r, &cap, jv_strn(s->u.s.p + b,
			    i - b) ?: oom(rt)) != 0) {
				jv_unref(r);
				return NULL;
			}
			if (c == '\r' && i + 1 < s->u.s.n &&
			    s->u.s.p[i + 1] == '\n')
				k2 = 2;
			b = i + k2;
		}
		if (b < s->u.s.n && list_add(rt, &r, &cap, jv_strn(s->u.s.p + b,
		    s->u.s.n - b) ?: oom(rt)) != 0) {
			jv_unref(r);
			return NULL;
		}
		return r;
	}
	if (!strcmp(name, "lower") || !strcmp(name, "upper") ||
	    !strcmp(name, "title") || !strcmp(name, "capitalize") ||
	    !strcmp(name, "swapcase") || !strcmp(name, "casefold")) {
		str_case(&sb, s->u.s.p, s->u.s.n, !strcmp(name, "upper") ? 'U' :
		    !strcmp(name, "title") ? 'T' : !strcmp(name, "capitalize") ?
		    'C' : !strcmp(name, "swapcase") ? 'S' : 'L');
		return checked_str(rt, line, &sb);
	}
	if (!strcmp(name, "isdigit") || !strcmp(name, "isalpha") ||
	    !strcmp(name, "isalnum") || !strcmp(name, "isspace") ||
	    !strcmp(name, "islower") || !strcmp(name, "isupper") ||
	    !strcmp(name, "isdecimal") || !strcmp(name, "isnumeric"))
		return str_is(s, name);
	return fail(rt, line, "the method str.%s() is not supported", name);
out:
	tpl_sb_release(&sb);
	jv_unref(items);
	return r;
}

static struct jv *
call_method(struct rt *rt, int line, struct jv *m, struct cargs *ca)
{
	static const char *const p_get[] = { "key", "default", NULL };
	static const char *const p_none[] = { NULL };
	static const char *const p_one[] = { "x", NULL };
	struct jv	*self = m->u.m.self, *a[5], *r, *v;
	const char	*name = m->u.m.name;
	size_t		 i;
	char		 what[64];

	snprintf(what, sizeof(what), "%s.%s()", jv_type(self), name);
	if (self->t == JT_STR)
		return call_str_method(rt, line, self, name, ca);
	if (self->t == JT_LOOP && !strcmp(name, "cycle")) {
		if (ca->nkw > 0 || ca->npos == 0)
			return fail(rt, line, "TypeError: loop.cycle() needs "
			    "positional arguments");
		return jv_ref(ca->pos[self->u.loop.i % ca->npos]);
	}
	if (self->t == JT_DICT && !strcmp(name, "get")) {
		if (bind(rt, line, what, p_get, ca, a) != 0)
			return NULL;
		if (a[0] == NULL)
			return fail(rt, line, "TypeError: get expected at "
			    "least 1 argument, got 0");
		if ((v = dict_get(self, a[0])) != NULL)
			return jv_ref(v);
		return a[1] != NULL ? jv_ref(a[1]) : &jv_none_s;
	}
	if (self->t == JT_DICT && (!strcmp(name, "items") ||
	    !strcmp(name, "keys") || !strcmp(name, "values"))) {
		if (bind(rt, line, what, p_none, ca, a) != 0)
			return NULL;
		if ((r = jv_list(JT_LIST, self->u.d.n)) == NULL)
			return oom(rt);
		r->view = name[0] == 'i' ? JV_ITEMS : name[0] == 'k' ?
		    JV_KEYS : JV_VALUES;
		for (i = 0; i < self->u.d.n; i++) {
			if (r->view == JV_KEYS)
				jv_push(r, jv_ref(self->u.d.k[i]));
			else if (r->view == JV_VALUES)
				jv_push(r, jv_ref(self->u.d.v[i]));
			else {
				if ((v = jv_list(JT_TUPLE, 2)) == NULL) {
					jv_unref(r);
					return oom(rt);
				}
				jv_push(v, jv_ref(self->u.d.k[i]));
				jv_push(v, jv_ref(self->u.d.v[i]));
				jv_push(r, v);
			}
		}
		return r;
	}
	if (is_seq(self) && self->view == JV_PLAIN &&
	    (!strcmp(name, "count") || !strcmp(name, "index"))) {
		if (bind(rt, line, what, p_one, ca, a) != 0)
			return NULL;
		if (a[0] == NULL)
			return fail(rt, line, "TypeError: %s takes exactly one "
			    "argument", what);
		int64_t cnt = 0;

		for (i = 0; i < self->u.l.n; i++)
			if (jv_eq(self->u.l.v[i], a[0])) {
				if (name[0] == 'i')
					return jv_int((int64_t)i) ?: oom(rt);
				cnt++;
			}
		if (name[0] == 'i')
			return fail(rt, line, "ValueError: item is not in "
			    "list");
		return jv_int(cnt) ?: oom(rt);
	}
	return fail(rt, line, "the method %s.%s() is not supported",
	    jv_type(self), name);
}

/* range(), dict(), namespace(). */
static struct jv *
call_global(struct rt *rt, int line, const char *name, struct cargs *ca)
{
	struct jv	*r;
	int64_t		 v[3] = { 0, 0, 1 }, i, cnt;
	size_t		 k;

	if (!strcmp(name, "range")) {
		if (ca->nkw > 0 || ca->npos < 1 || ca->npos > 3)
			return fail(rt, line, "TypeError: range expected 1 to "
			    "3 positional arguments");
		for (k = 0; k < ca->npos; k++)
			if (want_int(rt, line, ca->pos[k], "range() argument",
			    &v[ca->npos == 1 ? 1 : k]) != 0)
				return NULL;
		if (v[2] == 0)
			return fail(rt, line, "ValueError: range() arg 3 must "
			    "not be zero");
		cnt = v[2] > 0 ? (v[1] > v[0] ? (v[1] - v[0] - 1) / v[2] + 1 :
		    0) : (v[0] > v[1] ? (v[0] - v[1] - 1) / -v[2] + 1 : 0);
		if ((uint64_t)cnt > rt->lim->max_value)
			return limit(rt, line, "value size",
			    rt->lim->max_value);
		if (step(rt, line, (size_t)cnt) != 0)
			return NULL;
		if ((r = jv_list(JT_LIST, (size_t)cnt)) == NULL)
			return oom(rt);
		for (i = 0; i < cnt; i++) {
			struct jv *x = jv_int(v[0] + i * v[2]);

			if (x == NULL) {
				jv_unref(r);
				return oom(rt);
			}
			jv_push(r, x);
		}
		return r;
	}
	/* dict(k=v) and namespace(k=v). */
	if (ca->npos > 0)
		return fail(rt, line, "%s() with positional arguments is not "
		    "supported", name);
	if ((r = jv_dict(ca->nkw)) == NULL)
		return oom(rt);
	if (name[0] == 'n')
		r->t = JT_NS;
	for (k = 0; k < ca->nkw; k++) {
		if ((r->u.d.k[k] = jv_str(ca->kwn[k])) == NULL) {
			jv_unref(r);
			return oom(rt);
		}
		r->u.d.v[k] = jv_ref(ca->kwv[k]);
		r->u.d.n++;
	}
	return r;
}

/* ====== Filters ====== */

/* soft_str: str(v), keeping a Markup a Markup. */
static struct jv *
soft_str(struct rt *rt, int line, struct jv *v)
{
	return jv_to_str(rt, line, v);
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
		return get_item(rt, line, item, (struct jv *)path);
	if (path->t != JT_STR)
		return fail(rt, line, "TypeError: attribute must be a str");
	cur = jv_ref(item);
	p = path->u.s.p;
	end = p + path->u.s.n;
	for (;;) {
		dot = memchr(p, '.', (size_t)(end - p));
		if (dot == NULL)
			dot = end;
		if (py_parse_int(p, (size_t)(dot - p), 10, &iv) == 0 &&
		    is_digit(*p))
			key = jv_int(iv);
		else
			key = jv_strn(p, (size_t)(dot - p));
		if (key == NULL) {
			jv_unref(cur);
			return oom(rt);
		}
		next = get_item(rt, line, cur, key);
		jv_unref(key);
		jv_unref(cur);
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
	struct tpl_sb	 sb = { 0 };

	k = attr != NULL ? attr_path(rt, line, item, attr) : jv_ref(item);
	if (k == NULL || cs || k->t != JT_STR)
		return k;
	str_case(&sb, k->u.s.p, k->u.s.n, 'L');
	jv_unref(k);
	if (sb.oom || (low = jv_str_sb(&sb)) == NULL) {
		tpl_sb_release(&sb);
		return oom(rt);
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
		if (jv_cmp(rt, line, keys[j], keys[i], "<", &c) != 0)
			return -1;
		/* reverse=True keeps equal items in order, as Python does. */
		if (rev ? (jv_cmp(rt, line, keys[i], keys[j], "<", &c) == 0 &&
		    c < 0) : c < 0) {
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

	if ((items = jv_iter(rt, line, v)) == NULL)
		return NULL;
	n = items->u.l.n;
	if (step(rt, line, n * 8) != 0)
		goto out;
	keys = calloc(n + 1, sizeof(*keys));
	ti = calloc(n + 1, sizeof(*ti));
	tk = calloc(n + 1, sizeof(*tk));
	if (keys == NULL || ti == NULL || tk == NULL ||
	    (r = jv_list(JT_LIST, n)) == NULL) {
		oom(rt);
		goto out;
	}
	for (i = 0; i < n; i++) {
		jv_push(r, jv_ref(items->u.l.v[i]));
		if ((keys[i] = sort_key(rt, line, items->u.l.v[i], attr,
		    cs)) == NULL)
			goto out;
	}
	if (merge_sort(rt, line, r->u.l.v, keys, n, ti, tk, rev) != 0)
		goto out;
out:
	for (i = 0; keys != NULL && i < n; i++)
		jv_unref(keys[i]);
	free(keys);
	free(ti);
	free(tk);
	jv_unref(items);
	if (rt->rc != 0) {
		jv_unref(r);
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
	return v == NULL ? dflt : jv_truth(v);
}

static struct jv *
f_abs(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	if (v->t == JT_FLOAT)
		return jv_float(fabs(v->u.f)) ?: oom(rt);
	if (v->t == JT_INT || v->t == JT_BOOL) {
		if (num_i(v) == INT64_MIN)
			return fail(rt, n->line, "integers beyond 64 bits are "
			    "not supported");
		return jv_int(num_i(v) < 0 ? -num_i(v) : num_i(v)) ?: oom(rt);
	}
	if (v->t == JT_UNDEF)
		return undef_error(rt, n->line, v);
	return fail(rt, n->line, "TypeError: bad operand type for abs(): "
	    "'%s'", jv_type(v));
}

static struct jv *
f_strcase(struct rt *rt, const struct node *n, struct jv *v, char mode)
{
	struct tpl_sb	 sb = { 0 };
	struct jv	*s, *r;

	if ((s = soft_str(rt, n->line, v)) == NULL)
		return NULL;
	str_case(&sb, s->u.s.p, s->u.s.n, mode);
	r = checked_str(rt, n->line, &sb);
	jv_unref(s);
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

	if (a[0] != NULL && want_int(rt, n->line, a[0], "width", &w) != 0)
		return NULL;
	if ((s = soft_str(rt, n->line, v)) == NULL)
		return NULL;
	r = str_pad(rt, n->line, s, w, NULL, 'c');
	jv_unref(s);
	return r;
}

static struct jv *
f_length(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	int64_t len = jv_len(rt, n->line, v);

	return len < 0 ? NULL : jv_int(len) ?: oom(rt);
}

static struct jv *
f_default(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	if (v->t == JT_UNDEF || (arg_bool(a[1], 0) && !jv_truth(v)))
		return a[0] != NULL ? jv_ref(a[0]) : jv_str("") ?: oom(rt);
	return jv_ref(v);
}

static struct jv *
f_escape(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct tpl_sb	 sb = { 0 };
	struct jv	*s;

	if (v->t == JT_STR && v->markup)
		return jv_ref(v);
	if ((s = soft_str(rt, n->line, v)) == NULL)
		return NULL;
	html_escape(&sb, s->u.s.p, s->u.s.n);
	jv_unref(s);
	return markup(checked_str(rt, n->line, &sb));
}

static struct jv *
f_forceescape(struct rt *rt, const struct node *n, struct jv *v,
    struct jv **a)
{
	struct tpl_sb	 sb = { 0 };
	struct jv	*s;

	if ((s = soft_str(rt, n->line, v)) == NULL)
		return NULL;
	html_escape(&sb, s->u.s.p, s->u.s.n);
	jv_unref(s);
	return markup(checked_str(rt, n->line, &sb));
}

static struct jv *
f_safe(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct jv *s, *r;

	if ((s = soft_str(rt, n->line, v)) == NULL)
		return NULL;
	r = jv_strn(s->u.s.p, s->u.s.n);
	jv_unref(s);
	return r != NULL ? markup(r) : oom(rt);
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

	if ((items = jv_iter(rt, n->line, v)) == NULL)
		return NULL;
	r = items->u.l.n > 0 ? jv_ref(items->u.l.v[0]) :
	    jv_undef("No first item, sequence was empty.") ?: oom(rt);
	jv_unref(items);
	return r;
}

static struct jv *
f_last(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct jv *items, *r;

	if (v->t == JT_LIST && v->view == JV_ITER)
		return fail(rt, n->line, "TypeError: 'generator' object is "
		    "not reversible");
	if ((items = jv_iter(rt, n->line, v)) == NULL)
		return NULL;
	r = items->u.l.n > 0 ? jv_ref(items->u.l.v[items->u.l.n - 1]) :
	    jv_undef("No last item, sequence was empty.") ?: oom(rt);
	jv_unref(items);
	return r;
}

/* A plain list copy of what iterating v yields. */
static struct jv *
f_list(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct jv	*items, *r;
	size_t		 i;

	if ((items = jv_iter(rt, n->line, v)) == NULL)
		return NULL;
	if ((r = jv_list(JT_LIST, items->u.l.n)) == NULL) {
		jv_unref(items);
		return oom(rt);
	}
	for (i = 0; i < items->u.l.n; i++)
		jv_push(r, jv_ref(items->u.l.v[i]));
	jv_unref(items);
	return r;
}

static struct jv *
f_join(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct tpl_sb	 sb = { 0 };
	struct jv	*items, *d = NULL, *it, *s;
	size_t		 i;

	if (a[0] != NULL && (d = soft_str(rt, n->line, a[0])) == NULL)
		return NULL;
	if ((items = jv_iter(rt, n->line, v)) == NULL) {
		jv_unref(d);
		return NULL;
	}
	for (i = 0; i < items->u.l.n && rt->rc == 0; i++) {
		it = a[1] != NULL ? attr_path(rt, n->line, items->u.l.v[i],
		    a[1]) : jv_ref(items->u.l.v[i]);
		if (it == NULL || (s = jv_to_str(rt, n->line, it)) == NULL) {
			jv_unref(it);
			break;
		}
		if (i > 0 && d != NULL)
			tpl_sb_add(&sb, d->u.s.p, d->u.s.n);
		tpl_sb_add(&sb, s->u.s.p, s->u.s.n);
		jv_unref(s);
		jv_unref(it);
		if (sb.len > rt->lim->max_value)
			break;
	}
	jv_unref(items);
	jv_unref(d);
	if (rt->rc != 0) {
		tpl_sb_release(&sb);
		return NULL;
	}
	return checked_str(rt, n->line, &sb);
}

static struct jv *
f_trim(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct jv	*s, *r;
	size_t		 b, e;

	if (a[0] != NULL && a[0]->t != JT_NONE &&
	    want_str(rt, n->line, a[0], "chars") != 0)
		return NULL;
	if ((s = soft_str(rt, n->line, v)) == NULL)
		return NULL;
	str_strip(s->u.s.p, s->u.s.n, a[0] && a[0]->t == JT_STR ? a[0] :
	    NULL, 1, 1, &b, &e);
	r = jv_strn(s->u.s.p + b, e - b) ?: oom(rt);
	jv_unref(s);
	return r;
}

static struct jv *
f_replace(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct jv	*s = NULL, *o = NULL, *w = NULL, *r = NULL;
	int64_t		 cnt = -1;

	if (a[0] == NULL || a[1] == NULL)
		return fail(rt, n->line, "TypeError: replace() needs old and "
		    "new");
	if (a[2] != NULL && a[2]->t != JT_NONE &&
	    want_int(rt, n->line, a[2], "count", &cnt) != 0)
		return NULL;
	if ((s = soft_str(rt, n->line, v)) != NULL &&
	    (o = soft_str(rt, n->line, a[0])) != NULL &&
	    (w = soft_str(rt, n->line, a[1])) != NULL)
		r = str_replace(rt, n->line, s, o, w, cnt);
	jv_unref(s);
	jv_unref(o);
	jv_unref(w);
	return r;
}

static struct jv *
f_float(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	double d;

	if (is_num(v))
		return jv_float(num_f(v)) ?: oom(rt);
	if (v->t == JT_UNDEF)
		return undef_error(rt, n->line, v);
	if (v->t == JT_STR && py_parse_float(v->u.s.p, v->u.s.n, &d) == 0)
		return jv_float(d) ?: oom(rt);
	return a[0] != NULL ? jv_ref(a[0]) : jv_float(0.0) ?: oom(rt);
}

static struct jv *
f_int(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	int64_t	 base = 10, iv;
	double	 d;
	int	 rc;

	if (a[1] != NULL && want_int(rt, n->line, a[1], "base", &base) != 0)
		return NULL;
	if (base < 2 || base > 36)
		return fail(rt, n->line, "ValueError: int() base must be "
		    ">= 2 and <= 36");
	if (v->t == JT_UNDEF)
		return undef_error(rt, n->line, v);
	if (v->t == JT_INT || v->t == JT_BOOL)
		return jv_int(num_i(v)) ?: oom(rt);
	if (v->t == JT_STR) {
		rc = py_parse_int(v->u.s.p, v->u.s.n, (int)base, &iv);
		if (rc == 0)
			return jv_int(iv) ?: oom(rt);
		if (rc == -2)
			return fail(rt, n->line, "integers beyond 64 bits are "
			    "not supported");
		if (py_parse_float(v->u.s.p, v->u.s.n, &d) != 0)
			goto dflt;
	} else if (v->t == JT_FLOAT)
		d = v->u.f;
	else
		goto dflt;
	if (isnan(d))
		goto dflt;
	if (isinf(d))
		return fail(rt, n->line, "OverflowError: cannot convert float "
		    "infinity to integer");
	if (d >= 9223372036854775808.0 || d < -9223372036854775808.0)
		return fail(rt, n->line, "integers beyond 64 bits are not "
		    "supported");
	return jv_int((int64_t)d) ?: oom(rt);
dflt:
	return a[0] != NULL ? jv_ref(a[0]) : jv_int(0) ?: oom(rt);
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

	if (a[0] != NULL && want_int(rt, n->line, a[0], "precision", &prec))
		return NULL;
	if (a[1] != NULL) {
		if (want_str(rt, n->line, a[1], "method") != 0)
			return NULL;
		meth = a[1]->u.s.p;
	}
	if (strcmp(meth, "common") && strcmp(meth, "ceil") &&
	    strcmp(meth, "floor"))
		return fail(rt, n->line, "FilterArgumentError: method must be "
		    "common, ceil or floor");
	if (v->t == JT_UNDEF)
		return undef_error(rt, n->line, v);
	if (!is_num(v))
		return fail(rt, n->line, "TypeError: type %s doesn't define "
		    "__round__ method", jv_type(v));
	if (!strcmp(meth, "common")) {
		if (v->t == JT_FLOAT)
			return jv_float(py_round(v->u.f, prec)) ?: oom(rt);
		x = num_i(v);
		if (prec >= 0)
			return jv_int(x) ?: oom(rt);
		if (prec < -18)
			return jv_int(0) ?: oom(rt);
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
			return fail(rt, n->line, "integers beyond 64 bits are "
			    "not supported");
		return jv_int(x) ?: oom(rt);
	}
	if (prec > 308 || prec < -308)
		return fail(rt, n->line, "round precision out of range");
	p = pow(10.0, (double)prec);
	x = 0;
	{
		double y = num_f(v) * p;

		y = meth[0] == 'c' ? ceil(y) : floor(y);
		if (!isfinite(y))
			return fail(rt, n->line, "OverflowError: cannot "
			    "convert float infinity to integer");
		return jv_float(y / p) ?: oom(rt);
	}
}

/* htmlsafe_json_dumps: sorted keys, ensure_ascii, < > & ' escaped. */
static int
to_json(struct rt *rt, int line, struct tpl_sb *sb, struct jv *v,
    int64_t indent, int depth)
{
	struct jv	*keys = NULL;
	size_t		 i, n;
	int64_t		 j;
	int		 rc = 0;

	if (depth > 1000) {
		fail(rt, line, "tojson: value nested too deeply");
		return -1;
	}
	switch (v->t) {
	case JT_NONE: tpl_sb_str(sb, "null"); return 0;
	case JT_BOOL: tpl_sb_str(sb, v->u.b ? "true" : "false"); return 0;
	case JT_INT: tpl_sb_py_int(sb, v->u.i); return 0;
	case JT_FLOAT:
		if (isnan(v->u.f))
			tpl_sb_str(sb, "NaN");
		else if (isinf(v->u.f))
			tpl_sb_str(sb, v->u.f < 0 ? "-Infinity" : "Infinity");
		else
			tpl_sb_py_float(sb, v->u.f);
		return 0;
	case JT_STR:
		tpl_sb_json_str(sb, v->u.s.p, v->u.s.n, 1);
		return 0;
	case JT_LIST:
	case JT_TUPLE:
	case JT_DICT:
		if (v->t == JT_LIST && v->view != JV_PLAIN)
			break;
		if (v->t == JT_DICT) {
			for (i = 0; i < v->u.d.n; i++)
				if (v->u.d.k[i]->t != JT_STR) {
					fail(rt, line, "tojson: keys other "
					    "than strings are not supported");
					return -1;
				}
			if ((keys = sorted(rt, line, v, 0, 1, NULL)) == NULL)
				return -1;
			n = keys->u.l.n;
		} else
			n = v->u.l.n;
		tpl_sb_str(sb, v->t == JT_DICT ? "{" : "[");
		for (i = 0; i < n && rc == 0; i++) {
			if (i > 0)
				tpl_sb_str(sb, indent < 0 ? ", " : ",");
			if (indent >= 0) {
				tpl_sb_add(sb, "\n", 1);
				for (j = 0; j < indent * (depth + 1); j++)
					tpl_sb_add(sb, " ", 1);
			}
			if (v->t == JT_DICT) {
				tpl_sb_json_str(sb, keys->u.l.v[i]->u.s.p,
				    keys->u.l.v[i]->u.s.n, 1);
				tpl_sb_add(sb, ": ", 2);
				rc = to_json(rt, line, sb, dict_get(v,
				    keys->u.l.v[i]), indent, depth + 1);
			} else
				rc = to_json(rt, line, sb, v->u.l.v[i], indent,
				    depth + 1);
			if (sb->len > rt->lim->max_value) {
				limit(rt, line, "value size",
				    rt->lim->max_value);
				rc = -1;
			}
		}
		if (indent >= 0 && n > 0) {
			tpl_sb_add(sb, "\n", 1);
			for (j = 0; j < indent * depth; j++)
				tpl_sb_add(sb, " ", 1);
		}
		tpl_sb_str(sb, v->t == JT_DICT ? "}" : "]");
		jv_unref(keys);
		return rc;
	default:
		break;
	}
	fail(rt, line, "TypeError: Object of type %s is not JSON "
	    "serializable", v->t == JT_UNDEF ? "Undefined" : jv_type(v));
	return -1;
}

static struct jv *
f_tojson(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct tpl_sb	 sb = { 0 }, out = { 0 };
	int64_t		 indent = -1;
	size_t		 i;

	if (a[0] != NULL && a[0]->t != JT_NONE &&
	    want_int(rt, n->line, a[0], "indent", &indent) != 0)
		return NULL;
	if (indent > 64)
		return fail(rt, n->line, "tojson: indent above 64 is not "
		    "supported");
	if (to_json(rt, n->line, &sb, v, indent, 0) != 0) {
		tpl_sb_release(&sb);
		return NULL;
	}
	for (i = 0; i < sb.len; i++)
		switch (sb.p[i]) {
		case '<': tpl_sb_str(&out, "\\u003c"); break;
		case '>': tpl_sb_str(&out, "\\u003e"); break;
		case '&': tpl_sb_str(&out, "\\u0026"); break;
		case '\'': tpl_sb_str(&out, "\\u0027"); break;
		default: tpl_sb_add(&out, sb.p + i, 1);
		}
	tpl_sb_release(&sb);
	if (out.p == NULL)
		tpl_sb_add(&out, "", 0);
	return markup(checked_str(rt, n->line, &out));
}

static struct jv *
f_reverse(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct tpl_sb	 sb = { 0 };
	struct jv	*items, *r;
	size_t		 i;
	int		 was_gen = v->t == JT_LIST && v->view == JV_ITER;

	if ((items = jv_iter(rt, n->line, v)) == NULL)
		return NULL;
	if (v->t == JT_STR) {
		for (i = items->u.l.n; i-- > 0;)
			tpl_sb_add(&sb, items->u.l.v[i]->u.s.p,
			    items->u.l.v[i]->u.s.n);
		jv_unref(items);
		return checked_str(rt, n->line, &sb);
	}
	if ((r = jv_list(JT_LIST, items->u.l.n)) == NULL) {
		jv_unref(items);
		return oom(rt);
	}
	for (i = items->u.l.n; i-- > 0;)
		jv_push(r, jv_ref(items->u.l.v[i]));
	jv_unref(items);
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

	if ((items = jv_iter(rt, n->line, v)) == NULL)
		return NULL;
	if (step(rt, n->line, items->u.l.n * items->u.l.n / 16 + 1) != 0 ||
	    (r = jv_list(JT_LIST, items->u.l.n)) == NULL ||
	    (seen = calloc(items->u.l.n + 1, sizeof(*seen))) == NULL) {
		if (rt->rc == 0)
			oom(rt);
		jv_unref(items);
		return NULL;
	}
	for (i = 0; i < items->u.l.n; i++) {
		if ((k = sort_key(rt, n->line, items->u.l.v[i], a[1],
		    arg_bool(a[0], 0))) == NULL)
			break;
		for (j = 0; j < ns && !jv_eq(seen[j], k); j++)
			;
		if (j < ns) {
			jv_unref(k);
			continue;
		}
		seen[ns++] = k;
		jv_push(r, jv_ref(items->u.l.v[i]));
	}
	for (j = 0; j < ns; j++)
		jv_unref(seen[j]);
	free(seen);
	jv_unref(items);
	if (rt->rc != 0) {
		jv_unref(r);
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

	if ((items = jv_iter(rt, n->line, v)) == NULL)
		return NULL;
	for (i = 0; i < items->u.l.n; i++) {
		if ((k = sort_key(rt, n->line, items->u.l.v[i], a[1],
		    arg_bool(a[0], 0))) == NULL)
			break;
		if (bk != NULL && jv_cmp(rt, n->line, k, bk, want_max ? ">" :
		    "<", &c) != 0) {
			jv_unref(k);
			break;
		}
		if (bk == NULL || (want_max ? c > 0 && c != 2 : c < 0)) {
			jv_unref(bk);
			bk = k;
			best = items->u.l.v[i];
		} else
			jv_unref(k);
	}
	jv_unref(bk);
	r = rt->rc != 0 ? NULL : best != NULL ? jv_ref(best) :
	    jv_undef("No aggregated item, sequence was empty.") ?: oom(rt);
	jv_unref(items);
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

	if ((items = jv_iter(rt, n->line, v)) == NULL)
		return NULL;
	acc = a[1] != NULL ? jv_ref(a[1]) : jv_int(0);
	for (i = 0; acc != NULL && i < items->u.l.n; i++) {
		it = a[0] != NULL ? attr_path(rt, n->line, items->u.l.v[i],
		    a[0]) : jv_ref(items->u.l.v[i]);
		next = it != NULL ? arith(rt, n->line, OP_ADD, acc, it) : NULL;
		jv_unref(it);
		jv_unref(acc);
		acc = next;
	}
	jv_unref(items);
	return acc != NULL ? acc : rt->rc ? NULL : oom(rt);
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
		w = u_word(tpl_utf8_next(s->u.s.p + i, s->u.s.n - i, &k));
		cnt += w && !in;
		in = w;
	}
	jv_unref(s);
	return jv_int((int64_t)cnt) ?: oom(rt);
}

static struct jv *
f_truncate(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct tpl_sb	 sb = { 0 };
	struct jv	*s, *end = NULL, *r = NULL;
	int64_t		 len = 255, leeway = 5, el, cut;
	size_t		 off, i;

	if ((a[0] != NULL && want_int(rt, n->line, a[0], "length", &len)) ||
	    (a[3] != NULL && a[3]->t != JT_NONE && want_int(rt, n->line,
	    a[3], "leeway", &leeway)))
		return NULL;
	if ((s = soft_str(rt, n->line, v)) == NULL)
		return NULL;
	if (a[2] != NULL && (end = soft_str(rt, n->line, a[2])) == NULL)
		goto out;
	el = end != NULL ? (int64_t)str_len(end) : 3;
	if (len < el) {
		fail(rt, n->line, "AssertionError: expected length >= %lld, "
		    "got %lld", (long long)el, (long long)len);
		goto out;
	}
	if (leeway < 0) {
		fail(rt, n->line, "AssertionError: expected leeway >= 0, got "
		    "%lld", (long long)leeway);
		goto out;
	}
	if ((int64_t)str_len(s) <= len + leeway) {
		r = jv_ref(s);
		goto out;
	}
	cut = len - el;
	off = str_off(s->u.s.p, s->u.s.n, (size_t)cut);
	if (!arg_bool(a[1], 0)) {
		/* rsplit(" ", 1)[0] of the cut text */
		for (i = off; i > 0 && s->u.s.p[i - 1] != ' '; i--)
			;
		if (i > 0)
			off = i - 1;
	}
	tpl_sb_add(&sb, s->u.s.p, off);
	if (end != NULL)
		tpl_sb_add(&sb, end->u.s.p, end->u.s.n);
	else
		tpl_sb_add(&sb, "...", 3);
	r = checked_str(rt, n->line, &sb);
out:
	jv_unref(s);
	jv_unref(end);
	return r;
}

/* html.unescape for the entities markupsafe's striptags meets most. */
static void
html_unescape(struct tpl_sb *sb, const char *s, size_t n)
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
			tpl_sb_add(sb, s + i, 1);
			continue;
		}
		if (i + 2 < n && s[i + 1] == '#') {
			base = (s[i + 2] == 'x' || s[i + 2] == 'X') ? 16 : 10;
			j = i + 2 + (base == 16);
			for (c = 0, k = j; k < n && k < j + 7 && (base == 16 ?
			    hexval(s[k]) >= 0 : is_digit(s[k])); k++)
				c = c * (uint32_t)base + (uint32_t)hexval(s[k]);
			if (k > j && c > 0 && c <= 0x10FFFF &&
			    !(c >= 0xD800 && c <= 0xDFFF)) {
				tpl_sb_utf8(sb, c);
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
			tpl_sb_utf8(sb, ents[k].cp);
			i += strlen(ents[k].name) + 1;
		} else
			tpl_sb_add(sb, s + i, 1);
	}
}

static struct jv *
f_striptags(struct rt *rt, const struct node *n, struct jv *v,
    struct jv **a)
{
	struct tpl_sb	 sb = { 0 }, ws = { 0 }, out = { 0 };
	struct jv	*s;
	const char	*p, *e, *q;
	size_t		 len, i, k, b;
	int		 pass;

	if ((s = soft_str(rt, n->line, v)) == NULL)
		return NULL;
	tpl_sb_add(&sb, s->u.s.p, s->u.s.n);
	jv_unref(s);
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
		i += ws_len(sb.p + i, sb.len - i);
		if (i >= sb.len)
			break;
		for (b = i; i < sb.len; i += k)
			if (u_space(tpl_utf8_next(sb.p + i, sb.len - i, &k)))
				break;
		if (ws.len > 0)
			tpl_sb_add(&ws, " ", 1);
		tpl_sb_add(&ws, sb.p + b, i - b);
	}
	tpl_sb_release(&sb);
	if (ws.p != NULL)
		html_unescape(&out, ws.p, ws.len);
	tpl_sb_release(&ws);
	if (out.p == NULL)
		tpl_sb_add(&out, "", 0);
	return checked_str(rt, n->line, &out);
}

static struct jv *
f_indent(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct tpl_sb	 sb = { 0 }, ind = { 0 };
	struct jv	*s, *lines = NULL;
	int64_t		 w = 4, j;
	size_t		 i, k, b, cnt = 0;
	uint32_t	 c;
	int		 blank = arg_bool(a[2], 0), first = arg_bool(a[1], 0);

	if (a[0] != NULL && a[0]->t == JT_STR)
		tpl_sb_add(&ind, a[0]->u.s.p, a[0]->u.s.n);
	else {
		if (a[0] != NULL && want_int(rt, n->line, a[0], "width", &w))
			return NULL;
		if (w > 1000)
			return fail(rt, n->line, "indent: width above 1000 is "
			    "not supported");
		for (j = 0; j < w; j++)
			tpl_sb_add(&ind, " ", 1);
	}
	if ((s = soft_str(rt, n->line, v)) == NULL) {
		tpl_sb_release(&ind);
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
		if (!u_linebreak(c))
			continue;
		if (cnt > 0) {
			tpl_sb_add(&sb, "\n", 1);
			if (blank || i > b)
				tpl_sb_add(&sb, ind.p ? ind.p : "", ind.len);
		} else if (first)
			tpl_sb_add(&sb, ind.p ? ind.p : "", ind.len);
		tpl_sb_add(&sb, s->u.s.p + b, i - b);
		cnt++;
		if (c == '\r' && i + 1 < s->u.s.n && s->u.s.p[i + 1] == '\n')
			k = 2;
		b = i + k;
		if (sb.len > rt->lim->max_value)
			break;
	}
	tpl_sb_release(&ind);
	jv_unref(s);
	if (sb.p == NULL)
		tpl_sb_add(&sb, "", 0);
	return checked_str(rt, n->line, &sb);
}

static struct jv *
f_items(struct rt *rt, const struct node *n, struct jv *v, struct jv **a)
{
	struct cargs	 ca = { 0 };
	struct jv	*m, *r;

	if (v->t == JT_UNDEF)
		return gen(jv_list(JT_LIST, 0)) ?: oom(rt);
	if (v->t != JT_DICT)
		return fail(rt, n->line, "TypeError: Can only get item pairs "
		    "from a mapping.");
	if ((m = method(rt, v, "items")) == NULL)
		return NULL;
	r = call_method(rt, n->line, m, &ca);
	jv_unref(m);
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
		return fail(rt, n->line, "TypeError: dictsort needs a dict");
	if (a[1] != NULL) {
		if (want_str(rt, n->line, a[1], "by") != 0)
			return NULL;
		by = a[1]->u.s.p;
	}
	if (strcmp(by, "key") && strcmp(by, "value"))
		return fail(rt, n->line, "FilterArgumentError: You can only "
		    "sort by either \"key\" or \"value\"");
	if ((m = method(rt, v, "items")) == NULL)
		return NULL;
	items = call_method(rt, n->line, m, &ca);
	jv_unref(m);
	if (items == NULL)
		return NULL;
	items->view = JV_PLAIN;
	if ((key = jv_int(by[0] == 'k' ? 0 : 1)) != NULL)
		r = sorted(rt, n->line, items, arg_bool(a[2], 0),
		    arg_bool(a[0], 0), key);
	else
		oom(rt);
	jv_unref(key);
	jv_unref(items);
	return r;
}

static const struct jfunc *find_test_fn(const char *name);

/* Applies test name (with extra args) to x: 1, 0 or -1 on error. */
static int run_test(struct rt *rt, const struct node *n,
    const struct jfunc *t, struct jv *x, struct cargs *ca);

/* map / select / reject / selectattr / rejectattr: their arguments come
 * unbound in ca. */
static struct jv *
seq_filter(struct rt *rt, const struct node *n, struct jv *v,
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
			return fail(rt, n->line, "TypeError: %s() got an "
			    "unexpected keyword argument '%s'", name,
			    ca->kwn[k]);
	}
	if (is_map && attr == NULL && ca->npos == 0)
		return fail(rt, n->line, "map requires a filter argument");
	if (is_attr) {
		if (ca->npos == 0)
			return fail(rt, n->line, "%s requires an attribute "
			    "name", name);
		attr = ca->pos[0];
		skip = 1;
	}
	if (!is_map || attr == NULL) {
		if (ca->npos > skip) {
			if (want_str(rt, n->line, ca->pos[skip], "name") != 0)
				return NULL;
			fn = is_map ? find_filter(ca->pos[skip]->u.s.p) :
			    find_test_fn(ca->pos[skip]->u.s.p);
			if (fn == NULL || (fn->params[0] != NULL &&
			    !strcmp(fn->params[0], "*")))
				return fail(rt, n->line, "no %s named '%s'",
				    is_map ? "filter" : "test",
				    ca->pos[skip]->u.s.p);
			skip++;
		}
		for (i = skip; i < ca->npos; i++)
			sub.pos[sub.npos++] = ca->pos[i];
	}
	if ((items = jv_iter(rt, n->line, v)) == NULL)
		return NULL;
	if ((r = jv_list(JT_LIST, items->u.l.n)) == NULL) {
		jv_unref(items);
		return oom(rt);
	}
	for (i = 0; i < items->u.l.n && rt->rc == 0; i++) {
		x = attr != NULL ? attr_path(rt, n->line, items->u.l.v[i],
		    attr) : jv_ref(items->u.l.v[i]);
		if (x == NULL)
			break;
		if (is_map) {
			struct jv	*y = NULL, *ba[5];
			struct node	 fake;	/* n, calling fn */

			if (attr != NULL) {
				if (x->t == JT_UNDEF && dflt != NULL) {
					jv_unref(x);
					x = jv_ref(dflt);
				}
				jv_push(r, x);
				continue;
			}
			if (bind(rt, n->line, fn->name, fn->params, &sub,
			    ba) == 0) {
				fake = *n;
				fake.fn = fn;
				y = fn->fn(rt, &fake, x, ba);
			}
			jv_unref(x);
			if (y == NULL)
				break;
			jv_push(r, y);
			continue;
		}
		if (fn == NULL)
			t = jv_truth(x);
		else
			t = run_test(rt, n, fn, x, &sub);
		jv_unref(x);
		if (t < 0)
			break;
		if (t == want)
			jv_push(r, jv_ref(items->u.l.v[i]));
	}
	jv_unref(items);
	if (rt->rc != 0) {
		jv_unref(r);
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
	{ "wordcount", { NULL }, f_wordcount },
	{ NULL, { NULL }, NULL }
};

static const struct jfunc *
find_filter(const char *name)
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

static const struct jfunc *
find_test(const char *name)
{
	return find_test_fn(name);
}

static int
run_test(struct rt *rt, const struct node *n, const struct jfunc *t,
    struct jv *x, struct cargs *ca)
{
	struct jv	*a[5], *o, *r;
	int		 code = 0, c;
	char		 what[64];

	code = ((const struct jtest *)(const void *)t)->code;
	snprintf(what, sizeof(what), "test '%s'", t->name);
	if (bind(rt, n->line, what, t->params, ca, a) != 0)
		return -1;
	o = a[0];
	if (t->params[0] != NULL && o == NULL) {
		fail(rt, n->line, "TypeError: %s needs an argument", what);
		return -1;
	}
	switch (code) {
	case TS_DEFINED: return x->t != JT_UNDEF;
	case TS_UNDEFINED: return x->t == JT_UNDEF;
	case TS_NONE: return x->t == JT_NONE;
	case TS_BOOLEAN: return x->t == JT_BOOL;
	case TS_TRUE: return x == &jv_true_s;
	case TS_FALSE: return x == &jv_false_s;
	case TS_INTEGER: return x->t == JT_INT;
	case TS_FLOAT: return x->t == JT_FLOAT;
	case TS_NUMBER: return is_num(x);
	case TS_STRING: return x->t == JT_STR;
	case TS_MAPPING: return x->t == JT_DICT;
	case TS_SEQUENCE:
		return x->t == JT_STR || x->t == JT_DICT || x->t == JT_UNDEF ||
		    (is_seq(x) && x->view == JV_PLAIN);
	case TS_ITERABLE:
		return x->t == JT_STR || x->t == JT_DICT || x->t == JT_UNDEF ||
		    is_seq(x) || x->t == JT_NS;
	case TS_CALLABLE: return x->t == JT_METHOD || x->t == JT_FUNC;
	case TS_ESCAPED: return x->t == JT_STR && x->markup;
	case TS_SAMEAS:
		return x == o || (x->t == JT_NONE && o->t == JT_NONE);
	case TS_ODD:
	case TS_EVEN:
	case TS_DIVISIBLEBY:
		if ((o = code == TS_DIVISIBLEBY ? jv_ref(o) : jv_int(2)) ==
		    NULL) {
			oom(rt);
			return -1;
		}
		r = arith(rt, n->line, OP_MOD, x, o);
		jv_unref(o);
		if (r == NULL)
			return -1;
		c = num_f(r) == (code == TS_ODD ? 1.0 : 0.0);
		jv_unref(r);
		return c;
	case TS_EQ: return compare(rt, n->line, CMP_EQ, x, o);
	case TS_NE: return compare(rt, n->line, CMP_NE, x, o);
	case TS_LT: return compare(rt, n->line, CMP_LT, x, o);
	case TS_LE: return compare(rt, n->line, CMP_LE, x, o);
	case TS_GT: return compare(rt, n->line, CMP_GT, x, o);
	case TS_GE: return compare(rt, n->line, CMP_GE, x, o);
	case TS_IN: return compare(rt, n->line, CMP_IN, x, o);
	default:		/* lower, upper */
		if ((r = soft_str(rt, n->line, x)) == NULL)
			return -1;
		o = str_is(r, code == TS_LOWER ? "islower" : "isupper");
		jv_unref(r);
		return o == &jv_true_s;
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
		if ((v = eval(rt, n->a)) == NULL)
			return NULL;
	} else
		v = jv_ref(subject);
	if (eval_args(rt, n, &ca) != 0)
		goto out;
	snprintf(what, sizeof(what), "filter '%s'", n->fn->name);
	if (n->fn->fn == NULL)
		r = seq_filter(rt, n, v, &ca);
	else if (bind(rt, n->line, what, n->fn->params, &ca, a) == 0)
		r = n->fn->fn(rt, n, v, a);
out:
	cargs_release(&ca);
	jv_unref(v);
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
	jv_unref(in);
	return out;
}

static struct jv *
eval_call(struct rt *rt, const struct node *n)
{
	struct cargs	 ca;
	struct jv	*f, *r = NULL;

	if ((f = eval(rt, n->a)) == NULL)
		return NULL;
	if (f->t == JT_UNDEF) {
		undef_error(rt, n->line, f);
		jv_unref(f);
		return NULL;
	}
	if (f->t != JT_METHOD && f->t != JT_FUNC) {
		fail(rt, n->line, "TypeError: '%s' object is not callable",
		    jv_type(f));
		jv_unref(f);
		return NULL;
	}
	if (eval_args(rt, n, &ca) == 0)
		r = f->t == JT_METHOD ? call_method(rt, n->line, f, &ca) :
		    call_global(rt, n->line, f->u.m.name, &ca);
	cargs_release(&ca);
	jv_unref(f);
	return r;
}

static struct jv *
eval_seq(struct rt *rt, const struct node *n)
{
	struct jv	*r, *v;
	size_t		 i;

	if (n->kind == N_DICT) {
		if ((r = jv_dict(n->nargs / 2)) == NULL)
			return oom(rt);
		for (i = 0; i + 1 < n->nargs; i += 2) {
			struct jv *k = eval(rt, n->args[i]), *old;

			if (k == NULL || (v = eval(rt, n->args[i + 1])) ==
			    NULL) {
				jv_unref(k);
				jv_unref(r);
				return NULL;
			}
			if ((old = dict_get(r, k)) != NULL) {
				size_t j;

				for (j = 0; r->u.d.v[j] != old; j++)
					;
				r->u.d.v[j] = v;
				jv_unref(old);
				jv_unref(k);
				continue;
			}
			r->u.d.k[r->u.d.n] = k;
			r->u.d.v[r->u.d.n++] = v;
		}
		return r;
	}
	if ((r = jv_list(n->kind == N_LIST ? JT_LIST : JT_TUPLE, n->nargs)) ==
	    NULL)
		return oom(rt);
	for (i = 0; i < n->nargs; i++) {
		if ((v = eval(rt, n->args[i])) == NULL) {
			jv_unref(r);
			return NULL;
		}
		jv_push(r, v);
	}
	return r;
}

static struct jv *
eval(struct rt *rt, const struct node *n)
{
	struct jv	*a = NULL, *b = NULL, *r = NULL, *p[3] = { 0 };
	struct tpl_sb	 sb = { 0 };
	size_t		 i;
	int		 t;
	struct cargs	 ca;

	if (rt->rc != 0 || step(rt, n->line, 1) != 0)
		return NULL;
	switch (n->kind) {
	case N_CONST: return jv_ref(n->val);
	case N_NAME: return lookup(rt, n);
	case N_ATTR:
		if ((a = eval(rt, n->a)) != NULL)
			r = get_attr(rt, n->line, a, n->name);
		break;
	case N_ITEM:
		if ((a = eval(rt, n->a)) != NULL &&
		    (b = eval(rt, n->b)) != NULL)
			r = get_item(rt, n->line, a, b);
		break;
	case N_SLICE:
		if ((a = eval(rt, n->a)) == NULL)
			break;
		for (i = 0; i < 3; i++)
			if (n->args[i] != NULL &&
			    (p[i] = eval(rt, n->args[i])) == NULL)
				break;
		if (i == 3)
			r = get_slice(rt, n->line, a, p);
		for (i = 0; i < 3; i++)
			jv_unref(p[i]);
		break;
	case N_CALL: return eval_call(rt, n);
	case N_FILTER: return eval_filter(rt, n, NULL);
	case N_TEST:
		if ((a = eval(rt, n->a)) == NULL)
			break;
		if (eval_args(rt, n, &ca) == 0 &&
		    (t = run_test(rt, n, n->fn, a, &ca)) >= 0)
			r = jv_bool(n->op ? !t : t);
		cargs_release(&ca);
		break;
	case N_BIN:
		if ((a = eval(rt, n->a)) != NULL &&
		    (b = eval(rt, n->b)) != NULL)
			r = arith(rt, n->line, n->op, a, b);
		break;
	case N_NEG:
	case N_POS:
		if ((a = eval(rt, n->a)) == NULL)
			break;
		if (a->t == JT_UNDEF)
			undef_error(rt, n->line, a);
		else if (!is_num(a))
			fail(rt, n->line, "TypeError: bad operand type for "
			    "unary %c: '%s'", n->kind == N_NEG ? '-' : '+',
			    jv_type(a));
		else if (a->t == JT_FLOAT)
			r = jv_float(n->kind == N_NEG ? -a->u.f : a->u.f) ?:
			    oom(rt);
		else if (n->kind == N_NEG && num_i(a) == INT64_MIN)
			fail(rt, n->line, "integers beyond 64 bits are not "
			    "supported");
		else
			r = jv_int(n->kind == N_NEG ? -num_i(a) : num_i(a)) ?:
			    oom(rt);
		break;
	case N_NOT:
		if ((a = eval(rt, n->a)) != NULL)
			r = jv_bool(!jv_truth(a));
		break;
	case N_AND:
	case N_OR:
		if ((a = eval(rt, n->a)) == NULL)
			break;
		if (jv_truth(a) == (n->kind == N_OR))
			return a;
		jv_unref(a);
		return eval(rt, n->b);
	case N_CMP:
		if ((a = eval(rt, n->args[0])) == NULL)
			break;
		for (i = 1; i < n->nargs; i++) {
			if ((b = eval(rt, n->args[i])) == NULL ||
			    (t = compare(rt, n->line, n->ops[i - 1], a, b)) < 0)
				break;
			jv_unref(a);
			a = b;
			b = NULL;
			if (!t)
				break;
		}
		if (rt->rc == 0)
			r = jv_bool(i == n->nargs);
		break;
	case N_COND:
		if ((a = eval(rt, n->b)) == NULL)
			break;
		if (jv_truth(a))
			r = eval(rt, n->a);
		else if (n->c != NULL)
			r = eval(rt, n->c);
		else
			r = jv_undef("the inline if-expression evaluated to "
			    "false and no else section was defined.") ?:
			    oom(rt);
		break;
	case N_LIST:
	case N_TUPLE:
	case N_DICT: return eval_seq(rt, n);
	case N_CONCAT:
		for (i = 0; i < n->nargs; i++) {
			if ((a = eval(rt, n->args[i])) == NULL ||
			    (b = jv_to_str(rt, n->line, a)) == NULL)
				break;
			tpl_sb_add(&sb, b->u.s.p, b->u.s.n);
			jv_unref(a);
			jv_unref(b);
			a = b = NULL;
			if (sb.len > rt->lim->max_value)
				break;
		}
		if (rt->rc == 0) {
			if (sb.p == NULL)
				tpl_sb_add(&sb, "", 0);
			r = checked_str(rt, n->line, &sb);
		}
		tpl_sb_release(&sb);
		break;
	}
	jv_unref(a);
	jv_unref(b);
	if (r == NULL && rt->rc == 0)
		oom(rt);
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
		tpl_sb_add(rt->out, s, n);
		if (rt->out->len > rt->lim->max_value) {
			limit(rt, line, "value size", rt->lim->max_value);
			return -1;
		}
	} else {
		for (i = 0; i < n; i++)
			rt->out_chars += ((unsigned char)s[i] & 0xC0) != 0x80;
		if (rt->out_chars > rt->lim->max_output) {
			limit(rt, line, "output length", rt->lim->max_output);
			return -1;
		}
		tpl_sb_add(rt->out, s, n);
	}
	if (rt->out->oom) {
		oom(rt);
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
			jv_unref(f->vals[i]);
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
			jv_unref(v);
			oom(rt);
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
		jv_unref(f->vals[i]);
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
		return frame_set(rt, f, st->tg[0], jv_ref(v));
	if ((items = jv_iter(rt, st->line, v)) == NULL)
		return -1;
	if (items->u.l.n != st->ntg) {
		if (items->u.l.n < st->ntg)
			fail(rt, st->line, "ValueError: not enough values to "
			    "unpack (expected %zu, got %zu)", st->ntg,
			    items->u.l.n);
		else
			fail(rt, st->line, "ValueError: too many values to "
			    "unpack (expected %zu)", st->ntg);
		jv_unref(items);
		return -1;
	}
	for (i = 0; i < st->ntg; i++)
		if (frame_set(rt, f, st->tg[i], jv_ref(items->u.l.v[i])) != 0)
			break;
	jv_unref(items);
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

	if ((it = eval(rt, st->e)) == NULL ||
	    (items = jv_iter(rt, st->line, it)) == NULL)
		goto out;
	if (st->cond != NULL) {
		if ((kept = jv_list(JT_LIST, items->u.l.n)) == NULL) {
			oom(rt);
			goto out;
		}
		for (i = 0; i < items->u.l.n; i++) {
			memset(&f, 0, sizeof(f));
			f.up = rt->top;
			rt->top = &f;
			t = assign(rt, st, &f, items->u.l.v[i]) == 0 &&
			    (c = eval(rt, st->cond)) != NULL ?
			    (jv_truth(c) + 0 * (jv_unref(c), 0)) : -1;
			rt->top = f.up;
			frame_release(&f);
			if (t < 0)
				goto out;
			if (t)
				jv_push(kept, jv_ref(items->u.l.v[i]));
		}
		jv_unref(items);
		items = kept;
		kept = NULL;
	}
	if (items->u.l.n == 0) {
		rc = exec_block(rt, &st->orelse);
		goto out;
	}
	if ((lp = jv_new(JT_LOOP)) == NULL) {
		oom(rt);
		goto out;
	}
	lp->u.loop.items = jv_ref(items);
	for (i = 0; i < items->u.l.n; i++) {
		if (++rt->loops > rt->lim->max_loop) {
			limit(rt, st->line, "loop iterations",
			    rt->lim->max_loop);
			goto out;
		}
		lp->u.loop.i = i;
		memset(&f, 0, sizeof(f));
		f.up = rt->top;
		rt->top = &f;
		t = assign(rt, st, &f, items->u.l.v[i]);
		if (t == 0)
			t = frame_set(rt, &f, "loop", jv_ref(lp));
		if (t == 0)
			t = exec_block(rt, &st->body);
		rt->top = f.up;
		frame_release(&f);
		if (t != 0)
			goto out;
	}
	rc = 0;
out:
	jv_unref(lp);
	jv_unref(kept);
	jv_unref(items);
	jv_unref(it);
	return rt->rc != 0 ? -1 : rc;
}

/* Runs body into a fresh buffer; the text as a string value. */
static struct jv *
capture(struct rt *rt, const struct block *body, int line)
{
	struct tpl_sb	 sb = { 0 }, *saved = rt->out;
	struct jv	*v = NULL;

	rt->out = &sb;
	rt->capturing++;
	if (exec_block(rt, body) == 0) {
		if (sb.p == NULL)
			tpl_sb_add(&sb, "", 0);
		v = checked_str(rt, line, &sb);
	}
	rt->capturing--;
	rt->out = saved;
	tpl_sb_release(&sb);
	return v;
}

static int
exec_stmt(struct rt *rt, const struct stmt *st)
{
	struct tpl_sb	 sb = { 0 };
	struct jv	*v = NULL, *ns, *r;
	int		 rc = -1;
	size_t		 i;

	switch (st->kind) {
	case S_TEXT:
		return emit(rt, st->line, st->text, st->len);
	case S_PRINT:
		if ((v = eval(rt, st->e)) == NULL)
			break;
		if (v->t == JT_STR)
			rc = emit(rt, st->line, v->u.s.p, v->u.s.n);
		else if (jv_write(rt, st->line, &sb, v, 0, 0) == 0) {
			if (sb.oom)
				oom(rt);
			else
				rc = emit(rt, st->line, sb.p ? sb.p : "",
				    sb.len);
		}
		break;
	case S_IF:
		if ((v = eval(rt, st->e)) == NULL)
			break;
		rc = exec_block(rt, jv_truth(v) ? &st->body : &st->orelse);
		break;
	case S_FOR:
		return exec_for(rt, st);
	case S_SET:
		if ((v = eval(rt, st->e)) == NULL)
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
				fail(rt, st->line, "cannot assign attribute on "
				    "non-namespace object");
				jv_unref(ns);
				break;
			}
			for (i = 0; i < ns->u.d.n; i++)
				if (!strcmp(ns->u.d.k[i]->u.s.p, st->attr))
					break;
			if (i < ns->u.d.n) {
				jv_unref(ns->u.d.v[i]);
				ns->u.d.v[i] = jv_ref(v);
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
				    jv_str(st->attr)) == NULL)
					oom(rt);
				else {
					ns->u.d.v[ns->u.d.n++] = jv_ref(v);
					rc = 0;
				}
			}
			jv_unref(ns);
		}
		break;
	case S_SETBLOCK:
	case S_FILTER:
		if ((v = capture(rt, &st->body, st->line)) == NULL)
			break;
		if (st->filt != NULL) {
			r = eval_chain(rt, st->filt, v);
			jv_unref(v);
			if ((v = r) == NULL)
				break;
		}
		if (st->kind == S_SETBLOCK) {
			rc = frame_set(rt, rt->top, st->tg[0], jv_ref(v));
			break;
		}
		if (jv_write(rt, st->line, &sb, v, 0, 0) == 0) {
			if (sb.oom)
				oom(rt);
			else
				rc = emit(rt, st->line, sb.p ? sb.p : "",
				    sb.len);
		}
		break;
	}
	tpl_sb_release(&sb);
	jv_unref(v);
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

void
jinja_limits_default(struct jinja_limits *lim)
{
	lim->max_template = 1 << 20;
	lim->max_output = 400000;
	lim->max_loop = 100000;
	lim->max_depth = 64;
	lim->max_expr_depth = 64;
	lim->max_value = 4 << 20;
	lim->max_steps = 10000000;
}

void
jinja_free(struct jinja_tpl *t)
{
	if (t == NULL)
		return;
	block_free(&t->root);
	free(t);
}

/* 1 when s (n bytes) is well-formed UTF-8 without surrogates. */
static int
utf8_valid(const char *s, size_t n)
{
	const unsigned char	*u = (const unsigned char *)s;
	size_t			 i = 0, k, j;
	uint32_t		 c, min;

	while (i < n) {
		if (u[i] < 0x80) {
			i++;
			continue;
		}
		if ((u[i] & 0xE0) == 0xC0)
			k = 2, c = u[i] & 0x1F, min = 0x80;
		else if ((u[i] & 0xF0) == 0xE0)
			k = 3, c = u[i] & 0x0F, min = 0x800;
		else if ((u[i] & 0xF8) == 0xF0)
			k = 4, c = u[i] & 0x07, min = 0x10000;
		else
			return 0;
		if (n - i < k)
			return 0;
		for (j = 1; j < k; j++) {
			if ((u[i + j] & 0xC0) != 0x80)
				return 0;
			c = c << 6 | (u[i + j] & 0x3F);
		}
		if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
			return 0;
		i += k;
	}
	return 1;
}

int
jinja_compile(const char *src, size_t len, const struct jinja_limits *lim,
    char *err, struct jinja_tpl **out)
{
	struct jinja_tpl	*t = NULL;
	struct ps		 ps;
	char			*norm = NULL;
	size_t			 i, n = 0;
	int			 rc;

	*out = NULL;
	memset(&ps, 0, sizeof(ps));
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if (lim != NULL)
		t->lim = *lim;
	else
		jinja_limits_default(&t->lim);
	ps.lim = &t->lim;
	ps.rt.lim = &t->lim;
	ps.rt.err = err;
	if (len > t->lim.max_template) {
		rc = ENGINE_ELIMIT;
		if (err != NULL)
			snprintf(err, ENGINE_ERRMAX, "template size: more "
			    "than %zu bytes", t->lim.max_template);
		goto out;
	}
	if (!utf8_valid(src, len)) {
		rc = engine_invalid(err, "the template is not valid UTF-8");
		goto out;
	}
	/* Newlines become \n and one trailing newline goes, as Jinja2's
	 * lexer does without keep_trailing_newline. */
	if ((norm = malloc(len + 1)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	for (i = 0; i < len; i++) {
		if (src[i] == '\r') {
			norm[n++] = '\n';
			if (i + 1 < len && src[i + 1] == '\n')
				i++;
		} else
			norm[n++] = src[i];
	}
	if (n > 0 && norm[n - 1] == '\n')
		n--;
	norm[n] = '\0';
	ps.src = norm;
	ps.len = n;
	ps.line = 1;
	if ((ps.toks = calloc(1, sizeof(*ps.toks))) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	ps.captok = 1;
	if (parse_body(&ps, &t->root, NULL, NULL) != 0) {
		rc = ps.rt.rc != 0 ? ps.rt.rc : ENGINE_EINVAL;
		goto out;
	}
	*out = t;
	t = NULL;
	rc = 0;
out:
	toks_clear(&ps);
	free(ps.toks);
	free(norm);
	jinja_free(t);
	return rc;
}

int
jinja_render_compiled(const struct jinja_tpl *t, const json_t *vars,
    char *err, char **out, size_t *outlen)
{
	struct rt	 rt;
	struct tpl_sb	 sb = { 0 };
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
	if (vars != NULL && (rt.vars = jv_from_json(vars, 0, &deep)) == NULL) {
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
		tpl_sb_add(&sb, "", 0);
	if (outlen != NULL)
		*outlen = sb.len;
	if ((*out = tpl_sb_take(&sb)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	rc = 0;
out:
	frame_release(&root);
	jv_unref(rt.vars);
	tpl_sb_release(&sb);
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
