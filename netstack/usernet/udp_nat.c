/* udp_nat.c — the guest's datagrams to host sockets: UDP NAT with one
 * connected host socket per flow, the DNS forwarder (UDP to the DNS
 * address goes to the host's resolvers), ICMP echo through unprivileged
 * ICMP sockets, and UDP port forwards. Flows close after udp_idle_s. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netstack/usernet/backend.h"

enum flow_kind { FLOW_UDP, FLOW_ICMP, FLOW_FWD_PEER };

/* Key protocol of forward peers, so they share the table (and its limit
 * and idle expiry) without colliding with outbound flows. */
#define NAT_PROTO_FWD_PEER 0x80

struct udp_flow {
	struct nat_entry e; /* first: the table hands these back */
	struct un_watch w;  /* host socket (outbound) */
	enum flow_kind kind;
	bool dns;
	bool raw; /* FLOW_ICMP over a raw socket: the guest's own echo id */
	/* FLOW_FWD_PEER: the guest-side channel and the forward's socket */
	struct ns_chan *ch;
	struct un_watch chw;
	struct un_fwd *fwd;
	struct sockaddr_storage peer;
	socklen_t peer_len;
};

/* The flow's packets as the guest sees them: from the remote, to it. */
static void info_of(const struct nat_key *k, struct ns_pktinfo *info)
{
	memset(info, 0, sizeof(*info));
	info->src.port = k->rport;
	info->dst.port = k->gport;
	if (k->v6) {
		info->src.family = info->dst.family = NS_AF_INET6;
		memcpy(info->src.addr6, k->raddr6, 16);
		memcpy(info->dst.addr6, k->gaddr6, 16);
	} else {
		info->src.addr = k->raddr;
		info->dst.addr = k->gaddr;
	}
}

static struct nat_key key_of(uint8_t proto, const struct ns_pktinfo *info, uint16_t rport)
{
	struct nat_key k = {.proto = proto, .gport = info->src.port, .rport = rport};

	if (info->src.family == NS_AF_INET6) {
		k.v6 = true;
		memcpy(k.gaddr6, info->src.addr6, 16);
		memcpy(k.raddr6, info->dst.addr6, 16);
	} else {
		k.gaddr = info->src.addr;
		k.raddr = info->dst.addr;
	}
	return k;
}

static void flow_close(struct un_ns *n, struct udp_flow *f)
{
	nat_remove(&n->udp, &f->e);
	un_watch_close(n, &f->w);
	if (f->ch) {
		epoll_ctl(n->epfd, EPOLL_CTL_DEL, f->chw.fd, NULL);
		ns_chan_close(f->ch);
	}
	free(f);
}

/* ------------------------------------------------------ host -> guest */

/* The host said port unreachable (a connected UDP socket's ECONNREFUSED):
 * tell the guest with an ICMP error quoting a datagram of the flow, so
 * its socket fails at once instead of timing out. */
static void udp6_unreachable(struct un_ns *n, const struct udp_flow *f)
{
	struct ns_pktinfo info;
	uint8_t m[8 + 40 + 8] = {1, 4}; /* ICMPv6 dest unreachable, port */
	uint8_t *ip = m + 8, *udp = ip + 40;

	ip[0] = 0x60;
	ip[5] = 8;
	ip[6] = NS_PROTO_UDP;
	ip[7] = 64;
	memcpy(ip + 8, f->e.key.gaddr6, 16);
	memcpy(ip + 24, f->e.key.raddr6, 16);
	udp[0] = (uint8_t)(f->e.key.gport >> 8);
	udp[1] = (uint8_t)f->e.key.gport;
	udp[2] = (uint8_t)(f->e.key.rport >> 8);
	udp[3] = (uint8_t)f->e.key.rport;
	udp[5] = 8;
	info_of(&f->e.key, &info);
	info.src.port = info.dst.port = 0;
	ns_chan_sendto(n->icmp_all, m, sizeof(m), &info);
	n->stats.udp_unreachable++;
}

static void udp_unreachable(struct un_ns *n, const struct udp_flow *f)
{
	struct ns_pktinfo info = {0};
	uint8_t m[8 + 20 + 8] = {3, 3}; /* ICMP dest unreachable, port */
	uint8_t *ip = m + 8, *udp = ip + 20;
	uint32_t a;
	uint16_t v;

	if (f->e.key.v6) {
		udp6_unreachable(n, f);
		return;
	}
	ip[0] = 0x45;
	v = htons(28);
	memcpy(ip + 2, &v, 2);
	ip[8] = 64;
	ip[9] = NS_PROTO_UDP;
	a = htonl(f->e.key.gaddr);
	memcpy(ip + 12, &a, 4);
	a = htonl(f->e.key.raddr);
	memcpy(ip + 16, &a, 4);
	v = (uint16_t)~ns_csum_fold(ns_csum_add(0, ip, 20));
	memcpy(ip + 10, &v, 2);
	v = htons(f->e.key.gport);
	memcpy(udp, &v, 2);
	v = htons(f->e.key.rport);
	memcpy(udp + 2, &v, 2);
	v = htons(8);
	memcpy(udp + 4, &v, 2);
	info.src.addr = f->e.key.raddr;
	info.dst.addr = f->e.key.gaddr;
	ns_chan_sendto(n->icmp_all, m, sizeof(m), &info);
	n->stats.udp_unreachable++;
}

/* Replies on an outbound flow's host socket go back to the guest from the
 * address it sent to. */
/* An echo reply for the flow, header stripped (a raw IPv4 socket reads
 * the IP header too; a raw socket hears every reply from its peer, so the
 * echo id must be the guest's). */
static bool icmp_reply_of(const struct udp_flow *f, uint8_t **buf, ssize_t *r)
{
	if (f->raw && !f->e.key.v6) {
		size_t hl = *r >= 20 ? (size_t)((*buf)[0] & 15) * 4 : 0;

		if (!hl || (ssize_t)hl > *r)
			return false;
		*buf += hl;
		*r -= (ssize_t)hl;
	}
	if (*r < 8 || (*buf)[0] != (f->e.key.v6 ? 129 : 0))
		return false;
	return !f->raw || (((*buf)[4] << 8 | (*buf)[5]) == f->e.key.gport);
}

static void on_host_reply(struct un_ns *n, struct un_watch *w, uint32_t events)
{
	struct udp_flow *f = (void *)((char *)w - offsetof(struct udp_flow, w));
	struct ns_pktinfo info = {0};
	uint8_t *buf = n->scratch;

	(void)events;
	info_of(&f->e.key, &info);
	for (int i = 0; i < 64; i++) {
		ssize_t r = recv(w->fd, buf = n->scratch, 65507, MSG_DONTWAIT);

		if (r < 0) {
			if (errno == ECONNREFUSED && f->kind == FLOW_UDP)
				udp_unreachable(n, f);
			break;
		}
		nat_touch(&n->udp, &f->e, un_now(n));
		if (f->kind == FLOW_ICMP) {
			if (!icmp_reply_of(f, &buf, &r))
				continue;
			/* The kernel chose the echo id; give the guest its own. */
			buf[4] = (uint8_t)(f->e.key.gport >> 8);
			buf[5] = (uint8_t)f->e.key.gport;
			info.src.port = info.dst.port = f->e.key.gport;
			ns_chan_sendto(n->icmp_all, buf, (size_t)r, &info);
			n->stats.icmp_reply++;
			continue;
		}
		ns_chan_sendto(n->udp_all, buf, (size_t)r, &info);
		n->stats.udp_rx++;
		if (f->dns)
			n->stats.dns_replies++;
	}
}

/* ------------------------------------------------------ guest -> host */

static struct udp_flow *flow_open(struct un_ns *n, const struct nat_key *k, enum flow_kind kind,
				  const struct sockaddr_storage *sa, socklen_t salen)
{
	struct udp_flow *f = calloc(1, sizeof(*f));
	bool v6 = sa->ss_family == AF_INET6;
	int fd, proto = kind != FLOW_ICMP ? 0 : v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP;

	if (!f)
		return NULL;
	f->e.key = *k;
	f->kind = kind;
	f->w.fd = -1;
	if (nat_insert(&n->udp, &f->e, un_now(n)) < 0) {
		n->stats.udp_limit_drop++;
		free(f);
		return NULL;
	}
	fd = socket(sa->ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
	if (fd < 0 && kind == FLOW_ICMP) {
		/* EACCES: net.ipv4.ping_group_range (which also governs ICMPv6
		 * ping sockets) excludes our group; with CAP_NET_RAW a raw
		 * socket does instead, else echo is counted as unsupported. */
		fd = socket(sa->ss_family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
		f->raw = fd >= 0;
		if (fd < 0) {
			n->stats.icmp_unsupported++;
			goto fail;
		}
	}
	if (fd < 0 || connect(fd, (const struct sockaddr *)sa, salen) < 0 ||
	    un_watch_add(n, &f->w, fd, EPOLLIN, on_host_reply) < 0) {
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	if (kind == FLOW_UDP)
		n->stats.udp_flows++;
	return f;
fail:
	nat_remove(&n->udp, &f->e);
	free(f);
	return NULL;
}

static bool guest_src_ok(struct un_ns *n, const struct ns_sockaddr *src)
{
	uint32_t mask = 0xffffffffu << (32 - n->cfg.prefix);

	if (src->family == NS_AF_INET6)
		return un_guest6_ok(n, src->addr6);
	return (src->addr & mask) == n->cfg.net && src->addr != n->cfg.gateway &&
	       src->addr != n->cfg.dns;
}

static bool is_dns_query(struct un_ns *n, const struct ns_sockaddr *dst)
{
	if (dst->port != 53)
		return false;
	if (dst->family == NS_AF_INET6)
		return !memcmp(dst->addr6, n->cfg.ipv6_dns, 16);
	return dst->addr == n->cfg.dns;
}

static void guest_udp(struct un_ns *n, const uint8_t *data, size_t len,
		      const struct ns_pktinfo *info)
{
	struct nat_key k = key_of(NS_PROTO_UDP, info, info->dst.port);
	struct sockaddr_storage host;
	struct nat_entry *e;
	struct udp_flow *f;
	socklen_t hlen;
	bool dns;

	if (!guest_src_ok(n, &info->src))
		return;
	if (is_dns_query(n, &info->dst)) {
		n->stats.dns_queries++;
		if (!n->nresolvers) {
			n->stats.dns_errors++;
			return;
		}
	}
	e = nat_find(&n->udp, &k);
	if (e) {
		f = (struct udp_flow *)e;
	} else {
		if (!un_map_host(n, &info->dst, &host, &hlen, &dns))
			return;
		f = flow_open(n, &k, FLOW_UDP, &host, hlen);
		if (!f) {
			if (dns)
				n->stats.dns_errors++;
			return;
		}
		f->dns = dns;
	}
	nat_touch(&n->udp, &f->e, un_now(n));
	if (send(f->w.fd, data, len, MSG_DONTWAIT) >= 0) {
		n->stats.udp_tx++;
		n->stats.udp6_tx += k.v6;
	} else if (f->dns) {
		n->stats.dns_errors++;
	}
}

static void guest_icmp(struct un_ns *n, uint8_t *msg, size_t len, const struct ns_pktinfo *info)
{
	struct nat_key k = key_of(NS_PROTO_ICMP, info, 0);
	struct ns_sockaddr dst = info->dst;
	struct sockaddr_storage host;
	struct nat_entry *e;
	struct udp_flow *f;
	socklen_t hlen;
	bool dns;

	if (info->icmp_type != (k.v6 ? 128 : 8) || len < 8 || !guest_src_ok(n, &info->src))
		return;
	n->stats.icmp_echo++;
	n->stats.icmp6_echo += k.v6;
	e = nat_find(&n->udp, &k);
	if (e) {
		f = (struct udp_flow *)e;
	} else {
		dst.port = 0;
		if (!un_map_host(n, &dst, &host, &hlen, &dns) || dns ||
		    !(f = flow_open(n, &k, FLOW_ICMP, &host, hlen)))
			return;
	}
	nat_touch(&n->udp, &f->e, un_now(n));
	send(f->w.fd, msg, len, MSG_DONTWAIT);
}

void un_udp_service(struct un_ns *n)
{
	struct ns_pktinfo info;
	uint8_t *buf = n->scratch;
	ssize_t r;

	while ((r = ns_chan_recv_nb(n->udp_all, buf, 65535, &info)) >= 0)
		guest_udp(n, buf, (size_t)(r > 65535 ? 65535 : r), &info);
	while ((r = ns_chan_recv_nb(n->icmp_all, buf, 65535, &info)) >= 0)
		guest_icmp(n, buf, (size_t)(r > 65535 ? 65535 : r), &info);
	while (n->udp6_all && (r = ns_chan_recv_nb(n->udp6_all, buf, 65535, &info)) >= 0)
		guest_udp(n, buf, (size_t)(r > 65535 ? 65535 : r), &info);
	while (n->icmp6_all && (r = ns_chan_recv_nb(n->icmp6_all, buf, 65535, &info)) >= 0)
		guest_icmp(n, buf, (size_t)(r > 65535 ? 65535 : r), &info);
}

int un_udp_expire(struct un_ns *n)
{
	uint64_t now = un_now(n), idle = (uint64_t)n->cfg.udp_idle_s * 1000000;
	struct nat_entry *e;

	while ((e = nat_oldest(&n->udp)) && e->last_us + idle <= now) {
		n->stats.udp_idle_closed++;
		flow_close(n, (struct udp_flow *)e);
	}
	if (!e)
		return -1;
	return (int)((e->last_us + idle - now + 999) / 1000);
}

/* ------------------------------------------------------- UDP forwards */

/* The guest answers a forwarded datagram: back to the host peer. */
static void on_peer_chan(struct un_ns *n, struct un_watch *w, uint32_t events)
{
	struct udp_flow *f = (void *)((char *)w - offsetof(struct udp_flow, chw));
	ssize_t r;

	(void)events;
	while ((r = ns_chan_recv_nb(f->ch, n->scratch, 65507, NULL)) >= 0) {
		nat_touch(&n->udp, &f->e, un_now(n));
		sendto(f->fwd->w.fd, n->scratch, (size_t)(r > 65507 ? 65507 : r), MSG_DONTWAIT,
		       (struct sockaddr *)&f->peer, f->peer_len);
		n->stats.udp_rx++;
	}
}

static struct udp_flow *peer_open(struct un_ns *n, struct un_fwd *fw, const struct nat_key *k,
				  const struct sockaddr_storage *peer, socklen_t peer_len)
{
	struct ns_sockaddr local = {.addr = n->cfg.gateway, .port = 0};
	struct ns_sockaddr remote = {.addr = fw->spec.guest_addr, .port = fw->spec.guest_port};
	struct udp_flow *f = calloc(1, sizeof(*f));
	int err;

	if (!f)
		return NULL;
	if (fw->spec.guest6) {
		/* The guest hears the peer's datagrams from the gateway. */
		local.family = remote.family = NS_AF_INET6;
		memcpy(local.addr6, n->cfg.ipv6_host, 16);
		memcpy(remote.addr6, fw->spec.guest_addr6, 16);
	}
	f->peer_len = peer_len;
	f->e.key = *k;
	f->kind = FLOW_FWD_PEER;
	f->w.fd = -1;
	f->fwd = fw;
	f->peer = *peer;
	if (nat_insert(&n->udp, &f->e, un_now(n)) < 0) {
		n->stats.udp_limit_drop++;
		free(f);
		return NULL;
	}
	f->ch = ns_chan_create(n->st, NS_PROTO_UDP, &local, &remote, &err);
	if (!f->ch || un_watch_add(n, &f->chw, ns_chan_fd(f->ch), EPOLLIN, on_peer_chan) < 0) {
		if (f->ch)
			ns_chan_close(f->ch);
		f->ch = NULL;
		nat_remove(&n->udp, &f->e);
		free(f);
		return NULL;
	}
	n->stats.hostfwd_accepted++;
	return f;
}

static void on_fwd_udp(struct un_ns *n, struct un_watch *w, uint32_t events)
{
	struct un_fwd *fw = (void *)((char *)w - offsetof(struct un_fwd, w));

	(void)events;
	for (int i = 0; i < 64; i++) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		ssize_t r = recvfrom(w->fd, n->scratch, 65507, MSG_DONTWAIT,
				     (struct sockaddr *)&peer, &plen);
		struct nat_key k = {.proto = NAT_PROTO_FWD_PEER};
		struct nat_entry *e;
		struct udp_flow *f;

		if (r < 0)
			break;
		k.gport = fw->spec.host_port;
		if (peer.ss_family == AF_INET6) {
			const struct sockaddr_in6 *p6 = (const struct sockaddr_in6 *)&peer;

			k.v6 = true;
			memcpy(k.gaddr6, fw->spec.host_addr6, 16);
			memcpy(k.raddr6, &p6->sin6_addr, 16);
			k.rport = ntohs(p6->sin6_port);
		} else {
			const struct sockaddr_in *p4 = (const struct sockaddr_in *)&peer;

			k.gaddr = fw->spec.host_addr;
			k.raddr = ntohl(p4->sin_addr.s_addr);
			k.rport = ntohs(p4->sin_port);
		}
		e = nat_find(&n->udp, &k);
		f = e ? (struct udp_flow *)e : peer_open(n, fw, &k, &peer, plen);
		if (!f) {
			n->stats.hostfwd_failed++;
			continue;
		}
		nat_touch(&n->udp, &f->e, un_now(n));
		if (ns_chan_send(f->ch, n->scratch, (size_t)r) >= 0)
			n->stats.udp_tx++;
	}
}

/* A forward going away takes its UDP peers along (fwd.c). */
void un_udp_fwd_gone(struct un_ns *n, struct un_fwd *fw)
{
	for (struct nat_entry *e = nat_oldest(&n->udp), *next; e; e = next) {
		next = e->next == &n->udp.lru ? NULL : e->next;
		if (e->key.proto == NAT_PROTO_FWD_PEER && ((struct udp_flow *)e)->fwd == fw)
			flow_close(n, (struct udp_flow *)e);
	}
}

int un_udp_fwd(struct un_ns *n, bool add, const struct usernet_fwd *f, char *err, size_t errlen)
{
	return un_fwd_change(n, add, f, on_fwd_udp, err, errlen);
}

/* --------------------------------------------------------------- setup */

int un_udp_init(struct un_ns *n, char *err, size_t errlen)
{
	struct ns_sockaddr any = {.addr = 0, .port = 0};
	int e1, e2;

	if (nat_table_init(&n->udp, n->cfg.max_udp_flows) < 0)
		return usernet_fail(err, errlen, -ENOMEM, "out of memory");
	n->udp_all = ns_chan_create(n->st, NS_PROTO_UDP, &any, NULL, &e1);
	n->icmp_all = ns_chan_create(n->st, NS_PROTO_ICMP, &any, NULL, &e2);
	if (!n->udp_all || !n->icmp_all)
		return usernet_fail(err, errlen, -EIO, "netstack catch-all channels: %s",
				    strerror(-(n->udp_all ? e2 : e1)));
	ns_chan_set_queue_max(n->udp_all, 1024);
	ns_chan_set_queue_max(n->icmp_all, 256);
	if (!n->cfg.ipv6_off) {
		struct ns_sockaddr any6 = {.family = NS_AF_INET6};

		n->udp6_all = ns_chan_create(n->st, NS_PROTO_UDP, &any6, NULL, &e1);
		n->icmp6_all = ns_chan_create(n->st, NS_PROTO_ICMPV6, &any6, NULL, &e2);
		if (!n->udp6_all || !n->icmp6_all)
			return usernet_fail(err, errlen, -EIO, "netstack IPv6 catch-alls: %s",
					    strerror(-(n->udp6_all ? e2 : e1)));
		ns_chan_set_queue_max(n->udp6_all, 1024);
		ns_chan_set_queue_max(n->icmp6_all, 256);
	}
	return 0;
}

void un_udp_fini(struct un_ns *n)
{
	struct nat_entry *e;

	if (n->udp.buckets)
		while ((e = nat_oldest(&n->udp)))
			flow_close(n, (struct udp_flow *)e);
	un_fwd_fini(n);
	if (n->udp_all)
		ns_chan_close(n->udp_all);
	if (n->icmp_all)
		ns_chan_close(n->icmp_all);
	ns_chan_close(n->udp6_all);
	ns_chan_close(n->icmp6_all);
	nat_table_destroy(&n->udp);
}
