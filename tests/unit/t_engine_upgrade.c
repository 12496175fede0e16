/*
 * t_engine_upgrade.c — "Upgrade to sandboxed runtime": agent nodes become
 * llm nodes with computer_use, references to LLM text are rewritten, the
 * sandbox feature is set, the original stays byte for byte, and every
 * app of the project's DSL files and of the shared corpus (when it is
 * here) upgrades to one that exports as a bundle and imports again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "tests/unit/dsl_files.h"
#include "tests/unit/tap.h"

static struct engine *eng;

static char *
import(const char *yaml, size_t len)
{
	struct import_opts	 o;
	char			 err[ENGINE_ERRMAX];
	json_t			*imp = NULL;
	char			*id = NULL;

	memset(&o, 0, sizeof(o));
	if (engine_import(eng, yaml, len, &o, err, &imp) == 0 &&
	    json_string_value(json_object_get(imp, "app_id")) != NULL)
		id = strdup(json_string_value(json_object_get(imp, "app_id")));
	json_decref(imp);
	return id;
}

/* json_equal against a JSON text, freeing what it builds. */
static int
equal_text(const json_t *got, const char *want)
{
	json_t	*w = json_loads(want, JSON_DECODE_ANY, NULL);
	int	 eq = w != NULL && json_equal(got, w);

	json_decref(w);
	return eq;
}

static json_t *
node(const json_t *app, const char *id)
{
	json_t	*n;
	size_t	 i;

	json_array_foreach(json_object_get(json_object_get(json_object_get(
	    json_object_get(app, "dsl"), "workflow"), "graph"), "nodes"), i, n)
		if (strcmp(json_string_value(json_object_get(n, "id")), id) ==
		    0)
			return json_object_get(n, "data");
	return NULL;
}

static const char agent_app[] =
    "version: 0.6.0\nkind: app\napp: {name: Helper, mode: advanced-chat}\n"
    "workflow:\n  features: {}\n  graph:\n    nodes:\n"
    "    - id: s\n      data: {type: start, title: S, variables: []}\n"
    "    - id: ag\n      data:\n        type: agent\n        title: Agent\n"
    "        error_strategy: default-value\n"
    "        default_value: [{key: text, type: string, value: sorry}]\n"
    "        agent_parameters:\n"
    "          model: {type: constant, value: {provider: "
    "langgenius/openai/openai, model: gpt-4o-mini, mode: chat, "
    "completion_params: {temperature: 0.2}}}\n"
    "          instruction: {type: constant, value: Be brief.}\n"
    "          query: {type: constant, value: [sys, query]}\n"
    "          maximum_iterations: {type: constant, value: 7}\n"
    "          tools:\n            type: constant\n            value:\n"
    "            - {enabled: true, type: builtin, provider_name: time, "
    "tool_name: current_time, settings: {format: {value: '%H'}}}\n"
    "            - {type: builtin, provider_name: time, "
    "tool_name: weekday}\n"
    "            - {type: builtin, provider_name: webscraper, "
    "tool_name: webscraper}\n"
    "    - id: bad\n      data: {type: agent, title: No model, "
    "agent_parameters: {query: {type: constant, value: x}}}\n"
    "    - id: l\n      data: {type: llm, title: L, model: {provider: "
    "openai, name: gpt-4o, mode: chat}, prompt_template: [{role: user, "
    "text: 'Before: {{#ag.text#}} and {{#ag.reasoning_content#}}'}]}\n"
    "    - id: a\n      data: {type: answer, title: A, answer: "
    "'{{#l.text#}} / {{#l.text.x#}} / {{#s.text#}}'}\n"
    "    - id: e\n      data: {type: end, title: E, outputs: "
    "[{variable: o, value_selector: [l, text]}, {variable: r, "
    "value_selector: [ag, reasoning_content]}, {variable: k, "
    "value_selector: [s, text]}]}\n"
    "    edges:\n    - {id: e1, source: s, target: ag}\n"
    "    - {id: e2, source: ag, target: l}\n"
    "    - {id: e3, source: l, target: a}\n";

static void
test_agent(void)
{
	char		*id = import(agent_app, strlen(agent_app));
	char		 err[ENGINE_ERRMAX], *before = NULL, *after = NULL;
	size_t		 lb, la;
	json_t		*res = NULL, *up = NULL, *d, *o, *pt;
	const char	*nid;

	if (!CHECK(id != NULL))
		return;
	CHECK(engine_export(eng, id, 1, err, &before, &lb) == 0);
	CHECK(engine_app_upgrade(eng, id, err, &res) == 0);
	CHECK_STR(json_string_value(json_object_get(res, "result")),
	    "success");
	CHECK_INT(json_integer_value(json_object_get(res,
	    "converted_agents")), 1);
	CHECK_INT(json_integer_value(json_object_get(res, "skipped_agents")),
	    1);
	nid = json_string_value(json_object_get(res, "new_app_id"));
	CHECK(engine_app_get_full(eng, nid, &up) == 0);
	CHECK_STR(json_string_value(json_object_get(up, "name")),
	    "Helper (Sandboxed)");
	CHECK(json_is_true(json_object_get(up, "sandboxed")));
	CHECK(json_is_true(json_object_get(json_object_get(json_object_get(
	    json_object_get(json_object_get(up, "dsl"), "workflow"),
	    "features"), "sandbox"), "enabled")));
	d = node(up, "ag");
	CHECK_STR(json_string_value(json_object_get(d, "type")), "llm");
	CHECK(json_is_true(json_object_get(d, "computer_use")));
	CHECK_INT(json_integer_value(json_object_get(d, "max_iterations")), 7);
	CHECK_STR(json_string_value(json_object_get(json_object_get(d,
	    "model"), "name")), "gpt-4o-mini");
	CHECK(json_real_value(json_object_get(json_object_get(json_object_get(
	    d, "model"), "completion_params"), "temperature")) == 0.2);
	CHECK_STR(json_string_value(json_object_get(d, "reasoning_format")),
	    "separated");
	CHECK_STR(json_string_value(json_object_get(d, "error_strategy")),
	    "default-value");
	pt = json_object_get(d, "prompt_template");
	CHECK_STR(json_string_value(json_object_get(json_array_get(pt, 0),
	    "role")), "system");
	CHECK(strstr(json_string_value(json_object_get(json_array_get(pt, 0),
	    "text")), "Be brief.\n\n[§[tool].[time].[current_time].[") != NULL);
	/* one group per provider: "[a,b]" for two, the bare token for one */
	CHECK(strstr(json_string_value(json_object_get(json_array_get(pt, 0),
	    "text")), "]§,§[tool].[time].[weekday].[") != NULL);
	CHECK(strstr(json_string_value(json_object_get(json_array_get(pt, 0),
	    "text")), "]§] §[tool].[webscraper].[webscraper].[") != NULL);
	CHECK(json_is_true(json_object_get(json_array_get(pt, 0), "skill")));
	CHECK(json_object_get(json_array_get(pt, 0), "id") == NULL);
	CHECK(json_is_true(json_object_get(json_array_get(pt, 1), "skill")));
	CHECK_INT(json_object_size(json_object_get(json_object_get(
	    json_array_get(pt, 0), "metadata"), "tools")), 3);
	CHECK(json_is_false(json_object_get(d, "structured_output_switch_on")));
	CHECK(equal_text(json_object_get(d, "default_value"),
	    "[{\"key\": \"text\", \"type\": \"string\", \"value\": \"sorry\"},"
	    " {\"key\": \"generation\", \"type\": \"object\", \"value\":"
	    " {\"content\": \"sorry\"}}]"));
	CHECK_STR(json_string_value(json_object_get(json_array_get(
	    json_object_get(res, "skipped_nodes"), 0), "node_id")), "bad");
	CHECK(strstr(json_string_value(json_object_get(json_array_get(
	    json_object_get(res, "skipped_nodes"), 0), "reason")), "model") !=
	    NULL);
	/* the new app's record keeps where it came from and what was
	 * skipped, for the admin page's Overview */
	CHECK_STR(json_string_value(json_object_get(json_object_get(up,
	    "upgraded_from"), "app_id")), id);
	CHECK(json_equal(json_object_get(json_object_get(up, "upgraded_from"),
	    "skipped_nodes"), json_object_get(res, "skipped_nodes")));
	CHECK_STR(json_string_value(json_object_get(json_array_get(pt, 1),
	    "text")), "{{#sys.query#}}");
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(
	    d, "tool_settings"), 0), "tool_name")), "current_time");
	CHECK_STR(json_string_value(json_object_get(node(up, "bad"), "type")),
	    "agent");
	/* references: selectors and templates, only for LLM nodes */
	CHECK_STR(json_string_value(json_object_get(json_array_get(
	    json_object_get(node(up, "l"), "prompt_template"), 0), "text")),
	    "Before: {{#ag.generation.content#}} and "
	    "{{#ag.generation.reasoning_content#}}");
	CHECK_STR(json_string_value(json_object_get(node(up, "a"), "answer")),
	    "{{#l.generation.content#}} / {{#l.generation.content.x#}} / "
	    "{{#s.text#}}");
	o = json_object_get(node(up, "e"), "outputs");
	CHECK(equal_text(json_object_get(json_array_get(o, 0),
	    "value_selector"), "[\"l\", \"generation\", \"content\"]"));
	CHECK(equal_text(json_object_get(json_array_get(o, 1),
	    "value_selector"),
	    "[\"ag\", \"generation\", \"reasoning_content\"]"));
	CHECK(equal_text(json_object_get(json_array_get(o, 2),
	    "value_selector"), "[\"s\", \"text\"]"));
	/* the original is untouched, byte for byte */
	CHECK(engine_export(eng, id, 1, err, &after, &la) == 0);
	CHECK(before != NULL && after != NULL && lb == la &&
	    memcmp(before, after, lb) == 0);
	{
		char *keep = strdup(nid);

		json_decref(res);
		res = NULL;
		CHECK(engine_app_upgrade(eng, keep, err, &res) == 0);
		free(keep);
	}
	CHECK_STR(json_string_value(json_object_get(res, "result")),
	    "already_sandboxed");
	json_decref(res);
	json_decref(up);
	free(before);
	free(after);
	free(id);
}

/*
 * Every app of tests/unit/dsl_files.h (the project's own, then the shared
 * corpus when it is here): upgrade, export as a bundle, import the bundle.
 * Chat modes have no workflow draft; sandboxed apps are upgraded already.
 */
static void
test_corpus(void)
{
	struct dsl_files	 f;
	struct import_opts	 o;
	char			 err[ENGINE_ERRMAX], *text, *zip, *fname, *id;
	const char		*st, *nid;
	size_t			 i, len, zlen;
	json_t			*res, *imp;
	int			 n = 0, good = 0, nodraft = 0, already = 0;

	dsl_files_collect(&f, DSL_FILES_YML);
	for (i = 0; i < f.n; i++) {
		if ((text = dsl_files_slurp(f.paths[i], &len)) == NULL)
			continue;
		id = import(text, len);
		free(text);
		if (id == NULL)
			continue;	/* pending: t_engine_dsl_corpus's */
		n++;
		res = NULL;
		if (engine_app_upgrade(eng, id, err, &res) != 0) {
			CHECK(!"upgrade failed");
			printf("# %s: %s\n", f.paths[i], err);
			free(id);
			continue;
		}
		st = json_string_value(json_object_get(res, "result"));
		if (strcmp(st, "no_draft") == 0 || strcmp(st,
		    "already_sandboxed") == 0) {
			if (st[0] == 'n')
				nodraft++;
			else
				already++;
			json_decref(res);
			free(id);
			continue;
		}
		nid = json_string_value(json_object_get(res, "new_app_id"));
		zip = fname = NULL;
		imp = NULL;
		memset(&o, 0, sizeof(o));
		if (engine_export_bundle(eng, nid, 1, err, &zip, &zlen,
		    &fname) == 0 && engine_import_bundle(eng, zip, zlen, &o,
		    err, &imp) == 0 && (strcmp(json_string_value(
		    json_object_get(imp, "status")), "completed") == 0 ||
		    /* warned only that its tools need credentials or are
		     * not served here (leaked_dependencies) */
		    (strcmp(json_string_value(json_object_get(imp, "status")),
		    "completed-with-warnings") == 0 && json_array_size(
		    json_object_get(imp, "leaked_dependencies")) > 0)))
			good++;
		else
			printf("# %s: %s\n", f.paths[i], err);
		free(zip);
		free(fname);
		json_decref(imp);
		json_decref(res);
		free(id);
	}
	printf("# %d apps (%zu of the project's files, %zu of the shared "
	    "corpus): %d upgraded and round-tripped as bundles, %d without a "
	    "workflow draft, %d sandboxed already\n", n, f.nproject,
	    f.n - f.nproject, good, nodraft, already);
	CHECK(n > 0);
	CHECK(good > 0 && nodraft > 0 && already > 0);
	CHECK_INT(good + nodraft + already, n);
	dsl_files_free(&f);
}

int
main(void)
{
	static struct conf	c;
	char			err[ENGINE_ERRMAX], dir[] = "/tmp/t_upgrade.XXXXXX";
	json_t			*res = NULL, *rec = NULL, *in;

	conf_defaults(&c);
	CHECK(mkdtemp(dir) != NULL);
	snprintf(c.data_dir, sizeof(c.data_dir), "%s", dir);
	c.sync = 0;
	CHECK(engine_open(&c, err, &eng) == 0);
	test_agent();
	/* chat apps have no workflow draft */
	in = json_pack("{s:s,s:s}", "name", "c", "mode", "chat");
	CHECK(engine_app_create(eng, in, err, &rec) == 0);
	CHECK(engine_app_upgrade(eng, json_string_value(json_object_get(rec,
	    "id")), err, &res) == 0);
	CHECK_STR(json_string_value(json_object_get(res, "result")),
	    "no_draft");
	json_decref(res);
	json_decref(rec);
	json_decref(in);
	CHECK(engine_app_upgrade(eng, "00000000-0000-7000-8000-000000000000",
	    err, &res) == ENGINE_ENOTFOUND);
	test_corpus();
	engine_close(eng);
	return tap_done();
}
