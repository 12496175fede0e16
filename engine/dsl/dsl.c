/*
 * dsl.c — the DSL codec: YAML text <-> jansson tree.
 *
 * Parsing walks libyaml's events and builds the tree directly. Plain
 * scalars are typed by PyYAML's YAML 1.1 implicit resolver (the regular
 * expressions of yaml/resolver.py, spelled out by hand below), because
 * Dify loads DSL with yaml.safe_load; the constructors follow PyYAML's
 * SafeConstructor. Every input is bounded by struct dsl_limits; aliases
 * are counted at their expanded size, so an alias bomb trips max_nodes
 * before anything is copied (aliases share the anchored json_t anyway).
 *
 * Emitting feeds libyaml's emitter the events of PyYAML's yaml.dump with
 * sort_keys and allow_unicode. Two things are ours: a string is marked
 * "plain allowed" only when our resolver reads its plain text back as a
 * string (that is how PyYAML decides to quote 'true', '1.0' or ''), and a
 * string with a line break asks for a literal block, which libyaml turns
 * into a quoted scalar when a block cannot hold the text. libyaml 0.2.5
 * escapes every character beyond U+FFFF; we swap such characters for
 * private-use characters the document does not contain before the
 * emitter sees them and swap them back in its output, so text stays as
 * is.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "engine/dsl/dsl.h"

#define DSL_MAX_BYTES	(10u * 1024 * 1024)
#define DSL_MAX_DEPTH	64
#define DSL_MAX_NODES	1000000
#define DSL_MAX_ALIASES	10000

#define DSL_EMIT_MAX	(256u * 1024 * 1024)	/* YAML bytes dsl_emit writes */
#define DSL_EMIT_DEPTH	1000			/* nesting dsl_emit accepts */

#define DSL_ANCHOR_BUCKETS 1024

#define TAG_PREFIX	"tag:yaml.org,2002:"
#define TAG_STR		TAG_PREFIX "str"

/* The type PyYAML's implicit resolver gives a plain scalar. */
enum dsl_kind {
	DSL_K_STR,
	DSL_K_NULL,
	DSL_K_BOOL,
	DSL_K_INT,
	DSL_K_FLOAT,
	DSL_K_TIMESTAMP,
	DSL_K_MERGE,
	DSL_K_VALUE,
};

void
dsl_limits_default(struct dsl_limits *lim)
{
	lim->max_bytes = DSL_MAX_BYTES;
	lim->max_depth = DSL_MAX_DEPTH;
	lim->max_nodes = DSL_MAX_NODES;
	lim->max_aliases = DSL_MAX_ALIASES;
}

/* ====== Resolver: PyYAML's YAML 1.1 implicit types ====== */

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int
is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int
is_word(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && memcmp(s, w, n) == 0;
}

/* yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|... */
static int
match_bool(const char *s, size_t n)
{
	static const char *const words[] = {
		"yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE",
		"false", "False", "FALSE", "on", "On", "ON", "off", "Off",
		"OFF", NULL,
	};
	size_t i;

	for (i = 0; words[i] != NULL; i++)
		if (is_word(s, n, words[i]))
			return 1;
	return 0;
}

/* ~|null|Null|NULL| (empty) */
static int
match_null(const char *s, size_t n)
{
	return n == 0 || is_word(s, n, "~") || is_word(s, n, "null") ||
	    is_word(s, n, "Null") || is_word(s, n, "NULL");
}

/*
 * (:[0-5]?[0-9])+ starting at s[i]: the index after the groups, or 0 when
 * there is not at least one group.
 */
static size_t
match_sexagesimal(const char *s, size_t n, size_t i)
{
	size_t groups = 0;

	while (i < n && s[i] == ':') {
		i++;
		if (i + 1 < n && s[i] >= '0' && s[i] <= '5' &&
		    is_digit(s[i + 1]))
			i += 2;
		else if (i < n && is_digit(s[i]))
			i++;
		else
			return 0;
		groups++;
	}
	return groups > 0 ? i : 0;
}

/* [0-9_]* from s[i]: the index after it. */
static size_t
skip_digits_(const char *s, size_t n, size_t i)
{
	while (i < n && (is_digit(s[i]) || s[i] == '_'))
		i++;
	return i;
}

/*
 * [-+]?0b[0-1_]+ | [-+]?0[0-7_]+ | [-+]?(?:0|[1-9][0-9_]*) |
 * [-+]?0x[0-9a-fA-F_]+ | [-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+
 */
static int
match_int(const char *s, size_t n)
{
	size_t i = 0, j;

	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	if (i >= n)
		return 0;
	if (s[i] == '0') {
		if (i + 1 == n)
			return 1;
		if (s[i + 1] == 'b' || s[i + 1] == 'x') {
			if (i + 2 >= n)
				return 0;
			for (j = i + 2; j < n; j++) {
				if (s[j] == '_')
					continue;
				if (s[i + 1] == 'b' && s[j] != '0' &&
				    s[j] != '1')
					return 0;
				if (s[i + 1] == 'x' && !is_hex(s[j]))
					return 0;
			}
			return 1;
		}
		for (j = i + 1; j < n; j++)
			if ((s[j] < '0' || s[j] > '7') && s[j] != '_')
				return 0;
		return 1;
	}
	if (s[i] < '1' || s[i] > '9')
		return 0;
	j = skip_digits_(s, n, i + 1);
	if (j == n)
		return 1;
	return match_sexagesimal(s, n, j) == n;
}

/* ([eE][-+][0-9]+)? then the end, from s[j]. */
static int
match_exponent(const char *s, size_t n, size_t j)
{
	if (j == n)
		return 1;
	if (s[j] != 'e' && s[j] != 'E')
		return 0;
	j++;
	if (j >= n || (s[j] != '+' && s[j] != '-'))
		return 0;
	j++;
	if (j >= n || !is_digit(s[j]))
		return 0;
	while (j < n && is_digit(s[j]))
		j++;
	return j == n;
}

/*
 * [-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)? |
 * \.[0-9][0-9_]*(?:[eE][-+][0-9]+)? |
 * [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]* |
 * [-+]?\.(?:inf|Inf|INF) | \.(?:nan|NaN|NAN)
 * Note that 1e3 (no dot) and 1.0e3 (no exponent sign) are strings.
 */
static int
match_float(const char *s, size_t n)
{
	size_t	i = 0, j;
	int	signed_ = 0;

	if (n > 0 && (s[0] == '+' || s[0] == '-')) {
		signed_ = 1;
		i = 1;
	}
	if (n - i == 4 && s[i] == '.' && (is_word(s + i + 1, 3, "inf") ||
	    is_word(s + i + 1, 3, "Inf") || is_word(s + i + 1, 3, "INF")))
		return 1;
	if (!signed_ && n == 4 && s[0] == '.' && (is_word(s + 1, 3, "nan") ||
	    is_word(s + 1, 3, "NaN") || is_word(s + 1, 3, "NAN")))
		return 1;
	if (!signed_ && n >= 2 && s[0] == '.' && is_digit(s[1]))
		return match_exponent(s, n, skip_digits_(s, n, 2));
	if (i >= n || !is_digit(s[i]))
		return 0;
	j = skip_digits_(s, n, i + 1);
	if (j < n && s[j] == '.')
		return match_exponent(s, n, skip_digits_(s, n, j + 1));
	if (j < n && s[j] == ':') {
		j = match_sexagesimal(s, n, j);
		if (j == 0 || j >= n || s[j] != '.')
			return 0;
		return skip_digits_(s, n, j + 1) == n;
	}
	return 0;
}

/* [0-9]{1,2} from *i; 0 when there is no digit. */
static int
digits12(const char *s, size_t n, size_t *i)
{
	if (*i >= n || !is_digit(s[*i]))
		return 0;
	(*i)++;
	if (*i < n && is_digit(s[*i]))
		(*i)++;
	return 1;
}

static int
digits_n(const char *s, size_t n, size_t i, size_t count)
{
	size_t k;

	if (i + count > n)
		return 0;
	for (k = 0; k < count; k++)
		if (!is_digit(s[i + k]))
			return 0;
	return 1;
}

/*
 * [0-9]{4}-[0-9]{2}-[0-9]{2} |
 * [0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}
 * (?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?
 */
static int
match_timestamp(const char *s, size_t n)
{
	size_t i, k;

	if (n == 10 && digits_n(s, n, 0, 4) && s[4] == '-' &&
	    digits_n(s, n, 5, 2) && s[7] == '-' && digits_n(s, n, 8, 2))
		return 1;
	if (n < 5 || !digits_n(s, n, 0, 4) || s[4] != '-')
		return 0;
	i = 5;
	if (!digits12(s, n, &i) || i >= n || s[i++] != '-' ||
	    !digits12(s, n, &i) || i >= n)
		return 0;
	if (s[i] == 'T' || s[i] == 't')
		i++;
	else {
		for (k = i; i < n && (s[i] == ' ' || s[i] == '\t'); i++)
			;
		if (i == k)
			return 0;
	}
	if (!digits12(s, n, &i) || i >= n || s[i++] != ':' ||
	    !digits_n(s, n, i, 2))
		return 0;
	i += 2;
	if (i >= n || s[i++] != ':' || !digits_n(s, n, i, 2))
		return 0;
	i += 2;
	if (i < n && s[i] == '.')
		for (i++; i < n && is_digit(s[i]); i++)
			;
	if (i == n)
		return 1;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i < n && s[i] == 'Z')
		i++;
	else if (i < n && (s[i] == '+' || s[i] == '-')) {
		i++;
		if (!digits12(s, n, &i))
			return 0;
		if (i < n && s[i] == ':') {
			if (!digits_n(s, n, i + 1, 2))
				return 0;
			i += 3;
		}
	} else
		return 0;
	return i == n;
}

/* What yaml.safe_load makes of the plain scalar s. */
static enum dsl_kind
dsl_resolve(const char *s, size_t n)
{
	if (match_null(s, n))
		return DSL_K_NULL;
	if (match_bool(s, n))
		return DSL_K_BOOL;
	if (match_float(s, n))
		return DSL_K_FLOAT;
	if (match_int(s, n))
		return DSL_K_INT;
	if (is_word(s, n, "<<"))
		return DSL_K_MERGE;
	if (match_timestamp(s, n))
		return DSL_K_TIMESTAMP;
	if (is_word(s, n, "="))
		return DSL_K_VALUE;
	return DSL_K_STR;
}

/* ====== Constructors: PyYAML's SafeConstructor ====== */

/*
 * Copies s without '_' into a new NUL-terminated buffer, lowercased when
 * lower is set. NULL when out of memory.
 */
static char *
strip_underscores(const char *s, size_t n, int lower, size_t *outlen)
{
	char	*b;
	size_t	 i, k = 0;

	if ((b = malloc(n + 1)) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (s[i] == '_')
			continue;
		b[k++] = lower && s[i] >= 'A' && s[i] <= 'Z' ?
		    (char)(s[i] - 'A' + 'a') : s[i];
	}
	b[k] = '\0';
	*outlen = k;
	return b;
}

/* Digits of base in s[0..n) into *acc; -1 invalid, 1 overflow, else 0. */
static int
digits_value(const char *s, size_t n, unsigned base, unsigned long long *acc)
{
	unsigned long long	v = 0;
	unsigned		d;
	size_t			i;
	int			over = 0;

	if (n == 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (is_digit(s[i]))
			d = (unsigned)(s[i] - '0');
		else if (s[i] >= 'a' && s[i] <= 'f')
			d = (unsigned)(s[i] - 'a' + 10);
		else if (s[i] >= 'A' && s[i] <= 'F')
			d = (unsigned)(s[i] - 'A' + 10);
		else
			return -1;
		if (d >= base)
			return -1;
		if (v > (ULLONG_MAX - d) / base)
			over = 1;
		else
			v = v * base + d;
	}
	*acc = v;
	return over;
}

/*
 * construct_yaml_int: 0 with *out, 1 when the value does not fit 64 bits
 * (the caller keeps the text), -1 when s is not an integer.
 */
static int
construct_int(const char *s, size_t n, json_int_t *out)
{
	unsigned long long	 mag = 0, part, base;
	char			*v, *p, *colon;
	size_t			 len;
	int			 neg = 0, rc;

	if ((v = strip_underscores(s, n, 0, &len)) == NULL)
		return -2;
	p = v;
	if (len > 0 && (p[0] == '-' || p[0] == '+')) {
		neg = p[0] == '-';
		p++;
		len--;
	}
	if (len == 0)
		rc = -1;
	else if (len == 1 && p[0] == '0')
		rc = 0;
	else if (p[0] == '0' && p[1] == 'b')
		rc = digits_value(p + 2, len - 2, 2, &mag);
	else if (p[0] == '0' && p[1] == 'x')
		rc = digits_value(p + 2, len - 2, 16, &mag);
	else if (p[0] == '0')
		rc = digits_value(p, len, 8, &mag);
	else if (memchr(p, ':', len) != NULL) {
		rc = 0;
		base = 1;
		/* Python: sum of int(part) * 60**k from the right. */
		while (rc == 0 && len > 0) {
			colon = NULL;
			for (size_t i = len; i > 0; i--)
				if (p[i - 1] == ':') {
					colon = p + i - 1;
					break;
				}
			if (colon == NULL) {
				rc = digits_value(p, len, 10, &part);
				len = 0;
			} else {
				rc = digits_value(colon + 1,
				    len - (size_t)(colon + 1 - p), 10, &part);
				len = (size_t)(colon - p);
				if (len == 0 && rc == 0)
					rc = -1;
			}
			if (rc != 0)
				break;
			if (part != 0 && base > ULLONG_MAX / part)
				rc = 1;
			else if (mag > ULLONG_MAX - part * base)
				rc = 1;
			else
				mag += part * base;
			if (len > 0 && base > ULLONG_MAX / 60)
				rc = 1;
			base *= 60;
		}
	} else
		rc = digits_value(p, len, 10, &mag);
	if (rc == 0) {
		if (!neg && mag > (unsigned long long)INT64_MAX)
			rc = 1;
		else if (neg && mag > (unsigned long long)INT64_MAX + 1)
			rc = 1;
		else if (neg)
			*out = mag == (unsigned long long)INT64_MAX + 1 ?
			    INT64_MIN : -(json_int_t)mag;
		else
			*out = (json_int_t)mag;
	}
	free(v);
	return rc;
}

/* Python float() of a decimal number without sign: digits, dot, exponent. */
static int
float_syntax(const char *p, size_t n)
{
	size_t	i = 0, mant = 0;

	while (i < n && is_digit(p[i])) {
		i++;
		mant++;
	}
	if (i < n && p[i] == '.')
		for (i++; i < n && is_digit(p[i]); i++)
			mant++;
	if (mant == 0)
		return 0;
	if (i < n && p[i] == 'e') {
		i++;
		if (i < n && (p[i] == '+' || p[i] == '-'))
			i++;
		if (i >= n || !is_digit(p[i]))
			return 0;
		while (i < n && is_digit(p[i]))
			i++;
	}
	return i == n;
}

/*
 * construct_yaml_float: 0 with *out, 1 when the value is infinite or not
 * a number (JSON cannot hold it; the caller keeps the text), -1 when s is
 * not a float, -2 out of memory.
 */
static int
construct_float(const char *s, size_t n, double *out)
{
	char	*v, *p, *q, *end;
	double	 val = 0, part, base = 1;
	size_t	 len;
	int	 neg = 0, rc = 0;

	if ((v = strip_underscores(s, n, 1, &len)) == NULL)
		return -2;
	p = v;
	if (len > 0 && (p[0] == '-' || p[0] == '+')) {
		neg = p[0] == '-';
		p++;
		len--;
	}
	if (strcmp(p, ".inf") == 0 || strcmp(p, ".nan") == 0 ||
	    strcmp(p, "inf") == 0 || strcmp(p, "infinity") == 0 ||
	    strcmp(p, "nan") == 0)
		rc = 1;
	else if (memchr(p, ':', len) != NULL) {
		while (rc == 0 && (q = strrchr(p, ':')) != NULL) {
			if (!float_syntax(q + 1, strlen(q + 1)))
				rc = -1;
			else {
				val += strtod(q + 1, NULL) * base;
				base *= 60;
				*q = '\0';
			}
		}
		if (rc == 0 && !float_syntax(p, strlen(p)))
			rc = -1;
		else if (rc == 0) {
			part = strtod(p, NULL);
			val += part * base;
		}
	} else if (!float_syntax(p, len))
		rc = -1;
	else
		val = strtod(p, &end);
	if (rc == 0 && !isfinite(val))
		rc = 1;
	if (rc == 0)
		*out = neg ? -val : val;
	free(v);
	return rc;
}

/* ====== Parser: events to tree ====== */

struct dsl_anchor {
	char	*name;
	json_t	*value;		/* one reference owned here */
	char	*text;		/* a scalar's text, else NULL */
	size_t	 textlen;
	int	 plain;		/* plain scalar without a tag */
	size_t	 nodes;		/* nodes in the subtree */
	size_t	 bytes;		/* scalar bytes in the subtree */
	size_t	 height;	/* collections nested in it; 0 for a scalar */
	size_t	 next;		/* chain in the bucket, index + 1 */
};

struct dsl_frame {
	json_t	*coll;		/* the mapping or sequence being built */
	json_t	*merge;		/* mappings merged in by <<, or NULL */
	char	*key;		/* a mapping's pending key */
	size_t	 keylen;
	int	 has_key;
	int	 key_merge;	/* the pending key is << */
	char	*anchor;
	size_t	 nodes;
	size_t	 bytes;
	size_t	 height;
};

struct dsl_builder {
	const struct dsl_limits	*lim;
	char			*err;
	struct dsl_frame	*stack;
	size_t			 depth, stackcap;
	struct dsl_anchor	*anchors;
	size_t			 nanchors, anchorcap;
	size_t			 buckets[DSL_ANCHOR_BUCKETS];
	size_t			 nodes, bytes, aliases;
	size_t			 line;
	int			 ndocs;
	json_t			*root;
};

static size_t
anchor_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h % DSL_ANCHOR_BUCKETS;
}

static struct dsl_anchor *
anchor_find(struct dsl_builder *b, const char *name)
{
	size_t i;

	for (i = b->buckets[anchor_hash(name)]; i != 0;
	    i = b->anchors[i - 1].next)
		if (strcmp(b->anchors[i - 1].name, name) == 0)
			return &b->anchors[i - 1];
	return NULL;
}

/* Records anchor name for v (a new reference is taken). */
static int
anchor_add(struct dsl_builder *b, const char *name, json_t *v,
    const char *text, size_t textlen, int plain, size_t nodes, size_t bytes,
    size_t height)
{
	struct dsl_anchor	*a, *na;
	size_t			 h, cap;

	if (anchor_find(b, name) != NULL)
		return engine_invalid(b->err,
		    "duplicate anchor '&%.64s' at line %zu", name, b->line);
	if (b->nanchors == b->anchorcap) {
		cap = b->anchorcap ? b->anchorcap * 2 : 16;
		if ((na = realloc(b->anchors, cap * sizeof(*na))) == NULL)
			return ENGINE_ENOMEM;
		b->anchors = na;
		b->anchorcap = cap;
	}
	a = &b->anchors[b->nanchors];
	memset(a, 0, sizeof(*a));
	if ((a->name = strdup(name)) == NULL)
		return ENGINE_ENOMEM;
	if (text != NULL) {
		if ((a->text = malloc(textlen + 1)) == NULL) {
			free(a->name);
			return ENGINE_ENOMEM;
		}
		memcpy(a->text, text, textlen);
		a->text[textlen] = '\0';
	}
	a->textlen = textlen;
	a->plain = plain;
	a->value = json_incref(v);
	a->nodes = nodes;
	a->bytes = bytes;
	a->height = height;
	h = anchor_hash(name);
	a->next = b->buckets[h];
	b->nanchors++;
	b->buckets[h] = b->nanchors;
	return 0;
}

/* Adds the merge source v (a mapping or a list of them) to frame f. */
static int
frame_merge(struct dsl_builder *b, struct dsl_frame *f, json_t *v)
{
	size_t i;

	if (f->merge == NULL && (f->merge = json_array()) == NULL)
		return ENGINE_ENOMEM;
	if (json_is_object(v))
		return json_array_append(f->merge, v) ? ENGINE_ENOMEM : 0;
	if (!json_is_array(v))
		goto bad;
	for (i = 0; i < json_array_size(v); i++)
		if (!json_is_object(json_array_get(v, i)))
			goto bad;
	/* PyYAML merges a list from its last mapping to its first. */
	for (i = json_array_size(v); i > 0; i--)
		if (json_array_append(f->merge, json_array_get(v, i - 1)))
			return ENGINE_ENOMEM;
	return 0;
bad:
	return engine_invalid(b->err, "merge key << at line %zu needs a "
	    "mapping or a list of mappings", b->line);
}

/*
 * Hands the finished value v (stolen) to the open collection, or makes it
 * the root. text is a scalar's text (NULL for a collection): a mapping
 * key uses it.
 */
static int
builder_add(struct dsl_builder *b, json_t *v, const char *text,
    size_t textlen, int plain, size_t nodes, size_t bytes, size_t height)
{
	struct dsl_frame	*f;
	int			 rc = 0;

	if (b->depth == 0) {
		json_decref(b->root);
		b->root = v;
		return 0;
	}
	f = &b->stack[b->depth - 1];
	f->nodes += nodes;
	f->bytes += bytes;
	if (height + 1 > f->height)
		f->height = height + 1;
	if (json_is_array(f->coll)) {
		if (json_array_append_new(f->coll, v))
			rc = ENGINE_ENOMEM;
		return rc;
	}
	if (!f->has_key) {
		if (text == NULL)
			rc = engine_invalid(b->err, "a mapping key at line %zu "
			    "is a mapping or a sequence", b->line);
		else if (memchr(text, '\0', textlen) != NULL)
			rc = engine_invalid(b->err, "a mapping key at line %zu "
			    "holds a NUL character", b->line);
		else if ((f->key = malloc(textlen + 1)) == NULL)
			rc = ENGINE_ENOMEM;
		else {
			memcpy(f->key, text, textlen);
			f->key[textlen] = '\0';
			f->keylen = textlen;
			f->has_key = 1;
			f->key_merge = plain && is_word(text, textlen, "<<");
		}
		json_decref(v);
		return rc;
	}
	f->has_key = 0;
	if (f->key_merge) {
		rc = frame_merge(b, f, v);
		json_decref(v);
	} else if (json_object_setn_new(f->coll, f->key, f->keylen, v))
		rc = ENGINE_ENOMEM;
	free(f->key);
	f->key = NULL;
	return rc;
}

/* Counts n more nodes holding bytes of scalar text against the limits. */
static int
builder_count(struct dsl_builder *b, size_t n, size_t bytes)
{
	if (n > b->lim->max_nodes || b->nodes > b->lim->max_nodes - n)
		return engine_invalid(b->err, "yaml has more nodes than the "
		    "max_nodes limit of %zu (line %zu)", b->lim->max_nodes,
		    b->line);
	if (bytes > b->lim->max_bytes || b->bytes > b->lim->max_bytes - bytes)
		return engine_invalid(b->err, "yaml text expands past the "
		    "max_bytes limit of %zu (line %zu)", b->lim->max_bytes,
		    b->line);
	b->nodes += n;
	b->bytes += bytes;
	return 0;
}

/* A scalar event's value as PyYAML's safe_load types it. */
static int
scalar_value(struct dsl_builder *b, const yaml_event_t *ev, int *plain,
    json_t **out)
{
	const char	*s = (const char *)ev->data.scalar.value;
	const char	*tag = (const char *)ev->data.scalar.tag;
	size_t		 n = ev->data.scalar.length;
	enum dsl_kind	 k = DSL_K_STR;
	json_int_t	 iv = 0;
	double		 dv = 0;
	int		 rc = 0;

	*out = NULL;
	*plain = tag == NULL && ev->data.scalar.plain_implicit;
	if (*plain)
		k = dsl_resolve(s, n);
	else if (tag == NULL || strcmp(tag, "!") == 0 ||
	    strcmp(tag, TAG_STR) == 0 ||
	    strcmp(tag, TAG_PREFIX "timestamp") == 0 ||
	    strcmp(tag, TAG_PREFIX "binary") == 0)
		k = DSL_K_STR;
	else if (strcmp(tag, TAG_PREFIX "null") == 0)
		k = DSL_K_NULL;
	else if (strcmp(tag, TAG_PREFIX "bool") == 0) {
		k = DSL_K_BOOL;
		if (!match_bool(s, n))
			return engine_invalid(b->err, "!!bool value at line "
			    "%zu is not a boolean", b->line);
	} else if (strcmp(tag, TAG_PREFIX "int") == 0)
		k = DSL_K_INT;
	else if (strcmp(tag, TAG_PREFIX "float") == 0)
		k = DSL_K_FLOAT;
	else
		return engine_invalid(b->err, "unsupported tag '%.64s' at "
		    "line %zu", tag, b->line);
	switch (k) {
	case DSL_K_NULL:
		*out = json_null();
		break;
	case DSL_K_BOOL:
		*out = json_boolean(s[0] == 'y' || s[0] == 'Y' || s[0] == 't' ||
		    s[0] == 'T' || (n == 2 && (s[1] == 'n' || s[1] == 'N')));
		break;
	case DSL_K_INT:
		rc = construct_int(s, n, &iv);
		if (rc == 0)
			*out = json_integer(iv);
		else if (rc == 1)
			*out = json_stringn(s, n);
		else if (rc == -1)
			return engine_invalid(b->err, "invalid integer at line "
			    "%zu", b->line);
		rc = 0;
		break;
	case DSL_K_FLOAT:
		rc = construct_float(s, n, &dv);
		if (rc == 0)
			*out = json_real(dv);
		else if (rc == 1)
			*out = json_stringn(s, n);
		else if (rc == -1)
			return engine_invalid(b->err, "invalid float at line "
			    "%zu", b->line);
		rc = 0;
		break;
	default:
		*out = json_stringn(s, n);
		break;
	}
	if (*out == NULL)
		rc = ENGINE_ENOMEM;
	return rc;
}

static int
builder_push(struct dsl_builder *b, const yaml_event_t *ev, int map)
{
	struct dsl_frame	*f, *ns;
	const char		*tag, *anchor;
	size_t			 cap;
	int			 rc;

	if (map) {
		tag = (const char *)ev->data.mapping_start.tag;
		anchor = (const char *)ev->data.mapping_start.anchor;
	} else {
		tag = (const char *)ev->data.sequence_start.tag;
		anchor = (const char *)ev->data.sequence_start.anchor;
	}
	if (b->depth > 0 && json_is_object(b->stack[b->depth - 1].coll) &&
	    !b->stack[b->depth - 1].has_key)
		return engine_invalid(b->err, "a mapping key at line %zu is a "
		    "mapping or a sequence", b->line);
	if (b->depth + 1 > b->lim->max_depth)
		return engine_invalid(b->err, "yaml nests deeper than the "
		    "max_depth limit of %zu (line %zu)", b->lim->max_depth,
		    b->line);
	if (tag != NULL && strcmp(tag, "!") != 0 &&
	    !(map && (strcmp(tag, TAG_PREFIX "map") == 0 ||
	    strcmp(tag, TAG_PREFIX "set") == 0)) &&
	    !(!map && strcmp(tag, TAG_PREFIX "seq") == 0))
		return engine_invalid(b->err, "unsupported tag '%.64s' at "
		    "line %zu", tag, b->line);
	if ((rc = builder_count(b, 1, 0)) != 0)
		return rc;
	if (b->depth == b->stackcap) {
		cap = b->stackcap ? b->stackcap * 2 : 16;
		if ((ns = realloc(b->stack, cap * sizeof(*ns))) == NULL)
			return ENGINE_ENOMEM;
		b->stack = ns;
		b->stackcap = cap;
	}
	f = &b->stack[b->depth];
	memset(f, 0, sizeof(*f));
	f->nodes = 1;
	f->height = 1;
	if ((f->coll = map ? json_object() : json_array()) == NULL)
		return ENGINE_ENOMEM;
	if (anchor != NULL && (f->anchor = strdup(anchor)) == NULL) {
		json_decref(f->coll);
		return ENGINE_ENOMEM;
	}
	b->depth++;
	return 0;
}

static void
frame_release(struct dsl_frame *f)
{
	json_decref(f->coll);
	json_decref(f->merge);
	free(f->key);
	free(f->anchor);
	memset(f, 0, sizeof(*f));
}

/* Closes the innermost collection and hands it to its parent. */
static int
builder_pop(struct dsl_builder *b)
{
	struct dsl_frame	 f = b->stack[b->depth - 1];
	json_t			*m, *v, *merged = NULL;
	const char		*k;
	size_t			 i, kl;
	int			 rc = 0;

	b->depth--;
	if (f.merge != NULL) {
		/* Merged keys come first, the mapping's own keys win. */
		if ((merged = json_object()) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		for (i = 0; i < json_array_size(f.merge); i++) {
			m = json_array_get(f.merge, i);
			json_object_keylen_foreach(m, k, kl, v)
				if (json_object_setn(merged, k, kl, v)) {
					rc = ENGINE_ENOMEM;
					goto out;
				}
		}
		json_object_keylen_foreach(f.coll, k, kl, v)
			if (json_object_setn(merged, k, kl, v)) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
		json_decref(f.coll);
		f.coll = merged;
		merged = NULL;
	}
	if (f.anchor != NULL && (rc = anchor_add(b, f.anchor, f.coll, NULL, 0,
	    0, f.nodes, f.bytes, f.height)) != 0)
		goto out;
	rc = builder_add(b, f.coll, NULL, 0, 0, f.nodes, f.bytes, f.height);
	f.coll = NULL;
out:
	json_decref(merged);
	frame_release(&f);
	return rc;
}

static int
builder_alias(struct dsl_builder *b, const yaml_event_t *ev)
{
	const char		*name = (const char *)ev->data.alias.anchor;
	struct dsl_anchor	*a;
	size_t			 i;
	int			 rc;

	if ((a = anchor_find(b, name)) == NULL) {
		for (i = 0; i < b->depth; i++)
			if (b->stack[i].anchor != NULL &&
			    strcmp(b->stack[i].anchor, name) == 0)
				return engine_invalid(b->err, "alias '*%.64s' "
				    "at line %zu refers to a collection that "
				    "contains it", name, b->line);
		return engine_invalid(b->err, "undefined alias '*%.64s' at "
		    "line %zu", name, b->line);
	}
	if (++b->aliases > b->lim->max_aliases)
		return engine_invalid(b->err, "yaml uses more aliases than the "
		    "max_aliases limit of %zu (line %zu)", b->lim->max_aliases,
		    b->line);
	if (a->nodes > b->lim->max_nodes ||
	    b->nodes > b->lim->max_nodes - a->nodes)
		return engine_invalid(b->err, "alias '*%.64s' at line %zu "
		    "would expand past the max_nodes limit of %zu", name,
		    b->line, b->lim->max_nodes);
	if (a->bytes > b->lim->max_bytes ||
	    b->bytes > b->lim->max_bytes - a->bytes)
		return engine_invalid(b->err, "alias '*%.64s' at line %zu "
		    "would expand past the max_bytes limit of %zu", name,
		    b->line, b->lim->max_bytes);
	if (b->depth + a->height > b->lim->max_depth)
		return engine_invalid(b->err, "alias '*%.64s' at line %zu "
		    "would nest deeper than the max_depth limit of %zu", name,
		    b->line, b->lim->max_depth);
	if ((rc = builder_count(b, a->nodes, a->bytes)) != 0)
		return rc;
	return builder_add(b, json_incref(a->value), a->text, a->textlen,
	    a->plain, a->nodes, a->bytes, a->height);
}

static int
builder_scalar(struct dsl_builder *b, const yaml_event_t *ev)
{
	const char	*anchor = (const char *)ev->data.scalar.anchor;
	json_t		*v = NULL;
	int		 plain, rc;

	if ((rc = builder_count(b, 1, ev->data.scalar.length)) != 0)
		return rc;
	if ((rc = scalar_value(b, ev, &plain, &v)) != 0)
		return rc;
	if (anchor != NULL && (rc = anchor_add(b, anchor, v,
	    (const char *)ev->data.scalar.value, ev->data.scalar.length, plain,
	    1, ev->data.scalar.length, 0)) != 0) {
		json_decref(v);
		return rc;
	}
	return builder_add(b, v, (const char *)ev->data.scalar.value,
	    ev->data.scalar.length, plain, 1, ev->data.scalar.length, 0);
}

static void
builder_release(struct dsl_builder *b)
{
	size_t i;

	while (b->depth > 0)
		frame_release(&b->stack[--b->depth]);
	free(b->stack);
	for (i = 0; i < b->nanchors; i++) {
		free(b->anchors[i].name);
		free(b->anchors[i].text);
		json_decref(b->anchors[i].value);
	}
	free(b->anchors);
	json_decref(b->root);
}

/* Translates a libyaml parser failure. */
static int
parser_error(const yaml_parser_t *p, char *err)
{
	if (p->error == YAML_MEMORY_ERROR)
		return ENGINE_ENOMEM;
	if (p->context != NULL)
		return engine_invalid(err, "invalid yaml at line %zu: %s %s",
		    p->problem_mark.line + 1, p->context,
		    p->problem ? p->problem : "");
	return engine_invalid(err, "invalid yaml at line %zu: %s",
	    p->problem_mark.line + 1, p->problem ? p->problem : "error");
}

int
dsl_parse(const char *buf, size_t len, const struct dsl_limits *lim,
    char *err, json_t **out)
{
	struct dsl_limits	 deflim;
	struct dsl_builder	*b = NULL;
	yaml_parser_t		 parser;
	yaml_event_t		 ev;
	int			 have_parser = 0, have_event = 0, done = 0;
	int			 rc = 0;

	*out = NULL;
	if (lim == NULL) {
		dsl_limits_default(&deflim);
		lim = &deflim;
	}
	if (len > lim->max_bytes) {
		rc = engine_invalid(err, "yaml is %zu bytes, over the "
		    "max_bytes limit of %zu", len, lim->max_bytes);
		goto out;
	}
	if ((b = calloc(1, sizeof(*b))) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	b->lim = lim;
	b->err = err;
	if (!yaml_parser_initialize(&parser)) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	have_parser = 1;
	yaml_parser_set_input_string(&parser,
	    (const unsigned char *)(buf != NULL ? buf : ""), len);
	while (!done) {
		if (!yaml_parser_parse(&parser, &ev)) {
			rc = parser_error(&parser, err);
			goto out;
		}
		have_event = 1;
		b->line = ev.start_mark.line + 1;
		switch (ev.type) {
		case YAML_DOCUMENT_START_EVENT:
			if (b->ndocs++ > 0)
				rc = engine_invalid(err, "expected a single "
				    "document in the stream, found another at "
				    "line %zu", b->line);
			break;
		case YAML_ALIAS_EVENT:
			rc = builder_alias(b, &ev);
			break;
		case YAML_SCALAR_EVENT:
			rc = builder_scalar(b, &ev);
			break;
		case YAML_SEQUENCE_START_EVENT:
			rc = builder_push(b, &ev, 0);
			break;
		case YAML_MAPPING_START_EVENT:
			rc = builder_push(b, &ev, 1);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			rc = builder_pop(b);
			break;
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
		have_event = 0;
		if (rc != 0)
			goto out;
	}
	*out = b->root != NULL ? b->root : json_null();
	b->root = NULL;
out:
	if (have_event)
		yaml_event_delete(&ev);
	if (have_parser)
		yaml_parser_delete(&parser);
	if (b != NULL) {
		builder_release(b);
		free(b);
	}
	return rc;
}

/* ====== Emitter helpers ====== */

/*
 * Python's repr(float) as PyYAML's represent_float writes it: the
 * shortest text that reads back as x, fixed notation for exponents -4 to
 * 15, "1.0e+16" rather than "1e+16".
 */
static void
py_float_repr(double x, char *out, size_t outsz)
{
	char	tmp[40], digits[24];
	char	*p, *e;
	int	prec, exp10, nd = 0, decpt, i, neg;
	size_t	k = 0;

	if (!isfinite(x)) {
		snprintf(out, outsz, "%s", isnan(x) ? ".nan" :
		    x > 0 ? ".inf" : "-.inf");
		return;
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, x);
		if (strtod(tmp, NULL) == x)
			break;
	}
	neg = tmp[0] == '-';
	p = tmp + neg;
	e = strchr(p, 'e');
	for (; p < e; p++)
		if (is_digit(*p) && nd < (int)sizeof(digits) - 1)
			digits[nd++] = *p;
	exp10 = (int)strtol(e + 1, NULL, 10);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	decpt = exp10 + 1;
	if (neg && k + 1 < outsz)
		out[k++] = '-';
#define PUT(c)                                                                \
	do {                                                                  \
		if (k + 1 < outsz)                                            \
			out[k++] = (c);                                       \
	} while (0)
	if (decpt > -4 && decpt <= 16) {
		if (decpt <= 0) {
			PUT('0');
			PUT('.');
			for (i = 0; i < -decpt; i++)
				PUT('0');
			for (i = 0; i < nd; i++)
				PUT(digits[i]);
		} else if (decpt >= nd) {
			for (i = 0; i < nd; i++)
				PUT(digits[i]);
			for (i = nd; i < decpt; i++)
				PUT('0');
			PUT('.');
			PUT('0');
		} else {
			for (i = 0; i < nd; i++) {
				if (i == decpt)
					PUT('.');
				PUT(digits[i]);
			}
		}
		out[k] = '\0';
	} else {
		PUT(digits[0]);
		PUT('.');
		if (nd == 1)
			PUT('0');
		for (i = 1; i < nd; i++)
			PUT(digits[i]);
		out[k] = '\0';
		snprintf(out + k, outsz - k, "e%c%02d", exp10 < 0 ? '-' : '+',
		    exp10 < 0 ? -exp10 : exp10);
	}
#undef PUT
}

/* Characters beyond U+FFFF, swapped for private-use ones (see the top). */
#define PUA_FIRST	0xE000u
#define PUA_COUNT	6400u			/* U+E000..U+F8FF */
#define ASTRAL_SLOTS	16384u			/* > 2 * PUA_COUNT */

struct dsl_astral {
	unsigned char	 used[PUA_COUNT / 8];	/* PUA characters in doc */
	uint32_t	*keys;			/* astral code point or 0 */
	uint32_t	*vals;			/* its PUA stand-in */
	uint32_t	*back;			/* PUA index -> code point */
	size_t		 n;
};

/* The code point of the UTF-8 sequence at s (valid UTF-8), and its size. */
static uint32_t
utf8_decode(const unsigned char *s, size_t *size)
{
	if (s[0] < 0x80) {
		*size = 1;
		return s[0];
	}
	if (s[0] < 0xE0) {
		*size = 2;
		return ((uint32_t)(s[0] & 0x1F) << 6) | (s[1] & 0x3F);
	}
	if (s[0] < 0xF0) {
		*size = 3;
		return ((uint32_t)(s[0] & 0x0F) << 12) |
		    ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
	}
	*size = 4;
	return ((uint32_t)(s[0] & 0x07) << 18) |
	    ((uint32_t)(s[1] & 0x3F) << 12) | ((uint32_t)(s[2] & 0x3F) << 6) |
	    (s[3] & 0x3F);
}

static size_t
astral_slot(const struct dsl_astral *a, uint32_t cp)
{
	size_t i = (cp * 2654435761u) % ASTRAL_SLOTS;

	while (a->keys[i] != 0 && a->keys[i] != cp)
		i = (i + 1) % ASTRAL_SLOTS;
	return i;
}

/* Notes the PUA and astral characters of the string s. */
static int
astral_note(struct dsl_astral *a, const char *s, size_t n)
{
	const unsigned char	*u = (const unsigned char *)s;
	uint32_t		 cp;
	size_t			 i, size, slot;

	for (i = 0; i < n; i += size) {
		if (u[i] < 0xEE) {
			size = u[i] < 0x80 ? 1 : u[i] < 0xE0 ? 2 : 3;
			if (i + size > n)
				break;
			continue;
		}
		if (i + (u[i] < 0xF0 ? 3 : 4) > n)
			break;
		cp = utf8_decode(u + i, &size);
		if (cp >= PUA_FIRST && cp < PUA_FIRST + PUA_COUNT)
			a->used[(cp - PUA_FIRST) / 8] |=
			    (unsigned char)(1u << ((cp - PUA_FIRST) % 8));
		if (cp < 0x10000 || a->n >= PUA_COUNT)
			continue;
		if (a->keys == NULL) {
			a->keys = calloc(ASTRAL_SLOTS, sizeof(*a->keys));
			a->vals = calloc(ASTRAL_SLOTS, sizeof(*a->vals));
			if (a->keys == NULL || a->vals == NULL)
				return ENGINE_ENOMEM;
		}
		slot = astral_slot(a, cp);
		if (a->keys[slot] == 0) {
			a->keys[slot] = cp;
			a->n++;
		}
	}
	return 0;
}

static int
astral_scan(struct dsl_astral *a, const json_t *v, int depth, char *err)
{
	const char	*k;
	json_t		*c;
	size_t		 kl, i;
	int		 rc = 0;

	if (depth > DSL_EMIT_DEPTH)
		return engine_invalid(err, "document nests deeper than %d "
		    "levels", DSL_EMIT_DEPTH);
	if (json_is_string(v))
		return astral_note(a, json_string_value(v),
		    json_string_length(v));
	if (json_is_array(v))
		for (i = 0; rc == 0 && i < json_array_size(v); i++)
			rc = astral_scan(a, json_array_get(v, i), depth + 1,
			    err);
	if (json_is_object(v))
		json_object_keylen_foreach((json_t *)v, k, kl, c) {
			if ((rc = astral_note(a, k, kl)) != 0 ||
			    (rc = astral_scan(a, c, depth + 1, err)) != 0)
				break;
		}
	return rc;
}

/* Gives every astral character found a free private-use stand-in. */
static int
astral_assign(struct dsl_astral *a)
{
	size_t		i;
	uint32_t	pua = 0;

	if (a->n == 0)
		return 0;
	if ((a->back = calloc(PUA_COUNT, sizeof(*a->back))) == NULL)
		return ENGINE_ENOMEM;
	for (i = 0; i < ASTRAL_SLOTS; i++) {
		if (a->keys[i] == 0)
			continue;
		while (pua < PUA_COUNT &&
		    (a->used[pua / 8] & (1u << (pua % 8))))
			pua++;
		if (pua == PUA_COUNT) {
			a->keys[i] = 0xFFFFFFFFu;	/* stays escaped */
			continue;
		}
		a->vals[i] = PUA_FIRST + pua;
		a->back[pua] = a->keys[i];
		pua++;
	}
	return 0;
}

/*
 * s with its astral characters swapped for their stand-ins, in *out (free
 * it) when anything changed, else *out NULL.
 */
static int
astral_swap(const struct dsl_astral *a, const char *s, size_t n, char **out,
    size_t *outlen)
{
	const unsigned char	*u = (const unsigned char *)s;
	unsigned char		*b;
	uint32_t		 cp;
	size_t			 i, k = 0, size, slot;

	*out = NULL;
	if (a->n == 0)
		return 0;
	for (i = 0; i < n; i++)
		if (u[i] >= 0xF0)
			break;
	if (i == n)
		return 0;
	if ((b = malloc(n + 1)) == NULL)
		return ENGINE_ENOMEM;
	for (i = 0; i < n; i += size) {
		size = 1;
		if (u[i] >= 0xF0 && i + 4 <= n) {
			cp = utf8_decode(u + i, &size);
			slot = astral_slot(a, cp);
			if (a->keys[slot] == cp && a->vals[slot] != 0) {
				cp = a->vals[slot];
				b[k++] = (unsigned char)(0xE0 | (cp >> 12));
				b[k++] = (unsigned char)(0x80 | ((cp >> 6) &
				    0x3F));
				b[k++] = (unsigned char)(0x80 | (cp & 0x3F));
				continue;
			}
		}
		memcpy(b + k, u + i, size);
		k += size;
	}
	b[k] = '\0';
	*out = (char *)b;
	*outlen = k;
	return 0;
}

/* Puts the astral characters back into the emitter's output. */
static int
astral_restore(const struct dsl_astral *a, char **buf, size_t *len)
{
	const unsigned char	*u = (const unsigned char *)*buf;
	unsigned char		*b;
	uint32_t		 cp;
	size_t			 i, k = 0, size, extra = 0;

	if (a->n == 0)
		return 0;
	for (i = 0; i + 2 < *len; i++)
		if (u[i] == 0xEE || u[i] == 0xEF)
			extra++;
	if ((b = malloc(*len + extra + 1)) == NULL)
		return ENGINE_ENOMEM;
	for (i = 0; i < *len; i += size) {
		size = 1;
		if ((u[i] == 0xEE || u[i] == 0xEF) && i + 3 <= *len) {
			cp = utf8_decode(u + i, &size);
			if (cp >= PUA_FIRST && cp < PUA_FIRST + PUA_COUNT &&
			    a->back[cp - PUA_FIRST] != 0) {
				cp = a->back[cp - PUA_FIRST];
				b[k++] = (unsigned char)(0xF0 | (cp >> 18));
				b[k++] = (unsigned char)(0x80 | ((cp >> 12) &
				    0x3F));
				b[k++] = (unsigned char)(0x80 | ((cp >> 6) &
				    0x3F));
				b[k++] = (unsigned char)(0x80 | (cp & 0x3F));
				continue;
			}
		}
		memcpy(b + k, u + i, size);
		k += size;
	}
	b[k] = '\0';
	free(*buf);
	*buf = (char *)b;
	*len = k;
	return 0;
}

/* ====== Emitter ====== */

struct dsl_emitter {
	yaml_emitter_t		 y;
	struct dbuf		 out;	/* at most DSL_EMIT_MAX */
	struct dsl_astral	 astral;
	char			*err;
};

static int
emit_write(void *data, unsigned char *bytes, size_t size)
{
	return dbuf_add(data, bytes, size) == DBUF_OK;
}

/* Passes ev to the emitter, which owns it from here on. */
static int
emit_event(struct dsl_emitter *e, yaml_event_t *ev)
{
	if (yaml_emitter_emit(&e->y, ev))
		return 0;
	if (e->out.err == DBUF_ETOOBIG)
		return engine_invalid(e->err, "yaml would exceed %u bytes",
		    DSL_EMIT_MAX);
	if (e->y.error == YAML_MEMORY_ERROR || e->y.error == YAML_WRITER_ERROR)
		return ENGINE_ENOMEM;
	return engine_invalid(e->err, "yaml emitter: %s",
	    e->y.problem ? e->y.problem : "error");
}

/* A plain scalar that resolves to its own type: a number, bool, null. */
static int
emit_plain(struct dsl_emitter *e, const char *text)
{
	yaml_event_t ev;

	if (!yaml_scalar_event_initialize(&ev, NULL, NULL,
	    (yaml_char_t *)text, (int)strlen(text), 1, 0,
	    YAML_PLAIN_SCALAR_STYLE))
		return ENGINE_ENOMEM;
	return emit_event(e, &ev);
}

static int
emit_string(struct dsl_emitter *e, const char *s, size_t n)
{
	yaml_event_t		 ev;
	yaml_scalar_style_t	 style = YAML_ANY_SCALAR_STYLE;
	char			*swapped = NULL;
	size_t			 swlen = 0;
	int			 plain, rc;

	if (n > INT32_MAX)
		return engine_invalid(e->err, "string too long for yaml");
	/* Plain text is allowed only where PyYAML would read a string. */
	plain = dsl_resolve(s, n) == DSL_K_STR;
	if (memchr(s, '\n', n) != NULL)
		style = YAML_LITERAL_SCALAR_STYLE;
	if ((rc = astral_swap(&e->astral, s, n, &swapped, &swlen)) != 0)
		return rc;
	if (swapped != NULL) {
		s = swapped;
		n = swlen;
	}
	if (!yaml_scalar_event_initialize(&ev, NULL, (yaml_char_t *)TAG_STR,
	    (yaml_char_t *)s, (int)n, plain, 1, style))
		rc = engine_invalid(e->err, "string is not valid UTF-8");
	else
		rc = emit_event(e, &ev);
	free(swapped);
	return rc;
}

struct dsl_key {
	const char	*k;
	size_t		 kl;
	json_t		*v;
};

/* Python's sort of str keys: code point order, which is UTF-8 byte order. */
static int
key_cmp(const void *a, const void *b)
{
	const struct dsl_key	*x = a, *y = b;
	size_t			 n = x->kl < y->kl ? x->kl : y->kl;
	int			 c = memcmp(x->k, y->k, n);

	if (c != 0)
		return c;
	return x->kl < y->kl ? -1 : x->kl > y->kl;
}

static int emit_value(struct dsl_emitter *, const json_t *, int);

static int
emit_mapping(struct dsl_emitter *e, const json_t *v, int depth)
{
	struct dsl_key	*keys = NULL;
	yaml_event_t	 ev;
	const char	*k;
	json_t		*c;
	size_t		 n = 0, i, kl;
	int		 rc = 0;

	if (json_object_size(v) > 0 &&
	    (keys = calloc(json_object_size(v), sizeof(*keys))) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	json_object_keylen_foreach((json_t *)v, k, kl, c) {
		keys[n].k = k;
		keys[n].kl = kl;
		keys[n].v = c;
		n++;
	}
	if (n > 1)
		qsort(keys, n, sizeof(*keys), key_cmp);
	if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
	    YAML_BLOCK_MAPPING_STYLE)) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = emit_event(e, &ev)) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		if ((rc = emit_string(e, keys[i].k, keys[i].kl)) != 0 ||
		    (rc = emit_value(e, keys[i].v, depth + 1)) != 0)
			goto out;
	}
	yaml_mapping_end_event_initialize(&ev);
	rc = emit_event(e, &ev);
out:
	free(keys);
	return rc;
}

static int
emit_value(struct dsl_emitter *e, const json_t *v, int depth)
{
	yaml_event_t	ev;
	char		num[64];
	size_t		i;
	int		rc = 0;

	if (depth > DSL_EMIT_DEPTH)
		return engine_invalid(e->err, "document nests deeper than %d "
		    "levels", DSL_EMIT_DEPTH);
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		rc = emit_mapping(e, v, depth);
		break;
	case JSON_ARRAY:
		if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
		    YAML_BLOCK_SEQUENCE_STYLE))
			return ENGINE_ENOMEM;
		if ((rc = emit_event(e, &ev)) != 0)
			return rc;
		for (i = 0; rc == 0 && i < json_array_size(v); i++)
			rc = emit_value(e, json_array_get(v, i), depth + 1);
		if (rc != 0)
			return rc;
		yaml_sequence_end_event_initialize(&ev);
		rc = emit_event(e, &ev);
		break;
	case JSON_STRING:
		rc = emit_string(e, json_string_value(v),
		    json_string_length(v));
		break;
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
		rc = emit_plain(e, num);
		break;
	case JSON_REAL:
		py_float_repr(json_real_value(v), num, sizeof(num));
		rc = emit_plain(e, num);
		break;
	case JSON_TRUE:
		rc = emit_plain(e, "true");
		break;
	case JSON_FALSE:
		rc = emit_plain(e, "false");
		break;
	case JSON_NULL:
		rc = emit_plain(e, "null");
		break;
	}
	return rc;
}

int
dsl_emit(const json_t *doc, char *err, char **out, size_t *outlen)
{
	struct dsl_emitter	*e = NULL;
	yaml_event_t		 ev;
	int			 have_emitter = 0, rc;

	*out = NULL;
	*outlen = 0;
	if (doc == NULL) {
		rc = engine_invalid(err, "no document to emit");
		goto out;
	}
	if ((e = calloc(1, sizeof(*e))) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	dbuf_init(&e->out, DSL_EMIT_MAX);
	e->err = err;
	if ((rc = astral_scan(&e->astral, doc, 0, err)) != 0 ||
	    (rc = astral_assign(&e->astral)) != 0)
		goto out;
	if (!yaml_emitter_initialize(&e->y)) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	have_emitter = 1;
	yaml_emitter_set_output(&e->y, emit_write, &e->out);
	yaml_emitter_set_unicode(&e->y, 1);
	yaml_emitter_set_width(&e->y, 80);
	yaml_emitter_set_indent(&e->y, 2);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	if ((rc = emit_event(e, &ev)) != 0)
		goto out;
	if (!yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1)) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = emit_event(e, &ev)) != 0 ||
	    (rc = emit_value(e, doc, 0)) != 0)
		goto out;
	yaml_document_end_event_initialize(&ev, 1);
	if ((rc = emit_event(e, &ev)) != 0)
		goto out;
	yaml_stream_end_event_initialize(&ev);
	if ((rc = emit_event(e, &ev)) != 0)
		goto out;
	if ((*out = dbuf_take(&e->out, outlen)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = astral_restore(&e->astral, out, outlen)) != 0) {
		free(*out);
		*out = NULL;
		goto out;
	}
out:
	if (e != NULL) {
		if (have_emitter)
			yaml_emitter_delete(&e->y);
		dbuf_free(&e->out);
		free(e->astral.keys);
		free(e->astral.vals);
		free(e->astral.back);
		free(e);
	}
	return rc;
}
