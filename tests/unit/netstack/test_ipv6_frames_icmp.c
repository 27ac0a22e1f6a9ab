/* test_ipv6_frames_icmp.c — ICMPv6 against raw frames (netstack_ipv6_frames):
 * NS gets NA, MLD reports and queries, echo, errors (checksums, rate
 * limit, never about group traffic), Packet Too Big to the path MTU and to
 * TCP's MSS. Separate from test_ipv6_frames.c (extension headers and
 * reassembly) to keep each file about one thing; same binary and fixture. */
#include <check.h>
#include <stdlib.h>

#include "tests/unit/netstack/ipv6_frames.h"

START_TEST(test_ns_gets_na)
{
	const uint8_t *f;
	size_t len;

	send_ns(255);
	f = next_icmp6(ND_NA, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f[21], 255); /* hop limit */
	ck_assert_int_eq(memcmp(f + 38, P6, 16), 0);
	ck_assert_int_eq(memcmp(f, PMAC, 6), 0); /* unicast to the learned MAC */
	ck_assert_uint_eq(f[58] & 0x60, 0x60);	 /* solicited, override */
	ck_assert_int_eq(memcmp(f + 62, S6, 16), 0);
	ck_assert_uint_eq(f[78], 2); /* target link-layer address */
	ck_assert_int_eq(memcmp(f + 80, ls->mac, 6), 0);
	ck_assert_uint_eq(l4_csum(f + 22, f + 38, 58, f + 54, len - 54), 0);
	/* RFC 4861 7.1.1: a hop limit below 255 is not from the link. */
	send_ns(64);
	ck_assert_ptr_null(next_icmp6(ND_NA, NULL));
}
END_TEST

/* The next MLDv2 Report the stack sent (NULL if none), checked for what
 * RFC 3810 5 demands: to ff02::16 with hop limit 1, a Hop-by-Hop header
 * with the Router Alert, a valid checksum. *nrec: its record count. */
static const uint8_t *next_mld_report(unsigned *nrec)
{
	static const uint8_t mld2_routers[16] = {0xff, 2, [15] = 0x16};
	static const uint8_t hbh[8] = {58, 0, 5, 2, 0, 0, 1, 0};
	static uint8_t buf[2048];
	ssize_t n;

	ns_stack_poll(st);
	while ((n = ns_link_receive(lw, buf, sizeof(buf))) > 0) {
		size_t len;

		if (n < 54 + 8 + 8 || buf[20] != 0 || buf[62] != 143)
			continue;
		len = (size_t)(buf[18] << 8 | buf[19]) - 8;
		ck_assert_uint_eq(buf[21], 1);
		ck_assert_mem_eq(buf + 38, mld2_routers, 16);
		ck_assert_mem_eq(buf + 54, hbh, 8);
		ck_assert_uint_eq(l4_csum(buf + 22, buf + 38, 58, buf + 62, len), 0);
		*nrec = buf[68] << 8 | buf[69];
		ck_assert_uint_eq(len, 8 + *nrec * 20u);
		return buf + 62;
	}
	return NULL;
}

static bool mld_has(const uint8_t *m, unsigned nrec, uint8_t type, const char *group)
{
	uint8_t g[16];

	ns_parse_addr6(group, g);
	for (unsigned i = 0; i < nrec; i++)
		if (m[8 + i * 20] == type && !memcmp(m + 8 + i * 20 + 4, g, 16))
			return true;
	return false;
}

static void send_mld_query(uint8_t hlim, const char *group)
{
	static const uint8_t all_nodes[16] = {0xff, 2, [15] = 1};
	uint8_t f[256] = {0}, src[16], *q = f + 54;

	ns_parse_addr6("fe80::1", src);
	q[0] = 130;
	q[4] = 0x03; /* max response delay */
	ns_parse_addr6(group, q + 8);
	{
		uint16_t c = l4_csum(src, all_nodes, 58, q, 28);

		memcpy(q + 2, &c, 2);
	}
	inject(f, frame6(f, src, all_nodes, 58, hlim, 28));
}

/* MLDv2 (RFC 3810): a new address's solicited-node group is reported as
 * joined; a general query gets every group but all-nodes, a specific one
 * that group only; a query that is not link-local with hop limit 1 is
 * ignored. */
START_TEST(test_mld_reports)
{
	uint8_t a[16];
	const uint8_t *m;
	struct ns_stats s;
	unsigned n;

	ns_parse_addr6("fd00::77", a);
	ck_assert_int_eq(ns_iface_add6(st, ls, a, 64), 0);
	m = next_mld_report(&n);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(n, 1);
	ck_assert(mld_has(m, n, 4, "ff02::1:ff00:77")); /* CHANGE_TO_EXCLUDE */
	/* fd00::1 and the link-local (..:00:00:01 from the MAC's end) share
	 * no group with fd00::77: three groups in all. */
	send_mld_query(1, "::");
	m = next_mld_report(&n);
	ck_assert_ptr_nonnull(m);
	ck_assert(mld_has(m, n, 2, "ff02::1:ff00:77")); /* MODE_IS_EXCLUDE */
	ck_assert(mld_has(m, n, 2, "ff02::1:ff00:1"));
	ck_assert(!mld_has(m, n, 2, "ff02::1"));
	send_mld_query(1, "ff02::1:ff00:77");
	m = next_mld_report(&n);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(n, 1);
	ck_assert(mld_has(m, n, 2, "ff02::1:ff00:77"));
	send_mld_query(1, "ff02::1:ff00:99"); /* not ours: no answer */
	ck_assert_ptr_null(next_mld_report(&n));
	send_mld_query(64, "::");
	ck_assert_ptr_null(next_mld_report(&n));
	ns_stack_stats(st, &s);
	ck_assert_uint_eq(s.mld_query, 3);
	ck_assert_uint_eq(s.mld_bad, 1);
}
END_TEST

START_TEST(test_echo)
{
	uint8_t f[256] = {0}, *m = f + 54;
	const uint8_t *r;
	size_t len;
	uint16_t c;

	m[0] = ICMP6_ECHO;
	m[4] = 0xab;
	m[7] = 3;
	memcpy(m + 8, "payload!", 8);
	c = l4_csum(P6, S6, 58, m, 16);
	memcpy(m + 2, &c, 2);
	inject(f, frame6(f, P6, S6, 58, 64, 16));
	r = next_icmp6(ICMP6_ECHOREPLY, &len);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(len, 54 + 16);
	ck_assert_int_eq(memcmp(r + 58, m + 4, 12), 0);
	ck_assert_int_eq(memcmp(r + 22, S6, 16), 0);
	ck_assert_uint_eq(l4_csum(r + 22, r + 38, 58, r + 54, 16), 0);
	m[9] ^= 0xff; /* corrupted: no answer */
	inject(f, frame6(f, P6, S6, 58, 64, 16));
	ck_assert_ptr_null(next_icmp6(ICMP6_ECHOREPLY, NULL));
}
END_TEST

START_TEST(test_port_unreachable_rate_limited)
{
	uint8_t f[256];
	struct ns_stats s;
	unsigned got = 0;

	for (int i = 0; i < 300; i++) {
		size_t n = put_udp(f + 54, "closed");

		f[54 + 2] = 0x11; /* another port; fix the checksum */
		f[54 + 6] = f[54 + 7] = 0;
		{
			uint16_t c = l4_csum(P6, S6, NS_PROTO_UDP, f + 54, n);

			memcpy(f + 54 + 6, &c, 2);
		}
		inject(f, frame6(f, P6, S6, NS_PROTO_UDP, 64, n));
		while (next_icmp6(ICMP6_UNREACH, NULL))
			got++;
	}
	ck_assert_uint_eq(got, 100);
	ns_stack_stats(st, &s);
	ck_assert_uint_eq(s.icmp6_ratelimited, 200);
	/* The next second brings new tokens. */
	ns_clock_advance(clk, 1000000);
	inject(f, frame6(f, P6, S6, NS_PROTO_UDP, 64, 8 + 6));
	ck_assert_ptr_nonnull(next_icmp6(ICMP6_UNREACH, NULL));
}
END_TEST

START_TEST(test_no_error_about_multicast)
{
	uint8_t f[256], all[16];

	ns_parse_addr6("ff02::1", all);
	put_udp(f + 54, "group");
	f[54 + 2] = 0x22;
	inject(f, frame6(f, P6, all, NS_PROTO_UDP, 64, 8 + 5));
	ck_assert_ptr_null(next_icmp6(ICMP6_UNREACH, NULL));
	/* nor an unknown header sent to a group */
	memset(f + 54, 0, 16);
	inject(f, frame6(f, P6, all, 200, 64, 16));
	ck_assert_ptr_null(next_icmp6(ICMP6_PARAMPROB, NULL));
}
END_TEST

/* Packet Too Big quoting a packet from us to dst. */
static void send_ptb(const uint8_t from[16], const uint8_t dst[16], uint32_t mtu, const uint8_t *l4,
		     size_t l4len)
{
	uint8_t f[512] = {0}, *m = f + 54, *q = m + 8;
	uint16_t c;

	m[0] = ICMP6_PKTTOOBIG;
	m[4] = (uint8_t)(mtu >> 24);
	m[5] = (uint8_t)(mtu >> 16);
	m[6] = (uint8_t)(mtu >> 8);
	m[7] = (uint8_t)mtu;
	q[0] = 0x60;
	q[5] = (uint8_t)l4len;
	q[6] = NS_PROTO_TCP;
	q[7] = 64;
	memcpy(q + 8, from, 16);
	memcpy(q + 24, dst, 16);
	memcpy(q + 40, l4, l4len);
	c = l4_csum(P6, S6, 58, m, 8 + 40 + l4len);
	memcpy(m + 2, &c, 2);
	inject(f, frame6(f, P6, S6, 58, 64, 8 + 40 + l4len));
}

START_TEST(test_packet_too_big_sets_pmtu)
{
	uint8_t far[16], other[16], tcp[20] = {0};

	ns_parse_addr6("fd00::99", far);
	ns_parse_addr6("fd00::98", other);
	ck_assert_uint_eq(ns_pmtu6(st, far), 1500);
	send_ptb(S6, far, 1400, tcp, 20);
	ck_assert_uint_eq(ns_pmtu6(st, far), 1400);
	ck_assert_uint_eq(ns_pmtu6(st, other), 1500); /* per destination */
	send_ptb(S6, far, 1450, tcp, 20);	      /* never raised by a PTB */
	ck_assert_uint_eq(ns_pmtu6(st, far), 1400);
	send_ptb(S6, far, 600, tcp, 20); /* never below the minimum */
	ck_assert_uint_eq(ns_pmtu6(st, far), 1280);
	send_ptb(P6, other, 1300, tcp, 20); /* not about our packet */
	ck_assert_uint_eq(ns_pmtu6(st, other), 1500);
	ns_clock_advance(clk, 601000000); /* RFC 8201: it ages out */
	ck_assert_uint_eq(ns_pmtu6(st, far), 1500);
}
END_TEST

/* A TCP segment from the peer, checksummed. */
static void send_tcp(uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags)
{
	uint8_t f[256] = {0}, *t = f + 54;
	uint16_t c;

	t[0] = (uint8_t)(sport >> 8);
	t[1] = (uint8_t)sport;
	t[2] = (uint8_t)(dport >> 8);
	t[3] = (uint8_t)dport;
	for (int i = 0; i < 4; i++) {
		t[4 + i] = (uint8_t)(seq >> (24 - 8 * i));
		t[8 + i] = (uint8_t)(ack >> (24 - 8 * i));
	}
	t[12] = 6 << 4;
	t[13] = flags;
	t[14] = 0xff;
	t[15] = 0xff;
	t[20] = 2; /* MSS 1440 */
	t[21] = 4;
	t[22] = 1440 >> 8;
	t[23] = 1440 & 255;
	c = l4_csum(P6, S6, NS_PROTO_TCP, t, 24);
	memcpy(t + 16, &c, 2);
	inject(f, frame6(f, P6, S6, NS_PROTO_TCP, 64, 24));
}

START_TEST(test_packet_too_big_lowers_tcp_mss)
{
	struct ns_sockaddr any6 = {.port = 80, .family = NS_AF_INET6};
	uint8_t buf[2048], quote[20];
	struct ns_sock *l, *s;
	struct ns_tcp_info ti;
	uint32_t iss = 0;
	ssize_t n;
	int err;

	l = ns_socket(st, NS_SOCK_STREAM, &err);
	ck_assert_int_eq(ns_bind(l, &any6), 0);
	ck_assert_int_eq(ns_listen(l, 4), 0);
	send_tcp(40000, 80, 1000, 0, TH_SYN);
	while ((n = ns_link_receive(lw, buf, sizeof(buf))) > 0)
		if (buf[20] == NS_PROTO_TCP && (buf[54 + 13] & (TH_SYN | TH_ACK)))
			iss = (uint32_t)buf[58] << 24 | (uint32_t)buf[59] << 16 | buf[60] << 8 |
			      buf[61];
	ck_assert_uint_ne(iss, 0);
	send_tcp(40000, 80, 1001, iss + 1, TH_ACK);
	s = ns_accept(l, NULL, &err);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(ns_tcp_info(s, &ti), 0);
	ck_assert_uint_eq(ti.snd_mss, 1440);
	/* The quote: our segment's ports and a sequence number in flight. */
	memset(quote, 0, sizeof(quote));
	quote[0] = 0;
	quote[1] = 80;
	quote[2] = 40000 >> 8;
	quote[3] = 40000 & 255;
	for (int i = 0; i < 4; i++)
		quote[4 + i] = (uint8_t)((iss + 1) >> (24 - 8 * i));
	send_ptb(S6, P6, 1280, quote, 20);
	ck_assert_int_eq(ns_tcp_info(s, &ti), 0);
	ck_assert_uint_eq(ti.snd_mss, 1280 - 60);
	ns_abort(s);
	ns_close(l);
}
END_TEST

void ipv6_frames_add_icmp_tests(TCase *tc)
{
	tcase_add_test(tc, test_ns_gets_na);
	tcase_add_test(tc, test_mld_reports);
	tcase_add_test(tc, test_echo);
	tcase_add_test(tc, test_port_unreachable_rate_limited);
	tcase_add_test(tc, test_no_error_about_multicast);
	tcase_add_test(tc, test_packet_too_big_sets_pmtu);
	tcase_add_test(tc, test_packet_too_big_lowers_tcp_mss);
}
