/* nd6.c — Neighbor Discovery (RFC 4861) and address autoconfiguration
 * (RFC 4862): the neighbour cache with its unreachability detection
 * (INCOMPLETE, REACHABLE, STALE, DELAY, PROBE) and a bounded queue per
 * unresolved neighbour (ARP's bound), NS/NA including DAD and unsolicited
 * announcements, router solicitation and, for a host, SLAAC from router
 * advertisements. */
#include "netstack/internal.h"

enum {
	ND_HLIM = 255, /* RFC 4861 6.1.2: proves the packet is from the link */
	MAX_MULTICAST_SOLICIT = 3,
	MAX_UNICAST_SOLICIT = 3,
	OPT_SLLA = 1,
	OPT_TLLA = 2,
	OPT_PREFIX = 3,
	OPT_MTU = 5,
	NA_ROUTER = 0x80,
	NA_SOLICITED = 0x40,
	NA_OVERRIDE = 0x20,
};

#define RETRANS_US 1000000u	      /* RetransTimer */
#define REACHABLE_US 30000000u	      /* REACHABLE_TIME */
#define DELAY_FIRST_PROBE_US 5000000u /* DELAY_FIRST_PROBE_TIME */
#define RTR_SOLICIT_INTERVAL_US 4000000u

static const uint8_t all_nodes[16] = {0xff, 2, [15] = 1};
static const uint8_t all_routers[16] = {0xff, 2, [15] = 2};

static void nd6_tick(struct ns_stack *st, struct ns_timer *t);

void nd6_init(struct ns_stack *st)
{
	timer_init(&st->nd_timer, nd6_tick);
}

static void drop_pending(struct ns_stack *st, struct nd_entry *e)
{
	while (e->pending) {
		struct ns_pkt *p = e->pending;

		e->pending = p->next;
		pkt_free(st, p);
		st->stats.nd_drop_pending++;
	}
	e->npending = 0;
}

void nd6_flush(struct ns_stack *st)
{
	for (unsigned i = 0; i < NS_ND_SIZE; i++) {
		drop_pending(st, &st->nd[i]);
		st->nd[i].state = ND_FREE;
	}
	timer_cancel(st, &st->nd_timer);
}

void nd6_kick(struct ns_stack *st)
{
	timer_arm(st, &st->nd_timer, st->now);
}

static struct nd_entry *nd_find(struct ns_stack *st, const struct ipaddr *a)
{
	struct nd_entry *e = &st->nd[st->nd_hint];

	/* A flow sends to one neighbour packet after packet. */
	if (e->state != ND_FREE && ipa_eq(&e->addr, a))
		return e;
	for (unsigned i = 0; i < NS_ND_SIZE; i++)
		if (st->nd[i].state != ND_FREE && ipa_eq(&st->nd[i].addr, a)) {
			st->nd_hint = i;
			return &st->nd[i];
		}
	return NULL;
}

/* A free entry, else the resolved one used longest ago. */
static struct nd_entry *nd_slot(struct ns_stack *st)
{
	struct nd_entry *victim = NULL;

	for (unsigned i = 0; i < NS_ND_SIZE; i++) {
		struct nd_entry *e = &st->nd[i];

		if (e->state == ND_FREE)
			return e;
		if (e->state != ND_STATIC && e->state != ND_INCOMPLETE &&
		    (!victim || e->when < victim->when))
			victim = e;
	}
	if (victim) {
		drop_pending(st, victim);
		victim->state = ND_FREE;
	}
	return victim;
}

static void nd_set(struct nd_entry *e, struct ns_stack *st, uint8_t state, uint64_t delay)
{
	e->state = state;
	e->probes = 0;
	e->when = st->now + delay;
	if (delay)
		nd6_kick(st);
}

/* ------------------------------------------------------------ messages */

static void put_lla_opt(uint8_t *o, uint8_t type, const uint8_t mac[6])
{
	o[0] = type;
	o[1] = 1;
	memcpy(o + 2, mac, 6);
}

/* NS for target: to its solicited-node group (dst NULL) or unicast;
 * from :: for DAD (no link-layer option then, RFC 4862 5.4.2). */
static void send_ns(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *target,
		    const struct ipaddr *dst, bool dad)
{
	uint8_t buf[NS_HEADROOM + 32];
	uint8_t *m = buf + NS_HEADROOM;
	struct ipaddr sn = ip6_solicited_node(target), src = {{0, 0, 0, 0}};
	size_t len = dad ? 24 : 32;

	memset(m, 0, 32);
	m[0] = ND_NS;
	memcpy(m + 8, target->w, 16);
	if (!dad) {
		put_lla_opt(m + 24, OPT_SLLA, ifc->link->mac);
		if (!ip6_src_for(st, ifc, dst ? dst : target, &src))
			return;
	}
	st->stats.nd_tx++;
	icmp6_send(st, ifc, &src, dst ? dst : &sn, m, len, ND_HLIM);
}

static void send_na(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *target,
		    const struct ipaddr *dst, uint8_t flags)
{
	uint8_t buf[NS_HEADROOM + 32];
	uint8_t *m = buf + NS_HEADROOM;

	memset(m, 0, 32);
	m[0] = ND_NA;
	m[4] = flags | ((ifc->v6flags & NS_IF6_ROUTER) ? NA_ROUTER : 0);
	memcpy(m + 8, target->w, 16);
	put_lla_opt(m + 24, OPT_TLLA, ifc->link->mac);
	st->stats.nd_tx++;
	icmp6_send(st, ifc, target, dst, m, 32, ND_HLIM);
}

static void send_rs(struct ns_stack *st, struct ns_iface *ifc)
{
	uint8_t buf[NS_HEADROOM + 16];
	uint8_t *m = buf + NS_HEADROOM;
	struct ipaddr dst = ipa_v6(all_routers), src;

	if (!ip6_src_for(st, ifc, &dst, &src))
		return;
	memset(m, 0, 16);
	m[0] = ND_RS;
	put_lla_opt(m + 8, OPT_SLLA, ifc->link->mac);
	st->stats.nd_tx++;
	icmp6_send(st, ifc, &src, &dst, m, 16, ND_HLIM);
}

void nd6_announce(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *a)
{
	struct ipaddr dst = ipa_v6(all_nodes);

	send_na(st, ifc, a, &dst, NA_OVERRIDE);
}

/* ------------------------------------------------------------- output */

static void queue_pkt(struct ns_stack *st, struct nd_entry *e, const uint8_t *l3, size_t len,
		      int *rc)
{
	struct ns_pkt *p, **tail;

	if (e->npending >= NS_ARP_PENDING_MAX) {
		st->stats.nd_drop_pending++;
		*rc = -ENOBUFS;
		return;
	}
	p = pkt_alloc(st, len + ETH_HLEN);
	if (!p) {
		*rc = -ENOMEM;
		return;
	}
	p->data = p->buf + ETH_HLEN;
	p->len = len;
	memcpy(p->data, l3, len);
	for (tail = &e->pending; *tail; tail = &(*tail)->next)
		;
	*tail = p; /* keep the order packets were sent in */
	e->npending++;
}

int nd6_output(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *nh, uint8_t *l3,
	       size_t l3len)
{
	struct nd_entry *e = nd_find(st, nh);
	int rc = 0;

	if (e && e->state != ND_INCOMPLETE) {
		if (e->state == ND_STALE) /* RFC 4861 7.3.3: check it soon */
			nd_set(e, st, ND_DELAY, DELAY_FIRST_PROBE_US);
		return ether_output(st, e->ifc, e->mac, ETHERTYPE_IPV6, l3, l3len);
	}
	if (!e) {
		e = nd_slot(st);
		if (!e) {
			st->stats.nd_drop_pending++;
			return -EHOSTUNREACH;
		}
		memset(e, 0, sizeof(*e));
		e->addr = *nh;
		e->ifc = ifc;
		nd_set(e, st, ND_INCOMPLETE, RETRANS_US);
		e->probes = 1;
		queue_pkt(st, e, l3, l3len, &rc);
		/* After queueing: the NS is built in its own buffer, but a
		 * queued copy is safe from whatever the send reuses. */
		send_ns(st, ifc, nh, NULL, false);
		return rc;
	}
	queue_pkt(st, e, l3, l3len, &rc);
	return rc;
}

/* ------------------------------------------------------------- input */

/* Options from off on: all well-formed (RFC 4861 4.6: length 0 is
 * invalid)? */
static bool opts_ok(const uint8_t *p, size_t len, size_t off)
{
	while (off < len) {
		if (off + 2 > len || p[off + 1] == 0 || off + p[off + 1] * 8u > len)
			return false;
		off += p[off + 1] * 8u;
	}
	return true;
}

static const uint8_t *opt_find(const uint8_t *p, size_t len, size_t off, uint8_t type,
			       unsigned min_units)
{
	for (; off < len; off += p[off + 1] * 8u)
		if (p[off] == type && p[off + 1] >= min_units)
			return p + off;
	return NULL;
}

static void flush_pending(struct ns_stack *st, struct nd_entry *e)
{
	struct ns_pkt *p = e->pending;

	e->pending = NULL;
	e->npending = 0;
	while (p) {
		struct ns_pkt *n = p->next;

		ether_output(st, e->ifc, e->mac, ETHERTYPE_IPV6, p->data, p->len);
		pkt_free(st, p);
		p = n;
	}
}

/* Learn a neighbour's MAC from an NS/RS/RA link-layer option (STALE,
 * RFC 4861 7.2.3): updates, and creates only when create. */
static void learn(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *a,
		  const uint8_t *mac, bool create)
{
	struct nd_entry *e = nd_find(st, a);

	if (!e) {
		if (!create || !(e = nd_slot(st)))
			return;
		memset(e, 0, sizeof(*e));
		e->addr = *a;
	}
	if (e->state == ND_STATIC)
		return;
	if (e->state != ND_INCOMPLETE && !memcmp(e->mac, mac, 6))
		return;
	e->ifc = ifc;
	memcpy(e->mac, mac, 6);
	nd_set(e, st, ND_STALE, 0);
	flush_pending(st, e);
}

static void dad_failed(struct ns_stack *st, struct ns_ifaddr6 *x)
{
	/* RFC 4862 5.4.5: the address must not be used. */
	x->state = ADDR6_DUPLICATE;
	st->stats.dad_failed++;
}

static void ns_input(struct ns_stack *st, const struct ip_rx *rx)
{
	const uint8_t *m = rx->l4, *slla;
	struct ipaddr target = ipa_v6(m + 8);
	bool from_dad = ipa_is_any(&rx->saddr);
	struct ns_ifaddr6 *x;

	if (ipa_is_multicast6(&target) || !opts_ok(m, rx->l4len, 24))
		return;
	slla = opt_find(m, rx->l4len, 24, OPT_SLLA, 1);
	/* RFC 4861 7.1.1: DAD probes go to the solicited-node group and
	 * carry no link-layer address. */
	if (from_dad && (slla || !rx->mcast))
		return;
	x = ip6_ifaddr(rx->ifc, &target);
	if (!x)
		return;
	if (x->state == ADDR6_TENTATIVE) {
		if (from_dad) /* someone else probes for it too */
			dad_failed(st, x);
		return;
	}
	if (from_dad) {
		struct ipaddr dst = ipa_v6(all_nodes);

		send_na(st, rx->ifc, &target, &dst, NA_OVERRIDE);
		return;
	}
	if (slla)
		learn(st, rx->ifc, &rx->saddr, slla + 2, true);
	send_na(st, rx->ifc, &target, &rx->saddr, NA_SOLICITED | NA_OVERRIDE);
}

/* RFC 4861 7.2.5 */
static void na_update(struct ns_stack *st, struct nd_entry *e, const uint8_t *tlla, uint8_t flags)
{
	bool same = tlla && !memcmp(e->mac, tlla + 2, 6);

	if (e->state == ND_STATIC)
		return;
	if (e->state == ND_INCOMPLETE) {
		if (!tlla)
			return;
		memcpy(e->mac, tlla + 2, 6);
		nd_set(e, st, (flags & NA_SOLICITED) ? ND_REACHABLE : ND_STALE,
		       (flags & NA_SOLICITED) ? REACHABLE_US : 0);
		flush_pending(st, e);
	} else if (!(flags & NA_OVERRIDE) && tlla && !same) {
		if (e->state == ND_REACHABLE)
			nd_set(e, st, ND_STALE, 0);
		return;
	} else {
		if (tlla)
			memcpy(e->mac, tlla + 2, 6);
		if (flags & NA_SOLICITED)
			nd_set(e, st, ND_REACHABLE, REACHABLE_US);
		else if (tlla && !same)
			nd_set(e, st, ND_STALE, 0);
	}
	if (e->router && !(flags & NA_ROUTER))
		route6_expire_gw(st, &e->addr);
	e->router = flags & NA_ROUTER;
}

static void na_input(struct ns_stack *st, const struct ip_rx *rx)
{
	const uint8_t *m = rx->l4, *tlla;
	struct ipaddr target = ipa_v6(m + 8);
	uint8_t flags = m[4];
	struct ns_ifaddr6 *x;
	struct nd_entry *e;

	if (ipa_is_multicast6(&target) || ((flags & NA_SOLICITED) && rx->mcast) ||
	    !opts_ok(m, rx->l4len, 24))
		return;
	x = ip6_ifaddr(rx->ifc, &target);
	if (x) { /* someone else has our address */
		if (x->state == ADDR6_TENTATIVE)
			dad_failed(st, x);
		return;
	}
	tlla = opt_find(m, rx->l4len, 24, OPT_TLLA, 1);
	e = nd_find(st, &target);
	if (e)
		na_update(st, e, tlla, flags);
}

/* A prefix information option (RFC 4862 5.5.3) on a SLAAC host. */
static void prefix_input(struct ns_stack *st, struct ns_iface *ifc, const uint8_t *o)
{
	uint8_t plen = o[2], flags = o[3];
	uint32_t valid, pref;
	struct ipaddr prefix = ipa_v6(o + 16), addr;
	uint64_t until;
	const uint8_t *ll = NULL;

	memcpy(&valid, o + 4, 4);
	memcpy(&pref, o + 8, 4);
	valid = ntohl(valid);
	pref = ntohl(pref);
	if (ipa_is_linklocal6(&prefix) || pref > valid || plen > 128)
		return;
	until = valid == 0xffffffffu ? UINT64_MAX : st->now + (uint64_t)valid * 1000000u;
	if ((flags & 0x80) && valid) { /* L: on-link */
		struct ipaddr on_link = {{0, 0, 0, 0}};

		route6_add_locked(st, &prefix, plen, &on_link, ifc, until);
	}
	if (!(flags & 0x40) || plen != 64 || !valid) /* A, with a 64-bit IID */
		return;
	for (unsigned i = 0; i < NS_MAX_ADDR6 && !ll; i++)
		if (ifc->addr6[i].state != ADDR6_FREE && ipa_is_linklocal6(&ifc->addr6[i].addr))
			ll = ipa_bytes(&ifc->addr6[i].addr);
	if (!ll)
		return;
	addr = prefix;
	memcpy((uint8_t *)addr.w + 8, ll + 8, 8);
	ip6_addr_add_locked(st, ifc, &addr, 64, !(ifc->v6flags & NS_IF6_NODAD), true, until);
}

static void ra_input(struct ns_stack *st, const struct ip_rx *rx)
{
	struct ns_iface *ifc = rx->ifc;
	const uint8_t *m = rx->l4, *o;
	uint16_t lifetime = (uint16_t)(m[6] << 8 | m[7]);
	struct ipaddr any = {{0, 0, 0, 0}};

	/* RFC 4861 6.1.2: from a link-local router address. */
	if (!(ifc->v6flags & NS_IF6_SLAAC) || !ipa_is_linklocal6(&rx->saddr) ||
	    !opts_ok(m, rx->l4len, 16))
		return;
	ifc->rs_left = 0;
	if (m[4])
		ifc->hop_limit = m[4];
	if ((o = opt_find(m, rx->l4len, 16, OPT_SLLA, 1)))
		learn(st, ifc, &rx->saddr, o + 2, true);
	if (lifetime)
		route6_add_locked(st, &any, 0, &rx->saddr, ifc,
				  st->now + (uint64_t)lifetime * 1000000u);
	else
		route6_expire_gw(st, &rx->saddr);
	if ((o = opt_find(m, rx->l4len, 16, OPT_MTU, 1))) {
		uint32_t mtu = (uint32_t)o[4] << 24 | (uint32_t)o[5] << 16 | o[6] << 8 | o[7];

		if (mtu >= 1280 && mtu <= ifc->link->mtu)
			ifc->mtu6 = mtu;
	}
	for (size_t off = 16; off < rx->l4len; off += m[off + 1] * 8u)
		if (m[off] == OPT_PREFIX && m[off + 1] == 4)
			prefix_input(st, ifc, m + off);
}

/* RFC 4861 8.1: only the current first hop, from its link-local address,
 * may redirect, to a link-local router or to the destination itself. */
static void redirect_input(struct ns_stack *st, const struct ip_rx *rx)
{
	const uint8_t *m = rx->l4, *tlla;
	struct ipaddr target = ipa_v6(m + 8), dst = ipa_v6(m + 24);

	if (!ipa_is_linklocal6(&rx->saddr) || ipa_is_multicast6(&dst) ||
	    (!ipa_is_linklocal6(&target) && !ipa_eq(&target, &dst)) ||
	    !opts_ok(m, rx->l4len, 40)) {
		st->stats.nd_redirect_bad++;
		return;
	}
	if (route6_redirect_locked(st, &rx->saddr, &target, &dst) < 0) {
		st->stats.nd_redirect_bad++;
		return;
	}
	st->stats.nd_redirects++;
	tlla = opt_find(m, rx->l4len, 40, OPT_TLLA, 1);
	if (tlla)
		learn(st, rx->ifc, &target, tlla + 2, true);
}

void nd6_input(struct ns_stack *st, const struct ip_rx *rx, uint8_t type)
{
	static const size_t min_len[] = {[ND_RS - ND_RS] = 8,
					 [ND_RA - ND_RS] = 16,
					 [ND_NS - ND_RS] = 24,
					 [ND_NA - ND_RS] = 24,
					 [ND_REDIRECT - ND_RS] = 40};

	st->stats.nd_rx++;
	/* RFC 4861 6.1, 7.1: hop limit 255, code 0, long enough, and no
	 * extension-header tricks (not fragmented). */
	if (rx->ttl != ND_HLIM || rx->l4[1] != 0 || rx->l4len < min_len[type - ND_RS] || rx->frag)
		return;
	switch (type) {
	case ND_NS:
		ns_input(st, rx);
		break;
	case ND_NA:
		na_input(st, rx);
		break;
	case ND_RA:
		ra_input(st, rx);
		break;
	case ND_RS:
		if ((rx->ifc->v6flags & NS_IF6_ROUTER) && opts_ok(rx->l4, rx->l4len, 8)) {
			const uint8_t *o = opt_find(rx->l4, rx->l4len, 8, OPT_SLLA, 1);

			if (o && !ipa_is_any(&rx->saddr))
				learn(st, rx->ifc, &rx->saddr, o + 2, true);
			nd6_router_solicited(st, rx->ifc);
		}
		break;
	case ND_REDIRECT:
		if (!(rx->ifc->v6flags & NS_IF6_ROUTER)) /* 8.2: routers ignore them */
			redirect_input(st, rx);
		break;
	default:
		break;
	}
}

/* -------------------------------------------------------------- timers */

static uint64_t neigh_tick(struct ns_stack *st, struct nd_entry *e)
{
	if (e->state == ND_FREE || e->state == ND_STALE || e->state == ND_STATIC)
		return UINT64_MAX;
	if (e->when > st->now)
		return e->when;
	switch (e->state) {
	case ND_REACHABLE:
		nd_set(e, st, ND_STALE, 0);
		return UINT64_MAX;
	case ND_DELAY:
		nd_set(e, st, ND_PROBE, RETRANS_US);
		e->probes = 1;
		send_ns(st, e->ifc, &e->addr, &e->addr, false);
		return e->when;
	default: /* INCOMPLETE, PROBE */
		if (e->probes >=
		    (e->state == ND_PROBE ? MAX_UNICAST_SOLICIT : MAX_MULTICAST_SOLICIT)) {
			drop_pending(st, e);
			if (e->router)
				route6_expire_gw(st, &e->addr);
			e->state = ND_FREE;
			return UINT64_MAX;
		}
		e->probes++;
		e->when = st->now + RETRANS_US;
		send_ns(st, e->ifc, &e->addr, e->state == ND_PROBE ? &e->addr : NULL, false);
		return e->when;
	}
}

static uint64_t addr_tick(struct ns_stack *st, struct ns_iface *ifc, struct ns_ifaddr6 *x)
{
	if (x->state == ADDR6_FREE || x->state == ADDR6_DUPLICATE)
		return UINT64_MAX;
	if (x->valid_until <= st->now) {
		x->state = ADDR6_FREE; /* SLAAC lifetime over */
		return UINT64_MAX;
	}
	if (x->state != ADDR6_TENTATIVE)
		return x->valid_until;
	if (x->dad_at > st->now)
		return x->dad_at;
	if (x->dad_left) {
		x->dad_left--;
		x->dad_at = st->now + RETRANS_US;
		send_ns(st, ifc, &x->addr, NULL, true);
		return x->dad_at;
	}
	x->state = ADDR6_PREFERRED;
	nd6_announce(st, ifc, &x->addr);
	return x->valid_until;
}

static uint64_t iface_tick(struct ns_stack *st, struct ns_iface *ifc)
{
	uint64_t next = UINT64_MAX;

	for (unsigned i = 0; i < NS_MAX_ADDR6; i++) {
		uint64_t w = addr_tick(st, ifc, &ifc->addr6[i]);

		next = w < next ? w : next;
	}
	if (ifc->rs_left) {
		struct ipaddr src, dst = ipa_v6(all_routers);

		/* Solicit once the link-local address is usable. */
		if (ifc->rs_at <= st->now && ip6_src_for(st, ifc, &dst, &src)) {
			send_rs(st, ifc);
			ifc->rs_left--;
			ifc->rs_at = st->now + RTR_SOLICIT_INTERVAL_US;
		}
		if (ifc->rs_left && ifc->rs_at < next)
			next = ifc->rs_at > st->now ? ifc->rs_at : st->now + RETRANS_US;
	}
	return next;
}

static void nd6_tick(struct ns_stack *st, struct ns_timer *t)
{
	uint64_t next = UINT64_MAX;

	for (unsigned i = 0; i < NS_ND_SIZE; i++) {
		uint64_t w = neigh_tick(st, &st->nd[i]);

		next = w < next ? w : next;
	}
	for (unsigned i = 0; i < st->nifaces; i++) {
		uint64_t w = st->ifaces[i].v6 ? iface_tick(st, &st->ifaces[i]) : UINT64_MAX;

		next = w < next ? w : next;
	}
	next = nd6_router_tick(st, next);
	if (next == UINT64_MAX)
		timer_cancel(st, t);
	else
		timer_arm(st, t, next);
}

/* -------------------------------------------------------------- public */

int ns_nd_add_static(struct ns_stack *st, struct ns_link *l, const uint8_t addr[16],
		     const uint8_t mac[6])
{
	struct ipaddr a = ipa_v6(addr);
	struct ns_iface *ifc;
	struct nd_entry *e;
	int rc = 0;

	stack_enter(st);
	ifc = iface_of_link(st, l);
	e = nd_find(st, &a);
	if (!e && (e = nd_slot(st)))
		memset(e, 0, sizeof(*e));
	if (!ifc || !ifc->v6) {
		rc = -EINVAL;
	} else if (!e) {
		rc = -ENOSPC;
	} else {
		e->addr = a;
		e->ifc = ifc;
		memcpy(e->mac, mac, 6);
		e->state = ND_STATIC;
		flush_pending(st, e);
	}
	stack_leave(st);
	return rc;
}

int ns_nd_lookup(struct ns_stack *st, const uint8_t addr[16], uint8_t mac[6])
{
	struct ipaddr a = ipa_v6(addr);
	struct nd_entry *e;
	int rc = -ENOENT;

	stack_enter(st);
	e = nd_find(st, &a);
	if (e && e->state != ND_INCOMPLETE) {
		memcpy(mac, e->mac, 6);
		rc = 0;
	}
	stack_leave(st);
	return rc;
}
