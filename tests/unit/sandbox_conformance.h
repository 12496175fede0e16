/*
 * sandbox_conformance.h — the same checks on any sandbox provider.
 *
 *	#include "tests/unit/sandbox_conformance.h"
 *	...
 *	conformance_opts.count_procs = host_procs_with;	(optional hooks)
 *	conformance_run(&sandbox_provider_local, &cfg);
 *	return tap_done();
 *
 * conformance_run creates a few sandboxes from cfg and checks, through the
 * sandbox_* calls only, what struct sandbox_provider promises:
 *  - exec: argv and shell forms, quoting, env, cwd, stdin (binary, large,
 *    empty), stdout and stderr kept apart, exit codes 0/1/3/255, killed
 *    by a signal;
 *  - time limits: timed_out set, the whole process tree killed (nothing
 *    left running, including children that left the shell's group of
 *    pipes), and nothing left after a command that exits while its
 *    background children still run;
 *  - output caps: max_output per stream, the truncated flags, exit 0;
 *  - files: binary upload/download round trip, replace, empty file, the
 *    download limit, missing files, refused paths; exec sees uploads and
 *    download sees what exec wrote; list (paths, folders, sizes, a
 *    sub-folder, the max, missing); trees when sandbox.h has them
 *    (SANDBOX_HAVE_TREES);
 *  - destroy twice, calls after destroy refused;
 *  - a failure mid-run: the command's own shell killed while children hold
 *    its pipes; with a break_connection hook, the provider's link cut while
 *    a command runs: exec comes back, nothing is left running, the next
 *    command works, destroy still cleans up.
 *
 * It prints TAP lines through tap.h (CHECK and friends) with "# conf:"
 * section comments and returns the number of checks that failed in it.
 * The config should allow at least 20 s of timeout and 1 MiB of output;
 * the checks lower both per command where they need to.
 */
#ifndef FLOWCGI_SANDBOX_CONFORMANCE_H
#define FLOWCGI_SANDBOX_CONFORMANCE_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/sandbox/sandbox.h"
#include "tests/unit/tap.h"

#ifdef SANDBOX_HAVE_TREES
#include <archive.h>
#include <archive_entry.h>
#endif

/* Optional hooks a test sets before conformance_run; all may stay NULL. */
struct conformance_options {
	/*
	 * How many processes whose command line contains needle run where
	 * the provider runs commands (the host for local and a loopback
	 * sshd), or -1. NULL: a scan of /proc by a command in the sandbox.
	 */
	int	(*count_procs)(const char *needle);
	/* Cuts the provider's link while a command runs (ssh: kill the
	 * ControlMaster). NULL: that check is skipped. */
	void	(*break_connection)(struct sandbox *sb);
	/* 1 when sb's workspace still exists after destroy, 0 when gone,
	 * -1 unknown. NULL: not checked. */
	int	(*workspace_exists)(const struct sandbox *sb);
	/* The provider cannot feed standard input: skip those checks. */
	int	no_stdin;
};

static struct conformance_options conformance_opts;

/* The marker in the command lines of the processes the checks start. */
static char conf_mark[32];

static int64_t
conf_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static struct sandbox *
conf_make(const struct sandbox_provider *p, const struct sandbox_config *cfg)
{
	struct sandbox	*sb = NULL;
	char		 err[ENGINE_ERRMAX];

	if (sandbox_create(p, cfg, err, &sb) != 0) {
		printf("# conf: create: %s\n", err);
		sb = NULL;
	}
	return sb;
}

/* A shell command; returns exec's code with res filled. */
static int
conf_sh(struct sandbox *sb, const char *cmd, int timeout_ms,
    int64_t max_output, struct sandbox_exec_result *res)
{
	struct sandbox_exec_req	req;
	char			err[ENGINE_ERRMAX];
	int			rc;

	memset(&req, 0, sizeof(req));
	req.shell = cmd;
	req.timeout_ms = timeout_ms;
	req.max_output = max_output;
	rc = sandbox_exec(sb, &req, err, res);
	if (rc != 0)
		printf("# conf: exec '%.60s': %s\n", cmd, err);
	return rc;
}

/*
 * Processes with "sleep <conf_mark><digit>" in their command line, counted
 * by the hook or from inside the sandbox; -1 when that failed.
 */
static int
conf_count_marked(struct sandbox *sb)
{
	struct sandbox_exec_result	r;
	char				cmd[512], needle[64];
	int				n = -1;

	snprintf(needle, sizeof(needle), "sleep %s", conf_mark);
	if (conformance_opts.count_procs != NULL)
		return conformance_opts.count_procs(needle);
	memset(&r, 0, sizeof(r));
	/* The scanning shell's own command line has a quote after the
	 * digits, so the pattern never matches it. */
	snprintf(cmd, sizeof(cmd), "n=0; for f in /proc/[0-9]*/cmdline; do "
	    "c=$(tr '\\000' ' ' <\"$f\" 2>/dev/null) || continue; "
	    "case \"$c\" in *\"%s\"[0-9]*) n=$((n+1));; esac; done; "
	    "echo $n", needle);
	if (conf_sh(sb, cmd, 20000, 0, &r) == 0 && r.exit_code == 0)
		n = (int)strtol(r.out, NULL, 10);
	sandbox_exec_result_release(&r);
	return n;
}

/* Waits up to 5 s for the marked processes to go; returns the count. */
static int
conf_wait_marked_gone(struct sandbox *sb)
{
	int n = -1, i;

	for (i = 0; i < 50; i++) {
		if ((n = conf_count_marked(sb)) == 0)
			break;
		usleep(100000);
	}
	if (n != 0)
		printf("# conf: %d marked processes still running\n", n);
	return n;
}

/* ====== Exec ====== */

static void
conf_exec(struct sandbox *sb)
{
	struct sandbox_exec_result	 r;
	struct sandbox_exec_req		 req;
	static const char *const	 argv[] = {"printf", "%s|%s|%s|%s",
	    "a b", "it's", "$HOME `x` \"q\"", "k=v", NULL};
	static const char *const	 env[] = {"FOO=bar 'baz' $x", "N=1",
	    NULL};
	static const char *const	 echo_env[] = {"sh", "-c",
	    "printf '%s/%s' \"$FOO\" \"$N\"", NULL};
	static const char *const	 nothing[] = {
	    "conformance-no-such-program", NULL};
	char				 err[ENGINE_ERRMAX], *in = NULL;
	size_t				 i, n = 256 * 1024 + 7;
	int				 rc;

	printf("# conf: exec\n");
	memset(&r, 0, sizeof(r));
	CHECK_INT(conf_sh(sb, "echo out; echo err >&2; exit 3", 0, 0, &r), 0);
	CHECK_STR(r.out, "out\n");
	CHECK_STR(r.err, "err\n");
	CHECK_INT(r.exit_code, 3);
	CHECK_INT(r.signal, 0);
	CHECK_INT(r.timed_out, 0);
	CHECK_INT(r.out_truncated, 0);
	CHECK(r.elapsed_us > 0);
	sandbox_exec_result_release(&r);

	CHECK_INT(conf_sh(sb, "true", 0, 0, &r), 0);
	CHECK_INT(r.exit_code, 0);
	CHECK_INT(r.out_len, 0);
	CHECK_INT(r.err_len, 0);
	CHECK(r.out != NULL && r.err != NULL);
	sandbox_exec_result_release(&r);
	CHECK_INT(conf_sh(sb, "exit 1", 0, 0, &r), 0);
	CHECK_INT(r.exit_code, 1);
	sandbox_exec_result_release(&r);
	CHECK_INT(conf_sh(sb, "echo last words >&2; exit 255", 0, 0, &r), 0);
	CHECK_INT(r.exit_code, 255);
	CHECK_STR(r.err, "last words\n");
	sandbox_exec_result_release(&r);
	/* Killed by a signal: 128 + n, signal n. */
	CHECK_INT(conf_sh(sb, "kill -TERM $$", 0, 0, &r), 0);
	CHECK_INT(r.exit_code, 143);
	CHECK_INT(r.signal, 15);
	CHECK_INT(r.timed_out, 0);
	sandbox_exec_result_release(&r);

	/* argv: no shell, every byte of each argument kept. */
	memset(&req, 0, sizeof(req));
	req.argv = argv;
	CHECK_INT(sandbox_exec(sb, &req, err, &r), 0);
	CHECK_STR(r.out, "a b|it's|$HOME `x` \"q\"|k=v");
	CHECK_INT(r.exit_code, 0);
	sandbox_exec_result_release(&r);
	/* A program that does not exist: 127 (or an error), never a hang. */
	memset(&req, 0, sizeof(req));
	req.argv = nothing;
	rc = sandbox_exec(sb, &req, err, &r);
	CHECK(rc != 0 || r.exit_code == 127 || r.exit_code == 126);
	sandbox_exec_result_release(&r);

	/* env */
	memset(&req, 0, sizeof(req));
	req.argv = echo_env;
	req.env = env;
	CHECK_INT(sandbox_exec(sb, &req, err, &r), 0);
	CHECK_STR(r.out, "bar 'baz' $x/1");
	sandbox_exec_result_release(&r);

	/* give both, or neither */
	memset(&req, 0, sizeof(req));
	CHECK_INT(sandbox_exec(sb, &req, err, &r), ENGINE_EINVAL);
	req.argv = argv;
	req.shell = "true";
	CHECK_INT(sandbox_exec(sb, &req, err, &r), ENGINE_EINVAL);

	/* stdin: binary, larger than a pipe, then EOF; and none at all */
	if (conformance_opts.no_stdin) {
		printf("ok %d - # SKIP stdin: the provider has none\n",
		    ++tap_n);
		goto out;
	}
	if ((in = malloc(n)) == NULL)
		goto out;
	for (i = 0; i < n; i++)
		in[i] = (char)(i * 7 + i / 256);
	memset(&req, 0, sizeof(req));
	req.shell = "cat; echo done >&2";
	req.stdin_data = in;
	req.stdin_len = n;
	CHECK_INT(sandbox_exec(sb, &req, err, &r), 0);
	CHECK_INT(r.out_len, n);
	CHECK(r.out != NULL && r.out_len == n && memcmp(r.out, in, n) == 0);
	CHECK_STR(r.err, "done\n");
	sandbox_exec_result_release(&r);
	memset(&req, 0, sizeof(req));
	req.shell = "wc -c";
	req.stdin_data = "a\0b";
	req.stdin_len = 3;
	CHECK_INT(sandbox_exec(sb, &req, err, &r), 0);
	CHECK(r.out != NULL && strtol(r.out, NULL, 10) == 3);
	sandbox_exec_result_release(&r);
	CHECK_INT(conf_sh(sb, "cat; echo eof", 10000, 0, &r), 0);
	CHECK_STR(r.out, "eof\n");
	CHECK_INT(r.timed_out, 0);
	sandbox_exec_result_release(&r);
out:
	free(in);
}

/* ====== Working folder ====== */

static void
conf_cwd(struct sandbox *sb)
{
	struct sandbox_exec_result	r;
	struct sandbox_exec_req		req;
	char				err[ENGINE_ERRMAX], *data = NULL;
	size_t				len = 0;

	printf("# conf: cwd\n");
	memset(&r, 0, sizeof(r));
	CHECK_INT(sandbox_upload(sb, "sub/dir/x.txt", "in sub", 6, err), 0);
	memset(&req, 0, sizeof(req));
	req.shell = "cat x.txt; pwd >&2; printf made > y.txt";
	req.cwd = "sub/dir";
	CHECK_INT(sandbox_exec(sb, &req, err, &r), 0);
	CHECK_STR(r.out, "in sub");
	CHECK(r.err != NULL && r.err_len >= 8 &&
	    strcmp(r.err + r.err_len - 8, "sub/dir\n") == 0);
	sandbox_exec_result_release(&r);
	CHECK_INT(sandbox_download(sb, "sub/dir/y.txt", 100, err, &data, &len),
	    0);
	CHECK(data != NULL && len == 4 && memcmp(data, "made", 4) == 0);
	free(data);
	data = NULL;
	/* The default cwd is the workspace; uploads are there. */
	CHECK_INT(conf_sh(sb, "cat sub/dir/x.txt", 0, 0, &r), 0);
	CHECK_STR(r.out, "in sub");
	sandbox_exec_result_release(&r);
	/* A cwd that is missing, or outside. */
	memset(&req, 0, sizeof(req));
	req.shell = "true";
	req.cwd = "no/such/dir";
	CHECK(sandbox_exec(sb, &req, err, &r) != 0 || r.exit_code != 0);
	sandbox_exec_result_release(&r);
	req.cwd = "../..";
	CHECK_INT(sandbox_exec(sb, &req, err, &r), ENGINE_EINVAL);
	req.cwd = "/etc";
	CHECK_INT(sandbox_exec(sb, &req, err, &r), ENGINE_EINVAL);
}

/* ====== Time limits and leftovers ====== */

static void
conf_timeouts(struct sandbox *sb)
{
	struct sandbox_exec_result	r;
	char				cmd[512];
	int64_t				t0;

	printf("# conf: timeouts\n");
	memset(&r, 0, sizeof(r));
	/* A tree: a background child, an orphaned grandchild, a child in
	 * the foreground; all must die at the limit. */
	snprintf(cmd, sizeof(cmd), "sleep %s1 & (sleep %s2 &) ; "
	    "sh -c 'sleep %s3; echo never'; echo never", conf_mark, conf_mark,
	    conf_mark);
	t0 = conf_now_us();
	CHECK_INT(conf_sh(sb, cmd, 1500, 0, &r), 0);
	CHECK_INT(r.timed_out, 1);
	CHECK(r.exit_code != 0);
	CHECK(r.out == NULL || strstr(r.out, "never") == NULL);
	CHECK(conf_now_us() - t0 >= 1400000);
	CHECK(conf_now_us() - t0 < 12000000);
	sandbox_exec_result_release(&r);
	CHECK_INT(conf_wait_marked_gone(sb), 0);

	/* A command that ends while its children run: exec comes back at
	 * once and the children do not outlive it. */
	snprintf(cmd, sizeof(cmd), "sleep %s4 & sleep %s5 >/dev/null 2>&1 & "
	    "echo started", conf_mark, conf_mark);
	t0 = conf_now_us();
	CHECK_INT(conf_sh(sb, cmd, 30000, 0, &r), 0);
	CHECK_STR(r.out, "started\n");
	CHECK_INT(r.exit_code, 0);
	CHECK_INT(r.timed_out, 0);
	CHECK(conf_now_us() - t0 < 10000000);
	sandbox_exec_result_release(&r);
	CHECK_INT(conf_wait_marked_gone(sb), 0);

	/* The sandbox still works afterwards. */
	CHECK_INT(conf_sh(sb, "echo alive", 0, 0, &r), 0);
	CHECK_STR(r.out, "alive\n");
	sandbox_exec_result_release(&r);
}

/* ====== Output caps ====== */

static void
conf_output(struct sandbox *sb)
{
	struct sandbox_exec_result r;

	printf("# conf: output caps\n");
	memset(&r, 0, sizeof(r));
	CHECK_INT(conf_sh(sb, "head -c 3000000 /dev/zero | tr '\\000' a; "
	    "head -c 3000000 /dev/zero | tr '\\000' b >&2; exit 0", 30000,
	    65536, &r), 0);
	CHECK_INT(r.exit_code, 0);
	CHECK_INT(r.timed_out, 0);
	CHECK_INT(r.out_truncated, 1);
	CHECK_INT(r.err_truncated, 1);
	CHECK_INT(r.out_len, 65536);
	CHECK_INT(r.err_len, 65536);
	CHECK(r.out != NULL && r.out[0] == 'a' && r.out[65535] == 'a' &&
	    r.out[65536] == '\0');
	CHECK(r.err != NULL && r.err[0] == 'b' && r.err[65535] == 'b');
	sandbox_exec_result_release(&r);
	/* At the cap exactly: not truncated. */
	CHECK_INT(conf_sh(sb, "head -c 4096 /dev/zero | tr '\\000' c", 0,
	    4096, &r), 0);
	CHECK_INT(r.out_len, 4096);
	CHECK_INT(r.out_truncated, 0);
	sandbox_exec_result_release(&r);
}

/* ====== Files ====== */

static void
conf_files(struct sandbox *sb)
{
	struct sandbox_exec_result	 r;
	struct sandbox_file		*files = NULL;
	char				 err[ENGINE_ERRMAX], *data = NULL;
	char				*bin = NULL;
	size_t				 len = 0, n = 0, i, nbin = 300001;
	int				 found_dir = 0, found_c = 0, found_d = 0;

	printf("# conf: files\n");
	memset(&r, 0, sizeof(r));
	if ((bin = malloc(nbin)) == NULL)
		goto out;
	for (i = 0; i < nbin; i++)
		bin[i] = (char)(i % 251 + i / 4096);
	CHECK_INT(sandbox_upload(sb, "bin/data.bin", bin, nbin, err), 0);
	CHECK_INT(sandbox_download(sb, "bin/data.bin", 1 << 20, err, &data,
	    &len), 0);
	CHECK_INT(len, nbin);
	CHECK(data != NULL && len == nbin && memcmp(data, bin, nbin) == 0 &&
	    data[len] == '\0');
	free(data);
	data = NULL;
	/* exec sees the same bytes */
	CHECK_INT(conf_sh(sb, "wc -c < bin/data.bin", 0, 0, &r), 0);
	CHECK(r.out != NULL && strtol(r.out, NULL, 10) == (long)nbin);
	sandbox_exec_result_release(&r);
	/* replace with something shorter; an empty file */
	CHECK_INT(sandbox_upload(sb, "bin/data.bin", "xyz", 3, err), 0);
	CHECK_INT(sandbox_download(sb, "bin/data.bin", 100, err, &data, &len),
	    0);
	CHECK(data != NULL && len == 3 && memcmp(data, "xyz", 3) == 0);
	free(data);
	data = NULL;
	CHECK_INT(sandbox_upload(sb, "empty", "", 0, err), 0);
	CHECK_INT(sandbox_download(sb, "empty", 100, err, &data, &len), 0);
	CHECK(data != NULL && len == 0);
	free(data);
	data = NULL;
	/* limits, missing files, refused paths */
	CHECK_INT(sandbox_download(sb, "bin/data.bin", 2, err, &data, &len),
	    ENGINE_ELIMIT);
	CHECK(data == NULL);
	CHECK_INT(sandbox_download(sb, "no/such", 100, err, &data, &len),
	    ENGINE_ENOTFOUND);
	CHECK_INT(sandbox_upload(sb, "../escape", "x", 1, err), ENGINE_EINVAL);
	CHECK_INT(sandbox_upload(sb, "a/../../escape", "x", 1, err),
	    ENGINE_EINVAL);
	CHECK_INT(sandbox_upload(sb, "/tmp/escape", "x", 1, err),
	    ENGINE_EINVAL);
	CHECK_INT(sandbox_download(sb, "../x", 100, err, &data, &len),
	    ENGINE_EINVAL);
	CHECK(sandbox_download(sb, "bin", 100, err, &data, &len) != 0);
	CHECK(data == NULL);
	/* what exec writes, download reads */
	CHECK_INT(conf_sh(sb, "mkdir -p l/c && printf 12345 > l/c/d.bin && "
	    "printf ab > l/e.txt", 0, 0, &r), 0);
	CHECK_INT(r.exit_code, 0);
	sandbox_exec_result_release(&r);
	CHECK_INT(sandbox_download(sb, "l/c/d.bin", 100, err, &data, &len), 0);
	CHECK(data != NULL && len == 5 && memcmp(data, "12345", 5) == 0);
	free(data);
	data = NULL;

	/* list */
	CHECK_INT(sandbox_list(sb, "", 1000, err, &files, &n), 0);
	for (i = 0; i < n; i++) {
		if (strcmp(files[i].path, "l") == 0 && files[i].is_dir)
			found_dir = 1;
		if (strcmp(files[i].path, "l/c/d.bin") == 0 &&
		    !files[i].is_dir && files[i].size == 5 &&
		    files[i].mtime > 1000000000)
			found_d = 1;
		if (strcmp(files[i].path, "bin/data.bin") == 0 &&
		    files[i].size == 3)
			found_c = 1;
	}
	CHECK(found_dir && found_d && found_c);
	sandbox_files_free(files, n);
	files = NULL;
	CHECK_INT(sandbox_list(sb, "l", 1000, err, &files, &n), 0);
	CHECK_INT(n, 3);	/* l/c, l/c/d.bin, l/e.txt */
	for (i = 0, found_d = 0; i < n; i++)
		if (strcmp(files[i].path, "l/e.txt") == 0 && files[i].size == 2)
			found_d = 1;
	CHECK(found_d);
	sandbox_files_free(files, n);
	files = NULL;
	CHECK_INT(sandbox_list(sb, "", 2, err, &files, &n), ENGINE_ELIMIT);
	sandbox_files_free(files, n);
	files = NULL;
	CHECK_INT(sandbox_list(sb, "no/such", 10, err, &files, &n),
	    ENGINE_ENOTFOUND);
	CHECK_INT(sandbox_list(sb, "../", 10, err, &files, &n), ENGINE_EINVAL);
out:
	free(bin);
}

#ifdef SANDBOX_HAVE_TREES
/* ====== Trees ====== */

static void
conf_tar_add(struct archive *a, const char *path, const char *data,
    size_t len, int dir)
{
	struct archive_entry *e = archive_entry_new();

	archive_entry_set_pathname(e, path);
	archive_entry_set_filetype(e, dir ? AE_IFDIR : AE_IFREG);
	archive_entry_set_perm(e, dir ? 0755 : 0644);
	archive_entry_set_size(e, dir ? 0 : (la_int64_t)len);
	archive_entry_set_mtime(e, 1700000000, 0);
	archive_write_header(a, e);
	if (!dir)
		archive_write_data(a, data, len);
	archive_entry_free(e);
}

static void
conf_trees(struct sandbox *sb)
{
	struct archive		*a = NULL;
	struct archive_entry	*e;
	char			 err[ENGINE_ERRMAX], *tar = NULL, *data = NULL;
	char			*out = NULL, bin[1000], buf[2048];
	size_t			 cap = 1 << 20, used = 0, len = 0, i, olen = 0;
	int			 seen = 0, ok_bin = 0;
	la_ssize_t		 got;

	printf("# conf: trees\n");
	for (i = 0; i < sizeof(bin); i++)
		bin[i] = (char)(255 - i % 256);
	if ((tar = malloc(cap)) == NULL || (a = archive_write_new()) == NULL)
		goto out;
	archive_write_set_format_pax_restricted(a);
	archive_write_open_memory(a, tar, cap, &used);
	conf_tar_add(a, "t", NULL, 0, 1);
	conf_tar_add(a, "t/one.txt", "one", 3, 0);
	conf_tar_add(a, "t/deep/er/two.bin", bin, sizeof(bin), 0);
	conf_tar_add(a, "t/empty", "", 0, 0);
	archive_write_close(a);
	archive_write_free(a);
	a = NULL;
	CHECK_INT(sandbox_upload_tree(sb, "tree", tar, used, err), 0);
	CHECK_INT(sandbox_download(sb, "tree/t/deep/er/two.bin", 5000, err,
	    &data, &len), 0);
	CHECK(data != NULL && len == sizeof(bin) &&
	    memcmp(data, bin, len) == 0);
	free(data);
	data = NULL;
	/* A tar with ".." or an absolute name is refused whole. */
	used = 0;
	a = archive_write_new();
	archive_write_set_format_pax_restricted(a);
	archive_write_open_memory(a, tar, cap, &used);
	conf_tar_add(a, "ok.txt", "x", 1, 0);
	conf_tar_add(a, "../evil.txt", "x", 1, 0);
	archive_write_close(a);
	archive_write_free(a);
	a = NULL;
	CHECK_INT(sandbox_upload_tree(sb, "bad", tar, used, err),
	    ENGINE_EINVAL);
	CHECK_INT(sandbox_download(sb, "evil.txt", 10, err, &data, &len),
	    ENGINE_ENOTFOUND);

	CHECK_INT(sandbox_download_tree(sb, "tree", 1 << 20, err, &out,
	    &olen), 0);
	if (out != NULL && (a = archive_read_new()) != NULL) {
		archive_read_support_format_tar(a);
		if (archive_read_open_memory(a, out, olen) == ARCHIVE_OK)
			while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
				const char *p = archive_entry_pathname(e);

				seen++;
				if (strcmp(p, "t/deep/er/two.bin") == 0 &&
				    (got = archive_read_data(a, buf,
				    sizeof(buf))) == (la_ssize_t)sizeof(bin) &&
				    memcmp(buf, bin, sizeof(bin)) == 0)
					ok_bin = 1;
				CHECK(p[0] != '/' && strstr(p, "..") == NULL);
			}
		archive_read_free(a);
		a = NULL;
	}
	CHECK(ok_bin);
	CHECK(seen >= 4);	/* t, t/one.txt, t/deep/er/two.bin, t/empty */
	free(out);
	out = NULL;
	CHECK_INT(sandbox_download_tree(sb, "tree", 100, err, &out, &olen),
	    ENGINE_ELIMIT);
	CHECK_INT(sandbox_download_tree(sb, "no/such", 1 << 20, err, &out,
	    &olen), ENGINE_ENOTFOUND);
out:
	if (a != NULL)
		archive_write_free(a);
	free(out);
	free(tar);
}
#endif

/* ====== Failure mid-run ====== */

struct conf_bg {
	struct sandbox			*sb;
	struct sandbox_exec_result	 r;
	int				 rc;
	int64_t				 took_us;
};

static void *
conf_bg_exec(void *arg)
{
	struct conf_bg	*bg = arg;
	char		 cmd[128];
	int64_t		 t0 = conf_now_us();

	snprintf(cmd, sizeof(cmd), "sleep %s7; echo done", conf_mark);
	bg->rc = conf_sh(bg->sb, cmd, 30000, 0, &bg->r);
	bg->took_us = conf_now_us() - t0;
	return NULL;
}

static void
conf_midrun(struct sandbox *sb)
{
	struct sandbox_exec_result	r;
	struct conf_bg			bg;
	pthread_t			th;
	char				cmd[256];

	printf("# conf: failure mid-run\n");
	memset(&r, 0, sizeof(r));
	/* The command's shell dies while its children hold the pipes. */
	snprintf(cmd, sizeof(cmd), "sleep %s6 & echo before; kill -KILL $$; "
	    "echo after", conf_mark);
	CHECK_INT(conf_sh(sb, cmd, 20000, 0, &r), 0);
	CHECK_INT(r.exit_code, 137);
	CHECK_INT(r.signal, 9);
	CHECK_STR(r.out, "before\n");
	sandbox_exec_result_release(&r);
	CHECK_INT(conf_wait_marked_gone(sb), 0);

	if (conformance_opts.break_connection == NULL)
		return;
	memset(&bg, 0, sizeof(bg));
	bg.sb = sb;
	if (!CHECK(pthread_create(&th, NULL, conf_bg_exec, &bg) == 0))
		return;
	usleep(1000000);
	conformance_opts.break_connection(sb);
	pthread_join(th, NULL);
	CHECK(bg.took_us < 20000000);
	CHECK(bg.rc != 0 || bg.r.out == NULL || strstr(bg.r.out, "done") ==
	    NULL);
	sandbox_exec_result_release(&bg.r);
	CHECK_INT(conf_wait_marked_gone(sb), 0);
	/* The next command works again. */
	CHECK_INT(conf_sh(sb, "echo again", 0, 0, &r), 0);
	CHECK_STR(r.out, "again\n");
	sandbox_exec_result_release(&r);
}

/* ====== Destroy ====== */

static void
conf_destroy(struct sandbox *sb)
{
	struct sandbox_exec_result	 r;
	struct sandbox_file		*files = NULL;
	char				 err[ENGINE_ERRMAX], *data = NULL;
	size_t				 len = 0, n = 0;

	printf("# conf: destroy\n");
	memset(&r, 0, sizeof(r));
	CHECK_INT(sandbox_destroy(sb, err), 0);
	CHECK_INT(sandbox_destroy(sb, err), 0);
	if (conformance_opts.workspace_exists != NULL)
		CHECK_INT(conformance_opts.workspace_exists(sb), 0);
	CHECK_INT(conf_sh(sb, "true", 0, 0, &r), ENGINE_EINVAL);
	CHECK_INT(sandbox_upload(sb, "x", "x", 1, err), ENGINE_EINVAL);
	CHECK_INT(sandbox_download(sb, "x", 10, err, &data, &len),
	    ENGINE_EINVAL);
	CHECK_INT(sandbox_list(sb, "", 10, err, &files, &n), ENGINE_EINVAL);
}

/* ====== Entry ====== */

/*
 * Runs every check on provider p with sandboxes made from cfg; returns
 * how many of them failed (0: p conforms).
 */
static int
conformance_run(const struct sandbox_provider *p,
    const struct sandbox_config *cfg)
{
	struct sandbox	*sb = NULL, *sb2 = NULL;
	char		 err[ENGINE_ERRMAX];
	int		 failed0 = tap_failed;

	snprintf(conf_mark, sizeof(conf_mark), "7%06d",
	    (int)(getpid() % 1000000));
	printf("# conf: provider %s\n", p->name);
	if (!CHECK((sb = conf_make(p, cfg)) != NULL))
		goto out;
	CHECK(sb->id[0] != '\0');
	CHECK(sb->provider == p);
	/* Two sandboxes are apart. */
	if (CHECK((sb2 = conf_make(p, cfg)) != NULL)) {
		CHECK(strcmp(sb->id, sb2->id) != 0);
		CHECK_INT(sandbox_upload(sb2, "only2", "2", 1, err), 0);
	}
	conf_exec(sb);
	conf_cwd(sb);
	conf_timeouts(sb);
	conf_output(sb);
	conf_files(sb);
#ifdef SANDBOX_HAVE_TREES
	conf_trees(sb);
#endif
	conf_midrun(sb);
	if (sb2 != NULL) {
		char	*data = NULL;
		size_t	 len = 0;

		CHECK_INT(sandbox_download(sb, "only2", 10, err, &data, &len),
		    ENGINE_ENOTFOUND);
		conf_destroy(sb2);
	}
	conf_destroy(sb);
out:
	sandbox_free(sb2);
	sandbox_free(sb);
	return tap_failed - failed0;
}

/* ====== Bench (make bench reads the "# bench:" lines) ====== */

/* Prints "# bench: <what>: <ms> ms", the mean of n rounds since t0. */
static inline void
conf_bench_print(const char *what, int64_t t0, int n)
{
	printf("# bench: %s: %.2f ms\n", what,
	    (double)(conf_now_us() - t0) / n / 1000);
}

/* Runs `true` n times through sandbox_exec in sb; prints the mean. */
static inline void
conf_bench_exec(struct sandbox *sb, const char *what, int n)
{
	struct sandbox_exec_result	 r;
	struct sandbox_exec_req		 req;
	static const char *const	 argv[] = {"true", NULL};
	char				 err[ENGINE_ERRMAX];
	int64_t				 t0;
	int				 i;

	memset(&r, 0, sizeof(r));
	memset(&req, 0, sizeof(req));
	req.argv = argv;
	t0 = conf_now_us();
	for (i = 0; i < n; i++) {
		(void)sandbox_exec(sb, &req, err, &r);
		sandbox_exec_result_release(&r);
	}
	conf_bench_print(what, t0, n);
}

/* Runs the shell command cmd n times; prints the mean. */
static inline void
conf_bench_shell(const char *cmd, const char *what, int n)
{
	int64_t	t0 = conf_now_us();
	int	i;

	for (i = 0; i < n; i++)
		if (system(cmd) == -1)
			break;
	conf_bench_print(what, t0, n);
}

/* n sandboxes of p made from cfg and destroyed; prints the mean. */
static inline void
conf_bench_create(const struct sandbox_provider *p,
    const struct sandbox_config *cfg, const char *what, int n)
{
	struct sandbox	*sb;
	char		 err[ENGINE_ERRMAX];
	int64_t		 t0 = conf_now_us();
	int		 i;

	for (i = 0; i < n; i++) {
		sb = NULL;
		if (sandbox_create(p, cfg, err, &sb) == 0)
			sandbox_free(sb);
	}
	conf_bench_print(what, t0, n);
}

#endif
