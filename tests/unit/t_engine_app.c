/*
 * t_engine_app.c — app records through engine.h: create, get, list, update,
 * delete, copy; validation messages; paging and filters; newest-first
 * order; If-Match revisions; copies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/records/records.h"
#include "tests/unit/tap.h"
#include "tests/unit/tmp_engine.h"

static struct conf	 conf;
static struct engine	*eng;
static char		 tmpdir[256];

static json_t *
J(const char *text)
{
	json_error_t	 e;
	json_t		*j = json_loads(text, JSON_DECODE_ANY, &e);

	if (j == NULL)
		printf("# bad JSON in test: %s\n", e.text);
	return j;
}

/* Creates an app from JSON text; returns the record or NULL. */
static json_t *
create(const char *text)
{
	json_t	*in = J(text), *out = NULL;
	char	 err[ENGINE_ERRMAX] = "";
	int	 rc;

	rc = engine_app_create(eng, in, err, &out);
	json_decref(in);
	if (rc != 0) {
		printf("# create %s: %s %s\n", text, engine_strerror(rc), err);
		return NULL;
	}
	return out;
}

/* Expects create of text to fail with EINVAL and want in the message. */
static void
create_fails(const char *text, const char *want, int line)
{
	json_t	*in = J(text), *out = NULL;
	char	 err[ENGINE_ERRMAX] = "";
	int	 rc;

	rc = engine_app_create(eng, in, err, &out);
	json_decref(in);
	if (!tap_check(rc == ENGINE_EINVAL && out == NULL &&
	    strstr(err, want) != NULL, __FILE__, line, text))
		printf("#   rc %d err '%s', want '%s'\n", rc, err, want);
	json_decref(out);
}
#define CREATE_FAILS(t, w) create_fails(t, w, __LINE__)

static const char *
S(const json_t *j, const char *k)
{
	const char *s = json_string_value(json_object_get(j, k));

	return s ? s : "(none)";
}

static long long
I(const json_t *j, const char *k)
{
	return (long long)json_integer_value(json_object_get(j, k));
}

static int
app_count(void)
{
	struct app_query	 q = { 1, 100, NULL, NULL };
	json_t			*res = NULL;
	int			 n = -1;

	if (engine_app_list(eng, &q, &res) == 0)
		n = (int)I(res, "total");
	json_decref(res);
	return n;
}

/* The draft graph of a workflow app, the model config of another. */
static json_t *
draft_graph(const json_t *rec)
{
	return json_object_get(json_object_get(json_object_get(rec, "dsl"),
	    "workflow"), "graph");
}

static json_t *
draft_mc(const json_t *rec)
{
	json_t *dsl = json_object_get(rec, "dsl"), *mc;

	/* a record without its draft carries the model config itself */
	mc = dsl != NULL ? json_object_get(dsl, "model_config") :
	    json_object_get(rec, "model_config");
	return json_is_null(mc) ? NULL : mc;
}

/* A string of n copies of the UTF-8 character c. */
static char *
repeat(const char *c, size_t n)
{
	size_t	 l = strlen(c), i;
	char	*s = malloc(l * n + 1);

	for (i = 0; i < n; i++)
		memcpy(s + i * l, c, l);
	s[l * n] = '\0';
	return s;
}

/* ====== Create and get ====== */

static void
test_create(void)
{
	static const char *modes[] = {
		"workflow", "advanced-chat", "chat", "agent-chat", "completion",
	};
	json_t	*rec, *got = NULL, *wf;
	size_t	 i;
	char	 body[256];

	for (i = 0; i < 5; i++) {
		snprintf(body, sizeof(body), "{\"name\":\"m %s\",\"mode\":\"%s\"}",
		    modes[i], modes[i]);
		rec = create(body);
		CHECK(rec != NULL);
		if (rec == NULL)
			continue;
		CHECK_STR(S(rec, "mode"), modes[i]);
		CHECK(engine_uuid_check(S(rec, "id")) == 0);
		CHECK_INT(I(rec, "revision"), 1);
		/* the draft lives in the app's DSL document, kept apart */
		CHECK(json_object_get(rec, "dsl") == NULL);
		CHECK_INT(engine_app_get_full(eng, S(rec, "id"), &got), 0);
		wf = json_incref(json_object_get(json_object_get(got, "dsl"),
		    "workflow"));
		json_decref(got);
		got = NULL;
		if (i < 2) {	/* workflow apps get a draft graph */
			CHECK(json_is_object(json_object_get(rec,
			    "workflow")));
			CHECK(json_is_array(json_object_get(json_object_get(wf,
			    "graph"), "nodes")));
			CHECK(draft_mc(rec) == NULL);
		} else {
			CHECK(json_is_null(json_object_get(rec, "workflow")));
			CHECK(wf == NULL);
			CHECK(json_is_object(draft_mc(rec)));
		}
		CHECK_INT(engine_app_get(eng, S(rec, "id"), &got), 0);
		CHECK(got != NULL && json_equal(got, rec));
		json_decref(got);
		got = NULL;
		json_decref(wf);
		json_decref(rec);
	}
	CHECK(engine_app_mode_valid("workflow"));
	CHECK(!engine_app_mode_valid("channel"));
	CHECK(!engine_app_mode_valid("Workflow"));
	CHECK(!engine_app_mode_valid(""));

	/* defaults and given fields */
	rec = create("{\"name\":\"  padded\",\"mode\":\"chat\"}");
	CHECK(rec != NULL);
	if (rec != NULL) {
		CHECK_STR(S(rec, "name"), "  padded");
		CHECK_STR(S(rec, "description"), "");
		CHECK_STR(S(rec, "icon_type"), "emoji");
		CHECK(json_is_false(json_object_get(rec,
		    "use_icon_as_answer_icon")));
		CHECK(json_is_true(json_object_get(rec, "enable_site")));
		CHECK(I(rec, "created_at") > 1600000000);
		CHECK_INT(I(rec, "created_at"), I(rec, "updated_at"));
		json_decref(rec);
	}
	rec = create("{\"name\":\"Fancy 名前 🚀\",\"mode\":\"workflow\","
	    "\"description\":\"d\",\"icon_type\":\"image\",\"icon\":\"x.png\","
	    "\"icon_background\":null,\"unknown_field\":1}");
	CHECK(rec != NULL);
	if (rec != NULL) {
		CHECK_STR(S(rec, "name"), "Fancy 名前 🚀");
		CHECK_STR(S(rec, "icon_type"), "image");
		CHECK_STR(S(rec, "icon"), "x.png");
		CHECK(json_is_null(json_object_get(rec, "icon_background")));
		CHECK(json_object_get(rec, "unknown_field") == NULL);
		json_decref(rec);
	}
	/* ids are unique */
	{
		json_t	*a = create("{\"name\":\"u\",\"mode\":\"chat\"}");
		json_t	*b = create("{\"name\":\"u\",\"mode\":\"chat\"}");

		CHECK(a && b && strcmp(S(a, "id"), S(b, "id")) != 0);
		json_decref(a);
		json_decref(b);
	}
	/* get of a missing or malformed id */
	CHECK_INT(engine_app_get(eng, "0190aaaa-0000-7000-8000-000000000000",
	    &got), ENGINE_ENOTFOUND);
	CHECK_INT(engine_app_get(eng, "nope", &got), ENGINE_ENOTFOUND);
	CHECK_INT(engine_app_get(eng, "", &got), ENGINE_ENOTFOUND);
	CHECK_INT(engine_app_get(eng,
	    "0190AAAA-0000-7000-8000-000000000000", &got), ENGINE_ENOTFOUND);
}

static void
test_validation(void)
{
	char	*s, body[4096];
	int	 before = app_count();
	json_t	*rec;

	CREATE_FAILS("{\"mode\":\"workflow\"}", "name is required");
	CREATE_FAILS("{\"name\":null,\"mode\":\"workflow\"}", "name must be");
	CREATE_FAILS("{\"name\":\"\",\"mode\":\"workflow\"}",
	    "name must not be empty");
	CREATE_FAILS("{\"name\":\"   \",\"mode\":\"workflow\"}",
	    "name must not be empty");
	CREATE_FAILS("{\"name\":7,\"mode\":\"workflow\"}",
	    "name must be a string");
	CREATE_FAILS("{\"name\":\"a\"}", "mode is required");
	CREATE_FAILS("{\"name\":\"a\",\"mode\":\"flow\"}", "mode must be");
	CREATE_FAILS("{\"name\":\"a\",\"mode\":\"channel\"}", "mode must be");
	CREATE_FAILS("{\"name\":\"a\",\"mode\":3}", "mode");
	CREATE_FAILS("{\"name\":\"a\",\"mode\":\"chat\",\"icon_type\":\"gif\"}",
	    "icon_type must be emoji, image or link");
	CREATE_FAILS("{\"name\":\"a\",\"mode\":\"chat\",\"icon_type\":5}",
	    "icon_type must be a string");
	CREATE_FAILS("{\"name\":\"a\",\"mode\":\"chat\",\"description\":[]}",
	    "description must be a string");
	CREATE_FAILS("{\"name\":\"a\",\"mode\":\"chat\","
	    "\"use_icon_as_answer_icon\":1}", "use_icon_as_answer_icon");
	CREATE_FAILS("{\"name\":\"a\",\"mode\":\"chat\","
	    "\"max_active_requests\":-1}", "max_active_requests");
	CREATE_FAILS("{\"name\":\"a\",\"mode\":\"chat\","
	    "\"max_active_requests\":\"5\"}", "max_active_requests");
	CREATE_FAILS("[1,2]", "");
	CREATE_FAILS("\"str\"", "");
	/* name: 255 characters pass, 256 do not; counted in characters */
	s = repeat("é", 255);
	snprintf(body, sizeof(body), "{\"name\":\"%s\",\"mode\":\"chat\"}", s);
	rec = create(body);
	CHECK(rec != NULL);
	json_decref(rec);
	free(s);
	s = repeat("a", 256);
	snprintf(body, sizeof(body), "{\"name\":\"%s\",\"mode\":\"chat\"}", s);
	CREATE_FAILS(body, "name must be at most 255 characters");
	free(s);
	/* description: 400 characters pass, 401 do not */
	s = repeat("文", 400);
	snprintf(body, sizeof(body), "{\"name\":\"d\",\"mode\":\"chat\","
	    "\"description\":\"%s\"}", s);
	rec = create(body);
	CHECK(rec != NULL);
	json_decref(rec);
	free(s);
	s = repeat("x", 401);
	snprintf(body, sizeof(body), "{\"name\":\"d\",\"mode\":\"chat\","
	    "\"description\":\"%s\"}", s);
	CREATE_FAILS(body, "description must be at most 400 characters");
	free(s);
	/* only the two good ones were stored */
	CHECK_INT(app_count(), before + 2);
}

/* ====== List ====== */

/* Lists with q; returns the names of data joined by ',' (static). */
static const char *
list_names(const char *mode, const char *name, int page, int limit,
    long long *total, int *has_more)
{
	static char		 buf[4096];
	struct app_query	 q = { page, limit, mode, name };
	json_t			*res = NULL, *v;
	size_t			 i, n = 0;

	buf[0] = '\0';
	if (engine_app_list(eng, &q, &res) != 0)
		return "(error)";
	*total = I(res, "total");
	*has_more = json_is_true(json_object_get(res, "has_more"));
	if (I(res, "page") != page || I(res, "limit") != limit)
		snprintf(buf, sizeof(buf), "(page/limit not echoed)");
	json_array_foreach(json_object_get(res, "data"), i, v)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s",
		    n ? "," : "", S(v, "name"));
	json_decref(res);
	return buf;
}

static void
test_list(void)
{
	static const char *const apps[][2] = {
		{ "alpha", "workflow" }, { "Beta", "chat" },
		{ "gamma", "agent-chat" }, { "ALPHABET", "completion" },
		{ "delta", "advanced-chat" }, { "alphabet soup", "workflow" },
		{ "épsilon", "chat" },
	};
	char		 body[256];
	long long	 total;
	int		 more, i;
	json_t		*rec;

	/* a fresh directory for exact counts: close and reopen elsewhere */
	engine_close(eng);
	eng = NULL;
	snprintf(conf.data_dir, sizeof(conf.data_dir), "%s/list", tmpdir);
	{
		char err[ENGINE_ERRMAX] = "";

		CHECK_INT(engine_open(&conf, err, &eng), 0);
	}
	CHECK_STR(list_names(NULL, NULL, 1, 20, &total, &more), "");
	CHECK_INT(total, 0);
	CHECK(!more);
	for (i = 0; i < 7; i++) {
		snprintf(body, sizeof(body), "{\"name\":\"%s\",\"mode\":\"%s\"}",
		    apps[i][0], apps[i][1]);
		rec = create(body);
		CHECK(rec != NULL);
		json_decref(rec);
	}
	/* newest first */
	CHECK_STR(list_names(NULL, NULL, 1, 20, &total, &more),
	    "épsilon,alphabet soup,delta,ALPHABET,gamma,Beta,alpha");
	CHECK_INT(total, 7);
	CHECK(!more);
	CHECK_STR(list_names("all", NULL, 1, 20, &total, &more),
	    "épsilon,alphabet soup,delta,ALPHABET,gamma,Beta,alpha");
	CHECK_STR(list_names("", "", 1, 20, &total, &more),
	    "épsilon,alphabet soup,delta,ALPHABET,gamma,Beta,alpha");
	/* paging */
	CHECK_STR(list_names(NULL, NULL, 1, 3, &total, &more),
	    "épsilon,alphabet soup,delta");
	CHECK_INT(total, 7);
	CHECK(more);
	CHECK_STR(list_names(NULL, NULL, 2, 3, &total, &more),
	    "ALPHABET,gamma,Beta");
	CHECK(more);
	CHECK_STR(list_names(NULL, NULL, 3, 3, &total, &more), "alpha");
	CHECK(!more);
	CHECK_INT(total, 7);
	CHECK_STR(list_names(NULL, NULL, 4, 3, &total, &more), "");
	CHECK(!more);
	CHECK_INT(total, 7);
	CHECK_STR(list_names(NULL, NULL, 1, 7, &total, &more),
	    "épsilon,alphabet soup,delta,ALPHABET,gamma,Beta,alpha");
	CHECK(!more);
	CHECK_STR(list_names(NULL, NULL, 2, 6, &total, &more), "alpha");
	CHECK_STR(list_names(NULL, NULL, 99999, 100, &total, &more), "");
	CHECK_INT(total, 7);
	/* mode filters */
	CHECK_STR(list_names("workflow", NULL, 1, 20, &total, &more),
	    "alphabet soup,alpha");
	CHECK_INT(total, 2);
	CHECK_STR(list_names("chat", NULL, 1, 20, &total, &more),
	    "épsilon,Beta");
	CHECK_STR(list_names("advanced-chat", NULL, 1, 20, &total, &more),
	    "delta");
	CHECK_STR(list_names("completion", NULL, 1, 20, &total, &more),
	    "ALPHABET");
	CHECK_STR(list_names("agent-chat", NULL, 1, 20, &total, &more),
	    "gamma");
	CHECK_STR(list_names("channel", NULL, 1, 20, &total, &more),
	    "épsilon,gamma,Beta");
	CHECK_INT(total, 3);
	/* name: substring, case-insensitive */
	CHECK_STR(list_names(NULL, "alpha", 1, 20, &total, &more),
	    "alphabet soup,ALPHABET,alpha");
	CHECK_INT(total, 3);
	CHECK_STR(list_names(NULL, "PHAB", 1, 20, &total, &more),
	    "alphabet soup,ALPHABET");
	CHECK_STR(list_names(NULL, "bet", 1, 20, &total, &more),
	    "alphabet soup,ALPHABET,Beta");
	CHECK_STR(list_names(NULL, "beta", 1, 20, &total, &more), "Beta");
	CHECK_STR(list_names(NULL, "psil", 1, 20, &total, &more), "épsilon");
	CHECK_STR(list_names(NULL, "é", 1, 20, &total, &more), "épsilon");
	CHECK_STR(list_names(NULL, "zzz", 1, 20, &total, &more), "");
	CHECK_INT(total, 0);
	CHECK_STR(list_names(NULL, " soup", 1, 20, &total, &more),
	    "alphabet soup");
	/* both filters, with paging over the filtered set */
	CHECK_STR(list_names("workflow", "ALPHA", 1, 1, &total, &more),
	    "alphabet soup");
	CHECK_INT(total, 2);
	CHECK(more);
	CHECK_STR(list_names("workflow", "ALPHA", 2, 1, &total, &more),
	    "alpha");
	CHECK(!more);
	CHECK_STR(list_names("completion", "soup", 1, 20, &total, &more), "");
	/* many created in a burst keep their order */
	{
		char	 want[4096] = "", got[4096];
		size_t	 n = 0;

		for (i = 0; i < 30; i++) {
			snprintf(body, sizeof(body), "{\"name\":\"burst%02d\","
			    "\"mode\":\"chat\"}", i);
			rec = create(body);
			json_decref(rec);
		}
		for (i = 29; i >= 0; i--)
			n += (size_t)snprintf(want + n, sizeof(want) - n,
			    "%sburst%02d", n ? "," : "", i);
		snprintf(got, sizeof(got), "%s", list_names(NULL, "burst", 1,
		    100, &total, &more));
		CHECK_STR(got, want);
	}
}

/* ====== Update ====== */

static void
test_update(void)
{
	json_t		*rec, *in, *out = NULL, *got = NULL;
	char		 err[ENGINE_ERRMAX], id[40];
	int		 rc;

	rec = create("{\"name\":\"orig\",\"mode\":\"workflow\","
	    "\"description\":\"first\"}");
	if (!CHECK(rec != NULL))
		return;
	snprintf(id, sizeof(id), "%s", S(rec, "id"));
	json_decref(rec);

	/* plain update: revision 1 -> 2, fields change, others stay */
	in = J("{\"name\":\"renamed\",\"icon\":\"🔥\","
	    "\"use_icon_as_answer_icon\":true,\"max_active_requests\":5}");
	err[0] = '\0';
	CHECK_INT(engine_app_update(eng, id, in, -1, err, &out), 0);
	json_decref(in);
	if (out != NULL) {
		CHECK_STR(S(out, "name"), "renamed");
		CHECK_STR(S(out, "description"), "first");
		CHECK_STR(S(out, "icon"), "🔥");
		CHECK_STR(S(out, "mode"), "workflow");
		CHECK_INT(I(out, "revision"), 2);
		CHECK_INT(I(out, "max_active_requests"), 5);
		CHECK(json_is_true(json_object_get(out,
		    "use_icon_as_answer_icon")));
		CHECK_INT(engine_app_get(eng, id, &got), 0);
		CHECK(got != NULL && json_equal(got, out));
		json_decref(got);
		got = NULL;
		json_decref(out);
		out = NULL;
	}
	/* If-Match: the right revision works, a stale one changes nothing */
	in = J("{\"name\":\"third\"}");
	CHECK_INT(engine_app_update(eng, id, in, 2, err, &out), 0);
	CHECK_INT(I(out, "revision"), 3);
	json_decref(out);
	out = NULL;
	json_decref(in);
	in = J("{\"name\":\"stale write\"}");
	rc = engine_app_update(eng, id, in, 2, err, &out);
	CHECK_INT(rc, ENGINE_ECONFLICT);
	CHECK(out == NULL);
	rc = engine_app_update(eng, id, in, 99, err, &out);
	CHECK_INT(rc, ENGINE_ECONFLICT);
	json_decref(in);
	CHECK_INT(engine_app_get(eng, id, &got), 0);
	CHECK_STR(S(got, "name"), "third");
	CHECK_INT(I(got, "revision"), 3);
	json_decref(got);
	got = NULL;
	/* validation on update: name required, limits apply, nothing changes */
	in = J("{\"description\":\"no name\"}");
	err[0] = '\0';
	CHECK_INT(engine_app_update(eng, id, in, -1, err, &out),
	    ENGINE_EINVAL);
	CHECK(strstr(err, "name is required") != NULL);
	json_decref(in);
	in = J("{\"name\":\"x\",\"icon_type\":\"svg\"}");
	CHECK_INT(engine_app_update(eng, id, in, -1, err, &out),
	    ENGINE_EINVAL);
	CHECK(strstr(err, "icon_type") != NULL);
	json_decref(in);
	in = J("{\"name\":\"x\",\"max_active_requests\":1000001}");
	CHECK_INT(engine_app_update(eng, id, in, -1, err, &out),
	    ENGINE_EINVAL);
	json_decref(in);
	/* the mode cannot be changed by an update */
	in = J("{\"name\":\"x\",\"mode\":\"chat\"}");
	CHECK_INT(engine_app_update(eng, id, in, -1, err, &out), 0);
	CHECK_STR(S(out, "mode"), "workflow");
	json_decref(out);
	out = NULL;
	json_decref(in);
	CHECK_INT(engine_app_get(eng, id, &got), 0);
	CHECK_INT(I(got, "revision"), 4);
	CHECK_STR(S(got, "description"), "first");
	json_decref(got);
	got = NULL;
	/* description null clears it */
	in = J("{\"name\":\"x\",\"description\":null}");
	CHECK_INT(engine_app_update(eng, id, in, 4, err, &out), 0);
	CHECK_STR(S(out, "description"), "");
	json_decref(out);
	out = NULL;
	json_decref(in);
	/* missing app */
	in = J("{\"name\":\"x\"}");
	CHECK_INT(engine_app_update(eng,
	    "0190aaaa-0000-7000-8000-000000000000", in, -1, err, &out),
	    ENGINE_ENOTFOUND);
	CHECK_INT(engine_app_update(eng, "../etc", in, -1, err, &out),
	    ENGINE_ENOTFOUND);
	json_decref(in);
}

/* ====== Delete ====== */

static void
test_delete(void)
{
	json_t	*rec, *got = NULL;
	char	 id[40];
	int	 before;

	rec = create("{\"name\":\"doomed\",\"mode\":\"chat\"}");
	if (!CHECK(rec != NULL))
		return;
	snprintf(id, sizeof(id), "%s", S(rec, "id"));
	json_decref(rec);
	before = app_count();
	CHECK_INT(engine_app_delete(eng, id), 0);
	CHECK_INT(engine_app_get(eng, id, &got), ENGINE_ENOTFOUND);
	CHECK_INT(app_count(), before - 1);
	CHECK_INT(engine_app_delete(eng, id), ENGINE_ENOTFOUND);
	CHECK_INT(engine_app_delete(eng, "x"), ENGINE_ENOTFOUND);
}

/* ====== Copy ====== */

static int
put_rec_fn(struct store_txn *t, void *arg)
{
	return app_store_put(t, arg, 0);
}

static void
test_copy(void)
{
	json_t	*src, *in, *cp = NULL, *got = NULL, *upd = NULL;
	char	 err[ENGINE_ERRMAX] = "", id[40];

	src = create("{\"name\":\"source\",\"mode\":\"advanced-chat\","
	    "\"description\":\"src desc\",\"icon\":\"S\","
	    "\"icon_background\":\"#000000\"}");
	if (!CHECK(src != NULL))
		return;
	snprintf(id, sizeof(id), "%s", S(src, "id"));
	/* give it a revision of 2 first, so the copy must start over at 1 */
	in = J("{\"name\":\"source\",\"description\":\"src desc\","
	    "\"use_icon_as_answer_icon\":true}");
	CHECK_INT(engine_app_update(eng, id, in, -1, err, &upd), 0);
	json_decref(in);
	json_decref(src);
	json_decref(upd);
	CHECK_INT(engine_app_get_full(eng, id, &src), 0);
	/* and a draft of its own, written straight to storage, so that the
	 * copy's draft cannot be a fresh default */
	json_object_set_new(draft_graph(src), "nodes", J("[{\"id\":\"start\","
	    "\"data\":{\"type\":\"start\",\"title\":\"Start\"}}]"));
	CHECK_INT(store_write(engine_store(eng), put_rec_fn, src), 0);

	CHECK_INT(engine_app_copy(eng, id, NULL, err, &cp), 0);
	if (cp != NULL) {
		json_t *full = NULL;

		/* the record comes back without its draft, as from get */
		CHECK(json_object_get(cp, "dsl") == NULL);
		CHECK_INT(engine_app_get_full(eng, S(cp, "id"), &full), 0);
		json_object_set(cp, "dsl", json_object_get(full, "dsl"));
		json_decref(full);
		CHECK(strcmp(S(cp, "id"), id) != 0);
		CHECK(engine_uuid_check(S(cp, "id")) == 0);
		CHECK_STR(S(cp, "mode"), "advanced-chat");
		CHECK_STR(S(cp, "name"), "source");
		CHECK_STR(S(cp, "description"), "src desc");
		CHECK_STR(S(cp, "icon"), "S");
		CHECK_STR(S(cp, "icon_background"), "#000000");
		CHECK(json_is_true(json_object_get(cp,
		    "use_icon_as_answer_icon")));
		CHECK_INT(I(cp, "revision"), 1);
		/* the draft is kept, under a new workflow id */
		CHECK(draft_graph(cp) != NULL &&
		    json_equal(draft_graph(cp), draft_graph(src)));
		CHECK_STR(S(json_array_get(json_object_get(draft_graph(cp),
		    "nodes"), 0), "id"), "start");
		CHECK(strcmp(S(json_object_get(cp, "workflow"), "id"),
		    S(json_object_get(src, "workflow"), "id")) != 0);
		json_object_del(cp, "dsl");
		CHECK_INT(engine_app_get(eng, S(cp, "id"), &got), 0);
		CHECK(got != NULL && json_equal(got, cp));
		json_decref(got);
		got = NULL;
		json_decref(cp);
		cp = NULL;
	}
	/* overrides; name null keeps the source's */
	in = J("{\"name\":\"copy two\",\"description\":\"other\","
	    "\"icon_type\":\"link\",\"mode\":\"chat\"}");
	CHECK_INT(engine_app_copy(eng, id, in, err, &cp), 0);
	json_decref(in);
	if (cp != NULL) {
		CHECK_STR(S(cp, "name"), "copy two");
		CHECK_STR(S(cp, "description"), "other");
		CHECK_STR(S(cp, "icon_type"), "link");
		CHECK_STR(S(cp, "mode"), "advanced-chat");
		json_decref(cp);
		cp = NULL;
	}
	in = J("{\"name\":null}");
	CHECK_INT(engine_app_copy(eng, id, in, err, &cp), 0);
	json_decref(in);
	CHECK_STR(S(cp, "name"), "source");
	json_decref(cp);
	cp = NULL;
	/* the source is unchanged */
	CHECK_INT(engine_app_get_full(eng, id, &got), 0);
	CHECK(got != NULL && json_equal(got, src));
	json_decref(got);
	got = NULL;
	/* bad overrides and missing sources */
	in = J("{\"name\":\"\"}");
	CHECK_INT(engine_app_copy(eng, id, in, err, &cp), ENGINE_EINVAL);
	CHECK(strstr(err, "name must not be empty") != NULL);
	json_decref(in);
	in = J("{\"description\":7}");
	CHECK_INT(engine_app_copy(eng, id, in, err, &cp), ENGINE_EINVAL);
	json_decref(in);
	in = J("[]");
	CHECK_INT(engine_app_copy(eng, id, in, err, &cp), ENGINE_EINVAL);
	json_decref(in);
	CHECK_INT(engine_app_copy(eng,
	    "0190aaaa-0000-7000-8000-000000000000", NULL, err, &cp),
	    ENGINE_ENOTFOUND);
	/* a chat app's copy keeps its model config */
	json_decref(src);
	src = create("{\"name\":\"c\",\"mode\":\"agent-chat\"}");
	if (src != NULL) {
		CHECK_INT(engine_app_copy(eng, S(src, "id"), NULL, err, &cp),
		    0);
		CHECK_STR(S(cp, "mode"), "agent-chat");
		CHECK(draft_mc(cp) != NULL &&
		    json_equal(draft_mc(cp), draft_mc(src)));
		CHECK(json_is_null(json_object_get(cp, "workflow")));
		json_decref(cp);
	}
	json_decref(src);
}

int
main(void)
{
	log_init(CONF_LOG_ERROR, NULL);
	conf_defaults(&conf);
	conf.map_size = 1 << 20;
	if (tmp_engine_open("t_engine_app", &conf, tmpdir, sizeof(tmpdir),
	    &eng) != 0)
		return tap_done();
	test_create();
	test_validation();
	test_update();
	test_delete();
	test_copy();
	test_list();
	tmp_engine_close(eng, tmpdir);
	return tap_done();
}
