/*
 * knowledge.h — what engine/knowledge/ gives the rest of the engine:
 * tokens, chunks, the keyword search over a local dataset, and the
 * background indexer's life. Included by engine files only; the Knowledge
 * API itself is declared in engine/engine.h.
 */
#ifndef FLOWCGI_ENGINE_KNOWLEDGE_H
#define FLOWCGI_ENGINE_KNOWLEDGE_H

#include "engine/internal.h"

/*
 * The records' key prefixes in the settings database (kb.c has the
 * layout). Files here depend one way: kb.c (the API and the indexer)
 * calls search.c and index.c; search.c reads, index.c keeps the keyword
 * index; chunk.c and embed.c depend on none of them.
 */
#define KB_DS	"kb.ds/"
#define KB_DOC	"kb.doc/"
#define KB_SEG	"kb.seg/"
#define KB_PAR	"kb.par/"	/* parent-child: the parents; the
				   children are the kb.seg/ records */
#define KB_KEY	"kb.key/"
#define KB_VEC	"kb.vec/"
#define KB_TAG	"kb.tag/"	/* tags.c */
#define KB_TAGB	"kb.tagb/"	/* kb.tagb/<dataset>/<tag>: a binding */

/* ====== Tokens and chunks (chunk.c) ====== */

/*
 * Calls fn for each token of s[0..len): runs of ASCII letters and digits
 * (lowercased) and of other non-CJK letters are one token each (at most
 * KB_TOKEN_MAX bytes, the rest cut); each CJK code point (Han, kana,
 * Hangul) is a token and so is each pair of adjacent ones, so that a
 * Chinese query finds Chinese text without a dictionary. fn returning
 * non-zero stops the walk and is returned; else 0.
 */
#define KB_TOKEN_MAX 64
typedef int (*kb_token_fn)(const char *tok, size_t n, void *arg);
int	kb_tokens(const char *s, size_t len, kb_token_fn fn, void *arg);

/* The token count chunk sizes are measured in: words plus CJK code
 * points (the pairs not counted). */
size_t	kb_token_count(const char *s, size_t len);

/*
 * Dify's cleaning (clean_processor.py) of text into a new string the
 * caller frees: "<|" and "|>" lose their bars, control characters go;
 * extra_spaces: 3+ newlines become 2 and runs of spaces and tabs one
 * space; urls_emails: e-mail addresses and http(s) URLs are removed.
 * NULL when out of memory.
 */
char	*kb_clean(const char *text, int extra_spaces, int urls_emails);

/*
 * Splits text into chunks of at most max_tokens (kb_token_count), as
 * Dify's splitters: with fixed (custom rules: the separator, "\n" for
 * "\\n") each piece between separators is a chunk and only a piece over
 * max_tokens is split further; without (automatic) the text is split
 * recursively on "\n\n", "。", ". ", " ", then code points, and small
 * pieces are merged up to max_tokens with overlap tokens carried from one
 * chunk into the next. Chunks are trimmed; empty ones dropped. *out is a
 * new array of strings. ENGINE_ENOMEM, or ENGINE_ELIMIT past max_chunks.
 */
int	kb_split(const char *text, const char *fixed, int max_tokens,
	    int overlap, size_t max_chunks, json_t **out);

/* ====== Embeddings (embed.c) ====== */

/*
 * The L2-normalised embeddings of texts[0..n) by model of provider (a
 * model provider entry), knowledge.embed_batch texts a request: *out is
 * n * *dim floats the caller frees. ENGINE_EFETCH (err: the status and
 * body) or ENGINE_EINVAL (no such provider).
 */
int	kb_embed(struct engine *e, const char *provider, const char *model,
	    const char *const *texts, size_t n, char *err, float **out,
	    size_t *dim);

/*
 * The relevance of each of texts[0..n) to query by rerank model model of
 * provider (a model provider entry): one POST {base_url}/rerank {model,
 * query, documents, top_n} as Jina's and Cohere's, answered {results:
 * [{index, relevance_score}]}. *scores is n doubles the caller frees (a
 * text the model left out scores 0). ENGINE_EFETCH (err: the status and
 * body) or ENGINE_EINVAL (no such provider).
 */
int	kb_rerank(struct engine *e, const char *provider, const char *model,
	    const char *query, const char *const *texts, size_t n, char *err,
	    double **scores);

/* ====== Search (search.c) ====== */

/*
 * The best top_k segments of local dataset ds_id for query, from the
 * enabled segments of completed, enabled, unarchived documents, by the
 * search_method of rm (NULL: the dataset's retrieval_model_dict; economy
 * datasets always keyword_search, as Dify):
 *  - keyword_search, full_text_search: BM25 over the tokens of kb_tokens
 *    (k1 1.2, b 0.75) divided by the best any segment could score for
 *    this query (every term, short), so it lies in [0, 1);
 *  - semantic_search: the cosine of the query's embedding with each
 *    segment's, exactly (every vector);
 *  - hybrid_search: rm.weights' vector_weight * cosine + keyword_weight *
 *    the keyword score (0.7 and 0.3 when absent).
 * Hits scoring at or below a positive threshold are left out, and so are
 * keyword hits matching no term; so are the documents that fail
 * rm.metadata_filtering_conditions (kb_filter_match; rm without a
 * search_method takes the dataset's). *out = [{score, segment, document,
 * dataset}] best first (a new reference; segments without their "_"
 * members). The children of a parent-child document are searched and
 * answered as their parent's hit, {score of the best child, segment: the
 * parent, ..., child_chunks: [{id, content, position, score}]}; top_k
 * counts the chunks searched, as Dify's. ENGINE_ENOTFOUND: no such
 * dataset; kb_embed's errors.
 */
int	kb_search(struct engine *e, const char *ds_id, const char *query,
	    const json_t *rm, int top_k, double threshold, char *err,
	    json_t **out);

/* kb_search with the keyword part read from the stored index (use_index
 * 1, when every searchable document has been indexed with it) or from
 * every segment (0): the two answer the same. */
int	kb_search_with(struct engine *e, const char *ds_id, const char *query,
	    const json_t *rm, int top_k, double threshold, int use_index,
	    char *err, json_t **out);

/*
 * Dify's metadata_filtering_conditions f ({logical_operator: and|or,
 * conditions: [{name, comparison_operator, value}]}, filter.c):
 * kb_filter_check: 0, or ENGINE_EINVAL naming what is wrong (NULL f is
 * fine); kb_filter_match: 1 when document d of dataset ds passes (every
 * condition, or any with "or"; none: 1).
 */
int	kb_filter_check(const json_t *f, char *err);
int	kb_filter_match(const json_t *ds, const json_t *d, const json_t *f);

/* 1 when id can name a record (a UUID): anything else names nothing. */
int	kb_id_ok(const char *id);

/* 1 when ds_id is a dataset of this server (0 when not or on error). */
int	kb_dataset_exists(struct engine *e, const char *ds_id);

/* A dataset's record (new reference) or NULL. */
json_t	*kb_dataset_load(struct engine *e, const char *ds_id);

/* ====== The keyword index (index.c) ====== */

/*
 * The stored keyword index of one write (index.c's layout): inside the
 * write transaction t, kb_ix_seg notes, before the segment record under
 * key is put (seg) or deleted (seg NULL), what the index must lose (the
 * old record's text, read in t) and gain; kb_ix_commit then rewrites the
 * postings of each block touched once. kb_ix_drop drops the index of
 * every segment under a "kb.seg/<ds>/<doc>/" or "kb.seg/<ds>/" prefix
 * (call it before the segments go). Keys that are no segment's are
 * ignored. 0 or a STORE_* code; kb_ix_free frees (NULL is fine).
 */
struct kb_ix;
int	kb_ix_begin(struct kb_ix **out);
int	kb_ix_seg(struct kb_ix *x, struct store_txn *t, const char *key,
	    const json_t *seg);
int	kb_ix_commit(struct kb_ix *x, struct store_txn *t);
void	kb_ix_free(struct kb_ix *x);
int	kb_ix_drop(struct store_txn *t, const char *seg_prefix);

/*
 * Reads the index of dataset ds's documents that are members of docs (id
 * -> anything): *nseg and *tokens the segments indexed and their tokens,
 * and fn called for each posting of terms[i] (tlen[i] bytes), i <
 * nterms: the term, the segment's document and position, the term's
 * count in it and its token count. fn's non-zero stops and is returned;
 * else 0 or a STORE_* code.
 */
typedef int (*kb_posting_fn)(size_t term, const char *doc, int pos,
    unsigned tf, unsigned len, void *arg);
int	kb_ix_read(struct store_txn *t, const char *ds, const json_t *docs,
	    const char (*terms)[KB_TOKEN_MAX + 8], const size_t *tlen,
	    size_t nterms, size_t *nseg, double *tokens, kb_posting_fn fn,
	    void *arg);

/* The tags bound to dataset ds_id: *out = [{id, name, type}] (new). 0 or
 * ENGINE_E* (tags.c). */
int	kb_dataset_tags(struct engine *e, const char *ds_id, json_t **out);

/* ====== The indexer (kb.c) ====== */

/* Stops this engine's indexer thread, if it started, after the document
 * in hand (engine_close). */
void	kb_indexer_stop(struct engine *e);

/* ====== Annotation reply (annotations.c) ====== */

/*
 * The annotation of app_id whose question is nearest query, when the
 * app's annotation reply is on and it scores at least its threshold:
 * *hit = {id, question, content, score} (new reference), its hit_count
 * counted and a hit history kept (query, score, Dify's source of
 * invoke_from, message msg_id, time); NULL when none (a failing
 * embedding model is logged and is none). 0 or ENGINE_E*.
 */
/*
 * The question/answer pairs of Dify's annotation CSV data[0..len) (a
 * header row first; fields stripped; rows without both skipped) into
 * *pairs = [[question, answer]] (new reference), at most max_rows, each
 * side at most max_text bytes. ENGINE_EINVAL / ENGINE_ELIMIT with Dify's
 * words in err (ENGINE_ERRMAX), ENGINE_ENOMEM.
 */
int	annotation_csv_pairs(const char *data, size_t len, int max_text,
	    int max_rows, char *err, json_t **pairs);

int	annotation_match(struct engine *e, const char *app_id,
	    const char *query, const char *invoke_from, const char *msg_id,
	    json_t **hit);

#endif
