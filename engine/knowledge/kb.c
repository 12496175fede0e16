/*
 * kb.c — local knowledge bases: datasets, documents and segments as
 * records of the settings database under their own prefixes, dataset API
 * keys, and the background indexer (docs/knowledge.md):
 *
 *	kb.ds/<dataset>			dataset record
 *	kb.doc/<dataset>/<document>	document record (text: blob "_text")
 *	kb.seg/<dataset>/<document>/<position, 8 digits>  segment record
 *	kb.key/<sha256 of token>	dataset API key
 *
 * Members whose names begin with "_" are the server's own and never
 * answered. Every write is one small store_write; the indexer writes a
 * document's segments in batches, each checking the document still
 * exists, so a document deleted mid-way leaves nothing behind.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "engine/documents/documents.h"
#include "engine/knowledge/knowledge.h"
#include "engine/records/records.h"

#define KB_KEYS_MAX	10	/* Dify's limit of dataset keys */
#define KB_BATCH	256	/* segments per indexing write */
#define KB_NAME_MAX	40
#define KB_DESC_MAX	400

/*
 * A test's hook at the points where a write begins that an earlier read
 * prepared (t_knowledge_race defines it to write in between); none here.
 */
#ifndef KB_HOOK
#define KB_HOOK(e, point)	do { } while (0)
#endif

/* ====== Records ====== */

/* A copy of rec without its "_" members (NULL when out of memory). */
static json_t *
kb_public(const json_t *rec)
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

/* Dify's display_status of a document. */
static const char *
doc_display(const json_t *d)
{
	const char *st = json_string_value(json_object_get(d,
	    "indexing_status"));

	if (st == NULL)
		return "error";
	if (json_is_true(json_object_get(d, "archived")))
		return "archived";
	if (strcmp(st, "waiting") == 0)
		return "queuing";
	if (strcmp(st, "error") == 0)
		return "error";
	if (strcmp(st, "completed") != 0)
		return "indexing";
	return json_is_true(json_object_get(d, "enabled")) ? "available" :
	    "disabled";
}

static json_t *
doc_public(const json_t *d)
{
	json_t *o = kb_public(d);

	if (o != NULL && json_object_set_new(o, "display_status",
	    json_string(doc_display(d))) != 0) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

/* One record by key, in its own read transaction. */
static int
kb_load(struct engine *e, const char *key, json_t **out)
{
	struct store_txn	*t = NULL;
	int			 rc;

	*out = NULL;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	rc = store_get_json(t, STORE_DB_SETTINGS, key, out);
	store_read_end(t);
	return engine_from_store(rc);
}

/* Every record under prefix: a new object key -> record. */
static int
kb_collect(struct engine *e, const char *prefix, json_t **out)
{
	struct store_txn	*t = NULL;
	int			 rc;

	*out = NULL;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	rc = records_collect(t, STORE_DB_SETTINGS, prefix, NULL, 0, out);
	store_read_end(t);
	return engine_from_store(rc);
}

/*
 * What one write does: each of require must exist (else
 * STORE_ENOTFOUND), then every key under each of del_prefix goes, then
 * dels, then merge (key -> members): the record under key, read in this
 * write, gets the members set (it must exist and, when the members hold
 * an "id", have that id, else STORE_ENOTFOUND), then puts (key ->
 * record); text, when set, becomes a blob whose hash goes into record
 * text_into's "_text"; unref are blob hashes let go. A change to part of
 * a record goes in merge, never as a record read in an earlier
 * transaction and put whole: the indexer and the API write the same
 * documents, and a whole record put would undo what the other wrote in
 * between (a metadata write lost, a completed document marked indexing
 * again).
 */
struct kb_ops {
	const char	*require[2];
	json_t		*del_prefix;	/* array of strings */
	json_t		*dels;		/* array of strings */
	json_t		*merge;		/* object: key -> members to set */
	json_t		*puts;		/* object */
	json_t		*unref;		/* array of strings */
	const char	*text;
	size_t		 text_len;
	const char	*text_into;
	/* vectors: nvec of dim floats at vecs, under vec_keys[i] */
	const float	*vecs;
	size_t		 nvec, dim;
	char		(*vec_keys)[160];
};

static int
del_prefix(struct store_txn *t, const char *prefix, json_t *unref)
{
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	json_t			*keys = json_array(), *k, *rec;
	size_t			 plen = strlen(prefix), i;
	int			 rc;

	if (keys == NULL)
		return STORE_ENOMEM;
	if ((rc = store_cursor_open(t, STORE_DB_SETTINGS, &c)) != 0)
		goto out;
	for (rc = store_cursor_seek(c, prefix, plen, &kv); rc == 0;
	    rc = store_cursor_next(c, &kv)) {
		if (kv.klen < plen || memcmp(kv.k, prefix, plen) != 0)
			break;
		if (json_array_append_new(keys, json_stringn(kv.k,
		    kv.klen)) != 0) {
			rc = STORE_ENOMEM;
			goto out;
		}
		/* documents hold their text as a blob */
		if (unref != NULL && (rec = json_loadb(kv.v, kv.vlen, 0,
		    NULL)) != NULL) {
			if (json_is_string(json_object_get(rec, "_text")))
				json_array_append(unref, json_object_get(rec,
				    "_text"));
			json_decref(rec);
		}
	}
	if (rc != 0 && rc != STORE_ENOTFOUND)
		goto out;
	store_cursor_close(c);
	c = NULL;
	rc = 0;
	json_array_foreach(keys, i, k)
		if ((rc = store_del(t, STORE_DB_SETTINGS, json_string_value(k),
		    json_string_length(k))) != 0 && rc != STORE_ENOTFOUND)
			goto out;
	rc = 0;
out:
	store_cursor_close(c);
	json_decref(keys);
	return rc;
}

/* kb_ops' merge of members set into the record under key, in t. */
static int
merge_one(struct store_txn *t, struct kb_ix *ix, const char *key,
    const json_t *set)
{
	json_t		*rec = NULL;
	const char	*id = json_string_value(json_object_get(set, "id"));
	int		 rc;

	if ((rc = store_get_json(t, STORE_DB_SETTINGS, key, &rec)) != 0)
		return rc;
	rc = STORE_ENOTFOUND;
	if (id != NULL && !record_field_is(rec, "id", id))
		goto out;
	rc = STORE_ENOMEM;
	if (json_object_update(rec, (json_t *)set) != 0)
		goto out;
	if ((rc = kb_ix_seg(ix, t, key, rec)) == 0)
		rc = store_put_json(t, STORE_DB_SETTINGS, key, rec, 0);
out:
	json_decref(rec);
	return rc;
}

static int
kb_ops_fn(struct store_txn *t, void *arg)
{
	struct kb_ops	*o = arg;
	const void	*v;
	size_t		 vlen, i;
	const char	*k;
	json_t		*x, *unref = NULL;
	struct kb_ix	*ix = NULL;
	char		 hex[STORE_HASH_HEX];
	int		 rc = 0;

	for (i = 0; i < 2; i++)
		if (o->require[i] != NULL && (rc = store_get(t,
		    STORE_DB_SETTINGS, o->require[i], strlen(o->require[i]),
		    &v, &vlen)) != 0)
			return rc;
	if ((unref = json_array()) == NULL || kb_ix_begin(&ix) != 0) {
		json_decref(unref);
		return STORE_ENOMEM;
	}
	/* the keyword index goes with the segments, in the same write */
	json_array_foreach(o->del_prefix, i, x)
		if ((rc = kb_ix_drop(t, json_string_value(x))) != 0 ||
		    (rc = del_prefix(t, json_string_value(x), unref)) != 0)
			goto out;
	json_array_foreach(o->dels, i, x)
		if ((rc = kb_ix_seg(ix, t, json_string_value(x), NULL)) != 0 ||
		    ((rc = store_del(t, STORE_DB_SETTINGS, json_string_value(x),
		    json_string_length(x))) != 0 && rc != STORE_ENOTFOUND))
			goto out;
	if (o->text != NULL) {
		if ((rc = store_blob_ref(t, o->text, o->text_len, hex)) != 0)
			goto out;
		if ((x = json_object_get(o->puts, o->text_into)) == NULL)
			x = json_object_get(o->merge, o->text_into);
		if (json_object_set_new(x, "_text", json_string(hex)) != 0) {
			rc = STORE_ENOMEM;
			goto out;
		}
	}
	json_object_foreach(o->merge, k, x)
		if ((rc = merge_one(t, ix, k, x)) != 0)
			goto out;
	json_object_foreach(o->puts, k, x)
		if ((rc = kb_ix_seg(ix, t, k, x)) != 0 ||
		    (rc = store_put_json(t, STORE_DB_SETTINGS, k, x, 0)) != 0)
			goto out;
	if ((rc = kb_ix_commit(ix, t)) != 0)
		goto out;
	for (i = 0; i < o->nvec; i++)
		if ((rc = store_put(t, STORE_DB_SETTINGS, o->vec_keys[i],
		    strlen(o->vec_keys[i]), o->vecs + i * o->dim, o->dim *
		    sizeof(float), 0)) != 0)
			goto out;
	json_array_foreach(o->unref, i, x)
		json_array_append(unref, x);
	json_array_foreach(unref, i, x)
		if ((rc = store_blob_unref(t, json_string_value(x))) != 0 &&
		    rc != STORE_ENOTFOUND)
			goto out;
	rc = 0;
out:
	json_decref(unref);
	kb_ix_free(ix);
	return rc;
}

static int
kb_apply(struct engine *e, struct kb_ops *o)
{
	return engine_from_store(store_write(e->store, kb_ops_fn, o));
}

static void
kb_ops_free(struct kb_ops *o)
{
	json_decref(o->del_prefix);
	json_decref(o->dels);
	json_decref(o->merge);
	json_decref(o->puts);
	json_decref(o->unref);
}

/* ====== The indexer ====== */

struct kb_job {
	struct kb_job	*next;
	char		 ds[37], doc[37];
};

struct kb_indexer {
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	pthread_t	 th;
	int		 quit;
	struct kb_job	*head, *tail;
};

static pthread_mutex_t kb_start_mu = PTHREAD_MUTEX_INITIALIZER;

static void kb_index(struct engine *e, const char *ds, const char *doc);

static void *
kb_indexer_main(void *arg)
{
	struct engine		*e = arg;
	struct kb_indexer	*ix = e->kb_indexer;
	struct kb_job		*j;

	pthread_mutex_lock(&ix->mu);
	for (;;) {
		while (ix->head == NULL && !ix->quit)
			pthread_cond_wait(&ix->cv, &ix->mu);
		if (ix->quit)
			break;
		j = ix->head;
		ix->head = j->next;
		if (ix->head == NULL)
			ix->tail = NULL;
		pthread_mutex_unlock(&ix->mu);
		kb_index(e, j->ds, j->doc);
		free(j);
		pthread_mutex_lock(&ix->mu);
	}
	pthread_mutex_unlock(&ix->mu);
	return NULL;
}

static void
kb_enqueue(struct engine *e, const char *ds, const char *doc)
{
	struct kb_indexer	*ix = e->kb_indexer;
	struct kb_job		*j;

	if (ix == NULL || (j = calloc(1, sizeof(*j))) == NULL)
		return;	/* the next process to start resumes it */
	snprintf(j->ds, sizeof(j->ds), "%s", ds);
	snprintf(j->doc, sizeof(j->doc), "%s", doc);
	pthread_mutex_lock(&ix->mu);
	if (ix->tail != NULL)
		ix->tail->next = j;
	else
		ix->head = j;
	ix->tail = j;
	pthread_cond_signal(&ix->cv);
	pthread_mutex_unlock(&ix->mu);
}

/*
 * Starts the indexer on first use and queues every document left waiting
 * or half indexed (by a process that died): indexing again from the text
 * is idempotent, as it first drops the document's segments.
 */
static void
kb_start(struct engine *e)
{
	struct kb_indexer	*ix;
	json_t			*docs = NULL, *d;
	const char		*k, *st;

	pthread_mutex_lock(&kb_start_mu);
	if (e->kb_indexer != NULL) {
		pthread_mutex_unlock(&kb_start_mu);
		return;
	}
	if ((ix = calloc(1, sizeof(*ix))) == NULL) {
		pthread_mutex_unlock(&kb_start_mu);
		return;
	}
	pthread_mutex_init(&ix->mu, NULL);
	pthread_cond_init(&ix->cv, NULL);
	e->kb_indexer = ix;
	if (pthread_create(&ix->th, NULL, kb_indexer_main, e) != 0) {
		e->kb_indexer = NULL;
		pthread_mutex_destroy(&ix->mu);
		pthread_cond_destroy(&ix->cv);
		free(ix);
		pthread_mutex_unlock(&kb_start_mu);
		return;
	}
	pthread_mutex_unlock(&kb_start_mu);
	if (kb_collect(e, KB_DOC, &docs) != 0)
		return;
	json_object_foreach(docs, k, d) {
		st = json_string_value(json_object_get(d, "indexing_status"));
		if (st != NULL && strcmp(st, "completed") != 0 &&
		    strcmp(st, "error") != 0 && json_is_string(
		    json_object_get(d, "dataset_id")))
			kb_enqueue(e, json_string_value(json_object_get(d,
			    "dataset_id")), json_string_value(
			    json_object_get(d, "id")));
	}
	json_decref(docs);
}

void
kb_indexer_stop(struct engine *e)
{
	struct kb_indexer	*ix = e->kb_indexer;
	struct kb_job		*j;

	if (ix == NULL)
		return;
	pthread_mutex_lock(&ix->mu);
	ix->quit = 1;
	pthread_cond_signal(&ix->cv);
	pthread_mutex_unlock(&ix->mu);
	pthread_join(ix->th, NULL);
	while ((j = ix->head) != NULL) {
		ix->head = j->next;
		free(j);
	}
	pthread_mutex_destroy(&ix->mu);
	pthread_cond_destroy(&ix->cv);
	free(ix);
	e->kb_indexer = NULL;
}

/*
 * Sets members of document dkey (must exist) from the object set, read
 * and written in one write (kb_ops' merge), with the segments of
 * seg_puts, after the segments under seg_prefix go, and vec's vectors.
 */
static int
doc_update(struct engine *e, const char *dkey, const json_t *set,
    const json_t *seg_puts, const char *seg_prefix, const struct kb_ops *vec)
{
	struct kb_ops	 o;
	int		 rc = ENGINE_ENOMEM;

	memset(&o, 0, sizeof(o));
	if (vec != NULL) {
		o.vecs = vec->vecs;
		o.nvec = vec->nvec;
		o.dim = vec->dim;
		o.vec_keys = vec->vec_keys;
	}
	if ((o.merge = json_pack("{s:O}", dkey, set)) == NULL ||
	    (o.puts = seg_puts ? json_deep_copy(seg_puts) : json_object()) ==
	    NULL)
		goto out;
	if (seg_prefix != NULL && ((o.del_prefix = json_array()) == NULL ||
	    json_array_append_new(o.del_prefix, json_string(seg_prefix)) !=
	    0 || json_array_append_new(o.del_prefix, json_pack("s+",
	    KB_VEC, seg_prefix + strlen(KB_SEG))) != 0 ||
	    json_array_append_new(o.del_prefix, json_pack("s+", KB_PAR,
	    seg_prefix + strlen(KB_SEG))) != 0))
		goto out;
	KB_HOOK(e, "doc_write");
	rc = kb_apply(e, &o);
out:
	kb_ops_free(&o);
	return rc;
}

/* A segment record for content at position pos of document doc. */
static json_t *
seg_new(const char *doc, const char *content, const char *answer,
    const json_t *keywords, int pos)
{
	char	id[37], node[37], hex[STORE_HASH_HEX];
	int64_t	now = engine_now();

	engine_uuid(id);
	engine_uuid(node);
	store_hash(content, strlen(content), hex);
	return json_pack("{s:s,s:i,s:s,s:s,s:s,s:I,s:I,s:o,s:s,s:s,s:i,"
	    "s:b,s:n,s:n,s:s,s:s,s:I,s:I,s:I,s:I,s:n,s:n,s:[]}",
	    "id", id, "position", pos, "document_id", doc, "content", content,
	    "answer", answer ? answer : "", "word_count",
	    (json_int_t)engine_utf8_len(content), "tokens",
	    (json_int_t)kb_token_count(content, strlen(content)), "keywords",
	    keywords ? json_deep_copy(keywords) : json_array(), "index_node_id", node,
	    "index_node_hash", hex, "hit_count", 0, "enabled", 1,
	    "disabled_at", "disabled_by", "status", "completed", "created_by",
	    "", "created_at", (json_int_t)now, "updated_at", (json_int_t)now,
	    "indexing_at", (json_int_t)now, "completed_at", (json_int_t)now,
	    "error", "stopped_at", "child_chunks");
}

static void
seg_key(char *buf, size_t n, const char *ds, const char *doc, int pos)
{
	snprintf(buf, n, KB_SEG "%s/%s/%08d", ds, doc, pos);
}

/*
 * The vectors of the segments of puts (key -> segment) when ds is a
 * high_quality dataset (ds NULL: none), into v (free v->vecs and
 * v->vec_keys). 0, or kb_embed's error in err.
 */
static int
seg_vectors(struct engine *e, const json_t *ds, const json_t *puts,
    char *err, struct kb_ops *v)
{
	const char	**texts = NULL, *k;
	float		 *vecs = NULL;
	json_t		 *x;
	size_t		  n = 0, dim = 0;
	int		  rc = ENGINE_ENOMEM;

	memset(v, 0, sizeof(*v));
	if (ds == NULL || json_object_size(puts) == 0)
		return 0;
	if ((texts = calloc(json_object_size(puts), sizeof(*texts))) == NULL ||
	    (v->vec_keys = calloc(json_object_size(puts),
	    sizeof(*v->vec_keys))) == NULL)
		goto out;
	json_object_foreach((json_t *)puts, k, x) {
		/* parents (kb.par/) are not searched: no vector */
		if (strncmp(k, KB_SEG, strlen(KB_SEG)) != 0)
			continue;
		texts[n] = json_string_value(json_object_get(x, "content"));
		snprintf(v->vec_keys[n], sizeof(v->vec_keys[n]), KB_VEC "%s",
		    k + strlen(KB_SEG));
		n++;
	}
	rc = 0;
	if (n == 0)
		goto out;
	if ((rc = kb_embed(e, json_string_value(json_object_get(ds,
	    "embedding_model_provider")), json_string_value(json_object_get(ds,
	    "embedding_model")), texts, n, err, &vecs, &dim)) != 0)
		goto out;
	v->vecs = vecs;
	v->nvec = n;
	v->dim = dim;
out:
	free(texts);
	if (rc != 0) {
		free(v->vec_keys);
		v->vec_keys = NULL;
	}
	return rc;
}

/* One batch of the indexer: the segments of puts, their vectors, the
 * document's progress in set. */
static int
batch_write(struct engine *e, const json_t *ds_hq, const char *dkey,
    const json_t *set, const json_t *puts, char *err)
{
	struct kb_ops	v;
	int		rc;

	if ((rc = seg_vectors(e, ds_hq, puts, err, &v)) != 0)
		return rc;
	rc = doc_update(e, dkey, set, puts, NULL, &v);
	free((void *)v.vecs);
	free(v.vec_keys);
	return rc == ENGINE_EFETCH || rc == ENGINE_EINVAL ? ENGINE_ESTORE : rc;
}

/* Dify's _split_child_nodes (and its paragraph parents): a chunk's
 * leading "." or "。" goes, and the rest is trimmed. */
static const char *
chunk_lead_strip(const char *c)
{
	if (c[0] == '.')
		c++;
	else if (strncmp(c, "\xe3\x80\x82", 3) == 0)
		c += 3;
	return c + strspn(c, " \t\r\n");
}

/*
 * The child chunks of parent text p by rule's sub (Dify's
 * subchunk_segmentation) as child segment records of parent record par,
 * into puts under the document's next segment keys from *n on (one
 * position a child: kb.seg/<ds>/<doc>/<n>), each with its position in
 * the parent, segment_id and type. Counts words and tokens; *nchild the
 * children made. 0, ENGINE_ELIMIT past max, or ENGINE_ENOMEM.
 */
static int
child_chunks_make(const char *ds, const char *doc, const json_t *rule,
    const json_t *par, const char *p, size_t max, const char *type,
    int *n, json_t *puts, size_t *nchild)
{
	const json_t	*sub = json_object_get(rule, "sub");
	json_t		*chunks = NULL, *c, *seg;
	char		 skey[160];
	const char	*t;
	size_t		 i;
	int		 rc, pos = 0;

	*nchild = 0;
	if ((rc = kb_split(p, json_string_value(json_object_get(sub,
	    "separator")), (int)json_integer_value(json_object_get(sub,
	    "max_tokens")), (int)json_integer_value(json_object_get(sub,
	    "overlap")), max, &chunks)) != 0)
		return rc;
	rc = ENGINE_ENOMEM;
	json_array_foreach(chunks, i, c) {
		t = chunk_lead_strip(json_string_value(c));
		if (*t == '\0')
			continue;
		if ((seg = seg_new(doc, t, NULL, NULL, ++pos)) == NULL ||
		    json_object_set(seg, "segment_id", json_object_get(par,
		    "id")) != 0 || json_object_set_new(seg, "type",
		    json_string(type)) != 0 || json_object_set_new(seg,
		    "_parent", json_object_get(par, "position") ?
		    json_incref(json_object_get(par, "position")) :
		    json_integer(0)) != 0) {
			json_decref(seg);
			goto out;
		}
		seg_key(skey, sizeof(skey), ds, doc, ++*n);
		if (json_object_set_new(puts, skey, seg) != 0)
			goto out;
		(*nchild)++;
	}
	rc = 0;
out:
	json_decref(chunks);
	return rc;
}

static void
par_key(char *buf, size_t n, const char *ds, const char *doc, int pos)
{
	snprintf(buf, n, KB_PAR "%s/%s/%08d", ds, doc, pos);
}

/*
 * kb_index's parent-child form (Dify's ParentChildIndexProcessor):
 * parents are split from the cleaned text by the rule's segmentation
 * (paragraph) or are the whole text (full-doc), each a segment record
 * under kb.par/; their children, split by the rule's sub, are the
 * segment records under kb.seg/ that the search and the keyword index
 * read, with their vectors. Written about KB_BATCH records a write. 0
 * with *nparents and the word and token counts of the parents; 1 with
 * err when the document fails; -1 when indexing stops (the document
 * gone).
 */
static int
index_hier(struct engine *e, const char *ds, const char *doc,
    const json_t *ds_hq, const char *dkey, const json_t *rule,
    const char *text, char *err, size_t *nparents, int64_t *words,
    int64_t *toks)
{
	json_t		*parents = NULL, *puts = NULL, *set = NULL, *c, *par;
	char		*clean = NULL, pkey[160];
	const char	*p;
	size_t		 i, nc, total = 0, max = (size_t)e->conf->kb_max_segments;
	int		 rc, n = 0, ret = -1, pos = 0;

	*nparents = 0;
	if (record_field_is(rule, "parent_mode", "full-doc")) {
		/* Dify joins the pages into one parent, uncleaned */
		if ((parents = json_array()) == NULL || json_array_append_new(
		    parents, json_string(text + strspn(text, " \t\r\n"))) !=
		    0)
			goto out;
	} else {
		if ((clean = kb_clean(text, json_is_true(json_object_get(rule,
		    "extra_spaces")), json_is_true(json_object_get(rule,
		    "urls_emails")))) == NULL)
			goto out;
		if ((rc = kb_split(clean, json_string_value(json_object_get(
		    rule, "separator")), (int)json_integer_value(
		    json_object_get(rule, "max_tokens")), (int)
		    json_integer_value(json_object_get(rule, "overlap")), max,
		    &parents)) != 0) {
			if (rc == ENGINE_ELIMIT)
				goto limit;
			goto out;
		}
	}
	json_array_foreach(parents, i, c) {
		p = chunk_lead_strip(json_string_value(c));
		if (*p == '\0')
			continue;
		if (puts == NULL && (puts = json_object()) == NULL)
			goto out;
		if ((par = seg_new(doc, p, NULL, NULL, ++pos)) == NULL)
			goto out;
		par_key(pkey, sizeof(pkey), ds, doc, pos);
		if (json_object_set_new(puts, pkey, par) != 0)
			goto out;
		*words += json_integer_value(json_object_get(par,
		    "word_count"));
		*toks += json_integer_value(json_object_get(par, "tokens"));
		if ((rc = child_chunks_make(ds, doc, rule, par, p, max - total,
		    "automatic", &n, puts, &nc)) != 0) {
			if (rc == ENGINE_ELIMIT)
				goto limit;
			goto out;
		}
		if ((total += nc) > max)
			goto limit;
		if (json_object_size(puts) >= KB_BATCH ||
		    i + 1 == json_array_size(parents)) {
			json_decref(set);
			if ((set = json_pack("{s:I}", "completed_segments",
			    (json_int_t)pos)) == NULL)
				goto out;
			if ((rc = batch_write(e, ds_hq, dkey, set, puts,
			    err)) == ENGINE_EFETCH || rc == ENGINE_EINVAL) {
				ret = 1;
				goto out;
			}
			if (rc != 0)
				goto out;
			json_decref(puts);
			puts = NULL;
		}
	}
	if (pos == 0) {
		snprintf(err, ENGINE_ERRMAX, "the document has no text to index");
		ret = 1;
		goto out;
	}
	*nparents = (size_t)pos;
	ret = 0;
	goto out;
limit:
	snprintf(err, ENGINE_ERRMAX, "the document makes more than "
	    "knowledge.max_segments (%d) chunks", e->conf->kb_max_segments);
	ret = 1;
out:
	if (ret == -1 && err[0] == '\0')
		snprintf(err, ENGINE_ERRMAX, "out of memory");
	json_decref(parents);
	json_decref(puts);
	json_decref(set);
	free(clean);
	return ret;
}

/*
 * Indexes one document: cleans and splits its text by its process rule,
 * writes its segments KB_BATCH at a time, then marks it completed (or
 * error, with the reason). A document deleted meanwhile stops it.
 */
static void
kb_index(struct engine *e, const char *ds, const char *doc)
{
	char		 dkey[128], sprefix[128], skey[160], err[ENGINE_ERRMAX] = "";
	json_t		*d = NULL, *rule, *chunks = NULL, *set = NULL, *puts = NULL;
	json_t		*c;
	char		*text = NULL, *clean = NULL;
	size_t		 len = 0, i, nseg = 0;
	struct store_txn *t = NULL;
	const char	*st, *hex;
	int64_t		 words = 0, toks = 0;
	json_t		*ds_hq = NULL;
	int		 rc;

	snprintf(dkey, sizeof(dkey), KB_DOC "%s/%s", ds, doc);
	ds_hq = kb_dataset_load(e, ds);
	if (ds_hq != NULL && !record_field_is(ds_hq, "indexing_technique",
	    "high_quality")) {
		json_decref(ds_hq);
		ds_hq = NULL;
	}
	snprintf(sprefix, sizeof(sprefix), KB_SEG "%s/%s/", ds, doc);
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return;
	rc = store_get_json(t, STORE_DB_SETTINGS, dkey, &d);
	st = json_string_value(json_object_get(d, "indexing_status"));
	hex = json_string_value(json_object_get(d, "_text"));
	if (rc == 0 && st != NULL && strcmp(st, "completed") != 0 &&
	    strcmp(st, "error") != 0 && hex != NULL)
		rc = store_blob_load(t, hex, &text, &len);
	else
		rc = -1;
	store_read_end(t);
	if (rc != 0)
		goto out;
	/* _ix: its segments are in the keyword index (written with them) */
	set = json_pack("{s:s,s:I,s:i,s:b}", "indexing_status", "indexing",
	    "processing_started_at", (json_int_t)engine_now(),
	    "completed_segments", 0, "_ix", 1);
	if (set == NULL || doc_update(e, dkey, set, NULL, sprefix, NULL) != 0)
		goto out;
	rule = json_object_get(d, "_rule");
	if (json_object_get(rule, "sub") != NULL) {
		switch (index_hier(e, ds, doc, ds_hq, dkey, rule, text, err,
		    &nseg, &words, &toks)) {
		case 0:
			goto done;
		case 1:
			goto fail;
		default:
			goto out;
		}
	}
	clean = kb_clean(text, json_is_true(json_object_get(rule,
	    "extra_spaces")), json_is_true(json_object_get(rule,
	    "urls_emails")));
	if (clean == NULL) {
		snprintf(err, sizeof(err), "out of memory");
		goto fail;
	}
	rc = kb_split(clean, json_string_value(json_object_get(rule,
	    "separator")), (int)json_integer_value(json_object_get(rule,
	    "max_tokens")), (int)json_integer_value(json_object_get(rule,
	    "overlap")), (size_t)e->conf->kb_max_segments, &chunks);
	if (rc != 0) {
		snprintf(err, sizeof(err), rc == ENGINE_ELIMIT ? "the document "
		    "makes more than knowledge.max_segments (%d) chunks" :
		    "out of memory", e->conf->kb_max_segments);
		goto fail;
	}
	if (json_array_size(chunks) == 0) {
		snprintf(err, sizeof(err), "the document has no text to index");
		goto fail;
	}
	json_array_foreach(chunks, i, c) {
		json_t *seg;

		if (puts == NULL && (puts = json_object()) == NULL)
			goto out;
		if ((seg = seg_new(doc, json_string_value(c), NULL, NULL,
		    (int)i + 1)) == NULL)
			goto out;
		words += json_integer_value(json_object_get(seg, "word_count"));
		toks += json_integer_value(json_object_get(seg, "tokens"));
		seg_key(skey, sizeof(skey), ds, doc, (int)i + 1);
		if (json_object_set_new(puts, skey, seg) != 0)
			goto out;
		if (json_object_size(puts) == KB_BATCH ||
		    i + 1 == json_array_size(chunks)) {
			json_decref(set);
			set = json_pack("{s:I}", "completed_segments",
			    (json_int_t)(i + 1));
			/* the document gone: stop */
			if (set == NULL)
				goto out;
			if ((rc = batch_write(e, ds_hq, dkey, set, puts,
			    err)) == ENGINE_EFETCH || rc == ENGINE_EINVAL)
				goto fail;
			if (rc != 0)
				goto out;
			json_decref(puts);
			puts = NULL;
		}
	}
	nseg = json_array_size(chunks);
done:
	json_decref(set);
	set = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
	    "indexing_status", "completed", "parsing_completed_at",
	    (json_int_t)engine_now(), "cleaning_completed_at",
	    (json_int_t)engine_now(), "splitting_completed_at",
	    (json_int_t)engine_now(), "completed_at", (json_int_t)engine_now(),
	    "word_count", (json_int_t)words, "tokens", (json_int_t)toks,
	    "total_segments", (json_int_t)nseg,
	    "completed_segments", (json_int_t)nseg);
	if (set != NULL)
		doc_update(e, dkey, set, NULL, NULL, NULL);
	goto out;
fail:
	json_decref(set);
	set = json_pack("{s:s,s:s,s:I}", "indexing_status", "error", "error",
	    err, "stopped_at", (json_int_t)engine_now());
	if (set != NULL)
		doc_update(e, dkey, set, NULL, sprefix, NULL);
out:
	json_decref(ds_hq);
	json_decref(d);
	json_decref(set);
	json_decref(puts);
	json_decref(chunks);
	free(text);
	free(clean);
}

/* ====== Dataset keys ====== */

int
engine_kb_key_create(struct engine *e, json_t **out)
{
	static const char	 al[] = "abcdefghijklmnopqrstuvwxyz"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char		 raw[24];
	char			 tok[40], key[128], hex[STORE_HASH_HEX], id[37];
	json_t			*all = NULL, *rec = NULL;
	struct kb_ops		 o;
	int			 rc, i;

	*out = NULL;
	memset(&o, 0, sizeof(o));
	if ((rc = kb_collect(e, KB_KEY, &all)) != 0)
		return rc;
	rc = ENGINE_ELIMIT;
	if (json_object_size(all) >= KB_KEYS_MAX)
		goto out;
	rc = ENGINE_ENOMEM;
	if (RAND_bytes(raw, sizeof(raw)) != 1)
		goto out;
	memcpy(tok, "dataset-", 8);
	for (i = 0; i < 24; i++)
		tok[8 + i] = al[raw[i] % (sizeof(al) - 1)];
	tok[32] = '\0';
	store_hash(tok, strlen(tok), hex);
	snprintf(key, sizeof(key), KB_KEY "%s", hex);
	engine_uuid(id);
	if ((rec = json_pack("{s:s,s:s,s:s,s:I,s:n}", "id", id, "type",
	    "dataset", "token", "", "created_at", (json_int_t)engine_now(),
	    "last_used_at")) == NULL || (o.puts = json_object()) == NULL ||
	    json_object_set(o.puts, key, rec) != 0)
		goto out;
	if ((rc = kb_apply(e, &o)) != 0)
		goto out;
	rc = ENGINE_ENOMEM;
	if (json_object_set_new(rec, "token", json_string(tok)) != 0)
		goto out;
	*out = rec;
	rec = NULL;
	rc = 0;
out:
	OPENSSL_cleanse(tok, sizeof(tok));
	OPENSSL_cleanse(raw, sizeof(raw));
	json_decref(all);
	json_decref(rec);
	kb_ops_free(&o);
	return rc;
}

int
engine_kb_key_list(struct engine *e, json_t **out)
{
	json_t		*all = NULL, *data = NULL, *v;
	const char	*k;
	int		 rc;

	*out = NULL;
	if ((rc = kb_collect(e, KB_KEY, &all)) != 0)
		return rc;
	rc = ENGINE_ENOMEM;
	if ((data = json_array()) == NULL)
		goto out;
	json_object_foreach(all, k, v)
		if (json_object_set_new(v, "token", json_string(
		    "dataset-****")) != 0 || json_array_append(data, v) != 0)
			goto out;
	if ((*out = json_pack("{s:O}", "data", data)) != NULL)
		rc = 0;
out:
	json_decref(all);
	json_decref(data);
	return rc;
}

int
engine_kb_key_delete(struct engine *e, const char *id)
{
	json_t		*all = NULL, *v;
	const char	*k;
	struct kb_ops	 o;
	int		 rc;

	memset(&o, 0, sizeof(o));
	if ((rc = kb_collect(e, KB_KEY, &all)) != 0)
		return rc;
	rc = ENGINE_ENOTFOUND;
	json_object_foreach(all, k, v)
		if (record_field_is(v, "id", id)) {
			rc = ENGINE_ENOMEM;
			if ((o.dels = json_pack("[s]", k)) != NULL)
				rc = kb_apply(e, &o);
			break;
		}
	json_decref(all);
	kb_ops_free(&o);
	return rc;
}

int
engine_kb_key_check(struct engine *e, const char *token)
{
	char	 key[128], hex[STORE_HASH_HEX];
	json_t	*rec = NULL;
	int	 rc;

	if (token == NULL || strncmp(token, "dataset-", 8) != 0)
		return ENGINE_ENOTFOUND;
	store_hash(token, strlen(token), hex);
	snprintf(key, sizeof(key), KB_KEY "%s", hex);
	rc = kb_load(e, key, &rec);
	json_decref(rec);
	return rc;
}

/* ====== Datasets ====== */

static json_t *
default_retrieval(const char *technique)
{
	return json_pack("{s:s,s:b,s:n,s:{s:s,s:s},s:n,s:i,s:b,s:n}",
	    "search_method", technique != NULL && strcmp(technique,
	    "economy") == 0 ? "keyword_search" : "semantic_search",
	    "reranking_enable", 0, "reranking_mode", "reranking_model",
	    "reranking_provider_name", "", "reranking_model_name", "",
	    "weights", "top_k", 2, "score_threshold_enabled", 0,
	    "score_threshold");
}

/* The technique named in in, checked. */
static int
technique_check(const json_t *v, char *err)
{
	const char *s = json_string_value(v);

	if (v == NULL || json_is_null(v))
		return 0;
	if (s == NULL || (strcmp(s, "economy") != 0 &&
	    strcmp(s, "high_quality") != 0))
		return engine_invalid(err, "indexing_technique must be "
		    "high_quality or economy");
	return 0;
}

/*
 * A high_quality dataset's embedding model: in's embedding_model and
 * embedding_model_provider, else what it has, else Dify's usual
 * text-embedding-3-small of openai (a model provider entry serves it).
 */
static int
embedding_set(json_t *ds, const json_t *in)
{
	const char *m = json_string_value(json_object_get(in,
	    "embedding_model"));
	const char *p = json_string_value(json_object_get(in,
	    "embedding_model_provider"));

	if (!record_field_is(ds, "indexing_technique", "high_quality"))
		return 0;
	if (m == NULL)
		m = json_string_value(json_object_get(ds, "embedding_model"));
	if (p == NULL)
		p = json_string_value(json_object_get(ds,
		    "embedding_model_provider"));
	if (json_object_set_new(ds, "embedding_model", json_string(m ? m :
	    "text-embedding-3-small")) != 0 ||
	    json_object_set_new(ds, "embedding_model_provider", json_string(p ?
	    p : "openai")) != 0)
		return -1;
	return 0;
}

/* The dataset's counts and the public view. */
static json_t *
ds_view(struct engine *e, const json_t *ds)
{
	char		 prefix[128];
	json_t		*docs = NULL, *o, *d;
	const char	*k;
	int64_t		 words = 0;

	snprintf(prefix, sizeof(prefix), KB_DOC "%s/",
	    json_string_value(json_object_get(ds, "id")));
	if ((o = kb_public(ds)) == NULL || kb_collect(e, prefix, &docs) != 0) {
		json_decref(o);
		return NULL;
	}
	json_object_foreach(docs, k, d)
		words += json_integer_value(json_object_get(d, "word_count"));
	/* its tags, named as they are now */
	if (kb_dataset_tags(e, json_string_value(json_object_get(ds, "id")),
	    &d) != 0 || json_object_set_new(o, "tags", d) != 0) {
		json_decref(o);
		json_decref(docs);
		return NULL;
	}
	if (json_object_set_new(o, "document_count", json_integer(
	    (json_int_t)json_object_size(docs))) != 0 ||
	    json_object_set_new(o, "word_count", json_integer(words)) != 0) {
		json_decref(o);
		o = NULL;
	}
	json_decref(docs);
	return o;
}

static int
ds_name_check(struct engine *e, const json_t *name, const char *self,
    char *err)
{
	json_t		*all = NULL, *v;
	const char	*k, *s = json_string_value(name);
	size_t		 n = s ? engine_utf8_len(s) : 0;
	int		 rc;

	if (s == NULL || n < 1 || n > KB_NAME_MAX)
		return engine_invalid(err, "name must be 1 to %d characters",
		    KB_NAME_MAX);
	if ((rc = kb_collect(e, KB_DS, &all)) != 0)
		return rc;
	json_object_foreach(all, k, v)
		if (record_field_is(v, "name", s) && (self == NULL ||
		    !record_field_is(v, "id", self))) {
			snprintf(err, ENGINE_ERRMAX, "Dataset name already "
			    "exists.");
			rc = ENGINE_EEXIST;
			break;
		}
	json_decref(all);
	return rc;
}

int
engine_kb_dataset_create(struct engine *e, const json_t *in, char *err,
    json_t **out)
{
	const json_t	*desc = json_object_get(in, "description");
	const json_t	*tech = json_object_get(in, "indexing_technique");
	const json_t	*rm = json_object_get(in, "retrieval_model");
	const char	*perm = json_string_value(json_object_get(in,
			    "permission"));
	char		 id[37], key[128];
	json_t		*ds = NULL;
	struct kb_ops	 o;
	int64_t		 now = engine_now();
	int		 rc;

	*out = NULL;
	memset(&o, 0, sizeof(o));
	kb_start(e);
	if ((rc = ds_name_check(e, json_object_get(in, "name"), NULL,
	    err)) != 0)
		return rc;
	if (desc != NULL && !json_is_null(desc) && (!json_is_string(desc) ||
	    engine_utf8_len(json_string_value(desc)) > KB_DESC_MAX))
		return engine_invalid(err, "description must be a string of "
		    "at most %d characters", KB_DESC_MAX);
	if ((rc = technique_check(tech, err)) != 0)
		return rc;
	if (rm != NULL && !json_is_null(rm) && !json_is_object(rm))
		return engine_invalid(err, "retrieval_model must be an object");
	engine_uuid(id);
	snprintf(key, sizeof(key), KB_DS "%s", id);
	ds = json_pack("{s:s,s:O,s:s,s:s,s:s,s:n,s:O,s:i,s:s,s:I,s:s,s:I,"
	    "s:n,s:n,s:b,s:o,s:[],s:n,s:n,s:n,s:[],s:b,s:b,s:n}",
	    "id", id, "name", json_object_get(in, "name"), "description",
	    json_string_value(desc) ? json_string_value(desc) : "",
	    "provider", "vendor", "permission", perm ? perm : "only_me",
	    "data_source_type", "indexing_technique",
	    tech ? tech : json_null(), "app_count", 0, "created_by", "",
	    "created_at", (json_int_t)now, "updated_by", "", "updated_at",
	    (json_int_t)now, "embedding_model", "embedding_model_provider",
	    "embedding_available", 1, "retrieval_model_dict",
	    json_is_object(rm) ? json_deep_copy(rm) : default_retrieval(
	    json_string_value(tech)), "tags", "doc_form",
	    "external_knowledge_info", "external_retrieval_model",
	    "doc_metadata", "built_in_field_enabled", 0, "enable_api", 1,
	    "chunk_structure");
	rc = ENGINE_ENOMEM;
	if (ds == NULL || embedding_set(ds, in) != 0 ||
	    (o.puts = json_object()) == NULL ||
	    json_object_set(o.puts, key, ds) != 0)
		goto out;
	if ((rc = kb_apply(e, &o)) != 0)
		goto out;
	rc = ENGINE_ENOMEM;
	if ((*out = ds_view(e, ds)) != NULL)
		rc = 0;
out:
	json_decref(ds);
	kb_ops_free(&o);
	return rc;
}

static int
by_created_desc(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a,
	    "created_at"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b,
	    "created_at"));
	const char *p = json_string_value(json_object_get(*(json_t *const *)a,
	    "id"));
	const char *q = json_string_value(json_object_get(*(json_t *const *)b,
	    "id"));

	if (x != y)
		return x < y ? 1 : -1;
	return -strcmp(p ? p : "", q ? q : "");
}

static int
by_position(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a,
	    "position"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b,
	    "position"));

	return x < y ? -1 : x > y;
}

/*
 * One page of the records of all (an object) that match keyword in their
 * member field, sorted by cmp, each made public by view:
 * {data, has_more, limit, total, page}.
 */
static int
kb_page(struct engine *e, json_t *all, const char *field,
    const char *keyword, int (*cmp)(const void *, const void *), int page,
    int limit, json_t *(*view)(struct engine *, const json_t *),
    json_t **out)
{
	json_t		**v = NULL, *data = NULL, *x, *rec;
	const char	*k, *s;
	size_t		 n = 0, i, from;
	int		 rc = ENGINE_ENOMEM;

	*out = NULL;
	if ((v = calloc(json_object_size(all) + 1, sizeof(*v))) == NULL ||
	    (data = json_array()) == NULL)
		goto out;
	json_object_foreach(all, k, rec) {
		s = json_string_value(json_object_get(rec, field));
		if (!json_is_object(rec) || (keyword != NULL && *keyword &&
		    (s == NULL || strcasestr(s, keyword) == NULL)))
			continue;
		v[n++] = rec;
	}
	qsort(v, n, sizeof(*v), cmp);
	from = (size_t)(page - 1) * (size_t)limit;
	for (i = from; i < n && i < from + (size_t)limit; i++) {
		if ((x = view(e, v[i])) == NULL ||
		    json_array_append_new(data, x) != 0)
			goto out;
	}
	if ((*out = json_pack("{s:O,s:b,s:i,s:I,s:i}", "data", data,
	    "has_more", from + (size_t)limit < n, "limit", limit, "total",
	    (json_int_t)n, "page", page)) != NULL)
		rc = 0;
out:
	free(v);
	json_decref(data);
	return rc;
}

int
engine_kb_dataset_list(struct engine *e, int page, int limit,
    const char *keyword, json_t **out)
{
	json_t	*all = NULL;
	int	 rc;

	kb_start(e);
	if ((rc = kb_collect(e, KB_DS, &all)) != 0)
		return rc;
	rc = kb_page(e, all, "name", keyword, by_created_desc, page, limit,
	    ds_view, out);
	json_decref(all);
	return rc;
}

static int
ds_get(struct engine *e, const char *id, char *err, json_t **ds)
{
	if ((*ds = kb_dataset_load(e, id)) == NULL) {
		snprintf(err, ENGINE_ERRMAX, "Dataset not found.");
		return ENGINE_ENOTFOUND;
	}
	return 0;
}

int
engine_kb_dataset_get(struct engine *e, const char *id, char *err,
    json_t **out)
{
	json_t	*ds = NULL;
	int	 rc;

	kb_start(e);
	*out = NULL;
	if ((rc = ds_get(e, id, err, &ds)) != 0)
		return rc;
	*out = ds_view(e, ds);
	json_decref(ds);
	return *out != NULL ? 0 : ENGINE_ENOMEM;
}

int
engine_kb_dataset_update(struct engine *e, const char *id, const json_t *in,
    char *err, json_t **out)
{
	static const char *const plain[] = { "description", "permission",
	    NULL };
	json_t		*ds = NULL, *v;
	char		 key[128];
	struct kb_ops	 o;
	size_t		 i;
	int		 rc;

	*out = NULL;
	memset(&o, 0, sizeof(o));
	if ((rc = ds_get(e, id, err, &ds)) != 0)
		return rc;
	if ((v = json_object_get(in, "name")) != NULL &&
	    (rc = ds_name_check(e, v, id, err)) != 0)
		goto out;
	if ((rc = technique_check(json_object_get(in, "indexing_technique"),
	    err)) != 0)
		goto out;
	rc = ENGINE_ENOMEM;
	if (v != NULL && json_object_set(ds, "name", v) != 0)
		goto out;
	for (i = 0; plain[i] != NULL; i++)
		if (json_is_string(v = json_object_get(in, plain[i])) &&
		    json_object_set(ds, plain[i], v) != 0)
			goto out;
	if (json_is_string(v = json_object_get(in, "indexing_technique")) &&
	    json_object_set(ds, "indexing_technique", v) != 0)
		goto out;
	if (embedding_set(ds, in) != 0)
		goto out;
	if (json_is_object(v = json_object_get(in, "retrieval_model")) &&
	    json_object_set(ds, "retrieval_model_dict", v) != 0)
		goto out;
	if (json_object_set_new(ds, "updated_at", json_integer(
	    engine_now())) != 0)
		goto out;
	snprintf(key, sizeof(key), KB_DS "%s", id);
	o.require[0] = key;
	if ((o.puts = json_object()) == NULL ||
	    json_object_set(o.puts, key, ds) != 0)
		goto out;
	if ((rc = kb_apply(e, &o)) != 0)
		goto out;
	rc = (*out = ds_view(e, ds)) != NULL ? 0 : ENGINE_ENOMEM;
out:
	json_decref(ds);
	kb_ops_free(&o);
	return rc;
}

int
engine_kb_dataset_delete(struct engine *e, const char *id, char *err)
{
	json_t		*ds = NULL;
	char		 key[128], p1[128], p2[128];
	struct kb_ops	 o;
	int		 rc;

	memset(&o, 0, sizeof(o));
	if ((rc = ds_get(e, id, err, &ds)) != 0)
		return rc;
	json_decref(ds);
	snprintf(key, sizeof(key), KB_DS "%s", id);
	snprintf(p1, sizeof(p1), KB_DOC "%s/", id);
	snprintf(p2, sizeof(p2), KB_SEG "%s/", id);
	if ((o.del_prefix = json_pack("[s,s,s+,s+,s+]", p1, p2, KB_VEC, p2 +
	    strlen(KB_SEG), KB_PAR, p2 + strlen(KB_SEG), KB_TAGB, p2 +
	    strlen(KB_SEG))) == NULL ||
	    (o.dels = json_pack("[s]", key)) == NULL)
		rc = ENGINE_ENOMEM;
	else
		rc = kb_apply(e, &o);
	kb_ops_free(&o);
	return rc;
}

/* ====== Documents ====== */

/*
 * A segmentation of Dify's process rule ({separator (or delimiter),
 * max_tokens, chunk_overlap}) into r's separator, max_tokens and overlap
 * members; max_tokens may be absent when need_max is 0 (a full-doc
 * parent: 0). what names it in errors.
 */
static int
seg_rule_parse(const json_t *seg, const char *what, int need_max,
    char *err, json_t *r)
{
	const char	*sep;
	char		 buf[256];
	size_t		 i, j = 0;
	json_int_t	 max = 0, ov = 0;

	if (!json_is_object(seg))
		return engine_invalid(err, "Process rule %s is required", what);
	sep = json_string_value(json_object_get(seg, "separator"));
	if (sep == NULL)
		sep = json_string_value(json_object_get(seg, "delimiter"));
	if (sep == NULL || *sep == '\0')
		return engine_invalid(err, "Process rule %s separator is "
		    "required", what);
	if (need_max || json_object_get(seg, "max_tokens") != NULL) {
		if (!json_is_integer(json_object_get(seg, "max_tokens")))
			return engine_invalid(err, "Process rule %s max_tokens "
			    "is required", what);
		max = json_integer_value(json_object_get(seg, "max_tokens"));
		if (max < 50 || max > 4000)
			return engine_invalid(err, "Custom segment length "
			    "should be between 50 and 4000.");
	}
	if (json_is_integer(json_object_get(seg, "chunk_overlap")))
		ov = json_integer_value(json_object_get(seg, "chunk_overlap"));
	if (ov < 0 || (max > 0 && ov >= max))
		return engine_invalid(err, "chunk_overlap must be from 0 to "
		    "less than max_tokens");
	/* "\\n" written in JSON means a newline, as Dify reads it */
	for (i = 0; sep[i] != '\0' && j + 1 < sizeof(buf); i++) {
		if (sep[i] == '\\' && sep[i + 1] == 'n') {
			buf[j++] = '\n';
			i++;
		} else
			buf[j++] = sep[i];
	}
	buf[j] = '\0';
	if (json_object_set_new(r, "separator", json_string(buf)) != 0 ||
	    json_object_set_new(r, "max_tokens", json_integer(max)) != 0 ||
	    json_object_set_new(r, "overlap", json_integer(ov)) != 0)
		return ENGINE_ENOMEM;
	return 0;
}

/*
 * Dify's process_rule into the indexer's {extra_spaces, urls_emails,
 * separator, max_tokens, overlap} and, for mode hierarchical (Dify's
 * parent-child chunks), parent_mode (paragraph or full-doc) and sub
 * {separator, max_tokens, overlap} for the child chunks; *out new.
 */
static int
rule_parse(const json_t *pr, char *err, json_t **out)
{
	const char	*mode = json_string_value(json_object_get(pr, "mode"));
	const json_t	*rules = json_object_get(pr, "rules"), *pre, *x;
	const char	*id, *pm = "paragraph";
	json_t		*r = NULL, *sub = NULL;
	size_t		 i;
	int		 spaces = 0, urls = 0, hier, rc;

	*out = NULL;
	if (pr == NULL || json_is_null(pr) || mode == NULL ||
	    strcmp(mode, "automatic") == 0) {
		if (pr != NULL && !json_is_null(pr) && mode == NULL)
			return engine_invalid(err, "process_rule.mode must be "
			    "automatic, custom or hierarchical");
		*out = json_pack("{s:b,s:b,s:n,s:i,s:i}", "extra_spaces", 1,
		    "urls_emails", 0, "separator", "max_tokens", 500,
		    "overlap", 50);
		return *out ? 0 : ENGINE_ENOMEM;
	}
	hier = strcmp(mode, "hierarchical") == 0;
	if (!hier && strcmp(mode, "custom") != 0)
		return engine_invalid(err, "process_rule.mode must be "
		    "automatic, custom or hierarchical");
	if (!json_is_object(rules))
		return engine_invalid(err, "Rules is required");
	pre = json_object_get(rules, "pre_processing_rules");
	if (!json_is_array(pre))
		return engine_invalid(err, "Process rule pre_processing_rules "
		    "is required");
	json_array_foreach(pre, i, x) {
		id = json_string_value(json_object_get(x, "id"));
		if (id == NULL || (strcmp(id, "remove_stopwords") != 0 &&
		    strcmp(id, "remove_extra_spaces") != 0 &&
		    strcmp(id, "remove_urls_emails") != 0))
			return engine_invalid(err, "Process rule "
			    "pre_processing_rules id is invalid");
		if (!json_is_boolean(json_object_get(x, "enabled")))
			return engine_invalid(err, "Process rule "
			    "pre_processing_rules enabled is invalid");
		if (strcmp(id, "remove_extra_spaces") == 0)
			spaces = json_is_true(json_object_get(x, "enabled"));
		if (strcmp(id, "remove_urls_emails") == 0)
			urls = json_is_true(json_object_get(x, "enabled"));
	}
	if (hier && json_object_get(rules, "parent_mode") != NULL &&
	    !json_is_null(json_object_get(rules, "parent_mode"))) {
		pm = json_string_value(json_object_get(rules, "parent_mode"));
		if (pm == NULL || (strcmp(pm, "paragraph") != 0 &&
		    strcmp(pm, "full-doc") != 0))
			return engine_invalid(err, "Process rule parent_mode "
			    "must be paragraph or full-doc");
	}
	if ((r = json_pack("{s:b,s:b}", "extra_spaces", spaces,
	    "urls_emails", urls)) == NULL)
		return ENGINE_ENOMEM;
	/* Dify's process_rule_args_validate: max_tokens is needed but by a
	 * full-doc parent */
	if ((rc = seg_rule_parse(json_object_get(rules, "segmentation"),
	    "segmentation", !hier || strcmp(pm, "full-doc") != 0, err, r)) !=
	    0)
		goto out;
	if (hier) {
		rc = ENGINE_ENOMEM;
		if ((sub = json_object()) == NULL)
			goto out;
		if ((rc = seg_rule_parse(json_object_get(rules,
		    "subchunk_segmentation"), "subchunk_segmentation", 1, err,
		    sub)) != 0)
			goto out;
		rc = ENGINE_ENOMEM;
		if (json_object_set_new(r, "parent_mode", json_string(pm)) !=
		    0 || json_object_set(r, "sub", sub) != 0)
			goto out;
	}
	*out = r;
	r = NULL;
	rc = 0;
out:
	json_decref(r);
	json_decref(sub);
	return rc;
}

static json_t *
doc_view(struct engine *e, const json_t *d)
{
	(void)e;
	return doc_public(d);
}

int
engine_kb_document_create_text(struct engine *e, const char *ds_id,
    const json_t *in, char *err, json_t **out)
{
	const char	*name = json_string_value(json_object_get(in, "name"));
	const char	*text = json_string_value(json_object_get(in, "text"));
	const json_t	*tech = json_object_get(in, "indexing_technique");
	json_t		*ds = NULL, *rule = NULL, *doc = NULL, *docs = NULL;
	const char	*form;
	char		 id[37], key[128], dskey[128], prefix[128], batch[40];
	unsigned char	 rnd[3];
	struct kb_ops	 o;
	int64_t		 now = engine_now();
	int		 rc;

	*out = NULL;
	memset(&o, 0, sizeof(o));
	kb_start(e);
	if ((rc = ds_get(e, ds_id, err, &ds)) != 0)
		return rc;
	rc = ENGINE_EINVAL;
	if (name == NULL || *name == '\0' || engine_utf8_len(name) > 255) {
		engine_invalid(err, "name is required (1 to 255 characters)");
		goto out;
	}
	if (text == NULL) {
		engine_invalid(err, "text is required");
		goto out;
	}
	if ((int64_t)json_string_length(json_object_get(in, "text")) >
	    e->conf->kb_max_document) {
		rc = ENGINE_ELIMIT;
		snprintf(err, ENGINE_ERRMAX, "the text is larger than "
		    "knowledge.max_document_size (%lld bytes)",
		    (long long)e->conf->kb_max_document);
		goto out;
	}
	if ((rc = technique_check(tech, err)) != 0)
		goto out;
	if (json_is_null(json_object_get(ds, "indexing_technique")) &&
	    !json_is_string(tech)) {
		rc = engine_invalid(err, "indexing_technique is required.");
		goto out;
	}
	if ((rc = rule_parse(json_object_get(in, "process_rule"), err,
	    &rule)) != 0)
		goto out;
	/* parent-child chunks: Dify's doc_form hierarchical_model, one
	 * form a dataset */
	form = json_object_get(rule, "sub") != NULL ? "hierarchical_model" :
	    "text_model";
	rc = ENGINE_EINVAL;
	if (record_field_is(in, "doc_form", "hierarchical_model") &&
	    strcmp(form, "hierarchical_model") != 0) {
		engine_invalid(err, "doc_form hierarchical_model needs "
		    "process_rule.mode hierarchical");
		goto out;
	}
	if (json_is_string(json_object_get(ds, "doc_form")) &&
	    !record_field_is(ds, "doc_form", form)) {
		engine_invalid(err, "doc_form is different from the dataset "
		    "doc_form.");
		goto out;
	}
	snprintf(prefix, sizeof(prefix), KB_DOC "%s/", ds_id);
	if ((rc = kb_collect(e, prefix, &docs)) != 0)
		goto out;
	engine_uuid(id);
	snprintf(key, sizeof(key), KB_DOC "%s/%s", ds_id, id);
	snprintf(dskey, sizeof(dskey), KB_DS "%s", ds_id);
	if (RAND_bytes(rnd, sizeof(rnd)) != 1)
		memset(rnd, 0, sizeof(rnd));
	snprintf(batch, sizeof(batch), "%lld%06u", (long long)now,
	    ((unsigned)rnd[0] << 16 | (unsigned)rnd[1] << 8 | rnd[2]) %
	    1000000u);
	doc = json_pack("{s:s,s:s,s:I,s:s,s:{s:s},s:n,s:s,s:s,s:s,s:I,s:i,"
	    "s:s,s:n,s:b,s:n,s:n,s:b,s:i,s:i,s:s,s:[],s:s,s:n,s:n,s:n,s:n,"
	    "s:n,s:i,s:i,s:O}",
	    "id", id, "dataset_id", ds_id, "position",
	    (json_int_t)json_object_size(docs) + 1, "data_source_type",
	    "upload_file", "data_source_info", "upload_file_id", id,
	    "dataset_process_rule_id", "name", name, "created_from", "api",
	    "created_by", "", "created_at", (json_int_t)now, "tokens", 0,
	    "indexing_status", "waiting", "error", "enabled", 1,
	    "disabled_at", "disabled_by", "archived", 0, "word_count", 0,
	    "hit_count", 0, "doc_form", form, "doc_metadata", "batch",
	    batch, "processing_started_at", "parsing_completed_at",
	    "cleaning_completed_at", "splitting_completed_at", "completed_at",
	    "completed_segments", 0, "total_segments", 0, "_rule", rule);
	rc = ENGINE_ENOMEM;
	if (doc == NULL || (o.puts = json_object()) == NULL ||
	    json_object_set(o.puts, key, doc) != 0)
		goto out;
	if (json_is_string(tech) && json_is_null(json_object_get(ds,
	    "indexing_technique"))) {
		/* the first document sets the dataset's technique */
		if (json_object_set(ds, "indexing_technique", (json_t *)tech) !=
		    0 || json_object_set_new(ds, "retrieval_model_dict",
		    default_retrieval(json_string_value(tech))) != 0 ||
		    embedding_set(ds, in) != 0 ||
		    json_object_set(o.puts, dskey, ds) != 0)
			goto out;
	}
	/* the first document sets the dataset's form, as Dify's */
	if (!json_is_string(json_object_get(ds, "doc_form")) &&
	    (json_object_set_new(ds, "doc_form", json_string(form)) != 0 ||
	    json_object_set(o.puts, dskey, ds) != 0))
		goto out;
	o.require[0] = dskey;
	o.text = text;
	o.text_len = json_string_length(json_object_get(in, "text"));
	o.text_into = key;
	if ((rc = kb_apply(e, &o)) != 0)
		goto out;
	kb_enqueue(e, ds_id, id);
	rc = ENGINE_ENOMEM;
	if ((*out = json_pack("{s:o,s:s}", "document", doc_public(doc),
	    "batch", batch)) != NULL)
		rc = 0;
out:
	json_decref(ds);
	json_decref(rule);
	json_decref(doc);
	json_decref(docs);
	kb_ops_free(&o);
	return rc;
}

/* The extension of filename, lower case, into ext (empty: none). */
static void
file_ext_of(const char *filename, char ext[16])
{
	const char	*dot = filename ? strrchr(filename, '.') : NULL;
	size_t		 i;

	ext[0] = '\0';
	if (dot == NULL || strlen(dot + 1) >= 16)
		return;
	for (i = 0; dot[1 + i] != '\0'; i++)
		ext[i] = (char)tolower((unsigned char)dot[1 + i]);
	ext[i] = '\0';
}

int
engine_kb_file_type_ok(const char *filename)
{
	char ext[16];

	file_ext_of(filename, ext);
	return ext[0] != '\0' && doc_supported(ext);
}

int
engine_kb_document_create_file(struct engine *e, const char *ds_id,
    const json_t *data, const char *filename, const char *bytes, size_t len,
    char *err, json_t **out)
{
	const struct conf	*cf = e->conf;
	struct doc_limits	 lim;
	struct doc		 d = { 0 };
	char			 ext[16], why[ENGINE_ERRMAX] = "";
	json_t			*in = NULL;
	int			 rc;

	*out = NULL;
	if (!engine_kb_file_type_ok(filename)) {
		snprintf(err, ENGINE_ERRMAX, "File type not allowed.");
		return ENGINE_EINVAL;
	}
	file_ext_of(filename, ext);
	doc_limits_default(&lim);
	lim.max_file_size = (size_t)cf->documents_max_file_size;
	lim.max_pages = (size_t)cf->documents_max_pages;
	lim.max_unpacked = (size_t)cf->documents_max_unpacked;
	lim.max_ratio = (size_t)cf->documents_max_ratio;
	lim.max_cells = (size_t)cf->documents_max_cells;
	if ((rc = doc_extract(ext, bytes, len, &lim, &d, why,
	    sizeof(why))) != 0) {
		snprintf(err, ENGINE_ERRMAX, "cannot extract text from '%.80s': "
		    "%.140s", filename, why);
		return rc == DOC_ENOMEM ? ENGINE_ENOMEM : rc == DOC_ELIMIT ?
		    ENGINE_ELIMIT : ENGINE_EINVAL;
	}
	rc = ENGINE_ENOMEM;
	if ((in = json_is_object(data) ? json_deep_copy(data) :
	    json_object()) == NULL || json_object_set_new(in, "name",
	    json_string(filename)) != 0 || json_object_set_new(in, "text",
	    json_string(d.text)) != 0)
		goto out;
	rc = engine_kb_document_create_text(e, ds_id, in, err, out);
out:
	json_decref(in);
	doc_release(&d);
	return rc;
}

/* The documents of dataset ds_id (key -> record) into *all, starting
 * the indexer; "Dataset not found." when there is no such dataset. */
static int	doc_get(struct engine *, const char *, const char *, char *,
		    json_t **);
static int	doc_hier(const json_t *);

/*
 * Dify's update-by-text (DocumentService.update_document_with_dataset_id):
 * an available document gets a new name, text (a new blob, the old one
 * let go) and process rule, each when given, and is indexed again from
 * waiting under a new batch; its record's other members (metadata,
 * enabled) are kept, merged in the write.
 */
int
engine_kb_document_update_text(struct engine *e, const char *ds_id,
    const char *doc_id, const json_t *in, char *err, json_t **out)
{
	const json_t	*name = json_object_get(in, "name");
	const json_t	*text = json_object_get(in, "text");
	json_t		*d = NULL, *rule = NULL, *set = NULL, *now_doc = NULL;
	char		 key[128], batch[40];
	unsigned char	 rnd[3];
	struct kb_ops	 o;
	int64_t		 now = engine_now();
	int		 rc;

	*out = NULL;
	memset(&o, 0, sizeof(o));
	kb_start(e);
	if ((rc = doc_get(e, ds_id, doc_id, err, &d)) != 0)
		return rc;
	rc = ENGINE_EINVAL;
	if (strcmp(doc_display(d), "available") != 0) {
		snprintf(err, ENGINE_ERRMAX, "Document is not available");
		goto out;
	}
	if (text != NULL && !json_is_null(text) && (!json_is_string(text) ||
	    !json_is_string(name))) {
		engine_invalid(err, "Both text and name must be strings.");
		goto out;
	}
	if (name != NULL && !json_is_null(name) && (!json_is_string(name) ||
	    json_string_length(name) == 0 || engine_utf8_len(
	    json_string_value(name)) > 255)) {
		engine_invalid(err, "name is required (1 to 255 characters)");
		goto out;
	}
	if (json_is_string(text) && (int64_t)json_string_length(text) >
	    e->conf->kb_max_document) {
		rc = ENGINE_ELIMIT;
		snprintf(err, ENGINE_ERRMAX, "the text is larger than "
		    "knowledge.max_document_size (%lld bytes)",
		    (long long)e->conf->kb_max_document);
		goto out;
	}
	if (json_is_object(json_object_get(in, "process_rule"))) {
		if ((rc = rule_parse(json_object_get(in, "process_rule"), err,
		    &rule)) != 0)
			goto out;
		rc = ENGINE_EINVAL;
		if ((json_object_get(rule, "sub") != NULL) != doc_hier(d)) {
			engine_invalid(err, "doc_form is different from the "
			    "dataset doc_form.");
			goto out;
		}
	}
	if (RAND_bytes(rnd, sizeof(rnd)) != 1)
		memset(rnd, 0, sizeof(rnd));
	snprintf(batch, sizeof(batch), "%lld%06u", (long long)now,
	    ((unsigned)rnd[0] << 16 | (unsigned)rnd[1] << 8 | rnd[2]) %
	    1000000u);
	rc = ENGINE_ENOMEM;
	/* Dify's: waiting again, the steps' times cleared */
	if ((set = json_pack("{s:s,s:s,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:i,s:i,"
	    "s:I}", "indexing_status", "waiting", "batch", batch,
	    "processing_started_at", "parsing_completed_at",
	    "cleaning_completed_at", "splitting_completed_at", "completed_at",
	    "error", "stopped_at", "completed_segments", 0, "total_segments",
	    0, "updated_at", (json_int_t)now)) == NULL)
		goto out;
	if (json_is_string(name) && json_object_set(set, "name",
	    (json_t *)name) != 0)
		goto out;
	if (rule != NULL && json_object_set(set, "_rule", rule) != 0)
		goto out;
	snprintf(key, sizeof(key), KB_DOC "%s/%s", ds_id, doc_id);
	if ((o.merge = json_pack("{s:O}", key, set)) == NULL)
		goto out;
	if (json_is_string(text)) {
		o.text = json_string_value(text);
		o.text_len = json_string_length(text);
		o.text_into = key;
		if (json_is_string(json_object_get(d, "_text")) &&
		    (o.unref = json_pack("[O]", json_object_get(d, "_text"))) ==
		    NULL)
			goto out;
	}
	if ((rc = kb_apply(e, &o)) != 0)
		goto out;
	kb_enqueue(e, ds_id, doc_id);
	if ((rc = doc_get(e, ds_id, doc_id, err, &now_doc)) != 0)
		goto out;
	rc = ENGINE_ENOMEM;
	if ((*out = json_pack("{s:o,s:s}", "document", doc_public(now_doc),
	    "batch", batch)) != NULL)
		rc = 0;
out:
	json_decref(d);
	json_decref(rule);
	json_decref(set);
	json_decref(now_doc);
	kb_ops_free(&o);
	return rc;
}

int
engine_kb_document_update_file(struct engine *e, const char *ds_id,
    const char *doc_id, const json_t *data, const char *filename,
    const char *bytes, size_t len, char *err, json_t **out)
{
	const struct conf	*cf = e->conf;
	struct doc_limits	 lim;
	struct doc		 d = { 0 };
	char			 ext[16], why[ENGINE_ERRMAX] = "";
	json_t			*in = NULL;
	int			 rc;

	*out = NULL;
	if (filename == NULL)	/* no file: name, rule only */
		return engine_kb_document_update_text(e, ds_id, doc_id,
		    json_is_object(data) ? data : NULL, err, out);
	if (!engine_kb_file_type_ok(filename)) {
		snprintf(err, ENGINE_ERRMAX, "File type not allowed.");
		return ENGINE_EINVAL;
	}
	file_ext_of(filename, ext);
	doc_limits_default(&lim);
	lim.max_file_size = (size_t)cf->documents_max_file_size;
	lim.max_pages = (size_t)cf->documents_max_pages;
	lim.max_unpacked = (size_t)cf->documents_max_unpacked;
	lim.max_ratio = (size_t)cf->documents_max_ratio;
	lim.max_cells = (size_t)cf->documents_max_cells;
	if ((rc = doc_extract(ext, bytes, len, &lim, &d, why,
	    sizeof(why))) != 0) {
		snprintf(err, ENGINE_ERRMAX, "cannot extract text from '%.80s': "
		    "%.140s", filename, why);
		return rc == DOC_ENOMEM ? ENGINE_ENOMEM : rc == DOC_ELIMIT ?
		    ENGINE_ELIMIT : ENGINE_EINVAL;
	}
	rc = ENGINE_ENOMEM;
	/* the document takes the file's name, as create-by-file */
	if ((in = json_is_object(data) ? json_deep_copy(data) :
	    json_object()) == NULL || json_object_set_new(in, "name",
	    json_string(filename)) != 0 || json_object_set_new(in, "text",
	    json_string(d.text)) != 0)
		goto out;
	rc = engine_kb_document_update_text(e, ds_id, doc_id, in, err, out);
out:
	json_decref(in);
	doc_release(&d);
	return rc;
}

static int
ds_documents(struct engine *e, const char *ds_id, char *err, json_t **all)
{
	json_t	*ds = NULL;
	char	 prefix[128];
	int	 rc;

	kb_start(e);
	*all = NULL;
	if ((rc = ds_get(e, ds_id, err, &ds)) != 0)
		return rc;
	json_decref(ds);
	snprintf(prefix, sizeof(prefix), KB_DOC "%s/", ds_id);
	return kb_collect(e, prefix, all);
}

int
engine_kb_document_list(struct engine *e, const char *ds_id, int page,
    int limit, const char *keyword, char *err, json_t **out)
{
	json_t	*all = NULL;
	int	 rc;

	*out = NULL;
	if ((rc = ds_documents(e, ds_id, err, &all)) != 0)
		return rc;
	rc = kb_page(e, all, "name", keyword, by_position, page, limit,
	    doc_view, out);
	json_decref(all);
	return rc;
}

/* Document doc_id of dataset ds_id (as stored) into *doc. */
static int
doc_get(struct engine *e, const char *ds_id, const char *doc_id, char *err,
    json_t **doc)
{
	json_t	*ds = NULL;
	char	 key[128];
	int	 rc;

	*doc = NULL;
	if ((rc = ds_get(e, ds_id, err, &ds)) != 0)
		return rc;
	json_decref(ds);
	snprintf(key, sizeof(key), KB_DOC "%s/%s", ds_id, doc_id);
	if (!kb_id_ok(doc_id) || (rc = kb_load(e, key, doc)) ==
	    ENGINE_ENOTFOUND) {
		snprintf(err, ENGINE_ERRMAX, "Document not found.");
		return ENGINE_ENOTFOUND;
	}
	return rc;
}

int
engine_kb_document_get(struct engine *e, const char *ds_id,
    const char *doc_id, char *err, json_t **out)
{
	json_t	*d = NULL;
	int	 rc;

	kb_start(e);
	*out = NULL;
	if ((rc = doc_get(e, ds_id, doc_id, err, &d)) != 0)
		return rc;
	*out = doc_public(d);
	json_decref(d);
	return *out ? 0 : ENGINE_ENOMEM;
}

int
engine_kb_document_delete(struct engine *e, const char *ds_id,
    const char *doc_id, char *err)
{
	json_t		*d = NULL;
	char		 key[128], prefix[128];
	struct kb_ops	 o;
	int		 rc;

	memset(&o, 0, sizeof(o));
	if ((rc = doc_get(e, ds_id, doc_id, err, &d)) != 0)
		return rc;
	if (json_is_true(json_object_get(d, "archived"))) {
		json_decref(d);
		snprintf(err, ENGINE_ERRMAX, "The archived document is not "
		    "editable.");
		return ENGINE_EEXIST;
	}
	json_decref(d);
	snprintf(key, sizeof(key), KB_DOC "%s/%s", ds_id, doc_id);
	snprintf(prefix, sizeof(prefix), KB_SEG "%s/%s/", ds_id, doc_id);
	/* the document's key is a prefix of none other: it goes with its
	 * blob through del_prefix */
	if ((o.del_prefix = json_pack("[s,s,s+,s+]", key, prefix, KB_VEC,
	    prefix + strlen(KB_SEG), KB_PAR, prefix + strlen(KB_SEG))) ==
	    NULL)
		rc = ENGINE_ENOMEM;
	else
		rc = kb_apply(e, &o);
	kb_ops_free(&o);
	return rc;
}

int
engine_kb_indexing_status(struct engine *e, const char *ds_id,
    const char *batch, char *err, json_t **out)
{
	static const char *const f[] = { "id", "indexing_status",
	    "processing_started_at", "parsing_completed_at",
	    "cleaning_completed_at", "splitting_completed_at", "completed_at",
	    "paused_at", "error", "stopped_at", "completed_segments",
	    "total_segments", NULL };
	json_t		*all = NULL, *data = NULL, *d, *x, *v;
	const char	*k;
	size_t		 i;
	int		 rc;

	*out = NULL;
	if ((rc = ds_documents(e, ds_id, err, &all)) != 0)
		return rc;
	rc = ENGINE_ENOMEM;
	if ((data = json_array()) == NULL)
		goto out;
	json_object_foreach(all, k, d) {
		if (!record_field_is(d, "batch", batch))
			continue;
		if ((x = json_object()) == NULL ||
		    json_array_append_new(data, x) != 0)
			goto out;
		for (i = 0; f[i] != NULL; i++) {
			v = json_object_get(d, f[i]);
			if (json_object_set(x, f[i], v ? v : json_null()) != 0)
				goto out;
		}
	}
	if (json_array_size(data) == 0) {
		snprintf(err, ENGINE_ERRMAX, "Documents not found.");
		rc = ENGINE_ENOTFOUND;
		goto out;
	}
	if ((*out = json_pack("{s:O}", "data", data)) != NULL)
		rc = 0;
out:
	json_decref(all);
	json_decref(data);
	return rc;
}

/* The vectors of the segments of segs (key -> segment) for a
 * high_quality dataset ds_id, into o (kb_vec_free frees them). */
static int
ops_vectors(struct engine *e, const char *ds_id, const json_t *segs,
    struct kb_ops *o, char *err)
{
	json_t		*ds = kb_dataset_load(e, ds_id);
	struct kb_ops	 v;
	int		 rc = 0;

	if (ds != NULL && record_field_is(ds, "indexing_technique",
	    "high_quality")) {
		if ((rc = seg_vectors(e, ds, segs, err, &v)) == 0) {
			o->vecs = v.vecs;
			o->nvec = v.nvec;
			o->dim = v.dim;
			o->vec_keys = v.vec_keys;
		}
	}
	json_decref(ds);
	return rc;
}

static void
kb_vec_free(struct kb_ops *o)
{
	free((void *)o->vecs);
	free(o->vec_keys);
	o->vecs = NULL;
	o->vec_keys = NULL;
}

/* ====== Segments ====== */

/*
 * A parent-child document (doc_form hierarchical_model) shows its
 * parents (kb.par/) as its segments, each with child_chunks: the kb.seg/
 * records whose segment_id is the parent's, which are what the search
 * reads. Any other document shows its kb.seg/ records.
 */
static int
doc_hier(const json_t *d)
{
	return record_field_is(d, "doc_form", "hierarchical_model");
}

static void
seg_api_prefix(char *buf, size_t n, const json_t *d, const char *ds,
    const char *doc)
{
	snprintf(buf, n, "%s%s/%s/", doc_hier(d) ? KB_PAR : KB_SEG, ds, doc);
}

/* Dify's child_chunk_fields of child record c (NULL: out of memory). */
static json_t *
child_view(const json_t *c)
{
	return json_pack("{s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O}", "id",
	    json_object_get(c, "id"), "segment_id", json_object_get(c,
	    "segment_id"), "content", json_object_get(c, "content"),
	    "position", json_object_get(c, "position"), "word_count",
	    json_object_get(c, "word_count"), "type", json_object_get(c,
	    "type"), "created_at", json_object_get(c, "created_at"),
	    "updated_at", json_object_get(c, "updated_at"));
}

/* The number of segment key k ("...<ds>/<doc>/<n>"), 0 when none. */
static int
seg_key_n(const char *k)
{
	const char	*slash = strrchr(k, '/');
	char		*end;
	long		 v;

	if (slash == NULL)
		return 0;
	v = strtol(slash + 1, &end, 10);
	return *end == '\0' && v > 0 && v < 100000000 ? (int)v : 0;
}

/*
 * The child chunks of document doc: *all key -> record (new reference)
 * and *maxn the highest key number among them (0: none).
 */
static int
children_collect(struct engine *e, const char *ds, const char *doc,
    json_t **all, int *maxn)
{
	char		 prefix[128];
	const char	*k;
	json_t		*c;
	int		 rc;

	*maxn = 0;
	snprintf(prefix, sizeof(prefix), KB_SEG "%s/%s/", ds, doc);
	if ((rc = kb_collect(e, prefix, all)) != 0)
		return rc;
	json_object_foreach(*all, k, c)
		if (seg_key_n(k) > *maxn)
			*maxn = seg_key_n(k);
	return 0;
}

static int
by_position_p(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a,
	    "position"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b,
	    "position"));

	return x < y ? -1 : x > y;
}

/* The children of parent pid among all (key -> record), by position,
 * as records (borrowed) in *out (a new array). */
static int
children_of(const json_t *all, const char *pid, json_t **out)
{
	json_t		*c;
	const char	*k;

	if ((*out = json_array()) == NULL)
		return ENGINE_ENOMEM;
	json_object_foreach((json_t *)all, k, c)
		if (record_field_is(c, "segment_id", pid) &&
		    json_array_append(*out, c) != 0)
			return ENGINE_ENOMEM;
	if (json_array_size(*out) > 1) {
		json_t	**v;
		size_t	  i, n = json_array_size(*out);

		if ((v = calloc(n, sizeof(*v))) == NULL)
			return ENGINE_ENOMEM;
		for (i = 0; i < n; i++)
			v[i] = json_incref(json_array_get(*out, i));
		qsort(v, n, sizeof(*v), by_position_p);
		json_array_clear(*out);
		for (i = 0; i < n; i++)
			json_array_append_new(*out, v[i]);
		free(v);
	}
	return 0;
}

/* Puts into each segment of data (views of parents) its child_chunks. */
static int
data_children(struct engine *e, const char *ds, const char *doc,
    json_t *data)
{
	json_t	*all = NULL, *kids = NULL, *s, *views, *c;
	size_t	 i, j;
	int	 rc, maxn;

	if ((rc = children_collect(e, ds, doc, &all, &maxn)) != 0)
		return rc;
	json_array_foreach(data, i, s) {
		json_decref(kids);
		kids = NULL;
		if ((rc = children_of(all, json_string_value(json_object_get(s,
		    "id")), &kids)) != 0)
			goto out;
		rc = ENGINE_ENOMEM;
		if ((views = json_array()) == NULL || json_object_set_new(s,
		    "child_chunks", views) != 0)
			goto out;
		json_array_foreach(kids, j, c)
			if (json_array_append_new(views, child_view(c)) != 0)
				goto out;
	}
	rc = 0;
out:
	json_decref(kids);
	json_decref(all);
	return rc;
}


static json_t *
seg_view(struct engine *e, const json_t *s)
{
	(void)e;
	return kb_public(s);
}

int
engine_kb_segment_list(struct engine *e, const char *ds_id,
    const char *doc_id, int page, int limit, const char *keyword,
    char *err, json_t **out)
{
	json_t	*d = NULL, *all = NULL, *pg = NULL;
	char	 prefix[128];
	int	 rc;

	*out = NULL;
	if ((rc = doc_get(e, ds_id, doc_id, err, &d)) != 0)
		return rc;
	seg_api_prefix(prefix, sizeof(prefix), d, ds_id, doc_id);
	if ((rc = kb_collect(e, prefix, &all)) != 0)
		goto out;
	if ((rc = kb_page(e, all, "content", keyword, by_position, page,
	    limit, seg_view, &pg)) != 0)
		goto out;
	if (doc_hier(d) && (rc = data_children(e, ds_id, doc_id,
	    json_object_get(pg, "data"))) != 0)
		goto out;
	rc = ENGINE_ENOMEM;
	if (json_object_set(pg, "doc_form", json_object_get(d, "doc_form")) ==
	    0) {
		*out = pg;
		pg = NULL;
		rc = 0;
	}
out:
	json_decref(d);
	json_decref(all);
	json_decref(pg);
	return rc;
}

int
engine_kb_segment_add(struct engine *e, const char *ds_id,
    const char *doc_id, const json_t *in, char *err, json_t **out)
{
	json_t		*d = NULL, *all = NULL, *segs, *s, *data = NULL, *x;
	json_t		*kids = NULL;
	char		 prefix[128], dkey[128], skey[160];
	const char	*k, *c;
	struct kb_ops	 o;
	size_t		 i, nc;
	int		 rc, pos = 0, maxn = 0;

	*out = NULL;
	memset(&o, 0, sizeof(o));
	if ((rc = doc_get(e, ds_id, doc_id, err, &d)) != 0)
		return rc;
	rc = ENGINE_EINVAL;
	if (!record_field_is(d, "indexing_status", "completed") ||
	    !json_is_true(json_object_get(d, "enabled"))) {
		snprintf(err, ENGINE_ERRMAX, "Document is not completed.");
		goto out;
	}
	segs = json_object_get(in, "segments");
	if (!json_is_array(segs) || json_array_size(segs) == 0 ||
	    json_array_size(segs) > 100) {
		engine_invalid(err, "segments must be a list of 1 to 100 "
		    "segments");
		goto out;
	}
	seg_api_prefix(prefix, sizeof(prefix), d, ds_id, doc_id);
	snprintf(dkey, sizeof(dkey), KB_DOC "%s/%s", ds_id, doc_id);
	if ((rc = kb_collect(e, prefix, &all)) != 0 || (doc_hier(d) &&
	    (rc = children_collect(e, ds_id, doc_id, &kids, &maxn)) != 0))
		goto out;
	json_object_foreach(all, k, s)
		if (json_integer_value(json_object_get(s, "position")) > pos)
			pos = (int)json_integer_value(json_object_get(s,
			    "position"));
	rc = ENGINE_ENOMEM;
	if ((o.puts = json_object()) == NULL || (data = json_array()) == NULL)
		goto out;
	json_array_foreach(segs, i, s) {
		c = json_string_value(json_object_get(s, "content"));
		if (c == NULL || strspn(c, " \t\r\n") == strlen(c)) {
			rc = engine_invalid(err, "segments[%zu].content is "
			    "required", i);
			goto out;
		}
		x = seg_new(doc_id, c, json_string_value(json_object_get(s,
		    "answer")), json_is_array(json_object_get(s, "keywords")) ?
		    json_object_get(s, "keywords") : NULL, ++pos);
		if (doc_hier(d))
			par_key(skey, sizeof(skey), ds_id, doc_id, pos);
		else
			seg_key(skey, sizeof(skey), ds_id, doc_id, pos);
		if (x == NULL || json_object_set_new(o.puts, skey, x) != 0 ||
		    json_array_append(data, x) != 0)
			goto out;
		/* a parent's children split by the document's rule, as
		 * Dify's VectorService.generate_child_chunks */
		if (doc_hier(d) && (rc = child_chunks_make(ds_id, doc_id,
		    json_object_get(d, "_rule"), x, c,
		    (size_t)e->conf->kb_max_segments, "automatic", &maxn,
		    o.puts, &nc)) != 0)
			goto out;
		rc = ENGINE_ENOMEM;
	}
	o.require[0] = dkey;
	if ((rc = ops_vectors(e, ds_id, o.puts, &o, err)) != 0 ||
	    (rc = kb_apply(e, &o)) != 0)
		goto out;
	if (doc_hier(d) && (rc = data_children(e, ds_id, doc_id, data)) != 0)
		goto out;
	rc = ENGINE_ENOMEM;
	if ((*out = json_pack("{s:O,s:O}", "data", data, "doc_form",
	    json_object_get(d, "doc_form"))) != NULL)
		rc = 0;
out:
	json_decref(d);
	json_decref(all);
	json_decref(kids);
	json_decref(data);
	kb_vec_free(&o);
	kb_ops_free(&o);
	return rc;
}

/* The key and record of segment seg_id of a document (a parent of a
 * parent-child document: *hier 1, when hier is not NULL). */
static int
seg_find(struct engine *e, const char *ds_id, const char *doc_id,
    const char *seg_id, char *err, char key[160], json_t **seg, int *hier)
{
	json_t		*d = NULL, *all = NULL, *s;
	char		 prefix[128];
	const char	*k;
	int		 rc;

	*seg = NULL;
	if ((rc = doc_get(e, ds_id, doc_id, err, &d)) != 0)
		return rc;
	seg_api_prefix(prefix, sizeof(prefix), d, ds_id, doc_id);
	if (hier != NULL)
		*hier = doc_hier(d);
	json_decref(d);
	if ((rc = kb_collect(e, prefix, &all)) != 0)
		return rc;
	rc = ENGINE_ENOTFOUND;
	snprintf(err, ENGINE_ERRMAX, "Segment not found.");
	json_object_foreach(all, k, s)
		if (record_field_is(s, "id", seg_id)) {
			snprintf(key, 160, "%s", k);
			*seg = json_incref(s);
			err[0] = '\0';
			rc = 0;
			break;
		}
	json_decref(all);
	return rc;
}

/*
 * What an edit of parent par (already edited) of a parent-child document
 * adds to write o: its children follow its enabled (each merged with its
 * id), and with regenerate_child_chunks and new content, as Dify's, the
 * children go and new ones are split from the content by the document's
 * rule (o->puts, their vectors still to make). 0 or ENGINE_E*.
 */
static int
hier_update(struct engine *e, const char *ds, const char *doc,
    const json_t *u, const json_t *par, struct kb_ops *o)
{
	json_t		*all = NULL, *d = NULL, *c, *en = json_object_get(u,
			    "enabled");
	const char	*k, *pid = json_string_value(json_object_get(par, "id"));
	char		 dkey[128], vkey[160];
	size_t		 nc;
	int		 rc, maxn, regen;

	regen = json_is_true(json_object_get(u, "regenerate_child_chunks")) &&
	    json_is_string(json_object_get(u, "content"));
	snprintf(dkey, sizeof(dkey), KB_DOC "%s/%s", ds, doc);
	if ((rc = children_collect(e, ds, doc, &all, &maxn)) != 0 ||
	    (rc = kb_load(e, dkey, &d)) != 0)
		goto out;
	rc = ENGINE_ENOMEM;
	if ((o->dels == NULL && (o->dels = json_array()) == NULL) ||
	    (o->puts == NULL && (o->puts = json_object()) == NULL))
		goto out;
	json_object_foreach(all, k, c) {
		if (!record_field_is(c, "segment_id", pid))
			continue;
		if (regen) {
			snprintf(vkey, sizeof(vkey), KB_VEC "%s", k +
			    strlen(KB_SEG));
			if (json_array_append_new(o->dels, json_string(k)) !=
			    0 || json_array_append_new(o->dels,
			    json_string(vkey)) != 0)
				goto out;
		} else if (json_is_boolean(en) && json_object_set_new(o->merge,
		    k, json_pack("{s:O,s:O,s:o}", "id", json_object_get(c,
		    "id"), "enabled", en, "disabled_at", json_is_true(en) ?
		    json_null() : json_integer(engine_now()))) != 0)
			goto out;
	}
	if (regen) {
		if ((rc = child_chunks_make(ds, doc, json_object_get(d,
		    "_rule"), par, json_string_value(json_object_get(par,
		    "content")), (size_t)e->conf->kb_max_segments, "automatic",
		    &maxn, o->puts, &nc)) != 0)
			goto out;
		rc = ENGINE_ENOMEM;
		json_object_foreach(o->puts, k, c)
			if (json_object_set(c, "enabled", json_object_get(par,
			    "enabled")) != 0)
				goto out;
	}
	rc = 0;
out:
	json_decref(all);
	json_decref(d);
	return rc;
}

/*
 * Edits a segment: the members changed (with the segment's id, so that
 * a segment another write put under the same key since it was read is
 * not overwritten: 404) are merged into the record in the write.
 */
int
engine_kb_segment_update(struct engine *e, const char *ds_id,
    const char *doc_id, const char *seg_id, const json_t *in, char *err,
    json_t **out)
{
	const json_t	*u = json_object_get(in, "segment"), *v;
	json_t		*s = NULL, *set = NULL, *segs = NULL, *data = NULL;
	char		 key[160], dkey[128], hex[STORE_HASH_HEX];
	const char	*c;
	struct kb_ops	 o;
	int		 rc, hier = 0;

	*out = NULL;
	memset(&o, 0, sizeof(o));
	if (!json_is_object(u))
		return engine_invalid(err, "segment is required");
	if ((rc = seg_find(e, ds_id, doc_id, seg_id, err, key, &s, &hier)) !=
	    0)
		return rc;
	rc = ENGINE_ENOMEM;
	if ((set = json_pack("{s:s,s:I}", "id", seg_id, "updated_at",
	    (json_int_t)engine_now())) == NULL)
		goto out;
	if ((v = json_object_get(u, "content")) != NULL) {
		c = json_string_value(v);
		if (c == NULL || strspn(c, " \t\r\n") == strlen(c)) {
			rc = engine_invalid(err, "segment.content must not be "
			    "blank");
			goto out;
		}
		store_hash(c, strlen(c), hex);
		if (json_object_set(set, "content", (json_t *)v) != 0 ||
		    json_object_set_new(set, "word_count", json_integer(
		    (json_int_t)engine_utf8_len(c))) != 0 ||
		    json_object_set_new(set, "tokens", json_integer((json_int_t)
		    kb_token_count(c, strlen(c)))) != 0 ||
		    json_object_set_new(set, "index_node_hash",
		    json_string(hex)) != 0)
			goto out;
	}
	if (json_is_string(v = json_object_get(u, "answer")) &&
	    json_object_set(set, "answer", (json_t *)v) != 0)
		goto out;
	if (json_is_array(v = json_object_get(u, "keywords")) &&
	    json_object_set(set, "keywords", (json_t *)v) != 0)
		goto out;
	if (json_is_boolean(v = json_object_get(u, "enabled")) &&
	    (json_object_set(set, "enabled", (json_t *)v) != 0 ||
	    json_object_set_new(set, "disabled_at", json_is_true(v) ?
	    json_null() : json_integer(engine_now())) != 0))
		goto out;
	if (json_object_update(s, set) != 0)
		goto out;
	snprintf(dkey, sizeof(dkey), KB_DOC "%s/%s", ds_id, doc_id);
	o.require[0] = dkey;
	if ((o.merge = json_object()) == NULL ||
	    json_object_set(o.merge, key, set) != 0 ||
	    (segs = json_pack("{s:O}", key, s)) == NULL)
		goto out;
	if (hier && (rc = hier_update(e, ds_id, doc_id, u, s, &o)) != 0)
		goto out;
	if (!hier && json_object_get(u, "content") != NULL &&
	    (rc = ops_vectors(e, ds_id, segs, &o, err)) != 0)
		goto out;
	if (hier && json_object_size(o.puts) > 0 &&
	    (rc = ops_vectors(e, ds_id, o.puts, &o, err)) != 0)
		goto out;
	KB_HOOK(e, "seg_write");
	if ((rc = kb_apply(e, &o)) != 0) {
		if (rc == ENGINE_ENOTFOUND)
			snprintf(err, ENGINE_ERRMAX, "Segment not found.");
		goto out;
	}
	rc = ENGINE_ENOMEM;
	if ((data = json_array()) == NULL || json_array_append_new(data,
	    kb_public(s)) != 0 || (hier && data_children(e, ds_id, doc_id,
	    data) != 0))
		goto out;
	if ((*out = json_pack("{s:O,s:s}", "data", json_array_get(data, 0),
	    "doc_form", hier ? "hierarchical_model" : "text_model")) != NULL)
		rc = 0;
out:
	json_decref(data);
	json_decref(s);
	json_decref(set);
	json_decref(segs);
	kb_vec_free(&o);
	kb_ops_free(&o);
	return rc;
}

int
engine_kb_segment_delete(struct engine *e, const char *ds_id,
    const char *doc_id, const char *seg_id, char *err)
{
	json_t		*s = NULL, *all = NULL, *c;
	char		 key[160];
	const char	*k;
	struct kb_ops	 o;
	int		 rc, hier = 0, maxn;

	memset(&o, 0, sizeof(o));
	if ((rc = seg_find(e, ds_id, doc_id, seg_id, err, key, &s, &hier)) !=
	    0)
		return rc;
	if ((o.dels = json_pack("[s,s+]", key, KB_VEC, key +
	    strlen(KB_SEG))) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	/* a parent goes with its children */
	if (hier && (rc = children_collect(e, ds_id, doc_id, &all,
	    &maxn)) != 0)
		goto out;
	json_object_foreach(all, k, c)
		if (record_field_is(c, "segment_id", seg_id) &&
		    (json_array_append_new(o.dels, json_string(k)) != 0 ||
		    json_array_append_new(o.dels, json_pack("s+", KB_VEC, k +
		    strlen(KB_SEG))) != 0)) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	rc = kb_apply(e, &o);
out:
	json_decref(s);
	json_decref(all);
	kb_ops_free(&o);
	return rc;
}

/* ====== Child chunks (Dify's segments/{id}/child_chunks) ====== */

/*
 * The parent seg_id of parent-child document doc_id: its key and record
 * (new) in *pkey and *par, the document's children (key -> record, new)
 * in *all and their highest key number in *maxn. A document of another
 * form is 400.
 */
static int
child_ctx(struct engine *e, const char *ds_id, const char *doc_id,
    const char *seg_id, char *err, char pkey[160], json_t **par,
    json_t **all, int *maxn)
{
	int	rc, hier = 0;

	*all = NULL;
	if ((rc = seg_find(e, ds_id, doc_id, seg_id, err, pkey, par,
	    &hier)) != 0)
		return rc;
	if (!hier) {
		json_decref(*par);
		*par = NULL;
		return engine_invalid(err, "Child chunks belong to the "
		    "segments of a parent-child (hierarchical_model) "
		    "document.");
	}
	if ((rc = children_collect(e, ds_id, doc_id, all, maxn)) != 0) {
		json_decref(*par);
		*par = NULL;
	}
	return rc;
}

/* The child chunk content of in ({content}): NULL when blank. */
static const char *
child_content(const json_t *in, char *err)
{
	const char *c = json_string_value(json_object_get(in, "content"));

	if (c == NULL || strspn(c, " \t\r\n") == strlen(c)) {
		engine_invalid(err, "content is required");
		return NULL;
	}
	return c;
}

int
engine_kb_child_list(struct engine *e, const char *ds_id, const char *doc_id,
    const char *seg_id, int page, int limit, const char *keyword, char *err,
    json_t **out)
{
	json_t		*par = NULL, *all = NULL, *kids = NULL, *data = NULL, *c;
	char		 pkey[160];
	const char	*s;
	size_t		 i, n = 0, from;
	int		 rc, maxn;

	*out = NULL;
	if ((rc = child_ctx(e, ds_id, doc_id, seg_id, err, pkey, &par, &all,
	    &maxn)) != 0)
		return rc;
	if ((rc = children_of(all, seg_id, &kids)) != 0)
		goto out;
	rc = ENGINE_ENOMEM;
	if ((data = json_array()) == NULL)
		goto out;
	from = (size_t)(page - 1) * (size_t)limit;
	json_array_foreach(kids, i, c) {
		s = json_string_value(json_object_get(c, "content"));
		if (keyword != NULL && *keyword != '\0' && (s == NULL ||
		    strcasestr(s, keyword) == NULL))
			continue;
		if (n >= from && n < from + (size_t)limit &&
		    json_array_append_new(data, child_view(c)) != 0)
			goto out;
		n++;
	}
	/* Dify's {data, total, total_pages, page, limit} */
	if ((*out = json_pack("{s:O,s:I,s:I,s:i,s:i}", "data", data, "total",
	    (json_int_t)n, "total_pages", (json_int_t)((n + (size_t)limit -
	    1) / (size_t)limit), "page", page, "limit", limit)) != NULL)
		rc = 0;
out:
	json_decref(par);
	json_decref(all);
	json_decref(kids);
	json_decref(data);
	return rc;
}

int
engine_kb_child_create(struct engine *e, const char *ds_id,
    const char *doc_id, const char *seg_id, const json_t *in, char *err,
    json_t **out)
{
	json_t		*par = NULL, *all = NULL, *c, *x = NULL;
	char		 pkey[160], skey[160], dkey[128];
	const char	*k, *content;
	struct kb_ops	 o;
	int		 rc, maxn, pos = 0;

	*out = NULL;
	memset(&o, 0, sizeof(o));
	if ((content = child_content(in, err)) == NULL)
		return ENGINE_EINVAL;
	if ((rc = child_ctx(e, ds_id, doc_id, seg_id, err, pkey, &par, &all,
	    &maxn)) != 0)
		return rc;
	json_object_foreach(all, k, c)
		if (record_field_is(c, "segment_id", seg_id) &&
		    json_integer_value(json_object_get(c, "position")) > pos)
			pos = (int)json_integer_value(json_object_get(c,
			    "position"));
	rc = ENGINE_ENOMEM;
	/* Dify's create_child_chunk: after the last, type customized */
	if ((x = seg_new(doc_id, content, NULL, NULL, pos + 1)) == NULL ||
	    json_object_set(x, "segment_id", json_object_get(par, "id")) !=
	    0 || json_object_set_new(x, "type", json_string("customized")) !=
	    0 || json_object_set(x, "_parent", json_object_get(par,
	    "position")) != 0 || json_object_set(x, "enabled",
	    json_object_get(par, "enabled")) != 0)
		goto out;
	seg_key(skey, sizeof(skey), ds_id, doc_id, maxn + 1);
	snprintf(dkey, sizeof(dkey), KB_DOC "%s/%s", ds_id, doc_id);
	o.require[0] = dkey;
	o.require[1] = pkey;
	if ((o.puts = json_pack("{s:O}", skey, x)) == NULL)
		goto out;
	if ((rc = ops_vectors(e, ds_id, o.puts, &o, err)) != 0 ||
	    (rc = kb_apply(e, &o)) != 0)
		goto out;
	rc = (*out = json_pack("{s:o}", "data", child_view(x))) ? 0 :
	    ENGINE_ENOMEM;
out:
	json_decref(par);
	json_decref(all);
	json_decref(x);
	kb_vec_free(&o);
	kb_ops_free(&o);
	return rc;
}

/* The key of child chunk child_id of parent seg_id among all. */
static const char *
child_find(const json_t *all, const char *seg_id, const char *child_id,
    char *err, json_t **c)
{
	const char	*k;

	json_object_foreach((json_t *)all, k, *c)
		if (record_field_is(*c, "id", child_id) &&
		    record_field_is(*c, "segment_id", seg_id))
			return k;
	snprintf(err, ENGINE_ERRMAX, "Child chunk not found.");
	return NULL;
}

int
engine_kb_child_update(struct engine *e, const char *ds_id,
    const char *doc_id, const char *seg_id, const char *child_id,
    const json_t *in, char *err, json_t **out)
{
	json_t		*par = NULL, *all = NULL, *c, *set = NULL, *segs = NULL;
	char		 pkey[160], hex[STORE_HASH_HEX];
	const char	*k, *content;
	struct kb_ops	 o;
	int		 rc, maxn;

	*out = NULL;
	memset(&o, 0, sizeof(o));
	if ((content = child_content(in, err)) == NULL)
		return ENGINE_EINVAL;
	if ((rc = child_ctx(e, ds_id, doc_id, seg_id, err, pkey, &par, &all,
	    &maxn)) != 0)
		return rc;
	rc = ENGINE_ENOTFOUND;
	if ((k = child_find(all, seg_id, child_id, err, &c)) == NULL)
		goto out;
	rc = ENGINE_ENOMEM;
	store_hash(content, strlen(content), hex);
	/* Dify's update_child_chunk: the edited chunk is customized */
	if ((set = json_pack("{s:s,s:s,s:I,s:I,s:s,s:s,s:I}", "id", child_id,
	    "content", content, "word_count", (json_int_t)engine_utf8_len(
	    content), "tokens", (json_int_t)kb_token_count(content,
	    strlen(content)), "index_node_hash", hex, "type", "customized",
	    "updated_at", (json_int_t)engine_now())) == NULL ||
	    json_object_update(c, set) != 0 ||
	    (o.merge = json_pack("{s:O}", k, set)) == NULL ||
	    (segs = json_pack("{s:O}", k, c)) == NULL)
		goto out;
	o.require[0] = pkey;
	if ((rc = ops_vectors(e, ds_id, segs, &o, err)) != 0)
		goto out;
	if ((rc = kb_apply(e, &o)) != 0) {
		if (rc == ENGINE_ENOTFOUND)
			snprintf(err, ENGINE_ERRMAX, "Child chunk not found.");
		goto out;
	}
	rc = (*out = json_pack("{s:o}", "data", child_view(c))) ? 0 :
	    ENGINE_ENOMEM;
out:
	json_decref(par);
	json_decref(all);
	json_decref(set);
	json_decref(segs);
	kb_vec_free(&o);
	kb_ops_free(&o);
	return rc;
}

int
engine_kb_child_delete(struct engine *e, const char *ds_id,
    const char *doc_id, const char *seg_id, const char *child_id, char *err)
{
	json_t		*par = NULL, *all = NULL, *c;
	char		 pkey[160];
	const char	*k;
	struct kb_ops	 o;
	int		 rc, maxn;

	memset(&o, 0, sizeof(o));
	if ((rc = child_ctx(e, ds_id, doc_id, seg_id, err, pkey, &par, &all,
	    &maxn)) != 0)
		return rc;
	rc = ENGINE_ENOTFOUND;
	if ((k = child_find(all, seg_id, child_id, err, &c)) == NULL)
		goto out;
	if ((o.dels = json_pack("[s,s+]", k, KB_VEC, k + strlen(KB_SEG))) ==
	    NULL)
		rc = ENGINE_ENOMEM;
	else
		rc = kb_apply(e, &o);
out:
	json_decref(par);
	json_decref(all);
	kb_ops_free(&o);
	return rc;
}

/* ====== Retrieve (hit testing) ====== */

struct ranked {
	double	 score;
	size_t	 i;
};

static int
by_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * Reorders *hits (kb_search's) by the relevance rerank model rr
 * ({reranking_provider_name, reranking_model_name}) gives them, their
 * scores replaced by it and those at or below a positive threshold left
 * out, as Dify's reranking_model mode. 0 or kb_rerank's error.
 */
static int
hits_rerank(struct engine *e, const json_t *rr, const char *query,
    double th, char *err, json_t **hits)
{
	const char	*prov = json_string_value(json_object_get(rr,
			    "reranking_provider_name"));
	const char	*model = json_string_value(json_object_get(rr,
			    "reranking_model_name"));
	const char	**texts = NULL, *slash;
	double		*sc = NULL;
	struct ranked	*rk = NULL;
	json_t		*out = NULL, *h;
	size_t		 n = json_array_size(*hits), i;
	int		 rc = ENGINE_ENOMEM;

	if (n == 0)
		return 0;
	/* Dify names plugin providers "langgenius/jina/jina" */
	if (prov != NULL && (slash = strrchr(prov, '/')) != NULL)
		prov = slash + 1;
	if ((texts = calloc(n, sizeof(*texts))) == NULL || (rk = calloc(n,
	    sizeof(*rk))) == NULL || (out = json_array()) == NULL)
		goto out;
	json_array_foreach(*hits, i, h)
		texts[i] = json_string_value(json_object_get(json_object_get(h,
		    "segment"), "content"));
	if ((rc = kb_rerank(e, prov, model, query, texts, n, err, &sc)) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		rk[i].score = sc[i];
		rk[i].i = i;
	}
	qsort(rk, n, sizeof(*rk), by_ranked);
	rc = ENGINE_ENOMEM;
	for (i = 0; i < n; i++) {
		if (th > 0 && rk[i].score <= th)
			break;
		h = json_array_get(*hits, rk[i].i);
		if (json_object_set_new(h, "score", json_real(rk[i].score)) !=
		    0 || json_array_append(out, h) != 0)
			goto out;
	}
	json_decref(*hits);
	*hits = out;
	out = NULL;
	rc = 0;
out:
	free(texts);
	free(sc);
	free(rk);
	json_decref(out);
	return rc;
}

int
engine_kb_retrieve(struct engine *e, const char *ds_id, const json_t *in,
    char *err, json_t **out)
{
	const char	*q = json_string_value(json_object_get(in, "query"));
	json_t		*ds = NULL, *rm, *search, *hits = NULL, *recs = NULL;
	const json_t	*rr;
	const char	*mode;
	int		 rerank;
	json_t		*h, *seg;
	json_t		*doc, *rec;
	double		 th = 0;
	size_t		 i;
	int		 rc, top_k = 4;

	*out = NULL;
	kb_start(e);
	if ((rc = ds_get(e, ds_id, err, &ds)) != 0)
		return rc;
	rc = ENGINE_EINVAL;
	if (q == NULL || *q == '\0') {
		engine_invalid(err, "query is required");
		goto out;
	}
	if (engine_utf8_len(q) > (size_t)e->conf->kb_max_query) {
		engine_invalid(err, "Query cannot exceed %d characters "
		    "(knowledge.max_query).", e->conf->kb_max_query);
		goto out;
	}
	/* the request's retrieval_model, else the dataset's */
	rm = json_object_get(in, "retrieval_model");
	if (!json_is_object(rm))
		rm = json_object_get(ds, "retrieval_model_dict");
	/* kb_search takes the dataset's method when rm names none */
	search = rm;
	if (json_integer_value(json_object_get(rm, "top_k")) > 0)
		top_k = (int)json_integer_value(json_object_get(rm, "top_k"));
	if (top_k > 100)
		top_k = 100;
	if (json_is_true(json_object_get(rm, "score_threshold_enabled")))
		th = json_number_value(json_object_get(rm, "score_threshold"));
	rr = json_object_get(rm, "reranking_model");
	mode = json_string_value(json_object_get(rm, "reranking_mode"));
	rerank = json_is_true(json_object_get(rm, "reranking_enable")) &&
	    (mode == NULL || strcmp(mode, "reranking_model") == 0) &&
	    json_string_length(json_object_get(rr,
	    "reranking_model_name")) > 0;
	/* reranked: the threshold applies to the model's scores */
	if ((rc = kb_search(e, ds_id, q, search, top_k, rerank ? 0 : th, err,
	    &hits)) != 0 || (rerank && (rc = hits_rerank(e, rr, q, th, err,
	    &hits)) != 0))
		goto out;
	rc = ENGINE_ENOMEM;
	if ((recs = json_array()) == NULL)
		goto out;
	json_array_foreach(hits, i, h) {
		seg = json_deep_copy(json_object_get(h, "segment"));
		doc = json_object_get(h, "document");
		if (seg == NULL || json_object_set_new(seg, "document",
		    json_pack("{s:O,s:O,s:O,s:n,s:O}", "id", json_object_get(
		    doc, "id"), "data_source_type", json_object_get(doc,
		    "data_source_type"), "name", json_object_get(doc, "name"),
		    "doc_type", "doc_metadata", json_object_get(doc,
		    "doc_metadata"))) != 0) {
			json_decref(seg);
			goto out;
		}
		rec = json_pack("{s:o,s:o,s:O,s:n,s:[],s:n}", "segment", seg,
		    "child_chunks", json_object_get(h, "child_chunks") ?
		    json_deep_copy(json_object_get(h, "child_chunks")) :
		    json_array(), "score", json_object_get(h, "score"),
		    "tsne_position", "files", "summary");
		if (rec == NULL || json_array_append_new(recs, rec) != 0)
			goto out;
	}
	if ((*out = json_pack("{s:{s:s},s:O}", "query", "content", q,
	    "records", recs)) != NULL)
		rc = 0;
out:
	json_decref(ds);
	json_decref(hits);
	json_decref(recs);
	return rc;
}

/* ====== Metadata fields (Dify's datasets/{id}/metadata) ====== */

/* Dify's built-in fields (BuiltInField) and their types. */
static const char *const kb_builtin[][2] = {
	{ "document_name", "string" }, { "uploader", "string" },
	{ "upload_date", "time" }, { "last_update_date", "time" },
	{ "source", "string" }, { NULL, NULL }
};

static int
builtin_name(const char *name)
{
	size_t i;

	for (i = 0; kb_builtin[i][0] != NULL; i++)
		if (strcmp(kb_builtin[i][0], name) == 0)
			return 1;
	return 0;
}

/* Puts dataset record ds (key KB_DS id) and merges more (key ->
 * members, may be NULL: kb_ops' merge) in one write. */
static int
ds_put(struct engine *e, const char *id, json_t *ds, json_t *more)
{
	struct kb_ops	o;
	char		key[128];
	int		rc = ENGINE_ENOMEM;

	memset(&o, 0, sizeof(o));
	snprintf(key, sizeof(key), KB_DS "%s", id);
	o.require[0] = key;
	if (json_object_set_new(ds, "updated_at", json_integer(
	    engine_now())) == 0 && (o.merge = more ? json_deep_copy(more) :
	    json_object()) != NULL && (o.puts = json_object()) != NULL &&
	    json_object_set(o.puts, key, ds) == 0)
		rc = kb_apply(e, &o);
	kb_ops_free(&o);
	return rc;
}

/* The index of field id (or name, when id is NULL) in ds's fields, or
 * -1. */
static ssize_t
field_find(const json_t *ds, const char *id, const char *name)
{
	const json_t	*f;
	size_t		 i;

	json_array_foreach(json_object_get(ds, "doc_metadata"), i, f)
		if (id != NULL ? record_field_is(f, "id", id) :
		    record_field_is(f, "name", name))
			return (ssize_t)i;
	return -1;
}

/* A field name Dify takes: 1..255 characters, not built-in, unique. */
static int
field_name_check(const json_t *ds, const json_t *name, char *err)
{
	const char *n = json_string_value(name);

	if (n == NULL || *n == '\0')
		return engine_invalid(err, "name is required");
	if (engine_utf8_len(n) > 255)
		return engine_invalid(err, "Metadata name cannot exceed 255 "
		    "characters.");
	if (builtin_name(n))
		return engine_invalid(err, "Metadata name already exists in "
		    "Built-in fields.");
	if (field_find(ds, NULL, n) >= 0) {
		snprintf(err, ENGINE_ERRMAX, "Metadata name already exists.");
		return ENGINE_EEXIST;
	}
	return 0;
}

int
engine_kb_metadata_create(struct engine *e, const char *ds_id,
    const json_t *in, char *err, json_t **out)
{
	const char	*type = json_string_value(json_object_get(in, "type"));
	json_t		*ds = NULL, *f = NULL;
	char		 id[37];
	int		 rc;

	*out = NULL;
	if ((rc = ds_get(e, ds_id, err, &ds)) != 0)
		return rc;
	if (type == NULL || (strcmp(type, "string") != 0 && strcmp(type,
	    "number") != 0 && strcmp(type, "time") != 0)) {
		rc = engine_invalid(err, "type must be string, number or time");
		goto out;
	}
	if ((rc = field_name_check(ds, json_object_get(in, "name"), err)) !=
	    0)
		goto out;
	if (json_array_size(json_object_get(ds, "doc_metadata")) >=
	    (size_t)e->conf->kb_max_metadata_fields) {
		snprintf(err, ENGINE_ERRMAX, "at most %d metadata fields a "
		    "dataset (knowledge.max_metadata_fields)",
		    e->conf->kb_max_metadata_fields);
		rc = ENGINE_ELIMIT;
		goto out;
	}
	engine_uuid(id);
	rc = ENGINE_ENOMEM;
	if (!json_is_array(json_object_get(ds, "doc_metadata")) &&
	    json_object_set_new(ds, "doc_metadata", json_array()) != 0)
		goto out;
	if ((f = json_pack("{s:s,s:s,s:O}", "id", id, "type", type, "name",
	    json_object_get(in, "name"))) == NULL ||
	    json_array_append(json_object_get(ds, "doc_metadata"), f) != 0)
		goto out;
	if ((rc = ds_put(e, ds_id, ds, NULL)) != 0)
		goto out;
	*out = f;
	f = NULL;
out:
	json_decref(f);
	json_decref(ds);
	return rc;
}

/* Counts in *count (when not NULL) the documents of ds_id holding a
 * value of field fid and, when puts is not NULL, puts each one's values
 * into it (key -> {doc_metadata}, to merge) with that value renamed
 * (rename) or removed (NULL). */
static int
docs_fields_rewrite(struct engine *e, const char *ds_id, const char *fid,
    const char *rename, json_t *puts, size_t *count)
{
	json_t		*all = NULL, *d, *vals, *v = NULL;
	const char	*k;
	char		 prefix[128];
	size_t		 i;
	int		 rc;

	snprintf(prefix, sizeof(prefix), KB_DOC "%s/", ds_id);
	if ((rc = kb_collect(e, prefix, &all)) != 0)
		return rc;
	json_object_foreach(all, k, d) {
		vals = json_object_get(d, "doc_metadata");
		json_array_foreach(vals, i, v)
			if (record_field_is(v, "id", fid))
				break;
		if (i >= json_array_size(vals))
			continue;
		if (count != NULL)
			(*count)++;
		if (puts == NULL)
			continue;
		if ((rename != NULL ? json_object_set_new(v, "name",
		    json_string(rename)) : json_array_remove(vals, i)) != 0 ||
		    json_object_set_new(puts, k, json_pack("{s:O}",
		    "doc_metadata", vals)) != 0) {
			json_decref(all);
			return ENGINE_ENOMEM;
		}
	}
	json_decref(all);
	return 0;
}

int
engine_kb_metadata_list(struct engine *e, const char *ds_id, char *err,
    json_t **out)
{
	json_t		*ds = NULL, *list = NULL, *f;
	size_t		 i, n;
	int		 rc;

	*out = NULL;
	if ((rc = ds_get(e, ds_id, err, &ds)) != 0)
		return rc;
	rc = ENGINE_ENOMEM;
	if ((list = json_array()) == NULL)
		goto out;
	json_array_foreach(json_object_get(ds, "doc_metadata"), i, f) {
		n = 0;
		if ((rc = docs_fields_rewrite(e, ds_id, json_string_value(
		    json_object_get(f, "id")), NULL, NULL, &n)) != 0)
			goto out;
		rc = ENGINE_ENOMEM;
		if (json_array_append_new(list, json_pack("{s:O,s:O,s:O,s:I}",
		    "id", json_object_get(f, "id"), "name", json_object_get(f,
		    "name"), "type", json_object_get(f, "type"), "count",
		    (json_int_t)n)) != 0)
			goto out;
	}
	if ((*out = json_pack("{s:O,s:b}", "doc_metadata", list,
	    "built_in_field_enabled", json_is_true(json_object_get(ds,
	    "built_in_field_enabled")))) != NULL)
		rc = 0;
out:
	json_decref(list);
	json_decref(ds);
	return rc;
}

int
engine_kb_metadata_update(struct engine *e, const char *ds_id,
    const char *mid, const json_t *in, char *err, json_t **out)
{
	json_t	*ds = NULL, *puts = NULL, *f;
	ssize_t	 at;
	int	 rc;

	*out = NULL;
	if ((rc = ds_get(e, ds_id, err, &ds)) != 0)
		return rc;
	if ((at = field_find(ds, mid, NULL)) < 0) {
		snprintf(err, ENGINE_ERRMAX, "Metadata not found.");
		rc = ENGINE_ENOTFOUND;
		goto out;
	}
	f = json_array_get(json_object_get(ds, "doc_metadata"), (size_t)at);
	if (record_field_is(f, "name", json_string_value(json_object_get(in,
	    "name")) ? json_string_value(json_object_get(in, "name")) : "")) {
		rc = (*out = json_incref(f)) ? 0 : ENGINE_ENOMEM;
		goto out;
	}
	if ((rc = field_name_check(ds, json_object_get(in, "name"), err)) != 0)
		goto out;
	rc = ENGINE_ENOMEM;
	/* the documents' values follow the new name, as Dify's */
	if ((puts = json_object()) == NULL || json_object_set(f, "name",
	    json_object_get(in, "name")) != 0)
		goto out;
	if ((rc = docs_fields_rewrite(e, ds_id, mid, json_string_value(
	    json_object_get(in, "name")), puts, NULL)) != 0 ||
	    (rc = ds_put(e, ds_id, ds, puts)) != 0)
		goto out;
	*out = json_incref(f);
out:
	json_decref(puts);
	json_decref(ds);
	return rc;
}

int
engine_kb_metadata_delete(struct engine *e, const char *ds_id,
    const char *mid, char *err)
{
	json_t	*ds = NULL, *puts = NULL;
	ssize_t	 at;
	int	 rc;

	if ((rc = ds_get(e, ds_id, err, &ds)) != 0)
		return rc;
	if ((at = field_find(ds, mid, NULL)) < 0) {
		snprintf(err, ENGINE_ERRMAX, "Metadata not found.");
		rc = ENGINE_ENOTFOUND;
		goto out;
	}
	rc = ENGINE_ENOMEM;
	if ((puts = json_object()) == NULL || json_array_remove(
	    json_object_get(ds, "doc_metadata"), (size_t)at) != 0)
		goto out;
	if ((rc = docs_fields_rewrite(e, ds_id, mid, NULL, puts, NULL)) == 0)
		rc = ds_put(e, ds_id, ds, puts);
out:
	json_decref(puts);
	json_decref(ds);
	return rc;
}

int
engine_kb_metadata_builtin(struct engine *e, const char *ds_id,
    const char *action, char *err, json_t **out)
{
	json_t	*ds = NULL, *fields;
	size_t	 i;
	int	 rc;

	*out = NULL;
	if ((rc = ds_get(e, ds_id, err, &ds)) != 0)
		return rc;
	if (action == NULL) {		/* the list */
		rc = ENGINE_ENOMEM;
		if ((fields = json_array()) == NULL)
			goto out;
		for (i = 0; kb_builtin[i][0] != NULL; i++)
			if (json_array_append_new(fields, json_pack(
			    "{s:s,s:s}", "name", kb_builtin[i][0], "type",
			    kb_builtin[i][1])) != 0) {
				json_decref(fields);
				goto out;
			}
		rc = (*out = json_pack("{s:o}", "fields", fields)) ? 0 :
		    ENGINE_ENOMEM;
		goto out;
	}
	if (strcmp(action, "enable") != 0 && strcmp(action, "disable") != 0) {
		snprintf(err, ENGINE_ERRMAX, "Invalid action.");
		rc = ENGINE_ENOTFOUND;
		goto out;
	}
	rc = ENGINE_ENOMEM;
	if (json_object_set_new(ds, "built_in_field_enabled", json_boolean(
	    strcmp(action, "enable") == 0)) != 0)
		goto out;
	if ((rc = ds_put(e, ds_id, ds, NULL)) == 0)
		rc = (*out = json_pack("{s:s}", "result", "success")) ? 0 :
		    ENGINE_ENOMEM;
out:
	json_decref(ds);
	return rc;
}

/* The value v of a field of type: strings as given, numbers and times
 * (Unix seconds) as numbers; NULL when it is no such value. */
static json_t *
field_value(const char *type, const json_t *v)
{
	char	*end;
	double	 d;

	if (json_is_null(v))
		return json_null();
	if (strcmp(type, "string") == 0)
		return json_is_string(v) ? json_incref((json_t *)v) :
		    json_is_number(v) ? json_sprintf("%g", json_number_value(v))
		    : NULL;
	if (json_is_number(v))
		return strcmp(type, "time") == 0 ? json_integer((json_int_t)
		    json_number_value(v)) : json_incref((json_t *)v);
	if (!json_is_string(v) || json_string_length(v) == 0)
		return NULL;
	d = strtod(json_string_value(v), &end);
	if (*end != '\0')
		return NULL;
	return strcmp(type, "time") == 0 ? json_integer((json_int_t)d) :
	    json_real(d);
}

int
engine_kb_documents_metadata(struct engine *e, const char *ds_id,
    const json_t *in, char *err, json_t **out)
{
	json_t		*ds = NULL, *puts = NULL, *doc = NULL, *vals, *op, *m;
	json_t		*val, *f;
	const json_t	*ops = json_object_get(in, "operation_data");
	char		 key[128];
	struct kb_ops	 o;
	size_t		 i, j;
	ssize_t		 at;
	int		 rc;

	*out = NULL;
	memset(&o, 0, sizeof(o));
	if ((rc = ds_get(e, ds_id, err, &ds)) != 0)
		return rc;
	if (!json_is_array(ops)) {
		rc = engine_invalid(err, "operation_data must be a list");
		goto out;
	}
	rc = ENGINE_ENOMEM;
	if ((puts = json_object()) == NULL)
		goto out;
	json_array_foreach(ops, i, op) {
		const char *did = json_string_value(json_object_get(op,
		    "document_id"));

		json_decref(doc);
		doc = NULL;
		if (did == NULL || (rc = doc_get(e, ds_id, did, err, &doc)) !=
		    0) {
			if (did == NULL)
				rc = engine_invalid(err, "document_id is "
				    "required");
			goto out;
		}
		rc = ENGINE_ENOMEM;
		/* Dify's update_documents_metadata: the list replaces the
		 * document's values */
		if ((vals = json_array()) == NULL || json_object_set_new(doc,
		    "doc_metadata", vals) != 0)
			goto out;
		json_array_foreach(json_object_get(op, "metadata_list"), j, m) {
			at = field_find(ds, json_string_value(json_object_get(m,
			    "id")) ? json_string_value(json_object_get(m,
			    "id")) : "", NULL);
			if (at < 0) {
				snprintf(err, ENGINE_ERRMAX, "Metadata not "
				    "found.");
				rc = ENGINE_ENOTFOUND;
				goto out;
			}
			f = json_array_get(json_object_get(ds, "doc_metadata"),
			    (size_t)at);
			if ((val = field_value(json_string_value(
			    json_object_get(f, "type")), json_object_get(m,
			    "value"))) == NULL) {
				rc = engine_invalid(err, "metadata %s: not a "
				    "%s value", json_string_value(
				    json_object_get(f, "name")),
				    json_string_value(json_object_get(f,
				    "type")));
				goto out;
			}
			if (json_array_append_new(vals, json_pack("{s:O,s:O,"
			    "s:O,s:o}", "id", json_object_get(f, "id"), "name",
			    json_object_get(f, "name"), "type",
			    json_object_get(f, "type"), "value", val)) != 0)
				goto out;
		}
		snprintf(key, sizeof(key), KB_DOC "%s/%s", ds_id, did);
		if (json_object_set_new(puts, key, json_pack("{s:O}",
		    "doc_metadata", vals)) != 0)
			goto out;
	}
	/* only the values: the indexer may be writing the same documents */
	snprintf(key, sizeof(key), KB_DS "%s", ds_id);
	o.require[0] = key;
	o.merge = puts;
	puts = NULL;
	KB_HOOK(e, "meta_write");
	if ((rc = kb_apply(e, &o)) == 0)
		rc = (*out = json_pack("{s:s}", "result", "success")) ? 0 :
		    ENGINE_ENOMEM;
out:
	kb_ops_free(&o);
	json_decref(doc);
	json_decref(puts);
	json_decref(ds);
	return rc;
}
