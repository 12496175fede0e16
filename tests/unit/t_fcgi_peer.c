/*
 * t_fcgi_peer.c — fcgi/peer.c: which TCP clients server.allowed_clients
 * lets connect (the loopback default, CIDR ranges, IPv4 clients of an
 * IPv6 socket, "*"), which unix peers allowed_users / allowed_groups do,
 * and the entries that stop start-up.
 */
#include <arpa/inet.h>
#include <netinet/in.h>

#include "conf/conf.h"
#include "fcgi/internal.h"
#include "tap.h"

/* Sets the three lists of c (NULL leaves one as it is) and loads acl;
 * the return of peer_acl_init, err filled. */
static int
acl_of(struct peer_acl *acl, const char *clients, const char *users,
    const char *groups, char *err, size_t errsz)
{
	struct conf c;

	conf_defaults(&c);
	if (clients != NULL)
		snprintf(c.allowed_clients, sizeof(c.allowed_clients), "%s",
		    clients);
	if (users != NULL)
		snprintf(c.allowed_users, sizeof(c.allowed_users), "%s", users);
	if (groups != NULL)
		snprintf(c.allowed_groups, sizeof(c.allowed_groups), "%s",
		    groups);
	err[0] = '\0';
	return peer_acl_init(acl, &c, err, errsz);
}

/* 1 when acl lets the TCP peer at text address a connect. */
static int
tcp_ok(const struct peer_acl *acl, const char *a)
{
	struct sockaddr_in	in4;
	struct sockaddr_in6	in6;
	char			shown[64];

	memset(&in4, 0, sizeof(in4));
	memset(&in6, 0, sizeof(in6));
	if (inet_pton(AF_INET, a, &in4.sin_addr) == 1) {
		in4.sin_family = AF_INET;
		return peer_addr_allowed(acl, (struct sockaddr *)&in4, shown,
		    sizeof(shown));
	}
	if (inet_pton(AF_INET6, a, &in6.sin6_addr) == 1) {
		in6.sin6_family = AF_INET6;
		return peer_addr_allowed(acl, (struct sockaddr *)&in6, shown,
		    sizeof(shown));
	}
	return -1;
}

int
main(void)
{
	struct peer_acl		acl;
	struct sockaddr_in	in4;
	struct sockaddr		un;
	char			err[256], shown[64];

	/* the default: loopback only */
	CHECK(acl_of(&acl, NULL, NULL, NULL, err, sizeof(err)) == 0);
	CHECK(tcp_ok(&acl, "127.0.0.1") == 1);
	CHECK(tcp_ok(&acl, "127.0.0.2") == 1);
	CHECK(tcp_ok(&acl, "::1") == 1);
	CHECK(tcp_ok(&acl, "::ffff:127.0.0.1") == 1);
	CHECK(tcp_ok(&acl, "10.9.9.9") == 0);
	CHECK(tcp_ok(&acl, "192.168.1.5") == 0);
	CHECK(tcp_ok(&acl, "::ffff:10.9.9.9") == 0);
	CHECK(tcp_ok(&acl, "2001:db8::1") == 0);
	/* unix peers: the socket's mode decides */
	CHECK(peer_cred_allowed(&acl, 12345, 12345) == 1);
	CHECK(acl.nuids == 0 && acl.ngids == 0);
	peer_acl_release(&acl);

	/* the address it refused is shown for the log */
	CHECK(acl_of(&acl, "127.0.0.2", NULL, NULL, err, sizeof(err)) == 0);
	memset(&in4, 0, sizeof(in4));
	in4.sin_family = AF_INET;
	inet_pton(AF_INET, "127.0.0.1", &in4.sin_addr);
	CHECK(peer_addr_allowed(&acl, (struct sockaddr *)&in4, shown,
	    sizeof(shown)) == 0);
	CHECK_STR(shown, "127.0.0.1");
	CHECK(tcp_ok(&acl, "127.0.0.2") == 1);
	/* a unix peer is not the address list's business */
	memset(&un, 0, sizeof(un));
	un.sa_family = AF_UNIX;
	CHECK(peer_addr_allowed(&acl, &un, NULL, 0) == 1);
	peer_acl_release(&acl);

	/* several hosts: the web servers' addresses and a range */
	CHECK(acl_of(&acl, "10.0.0.11,10.0.1.0/24,fd00::/8", NULL, NULL, err,
	    sizeof(err)) == 0);
	CHECK(tcp_ok(&acl, "10.0.0.11") == 1);
	CHECK(tcp_ok(&acl, "10.0.0.12") == 0);
	CHECK(tcp_ok(&acl, "10.0.1.200") == 1);
	CHECK(tcp_ok(&acl, "10.0.2.1") == 0);
	CHECK(tcp_ok(&acl, "fd00::5") == 1);
	CHECK(tcp_ok(&acl, "127.0.0.1") == 0);
	peer_acl_release(&acl);

	CHECK(acl_of(&acl, "*", NULL, NULL, err, sizeof(err)) == 0);
	CHECK(tcp_ok(&acl, "203.0.113.9") == 1);
	CHECK(tcp_ok(&acl, "2001:db8::1") == 1);
	peer_acl_release(&acl);

	/* an empty list lets no TCP peer in (the server refuses to listen
	 * on TCP with it) */
	CHECK(acl_of(&acl, "", NULL, NULL, err, sizeof(err)) == 0);
	CHECK(acl.nnets == 0 && !acl.any_addr);
	CHECK(tcp_ok(&acl, "127.0.0.1") == 0);
	peer_acl_release(&acl);

	/* entries that stop start-up, named in the message */
	CHECK(acl_of(&acl, "127.0.0.1,example.com", NULL, NULL, err,
	    sizeof(err)) == -1);
	CHECK(strstr(err, "'example.com'") != NULL);
	CHECK(acl_of(&acl, "10.0.0.0/33", NULL, NULL, err, sizeof(err)) ==
	    -1);
	CHECK(acl_of(&acl, "10.0.0.0/", NULL, NULL, err, sizeof(err)) == -1);
	CHECK(acl_of(&acl, "::/129", NULL, NULL, err, sizeof(err)) == -1);
	CHECK(acl_of(&acl, NULL, "no-such-user-flowcgi", NULL, err,
	    sizeof(err)) == -1);
	CHECK(strstr(err, "server.allowed_users: no user "
	    "'no-such-user-flowcgi'") != NULL);
	CHECK(acl_of(&acl, NULL, NULL, "no-such-group-flowcgi", err,
	    sizeof(err)) == -1);
	CHECK(strstr(err, "server.allowed_groups") != NULL);
	CHECK(acl.nets == NULL && acl.uids == NULL);

	/* unix peers: by user (name or uid) or by primary group */
	CHECK(acl_of(&acl, NULL, "root,4242", "0", err, sizeof(err)) == 0);
	CHECK(acl.nuids == 2 && acl.ngids == 1);
	CHECK(peer_cred_allowed(&acl, 0, 100) == 1);
	CHECK(peer_cred_allowed(&acl, 4242, 100) == 1);
	CHECK(peer_cred_allowed(&acl, 65534, 0) == 1);
	CHECK(peer_cred_allowed(&acl, 65534, 65534) == 0);
	peer_acl_release(&acl);
	CHECK(acl_of(&acl, NULL, NULL, "4243", err, sizeof(err)) == 0);
	CHECK(peer_cred_allowed(&acl, 4243, 1) == 0);
	CHECK(peer_cred_allowed(&acl, 1, 4243) == 1);
	peer_acl_release(&acl);
	return tap_done();
}
