/* backend.h — the netstack implementation of usernet, shared by
 * netstack_backend.c (frames, DHCP, event loop), udp_nat.c (UDP, DNS,
 * ICMP, UDP forwards) and tcp_nat.c (TCP NAT and TCP forwards). */
#ifndef USERNET_BACKEND_H
#define USERNET_BACKEND_H

#include "netstack/netstack.h"
#include "netstack/usernet/internal.h"

struct un_ns;
struct un_watch;

/* An fd in the backend's epoll set; data.ptr points here. */
typedef void (*un_watch_fn)(struct un_ns *n, struct un_watch *w, uint32_t events);
struct un_watch {
	un_watch_fn fn;
	int fd;
	uint32_t events; /* current interest */
};

int un_watch_add(struct un_ns *n, struct un_watch *w, int fd, uint32_t events, un_watch_fn fn);
void un_watch_set(struct un_ns *n, struct un_watch *w, uint32_t events);
/* Removes from epoll and closes the fd. */
void un_watch_close(struct un_ns *n, struct un_watch *w);

struct un_fwd;
struct un_tcp_flow;
struct un_reset;

#define UN_MAX_RESOLVERS 3

struct un_ns {
	struct usernet_cfg cfg;
	struct usernet_stats stats;
	struct ns_clock *clock;
	struct ns_stack *st;
	struct ns_link *link;
	int epfd;
	struct un_watch stack_w;
	struct dhcp_server dhcp;
	struct ns_chan *dhcp_ch; /* UDP port 67, any source (0.0.0.0 too) */
	uint8_t *scratch;	 /* NS_FRAME_BUF bytes */
	bool input_pending;	 /* frames came in since the last poll */

	/* UDP and ICMP */
	struct ns_chan *udp_all, *icmp_all;
	struct ns_chan *udp6_all, *icmp6_all; /* NULL with ipv6_off */
	struct ns_chan *dhcp6_ch;	      /* UDP port 547 */
	struct ns_sock *tcp6_listener;
	struct nat_table udp; /* outbound UDP, ICMP echo and UDP-forward peers */
	struct ns_sockaddr resolvers[UN_MAX_RESOLVERS]; /* either family */
	uint16_t resolver_port;
	unsigned nresolvers, next_resolver;

	/* TCP */
	struct ns_sock *tcp_listener;
	struct un_tcp_flow *tcp_flows; /* every flow */
	struct un_tcp_flow *tcp_ready; /* flows with new socket events */
	unsigned tcp_count;
	uint64_t rate_window_us; /* connection-rate limit: 1 s windows */
	unsigned rate_count;

	struct un_fwd *fwds;
	bool fwd_wait;	       /* forwards stay unbound until a load (fwd.c) */
	uint64_t fwd_retry_us; /* when to try the busy ports again */

	/* Restored connections whose host side is gone (state.c): each
	 * gets a RST at the next poll. */
	struct un_reset *resets;
	unsigned nresets;
	bool handed_over; /* usernet_hand_over: the guest is elsewhere now */
};

static inline uint64_t un_now(struct un_ns *n)
{
	return ns_clock_now(n->clock);
}

/* Where a guest's packet to dst goes on the host: the host socket
 * address for the guest's dst (the gateway reaches 127.0.0.1, the IPv6
 * host address ::1, either DNS address port 53 the next resolver of
 * whichever family); false when it must not leave (other virtual hosts,
 * broadcasts, disabled loopback). */
#include <sys/socket.h>
bool un_map_host(struct un_ns *n, const struct ns_sockaddr *dst, struct sockaddr_storage *out,
		 socklen_t *len, bool *is_dns);
/* An address the guest may send from on the IPv6 LAN. */
bool un_guest6_ok(struct un_ns *n, const uint8_t a[16]);

/* state.c: save/load (usernet_save/usernet_load) and the RSTs a load
 * leaves to send. */
int un_state_save(void *impl, void **buf, size_t *len, int **fds, unsigned *nfds, char *err,
		  size_t errlen);
int un_state_load(void *impl, const void *buf, size_t len, const int *fds, unsigned nfds,
		  char *err, size_t errlen);
void un_state_hand_over(void *impl);
void un_state_send_resets(struct un_ns *n);

/* udp_nat.c */
int un_udp_init(struct un_ns *n, char *err, size_t errlen);
void un_udp_fini(struct un_ns *n);
/* Drain the UDP and ICMP catch-all channels after input. */
void un_udp_service(struct un_ns *n);
/* Close idle flows; returns ms until the next one may expire (-1 none). */
int un_udp_expire(struct un_ns *n);
int un_udp_fwd(struct un_ns *n, bool add, const struct usernet_fwd *f, char *err, size_t errlen);

/* tcp_nat.c */
int un_tcp_init(struct un_ns *n);
void un_tcp_fini(struct un_ns *n);
/* Run the flows whose sockets signalled; false when some are left over. */
bool un_tcp_service(struct un_ns *n);
int un_tcp_fwd(struct un_ns *n, bool add, const struct usernet_fwd *f, char *err, size_t errlen);
/* A relaying flow as save and load see it (state.c). */
struct un_flow_view {
	struct ns_sock *s; /* guest side */
	int fd;		   /* host socket */
	bool fwd, host_unwatched, g2h_eof, g2h_shut, h2g_eof, h2g_shut;
	const uint8_t *h2g; /* host -> guest bytes not yet written to s */
	size_t h2g_len;
};
/* Calls fn for every relaying flow. */
void un_tcp_each_open(struct un_ns *n, void (*fn)(void *ctx, const struct un_flow_view *v),
		      void *ctx);
/* Relay v from now on (a restored guest socket and its host fd, both
 * owned by the flow from now on, even on failure). 0 or -errno. */
int un_tcp_adopt(struct un_ns *n, const struct un_flow_view *v);
/* Let go of every host socket without RST or FIN (usernet_hand_over). */
void un_tcp_hand_over(struct un_ns *n);

/* fwd.c: forwards, both protocols. A bound (listening) host socket, or
 * -errno with err filled; add or remove a forward whose host socket calls
 * fn (with fwd_wait set, an added forward waits unbound). */
int un_fwd_socket(const struct usernet_fwd *f, char *err, size_t errlen);
/* Whether two rules name the same host socket (protocol, address, port). */
bool un_fwd_same_host(const struct usernet_fwd *a, const struct usernet_fwd *b);
int un_fwd_change(struct un_ns *n, bool add, const struct usernet_fwd *f, un_watch_fn fn, char *err,
		  size_t errlen);
/* A saved forward on a loading usernet: when fd (dup'd; -1 none) is a
 * socket of its kind, it serves this usernet's unbound rule for that
 * host port, or a rule of its own when there is none (one added at run
 * time on the source); without fd nothing changes. 0 or -errno. */
int un_fwd_adopt(struct un_ns *n, const struct usernet_fwd *f, int fd);
/* Ends fwd_wait: binds what waits, again each second while a port is
 * busy (stats.hostfwd_waiting counts them). */
void un_fwd_listen(struct un_ns *n);
int un_fwd_timeout(struct un_ns *n);
void un_fwd_poll(struct un_ns *n);
/* Stops serving the forwards whose sockets another usernet took. */
void un_fwd_hand_over(struct un_ns *n);
void un_fwd_fini(struct un_ns *n);
/* udp_nat.c: a forward going away closes its UDP peers. */
void un_udp_fwd_gone(struct un_ns *n, struct un_fwd *fw);

/* A forward (both protocols): spec, host socket (w.fd -1 while unbound;
 * w.fn the handler it gets either way). */
struct un_fwd {
	struct un_fwd *next;
	struct usernet_fwd spec;
	struct un_watch w;
};

#endif /* USERNET_BACKEND_H */
