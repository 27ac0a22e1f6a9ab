/* netstack-slirp.c — netstack against libslirp as the thing that
 * terminates a guest's TCP and relays it to a host socket.
 *
 * One frame-level harness: a "guest" netstack (10.0.2.15) on one end of
 * an in-memory pair link sends N bytes over TCP to 10.0.2.2:PORT. The
 * pair's other end is read by the harness and fed either to libslirp
 * (slirp_input; its send_packet callback transmits back towards the
 * guest), or to a netstack "gateway" stack whose interface accepts any
 * destination (NS_IF_ACCEPT_ANY), whose wildcard listener accepts the
 * guest's connection and which relays the bytes to a kernel socket. In
 * both cases the bytes end in a TCP sink on 127.0.0.1:PORT read by the
 * same thread. Prints throughput and CPU for both and the ratio.
 * Usage: netstack-bench-slirp [MiB] [MTU...]   (default 64 MiB, 1500 65521) */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libslirp.h>

#include "bench/netstack-bench.h"

#define GUEST 0x0a00020fu /* 10.0.2.15 */
#define GATEWAY 0x0a000202u /* 10.0.2.2 */
#define MAX_FDS 64

/* The guest, the host-side TCP sink, and what the run measured. */
struct harness {
	struct ns_link *guest_link, *wire; /* pair ends: guest's, gateway's */
	struct ns_stack *guest;
	struct ns_sock *gsock;
	uint64_t total, left, got;
	int sink_l, sink; /* kernel listener, accepted connection */
	uint16_t port;
	uint8_t frame[NS_FRAME_BUF];
	struct pollfd pfd[MAX_FDS];
	int npfd;
	double component_cpu; /* thread CPU seconds inside the gateway's calls */
	double send_cpu;      /* of which the relay's send()s to the sink */
	double guest_cpu;     /* in the guest stack (the sender, both sides) */
	double sink_cpu;      /* in the sink's accept() and recv()s */
};

/* Component timing is on only in separate runs: each read of the thread
 * CPU clock is a system call (~0.2 us), which would slow the throughput
 * runs. */
static bool timing;
static uint64_t clock_reads;

/* This thread's CPU seconds (user + system), 0 when not timing. The
 * harness is one thread, so the gateway's own cost is the sum of this
 * clock's deltas around the calls into it. */
static double thread_cpu(void)
{
	struct timespec ts;

	if (!timing)
		return 0;
	clock_reads++;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What one read of the clock costs, for the figures' error bound. */
static double clock_read_cost(void)
{
	bool was = timing;
	double t0, t1;

	timing = true;
	t0 = thread_cpu();
	for (int i = 0; i < 100000; i++)
		thread_cpu();
	t1 = thread_cpu();
	timing = was;
	return (t1 - t0) / 100001;
}

static void harness_new(struct harness *h, unsigned mtu, uint64_t total)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	struct ns_stack_cfg cfg = { .seed = 1 };
	int one = 1;

	memset(h, 0, sizeof(*h));
	bench_check(ns_link_pair(mtu, 0, &h->guest_link, &h->wire), "ns_link_pair");
	h->guest = ns_stack_new(&cfg);
	bench_check(ns_iface_add(h->guest, h->guest_link, GUEST, 24, 0), "ns_iface_add");
	bench_check(ns_route_add(h->guest, 0, 0, GATEWAY, h->guest_link), "ns_route_add");
	h->total = h->left = total;
	h->sink = -1;
	h->sink_l = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(h->sink_l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(h->sink_l, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(h->sink_l, 4) < 0) {
		perror("bench: sink");
		exit(1);
	}
	getsockname(h->sink_l, (struct sockaddr *)&sin, &len);
	h->port = ntohs(sin.sin_port);
	fcntl(h->sink_l, F_SETFL, O_NONBLOCK);
}

static void harness_free(struct harness *h)
{
	if (h->gsock)
		ns_abort(h->gsock);
	ns_stack_free(h->guest);
	ns_link_destroy(h->guest_link);
	ns_link_destroy(h->wire);
	if (h->sink >= 0)
		close(h->sink);
	close(h->sink_l);
}

/* The guest's side of one round: take ACKs in, then connect once or send
 * into the room they made. True when anything moved. */
static bool guest_step(struct harness *h)
{
	uint64_t left = h->left;
	double c0 = thread_cpu();
	int frames = ns_stack_drain(h->guest, 1024);

	ns_stack_poll(h->guest);
	if (!h->gsock)
		h->gsock = bench_connect(h->guest, GATEWAY, h->port);
	else if (bench_connected(h->gsock))
		bench_tcp_push(h->gsock, &h->left);
	h->guest_cpu += thread_cpu() - c0;
	return frames > 0 || h->left != left;
}

/* How long a round may sleep: nothing when work moved, else until the
 * earliest of the guest's timers, the gateway's and 10 ms. */
static int round_sleep_ms(struct harness *h, bool moved, int gateway_ms)
{
	int g = ns_stack_timeout_ms(h->guest), t = 10;

	if (moved)
		return 0;
	if (g >= 0 && g < t)
		t = g;
	if (gateway_ms >= 0 && gateway_ms < t)
		t = gateway_ms;
	return t;
}

/* The sink's side: accept once, count what arrives; true when it did. */
static bool sink_step(struct harness *h)
{
	static char buf[1 << 18];
	uint64_t got = h->got;
	double c0 = thread_cpu();
	ssize_t n;

	if (h->sink < 0) {
		h->sink = accept(h->sink_l, NULL, NULL);
		if (h->sink >= 0)
			fcntl(h->sink, F_SETFL, O_NONBLOCK);
		h->sink_cpu += thread_cpu() - c0;
		return h->sink >= 0;
	}
	while ((n = recv(h->sink, buf, sizeof(buf), 0)) > 0)
		h->got += (uint64_t)n;
	h->sink_cpu += thread_cpu() - c0;
	return h->got != got;
}

static int add_pfd(struct harness *h, int fd, short events)
{
	if (h->npfd == MAX_FDS) {
		fprintf(stderr, "bench: too many fds\n");
		exit(1);
	}
	h->pfd[h->npfd] = (struct pollfd){ .fd = fd, .events = events };
	return h->npfd++;
}

static void add_common_fds(struct harness *h)
{
	add_pfd(h, h->sink >= 0 ? h->sink : h->sink_l, POLLIN);
	add_pfd(h, ns_link_fd(h->wire), POLLIN);
	add_pfd(h, ns_link_fd(h->guest_link), POLLIN);
}

/* ------------------------------------------------------------- libslirp */

static ssize_t slirp_send_packet(const void *buf, size_t len, void *opaque)
{
	struct harness *h = opaque;

	ns_link_transmit(h->wire, buf, len);
	return (ssize_t)len;
}

static void slirp_guest_error(const char *msg, void *opaque)
{
	fprintf(stderr, "bench: libslirp: %s\n", msg);
}

static int64_t slirp_clock_ns(void *opaque)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* libslirp's only timer is IPv6 router advertisement, off here. */
static void *slirp_timer_new(SlirpTimerCb cb, void *cb_opaque, void *opaque)
{
	static int dummy;

	return &dummy;
}

static void slirp_timer_free(void *t, void *opaque)
{
}

static void slirp_timer_mod(void *t, int64_t when, void *opaque)
{
}

static void slirp_fd_nop(int fd, void *opaque)
{
}

static void slirp_notify(void *opaque)
{
}

static int slirp_add_poll(int fd, int events, void *opaque)
{
	short ev = (short)((events & SLIRP_POLL_IN ? POLLIN : 0) |
			   (events & SLIRP_POLL_OUT ? POLLOUT : 0) |
			   (events & SLIRP_POLL_PRI ? POLLPRI : 0));

	return add_pfd(opaque, fd, ev);
}

static int slirp_revents(int idx, void *opaque)
{
	struct harness *h = opaque;
	short re = idx >= 0 && idx < h->npfd ? h->pfd[idx].revents : 0;

	return (re & POLLIN ? SLIRP_POLL_IN : 0) | (re & POLLOUT ? SLIRP_POLL_OUT : 0) |
	       (re & POLLPRI ? SLIRP_POLL_PRI : 0) | (re & POLLERR ? SLIRP_POLL_ERR : 0) |
	       (re & POLLHUP ? SLIRP_POLL_HUP : 0);
}

static const SlirpCb slirp_cbs = {
	.send_packet = slirp_send_packet,
	.guest_error = slirp_guest_error,
	.clock_get_ns = slirp_clock_ns,
	.timer_new = slirp_timer_new,
	.timer_free = slirp_timer_free,
	.timer_mod = slirp_timer_mod,
	.register_poll_fd = slirp_fd_nop,
	.unregister_poll_fd = slirp_fd_nop,
	.notify = slirp_notify,
};

static Slirp *slirp_start(struct harness *h, unsigned mtu)
{
	SlirpConfig cfg = {
		.version = 1,
		.in_enabled = true,
		.vnetwork.s_addr = htonl(0x0a000200),
		.vnetmask.s_addr = htonl(0xffffff00),
		.vhost.s_addr = htonl(GATEWAY),
		.vdhcp_start.s_addr = htonl(0x0a00020f),
		.vnameserver.s_addr = htonl(0x0a000203),
		.if_mtu = mtu,
		.if_mru = mtu,
	};
	Slirp *s = slirp_new(&cfg, &slirp_cbs, h);

	if (!s) {
		fprintf(stderr, "bench: slirp_new failed (MTU %u)\n", mtu);
		exit(1);
	}
	return s;
}

/* libslirp does its socket I/O in slirp_pollfds_poll(), so it polls
 * every round (without sleeping while work moves). */
static void slirp_round(struct harness *h, Slirp *slirp)
{
	uint32_t timeout = 10;
	bool moved = guest_step(h);
	double c0 = thread_cpu(), c1;
	ssize_t n;

	while ((n = ns_link_receive(h->wire, h->frame, sizeof(h->frame))) > 0) {
		slirp_input(slirp, h->frame, (int)n);
		moved = true;
	}
	h->npfd = 0;
	add_common_fds(h);
	slirp_pollfds_fill(slirp, &timeout, slirp_add_poll, h);
	c1 = thread_cpu();
	poll(h->pfd, (nfds_t)h->npfd, round_sleep_ms(h, moved, (int)timeout));
	c0 += thread_cpu() - c1; /* the harness's poll() is not libslirp's */
	slirp_pollfds_poll(slirp, 0, slirp_revents, h);
	h->component_cpu += thread_cpu() - c0;
	sink_step(h);
}

/* -------------------------------------------------- netstack as gateway */

struct relay {
	struct harness *h;
	struct ns_stack *gw;
	struct ns_sock *l, *s;
	int out;      /* kernel socket to the sink */
	bool blocked; /* the sink socket was full: wait for POLLOUT */
};

/* Direct delivery (ns_sock_set_reader), only with BENCH_DIRECT_MIN=bytes:
 * in-order guest segments of at least that size go straight from the
 * received frame to the sink socket, inside the gateway's input; what
 * send() does not take stays in the receive ring. Off by default: one
 * send() per segment costs more than the copy it saves (README). */
static size_t direct_min;

static size_t relay_direct(void *ctx, const void *data, size_t len)
{
	struct relay *r = ctx;
	double c0;
	ssize_t n;

	if (len < direct_min)
		return 0;
	c0 = thread_cpu();
	n = send(r->out, data, len, MSG_DONTWAIT);

	r->h->send_cpu += thread_cpu() - c0;
	if (n < (ssize_t)len)
		r->blocked = true;
	return n > 0 ? (size_t)n : 0;
}

/* ceiling: the gateway trusts the frames (no checksum verification) */
static void relay_start(struct harness *h, struct relay *r, bool ceiling)
{
	struct ns_stack_cfg cfg = { .seed = 2 };
	unsigned flags = NS_IF_ACCEPT_ANY | (ceiling ? NS_IF_NO_CSUM_RX : 0);

	memset(r, 0, sizeof(*r));
	r->h = h;
	r->out = -1;
	r->gw = ns_stack_new(&cfg);
	bench_check(ns_iface_add(r->gw, h->wire, GATEWAY, 24, flags), "ns_iface_add");
	r->l = bench_listen(r->gw, 0, 0);
}

static void relay_connect_host(struct harness *h, struct relay *r)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				   .sin_port = htons(h->port) };
	int err;

	r->s = ns_accept(r->l, NULL, &err);
	if (!r->s)
		return;
	ns_setsockopt(r->s, NS_SO_NONBLOCK, 1);
	r->out = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(r->out, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		perror("bench: relay connect");
		exit(1);
	}
	fcntl(r->out, F_SETFL, O_NONBLOCK);
	if (direct_min)
		bench_check(ns_sock_set_reader(r->s, relay_direct, r), "ns_sock_set_reader");
}

/* What direct delivery left in the receive ring -> the sink, written in
 * place (ns_recv_peek / ns_recv_consume, no copy out of the ring); true
 * when bytes moved. */
static bool relay_move(struct harness *h, struct relay *r)
{
	bool moved = false;

	r->blocked = false;
	for (;;) {
		struct ns_iov iov[2];
		struct iovec v[2];
		struct msghdr m = { .msg_iov = v, .msg_iovlen = 2 };
		ssize_t n = ns_recv_peek(r->s, iov);
		double c0;

		if (n <= 0)
			return moved;
		for (int i = 0; i < 2; i++)
			v[i] = (struct iovec){ (void *)iov[i].base, iov[i].len };
		c0 = thread_cpu();
		n = sendmsg(r->out, &m, MSG_DONTWAIT);
		h->send_cpu += thread_cpu() - c0;
		if (n <= 0) {
			r->blocked = true;
			return moved;
		}
		bench_check(ns_recv_consume(r->s, (size_t)n), "ns_recv_consume");
		moved = true;
	}
}

static void relay_round(struct harness *h, struct relay *r)
{
	bool moved = guest_step(h);
	double c0 = thread_cpu();

	moved |= ns_stack_drain(r->gw, 1024) > 0;
	ns_stack_poll(r->gw);
	if (!r->s)
		relay_connect_host(h, r);
	if (r->s)
		moved |= relay_move(h, r);
	h->component_cpu += thread_cpu() - c0;
	moved |= sink_step(h);
	if (h->got >= h->total)
		return;
	h->npfd = 0;
	add_common_fds(h);
	if (r->out >= 0 && r->blocked)
		add_pfd(h, r->out, POLLOUT);
	poll(h->pfd, (nfds_t)h->npfd, round_sleep_ms(h, moved, ns_stack_timeout_ms(r->gw)));
}

static void relay_stop(struct relay *r)
{
	if (r->s)
		ns_abort(r->s);
	ns_close(r->l);
	if (r->out >= 0)
		close(r->out);
	ns_stack_free(r->gw);
}

/* ------------------------------------------------------------------ run */

struct result {
	uint64_t bytes;
	struct bench_mark t;
	double component_cpu; /* best over the timed runs, seconds */
	double send_cpu;      /* the relay's send()s in that run */
	double guest_cpu, sink_cpu; /* the guest's and the sink's in that run */
	uint64_t clock_reads; /* in that run */
};

/* The three terminating components a run can use. */
enum side { SIDE_SLIRP, SIDE_NETSTACK, SIDE_CEILING };
static const char *const side_name[] = { "libslirp", "netstack", "ceiling" };

static void run(enum side side, unsigned mtu, uint64_t total, struct result *res)
{
	struct harness *h = malloc(sizeof(*h));
	struct relay *r = malloc(sizeof(*r));
	struct bench_mark t0, t;
	Slirp *slirp = NULL;

	clock_reads = 0;
	harness_new(h, mtu, total);
	if (side == SIDE_SLIRP)
		slirp = slirp_start(h, mtu);
	else
		relay_start(h, r, side == SIDE_CEILING);
	bench_mark(&t0);
	while (h->got < total) {
		if (slirp)
			slirp_round(h, slirp);
		else
			relay_round(h, r);
		bench_since(&t0, &t);
		if (t.wall > 120) {
			fprintf(stderr, "bench: %s at MTU %u stalled at %llu bytes\n", side_name[side],
				mtu, (unsigned long long)h->got);
			exit(1);
		}
	}
	res->bytes = h->got;
	if (!timing) {
		bench_keep_best(&res->t, &t);
	} else if (!res->component_cpu || h->component_cpu < res->component_cpu) {
		res->component_cpu = h->component_cpu;
		res->send_cpu = h->send_cpu;
		res->guest_cpu = h->guest_cpu;
		res->sink_cpu = h->sink_cpu;
		res->clock_reads = clock_reads;
	}
	if (slirp)
		slirp_cleanup(slirp);
	else
		relay_stop(r);
	harness_free(h);
	free(h);
	free(r);
}

static void print(const char *name, unsigned mtu, const struct result *r)
{
	printf("  %-9s MTU %5u  %5.0f MB in %6.2f s  %8.1f MB/s  CPU %6.2f s/GB\n", name, mtu,
	       (double)r->bytes / 1e6, r->t.wall, (double)r->bytes / r->t.wall / 1e6,
	       r->t.cpu / ((double)r->bytes / 1e9));
}

static double per_gb(double x, const struct result *r)
{
	return x / ((double)r->bytes / 1e9);
}

/* The component's CPU per GB for both sides and its ratio, with the
 * clock reads' own cost as the error bound. */
static void print_component(unsigned mtu, const struct result *s, const struct result *n)
{
	double clk = clock_read_cost();

	printf("  component at MTU %u (thread CPU inside libslirp's calls / the netstack "
	       "gateway's and the relay's; guest, sink and poll() left out): "
	       "libslirp %.3f s/GB, netstack %.3f s/GB (%.3f of it the relay's send() "
	       "to the sink), libslirp / netstack = %.2f; clock reads add <= %.3f / %.3f s/GB\n",
	       mtu, per_gb(s->component_cpu, s), per_gb(n->component_cpu, n),
	       per_gb(n->send_cpu, n), per_gb(s->component_cpu, s) / per_gb(n->component_cpu, n),
	       per_gb(clk * (double)s->clock_reads, s), per_gb(clk * (double)n->clock_reads, n));
}

/* BENCH_REPS alternating runs of each side; BENCH_ONLY=netstack|libslirp|
 * ceiling runs one (profiling). */
static void run_sides(unsigned mtu, uint64_t total, const char *only, struct result res[3])
{
	for (int r = 0; r < bench_reps(); r++)
		for (int i = 0; i < 3; i++)
			if (!only || !strcmp(only, side_name[i]))
				run((enum side)i, mtu, total, &res[i]);
}

static double throughput(const struct result *r)
{
	return (double)r->bytes / r->t.wall;
}

/* The most any terminating gateway could gain over libslirp here, two
 * ways. Measured: the ceiling side is the netstack gateway doing the
 * least a terminating gateway can (it trusts the frames: no checksum;
 * in-order payload straight from the frame to send(); cumulative ACKs).
 * Derived: what libslirp's run costs with its component replaced by
 * nothing but the netstack relay's send()s to the sink (the guest, the
 * sink and the harness stay). */
static void print_bound(unsigned mtu, const struct result res[3])
{
	const struct result *s = &res[SIDE_SLIRP], *n = &res[SIDE_NETSTACK];
	double total = per_gb(s->t.cpu, s), comp = per_gb(s->component_cpu, s);
	double shared = total - comp, send = per_gb(n->send_cpu, n);

	printf("largest ratio any gateway could reach here, MTU %u: measured (ceiling side) "
	       "%.2f; derived from CPU per GB: (libslirp's %.3f) / (shared %.3f + send() %.3f) "
	       "= %.2f\n",
	       mtu, throughput(&res[SIDE_CEILING]) / throughput(s), total, shared, send,
	       total / (shared + send));
	printf("  the shared part (libslirp's timed run): guest %.3f + sink recv() %.3f s/GB, "
	       "the rest the harness's poll() and clock reads; 3x would need it <= "
	       "(%.3f - 3 x %.3f) / 2 = %.3f s/GB\n",
	       per_gb(s->guest_cpu, s), per_gb(s->sink_cpu, s), comp, send,
	       (comp - 3 * send) / 2);
}

int main(int argc, char **argv)
{
	uint64_t total = (argc > 1 ? strtoull(argv[1], NULL, 0) : 64) << 20;
	unsigned mtus[8] = { 1500, 65521 };
	int nmtu = argc > 2 ? 0 : 2;
	const char *only = getenv("BENCH_ONLY");

	if (getenv("BENCH_DIRECT_MIN"))
		direct_min = strtoul(getenv("BENCH_DIRECT_MIN"), NULL, 0);

	for (int i = 2; i < argc && nmtu < 8; i++)
		mtus[nmtu++] = (unsigned)strtoul(argv[i], NULL, 0);
	printf("guest TCP -> gateway -> 127.0.0.1 sink, %llu MiB, libslirp %s, one thread, "
	       "best of %d\n",
	       (unsigned long long)(total >> 20), slirp_version_string(), bench_reps());
	for (int i = 0; i < nmtu; i++) {
		struct result res[3] = { 0 };
		const struct result *s = &res[SIDE_SLIRP], *n = &res[SIDE_NETSTACK];

		bench_size_buffers(mtus[i]);
		run_sides(mtus[i], total, only, res);
		if (only) {
			for (int k = 0; k < 3; k++)
				if (!strcmp(only, side_name[k]))
					print(only, mtus[i], &res[k]);
			continue;
		}
		printf("  socket buffers %d KiB (guest and netstack gateway)\n", bench_sockbuf() >> 10);
		for (int k = 0; k < 3; k++)
			print(side_name[k], mtus[i], &res[k]);
		printf("ratio at MTU %u: netstack / libslirp throughput = %.2f (goal >= 3), "
		       "CPU per GB libslirp / netstack = %.2f\n",
		       mtus[i], throughput(n) / throughput(s),
		       (s->t.cpu / (double)s->bytes) / (n->t.cpu / (double)n->bytes));
		timing = true; /* separate runs: the clock reads would slow the above */
		run_sides(mtus[i], total, "libslirp", res);
		run_sides(mtus[i], total, "netstack", res);
		timing = false;
		print_component(mtus[i], s, n);
		print_bound(mtus[i], res);
	}
	return 0;
}
