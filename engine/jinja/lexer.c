/*
 * lexer.c — the Jinja2 lexer: splits the inside of a {{ }} or {% %} tag
 * into tokens (names, string and number literals with Python's escapes
 * and digit forms, operators) for the parser.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/jinja/jinja.h"

/* ====== Lexer ====== */

int
jinja_ps_line(struct ps *ps, size_t pos)
{
	for (; ps->lpos < pos && ps->lpos < ps->len; ps->lpos++)
		if (ps->src[ps->lpos] == '\n')
			ps->line++;
	return ps->line;
}

/* Length of the Unicode whitespace at s (n bytes), or 0. */
size_t
jinja_ws_len(const char *s, size_t n)
{
	size_t	 i = 0, k;

	while (i < n && jinja_u_space(tpl_utf8_next(s + i, n - i, &k)))
		i += k;
	return i;
}

/* Length of s without its trailing Unicode whitespace. */
size_t
jinja_rstrip_len(const char *s, size_t n)
{
	size_t	 i, k, end = 0;

	for (i = 0; i < n; i += k)
		if (!jinja_u_space(tpl_utf8_next(s + i, n - i, &k)))
			end = i + k;
	return end;
}

void
jinja_toks_clear(struct ps *ps)
{
	size_t i;

	for (i = 0; i < ps->ntok; i++)
		jinja_jv_unref(ps->toks[i].val);
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
			return jinja_oom(&ps->rt);
		ps->toks = nt;
		ps->captok = cap;
	}
	nt = &ps->toks[ps->ntok++];
	nt->t = t;
	nt->p = p;
	nt->n = n;
	nt->val = NULL;
	nt->line = jinja_ps_line(ps, (size_t)(p - ps->src));
	return nt;
}

int
jinja_hexval(char c)
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
	struct dbuf	 sb = { 0 };
	char		 buf[16];
	uint32_t	 c;
	size_t		 i, k, j, want;
	int		 h, m;

	for (i = 0; i < n; i++) {
		if (s[i] != '\\' || i + 1 == n) {
			dbuf_add(&sb, s + i, 1);
			continue;
		}
		i++;
		switch (s[i]) {
		case '\n': continue;
		case '\\': dbuf_add(&sb, "\\", 1); continue;
		case '\'': dbuf_add(&sb, "'", 1); continue;
		case '"': dbuf_add(&sb, "\"", 1); continue;
		case 'a': dbuf_add(&sb, "\a", 1); continue;
		case 'b': dbuf_add(&sb, "\b", 1); continue;
		case 'f': dbuf_add(&sb, "\f", 1); continue;
		case 'n': dbuf_add(&sb, "\n", 1); continue;
		case 'r': dbuf_add(&sb, "\r", 1); continue;
		case 't': dbuf_add(&sb, "\t", 1); continue;
		case 'v': dbuf_add(&sb, "\v", 1); continue;
		case 'x': want = 2; break;
		case 'u': want = 4; break;
		case 'U': want = 8; break;
		case 'N':
			dbuf_free(&sb);
			return jinja_fail(&ps->rt, line, "\\N{...} escapes are "
			    "not supported");
		default:
			if (s[i] >= '0' && s[i] <= '7') {
				c = 0;
				for (j = 0; j < 3 && i < n && s[i] >= '0' &&
				    s[i] <= '7'; j++, i++)
					c = c * 8 + (uint32_t)(s[i] - '0');
				i--;
				tpl_add_utf8(&sb, c);
			} else if ((unsigned char)s[i] >= 0x80) {
				/* backslashreplace, then "\\" decodes. */
				c = tpl_utf8_next(s + i, n - i, &k);
				m = snprintf(buf, sizeof(buf), c < 0x100 ?
				    "\\x%02x" : c < 0x10000 ? "\\u%04x" :
				    "\\U%08x", c);
				dbuf_add(&sb, buf, (size_t)m);
				i += k - 1;
			} else {
				dbuf_add(&sb, "\\", 1);
				dbuf_add(&sb, s + i, 1);
			}
			continue;
		}
		c = 0;
		for (j = 1; j <= want; j++) {
			if (i + j >= n || (h = jinja_hexval(s[i + j])) < 0) {
				dbuf_free(&sb);
				return jinja_fail(&ps->rt, line, "truncated "
				    "\\%c escape in a string", s[i]);
			}
			c = c * 16 + (uint32_t)h;
		}
		if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
			dbuf_free(&sb);
			return jinja_fail(&ps->rt, line, "\\%c escape outside "
			    "Unicode scalar values in a string", s[i]);
		}
		tpl_add_utf8(&sb, c);
		i += want;
	}
	if (sb.err) {
		dbuf_free(&sb);
		return jinja_oom(&ps->rt);
	}
	{
		struct jv *v = jinja_jv_str_sb(&sb);

		return v != NULL ? v : jinja_oom(&ps->rt);
	}
}

int
jinja_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int
is_name_char(char c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	    (unsigned char)c >= 0x80 || (!first && jinja_is_digit(c));
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
	return jinja_is_digit(c);
}

static int
is_hex(char c)
{
	return jinja_hexval(c) >= 0;
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

	line = jinja_ps_line(ps, (size_t)(s - ps->src));
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
		jinja_fail(&ps->rt, line, "number literal too long");
		return -1;
	}
	if ((t = tok_add(ps, isf ? T_FLOAT : T_INT, s, i)) == NULL)
		return -1;
	if (isf)
		t->val = jinja_jv_float(strtod(buf, &end));
	else {
		for (k = 0; k < m; k++)
			if (__builtin_mul_overflow(iv, base, &iv) ||
			    __builtin_add_overflow(iv, jinja_hexval(buf[k]),
			    &iv)) {
				jinja_fail(&ps->rt, line, "integer literal "
				    "beyond 64 bits is not supported");
				return -1;
			}
		t->val = jinja_jv_int(iv);
	}
	if (t->val == NULL) {
		jinja_oom(&ps->rt);
		return -1;
	}
	return (int)i;
}

/*
 * Tokens of one {{ }} (var 1) or {% %} tag from ps->pos to its end,
 * brackets balanced as Jinja2 does; ends with a T_END token whose n is 1
 * when it was "-%}" / "-}}" (the whitespace after is then skipped).
 */
int
jinja_lex_tag(struct ps *ps, int var)
{
	static const char *const ops[] = { "//", "**", "==", "!=", ">=", "<=",
	    "+", "-", "/", "*", "%", "~", "[", "]", "(", ")", "{", "}", ">",
	    "<", "=", ".", ":", "|", ",", ";" };
	const char	*s = ps->src;
	char		 stack[256];
	size_t		 nst = 0, i, k, q;
	int		 m, line;
	struct tok	*t;

	jinja_toks_clear(ps);
	for (;;) {
		ps->pos += jinja_ws_len(s + ps->pos, ps->len - ps->pos);
		i = ps->pos;
		line = jinja_ps_line(ps, i);
		if (i >= ps->len)
			return jinja_fail(&ps->rt, line, "unexpected end of "
			    "template (an unclosed %s)", var ? "{{" : "{%"), -1;
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
					ps->pos += jinja_ws_len(s + ps->pos,
					    ps->len - ps->pos);
				return 0;
			}
		}
		if (jinja_is_digit(s[i])) {
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
				return jinja_fail(&ps->rt, line, "unterminated "
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
			return jinja_fail(&ps->rt, line, "unexpected char '%c'",
			    s[i]), -1;
		if (ops[k][0] == '(' || ops[k][0] == '[' || ops[k][0] == '{') {
			if (nst == sizeof(stack))
				return jinja_limit(&ps->rt, line, "expression "
				    "depth", sizeof(stack)), -1;
			stack[nst++] = ops[k][0] == '(' ? ')' :
			    ops[k][0] == '[' ? ']' : '}';
		} else if (ops[k][0] == ')' || ops[k][0] == ']' ||
		    ops[k][0] == '}') {
			if (nst == 0 || stack[nst - 1] != ops[k][0])
				return jinja_fail(&ps->rt, line, "unexpected "
				    "'%c'", ops[k][0]), -1;
			nst--;
		}
		if (tok_add(ps, T_OP, s + i, strlen(ops[k])) == NULL)
			return -1;
		ps->pos += strlen(ops[k]);
	}
}
