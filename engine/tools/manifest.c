/*
 * manifest.c — tool providers declared as data: loading and checking
 * manifests, and finding the one a DSL names (docs/tools.md).
 *
 * A manifest is one YAML file in the shape of a Dify tool provider: the
 * provider's identity and credentials_for_provider as Dify's provider
 * YAML has them, its tools as Dify's tool YAML has them (identity,
 * description, parameters), and for each tool a request template and a
 * response mapping that manifest_run.c interprets. Those built into the
 * binary come from the .yml files of engine/tools/providers (GNUmakefile turns them
 * into tool_manifest_files[]); an admin adds their own from
 * tools.providers_dir, where a file replaces a built-in manifest of the
 * same name. Every manifest is checked whole at engine_open: an error
 * names the file, the line and the key, and stops the engine.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/tools/tools.h"

/* generated from engine/tools/providers/ by GNUmakefile */
struct tool_manifest_file {
	const char		*name;
	const unsigned char	*data;
	size_t			 len;
};
extern const struct tool_manifest_file tool_manifest_files[];

struct tool_manifests {
	struct tool_manifest	**v;
	size_t			  n;
};

/* ====== Line numbers ====== */

/* The first "key:" of line p..eol that starts a key (at the line's start,
 * or after a space, '{', ',' or '-'), or NULL. */
static const char *
key_in(const char *p, const char *eol, const char *key, size_t kl)
{
	const char *s;

	for (s = p; (s = strstr(s, key)) != NULL && (eol == NULL || s < eol);
	    s++)
		if (s[kl] == ':' && (s == p || s[-1] == ' ' || s[-1] == '{' ||
		    s[-1] == ',' || s[-1] == '-' || s[-1] == '\t'))
			return s;
	return NULL;
}

/*
 * The line of key in text: the first after the line that names the tool
 * ("name: <tool>"), or the first of the file when tool is NULL; the
 * tool's own line when the key is not written (it is missing). 0 when
 * neither can be found: dsl_parse keeps no marks, so this reads the text.
 */
static int
key_line(const char *text, const char *tool, const char *key)
{
	const char	*p = text, *eol, *s;
	size_t		 kl = key ? strlen(key) : 0, tl = tool ? strlen(tool) : 0;
	int		 line = 1, after = tool == NULL, tool_line = 0;

	for (; p != NULL && *p != '\0'; p = eol ? eol + 1 : NULL, line++) {
		eol = strchr(p, '\n');
		if (!after) {
			if ((s = key_in(p, eol, "name", 4)) == NULL)
				continue;
			s += 5;
			while (*s == ' ' || *s == '"' || *s == '\'')
				s++;
			if (strncmp(s, tool, tl) == 0 &&
			    !isalnum((unsigned char)s[tl]) && s[tl] != '_' &&
			    s[tl] != '-') {
				after = 1;
				tool_line = line;
			} else
				continue;
		}
		if (kl > 0 && key_in(p, eol, key, kl) != NULL &&
		    !(tool != NULL && line == tool_line && strcmp(key,
		    "name") == 0))
			return line;
	}
	return tool_line;
}

/* ENGINE_EINVAL with "<file>:<line>: <key>: <why>" in err. */
static int
bad(char *err, const struct tool_manifest *m, const char *tool,
    const char *key, const char *why)
{
	int line = key_line(m->text, tool, key);

	if (tool != NULL)
		return engine_invalid(err, "tool manifest %s:%d: tool %s: %s: "
		    "%s", m->file, line, tool, key, why);
	return engine_invalid(err, "tool manifest %s:%d: %s: %s", m->file,
	    line, key, why);
}

/* ====== Checks ====== */

static int
name_ok(const char *s, size_t max)
{
	size_t i;

	if (s == NULL || *s == '\0' || strlen(s) > max)
		return 0;
	for (i = 0; s[i] != '\0'; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' &&
		    s[i] != '-' && s[i] != '.')
			return 0;
	return 1;
}

static int
one_of(const char *s, const char *const *list)
{
	for (; s != NULL && *list != NULL; list++)
		if (strcmp(s, *list) == 0)
			return 1;
	return 0;
}

static const char *const param_types[] = { "string", "number", "boolean",
	"select", "secret-input", "file", "files", "paragraph", "text-input",
	"array", "object", "checkbox", "app-selector", "model-selector",
	"any", NULL };
static const char *const cred_types[] = { "secret-input", "text-input",
	"select", "boolean", NULL };
static const char *const methods[] = { "GET", "POST", "PUT", "PATCH",
	"DELETE", NULL };

/* A map of string keys to strings (or scalars), for headers and query. */
static int
check_str_map(char *err, const struct tool_manifest *m, const char *tool,
    const char *key, const json_t *v)
{
	const char	*k;
	json_t		*x;

	if (v == NULL)
		return 0;
	if (!json_is_object(v))
		return bad(err, m, tool, key, "must be a mapping");
	json_object_foreach((json_t *)v, k, x)
		if (!json_is_string(x) && !json_is_number(x) &&
		    !json_is_boolean(x))
			return bad(err, m, tool, key, "values must be text");
	return 0;
}

/* Each string of v that holds a template compiles (key: where it is). */
static int
check_templates(char *err, const struct tool_manifest *m, const char *tool,
    const char *key, const json_t *v, int depth)
{
	struct jinja_tpl	*tpl = NULL;
	char			 jerr[ENGINE_ERRMAX], why[ENGINE_ERRMAX];
	const char		*k, *s;
	json_t			*x;
	size_t			 i;
	int			 rc;

	if (depth > 32)
		return bad(err, m, tool, key, "nested too deeply");
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x)
			if ((rc = check_templates(err, m, tool,
			    json_is_string(x) ? k : key, x, depth + 1)) != 0)
				return rc;
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			if ((rc = check_templates(err, m, tool, key, x,
			    depth + 1)) != 0)
				return rc;
	} else if ((s = json_string_value(v)) != NULL &&
	    (strstr(s, "{{") != NULL || strstr(s, "{%") != NULL)) {
		if ((rc = jinja_compile(s, strlen(s), NULL, jerr, &tpl)) != 0) {
			if (rc != ENGINE_EINVAL)
				return rc;
			snprintf(why, sizeof(why), "template: %.200s", jerr);
			return bad(err, m, tool, key, why);
		}
		jinja_free(tpl);
	}
	return 0;
}

/* A request (a tool's, or a step's): method, url, headers, query, one of
 * json / form / body, timeout; every template in it compiles. */
static int
check_request(char *err, const struct tool_manifest *m, const char *name,
    const json_t *req)
{
	const char	*method;
	int		 rc;

	if (!json_is_object(req))
		return bad(err, m, name, "request", "must be a mapping "
		    "(method, url, ...)");
	method = json_string_value(json_object_get(req, "method"));
	if (json_object_get(req, "method") != NULL && !one_of(method,
	    methods))
		return bad(err, m, name, "method", "GET, POST, PUT, PATCH or "
		    "DELETE");
	if (!json_is_string(json_object_get(req, "url")))
		return bad(err, m, name, "url", "the request needs a url");
	if ((rc = check_str_map(err, m, name, "headers",
	    json_object_get(req, "headers"))) != 0 ||
	    (rc = check_str_map(err, m, name, "query",
	    json_object_get(req, "query"))) != 0 ||
	    (rc = check_str_map(err, m, name, "form",
	    json_object_get(req, "form"))) != 0)
		return rc;
	if ((json_object_get(req, "json") != NULL) +
	    (json_object_get(req, "form") != NULL) +
	    (json_object_get(req, "body") != NULL) > 1)
		return bad(err, m, name, "request", "one of json, form and "
		    "body");
	if (json_object_get(req, "body") != NULL &&
	    !json_is_string(json_object_get(req, "body")))
		return bad(err, m, name, "body", "must be text");
	if (json_object_get(req, "timeout") != NULL &&
	    (!json_is_integer(json_object_get(req, "timeout")) ||
	    json_integer_value(json_object_get(req, "timeout")) < 1))
		return bad(err, m, name, "timeout", "seconds, at least 1");
	return check_templates(err, m, name, "request", req, 0);
}

/*
 * Steps (the provider's, name NULL, or a tool's): a list of at most
 * TOOL_STEPS_MAX requests, each with a name of its own, run before the
 * tool's request; `each` a path, `format` as a response's, `error_if` a
 * template.
 */
static int
check_steps(char *err, const struct tool_manifest *m, const char *name,
    const json_t *steps)
{
	const json_t	*st;
	const char	*sn;
	size_t		 i, j;
	int		 rc;

	if (steps == NULL)
		return 0;
	if (!json_is_array(steps) || json_array_size(steps) > TOOL_STEPS_MAX)
		return bad(err, m, name, "steps", "a list of at most 8 "
		    "steps");
	json_array_foreach(steps, i, st) {
		sn = json_string_value(json_object_get(st, "name"));
		if (!name_ok(sn, 64) || strchr(sn, '.') != NULL)
			return bad(err, m, name, "steps", "each step needs a "
			    "name (letters, digits, _ -)");
		for (j = 0; j < i; j++)
			if (strcmp(json_string_value(json_object_get(
			    json_array_get(steps, j), "name")), sn) == 0)
				return bad(err, m, name, "steps", "two steps "
				    "of one name");
		if (json_object_get(st, "each") != NULL &&
		    !json_is_string(json_object_get(st, "each")))
			return bad(err, m, name, "each", "a path such as "
			    "steps.search.items");
		if (json_object_get(st, "format") != NULL && !one_of(
		    json_string_value(json_object_get(st, "format")),
		    (const char *const[]){ "json", "text", NULL }))
			return bad(err, m, name, "format", "json or text");
		if (json_object_get(st, "error_if") != NULL &&
		    !json_is_string(json_object_get(st, "error_if")))
			return bad(err, m, name, "error_if", "a template "
			    "(text)");
		if ((rc = check_request(err, m, name, json_object_get(st,
		    "request"))) != 0 || (rc = check_templates(err, m, name,
		    "error_if", json_object_get(st, "error_if"), 0)) != 0)
			return rc;
	}
	return 0;
}

static int
check_tool(char *err, const struct tool_manifest *m, const json_t *t,
    const char **name)
{
	const json_t	*req, *resp, *params, *p, *files, *f, *steps;
	const char	*type, *form, *pn;
	size_t		 i;
	int		 rc;

	*name = json_string_value(json_object_get(json_object_get(t,
	    "identity"), "name"));
	if (!name_ok(*name, 128))
		return bad(err, m, NULL, "tools", "each tool needs "
		    "identity.name (letters, digits, _ - .)");
	params = json_object_get(t, "parameters");
	if (params != NULL && !json_is_array(params))
		return bad(err, m, *name, "parameters", "must be a list");
	json_array_foreach(params, i, p) {
		pn = json_string_value(json_object_get(p, "name"));
		type = json_string_value(json_object_get(p, "type"));
		form = json_string_value(json_object_get(p, "form"));
		if (!name_ok(pn, 128))
			return bad(err, m, *name, "parameters", "each "
			    "parameter needs a name");
		if (!one_of(type, param_types))
			return bad(err, m, *name, "type", "a parameter type "
			    "of Dify's (string, number, boolean, select, "
			    "secret-input, file, files, ...)");
		if (form != NULL && strcmp(form, "llm") != 0 &&
		    strcmp(form, "form") != 0 && strcmp(form, "schema") != 0)
			return bad(err, m, *name, "form", "llm, form or "
			    "schema");
		if (json_object_get(p, "options") != NULL &&
		    !json_is_array(json_object_get(p, "options")))
			return bad(err, m, *name, "options", "must be a list");
	}
	/* a native provider's manifest describes; its C file runs */
	if (json_is_true(json_object_get(m->doc, "native")))
		return json_object_get(t, "request") == NULL ? 0 : bad(err, m,
		    *name, "request", "a native provider's tools have none");
	steps = json_object_get(t, "steps");
	if ((rc = check_steps(err, m, *name, steps)) != 0)
		return rc;
	req = json_object_get(t, "request");
	if (req == NULL && json_array_size(steps) == 0 &&
	    json_array_size(json_object_get(m->doc, "steps")) == 0)
		return bad(err, m, *name, "request", "each tool needs a "
		    "request (method, url, ...) or steps");
	if (req != NULL && (rc = check_request(err, m, *name, req)) != 0)
		return rc;
	resp = json_object_get(t, "response");
	if (resp != NULL && !json_is_object(resp))
		return bad(err, m, *name, "response", "must be a mapping");
	if (json_object_get(resp, "text") != NULL &&
	    !json_is_string(json_object_get(resp, "text")))
		return bad(err, m, *name, "text", "a template (text)");
	if (json_object_get(resp, "error_if") != NULL &&
	    !json_is_string(json_object_get(resp, "error_if")))
		return bad(err, m, *name, "error_if", "a template (text)");
	if (json_object_get(resp, "json") != NULL &&
	    !json_is_string(json_object_get(resp, "json")))
		return bad(err, m, *name, "json", "a path such as body or "
		    "body.results");
	if (json_object_get(resp, "format") != NULL && !one_of(
	    json_string_value(json_object_get(resp, "format")),
	    (const char *const[]){ "json", "text", "feed", NULL }))
		return bad(err, m, *name, "format", "json, text or feed");
	files = json_object_get(resp, "files");
	if (files != NULL && !json_is_array(files))
		return bad(err, m, *name, "files", "must be a list");
	json_array_foreach(files, i, f)
		if (!json_is_string(json_object_get(f, "url")) &&
		    !json_is_string(json_object_get(f, "b64")))
			return bad(err, m, *name, "files", "each file needs "
			    "url or b64");
	if ((rc = check_str_map(err, m, *name, "errors",
	    json_object_get(resp, "errors"))) != 0)
		return rc;
	return check_templates(err, m, *name, "response", resp, 0);
}

static int
check_manifest(char *err, struct tool_manifest *m)
{
	const json_t	*id, *creds, *tools, *t, *c, *aliases, *a, *test;
	const char	*k, *name, *type, *base;
	size_t		 i, j;
	int		 rc;

	if (!json_is_object(m->doc))
		return engine_invalid(err, "tool manifest %s: not a mapping",
		    m->file);
	id = json_object_get(m->doc, "identity");
	m->name = json_string_value(json_object_get(id, "name"));
	if (!name_ok(m->name, 128))
		return bad(err, m, NULL, "identity", "needs a name (letters, "
		    "digits, _ - .)");
	aliases = json_object_get(id, "aliases");
	if (aliases != NULL && !json_is_array(aliases))
		return bad(err, m, NULL, "aliases", "must be a list");
	json_array_foreach(aliases, i, a)
		if (!json_is_string(a) || json_string_length(a) == 0)
			return bad(err, m, NULL, "aliases", "must be text");
	base = json_string_value(json_object_get(m->doc, "base_url"));
	if (json_object_get(m->doc, "base_url") != NULL && (base == NULL ||
	    (strncmp(base, "https://", 8) != 0 &&
	    strncmp(base, "http://", 7) != 0)))
		return bad(err, m, NULL, "base_url", "an http(s) URL");
	creds = json_object_get(m->doc, "credentials_for_provider");
	if (creds != NULL && !json_is_object(creds))
		return bad(err, m, NULL, "credentials_for_provider", "must be "
		    "a mapping");
	json_object_foreach((json_t *)creds, k, c) {
		type = json_string_value(json_object_get(c, "type"));
		if (!name_ok(k, 128))
			return bad(err, m, NULL, k, "a credential name: "
			    "letters, digits, _ - .");
		if (!one_of(type, cred_types))
			return bad(err, m, NULL, k, "type: secret-input, "
			    "text-input, select or boolean");
	}
	if (json_object_get(m->doc, "native") != NULL && (!json_is_true(
	    json_object_get(m->doc, "native")) || tool_provider_find(m->name,
	    "builtin") == NULL))
		return bad(err, m, NULL, "native", "true, for a provider of "
		    "that name in engine/tools/");
	if (json_object_get(m->doc, "unsupported") != NULL) {
		if (!json_is_string(json_object_get(m->doc, "unsupported")))
			return bad(err, m, NULL, "unsupported", "the reason, "
			    "as text");
		return 0;
	}
	if ((rc = check_steps(err, m, NULL, json_object_get(m->doc,
	    "steps"))) != 0)
		return rc;
	tools = json_object_get(m->doc, "tools");
	if (!json_is_array(tools) || json_array_size(tools) == 0)
		return bad(err, m, NULL, "tools", "a list of at least one "
		    "tool (or `unsupported: <reason>`)");
	test = json_object_get(m->doc, "test");
	if (json_is_true(json_object_get(test, "steps"))) {
		if (json_array_size(json_object_get(m->doc, "steps")) == 0)
			return bad(err, m, NULL, "test", "steps: true needs the "
			    "provider's steps");
	} else if (test != NULL && (tool_manifest_tool(m, json_string_value(
	    json_object_get(test, "tool"))) == NULL ||
	    (json_object_get(test, "parameters") != NULL &&
	    !json_is_object(json_object_get(test, "parameters")))))
		return bad(err, m, NULL, "test", "names one of the tools, with "
		    "its parameters as a mapping");
	json_array_foreach(tools, i, t) {
		if ((rc = check_tool(err, m, t, &name)) != 0)
			return rc;
		for (j = 0; j < i; j++)
			if (strcmp(json_string_value(json_object_get(
			    json_object_get(json_array_get(tools, j),
			    "identity"), "name")), name) == 0)
				return bad(err, m, name, "name", "two tools "
				    "of this name");
	}
	return 0;
}

/* ====== Parse ====== */

void
tool_manifest_free(struct tool_manifest *m)
{
	if (m == NULL)
		return;
	json_decref(m->doc);
	free(m->file);
	free(m->text);
	free(m);
}

int
tool_manifest_parse(const char *file, const char *text, size_t len,
    char *err, struct tool_manifest **out)
{
	struct tool_manifest	*m = NULL;
	char			 perr[ENGINE_ERRMAX];
	int			 rc;

	*out = NULL;
	if ((m = calloc(1, sizeof(*m))) == NULL ||
	    (m->file = strdup(file)) == NULL ||
	    (m->text = malloc(len + 1)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	memcpy(m->text, text, len);
	m->text[len] = '\0';
	if ((rc = dsl_parse(text, len, NULL, perr, &m->doc)) != 0) {
		if (rc == ENGINE_EINVAL)
			engine_invalid(err, "tool manifest %s: %s", file, perr);
		goto out;
	}
	if ((rc = check_manifest(err, m)) != 0)
		goto out;
	*out = m;
	m = NULL;
out:
	tool_manifest_free(m);
	return rc;
}

/* ====== The registry of one engine ====== */

static int
add(struct tool_manifests *all, struct tool_manifest *m)
{
	struct tool_manifest	**v;
	size_t			  i;

	for (i = 0; i < all->n; i++)
		if (strcmp(all->v[i]->name, m->name) == 0) {
			/* an admin's file replaces a built-in one */
			tool_manifest_free(all->v[i]);
			all->v[i] = m;
			return 0;
		}
	if ((v = realloc(all->v, (all->n + 1) * sizeof(*v))) == NULL)
		return ENGINE_ENOMEM;
	all->v = v;
	all->v[all->n++] = m;
	return 0;
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The *.yml and *.yaml files of dir, each parsed into all. */
static int
load_dir(struct tool_manifests *all, const char *dir, char *err)
{
	struct tool_manifest	*m = NULL;
	struct dirent		*de;
	struct stat		 st;
	DIR			*d = NULL;
	FILE			*f = NULL;
	char			**names = NULL, **nv, path[2048], *buf = NULL;
	size_t			 n = 0, i, len;
	int			 rc = 0;

	if ((d = opendir(dir)) == NULL) {
		snprintf(err, ENGINE_ERRMAX, "tools.providers_dir '%.200s': "
		    "%s", dir, strerror(errno));
		return ENGINE_EINVAL;
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (de->d_name[0] == '.' || !((len > 4 && strcmp(de->d_name +
		    len - 4, ".yml") == 0) || (len > 5 && strcmp(de->d_name +
		    len - 5, ".yaml") == 0)))
			continue;
		if ((nv = realloc(names, (n + 1) * sizeof(*nv))) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		names = nv;
		if ((names[n] = strdup(de->d_name)) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		n++;
	}
	if (n > 0)
		qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if ((f = fopen(path, "r")) == NULL || fstat(fileno(f),
		    &st) != 0 || !S_ISREG(st.st_mode) || st.st_size >
		    TOOL_MAX_SCHEMA) {
			snprintf(err, ENGINE_ERRMAX, "tool manifest %.200s: %s",
			    path, f == NULL ? strerror(errno) :
			    "not a regular file of at most 1 MiB");
			rc = ENGINE_EINVAL;
			goto out;
		}
		if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		len = fread(buf, 1, (size_t)st.st_size, f);
		fclose(f);
		f = NULL;
		if ((rc = tool_manifest_parse(path, buf, len, err, &m)) != 0)
			goto out;
		free(buf);
		buf = NULL;
		if ((rc = add(all, m)) != 0) {
			tool_manifest_free(m);
			goto out;
		}
	}
out:
	if (f != NULL)
		fclose(f);
	free(buf);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

int
tool_manifests_open(struct engine *e, char *err)
{
	struct tool_manifests	*all;
	struct tool_manifest	*m;
	char			 file[160];
	size_t			 i;
	int			 rc = 0;

	if ((all = calloc(1, sizeof(*all))) == NULL)
		return ENGINE_ENOMEM;
	for (i = 0; tool_manifest_files[i].name != NULL; i++) {
		snprintf(file, sizeof(file), "engine/tools/providers/%s",
		    tool_manifest_files[i].name);
		if ((rc = tool_manifest_parse(file,
		    (const char *)tool_manifest_files[i].data,
		    tool_manifest_files[i].len, err, &m)) != 0)
			goto out;
		if ((rc = add(all, m)) != 0) {
			tool_manifest_free(m);
			goto out;
		}
	}
	if (e->conf->tools_providers_dir[0] != '\0')
		rc = load_dir(all, e->conf->tools_providers_dir, err);
out:
	if (rc != 0) {
		e->tool_manifests = all;
		tool_manifests_close(e);
		return rc;
	}
	e->tool_manifests = all;
	return 0;
}

void
tool_manifests_close(struct engine *e)
{
	struct tool_manifests	*all = e->tool_manifests;
	size_t			 i;

	if (all == NULL)
		return;
	for (i = 0; i < all->n; i++)
		tool_manifest_free(all->v[i]);
	free(all->v);
	free(all);
	e->tool_manifests = NULL;
}

size_t
tool_manifest_count(const struct engine *e)
{
	return e->tool_manifests ? e->tool_manifests->n : 0;
}

const struct tool_manifest *
tool_manifest_at(const struct engine *e, size_t i)
{
	return i < tool_manifest_count(e) ? e->tool_manifests->v[i] : NULL;
}

/* 1 when id names m: its name, one of its aliases, or a plugin id
 * ("author/name/name", "author/name", "author/name:1.0@sum") whose second
 * segment is its name or an alias. */
static int
names(const struct tool_manifest *m, const char *id)
{
	const json_t	*aliases = json_object_get(json_object_get(m->doc,
			    "identity"), "aliases"), *a;
	const char	*seg, *s;
	size_t		 i, n;

	if (strcmp(id, m->name) == 0)
		return 1;
	json_array_foreach(aliases, i, a)
		if (strcmp(id, json_string_value(a)) == 0)
			return 1;
	/* a plugin id: author/provider[/provider][:version][@sum] */
	if ((seg = strchr(id, '/')) == NULL)
		return 0;
	seg++;
	n = strcspn(seg, "/:@");
	if (n == strlen(m->name) && strncmp(seg, m->name, n) == 0)
		return 1;
	json_array_foreach(aliases, i, a) {
		s = json_string_value(a);
		if (strchr(s, '/') == NULL && n == strlen(s) &&
		    strncmp(seg, s, n) == 0)
			return 1;
	}
	return 0;
}

const struct tool_manifest *
tool_manifest_find(const struct engine *e, const char *id)
{
	size_t i;

	if (id == NULL || e == NULL)
		return NULL;
	for (i = 0; i < tool_manifest_count(e); i++)
		if (names(e->tool_manifests->v[i], id))
			return e->tool_manifests->v[i];
	return NULL;
}

const json_t *
tool_manifest_tool(const struct tool_manifest *m, const char *tool)
{
	const json_t	*t;
	const char	*n;
	size_t		 i;

	if (tool == NULL)
		return NULL;
	json_array_foreach(json_object_get(m->doc, "tools"), i, t) {
		n = json_string_value(json_object_get(json_object_get(t,
		    "identity"), "name"));
		if (n != NULL && strcmp(n, tool) == 0)
			return t;
	}
	return NULL;
}

const char *
tool_manifest_label(const json_t *v, const char *dflt)
{
	const char *s;

	if (json_is_string(v))
		return json_string_value(v);
	if ((s = json_string_value(json_object_get(v, "en_US"))) != NULL)
		return s;
	return dflt;
}

/* ====== Function schemas ====== */

json_t *
tool_manifest_schema(const json_t *tool, int llm_only)
{
	json_t		*props = json_object(), *req = json_array(), *s, *en;
	const json_t	*p, *o;
	const char	*type, *form, *name, *desc, *js;
	size_t		 i, j;
	int		 bad = props == NULL || req == NULL;

	json_array_foreach(json_object_get(tool, "parameters"), i, p) {
		name = json_string_value(json_object_get(p, "name"));
		type = json_string_value(json_object_get(p, "type"));
		form = json_string_value(json_object_get(p, "form"));
		if (llm_only && form != NULL && strcmp(form, "llm") != 0)
			continue;
		if (strcmp(type, "file") == 0 || strcmp(type, "files") == 0)
			continue;	/* a model cannot pass a file */
		js = strcmp(type, "number") == 0 ? "number" :
		    strcmp(type, "boolean") == 0 ? "boolean" :
		    strcmp(type, "array") == 0 ? "array" :
		    strcmp(type, "object") == 0 ? "object" : "string";
		desc = json_string_value(json_object_get(p, "llm_description"));
		if (desc == NULL)
			desc = tool_manifest_label(json_object_get(p,
			    "human_description"), "");
		s = json_pack("{s:s,s:s}", "type", js, "description", desc);
		if (s != NULL && json_is_array(json_object_get(p, "options")) &&
		    json_array_size(json_object_get(p, "options")) > 0) {
			en = json_array();
			json_array_foreach(json_object_get(p, "options"), j, o)
				if (json_object_get(o, "value") != NULL)
					bad |= json_array_append(en,
					    json_object_get(o, "value"));
			bad |= json_object_set_new(s, "enum", en);
		}
		bad |= s == NULL || json_object_set_new(props, name, s) != 0;
		if (json_is_true(json_object_get(p, "required")))
			bad |= json_array_append_new(req, json_string(name));
	}
	s = bad ? NULL : json_pack("{s:s,s:O,s:O}", "type", "object",
	    "properties", props, "required", req);
	json_decref(props);
	json_decref(req);
	return s;
}
