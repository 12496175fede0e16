/*
 * net.c — network for local sandboxes (sandbox.network): an egress proxy
 * on flowcgi's side that lets through only the hosts of
 * sandbox.network_allow, and the forwarder inside the sandbox that takes
 * programs to it.
 *
 * A sandbox with network keeps its own network namespace, whose only
 * interface is its loopback: no packet of it reaches anything but that
 * loopback. The one way out is a unix socket (<root>/net/proxy.sock on
 * the host) bound read-only into the sandbox as /run/flowcgi/proxy.sock,
 * where a thread of flowcgi (sandbox_proxy_start) accepts connections and
 * speaks HTTP proxy: CONNECT host:port (HTTPS, anything over TLS) and
 * absolute-URI requests (plain HTTP). It looks the host up itself once,
 * checks every address it got (loopback, private, link-local, unique
 * local and other special ranges are refused unless an IP or CIDR entry
 * lists them), and connects to one of exactly those addresses: a name
 * cannot resolve to one address for the check and to another for the
 * connection. A host not on the list, or an address refused, is answered
 * 403 with a sentence a model can act on.
 *
 * Programs find the proxy through HTTP_PROXY, HTTPS_PROXY and their kin
 * (sandbox_net_env), which name 127.0.0.1:SANDBOX_PROXY_PORT inside the
 * sandbox. There a forwarder (netfwd/netfwd.c, a program of its own) is
 * the command's parent: it listens there and relays each connection to
 * the unix socket. It is no part of the enforcement: code in the sandbox
 * may kill it or talk to the socket itself, and meets the same proxy.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "engine/sandbox/relay.h"
#include "engine/sandbox/sandbox.h"

#define HEAD_MAX	16384	/* bytes of a request's head */
#define RULES_MAX	256	/* entries of network_allow */

/* ====== Allow list ====== */

/* One entry of sandbox.network_allow. */
struct net_rule {
	char		 name[256];	/* lower case; "" for an address */
	int		 suffix;	/* "*.name": the names under name */
	int		 any;		/* "*" */
	int		 family;	/* AF_INET or AF_INET6: an address */
	unsigned char	 addr[16];
	int		 bits;		/* its prefix length */
};

struct sandbox_net_allow {
	struct net_rule	*v;
	size_t		 n;
	int		 loopback;	/* an entry covers a loopback address */
};

/* 1 when s is a host name: dot-separated labels of 1 to 63 letters,
 * digits, '-' and '_', none starting or ending with '-'. */
static int
name_ok(const char *s)
{
	size_t	n = strlen(s), l;

	if (n == 0 || n > 253)
		return 0;
	for (;;) {
		l = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
		    "VWXYZ0123456789-_");
		if (l == 0 || l > 63 || s[0] == '-' || s[l - 1] == '-')
			return 0;
		if (s[l] == '\0')
			return 1;
		if (s[l] != '.')
			return 0;
		s += l + 1;
	}
}

/* The address in text (no brackets) into family and addr; 0 or -1. */
static int
addr_parse(const char *text, int *family, unsigned char *addr)
{
	if (inet_pton(AF_INET, text, addr) == 1) {
		*family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, text, addr) == 1) {
		*family = AF_INET6;
		return 0;
	}
	return -1;
}

/* 1 when the first bits bits of a and b are the same. */
static int
prefix_same(const unsigned char *a, const unsigned char *b, int bits)
{
	int	i;

	for (i = 0; bits >= 8; i++, bits -= 8)
		if (a[i] != b[i])
			return 0;
	return bits == 0 || ((a[i] ^ b[i]) & (0xff00 >> bits) & 0xff) == 0;
}

/* An address into the rule's form: IPv4-mapped IPv6 as IPv4. */
static int
sa_addr(const struct sockaddr *sa, unsigned char *addr)
{
	const struct sockaddr_in6	*s6;
	static const unsigned char	 mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0,
					    0, 0, 0xff, 0xff };

	if (sa->sa_family == AF_INET) {
		memcpy(addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return AF_INET;
	}
	s6 = (const struct sockaddr_in6 *)sa;
	if (memcmp(s6->sin6_addr.s6_addr, mapped, 12) == 0) {
		memcpy(addr, s6->sin6_addr.s6_addr + 12, 4);
		return AF_INET;
	}
	memcpy(addr, s6->sin6_addr.s6_addr, 16);
	return AF_INET6;
}

int
sandbox_net_allow_parse(const char *list, char *err,
    struct sandbox_net_allow **out)
{
	struct sandbox_net_allow	*a = NULL;
	struct net_rule			*r;
	char				 w[256], *slash, *end;
	const char			*p = list;
	size_t				 n, i;
	long				 bits;
	int				 rc = 0;
	static const unsigned char	 lo6[16] = { [15] = 1 };

	*out = NULL;
	if ((a = calloc(1, sizeof(*a))) == NULL ||
	    (a->v = calloc(RULES_MAX, sizeof(*a->v))) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		p += strspn(p, ", \t");
		if (*p == '\0')
			break;
		n = strcspn(p, ", \t");
		if (n >= sizeof(w) || a->n == RULES_MAX) {
			rc = sandbox_fail(err, ENGINE_EINVAL, "sandbox.network_"
			    "allow: an entry is too long, or more than %d "
			    "entries", RULES_MAX);
			goto out;
		}
		memcpy(w, p, n);
		w[n] = '\0';
		p += n;
		for (i = 0; i < n; i++)
			w[i] = (char)tolower((unsigned char)w[i]);
		r = &a->v[a->n];
		if (strcmp(w, "*") == 0)
			r->any = 1;
		else if (strncmp(w, "*.", 2) == 0 && name_ok(w + 2))
			r->suffix = snprintf(r->name, sizeof(r->name), "%s",
			    w + 1) > 0;
		else {
			bits = -1;
			if ((slash = strchr(w, '/')) != NULL) {
				*slash = '\0';
				errno = 0;
				bits = strtol(slash + 1, &end, 10);
				if (slash[1] == '\0' || *end != '\0' ||
				    bits < 0 || bits > 128)
					bits = -2;
			}
			if (w[0] == '[' && w[strlen(w) - 1] == ']') {
				w[strlen(w) - 1] = '\0';
				memmove(w, w + 1, strlen(w));
			}
			if (bits != -2 && addr_parse(w, &r->family,
			    r->addr) == 0) {
				r->bits = bits >= 0 ? (int)bits
				    : r->family == AF_INET ? 32 : 128;
				if (r->family == AF_INET && r->bits > 32)
					bits = -2;
			} else if (bits == -1 && name_ok(w))
				snprintf(r->name, sizeof(r->name), "%s", w);
			else
				bits = -2;
			if (bits == -2) {
				rc = sandbox_fail(err, ENGINE_EINVAL,
				    "sandbox.network_allow: '%.100s' is not a "
				    "host name, *.suffix, address or CIDR "
				    "range", w);
				goto out;
			}
		}
		if (strcmp(r->name, "localhost") == 0 ||
		    (r->family == AF_INET && r->addr[0] == 127) ||
		    (r->family == AF_INET6 && prefix_same(r->addr, lo6,
		    r->bits)))
			a->loopback = 1;
		a->n++;
	}
	*out = a;
	a = NULL;
out:
	sandbox_net_allow_free(a);
	return rc;
}

void
sandbox_net_allow_free(struct sandbox_net_allow *a)
{
	if (a == NULL)
		return;
	free(a->v);
	free(a);
}

int
sandbox_net_allow_loopback(const struct sandbox_net_allow *a)
{
	return a->loopback;
}

int
sandbox_net_host_allowed(const struct sandbox_net_allow *a, const char *host)
{
	const struct net_rule	*r;
	unsigned char		 addr[16];
	size_t			 i, hl = strlen(host), nl;
	int			 family, lit;

	lit = addr_parse(host, &family, addr) == 0;
	for (i = 0; i < a->n; i++) {
		r = &a->v[i];
		if (r->any)
			return 1;
		if (lit) {
			if (r->family == family && prefix_same(r->addr, addr,
			    r->bits))
				return 1;
			continue;
		}
		if (r->family != 0)
			continue;
		nl = strlen(r->name);
		if (r->suffix ? hl > nl && strcmp(host + hl - nl, r->name) ==
		    0 : strcmp(host, r->name) == 0)
			return 1;
	}
	return 0;
}

const char *
sandbox_net_addr_refused(const struct sandbox_net_allow *a,
    const struct sockaddr *sa)
{
	unsigned char	addr[16];
	size_t		i;
	int		family;

	if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
		return "not an IP address";
	family = sa_addr(sa, addr);
	for (i = 0; i < a->n; i++)
		if (a->v[i].family == family && prefix_same(a->v[i].addr, addr,
		    a->v[i].bits))
			return NULL;
	if (!outbound_addr_private(sa))
		return NULL;
	if ((family == AF_INET && addr[0] == 127) || (family == AF_INET6 &&
	    IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)addr)))
		return "a loopback address";
	if ((family == AF_INET && addr[0] == 169 && addr[1] == 254) ||
	    (family == AF_INET6 && addr[0] == 0xfe &&
	    (addr[1] & 0xc0) == 0x80))
		return "a link-local address";
	return "a private or reserved address";
}

/* ====== Requests to the proxy ====== */

/* 1 when c may be in an HTTP token (a method). */
static int
tchar(int c)
{
	return isalnum(c) || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) !=
	    NULL);
}

/*
 * authority ("host", "host:port", "[v6]:port") of n bytes into r->host
 * (lower case, no brackets) and r->port (def when none). Userinfo is
 * refused: nothing in it is ours to pass on. Returns 0 or -1.
 */
static int
authority_parse(const char *s, size_t n, int def, struct sandbox_proxy_req *r)
{
	const char	*hs = s, *he, *ps = NULL;
	size_t		 i;
	long		 port = 0;
	int		 family;
	unsigned char	 addr[16];

	if (n == 0 || memchr(s, '@', n) != NULL)
		return -1;
	if (s[0] == '[') {
		if ((he = memchr(s, ']', n)) == NULL)
			return -1;
		hs = s + 1;
		if (he + 1 < s + n) {
			if (he[1] != ':')
				return -1;
			ps = he + 2;
		}
	} else {
		he = memchr(s, ':', n);
		if (he != NULL)
			ps = he + 1;
		else
			he = s + n;
	}
	if (he - hs <= 0 || (size_t)(he - hs) >= sizeof(r->host))
		return -1;
	for (i = 0; hs + i < he; i++)
		r->host[i] = (char)tolower((unsigned char)hs[i]);
	r->host[i] = '\0';
	if (s[0] == '[' ? addr_parse(r->host, &family, addr) != 0 ||
	    family != AF_INET6 : !name_ok(r->host))
		return -1;
	if (ps != NULL) {
		if (ps == s + n || s + n - ps > 5)
			return -1;
		for (; ps < s + n; ps++) {
			if (!isdigit((unsigned char)*ps))
				return -1;
			port = port * 10 + (*ps - '0');
		}
		if (port < 1 || port > 65535)
			return -1;
		r->port = (int)port;
	} else if ((r->port = def) == 0)
		return -1;
	return 0;
}

int
sandbox_proxy_parse(const char *buf, size_t len, struct sandbox_proxy_req *r)
{
	const char	*p, *e, *sp1, *sp2, *end, *t;
	size_t		 n;

	memset(r, 0, sizeof(*r));
	/* the head ends at the first empty line */
	for (p = buf; (e = memchr(p, '\n', len - (size_t)(p - buf))) != NULL;
	     p = e + 1)
		if (e == p || (e == p + 1 && *p == '\r'))
			break;
	if (e == NULL)
		return len >= HEAD_MAX ? SANDBOX_PROXY_BAD : SANDBOX_PROXY_MORE;
	r->head_len = (size_t)(e + 1 - buf);
	if (r->head_len > HEAD_MAX)
		return SANDBOX_PROXY_BAD;
	/* request line: method SP target SP HTTP/1.x CRLF */
	end = memchr(buf, '\n', r->head_len);
	if (end > buf && end[-1] == '\r')
		end--;
	for (sp1 = buf; sp1 < end && tchar((unsigned char)*sp1); sp1++)
		;
	if (sp1 == buf || sp1 == end || *sp1 != ' ' ||
	    (size_t)(sp1 - buf) >= sizeof(r->method))
		return SANDBOX_PROXY_BAD;
	memcpy(r->method, buf, (size_t)(sp1 - buf));
	for (sp2 = sp1 + 1; sp2 < end && *sp2 != ' '; sp2++)
		if ((unsigned char)*sp2 <= ' ' || *sp2 == 0x7f)
			return SANDBOX_PROXY_BAD;
	if (sp2 == sp1 + 1 || end - sp2 != 9 ||
	    memcmp(sp2, " HTTP/1.", 8) != 0 || (sp2[8] != '0' &&
	    sp2[8] != '1'))
		return SANDBOX_PROXY_BAD;
	r->minor = sp2[8] - '0';
	/* header lines: "name: value"; no folded lines (a fold of a header
	 * the rewrite drops would join the one before it) */
	for (p = (const char *)memchr(buf, '\n', r->head_len) + 1;
	    p < buf + r->head_len; p = e + 1) {
		e = memchr(p, '\n', r->head_len - (size_t)(p - buf));
		if (e == p || (e == p + 1 && *p == '\r'))
			break;
		for (t = p; t < e && tchar((unsigned char)*t); t++)
			;
		if (t == p || *t != ':')
			return SANDBOX_PROXY_BAD;
	}
	t = sp1 + 1;
	n = (size_t)(sp2 - t);
	if (strcmp(r->method, "CONNECT") == 0) {
		r->connect = 1;
		if (authority_parse(t, n, 0, r) != 0)
			return SANDBOX_PROXY_BAD;
		return SANDBOX_PROXY_OK;
	}
	if (n < 8 || strncasecmp(t, "http://", 7) != 0)
		return SANDBOX_PROXY_BAD;
	t += 7;
	n -= 7;
	for (r->path_off = 0; r->path_off < n && t[r->path_off] != '/' &&
	     t[r->path_off] != '?'; r->path_off++)
		;
	if (authority_parse(t, r->path_off, 80, r) != 0)
		return SANDBOX_PROXY_BAD;
	r->auth_off = (size_t)(t - buf);
	r->auth_len = r->path_off;
	r->path_off += r->auth_off;
	r->path_len = (size_t)(sp2 - buf) - r->path_off;
	return SANDBOX_PROXY_OK;
}

/* 1 when line (n bytes) is a header called name (case-insensitively). */
static int
header_is(const char *line, size_t n, const char *name)
{
	size_t l = strlen(name);

	return n > l && line[l] == ':' && strncasecmp(line, name, l) == 0;
}

int
sandbox_proxy_rewrite(const char *buf, const struct sandbox_proxy_req *r,
    struct dbuf *out)
{
	const char	*p, *e, *end = buf + r->head_len;
	size_t		 n;

	dbuf_add(out, r->method, strlen(r->method));
	dbuf_addstr(out, " ");
	if (r->path_len == 0 || buf[r->path_off] != '/')
		dbuf_addstr(out, "/");
	dbuf_add(out, buf + r->path_off, r->path_len);
	dbuf_addstr(out, r->minor ? " HTTP/1.1\r\n" : " HTTP/1.0\r\n");
	dbuf_addstr(out, "Host: ");
	dbuf_add(out, buf + r->auth_off, r->auth_len);
	dbuf_addstr(out, "\r\n");
	p = (const char *)memchr(buf, '\n', r->head_len) + 1;
	for (; p < end; p = e + 1) {
		e = memchr(p, '\n', (size_t)(end - p));
		n = (size_t)(e - p);
		if (n > 0 && p[n - 1] == '\r')
			n--;
		if (n == 0)
			break;
		/* The proxy's own headers stop here; the origin sees the
		 * host it is connected to, and one request. */
		if (header_is(p, n, "host") || header_is(p, n, "connection") ||
		    header_is(p, n, "proxy-connection") ||
		    header_is(p, n, "proxy-authorization") ||
		    header_is(p, n, "keep-alive"))
			continue;
		dbuf_add(out, p, n);
		dbuf_addstr(out, "\r\n");
	}
	dbuf_addstr(out, "Connection: close\r\n\r\n");
	return out->err == DBUF_ENOMEM ? ENGINE_ENOMEM : 0;
}

/* ====== The proxy (flowcgi's side) ====== */

struct sandbox_proxy {
	pthread_mutex_t		 mu;
	pthread_cond_t		 cv;
	pthread_t		 thread;
	int			 started;
	int			 lfd;		/* the unix socket, listening */
	int			 stop[2];	/* readable once stopping */
	int			 nconn;		/* connection threads */
	int			 max_conn;
	int			 idle_ms;
	struct sandbox_net_allow *allow;
	char			 allow_text[4096];
};

struct proxy_conn {
	struct sandbox_proxy	*px;
	int			 fd;
};

/* Answers status with text as a plain-text body and "Connection: close". */
static void
proxy_answer(int fd, int status, const char *reason, const char *text)
{
	char head[256];

	snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\nContent-Type: "
	    "text/plain; charset=utf-8\r\nContent-Length: %zu\r\n"
	    "X-Flowcgi-Proxy: refused\r\nConnection: close\r\n\r\n", status,
	    reason, strlen(text) + 1);
	if (relay_write_all(fd, head, strlen(head)) == 0 &&
	    relay_write_all(fd, text, strlen(text)) == 0)
		(void)relay_write_all(fd, "\n", 1);
}

/*
 * Connects to one of the addresses of ai in turn, each within timeout_ms;
 * the descriptor (blocking) or -1 with errno's text in why.
 */
static int
proxy_connect(const struct addrinfo *ai, int timeout_ms, char *why,
    size_t whysz)
{
	struct pollfd	pfd;
	socklen_t	sl;
	int		fd = -1, e = ECONNREFUSED, n;

	for (; ai != NULL; ai = ai->ai_next) {
		if ((fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC |
		    SOCK_NONBLOCK, 0)) < 0) {
			e = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
			if (errno != EINPROGRESS) {
				e = errno;
				goto next;
			}
			pfd.fd = fd;
			pfd.events = POLLOUT;
			while ((n = poll(&pfd, 1, timeout_ms)) < 0 &&
			    errno == EINTR)
				;
			if (n == 0) {
				e = ETIMEDOUT;
				goto next;
			}
			sl = sizeof(e);
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &sl) !=
			    0 || e != 0)
				goto next;
		}
		(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		return fd;
next:
		close(fd);
		fd = -1;
	}
	snprintf(why, whysz, "%s", strerror(e));
	return -1;
}

/* Reads a request head from fd into buf within idle_ms of silence;
 * returns its length or -1. */
static ssize_t
proxy_read_head(int fd, char *buf, size_t bufsz, int stop, int idle_ms,
    struct sandbox_proxy_req *r)
{
	struct pollfd	pfd[2];
	size_t		len = 0;
	ssize_t		n;
	int		rc;

	for (;;) {
		pfd[0].fd = fd;
		pfd[0].events = POLLIN;
		pfd[1].fd = stop;
		pfd[1].events = POLLIN;
		while ((rc = poll(pfd, 2, idle_ms)) < 0 && errno == EINTR)
			;
		if (rc <= 0 || pfd[1].revents != 0)
			return -1;
		while ((n = recv(fd, buf + len, bufsz - 1 - len, 0)) < 0 &&
		    errno == EINTR)
			;
		if (n <= 0)
			return -1;
		len += (size_t)n;
		buf[len] = '\0';
		rc = sandbox_proxy_parse(buf, len, r);
		if (rc != SANDBOX_PROXY_MORE)
			return rc == SANDBOX_PROXY_OK ? (ssize_t)len : -2;
		if (len >= bufsz - 1)
			return -2;
	}
}

/* One client of the proxy: its request, the checks, the relay. */
static void *
proxy_conn_main(void *arg)
{
	struct proxy_conn	*c = arg;
	struct sandbox_proxy	*px = c->px;
	struct sandbox_proxy_req r;
	struct dbuf	 head = { 0 };
	struct addrinfo		 hints, *res = NULL, *ai;
	char			*buf = NULL, msg[4096 + 768], why[128];
	char			 port[8];
	char			 astr[INET6_ADDRSTRLEN];
	const char		*refused;
	ssize_t			 len;
	int			 up = -1, rc;
	static const char	 ok[] = "HTTP/1.1 200 Connection established"
	    "\r\n\r\n";

	if ((buf = malloc(HEAD_MAX + 1)) == NULL)
		goto out;
	len = proxy_read_head(c->fd, buf, HEAD_MAX + 1, px->stop[0],
	    px->idle_ms, &r);
	if (len == -2) {
		proxy_answer(c->fd, 400, "Bad Request", "flowcgi sandbox "
		    "proxy: expected CONNECT host:port or an absolute http:// "
		    "URL in a well-formed HTTP/1.x request");
		goto out;
	}
	if (len < 0)
		goto out;
	if (!sandbox_net_host_allowed(px->allow, r.host)) {
		snprintf(msg, sizeof(msg), "flowcgi sandbox proxy: '%s' is "
		    "not an allowed host; the sandbox may reach only: %s "
		    "(sandbox.network_allow)", r.host, px->allow_text[0] ?
		    px->allow_text : "no host at all");
		proxy_answer(c->fd, 403, "Forbidden", msg);
		goto out;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_ADDRCONFIG;
	snprintf(port, sizeof(port), "%d", r.port);
	if ((rc = getaddrinfo(r.host, port, &hints, &res)) != 0) {
		snprintf(msg, sizeof(msg), "flowcgi sandbox proxy: cannot "
		    "resolve '%s': %s", r.host, gai_strerror(rc));
		proxy_answer(c->fd, 502, "Bad Gateway", msg);
		goto out;
	}
	/* Every address of the one lookup is judged, and only those are
	 * connected to: no second lookup can bring another. */
	for (ai = res; ai != NULL; ai = ai->ai_next)
		if ((refused = sandbox_net_addr_refused(px->allow,
		    ai->ai_addr)) != NULL) {
			(void)getnameinfo(ai->ai_addr, ai->ai_addrlen, astr,
			    sizeof(astr), NULL, 0, NI_NUMERICHOST);
			snprintf(msg, sizeof(msg), "flowcgi sandbox proxy: "
			    "'%s' resolves to %s, %s, which the sandbox may "
			    "not reach unless sandbox.network_allow lists that "
			    "address or its range", r.host, astr, refused);
			proxy_answer(c->fd, 403, "Forbidden", msg);
			goto out;
		}
	if ((up = proxy_connect(res, px->idle_ms, why, sizeof(why))) < 0) {
		snprintf(msg, sizeof(msg), "flowcgi sandbox proxy: cannot "
		    "connect to %s port %d: %s", r.host, r.port, why);
		proxy_answer(c->fd, 502, "Bad Gateway", msg);
		goto out;
	}
	if (r.connect) {
		if (relay_write_all(c->fd, ok, sizeof(ok) - 1) != 0)
			goto out;
	} else if (sandbox_proxy_rewrite(buf, &r, &head) != 0 ||
	    relay_write_all(up, head.p, head.len) != 0)
		goto out;
	/* What came after the head is the body or the tunnel's start. */
	if ((size_t)len > r.head_len && relay_write_all(up, buf + r.head_len,
	    (size_t)len - r.head_len) != 0)
		goto out;
	free(buf);
	buf = NULL;
	relay_copy(c->fd, up, px->stop[0], px->idle_ms);
out:
	if (res != NULL)
		freeaddrinfo(res);
	free(head.p);
	free(buf);
	sandbox_close_fd(&up);
	close(c->fd);
	free(c);
	pthread_mutex_lock(&px->mu);
	px->nconn--;
	pthread_cond_broadcast(&px->cv);
	pthread_mutex_unlock(&px->mu);
	return NULL;
}

/* The proxy's accepting thread. */
static void *
proxy_main(void *arg)
{
	struct sandbox_proxy	*px = arg;
	struct proxy_conn	*c;
	struct pollfd		 pfd[2];
	pthread_attr_t		 attr;
	pthread_t		 t;
	sigset_t		 all;
	char			 msg[160];
	int			 fd, n, busy, started;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		pfd[0].fd = px->lfd;
		pfd[0].events = POLLIN;
		pfd[1].fd = px->stop[0];
		pfd[1].events = POLLIN;
		while ((n = poll(pfd, 2, -1)) < 0 && errno == EINTR)
			;
		if (n < 0 || pfd[1].revents != 0)
			break;
		if ((fd = accept4(px->lfd, NULL, NULL, SOCK_CLOEXEC)) < 0)
			continue;
		pthread_mutex_lock(&px->mu);
		busy = px->nconn >= px->max_conn;
		if (!busy)
			px->nconn++;
		pthread_mutex_unlock(&px->mu);
		if (busy) {
			snprintf(msg, sizeof(msg), "flowcgi sandbox proxy: "
			    "more than %d connections at once "
			    "(sandbox.network_connections)", px->max_conn);
			proxy_answer(fd, 503, "Service Unavailable", msg);
			close(fd);
			continue;
		}
		started = 0;
		if ((c = calloc(1, sizeof(*c))) != NULL) {
			c->px = px;
			c->fd = fd;
			pthread_attr_init(&attr);
			pthread_attr_setdetachstate(&attr,
			    PTHREAD_CREATE_DETACHED);
			pthread_attr_setstacksize(&attr, 128 << 10);
			started = pthread_create(&t, &attr, proxy_conn_main,
			    c) == 0;
			pthread_attr_destroy(&attr);
		}
		if (!started) {
			free(c);
			close(fd);
			pthread_mutex_lock(&px->mu);
			px->nconn--;
			pthread_mutex_unlock(&px->mu);
		}
	}
	return NULL;
}

int
sandbox_proxy_start(const struct sandbox_config *cfg, int dirfd, char *err,
    struct sandbox_proxy **out)
{
	struct sandbox_proxy	*px = NULL;
	struct sockaddr_un	 sun;
	const char		*p;
	size_t			 n, o;
	int			 rc = 0;

	*out = NULL;
	if ((px = calloc(1, sizeof(*px))) == NULL) {
		rc = sandbox_fail(err, ENGINE_ENOMEM, "out of memory");
		goto out;
	}
	px->lfd = px->stop[0] = px->stop[1] = -1;
	pthread_mutex_init(&px->mu, NULL);
	pthread_cond_init(&px->cv, NULL);
	px->max_conn = cfg->network_connections > 0 ?
	    cfg->network_connections : 32;
	px->idle_ms = (cfg->network_idle > 0 ? cfg->network_idle : 60) * 1000;
	/* The list as the 403 names it: "a, b, c". */
	for (p = cfg->network_allow; *(p += strspn(p, ", \t")) != '\0';
	     p += n) {
		n = strcspn(p, ", \t");
		o = strlen(px->allow_text);
		snprintf(px->allow_text + o, sizeof(px->allow_text) - o,
		    "%s%.*s", o ? ", " : "", (int)n, p);
	}
	if ((rc = sandbox_net_allow_parse(cfg->network_allow, err,
	    &px->allow)) != 0)
		goto out;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	/* Through the folder's descriptor: sandbox.dir may be longer than
	 * a socket's name can be. */
	snprintf(sun.sun_path, sizeof(sun.sun_path),
	    "/proc/self/fd/%d/proxy.sock", dirfd);
	if (pipe2(px->stop, O_CLOEXEC) != 0 ||
	    (px->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(px->lfd, (struct sockaddr *)&sun, sizeof(sun)) != 0 ||
	    fchmodat(dirfd, "proxy.sock", 0666, 0) != 0 ||
	    listen(px->lfd, 64) != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox network proxy: "
		    "%s", strerror(errno));
		goto out;
	}
	if (pthread_create(&px->thread, NULL, proxy_main, px) != 0) {
		rc = sandbox_fail(err, SANDBOX_EFAIL, "sandbox network proxy: "
		    "cannot start its thread");
		goto out;
	}
	px->started = 1;
	*out = px;
	px = NULL;
out:
	sandbox_proxy_stop(px);
	return rc;
}

void
sandbox_proxy_stop(struct sandbox_proxy *px)
{
	if (px == NULL)
		return;
	if (px->stop[1] >= 0)
		(void)write(px->stop[1], "x", 1);
	if (px->started)
		pthread_join(px->thread, NULL);
	/* Each connection sees the stop pipe readable and ends soon. */
	pthread_mutex_lock(&px->mu);
	while (px->nconn > 0)
		pthread_cond_wait(&px->cv, &px->mu);
	pthread_mutex_unlock(&px->mu);
	sandbox_close_fd(&px->lfd);
	sandbox_close_fd(&px->stop[0]);
	sandbox_close_fd(&px->stop[1]);
	sandbox_net_allow_free(px->allow);
	pthread_mutex_destroy(&px->mu);
	pthread_cond_destroy(&px->cv);
	free(px);
}

/* ====== What the command sees ====== */

int
sandbox_net_env(const struct sandbox_config *cfg, char *buf, size_t bufsz,
    const char **env, size_t max)
{
	struct sandbox_net_allow	*a = NULL;
	char				 err[ENGINE_ERRMAX];
	static const char *const	 names[] = {
		"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy",
		"ALL_PROXY", "all_proxy", "npm_config_proxy",
		"npm_config_https_proxy", "PIP_PROXY",
	};
	static const char *const	 fixed[] = {
		/* pip: into the workspace (PEP 668 guards the system's
		 * packages, which the sandbox cannot write anyway) */
		"PIP_BREAK_SYSTEM_PACKAGES=1", "PIP_USER=1",
		"PYTHONUSERBASE=/workspace/.local", "PIP_NO_CACHE_DIR=1",
		"PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1",
		/* npm: global installs and the cache there too */
		"npm_config_prefix=/workspace/.local",
		"npm_config_cache=/tmp/.npm", "npm_config_update_notifier=false",
		"npm_config_fund=false", "npm_config_audit=false",
		"NODE_PATH=/workspace/.local/lib/node_modules",
		"PATH=/workspace/.local/bin:/workspace/node_modules/.bin:"
		    "/usr/bin:/bin",
	};
	size_t				 i, n = 0, o = 0;
	int				 k, loop;

	loop = sandbox_net_allow_parse(cfg->network_allow, err, &a) == 0 &&
	    sandbox_net_allow_loopback(a);
	sandbox_net_allow_free(a);
	for (i = 0; i < sizeof(names) / sizeof(*names) && n < max; i++) {
		k = snprintf(buf + o, bufsz - o, "%s=http://127.0.0.1:%d",
		    names[i], SANDBOX_PROXY_PORT);
		if (k < 0 || (size_t)k >= bufsz - o)
			return -1;
		env[n++] = buf + o;
		o += (size_t)k + 1;
	}
	/* The sandbox's own loopback stays its own, unless the list sends
	 * loopback addresses to the host's (through the proxy). */
	for (i = 0; i < 2 && n < max; i++) {
		k = snprintf(buf + o, bufsz - o, "%s=%s", i ? "no_proxy" :
		    "NO_PROXY", loop ? "" : "localhost,127.0.0.1,::1");
		if (k < 0 || (size_t)k >= bufsz - o)
			return -1;
		env[n++] = buf + o;
		o += (size_t)k + 1;
	}
	for (i = 0; i < sizeof(fixed) / sizeof(*fixed) && n < max; i++)
		env[n++] = fixed[i];
	return n < max ? (int)n : -1;
}

/* ====== What the model is told ====== */

/* Programs worth naming when the host's /usr/bin has them. */
static const char *const note_tools[] = {
	"python3", "node", "git", "curl", "wget", "jq", "sqlite3", "gcc",
	"make", "zip", "unzip", "ffmpeg", "convert", "pandoc",
};

static pthread_once_t	note_once = PTHREAD_ONCE_INIT;
static char		note_installed[512];

/* "python3 (3.11) with pip, node with npm, git, ..." once per process:
 * what the local sandbox shows of the host's /usr. */
static void
note_probe(void)
{
	char		 path[64], target[64], ver[80];
	size_t		 i, o = 0;
	ssize_t		 n;
	int		 k;
	const char	*extra;

	for (i = 0; i < sizeof(note_tools) / sizeof(*note_tools); i++) {
		snprintf(path, sizeof(path), "/usr/bin/%s", note_tools[i]);
		if (access(path, X_OK) != 0)
			continue;
		extra = "";
		ver[0] = '\0';
		if (strcmp(note_tools[i], "python3") == 0) {
			/* /usr/bin/python3 -> python3.11 */
			if ((n = readlink(path, target, sizeof(target) - 1)) >
			    7 && strncmp(target, "python", 6) == 0) {
				target[n] = '\0';
				snprintf(ver, sizeof(ver), " (%s)", target + 6);
			}
			if (access("/usr/lib/python3/dist-packages/pip",
			    F_OK) == 0 || access("/usr/bin/pip3", X_OK) == 0)
				extra = " with pip";
		} else if (strcmp(note_tools[i], "node") == 0 &&
		    access("/usr/bin/npm", X_OK) == 0)
			extra = " with npm";
		k = snprintf(note_installed + o, sizeof(note_installed) - o,
		    "%s%s%s%s", o ? ", " : "", note_tools[i], ver, extra);
		if (k < 0 || (size_t)k >= sizeof(note_installed) - o)
			break;
		o += (size_t)k;
	}
}

char *
sandbox_tool_note(const struct sandbox_provider *p,
    const struct sandbox_config *cfg)
{
	struct dbuf	b = { 0 };
	const char		*list = cfg->network_allow, *s;
	size_t			 n;
	int			 first = 1;

	if (p != NULL && p->note != NULL)
		return p->note(cfg);
	if (p != NULL && p != &sandbox_provider_local) {
		dbuf_addstr(&b, cfg->network ? "The sandbox has network "
		    "access." : "The sandbox has no network access: "
		    "downloads and package installs fail.");
		return dbuf_take(&b, &n);
	}
	if (!cfg->network)
		dbuf_addstr(&b, "The sandbox has no network access: "
		    "downloads, pip install and npm install fail; use what is "
		    "installed.");
	else {
		dbuf_addstr(&b, "The sandbox reaches the network only "
		    "through an HTTP proxy (HTTP_PROXY and HTTPS_PROXY are "
		    "set; curl, pip, npm, git over https and Python's "
		    "urllib and requests use it). Hosts it may reach: ");
		for (s = list; *(s += strspn(s, ", \t")) != '\0'; s += n) {
			n = strcspn(s, ", \t");
			if (!first)
				dbuf_addstr(&b, ", ");
			if (n == 1 && *s == '*')
				dbuf_addstr(&b, "any public host");
			else
				dbuf_add(&b, s, n);
			first = 0;
		}
		if (first)
			dbuf_addstr(&b, "none");
		dbuf_addstr(&b, ". Any other host, and private or "
		    "loopback addresses not listed, get HTTP 403 from the "
		    "proxy. pip install and npm install -g put packages in "
		    "/workspace/.local (its bin is on PATH); npm install "
		    "puts node_modules in the current folder.");
	}
	pthread_once(&note_once, note_probe);
	if (note_installed[0] != '\0') {
		dbuf_addstr(&b, " Installed: ");
		dbuf_addstr(&b, note_installed);
		dbuf_addstr(&b, ".");
	}
	return dbuf_take(&b, &n);
}
