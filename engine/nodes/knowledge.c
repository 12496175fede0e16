/*
 * knowledge.c — the knowledge-retrieval node through Dify's External
 * Knowledge API (engine/records/knowledge.c): each dataset is asked for the
 * query, the records are merged best first and cut to top_k; output `result`
 * is Dify's [{content, title, metadata: {_source, dataset_id, score, ...}}].
 * A dataset that is not configured fails the node, saying how to set it.
 * A dataset id this server holds (engine/knowledge/) is searched locally
 * instead, its items carrying Dify's metadata (dataset_name, document_id,
 * document_name, segment_id, ...); the result is numbered 1..N by
 * metadata.position, best first. A rerank model (reranking_model mode)
 * reorders every dataset's hits together; single mode searches the one
 * local dataset the node's model picks (Dify's function-call router) by
 * its own settings. metadata_filtering_mode
 * manual keeps the documents its conditions pass (engine/knowledge/
 * filter.c); automatic keeps those passing the conditions the node's
 * model writes from the query, as Dify's.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/knowledge/knowledge.h"
#include "engine/llm/llm.h"
#include "engine/run/run.h"

static int
by_score(const void *a, const void *b)
{
	double x = json_number_value(json_object_get(json_object_get(
	    *(json_t *const *)a, "metadata"), "score"));
	double y = json_number_value(json_object_get(json_object_get(
	    *(json_t *const *)b, "metadata"), "score"));

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Dify's Source item for hit h of kb_search. */
static json_t *
local_item(const json_t *h)
{
	const json_t *seg = json_object_get(h, "segment");
	const json_t *doc = json_object_get(h, "document");
	const json_t *ds = json_object_get(h, "dataset");

	return json_pack("{s:{s:s,s:O,s:O,s:O,s:O,s:O,s:O,s:s,s:O,s:o,"
	    "s:O,s:O,s:O,s:O,s:O},s:O,s:n,s:O,s:n}",
	    "metadata", "_source", "knowledge", "dataset_id",
	    json_object_get(ds, "id"), "dataset_name", json_object_get(ds,
	    "name"), "document_id", json_object_get(doc, "id"),
	    "document_name", json_object_get(doc, "name"), "data_source_type",
	    json_object_get(doc, "data_source_type"), "segment_id",
	    json_object_get(seg, "id"), "retriever_from", "workflow", "score",
	    json_object_get(h, "score"), "child_chunks",
	    json_object_get(h, "child_chunks") ? json_deep_copy(
	    json_object_get(h, "child_chunks")) : json_array(),
	    "segment_hit_count",
	    json_object_get(seg, "hit_count"), "segment_word_count",
	    json_object_get(seg, "word_count"), "segment_position",
	    json_object_get(seg, "position"), "segment_index_node_hash",
	    json_object_get(seg, "index_node_hash"), "doc_metadata",
	    json_object_get(doc, "doc_metadata"), "title", json_object_get(doc,
	    "name"), "files", "content", json_object_get(seg, "content"),
	    "summary");
}

/* 1 when rm (a retrieval config) asks for a rerank model: Dify's
 * reranking_enable with mode reranking_model (or none) and a model;
 * *prov and *model name it (a node's {provider, model} or a dataset's
 * {reranking_provider_name, reranking_model_name}). */
static int
rerank_of(const json_t *rm, const char **prov, const char **model)
{
	const json_t	*rr = json_object_get(rm, "reranking_model");
	const char	*mode = json_string_value(json_object_get(rm,
			    "reranking_mode"));
	const char	*slash;

	*prov = json_string_value(json_object_get(rr, "provider"));
	if (*prov == NULL)
		*prov = json_string_value(json_object_get(rr,
		    "reranking_provider_name"));
	*model = json_string_value(json_object_get(rr, "model"));
	if (*model == NULL)
		*model = json_string_value(json_object_get(rr,
		    "reranking_model_name"));
	/* Dify names plugin providers "langgenius/jina/jina" */
	if (*prov != NULL && (slash = strrchr(*prov, '/')) != NULL)
		*prov = slash + 1;
	return json_is_true(json_object_get(rm, "reranking_enable")) &&
	    (mode == NULL || strcmp(mode, "reranking_model") == 0) &&
	    *prov != NULL && *model != NULL && **model != '\0';
}

/*
 * Reorders the items of *all by the relevance model of prov gives their
 * content for query, their metadata.score replaced by it and those at or
 * below a positive threshold left out (Dify's DataPostProcessor in
 * reranking_model mode, across every dataset's hits). 0, or -1 with the
 * node failed.
 */
static int
items_rerank(struct node_ctx *c, const char *prov, const char *model,
    const char *query, double th, json_t **all)
{
	const char	**texts = NULL;
	double		 *sc = NULL;
	json_t		 *keep = NULL, *it;
	size_t		  n = json_array_size(*all), i;
	int		  rc = -1;

	if (n == 0)
		return 0;
	if ((texts = calloc(n, sizeof(*texts))) == NULL ||
	    (keep = json_array()) == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	json_array_foreach(*all, i, it)
		texts[i] = json_string_value(json_object_get(it, "content")) ?
		    json_string_value(json_object_get(it, "content")) : "";
	if (kb_rerank(c->run->e, prov, model, query, texts, n, c->err,
	    &sc) != 0)
		goto out;
	json_array_foreach(*all, i, it) {
		if (th > 0 && sc[i] <= th)
			continue;
		if (json_object_set_new(json_object_get(it, "metadata"),
		    "score", json_real(sc[i])) != 0 ||
		    json_array_append(keep, it) != 0) {
			node_fail(c, "out of memory");
			goto out;
		}
	}
	json_decref(*all);
	*all = keep;
	keep = NULL;
	rc = 0;
out:
	free(texts);
	free(sc);
	json_decref(keep);
	return rc;
}

/* Appends to all the items of local dataset id's best top_k hits for
 * query by rm (NULL: the dataset's own). 0, or -1 with the node failed. */
static int
local_search(struct node_ctx *c, const char *id, const char *query,
    const json_t *rm, int top_k, double th, json_t *all)
{
	json_t	*recs = NULL, *rec;
	size_t	 j;

	if (kb_search(c->run->e, id, query, rm, top_k, th, c->err, &recs) !=
	    0)
		return -1;
	json_array_foreach(recs, j, rec) {
		json_t *it = local_item(rec);

		if (it == NULL || json_array_append_new(all, it) != 0) {
			json_decref(recs);
			return node_fail(c, "out of memory");
		}
	}
	json_decref(recs);
	return 0;
}

/* Dify's metadata filter prompts (core/rag/retrieval/template_prompts.py),
 * the chat form: system, two examples, then the query. */
static const char meta_system[] =
    "\n    ### Job Description',\n    You are a text metadata extract "
    "engine that extract text's metadata based on user input and set the "
    "metadata value\n    ### Task\n    Your task is to ONLY extract the "
    "metadatas that exist in the input text from the provided metadata "
    "list and Use the following operators [\"contains\", \"not "
    "contains\", \"start with\", \"end with\", \"is\", \"is not\", "
    "\"empty\", \"not empty\", \"=\", \"\xe2\x89\xa0\", \">\", \"<\", "
    "\"\xe2\x89\xa5\", \"\xe2\x89\xa4\", \"before\", \"after\"] to "
    "express logical relationships, then return result in JSON format "
    "with the key \"metadata_fields\" and value \"metadata_field_value\" "
    "and comparison operator \"comparison_operator\".\n    ### Format\n"
    "    The input text is in the variable input_text. Metadata are "
    "specified as a list of objects in the variable metadata_fields, where "
    "each object contains \"name\" and \"type\".\n    Use string "
    "operators for metadata fields with type \"string\". Use "
    "numeric/date comparison operators for metadata fields with type "
    "\"number\" or \"time\".\n    ### Constraint\n    DO NOT include "
    "anything other than the JSON array in your response.\n";
static const char meta_user1[] =
    "\n    { \"input_text\": \"I want to know which company\xe2\x80\x99s "
    "email address test@example.com is?\",\n    \"metadata_fields\": "
    "[{\"name\": \"filename\", \"type\": \"string\"}, {\"name\": "
    "\"email\", \"type\": \"string\"}, {\"name\": \"phone\", \"type\": "
    "\"string\"}, {\"name\": \"address\", \"type\": \"string\"}]\n    }\n";
static const char meta_assistant1[] =
    "\n```json\n    {\"metadata_map\": [\n        "
    "{\"metadata_field_name\": \"email\", \"metadata_field_value\": "
    "\"test@example.com\", \"comparison_operator\": \"=\"}\n    ]\n    }"
    "\n```\n";
static const char meta_user2[] =
    "\n    {\"input_text\": \"What are the movies with a score of more "
    "than 9 in 2024?\",\n    \"metadata_fields\": [{\"name\": \"name\", "
    "\"type\": \"string\"}, {\"name\": \"year\", \"type\": \"number\"}, "
    "{\"name\": \"rating\", \"type\": \"number\"}, {\"name\": "
    "\"country\", \"type\": \"string\"}]}\n";
static const char meta_assistant2[] =
    "\n```json\n    {\"metadata_map\": [\n        "
    "{\"metadata_field_name\": \"year\", \"metadata_field_value\": "
    "\"2024\", \"comparison_operator\": \"=\"},\n        "
    "{\"metadata_field_name\": \"rating\", \"metadata_field_value\": "
    "\"9\", \"comparison_operator\": \">\"},\n    ]}\n```\n";

/* The JSON object in a model's text: a ```json block's, else from the
 * first "{" to the last "}" (Dify's parse_and_check_json_markdown). */
static json_t *
json_in_text(const char *t)
{
	const char	*a = strstr(t, "```json"), *b, *e;

	if (a != NULL) {
		a += 7;
		if ((e = strstr(a, "```")) == NULL)
			e = a + strlen(a);
	} else {
		a = t;
		e = t + strlen(t);
	}
	if ((b = memchr(a, '{', (size_t)(e - a))) == NULL)
		return NULL;
	while (e > b && e[-1] != '}')
		e--;
	return e > b ? json_loadb(b, (size_t)(e - b), JSON_DECODE_ANY,
	    NULL) : NULL;
}

/*
 * metadata_filtering_mode automatic, as Dify's _automatic_metadata_filter:
 * the metadata_model_config model is asked, with Dify's prompts, for the
 * conditions the query states over the field names of the local
 * datasets of ids; those naming a field, with an operator filter.c
 * knows, become *out ({logical_operator: the node's or "or",
 * conditions}). No fields, a model that fails or an answer without
 * metadata_map: NULL, no filter, as Dify's. -1 only when out of memory.
 */
static int
auto_filter(struct node_ctx *c, const json_t *ids, const char *query,
    json_t **out)
{
	const json_t		*d = c->node->data;
	const json_t		*model = json_object_get(d,
				    "metadata_model_config");
	json_t			*names = NULL, *ds, *f, *id, *ans = NULL, *it;
	json_t			*conds = NULL, *one;
	struct llm_message	 m[6];
	struct llm_request	 rq;
	struct llm_response	 rs;
	struct dbuf		 b = { 0 };
	char			*user = NULL, err[ENGINE_ERRMAX] = "";
	const char		*lop;
	size_t			 i, j;
	int			 rc = -1;

	*out = NULL;
	memset(&rs, 0, sizeof(rs));
	if ((names = json_array()) == NULL)
		goto out;
	json_array_foreach((json_t *)ids, i, id) {
		if (!json_is_string(id) || (ds = kb_dataset_load(c->run->e,
		    json_string_value(id))) == NULL)
			continue;
		json_array_foreach(json_object_get(ds, "doc_metadata"), j, f)
			if (json_is_string(json_object_get(f, "name")) &&
			    json_array_append(names, json_object_get(f,
			    "name")) != 0) {
				json_decref(ds);
				goto out;
			}
		json_decref(ds);
	}
	rc = 0;
	if (json_array_size(names) == 0 || json_string_value(json_object_get(
	    model, "name")) == NULL || json_string_value(json_object_get(model,
	    "provider")) == NULL)
		goto out;
	/* METADATA_FILTER_USER_PROMPT_3 as Python formats it: the names a
	 * Python list */
	dbuf_addstr(&b, "\n    '{\"input_text\": \"");
	dbuf_addstr(&b, query);
	dbuf_addstr(&b, "\",',\n    '\"metadata_fields\": [");
	json_array_foreach(names, i, f) {
		dbuf_addstr(&b, i ? ", '" : "'");
		dbuf_addstr(&b, json_string_value(f));
		dbuf_addstr(&b, "'");
	}
	dbuf_addstr(&b, "]}'\n");
	rc = -1;
	if ((user = dbuf_take(&b, NULL)) == NULL)
		goto out;
	memset(m, 0, sizeof(m));
	m[0].role = LLM_SYSTEM;
	m[0].content = meta_system;
	m[1].role = LLM_USER;
	m[1].content = meta_user1;
	m[2].role = LLM_ASSISTANT;
	m[2].content = meta_assistant1;
	m[3].role = LLM_USER;
	m[3].content = meta_user2;
	m[4].role = LLM_ASSISTANT;
	m[4].content = meta_assistant2;
	m[5].role = LLM_USER;
	m[5].content = user;
	memset(&rq, 0, sizeof(rq));
	rq.model = json_string_value(json_object_get(model, "name"));
	rq.messages = m;
	rq.nmessages = 6;
	rq.params = json_object_get(model, "completion_params");
	rc = 0;
	if (llm_chat(c->run->e, json_string_value(json_object_get(model,
	    "provider")), &rq, err, &rs) != 0) {
		log_warn("knowledge-retrieval %s: the metadata filter's model "
		    "failed, no filter: %s", c->node->id, err);
		goto out;
	}
	run_usage_add(c->run, rs.usage.prompt_tokens,
	    rs.usage.completion_tokens, rs.usage.total_tokens);
	if ((ans = json_in_text(rs.text)) == NULL ||
	    !json_is_array(json_object_get(ans, "metadata_map")))
		goto out;
	rc = -1;
	if ((conds = json_array()) == NULL)
		goto out;
	json_array_foreach(json_object_get(ans, "metadata_map"), i, it) {
		const char *fn = json_string_value(json_object_get(it,
		    "metadata_field_name"));
		int known = 0;

		json_array_foreach(names, j, f)
			known |= fn != NULL && strcmp(fn,
			    json_string_value(f)) == 0;
		if (!known)
			continue;
		one = json_pack("{s:[{s:s,s:O,s:O*}]}", "conditions", "name",
		    fn, "comparison_operator", json_object_get(it,
		    "comparison_operator"), "value", json_object_get(it,
		    "metadata_field_value"));
		if (one == NULL)
			goto out;
		/* an operator filter.c does not know filters nothing */
		if (kb_filter_check(one, err) == 0 && json_array_append(conds,
		    json_array_get(json_object_get(one, "conditions"), 0)) !=
		    0) {
			json_decref(one);
			goto out;
		}
		json_decref(one);
	}
	rc = 0;
	if (json_array_size(conds) == 0)
		goto out;
	lop = json_string_value(json_object_get(json_object_get(d,
	    "metadata_filtering_conditions"), "logical_operator"));
	if ((*out = json_pack("{s:s,s:O}", "logical_operator", lop ? lop :
	    "or", "conditions", conds)) == NULL)
		rc = -1;
out:
	if (rc != 0)
		node_fail(c, "out of memory");
	llm_response_release(&rs);
	dbuf_free(&b);
	free(user);
	json_decref(names);
	json_decref(ans);
	json_decref(conds);
	return rc;
}

/*
 * The node's metadata filter: in metadata_filtering_mode manual, its
 * metadata_filtering_conditions with each string value rendered against
 * the pool ({{#node.var#}}), as Dify's; in automatic, what the model
 * makes of the query (auto_filter); NULL in *out otherwise (disabled).
 * 0, or -1 with the node failed.
 */
static int
node_filter(struct node_ctx *c, const json_t *ids, const char *query,
    json_t **out)
{
	const json_t	*d = c->node->data;
	json_t		*f, *cond, *v;
	char		*txt;
	size_t		 i;

	*out = NULL;
	if (record_field_is(d, "metadata_filtering_mode", "automatic"))
		return auto_filter(c, ids, query, out);
	if (!record_field_is(d, "metadata_filtering_mode", "manual") ||
	    !json_is_object(json_object_get(d,
	    "metadata_filtering_conditions")))
		return 0;
	if ((f = json_deep_copy(json_object_get(d,
	    "metadata_filtering_conditions"))) == NULL)
		return node_fail(c, "out of memory");
	json_array_foreach(json_object_get(f, "conditions"), i, cond) {
		v = json_object_get(cond, "value");
		if (!json_is_string(v) || strstr(json_string_value(v), "{{#") ==
		    NULL)
			continue;
		if (node_render(c, json_string_value(v), TPL_TEXT, &txt) != 0) {
			json_decref(f);
			return -1;
		}
		if (json_object_set_new(cond, "value", json_string(txt)) != 0) {
			free(txt);
			json_decref(f);
			return node_fail(c, "out of memory");
		}
		free(txt);
	}
	if (kb_filter_check(f, c->err) != 0) {
		json_decref(f);
		return -1;
	}
	*out = f;
	return 0;
}

/*
 * Dify's single retrieval (DatasetRetrieval.single_retrieve with its
 * FunctionCallMultiDatasetRouter): each local dataset of ids a tool named
 * by its id, described by its description (or "useful for when you want
 * to answer queries about the <name>", line breaks removed), the model of
 * single_retrieval_config asked once with the query ("You are a helpful
 * AI assistant.", temperature 0.2, top_p 0.3, max_tokens 1500); the
 * dataset of its first tool call is *chosen (a new reference). One
 * dataset is chosen without asking. No call, a name of none of them, or
 * a model that fails: *chosen NULL, nothing retrieved, as Dify's router
 * answers None then (the failure logged). -1 only when out of memory.
 */
static int
single_route(struct node_ctx *c, const json_t *ids, const char *query,
    json_t **chosen)
{
	const json_t		*model = json_object_get(json_object_get(
				    c->node->data, "single_retrieval_config"),
				    "model");
	json_t			*dss = NULL, *id, *ds, *params = NULL;
	json_t			*schema = NULL, *descs = NULL;
	struct llm_tool		*tools = NULL;
	struct llm_message	 m[2];
	struct llm_request	 rq;
	struct llm_response	 rs;
	char			 err[ENGINE_ERRMAX] = "";
	const char		*d;
	size_t			 i, n = 0;
	int			 rc = -1;

	*chosen = NULL;
	memset(&rs, 0, sizeof(rs));
	if ((dss = json_array()) == NULL || (descs = json_array()) == NULL)
		goto out;
	json_array_foreach((json_t *)ids, i, id)
		if (json_is_string(id) && (ds = kb_dataset_load(c->run->e,
		    json_string_value(id))) != NULL &&
		    json_array_append_new(dss, ds) != 0)
			goto out;
	if (json_array_size(dss) == 1) {
		*chosen = json_incref(json_array_get(dss, 0));
		rc = 0;
		goto out;
	}
	if (json_array_size(dss) == 0 || json_string_value(json_object_get(
	    model, "name")) == NULL || json_string_value(json_object_get(model,
	    "provider")) == NULL) {
		rc = 0;
		goto out;
	}
	if ((tools = calloc(json_array_size(dss), sizeof(*tools))) == NULL ||
	    (schema = json_pack("{s:s,s:{},s:[]}", "type", "object",
	    "properties", "required")) == NULL ||
	    (params = json_pack("{s:f,s:f,s:i}", "temperature", 0.2, "top_p",
	    0.3, "max_tokens", 1500)) == NULL)
		goto out;
	json_array_foreach(dss, i, ds) {
		json_t	*t;
		char	*buf, *q;

		d = json_string_value(json_object_get(ds, "description"));
		t = d != NULL && *d != '\0' ? json_string(d) : json_sprintf(
		    "useful for when you want to answer queries about the %s",
		    json_string_value(json_object_get(ds, "name")));
		if (t == NULL || (buf = strdup(json_string_value(t))) == NULL) {
			json_decref(t);
			goto out;
		}
		json_decref(t);
		/* Dify drops line breaks from the description */
		for (d = buf, q = buf; *d != '\0'; d++)
			if (*d != '\n' && *d != '\r')
				*q++ = *d;
		*q = '\0';
		t = json_string(buf);
		free(buf);
		if (t == NULL || json_array_append_new(descs, t) != 0)
			goto out;
		tools[n].name = json_string_value(json_object_get(ds, "id"));
		tools[n].description = json_string_value(t);
		tools[n].parameters = schema;
		n++;
	}
	memset(m, 0, sizeof(m));
	m[0].role = LLM_SYSTEM;
	m[0].content = "You are a helpful AI assistant.";
	m[1].role = LLM_USER;
	m[1].content = query;
	memset(&rq, 0, sizeof(rq));
	rq.model = json_string_value(json_object_get(model, "name"));
	rq.messages = m;
	rq.nmessages = 2;
	rq.tools = tools;
	rq.ntools = n;
	rq.params = params;
	if (llm_chat(c->run->e, json_string_value(json_object_get(model,
	    "provider")), &rq, err, &rs) != 0) {
		log_warn("knowledge-retrieval %s: single retrieval's model "
		    "failed, nothing retrieved: %s", c->node->id, err);
		rc = 0;
		goto out;
	}
	run_usage_add(c->run, rs.usage.prompt_tokens,
	    rs.usage.completion_tokens, rs.usage.total_tokens);
	if (rs.ntool_calls > 0 && rs.tool_calls[0].name != NULL)
		json_array_foreach(dss, i, ds)
			if (record_field_is(ds, "id", rs.tool_calls[0].name)) {
				*chosen = json_incref(ds);
				break;
			}
	rc = 0;
out:
	if (rc != 0)
		node_fail(c, "out of memory");
	llm_response_release(&rs);
	free(tools);
	json_decref(dss);
	json_decref(descs);
	json_decref(schema);
	json_decref(params);
	return rc;
}

static int
knowledge_run(struct node_ctx *c)
{
	const json_t	*d = c->node->data;
	const json_t	*mcfg = json_object_get(d, "multiple_retrieval_config");
	json_t		*ids = json_object_get(d, "dataset_ids"), *id, *recs;
	const json_t	*tk, *rm = NULL;
	json_t		*rec, *q, *all = NULL, *res = NULL, **sorted = NULL;
	json_t		*single = NULL, *filter = NULL, *frm = NULL;
	const char	*mode = json_string_value(json_object_get(d,
			    "retrieval_mode"));
	const char	*rprov = NULL, *rmodel = NULL;
	char		*query = NULL;
	size_t		 i, j, n, nlocal = 0;
	int		 top_k, rc = -1, rerank;
	double		 th = 0;

	q = node_resolve(c, json_object_get(d, "query_variable_selector"));
	if (q != NULL)
		tpl_value_text(q, TPL_TEXT, &query);
	json_decref(q);
	if (query == NULL || *query == '\0') {
		free(query);
		return node_fail(c, "the query is empty");
	}
	if (json_object_set_new(c->inputs, "query", json_string(query)) != 0) {
		free(query);
		return node_fail(c, "out of memory");
	}
	/* knowledge-retrieval-v2 names its knowledge bases control spaces
	 * and its count top_n */
	if (ids == NULL)
		ids = json_object_get(d, "control_space_ids");
	tk = json_object_get(mcfg, "top_k");
	if (tk == NULL)
		tk = json_object_get(d, "top_n");
	top_k = (int)json_integer_value(tk);
	if (top_k <= 0)
		top_k = 4;
	if (json_is_number(json_object_get(mcfg, "score_threshold")) &&
	    json_is_true(json_object_get(mcfg, "score_threshold_enabled")))
		th = json_number_value(json_object_get(mcfg,
		    "score_threshold"));
	rerank = rerank_of(mcfg, &rprov, &rmodel);
	if (node_filter(c, ids, query, &filter) != 0)
		goto out;
	json_array_foreach(ids, i, id)
		nlocal += json_is_string(id) && kb_dataset_exists(c->run->e,
		    json_string_value(id));
	/*
	 * single mode: the model picks one dataset from their descriptions
	 * (single_route), then it is searched by its own settings (search
	 * method, top_k, threshold, rerank). None picked: nothing retrieved.
	 */
	if (mode != NULL && strcmp(mode, "single") == 0 && nlocal >= 1) {
		if (single_route(c, ids, query, &single) != 0)
			goto out;
		if (single == NULL) {
			if ((res = json_array()) == NULL || json_object_set(
			    c->outputs, "result", res) != 0) {
				node_fail(c, "out of memory");
				goto out;
			}
			rc = 0;
			goto out;
		}
		rm = json_object_get(single, "retrieval_model_dict");
		top_k = json_integer_value(json_object_get(rm, "top_k")) > 0 ?
		    (int)json_integer_value(json_object_get(rm, "top_k")) : 4;
		th = json_is_true(json_object_get(rm,
		    "score_threshold_enabled")) ? json_number_value(
		    json_object_get(rm, "score_threshold")) : 0;
		rerank = rerank_of(rm, &rprov, &rmodel);
	}
	/* the filter rides in the retrieval model kb_search reads (without
	 * a search_method it takes the dataset's) */
	if (filter != NULL && ((frm = rm ? json_deep_copy(rm) : json_object())
	    == NULL || json_object_set(frm, "metadata_filtering_conditions",
	    filter) != 0)) {
		node_fail(c, "out of memory");
		goto out;
	}
	if (frm != NULL)
		rm = frm;
	all = json_array();
	json_array_foreach(ids, i, id) {
		recs = NULL;
		if (!json_is_string(id))
			continue;
		if (single != NULL && strcmp(json_string_value(id),
		    json_string_value(json_object_get(single, "id"))) != 0)
			continue;
		if (kb_dataset_exists(c->run->e, json_string_value(id))) {
			/* reranked: the threshold applies to its scores */
			if (local_search(c, json_string_value(id), query, rm,
			    top_k, rerank ? 0 : th, all) != 0)
				goto out;
			continue;
		}
		if (knowledge_retrieve(c->run->e, json_string_value(id), query,
		    top_k, rerank ? 0 : th, c->err, &recs) != 0)
			goto out;
		json_array_foreach(recs, j, rec) {
			json_t *meta = json_is_object(json_object_get(rec,
			    "metadata")) ? json_deep_copy(json_object_get(rec,
			    "metadata")) : json_object();
			json_t *score = json_object_get(rec, "score");
			int	bad = 0;

			json_t *title = json_object_get(rec, "title");

			/* Dify's external source (knowledge_retrieval_node:
			 * data_source_type external, the title naming the
			 * document, the record's metadata as doc_metadata) */
			bad |= json_object_set_new(meta, "doc_metadata",
			    json_is_object(json_object_get(rec, "metadata")) ?
			    json_deep_copy(json_object_get(rec, "metadata")) :
			    json_null());
			bad |= json_object_set_new(meta, "_source",
			    json_string("knowledge"));
			bad |= json_object_set(meta, "dataset_id", id);
			bad |= json_object_set_new(meta, "data_source_type",
			    json_string("external"));
			bad |= json_object_set_new(meta, "retriever_from",
			    json_string("workflow"));
			if (json_is_string(title)) {
				bad |= json_object_set(meta, "document_name",
				    title);
				if (!json_is_string(json_object_get(meta,
				    "document_id")))
					bad |= json_object_set(meta,
					    "document_id", title);
			}
			bad |= json_object_set_new(meta, "score", score ?
			    json_incref(score) : json_real(0));
			/* "o": the references are the record's, or new */
			bad |= json_array_append_new(all, json_pack(
			    "{s:o,s:o,s:o}", "content", json_object_get(rec,
			    "content") ? json_incref(json_object_get(rec,
			    "content")) : json_string(""), "title",
			    json_object_get(rec, "title") ? json_incref(
			    json_object_get(rec, "title")) : json_string(""),
			    "metadata", meta));
			if (bad) {
				json_decref(recs);
				node_fail(c, "out of memory");
				goto out;
			}
		}
		json_decref(recs);
	}
	if (rerank && items_rerank(c, rprov, rmodel, query, th, &all) != 0)
		goto out;
	n = json_array_size(all);
	if ((sorted = calloc(n + 1, sizeof(*sorted))) == NULL) {
		node_fail(c, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++)
		sorted[i] = json_array_get(all, i);
	qsort(sorted, n, sizeof(*sorted), by_score);
	res = json_array();
	for (i = 0; i < n && (int)i < top_k; i++)
		if (json_object_set_new(json_object_get(sorted[i], "metadata"),
		    "position", json_integer((json_int_t)i + 1)) != 0 ||
		    json_array_append(res, sorted[i]) != 0) {
			node_fail(c, "out of memory");
			goto out;
		}
	if (json_object_set(c->outputs, "result", res) != 0) {
		node_fail(c, "out of memory");
		goto out;
	}
	rc = 0;
out:
	free(sorted);
	free(query);
	json_decref(all);
	json_decref(res);
	json_decref(single);
	json_decref(filter);
	json_decref(frm);
	return rc;
}

const struct node_type node_knowledge_retrieval = {
	"knowledge-retrieval", knowledge_run, 0
};

/* Dify's knowledge-retrieval-v2 (control_space_ids, top_n): the same
 * retrieval over the same knowledge bases, the same `result`. */
const struct node_type node_knowledge_retrieval_v2 = {
	"knowledge-retrieval-v2", knowledge_run, 0
};
