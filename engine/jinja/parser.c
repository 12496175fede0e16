/*
 * parser.c — the Jinja2 parser: builds the syntax tree of expressions (by
 * precedence, as Jinja2's parser does) and of statements (if, for, set,
 * filter blocks, raw, whitespace control), refuses what is outside the
 * subset, and compiles a template (jinja_compile, jinja_free).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/jinja/jinja.h"

/* ====== Parser: expressions ====== */

/* Jinja2 filters that exist but are outside the subset. */
static const char *const unsupported_filters[] = { "batch",
    "filesizeformat", "format", "groupby", "pprint", "random", "slice",
    "urlencode", "urlize", "wordwrap", "xmlattr", "attr", NULL };

static void node_free(struct node *n);

static void
node_free(struct node *n)
{
	size_t i;

	if (n == NULL)
		return;
	free(n->name);
	jinja_jv_unref(n->val);
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
	return jinja_fail(&ps->rt, cur(ps)->line, "syntax error: unexpected %s",
	    d);
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
	jinja_fail(&ps->rt, cur(ps)->line, "syntax error: expected '%s', got "
	    "%s", op, d);
	return -1;
}

static struct node *
mknode(struct ps *ps, enum nk kind, int line)
{
	struct node *n;

	if ((n = calloc(1, sizeof(*n))) == NULL)
		return jinja_oom(&ps->rt);
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
		jinja_limit(&ps->rt, n->line, "expression depth",
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
		jinja_oom(&ps->rt);
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
		jinja_limit(&ps->rt, cur(ps)->line, "expression depth",
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
		jinja_oom(&ps->rt);
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
			jinja_fail(&ps->rt, cur(ps)->line, "*args and **kwargs "
			    "in calls are not supported");
			return -1;
		}
		kw = NULL;
		if (cur(ps)->t == T_NAME && tok_op(peek(ps, 1), "=")) {
			if ((kw = tok_dup(ps, cur(ps))) == NULL)
				return -1;
			ps->itok += 2;
			seen_kw = 1;
		} else if (seen_kw) {
			jinja_fail(&ps->rt, cur(ps)->line, "syntax error: "
			    "positional argument after a keyword argument");
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
		return jinja_fail(&ps->rt, line, "no filter named '%.*s.%.*s'",
		    (int)ps->toks[ps->itok - 1].n, ps->toks[ps->itok - 1].p,
		    (int)peek(ps, 1)->n, peek(ps, 1)->p);
	}
	if ((n->fn = jinja_find_filter(n->name)) == NULL) {
		if (jinja_in_list(unsupported_filters, n->name) != NULL)
			jinja_fail(&ps->rt, line, "the filter '%s' is not "
			    "supported", n->name);
		else
			jinja_fail(&ps->rt, line, "no filter named '%s'",
			    n->name);
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
	if ((n->fn = jinja_find_test(n->name)) == NULL) {
		jinja_fail(&ps->rt, line, "no test named '%s'", n->name);
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
			return jinja_fail(&ps->rt, line, "syntax error: "
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
			jinja_oom(&ps->rt);
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
				m->b->val = jinja_jv_ref(t->val);
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
	struct dbuf	 sb = { 0 };

	if (t->t == T_NAME) {
		if ((n = mknode(ps, N_CONST, t->line)) == NULL)
			return NULL;
		if (tok_name(t, "true") || tok_name(t, "True"))
			n->val = &jinja_jv_true_s;
		else if (tok_name(t, "false") || tok_name(t, "False"))
			n->val = &jinja_jv_false_s;
		else if (tok_name(t, "none") || tok_name(t, "None"))
			n->val = &jinja_jv_none_s;
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
			dbuf_add(&sb, cur(ps)->val->u.s.p,
			    cur(ps)->val->u.s.n);
		if (sb.err || (n = mknode(ps, N_CONST, t->line)) == NULL) {
			dbuf_free(&sb);
			return sb.err ? jinja_oom(&ps->rt) : NULL;
		}
		if ((n->val = jinja_jv_str_sb(&sb)) == NULL) {
			node_free(n);
			return jinja_oom(&ps->rt);
		}
		return n;
	}
	if (t->t == T_INT || t->t == T_FLOAT) {
		if ((n = mknode(ps, N_CONST, t->line)) == NULL)
			return NULL;
		n->val = jinja_jv_ref(t->val);
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
			return jinja_oom(&ps->rt);
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
			return jinja_oom(&ps->rt);
		b->v = v;
		b->cap = cap;
	}
	if ((st = calloc(1, sizeof(*st))) == NULL)
		return jinja_oom(&ps->rt);
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
		jinja_oom(&ps->rt);
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
	jinja_fail(&ps->rt, cur(ps)->line, "syntax error: expected end of tag, "
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
			jinja_oom(&ps->rt);
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
		jinja_limit(&ps->rt, cur(ps)->line, "nesting depth",
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
		jinja_fail(&ps->rt, line, "recursive for loops are not "
		    "supported");
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
		jinja_fail(&ps->rt, t->line, "syntax error: expected a tag "
		    "name, got %s", d);
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
			jinja_fail(&ps->rt, t->line, "the '%s' tag is not "
			    "supported (macros, call blocks, "
			    "include/import/extends, blocks, with and loop "
			    "controls are outside the subset)", unsupported[i]);
			return -1;
		}
	jinja_fail(&ps->rt, t->line, "unknown tag '%.*s'",
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
	i += jinja_ws_len(s + i, n - i);
	if (n - i < w || memcmp(s + i, word, w) != 0)
		return 0;
	i += w;
	return i + jinja_ws_len(s + i, n - i);
}

/* {% raw %} at pos (already matched, len m): its text up to endraw. */
static int
parse_raw(struct ps *ps, struct block *b, size_t pos, size_t m)
{
	const char	*s = ps->src;
	size_t		 i = pos + m, j, k, end;
	int		 minus, line = jinja_ps_line(ps, pos), endline;

	if (s[i] == '-') {
		i += 3;
		i += jinja_ws_len(s + i, ps->len - i);
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
		endline = jinja_ps_line(ps, j);
		(void)endline;
		if (text_add(ps, b, s + i, minus ? jinja_rstrip_len(s + i,
		    j - i) : j - i, line) != 0)
			return -1;
		if (s[k] == '-')
			end += jinja_ws_len(s + end, ps->len - end);
		ps->pos = end;
		return 0;
	}
	jinja_fail(&ps->rt, line, "missing end of raw directive");
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
		dend = strip ? start + jinja_rstrip_len(s + start,
		    idx - start) : idx;
		line = jinja_ps_line(ps, start);
		if (text_add(ps, b, s + start, dend - start, line) != 0)
			return -1;
		if (idx == ps->len) {
			ps->pos = idx;
			if (ends != NULL) {
				for (m = 0; ends[m + 1] != NULL; m++)
					;
				jinja_fail(&ps->rt, jinja_ps_line(ps, idx),
				    "unexpected end of template: expected '{%% "
				    "%s %%}'", ends[m]);
				return -1;
			}
			return 0;
		}
		line = jinja_ps_line(ps, idx);
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
				jinja_fail(&ps->rt, line, "missing end of "
				    "comment tag");
				return -1;
			}
			ps->pos = (size_t)(c - s) + 2;
			if (c > s + m && c[-1] == '-')
				ps->pos += jinja_ws_len(s + ps->pos,
				    ps->len - ps->pos);
			continue;
		}
		ps->pos = m;
		if (jinja_lex_tag(ps, kind == '{') != 0)
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
	jinja_toks_clear(&ps);
	free(ps.toks);
	free(norm);
	jinja_free(t);
	return rc;
}
