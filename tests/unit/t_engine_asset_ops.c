/*
 * t_engine_asset_ops.c — the app file system's Dify-client operations and
 * the three-step bundle import, on a real engine: reorder (numbering, a
 * sibling of another folder, itself), names made unique as Dify makes
 * them, batch trees made whole or not at all (every malformed entry
 * refused, limits), and prepare / upload / confirm with steps out of
 * order, limits, a pending (newer) DSL, expiry and the pruner, and two
 * confirms at once making one app.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/dsl/dsl.h"
#include "tests/unit/tap.h"
#include "tests/unit/tmp_engine.h"

static struct conf	 conf;
static struct engine	*eng;

static char *
app_new(const char *mode)
{
	char	 err[ENGINE_ERRMAX];
	json_t	*in, *out = NULL;
	char	*id = NULL;

	in = json_pack("{s:s,s:s}", "name", "ops", "mode", mode);
	if (CHECK(engine_app_create(eng, in, err, &out) == 0))
		id = strdup(json_string_value(json_object_get(out, "id")));
	json_decref(in);
	json_decref(out);
	return id;
}

/* Nodes of app's tree, in all folders. */
static size_t
tree_count(json_t *kids)
{
	json_t	*k;
	size_t	 i, n = 0;

	json_array_foreach(kids, i, k)
		n += 1 + tree_count(json_object_get(k, "children"));
	return n;
}

static size_t
nodes(const char *app)
{
	char	 err[ENGINE_ERRMAX];
	json_t	*t = NULL;
	size_t	 n = 0;

	if (engine_asset_tree(eng, app, err, &t) == 0)
		n = tree_count(json_object_get(t, "children"));
	json_decref(t);
	return n;
}

/* The names of parent's children (NULL: root) in listed order. */
static void
names(const char *app, const char *parent, char *buf, size_t bufsz)
{
	char	 err[ENGINE_ERRMAX];
	json_t	*t = NULL, *kids, *k;
	size_t	 i, len = 0;

	buf[0] = '\0';
	if (engine_asset_tree(eng, app, err, &t) != 0)
		return;
	kids = json_object_get(t, "children");
	if (parent != NULL)
		json_array_foreach(json_object_get(t, "children"), i, k)
			if (strcmp(json_string_value(json_object_get(k, "id")),
			    parent) == 0)
				kids = json_object_get(k, "children");
	json_array_foreach(kids, i, k)
		len += (size_t)snprintf(buf + len, bufsz - len, "%s%s",
		    i ? "," : "", json_string_value(json_object_get(k,
		    "name")));
	json_decref(t);
}

static const char *
reserve(const char *app, const char *parent, const char *name, char *buf)
{
	char	 err[ENGINE_ERRMAX];
	json_t	*n = NULL;

	buf[0] = '\0';
	if (engine_asset_reserve(eng, app, parent, name, 3, err, &n) == 0)
		snprintf(buf, 300, "%s", json_string_value(json_object_get(n,
		    "name")));
	json_decref(n);
	return buf;
}

static void
test_unique_names(const char *app)
{
	char	 b[300], err[ENGINE_ERRMAX];
	json_t	*n = NULL;

	CHECK_STR(reserve(app, NULL, "a.txt", b), "a.txt");
	CHECK_STR(reserve(app, NULL, "a.txt", b), "a 1.txt");
	CHECK_STR(reserve(app, NULL, "a.txt", b), "a 2.txt");
	CHECK_STR(reserve(app, NULL, ".profile", b), ".profile");
	CHECK_STR(reserve(app, NULL, ".profile", b), ".profile 1");
	CHECK_STR(reserve(app, NULL, "x.tar.gz", b), "x.tar.gz");
	CHECK_STR(reserve(app, NULL, "x.tar.gz", b), "x.tar 1.gz");
	CHECK_STR(reserve(app, NULL, "plain", b), "plain");
	CHECK_STR(reserve(app, NULL, "plain", b), "plain 1");
	CHECK(engine_asset_reserve(eng, app, NULL, "a/b", 1, err, &n) ==
	    ENGINE_EINVAL);
	CHECK(engine_asset_reserve(eng, app, NULL, "big", conf.asset_max_file +
	    1, err, &n) == ENGINE_ELIMIT);
	CHECK(strstr(err, "assets.max_file_size") != NULL);
	CHECK(engine_asset_reserve(eng, app, NULL, "neg", -1, err, &n) ==
	    ENGINE_EINVAL);
	/* A reserved file is empty until its upload. */
	CHECK(engine_asset_reserve(eng, app, NULL, "empty", 100, err, &n) ==
	    0);
	CHECK_INT(json_integer_value(json_object_get(n, "size")), 0);
	json_decref(n);
	/* A numbered name longer than assets.max_name is refused. */
	conf.asset_max_name = 8;
	CHECK_STR(reserve(app, NULL, "12345678", b), "12345678");
	CHECK_STR(reserve(app, NULL, "12345678", b), "");
	CHECK(engine_asset_reserve(eng, app, NULL, "12345678", 1, err, &n) ==
	    ENGINE_EINVAL);
	CHECK(strstr(err, "assets.max_name") != NULL);
	conf.asset_max_name = 255;
}

static const char *
id_of(json_t *n)
{
	return json_string_value(json_object_get(n, "id"));
}

static void
test_reorder(const char *app)
{
	char	 err[ENGINE_ERRMAX], b[300];
	json_t	*f = NULL, *x = NULL, *y = NULL, *z = NULL, *o = NULL;
	json_t	*v = NULL;

	CHECK(engine_asset_mkdir(eng, app, NULL, "f", err, &f) == 0);
	CHECK(engine_asset_create(eng, app, id_of(f), "x", "x", 1, 0, err,
	    &x) == 0);
	CHECK(engine_asset_create(eng, app, id_of(f), "y", "y", 1, 0, err,
	    &y) == 0);
	CHECK(engine_asset_create(eng, app, id_of(f), "z", "z", 1, 0, err,
	    &z) == 0);
	CHECK(engine_asset_create(eng, app, NULL, "other", "o", 1, 0, err,
	    &o) == 0);
	names(app, id_of(f), b, sizeof(b));
	CHECK_STR(b, "x,y,z");
	CHECK(engine_asset_reorder(eng, app, id_of(z), NULL, err, &v) == 0);
	CHECK_INT(json_integer_value(json_object_get(v, "order")), 0);
	json_decref(v);
	names(app, id_of(f), b, sizeof(b));
	CHECK_STR(b, "z,x,y");
	CHECK(engine_asset_reorder(eng, app, id_of(x), id_of(y), err, &v) ==
	    0);
	CHECK_INT(json_integer_value(json_object_get(v, "order")), 2);
	json_decref(v);
	names(app, id_of(f), b, sizeof(b));
	CHECK_STR(b, "z,y,x");
	CHECK(engine_asset_reorder(eng, app, id_of(z), id_of(x), err, &v) ==
	    0);
	json_decref(v);
	names(app, id_of(f), b, sizeof(b));
	CHECK_STR(b, "y,x,z");
	/* After a node of another folder, after itself, unknown nodes. */
	CHECK(engine_asset_reorder(eng, app, id_of(x), id_of(o), err, &v) ==
	    ENGINE_ENOTFOUND);
	CHECK(strstr(err, "same folder") != NULL);
	CHECK(engine_asset_reorder(eng, app, id_of(x), id_of(x), err, &v) ==
	    ENGINE_EINVAL);
	CHECK(engine_asset_reorder(eng, app, "00000000-0000-7000-8000-"
	    "000000000000", NULL, err, &v) == ENGINE_ENOTFOUND);
	CHECK(engine_asset_reorder(eng, app, id_of(x), "00000000-0000-7000-"
	    "8000-000000000000", err, &v) == ENGINE_ENOTFOUND);
	names(app, id_of(f), b, sizeof(b));
	CHECK_STR(b, "y,x,z");
	json_decref(f);
	json_decref(x);
	json_decref(y);
	json_decref(z);
	json_decref(o);
}

/* engine_asset_batch of the JSON text in; the result code. */
static int
batch(const char *app, const char *parent, const char *in, char *err,
    json_t **out)
{
	json_t	*j = json_loads(in, 0, NULL);
	int	 rc;

	*out = NULL;
	if (!CHECK(j != NULL))
		return -1;
	rc = engine_asset_batch(eng, app, parent, j, err, out);
	json_decref(j);
	return rc;
}

/* n folders named name, each inside the one before, as a batch. */
static void
nest(char *buf, size_t len, const char *name, int n)
{
	size_t	o = 0;
	int	k;

	for (k = 0; k < n; k++)
		o += (size_t)snprintf(buf + o, len - o, "[{\"name\":\"%s\","
		    "\"node_type\":\"folder\",\"children\":", name);
	o += (size_t)snprintf(buf + o, len - o, "[]");
	for (k = 0; k < n; k++)
		o += (size_t)snprintf(buf + o, len - o, "}]");
}

static void
test_batch(const char *app)
{
	static const char *const refused[] = {
		"{}", "[1]", "[{\"node_type\":\"file\"}]",
		"[{\"name\":\"a\"}]",
		"[{\"name\":\"a\",\"node_type\":\"link\"}]",
		"[{\"name\":\"a\",\"node_type\":\"file\",\"size\":-1}]",
		"[{\"name\":\"a\",\"node_type\":\"file\",\"size\":\"1\"}]",
		"[{\"name\":\"a\",\"node_type\":\"file\",\"children\":"
		    "[{\"name\":\"b\",\"node_type\":\"file\"}]}]",
		"[{\"name\":\"a\",\"node_type\":\"folder\",\"children\":{}}]",
		"[{\"name\":\"ok\",\"node_type\":\"file\"},"
		    "{\"name\":\"..\",\"node_type\":\"file\"}]",
		"[{\"name\":\"d\",\"node_type\":\"folder\",\"children\":"
		    "[{\"name\":\"a/b\",\"node_type\":\"file\"}]}]",
		"[{\"name\":\"\",\"node_type\":\"folder\"}]",
		"[]",
		NULL,
	};
	char		 err[ENGINE_ERRMAX], b[300], *deep;
	json_t		*out = NULL, *e;
	size_t		 n0, i, len;
	const char	*in;

	n0 = nodes(app);
	CHECK(batch(app, NULL, "[{\"name\":\"docs\",\"node_type\":\"folder\","
	    "\"children\":[{\"name\":\"a.md\",\"node_type\":\"file\",\"size\":"
	    "4},{\"name\":\"a.md\",\"node_type\":\"file\"},{\"name\":\"sub\","
	    "\"node_type\":\"folder\"}]},{\"name\":\"r.txt\",\"node_type\":"
	    "\"file\",\"size\":2}]", err, &out) == 0);
	CHECK_INT(nodes(app), n0 + 5);
	CHECK_INT(json_array_size(out), 2);
	e = json_array_get(json_object_get(json_array_get(out, 0),
	    "children"), 1);
	CHECK_STR(json_string_value(json_object_get(e, "name")), "a 1.md");
	CHECK_STR(json_string_value(json_object_get(e, "path")),
	    "/docs/a 1.md");
	e = json_array_get(json_object_get(json_array_get(out, 0),
	    "children"), 0);
	CHECK_INT(json_integer_value(json_object_get(e, "size")), 4);
	CHECK(engine_uuid_check(id_of(e)) == 0);
	json_decref(out);
	/* The same tree again: numbered at the top, as Dify does. */
	CHECK(batch(app, NULL, "[{\"name\":\"docs\",\"node_type\":"
	    "\"folder\"}]", err, &out) == 0);
	CHECK_STR(json_string_value(json_object_get(json_array_get(out, 0),
	    "name")), "docs 1");
	json_decref(out);
	n0 = nodes(app);
	for (i = 0; refused[i] != NULL; i++) {
		in = refused[i];
		if (!CHECK(batch(app, NULL, in, err, &out) == ENGINE_EINVAL))
			printf("#   %s: %s\n", in, err);
		json_decref(out);
	}
	CHECK(batch(app, NULL, "[{\"name\":\"d\",\"node_type\":\"folder\","
	    "\"children\":[{\"name\":\"a/b\",\"node_type\":\"file\"}]}]", err,
	    &out) == ENGINE_EINVAL);
	CHECK(strstr(err, "'d/a/b'") != NULL);
	CHECK_INT(nodes(app), n0);
	/* Limits: entries in one batch, bytes of one file, of the app. */
	conf.asset_batch_max_files = 3;
	CHECK(batch(app, NULL, "[{\"name\":\"d\",\"node_type\":\"folder\","
	    "\"children\":[{\"name\":\"1\",\"node_type\":\"file\"},{\"name\":"
	    "\"2\",\"node_type\":\"file\"},{\"name\":\"3\",\"node_type\":"
	    "\"file\"}]}]", err, &out) == ENGINE_ELIMIT);
	CHECK(strstr(err, "assets.batch_max_files") != NULL);
	conf.asset_batch_max_files = 200;
	snprintf(b, sizeof(b), "[{\"name\":\"big\",\"node_type\":\"file\","
	    "\"size\":%lld}]", (long long)conf.asset_max_file + 1);
	CHECK(batch(app, NULL, b, err, &out) == ENGINE_ELIMIT);
	CHECK(strstr(err, "assets.max_file_size") != NULL);
	conf.asset_max_app_bytes = 100;
	CHECK(batch(app, NULL, "[{\"name\":\"1\",\"node_type\":\"file\","
	    "\"size\":60},{\"name\":\"2\",\"node_type\":\"file\",\"size\":60}]",
	    err, &out) == ENGINE_ELIMIT);
	CHECK(strstr(err, "assets.max_app_size") != NULL);
	conf.asset_max_app_bytes = 200 << 20;
	/* Folders nested deeper than allowed, paths longer than allowed. */
	conf.asset_batch_max_files = 1000;
	len = 300 * 64 + 64;
	if ((deep = calloc(1, len)) != NULL) {
		nest(deep, len, "d", 300);
		if (!CHECK(batch(app, NULL, deep, err, &out) == ENGINE_EINVAL))
			printf("#   %s\n", err);
		if (!CHECK(strstr(err, "nest too deep") != NULL))
			printf("#   %s\n", err);
		nest(deep, len, "0123456789", 100);
		if (!CHECK(batch(app, NULL, deep, err, &out) == ENGINE_EINVAL))
			printf("#   %s\n", err);
		CHECK(strstr(err, "assets.max_path") != NULL);
		free(deep);
	}
	conf.asset_batch_max_files = 200;
	CHECK_INT(nodes(app), n0);
	/* Under a file: refused. */
	CHECK(batch(app, NULL, "[{\"name\":\"f.txt\",\"node_type\":\"file\"}]",
	    err, &out) == 0);
	in = id_of(json_array_get(out, 0));
	CHECK(engine_asset_batch(eng, app, in, json_array_get(out, 0), err,
	    &e) == ENGINE_EINVAL);
	json_decref(out);
}

/* ====== The three-step bundle import ====== */

static char	*zip;
static size_t	 zip_len;

static void
zip_make(const char *version)
{
	struct bundle_file	 f[2];
	char			 dsl[300], err[ENGINE_ERRMAX];

	memset(f, 0, sizeof(f));
	f[0].path = "skills";
	f[0].is_dir = 1;
	f[1].path = "skills/SKILL.md";
	f[1].data = (unsigned char *)"---\nname: s\n---\n";
	f[1].len = 16;
	snprintf(dsl, sizeof(dsl), "app: {mode: workflow, name: Bundled}\n"
	    "kind: app\nversion: %s\nworkflow:\n  graph: {nodes: [], edges: "
	    "[]}\n", version);
	free(zip);
	zip = NULL;
	CHECK(bundle_write("Bundled", dsl, strlen(dsl), NULL, f, 2, err, &zip,
	    &zip_len) == 0);
}

static int64_t
apps(void)
{
	struct app_query	 q = { 1, 100, NULL, NULL };
	json_t			*res = NULL;
	int64_t			 n = -1;

	if (engine_app_list(eng, &q, &res) == 0)
		n = json_integer_value(json_object_get(res, "total"));
	json_decref(res);
	return n;
}

static const char *
status(json_t *imp)
{
	return json_string_value(json_object_get(imp, "status"));
}

struct confirm_arg {
	const char	*id;
	int		 rc;
	json_t		*imp;
};

static void *
confirm_thread(void *arg)
{
	struct confirm_arg	*c = arg;
	struct import_opts	 o;
	char			 err[ENGINE_ERRMAX];

	memset(&o, 0, sizeof(o));
	c->rc = engine_bundle_confirm(eng, c->id, &o, err, &c->imp);
	return NULL;
}

struct expire_arg {
	const char	*id;
};

static int
expire_fn(struct store_txn *t, void *arg)
{
	const char	*id = arg;
	json_t		*rec = NULL;
	int		 rc;

	if ((rc = store_get_json(t, STORE_DB_IMPORTS, id, &rec)) != 0)
		return rc;
	json_object_set_new(rec, "expires_at", json_integer(engine_now() -
	    1));
	rc = store_put_json(t, STORE_DB_IMPORTS, id, rec, 0);
	json_decref(rec);
	return rc;
}

static void
test_three_steps(void)
{
	struct import_opts	 o;
	struct prune_stats	 st;
	struct store_txn	*t;
	struct confirm_arg	 ca[2];
	pthread_t		 th[2];
	char			 id[ENGINE_BUNDLE_ID_LEN + 1], id2[33], id3[33];
	char			 err[ENGINE_ERRMAX], hex[STORE_HASH_HEX];
	json_t			*imp = NULL;
	int64_t			 exp = 0, n0;
	uint64_t		 blob_size = 0;
	int			 i, made;

	memset(&o, 0, sizeof(o));
	zip_make("0.6.0");
	n0 = apps();
	CHECK_INT(engine_bundle_prepare(eng, id, &exp), 0);
	CHECK_INT(strlen(id), 32);
	CHECK(strspn(id, "0123456789abcdef") == 32);
	CHECK(exp == engine_now() + conf.bundle_import_ttl ||
	    exp == engine_now() + conf.bundle_import_ttl - 1);
	/* Out of order: a confirm before the upload keeps the import. */
	CHECK_INT(engine_bundle_confirm(eng, id, &o, err, &imp),
	    ENGINE_EINVAL);
	CHECK(strstr(err, "nothing was uploaded") != NULL);
	conf.bundle_max_size = 100;
	CHECK_INT(engine_bundle_upload(eng, id, zip, zip_len, err),
	    ENGINE_ELIMIT);
	CHECK(strstr(err, "bundle.max_size") != NULL);
	conf.bundle_max_size = 50 << 20;
	CHECK_INT(engine_bundle_upload(eng, id, "junk", 4, err), 0);
	CHECK_INT(engine_bundle_upload(eng, id, zip, zip_len, err), 0);
	/* The replaced upload's blob is gone, the new one referenced once. */
	store_hash("junk", 4, hex);
	CHECK_INT(store_read_begin(engine_store(eng), &t), 0);
	CHECK_INT(store_blob_refs(t, hex), 0);
	store_read_end(t);
	o.name = "From three steps";
	CHECK_INT(engine_bundle_confirm(eng, id, &o, err, &imp), 0);
	CHECK_STR(status(imp), "completed");
	CHECK_INT(apps(), n0 + 1);
	if (imp != NULL) {
		char	 b[300];
		json_t	*rec = NULL;

		CHECK(engine_app_get(eng, json_string_value(json_object_get(
		    imp, "app_id")), &rec) == 0);
		CHECK_STR(json_string_value(json_object_get(rec, "name")),
		    "From three steps");
		json_decref(rec);
		names(json_string_value(json_object_get(imp, "app_id")), NULL,
		    b, sizeof(b));
		CHECK_STR(b, "skills");
	}
	json_decref(imp);
	imp = NULL;
	CHECK_INT(engine_bundle_confirm(eng, id, &o, err, &imp),
	    ENGINE_ENOTFOUND);
	CHECK_INT(engine_bundle_upload(eng, id, zip, zip_len, err),
	    ENGINE_ENOTFOUND);
	CHECK_INT(engine_bundle_confirm(eng, "../../etc", &o, err, &imp),
	    ENGINE_ENOTFOUND);
	CHECK_INT(engine_bundle_upload(eng, "0190f000-0000-7000-8000-"
	    "000000000001", zip, zip_len, err), ENGINE_ENOTFOUND);

	/* A bad bundle ends its import, as in Dify. */
	CHECK_INT(engine_bundle_prepare(eng, id, NULL), 0);
	CHECK_INT(engine_bundle_upload(eng, id, "PK\3\4 not really", 16, err),
	    0);
	CHECK_INT(engine_bundle_confirm(eng, id, &o, err, &imp), 0);
	CHECK_STR(status(imp), "failed");
	json_decref(imp);
	imp = NULL;
	CHECK_INT(engine_bundle_confirm(eng, id, &o, err, &imp),
	    ENGINE_ENOTFOUND);
	CHECK_INT(apps(), n0 + 1);

	/* A newer DSL: the prepared import becomes a pending one. */
	zip_make("99.0.0");
	CHECK_INT(engine_bundle_prepare(eng, id, NULL), 0);
	CHECK_INT(engine_bundle_upload(eng, id, zip, zip_len, err), 0);
	CHECK_INT(engine_bundle_confirm(eng, id, &o, err, &imp), 0);
	CHECK_STR(status(imp), "pending");
	CHECK_INT(engine_bundle_confirm(eng, id, &o, err, &imp),
	    ENGINE_ENOTFOUND);
	if (imp != NULL) {
		json_t *done = NULL;

		CHECK_INT(engine_import_confirm(eng, json_string_value(
		    json_object_get(imp, "id")), err, &done), 0);
		CHECK_STR(status(done), "completed");
		json_decref(done);
	}
	json_decref(imp);
	imp = NULL;
	CHECK_INT(apps(), n0 + 2);
	zip_make("0.6.0");

	/* At most bundle.max_pending wait at once. */
	conf.bundle_max_pending = 2;
	CHECK_INT(engine_bundle_prepare(eng, id2, NULL), 0);
	CHECK_INT(engine_bundle_prepare(eng, id3, NULL), 0);
	CHECK_INT(engine_bundle_prepare(eng, id, NULL), ENGINE_ELIMIT);
	conf.bundle_max_pending = 20;

	/* Past its time: refused, then pruned with its upload's blob. */
	CHECK_INT(engine_bundle_upload(eng, id2, "only here", 9, err), 0);
	CHECK_INT(store_write(engine_store(eng), expire_fn, id2), 0);
	CHECK_INT(engine_bundle_confirm(eng, id2, &o, err, &imp),
	    ENGINE_ENOTFOUND);
	CHECK_INT(engine_bundle_upload(eng, id2, zip, zip_len, err),
	    ENGINE_ENOTFOUND);
	CHECK_INT(engine_prune(eng, PRUNE_WAIT, &st), 0);
	CHECK_INT(st.imports, 1);
	store_hash("only here", 9, hex);
	CHECK_INT(store_read_begin(engine_store(eng), &t), 0);
	CHECK_INT(store_blob_refs(t, hex), 0);
	CHECK(store_blob_size(t, hex, &blob_size) == STORE_ENOTFOUND);
	store_read_end(t);

	/* Two confirms at once: one app. */
	CHECK_INT(engine_bundle_upload(eng, id3, zip, zip_len, err), 0);
	n0 = apps();
	for (i = 0; i < 2; i++) {
		ca[i].id = id3;
		ca[i].imp = NULL;
		pthread_create(&th[i], NULL, confirm_thread, &ca[i]);
	}
	made = 0;
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		if (ca[i].rc == 0 &&
		    strcmp(status(ca[i].imp), "completed") == 0)
			made++;
		else
			CHECK(ca[i].rc == ENGINE_ENOTFOUND || (ca[i].rc == 0 &&
			    strcmp(status(ca[i].imp), "failed") == 0));
		json_decref(ca[i].imp);
	}
	CHECK_INT(made, 1);
	CHECK_INT(apps(), n0 + 1);
}

int
main(void)
{
	char	 err[ENGINE_ERRMAX] = "", dir[256];
	char	*app, *chat;
	json_t	*n = NULL;

	log_init(CONF_LOG_ERROR, NULL);
	conf_defaults(&conf);
	conf.map_size = 4 << 20;
	if (tmp_engine_open("t_engine_asset_ops", &conf, dir, sizeof(dir),
	    &eng) != 0)
		return tap_done();
	app = app_new("workflow");
	chat = app_new("chat");
	if (app != NULL && chat != NULL) {
		test_unique_names(app);
		test_reorder(app);
		test_batch(app);
		CHECK(engine_asset_reserve(eng, chat, NULL, "a", 1, err, &n) ==
		    ENGINE_EINVAL);
		CHECK(strstr(err, "no file system") != NULL);
	}
	test_three_steps();
	free(app);
	free(chat);
	free(zip);
	tmp_engine_close(eng, dir);
	return tap_done();
}
