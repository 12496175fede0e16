/*
 * knowledge.c — knowledge bases reached through Dify's External Knowledge
 * API: settings per dataset id ({endpoint, api_key, knowledge_id}, the key
 * encrypted at rest) and the retrieval call itself:
 *
 *	POST {endpoint}/retrieval  Authorization: Bearer <api_key>
 *	{knowledge_id, query, retrieval_setting: {top_k, score_threshold}}
 *	-> {records: [{content, score, title, metadata}]}
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "engine/records/records.h"

#define KB_KEY_PREFIX "knowledge/"

struct kb_put {
	char	 key[160];
	json_t	*rec;
	int	 del;
};

static int
kb_put_fn(struct store_txn *t, void *arg)
{
	struct kb_put *p = arg;

	if (p->del)
		return store_del(t, STORE_DB_SETTINGS, p->key, strlen(p->key));
	return store_put_json(t, STORE_DB_SETTINGS, p->key, p->rec, 0);
}

static int
kb_key(const char *id, char *buf, size_t n, char *err)
{
	if (id == NULL || *id == '\0' || strlen(id) > 128 || strchr(id, '/'))
		return engine_invalid(err, "a dataset id is 1 to 128 "
		    "characters without '/'");
	snprintf(buf, n, KB_KEY_PREFIX "%s", id);
	return 0;
}

int
engine_knowledge_set(struct engine *e, const char *dataset_id,
    const json_t *in, char *err)
{
	struct kb_put	 p;
	json_t		*old = NULL;
	const char	*ep = json_string_value(json_object_get(in, "endpoint"));
	const char	*key = json_string_value(json_object_get(in, "api_key"));
	const char	*kid = json_string_value(json_object_get(in,
			    "knowledge_id"));
	char		*enc = NULL;
	int		 rc;

	memset(&p, 0, sizeof(p));
	if ((rc = kb_key(dataset_id, p.key, sizeof(p.key), err)) != 0)
		return rc;
	if (ep == NULL || (strncmp(ep, "http://", 7) != 0 &&
	    strncmp(ep, "https://", 8) != 0))
		return engine_invalid(err, "endpoint must be an http(s) URL");
	if (kid == NULL || *kid == '\0')
		kid = dataset_id;
	if (key != NULL && strcmp(key, ENGINE_SECRET_MASK) == 0) {
		/* the mask keeps the stored key */
		struct store_txn *t = NULL;

		if (store_read_begin(e->store, &t) == 0) {
			store_get_json(t, STORE_DB_SETTINGS, p.key, &old);
			store_read_end(t);
		}
		if (json_string_value(json_object_get(old, "api_key")) != NULL)
			enc = strdup(json_string_value(json_object_get(old,
			    "api_key")));
		json_decref(old);
	} else if (key != NULL && *key != '\0' &&
	    (rc = secret_encrypt(e, p.key, key, err, &enc)) != 0)
		return rc;
	p.rec = json_pack("{s:s,s:s,s:s?}", "endpoint", ep, "knowledge_id",
	    kid, "api_key", enc);
	free(enc);
	if (p.rec == NULL)
		return ENGINE_ENOMEM;
	rc = engine_from_store(store_write(e->store, kb_put_fn, &p));
	json_decref(p.rec);
	return rc;
}

int
engine_knowledge_delete(struct engine *e, const char *dataset_id, char *err)
{
	struct kb_put	p;
	int		rc;

	memset(&p, 0, sizeof(p));
	if ((rc = kb_key(dataset_id, p.key, sizeof(p.key), err)) != 0)
		return rc;
	p.del = 1;
	return engine_from_store(store_write(e->store, kb_put_fn, &p));
}

int
engine_knowledge_list(struct engine *e, json_t **out)
{
	struct store_txn	*t = NULL;
	json_t			*all = NULL, *data = NULL, *rec;
	const char		*k;
	int			 rc;

	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	rc = records_collect(t, STORE_DB_SETTINGS, KB_KEY_PREFIX, NULL, 0,
	    &all);
	store_read_end(t);
	if (rc != 0)
		return engine_from_store(rc);
	rc = ENGINE_ENOMEM;
	if ((data = json_array()) == NULL)
		goto out;
	json_object_foreach(all, k, rec)
		if (!json_is_null(rec) && json_array_append_new(data,
		    json_pack("{s:s,s:O,s:O,s:s}", "dataset_id",
		    k + strlen(KB_KEY_PREFIX), "endpoint", json_object_get(rec,
		    "endpoint"), "knowledge_id", json_object_get(rec,
		    "knowledge_id"), "api_key", json_object_get(rec,
		    "api_key") ? ENGINE_SECRET_MASK : "")) != 0)
			goto out;
	if ((*out = json_pack("{s:O}", "data", data)) != NULL)
		rc = 0;
out:
	json_decref(all);
	json_decref(data);
	return rc;
}

int
knowledge_retrieve(struct engine *e, const char *dataset_id,
    const char *query, int top_k, double threshold, char *err, json_t **out)
{
	struct store_txn	*t = NULL;
	struct outbound_req	 rq;
	struct outbound_resp	 rs;
	struct curl_slist	*hl = NULL;
	json_t			*cfg = NULL, *body = NULL, *res = NULL;
	char			 key[160], url[1200], *bs = NULL, *api = NULL;
	char			 auth[600] = "";
	const char		*ep, *enc;
	int			 rc;

	memset(&rs, 0, sizeof(rs));
	if ((rc = kb_key(dataset_id, key, sizeof(key), err)) != 0)
		return rc;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	rc = store_get_json(t, STORE_DB_SETTINGS, key, &cfg);
	store_read_end(t);
	if (rc != 0)
		return engine_invalid(err, "knowledge base '%s' is not "
		    "configured: set its External Knowledge API (endpoint, "
		    "api_key) with POST /console/api/workspaces/current/"
		    "knowledge-bases/%s", dataset_id, dataset_id);
	ep = json_string_value(json_object_get(cfg, "endpoint"));
	if ((enc = json_string_value(json_object_get(cfg, "api_key"))) != NULL &&
	    (rc = secret_decrypt(e, key, enc, err, &api)) != 0)
		goto out;
	snprintf(url, sizeof(url), "%s%sretrieval", ep,
	    ep[strlen(ep) - 1] == '/' ? "" : "/");
	body = json_pack("{s:O,s:s,s:{s:i,s:f}}", "knowledge_id",
	    json_object_get(cfg, "knowledge_id"), "query", query,
	    "retrieval_setting", "top_k", top_k, "score_threshold", threshold);
	bs = json_dumps(body, JSON_COMPACT);
	hl = curl_slist_append(hl, "Content-Type: application/json");
	if (api != NULL) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", api);
		hl = curl_slist_append(hl, auth);
	}
	memset(&rq, 0, sizeof(rq));
	rq.method = "POST";
	rq.url = url;
	rq.headers = hl;
	rq.body = bs;
	rq.body_len = bs ? strlen(bs) : 0;
	rq.trusted = 1;	/* the admin configured this endpoint */
	if ((rc = outbound_fetch(e, &rq, err, &rs)) != 0)
		goto out;
	if (rs.status != 200) {
		json_t *eb = json_loads(rs.body ? rs.body : "", 0, NULL);

		rc = engine_invalid(err, "knowledge base '%s': HTTP %ld %s",
		    dataset_id, rs.status, json_string_value(json_object_get(
		    eb, "error_msg")) ? json_string_value(json_object_get(eb,
		    "error_msg")) : "");
		json_decref(eb);
		rc = ENGINE_EFETCH;
		goto out;
	}
	res = json_loads(rs.body, 0, NULL);
	if (!json_is_array(json_object_get(res, "records"))) {
		rc = engine_invalid(err, "knowledge base '%s' answered without "
		    "records", dataset_id);
		rc = ENGINE_EFETCH;
		goto out;
	}
	*out = json_incref(json_object_get(res, "records"));
out:
	if (auth[0] != '\0')
		memset(auth, 0, sizeof(auth));
	secret_free(api);
	curl_slist_free_all(hl);
	free(bs);
	json_decref(body);
	json_decref(res);
	json_decref(cfg);
	outbound_resp_release(&rs);
	return rc;
}
