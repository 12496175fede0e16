/*
 * peer.c — who may talk to the FastCGI socket: client addresses of a TCP
 * listener (server.allowed_clients) and the credentials of a unix socket's
 * peer (server.allowed_users, server.allowed_groups), read once at start
 * into a table the accept loop consults before it reads a byte.
 *
 * Whoever reaches the FastCGI socket speaks for the web server: it sets
 * REMOTE_ADDR (metrics.allow trusts it) and every other parameter. These
 * checks keep that to the web server.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fcgi/internal.h"

/* ====== Addresses ====== */

int
peer_addr_parse(const char *s, unsigned char out[16])
{
	unsigned char v4[4];

	if (inet_pton(AF_INET, s, v4) == 1) {
		memset(out, 0, 10);
		out[10] = out[11] = 0xff;
		memcpy(out + 12, v4, 4);
		return 0;
	}
	return inet_pton(AF_INET6, s, out) == 1 ? 0 : -1;
}

/*
 * Parses entry ("10.0.0.5", "10.0.0.0/8", "::1", "fd00::/8") into net and
 * a prefix length over the 16-byte form. 0, or -1 when it is none.
 */
static int
net_parse(const char *entry, unsigned char net[16], int *bits_out)
{
	char	 buf[64], *slash, *end;
	long	 bits = 128;

	if (strlen(entry) >= sizeof(buf))
		return -1;
	memcpy(buf, entry, strlen(entry) + 1);
	if ((slash = strchr(buf, '/')) != NULL) {
		*slash = '\0';
		errno = 0;
		bits = strtol(slash + 1, &end, 10);
		if (errno != 0 || end == slash + 1 || *end != '\0' ||
		    bits < 0 || bits > 128)
			return -1;
		if (strchr(buf, ':') == NULL) {
			if (bits > 32)
				return -1;
			bits += 96;	/* an IPv4 prefix */
		}
	}
	if (peer_addr_parse(buf, net) != 0)
		return -1;
	*bits_out = (int)bits;
	return 0;
}

static int
net_has(const unsigned char net[16], int bits, const unsigned char addr[16])
{
	int i;

	for (i = 0; bits >= 8; i++, bits -= 8)
		if (addr[i] != net[i])
			return 0;
	return bits == 0 || ((addr[i] ^ net[i]) & (0xff << (8 - bits)) &
	    0xff) == 0;
}

int
peer_addr_in(const unsigned char addr[16], const char *entry)
{
	unsigned char	net[16];
	int		bits;

	return net_parse(entry, net, &bits) == 0 && net_has(net, bits, addr);
}

/* ====== The table ====== */

/* Entries in a comma-separated list ("" has none). */
static size_t
list_count(const char *list)
{
	size_t n = *list != '\0';

	for (; *list != '\0'; list++)
		n += *list == ',';
	return n;
}

/*
 * Copies entry i of list into buf (truncated entries are refused by their
 * parser). Returns the rest of the list after it.
 */
static const char *
list_next(const char *list, char *buf, size_t bufsz)
{
	size_t n = strcspn(list, ",");

	snprintf(buf, bufsz, "%.*s", (int)n, list);
	return list[n] == ',' ? list + n + 1 : list + n;
}

/* A uid from a user name or a number; 0 or -1. */
static int
uid_of(const char *s, uid_t *out)
{
	struct passwd	 pw, *p = NULL;
	char		 buf[4096], *end;
	long		 v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (*s != '\0' && *end == '\0' && errno == 0 && v >= 0) {
		*out = (uid_t)v;
		return 0;
	}
	if (getpwnam_r(s, &pw, buf, sizeof(buf), &p) != 0 || p == NULL)
		return -1;
	*out = p->pw_uid;
	return 0;
}

/* A gid from a group name or a number; 0 or -1. */
static int
gid_of(const char *s, gid_t *out)
{
	struct group	 gr, *g = NULL;
	char		 buf[4096], *end;
	long		 v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (*s != '\0' && *end == '\0' && errno == 0 && v >= 0) {
		*out = (gid_t)v;
		return 0;
	}
	if (getgrnam_r(s, &gr, buf, sizeof(buf), &g) != 0 || g == NULL)
		return -1;
	*out = g->gr_gid;
	return 0;
}

int
peer_acl_init(struct peer_acl *acl, const struct conf *c, char *err,
    size_t errsz)
{
	const char	*p;
	char		 entry[256];
	size_t		 n;
	int		 rc = -1;

	memset(acl, 0, sizeof(*acl));
	n = list_count(c->allowed_clients);
	if ((acl->nets = calloc(n + 1, sizeof(*acl->nets))) == NULL ||
	    (acl->uids = calloc(list_count(c->allowed_users) + 1,
	    sizeof(*acl->uids))) == NULL ||
	    (acl->gids = calloc(list_count(c->allowed_groups) + 1,
	    sizeof(*acl->gids))) == NULL) {
		snprintf(err, errsz, "out of memory");
		goto out;
	}
	for (p = c->allowed_clients; *p != '\0';) {
		p = list_next(p, entry, sizeof(entry));
		if (strcmp(entry, "*") == 0) {
			acl->any_addr = 1;
			continue;
		}
		if (net_parse(entry, acl->nets[acl->nnets].addr,
		    &acl->nets[acl->nnets].bits) != 0) {
			snprintf(err, errsz, "server.allowed_clients: '%s' is "
			    "no address or CIDR range", entry);
			goto out;
		}
		acl->nnets++;
	}
	for (p = c->allowed_users; *p != '\0';) {
		p = list_next(p, entry, sizeof(entry));
		if (uid_of(entry, &acl->uids[acl->nuids]) != 0) {
			snprintf(err, errsz, "server.allowed_users: no user "
			    "'%s'", entry);
			goto out;
		}
		acl->nuids++;
	}
	for (p = c->allowed_groups; *p != '\0';) {
		p = list_next(p, entry, sizeof(entry));
		if (gid_of(entry, &acl->gids[acl->ngids]) != 0) {
			snprintf(err, errsz, "server.allowed_groups: no group "
			    "'%s'", entry);
			goto out;
		}
		acl->ngids++;
	}
	rc = 0;
out:
	if (rc != 0)
		peer_acl_release(acl);
	return rc;
}

void
peer_acl_release(struct peer_acl *acl)
{
	free(acl->nets);
	free(acl->uids);
	free(acl->gids);
	memset(acl, 0, sizeof(*acl));
}

int
peer_addr_allowed(const struct peer_acl *acl, const struct sockaddr *sa,
    char *shown, size_t shownsz)
{
	const struct sockaddr_in	*in4;
	const struct sockaddr_in6	*in6;
	unsigned char			 addr[16];
	int				 i;

	if (sa->sa_family == AF_INET) {
		in4 = (const struct sockaddr_in *)(const void *)sa;
		memset(addr, 0, 10);
		addr[10] = addr[11] = 0xff;
		memcpy(addr + 12, &in4->sin_addr, 4);
		if (shown != NULL && inet_ntop(AF_INET, &in4->sin_addr, shown,
		    (socklen_t)shownsz) == NULL)
			snprintf(shown, shownsz, "?");
	} else if (sa->sa_family == AF_INET6) {
		in6 = (const struct sockaddr_in6 *)(const void *)sa;
		memcpy(addr, &in6->sin6_addr, 16);
		if (shown != NULL && inet_ntop(AF_INET6, &in6->sin6_addr,
		    shown, (socklen_t)shownsz) == NULL)
			snprintf(shown, shownsz, "?");
	} else
		return 1;	/* not an address the list speaks of */
	if (acl->any_addr)
		return 1;
	for (i = 0; i < acl->nnets; i++)
		if (net_has(acl->nets[i].addr, acl->nets[i].bits, addr))
			return 1;
	return 0;
}

int
peer_cred_allowed(const struct peer_acl *acl, uid_t uid, gid_t gid)
{
	int i;

	if (acl->nuids == 0 && acl->ngids == 0)
		return 1;
	for (i = 0; i < acl->nuids; i++)
		if (acl->uids[i] == uid)
			return 1;
	for (i = 0; i < acl->ngids; i++)
		if (acl->gids[i] == gid)
			return 1;
	return 0;
}
