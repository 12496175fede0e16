/*
 * t_engine_workspace.c — saved sandbox workspaces
 * (engine/records/workspace.c): path cleaning; a draft workspace kept per
 * app and user (names that leave the workspace skipped), listed one level or
 * recursively in path order, read back (a folder as a .tar.gz), refused past
 * sandbox.workspace_list_max; replacing, resetting and deleting the app drop
 * the blob references.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "engine/engine.h"
#include "engine/records/records.h"
#include "tests/unit/tap.h"
#include "tests/unit/tmp_engine.h"

static struct conf	 conf;
static struct engine	*eng;
static char		 tmpdir[256];
static char		 app[37];

/* ====== Paths ====== */

static void
clean_is(const char *in, const char *want, int line)
{
	char	out[64], err[ENGINE_ERRMAX] = "";
	int	rc = workspace_path_clean(in, out, sizeof(out), err);

	if (want == NULL) {
		if (!tap_check(rc == ENGINE_EINVAL && *err != '\0', __FILE__,
		    line, in))
			printf("#   rc %d out '%s'\n", rc, rc ? "" : out);
		return;
	}
	if (!tap_check(rc == 0 && strcmp(out, want) == 0, __FILE__, line, in))
		printf("#   rc %d out '%s' err '%s', want '%s'\n", rc,
		    rc ? "" : out, err, want);
}

static void
test_paths(void)
{
	clean_is("", "", __LINE__);
	clean_is(".", "", __LINE__);
	clean_is("./", "", __LINE__);
	clean_is("a/b", "a/b", __LINE__);
	clean_is("./a//b/./c/", "a/b/c", __LINE__);
	clean_is("..a/b..", "..a/b..", __LINE__);
	clean_is("/etc/passwd", NULL, __LINE__);
	clean_is("..", NULL, __LINE__);
	clean_is("a/../b", NULL, __LINE__);
	clean_is("a/..", NULL, __LINE__);
	/* 64 bytes of room: a longer path is refused, not cut */
	clean_is("a/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	    "bbbbbbbbbbbbb", NULL, __LINE__);
}

/* ====== Draft workspaces ====== */

/*
 * A tar as GNU tar -cf x . makes it ("./" names, folders too), and names
 * that climb out of the workspace.
 */
static char *
make_tar(size_t *len)
{
	static const struct { const char *p, *data; } ents[] = {
		{ "./", NULL }, { "./z.txt", "zz" }, { "./d/", NULL },
		{ "./d/b.png", "\x89PNG" }, { "./d/e/", NULL },
		{ "./d/e/c", "cc" }, { "./a.txt", "hello" },
		/* what a tampered tar could hold: skipped everywhere */
		{ "../evil", "x" }, { "/etc/evil", "x" },
		{ "./d/../../evil", "x" },
	};
	struct archive		*a = archive_write_new();
	struct archive_entry	*ae;
	char			*buf = malloc(1 << 16);
	size_t			 i, used = 0;

	archive_write_set_format_gnutar(a);
	archive_write_open_memory(a, buf, 1 << 16, &used);
	for (i = 0; i < sizeof(ents) / sizeof(ents[0]); i++) {
		ae = archive_entry_new();
		archive_entry_set_pathname(ae, ents[i].p);
		archive_entry_set_mtime(ae, 1700000000, 0);
		if (ents[i].data == NULL) {
			archive_entry_set_filetype(ae, AE_IFDIR);
			archive_entry_set_perm(ae, 0755);
		} else {
			archive_entry_set_filetype(ae, AE_IFREG);
			archive_entry_set_perm(ae, 0644);
			archive_entry_set_size(ae, strlen(ents[i].data));
		}
		archive_write_header(a, ae);
		if (ents[i].data != NULL)
			archive_write_data(a, ents[i].data,
			    strlen(ents[i].data));
		archive_entry_free(ae);
	}
	archive_write_close(a);
	archive_write_free(a);
	*len = used;
	return buf;
}

/* The entries of a .tar.gz: "name" for folders, "name:size" else. */
static const char *
gz_names(const char *gz, size_t len)
{
	static char		 buf[512];
	struct archive		*a = archive_read_new();
	struct archive_entry	*ae;
	size_t			 k = 0;

	buf[0] = '\0';
	archive_read_support_filter_gzip(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_memory(a, gz, len) != ARCHIVE_OK) {
		archive_read_free(a);
		return "unreadable";
	}
	while (archive_read_next_header(a, &ae) == ARCHIVE_OK &&
	    k < sizeof(buf))
		k += (size_t)snprintf(buf + k, sizeof(buf) - k,
		    archive_entry_filetype(ae) == AE_IFDIR ? "%s%s" :
		    "%s%s:%lld", k ? " " : "", archive_entry_pathname(ae),
		    (long long)archive_entry_size(ae));
	archive_read_free(a);
	return buf;
}

struct put {
	const char	*user;
	const char	*tar;
	size_t		 len;
};

static int
put_fn(struct store_txn *t, void *arg)
{
	struct put *p = arg;

	return workspace_draft_put(t, app, p->user, p->tar, p->len);
}

static int
put(const char *user, const char *tar, size_t len)
{
	struct put p = { user, tar, len };

	return store_write(eng->store, put_fn, &p);
}

/* The paths of a listing, space separated. */
static const char *
paths(const struct workspace_ref *w, const char *path, int recursive)
{
	static char	 buf[512];
	char		 err[ENGINE_ERRMAX] = "";
	json_t		*out = NULL, *n;
	size_t		 i, k = 0;
	int		 rc;

	rc = engine_workspace_list(eng, w, path, recursive, err, &out);
	if (rc != 0) {
		snprintf(buf, sizeof(buf), "error %s: %s", engine_strerror(rc),
		    err);
		return buf;
	}
	buf[0] = '\0';
	json_array_foreach(out, i, n)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%s",
		    i ? " " : "", json_string_value(json_object_get(n,
		    "path")));
	json_decref(out);
	return buf;
}

static int64_t
refs_of(const char *tar, size_t len)
{
	struct store_txn	*t = NULL;
	char			 hex[STORE_HASH_HEX];
	int64_t			 n;

	store_hash(tar, len, hex);
	if (store_read_begin(eng->store, &t) != 0)
		return -1;
	n = store_blob_refs(t, hex);
	store_read_end(t);
	return n;
}

static void
test_draft(void)
{
	struct workspace_ref	 alice = { app, "alice", NULL };
	struct workspace_ref	 bob = { app, "bob", NULL };
	struct workspace_ref	 other = { "00000000-0000-4000-8000-"
				    "000000000000", "alice", NULL };
	json_t			*in = NULL, *rec = NULL, *list = NULL, *n;
	char			 err[ENGINE_ERRMAX] = "", *tar, *tar2;
	char			*data = NULL;
	size_t			 len, len2, dlen = 0;
	int			 had = 0, arch = 0;

	in = json_pack("{s:s,s:s}", "name", "ws", "mode", "workflow");
	CHECK_INT(engine_app_create(eng, in, err, &rec), 0);
	json_decref(in);
	snprintf(app, sizeof(app), "%s", json_string_value(json_object_get(
	    rec, "id")));
	json_decref(rec);
	tar = make_tar(&len);
	/* the climbing names are in the tar as written */
	CHECK(memmem(tar, len, "../evil", 7) != NULL &&
	    memmem(tar, len, "/etc/evil", 9) != NULL);
	CHECK_STR(paths(&alice, NULL, 0), "error not found: no saved "
	    "sandbox workspace for this app and user");
	CHECK_INT(put("alice", tar, len), 0);
	CHECK_INT(refs_of(tar, len), 1);

	CHECK_STR(paths(&alice, NULL, 0), "a.txt d z.txt");
	CHECK_STR(paths(&alice, ".", 1), "a.txt d d/b.png d/e d/e/c z.txt");
	CHECK_STR(paths(&alice, "d", 0), "d/b.png d/e");
	CHECK_STR(paths(&alice, "./d/", 1), "d/b.png d/e d/e/c");
	CHECK_STR(paths(&alice, "a.txt", 0), "a.txt");
	CHECK_STR(paths(&alice, "nope", 0), "error not found: no nope in "
	    "the workspace");
	CHECK_STR(paths(&alice, "../x", 0), "error invalid input: path "
	    "must not contain \"..\": ../x");
	CHECK_STR(paths(&bob, NULL, 0), "error not found: no saved sandbox "
	    "workspace for this app and user");
	CHECK_STR(paths(&other, NULL, 0), "error not found: no saved "
	    "sandbox workspace for this app and user");

	/* Dify's SandboxFileNode fields */
	CHECK_INT(engine_workspace_list(eng, &alice, "d", 0, err, &list), 0);
	n = json_array_get(list, 0);
	CHECK(json_integer_value(json_object_get(n, "size")) == 4 &&
	    json_integer_value(json_object_get(n, "mtime")) == 1700000000 &&
	    json_is_false(json_object_get(n, "is_dir")));
	CHECK_STR(json_string_value(json_object_get(n, "extension")), ".png");
	n = json_array_get(list, 1);
	CHECK(json_is_true(json_object_get(n, "is_dir")) &&
	    json_is_null(json_object_get(n, "extension")));
	json_decref(list);

	CHECK_INT(engine_workspace_read(eng, &alice, "d/b.png", err, &data,
	    &dlen), 0);
	CHECK(dlen == 4 && memcmp(data, "\x89PNG", 4) == 0);
	free(data);
	data = NULL;
	CHECK_INT(engine_workspace_read(eng, &alice, "d", err, &data, &dlen),
	    ENGINE_EINVAL);
	CHECK_INT(engine_workspace_read(eng, &alice, "", err, &data, &dlen),
	    ENGINE_EINVAL);
	CHECK_INT(engine_workspace_read(eng, &alice, "/a.txt", err, &data,
	    &dlen), ENGINE_EINVAL);
	CHECK_INT(engine_workspace_read(eng, &bob, "a.txt", err, &data,
	    &dlen), ENGINE_ENOTFOUND);

	/* Dify's download: a file as it is, a folder as a .tar.gz */
	CHECK_INT(engine_workspace_download(eng, &alice, "./a.txt", err,
	    &data, &dlen, &arch), 0);
	CHECK(arch == 0 && dlen == 5 && memcmp(data, "hello", 5) == 0);
	free(data);
	data = NULL;
	CHECK_INT(engine_workspace_download(eng, &alice, "d/", err, &data,
	    &dlen, &arch), 0);
	CHECK(arch == 1);
	CHECK_STR(gz_names(data, dlen), "d/ d/b.png:4 d/e/ d/e/c:2");
	free(data);
	data = NULL;
	CHECK_INT(engine_workspace_download(eng, &alice, ".", err, &data,
	    &dlen, &arch), 0);
	CHECK_STR(gz_names(data, dlen), "./ ./z.txt:2 ./d/ ./d/b.png:4 "
	    "./d/e/ ./d/e/c:2 ./a.txt:5");
	free(data);
	data = NULL;
	CHECK_INT(engine_workspace_download(eng, &alice, "d/x", err, &data,
	    &dlen, &arch), ENGINE_ENOTFOUND);
	CHECK_INT(engine_workspace_download(eng, &alice, "d/../..", err,
	    &data, &dlen, &arch), ENGINE_EINVAL);
	CHECK_INT(engine_workspace_download(eng, &bob, "d", err, &data,
	    &dlen, &arch), ENGINE_ENOTFOUND);

	/* the listing limit names its setting */
	conf.sandbox_workspace_list_max = 2;
	CHECK_STR(paths(&alice, NULL, 1), "error a configured limit was "
	    "reached: the folder holds more than "
	    "sandbox.workspace_list_max (2) entries");
	conf.sandbox_workspace_list_max = 10000;

	/* the same bytes for bob: one blob, a reference per record; a
	 * newer workspace replaces the older one and its reference */
	CHECK_INT(put("bob", tar, len), 0);
	CHECK_INT(refs_of(tar, len), 2);
	tar2 = make_tar(&len2);
	tar2[len2 - 1] = 'x';	/* other bytes, another blob */
	CHECK_INT(put("bob", tar2, len2), 0);
	CHECK_INT(refs_of(tar, len), 1);
	CHECK_INT(refs_of(tar2, len2), 1);
	CHECK_INT(engine_workspace_reset(eng, app, "bob", &had), 0);
	CHECK(had == 1);
	CHECK_INT(refs_of(tar2, len2), 0);
	CHECK_INT(refs_of(tar, len), 1);
	CHECK_INT(engine_workspace_reset(eng, app, "bob", &had), 0);
	CHECK(had == 0);
	CHECK_INT(engine_workspace_reset(eng, other.app_id, "bob", &had),
	    ENGINE_ENOTFOUND);

	/* deleting the app takes its draft workspaces along */
	CHECK_INT(put("bob", tar2, len2), 0);
	CHECK_INT(engine_app_delete(eng, app), 0);
	CHECK_INT(refs_of(tar, len), 0);
	CHECK_INT(refs_of(tar2, len2), 0);
	free(tar);
	free(tar2);
}

int
main(void)
{
	log_init(CONF_LOG_ERROR, NULL);
	test_paths();
	conf_defaults(&conf);
	conf.map_size = 1 << 20;
	if (tmp_engine_open("t_engine_workspace", &conf, tmpdir, sizeof(tmpdir),
	    &eng) != 0)
		return tap_done();
	test_draft();
	tmp_engine_close(eng, tmpdir);
	return tap_done();
}
