/*
 * t_engine_dsl_check.c — dsl_check (envelope, versions, legacy forms,
 * graph problems, what publishing refuses, variables) and dsl_export (secret stripping, export header).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "tests/unit/tap.h"

static char errbuf[ENGINE_ERRMAX];

static json_t *
parse(const char *text)
{
	json_t *doc = NULL;

	if (dsl_parse(text, strlen(text), NULL, errbuf, &doc) != 0) {
		printf("# parse failed: %s\n", errbuf);
		return NULL;
	}
	return doc;
}

/* Parses and checks text; *out the normalised doc or NULL. */
static int
check_text(const char *text, unsigned flags, struct dsl_report *rep,
    json_t **out)
{
	json_t	*doc = parse(text);
	int	 rc;

	errbuf[0] = '\0';
	rc = dsl_check(doc, flags, errbuf, rep, out);
	json_decref(doc);
	return rc;
}

/* Whether rep lists a problem for node_id and field. */
static int
has_problem(const struct dsl_report *rep, const char *node_id,
    const char *field)
{
	json_t	*p;
	size_t	 i;

	json_array_foreach(rep->problems, i, p)
		if (strcmp(json_string_value(json_object_get(p, "node_id")),
		    node_id) == 0 && strcmp(json_string_value(
		    json_object_get(p, "field")), field) == 0)
			return 1;
	return 0;
}

static void
dump_problems(const struct dsl_report *rep)
{
	json_t	*p;
	size_t	 i;

	json_array_foreach(rep->problems, i, p)
		printf("#   problem: %s\n",
		    json_string_value(json_object_get(p, "message")));
}

/* The value at a path of object keys and array indexes ("a.0.b"). */
static json_t *
at(json_t *v, const char *path)
{
	char	 buf[256], *p, *dot;
	char	*end;
	long	 idx;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf; v != NULL && p != NULL; p = dot) {
		if ((dot = strchr(p, '.')) != NULL)
			*dot++ = '\0';
		idx = strtol(p, &end, 10);
		if (json_is_array(v) && *end == '\0' && end != p)
			v = json_array_get(v, (size_t)idx);
		else
			v = json_object_get(v, p);
	}
	return v;
}

static const char *
str(json_t *v, const char *path)
{
	json_t *s = at(v, path);

	return json_is_string(s) ? json_string_value(s) : "(none)";
}

/* ====== Versions and envelope ====== */

#define APP_WF "app: {name: t, mode: workflow}\nworkflow:\n  graph:\n" \
	"    nodes:\n    - id: s\n      data: {type: start}\n    edges: []\n"

static const struct {
	const char	*version;	/* the version line, or "" */
	int		 rc;
	enum dsl_status	 status;
	const char	*imported;
} versions[] = {
	{ "", 0, DSL_COMPLETED_WITH_WARNINGS, "0.1.0" },
	{ "version: ''", 0, DSL_COMPLETED_WITH_WARNINGS, "0.1.0" },
	{ "version: null", 0, DSL_COMPLETED_WITH_WARNINGS, "0.1.0" },
	{ "version: 0", 0, DSL_COMPLETED_WITH_WARNINGS, "0.1.0" },
	{ "version: 0.1.5", 0, DSL_COMPLETED_WITH_WARNINGS, "0.1.5" },
	{ "version: '0.5.0'", 0, DSL_COMPLETED_WITH_WARNINGS, "0.5.0" },
	{ "version: v0.3.1", 0, DSL_COMPLETED_WITH_WARNINGS, "v0.3.1" },
	{ "version: 0.6.0", 0, DSL_COMPLETED, "0.6.0" },
	{ "version: '0.6'", 0, DSL_COMPLETED, "0.6" },
	{ "version: 0.6.0rc1", 0, DSL_COMPLETED, "0.6.0rc1" },
	{ "version: 0.6.0.dev2", 0, DSL_COMPLETED, "0.6.0.dev2" },
	{ "version: 0.6.1", 0, DSL_PENDING, "0.6.1" },
	{ "version: 0.6.0.post1", 0, DSL_PENDING, "0.6.0.post1" },
	{ "version: 0.7.0", 0, DSL_PENDING, "0.7.0" },
	{ "version: 1.0.0", 0, DSL_PENDING, "1.0.0" },
	{ "version: 1!0.1.0", 0, DSL_PENDING, "1!0.1.0" },
	{ "version: abc", ENGINE_EINVAL, DSL_FAILED, "abc" },
	{ "version: 0.1.0-beta-", ENGINE_EINVAL, DSL_FAILED, "0.1.0-beta-" },
	{ "version: 0.1", ENGINE_EINVAL, DSL_FAILED, "" },
	{ "version: 1", ENGINE_EINVAL, DSL_FAILED, "" },
	{ "version: true", ENGINE_EINVAL, DSL_FAILED, "" },
	{ "version: [0, 1]", ENGINE_EINVAL, DSL_FAILED, "" },
};

static void
test_versions(void)
{
	struct dsl_report	 rep;
	json_t			*out;
	char			 text[512];
	size_t			 i;
	int			 rc;

	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		snprintf(text, sizeof(text), "%s\n" APP_WF,
		    versions[i].version);
		rc = check_text(text, 0, &rep, &out);
		if (!tap_check(rc == versions[i].rc &&
		    rep.status == versions[i].status &&
		    strcmp(rep.imported_version, versions[i].imported) == 0,
		    __FILE__, __LINE__, versions[i].version))
			printf("#   rc %d status %s imported '%s' (%s)\n", rc,
			    dsl_status_name(rep.status), rep.imported_version,
			    errbuf);
		if (rc == 0)
			CHECK_STR(str(out, "version"), versions[i].version[0] &&
			    strcmp(versions[i].imported, "0.1.0") != 0 ?
			    versions[i].imported : "0.1.0");
		else
			CHECK(out == NULL);
		dsl_report_release(&rep);
		json_decref(out);
	}
	CHECK_STR(dsl_status_name(DSL_COMPLETED), "completed");
	CHECK_STR(dsl_status_name(DSL_COMPLETED_WITH_WARNINGS),
	    "completed-with-warnings");
	CHECK_STR(dsl_status_name(DSL_PENDING), "pending");
	CHECK_STR(dsl_status_name(DSL_FAILED), "failed");

	/* kind is forced to app; current_version is 0.6.0. */
	CHECK_INT(check_text("kind: other\n" APP_WF, 0, &rep, &out), 0);
	CHECK_STR(str(out, "kind"), "app");
	CHECK_STR(rep.current_version, "0.6.0");
	dsl_report_release(&rep);
	json_decref(out);
}

static void
test_envelope(void)
{
	struct dsl_report	 rep;
	json_t			*out, *doc;
	int			 rc;

	/* Not a mapping. */
	doc = parse("- a\n- b\n");
	CHECK_INT(dsl_check(doc, 0, errbuf, &rep, &out), ENGINE_EINVAL);
	CHECK(strstr(errbuf, "mapping") != NULL);
	CHECK(rep.status == DSL_FAILED && out == NULL);
	dsl_report_release(&rep);
	json_decref(doc);
	CHECK_INT(dsl_check(NULL, 0, errbuf, &rep, &out), ENGINE_EINVAL);
	dsl_report_release(&rep);

	/* app is required even for a pending document. */
	CHECK_INT(check_text("version: 0.1.0\n", 0, &rep, &out), ENGINE_EINVAL);
	CHECK(strstr(errbuf, "app") != NULL);
	dsl_report_release(&rep);
	CHECK_INT(check_text("version: 9.0.0\napp: {}\n", 0, &rep, &out),
	    ENGINE_EINVAL);
	dsl_report_release(&rep);

	/* Pending stops after the envelope; confirmed, it is fully checked. */
	rc = check_text("version: 0.7.0\napp: {mode: nonsense}\n", 0, &rep,
	    &out);
	CHECK_INT(rc, 0);
	CHECK(rep.status == DSL_PENDING && out != NULL);
	dsl_report_release(&rep);
	json_decref(out);
	CHECK_INT(check_text("version: 0.7.0\napp: {mode: nonsense}\n",
	    DSL_CHECK_CONFIRM, &rep, &out), ENGINE_EINVAL);
	CHECK(strstr(errbuf, "mode") != NULL);
	dsl_report_release(&rep);
	CHECK_INT(check_text("version: 0.7.0\n" APP_WF, DSL_CHECK_CONFIRM,
	    &rep, &out), 0);
	CHECK(rep.status == DSL_COMPLETED);
	dsl_report_release(&rep);
	json_decref(out);

	/* Modes and the part each needs. */
	CHECK_INT(check_text("app: {name: x}\nworkflow: {graph: {}}\n", 0,
	    &rep, &out), ENGINE_EINVAL);
	CHECK(strstr(errbuf, "app.mode") != NULL);
	dsl_report_release(&rep);
	CHECK_INT(check_text("app: {mode: chatbot}\n", 0, &rep, &out),
	    ENGINE_EINVAL);
	CHECK(strstr(errbuf, "invalid app mode") != NULL);
	dsl_report_release(&rep);
	CHECK_INT(check_text("app: {mode: advanced-chat}\nmodel_config: {a: 1}"
	    "\n", 0, &rep, &out), ENGINE_EINVAL);
	CHECK(strstr(errbuf, "missing workflow") != NULL);
	dsl_report_release(&rep);
	CHECK_INT(check_text("app: {mode: chat}\nworkflow: {graph: {}}\n", 0,
	    &rep, &out), ENGINE_EINVAL);
	CHECK(strstr(errbuf, "model_config") != NULL);
	dsl_report_release(&rep);
	CHECK_INT(check_text("app: {mode: agent-chat}\nmodel_config:\n"
	    "  agent_mode: {strategy: react}\n", 0, &rep, &out), 0);
	CHECK(rep.status == DSL_COMPLETED_WITH_WARNINGS);
	CHECK(json_array_size(rep.problems) == 0);
	dsl_report_release(&rep);
	json_decref(out);
	CHECK_INT(check_text("app: {mode: workflow}\nworkflow: {graph: {nodes: "
	    "{a: 1}}}\n", 0, &rep, &out), ENGINE_EINVAL);
	CHECK(strstr(errbuf, "nodes") != NULL);
	dsl_report_release(&rep);
	CHECK_INT(check_text("app: {mode: workflow}\nworkflow: {graph: {}, "
	    "environment_variables: x}\n", 0, &rep, &out), ENGINE_EINVAL);
	CHECK(strstr(errbuf, "environment_variables") != NULL);
	dsl_report_release(&rep);
	CHECK_INT(check_text("app: {mode: workflow}\nworkflow: {graph: 3}\n", 0,
	    &rep, &out), ENGINE_EINVAL);
	dsl_report_release(&rep);
}

/* ====== Legacy forms ====== */

static const char legacy[] =
    "app: {mode: advanced-chat, name: legacy}\n"
    "workflow:\n"
    "  graph:\n"
    "    edges:\n"
    "    - {id: e1, source: 1711067409646, target: ifelse}\n"
    "    - {id: e2, source: ifelse, sourceHandle: 'true', target: http,\n"
    "       targetHandle: '1711540280162', data: {sourceType: if-else}}\n"
    "    - {id: e3, source: ifelse, sourceHandle: 'false', target: agg}\n"
    "    - {id: e4, source: http, sourceHandle: source, target: qc}\n"
    "    - {id: e5, source: qc, sourceHandle: 1, target: pe}\n"
    "    - {id: e6, source: pe, target: it}\n"
    "    - {id: e7, source: it, target: end}\n"
    "    - {id: e8, source: first, target: second}\n"
    "    nodes:\n"
    "    - id: 1711067409646\n"
    "      data: {type: start, title: Start, variables: []}\n"
    "    - id: ifelse\n"
    "      data:\n"
    "        type: if-else\n"
    "        logical_operator: or\n"
    "        conditions:\n"
    "        - {variable_selector: [1711067409646, q], "
    "comparison_operator: contains, value: x}\n"
    "    - id: http\n"
    "      data: {type: http-request, method: post, url: 'http://x',\n"
    "        body: {type: json, data: '{\"a\": 1}'}}\n"
    "    - id: agg\n"
    "      data: {type: variable-assigner, output_type: string,\n"
    "        variables: [[1711067409646, q]]}\n"
    "    - id: qc\n"
    "      data: {type: question-classifier, instructions: be brief,\n"
    "        topics: [{id: 1, name: a}, {id: '2', name: b}]}\n"
    "    - id: pe\n"
    "      data: {type: parameter-extractor, parameters: [{name: p, type: "
    "select}, {name: q, type: bool}, {name: r, type: number}]}\n"
    "    - id: asg\n"
    "      data: {type: assigner, write_mode: over-write,\n"
    "        assigned_variable_selector: [conversation, c],\n"
    "        input_variable_selector: [1711067409646, q]}\n"
    "    - id: it\n"
    "      data: {type: iteration, start_node_id: first, startNodeType: llm,"
    "\n        iterator_selector: [1711067409646, list]}\n"
    "    - id: first\n"
    "      parentId: it\n"
    "      data: {type: llm, isInIteration: true, iteration_id: it,\n"
    "        variables: [], prompt_template: [{role: user, text: hi}]}\n"
    "    - id: second\n"
    "      parentId: it\n"
    "      data: {type: knowledge-retrieval, retrieval_mode: single,\n"
    "        iteration_id: it, unknown_field: {keep: me}}\n"
    "    - id: end\n"
    "      data: {type: answer, answer: done}\n"
    "    - id: note\n"
    "      type: custom-note\n"
    "      data: {type: '', text: a canvas note}\n"
    "    - id: future\n"
    "      data: {type: some-future-node, whatever: [1, 2]}\n";

static void
test_legacy(void)
{
	struct dsl_report	 rep, rep2;
	json_t			*out = NULL, *again = NULL, *nodes, *edges;
	int			 rc;

	rc = check_text(legacy, 0, &rep, &out);
	CHECK_INT(rc, 0);
	if (rc != 0) {
		printf("#   %s\n", errbuf);
		dsl_report_release(&rep);
		return;
	}
	CHECK(rep.status == DSL_COMPLETED_WITH_WARNINGS);
	CHECK_STR(str(out, "version"), "0.1.0");
	CHECK_STR(str(out, "kind"), "app");
	if (!CHECK(json_array_size(rep.problems) == 0))
		dump_problems(&rep);
	nodes = at(out, "workflow.graph.nodes");
	edges = at(out, "workflow.graph.edges");

	/* Numeric ids and selector heads read as strings. */
	CHECK_STR(str(nodes, "0.id"), "1711067409646");
	CHECK_STR(str(edges, "0.source"), "1711067409646");
	CHECK_STR(str(nodes, "1.data.conditions.0.variable_selector.0"),
	    "1711067409646");
	CHECK_STR(str(nodes, "3.data.variables.0.0"), "1711067409646");
	CHECK_STR(str(edges, "4.sourceHandle"), "1");
	CHECK_STR(str(nodes, "4.data.classes.0.id"), "1");

	/* if-else: cases made from the legacy conditions, which stay. */
	CHECK_STR(str(nodes, "1.data.cases.0.case_id"), "true");
	CHECK_STR(str(nodes, "1.data.cases.0.logical_operator"), "or");
	CHECK_STR(str(nodes, "1.data.cases.0.conditions.0.value"), "x");
	CHECK_STR(str(nodes, "1.data.conditions.0.value"), "x");

	/* http-request body.data string -> one text item. */
	CHECK_STR(str(nodes, "2.data.body.data.0.type"), "text");
	CHECK_STR(str(nodes, "2.data.body.data.0.key"), "");
	CHECK_STR(str(nodes, "2.data.body.data.0.value"), "{\"a\": 1}");

	/*
	 * variable-assigner, the aggregator's old name, stays as written (as
	 * in Dify): an export gives back the type it was given.
	 */
	CHECK_STR(str(nodes, "3.data.type"), "variable-assigner");

	/* question-classifier instructions/topics. */
	CHECK_STR(str(nodes, "4.data.instruction"), "be brief");
	CHECK_STR(str(nodes, "4.data.instructions"), "be brief");
	CHECK_STR(str(nodes, "4.data.classes.1.name"), "b");

	/* parameter-extractor select/bool. */
	CHECK_STR(str(nodes, "5.data.parameters.0.type"), "string");
	CHECK_STR(str(nodes, "5.data.parameters.1.type"), "boolean");
	CHECK_STR(str(nodes, "5.data.parameters.2.type"), "number");

	/* Kept as they are: assigner v1, old iteration, llm variables,
	 * single retrieval, unknown fields and types, notes, handles. */
	CHECK_STR(str(nodes, "6.data.write_mode"), "over-write");
	CHECK(at(nodes, "6.data.version") == NULL);
	CHECK_STR(str(nodes, "7.data.start_node_id"), "first");
	CHECK_STR(str(nodes, "7.data.startNodeType"), "llm");
	CHECK(json_is_array(at(nodes, "8.data.variables")));
	CHECK_STR(str(nodes, "9.data.retrieval_mode"), "single");
	CHECK_STR(str(nodes, "9.data.unknown_field.keep"), "me");
	CHECK_STR(str(nodes, "11.type"), "custom-note");
	CHECK_STR(str(nodes, "11.data.type"), "");
	CHECK_STR(str(nodes, "12.data.type"), "some-future-node");
	CHECK_STR(str(edges, "1.targetHandle"), "1711540280162");
	CHECK(at(edges, "0.data") == NULL);
	CHECK_STR(str(edges, "0.sourceHandle"), "source");

	/* Normalising twice changes nothing. */
	CHECK_INT(dsl_check(out, 0, errbuf, &rep2, &again), 0);
	CHECK(json_equal(out, again));
	dsl_report_release(&rep2);
	json_decref(again);
	dsl_report_release(&rep);
	json_decref(out);
}

/* ====== Graph problems ====== */

static const struct {
	const char	*nodes;		/* graph.nodes, flow style */
	const char	*edges;		/* graph.edges */
	const char	*mode;
	const char	*node_id;	/* the problem expected */
	const char	*field;
} graphs[] = {
	{ "[{id: a, data: {type: end}}]", "[]", "workflow", "",
	    "graph.nodes" },
	{ "[]", "[]", "advanced-chat", "", "graph.nodes" },
	{ "[{id: s, data: {type: start}}, {id: s2, data: {type: start}}]",
	    "[]", "workflow", "s2", "data.type" },
	{ "[{id: s, data: {type: start}}, {id: w, data: {type: "
	    "trigger-webhook}}]", "[]", "advanced-chat", "w", "data.type" },
	{ "[{id: s, data: {type: start}}, {id: s, data: {type: end}}]", "[]",
	    "workflow", "s", "id" },
	{ "[{id: s, data: {type: start}}, {data: {type: end}}]", "[]",
	    "workflow", "", "id" },
	{ "[{id: s, data: {type: start}}, {id: x}]", "[]", "workflow", "x",
	    "data" },
	{ "[{id: s, data: {type: start}}, {id: x, data: {title: t}}]", "[]",
	    "workflow", "x", "data.type" },
	{ "[{id: s, data: {type: start}}]", "[{id: e1, source: s, target: "
	    "nowhere}]", "workflow", "nowhere", "target" },
	{ "[{id: s, data: {type: start}}]", "[{id: e1, source: ghost, "
	    "target: s}]", "workflow", "ghost", "source" },
	{ "[{id: s, data: {type: start}}]", "[{id: e1, target: s}]",
	    "workflow", "", "source" },
	{ "[{id: s, data: {type: start}}, {id: e, data: {type: end}}]",
	    "[{id: e1, source: s, sourceHandle: 'true', target: e}]",
	    "workflow", "s", "sourceHandle" },
	{ "[{id: s, data: {type: start}}, {id: i, data: {type: if-else, "
	    "cases: [{case_id: 'true'}, {case_id: c2}]}}, {id: e, data: {type: "
	    "end}}]", "[{id: e1, source: i, sourceHandle: maybe, target: e}]",
	    "workflow", "i", "sourceHandle" },
	{ "[{id: s, data: {type: start}}, {id: q, data: {type: "
	    "question-classifier, classes: [{id: '1'}]}}, {id: e, data: {type: "
	    "end}}]", "[{id: e1, source: q, sourceHandle: '2', target: e}]",
	    "workflow", "q", "sourceHandle" },
	{ "[{id: s, data: {type: start}}, {id: c, data: {type: code}}, {id: e, "
	    "data: {type: end}}]", "[{id: e1, source: c, sourceHandle: "
	    "fail-branch, target: e}]", "workflow", "c", "sourceHandle" },
	{ "[{id: s, data: {type: start}}, {id: it, data: {type: iteration}}]",
	    "[]", "workflow", "it", "data.start_node_id" },
	{ "[{id: s, data: {type: start}}, {id: lp, data: {type: loop, "
	    "start_node_id: lpstart}}]", "[]", "workflow", "lp",
	    "data.start_node_id" },
	{ "[{id: s, data: {type: start}}, {id: it, data: {type: iteration, "
	    "start_node_id: s}}]", "[]", "workflow", "it",
	    "data.start_node_id" },
	{ "[{id: s, data: {type: start}}, {id: c, parentId: gone, data: "
	    "{type: code}}]", "[]", "workflow", "c", "parentId" },
	{ "[{id: s, data: {type: start}}, {id: c, parentId: s, data: "
	    "{type: code}}]", "[]", "workflow", "c", "parentId" },
	{ "[{id: s, data: {type: start}}, {id: c, data: {type: code, "
	    "iteration_id: s}}]", "[]", "workflow", "c", "data.iteration_id" },
	{ "[{id: s, data: {type: start}}, {id: c, data: {type: code, "
	    "loop_id: nope}}]", "[]", "workflow", "c", "data.loop_id" },
	/* graphs that cannot run: a cycle, a self-loop, one in a container */
	{ "[{id: s, data: {type: start}}, {id: a, data: {type: code}}, "
	    "{id: b, data: {type: code}}]", "[{id: e1, source: s, target: a}, "
	    "{id: e2, source: a, target: b}, {id: e3, source: b, target: a}]",
	    "workflow", "a", "graph.edges" },
	{ "[{id: s, data: {type: start}}, {id: a, data: {type: code}}]",
	    "[{id: e1, source: s, target: a}, {id: e2, source: a, target: a}]",
	    "advanced-chat", "a", "target" },
	{ "[{id: s, data: {type: start}}, {id: it, data: {type: iteration, "
	    "start_node_id: st}}, {id: st, parentId: it, data: {type: "
	    "iteration-start}}, {id: c, parentId: it, data: {type: code}}, "
	    "{id: d, parentId: it, data: {type: code}}]", "[{id: e1, source: "
	    "s, target: it}, {id: e2, source: st, target: c}, {id: e3, "
	    "source: c, target: d}, {id: e4, source: d, target: st}]",
	    "workflow", "st", "graph.edges" },
};

static void
test_graph(void)
{
	struct dsl_report	 rep;
	json_t			*out;
	char			 text[1024];
	size_t			 i;
	int			 rc, ok;

	for (i = 0; i < sizeof(graphs) / sizeof(graphs[0]); i++) {
		snprintf(text, sizeof(text), "app: {mode: %s}\nworkflow:\n"
		    "  graph:\n    nodes: %s\n    edges: %s\n", graphs[i].mode,
		    graphs[i].nodes, graphs[i].edges);
		rc = check_text(text, 0, &rep, &out);
		ok = rc == 0 && has_problem(&rep, graphs[i].node_id,
		    graphs[i].field) && rep.status ==
		    DSL_COMPLETED_WITH_WARNINGS;
		if (!tap_check(ok, __FILE__, __LINE__, graphs[i].nodes)) {
			printf("#   want %s '%s' (rc %d %s)\n", graphs[i].field,
			    graphs[i].node_id, rc, errbuf);
			dump_problems(&rep);
		}
		dsl_report_release(&rep);
		json_decref(out);
	}

	/* A sound graph: branches, fail-branch, a loop with its start. */
	rc = check_text("app: {mode: workflow}\nworkflow:\n  graph:\n"
	    "    nodes:\n"
	    "    - {id: s, data: {type: start}}\n"
	    "    - {id: i, data: {type: if-else, cases: [{case_id: 'true'}, "
	    "{case_id: c2}]}}\n"
	    "    - {id: c, data: {type: code, error_strategy: fail-branch}}\n"
	    "    - {id: lp, data: {type: loop, start_node_id: lpstart}}\n"
	    "    - {id: lpstart, type: custom-loop-start, parentId: lp, "
	    "data: {type: loop-start, isInLoop: true}}\n"
	    "    - {id: e, data: {type: end}}\n"
	    "    edges:\n"
	    "    - {id: a, source: s, sourceHandle: source, target: i}\n"
	    "    - {id: b, source: i, sourceHandle: 'true', target: c}\n"
	    "    - {id: d, source: i, sourceHandle: c2, target: lp}\n"
	    "    - {id: f, source: i, sourceHandle: 'false', target: e}\n"
	    "    - {id: g, source: c, sourceHandle: fail-branch, target: e}\n"
	    "    - {id: h, source: c, sourceHandle: source, target: e}\n"
	    "    - {id: j, source: lp, target: e}\n", 0, &rep, &out);
	CHECK_INT(rc, 0);
	if (!CHECK(json_array_size(rep.problems) == 0))
		dump_problems(&rep);
	dsl_report_release(&rep);
	json_decref(out);

	/* Edges inside containers, to their start nodes, are sound. */
	rc = check_text("app: {mode: workflow}\nworkflow:\n  graph:\n"
	    "    nodes:\n"
	    "    - {id: s, data: {type: start}}\n"
	    "    - {id: it, data: {type: iteration, start_node_id: its}}\n"
	    "    - {id: its, parentId: it, data: {type: iteration-start}}\n"
	    "    - {id: c, parentId: it, data: {type: code}}\n"
	    "    - {id: lp, data: {type: loop, start_node_id: lps}}\n"
	    "    - {id: lps, parentId: lp, data: {type: loop-start}}\n"
	    "    - {id: d, parentId: lp, data: {type: code}}\n"
	    "    - {id: le, parentId: lp, data: {type: loop-end}}\n"
	    "    - {id: e, data: {type: end}}\n"
	    "    edges:\n"
	    "    - {id: a, source: s, target: it}\n"
	    "    - {id: b, source: its, target: c}\n"
	    "    - {id: f, source: it, target: lp}\n"
	    "    - {id: g, source: lps, target: d}\n"
	    "    - {id: h, source: d, target: le}\n"
	    "    - {id: j, source: lp, target: e}\n", 0, &rep, &out);
	CHECK_INT(rc, 0);
	if (!CHECK(json_array_size(rep.problems) == 0))
		dump_problems(&rep);
	dsl_report_release(&rep);
	json_decref(out);

	/* A cycle's message walks it, and names the edge that closes it. */
	rc = check_text("app: {mode: workflow}\nworkflow:\n  graph:\n"
	    "    nodes: [{id: s, data: {type: start}}, {id: a, data: {type: "
	    "code}}, {id: b, data: {type: code}}, {id: c, data: {type: "
	    "code}}]\n"
	    "    edges: [{id: x1, source: s, target: a}, {id: x2, source: a, "
	    "target: b}, {id: x3, source: b, target: c}, {id: back, source: "
	    "c, target: a}]\n", 0, &rep, &out);
	CHECK_INT(json_array_size(rep.problems), 1);
	CHECK_STR(str(rep.problems, "0.edge_id"), "back");
	CHECK(strstr(str(rep.problems, "0.message"),
	    "'a' -> 'b' -> 'c' -> 'a'") != NULL);
	dsl_report_release(&rep);
	json_decref(out);

	/* Problems carry the edge id too. */
	rc = check_text("app: {mode: workflow}\nworkflow:\n  graph:\n"
	    "    nodes: [{id: s, data: {type: start}}]\n"
	    "    edges: [{id: e9, source: s, target: t}]\n", 0, &rep, &out);
	CHECK_STR(str(rep.problems, "0.edge_id"), "e9");
	CHECK(strstr(str(rep.problems, "0.message"), "'t'") != NULL);
	dsl_report_release(&rep);
	json_decref(out);

	/* A workflow started by triggers needs no start node. */
	rc = check_text("app: {mode: workflow}\nworkflow:\n  graph:\n"
	    "    nodes: [{id: w, data: {type: trigger-webhook}}]\n", 0, &rep,
	    &out);
	CHECK(rc == 0 && json_array_size(rep.problems) == 0);
	dsl_report_release(&rep);
	json_decref(out);
}

/* ====== What publishing refuses: DSL_CHECK_RUNNABLE, variables ====== */

#define ST "{id: s, data: {type: start, variables: []}}"
#define TT_OK(id) "{id: " id ", data: {type: template-transform, " \
	"template: x, variables: []}}"
#define EN "{id: e, data: {type: end, outputs: []}}"

static const struct {
	const char	*what;
	const char	*nodes;
	const char	*edges;
	const char	*node_id;	/* the problem expected */
	const char	*field;
} runnable[] = {
	{ "unknown node type", "[" ST ", {id: x, data: {type: no-such-node}}]",
	    "[{id: a, source: s, target: x}]", "x", "data.type" },
	{ "a trigger flowcgi does not run", "[{id: w, data: {type: "
	    "trigger-schedule}}]", "[]", "w", "data.type" },
	{ "cycle", "[" ST ", " TT_OK("a") ", " TT_OK("b") "]", "[{id: x1, "
	    "source: s, target: a}, {id: x2, source: a, target: b}, {id: "
	    "back, source: b, target: a}]", "a", "graph.edges" },
	{ "nodes [1, \"a\", null, {}]", "[1, \"a\", null, {}]", "[]", "",
	    "graph.nodes[0]" },
	{ "nodes [1, \"a\", null, {}]: null", "[1, \"a\", null, {}]", "[]",
	    "", "graph.nodes[2]" },
	{ "nodes [1, \"a\", null, {}]: {} has no id", "[1, \"a\", null, {}]",
	    "[]", "", "id" },
	{ "nodes [1, \"a\", null, {}]: no start", "[1, \"a\", null, {}]",
	    "[]", "", "graph.nodes" },
	{ "no start node", "[" TT_OK("t") ", " EN "]", "[{id: x, source: t, "
	    "target: e}]", "", "graph.nodes" },
	{ "two start nodes", "[" ST ", {id: s2, data: {type: start, "
	    "variables: []}}]", "[]", "s2", "data.type" },
	{ "dangling edge", "[" ST ", " TT_OK("t") "]", "[{id: x, source: s, "
	    "target: t}, {id: d, source: t, target: nowhere}]", "nowhere",
	    "target" },
	{ "start beside a trigger", "[" ST ", {id: w, data: {type: "
	    "trigger-webhook}}]", "[]", "w", "data.type" },
	{ "template-transform without template", "[" ST ", {id: t, data: "
	    "{type: template-transform}}]", "[{id: x, source: s, target: t}]",
	    "t", "data.template" },
	{ "llm without a model", "[" ST ", {id: l, data: {type: llm}}]",
	    "[{id: x, source: s, target: l}]", "l", "data.model.provider" },
	{ "tool without a provider", "[" ST ", {id: k, data: {type: tool, "
	    "tool_name: now}}]", "[{id: x, source: s, target: k}]", "k",
	    "data.provider_id" },
	{ "code without its language", "[" ST ", {id: c, data: {type: code, "
	    "code: 'def main(): pass'}}]", "[{id: x, source: s, target: c}]",
	    "c", "data.code_language" },
	{ "http-request with an empty url", "[" ST ", {id: h, data: {type: "
	    "http-request, url: ''}}]", "[{id: x, source: s, target: h}]", "h",
	    "data.url" },
};

/* Variables that can never be valid: the check fails, naming them. */
static const struct {
	const char	*what;
	const char	*vars;		/* workflow keys, flow style */
	const char	*field;		/* the problem's field */
	const char	*want;		/* in err */
} badvars[] = {
	{ "value_type blob", "environment_variables: [{name: b, value_type: "
	    "blob, value: x}]", "environment_variables[0].value_type",
	    "'blob'" },
	{ "name ../../x", "environment_variables: [{name: ../../x, "
	    "value_type: string, value: x}]", "environment_variables[0].name",
	    "letter or _" },
	{ "no name", "environment_variables: [{value_type: string, value: "
	    "x}]", "environment_variables[0].name", "missing name" },
	{ "a name starting with a digit", "environment_variables: [{name: "
	    "1x, value_type: string, value: x}]",
	    "environment_variables[0].name", "letter or _" },
	{ "an environment variable of type object", "environment_variables: "
	    "[{name: o, value_type: object, value: {}}]",
	    "environment_variables[0].value_type", "'object'" },
	{ "a number that is text", "environment_variables: [{name: n, "
	    "value_type: number, value: '5'}]", "environment_variables[0].value",
	    "not a valid number" },
	{ "no value", "environment_variables: [{name: n, value_type: "
	    "string}]", "environment_variables[0].value", "missing value" },
	{ "the second one", "environment_variables: [{name: a, value_type: "
	    "string, value: x}, {name: 'a b', value_type: string, value: x}]",
	    "environment_variables[1].name", "(a b)" },
	{ "conversation: value_type blob", "conversation_variables: [{name: "
	    "c, value_type: blob, value: x}]",
	    "conversation_variables[0].value_type", "'blob'" },
	{ "conversation: secret", "conversation_variables: [{name: c, "
	    "value_type: secret, value: x}]",
	    "conversation_variables[0].value_type", "'secret'" },
	{ "conversation: name ../../x", "conversation_variables: [{name: "
	    "../../x, value_type: string, value: x}]",
	    "conversation_variables[0].name", "letter or _" },
	{ "conversation: array[string] holding a number",
	    "conversation_variables: [{name: c, value_type: 'array[string]', "
	    "value: [a, 1]}]", "conversation_variables[0].value",
	    "array[string]" },
	{ "too large", "environment_variables: [{name: big, value_type: "
	    "string, value: 'more than twenty bytes, as JSON'}]",
	    "environment_variables[0].value", "workflow.max_variable_size" },
};

static void
test_runnable(void)
{
	struct dsl_check_limits	 lim = { 20 };
	struct dsl_report	 rep;
	json_t			*out, *doc;
	char			 text[2048];
	size_t			 i;
	int			 rc, ok;

	for (i = 0; i < sizeof(runnable) / sizeof(runnable[0]); i++) {
		snprintf(text, sizeof(text), "app: {mode: workflow}\n"
		    "workflow:\n  graph:\n    nodes: %s\n    edges: %s\n",
		    runnable[i].nodes, runnable[i].edges);
		rc = check_text(text, DSL_CHECK_RUNNABLE, &rep, &out);
		ok = rc == 0 && has_problem(&rep, runnable[i].node_id,
		    runnable[i].field);
		if (!tap_check(ok, __FILE__, __LINE__, runnable[i].what)) {
			printf("#   want %s '%s' (rc %d %s)\n",
			    runnable[i].field, runnable[i].node_id, rc, errbuf);
			dump_problems(&rep);
		}
		dsl_report_release(&rep);
		json_decref(out);
	}

	/* Dify's rule is not only the runnable check's: always listed. */
	rc = check_text("app: {mode: workflow}\nworkflow:\n  graph:\n"
	    "    nodes: [" ST ", {id: w, data: {type: trigger-webhook}}]\n",
	    0, &rep, &out);
	CHECK_INT(rc, 0);
	CHECK_INT(json_array_size(rep.problems), 1);
	CHECK(strstr(str(rep.problems, "0.message"), "cannot be in the same "
	    "workflow") != NULL);
	dsl_report_release(&rep);
	json_decref(out);

	/* Without the flag an unknown type is kept, unlisted (imports of
	 * documents flowcgi cannot run yet are kept whole). */
	rc = check_text("app: {mode: workflow}\nworkflow:\n  graph:\n"
	    "    nodes: [" ST ", {id: x, data: {type: no-such-node}}]\n"
	    "    edges: [{id: a, source: s, target: x}]\n", 0, &rep, &out);
	CHECK(rc == 0 && json_array_size(rep.problems) == 0);
	dsl_report_release(&rep);
	json_decref(out);

	for (i = 0; i < sizeof(badvars) / sizeof(badvars[0]); i++) {
		snprintf(text, sizeof(text), "app: {mode: advanced-chat}\n"
		    "workflow:\n  %s\n  graph:\n    nodes: [" ST ", {id: a, "
		    "data: {type: answer, answer: x}}]\n    edges: [{id: x, "
		    "source: s, target: a}]\n", badvars[i].vars);
		doc = parse(text);
		errbuf[0] = '\0';
		rc = dsl_check_limits(doc, DSL_CHECK_RUNNABLE, &lim, errbuf,
		    &rep, &out);
		ok = rc == ENGINE_EINVAL && out == NULL &&
		    strstr(errbuf, badvars[i].want) != NULL &&
		    has_problem(&rep, "", badvars[i].field);
		if (!tap_check(ok, __FILE__, __LINE__, badvars[i].what)) {
			printf("#   rc %d err '%s'\n", rc, errbuf);
			dump_problems(&rep);
		}
		dsl_report_release(&rep);
		json_decref(doc);
	}

	/* Good drafts pass: every variable type Dify offers, a sound graph
	 * of nodes with what they need, and the default size limit. */
	rc = check_text("app: {mode: advanced-chat}\nworkflow:\n"
	    "  environment_variables:\n"
	    "  - {name: key, value_type: secret, value: ''}\n"
	    "  - {name: url, value_type: string, value: 'http://x'}\n"
	    "  - {name: _n2, value_type: number, value: 2.5}\n"
	    "  conversation_variables:\n"
	    "  - {name: s, value_type: string, value: ''}\n"
	    "  - {name: n, value_type: number, value: 0}\n"
	    "  - {name: o, value_type: object, value: {a: 1}}\n"
	    "  - {name: b, value_type: boolean, value: false}\n"
	    "  - {name: as, value_type: 'array[string]', value: [a]}\n"
	    "  - {name: an, value_type: 'array[number]', value: [1, 2.5]}\n"
	    "  - {name: ao, value_type: 'array[object]', value: [{}]}\n"
	    "  - {name: ab, value_type: 'array[boolean]', value: []}\n"
	    "  graph:\n    nodes:\n"
	    "    - " ST "\n"
	    "    - {id: l, data: {type: llm, model: {provider: '', name: ''}}}\n"
	    "    - {id: c, data: {type: code, code_language: python3, code: ''}}\n"
	    "    - {id: k, data: {type: tool, provider_name: time, tool_name: "
	    "now}}\n"
	    "    - {id: a, data: {type: answer, answer: done}}\n"
	    "    edges: [{id: x1, source: s, target: l}, {id: x2, source: l, "
	    "target: c}, {id: x3, source: c, target: k}, {id: x4, source: k, "
	    "target: a}]\n", DSL_CHECK_RUNNABLE, &rep, &out);
	CHECK_INT(rc, 0);
	if (!CHECK(json_array_size(rep.problems) == 0))
		dump_problems(&rep);
	dsl_report_release(&rep);
	json_decref(out);
}

/* Every app the end-to-end tests ship passes what publishing checks. */
static void
test_shipped_apps(void)
{
	static const char dir[] = "tests/e2e/apps";
	struct dsl_report	 rep;
	struct dirent		*de;
	DIR			*d;
	json_t			*doc, *out;
	char			 path[512], *buf;
	size_t			 n, len, seen = 0;
	FILE			*f;
	int			 rc;

	if ((d = opendir(dir)) == NULL) {
		SKIP("tests/e2e/apps is not here (run from the source tree)");
		return;
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 5 || strcmp(de->d_name + len - 4, ".yml") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if ((f = fopen(path, "rb")) == NULL ||
		    (buf = malloc(1 << 20)) == NULL) {
			if (f != NULL)
				fclose(f);
			CHECK(!"open");
			continue;
		}
		n = fread(buf, 1, (1 << 20) - 1, f);
		fclose(f);
		buf[n] = '\0';
		doc = NULL;
		out = NULL;
		rc = dsl_parse(buf, n, NULL, errbuf, &doc);
		free(buf);
		if (rc == 0)
			rc = dsl_check(doc, DSL_CHECK_CONFIRM |
			    DSL_CHECK_RUNNABLE, errbuf, &rep, &out);
		else
			memset(&rep, 0, sizeof(rep));
		if (!tap_check(rc == 0 && json_array_size(rep.problems) == 0,
		    __FILE__, __LINE__, path)) {
			printf("#   rc %d %s\n", rc, errbuf);
			dump_problems(&rep);
		}
		seen++;
		dsl_report_release(&rep);
		json_decref(doc);
		json_decref(out);
	}
	closedir(d);
	CHECK(seen > 10);
}

/* ====== Export ====== */

static const char stored[] =
    "version: 0.1.5\nkind: app\n"
    "app: {name: s, mode: advanced-chat, icon_type: bogus, extra: kept}\n"
    "workflow:\n"
    "  environment_variables:\n"
    "  - {name: key, value_type: secret, value: sk-123, id: v1}\n"
    "  - {name: url, value_type: string, value: 'http://x', id: v2}\n"
    "  graph:\n"
    "    nodes:\n"
    "    - {id: s, data: {type: start}}\n"
    "    - {id: t, data: {type: tool, credential_id: cred-1, provider_id: "
    "time}}\n"
    "    - id: a\n"
    "      data:\n"
    "        type: agent\n"
    "        agent_parameters:\n"
    "          tools: {type: 'array[tools]', value: [{tool_name: x, "
    "credential_id: cred-2}]}\n"
    "    - {id: w, data: {type: trigger-webhook, webhook_url: 'http://h', "
    "webhook_debug_url: 'http://d'}}\n"
    "    - {id: p, data: {type: trigger-plugin, subscription_id: sub}}\n"
    "    - {id: h, data: {type: http-request, authorization: {type: "
    "api-key, config: {api_key: REDACTED}}}}\n"
    "model_config:\n"
    "  agent_mode: {tools: [{tool_name: y, credential_id: cred-3}]}\n";

static void
test_export(void)
{
	json_t	*doc = parse(stored), *x = NULL, *y = NULL, *nodes;
	char	*before;

	before = json_dumps(doc, JSON_SORT_KEYS);
	CHECK_INT(dsl_export(doc, 0, errbuf, &x), 0);
	CHECK_STR(str(x, "version"), "0.6.0");
	CHECK_STR(str(x, "kind"), "app");
	CHECK_STR(str(x, "workflow.environment_variables.0.value"), "");
	CHECK_STR(str(x, "workflow.environment_variables.0.name"), "key");
	CHECK_STR(str(x, "workflow.environment_variables.1.value"), "http://x");
	nodes = at(x, "workflow.graph.nodes");
	CHECK(at(nodes, "1.data.credential_id") == NULL);
	CHECK_STR(str(nodes, "1.data.provider_id"), "time");
	CHECK(at(nodes, "2.data.agent_parameters.tools.value.0.credential_id")
	    == NULL);
	CHECK_STR(str(nodes, "2.data.agent_parameters.tools.value.0.tool_name"),
	    "x");
	CHECK_STR(str(nodes, "3.data.webhook_url"), "");
	CHECK_STR(str(nodes, "3.data.webhook_debug_url"), "");
	CHECK_STR(str(nodes, "4.data.subscription_id"), "");
	CHECK_STR(str(nodes, "5.data.authorization.config.api_key"),
	    "REDACTED");
	CHECK(at(x, "model_config.agent_mode.tools.0.credential_id") == NULL);
	/* The header fields the exporter always writes. */
	CHECK_STR(str(x, "app.icon_type"), "emoji");
	CHECK_STR(str(x, "app.icon"), "");
	CHECK_STR(str(x, "app.icon_background"), "#FFFFFF");
	CHECK_STR(str(x, "app.description"), "");
	CHECK(json_is_false(at(x, "app.use_icon_as_answer_icon")));
	CHECK_STR(str(x, "app.extra"), "kept");
	CHECK(json_is_array(at(x, "dependencies")));
	CHECK(json_is_array(at(x, "workflow.conversation_variables")));

	/* With secrets: values and credential ids stay, except in
	 * model_config, which Dify always strips. */
	CHECK_INT(dsl_export(doc, 1, errbuf, &y), 0);
	CHECK_STR(str(y, "workflow.environment_variables.0.value"), "sk-123");
	CHECK_STR(str(y, "workflow.graph.nodes.1.data.credential_id"),
	    "cred-1");
	CHECK_STR(str(y, "workflow.graph.nodes.2.data.agent_parameters.tools."
	    "value.0.credential_id"), "cred-2");
	CHECK(at(y, "model_config.agent_mode.tools.0.credential_id") == NULL);

	/* The stored document is not changed. */
	{
		char *after = json_dumps(doc, JSON_SORT_KEYS);

		CHECK_STR(after, before);
		free(after);
	}
	json_decref(y);
	CHECK_INT(dsl_export(json_array_get(doc, 0), 0, errbuf, &y),
	    ENGINE_EINVAL);
	free(before);
	json_decref(x);
	json_decref(y);
	json_decref(doc);
}

int
main(void)
{
	test_versions();
	test_envelope();
	test_legacy();
	test_graph();
	test_runnable();
	test_shipped_apps();
	test_export();
	return tap_done();
}
