/* test_ipv6_frames.c — one stack on one end of an in-memory pair, the test
 * on the other writing raw IPv6 frames (netstack_ipv6_frames): delivery,
 * the extension-header walk and its limits and ICMPv6 parameter problems,
 * fragment reassembly (order, overlap, memory and time bounds), and random
 * frames. ICMPv6 itself (ND, MLD, echo, errors, Packet Too Big) is in
 * test_ipv6_frames_icmp.c, the fixture in ipv6_frames_fixture.c (same
 * binary). */
#include <check.h>
#include <stdlib.h>

#include "tests/unit/check_run.h"
#include "tests/unit/netstack/ipv6_frames.h"

START_TEST(test_udp_delivered)
{
	uint8_t f[256];

	inject(f, frame6(f, P6, S6, NS_PROTO_UDP, 64, put_udp(f + 54, "plain")));
	ck_assert(delivered("plain"));
	/* A bad checksum is dropped. */
	put_udp(f + 54, "plain");
	f[54 + 8] ^= 1;
	inject(f, frame6(f, P6, S6, NS_PROTO_UDP, 64, 8 + 5));
	ck_assert(!delivered("plain"));
}
END_TEST

START_TEST(test_unknown_next_header)
{
	uint8_t f[256] = {0};
	const uint8_t *e;

	inject(f, frame6(f, P6, S6, 200, 64, 16));
	e = next_icmp6(ICMP6_PARAMPROB, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e[55], PP_NEXTHDR);
	ck_assert_uint_eq(e[61], 6);	/* pointer: the fixed header's next header */
	ck_assert_uint_eq(e[62], 0x60); /* the quote starts with our packet */
	/* Behind a destination options header the pointer moves there. */
	memset(f, 0, sizeof(f));
	f[54] = 200; /* dstopts: next 200, length 0 (8 bytes, PadN) */
	f[56] = 1;
	f[57] = 4;
	inject(f, frame6(f, P6, S6, 60, 64, 16));
	e = next_icmp6(ICMP6_PARAMPROB, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e[61], 40);
}
END_TEST

/* hop-by-hop header with one 2-byte option of the given type, then UDP */
static size_t hbh_udp(uint8_t *f, uint8_t opt_type, const char *msg)
{
	uint8_t *h = f + 54;

	memset(h, 0, 8);
	h[0] = NS_PROTO_UDP;
	h[2] = opt_type;
	h[3] = 0;
	h[4] = 1; /* PadN over the rest */
	h[5] = 2;
	return frame6(f, P6, S6, 0, 64, 8 + put_udp(h + 8, msg));
}

START_TEST(test_option_actions)
{
	uint8_t f[256];
	const uint8_t *e;

	inject(f, hbh_udp(f, 0x1e, "skip")); /* 00: skip the option */
	ck_assert(delivered("skip"));
	inject(f, hbh_udp(f, 0x5e, "drop")); /* 01: drop silently */
	ck_assert(!delivered("drop"));
	ck_assert_ptr_null(next_icmp6(ICMP6_PARAMPROB, NULL));
	inject(f, hbh_udp(f, 0x9e, "tell")); /* 10: drop and tell */
	ck_assert(!delivered("tell"));
	e = next_icmp6(ICMP6_PARAMPROB, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e[55], PP_OPTION);
	ck_assert_uint_eq(e[61], 42);
}
END_TEST

START_TEST(test_hop_by_hop_only_first)
{
	uint8_t f[256] = {0};
	const uint8_t *e;

	f[54] = 0; /* dstopts -> hop-by-hop: not allowed there */
	f[56] = 1;
	f[57] = 4;
	f[62] = NS_PROTO_UDP;
	f[64] = 1;
	f[65] = 4;
	inject(f, frame6(f, P6, S6, 60, 64, 16 + put_udp(f + 70, "late")));
	ck_assert(!delivered("late"));
	e = next_icmp6(ICMP6_PARAMPROB, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e[55], PP_NEXTHDR);
	ck_assert_uint_eq(e[61], 54 - 14); /* the dstopts header's next header */
}
END_TEST

START_TEST(test_routing_header)
{
	uint8_t f[256] = {0};
	const uint8_t *e;

	f[54] = NS_PROTO_UDP; /* routing, type 0, segments left 0: ignored */
	f[55] = 0;
	inject(f, frame6(f, P6, S6, 43, 64, 8 + put_udp(f + 62, "rt0")));
	ck_assert(delivered("rt0"));
	f[57] = 1; /* segments left 1: we route for nobody */
	inject(f, frame6(f, P6, S6, 43, 64, 8 + put_udp(f + 62, "rt1")));
	ck_assert(!delivered("rt1"));
	e = next_icmp6(ICMP6_PARAMPROB, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e[55], PP_HEADER);
	ck_assert_uint_eq(e[61], 42);
}
END_TEST

static size_t chain_udp(uint8_t *f, unsigned n, const char *msg)
{
	uint8_t *h = f + 54;

	for (unsigned i = 0; i < n; i++, h += 8) {
		memset(h, 0, 8);
		h[0] = i + 1 < n ? 60 : NS_PROTO_UDP;
		h[2] = 1;
		h[3] = 4;
	}
	return frame6(f, P6, S6, n ? 60 : NS_PROTO_UDP, 64, n * 8 + put_udp(h, msg));
}

START_TEST(test_extension_header_limit)
{
	uint8_t f[512];
	struct ns_stats s0, s1;

	inject(f, chain_udp(f, 8, "eight"));
	ck_assert(delivered("eight"));
	ns_stack_stats(st, &s0);
	inject(f, chain_udp(f, 9, "nine"));
	ck_assert(!delivered("nine"));
	ns_stack_stats(st, &s1);
	ck_assert_uint_eq(s1.ip6_bad, s0.ip6_bad + 1);
}
END_TEST

/* One fragment of a datagram whose fragmentable part (dgram) starts with
 * header nh. */
static void send_frag_nh(uint32_t id, uint8_t nh, const uint8_t *dgram, unsigned off, unsigned len,
			 bool more)
{
	uint8_t f[2048] = {0};
	uint8_t *fh = f + 54;
	uint16_t offw = (uint16_t)(off | more);

	fh[0] = nh;
	fh[2] = (uint8_t)(offw >> 8);
	fh[3] = (uint8_t)offw;
	fh[4] = (uint8_t)(id >> 24);
	fh[7] = (uint8_t)id;
	memcpy(fh + 8, dgram + off, len);
	inject(f, frame6(f, P6, S6, 44, 64, 8 + len));
}

/* One fragment of a UDP datagram (the whole L4 bytes in dgram). */
static void send_frag(uint32_t id, const uint8_t *dgram, unsigned off, unsigned len, bool more)
{
	send_frag_nh(id, NS_PROTO_UDP, dgram, off, len, more);
}

static size_t big_udp(uint8_t *d, char fill, size_t n)
{
	char msg[1200];

	memset(msg, fill, n);
	msg[n] = 0;
	return put_udp(d, msg);
}

static bool delivered_len(size_t n)
{
	static char buf[4096];

	return ns_chan_recv_nb(ch, buf, sizeof(buf), NULL) == (ssize_t)n;
}

START_TEST(test_reassembly_out_of_order)
{
	uint8_t d[1300];
	size_t n = big_udp(d, 'x', 1000); /* 1008 bytes: 504 + 504 */
	struct ns_stats s;

	send_frag(7, d, 504, 504, false);
	ck_assert(!delivered_len(1000));
	send_frag(7, d, 0, 504, true);
	ck_assert(delivered_len(1000));
	ns_stack_stats(st, &s);
	ck_assert_uint_eq(s.ip6_reass_ok, 1);
	ck_assert_uint_eq(s.reass_mem, 0);
	(void)n;
	/* An atomic fragment (offset 0, no more) is the packet itself. */
	send_frag(8, d, 0, 1008, false);
	ck_assert(delivered_len(1000));
}
END_TEST

START_TEST(test_reassembly_overlap_drops_datagram)
{
	uint8_t d[1300];
	struct ns_stats s;
	size_t mem;

	big_udp(d, 'o', 1000);
	send_frag(9, d, 0, 512, true);
	send_frag(9, d, 504, 504, false); /* overlaps bytes 504..511 */
	ck_assert(!delivered_len(1000));
	ns_stack_stats(st, &s);
	ck_assert_uint_ge(s.ip6_reass_drop, 1);
	ck_assert_uint_eq(s.reass_mem, 0); /* the whole datagram is gone */
	/* What is left of it never completes it. */
	send_frag(9, d, 512, 496, false);
	ck_assert(!delivered_len(1000));
	/* The same with the later fragment first. */
	ns_stack_stats(st, &s);
	mem = s.reass_mem;
	send_frag(10, d, 504, 504, false);
	send_frag(10, d, 0, 512, true);
	ns_stack_stats(st, &s);
	ck_assert_uint_eq(s.reass_mem, mem);
	send_frag(10, d, 0, 504, true);
	ck_assert(!delivered_len(1000));
}
END_TEST

/* RFC 7112: a first fragment that cuts the header chain (here inside a
 * 16-byte Destination Options header) is dropped with Parameter Problem
 * code 3, and its datagram never completes; the same datagram cut after
 * the UDP header is delivered. */
START_TEST(test_first_fragment_needs_header_chain)
{
	uint8_t d[64] = {NS_PROTO_UDP, 1, 1, 12}; /* Dest. options: PadN of 12 */
	size_t n = 16 + put_udp(d + 16, "chained");
	const uint8_t *pp;
	struct ns_stats s;

	send_frag_nh(21, 60, d, 0, 8, true);
	pp = next_icmp6(ICMP6_PARAMPROB, NULL);
	ck_assert_ptr_nonnull(pp);
	ck_assert_uint_eq(pp[55], PP_CHAIN);
	send_frag_nh(21, 60, d, 8, (unsigned)n - 8, false);
	ck_assert(!delivered("chained"));
	ns_stack_stats(st, &s);
	ck_assert_uint_eq(s.ip6_frag_chain_bad, 1);
	send_frag_nh(22, 60, d, 0, 24, true);
	send_frag_nh(22, 60, d, 24, (unsigned)n - 24, false);
	ck_assert(delivered("chained"));
	ns_stack_stats(st, &s);
	ck_assert_uint_eq(s.ip6_frag_chain_bad, 1);
}
END_TEST

START_TEST(test_reassembly_bounds)
{
	uint8_t d[1300], f[256];
	const uint8_t *e;
	struct ns_stats s;

	big_udp(d, 'm', 1000);
	/* Thousands of first halves: memory stays under the 64 KiB bound. */
	for (uint32_t id = 100; id < 3100; id++) {
		send_frag(id, d, 0, 504, true);
		ns_stack_stats(st, &s);
		ck_assert_uint_le(s.reass_mem, 64 * 1024);
	}
	ck_assert_uint_gt(s.reass_mem, 0);
	/* The time bound: 30 s later all is gone. */
	ns_clock_advance(clk, 31000000);
	ns_stack_poll(st);
	ns_stack_stats(st, &s);
	ck_assert_uint_eq(s.reass_mem, 0);
	/* A non-last fragment whose length is not a multiple of 8. */
	memset(f, 0, sizeof(f));
	f[54] = NS_PROTO_UDP;
	f[57] = 1; /* M */
	inject(f, frame6(f, P6, S6, 44, 64, 8 + 13));
	e = next_icmp6(ICMP6_PARAMPROB, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e[55], PP_HEADER);
	ck_assert_uint_eq(e[61], 4); /* the payload length */
}
END_TEST

START_TEST(test_random_frames)
{
	static uint8_t f[1600];
	struct ns_stats s;
	uint64_t x = 777;

	for (int i = 0; i < 30000; i++) {
		size_t len = 54 + ((x = x * 6364136223846793005ull + 1) >> 54);

		for (size_t j = 54; j < len && j < sizeof(f); j++)
			f[j] = (uint8_t)((x = x * 6364136223846793005ull + 1) >> 56);
		if (len > sizeof(f))
			len = sizeof(f);
		frame6(f, P6, S6, (uint8_t)(x >> 40), 255, len - 54);
		if (i % 3 == 0) /* a plausible chain head */
			f[20] = (uint8_t[]){0, 43, 44, 60, 58, 17, 6}[(x >> 20) % 7];
		if (i % 5 == 0) /* a lying payload length */
			f[18] = (uint8_t)(x >> 30);
		inject(f, len);
		drain_wire();
	}
	ns_stack_stats(st, &s);
	ck_assert_uint_le(s.reass_mem, 64 * 1024);
	ck_assert_uint_gt(s.ip6_rx, 29000);
}
END_TEST

static Suite *ipv6_frames_suite(void)
{
	Suite *s = suite_create("netstack_ipv6_frames");
	TCase *t = tcase_create("frames");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_udp_delivered);
	tcase_add_test(t, test_unknown_next_header);
	tcase_add_test(t, test_option_actions);
	tcase_add_test(t, test_hop_by_hop_only_first);
	tcase_add_test(t, test_routing_header);
	tcase_add_test(t, test_extension_header_limit);
	tcase_add_test(t, test_reassembly_out_of_order);
	tcase_add_test(t, test_reassembly_overlap_drops_datagram);
	tcase_add_test(t, test_reassembly_bounds);
	tcase_add_test(t, test_first_fragment_needs_header_chain);
	tcase_add_test(t, test_random_frames);
	ipv6_frames_add_icmp_tests(t);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return check_run_suite(ipv6_frames_suite());
}
