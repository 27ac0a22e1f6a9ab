/* icmp6.c — ICMPv6 (RFC 4443): echo, errors out (rate limited, never
 * about errors or to groups), errors in to TCP (Packet Too Big lowers the
 * path MTU), ND messages handed to nd6.c, and ICMPv6 channels for echo we
 * send or NAT. */
#include "netstack/internal.h"

enum {
	ICMP6_ERR_PER_SEC = 100,   /* RFC 4443 2.4(f): errors sent per second */
	ICMP6_ERR_MAX = 1280 - 40, /* an error fits the minimum MTU */
	IP6_HLEN = 40,
};

int icmp6_send(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *src,
	       const struct ipaddr *dst, uint8_t *msg, size_t len, uint8_t hlim)
{
	struct icmp_hdr *h = (void *)msg;
	struct ipaddr s = *src, nh;
	struct ns_iface *out = ifc;

	if (!out && route6_lookup(st, dst, &nh, &out) < 0)
		return -ENETUNREACH;
	if (ipa_is_any(&s) && h->type != ND_NS && !ip6_src_for(st, out, dst, &s))
		return -EADDRNOTAVAIL;
	h->csum = 0;
	h->csum = (uint16_t)~ipa_pseudo_csum_fold_sum(&s, dst, NS_PROTO_ICMPV6, msg, len, len, 0);
	st->stats.icmp6_tx++;
	if (ifc)
		return ip6_output_if(st, ifc, &s, dst, NS_PROTO_ICMPV6, hlim, msg, len);
	/* Errors fit the minimum MTU and never fragment (they sit in st->frag);
	 * echo replies may. */
	return ip6_output(st, &s, dst, NS_PROTO_ICMPV6, hlim, msg, len, false);
}

static void echo_reply(struct ns_stack *st, const struct ip_rx *rx)
{
	uint8_t *msg = st->tx + NS_HEADROOM;

	if (rx->l4len > NS_FRAME_BUF - NS_HEADROOM)
		return;
	memcpy(msg, rx->l4, rx->l4len);
	msg[0] = ICMP6_ECHOREPLY;
	icmp6_send(st, NULL, &rx->daddr, &rx->saddr, msg, rx->l4len, 0);
}

static void to_chan(struct ns_stack *st, const struct ip_rx *rx, const struct icmp_hdr *h)
{
	struct ns_pktinfo info = {0};
	struct ns_chan *ch;
	uint16_t id = ntohs(h->id);

	ch = chan_lookup(st, NS_PROTO_ICMPV6, &rx->daddr, id, &rx->saddr, id);
	if (!ch)
		return;
	ipa_to_sa(&rx->saddr, id, &info.src);
	ipa_to_sa(&rx->daddr, id, &info.dst);
	info.ttl = rx->ttl;
	info.tos = rx->tos;
	info.icmp_type = h->type;
	info.icmp_code = h->code;
	chan_deliver(st, ch, rx->l4, rx->l4len, &info);
}

/* Past the quoted packet's extension headers to its upper layer; false
 * when the quote is too short to tell. */
static bool quoted_upper(const uint8_t *q, size_t qlen, uint8_t *proto, size_t *off)
{
	uint8_t nh = q[6];
	size_t o = IP6_HLEN;

	for (unsigned n = 0; n < 8; n++) {
		if (nh != 0 && nh != 43 && nh != 60 && nh != 44)
			break;
		if (o + 8 > qlen)
			return false;
		if (nh == 44) { /* only a first fragment quotes the L4 header */
			if ((q[o + 2] << 8 | (q[o + 3] & 0xf8)) != 0)
				return false;
			nh = q[o];
			o += 8;
		} else {
			size_t hl = ((size_t)q[o + 1] + 1) * 8;

			nh = q[o];
			o += hl;
		}
	}
	*proto = nh;
	*off = o;
	return o + 8 <= qlen;
}

static enum ipa_err err_kind(uint8_t type, uint8_t code)
{
	if (type == ICMP6_PKTTOOBIG)
		return IPA_ERR_NEEDFRAG;
	if (type == ICMP6_UNREACH && code == ICMP6_UNREACH_PORT)
		return IPA_ERR_REFUSED;
	if (type == ICMP6_PARAMPROB && code == PP_NEXTHDR)
		return IPA_ERR_REFUSED; /* RFC 4443 3.4: the v6 "protocol unreachable" */
	if (type == ICMP6_UNREACH && code == ICMP6_UNREACH_NOROUTE)
		return IPA_ERR_NET;
	return IPA_ERR_SOFT;
}

/* An error quoting one of our packets: the path MTU, then the protocol. */
static void error_in(struct ns_stack *st, const struct ip_rx *rx, const struct icmp_hdr *h)
{
	const uint8_t *q = rx->l4 + 8;
	size_t qlen = rx->l4len - 8, off;
	struct ipaddr osrc, odst;
	uint8_t proto;
	uint32_t mtu = 0;

	if (rx->l4len < 8 + IP6_HLEN || (q[0] >> 4) != 6)
		return;
	osrc = ipa_v6(q + 8);
	odst = ipa_v6(q + 24);
	if (!ip6_is_local(st, &osrc))
		return; /* not about a packet of ours */
	if (h->type == ICMP6_PKTTOOBIG) {
		memcpy(&mtu, rx->l4 + 4, 4);
		mtu = ntohl(mtu);
		ip6_pmtu_learn(st, &odst, mtu);
	}
	if (!quoted_upper(q, qlen, &proto, &off))
		return;
	if (proto == NS_PROTO_TCP)
		tcp_icmp_error(st, &osrc, &odst, q + off, err_kind(h->type, h->code), mtu);
}

void icmp6_input(struct ns_stack *st, const struct ip_rx *rx)
{
	struct icmp_hdr h;

	st->stats.icmp6_rx++;
	if (rx->l4len < 4 || ipa_pseudo_csum_fold_sum(&rx->saddr, &rx->daddr, NS_PROTO_ICMPV6,
						      rx->l4, rx->l4len, rx->l4len, 0) != 0xffff) {
		st->stats.rx_bad_csum++;
		return;
	}
	memset(&h, 0, sizeof(h));
	memcpy(&h, rx->l4, rx->l4len < sizeof(h) ? rx->l4len : sizeof(h));
	switch (h.type) {
	case ICMP6_ECHO:
		if (rx->l4len < 8)
			break;
		if (rx->local && !rx->mcast)
			echo_reply(st, rx);
		else
			to_chan(st, rx, &h); /* NAT'ed or multicast echo */
		break;
	case ICMP6_ECHOREPLY:
		if (rx->l4len >= 8)
			to_chan(st, rx, &h);
		break;
	case ICMP6_UNREACH:
	case ICMP6_PKTTOOBIG:
	case ICMP6_TIMXCEED:
	case ICMP6_PARAMPROB:
		if (rx->local)
			error_in(st, rx, &h);
		break;
	case ND_RS:
	case ND_RA:
	case ND_NS:
	case ND_NA:
	case ND_REDIRECT:
		nd6_input(st, rx, h.type);
		break;
	case ICMP6_MLD_QUERY:
		mld6_query_input(st, rx);
		break;
	default:
		break;
	}
}

uint8_t icmp6_unreach_code(uint8_t v4_code)
{
	switch (v4_code) {
	case ICMP_UNREACH_NET:
		return ICMP6_UNREACH_NOROUTE;
	case ICMP_UNREACH_PORT:
	case ICMP_UNREACH_PROTO:
		return ICMP6_UNREACH_PORT;
	case 9:
	case 10:
	case 13: /* administratively prohibited */
		return ICMP6_UNREACH_ADMIN;
	default:
		return ICMP6_UNREACH_ADDR;
	}
}

/* RFC 4443 2.4(e): no error about an error, a redirect or, with the
 * exceptions of (e.3)/(e.4), a packet sent to a group; (e.5) nor to a
 * source that names no single node. */
static bool may_send_error(const uint8_t *pkt, size_t len, uint8_t type, uint8_t code)
{
	struct ipaddr src = ipa_v6(pkt + 8), dst = ipa_v6(pkt + 24);

	if (ipa_is_any(&src) || ipa_is_multicast6(&src))
		return false;
	if (ipa_is_multicast6(&dst) && type != ICMP6_PKTTOOBIG &&
	    !(type == ICMP6_PARAMPROB && code == PP_OPTION))
		return false;
	if (pkt[6] == NS_PROTO_ICMPV6 && len > IP6_HLEN &&
	    (pkt[IP6_HLEN] < 128 || pkt[IP6_HLEN] == ND_REDIRECT))
		return false;
	return true;
}

/* A token bucket refilled every second, like the challenge-ACK limit. */
static bool rate_ok(struct ns_stack *st)
{
	uint64_t sec = st->now / 1000000;

	if (sec != st->icmp6_err_sec) {
		st->icmp6_err_sec = sec;
		st->icmp6_err_n = 0;
	}
	if (st->icmp6_err_n >= ICMP6_ERR_PER_SEC) {
		st->stats.icmp6_ratelimited++;
		return false;
	}
	st->icmp6_err_n++;
	return true;
}

void icmp6_send_error(struct ns_stack *st, struct ns_iface *ifc, const uint8_t *pkt, size_t len,
		      uint8_t type, uint8_t code, uint32_t param)
{
	uint8_t *msg = st->frag + NS_HEADROOM;
	size_t quote = len < ICMP6_ERR_MAX - 8 ? len : ICMP6_ERR_MAX - 8;
	struct ipaddr dst, src, any = {{0, 0, 0, 0}};
	uint32_t p = htonl(param);

	(void)ifc;
	if (len < IP6_HLEN || !may_send_error(pkt, len, type, code) || !rate_ok(st))
		return;
	dst = ipa_v6(pkt + 8);
	src = ipa_v6(pkt + 24);
	/* From the address the packet was sent to when it is ours. */
	if (!ip6_is_local(st, &src))
		src = any;
	msg[0] = type;
	msg[1] = code;
	memcpy(msg + 4, &p, 4);
	/* st->frag is free again once the output copies: no fragmenting. */
	memcpy(msg + 8, pkt, quote);
	st->stats.icmp6_err_tx++;
	if (ipa_is_any(&src)) {
		struct ns_iface *out;
		struct ipaddr nh;

		if (route6_lookup(st, &dst, &nh, &out) < 0 || !ip6_src_for(st, out, &dst, &src))
			return;
	}
	icmp6_send(st, NULL, &src, &dst, msg, 8 + quote, 0);
}
