/* ether.c — Ethernet II framing. */
#include "netstack/internal.h"

const uint8_t ether_broadcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

void ether_input(struct ns_stack *st, struct ns_iface *ifc, const uint8_t *f, size_t len)
{
	const struct eth_hdr *eh = (const void *)f;

	if (len < ETH_HLEN || len > NS_FRAME_MAX(ifc->link->mtu) + 4 /* VLAN slack */) {
		st->stats.rx_bad_eth++;
		return;
	}
	/* Ours, broadcast or multicast (IPv4 multicast is dropped later). */
	if (memcmp(eh->dst, ifc->link->mac, 6) != 0 && !(eh->dst[0] & 1)) {
		st->stats.rx_bad_eth++;
		return;
	}
	switch (ntohs(eh->type)) {
	case ETHERTYPE_IP:
		ip_input(st, ifc, f + ETH_HLEN, len - ETH_HLEN);
		break;
	case ETHERTYPE_IPV6:
		if (ifc->v6)
			ip6_input(st, ifc, f + ETH_HLEN, len - ETH_HLEN);
		else
			st->stats.rx_no_proto++;
		break;
	case ETHERTYPE_ARP:
		arp_input(st, ifc, f + ETH_HLEN, len - ETH_HLEN);
		break;
	default:
		st->stats.rx_no_proto++;
	}
}

int ether_output(struct ns_stack *st, struct ns_iface *ifc, const uint8_t dst[6], uint16_t type,
		 uint8_t *l3, size_t l3len)
{
	struct eth_hdr *eh = (void *)(l3 - ETH_HLEN);

	memcpy(eh->dst, dst ? dst : ether_broadcast, 6);
	memcpy(eh->src, ifc->link->mac, 6);
	eh->type = htons(type);
	return ns_link_transmit(ifc->link, eh, l3len + ETH_HLEN);
}
