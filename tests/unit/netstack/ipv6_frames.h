/* ipv6_frames.h — what netstack_ipv6_frames's files share
 * (ipv6_frames_fixture.c): one stack (fd00::1) on one end of an in-memory
 * pair, the test on the other (fd00::5, MAC PMAC) writing raw IPv6 frames;
 * a UDP channel on UDP_PORT. Tests: test_ipv6_frames.c (extension headers,
 * reassembly), test_ipv6_frames_icmp.c (ICMPv6, ND, MLD, Packet Too Big). */
#ifndef TESTS_NETSTACK_IPV6_FRAMES_H
#define TESTS_NETSTACK_IPV6_FRAMES_H

#include <check.h>

#include "netstack/internal.h"

#define UDP_PORT 5000

extern const uint8_t PMAC[6];
extern struct ns_clock *clk;
extern struct ns_link *ls, *lw; /* the stack's end, the wire (test) end */
extern struct ns_stack *st;
extern struct ns_chan *ch;
extern uint8_t S6[16], P6[16];

void setup(void);
void teardown(void);

/* The ones' complement sum of the IPv6 pseudo-header and l4, negated. */
uint16_t l4_csum(const uint8_t src[16], const uint8_t dst[16], uint8_t nh, const uint8_t *l4,
		 size_t len);
/* Ethernet + IPv6 header in front of the len bytes at f + 54; returns the
 * frame length. */
size_t frame6(uint8_t *f, const uint8_t src[16], const uint8_t dst[16], uint8_t nh, uint8_t hlim,
	      size_t len);
/* A UDP datagram to UDP_PORT at off into the payload, checksummed. */
size_t put_udp(uint8_t *l4, const char *msg);
void inject(const uint8_t *f, size_t len);
/* The next frame the stack sent that is ICMPv6 of this type (or NULL);
 * frames before it are skipped. */
const uint8_t *next_icmp6(uint8_t type, size_t *len);
void drain_wire(void);
/* The channel received exactly msg. */
bool delivered(const char *msg);
/* A neighbor solicitation from the peer for the stack's address. */
void send_ns(uint8_t hlim);

/* test_ipv6_frames_icmp.c's tests, added to the suite's one test case. */
void ipv6_frames_add_icmp_tests(TCase *tc);

#endif
