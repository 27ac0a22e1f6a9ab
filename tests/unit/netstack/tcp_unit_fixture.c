/* tcp_unit_fixture.c — the fixture of the TCP engine's unit tests
 * (tcp_unit.h): two stacks over an in-memory link pair on a virtual clock,
 * pumping and timers, connected socket pairs, and frames taken off the
 * wire. Separate so the three test files of netstack_tcp share one copy. */
#include <check.h>

#include "tests/unit/netstack/tcp_unit.h"

struct ns_clock *clk;
struct ns_link *la, *lb;
struct ns_stack *sa, *sb;
uint32_t A, B;
bool b_dead;

void setup_flags(unsigned b_flags)
{
	struct ns_stack_cfg cfg = {0};

	clk = ns_clock_virtual_new(1000000);
	cfg.clock = clk;
	cfg.seed = 7;
	b_dead = false;
	ck_assert_int_eq(ns_link_pair(1500, 0, &la, &lb), 0);
	sa = ns_stack_new(&cfg);
	cfg.seed = 8;
	sb = ns_stack_new(&cfg);
	ns_parse_addr("10.0.0.1", &A);
	ns_parse_addr("10.0.0.2", &B);
	ck_assert_int_eq(ns_iface_add(sa, la, A, 24, 0), 0);
	ck_assert_int_eq(ns_iface_add(sb, lb, B, 24, b_flags), 0);
}

void setup(void)
{
	setup_flags(0);
}

void teardown(void)
{
	ns_stack_free(sa);
	ns_stack_free(sb);
	ns_link_destroy(la);
	ns_link_destroy(lb);
	ns_clock_free(clk);
}

static int drain_b(void)
{
	uint8_t buf[NS_FRAME_BUF];
	int n = 0;

	if (!b_dead)
		return ns_stack_drain(sb, 1000);
	while (ns_link_receive(lb, buf, sizeof(buf)) > 0)
		n++;
	return n;
}

/* Deliver frames both ways until the wire is quiet. */
int pump(void)
{
	int total = 0;

	for (int i = 0; i < 10000; i++) {
		int n = ns_stack_drain(sa, 1000) + drain_b();

		if (n == 0)
			break;
		total += n;
	}
	return total;
}

/* Let ms of virtual time pass, 1 ms at a time, running timers. */
void run_ms(unsigned ms)
{
	for (unsigned i = 0; i < ms; i++) {
		pump();
		ns_clock_advance(clk, 1000);
		ns_stack_poll(sa);
		if (!b_dead)
			ns_stack_poll(sb);
	}
	pump();
}

void drop_wire(void)
{
	uint8_t buf[NS_FRAME_BUF];

	while (ns_link_receive(la, buf, sizeof(buf)) > 0 ||
	       ns_link_receive(lb, buf, sizeof(buf)) > 0)
		;
}

int state_of(struct ns_sock *s)
{
	int v = -1;

	ck_assert_int_eq(ns_getsockopt(s, NS_TCP_STATE, &v), 0);
	return v;
}

struct ns_sock *stream(struct ns_stack *st)
{
	int err;
	struct ns_sock *s = ns_socket(st, NS_SOCK_STREAM, &err);

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(ns_setsockopt(s, NS_SO_NONBLOCK, 1), 0);
	return s;
}

struct ns_sock *listener(struct ns_stack *st, uint32_t addr, uint16_t port)
{
	struct ns_sock *l = stream(st);
	struct ns_sockaddr sa_ = {.addr = addr, .port = port};

	ck_assert_int_eq(ns_bind(l, &sa_), 0);
	ck_assert_int_eq(ns_listen(l, 8), 0);
	return l;
}

/* A connected pair: *c on stack a (client), *s on stack b (server). */
void connect_pair(struct ns_sock **c, struct ns_sock **s, uint16_t port)
{
	struct ns_sock *l = listener(sb, 0, port);
	struct ns_sockaddr to = {.addr = B, .port = port}, peer;
	int err;

	*c = stream(sa);
	ck_assert_int_eq(ns_connect(*c, &to), -EINPROGRESS);
	ck_assert_int_eq(state_of(*c), NS_TCP_SYN_SENT);
	pump();
	ck_assert_int_eq(state_of(*c), NS_TCP_ESTABLISHED);
	*s = ns_accept(l, &peer, &err);
	ck_assert_ptr_nonnull(*s);
	ck_assert_uint_eq(peer.addr, A);
	ck_assert_int_eq(state_of(*s), NS_TCP_ESTABLISHED);
	ns_setsockopt(*s, NS_SO_NONBLOCK, 1);
	ns_close(l);
}

unsigned conns(struct ns_stack *st)
{
	struct ns_stats s;

	ns_stack_stats(st, &s);
	return s.tcp_conns;
}

/* Take the next frame off link l's receive queue (not delivered). */
bool grab(struct ns_link *l, struct frame *f)
{
	ssize_t n = ns_link_receive(l, f->b, sizeof(f->b));

	f->len = n > 0 ? (size_t)n : 0;
	return n > 0;
}

struct ip_hdr *f_ip(struct frame *f)
{
	return (struct ip_hdr *)(f->b + ETH_HLEN);
}

struct tcp_hdr *f_tcp(struct frame *f)
{
	return (struct tcp_hdr *)(f->b + ETH_HLEN + 20);
}

uint32_t f_paylen(struct frame *f)
{
	return ntohs(f_ip(f)->len) - 20 - (f_tcp(f)->off >> 4) * 4u;
}

/* Recompute the TCP checksum after editing a grabbed frame. */
void f_fix(struct frame *f)
{
	struct ip_hdr *ih = f_ip(f);
	size_t l4 = ntohs(ih->len) - 20u;

	f_tcp(f)->csum = 0;
	f_tcp(f)->csum = (uint16_t)~ip_pseudo_csum_fold(ih->src, ih->dst, 6, f_tcp(f), l4);
}

struct ns_stats stats_of(struct ns_stack *st)
{
	struct ns_stats s;

	ns_stack_stats(st, &s);
	return s;
}

/* Client data segment "x" grabbed on its way to b, then delivered. */
void client_segment(struct ns_sock *c, struct frame *f)
{
	ck_assert_int_eq(ns_send(c, "x", 1, 0), 1);
	ck_assert(grab(lb, f));
	ck_assert_uint_eq(f_paylen(f), 1);
	ns_stack_input(sb, lb, f->b, f->len);
	pump();
}
