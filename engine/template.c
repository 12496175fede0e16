/*
 * template.c — Dify's {{#node.var#}} variable templates and the conversion
 * of values to text that every node shares.
 *
 * The rules follow api/core/workflow/runtime/variable_pool.py
 * (VARIABLE_PATTERN, convert_template) and api/core/variables/segments.py
 * (Segment.text / Segment.markdown): Python's str() and repr() for numbers,
 * lists and scalars, json.dumps for objects and lists of strings.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"

/* Values nested deeper than this are refused rather than recursed into. */
#define TPL_MAX_NEST 512

/* ====== Python number and string forms ====== */

void
tpl_add_py_int(struct dbuf *sb, int64_t v)
{
	char buf[32];
	int  n;

	n = snprintf(buf, sizeof(buf), "%lld", (long long)v);
	dbuf_add(sb, buf, (size_t)n);
}

void
tpl_add_py_float(struct dbuf *sb, double d)
{
	char	 buf[40], digits[24], out[48];
	char	*e;
	int	 prec, nd = 0, exp10, decpt, i, n = 0;
	size_t	 k;

	if (isnan(d)) {
		dbuf_addstr(sb, "nan");
		return;
	}
	if (isinf(d)) {
		dbuf_addstr(sb, d < 0 ? "-inf" : "inf");
		return;
	}
	/* The shortest digit string that reads back as d (repr's 'r'). */
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*e", prec - 1, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	e = strchr(buf, 'e');
	exp10 = (int)strtol(e + 1, NULL, 10);
	for (k = 0; buf + k < e; k++)
		if (buf[k] >= '0' && buf[k] <= '9')
			digits[nd++] = buf[k];
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	if (signbit(d))
		out[n++] = '-';
	decpt = exp10 + 1;
	if (decpt > -4 && decpt <= 16) {
		if (decpt <= 0) {
			out[n++] = '0';
			out[n++] = '.';
			for (i = 0; i < -decpt; i++)
				out[n++] = '0';
			for (i = 0; i < nd; i++)
				out[n++] = digits[i];
		} else if (decpt >= nd) {
			for (i = 0; i < nd; i++)
				out[n++] = digits[i];
			for (i = nd; i < decpt; i++)
				out[n++] = '0';
			out[n++] = '.';
			out[n++] = '0';
		} else {
			for (i = 0; i < nd; i++) {
				if (i == decpt)
					out[n++] = '.';
				out[n++] = digits[i];
			}
		}
	} else {
		out[n++] = digits[0];
		if (nd > 1) {
			out[n++] = '.';
			for (i = 1; i < nd; i++)
				out[n++] = digits[i];
		}
		n += snprintf(out + n, sizeof(out) - (size_t)n, "e%c%02d",
		    exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
	}
	dbuf_add(sb, out, (size_t)n);
}

/* Decodes one UTF-8 sequence at s (n bytes left); *len gets its size. */
uint32_t
tpl_utf8_next(const char *s, size_t n, size_t *len)
{
	const unsigned char	*u = (const unsigned char *)s;
	uint32_t		 c;
	size_t			 k, i;

	if (u[0] < 0x80) {
		*len = 1;
		return u[0];
	}
	if ((u[0] & 0xE0) == 0xC0) {
		k = 2;
		c = u[0] & 0x1F;
	} else if ((u[0] & 0xF0) == 0xE0) {
		k = 3;
		c = u[0] & 0x0F;
	} else if ((u[0] & 0xF8) == 0xF0) {
		k = 4;
		c = u[0] & 0x07;
	} else {
		*len = 1;
		return 0xFFFD;
	}
	if (k > n) {
		*len = 1;
		return 0xFFFD;
	}
	for (i = 1; i < k; i++) {
		if ((u[i] & 0xC0) != 0x80) {
			*len = 1;
			return 0xFFFD;
		}
		c = c << 6 | (u[i] & 0x3F);
	}
	*len = k;
	return c;
}

void
tpl_add_utf8(struct dbuf *sb, uint32_t c)
{
	char	b[4];
	size_t	n;

	if (c < 0x80) {
		b[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		b[0] = (char)(0xC0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3F));
		n = 2;
	} else if (c < 0x10000) {
		b[0] = (char)(0xE0 | c >> 12);
		b[1] = (char)(0x80 | (c >> 6 & 0x3F));
		b[2] = (char)(0x80 | (c & 0x3F));
		n = 3;
	} else {
		b[0] = (char)(0xF0 | c >> 18);
		b[1] = (char)(0x80 | (c >> 12 & 0x3F));
		b[2] = (char)(0x80 | (c >> 6 & 0x3F));
		b[3] = (char)(0x80 | (c & 0x3F));
		n = 4;
	}
	dbuf_add(sb, b, n);
}

/*
 * Whether Python's str.isprintable() is false for c, so repr() escapes
 * it: control, format, separator (except ' '), private-use, surrogate and
 * non-character code points. Unassigned code points are not tabled.
 */
static int
py_unprintable(uint32_t c)
{
	if (c < 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD)
		return 1;
	if (c < 0x600)
		return 0;
	return (c >= 0x600 && c <= 0x605) || c == 0x61C || c == 0x6DD ||
	    c == 0x70F || c == 0x8E2 || c == 0x180E || c == 0x1680 ||
	    (c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F) ||
	    (c >= 0x205F && c <= 0x2064) || (c >= 0x2066 && c <= 0x206F) ||
	    c == 0x3000 || (c >= 0xD800 && c <= 0xF8FF) ||
	    (c >= 0xFDD0 && c <= 0xFDEF) || c == 0xFEFF ||
	    (c >= 0xFFF9 && c <= 0xFFFB) || (c & 0xFFFE) == 0xFFFE ||
	    c == 0x110BD || c == 0x110CD || (c >= 0x13430 && c <= 0x1343F) ||
	    (c >= 0x1BCA0 && c <= 0x1BCA3) || (c >= 0x1D173 && c <= 0x1D17A) ||
	    c == 0xE0001 || (c >= 0xE0020 && c <= 0xE007F) || c >= 0xF0000;
}

void
tpl_add_py_str(struct dbuf *sb, const char *s, size_t n)
{
	char	 q = '\'', buf[16];
	size_t	 i, k;
	uint32_t c;
	int	 m;

	if (memchr(s, '\'', n) != NULL && memchr(s, '"', n) == NULL)
		q = '"';
	dbuf_add(sb, &q, 1);
	for (i = 0; i < n; i += k) {
		c = tpl_utf8_next(s + i, n - i, &k);
		if (c == (uint32_t)q || c == '\\') {
			buf[0] = '\\';
			buf[1] = (char)c;
			dbuf_add(sb, buf, 2);
		} else if (c == '\t')
			dbuf_add(sb, "\\t", 2);
		else if (c == '\n')
			dbuf_add(sb, "\\n", 2);
		else if (c == '\r')
			dbuf_add(sb, "\\r", 2);
		else if (py_unprintable(c)) {
			if (c < 0x100)
				m = snprintf(buf, sizeof(buf), "\\x%02x", c);
			else if (c < 0x10000)
				m = snprintf(buf, sizeof(buf), "\\u%04x", c);
			else
				m = snprintf(buf, sizeof(buf), "\\U%08x", c);
			dbuf_add(sb, buf, (size_t)m);
		} else
			dbuf_add(sb, s + i, k);
	}
	dbuf_add(sb, &q, 1);
}

void
tpl_add_json_str(struct dbuf *sb, const char *s, size_t n, int ascii)
{
	char	 buf[16];
	size_t	 i, k;
	uint32_t c;
	int	 m;

	dbuf_add(sb, "\"", 1);
	for (i = 0; i < n; i += k) {
		c = tpl_utf8_next(s + i, n - i, &k);
		switch (c) {
		case '"': dbuf_add(sb, "\\\"", 2); continue;
		case '\\': dbuf_add(sb, "\\\\", 2); continue;
		case '\n': dbuf_add(sb, "\\n", 2); continue;
		case '\r': dbuf_add(sb, "\\r", 2); continue;
		case '\t': dbuf_add(sb, "\\t", 2); continue;
		case '\b': dbuf_add(sb, "\\b", 2); continue;
		case '\f': dbuf_add(sb, "\\f", 2); continue;
		default: break;
		}
		if (c < 0x20 || (ascii && c > 0x7E && c < 0x10000)) {
			m = snprintf(buf, sizeof(buf), "\\u%04x", c);
			dbuf_add(sb, buf, (size_t)m);
		} else if (ascii && c >= 0x10000) {
			c -= 0x10000;
			m = snprintf(buf, sizeof(buf), "\\u%04x\\u%04x",
			    0xD800 + (c >> 10), 0xDC00 + (c & 0x3FF));
			dbuf_add(sb, buf, (size_t)m);
		} else
			dbuf_add(sb, s + i, k);
	}
	dbuf_add(sb, "\"", 1);
}

/* json.dumps of a float: repr, with Infinity / NaN as Python writes them. */
static void
json_float(struct dbuf *sb, double d)
{
	if (isnan(d))
		dbuf_addstr(sb, "NaN");
	else if (isinf(d))
		dbuf_addstr(sb, d < 0 ? "-Infinity" : "Infinity");
	else
		tpl_add_py_float(sb, d);
}

/* ====== JSON values in Python forms ====== */

int
tpl_is_file(const json_t *v)
{
	const char *id;

	if (!json_is_object(v))
		return 0;
	id = json_string_value(json_object_get(v, "dify_model_identity"));
	return id != NULL && strcmp(id, "__dify__file__") == 0;
}

static int
py_repr(struct dbuf *sb, const json_t *v, int depth)
{
	const char	*k;
	json_t		*m;
	size_t		 i;
	int		 first = 1, rc = 0;

	if (depth > TPL_MAX_NEST)
		return ENGINE_EINVAL;
	if (v == NULL) {
		dbuf_addstr(sb, "None");
		return 0;
	}
	switch (json_typeof(v)) {
	case JSON_STRING:
		tpl_add_py_str(sb, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		tpl_add_py_int(sb, json_integer_value(v));
		break;
	case JSON_REAL:
		tpl_add_py_float(sb, json_real_value(v));
		break;
	case JSON_TRUE: dbuf_addstr(sb, "True"); break;
	case JSON_FALSE: dbuf_addstr(sb, "False"); break;
	case JSON_NULL: dbuf_addstr(sb, "None"); break;
	case JSON_ARRAY:
		dbuf_add(sb, "[", 1);
		for (i = 0; rc == 0 && i < json_array_size(v); i++) {
			if (i > 0)
				dbuf_add(sb, ", ", 2);
			rc = py_repr(sb, json_array_get(v, i), depth + 1);
		}
		dbuf_add(sb, "]", 1);
		break;
	case JSON_OBJECT:
		dbuf_add(sb, "{", 1);
		json_object_foreach((json_t *)v, k, m) {
			if (!first)
				dbuf_add(sb, ", ", 2);
			first = 0;
			tpl_add_py_str(sb, k, strlen(k));
			dbuf_add(sb, ": ", 2);
			if ((rc = py_repr(sb, m, depth + 1)) != 0)
				break;
		}
		dbuf_add(sb, "}", 1);
		break;
	}
	return rc;
}

/*
 * json.dumps(v, ensure_ascii=ascii): indent < 0 for one line with ", " and
 * ": ", else that many spaces per level with "," and ": ".
 */
static int
py_dumps(struct dbuf *sb, const json_t *v, int ascii, int indent, int depth)
{
	const char	*k;
	json_t		*m;
	size_t		 i, n;
	int		 j, first = 1, rc = 0;

	if (depth > TPL_MAX_NEST)
		return ENGINE_EINVAL;
	switch (json_typeof(v)) {
	case JSON_STRING:
		tpl_add_json_str(sb, json_string_value(v), json_string_length(v),
		    ascii);
		return 0;
	case JSON_INTEGER:
		tpl_add_py_int(sb, json_integer_value(v));
		return 0;
	case JSON_REAL:
		json_float(sb, json_real_value(v));
		return 0;
	case JSON_TRUE: dbuf_addstr(sb, "true"); return 0;
	case JSON_FALSE: dbuf_addstr(sb, "false"); return 0;
	case JSON_NULL: dbuf_addstr(sb, "null"); return 0;
	default: break;
	}
	n = json_is_array(v) ? json_array_size(v) : json_object_size(v);
	dbuf_add(sb, json_is_array(v) ? "[" : "{", 1);
	if (json_is_array(v)) {
		for (i = 0; rc == 0 && i < n; i++) {
			if (i > 0)
				dbuf_addstr(sb, indent < 0 ? ", " : ",");
			if (indent >= 0) {
				dbuf_add(sb, "\n", 1);
				for (j = 0; j < indent * (depth + 1); j++)
					dbuf_add(sb, " ", 1);
			}
			rc = py_dumps(sb, json_array_get(v, i), ascii, indent,
			    depth + 1);
		}
	} else {
		json_object_foreach((json_t *)v, k, m) {
			if (!first)
				dbuf_addstr(sb, indent < 0 ? ", " : ",");
			first = 0;
			if (indent >= 0) {
				dbuf_add(sb, "\n", 1);
				for (j = 0; j < indent * (depth + 1); j++)
					dbuf_add(sb, " ", 1);
			}
			tpl_add_json_str(sb, k, strlen(k), ascii);
			dbuf_add(sb, ": ", 2);
			rc = py_dumps(sb, m, ascii, indent, depth + 1);
			if (rc != 0)
				break;
		}
	}
	if (indent >= 0 && n > 0) {
		dbuf_add(sb, "\n", 1);
		for (j = 0; j < indent * depth; j++)
			dbuf_add(sb, " ", 1);
	}
	dbuf_add(sb, json_is_array(v) ? "]" : "}", 1);
	return rc;
}

/* Python str() of a list item: strings as they are, the rest as repr. */
static int
py_str(struct dbuf *sb, const json_t *v)
{
	if (json_is_string(v)) {
		dbuf_add(sb, json_string_value(v), json_string_length(v));
		return 0;
	}
	return py_repr(sb, v, 0);
}

/* File.markdown: ![name](url) for images, else [name or remote_url](url). */
static void
file_markdown(struct dbuf *sb, const json_t *f)
{
	const char	*type, *name, *url, *remote;
	int		 image;

	type = json_string_value(json_object_get(f, "type"));
	name = json_string_value(json_object_get(f, "filename"));
	url = json_string_value(json_object_get(f, "url"));
	remote = json_string_value(json_object_get(f, "remote_url"));
	image = type != NULL && strcmp(type, "image") == 0;
	if (url == NULL || *url == '\0')
		url = remote != NULL ? remote : "None";
	if (name == NULL || *name == '\0')
		name = image ? "" : remote != NULL ? remote : "None";
	dbuf_addstr(sb, image ? "![" : "[");
	dbuf_addstr(sb, name);
	dbuf_addstr(sb, "](");
	dbuf_addstr(sb, url);
	dbuf_addstr(sb, ")");
}

static int
value_text(struct dbuf *sb, const json_t *v, enum tpl_form form)
{
	size_t	i, n, nstr = 0, nfile = 0;
	int	rc = 0;

	if (v == NULL)
		return 0;
	switch (json_typeof(v)) {
	case JSON_NULL:
		return 0;
	case JSON_STRING:
		return py_str(sb, v);
	case JSON_OBJECT:
		if (tpl_is_file(v)) {
			if (form == TPL_MARKDOWN)
				file_markdown(sb, v);
			return 0;
		}
		return py_dumps(sb, v, 0, form == TPL_MARKDOWN ? 2 : -1, 0);
	case JSON_ARRAY:
		break;
	default:
		return py_repr(sb, v, 0);
	}
	n = json_array_size(v);
	for (i = 0; i < n; i++) {
		nstr += json_is_string(json_array_get(v, i));
		nfile += tpl_is_file(json_array_get(v, i));
	}
	if (n > 0 && nfile == n) {	/* ArrayFileSegment */
		for (i = 0; form == TPL_MARKDOWN && i < n; i++) {
			if (i > 0)
				dbuf_add(sb, "\n", 1);
			file_markdown(sb, json_array_get(v, i));
		}
		return 0;
	}
	if (form == TPL_MARKDOWN) {
		for (i = 0; rc == 0 && i < n; i++) {
			dbuf_addstr(sb, i > 0 ? "\n- " : "- ");
			rc = py_str(sb, json_array_get(v, i));
		}
		return rc;
	}
	if (n == 0)
		return 0;
	if (nstr == n)
		return py_dumps(sb, v, 0, -1, 0);
	return py_repr(sb, v, 0);
}

int
tpl_add_value_text(struct dbuf *sb, const json_t *v, enum tpl_form form)
{
	return value_text(sb, v, form);
}

int
tpl_value_text(const json_t *v, enum tpl_form form, char **out)
{
	struct dbuf	sb = { 0 };
	int		rc;

	*out = NULL;
	if ((rc = value_text(&sb, v, form)) != 0)
		goto out;
	if ((*out = dbuf_take(&sb, NULL)) == NULL)
		rc = ENGINE_ENOMEM;
out:
	dbuf_free(&sb);
	return rc;
}

int
tpl_py_repr(const json_t *v, char **out)
{
	struct dbuf	sb = { 0 };
	int		rc;

	*out = NULL;
	if ((rc = py_repr(&sb, v, 0)) != 0)
		goto out;
	if ((*out = dbuf_take(&sb, NULL)) == NULL)
		rc = ENGINE_ENOMEM;
out:
	dbuf_free(&sb);
	return rc;
}

/* ====== {{#a.b#}} references ====== */

static int
is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_';
}

/*
 * Matches VARIABLE_PATTERN at s (which starts with "{{#"): returns the
 * length of the whole reference or 0; inner and inner_len get a.b.c.
 */
static size_t
ref_match(const char *s, size_t n, int context, const char **inner,
    size_t *inner_len)
{
	size_t	i = 3, run, parts = 0;

	if (n < 3 || memcmp(s, "{{#", 3) != 0)
		return 0;
	if (context && n >= 13 && memcmp(s, "{{#context#}}", 13) == 0) {
		*inner = s + 3;
		*inner_len = 7;
		return 13;
	}
	for (run = 0; i < n && is_word(s[i]); i++)
		run++;
	if (run < 1 || run > 50)
		return 0;
	while (i < n && s[i] == '.') {
		i++;
		if (i >= n || !is_word(s[i]) || (s[i] >= '0' && s[i] <= '9'))
			return 0;
		for (run = 0; i < n && is_word(s[i]); i++)
			run++;
		if (run > 30)
			return 0;
		parts++;
	}
	if (parts < 1 || parts > 10 || n - i < 3 || memcmp(s + i, "#}}", 3))
		return 0;
	*inner = s + 3;
	*inner_len = i - 3;
	return i + 3;
}

/* Splits text at '.' into NUL-terminated parts (one allocation). */
static int
split_dots(const char *s, size_t n, char **buf, const char ***parts,
    size_t *nparts)
{
	size_t	i, k = 1;

	for (i = 0; i < n; i++)
		k += s[i] == '.';
	*buf = malloc(n + 1);
	*parts = malloc(k * sizeof(**parts));
	if (*buf == NULL || *parts == NULL) {
		free(*buf);
		free(*parts);
		*buf = NULL;
		*parts = NULL;
		return ENGINE_ENOMEM;
	}
	memcpy(*buf, s, n);
	(*buf)[n] = '\0';
	(*parts)[0] = *buf;
	for (i = 0, k = 1; i < n; i++)
		if ((*buf)[i] == '.') {
			(*buf)[i] = '\0';
			(*parts)[k++] = *buf + i + 1;
		}
	*nparts = k;
	return 0;
}

/*
 * One piece of the template as convert_template sees it: a reference's
 * a.b.c, or a run of literal text. Either is looked up when it holds a dot
 * (Dify does this for literal text too); otherwise, or when the lookup
 * fails, the text itself is written.
 */
static int
render_piece(struct dbuf *sb, const char *s, size_t n, enum tpl_form form,
    tpl_lookup_fn lookup, void *ctx, int is_context)
{
	const char	**parts = NULL;
	const json_t	 *v = NULL;
	char		 *buf = NULL;
	size_t		  nparts;
	int		  rc = 0;

	if (n == 0)
		goto out;
	if (is_context || memchr(s, '.', n) != NULL) {
		if ((rc = split_dots(s, n, &buf, &parts, &nparts)) != 0)
			goto out;
		if (lookup != NULL)
			v = lookup(ctx, parts, nparts);
	}
	if (v != NULL)
		rc = value_text(sb, v, form);
	else if (is_context)
		dbuf_addstr(sb, "{{#context#}}");
	else
		dbuf_add(sb, s, n);
out:
	free(buf);
	free(parts);
	return rc;
}

int
tpl_render(const char *tpl, enum tpl_form form, unsigned flags,
    tpl_lookup_fn lookup, void *ctx, size_t max_chars, char *err, char **out)
{
	struct dbuf	 sb = { 0 };
	const char	*inner, *lit;
	size_t		 n, i, m, inner_len;
	int		 rc = 0, ctxref;

	*out = NULL;
	n = strlen(tpl);
	lit = tpl;
	for (i = 0; i < n;) {
		m = 0;
		if (tpl[i] == '{')
			m = ref_match(tpl + i, n - i, flags & TPL_CONTEXT,
			    &inner, &inner_len);
		if (m == 0) {
			i++;
			continue;
		}
		if ((rc = render_piece(&sb, lit, (size_t)(tpl + i - lit), form,
		    lookup, ctx, 0)) != 0)
			goto out;
		ctxref = inner_len == 7 && memcmp(inner, "context", 7) == 0;
		if ((rc = render_piece(&sb, inner, inner_len, form, lookup, ctx,
		    ctxref)) != 0)
			goto out;
		i += m;
		lit = tpl + i;
	}
	if ((rc = render_piece(&sb, lit, (size_t)(tpl + n - lit), form, lookup,
	    ctx, 0)) != 0)
		goto out;
	if (sb.err) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if (max_chars > 0 && sb.p != NULL &&
	    engine_utf8_len(sb.p) > max_chars) {
		rc = ENGINE_ELIMIT;
		if (err != NULL)
			snprintf(err, ENGINE_ERRMAX,
			    "output length: the rendered text is longer than "
			    "%zu characters", max_chars);
		goto out;
	}
	if ((*out = dbuf_take(&sb, NULL)) == NULL)
		rc = ENGINE_ENOMEM;
out:
	if (rc == ENGINE_EINVAL)
		engine_invalid(err, "a value is nested more than %d levels "
		    "deep", TPL_MAX_NEST);
	dbuf_free(&sb);
	return rc;
}

int
tpl_selectors(const char *tpl, json_t **out)
{
	const char	*inner, *p, *dot;
	json_t		*list = NULL, *sel = NULL;
	size_t		 n, i, m, inner_len, j;
	int		 rc = ENGINE_ENOMEM, dup;

	*out = NULL;
	if ((list = json_array()) == NULL)
		goto out;
	n = strlen(tpl);
	for (i = 0; i < n; i += m ? m : 1) {
		m = tpl[i] == '{' ?
		    ref_match(tpl + i, n - i, 0, &inner, &inner_len) : 0;
		if (m == 0)
			continue;
		if ((sel = json_array()) == NULL)
			goto out;
		for (p = inner; p < inner + inner_len; p = dot + 1) {
			dot = memchr(p, '.', (size_t)(inner + inner_len - p));
			if (dot == NULL)
				dot = inner + inner_len;
			if (json_array_append_new(sel, json_stringn(p,
			    (size_t)(dot - p))) != 0)
				goto out;
		}
		for (j = 0, dup = 0; j < json_array_size(list) && !dup; j++)
			dup = json_equal(json_array_get(list, j), sel);
		if (!dup && json_array_append(list, sel) != 0)
			goto out;
		json_decref(sel);
		sel = NULL;
	}
	*out = list;
	list = NULL;
	rc = 0;
out:
	json_decref(sel);
	json_decref(list);
	return rc;
}
