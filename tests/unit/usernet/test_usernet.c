/* test_usernet.c — usernet through its frame interface, no TAP and no
 * root: a fake guest builds Ethernet frames, usernet_input() takes them,
 * the send callback captures what comes back. DHCP on both
 * implementations, UDP NAT to a loopback socket, the DNS forwarder to a
 * fake resolver, flow limits and idle expiry, configuration errors. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netstack/netstack.h"
#include "netstack/usernet/internal.h"
#include "tests/unit/check_run.h"

#define GUEST 0x0a00020fu
#define GW 0x0a000202u
#define DNSA 0x0a000203u

/* Not const: a test plays a second client by flipping a bit. */
static uint8_t guest_mac[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};

/* Frames usernet sent, newest last. */
static uint8_t sent[64][2048];
static size_t sent_len[64];
static unsigned nsent;

static void capture(void *opaque, const void *frame, size_t len)
{
	(void)opaque;
	if (nsent < 64 && len <= sizeof(sent[0])) {
		memcpy(sent[nsent], frame, len);
		sent_len[nsent++] = len;
	}
}

static struct usernet *make(enum usernet_impl impl, struct usernet_cfg *c)
{
	char err[256] = "";
	struct usernet *u;

	c->impl = impl;
	c->send = capture;
	usernet_cfg_defaults(c);
	u = usernet_new(c, err, sizeof(err));
	ck_assert_msg(u != NULL, "usernet_new: %s", err);
	usernet_poll(u); /* the LAN's own start: the IPv6 router advertisement */
	nsent = 0;
	return u;
}

static size_t udp_frame(uint8_t *f, const uint8_t dmac[6], uint32_t src, uint16_t sport,
			uint32_t dst, uint16_t dport, const void *data, size_t len)
{
	uint8_t *ip = f + 14, *udp = ip + 20;
	uint8_t pseudo[12] = {0};
	uint32_t s = htonl(src), d = htonl(dst), sum;
	uint16_t v;

	memcpy(f, dmac, 6);
	memcpy(f + 6, guest_mac, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	v = htons((uint16_t)(28 + len));
	memcpy(ip + 2, &v, 2);
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, &s, 4);
	memcpy(ip + 16, &d, 4);
	v = (uint16_t)~ns_csum_fold(ns_csum_add(0, ip, 20));
	memcpy(ip + 10, &v, 2);
	v = htons(sport);
	memcpy(udp, &v, 2);
	v = htons(dport);
	memcpy(udp + 2, &v, 2);
	v = htons((uint16_t)(8 + len));
	memcpy(udp + 4, &v, 2);
	memset(udp + 6, 0, 2);
	memcpy(udp + 8, data, len);
	memcpy(pseudo, ip + 12, 8);
	pseudo[9] = 17;
	memcpy(pseudo + 10, udp + 4, 2);
	sum = ns_csum_add(ns_csum_add(0, pseudo, 12), udp, 8 + len);
	v = (uint16_t)~ns_csum_fold(sum);
	memcpy(udp + 6, &v, 2);
	return 14 + 28 + len;
}

/* The newest sent frame that is UDP to dport; its payload via p/len. */
static bool find_udp(uint16_t sport, uint16_t dport, const uint8_t **p, size_t *len)
{
	for (unsigned i = nsent; i-- > 0;) {
		const uint8_t *f = sent[i];
		size_t hl = (size_t)(f[14] & 15) * 4;

		if (sent_len[i] < 14 + 28 || f[12] != 0x08 || f[13] != 0 || f[23] != 17)
			continue;
		if (((f[14 + hl] << 8) | f[15 + hl]) != sport ||
		    ((f[16 + hl] << 8) | f[17 + hl]) != dport)
			continue;
		*p = f + 14 + hl + 8;
		*len = (size_t)((f[18 + hl] << 8) | f[19 + hl]) - 8;
		return true;
	}
	return false;
}

static void dhcp_discover(struct usernet *u)
{
	uint8_t msg[300] = {1, 1, 6}, f[400];
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

	msg[4] = 0x55;
	memcpy(msg + 28, guest_mac, 6);
	memcpy(msg + 236, (uint8_t[]){99, 130, 83, 99, 53, 1, 1, 255}, 8);
	usernet_input(u, f, udp_frame(f, bcast, 0, 68, 0xffffffffu, 67, msg, sizeof(msg)));
	usernet_poll(u); /* the reply may wait for the poll after input */
}

static void check_offer(void)
{
	const uint8_t *p;
	size_t len;
	uint32_t yi;

	ck_assert_msg(find_udp(67, 68, &p, &len), "no DHCP reply among %u frames", nsent);
	ck_assert_uint_ge(len, 240);
	ck_assert_int_eq(p[0], 2);
	ck_assert_int_eq(p[4], 0x55);
	memcpy(&yi, p + 16, 4);
	ck_assert_uint_eq(ntohl(yi), GUEST);
}

/* Make the stack know the guest's MAC (its ARP request for the gateway). */
static void guest_arp(struct usernet *u)
{
	uint8_t f[42];
	uint32_t spa = htonl(GUEST), tpa = htonl(GW);

	memset(f, 0xff, 6);
	memcpy(f + 6, guest_mac, 6);
	memcpy(f + 12, (uint8_t[]){0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 1}, 10);
	memcpy(f + 22, guest_mac, 6);
	memcpy(f + 28, &spa, 4);
	memset(f + 32, 0, 6);
	memcpy(f + 38, &tpa, 4);
	usernet_input(u, f, sizeof(f));
}

static int udp_server(uint16_t *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t l = sizeof(sa);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	sa.sin_addr.s_addr = htonl(0x7f000001);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	getsockname(fd, (struct sockaddr *)&sa, &l);
	*port = ntohs(sa.sin_port);
	return fd;
}

/* Answer one datagram on fd with reply. */
static void serve_one(int fd, const char *expect, const char *reply)
{
	char buf[256];
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);
	struct pollfd p = {.fd = fd, .events = POLLIN};
	ssize_t n;

	ck_assert_int_eq(poll(&p, 1, 2000), 1);
	n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
	ck_assert_int_eq(n, (ssize_t)strlen(expect));
	ck_assert_mem_eq(buf, expect, (size_t)n);
	sendto(fd, reply, strlen(reply), 0, (struct sockaddr *)&from, fl);
}

/* Run the event loop until a UDP frame sport->dport shows up. */
static bool wait_udp(struct usernet *u, uint16_t sport, uint16_t dport, const uint8_t **p,
		     size_t *len)
{
	for (int i = 0; i < 200; i++) {
		struct pollfd pf = {.fd = usernet_fd(u), .events = POLLIN};

		if (find_udp(sport, dport, p, len))
			return true;
		poll(&pf, 1, 10);
		usernet_poll(u);
	}
	return find_udp(sport, dport, p, len);
}

START_TEST(test_dhcp_netstack)
{
	struct usernet_cfg c = {.dns_upstream = "127.0.0.1"};
	struct usernet *u = make(USERNET_IMPL_NETSTACK, &c);
	struct usernet_stats st;
	char buf[4096];

	dhcp_discover(u);
	check_offer();
	usernet_stats(u, &st);
	ck_assert_uint_eq(st.dhcp_discover, 1);
	ck_assert_uint_eq(st.dhcp_offer, 1);
	ck_assert_int_gt(usernet_stats_format(&st, buf, sizeof(buf)), 0);
	ck_assert_ptr_nonnull(strstr(buf, "dhcp_offer 1\n"));
	usernet_free(u);
}
END_TEST

/* A DHCPREQUEST for GUEST from a client without an address. */
static size_t dhcp_request_frame(uint8_t *f)
{
	uint8_t msg[300] = {1, 1, 6};
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

	msg[4] = 0x66;
	memcpy(msg + 28, guest_mac, 6);
	memcpy(msg + 236, (uint8_t[]){99, 130, 83, 99, 53, 1, 3, 50, 4, 10, 0, 2, 15, 255}, 14);
	return udp_frame(f, bcast, 0, 68, 0xffffffffu, 67, msg, sizeof(msg));
}

START_TEST(test_dhcp_ack_unicast_netstack)
{
	struct usernet_cfg c = {.dns_upstream = "127.0.0.1"};
	struct usernet *u = make(USERNET_IMPL_NETSTACK, &c);
	struct usernet_stats st;
	uint8_t f[400];
	const uint8_t *p;
	size_t len, flen = dhcp_request_frame(f);
	uint32_t dst;

	/* A corrupted UDP checksum: the stack drops it, no reply. */
	f[flen - 1] ^= 0xff;
	usernet_input(u, f, flen);
	usernet_poll(u);
	ck_assert_uint_eq(nsent, 0);
	f[flen - 1] ^= 0xff;
	usernet_input(u, f, flen);
	usernet_poll(u);
	/* The ACK goes to the client's MAC and its new address, no ARP. */
	ck_assert_uint_eq(nsent, 1);
	ck_assert(find_udp(67, 68, &p, &len));
	ck_assert_int_eq(p[4], 0x66);
	ck_assert_mem_eq(sent[0], guest_mac, 6);
	memcpy(&dst, sent[0] + 30, 4);
	ck_assert_uint_eq(ntohl(dst), GUEST);
	usernet_stats(u, &st);
	ck_assert_uint_eq(st.dhcp_request, 1);
	ck_assert_uint_eq(st.dhcp_ack, 1);
	usernet_free(u);
}
END_TEST

/* The DHCP message type (option 53, first in our replies) of the newest
 * reply, 0 when there is none. */
static int dhcp_reply_type(uint32_t *yiaddr)
{
	const uint8_t *p;
	size_t len;

	if (!find_udp(67, 68, &p, &len) || len < 243 || p[240] != 53)
		return 0;
	memcpy(yiaddr, p + 16, 4);
	*yiaddr = ntohl(*yiaddr);
	return p[242];
}

/* Leases survive usernet_save/usernet_load: the restored server ACKs its
 * client's renewal of GUEST and offers another client the next address. */
START_TEST(test_state_keeps_leases)
{
	struct usernet_cfg c = {.dns_upstream = "127.0.0.1"};
	struct usernet *u = make(USERNET_IMPL_NETSTACK, &c);
	uint8_t f[400];
	void *snap;
	size_t slen;
	char err[256] = "";
	uint32_t yi = 0;

	usernet_input(u, f, dhcp_request_frame(f));
	usernet_poll(u);
	ck_assert_int_eq(dhcp_reply_type(&yi), 5); /* ACK */
	ck_assert_int_eq(usernet_save(u, &snap, &slen, err, sizeof(err)), 0);
	usernet_free(u);
	memset(&c, 0, sizeof(c));
	c.dns_upstream = "127.0.0.1";
	u = make(USERNET_IMPL_NETSTACK, &c);
	/* Truncated or corrupted: refused with a reason, nothing changed. */
	ck_assert_int_lt(usernet_load(u, snap, slen - 1, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "usernet state"));
	((uint8_t *)snap)[0] ^= 1;
	ck_assert_int_lt(usernet_load(u, snap, slen, err, sizeof(err)), 0);
	((uint8_t *)snap)[0] ^= 1;
	ck_assert_int_eq(usernet_load(u, snap, slen, err, sizeof(err)), 0);
	guest_mac[5] ^= 1; /* another client */
	dhcp_discover(u);
	guest_mac[5] ^= 1;
	ck_assert_int_eq(dhcp_reply_type(&yi), 2); /* OFFER */
	ck_assert_uint_eq(yi, GUEST + 1);
	nsent = 0;
	usernet_input(u, f, dhcp_request_frame(f));
	usernet_poll(u);
	ck_assert_int_eq(dhcp_reply_type(&yi), 5);
	ck_assert_uint_eq(yi, GUEST);
	usernet_free(u);
	/* Another LAN: refused. */
	c.net = 0x0a000300;
	c.gateway = c.dns = c.dhcp_start = 0;
	u = make(USERNET_IMPL_NETSTACK, &c);
	ck_assert_int_lt(usernet_load(u, snap, slen, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "another LAN"));
	usernet_free(u);
	free(snap);
}
END_TEST

START_TEST(test_dhcp_slirp)
{
	struct usernet_cfg c = {0};
	struct usernet *u = make(USERNET_IMPL_SLIRP, &c);

	dhcp_discover(u);
	check_offer();
	usernet_free(u);
}
END_TEST

static void udp_roundtrip(enum usernet_impl impl)
{
	struct usernet_cfg c = {.dns_upstream = impl == USERNET_IMPL_SLIRP ? NULL : "127.0.0.1"};
	struct usernet *u = make(impl, &c);
	uint8_t f[200];
	uint16_t port;
	int fd = udp_server(&port);
	const uint8_t *p;
	size_t len;

	guest_arp(u);
	usernet_input(u, f, udp_frame(f, c.gateway_mac, GUEST, 4000, GW, port, "ping", 4));
	usernet_poll(u);
	serve_one(fd, "ping", "pong!");
	ck_assert(wait_udp(u, port, 4000, &p, &len));
	ck_assert_uint_eq(len, 5);
	ck_assert_mem_eq(p, "pong!", 5);
	close(fd);
	usernet_free(u);
}

/* An ND message from fe80::1 carrying its link-layer address option:
 * type 133 (RS, to ff02::2) or 135 (NS for target, to its solicited-node
 * group). */
static size_t nd_frame(uint8_t *f, uint8_t type, const uint8_t target[16])
{
	static const uint8_t allrouters[16] = {0xff, 2, [15] = 2};
	size_t body = type == 135 ? 32 : 16; /* NS: 8 + target + option */
	uint8_t *ip = f + 14, *icmp = ip + 40, pseudo[40] = {0}, *opt;
	uint16_t v;

	memset(f, 0, 14 + 40 + body);
	memcpy(f + 6, guest_mac, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	ip[0] = 0x60;
	ip[5] = (uint8_t)body;
	ip[6] = 58;
	ip[7] = 255;
	ip[8] = 0xfe;
	ip[9] = 0x80;
	ip[23] = 1;
	if (type == 135) { /* ff02::1:ffXX:XXXX, 33:33:ff:XX:XX:XX */
		memcpy(f, (uint8_t[]){0x33, 0x33, 0xff, target[13], target[14], target[15]}, 6);
		memcpy(ip + 24, (uint8_t[]){0xff, 2, [11] = 1, [12] = 0xff}, 13);
		memcpy(ip + 37, target + 13, 3);
		memcpy(icmp + 8, target, 16);
	} else {
		memcpy(f, (uint8_t[]){0x33, 0x33, 0, 0, 0, 2}, 6);
		memcpy(ip + 24, allrouters, 16);
	}
	icmp[0] = type;
	opt = icmp + body - 8;
	opt[0] = 1; /* source link-layer address option */
	opt[1] = 1;
	memcpy(opt + 2, guest_mac, 6);
	memcpy(pseudo, ip + 8, 32);
	pseudo[35] = (uint8_t)body;
	pseudo[39] = 58;
	v = (uint16_t)~ns_csum_fold(ns_csum_add(ns_csum_add(0, pseudo, 40), icmp, body));
	memcpy(icmp + 2, &v, 2);
	return 14 + 40 + body;
}

static size_t rs_frame(uint8_t *f)
{
	return nd_frame(f, 133, NULL);
}

/* The newest Router Advertisement usernet sent, or NULL. */
static const uint8_t *find_ra(size_t *len)
{
	for (unsigned i = nsent; i-- > 0;)
		if (sent_len[i] > 14 + 40 + 16 && sent[i][12] == 0x86 && sent[i][13] == 0xdd &&
		    sent[i][14 + 6] == 58 && sent[i][14 + 40] == 134) {
			*len = sent_len[i] - 14 - 40;
			return sent[i] + 14 + 40;
		}
	return NULL;
}

/* An option of type t in the RA's option list, or NULL. */
static const uint8_t *ra_option(const uint8_t *ra, size_t len, uint8_t t)
{
	for (size_t o = 16; o + 8 <= len && ra[o + 1]; o += (size_t)ra[o + 1] * 8)
		if (ra[o] == t && o + (size_t)ra[o + 1] * 8 <= len)
			return ra + o;
	return NULL;
}

static const uint8_t *slirp_ra(struct usernet_cfg *c, size_t *len)
{
	struct usernet *u = make(USERNET_IMPL_SLIRP, c);
	static uint8_t copy[2048];
	const uint8_t *ra;
	uint8_t f[128];

	usernet_input(u, f, rs_frame(f));
	for (int i = 0; i < 50 && !find_ra(len); i++) {
		poll(NULL, 0, 2);
		usernet_poll(u);
	}
	ra = find_ra(len);
	if (ra)
		memcpy(copy, ra, *len);
	usernet_free(u);
	return ra ? copy : NULL;
}

/* impl=slirp takes the IPv6 LAN's settings: the advertised prefix is
 * ipv6-net; ipv6=off advertises nothing. (libslirp's RA carries RDNSS
 * only when the host itself has an IPv6 resolver, so ipv6-dns is not
 * checked here.) */
START_TEST(test_slirp_ipv6_config)
{
	struct usernet_cfg c = {0};
	const uint8_t *ra, *pi;
	uint8_t want[16];
	size_t len;

	ck_assert_int_eq(usernet_parse_ipv6_option(&c, "ipv6-net=fd42:7::/64"), 0);
	ck_assert_int_eq(usernet_parse_ipv6_option(&c, "ipv6-dns=fd42:7::53"), 0);
	ra = slirp_ra(&c, &len);
	ck_assert_msg(ra != NULL, "libslirp sent no router advertisement");
	pi = ra_option(ra, len, 3);
	ck_assert_ptr_nonnull(pi);
	ck_assert_uint_eq(pi[2], 64);
	ns_parse_addr6("fd42:7::", want);
	ck_assert_mem_eq(pi + 16, want, 16);
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(usernet_parse_ipv6_option(&c, "ipv6=off"), 0);
	ck_assert_ptr_null(slirp_ra(&c, &len));
}
END_TEST

/* Whether usernet answered a Neighbor Solicitation for target. */
static bool answers_ns(struct usernet *u, const char *target)
{
	uint8_t f[128], t[16];

	ns_parse_addr6(target, t);
	nsent = 0;
	usernet_input(u, f, nd_frame(f, 135, t));
	for (int i = 0; i < 20; i++) {
		usernet_poll(u);
		for (unsigned k = 0; k < nsent; k++)
			if (sent_len[k] >= 14 + 40 + 24 && sent[k][14 + 6] == 58 &&
			    sent[k][14 + 40] == 136 && !memcmp(sent[k] + 14 + 40 + 8, t, 16))
				return true;
		poll(NULL, 0, 2);
	}
	return false;
}

/* impl=slirp also takes ipv6-host and ipv6-dns (libslirp's vhost6 and
 * vnameserver6): it answers Neighbor Solicitations for exactly those. */
START_TEST(test_slirp_ipv6_host_and_dns)
{
	struct usernet_cfg c = {0};
	struct usernet *u;

	ck_assert_int_eq(usernet_parse_ipv6_option(&c, "ipv6-net=fd42:7::/64"), 0);
	ck_assert_int_eq(usernet_parse_ipv6_option(&c, "ipv6-host=fd42:7::5"), 0);
	ck_assert_int_eq(usernet_parse_ipv6_option(&c, "ipv6-dns=fd42:7::53"), 0);
	u = make(USERNET_IMPL_SLIRP, &c);
	ck_assert_msg(answers_ns(u, "fd42:7::5"), "no NA for ipv6-host");
	ck_assert_msg(answers_ns(u, "fd42:7::53"), "no NA for ipv6-dns");
	ck_assert_msg(!answers_ns(u, "fd42:7::2"), "NA for the default host address");
	ck_assert_msg(!answers_ns(u, "fd42:7::99"), "NA for an address nobody has");
	usernet_free(u);
}
END_TEST

START_TEST(test_udp_nat_netstack)
{
	udp_roundtrip(USERNET_IMPL_NETSTACK);
}
END_TEST

START_TEST(test_udp_nat_slirp)
{
	udp_roundtrip(USERNET_IMPL_SLIRP);
}
END_TEST

/* A host port nobody listens on: the guest gets ICMP port unreachable. */
START_TEST(test_udp_port_unreachable)
{
	struct usernet_cfg c = {.dns_upstream = "127.0.0.1"};
	struct usernet *u = make(USERNET_IMPL_NETSTACK, &c);
	struct usernet_stats st;
	uint8_t f[200];
	uint16_t port;
	bool seen = false;

	close(udp_server(&port));
	guest_arp(u);
	usernet_input(u, f, udp_frame(f, c.gateway_mac, GUEST, 4444, GW, port, "?", 1));
	for (int i = 0; i < 100 && !seen; i++) {
		struct pollfd pf = {.fd = usernet_fd(u), .events = POLLIN};

		poll(&pf, 1, 10);
		usernet_poll(u);
		for (unsigned k = 0; k < nsent && !seen; k++) {
			const uint8_t *fr = sent[k];

			/* IPv4 ICMP type 3 code 3 quoting UDP 4444 -> port */
			seen = sent_len[k] >= 14 + 20 + 8 + 28 && fr[23] == 1 && fr[34] == 3 &&
			       fr[35] == 3 && fr[42 + 20] == 4444 >> 8 &&
			       fr[42 + 21] == (4444 & 0xff) && fr[42 + 22] == port >> 8 &&
			       fr[42 + 23] == (port & 0xff);
		}
	}
	ck_assert(seen);
	usernet_stats(u, &st);
	ck_assert_uint_eq(st.udp_unreachable, 1);
	usernet_free(u);
}
END_TEST

/* A guest query to 10.0.2.3:53 answered by the upstream on fd. */
static struct usernet *dns_forward(int fd, struct usernet_cfg *c)
{
	struct usernet *u = make(USERNET_IMPL_NETSTACK, c);
	uint8_t f[200];
	const uint8_t *p;
	size_t len;

	guest_arp(u);
	usernet_input(u, f, udp_frame(f, c->gateway_mac, GUEST, 5353, DNSA, 53, "query", 5));
	usernet_poll(u);
	serve_one(fd, "query", "answer");
	ck_assert(wait_udp(u, 53, 5353, &p, &len));
	ck_assert_mem_eq(p, "answer", 6);
	return u;
}

/* An IPv6 upstream (the guest's query is IPv4): from dns_upstream
 * "[::1]:PORT", and from a resolv.conf whose only nameserver is ::1. */
START_TEST(test_dns_forwarder_ipv6_upstream)
{
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	char up[48], path[] = "/tmp/usernet-resolv6-XXXXXX";
	struct usernet_cfg c = {.dns_upstream = up};
	socklen_t l = sizeof(sa);
	int fd = socket(AF_INET6, SOCK_DGRAM, 0), pfd;
	FILE *fp;

	/* libcheck cannot skip: an early return would count as a pass */
	ck_assert_msg(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0,
		      "no IPv6 loopback (::1) on this host");
	getsockname(fd, (struct sockaddr *)&sa, &l);
	snprintf(up, sizeof(up), "[::1]:%u", ntohs(sa.sin6_port));
	usernet_free(dns_forward(fd, &c));
	close(fd);
	/* resolv.conf: port 53 on ::1 (tests run as root; free unless a
	 * resolver listens there, then bind says so). */
	fd = socket(AF_INET6, SOCK_DGRAM, 0);
	sa.sin6_port = htons(53);
	ck_assert_msg(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "bind [::1]:53: %s",
		      strerror(errno));
	pfd = mkstemp(path);
	fp = fdopen(pfd, "w");
	fprintf(fp, "nameserver fe80::1%%eth0\nnameserver ::1\n");
	fclose(fp);
	memset(&c, 0, sizeof(c));
	c.resolv_conf = path;
	usernet_free(dns_forward(fd, &c));
	unlink(path);
	close(fd);
}
END_TEST

START_TEST(test_dns_forwarder)
{
	char up[32];
	uint16_t port;
	int fd = udp_server(&port);
	struct usernet_cfg c = {.dns_upstream = up};
	struct usernet *u;
	struct usernet_stats st;
	uint8_t f[200];

	snprintf(up, sizeof(up), "127.0.0.1:%u", port);
	u = dns_forward(fd, &c);
	usernet_stats(u, &st);
	ck_assert_uint_eq(st.dns_queries, 1);
	ck_assert_uint_eq(st.dns_replies, 1);
	/* Other ports at the DNS address go nowhere. */
	usernet_input(u, f, udp_frame(f, c.gateway_mac, GUEST, 5353, DNSA, 54, "x", 1));
	usernet_poll(u);
	usernet_stats(u, &st);
	ck_assert_uint_eq(st.udp_flows, 1);
	close(fd);
	usernet_free(u);
}
END_TEST

START_TEST(test_udp_limit_and_idle)
{
	struct usernet_cfg c = {.dns_upstream = "127.0.0.1", .max_udp_flows = 2, .udp_idle_s = 1};
	struct usernet *u = make(USERNET_IMPL_NETSTACK, &c);
	struct usernet_stats st;
	uint8_t f[200];
	uint16_t port;
	int fd = udp_server(&port);

	guest_arp(u);
	for (uint16_t sp = 6000; sp < 6003; sp++)
		usernet_input(u, f, udp_frame(f, c.gateway_mac, GUEST, sp, GW, port, "x", 1));
	usernet_poll(u);
	usernet_stats(u, &st);
	ck_assert_uint_eq(st.udp_flows, 2);
	ck_assert_uint_eq(st.udp_flows_now, 2);
	ck_assert_uint_eq(st.udp_limit_drop, 1);
	ck_assert_int_ge(usernet_timeout_ms(u), 0);
	ck_assert_int_le(usernet_timeout_ms(u), 1000);
	usleep(1100 * 1000);
	usernet_poll(u);
	usernet_stats(u, &st);
	ck_assert_uint_eq(st.udp_idle_closed, 2);
	ck_assert_uint_eq(st.udp_flows_now, 0);
	close(fd);
	usernet_free(u);
}
END_TEST

START_TEST(test_bad_frames)
{
	struct usernet_cfg c = {.dns_upstream = "127.0.0.1"};
	struct usernet *u = make(USERNET_IMPL_NETSTACK, &c);
	uint8_t f[1600];
	unsigned seed = 7;

	for (int i = 0; i < 5000; i++) {
		size_t len = (size_t)rand_r(&seed) % sizeof(f);

		for (size_t j = 0; j < len; j++)
			f[j] = (uint8_t)rand_r(&seed);
		if (i & 1 && len > 14) { /* IPv4 UDP to port 67 sometimes */
			f[12] = 8;
			f[13] = 0;
			f[14] = 0x45;
			f[23] = 17;
		}
		usernet_input(u, f, len);
	}
	usernet_poll(u);
	usernet_free(u);
}
END_TEST

START_TEST(test_config_errors)
{
	struct usernet_cfg c = {.resolv_conf = "/nonexistent/resolv.conf", .send = capture};
	char err[256] = "";
	FILE *fp;
	char path[] = "/tmp/usernet-resolv-XXXXXX";
	int fd;

	ck_assert_ptr_null(usernet_new(&c, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "nameserver"));
	c.resolv_conf = NULL;
	c.dns_upstream = "127.0.0.1";
	c.prefix = 31;
	ck_assert_ptr_null(usernet_new(&c, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "prefix"));
	c.prefix = 0;
	c.send = NULL;
	ck_assert_ptr_null(usernet_new(&c, err, sizeof(err)));
	/* resolv.conf parsing: IPv6 kept, scoped link-local and junk skipped. */
	fd = mkstemp(path);
	fp = fdopen(fd, "w");
	fprintf(fp, "# c\nsearch x\nnameserver 2001:db8::53\nnameserver 192.0.2.1\n"
		    "nameserver bogus\nnameserver fe80::1%%eth0\nnameserver 192.0.2.2\n");
	fclose(fp);
	{
		struct ns_sockaddr a[4];
		uint8_t want[16];

		ck_assert_int_eq(usernet_read_resolvers(path, a, 4), 3);
		ck_assert_uint_eq(a[0].family, NS_AF_INET6);
		ns_parse_addr6("2001:db8::53", want);
		ck_assert_mem_eq(a[0].addr6, want, 16);
		ck_assert_uint_eq(a[1].family, NS_AF_INET);
		ck_assert_uint_eq(a[1].addr, 0xc0000201u);
		ck_assert_uint_eq(a[2].addr, 0xc0000202u);
	}
	fp = fopen(path, "w");
	fprintf(fp, "nameserver ::\nnameserver bogus\n");
	fclose(fp);
	{
		struct ns_sockaddr a[3];

		ck_assert_int_eq(usernet_read_resolvers(path, a, 3), -ENODATA);
	}
	unlink(path);
}
END_TEST

START_TEST(test_fwd_spec)
{
	struct usernet_fwd f;
	enum usernet_impl impl;

	ck_assert_int_eq(usernet_parse_fwd("tcp::8080-:80", GUEST, &f), 0);
	ck_assert(!f.udp);
	ck_assert_uint_eq(f.host_addr, 0x7f000001);
	ck_assert_uint_eq(f.host_port, 8080);
	ck_assert_uint_eq(f.guest_addr, GUEST);
	ck_assert_uint_eq(f.guest_port, 80);
	ck_assert_int_eq(usernet_parse_fwd("udp:0.0.0.0:53-10.0.2.20:5353", GUEST, &f), 0);
	ck_assert(f.udp);
	ck_assert_uint_eq(f.host_addr, 0);
	ck_assert_uint_eq(f.guest_addr, 0x0a000214);
	ck_assert_int_eq(usernet_parse_fwd("sctp::1-:2", GUEST, &f), -EINVAL);
	ck_assert_int_eq(usernet_parse_fwd("tcp::0-:2", GUEST, &f), -EINVAL);
	ck_assert_int_eq(usernet_parse_fwd("tcp::70000-:2", GUEST, &f), -EINVAL);
	ck_assert_int_eq(usernet_parse_fwd("tcp::1:2", GUEST, &f), -EINVAL);
	ck_assert_int_eq(usernet_parse_fwd("tcp:1.2.3:1-:2", GUEST, &f), -EINVAL);
	ck_assert_int_eq(usernet_parse_fwd("tcp::1-:", GUEST, &f), -EINVAL);
	ck_assert_int_eq(usernet_parse_impl("slirp", &impl), 0);
	ck_assert_int_eq(impl, USERNET_IMPL_SLIRP);
	ck_assert_int_eq(usernet_parse_impl("qemu", &impl), -EINVAL);
}
END_TEST

START_TEST(test_udp_hostfwd)
{
	struct usernet_cfg c = {.dns_upstream = "127.0.0.1"};
	struct usernet *u = make(USERNET_IMPL_NETSTACK, &c);
	struct sockaddr_in sa = {.sin_family = AF_INET};
	char err[256], spec[64];
	uint16_t port;
	int probe = udp_server(&port), fd;
	bool seen = false;

	close(probe); /* a free port to forward */
	snprintf(spec, sizeof(spec), "udp:127.0.0.1:%u-:7777", port);
	ck_assert_int_eq(usernet_hostfwd_add(u, spec, err, sizeof(err)), 0);
	ck_assert_int_lt(usernet_hostfwd_add(u, spec, err, sizeof(err)), 0);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	sa.sin_addr.s_addr = htonl(0x7f000001);
	sa.sin_port = htons(port);
	guest_arp(u);
	sendto(fd, "fwd", 3, 0, (struct sockaddr *)&sa, sizeof(sa));
	for (int i = 0; i < 200 && !seen; i++) {
		struct pollfd pf = {.fd = usernet_fd(u), .events = POLLIN};

		poll(&pf, 1, 10);
		usernet_poll(u);
		for (unsigned k = 0; k < nsent && !seen; k++) {
			const uint8_t *fr = sent[k];

			seen = sent_len[k] >= 45 && fr[23] == 17 && fr[36] == 7777 >> 8 &&
			       fr[37] == (7777 & 0xff) && !memcmp(fr + 42, "fwd", 3);
		}
	}
	ck_assert(seen);
	ck_assert_int_eq(usernet_hostfwd_remove(u, spec, err, sizeof(err)), 0);
	ck_assert_int_lt(usernet_hostfwd_remove(u, spec, err, sizeof(err)), 0);
	close(fd);
	usernet_free(u);
}
END_TEST

static Suite *usernet_suite(void)
{
	Suite *s = suite_create("usernet");
	TCase *t = tcase_create("frames");

	tcase_set_timeout(t, 20);
	tcase_add_test(t, test_dhcp_netstack);
	tcase_add_test(t, test_dhcp_slirp);
	tcase_add_test(t, test_dhcp_ack_unicast_netstack);
	tcase_add_test(t, test_state_keeps_leases);
	tcase_add_test(t, test_udp_nat_netstack);
	tcase_add_test(t, test_udp_nat_slirp);
	tcase_add_test(t, test_slirp_ipv6_config);
	tcase_add_test(t, test_slirp_ipv6_host_and_dns);
	tcase_add_test(t, test_dns_forwarder_ipv6_upstream);
	tcase_add_test(t, test_udp_port_unreachable);
	tcase_add_test(t, test_dns_forwarder);
	tcase_add_test(t, test_udp_limit_and_idle);
	tcase_add_test(t, test_bad_frames);
	tcase_add_test(t, test_config_errors);
	tcase_add_test(t, test_fwd_spec);
	tcase_add_test(t, test_udp_hostfwd);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return check_run_suite(usernet_suite());
}
