/* netstack-bulk.c — bulk TCP throughput and CPU per GB, side by side in
 * one run, each leg one thread that drives both ends:
 *   pair   netstack -> netstack over the in-memory pair link
 *   tap    netstack -> Linux and Linux -> netstack over a TAP device (needs
 *          root; skipped if not)
 *   lo     Linux -> Linux over loopback, the ceiling
 * Usage: netstack-bench-bulk [MiB] [MTU]   (default 256 MiB, MTU 1500) */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench/netstack-bench.h"

struct leg {
	const char *name;
	uint64_t bytes;
	struct bench_mark t; /* best of the runs */
	int runs;
	bool done; /* every run moved every byte */
};

/* One run of a leg ended: keep its best times; done only if every run
 * moved every byte. */
static void leg_done(struct leg *r, const struct bench_mark *t0, uint64_t total)
{
	bench_keep_best_since(&r->t, t0);
	r->done = r->bytes == total && (r->runs++ == 0 || r->done);
}

static void run_pair(uint64_t total, unsigned mtu, struct leg *r)
{
	struct bench_pair p;
	struct ns_sock *l, *c, *s = NULL;
	struct bench_mark t0;
	uint64_t left = total;
	bool eof = false;
	int err;

	r->bytes = 0;
	bench_pair_new(&p, mtu);
	l = bench_listen(p.b, 0, 5001);
	bench_mark(&t0);
	c = bench_connect(p.a, BENCH_B, 5001);
	while (!s) {
		bench_pair_pump(&p);
		s = ns_accept(l, NULL, &err);
	}
	while (!bench_connected(c))
		bench_pair_pump(&p);
	while (r->bytes < total) {
		bench_tcp_push(c, &left);
		bench_pair_pump(&p);
		bench_tcp_pull(s, &r->bytes, &eof);
		if (eof)
			break;
	}
	leg_done(r, &t0, total);
	ns_abort(c);
	ns_abort(s);
	ns_close(l);
	bench_pair_free(&p);
}

static int kernel_listener(uint32_t addr, uint16_t *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(addr) };
	socklen_t len = sizeof(sin);
	int one = 1, s = socket(AF_INET, SOCK_STREAM, 0);

	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (s < 0 || bind(s, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(s, 4) < 0) {
		perror("bench: kernel listener");
		exit(1);
	}
	getsockname(s, (struct sockaddr *)&sin, &len);
	*port = ntohs(sin.sin_port);
	return s;
}

/* Read what is readable; false at EOF. */
static bool kernel_pull(int s, uint64_t *got)
{
	static char buf[1 << 18];

	for (;;) {
		ssize_t n = recv(s, buf, sizeof(buf), MSG_DONTWAIT);

		if (n > 0) {
			*got += (uint64_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return true;
		if (n < 0)
			perror("bench: recv");
		return false;
	}
}

static void run_loopback(uint64_t total, struct leg *r)
{
	static char chunk[1 << 16];
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct bench_mark t0;
	uint64_t left = total;
	uint16_t port;
	int l = kernel_listener(INADDR_LOOPBACK, &port), c, s, bufsz = bench_sockbuf();

	r->bytes = 0;
	sin.sin_port = htons(port);
	bench_mark(&t0);
	c = socket(AF_INET, SOCK_STREAM, 0);
	/* The same buffer sizes the netstack sockets get. */
	setsockopt(c, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
	setsockopt(l, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz));
	if (connect(c, (struct sockaddr *)&sin, sizeof(sin)) < 0 || (s = accept(l, NULL, NULL)) < 0) {
		perror("bench: loopback connect");
		exit(1);
	}
	fcntl(c, F_SETFL, O_NONBLOCK);
	while (r->bytes < total) {
		while (left) {
			ssize_t n = send(c, chunk, left < sizeof(chunk) ? left : sizeof(chunk),
					 MSG_DONTWAIT);

			if (n <= 0)
				break;
			left -= (uint64_t)n;
		}
		if (!kernel_pull(s, &r->bytes))
			break;
	}
	leg_done(r, &t0, total);
	close(c);
	close(s);
	close(l);
}

#define TAP_LINUX 0x0ad50001u /* 10.213.0.1 */
#define TAP_NS 0x0ad50002u    /* 10.213.0.2 */

/* The kernel side of the TAP: 10.213.0.1/24, up, same MTU. */
static int configure_tap(const char *dev, unsigned mtu)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "ip link set %s mtu %u up && ip addr add 10.213.0.1/24 dev %s",
		 dev, mtu, dev);
	return system(cmd);
}

/* A TAP with netstack on one side (TAP_NS) and the kernel (TAP_LINUX) on
 * the other; false (and a "skipped" line) when that cannot be had. */
static bool tap_up(struct leg *r, unsigned mtu, struct ns_link **tap, struct ns_stack **st)
{
	int err;

	r->bytes = 0;
	*tap = ns_link_tap_open("", mtu, &err);
	if (!*tap) {
		printf("%-30s skipped: cannot open a TAP device: %s\n", r->name, strerror(-err));
		return false;
	}
	if (configure_tap((*tap)->name, mtu)) {
		printf("%-30s skipped: cannot configure %s\n", r->name, (*tap)->name);
		ns_link_destroy(*tap);
		return false;
	}
	*st = ns_stack_new(NULL);
	bench_check(ns_iface_add(*st, *tap, TAP_NS, 24, 0), "ns_iface_add");
	return true;
}

/* Wait for the TAP or a kernel socket, then let the stack take frames in. */
static void tap_wait(struct ns_link *tap, struct ns_stack *st, int fd, short events)
{
	struct pollfd pfd[2] = { { .fd = ns_link_fd(tap), .events = POLLIN },
				 { .fd = fd, .events = events } };
	int wait = ns_stack_timeout_ms(st);

	poll(pfd, 2, wait < 0 || wait > 10 ? 10 : wait);
	ns_stack_drain(st, 512);
	ns_stack_poll(st);
}

/* netstack sends, a kernel socket on the TAP's host side receives. */
static void run_tap_out(uint64_t total, unsigned mtu, struct leg *r)
{
	struct ns_link *tap;
	struct ns_stack *st;
	struct ns_sock *c;
	struct bench_mark t0;
	uint64_t left = total;
	uint16_t port;
	int l, s = -1;

	if (!tap_up(r, mtu, &tap, &st))
		return;
	l = kernel_listener(TAP_LINUX, &port);
	fcntl(l, F_SETFL, O_NONBLOCK);
	bench_mark(&t0);
	c = bench_connect(st, TAP_LINUX, port);
	while (r->bytes < total) {
		if (s < 0 && (s = accept(l, NULL, NULL)) >= 0)
			fcntl(s, F_SETFL, O_NONBLOCK);
		if (s >= 0 && bench_connected(c))
			bench_tcp_push(c, &left);
		if (s >= 0 && !kernel_pull(s, &r->bytes))
			break;
		tap_wait(tap, st, s >= 0 ? s : l, POLLIN);
	}
	leg_done(r, &t0, total);
	ns_abort(c);
	close(s);
	close(l);
	ns_stack_free(st);
	ns_link_destroy(tap);
}

/* A kernel socket sends from the TAP's host side, netstack receives. */
static void run_tap_in(uint64_t total, unsigned mtu, struct leg *r)
{
	static char chunk[1 << 16];
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(TAP_NS),
				   .sin_port = htons(5003) };
	struct ns_link *tap;
	struct ns_stack *st;
	struct ns_sock *l, *s = NULL;
	struct bench_mark t0;
	uint64_t left = total;
	bool eof = false;
	int c, err, bufsz = bench_sockbuf();

	if (!tap_up(r, mtu, &tap, &st))
		return;
	l = bench_listen(st, 0, 5003);
	bench_mark(&t0);
	c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	setsockopt(c, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
	if (connect(c, (struct sockaddr *)&sin, sizeof(sin)) < 0 && errno != EINPROGRESS) {
		perror("bench: connect over the TAP");
		exit(1);
	}
	while (r->bytes < total && !eof) {
		if (!s && (s = ns_accept(l, NULL, &err)))
			ns_setsockopt(s, NS_SO_NONBLOCK, 1);
		while (s && left) {
			ssize_t n = send(c, chunk, left < sizeof(chunk) ? left : sizeof(chunk),
					 MSG_DONTWAIT);

			if (n <= 0)
				break;
			left -= (uint64_t)n;
		}
		if (s)
			bench_tcp_pull(s, &r->bytes, &eof);
		tap_wait(tap, st, c, left ? POLLOUT : 0);
	}
	leg_done(r, &t0, total);
	close(c);
	if (s)
		ns_abort(s);
	ns_close(l);
	ns_stack_free(st);
	ns_link_destroy(tap);
}

static void print(const struct leg *r, const struct leg *ceiling)
{
	double mbs = (double)r->bytes / r->t.wall / 1e6, gb = (double)r->bytes / 1e9;

	if (!r->t.wall)
		return;
	printf("%-30s %s %6.0f MB in %6.2f s  %8.1f MB/s  CPU %6.2f s/GB", r->name,
	       r->done ? "ok  " : "FAIL", (double)r->bytes / 1e6, r->t.wall, mbs, r->t.cpu / gb);
	if (ceiling && ceiling->t.wall)
		printf("  throughput %.2f, CPU/GB %.2f x loopback",
		       mbs / ((double)ceiling->bytes / ceiling->t.wall / 1e6),
		       (r->t.cpu / gb) / (ceiling->t.cpu / ((double)ceiling->bytes / 1e9)));
	printf("\n");
}

int main(int argc, char **argv)
{
	uint64_t total = (argc > 1 ? strtoull(argv[1], NULL, 0) : 256) << 20;
	unsigned mtu = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 1500;
	struct leg pair = { .name = "netstack <-> netstack (pair)" },
		   tap = { .name = "netstack  -> Linux (TAP)" },
		   tap_in = { .name = "Linux     -> netstack (TAP)" },
		   lo = { .name = "Linux     -> Linux (loopback)" };

	bench_size_buffers(mtu);
	printf("bulk TCP, %llu MiB one way, link MTU %u (loopback: its own), %d KiB socket "
	       "buffers, one thread per leg, best of %d\n",
	       (unsigned long long)(total >> 20), mtu, bench_sockbuf() >> 10, bench_reps());
	if (geteuid() != 0)
		printf("%-30s skipped: needs root\n", tap.name);
	for (int i = 0; i < bench_reps(); i++) {
		run_pair(total, mtu, &pair);
		if (geteuid() == 0) {
			run_tap_out(total, mtu, &tap);
			run_tap_in(total, mtu, &tap_in);
		}
		run_loopback(total, &lo);
	}
	print(&pair, &lo);
	print(&tap, &lo);
	print(&tap_in, &lo);
	print(&lo, NULL);
	if (pair.t.wall && tap.t.wall)
		printf("ratio: pair / TAP throughput = %.2f\n",
		       ((double)pair.bytes / pair.t.wall) / ((double)tap.bytes / tap.t.wall));
	return pair.done && lo.done && (!tap.t.wall || tap.done) && (!tap_in.t.wall || tap_in.done)
		       ? 0
		       : 1;
}
