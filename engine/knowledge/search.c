/*
 * search.c — search over a local dataset: BM25 over the tokens of
 * chunk.c (CJK code points and their pairs, words), read from the stored
 * keyword index of index.c or, as a baseline and for documents indexed
 * before it, computed from every segment; exact vector search (brute
 * force over the L2-normalised float vectors of a high_quality dataset:
 * cosine is a dot product); hybrid as Dify's weighted_score,
 * vector_weight * cosine + keyword_weight * the keyword score. Also the
 * reading of dataset records, which kb.c uses (never the other way
 * round). docs/knowledge.md has the figures.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/knowledge/knowledge.h"
#include "engine/records/records.h"

/* ====== Datasets ====== */

int
kb_id_ok(const char *id)
{
	return id != NULL && engine_uuid_check(id) == 0;
}

json_t *
kb_dataset_load(struct engine *e, const char *ds_id)
{
	struct store_txn	*t = NULL;
	char			 key[128];
	json_t			*ds = NULL;

	if (!kb_id_ok(ds_id) || store_read_begin(e->store, &t) != 0)
		return NULL;
	snprintf(key, sizeof(key), KB_DS "%s", ds_id);
	if (store_get_json(t, STORE_DB_SETTINGS, key, &ds) != 0)
		ds = NULL;
	store_read_end(t);
	return ds;
}

int
kb_dataset_exists(struct engine *e, const char *ds_id)
{
	json_t	*ds = kb_dataset_load(e, ds_id);
	int	 yes = ds != NULL;

	json_decref(ds);
	return yes;
}

/* ====== Keyword and vector search ====== */

#define Q_TERMS_MAX	64	/* distinct query terms kept */
#define BM25_K1		1.2
#define BM25_B		0.75

struct qterms {
	char	 t[Q_TERMS_MAX][KB_TOKEN_MAX + 8];
	size_t	 len[Q_TERMS_MAX];
	size_t	 n;
};

static int
qterm_add(const char *tok, size_t n, void *arg)
{
	struct qterms	*q = arg;
	size_t		 i;

	if (n >= sizeof(q->t[0]))
		return 0;
	for (i = 0; i < q->n; i++)
		if (q->len[i] == n && memcmp(q->t[i], tok, n) == 0)
			return 0;
	if (q->n == Q_TERMS_MAX)
		return 0;
	memcpy(q->t[q->n], tok, n);
	q->len[q->n++] = n;
	return 0;
}

struct seg_tf {
	const struct qterms	*q;
	unsigned		 tf[Q_TERMS_MAX];
	size_t			 len;
};

static int
tf_add(const char *tok, size_t n, void *arg)
{
	struct seg_tf	*s = arg;
	size_t		 i;

	s->len++;
	for (i = 0; i < s->q->n; i++)
		if (s->q->len[i] == n && memcmp(s->q->t[i], tok, n) == 0) {
			s->tf[i]++;
			break;
		}
	return 0;
}

struct cand {
	json_t		*seg;		/* the segment record (NULL: not
					   read yet) */
	char		 doc[40];	/* its document id */
	unsigned	 tf[Q_TERMS_MAX];
	size_t		 len;
	double		 kw, vec, score;
	char		 key[128];	/* <dataset>/<document>/<position> */
};

struct vhit {
	char	key[128];
	double	cos;
};

static int
by_cos(const void *a, const void *b)
{
	const struct vhit *x = a, *y = b;

	return x->cos < y->cos ? 1 : x->cos > y->cos ? -1 : 0;
}

/* Grows the candidates by one; NULL when out of memory. */
static struct cand *
cand_new(struct cand **c, size_t *nc, size_t *cap)
{
	struct cand *n2;

	if (*nc == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		if ((n2 = realloc(*c, *cap * sizeof(**c))) == NULL)
			return NULL;
		*c = n2;
	}
	memset(&(*c)[*nc], 0, sizeof(**c));
	return &(*c)[(*nc)++];
}

static int
by_score(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return strcmp(x->key, y->key);	/* ties: in key order */
}

/* A document's segments are searched when it is completed, enabled and
 * not archived. */
static int
doc_searchable(const json_t *d)
{
	return record_field_is(d, "indexing_status", "completed") &&
	    json_is_true(json_object_get(d, "enabled")) &&
	    !json_is_true(json_object_get(d, "archived"));
}

/* What the postings of query term i give: a candidate per segment. */
struct ix_walk {
	const char	 *ds;
	struct cand	**c;
	size_t		 *nc, *cap;
	json_t		 *index;	/* key -> index into *c */
	size_t		 *df;
};

static int
ix_posting(size_t term, const char *doc, int pos, unsigned tf, unsigned len,
    void *arg)
{
	struct ix_walk	*w = arg;
	struct cand	*cd;
	json_t		*ix;
	char		 key[128];

	snprintf(key, sizeof(key), "%s/%s/%08d", w->ds, doc, pos);
	w->df[term]++;
	if ((ix = json_object_get(w->index, key)) != NULL)
		cd = &(*w->c)[json_integer_value(ix)];
	else {
		if ((cd = cand_new(w->c, w->nc, w->cap)) == NULL)
			return STORE_ENOMEM;
		snprintf(cd->key, sizeof(cd->key), "%s", key);
		snprintf(cd->doc, sizeof(cd->doc), "%s", doc);
		cd->len = len;
		if (json_object_set_new(w->index, key, json_integer(
		    (json_int_t)*w->nc - 1)) != 0)
			return STORE_ENOMEM;
	}
	cd->tf[term] = tf;
	return 0;
}

/* A copy of rec without its "_" members (NULL when out of memory). */
static json_t *
rec_public(const json_t *rec)
{
	json_t		*o = json_object(), *v;
	const char	*k;

	if (o == NULL)
		return NULL;
	json_object_foreach((json_t *)rec, k, v)
		if (k[0] != '_' && json_object_set(o, k, v) != 0) {
			json_decref(o);
			return NULL;
		}
	return o;
}

/*
 * Candidate cd, a child chunk of parent-child document d, joins the hit
 * of its parent in res (pars: parent key -> index in res), made when it
 * is the parent's first: Dify's retrieval answers the parent segment
 * with the children that matched, {id, content, position, score}, best
 * first, and the best child's score. A parent gone or disabled: no hit.
 * 0, or a STORE_* code.
 */
static int
hit_child(struct store_txn *t, const json_t *ds, const json_t *d,
    const struct cand *cd, json_t *pars, json_t *res)
{
	char		 pkey[160];
	const void	*v;
	size_t		 vlen;
	json_t		*ix, *par = NULL, *h, *ch;
	int		 rc;

	snprintf(pkey, sizeof(pkey), KB_PAR "%s/%s/%08d",
	    json_string_value(json_object_get(ds, "id")), cd->doc,
	    (int)json_integer_value(json_object_get(cd->seg, "_parent")));
	if ((ch = json_pack("{s:O,s:O,s:O,s:f}", "id", json_object_get(
	    cd->seg, "id"), "content", json_object_get(cd->seg, "content"),
	    "position", json_object_get(cd->seg, "position"), "score",
	    cd->score)) == NULL)
		return STORE_ENOMEM;
	if ((ix = json_object_get(pars, pkey)) != NULL) {
		h = json_array_get(res, (size_t)json_integer_value(ix));
		rc = json_array_append_new(json_object_get(h, "child_chunks"),
		    ch) == 0 ? 0 : STORE_ENOMEM;
		return rc;
	}
	if ((rc = store_get(t, STORE_DB_SETTINGS, pkey, strlen(pkey), &v,
	    &vlen)) != 0 || (par = json_loadb(v, vlen, 0, NULL)) == NULL ||
	    !json_is_true(json_object_get(par, "enabled"))) {
		json_decref(ch);
		json_decref(par);
		return rc == STORE_ENOTFOUND ? 0 : rc;
	}
	rc = STORE_ENOMEM;
	h = json_pack("{s:f,s:o,s:O,s:O,s:[o]}", "score", cd->score,
	    "segment", rec_public(par), "document", d, "dataset", ds,
	    "child_chunks", ch);
	if (h != NULL && json_object_set_new(pars, pkey, json_integer(
	    (json_int_t)json_array_size(res))) == 0 &&
	    json_array_append_new(res, h) == 0)
		rc = 0;
	else
		json_decref(h);
	json_decref(par);
	return rc;
}

int
kb_search(struct engine *e, const char *ds_id, const char *query,
    const json_t *rm, int top_k, double threshold, char *err, json_t **out)
{
	return kb_search_with(e, ds_id, query, rm, top_k, threshold,
	    e->conf->kb_keyword_index, err, out);
}

int
kb_search_with(struct engine *e, const char *ds_id, const char *query,
    const json_t *rm, int top_k, double threshold, int use_index, char *err,
    json_t **out)
{
	const char		*method;
	const json_t		*w, *filter;
	float			*qv = NULL, *vb = NULL;
	size_t			 dim = 0, nv = 0, vcap = 0, d2;
	struct vhit		*vh = NULL;
	json_t			*index = NULL;
	double			 vw = 0.7, kwt = 0.3;
	int			 need_kw, need_vec, scan_kw;
	struct store_txn	*t = NULL;
	struct store_cursor	*cur = NULL;
	struct store_kv		 kv;
	struct qterms		*q = NULL;
	struct seg_tf		 tf;
	struct cand		*c = NULL;
	json_t			*ds = NULL, *docs = NULL, *ok = NULL, *d, *seg;
	json_t			*res = NULL, *h, *pub, *pars = NULL;
	int			 taken = 0;
	const char		*k, *content, *docid;
	char			 prefix[128];
	size_t			 plen, nc = 0, cap = 0, i, j, ndocs = 0;
	size_t			 df[Q_TERMS_MAX];
	double			 totlen = 0, avg, idf[Q_TERMS_MAX], best = 0;
	int			 rc;

	*out = NULL;
	if ((ds = kb_dataset_load(e, ds_id)) == NULL) {
		snprintf(err, ENGINE_ERRMAX, "Dataset not found.");
		return ENGINE_ENOTFOUND;
	}
	filter = json_object_get(rm, "metadata_filtering_conditions");
	if ((rc = kb_filter_check(filter, err)) != 0)
		goto out;
	if (!json_is_string(json_object_get(rm, "search_method")))
		rm = json_object_get(ds, "retrieval_model_dict");
	method = json_string_value(json_object_get(rm, "search_method"));
	if (!record_field_is(ds, "indexing_technique", "high_quality"))
		method = "keyword_search";	/* economy: as Dify */
	else if (method == NULL)
		method = "semantic_search";
	need_vec = strcmp(method, "semantic_search") == 0 ||
	    strcmp(method, "hybrid_search") == 0;
	need_kw = !need_vec || strcmp(method, "hybrid_search") == 0;
	scan_kw = need_kw;
	w = json_object_get(rm, "weights");
	if (json_is_number(json_object_get(json_object_get(w,
	    "vector_setting"), "vector_weight")))
		vw = json_number_value(json_object_get(json_object_get(w,
		    "vector_setting"), "vector_weight"));
	if (json_is_number(json_object_get(json_object_get(w,
	    "keyword_setting"), "keyword_weight")))
		kwt = json_number_value(json_object_get(json_object_get(w,
		    "keyword_setting"), "keyword_weight"));
	if (need_vec && (rc = kb_embed(e, json_string_value(json_object_get(ds,
	    "embedding_model_provider")), json_string_value(json_object_get(ds,
	    "embedding_model")), &query, 1, err, &qv, &dim)) != 0)
		goto out;
	rc = ENGINE_ENOMEM;
	if ((q = calloc(1, sizeof(*q))) == NULL || (ok = json_object()) ==
	    NULL || (res = json_array()) == NULL || (index = json_object()) ==
	    NULL || (need_vec && (vb = calloc(dim, sizeof(float))) == NULL))
		goto out;
	kb_tokens(query, strlen(query), qterm_add, q);
	memset(df, 0, sizeof(df));
	if ((rc = store_read_begin(e->store, &t)) != 0) {
		rc = engine_from_store(rc);
		goto out;
	}
	snprintf(prefix, sizeof(prefix), "kb.doc/%s/", ds_id);
	if ((rc = records_collect(t, STORE_DB_SETTINGS, prefix, NULL, 0,
	    &docs)) != 0)
		goto store_err;
	json_object_foreach(docs, k, d) {
		if (!doc_searchable(d) || !kb_filter_match(ds, d, filter))
			continue;
		/* a document indexed before the keyword index was kept:
		 * read every segment */
		if (!json_is_true(json_object_get(d, "_ix")))
			use_index = 0;
		if (json_object_set(ok, json_string_value(json_object_get(d,
		    "id")), d) != 0) {
			rc = STORE_ENOMEM;
			goto store_err;
		}
	}
	if (need_kw && use_index) {
		struct ix_walk iw = { ds_id, &c, &nc, &cap, index, df };

		if ((rc = kb_ix_read(t, ds_id, ok, q->t, q->len, q->n, &ndocs,
		    &totlen, ix_posting, &iw)) != 0)
			goto store_err;
		scan_kw = 0;	/* the scan below is not needed */
	}
	snprintf(prefix, sizeof(prefix), "kb.seg/%s/", ds_id);
	plen = strlen(prefix);
	if ((rc = store_cursor_open(t, STORE_DB_SETTINGS, &cur)) != 0)
		goto store_err;
	for (rc = scan_kw ? store_cursor_seek(cur, prefix, plen, &kv) :
	    STORE_ENOTFOUND; rc == 0; rc = store_cursor_next(cur, &kv)) {
		if (kv.klen < plen || memcmp(kv.k, prefix, plen) != 0)
			break;
		if ((seg = json_loadb(kv.v, kv.vlen, 0, NULL)) == NULL)
			continue;
		docid = json_string_value(json_object_get(seg, "document_id"));
		content = json_string_value(json_object_get(seg, "content"));
		if (docid == NULL || content == NULL ||
		    json_object_get(ok, docid) == NULL ||
		    !json_is_true(json_object_get(seg, "enabled"))) {
			json_decref(seg);
			continue;
		}
		memset(&tf, 0, sizeof(tf));
		tf.q = q;
		kb_tokens(content, strlen(content), tf_add, &tf);
		ndocs++;
		totlen += (double)tf.len;
		for (i = 0, j = 0; i < q->n; i++)
			if (tf.tf[i] > 0) {
				df[i]++;
				j++;
			}
		if (j == 0) {
			json_decref(seg);
			continue;
		}
		if (cand_new(&c, &nc, &cap) == NULL) {
			json_decref(seg);
			rc = STORE_ENOMEM;
			goto store_err;
		}
		c[nc - 1].seg = seg;
		snprintf(c[nc - 1].doc, sizeof(c[nc - 1].doc), "%s", docid);
		memcpy(c[nc - 1].tf, tf.tf, sizeof(tf.tf));
		c[nc - 1].len = tf.len;
		snprintf(c[nc - 1].key, sizeof(c[nc - 1].key), "%.*s",
		    (int)(kv.klen - 7), (const char *)kv.k + 7);
		if (json_object_set_new(index, c[nc - 1].key,
		    json_integer((json_int_t)nc - 1)) != 0) {
			rc = STORE_ENOMEM;
			goto store_err;
		}
	}
	if (rc != STORE_ENOTFOUND && rc != 0)
		goto store_err;
	/* the vectors: every one, exactly */
	snprintf(prefix, sizeof(prefix), "kb.vec/%s/", ds_id);
	plen = strlen(prefix);
	for (rc = need_vec ? store_cursor_seek(cur, prefix, plen, &kv) :
	    STORE_ENOTFOUND; rc == 0; rc = store_cursor_next(cur, &kv)) {
		const char	*dk, *slash;
		char		 docbuf[40];
		double		 dot = 0;
		json_t		*ix;

		if (kv.klen < plen || memcmp(kv.k, prefix, plen) != 0)
			break;
		if (kv.vlen != dim * sizeof(float))
			continue;	/* another model's: ignored */
		dk = (const char *)kv.k + plen;
		slash = memchr(dk, '/', kv.klen - plen);
		if (slash == NULL || (size_t)(slash - dk) >= sizeof(docbuf))
			continue;
		memcpy(docbuf, dk, (size_t)(slash - dk));
		docbuf[slash - dk] = '\0';
		if (json_object_get(ok, docbuf) == NULL)
			continue;
		memcpy(vb, kv.v, kv.vlen);	/* values may be unaligned */
		for (d2 = 0; d2 < dim; d2++)
			dot += (double)vb[d2] * qv[d2];
		if (nv == vcap) {
			struct vhit *n2;

			vcap = vcap ? vcap * 2 : 256;
			if ((n2 = realloc(vh, vcap * sizeof(*vh))) == NULL) {
				rc = STORE_ENOMEM;
				goto store_err;
			}
			vh = n2;
		}
		snprintf(vh[nv].key, sizeof(vh[nv].key), "%.*s",
		    (int)(kv.klen - 7), (const char *)kv.k + 7);
		vh[nv].cos = dot;
		/* a keyword candidate gets its vector score */
		if ((ix = json_object_get(index, vh[nv].key)) != NULL)
			c[json_integer_value(ix)].vec = dot;
		nv++;
	}
	if (rc != STORE_ENOTFOUND && rc != 0)
		goto store_err;
	if (nv > 0)
		qsort(vh, nv, sizeof(*vh), by_cos);
	/* the best vectors not among the keyword candidates join them */
	for (j = 0; j < nv && j < (size_t)top_k * 4 + 16; j++) {
		char		 skey[160];
		const void	*v;
		size_t		 vlen;
		struct cand	*cd;

		if (json_object_get(index, vh[j].key) != NULL)
			continue;
		snprintf(skey, sizeof(skey), "kb.seg/%s", vh[j].key);
		if (store_get(t, STORE_DB_SETTINGS, skey, strlen(skey), &v,
		    &vlen) != 0 || (seg = json_loadb(v, vlen, 0, NULL)) ==
		    NULL)
			continue;
		docid = json_string_value(json_object_get(seg, "document_id"));
		if (docid == NULL || !json_is_true(json_object_get(seg,
		    "enabled")) || (cd = cand_new(&c, &nc, &cap)) == NULL) {
			json_decref(seg);
			continue;
		}
		cd->seg = seg;
		snprintf(cd->doc, sizeof(cd->doc), "%s", docid);
		cd->vec = vh[j].cos;
		snprintf(cd->key, sizeof(cd->key), "%s", vh[j].key);
	}
	store_cursor_close(cur);
	cur = NULL;
	avg = ndocs > 0 ? totlen / (double)ndocs : 1;
	for (i = 0; i < q->n; i++) {
		/* Lucene's idf, never negative */
		idf[i] = log(1 + ((double)ndocs - (double)df[i] + 0.5) /
		    ((double)df[i] + 0.5));
		best += idf[i] * (BM25_K1 + 1);
	}
	for (j = 0; j < nc; j++) {
		double s = 0, norm = BM25_K1 * (1 - BM25_B + BM25_B *
		    (double)c[j].len / (avg > 0 ? avg : 1));

		for (i = 0; i < q->n; i++)
			if (c[j].tf[i] > 0)
				s += idf[i] * (double)c[j].tf[i] *
				    (BM25_K1 + 1) / ((double)c[j].tf[i] + norm);
		c[j].kw = best > 0 ? s / best : 0;
		c[j].score = !need_vec ? c[j].kw : !need_kw ? c[j].vec :
		    vw * c[j].vec + kwt * c[j].kw;
	}
	if (nc > 0)
		qsort(c, nc, sizeof(*c), by_score);
	rc = ENGINE_ENOMEM;
	if ((pars = json_object()) == NULL)
		goto out;
	/* top_k counts the searched chunks, children of a parent-child
	 * document among them, as Dify's search before it groups them */
	for (j = 0; j < nc && taken < top_k; j++) {
		if (c[j].score <= threshold && threshold > 0)
			break;
		if (c[j].seg == NULL) {	/* found by the index */
			char		 skey[160];
			const void	*v;
			size_t		 vlen;

			snprintf(skey, sizeof(skey), KB_SEG "%s", c[j].key);
			if (store_get(t, STORE_DB_SETTINGS, skey, strlen(skey),
			    &v, &vlen) != 0 || (c[j].seg = json_loadb(v, vlen,
			    0, NULL)) == NULL)
				continue;
		}
		d = json_object_get(ok, c[j].doc);
		if (record_field_is(d, "doc_form", "hierarchical_model")) {
			if ((rc = hit_child(t, ds, d, &c[j], pars, res)) < 0)
				goto store_err;
			rc = ENGINE_ENOMEM;
			taken++;
			continue;
		}
		taken++;
		if ((pub = json_object()) == NULL)
			goto out;
		json_object_foreach(c[j].seg, k, d)
			if (k[0] != '_' && json_object_set(pub, k, d) != 0) {
				json_decref(pub);
				goto out;
			}
		d = json_object_get(ok, c[j].doc);
		h = json_pack("{s:f,s:o,s:O,s:O}", "score", c[j].score,
		    "segment", pub, "document", d, "dataset", ds);
		if (h == NULL || json_array_append_new(res, h) != 0)
			goto out;
	}
	*out = res;
	res = NULL;
	rc = 0;
	goto out;
store_err:
	rc = engine_from_store(rc);
out:
	store_cursor_close(cur);
	if (t != NULL)
		store_read_end(t);
	for (j = 0; j < nc; j++)
		json_decref(c[j].seg);
	free(c);
	free(q);
	free(qv);
	free(vb);
	free(vh);
	json_decref(index);
	json_decref(pars);
	json_decref(ds);
	json_decref(docs);
	json_decref(ok);
	json_decref(res);
	return rc;
}
