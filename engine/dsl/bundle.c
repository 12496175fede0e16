/*
 * bundle.c — .zip bundles of sandboxed apps (Dify's app bundle): reading
 * and checking one in memory, and writing one, with libarchive.
 *
 *	<name>.yml        the DSL
 *	manifest.json     {schema_version, generated_at, dsl_filename,
 *	                   app_assets: {tree}, files: [{node_id, path}],
 *	                   integrity: {file_count}}
 *	<name>/...        the app's files
 *
 * Older bundles have no manifest; their files sit under the DSL file name
 * without its extension.
 *
 * An entry's mode is not kept: setuid, setgid, sticky and every other bit
 * go on import; the app's files are bytes, laid into a sandbox 0644 (and
 * written to a bundle 0644, folders 0755).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <archive.h>
#include <archive_entry.h>

#include "engine/dsl/dsl.h"

/* ====== Names ====== */

void
bundle_safe_name(const char *name, char *buf, size_t bufsz)
{
	const unsigned char	*p = (const unsigned char *)name;
	size_t			 n = 0, chars = 0, start, end;

	for (; *p != '\0' && n + 5 < bufsz && chars < 100; p++) {
		if (*p < 0x20 || *p == 0x7f || strchr("<>:\"/\\|?*", *p))
			buf[n++] = '_';
		else {
			buf[n++] = (char)*p;
			/* copy a whole UTF-8 sequence before counting it */
			while ((p[1] & 0xC0) == 0x80 && n + 5 < bufsz)
				buf[n++] = (char)*++p;
		}
		chars++;
	}
	buf[n] = '\0';
	for (start = 0; buf[start] == '.' || buf[start] == ' '; start++)
		;
	for (end = n; end > start && (buf[end - 1] == '.' ||
	    buf[end - 1] == ' '); end--)
		;
	memmove(buf, buf + start, end - start);
	buf[end - start] = '\0';
	if (buf[0] == '\0')
		snprintf(buf, bufsz, "app");
}

/*
 * Checks an entry path: relative, no "." or ".." or empty components, no
 * backslash or control character, well-formed UTF-8 (file names are JSON
 * strings in the app's file system), valid length. Returns 0 or -1 with
 * the rule broken in why.
 */
static int
entry_path_check(const char *path, size_t max, const char **why)
{
	const char	*p, *seg;
	size_t		 len = strlen(path), k;

	if (len == 0) {
		*why = "an empty name";
		return -1;
	}
	if (len > max) {
		*why = "a path longer than assets.max_path";
		return -1;
	}
	if (path[0] == '/') {
		*why = "an absolute path";
		return -1;
	}
	for (p = path; *p != '\0'; p += k) {
		if ((k = engine_utf8_seq((const unsigned char *)p,
		    (size_t)(path + len - p))) == 0) {
			*why = "a name that is not UTF-8";
			return -1;
		}
		if (*p == '\\') {
			*why = "a backslash";
			return -1;
		}
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			*why = "a control character";
			return -1;
		}
	}
	for (seg = path; *seg != '\0';) {
		p = strchr(seg, '/');
		len = p ? (size_t)(p - seg) : strlen(seg);
		if ((len == 0 && p != NULL && p[1] != '\0') ||
		    (len == 1 && seg[0] == '.') ||
		    (len == 2 && seg[0] == '.' && seg[1] == '.')) {
			*why = "a '.', '..' or empty path component";
			return -1;
		}
		if (p == NULL)
			break;
		seg = p + 1;
	}
	return 0;
}

static int
is_root_yaml(const char *path)
{
	size_t n = strlen(path);

	if (strchr(path, '/') != NULL)
		return 0;
	return (n > 4 && strcmp(path + n - 4, ".yml") == 0) ||
	    (n > 5 && strcmp(path + n - 5, ".yaml") == 0);
}

/* ====== Reading ====== */

/*
 * libarchive's message for a's last error. It may have none (a zip cut
 * short inside an entry header fails with no message): then fallback.
 */
static const char *
zip_error(struct archive *a, const char *fallback)
{
	const char *msg = archive_error_string(a);

	return msg != NULL && *msg != '\0' ? msg : fallback;
}

struct raw_entry {
	char		*path;
	int		 is_dir;
	unsigned char	*data;
	size_t		 len;
};

static void
raw_free(struct raw_entry *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(r[i].path);
		free(r[i].data);
	}
	free(r);
}

void
bundle_files_free(struct bundle_file *files, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(files[i].path);
		free(files[i].data);
	}
	free(files);
}

void
bundle_release(struct bundle *b)
{
	free(b->dsl_name);
	free(b->dsl);
	json_decref(b->manifest);
	bundle_files_free(b->files, b->nfiles);
	memset(b, 0, sizeof(*b));
}

/* Reads every entry into memory, enforcing the per-entry rules. */
static int
read_entries(const struct conf *c, const void *zip, size_t len, char *err,
    struct raw_entry **out, size_t *nout)
{
	struct archive		*a = NULL;
	struct archive_entry	*ae;
	struct raw_entry	*ents = NULL, *ne, *cur;
	json_t			*seen = NULL;
	const char		*name, *why;
	char			*path = NULL;
	struct dbuf		 d;
	size_t			 n = 0, cap = 0, plen;
	int64_t			 total = 0, limit;
	la_ssize_t		 got;
	unsigned char		 buf[16384];
	int			 rc = ENGINE_EINVAL, r;

	limit = c->bundle_max_size;
	if ((int64_t)len * c->bundle_max_ratio < limit)
		limit = (int64_t)len * c->bundle_max_ratio;
	if ((seen = json_object()) == NULL || (a = archive_read_new()) ==
	    NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	archive_read_support_format_zip(a);
	if (archive_read_open_memory(a, zip, len) != ARCHIVE_OK) {
		engine_invalid(err, "not a zip bundle: %s", zip_error(a,
		    "unrecognized format"));
		goto out;
	}
	for (;;) {
		r = archive_read_next_header(a, &ae);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			engine_invalid(err, "damaged zip: %s", zip_error(a,
			    n == 0 ? "no readable entry (not a zip, or cut "
			    "short)" : "an entry header cannot be read (cut "
			    "short or corrupt)"));
			goto out;
		}
		name = archive_entry_pathname_utf8(ae);
		if (name == NULL)
			name = archive_entry_pathname(ae);
		if (name == NULL) {
			engine_invalid(err, "entry %zu has no usable name",
			    n + 1);
			goto out;
		}
		free(path);
		if ((path = strdup(name)) == NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		plen = strlen(path);
		if (entry_path_check(path, (size_t)c->asset_max_path, &why)
		    != 0) {
			engine_invalid(err, "entry '%.200s' is refused: %s",
			    path, why);
			goto out;
		}
		if (archive_entry_symlink(ae) != NULL ||
		    archive_entry_hardlink(ae) != NULL ||
		    (archive_entry_filetype(ae) != AE_IFREG &&
		    archive_entry_filetype(ae) != AE_IFDIR)) {
			engine_invalid(err, "entry '%.200s' is refused: only "
			    "regular files and folders may be in a bundle",
			    path);
			goto out;
		}
		if (archive_entry_is_encrypted(ae)) {
			engine_invalid(err, "entry '%.200s' is encrypted",
			    path);
			goto out;
		}
		if (archive_entry_filetype(ae) == AE_IFDIR && plen > 0 &&
		    path[plen - 1] == '/')
			path[--plen] = '\0';
		if (json_object_get(seen, path) != NULL) {
			engine_invalid(err, "entry '%.200s' appears twice",
			    path);
			goto out;
		}
		if (json_object_set_new(seen, path, json_true()) != 0) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		if (n >= (size_t)c->asset_max_files + 2) {
			engine_invalid(err, "bundle has more than %d files "
			    "(assets.max_files)", c->asset_max_files);
			rc = ENGINE_ELIMIT;
			goto out;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			if ((ne = realloc(ents, cap * sizeof(*ents))) == NULL) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
			ents = ne;
		}
		cur = &ents[n++];
		memset(cur, 0, sizeof(*cur));
		cur->path = path;
		path = NULL;
		cur->is_dir = archive_entry_filetype(ae) == AE_IFDIR;
		dbuf_init(&d, 0);
		/* Count what really unpacks, not what headers claim. */
		while ((got = archive_read_data(a, buf, sizeof(buf))) > 0) {
			total += got;
			if ((int64_t)(cur->len + (size_t)got) >
			    c->asset_max_file) {
				engine_invalid(err, "entry '%.200s' is larger "
				    "than %lld bytes (assets.max_file_size)",
				    cur->path, (long long)c->asset_max_file);
				rc = ENGINE_ELIMIT;
				goto out;
			}
			if (total > limit) {
				engine_invalid(err, "bundle unpacks to more "
				    "than %lld bytes (bundle.max_size %lld, "
				    "bundle.max_ratio %d): refused as a "
				    "possible zip bomb", (long long)limit,
				    (long long)c->bundle_max_size,
				    c->bundle_max_ratio);
				rc = ENGINE_ELIMIT;
				goto out;
			}
			/* the bytes stay cur's (raw_free) whatever happens */
			r = dbuf_add(&d, buf, (size_t)got);
			cur->data = (unsigned char *)d.p;
			cur->len = d.len;
			if (r != DBUF_OK) {
				rc = ENGINE_ENOMEM;
				goto out;
			}
		}
		if (got < 0) {
			engine_invalid(err, "entry '%.200s' is damaged: %s",
			    cur->path, zip_error(a, "its data cannot be "
			    "read"));
			goto out;
		}
	}
	*out = ents;
	*nout = n;
	ents = NULL;
	n = 0;
	rc = 0;
out:
	free(path);
	raw_free(ents, n);
	json_decref(seen);
	if (a != NULL)
		archive_read_free(a);
	return rc;
}

/* Checks manifest.json against the asset entries, as Dify's import does. */
static int
manifest_check(const json_t *m, const struct bundle *b, const char *dsl_name,
    char *err)
{
	const char	*fn = json_string_value(json_object_get(m,
			    "dsl_filename"));
	json_t		*files = json_object_get(m, "files"), *f, *cnt;
	size_t		 i, j, nfiles = 0;
	const char	*p;

	if (!json_is_object(m))
		return engine_invalid(err, "manifest.json is not a JSON "
		    "object");
	if (fn != NULL && strcmp(fn, dsl_name) != 0)
		return engine_invalid(err, "manifest.json names dsl_filename "
		    "'%.200s' but the bundle holds '%.200s'", fn, dsl_name);
	for (i = 0; i < b->nfiles; i++)
		nfiles += !b->files[i].is_dir;
	cnt = json_object_get(json_object_get(m, "integrity"), "file_count");
	if (cnt != NULL && (!json_is_integer(cnt) ||
	    (size_t)json_integer_value(cnt) != nfiles))
		return engine_invalid(err, "manifest.json integrity.file_count "
		    "is %lld but the bundle holds %zu files",
		    (long long)json_integer_value(cnt), nfiles);
	if (files == NULL)
		return 0;
	if (!json_is_array(files))
		return engine_invalid(err, "manifest.json files must be a "
		    "list");
	json_array_foreach(files, i, f) {
		p = json_string_value(json_object_get(f, "path"));
		if (p == NULL)
			return engine_invalid(err, "manifest.json files[%zu] "
			    "has no path", i);
		while (*p == '/')
			p++;
		for (j = 0; j < b->nfiles; j++)
			if (!b->files[j].is_dir &&
			    strcmp(b->files[j].path, p) == 0)
				break;
		if (j == b->nfiles)
			return engine_invalid(err, "manifest.json lists "
			    "'%.200s', which the bundle does not hold", p);
	}
	if (json_array_size(files) != nfiles)
		return engine_invalid(err, "manifest.json lists %zu files but "
		    "the bundle holds %zu", json_array_size(files), nfiles);
	return 0;
}

int
bundle_read(const struct conf *c, const void *zip, size_t len, char *err,
    struct bundle *b)
{
	struct raw_entry	*ents = NULL;
	json_t			*m = NULL;
	json_error_t		 jerr;
	char			*prefix = NULL;
	size_t			 n = 0, i, plen, nf = 0;
	int			 rc, dsl = -1, man = -1;

	memset(b, 0, sizeof(*b));
	if ((int64_t)len > c->bundle_max_size) {
		engine_invalid(err, "bundle of %zu bytes is larger than %lld "
		    "bytes (bundle.max_size)", len,
		    (long long)c->bundle_max_size);
		return ENGINE_ELIMIT;
	}
	if ((rc = read_entries(c, zip, len, err, &ents, &n)) != 0)
		return rc;
	rc = ENGINE_EINVAL;
	for (i = 0; i < n; i++) {
		if (ents[i].is_dir)
			continue;
		if (strcmp(ents[i].path, "manifest.json") == 0)
			man = (int)i;
		else if (is_root_yaml(ents[i].path)) {
			if (dsl >= 0) {
				engine_invalid(err, "bundle holds two DSL "
				    "files: '%.100s' and '%.100s'",
				    ents[dsl].path, ents[i].path);
				goto out;
			}
			dsl = (int)i;
		}
	}
	if (dsl < 0) {
		engine_invalid(err, "bundle holds no DSL file (a .yml or .yaml "
		    "at its root)");
		goto out;
	}
	/* Files live under "<dsl name without extension>/". */
	plen = strrchr(ents[dsl].path, '.') - ents[dsl].path;
	if ((prefix = malloc(plen + 2)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	memcpy(prefix, ents[dsl].path, plen);
	prefix[plen] = '/';
	prefix[plen + 1] = '\0';
	if ((b->files = calloc(n, sizeof(*b->files))) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if ((int)i == dsl || (int)i == man)
			continue;
		if (ents[i].is_dir && strlen(ents[i].path) == plen &&
		    strncmp(ents[i].path, prefix, plen) == 0)
			continue;	/* the assets root folder itself */
		if (strncmp(ents[i].path, prefix, plen + 1) != 0 ||
		    ents[i].path[plen + 1] == '\0') {
			engine_invalid(err, "entry '%.200s' is outside the "
			    "bundle's layout (expected under '%.200s')",
			    ents[i].path, prefix);
			goto out;
		}
		if ((b->files[nf].path = strdup(ents[i].path + plen + 1)) ==
		    NULL) {
			rc = ENGINE_ENOMEM;
			goto out;
		}
		b->files[nf].is_dir = ents[i].is_dir;
		b->files[nf].data = ents[i].data;
		b->files[nf].len = ents[i].len;
		ents[i].data = NULL;
		nf++;
		b->nfiles = nf;
	}
	if (man >= 0) {
		m = json_loadb((char *)ents[man].data, ents[man].len, 0, &jerr);
		if (m == NULL) {
			engine_invalid(err, "manifest.json is not valid JSON: "
			    "%s", jerr.text);
			goto out;
		}
		if ((rc = manifest_check(m, b, ents[dsl].path, err)) != 0)
			goto out;
		rc = ENGINE_EINVAL;
		b->manifest = m;
		m = NULL;
	}
	b->dsl_name = ents[dsl].path;
	ents[dsl].path = NULL;
	b->dsl = (char *)ents[dsl].data;
	b->dsl_len = ents[dsl].len;
	ents[dsl].data = NULL;
	if (b->dsl == NULL && (b->dsl = calloc(1, 1)) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	rc = 0;
out:
	json_decref(m);
	free(prefix);
	raw_free(ents, n);
	if (rc != 0)
		bundle_release(b);
	return rc;
}

/* ====== Writing ====== */

static la_ssize_t
mem_write(struct archive *a, void *arg, const void *buf, size_t n)
{
	(void)a;
	return dbuf_add(arg, buf, n) == DBUF_OK ? (la_ssize_t)n : -1;
}

static int
add_entry(struct archive *a, const char *path, int is_dir, const void *data,
    size_t len, time_t now)
{
	struct archive_entry	*ae;
	int			 rc = -1;

	if ((ae = archive_entry_new()) == NULL)
		return -1;
	archive_entry_set_pathname_utf8(ae, path);
	archive_entry_set_filetype(ae, is_dir ? AE_IFDIR : AE_IFREG);
	archive_entry_set_perm(ae, is_dir ? 0755 : 0644);
	archive_entry_set_size(ae, is_dir ? 0 : (la_int64_t)len);
	archive_entry_set_mtime(ae, now, 0);
	if (archive_write_header(a, ae) != ARCHIVE_OK)
		goto out;
	if (!is_dir && len > 0 &&
	    archive_write_data(a, data, len) != (la_ssize_t)len)
		goto out;
	rc = 0;
out:
	archive_entry_free(ae);
	return rc;
}

int
bundle_write(const char *name, const char *dsl, size_t dsl_len,
    const json_t *manifest, const struct bundle_file *files, size_t nfiles,
    char *err, char **out, size_t *outlen)
{
	struct archive	*a = NULL;
	struct dbuf	 m = { 0 };
	char		*path = NULL, *mj = NULL;
	time_t		 now = time(NULL);
	size_t		 i;
	int		 rc = ENGINE_ENOMEM;

	if ((a = archive_write_new()) == NULL)
		goto out;
	if (archive_write_set_format_zip(a) != ARCHIVE_OK ||
	    archive_write_zip_set_compression_deflate(a) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
	    archive_write_open(a, &m, NULL, mem_write, NULL) != ARCHIVE_OK) {
		engine_invalid(err, "zip writer: %s", zip_error(a,
		    "cannot start"));
		rc = ENGINE_EINVAL;
		goto out;
	}
	if ((path = malloc(strlen(name) + 4200)) == NULL)
		goto out;
	snprintf(path, strlen(name) + 4200, "%s.yml", name);
	if (add_entry(a, path, 0, dsl, dsl_len, now) != 0)
		goto fail;
	if (manifest != NULL) {
		if ((mj = json_dumps(manifest, JSON_INDENT(2) |
		    JSON_PRESERVE_ORDER)) == NULL)
			goto out;
		if (add_entry(a, "manifest.json", 0, mj, strlen(mj), now) != 0)
			goto fail;
	}
	for (i = 0; i < nfiles; i++) {
		snprintf(path, strlen(name) + 4200, "%s/%s%s", name,
		    files[i].path, files[i].is_dir ? "/" : "");
		if (add_entry(a, path, files[i].is_dir, files[i].data,
		    files[i].len, now) != 0)
			goto fail;
	}
	if (archive_write_close(a) != ARCHIVE_OK)
		goto fail;
	if ((*out = dbuf_take(&m, outlen)) == NULL)
		goto out;
	rc = 0;
	goto out;
fail:
	engine_invalid(err, "zip writer: %s", zip_error(a, "write failed"));
	rc = ENGINE_EINVAL;
out:
	if (a != NULL)
		archive_write_free(a);
	dbuf_free(&m);
	free(path);
	free(mj);
	return rc;
}
