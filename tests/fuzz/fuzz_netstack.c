/* fuzz_netstack.c — Ethernet frames into one persistent netstack, entering
 * at the link as a NIC's frames do: ARP, IPv4 (options, fragments and
 * reassembly), ICMP, UDP to a bound channel, TCP to a listener whose
 * connections are accepted, read, written and closed, and IPv6 with ND,
 * extension headers and ICMPv6. The stack lives across inputs so state
 * (ARP and ND caches, fragment queues, connections) accumulates; the
 * virtual clock advances per frame so timers fire. Input: records
 * (fuzz.h), one frame each. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/netstack.h"
#include "tests/fuzz/fuzz.h"

enum { UDP_PORT = 7777, TCP_PORT = 80, MAX_ACCEPTED = 8 };

static struct ns_clock *clk;
static struct ns_stack *st;
static struct ns_link *link;
static struct ns_chan *udp, *udp6;
static struct ns_sock *listener;
static struct ns_sock *accepted[MAX_ACCEPTED];
static uint8_t scratch[NS_FRAME_BUF];

static int discard_transmit(struct ns_link *l, const void *frame, size_t len)
{
	return 0;
}

static const struct ns_link_ops ops = {.transmit = discard_transmit};

static void setup(void)
{
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 1}, peer_mac[6] = {0x02, 0, 0, 0, 0, 2};
	struct ns_stack_cfg cfg = {.seed = 1, .reass_mem_max = 256 * 1024, .tcp_max_conns = 64};
	struct ns_sockaddr any = {.port = UDP_PORT},
			   any6 = {.port = UDP_PORT, .family = NS_AF_INET6};
	struct ns_sockaddr tcp = {.port = TCP_PORT, .family = NS_AF_INET6};
	uint32_t local, peer;
	uint8_t local6[16] = {0xfd, 0, [15] = 1};
	int err;

	clk = ns_clock_virtual_new(1000000);
	cfg.clock = clk;
	st = ns_stack_new(&cfg);
	link = ns_link_new(&ops, NULL, 1500, mac, "fuzz0");
	ns_parse_addr("10.0.0.1", &local);
	ns_parse_addr("10.0.0.2", &peer);
	ns_iface_add(st, link, local, 24, 0);
	ns_arp_add_static(st, peer, peer_mac);
	ns_iface_ipv6(st, link, NS_IF6_NODAD);
	ns_iface_add6(st, link, local6, 64);
	udp = ns_chan_create(st, NS_PROTO_UDP, &any, NULL, &err);
	udp6 = ns_chan_create(st, NS_PROTO_UDP, &any6, NULL, &err);
	ns_chan_set_queue_max(udp, 4);
	ns_chan_set_queue_max(udp6, 4);
	listener = ns_socket(st, NS_SOCK_STREAM, &err);
	ns_setsockopt(listener, NS_SO_NONBLOCK, 1);
	ns_bind(listener, &tcp);
	ns_listen(listener, 4);
}

/* What an application does with the sockets: empties the queues so the
 * stack's receive paths and windows keep moving. */
static void serve(void)
{
	struct ns_sockaddr peer;
	int err;

	while (ns_chan_recv_nb(udp, scratch, sizeof(scratch), NULL) >= 0)
		;
	while (ns_chan_recv_nb(udp6, scratch, sizeof(scratch), NULL) >= 0)
		;
	for (unsigned i = 0; i < MAX_ACCEPTED; i++) {
		if (!accepted[i]) {
			accepted[i] = ns_accept(listener, &peer, &err);
			if (accepted[i])
				ns_setsockopt(accepted[i], NS_SO_NONBLOCK, 1);
			continue;
		}
		ssize_t n = ns_recv(accepted[i], scratch, sizeof(scratch), NS_MSG_DONTWAIT);

		if (n > 0)
			ns_send(accepted[i], scratch, (size_t)n, NS_MSG_DONTWAIT);
		if (n == 0 || (n < 0 && n != -EAGAIN)) {
			ns_close(accepted[i]);
			accepted[i] = NULL;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *frame;
	size_t len;

	if (!st)
		setup();
	while (fuzz_next_record(&data, &size, &frame, &len)) {
		ns_stack_input(st, link, frame, len);
		ns_clock_advance(clk, 50000);
		ns_stack_poll(st);
		serve();
	}
	return 0;
}
