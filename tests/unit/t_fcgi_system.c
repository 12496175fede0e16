/*
 * t_fcgi_system.c — fcgi/system.c: which client addresses metrics.allow
 * lets read /metrics (IPv4, IPv6, CIDR ranges, IPv4 as IPv6 clients show
 * it), and which entries it refuses to understand.
 */
#include "fcgi/system.c"
#include "tap.h"

/* 1 when address a is in entry e. */
static int
in(const char *a, const char *e)
{
	unsigned char addr[16];

	if (peer_addr_parse(a, addr) != 0)
		return -1;
	return peer_addr_in(addr, e);
}

int
main(void)
{
	unsigned char addr[16];

	CHECK(in("10.1.2.3", "10.1.2.3") == 1);
	CHECK(in("10.1.2.4", "10.1.2.3") == 0);
	CHECK(in("10.1.2.3", "10.0.0.0/8") == 1);
	CHECK(in("11.1.2.3", "10.0.0.0/8") == 0);
	CHECK(in("192.168.1.130", "192.168.1.128/25") == 1);
	CHECK(in("192.168.1.127", "192.168.1.128/25") == 0);
	CHECK(in("172.31.255.255", "172.16.0.0/12") == 1);
	CHECK(in("172.32.0.0", "172.16.0.0/12") == 0);
	CHECK(in("8.8.8.8", "0.0.0.0/0") == 1);
	/* an IPv4 client as a dual-stack socket shows it */
	CHECK(in("::ffff:127.0.0.1", "127.0.0.1") == 1);
	CHECK(in("127.0.0.1", "::ffff:127.0.0.0/104") == 1);
	CHECK(in("::1", "::1") == 1);
	CHECK(in("::1", "127.0.0.1") == 0);
	CHECK(in("fd00::5", "fd00::/8") == 1);
	CHECK(in("fe80::5", "fd00::/8") == 0);
	CHECK(in("2001:db8::1", "2001:db8::/32") == 1);
	CHECK(in("2001:db9::1", "2001:db8::/32") == 0);
	/* entries that mean nothing match nothing */
	CHECK(in("10.1.2.3", "10.0.0.0/33") == 0);
	CHECK(in("10.1.2.3", "10.0.0.0/x") == 0);
	CHECK(in("10.1.2.3", "example.com") == 0);
	CHECK(in("10.1.2.3", "") == 0);
	CHECK(in("::1", "::/129") == 0);
	CHECK(peer_addr_parse("not an address", addr) != 0);
	CHECK(peer_addr_parse("", addr) != 0);
	return tap_done();
}
