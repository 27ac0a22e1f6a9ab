/* fuzz.h — what the malformed-input suites share (fuzz_fixture.c):
 * test_fuzz.c (Ethernet, ARP, IPv4, fragments, ICMP, UDP, random frames)
 * and test_fuzz_tcp.c (TCP headers, options, flags and storms). One stack
 * (tcpscript.h's harness) with a UDP channel on UDP_PORT; the frame
 * builders write into f (frame: a scratch buffer) and return the length. */
#ifndef TESTS_NETSTACK_FUZZ_H
#define TESTS_NETSTACK_FUZZ_H

#include "tests/unit/netstack/tcpscript.h"

enum { UDP_PORT = 7777, REASS_MAX = 64 * 1024, MAX_CONNS = 64, CHAN_QMAX = 16 };

extern struct tscript *t;
extern struct ns_chan *udp;
extern uint8_t frame[NS_FRAME_BUF];

/* Fixture: a fresh stack and channel per test, seeded PRNG. */
void fuzz_setup(void);
void fuzz_teardown(void);
/* The seeded PRNG: reproducible. */
uint32_t rnd(void);

/* UDP peer:5555 -> stack:dport with plen payload bytes, checksummed. */
size_t udp_frame(uint8_t *f, uint16_t dport, size_t plen, uint8_t fill);
size_t icmp_echo_frame(uint8_t *f, size_t plen);
size_t arp_request_frame(uint8_t *f);
/* TCP peer:sport -> stack:dport, 20-byte header plus opts, checksummed. */
size_t tcp_frame(uint8_t *f, uint16_t sport, uint16_t dport, uint8_t flags, const uint8_t *opts,
		 size_t optlen, size_t plen);
/* Recompute the IP header checksum after editing the header. */
void ip_fix_csum(uint8_t *f);

/* Everything the stack sent is a well-formed frame from its own MAC
 * (garbage in must never produce garbage out); returns the count. */
unsigned check_tx_sane(void);
/* A datagram to the channel arrives intact and the answer goes out. */
void udp_roundtrip(void);
/* An echo request is answered with the same payload. */
void ping_ok(size_t plen);
/* Memory in bounds, UDP and ping still work. */
void assert_alive(void);

#define DELTA(field, before) (ts_stats(t).field - (before).field)

#endif
