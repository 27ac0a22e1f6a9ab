/* mld6.c — the listener side of Multicast Listener Discovery version 2
 * (RFC 3810): the stack tells the link which groups it listens to (its
 * solicited-node groups, and a router's all-routers and DHCPv6 groups),
 * so that switches snooping MLD keep forwarding Neighbor Discovery to it
 * (RFC 4861 7.2.1, RFC 4862 5.4.2). Reports go out when a group is joined
 * and in answer to a router's queries. */
#include "netstack/internal.h"

enum {
	IP6_HLEN = 40,
	HBH_LEN = 8, /* Hop-by-Hop header carrying the Router Alert */
	MLD2_REPORT = 143,
	REC_IS_EXCLUDE = 2, /* current state: listening to all sources */
	REC_TO_EXCLUDE = 4, /* state change: joined */
	REC_LEN = 20,
	MAX_GROUPS = NS_MAX_ADDR6 + 2,
};

static const uint8_t all_nodes[16] = {0xff, 2, [15] = 1};
static const uint8_t all_routers[16] = {0xff, 2, [15] = 2};
static const uint8_t dhcp6_servers[16] = {0xff, 2, [13] = 1, [15] = 2};
static const uint8_t all_mld2_routers[16] = {0xff, 2, [15] = 0x16};

/* The groups ifc listens to, less all-nodes (never reported, RFC 3810 6). */
static unsigned groups_of(const struct ns_iface *ifc, struct ipaddr *g)
{
	unsigned n = 0;

	if (ifc->v6flags & NS_IF6_ROUTER) {
		g[n++] = ipa_v6(all_routers);
		g[n++] = ipa_v6(dhcp6_servers);
	}
	for (unsigned i = 0; i < NS_MAX_ADDR6; i++) {
		struct ipaddr sn;
		bool dup = false;

		if (ifc->addr6[i].state == ADDR6_FREE)
			continue;
		sn = ip6_solicited_node(&ifc->addr6[i].addr);
		for (unsigned k = 0; k < n && !dup; k++)
			dup = ipa_eq(&g[k], &sn);
		if (!dup)
			g[n++] = sn;
	}
	return n;
}

/* Hop limit 1 and a Router Alert (RFC 3810 5), from the link-local
 * address, or from :: while it is still tentative (5.2.13). */
static void send_report(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *g,
			unsigned n, uint8_t rectype)
{
	static const uint8_t mac[6] = {0x33, 0x33, 0, 0, 0, 0x16};
	uint8_t buf[ETH_HLEN + IP6_HLEN + HBH_LEN + 8 + MAX_GROUPS * REC_LEN] = {0};
	uint8_t *l3 = buf + ETH_HLEN, *hbh = l3 + IP6_HLEN, *m = hbh + HBH_LEN;
	struct ipaddr dst = ipa_v6(all_mld2_routers), src = {{0, 0, 0, 0}};
	size_t len = 8 + (size_t)n * REC_LEN;
	uint16_t csum;

	if (!n)
		return;
	if (!ip6_src_for(st, ifc, &dst, &src) || !ipa_is_linklocal6(&src))
		src = (struct ipaddr){{0, 0, 0, 0}};
	l3[0] = 0x60;
	l3[4] = (uint8_t)((HBH_LEN + len) >> 8);
	l3[5] = (uint8_t)(HBH_LEN + len);
	l3[6] = 0; /* Hop-by-Hop */
	l3[7] = 1;
	memcpy(l3 + 8, ipa_bytes(&src), 16);
	memcpy(l3 + 24, all_mld2_routers, 16);
	memcpy(hbh, (uint8_t[]){NS_PROTO_ICMPV6, 0, 5, 2, 0, 0, 1, 0}, HBH_LEN);
	m[0] = MLD2_REPORT;
	m[7] = (uint8_t)n;
	for (unsigned i = 0; i < n; i++) {
		uint8_t *r = m + 8 + i * REC_LEN;

		r[0] = rectype;
		memcpy(r + 4, ipa_bytes(&g[i]), 16);
	}
	csum = (uint16_t)~ipa_pseudo_csum_fold_sum(&src, &dst, NS_PROTO_ICMPV6, m, len, len, 0);
	memcpy(m + 2, &csum, 2);
	st->stats.mld_tx++;
	ether_output(st, ifc, mac, ETHERTYPE_IPV6, l3, IP6_HLEN + HBH_LEN + len);
}

void mld6_join_report(struct ns_stack *st, struct ns_iface *ifc, const struct ipaddr *group)
{
	if (memcmp(ipa_bytes(group), all_nodes, 16))
		send_report(st, ifc, group, 1, REC_TO_EXCLUDE);
}

void mld6_join_router_groups(struct ns_stack *st, struct ns_iface *ifc)
{
	struct ipaddr g = ipa_v6(all_routers);

	mld6_join_report(st, ifc, &g);
	g = ipa_v6(dhcp6_servers);
	mld6_join_report(st, ifc, &g);
}

/* A Query (RFC 3810 5.1, or MLDv1's, RFC 2710 3.6): general (group ::)
 * or about one group; answered at once with what we listen to (a LAN of
 * a few hosts has no report storm to spread out). */
void mld6_query_input(struct ns_stack *st, const struct ip_rx *rx)
{
	struct ipaddr g[MAX_GROUPS], asked;
	unsigned n;

	if (rx->ttl != 1 || !ipa_is_linklocal6(&rx->saddr) || rx->l4len < 24) {
		st->stats.mld_bad++;
		return;
	}
	st->stats.mld_query++;
	asked = ipa_v6(rx->l4 + 8);
	n = groups_of(rx->ifc, g);
	if (ipa_is_any(&asked)) {
		send_report(st, rx->ifc, g, n, REC_IS_EXCLUDE);
		return;
	}
	for (unsigned i = 0; i < n; i++)
		if (ipa_eq(&g[i], &asked))
			send_report(st, rx->ifc, &g[i], 1, REC_IS_EXCLUDE);
}

bool mld6_listening(const struct ns_iface *ifc, const struct ipaddr *group)
{
	struct ipaddr g[MAX_GROUPS];
	unsigned n = groups_of(ifc, g);

	for (unsigned i = 0; i < n; i++)
		if (ipa_eq(&g[i], group))
			return true;
	return false;
}
