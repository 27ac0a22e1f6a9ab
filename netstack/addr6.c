/* addr6.c — IPv6 interface addresses (link-local from the MAC, manual,
 * SLAAC), source selection, and the routing table (longest prefix). */
#include "netstack/internal.h"

static bool prefix_match(const struct ipaddr *a, const struct ipaddr *b, unsigned len)
{
	const uint8_t *x = ipa_bytes(a), *y = ipa_bytes(b);
	unsigned bytes = len / 8, bits = len % 8;

	if (memcmp(x, y, bytes))
		return false;
	return !bits || !((x[bytes] ^ y[bytes]) & (0xff00 >> bits));
}

static unsigned common_prefix(const struct ipaddr *a, const struct ipaddr *b)
{
	unsigned n = 0;

	while (n < 128 && prefix_match(a, b, n + 1))
		n++;
	return n;
}

static struct ipaddr masked(const struct ipaddr *a, unsigned len)
{
	struct ipaddr m = {{0, 0, 0, 0}};
	uint8_t *b = (uint8_t *)m.w;

	memcpy(b, ipa_bytes(a), (len + 7) / 8);
	if (len % 8)
		b[len / 8] &= (uint8_t)(0xff00 >> (len % 8));
	return m;
}

struct ipaddr ip6_solicited_node(const struct ipaddr *a)
{
	uint8_t b[16] = {0xff, 0x02, [11] = 1, [12] = 0xff};

	memcpy(b + 13, ipa_bytes(a) + 13, 3);
	return ipa_v6(b);
}

/* ------------------------------------------------------------ addresses */

struct ns_ifaddr6 *ip6_ifaddr(struct ns_iface *ifc, const struct ipaddr *a)
{
	for (unsigned i = 0; i < NS_MAX_ADDR6; i++) {
		struct ns_ifaddr6 *x = &ifc->addr6[i];

		if ((x->state == ADDR6_TENTATIVE || x->state == ADDR6_PREFERRED) &&
		    ipa_eq(&x->addr, a))
			return x;
	}
	return NULL;
}

bool ip6_is_local(struct ns_stack *st, const struct ipaddr *a)
{
	for (unsigned i = 0; i < st->nifaces; i++) {
		struct ns_ifaddr6 *x;

		if (!st->ifaces[i].v6)
			continue;
		x = ip6_ifaddr(&st->ifaces[i], a);
		if (x && x->state == ADDR6_PREFERRED)
			return true;
	}
	return false;
}

bool ip6_src_for(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *dst,
		 struct ipaddr *src)
{
	/* RFC 6724 rules 2 and 8, reduced: the same scope, then the longest
	 * common prefix. */
	bool want_ll =
		ipa_is_linklocal6(dst) || (ipa_is_multicast6(dst) && (ipa_bytes(dst)[1] & 15) <= 2);
	struct ns_ifaddr6 *best = NULL;
	unsigned best_score = 0;

	(void)st;
	for (unsigned i = 0; i < NS_MAX_ADDR6; i++) {
		struct ns_ifaddr6 *x = &ifc->addr6[i];
		unsigned score;

		if (x->state != ADDR6_PREFERRED)
			continue;
		score = (ipa_is_linklocal6(&x->addr) == want_ll) * 256 +
			common_prefix(&x->addr, dst) + 1;
		if (score > best_score) {
			best = x;
			best_score = score;
		}
	}
	if (best)
		*src = best->addr;
	return best != NULL;
}

int ip6_addr_add_locked(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *a,
			unsigned plen, bool dad, bool autoconf, uint64_t valid_until)
{
	struct ns_ifaddr6 *x = ip6_ifaddr(ifc, a);
	struct ipaddr sn;
	bool new_group;

	if (x) { /* known: a new lifetime (SLAAC refresh) */
		x->valid_until = valid_until;
		return 0;
	}
	for (unsigned i = 0; i < NS_MAX_ADDR6 && !x; i++)
		if (ifc->addr6[i].state == ADDR6_FREE)
			x = &ifc->addr6[i];
	if (!x)
		return -ENOSPC;
	sn = ip6_solicited_node(a);
	new_group = !mld6_listening(ifc, &sn);
	memset(x, 0, sizeof(*x));
	x->addr = *a;
	x->plen = (uint8_t)plen;
	x->autoconf = autoconf;
	x->valid_until = valid_until;
	if (plen < 128 && !ipa_is_linklocal6(a)) {
		struct ipaddr on_link = {{0, 0, 0, 0}};
		int rc = route6_add_locked(st, a, plen, &on_link, ifc, valid_until);

		if (rc < 0)
			return rc;
	}
	if (new_group) /* before DAD's probe (RFC 4862 5.4.2) */
		mld6_join_report(st, ifc, &sn);
	if (dad) {
		/* RFC 4862 5.4: one probe (DupAddrDetectTransmits 1), then
		 * RetransTimer (1 s) of silence before the address is used. */
		x->state = ADDR6_TENTATIVE;
		x->dad_left = 1;
		x->dad_at = st->now;
		nd6_kick(st);
	} else {
		x->state = ADDR6_PREFERRED;
		nd6_announce(st, ifc, a);
	}
	return 0;
}

/* --------------------------------------------------------------- routes */

int route6_add_locked(struct ns_stack *st, const struct ipaddr *dst, unsigned len,
		      const struct ipaddr *gw, struct ns_iface *ifc, uint64_t expires)
{
	struct ipaddr d = masked(dst, len);
	struct ns_route6 *r = NULL;

	if (len > 128)
		return -EINVAL;
	for (unsigned i = 0; i < st->nroutes6 && !r; i++)
		if (st->routes6[i].len == len && ipa_eq(&st->routes6[i].dst, &d))
			r = &st->routes6[i];
	if (!r) {
		if (st->nroutes6 >= NS_MAX_ROUTES)
			return -ENOSPC;
		r = &st->routes6[st->nroutes6++];
	}
	r->dst = d;
	r->len = len;
	r->gw = *gw;
	r->ifc = ifc;
	r->expires = expires;
	return 0;
}

static void route6_del_at(struct ns_stack *st, unsigned i)
{
	st->routes6[i] = st->routes6[--st->nroutes6];
}

int route6_lookup(struct ns_stack *st, const struct ipaddr *dst, struct ipaddr *nh,
		  struct ns_iface **ifc)
{
	struct ns_route6 *best = NULL;

	for (unsigned i = 0; i < st->nroutes6; i++) {
		struct ns_route6 *r = &st->routes6[i];

		if (r->expires <= st->now) {
			route6_del_at(st, i--);
			continue;
		}
		if ((!best || r->len > best->len) && prefix_match(dst, &r->dst, r->len))
			best = r;
	}
	/* Link-local and multicast destinations: the (first) IPv6 link. */
	if ((!best || best->len == 0) && (ipa_is_linklocal6(dst) || ipa_is_multicast6(dst))) {
		for (unsigned i = 0; i < st->nifaces; i++)
			if (st->ifaces[i].v6) {
				*nh = *dst;
				*ifc = &st->ifaces[i];
				return 0;
			}
	}
	if (!best)
		return -ENETUNREACH;
	*nh = ipa_is_any(&best->gw) ? *dst : best->gw;
	*ifc = best->ifc;
	return 0;
}

/* A router's Redirect (RFC 4861 8.3): dst is better reached through
 * target (on-link when target == dst). Kept as a host route that lives as
 * long as the route it overrides; -EPERM unless from is the first hop the
 * stack uses for dst now (8.1). */
int route6_redirect_locked(struct ns_stack *st, const struct ipaddr *from,
			   const struct ipaddr *target, const struct ipaddr *dst)
{
	static const struct ipaddr on_link = {{0, 0, 0, 0}};
	struct ns_route6 *best = NULL;

	for (unsigned i = 0; i < st->nroutes6; i++) {
		struct ns_route6 *r = &st->routes6[i];

		if (r->expires > st->now && (!best || r->len > best->len) &&
		    prefix_match(dst, &r->dst, r->len))
			best = r;
	}
	if (!best || ipa_is_any(&best->gw) || !ipa_eq(&best->gw, from))
		return -EPERM;
	return route6_add_locked(st, dst, 128, ipa_eq(target, dst) ? &on_link : target, best->ifc,
				 best->expires);
}

/* Forget what came with a router (its default route) when it leaves. */
void route6_expire_gw(struct ns_stack *st, const struct ipaddr *gw)
{
	for (unsigned i = 0; i < st->nroutes6; i++)
		if (ipa_eq(&st->routes6[i].gw, gw) && st->routes6[i].expires != UINT64_MAX)
			route6_del_at(st, i--);
}

/* --------------------------------------------------------------- public */

int ns_iface_ipv6(struct ns_stack *st, struct ns_link *l, unsigned flags)
{
	struct ns_iface *ifc;
	uint8_t ll[16] = {0xfe, 0x80};
	struct ipaddr a;
	int rc = -ENODEV;

	if (l->mtu < 1280)
		return -EINVAL; /* RFC 8200 5: IPv6 needs 1280 on every link */
	stack_enter(st);
	ifc = iface_of_link(st, l);
	if (ifc) {
		/* Modified EUI-64 (RFC 4291 appendix A): the MAC split by ff:fe,
		 * the universal/local bit flipped. */
		memcpy(ll + 8, l->mac, 3);
		ll[8] ^= 2;
		ll[11] = 0xff;
		ll[12] = 0xfe;
		memcpy(ll + 13, l->mac + 3, 3);
		a = ipa_v6(ll);
		ifc->v6 = true;
		ifc->v6flags = flags;
		if (flags & NS_IF6_ROUTER)
			mld6_join_router_groups(st, ifc);
		rc = ip6_addr_add_locked(st, ifc, &a, 64, !(flags & NS_IF6_NODAD), false,
					 UINT64_MAX);
		if (rc == 0 && (flags & NS_IF6_SLAAC)) {
			ifc->rs_left = 3; /* MAX_RTR_SOLICITATIONS, RFC 4861 10 */
			ifc->rs_at = st->now;
			nd6_kick(st);
		}
	}
	stack_leave(st);
	return rc;
}

int ns_iface_add6(struct ns_stack *st, struct ns_link *l, const uint8_t addr[16],
		  unsigned prefix_len)
{
	struct ns_iface *ifc;
	struct ipaddr a = ipa_v6(addr);
	int rc = -ENODEV;

	if (prefix_len > 128 || ipa_is_multicast6(&a) || ipa_is_any(&a) || ipa_is_v4(&a))
		return -EINVAL;
	stack_enter(st);
	ifc = iface_of_link(st, l);
	if (ifc && ifc->v6)
		rc = ip6_addr_add_locked(st, ifc, &a, prefix_len, !(ifc->v6flags & NS_IF6_NODAD),
					 false, UINT64_MAX);
	stack_leave(st);
	return rc;
}

int ns_iface_get6(struct ns_stack *st, struct ns_link *l, unsigned i, uint8_t addr[16],
		  unsigned *prefix_len)
{
	struct ns_iface *ifc;
	int rc = -ENOENT;

	stack_enter(st);
	ifc = iface_of_link(st, l);
	for (unsigned k = 0; ifc && k < NS_MAX_ADDR6; k++) {
		struct ns_ifaddr6 *x = &ifc->addr6[k];

		if (x->state != ADDR6_PREFERRED || i--)
			continue;
		memcpy(addr, x->addr.w, 16);
		if (prefix_len)
			*prefix_len = x->plen;
		rc = 0;
		break;
	}
	stack_leave(st);
	return rc;
}

int ns_route6_add(struct ns_stack *st, const uint8_t dst[16], unsigned prefix_len,
		  const uint8_t gw[16], struct ns_link *l)
{
	struct ipaddr d = ipa_v6(dst), g = {{0, 0, 0, 0}};
	struct ns_iface *ifc;
	int rc = -ENODEV;

	if (gw)
		g = ipa_v6(gw);
	stack_enter(st);
	ifc = iface_of_link(st, l);
	if (ifc && ifc->v6)
		rc = route6_add_locked(st, &d, prefix_len, &g, ifc, UINT64_MAX);
	stack_leave(st);
	return rc;
}

int ns_route6_lookup(struct ns_stack *st, const uint8_t dst[16], uint8_t next_hop[16],
		     struct ns_link **l)
{
	struct ipaddr d = ipa_v6(dst), nh;
	struct ns_iface *ifc;
	int rc;

	stack_enter(st);
	rc = route6_lookup(st, &d, &nh, &ifc);
	if (rc == 0) {
		memcpy(next_hop, nh.w, 16);
		*l = ifc->link;
	}
	stack_leave(st);
	return rc;
}

unsigned ns_pmtu6(struct ns_stack *st, const uint8_t dst[16])
{
	struct ipaddr d = ipa_v6(dst);
	unsigned m;

	stack_enter(st);
	m = ip6_mtu_to(st, &d) + 40;
	stack_leave(st);
	return m;
}
