/* icmp.c — ICMP (RFC 792): echo, errors out, errors in to UDP/TCP, and
 * ICMP channels for everything else (pings we send, NAT'ed echo). */
#include "netstack/internal.h"

static void icmp_send(struct ns_stack *st, uint32_t src, uint32_t dst, uint8_t *msg, size_t len)
{
	struct icmp_hdr *h = (void *)msg;

	h->csum = 0;
	h->csum = (uint16_t)~ns_csum_fold(ns_csum_add(0, msg, len));
	st->stats.icmp_tx++;
	ip_output(st, src, dst, NS_PROTO_ICMP, 0, 0, msg, len, false);
}

static void icmp_echo_reply(struct ns_stack *st, const struct ip_rx *rx)
{
	uint8_t *msg = st->tx + NS_HEADROOM;

	if (rx->l4len > NS_FRAME_BUF - NS_HEADROOM)
		return;
	memcpy(msg, rx->l4, rx->l4len);
	msg[0] = ICMP_ECHOREPLY;
	icmp_send(st, rx->dst, rx->src, msg, rx->l4len);
}

static void icmp_to_chan(struct ns_stack *st, const struct ip_rx *rx, const struct icmp_hdr *h)
{
	struct ns_pktinfo info = { 0 };
	struct ns_chan *ch;
	uint16_t id = ntohs(h->id);

	ch = chan_lookup(st, NS_PROTO_ICMP, &rx->daddr, id, &rx->saddr, id);
	if (!ch)
		return;
	info.src.addr = rx->src;
	info.src.port = id;
	info.dst.addr = rx->dst;
	info.dst.port = id;
	info.ttl = rx->ttl;
	info.tos = rx->tos;
	info.icmp_type = h->type;
	info.icmp_code = h->code;
	chan_deliver(st, ch, rx->l4, rx->l4len, &info);
}

static enum ipa_err icmp_err_kind(uint8_t type, uint8_t code)
{
	if (type != ICMP_UNREACH)
		return IPA_ERR_SOFT;
	switch (code) {
	case ICMP_UNREACH_NEEDFRAG:
		return IPA_ERR_NEEDFRAG;
	case ICMP_UNREACH_PORT:
	case ICMP_UNREACH_PROTO:
		return IPA_ERR_REFUSED;
	case ICMP_UNREACH_NET:
		return IPA_ERR_NET;
	default:
		return IPA_ERR_SOFT;
	}
}

/* An error quoting one of our datagrams: tell the protocol that sent it. */
static void icmp_error_in(struct ns_stack *st, const struct ip_rx *rx, const struct icmp_hdr *h)
{
	const uint8_t *orig = rx->l4 + 8;
	size_t olen = rx->l4len - 8, ohl;

	if (olen < 20 + 8 || (orig[0] >> 4) != 4)
		return;
	ohl = (size_t)(orig[0] & 15) * 4;
	if (ohl < 20 || olen < ohl + 8)
		return;
	if (orig[9] == NS_PROTO_UDP) {
		udp_icmp_error(st, orig, olen, h->type, h->code);
	} else if (orig[9] == NS_PROTO_TCP) {
		uint32_t a[2];
		struct ipaddr src, dst;

		memcpy(a, orig + 12, 8);
		src = ipa_v4(ntohl(a[0]));
		dst = ipa_v4(ntohl(a[1]));
		tcp_icmp_error(st, &src, &dst, orig + ohl, icmp_err_kind(h->type, h->code),
			       (unsigned)(rx->l4[6] << 8 | rx->l4[7]));
	}
}

void icmp_input(struct ns_stack *st, const struct ip_rx *rx)
{
	struct icmp_hdr h;

	st->stats.icmp_rx++;
	if (rx->l4len < sizeof(h) ||
	    ns_csum_fold(ns_csum_add(0, rx->l4, rx->l4len)) != 0xffff) {
		st->stats.rx_bad_csum++;
		return;
	}
	memcpy(&h, rx->l4, sizeof(h));
	switch (h.type) {
	case ICMP_ECHO:
		if (rx->local && iface_is_local(st, rx->dst))
			icmp_echo_reply(st, rx);
		else
			icmp_to_chan(st, rx, &h); /* NAT'ed or broadcast echo */
		break;
	case ICMP_ECHOREPLY:
		icmp_to_chan(st, rx, &h);
		break;
	case ICMP_UNREACH:
	case ICMP_TIMXCEED:
		icmp_error_in(st, rx, &h);
		break;
	default:
		break;
	}
}

void icmp_send_error_raw(struct ns_stack *st, uint32_t src_of_error, const uint8_t *orig_ip,
			 size_t orig_len, uint8_t type, uint8_t code)
{
	uint8_t *msg = st->frag + NS_HEADROOM;
	struct icmp_hdr *h = (void *)msg;
	uint32_t osrc, odst;
	size_t hl = (size_t)(orig_ip[0] & 15) * 4;
	size_t quote = orig_len < hl + 8 ? orig_len : hl + 8;

	memcpy(&osrc, orig_ip + 12, 4);
	memcpy(&odst, orig_ip + 16, 4);
	osrc = ntohl(osrc);
	(void)odst;
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->code = code;
	memcpy(msg + 8, orig_ip, quote);
	/* st->frag is free again once ip_output copies: no fragmenting here. */
	h->csum = (uint16_t)~ns_csum_fold(ns_csum_add(0, msg, 8 + quote));
	st->stats.icmp_tx++;
	ip_output(st, src_of_error, osrc, NS_PROTO_ICMP, 0, 0, msg, 8 + quote, true);
}

void icmp_send_error(struct ns_stack *st, const struct ip_rx *rx, uint8_t type, uint8_t code)
{
	const struct ip_hdr *ih = (const void *)rx->ip;

	/* RFC 1122 3.2.2: not about ICMP errors, broadcasts, multicasts, or
	 * fragments other than the first. */
	if (rx->dst == 0xffffffffu || (rx->dst >> 28) == 0xe ||
	    (ntohs(ih->off) & IP_OFFMASK) != 0)
		return;
	if (rx->proto == NS_PROTO_ICMP && rx->l4len >= 1 && rx->l4[0] != ICMP_ECHO &&
	    rx->l4[0] != ICMP_ECHOREPLY)
		return;
	if (rx->ifc && rx->dst == (rx->ifc->addr | ~rx->ifc->mask))
		return;
	icmp_send_error_raw(st, rx->dst, rx->ip, rx->iplen, type, code);
}
