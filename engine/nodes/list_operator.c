/*
 * list_operator.c — the list-operator node, after Dify's
 * nodes/list_operator/node.py: filter -> extract -> order -> limit over an
 * array of strings, numbers, booleans or files.
 *
 * Filters use the list operator's own comparisons (not if-else's): for
 * strings contains, start with, end with, is, is not, in / not in (the
 * element is a substring of the value, or one of a list), empty, not
 * empty; for numbers = ≠ < ≤ > ≥ against float(value); for booleans is /
 * is not. For files, key names an attribute: name, extension, mime_type,
 * url, related_id (string tests), type, transfer_method (in / not in),
 * size (number tests). String values may hold {{#...#}} references.
 * extract_by.serial is 1-based and may be a template; order sorts
 * (stably) by value or by a file attribute; limit keeps the first `size`
 * items (Python slice semantics). Outputs result, first_record and
 * last_record (null when the result is empty).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/nodes/nodes.h"

enum kind { K_EMPTY, K_STRING, K_NUMBER, K_BOOL, K_FILE, K_OTHER };

static enum kind
kind_of(const json_t *a)
{
	json_t		*e;
	size_t		 i;
	enum kind	 k = K_EMPTY, ek;

	json_array_foreach(a, i, e) {
		if (json_is_string(e))
			ek = K_STRING;
		else if (json_is_number(e))
			ek = K_NUMBER;
		else if (json_is_boolean(e))
			ek = K_BOOL;
		else if (tpl_is_file(e))
			ek = K_FILE;
		else
			return K_OTHER;
		if (k != K_EMPTY && k != ek)
			return K_OTHER;
		k = ek;
	}
	return k;
}

/* A file attribute as Dify's file_manager.get_attr reads it. */
static const char *
file_str_attr(const json_t *f, const char *key)
{
	const char *v = NULL;

	if (strcmp(key, "name") == 0)
		v = json_string_value(json_object_get(f, "filename"));
	else if (strcmp(key, "url") == 0) {
		v = json_string_value(json_object_get(f, "remote_url"));
		if (v == NULL)
			v = json_string_value(json_object_get(f, "url"));
	} else if (strcmp(key, "type") == 0 || strcmp(key, "extension") == 0 ||
	    strcmp(key, "mime_type") == 0 ||
	    strcmp(key, "transfer_method") == 0 ||
	    strcmp(key, "related_id") == 0)
		v = json_string_value(json_object_get(f, key));
	return v ? v : "";
}

static int
is_str_key(const char *key)
{
	return strcmp(key, "name") == 0 || strcmp(key, "extension") == 0 ||
	    strcmp(key, "mime_type") == 0 || strcmp(key, "url") == 0 ||
	    strcmp(key, "related_id") == 0;
}

static int
is_seq_key(const char *key)
{
	return strcmp(key, "type") == 0 || strcmp(key, "transfer_method") == 0;
}

/* ====== Comparisons ====== */

/* x in value: a substring of a string, or equal to an item of a list. */
static int
str_in(const char *x, const json_t *value)
{
	json_t	*e;
	size_t	 i;

	if (json_is_string(value))
		return strstr(json_string_value(value), x) != NULL;
	json_array_foreach(value, i, e)
		if (json_is_string(e) && strcmp(json_string_value(e), x) == 0)
			return 1;
	return 0;
}

/* Returns 1, 0, or -1 with c failed (an unknown operator). */
static int
str_test(struct node_ctx *c, const char *op, const char *x,
    const json_t *value)
{
	const char	*v = json_string_value(value);
	size_t		 lx = strlen(x), lv;

	if (strcmp(op, "empty") == 0)
		return *x == '\0';
	if (strcmp(op, "not empty") == 0)
		return *x != '\0';
	if (strcmp(op, "in") == 0)
		return str_in(x, value);
	if (strcmp(op, "not in") == 0)
		return !str_in(x, value);
	if (v == NULL)
		return node_fail(c, "Invalid filter value: operator '%s' "
		    "needs a string", op);
	lv = strlen(v);
	if (strcmp(op, "contains") == 0)
		return strstr(x, v) != NULL;
	if (strcmp(op, "not contains") == 0)
		return strstr(x, v) == NULL;
	if (strcmp(op, "start with") == 0)
		return strncmp(x, v, lv) == 0;
	if (strcmp(op, "end with") == 0)
		return lx >= lv && strcmp(x + lx - lv, v) == 0;
	if (strcmp(op, "is") == 0)
		return strcmp(x, v) == 0;
	if (strcmp(op, "is not") == 0)
		return strcmp(x, v) != 0;
	return node_fail(c, "Invalid condition: %s", op);
}

static int
num_test(struct node_ctx *c, const char *op, double x, double v)
{
	if (strcmp(op, "=") == 0)
		return x == v;
	if (strcmp(op, "≠") == 0)
		return x != v;
	if (strcmp(op, "<") == 0)
		return x < v;
	if (strcmp(op, "≤") == 0)
		return x <= v;
	if (strcmp(op, ">") == 0)
		return x > v;
	if (strcmp(op, "≥") == 0)
		return x >= v;
	return node_fail(c, "Invalid condition: %s", op);
}

/* float(text), as Python reads it (surrounding blanks allowed). */
static int
py_float(const char *s, double *d)
{
	char *end;

	*d = strtod(s, &end);
	if (end == s)
		return -1;
	while (*end == ' ' || *end == '\t' || *end == '\n')
		end++;
	return *end == '\0' ? 0 : -1;
}

/* The condition's value with templates expanded (strings), or a copy. */
static json_t *
cond_value(struct node_ctx *c, const json_t *cond)
{
	json_t	*v = json_object_get(cond, "value"), *res;
	char	*text = NULL;

	if (!json_is_string(v))
		return v ? json_incref(v) : json_null();
	if (node_render(c, json_string_value(v), TPL_TEXT, &text) != 0)
		return NULL;
	res = json_string(text);
	free(text);
	if (res == NULL)
		node_fail(c, "out of memory");
	return res;
}

/*
 * Keeps the items of *arr that pass cond; *arr is replaced by a new
 * array. Returns 0 or -1 with c failed.
 */
static int
filter_one(struct node_ctx *c, enum kind k, const json_t *cond, json_t **arr)
{
	const char	*op = json_string_value(json_object_get(cond,
			    "comparison_operator"));
	const char	*key = json_string_value(json_object_get(cond, "key"));
	json_t		*val = NULL, *out = json_array(), *e;
	double		 num = 0;
	size_t		 i;
	int		 rc = -1, r;

	if (out == NULL || op == NULL) {
		node_fail(c, op == NULL ? "a filter condition has no "
		    "comparison_operator" : "out of memory");
		goto out;
	}
	if ((val = cond_value(c, cond)) == NULL)
		goto out;
	if (k == K_NUMBER && json_is_number(val)) {
		/* a number where Dify wants its text: take it as meant */
		num = json_number_value(val);
		json_decref(val);
		val = json_sprintf("%.17g", num);
	}
	if ((k == K_STRING || k == K_NUMBER) && !json_is_string(val)) {
		node_fail(c, "Invalid filter value: %s", json_is_null(val) ?
		    "none" : "expected a string");
		goto out;
	}
	if (k == K_BOOL && !json_is_boolean(val)) {
		node_fail(c, "Invalid filter value: a boolean list is filtered "
		    "with true or false");
		goto out;
	}
	if (k == K_NUMBER || (k == K_FILE && key != NULL &&
	    strcmp(key, "size") == 0)) {
		if (!json_is_string(val) || py_float(json_string_value(val),
		    &num) != 0) {
			node_fail(c, "Invalid filter value: '%s' is not a "
			    "number", json_is_string(val) ?
			    json_string_value(val) : "");
			goto out;
		}
	}
	if (k == K_FILE) {
		if (key == NULL || !(is_str_key(key) || is_seq_key(key) ||
		    strcmp(key, "size") == 0)) {
			node_fail(c, "Invalid key: %s", key ? key : "(none)");
			goto out;
		}
		if (json_is_boolean(val)) {
			node_fail(c, "File filter expects a string value, got "
			    "a boolean");
			goto out;
		}
		if (is_str_key(key) && !json_is_string(val)) {
			node_fail(c, "Invalid key: %s takes a string value",
			    key);
			goto out;
		}
		if (is_seq_key(key) && strcmp(op, "in") != 0 &&
		    strcmp(op, "not in") != 0) {
			node_fail(c, "Invalid condition: %s", op);
			goto out;
		}
	}
	json_array_foreach(*arr, i, e) {
		if (k == K_STRING)
			r = str_test(c, op, json_string_value(e), val);
		else if (k == K_NUMBER)
			r = num_test(c, op, json_number_value(e), num);
		else if (k == K_BOOL) {
			if (strcmp(op, "is") == 0)
				r = json_is_true(e) == json_is_true(val);
			else if (strcmp(op, "is not") == 0)
				r = json_is_true(e) != json_is_true(val);
			else
				r = node_fail(c, "Invalid condition: %s", op);
		} else if (strcmp(key, "size") == 0)
			r = num_test(c, op, json_number_value(json_object_get(
			    e, "size")), num);
		else
			r = str_test(c, op, file_str_attr(e, key), val);
		if (r < 0)
			goto out;
		if (r && json_array_append(out, e) != 0) {
			node_fail(c, "out of memory");
			goto out;
		}
	}
	json_decref(*arr);
	*arr = out;
	out = NULL;
	rc = 0;
out:
	json_decref(out);
	json_decref(val);
	return rc;
}

/* ====== Order ====== */

struct item {
	json_t	*v;
	size_t	 idx;
};

struct order {
	const char	*key;	/* file attribute, or NULL */
	int		 desc;
};

static __thread const struct order *sort_by;

static int
item_cmp(const void *pa, const void *pb)
{
	const struct item	*a = pa, *b = pb;
	const char		*key = sort_by->key;
	double			 x, y;
	int			 r;

	if (key == NULL && json_is_string(a->v))
		r = strcmp(json_string_value(a->v), json_string_value(b->v));
	else if (key == NULL && json_is_boolean(a->v))
		r = json_is_true(a->v) - json_is_true(b->v);
	else if (key == NULL || strcmp(key, "size") == 0) {
		x = json_number_value(key ? json_object_get(a->v, key) : a->v);
		y = json_number_value(key ? json_object_get(b->v, key) : b->v);
		r = x < y ? -1 : x > y;
	} else
		r = strcmp(file_str_attr(a->v, key), file_str_attr(b->v, key));
	if (sort_by->desc)
		r = -r;
	if (r == 0)	/* Python's sort is stable, reversed or not */
		r = a->idx < b->idx ? -1 : a->idx > b->idx;
	return r;
}

static int
order_list(struct node_ctx *c, enum kind k, json_t **arr)
{
	json_t		*ob = json_object_get(c->node->data, "order_by");
	const char	*key = json_string_value(json_object_get(ob, "key"));
	const char	*dir = json_string_value(json_object_get(ob, "value"));
	struct order	 o;
	struct item	*items = NULL;
	json_t		*out = NULL;
	size_t		 i, n = json_array_size(*arr);
	int		 rc = -1;

	o.desc = dir != NULL && strcmp(dir, "desc") == 0;
	o.key = NULL;
	if (k == K_FILE) {
		if (key == NULL || !(is_str_key(key) || is_seq_key(key) ||
		    strcmp(key, "size") == 0)) {
			node_fail(c, "Invalid order key: %s", key ? key :
			    "(none)");
			goto out;
		}
		o.key = key;
	}
	if ((items = calloc(n + 1, sizeof(*items))) == NULL ||
	    (out = json_array()) == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		items[i].v = json_array_get(*arr, i);
		items[i].idx = i;
	}
	sort_by = &o;
	qsort(items, n, sizeof(*items), item_cmp);
	sort_by = NULL;
	for (i = 0; i < n; i++)
		if (json_array_append(out, items[i].v) != 0) {
			node_fail(c, "out of memory");
			goto out;
		}
	json_decref(*arr);
	*arr = out;
	out = NULL;
	rc = 0;
out:
	free(items);
	json_decref(out);
	return rc;
}

/* ====== The node ====== */

static int
extract_item(struct node_ctx *c, json_t **arr)
{
	json_t		*eb = json_object_get(c->node->data, "extract_by");
	json_t		*serial = json_object_get(eb, "serial"), *one;
	char		*text = NULL, *end;
	long long	 idx;
	int		 rc = -1;

	if (json_is_integer(serial)) {
		if ((text = malloc(32)) != NULL)
			snprintf(text, 32, "%" JSON_INTEGER_FORMAT,
			    json_integer_value(serial));
	} else if (node_render(c, json_string_value(serial) ?
	    json_string_value(serial) : "", TPL_TEXT, &text) != 0)
		goto out;
	if (text == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	idx = strtoll(text, &end, 10);
	while (*end == ' ' || *end == '\n' || *end == '\t')
		end++;
	if (end == text || *end != '\0') {
		node_fail(c, "Invalid serial index: '%s' is not an integer",
		    text);
		goto out;
	}
	if (idx < 1) {
		node_fail(c, "Invalid serial index: must be >= 1, got %lld",
		    idx);
		goto out;
	}
	if ((size_t)idx > json_array_size(*arr)) {
		node_fail(c, "Invalid serial index: must be <= %zu, got %lld",
		    json_array_size(*arr), idx);
		goto out;
	}
	one = json_pack("[O]", json_array_get(*arr, (size_t)idx - 1));
	if (one == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	json_decref(*arr);
	*arr = one;
	rc = 0;
out:
	free(text);
	return rc;
}

/* arr[:size] as Python slices it. */
static int
limit_list(struct node_ctx *c, json_t **arr)
{
	json_t		*lim = json_object_get(c->node->data, "limit");
	json_int_t	 size = json_integer_value(json_object_get(lim,
			    "size"));
	json_int_t	 n = (json_int_t)json_array_size(*arr), i;
	json_t		*out;

	if (!json_is_integer(json_object_get(lim, "size")))
		return node_fail(c, "limit.size must be an integer");
	if (size < 0)
		size = n + size < 0 ? 0 : n + size;
	if (size >= n)
		return 0;
	if ((out = json_array()) == NULL)
		return node_fail(c, "out of memory");
	for (i = 0; i < size; i++)
		if (json_array_append(out, json_array_get(*arr, (size_t)i)) !=
		    0) {
			json_decref(out);
			return node_fail(c, "out of memory");
		}
	json_decref(*arr);
	*arr = out;
	return 0;
}

static int
enabled(const struct node_ctx *c, const char *what)
{
	return json_is_true(json_object_get(json_object_get(c->node->data,
	    what), "enabled"));
}

static int
list_operator_run(struct node_ctx *c)
{
	json_t		*sel = json_object_get(c->node->data, "variable");
	json_t		*v = node_resolve(c, sel), *arr = NULL, *cond;
	enum kind	 k;
	size_t		 i;
	int		 rc = -1;

	if (v == NULL) {
		node_fail(c, "Variable not found for selector: %s",
		    node_selector_tail(sel));
		goto out;
	}
	if (json_is_null(v) || (json_is_array(v) && json_array_size(v) ==
	    0) || (json_is_string(v) && json_string_length(v) == 0)) {
		if ((c->process_data = json_pack("{s:[]}", "variable")) ==
		    NULL || json_object_set_new(c->inputs, "variable",
		    json_array()) != 0 || json_object_set_new(c->outputs,
		    "result", json_array()) != 0 ||
		    json_object_set_new(c->outputs, "first_record",
		    json_null()) != 0 || json_object_set_new(c->outputs,
		    "last_record", json_null()) != 0) {
			node_fail(c, "out of memory");
			goto out;
		}
		rc = 0;
		goto out;
	}
	if (!json_is_array(v) || (k = kind_of(v)) == K_OTHER) {
		node_fail(c, "Variable %s is not an array of files, numbers, "
		    "strings or booleans", node_selector_tail(sel));
		goto out;
	}
	if ((c->process_data = json_pack("{s:O}", "variable", v)) == NULL ||
	    json_object_set(c->inputs, "variable", v) != 0 ||
	    (arr = json_copy(v)) == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	if (enabled(c, "filter_by"))
		json_array_foreach(json_object_get(json_object_get(
		    c->node->data, "filter_by"), "conditions"), i, cond)
			if (filter_one(c, k, cond, &arr) != 0)
				goto out;
	if (enabled(c, "extract_by") && extract_item(c, &arr) != 0)
		goto out;
	if (enabled(c, "order_by") && order_list(c, k, &arr) != 0)
		goto out;
	if (enabled(c, "limit") && limit_list(c, &arr) != 0)
		goto out;
	if (json_object_set(c->outputs, "result", arr) != 0 ||
	    json_object_set(c->outputs, "first_record", json_array_size(arr) ?
	    json_array_get(arr, 0) : json_null()) != 0 ||
	    json_object_set(c->outputs, "last_record", json_array_size(arr) ?
	    json_array_get(arr, json_array_size(arr) - 1) : json_null()) !=
	    0) {
		node_fail(c, "out of memory");
		goto out;
	}
	rc = 0;
out:
	json_decref(arr);
	json_decref(v);
	return rc;
}

const struct node_type node_list_operator = {
	"list-operator", list_operator_run, 0
};
