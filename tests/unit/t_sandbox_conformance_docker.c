/*
 * t_sandbox_conformance_docker.c — the provider conformance suite
 * (sandbox_conformance.h) on the docker provider, then what is its own:
 * the container's hardening, a dead engine, a missing image, a container
 * killed mid-command, a named network, another user, a stop from outside,
 * a remote engine over TCP with TLS, the sweep of leftovers, and the
 * bench lines that `make bench` reads.
 *
 * A private dockerd is started for the test (tests/e2e/dockerd.sh, with a
 * busybox image made by `docker import`, never pulled) and stopped by its
 * pid at the end. Without root, dockerd, the docker CLI or busybox-static
 * every check is a counted skip. Processes are counted on the host: the
 * engine is local, so the containers' processes are in our /proc.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/sandbox/provider.h"
#include "tests/unit/host_procs.h"
#include "tests/unit/sandbox_conformance.h"

#define IMAGE	"flowcgi-test/busybox:1"

static char	top[256];	/* the engine's folder */
static char	sock[320];	/* its socket */

static int
host_procs_with(const char *needle)
{
	return host_procs(needle, NULL, NULL);
}

/* Runs a shell command; its exit status, or -1. */
static int
sh_run(const char *cmd)
{
	int st = system(cmd);

	return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

/* The first line a shell command prints, into buf ("" when none). */
static void
sh_line(const char *cmd, char *buf, size_t size)
{
	FILE	*f = popen(cmd, "r");

	buf[0] = '\0';
	if (f == NULL)
		return;
	if (fgets(buf, (int)size, f) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	pclose(f);
}

/* Containers with label (all of the test's: "flowcgi.sandbox"). */
static int
labelled(const char *label)
{
	char cmd[700], line[64];

	snprintf(cmd, sizeof(cmd), "docker -H unix://%s ps -aq --filter "
	    "label=%s | wc -l", sock, label);
	sh_line(cmd, line, sizeof(line));
	return line[0] != '\0' ? (int)strtol(line, NULL, 10) : -1;
}

static int
workspace_exists(const struct sandbox *sb)
{
	char label[100];

	snprintf(label, sizeof(label), "flowcgi.sandbox=%s", sb->id);
	return labelled(label);
}

/* The container of sb, by its label, into buf. */
static void
container_of(const struct sandbox *sb, char *buf, size_t size)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd), "docker -H unix://%s ps -aq --no-trunc "
	    "--filter label=flowcgi.sandbox=%s", sock, sb->id);
	sh_line(cmd, buf, size);
}

static json_t *
options(const char *where, const char *image)
{
	return json_pack("{s:s, s:s}", "docker_sock", where, "docker_image",
	    image);
}

/* ====== Hardening ====== */

static void
hardening(const struct sandbox_config *cfg)
{
	struct sandbox			*sb = NULL;
	struct sandbox_exec_result	 r;
	char				 err[ENGINE_ERRMAX], cid[100];
	char				 cmd[900], line[300];

	printf("# hardening\n");
	memset(&r, 0, sizeof(r));
	if (!CHECK(sandbox_create(&sandbox_provider_docker, cfg, err, &sb) ==
	    0)) {
		printf("# %s\n", err);
		return;
	}
	container_of(sb, cid, sizeof(cid));
	CHECK(cid[0] != '\0');
	snprintf(cmd, sizeof(cmd), "docker -H unix://%s inspect -f "
	    "'{{.HostConfig.Privileged}} {{.HostConfig.CapDrop}} "
	    "{{.HostConfig.SecurityOpt}} {{.HostConfig.ReadonlyRootfs}} "
	    "{{.HostConfig.NetworkMode}} {{.HostConfig.Memory}} "
	    "{{.HostConfig.PidsLimit}} {{.HostConfig.NanoCpus}}' %s",
	    sock, cid);
	sh_line(cmd, line, sizeof(line));
	snprintf(cmd, sizeof(cmd), "false [ALL] [no-new-privileges] true none "
	    "%lld %d 1000000000", (long long)cfg->memory, cfg->processes);
	CHECK_STR(line, cmd);
	/* Inside: no capabilities, a read-only root, the workspace capped. */
	CHECK_INT(conf_sh(sb, "grep CapEff /proc/self/status; touch /etc/x "
	    "2>/dev/null && echo wrote-root; df -k /workspace | tail -1 | awk "
	    "'{print $2}'; touch /tmp/t && echo tmp-ok", 0, 0, &r), 0);
	snprintf(line, sizeof(line), "CapEff:\t0000000000000000\n%lld\n"
	    "tmp-ok\n", (long long)(cfg->workspace_size / 1024));
	CHECK_STR(r.out, line);
	sandbox_exec_result_release(&r);
	/* No network but loopback. */
	CHECK_INT(conf_sh(sb, "ls /sys/class/net | tr '\\n' ' '", 0, 0, &r),
	    0);
	CHECK_STR(r.out, "lo ");
	sandbox_exec_result_release(&r);
	sandbox_free(sb);
}

/* ====== A named network ====== */

static void
network(const struct sandbox_config *good)
{
	struct sandbox_config		 cfg = *good;
	struct sandbox			*sb = NULL;
	struct sandbox_exec_result	 r;
	json_t				*o;
	char				 err[ENGINE_ERRMAX], cmd[600];

	printf("# a named network\n");
	memset(&r, 0, sizeof(r));
	snprintf(cmd, sizeof(cmd), "docker -H unix://%s network create "
	    "--internal flowcgi-test-net >/dev/null", sock);
	if (!CHECK(sh_run(cmd) == 0))
		return;
	o = json_deep_copy(good->options);
	json_object_set_new(o, "docker_network", json_string(
	    "flowcgi-test-net"));
	cfg.options = o;
	if (CHECK(sandbox_create(&sandbox_provider_docker, &cfg, err, &sb) ==
	    0)) {
		CHECK_INT(sb->network, 1);
		CHECK_INT(conf_sh(sb, "ls /sys/class/net | tr '\\n' ' '", 0, 0,
		    &r), 0);
		CHECK_STR(r.out, "eth0 lo ");
		sandbox_exec_result_release(&r);
	} else
		printf("# %s\n", err);
	sandbox_free(sb);
	json_decref(o);
}

/* ====== Another user, a stop ====== */

static int
cancel_after(void *arg)
{
	return conf_now_us() >= *(int64_t *)arg;
}

static void
user_and_stop(const struct sandbox_config *good)
{
	struct sandbox_config		 cfg = *good;
	struct sandbox			*sb = NULL;
	struct sandbox_exec_result	 r;
	struct sandbox_exec_req		 req;
	struct sandbox_cancel		 cancel;
	json_t				*o;
	char				 err[ENGINE_ERRMAX], cmd[64];
	char				*data = NULL;
	size_t				 len = 0;
	int64_t				 t0, at;

	printf("# another user, a stop\n");
	memset(&r, 0, sizeof(r));
	o = json_deep_copy(good->options);
	json_object_set_new(o, "docker_user", json_string("65534:65534"));
	cfg.options = o;
	if (!CHECK(sandbox_create(&sandbox_provider_docker, &cfg, err, &sb) ==
	    0)) {
		printf("# %s\n", err);
		goto out;
	}
	/* Uploads belong to the commands' user: they can write there. */
	CHECK_INT(sandbox_upload(sb, "d/e/f.txt", "f", 1, err), 0);
	CHECK_INT(conf_sh(sb, "id -u; echo g > d/e/g.txt && cat d/e/f.txt",
	    0, 0, &r), 0);
	CHECK_STR(r.out, "65534\nf");
	sandbox_exec_result_release(&r);
	CHECK_INT(sandbox_download(sb, "d/e/g.txt", 10, err, &data, &len), 0);
	CHECK(data != NULL && len == 2 && memcmp(data, "g\n", 2) == 0);
	free(data);
	/* A stop asked for from outside kills the command at once. */
	at = conf_now_us() + 1000000;
	cancel.fn = cancel_after;
	cancel.arg = &at;
	memset(&req, 0, sizeof(req));
	snprintf(cmd, sizeof(cmd), "sleep %s9; echo never", conf_mark);
	req.shell = cmd;
	req.cancel = &cancel;
	t0 = conf_now_us();
	CHECK_INT(sandbox_exec(sb, &req, err, &r), 0);
	CHECK_INT(r.cancelled, 1);
	CHECK_INT(r.timed_out, 0);
	CHECK_INT(r.exit_code, 137);
	CHECK(conf_now_us() - t0 < 5000000);
	sandbox_exec_result_release(&r);
	CHECK_INT(conf_wait_marked_gone(sb), 0);
	CHECK_INT(conf_sh(sb, "echo still", 0, 0, &r), 0);
	CHECK_STR(r.out, "still\n");
	sandbox_exec_result_release(&r);
out:
	sandbox_free(sb);
	json_decref(o);
}

/* ====== Failures, each by name ====== */

struct killer {
	char	cid[100];
};

static void *
kill_later(void *arg)
{
	struct killer	*k = arg;
	char		 cmd[500];

	usleep(1500000);
	snprintf(cmd, sizeof(cmd), "docker -H unix://%s kill %s >/dev/null",
	    sock, k->cid);
	(void)sh_run(cmd);
	return NULL;
}

static void
failures(const struct sandbox_config *good)
{
	struct sandbox_config		 cfg = *good;
	struct sandbox			*sb = NULL;
	struct sandbox_exec_result	 r;
	struct sandbox_exec_req		 req;
	struct killer			 k;
	pthread_t			 th;
	json_t				*o;
	char				 err[ENGINE_ERRMAX], dead[400];
	char				*info = NULL;
	int				 rc;

	printf("# failures\n");
	memset(&r, 0, sizeof(r));
	/* A dead engine. */
	snprintf(dead, sizeof(dead), "unix://%s/no-engine.sock", top);
	o = options(dead, IMAGE);
	cfg.options = o;
	CHECK_INT(sandbox_create(&sandbox_provider_docker, &cfg, err, &sb),
	    SANDBOX_EFAIL);
	CHECK(strstr(err, "cannot reach the engine") != NULL &&
	    strstr(err, "no-engine.sock") != NULL);
	printf("# %s\n", err);
	CHECK_INT(sandbox_docker_probe(o, err, &info), SANDBOX_EFAIL);
	CHECK(strstr(err, "cannot reach the engine") != NULL);
	json_decref(o);
	/* A missing image. */
	o = options(json_string_value(json_object_get(good->options,
	    "docker_sock")), "flowcgi-test/missing:1");
	cfg.options = o;
	CHECK_INT(sandbox_create(&sandbox_provider_docker, &cfg, err, &sb),
	    SANDBOX_EFAIL);
	CHECK(strstr(err, "image 'flowcgi-test/missing:1' is not on the engine"
	    ) != NULL);
	printf("# %s\n", err);
	CHECK_INT(sandbox_docker_probe(o, err, &info), SANDBOX_EFAIL);
	CHECK(strstr(err, "flowcgi-test/missing:1") != NULL);
	json_decref(o);
	/* The probe of a good config. */
	CHECK_INT(sandbox_docker_probe(good->options, err, &info), 0);
	CHECK(info != NULL && strstr(info, "Docker Engine ") != NULL &&
	    strstr(info, "image " IMAGE " is present") != NULL);
	printf("# %s\n", info ? info : err);
	free(info);
	/* Bad options are refused before any request. */
	o = json_pack("{s:s, s:s}", "docker_sock", "ftp://x", "docker_image",
	    IMAGE);
	cfg.options = o;
	CHECK_INT(sandbox_create(&sandbox_provider_docker, &cfg, err, &sb),
	    ENGINE_EINVAL);
	json_decref(o);
	o = json_pack("{s:s, s:s, s:s}", "docker_sock", sock, "docker_image",
	    IMAGE, "docker_memory", "lots");
	cfg.options = o;
	CHECK_INT(sandbox_create(&sandbox_provider_docker, &cfg, err, &sb),
	    ENGINE_EINVAL);
	CHECK(strstr(err, "docker_memory") != NULL);
	json_decref(o);

	/* The container killed while a command runs. */
	cfg = *good;
	if (!CHECK(sandbox_create(&sandbox_provider_docker, &cfg, err, &sb) ==
	    0))
		return;
	container_of(sb, k.cid, sizeof(k.cid));
	if (CHECK(pthread_create(&th, NULL, kill_later, &k) == 0)) {
		memset(&req, 0, sizeof(req));
		req.shell = "sleep 30; echo never";
		rc = sandbox_exec(sb, &req, err, &r);
		pthread_join(th, NULL);
		CHECK_INT(rc, SANDBOX_EFAIL);
		CHECK(strstr(err, "container") != NULL &&
		    strstr(err, "stopped") != NULL);
		printf("# %s\n", err);
		sandbox_exec_result_release(&r);
		req.shell = "true";
		CHECK_INT(sandbox_exec(sb, &req, err, &r), SANDBOX_EFAIL);
		CHECK(strstr(err, "stopped") != NULL);
		sandbox_exec_result_release(&r);
	}
	CHECK_INT(sandbox_destroy(sb, err), 0);
	CHECK_INT(workspace_exists(sb), 0);
	sandbox_free(sb);
}

/* ====== A remote engine: TCP with TLS ====== */

static void
tls(const struct sandbox_config *good)
{
	struct sandbox_config		 cfg = *good;
	struct sandbox			*sb = NULL;
	struct sandbox_exec_result	 r;
	json_t				*o = NULL;
	char				 err[ENGINE_ERRMAX], url[100];
	char				 certs[300], line[32], path[300];
	char				*data = NULL, *info = NULL;
	size_t				 len = 0;
	FILE				*f;

	printf("# tcp with tls\n");
	memset(&r, 0, sizeof(r));
	snprintf(path, sizeof(path), "%s/tcp.port", top);
	if (!CHECK((f = fopen(path, "r")) != NULL))
		return;
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%s", line);
	snprintf(certs, sizeof(certs), "%s/tls", top);
	/* Without the client certificate the engine refuses. */
	o = options(url, IMAGE);
	cfg.options = o;
	CHECK(sandbox_create(&sandbox_provider_docker, &cfg, err, &sb) != 0);
	CHECK(strstr(err, "docker_cert_path") != NULL);
	printf("# %s\n", err);
	json_object_set_new(o, "docker_cert_path", json_string(certs));
	CHECK_INT(sandbox_docker_probe(o, err, &info), 0);
	CHECK(info != NULL && strstr(info, url) != NULL);
	free(info);
	if (!CHECK(sandbox_create(&sandbox_provider_docker, &cfg, err, &sb) ==
	    0)) {
		printf("# %s\n", err);
		goto out;
	}
	CHECK_INT(sandbox_upload(sb, "in/a.txt", "over tls", 8, err), 0);
	CHECK_INT(conf_sh(sb, "cat in/a.txt; echo ' ok' >> in/a.txt", 0, 0,
	    &r), 0);
	CHECK_STR(r.out, "over tls");
	sandbox_exec_result_release(&r);
	CHECK_INT(sandbox_download(sb, "in/a.txt", 100, err, &data, &len), 0);
	CHECK(data != NULL && len == 12 && memcmp(data, "over tls ok\n", 12)
	    == 0);
	free(data);
	CHECK_INT(sandbox_destroy(sb, err), 0);
	CHECK_INT(workspace_exists(sb), 0);
out:
	sandbox_free(sb);
	json_decref(o);
}

/* ====== Leftovers ====== */

static void
sweep(const struct sandbox_config *cfg)
{
	struct sandbox	*sb = NULL;
	char		 err[ENGINE_ERRMAX], cmd[900], host[256];
	int		 n = -1;

	printf("# sweep\n");
	if (gethostname(host, sizeof(host)) != 0)
		return;
	host[sizeof(host) - 1] = '\0';
	/* A container a process that is gone left behind (pid 1 of no
	 * namespace of ours is 2^22 + 1: never a live pid). */
	snprintf(cmd, sizeof(cmd), "docker -H unix://%s create --label "
	    "flowcgi.sandbox=left --label flowcgi.host=%s --label "
	    "flowcgi.pid=4194305 --network none %s true >/dev/null", sock,
	    host, IMAGE);
	CHECK_INT(sh_run(cmd), 0);
	CHECK(sandbox_create(&sandbox_provider_docker, cfg, err, &sb) == 0);
	CHECK_INT(labelled("flowcgi.sandbox"), 2);
	CHECK_INT(sandbox_docker_sweep(cfg->options, err, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(labelled("flowcgi.sandbox=left"), 0);
	/* Ours, alive, stays. */
	CHECK_INT(labelled("flowcgi.sandbox"), 1);
	sandbox_free(sb);
	CHECK_INT(labelled("flowcgi.sandbox"), 0);
}

/* ====== Bench ====== */

/*
 * Per-command overhead (make bench reads the "# bench:" lines): exec of
 * `true` through the provider against `docker exec` of the same container
 * run by hand, and create + destroy.
 */
static void
bench(const struct sandbox_config *cfg)
{
	struct sandbox	*sb = NULL;
	char		 err[ENGINE_ERRMAX], cid[100], cmd[600];

	if (sandbox_create(&sandbox_provider_docker, cfg, err, &sb) != 0)
		return;
	container_of(sb, cid, sizeof(cid));
	conf_bench_exec(sb, "docker exec true", 20);
	snprintf(cmd, sizeof(cmd), "docker -H unix://%s exec %s true", sock,
	    cid);
	conf_bench_shell(cmd, "docker CLI exec true", 20);
	sandbox_free(sb);
	conf_bench_create(&sandbox_provider_docker, cfg,
	    "docker create+destroy", 5);
}

int
main(void)
{
	struct sandbox_config	 cfg;
	struct conf		 c;
	json_t			*o = NULL;
	char			 cmd[600], where[400];
	int			 rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(top, sizeof(top), "/tmp/t_sbx_docker.XXXXXX");
	if (mkdtemp(top) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(sock, sizeof(sock), "%s/docker.sock", top);
	snprintf(cmd, sizeof(cmd), "sh tests/e2e/dockerd.sh start '%s' tls",
	    top);
	rc = sh_run(cmd);
	if (rc == 77) {
		tap_skip("docker: no private engine here (see above: root, "
		    "docker.io, busybox-static)");
		rmdir(top);
		return tap_done();
	}
	if (!CHECK(rc == 0))
		goto out;
	snprintf(where, sizeof(where), "unix://%s", sock);
	o = options(where, IMAGE);
	conf_defaults(&c);
	sandbox_config_init(&cfg, &c);
	cfg.timeout = 20;
	if (cfg.max_output < (1 << 20))
		cfg.max_output = 1 << 20;
	cfg.options = o;
	conformance_opts.count_procs = host_procs_with;
	conformance_opts.workspace_exists = workspace_exists;
	conformance_run(&sandbox_provider_docker, &cfg);
	hardening(&cfg);
	network(&cfg);
	user_and_stop(&cfg);
	failures(&cfg);
	tls(&cfg);
	sweep(&cfg);
	bench(&cfg);
	printf("# nothing left\n");
	CHECK_INT(labelled("flowcgi.sandbox"), 0);
out:
	json_decref(o);
	snprintf(cmd, sizeof(cmd), "sh tests/e2e/dockerd.sh stop '%s'", top);
	CHECK_INT(sh_run(cmd), 0);
	return tap_done();
}
