/*
 * t_engine_outbound.c — the outbound HTTP wrapper: the SSRF guard's
 * address table, refusals, a trusted fetch from a loopback server, the
 * response size cap.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine/internal.h"
#include "tap.h"

static int
priv(const char *ip)
{
	struct sockaddr_in	s4;
	struct sockaddr_in6	s6;

	memset(&s4, 0, sizeof(s4));
	memset(&s6, 0, sizeof(s6));
	if (inet_pton(AF_INET, ip, &s4.sin_addr) == 1) {
		s4.sin_family = AF_INET;
		return outbound_addr_private((struct sockaddr *)&s4);
	}
	if (inet_pton(AF_INET6, ip, &s6.sin6_addr) == 1) {
		s6.sin6_family = AF_INET6;
		return outbound_addr_private((struct sockaddr *)&s6);
	}
	return -1;
}

/* A one-shot HTTP server on loopback answering with a fixed body. */
struct srv {
	int		 fd;
	int		 port;
	size_t		 body_len;
};

static void *
serve(void *arg)
{
	struct srv	*s = arg;
	char		 buf[4096], head[256];
	char		*body;
	int		 c, n;

	if ((c = accept(s->fd, NULL, NULL)) < 0)
		return NULL;
	(void)read(c, buf, sizeof(buf));
	body = malloc(s->body_len);
	memset(body, 'x', s->body_len);
	n = snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Type: "
	    "text/yaml\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
	    s->body_len);
	(void)write(c, head, (size_t)n);
	(void)write(c, body, s->body_len);
	free(body);
	close(c);
	return NULL;
}

static void
srv_start(struct srv *s, pthread_t *t)
{
	struct sockaddr_in	a;
	socklen_t		len = sizeof(a);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	bind(s->fd, (struct sockaddr *)&a, sizeof(a));
	listen(s->fd, 4);
	getsockname(s->fd, (struct sockaddr *)&a, &len);
	s->port = ntohs(a.sin_port);
	pthread_create(t, NULL, serve, s);
}

int
main(void)
{
	static struct conf	 c;
	struct engine		*e = NULL;
	struct outbound_req	 rq;
	struct outbound_resp	 rs;
	struct srv		 s;
	pthread_t		 t;
	char			 err[ENGINE_ERRMAX], url[64], dir[] =
				    "/tmp/t_outbound.XXXXXX";

	/* The guard's table. */
	CHECK(priv("127.0.0.1") == 1);
	CHECK(priv("10.1.2.3") == 1);
	CHECK(priv("172.16.0.1") == 1);
	CHECK(priv("172.31.255.255") == 1);
	CHECK(priv("172.32.0.1") == 0);
	CHECK(priv("192.168.1.1") == 1);
	CHECK(priv("169.254.169.254") == 1);	/* cloud metadata */
	CHECK(priv("100.64.0.1") == 1);
	CHECK(priv("0.0.0.0") == 1);
	CHECK(priv("224.0.0.1") == 1);
	CHECK(priv("8.8.8.8") == 0);
	CHECK(priv("93.184.216.34") == 0);
	CHECK(priv("::1") == 1);
	CHECK(priv("::") == 1);
	CHECK(priv("fe80::1") == 1);
	CHECK(priv("fd00::1") == 1);
	CHECK(priv("::ffff:127.0.0.1") == 1);	/* mapped loopback */
	CHECK(priv("::ffff:8.8.8.8") == 0);
	CHECK(priv("64:ff9b::a00:1") == 1);	/* NAT64 of 10.0.0.1 */
	CHECK(priv("2606:4700::1111") == 0);

	conf_defaults(&c);
	CHECK(mkdtemp(dir) != NULL);
	snprintf(c.data_dir, sizeof(c.data_dir), "%s", dir);
	CHECK(engine_open(&c, err, &e) == 0);

	/* Untrusted destinations on loopback are refused at connect. */
	memset(&rq, 0, sizeof(rq));
	rq.url = "http://127.0.0.1:9/x.yml";
	CHECK(outbound_fetch(e, &rq, err, &rs) == ENGINE_EFETCH);
	CHECK(strstr(err, "refused to connect to 127.0.0.1") != NULL);
	CHECK(strstr(err, "http.allow_private") != NULL);
	rq.url = "http://localhost:9/";
	CHECK(outbound_fetch(e, &rq, err, &rs) == ENGINE_EFETCH);
	CHECK(strstr(err, "refused") != NULL);
	/* Only http and https. */
	rq.url = "file:///etc/passwd";
	CHECK(outbound_fetch(e, &rq, err, &rs) == ENGINE_EFETCH);

	/* A trusted fetch from a loopback server. */
	s.body_len = 1000;
	srv_start(&s, &t);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/a", s.port);
	rq.url = url;
	rq.trusted = 1;
	CHECK(outbound_fetch(e, &rq, err, &rs) == 0);
	CHECK_INT(rs.status, 200);
	CHECK_INT(rs.len, 1000);
	CHECK_STR(rs.content_type, "text/yaml");
	outbound_resp_release(&rs);
	pthread_join(t, NULL);
	close(s.fd);

	/* The size cap names its setting. */
	s.body_len = 200000;
	srv_start(&s, &t);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/a", s.port);
	rq.max_bytes = 100000;
	CHECK(outbound_fetch(e, &rq, err, &rs) == ENGINE_ELIMIT);
	CHECK(strstr(err, "http.max_response") != NULL);
	pthread_join(t, NULL);
	close(s.fd);

	engine_close(e);
	return tap_done();
}
