/* test_ipv6_frames.c — one stack on one end of an in-memory pair, the test
 * on the other writing raw IPv6 frames: the extension-header walk and its
 * limits and ICMPv6 parameter problems, fragment reassembly (order,
 * overlap, memory and time bounds), ICMPv6 echo and errors (checksums,
 * rate limit, never to groups), Packet Too Big to the path MTU and to TCP,
 * NS/NA on the wire, and random frames. */
#include <check.h>
#include <stdlib.h>

#include "netstack/internal.h"
#include "tests/unit/check_run.h"

#define UDP_PORT 5000

static const uint8_t PMAC[6] = {0x02, 0x99, 0, 0, 0, 5};
static struct ns_clock *clk;
static struct ns_link *ls, *lw; /* the stack's end, the wire (test) end */
static struct ns_stack *st;
static struct ns_chan *ch;
static uint8_t S6[16], P6[16];

/* ---------------------------------------------------------------- frames */

static uint16_t l4_csum(const uint8_t src[16], const uint8_t dst[16], uint8_t nh, const uint8_t *l4,
			size_t len)
{
	uint8_t ph[40] = {0};
	uint32_t sum;

	memcpy(ph, src, 16);
	memcpy(ph + 16, dst, 16);
	ph[34] = (uint8_t)(len >> 8);
	ph[35] = (uint8_t)len;
	ph[39] = nh;
	sum = ns_csum_add(ns_csum_add(0, ph, 40), l4, len);
	return (uint16_t)~ns_csum_fold(sum);
}

/* Ethernet + IPv6 header in front of the len bytes at f + 54; returns the
 * frame length. */
static size_t frame6(uint8_t *f, const uint8_t src[16], const uint8_t dst[16], uint8_t nh,
		     uint8_t hlim, size_t len)
{
	if (dst[0] == 0xff) {
		f[0] = f[1] = 0x33;
		memcpy(f + 2, dst + 12, 4);
	} else {
		memcpy(f, ls->mac, 6);
	}
	memcpy(f + 6, PMAC, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	memset(f + 14, 0, 8);
	f[14] = 0x60;
	f[18] = (uint8_t)(len >> 8);
	f[19] = (uint8_t)len;
	f[20] = nh;
	f[21] = hlim;
	memcpy(f + 22, src, 16);
	memcpy(f + 38, dst, 16);
	return 54 + len;
}

/* A UDP datagram to UDP_PORT at off into the payload, checksummed. */
static size_t put_udp(uint8_t *l4, const char *msg)
{
	size_t n = strlen(msg);

	memset(l4, 0, 8);
	l4[0] = 0x30;
	l4[1] = 0x39;
	l4[2] = UDP_PORT >> 8;
	l4[3] = UDP_PORT & 255;
	l4[4] = (uint8_t)((8 + n) >> 8);
	l4[5] = (uint8_t)(8 + n);
	memcpy(l4 + 8, msg, n);
	{
		uint16_t c = l4_csum(P6, S6, NS_PROTO_UDP, l4, 8 + n);

		memcpy(l4 + 6, &c, 2);
	}
	return 8 + n;
}

static void inject(const uint8_t *f, size_t len)
{
	ns_stack_input(st, ls, f, len);
}

/* The next frame the stack sent that is ICMPv6 of this type (or NULL);
 * frames before it are skipped. */
static const uint8_t *next_icmp6(uint8_t type, size_t *len)
{
	static uint8_t buf[2048];
	ssize_t n;

	ns_stack_poll(st);
	while ((n = ns_link_receive(lw, buf, sizeof(buf))) > 0)
		if (n >= 54 + 4 && buf[12] == 0x86 && buf[13] == 0xdd && buf[20] == 58 &&
		    buf[54] == type) {
			if (len)
				*len = (size_t)n;
			return buf;
		}
	return NULL;
}

static void drain_wire(void)
{
	uint8_t buf[2048];

	while (ns_link_receive(lw, buf, sizeof(buf)) > 0)
		;
}

static bool delivered(const char *msg)
{
	char buf[256];
	ssize_t n = ns_chan_recv_nb(ch, buf, sizeof(buf), NULL);

	return n == (ssize_t)strlen(msg) && !memcmp(buf, msg, (size_t)n);
}

/* ---------------------------------------------------------------- setup */

static void send_ns(uint8_t hlim)
{
	uint8_t f[128] = {0}, *m = f + 54, sn[16];

	ns_parse_addr6("ff02::1:ff00:1", sn);
	m[0] = ND_NS;
	memcpy(m + 8, S6, 16);
	m[24] = 1; /* source link-layer address */
	m[25] = 1;
	memcpy(m + 26, PMAC, 6);
	{
		uint16_t c = l4_csum(P6, sn, 58, m, 32);

		memcpy(m + 2, &c, 2);
	}
	inject(f, frame6(f, P6, sn, 58, hlim, 32));
}

static void setup(void)
{
	struct ns_stack_cfg cfg = {0};
	struct ns_sockaddr local = {.port = UDP_PORT, .family = NS_AF_INET6};
	int err;

	clk = ns_clock_virtual_new(1000000);
	cfg.clock = clk;
	cfg.seed = 9;
	cfg.reass_mem_max = 64 * 1024;
	ck_assert_int_eq(ns_link_pair(1500, 0, &ls, &lw), 0);
	st = ns_stack_new(&cfg);
	ns_parse_addr6("fd00::1", S6);
	ns_parse_addr6("fd00::5", P6);
	ck_assert_int_eq(ns_iface_add(st, ls, 0x0a000001, 24, 0), 0);
	ck_assert_int_eq(ns_iface_ipv6(st, ls, NS_IF6_NODAD), 0);
	ck_assert_int_eq(ns_iface_add6(st, ls, S6, 64), 0);
	ch = ns_chan_create(st, NS_PROTO_UDP, &local, NULL, &err);
	ck_assert_ptr_nonnull(ch);
	/* The peer introduces itself: the stack learns its MAC. */
	send_ns(255);
	drain_wire();
}

static void teardown(void)
{
	ns_chan_close(ch);
	ns_stack_free(st);
	ns_link_destroy(ls);
	ns_link_destroy(lw);
	ns_clock_free(clk);
}

/* ---------------------------------------------------------------- tests */

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
static void send_frag_nh(uint32_t id, uint8_t nh, const uint8_t *dgram, unsigned off,
			 unsigned len, bool more)
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
	tcase_add_test(t, test_ns_gets_na);
	tcase_add_test(t, test_udp_delivered);
	tcase_add_test(t, test_unknown_next_header);
	tcase_add_test(t, test_option_actions);
	tcase_add_test(t, test_hop_by_hop_only_first);
	tcase_add_test(t, test_routing_header);
	tcase_add_test(t, test_extension_header_limit);
	tcase_add_test(t, test_reassembly_out_of_order);
	tcase_add_test(t, test_reassembly_overlap_drops_datagram);
	tcase_add_test(t, test_reassembly_bounds);
	tcase_add_test(t, test_mld_reports);
	tcase_add_test(t, test_first_fragment_needs_header_chain);
	tcase_add_test(t, test_echo);
	tcase_add_test(t, test_port_unreachable_rate_limited);
	tcase_add_test(t, test_no_error_about_multicast);
	tcase_add_test(t, test_packet_too_big_sets_pmtu);
	tcase_add_test(t, test_packet_too_big_lowers_tcp_mss);
	tcase_add_test(t, test_random_frames);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return check_run_suite(ipv6_frames_suite());
}
