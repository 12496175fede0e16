/*
 * t_knowledge_index.c — the stored keyword index answers as the scan of
 * every segment does: the same segments in the same order with the same
 * scores, for many queries (English and Chinese, one to five terms, with
 * and without a threshold), after indexing, after segments are edited,
 * disabled, enabled again, deleted and added, after a document is
 * deleted; and a deleted dataset leaves no index key behind.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/knowledge/knowledge.h"
#include "engine/records/records.h"
#include "tests/unit/tap.h"
#include "tests/unit/tmp_engine.h"

static struct engine	*eng;
static unsigned		 seed = 7;

static unsigned
rnd(unsigned n)
{
	seed = seed * 1103515245u + 12345u;
	return (seed >> 16) % n;
}

static const char *const words[] = { "refund", "ship", "order", "price",
	"item", "day", "week", "return", "card", "gift", "box", "退款",
	"发货", "天内", "支付", "alpha", "beta" };
#define NWORDS (sizeof(words) / sizeof(words[0]))

/* A text of n lines of 3 to 20 words, one chunk a line. */
static char *
text_make(int n)
{
	size_t	 cap = (size_t)n * 200 + 1, len = 0;
	char	*t = malloc(cap);
	int	 i, j, m;

	for (i = 0; i < n && t != NULL; i++) {
		m = 3 + (int)rnd(18);
		for (j = 0; j < m; j++)
			len += (size_t)snprintf(t + len, cap - len, "%s%s%u",
			    j ? " " : "", words[rnd(NWORDS)], rnd(4));
		t[len++] = '\n';
	}
	if (t != NULL)
		t[len] = '\0';
	return t;
}

/* Adds a document and waits (bounded) for it to be indexed; its id. */
static int
doc_add(const char *ds, int lines, char id[40])
{
	json_t	*in, *out = NULL, *st = NULL;
	char	*text = text_make(lines), err[ENGINE_ERRMAX] = "", batch[40];
	int	 i, rc = -1;

	in = json_pack("{s:s,s:s,s:{s:s,s:{s:[],s:{s:s,s:i}}}}", "name",
	    "d.txt", "text", text, "process_rule", "mode", "custom", "rules",
	    "pre_processing_rules", "segmentation", "separator", "\\n",
	    "max_tokens", 200);
	free(text);
	if (!CHECK(engine_kb_document_create_text(eng, ds, in, err, &out) ==
	    0)) {
		printf("# %s\n", err);
		goto out;
	}
	snprintf(id, 40, "%s", json_string_value(json_object_get(
	    json_object_get(out, "document"), "id")));
	snprintf(batch, sizeof(batch), "%s", json_string_value(
	    json_object_get(out, "batch")));
	for (i = 0; i < 3000; i++) {	/* at most 30 s */
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		json_decref(st);
		st = NULL;
		if (engine_kb_indexing_status(eng, ds, batch, err, &st) == 0 &&
		    record_field_is(json_array_get(json_object_get(st, "data"),
		    0), "indexing_status", "completed"))
			break;
		nanosleep(&ts, NULL);
	}
	rc = CHECK(i < 3000) ? 0 : -1;
	if (rc != 0) {
		char *dump = json_dumps(st, 0);

		printf("# %s\n", dump ? dump : err);
		free(dump);
	}
out:
	json_decref(in);
	json_decref(out);
	json_decref(st);
	return rc;
}

/* The two searches of query answer alike; 1 when they do. */
static int
same(const char *ds, const char *q, int top_k, double th, const json_t *rm)
{
	json_t	*a = NULL, *b = NULL, *x, *y;
	char	 err[ENGINE_ERRMAX] = "";
	size_t	 i;
	int	 ok;

	ok = kb_search_with(eng, ds, q, rm, top_k, th, 1, err, &a) == 0 &&
	    kb_search_with(eng, ds, q, rm, top_k, th, 0, err, &b) == 0 &&
	    json_array_size(a) == json_array_size(b);
	for (i = 0; ok && i < json_array_size(a); i++) {
		x = json_array_get(a, i);
		y = json_array_get(b, i);
		ok = json_equal(json_object_get(x, "segment"),
		    json_object_get(y, "segment")) &&
		    json_number_value(json_object_get(x, "score")) ==
		    json_number_value(json_object_get(y, "score"));
	}
	if (!ok)
		printf("# '%s' top %d: index %zu hits, scan %zu (%s)\n", q,
		    top_k, json_array_size(a), json_array_size(b), err);
	json_decref(a);
	json_decref(b);
	return ok;
}

/* Many queries; one check. *hits gets the index's hits of the last. */
static void
compare(const char *ds, const char *what)
{
	char	q[256];
	size_t	len;
	int	i, j, m, bad = 0;

	for (i = 0; i < 30; i++) {
		m = 1 + (int)rnd(5);
		len = 0;
		for (j = 0; j < m; j++)
			len += (size_t)snprintf(q + len, sizeof(q) - len,
			    "%s%s%u", j ? " " : "", words[rnd(NWORDS)], rnd(4));
		if (!same(ds, q, 1 + (int)rnd(20), i % 3 == 0 ? 0.2 : 0,
		    NULL))
			bad++;
	}
	if (!CHECK(bad == 0))
		printf("# %s: %d of 30 queries differ\n", what, bad);
}

/* The number of keys under prefix. */
static size_t
keys_under(const char *prefix)
{
	struct store_txn	*t = NULL;
	json_t			*all = NULL;
	size_t			 n = 0;
	struct store_cursor	*c = NULL;
	struct store_kv		 kv;
	int			 rc;

	(void)all;
	if (store_read_begin(eng->store, &t) != 0)
		return (size_t)-1;
	if (store_cursor_open(t, STORE_DB_SETTINGS, &c) == 0) {
		for (rc = store_cursor_seek(c, prefix, strlen(prefix), &kv);
		    rc == 0 && kv.klen >= strlen(prefix) && memcmp(kv.k,
		    prefix, strlen(prefix)) == 0; rc = store_cursor_next(c,
		    &kv))
			n++;
		store_cursor_close(c);
	}
	store_read_end(t);
	return n;
}

/* The id of segment number pos (1-based) of a document. */
static int
seg_id(const char *ds, const char *doc, int pos, char id[40])
{
	json_t	*l = NULL;
	char	 err[ENGINE_ERRMAX];
	int	 rc;

	rc = engine_kb_segment_list(eng, ds, doc, (pos - 1) / 100 + 1, 100,
	    NULL, err, &l);
	if (rc == 0)
		snprintf(id, 40, "%s", json_string_value(json_object_get(
		    json_array_get(json_object_get(l, "data"), (size_t)(pos - 1) %
		    100), "id")));
	json_decref(l);
	return rc;
}

int
main(void)
{
	static struct conf	 c;
	char			 dir[256], err[ENGINE_ERRMAX] = "", ds[40];
	char			 d1[40], d2[40], sid[40], prefix[128];
	json_t			*x = NULL, *in;
	int			 i;

	conf_defaults(&c);
	if (tmp_engine_open("t_knowledge_index", &c, dir, sizeof(dir),
	    &eng) != 0)
		return tap_done();
	in = json_pack("{s:s,s:s}", "name", "ix", "indexing_technique",
	    "economy");
	CHECK_INT(engine_kb_dataset_create(eng, in, err, &x), 0);
	json_decref(in);
	snprintf(ds, sizeof(ds), "%s", json_string_value(json_object_get(x,
	    "id")));
	json_decref(x);
	x = NULL;

	/* 1,300 chunks: two blocks of postings, the second part full */
	if (doc_add(ds, 1300, d1) != 0 || doc_add(ds, 40, d2) != 0)
		goto out;
	snprintf(prefix, sizeof(prefix), "kb.ixs/%s/", ds);
	CHECK_INT(keys_under(prefix), 2);	/* counts of both documents */
	{
		/* both are marked as indexed: the search reads the index */
		struct store_txn	*t = NULL;
		json_t			*d = NULL;
		char			 key[128];

		snprintf(key, sizeof(key), "kb.doc/%s/%s", ds, d1);
		CHECK(store_read_begin(eng->store, &t) == 0 &&
		    store_get_json(t, STORE_DB_SETTINGS, key, &d) == 0 &&
		    json_is_true(json_object_get(d, "_ix")));
		store_read_end(t);
		json_decref(d);
	}
	CHECK(same(ds, "refund1 gift2", 10, 0, NULL));
	compare(ds, "after indexing");
	CHECK(same(ds, "退款 发货", 10, 0, NULL));
	CHECK(same(ds, "nothing matches", 10, 0, NULL));

	/* edits: content, disabled, enabled, deleted, added */
	for (i = 1; i <= 1300; i += 97) {
		CHECK_INT(seg_id(ds, d1, i, sid), 0);
		in = json_pack("{s:{s:s}}", "segment", "content",
		    "refund9 refund9 courier gift0 退款将在十四天内支付");
		CHECK_INT(engine_kb_segment_update(eng, ds, d1, sid, in, err,
		    &x), 0);
		json_decref(in);
		json_decref(x);
		x = NULL;
	}
	CHECK_INT(seg_id(ds, d2, 3, sid), 0);
	in = json_pack("{s:{s:b}}", "segment", "enabled", 0);
	CHECK_INT(engine_kb_segment_update(eng, ds, d2, sid, in, err, &x), 0);
	json_decref(in);
	json_decref(x);
	x = NULL;
	CHECK(same(ds, "courier refund9", 20, 0, NULL));
	compare(ds, "after edits and a disabled segment");
	in = json_pack("{s:{s:b}}", "segment", "enabled", 1);
	CHECK_INT(engine_kb_segment_update(eng, ds, d2, sid, in, err, &x), 0);
	json_decref(in);
	json_decref(x);
	x = NULL;
	CHECK_INT(seg_id(ds, d2, 5, sid), 0);
	CHECK_INT(engine_kb_segment_delete(eng, ds, d2, sid, err), 0);
	in = json_pack("{s:[{s:s},{s:s}]}", "segments", "content",
	    "courier box3 box3", "content", "gift card courier");
	CHECK_INT(engine_kb_segment_add(eng, ds, d2, in, err, &x), 0);
	json_decref(in);
	json_decref(x);
	x = NULL;
	compare(ds, "after enable, delete and add");
	CHECK(same(ds, "courier", 20, 0, NULL));

	/* a document deleted: its postings go */
	CHECK_INT(engine_kb_document_delete(eng, ds, d1, err), 0);
	CHECK_INT(keys_under(prefix), 1);
	compare(ds, "after a document deleted");
	snprintf(prefix, sizeof(prefix), "kb.ix/%s/%s/", ds, d1);
	CHECK_INT(keys_under(prefix), 0);
	snprintf(prefix, sizeof(prefix), "kb.ix/%s/%s/", ds, d2);
	CHECK(keys_under(prefix) > 0);
	/* and its segments, though another document's follow them */
	snprintf(prefix, sizeof(prefix), "kb.seg/%s/%s/", ds, d1);
	CHECK_INT(keys_under(prefix), 0);
	snprintf(prefix, sizeof(prefix), "kb.seg/%s/%s/", ds, d2);
	CHECK(keys_under(prefix) > 0);

	/* the dataset deleted: no index key is left */
	CHECK_INT(engine_kb_dataset_delete(eng, ds, err), 0);
	snprintf(prefix, sizeof(prefix), "kb.ix/%s/", ds);
	CHECK_INT(keys_under(prefix), 0);
	snprintf(prefix, sizeof(prefix), "kb.ixs/%s/", ds);
	CHECK_INT(keys_under(prefix), 0);
out:
	tmp_engine_close(eng, dir);
	return tap_done();
}
