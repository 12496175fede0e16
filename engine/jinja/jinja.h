/*
 * jinja.h — what the files of the Jinja2 engine share; private to
 * engine/jinja/. The rest of the engine calls it through jinja_compile,
 * jinja_render_compiled, jinja_render and jinja_free (engine/internal.h).
 *
 * Dify renders templates with jinja2.Template(template).render(**inputs) in
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
 * Files: values.c (values, errors, conversions), lexer.c, parser.c (the
 * syntax tree; jinja_compile), evaluator.c (expressions and statements;
 * jinja_render_compiled), methods.c (Python's str methods, calls and
 * globals), filters.c (filters and tests). A function's contract is
 * stated where it is defined.
 */
#ifndef FLOWCGI_ENGINE_JINJA_H
#define FLOWCGI_ENGINE_JINJA_H

#include <stddef.h>
#include <stdint.h>

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

/* None, True and False: one shared copy each, never freed. */
extern struct jv jinja_jv_none_s;
extern struct jv jinja_jv_true_s;
extern struct jv jinja_jv_false_s;

#define IMMORTAL(v) ((v) == &jinja_jv_none_s || (v) == &jinja_jv_true_s || \
    (v) == &jinja_jv_false_s)

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
	struct dbuf			*out;
	size_t				 out_chars;
	int				 capturing;
	size_t				 loops, steps;
	int				 rc;
	char				*err;
	struct frame			*top;
	struct jv			*vars;
};

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

/* ====== Calls ====== */

/* The arguments of a call: positional, then keyword. */
#define MAXARGS 8

struct cargs {
	struct jv	*pos[MAXARGS];
	size_t		 npos;
	const char	*kwn[MAXARGS];
	struct jv	*kwv[MAXARGS];
	size_t		 nkw;
};

/* ====== values.c ====== */

struct jv	*jinja_jv_ref(struct jv *v);
void	jinja_jv_unref(struct jv *v);
struct jv	*jinja_jv_new(enum jt t);
struct jv	*jinja_jv_bool(int b);
struct jv	*jinja_jv_int(int64_t i);
struct jv	*jinja_jv_float(double f);
struct jv	*jinja_jv_strn(const char *s, size_t n);
struct jv	*jinja_jv_str(const char *s);
struct jv	*jinja_jv_str_sb(struct dbuf *sb);
struct jv	*jinja_jv_undef(const char *hint);
struct jv	*jinja_jv_list(enum jt t, size_t cap);
void	jinja_jv_push(struct jv *l, struct jv *item);
struct jv	*jinja_jv_dict(size_t cap);
int	jinja_is_num(const struct jv *v);
int	jinja_is_seq(const struct jv *v);
double	jinja_num_f(const struct jv *v);
int64_t	jinja_num_i(const struct jv *v);
const char	*jinja_jv_type(const struct jv *v);
size_t	jinja_str_len(const struct jv *v);
size_t	jinja_str_off(const char *s, size_t n, size_t ci);
int	jinja_jv_write(struct rt *rt, int line, struct dbuf *sb,
	    const struct jv *v, int repr, int depth);
struct jv	*jinja_jv_to_str(struct rt *rt, int line, struct jv *v);
int	jinja_jv_truth(const struct jv *v);
int	jinja_jv_eq(const struct jv *a, const struct jv *b);
int	jinja_jv_cmp(struct rt *rt, int line, const struct jv *a,
	    const struct jv *b, const char *op, int *res);
struct jv	*jinja_jv_from_json(const json_t *j, int depth, int *deep);
struct jv	*jinja_jv_iter(struct rt *rt, int line, struct jv *v);
int64_t	jinja_jv_len(struct rt *rt, int line, const struct jv *v);
void	*jinja_fail(struct rt *rt, int line, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
void	*jinja_limit(struct rt *rt, int line, const char *what, size_t max);
void	*jinja_oom(struct rt *rt);
int	jinja_step(struct rt *rt, int line, size_t n);
void	*jinja_undef_error(struct rt *rt, int line, const struct jv *v);

/* ====== lexer.c ====== */

int	jinja_ps_line(struct ps *ps, size_t pos);
size_t	jinja_ws_len(const char *s, size_t n);
size_t	jinja_rstrip_len(const char *s, size_t n);
void	jinja_toks_clear(struct ps *ps);
int	jinja_hexval(char c);
int	jinja_is_digit(char c);
int	jinja_lex_tag(struct ps *ps, int var);

/* ====== evaluator.c ====== */

const char	*jinja_in_list(const char *const *l, const char *name);
struct jv	*jinja_method(struct rt *rt, struct jv *self, const char *name);
struct jv	*jinja_dict_get(const struct jv *d, const struct jv *key);
struct jv	*jinja_get_item(struct rt *rt, int line, struct jv *obj,
	    struct jv *key);
struct jv	*jinja_checked_str(struct rt *rt, int line, struct dbuf *sb);
void	jinja_html_escape(struct dbuf *sb, const char *s, size_t n);
struct jv	*jinja_arith(struct rt *rt, int line, int op, struct jv *a,
	    struct jv *b);
int	jinja_compare(struct rt *rt, int line, int op, struct jv *a,
	    struct jv *b);
struct jv	*jinja_eval(struct rt *rt, const struct node *n);

/* ====== methods.c ====== */

int	jinja_u_space(uint32_t c);
int	jinja_u_word(uint32_t c);
int	jinja_u_linebreak(uint32_t c);
void	jinja_str_case(struct dbuf *sb, const char *s, size_t n, char mode);
void	jinja_str_strip(const char *s, size_t n, const struct jv *chars,
	    int left, int right, size_t *b, size_t *e);
struct jv	*jinja_str_replace(struct rt *rt, int line,
	    const struct jv *s, const struct jv *old, const struct jv *new,
	    int64_t count);
int	jinja_py_parse_float(const char *s, size_t n, double *out);
int	jinja_py_parse_int(const char *s, size_t n, int base, int64_t *out);
void	jinja_cargs_release(struct cargs *ca);
int	jinja_eval_args(struct rt *rt, const struct node *n, struct cargs *ca);
int	jinja_bind(struct rt *rt, int line, const char *what,
	    const char *const *params, const struct cargs *ca, struct jv **a);
int	jinja_want_str(struct rt *rt, int line, const struct jv *v,
	    const char *what);
int	jinja_want_int(struct rt *rt, int line, const struct jv *v,
	    const char *what, int64_t *out);
struct jv	*jinja_str_pad(struct rt *rt, int line, const struct jv *s,
	    int64_t width, const struct jv *fill, char how);
struct jv	*jinja_str_is(const struct jv *s, const char *name);
struct jv	*jinja_call_method(struct rt *rt, int line, struct jv *m,
	    struct cargs *ca);
struct jv	*jinja_call_global(struct rt *rt, int line, const char *name,
	    struct cargs *ca);

/* ====== filters.c ====== */

struct jv	*jinja_seq_filter(struct rt *rt, const struct node *n,
	    struct jv *v, struct cargs *ca);
const struct jfunc	*jinja_find_filter(const char *name);
const struct jfunc	*jinja_find_test(const char *name);
int	jinja_run_test(struct rt *rt, const struct node *n,
	    const struct jfunc *t, struct jv *x, struct cargs *ca);

#endif
