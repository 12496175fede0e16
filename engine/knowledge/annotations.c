/*
 * annotations.c — Dify's annotation reply: question/answer pairs an
 * editor writes for an app, and the reply setting that makes a chat app
 * answer a query close enough to a question with its answer instead of
 * running (api/services/annotation_service.py, api/core/app/features/
 * annotation_reply/annotation_reply.py).
 *
 * One record per app in the settings database, "annotations/<app id>":
 *
 *   {"setting": {id, score_threshold, embedding_provider_name,
 *                embedding_model_name, created_at} (absent: reply off),
 *    "items": [{id, question, content, hit_count, created_at,
 *               vec: base64 of float32s, the question's embedding}],
 *    "jobs": [{id, action, status, error_msg}]  (the last JOBS_KEPT),
 *    "hits": [{id, annotation_id, source, score, question, created_at,
 *              match, response, message_id}]  (oldest first, the last
 *              annotations.max_hit_histories)}
 *
 * An item annotated from a message's log also holds message_id and
 * conversation_id: annotating that message again rewrites it, as Dify's
 * message.annotation.
 *
 * Matching is Dify's: the query's embedding by the setting's model (an
 * OpenAI-compatible /embeddings of Settings > Model Providers, through
 * kb_embed) against each question's, the best at or above the score
 * threshold (cosine of L2-normalised vectors). Enabling embeds every
 * question at once; a question created or edited while the reply is on is
 * embedded then. Dify runs enable/disable and a batch import as
 * background jobs and answers "waiting" at once; here the job has ended
 * before the answer goes out, which says "waiting" all the same (Dify's
 * answer: a client polls the job's status either way), and the status
 * says "completed" (or "error" with the reason) and stays readable.
 * An app holds at most annotations.max_per_app pairs, each side at most
 * annotations.max_text bytes: the whole record is read and rewritten per
 * change, which is what bounds it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <csv.h>
#include <openssl/evp.h>

#include "engine/records/records.h"
#include "engine/knowledge/knowledge.h"

#define ANN_PREFIX	ANNOTATIONS_KEY_PREFIX
#define JOBS_KEPT	20

/* ====== The record ====== */

/* ENGINE_ENOTFOUND with Dify's message in err. */
static int
ann_notfound(char *err, const char *msg)
{
	if (err != NULL)
		snprintf(err, ENGINE_ERRMAX, "%s", msg);
	return ENGINE_ENOTFOUND;
}

/* ENGINE_ELIMIT naming setting (and its value) in err. */
static int
ann_limit(char *err, const char *what, const char *setting, int v)
{
	snprintf(err, ENGINE_ERRMAX, "%s %s (%d)", what, setting, v);
	return ENGINE_ELIMIT;
}

static void
ann_key(const char *app_id, char key[64])
{
	snprintf(key, 64, ANN_PREFIX "%s", app_id);
}

/* The app's record (new reference; {} when none) in t. */
static int
ann_get(struct store_txn *t, const char *app_id, json_t **out)
{
	char	key[64];
	int	rc;

	ann_key(app_id, key);
	*out = NULL;
	if ((rc = store_get_json(t, STORE_DB_SETTINGS, key, out)) ==
	    STORE_ENOTFOUND || (rc == 0 && !json_is_object(*out))) {
		json_decref(*out);
		*out = json_object();
		rc = *out != NULL ? 0 : STORE_ENOMEM;
	}
	if (rc == 0 && !json_is_array(json_object_get(*out, "items")) &&
	    json_object_set_new(*out, "items", json_array()) != 0)
		rc = STORE_ENOMEM;
	return rc;
}

/* A copy of the app's record read alone; 0 or ENGINE_E*. */
static int
ann_read(struct engine *e, const char *app_id, json_t **out)
{
	struct store_txn	*t = NULL;
	int			 rc;

	*out = NULL;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	rc = ann_get(t, app_id, out);
	store_read_end(t);
	return engine_from_store(rc);
}

/* 0 when app_id is an app (a chat app or not). */
static int
app_known(struct engine *e, const char *app_id)
{
	json_t	*app = NULL;
	int	 rc;

	if (app_id == NULL || engine_uuid_check(app_id) != 0)
		return ENGINE_ENOTFOUND;
	rc = engine_app_get(e, app_id, &app);
	json_decref(app);
	return rc;
}

/* Dify's annotation_fields: id, question, answer, hit_count, created_at. */
static json_t *
ann_public(const json_t *it)
{
	return json_pack("{s:O,s:O,s:O,s:O,s:O}", "id", json_object_get(it,
	    "id"), "question", json_object_get(it, "question"), "answer",
	    json_object_get(it, "content"), "hit_count", json_object_get(it,
	    "hit_count"), "created_at", json_object_get(it, "created_at"));
}

/* ====== Vectors ====== */

/* base64 of n floats (malloc'd), or NULL. */
static char *
vec_encode(const float *v, size_t n)
{
	size_t	 len = n * sizeof(float);
	char	*out;

	if ((out = malloc(4 * ((len + 2) / 3) + 1)) == NULL)
		return NULL;
	EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)v,
	    (int)len);
	return out;
}

/* The dot product of v[0..n) with the floats of base64 b64; -2 when it
 * is not a vector of n floats. */
static double
vec_dot(const char *b64, const float *v, size_t n)
{
	size_t		 blen = strlen(b64), i;
	unsigned char	*raw;
	float		 f;
	double		 s = 0;
	int		 got;

	if (blen % 4 != 0 || blen / 4 * 3 < n * sizeof(float) ||
	    (raw = malloc(blen / 4 * 3 + 1)) == NULL)
		return -2;
	got = EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)blen);
	if (got < 0 || (size_t)got < n * sizeof(float) ||
	    (size_t)got - n * sizeof(float) > 2) {
		free(raw);
		return -2;
	}
	for (i = 0; i < n; i++) {
		memcpy(&f, raw + i * sizeof(float), sizeof(f));
		s += (double)f * v[i];
	}
	free(raw);
	return s;
}

/*
 * The embeddings of n questions by the setting's model: *vecs (n
 * malloc'd base64 strings, NULL-terminated, free with vecs_free).
 */
static void
vecs_free(char **vecs)
{
	size_t i;

	for (i = 0; vecs != NULL && vecs[i] != NULL; i++)
		free(vecs[i]);
	free(vecs);
}

static int
embed_texts(struct engine *e, const char *provider, const char *model,
    const char *const *texts, size_t n, char *err, char ***vecs)
{
	float	*f = NULL;
	size_t	 dim = 0, i;
	int	 rc;

	*vecs = NULL;
	if (n == 0)
		return (*vecs = calloc(1, sizeof(char *))) ? 0 : ENGINE_ENOMEM;
	if ((rc = kb_embed(e, provider, model, texts, n, err, &f, &dim)) != 0)
		return rc;
	rc = ENGINE_ENOMEM;
	if ((*vecs = calloc(n + 1, sizeof(char *))) == NULL)
		goto out;
	for (i = 0; i < n; i++)
		if (((*vecs)[i] = vec_encode(f + i * dim, dim)) == NULL) {
			vecs_free(*vecs);
			*vecs = NULL;
			goto out;
		}
	rc = 0;
out:
	free(f);
	return rc;
}

/* ====== Annotations ====== */

/* Dify's page of data: has_more when the page is full. */
static int
ann_page(json_t *data, int limit, size_t total, int page, json_t **out)
{
	*out = json_pack("{s:O,s:b,s:i,s:I,s:i}", "data", data, "has_more",
	    json_array_size(data) == (size_t)limit, "limit", limit, "total",
	    (json_int_t)total, "page", page);
	return *out != NULL ? 0 : ENGINE_ENOMEM;
}

int
engine_annotation_list(struct engine *e, const char *app_id, int page,
    int limit, const char *keyword, json_t **out)
{
	json_t		*rec = NULL, *data = NULL, *items, *it;
	const char	*q, *c;
	size_t		 i, total = 0, skip;
	int		 rc;

	*out = NULL;
	if ((rc = app_known(e, app_id)) != 0 ||
	    (rc = ann_read(e, app_id, &rec)) != 0)
		return rc;
	rc = ENGINE_ENOMEM;
	if ((data = json_array()) == NULL)
		goto out;
	skip = (size_t)(page - 1) * (size_t)limit;
	items = json_object_get(rec, "items");
	/* newest first, as Dify's created_at desc */
	for (i = json_array_size(items); i-- > 0;) {
		it = json_array_get(items, i);
		q = json_string_value(json_object_get(it, "question"));
		c = json_string_value(json_object_get(it, "content"));
		if (keyword != NULL && *keyword != '\0' && (q == NULL ||
		    strcasestr(q, keyword) == NULL) && (c == NULL ||
		    strcasestr(c, keyword) == NULL))
			continue;
		if (total++ < skip || json_array_size(data) >= (size_t)limit)
			continue;
		if (json_array_append_new(data, ann_public(it)) != 0)
			goto out;
	}
	rc = ann_page(data, limit, total, page, out);
out:
	json_decref(data);
	json_decref(rec);
	return rc;
}

/* Removes the hit histories of annotation id from rec (Dify deletes them
 * with it). */
static void
hits_drop(json_t *rec, const char *id)
{
	json_t	*hits = json_object_get(rec, "hits");
	size_t	 i;

	for (i = json_array_size(hits); i-- > 0;)
		if (record_field_is(json_array_get(hits, i), "annotation_id",
		    id))
			json_array_remove(hits, i);
}

struct ann_put {
	const struct conf	*c;
	const char		*app_id, *id, *question, *answer, *vec;
	const char		*msg_id, *conv_id;	/* from a message */
	int			 del;
	json_t			*out;	/* the annotation written */
	int			 missing, full;
};

static int
ann_put_fn(struct store_txn *t, void *arg)
{
	struct ann_put	*p = arg;
	json_t		*rec = NULL, *items, *it = NULL;
	const char	*want;
	char		 key[64], id[37];
	size_t		 i;
	int		 rc;

	json_decref(p->out);
	p->out = NULL;
	p->missing = p->full = 0;
	if ((rc = ann_get(t, p->app_id, &rec)) != 0)
		return rc;
	items = json_object_get(rec, "items");
	/* a message already annotated: its annotation is rewritten */
	want = p->id;
	if (want == NULL && p->msg_id != NULL)
		json_array_foreach(items, i, it)
			if (record_field_is(it, "message_id", p->msg_id)) {
				want = json_string_value(json_object_get(it,
				    "id"));
				break;
			}
	if (want != NULL) {
		json_array_foreach(items, i, it)
			if (record_field_is(it, "id", want))
				break;
		if (i == json_array_size(items)) {
			p->missing = 1;
			json_decref(rec);
			return 0;
		}
		if (p->del) {
			/* want is the item's own string: first */
			hits_drop(rec, want);
			rc = json_array_remove(items, i) != 0 ? STORE_ENOMEM :
			    0;
		} else if (json_object_set_new(it, "question",
		    json_string(p->question)) != 0 || json_object_set_new(it,
		    "content", json_string(p->answer)) != 0 ||
		    (p->vec != NULL ? json_object_set_new(it, "vec",
		    json_string(p->vec)) : json_object_del(it, "vec") * 0) != 0)
			rc = STORE_ENOMEM;
	} else {
		if (json_array_size(items) >= (size_t)p->c->annotations_max) {
			p->full = 1;
			json_decref(rec);
			return 0;
		}
		engine_uuid(id);
		if ((it = json_pack("{s:s,s:s,s:s,s:i,s:I,s:s?,s:s?,s:s?}",
		    "id", id, "question", p->question, "content", p->answer,
		    "hit_count", 0, "created_at", (json_int_t)engine_now(),
		    "vec", p->vec, "message_id", p->msg_id, "conversation_id",
		    p->conv_id)) == NULL ||
		    json_array_append_new(items, it) != 0)
			rc = STORE_ENOMEM;
	}
	if (rc == 0 && !p->del && (p->out = ann_public(it)) == NULL)
		rc = STORE_ENOMEM;
	ann_key(p->app_id, key);
	if (rc == 0)
		rc = store_put_json(t, STORE_DB_SETTINGS, key, rec, 0);
	json_decref(rec);
	return rc;
}

static int
ann_put(struct engine *e, const char *app_id, const char *id,
    const char *question, const char *answer, const char *msg_id,
    const char *conv_id, char *err, json_t **out)
{
	struct ann_put	 p;
	json_t		*rec = NULL, *set;
	char		**vecs = NULL;
	int		 rc;

	*out = NULL;
	if (id != NULL && engine_uuid_check(id) != 0)
		return ann_notfound(err, "Annotation not found");
	if (question == NULL || *question == '\0')
		return engine_invalid(err, "question is required");
	if (answer == NULL)
		return engine_invalid(err, "answer is required");
	if (strlen(question) > (size_t)e->conf->annotations_max_text ||
	    strlen(answer) > (size_t)e->conf->annotations_max_text)
		return ann_limit(err, "a question or answer is longer than",
		    "annotations.max_text bytes",
		    e->conf->annotations_max_text);
	/* with the reply on, the question is embedded as it is written */
	if ((rc = ann_read(e, app_id, &rec)) != 0)
		return rc;
	if ((set = json_object_get(rec, "setting")) != NULL &&
	    (rc = embed_texts(e, json_string_value(json_object_get(set,
	    "embedding_provider_name")), json_string_value(json_object_get(
	    set, "embedding_model_name")), &question, 1, err, &vecs)) != 0)
		goto out;
	memset(&p, 0, sizeof(p));
	p.c = e->conf;
	p.app_id = app_id;
	p.id = id;
	p.question = question;
	p.answer = answer;
	p.vec = vecs != NULL ? vecs[0] : NULL;
	p.msg_id = msg_id;
	p.conv_id = conv_id;
	rc = engine_from_store(store_write(e->store, ann_put_fn, &p));
	if (rc == 0 && p.missing)
		rc = ann_notfound(err, "Annotation not found");
	else if (rc == 0 && p.full)
		rc = ann_limit(err, "the app has as many annotations as",
		    "annotations.max_per_app", e->conf->annotations_max);
	if (rc == 0) {
		*out = p.out;
		p.out = NULL;
	}
	json_decref(p.out);
out:
	vecs_free(vecs);
	json_decref(rec);
	return rc;
}

int
engine_annotation_put(struct engine *e, const char *app_id, const char *id,
    const char *question, const char *answer, char *err, json_t **out)
{
	int rc;

	*out = NULL;
	if ((rc = app_known(e, app_id)) != 0)
		return rc;
	return ann_put(e, app_id, id, question, answer, NULL, NULL, err, out);
}

int
engine_annotation_from_message(struct engine *e, const char *app_id,
    const char *msg_id, const char *question, const char *answer,
    char *err, json_t **out)
{
	json_t		*msg = NULL;
	const char	*conv;
	int		 rc;

	*out = NULL;
	if ((rc = app_known(e, app_id)) != 0)
		return rc;
	if (answer == NULL)
		return engine_invalid(err, "Either 'answer' or 'content' must "
		    "be provided");
	/* the app's message only: another app's is one that is not */
	if ((rc = engine_message_get(e, app_id, NULL, msg_id, &msg)) ==
	    ENGINE_ENOTFOUND)
		return ann_notfound(err, "Message Not Exists.");
	if (rc != 0)
		return rc;
	/* Dify: the question given, else the message's query */
	if (question == NULL || *question == '\0')
		question = json_string_value(json_object_get(msg, "query"));
	conv = json_string_value(json_object_get(msg, "conversation_id"));
	rc = ann_put(e, app_id, NULL, question != NULL ? question : "",
	    answer, msg_id, conv, err, out);
	json_decref(msg);
	return rc;
}

int
engine_annotation_delete(struct engine *e, const char *app_id,
    const char *id, char *err)
{
	struct ann_put	p;
	int		rc;

	if ((rc = app_known(e, app_id)) != 0)
		return rc;
	if (id == NULL || engine_uuid_check(id) != 0)
		return ann_notfound(err, "Annotation not found");
	memset(&p, 0, sizeof(p));
	p.c = e->conf;
	p.app_id = app_id;
	p.id = id;
	p.del = 1;
	rc = engine_from_store(store_write(e->store, ann_put_fn, &p));
	json_decref(p.out);
	if (rc == 0 && p.missing)
		rc = ann_notfound(err, "Annotation not found");
	return rc;
}

/* ====== Hit histories, export, CSV import ====== */

int
engine_annotation_hits(struct engine *e, const char *app_id, const char *id,
    int page, int limit, char *err, json_t **out)
{
	json_t		*rec = NULL, *data = NULL, *h, *it;
	size_t		 i, total = 0, skip;
	int		 rc;

	*out = NULL;
	if ((rc = app_known(e, app_id)) != 0 ||
	    (rc = ann_read(e, app_id, &rec)) != 0)
		return rc;
	rc = ann_notfound(err, "Annotation not found");
	json_array_foreach(json_object_get(rec, "items"), i, it)
		if (id != NULL && record_field_is(it, "id", id)) {
			rc = 0;
			break;
		}
	if (rc != 0)
		goto out;
	rc = ENGINE_ENOMEM;
	if ((data = json_array()) == NULL)
		goto out;
	skip = (size_t)(page - 1) * (size_t)limit;
	/* newest first, as Dify's created_at desc */
	for (i = json_array_size(json_object_get(rec, "hits")); i-- > 0;) {
		h = json_array_get(json_object_get(rec, "hits"), i);
		if (!record_field_is(h, "annotation_id", id))
			continue;
		if (total++ < skip || json_array_size(data) >= (size_t)limit)
			continue;
		/* fields/annotation_fields.py annotation_hit_history_fields */
		if (json_array_append_new(data, json_pack("{s:O,s:O,s:O,s:O,"
		    "s:O,s:O,s:O}", "id", json_object_get(h, "id"), "source",
		    json_object_get(h, "source"), "score", json_object_get(h,
		    "score"), "question", json_object_get(h, "question"),
		    "created_at", json_object_get(h, "created_at"), "match",
		    json_object_get(h, "match"), "response", json_object_get(h,
		    "response"))) != 0)
			goto out;
	}
	rc = ann_page(data, limit, total, page, out);
out:
	json_decref(data);
	json_decref(rec);
	return rc;
}

/* s as Dify's CSVSanitizer.sanitize_value leaves it: a leading =, +, -,
 * @, tab or CR (a spreadsheet formula) behind a quote. New reference. */
static json_t *
csv_sanitized(const json_t *v)
{
	const char *s = json_string_value(v);

	if (s == NULL)
		return json_incref((json_t *)v);
	if (*s != '\0' && strchr("=+-@\t\r", *s) != NULL)
		return json_sprintf("'%s", s);
	return json_string(s);
}

int
engine_annotation_export(struct engine *e, const char *app_id,
    json_t **out)
{
	json_t	*rec = NULL, *data = NULL, *it, *pub;
	size_t	 i;
	int	 rc;

	*out = NULL;
	if ((rc = app_known(e, app_id)) != 0 ||
	    (rc = ann_read(e, app_id, &rec)) != 0)
		return rc;
	rc = ENGINE_ENOMEM;
	if ((data = json_array()) == NULL)
		goto out;
	for (i = json_array_size(json_object_get(rec, "items")); i-- > 0;) {
		it = json_array_get(json_object_get(rec, "items"), i);
		if ((pub = ann_public(it)) == NULL ||
		    json_array_append_new(data, pub) != 0 ||
		    json_object_set_new(pub, "question", csv_sanitized(
		    json_object_get(it, "question"))) != 0 ||
		    json_object_set_new(pub, "answer", csv_sanitized(
		    json_object_get(it, "content"))) != 0)
			goto out;
	}
	*out = json_pack("{s:O}", "data", data);
	rc = *out != NULL ? 0 : ENGINE_ENOMEM;
out:
	json_decref(data);
	json_decref(rec);
	return rc;
}

/*
 * The CSV reader: libcsv's callbacks fill rows of fields; the first row
 * is the header (pandas' header=0 in Dify), the first two columns of the
 * others are a question and an answer.
 */
struct csv_rows {
	json_t	*pairs;		/* [[question, answer]] */
	char	*f[2];		/* the row's first two fields, stripped */
	size_t	 col, row;
	int	 header_cols;
	int	 max_text, max_rows;
	int	 oom, too_long, too_many;
	size_t	 bad_row;
};

/* A copy of s[0..len) without leading and trailing white space. */
static char *
csv_strip(const char *s, size_t len)
{
	while (len > 0 && strchr(" \t\r\n\f\v", *s) != NULL) {
		s++;
		len--;
	}
	while (len > 0 && strchr(" \t\r\n\f\v", s[len - 1]) != NULL)
		len--;
	return strndup(s, len);
}

static void
csv_field(void *s, size_t len, void *arg)
{
	struct csv_rows *c = arg;

	if (c->col < 2 && c->row > 0 && c->f[c->col] == NULL &&
	    (c->f[c->col] = csv_strip(s != NULL ? s : "", s != NULL ? len :
	    0)) == NULL)
		c->oom = 1;
	c->col++;
}

static void
csv_row(int ch, void *arg)
{
	struct csv_rows	*c = arg;
	const char	*q = c->f[0], *a = c->f[1];

	if (c->row == 0)
		c->header_cols = (int)c->col;
	/* Dify skips a row without both, and pandas' NaN */
	else if (q != NULL && a != NULL && *q != '\0' && *a != '\0' &&
	    strcasecmp(q, "nan") != 0 && strcasecmp(a, "nan") != 0 &&
	    !c->too_long && !c->too_many) {
		if (strlen(q) > (size_t)c->max_text || strlen(a) >
		    (size_t)c->max_text) {
			c->too_long = 1;
			c->bad_row = c->row + 1;
		} else if (json_array_size(c->pairs) >= (size_t)c->max_rows)
			c->too_many = 1;
		else if (json_array_append_new(c->pairs, json_pack("[ss]", q,
		    a)) != 0)
			c->oom = 1;
	}
	free(c->f[0]);
	free(c->f[1]);
	c->f[0] = c->f[1] = NULL;
	c->col = 0;
	c->row++;
}

int
annotation_csv_pairs(const char *data, size_t len, int max_text, int max_rows,
    char *err, json_t **pairs)
{
	struct csv_parser	p;
	struct csv_rows		c;
	int			rc = ENGINE_ENOMEM;

	*pairs = NULL;
	memset(&c, 0, sizeof(c));
	c.max_text = max_text;
	c.max_rows = max_rows;
	if ((c.pairs = json_array()) == NULL)
		return ENGINE_ENOMEM;
	/* a UTF-8 byte order mark is not the first header's */
	if (len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0) {
		data += 3;
		len -= 3;
	}
	if (memchr(data, '\n', len) == NULL) {
		rc = engine_invalid(err, "The CSV file appears to be empty or "
		    "invalid.");
		goto out;
	}
	/* strict: a stray quote or an unterminated quoted field is an
	 * error with libcsv's reason (pandas' python engine reads a quote
	 * inside an unquoted field as text; Dify then fails at the end) */
	if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0)
		goto out;
	if (csv_parse(&p, data, len, csv_field, csv_row, &c) != len ||
	    csv_fini(&p, csv_field, csv_row, &c) != 0) {
		snprintf(err, ENGINE_ERRMAX, "An error occurred while processing"
		    " the file: %s", csv_strerror(csv_error(&p)));
		csv_free(&p);
		rc = ENGINE_EINVAL;
		goto out;
	}
	csv_free(&p);
	if (c.oom)
		goto out;
	if (c.header_cols < 2)
		rc = engine_invalid(err, "Invalid CSV format. The file must "
		    "contain at least 2 columns (question and answer).");
	else if (c.too_long) {
		snprintf(err, ENGINE_ERRMAX, "The question or answer at row %zu "
		    "is longer than annotations.max_text bytes (%d)",
		    c.bad_row, max_text);
		rc = ENGINE_ELIMIT;
	} else if (c.too_many) {
		snprintf(err, ENGINE_ERRMAX, "The CSV file holds more records "
		    "than the app may keep: annotations.max_per_app (%d)",
		    max_rows);
		rc = ENGINE_ELIMIT;
	} else if (json_array_size(c.pairs) == 0)
		rc = engine_invalid(err, "The CSV file must contain at least 1 "
		    "valid annotation record(s). Found 0 valid record(s).");
	else {
		*pairs = c.pairs;
		c.pairs = NULL;
		rc = 0;
	}
out:
	free(c.f[0]);
	free(c.f[1]);
	json_decref(c.pairs);
	return rc;
}

struct ann_import {
	const struct conf	*c;
	const char		*app_id, *job_id, *error;
	json_t			*pairs;
	char		       **vecs;	/* one per pair, or NULL */
	int			 had_setting;	/* vecs made for the reply */
	int			 full, changed;
};

static int
ann_import_fn(struct store_txn *t, void *arg)
{
	struct ann_import	*p = arg;
	json_t			*rec = NULL, *items, *jobs, *pr, *it;
	char			 key[64], id[37];
	size_t			 i;
	int			 rc = STORE_ENOMEM;

	p->full = p->changed = 0;
	if ((rc = ann_get(t, p->app_id, &rec)) != 0)
		return rc;
	rc = STORE_ENOMEM;
	items = json_object_get(rec, "items");
	if (p->error == NULL) {
		/* the reply turned on or off since the vectors were made */
		if ((json_object_get(rec, "setting") != NULL) !=
		    p->had_setting) {
			p->changed = 1;
			rc = 0;
			goto out;
		}
		if (json_array_size(items) + json_array_size(p->pairs) >
		    (size_t)p->c->annotations_max) {
			p->full = 1;
			rc = 0;
			goto out;
		}
		json_array_foreach(p->pairs, i, pr) {
			engine_uuid(id);
			if ((it = json_pack("{s:s,s:O,s:O,s:i,s:I,s:s?}", "id",
			    id, "question", json_array_get(pr, 0), "content",
			    json_array_get(pr, 1), "hit_count", 0, "created_at",
			    (json_int_t)engine_now(), "vec", p->vecs != NULL ?
			    p->vecs[i] : NULL)) == NULL ||
			    json_array_append_new(items, it) != 0)
				goto out;
		}
	}
	if (!json_is_array(jobs = json_object_get(rec, "jobs"))) {
		if (json_object_set_new(rec, "jobs", json_array()) != 0)
			goto out;
		jobs = json_object_get(rec, "jobs");
	}
	while (json_array_size(jobs) >= JOBS_KEPT)
		json_array_remove(jobs, 0);
	if (json_array_append_new(jobs, json_pack("{s:s,s:s,s:s,s:s}", "id",
	    p->job_id, "action", "batch-import", "status", p->error != NULL ?
	    "error" : "completed", "error_msg", p->error != NULL ? p->error :
	    "")) != 0)
		goto out;
	ann_key(p->app_id, key);
	rc = store_put_json(t, STORE_DB_SETTINGS, key, rec, 0);
out:
	json_decref(rec);
	return rc;
}

int
engine_annotation_import(struct engine *e, const char *app_id,
    const char *data, size_t len, char *err, json_t **out)
{
	struct ann_import	  p;
	json_t			 *rec = NULL, *set, *pr;
	const char		**texts = NULL;
	char			  job[37], why[ENGINE_ERRMAX] = "";
	size_t			  i, n;
	int			  rc, tries;

	*out = NULL;
	memset(&p, 0, sizeof(p));
	if ((rc = app_known(e, app_id)) != 0)
		return rc;
	if ((rc = annotation_csv_pairs(data, len, e->conf->annotations_max_text,
	    e->conf->annotations_max, err, &p.pairs)) != 0)
		return rc;
	n = json_array_size(p.pairs);
	engine_uuid(job);
	p.c = e->conf;
	p.app_id = app_id;
	p.job_id = job;
	rc = ENGINE_ENOMEM;
	if ((texts = calloc(n + 1, sizeof(*texts))) == NULL)
		goto out;
	json_array_foreach(p.pairs, i, pr)
		texts[i] = json_string_value(json_array_get(pr, 0));
	for (tries = 0; tries < 3; tries++) {
		json_decref(rec);
		rec = NULL;
		vecs_free(p.vecs);
		p.vecs = NULL;
		p.error = NULL;
		if ((rc = ann_read(e, app_id, &rec)) != 0)
			goto out;
		/* with the reply on, Dify's import task embeds them; a
		 * model that fails is the job's error, nothing imported */
		set = json_object_get(rec, "setting");
		p.had_setting = set != NULL;
		if (set != NULL && (rc = embed_texts(e, json_string_value(
		    json_object_get(set, "embedding_provider_name")),
		    json_string_value(json_object_get(set,
		    "embedding_model_name")), texts, n, why, &p.vecs)) != 0) {
			if (rc == ENGINE_ENOMEM)
				goto out;
			p.error = why;
		}
		if ((rc = engine_from_store(store_write(e->store,
		    ann_import_fn, &p))) != 0 || !p.changed)
			break;
	}
	if (rc == 0 && p.changed)
		rc = engine_invalid(err, "the annotation reply kept changing; "
		    "try again");
	else if (rc == 0 && p.full)
		rc = ann_limit(err, "the import would pass",
		    "annotations.max_per_app", e->conf->annotations_max);
	/* Dify's answer: {job_id, job_status "waiting", record_count}; the
	 * job has ended here (batch-import-status says how) */
	if (rc == 0 && (*out = json_pack("{s:s,s:s,s:I}", "job_id", job,
	    "job_status", "waiting", "record_count", (json_int_t)n)) == NULL)
		rc = ENGINE_ENOMEM;
out:
	vecs_free(p.vecs);
	free(texts);
	json_decref(p.pairs);
	json_decref(rec);
	return rc;
}

/* ====== The reply setting ====== */

/* Dify's setting answer (get_app_annotation_setting_by_app_id). */
static json_t *
setting_public(const json_t *set)
{
	if (set == NULL)
		return json_pack("{s:b}", "enabled", 0);
	return json_pack("{s:O,s:b,s:O,s:{s:O,s:O}}", "id",
	    json_object_get(set, "id"), "enabled", 1, "score_threshold",
	    json_object_get(set, "score_threshold"), "embedding_model",
	    "embedding_provider_name", json_object_get(set,
	    "embedding_provider_name"), "embedding_model_name",
	    json_object_get(set, "embedding_model_name"));
}

struct ann_set {
	const char	*app_id, *job_id, *action, *error, *setting_id;
	json_t		*setting;	/* to store; NULL: reply off */
	char	       **vecs;		/* with setting: one per item */
	size_t		 nitems;	/* items the vectors were made for */
	double		 threshold;	/* setting_id: the new threshold */
	int		 threshold_only, missing, changed;
	json_t		*out;
};

/*
 * Notes on the app's record whether its annotation reply is on
 * ("annotation_reply": true, absent when off), in the transaction that
 * turns it on or off: a chat turn reads the annotations only when the app
 * it runs (from the app cache, which a write of the record refreshes)
 * says so, not on every turn of every chat app.
 */
static int
app_flag_put(struct store_txn *t, const char *app_id, int on)
{
	json_t	*app = NULL;
	int	 rc;

	if ((rc = store_get_json(t, STORE_DB_APPS, app_id, &app)) != 0)
		return rc;
	if (json_is_true(json_object_get(app, "annotation_reply")) == on) {
		json_decref(app);
		return 0;
	}
	if (on ? json_object_set_new(app, "annotation_reply", json_true()) :
	    json_object_del(app, "annotation_reply")) {
		json_decref(app);
		return STORE_ENOMEM;
	}
	rc = store_put_json(t, STORE_DB_APPS, app_id, app, 0);
	json_decref(app);
	return rc;
}

static int
ann_set_fn(struct store_txn *t, void *arg)
{
	struct ann_set	*p = arg;
	json_t		*rec = NULL, *jobs, *items, *it, *set;
	char		 key[64];
	size_t		 i;
	int		 rc;

	json_decref(p->out);
	p->out = NULL;
	p->missing = p->changed = 0;
	if ((rc = ann_get(t, p->app_id, &rec)) != 0)
		return rc;
	items = json_object_get(rec, "items");
	rc = STORE_ENOMEM;
	if (p->threshold_only) {
		set = json_object_get(rec, "setting");
		if (set == NULL || !record_field_is(set, "id",
		    p->setting_id)) {
			p->missing = 1;
			rc = 0;
			goto out;
		}
		if (json_object_set_new(set, "score_threshold",
		    json_real(p->threshold)) != 0 ||
		    (p->out = setting_public(set)) == NULL)
			goto out;
	} else if (p->error == NULL) {
		if (p->setting != NULL) {
			/* the items changed since they were embedded: the
			 * caller embeds again */
			if (json_array_size(items) != p->nitems) {
				p->changed = 1;
				rc = 0;
				goto out;
			}
			json_array_foreach(items, i, it)
				if (json_object_set_new(it, "vec",
				    json_string(p->vecs[i])) != 0)
					goto out;
			if (json_object_set(rec, "setting", p->setting) != 0)
				goto out;
		} else {
			json_array_foreach(items, i, it)
				json_object_del(it, "vec");
			json_object_del(rec, "setting");
		}
		if ((rc = app_flag_put(t, p->app_id, p->setting != NULL)) !=
		    0)
			goto out;
		rc = STORE_ENOMEM;
	}
	if (!p->threshold_only) {
		if (!json_is_array(jobs = json_object_get(rec, "jobs"))) {
			if (json_object_set_new(rec, "jobs", json_array()) != 0)
				goto out;
			jobs = json_object_get(rec, "jobs");
		}
		while (json_array_size(jobs) >= JOBS_KEPT)
			json_array_remove(jobs, 0);
		if (json_array_append_new(jobs, json_pack("{s:s,s:s,s:s,s:s}",
		    "id", p->job_id, "action", p->action, "status",
		    p->error != NULL ? "error" : "completed", "error_msg",
		    p->error != NULL ? p->error : "")) != 0 ||
		    (p->out = json_pack("{s:s,s:s}", "job_id", p->job_id,
		    "job_status", "waiting")) == NULL)
			goto out;
	}
	ann_key(p->app_id, key);
	rc = store_put_json(t, STORE_DB_SETTINGS, key, rec, 0);
out:
	json_decref(rec);
	return rc;
}

int
engine_annotation_reply(struct engine *e, const char *app_id,
    const char *action, double threshold, const char *provider,
    const char *model, char *err, json_t **out)
{
	struct ann_set	  p;
	json_t		 *rec = NULL, *it;
	const char	**texts = NULL;
	char		  job[37], sid[37], why[ENGINE_ERRMAX] = "";
	size_t		  i;
	int		  rc, tries;

	*out = NULL;
	if ((rc = app_known(e, app_id)) != 0)
		return rc;
	if (strcmp(action, "enable") != 0 && strcmp(action, "disable") != 0)
		return engine_invalid(err, "Unsupported annotation reply "
		    "action");
	memset(&p, 0, sizeof(p));
	engine_uuid(job);
	p.app_id = app_id;
	p.job_id = job;
	p.action = action;
	for (tries = 0; tries < 3; tries++) {
		json_decref(rec);
		rec = NULL;
		free(texts);
		texts = NULL;
		vecs_free(p.vecs);
		p.vecs = NULL;
		json_decref(p.setting);
		p.setting = NULL;
		if (strcmp(action, "enable") == 0) {
			if ((rc = ann_read(e, app_id, &rec)) != 0)
				goto out;
			p.nitems = json_array_size(json_object_get(rec,
			    "items"));
			if ((texts = calloc(p.nitems + 1, sizeof(*texts))) ==
			    NULL) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
			json_array_foreach(json_object_get(rec, "items"), i,
			    it)
				texts[i] = json_string_value(json_object_get(it,
				    "question")) ? json_string_value(
				    json_object_get(it, "question")) : "";
			/* the setting keeps its id across enables */
			if (json_string_value(json_object_get(json_object_get(
			    rec, "setting"), "id")) != NULL)
				snprintf(sid, sizeof(sid), "%s",
				    json_string_value(json_object_get(
				    json_object_get(rec, "setting"), "id")));
			else
				engine_uuid(sid);
			why[0] = '\0';
			/* an embedding that fails is the job's error, as
			 * Dify's enable task records it */
			if ((rc = embed_texts(e, provider, model, texts,
			    p.nitems, why, &p.vecs)) == ENGINE_ENOMEM)
				goto out;
			p.error = rc != 0 ? why : NULL;
			if (rc == 0 && (p.setting = json_pack("{s:s,s:f,s:s,"
			    "s:s,s:I}", "id", sid, "score_threshold",
			    threshold, "embedding_provider_name", provider,
			    "embedding_model_name", model, "created_at",
			    (json_int_t)engine_now())) == NULL) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
		}
		if ((rc = engine_from_store(store_write(e->store, ann_set_fn,
		    &p))) != 0 || !p.changed)
			break;
	}
	if (rc == 0 && p.changed)
		rc = engine_invalid(err, "the annotations kept changing; try "
		    "again");
	if (rc == 0) {
		*out = p.out;
		p.out = NULL;
	}
out:
	json_decref(p.out);
	json_decref(p.setting);
	vecs_free(p.vecs);
	free(texts);
	json_decref(rec);
	return rc;
}

int
engine_annotation_job(struct engine *e, const char *app_id,
    const char *action, const char *job_id, char *err, json_t **out)
{
	json_t		*rec = NULL, *j;
	size_t		 i;
	int		 rc;

	*out = NULL;
	if ((rc = app_known(e, app_id)) != 0 ||
	    (rc = ann_read(e, app_id, &rec)) != 0)
		return rc;
	rc = ann_notfound(err, "The job does not exist.");
	json_array_foreach(json_object_get(rec, "jobs"), i, j)
		if (job_id != NULL && record_field_is(j, "id", job_id) &&
		    record_field_is(j, "action", action)) {
			*out = json_pack("{s:O,s:O,s:O}", "job_id",
			    json_object_get(j, "id"), "job_status",
			    json_object_get(j, "status"), "error_msg",
			    json_object_get(j, "error_msg"));
			rc = *out != NULL ? 0 : ENGINE_ENOMEM;
			break;
		}
	json_decref(rec);
	return rc;
}

int
engine_annotation_setting(struct engine *e, const char *app_id,
    const char *setting_id, double threshold, char *err, json_t **out)
{
	struct ann_set	 p;
	json_t		*rec = NULL;
	int		 rc;

	*out = NULL;
	if ((rc = app_known(e, app_id)) != 0)
		return rc;
	if (setting_id == NULL) {
		if ((rc = ann_read(e, app_id, &rec)) != 0)
			return rc;
		*out = setting_public(json_object_get(rec, "setting"));
		json_decref(rec);
		return *out != NULL ? 0 : ENGINE_ENOMEM;
	}
	memset(&p, 0, sizeof(p));
	p.app_id = app_id;
	p.setting_id = setting_id;
	p.threshold = threshold;
	p.threshold_only = 1;
	rc = engine_from_store(store_write(e->store, ann_set_fn, &p));
	if (rc == 0 && p.missing)
		rc = ann_notfound(err, "App annotation not found");
	if (rc == 0) {
		*out = p.out;
		p.out = NULL;
	}
	json_decref(p.out);
	return rc;
}

/* ====== At run time ====== */

struct ann_hit {
	const char	*app_id, *id, *query, *source, *msg_id;
	double		 score;
	int		 max;	/* annotations.max_hit_histories */
};

/* Appends Dify's AppAnnotationHitHistory of p (answered by it) to rec,
 * the oldest dropped past p->max. 0 or -1 (out of memory). */
static int
hits_add(json_t *rec, const json_t *it, const struct ann_hit *p)
{
	json_t	*hits = json_object_get(rec, "hits");
	char	 id[37];

	if (p->max <= 0)
		return 0;
	if (!json_is_array(hits)) {
		if (json_object_set_new(rec, "hits", json_array()) != 0)
			return -1;
		hits = json_object_get(rec, "hits");
	}
	while (json_array_size(hits) >= (size_t)p->max)
		json_array_remove(hits, 0);
	engine_uuid(id);
	return json_array_append_new(hits, json_pack("{s:s,s:s,s:s,s:f,s:s,"
	    "s:I,s:O,s:O,s:s?}", "id", id, "annotation_id", p->id, "source",
	    p->source, "score", p->score, "question", p->query, "created_at",
	    (json_int_t)engine_now(), "match", json_object_get(it, "question"),
	    "response", json_object_get(it, "content"), "message_id",
	    p->msg_id));
}

static int
ann_hit_fn(struct store_txn *t, void *arg)
{
	struct ann_hit	*p = arg;
	json_t		*rec = NULL, *it;
	char		 key[64];
	size_t		 i;
	int		 rc;

	if ((rc = ann_get(t, p->app_id, &rec)) != 0)
		return rc;
	json_array_foreach(json_object_get(rec, "items"), i, it)
		if (record_field_is(it, "id", p->id)) {
			if (json_object_set_new(it, "hit_count", json_integer(
			    json_integer_value(json_object_get(it,
			    "hit_count")) + 1)) != 0 || hits_add(rec, it, p) !=
			    0) {
				rc = STORE_ENOMEM;
				break;
			}
			ann_key(p->app_id, key);
			rc = store_put_json(t, STORE_DB_SETTINGS, key, rec, 0);
			break;
		}
	json_decref(rec);
	return rc;
}

/* Dify's InvokeFrom.to_source of invoke_from. */
static const char *
hit_source(const char *invoke_from)
{
	if (invoke_from == NULL || strcmp(invoke_from, "service-api") == 0)
		return "api";
	if (strcmp(invoke_from, "web-app") == 0)
		return "web_app";
	if (strcmp(invoke_from, "explore") == 0)
		return "explore_app";
	return "dev";
}

int
annotation_match(struct engine *e, const char *app_id, const char *query,
    const char *invoke_from, const char *msg_id, json_t **hit)
{
	struct ann_hit	 h;
	json_t		*rec = NULL, *set, *it, *best = NULL;
	const char	*vec;
	char		 err[ENGINE_ERRMAX] = "";
	float		*q = NULL;
	size_t		 dim = 0, i;
	double		 th, s, bs = -1;
	int		 rc;

	*hit = NULL;
	if (query == NULL || *query == '\0')
		return 0;
	if ((rc = ann_read(e, app_id, &rec)) != 0)
		return rc;
	if ((set = json_object_get(rec, "setting")) == NULL ||
	    json_array_size(json_object_get(rec, "items")) == 0)
		goto out;
	/* Dify: score_threshold or 1 */
	if ((th = json_number_value(json_object_get(set, "score_threshold")))
	    == 0)
		th = 1;
	if ((rc = kb_embed(e, json_string_value(json_object_get(set,
	    "embedding_provider_name")), json_string_value(json_object_get(
	    set, "embedding_model_name")), &query, 1, err, &q, &dim)) != 0) {
		/* as Dify: a failed query is no reply, and the run goes on */
		log_warn("annotation reply: %s", err);
		rc = rc == ENGINE_ENOMEM ? rc : 0;
		goto out;
	}
	json_array_foreach(json_object_get(rec, "items"), i, it) {
		if ((vec = json_string_value(json_object_get(it, "vec"))) ==
		    NULL)
			continue;
		if ((s = vec_dot(vec, q, dim)) > bs) {
			bs = s;
			best = it;
		}
	}
	/* float rounding may put an exact match a hair under 1 */
	if (best == NULL || bs + 1e-6 < th)
		goto out;
	h.app_id = app_id;
	h.id = json_string_value(json_object_get(best, "id"));
	h.query = query;
	h.source = hit_source(invoke_from);
	h.msg_id = msg_id;
	h.score = bs;
	h.max = e->conf->annotations_max_hits;
	if (h.id != NULL && store_write(e->store, ann_hit_fn, &h) != 0)
		log_warn("annotation reply: the hit count of %s was not "
		    "stored", h.id);
	if ((*hit = json_pack("{s:O,s:O,s:O,s:f}", "id", json_object_get(best,
	    "id"), "question", json_object_get(best, "question"), "content",
	    json_object_get(best, "content"), "score", bs)) == NULL)
		rc = ENGINE_ENOMEM;
out:
	free(q);
	json_decref(rec);
	return rc;
}
