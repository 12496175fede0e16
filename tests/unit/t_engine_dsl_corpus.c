/*
 * t_engine_dsl_corpus.c — every DSL file of tests/unit/dsl_files.h (the
 * project's own apps, bundles and real Dify exports, then the shared
 * corpus when it is here): parse and check it (completed-with-warnings
 * for versions below 0.6, completed for 0.6, pending for newer ones until
 * confirmed, no graph problems), export it, and require that the export
 * reads back json_equal to what was exported, that export -> import ->
 * export gives the same bytes, and that the export keeps every field of
 * the original (apart from the documented normalisations). A .zip bundle
 * is read with bundle_read and its DSL goes the same way. One TAP line
 * per file.
 *
 * Then the project's own files, without the corpus, must cover every node
 * type flowcgi runs, every DSL version Dify's files carry (none, 0.1.0 to
 * 0.5.0), the current one and a newer one, the five app modes, the legacy
 * forms of reference/dify-dsl.md §7 and both export formats (.yml, .zip
 * with and without a manifest): one TAP line each, so that a fixture taken
 * away, or a node type added without one, shows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/run/run.h"
#include "tests/unit/dsl_files.h"
#include "tests/unit/tap.h"

static char errbuf[ENGINE_ERRMAX];
static char why[512];

/*
 * Whether b keeps everything of a: every key of a mapping, every item of
 * a list, equal scalars; allowed differences are the normalisations of
 * dsl_check and dsl_export (ids as text, http body text, a
 * parameter-extractor's old parameter types, version). key is the key a
 * sits under (NULL for a list item), ctx the key of the nearest named
 * container around it.
 */
static int
covers(const json_t *a, const json_t *b, const char *key, const char *ctx,
    int depth)
{
	const char	*k, *sa, *sb;
	json_t		*v;
	char		 num[32];
	size_t		 i;

	if (json_is_object(a)) {
		if (!json_is_object(b))
			return 0;
		json_object_foreach((json_t *)a, k, v) {
			if (depth == 0 && strcmp(k, "version") == 0)
				continue;
			if (!covers(v, json_object_get(b, k), k, key != NULL ?
			    key : ctx, depth + 1)) {
				if (why[0] == '\0')
					snprintf(why, sizeof(why), "key '%s'",
					    k);
				return 0;
			}
		}
		return 1;
	}
	if (json_is_array(a)) {
		if (!json_is_array(b) || json_array_size(a) !=
		    json_array_size(b))
			return 0;
		for (i = 0; i < json_array_size(a); i++)
			if (!covers(json_array_get(a, i), json_array_get(b, i),
			    NULL, key, depth + 1))
				return 0;
		return 1;
	}
	if (json_equal((json_t *)a, (json_t *)b))
		return 1;
	if (json_is_integer(a) && json_is_string(b)) {
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(a));
		return strcmp(num, json_string_value(b)) == 0;
	}
	if (key != NULL && strcmp(key, "data") == 0 && json_is_string(a) &&
	    json_is_array(b))
		return 1;
	sa = json_string_value(a);
	sb = json_string_value(b);
	if (key != NULL && strcmp(key, "type") == 0 && ctx != NULL &&
	    strcmp(ctx, "parameters") == 0 && sa != NULL && sb != NULL &&
	    ((strcmp(sa, "select") == 0 && strcmp(sb, "string") == 0) ||
	    (strcmp(sa, "bool") == 0 && strcmp(sb, "boolean") == 0)))
		return 1;
	return 0;
}

/*
 * The export of a checked document, as YAML, secrets included (it is
 * compared with all of the original; blanking them is t_secrets_dsl's
 * and t_dsl's); NULL with why set.
 */
static char *
export_yaml(const json_t *checked, json_t **exported)
{
	char	*y = NULL;
	size_t	 n;

	*exported = NULL;
	if (dsl_export(checked, 1, errbuf, exported) != 0) {
		snprintf(why, sizeof(why), "export: %s", errbuf);
		return NULL;
	}
	if (dsl_emit(*exported, errbuf, &y, &n) != 0) {
		snprintf(why, sizeof(why), "emit: %s", errbuf);
		return NULL;
	}
	return y;
}

/* ====== What the project's files cover ====== */

/* One thing the project's own files must hold, and whether they do. */
struct form {
	char	 name[64];
	int	 seen;
};

static struct form	forms[128];
static size_t		nforms;

/* Adds a form that must be seen (once; a second add is the same form). */
static void
form_need(const char *name)
{
	size_t	i;

	for (i = 0; i < nforms; i++)
		if (strcmp(forms[i].name, name) == 0)
			return;
	if (nforms < sizeof(forms) / sizeof(forms[0]))
		snprintf(forms[nforms++].name, sizeof(forms[0].name), "%s",
		    name);
}

/* Marks the form named what + arg seen, if it is one that must be. */
static void
form_seen(const char *what, const char *arg)
{
	char	name[64];
	size_t	i;

	snprintf(name, sizeof(name), "%s%s", what, arg);
	for (i = 0; i < nforms; i++)
		if (strcmp(forms[i].name, name) == 0)
			forms[i].seen = 1;
}

/* The forms: node types flowcgi runs, versions, modes, legacy, formats. */
static void
forms_init(void)
{
	static const char *const need[] = {
		"version none", "version 0.1.0", "version 0.1.2",
		"version 0.1.3", "version 0.1.4", "version 0.1.5",
		"version 0.2.0", "version 0.3.0", "version 0.3.1",
		"version 0.4.0", "version 0.5.0", "version 0.6.0",
		"version newer than 0.6.0",
		"mode workflow", "mode advanced-chat", "mode chat",
		"mode agent-chat", "mode completion",
		"format .yml", "format .zip with manifest.json",
		"format .zip in the older layout (no manifest)",
		/* reference/dify-dsl.md §7 */
		"legacy no kind",
		"legacy if-else conditions without cases",
		"legacy http-request body.data as a string",
		"legacy assigner v1 (write_mode)",
		"legacy iteration without an iteration-start node",
		"legacy question-classifier instructions/topics",
		"legacy parameter-extractor type select/bool",
		"legacy end output without value_type",
		"legacy llm variables",
		"legacy knowledge-retrieval single mode",
		"legacy edge targetHandle other than target",
		"legacy edge without data",
		"legacy canvas note (custom-note)",
		NULL,
	};
	const struct node_type	*t;
	char			 name[64];
	size_t			 i;

	for (i = 0; need[i] != NULL; i++)
		form_need(need[i]);
	for (i = 0; (t = node_type_at(i)) != NULL; i++) {
		snprintf(name, sizeof(name), "node type %s", t->type);
		form_need(name);
	}
}

static int
has_key(const json_t *o, const char *k)
{
	return json_object_get(o, k) != NULL;
}

/* Whether v is the string s. */
static int
str_is(const json_t *v, const char *s)
{
	return json_is_string(v) && strcmp(json_string_value(v), s) == 0;
}

/* The forms one original (unchecked) document shows. */
static void
forms_of(const json_t *doc)
{
	const json_t	*app = json_object_get(doc, "app"), *v, *graph;
	const json_t	*node, *data, *item;
	const char	*type, *s;
	size_t		 i, j;
	int		 minor;

	v = json_object_get(doc, "version");
	s = json_string_value(v);
	if (s == NULL)
		form_seen("version none", "");
	else {
		form_seen("version ", s);
		minor = strncmp(s, "0.", 2) == 0 ? (int)strtol(s + 2, NULL,
		    10) : 99;
		if (minor > 6)
			form_seen("version newer than 0.6.0", "");
	}
	if (!has_key(doc, "kind"))
		form_seen("legacy no kind", "");
	form_seen("mode ", json_string_value(json_object_get(app,
	    "mode")) ? json_string_value(json_object_get(app, "mode")) : "");
	graph = json_object_get(json_object_get(doc, "workflow"), "graph");
	json_array_foreach(json_object_get(graph, "nodes"), i, node) {
		data = json_object_get(node, "data");
		type = json_string_value(json_object_get(data, "type"));
		if (str_is(json_object_get(node, "type"), "custom-note")) {
			form_seen("legacy canvas note (custom-note)", "");
			continue;
		}
		if (type == NULL)
			continue;
		form_seen("node type ", type);
		if (strcmp(type, "if-else") == 0 && !has_key(data, "cases") &&
		    has_key(data, "conditions"))
			form_seen("legacy if-else conditions without cases",
			    "");
		if (strcmp(type, "http-request") == 0 && json_is_string(
		    json_object_get(json_object_get(data, "body"), "data")))
			form_seen("legacy http-request body.data as a string",
			    "");
		if (strcmp(type, "assigner") == 0 && has_key(data,
		    "write_mode"))
			form_seen("legacy assigner v1 (write_mode)", "");
		if (strcmp(type, "iteration") == 0 && has_key(data,
		    "startNodeType"))
			form_seen("legacy iteration without an "
			    "iteration-start node", "");
		if (strcmp(type, "question-classifier") == 0 &&
		    (has_key(data, "instructions") || has_key(data,
		    "topics")))
			form_seen("legacy question-classifier "
			    "instructions/topics", "");
		if (strcmp(type, "parameter-extractor") == 0)
			json_array_foreach(json_object_get(data, "parameters"),
			    j, item)
				if (str_is(json_object_get(item, "type"),
				    "select") || str_is(json_object_get(item,
				    "type"), "bool"))
					form_seen("legacy parameter-extractor "
					    "type select/bool", "");
		if (strcmp(type, "end") == 0)
			json_array_foreach(json_object_get(data, "outputs"), j,
			    item)
				if (!has_key(item, "value_type"))
					form_seen("legacy end output without "
					    "value_type", "");
		if (strcmp(type, "llm") == 0 && has_key(data, "variables"))
			form_seen("legacy llm variables", "");
		if (strcmp(type, "knowledge-retrieval") == 0 && str_is(
		    json_object_get(data, "retrieval_mode"), "single"))
			form_seen("legacy knowledge-retrieval single mode",
			    "");
	}
	json_array_foreach(json_object_get(graph, "edges"), i, item) {
		if (!str_is(json_object_get(item, "targetHandle"), "target"))
			form_seen("legacy edge targetHandle other than target",
			    "");
		if (!has_key(item, "data"))
			form_seen("legacy edge without data", "");
	}
}

/* ====== One file ====== */

/* Checks one DSL document's text; 0 with why set when it fails. */
static int
dsl_text(const char *text, size_t len, int project)
{
	struct dsl_report	 rep, rep2;
	json_t			*orig = NULL, *checked = NULL, *x1 = NULL;
	json_t			*p1 = NULL, *checked2 = NULL, *x2 = NULL;
	char			*y1 = NULL, *y2 = NULL;
	int			 ok = 0, minor;

	why[0] = '\0';
	memset(&rep, 0, sizeof(rep));
	memset(&rep2, 0, sizeof(rep2));
	if (dsl_parse(text, len, NULL, errbuf, &orig) != 0) {
		snprintf(why, sizeof(why), "parse: %s", errbuf);
		goto out;
	}
	if (project)
		forms_of(orig);
	if (dsl_check(orig, 0, errbuf, &rep, &checked) != 0) {
		snprintf(why, sizeof(why), "check: %s", errbuf);
		goto out;
	}
	/* 0.x below 0.6 warns; anything newer waits for confirmation. */
	minor = strncmp(rep.imported_version, "0.", 2) == 0 ?
	    (int)strtol(rep.imported_version + 2, NULL, 10) : 99;
	if (rep.status != (minor < 6 ? DSL_COMPLETED_WITH_WARNINGS :
	    minor == 6 ? DSL_COMPLETED : DSL_PENDING)) {
		snprintf(why, sizeof(why), "status %s for version %s",
		    dsl_status_name(rep.status), rep.imported_version);
		goto out;
	}
	if (rep.status == DSL_PENDING) {
		/* confirmed, as the import's confirm step does */
		json_decref(checked);
		checked = NULL;
		dsl_report_release(&rep);
		memset(&rep, 0, sizeof(rep));
		if (dsl_check(orig, DSL_CHECK_CONFIRM, errbuf, &rep,
		    &checked) != 0 || rep.status != DSL_COMPLETED) {
			snprintf(why, sizeof(why), "confirm: %s", errbuf);
			goto out;
		}
	}
	if (json_array_size(rep.problems) > 0) {
		snprintf(why, sizeof(why), "problem: %s", json_string_value(
		    json_object_get(json_array_get(rep.problems, 0),
		    "message")));
		goto out;
	}
	if ((y1 = export_yaml(checked, &x1)) == NULL)
		goto out;
	if (dsl_parse(y1, strlen(y1), NULL, errbuf, &p1) != 0) {
		snprintf(why, sizeof(why), "re-parse: %s", errbuf);
		goto out;
	}
	if (!json_equal(x1, p1)) {
		snprintf(why, sizeof(why), "export does not read back equal");
		goto out;
	}
	if (!covers(orig, p1, NULL, NULL, 0)) {
		snprintf(why + strlen(why), sizeof(why) - strlen(why),
		    " of the original is lost in the export");
		goto out;
	}
	if (dsl_check(p1, 0, errbuf, &rep2, &checked2) != 0) {
		snprintf(why, sizeof(why), "re-check: %s", errbuf);
		goto out;
	}
	if ((y2 = export_yaml(checked2, &x2)) == NULL)
		goto out;
	if (strcmp(y1, y2) != 0) {
		snprintf(why, sizeof(why), "second export differs");
		goto out;
	}
	ok = 1;
out:
	dsl_report_release(&rep);
	dsl_report_release(&rep2);
	json_decref(orig);
	json_decref(checked);
	json_decref(x1);
	json_decref(p1);
	json_decref(checked2);
	json_decref(x2);
	free(y1);
	free(y2);
	return ok;
}

/* Checks one file, a .yml or a .zip bundle; 0 with why set. */
static int
dsl_file(const struct conf *c, const char *path, int project)
{
	struct bundle	 b;
	char		*text;
	size_t		 len, n = strlen(path);
	int		 ok = 0;

	if ((text = dsl_files_slurp(path, &len)) == NULL) {
		snprintf(why, sizeof(why), "cannot read");
		return 0;
	}
	if (n < 4 || strcmp(path + n - 4, ".zip") != 0) {
		if (project)
			form_seen("format .yml", "");
		ok = dsl_text(text, len, project);
		free(text);
		return ok;
	}
	memset(&b, 0, sizeof(b));
	if (bundle_read(c, text, len, errbuf, &b) != 0)
		snprintf(why, sizeof(why), "bundle: %s", errbuf);
	else {
		if (project)
			form_seen(b.manifest != NULL ? "format .zip with "
			    "manifest.json" : "format .zip in the older layout "
			    "(no manifest)", "");
		if (!(ok = dsl_text(b.dsl, b.dsl_len, project)))
			snprintf(why + strlen(why), sizeof(why) - strlen(why),
			    " (%s in the bundle)", b.dsl_name);
		else if (b.nfiles == 0) {
			snprintf(why, sizeof(why), "a bundle without files");
			ok = 0;
		}
	}
	bundle_release(&b);
	free(text);
	return ok;
}

int
main(void)
{
	static struct conf	c;
	struct dsl_files	f;
	char			what[96];
	size_t			i;

	conf_defaults(&c);
	forms_init();
	dsl_files_collect(&f, DSL_FILES_YML | DSL_FILES_ZIP);
	for (i = 0; i < f.n; i++)
		if (!tap_check(dsl_file(&c, f.paths[i], i < f.nproject),
		    __FILE__, __LINE__, f.paths[i]))
			printf("#   %s\n", why);
	printf("# %zu of the project's own files, %zu of the shared corpus\n",
	    f.nproject, f.n - f.nproject);
	for (i = 0; i < nforms; i++) {
		snprintf(what, sizeof(what), "the project's files cover %.63s",
		    forms[i].name);
		tap_check(forms[i].seen, __FILE__, __LINE__, what);
	}
	dsl_files_free(&f);
	return tap_done();
}
