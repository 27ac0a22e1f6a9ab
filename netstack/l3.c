/* l3.c — the network layer for callers that do not care which family:
 * UDP, TCP, channels and sockets hold struct ipaddr and come here, which
 * hands IPv4 to ip.c and IPv6 to ip6.c. */
#include <stdio.h>
#include <stdlib.h>

#include "netstack/internal.h"

bool ipa_is_local(struct ns_stack *st, const struct ipaddr *a)
{
	if (ipa_is_v4(a))
		return iface_is_local(st, ipa_v4_of(a));
	return ip6_is_local(st, a);
}

int ipa_src_for(struct ns_stack *st, const struct ipaddr *dst, struct ipaddr *src)
{
	struct ns_iface *ifc;
	struct ipaddr nh;

	if (ipa_is_v4(dst)) {
		*src = ipa_v4(iface_src_for(st, ipa_v4_of(dst)));
		return 0;
	}
	if (route6_lookup(st, dst, &nh, &ifc) < 0 || !ip6_src_for(st, ifc, dst, src))
		return -ENETUNREACH;
	return 0;
}

bool ipa_routable(struct ns_stack *st, const struct ipaddr *dst)
{
	struct ns_iface *ifc;
	struct ipaddr nh6;
	struct ns_link *l;
	uint32_t nh;

	if (ipa_is_v4(dst))
		return ns_route_lookup(st, ipa_v4_of(dst), &nh, &l) == 0;
	return route6_lookup(st, dst, &nh6, &ifc) == 0;
}

unsigned ipa_mtu_to(struct ns_stack *st, const struct ipaddr *dst)
{
	if (ipa_is_v4(dst))
		return ip_mtu_to(st, ipa_v4_of(dst));
	return ip6_mtu_to(st, dst);
}

uint16_t ipa_pseudo6_fold_sum(const struct ipaddr *src, const struct ipaddr *dst, uint8_t proto,
			      const void *hdr, size_t hlen, size_t len, uint32_t rest_sum)
{
	uint64_t acc;

	acc = (uint64_t)ns_csum_add(ip6_pseudo_sum(src, dst, proto, len), hdr, hlen) + rest_sum;
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint16_t)acc;
}

/* ------------------------------------------------------------ text forms */

int ns_parse_addr6(const char *s, uint8_t addr[16])
{
	return inet_pton(AF_INET6, s, addr) == 1 ? 0 : -EINVAL;
}

int ns_parse_cidr6(const char *s, uint8_t addr[16], unsigned *len)
{
	char buf[64];
	const char *slash = strchr(s, '/');
	char *end;
	unsigned long n;

	if (!slash || (size_t)(slash - s) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, (size_t)(slash - s));
	buf[slash - s] = 0;
	n = strtoul(slash + 1, &end, 10);
	if (*end || end == slash + 1 || n > 128 || ns_parse_addr6(buf, addr) < 0)
		return -EINVAL;
	*len = (unsigned)n;
	return 0;
}

char *ns_fmt_addr6(const uint8_t addr[16], char *buf)
{
	if (!inet_ntop(AF_INET6, addr, buf, 46))
		snprintf(buf, 46, "?");
	return buf;
}

int ns_parse_sockaddr(const char *s, struct ns_sockaddr *sa)
{
	memset(sa, 0, sizeof(*sa));
	if (strchr(s, ':')) {
		sa->family = NS_AF_INET6;
		return ns_parse_addr6(s, sa->addr6);
	}
	return ns_parse_addr(s, &sa->addr);
}
