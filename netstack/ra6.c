/* ra6.c — router advertisements (RFC 4861 6.2) for a stack that is the
 * link's router (usernet's gateway): periodic and solicited RAs with a
 * prefix for SLAAC, the M/O flags, an MTU and an RDNSS option (RFC 8106). */
#include "netstack/internal.h"

enum {
	OPT_SLLA = 1,
	OPT_PREFIX = 3,
	OPT_MTU = 5,
	OPT_RDNSS = 25,
	RA_MAX = 16 + 8 + 8 + 32 + 24,
	PREFIX_VALID_S = 86400,
	PREFIX_PREFERRED_S = 14400,
};

#define MIN_DELAY_BETWEEN_RAS_US 3000000u

static void put32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static size_t build_ra(const struct ns_iface *ifc, uint8_t *m)
{
	const struct ns_ra_cfg *c = &ifc->ra;
	unsigned life = c->router_lifetime_s ? c->router_lifetime_s : 1800;
	size_t n = 16;

	memset(m, 0, RA_MAX);
	m[0] = ND_RA;
	m[4] = 64; /* cur hop limit */
	m[5] = (uint8_t)((c->managed ? 0x80 : 0) | (c->other ? 0x40 : 0));
	m[6] = (uint8_t)(life >> 8);
	m[7] = (uint8_t)life;
	m[n] = OPT_SLLA;
	m[n + 1] = 1;
	memcpy(m + n + 2, ifc->link->mac, 6);
	n += 8;
	if (c->mtu) {
		m[n] = OPT_MTU;
		m[n + 1] = 1;
		put32(m + n + 4, c->mtu);
		n += 8;
	}
	m[n] = OPT_PREFIX;
	m[n + 1] = 4;
	m[n + 2] = (uint8_t)c->prefix_len;
	m[n + 3] = 0xc0; /* on-link, autonomous */
	put32(m + n + 4, PREFIX_VALID_S);
	put32(m + n + 8, PREFIX_PREFERRED_S);
	memcpy(m + n + 16, c->prefix, 16);
	n += 32;
	if (memcmp(c->rdnss, (uint8_t[16]){0}, 16)) {
		m[n] = OPT_RDNSS;
		m[n + 1] = 3;
		put32(m + n + 4, 3 * (c->interval_s ? c->interval_s : 200));
		memcpy(m + n + 8, c->rdnss, 16);
		n += 24;
	}
	return n;
}

static bool send_ra(struct ns_stack *st, struct ns_iface *ifc)
{
	static const uint8_t all_nodes[16] = {0xff, 2, [15] = 1};
	uint8_t buf[NS_HEADROOM + RA_MAX];
	struct ipaddr dst = ipa_v6(all_nodes), src;
	size_t n;

	if (!ip6_src_for(st, ifc, &dst, &src)) /* link-local still tentative */
		return false;
	n = build_ra(ifc, buf + NS_HEADROOM);
	st->stats.nd_tx++;
	icmp6_send(st, ifc, &src, &dst, buf + NS_HEADROOM, n, 255);
	ifc->ra_last = st->now;
	return true;
}

static uint64_t interval_us(const struct ns_iface *ifc)
{
	return (uint64_t)(ifc->ra.interval_s ? ifc->ra.interval_s : 200) * 1000000u;
}

void nd6_router_solicited(struct ns_stack *st, struct ns_iface *ifc)
{
	uint64_t at;

	if (!ifc->ra_on)
		return;
	/* RFC 4861 6.2.6: at most one RA per MIN_DELAY_BETWEEN_RAS. */
	at = ifc->ra_last ? ifc->ra_last + MIN_DELAY_BETWEEN_RAS_US : st->now;
	if (at < st->now)
		at = st->now;
	if (at < ifc->ra_next) {
		ifc->ra_next = at;
		nd6_kick(st);
	}
}

uint64_t nd6_router_tick(struct ns_stack *st, uint64_t next)
{
	for (unsigned i = 0; i < st->nifaces; i++) {
		struct ns_iface *ifc = &st->ifaces[i];

		if (!ifc->ra_on)
			continue;
		if (ifc->ra_next <= st->now)
			ifc->ra_next = st->now + (send_ra(st, ifc) ? interval_us(ifc) : 1000000u);
		if (ifc->ra_next < next)
			next = ifc->ra_next;
	}
	return next;
}

int ns_iface_ra(struct ns_stack *st, struct ns_link *l, const struct ns_ra_cfg *cfg)
{
	struct ns_iface *ifc;
	int rc = -ENODEV;

	if (cfg->prefix_len > 128)
		return -EINVAL;
	stack_enter(st);
	ifc = iface_of_link(st, l);
	if (ifc && ifc->v6 && (ifc->v6flags & NS_IF6_ROUTER)) {
		ifc->ra = *cfg;
		ifc->ra_on = true;
		ifc->ra_next = st->now;
		nd6_kick(st);
		rc = 0;
	} else if (ifc) {
		rc = -EINVAL;
	}
	stack_leave(st);
	return rc;
}
