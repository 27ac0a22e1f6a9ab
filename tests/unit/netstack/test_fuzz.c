/* test_fuzz.c — malformed input below TCP: truncated, oversized,
 * bad-checksum, bad-header-length, random and bit-flipped frames of
 * Ethernet, ARP, IPv4 (options, fragments), ICMP and UDP fed to one stack
 * (a UDP channel, ICMP echo, TCP listening). Each test asserts the frames
 * are dropped (the right counter moves), that nothing malformed is sent
 * back, that memory stays within its bounds, and that a real exchange
 * works afterwards. Seeded PRNG: reproducible. TCP's own malformed input
 * is in test_fuzz_tcp.c (its own suite), the fixture in fuzz_fixture.c. */
#include <check.h>
#include <stdlib.h>

#include "netstack/internal.h"
#include "tests/unit/netstack/fuzz.h"

START_TEST(test_ethernet)
{
	struct ns_stats b = ts_stats(t);
	size_t len = udp_frame(frame, UDP_PORT, 10, 1);
	unsigned n = 0;

	for (size_t l = 0; l < ETH_HLEN; l++, n++)
		ts_inject_frame(t, frame, l);
	/* Bigger than the MTU allows, up to the biggest buffer. */
	for (size_t l = NS_FRAME_MAX(1500) + 5; l <= NS_FRAME_BUF; l += 7919, n++)
		ts_inject_frame(t, frame, l);
	/* Not our MAC (unicast to someone else). */
	frame[0] = 0x02;
	frame[5] = 0x99;
	ts_inject_frame(t, frame, len);
	n++;
	ck_assert_uint_eq(DELTA(rx_bad_eth, b), n);
	/* Unknown ethertypes (IPv6, VLAN, LLC lengths). */
	static const uint16_t types[] = {0x86dd, 0x8100, 0x0000, 0x05dc, 0xffff};

	udp_frame(frame, UDP_PORT, 10, 1);
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		frame[12] = (uint8_t)(types[i] >> 8);
		frame[13] = (uint8_t)types[i];
		ts_inject_frame(t, frame, len);
	}
	ck_assert_uint_eq(DELTA(rx_no_proto, b), 5);
	ck_assert_uint_eq(DELTA(udp_rx, b), 0);
	ck_assert_uint_eq(check_tx_sane(), 0);
	assert_alive();
}
END_TEST

START_TEST(test_arp)
{
	struct ns_stats b = ts_stats(t);
	size_t len = arp_request_frame(frame);
	uint8_t mac[6];
	struct arp_pkt *a = (void *)(frame + ETH_HLEN);

	for (size_t l = ETH_HLEN; l < len; l++)
		ts_inject_frame(t, frame, l);
	ck_assert_uint_eq(DELTA(rx_bad_eth, b), len - ETH_HLEN);
	a->htype = htons(6);
	ts_inject_frame(t, frame, len);
	arp_request_frame(frame);
	a->plen = 16;
	ts_inject_frame(t, frame, len);
	arp_request_frame(frame);
	a->sha[0] = 0x01; /* multicast sender */
	ts_inject_frame(t, frame, len);
	ck_assert_uint_eq(DELTA(rx_bad_eth, b), len - ETH_HLEN + 3);
	ck_assert_uint_eq(check_tx_sane(), 0);
	/* A spoofed reply cannot replace the static entry... */
	arp_request_frame(frame);
	a->op = htons(2);
	a->sha[5] = 0x66;
	ts_inject_frame(t, frame, len);
	ck_assert_int_eq(ns_arp_lookup(t->st, t->peer, mac), 0);
	ck_assert_int_eq(memcmp(mac, t->peer_mac, 6), 0);
	/* ...and replies between strangers create no entries (RFC 826:
	 * only a packet targeting us may add one). */
	a->spa = htonl(t->peer + 7);
	a->tpa = htonl(t->peer + 8);
	ts_inject_frame(t, frame, len);
	ck_assert_int_eq(ns_arp_lookup(t->st, t->peer + 7, mac), -ENOENT);
	ck_assert_uint_eq(check_tx_sane(), 0);
	/* A request for someone else is not answered; ours is. */
	arp_request_frame(frame);
	a->tpa = htonl(t->local + 9);
	ts_inject_frame(t, frame, len);
	ck_assert_uint_eq(check_tx_sane(), 0);
	arp_request_frame(frame);
	ts_inject_frame(t, frame, len + 18); /* padded to 60 bytes: fine */
	ck_assert_uint_eq(check_tx_sane(), 1);
	assert_alive();
}
END_TEST

START_TEST(test_ip_header)
{
	struct ns_stats b = ts_stats(t);
	size_t len = udp_frame(frame, UDP_PORT, 40, 2);
	struct ip_hdr *ih = (void *)(frame + ETH_HLEN);
	unsigned bad = 0;

	for (size_t l = ETH_HLEN; l < ETH_HLEN + 20; l++, bad++)
		ts_inject_frame(t, frame, l);
	/* total length beyond the frame: every cut of a valid datagram */
	for (size_t l = ETH_HLEN + 20; l < len; l++, bad++)
		ts_inject_frame(t, frame, l);
	ih->vhl = 0x65; /* version 6 */
	ip_fix_csum(frame);
	ts_inject_frame(t, frame, len);
	bad++;
	for (uint8_t hl = 0; hl < 5; hl++, bad++) {
		udp_frame(frame, UDP_PORT, 40, 2);
		ih->vhl = (uint8_t)(0x40 | hl);
		ip_fix_csum(frame);
		ts_inject_frame(t, frame, len);
	}
	/* header length longer than the total length / the frame */
	udp_frame(frame, UDP_PORT, 40, 2);
	ih->vhl = 0x4f;
	ih->len = htons(40);
	ip_fix_csum(frame);
	ts_inject_frame(t, frame, len);
	bad++;
	/* martian sources: loopback, multicast, limited and our broadcast */
	static const uint32_t martians[] = {0x7f000001, 0xe0000001, 0xffffffff, 0x0a0000ff};

	for (size_t i = 0; i < sizeof(martians) / sizeof(martians[0]); i++, bad++) {
		udp_frame(frame, UDP_PORT, 40, 2);
		ih->src = htonl(martians[i]);
		ip_fix_csum(frame);
		ts_inject_frame(t, frame, len);
	}
	/* not for us */
	udp_frame(frame, UDP_PORT, 40, 2);
	ih->dst = htonl(t->local + 50);
	ip_fix_csum(frame);
	ts_inject_frame(t, frame, len);
	bad++;
	ck_assert_uint_eq(DELTA(rx_bad_ip, b), bad);
	/* bad header checksum */
	udp_frame(frame, UDP_PORT, 40, 2);
	ih->ttl ^= 1;
	ts_inject_frame(t, frame, len);
	ck_assert_uint_eq(DELTA(rx_bad_csum, b), 1);
	ck_assert_uint_eq(DELTA(udp_rx, b), 0);
	ck_assert_uint_eq(check_tx_sane(), 0);
	/* Unknown protocol: counted and answered with protocol unreachable. */
	udp_frame(frame, UDP_PORT, 40, 2);
	ih->proto = 99;
	ip_fix_csum(frame);
	ts_inject_frame(t, frame, len);
	ck_assert_uint_eq(DELTA(rx_no_proto, b), 1);
	ck_assert_uint_eq(check_tx_sane(), 1);
	/* Trailing Ethernet padding past the IP total length is ignored. */
	udp_frame(frame, UDP_PORT, 40, 2);
	ts_inject_frame(t, frame, len + 30);
	ck_assert_uint_eq(DELTA(udp_rx, b), 1);
	assert_alive();
}
END_TEST

/* One fragment of datagram id: off and len in bytes of the IP payload. */
static void inject_frag(uint16_t id, unsigned off, size_t len, bool more, uint8_t proto)
{
	uint8_t *p = frame + ETH_HLEN + 20;
	size_t flen;

	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)rnd();
	flen = ts_build_ip(t, frame, proto, id, (uint16_t)((more ? IP_MF : 0) | (off / 8)), p, len);
	ts_inject_frame(t, frame, flen);
}

START_TEST(test_fragments)
{
	static uint8_t big[3000];
	struct ns_stats b = ts_stats(t), s;
	uint8_t *l4 = big + ETH_HLEN + 20, buf[3000];
	struct udp_hdr *u = (void *)l4;
	static const uint8_t protos[] = {NS_PROTO_UDP, NS_PROTO_TCP, NS_PROTO_ICMP, 99};

	/* Random fragments of a few colliding ids: overlaps, holes, zero and
	 * odd lengths, offsets up to the 64 KiB limit and past it. */
	for (int i = 0; i < 4000; i++) {
		unsigned off = (rnd() % 8192) * 8;
		size_t len = rnd() % 1481;

		if (i % 3 == 0)
			len &= ~7u;
		inject_frag((uint16_t)(rnd() % 12), off, len, rnd() & 1, protos[rnd() % 4]);
		s = ts_stats(t);
		ck_assert_uint_le(s.reass_mem, REASS_MAX);
		check_tx_sane();
	}
	ck_assert_uint_gt(DELTA(ip_reass_drop, b), 100);
	/* Well-formed, never completed datagrams: many ids, many disjoint
	 * fragments each (megabytes offered), memory stays at the bound. */
	for (unsigned off = 0; off < 40 * 1480; off += 1480)
		for (uint16_t id = 1000; id < 1100; id++) {
			inject_frag(id, off, 1480, true, NS_PROTO_UDP);
			ck_assert_uint_le(ts_stats(t).reass_mem, REASS_MAX);
		}
	ck_assert_uint_ge(ts_stats(t).reass_mem, REASS_MAX / 2);
	/* An oversized datagram: a last fragment ending past 65535. */
	inject_frag(500, 0, 1000, true, NS_PROTO_UDP);
	inject_frag(500, 65528, 100, false, NS_PROTO_UDP);
	/* Everything expires and the memory comes back. */
	ts_wait(t, 31000);
	ck_assert_uint_eq(ts_stats(t).reass_mem, 0);
	check_tx_sane();
	/* A real fragmented datagram still reassembles. */
	u->sport = htons(5555);
	u->dport = htons(UDP_PORT);
	u->len = htons(2008);
	u->csum = 0;
	for (int i = 8; i < 2008; i++)
		l4[i] = (uint8_t)i;
	u->csum = (uint16_t)~ts_l4_csum(t->peer, t->local, NS_PROTO_UDP, l4, 2008);
	memcpy(buf, l4, 2008);
	ts_inject_frame(t, frame,
			ts_build_ip(t, frame, NS_PROTO_UDP, 900, IP_MF, buf + 1000,
				    0)); /* empty fragment: ignored or dropped */
	ts_inject_frame(t, frame,
			ts_build_ip(t, frame, NS_PROTO_UDP, 901, 1000 / 8, buf + 1000, 1008));
	ts_inject_frame(t, frame, ts_build_ip(t, frame, NS_PROTO_UDP, 901, IP_MF, buf, 1000));
	ck_assert_int_eq(ns_chan_recv_nb(udp, buf, sizeof(buf), NULL), 2000);
	ck_assert_uint_eq(buf[1999], (uint8_t)2007);
	assert_alive();
}
END_TEST

START_TEST(test_icmp)
{
	struct ns_stats b = ts_stats(t);
	size_t len = icmp_echo_frame(frame, 32);
	uint8_t *l4 = frame + ETH_HLEN + 20;

	/* truncated below the 8-byte header, with consistent IP lengths */
	for (size_t l = 0; l < 8; l++)
		ts_inject_frame(t, frame, ts_build_ip(t, frame, NS_PROTO_ICMP, 5, 0, l4, l));
	icmp_echo_frame(frame, 32);
	l4[10] ^= 0x40; /* payload bit: checksum no longer matches */
	ts_inject_frame(t, frame, len);
	ck_assert_uint_eq(DELTA(rx_bad_csum, b), 9);
	ck_assert_uint_eq(check_tx_sane(), 0);
	/* Errors quoting garbage: truncated and random inner headers, quoting
	 * TCP, UDP and unknown protocols; unknown types and codes. */
	for (int i = 0; i < 3000; i++) {
		size_t ql = rnd() % 64;
		struct icmp_hdr *h = (void *)l4;

		h->type = (uint8_t)(i % 4 == 0 ? rnd() : (i & 1 ? ICMP_UNREACH : ICMP_TIMXCEED));
		h->code = (uint8_t)(rnd() % 16);
		h->id = (uint16_t)rnd();
		h->seq = (uint16_t)rnd();
		for (size_t j = 0; j < ql; j++)
			l4[8 + j] = (uint8_t)rnd();
		if (ql >= 20 && (i & 2)) { /* plausible quoted IPv4 header */
			l4[8] = (uint8_t)(0x45 + (i % 8 == 2 ? 10 : 0));
			l4[8 + 9] = (uint8_t)(i & 4 ? NS_PROTO_TCP : NS_PROTO_UDP);
			memcpy(l4 + 8 + 12, &(uint32_t){htonl(t->local)}, 4);
			memcpy(l4 + 8 + 16, &(uint32_t){htonl(t->peer)}, 4);
		}
		h->csum = 0;
		h->csum = (uint16_t)~ns_csum_fold(ns_csum_add(0, l4, 8 + ql));
		ts_inject_frame(t, frame, ts_build_ip(t, frame, NS_PROTO_ICMP, 6, 0, l4, 8 + ql));
		ck_assert_uint_eq(check_tx_sane(), h->type == ICMP_ECHO);
	}
	/* Echo requests of every size answer with their own payload. */
	for (size_t pl = 0; pl <= 1472; pl += 91)
		ping_ok(pl);
	ping_ok(1472);
	assert_alive();
}
END_TEST

START_TEST(test_udp)
{
	struct ns_stats b = ts_stats(t);
	uint8_t *l4 = frame + ETH_HLEN + 20;
	struct udp_hdr *u = (void *)l4;
	size_t len = udp_frame(frame, UDP_PORT, 20, 3);

	/* truncated header (IP length consistent) */
	for (size_t l = 0; l < 8; l++)
		ts_inject_frame(t, frame, ts_build_ip(t, frame, NS_PROTO_UDP, 7, 0, l4, l));
	/* UDP length below 8 or beyond the IP payload */
	udp_frame(frame, UDP_PORT, 20, 3);
	u->len = htons(7);
	ts_inject_frame(t, frame, len);
	u->len = htons(29);
	ts_inject_frame(t, frame, len);
	u->len = htons(65535);
	ts_inject_frame(t, frame, len);
	ck_assert_uint_eq(DELTA(rx_bad_ip, b), 11);
	/* bad checksum */
	udp_frame(frame, UDP_PORT, 20, 3);
	u->csum ^= 0x0101;
	ts_inject_frame(t, frame, len);
	ck_assert_uint_eq(DELTA(rx_bad_csum, b), 1);
	ck_assert_int_eq(ns_chan_recv_nb(udp, frame + 2000, 100, NULL), -EAGAIN);
	ck_assert_uint_eq(check_tx_sane(), 0);
	/* checksum 0 means "none" (RFC 768): accepted */
	udp_frame(frame, UDP_PORT, 20, 3);
	u->csum = 0;
	ts_inject_frame(t, frame, len);
	ck_assert_int_eq(ns_chan_recv_nb(udp, frame + 2000, 100, NULL), 20);
	/* A flood beyond the queue bound is dropped, not buffered. */
	for (int i = 0; i < 1000; i++)
		ts_inject_frame(t, frame, udp_frame(frame, UDP_PORT, 1400, (uint8_t)i));
	ck_assert_uint_eq(DELTA(udp_drop_full, b), 1000 - CHAN_QMAX);
	/* Closed ports get port unreachable, each a well-formed frame. */
	for (uint16_t p = 1; p <= 50; p++)
		ts_inject_frame(t, frame, udp_frame(frame, (uint16_t)(UDP_PORT + p), 8, 0));
	ck_assert_uint_eq(DELTA(udp_no_port, b), 50);
	ck_assert_uint_eq(check_tx_sane(), 50);
	assert_alive();
}
END_TEST

/* Random bytes, and valid frames of every kind with 1-3 bits flipped
 * (IP and L4 checksums catch most; whatever passes must be harmless). */
START_TEST(test_random_and_bitflips)
{
	static uint8_t seeds[5][1600];
	size_t seedlen[5];
	struct ns_stats b = ts_stats(t);
	unsigned frames = 0;

	seedlen[0] = udp_frame(seeds[0], UDP_PORT, 64, 5);
	seedlen[1] = icmp_echo_frame(seeds[1], 64);
	seedlen[2] = arp_request_frame(seeds[2]);
	seedlen[3] = tcp_frame(seeds[3], 999, 80, TH_SYN, (const uint8_t[]){2, 4, 5, 180}, 4, 0);
	ts_build_ip(t, seeds[4], NS_PROTO_UDP, 77, IP_MF, seeds[0] + ETH_HLEN + 20, 64);
	seedlen[4] = ETH_HLEN + 20 + 64;
	for (int i = 0; i < 20000; i++, frames++) {
		size_t len;

		if (i % 4 == 0) {
			len = rnd() % 1600;
			for (size_t j = 0; j < len; j++)
				frame[j] = (uint8_t)rnd();
			if (len >= ETH_HLEN && (i & 8)) {
				memcpy(frame, t->link->mac, 6);
				frame[12] = 8;
				frame[13] = (uint8_t)(i & 16 ? 6 : 0);
			}
		} else {
			unsigned k = rnd() % 5, flips = 1 + rnd() % 3;

			len = seedlen[k];
			memcpy(frame, seeds[k], len);
			for (unsigned f = 0; f < flips; f++) {
				size_t bit = rnd() % ((len - 6) * 8) + 6 * 8; /* keep dst MAC */

				frame[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			}
			if (i % 7 == 0)
				len = rnd() % (len + 1);
		}
		ts_inject_frame(t, frame, len);
		check_tx_sane();
		ck_assert_uint_le(ts_stats(t).reass_mem, REASS_MAX);
	}
	ck_assert_uint_eq(DELTA(rx_frames, b), frames);
	ck_assert_uint_gt(DELTA(rx_bad_csum, b) + DELTA(rx_bad_ip, b) + DELTA(rx_bad_eth, b),
			  frames / 2);
	assert_alive();
}
END_TEST

/* A datagram from the wire claiming one of our own addresses as its
 * source (the "LAND" SYN: src = dst = us) is a martian: dropped at IP,
 * no half-open connection, no ARP for our own address. */
START_TEST(test_own_source_address_dropped)
{
	struct ns_sock *l = ts_listen(t, 80, 4);
	struct ns_stats b = ts_stats(t);
	uint32_t peer = t->peer;

	ts_new_conn(t, 80, 80);
	t->peer = t->local;
	TS_IN(t, "S 0:0(0) win 65535 <mss 1460>");
	t->peer = peer;
	ck_assert_uint_eq(DELTA(rx_bad_ip, b), 1);
	ck_assert_uint_eq(check_tx_sane(), 0);
	ck_assert_uint_eq(ts_stats(t).tcp_conns, 1);
	ns_close(l);
}
END_TEST

/* Tests failing on an engine bug (entry named in the comment, in
 * /work/notes/bugs/tcp-core.md); moved to cases[] once fixed. */
static const struct ts_case pending_cases[] = {
	{NULL}, /* none right now */
};

static const struct ts_case cases[] = {
	TS_CASE_V4(test_ethernet),
	TS_CASE_V4(test_arp),
	TS_CASE_V4(test_ip_header),
	TS_CASE_V4(test_fragments),
	TS_CASE_V4(test_icmp),
	TS_CASE_V4(test_udp),
	TS_CASE_V4(test_random_and_bitflips),
	TS_CASE_V4(test_own_source_address_dropped),
};

TS_MAIN("netstack_fuzz", cases, pending_cases, fuzz_setup, fuzz_teardown, 30)
