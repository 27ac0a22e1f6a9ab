/* internal.h — netstack's private declarations shared by its files. */
#ifndef NETSTACK_INTERNAL_H
#define NETSTACK_INTERNAL_H

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "netstack/netstack.h"

#define NS_MAX_IFACES 8
#define NS_MAX_ALIASES 8
#define NS_MAX_ROUTES 64
#define NS_ARP_SIZE 256
#define NS_ARP_PENDING_MAX 8 /* packets queued per unresolved address */
#define NS_HEADROOM 64	     /* room in front of L4 data for IP + Ethernet */
#define NS_MAX_ADDR6 8	     /* IPv6 addresses per interface */
#define NS_ND_SIZE 256	     /* neighbour cache entries */
#define NS_PMTU6_SIZE 32     /* destinations with a learned path MTU */

/* -------------------------------------------------------------- addresses */

/* One address of either family: 16 bytes in network order, IPv4 as
 * ::ffff:a.b.c.d (IPv4-mapped, RFC 4291 2.5.5.2). One channel tree, one
 * TCP engine and one UDP layer serve both families with it. IPv4's "any"
 * is ::ffff:0.0.0.0; the all-zero :: is IPv6's any, which a dual-stack
 * listener binds (it then also hears IPv4, as Linux's v6only=0). */
struct ipaddr {
	uint32_t w[4];
};

static inline struct ipaddr ipa_v4(uint32_t host_order)
{
	struct ipaddr a = { { 0, 0, htonl(0xffff), htonl(host_order) } };

	return a;
}

static inline struct ipaddr ipa_v6(const uint8_t b[16])
{
	struct ipaddr a;

	memcpy(&a, b, 16);
	return a;
}

static inline bool ipa_is_v4(const struct ipaddr *a)
{
	return a->w[2] == htonl(0xffff) && !a->w[0] && !a->w[1];
}

static inline uint32_t ipa_v4_of(const struct ipaddr *a)
{
	return ntohl(a->w[3]);
}

/* The unspecified address of its family (0.0.0.0 or ::). */
static inline bool ipa_is_any(const struct ipaddr *a)
{
	return !a->w[3] && (ipa_is_v4(a) || (!a->w[0] && !a->w[1] && !a->w[2]));
}

static inline bool ipa_eq(const struct ipaddr *a, const struct ipaddr *b)
{
	return a->w[3] == b->w[3] && a->w[2] == b->w[2] && a->w[1] == b->w[1] &&
	       a->w[0] == b->w[0];
}

static inline const uint8_t *ipa_bytes(const struct ipaddr *a)
{
	return (const uint8_t *)a->w;
}

static inline bool ipa_is_multicast6(const struct ipaddr *a)
{
	return ipa_bytes(a)[0] == 0xff;
}

static inline bool ipa_is_linklocal6(const struct ipaddr *a)
{
	return ipa_bytes(a)[0] == 0xfe && (ipa_bytes(a)[1] & 0xc0) == 0x80;
}

/* The "any" address of a's family. */
static inline struct ipaddr ipa_any_like(const struct ipaddr *a)
{
	struct ipaddr z = { { 0, 0, 0, 0 } };

	return ipa_is_v4(a) ? ipa_v4(0) : z;
}

/* Public address <-> internal (family 0 / NS_AF_INET is IPv4); inline:
 * every datagram passes here twice. */
static inline struct ipaddr ipa_from_sa(const struct ns_sockaddr *sa)
{
	if (sa->family == NS_AF_INET6)
		return ipa_v6(sa->addr6);
	return ipa_v4(sa->addr);
}

static inline void ipa_to_sa(const struct ipaddr *a, uint16_t port, struct ns_sockaddr *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->port = port;
	if (ipa_is_v4(a)) {
		sa->addr = ipa_v4_of(a);
	} else {
		sa->family = NS_AF_INET6;
		memcpy(sa->addr6, a->w, 16);
	}
}

/* ------------------------------------------------------------ wire formats */

#define ETH_HLEN 14
#define ETHERTYPE_IP 0x0800
#define ETHERTYPE_ARP 0x0806
#define ETHERTYPE_IPV6 0x86dd

struct eth_hdr {
	uint8_t dst[6], src[6];
	uint16_t type;
} __attribute__((packed));

struct arp_pkt {
	uint16_t htype, ptype;
	uint8_t hlen, plen;
	uint16_t op;
	uint8_t sha[6];
	uint32_t spa;
	uint8_t tha[6];
	uint32_t tpa;
} __attribute__((packed));

struct ip_hdr {
	uint8_t vhl, tos;
	uint16_t len, id, off;
	uint8_t ttl, proto;
	uint16_t csum;
	uint32_t src, dst;
} __attribute__((packed));

#define IP_DF 0x4000
#define IP_MF 0x2000
#define IP_OFFMASK 0x1fff

struct udp_hdr {
	uint16_t sport, dport, len, csum;
} __attribute__((packed));

struct icmp_hdr {
	uint8_t type, code;
	uint16_t csum;
	uint16_t id, seq;
} __attribute__((packed));

#define ICMP_ECHOREPLY 0
#define ICMP_UNREACH 3
#define ICMP_ECHO 8
#define ICMP_TIMXCEED 11
#define ICMP_UNREACH_NET 0
#define ICMP_UNREACH_HOST 1
#define ICMP_UNREACH_PROTO 2
#define ICMP_UNREACH_PORT 3
#define ICMP_UNREACH_NEEDFRAG 4

/* ICMPv6 (RFC 4443, 4861) */
#define ICMP6_UNREACH 1
#define ICMP6_PKTTOOBIG 2
#define ICMP6_TIMXCEED 3
#define ICMP6_PARAMPROB 4
#define ICMP6_ECHO 128
#define ICMP6_ECHOREPLY 129
#define ND_RS 133
#define ND_RA 134
#define ND_NS 135
#define ND_NA 136
#define ND_REDIRECT 137
#define ICMP6_MLD_QUERY 130
#define ICMP6_UNREACH_NOROUTE 0
#define ICMP6_UNREACH_ADMIN 1
#define ICMP6_UNREACH_ADDR 3
#define ICMP6_UNREACH_PORT 4
/* parameter problem codes (RFC 4443 3.4) */
#define PP_HEADER 0
#define PP_NEXTHDR 1
#define PP_OPTION 2
#define PP_CHAIN 3 /* first fragment lacks the header chain (RFC 7112) */

struct tcp_hdr {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t off, flags;
	uint16_t win, csum, urp;
} __attribute__((packed));

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_PSH 0x08
#define TH_ACK 0x10
#define TH_URG 0x20

/* ------------------------------------------------------------------ timers */

struct ns_stack;
struct ns_timer;
typedef void (*ns_timer_fn)(struct ns_stack *st, struct ns_timer *t);

struct ns_timer {
	uint64_t when; /* µs on the stack clock */
	int idx;       /* heap slot, -1 when not armed */
	ns_timer_fn fn;
};

void timer_init(struct ns_timer *t, ns_timer_fn fn);
void timer_arm(struct ns_stack *st, struct ns_timer *t, uint64_t when_us);
void timer_arm_in(struct ns_stack *st, struct ns_timer *t, uint64_t delay_us);
void timer_cancel(struct ns_stack *st, struct ns_timer *t);
static inline bool timer_armed(const struct ns_timer *t)
{
	return t->idx >= 0;
}

/* ---------------------------------------------------------------- waiting */

/* What a socket or channel user waits on: a condvar on the stack lock, an
 * optional eventfd and an optional callback run after the lock drops. */
struct ns_waitq {
	pthread_cond_t cv;
	int efd;	     /* -1 until asked for */
	bool efd_signalled;
	ns_sock_cb cb;
	void *cb_ctx;
	struct ns_sock *cb_sock;
	bool cb_pending;
	struct ns_waitq *next_pending;
};

void waitq_init(struct ns_waitq *wq);
void waitq_destroy(struct ns_stack *st, struct ns_waitq *wq);
/* Something changed: wake sleepers, signal the fd, queue the callback. */
void waitq_notify(struct ns_stack *st, struct ns_waitq *wq);
/* Sleep on wq with the stack lock held until notified or deadline_ms
 * passes (-1: forever); -ETIMEDOUT on timeout. Real time, not stack time. */
int waitq_wait(struct ns_stack *st, struct ns_waitq *wq, int timeout_ms);
int waitq_fd(struct ns_waitq *wq);
void waitq_clear_fd(struct ns_waitq *wq);

/* ---------------------------------------------------------------- packets */

/* A queued datagram (channel receive queues, ARP pending, reassembly). */
struct ns_pkt {
	struct ns_pkt *next;
	struct ns_pktinfo info;
	size_t len;
	uint8_t *data; /* points into buf */
	size_t cap;
	uint8_t buf[];
};

struct ns_pkt *pkt_alloc(struct ns_stack *st, size_t len);
void pkt_free(struct ns_stack *st, struct ns_pkt *p);

/* --------------------------------------------------------------- channels */

struct chan_key {
	uint8_t proto;
	struct ipaddr laddr, raddr;
	uint16_t lport, rport;
};

int chan_key_cmp(const struct chan_key *a, const struct chan_key *b);

struct ns_chan {
	struct ns_chan *left, *right; /* AVL tree */
	int height;
	bool in_tree;
	struct chan_key key;
	struct ns_stack *st;
	struct ns_waitq *wq; /* own_wq, or the owning socket's */
	struct ns_waitq own_wq;
	/* datagram channels */
	struct ns_pkt *qhead, *qtail;
	unsigned qlen, qmax;
	/* stream channels: the TCP connection */
	struct tcb *tcb;
	struct ns_sock *sock; /* owning socket, if any */
	bool closed;
};

void chan_tree_insert(struct ns_stack *st, struct ns_chan *ch);
void chan_tree_remove(struct ns_stack *st, struct ns_chan *ch);
struct ns_chan *chan_tree_find(struct ns_stack *st, const struct chan_key *k);
/* The demux: exact, then bound-local with wildcard remote, then any-local,
 * then the protocol's catch-all. */
struct ns_chan *chan_lookup(struct ns_stack *st, uint8_t proto, const struct ipaddr *laddr,
			    uint16_t lport, const struct ipaddr *raddr, uint16_t rport);
/* Ephemeral port free for (proto, laddr); 0 when exhausted. */
uint16_t chan_ephemeral_port(struct ns_stack *st, uint8_t proto, const struct ipaddr *laddr);
bool chan_port_in_use(struct ns_stack *st, uint8_t proto, const struct ipaddr *laddr,
		      uint16_t lport);
struct ns_chan *chan_new(struct ns_stack *st, const struct chan_key *k);
void chan_free(struct ns_stack *st, struct ns_chan *ch);
/* Queue a datagram (copied) on a channel; false when the queue is full. */
bool chan_deliver(struct ns_stack *st, struct ns_chan *ch, const void *data, size_t len,
		  const struct ns_pktinfo *info);
ssize_t chan_recv_locked(struct ns_chan *ch, void *buf, size_t cap, struct ns_pktinfo *info,
			 bool peek);
ssize_t chan_sendto_locked(struct ns_chan *ch, const void *buf, size_t len,
			   const struct ns_pktinfo *info);
void chan_close_locked(struct ns_chan *ch);
/* Debug / test helper: checks AVL balance, returns height or -1. */
int chan_tree_check(struct ns_stack *st);

/* ------------------------------------------------------------------ stack */

/* An IPv6 address of an interface (RFC 4862 states). */
enum { ADDR6_FREE, ADDR6_TENTATIVE, ADDR6_PREFERRED, ADDR6_DUPLICATE };

struct ns_ifaddr6 {
	struct ipaddr addr;
	uint8_t plen, state;
	uint8_t dad_left;    /* DAD probes still to send */
	bool autoconf;	     /* from SLAAC: expires */
	uint64_t dad_at;     /* µs: next DAD step */
	uint64_t valid_until; /* µs, UINT64_MAX: forever */
};

struct ns_iface {
	struct ns_link *link;
	uint32_t addr, mask;
	uint32_t aliases[NS_MAX_ALIASES];
	unsigned naliases;
	unsigned flags;
	int index;
	/* IPv6: off until ns_iface_ipv6() */
	bool v6;
	unsigned v6flags; /* NS_IF6_* */
	struct ns_ifaddr6 addr6[NS_MAX_ADDR6];
	unsigned mtu6;	   /* from an RA's MTU option, else the link's */
	uint8_t hop_limit; /* from RAs (0: 64) */
	uint8_t rs_left;   /* router solicitations still to send */
	uint64_t rs_at;
	/* router advertisements we send (ns_iface_ra) */
	bool ra_on;
	struct ns_ra_cfg ra;
	uint64_t ra_next, ra_last;
};

struct ns_route6 {
	struct ipaddr dst, gw; /* gw :: = on-link */
	unsigned len;
	struct ns_iface *ifc;
	uint64_t expires; /* UINT64_MAX: static */
};

/* Neighbour cache entry (RFC 4861 7.3.2). */
enum { ND_FREE, ND_INCOMPLETE, ND_REACHABLE, ND_STALE, ND_DELAY, ND_PROBE, ND_STATIC };

struct nd_entry {
	struct ipaddr addr;
	uint8_t mac[6];
	uint8_t state, probes;
	bool router;
	uint64_t when; /* µs: state timer (retransmit, reachable end, delay end) */
	struct ns_iface *ifc;
	struct ns_pkt *pending;
	unsigned npending;
};

struct pmtu6 {
	struct ipaddr dst;
	unsigned mtu;
	uint64_t expires;
};

struct ns_route {
	uint32_t dst, mask;
	unsigned len;
	uint32_t gw;
	struct ns_iface *ifc;
};

struct arp_entry {
	uint32_t addr;
	uint8_t mac[6];
	uint8_t state; /* ARP_FREE, ARP_PENDING, ARP_OK, ARP_STATIC */
	uint8_t tries;
	uint64_t expires;  /* µs: OK entries expire, PENDING ones retry */
	struct ns_iface *ifc;
	struct ns_pkt *pending; /* IP packets waiting for resolution */
	unsigned npending;
};

enum { ARP_FREE, ARP_PENDING, ARP_OK, ARP_STATIC };

struct reass;

struct ns_stack {
	pthread_mutex_t lock;
	struct ns_clock *clock;
	bool own_clock;
	uint64_t now; /* µs, refreshed on every entry */
	uint64_t rng;
	int efd;      /* ns_stack_fd */
	bool in_loop; /* event-loop thread is inside the stack */

	struct ns_iface ifaces[NS_MAX_IFACES];
	unsigned nifaces;
	struct ns_route routes[NS_MAX_ROUTES];
	unsigned nroutes;

	struct ns_route6 routes6[NS_MAX_ROUTES];
	unsigned nroutes6;
	struct nd_entry nd[NS_ND_SIZE];
	unsigned nd_hint; /* the entry found last */
	struct ns_timer nd_timer; /* neighbours, DAD, router solicitations */
	struct pmtu6 pmtu6[NS_PMTU6_SIZE];
	unsigned npmtu6; /* entries ever used: none, no search */
	uint32_t ip6_id;
	uint64_t icmp6_err_sec; /* ICMPv6 errors sent in this second */
	unsigned icmp6_err_n;

	struct arp_entry arp[NS_ARP_SIZE];
	struct ns_timer arp_timer;
	unsigned arp_timeout_s;

	struct reass *reass;
	size_t reass_mem, reass_mem_max;
	unsigned reass_count;
	unsigned reass_timeout_ms;
	struct ns_timer reass_timer;

	struct ns_timer **heap;
	unsigned heap_len, heap_cap;

	struct ns_chan *chans; /* AVL root */
	struct chan_key lk_key; /* chan_lookup's last question and answer */
	struct ns_chan *lk_ch;
	unsigned nchans;
	uint16_t next_port;
	uint16_t ip_id;

	struct tcb *tcbs; /* every live connection */
	unsigned ntcbs, tcp_max_conns;
	uint32_t isn_secret[4];
	uint64_t tcp_chack_sec; /* challenge ACKs sent in this second */
	unsigned tcp_chack_n;

	struct ns_waitq *pending_cb; /* callbacks to run after unlocking */

	struct ns_pkt *pkt_pool;
	unsigned pkt_pool_len;

	uint8_t *tx;   /* scratch frame for building output */
	uint8_t *frag; /* scratch for fragments */
	uint8_t *rx;   /* scratch for ns_stack_drain */

	struct ns_stats stats;
};

/* Take / drop the stack lock; leaving runs pending callbacks. */
void stack_enter(struct ns_stack *st);
void stack_leave(struct ns_stack *st);
uint64_t stack_rand(struct ns_stack *st);
void stack_run_timers(struct ns_stack *st);
void stack_timer_changed(struct ns_stack *st);

struct ns_iface *iface_of_link(struct ns_stack *st, struct ns_link *l);
bool iface_is_local(struct ns_stack *st, uint32_t addr);
/* The source address to use toward dst (primary address of its iface). */
uint32_t iface_src_for(struct ns_stack *st, uint32_t dst);

/* ------------------------------------------------------------- protocols */

/* A received IPv4 datagram, after header validation and reassembly. */
struct ip_rx {
	struct ns_iface *ifc;
	const uint8_t *ip; /* IP header */
	size_t iplen;	   /* header + payload */
	const uint8_t *l4;
	size_t l4len;
	uint32_t src, dst; /* IPv4 only */
	struct ipaddr saddr, daddr; /* both families */
	uint8_t proto, ttl, tos;
	bool local; /* dst is one of our addresses (not NS_IF_ACCEPT_ANY) */
	bool v6;
	bool mcast; /* IPv6: sent to a multicast group */
	bool frag;  /* IPv6: came in fragments */
};

void ether_input(struct ns_stack *st, struct ns_iface *ifc, const uint8_t *f, size_t len);
extern const uint8_t ether_broadcast[6]; /* ff:ff:ff:ff:ff:ff */
/* Frame at f has ETH_HLEN bytes free in front of l3 (f = l3 - ETH_HLEN). */
int ether_output(struct ns_stack *st, struct ns_iface *ifc, const uint8_t dst[6], uint16_t type,
		 uint8_t *l3, size_t l3len);

void arp_input(struct ns_stack *st, struct ns_iface *ifc, const uint8_t *p, size_t len);
/* Send an IP packet (l3 with ETH_HLEN headroom) to next_hop; queues a copy
 * when the address is not resolved yet. */
int arp_output(struct ns_stack *st, struct ns_iface *ifc, uint32_t next_hop, uint8_t *l3,
	       size_t l3len);
void arp_init(struct ns_stack *st);
void arp_flush(struct ns_stack *st);

void ip_input(struct ns_stack *st, struct ns_iface *ifc, const uint8_t *p, size_t len);
/* Send l4 (l4len bytes with NS_HEADROOM writable bytes in front) as an IP
 * datagram; fragments when bigger than the MTU unless df. */
int ip_output(struct ns_stack *st, uint32_t src, uint32_t dst, uint8_t proto, uint8_t ttl,
	      uint8_t tos, uint8_t *l4, size_t l4len, bool df);
/* Same, out of ifc straight to the station mac (NULL: Ethernet broadcast),
 * without a route or ARP: for hosts that have no address yet (DHCP). */
int ip_output_link(struct ns_stack *st, struct ns_iface *ifc, const uint8_t mac[6], uint32_t src,
		   uint32_t dst, uint8_t proto, uint8_t *l4, size_t l4len);
/* Largest L4 payload for dst without fragmenting. */
unsigned ip_mtu_to(struct ns_stack *st, uint32_t dst);
void reass_init(struct ns_stack *st);
void reass_flush(struct ns_stack *st);
/* Reassembly: returns a complete datagram (malloc'd, caller frees) or NULL. */
uint8_t *reass_add(struct ns_stack *st, const struct ip_hdr *ih, const uint8_t *payload,
		   size_t plen, size_t *out_len);
/* Copy len bytes and return ns_csum_add(sum, src, len) from one pass. */
uint32_t ns_csum_copy(uint32_t sum, void *dst, const void *src, size_t len);
/* A sum of bytes that start at an odd offset of the checksummed data,
 * folded and byte-swapped into place (RFC 1071 2(B)). */
uint32_t ns_csum_swab(uint32_t sum);
uint16_t ip_pseudo_csum_fold(uint32_t src, uint32_t dst, uint8_t proto, const void *l4,
			     size_t len);
/* The same for an L4 datagram of len bytes whose first hlen (even) bytes
 * are at hdr and whose rest was summed already into rest_sum, e.g. while
 * it was copied into place (ns_csum_copy, ring_get_csum). */
uint16_t ip_pseudo_csum_fold_sum(uint32_t src, uint32_t dst, uint8_t proto, const void *hdr,
				 size_t hlen, size_t len, uint32_t rest_sum);

/* Reassembly key and piece, for either family. hdr/hlen: the header to
 * put in front of the whole datagram (from the first fragment). */
struct reass_piece {
	struct ipaddr src, dst;
	uint32_t id;
	uint8_t proto;
	bool v6, more;
	unsigned off;
	const uint8_t *hdr;
	unsigned hlen;
	const uint8_t *payload;
	size_t plen;
};
uint8_t *reass_add_piece(struct ns_stack *st, const struct reass_piece *pc, size_t *out_len);

/* ------------------------------------------------------------------ IPv6 */

void ip6_input(struct ns_stack *st, struct ns_iface *ifc, const uint8_t *p, size_t len);
/* Send l4 (NS_HEADROOM writable bytes in front) as an IPv6 packet; src ::
 * picks one; fragments when bigger than the path MTU unless df. */
int ip6_output(struct ns_stack *st, const struct ipaddr *src, const struct ipaddr *dst,
	       uint8_t proto, uint8_t hlim, uint8_t *l4, size_t l4len, bool df);
/* The same out of ifc to dst (a link-local or multicast address) with
 * no route lookup (ND, RAs); src is used as given (:: for DAD), NULL
 * picks one. */
int ip6_output_if(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *src,
		  const struct ipaddr *dst, uint8_t proto, uint8_t hlim, uint8_t *l4,
		  size_t l4len);
unsigned ip6_mtu_to(struct ns_stack *st, const struct ipaddr *dst);
void ip6_pmtu_learn(struct ns_stack *st, const struct ipaddr *dst, unsigned mtu);
int route6_lookup(struct ns_stack *st, const struct ipaddr *dst, struct ipaddr *nh,
		  struct ns_iface **ifc);
int route6_add_locked(struct ns_stack *st, const struct ipaddr *dst, unsigned len,
		      const struct ipaddr *gw, struct ns_iface *ifc, uint64_t expires);
void route6_expire_gw(struct ns_stack *st, const struct ipaddr *gw);
/* Ours and usable (not tentative). */
bool ip6_is_local(struct ns_stack *st, const struct ipaddr *a);
struct ns_ifaddr6 *ip6_ifaddr(struct ns_iface *ifc, const struct ipaddr *a);
/* The source address toward dst (RFC 6724, reduced to scope matching). */
bool ip6_src_for(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *dst,
		 struct ipaddr *src);
/* ff02::1:ffXX:XXXX of a. */
struct ipaddr ip6_solicited_node(const struct ipaddr *a);
uint32_t ip6_pseudo_sum(const struct ipaddr *src, const struct ipaddr *dst, uint8_t proto,
			size_t len);
int ip6_addr_add_locked(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *a,
			unsigned plen, bool dad, bool autoconf, uint64_t valid_until);

void icmp6_input(struct ns_stack *st, const struct ip_rx *rx);
/* An ICMPv6 error about the packet at pkt (RFC 4443 2.4 rules, rate
 * limited); param is the pointer / MTU field. */
void icmp6_send_error(struct ns_stack *st, struct ns_iface *ifc, const uint8_t *pkt,
		      size_t len, uint8_t type, uint8_t code, uint32_t param);
/* The destination unreachable code nearest an IPv4 one. */
uint8_t icmp6_unreach_code(uint8_t v4_code);
/* Checksum an ICMPv6 message and send it (ifc NULL: routed). */
int icmp6_send(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *src,
	       const struct ipaddr *dst, uint8_t *msg, size_t len, uint8_t hlim);

void nd6_init(struct ns_stack *st);
void nd6_flush(struct ns_stack *st);
void nd6_input(struct ns_stack *st, const struct ip_rx *rx, uint8_t type);
/* Send an IPv6 packet (l3, ETH_HLEN headroom) to next hop nh on ifc,
 * resolving it; queues a bounded number while INCOMPLETE. */
int nd6_output(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *nh, uint8_t *l3,
	       size_t l3len);
/* The interface got IPv6 or a new address: DAD, RS, timers. */
void nd6_kick(struct ns_stack *st);
/* ra6.c: a router's advertisements. An RS arrived on ifc; send the due
 * RAs and return the earlier of next and the next one due. */
void nd6_router_solicited(struct ns_stack *st, struct ns_iface *ifc);
uint64_t nd6_router_tick(struct ns_stack *st, uint64_t next);
/* mld6.c: MLDv2 listener reports. Is ifc in group; tell the link ifc
 * joined it (call once the group is new); a Query arrived. */
bool mld6_listening(const struct ns_iface *ifc, const struct ipaddr *group);
void mld6_join_report(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *group);
void mld6_join_router_groups(struct ns_stack *st, struct ns_iface *ifc);
void mld6_query_input(struct ns_stack *st, const struct ip_rx *rx);
/* addr6.c: apply a validated Redirect from router `from`. */
int route6_redirect_locked(struct ns_stack *st, const struct ipaddr *from,
			   const struct ipaddr *target, const struct ipaddr *dst);
/* Tell the link a new address is ours (unsolicited NA, RFC 4861 7.2.6). */
void nd6_announce(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *a);

/* ------------------------------------------------ either family (l3.c) */

bool ipa_is_local(struct ns_stack *st, const struct ipaddr *a);
/* 0 and *src, or -ENETUNREACH. */
int ipa_src_for(struct ns_stack *st, const struct ipaddr *dst, struct ipaddr *src);
bool ipa_routable(struct ns_stack *st, const struct ipaddr *dst);
/* Largest L4 payload toward dst without fragmenting. */
unsigned ipa_mtu_to(struct ns_stack *st, const struct ipaddr *dst);
uint16_t ipa_pseudo6_fold_sum(const struct ipaddr *src, const struct ipaddr *dst, uint8_t proto,
			      const void *hdr, size_t hlen, size_t len, uint32_t rest_sum);

/* The two below are inline: IPv4 pays one branch for IPv6's existence. */
static inline uint16_t ipa_pseudo_csum_fold_sum(const struct ipaddr *src,
						const struct ipaddr *dst, uint8_t proto,
						const void *hdr, size_t hlen, size_t len,
						uint32_t rest_sum)
{
	if (ipa_is_v4(src))
		return ip_pseudo_csum_fold_sum(src->w[3], dst->w[3], proto, hdr, hlen, len,
					       rest_sum);
	return ipa_pseudo6_fold_sum(src, dst, proto, hdr, hlen, len, rest_sum);
}

static inline int ipa_output(struct ns_stack *st, const struct ipaddr *src,
			     const struct ipaddr *dst, uint8_t proto, uint8_t ttl, uint8_t tos,
			     uint8_t *l4, size_t l4len, bool df)
{
	if (ipa_is_v4(dst))
		return ip_output(st, ipa_v4_of(src), ipa_v4_of(dst), proto, ttl, tos, l4, l4len,
				 df);
	return ip6_output(st, src, dst, proto, ttl, l4, l4len, df);
}

/* What an ICMP(v6) error told about one of our datagrams. */
enum ipa_err {
	IPA_ERR_SOFT,	    /* host/net unreachable, time exceeded... */
	IPA_ERR_NET,	    /* network unreachable */
	IPA_ERR_REFUSED,    /* port/protocol unreachable */
	IPA_ERR_NEEDFRAG,   /* fragmentation needed / packet too big */
};

void icmp_input(struct ns_stack *st, const struct ip_rx *rx);
/* Send an ICMP error about the received datagram rx (RFC 1122 rules: never
 * about ICMP errors, broadcasts or non-first fragments). */
void icmp_send_error(struct ns_stack *st, const struct ip_rx *rx, uint8_t type, uint8_t code);
/* Same, for a datagram we only have the header and first bytes of. */
void icmp_send_error_raw(struct ns_stack *st, uint32_t src_of_error, const uint8_t *orig_ip,
			 size_t orig_len, uint8_t type, uint8_t code);

void udp_input(struct ns_stack *st, const struct ip_rx *rx);
int udp_output(struct ns_stack *st, const struct ipaddr *src, uint16_t sport,
	       const struct ipaddr *dst, uint16_t dport, const void *data, size_t len);
void udp_icmp_error(struct ns_stack *st, const uint8_t *orig_ip, size_t len, uint8_t type,
		    uint8_t code);

void tcp_input(struct ns_stack *st, const struct ip_rx *rx);
/* l4: the quoted TCP header (>= 8 bytes) of a segment laddr -> raddr. */
void tcp_icmp_error(struct ns_stack *st, const struct ipaddr *laddr, const struct ipaddr *raddr,
		    const uint8_t *l4, enum ipa_err err, unsigned mtu);
void tcp_init(struct ns_stack *st);
void tcp_free_all(struct ns_stack *st);

/* Sockets (socket.c). */
void sock_notify(struct ns_stack *st, struct ns_sock *s);
unsigned sock_events_locked(struct ns_sock *s);
void sock_ref(struct ns_sock *s);
void sock_unref(struct ns_sock *s);
void sock_free_all(struct ns_stack *st);
/* Offer in-order stream bytes to the socket's reader (direct delivery);
 * how many it took, 0 without a reader. */
uint32_t sock_read_direct(struct ns_sock *s, const void *data, uint32_t len);

static inline uint32_t prefix_mask(unsigned len)
{
	return len == 0 ? 0 : 0xffffffffu << (32 - len);
}

#endif /* NETSTACK_INTERNAL_H */
