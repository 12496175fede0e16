/*
 * legacy.c — Dify's apps without a graph (chat, agent-chat, completion:
 * the DSL's model_config) run on the workflow executor: their model
 * config becomes an equivalent graph, made fresh for each run and never
 * stored:
 *
 *   chat         start -> llm (pre_prompt as the system prompt, the
 *                conversation as memory) -> answer
 *   agent-chat   start -> agent (agent_mode's strategy and tools)
 *                -> answer
 *   completion   start -> llm (pre_prompt as the user prompt) -> answer
 *
 * pre_prompt's {{variable}} placeholders refer to the user inputs.
 *
 * A chat or completion app with datasets (model_config.dataset_configs)
 * gets a knowledge-retrieval node before its llm, as Dify's
 * workflow_converter makes: the datasets, retrieval_model single or
 * multiple, top_k, score_threshold, reranking; the query is sys.query
 * (completion: the dataset_query_variable input). The llm reads its
 * result as context, Dify's simple-prompt context block put before
 * pre_prompt, so the chunks are in the prompt and the answer's
 * retriever_resources are the LLM node's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/run/run.h"

/* {{name}} -> {{#start.name#}} (Dify's simple prompt syntax). */
static char *
convert_prompt(const char *s)
{
	struct dbuf	 sb = { 0 };
	const char	*p = s, *o, *c;
	size_t		 n, i;
	int		 ok;

	while ((o = strstr(p, "{{")) != NULL) {
		c = strstr(o + 2, "}}");
		n = c ? (size_t)(c - o - 2) : 0;
		ok = c != NULL && n > 0 && n <= 64 && o[2] != '#';
		for (i = 0; ok && i < n; i++)
			if (!(o[2 + i] == '_' || (o[2 + i] >= 'a' &&
			    o[2 + i] <= 'z') || (o[2 + i] >= 'A' &&
			    o[2 + i] <= 'Z') || (o[2 + i] >= '0' &&
			    o[2 + i] <= '9')))
				ok = 0;
		if (!ok) {
			dbuf_add(&sb, p, (size_t)(o - p) + 2);
			p = o + 2;
			continue;
		}
		dbuf_add(&sb, p, (size_t)(o - p));
		dbuf_addstr(&sb, "{{#start.");
		dbuf_add(&sb, o + 2, n);
		dbuf_addstr(&sb, "#}}");
		p = c + 2;
	}
	dbuf_addstr(&sb, p);
	return dbuf_take(&sb, NULL);
}

/* The start node's variables from user_input_form. */
static json_t *
start_variables(const json_t *mc)
{
	json_t		*vars = json_array(), *item, *v;
	const char	*type;
	size_t		 i;

	json_array_foreach(json_object_get(mc, "user_input_form"), i, item) {
		json_object_foreach(item, type, v) {
			json_t *nv = json_deep_copy(v);

			/* Dify's form types: text-input, paragraph, select,
			 * number, external_data_tool */
			if (nv == NULL || json_object_set_new(nv, "type",
			    json_string(type)) != 0 ||
			    json_array_append_new(vars, nv) != 0) {
				json_decref(vars);	/* nv went with it */
				return NULL;
			}
			break;
		}
	}
	return vars;
}

static json_t *
model_of(const json_t *mc)
{
	const json_t *m = json_object_get(mc, "model");

	/* "o": the params' reference is the caller's to give (a new empty
	 * object, or one more of the DSL's) */
	return json_pack("{s:s,s:s,s:s,s:o}", "provider",
	    json_string_value(json_object_get(m, "provider")) ?
	    json_string_value(json_object_get(m, "provider")) : "",
	    "name", json_string_value(json_object_get(m, "name")) ?
	    json_string_value(json_object_get(m, "name")) : "", "mode",
	    "chat", "completion_params", json_object_get(m,
	    "completion_params") ? json_incref(json_object_get(m,
	    "completion_params")) : json_object());
}

/* agent_mode.tools -> the agent node's tool list. */
static json_t *
agent_tools(const json_t *mc)
{
	json_t		*out = json_array(), *t, *settings, *pv;
	const char	*k;
	size_t		 i;
	int		 bad = out == NULL;

	json_array_foreach(json_object_get(json_object_get(mc, "agent_mode"),
	    "tools"), i, t) {
		if (json_is_false(json_object_get(t, "enabled")) ||
		    json_string_value(json_object_get(t, "tool_name")) ==
		    NULL)
			continue;
		if ((settings = json_object()) == NULL)
			bad = 1;
		json_object_foreach(json_object_get(t, "tool_parameters"), k,
		    pv)
			if (!json_is_null(pv) && !(json_is_string(pv) &&
			    json_string_length(pv) == 0))
				bad |= json_object_set_new(settings, k,
				    json_pack("{s:O}", "value", pv));
		bad |= json_array_append_new(out, json_pack(
		    "{s:b,s:s,s:s,s:s,s:o}",
		    "enabled", 1, "type", json_string_value(json_object_get(t,
		    "provider_type")) ? json_string_value(json_object_get(t,
		    "provider_type")) : "builtin", "provider_name",
		    json_string_value(json_object_get(t, "provider_id")) ?
		    json_string_value(json_object_get(t, "provider_id")) :
		    json_string_value(json_object_get(t, "provider_name")) ?
		    json_string_value(json_object_get(t, "provider_name")) :
		    "", "tool_name", json_string_value(json_object_get(t,
		    "tool_name")), "settings", settings));
	}
	if (bad) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* Dify's simple-prompt context block (prompt_templates/common_chat),
 * put before pre_prompt when the app reads datasets. */
#define LEGACY_CONTEXT_PROMPT \
	"Use the following context as your learned knowledge, inside " \
	"<context></context> XML tags.\n\n<context>\n{{#context#}}\n" \
	"</context>\n\nWhen answer to user:\n- If you don't know, just say " \
	"that you don't know.\n- If you don't know when you are not sure, " \
	"ask for clarification.\nAvoid mentioning that you obtained the " \
	"information from context.\nAnd answer according to the language " \
	"of the user's question.\n\n"

/* The enabled dataset ids of dataset_configs (Dify's
 * DatasetConfigManager: datasets.datasets[].dataset {enabled, id}); an
 * empty array when none, NULL when out of memory. */
static json_t *
dataset_ids(const json_t *mc)
{
	json_t		*ids = json_array(), *it, *ds;
	size_t		 i;

	json_array_foreach(json_object_get(json_object_get(json_object_get(mc,
	    "dataset_configs"), "datasets"), "datasets"), i, it) {
		ds = json_object_get(it, "dataset");
		if (json_is_false(json_object_get(ds, "enabled")) ||
		    !json_is_string(json_object_get(ds, "id")))
			continue;
		if (ids != NULL && json_array_append(ids, json_object_get(ds,
		    "id")) != 0) {
			json_decref(ids);
			return NULL;
		}
	}
	return ids;
}

/*
 * An agent-chat app's datasets as its agent's tools (Dify's
 * DatasetRetrieverTool, one a dataset), appended to tools: entries of
 * type dataset-retrieval {dataset_id, top_k, score_threshold} that
 * engine/knowledge/tool.c describes and runs; in multiple mode the app's
 * top_k and threshold, in single each dataset's own. 0 or -1 (memory).
 */
static int
agent_dataset_tools(const json_t *mc, json_t *tools)
{
	const json_t	*dc = json_object_get(mc, "dataset_configs");
	json_t		*ids = dataset_ids(mc), *id, *t;
	json_int_t	 top_k = json_integer_value(json_object_get(dc,
			    "top_k"));
	int		 multi = !record_field_is(dc, "retrieval_model",
			    "single"), bad = ids == NULL || tools == NULL;
	size_t		 i;

	json_array_foreach(ids, i, id) {
		t = json_pack("{s:b,s:s,s:s,s:s,s:O}", "enabled", 1, "type",
		    "dataset-retrieval", "provider_name", "dataset",
		    "tool_name", "dataset", "dataset_id", id);
		if (t != NULL && multi) {
			bad |= json_object_set_new(t, "top_k", json_integer(
			    top_k > 0 ? top_k : 4));
			if (json_is_true(json_object_get(dc,
			    "score_threshold_enabled")) && json_is_number(
			    json_object_get(dc, "score_threshold")))
				bad |= json_object_set(t, "score_threshold",
				    json_object_get(dc, "score_threshold"));
		}
		bad |= t == NULL || json_array_append_new(tools, t) != 0;
	}
	json_decref(ids);
	return bad ? -1 : 0;
}

/* The knowledge-retrieval node of dataset_configs over ids (Dify's
 * workflow_converter._convert_to_knowledge_retrieval_node). */
static json_t *
knowledge_node(const json_t *mc, const char *mode, json_t *ids)
{
	const json_t	*dc = json_object_get(mc, "dataset_configs");
	const char	*strategy = json_string_value(json_object_get(dc,
			    "retrieval_model"));
	const char	*qv = json_string_value(json_object_get(mc,
			    "dataset_query_variable"));
	const json_t	*rr = json_object_get(dc, "reranking_model");
	json_int_t	 top_k = json_integer_value(json_object_get(dc,
			    "top_k"));
	int		 th_on = json_is_true(json_object_get(dc,
			    "score_threshold_enabled")) && json_is_number(
			    json_object_get(dc, "score_threshold"));

	return json_pack("{s:s,s:{s:s,s:s,s:[s,s],s:o,s:s,s:{s:o},s:{s:I,s:f,"
	    "s:b,s:b,s:s,s:{s:s,s:s},s:O*}}}", "id", "knowledge", "data",
	    "type", "knowledge-retrieval", "title", "Knowledge Retrieval",
	    "query_variable_selector", strcmp(mode, "completion") == 0 && qv
	    != NULL && *qv != '\0' ? "start" : "sys", strcmp(mode,
	    "completion") == 0 && qv != NULL && *qv != '\0' ? qv : "query",
	    "dataset_ids", ids, "retrieval_mode", strategy != NULL &&
	    strcmp(strategy, "single") == 0 ? "single" : "multiple",
	    "single_retrieval_config", "model", model_of(mc),
	    "multiple_retrieval_config", "top_k", top_k > 0 ? top_k : 4,
	    "score_threshold", th_on ? json_number_value(json_object_get(dc,
	    "score_threshold")) : 0.0, "score_threshold_enabled", th_on,
	    /* Dify: reranking_enable defaults to true */
	    "reranking_enable", !json_is_false(json_object_get(dc,
	    "reranking_enable")), "reranking_mode", json_string_value(
	    json_object_get(dc, "reranking_mode")) ? json_string_value(
	    json_object_get(dc, "reranking_mode")) : "reranking_model",
	    "reranking_model", "provider", json_string_value(json_object_get(
	    rr, "reranking_provider_name")) ? json_string_value(
	    json_object_get(rr, "reranking_provider_name")) : "", "model",
	    json_string_value(json_object_get(rr, "reranking_model_name")) ?
	    json_string_value(json_object_get(rr, "reranking_model_name")) :
	    "", "weights", json_object_get(dc, "weights"));
}

json_t *
legacy_workflow(const json_t *dsl, const char *mode)
{
	const json_t	*mc = json_object_get(dsl, "model_config");
	const char	*pre = json_string_value(json_object_get(mc,
			    "pre_prompt"));
	const char	*strategy;
	char		*prompt = NULL, *raw = NULL;
	json_t		*mid = NULL, *wf, *ids = NULL, *kn = NULL;
	struct dbuf	 sb = { 0 };

	/* datasets read: Dify's context block before the app's prompt */
	if (strcmp(mode, "agent-chat") != 0 && (ids = dataset_ids(mc)) !=
	    NULL && json_array_size(ids) > 0) {
		dbuf_addstr(&sb, LEGACY_CONTEXT_PROMPT);
		dbuf_addstr(&sb, pre ? pre : "");
		pre = raw = dbuf_take(&sb, NULL);
		if (raw == NULL) {
			json_decref(ids);
			return NULL;
		}
	}
	json_decref(ids);
	prompt = convert_prompt(pre ? pre : "");
	free(raw);

	if (strcmp(mode, "agent-chat") == 0) {
		strategy = json_string_value(json_object_get(json_object_get(
		    mc, "agent_mode"), "strategy"));
		mid = json_pack("{s:s,s:{s:s,s:s,s:s,s:{s:{s:s,s:{s:s,s:s,s:s,"
		    "s:o}},s:{s:s,s:s},s:{s:s,s:s},s:{s:s,s:i},s:{s:s,s:o}},"
		    "s:{s:{s:b,s:i}}}}",
		    "id", "agent", "data", "type", "agent", "title", "Agent",
		    "agent_strategy_name", strategy != NULL && strcmp(strategy,
		    "react") == 0 ? "ReAct" : "function_calling",
		    "agent_parameters", "model", "type", "constant", "value",
		    "provider", json_string_value(json_object_get(
		    json_object_get(mc, "model"), "provider")) ?
		    json_string_value(json_object_get(json_object_get(mc,
		    "model"), "provider")) : "", "model", json_string_value(
		    json_object_get(json_object_get(mc, "model"), "name")) ?
		    json_string_value(json_object_get(json_object_get(mc,
		    "model"), "name")) : "", "mode", "chat",
		    "completion_params", json_object_get(json_object_get(mc,
		    "model"), "completion_params") ? json_incref(
		    json_object_get(json_object_get(mc, "model"),
		    "completion_params")) : json_object(), "instruction", "type", "constant", "value",
		    prompt ? prompt : "", "query", "type", "constant", "value",
		    "{{#sys.query#}}", "maximum_iterations", "type", "constant",
		    "value", (int)(json_integer_value(json_object_get(
		    json_object_get(mc, "agent_mode"), "max_iteration")) ?
		    json_integer_value(json_object_get(json_object_get(mc,
		    "agent_mode"), "max_iteration")) : 5), "tools", "type",
		    "constant", "value", agent_tools(mc), "memory", "window",
		    "enabled", 1, "size", 50);
	} else if (strcmp(mode, "completion") == 0) {
		mid = json_pack("{s:s,s:{s:s,s:s,s:o,s:[{s:s,s:s}]}}", "id",
		    "agent", "data", "type", "llm", "title", "LLM", "model",
		    model_of(mc), "prompt_template", "role", "user", "text",
		    prompt ? prompt : "");
	} else {
		mid = json_pack("{s:s,s:{s:s,s:s,s:o,s:[{s:s,s:s}],s:{s:{s:b,"
		    "s:i},s:s}}}", "id", "agent", "data", "type", "llm",
		    "title", "LLM", "model", model_of(mc), "prompt_template",
		    "role", "system", "text", prompt ? prompt : "", "memory",
		    "window", "enabled", 1, "size", 50, "query_prompt_template",
		    "{{#sys.query#}}");
	}
	free(prompt);
	if (mid != NULL && strcmp(mode, "agent-chat") == 0 &&
	    agent_dataset_tools(mc, json_object_get(json_object_get(
	    json_object_get(json_object_get(mid, "data"), "agent_parameters"),
	    "tools"), "value")) != 0) {
		json_decref(mid);
		return NULL;
	}
	if (mid == NULL || (ids = dataset_ids(mc)) == NULL) {
		json_decref(mid);
		return NULL;
	}
	/* datasets: start -> knowledge -> llm (an agent-chat app's are its
	 * agent's tools) */
	if (json_array_size(ids) > 0 && strcmp(mode, "agent-chat") != 0) {
		kn = knowledge_node(mc, mode, ids);
		ids = NULL;
		if (kn == NULL || json_object_set_new(json_object_get(mid,
		    "data"), "context", json_pack("{s:b,s:[s,s]}", "enabled",
		    1, "variable_selector", "knowledge", "result")) != 0) {
			json_decref(kn);
			json_decref(mid);
			return NULL;
		}
	}
	json_decref(ids);
	wf = json_pack("{s:{s:[{s:s,s:{s:s,s:s,s:o}},o,{s:s,s:{s:s,s:s,"
	    "s:s}}],s:[{s:s,s:s,s:s},{s:s,s:s,s:s}]},s:{}}", "graph", "nodes",
	    "id", "start", "data", "type", "start", "title", "Start",
	    "variables", start_variables(mc), mid, "id", "answer", "data",
	    "type", "answer", "title", "Answer", "answer",
	    "{{#agent.text#}}", "edges", "id", "e1", "source", "start",
	    "target", kn != NULL ? "knowledge" : "agent", "id", "e2", "source",
	    "agent", "target", "answer", "features");
	if (wf != NULL && kn != NULL && (json_array_append_new(json_object_get(
	    json_object_get(wf, "graph"), "nodes"), kn) != 0 ||
	    json_array_append_new(json_object_get(json_object_get(wf,
	    "graph"), "edges"), json_pack("{s:s,s:s,s:s}", "id", "e0",
	    "source", "knowledge", "target", "agent")) != 0)) {
		json_decref(wf);
		return NULL;
	}
	if (wf == NULL)
		json_decref(kn);
	return wf;
}

int
legacy_model_params(json_t *wf, const json_t *params)
{
	json_t	*node = json_array_get(json_object_get(json_object_get(wf,
		    "graph"), "nodes"), 1);
	json_t	*data = json_object_get(node, "data"), *model, *cp;

	/* an llm node's model, or an agent node's model parameter */
	model = json_object_get(data, "model");
	if (model == NULL)
		model = json_object_get(json_object_get(json_object_get(data,
		    "agent_parameters"), "model"), "value");
	if (!json_is_object(model))
		return 0;
	cp = json_deep_copy(json_object_get(model, "completion_params"));
	if (cp == NULL && (cp = json_object()) == NULL)
		return ENGINE_ENOMEM;
	if (json_object_update(cp, (json_t *)params) != 0 ||
	    json_object_set_new(model, "completion_params", cp) != 0) {
		json_decref(cp);
		return ENGINE_ENOMEM;
	}
	return 0;
}
