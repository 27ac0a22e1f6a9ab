/* netstack_backend.c — usernet on netstack: the virtual LAN's link, the
 * DHCP server's channel, the epoll set every host socket lives in, and
 * the event-loop entry points. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "netstack/usernet/backend.h"

/* ----------------------------------------------------------- the link */

static int link_transmit(struct ns_link *l, const void *frame, size_t len)
{
	struct un_ns *n = l->priv;

	if (n->handed_over)
		return 0;
	n->stats.tx_frames++;
	n->stats.tx_bytes += len;
	n->cfg.send(n->cfg.opaque, frame, len);
	return 0;
}

static void link_destroy(struct ns_link *l)
{
	free(l);
}

static const struct ns_link_ops un_link_ops = {
	.transmit = link_transmit,
	.destroy = link_destroy,
};

/* -------------------------------------------------------------- epoll */

int un_watch_add(struct un_ns *n, struct un_watch *w, int fd, uint32_t events, un_watch_fn fn)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};

	w->fn = fn;
	w->fd = fd;
	w->events = events;
	if (epoll_ctl(n->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	return 0;
}

void un_watch_set(struct un_ns *n, struct un_watch *w, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};

	if (events == w->events)
		return;
	w->events = events;
	epoll_ctl(n->epfd, EPOLL_CTL_MOD, w->fd, &ev);
}

void un_watch_close(struct un_ns *n, struct un_watch *w)
{
	if (w->fd < 0)
		return;
	epoll_ctl(n->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	close(w->fd);
	w->fd = -1;
}

/* -------------------------------------------------------- address map */

static uint32_t map_dst4(struct un_ns *n, uint32_t dst)
{
	uint32_t mask = 0xffffffffu << (32 - n->cfg.prefix);

	if (dst == n->cfg.gateway)
		return n->cfg.no_host_loopback ? 0 : 0x7f000001;
	if (dst == n->cfg.dns)
		return 0; /* only its port 53 leaves, to a resolver */
	if ((dst & mask) == n->cfg.net || dst == 0xffffffffu || (dst >> 28) >= 0xe)
		return 0;
	return dst;
}

bool un_guest6_ok(struct un_ns *n, const uint8_t a[16])
{
	struct ns_sockaddr sa = {.family = NS_AF_INET6};
	unsigned bytes = n->cfg.ipv6_prefix / 8;

	memcpy(sa.addr6, a, 16);
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return true; /* link-local (DHCPv6, ND) */
	return !memcmp(a, n->cfg.ipv6_net, bytes) && memcmp(a, n->cfg.ipv6_host, 16) &&
	       memcmp(a, n->cfg.ipv6_dns, 16);
}

/* A global unicast destination outside our prefix (RFC 4291 2.4). */
static bool remote6_ok(struct un_ns *n, const uint8_t a[16])
{
	static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};
	static const uint8_t zero[16];

	if (a[0] == 0xff || (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) || !memcmp(a, zero, 15) ||
	    !memcmp(a, mapped, 12))
		return false;
	return memcmp(a, n->cfg.ipv6_net, n->cfg.ipv6_prefix / 8) != 0;
}

static void sa4(struct sockaddr_storage *out, socklen_t *len, uint32_t a, uint16_t port)
{
	struct sockaddr_in *s = (struct sockaddr_in *)out;

	memset(out, 0, sizeof(*out));
	s->sin_family = AF_INET;
	s->sin_addr.s_addr = htonl(a);
	s->sin_port = htons(port);
	*len = sizeof(*s);
}

static void sa6(struct sockaddr_storage *out, socklen_t *len, const uint8_t a[16], uint16_t port)
{
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)out;

	memset(out, 0, sizeof(*out));
	s->sin6_family = AF_INET6;
	memcpy(&s->sin6_addr, a, 16);
	s->sin6_port = htons(port);
	*len = sizeof(*s);
}

bool un_map_host(struct un_ns *n, const struct ns_sockaddr *dst, struct sockaddr_storage *out,
		 socklen_t *len, bool *is_dns)
{
	static const uint8_t loop6[16] = {[15] = 1};
	uint32_t host;

	*is_dns = dst->port == 53 && n->nresolvers &&
		  (dst->family == NS_AF_INET6 ? !memcmp(dst->addr6, n->cfg.ipv6_dns, 16)
					      : dst->addr == n->cfg.dns);
	if (*is_dns) {
		/* Either family's guest query to either family's resolver. */
		const struct ns_sockaddr *r = &n->resolvers[n->next_resolver++ % n->nresolvers];

		if (r->family == NS_AF_INET6)
			sa6(out, len, r->addr6, n->resolver_port);
		else
			sa4(out, len, r->addr, n->resolver_port);
		return true;
	}
	if (dst->family != NS_AF_INET6) {
		host = map_dst4(n, dst->addr);
		sa4(out, len, host, dst->port);
		return host != 0;
	}
	if (!memcmp(dst->addr6, n->cfg.ipv6_host, 16)) {
		sa6(out, len, loop6, dst->port);
		return !n->cfg.no_host_loopback;
	}
	if (!memcmp(dst->addr6, n->cfg.ipv6_dns, 16))
		return false;
	if (!remote6_ok(n, dst->addr6))
		return false;
	sa6(out, len, dst->addr6, dst->port);
	return true;
}

/* --------------------------------------------------------------- DHCP */

/* The server is a channel on port 67 with a wildcard remote: requests come
 * from 0.0.0.0 before the client has an address. Replies go straight to
 * the client's MAC or to the broadcast (there is no address to ARP for). */
static int dhcp_open(struct un_ns *n)
{
	struct ns_sockaddr local = {.addr = 0, .port = DHCP_SERVER_PORT};
	int err;

	n->dhcp_ch = ns_chan_create(n->st, NS_PROTO_UDP, &local, NULL, &err);
	return n->dhcp_ch ? 0 : err;
}

static void dhcp_reply(struct un_ns *n, const uint8_t *msg, size_t len,
		       const struct dhcp_dest *dest)
{
	struct ns_pktinfo to = {
		.dst = {dest->broadcast ? 0xffffffffu : dest->addr, DHCP_CLIENT_PORT}};

	ns_chan_sendto_link(n->dhcp_ch, msg, len, &to, n->link, dest->broadcast ? NULL : dest->mac);
	/* The stack need not ARP for a client it has just given an address. */
	if (!dest->broadcast && dest->addr)
		ns_arp_add_static(n->st, dest->addr, dest->mac);
}

/* Answer the requests that came in (frames only arrive through
 * usernet_input, which makes the next poll run). */
static void dhcp_service(struct un_ns *n)
{
	uint8_t out[DHCP_REPLY_MAX];
	struct dhcp_dest dest;
	ssize_t len;
	size_t olen;

	while ((len = ns_chan_recv_nb(n->dhcp_ch, n->scratch, NS_FRAME_BUF, NULL)) >= 0) {
		olen = dhcp_handle(&n->dhcp, n->scratch, (size_t)len, un_now(n) / 1000000, out,
				   sizeof(out), &dest);
		if (olen)
			dhcp_reply(n, out, olen, &dest);
	}
}

/* ------------------------------------------------------------- IPv6 */

/* libslirp's LAN: the gateway is the link's router, advertising the
 * prefix for SLAAC with O=1 (DNS by stateless DHCPv6, and RDNSS). */
static int ipv6_setup(struct un_ns *n)
{
	struct ns_ra_cfg ra = {.prefix_len = n->cfg.ipv6_prefix, .other = true};
	struct ns_sockaddr dhcp6 = {.port = DHCP6_SERVER_PORT, .family = NS_AF_INET6};
	int rc, err;

	rc = ns_iface_ipv6(n->st, n->link, NS_IF6_ROUTER | NS_IF6_NODAD);
	if (rc == 0)
		rc = ns_iface_add6(n->st, n->link, n->cfg.ipv6_host, n->cfg.ipv6_prefix);
	if (rc == 0)
		rc = ns_iface_add6(n->st, n->link, n->cfg.ipv6_dns, 128);
	if (rc < 0)
		return rc;
	memcpy(ra.prefix, n->cfg.ipv6_net, 16);
	memcpy(ra.rdnss, n->cfg.ipv6_dns, 16);
	ra.mtu = n->cfg.mtu;
	rc = ns_iface_ra(n->st, n->link, &ra);
	if (rc < 0)
		return rc;
	n->dhcp6_ch = ns_chan_create(n->st, NS_PROTO_UDP, &dhcp6, NULL, &err);
	return n->dhcp6_ch ? 0 : err;
}

static void dhcp6_service(struct un_ns *n)
{
	struct ns_pktinfo info, to;
	uint8_t out[512];
	ssize_t len;
	size_t olen;

	while (n->dhcp6_ch &&
	       (len = ns_chan_recv_nb(n->dhcp6_ch, n->scratch, NS_FRAME_BUF, &info)) >= 0) {
		olen = dhcp6_handle(n->cfg.gateway_mac, n->cfg.ipv6_dns, n->scratch,
				    (size_t)(len > NS_FRAME_BUF ? NS_FRAME_BUF : len), out,
				    sizeof(out), &n->stats);
		if (!olen)
			continue;
		memset(&to, 0, sizeof(to));
		to.dst = info.src; /* the client's link-local address, port 546 */
		ns_chan_sendto(n->dhcp6_ch, out, olen, &to);
	}
}

/* ----------------------------------------------------------- the ops */

static void on_stack_fd(struct un_ns *n, struct un_watch *w, uint32_t events)
{
	uint64_t v;

	(void)events;
	if (read(w->fd, &v, sizeof(v)) < 0)
		return; /* EAGAIN: nothing to clear */
	ns_stack_poll(n->st);
}

static int setup_dns(struct un_ns *n, char *err, size_t errlen)
{
	struct ns_sockaddr up;
	int rc;

	n->resolver_port = 53;
	if (n->cfg.dns_upstream) {
		memset(&up, 0, sizeof(up));
		if (ns_parse_hostport(n->cfg.dns_upstream, &up) < 0 &&
		    ns_parse_addr(n->cfg.dns_upstream, &up.addr) < 0) {
			if (ns_parse_addr6(n->cfg.dns_upstream, up.addr6) < 0)
				return usernet_fail(err, errlen, -EINVAL,
						    "DNS upstream '%s': expected A, A:PORT, V6 or "
						    "[V6]:PORT",
						    n->cfg.dns_upstream);
			up.family = NS_AF_INET6;
		}
		n->resolvers[0] = up;
		if (up.port)
			n->resolver_port = up.port;
		n->nresolvers = 1;
		return 0;
	}
	rc = usernet_read_resolvers(n->cfg.resolv_conf, n->resolvers, UN_MAX_RESOLVERS);
	if (rc < 0)
		return usernet_fail(err, errlen, rc,
				    "DNS forwarder: no usable nameserver in %s (%s)",
				    n->cfg.resolv_conf ? n->cfg.resolv_conf : "/etc/resolv.conf",
				    rc == -ENODATA ? "no nameserver line" : strerror(-rc));
	n->nresolvers = (unsigned)rc;
	return 0;
}

static void ns_backend_destroy(void *impl);

static int ns_backend_setup(struct un_ns *n, char *err, size_t errlen)
{
	struct ns_stack_cfg sc = {0};
	int rc;

	n->scratch = malloc(NS_FRAME_BUF);
	n->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!n->scratch || n->epfd < 0)
		return usernet_fail(err, errlen, -ENOMEM, "out of memory / epoll");
	rc = setup_dns(n, err, errlen);
	if (rc < 0)
		return rc;
	if (dhcp_server_init(&n->dhcp, &n->cfg, &n->stats) < 0)
		return usernet_fail(err, errlen, -ENOMEM, "out of memory");
	n->clock = ns_clock_monotonic();
	sc.clock = n->clock;
	sc.tcp_max_conns = n->cfg.max_tcp_flows * 2 + 64;
	n->st = ns_stack_new(&sc);
	/* netstack drops frames longer than its link MTU; with GSO the link
	 * takes 64 KiB frames. The guest still announces an MSS from its own
	 * MTU, so what we send it stays within cfg.mtu, except UDP/ICMP
	 * datagrams over cfg.mtu, which then go unfragmented. */
	n->link = ns_link_new(&un_link_ops, n, n->cfg.rx_gso ? 65521 : n->cfg.mtu,
			      n->cfg.gateway_mac, "usernet");
	if (!n->st || !n->link)
		return usernet_fail(err, errlen, -ENOMEM, "out of memory");
	rc = ns_iface_add(n->st, n->link, n->cfg.gateway, n->cfg.prefix,
			  NS_IF_ACCEPT_ANY | (n->cfg.rx_csum_trusted ? NS_IF_NO_CSUM_RX : 0));
	if (rc == 0)
		rc = ns_iface_add_alias(n->st, n->link, n->cfg.dns);
	if (rc == 0)
		rc = dhcp_open(n);
	if (rc < 0)
		return usernet_fail(err, errlen, rc, "netstack interface: %s", strerror(-rc));
	if (!n->cfg.ipv6_off && (rc = ipv6_setup(n)) < 0)
		return usernet_fail(err, errlen, rc, "netstack IPv6: %s", strerror(-rc));
	rc = un_watch_add(n, &n->stack_w, ns_stack_fd(n->st), EPOLLIN, on_stack_fd);
	if (rc < 0)
		return usernet_fail(err, errlen, rc, "epoll: %s", strerror(-rc));
	rc = un_udp_init(n, err, errlen);
	if (rc < 0)
		return rc;
	un_tcp_init(n); /* without TCP in the stack, guests get RSTs */
	return 0;
}

static void *ns_backend_create(const struct usernet_cfg *cfg, char *err, size_t errlen)
{
	struct un_ns *n = calloc(1, sizeof(*n));

	if (!n) {
		usernet_fail(err, errlen, -ENOMEM, "out of memory");
		return NULL;
	}
	n->cfg = *cfg;
	n->fwd_wait = cfg->hostfwd_wait;
	n->epfd = -1;
	n->stack_w.fd = -1;
	if (ns_backend_setup(n, err, errlen) < 0) {
		ns_backend_destroy(n);
		return NULL;
	}
	return n;
}

static void ns_backend_destroy(void *impl)
{
	struct un_ns *n = impl;

	if (n->st) {
		un_tcp_fini(n);
		un_udp_fini(n);
		ns_chan_close(n->dhcp_ch);
		ns_chan_close(n->dhcp6_ch);
		epoll_ctl(n->epfd, EPOLL_CTL_DEL, n->stack_w.fd, NULL);
		ns_stack_free(n->st);
	}
	if (n->link)
		ns_link_destroy(n->link);
	dhcp_server_free(&n->dhcp);
	free(n->resets);
	if (n->epfd >= 0)
		close(n->epfd);
	free(n->scratch);
	free(n);
}

static void ns_backend_input(void *impl, const void *frame, size_t len)
{
	struct un_ns *n = impl;

	n->stats.rx_frames++;
	n->stats.rx_bytes += len;
	ns_stack_input(n->st, n->link, frame, len);
	/* Relaying waits for usernet_poll(): a batch of frames then costs one
	 * host send() per flow, not one per segment. */
	n->input_pending = true;
}

static int ns_backend_fd(void *impl)
{
	return ((struct un_ns *)impl)->epfd;
}

static int min_timeout(int a, int b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

static int ns_backend_timeout(void *impl)
{
	struct un_ns *n = impl;

	if (n->tcp_ready || n->input_pending || n->nresets)
		return 0;
	return min_timeout(min_timeout(ns_stack_timeout_ms(n->st), un_udp_expire(n)),
			   un_fwd_timeout(n));
}

static void ns_backend_poll(void *impl)
{
	struct un_ns *n = impl;
	struct epoll_event ev[64];
	int k, rounds = 0;

	n->input_pending = false;
	if (n->nresets)
		un_state_send_resets(n);
	dhcp_service(n);
	dhcp6_service(n);
	un_udp_service(n);
	un_tcp_service(n);
	do {
		k = epoll_wait(n->epfd, ev, 64, 0);
		for (int i = 0; i < k; i++) {
			struct un_watch *w = ev[i].data.ptr;

			w->fn(n, w, ev[i].events);
		}
		un_udp_service(n);
		un_tcp_service(n);
	} while (k == 64 && ++rounds < 16);
	ns_stack_poll(n->st);
	un_udp_expire(n);
	un_fwd_poll(n);
	un_udp_service(n);
	un_tcp_service(n);
}

static int ns_backend_hostfwd(void *impl, bool add, const struct usernet_fwd *f, char *err,
			      size_t errlen)
{
	struct un_ns *n = impl;

	return f->udp ? un_udp_fwd(n, add, f, err, errlen) : un_tcp_fwd(n, add, f, err, errlen);
}

static void ns_backend_stats(void *impl, struct usernet_stats *st)
{
	struct un_ns *n = impl;

	*st = n->stats;
	st->udp_flows_now = n->udp.count;
	st->tcp_flows_now = n->tcp_count;
}

const struct usernet_ops usernet_netstack_ops = {
	.name = "netstack",
	.create = ns_backend_create,
	.destroy = ns_backend_destroy,
	.input = ns_backend_input,
	.fd = ns_backend_fd,
	.timeout_ms = ns_backend_timeout,
	.poll = ns_backend_poll,
	.hostfwd = ns_backend_hostfwd,
	.stats = ns_backend_stats,
	.save = un_state_save,
	.load = un_state_load,
	.hand_over = un_state_hand_over,
};
