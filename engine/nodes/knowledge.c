/*
 * knowledge.c — the knowledge-retrieval node through Dify's External
 * Knowledge API (engine/records/knowledge.c): each dataset is asked for the
 * query, the records are merged best first and cut to top_k; output `result`
 * is Dify's [{content, title, metadata: {_source, dataset_id, score, ...}}].
 * A dataset that is not configured fails the node, saying how to set it.
 * A dataset id this server holds (engine/knowledge/) is searched locally
 * instead, its items carrying Dify's metadata (dataset_name, document_id,
 * document_name, segment_id, ...); the result is numbered 1..N by
 * metadata.position, best first.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/knowledge/knowledge.h"
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

	return json_pack("{s:{s:s,s:O,s:O,s:O,s:O,s:O,s:O,s:s,s:O,s:[],"
	    "s:O,s:O,s:O,s:O,s:O},s:O,s:n,s:O,s:n}",
	    "metadata", "_source", "knowledge", "dataset_id",
	    json_object_get(ds, "id"), "dataset_name", json_object_get(ds,
	    "name"), "document_id", json_object_get(doc, "id"),
	    "document_name", json_object_get(doc, "name"), "data_source_type",
	    json_object_get(doc, "data_source_type"), "segment_id",
	    json_object_get(seg, "id"), "retriever_from", "workflow", "score",
	    json_object_get(h, "score"), "child_chunks", "segment_hit_count",
	    json_object_get(seg, "hit_count"), "segment_word_count",
	    json_object_get(seg, "word_count"), "segment_position",
	    json_object_get(seg, "position"), "segment_index_node_hash",
	    json_object_get(seg, "index_node_hash"), "doc_metadata",
	    json_object_get(doc, "doc_metadata"), "title", json_object_get(doc,
	    "name"), "files", "content", json_object_get(seg, "content"),
	    "summary");
}

static int
knowledge_run(struct node_ctx *c)
{
	const json_t	*d = c->node->data;
	const json_t	*mcfg = json_object_get(d, "multiple_retrieval_config");
	json_t		*ids = json_object_get(d, "dataset_ids"), *id, *recs;
	const json_t	*tk;
	json_t		*rec, *q, *all = NULL, *res = NULL, **sorted = NULL;
	char		*query = NULL;
	size_t		 i, j, n;
	int		 top_k, rc = -1;
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
	all = json_array();
	json_array_foreach(ids, i, id) {
		recs = NULL;
		if (!json_is_string(id))
			continue;
		if (kb_dataset_exists(c->run->e, json_string_value(id))) {
			if (kb_search(c->run->e, json_string_value(id), query,
			    NULL, top_k, th, c->err, &recs) != 0)
				goto out;
			json_array_foreach(recs, j, rec) {
				json_t *it = local_item(rec);

				if (it == NULL || json_array_append_new(all,
				    it) != 0) {
					json_decref(recs);
					node_fail(c, "out of memory");
					goto out;
				}
			}
			json_decref(recs);
			continue;
		}
		if (knowledge_retrieve(c->run->e, json_string_value(id), query,
		    top_k, th, c->err, &recs) != 0)
			goto out;
		json_array_foreach(recs, j, rec) {
			json_t *meta = json_is_object(json_object_get(rec,
			    "metadata")) ? json_deep_copy(json_object_get(rec,
			    "metadata")) : json_object();
			json_t *score = json_object_get(rec, "score");
			int	bad = 0;

			bad |= json_object_set_new(meta, "_source",
			    json_string("knowledge"));
			bad |= json_object_set(meta, "dataset_id", id);
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
