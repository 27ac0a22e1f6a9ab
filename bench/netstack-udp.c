/* netstack-udp.c — small packets: N 128-byte UDP messages, in batches,
 * from one endpoint to another, netstack channels (two stacks over the
 * in-memory pair: full Ethernet/IPv4/UDP encode, demux through the
 * channel tree, decode) against kernel UDP sockets on 127.0.0.1, in the
 * same process, one after the other. Prints packets/s, CPU per packet
 * and the CPU ratio. Usage: netstack-bench-udp [N] */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench/netstack-bench.h"

#define MSG 128
#define BATCH 64

struct result {
	const char *name;
	unsigned long got;
	struct bench_mark t;
};

static void run_netstack(unsigned long n, struct result *r)
{
	struct ns_sockaddr la = { .addr = BENCH_A, .port = 1000 }, lb = { .addr = BENCH_B, .port = 2000 };
	uint8_t msg[MSG] = { 1 }, buf[2048];
	struct bench_pair p;
	struct ns_chan *tx, *rx;
	struct bench_mark t0;
	int err;

	r->got = 0;
	bench_pair_new(&p, 1500);
	tx = ns_chan_create(p.a, NS_PROTO_UDP, &la, &lb, &err);
	bench_check(tx ? 0 : err, "ns_chan_create");
	rx = ns_chan_create(p.b, NS_PROTO_UDP, &lb, NULL, &err);
	bench_check(rx ? 0 : err, "ns_chan_create");
	ns_chan_set_queue_max(rx, 4 * BATCH);
	bench_mark(&t0);
	for (unsigned long sent = 0; sent < n; sent += BATCH) {
		for (int i = 0; i < BATCH; i++)
			bench_check(ns_chan_send(tx, msg, sizeof(msg)), "ns_chan_send");
		ns_stack_drain(p.b, BATCH);
		while (ns_chan_recv_nb(rx, buf, sizeof(buf), NULL) == MSG)
			r->got++;
	}
	bench_keep_best_since(&r->t, &t0);
	ns_chan_close(tx);
	ns_chan_close(rx);
	bench_pair_free(&p);
}

static int udp_socket(uint16_t port, struct sockaddr_in *sin)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0), big = 1 << 20;

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)sin, sizeof(*sin)) < 0) {
		perror("bench: kernel UDP socket");
		exit(1);
	}
	setsockopt(s, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	return s;
}

static void run_kernel(unsigned long n, struct result *r)
{
	struct sockaddr_in sa, sb;
	uint8_t msg[MSG] = { 1 }, buf[2048];
	struct bench_mark t0;
	int a = udp_socket(0, &sa), b = udp_socket(0, &sb);
	socklen_t len = sizeof(sb);

	r->got = 0;
	getsockname(b, (struct sockaddr *)&sb, &len);
	if (connect(a, (struct sockaddr *)&sb, sizeof(sb)) < 0) {
		perror("bench: connect");
		exit(1);
	}
	bench_mark(&t0);
	for (unsigned long sent = 0; sent < n; sent += BATCH) {
		for (int i = 0; i < BATCH; i++)
			if (send(a, msg, sizeof(msg), 0) != MSG) {
				perror("bench: send");
				exit(1);
			}
		while (recv(b, buf, sizeof(buf), MSG_DONTWAIT) == MSG)
			r->got++;
	}
	bench_keep_best_since(&r->t, &t0);
	close(a);
	close(b);
}

static void print(const struct result *r)
{
	printf("%-28s %9lu pkts  %8.3f s  %10.0f pkts/s  CPU %7.1f ns/pkt\n", r->name, r->got,
	       r->t.wall, (double)r->got / r->t.wall, r->t.cpu * 1e9 / (double)r->got);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;
	struct result ns = { .name = "netstack channels (pair)" },
		      k = { .name = "kernel UDP sockets (lo)" };

	n = (n + BATCH - 1) / BATCH * BATCH;
	for (int i = 0; i < bench_reps(); i++) {
		run_netstack(n, &ns);
		run_kernel(n, &k);
	}
	if (ns.got < n * 99 / 100 || k.got < n * 99 / 100) {
		fprintf(stderr, "bench: lost packets (netstack %lu, kernel %lu of %lu)\n", ns.got,
			k.got, n);
		return 1;
	}
	printf("%d-byte UDP messages, batches of %d, one thread, best of %d:\n", MSG, BATCH,
	       bench_reps());
	print(&ns);
	print(&k);
	printf("ratio: kernel CPU per packet / netstack = %.2f, packets/s netstack / kernel = %.2f\n",
	       (k.t.cpu / (double)k.got) / (ns.t.cpu / (double)ns.got),
	       ((double)ns.got / ns.t.wall) / ((double)k.got / k.t.wall));
	return 0;
}
