/*
 * t_sandbox_ssh.c — the ssh sandbox provider against a real sshd on a free
 * loopback port: the conformance suite (key login), password login through
 * askpass, wrong password and key, a changed server key after pinning, one
 * ControlMaster reused by every command, the workspace removed by destroy,
 * no key material left behind.
 *
 * Needs root, /usr/sbin/sshd (openssh-server), ssh and ssh-keyscan
 * (openssh-client), unshare(1). The test user "sbtest" exists only inside a
 * private mount namespace where sshd sees copies of /etc/passwd and
 * /etc/shadow: nothing on the machine changes. Without these every test
 * fails with a message.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/sandbox/provider.h"
#include "tests/unit/host_procs.h"
#include "tests/unit/sandbox_conformance.h"

#define TEST_UID	61234
#define TEST_PASS	"s3cret pass'word"

static char	top[256];
static int	port;
static pid_t	sshd_pid = -1;
static char	base_dir[320];		/* base_working_path */
static char	sb_dir[320];		/* sandbox.dir (private folder) */

/* Runs a shell command; its exit code. */
static int
sh_run(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The whole of a small file, malloc'd, or NULL. */
static char *
slurp(const char *path)
{
	FILE	*f = fopen(path, "r");
	char	*buf = NULL;
	long	 n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = calloc(1, (size_t)n + 1)) !=
	    NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static int
free_port(void)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof(sin);
	int			fd, p = -1;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sin, &len) == 0)
		p = ntohs(sin.sin_port);
	close(fd);
	return p;
}

static int
port_open(void)
{
	struct sockaddr_in	sin;
	int			fd, ok;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)port);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return 0;
	ok = connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0;
	close(fd);
	return ok;
}

static void
sshd_stop(void)
{
	if (sshd_pid > 0) {
		kill(sshd_pid, SIGTERM);
		waitpid(sshd_pid, NULL, 0);
		sshd_pid = -1;
	}
}

/* Starts sshd (host key <top>/hostkey) in its own mount namespace. */
static int
sshd_start(void)
{
	char	cmd[2048];
	int	i;

	snprintf(cmd, sizeof(cmd), "mount --bind %s/passwd /etc/passwd && "
	    "mount --bind %s/shadow /etc/shadow && exec /usr/sbin/sshd -D -e "
	    "-f %s/sshd_config 2>>%s/sshd.log", top, top, top, top);
	if ((sshd_pid = fork()) == 0) {
		execl("/usr/bin/unshare", "unshare", "-m", "--propagation",
		    "private", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 100 && !port_open(); i++)
		usleep(50000);
	return port_open() ? 0 : -1;
}

static int
setup(void)
{
	char	cmd[4096];

	if (geteuid() != 0 || access("/usr/sbin/sshd", X_OK) != 0) {
		printf("# needs root and /usr/sbin/sshd (openssh-server)\n");
		return -1;
	}
	snprintf(top, sizeof(top), "/tmp/t_sandbox_ssh.XXXXXX");
	if (mkdtemp(top) == NULL)
		return -1;
	port = free_port();
	snprintf(base_dir, sizeof(base_dir), "%s/home/work", top);
	snprintf(sb_dir, sizeof(sb_dir), "%s/priv", top);
	snprintf(cmd, sizeof(cmd),
	    "set -e; cd %s; chmod 755 .; mkdir -p /run/sshd; "
	    "ssh-keygen -q -t ed25519 -N '' -f hostkey; "
	    "ssh-keygen -q -t ed25519 -N '' -f ukey; "
	    "ssh-keygen -q -t ed25519 -N '' -f otherkey; "
	    "cp ukey.pub authorized_keys; chmod 644 authorized_keys; "
	    "mkdir home; chown %d:%d home; "
	    "cp /etc/passwd passwd; cp /etc/shadow shadow; "
	    "echo 'sbtest:x:%d:%d::%s/home:/bin/sh' >> passwd; "
	    "echo \"sbtest:$(openssl passwd -6 \"%s\"):19000:0:99999:7:::\" "
	    ">> shadow; "
	    "printf '%%s\\n' 'Port %d' 'ListenAddress 127.0.0.1' "
	    "'HostKey %s/hostkey' 'PidFile none' "
	    "'AuthorizedKeysFile %s/authorized_keys' 'StrictModes no' "
	    "'UsePAM no' 'PasswordAuthentication yes' "
	    "'KbdInteractiveAuthentication no' 'PermitRootLogin no' "
	    "'AllowUsers sbtest' 'LogLevel VERBOSE' 'MaxSessions 50' "
	    "'MaxStartups 50' > sshd_config",
	    top, TEST_UID, TEST_UID, TEST_UID, TEST_UID, top, TEST_PASS, port,
	    top, top);
	if (sh_run(cmd) != 0 || sshd_start() != 0) {
		printf("# sshd did not start; see %s/sshd.log\n", top);
		return -1;
	}
	return 0;
}

/* Key login options (the pinned key filled later). */
static json_t *
options(int with_password)
{
	char	 path[400], *key;
	json_t	*o;

	snprintf(path, sizeof(path), "%s/ukey", top);
	key = slurp(path);
	o = json_pack("{s:s, s:i, s:s, s:s, s:s}", "ssh_host", "127.0.0.1",
	    "ssh_port", port, "ssh_username", "sbtest", "ssh_password",
	    with_password ? TEST_PASS : key ? key : "", "base_working_path",
	    base_dir);
	free(key);
	return o;
}

/* Closes every master in the private folder. */
static void
masters_exit(void)
{
	glob_t	g;
	size_t	i;
	char	pat[400], cmd[1200];

	snprintf(pat, sizeof(pat), "%s/.ssh/cm-*", sb_dir);
	if (glob(pat, 0, NULL, &g) != 0)
		return;
	for (i = 0; i < g.gl_pathc; i++) {
		snprintf(cmd, sizeof(cmd), "ssh -F none -o ControlPath=%s "
		    "-O exit x >/dev/null 2>&1", g.gl_pathv[i]);
		(void)sh_run(cmd);
	}
	globfree(&g);
}

static int
count_masters(void)
{
	glob_t	g;
	char	pat[400];
	int	n = 0;

	snprintf(pat, sizeof(pat), "%s/.ssh/cm-*", sb_dir);
	if (glob(pat, 0, NULL, &g) == 0) {
		n = (int)g.gl_pathc;
		globfree(&g);
	}
	return n;
}

/* Logins sshd accepted so far. */
static int
logins(void)
{
	char	 path[400], *log, *p;
	int	 n = 0;

	snprintf(path, sizeof(path), "%s/sshd.log", top);
	if ((log = slurp(path)) == NULL)
		return -1;
	for (p = log; (p = strstr(p, "Accepted ")) != NULL; p++)
		n++;
	free(log);
	return n;
}

/* Secret files left in the private folder (id-, pw-, ap-). */
static int
secret_files(void)
{
	DIR		*d;
	struct dirent	*de;
	char		 path[400];
	int		 n = 0;

	snprintf(path, sizeof(path), "%s/.ssh", sb_dir);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, "id-", 3) == 0 ||
		    strncmp(de->d_name, "pw-", 3) == 0 ||
		    strncmp(de->d_name, "ap-", 3) == 0)
			n++;
	closedir(d);
	return n;
}

/* Processes sshd started for the checks ("sleep ..."); the ssh client's
 * own command line holds the command text too and does not count. */
static int
host_procs_with(const char *needle)
{
	return host_procs(needle, "sleep ", NULL);
}

static void
break_connection(struct sandbox *sb)
{
	(void)sb;
	masters_exit();
}

static int
workspace_exists(const struct sandbox *sb)
{
	char		path[700];
	struct stat	st;

	snprintf(path, sizeof(path), "%s/%s", base_dir, sb->id);
	return lstat(path, &st) == 0;
}

static void
config(struct sandbox_config *cfg, const json_t *o)
{
	struct conf c;

	conf_defaults(&c);
	snprintf(c.data_dir, sizeof(c.data_dir), "%s", top);
	snprintf(c.sandbox_dir, sizeof(c.sandbox_dir), "%s", sb_dir);
	sandbox_config_init(cfg, &c);
	cfg->timeout = 20;
	if (cfg->max_output < (1 << 20))
		cfg->max_output = 1 << 20;
	cfg->options = o;
}

/* create; exec echo; returns create's code, err filled. */
static int
try_login(const json_t *o, char *err)
{
	struct sandbox_config		 cfg;
	struct sandbox			*sb = NULL;
	struct sandbox_exec_result	 r;
	struct sandbox_exec_req		 req;
	int				 rc;

	memset(&r, 0, sizeof(r));
	config(&cfg, o);
	rc = sandbox_create(&sandbox_provider_ssh, &cfg, err, &sb);
	if (rc == 0) {
		memset(&req, 0, sizeof(req));
		req.shell = "echo hi";
		CHECK_INT(sandbox_exec(sb, &req, err, &r), 0);
		CHECK_STR(r.out, "hi\n");
		sandbox_exec_result_release(&r);
		sandbox_free(sb);
	}
	return rc;
}

/*
 * Per-command overhead (make bench reads the "# bench:" lines): exec of
 * `true` through the provider vs a raw ssh over the same ControlMaster,
 * and create + destroy.
 */
static void
bench(const struct sandbox_config *cfg)
{
	struct sandbox	*sb = NULL;
	char		 err[ENGINE_ERRMAX], cmd[1200], pat[400];
	glob_t		 g;

	if (sandbox_create(&sandbox_provider_ssh, cfg, err, &sb) != 0)
		return;
	conf_bench_exec(sb, "ssh exec true", 20);
	snprintf(pat, sizeof(pat), "%s/.ssh/cm-*", sb_dir);
	if (glob(pat, 0, NULL, &g) == 0) {
		snprintf(cmd, sizeof(cmd), "ssh -F none -o ControlPath=%s "
		    "-o ControlMaster=no x true", g.gl_pathv[0]);
		conf_bench_shell(cmd, "raw ssh -S true", 20);
		globfree(&g);
	}
	sandbox_free(sb);
	conf_bench_create(&sandbox_provider_ssh, cfg, "ssh create+destroy",
	    10);
}

int
main(void)
{
	struct sandbox_config		 cfg;
	struct sandbox			*a = NULL, *b = NULL;
	struct sandbox_exec_result	 r;
	struct sandbox_exec_req		 req;
	struct stat			 st;
	json_t				*o = NULL, *pw = NULL, *bad = NULL;
	char				 err[ENGINE_ERRMAX], *keys = NULL;
	char				 cmd[600], path[400], *other;
	int				 n0, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&r, 0, sizeof(r));
	if (!CHECK(setup() == 0))
		goto out;

	/* Pinning: ssh-keyscan's keys; without a pin nothing connects. */
	o = options(0);
	CHECK_INT(try_login(o, err), ENGINE_EINVAL);
	CHECK(strstr(err, "pinned host key") != NULL);
	CHECK_INT(sandbox_ssh_scan(o, err, &keys), 0);
	CHECK(keys != NULL && strncmp(keys, "ssh-ed25519 ", 12) == 0);
	json_object_set_new(o, "ssh_host_key", json_string(keys ? keys : ""));

	/* The suite, with a key. */
	config(&cfg, o);
	conformance_opts.count_procs = host_procs_with;
	conformance_opts.break_connection = break_connection;
	conformance_opts.workspace_exists = workspace_exists;
	conformance_run(&sandbox_provider_ssh, &cfg);

	/* One master, reused across sandboxes and commands. */
	printf("# ControlMaster reuse\n");
	CHECK(sandbox_create(&sandbox_provider_ssh, &cfg, err, &a) == 0);
	n0 = logins();
	CHECK(sandbox_create(&sandbox_provider_ssh, &cfg, err, &b) == 0);
	for (i = 0; a != NULL && b != NULL && i < 5; i++) {
		memset(&req, 0, sizeof(req));
		req.shell = "echo x";
		CHECK_INT(sandbox_exec(i % 2 ? a : b, &req, err, &r), 0);
		sandbox_exec_result_release(&r);
	}
	CHECK_INT(logins(), n0);
	CHECK_INT(count_masters(), 1);
	snprintf(cmd, sizeof(cmd), "for s in %s/.ssh/cm-*; do ssh -F none "
	    "-o ControlPath=$s -O check x 2>&1 | grep -q 'Master running' || "
	    "exit 1; done", sb_dir);
	CHECK_INT(sh_run(cmd), 0);
	/* Secrets only while logging in; the private folder is ours. */
	CHECK_INT(secret_files(), 0);
	snprintf(path, sizeof(path), "%s/.ssh", sb_dir);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0700);
	/* destroy removes the remote workspace */
	if (a != NULL) {
		snprintf(path, sizeof(path), "%s/%s", base_dir, a->id);
		CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
		CHECK_INT(sandbox_destroy(a, err), 0);
		CHECK(stat(path, &st) != 0);
	}
	sandbox_free(a);
	sandbox_free(b);
	a = b = NULL;
	bench(&cfg);

	/* Password login through askpass. */
	printf("# password\n");
	pw = options(1);
	json_object_set_new(pw, "ssh_host_key", json_string(keys ? keys : ""));
	CHECK_INT(try_login(pw, err), 0);
	CHECK_INT(secret_files(), 0);
	json_object_set_new(pw, "ssh_password", json_string("Xq9-not-it"));
	CHECK(try_login(pw, err) == SANDBOX_EFAIL &&
	    strstr(err, "authentication failed") != NULL);
	printf("# err: %s\n", err);
	CHECK(strstr(err, "Xq9-not-it") == NULL); /* never the secret */
	CHECK_INT(secret_files(), 0);

	/* A key the server does not know. */
	snprintf(path, sizeof(path), "%s/otherkey", top);
	other = slurp(path);
	bad = json_deep_copy(o);
	json_object_set_new(bad, "ssh_password", json_string(other ? other :
	    ""));
	free(other);
	CHECK(try_login(bad, err) == SANDBOX_EFAIL &&
	    strstr(err, "authentication failed") != NULL);
	printf("# err: %s\n", err);
	CHECK_INT(secret_files(), 0);

	/* The server's key changes after pinning: refused, clearly. */
	printf("# host key changed\n");
	masters_exit();
	sshd_stop();
	snprintf(cmd, sizeof(cmd), "cd %s && rm -f hostkey hostkey.pub && "
	    "ssh-keygen -q -t ed25519 -N '' -f hostkey", top);
	CHECK_INT(sh_run(cmd), 0);
	CHECK_INT(sshd_start(), 0);
	CHECK(try_login(o, err) == SANDBOX_EFAIL &&
	    strstr(err, "host key verification failed") != NULL);
	printf("# err: %s\n", err);
	CHECK_INT(secret_files(), 0);
	/* The admin re-pins, and it works again. */
	free(keys);
	keys = NULL;
	CHECK_INT(sandbox_ssh_scan(o, err, &keys), 0);
	json_object_set_new(o, "ssh_host_key", json_string(keys ? keys : ""));
	CHECK_INT(try_login(o, err), 0);
	/* A host where nothing listens. */
	json_object_set_new(bad, "ssh_port", json_integer(free_port()));
	CHECK(sandbox_ssh_scan(bad, err, &other) != 0);
	printf("# err: %s\n", err);
out:
	masters_exit();
	sshd_stop();
	free(keys);
	json_decref(o);
	json_decref(pw);
	json_decref(bad);
	if (top[0] != '\0') {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
		(void)sh_run(cmd);
	}
	return tap_done();
}
