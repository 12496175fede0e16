/*
 * app_cache.c — apps parsed once and reused by every run while their stored
 * bytes stay the same.
 *
 * Parsing an app's DSL was the largest fixed cost of a run. An entry keeps
 * a copy of the two stored values it was parsed from (the apps record and
 * the source: the draft, or the published version the service API runs,
 * versions.c); a lookup reads both in a snapshot and compares bytes, so a
 * change made by any process (an import, a draft save, a publish, a
 * delete) is seen at once, with no invalidation to forget. An entry is
 * found by the app's id and its source's (the version id, "" for the
 * draft): an app never published has one entry for both kinds of run.
 * Entries are shared read-only between runs: jansson's reference counts
 * are atomic and reading an object changes nothing. What a run must change (a draft
 * whose secrets it opens) it changes in its own copy (run.c).
 *
 * run.app_cache bounds the entries; the least recently used one goes.
 *
 * On PostgreSQL that snapshot costs round trips (BEGIN, the record, the
 * versions, the draft, ROLLBACK) on every run, so an entry also notes the
 * configuration generation (store_generation) it was found true under, for
 * each kind of lookup (the draft, the latest): while the generation is the
 * same, a lookup reads nothing. Every write of apps, drafts, versions or
 * api_keys, on any host, changes the generation in its own transaction (a
 * trigger, storage/pg.c), and a request reads it once, first: a request
 * sees every change committed before it began, as with the byte
 * comparison. The generation is one for all apps: a change to one app
 * makes every entry compare its bytes again once. LMDB keeps none (its
 * reads cost no round trip) and compares bytes every time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/records/records.h"

struct app_entry {
	char		 id[37];
	char		 vid[37];	/* the version parsed, "" the draft */
	void		*rec;		/* the stored apps record */
	size_t		 rec_len;
	void		*draft;		/* the stored source, or NULL */
	size_t		 draft_len;
	json_t		*app;		/* parsed, with "dsl" */
	int		 sealed;	/* the draft may hold sealed secrets */
	struct graph	*g;		/* its workflow's graph, once built */
	uint64_t	 used;		/* tick of the last hit */
	uint64_t	 gen_draft;	/* generation + 1 at which it was the
					   draft lookup's answer, 0 none */
	uint64_t	 gen_latest;	/* the same for the latest lookup */
};

struct app_cache {
	pthread_mutex_t	 mu;
	struct app_entry *e;
	size_t		 n, max;
	uint64_t	 tick;
};

/* The generation this thread's request read (engine_request_begin). */
static __thread struct {
	int		in;	/* between begin and end */
	int		have;	/* gen was read in this request */
	uint64_t	gen;
} req_gen;

void
engine_request_begin(struct engine *e)
{
	(void)e;
	req_gen.in = 1;
	req_gen.have = 0;
}

void
engine_request_end(struct engine *e)
{
	(void)e;
	req_gen.in = 0;
	req_gen.have = 0;
}

int
app_cache_generation(struct engine *e, uint64_t *gen)
{
	int rc;

	if (req_gen.in && req_gen.have) {
		*gen = req_gen.gen;
		return 0;
	}
	if ((rc = store_generation(e->store, gen)) == 0 && req_gen.in) {
		req_gen.gen = *gen;
		req_gen.have = 1;
	}
	return rc;
}

/* Notes that a, of app id, answered a lookup of that kind under gen1
 * (generation + 1, 0 none); the entry that answered it before no more. */
static void
entry_tag(struct app_cache *c, struct app_entry *a, const char *id,
    int draft, uint64_t gen1)
{
	size_t i;

	if (gen1 == 0)
		return;
	for (i = 0; i < c->n; i++)
		if (&c->e[i] != a && strcmp(c->e[i].id, id) == 0) {
			if (draft)
				c->e[i].gen_draft = 0;
			else
				c->e[i].gen_latest = 0;
		}
	if (draft)
		a->gen_draft = gen1;
	else
		a->gen_latest = gen1;
}

static void
entry_clear(struct app_entry *a)
{
	free(a->rec);
	free(a->draft);
	graph_free(a->g);
	json_decref(a->app);
	memset(a, 0, sizeof(*a));
}

int
app_cache_init(struct engine *e)
{
	struct app_cache *c;

	if (e->conf->run_app_cache <= 0)
		return 0;
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->e = calloc((size_t)e->conf->run_app_cache, sizeof(*c->e))) ==
	    NULL) {
		free(c);
		return ENGINE_ENOMEM;
	}
	c->max = (size_t)e->conf->run_app_cache;
	pthread_mutex_init(&c->mu, NULL);
	e->apps = c;
	return 0;
}

void
app_cache_fini(struct engine *e)
{
	struct app_cache	*c = e->apps;
	size_t			 i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n; i++)
		entry_clear(&c->e[i]);
	free(c->e);
	pthread_mutex_destroy(&c->mu);
	free(c);
	e->apps = NULL;
}

static int
same(const void *a, size_t alen, const void *b, size_t blen)
{
	return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

/* Keeps app, parsed from rec and draft, in the slot of id or the LRU one;
 * that slot, or NULL when it could not be filled. */
static struct app_entry *
cache_put(struct app_cache *c, const char *id, const char *vid,
    const void *rec, size_t rec_len, const void *draft, size_t draft_len,
    json_t *app)
{
	struct app_entry	*a = NULL;
	size_t			 i;

	for (i = 0; i < c->n && a == NULL; i++)
		if (strcmp(c->e[i].id, id) == 0 &&
		    strcmp(c->e[i].vid, vid) == 0)
			a = &c->e[i];
	if (a == NULL && c->n < c->max)
		a = &c->e[c->n++];
	if (a == NULL) {
		a = &c->e[0];
		for (i = 1; i < c->n; i++)
			if (c->e[i].used < a->used)
				a = &c->e[i];
	}
	entry_clear(a);
	if ((a->rec = malloc(rec_len ? rec_len : 1)) == NULL ||
	    (draft != NULL && (a->draft = malloc(draft_len ? draft_len : 1)) ==
	    NULL)) {
		entry_clear(a);
		return NULL;
	}
	snprintf(a->id, sizeof(a->id), "%s", id);
	snprintf(a->vid, sizeof(a->vid), "%s", vid);
	memcpy(a->rec, rec, rec_len);
	a->rec_len = rec_len;
	if (draft != NULL)
		memcpy(a->draft, draft, draft_len);
	a->draft_len = draft_len;
	a->app = json_incref(app);
	a->sealed = draft != NULL && secrets_maybe_sealed(draft, draft_len);
	a->used = ++c->tick;
	return a;
}

/* The app record rec with "dsl" parsed from the source (NULL: none). */
static json_t *
app_parse(const void *rec, size_t rec_len, const char *vid,
    const void *src, size_t src_len)
{
	json_t *app, *dsl = NULL, *ver = NULL;

	if ((app = json_loadb(rec, rec_len, 0, NULL)) == NULL ||
	    !json_is_object(app))
		goto fail;
	if (src != NULL && *vid == '\0' &&
	    (dsl = json_loadb(src, src_len, 0, NULL)) == NULL)
		goto fail;
	if (src != NULL && *vid != '\0') {
		if ((ver = json_loadb(src, src_len, 0, NULL)) == NULL ||
		    (dsl = json_incref(json_object_get(ver, "dsl"))) == NULL)
			goto fail;
		if (json_object_set_new(app, "run_version", json_pack(
		    "{s:s,s:O?}", "id", vid, "version", json_object_get(ver,
		    "version"))) != 0)
			goto fail;
		json_decref(ver);
	}
	if (json_object_set_new(app, "dsl", dsl ? dsl : json_null()) != 0)
		goto fail;
	return app;
fail:
	json_decref(dsl);
	json_decref(ver);
	json_decref(app);
	return NULL;
}

static int
cache_get(struct engine *e, const char *id, int draft, const char *want,
    json_t **out, int *sealed)
{
	struct app_cache	*c = e->apps;
	struct store_txn	*t = NULL;
	struct app_entry	*a;
	const void		*rec, *src = NULL;
	size_t			 rec_len, src_len = 0, i;
	json_t			*app = NULL;
	char			 vid[37] = "";
	uint64_t		 gen, gen1 = 0;
	int			 rc;

	*sealed = 0;
	if (engine_uuid_check(id) != 0)
		return ENGINE_ENOTFOUND;
	/* read first, so that what the snapshot below finds is as new; a
	 * lookup of one version (want) is neither answered nor noted by the
	 * generation, which stands for the draft and the latest lookups */
	if (c != NULL && want == NULL && app_cache_generation(e, &gen) == 0)
		gen1 = gen + 1;
	if (gen1 != 0) {
		pthread_mutex_lock(&c->mu);
		for (i = 0; i < c->n && app == NULL; i++) {
			a = &c->e[i];
			if (strcmp(a->id, id) == 0 && (draft ? a->gen_draft :
			    a->gen_latest) == gen1) {
				a->used = ++c->tick;
				app = json_incref(a->app);
				*sealed = a->sealed;
			}
		}
		pthread_mutex_unlock(&c->mu);
		if (app != NULL) {
			*out = app;
			return 0;
		}
	}
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	if ((rc = store_get(t, STORE_DB_APPS, id, 36, &rec, &rec_len)) != 0)
		goto out;
	/* the version asked for; or the latest published one, else the
	 * draft */
	if (want != NULL) {
		if ((rc = versions_get(t, id, want, &src, &src_len)) != 0)
			goto out;
		snprintf(vid, sizeof(vid), "%s", want);
	} else
		rc = draft ? STORE_ENOTFOUND : versions_latest(t, id, vid,
		    &src, &src_len);
	if (rc == STORE_ENOTFOUND && want == NULL) {
		vid[0] = '\0';
		rc = store_get(t, STORE_DB_DRAFTS, id, 36, &src, &src_len);
	}
	if (rc != 0 && rc != STORE_ENOTFOUND)
		goto out;
	if (rc == STORE_ENOTFOUND)
		src = NULL;
	if (c == NULL) {
		/* without the cache the app is the caller's own */
		rc = (app = app_parse(rec, rec_len, vid, src, src_len)) ?
		    0 : STORE_EINVAL;
		goto out;
	}
	pthread_mutex_lock(&c->mu);
	for (i = 0; i < c->n; i++) {
		a = &c->e[i];
		if (strcmp(a->id, id) == 0 && strcmp(a->vid, vid) == 0 &&
		    same(a->rec, a->rec_len, rec, rec_len) && (src == NULL ?
		    a->draft == NULL : a->draft != NULL && same(a->draft,
		    a->draft_len, src, src_len))) {
			a->used = ++c->tick;
			app = json_incref(a->app);
			*sealed = a->sealed;
			entry_tag(c, a, id, draft, gen1);
			break;
		}
	}
	pthread_mutex_unlock(&c->mu);
	if (app != NULL) {
		rc = 0;
		goto out;
	}
	if ((app = app_parse(rec, rec_len, vid, src, src_len)) == NULL) {
		rc = STORE_EINVAL;
		goto out;
	}
	*sealed = src != NULL && secrets_maybe_sealed(src, src_len);
	pthread_mutex_lock(&c->mu);
	if ((a = cache_put(c, id, vid, rec, rec_len, src, src_len, app)) !=
	    NULL)
		entry_tag(c, a, id, draft, gen1);
	pthread_mutex_unlock(&c->mu);
	rc = 0;
out:
	store_read_end(t);
	if (rc != 0) {
		json_decref(app);
		return engine_from_store(rc);
	}
	*out = app;
	return 0;
}

int
app_cache_get(struct engine *e, const char *id, int draft, json_t **out,
    int *sealed)
{
	return cache_get(e, id, draft, NULL, out, sealed);
}

int
app_cache_get_version(struct engine *e, const char *id, const char *vid,
    json_t **out, int *sealed)
{
	return cache_get(e, id, 0, vid, out, sealed);
}

int
engine_app_get_live(struct engine *e, const char *id, json_t **out)
{
	int sealed;

	return app_cache_get(e, id, 0, out, &sealed);
}

int
engine_app_mode(struct engine *e, const char *id, char *mode, size_t len)
{
	json_t		*app = NULL;
	const char	*m;
	int		 rc, sealed;

	/* without the cache, the record alone */
	if ((rc = e->apps != NULL ? app_cache_get(e, id, 0, &app, &sealed) :
	    engine_app_get(e, id, &app)) != 0)
		return rc;
	m = json_string_value(json_object_get(app, "mode"));
	snprintf(mode, len, "%s", m != NULL ? m : "");
	json_decref(app);
	return 0;
}

struct graph *
app_cache_graph(struct engine *e, const json_t *app)
{
	struct app_cache	*c = e->apps;
	struct app_entry	*a = NULL;
	struct graph		*g = NULL, *mine;
	const json_t		*wf;
	char			 err[ENGINE_ERRMAX];
	size_t			 i;

	if (c == NULL)
		return NULL;
	pthread_mutex_lock(&c->mu);
	for (i = 0; i < c->n && a == NULL; i++)
		if (c->e[i].app == app)
			a = &c->e[i];
	if (a != NULL && a->g != NULL)
		g = graph_ref(a->g);
	pthread_mutex_unlock(&c->mu);
	if (a == NULL || g != NULL)
		return g;
	/* built outside the lock; a run that built it meanwhile wins */
	wf = json_object_get(json_object_get(app, "dsl"), "workflow");
	if (!json_is_object(wf) || graph_build(wf, err, &mine) != 0)
		return NULL;
	pthread_mutex_lock(&c->mu);
	for (i = 0, a = NULL; i < c->n && a == NULL; i++)
		if (c->e[i].app == app)
			a = &c->e[i];
	if (a != NULL && a->g == NULL)
		a->g = graph_ref(mine);
	else if (a != NULL) {
		graph_free(mine);
		mine = graph_ref(a->g);
	}
	pthread_mutex_unlock(&c->mu);
	return mine;
}
