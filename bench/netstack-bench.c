/* netstack-bench.c — helpers shared by the netstack benchmarks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench/netstack-bench.h"

void bench_mark(struct bench_mark *m)
{
	struct timespec ts;
	struct rusage ru;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	getrusage(RUSAGE_SELF, &ru);
	m->wall = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	m->cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		 (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void bench_since(const struct bench_mark *since, struct bench_mark *out)
{
	struct bench_mark now;

	bench_mark(&now);
	out->wall = now.wall - since->wall;
	out->cpu = now.cpu - since->cpu;
}

void bench_keep_best(struct bench_mark *best, const struct bench_mark *m)
{
	if (!best->wall || m->wall < best->wall)
		best->wall = m->wall;
	if (!best->cpu || m->cpu < best->cpu)
		best->cpu = m->cpu;
}

static int sockbuf = 256 << 10;

void bench_size_buffers(unsigned mtu)
{
	const char *e = getenv("BENCH_SOCKBUF");

	sockbuf = 8 * (int)mtu > 256 << 10 ? 8 * (int)mtu : 256 << 10;
	if (e && atoi(e) > 0)
		sockbuf = atoi(e);
}

int bench_sockbuf(void)
{
	return sockbuf;
}

void bench_keep_best_since(struct bench_mark *best, const struct bench_mark *t0)
{
	struct bench_mark t;

	bench_since(t0, &t);
	bench_keep_best(best, &t);
}

int bench_reps(void)
{
	const char *e = getenv("BENCH_REPS");
	int n = e ? atoi(e) : 3;

	return n > 0 ? n : 1;
}

void bench_check(long rc, const char *what)
{
	if (rc < 0) {
		fprintf(stderr, "bench: %s: %s\n", what, strerror((int)-rc));
		exit(1);
	}
}

static struct ns_stack *stack_on(struct ns_link *l, uint32_t addr)
{
	struct ns_stack_cfg cfg = {.seed = addr};
	struct ns_stack *st = ns_stack_new(&cfg);

	if (!st) {
		fprintf(stderr, "bench: out of memory\n");
		exit(1);
	}
	bench_check(ns_iface_add(st, l, addr, 24, 0), "ns_iface_add");
	return st;
}

bool bench_ipv6(void)
{
	const char *e = getenv("BENCH_IPV6");

	return e && *e == '1';
}

/* fd4d::N for the pair address 10.77.0.N (BENCH_IPV6=1). */
static void pair_addr6(uint32_t addr, uint8_t a6[16])
{
	memset(a6, 0, 16);
	a6[0] = 0xfd;
	a6[1] = 0x4d;
	a6[15] = (uint8_t)addr;
}

static void pair_ipv6(struct ns_stack *st, struct ns_link *l, uint32_t addr)
{
	uint8_t a6[16];

	pair_addr6(addr, a6);
	bench_check(ns_iface_ipv6(st, l, NS_IF6_NODAD), "ns_iface_ipv6");
	bench_check(ns_iface_add6(st, l, a6, 64), "ns_iface_add6");
}

void bench_pair_new(struct bench_pair *p, unsigned mtu)
{
	bench_check(ns_link_pair(mtu, 0, &p->la, &p->lb), "ns_link_pair");
	p->a = stack_on(p->la, BENCH_A);
	p->b = stack_on(p->lb, BENCH_B);
	bench_check(ns_arp_add_static(p->a, BENCH_B, p->lb->mac), "ns_arp_add_static");
	bench_check(ns_arp_add_static(p->b, BENCH_A, p->la->mac), "ns_arp_add_static");
	if (bench_ipv6()) {
		pair_ipv6(p->a, p->la, BENCH_A);
		pair_ipv6(p->b, p->lb, BENCH_B);
	}
}

void bench_pair_free(struct bench_pair *p)
{
	ns_stack_free(p->a);
	ns_stack_free(p->b);
	ns_link_destroy(p->la);
	ns_link_destroy(p->lb);
}

void bench_pair_pump(struct bench_pair *p)
{
	while (ns_stack_drain(p->a, 1024) + ns_stack_drain(p->b, 1024) > 0)
		;
	ns_stack_poll(p->a);
	ns_stack_poll(p->b);
}

void bench_tcp_push(struct ns_sock *s, uint64_t *left)
{
	static uint8_t pattern[65536];

	while (*left) {
		size_t want = *left < sizeof(pattern) ? (size_t)*left : sizeof(pattern);
		ssize_t n = ns_send(s, pattern, want, NS_MSG_DONTWAIT);

		if (n == -EAGAIN)
			return;
		bench_check(n, "ns_send");
		*left -= (uint64_t)n;
	}
}

void bench_tcp_pull(struct ns_sock *s, uint64_t *got, bool *eof)
{
	static uint8_t buf[65536];

	for (;;) {
		ssize_t n = ns_recv(s, buf, sizeof(buf), NS_MSG_DONTWAIT);

		if (n == -EAGAIN)
			return;
		bench_check(n, "ns_recv");
		if (n == 0) {
			*eof = true;
			return;
		}
		*got += (uint64_t)n;
	}
}

static struct ns_sock *stream_socket(struct ns_stack *st)
{
	int err;
	struct ns_sock *s = ns_socket(st, NS_SOCK_STREAM, &err);

	bench_check(s ? 0 : err, "ns_socket(STREAM)");
	bench_check(ns_setsockopt(s, NS_SO_NONBLOCK, 1), "NS_SO_NONBLOCK");
	bench_check(ns_setsockopt(s, NS_SO_SNDBUF, bench_sockbuf()), "NS_SO_SNDBUF");
	bench_check(ns_setsockopt(s, NS_SO_RCVBUF, bench_sockbuf()), "NS_SO_RCVBUF");
	return s;
}

struct ns_sock *bench_listen(struct ns_stack *st, uint32_t addr, uint16_t port)
{
	struct ns_sockaddr sa = {.addr = addr, .port = port};

	if (bench_ipv6() && !addr)
		sa.family = NS_AF_INET6; /* ::, dual-stack */
	struct ns_sock *s = stream_socket(st);

	bench_check(ns_bind(s, &sa), "ns_bind");
	bench_check(ns_listen(s, 8), "ns_listen");
	return s;
}

struct ns_sock *bench_connect(struct ns_stack *st, uint32_t addr, uint16_t port)
{
	struct ns_sockaddr sa = {.addr = addr, .port = port};
	struct ns_sock *s = stream_socket(st);
	int rc;

	if (bench_ipv6() && (addr == BENCH_A || addr == BENCH_B)) {
		sa.family = NS_AF_INET6;
		pair_addr6(addr, sa.addr6);
	}
	rc = ns_connect(s, &sa);

	if (rc != -EINPROGRESS)
		bench_check(rc, "ns_connect");
	return s;
}

bool bench_connected(struct ns_sock *s)
{
	int err = 0;

	if (!(ns_sock_events(s) & (NS_EV_OUT | NS_EV_ERR | NS_EV_HUP)))
		return false;
	ns_getsockopt(s, NS_SO_ERROR, &err);
	bench_check(err, "connect");
	return true;
}
