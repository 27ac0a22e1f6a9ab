/* udp.c — UDP (RFC 768) on the channels. */
#include "netstack/internal.h"

void udp_input(struct ns_stack *st, const struct ip_rx *rx)
{
	struct udp_hdr h;
	struct ns_pktinfo info = { 0 };
	struct ns_chan *ch;
	size_t ulen;

	st->stats.udp_rx++;
	if (rx->l4len < sizeof(h))
		goto bad;
	memcpy(&h, rx->l4, sizeof(h));
	ulen = ntohs(h.len);
	if (ulen < sizeof(h) || ulen > rx->l4len)
		goto bad;
	if (h.csum && !(rx->ifc->flags & NS_IF_NO_CSUM_RX) &&
	    ip_pseudo_csum_fold(htonl(rx->src), htonl(rx->dst), NS_PROTO_UDP, rx->l4, ulen) !=
		    0xffff) {
		st->stats.rx_bad_csum++;
		return;
	}
	ch = chan_lookup(st, NS_PROTO_UDP, rx->dst, ntohs(h.dport), rx->src, ntohs(h.sport));
	if (!ch) {
		st->stats.udp_no_port++;
		if (rx->local)
			icmp_send_error(st, rx, ICMP_UNREACH, ICMP_UNREACH_PORT);
		return;
	}
	info.src.addr = rx->src;
	info.src.port = ntohs(h.sport);
	info.dst.addr = rx->dst;
	info.dst.port = ntohs(h.dport);
	info.ttl = rx->ttl;
	info.tos = rx->tos;
	if (!chan_deliver(st, ch, rx->l4 + sizeof(h), ulen - sizeof(h), &info))
		st->stats.udp_drop_full++;
	return;
bad:
	st->stats.rx_bad_ip++;
}

/* Write the UDP header and data at st->tx's L4 offset, checksummed for
 * src -> dst; returns the datagram length or -EMSGSIZE. */
static ssize_t udp_build(struct ns_stack *st, uint32_t src, uint16_t sport, uint32_t dst,
			 uint16_t dport, const void *data, size_t len)
{
	uint8_t *l4 = st->tx + NS_HEADROOM;
	struct udp_hdr *h = (void *)l4;
	uint16_t c;

	if (len > 65535 - 20 - sizeof(*h))
		return -EMSGSIZE;
	h->sport = htons(sport);
	h->dport = htons(dport);
	h->len = htons((uint16_t)(len + sizeof(*h)));
	h->csum = 0;
	memcpy(l4 + sizeof(*h), data, len);
	c = (uint16_t)~ip_pseudo_csum_fold(htonl(src), htonl(dst), NS_PROTO_UDP, l4,
					   len + sizeof(*h));
	h->csum = c ? c : 0xffff;
	st->stats.udp_tx++;
	return (ssize_t)(len + sizeof(*h));
}

int udp_output(struct ns_stack *st, uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport,
	       const void *data, size_t len)
{
	ssize_t n;

	if (!src)
		src = iface_src_for(st, dst);
	n = udp_build(st, src, sport, dst, dport, data, len);
	if (n < 0)
		return (int)n;
	return ip_output(st, src, dst, NS_PROTO_UDP, 0, 0, st->tx + NS_HEADROOM, (size_t)n, false);
}

static ssize_t sendto_link_locked(struct ns_chan *ch, const void *buf, size_t len,
				  const struct ns_pktinfo *info, struct ns_link *l,
				  const uint8_t dst_mac[6])
{
	struct ns_stack *st = ch->st;
	struct ns_iface *ifc = iface_of_link(st, l);
	uint32_t src = info->src.addr ? info->src.addr : ch->key.laddr;
	uint16_t sport = info->src.port ? info->src.port : ch->key.lport;
	ssize_t n;
	int rc;

	if (ch->key.proto != NS_PROTO_UDP)
		return -EOPNOTSUPP;
	if (!ifc)
		return -ENODEV;
	if (!info->dst.addr)
		return -EDESTADDRREQ;
	if (!src)
		src = ifc->addr;
	n = udp_build(st, src, sport, info->dst.addr, info->dst.port, buf, len);
	if (n < 0)
		return n;
	rc = ip_output_link(st, ifc, dst_mac, src, info->dst.addr, NS_PROTO_UDP,
			    st->tx + NS_HEADROOM, (size_t)n);
	return rc < 0 ? rc : (ssize_t)len;
}

ssize_t ns_chan_sendto_link(struct ns_chan *ch, const void *buf, size_t len,
			    const struct ns_pktinfo *info, struct ns_link *l,
			    const uint8_t dst_mac[6])
{
	ssize_t rc;

	stack_enter(ch->st);
	rc = sendto_link_locked(ch, buf, len, info, l, dst_mac);
	stack_leave(ch->st);
	return rc;
}

void udp_icmp_error(struct ns_stack *st, const uint8_t *orig_ip, size_t len, uint8_t type,
		    uint8_t code)
{
	/* Datagram sockets learn nothing from ICMP here (like an unconnected
	 * Linux UDP socket); counted for diagnosis. */
	st->stats.icmp_rx += 0;
}
