/* fuzz_fixture.c — the fixture of the malformed-input suites (fuzz.h):
 * one stack behind the script harness with a UDP channel, builders of
 * valid frames of each layer to mangle, and the invariants every test
 * checks (nothing malformed sent back, a real exchange still works).
 * Separate so netstack_fuzz and netstack_fuzz_tcp share one copy. */
#include <check.h>
#include <stdlib.h>

#include "netstack/internal.h"
#include "tests/unit/netstack/fuzz.h"

struct tscript *t;
struct ns_chan *udp;
uint8_t frame[NS_FRAME_BUF];

static uint64_t rng;

uint32_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)((z ^ (z >> 31)) >> 16);
}

void fuzz_setup(void)
{
	struct ts_cfg cfg = {.stack = {.reass_mem_max = REASS_MAX, .tcp_max_conns = MAX_CONNS}};
	struct ns_sockaddr l;
	int err;

	rng = 0xf0220;
	t = ts_new(&cfg);
	l = (struct ns_sockaddr){.addr = t->local, .port = UDP_PORT};
	udp = ns_chan_create(t->st, NS_PROTO_UDP, &l, NULL, &err);
	ck_assert_ptr_nonnull(udp);
	ns_chan_set_queue_max(udp, CHAN_QMAX);
}

void fuzz_teardown(void)
{
	ns_chan_close(udp);
	ts_free(t);
}

/* UDP peer:5555 -> stack:dport with plen payload bytes, checksummed. */
size_t udp_frame(uint8_t *f, uint16_t dport, size_t plen, uint8_t fill)
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

size_t icmp_echo_frame(uint8_t *f, size_t plen)
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

size_t arp_request_frame(uint8_t *f)
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
size_t tcp_frame(uint8_t *f, uint16_t sport, uint16_t dport, uint8_t flags, const uint8_t *opts,
		 size_t optlen, size_t plen)
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
void ip_fix_csum(uint8_t *f)
{
	struct ip_hdr *ih = (void *)(f + ETH_HLEN);
	size_t hl = (ih->vhl & 15u) * 4;

	ih->csum = 0;
	ih->csum = (uint16_t)~ns_csum_fold(ns_csum_add(0, ih, hl < 20 ? 20 : hl));
}

/* Everything the stack sent is a well-formed frame from its own MAC
 * (garbage in must never produce garbage out); returns the count. */
unsigned check_tx_sane(void)
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
void udp_roundtrip(void)
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
	info = (struct ns_pktinfo){.dst = {t->peer, 5555}};
	ck_assert_int_eq(ns_chan_sendto(udp, "pong", 4, &info), 4);
	f = ts_pop(t);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->len, ETH_HLEN + 20 + 8 + 4);
	ck_assert_int_eq(memcmp(f->data + ETH_HLEN + 28, "pong", 4), 0);
	free(f);
}

/* An echo request is answered with the same payload. */
void ping_ok(size_t plen)
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

void assert_alive(void)
{
	struct ns_stats s = ts_stats(t);

	ck_assert_uint_le(s.reass_mem, REASS_MAX);
	udp_roundtrip();
	ping_ok(56);
}
