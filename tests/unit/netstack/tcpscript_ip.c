/* tcpscript_ip.c — the harness's network layer (see tcpscript.h): the
 * stack's address of either family, the peer's frames around a segment,
 * and the checks on what the stack sends, for IPv4 and IPv6 alike.
 *
 * In IPv6 mode the link MTU is 20 bytes larger than the script asks for,
 * so the MSS and every segment size a script names stay the same in both
 * families (an IPv6 header is 20 bytes longer than IPv4's). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "netstack/internal.h"
#include "tests/unit/netstack/tcpscript.h"

enum { IP6_HLEN = 40 };

bool ts_ipv6_default;

static const uint8_t local6[16] = {0xfd, 0x00, [15] = 1};
static const uint8_t peer6[16] = {0xfd, 0x00, [15] = 2};

unsigned ts_link_mtu(bool v6, unsigned script_mtu)
{
	unsigned mtu = script_mtu ? script_mtu : 1500;

	return v6 ? mtu + (IP6_HLEN - 20) : mtu;
}

void ts_add_addresses(struct tscript *t, unsigned if_flags)
{
	ns_parse_addr("10.0.0.1", &t->local);
	ns_parse_addr("10.0.0.2", &t->peer);
	if (!t->v6) {
		ck_assert_int_eq(ns_iface_add(t->st, t->link, t->local, 24, if_flags), 0);
		ck_assert_int_eq(ns_arp_add_static(t->st, t->peer, t->peer_mac), 0);
		return;
	}
	/* IPv4 too: NS_IF_ACCEPT_ANY and friends are interface flags. */
	ck_assert_int_eq(ns_iface_add(t->st, t->link, t->local, 24, if_flags), 0);
	memcpy(t->local6, local6, 16);
	memcpy(t->peer6, peer6, 16);
	ck_assert_int_eq(ns_iface_ipv6(t->st, t->link, NS_IF6_NODAD), 0);
	ck_assert_int_eq(ns_iface_add6(t->st, t->link, t->local6, 64), 0);
	ck_assert_int_eq(ns_nd_add_static(t->st, t->link, t->peer6, t->peer_mac), 0);
	ts_flush(t); /* the link-local address's unsolicited NA */
}

struct ns_sockaddr ts_sockaddr(const struct tscript *t, bool local, uint16_t port)
{
	struct ns_sockaddr a = {.port = port};

	if (t->v6) {
		a.family = NS_AF_INET6;
		memcpy(a.addr6, local ? t->local6 : t->peer6, 16);
	} else {
		a.addr = local ? t->local : t->peer;
	}
	return a;
}

bool ts_is_peer(const struct tscript *t, const struct ns_sockaddr *a)
{
	if (t->v6)
		return a->family == NS_AF_INET6 && !memcmp(a->addr6, t->peer6, 16);
	return a->family != NS_AF_INET6 && a->addr == t->peer;
}

uint16_t ts_l4_csum(uint32_t src, uint32_t dst, uint8_t proto, const void *l4, size_t len)
{
	struct {
		uint32_t src, dst;
		uint8_t zero, proto;
		uint16_t len;
	} __attribute__((packed)) ph = {htonl(src), htonl(dst), 0, proto, htons((uint16_t)len)};

	return ns_csum_fold(ns_csum_add(ns_csum_add(0, &ph, sizeof(ph)), l4, len));
}

/* RFC 8200 8.1: the pseudo-header with 32-bit length and next header. */
static uint16_t l4_csum6(const uint8_t src[16], const uint8_t dst[16], uint8_t proto,
			 const void *l4, size_t len)
{
	uint8_t tail[8] = {(uint8_t)(len >> 24),
			   (uint8_t)(len >> 16),
			   (uint8_t)(len >> 8),
			   (uint8_t)len,
			   0,
			   0,
			   0,
			   proto};
	uint32_t sum = ns_csum_add(ns_csum_add(0, src, 16), dst, 16);

	return ns_csum_fold(ns_csum_add(ns_csum_add(sum, tail, 8), l4, len));
}

uint16_t ts_tcp_csum(const struct tscript *t, bool from_peer, const void *l4, size_t len)
{
	if (t->v6)
		return from_peer ? l4_csum6(t->peer6, t->local6, NS_PROTO_TCP, l4, len)
				 : l4_csum6(t->local6, t->peer6, NS_PROTO_TCP, l4, len);
	return from_peer ? ts_l4_csum(t->peer, t->local, NS_PROTO_TCP, l4, len)
			 : ts_l4_csum(t->local, t->peer, NS_PROTO_TCP, l4, len);
}

void ts_inject_frame(struct tscript *t, const void *frame, size_t len)
{
	ns_stack_input(t->st, t->link, frame, len);
}

static void put_eth(const struct tscript *t, uint8_t *f, uint16_t type)
{
	memcpy(f, t->local_mac, 6);
	memcpy(f + 6, t->peer_mac, 6);
	f[12] = (uint8_t)(type >> 8);
	f[13] = (uint8_t)type;
}

static size_t build_ip6(struct tscript *t, uint8_t *f, uint8_t proto, const void *payload,
			size_t len)
{
	uint8_t *h = f + ETH_HLEN;

	put_eth(t, f, ETHERTYPE_IPV6);
	memmove(h + IP6_HLEN, payload, len);
	memset(h, 0, IP6_HLEN);
	h[0] = 0x60;
	h[4] = (uint8_t)(len >> 8);
	h[5] = (uint8_t)len;
	h[6] = proto;
	h[7] = 64;
	memcpy(h + 8, t->peer6, 16);
	memcpy(h + 24, t->local6, 16);
	return ETH_HLEN + IP6_HLEN + len;
}

size_t ts_build_ip(struct tscript *t, uint8_t *f, uint8_t proto, uint16_t id, uint16_t off,
		   const void *payload, size_t len)
{
	struct ip_hdr *ih = (void *)(f + ETH_HLEN);

	if (t->v6) {
		/* Fragments are IPv4 scripts' business (IPv6 ones have their
		 * own tests in test_ipv6_frames.c). */
		ck_assert_msg(!(off & (IP_MF | IP_OFFMASK)), "IPv4 fragment in IPv6 mode");
		return build_ip6(t, f, proto, payload, len);
	}
	put_eth(t, f, ETHERTYPE_IP);
	memmove(f + ETH_HLEN + 20, payload, len);
	memset(ih, 0, sizeof(*ih));
	ih->vhl = 0x45;
	ih->len = htons((uint16_t)(len + 20));
	ih->id = htons(id);
	ih->off = htons(off);
	ih->ttl = 64;
	ih->proto = proto;
	ih->src = htonl(t->peer);
	ih->dst = htonl(t->local);
	ih->csum = (uint16_t)~ns_csum_fold(ns_csum_add(0, ih, 20));
	return ETH_HLEN + 20 + len;
}

void ts_inject_ip(struct tscript *t, uint8_t proto, const void *l4, size_t len)
{
	static uint8_t f[ETH_HLEN + IP6_HLEN + 65536];

	ck_assert_uint_le(len, 65535 - 20);
	ts_inject_frame(t, f, ts_build_ip(t, f, proto, t->ip_id++, IP_DF, l4, len));
}

void ts_inject_tcp_raw(struct tscript *t, void *l4, size_t len)
{
	struct tcp_hdr *th = l4;

	th->csum = 0;
	th->csum = (uint16_t)~ts_tcp_csum(t, true, l4, len);
	ts_inject_ip(t, NS_PROTO_TCP, l4, len);
}

static bool l3_fail(char *why, size_t cap, const char *what, const uint8_t *f, size_t len)
{
	uint16_t type = len >= 14 ? (uint16_t)(f[12] << 8 | f[13]) : 0;
	int proto = -1;

	if (type == ETHERTYPE_IP && len >= ETH_HLEN + 20)
		proto = f[ETH_HLEN + 9];
	else if (type == ETHERTYPE_IPV6 && len >= ETH_HLEN + IP6_HLEN)
		proto = f[ETH_HLEN + 6];
	snprintf(why, cap, "%s (frame of %zu bytes, ethertype 0x%04x, IP proto %d)", what, len,
		 type, proto);
	return false;
}

static bool l3_ip4(const struct tscript *t, const uint8_t *f, size_t len, const uint8_t **l4,
		   size_t *l4len, char *why, size_t cap)
{
	struct ip_hdr ih;
	size_t ihl, tot;

	if (len < ETH_HLEN + 20 || f[12] != 8 || f[13] != 0)
		return l3_fail(why, cap, "not IPv4", f, len);
	memcpy(&ih, f + ETH_HLEN, sizeof(ih));
	ihl = (ih.vhl & 15u) * 4;
	tot = ntohs(ih.len);
	if (ih.vhl >> 4 != 4 || ihl < 20 || tot < ihl || ETH_HLEN + tot > len)
		return l3_fail(why, cap, "bad IP header", f, len);
	if (ns_csum_fold(ns_csum_add(0, f + ETH_HLEN, ihl)) != 0xffff)
		return l3_fail(why, cap, "bad IP checksum", f, len);
	if (ih.proto != NS_PROTO_TCP)
		return l3_fail(why, cap, "not TCP", f, len);
	if (ntohl(ih.src) != t->local || ntohl(ih.dst) != t->peer)
		return l3_fail(why, cap, "wrong IP addresses", f, len);
	if (ntohs(ih.off) & (IP_MF | IP_OFFMASK))
		return l3_fail(why, cap, "TCP segment fragmented", f, len);
	*l4 = f + ETH_HLEN + ihl;
	*l4len = tot - ihl;
	return true;
}

/* The stack sends TCP with no extension headers: anything else is a
 * finding (a Fragment header would mean a segment over the path MTU). */
static bool l3_ip6(const struct tscript *t, const uint8_t *f, size_t len, const uint8_t **l4,
		   size_t *l4len, char *why, size_t cap)
{
	const uint8_t *h = f + ETH_HLEN;
	size_t plen;

	if (len < ETH_HLEN + IP6_HLEN || f[12] != 0x86 || f[13] != 0xdd)
		return l3_fail(why, cap, "not IPv6", f, len);
	plen = (size_t)h[4] << 8 | h[5];
	if (h[0] >> 4 != 6 || ETH_HLEN + IP6_HLEN + plen > len)
		return l3_fail(why, cap, "bad IPv6 header", f, len);
	if (h[6] != NS_PROTO_TCP)
		return l3_fail(why, cap, "not TCP (or extension headers)", f, len);
	if (memcmp(h + 8, t->local6, 16) || memcmp(h + 24, t->peer6, 16))
		return l3_fail(why, cap, "wrong IPv6 addresses", f, len);
	*l4 = h + IP6_HLEN;
	*l4len = plen;
	return true;
}

bool ts_decode_l3(const struct tscript *t, const uint8_t *f, size_t len, const uint8_t **l4,
		  size_t *l4len, char *why, size_t cap)
{
	if (len < ETH_HLEN)
		return l3_fail(why, cap, "runt frame", f, len);
	if (memcmp(f, t->peer_mac, 6) != 0 || memcmp(f + 6, t->local_mac, 6) != 0)
		return l3_fail(why, cap, "wrong Ethernet addresses", f, len);
	if (t->v6)
		return l3_ip6(t, f, len, l4, l4len, why, cap);
	return l3_ip4(t, f, len, l4, l4len, why, cap);
}
