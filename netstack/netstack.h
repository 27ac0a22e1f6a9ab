/* netstack.h — netstack's one public header: a userspace TCP/IP stack.
 *
 * Layers, bottom up:
 *   clock   one injectable time source (real monotonic or virtual for tests)
 *   link    the "hardware": transmit a frame; frames received are handed to
 *           ns_stack_input(). Adapters: Linux TAP, an in-memory pair, and an
 *           impairment wrapper (loss, duplication, reordering, delay).
 *   stack   Ethernet II, ARP, IPv4 (routes, reassembly), ICMP, UDP, TCP.
 *   chan    netchannels: endpoints keyed by (proto, local, remote) in a
 *           balanced tree; one packet (or one segment's worth of stream) per
 *           receive call; blocking, non-blocking and pollable-fd variants.
 *   sock    a socket-like API on top of the channels, errors as -errno.
 *
 * Threading: the stack is single-threaded inside; every public function
 * takes the stack's lock, so any thread may call them. The thread that
 * owns the event loop calls ns_stack_input() for received frames and
 * ns_stack_poll() when ns_stack_timeout_ms() expires or ns_stack_fd()
 * becomes readable. Blocking calls (recv, accept, connect, send on a full
 * buffer) sleep on a condition variable and must not be made from the
 * event-loop thread itself unless the socket is non-blocking.
 *
 * Addresses and ports in this API are in host byte order.
 *
 * IPv6 (ip6.c, icmp6.c, nd6.c, mld6.c) runs beside IPv4 on interfaces
 * where ns_iface_ipv6() turned it on: extension headers, reassembly (a
 * first fragment must carry the whole header chain, RFC 7112), ICMPv6,
 * Neighbor Discovery with redirects, MLDv2 listener reports, link-local
 * and SLAAC addresses, a routing table of its own. UDP, TCP, channels and sockets take addresses of either family
 * (struct ns_sockaddr's family).
 *
 * Status: links, ARP, IPv4, ICMP, UDP, channels and datagram sockets work.
 * TCP (netstack/tcp*.c) implements the RFC 9293 state machine (simultaneous
 * open/close, TIME-WAIT, listen/accept with bounded queues, RFC 5961),
 * MSS, window scaling, timestamps with PAWS, SACK and D-SACK, RFC 6298 RTO
 * with Karn and backoff, slow start / congestion avoidance, NewReno and
 * RFC 6675 SACK recovery, limited and early retransmit, tail loss probes,
 * Eifel undo, delayed ACKs, Nagle, persist, keepalive and the user
 * timeout; stream sockets support every call and option below. Send and
 * receive buffers are fixed rings sized by NS_SO_SNDBUF / NS_SO_RCVBUF
 * (default 256 KiB).
 */
#ifndef NETSTACK_H
#define NETSTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---------------------------------------------------------------- clock */

/* All timers of a stack (and of the impairment link) read one clock, in
 * microseconds. ns_clock_monotonic() is CLOCK_MONOTONIC; a virtual clock
 * only moves when ns_clock_advance() is called, so tests are deterministic. */
struct ns_clock;
struct ns_clock *ns_clock_monotonic(void);
struct ns_clock *ns_clock_virtual_new(uint64_t start_us);
void ns_clock_advance(struct ns_clock *c, uint64_t us);
uint64_t ns_clock_now(struct ns_clock *c);
void ns_clock_free(struct ns_clock *c); /* no-op for the monotonic clock */

/* ----------------------------------------------------------------- link */

/* A link is a device that carries Ethernet frames (without FCS). The stack
 * calls transmit() with its lock held; the link must not call back into the
 * stack from there. Received frames are pulled with ns_link_receive() (or
 * come from elsewhere, e.g. a virtio-net queue) and passed to
 * ns_stack_input(). */
struct ns_link;

struct ns_link_ops {
	/* Send one frame; 0, or -errno (the frame is then dropped). */
	int (*transmit)(struct ns_link *l, const void *frame, size_t len);
	/* Optional: copy one received frame into buf; its length, 0 when none
	 * is waiting (non-blocking), -errno on failure. */
	ssize_t (*receive)(struct ns_link *l, void *buf, size_t cap);
	/* Optional: fd that is readable while frames are waiting, or -1. */
	int (*fd)(struct ns_link *l);
	/* Optional: release frames held back until now (impairment delay);
	 * returns the µs until the next one is due, or UINT64_MAX. */
	uint64_t (*poll)(struct ns_link *l, uint64_t now_us);
	void (*destroy)(struct ns_link *l);
	/* Optional receive in place, for links whose frames already sit in
	 * memory (the pair): give back the frame borrowed before, if any,
	 * point *frame at the next received frame and return its length
	 * (0: none waiting, -errno). A frame stays valid until the next
	 * borrow() or release() (which gives it back without taking
	 * another). ns_stack_drain() prefers these to receive() (no copy
	 * into the stack); copying links (TAP) leave them NULL. */
	ssize_t (*borrow)(struct ns_link *l, const void **frame);
	void (*release)(struct ns_link *l);
};

struct ns_link {
	const struct ns_link_ops *ops;
	unsigned mtu;	  /* IP MTU, 68..65521 */
	uint8_t mac[6];	  /* this end's station address */
	char name[16];
	void *priv;	  /* the adapter's, or the owner's for custom links */
	uint64_t tx_frames, tx_bytes, rx_frames, rx_bytes, tx_errors;
};

int ns_link_transmit(struct ns_link *l, const void *frame, size_t len);
ssize_t ns_link_receive(struct ns_link *l, void *buf, size_t cap);
int ns_link_fd(struct ns_link *l);
void ns_link_destroy(struct ns_link *l);
/* A link around caller-supplied ops (ops and priv must outlive it). */
struct ns_link *ns_link_new(const struct ns_link_ops *ops, void *priv, unsigned mtu,
			    const uint8_t mac[6], const char *name);
/* Largest frame a link with this MTU carries: mtu + Ethernet header. */
#define NS_FRAME_MAX(mtu) ((size_t)(mtu) + 14)
/* Largest frame any link carries (MTU 65521 + headers, rounded up). */
#define NS_FRAME_BUF 65600

/* In-memory pair: a frame transmitted on one end is queued for receive on
 * the other. Each end's fd (eventfd) is readable while its queue is
 * non-empty. At most queue_max frames wait per direction (0: 4096); more
 * are dropped like a full NIC ring. MACs are 02:00:00:00:00:01 / :02
 * unless changed in the returned links. */
int ns_link_pair(unsigned mtu, unsigned queue_max, struct ns_link **a, struct ns_link **b);
uint64_t ns_link_pair_dropped(struct ns_link *l);

/* Linux TAP device (IFF_TAP | IFF_NO_PI, non-blocking). name may be "" for
 * a kernel-chosen name; the actual name is in link->name. The kernel side
 * is not configured (no address, not up): that is the caller's business.
 * On failure returns NULL with *err = -errno. */
struct ns_link *ns_link_tap_open(const char *name, unsigned mtu, int *err);
/* The same with virtio-net headers (IFF_VNET_HDR) and checksum and TSO4
 * offload, for a peer that is the local kernel. Received frames may be TCP
 * segments up to 64 KiB with partial checksums: to take them, give the
 * link mtu 65521 (the kernel side keeps its own MTU, so TCP segments sent
 * stay within the MSS it announces; larger UDP datagrams go out whole)
 * and add its interface with NS_IF_NO_CSUM_RX. Consecutive segments of a
 * TCP flow sent are coalesced into one GSO frame, written when the flow
 * changes, at ns_link_tap_vnet_flush() (after each event-loop round), or
 * at the latest by the link's poll, which the stack runs whenever it
 * computes its timeout. */
struct ns_link *ns_link_tap_vnet_open(const char *name, unsigned mtu, int *err);
void ns_link_tap_vnet_flush(struct ns_link *l);

/* GSO coalescing (what the offloading TAP does on transmit, for any peer
 * that takes virtio-net headers): consecutive full-sized segments of one
 * TCP flow fed to ns_gso_add grow into one frame up to 64 KiB, handed to
 * emit with a GSO TCPV4/TCPV6 header and a partial checksum when the flow
 * changes, a segment does not follow on, or at ns_gso_flush(); any other
 * frame is handed on at once (after what was held) with an all-zero
 * header. emit's return value is passed back (negative: -errno). */
struct virtio_net_hdr;
struct ns_gso;
typedef int (*ns_gso_emit_fn)(void *opaque, const struct virtio_net_hdr *h, const void *frame,
			      size_t len);
struct ns_gso *ns_gso_new(ns_gso_emit_fn emit, void *opaque);
void ns_gso_free(struct ns_gso *g); /* flushes first */
/* Which families may be grown (both by default): a peer that took only
 * TSO4 gets IPv6 segments one by one. Flushes first. */
void ns_gso_families(struct ns_gso *g, bool v4, bool v6);
int ns_gso_add(struct ns_gso *g, const void *frame, size_t len);
int ns_gso_flush(struct ns_gso *g);

/* Impairment adapter between a link and the stack: frames in both
 * directions are dropped, duplicated, reordered or delayed with a seeded
 * PRNG. Percentages are in 1/100 %; delay is added to every frame,
 * jitter is a uniform 0..jitter_us extra, and a reordered frame is held
 * back by reorder_us. Takes ownership of inner. */
struct ns_impair_cfg {
	unsigned loss_bp, dup_bp, reorder_bp; /* basis points: 100 = 1 % */
	uint64_t delay_us, jitter_us, reorder_us;
	uint64_t seed;
};
struct ns_link *ns_link_impair(struct ns_link *inner, struct ns_clock *clock,
			       const struct ns_impair_cfg *cfg);
struct ns_impair_stats {
	uint64_t dropped, duplicated, reordered, delayed;
};
void ns_link_impair_stats(struct ns_link *l, struct ns_impair_stats *st);

/* ---------------------------------------------------------------- stack */

struct ns_stack;

struct ns_stack_cfg {
	struct ns_clock *clock;	   /* NULL: monotonic */
	uint64_t seed;		   /* ISN / port / PRNG seed; 0: from getrandom */
	size_t reass_mem_max;	   /* fragment reassembly memory (0: 1 MiB) */
	unsigned reass_timeout_ms; /* 0: 30 s */
	unsigned arp_timeout_s;	   /* dynamic entry lifetime (0: 300 s) */
	unsigned tcp_max_conns;	   /* 0: 65536 */
};

struct ns_stack *ns_stack_new(const struct ns_stack_cfg *cfg);
/* Closes every socket and channel; links are destroyed by their owner. */
void ns_stack_free(struct ns_stack *st);

/* Interfaces: one per link, with a primary IPv4 address. */
#define NS_IF_ACCEPT_ANY (1u << 0) /* deliver IPv4 for any destination locally
				    * (for user-mode NAT: TCP/UDP to any
				    * address reaches wildcard listeners) */
#define NS_IF_NO_CSUM_RX (1u << 1) /* trust received checksums (offload) */
int ns_iface_add(struct ns_stack *st, struct ns_link *l, uint32_t addr, unsigned prefix_len,
		 unsigned flags);
/* Extra addresses the interface answers ARP and ICMP echo for
 * (e.g. usernet's gateway and DNS addresses). */
int ns_iface_add_alias(struct ns_stack *st, struct ns_link *l, uint32_t addr);
/* Routes: longest prefix wins; gw 0 means on-link. prefix_len 0 = default. */
int ns_route_add(struct ns_stack *st, uint32_t dst, unsigned prefix_len, uint32_t gw,
		 struct ns_link *l);
int ns_route_del(struct ns_stack *st, uint32_t dst, unsigned prefix_len);
/* The route lookup the stack uses; 0 and *next_hop, *l filled, or -ENETUNREACH. */
int ns_route_lookup(struct ns_stack *st, uint32_t dst, uint32_t *next_hop, struct ns_link **l);
int ns_arp_add_static(struct ns_stack *st, uint32_t addr, const uint8_t mac[6]);
/* 0 and mac filled when addr is resolved. */
int ns_arp_lookup(struct ns_stack *st, uint32_t addr, uint8_t mac[6]);

/* Process one received frame from link l (any length; bad frames are
 * counted and dropped). */
void ns_stack_input(struct ns_stack *st, struct ns_link *l, const void *frame, size_t len);
/* Pull and process up to max frames from every interface's link that has
 * a receive op; returns the number processed. */
int ns_stack_drain(struct ns_stack *st, int max);
/* Run due timers (retransmission, delayed ACK, ARP, reassembly,
 * impairment delay); returns the number of ms until the next one
 * (-1: none pending) — the event loop's poll() timeout. */
int ns_stack_poll(struct ns_stack *st);
int ns_stack_timeout_ms(struct ns_stack *st);
/* Microseconds until the next timer, UINT64_MAX when none. */
uint64_t ns_stack_next_timer_us(struct ns_stack *st);
/* eventfd readable when another thread changed what the event loop must
 * wait for (an earlier timer); read it, then call ns_stack_poll(). */
int ns_stack_fd(struct ns_stack *st);
struct ns_clock *ns_stack_clock(struct ns_stack *st);
/* A ready-made event loop step for simple users (netstack-host, tests):
 * poll() every link fd and ns_stack_fd() for up to timeout_ms (capped by
 * the next timer), then drain the links and run the timers. Returns the
 * number of frames processed or -errno. */
int ns_stack_run_once(struct ns_stack *st, int timeout_ms);

/* ------------------------------------------------------------------ IPv6 */

/* Turn IPv6 on for l's interface: a link-local address from the MAC
 * (modified EUI-64, RFC 4291), checked by DAD (RFC 4862, 1 s) before use.
 * NS_IF6_SLAAC: a host that solicits router advertisements and forms
 * addresses from their prefixes, default route from the router.
 * NS_IF6_NODAD: addresses are usable at once (no DAD probe).
 * -EINVAL on a link whose MTU is below IPv6's 1280. */
#define NS_IF6_SLAAC (1u << 0)
#define NS_IF6_NODAD (1u << 1)
#define NS_IF6_ROUTER (1u << 2) /* joins ff02::2 and ff02::1:2 (DHCPv6
				 * servers); advertises with ns_iface_ra() */
int ns_iface_ipv6(struct ns_stack *st, struct ns_link *l, unsigned flags);
/* A further address (and its on-link prefix route). */
int ns_iface_add6(struct ns_stack *st, struct ns_link *l, const uint8_t addr[16],
		  unsigned prefix_len);
/* The i-th usable (not tentative) IPv6 address of l; -ENOENT past the end. */
int ns_iface_get6(struct ns_stack *st, struct ns_link *l, unsigned i, uint8_t addr[16],
		  unsigned *prefix_len);
/* Be the link's router (with NS_IF6_ROUTER): advertise a prefix for
 * SLAAC (RFC 4861 6.2, RFC 4862) every interval and when solicited. */
struct ns_ra_cfg {
	uint8_t prefix[16];
	unsigned prefix_len;	    /* 64 for SLAAC */
	bool managed, other;	    /* M and O flags (DHCPv6) */
	unsigned router_lifetime_s; /* 0: 1800 */
	unsigned interval_s;	    /* between unsolicited RAs (0: 200) */
	uint8_t rdnss[16];	    /* RFC 8106 DNS server; :: = none */
	unsigned mtu;		    /* MTU option; 0: none */
};
int ns_iface_ra(struct ns_stack *st, struct ns_link *l, const struct ns_ra_cfg *cfg);
/* gw NULL: on-link. */
int ns_route6_add(struct ns_stack *st, const uint8_t dst[16], unsigned prefix_len,
		  const uint8_t gw[16], struct ns_link *l);
int ns_route6_lookup(struct ns_stack *st, const uint8_t dst[16], uint8_t next_hop[16],
		     struct ns_link **l);
/* A neighbour that never expires and is never probed (as ip neigh
 * add ... nud permanent); l must have IPv6 on. 0, -EINVAL, -ENOSPC. */
int ns_nd_add_static(struct ns_stack *st, struct ns_link *l, const uint8_t addr[16],
		     const uint8_t mac[6]);
/* 0 and mac filled when the neighbour is known (any state but INCOMPLETE). */
int ns_nd_lookup(struct ns_stack *st, const uint8_t addr[16], uint8_t mac[6]);
/* The path MTU the stack uses toward dst (learned from Packet Too Big). */
unsigned ns_pmtu6(struct ns_stack *st, const uint8_t dst[16]);

struct ns_stats {
	uint64_t rx_frames, rx_bad_eth, rx_bad_ip, rx_bad_csum, rx_no_proto;
	uint64_t ip6_rx, ip6_bad, ip6_reass_ok, ip6_reass_drop, ip6_frag_tx;
	uint64_t ip6_frag_chain_bad; /* first fragments without the header chain */
	uint64_t icmp6_rx, icmp6_tx, icmp6_err_tx, icmp6_ratelimited;
	uint64_t nd_rx, nd_tx, nd_drop_pending, dad_failed;
	uint64_t nd_redirects, nd_redirect_bad; /* applied; refused (RFC 4861 8.1) */
	uint64_t mld_tx, mld_query, mld_bad;	/* MLDv2 reports sent, queries in */
	uint64_t arp_rx, arp_tx, arp_drop_pending;
	uint64_t ip_reass_ok, ip_reass_drop, ip_frag_tx;
	uint64_t icmp_rx, icmp_tx, udp_rx, udp_tx, udp_no_port, udp_drop_full;
	uint64_t tcp_rx, tcp_tx, tcp_rexmit, tcp_fast_rexmit, tcp_rto, tcp_bad,
		tcp_rst_tx, tcp_challenge_ack, tcp_paws_drop, tcp_ooo_drop, tcp_syn_drop;
	size_t reass_mem, ooo_mem; /* bytes held now */
	unsigned tcp_conns;
};
void ns_stack_stats(struct ns_stack *st, struct ns_stats *out);

/* ------------------------------------------------------------ addresses */

/* family 0 (NS_AF_INET, what a zero-filled address is) uses addr;
 * NS_AF_INET6 uses addr6. A stream socket bound to :: (IPv6 any) is
 * dual-stack: it accepts IPv4 connections too, reported as IPv4. */
#define NS_AF_INET 0
#define NS_AF_INET6 10
struct ns_sockaddr {
	uint32_t addr; /* host byte order; 0 = any */
	uint16_t port; /* host byte order; 0 = any / ephemeral */
	uint16_t family;
	uint8_t addr6[16]; /* network byte order; :: = any */
};

/* "a.b.c.d" -> host-order address; 0 on success, -EINVAL. */
int ns_parse_addr(const char *s, uint32_t *addr);
/* "a.b.c.d/len"; "a.b.c.d:port". */
int ns_parse_cidr(const char *s, uint32_t *addr, unsigned *len);
/* "a.b.c.d:port" or "[v6]:port". */
int ns_parse_hostport(const char *s, struct ns_sockaddr *sa);
/* Formats into buf (>= 16 bytes), returns buf. */
char *ns_fmt_addr(uint32_t addr, char *buf);
/* IPv6 text forms (RFC 4291 2.2 in, RFC 5952 out; buf >= 46 bytes). */
int ns_parse_addr6(const char *s, uint8_t addr[16]);
int ns_parse_cidr6(const char *s, uint8_t addr[16], unsigned *len);
char *ns_fmt_addr6(const uint8_t addr[16], char *buf);
/* A sockaddr of either family from "a.b.c.d" or "v6" (port 0). */
int ns_parse_sockaddr(const char *s, struct ns_sockaddr *sa);

/* ------------------------------------------------------------- channels */

/* A netchannel: the seam between the protocol demux and its user. */
struct ns_chan;

#define NS_PROTO_ICMP 1
#define NS_PROTO_TCP 6
#define NS_PROTO_UDP 17
#define NS_PROTO_ICMPV6 58

/* Per-packet information for received packets and for sends that need to
 * choose addresses (a NAT answering for many addresses). */
struct ns_pktinfo {
	struct ns_sockaddr src, dst;
	uint8_t ttl, tos;
	uint8_t icmp_type, icmp_code; /* ICMP channels */
};

/* Create a datagram channel for UDP or ICMP. local.port 0 picks an
 * ephemeral port (UDP); local.addr 0 is any local address; remote NULL (or
 * all zero) is a wildcard remote; a channel with local {0, 0} and
 * remote NULL receives every datagram of that protocol no other channel
 * claims (NAT). ICMP channels receive echo replies, and echo requests for
 * addresses the stack does not answer itself (NS_IF_ACCEPT_ANY);
 * local.port/remote.port are the ICMP echo identifier. NS_PROTO_ICMPV6
 * channels are the same for ICMPv6 echo (the family of local, or of
 * remote, decides a channel's family; a UDP channel bound to :: hears
 * both families). *err = -errno. */
struct ns_chan *ns_chan_create(struct ns_stack *st, int proto, const struct ns_sockaddr *local,
			       const struct ns_sockaddr *remote, int *err);
/* Send one datagram to the channel's remote (-EDESTADDRREQ if wildcard). */
ssize_t ns_chan_send(struct ns_chan *ch, const void *buf, size_t len);
/* Send with explicit addresses: info->dst required; info->src.addr/port 0
 * means the channel's own. An ICMP channel sends buf as a complete ICMP
 * message (header included; the checksum is filled in). */
ssize_t ns_chan_sendto(struct ns_chan *ch, const void *buf, size_t len,
		       const struct ns_pktinfo *info);
/* Send one UDP datagram out of link l straight to the station dst_mac
 * (NULL: Ethernet broadcast), past the routing table and ARP: how a server
 * answers a host that has no address yet (DHCP, RFC 2131 4.1).
 * info->dst.addr may be the limited broadcast 255.255.255.255 or an address
 * no route covers; info->src.addr 0 means l's interface address. Datagrams
 * from such hosts (source 0.0.0.0) reach a channel bound to the port with
 * a wildcard remote like any other. -EOPNOTSUPP for non-UDP channels,
 * -ENODEV when l is not an interface of the stack. */
ssize_t ns_chan_sendto_link(struct ns_chan *ch, const void *buf, size_t len,
			    const struct ns_pktinfo *info, struct ns_link *l,
			    const uint8_t dst_mac[6]);
/* Receive one packet (truncated to cap; the full length is returned).
 * Blocks until one arrives or timeout_ms passes (-1: forever; 0: never
 * block -> -EAGAIN). info may be NULL. ICMP channels return the whole
 * ICMP message. */
ssize_t ns_chan_recv(struct ns_chan *ch, void *buf, size_t cap, struct ns_pktinfo *info,
		     int timeout_ms);
ssize_t ns_chan_recv_nb(struct ns_chan *ch, void *buf, size_t cap, struct ns_pktinfo *info);
/* eventfd readable while packets are queued (level: it is re-armed after
 * a receive leaves packets queued). */
int ns_chan_fd(struct ns_chan *ch);
/* Max queued packets before new ones are dropped (default 256). */
void ns_chan_set_queue_max(struct ns_chan *ch, unsigned max);
void ns_chan_close(struct ns_chan *ch);

/* -------------------------------------------------------------- sockets */

struct ns_sock;

#define NS_SOCK_STREAM 1
#define NS_SOCK_DGRAM 2

/* Event bits of ns_sock_events() */
#define NS_EV_IN 0x1	/* data, EOF or a pending connection to accept */
#define NS_EV_OUT 0x4	/* room in the send buffer / connect finished */
#define NS_EV_ERR 0x8	/* an error is pending (ns_sock_error) */
#define NS_EV_HUP 0x10	/* both directions closed */

/* send/recv flags */
#define NS_MSG_DONTWAIT 0x40
#define NS_MSG_PEEK 0x2
#define NS_MSG_WAITALL 0x100

/* shutdown how */
#define NS_SHUT_RD 0
#define NS_SHUT_WR 1
#define NS_SHUT_RDWR 2

/* Socket options (ns_setsockopt / ns_getsockopt, int values). */
enum ns_sockopt {
	NS_SO_NONBLOCK = 1,  /* 1: calls never block, -EAGAIN instead */
	NS_SO_SNDBUF,	     /* bytes; set before connect/listen */
	NS_SO_RCVBUF,	     /* bytes; set before connect/listen (sets wscale) */
	NS_SO_REUSEADDR,     /* allow bind over TIME-WAIT */
	NS_SO_KEEPALIVE,     /* 1: send keepalives */
	NS_TCP_NODELAY,	     /* 1: Nagle off */
	NS_TCP_MAXSEG,	     /* MSS to announce (clamped to the link MTU) */
	NS_TCP_KEEPIDLE,     /* s */
	NS_TCP_KEEPINTVL,    /* s */
	NS_TCP_KEEPCNT,	     /* probes */
	NS_TCP_SACK,	     /* 1 (default): offer/accept SACK */
	NS_TCP_TIMESTAMPS,   /* 1 (default): offer/accept RFC 7323 timestamps */
	NS_TCP_WSCALE,	     /* 1 (default): offer/accept window scaling */
	NS_TCP_DELACK,	     /* delayed-ACK timeout in ms (default 40; 0 = off) */
	NS_TCP_LINGER2,	     /* TIME-WAIT (2 MSL) in ms (default 60000) */
	NS_TCP_USER_TIMEOUT, /* ms unacknowledged before abort (default 120000) */
	NS_TCP_DEFER_ACCEPT, /* listener: accept() returns connections before
			      * the SYN-ACK is sent; ns_accept_complete() */
	NS_TCP_STATE,	     /* get only: enum ns_tcp_state */
	NS_SO_ERROR,	     /* get only: pending error (-errno), cleared */
	NS_SO_NREAD,	     /* get only: bytes readable */
	NS_SO_NWRITE,	     /* get only: bytes not yet acknowledged */
};

enum ns_tcp_state {
	NS_TCP_CLOSED,
	NS_TCP_LISTEN,
	NS_TCP_SYN_SENT,
	NS_TCP_SYN_RECEIVED,
	NS_TCP_ESTABLISHED,
	NS_TCP_FIN_WAIT_1,
	NS_TCP_FIN_WAIT_2,
	NS_TCP_CLOSE_WAIT,
	NS_TCP_CLOSING,
	NS_TCP_LAST_ACK,
	NS_TCP_TIME_WAIT,
};
const char *ns_tcp_state_name(int state);

/* All return -errno on failure (socket/accept: NULL with *err). */
struct ns_sock *ns_socket(struct ns_stack *st, int type, int *err);
/* addr 0 = any local address; port 0 = ephemeral. A stream socket bound
 * to {0, 0} and listening accepts connections to ANY address and port
 * that no other listener claims (usernet NAT); ns_getsockname() on the
 * accepted socket gives the original destination. */
int ns_bind(struct ns_sock *s, const struct ns_sockaddr *local);
int ns_listen(struct ns_sock *s, int backlog);
struct ns_sock *ns_accept(struct ns_sock *s, struct ns_sockaddr *peer, int *err);
/* With NS_TCP_DEFER_ACCEPT: finish the handshake of an accepted
 * connection (send the SYN-ACK), or refuse it: with a RST (icmp false) or
 * an ICMP unreachable of the given code (icmp true). */
int ns_accept_complete(struct ns_sock *s);
int ns_accept_refuse(struct ns_sock *s, bool icmp, uint8_t icmp_code);
/* Stream: 0, or -EINPROGRESS when non-blocking (NS_EV_OUT then
 * NS_SO_ERROR tell the outcome). Datagram: sets the default remote. */
int ns_connect(struct ns_sock *s, const struct ns_sockaddr *remote);
ssize_t ns_send(struct ns_sock *s, const void *buf, size_t len, int flags);
ssize_t ns_recv(struct ns_sock *s, void *buf, size_t len, int flags);
ssize_t ns_sendto(struct ns_sock *s, const void *buf, size_t len, int flags,
		  const struct ns_sockaddr *to);
ssize_t ns_recvfrom(struct ns_sock *s, void *buf, size_t len, int flags,
		    struct ns_sockaddr *from);
int ns_shutdown(struct ns_sock *s, int how);
/* Stream: graceful close (FIN after queued data); the connection lives on
 * in the stack until it finishes. */
int ns_close(struct ns_sock *s);
/* Close with a RST (SO_LINGER 0). */
int ns_abort(struct ns_sock *s);
int ns_setsockopt(struct ns_sock *s, int opt, int val);
int ns_getsockopt(struct ns_sock *s, int opt, int *val);
int ns_getsockname(struct ns_sock *s, struct ns_sockaddr *sa);
int ns_getpeername(struct ns_sock *s, struct ns_sockaddr *sa);

/* Readiness: the current NS_EV_* bits. */
unsigned ns_sock_events(struct ns_sock *s);
/* eventfd that becomes readable when new events arise (read it to clear,
 * then look at ns_sock_events()). Created on first call. */
int ns_sock_fd(struct ns_sock *s);
/* Callback run when new events arise, on the thread driving the stack,
 * after the stack lock is released (so it may call any ns_* function
 * without blocking). NULL removes it. */
typedef void (*ns_sock_cb)(struct ns_sock *s, unsigned events, void *ctx);
void ns_sock_set_callback(struct ns_sock *s, ns_sock_cb cb, void *ctx);

/* Zero-copy stream receive (the netchannel idea: the consumer takes the
 * bytes where the stack already has them). Two ways, usable together:
 *
 * Reading in place: ns_recv_peek() describes the readable bytes where
 * they sit in the receive ring, as up to two pieces (the second when the
 * ring wraps); ns_recv_consume() then releases the first n of them, with
 * the same window accounting as ns_recv() (the window opens and the
 * peer hears of it when worthwhile). The pieces stay valid until
 * ns_recv_consume(), ns_recv(), ns_close(), ns_abort() or ns_connect()
 * on this socket: the stack only ever appends behind them, even after a
 * RST. peek returns the total (iov[1].len is 0 unless wrapped), 0 at
 * EOF, or -errno as ns_recv() does (-EAGAIN: nothing yet); it never
 * blocks. consume returns 0, or -EINVAL when n exceeds what is readable.
 *
 * Direct delivery (libslirp's sbappend trick): with a reader set, an
 * in-order segment that arrives while nothing is buffered for reading
 * (and nothing out of order) is first offered to fn, straight from the
 * received frame, inside the stack (stack lock held, on the thread that
 * feeds it frames). fn returns how many of the len bytes it took
 * (0..len); the rest goes to the receive ring and is read as usual,
 * after which the next in-order segment is offered again once the ring
 * is empty, so order is kept. Bytes taken count as read at once: the
 * window does not shrink for them. fn must not call any ns_* function
 * of this stack. A consumer that takes everything (e.g. a relay whose
 * send() to a kernel socket succeeds) has no payload byte copied by
 * netstack at all. NULL removes the reader. */
struct ns_iov {
	const void *base;
	size_t len;
};
ssize_t ns_recv_peek(struct ns_sock *s, struct ns_iov iov[2]);
int ns_recv_consume(struct ns_sock *s, size_t n);
typedef size_t (*ns_reader_fn)(void *ctx, const void *data, size_t len);
int ns_sock_set_reader(struct ns_sock *s, ns_reader_fn fn, void *ctx);

struct ns_tcp_info {
	int state;
	uint32_t snd_mss, rcv_mss, cwnd, ssthresh, snd_wnd, rcv_wnd;
	uint32_t srtt_us, rttvar_us, rto_us;
	uint8_t snd_wscale, rcv_wscale;
	bool sack, timestamps;
	uint64_t retransmits, fast_retransmits, rto_timeouts, bytes_acked, bytes_received;
	/* Sequence space (RFC 9293 3.3.1): what a peer-side RST must carry
	 * to be accepted after this end is gone (usernet save/restore). */
	uint32_t snd_una, snd_nxt, snd_max, rcv_nxt;
};
int ns_tcp_info(struct ns_sock *s, struct ns_tcp_info *info);

/* Moving a connection to another stack (usernet save/restore; see
 * tcp_state.c for what is kept and what is rebuilt). Only ESTABLISHED and
 * CLOSE-WAIT connections that have sent no FIN move (-EINVAL otherwise).
 * ns_tcp_save fills x and gives malloc'd copies of the send ring (snd_len
 * bytes from snd_una: unacknowledged, then unsent) and of the unread
 * bytes (rcv_len); the caller frees them. ns_tcp_restore makes a socket
 * in st carrying the connection on (NULL with *err: -EINVAL for a state
 * that cannot be, -EADDRINUSE when the 4-tuple is taken). */
struct ns_tcp_snapshot {
	int state;			  /* NS_TCP_ESTABLISHED or NS_TCP_CLOSE_WAIT */
	struct ns_sockaddr local, remote;
	uint32_t snd_una, snd_max, snd_wnd, rcv_nxt, rcv_adv;
	uint32_t snd_mss, rcv_mss;
	uint8_t snd_wscale, rcv_wscale;
	bool ws_on, sack_on, ts_on;
	uint32_t ts_val, ts_recent; /* our next TSval, the peer's last */
	uint32_t srtt_us;	    /* 0: no sample */
	uint32_t sndbuf, rcvbuf;    /* ring sizes */
	uint32_t snd_len, rcv_len;
};
int ns_tcp_save(struct ns_sock *s, struct ns_tcp_snapshot *x, void **snd, void **rcv);
struct ns_sock *ns_tcp_restore(struct ns_stack *st, const struct ns_tcp_snapshot *x, const void *snd,
			       const void *rcv, int *err);

/* ------------------------------------------------------------- helpers */

/* Internet checksum (RFC 1071) of buf, folded, not complemented, added to
 * sum: ns_csum_fold(ns_csum_add(0, p, n)) == 0xffff for a valid header. */
uint32_t ns_csum_add(uint32_t sum, const void *buf, size_t len);
uint16_t ns_csum_fold(uint32_t sum);

#endif /* NETSTACK_H */
