/*
 * outbound.c — the one libcurl wrapper every outbound request goes
 * through: timeouts, a response size cap, http/https only, and the SSRF
 * guard. A request is fetched whole (outbound_fetch) or read as a stream
 * for as long as its reader wants (outbound_stream_*, on a curl multi
 * handle of its own so that the reader decides when it moves).
 *
 * The guard sits in CURLOPT_OPENSOCKETFUNCTION: it sees the address curl
 * is about to connect to, after DNS resolution and on every redirect, so a
 * name that resolves (or re-resolves) to a private address is refused.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include <curl/curl.h>

#include "engine/internal.h"

struct fetch {
	const struct outbound_req	*req;
	struct outbound_resp		*resp;
	struct dbuf			 body;	/* grows resp->body, which
						 * owns its bytes */
	int64_t				 max;
	int				 guard;
	int				 blocked;
	int				 too_big;
	int				 head_done;	/* a final head is in */
	char				 blocked_addr[INET6_ADDRSTRLEN];
};

static int
v4_private(uint32_t a)
{
	return (a >> 24) == 0 ||		/* 0.0.0.0/8 */
	    (a >> 24) == 10 ||			/* 10/8 */
	    (a >> 22) == (100u << 2 | 1) ||	/* 100.64/10 */
	    (a >> 24) == 127 ||			/* loopback */
	    (a >> 16) == (169u << 8 | 254) ||	/* link-local */
	    (a >> 20) == (172u << 4 | 1) ||	/* 172.16/12 */
	    (a >> 8) == (192u << 16 | 0 << 8 | 0) ||	/* 192.0.0/24 */
	    (a >> 8) == (192u << 16 | 0 << 8 | 2) ||	/* TEST-NET-1 */
	    (a >> 16) == (192u << 8 | 168) ||	/* 192.168/16 */
	    (a >> 17) == (198u << 7 | 9) ||	/* 198.18/15 */
	    (a >> 8) == (198u << 16 | 51 << 8 | 100) ||	/* TEST-NET-2 */
	    (a >> 8) == (203u << 16 | 0 << 8 | 113) ||	/* TEST-NET-3 */
	    (a >> 28) >= 14;			/* multicast, reserved */
}

int
outbound_addr_private(const struct sockaddr *addr)
{
	const struct sockaddr_in	*s4;
	const struct sockaddr_in6	*s6;
	const unsigned char		*b;
	uint32_t			 v4;
	static const unsigned char	 mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0,
					    0, 0, 0xff, 0xff };
	static const unsigned char	 nat64[12] = { 0, 0x64, 0xff, 0x9b };

	if (addr->sa_family == AF_INET) {
		s4 = (const struct sockaddr_in *)addr;
		return v4_private(ntohl(s4->sin_addr.s_addr));
	}
	if (addr->sa_family != AF_INET6)
		return 1;
	s6 = (const struct sockaddr_in6 *)addr;
	b = s6->sin6_addr.s6_addr;
	/* IPv4-mapped and NAT64 addresses carry an IPv4 address to judge. */
	if (memcmp(b, mapped, 12) == 0 || memcmp(b, nat64, 12) == 0) {
		v4 = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 |
		    (uint32_t)b[14] << 8 | b[15];
		return v4_private(v4);
	}
	if (IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr) ||
	    IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr) ||
	    IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr) ||
	    IN6_IS_ADDR_SITELOCAL(&s6->sin6_addr) ||
	    IN6_IS_ADDR_MULTICAST(&s6->sin6_addr) ||
	    IN6_IS_ADDR_V4COMPAT(&s6->sin6_addr))
		return 1;
	if ((b[0] & 0xfe) == 0xfc)	/* unique local fc00::/7 */
		return 1;
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8)
		return 1;		/* documentation 2001:db8::/32 */
	return 0;
}

static curl_socket_t
open_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct fetch	*f = arg;
	const void	*ip;

	(void)purpose;
	if (f->guard && outbound_addr_private(&a->addr)) {
		f->blocked = 1;
		ip = a->family == AF_INET ?
		    (const void *)&((struct sockaddr_in *)&a->addr)->sin_addr :
		    (const void *)&((struct sockaddr_in6 *)&a->addr)->sin6_addr;
		inet_ntop(a->family, ip, f->blocked_addr,
		    sizeof(f->blocked_addr));
		return CURL_SOCKET_BAD;
	}
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

/*
 * 1 when the head kept in r (its status line first) is one another head
 * follows: 1xx, or a redirect curl is about to follow.
 */
static int
head_interim(const struct fetch *f, const struct outbound_resp *r)
{
	const char	*sp;
	int		 code;

	if (r->headers == NULL || (sp = memchr(r->headers, ' ',
	    r->headers_len)) == NULL || r->headers + r->headers_len - sp < 4)
		return 0;
	code = (sp[1] - '0') * 100 + (sp[2] - '0') * 10 + (sp[3] - '0');
	return (code >= 100 && code < 200) || (f->req->follow &&
	    (code == 301 || code == 302 || code == 303 || code == 307 ||
	    code == 308));
}

/* Keeps the header block of the last response (redirects start over). */
static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
	struct fetch		*f = arg;
	struct outbound_resp	*r = f->resp;
	size_t			 len = size * n, l = len;
	char			*nh;

	while (l > 0 && (p[l - 1] == '\n' || p[l - 1] == '\r'))
		l--;
	if (f->req->on_header != NULL && l > 0)
		f->req->on_header(p, l, f->req->header_arg);
	if (len >= 5 && memcmp(p, "HTTP/", 5) == 0) {
		r->headers_len = 0;
		f->head_done = 0;
	} else if (l == 0 && !head_interim(f, r))
		f->head_done = 1;	/* the blank line after a final head */
	if (r->headers_len + len > 65536)
		return len;	/* keep the first 64 KiB; ignore the rest */
	if ((nh = realloc(r->headers, r->headers_len + len + 1)) == NULL)
		return 0;
	memcpy(nh + r->headers_len, p, len);
	r->headers_len += len;
	nh[r->headers_len] = '\0';
	r->headers = nh;
	return len;
}

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
	struct fetch		*f = arg;
	struct outbound_resp	*r = f->resp;
	size_t			 len = size * n;

	if ((int64_t)(r->len + len) > f->max) {
		f->too_big = 1;
		return 0;
	}
	if (f->req->on_data != NULL) {
		r->len += len;
		return f->req->on_data(p, len, f->req->arg) == 0 ? len : 0;
	}
	if (dbuf_add(&f->body, p, len) != DBUF_OK)
		return 0;
	r->body = f->body.p;
	r->len = f->body.len;
	return len;
}

/*
 * Sets up h for req with the http.* limits, the guard and f's callbacks.
 * cerr must outlive the transfer. total is CURLOPT_TIMEOUT (0: none).
 */
static void
easy_setup(const struct conf *c, CURL *h, const struct outbound_req *req,
    struct fetch *f, char *cerr, long total)
{
	curl_easy_setopt(h, CURLOPT_URL, req->url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, (long)(req->connect_timeout >
	    0 && req->connect_timeout < c->http_connect_timeout ?
	    req->connect_timeout : c->http_connect_timeout));
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, f);
	if (req->insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	curl_easy_setopt(h, CURLOPT_TIMEOUT, total);
	curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_socket);
	curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, f);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, f);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(h, CURLOPT_USERAGENT, "flowcgi/" FLOWCGI_VERSION);
	/* A proxy from the environment would hide the real destination
	 * from the guard. */
	if (f->guard)
		curl_easy_setopt(h, CURLOPT_PROXY, "");
	if (req->follow) {
		curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
		curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
	}
	if (req->headers != NULL)
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, req->headers);
	if (req->body != NULL) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, req->body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)req->body_len);
	}
	if (req->method != NULL && strcasecmp(req->method, "HEAD") == 0)
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	else if (req->method != NULL)
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req->method);
}

/*
 * What became of a transfer: the guard's refusal, the size cap, a curl
 * error. Returns 0 or ENGINE_EFETCH / ENGINE_ELIMIT with err set.
 */
static int
transfer_result(const struct fetch *f, const char *url, CURLcode cc,
    const char *cerr, char *err)
{
	if (f->blocked) {
		engine_invalid(err, "refused to connect to %s: private, "
		    "loopback and link-local addresses are not allowed "
		    "(http.allow_private)", f->blocked_addr);
		return ENGINE_EFETCH;
	}
	if (f->too_big) {
		engine_invalid(err, "response is larger than %lld bytes "
		    "(http.max_response)", (long long)f->max);
		return ENGINE_ELIMIT;
	}
	if (cc != CURLE_OK) {
		engine_invalid(err, "%s: %s", url, cerr[0] ? cerr :
		    curl_easy_strerror(cc));
		return ENGINE_EFETCH;
	}
	return 0;
}

int
outbound_fetch(struct engine *e, const struct outbound_req *req, char *err,
    struct outbound_resp *resp)
{
	const struct conf	*c = e->conf;
	struct fetch		 f;
	CURL			*h = NULL;
	CURLcode		 cc;
	char			 cerr[CURL_ERROR_SIZE] = "";
	const char		*ct = NULL;
	int			 rc = 0;

	memset(resp, 0, sizeof(*resp));
	memset(&f, 0, sizeof(f));
	f.req = req;
	f.resp = resp;
	f.max = req->max_bytes > 0 ? req->max_bytes : c->http_max_response;
	f.guard = !req->trusted && !c->http_allow_private;
	if ((h = curl_easy_init()) == NULL) {
		rc = ENGINE_ENOMEM;
		goto out;
	}
	easy_setup(c, h, req, &f, cerr, (long)(req->timeout > 0 ?
	    req->timeout : c->http_timeout));
	cc = curl_easy_perform(h);
	if ((rc = transfer_result(&f, req->url, cc, cerr, err)) != 0)
		goto out;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
	{
		curl_off_t ra = 0;

		resp->retry_after = -1;
		if (curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &ra) ==
		    CURLE_OK && ra > 0)
			resp->retry_after = (long)ra;
	}
	if (curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK &&
	    ct != NULL)
		resp->content_type = strdup(ct);
	if (resp->body == NULL && req->on_data == NULL &&
	    (resp->body = calloc(1, 1)) == NULL)
		rc = ENGINE_ENOMEM;
out:
	if (h != NULL)
		curl_easy_cleanup(h);
	if (rc != 0)
		outbound_resp_release(resp);
	return rc;
}

/* ====== Streams ====== */

/* Monotonic milliseconds, for the stream's deadlines. */
static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct outbound_stream {
	struct outbound_req	 req;	/* a copy; its pointers are the
					 * caller's */
	struct outbound_resp	 resp;
	struct fetch		 f;
	CURL			*h;
	CURLM			*m;
	char			 cerr[CURL_ERROR_SIZE];
	int			 ended;	/* the transfer is over */
	CURLcode		 cc;
};

/* One round of the transfer: moves what is there, then waits up to ms. */
static int
stream_step(struct outbound_stream *s, int ms)
{
	CURLMsg	*msg;
	int	 running = 0, left;

	if (curl_multi_perform(s->m, &running) != CURLM_OK)
		return -1;
	while ((msg = curl_multi_info_read(s->m, &left)) != NULL)
		if (msg->msg == CURLMSG_DONE) {
			s->ended = 1;
			s->cc = msg->data.result;
		}
	if (running == 0)
		s->ended = 1;
	if (!s->ended && ms > 0 && curl_multi_poll(s->m, NULL, 0, ms, NULL) !=
	    CURLM_OK)
		return -1;
	return 0;
}

int
outbound_stream_open(struct engine *e, const struct outbound_req *req,
    char *err, struct outbound_stream **out)
{
	const struct conf	*c = e->conf;
	struct outbound_stream	*s;
	int64_t			 deadline;
	int			 rc = ENGINE_ENOMEM;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return ENGINE_ENOMEM;
	s->req = *req;
	s->f.req = &s->req;
	s->f.resp = &s->resp;
	s->f.max = req->max_bytes > 0 ? req->max_bytes : c->http_max_response;
	s->f.guard = !req->trusted && !c->http_allow_private;
	s->resp.retry_after = -1;
	if ((s->h = curl_easy_init()) == NULL || (s->m = curl_multi_init()) ==
	    NULL)
		goto fail;
	/* no overall limit: the stream lives as long as its reader wants */
	easy_setup(c, s->h, &s->req, &s->f, s->cerr, 0L);
	if (curl_multi_add_handle(s->m, s->h) != CURLM_OK)
		goto fail;
	/* the response's head (or the end of the transfer), within limits */
	deadline = mono_ms() + (int64_t)(req->timeout > 0 ?
	    req->timeout : c->http_timeout) * 1000;
	while (!s->ended && !s->f.head_done) {
		if (mono_ms() >= deadline) {
			rc = engine_invalid(err, "%s: no answer within %d "
			    "seconds", req->url, req->timeout > 0 ?
			    req->timeout : c->http_timeout);
			rc = ENGINE_EFETCH;
			goto fail;
		}
		if (stream_step(s, 50) != 0)
			goto fail;
	}
	if ((rc = transfer_result(&s->f, req->url, s->ended ? s->cc :
	    CURLE_OK, s->cerr, err)) != 0)
		goto fail;
	curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &s->resp.status);
	*out = s;
	return 0;
fail:
	outbound_stream_close(s);
	return rc;
}

long
outbound_stream_status(const struct outbound_stream *s)
{
	return s->resp.status;
}

int
outbound_stream_wait(struct outbound_stream *s, int timeout_ms,
    int (*done)(void *arg), void *arg, char *err)
{
	int64_t	deadline = mono_ms() + timeout_ms, left;
	int	rc;

	for (;;) {
		if (done != NULL && done(arg))
			return 0;
		if (s->ended) {
			if ((rc = transfer_result(&s->f, s->req.url, s->cc,
			    s->cerr, err)) != 0)
				return rc;
			engine_invalid(err, "%s: the server closed the stream",
			    s->req.url);
			return ENGINE_EFETCH;
		}
		if ((left = deadline - mono_ms()) <= 0) {
			engine_invalid(err, "%s: no answer on the stream "
			    "within %d seconds", s->req.url, timeout_ms / 1000);
			return ENGINE_EFETCH;
		}
		if (stream_step(s, left < 100 ? (int)left : 100) != 0) {
			engine_invalid(err, "%s: the stream failed",
			    s->req.url);
			return ENGINE_EFETCH;
		}
	}
}

void
outbound_stream_close(struct outbound_stream *s)
{
	if (s == NULL)
		return;
	if (s->m != NULL && s->h != NULL)
		curl_multi_remove_handle(s->m, s->h);
	if (s->h != NULL)
		curl_easy_cleanup(s->h);
	if (s->m != NULL)
		curl_multi_cleanup(s->m);
	outbound_resp_release(&s->resp);
	free(s);
}

void
outbound_resp_release(struct outbound_resp *resp)
{
	free(resp->body);
	free(resp->content_type);
	free(resp->headers);
	memset(resp, 0, sizeof(*resp));
}
