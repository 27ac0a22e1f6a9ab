/* test_basic.c — two stacks over an in-memory pair on virtual time: ARP,
 * ICMP echo, UDP, fragmentation/reassembly, the channel tree, checksums,
 * TCP refusal and random-frame robustness. */
#include <check.h>
#include <stdlib.h>

#include "netstack/internal.h"

static struct ns_clock *clk;
static struct ns_link *la, *lb;
static struct ns_stack *sa, *sb;
static uint32_t A, B;

static void setup(void)
{
	struct ns_stack_cfg cfg = { 0 };

	clk = ns_clock_virtual_new(1000000);
	cfg.clock = clk;
	cfg.seed = 42;
	ck_assert_int_eq(ns_link_pair(1500, 0, &la, &lb), 0);
	sa = ns_stack_new(&cfg);
	sb = ns_stack_new(&cfg);
	ns_parse_addr("10.0.0.1", &A);
	ns_parse_addr("10.0.0.2", &B);
	ck_assert_int_eq(ns_iface_add(sa, la, A, 24, 0), 0);
	ck_assert_int_eq(ns_iface_add(sb, lb, B, 24, 0), 0);
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
	for (int i = 0; i < 100; i++)
		if (ns_stack_drain(sa, 1000) + ns_stack_drain(sb, 1000) == 0)
			break;
}

START_TEST(test_checksum)
{
	/* RFC 1071 example bytes. */
	const uint8_t d[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	uint8_t big[101];

	ck_assert_uint_eq(ntohs(ns_csum_fold(ns_csum_add(0, d, sizeof(d)))), 0xddf2);
	for (int i = 0; i < 101; i++)
		big[i] = (uint8_t)(i * 7 + 3);
	/* Split at even offsets gives the same sum as one pass. */
	ck_assert_uint_eq(ns_csum_fold(ns_csum_add(ns_csum_add(0, big, 40), big + 40, 61)),
			  ns_csum_fold(ns_csum_add(0, big, 101)));
}
END_TEST

START_TEST(test_ping)
{
	uint8_t msg[64] = { ICMP_ECHO, 0, 0, 0, 0x12, 0x34, 0, 1 }, buf[128];
	struct ns_sockaddr loc = { .addr = 0, .port = 0x1234 };
	struct ns_pktinfo info = { 0 };
	struct ns_chan *ch;
	uint8_t mac[6];
	int err;

	ch = ns_chan_create(sa, NS_PROTO_ICMP, &loc, NULL, &err);
	ck_assert_ptr_nonnull(ch);
	info.dst.addr = B;
	ck_assert_int_eq(ns_chan_sendto(ch, msg, sizeof(msg), &info), 64);
	pump();
	ck_assert_int_eq(ns_arp_lookup(sa, B, mac), 0);
	ck_assert_int_eq(memcmp(mac, lb->mac, 6), 0);
	ck_assert_int_eq(ns_chan_recv_nb(ch, buf, sizeof(buf), &info), 64);
	ck_assert_uint_eq(info.icmp_type, ICMP_ECHOREPLY);
	ck_assert_uint_eq(info.src.addr, B);
	ck_assert_int_eq(ns_chan_recv_nb(ch, buf, sizeof(buf), &info), -EAGAIN);
	ns_chan_close(ch);
}
END_TEST

START_TEST(test_udp_roundtrip_and_frag)
{
	struct ns_sockaddr srv = { .addr = B, .port = 7777 }, from;
	struct ns_sock *c, *s;
	static uint8_t out[5000], in[6000];
	int err;

	s = ns_socket(sb, NS_SOCK_DGRAM, &err);
	c = ns_socket(sa, NS_SOCK_DGRAM, &err);
	ck_assert_int_eq(ns_bind(s, &srv), 0);
	ck_assert_int_eq(ns_setsockopt(s, NS_SO_NONBLOCK, 1), 0);
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(i * 13);
	for (size_t len = 1; len <= sizeof(out); len = len * 3 + 1) {
		ck_assert_int_eq(ns_sendto(c, out, len, 0, &srv), (ssize_t)len);
		pump();
		ck_assert_int_eq(ns_recvfrom(s, in, sizeof(in), 0, &from), (ssize_t)len);
		ck_assert_int_eq(memcmp(in, out, len), 0);
		ck_assert_uint_eq(from.addr, A);
		/* echo back */
		ck_assert_int_eq(ns_sendto(s, in, len, 0, &from), (ssize_t)len);
		pump();
		ck_assert_int_eq(ns_recv(c, in, sizeof(in), NS_MSG_DONTWAIT), (ssize_t)len);
		ck_assert_int_eq(memcmp(in, out, len), 0);
	}
	struct ns_stats stb;

	ns_stack_stats(sb, &stb);
	ck_assert_uint_gt(stb.ip_reass_ok, 0);
	ck_assert_uint_eq(stb.reass_mem, 0);
	ns_close(c);
	ns_close(s);
}
END_TEST

START_TEST(test_udp_closed_port_icmp)
{
	struct ns_sockaddr dst = { .addr = B, .port = 9 }, icmpl = { .addr = 0, .port = 0 };
	struct ns_chan *catchall;
	struct ns_sock *c;
	struct ns_pktinfo info;
	uint8_t buf[256];
	int err;

	/* A catch-all ICMP channel on A sees B's port unreachable? No:
	 * errors go to the protocols; check B counted and sent it. */
	catchall = ns_chan_create(sa, NS_PROTO_ICMP, &icmpl, NULL, &err);
	c = ns_socket(sa, NS_SOCK_DGRAM, &err);
	ck_assert_int_eq(ns_sendto(c, "x", 1, 0, &dst), 1);
	pump();
	struct ns_stats stb;

	ns_stack_stats(sb, &stb);
	ck_assert_uint_eq(stb.udp_no_port, 1);
	ck_assert_uint_eq(stb.icmp_tx, 1);
	ck_assert_int_eq(ns_chan_recv_nb(catchall, buf, sizeof(buf), &info), -EAGAIN);
	ns_close(c);
	ns_chan_close(catchall);
}
END_TEST

START_TEST(test_chan_tree)
{
	struct ns_chan *chs[500];
	struct ns_sockaddr l, r;
	int err;

	stack_enter(sa);
	ck_assert_int_eq(chan_tree_check(sa), 0);
	stack_leave(sa);
	for (int i = 0; i < 500; i++) {
		l = (struct ns_sockaddr){ .addr = A, .port = (uint16_t)(1000 + (i * 37) % 500) };
		r = (struct ns_sockaddr){ .addr = B, .port = (uint16_t)(i % 7) };
		chs[i] = ns_chan_create(sa, NS_PROTO_UDP, &l, i % 3 ? &r : NULL, &err);
		ck_assert_ptr_nonnull(chs[i]);
	}
	l = (struct ns_sockaddr){ .addr = A, .port = 1000 };
	ck_assert_ptr_null(ns_chan_create(sa, NS_PROTO_UDP, &l, NULL, &err));
	ck_assert_int_eq(err, -EADDRINUSE);
	stack_enter(sa);
	ck_assert_int_gt(chan_tree_check(sa), 0);
	ck_assert_int_le(chan_tree_check(sa), 12); /* AVL: <= 1.44 log2(n) */
	/* exact beats wildcard; wildcard found for unknown remote */
	struct ipaddr a4 = ipa_v4(A), b4 = ipa_v4(B);
	struct ns_chan *f = chan_lookup(sa, NS_PROTO_UDP, &a4, chs[1]->key.lport, &b4, 1);
	ck_assert_ptr_eq(f, chs[1]);
	stack_leave(sa);
	for (int i = 0; i < 500; i += 2)
		ns_chan_close(chs[i]);
	stack_enter(sa);
	ck_assert_int_gt(chan_tree_check(sa), 0);
	stack_leave(sa);
	for (int i = 1; i < 500; i += 2)
		ns_chan_close(chs[i]);
	stack_enter(sa);
	ck_assert_int_eq(chan_tree_check(sa), 0);
	stack_leave(sa);
}
END_TEST

START_TEST(test_tcp_syn_gets_rst)
{
	/* Until TCP lands every SYN is refused with RST|ACK (RFC 9293). */
	uint8_t f[ETH_HLEN + 40] = { 0 };
	struct ip_hdr *ih = (void *)(f + ETH_HLEN);
	struct tcp_hdr *th = (void *)(f + ETH_HLEN + 20);
	uint8_t mac[6];
	struct ns_stats s;

	memcpy(f, lb->mac, 6);
	memcpy(f + 6, la->mac, 6);
	f[12] = 8;
	ih->vhl = 0x45;
	ih->len = htons(40);
	ih->ttl = 64;
	ih->proto = 6;
	ih->src = htonl(A);
	ih->dst = htonl(B);
	ih->csum = (uint16_t)~ns_csum_fold(ns_csum_add(0, ih, 20));
	th->sport = htons(1234);
	th->dport = htons(80);
	th->seq = htonl(100);
	th->off = 5 << 4;
	th->flags = TH_SYN;
	th->csum = (uint16_t)~ip_pseudo_csum_fold(ih->src, ih->dst, 6, th, 20);
	ns_arp_add_static(sb, A, la->mac);
	ns_stack_input(sb, lb, f, sizeof(f));
	ns_stack_stats(sb, &s);
	ck_assert_uint_eq(s.tcp_rst_tx, 1);
	(void)mac;
}
END_TEST

START_TEST(test_random_frames)
{
	static uint8_t f[2000];
	struct ns_stats s;
	uint64_t x = 12345;

	for (int i = 0; i < 20000; i++) {
		size_t len = (x = x * 6364136223846793005ull + 1) >> 53;

		for (size_t j = 0; j < len && j < sizeof(f); j++)
			f[j] = (uint8_t)((x = x * 6364136223846793005ull + 1) >> 56);
		memcpy(f, lb->mac, 6);
		if (i & 1) { /* plausible IPv4 with random rest, fragments included */
			f[12] = 8;
			f[13] = 0;
			f[14] = 0x45;
			f[16] = (uint8_t)(len >> 8);
			f[17] = (uint8_t)len;
		}
		ns_stack_input(sb, lb, f, len > sizeof(f) ? sizeof(f) : len);
	}
	ns_stack_stats(sb, &s);
	ck_assert_uint_eq(s.rx_frames, 20000);
	ck_assert_uint_le(s.reass_mem, 1u << 20);
}
END_TEST

START_TEST(test_impair_loss_dup_delay)
{
	struct ns_impair_cfg cfg = { .loss_bp = 1000, .dup_bp = 1000, .delay_us = 5000,
				     .seed = 7 };
	struct ns_link *x, *y, *ix;
	struct ns_impair_stats s;
	uint8_t f[60] = { 0 }, buf[100];
	int got = 0;

	ck_assert_int_eq(ns_link_pair(1500, 0, &x, &y), 0);
	ix = ns_link_impair(x, clk, &cfg);
	for (int i = 0; i < 1000; i++)
		ns_link_transmit(ix, f, sizeof(f));
	/* nothing arrives before the delay */
	ck_assert_int_eq(ns_link_receive(y, buf, sizeof(buf)), 0);
	ns_clock_advance(clk, 5000);
	ck_assert_uint_eq(ix->ops->poll(ix, 0), UINT64_MAX);
	while (ns_link_receive(y, buf, sizeof(buf)) > 0)
		got++;
	ns_link_impair_stats(ix, &s);
	ck_assert_uint_gt(s.dropped, 50);
	ck_assert_uint_lt(s.dropped, 150);
	ck_assert_uint_gt(s.duplicated, 50);
	ck_assert_int_eq(got, 1000 - (int)s.dropped + (int)s.duplicated);
	ns_link_destroy(ix);
	ns_link_destroy(y);
}
END_TEST

/* One IPv4 fragment of a UDP datagram from A to B, id 77. */
static void send_frag(const uint8_t *payload, unsigned off, unsigned len, bool more)
{
	uint8_t f[ETH_HLEN + 20 + 1500] = { 0 };
	struct ip_hdr *ih = (void *)(f + ETH_HLEN);

	memcpy(f, lb->mac, 6);
	memcpy(f + 6, la->mac, 6);
	f[12] = 8;
	ih->vhl = 0x45;
	ih->len = htons((uint16_t)(20 + len));
	ih->id = htons(77);
	ih->off = htons((uint16_t)((more ? IP_MF : 0) | (off / 8)));
	ih->ttl = 64;
	ih->proto = NS_PROTO_UDP;
	ih->src = htonl(A);
	ih->dst = htonl(B);
	ih->csum = (uint16_t)~ns_csum_fold(ns_csum_add(0, ih, 20));
	memcpy(f + ETH_HLEN + 20, payload + off, len);
	ns_stack_input(sb, lb, f, ETH_HLEN + 20 + len);
}

static void udp_dgram(uint8_t *d, size_t len, uint16_t dport)
{
	struct udp_hdr *u = (void *)d;

	for (size_t i = 8; i < len; i++)
		d[i] = (uint8_t)i;
	u->sport = htons(5555);
	u->dport = htons(dport);
	u->len = htons((uint16_t)len);
	u->csum = 0;
	u->csum = (uint16_t)~ip_pseudo_csum_fold(htonl(A), htonl(B), NS_PROTO_UDP, d, len);
}

START_TEST(test_reassembly_rules)
{
	static uint8_t d[3000], in[3000];
	struct ns_sockaddr srv = { .addr = B, .port = 4444 };
	struct ns_stats s;
	struct ns_sock *so;
	int err;

	so = ns_socket(sb, NS_SOCK_DGRAM, &err);
	ck_assert_int_eq(ns_bind(so, &srv), 0);
	udp_dgram(d, sizeof(d), 4444);
	/* out of order: last, first, middle -> one datagram */
	send_frag(d, 2000, 1000, false);
	send_frag(d, 0, 1000, true);
	ck_assert_int_eq(ns_recv(so, in, sizeof(in), NS_MSG_DONTWAIT), -EAGAIN);
	send_frag(d, 1000, 1000, true);
	ck_assert_int_eq(ns_recv(so, in, sizeof(in), NS_MSG_DONTWAIT), 3000 - 8);
	ck_assert_int_eq(memcmp(in, d + 8, 3000 - 8), 0);
	/* overlap: the whole datagram is discarded, even when "completed" */
	send_frag(d, 0, 1008, true);
	send_frag(d, 1000, 1000, true);
	send_frag(d, 2000, 1000, false);
	ck_assert_int_eq(ns_recv(so, in, sizeof(in), NS_MSG_DONTWAIT), -EAGAIN);
	/* a lone fragment times out and its memory is released */
	send_frag(d, 0, 1000, true);
	ns_stack_stats(sb, &s);
	ck_assert_uint_gt(s.reass_mem, 1000);
	ns_clock_advance(clk, 31 * 1000000ull);
	ns_stack_poll(sb);
	ns_stack_stats(sb, &s);
	ck_assert_uint_eq(s.reass_mem, 0);
	/* memory bound: thousands of distinct partial datagrams stay bounded */
	for (int i = 0; i < 3000; i++) {
		uint8_t f[ETH_HLEN + 20 + 1000] = { 0 };
		struct ip_hdr *ih = (void *)(f + ETH_HLEN);

		memcpy(f, lb->mac, 6);
		f[12] = 8;
		ih->vhl = 0x45;
		ih->len = htons(1020);
		ih->id = htons((uint16_t)i);
		ih->off = htons(IP_MF);
		ih->ttl = 64;
		ih->proto = NS_PROTO_UDP;
		ih->src = htonl(A);
		ih->dst = htonl(B);
		ih->csum = (uint16_t)~ns_csum_fold(ns_csum_add(0, ih, 20));
		ns_stack_input(sb, lb, f, sizeof(f));
		ns_stack_stats(sb, &s);
		ck_assert_uint_le(s.reass_mem, 1u << 20);
	}
	ck_assert_uint_gt(s.ip_reass_drop, 2000);
	ns_close(so);
}
END_TEST

START_TEST(test_accept_any_udp_nat)
{
	/* usernet's shape: B accepts datagrams to any address; a catch-all
	 * channel sees the original destination and answers as that address. */
	struct ns_link *x, *y;
	struct ns_stack *g, *n;
	struct ns_stack_cfg cfg = { .clock = clk, .seed = 1 };
	struct ns_sockaddr any = { .addr = 0, .port = 0 }, far = { .addr = 0x08080808, .port = 53 }, from;
	struct ns_pktinfo info;
	struct ns_chan *nat;
	struct ns_sock *c;
	uint32_t G, N;
	uint8_t buf[64];
	int err;

	ns_parse_addr("10.0.2.15", &G);
	ns_parse_addr("10.0.2.2", &N);
	ck_assert_int_eq(ns_link_pair(1500, 0, &x, &y), 0);
	g = ns_stack_new(&cfg);
	n = ns_stack_new(&cfg);
	ns_iface_add(g, x, G, 24, 0);
	ns_route_add(g, 0, 0, N, NULL);
	ns_iface_add(n, y, N, 24, NS_IF_ACCEPT_ANY);
	nat = ns_chan_create(n, NS_PROTO_UDP, &any, NULL, &err);
	ck_assert_ptr_nonnull(nat);
	c = ns_socket(g, NS_SOCK_DGRAM, &err);
	ck_assert_int_eq(ns_sendto(c, "query", 5, 0, &far), 5);
	for (int i = 0; i < 10; i++)
		ns_stack_drain(g, 100), ns_stack_drain(n, 100);
	ck_assert_int_eq(ns_chan_recv_nb(nat, buf, sizeof(buf), &info), 5);
	ck_assert_uint_eq(info.dst.addr, far.addr);
	ck_assert_uint_eq(info.dst.port, 53);
	ck_assert_uint_eq(info.src.addr, G);
	struct ns_pktinfo back = { .src = info.dst, .dst = info.src };

	ck_assert_int_eq(ns_chan_sendto(nat, "answer", 6, &back), 6);
	for (int i = 0; i < 10; i++)
		ns_stack_drain(g, 100), ns_stack_drain(n, 100);
	ck_assert_int_eq(ns_recvfrom(c, buf, sizeof(buf), NS_MSG_DONTWAIT, &from), 6);
	ck_assert_uint_eq(from.addr, far.addr);
	ck_assert_uint_eq(from.port, 53);
	ns_close(c);
	ns_chan_close(nat);
	ns_stack_free(g);
	ns_stack_free(n);
	ns_link_destroy(x);
	ns_link_destroy(y);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("netstack_basic");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_checksum);
	tcase_add_test(tc, test_ping);
	tcase_add_test(tc, test_udp_roundtrip_and_frag);
	tcase_add_test(tc, test_udp_closed_port_icmp);
	tcase_add_test(tc, test_chan_tree);
	tcase_add_test(tc, test_tcp_syn_gets_rst);
	tcase_add_test(tc, test_random_frames);
	tcase_add_test(tc, test_impair_loss_dup_delay);
	tcase_add_test(tc, test_reassembly_rules);
	tcase_add_test(tc, test_accept_any_udp_nat);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
