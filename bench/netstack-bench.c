/* netstack-bench.c — helpers shared by the netstack benchmarks. */
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

void bench_check(long rc, const char *what)
{
	if (rc < 0) {
		fprintf(stderr, "bench: %s: %s\n", what, strerror((int)-rc));
		exit(1);
	}
}

static struct ns_stack *stack_on(struct ns_link *l, uint32_t addr)
{
	struct ns_stack_cfg cfg = { .seed = addr };
	struct ns_stack *st = ns_stack_new(&cfg);

	if (!st) {
		fprintf(stderr, "bench: out of memory\n");
		exit(1);
	}
	bench_check(ns_iface_add(st, l, addr, 24, 0), "ns_iface_add");
	return st;
}

void bench_pair_new(struct bench_pair *p, unsigned mtu)
{
	bench_check(ns_link_pair(mtu, 0, &p->la, &p->lb), "ns_link_pair");
	p->a = stack_on(p->la, BENCH_A);
	p->b = stack_on(p->lb, BENCH_B);
	bench_check(ns_arp_add_static(p->a, BENCH_B, p->lb->mac), "ns_arp_add_static");
	bench_check(ns_arp_add_static(p->b, BENCH_A, p->la->mac), "ns_arp_add_static");
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
