/*
 * workspace.c — the sandbox workspaces a run leaves behind, as stored
 * tar blobs: a conversation's (the "workspace" member of its record,
 * run.c) and a console user's draft workspace of an app (Dify keeps one
 * per user for draft test runs until it is reset). The draft ones are
 * settings records "draft-workspace/<app id>/<user>" -> {app_id, user,
 * workspace: <blob hash>, updated_at}; each holds one reference to its
 * blob. Listing and reading a workspace parse the tar with libarchive,
 * without a sandbox, as it is read from storage a chunk at a time (the
 * tar is never whole in memory there).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <archive.h>
#include <archive_entry.h>

#include "engine/records/records.h"

#define DRAFT_WS_PREFIX	"draft-workspace/"
#define DRAFT_USER_MAX	200	/* bytes of a console user name */

/* ====== Draft workspace records ====== */

static int
draft_key(const char *app_id, const char *user, char *key, size_t keysz)
{
	int n;

	if (app_id == NULL || user == NULL || *user == '\0' ||
	    strlen(user) > DRAFT_USER_MAX)
		return STORE_ENOTFOUND;
	n = snprintf(key, keysz, DRAFT_WS_PREFIX "%s/%s", app_id, user);
	return n > 0 && (size_t)n < keysz ? 0 : STORE_ENOTFOUND;
}

int
workspace_draft_put(struct store_txn *t, const char *app_id,
    const char *user, const void *tar, size_t len)
{
	char		 key[300], hex[STORE_HASH_HEX];
	json_t		*old = NULL, *rec = NULL;
	const char	*was;
	int		 rc;

	if ((rc = draft_key(app_id, user, key, sizeof(key))) != 0)
		return 0;	/* no user to keep it for */
	if (store_get_json(t, STORE_DB_SETTINGS, key, &old) == 0 &&
	    (was = json_string_value(json_object_get(old, "workspace"))) !=
	    NULL && (rc = store_blob_unref(t, was)) != 0 &&
	    rc != STORE_ENOTFOUND)
		goto out;
	if ((rc = store_blob_ref(t, tar, len, hex)) != 0)
		goto out;
	if ((rec = json_pack("{s:s,s:s,s:s,s:I}", "app_id", app_id, "user",
	    user, "workspace", hex, "updated_at", (json_int_t)time(NULL))) ==
	    NULL) {
		rc = STORE_ENOMEM;
		goto out;
	}
	rc = store_put_json(t, STORE_DB_SETTINGS, key, rec, 0);
out:
	json_decref(old);
	json_decref(rec);
	return rc;
}

/* Deletes the record at key and drops its blob reference. */
static int
draft_delete(struct store_txn *t, const char *key, const json_t *rec)
{
	const char	*sum = json_string_value(json_object_get(rec,
			    "workspace"));
	int		 rc;

	if (sum != NULL && (rc = store_blob_unref(t, sum)) != 0 &&
	    rc != STORE_ENOTFOUND)
		return rc;
	return store_del(t, STORE_DB_SETTINGS, key, strlen(key));
}

int
workspace_draft_delete_all(struct store_txn *t, const char *app_id)
{
	json_t		*all = NULL, *rec;
	const char	*k;
	char		 prefix[64];
	int		 rc;

	snprintf(prefix, sizeof(prefix), DRAFT_WS_PREFIX "%s/", app_id);
	if ((rc = records_collect(t, STORE_DB_SETTINGS, prefix, NULL, 0,
	    &all)) != 0)
		return rc == STORE_ENOTFOUND ? 0 : rc;
	json_object_foreach(all, k, rec)
		if ((rc = draft_delete(t, k, rec)) != 0)
			break;
	json_decref(all);
	return rc;
}

struct draft_reset {
	const char	*app_id;
	const char	*user;
	int		 had;
};

static int
draft_reset_fn(struct store_txn *t, void *arg)
{
	struct draft_reset	*d = arg;
	const void		*v;
	size_t			 vlen;
	json_t			*rec = NULL;
	char			 key[300];
	int			 rc;

	if ((rc = store_get(t, STORE_DB_APPS, d->app_id, strlen(d->app_id),
	    &v, &vlen)) != 0)
		return rc;
	if (draft_key(d->app_id, d->user, key, sizeof(key)) != 0)
		return 0;
	if ((rc = store_get_json(t, STORE_DB_SETTINGS, key, &rec)) ==
	    STORE_ENOTFOUND)
		return 0;
	if (rc == 0) {
		d->had = 1;
		rc = draft_delete(t, key, rec);
	}
	json_decref(rec);
	return rc;
}

int
engine_workspace_reset(struct engine *e, const char *app_id,
    const char *user, int *had)
{
	struct draft_reset	d = { app_id, user, 0 };
	int			rc;

	if (engine_uuid_check(app_id) != 0)
		return ENGINE_ENOTFOUND;
	rc = engine_from_store(store_write(e->store, draft_reset_fn, &d));
	if (had != NULL)
		*had = d.had;
	return rc;
}

/*
 * The hash of the workspace w names, in t: ENGINE_ENOTFOUND when the app,
 * the conversation (of that app and, with w->user, of that end user) or
 * a saved workspace is missing.
 */
static int
workspace_sum(struct store_txn *t, const struct workspace_ref *w,
    char hex[STORE_HASH_HEX])
{
	json_t		*rec = NULL;
	const char	*sum;
	const void	*v;
	size_t		 vlen;
	char		 key[300];
	int		 rc;

	if (engine_uuid_check(w->app_id) != 0)
		return ENGINE_ENOTFOUND;
	if ((rc = store_get(t, STORE_DB_APPS, w->app_id, strlen(w->app_id),
	    &v, &vlen)) != 0)
		return engine_from_store(rc);
	if (w->conversation_id != NULL) {
		if (engine_uuid_check(w->conversation_id) != 0)
			return ENGINE_ENOTFOUND;
		rc = store_get_json(t, STORE_DB_CONVERSATIONS,
		    w->conversation_id, &rec);
		if (rc == 0 && !record_owned(rec, w->app_id,
		    "from_end_user_id", w->user))
			rc = STORE_ENOTFOUND;
	} else if (draft_key(w->app_id, w->user, key, sizeof(key)) != 0)
		rc = STORE_ENOTFOUND;
	else
		rc = store_get_json(t, STORE_DB_SETTINGS, key, &rec);
	if (rc == 0) {
		if ((sum = json_string_value(json_object_get(rec,
		    "workspace"))) != NULL && strlen(sum) == STORE_HASH_HEX - 1)
			memcpy(hex, sum, STORE_HASH_HEX);
		else
			rc = STORE_ENOTFOUND;
	}
	json_decref(rec);
	return engine_from_store(rc);
}

int
workspace_load(struct engine *e, const struct workspace_ref *w, char **out,
    size_t *len)
{
	struct store_txn	*t = NULL;
	char			 hex[STORE_HASH_HEX];
	int			 rc;

	*out = NULL;
	*len = 0;
	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	if ((rc = workspace_sum(t, w, hex)) == 0 &&
	    (rc = store_blob_load(t, hex, out, len)) != 0)
		rc = engine_from_store(rc);
	store_read_end(t);
	return rc;
}

/*
 * The blob (hex, *size) of the workspace w names, with err saying whose
 * workspace is missing.
 */
static int
workspace_find(struct engine *e, const struct workspace_ref *w,
    char hex[STORE_HASH_HEX], uint64_t *size, char *err)
{
	struct store_txn	*t = NULL;
	int			 rc;

	if ((rc = store_read_begin(e->store, &t)) != 0)
		return engine_from_store(rc);
	if ((rc = workspace_sum(t, w, hex)) == 0)
		rc = engine_from_store(store_blob_size(t, hex, size));
	store_read_end(t);
	if (rc == ENGINE_ENOTFOUND)
		snprintf(err, ENGINE_ERRMAX, "no saved sandbox workspace for "
		    "this %s", w->conversation_id ? "conversation" :
		    "app and user");
	return rc;
}

/* ====== Paths ====== */

int
workspace_path_clean(const char *in, char *out, size_t outsz, char *err)
{
	const char	*p = in ? in : "", *end;
	size_t		 n = 0, k;

	if (*p == '/')
		return engine_invalid(err, "path must be relative to the "
		    "workspace, not absolute: %.100s", in);
	while (*p != '\0') {
		end = strchr(p, '/');
		k = end ? (size_t)(end - p) : strlen(p);
		if (k == 2 && p[0] == '.' && p[1] == '.')
			return engine_invalid(err, "path must not contain "
			    "\"..\": %.100s", in);
		if (k > 0 && !(k == 1 && p[0] == '.')) {
			if (n + k + 2 > outsz)
				return engine_invalid(err, "path is longer "
				    "than %zu bytes", outsz - 1);
			if (n > 0)
				out[n++] = '/';
			memcpy(out + n, p, k);
			n += k;
		}
		p += k;
		while (*p == '/')
			p++;
	}
	out[n] = '\0';
	return 0;
}

int
engine_workspace_path(const char *in, char *out, size_t outsz)
{
	char err[ENGINE_ERRMAX];

	return workspace_path_clean(in, out, outsz, err) == 0 ? 0 : -1;
}

/* ====== Listing and reading ====== */

/*
 * The entry's path cleaned as a request's is ("" for the root); -1 for a
 * name that is absolute, holds "..", is too long or is not UTF-8 (JSON
 * cannot carry it). The saved tar is made inside the sandbox, so such
 * names can be there: they are skipped, never listed, read or handed on.
 */
static int
entry_path(struct archive_entry *ae, char *buf, size_t bufsz)
{
	const unsigned char	*u;
	const char		*p = archive_entry_pathname(ae);
	char			 err[ENGINE_ERRMAX];
	size_t			 len, i, k;

	if (p == NULL)
		return -1;
	u = (const unsigned char *)p;
	len = strlen(p);
	for (i = 0; i < len; i += k)
		if ((k = engine_utf8_seq(u + i, len - i)) == 0)
			return -1;
	return workspace_path_clean(p, buf, bufsz, err) == 0 ? 0 : -1;
}

static int
node_cmp(const void *a, const void *b)
{
	return strcmp(json_string_value(json_object_get(*(json_t *const *)a,
	    "path")), json_string_value(json_object_get(*(json_t *const *)b,
	    "path")));
}

/* Dify's SandboxFileNode. */
static json_t *
file_node(const char *path, int is_dir, struct archive_entry *ae)
{
	const char *base = strrchr(path, '/'), *dot;

	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	return json_pack("{s:s,s:b,s:I,s:I,s:s?}", "path", path, "is_dir",
	    is_dir, "size", (json_int_t)(is_dir ? 0 : archive_entry_size(ae)),
	    "mtime", (json_int_t)archive_entry_mtime(ae), "extension",
	    !is_dir && dot != NULL && dot != base ? dot : NULL);
}

/* A stored tar as libarchive reads it: a chunk at a time. */
struct tar_src {
	struct engine	*e;
	char		 hex[STORE_HASH_HEX];
	uint64_t	 size;
	uint64_t	 off;
	unsigned char	*buf;		/* STORE_BLOB_CHUNK */
};

/* libarchive's read callback: the next chunk (blob_read_alone; a
 * workspace that went away is an error). */
static la_ssize_t
tar_src_read(struct archive *a, void *arg, const void **out)
{
	struct tar_src	*s = arg;
	size_t		 got = 0;
	int		 rc;

	if (s->off >= s->size)
		return 0;
	rc = blob_read_alone(s->e, s->hex, s->off, s->buf, STORE_BLOB_CHUNK,
	    &got);
	if (rc != 0 || got == 0) {
		archive_set_error(a, EIO, "the saved workspace: %s",
		    rc ? store_strerror(rc) : "cut short");
		return -1;
	}
	s->off += got;
	*out = s->buf;
	return (la_ssize_t)got;
}

/* Opens the workspace w for reading: *src lives until tar_close. */
static struct archive *
tar_open(struct engine *e, const struct workspace_ref *w, char *err,
    struct tar_src *src, int *rc)
{
	struct archive *a;

	memset(src, 0, sizeof(*src));
	src->e = e;
	if ((*rc = workspace_find(e, w, src->hex, &src->size, err)) != 0)
		return NULL;
	*rc = ENGINE_ENOMEM;
	if ((src->buf = malloc(STORE_BLOB_CHUNK)) == NULL ||
	    (a = archive_read_new()) == NULL) {
		free(src->buf);
		src->buf = NULL;
		return NULL;
	}
	archive_read_support_format_tar(a);
	archive_read_support_format_gnutar(a);
	if (archive_read_open(a, src, NULL, tar_src_read, NULL) !=
	    ARCHIVE_OK) {
		*rc = engine_invalid(err, "the saved workspace is not a "
		    "readable tar");
		archive_read_free(a);
		free(src->buf);
		src->buf = NULL;
		return NULL;
	}
	*rc = 0;
	return a;
}

static void
tar_close(struct archive *a, struct tar_src *src)
{
	if (a != NULL)
		archive_read_free(a);
	free(src->buf);
	src->buf = NULL;
}

int
engine_workspace_list(struct engine *e, const struct workspace_ref *w,
    const char *path, int recursive, char *err, json_t **out)
{
	struct archive		*a = NULL;
	struct archive_entry	*ae;
	struct tar_src		 src;
	json_t			*list = NULL, *n, **v = NULL;
	char			 want[1024], p[4200];
	size_t			 wl, i, count;
	int			 rc, found = 0, is_dir;

	memset(&src, 0, sizeof(src));
	if ((rc = workspace_path_clean(path, want, sizeof(want), err)) != 0)
		return rc;
	wl = strlen(want);
	if ((list = json_array()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	if ((a = tar_open(e, w, err, &src, &rc)) == NULL)
		goto out;
	found = wl == 0;
	while (archive_read_next_header(a, &ae) == ARCHIVE_OK) {
		if (entry_path(ae, p, sizeof(p)) != 0 || *p == '\0')
			continue;
		is_dir = archive_entry_filetype(ae) == AE_IFDIR;
		if (wl > 0 && strcmp(p, want) == 0) {
			found = 1;
			if (is_dir)
				continue;
			/* a file: it lists as itself */
		} else if (wl > 0 && (strncmp(p, want, wl) != 0 ||
		    p[wl] != '/'))
			continue;
		else if (!recursive && strchr(p + (wl ? wl + 1 : 0), '/') !=
		    NULL)
			continue;
		else
			found = 1;
		if (json_array_size(list) >= (size_t)e->conf->
		    sandbox_workspace_list_max) {
			snprintf(err, ENGINE_ERRMAX, "the folder holds more "
			    "than sandbox.workspace_list_max (%d) entries",
			    e->conf->sandbox_workspace_list_max);
			rc = ENGINE_ELIMIT;
			goto out;
		}
		if ((n = file_node(p, is_dir, ae)) == NULL ||
		    json_array_append_new(list, n) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
	}
	if (!found) {
		rc = ENGINE_ENOTFOUND;
		snprintf(err, ENGINE_ERRMAX, "no %.200s in the workspace",
		    want);
		goto out;
	}
	/* in path order, as Dify sorts them */
	count = json_array_size(list);
	if (count > 1) {
		if ((v = calloc(count, sizeof(*v))) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		for (i = 0; i < count; i++)
			v[i] = json_incref(json_array_get(list, i));
		qsort(v, count, sizeof(*v), node_cmp);
		json_array_clear(list);
		for (i = 0; i < count; i++)
			if (json_array_append_new(list, v[i]) != 0)
				break;
		if (i < count) {
			while (++i < count)
				json_decref(v[i]);
			rc = ENGINE_ENOMEM;
			goto out;
		}
	}
	*out = list;
	list = NULL;
	rc = 0;
out:
	free(v);
	tar_close(a, &src);
	json_decref(list);
	return rc;
}

int
engine_workspace_read(struct engine *e, const struct workspace_ref *w,
    const char *path, char *err, char **data, size_t *len)
{
	struct archive		*a = NULL;
	struct archive_entry	*ae;
	struct tar_src		 src;
	char			*buf = NULL, want[1024], p[4200];
	size_t			 got = 0;
	la_int64_t		 size;
	la_ssize_t		 n;
	int			 rc;

	*data = NULL;
	*len = 0;
	memset(&src, 0, sizeof(src));
	if ((rc = workspace_path_clean(path, want, sizeof(want), err)) != 0)
		return rc;
	if (*want == '\0')
		return engine_invalid(err, "path names a folder (the "
		    "workspace); give a file");
	if ((a = tar_open(e, w, err, &src, &rc)) == NULL)
		return rc;
	rc = ENGINE_ENOTFOUND;
	snprintf(err, ENGINE_ERRMAX, "no file %.200s in the workspace", want);
	while (archive_read_next_header(a, &ae) == ARCHIVE_OK) {
		if (entry_path(ae, p, sizeof(p)) != 0 || strcmp(p, want) != 0)
			continue;
		if (archive_entry_filetype(ae) != AE_IFREG) {
			rc = engine_invalid(err, "%.200s is not a file",
			    want);
			goto out;
		}
		/* the entry's bytes are part of the blob: its size bounds
		 * them */
		size = archive_entry_size(ae);
		if (size < 0 || (uint64_t)size > src.size) {
			rc = engine_invalid(err, "%.200s: bad size in the "
			    "saved workspace", want);
			goto out;
		}
		if ((buf = malloc(size ? (size_t)size : 1)) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		while (got < (size_t)size && (n = archive_read_data(a,
		    buf + got, (size_t)size - got)) > 0)
			got += (size_t)n;
		if (got != (size_t)size) {
			rc = engine_invalid(err, "%.200s is cut short in the "
			    "saved workspace", want);
			goto out;
		}
		*data = buf;
		*len = got;
		buf = NULL;
		err[0] = '\0';
		rc = 0;
		break;
	}
out:
	free(buf);
	tar_close(a, &src);
	return rc;
}

/* ====== Folders as .tar.gz ====== */

/*
 * What path (cleaned; "" the root) is in the tar: 1 a file, 2 a folder
 * (an entry of its own or one under it), 0 missing, -1 unreadable.
 */
static int
tar_kind(struct engine *e, const struct workspace_ref *w, const char *want,
    char *err, int *kind)
{
	struct archive		*a;
	struct archive_entry	*ae;
	struct tar_src		 src;
	char			 p[4200];
	size_t			 wl = strlen(want);
	int			 rc;

	*kind = wl == 0 ? 2 : 0;
	if ((a = tar_open(e, w, err, &src, &rc)) == NULL)
		return rc;
	while (*kind == 0 && archive_read_next_header(a, &ae) ==
	    ARCHIVE_OK) {
		if (entry_path(ae, p, sizeof(p)) != 0)
			continue;
		if (strcmp(p, want) == 0)
			*kind = archive_entry_filetype(ae) == AE_IFDIR ? 2 : 1;
		else if (strncmp(p, want, wl) == 0 && p[wl] == '/')
			*kind = 2;
	}
	tar_close(a, &src);
	return 0;
}

/* The .tar.gz writer's output: a dbuf with its limit. */
static la_ssize_t
gz_write(struct archive *a, void *arg, const void *buf, size_t n)
{
	struct dbuf *o = arg;

	if (dbuf_add(o, buf, n) != DBUF_OK) {
		archive_set_error(a, ENOMEM, o->err == DBUF_ETOOBIG ?
		    "archive too large" : "out of memory");
		return -1;
	}
	return (la_ssize_t)n;
}

/*
 * Folder want of the tar as a .tar.gz of its entries, named as they are
 * in the workspace ("./..." for the root, as tar -C workspace . names
 * them; "<want>/..." otherwise).
 */
static int
tar_subtree(struct engine *e, const struct workspace_ref *ws,
    const char *want, char *err, char **out, size_t *outlen)
{
	struct archive		*in = NULL, *w = NULL;
	struct archive_entry	*ae;
	struct tar_src		 src;
	struct dbuf		 o;
	char			 p[4200], q[4200], buf[16384];
	size_t			 wl = strlen(want), k;
	la_ssize_t		 n;
	int			 rc = ENGINE_ENOMEM;

	memset(&src, 0, sizeof(src));
	dbuf_init(&o, 0);
	if ((in = tar_open(e, ws, err, &src, &rc)) == NULL)
		goto out;
	rc = ENGINE_ENOMEM;
	/* gzip never grows what it cannot shrink by more than a little */
	dbuf_init(&o, (size_t)src.size + (size_t)src.size / 64 + 65536);
	if ((w = archive_write_new()) == NULL ||
	    archive_write_set_format_gnutar(w) != ARCHIVE_OK ||
	    archive_write_add_filter_gzip(w) != ARCHIVE_OK ||
	    archive_write_open2(w, &o, NULL, gz_write, NULL, NULL) !=
	    ARCHIVE_OK)
		goto out;
	while (archive_read_next_header(in, &ae) == ARCHIVE_OK) {
		if (entry_path(ae, q, sizeof(q)) != 0 || (wl > 0 &&
		    strcmp(q, want) != 0 && (strncmp(q, want, wl) != 0 ||
		    q[wl] != '/')))
			continue;
		/* named from the workspace as tar -C workspace <path> names
		 * them: "./..." for the root, "<path>/..." else */
		k = (size_t)snprintf(p, sizeof(p), "%s%s", wl ? "" :
		    *q ? "./" : ".", q);
		if (archive_entry_filetype(ae) == AE_IFDIR && k + 1 <
		    sizeof(p)) {
			p[k] = '/';
			p[k + 1] = '\0';
		}
		archive_entry_set_pathname(ae, p);
		if (archive_write_header(w, ae) != ARCHIVE_OK)
			goto out;
		while ((n = archive_read_data(in, buf, sizeof(buf))) > 0)
			if (archive_write_data(w, buf, (size_t)n) != n)
				goto out;
		if (n < 0) {
			rc = engine_invalid(err, "the saved workspace is cut "
			    "short");
			goto out;
		}
	}
	if (archive_write_close(w) != ARCHIVE_OK)
		goto out;
	if ((*out = dbuf_take(&o, outlen)) == NULL)
		goto out;
	rc = 0;
out:
	if (w != NULL)
		archive_write_free(w);
	tar_close(in, &src);
	dbuf_free(&o);
	return rc;
}

int
engine_workspace_download(struct engine *e, const struct workspace_ref *w,
    const char *path, char *err, char **data, size_t *len, int *archive)
{
	char	want[1024];
	int	rc, kind;

	*data = NULL;
	*len = 0;
	*archive = 0;
	if ((rc = workspace_path_clean(path, want, sizeof(want), err)) != 0)
		return rc;
	if ((rc = tar_kind(e, w, want, err, &kind)) != 0)
		return rc;
	if (kind == 1)
		return engine_workspace_read(e, w, path, err, data, len);
	if (kind == 0) {
		snprintf(err, ENGINE_ERRMAX, "no %.200s in the workspace",
		    want);
		return ENGINE_ENOTFOUND;
	}
	rc = tar_subtree(e, w, want, err, data, len);
	if (rc == 0)
		*archive = 1;
	return rc;
}
