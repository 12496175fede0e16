/*
 * classifier.c — question-classifier and parameter-extractor: two nodes
 * that ask the model for JSON, as Dify's do.
 *
 * question-classifier: the model gets the query, the classes and the
 * instruction and answers {"category_id", "category_name"}; an unknown or
 * unreadable answer picks the first class, as in Dify. The chosen class id
 * is the node's handle.
 *
 * parameter-extractor: the model fills the declared parameters, through a
 * forced function call (reasoning_mode function_call) or a JSON answer
 * (prompt); values are coerced to their types. A failure to extract is not
 * a node failure: __is_success is 0 and __reason says why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/run/run.h"
#include "engine/llm/llm.h"

/* The first JSON object in text (after any <think> block), or NULL. */
static json_t *
first_object(const char *text)
{
	const char	*p = text, *think = strstr(text, "</think>"), *o;
	json_t		*j;

	if (think != NULL)
		p = think + 8;
	while ((o = strchr(p, '{')) != NULL) {
		if ((j = json_loads(o, JSON_DISABLE_EOF_CHECK, NULL)) != NULL &&
		    json_is_object(j))
			return j;
		json_decref(j);
		p = o + 1;
	}
	return NULL;
}

/* The text of a query selector. malloc'd. */
static char *
query_text(struct node_ctx *c, const json_t *sel)
{
	json_t	*v = node_resolve(c, sel);
	char	*s = NULL;

	if (v != NULL)
		tpl_value_text(v, TPL_TEXT, &s);
	json_decref(v);
	return s ? s : strdup("");
}

static int
ask(struct node_ctx *c, const char *system, const char *user,
    const struct llm_tool *tool, struct llm_response *rs)
{
	json_t			*model = json_object_get(c->node->data, "model");
	struct llm_message	 m[2];
	struct llm_request	 rq;

	memset(m, 0, sizeof(m));
	m[0].role = LLM_SYSTEM;
	m[0].content = system;
	m[1].role = LLM_USER;
	m[1].content = user;
	memset(&rq, 0, sizeof(rq));
	rq.model = json_string_value(json_object_get(model, "name"));
	rq.messages = m;
	rq.nmessages = 2;
	rq.params = json_object_get(model, "completion_params");
	if (tool != NULL) {
		rq.tools = tool;
		rq.ntools = 1;
		rq.tool_choice = tool->name;
	}
	if (rq.model == NULL || json_string_value(json_object_get(model,
	    "provider")) == NULL)
		return node_fail(c, "the node has no model (model.provider and "
		    "model.name)");
	if (llm_chat(c->run->e, json_string_value(json_object_get(model,
	    "provider")), &rq, c->err, rs) != 0)
		return -1;
	run_usage_add(c->run, rs->usage.prompt_tokens,
	    rs->usage.completion_tokens, rs->usage.total_tokens);
	c->metadata = json_pack("{s:I}", "total_tokens",
	    (json_int_t)rs->usage.total_tokens);
	return 0;
}

/* ====== question-classifier ====== */

static const char classifier_system[] =
    "### Job Description\n"
    "You are a text classification engine that analyzes text data and "
    "assigns categories based on user input or automatically determined "
    "categories.\n"
    "### Task\n"
    "Your task is to assign one categories ONLY to the input text and only "
    "one category may be assigned returned in the output. Additionally, "
    "you need to extract the key words from the text that are related to "
    "the classification.\n"
    "### Format\n"
    "The input text is in the variable input_text. Categories are "
    "specified as a category list with two filed category_id and "
    "category_name in the variable categories. Classification instructions "
    "may be included to improve the classification accuracy.\n"
    "### Constraint\n"
    "DO NOT include anything other than the JSON array in your response.\n"
    "### Output\n"
    "{\"keywords\": [\"...\"], \"category_id\": \"...\", "
    "\"category_name\": \"...\"}\n";

static int
classifier_run(struct node_ctx *c)
{
	json_t			*classes = json_object_get(c->node->data,
				    "classes"), *cl, *cats, *user, *ans = NULL;
	struct llm_response	 rs;
	char			*query, *ins = NULL, *u = NULL, *name;
	const char		*id, *pick_id = NULL, *pick_name = NULL, *ti;
	size_t			 i;
	int			 rc = -1;

	memset(&rs, 0, sizeof(rs));
	if (json_array_size(classes) == 0)
		return node_fail(c, "the classifier has no classes");
	query = query_text(c, json_object_get(c->node->data,
	    "query_variable_selector"));
	ti = node_str(c->node, "instruction");
	if (node_render(c, ti ? ti : "", TPL_TEXT, &ins) != 0)
		goto out;
	cats = json_array();
	json_array_foreach(classes, i, cl) {
		/* class names may hold {{#..#}} */
		if (node_render(c, json_string_value(json_object_get(cl,
		    "name")), TPL_TEXT, &name) != 0) {
			json_decref(cats);
			goto out;
		}
		/* a class without an id is not offered (it cannot be picked) */
		if (json_object_get(cl, "id") != NULL &&
		    json_array_append_new(cats, json_pack("{s:O,s:s}",
		    "category_id", json_object_get(cl, "id"),
		    "category_name", name)) != 0) {
			free(name);
			json_decref(cats);
			node_fail(c, "out of memory");
			goto out;
		}
		free(name);
	}
	user = json_pack("{s:[s],s:o,s:[s]}", "input_text", query,
	    "categories", cats, "classification_instructions", ins);
	u = json_dumps(user, JSON_ENSURE_ASCII);
	json_decref(user);
	if (u == NULL || json_object_set_new(c->inputs, "query",
	    json_string(query)) != 0) {
		node_fail(c, "out of memory");
		goto out;
	}
	if (ask(c, classifier_system, u, NULL, &rs) != 0)
		goto out;
	ans = first_object(rs.text ? rs.text : "");
	id = json_string_value(json_object_get(ans, "category_id"));
	json_array_foreach(classes, i, cl)
		if (id != NULL && json_string_value(json_object_get(cl,
		    "id")) != NULL && strcmp(id, json_string_value(
		    json_object_get(cl, "id"))) == 0) {
			pick_id = id;
			pick_name = json_string_value(json_object_get(cl,
			    "name"));
		}
	if (pick_id == NULL) {	/* as Dify: the first class */
		pick_id = json_string_value(json_object_get(json_array_get(
		    classes, 0), "id"));
		pick_name = json_string_value(json_object_get(json_array_get(
		    classes, 0), "name"));
	}
	snprintf(c->handle_buf, sizeof(c->handle_buf), "%s", pick_id ?
	    pick_id : "");
	c->handle = c->handle_buf;
	if (json_object_set_new(c->outputs, "class_name",
	    json_string(pick_name ? pick_name : "")) != 0 ||
	    json_object_set_new(c->outputs, "class_id", json_string(pick_id ?
	    pick_id : "")) != 0 || json_object_set_new(c->outputs, "usage",
	    llm_usage_json(&rs)) != 0) {
		node_fail(c, "out of memory");
		goto out;
	}
	c->process_data = json_pack("{s:s,s:s}", "model_answer", rs.text ?
	    rs.text : "", "prompt", u);
	rc = 0;
out:
	json_decref(ans);
	llm_response_release(&rs);
	free(query);
	free(ins);
	free(u);
	return rc;
}

const struct node_type node_question_classifier = {
	"question-classifier", classifier_run, 0
};

/* ====== parameter-extractor ====== */

static const char *
json_type_of(const char *t)
{
	if (t == NULL || strcmp(t, "string") == 0 || strcmp(t, "select") == 0)
		return "string";
	if (strcmp(t, "number") == 0)
		return "number";
	if (strcmp(t, "bool") == 0 || strcmp(t, "boolean") == 0)
		return "boolean";
	if (strncmp(t, "array", 5) == 0)
		return "array";
	return "string";
}

/* Coerces v to parameter p's type; NULL when it cannot. New reference. */
static json_t *
coerce(const json_t *p, json_t *v)
{
	const char	*t = json_type_of(json_string_value(json_object_get(p,
			    "type")));
	json_t		*opts = json_object_get(p, "options"), *o;
	char		*end;
	double		 d;
	size_t		 i;

	if (v == NULL || json_is_null(v))
		return NULL;
	if (strcmp(t, "number") == 0) {
		if (json_is_number(v))
			return json_incref(v);
		if (json_is_string(v)) {
			d = strtod(json_string_value(v), &end);
			if (*end == '\0' && end != json_string_value(v))
				return d == (double)(json_int_t)d ?
				    json_integer((json_int_t)d) : json_real(d);
		}
		return NULL;
	}
	if (strcmp(t, "boolean") == 0) {
		if (json_is_boolean(v))
			return json_incref(v);
		if (json_is_string(v))
			return json_boolean(strcmp(json_string_value(v),
			    "true") == 0);
		return NULL;
	}
	if (strcmp(t, "array") == 0)
		return json_is_array(v) ? json_incref(v) : NULL;
	if (!json_is_string(v))
		return NULL;
	if (json_array_size(opts) > 0) {	/* select: one of the options */
		json_array_foreach(opts, i, o)
			if (json_is_string(o) && strcmp(json_string_value(o),
			    json_string_value(v)) == 0)
				return json_incref(v);
		return NULL;
	}
	return json_incref(v);
}

/* A default of the type, for a parameter that could not be extracted. */
static json_t *
empty_of(const json_t *p)
{
	const char *t = json_type_of(json_string_value(json_object_get(p,
	    "type")));

	if (strcmp(t, "number") == 0)
		return json_integer(0);
	if (strcmp(t, "boolean") == 0)
		return json_false();
	if (strcmp(t, "array") == 0)
		return json_array();
	return json_string("");
}

static int
extractor_run(struct node_ctx *c)
{
	json_t			*params = json_object_get(c->node->data,
				    "parameters"), *p, *schema, *props, *req;
	json_t			*got = NULL, *v;
	struct llm_response	 rs;
	struct llm_tool		 tool;
	const char		*mode = node_str(c->node, "reasoning_mode");
	const char		*ti = node_str(c->node, "instruction"), *name;
	char			*query, *ins = NULL, *sys = NULL, *sch = NULL;
	char			 reason[ENGINE_ERRMAX] = "";
	size_t			 i;
	int			 rc = -1, fc, bad = 0;

	memset(&rs, 0, sizeof(rs));
	query = query_text(c, json_object_get(c->node->data, "query"));
	if (node_render(c, ti ? ti : "", TPL_TEXT, &ins) != 0)
		goto out;
	props = json_object();
	req = json_array();
	json_array_foreach(params, i, p) {
		if ((name = json_string_value(json_object_get(p, "name"))) ==
		    NULL)
			continue;
		v = json_pack("{s:s,s:s}", "type", json_type_of(
		    json_string_value(json_object_get(p, "type"))),
		    "description", json_string_value(json_object_get(p,
		    "description")) ? json_string_value(json_object_get(p,
		    "description")) : "");
		if (json_array_size(json_object_get(p, "options")) > 0)
			bad |= json_object_set(v, "enum", json_object_get(p,
			    "options"));
		bad |= json_object_set_new(props, name, v);
		if (json_is_true(json_object_get(p, "required")))
			bad |= json_array_append_new(req, json_string(name));
	}
	schema = json_pack("{s:s,s:o,s:o}", "type", "object", "properties",
	    props, "required", req);
	if (bad || schema == NULL) {
		json_decref(schema);
		node_fail(c, "out of memory");
		goto out;
	}
	sch = json_dumps(schema, JSON_COMPACT | JSON_ENSURE_ASCII);
	fc = mode == NULL || strcmp(mode, "prompt") != 0;
	{
		size_t n = strlen(ins) + strlen(sch ? sch : "") + 512;

		if ((sys = malloc(n)) != NULL)
			snprintf(sys, n, "You are a helpful assistant tasked "
			    "with extracting structured information based on "
			    "specific criteria provided. %s\n%s%s%s", ins, fc ?
			    "Call the function extract_parameters with the "
			    "parameters found in the user's text." :
			    "Answer with only a JSON object matching this "
			    "schema, in a ```json block:\n", fc ? "" : sch,
			    fc ? "" : "\n");
	}
	memset(&tool, 0, sizeof(tool));
	tool.name = "extract_parameters";
	tool.description = "Extract parameters from the natural language text";
	tool.parameters = schema;
	if (sys == NULL || json_object_set_new(c->inputs, "query",
	    json_string(query)) != 0) {
		json_decref(schema);
		node_fail(c, "out of memory");
		goto out;
	}
	if (ask(c, sys, query, fc ? &tool : NULL, &rs) != 0) {
		json_decref(schema);
		goto out;
	}
	json_decref(schema);
	if (fc && rs.ntool_calls > 0)
		got = json_loads(rs.tool_calls[0].arguments, 0, NULL);
	else
		got = first_object(rs.text ? rs.text : "");
	if (!json_is_object(got))
		snprintf(reason, sizeof(reason), "the model gave no "
		    "parameters");
	json_array_foreach(params, i, p) {
		if ((name = json_string_value(json_object_get(p, "name"))) ==
		    NULL)
			continue;
		v = coerce(p, json_object_get(got, name));
		if (v == NULL && json_is_true(json_object_get(p, "required")) &&
		    reason[0] == '\0')
			snprintf(reason, sizeof(reason), "parameter %s is "
			    "required and was not extracted", name);
		bad |= json_object_set_new(c->outputs, name, v ? v :
		    empty_of(p));
	}
	bad |= json_object_set_new(c->outputs, "__is_success",
	    json_integer(reason[0] == '\0'));
	bad |= json_object_set_new(c->outputs, "__reason", reason[0] ?
	    json_string(reason) : json_null());
	bad |= json_object_set_new(c->outputs, "__usage", llm_usage_json(&rs));
	if (bad) {
		node_fail(c, "out of memory");
		goto out;
	}
	rc = 0;
out:
	json_decref(got);
	llm_response_release(&rs);
	free(query);
	free(ins);
	free(sys);
	free(sch);
	return rc;
}

const struct node_type node_parameter_extractor = {
	"parameter-extractor", extractor_run, 0
};
