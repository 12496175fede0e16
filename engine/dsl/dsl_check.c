/*
 * dsl_check.c — DSL import checks, versions, legacy forms, export form.
 *
 * dsl_check follows Dify's import_app (reference/dify-dsl.md §2): the
 * document must be a mapping; a missing or empty version is "0.1.0" (Dify
 * tests `not data.get("version")`, so null, "", 0 and false count as
 * missing); any other non-string version fails; the version is compared
 * with DSL_VERSION_CURRENT by PEP 440 rules; app must be present; a
 * pending document stops there; then app.mode must be valid and the mode
 * decides whether workflow or model_config is required.
 *
 * Normalisations (each idempotent: a checked document checks to itself):
 *  - version as above; kind becomes "app".
 *  - Ids written as numbers become their decimal text: node id, parentId,
 *    data.start_node_id, data.iteration_id, data.loop_id; edge id,
 *    source, target, sourceHandle, targetHandle; if-else cases[].case_id;
 *    question-classifier classes[].id; the first element of a selector
 *    (an array under a key ending in "selector", and each selector of an
 *    array of arrays under "variables", as the aggregator keeps them).
 *  - An edge without sourceHandle gets "source" (Dify's default).
 *  - if-else with top-level conditions and no cases gets
 *    cases: [{case_id: "true", logical_operator, conditions}], as Dify's
 *    editor converts it; the old keys stay.
 *  - http-request body.data as a string becomes
 *    [{key: "", type: "text", value: <string>}] ("" becomes []).
 *  - question-classifier: instructions is copied to instruction and topics
 *    to classes when the new key is missing; the old keys stay.
 *  - parameter-extractor parameter types select -> string, bool -> boolean.
 * Accepted unchanged (the executor reads them): data.type
 * variable-assigner, the aggregator's first name, which Dify keeps as
 * written and runs as the aggregator (NodeType.LEGACY_VARIABLE_AGGREGATOR),
 * so an export gives back the type it was given; assigner v1 (write_mode,
 * no version), iterations without an iteration-start node (start_node_id
 * names the first real child, startNodeType is set), end outputs without
 * value_type, llm variables, knowledge-retrieval single mode, edges with
 * another targetHandle or without data, canvas notes (custom-note).
 *
 * Variables (workflow.environment_variables, conversation_variables) are
 * checked as Dify's variable factory checks them on import and on draft
 * sync, and one that fails fails the whole check (see check_variables).
 *
 * With DSL_CHECK_RUNNABLE the graph is also checked for what the executor
 * needs: node types it runs and the fields each type requires
 * (dsl_node_missing). A start node beside a trigger node is always a
 * problem (Dify's validate_graph_structure refuses it on sync and
 * publish).
 *
 * Graph problems never fail the check (a draft can be unfinished); they
 * are listed in the report with the node id and the field, and an import
 * answers them as its warnings. Those that keep a graph from running (a
 * node id used twice, an edge to a missing node, a self-loop, a cycle)
 * are refused again by the executor, which names them in the run's error.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dsl/dsl.h"

#define DSL_WALK_DEPTH	1000	/* nesting the selector walk descends */

const char *
dsl_status_name(enum dsl_status st)
{
	switch (st) {
	case DSL_COMPLETED:
		return "completed";
	case DSL_COMPLETED_WITH_WARNINGS:
		return "completed-with-warnings";
	case DSL_PENDING:
		return "pending";
	case DSL_FAILED:
		break;
	}
	return "failed";
}

void
dsl_report_release(struct dsl_report *rep)
{
	if (rep == NULL)
		return;
	json_decref(rep->problems);
	rep->problems = NULL;
}

/* ====== Versions: PEP 440, as packaging.version parses them ====== */

struct pep440 {
	unsigned long long	epoch;
	unsigned long long	rel[16];
	int			nrel;
	int			pre;		/* -1 none, 0 a, 1 b, 2 rc */
	unsigned long long	pre_n;
	int			post;		/* 0 none, 1 present */
	unsigned long long	post_n;
	int			dev;
	unsigned long long	dev_n;
	char			local[DSL_VERSION_MAX];
};

static int
pep_num(const char **p, unsigned long long *v)
{
	const char *s = *p;

	*v = 0;
	if (*s < '0' || *s > '9')
		return 0;
	for (; *s >= '0' && *s <= '9'; s++)
		*v = *v > (~0ULL - 9) / 10 ? ~0ULL : *v * 10 +
		    (unsigned)(*s - '0');
	*p = s;
	return 1;
}

static int
pep_sep(char c)
{
	return c == '.' || c == '-' || c == '_';
}

/* Matches word at *p (after an optional separator); moves past it. */
static int
pep_word(const char **p, const char *word)
{
	const char	*s = *p;
	size_t		 n = strlen(word);

	if (pep_sep(*s))
		s++;
	if (strncmp(s, word, n) != 0)
		return 0;
	*p = s + n;
	return 1;
}

/* An optional separator and number after a pre/post/dev word. */
static void
pep_opt_num(const char **p, unsigned long long *v)
{
	const char *s = *p;

	*v = 0;
	if (pep_sep(*s) && s[1] >= '0' && s[1] <= '9')
		s++;
	if (pep_num(&s, v))
		*p = s;
}

/* 0 when text is a valid PEP 440 version; fills v. */
static int
pep440_parse(const char *text, struct pep440 *v)
{
	static const struct {
		const char	*word;
		int		 kind;
	} pres[] = {
		{ "alpha", 0 }, { "beta", 1 }, { "preview", 2 }, { "pre", 2 },
		{ "rc", 2 }, { "a", 0 }, { "b", 1 }, { "c", 2 },
	};
	char			 buf[DSL_VERSION_MAX];
	const char		*p;
	unsigned long long	 n;
	size_t			 i, len;

	memset(v, 0, sizeof(*v));
	v->pre = -1;
	while (*text == ' ' || *text == '\t' || *text == '\n' || *text == '\r')
		text++;
	len = strlen(text);
	while (len > 0 && (text[len - 1] == ' ' || text[len - 1] == '\t' ||
	    text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	if (len == 0 || len >= sizeof(buf))
		return -1;
	for (i = 0; i < len; i++)
		buf[i] = text[i] >= 'A' && text[i] <= 'Z' ?
		    (char)(text[i] - 'A' + 'a') : text[i];
	buf[len] = '\0';
	p = buf;
	if (*p == 'v')
		p++;
	if (!pep_num(&p, &n))
		return -1;
	if (*p == '!') {
		v->epoch = n;
		p++;
		if (!pep_num(&p, &n))
			return -1;
	}
	v->rel[v->nrel++] = n;
	while (*p == '.' && p[1] >= '0' && p[1] <= '9') {
		p++;
		pep_num(&p, &n);
		if (v->nrel < (int)(sizeof(v->rel) / sizeof(v->rel[0])))
			v->rel[v->nrel++] = n;
		else if (n != 0)
			return -1;
	}
	for (i = 0; i < sizeof(pres) / sizeof(pres[0]); i++)
		if (pep_word(&p, pres[i].word)) {
			v->pre = pres[i].kind;
			pep_opt_num(&p, &v->pre_n);
			break;
		}
	if (*p == '-' && p[1] >= '0' && p[1] <= '9') {
		p++;
		v->post = 1;
		pep_num(&p, &v->post_n);
	} else if (pep_word(&p, "post") || pep_word(&p, "rev") ||
	    pep_word(&p, "r")) {
		v->post = 1;
		pep_opt_num(&p, &v->post_n);
	}
	if (pep_word(&p, "dev")) {
		v->dev = 1;
		pep_opt_num(&p, &v->dev_n);
	}
	if (*p == '+') {
		p++;
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
			return -1;
		snprintf(v->local, sizeof(v->local), "%s", p);
		for (; *p != '\0'; p++)
			if (!((*p >= 'a' && *p <= 'z') ||
			    (*p >= '0' && *p <= '9') ||
			    (pep_sep(*p) && p[1] != '\0' && !pep_sep(p[1]))))
				return -1;
	}
	return *p == '\0' ? 0 : -1;
}

static int
cmp_ull(unsigned long long a, unsigned long long b)
{
	return a < b ? -1 : a > b;
}

/* packaging's ordering: <0, 0, >0. */
static int
pep440_cmp(const struct pep440 *a, const struct pep440 *b)
{
	unsigned long long	x, y;
	int			i, c, ra, rb;

	if ((c = cmp_ull(a->epoch, b->epoch)) != 0)
		return c;
	for (i = 0; i < 16; i++) {
		x = i < a->nrel ? a->rel[i] : 0;
		y = i < b->nrel ? b->rel[i] : 0;
		if ((c = cmp_ull(x, y)) != 0)
			return c;
	}
	/* Pre-release: a dev-only release sorts before any pre-release. */
	ra = a->pre >= 0 ? 1 : (!a->post && a->dev) ? 0 : 2;
	rb = b->pre >= 0 ? 1 : (!b->post && b->dev) ? 0 : 2;
	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (ra == 1) {
		if (a->pre != b->pre)
			return a->pre < b->pre ? -1 : 1;
		if ((c = cmp_ull(a->pre_n, b->pre_n)) != 0)
			return c;
	}
	if (a->post != b->post)
		return a->post < b->post ? -1 : 1;
	if ((c = cmp_ull(a->post_n, b->post_n)) != 0)
		return c;
	if (a->dev != b->dev)
		return a->dev ? -1 : 1;
	if ((c = cmp_ull(a->dev_n, b->dev_n)) != 0)
		return c;
	if ((a->local[0] != '\0') != (b->local[0] != '\0'))
		return a->local[0] != '\0' ? 1 : -1;
	c = strcmp(a->local, b->local);
	return c < 0 ? -1 : c > 0;
}

/* Dify's check_version_compatibility against DSL_VERSION_CURRENT. */
static enum dsl_status
version_status(const char *version)
{
	struct pep440	imp, cur;
	unsigned long long imp_minor, cur_minor;

	if (pep440_parse(version, &imp) != 0 ||
	    pep440_parse(DSL_VERSION_CURRENT, &cur) != 0)
		return DSL_FAILED;
	if (pep440_cmp(&imp, &cur) > 0)
		return DSL_PENDING;
	if (imp.rel[0] < cur.rel[0])
		return DSL_PENDING;
	imp_minor = imp.nrel > 1 ? imp.rel[1] : 0;
	cur_minor = cur.nrel > 1 ? cur.rel[1] : 0;
	if (imp_minor < cur_minor)
		return DSL_COMPLETED_WITH_WARNINGS;
	return DSL_COMPLETED;
}

/* ====== Helpers ====== */

/* Python's truth test on a parsed value. */
static int
py_falsy(const json_t *v)
{
	if (v == NULL || json_is_null(v) || json_is_false(v))
		return 1;
	if (json_is_integer(v))
		return json_integer_value(v) == 0;
	if (json_is_real(v))
		return json_real_value(v) == 0;
	if (json_is_string(v))
		return json_string_length(v) == 0;
	if (json_is_array(v))
		return json_array_size(v) == 0;
	if (json_is_object(v))
		return json_object_size(v) == 0;
	return 0;
}

static int
str_is(const json_t *v, const char *s)
{
	return json_is_string(v) && strcmp(json_string_value(v), s) == 0;
}

/* The string at obj[key], or "" when it is not a string. */
static const char *
str_at(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	return json_is_string(v) ? json_string_value(v) : "";
}

static int
set_new(json_t *obj, const char *key, json_t *v)
{
	if (v == NULL)
		return ENGINE_ENOMEM;
	return json_object_set_new(obj, key, v) ? ENGINE_ENOMEM : 0;
}

/* An integer id becomes its decimal text, in an object or an array. */
static json_t *
id_text(const json_t *v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT,
	    json_integer_value(v));
	return json_string(buf);
}

static int
id_to_string(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_integer(v))
		return 0;
	return set_new(obj, key, id_text(v));
}

static int
selector_head_to_string(json_t *sel)
{
	json_t *h = json_array_get(sel, 0);

	if (!json_is_integer(h))
		return 0;
	return json_array_set_new(sel, 0, id_text(h)) ? ENGINE_ENOMEM : 0;
}

static int
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The selector normalisation (see the top) over v, found under key. */
static int
selectors_to_string(json_t *v, const char *key, int depth)
{
	const char	*k;
	json_t		*c;
	size_t		 i;
	int		 rc = 0;

	if (depth > DSL_WALK_DEPTH)
		return 0;
	if (json_is_array(v)) {
		if (key != NULL && ends_with(key, "selector"))
			rc = selector_head_to_string(v);
		for (i = 0; rc == 0 && i < json_array_size(v); i++) {
			c = json_array_get(v, i);
			if (key != NULL && strcmp(key, "variables") == 0 &&
			    json_is_array(c))
				rc = selector_head_to_string(c);
			if (rc == 0)
				rc = selectors_to_string(c, NULL, depth + 1);
		}
	} else if (json_is_object(v)) {
		json_object_foreach(v, k, c)
			if ((rc = selectors_to_string(c, k, depth + 1)) != 0)
				break;
	}
	return rc;
}

/* Appends {node_id, [edge_id,] field, message} to rep->problems. */
static int
problem(struct dsl_report *rep, const char *node_id, const char *edge_id,
    const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int
problem(struct dsl_report *rep, const char *node_id, const char *edge_id,
    const char *field, const char *fmt, ...)
{
	char	 msg[512];
	json_t	*p;
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if ((p = json_pack("{s:s,s:s,s:s}", "node_id", node_id, "field", field,
	    "message", msg)) == NULL)
		return ENGINE_ENOMEM;
	if (edge_id != NULL && json_object_set_new(p, "edge_id",
	    json_string(edge_id))) {
		json_decref(p);
		return ENGINE_ENOMEM;
	}
	return json_array_append_new(rep->problems, p) ? ENGINE_ENOMEM : 0;
}

/* ====== Legacy forms ====== */

static int
legacy_if_else(json_t *data)
{
	json_t	*conds = json_object_get(data, "conditions");
	json_t	*cases = json_object_get(data, "cases"), *c;
	json_t	*lo = json_object_get(data, "logical_operator");
	size_t	 i;
	int	 rc;

	if ((cases == NULL || json_is_null(cases)) && json_is_array(conds)) {
		if ((c = json_deep_copy(conds)) == NULL)
			return ENGINE_ENOMEM;
		cases = json_pack("[{s:s,s:s,s:o}]", "case_id", "true",
		    "logical_operator",
		    json_is_string(lo) ? json_string_value(lo) : "and",
		    "conditions", c);
		if ((rc = set_new(data, "cases", cases)) != 0)
			return rc;
	}
	for (i = 0; i < json_array_size(cases); i++)
		if ((c = json_array_get(cases, i)) != NULL &&
		    json_is_object(c) && (rc = id_to_string(c, "case_id")) != 0)
			return rc;
	return 0;
}

static int
legacy_http(json_t *data)
{
	json_t *body = json_object_get(data, "body");
	json_t *d = json_object_get(body, "data");

	if (!json_is_string(d))
		return 0;
	if (json_string_length(d) == 0)
		return set_new(body, "data", json_array());
	return set_new(body, "data", json_pack("[{s:s,s:s,s:O}]", "key", "",
	    "type", "text", "value", d));
}

static int
legacy_classifier(json_t *data)
{
	json_t	*v, *classes;
	size_t	 i;
	int	 rc;

	v = json_object_get(data, "instructions");
	if (json_object_get(data, "instruction") == NULL && v != NULL &&
	    (rc = set_new(data, "instruction", json_incref(v))) != 0)
		return rc;
	v = json_object_get(data, "topics");
	if (json_object_get(data, "classes") == NULL && json_is_array(v) &&
	    (rc = set_new(data, "classes", json_deep_copy(v))) != 0)
		return rc;
	classes = json_object_get(data, "classes");
	for (i = 0; i < json_array_size(classes); i++)
		if (json_is_object(json_array_get(classes, i)) &&
		    (rc = id_to_string(json_array_get(classes, i), "id")) != 0)
			return rc;
	return 0;
}

static int
legacy_extractor(json_t *data)
{
	json_t	*params = json_object_get(data, "parameters"), *p, *t;
	size_t	 i;
	int	 rc;

	for (i = 0; i < json_array_size(params); i++) {
		p = json_array_get(params, i);
		t = json_object_get(p, "type");
		/* set_new frees t: test both before changing anything. */
		if (str_is(t, "select"))
			rc = set_new(p, "type", json_string("string"));
		else if (str_is(t, "bool"))
			rc = set_new(p, "type", json_string("boolean"));
		else
			rc = 0;
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int
node_normalise(json_t *node)
{
	json_t		*data = json_object_get(node, "data");
	const char	*type;
	int		 rc;

	if ((rc = id_to_string(node, "id")) != 0 ||
	    (rc = id_to_string(node, "parentId")) != 0)
		return rc;
	if (!json_is_object(data))
		return 0;
	if ((rc = id_to_string(data, "start_node_id")) != 0 ||
	    (rc = id_to_string(data, "iteration_id")) != 0 ||
	    (rc = id_to_string(data, "loop_id")) != 0)
		return rc;
	type = str_at(data, "type");
	if (strcmp(type, "if-else") == 0)
		rc = legacy_if_else(data);
	else if (strcmp(type, "http-request") == 0)
		rc = legacy_http(data);
	else if (strcmp(type, "question-classifier") == 0)
		rc = legacy_classifier(data);
	else if (strcmp(type, "parameter-extractor") == 0)
		rc = legacy_extractor(data);
	if (rc != 0)
		return rc;
	return selectors_to_string(data, NULL, 0);
}

static int
edge_normalise(json_t *edge)
{
	json_t	*h;
	int	 rc;

	if ((rc = id_to_string(edge, "id")) != 0 ||
	    (rc = id_to_string(edge, "source")) != 0 ||
	    (rc = id_to_string(edge, "target")) != 0 ||
	    (rc = id_to_string(edge, "sourceHandle")) != 0 ||
	    (rc = id_to_string(edge, "targetHandle")) != 0)
		return rc;
	h = json_object_get(edge, "sourceHandle");
	if (h == NULL || json_is_null(h))
		rc = set_new(edge, "sourceHandle", json_string("source"));
	return rc;
}

/* ====== Graph checks ====== */

/* Node types whose only handle is "source" (plus fail-branch). */
static const char *const plain_types[] = {
	"start", "end", "answer", "llm", "code", "template-transform",
	"http-request", "tool", "agent", "variable-aggregator",
	"variable-assigner", "assigner",
	"iteration", "iteration-start", "loop", "loop-start", "loop-end",
	"parameter-extractor", "knowledge-retrieval", "knowledge-retrieval-v2",
	"document-extractor", "list-operator", "command", "file-upload", NULL,
};

static const char *const trigger_types[] = {
	"trigger-webhook", "trigger-schedule", "trigger-plugin", NULL,
};

static int
in_list(const char *s, const char *const *list)
{
	size_t i;

	for (i = 0; list[i] != NULL; i++)
		if (strcmp(s, list[i]) == 0)
			return 1;
	return 0;
}

/* Whether a node of this data may leave by handle h. */
static int
handle_valid(const json_t *data, const char *h)
{
	const char	*type = str_at(data, "type");
	const json_t	*list, *item;
	const char	*key;
	size_t		 i;

	if (str_is(json_object_get(data, "error_strategy"), "fail-branch") &&
	    (strcmp(h, "fail-branch") == 0 || strcmp(h, "success-branch") == 0))
		return 1;
	if (strcmp(type, "if-else") == 0) {
		if (strcmp(h, "false") == 0)
			return 1;
		list = json_object_get(data, "cases");
		key = "case_id";
	} else if (strcmp(type, "question-classifier") == 0) {
		list = json_object_get(data, "classes");
		key = "id";
	} else if (in_list(type, plain_types))
		return strcmp(h, "source") == 0;
	else
		return 1;	/* a type we do not know: any handle */
	for (i = 0; i < json_array_size(list); i++) {
		item = json_array_get(list, i);
		if (str_is(json_object_get(item, key), h))
			return 1;
	}
	return 0;
}

/*
 * Fields a node type needs to run, each a path under the node's data
 * ("model.provider"); "a|b" is satisfied by either. What a node's file
 * refuses at run time when the field is missing is refused here first,
 * so a draft that cannot run says so when it is saved, not when it runs.
 * A model's provider and name may be "" (Dify's editor leaves them so
 * until one is picked, and llm.base_url then serves it); missing, the node
 * cannot run.
 */
enum need {
	NEED_STR,	/* a string, "" allowed (an empty template renders) */
	NEED_TEXT,	/* a string that is not empty */
	NEED_LIST,	/* an array, [] allowed */
};

static const struct {
	const char	*type;
	const char	*field;
	enum need	 need;
} node_needs[] = {
	{ "llm", "model.provider", NEED_STR },
	{ "llm", "model.name", NEED_STR },
	{ "question-classifier", "model.provider", NEED_STR },
	{ "question-classifier", "model.name", NEED_STR },
	{ "question-classifier", "classes", NEED_LIST },
	{ "parameter-extractor", "model.provider", NEED_STR },
	{ "parameter-extractor", "model.name", NEED_STR },
	{ "code", "code_language", NEED_TEXT },
	{ "code", "code", NEED_STR },
	{ "template-transform", "template", NEED_STR },
	{ "http-request", "url", NEED_TEXT },
	{ "tool", "provider_id|provider_name", NEED_TEXT },
	{ "tool", "tool_name", NEED_TEXT },
	{ "answer", "answer", NEED_STR },
	{ "if-else", "cases", NEED_LIST },
	{ "iteration", "iterator_selector", NEED_LIST },
	{ "iteration", "output_selector", NEED_LIST },
	{ "document-extractor", "variable_selector", NEED_LIST },
	{ "list-operator", "variable", NEED_LIST },
};

/* The value at a dotted path ("model.name") under v, or NULL. */
static const json_t *
path_get(const json_t *v, const char *path)
{
	char		 key[64];
	const char	*dot;
	size_t		 n;

	while (v != NULL && *path != '\0') {
		dot = strchr(path, '.');
		n = dot != NULL ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		v = json_object_get(v, key);
		path += n + (dot != NULL);
	}
	return v;
}

static int
need_met(const json_t *v, enum need need)
{
	switch (need) {
	case NEED_STR:
		return json_is_string(v);
	case NEED_TEXT:
		return json_is_string(v) && json_string_length(v) > 0;
	case NEED_LIST:
		return json_is_array(v);
	}
	return 0;
}

const char *
dsl_node_missing(const json_t *data)
{
	const char	*type = str_at(data, "type"), *f, *bar;
	char		 alt[64];
	size_t		 i, n;
	int		 met;

	for (i = 0; i < sizeof(node_needs) / sizeof(node_needs[0]); i++) {
		if (strcmp(node_needs[i].type, type) != 0)
			continue;
		f = node_needs[i].field;
		met = 0;
		while (!met && *f != '\0') {
			bar = strchr(f, '|');
			n = bar != NULL ? (size_t)(bar - f) : strlen(f);
			if (n >= sizeof(alt))
				break;
			memcpy(alt, f, n);
			alt[n] = '\0';
			met = need_met(path_get(data, alt), node_needs[i].need);
			f += n + (bar != NULL);
		}
		if (!met)
			return node_needs[i].field;
	}
	return NULL;
}

/* What DSL_CHECK_RUNNABLE adds for one node: its type, its fields. */
static int
check_runnable(struct dsl_report *rep, const char *id, const json_t *data)
{
	const char	*type = str_at(data, "type");
	const char	*miss;
	char		 field[80];

	if (node_type_find(type) == NULL)
		return problem(rep, id, NULL, "data.type",
		    in_list(type, trigger_types) ? "node '%s' is a %s trigger, "
		    "which flowcgi does not run: start the workflow with a "
		    "start node" : "node '%s' has type '%s', which flowcgi "
		    "does not run", id, type);
	if ((miss = dsl_node_missing(data)) == NULL)
		return 0;
	/* the field is the first of the alternatives */
	snprintf(field, sizeof(field), "data.%.*s", (int)strcspn(miss, "|"),
	    miss);
	return problem(rep, id, NULL, field, "node '%s' (%s) has no %s, "
	    "which it needs to run", id, type, miss);
}

/* The type of the node with id, or "" when there is none. */
static const char *
type_of(const json_t *byid, const char *id)
{
	return str_at(json_object_get(json_object_get(byid, id), "data"),
	    "type");
}

static int
check_containers(struct dsl_report *rep, const json_t *nodes,
    const json_t *byid)
{
	const json_t	*n, *data, *child;
	const char	*id, *type, *ref, *field, *want;
	size_t		 i, k;
	int		 rc = 0;

	for (i = 0; rc == 0 && i < json_array_size(nodes); i++) {
		n = json_array_get(nodes, i);
		data = json_object_get(n, "data");
		id = str_at(n, "id");
		if (*id == '\0' || !json_is_object(data))
			continue;
		type = str_at(data, "type");
		if (strcmp(type, "iteration") == 0 ||
		    strcmp(type, "loop") == 0) {
			ref = str_at(data, "start_node_id");
			child = json_object_get(byid, ref);
			if (*ref == '\0')
				rc = problem(rep, id, NULL,
				    "data.start_node_id",
				    "%s '%s' has no start node", type, id);
			else if (child == NULL)
				rc = problem(rep, id, NULL,
				    "data.start_node_id",
				    "start node '%s' of %s '%s' does not exist",
				    ref, type, id);
			else if (strcmp(str_at(child, "parentId"), id) != 0 &&
			    strcmp(str_at(json_object_get(child, "data"),
			    strcmp(type, "loop") == 0 ? "loop_id" :
			    "iteration_id"), id) != 0)
				rc = problem(rep, id, NULL,
				    "data.start_node_id",
				    "start node '%s' is not inside %s '%s'",
				    ref, type, id);
		}
		if (rc == 0 && json_object_get(n, "parentId") != NULL) {
			ref = str_at(n, "parentId");
			type = type_of(byid, ref);
			if (json_object_get(byid, ref) == NULL)
				rc = problem(rep, id, NULL, "parentId",
				    "parent '%s' of node '%s' does not exist",
				    ref, id);
			else if (strcmp(type, "iteration") != 0 &&
			    strcmp(type, "loop") != 0)
				rc = problem(rep, id, NULL, "parentId",
				    "parent '%s' of node '%s' is not an "
				    "iteration or a loop", ref, id);
		}
		for (k = 0; rc == 0 && k < 2; k++) {
			field = k == 0 ? "iteration_id" : "loop_id";
			want = k == 0 ? "iteration" : "loop";
			ref = str_at(data, field);
			if (*ref == '\0')
				continue;
			if (json_object_get(byid, ref) == NULL)
				rc = problem(rep, id, NULL, k == 0 ?
				    "data.iteration_id" : "data.loop_id",
				    "%s '%s' of node '%s' does not exist", want,
				    ref, id);
			else if (strcmp(type_of(byid, ref), want) != 0)
				rc = problem(rep, id, NULL, k == 0 ?
				    "data.iteration_id" : "data.loop_id",
				    "node '%s' named by node '%s' is not a%s "
				    "%s", ref, id, k == 0 ? "n" : "", want);
		}
	}
	return rc;
}

static int
check_edges(struct dsl_report *rep, const json_t *edges, const json_t *byid)
{
	const json_t	*e, *src;
	const char	*eid, *s, *t, *h;
	char		 field[48];
	size_t		 i;
	int		 rc = 0;

	for (i = 0; rc == 0 && i < json_array_size(edges); i++) {
		e = json_array_get(edges, i);
		snprintf(field, sizeof(field), "graph.edges[%zu]", i);
		if (!json_is_object(e)) {
			rc = problem(rep, "", NULL, field,
			    "edge %zu is not a mapping", i);
			continue;
		}
		eid = str_at(e, "id");
		s = str_at(e, "source");
		t = str_at(e, "target");
		h = str_at(e, "sourceHandle");
		if (*s == '\0')
			rc = problem(rep, "", eid, "source",
			    "edge '%s' has no source", eid);
		else if ((src = json_object_get(byid, s)) == NULL)
			rc = problem(rep, s, eid, "source",
			    "edge '%s' starts at missing node '%s'", eid, s);
		else if (!handle_valid(json_object_get(src, "data"), h))
			rc = problem(rep, s, eid, "sourceHandle",
			    "edge '%s' leaves node '%s' by unknown handle "
			    "'%s'", eid, s, h);
		if (rc != 0)
			break;
		if (*t == '\0')
			rc = problem(rep, "", eid, "target",
			    "edge '%s' has no target", eid);
		else if (json_object_get(byid, t) == NULL)
			rc = problem(rep, t, eid, "target",
			    "edge '%s' ends at missing node '%s'", eid, t);
		else if (strcmp(s, t) == 0)
			rc = problem(rep, t, eid, "target",
			    "edge '%s' leads node '%s' back to itself", eid, t);
	}
	return rc;
}

/*
 * Edges that form a cycle, found by graph.c as the executor will see
 * them (it refuses such a graph at run time).
 */
static int
check_cycles(struct dsl_report *rep, const json_t *wf)
{
	struct graph	*g = NULL;
	char		 err[ENGINE_ERRMAX];
	size_t		 count = 0;
	int		 rc;

	rc = graph_build(wf, err, &g);
	if (rc == ENGINE_EINVAL)
		rc = 0;		/* no nodes: nothing to walk */
	else if (rc == 0)
		rc = graph_cycles(g, rep->problems, &count);
	graph_free(g);
	return rc;
}

/* Structure, entry nodes, edges and containers of workflow.graph. */
static int
check_graph(struct dsl_report *rep, const char *mode, const json_t *graph,
    unsigned flags)
{
	const json_t	*nodes = json_object_get(graph, "nodes");
	const json_t	*edges = json_object_get(graph, "edges");
	const json_t	*n, *data;
	json_t		*byid = NULL;
	const char	*id, *type;
	char		 field[48];
	const char	*first_start = NULL, *first_trigger = NULL;
	size_t		 i, starts = 0, triggers = 0;
	int		 note, rc = 0;

	if ((byid = json_object()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	for (i = 0; i < json_array_size(nodes); i++) {
		n = json_array_get(nodes, i);
		snprintf(field, sizeof(field), "graph.nodes[%zu]", i);
		if (!json_is_object(n)) {
			if ((rc = problem(rep, "", NULL, field,
			    "node %zu is not a mapping", i)) != 0)
				goto out;
			continue;
		}
		id = str_at(n, "id");
		data = json_object_get(n, "data");
		note = str_is(json_object_get(n, "type"), "custom-note");
		if (*id == '\0')
			rc = problem(rep, "", NULL, "id", "node %zu has no id",
			    i);
		else if (json_object_get(byid, id) != NULL)
			rc = problem(rep, id, NULL, "id",
			    "node id '%s' is used twice", id);
		else if (json_object_set(byid, id, (json_t *)n))
			rc = ENGINE_ENOMEM;
		if (rc != 0)
			goto out;
		if (!json_is_object(data)) {
			if ((rc = problem(rep, id, NULL, "data",
			    "node '%s' has no data mapping", id)) != 0)
				goto out;
			continue;
		}
		if (!json_is_string(json_object_get(data, "type")) ||
		    (!note && json_string_length(json_object_get(data,
		    "type")) == 0)) {
			if ((rc = problem(rep, id, NULL, "data.type",
			    "node '%s' has no type", id)) != 0)
				goto out;
			continue;
		}
		type = str_at(data, "type");
		if (note)
			continue;
		if ((flags & DSL_CHECK_RUNNABLE) &&
		    (rc = check_runnable(rep, id, data)) != 0)
			goto out;
		if (strcmp(type, "start") == 0 && starts == 0)
			first_start = id;
		if (strcmp(type, "start") == 0 && ++starts > 1 &&
		    (rc = problem(rep, id, NULL, "data.type",
		    "more than one start node: '%s'", id)) != 0)
			goto out;
		if (in_list(type, trigger_types)) {
			if (triggers++ == 0)
				first_trigger = id;
			if (strcmp(mode, "workflow") != 0 && (rc = problem(rep,
			    id, NULL, "data.type", "trigger node '%s' only "
			    "runs in a workflow app", id)) != 0)
				goto out;
		}
	}
	/* Dify's validate_graph_structure: a workflow starts one way */
	if (starts > 0 && triggers > 0 && (rc = problem(rep, first_trigger,
	    NULL, "data.type", "start node '%s' and trigger node '%s' cannot "
	    "be in the same workflow", first_start, first_trigger)) != 0)
		goto out;
	if (starts == 0 && (strcmp(mode, "workflow") != 0 || triggers == 0) &&
	    (rc = problem(rep, "", NULL, "graph.nodes",
	    "%s app has no start node", mode)) != 0)
		goto out;
	if ((rc = check_edges(rep, edges, byid)) != 0)
		goto out;
	rc = check_containers(rep, nodes, byid);
out:
	json_decref(byid);
	return rc;
}

/* ====== Variables ====== */

/*
 * What a variable must be, decided per field. Each failure fails the
 * check (a draft save answers 400 and keeps nothing; an import fails),
 * where a graph problem is only listed, because none of these can ever
 * become valid by editing the rest of the draft, and each is what Dify's
 * variable factory refuses on import and on draft sync (VariableError,
 * which the console answers 400 invalid_param):
 *  - name: Dify's rule ^[a-zA-Z_][a-zA-Z0-9_]*$. The name is the key of
 *    env.<name> or conversation.<name>; a reference {{#env.x#}} cannot
 *    name anything else, and a name such as "../../x" must never reach a
 *    path, a key or a log line as if it were one.
 *  - value_type: decides how the value is read and shown. Environment
 *    variables: string, number, secret (what Dify's editor offers);
 *    conversation variables: Dify's list (var_conv_types). Anything else
 *    cannot be run.
 *  - value: present and of its type (a number for number, an array of
 *    strings for array[string], ...), as Dify's factory builds it.
 *  - size: at most max_variable_size bytes as JSON (Dify's
 *    MAX_VARIABLE_SIZE): every run copies the value into its pool.
 */
static const char *const var_env_types[] = {
	"string", "number", "secret", NULL,
};

static const char *const var_conv_types[] = {
	"string", "number", "object", "boolean", "array[string]",
	"array[number]", "array[object]", "array[boolean]", NULL,
};

static int
var_name_ok(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
	    *s == '_'))
		return 0;
	for (s++; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

/* Whether v holds a value of value_type t (one of the lists above). */
static int
var_value_ok(const char *t, const json_t *v)
{
	const json_t	*item;
	const char	*elem;
	size_t		 i;

	if (strcmp(t, "string") == 0 || strcmp(t, "secret") == 0)
		return json_is_string(v);
	if (strcmp(t, "number") == 0)
		return json_is_number(v);
	if (strcmp(t, "object") == 0)
		return json_is_object(v);
	if (strcmp(t, "boolean") == 0)
		return json_is_boolean(v);
	if (!json_is_array(v) || strncmp(t, "array[", 6) != 0)
		return 0;
	elem = t + 6;
	json_array_foreach(v, i, item)
		if (!(strncmp(elem, "string]", 7) == 0 ? json_is_string(item) :
		    strncmp(elem, "number]", 7) == 0 ? json_is_number(item) :
		    strncmp(elem, "object]", 7) == 0 ? json_is_object(item) :
		    json_is_boolean(item)))
			return 0;
	return 1;
}

/*
 * Fails the check for variable i of list (a problem listed, err set):
 * the message is "<list>[i] (<name>): <why>".
 */
static int
var_refuse(struct dsl_report *rep, char *err, const char *list, size_t i,
    const char *key, const char *name, const char *why)
{
	char	field[96], msg[ENGINE_ERRMAX];
	int	rc;

	snprintf(field, sizeof(field), "%s[%zu]%s%s", list, i, *key ? "." :
	    "", key);
	snprintf(msg, sizeof(msg), "%s[%zu] (%.64s): %s", list, i, name, why);
	if ((rc = problem(rep, "", NULL, field, "%s", msg)) != 0)
		return rc;
	return engine_invalid(err, "%s", msg);
}

static int
check_variables(struct dsl_report *rep, const json_t *wf,
    const struct dsl_check_limits *lim, char *err)
{
	static const char *const lists[] = {
		"environment_variables", "conversation_variables",
	};
	const json_t		*v, *val;
	const char *const	*types;
	const char		*name, *type;
	char			 why[160];
	size_t			 i, k, size;

	for (k = 0; k < 2; k++) {
		types = k == 0 ? var_env_types : var_conv_types;
		json_array_foreach(json_object_get(wf, lists[k]), i, v) {
			name = str_at(v, "name");
			type = str_at(v, "value_type");
			val = json_object_get(v, "value");
			if (*name == '\0')
				return var_refuse(rep, err, lists[k], i, "name",
				    name, "missing name");
			if (!var_name_ok(name))
				return var_refuse(rep, err, lists[k], i, "name",
				    name, "the name must be a letter or _ "
				    "followed by letters, digits or _");
			if (!in_list(type, types)) {
				snprintf(why, sizeof(why), "value_type '%.32s' "
				    "is not one of %s", type, k == 0 ?
				    "string, number, secret" : "string, "
				    "number, object, boolean, array[string], "
				    "array[number], array[object], "
				    "array[boolean]");
				return var_refuse(rep, err, lists[k], i,
				    "value_type", name, why);
			}
			if (val == NULL || json_is_null(val))
				return var_refuse(rep, err, lists[k], i,
				    "value", name, "missing value");
			if (!var_value_ok(type, val)) {
				snprintf(why, sizeof(why), "the value is not "
				    "a valid %s", type);
				return var_refuse(rep, err, lists[k], i,
				    "value", name, why);
			}
			size = json_dumpb(val, NULL, 0, JSON_COMPACT |
			    JSON_ENCODE_ANY);
			if (size > lim->max_variable_size) {
				snprintf(why, sizeof(why), "the value is %zu "
				    "bytes, over the %zu of "
				    "workflow.max_variable_size", size,
				    lim->max_variable_size);
				return var_refuse(rep, err, lists[k], i,
				    "value", name, why);
			}
		}
	}
	return 0;
}

/* ====== Envelope ====== */

/* Type checks that Dify's import would fail on, then the normalisations. */
static int
check_workflow(json_t *wf, struct dsl_report *rep, const char *mode,
    unsigned flags, const struct dsl_check_limits *lim, char *err)
{
	static const char *const lists[] = {
		"environment_variables", "conversation_variables", NULL,
	};
	json_t	*graph = json_object_get(wf, "graph");
	json_t	*nodes, *edges, *v, *f;
	size_t	 i, k;
	int	 rc;

	for (k = 0; lists[k] != NULL; k++) {
		v = json_object_get(wf, lists[k]);
		if (v == NULL || json_is_null(v))
			continue;
		if (!json_is_array(v))
			return engine_invalid(err, "workflow.%s must be a list",
			    lists[k]);
		for (i = 0; i < json_array_size(v); i++)
			if (!json_is_object(json_array_get(v, i)))
				return engine_invalid(err, "workflow.%s[%zu] "
				    "must be a mapping", lists[k], i);
	}
	f = json_object_get(wf, "features");
	if (f != NULL && !json_is_null(f) && !json_is_object(f))
		return engine_invalid(err, "workflow.features must be a "
		    "mapping");
	if ((rc = check_variables(rep, wf, lim, err)) != 0)
		return rc;
	if (graph == NULL || json_is_null(graph))
		return check_graph(rep, mode, NULL, flags);
	if (!json_is_object(graph))
		return engine_invalid(err, "workflow.graph must be a mapping");
	nodes = json_object_get(graph, "nodes");
	edges = json_object_get(graph, "edges");
	if (nodes != NULL && !json_is_null(nodes) && !json_is_array(nodes))
		return engine_invalid(err, "workflow.graph.nodes must be a "
		    "list");
	if (edges != NULL && !json_is_null(edges) && !json_is_array(edges))
		return engine_invalid(err, "workflow.graph.edges must be a "
		    "list");
	for (i = 0; i < json_array_size(nodes); i++)
		if (json_is_object(json_array_get(nodes, i)) &&
		    (rc = node_normalise(json_array_get(nodes, i))) != 0)
			return rc;
	for (i = 0; i < json_array_size(edges); i++)
		if (json_is_object(json_array_get(edges, i)) &&
		    (rc = edge_normalise(json_array_get(edges, i))) != 0)
			return rc;
	if ((rc = check_graph(rep, mode, graph, flags)) != 0)
		return rc;
	return check_cycles(rep, wf);
}

int
dsl_check(const json_t *in, unsigned flags, char *err,
    struct dsl_report *rep, json_t **out)
{
	return dsl_check_limits(in, flags, NULL, err, rep, out);
}

int
dsl_check_limits(const json_t *in, unsigned flags,
    const struct dsl_check_limits *lim, char *err, struct dsl_report *rep,
    json_t **out)
{
	static const struct dsl_check_limits defaults = {
		DSL_VARIABLE_SIZE_MAX,
	};
	json_t		*doc = NULL, *v, *app, *part;
	const char	*mode;
	int		 workflow_mode, rc = 0;

	*out = NULL;
	memset(rep, 0, sizeof(*rep));
	rep->status = DSL_FAILED;
	rep->current_version = DSL_VERSION_CURRENT;
	if ((rep->problems = json_array()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if (!json_is_object(in)) {
		rc = engine_invalid(err, "invalid yaml format: content must be "
		    "a mapping");
		goto out;
	}
	if ((doc = json_deep_copy(in)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if (py_falsy(json_object_get(doc, "version")) &&
	    (rc = set_new(doc, "version", json_string("0.1.0"))) != 0)
		goto out;
	if (!str_is(json_object_get(doc, "kind"), "app") &&
	    (rc = set_new(doc, "kind", json_string("app"))) != 0)
		goto out;
	v = json_object_get(doc, "version");
	if (!json_is_string(v)) {
		rc = engine_invalid(err, "invalid version type, expected a "
		    "string such as \"0.1.5\", got %s", json_is_integer(v) ?
		    "an integer" : json_is_real(v) ? "a float" :
		    json_is_boolean(v) ? "a boolean" : "a collection");
		goto out;
	}
	snprintf(rep->imported_version, sizeof(rep->imported_version), "%s",
	    json_string_value(v));
	if ((rep->status = version_status(json_string_value(v))) ==
	    DSL_FAILED) {
		rc = engine_invalid(err, "invalid version '%.64s'",
		    json_string_value(v));
		goto out;
	}
	app = json_object_get(doc, "app");
	if (py_falsy(app) || !json_is_object(app)) {
		rep->status = DSL_FAILED;
		rc = engine_invalid(err, "missing app data in yaml content");
		goto out;
	}
	if (rep->status == DSL_PENDING) {
		if (!(flags & DSL_CHECK_CONFIRM))
			goto done;
		rep->status = DSL_COMPLETED;
	}
	v = json_object_get(app, "mode");
	if (py_falsy(v)) {
		rc = engine_invalid(err, "app.mode is missing");
		goto out;
	}
	if (!json_is_string(v) ||
	    !engine_app_mode_valid(json_string_value(v))) {
		rc = engine_invalid(err, "invalid app mode");
		goto out;
	}
	mode = json_string_value(v);
	workflow_mode = strcmp(mode, "workflow") == 0 ||
	    strcmp(mode, "advanced-chat") == 0;
	part = json_object_get(doc, workflow_mode ? "workflow" :
	    "model_config");
	if (py_falsy(part) || !json_is_object(part)) {
		rc = engine_invalid(err, workflow_mode ? "missing workflow "
		    "data for workflow/advanced chat app" : "missing "
		    "model_config for chat/agent-chat/completion app");
		goto out;
	}
	if (workflow_mode && (rc = check_workflow(part, rep, mode, flags,
	    lim != NULL ? lim : &defaults, err)) != 0)
		goto out;
done:
	*out = doc;
	doc = NULL;
out:
	if (rc != 0)
		rep->status = DSL_FAILED;
	json_decref(doc);
	return rc;
}

/* ====== Export ====== */

/*
 * Sets obj[key] to v (stolen) when the key is missing, or also when it is
 * null if or_null is set. Dify keeps a null it was given.
 */
static int
set_default(json_t *obj, const char *key, json_t *v, int or_null)
{
	json_t *cur = json_object_get(obj, key);

	if (cur != NULL && (!or_null || !json_is_null(cur))) {
		json_decref(v);
		return 0;
	}
	return set_new(obj, key, v);
}

static int
export_nodes(json_t *nodes, int include_secret)
{
	json_t		*n, *data, *tools;
	const char	*type;
	size_t		 i, k;
	int		 rc = 0;

	for (i = 0; rc == 0 && i < json_array_size(nodes); i++) {
		n = json_array_get(nodes, i);
		data = json_object_get(n, "data");
		if (!json_is_object(data))
			continue;
		type = str_at(data, "type");
		if (!include_secret && strcmp(type, "tool") == 0)
			json_object_del(data, "credential_id");
		if (!include_secret && strcmp(type, "agent") == 0) {
			tools = json_object_get(json_object_get(
			    json_object_get(data, "agent_parameters"), "tools"),
			    "value");
			for (k = 0; k < json_array_size(tools); k++)
				json_object_del(json_array_get(tools, k),
				    "credential_id");
		}
		if (strcmp(type, "trigger-webhook") == 0) {
			if ((rc = set_new(data, "webhook_url",
			    json_string(""))) == 0)
				rc = set_new(data, "webhook_debug_url",
				    json_string(""));
		}
		if (strcmp(type, "trigger-plugin") == 0)
			rc = set_new(data, "subscription_id", json_string(""));
	}
	return rc;
}

int
dsl_export(const json_t *doc, int include_secret, char *err, json_t **out)
{
	static const char *const icon_types[] = { "emoji", "image", "link",
	    NULL };
	json_t	*x = NULL, *app, *wf, *vars, *var, *tools, *mc;
	size_t	 i;
	int	 rc;

	*out = NULL;
	if (!json_is_object(doc)) {
		rc = engine_invalid(err, "document must be a mapping");
		goto out;
	}
	if ((x = json_deep_copy(doc)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = set_new(x, "version",
	    json_string(DSL_VERSION_CURRENT))) != 0 ||
	    (rc = set_new(x, "kind", json_string("app"))) != 0)
		goto out;
	app = json_object_get(x, "app");
	if (!json_is_object(app)) {
		if ((rc = set_new(x, "app", json_object())) != 0)
			goto out;
		app = json_object_get(x, "app");
	}
	if (!json_is_string(json_object_get(app, "icon_type")) ||
	    !in_list(str_at(app, "icon_type"), icon_types))
		if ((rc = set_new(app, "icon_type", json_string("emoji"))) != 0)
			goto out;
	if ((rc = set_default(app, "name", json_string(""), 0)) != 0 ||
	    (rc = set_default(app, "description", json_string(""), 0)) != 0 ||
	    (rc = set_default(app, "icon", json_string(""), 0)) != 0 ||
	    (rc = set_default(app, "icon_background",
	    json_string("#FFFFFF"), 0)) != 0 ||
	    (rc = set_default(app, "use_icon_as_answer_icon",
	    json_false(), 0)) != 0 ||
	    (rc = set_default(x, "dependencies", json_array(), 1)) != 0)
		goto out;
	wf = json_object_get(x, "workflow");
	if (json_is_object(wf)) {
		if ((rc = set_default(wf, "environment_variables",
		    json_array(), 1)) != 0 ||
		    (rc = set_default(wf, "conversation_variables",
		    json_array(), 1)) != 0 ||
		    (rc = set_default(wf, "features", json_object(), 1)) != 0)
			goto out;
		vars = json_object_get(wf, "environment_variables");
		for (i = 0; !include_secret && i < json_array_size(vars); i++) {
			var = json_array_get(vars, i);
			if (str_is(json_object_get(var, "value_type"),
			    "secret") &&
			    (rc = set_new(var, "value", json_string(""))) != 0)
				goto out;
		}
		if ((rc = export_nodes(json_object_get(json_object_get(wf,
		    "graph"), "nodes"), include_secret)) != 0)
			goto out;
	}
	mc = json_object_get(x, "model_config");
	tools = json_object_get(json_object_get(mc, "agent_mode"), "tools");
	for (i = 0; i < json_array_size(tools); i++)
		json_object_del(json_array_get(tools, i), "credential_id");
	*out = x;
	x = NULL;
out:
	json_decref(x);
	return rc;
}
