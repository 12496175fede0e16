/*
 * filter.c — Dify's metadata filtering of a dataset's documents
 * (metadata_filtering_conditions: {logical_operator: and|or, conditions:
 * [{name, comparison_operator, value}]}), read from each document's
 * doc_metadata values and, when the dataset's built-in fields are on,
 * its built-in ones (document_name, uploader, upload_date,
 * last_update_date, source). The operators are Dify's per type: strings
 * contains, not contains, start with, end with, is, is not, in, not in;
 * numbers =, ≠, >, <, ≥, ≤; times before, after (and the number ones);
 * every type empty, not empty.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/knowledge/knowledge.h"
#include "engine/records/records.h"

enum op {
	OP_CONTAINS, OP_NOT_CONTAINS, OP_START, OP_END, OP_IS, OP_IS_NOT,
	OP_IN, OP_NOT_IN, OP_EMPTY, OP_NOT_EMPTY, OP_LT, OP_GT, OP_LE, OP_GE
};

static const struct {
	const char	*name;
	enum op		 op;
} kb_ops_names[] = {
	{ "contains", OP_CONTAINS }, { "not contains", OP_NOT_CONTAINS },
	{ "start with", OP_START }, { "end with", OP_END },
	{ "is", OP_IS }, { "=", OP_IS }, { "is not", OP_IS_NOT },
	{ "≠", OP_IS_NOT }, { "in", OP_IN }, { "not in", OP_NOT_IN },
	{ "empty", OP_EMPTY }, { "not empty", OP_NOT_EMPTY },
	{ "<", OP_LT }, { "before", OP_LT }, { ">", OP_GT },
	{ "after", OP_GT }, { "≤", OP_LE }, { "≥", OP_GE }, { NULL, 0 }
};

static int
op_of(const char *s, enum op *op)
{
	size_t i;

	for (i = 0; s != NULL && kb_ops_names[i].name != NULL; i++)
		if (strcmp(kb_ops_names[i].name, s) == 0) {
			*op = kb_ops_names[i].op;
			return 0;
		}
	return -1;
}

int
kb_filter_check(const json_t *f, char *err)
{
	const json_t	*c;
	const char	*lo;
	enum op		 op;
	size_t		 i;

	if (f == NULL || json_is_null(f))
		return 0;
	lo = json_string_value(json_object_get(f, "logical_operator"));
	if (!json_is_object(f) || (json_object_get(f, "conditions") != NULL &&
	    !json_is_array(json_object_get(f, "conditions"))))
		return engine_invalid(err, "metadata_filtering_conditions must "
		    "be {logical_operator, conditions: [...]}");
	if (lo != NULL && strcmp(lo, "and") != 0 && strcmp(lo, "or") != 0)
		return engine_invalid(err, "logical_operator must be and or "
		    "or");
	json_array_foreach(json_object_get(f, "conditions"), i, c) {
		if (!json_is_string(json_object_get(c, "name")))
			return engine_invalid(err, "a metadata condition needs "
			    "a name");
		if (op_of(json_string_value(json_object_get(c,
		    "comparison_operator")), &op) != 0)
			return engine_invalid(err, "unknown comparison_operator "
			    "'%s'", json_string_value(json_object_get(c,
			    "comparison_operator")) ? json_string_value(
			    json_object_get(c, "comparison_operator")) : "");
	}
	return 0;
}

/* The value of field name of document d (borrowed, NULL when it has
 * none); built-in fields when on is set. */
static const json_t *
doc_value(const json_t *d, const char *name, int on)
{
	const json_t	*v;
	size_t		 i;

	json_array_foreach(json_object_get(d, "doc_metadata"), i, v)
		if (record_field_is(v, "name", name))
			return json_object_get(v, "value");
	if (!on)
		return NULL;
	if (strcmp(name, "document_name") == 0)
		return json_object_get(d, "name");
	if (strcmp(name, "uploader") == 0)
		return json_object_get(d, "created_by");
	if (strcmp(name, "upload_date") == 0)
		return json_object_get(d, "created_at");
	if (strcmp(name, "last_update_date") == 0)
		return json_object_get(d, "updated_at") ? json_object_get(d,
		    "updated_at") : json_object_get(d, "created_at");
	if (strcmp(name, "source") == 0)
		return json_object_get(d, "data_source_type");
	return NULL;
}

/* A number of v (a number or a numeric string) into *x; -1 if none. */
static int
num_of(const json_t *v, double *x)
{
	char *end;

	if (json_is_number(v)) {
		*x = json_number_value(v);
		return 0;
	}
	if (!json_is_string(v) || json_string_length(v) == 0)
		return -1;
	*x = strtod(json_string_value(v), &end);
	return *end == '\0' ? 0 : -1;
}

/* The text of v into buf (strings as they are, numbers printed). */
static const char *
text_of(const json_t *v, char *buf, size_t n)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v))
		snprintf(buf, n, "%lld", (long long)json_integer_value(v));
	else if (json_is_number(v))
		snprintf(buf, n, "%g", json_number_value(v));
	else
		return NULL;
	return buf;
}

/* in / not in: the value is one of want (a list, or a string of
 * comma-separated items, as Dify's). */
static int
one_of(const char *s, const json_t *want)
{
	const json_t	*w;
	const char	*p, *q;
	char		 b[64];
	size_t		 i;

	if (json_is_array(want)) {
		json_array_foreach(want, i, w) {
			const char *t = text_of(w, b, sizeof(b));

			if (t != NULL && strcmp(t, s) == 0)
				return 1;
		}
		return 0;
	}
	if ((p = json_string_value(want)) == NULL)
		return 0;
	for (;;) {
		q = strchr(p, ',');
		while (*p == ' ')
			p++;
		i = q ? (size_t)(q - p) : strlen(p);
		while (i > 0 && p[i - 1] == ' ')
			i--;
		if (strlen(s) == i && strncmp(s, p, i) == 0)
			return 1;
		if (q == NULL)
			return 0;
		p = q + 1;
	}
}

static int
cond_match(const json_t *d, const json_t *c, int on)
{
	const json_t	*v = doc_value(d, json_string_value(json_object_get(c,
			    "name")), on);
	const json_t	*want = json_object_get(c, "value");
	char		 b1[64], b2[64];
	const char	*s, *w;
	double		 x, y;
	size_t		 sl, wl;
	enum op		 op;
	int		 empty;

	if (op_of(json_string_value(json_object_get(c,
	    "comparison_operator")), &op) != 0)
		return 0;
	empty = v == NULL || json_is_null(v) || (json_is_string(v) &&
	    json_string_length(v) == 0);
	if (op == OP_EMPTY || op == OP_NOT_EMPTY)
		return (op == OP_EMPTY) == empty;
	if (empty)
		return 0;
	switch (op) {
	case OP_LT: case OP_GT: case OP_LE: case OP_GE:
		if (num_of(v, &x) != 0 || num_of(want, &y) != 0)
			return 0;
		return op == OP_LT ? x < y : op == OP_GT ? x > y :
		    op == OP_LE ? x <= y : x >= y;
	case OP_IS: case OP_IS_NOT:
		/* numbers compare as numbers, else as text */
		if (json_is_number(v) && num_of(want, &y) == 0)
			return (json_number_value(v) == y) == (op == OP_IS);
		s = text_of(v, b1, sizeof(b1));
		w = text_of(want, b2, sizeof(b2));
		return s != NULL && w != NULL && (strcmp(s, w) == 0) ==
		    (op == OP_IS);
	case OP_IN: case OP_NOT_IN:
		if ((s = text_of(v, b1, sizeof(b1))) == NULL)
			return 0;
		return one_of(s, want) == (op == OP_IN);
	default:
		break;
	}
	if ((s = text_of(v, b1, sizeof(b1))) == NULL || (w = text_of(want,
	    b2, sizeof(b2))) == NULL)
		return 0;
	sl = strlen(s);
	wl = strlen(w);
	switch (op) {
	case OP_CONTAINS:
		return strstr(s, w) != NULL;
	case OP_NOT_CONTAINS:
		return strstr(s, w) == NULL;
	case OP_START:
		return strncmp(s, w, wl) == 0;
	case OP_END:
		return sl >= wl && strcmp(s + sl - wl, w) == 0;
	default:
		return 0;
	}
}

int
kb_filter_match(const json_t *ds, const json_t *d, const json_t *f)
{
	const json_t	*conds = json_object_get(f, "conditions"), *c;
	int		 any = record_field_is(f, "logical_operator", "or");
	int		 on = json_is_true(json_object_get(ds,
			    "built_in_field_enabled"));
	size_t		 i;

	if (json_array_size(conds) == 0)
		return 1;
	json_array_foreach(conds, i, c) {
		int m = cond_match(d, c, on);

		if (any && m)
			return 1;
		if (!any && !m)
			return 0;
	}
	return !any;
}
