/*
 * t_sandbox_e2b.c — the E2B sandbox provider against tests/fakes/fake_e2b.py
 * (control plane and envd on one loopback port): the scenario the official
 * SDK runs in tests/e2b-sdk/sdk_scenario.mjs (create, run a command, write
 * and read a file, list a folder, kill), then what flowcgi needs beyond it:
 * the exact request framing and headers, argv quoting, environment, cwd,
 * standard input, output caps, signals, both wall clocks (envd's
 * Connect-Timeout-Ms and our own backstop with SendSignal), protocol
 * failures, file errors and limits, timeout refresh and expiry, idempotent
 * destroy, and clear errors from a failing or dead API.
 *
 * Needs python3 and bash; run from the repository root (or FLOWCGI_SRC).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "engine/sandbox/sandbox.h"
#include "tests/unit/fake_proc.h"
#include "tests/unit/host_procs.h"
#include "tests/unit/sandbox_conformance.h"
#include "tests/unit/tap.h"

#define KEY "e2b_0000000000000000000000000000000000000000"

static const struct sandbox_provider	*prov;
static struct conf			 hconf;
static struct engine			 heng;
static pid_t				 fake_pid = -1;
static int				 fake_port;
static char				 base[64];

/* ====== The fake ====== */

static int
fake_start(void)
{
	if ((fake_pid = fake_proc_start("e2b", &fake_port)) < 0)
		return -1;
	snprintf(base, sizeof(base), "http://127.0.0.1:%d", fake_port);
	return 0;
}

/* One exchange with the fake; returns the status, *out the JSON body. */
static long
fake_http(const char *method, const char *path, const char *body,
    json_t **out)
{
	struct outbound_req	 rq;
	struct outbound_resp	 rs;
	struct curl_slist	*h = NULL;
	char			 url[512], err[ENGINE_ERRMAX];
	long			 status = -1;

	if (out != NULL)
		*out = NULL;
	snprintf(url, sizeof(url), "%s%s", base, path);
	h = curl_slist_append(h, "X-API-Key: " KEY);
	memset(&rq, 0, sizeof(rq));
	rq.method = method;
	rq.url = url;
	rq.trusted = 1;
	rq.headers = h;
	rq.body = body;
	rq.body_len = body ? strlen(body) : 0;
	if (outbound_fetch(&heng, &rq, err, &rs) == 0) {
		status = rs.status;
		if (out != NULL)
			*out = json_loadb(rs.body, rs.len, 0, NULL);
		outbound_resp_release(&rs);
	}
	curl_slist_free_all(h);
	return status;
}

static void
fake_fail(const char *json)
{
	fake_http("POST", "/_fail", json, NULL);
}

/*
 * How many recorded requests have this method and a path that starts with
 * prefix; *last (when not NULL) gets the last of them (new ref, or NULL).
 */
static int
count_requests(const char *method, const char *prefix, json_t **last)
{
	json_t		*all = NULL, *r, *found = NULL;
	size_t		 i;
	int		 n = 0;
	const char	*p, *m;

	fake_http("GET", "/_requests", NULL, &all);
	json_array_foreach(all, i, r) {
		p = json_string_value(json_object_get(r, "path"));
		m = json_string_value(json_object_get(r, "method"));
		if (p != NULL && m != NULL && strcmp(m, method) == 0 &&
		    strncmp(p, prefix, strlen(prefix)) == 0) {
			found = r;
			n++;
		}
	}
	if (last != NULL)
		*last = json_incref(found);
	json_decref(all);
	return n;
}

/* The last recorded request whose path starts with prefix (new ref). */
static json_t *
last_request(const char *method, const char *prefix)
{
	json_t *r;

	count_requests(method, prefix, &r);
	return r;
}

/* The fake's view of sandbox sid: {alive, dir, processes...} (new ref). */
static json_t *
fake_sandbox(const char *sid)
{
	json_t *all = NULL, *v;

	fake_http("GET", "/_sandboxes", NULL, &all);
	v = json_incref(json_object_get(all, sid));
	json_decref(all);
	return v;
}

/*
 * Sandbox sid at the fake: 1 while alive, 0 once gone (killed, expired),
 * -1 when the fake does not know it.
 */
static int
fake_alive(const char *sid)
{
	json_t	*v = fake_sandbox(sid);
	int	 alive = v == NULL ? -1 : json_is_true(json_object_get(v,
		    "alive"));

	json_decref(v);
	return alive;
}

/* When sandbox sid's lifetime ends at the fake (its clock, seconds). */
static double
fake_end_at(const char *sid)
{
	json_t	*v = fake_sandbox(sid);
	double	 t = json_number_value(json_object_get(v, "end_at"));

	json_decref(v);
	return t;
}

static double
wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);	/* the fake's clock */
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ====== Helpers ====== */

static const char *
hdr(const json_t *rec, const char *name)
{
	return json_string_value(json_object_get(json_object_get(rec,
	    "headers"), name));
}

/* E2B's id of our sandbox, from the create answer the fake recorded. */
static char last_sid[64];

static void
config(struct sandbox_config *cfg, json_t *opts)
{
	struct conf c;

	conf_defaults(&c);
	sandbox_config_init(cfg, &c);
	cfg->timeout = 20;
	cfg->options = opts;
}

static json_t *
options(void)
{
	return json_pack("{s:s, s:s, s:i, s:i}", "api_key", KEY,
	    "e2b_api_url", base, "e2b_keepalive", 1, "e2b_deadline_grace", 1);
}

static struct sandbox *
make_with(json_t *opts)
{
	struct sandbox_config	 cfg;
	struct sandbox		*sb = NULL;
	json_t			*list = NULL, *r;
	const char		*k;
	char			 err[ENGINE_ERRMAX];

	config(&cfg, opts);
	if (sandbox_create(prov, &cfg, err, &sb) != 0)
		printf("# create: %s\n", err);
	/* The newest live sandbox is ours (tests run one at a time). */
	fake_http("GET", "/_sandboxes", NULL, &list);
	last_sid[0] = '\0';
	{
		double best = -1;

		json_object_foreach(list, k, r) {
			double end = json_real_value(json_object_get(r,
			    "end_at"));

			if (json_is_true(json_object_get(r, "alive")) &&
			    end >= best) {
				best = end;
				snprintf(last_sid, sizeof(last_sid), "%s", k);
			}
		}
	}
	json_decref(list);
	json_decref(opts);
	return sb;
}

static struct sandbox *
make(void)
{
	return make_with(options());
}

static int
run(struct sandbox *sb, struct sandbox_exec_req *req,
    struct sandbox_exec_result *res, char *err)
{
	int rc;

	if (req->timeout_ms == 0)
		req->timeout_ms = 20000;
	rc = sandbox_exec(sb, req, err, res);
	if (rc != 0)
		printf("# exec: %s\n", err);
	return rc;
}

static int
sh(struct sandbox *sb, const char *cmd, struct sandbox_exec_result *res)
{
	struct sandbox_exec_req	req = {0};
	char			err[ENGINE_ERRMAX];

	req.shell = cmd;
	return run(sb, &req, res, err);
}

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
live_processes(const char *sid)
{
	json_t	*v = fake_sandbox(sid);
	int	 n = (int)json_array_size(json_object_get(v, "processes"));

	json_decref(v);
	return n;
}

/*
 * Polls until sandbox sid has no live process at the fake (a killed one
 * takes a moment to be reaped), at most 5 s; returns how many are left.
 */
static int
processes_gone(const char *sid)
{
	int n, i;

	for (i = 0; (n = live_processes(sid)) != 0 && i < 250; i++)
		usleep(20000);
	return n;
}

/* ====== The SDK's scenario ====== */

static void
test_sdk_scenario(void)
{
	struct sandbox			*sb;
	struct sandbox_exec_result	 res;
	struct sandbox_file		*files = NULL;
	size_t				 n = 0, len = 0;
	char				 err[ENGINE_ERRMAX], *data = NULL;
	json_t				*v;

	printf("# the SDK's scenario through the provider\n");
	sb = make();
	if (!CHECK(sb != NULL))
		return;
	CHECK(strlen(last_sid) > 0);
	CHECK(sh(sb, "echo hi; echo oops >&2", &res) == 0);
	CHECK_STR(res.out, "hi\n");
	CHECK_STR(res.err, "oops\n");
	CHECK_INT(res.exit_code, 0);
	sandbox_exec_result_release(&res);
	CHECK(sandbox_upload(sb, "dir/hello.txt", "hello file\n", 11, err)
	    == 0);
	CHECK(sandbox_download(sb, "dir/hello.txt", 1000, err, &data, &len)
	    == 0);
	CHECK_STR(data, "hello file\n");
	CHECK_INT(len, 11);
	free(data);
	CHECK(sh(sb, "cat dir/hello.txt && mkdir -p dir/sub && printf abc > "
	    "dir/sub/x.bin", &res) == 0);
	CHECK_STR(res.out, "hello file\n");
	sandbox_exec_result_release(&res);
	CHECK(sandbox_list(sb, "dir", 100, err, &files, &n) == 0);
	CHECK_INT(n, 3);
	if (n == 3) {
		CHECK_STR(files[0].path, "dir/hello.txt");
		CHECK_INT(files[0].size, 11);
		CHECK(files[0].mtime > 1600000000);
		CHECK_STR(files[1].path, "dir/sub");
		CHECK(files[1].is_dir);
		CHECK_STR(files[2].path, "dir/sub/x.bin");
		CHECK_INT(files[2].size, 3);
	}
	sandbox_files_free(files, n);
	CHECK(sandbox_destroy(sb, err) == 0);
	v = fake_sandbox(last_sid);
	CHECK(json_is_false(json_object_get(v, "alive")));
	json_decref(v);
	sandbox_free(sb);
}

/* ====== Wire format ====== */

static void
test_wire(void)
{
	struct sandbox			*sb;
	struct sandbox_exec_req		 req = {0};
	struct sandbox_exec_result	 res;
	static const char *const	 argv[] = {"printf", "%s|", "a b",
					    "it's", "$HOME", NULL};
	static const char *const	 env[] = {"FOO=bar baz", "X=1", NULL};
	json_t				*r, *msg;
	const char			*hex;
	char				 err[ENGINE_ERRMAX], want[32];
	size_t				 nbytes;

	printf("# requests as E2B expects them\n");
	fake_http("POST", "/_reset", "", NULL);
	sb = make();
	if (!CHECK(sb != NULL))
		return;
	r = last_request("POST", "/sandboxes");
	CHECK_STR(hdr(r, "x-api-key"), KEY);
	msg = json_object_get(r, "body");
	CHECK_STR(json_string_value(json_object_get(msg, "templateID")),
	    "code-interpreter-v1");
	CHECK_INT(json_integer_value(json_object_get(msg, "timeout")), 300);
	CHECK(json_is_true(json_object_get(msg, "secure")));
	json_decref(r);

	req.argv = argv;
	req.env = env;
	req.timeout_ms = 7000;
	CHECK(run(sb, &req, &res, err) == 0);
	CHECK_STR(res.out, "a b|it's|$HOME|");
	sandbox_exec_result_release(&res);
	r = last_request("POST", "/process.Process/Start");
	CHECK_STR(hdr(r, "content-type"), "application/connect+json");
	CHECK_STR(hdr(r, "connect-protocol-version"), "1");
	CHECK_STR(hdr(r, "connect-timeout-ms"), "7000");
	CHECK_STR(hdr(r, "keepalive-ping-interval"), "1");
	CHECK_STR(hdr(r, "e2b-sandbox-id"), last_sid);
	CHECK_STR(hdr(r, "e2b-sandbox-port"), "49983");
	CHECK(hdr(r, "x-access-token") != NULL &&
	    strlen(hdr(r, "x-access-token")) >= 16);
	CHECK(hdr(r, "x-api-key") == NULL);	/* the key stays home */
	/* One envelope: flags 0, big-endian length of the rest. */
	hex = json_string_value(json_object_get(r, "raw_hex"));
	nbytes = hex ? strlen(hex) / 2 : 0;
	CHECK(hex != NULL && strncmp(hex, "00", 2) == 0);
	snprintf(want, sizeof(want), "%08zx", nbytes - 5);
	CHECK(hex != NULL && strncmp(hex + 2, want, 8) == 0);
	msg = json_array_get(json_object_get(r, "body"), 0);
	CHECK_STR(json_string_value(json_object_get(json_object_get(msg,
	    "process"), "cmd")), "/bin/bash");
	CHECK_STR(json_string_value(json_array_get(json_object_get(
	    json_object_get(msg, "process"), "args"), 1)), "-c");
	CHECK_STR(json_string_value(json_object_get(json_object_get(
	    json_object_get(msg, "process"), "envs"), "FOO")), "bar baz");
	CHECK_STR(json_string_value(json_object_get(json_object_get(msg,
	    "process"), "cwd")), "/home/user");
	CHECK(json_is_false(json_object_get(msg, "stdin")));
	json_decref(r);
	sandbox_free(sb);
	r = last_request("DELETE", "/sandboxes/");
	CHECK(r != NULL);
	json_decref(r);
}

/* ====== Commands ====== */

static void
test_exec(void)
{
	struct sandbox			*sb;
	struct sandbox_exec_req		 req = {0};
	struct sandbox_exec_result	 res;
	static const char		 input[] = "one\ntwo\nthree\n";
	json_t				*v;
	DIR				*d;
	struct dirent			*de;
	char				 err[ENGINE_ERRMAX], tmp[400];
	int				 leftovers = 0;
	int64_t				 t0;

	printf("# commands\n");
	sb = make();
	if (!CHECK(sb != NULL))
		return;
	CHECK(sh(sb, "echo out; echo err >&2; exit 3", &res) == 0);
	CHECK_INT(res.exit_code, 3);
	CHECK_INT(res.signal, 0);
	CHECK_STR(res.out, "out\n");
	CHECK_STR(res.err, "err\n");
	CHECK(!res.timed_out && res.elapsed_us > 0);
	sandbox_exec_result_release(&res);

	CHECK(sandbox_upload(sb, "sub/dir/f.txt", "in a folder", 11, err) == 0);
	req.shell = "cat f.txt";
	req.cwd = "sub/dir";
	CHECK(run(sb, &req, &res, err) == 0);
	CHECK_STR(res.out, "in a folder");
	sandbox_exec_result_release(&res);
	req.cwd = "nope";
	CHECK(sandbox_exec(sb, &req, err, &res) == ENGINE_EINVAL);
	CHECK(strstr(err, "invalid_argument") != NULL);
	printf("# %s\n", err);
	req.cwd = "../etc";
	CHECK(sandbox_exec(sb, &req, err, &res) == ENGINE_EINVAL);
	req.cwd = NULL;

	req.shell = "wc -l; cat >/dev/null";
	req.stdin_data = input;
	req.stdin_len = sizeof(input) - 1;
	CHECK(run(sb, &req, &res, err) == 0);
	CHECK_STR(res.out, "3\n");
	sandbox_exec_result_release(&res);
	req.stdin_data = NULL;
	req.stdin_len = 0;
	v = fake_sandbox(last_sid);
	snprintf(tmp, sizeof(tmp), "%s/home/user",
	    json_string_value(json_object_get(v, "dir")));
	json_decref(v);
	if ((d = opendir(tmp)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (strncmp(de->d_name, ".flowcgi-stdin", 14) == 0)
				leftovers++;
		closedir(d);
	}
	CHECK_INT(leftovers, 0);	/* the stdin file is gone */
	/* A command that cannot start leaves no stdin file either. */
	req.cwd = "nope";
	req.stdin_data = input;
	req.stdin_len = sizeof(input) - 1;
	CHECK(sandbox_exec(sb, &req, err, &res) == ENGINE_EINVAL);
	req.cwd = NULL;
	req.stdin_data = NULL;
	req.stdin_len = 0;
	if ((d = opendir(tmp)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (strncmp(de->d_name, ".flowcgi-stdin", 14) == 0)
				leftovers++;
		closedir(d);
	}
	CHECK_INT(leftovers, 0);

	req.shell = "head -c 5000 /dev/zero | tr '\\0' a; echo tail >&2";
	req.max_output = 1000;
	CHECK(run(sb, &req, &res, err) == 0);
	CHECK_INT(res.out_len, 1000);
	CHECK(res.out_truncated);
	CHECK(!res.err_truncated);
	CHECK_STR(res.err, "tail\n");
	sandbox_exec_result_release(&res);
	req.max_output = 0;

	CHECK(sh(sb, "kill -TERM $$", &res) == 0);
	CHECK_INT(res.exit_code, 128 + SIGTERM);
	CHECK_INT(res.signal, SIGTERM);
	sandbox_exec_result_release(&res);

	/* Longer than the keepalive interval: keepalives are skipped. */
	CHECK(sh(sb, "sleep 2.2; echo done", &res) == 0);
	CHECK_STR(res.out, "done\n");
	sandbox_exec_result_release(&res);

	/*
	 * envd's wall clock: Connect-Timeout-Ms. Uncut, the command takes
	 * 300 s; a bound of 60 s leaves room for a loaded machine (how fast
	 * is make bench's).
	 */
	req.shell = "echo start; sleep 300";
	req.timeout_ms = 800;
	t0 = mono_ms();
	CHECK(run(sb, &req, &res, err) == 0);
	CHECK(res.timed_out);
	CHECK_INT(res.exit_code, 137);
	CHECK_INT(res.signal, SIGKILL);
	CHECK_STR(res.out, "start\n");
	CHECK(mono_ms() - t0 < 60000);
	sandbox_exec_result_release(&res);
	CHECK_INT(live_processes(last_sid), 0);

	/* Our backstop when envd does not end it: SendSignal SIGKILL. */
	fake_fail("{\"start\": {\"mode\": \"ignore_deadline\"}}");
	req.shell = "echo start; sleep 300";
	req.timeout_ms = 500;
	t0 = mono_ms();
	CHECK(run(sb, &req, &res, err) == 0);
	CHECK(res.timed_out);
	CHECK_INT(res.exit_code, 137);
	CHECK(mono_ms() - t0 < 60000);
	printf("# backstop after %lld ms\n", (long long)(mono_ms() - t0));
	sandbox_exec_result_release(&res);
	fake_fail("{}");
	v = last_request("POST", "/process.Process/SendSignal");
	CHECK_STR(json_string_value(json_object_get(json_object_get(v, "body"),
	    "signal")), "SIGNAL_SIGKILL");
	CHECK(json_integer_value(json_object_get(json_object_get(
	    json_object_get(v, "body"), "process"), "pid")) > 0);
	json_decref(v);
	CHECK_INT(processes_gone(last_sid), 0);

	/* Protocol failures. */
	fake_fail("{\"start\": {\"mode\": \"end_error\"}}");
	CHECK(sh(sb, "true", &res) == SANDBOX_EFAIL);
	fake_fail("{\"start\": {\"mode\": \"truncate\"}}");
	req.shell = "true";
	req.timeout_ms = 5000;
	CHECK(sandbox_exec(sb, &req, err, &res) == SANDBOX_EFAIL);
	CHECK(strstr(err, "end-stream") != NULL);
	fake_fail("{\"start\": {\"status\": 503, \"message\": \"envd busy\"}}");
	CHECK(sandbox_exec(sb, &req, err, &res) == SANDBOX_EFAIL);
	CHECK(strstr(err, "process.Process/Start") != NULL &&
	    strstr(err, "envd busy") != NULL);
	printf("# %s\n", err);
	fake_fail("{}");
	CHECK(sh(sb, "true", &res) == 0);
	sandbox_exec_result_release(&res);
	sandbox_free(sb);
}

/* ====== Files ====== */

static void
test_files(void)
{
	struct sandbox		*sb;
	struct sandbox_file	*files = NULL;
	unsigned char		 bin[256];
	size_t			 n = 0, len = 0, i;
	char			 err[ENGINE_ERRMAX], *data = NULL;
	json_t			*r;
	const char		*path;

	printf("# files\n");
	sb = make();
	if (!CHECK(sb != NULL))
		return;
	for (i = 0; i < sizeof(bin); i++)
		bin[i] = (unsigned char)i;
	CHECK(sandbox_upload(sb, "bin/all bytes.dat", bin, sizeof(bin), err)
	    == 0);
	r = last_request("POST", "/files");
	path = json_string_value(json_object_get(r, "path"));
	CHECK(path != NULL && strstr(path, "path=/home/user/bin/all%20bytes"
	    ".dat") != NULL);
	CHECK(hdr(r, "content-type") != NULL && strncmp(hdr(r,
	    "content-type"), "multipart/form-data; boundary=", 30) == 0);
	json_decref(r);
	CHECK(sandbox_download(sb, "bin/all bytes.dat", 256, err, &data, &len)
	    == 0);
	CHECK(len == 256 && data != NULL && memcmp(data, bin, 256) == 0);
	free(data);
	data = NULL;
	CHECK(sandbox_download(sb, "bin/all bytes.dat", 100, err, &data, &len)
	    == ENGINE_ELIMIT);
	printf("# %s\n", err);
	CHECK(sandbox_download(sb, "missing.txt", 100, err, &data, &len) ==
	    ENGINE_ENOTFOUND);
	CHECK(sandbox_download(sb, "bin", 100, err, &data, &len) ==
	    ENGINE_EINVAL);
	CHECK(sandbox_upload(sb, "../escape", "x", 1, err) == ENGINE_EINVAL);
	CHECK(sandbox_upload(sb, "/etc/passwd", "x", 1, err) ==
	    ENGINE_EINVAL);
	CHECK(sandbox_upload(sb, "", "x", 1, err) == ENGINE_EINVAL);
	CHECK(sandbox_upload(sb, "empty", "", 0, err) == 0);
	CHECK(sandbox_download(sb, "empty", 10, err, &data, &len) == 0);
	CHECK(data != NULL && len == 0);
	free(data);
	CHECK(sandbox_list(sb, "", 100, err, &files, &n) == 0);
	CHECK_INT(n, 3);
	if (n == 3) {
		CHECK_STR(files[0].path, "bin");
		CHECK(files[0].is_dir && files[0].size == 0);
		CHECK_STR(files[1].path, "bin/all bytes.dat");
		CHECK_INT(files[1].size, 256);
		CHECK_STR(files[2].path, "empty");
	}
	sandbox_files_free(files, n);
	CHECK(sandbox_list(sb, ".", 2, err, &files, &n) == ENGINE_ELIMIT);
	CHECK(sandbox_list(sb, "nope", 10, err, &files, &n) ==
	    ENGINE_ENOTFOUND);
	CHECK(sandbox_list(sb, "empty", 10, err, &files, &n) == ENGINE_EINVAL);
	sandbox_free(sb);
}

/* ====== Lifetime ====== */

static void
test_lifetime(void)
{
	struct sandbox			*sb;
	struct sandbox_exec_result	 res;
	json_t				*o, *r;
	char				 err[ENGINE_ERRMAX], path[128];
	double				 end0;
	int				 i;

	printf("# timeout refresh, expiry, destroy\n");
	o = options();
	json_object_set_new(o, "e2b_sandbox_timeout", json_string("2"));
	sb = make_with(o);
	if (!CHECK(sb != NULL))
		return;
	end0 = fake_end_at(last_sid);
	CHECK(end0 > 0);
	/* A 20 s command outlasts the 2 s lifetime: refreshed first. */
	CHECK(sh(sb, "sleep 1.2", &res) == 0);
	sandbox_exec_result_release(&res);
	snprintf(path, sizeof(path), "/sandboxes/%s/timeout", last_sid);
	r = last_request("POST", path);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(r,
	    "body"), "timeout")), 20 + 60);
	json_decref(r);
	/* past the first lifetime (the fake's clock, polled up to 10 s):
	 * alive thanks to the refresh */
	for (i = 0; wall_s() < end0 + 0.3 && i < 200; i++)
		usleep(50000);
	CHECK(wall_s() >= end0 + 0.3);
	CHECK_INT(fake_alive(last_sid), 1);
	CHECK(sh(sb, "echo alive", &res) == 0);
	CHECK_STR(res.out, "alive\n");
	sandbox_exec_result_release(&res);
	sandbox_free(sb);

	o = options();
	json_object_set_new(o, "e2b_sandbox_timeout", json_integer(1));
	sb = make_with(o);
	if (!CHECK(sb != NULL))
		return;
	/* until the fake's reaper ends it (1 s lifetime; up to 10 s) */
	for (i = 0; fake_alive(last_sid) == 1 && i < 200; i++)
		usleep(50000);
	CHECK_INT(fake_alive(last_sid), 0);
	CHECK(sandbox_upload(sb, "a", "x", 1, err) == SANDBOX_EFAIL);
	CHECK(strstr(err, "is gone") != NULL);
	printf("# %s\n", err);
	CHECK(sandbox_destroy(sb, err) == 0);	/* 404: already gone */
	sandbox_free(sb);

	/* Idempotent destroy; calls afterwards are refused. */
	sb = make();
	if (!CHECK(sb != NULL))
		return;
	snprintf(path, sizeof(path), "/sandboxes/%s", last_sid);
	fake_fail("{\"kill\": {\"status\": 500, \"message\": \"kill broke\"}}");
	CHECK(sandbox_destroy(sb, err) == SANDBOX_EFAIL);
	CHECK(strstr(err, "kill broke") != NULL);
	fake_fail("{}");
	CHECK(sandbox_destroy(sb, err) == 0);
	CHECK(sandbox_destroy(sb, err) == 0);
	CHECK_INT(count_requests("DELETE", path, NULL), 2);
	CHECK(sh(sb, "true", &res) == ENGINE_EINVAL);
	CHECK(sandbox_upload(sb, "a", "x", 1, err) == ENGINE_EINVAL);
	sandbox_free(sb);
	CHECK_INT(count_requests("DELETE", path, NULL), 2);
}

/* ====== Errors ====== */

static void
test_errors(void)
{
	struct sandbox_config	 cfg;
	struct sandbox		*sb = NULL;
	struct sockaddr_in	 sa;
	socklen_t		 sl = sizeof(sa);
	json_t			*o;
	char			 err[ENGINE_ERRMAX], dead[64];
	int			 fd;

	printf("# errors\n");
	fake_fail("{\"create\": {\"status\": 503, \"message\": "
	    "\"no capacity left\"}}");
	o = options();
	config(&cfg, o);
	CHECK(sandbox_create(prov, &cfg, err, &sb) == SANDBOX_EFAIL);
	CHECK(strstr(err, "create sandbox") != NULL &&
	    strstr(err, "503") != NULL &&
	    strstr(err, "no capacity left") != NULL);
	CHECK(strstr(err, KEY) == NULL);
	printf("# %s\n", err);
	fake_fail("{}");

	json_object_set_new(o, "api_key", json_string("e2b_wrong"));
	CHECK(sandbox_create(prov, &cfg, err, &sb) == SANDBOX_EFAIL);
	CHECK(strstr(err, "401") != NULL && strstr(err, "Invalid API key") !=
	    NULL);
	printf("# %s\n", err);

	/* A dead API: a port nobody listens on. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	getsockname(fd, (struct sockaddr *)&sa, &sl);
	snprintf(dead, sizeof(dead), "http://127.0.0.1:%d", ntohs(sa.sin_port));
	close(fd);
	json_object_set_new(o, "api_key", json_string(KEY));
	json_object_set_new(o, "e2b_api_url", json_string(dead));
	CHECK(sandbox_create(prov, &cfg, err, &sb) == SANDBOX_EFAIL);
	CHECK(strstr(err, "create sandbox") != NULL);
	CHECK(strstr(err, KEY) == NULL);
	printf("# %s\n", err);

	json_object_del(o, "api_key");
	CHECK(sandbox_create(prov, &cfg, err, &sb) == ENGINE_EINVAL);
	CHECK(strstr(err, "api_key") != NULL);
	json_object_set_new(o, "api_key", json_string(KEY));
	json_object_set_new(o, "e2b_api_url", json_string("ftp://x"));
	CHECK(sandbox_create(prov, &cfg, err, &sb) == ENGINE_EINVAL);
	json_object_set_new(o, "e2b_api_url", json_string(base));
	json_object_set_new(o, "e2b_sandbox_timeout", json_string("soon"));
	CHECK(sandbox_create(prov, &cfg, err, &sb) == ENGINE_EINVAL);
	cfg.options = NULL;
	CHECK(sandbox_create(prov, &cfg, err, &sb) == ENGINE_EINVAL);
	CHECK(sb == NULL);
	json_decref(o);

	/* envd behind an explicit override; a wrong override fails clearly. */
	o = options();
	json_object_set_new(o, "e2b_envd_url", json_string(base));
	sb = make_with(o);
	CHECK(sb != NULL);
	sandbox_free(sb);
	o = options();
	json_object_set_new(o, "e2b_envd_url", json_string(dead));
	sb = make_with(o);
	if (CHECK(sb != NULL)) {
		struct sandbox_exec_result res;

		CHECK(sh(sb, "true", &res) == SANDBOX_EFAIL);
	}
	sandbox_free(sb);
}

/* ====== The conformance suite ====== */

/* Host processes whose command line contains needle: the fake runs
 * commands on this host. */
static int
host_procs_with(const char *needle)
{
	return host_procs(needle, NULL, NULL);
}

/* Whether the fake still has a live sandbox (and folder) for sb, found by
 * the flowcgi_sandbox metadata the provider sets. */
static int
fake_workspace_exists(const struct sandbox *sb)
{
	json_t		*all = NULL, *v;
	const char	*k, *id;
	int		 found = -1;

	fake_http("GET", "/_sandboxes", NULL, &all);
	json_object_foreach(all, k, v) {
		id = json_string_value(json_object_get(json_object_get(v,
		    "metadata"), "flowcgi_sandbox"));
		if (id != NULL && strcmp(id, sb->id) == 0)
			found = json_is_true(json_object_get(v, "alive")) &&
			    access(json_string_value(json_object_get(v, "dir")),
			    F_OK) == 0;
	}
	json_decref(all);
	return found;
}

static void
fake_break_connection(struct sandbox *sb)
{
	(void)sb;
	fake_http("POST", "/_drop_streams", "", NULL);
}

static void
test_conformance(void)
{
	struct sandbox_config	cfg;
	json_t			*o = options();

	printf("# the conformance suite (sandbox_conformance.h)\n");
	config(&cfg, o);
	if (cfg.max_output < (1 << 20))
		cfg.max_output = 1 << 20;
	conformance_opts.count_procs = host_procs_with;
	conformance_opts.workspace_exists = fake_workspace_exists;
	conformance_opts.break_connection = fake_break_connection;
	conformance_run(prov, &cfg);
	json_decref(o);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	conf_defaults(&hconf);
	heng.conf = &hconf;
	log_init(CONF_LOG_ERROR, NULL);
	prov = sandbox_provider_find("e2b");
	if (!CHECK(prov != NULL) || !CHECK(fake_start() == 0)) {
		fake_proc_stop(&fake_pid);
		return tap_done();
	}
	test_sdk_scenario();
	test_wire();
	test_exec();
	test_files();
	test_lifetime();
	test_errors();
	test_conformance();
	fake_proc_stop(&fake_pid);
	return tap_done();
}
