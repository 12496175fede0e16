/*
 * json_process.c — Dify's builtin `json_process` provider
 * (api/core/tools/builtin_tool/providers/json_process/tools/), with the
 * same parameters and answers (text messages; failures are messages too):
 *
 *   parse         content, json_filter (or query), ensure_ascii: the
 *                 values the path finds; one value alone, objects and
 *                 lists as json.dumps, other scalars as Python's str()
 *   json_insert   content, query, new_value (parsed as JSON when it is),
 *                 index, create_path, ensure_ascii: into an object
 *                 (dict.update with an object), into a list (append, or
 *                 insert at index), else replace the value
 *   json_replace  content, query, replace_model (pattern | key | value),
 *                 replace_pattern, replace_value, value_decode,
 *                 ensure_ascii
 *   json_delete   content, query, ensure_ascii
 * ("json_parse", "insert", "replace" and "delete" are taken as the same.)
 *
 * Paths are the subset of jsonpath_ng's grammar these tools meet in
 * practice: an optional leading $, .name, ['name'] / ["name"], [n]
 * (negative counts from the end), [*], .*, and recursive descent ..name,
 * ..*, ..[n], with jsonpath_ng's match order.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tools/tools.h"

#define JP_MAX_STEPS	64
#define JP_MAX_MATCHES	100000

enum jp_kind { JP_FIELD, JP_ANYFIELD, JP_INDEX, JP_ANYINDEX };

struct jp_step {
	enum jp_kind	 kind;
	int		 descend;	/* ..step */
	char		*name;
	long		 index;
};

struct jp_path {
	struct jp_step	 steps[JP_MAX_STEPS];
	size_t		 n;
};

/* A value found, and where: parent[key] or parent[index]; no parent for
 * the root. A match holds references to both and a copy of the key, so
 * that changing the document under one match never leaves another
 * pointing at freed memory. */
struct jp_match {
	json_t		*value;
	json_t		*parent;
	char		*key;		/* NULL for an index */
	size_t		 index;
};

struct jp_matches {
	struct jp_match	*m;
	size_t		 n, cap;
	int		 oom;
};

/* ====== Paths ====== */

static void
jp_free(struct jp_path *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->steps[i].name);
	p->n = 0;
}

/* Parses path s into p. Returns 0 or -1 (a syntax this subset lacks). */
static int
jp_parse(const char *s, struct jp_path *p)
{
	struct jp_step	*st;
	const char	*b;
	char		 q;
	int		 descend;

	memset(p, 0, sizeof(*p));
	while (isspace((unsigned char)*s))
		s++;
	if (*s == '$')
		s++;
	else if (*s != '\0' && *s != '.' && *s != '[') {
		/* a bare first name: "a.b" */
		b = s;
		while (*s != '\0' && *s != '.' && *s != '[')
			s++;
		st = &p->steps[p->n++];
		st->kind = JP_FIELD;
		if ((st->name = strndup(b, (size_t)(s - b))) == NULL)
			goto bad;
		if (strcmp(st->name, "*") == 0)
			st->kind = JP_ANYFIELD;
	}
	while (*s != '\0' && !isspace((unsigned char)*s)) {
		if (p->n >= JP_MAX_STEPS)
			goto bad;
		st = &p->steps[p->n];
		memset(st, 0, sizeof(*st));
		descend = 0;
		if (s[0] == '.' && s[1] == '.') {
			descend = 1;
			s += 2;
		} else if (*s == '.')
			s++;
		else if (*s != '[')
			goto bad;
		st->descend = descend;
		if (*s == '[') {
			s++;
			if (*s == '*' && s[1] == ']') {
				st->kind = JP_ANYINDEX;
				s += 2;
			} else if (*s == '\'' || *s == '"') {
				q = *s++;
				b = s;
				while (*s != '\0' && *s != q)
					s++;
				if (*s != q || s[1] != ']')
					goto bad;
				st->kind = JP_FIELD;
				if ((st->name = strndup(b,
				    (size_t)(s - b))) == NULL)
					goto bad;
				s += 2;
			} else {
				char *end;

				st->kind = JP_INDEX;
				st->index = strtol(s, &end, 10);
				if (end == s || *end != ']')
					goto bad;
				s = end + 1;
			}
		} else {
			b = s;
			while (*s != '\0' && *s != '.' && *s != '[' &&
			    !isspace((unsigned char)*s))
				s++;
			if (s == b)
				goto bad;
			st->kind = JP_FIELD;
			if ((st->name = strndup(b, (size_t)(s - b))) == NULL)
				goto bad;
			if (strcmp(st->name, "*") == 0)
				st->kind = JP_ANYFIELD;
		}
		p->n++;
	}
	while (isspace((unsigned char)*s))
		s++;
	if (*s != '\0')
		goto bad;
	return 0;
bad:
	jp_free(p);
	return -1;
}

static void
matches_release(struct jp_matches *ms)
{
	size_t i;

	for (i = 0; i < ms->n; i++) {
		json_decref(ms->m[i].value);
		json_decref(ms->m[i].parent);
		free(ms->m[i].key);
	}
	free(ms->m);
	memset(ms, 0, sizeof(*ms));
}

static void
add(struct jp_matches *ms, json_t *v, json_t *parent, const char *key,
    size_t index)
{
	struct jp_match	*m;
	size_t		 cap;
	char		*k = NULL;

	if (ms->oom || (key != NULL && (k = strdup(key)) == NULL)) {
		ms->oom = 1;
		return;
	}
	if (ms->n >= JP_MAX_MATCHES) {
		free(k);
		ms->oom = 1;
		return;
	}
	if (ms->n == ms->cap) {
		cap = ms->cap ? ms->cap * 2 : 16;
		if ((m = realloc(ms->m, cap * sizeof(*m))) == NULL) {
			free(k);
			ms->oom = 1;
			return;
		}
		ms->m = m;
		ms->cap = cap;
	}
	ms->m[ms->n].value = json_incref(v);
	ms->m[ms->n].parent = json_incref(parent);
	ms->m[ms->n].key = k;
	ms->m[ms->n].index = index;
	ms->n++;
}

/* One step (without descent) from m into out. */
static void
step_find(const struct jp_step *st, const struct jp_match *m,
    struct jp_matches *out)
{
	json_t		*v = m->value, *x;
	const char	*k;
	size_t		 i, n;
	long		 ix;

	switch (st->kind) {
	case JP_FIELD:
		if (json_is_object(v)) {
			json_object_foreach(v, k, x)
				if (strcmp(k, st->name) == 0)
					add(out, x, v, k, 0);
		}
		break;
	case JP_ANYFIELD:
		if (json_is_object(v))
			json_object_foreach(v, k, x)
				add(out, x, v, k, 0);
		break;
	case JP_INDEX:
		if (json_is_array(v)) {
			n = json_array_size(v);
			ix = st->index < 0 ? (long)n + st->index : st->index;
			if (ix >= 0 && (size_t)ix < n)
				add(out, json_array_get(v, (size_t)ix), v,
				    NULL, (size_t)ix);
		}
		break;
	case JP_ANYINDEX:
		if (json_is_array(v))
			json_array_foreach(v, i, x)
				add(out, x, v, NULL, i);
		else
			add(out, v, m->parent, m->key, m->index);
		break;
	}
}

/* jsonpath_ng's Descendants: the step here, then in every child. */
static void
descend_find(const struct jp_step *st, const struct jp_match *m,
    struct jp_matches *out, int depth)
{
	struct jp_match	 c;
	json_t		*x;
	const char	*k;
	size_t		 i;

	if (depth > 256)
		return;
	step_find(st, m, out);
	memset(&c, 0, sizeof(c));
	c.parent = m->value;
	if (json_is_array(m->value))
		json_array_foreach(m->value, i, x) {
			c.value = x;
			c.index = i;
			descend_find(st, &c, out, depth + 1);
		}
	else if (json_is_object(m->value))
		json_object_foreach(m->value, k, x) {
			c.value = x;
			c.key = (char *)k;	/* c is not released */
			descend_find(st, &c, out, depth + 1);
		}
}

/* Every match of p in root; -1 when out of memory or too many. */
static int
jp_find(const struct jp_path *p, json_t *root, struct jp_matches *out)
{
	struct jp_matches	cur = { 0 }, next;
	size_t			i, j;
	int			rc = -1;

	add(&cur, root, NULL, NULL, 0);
	for (i = 0; i < p->n; i++) {
		memset(&next, 0, sizeof(next));
		for (j = 0; j < cur.n; j++) {
			if (p->steps[i].descend)
				descend_find(&p->steps[i], &cur.m[j], &next,
				    0);
			else
				step_find(&p->steps[i], &cur.m[j], &next);
		}
		matches_release(&cur);
		cur = next;
		if (cur.oom)
			goto out;
	}
	*out = cur;
	memset(&cur, 0, sizeof(cur));
	rc = 0;
out:
	matches_release(&cur);
	return rc;
}

/*
 * Replaces the value at m (the root when it has no parent) by v (NULL:
 * its constructor failed). 0, or -1 when out of memory.
 */
static int
jp_set(json_t **root, const struct jp_match *m, json_t *v)
{
	if (v == NULL)
		return -1;
	if (m->parent == NULL) {
		json_decref(*root);
		*root = json_incref(v);
		return 0;
	}
	if (json_is_object(m->parent))
		return json_object_set(m->parent, m->key, v);
	return json_array_set(m->parent, m->index, v);
}

/* ====== Tools ====== */

/* One call's inputs and output. */
struct jcall {
	const json_t	*params;
	json_t		*root;
	struct jp_path	 path;
	struct jp_matches ms;
	int		 ascii;
	char		 msg[ENGINE_ERRMAX];	/* a failure, as text */
};

/* Reads content and the path; on a problem leaves a message. */
static int
jcall_begin(struct jcall *j, const char *path_param, int prefix_root)
{
	json_error_t	 je;
	const char	*content, *query;
	char		*b1 = NULL, *b2 = NULL, *q = NULL;
	int		 rc = -1;

	content = tool_param_str(j->params, "content", &b1);
	query = tool_param_str(j->params, path_param, &b2);
	if (query == NULL && strcmp(path_param, "json_filter") == 0)
		query = tool_param_str(j->params, "query", &b2);
	if (content == NULL || *content == '\0') {
		snprintf(j->msg, sizeof(j->msg), "Invalid parameter content");
		goto out;
	}
	if (query == NULL || *query == '\0') {
		snprintf(j->msg, sizeof(j->msg), "Invalid parameter %s",
		    path_param);
		goto out;
	}
	if ((j->root = json_loads(content, JSON_DECODE_ANY |
	    JSON_ALLOW_NUL, &je)) == NULL) {
		snprintf(j->msg, sizeof(j->msg), "%s: line %d column %d",
		    je.text, je.line, je.column);
		goto out;
	}
	if (prefix_root) {
		/* Dify's delete parses "$." + query.lstrip("$.") */
		while (*query == '$' || *query == '.')
			query++;
		if ((q = malloc(strlen(query) + 3)) == NULL)
			goto out;
		snprintf(q, strlen(query) + 3, "$.%s", query);
		query = q;
	}
	if (jp_parse(query, &j->path) != 0) {
		snprintf(j->msg, sizeof(j->msg), "Invalid JSON path '%s'",
		    query);
		goto out;
	}
	if (jp_find(&j->path, j->root, &j->ms) != 0) {
		snprintf(j->msg, sizeof(j->msg), "too many matches (at most "
		    "%d)", JP_MAX_MATCHES);
		goto out;
	}
	rc = 0;
out:
	free(b1);
	free(b2);
	free(q);
	return rc;
}

static void
jcall_end(struct jcall *j)
{
	json_decref(j->root);
	jp_free(&j->path);
	matches_release(&j->ms);
}

/* Answers with json.dumps(v) or, for a failure, the message. */
static int
answer_dumps(struct jcall *j, const json_t *v, struct tool_result *out)
{
	char	*s = NULL;
	int	 rc;

	if (j->msg[0] != '\0')
		return tool_result_text(out, j->msg, strlen(j->msg));
	if ((rc = tool_json_dumps(v, j->ascii, &s)) == 0)
		rc = tool_result_text(out, s, strlen(s));
	free(s);
	return rc;
}

static int
do_parse(struct jcall *j, struct tool_result *out)
{
	json_t	*res = NULL;
	char	*s = NULL;
	size_t	 i;
	int	 rc;

	if (jcall_begin(j, "json_filter", 0) != 0)
		return answer_dumps(j, NULL, out);
	if (j->ms.n == 1)
		res = json_incref(j->ms.m[0].value);
	else {
		res = json_array();
		for (i = 0; i < j->ms.n && res != NULL; i++)
			if (json_array_append(res, j->ms.m[i].value) != 0) {
				json_decref(res);
				res = NULL;
			}
	}
	if (res == NULL)
		rc = ENGINE_ENOMEM;
	else if (json_is_object(res) || json_is_array(res))
		rc = answer_dumps(j, res, out);
	else if (json_is_string(res))
		rc = tool_result_text(out, json_string_value(res),
		    json_string_length(res));
	else if ((rc = tpl_py_repr(res, &s)) == 0)
		rc = tool_result_text(out, s, strlen(s));
	free(s);
	json_decref(res);
	return rc;
}

/* new_value as Dify reads it: JSON when it parses, else the string. */
static json_t *
decode_value(const json_t *v)
{
	json_t		*d;
	const char	*s;

	if (v == NULL)
		return json_string("");
	if (!json_is_string(v))
		return json_deep_copy(v);
	s = json_string_value(v);
	if ((d = json_loads(s, JSON_DECODE_ANY, NULL)) != NULL)
		return d;
	return json_incref((json_t *)v);
}

/*
 * Dify's create_path: walks "a.b[0].c" making objects and lists. 0, -1
 * with j->msg saying why, or ENGINE_ENOMEM.
 */
static int
create_path(struct jcall *j, const char *query, json_t *nv)
{
	char	*path = NULL, *part, *next, *br;
	json_t	*cur = j->root, *x;
	long	 ix;
	int	 rc = -1;

	while (*query == '$')
		query++;
	while (*query == '.')
		query++;
	if ((path = strdup(query)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	for (part = path; part != NULL; part = next) {
		if ((next = strchr(part, '.')) != NULL)
			*next++ = '\0';
		if (!json_is_object(cur)) {
			snprintf(j->msg, sizeof(j->msg), "cannot create path "
			    "'%s' inside a value that is not an object",
			    part);
			goto out;
		}
		if ((br = strchr(part, '[')) != NULL) {
			*br = '\0';
			ix = strtol(br + 1, NULL, 10);
			if (ix < 0 || ix > 10000)
				goto out;
			if ((x = json_object_get(cur, part)) == NULL &&
			    json_object_set_new(cur, part, x = json_array()) !=
			    0)
				goto nomem;
			if (!json_is_array(x))
				goto out;
			while (json_array_size(x) <= (size_t)ix)
				if (json_array_append_new(x, json_object()) !=
				    0)
					goto nomem;
			cur = json_array_get(x, (size_t)ix);
		} else if (next == NULL) {
			if (json_object_set(cur, part, nv) != 0)
				goto nomem;
		} else {
			if ((x = json_object_get(cur, part)) == NULL &&
			    json_object_set_new(cur, part, x = json_object()) !=
			    0)
				goto nomem;
			cur = x;
		}
	}
	rc = 0;
	goto out;
nomem:
	rc = ENGINE_ENOMEM;
out:
	if (rc == -1 && j->msg[0] == '\0')
		snprintf(j->msg, sizeof(j->msg), "Failed to insert JSON "
		    "content");
	free(path);
	return rc;
}

static int
do_insert(struct jcall *j, struct tool_result *out)
{
	json_t		*nv = NULL, *v;
	const char	*query;
	char		*b = NULL;
	int64_t		 index = 0;
	int		 has_index, rc = 0;
	size_t		 i, n;

	if (json_object_get(j->params, "new_value") == NULL ||
	    json_is_null(json_object_get(j->params, "new_value"))) {
		snprintf(j->msg, sizeof(j->msg), "Invalid parameter "
		    "new_value");
		return answer_dumps(j, NULL, out);
	}
	if (jcall_begin(j, "query", 0) != 0)
		return answer_dumps(j, NULL, out);
	has_index = tool_param_int(j->params, "index", &index) == 0;
	if ((nv = decode_value(json_object_get(j->params,
	    "new_value"))) == NULL)
		return ENGINE_ENOMEM;
	query = tool_param_str(j->params, "query", &b);
	if (j->ms.n == 0 && tool_param_bool(j->params, "create_path", 0) &&
	    create_path(j, query, nv) == ENGINE_ENOMEM)
		rc = ENGINE_ENOMEM;
	for (i = 0; i < j->ms.n && j->msg[0] == '\0' && rc == 0; i++) {
		v = j->ms.m[i].value;
		if (json_is_object(v)) {
			if (!json_is_object(nv))
				snprintf(j->msg, sizeof(j->msg), "Cannot "
				    "insert non-dict value into dict");
			else if (json_object_update(v, nv) != 0)
				rc = ENGINE_ENOMEM;
		} else if (json_is_array(v)) {
			n = json_array_size(v);
			if (!has_index) {
				if (json_array_append(v, nv) != 0)
					rc = ENGINE_ENOMEM;
			} else {
				/* list.insert clamps the position */
				int64_t at = index < 0 ? (int64_t)n + index :
				    index;

				at = at < 0 ? 0 : at > (int64_t)n ?
				    (int64_t)n : at;
				if (json_array_insert(v, (size_t)at, nv) != 0)
					rc = ENGINE_ENOMEM;
			}
		} else if (jp_set(&j->root, &j->ms.m[i], nv) != 0)
			rc = ENGINE_ENOMEM;
	}
	if (rc == 0)
		rc = answer_dumps(j, j->root, out);
	json_decref(nv);
	free(b);
	return rc;
}

/* Moves item[from] to item[to]: 0, or -1 when out of memory. */
static int
rename_key(json_t *item, const char *from, const char *to)
{
	json_t *v = json_incref(json_object_get(item, from));

	json_object_del(item, from);
	return json_object_set_new(item, to, v);
}

static int
do_replace(struct jcall *j, struct tool_result *out)
{
	json_t		*nv = NULL, *v, *parent, *item, *sv;
	const char	*model, *pat, *val;
	char		*b1 = NULL, *b2 = NULL, *b3 = NULL, *s;
	size_t		 i, k;
	int		 decode, rc;

	model = tool_param_str(j->params, "replace_model", &b1);
	pat = tool_param_str(j->params, "replace_pattern", &b2);
	val = tool_param_str(j->params, "replace_value", &b3);
	decode = tool_param_bool(j->params, "value_decode", 0);
	if (val == NULL) {
		snprintf(j->msg, sizeof(j->msg), "Invalid parameter "
		    "replace_value");
		goto answer;
	}
	if (model == NULL || (strcmp(model, "pattern") != 0 &&
	    strcmp(model, "key") != 0 && strcmp(model, "value") != 0)) {
		snprintf(j->msg, sizeof(j->msg), "Invalid parameter "
		    "replace_model");
		goto answer;
	}
	if (strcmp(model, "pattern") == 0 && (pat == NULL || *pat == '\0')) {
		snprintf(j->msg, sizeof(j->msg), "Invalid parameter "
		    "replace_pattern");
		goto answer;
	}
	if (jcall_begin(j, "query", 0) != 0)
		goto answer;
	for (i = 0; i < j->ms.n && j->msg[0] == '\0'; i++) {
		v = j->ms.m[i].value;
		if (strcmp(model, "pattern") == 0) {
			struct dbuf	 sb = { 0 };
			const char	*p, *hit;

			if (!json_is_string(v)) {
				snprintf(j->msg, sizeof(j->msg), "'%s' object "
				    "has no attribute 'replace'",
				    json_is_integer(v) ? "int" : json_is_real(
				    v) ? "float" : json_is_boolean(v) ?
				    "bool" : json_is_null(v) ? "NoneType" :
				    json_is_array(v) ? "list" : "dict");
				break;
			}
			for (p = json_string_value(v); (hit = strstr(p,
			    pat)) != NULL; p = hit + strlen(pat)) {
				dbuf_add(&sb, p, (size_t)(hit - p));
				dbuf_addstr(&sb, val);
			}
			dbuf_addstr(&sb, p);
			s = dbuf_take(&sb, NULL);
			sv = s ? json_string(s) : NULL;
			nv = sv == NULL ? NULL : decode ? decode_value(sv) :
			    json_incref(sv);
			json_decref(sv);
			free(s);
			rc = jp_set(&j->root, &j->ms.m[i], nv);
			json_decref(nv);
			nv = NULL;
			if (rc != 0) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
		} else if (strcmp(model, "value") == 0) {
			sv = json_string(val);
			nv = sv == NULL ? NULL : decode ? decode_value(sv) :
			    json_incref(sv);
			json_decref(sv);
			rc = jp_set(&j->root, &j->ms.m[i], nv);
			json_decref(nv);
			nv = NULL;
			if (rc != 0) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
		} else {
			parent = j->ms.m[i].parent;
			if (j->ms.m[i].key == NULL) {
				snprintf(j->msg, sizeof(j->msg), "'Index' "
				    "object has no attribute 'fields'");
				break;
			}
			if (json_is_object(parent) &&
			    json_object_get(parent, j->ms.m[i].key) != NULL) {
				if (rename_key(parent, j->ms.m[i].key, val) !=
				    0) {
					rc = ENGINE_ENOMEM;
					goto out;
				}
			} else if (json_is_array(parent))
				json_array_foreach(parent, k, item)
					if (json_is_object(item) &&
					    (v = json_object_get(item,
					    j->ms.m[i].key)) != NULL &&
					    rename_key(item, j->ms.m[i].key,
					    val) != 0) {
						rc = ENGINE_ENOMEM;
						goto out;
					}
		}
	}
answer:
	rc = answer_dumps(j, j->root, out);
out:
	free(b1);
	free(b2);
	free(b3);
	return rc;
}

static int
do_delete(struct jcall *j, struct tool_result *out)
{
	json_t	*parent, *x;
	size_t	 i, k;

	if (jcall_begin(j, "query", 1) != 0)
		return answer_dumps(j, NULL, out);
	for (i = 0; i < j->ms.n; i++) {
		parent = j->ms.m[i].parent;
		if (json_is_object(parent)) {
			if (j->ms.m[i].key != NULL)
				json_object_del(parent, j->ms.m[i].key);
		} else if (json_is_array(parent)) {
			/* list.remove: the first equal item */
			json_array_foreach(parent, k, x)
				if (json_equal(x, j->ms.m[i].value)) {
					json_array_remove(parent, k);
					break;
				}
		}
	}
	return answer_dumps(j, j->root, out);
}

static const struct tool_param p_parse[] = {
	{ "content", "string", 1, "JSON content" },
	{ "json_filter", "string", 1, "JSON path to extract, e.g. $.a.b" },
	{ "ensure_ascii", "boolean", 0, "Escape non-ASCII characters" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_param p_insert[] = {
	{ "content", "string", 1, "JSON content" },
	{ "query", "string", 1, "JSON path of where to insert" },
	{ "new_value", "string", 1, "The value to insert" },
	{ "index", "number", 0, "Position in a list" },
	{ "create_path", "boolean", 0, "Create the path when missing" },
	{ "ensure_ascii", "boolean", 0, "Escape non-ASCII characters" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_param p_replace[] = {
	{ "content", "string", 1, "JSON content" },
	{ "query", "string", 1, "JSON path of what to replace" },
	{ "replace_model", "string", 1, "pattern, key or value" },
	{ "replace_pattern", "string", 0, "Text to replace (pattern)" },
	{ "replace_value", "string", 1, "The new text, key or value" },
	{ "value_decode", "boolean", 0, "Parse the new value as JSON" },
	{ "ensure_ascii", "boolean", 0, "Escape non-ASCII characters" },
	{ NULL, NULL, 0, NULL },
};
static const struct tool_param p_delete[] = {
	{ "content", "string", 1, "JSON content" },
	{ "query", "string", 1, "JSON path of what to delete" },
	{ "ensure_ascii", "boolean", 0, "Escape non-ASCII characters" },
	{ NULL, NULL, 0, NULL },
};

static const struct tool_def defs[] = {
	{ "parse", "Extract content from JSON with a JSON path.", p_parse },
	{ "json_insert", "Insert a value into JSON at a JSON path.",
	    p_insert },
	{ "json_replace", "Replace a pattern, key or value in JSON.",
	    p_replace },
	{ "json_delete", "Delete what a JSON path finds.", p_delete },
	{ NULL, NULL, NULL },
};

static int
json_list(struct engine *e, const struct tool_call *call, char *err,
    json_t **out)
{
	*out = tool_defs_json(defs);
	return *out ? 0 : ENGINE_ENOMEM;
}

static int
json_invoke(struct engine *e, const struct tool_call *call, char *err,
    struct tool_result *out)
{
	struct jcall	 j;
	const char	*t = call->tool;
	int		 rc;

	memset(&j, 0, sizeof(j));
	j.params = call->params;
	j.ascii = tool_param_bool(call->params, "ensure_ascii", 1);
	if (strcmp(t, "parse") == 0 || strcmp(t, "json_parse") == 0)
		rc = do_parse(&j, out);
	else if (strcmp(t, "json_insert") == 0 || strcmp(t, "insert") == 0)
		rc = do_insert(&j, out);
	else if (strcmp(t, "json_replace") == 0 || strcmp(t, "replace") == 0)
		rc = do_replace(&j, out);
	else if (strcmp(t, "json_delete") == 0 || strcmp(t, "delete") == 0)
		rc = do_delete(&j, out);
	else {
		engine_invalid(err, "tool '%s/%s' is not available in "
		    "flowcgi", call->provider, t);
		rc = ENGINE_ENOTFOUND;
	}
	jcall_end(&j);
	return rc;
}

const struct tool_provider tool_provider_json_process = {
	"json_process", json_list, json_invoke, 0,
};
