/* netstack-bench.h — what the netstack benchmarks (bench/netstack-*.c)
 * share: wall and CPU clocks, and two stacks joined by an in-memory pair. */
#ifndef NETSTACK_BENCH_H
#define NETSTACK_BENCH_H

#include <stdbool.h>

#include "netstack/netstack.h"

/* A point in time: wall seconds and process CPU seconds (user + system,
 * all threads). */
struct bench_mark {
	double wall, cpu;
};
void bench_mark(struct bench_mark *m);
/* Elapsed since *since into *out (wall and CPU). */
void bench_since(const struct bench_mark *since, struct bench_mark *out);
/* Keep the smaller wall and the smaller CPU time of repeated runs (the
 * hosts are shared: the least disturbed run is the nearest to the truth);
 * an all-zero *best takes *m. */
void bench_keep_best(struct bench_mark *best, const struct bench_mark *m);
/* bench_keep_best() of the time elapsed since *t0. */
void bench_keep_best_since(struct bench_mark *best, const struct bench_mark *t0);
/* Repetitions per side: $BENCH_REPS, default 3. */
int bench_reps(void);
/* Stream socket buffers (send and receive, netstack and kernel alike) for
 * a link MTU: 8 segments, at least netstack's default 256 KiB;
 * $BENCH_SOCKBUF overrides. bench_sockbuf() is the current size. */
void bench_size_buffers(unsigned mtu);
int bench_sockbuf(void);

/* Two stacks, 10.77.0.1 (a) and 10.77.0.2 (b), on the two ends of a pair
 * link with the given MTU, ARP entries static. Exits on failure. */
struct bench_pair {
	struct ns_stack *a, *b;
	struct ns_link *la, *lb;
};
#define BENCH_A 0x0a4d0001u
#define BENCH_B 0x0a4d0002u
void bench_pair_new(struct bench_pair *p, unsigned mtu);
/* BENCH_IPV6=1: the pair also speaks IPv6 (fd4d::1, fd4d::2), connections
 * to the pair addresses go over it, listeners on any are dual-stack. */
bool bench_ipv6(void);
void bench_pair_free(struct bench_pair *p);
/* Move every frame queued on either end into its stack, run timers. */
void bench_pair_pump(struct bench_pair *p);

/* TCP over netstack, non-blocking: send from a pattern while *left > 0
 * (bytes accepted are subtracted), and receive everything readable
 * (bytes added to *got; *eof set at the peer's FIN). Exit on errors. */
void bench_tcp_push(struct ns_sock *s, uint64_t *left);
void bench_tcp_pull(struct ns_sock *s, uint64_t *got, bool *eof);
/* A non-blocking stream socket of st listening on port (addr 0: any). */
struct ns_sock *bench_listen(struct ns_stack *st, uint32_t addr, uint16_t port);
/* A non-blocking stream socket of st connecting to addr:port
 * (-EINPROGRESS is not an error). */
struct ns_sock *bench_connect(struct ns_stack *st, uint32_t addr, uint16_t port);
/* True once a non-blocking connect finished; exits when it failed. */
bool bench_connected(struct ns_sock *s);

/* Exit with a one-line message when rc < 0. */
void bench_check(long rc, const char *what);

#endif /* NETSTACK_BENCH_H */
