/* fuzz_usernet_dns.c — usernet's DNS forwarder end to end: guest queries
 * (UDP to 10.0.2.3:53 or [fd00::3]:53, as frames through usernet_input:
 * Ethernet, IP, UDP, the NAT flow table) forwarded to an upstream that is
 * this program's own UDP socket, and upstream replies (any bytes, from the
 * right or a wrong port) relayed back to the guest by usernet_poll. One
 * usernet lives across inputs. Input: records (fuzz.h); a record's first
 * byte picks what it is (mod 3): 0 a v4 query, 1 a v6 query, 2 a reply to
 * the last query. No raw frames: those would reach the TCP/UDP NAT and
 * make the fuzzer connect to arbitrary hosts (fuzz_netstack covers the
 * frame parsers). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netstack/usernet/usernet.h"
#include "tests/fuzz/fuzz.h"

enum { GUEST_PORT = 33333 };

static const uint8_t guest_mac[6] = {0x52, 0x54, 0, 0x12, 0x34, 0x56};
static struct usernet *un;
static int upstream = -1;
static struct sockaddr_in last_query_from;

static void discard(void *opaque, const void *frame, size_t len)
{
}

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static unsigned ip_csum(const uint8_t *p, size_t n)
{
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s & 0xffff;
}

/* The guest's UDP datagram to the DNS forwarder, as a frame. Checksums are
 * trusted (cfg.rx_csum_trusted), as with an offloading NIC. */
static size_t query_frame(uint8_t *f, bool v6, const uint8_t *q, size_t qlen)
{
	size_t l3 = v6 ? 40 : 20;
	uint8_t *ip = f + 14, *udp = ip + l3;

	memset(f, 0, 14 + l3 + 8);
	memcpy(f, (uint8_t[6]){0x52, 0x55, 10, 0, 2, 2}, 6);
	memcpy(f + 6, guest_mac, 6);
	put16(f + 12, v6 ? 0x86dd : 0x0800);
	if (v6) {
		ip[0] = 0x60;
		put16(ip + 4, (unsigned)(8 + qlen));
		ip[6] = 17;
		ip[7] = 64;
		memcpy(ip + 8, (uint8_t[16]){0xfd, [14] = 0x12, [15] = 0x34}, 16);
		memcpy(ip + 24, (uint8_t[16]){0xfd, [15] = 3}, 16);
	} else {
		ip[0] = 0x45;
		put16(ip + 2, (unsigned)(20 + 8 + qlen));
		ip[8] = 64;
		ip[9] = 17;
		memcpy(ip + 12, (uint8_t[4]){10, 0, 2, 15}, 4);
		memcpy(ip + 16, (uint8_t[4]){10, 0, 2, 3}, 4);
		put16(ip + 10, ip_csum(ip, 20));
	}
	put16(udp, GUEST_PORT);
	put16(udp + 2, 53);
	put16(udp + 4, (unsigned)(8 + qlen));
	memcpy(udp + 8, q, qlen);
	return 14 + l3 + 8 + qlen;
}

static void setup(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	struct usernet_cfg cfg = {.impl = USERNET_IMPL_NETSTACK, .send = discard};
	static char up[64];
	char err[256];

	upstream = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	bind(upstream, (struct sockaddr *)&a, sizeof(a));
	getsockname(upstream, (struct sockaddr *)&a, &alen);
	snprintf(up, sizeof(up), "127.0.0.1:%u", ntohs(a.sin_port));
	usernet_cfg_defaults(&cfg);
	cfg.dns_upstream = up;
	cfg.rx_csum_trusted = true;
	un = usernet_new(&cfg, err, sizeof(err));
	if (!un) {
		fprintf(stderr, "fuzz_usernet_dns: %s\n", err);
		abort();
	}
}

/* What reached the upstream: remember who asked (the flow's host port). */
static void upstream_drain(void)
{
	uint8_t buf[2048];
	socklen_t alen = sizeof(last_query_from);

	while (recvfrom(upstream, buf, sizeof(buf), 0, (struct sockaddr *)&last_query_from,
			&alen) >= 0)
		alen = sizeof(last_query_from);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t frame[65600];
	const uint8_t *rec;
	size_t len;

	if (!un)
		setup();
	while (fuzz_next_record(&data, &size, &rec, &len)) {
		if (!len)
			continue;
		switch (rec[0] % 3) {
		case 0:
		case 1:
			len = len - 1 > 1400 ? 1400 : len - 1;
			usernet_input(un, frame, query_frame(frame, rec[0] & 1, rec + 1, len));
			break;
		case 2:
			if (last_query_from.sin_port)
				sendto(upstream, rec + 1, len - 1, 0,
				       (struct sockaddr *)&last_query_from,
				       sizeof(last_query_from));
			break;
		}
		upstream_drain();
		usernet_poll(un);
	}
	return 0;
}
