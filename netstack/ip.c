/* ip.c — IPv4 input validation and demux, output with fragmentation. */
#include <stdlib.h>

#include "netstack/internal.h"

enum { IP_DEFAULT_TTL = 64 };

static bool is_broadcast(const struct ns_iface *ifc, uint32_t a)
{
	return a == 0xffffffffu || (ifc->mask != 0xffffffffu && a == (ifc->addr | ~ifc->mask));
}

static void ip_dispatch(struct ns_stack *st, struct ip_rx *rx)
{
	switch (rx->proto) {
	case NS_PROTO_ICMP:
		icmp_input(st, rx);
		break;
	case NS_PROTO_UDP:
		udp_input(st, rx);
		break;
	case NS_PROTO_TCP:
		tcp_input(st, rx);
		break;
	default:
		st->stats.rx_no_proto++;
		if (rx->local)
			icmp_send_error(st, rx, ICMP_UNREACH, ICMP_UNREACH_PROTO);
	}
}

void ip_input(struct ns_stack *st, struct ns_iface *ifc, const uint8_t *p, size_t len)
{
	struct ip_hdr ih;
	struct ip_rx rx;
	size_t hlen, tot;
	uint16_t off;
	uint8_t *whole = NULL;

	if (len < sizeof(ih))
		goto bad;
	memcpy(&ih, p, sizeof(ih));
	hlen = (size_t)(ih.vhl & 15) * 4;
	tot = ntohs(ih.len);
	if ((ih.vhl >> 4) != 4 || hlen < 20 || tot < hlen || tot > len)
		goto bad;
	if (!(ifc->flags & NS_IF_NO_CSUM_RX) && ns_csum_fold(ns_csum_add(0, p, hlen)) != 0xffff) {
		st->stats.rx_bad_csum++;
		return;
	}
	memset(&rx, 0, sizeof(rx));
	rx.ifc = ifc;
	rx.src = ntohl(ih.src);
	rx.dst = ntohl(ih.dst);
	rx.saddr = ipa_v4(rx.src);
	rx.daddr = ipa_v4(rx.dst);
	rx.proto = ih.proto;
	rx.ttl = ih.ttl;
	rx.tos = ih.tos;
	/* Martian sources: never answer them (RFC 1122 3.2.1.3). One of our
	 * own addresses from the wire is one too: answering it ("LAND") makes
	 * half-open connections to ourselves and ARPs for our own address. */
	if ((rx.src >> 28) == 0xe || rx.src == 0xffffffffu || (rx.src >> 24) == 127 ||
	    is_broadcast(ifc, rx.src) || iface_is_local(st, rx.src))
		goto bad;
	rx.local = iface_is_local(st, rx.dst) || is_broadcast(ifc, rx.dst);
	if (!rx.local && (!(ifc->flags & NS_IF_ACCEPT_ANY) || (rx.dst >> 28) == 0xe ||
			  (rx.dst >> 24) == 127 || rx.dst == 0)) {
		st->stats.rx_bad_ip++;
		return;
	}
	off = ntohs(ih.off);
	if (off & (IP_MF | IP_OFFMASK)) {
		size_t wlen;

		whole = reass_add(st, (const struct ip_hdr *)p, p + hlen, tot - hlen, &wlen);
		if (!whole)
			return;
		p = whole;
		tot = wlen;
	}
	rx.ip = p;
	rx.iplen = tot;
	rx.l4 = p + hlen;
	rx.l4len = tot - hlen;
	ip_dispatch(st, &rx);
	free(whole);
	return;
bad:
	st->stats.rx_bad_ip++;
}

unsigned ip_mtu_to(struct ns_stack *st, uint32_t dst)
{
	uint32_t nh;
	struct ns_link *l;

	if (ns_route_lookup(st, dst, &nh, &l) < 0)
		return 576 - 20;
	return l->mtu - 20;
}

static void ip_fill(struct ip_hdr *ih, uint32_t src, uint32_t dst, uint8_t proto, uint8_t ttl,
		    uint8_t tos, size_t len, uint16_t id, uint16_t off)
{
	ih->vhl = 0x45;
	ih->tos = tos;
	ih->len = htons((uint16_t)len);
	ih->id = htons(id);
	ih->off = htons(off);
	ih->ttl = ttl ? ttl : IP_DEFAULT_TTL;
	ih->proto = proto;
	ih->csum = 0;
	ih->src = htonl(src);
	ih->dst = htonl(dst);
	ih->csum = (uint16_t)~ns_csum_fold(ns_csum_add(0, ih, sizeof(*ih)));
}

/* Hand one IP packet to the link: straight to mac when the caller named
 * the station, else to next_hop through ARP. */
static int l2_output(struct ns_stack *st, struct ns_iface *ifc, uint32_t nh, const uint8_t *mac,
		     uint8_t *l3, size_t len)
{
	if (mac)
		return ether_output(st, ifc, mac, ETHERTYPE_IP, l3, len);
	return arp_output(st, ifc, nh, l3, len);
}

/* The datagram out of ifc (next hop nh, or the station mac), fragmented
 * when bigger than the link MTU unless df. */
static int ip_emit(struct ns_stack *st, struct ns_iface *ifc, uint32_t nh, const uint8_t *mac,
		   uint32_t src, uint32_t dst, uint8_t proto, uint8_t ttl, uint8_t tos, uint8_t *l4,
		   size_t l4len, bool df)
{
	struct ns_link *l = ifc->link;
	size_t chunk;
	uint16_t id = st->ip_id++;
	int rc = 0;

	if (!src)
		src = ifc->addr;
	if (l4len + 20 > 65535)
		return -EMSGSIZE;
	if (l4len + 20 <= l->mtu) {
		struct ip_hdr *ih = (void *)(l4 - 20);

		ip_fill(ih, src, dst, proto, ttl, tos, l4len + 20, id, df ? IP_DF : 0);
		return l2_output(st, ifc, nh, mac, (uint8_t *)ih, l4len + 20);
	}
	if (df)
		return -EMSGSIZE;
	chunk = (l->mtu - 20) & ~7u;
	for (size_t off = 0; off < l4len && rc >= 0; off += chunk) {
		size_t n = l4len - off < chunk ? l4len - off : chunk;
		uint8_t *frag = st->frag + NS_HEADROOM;
		uint16_t flags = off + n < l4len ? IP_MF : 0;

		memcpy(frag + 20, l4 + off, n);
		ip_fill((void *)frag, src, dst, proto, ttl, tos, n + 20, id,
			(uint16_t)(flags | (off >> 3)));
		st->stats.ip_frag_tx++;
		rc = l2_output(st, ifc, nh, mac, frag, n + 20);
	}
	return rc;
}

int ip_output(struct ns_stack *st, uint32_t src, uint32_t dst, uint8_t proto, uint8_t ttl,
	      uint8_t tos, uint8_t *l4, size_t l4len, bool df)
{
	struct ns_link *l;
	uint32_t nh;

	if (ns_route_lookup(st, dst, &nh, &l) < 0)
		return -ENETUNREACH;
	return ip_emit(st, iface_of_link(st, l), nh, NULL, src, dst, proto, ttl, tos, l4, l4len,
		       df);
}

int ip_output_link(struct ns_stack *st, struct ns_iface *ifc, const uint8_t mac[6], uint32_t src,
		   uint32_t dst, uint8_t proto, uint8_t *l4, size_t l4len)
{
	return ip_emit(st, ifc, 0, mac ? mac : ether_broadcast, src, dst, proto, 0, 0, l4, l4len, false);
}
