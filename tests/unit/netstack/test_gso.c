/* test_gso.c — ns_gso, the coalescer behind the offloading TAP and the
 * virtio-net user backend's GUEST_TSO: segments of one TCP flow grow into
 * one GSO frame whose headers a receiver can complete; anything that does
 * not continue the flow, or a family the peer did not take, goes on as it
 * came. */
#include <check.h>
#include <linux/virtio_net.h>
#include <stdlib.h>

#include "netstack/internal.h"
#include "tests/unit/check_run.h"

#define MSS 100
#define MAX_OUT 8

struct out {
	struct virtio_net_hdr h;
	uint8_t f[ETH_HLEN + 65535];
	size_t len;
};

static struct out *outs;
static int n_out;

static int emit(void *opaque, const struct virtio_net_hdr *h, const void *f, size_t len)
{
	ck_assert_int_lt(n_out, MAX_OUT);
	outs[n_out].h = *h;
	memcpy(outs[n_out].f, f, len);
	outs[n_out].len = len;
	n_out++;
	return 0;
}

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

/* An Ethernet + IPv4 (or IPv6) + TCP segment with payload bytes from seq. */
static size_t segment(uint8_t *f, bool v6, uint32_t seq, size_t payload, uint8_t flags)
{
	size_t il = v6 ? 40 : 20, len = ETH_HLEN + il + 20 + payload;
	uint8_t *ip = f + ETH_HLEN, *tcp = ip + il;

	memset(f, 0, len);
	memcpy(f, "\x02\0\0\0\0\x01\x02\0\0\0\0\x02", 12);
	put16(f + 12, v6 ? ETHERTYPE_IPV6 : ETHERTYPE_IP);
	if (v6) {
		ip[0] = 0x60;
		put16(ip + 4, 20 + payload);
		ip[6] = NS_PROTO_TCP;
		ip[7] = 64;
		ip[8] = 0xfd, ip[23] = 2, ip[24] = 0xfd, ip[39] = 15;
	} else {
		ip[0] = 0x45;
		put16(ip + 2, il + 20 + payload);
		ip[8] = 64;
		ip[9] = NS_PROTO_TCP;
		put32(ip + 12, 0x0a000202);
		put32(ip + 16, 0x0a00020f);
	}
	put16(tcp, 80);
	put16(tcp + 2, 40000);
	put32(tcp + 4, seq);
	put32(tcp + 8, 777);
	tcp[12] = 5 << 4;
	tcp[13] = flags;
	put16(tcp + 14, 65535);
	for (size_t i = 0; i < payload; i++)
		tcp[20 + i] = (uint8_t)(seq + i);
	return len;
}

static struct ns_gso *g;

static void setup(void)
{
	outs = calloc(MAX_OUT, sizeof(*outs));
	n_out = 0;
	g = ns_gso_new(emit, NULL);
	ck_assert_ptr_nonnull(g);
}

static void teardown(void)
{
	ns_gso_free(g);
	free(outs);
}

/* feed N full segments from seq 1000. */
static void feed(bool v6, int n)
{
	uint8_t f[ETH_HLEN + 40 + 20 + MSS];
	uint32_t seq = 1000;

	for (int i = 0; i < n; i++, seq += MSS)
		ck_assert_int_eq(ns_gso_add(g, f, segment(f, v6, seq, MSS, TH_ACK)), 0);
}

static void feed_at(bool v6, uint32_t seq, size_t payload, uint8_t flags)
{
	uint8_t f[ETH_HLEN + 40 + 20 + MSS];

	ck_assert_int_eq(ns_gso_add(g, f, segment(f, v6, seq, payload, flags)), 0);
}

/* Complete the partial checksum as the receiver would, then check the
 * TCP checksum of the whole (unsplit) segment against its pseudo header. */
static void check_gso_frame(const struct out *o, bool v6, size_t payload)
{
	size_t il = v6 ? 40 : 20, l4 = o->len - ETH_HLEN - il;
	uint8_t f[sizeof(o->f)], pseudo[40] = {0};
	uint8_t *ip = f + ETH_HLEN, *tcp = ip + il;
	uint16_t c;

	memcpy(f, o->f, o->len);
	ck_assert_uint_eq(o->h.flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
	ck_assert_uint_eq(o->h.gso_type, v6 ? VIRTIO_NET_HDR_GSO_TCPV6 : VIRTIO_NET_HDR_GSO_TCPV4);
	ck_assert_uint_eq(o->h.gso_size, MSS);
	ck_assert_uint_eq(o->h.hdr_len, ETH_HLEN + il + 20);
	ck_assert_uint_eq(o->h.csum_start, ETH_HLEN + il);
	ck_assert_uint_eq(o->h.csum_offset, 16);
	ck_assert_uint_eq(l4, 20 + payload);
	if (v6) {
		ck_assert_uint_eq((unsigned)(ip[4] << 8 | ip[5]), l4);
		memcpy(pseudo, ip + 8, 32);
		put16(pseudo + 34, (unsigned)l4);
		pseudo[39] = NS_PROTO_TCP;
	} else {
		ck_assert_uint_eq((unsigned)(ip[2] << 8 | ip[3]), o->len - ETH_HLEN);
		ck_assert_uint_eq(ns_csum_fold(ns_csum_add(0, ip, 20)), 0xffff);
		memcpy(pseudo, ip + 12, 8);
		pseudo[9] = NS_PROTO_TCP;
		put16(pseudo + 10, (unsigned)l4);
	}
	c = (uint16_t)~ns_csum_fold(ns_csum_add(0, tcp, l4));
	memcpy(tcp + 16, &c, 2);
	ck_assert_uint_eq(ns_csum_fold(ns_csum_add(ns_csum_add(0, pseudo, v6 ? 40 : 12), tcp, l4)),
			  0xffff);
	for (size_t i = 0; i < payload; i++)
		ck_assert_uint_eq(tcp[20 + i], (uint8_t)(1000 + i));
}

START_TEST(test_flow_grows_into_one_frame)
{
	bool v6 = _i;

	feed(v6, 5);
	ck_assert_int_eq(n_out, 0); /* held until the flush or a PSH */
	feed_at(v6, 1000 + 5 * MSS, 30, TH_ACK | TH_PSH);
	ck_assert_int_eq(n_out, 1);
	check_gso_frame(&outs[0], v6, 5 * MSS + 30);
	ck_assert_uint_eq(outs[0].f[ETH_HLEN + (v6 ? 40 : 20) + 13], TH_ACK | TH_PSH);
}
END_TEST

START_TEST(test_short_segment_ends_the_frame)
{
	uint8_t f[ETH_HLEN + 20 + 20 + MSS];

	feed(false, 2);
	feed_at(false, 1200, 30, TH_ACK); /* short, no PSH: held, but the end */
	ck_assert_int_eq(n_out, 0);
	ck_assert_int_eq(ns_gso_add(g, f, segment(f, false, 1230, MSS, TH_ACK)), 0);
	ck_assert_int_eq(n_out, 1);
	check_gso_frame(&outs[0], false, 2 * MSS + 30);
	ns_gso_flush(g);
	ck_assert_int_eq(n_out, 2);
	ck_assert_uint_eq(outs[1].h.gso_type,
			  VIRTIO_NET_HDR_GSO_NONE); /* one segment: as it came */
	ck_assert_uint_eq(outs[1].len, sizeof(f));
}
END_TEST

START_TEST(test_gap_and_control_segments_pass)
{
	uint8_t f[ETH_HLEN + 20 + 20 + MSS];

	feed(false, 2);
	ck_assert_int_eq(ns_gso_add(g, f, segment(f, false, 5000, MSS, TH_ACK)), 0); /* a gap */
	ck_assert_int_eq(n_out, 1);
	ck_assert_int_eq(ns_gso_add(g, f, segment(f, false, 5100, 0, TH_ACK | TH_FIN)), 0);
	ck_assert_int_eq(n_out, 3); /* the held one, then the FIN at once */
	ck_assert_uint_eq(outs[1].h.gso_type, VIRTIO_NET_HDR_GSO_NONE);
	ck_assert_uint_eq(outs[2].h.gso_type, VIRTIO_NET_HDR_GSO_NONE);
	ck_assert_uint_eq(outs[2].f[ETH_HLEN + 20 + 13], TH_ACK | TH_FIN);
}
END_TEST

START_TEST(test_families_the_peer_did_not_take)
{
	ns_gso_families(g, true, false);
	feed(true, 3);
	ck_assert_int_eq(n_out, 3); /* IPv6 one by one, untouched */
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(outs[i].h.gso_type, VIRTIO_NET_HDR_GSO_NONE);
	ns_gso_families(g, false, false);
	feed(false, 3);
	ck_assert_int_eq(n_out, 6);
	ns_gso_families(g, true, true);
	feed(false, 3);
	ns_gso_free(g); /* flushes what it held */
	g = NULL;
	ck_assert_int_eq(n_out, 7);
	check_gso_frame(&outs[6], false, 3 * MSS);
}
END_TEST

static Suite *gso_suite(void)
{
	Suite *s = suite_create("netstack_gso");
	TCase *t = tcase_create("gso");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_loop_test(t, test_flow_grows_into_one_frame, 0, 2);
	tcase_add_test(t, test_short_segment_ends_the_frame);
	tcase_add_test(t, test_gap_and_control_segments_pass);
	tcase_add_test(t, test_families_the_peer_did_not_take);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return check_run_suite(gso_suite());
}
