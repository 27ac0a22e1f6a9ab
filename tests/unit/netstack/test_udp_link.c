/* test_udp_link.c — UDP to and from hosts without an address: a channel
 * receives datagrams from 0.0.0.0 (a DHCP DISCOVER), and
 * ns_chan_sendto_link() sends to a given MAC or the Ethernet broadcast
 * without routes or ARP. One stack on one end of an in-memory pair; the
 * test plays the other end with raw frames. */
#include <check.h>
#include <stdlib.h>

#include "netstack/internal.h"
#include "tests/unit/check_run.h"

#define SERVER_PORT 67
#define CLIENT_PORT 68

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t client_mac[6] = {0x02, 0xc1, 0x1e, 0x47, 0x00, 0x05};

static struct ns_clock *clk;
static struct ns_link *ls, *lw; /* the stack's end, the wire (test) end */
static struct ns_stack *st;
static struct ns_chan *ch;
static uint32_t S, CLIENT;

static void setup_mtu(unsigned mtu)
{
	struct ns_stack_cfg cfg = {0};
	struct ns_sockaddr local = { .addr = 0, .port = SERVER_PORT };
	int err;

	clk = ns_clock_virtual_new(1000000);
	cfg.clock = clk;
	cfg.seed = 7;
	ck_assert_int_eq(ns_link_pair(mtu, 0, &ls, &lw), 0);
	st = ns_stack_new(&cfg);
	ns_parse_addr("10.0.2.2", &S);
	ns_parse_addr("10.0.2.15", &CLIENT);
	ck_assert_int_eq(ns_iface_add(st, ls, S, 24, 0), 0);
	ch = ns_chan_create(st, NS_PROTO_UDP, &local, NULL, &err);
	ck_assert_ptr_nonnull(ch);
}

static void setup(void)
{
	setup_mtu(1500);
}

static void teardown(void)
{
	ns_chan_close(ch);
	ns_stack_free(st);
	ns_link_destroy(ls);
	ns_link_destroy(lw);
	ns_clock_free(clk);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A UDP frame from the client's MAC, checksummed; returns its length. */
static size_t client_frame(uint8_t *f, const uint8_t dmac[6], uint32_t src, uint32_t dst,
			   const void *data, size_t len)
{
	uint8_t *ip = f + ETH_HLEN, *udp = ip + 20;
	uint32_t s = htonl(src), d = htonl(dst);
	uint16_t c;

	memcpy(f, dmac, 6);
	memcpy(f + 6, client_mac, 6);
	put16(f + 12, ETHERTYPE_IP);
	memset(ip, 0, 20);
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(28 + len));
	ip[8] = 64;
	ip[9] = NS_PROTO_UDP;
	memcpy(ip + 12, &s, 4);
	memcpy(ip + 16, &d, 4);
	c = (uint16_t)~ns_csum_fold(ns_csum_add(0, ip, 20));
	memcpy(ip + 10, &c, 2);
	put16(udp, CLIENT_PORT);
	put16(udp + 2, SERVER_PORT);
	put16(udp + 4, (uint16_t)(8 + len));
	memset(udp + 6, 0, 2);
	memcpy(udp + 8, data, len);
	c = (uint16_t)~ip_pseudo_csum_fold(s, d, NS_PROTO_UDP, udp, 8 + len);
	memcpy(udp + 6, &c, 2);
	return ETH_HLEN + 28 + len;
}

/* The next frame the stack sent, or 0 when none. */
static size_t wire_frame(uint8_t *f, size_t cap)
{
	ssize_t n = ns_link_receive(lw, f, cap);

	ck_assert_int_ge(n, 0);
	return (size_t)n;
}

/* Check that f is a valid IPv4 UDP datagram 67 -> 68 from S to dst_ip
 * with Ethernet destination dmac; returns the UDP payload length. */
static size_t check_reply(const uint8_t *f, size_t n, const uint8_t dmac[6], uint32_t dst_ip)
{
	const uint8_t *ip = f + ETH_HLEN, *udp = ip + 20;

	ck_assert_uint_ge(n, ETH_HLEN + 28);
	ck_assert_mem_eq(f, dmac, 6);
	ck_assert_mem_eq(f + 6, ls->mac, 6);
	ck_assert_uint_eq(get16(f + 12), ETHERTYPE_IP);
	ck_assert_uint_eq(ip[9], NS_PROTO_UDP);
	ck_assert_uint_eq(ns_csum_fold(ns_csum_add(0, ip, 20)), 0xffff);
	ck_assert_uint_eq(get32(ip + 12), S);
	ck_assert_uint_eq(get32(ip + 16), dst_ip);
	ck_assert_uint_eq(get16(udp), SERVER_PORT);
	ck_assert_uint_eq(get16(udp + 2), CLIENT_PORT);
	ck_assert_uint_eq(
		ip_pseudo_csum_fold(htonl(S), htonl(dst_ip), NS_PROTO_UDP, udp, get16(udp + 4)),
		0xffff);
	return get16(udp + 4) - 8u;
}

START_TEST(test_receive_from_unaddressed_host)
{
	uint8_t f[600], msg[300], buf[400];
	struct ns_pktinfo info;

	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 13);
	ns_stack_input(st, ls, f, client_frame(f, bcast, 0, 0xffffffffu, msg, sizeof(msg)));
	ck_assert_int_eq(ns_chan_recv_nb(ch, buf, sizeof(buf), &info), (ssize_t)sizeof(msg));
	ck_assert_mem_eq(buf, msg, sizeof(msg));
	ck_assert_uint_eq(info.src.addr, 0);
	ck_assert_uint_eq(info.src.port, CLIENT_PORT);
	ck_assert_uint_eq(info.dst.addr, 0xffffffffu);
	ck_assert_uint_eq(info.dst.port, SERVER_PORT);
	/* A client that has its address (renewal) reaches the same channel. */
	ns_stack_input(st, ls, f, client_frame(f, ls->mac, CLIENT, S, msg, 10));
	ck_assert_int_eq(ns_chan_recv_nb(ch, buf, sizeof(buf), &info), 10);
	ck_assert_uint_eq(info.src.addr, CLIENT);
	/* Neither made the stack answer (no ICMP, no ARP). */
	ck_assert_uint_eq(wire_frame(f, sizeof(f)), 0);
}
END_TEST

START_TEST(test_broadcast_without_route)
{
	uint8_t f[2048], msg[300];
	struct ns_pktinfo info = {0};
	struct ns_stats stats;
	size_t n;

	memset(msg, 0x5a, sizeof(msg));
	info.dst.addr = 0xffffffffu;
	info.dst.port = CLIENT_PORT;
	/* The ordinary path has no route for the limited broadcast here. */
	ck_assert_int_eq(ns_chan_sendto(ch, msg, sizeof(msg), &info), -ENETUNREACH);
	ck_assert_int_eq(ns_chan_sendto_link(ch, msg, sizeof(msg), &info, ls, NULL),
			 (ssize_t)sizeof(msg));
	n = wire_frame(f, sizeof(f));
	ck_assert_uint_eq(check_reply(f, n, bcast, 0xffffffffu), sizeof(msg));
	ck_assert_mem_eq(f + ETH_HLEN + 28, msg, sizeof(msg));
	ck_assert_uint_eq(wire_frame(f, sizeof(f)), 0);
	ns_stack_stats(st, &stats);
	ck_assert_uint_eq(stats.arp_tx, 0);
}
END_TEST

START_TEST(test_unicast_to_mac_without_arp)
{
	uint8_t f[2048], msg[64];
	struct ns_pktinfo info = {0};
	struct ns_stats stats;
	uint8_t mac[6];
	uint32_t offlink;

	memset(msg, 0xa5, sizeof(msg));
	info.dst.addr = CLIENT;
	info.dst.port = CLIENT_PORT;
	ck_assert_int_eq(ns_chan_sendto_link(ch, msg, sizeof(msg), &info, ls, client_mac),
			 (ssize_t)sizeof(msg));
	ck_assert_uint_eq(check_reply(f, wire_frame(f, sizeof(f)), client_mac, CLIENT),
			  sizeof(msg));
	/* An address outside every route goes out all the same. */
	ns_parse_addr("192.168.7.9", &offlink);
	info.dst.addr = offlink;
	ck_assert_int_eq(ns_chan_sendto_link(ch, msg, sizeof(msg), &info, ls, client_mac),
			 (ssize_t)sizeof(msg));
	ck_assert_uint_eq(check_reply(f, wire_frame(f, sizeof(f)), client_mac, offlink),
			  sizeof(msg));
	ck_assert_uint_eq(wire_frame(f, sizeof(f)), 0);
	ns_stack_stats(st, &stats);
	ck_assert_uint_eq(stats.arp_tx, 0);
	/* Nothing was learnt: the ordinary path still has to ARP. */
	ck_assert_int_eq(ns_arp_lookup(st, CLIENT, mac), -ENOENT);
}
END_TEST

START_TEST(test_errors)
{
	struct ns_sockaddr icmp_local = { .addr = 0, .port = 0x77 };
	struct ns_pktinfo info = {0};
	struct ns_link *other_a, *other_b;
	struct ns_chan *icmp;
	uint8_t f[64], msg[8] = {ICMP_ECHO};
	static uint8_t big[65536];
	int err;

	info.dst.port = CLIENT_PORT;
	ck_assert_int_eq(ns_chan_sendto_link(ch, msg, sizeof(msg), &info, ls, NULL), -EDESTADDRREQ);
	info.dst.addr = 0xffffffffu;
	ck_assert_int_eq(ns_link_pair(1500, 0, &other_a, &other_b), 0);
	ck_assert_int_eq(ns_chan_sendto_link(ch, msg, sizeof(msg), &info, other_a, NULL), -ENODEV);
	ck_assert_int_eq(ns_chan_sendto_link(ch, big, sizeof(big), &info, ls, NULL), -EMSGSIZE);
	icmp = ns_chan_create(st, NS_PROTO_ICMP, &icmp_local, NULL, &err);
	ck_assert_ptr_nonnull(icmp);
	ck_assert_int_eq(ns_chan_sendto_link(icmp, msg, sizeof(msg), &info, ls, NULL), -EOPNOTSUPP);
	ns_chan_close(icmp);
	ns_link_destroy(other_a);
	ns_link_destroy(other_b);
	ck_assert_uint_eq(wire_frame(f, sizeof(f)), 0);
}
END_TEST

START_TEST(test_fragments_go_to_the_mac)
{
	uint8_t f[2048], msg[1000];
	struct ns_pktinfo info = {0};
	unsigned frames = 0;
	size_t n, bytes = 0;

	teardown();
	setup_mtu(576);
	info.dst.addr = CLIENT;
	info.dst.port = CLIENT_PORT;
	ck_assert_int_eq(ns_chan_sendto_link(ch, msg, sizeof(msg), &info, ls, client_mac),
			 (ssize_t)sizeof(msg));
	while ((n = wire_frame(f, sizeof(f))) > 0) {
		ck_assert_uint_le(n, NS_FRAME_MAX(576));
		ck_assert_mem_eq(f, client_mac, 6);
		ck_assert_uint_eq(get32(f + ETH_HLEN + 16), CLIENT);
		bytes += get16(f + ETH_HLEN + 2) - 20u;
		frames++;
	}
	ck_assert_uint_eq(frames, 2);
	ck_assert_uint_eq(bytes, 8 + sizeof(msg));
}
END_TEST

static Suite *udp_link_suite(void)
{
	Suite *s = suite_create("netstack_udp_link");
	TCase *t = tcase_create("udp_link");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_receive_from_unaddressed_host);
	tcase_add_test(t, test_broadcast_without_route);
	tcase_add_test(t, test_unicast_to_mac_without_arp);
	tcase_add_test(t, test_errors);
	tcase_add_test(t, test_fragments_go_to_the_mac);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return check_run_suite(udp_link_suite());
}
