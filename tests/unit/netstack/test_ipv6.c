/* test_ipv6.c — two stacks over an in-memory pair on virtual time, both
 * speaking IPv6: link-local addresses from the MAC, Neighbor Discovery
 * (resolution, unreachability detection, the pending bound), DAD, SLAAC
 * from a router's advertisements, ICMPv6 echo, UDP and TCP over IPv6,
 * dual-stack listeners, source fragmentation and reassembly. */
#include <check.h>
#include <stdlib.h>

#include "netstack/internal.h"
#include "tests/unit/check_run.h"

static struct ns_clock *clk;
static struct ns_link *la, *lb;
static struct ns_stack *sa, *sb;
static uint32_t A, B;
static uint8_t A6[16], B6[16];

static void mkstacks(unsigned flags_a, unsigned flags_b)
{
	struct ns_stack_cfg cfg = {0};

	clk = ns_clock_virtual_new(1000000);
	cfg.clock = clk;
	cfg.seed = 42;
	ck_assert_int_eq(ns_link_pair(1500, 0, &la, &lb), 0);
	sa = ns_stack_new(&cfg);
	cfg.seed = 43;
	sb = ns_stack_new(&cfg);
	ns_parse_addr("10.0.0.1", &A);
	ns_parse_addr("10.0.0.2", &B);
	ns_parse_addr6("fd00::1", A6);
	ns_parse_addr6("fd00::2", B6);
	ck_assert_int_eq(ns_iface_add(sa, la, A, 24, 0), 0);
	ck_assert_int_eq(ns_iface_add(sb, lb, B, 24, 0), 0);
	ck_assert_int_eq(ns_iface_ipv6(sa, la, flags_a), 0);
	ck_assert_int_eq(ns_iface_ipv6(sb, lb, flags_b), 0);
}

/* Both with static fd00::1 / fd00::2, no DAD wait. */
static void setup(void)
{
	mkstacks(NS_IF6_NODAD, NS_IF6_NODAD);
	ck_assert_int_eq(ns_iface_add6(sa, la, A6, 64), 0);
	ck_assert_int_eq(ns_iface_add6(sb, lb, B6, 64), 0);
}

static void teardown(void)
{
	ns_stack_free(sa);
	ns_stack_free(sb);
	ns_link_destroy(la);
	ns_link_destroy(lb);
	ns_clock_free(clk);
}

static void pump(void)
{
	for (int i = 0; i < 200; i++) {
		int n = ns_stack_drain(sa, 1000) + ns_stack_drain(sb, 1000);

		ns_stack_poll(sa);
		ns_stack_poll(sb);
		if (n == 0)
			break;
	}
}

/* Let virtual time pass in steps, running both stacks. */
static void run_for(uint64_t us)
{
	for (uint64_t t = 0; t < us; t += 100000) {
		ns_clock_advance(clk, 100000);
		pump();
	}
}

static struct ns_sockaddr sa6(const uint8_t a[16], uint16_t port)
{
	struct ns_sockaddr s = {.port = port, .family = NS_AF_INET6};

	memcpy(s.addr6, a, 16);
	return s;
}

static struct nd_entry *nd_of(struct ns_stack *st, const uint8_t a[16])
{
	struct ipaddr x = ipa_v6(a);

	for (unsigned i = 0; i < NS_ND_SIZE; i++)
		if (st->nd[i].state != ND_FREE && ipa_eq(&st->nd[i].addr, &x))
			return &st->nd[i];
	return NULL;
}

START_TEST(test_linklocal_eui64)
{
	uint8_t ll[16], want[16];
	unsigned plen;

	/* 02:00:00:00:00:01 -> fe80::ff:fe00:1 (the U/L bit flipped back). */
	ns_parse_addr6("fe80::ff:fe00:1", want);
	ck_assert_int_eq(ns_iface_get6(sa, la, 0, ll, &plen), 0);
	ck_assert_int_eq(memcmp(ll, want, 16), 0);
	ck_assert_uint_eq(plen, 64);
	ck_assert_int_eq(ns_iface_get6(sa, la, 1, ll, &plen), 0);
	ck_assert_int_eq(memcmp(ll, A6, 16), 0);
	ck_assert_int_eq(ns_iface_get6(sa, la, 2, ll, &plen), -ENOENT);
	{ /* no IPv6 on a link below 1280 */
		struct ns_link *x, *y;

		ck_assert_int_eq(ns_link_pair(576, 0, &x, &y), 0);
		ck_assert_int_eq(ns_iface_add(sb, x, 0x0a000105, 24, 0), 0);
		ck_assert_int_eq(ns_iface_ipv6(sb, x, NS_IF6_NODAD), -EINVAL);
		ns_stack_free(sb);
		sb = ns_stack_new(&(struct ns_stack_cfg){ .clock = clk, .seed = 3 });
		ns_link_destroy(x);
		ns_link_destroy(y);
	}
}
END_TEST

START_TEST(test_ping6_resolves_neighbour)
{
	uint8_t msg[64] = {ICMP6_ECHO, 0, 0, 0, 0x12, 0x34, 0, 1}, buf[128], mac[6];
	struct ns_sockaddr loc = {.port = 0x1234, .family = NS_AF_INET6};
	struct ns_pktinfo info = {0};
	struct ns_chan *ch;
	int err;

	ch = ns_chan_create(sa, NS_PROTO_ICMPV6, &loc, NULL, &err);
	ck_assert_ptr_nonnull(ch);
	info.dst = sa6(B6, 0);
	ck_assert_int_eq(ns_nd_lookup(sa, B6, mac), -ENOENT);
	ck_assert_int_eq(ns_chan_sendto(ch, msg, sizeof(msg), &info), 64);
	pump();
	/* NS to the solicited-node group, NA back: B's MAC, REACHABLE. */
	ck_assert_int_eq(ns_nd_lookup(sa, B6, mac), 0);
	ck_assert_int_eq(memcmp(mac, lb->mac, 6), 0);
	ck_assert_uint_eq(nd_of(sa, B6)->state, ND_REACHABLE);
	ck_assert_int_eq(ns_chan_recv_nb(ch, buf, sizeof(buf), &info), 64);
	ck_assert_uint_eq(info.icmp_type, ICMP6_ECHOREPLY);
	ck_assert_uint_eq(info.src.family, NS_AF_INET6);
	ck_assert_int_eq(memcmp(info.src.addr6, B6, 16), 0);
	ck_assert_int_eq(memcmp(buf + 8, msg + 8, 56), 0);
	ns_chan_close(ch);
}
END_TEST

START_TEST(test_ping6_fragmented)
{
	/* 3000 bytes of echo over MTU 1500: fragments both ways. */
	static uint8_t msg[3000], buf[4000];
	struct ns_sockaddr loc = { .port = 7, .family = NS_AF_INET6 };
	struct ns_pktinfo info = { 0 };
	struct ns_chan *ch;
	int err;

	msg[0] = ICMP6_ECHO;
	msg[5] = 7;
	for (size_t i = 8; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	ch = ns_chan_create(sa, NS_PROTO_ICMPV6, &loc, NULL, &err);
	info.dst = sa6(B6, 0);
	ck_assert_int_eq(ns_chan_sendto(ch, msg, sizeof(msg), &info), (int)sizeof(msg));
	pump();
	ck_assert_int_eq(ns_chan_recv_nb(ch, buf, sizeof(buf), &info), (int)sizeof(msg));
	ck_assert_uint_eq(buf[0], ICMP6_ECHOREPLY);
	ck_assert_int_eq(memcmp(buf + 8, msg + 8, sizeof(msg) - 8), 0);
	ns_chan_close(ch);
}
END_TEST

START_TEST(test_nud_states)
{
	uint8_t msg[8] = {ICMP6_ECHO, 0, 0, 0, 0, 1, 0, 1};
	struct ns_sockaddr loc = {.port = 1, .family = NS_AF_INET6};
	struct ns_pktinfo info = {0};
	struct ns_chan *ch;
	struct ns_stats s;
	int err;

	ch = ns_chan_create(sa, NS_PROTO_ICMPV6, &loc, NULL, &err);
	info.dst = sa6(B6, 0);
	ns_chan_sendto(ch, msg, sizeof(msg), &info);
	pump();
	ck_assert_uint_eq(nd_of(sa, B6)->state, ND_REACHABLE);
	run_for(31000000); /* REACHABLE_TIME */
	ck_assert_uint_eq(nd_of(sa, B6)->state, ND_STALE);
	/* Sending to a STALE neighbour: DELAY, then a unicast probe. */
	ns_chan_sendto(ch, msg, sizeof(msg), &info);
	ck_assert_uint_eq(nd_of(sa, B6)->state, ND_DELAY);
	pump();
	run_for(5200000);
	ck_assert_uint_eq(nd_of(sa, B6)->state, ND_REACHABLE); /* B answered */
	/* B goes away (its frames are lost): probes, then the entry goes. */
	run_for(31000000);
	ns_chan_sendto(ch, msg, sizeof(msg), &info);
	ns_stack_free(sb);
	sb = NULL;
	for (int i = 0; i < 100; i++) {
		ns_clock_advance(clk, 100000);
		ns_stack_poll(sa);
	}
	ck_assert_ptr_null(nd_of(sa, B6));
	ns_stack_stats(sa, &s);
	ck_assert_uint_ge(s.nd_tx, 4);
	ns_chan_close(ch);
	{
		struct ns_stack_cfg cfg = {.clock = clk, .seed = 1};

		sb = ns_stack_new(&cfg); /* for teardown */
	}
}
END_TEST

START_TEST(test_pending_queue_bound)
{
	uint8_t msg[8] = {ICMP6_ECHO, 0, 0, 0, 0, 1, 0, 1}, nobody[16];
	struct ns_sockaddr loc = {.port = 1, .family = NS_AF_INET6};
	struct ns_pktinfo info = {0};
	struct ns_chan *ch;
	struct ns_stats s;
	struct nd_entry *e;
	int err;

	ns_parse_addr6("fd00::99", nobody);
	ch = ns_chan_create(sa, NS_PROTO_ICMPV6, &loc, NULL, &err);
	info.dst = sa6(nobody, 0);
	for (int i = 0; i < 20; i++)
		ns_chan_sendto(ch, msg, sizeof(msg), &info);
	e = nd_of(sa, nobody);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->state, ND_INCOMPLETE);
	ck_assert_uint_eq(e->npending, NS_ARP_PENDING_MAX);
	ns_stack_stats(sa, &s);
	ck_assert_uint_eq(s.nd_drop_pending, 20 - NS_ARP_PENDING_MAX);
	run_for(4000000); /* 3 multicast solicitations unanswered */
	ck_assert_ptr_null(nd_of(sa, nobody));
	ns_stack_stats(sa, &s);
	ck_assert_uint_eq(s.nd_drop_pending, 20);
	ns_chan_close(ch);
}
END_TEST

START_TEST(test_udp6)
{
	struct ns_sockaddr srv = sa6(B6, 7777), from;
	struct ns_sock *a, *b;
	char buf[64];
	int err;

	b = ns_socket(sb, NS_SOCK_DGRAM, &err);
	ck_assert_int_eq(ns_bind(b, &srv), 0);
	a = ns_socket(sa, NS_SOCK_DGRAM, &err);
	ns_setsockopt(a, NS_SO_NONBLOCK, 1);
	ns_setsockopt(b, NS_SO_NONBLOCK, 1);
	ck_assert_int_eq(ns_sendto(a, "hello6", 6, 0, &srv), 6);
	pump();
	ck_assert_int_eq(ns_recvfrom(b, buf, sizeof(buf), 0, &from), 6);
	ck_assert_int_eq(memcmp(buf, "hello6", 6), 0);
	ck_assert_uint_eq(from.family, NS_AF_INET6);
	ck_assert_int_eq(memcmp(from.addr6, A6, 16), 0);
	ck_assert_int_eq(ns_sendto(b, "back", 4, 0, &from), 4);
	pump();
	ck_assert_int_eq(ns_recv(a, buf, sizeof(buf), 0), 4);
	ns_close(a);
	ns_close(b);
}
END_TEST

START_TEST(test_udp6_fragmented)
{
	/* 4000 bytes over MTU 1500: fragment headers out, reassembly in. */
	static uint8_t big[4000], got[5000];
	struct ns_sockaddr srv = sa6(B6, 9000);
	struct ns_sock *a, *b;
	struct ns_stats s;
	int err;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 13 + 1);
	b = ns_socket(sb, NS_SOCK_DGRAM, &err);
	ns_bind(b, &srv);
	ns_setsockopt(b, NS_SO_NONBLOCK, 1);
	a = ns_socket(sa, NS_SOCK_DGRAM, &err);
	ck_assert_int_eq(ns_sendto(a, big, sizeof(big), 0, &srv), (int)sizeof(big));
	pump();
	ck_assert_int_eq(ns_recv(b, got, sizeof(got), 0), (int)sizeof(big));
	ck_assert_int_eq(memcmp(got, big, sizeof(big)), 0);
	ns_stack_stats(sa, &s);
	ck_assert_uint_eq(s.ip6_frag_tx, 3);
	ns_stack_stats(sb, &s);
	ck_assert_uint_eq(s.ip6_reass_ok, 1);
	ck_assert_uint_eq(s.reass_mem, 0);
	ns_close(a);
	ns_close(b);
}
END_TEST

static struct ns_sock *tcp_pair(struct ns_sock *l, const struct ns_sockaddr *to,
				struct ns_sock **acc, struct ns_sockaddr *peer)
{
	struct ns_sock *c;
	int err;

	c = ns_socket(sa, NS_SOCK_STREAM, &err);
	ns_setsockopt(c, NS_SO_NONBLOCK, 1);
	ck_assert_int_eq(ns_connect(c, to), -EINPROGRESS);
	pump();
	*acc = ns_accept(l, peer, &err);
	ck_assert_ptr_nonnull(*acc);
	ns_setsockopt(*acc, NS_SO_NONBLOCK, 1);
	return c;
}

START_TEST(test_tcp6_transfer)
{
	static uint8_t data[200000], got[200000];
	struct ns_sockaddr any6 = {.port = 80, .family = NS_AF_INET6}, peer, name;
	struct ns_sockaddr to = sa6(B6, 80);
	struct ns_sock *l, *c, *s;
	struct ns_tcp_info ti;
	size_t sent = 0, recvd = 0;
	int err;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + (i >> 9));
	l = ns_socket(sb, NS_SOCK_STREAM, &err);
	ck_assert_int_eq(ns_bind(l, &any6), 0);
	ck_assert_int_eq(ns_listen(l, 4), 0);
	ns_setsockopt(l, NS_SO_NONBLOCK, 1);
	c = tcp_pair(l, &to, &s, &peer);
	ck_assert_uint_eq(peer.family, NS_AF_INET6);
	ck_assert_int_eq(memcmp(peer.addr6, A6, 16), 0);
	ck_assert_int_eq(ns_getsockname(s, &name), 0);
	ck_assert_int_eq(memcmp(name.addr6, B6, 16), 0);
	/* MSS from the IPv6 MTU: 1500 - 40 - 20; SACK and timestamps on. */
	ck_assert_int_eq(ns_tcp_info(c, &ti), 0);
	ck_assert_uint_eq(ti.snd_mss, 1440);
	ck_assert(ti.sack && ti.timestamps);
	while (recvd < sizeof(data)) {
		ssize_t n;

		if (sent < sizeof(data) &&
		    (n = ns_send(c, data + sent, sizeof(data) - sent, 0)) > 0)
			sent += (size_t)n;
		pump();
		while ((n = ns_recv(s, got + recvd, sizeof(got) - recvd, 0)) > 0)
			recvd += (size_t)n;
		ns_clock_advance(clk, 1000);
	}
	ck_assert_int_eq(memcmp(got, data, sizeof(data)), 0);
	ns_close(c);
	ns_close(s);
	ns_close(l);
}
END_TEST

START_TEST(test_dual_stack_listener)
{
	struct ns_sockaddr any6 = {.port = 8080, .family = NS_AF_INET6}, any4 = {.port = 8080};
	struct ns_sockaddr to6 = sa6(B6, 8080), to4 = {.addr = B, .port = 8080}, peer;
	struct ns_sock *l, *c4, *c6, *s4, *s6, *v4only;
	int err;

	l = ns_socket(sb, NS_SOCK_STREAM, &err);
	ck_assert_int_eq(ns_bind(l, &any6), 0);
	ck_assert_int_eq(ns_listen(l, 4), 0);
	ns_setsockopt(l, NS_SO_NONBLOCK, 1);
	/* :: holds the port for IPv4 too. */
	v4only = ns_socket(sb, NS_SOCK_STREAM, &err);
	ck_assert_int_eq(ns_bind(v4only, &any4), -EADDRINUSE);
	ns_close(v4only);
	c6 = tcp_pair(l, &to6, &s6, &peer);
	ck_assert_uint_eq(peer.family, NS_AF_INET6);
	c4 = tcp_pair(l, &to4, &s4, &peer);
	ck_assert_uint_eq(peer.family, NS_AF_INET);
	ck_assert_uint_eq(peer.addr, A);
	ck_assert_int_eq(ns_send(c4, "v4", 2, 0), 2);
	ck_assert_int_eq(ns_send(c6, "v6", 2, 0), 2);
	pump();
	{
		char b4[4], b6[4];

		ck_assert_int_eq(ns_recv(s4, b4, 4, 0), 2);
		ck_assert_int_eq(ns_recv(s6, b6, 4, 0), 2);
		ck_assert_int_eq(memcmp(b4, "v4", 2), 0);
		ck_assert_int_eq(memcmp(b6, "v6", 2), 0);
	}
	ns_close(c4);
	ns_close(c6);
	ns_close(s4);
	ns_close(s6);
	ns_close(l);
}
END_TEST

START_TEST(test_v4_listener_ignores_v6)
{
	struct ns_sockaddr any4 = {.port = 81}, to6 = sa6(B6, 81);
	struct ns_sock *l, *c;
	struct ns_stats s;
	int err;

	l = ns_socket(sb, NS_SOCK_STREAM, &err);
	ck_assert_int_eq(ns_bind(l, &any4), 0);
	ck_assert_int_eq(ns_listen(l, 4), 0);
	c = ns_socket(sa, NS_SOCK_STREAM, &err);
	ns_setsockopt(c, NS_SO_NONBLOCK, 1);
	ck_assert_int_eq(ns_connect(c, &to6), -EINPROGRESS);
	pump();
	ns_stack_stats(sb, &s);
	ck_assert_uint_eq(s.tcp_rst_tx, 1); /* refused: the IPv4 socket does not hear it */
	ck_assert_int_eq(ns_getsockopt(c, NS_SO_ERROR, &err), 0);
	ck_assert_int_eq(err, -ECONNREFUSED);
	ns_close(c);
	ns_close(l);
}
END_TEST

START_TEST(test_dad)
{
	uint8_t got[16], ll[16];

	teardown();
	mkstacks(0, 0);
	/* Tentative for RetransTimer after the probe: not usable yet. */
	ck_assert_int_eq(ns_iface_get6(sa, la, 0, got, NULL), -ENOENT);
	pump();
	run_for(1100000);
	ck_assert_int_eq(ns_iface_get6(sa, la, 0, ll, NULL), 0);
	ck_assert(ll[0] == 0xfe && ll[1] == 0x80);
	/* B claims A's address while A probes for it: A gives it up. */
	ck_assert_int_eq(ns_iface_add6(sb, lb, A6, 64), 0);
	pump();
	run_for(1100000);
	ck_assert_int_eq(ns_iface_add6(sa, la, A6, 64), 0);
	pump();
	run_for(1100000);
	ck_assert_int_eq(ns_iface_get6(sa, la, 1, got, NULL), -ENOENT);
	{
		struct ns_stats s;

		ns_stack_stats(sa, &s);
		ck_assert_uint_eq(s.dad_failed, 1);
	}
}
END_TEST

START_TEST(test_slaac)
{
	struct ns_ra_cfg ra = {.prefix_len = 64, .other = true, .mtu = 1400};
	uint8_t addr[16], want[16], far[16], nh[16], rll[16];
	struct ns_link *l;
	unsigned plen;

	teardown();
	mkstacks(NS_IF6_ROUTER, NS_IF6_SLAAC); /* A routes, B is a host */
	ns_parse_addr6("fd00:1::", ra.prefix);
	ns_parse_addr6("fd00::3", ra.rdnss);
	ck_assert_int_eq(ns_iface_ra(sa, la, &ra), 0);
	ck_assert_int_eq(ns_iface_ra(sb, lb, &ra), -EINVAL); /* not a router */
	run_for(3000000); /* both DADs, B's RS, A's RA, B's DAD again */
	ck_assert_int_eq(ns_iface_get6(sb, lb, 1, addr, &plen), 0);
	/* The prefix and B's interface identifier from its MAC. */
	ns_parse_addr6("fd00:1::ff:fe00:2", want);
	ck_assert_int_eq(memcmp(addr, want, 16), 0);
	ck_assert_uint_eq(plen, 64);
	/* The default route goes through the router's link-local address. */
	ns_parse_addr6("2001:db8::1", far);
	ck_assert_int_eq(ns_route6_lookup(sb, far, nh, &l), 0);
	ck_assert_int_eq(ns_iface_get6(sa, la, 0, rll, NULL), 0);
	ck_assert_int_eq(memcmp(nh, rll, 16), 0);
	ck_assert_ptr_eq(l, lb);
	/* The RA's MTU option. */
	ck_assert_uint_eq(ns_pmtu6(sb, far), 1400);
}
END_TEST

/* A Redirect (RFC 4861 4.5) for dst through target, from src's link-local
 * address, with a target link-layer address option, injected into B. */
static void inject_redirect(const uint8_t src[16], const uint8_t target[16],
			    const uint8_t dst[16])
{
	static const uint8_t tmac[6] = {2, 0, 0, 0, 0, 0x99};
	uint8_t f[14 + 40 + 48] = {0}, *ip = f + 14, *m = ip + 40, bll[16], pseudo[40] = {0};
	uint16_t c;

	ck_assert_int_eq(ns_iface_get6(sb, lb, 0, bll, NULL), 0);
	memcpy(f, lb->mac, 6);
	memcpy(f + 6, la->mac, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	ip[0] = 0x60;
	ip[5] = 48;
	ip[6] = 58;
	ip[7] = 255;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, bll, 16);
	m[0] = 137;
	memcpy(m + 8, target, 16);
	memcpy(m + 24, dst, 16);
	m[40] = 2; /* target link-layer address */
	m[41] = 1;
	memcpy(m + 42, tmac, 6);
	memcpy(pseudo, ip + 8, 32);
	pseudo[35] = 48;
	pseudo[39] = 58;
	c = (uint16_t)~ns_csum_fold(ns_csum_add(ns_csum_add(0, pseudo, 40), m, 48));
	memcpy(m + 2, &c, 2);
	ns_stack_input(sb, lb, f, sizeof(f));
}

/* B (a SLAAC host) takes a Redirect from its router for one destination
 * (a host route through the new first hop, its MAC learnt) or to the
 * destination itself (on-link); one from a stranger or a former first
 * hop, or to a global target, changes nothing. */
START_TEST(test_redirect)
{
	struct ns_ra_cfg ra = {.prefix_len = 64};
	uint8_t far[16], other[16], nh[16], rll[16], better[16], fake[16], mac[6];
	struct ns_stats st;
	struct ns_link *l;

	teardown();
	mkstacks(NS_IF6_ROUTER, NS_IF6_SLAAC);
	ns_parse_addr6("fd00:1::", ra.prefix);
	ck_assert_int_eq(ns_iface_ra(sa, la, &ra), 0);
	run_for(3000000);
	ck_assert_int_eq(ns_iface_get6(sa, la, 0, rll, NULL), 0);
	ns_parse_addr6("2001:db8::9", far);
	ns_parse_addr6("2001:db8::10", other);
	ns_parse_addr6("fe80::99", better);
	ns_parse_addr6("fe80::66", fake);
	inject_redirect(fake, better, far); /* not B's router */
	ns_parse_addr6("2001:db8::77", nh);
	inject_redirect(rll, nh, far); /* global target, not the destination */
	ck_assert_int_eq(ns_route6_lookup(sb, far, nh, &l), 0);
	ck_assert_mem_eq(nh, rll, 16);
	ns_stack_stats(sb, &st);
	ck_assert_uint_eq(st.nd_redirect_bad, 2);
	ck_assert_uint_eq(st.nd_redirects, 0);
	inject_redirect(rll, better, far);
	ck_assert_int_eq(ns_route6_lookup(sb, far, nh, &l), 0);
	ck_assert_mem_eq(nh, better, 16);
	ck_assert_int_eq(ns_nd_lookup(sb, better, mac), 0);
	ck_assert_uint_eq(mac[5], 0x99);
	ck_assert_int_eq(ns_route6_lookup(sb, other, nh, &l), 0); /* others: as before */
	ck_assert_mem_eq(nh, rll, 16);
	/* "It is on-link"; and far's first hop is fe80::99 now, so the
	 * router may no longer redirect far (8.1). */
	inject_redirect(rll, other, other);
	ck_assert_int_eq(ns_route6_lookup(sb, other, nh, &l), 0);
	ck_assert_mem_eq(nh, other, 16);
	inject_redirect(rll, fake, far);
	ck_assert_int_eq(ns_route6_lookup(sb, far, nh, &l), 0);
	ck_assert_mem_eq(nh, better, 16);
	ns_stack_stats(sb, &st);
	ck_assert_uint_eq(st.nd_redirects, 2);
	ck_assert_uint_eq(st.nd_redirect_bad, 3);
}
END_TEST

START_TEST(test_tcp6_lossy)
{
	/* The IPv4 engine's loss recovery, unchanged over IPv6: 3 % loss and
	 * reordering both ways, SACK and timestamps on. */
	struct ns_impair_cfg ic = {.loss_bp = 300,
				   .reorder_bp = 200,
				   .delay_us = 2000,
				   .reorder_us = 3000,
				   .seed = 11};
	static uint8_t data[300000], got[300000];
	struct ns_sockaddr any6 = {.port = 90, .family = NS_AF_INET6}, to = sa6(B6, 90);
	struct ns_stack_cfg cfg = {0};
	struct ns_link *raw_a, *ia;
	struct ns_sock *l, *c, *s = NULL;
	struct ns_tcp_info ti;
	size_t sent = 0, recvd = 0;
	int err;

	teardown();
	clk = ns_clock_virtual_new(1000000);
	cfg.clock = clk;
	cfg.seed = 5;
	ck_assert_int_eq(ns_link_pair(1500, 0, &raw_a, &lb), 0);
	ia = ns_link_impair(raw_a, clk, &ic);
	la = ia;
	sa = ns_stack_new(&cfg);
	sb = ns_stack_new(&cfg);
	ns_iface_add(sa, la, 0, 0, 0);
	ns_iface_add(sb, lb, 0, 0, 0);
	ns_iface_ipv6(sa, la, NS_IF6_NODAD);
	ns_iface_ipv6(sb, lb, NS_IF6_NODAD);
	ns_iface_add6(sa, la, A6, 64);
	ns_iface_add6(sb, lb, B6, 64);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 31 + (i >> 11));
	l = ns_socket(sb, NS_SOCK_STREAM, &err);
	ns_bind(l, &any6);
	ns_listen(l, 1);
	ns_setsockopt(l, NS_SO_NONBLOCK, 1);
	c = ns_socket(sa, NS_SOCK_STREAM, &err);
	ns_setsockopt(c, NS_SO_NONBLOCK, 1);
	ns_connect(c, &to);
	for (int i = 0; i < 2000000 && recvd < sizeof(data); i++) {
		ssize_t n;

		if (sent < sizeof(data) &&
		    (n = ns_send(c, data + sent, sizeof(data) - sent, 0)) > 0)
			sent += (size_t)n;
		pump();
		if (!s && (s = ns_accept(l, NULL, &err)))
			ns_setsockopt(s, NS_SO_NONBLOCK, 1);
		while (s && (n = ns_recv(s, got + recvd, sizeof(got) - recvd, 0)) > 0)
			recvd += (size_t)n;
		ns_clock_advance(clk, 500);
	}
	ck_assert_uint_eq(recvd, sizeof(data));
	ck_assert_int_eq(memcmp(got, data, sizeof(data)), 0);
	ck_assert_int_eq(ns_tcp_info(c, &ti), 0);
	ck_assert(ti.sack && ti.timestamps);
	ck_assert_uint_gt(ti.retransmits + ti.fast_retransmits, 0);
	ns_close(c);
	ns_close(s);
	ns_close(l);
}
END_TEST

static Suite *ipv6_suite(void)
{
	Suite *s = suite_create("netstack_ipv6");
	TCase *t = tcase_create("ipv6");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_linklocal_eui64);
	tcase_add_test(t, test_ping6_resolves_neighbour);
	tcase_add_test(t, test_ping6_fragmented);
	tcase_add_test(t, test_nud_states);
	tcase_add_test(t, test_pending_queue_bound);
	tcase_add_test(t, test_udp6);
	tcase_add_test(t, test_udp6_fragmented);
	tcase_add_test(t, test_tcp6_transfer);
	tcase_add_test(t, test_tcp6_lossy);
	tcase_add_test(t, test_dual_stack_listener);
	tcase_add_test(t, test_v4_listener_ignores_v6);
	tcase_add_test(t, test_dad);
	tcase_add_test(t, test_slaac);
	tcase_add_test(t, test_redirect);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return check_run_suite(ipv6_suite());
}
