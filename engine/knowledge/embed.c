/*
 * embed.c — embeddings for high_quality datasets through the model
 * provider entries (engine/llm/providers.c): OpenAI-compatible
 *
 *	POST {base_url}/embeddings {model, input: [..], encoding_format}
 *	-> {data: [{index, embedding: [float]}]}
 *
 * in batches of knowledge.embed_batch texts, each retried
 * knowledge.embed_retries times on a transient answer, every vector
 * L2-normalised as Dify does (cached_embedding.py).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "engine/knowledge/knowledge.h"
#include "engine/llm/llm.h"

#define KB_DIM_MAX 8192

/* One request for texts[0..n): vectors into out + i * dim (*dim set by
 * the first answer, checked on the next ones). */
static int
embed_batch(struct engine *e, const struct llm_endpoint *ep,
    const char *model, const char *const *texts, size_t n, char *err,
    float **out, size_t *dim, size_t total, size_t at)
{
	struct outbound_req	 rq;
	struct outbound_resp	 rs;
	struct curl_slist	*hl = NULL;
	json_t			*body = NULL, *in, *res = NULL, *d, *v, *x;
	char			*bs = NULL, *url = NULL, auth[1200];
	size_t			 i, j, idx;
	double			 norm;
	int			 rc = ENGINE_ENOMEM, tries;

	memset(&rs, 0, sizeof(rs));
	if ((in = json_array()) == NULL)
		goto out;
	for (i = 0; i < n; i++)
		if (json_array_append_new(in, json_string(texts[i])) != 0) {
			json_decref(in);
			goto out;
		}
	if ((body = json_pack("{s:s,s:o,s:s}", "model", model, "input", in,
	    "encoding_format", "float")) == NULL ||
	    (bs = json_dumps(body, JSON_COMPACT)) == NULL ||
	    (url = llm_url(ep->base_url, "embeddings")) == NULL)
		goto out;
	hl = curl_slist_append(hl, "Content-Type: application/json");
	if (ep->api_key != NULL && *ep->api_key != '\0') {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s",
		    ep->api_key);
		hl = curl_slist_append(hl, auth);
	}
	memset(&rq, 0, sizeof(rq));
	rq.method = "POST";
	rq.url = url;
	rq.headers = hl;
	rq.body = bs;
	rq.body_len = strlen(bs);
	rq.trusted = 1;	/* the admin configured this provider */
	for (tries = 0;; tries++) {
		outbound_resp_release(&rs);
		memset(&rs, 0, sizeof(rs));
		rc = outbound_fetch(e, &rq, err, &rs);
		if (rc == 0 && rs.status == 200)
			break;
		if (tries >= e->conf->kb_embed_retries || (rc == 0 &&
		    !llm_status_transient(rs.status))) {
			if (rc == 0) {
				snprintf(err, ENGINE_ERRMAX, "embedding model "
				    "%s: HTTP %ld %.200s", model, rs.status,
				    rs.body ? rs.body : "");
				llm_scrub(err, ep->api_key);
				rc = ENGINE_EFETCH;
			}
			goto out;
		}
		/* 0.25 s, 0.5 s, 1 s, ... */
		struct timespec ts = { 0, 250000000L };
		for (int k = 0; k < tries && ts.tv_sec < 8; k++) {
			ts.tv_sec = ts.tv_sec * 2 + (ts.tv_nsec * 2) /
			    1000000000L;
			ts.tv_nsec = (ts.tv_nsec * 2) % 1000000000L;
		}
		nanosleep(&ts, NULL);
	}
	rc = ENGINE_EFETCH;
	res = json_loads(rs.body ? rs.body : "", 0, NULL);
	d = json_object_get(res, "data");
	if (!json_is_array(d) || json_array_size(d) != n) {
		snprintf(err, ENGINE_ERRMAX, "embedding model %s: the answer "
		    "has no data[] of %zu vectors", model, n);
		goto out;
	}
	json_array_foreach(d, i, x) {
		v = json_object_get(x, "embedding");
		idx = json_is_integer(json_object_get(x, "index")) ?
		    (size_t)json_integer_value(json_object_get(x, "index")) : i;
		if (!json_is_array(v) || json_array_size(v) == 0 ||
		    json_array_size(v) > KB_DIM_MAX || idx >= n ||
		    (*dim != 0 && json_array_size(v) != *dim)) {
			snprintf(err, ENGINE_ERRMAX, "embedding model %s: "
			    "vector %zu is not %zu numbers", model, i, *dim);
			goto out;
		}
		if (*dim == 0) {
			*dim = json_array_size(v);
			if ((*out = calloc(total * *dim, sizeof(float))) ==
			    NULL) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
		}
		norm = 0;
		for (j = 0; j < *dim; j++) {
			double f = json_number_value(json_array_get(v, j));

			norm += f * f;
		}
		norm = norm > 0 ? sqrt(norm) : 1;
		for (j = 0; j < *dim; j++)
			(*out)[(at + idx) * *dim + j] = (float)(json_number_value(
			    json_array_get(v, j)) / norm);
	}
	rc = 0;
out:
	outbound_resp_release(&rs);
	curl_slist_free_all(hl);
	json_decref(body);
	json_decref(res);
	free(bs);
	free(url);
	return rc;
}

int
kb_embed(struct engine *e, const char *provider, const char *model,
    const char *const *texts, size_t n, char *err, float **out, size_t *dim)
{
	struct llm_endpoint	 ep;
	size_t			 i, b;
	int			 rc;

	*out = NULL;
	*dim = 0;
	memset(&ep, 0, sizeof(ep));
	if ((rc = llm_provider_resolve(e, provider, model, err, &ep)) != 0)
		return rc;
	b = (size_t)e->conf->kb_embed_batch;
	for (i = 0; i < n && rc == 0; i += b)
		rc = embed_batch(e, &ep, model, texts + i, n - i < b ? n - i : b,
		    err, out, dim, n, i);
	llm_endpoint_release(&ep);
	if (rc != 0) {
		free(*out);
		*out = NULL;
	}
	return rc;
}

/* ====== Rerank ====== */

int
kb_rerank(struct engine *e, const char *provider, const char *model,
    const char *query, const char *const *texts, size_t n, char *err,
    double **scores)
{
	struct llm_endpoint	 ep;
	struct outbound_req	 rq;
	struct outbound_resp	 rs;
	struct curl_slist	*hl = NULL;
	json_t			*body = NULL, *docs = NULL, *res = NULL, *x;
	char			*bs = NULL, *url = NULL, auth[1200];
	size_t			 i, idx;
	int			 rc;

	*scores = NULL;
	memset(&ep, 0, sizeof(ep));
	memset(&rs, 0, sizeof(rs));
	if ((rc = llm_provider_resolve(e, provider, model, err, &ep)) != 0)
		return rc;
	rc = ENGINE_ENOMEM;
	if ((docs = json_array()) == NULL)
		goto out;
	for (i = 0; i < n; i++)
		if (json_array_append_new(docs, json_string(texts[i])) != 0)
			goto out;
	if ((body = json_pack("{s:s,s:s,s:O,s:I}", "model", model, "query",
	    query, "documents", docs, "top_n", (json_int_t)n)) == NULL ||
	    (bs = json_dumps(body, JSON_COMPACT)) == NULL ||
	    (url = llm_url(ep.base_url, "rerank")) == NULL ||
	    (*scores = calloc(n ? n : 1, sizeof(double))) == NULL)
		goto out;
	hl = curl_slist_append(hl, "Content-Type: application/json");
	if (ep.api_key != NULL && *ep.api_key != '\0') {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s",
		    ep.api_key);
		hl = curl_slist_append(hl, auth);
	}
	memset(&rq, 0, sizeof(rq));
	rq.method = "POST";
	rq.url = url;
	rq.headers = hl;
	rq.body = bs;
	rq.body_len = strlen(bs);
	rq.trusted = 1;	/* the admin configured this provider */
	if ((rc = outbound_fetch(e, &rq, err, &rs)) != 0)
		goto out;
	rc = ENGINE_EFETCH;
	if (rs.status != 200) {
		snprintf(err, ENGINE_ERRMAX, "rerank model %s: HTTP %ld %.200s",
		    model, rs.status, rs.body ? rs.body : "");
		llm_scrub(err, ep.api_key);
		goto out;
	}
	res = json_loads(rs.body ? rs.body : "", 0, NULL);
	if (!json_is_array(json_object_get(res, "results"))) {
		snprintf(err, ENGINE_ERRMAX, "rerank model %s: the answer has "
		    "no results[]", model);
		goto out;
	}
	/* documents the model leaves out score 0 */
	json_array_foreach(json_object_get(res, "results"), i, x) {
		idx = (size_t)json_integer_value(json_object_get(x, "index"));
		if (idx < n)
			(*scores)[idx] = json_number_value(json_object_get(x,
			    "relevance_score"));
	}
	rc = 0;
out:
	if (rc != 0) {
		free(*scores);
		*scores = NULL;
	}
	outbound_resp_release(&rs);
	curl_slist_free_all(hl);
	llm_endpoint_release(&ep);
	json_decref(body);
	json_decref(docs);
	json_decref(res);
	free(bs);
	free(url);
	return rc;
}
