/* tcpscript.h — packetdrill-style segment scripts against one netstack.
 *
 * One stack (address 10.0.0.1) on a virtual clock behind a capture link:
 * every frame it transmits is queued here; the test plays the peer
 * (10.0.0.2, static ARP entry) by injecting hand-built segments. Scripts
 * use packetdrill's notation with relative sequence numbers:
 *
 *	TS_IN(t, "S 0:0(0) win 65535 <mss 1460,sackOK,TS val 100 ecr 0,nop,wscale 7>");
 *	TS_OUT(t, "S. 0:0(0) ack 1 <mss 1460,sackOK,TS val * ecr 100,nop,wscale *>");
 *	TS_IN(t, ". 1:1(0) ack 1 win 512 <nop,nop,TS val 101 ecr *>");
 *
 * Grammar of a line:  FLAGS SEQ[:END(LEN)] [ack N] [win N] [<OPTIONS>]
 *   FLAGS    letters S F R P U, '.' for ACK (U: the urgent pointer
 *            covers the whole payload).
 *   SEQ      relative to the sender's ISN: the peer's for TS_IN lines,
 *            the stack's for TS_OUT lines; ack (and SACK blocks) are
 *            relative to the other side's ISN.
 *   OPTIONS  mss N, wscale N, sackOK, TS val N ecr N, sack A:B [A:B...],
 *            nop, eol. For TS_IN "ecr *" echoes the last TS val the stack
 *            sent; wscale/mss values are raw.
 * TS_IN payload bytes are ts_pattern(relative seq), so duplicated,
 * overlapping and reordered segments describe one consistent stream.
 *
 * TS_OUT checks the next captured frame: it must be a TCP segment from
 * the connection under test with valid IP and TCP checksums; flags must
 * match (PSH is not compared); seq, len and, when given, ack and win must
 * match; '*' matches any value. With <...> the option set must match
 * exactly (order, NOP and EOL ignored); without it options are not
 * checked. Data the stack sends must be ts_pattern(relative seq) (what
 * ts_send() writes) unless t->check_payload is false. Every decoded
 * segment must also keep MSS, wscale and SACK-permitted to SYNs and, while
 * auto_ts is on (timestamps negotiated), carry TS unless it is a RST. */
#ifndef TESTS_TCPSCRIPT_H
#define TESTS_TCPSCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <check.h>

#include "netstack/netstack.h"

#define TS_MAX_SACK 4

/* One segment, decoded (sequence numbers relative). */
struct ts_seg {
	uint8_t flags; /* TH_* bits */
	uint32_t seq, ack, len;
	uint16_t win; /* raw window field */
	bool has_mss, has_ws, sack_ok, has_ts;
	uint16_t mss;
	uint8_t ws;
	uint32_t tsval, tsecr;
	unsigned nsack;
	uint32_t sack[TS_MAX_SACK][2];
	const uint8_t *payload; /* into the captured frame; NULL for specs */
};

struct ts_frame {
	struct ts_frame *next;
	uint64_t when_us;
	size_t len;
	uint8_t data[];
};

struct tscript {
	struct ns_clock *clk;
	struct ns_stack *st;
	struct ns_link *link;
	uint32_t local, peer; /* host order */
	bool v6;	      /* the connection runs over IPv6 */
	uint8_t local6[16], peer6[16];
	uint8_t local_mac[6], peer_mac[6];
	struct ts_frame *qhead, *qtail;
	unsigned qlen;
	/* the connection under test */
	uint16_t lport, pport;
	uint32_t liss, piss;
	bool liss_known;
	uint32_t last_tsval; /* newest TS val the stack sent */
	uint32_t sent;	     /* bytes ts_send() wrote so far */
	bool check_payload;
	/* TS_IN lines without <...> get <nop,nop,TS val V ecr LAST> with
	 * V = 100 + virtual ms since ts_base_us (set by the handshakes). */
	bool auto_ts;
	uint64_t ts_base_us;
	uint16_t peer_win; /* window field of TS_IN lines without "win" */
	uint16_t ip_id;
	unsigned hs_rtt_ms; /* handshake helpers: the peer answers after this */
	uint16_t hs_win;    /* ... with this window field (0: 1024) */
	struct ts_seg last; /* the segment TS_OUT matched last */
	uint64_t last_out_us, last_in_us;
};

/* What describes one connection, for scripts juggling several. */
struct ts_conn {
	uint16_t lport, pport, peer_win;
	uint32_t liss, piss, last_tsval, sent;
	bool liss_known, auto_ts;
	uint64_t ts_base_us;
};

struct ts_cfg {
	unsigned mtu;	   /* 0: 1500 */
	uint16_t pport;	   /* peer's port (0: 40000) */
	unsigned if_flags; /* NS_IF_* of the interface */
	bool ipv6;	   /* fd00::1 and fd00::2 (also when ts_ipv6_default) */
	struct ns_stack_cfg stack; /* clock and seed are filled in */
};

struct tscript *ts_new(const struct ts_cfg *cfg);
/* Every ts_new() runs over IPv6 while set (the suites' "ipv6" case). */
extern bool ts_ipv6_default;
void ts_free(struct tscript *t);

/* Start describing another connection (new ports, ISNs unknown). */
void ts_new_conn(struct tscript *t, uint16_t lport, uint16_t pport);
void ts_save(const struct tscript *t, struct ts_conn *c);
void ts_restore(struct tscript *t, const struct ts_conn *c);

/* The byte at relative sequence number seq of either side's stream. */
static inline uint8_t ts_pattern(uint32_t seq)
{
	return (uint8_t)(seq * 31u + (seq >> 8) + 7u);
}

void ts_in_at(struct tscript *t, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void ts_out_at(struct tscript *t, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Run timers for up to max_ms until the stack sends something, then
 * TS_OUT it; the delay since the last TS_OUT match or TS_IN, whichever
 * came later, must lie in [min_ms, max_ms]. Returns it in ms. */
uint64_t ts_out_after_at(struct tscript *t, const char *file, int line, uint64_t min_ms,
			 uint64_t max_ms, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* Run timers until something is queued or the clock reaches deadline_us
 * (absolute, on the stack clock); true when something was sent. */
bool ts_run_until_output(struct tscript *t, uint64_t deadline_us);
/* Nothing was sent (queue empty). */
void ts_none_at(struct tscript *t, const char *file, int line);

#define TS_IN(t, ...) ts_in_at(t, __FILE__, __LINE__, __VA_ARGS__)
/* Build a TS_IN line's TCP segment (checksummed) into l4 without sending
 * it; its length. */
size_t ts_build_seg_at(struct tscript *t, const char *file, int line, uint8_t *l4, size_t cap,
		       const char *fmt, ...) __attribute__((format(printf, 6, 7)));
#define TS_BUILD(t, l4, cap, ...) ts_build_seg_at(t, __FILE__, __LINE__, l4, cap, __VA_ARGS__)
#define TS_OUT(t, ...) ts_out_at(t, __FILE__, __LINE__, __VA_ARGS__)
#define TS_OUT_AFTER(t, lo, hi, ...) ts_out_after_at(t, __FILE__, __LINE__, lo, hi, __VA_ARGS__)
#define TS_NONE(t) ts_none_at(t, __FILE__, __LINE__)

/* Advance virtual time by ms, firing every timer at its due time. */
void ts_wait(struct tscript *t, uint64_t ms);
/* Same, and nothing may be sent meanwhile. */
#define TS_QUIET(t, ms) (ts_wait(t, ms), TS_NONE(t))
/* Microseconds since the last matched TS_OUT. */
uint64_t ts_since_last_us(struct tscript *t);
/* Expect n full data segments of smss bytes, in order from relative seq
 * from, acking 1; returns the seq after them. */
uint32_t ts_expect_segments(struct tscript *t, uint32_t from, unsigned n, uint32_t smss);

/* Inject a raw frame / an IPv4 packet (Ethernet header added) / a TCP
 * segment with a correct checksum (l4 = TCP header + options + data). */
void ts_inject_frame(struct tscript *t, const void *frame, size_t len);
/* Build peer -> stack Ethernet + IPv4 (20-byte header, checksum) around
 * payload (which may already sit at frame + 34) into frame; its length. */
size_t ts_build_ip(struct tscript *t, uint8_t *frame, uint8_t proto, uint16_t id, uint16_t off,
		   const void *payload, size_t len);
/* Folded sum of the IPv4 pseudo-header and l4: 0xffff when valid. */
uint16_t ts_l4_csum(uint32_t src, uint32_t dst, uint8_t proto, const void *l4, size_t len);
/* The same for a TCP segment of the connection's family and direction. */
uint16_t ts_tcp_csum(const struct tscript *t, bool from_peer, const void *l4, size_t len);
void ts_inject_ip(struct tscript *t, uint8_t proto, const void *l4, size_t len);
void ts_inject_tcp_raw(struct tscript *t, void *l4, size_t len);
/* tcpscript_ip.c, for the harness itself: the link MTU for a script's
 * MTU, the stack's addresses, socket addresses of either side, and the
 * checks on a frame up to its TCP segment. */
unsigned ts_link_mtu(bool v6, unsigned script_mtu);
void ts_add_addresses(struct tscript *t, unsigned if_flags);
struct ns_sockaddr ts_sockaddr(const struct tscript *t, bool local, uint16_t port);
bool ts_is_peer(const struct tscript *t, const struct ns_sockaddr *a);
bool ts_decode_l3(const struct tscript *t, const uint8_t *f, size_t len, const uint8_t **l4,
		  size_t *l4len, char *why, size_t cap);
/* Drop and free every captured frame; returns how many there were. */
unsigned ts_flush(struct tscript *t);
/* Pop the oldest captured frame (caller frees) or NULL. */
struct ts_frame *ts_pop(struct tscript *t);

/* Sockets on the stack (all non-blocking). */
struct ns_sock *ts_listen(struct tscript *t, uint16_t port, int backlog);
/* A new non-blocking stream socket; bind + listen on one. */
struct ns_sock *ts_stream(struct tscript *t);
void ts_bind_listen(struct tscript *t, struct ns_sock *s, uint16_t port, int backlog);
struct ns_sock *ts_accept(struct tscript *t, struct ns_sock *listener);
/* Connect to the peer at t->pport from local port lport (0: ephemeral;
 * the port is then learned from the SYN). */
struct ns_sock *ts_connect(struct tscript *t, uint16_t lport);
/* Write len pattern bytes (continuing the stream); returns ns_send(). */
ssize_t ts_send(struct tscript *t, struct ns_sock *s, size_t len);
/* Read exactly len bytes and check they are the peer's stream from
 * relative seq `from`. */
void ts_recv_at(struct tscript *t, const char *file, int line, struct ns_sock *s,
		uint32_t from, size_t len);
#define TS_RECV(t, s, from, len) ts_recv_at(t, __FILE__, __LINE__, s, from, len)
int ts_state(struct ns_sock *s);
#define TS_STATE(s, want)                                                                  \
	ck_assert_msg(ts_state(s) == (want), "state %s, expected %s",                     \
		      ns_tcp_state_name(ts_state(s)), ns_tcp_state_name(want))

/* Standard handshakes with options "<mss 1460,sackOK,TS val 100 ecr 0,
 * nop,wscale 7>" (the stack's TS val is learned). Passive: listener on
 * lport, returns the accepted socket; active: returns the connected one.
 * After either, both sides are at relative seq 1, auto_ts is on and
 * the peer's window is 1024 << 7 (peer_win = hs_win or 1024). */
struct ns_sock *ts_passive_open(struct tscript *t, uint16_t lport, struct ns_sock **listener);
struct ns_sock *ts_active_open(struct tscript *t);
/* Same with the peer's own SYN (SYN-ACK) option list, e.g. "mss 1000" or
 * "" for none; the stack's answer must carry exactly MSS plus what was
 * offered (wscale and TS of any value), and auto_ts follows TS. */
struct ns_sock *ts_passive_open_with(struct tscript *t, uint16_t lport,
				     struct ns_sock **listener, const char *peer_opts);
struct ns_sock *ts_active_open_with(struct tscript *t, const char *peer_opts);
struct ns_tcp_info ts_info(struct ns_sock *s);

struct ns_stats ts_stats(struct tscript *t);

/* Decode a captured frame as a TCP segment of the connection under test
 * (relative numbers); false with a reason in why when it is not one. */
bool ts_decode(struct tscript *t, const uint8_t *f, size_t len, struct ts_seg *s, char *why,
	       size_t whylen);
/* Format a segment the way scripts are written. */
void ts_format(const struct ts_seg *s, char *buf, size_t cap);

/* Run the tests of a table (built with TS_CASE; NULL entries skipped)
 * twice, in an "ipv4" and an "ipv6" test case (ts_ipv6_default set by a
 * fixture); TS_CASE_V4 entries (scripts about IPv4 itself: ICMP errors,
 * IP options, fragments, broadcast) only in the first. The exit status
 * for main(). */
struct ts_case {
	const TTest *const *test;
	bool v4_only;
};
#define TS_CASE(name) { &name, false }
#define TS_CASE_V4(name) { &name, true }
int ts_run_suite(const char *name, const struct ts_case *cases, size_t n, void (*setup)(void),
		 void (*teardown)(void), int timeout_s);
/* main() of a script suite: runs cases, or with TS_PENDING=1 in the
 * environment the pending ones (tests waiting for an engine fix). */
#define TS_MAIN(name, cases, pending, setup, teardown, timeout_s)                          \
	int main(void)                                                                     \
	{                                                                                  \
		if (getenv("TS_PENDING"))                                                  \
			return ts_run_suite(name "_pending", pending,                      \
					    sizeof(pending) / sizeof(pending[0]), setup,   \
					    teardown, timeout_s);                          \
		return ts_run_suite(name, cases, sizeof(cases) / sizeof(cases[0]), setup,  \
				    teardown, timeout_s);                                  \
	}

#endif
