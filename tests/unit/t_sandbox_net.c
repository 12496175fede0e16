/*
 * t_sandbox_net.c — the parts of the local sandbox's network that need no
 * sandbox (engine/sandbox/net.c): the allow list, which addresses the
 * proxy refuses, the proxy's request parser and rewrite, the environment
 * a command gets, the note for the bash tool, and sandbox.network_allow
 * as a setting. t_sandbox_local runs the proxy for real.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/sandbox/sandbox.h"
#include "tests/unit/tap.h"

static struct sandbox_net_allow *
allow(const char *list)
{
	struct sandbox_net_allow	*a = NULL;
	char				 err[ENGINE_ERRMAX];

	if (sandbox_net_allow_parse(list, err, &a) != 0)
		printf("# parse '%s': %s\n", list, err);
	return a;
}

/* sandbox_net_addr_refused of a textual address. */
static const char *
refused(const struct sandbox_net_allow *a, const char *addr)
{
	struct sockaddr_in	s4;
	struct sockaddr_in6	s6;

	memset(&s4, 0, sizeof(s4));
	memset(&s6, 0, sizeof(s6));
	if (inet_pton(AF_INET, addr, &s4.sin_addr) == 1) {
		s4.sin_family = AF_INET;
		return sandbox_net_addr_refused(a, (struct sockaddr *)&s4);
	}
	if (inet_pton(AF_INET6, addr, &s6.sin6_addr) == 1) {
		s6.sin6_family = AF_INET6;
		return sandbox_net_addr_refused(a, (struct sockaddr *)&s6);
	}
	return "bad test address";
}

static void
test_allow(void)
{
	struct sandbox_net_allow	*a;
	char				 err[ENGINE_ERRMAX];
	static const char *const	 bad[] = {
		"*.", "a b/3", "10.0.0.0/33", "::1/129", "ex ample!",
		"http://x", "*.*.x", "10.0.0.1/", "-", "a..b", ".a",
	};
	size_t				 i;

	if (!CHECK((a = allow("PyPI.org, *.pythonhosted.org 127.0.0.1 "
	    "10.1.0.0/16,[::1],fd00::/8")) != NULL))
		return;
	CHECK(sandbox_net_host_allowed(a, "pypi.org"));
	CHECK(!sandbox_net_host_allowed(a, "www.pypi.org"));
	CHECK(!sandbox_net_host_allowed(a, "pypi.org.evil.com"));
	CHECK(sandbox_net_host_allowed(a, "files.pythonhosted.org"));
	CHECK(sandbox_net_host_allowed(a, "a.b.pythonhosted.org"));
	CHECK(!sandbox_net_host_allowed(a, "pythonhosted.org"));
	CHECK(!sandbox_net_host_allowed(a, "evilpythonhosted.org"));
	CHECK(sandbox_net_host_allowed(a, "127.0.0.1"));
	CHECK(!sandbox_net_host_allowed(a, "127.0.0.2"));
	CHECK(sandbox_net_host_allowed(a, "10.1.200.3"));
	CHECK(!sandbox_net_host_allowed(a, "10.2.0.1"));
	CHECK(sandbox_net_host_allowed(a, "::1"));
	CHECK(sandbox_net_host_allowed(a, "fd12::5"));
	CHECK(!sandbox_net_host_allowed(a, "fe80::1"));
	CHECK(!sandbox_net_host_allowed(a, "localhost"));
	CHECK(sandbox_net_allow_loopback(a));
	/* addresses: listed ranges pass, other special ones not */
	CHECK(refused(a, "127.0.0.1") == NULL);
	CHECK(refused(a, "::ffff:127.0.0.1") == NULL);
	CHECK(refused(a, "10.1.2.3") == NULL);
	CHECK(refused(a, "fd00::1") == NULL);
	CHECK_STR(refused(a, "127.0.0.2"), "a loopback address");
	CHECK_STR(refused(a, "10.2.0.1"), "a private or reserved address");
	CHECK_STR(refused(a, "192.168.1.1"), "a private or reserved address");
	CHECK_STR(refused(a, "172.16.0.1"), "a private or reserved address");
	CHECK_STR(refused(a, "100.64.0.1"), "a private or reserved address");
	CHECK_STR(refused(a, "0.0.0.0"), "a private or reserved address");
	CHECK_STR(refused(a, "169.254.169.254"), "a link-local address");
	CHECK_STR(refused(a, "fe80::1"), "a link-local address");
	CHECK_STR(refused(a, "fc00::1"), "a private or reserved address");
	CHECK_STR(refused(a, "::ffff:192.168.0.1"),
	    "a private or reserved address");
	CHECK(refused(a, "151.101.0.223") == NULL);
	CHECK(refused(a, "2a04:4e42::223") == NULL);
	sandbox_net_allow_free(a);

	/* "*": any host, still no special address */
	if (CHECK((a = allow("*")) != NULL)) {
		CHECK(sandbox_net_host_allowed(a, "example.com"));
		CHECK(sandbox_net_host_allowed(a, "10.0.0.1"));
		CHECK_STR(refused(a, "10.0.0.1"),
		    "a private or reserved address");
		CHECK(!sandbox_net_allow_loopback(a));
		sandbox_net_allow_free(a);
	}
	/* empty: nothing */
	if (CHECK((a = allow(" , ")) != NULL)) {
		CHECK(!sandbox_net_host_allowed(a, "example.com"));
		sandbox_net_allow_free(a);
	}
	if (CHECK((a = allow("localhost")) != NULL)) {
		CHECK(sandbox_net_allow_loopback(a));
		CHECK(sandbox_net_host_allowed(a, "localhost"));
		/* a name never unlocks an address */
		CHECK_STR(refused(a, "127.0.0.1"), "a loopback address");
		sandbox_net_allow_free(a);
	}
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		a = NULL;
		if (!CHECK(sandbox_net_allow_parse(bad[i], err, &a) ==
		    ENGINE_EINVAL))
			printf("# accepted: %s\n", bad[i]);
		CHECK(a == NULL);
		CHECK(strstr(err, "sandbox.network_allow") != NULL);
	}
}

/* Parses text; returns the parser's code, r filled. */
static int
parse(const char *text, struct sandbox_proxy_req *r)
{
	return sandbox_proxy_parse(text, strlen(text), r);
}

static void
test_parse(void)
{
	struct sandbox_proxy_req	 r;
	struct dbuf		 b = { 0 };
	char				*big;
	const char			*get;
	size_t				 i;
	static const char *const	 bad[] = {
		"GET /x HTTP/1.1\r\n\r\n",
		"GET https://a/ HTTP/1.1\r\n\r\n",
		"GET http://user:pw@a/ HTTP/1.1\r\n\r\n",
		"GET http:// HTTP/1.1\r\n\r\n",
		"GET http://a:0/ HTTP/1.1\r\n\r\n",
		"GET http://a:65536/ HTTP/1.1\r\n\r\n",
		"GET http://a:1x/ HTTP/1.1\r\n\r\n",
		"GET http://a b/ HTTP/1.1\r\n\r\n",
		"GET http://a/ HTTP/2.0\r\n\r\n",
		"GET http://a/ HTTP/1.1 \r\n\r\n",
		"GET  http://a/ HTTP/1.1\r\n\r\n",
		"G(T http://a/ HTTP/1.1\r\n\r\n",
		"CONNECT a HTTP/1.1\r\n\r\n",
		"CONNECT a: HTTP/1.1\r\n\r\n",
		"CONNECT [::1 HTTP/1.1\r\n\r\n",
		"CONNECT [::1]x:443 HTTP/1.1\r\n\r\n",
		"CONNECT [a.b]:443 HTTP/1.1\r\n\r\n",
		"CONNECT a/b:443 HTTP/1.1\r\n\r\n",
		"CONNECT a%00b:443 HTTP/1.1\r\n\r\n",
		"\r\n\r\n",
		" GET http://a/ HTTP/1.1\r\n\r\n",
		"GET http://a/\x01 HTTP/1.1\r\n\r\n",
		"GET http://a/ HTTP/1.1\r\nHost: a\r\n b\r\n\r\n",
		"GET http://a/ HTTP/1.1\r\nHost: a\r\n\tb\r\n\r\n",
		"GET http://a/ HTTP/1.1\r\nno colon\r\n\r\n",
		"GET http://a/ HTTP/1.1\r\n: empty name\r\n\r\n",
		"CONNECT a:1 HTTP/1.1\r\nBad Name: x\r\n\r\n",
	};

	CHECK_INT(parse("CONNECT Files.PythonHosted.org:443 HTTP/1.1\r\n"
	    "Host: x\r\n\r\nTLS", &r), SANDBOX_PROXY_OK);
	CHECK(r.connect);
	CHECK_STR(r.host, "files.pythonhosted.org");
	CHECK_INT(r.port, 443);
	CHECK_INT(r.head_len, strlen("CONNECT Files.PythonHosted.org:443 "
	    "HTTP/1.1\r\nHost: x\r\n\r\n"));
	CHECK_INT(parse("CONNECT [2001:db8::1]:8443 HTTP/1.0\r\n\r\n", &r),
	    SANDBOX_PROXY_OK);
	CHECK_STR(r.host, "2001:db8::1");
	CHECK_INT(r.port, 8443);
	CHECK_INT(r.minor, 0);
	/* bare LF lines pass too */
	CHECK_INT(parse("CONNECT a:1 HTTP/1.1\n\n", &r), SANDBOX_PROXY_OK);
	CHECK_INT(parse("CONNECT a:1 HTTP/1.1\r\nHost: a\r\n", &r),
	    SANDBOX_PROXY_MORE);
	CHECK_INT(parse("CONN", &r), SANDBOX_PROXY_MORE);

	get = "GET HTTP://Index.Local:8080/simple/pkg/?a=1 HTTP/1.1\r\n"
	    "Host: evil.example\r\nProxy-Connection: keep-alive\r\n"
	    "proxy-authorization: Basic eA==\r\nConnection: keep-alive\r\n"
	    "Keep-Alive: 5\r\nAccept: */*\r\n\r\nbody";
	CHECK_INT(parse(get, &r), SANDBOX_PROXY_OK);
	CHECK(!r.connect);
	CHECK_STR(r.method, "GET");
	CHECK_STR(r.host, "index.local");
	CHECK_INT(r.port, 8080);
	CHECK_INT(r.head_len, strlen(get) - 4);
	CHECK_INT(sandbox_proxy_rewrite(get, &r, &b), 0);
	CHECK_STR(b.p, "GET /simple/pkg/?a=1 HTTP/1.1\r\n"
	    "Host: Index.Local:8080\r\nAccept: */*\r\n"
	    "Connection: close\r\n\r\n");
	free(b.p);
	memset(&b, 0, sizeof(b));
	b.max = INT64_MAX / 2;
	get = "POST http://a?q HTTP/1.0\r\n\r\n";
	CHECK_INT(parse(get, &r), SANDBOX_PROXY_OK);
	CHECK_INT(r.port, 80);
	CHECK_INT(sandbox_proxy_rewrite(get, &r, &b), 0);
	CHECK_STR(b.p, "POST /?q HTTP/1.0\r\nHost: a\r\n"
	    "Connection: close\r\n\r\n");
	free(b.p);
	get = "GET http://[::1]:81 HTTP/1.1\r\n\r\n";
	CHECK_INT(parse(get, &r), SANDBOX_PROXY_OK);
	CHECK_STR(r.host, "::1");
	CHECK_INT(r.port, 81);

	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		if (!CHECK(parse(bad[i], &r) == SANDBOX_PROXY_BAD))
			printf("# accepted: %s\n", bad[i]);
	/* a head that never ends is cut at 16 KiB */
	if (CHECK((big = malloc(20000)) != NULL)) {
		memcpy(big, "GET http://a/ HTTP/1.1\r\n", 24);
		memset(big + 24, 'x', 20000 - 24);
		CHECK_INT(sandbox_proxy_parse(big, 20000, &r),
		    SANDBOX_PROXY_BAD);
		CHECK_INT(sandbox_proxy_parse(big, 1000, &r),
		    SANDBOX_PROXY_MORE);
		free(big);
	}
}

static void
test_env(void)
{
	struct sandbox_config	 cfg;
	struct conf		 c;
	const char		*env[32];
	char			 buf[1024];
	int			 n, i, saw_no = 0, saw_pip = 0;

	conf_defaults(&c);
	sandbox_config_init(&cfg, &c);
	CHECK((n = sandbox_net_env(&cfg, buf, sizeof(buf), env, 32)) > 0);
	for (i = 0; i < n; i++) {
		saw_no += strcmp(env[i], "NO_PROXY=localhost,127.0.0.1,::1") ==
		    0;
		saw_pip += strcmp(env[i], "PIP_BREAK_SYSTEM_PACKAGES=1") == 0;
	}
	CHECK_INT(saw_no, 1);
	CHECK_INT(saw_pip, 1);
	CHECK_STR(env[0], "HTTP_PROXY=http://127.0.0.1:3128");
	/* a loopback entry: loopback goes to the proxy */
	snprintf(cfg.network_allow, sizeof(cfg.network_allow), "127.0.0.1");
	CHECK((n = sandbox_net_env(&cfg, buf, sizeof(buf), env, 32)) > 0);
	for (i = 0, saw_no = 0; i < n; i++)
		saw_no += strcmp(env[i], "NO_PROXY=") == 0;
	CHECK_INT(saw_no, 1);
	CHECK_INT(sandbox_net_env(&cfg, buf, 64, env, 32), -1);
	CHECK_INT(sandbox_net_env(&cfg, buf, sizeof(buf), env, 4), -1);
}

static void
test_note(void)
{
	struct sandbox_config	 cfg;
	struct conf		 c;
	char			*s;

	conf_defaults(&c);
	sandbox_config_init(&cfg, &c);
	s = sandbox_tool_note(&sandbox_provider_local, &cfg);
	if (CHECK(s != NULL)) {
		printf("# off: %s\n", s);
		CHECK(strstr(s, "no network access") != NULL);
		if (access("/usr/bin/python3", X_OK) == 0)
			CHECK(strstr(s, "Installed: python3") != NULL);
		free(s);
	}
	cfg.network = 1;
	snprintf(cfg.network_allow, sizeof(cfg.network_allow),
	    "pypi.org,*.pythonhosted.org,*");
	s = sandbox_tool_note(&sandbox_provider_local, &cfg);
	if (CHECK(s != NULL)) {
		printf("# on: %s\n", s);
		CHECK(strstr(s, "Hosts it may reach: pypi.org, "
		    "*.pythonhosted.org, any public host. ") != NULL);
		CHECK(strstr(s, "HTTP 403") != NULL);
		CHECK(strstr(s, "/workspace/.local") != NULL);
		free(s);
	}
	cfg.network_allow[0] = '\0';
	s = sandbox_tool_note(&sandbox_provider_local, &cfg);
	if (CHECK(s != NULL)) {
		CHECK(strstr(s, "Hosts it may reach: none.") != NULL);
		free(s);
	}
	s = sandbox_tool_note(&sandbox_provider_e2b, &cfg);
	if (CHECK(s != NULL)) {
		CHECK_STR(s, "The sandbox has network access.");
		free(s);
	}
	s = sandbox_tool_note(&sandbox_provider_ssh, &cfg);
	if (CHECK(s != NULL)) {
		CHECK(strstr(s, "remote host") != NULL);
		free(s);
	}
}

static void
test_setting(void)
{
	struct conf	 c;
	char		 err[CONF_ERRMAX] = "", path[256], dir[64];
	FILE		*f;

	conf_defaults(&c);
	CHECK_STR(c.sandbox_network_allow, "*");
	CHECK_INT(c.sandbox_network_connections, 32);
	CHECK_INT(c.sandbox_network_idle, 60);
	snprintf(dir, sizeof(dir), "/tmp/t_sandbox_net.XXXXXX");
	if (!CHECK(mkdtemp(dir) != NULL))
		return;
	snprintf(path, sizeof(path), "%s/f.yml", dir);
	if ((f = fopen(path, "w")) != NULL) {
		fputs("sandbox:\n  network_allow: [pypi.org, "
		    "\"*.pythonhosted.org\", 10.0.0.0/8]\n", f);
		fclose(f);
	}
	CHECK_INT(conf_load_file(&c, path, err), 0);
	CHECK_STR(c.sandbox_network_allow,
	    "pypi.org,*.pythonhosted.org,10.0.0.0/8");
	if ((f = fopen(path, "w")) != NULL) {
		fputs("sandbox:\n  network_allow: []\n", f);
		fclose(f);
	}
	CHECK_INT(conf_load_file(&c, path, err), 0);
	CHECK_STR(c.sandbox_network_allow, "");
	if ((f = fopen(path, "w")) != NULL) {
		fputs("sandbox:\n  network_allow: [[a]]\n", f);
		fclose(f);
	}
	CHECK(conf_load_file(&c, path, err) != 0);
	CHECK(strstr(err, "sandbox.network_allow") != NULL);
	setenv("FLOWCGI_SANDBOX_NETWORK_ALLOW", " a.org  b.org,,c.org ", 1);
	CHECK_INT(conf_load_env(&c, err), 0);
	CHECK_STR(c.sandbox_network_allow, "a.org,b.org,c.org");
	unsetenv("FLOWCGI_SANDBOX_NETWORK_ALLOW");
	unlink(path);
	rmdir(dir);
}

int
main(void)
{
	test_allow();
	test_parse();
	test_env();
	test_note();
	test_setting();
	return tap_done();
}
