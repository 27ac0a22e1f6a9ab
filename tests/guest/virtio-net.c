/* virtio-net.c — the kit's virtio-net test on the first virtio-net device,
 * behind user networking (10.0.2.0/24, as QEMU's -netdev user), with raw
 * frames built here:
 *
 *   1. DHCP: DISCOVER, OFFER, REQUEST, ACK; the lease, router and DNS
 *   2. ARP for the gateway (10.0.2.2)
 *   3. UDP to 10.0.2.2:echo_port (a host echo server on 127.0.0.1 through
 *      NAT), count=N round trips, each payload checked
 *
 * Prints "virtio-net: all checks passed" and exits 0, or names the first
 * failed check and exits 1. broken=1: after DHCP, a descriptor loop on the
 * transmit queue; the device must set DEVICE_NEEDS_RESET, and after a
 * reset an ARP round trip must work again.
 *
 * badhdr=1: before the UDP round trips, a frame whose header asks for a
 * partial checksum the kit never negotiated (VIRTIO_NET_F_CSUM): the
 * device must drop it (and count it) and carry on.
 *
 * serve=PORT: after DHCP and ARP, echo UDP datagrams that arrive on PORT
 * (a host forward added at run time brings them) back to their sender,
 * printing each, until the link goes down (set_link off): prints "link
 * down", waits for it to come back up (set_link on) and exits 0.
 *
 * bench=1 (with echo_port, size=BYTES, count=N): N UDP datagrams of size
 * bytes to the echo server, up to window=W in flight, every echo counted;
 * prints the elapsed TSC time for the host's packets/s. Around the run it
 * prints "bench start" and "bench size ..." and then idles 300 ms, so the
 * host can read the VMM's CPU time at both marks.
 */
#include "vnet.h"

#define ETH_P_IP 0x0800
#define ETH_P_ARP 0x0806
#define DHCP_MAGIC 0x63825363u
#define GUEST_PORT 40000
#define FRAME_MAX 1514

static struct vnet net;
static uint8_t frame[FRAME_MAX], in[2048];
static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static uint32_t my_ip, gw_ip = 0x0a000202, dns_ip, server_id;
static uint8_t gw_mac[6];

__attribute__((noreturn)) static void fail(const char *what, unsigned v)
{
	printf("virtio-net: FAIL %s (%x)\n", what, v);
	guest_exit(1);
}

/* ----------------------------------------------------------- building */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint16_t csum(uint32_t sum, const uint8_t *p, uint32_t len)
{
	for (uint32_t i = 0; i + 1 < len; i += 2)
		sum += get16(p + i);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t eth(uint8_t *f, const uint8_t *dst, uint16_t type)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, net.mac, 6);
	put16(f + 12, type);
	return 14;
}

/* Ethernet + IPv4 + UDP around len payload bytes already at f + 42:
 * the frame length. */
static uint32_t udp(uint8_t *f, const uint8_t *dst_mac, uint32_t src, uint32_t dst, uint16_t sport,
		    uint16_t dport, uint32_t len)
{
	uint8_t *ip = f + 14, *u = f + 34;
	uint32_t sum;

	eth(f, dst_mac, ETH_P_IP);
	memset(ip, 0, 20);
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(28 + len));
	ip[8] = 64;
	ip[9] = 17;
	put32(ip + 12, src);
	put32(ip + 16, dst);
	put16(ip + 10, csum(0, ip, 20));
	put16(u, sport);
	put16(u + 2, dport);
	put16(u + 4, (uint16_t)(8 + len));
	put16(u + 6, 0);
	sum = (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + 17 + 8 + len;
	put16(u + 6, csum(sum, u, 8 + len) ?: 0xffff);
	return 42 + len;
}

/* The IPv4/UDP frame in[0..len) to port: its payload (and length), or NULL. */
static const uint8_t *udp_payload(const uint8_t *f, uint32_t len, uint16_t port, uint32_t *plen)
{
	uint32_t ihl;

	if (len < 42 || get16(f + 12) != ETH_P_IP || f[23] != 17)
		return NULL;
	ihl = (f[14] & 15u) * 4;
	if (len < 14 + ihl + 8 || get16(f + 14 + ihl + 2) != port)
		return NULL;
	*plen = get16(f + 14 + ihl + 4) - 8u;
	if (14 + ihl + 8 + *plen > len)
		return NULL;
	return f + 14 + ihl + 8;
}

static void send_or_fail(uint32_t len, const char *what)
{
	if (!vnet_send(&net, frame, len))
		fail(what, len);
}

/* ---------------------------------------------------------------- DHCP */

static uint32_t dhcp_msg(uint8_t type, uint32_t requested)
{
	uint8_t *b = frame + 42, *o = b + 240;

	memset(b, 0, 300);
	b[0] = 1; /* BOOTREQUEST */
	b[1] = 1; /* Ethernet */
	b[2] = 6;
	put32(b + 4, 0x6b697431); /* xid "kit1" */
	put16(b + 10, 0x8000);	  /* broadcast replies */
	memcpy(b + 28, net.mac, 6);
	put32(b + 236, DHCP_MAGIC);
	*o++ = 53, *o++ = 1, *o++ = type;
	if (requested) {
		*o++ = 50, *o++ = 4, put32(o, requested), o += 4;
		*o++ = 54, *o++ = 4, put32(o, server_id), o += 4;
	}
	*o++ = 55, *o++ = 3, *o++ = 1, *o++ = 3, *o++ = 6; /* mask, router, DNS */
	*o++ = 255;
	return udp(frame, bcast, 0, 0xffffffffu, 68, 67, 300);
}

/* Wait for the DHCP reply of this type: its yiaddr; options noted. */
static uint32_t dhcp_reply(uint8_t want)
{
	for (int tries = 0; tries < 200; tries++) {
		uint32_t len = vnet_recv_wait(&net, in, sizeof(in), 50), plen;
		const uint8_t *b = len ? udp_payload(in, len, 68, &plen) : NULL;
		uint8_t type = 0;

		if (!b || plen < 240 || b[0] != 2 || get32(b + 4) != 0x6b697431 ||
		    get32(b + 236) != DHCP_MAGIC)
			continue;
		for (uint32_t i = 240; i + 2 <= plen && b[i] != 255;) {
			uint8_t code = b[i], olen = b[i + 1];

			if (code == 0) {
				i++;
				continue;
			}
			if (i + 2 + olen > plen)
				break;
			if (code == 53 && olen == 1)
				type = b[i + 2];
			else if (code == 54 && olen == 4)
				server_id = get32(b + i + 2);
			else if (code == 3 && olen >= 4)
				gw_ip = get32(b + i + 2);
			else if (code == 6 && olen >= 4)
				dns_ip = get32(b + i + 2);
			i += 2u + olen;
		}
		if (type == want)
			return get32(b + 16);
	}
	fail("no DHCP reply of type", want);
}

static void ip_str(char *s, uint32_t a)
{
	/* the kit's printf has no %u.%u juggling helpers; keep it simple */
	unsigned p[4] = {a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255}, n = 0;

	for (int i = 0; i < 4; i++) {
		unsigned v = p[i], d = v >= 100 ? 100 : v >= 10 ? 10 : 1;

		for (; d; d /= 10)
			s[n++] = (char)('0' + v / d % 10);
		s[n++] = i < 3 ? '.' : 0;
	}
}

static void dhcp(void)
{
	char a[16], r[16], d[16];
	uint32_t offered;

	send_or_fail(dhcp_msg(1, 0), "DHCPDISCOVER");
	offered = dhcp_reply(2);
	ip_str(a, offered);
	printf("virtio-net: DHCPOFFER %s\n", a);
	send_or_fail(dhcp_msg(3, offered), "DHCPREQUEST");
	my_ip = dhcp_reply(5);
	if (my_ip != offered)
		fail("DHCPACK for another address", my_ip);
	ip_str(a, my_ip);
	ip_str(r, gw_ip);
	ip_str(d, dns_ip);
	printf("virtio-net: DHCPACK lease %s router %s dns %s\n", a, r, d);
}

/* ----------------------------------------------------------------- ARP */

static void arp_gateway(void)
{
	uint8_t *a = frame + 14;

	eth(frame, bcast, ETH_P_ARP);
	put16(a, 1);
	put16(a + 2, ETH_P_IP);
	a[4] = 6;
	a[5] = 4;
	put16(a + 6, 1); /* request */
	memcpy(a + 8, net.mac, 6);
	put32(a + 14, my_ip);
	memset(a + 18, 0, 6);
	put32(a + 24, gw_ip);
	send_or_fail(42, "ARP request");
	for (int tries = 0; tries < 100; tries++) {
		uint32_t len = vnet_recv_wait(&net, in, sizeof(in), 50);

		if (len >= 42 && get16(in + 12) == ETH_P_ARP && get16(in + 20) == 2 &&
		    get32(in + 28) == gw_ip && get32(in + 38) == my_ip) {
			memcpy(gw_mac, in + 22, 6);
			printf("virtio-net: ARP gateway is %x:%x:%x:%x:%x:%x\n", gw_mac[0],
			       gw_mac[1], gw_mac[2], gw_mac[3], gw_mac[4], gw_mac[5]);
			return;
		}
	}
	fail("no ARP reply from the gateway", gw_ip);
}

/* ----------------------------------------------------------------- UDP */

static void udp_echo(uint16_t port, unsigned count)
{
	for (unsigned i = 0; i < count; i++) {
		uint8_t *p = frame + 42;
		uint32_t n = 32 + i % 64, plen;
		bool ok = false;

		for (uint32_t k = 0; k < n; k++)
			p[k] = (uint8_t)(i * 13 + k);
		send_or_fail(udp(frame, gw_mac, my_ip, gw_ip, GUEST_PORT, port, n), "UDP send");
		for (int tries = 0; tries < 100 && !ok; tries++) {
			uint32_t len = vnet_recv_wait(&net, in, sizeof(in), 50);
			const uint8_t *r = len ? udp_payload(in, len, GUEST_PORT, &plen) : NULL;

			ok = r && plen == n && !memcmp(r, p, n) && get32(in + 26) == gw_ip &&
			     get16(in + 34) == port;
		}
		if (!ok)
			fail("no UDP echo for datagram", i);
	}
	printf("virtio-net: UDP echo via 10.0.2.2:%u: %u round trips ok\n", port, count);
}

static void idle_ms(uint64_t hz, unsigned ms)
{
	uint64_t t0 = rdtsc();

	while (rdtsc() - t0 < hz / 1000 * ms)
		cpu_relax();
}

/* bench=1: count datagrams of size bytes, window in flight. */
__attribute__((noreturn)) static void bench(uint16_t port)
{
	uint32_t size = (uint32_t)kit_cmdline_uint("size", 64), plen;
	uint64_t count = kit_cmdline_uint("count", 10000), window = kit_cmdline_uint("window", 32);
	uint64_t sent = 0, got = 0, t0, t1, hz = kit_tsc_hz(), idle;

	if (size < 8 || size > 1472)
		fail("size out of 8..1472", size);
	memset(frame + 42, 0x5a, size);
	udp(frame, gw_mac, my_ip, gw_ip, GUEST_PORT, port, size);
	printf("virtio-net: bench start\n");
	idle_ms(hz, 300);
	t0 = rdtsc();
	idle = t0;
	while (got < count) {
		bool queued = false;

		while (sent < count && sent - got < window && vnet_queue(&net, frame, 42 + size)) {
			sent++;
			queued = true;
		}
		if (queued)
			vnet_kick(&net);
		uint32_t len = vnet_recv(&net, in, sizeof(in));

		if (len && udp_payload(in, len, GUEST_PORT, &plen) && plen == size) {
			got++;
			idle = rdtsc();
		} else if (rdtsc() - idle > hz) { /* a lost datagram: resend the window */
			printf("virtio-net: bench: %lu echoes missing, resending\n", sent - got);
			sent = got;
			idle = rdtsc();
		}
	}
	t1 = rdtsc();
	printf("virtio-net: bench size %u count %lu window %lu tsc %lu hz %lu\n", size, count,
	       window, t1 - t0, hz);
	idle_ms(hz, 300);
	guest_exit(0);
}

/* serve=PORT: echo what comes to PORT until the link goes down. */
__attribute__((noreturn)) static void serve(uint16_t port)
{
	unsigned served = 0;

	printf("virtio-net: serving UDP port %u\n", port);
	while (vnet_link_up(&net)) {
		uint32_t len = vnet_recv_wait(&net, in, sizeof(in), 20), plen;
		const uint8_t *p = len ? udp_payload(in, len, port, &plen) : NULL;
		uint32_t src;
		uint16_t sport;

		if (!p || plen > 1024)
			continue;
		src = get32(in + 26);
		sport = get16(in + 34);
		memcpy(frame + 42, p, plen);
		send_or_fail(udp(frame, in + 6, my_ip, src, port, sport, plen), "UDP reply");
		printf("virtio-net: served datagram %u (%u bytes)\n", ++served, plen);
	}
	printf("virtio-net: link down after %u datagrams\n", served);
	while (!vnet_link_up(&net))
		cpu_relax();
	printf("virtio-net: link up again\n");
	guest_exit(0);
}

/* A header the device must refuse: NEEDS_CSUM without VIRTIO_NET_F_CSUM. */
static void bad_header(void)
{
	static uint8_t slot[VNET_HDR_LEN + 60];
	struct virtio_net_hdr *h = (struct virtio_net_hdr *)slot;
	uint32_t len;

	h->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	h->csum_start = 34;
	h->csum_offset = 6;
	memcpy(slot + VNET_HDR_LEN, frame, 60);
	if (!vq_add(&net.tx, &(struct vq_buf){slot, sizeof(slot), false}, 1, slot))
		fail("queueing the bad header", 0);
	vq_kick(&net.tx);
	printf("virtio-net: sent a frame with a partial checksum, never negotiated\n");
	while (!vq_get_used(&net.tx, &len))
		cpu_relax();
}

/* ------------------------------------------------------- broken chains */

__attribute__((noreturn)) static void broken_chain(void)
{
	static uint8_t hdr[VNET_HDR_LEN];
	struct vring_desc *d = vq_raw_desc(&net.tx);
	uint64_t t0 = rdtsc();
	uint8_t status;

	d[0] = (struct vring_desc){(uintptr_t)hdr, sizeof(hdr), VRING_DESC_F_NEXT, 1};
	d[1] = (struct vring_desc){(uintptr_t)frame, 60, VRING_DESC_F_NEXT, 0};
	printf("virtio-net: submitting a descriptor loop 0 -> 1 -> 0 on the transmit queue\n");
	vq_raw_publish(&net.tx, 0);
	while (!((status = vdev_status(&net.dev)) & VIRTIO_CONFIG_S_NEEDS_RESET)) {
		if (rdtsc() - t0 > 30000000000ull)
			fail("no DEVICE_NEEDS_RESET within ~10 s; status", status);
		cpu_relax();
	}
	printf("virtio-net: device status %x: DEVICE_NEEDS_RESET\n", status);
	if (!vnet_reinit(&net))
		fail("re-initialisation after reset", vdev_status(&net.dev));
	arp_gateway();
	printf("virtio-net: broken chain: device recovered by reset\n");
	guest_exit(0);
}

/* ----------------------------------------------------------------- main */

__attribute__((noreturn)) static long run(void *arg)
{
	(void)arg;
	uint64_t wanted = VNET_FEATURES;
	uint16_t port = (uint16_t)kit_cmdline_uint("echo_port", 0);

	if (kit_cmdline_uint("event_idx", 0))
		wanted |= 1ull << VIRTIO_RING_F_EVENT_IDX;
	if (!vnet_open(&net, wanted))
		fail("no usable virtio-net device", 0);
	printf("virtio-net: MAC %x:%x:%x:%x:%x:%x, features %lx, queue size %u, link %s\n",
	       net.mac[0], net.mac[1], net.mac[2], net.mac[3], net.mac[4], net.mac[5],
	       net.dev.features, net.rx.size, vnet_link_up(&net) ? "up" : "down");
	if (!vnet_link_up(&net))
		fail("link down", 0);
	dhcp();
	if (kit_cmdline_uint("broken", 0))
		broken_chain();
	arp_gateway();
	if (kit_cmdline_uint("bench", 0))
		bench(port);
	if (kit_cmdline_uint("serve", 0))
		serve((uint16_t)kit_cmdline_uint("serve", 0));
	if (kit_cmdline_uint("badhdr", 0))
		bad_header();
	if (port)
		udp_echo(port, (unsigned)kit_cmdline_uint("count", 20));
	printf("virtio-net: all checks passed (%lu frames out, %lu in, %lu notifications)\n",
	       net.tx_frames, net.rx_frames, net.tx.kicks);
	guest_exit(0);
}

int guest_main(void)
{
	run_user(run, NULL);
	return 1; /* not reached */
}
