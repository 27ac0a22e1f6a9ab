/* ipv6_frames_fixture.c — the fixture of netstack_ipv6_frames
 * (ipv6_frames.h): one stack on one end of an in-memory pair, the test on
 * the other writing raw IPv6 frames and reading what the stack sends.
 * Separate so the suite's two test files share one copy. */
#include <check.h>
#include <stdlib.h>

#include "tests/unit/netstack/ipv6_frames.h"

const uint8_t PMAC[6] = {0x02, 0x99, 0, 0, 0, 5};
struct ns_clock *clk;
struct ns_link *ls, *lw;
struct ns_stack *st;
struct ns_chan *ch;
uint8_t S6[16], P6[16];

uint16_t l4_csum(const uint8_t src[16], const uint8_t dst[16], uint8_t nh, const uint8_t *l4,
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
size_t frame6(uint8_t *f, const uint8_t src[16], const uint8_t dst[16], uint8_t nh, uint8_t hlim,
	      size_t len)
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
size_t put_udp(uint8_t *l4, const char *msg)
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

void inject(const uint8_t *f, size_t len)
{
	ns_stack_input(st, ls, f, len);
}

/* The next frame the stack sent that is ICMPv6 of this type (or NULL);
 * frames before it are skipped. */
const uint8_t *next_icmp6(uint8_t type, size_t *len)
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

void drain_wire(void)
{
	uint8_t buf[2048];

	while (ns_link_receive(lw, buf, sizeof(buf)) > 0)
		;
}

bool delivered(const char *msg)
{
	char buf[256];
	ssize_t n = ns_chan_recv_nb(ch, buf, sizeof(buf), NULL);

	return n == (ssize_t)strlen(msg) && !memcmp(buf, msg, (size_t)n);
}

/* A neighbor solicitation from the peer for the stack's address. */
void send_ns(uint8_t hlim)
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

void setup(void)
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

void teardown(void)
{
	ns_chan_close(ch);
	ns_stack_free(st);
	ns_link_destroy(ls);
	ns_link_destroy(lw);
	ns_clock_free(clk);
}
