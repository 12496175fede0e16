/*
 * t_knowledge_race.c — a document written by the Knowledge API while the
 * indexer writes it loses neither write. The indexer is parked (no
 * thread: the test runs kb_index itself), and kb.c's KB_HOOK, defined
 * here, makes the other write at the point where a write begins that an
 * earlier read prepared:
 *  - a metadata write, and a disable, made as the indexer writes the
 *    document's progress, are still there when it has completed;
 *  - indexing done while a metadata write is under way leaves the
 *    document completed, not back at waiting;
 *  - a segment edit whose segment was indexed anew meanwhile (another id
 *    at the same position) is 404, not written over the new segment.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct engine;
static void race_hook(struct engine *e, const char *point);
#define KB_HOOK(e, point)	race_hook(e, point)
#include "engine/knowledge/kb.c"

#include "tests/unit/tap.h"
#include "tests/unit/tmp_engine.h"

static struct engine	*eng;
static char		 ds[40], field[40];

/* What the hook does at its point, once: */
enum race_act { ACT_NONE, ACT_META, ACT_DISABLE, ACT_INDEX };
static struct {
	const char	*point;
	enum race_act	 act;
	const char	*doc;	/* the document it acts on */
	const char	*value;	/* ACT_META's value */
	int		 fired;
} arm;

static int
meta_set(const char *doc, const char *value)
{
	json_t	*in, *out = NULL;
	char	 err[ENGINE_ERRMAX] = "";
	int	 rc;

	in = json_pack("{s:[{s:s,s:[{s:s,s:s}]}]}", "operation_data",
	    "document_id", doc, "metadata_list", "id", field, "value", value);
	rc = engine_kb_documents_metadata(eng, ds, in, err, &out);
	if (rc != 0)
		printf("# metadata: %s\n", err);
	json_decref(in);
	json_decref(out);
	return rc;
}

static void
race_hook(struct engine *e, const char *point)
{
	char		 key[128];
	json_t		*set;

	if (arm.act == ACT_NONE || arm.fired || strcmp(point, arm.point) != 0)
		return;
	arm.fired = 1;		/* before: the write here has hooks too */
	switch (arm.act) {
	case ACT_META:
		CHECK_INT(meta_set(arm.doc, arm.value), 0);
		break;
	case ACT_DISABLE:
		snprintf(key, sizeof(key), KB_DOC "%s/%s", ds, arm.doc);
		set = json_pack("{s:b}", "enabled", 0);
		CHECK_INT(doc_update(e, key, set, NULL, NULL, NULL), 0);
		json_decref(set);
		break;
	case ACT_INDEX:
		snprintf(key, sizeof(key), KB_DOC "%s/%s", ds, arm.doc);
		set = json_pack("{s:s}", "indexing_status", "waiting");
		CHECK_INT(doc_update(e, key, set, NULL, NULL, NULL), 0);
		json_decref(set);
		kb_index(e, ds, arm.doc);
		break;
	default:
		break;
	}
}

static void
arm_set(const char *point, enum race_act act, const char *doc,
    const char *value)
{
	arm.point = point;
	arm.act = act;
	arm.doc = doc;
	arm.value = value;
	arm.fired = 0;
}

/* An indexer with no thread: documents queue and wait for the test. */
static void
park(void)
{
	struct kb_indexer *ix = calloc(1, sizeof(*ix));

	if (!CHECK(ix != NULL))
		exit(1);
	pthread_mutex_init(&ix->mu, NULL);
	pthread_cond_init(&ix->cv, NULL);
	eng->kb_indexer = ix;
}

static void
unpark(void)
{
	struct kb_indexer	*ix = eng->kb_indexer;
	struct kb_job		*j;

	while ((j = ix->head) != NULL) {
		ix->head = j->next;
		free(j);
	}
	pthread_mutex_destroy(&ix->mu);
	pthread_cond_destroy(&ix->cv);
	free(ix);
	eng->kb_indexer = NULL;
}

/* A new document of three chunks, waiting; its id in id. */
static int
doc_new(const char *name, char id[40])
{
	json_t	*in, *out = NULL;
	char	 err[ENGINE_ERRMAX] = "";
	int	 rc;

	in = json_pack("{s:s,s:s,s:{s:s,s:{s:[],s:{s:s,s:i}}}}", "name",
	    name, "text", "refunds take ten days\ngift cards never expire\n"
	    "orders ship within a week\n", "process_rule", "mode", "custom",
	    "rules", "pre_processing_rules", "segmentation", "separator",
	    "\\n", "max_tokens", 100);
	rc = engine_kb_document_create_text(eng, ds, in, err, &out);
	if (CHECK(rc == 0))
		snprintf(id, 40, "%s", json_string_value(json_object_get(
		    json_object_get(out, "document"), "id")));
	else
		printf("# %s\n", err);
	json_decref(in);
	json_decref(out);
	return rc;
}

static json_t *
doc_load(const char *doc)
{
	char	 key[128];
	json_t	*d = NULL;

	snprintf(key, sizeof(key), KB_DOC "%s/%s", ds, doc);
	if (kb_load(eng, key, &d) != 0)
		return NULL;
	return d;
}

/* The value of the test's field on document doc ("" when none). */
static const char *
doc_value(const json_t *d)
{
	json_t	*v;
	size_t	 i;

	json_array_foreach(json_object_get(d, "doc_metadata"), i, v)
		if (record_field_is(v, "id", field))
			return json_string_value(json_object_get(v, "value"));
	return "";
}

/* Segment pos of doc, new reference or NULL. */
static json_t *
seg_at(const char *doc, int pos)
{
	char	 key[160];
	json_t	*s = NULL;

	seg_key(key, sizeof(key), ds, doc, pos);
	if (kb_load(eng, key, &s) != 0)
		return NULL;
	return s;
}

int
main(void)
{
	static struct conf	 c;
	char			 dir[256], err[ENGINE_ERRMAX] = "";
	char			 d1[40], d2[40], d3[40], old_id[40];
	json_t			*x = NULL, *in, *d, *s;

	conf_defaults(&c);
	if (tmp_engine_open("t_knowledge_race", &c, dir, sizeof(dir),
	    &eng) != 0)
		return tap_done();
	park();
	in = json_pack("{s:s,s:s}", "name", "race", "indexing_technique",
	    "economy");
	CHECK_INT(engine_kb_dataset_create(eng, in, err, &x), 0);
	json_decref(in);
	snprintf(ds, sizeof(ds), "%s", json_string_value(json_object_get(x,
	    "id")));
	json_decref(x);
	in = json_pack("{s:s,s:s}", "type", "string", "name", "author");
	CHECK_INT(engine_kb_metadata_create(eng, ds, in, err, &x), 0);
	json_decref(in);
	snprintf(field, sizeof(field), "%s", json_string_value(
	    json_object_get(x, "id")));
	json_decref(x);
	if (doc_new("one.txt", d1) != 0 || doc_new("two.txt", d2) != 0 ||
	    doc_new("three.txt", d3) != 0)
		goto out;

	/* the API writes while the indexer writes the document's progress */
	arm_set("doc_write", ACT_META, d1, "ann");
	kb_index(eng, ds, d1);
	CHECK(arm.fired);
	d = doc_load(d1);
	CHECK_STR(json_string_value(json_object_get(d, "indexing_status")),
	    "completed");
	CHECK_STR(doc_value(d), "ann");		/* the metadata write kept */
	CHECK_INT(json_integer_value(json_object_get(d, "total_segments")), 3);
	json_decref(d);

	arm_set("doc_write", ACT_DISABLE, d3, NULL);
	kb_index(eng, ds, d3);
	CHECK(arm.fired);
	d = doc_load(d3);
	CHECK_STR(json_string_value(json_object_get(d, "indexing_status")),
	    "completed");
	CHECK(json_is_false(json_object_get(d, "enabled")));	/* kept */
	json_decref(d);

	/* the indexer completes while a metadata write is under way */
	arm_set("meta_write", ACT_INDEX, d2, NULL);
	CHECK_INT(meta_set(d2, "bob"), 0);
	CHECK(arm.fired);
	d = doc_load(d2);
	CHECK_STR(json_string_value(json_object_get(d, "indexing_status")),
	    "completed");			/* not waiting again */
	CHECK_STR(doc_value(d), "bob");
	json_decref(d);

	/* a segment edit whose segment was indexed anew meanwhile */
	s = seg_at(d1, 1);
	if (!CHECK(s != NULL))
		goto out;
	snprintf(old_id, sizeof(old_id), "%s", json_string_value(
	    json_object_get(s, "id")));
	json_decref(s);
	arm_set("seg_write", ACT_INDEX, d1, NULL);
	in = json_pack("{s:{s:s}}", "segment", "content", "stale edit");
	x = NULL;
	CHECK_INT(engine_kb_segment_update(eng, ds, d1, old_id, in, err, &x),
	    ENGINE_ENOTFOUND);
	CHECK_STR(err, "Segment not found.");
	json_decref(in);
	json_decref(x);
	CHECK(arm.fired);
	s = seg_at(d1, 1);
	CHECK(s != NULL && !record_field_is(s, "id", old_id));
	CHECK_STR(json_string_value(json_object_get(s, "content")),
	    "refunds take ten days");
	json_decref(s);
	d = doc_load(d1);
	CHECK_STR(json_string_value(json_object_get(d, "indexing_status")),
	    "completed");
	CHECK_STR(doc_value(d), "ann");	/* re-indexing kept it too */
	json_decref(d);

	/* an edit with nothing in between is written */
	arm_set("none", ACT_NONE, NULL, NULL);
	s = seg_at(d1, 2);
	in = json_pack("{s:{s:s}}", "segment", "content", "fresh edit");
	x = NULL;
	CHECK_INT(engine_kb_segment_update(eng, ds, d1, json_string_value(
	    json_object_get(s, "id")), in, err, &x), 0);
	json_decref(in);
	json_decref(x);
	json_decref(s);
	s = seg_at(d1, 2);
	CHECK_STR(json_string_value(json_object_get(s, "content")),
	    "fresh edit");
	json_decref(s);
out:
	unpark();
	tmp_engine_close(eng, dir);
	return tap_done();
}
