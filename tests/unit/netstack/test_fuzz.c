/* test_fuzz.c — malformed input: truncated, oversized, bad-checksum,
 * bad-header-length, random and bit-flipped frames of every layer fed to
 * one stack (a UDP channel, ICMP echo and TCP listening/connected). Each
 * test asserts the frames are dropped (the right counter moves), that
 * nothing malformed is sent back, that memory stays within its bounds,
 * and that a real exchange works afterwards. Seeded PRNG: reproducible. */
#include <check.h>
#include <stdlib.h>

#include "netstack/internal.h"
#include "tests/unit/netstack/tcpscript.h"

enum { UDP_PORT = 7777, REASS_MAX = 64 * 1024, MAX_CONNS = 64, CHAN_QMAX = 16 };

static struct tscript *t;
static struct ns_chan *udp;
static uint64_t rng;
static uint8_t frame[NS_FRAME_BUF];

static uint32_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)((z ^ (z >> 31)) >> 16);
}

static void setup(void)
{
	struct ts_cfg cfg = { .stack = { .reass_mem_max = REASS_MAX,
					 .tcp_max_conns = MAX_CONNS } };
	struct ns_sockaddr l;
	int err;

	rng = 0xf0220;
	t = ts_new(&cfg);
	l = (struct ns_sockaddr){ .addr = t->local, .port = UDP_PORT };
	udp = ns_chan_create(t->st, NS_PROTO_UDP, &l, NULL, &err);
	ck_assert_ptr_nonnull(udp);
	ns_chan_set_queue_max(udp, CHAN_QMAX);
}

static void teardown(void)
{
	ns_chan_close(udp);
	ts_free(t);
}

/* ------------------------------------------------------------- frames */

/* UDP peer:5555 -> stack:dport with plen payload bytes, checksummed. */
static size_t udp_frame(uint8_t *f, uint16_t dport, size_t plen, uint8_t fill)
{
	uint8_t *l4 = f + ETH_HLEN + 20;
	struct udp_hdr *u = (void *)l4;

	u->sport = htons(5555);
	u->dport = htons(dport);
	u->len = htons((uint16_t)(plen + 8));
	u->csum = 0;
	memset(l4 + 8, fill, plen);
	u->csum = (uint16_t)~ts_l4_csum(t->peer, t->local, NS_PROTO_UDP, l4, plen + 8);
	return ts_build_ip(t, f, NS_PROTO_UDP, 1, 0, l4, plen + 8);
}

static size_t icmp_echo_frame(uint8_t *f, size_t plen)
{
	uint8_t *l4 = f + ETH_HLEN + 20;
	struct icmp_hdr *h = (void *)l4;

	memset(h, 0, sizeof(*h));
	h->type = ICMP_ECHO;
	h->id = htons(0x4242);
	h->seq = htons(1);
	for (size_t i = 0; i < plen; i++)
		l4[8 + i] = (uint8_t)(i * 3);
	h->csum = (uint16_t)~ns_csum_fold(ns_csum_add(0, l4, plen + 8));
	return ts_build_ip(t, f, NS_PROTO_ICMP, 2, 0, l4, plen + 8);
}

static size_t arp_request_frame(uint8_t *f)
{
	struct arp_pkt *a = (void *)(f + ETH_HLEN);

	memset(f, 0xff, 6);
	memcpy(f + 6, t->peer_mac, 6);
	f[12] = ETHERTYPE_ARP >> 8;
	f[13] = ETHERTYPE_ARP & 0xff;
	a->htype = htons(1);
	a->ptype = htons(ETHERTYPE_IP);
	a->hlen = 6;
	a->plen = 4;
	a->op = htons(1);
	memcpy(a->sha, t->peer_mac, 6);
	a->spa = htonl(t->peer);
	memset(a->tha, 0, 6);
	a->tpa = htonl(t->local);
	return ETH_HLEN + sizeof(*a);
}

/* TCP peer:sport -> stack:dport, 20-byte header plus opts, checksummed. */
static size_t tcp_frame(uint8_t *f, uint16_t sport, uint16_t dport, uint8_t flags,
			const uint8_t *opts, size_t optlen, size_t plen)
{
	uint8_t *l4 = f + ETH_HLEN + 20;
	struct tcp_hdr *th = (void *)l4;
	size_t hl = 20 + optlen;

	memset(th, 0, sizeof(*th));
	th->sport = htons(sport);
	th->dport = htons(dport);
	th->seq = htonl(rnd());
	th->ack = htonl(rnd());
	th->off = (uint8_t)((hl / 4) << 4);
	th->flags = flags;
	th->win = htons(65535);
	if (optlen)
		memcpy(l4 + 20, opts, optlen);
	memset(l4 + hl, 'd', plen);
	th->csum = (uint16_t)~ts_l4_csum(t->peer, t->local, NS_PROTO_TCP, l4, hl + plen);
	return ts_build_ip(t, f, NS_PROTO_TCP, 3, IP_DF, l4, hl + plen);
}

/* Recompute the IP header checksum after editing the header. */
static void ip_fix_csum(uint8_t *f)
{
	struct ip_hdr *ih = (void *)(f + ETH_HLEN);
	size_t hl = (ih->vhl & 15u) * 4;

	ih->csum = 0;
	ih->csum = (uint16_t)~ns_csum_fold(ns_csum_add(0, ih, hl < 20 ? 20 : hl));
}

/* --------------------------------------------------------- invariants */

/* Everything the stack sent is a well-formed frame from its own MAC
 * (garbage in must never produce garbage out); returns the count. */
static unsigned check_tx_sane(void)
{
	struct ts_frame *f;
	unsigned n = 0;

	while ((f = ts_pop(t))) {
		const uint8_t *d = f->data;

		ck_assert_uint_ge(f->len, ETH_HLEN);
		ck_assert_uint_le(f->len, NS_FRAME_MAX(t->link->mtu));
		ck_assert_int_eq(memcmp(d + 6, t->link->mac, 6), 0);
		if (d[12] == 8 && d[13] == 0) {
			size_t hl = (d[ETH_HLEN] & 15u) * 4;
			uint32_t src;

			ck_assert_uint_eq(d[ETH_HLEN] >> 4, 4);
			ck_assert_uint_ge(hl, 20);
			ck_assert_uint_ge(f->len, ETH_HLEN + hl);
			ck_assert_uint_le((size_t)(d[ETH_HLEN + 2] << 8 | d[ETH_HLEN + 3]),
					  f->len - ETH_HLEN);
			ck_assert_uint_eq(ns_csum_fold(ns_csum_add(0, d + ETH_HLEN, hl)), 0xffff);
			memcpy(&src, d + ETH_HLEN + 12, 4);
			ck_assert_uint_eq(ntohl(src), t->local);
		} else {
			ck_assert_msg(d[12] == 8 && d[13] == 6, "sent ethertype %02x%02x", d[12],
				      d[13]);
			ck_assert_uint_ge(f->len, ETH_HLEN + sizeof(struct arp_pkt));
		}
		free(f);
		n++;
	}
	return n;
}

/* A datagram to the channel arrives intact and the answer goes out. */
static void udp_roundtrip(void)
{
	uint8_t buf[256];
	struct ns_pktinfo info;
	struct ts_frame *f;
	size_t len;

	check_tx_sane();
	while (ns_chan_recv_nb(udp, buf, sizeof(buf), &info) >= 0)
		;
	len = udp_frame(frame, UDP_PORT, 100, 0xab);
	ts_inject_frame(t, frame, len);
	ck_assert_int_eq(ns_chan_recv_nb(udp, buf, sizeof(buf), &info), 100);
	ck_assert_uint_eq(buf[0], 0xab);
	ck_assert_uint_eq(buf[99], 0xab);
	ck_assert_uint_eq(info.src.addr, t->peer);
	ck_assert_uint_eq(info.src.port, 5555);
	info = (struct ns_pktinfo){ .dst = { t->peer, 5555 } };
	ck_assert_int_eq(ns_chan_sendto(udp, "pong", 4, &info), 4);
	f = ts_pop(t);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->len, ETH_HLEN + 20 + 8 + 4);
	ck_assert_int_eq(memcmp(f->data + ETH_HLEN + 28, "pong", 4), 0);
	free(f);
}

/* An echo request is answered with the same payload. */
static void ping_ok(size_t plen)
{
	static uint8_t req[2000];
	size_t len = icmp_echo_frame(req, plen);
	struct ts_frame *f;

	check_tx_sane();
	ts_inject_frame(t, req, len);
	f = ts_pop(t);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->len, len);
	ck_assert_uint_eq(f->data[ETH_HLEN + 20], ICMP_ECHOREPLY);
	ck_assert_int_eq(memcmp(f->data + ETH_HLEN + 28, req + ETH_HLEN + 28, plen), 0);
	free(f);
	ck_assert_ptr_null(t->qhead);
}

static void assert_alive(void)
{
	struct ns_stats s = ts_stats(t);

	ck_assert_uint_le(s.reass_mem, REASS_MAX);
	udp_roundtrip();
	ping_ok(56);
}

#define DELTA(field, before) (ts_stats(t).field - (before).field)

/* --------------------------------------------------------------- tests */

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
	static const uint16_t types[] = { 0x86dd, 0x8100, 0x0000, 0x05dc, 0xffff };

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
	static const uint32_t martians[] = { 0x7f000001, 0xe0000001, 0xffffffff, 0x0a0000ff };

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
	flen = ts_build_ip(t, frame, proto, id, (uint16_t)((more ? IP_MF : 0) | (off / 8)), p,
			   len);
	ts_inject_frame(t, frame, flen);
}

START_TEST(test_fragments)
{
	static uint8_t big[3000];
	struct ns_stats b = ts_stats(t), s;
	uint8_t *l4 = big + ETH_HLEN + 20, buf[3000];
	struct udp_hdr *u = (void *)l4;
	static const uint8_t protos[] = { NS_PROTO_UDP, NS_PROTO_TCP, NS_PROTO_ICMP, 99 };

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
	ts_inject_frame(t, frame, ts_build_ip(t, frame, NS_PROTO_UDP, 900, IP_MF, buf + 1000,
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
			memcpy(l4 + 8 + 12, &(uint32_t){ htonl(t->local) }, 4);
			memcpy(l4 + 8 + 16, &(uint32_t){ htonl(t->peer) }, 4);
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

/* A TCP header that is cut, lies about its length or has a bad
 * checksum is dropped without an answer (no RST from garbage). */
START_TEST(test_tcp_headers)
{
	struct ns_stats b = ts_stats(t);
	uint8_t *l4 = frame + ETH_HLEN + 20;
	struct tcp_hdr *th = (void *)l4;
	size_t len = tcp_frame(frame, 1234, 80, TH_SYN, NULL, 0, 0);
	unsigned bad = 0;

	for (size_t l = 0; l < 20; l++, bad++)
		ts_inject_frame(t, frame, ts_build_ip(t, frame, NS_PROTO_TCP, 8, 0, l4, l));
	for (uint8_t off = 0; off < 16; off++) {
		if (off == 5)
			continue;
		tcp_frame(frame, 1234, 80, TH_SYN, NULL, 0, 0);
		th->off = (uint8_t)(off << 4);
		th->csum = 0;
		th->csum = (uint16_t)~ts_l4_csum(t->peer, t->local, NS_PROTO_TCP, l4, 20);
		ts_inject_frame(t, frame, len);
		bad++;
	}
	ck_assert_uint_eq(DELTA(tcp_bad, b), bad);
	tcp_frame(frame, 1234, 80, TH_SYN, NULL, 0, 0);
	th->csum ^= 0x8000;
	ts_inject_frame(t, frame, len);
	ck_assert_uint_eq(DELTA(rx_bad_csum, b), 1);
	ck_assert_uint_eq(check_tx_sane(), 0);
	ck_assert_uint_eq(DELTA(tcp_rst_tx, b), 0);
	/* Garbage options on a SYN to a closed port: still just one RST. */
	for (int i = 0; i < 500; i++) {
		uint8_t opts[40];
		size_t ol = (rnd() % 11) * 4;

		for (size_t j = 0; j < ol; j++)
			opts[j] = (uint8_t)(j % 2 ? rnd() % 12 : rnd());
		ts_inject_frame(t, frame, tcp_frame(frame, (uint16_t)(1024 + i), 81,
						    (uint8_t)(rnd() & ~TH_RST), opts, ol,
						    rnd() % 64));
		ck_assert_uint_le(check_tx_sane(), 1);
	}
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
	seedlen[3] = tcp_frame(seeds[3], 999, 80, TH_SYN, (const uint8_t[]){ 2, 4, 5, 180 }, 4,
			       0);
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

/* Garbage options on an otherwise acceptable segment of an established
 * connection, checksummed: random option bytes (bad lengths, unknown
 * kinds, truncated TS/SACK, SACK blocks pointing anywhere). */
static void inject_garbage_opts(uint32_t seq, uint32_t ack, uint8_t flags, size_t plen)
{
	uint8_t *l4 = frame + ETH_HLEN + 20;
	struct tcp_hdr *th = (void *)l4;
	size_t ol = (1 + rnd() % 10) * 4;

	memset(th, 0, sizeof(*th));
	th->sport = htons(t->pport);
	th->dport = htons(t->lport);
	th->seq = htonl(t->piss + seq);
	th->ack = htonl(t->liss + ack);
	th->off = (uint8_t)(((20 + ol) / 4) << 4);
	th->flags = flags;
	th->win = htons(1024);
	for (size_t j = 0; j < ol; j++) {
		static const uint8_t kinds[] = { 0, 1, 2, 3, 4, 5, 8, 30, 254 };

		l4[20 + j] = (uint8_t)(j % 3 == 0 ? kinds[rnd() % 9] : rnd() % 40);
	}
	for (size_t j = 0; j < plen; j++)
		l4[20 + ol + j] = ts_pattern(seq + (uint32_t)j);
	ts_inject_tcp_raw(t, l4, 20 + ol + plen);
}

/* Every combination of the six classic flags, with and without data:
 * to the listener from fresh ports, and to the connection at its exact
 * sequence numbers (RST left out there: an exact RST rightly resets). */
static void flag_sweep(struct ns_sock *s, struct ns_sock *l)
{
	struct ts_conn conn;

	ts_save(t, &conn);
	for (unsigned fl = 0; fl < 64; fl++) {
		for (unsigned withdata = 0; withdata < 2; withdata++) {
			ts_new_conn(t, 80, (uint16_t)(50000 + fl * 2 + withdata));
			t->liss_known = true;
			inject_garbage_opts(0, rnd(), (uint8_t)fl, withdata * 20);
			check_tx_sane();
			TS_STATE(l, NS_TCP_LISTEN);
		}
	}
	ts_restore(t, &conn);
	for (unsigned fl = 0; fl < 64; fl++) {
		if (fl & (TH_RST | TH_SYN | TH_FIN))
			continue; /* SYN: challenge ACK, FIN: would close the stream */
		inject_garbage_opts(1, 1, (uint8_t)fl, 0);
		check_tx_sane();
		TS_STATE(s, NS_TCP_ESTABLISHED);
	}
	ck_assert_uint_le(ts_stats(t).tcp_conns, MAX_CONNS);
}

/* ICMP errors quoting the connection's own segments, random soft codes,
 * time exceeded and fragmentation-needed with any MTU (even absurd). */
static void inject_icmp_about_conn(void)
{
	static const uint8_t codes[] = { ICMP_UNREACH_NET, ICMP_UNREACH_HOST,
					 ICMP_UNREACH_NEEDFRAG, 5, 6, 7, 9, 10, 13 };
	uint8_t msg[8 + 28];
	struct ip_hdr *q = (void *)(msg + 8);

	for (int i = 0; i < 300; i++) {
		uint32_t v;
		uint16_t c;

		memset(msg, 0, sizeof(msg));
		msg[0] = i % 5 ? ICMP_UNREACH : ICMP_TIMXCEED;
		msg[1] = codes[rnd() % sizeof(codes)];
		v = rnd();
		memcpy(msg + 4, &v, 4); /* next-hop MTU and garbage */
		q->vhl = 0x45;
		q->len = htons(40);
		q->ttl = 1;
		q->proto = NS_PROTO_TCP;
		q->src = htonl(t->local);
		q->dst = htonl(t->peer);
		msg[28] = (uint8_t)(t->lport >> 8);
		msg[29] = (uint8_t)t->lport;
		msg[30] = (uint8_t)(t->pport >> 8);
		msg[31] = (uint8_t)t->pport;
		v = htonl(t->liss + 1 + (i & 1 ? 0 : rnd()));
		memcpy(msg + 32, &v, 4);
		c = (uint16_t)~ns_csum_fold(ns_csum_add(0, msg, sizeof(msg)));
		memcpy(msg + 2, &c, 2);
		ts_inject_ip(t, NS_PROTO_ICMP, msg, sizeof(msg));
		check_tx_sane();
	}
}

/* One TCP segment bigger than any MSS and any window: 60 KB in IP
 * fragments, correct checksum, in sequence. */
static void inject_giant_segment(void)
{
	static uint8_t l4[61000];
	size_t len = TS_BUILD(t, l4, sizeof(l4), ". 1:60001(60000) ack 1");
	uint16_t id = 0x6000;

	for (size_t off = 0; off < len; off += 1480) {
		size_t n = len - off < 1480 ? len - off : 1480;
		uint16_t fo = (uint16_t)((off + n < len ? IP_MF : 0) | (off / 8));

		ts_inject_frame(t, frame, ts_build_ip(t, frame, NS_PROTO_TCP, id, fo, l4 + off, n));
		ck_assert_uint_le(ts_stats(t).reass_mem, REASS_MAX);
	}
}

/* A listener and an established connection take truncated, bad-offset,
 * bad-checksum, garbage-option and out-of-window segments; afterwards
 * the connection still carries data both ways, the listener still
 * accepts, connection count and out-of-order memory stay bounded. */
START_TEST(test_tcp_connections)
{
	struct ns_sock *l, *s, *s2;
	struct ts_conn conn;
	struct ns_stats b, st;
	uint8_t *l4 = frame + ETH_HLEN + 20;
	int rcvbuf = 0, nread = 0;

	s = ts_passive_open(t, 80, &l);
	ts_save(t, &conn);
	b = ts_stats(t);
	/* cut and lying headers for the connection's ports */
	for (size_t len = 0; len < 20; len++) {
		tcp_frame(frame, t->pport, 80, TH_ACK, NULL, 0, 0);
		ts_inject_frame(t, frame, ts_build_ip(t, frame, NS_PROTO_TCP, 9, 0, l4, len));
	}
	ck_assert_uint_eq(DELTA(tcp_bad, b), 20);
	ck_assert_uint_eq(check_tx_sane(), 0);
	/* bit flips without fixing the checksum: all caught */
	for (int i = 0; i < 500; i++) {
		size_t len = tcp_frame(frame, t->pport, 80, TH_ACK | TH_PSH, NULL, 0, 64);
		size_t bit = (ETH_HLEN + 20) * 8 + rnd() % ((len - ETH_HLEN - 20) * 8);

		frame[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		ts_inject_frame(t, frame, len);
	}
	/* (a flip in the data offset may fail the header check first) */
	ck_assert_uint_eq(DELTA(rx_bad_csum, b) + DELTA(tcp_bad, b), 20 + 500);
	ck_assert_uint_eq(check_tx_sane(), 0);
	/* garbage options: in-order data (the stream must stay consistent
	 * whatever the stack decides about each segment) ... */
	for (int i = 0; i < 300; i++)
		inject_garbage_opts(1, 1, TH_ACK | TH_PSH, 100);
	/* ... and out of the window, any flags: never accepted */
	for (int i = 0; i < 2000; i++) {
		uint32_t far = 0x80000000u + rnd() % 0x10000000u;

		inject_garbage_opts(1 + far, 1 + rnd(), (uint8_t)(rnd() & 0x3f), rnd() % 100);
		check_tx_sane();
		TS_STATE(s, NS_TCP_ESTABLISHED);
	}
	/* SYN flood with garbage options from random ports: bounded state */
	for (int i = 0; i < 1000; i++) {
		uint8_t opts[40];
		size_t ol = (rnd() % 11) * 4;

		for (size_t j = 0; j < ol; j++)
			opts[j] = (uint8_t)rnd();
		ts_inject_frame(t, frame,
				tcp_frame(frame, (uint16_t)(20000 + i), 80, TH_SYN, opts, ol, 0));
		st = ts_stats(t);
		ck_assert_uint_le(st.tcp_conns, MAX_CONNS);
		check_tx_sane();
	}
	ck_assert_uint_gt(DELTA(tcp_syn_drop, b), 0);
	ts_restore(t, &conn);
	flag_sweep(s, l);
	inject_icmp_about_conn();
	TS_STATE(s, NS_TCP_ESTABLISHED);
	inject_giant_segment();
	check_tx_sane();
	TS_STATE(s, NS_TCP_ESTABLISHED);
	ck_assert_int_eq(ns_getsockopt(s, NS_SO_NREAD, &nread), 0);
	ck_assert_int_eq(nread, 60000);
	/* out-of-order pieces everywhere in the window: memory bounded */
	ck_assert_int_eq(ns_getsockopt(s, NS_SO_RCVBUF, &rcvbuf), 0);
	for (int i = 0; i < 3000; i++) {
		uint32_t off = 2 + rnd() % (uint32_t)rcvbuf;

		TS_IN(t, ". %u:%u(%u) ack 1", off, off + 50, 50);
		ck_assert_uint_le(ts_stats(t).ooo_mem, (size_t)rcvbuf);
	}
	check_tx_sane();
	/* the connection still works: fill the stream, read it, answer */
	for (uint32_t seq = 1; seq < 20001; seq += 1000)
		TS_IN(t, ". %u:%u(1000) ack 1", seq, seq + 1000);
	TS_RECV(t, s, 1, 20000);
	check_tx_sane();
	ck_assert_int_eq(ts_send(t, s, 100), 100);
	TS_OUT(t, "P. 1:101(100) ack *");
	TS_STATE(s, NS_TCP_ESTABLISHED);
	ns_close(s);
	check_tx_sane();
	/* and the listener still accepts */
	ts_wait(t, 120000); /* half-open flood entries time out */
	check_tx_sane();
	ts_new_conn(t, 80, 30001);
	TS_IN(t, "S 0:0(0) win 65535 <mss 1460>");
	TS_OUT(t, "S. 0:0(0) ack 1 <mss 1460>");
	TS_IN(t, ". 1:1(0) ack 1");
	s2 = ts_accept(t, l);
	TS_IN(t, "P. 1:11(10) ack 1");
	TS_RECV(t, s2, 1, 10);
	ns_close(s2);
	ns_close(l);
	assert_alive();
}
END_TEST

/* Thousands of checksummed segments of random length at random places
 * around the receive window (left of it, inside, past the right edge),
 * random PSH/URG, sometimes timestamps with random values and random SACK
 * blocks, while the application reads at random. All payload bytes are
 * the stream's own bytes for their sequence numbers, so whatever the stack
 * keeps must read back exactly; memory stays within the buffer. */
START_TEST(test_tcp_inwindow_storm)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);
	uint32_t acked = 1, rd = 1;
	int rcvbuf = 0;
	static uint8_t buf[4096];

	t->auto_ts = false;
	ck_assert_int_eq(ns_getsockopt(s, NS_SO_RCVBUF, &rcvbuf), 0);
	for (int i = 0; i < 20000; i++) {
		uint32_t seq = acked + rnd() % ((uint32_t)rcvbuf + 3000) - 1500;
		uint32_t len = rnd() % 1449;
		const char *fl = rnd() % 4 ? "." : "P.";
		struct ts_frame *f;

		if (rnd() % 3 == 0)
			TS_IN(t, "%s %u:%u(%u) ack 1 <nop,nop,TS val %u ecr *>", fl, seq, seq + len,
			      len, rnd());
		else if (rnd() % 5 == 0)
			TS_IN(t, "%s %u:%u(%u) ack 1 <nop,nop,sack %u:%u>", fl, seq, seq + len, len,
			      rnd() % 5000, 5000 + rnd() % 5000);
		else
			TS_IN(t, "%s %u:%u(%u) ack 1 <>", fl, seq, seq + len, len);
		while ((f = ts_pop(t))) {
			struct ts_seg g;
			char why[128];

			ck_assert_msg(ts_decode(t, f->data, f->len, &g, why, sizeof(why)), "%s", why);
			free(f);
			if ((g.flags & TH_ACK) && g.ack > acked && g.ack - acked < 0x40000000u)
				acked = g.ack;
		}
		if (rnd() % 10 == 0) {
			ssize_t n = ns_recv(s, buf, rnd() % sizeof(buf) + 1, 0);
			ssize_t bad = n;

			for (ssize_t j = 0; j < n && bad == n; j++)
				if (buf[j] != ts_pattern(rd + (uint32_t)j))
					bad = j;
			ck_assert_msg(bad == n, "byte at seq %u wrong", rd + (uint32_t)bad);
			if (n > 0)
				rd += (uint32_t)n;
		}
		ck_assert_uint_le(ts_stats(t).ooo_mem, (size_t)rcvbuf);
	}
	TS_STATE(s, NS_TCP_ESTABLISHED);
	ck_assert_uint_gt(acked, 1000);
	/* the rest of the stream in order, then everything reads back */
	for (uint32_t seq = rd; seq < acked + (uint32_t)rcvbuf / 2; seq += 1000) {
		ssize_t n;

		TS_IN(t, ". %u:%u(1000) ack 1 <>", seq, seq + 1000);
		while ((n = ns_recv(s, buf, sizeof(buf), 0)) > 0) {
			for (uint32_t j = 0; j < (uint32_t)n; j++)
				if (buf[j] != ts_pattern(rd + j))
					ck_abort_msg("byte at seq %u wrong", rd + j);
			rd += (uint32_t)n;
		}
		ck_assert_int_eq(n, -EAGAIN);
	}
	ck_assert_uint_gt(rd, acked);
	check_tx_sane();
	ns_close(s);
}
END_TEST

/* The sending side under a storm of ACKs: random cumulative ACKs (old,
 * current, ahead of what was sent), random windows (zero included), random
 * SACK blocks (sensible and absurd), duplicates. Every segment sent must
 * stay inside the largest right window edge offered and carry the right
 * bytes; then plain ACKs must drain everything. */
START_TEST(test_tcp_sender_storm)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);
	uint32_t una = 1, high = 1, edge = 1 + (1024u << 7), total = 0;
	int unacked = -1;

	t->auto_ts = false;
	for (int i = 0; i < 5000; i++) {
		struct ts_frame *f;
		uint32_t ack, win = rnd() % 8 ? rnd() % 2048 : 0;

		while (total < 4u << 20) {
			ssize_t n = ts_send(t, s, 65536);

			if (n <= 0)
				break;
			total += (uint32_t)n;
		}
		while ((f = ts_pop(t))) {
			struct ts_seg g;
			char why[128];

			ck_assert_msg(ts_decode(t, f->data, f->len, &g, why, sizeof(why)), "%s", why);
			for (uint32_t j = 0; j < g.len; j++)
				if (g.payload[j] != ts_pattern(g.seq + j))
					ck_abort_msg("sent a wrong byte at seq %u", g.seq + j);
			free(f);
			ck_assert_msg(g.seq + g.len <= edge + 1, "sent %u:%u past the edge %u", g.seq,
				      g.seq + g.len, edge);
			if (g.seq + g.len > high)
				high = g.seq + g.len;
		}
		switch (rnd() % 4) {
		case 0: /* old */
			ack = una - rnd() % 3000;
			break;
		case 1: /* ahead of what was sent */
			ack = high + 1 + rnd() % 100000;
			break;
		default:
			ack = una + rnd() % (high - una + 1);
		}
		if (rnd() % 3)
			TS_IN(t, ". 1:1(0) ack %u win %u <>", ack, win);
		else
			TS_IN(t, ". 1:1(0) ack %u win %u <nop,nop,sack %u:%u %u:%u>", ack, win,
			      una + rnd() % 100000, una + rnd() % 200000, rnd(), rnd());
		if (ack > una && ack <= high) {
			una = ack;
			if (una + (win << 7) > edge)
				edge = una + (win << 7);
		} else if (ack == una && una + (win << 7) > edge) {
			edge = una + (win << 7);
		}
		if (rnd() % 50 == 0)
			ts_wait(t, rnd() % 3000);
	}
	TS_STATE(s, NS_TCP_ESTABLISHED);
	/* calm: a big window and honest ACKs until all is acknowledged */
	for (int i = 0; i < 100000 && unacked != 0; i++) {
		struct ts_frame *f;

		while (total < 4u << 20) {
			ssize_t n = ts_send(t, s, 65536);

			if (n <= 0)
				break;
			total += (uint32_t)n;
		}
		if (!t->qhead)
			ts_run_until_output(t, ns_clock_now(t->clk) + 120 * 1000000ull);
		while ((f = ts_pop(t))) {
			struct ts_seg g;
			char why[128];

			ck_assert_msg(ts_decode(t, f->data, f->len, &g, why, sizeof(why)), "%s", why);
			free(f);
			if (g.seq + g.len > high)
				high = g.seq + g.len;
		}
		TS_IN(t, ". 1:1(0) ack %u win 1024 <>", high);
		ck_assert_int_eq(ns_getsockopt(s, NS_SO_NWRITE, &unacked), 0);
	}
	ck_assert_int_eq(unacked, 0);
	ck_assert_uint_eq(high, total + 1);
	ns_close(s);
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
	{ NULL }, /* none right now */
};

static const struct ts_case cases[] = {
	TS_CASE_V4(test_ethernet),
	TS_CASE_V4(test_arp),
	TS_CASE_V4(test_ip_header),
	TS_CASE_V4(test_fragments),
	TS_CASE_V4(test_icmp),
	TS_CASE_V4(test_udp),
	TS_CASE_V4(test_tcp_headers),
	TS_CASE_V4(test_random_and_bitflips),
	TS_CASE_V4(test_tcp_connections),
	TS_CASE_V4(test_tcp_inwindow_storm),
	TS_CASE(test_tcp_sender_storm),
	TS_CASE_V4(test_own_source_address_dropped),
};

TS_MAIN("netstack_fuzz", cases, pending_cases, setup, teardown, 30)
