/*
 * t_sandbox_local.c — the local (bubblewrap) sandbox provider, for real:
 * exec basics, files in and out, destroy, and containment (secrets, the
 * data directory, network, fork bomb, memory, CPU, file and workspace
 * size, wall-clock kill with nothing left running).
 *
 * Needs bwrap (Debian package bubblewrap) and python3: without bwrap the
 * test is one counted skip (NEED), without python3 it fails.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/sandbox/provider.h"
#include "tests/unit/host_procs.h"
#include "tests/unit/tap.h"
#include "tests/unit/tmp_engine.h"

static char	top[256];		/* this test's temporary folder */
static char	data_dir[300];		/* stands for flowcgi's data dir */
static char	secret_out[300];	/* a secret outside everything */

static void
write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
	chmod(path, 0600);
}

/* A config like the defaults, with workspaces under the fake data dir. */
static void
config(struct sandbox_config *cfg)
{
	struct conf c;

	conf_defaults(&c);
	snprintf(c.data_dir, sizeof(c.data_dir), "%s", data_dir);
	sandbox_config_init(cfg, &c);
	cfg->timeout = 20;
}

static struct sandbox *
make(const struct sandbox_config *cfg)
{
	struct sandbox	*sb = NULL;
	char		 err[ENGINE_ERRMAX];
	int		 rc;

	rc = sandbox_create(&sandbox_provider_local, cfg, err, &sb);
	if (rc != 0)
		printf("# create: %s\n", err);
	return sb;
}

/* Runs a shell command; returns exec's code; res filled. */
static int
sh(struct sandbox *sb, const char *cmd, int timeout_ms,
    struct sandbox_exec_result *res)
{
	struct sandbox_exec_req	req = {0};
	char			err[ENGINE_ERRMAX];
	int			rc;

	req.shell = cmd;
	req.timeout_ms = timeout_ms;
	rc = sandbox_exec(sb, &req, err, res);
	if (rc != 0)
		printf("# exec '%s': %s\n", cmd, err);
	return rc;
}

/* Host processes whose command line contains needle. */
static int
host_procs_with(const char *needle)
{
	return host_procs(needle, NULL, "grep");
}

/*
 * Counts host processes in pid namespace ns ("pid:[4026532...]", as a
 * process in it reads /proc/self/ns/pid): one sandbox's processes, not
 * every process of the sandbox uid (other sandboxes on the host, other
 * tests' among them, share it). Reading another user's ns link needs
 * root.
 */
static int
host_procs_in_ns(const char *ns)
{
	DIR		*d = opendir("/proc");
	struct dirent	*de;
	char		 path[300], link[64];
	ssize_t		 len;
	int		 n = 0;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/pid", de->d_name);
		if ((len = readlink(path, link, sizeof(link) - 1)) > 0) {
			link[len] = '\0';
			n += strcmp(link, ns) == 0;
		}
	}
	closedir(d);
	return n;
}

/*
 * Polls count(arg) every 20 ms until it is 0 or 5 s have passed, and
 * returns the last count: what a killed command leaves takes a moment to
 * be reaped, so this waits for it with a deadline instead of a sleep that
 * hopes it was long enough.
 */
static int
procs_gone(int (*count)(const char *), const char *arg)
{
	int	n, i;

	for (i = 0; (n = count(arg)) != 0 && i < 250; i++)
		usleep(20000);
	return n;
}

/* 1 when path is a mount point listed in /proc/self/mountinfo. */
static int
is_mounted(const char *path)
{
	FILE	*f = fopen("/proc/self/mountinfo", "r");
	char	 line[4096];
	int	 found = 0;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, path) != NULL)
			found = 1;
	fclose(f);
	return found;
}

/* The host folder of sandbox sb. */
static void
host_root(const struct sandbox_config *cfg, const struct sandbox *sb,
    char *buf, size_t n)
{
	snprintf(buf, n, "%s/%s", cfg->dir, sb->id);
}

/* ====== Basics ====== */

static void
test_basics(void)
{
	struct sandbox_config		 cfg;
	struct sandbox			*sb;
	struct sandbox_exec_result	 r = {0};
	struct sandbox_exec_req		 req = {0};
	static const char *const	 argv[] = {"printf", "%s|%s", "a b",
	    "c", NULL};
	static const char *const	 env[] = {"FOO=bar baz", "HOME=/x",
	    NULL};
	static const char *const	 badenv[] = {"NOEQUALS", NULL};
	char				 err[ENGINE_ERRMAX], *big;
	size_t				 i;

	config(&cfg);
	if (!CHECK((sb = make(&cfg)) != NULL))
		return;

	/* stdout and stderr apart, exit code */
	CHECK_INT(sh(sb, "echo out; echo err >&2; exit 3", 0, &r), 0);
	CHECK_STR(r.out, "out\n");
	CHECK_STR(r.err, "err\n");
	CHECK_INT(r.exit_code, 3);
	CHECK_INT(r.signal, 0);
	CHECK_INT(r.timed_out, 0);
	CHECK(r.elapsed_us > 0);
	sandbox_exec_result_release(&r);

	/* argv without a shell */
	req.argv = argv;
	CHECK_INT(sandbox_exec(sb, &req, err, &r), 0);
	CHECK_STR(r.out, "a b|c");
	CHECK_INT(r.exit_code, 0);
	sandbox_exec_result_release(&r);

	/* a missing program is the command's failure, not exec's */
	{
		static const char *const nope[] = {"no-such-program-x", NULL};

		req.argv = nope;
		CHECK_INT(sandbox_exec(sb, &req, err, &r), 0);
		CHECK(r.exit_code != 0);
		CHECK(strstr(r.err, "no-such-program-x") != NULL);
		sandbox_exec_result_release(&r);
	}

	/* environment: the caller's wins over the defaults */
	memset(&req, 0, sizeof(req));
	req.shell = "echo \"$FOO|$HOME|$PATH\"";
	req.env = env;
	CHECK_INT(sandbox_exec(sb, &req, err, &r), 0);
	CHECK_STR(r.out, "bar baz|/x|/usr/bin:/bin\n");
	sandbox_exec_result_release(&r);
	req.env = badenv;
	CHECK_INT(sandbox_exec(sb, &req, err, &r), ENGINE_EINVAL);

	/* the workspace is the cwd; hostname and user */
	CHECK_INT(sh(sb, "pwd; hostname; id -u", 0, &r), 0);
	{
		char want[64];

		snprintf(want, sizeof(want), "/workspace\nsandbox\n%d\n",
		    geteuid() == 0 ? cfg.uid : (int)geteuid());
		CHECK_STR(r.out, want);
	}
	sandbox_exec_result_release(&r);

	/* stdin, large both ways: poll() must keep all pipes moving */
	big = malloc(3 << 20);
	for (i = 0; big != NULL && i < (3 << 20); i++)
		big[i] = (char)('a' + i % 26);
	memset(&req, 0, sizeof(req));
	req.shell = "cat; cat /nonexistent-file-x";
	req.stdin_data = big;
	req.stdin_len = 300000;
	CHECK_INT(sandbox_exec(sb, &req, err, &r), 0);
	CHECK_INT(r.out_len, 300000);
	CHECK(big != NULL && memcmp(r.out, big, 300000) == 0);
	CHECK(strstr(r.err, "nonexistent-file-x") != NULL);
	CHECK_INT(r.out_truncated, 0);
	sandbox_exec_result_release(&r);

	/* more than max_output: truncated, flagged, the command still ends */
	req.stdin_len = 3 << 20;
	req.max_output = 1 << 20;
	CHECK_INT(sandbox_exec(sb, &req, err, &r), 0);
	CHECK_INT(r.out_len, 1 << 20);
	CHECK_INT(r.out_truncated, 1);
	CHECK_INT(r.exit_code, 1);	/* from the second cat */
	sandbox_exec_result_release(&r);
	CHECK_INT(sh(sb, "head -c 5000000 /dev/zero >&2; echo done", 0, &r), 0);
	CHECK_STR(r.out, "done\n");
	CHECK_INT(r.err_len, cfg.max_output);
	CHECK_INT(r.err_truncated, 1);
	CHECK_INT(r.out_truncated, 0);
	sandbox_exec_result_release(&r);
	free(big);

	/* a reader that goes away early does not hurt us (SIGPIPE) */
	memset(&req, 0, sizeof(req));
	req.shell = "head -c 10";
	req.stdin_data = "0123456789abcdefghij";
	req.stdin_len = 20;
	CHECK_INT(sandbox_exec(sb, &req, err, &r), 0);
	CHECK_STR(r.out, "0123456789");
	sandbox_exec_result_release(&r);

	/* files persist between commands; cwd inside the workspace */
	CHECK_INT(sh(sb, "mkdir -p sub/dir && echo hi > sub/dir/f.txt", 0,
	    &r), 0);
	sandbox_exec_result_release(&r);
	memset(&req, 0, sizeof(req));
	req.shell = "pwd; cat f.txt";
	req.cwd = "sub/dir";
	CHECK_INT(sandbox_exec(sb, &req, err, &r), 0);
	CHECK_STR(r.out, "/workspace/sub/dir\nhi\n");
	sandbox_exec_result_release(&r);
	req.cwd = "../etc";
	CHECK_INT(sandbox_exec(sb, &req, err, &r), ENGINE_EINVAL);
	req.cwd = "/etc";
	CHECK_INT(sandbox_exec(sb, &req, err, &r), ENGINE_EINVAL);
	req.cwd = "missing";
	CHECK_INT(sandbox_exec(sb, &req, err, &r), ENGINE_ENOTFOUND);
	req.cwd = NULL;
	req.shell = NULL;
	CHECK_INT(sandbox_exec(sb, &req, err, &r), ENGINE_EINVAL);
	sandbox_free(sb);
}

static void
test_files(void)
{
	struct sandbox_config		 cfg;
	struct sandbox			*sb;
	struct sandbox_exec_result	 r = {0};
	struct sandbox_file		*files = NULL;
	char				 err[ENGINE_ERRMAX], root[1200], *data;
	static const char		 bin[] = "a\0b\0c\xff";
	size_t				 len, n = 0, i;
	int				 seen = 0;

	config(&cfg);
	if (!CHECK((sb = make(&cfg)) != NULL))
		return;
	CHECK_INT(sandbox_upload(sb, "a/b/c.txt", "hello", 5, err), 0);
	CHECK_INT(sandbox_upload(sb, "x.bin", bin, sizeof(bin), err), 0);
	CHECK_INT(sandbox_upload(sb, "x.bin", bin, sizeof(bin), err), 0);
	CHECK_INT(sandbox_download(sb, "x.bin", 100, err, &data, &len), 0);
	CHECK_INT(len, sizeof(bin));
	CHECK(data != NULL && memcmp(data, bin, sizeof(bin)) == 0);
	free(data);
	CHECK_INT(sandbox_download(sb, "a/b/c.txt", 4, err, &data, &len),
	    ENGINE_ELIMIT);
	CHECK_INT(sandbox_download(sb, "a/b/none", 4, err, &data, &len),
	    ENGINE_ENOTFOUND);
	CHECK_INT(sandbox_download(sb, "a/b", 100, err, &data, &len),
	    ENGINE_EINVAL);
	CHECK_INT(sandbox_upload(sb, "../x", "x", 1, err), ENGINE_EINVAL);
	CHECK_INT(sandbox_upload(sb, "/etc/x", "x", 1, err), ENGINE_EINVAL);
	CHECK_INT(sandbox_upload(sb, "a//x", "x", 1, err), ENGINE_EINVAL);

	/* what the host uploads, the sandbox sees and may change */
	CHECK_INT(sh(sb, "cat a/b/c.txt && echo more >> a/b/c.txt && "
	    "echo made > made.txt", 0, &r), 0);
	CHECK_STR(r.out, "hello");
	CHECK_INT(r.exit_code, 0);
	sandbox_exec_result_release(&r);
	CHECK_INT(sandbox_download(sb, "made.txt", 100, err, &data, &len), 0);
	CHECK_STR(data, "made\n");
	free(data);
	CHECK_INT(sandbox_download(sb, "a/b/c.txt", 100, err, &data, &len), 0);
	CHECK_STR(data, "hellomore\n");
	free(data);

	/* list */
	CHECK_INT(sandbox_list(sb, "", 100, err, &files, &n), 0);
	CHECK_INT(n, 5);	/* a, a/b, a/b/c.txt, x.bin, made.txt */
	for (i = 0; i < n; i++) {
		if (strcmp(files[i].path, "a/b/c.txt") == 0 &&
		    files[i].size == 10 && !files[i].is_dir &&
		    files[i].mtime > time(NULL) - 600)
			seen |= 1;
		if (strcmp(files[i].path, "a/b") == 0 && files[i].is_dir)
			seen |= 2;
		if (strcmp(files[i].path, "x.bin") == 0 &&
		    files[i].size == (int64_t)sizeof(bin))
			seen |= 4;
	}
	CHECK_INT(seen, 7);
	sandbox_files_free(files, n);
	CHECK_INT(sandbox_list(sb, "a", 100, err, &files, &n), 0);
	CHECK_INT(n, 2);
	if (n == 2)
		CHECK_STR(files[1].path, "a/b/c.txt");
	sandbox_files_free(files, n);
	CHECK_INT(sandbox_list(sb, "", 2, err, &files, &n), ENGINE_ELIMIT);
	CHECK(strstr(err, "more than 2") != NULL);
	CHECK_INT(sandbox_list(sb, "nope", 10, err, &files, &n),
	    ENGINE_ENOTFOUND);

	/* symlinks planted inside never lead the host outside */
	CHECK_INT(sh(sb, "ln -s /etc/passwd link; ln -s / rootlink; "
	    "mkfifo fifo", 0, &r), 0);
	sandbox_exec_result_release(&r);
	CHECK(sandbox_download(sb, "link", 100000, err, &data, &len) != 0);
	CHECK(sandbox_download(sb, "rootlink/etc/passwd", 100000, err, &data,
	    &len) != 0);
	CHECK(sandbox_upload(sb, "rootlink/tmp/planted", "x", 1, err) != 0);
	CHECK(sandbox_upload(sb, "link", "x", 1, err) != 0);
	CHECK(sandbox_upload(sb, "fifo", "x", 1, err) != 0);
	CHECK(sandbox_download(sb, "fifo", 10, err, &data, &len) != 0);
	CHECK(access("/tmp/planted", F_OK) != 0);
	CHECK_INT(sandbox_list(sb, "rootlink", 10, err, &files, &n),
	    ENGINE_EINVAL);

	/* destroy removes everything, and twice is fine */
	host_root(&cfg, sb, root, sizeof(root));
	CHECK(access(root, F_OK) == 0);
	CHECK_INT(sandbox_destroy(sb, err), 0);
	CHECK(access(root, F_OK) != 0);
	CHECK_INT(is_mounted(root), 0);
	CHECK_INT(sandbox_destroy(sb, err), 0);
	CHECK_INT(sh(sb, "true", 0, &r), ENGINE_EINVAL);
	CHECK_INT(sandbox_upload(sb, "y", "x", 1, err), ENGINE_EINVAL);
	sandbox_free(sb);
}

/* ====== Containment ====== */

static void
test_secrets(void)
{
	struct sandbox_config		 cfg;
	struct sandbox			*sb;
	struct sandbox_exec_result	 r = {0};
	char				 cmd[4096];

	config(&cfg);
	if (!CHECK((sb = make(&cfg)) != NULL))
		return;
	CHECK_INT(sh(sb, "cat /etc/shadow", 0, &r), 0);
	CHECK(r.exit_code != 0);
	CHECK(strstr(r.out, "root:") == NULL);
	sandbox_exec_result_release(&r);
	/* nothing of /etc but the short list */
	CHECK_INT(sh(sb, "ls /etc | tr '\\n' ' '", 0, &r), 0);
	CHECK(strstr(r.out, "shadow") == NULL);
	CHECK(strstr(r.out, "ld.so.cache") != NULL);
	printf("# /etc in the sandbox: %s\n", r.out);
	sandbox_exec_result_release(&r);
	/* the data dir, the sandbox folder, a planted secret, homes */
	snprintf(cmd, sizeof(cmd), "cat %s/admin-token; ls %s; ls %s; "
	    "cat %s; ls /root; ls /home; ls /work; "
	    "echo end", data_dir, data_dir, cfg.dir, secret_out);
	CHECK_INT(sh(sb, cmd, 0, &r), 0);
	CHECK_STR(r.out, "end\n");
	CHECK(strstr(r.out, "TOPSECRET") == NULL);
	CHECK(strstr(r.err, "TOPSECRET") == NULL);
	sandbox_exec_result_release(&r);
	/* /usr is read-only; the top is not writable */
	CHECK_INT(sh(sb, "touch /usr/x || touch /x || echo denied", 0, &r), 0);
	CHECK_STR(r.out, "denied\n");
	sandbox_exec_result_release(&r);
	/* no capabilities, no new privileges, few processes visible */
	CHECK_INT(sh(sb, "grep -E '^(CapEff|NoNewPrivs)' /proc/self/status | "
	    "tr -s '\\t' ' '", 0, &r), 0);
	CHECK(strstr(r.out, "CapEff: 0000000000000000") != NULL);
	if (geteuid() == 0)
		CHECK(strstr(r.out, "NoNewPrivs: 1") != NULL);
	sandbox_exec_result_release(&r);
	CHECK_INT(sh(sb, "ls /proc | grep -c '^[0-9]'", 0, &r), 0);
	CHECK(atoi(r.out) <= 5);
	sandbox_exec_result_release(&r);
	sandbox_free(sb);
}

static void
test_network(void)
{
	struct sandbox_config		 cfg;
	struct sandbox			*sb;
	struct sandbox_exec_result	 r = {0};
	struct sockaddr_in		 sa;
	socklen_t			 salen = sizeof(sa);
	char				 cmd[1024];
	int				 ls, c;

	/* a listener on the host's loopback */
	ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(bind(ls, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK(listen(ls, 8) == 0);
	CHECK(getsockname(ls, (struct sockaddr *)&sa, &salen) == 0);

	config(&cfg);
	if (!CHECK((sb = make(&cfg)) != NULL))
		return;
	snprintf(cmd, sizeof(cmd), "python3 -c '\n"
	    "import socket\n"
	    "for host, port in ((\"1.1.1.1\", 53), (\"127.0.0.1\", %d)):\n"
	    "    try:\n"
	    "        socket.create_connection((host, port), timeout=3)\n"
	    "        print(\"connected\", host)\n"
	    "    except OSError as e:\n"
	    "        print(\"refused\", host, e.errno)\n"
	    "'; cat /sys/class/net/*/operstate 2>/dev/null | tr '\\n' ' '; "
	    "ls /sys/class/net 2>/dev/null", ntohs(sa.sin_port));
	CHECK_INT(sh(sb, cmd, 0, &r), 0);
	CHECK(strstr(r.out, "refused 1.1.1.1") != NULL);
	CHECK(strstr(r.out, "refused 127.0.0.1") != NULL);
	CHECK(strstr(r.out, "connected") == NULL);
	printf("# no network: %s", r.out);
	sandbox_exec_result_release(&r);
	c = accept(ls, NULL, NULL);
	CHECK(c < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
	sandbox_free(sb);
	close(ls);
}

/* A tiny origin on the host's loopback: answers "hello" to each request
 * and keeps the last request head it got. */
struct origin {
	int		ls;
	int		port;
	int		served;
	char		last[2048];
	pthread_t	t;
};

static void *
origin_main(void *arg)
{
	struct origin	*o = arg;
	char		 buf[2048];
	size_t		 len;
	ssize_t		 n;
	int		 c;
	static const char hello[] = "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n"
	    "\r\nhello";

	while ((c = accept(o->ls, NULL, NULL)) >= 0) {
		len = 0;
		while (len < sizeof(buf) - 1 &&
		    (n = read(c, buf + len, sizeof(buf) - 1 - len)) > 0) {
			len += (size_t)n;
			buf[len] = '\0';
			if (strstr(buf, "\r\n\r\n") != NULL)
				break;
		}
		buf[len] = '\0';
		memcpy(o->last, buf, len + 1);
		o->served++;
		if (write(c, hello, sizeof(hello) - 1) < 0)
			printf("# origin: write: %s\n", strerror(errno));
		close(c);
	}
	return NULL;
}

static int
origin_start(struct origin *o)
{
	struct sockaddr_in	sa;
	socklen_t		salen = sizeof(sa);

	memset(o, 0, sizeof(*o));
	o->ls = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(o->ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(o->ls, 8) != 0 ||
	    getsockname(o->ls, (struct sockaddr *)&sa, &salen) != 0)
		return -1;
	o->port = ntohs(sa.sin_port);
	return pthread_create(&o->t, NULL, origin_main, o);
}

static void
origin_stop(struct origin *o)
{
	shutdown(o->ls, SHUT_RDWR);
	pthread_join(o->t, NULL);
	close(o->ls);
}

/* A python3 fetch of url through the proxy the environment names:
 * prints "body <text>" or "http <code> <message>" or "error <text>". */
static const char fetch_py[] = "python3 -c '\n"
    "import sys, urllib.request, urllib.error\n"
    "try:\n"
    "    print(\"body\", urllib.request.urlopen(sys.argv[1], timeout=10)"
    ".read().decode())\n"
    "except urllib.error.HTTPError as e:\n"
    "    print(\"http\", e.code, e.read().decode())\n"
    "except Exception as e:\n"
    "    print(\"error\", e)\n"
    "' ";

static void
test_network_proxy(void)
{
	struct sandbox_config		 cfg;
	struct sandbox			*sb;
	struct sandbox_exec_result	 r = {0};
	struct origin			 o;
	char				 cmd[2048];

	if (!CHECK(origin_start(&o) == 0))
		return;
	/* the default list ("*"): public hosts only, so not the host's
	 * loopback; and no direct way out at all */
	config(&cfg);
	cfg.network = 1;
	if (!CHECK((sb = make(&cfg)) != NULL))
		goto out;
	snprintf(cmd, sizeof(cmd), "NO_PROXY= no_proxy= %shttp://127.0.0.1:%d/x;"
	    " %shttp://10.1.2.3/; %shttp://[fe80::1]:8080/; python3 -c '\n"
	    "import socket\n"
	    "for host, port in ((\"1.1.1.1\", 53), (\"127.0.0.1\", %d)):\n"
	    "    try:\n"
	    "        socket.create_connection((host, port), timeout=3)\n"
	    "        print(\"connected\", host)\n"
	    "    except OSError as e:\n"
	    "        print(\"refused\", host, e.errno)\n"
	    "'; ls /sys/class/net; echo \"$HTTPS_PROXY $PIP_BREAK_SYSTEM_PACKAGES"
	    " $PYTHONUSERBASE $PATH\"", fetch_py, o.port, fetch_py, fetch_py,
	    o.port);
	CHECK_INT(sh(sb, cmd, 0, &r), 0);
	printf("# network, default list: %s%s", r.out, r.err);
	CHECK(strstr(r.out, "http 403 flowcgi sandbox proxy: '127.0.0.1' "
	    "resolves to 127.0.0.1, a loopback address") != NULL);
	CHECK(strstr(r.out, "http 403 flowcgi sandbox proxy: '10.1.2.3' "
	    "resolves to 10.1.2.3, a private or reserved address") != NULL);
	CHECK(strstr(r.out, "http 403 flowcgi sandbox proxy: 'fe80::1' "
	    "resolves to fe80::1, a link-local address") != NULL);
	CHECK(strstr(r.out, "refused 1.1.1.1") != NULL);
	CHECK(strstr(r.out, "refused 127.0.0.1") != NULL);
	CHECK(strstr(r.out, "connected") == NULL);
	CHECK(strstr(r.out, "eth") == NULL);
	CHECK(strstr(r.out, "http://127.0.0.1:3128 1 /workspace/.local "
	    "/workspace/.local/bin:") != NULL);
	CHECK_INT(o.served, 0);
	sandbox_exec_result_release(&r);
	/* the command's own status and signal come through the forwarder */
	CHECK_INT(sh(sb, "exit 7", 0, &r), 0);
	CHECK_INT(r.exit_code, 7);
	sandbox_exec_result_release(&r);
	CHECK_INT(sh(sb, "kill -9 $$", 0, &r), 0);
	CHECK_INT(r.signal, 9);
	sandbox_exec_result_release(&r);
	sandbox_free(sb);

	/* the host's loopback listed: plain HTTP and CONNECT reach it */
	snprintf(cfg.network_allow, sizeof(cfg.network_allow), "127.0.0.1");
	if (!CHECK((sb = make(&cfg)) != NULL))
		goto out;
	snprintf(cmd, sizeof(cmd), "%shttp://127.0.0.1:%d/x?y=1; python3 -c '\n"
	    "import socket\n"
	    "s = socket.create_connection((\"127.0.0.1\", 3128))\n"
	    "s.sendall(b\"CONNECT 127.0.0.1:%d HTTP/1.1\\r\\n\\r\\n\")\n"
	    "print(s.recv(100).decode().split(\"\\r\")[0])\n"
	    "s.sendall(b\"GET /t HTTP/1.0\\r\\n\\r\\n\")\n"
	    "print(\"tunnel\", s.makefile(\"rb\").read().decode()"
	    ".split(\"\\r\\n\\r\\n\")[1])\n"
	    "'", fetch_py, o.port, o.port);
	CHECK_INT(sh(sb, cmd, 0, &r), 0);
	printf("# network, 127.0.0.1 listed: %s%s", r.out, r.err);
	CHECK(strstr(r.out, "body hello") != NULL);
	CHECK(strstr(r.out, "HTTP/1.1 200 Connection established") != NULL);
	CHECK(strstr(r.out, "tunnel hello") != NULL);
	CHECK_INT(o.served, 2);
	sandbox_exec_result_release(&r);
	sandbox_free(sb);

	/* a name on the list, the address not: the name is refused */
	snprintf(cfg.network_allow, sizeof(cfg.network_allow),
	    "pypi.org  *.pythonhosted.org,");
	if (!CHECK((sb = make(&cfg)) != NULL))
		goto out;
	snprintf(cmd, sizeof(cmd), "NO_PROXY= no_proxy= %shttp://127.0.0.1:%d/x",
	    fetch_py, o.port);
	CHECK_INT(sh(sb, cmd, 0, &r), 0);
	CHECK(strstr(r.out, "http 403 flowcgi sandbox proxy: '127.0.0.1' is "
	    "not an allowed host; the sandbox may reach only: pypi.org, "
	    "*.pythonhosted.org") != NULL);
	CHECK_INT(o.served, 2);
	sandbox_exec_result_release(&r);
	sandbox_free(sb);
out:
	origin_stop(&o);
}

static void
test_fork_bomb(void)
{
	struct sandbox_config		 cfg;
	struct sandbox			*sb;
	struct sandbox_exec_result	 r = {0};
	char				*p, *line, ns[64];
	int				 peak = 0, n, lines = 0, pid, st;

	config(&cfg);
	cfg.processes = 32;
	/* As root the limit counts every process of sandbox.uid on the host:
	 * a uid of its own, so that tests side by side (their sandboxes run
	 * as the default uid) neither fill it before the bomb nor are starved
	 * by it. */
	if (geteuid() == 0)
		cfg.uid = 64000 + (int)(getpid() % 1000);
	if (!CHECK((sb = make(&cfg)) != NULL))
		return;
	/* The bomb forks as fast as it can (in a subshell: the main shell
	 * forks once, before the limit is reached); the loop counts the
	 * processes in the pid namespace with shell built-ins only. */
	CHECK_INT(sh(sb, "readlink /proc/self/ns/pid; (f() { f | f & }; f); "
	    "while :; do n=0; for p in /proc/[0-9]*; do [ -e $p ] && "
	    "n=$((n+1)); done; "
	    "echo $n; done", 4000, &r), 0);
	CHECK_INT(r.timed_out, 1);
	p = r.out;
	line = strsep(&p, "\n");	/* the sandbox's pid namespace */
	snprintf(ns, sizeof(ns), "%s", line != NULL ? line : "");
	CHECK(strncmp(ns, "pid:[", 5) == 0);
	for (; p != NULL && (line = strsep(&p, "\n")) != NULL;)
		if ((n = atoi(line)) > 0) {
			lines++;
			if (n > peak)
				peak = n;
		}
	printf("# fork bomb: peak %d processes in the sandbox (limit %d), "
	    "%d samples, exit %d; stderr starts: %.60s\n", peak,
	    cfg.processes, lines, r.exit_code, r.err);
	CHECK(lines > 0);
	/* it did fork; how far depends on other processes of the sandbox
	 * uid on the host, which share RLIMIT_NPROC (other sandboxes) */
	CHECK(peak >= 2);
	/* + bwrap's pid 1; the glob of /proc races with exits and forks
	 * (dead ones are dropped by the -e test), so a sample may count a
	 * few that were never alive together. An unlimited bomb reaches
	 * thousands in these 4 s. */
	CHECK(peak <= cfg.processes + 8);
	sandbox_exec_result_release(&r);
	/* the host is fine: nothing left of this sandbox, fork works */
	if (geteuid() == 0)
		CHECK_INT(procs_gone(host_procs_in_ns, ns), 0);
	pid = fork();
	if (pid == 0)
		_exit(7);
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WEXITSTATUS(st) == 7);
	/* and the sandbox still works */
	CHECK_INT(sh(sb, "echo alive", 0, &r), 0);
	CHECK_STR(r.out, "alive\n");
	sandbox_exec_result_release(&r);
	sandbox_free(sb);
}

static void
test_memory_cpu(void)
{
	struct sandbox_config		 cfg;
	struct sandbox			*sb;
	struct sandbox_exec_result	 r = {0};

	config(&cfg);
	cfg.memory = 64 << 20;
	cfg.cpu_seconds = 1;
	if (!CHECK((sb = make(&cfg)) != NULL))
		return;
	CHECK_INT(sh(sb, "python3 -c 'a = bytearray(200 << 20); print(1)'",
	    0, &r), 0);
	CHECK(r.exit_code != 0);
	CHECK(strstr(r.err, "MemoryError") != NULL);
	CHECK(r.out_len == 0);
	sandbox_exec_result_release(&r);
	CHECK_INT(sh(sb, "python3 -c '\nx = []\nwhile True: x.append("
	    "\"a\" * 1000000)'", 0, &r), 0);
	CHECK(r.exit_code != 0);
	CHECK(strstr(r.err, "MemoryError") != NULL);
	sandbox_exec_result_release(&r);
	/*
	 * CPU: killed by SIGXCPU after cpu_seconds, before the timeout (15 s):
	 * not timed out and SIGXCPU say so without a clock (how fast is make
	 * bench's).
	 */
	CHECK_INT(sh(sb, "exec python3 -c 'while True: pass'", 15000, &r), 0);
	CHECK_INT(r.timed_out, 0);
	CHECK_INT(r.signal, SIGXCPU);
	printf("# cpu loop ended after %lld ms, exit %d\n",
	    (long long)r.elapsed_us / 1000, r.exit_code);
	sandbox_exec_result_release(&r);
	sandbox_free(sb);
}

static void
test_sizes(int no_mount)
{
	struct sandbox_config		 cfg;
	struct sandbox			*sb;
	struct sandbox_exec_result	 r = {0};
	struct sandbox_file		*files = NULL;
	char				 err[ENGINE_ERRMAX], root[1200];
	size_t				 n = 0, i;
	int64_t				 total = 0;
	static char			 three_mb[3 << 20];

	config(&cfg);
	cfg.no_mount = no_mount;
	cfg.file_size = 1 << 20;
	cfg.workspace_size = 4 << 20;
	if (!CHECK((sb = make(&cfg)) != NULL))
		return;
	host_root(&cfg, sb, root, sizeof(root));
	if (!no_mount && geteuid() == 0)
		CHECK_INT(is_mounted(root), 1);

	/* one file past sandbox.file_size: SIGXFSZ, the file stays small */
	CHECK_INT(sh(sb, "exec head -c 2000000 /dev/zero > big", 0, &r), 0);
	CHECK_INT(r.signal, SIGXFSZ);
	sandbox_exec_result_release(&r);
	CHECK_INT(sh(sb, "stat -c %s big", 0, &r), 0);
	CHECK_INT(atoi(r.out), 1 << 20);
	sandbox_exec_result_release(&r);
	CHECK_INT(sandbox_upload(sb, "up", three_mb, sizeof(three_mb), err),
	    ENGINE_ELIMIT);
	CHECK(strstr(err, "sandbox.file_size") != NULL);

	/* many files past sandbox.workspace_size, /tmp counted too */
	CHECK_INT(sh(sb, "for i in 1 2 3 4 5 6; do head -c 900000 /dev/zero "
	    "> /tmp/f$i || echo failed $i; done; exit 0", 0, &r), 0);
	printf("# %s: %.100s|%.100s\n", no_mount ? "accounting" : "tmpfs",
	    r.out, r.err);
	/* tmpfs: the write that does not fit fails at once; accounting: the
	 * command that went over is flagged, the next one cannot write */
	if (geteuid() != 0)
		no_mount = 1;	/* no tmpfs without root: accounting */
	if (!no_mount) {
		CHECK(strstr(r.out, "failed 5") != NULL);
		CHECK(strstr(r.err, "No space left") != NULL);
	}
	CHECK_INT(r.workspace_full, 1);
	sandbox_exec_result_release(&r);
	CHECK_INT(sh(sb, "du -sk /tmp /workspace | awk '{s+=$1} END {print s}'",
	    0, &r), 0);
	printf("# used: %s", r.out);
	/* tmpfs: a hard cap; accounting: one command's files over it */
	CHECK(atoi(r.out) <= (no_mount ? 4096 + 6 * 900 : 4096));
	sandbox_exec_result_release(&r);
	CHECK_INT(sh(sb, "sh -c 'echo x > one-more' || echo refused", 0, &r),
	    0);
	CHECK(strstr(r.out, "refused") != NULL);
	printf("# over the cap: %s", r.err);
	CHECK(strstr(r.err, no_mount ? "File size limit" : "I/O error") !=
	    NULL);
	CHECK_INT(r.workspace_full, 1);
	sandbox_exec_result_release(&r);
	CHECK_INT(sandbox_upload(sb, "small", "x", 1, err), ENGINE_ELIMIT);
	CHECK(strstr(err, "sandbox.workspace_size") != NULL);
	/* removing files makes room again */
	CHECK_INT(sh(sb, "rm -f /tmp/f* big", 0, &r), 0);
	sandbox_exec_result_release(&r);
	CHECK_INT(sh(sb, "echo x > one-more && echo ok", 0, &r), 0);
	CHECK_STR(r.out, "ok\n");
	CHECK_INT(r.workspace_full, 0);
	sandbox_exec_result_release(&r);
	CHECK_INT(sandbox_list(sb, "", 100, err, &files, &n), 0);
	for (i = 0; i < n; i++)
		total += files[i].size;
	CHECK_INT(total, 2);
	sandbox_files_free(files, n);
	sandbox_free(sb);
	CHECK(access(root, F_OK) != 0);
	CHECK_INT(is_mounted(root), 0);
}

static void
test_timeout(void)
{
	struct sandbox_config		 cfg;
	struct sandbox			*sb;
	struct sandbox_exec_result	 r = {0};
	char				 cmd[512], marker[64];
	struct timespec			 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	/* sleep takes fractional seconds: the fraction marks our processes */
	snprintf(marker, sizeof(marker), "1000.%09ld", ts.tv_nsec | 1);
	config(&cfg);
	if (!CHECK((sb = make(&cfg)) != NULL))
		return;
	snprintf(cmd, sizeof(cmd), "setsid sleep %s & (trap '' HUP TERM; "
	    "sleep %s) & nohup sleep %s >/dev/null 2>&1 & echo started; "
	    "sleep %s", marker, marker, marker, marker);
	CHECK_INT(sh(sb, cmd, 1500, &r), 0);
	CHECK_INT(r.timed_out, 1);
	CHECK_INT(r.signal, SIGKILL);
	CHECK_STR(r.out, "started\n");
	/* not before the timeout; long before the 1000 s sleeps would end
	 * on their own (a bound with room for a loaded machine) */
	CHECK(r.elapsed_us >= 1500000 && r.elapsed_us < 60000000);
	printf("# timeout after %lld ms\n", (long long)r.elapsed_us / 1000);
	sandbox_exec_result_release(&r);
	CHECK_INT(procs_gone(host_procs_with, marker), 0);
	/* the default time limit is cfg.timeout */
	cfg.timeout = 1;
	sandbox_free(sb);
	if (!CHECK((sb = make(&cfg)) != NULL))
		return;
	CHECK_INT(sh(sb, cmd, 0, &r), 0);
	CHECK_INT(r.timed_out, 1);
	CHECK(r.elapsed_us >= 1000000 && r.elapsed_us < 60000000);
	sandbox_exec_result_release(&r);
	CHECK_INT(procs_gone(host_procs_with, marker), 0);
	/* a command that returns leaves nothing behind either */
	snprintf(cmd, sizeof(cmd), "setsid sleep %s & echo bg", marker);
	CHECK_INT(sh(sb, cmd, 0, &r), 0);
	CHECK_INT(r.timed_out, 0);
	CHECK_INT(r.exit_code, 0);
	sandbox_exec_result_release(&r);
	CHECK_INT(procs_gone(host_procs_with, marker), 0);
	sandbox_free(sb);
}

/* ====== Several threads at once ====== */

static struct sandbox_config conc_cfg;

static void *
conc_worker(void *arg)
{
	struct sandbox			*sb = make(&conc_cfg);
	struct sandbox_exec_result	 r = {0};
	char				 cmd[128], want[64];
	long				 ok = 0, i, t = (long)(intptr_t)arg;

	for (i = 0; sb != NULL && i < 15; i++) {
		snprintf(cmd, sizeof(cmd), "echo %ld-%ld; sleep 0.0%ld", t, i,
		    i % 3);
		snprintf(want, sizeof(want), "%ld-%ld\n", t, i);
		if (sh(sb, cmd, 0, &r) == 0 && strcmp(r.out, want) == 0 &&
		    r.exit_code == 0 && r.elapsed_us < 2000000)
			ok++;
		else
			printf("# thread %ld run %ld: exit %d, %lld ms, out "
			    "'%.40s' err '%.200s'\n", t, i, r.exit_code,
			    (long long)r.elapsed_us / 1000, r.out ? r.out : "",
			    r.err ? r.err : "");
		sandbox_exec_result_release(&r);
	}
	sandbox_free(sb);
	return (void *)(intptr_t)ok;
}

static void
test_threads(void)
{
	pthread_t	th[4];
	void		*ok;
	long		 total = 0;
	int		 i;

	/* A pipe end leaked into another thread's child would hold a
	 * command's output open: each exec stays quick and exact. */
	config(&conc_cfg);
	for (i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, conc_worker, (void *)(intptr_t)i);
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], &ok);
		total += (long)(intptr_t)ok;
	}
	CHECK_INT(total, 4 * 15);
}

static void
test_probe(void)
{
	struct conf	c;
	char		err[ENGINE_ERRMAX];
	int		rc;

	rc = sandbox_local_probe(NULL, err);
	if (rc != 0)
		printf("# probe: %s\n", err);
	CHECK_INT(rc, 0);
	conf_defaults(&c);
	snprintf(c.data_dir, sizeof(c.data_dir), "%s", data_dir);
	CHECK_INT(sandbox_local_probe(&c, err), 0);
	/* a sandbox folder that cannot be made is named */
	snprintf(c.sandbox_dir, sizeof(c.sandbox_dir), "%s/admin-token/x",
	    data_dir);
	CHECK(sandbox_local_probe(&c, err) != 0);
	CHECK(strstr(err, "sandbox.dir") != NULL);
	CHECK(sandbox_provider_find("local") == &sandbox_provider_local);
	CHECK(sandbox_provider_find("nope") == NULL);
	/* the same through the registry, as the engine asks at start-up */
	CHECK_INT(sandbox_probe("local", &c, err), SANDBOX_EFAIL);
	CHECK(strstr(err, "sandbox.dir") != NULL);
	c.sandbox_dir[0] = '\0';
	CHECK_INT(sandbox_probe("local", &c, err), 0);
	CHECK_INT(sandbox_probe("nope", &c, err), ENGINE_EINVAL);
	CHECK(strstr(err, "nope") != NULL);
}

/*
 * The registry knows providers only through their tables: each one has
 * every call, in the order the console lists them, and an optional call
 * a provider leaves out answers as "nothing to do".
 */
static void
test_registry(void)
{
	static const char *const	 names[] = {"local", "ssh", "e2b",
					    "docker"};
	const struct sandbox_provider	*p;
	struct sandbox_config		 cfg;
	json_t				*o = json_object();
	char				 err[ENGINE_ERRMAX], *info = NULL;
	size_t				 i;
	int				 n = -1;

	for (i = 0; (p = sandbox_provider_at(i)) != NULL; i++) {
		CHECK(i < 4 && strcmp(p->name, names[i]) == 0);
		CHECK(p == sandbox_provider_find(p->name));
		CHECK(p->create != NULL && p->exec != NULL &&
		    p->upload != NULL && p->download != NULL &&
		    p->list != NULL && p->destroy != NULL && p->free != NULL);
		/* local alone needs no config */
		CHECK((p->nfields == 0) == (strcmp(p->name, "local") == 0));
	}
	CHECK_INT((int)i, 4);
	CHECK(sandbox_provider_at(4) == NULL);
	/* ssh has no start-up probe and no sweep; local no check, and its
	 * sweep of a folder that does not exist finds nothing */
	CHECK_INT(sandbox_probe("ssh", NULL, err), 0);
	CHECK_INT(sandbox_check(&sandbox_provider_local, o, err, &info), 0);
	CHECK(info == NULL);
	config(&cfg);
	snprintf(cfg.dir, sizeof(cfg.dir), "%s/no-such-folder", top);
	CHECK_INT(sandbox_sweep(sandbox_provider_find("ssh"), &cfg, err, &n),
	    0);
	CHECK_INT(n, 0);
	n = -1;
	CHECK_INT(sandbox_sweep(&sandbox_provider_local, &cfg, err, &n), 0);
	CHECK_INT(n, 0);
	json_decref(o);
}

int
main(void)
{
	char	path[600];

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A missing bwrap is a counted skip (NEED), python3 a failure. */
	if (!host_bwrap_check())
		return tap_done();
	if (!CHECK(system("command -v python3 >/dev/null 2>&1") == 0))
		printf("# python3 not found: install the Debian package "
		    "python3\n");
	if (tmp_dir_make("t_sandbox", top, sizeof(top)) != 0)
		return tap_done();
	snprintf(data_dir, sizeof(data_dir), "%s/data", top);
	mkdir(data_dir, 0700);
	snprintf(path, sizeof(path), "%s/admin-token", data_dir);
	write_text(path, "TOPSECRET-token\n");
	snprintf(secret_out, sizeof(secret_out), "%s/secret.txt", top);
	write_text(secret_out, "TOPSECRET-outside\n");

	test_probe();
	test_registry();
	test_basics();
	test_files();
	test_secrets();
	test_network();
	test_network_proxy();
	test_fork_bomb();
	test_memory_cpu();
	test_sizes(0);
	test_sizes(1);
	test_timeout();
	test_threads();

	tmp_dir_remove(top);
	return tap_done();
}
