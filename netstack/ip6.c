/* ip6.c — IPv6 (RFC 8200): header validation, the extension-header walk
 * (bounded), fragment reassembly through reass.c, and output with source
 * fragmentation and the path MTU learned from Packet Too Big. Addresses
 * and routes are in addr6.c, ICMPv6 in icmp6.c, ND in nd6.c. */
#include <stdlib.h>

#include "netstack/internal.h"

enum {
	IP6_HLEN = 40,
	IP6_MIN_MTU = 1280,
	IP6_DEFAULT_HLIM = 64,
	IP6_MAX_EXT = 8, /* extension headers walked per packet */
	NH_HOPOPTS = 0,
	NH_ROUTING = 43,
	NH_FRAGMENT = 44,
	NH_NONE = 59,
	NH_DSTOPTS = 60,
	PMTU6_LIFETIME_US = 600000000u, /* RFC 8201 5.3: 10 minutes */
};

struct ip6_hdr {
	uint32_t vtcfl; /* version, traffic class, flow label */
	uint16_t plen;
	uint8_t nh, hlim;
	uint8_t src[16], dst[16];
} __attribute__((packed));

/* ------------------------------------------------------------ input */

/* Why the walk stopped. */
enum walk_rc { WALK_UPPER, WALK_DROP, WALK_FRAG };

struct walk {
	const uint8_t *p;
	size_t len;
	uint8_t nh;	 /* next header to look at */
	size_t off;	 /* where it starts */
	size_t nh_field; /* offset of the byte that named it (for errors) */
	bool reassembled;
};

static void param_problem(struct ns_stack *st, const struct ip_rx *rx, const struct walk *w,
			  uint8_t code, size_t ptr)
{
	icmp6_send_error(st, rx->ifc, w->p, w->len, ICMP6_PARAMPROB, code, (uint32_t)ptr);
}

/* Hop-by-hop and destination options (RFC 8200 4.2): the two high bits of
 * an unknown option's type say what to do with the packet. */
static bool walk_options(struct ns_stack *st, const struct ip_rx *rx, const struct walk *w,
			 size_t hlen)
{
	const uint8_t *o = w->p + w->off;
	size_t i = 2;

	while (i < hlen) {
		uint8_t type = o[i];

		if (type == 0) { /* Pad1 */
			i++;
			continue;
		}
		if (i + 2 > hlen || i + 2 + o[i + 1] > hlen)
			return false;
		if (type != 1) { /* not PadN: we know no other option */
			switch (type >> 6) {
			case 0:
				break;
			case 3:
				if (rx->mcast)
					return false;
				/* fall through */
			case 2:
				param_problem(st, rx, w, PP_OPTION, w->off + i);
				/* fall through */
			default:
				return false;
			}
		}
		i += 2 + o[i + 1];
	}
	return true;
}

/* Walk the header chain from w->nh at w->off to the upper layer. */
static enum walk_rc walk_ext(struct ns_stack *st, const struct ip_rx *rx, struct walk *w)
{
	for (unsigned n = 0;; n++) {
		const uint8_t *h = w->p + w->off;
		size_t hlen;

		switch (w->nh) {
		case NH_HOPOPTS:
		case NH_ROUTING:
		case NH_DSTOPTS:
		case NH_FRAGMENT:
			break;
		case NH_NONE:
			return WALK_DROP;
		default:
			return WALK_UPPER;
		}
		if (n >= IP6_MAX_EXT || w->off + 8 > w->len)
			return WALK_DROP;
		/* Hop-by-hop options only right after the fixed header. */
		if (w->nh == NH_HOPOPTS && w->off != IP6_HLEN) {
			param_problem(st, rx, w, PP_NEXTHDR, w->nh_field);
			return WALK_DROP;
		}
		if (w->nh == NH_FRAGMENT)
			return w->reassembled ? WALK_DROP : WALK_FRAG;
		hlen = ((size_t)h[1] + 1) * 8;
		if (w->off + hlen > w->len)
			return WALK_DROP;
		if (w->nh == NH_ROUTING && h[3] != 0) {
			/* Segments left: we route for nobody and know no type
			 * (type 0 is gone, RFC 5095). */
			param_problem(st, rx, w, PP_HEADER, w->off + 2);
			return WALK_DROP;
		}
		if (w->nh != NH_ROUTING && !walk_options(st, rx, w, hlen))
			return WALK_DROP;
		w->nh_field = w->off;
		w->nh = h[0];
		w->off += hlen;
	}
}

/* RFC 7112: a first fragment must hold the whole header chain, up to and
 * including the upper-layer header, or filters (and we) cannot judge it.
 * p/len: what follows the Fragment header; nh: the header it names. */
static bool first_frag_chain_ok(const uint8_t *p, size_t len, uint8_t nh)
{
	size_t off = 0;

	for (unsigned n = 0; n < IP6_MAX_EXT; n++) {
		switch (nh) {
		case NH_ROUTING:
		case NH_DSTOPTS:
			if (off + 8 > len || off + ((size_t)p[off + 1] + 1) * 8 > len)
				return false;
			nh = p[off];
			off += ((size_t)p[off + 1] + 1) * 8;
			continue;
		case NS_PROTO_TCP:
			return off + 20 <= len;
		case NS_PROTO_UDP:
			return off + 8 <= len;
		case NS_PROTO_ICMPV6:
			return off + 4 <= len;
		default: /* unknown or no next header: nothing more to hold */
			return true;
		}
	}
	return false;
}

/* A fragment (RFC 8200 4.5): the datagram when complete (malloc'd), with
 * the fixed header in front naming the fragment's next header. */
static uint8_t *frag_input(struct ns_stack *st, struct ip_rx *rx, struct walk *w, size_t *out_len)
{
	const uint8_t *fh = w->p + w->off;
	uint16_t offw = (uint16_t)(fh[2] << 8 | fh[3]);
	uint8_t hdr[IP6_HLEN];
	struct reass_piece pc = {
		.src = rx->saddr,
		.dst = rx->daddr,
		.id = (uint32_t)fh[4] << 24 | (uint32_t)fh[5] << 16 | (uint32_t)fh[6] << 8 | fh[7],
		.proto = fh[0],
		.v6 = true,
		.more = offw & 1,
		.off = offw & ~7u,
		.hdr = hdr,
		.hlen = IP6_HLEN,
		.payload = fh + 8,
		.plen = w->len - w->off - 8,
	};

	if (pc.more && (pc.plen & 7)) {
		param_problem(st, rx, w, PP_HEADER, 4);
		return NULL;
	}
	if (pc.off + pc.plen > 65535) {
		param_problem(st, rx, w, PP_HEADER, w->off + 2);
		return NULL;
	}
	if (pc.off == 0 && !first_frag_chain_ok(pc.payload, pc.plen, pc.proto)) {
		st->stats.ip6_frag_chain_bad++;
		param_problem(st, rx, w, PP_CHAIN, 0);
		return NULL;
	}
	memcpy(hdr, w->p, IP6_HLEN);
	hdr[6] = fh[0];
	return reass_add_piece(st, &pc, out_len);
}

static void ip6_dispatch(struct ns_stack *st, struct ip_rx *rx, const struct walk *w)
{
	rx->proto = w->nh;
	rx->l4 = w->p + w->off;
	rx->l4len = w->len - w->off;
	rx->ip = w->p;
	rx->iplen = w->len;
	switch (w->nh) {
	case NS_PROTO_ICMPV6:
		icmp6_input(st, rx);
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
			param_problem(st, rx, w, PP_NEXTHDR, w->nh_field);
	}
}

/* Is dst for us: our address, a group we are in, or (NAT) anything
 * unicast on an accept-any interface? */
static bool dst_ok(struct ns_stack *st, struct ns_iface *ifc, struct ip_rx *rx, bool *tentative)
{
	const uint8_t *d = ipa_bytes(&rx->daddr);
	struct ns_ifaddr6 *a;

	*tentative = false;
	if (rx->mcast) {
		static const uint8_t all_nodes[16] = {0xff, 2, [15] = 1};
		static const uint8_t all_routers[16] = {0xff, 2, [15] = 2};

		static const uint8_t dhcp6_servers[16] = { 0xff, 2, [13] = 1, [15] = 2 };
		bool router = ifc->v6flags & NS_IF6_ROUTER;

		if (!memcmp(d, all_nodes, 16) ||
		    (router && (!memcmp(d, all_routers, 16) || !memcmp(d, dhcp6_servers, 16))))
			return true;
		for (unsigned i = 0; i < NS_MAX_ADDR6; i++) {
			struct ipaddr sn = ip6_solicited_node(&ifc->addr6[i].addr);

			if (ifc->addr6[i].state != ADDR6_FREE && ipa_eq(&sn, &rx->daddr))
				return true;
		}
		return false;
	}
	a = ip6_ifaddr(ifc, &rx->daddr);
	if (a) {
		*tentative = a->state != ADDR6_PREFERRED;
		rx->local = !*tentative;
		return true;
	}
	rx->local = ip6_is_local(st, &rx->daddr);
	if (rx->local)
		return true;
	return (ifc->flags & NS_IF_ACCEPT_ANY) && !ipa_is_linklocal6(&rx->daddr) &&
	       !ipa_is_any(&rx->daddr) && !ipa_is_v4(&rx->daddr);
}

static bool src_ok(struct ns_stack *st, const struct ip_rx *rx)
{
	/* Never from a group, a loopback, a mapped IPv4 address or
	 * ourselves (the IPv6 "LAND"); :: only for DAD (icmp6 checks). */
	static const uint8_t loop[16] = {[15] = 1};

	return !ipa_is_multicast6(&rx->saddr) && memcmp(ipa_bytes(&rx->saddr), loop, 16) &&
	       !ipa_is_v4(&rx->saddr) && !ip6_is_local(st, &rx->saddr);
}

void ip6_input(struct ns_stack *st, struct ns_iface *ifc, const uint8_t *p, size_t len)
{
	struct ip6_hdr ih;
	struct ip_rx rx;
	struct walk w = {0};
	uint8_t *whole = NULL;
	bool tentative;

	st->stats.ip6_rx++;
	if (len < IP6_HLEN)
		goto bad;
	memcpy(&ih, p, IP6_HLEN);
	if ((p[0] >> 4) != 6 || (size_t)ntohs(ih.plen) + IP6_HLEN > len || ih.plen == 0)
		goto bad; /* plen 0 would be a jumbogram: not on Ethernet */
	memset(&rx, 0, sizeof(rx));
	rx.ifc = ifc;
	rx.v6 = true;
	rx.saddr = ipa_v6(ih.src);
	rx.daddr = ipa_v6(ih.dst);
	rx.ttl = ih.hlim;
	rx.tos = (uint8_t)(ntohl(ih.vtcfl) >> 20);
	rx.mcast = ipa_is_multicast6(&rx.daddr);
	if (!src_ok(st, &rx) || !dst_ok(st, ifc, &rx, &tentative))
		goto bad;
	w.p = p;
	w.len = IP6_HLEN + ntohs(ih.plen);
	w.nh = ih.nh;
	w.off = IP6_HLEN;
	w.nh_field = 6;
	switch (walk_ext(st, &rx, &w)) {
	case WALK_DROP:
		goto bad;
	case WALK_FRAG: {
		const uint8_t *fh = p + w.off;
		size_t wlen;

		/* An atomic fragment (RFC 6946) is the packet itself. */
		if (w.off + 8 <= w.len && !(fh[2] << 8 | (fh[3] & 0xf9))) {
			w.nh_field = w.off;
			w.nh = fh[0];
			w.off += 8;
			w.reassembled = true;
			if (walk_ext(st, &rx, &w) != WALK_UPPER)
				goto bad;
			break;
		}
		if (w.off + 8 > w.len || tentative)
			goto bad;
		whole = frag_input(st, &rx, &w, &wlen);
		if (!whole)
			return;
		w = (struct walk){whole, wlen, whole[6], IP6_HLEN, 6, true};
		rx.frag = true;
		if (walk_ext(st, &rx, &w) != WALK_UPPER)
			goto bad_free;
		break;
	}
	case WALK_UPPER:
		break;
	}
	/* A tentative address takes Neighbor Discovery only (RFC 4862 5.4). */
	if (tentative && w.nh != NS_PROTO_ICMPV6)
		goto bad_free;
	ip6_dispatch(st, &rx, &w);
	free(whole);
	return;
bad_free:
	free(whole);
bad:
	st->stats.ip6_bad++;
}

/* ------------------------------------------------------------ output */

uint32_t ip6_pseudo_sum(const struct ipaddr *src, const struct ipaddr *dst, uint8_t proto,
			size_t len)
{
	uint32_t tail[2] = {htonl((uint32_t)len), htonl(proto)};

	return ns_csum_add(ns_csum_add(ns_csum_add(0, src->w, 16), dst->w, 16), tail, 8);
}

static struct pmtu6 *pmtu_find(struct ns_stack *st, const struct ipaddr *dst)
{
	for (unsigned i = 0; i < st->npmtu6; i++)
		if (st->pmtu6[i].mtu && ipa_eq(&st->pmtu6[i].dst, dst))
			return &st->pmtu6[i];
	return NULL;
}

void ip6_pmtu_learn(struct ns_stack *st, const struct ipaddr *dst, unsigned mtu)
{
	struct pmtu6 *e = pmtu_find(st, dst);

	if (mtu < IP6_MIN_MTU)
		mtu = IP6_MIN_MTU; /* RFC 8200 5: never below the minimum */
	if (!e && st->npmtu6 < NS_PMTU6_SIZE) {
		e = &st->pmtu6[st->npmtu6++];
	} else if (!e) { /* full: the entry that expires first */
		e = &st->pmtu6[0];
		for (unsigned i = 1; i < NS_PMTU6_SIZE; i++)
			if (st->pmtu6[i].expires < e->expires)
				e = &st->pmtu6[i];
	}
	if (!ipa_eq(&e->dst, dst)) {
		e->dst = *dst;
		e->mtu = 0;
	}
	if (e->mtu && e->mtu <= mtu && e->expires > st->now)
		return; /* only ever lower it until it expires */
	e->mtu = mtu;
	e->expires = st->now + PMTU6_LIFETIME_US;
}

static unsigned if_mtu6(const struct ns_iface *ifc)
{
	unsigned m = ifc->mtu6 && ifc->mtu6 < ifc->link->mtu ? ifc->mtu6 : ifc->link->mtu;

	return m < IP6_MIN_MTU ? IP6_MIN_MTU : m;
}

/* The path MTU toward dst out of ifc (whole packet). */
static unsigned path_mtu(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *dst)
{
	struct pmtu6 *e = pmtu_find(st, dst);
	unsigned m = if_mtu6(ifc);

	if (e && e->expires > st->now && e->mtu < m)
		m = e->mtu;
	return m;
}

unsigned ip6_mtu_to(struct ns_stack *st, const struct ipaddr *dst)
{
	struct ns_iface *ifc;
	struct ipaddr nh;

	if (route6_lookup(st, dst, &nh, &ifc) < 0)
		return IP6_MIN_MTU - IP6_HLEN;
	return path_mtu(st, ifc, dst) - IP6_HLEN;
}

static void fill_hdr(uint8_t *l3, const struct ipaddr *src, const struct ipaddr *dst, uint8_t nh,
		     uint8_t hlim, size_t plen)
{
	struct ip6_hdr *h = (void *)l3;

	h->vtcfl = htonl(6u << 28);
	h->plen = htons((uint16_t)plen);
	h->nh = nh;
	h->hlim = hlim;
	memcpy(h->src, src->w, 16);
	memcpy(h->dst, dst->w, 16);
}

static int l2_output6(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *nh,
		      uint8_t *l3, size_t len)
{
	if (ipa_is_multicast6(nh)) {
		uint8_t mac[6] = {0x33, 0x33}; /* RFC 2464 7 */

		memcpy(mac + 2, ipa_bytes(nh) + 12, 4);
		return ether_output(st, ifc, mac, ETHERTYPE_IPV6, l3, len);
	}
	return nd6_output(st, ifc, nh, l3, len);
}

/* Source fragmentation (RFC 8200 4.5) with a fragment header per piece. */
static int emit_frags(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *nh,
		      const struct ipaddr *src, const struct ipaddr *dst, uint8_t proto,
		      uint8_t hlim, const uint8_t *l4, size_t l4len, unsigned mtu)
{
	size_t chunk = (mtu - IP6_HLEN - 8) & ~(size_t)7;
	uint32_t id = htonl(++st->ip6_id);
	int rc = 0;

	for (size_t off = 0; off < l4len && rc >= 0; off += chunk) {
		size_t n = l4len - off < chunk ? l4len - off : chunk;
		uint8_t *l3 = st->frag + NS_HEADROOM, *fh = l3 + IP6_HLEN;
		uint16_t offw = (uint16_t)(off | (off + n < l4len));

		fill_hdr(l3, src, dst, NH_FRAGMENT, hlim, n + 8);
		fh[0] = proto;
		fh[1] = 0;
		fh[2] = (uint8_t)(offw >> 8);
		fh[3] = (uint8_t)offw;
		memcpy(fh + 4, &id, 4);
		memcpy(fh + 8, l4 + off, n);
		st->stats.ip6_frag_tx++;
		rc = l2_output6(st, ifc, nh, l3, IP6_HLEN + 8 + n);
	}
	return rc;
}

static int emit(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *nh,
		const struct ipaddr *src, const struct ipaddr *dst, uint8_t proto, uint8_t hlim,
		uint8_t *l4, size_t l4len, bool df)
{
	unsigned mtu = path_mtu(st, ifc, dst);
	struct ipaddr s;

	if (src)
		s = *src;
	else if (!ip6_src_for(st, ifc, dst, &s))
		return -EADDRNOTAVAIL;
	if (!hlim)
		hlim = ifc->hop_limit ? ifc->hop_limit : IP6_DEFAULT_HLIM;
	if (l4len > 65535)
		return -EMSGSIZE;
	if (l4len + IP6_HLEN <= mtu) {
		fill_hdr(l4 - IP6_HLEN, &s, dst, proto, hlim, l4len);
		return l2_output6(st, ifc, nh, l4 - IP6_HLEN, l4len + IP6_HLEN);
	}
	if (df)
		return -EMSGSIZE;
	return emit_frags(st, ifc, nh, &s, dst, proto, hlim, l4, l4len, mtu);
}

int ip6_output(struct ns_stack *st, const struct ipaddr *src, const struct ipaddr *dst,
	       uint8_t proto, uint8_t hlim, uint8_t *l4, size_t l4len, bool df)
{
	struct ns_iface *ifc;
	struct ipaddr nh;

	if (route6_lookup(st, dst, &nh, &ifc) < 0)
		return -ENETUNREACH;
	return emit(st, ifc, &nh, ipa_is_any(src) ? NULL : src, dst, proto, hlim, l4, l4len, df);
}

int ip6_output_if(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *src,
		  const struct ipaddr *dst, uint8_t proto, uint8_t hlim, uint8_t *l4, size_t l4len)
{
	return emit(st, ifc, dst, src, dst, proto, hlim, l4, l4len, true);
}
