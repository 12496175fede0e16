/*
 * t_engine_bundle.c — .zip bundles: a round trip with nested folders,
 * binary data and unicode names; the older manifest-less layout; and each
 * refusal (zip-slip, absolute paths, symlinks, devices, duplicates, size,
 * bombs, manifest mismatches), all decided before anything is written.
 */
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>

#include "engine/dsl/dsl.h"
#include "tap.h"

struct zbuf {
	char	*p;
	size_t	 len, cap;
};

static la_ssize_t
zwrite(struct archive *a, void *arg, const void *buf, size_t n)
{
	struct zbuf *z = arg;

	(void)a;
	if (z->len + n > z->cap) {
		z->cap = (z->len + n) * 2;
		z->p = realloc(z->p, z->cap);
	}
	memcpy(z->p + z->len, buf, n);
	z->len += n;
	return (la_ssize_t)n;
}

/* An entry for make_zip: type 'f' file, 'd' folder, 'l' symlink, 'c'
 * character device. */
struct ent {
	char		 type;
	const char	*path;
	const char	*data;
	size_t		 len;	/* 0: strlen(data) */
};

/* The zip of entries e, entry i with mode perms[i] (NULL: all 0644). */
static struct zbuf
make_zip_perms(const struct ent *e, size_t n, const unsigned *perms)
{
	struct zbuf		 z = { NULL, 0, 0 };
	struct archive		*a = archive_write_new();
	struct archive_entry	*ae;
	size_t			 i, len;

	archive_write_set_format_zip(a);
	archive_write_zip_set_compression_deflate(a);
	archive_write_set_bytes_in_last_block(a, 1);
	archive_write_open(a, &z, NULL, zwrite, NULL);
	for (i = 0; i < n; i++) {
		ae = archive_entry_new();
		archive_entry_set_pathname_utf8(ae, e[i].path);
		len = e[i].data ? (e[i].len ? e[i].len : strlen(e[i].data)) :
		    0;
		switch (e[i].type) {
		case 'd': archive_entry_set_filetype(ae, AE_IFDIR); break;
		case 'l':
			archive_entry_set_filetype(ae, AE_IFLNK);
			archive_entry_set_symlink(ae, "/etc/passwd");
			len = 0;
			break;
		case 'c': archive_entry_set_filetype(ae, AE_IFCHR); break;
		default: archive_entry_set_filetype(ae, AE_IFREG); break;
		}
		archive_entry_set_perm(ae, perms ? perms[i] : 0644);
		archive_entry_set_size(ae, (la_int64_t)len);
		archive_write_header(a, ae);
		if (len > 0)
			archive_write_data(a, e[i].data, len);
		archive_entry_free(ae);
	}
	archive_write_close(a);
	archive_write_free(a);
	return z;
}

static struct zbuf
make_zip(const struct ent *e, size_t n)
{
	return make_zip_perms(e, n, NULL);
}

static int
refused(const struct conf *c, const struct ent *e, size_t n, const char *want,
    int want_rc)
{
	struct zbuf	z = make_zip(e, n);
	struct bundle	b;
	char		err[ENGINE_ERRMAX] = "";
	int		rc;

	rc = bundle_read(c, z.p, z.len, err, &b);
	free(z.p);
	if (rc == 0)
		bundle_release(&b);
	if (rc != want_rc || strstr(err, want) == NULL) {
		printf("#   rc %d, err '%s', wanted '%s'\n", rc, err, want);
		return 0;
	}
	return 1;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The zip writer cannot store a device, but a crafted zip can: mark the
 * last central directory entry as made on Unix with mode S_IFCHR.
 */
static int
device_refused(const struct conf *c, const struct ent *e, size_t n)
{
	struct zbuf	 z = make_zip(e, n);
	struct bundle	 b;
	char		 err[ENGINE_ERRMAX] = "", *p, *last = NULL;
	unsigned	 mode = 0020644;
	int		 rc;

	for (p = z.p; p + 46 < z.p + z.len; p++)
		if (memcmp(p, "PK\001\002", 4) == 0)
			last = p;
	if (last == NULL) {
		free(z.p);
		return 0;
	}
	last[5] = 3;			/* version made by: Unix */
	last[40] = (char)(mode & 0xff);	/* external attributes, high half */
	last[41] = (char)(mode >> 8);
	rc = bundle_read(c, z.p, z.len, err, &b);
	free(z.p);
	if (rc == 0)
		bundle_release(&b);
	return rc == ENGINE_EINVAL && strstr(err, "only regular files");
}

/*
 * Every cut of a sound bundle that fails says why in words: libarchive
 * may give no message (a zip cut inside an entry header), which used to
 * come out as "damaged zip: (null)".
 */
static void
test_cut_short(const struct conf *c)
{
	static const struct ent ok[] = {
		{ 'f', "app.yml", "app: {}\n", 0 },
		{ 'd', "app/", NULL, 0 },
		{ 'f', "app/a.txt", "hello, world\n", 0 },
	};
	struct zbuf	 z = make_zip(ok, N(ok));
	struct bundle	 b;
	char		 err[ENGINE_ERRMAX];
	size_t		 cut, refused = 0, unclear = 0;
	int		 rc;

	for (cut = 0; cut < z.len; cut++) {
		err[0] = '\0';
		rc = bundle_read(c, z.p, cut, err, &b);
		if (rc == 0) {
			bundle_release(&b);
			continue;
		}
		refused++;
		if (rc != ENGINE_EINVAL || err[0] == '\0' ||
		    strstr(err, "(null)") != NULL) {
			if (unclear++ == 0)
				printf("#   cut at %zu: rc %d, '%s'\n", cut, rc,
				    err);
		}
	}
	CHECK(refused > z.len / 2);
	CHECK_INT(unclear, 0);
	free(z.p);
	/* garbage, and a zip's first bytes and then garbage */
	CHECK(bundle_read(c, "just some text, no zip", 22, err, &b) ==
	    ENGINE_EINVAL);
	CHECK(strstr(err, "not a zip bundle") != NULL);
	CHECK(bundle_read(c, "PK\003\004garbage", 11, err, &b) ==
	    ENGINE_EINVAL);
	CHECK(strstr(err, "damaged zip: ") != NULL &&
	    strstr(err, "(null)") == NULL);
}

/*
 * A zip entry's mode is not kept: setuid, setgid and sticky bits (and
 * any other) are gone after a bundle is read, and a bundle written from
 * it has plain 0644 files and 0755 folders.
 */
static void
test_modes_dropped(const struct conf *c)
{
	static const struct ent modes[] = {
		{ 'f', "app.yml", "app: {}\n", 0 },
		{ 'd', "app/skills/", NULL, 0 },
		{ 'f', "app/skills/suid", "#!/bin/sh\nid\n", 0 },
		{ 'f', "app/sgid", "x", 0 },
	};
	static const unsigned perms[] = { 0644, 03777, 04755, 02755 };
	struct zbuf		 z = make_zip_perms(modes, N(modes), perms);
	struct bundle		 b;
	struct archive		*a;
	struct archive_entry	*ae;
	char			 err[ENGINE_ERRMAX] = "", *out = NULL;
	size_t			 outlen = 0, seen = 0, special = 0;

	/* the crafted entries really carry the bits */
	a = archive_read_new();
	archive_read_support_format_zip(a);
	archive_read_open_memory(a, z.p, z.len);
	while (archive_read_next_header(a, &ae) == ARCHIVE_OK)
		special += (archive_entry_perm(ae) & 07000) != 0;
	archive_read_free(a);
	CHECK_INT(special, 3);
	CHECK(bundle_read(c, z.p, z.len, err, &b) == 0);
	free(z.p);
	CHECK(bundle_write("app", b.dsl, b.dsl_len, NULL, b.files, b.nfiles,
	    err, &out, &outlen) == 0);
	bundle_release(&b);
	special = 0;
	a = archive_read_new();
	archive_read_support_format_zip(a);
	archive_read_open_memory(a, out, outlen);
	while (archive_read_next_header(a, &ae) == ARCHIVE_OK) {
		seen++;
		special += (archive_entry_perm(ae) & 07000) != 0;
		CHECK_INT(archive_entry_perm(ae), archive_entry_filetype(ae) ==
		    AE_IFDIR ? 0755 : 0644);
	}
	archive_read_free(a);
	CHECK_INT(seen, 4);
	CHECK_INT(special, 0);
	free(out);
}

int
main(void)
{
	static struct conf	 c;
	struct bundle		 b;
	struct bundle_file	 files[4];
	char			 err[ENGINE_ERRMAX], *zip = NULL, name[401];
	unsigned char		 bin[3000];
	char			*zeros;
	size_t			 len, i;
	json_t			*man;

	conf_defaults(&c);
	for (i = 0; i < sizeof(bin); i++)
		bin[i] = (unsigned char)(i * 7 + 3);

	/* Round trip through bundle_write and bundle_read. */
	memset(files, 0, sizeof(files));
	files[0].path = "skills";
	files[0].is_dir = 1;
	files[1].path = "skills/报告";
	files[1].is_dir = 1;
	files[2].path = "skills/报告/SKILL.md";
	files[2].data = (unsigned char *)"---\nname: r\n---\n";
	files[2].len = 16;
	files[3].path = "data/blob.bin";
	files[3].data = bin;
	files[3].len = sizeof(bin);
	man = json_pack("{s:s,s:s,s:[{s:s,s:s},{s:s,s:s}],s:{s:i}}",
	    "schema_version", "1.0", "dsl_filename", "My app.yml", "files",
	    "node_id", "a", "path", "skills/报告/SKILL.md", "node_id", "b",
	    "path", "data/blob.bin", "integrity", "file_count", 2);
	CHECK(bundle_write("My app", "app: {}\n", 8, man, files, 4, err, &zip,
	    &len) == 0);
	CHECK(bundle_read(&c, zip, len, err, &b) == 0);
	CHECK_STR(b.dsl_name, "My app.yml");
	CHECK_STR(b.dsl, "app: {}\n");
	CHECK(b.manifest != NULL);
	CHECK_INT(b.nfiles, 4);
	for (i = 0; i < b.nfiles; i++)
		if (strcmp(b.files[i].path, "data/blob.bin") == 0)
			break;
	CHECK(i < b.nfiles && b.files[i].len == sizeof(bin) &&
	    memcmp(b.files[i].data, bin, sizeof(bin)) == 0);
	for (i = 0; i < b.nfiles; i++)
		if (strcmp(b.files[i].path, "skills/报告") == 0)
			break;
	CHECK(i < b.nfiles && b.files[i].is_dir);
	bundle_release(&b);
	/* The manifest must agree with the entries. */
	json_object_set_new(json_object_get(man, "integrity"), "file_count",
	    json_integer(3));
	free(zip);
	CHECK(bundle_write("My app", "app: {}\n", 8, man, files, 4, err, &zip,
	    &len) == 0);
	CHECK(bundle_read(&c, zip, len, err, &b) == ENGINE_EINVAL);
	CHECK(strstr(err, "file_count") != NULL);
	free(zip);
	json_object_set_new(json_object_get(man, "integrity"), "file_count",
	    json_integer(2));
	json_object_set_new(json_array_get(json_object_get(man, "files"), 1),
	    "path", json_string("data/missing.bin"));
	CHECK(bundle_write("My app", "app: {}\n", 8, man, files, 4, err, &zip,
	    &len) == 0);
	CHECK(bundle_read(&c, zip, len, err, &b) == ENGINE_EINVAL);
	CHECK(strstr(err, "data/missing.bin") != NULL);
	free(zip);
	json_decref(man);

	/* The older layout: no manifest, files under the DSL's name. */
	{
		struct ent e[] = {
			{ 'f', "old.yaml", "kind: app\n", 0 },
			{ 'd', "old/", NULL, 0 },
			{ 'f', "old/a/b.txt", "hello", 0 },
		};
		struct zbuf z = make_zip(e, N(e));

		CHECK(bundle_read(&c, z.p, z.len, err, &b) == 0);
		CHECK(b.manifest == NULL);
		CHECK_INT(b.nfiles, 1);
		CHECK_STR(b.files[0].path, "a/b.txt");
		bundle_release(&b);
		free(z.p);
	}

	/* Refusals. */
	{
		struct ent slip[] = { { 'f', "a.yml", "x", 0 },
		    { 'f', "a/../../etc/cron.d/x", "x", 0 } };
		struct ent abs[] = { { 'f', "a.yml", "x", 0 },
		    { 'f', "/etc/passwd", "x", 0 } };
		struct ent bs[] = { { 'f', "a.yml", "x", 0 },
		    { 'f', "a\\..\\x", "x", 0 } };
		struct ent ln[] = { { 'f', "a.yml", "x", 0 },
		    { 'l', "a/link", NULL, 0 } };
		struct ent dev[] = { { 'f', "a.yml", "x", 0 },
		    { 'c', "a/tty", NULL, 0 } };
		struct ent dup[] = { { 'f', "a.yml", "x", 0 },
		    { 'f', "a/x", "1", 0 }, { 'f', "a/x", "2", 0 } };
		struct ent nodsl[] = { { 'f', "a/x", "1", 0 } };
		struct ent two[] = { { 'f', "a.yml", "x", 0 },
		    { 'f', "b.yaml", "y", 0 } };
		struct ent outside[] = { { 'f', "a.yml", "x", 0 },
		    { 'f', "other/x", "1", 0 } };
		struct ent ctl[] = { { 'f', "a.yml", "x", 0 },
		    { 'f', "a/x\001y", "1", 0 } };
		struct ent badman[] = { { 'f', "a.yml", "x", 0 },
		    { 'f', "manifest.json", "{not json", 0 } };
		struct ent wrongdsl[] = { { 'f', "a.yml", "x", 0 },
		    { 'f', "manifest.json", "{\"dsl_filename\":\"b.yml\"}",
		    0 } };

		CHECK(refused(&c, slip, N(slip), "'..'", ENGINE_EINVAL));
		CHECK(refused(&c, abs, N(abs), "absolute path",
		    ENGINE_EINVAL));
		/* libarchive reads Windows separators as '/': the ".." is
		 * still caught. */
		CHECK(refused(&c, bs, N(bs), "'..'", ENGINE_EINVAL));
		CHECK(refused(&c, ln, N(ln), "only regular files",
		    ENGINE_EINVAL));
		CHECK(device_refused(&c, dev, N(dev)));
		CHECK(refused(&c, dup, N(dup), "appears twice",
		    ENGINE_EINVAL));
		CHECK(refused(&c, nodsl, N(nodsl), "no DSL file",
		    ENGINE_EINVAL));
		CHECK(refused(&c, two, N(two), "two DSL files",
		    ENGINE_EINVAL));
		CHECK(refused(&c, outside, N(outside), "outside the bundle",
		    ENGINE_EINVAL));
		CHECK(refused(&c, ctl, N(ctl), "control character",
		    ENGINE_EINVAL));
		CHECK(refused(&c, badman, N(badman), "not valid JSON",
		    ENGINE_EINVAL));
		CHECK(refused(&c, wrongdsl, N(wrongdsl), "dsl_filename",
		    ENGINE_EINVAL));
	}
	/* A bomb: 12 MB of zeros compress to a few KB. */
	zeros = calloc(1, 12 << 20);
	{
		struct ent bomb[] = { { 'f', "a.yml", "x", 0 },
		    { 'f', "a/zeros", zeros, 12 << 20 } };

		c.asset_max_file = 64 << 20;
		CHECK(refused(&c, bomb, N(bomb), "zip bomb", ENGINE_ELIMIT));
		c.asset_max_file = 1 << 20;
		CHECK(refused(&c, bomb, N(bomb), "assets.max_file_size",
		    ENGINE_ELIMIT));
	}
	free(zeros);
	CHECK(bundle_read(&c, "PK\003\004garbage", 11, err, &b) ==
	    ENGINE_EINVAL);
	c.bundle_max_size = 2048;
	CHECK(bundle_read(&c, bin, sizeof(bin), err, &b) == ENGINE_ELIMIT);
	CHECK(strstr(err, "bundle.max_size") != NULL);

	c.bundle_max_size = 64 << 20;
	test_cut_short(&c);
	test_modes_dropped(&c);

	/* Safe names, as Dify makes them. */
	bundle_safe_name("a/b:c*?", name, sizeof(name));
	CHECK_STR(name, "a_b_c__");
	bundle_safe_name(" ..hidden. ", name, sizeof(name));
	CHECK_STR(name, "hidden");
	bundle_safe_name("...", name, sizeof(name));
	CHECK_STR(name, "app");
	bundle_safe_name("中文应用", name, sizeof(name));
	CHECK_STR(name, "中文应用");
	return tap_done();
}
