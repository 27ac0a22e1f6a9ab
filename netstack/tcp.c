/* tcp.c — TCP placeholder: refuses every connection with a RST
 * (RFC 9293 3.10.7.1, CLOSED state) until the state machine lands. */
#include "netstack/internal.h"

void tcp_init(struct ns_stack *st)
{
}

void tcp_free_all(struct ns_stack *st)
{
}

void tcp_icmp_error(struct ns_stack *st, const uint8_t *orig_ip, size_t len, uint8_t type,
		    uint8_t code)
{
}

void tcp_input(struct ns_stack *st, const struct ip_rx *rx)
{
	struct tcp_hdr h, *o;
	uint8_t *l4 = st->tx + NS_HEADROOM;
	size_t hl, dlen;
	uint16_t c;

	st->stats.tcp_rx++;
	if (rx->l4len < sizeof(h))
		goto bad;
	memcpy(&h, rx->l4, sizeof(h));
	hl = (size_t)(h.off >> 4) * 4;
	if (hl < 20 || hl > rx->l4len)
		goto bad;
	if (ip_pseudo_csum_fold(htonl(rx->src), htonl(rx->dst), NS_PROTO_TCP, rx->l4,
				rx->l4len) != 0xffff) {
		st->stats.rx_bad_csum++;
		return;
	}
	if (h.flags & TH_RST)
		return;
	dlen = rx->l4len - hl + !!(h.flags & TH_SYN) + !!(h.flags & TH_FIN);
	o = (void *)l4;
	memset(o, 0, sizeof(*o));
	o->sport = h.dport;
	o->dport = h.sport;
	o->off = 5 << 4;
	if (h.flags & TH_ACK) {
		o->seq = h.ack;
		o->flags = TH_RST;
	} else {
		o->ack = htonl(ntohl(h.seq) + (uint32_t)dlen);
		o->flags = TH_RST | TH_ACK;
	}
	c = (uint16_t)~ip_pseudo_csum_fold(htonl(rx->dst), htonl(rx->src), NS_PROTO_TCP, o, 20);
	o->csum = c;
	st->stats.tcp_rst_tx++;
	ip_output(st, rx->dst, rx->src, NS_PROTO_TCP, 0, 0, l4, 20, true);
	return;
bad:
	st->stats.tcp_bad++;
}
