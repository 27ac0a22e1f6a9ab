/* test_tcp_unit.c — the TCP engine's unit tests: sequence arithmetic,
 * option parsing and building, the RTO estimator, and the state machine
 * through the public socket API between two stacks over an in-memory
 * pair on a virtual clock. */
#include <check.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "netstack/tcp_internal.h"
#include "tests/unit/check_run.h"

static struct ns_clock *clk;
static struct ns_link *la, *lb;
static struct ns_stack *sa, *sb;
static uint32_t A, B;
static bool b_dead; /* stack b has vanished: frames to it are lost */

static void setup_flags(unsigned b_flags)
{
	struct ns_stack_cfg cfg = { 0 };

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

static void setup(void)
{
	setup_flags(0);
}

static void teardown(void)
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
static int pump(void)
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
static void run_ms(unsigned ms)
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

static void drop_wire(void)
{
	uint8_t buf[NS_FRAME_BUF];

	while (ns_link_receive(la, buf, sizeof(buf)) > 0 ||
	       ns_link_receive(lb, buf, sizeof(buf)) > 0)
		;
}

static int state_of(struct ns_sock *s)
{
	int v = -1;

	ck_assert_int_eq(ns_getsockopt(s, NS_TCP_STATE, &v), 0);
	return v;
}

static struct ns_sock *stream(struct ns_stack *st)
{
	int err;
	struct ns_sock *s = ns_socket(st, NS_SOCK_STREAM, &err);

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(ns_setsockopt(s, NS_SO_NONBLOCK, 1), 0);
	return s;
}

static struct ns_sock *listener(struct ns_stack *st, uint32_t addr, uint16_t port)
{
	struct ns_sock *l = stream(st);
	struct ns_sockaddr sa_ = { .addr = addr, .port = port };

	ck_assert_int_eq(ns_bind(l, &sa_), 0);
	ck_assert_int_eq(ns_listen(l, 8), 0);
	return l;
}

/* A connected pair: *c on stack a (client), *s on stack b (server). */
static void connect_pair(struct ns_sock **c, struct ns_sock **s, uint16_t port)
{
	struct ns_sock *l = listener(sb, 0, port);
	struct ns_sockaddr to = { .addr = B, .port = port }, peer;
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

static unsigned conns(struct ns_stack *st)
{
	struct ns_stats s;

	ns_stack_stats(st, &s);
	return s.tcp_conns;
}

/* ------------------------------------------------------------- pure */

START_TEST(test_seq_arith)
{
	ck_assert(SEQ_LT(1, 2));
	ck_assert(!SEQ_LT(2, 2));
	ck_assert(SEQ_LEQ(2, 2));
	ck_assert(SEQ_LT(0xfffffff0u, 0x10)); /* across the wrap */
	ck_assert(SEQ_GT(0x10, 0xfffffff0u));
	ck_assert(SEQ_GEQ(0x80000000u, 0x7fffffffu));
	ck_assert_uint_eq(seq_max(0xfffffffeu, 3), 3);
	ck_assert_uint_eq(seq_min(0xfffffffeu, 3), 0xfffffffeu);
	ck_assert(seq_in(0, 0xffffffffu, 5));
	ck_assert(!seq_in(5, 0xffffffffu, 5));
}
END_TEST

START_TEST(test_options)
{
	struct tcp_syn_opts so = { .mss = 1460, .ws = 7, .sack_perm = true, .ts = true,
				   .tsval = 0x11223344, .tsecr = 0 };
	struct tcp_sack_block b[3] = { { 100, 200 }, { 300, 400 }, { 500, 600 } };
	struct tcp_opts o;
	uint8_t p[40];
	size_t n = tcp_opt_build_syn(p, &so);
	const uint8_t bad_len[] = { TCPOPT_MSS, 3, 5, 0 };
	const uint8_t trunc[] = { TCPOPT_NOP, TCPOPT_TS, 10, 0, 0 };
	const uint8_t unknown[] = { 30, 4, 0, 0, TCPOPT_WS, 3, 20, TCPOPT_EOL };

	ck_assert_uint_eq(n % 4, 0);
	ck_assert_uint_le(n, 40);
	ck_assert_int_eq(tcp_opt_parse(p, n, &o), 0);
	ck_assert(o.mss_ok && o.mss == 1460);
	ck_assert(o.ws_ok && o.ws == 7);
	ck_assert(o.sack_perm && o.ts_ok);
	ck_assert_uint_eq(o.tsval, 0x11223344);

	n = tcp_opt_build(p, true, 5, 6, b, 3);
	ck_assert_uint_eq(n, 12 + 4 + 24);
	ck_assert_int_eq(tcp_opt_parse(p, n, &o), 0);
	ck_assert(o.ts_ok && o.tsval == 5 && o.tsecr == 6);
	ck_assert_uint_eq(o.nsack, 3);
	ck_assert_uint_eq(o.sack[2].start, 500);
	ck_assert_uint_eq(o.sack[2].end, 600);
	/* Four blocks do not fit next to timestamps: three are sent. */
	ck_assert_uint_eq(tcp_opt_build(p, true, 5, 6, b, 3), 40);

	ck_assert_int_eq(tcp_opt_parse(bad_len, sizeof(bad_len), &o), -1);
	ck_assert_int_eq(tcp_opt_parse(trunc, sizeof(trunc), &o), -1);
	ck_assert_int_eq(tcp_opt_parse(unknown, sizeof(unknown), &o), 0);
	ck_assert(o.ws_ok);
	ck_assert_uint_eq(o.ws, 14); /* RFC 7323: larger shifts mean 14 */
}
END_TEST

START_TEST(test_rto_estimator)
{
	struct rtt_est r;

	rtt_init(&r);
	ck_assert_uint_eq(r.rto, 1000000); /* RFC 6298 2.1 */
	rtt_sample(&r, 100000);
	ck_assert_uint_eq(r.srtt, 100000);
	ck_assert_uint_eq(r.rttvar, 50000);
	ck_assert_uint_eq(r.rto, 300000); /* srtt + 4 * rttvar */
	rtt_sample(&r, 200000);
	ck_assert_uint_eq(r.rttvar, (3 * 50000 + 100000) / 4);
	ck_assert_uint_eq(r.srtt, (7 * 100000 + 200000) / 8);
	ck_assert_uint_eq(r.rto, r.srtt + 4 * r.rttvar);
	/* Tiny RTTs are floored; backoff doubles and is capped. */
	for (int i = 0; i < 50; i++)
		rtt_sample(&r, 10);
	ck_assert_uint_eq(r.rto, TCP_RTO_MIN_US);
	ck_assert_uint_eq(rtt_backoff_rto(&r, 1), 2 * TCP_RTO_MIN_US);
	ck_assert_uint_eq(rtt_backoff_rto(&r, 30), TCP_RTO_MAX_US);
}
END_TEST

/* ------------------------------------------------------- connections */

START_TEST(test_connect_accept_data_close)
{
	struct ns_sock *c, *s;
	struct ns_sockaddr n1, n2;
	static uint8_t out[300000], in[300000];
	size_t sent = 0, got = 0;
	struct ns_tcp_info ti;

	connect_pair(&c, &s, 80);
	ck_assert_int_eq(ns_getsockname(s, &n1), 0);
	ck_assert_uint_eq(n1.addr, B);
	ck_assert_uint_eq(n1.port, 80);
	ck_assert_int_eq(ns_getpeername(c, &n2), 0);
	ck_assert_uint_eq(n2.addr, B);
	ck_assert_int_eq(ns_getsockname(c, &n1), 0);
	ck_assert_int_eq(ns_getpeername(s, &n2), 0);
	ck_assert_uint_eq(n1.port, n2.port);
	ck_assert_int_eq(ns_tcp_info(c, &ti), 0);
	ck_assert(ti.sack && ti.timestamps);
	ck_assert_uint_eq(ti.snd_mss, 1460);
	ck_assert_uint_gt(ti.rcv_wscale, 0);

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(i * 131 + (i >> 9));
	while (got < sizeof(out)) {
		ssize_t n;

		if (sent < sizeof(out)) {
			n = ns_send(c, out + sent, sizeof(out) - sent, 0);
			ck_assert(n > 0 || n == -EAGAIN);
			if (n > 0)
				sent += (size_t)n;
		}
		run_ms(1);
		while (got < sizeof(in) && (n = ns_recv(s, in + got, sizeof(in) - got, 0)) > 0)
			got += (size_t)n;
	}
	ck_assert_int_eq(memcmp(in, out, sizeof(out)), 0);
	ck_assert_int_eq(ns_recv(s, in, 10, 0), -EAGAIN);

	/* Active close from the client. */
	ck_assert_int_eq(ns_shutdown(c, NS_SHUT_WR), 0);
	ck_assert_int_eq(state_of(c), NS_TCP_FIN_WAIT_1);
	pump();
	ck_assert_int_eq(state_of(c), NS_TCP_FIN_WAIT_2);
	ck_assert_int_eq(state_of(s), NS_TCP_CLOSE_WAIT);
	ck_assert_int_eq(ns_recv(s, in, 10, 0), 0); /* EOF */
	ck_assert(ns_sock_events(s) & NS_EV_IN);
	ck_assert_int_eq(ns_send(c, "x", 1, 0), -EPIPE);
	/* The half-closed server may still talk. */
	ck_assert_int_eq(ns_send(s, "bye", 3, 0), 3);
	pump();
	ck_assert_int_eq(ns_recv(c, in, 10, 0), 3);
	ck_assert_int_eq(ns_close(s), 0);
	pump();
	ck_assert_int_eq(state_of(c), NS_TCP_TIME_WAIT);
	ck_assert_int_eq(ns_recv(c, in, 10, 0), 0);
	ck_assert_uint_eq(conns(sb), 0); /* LAST-ACK answered: all gone */
	ns_close(c);
	ck_assert_uint_eq(conns(sa), 1); /* TIME-WAIT lives on */
	run_ms(60001);
	ck_assert_uint_eq(conns(sa), 0);
}
END_TEST

START_TEST(test_bulk_both_ways)
{
	struct ns_sock *c, *s;
	static uint8_t a2b[200000], b2a[200000], ina[200000], inb[200000];
	size_t sa_ = 0, sb_ = 0, ga = 0, gb = 0;

	connect_pair(&c, &s, 81);
	for (size_t i = 0; i < sizeof(a2b); i++) {
		a2b[i] = (uint8_t)(i * 7);
		b2a[i] = (uint8_t)(i * 13 + 1);
	}
	for (int round = 0; round < 10000 && (ga < sizeof(ina) || gb < sizeof(inb)); round++) {
		ssize_t n;

		if (sa_ < sizeof(a2b) && (n = ns_send(c, a2b + sa_, sizeof(a2b) - sa_, 0)) > 0)
			sa_ += (size_t)n;
		if (sb_ < sizeof(b2a) && (n = ns_send(s, b2a + sb_, sizeof(b2a) - sb_, 0)) > 0)
			sb_ += (size_t)n;
		run_ms(1);
		while ((n = ns_recv(s, inb + gb, sizeof(inb) - gb, 0)) > 0)
			gb += (size_t)n;
		while ((n = ns_recv(c, ina + ga, sizeof(ina) - ga, 0)) > 0)
			ga += (size_t)n;
	}
	ck_assert_uint_eq(gb, sizeof(inb));
	ck_assert_uint_eq(ga, sizeof(ina));
	ck_assert_int_eq(memcmp(inb, a2b, sizeof(a2b)), 0);
	ck_assert_int_eq(memcmp(ina, b2a, sizeof(b2a)), 0);
	ns_close(c);
	ns_close(s);
	run_ms(10);
	ck_assert_int_eq(conns(sb), 1); /* the server closed second: no TIME-WAIT */
}
END_TEST

START_TEST(test_refused)
{
	struct ns_sock *c = stream(sa);
	struct ns_sockaddr to = { .addr = B, .port = 9999 };
	int v = 0;
	struct ns_stats st;

	ck_assert_int_eq(ns_connect(c, &to), -EINPROGRESS);
	pump();
	ck_assert_int_eq(state_of(c), NS_TCP_CLOSED);
	ck_assert(ns_sock_events(c) & NS_EV_ERR);
	ck_assert_int_eq(ns_getsockopt(c, NS_SO_ERROR, &v), 0);
	ck_assert_int_eq(v, -ECONNREFUSED);
	ck_assert_int_eq(ns_getsockopt(c, NS_SO_ERROR, &v), 0);
	ck_assert_int_eq(v, 0);
	ns_stack_stats(sb, &st);
	ck_assert_uint_eq(st.tcp_rst_tx, 1);
	/* The same socket may try again (as on Linux). */
	{
		struct ns_sock *l = listener(sb, 0, 9999);

		ck_assert_int_eq(ns_connect(c, &to), -EINPROGRESS);
		pump();
		ck_assert_int_eq(state_of(c), NS_TCP_ESTABLISHED);
		ns_close(l);
	}
	ns_close(c);
	pump();
	ck_assert_uint_eq(conns(sa), 0);
}
END_TEST

START_TEST(test_simultaneous_open_and_close)
{
	struct ns_sock *x = stream(sa), *y = stream(sb);
	struct ns_sockaddr ax = { .addr = A, .port = 5000 }, by = { .addr = B, .port = 6000 };
	char buf[8];

	ck_assert_int_eq(ns_bind(x, &ax), 0);
	ck_assert_int_eq(ns_bind(y, &by), 0);
	ck_assert_int_eq(ns_connect(x, &by), -EINPROGRESS);
	ck_assert_int_eq(ns_connect(y, &ax), -EINPROGRESS);
	/* Both SYNs are on the wire before either arrives. */
	pump();
	ck_assert_int_eq(state_of(x), NS_TCP_ESTABLISHED);
	ck_assert_int_eq(state_of(y), NS_TCP_ESTABLISHED);
	ck_assert_int_eq(ns_send(x, "hi", 2, 0), 2);
	pump();
	ck_assert_int_eq(ns_recv(y, buf, sizeof(buf), 0), 2);
	pump(); /* y's window update (its SYN-ACK could only offer 64K) */

	/* Simultaneous close: both FINs cross -> CLOSING -> TIME-WAIT. */
	ck_assert_int_eq(ns_shutdown(x, NS_SHUT_WR), 0);
	ck_assert_int_eq(ns_shutdown(y, NS_SHUT_WR), 0);
	ck_assert_int_eq(ns_stack_drain(sa, 1), 1); /* y's FIN reaches x first */
	ck_assert_int_eq(state_of(x), NS_TCP_CLOSING);
	pump();
	ck_assert_int_eq(state_of(x), NS_TCP_TIME_WAIT);
	ck_assert_int_eq(state_of(y), NS_TCP_TIME_WAIT);
	ns_close(x);
	ns_close(y);
}
END_TEST

START_TEST(test_time_wait_expiry)
{
	struct ns_sock *c, *s;

	connect_pair(&c, &s, 82);
	ck_assert_int_eq(ns_setsockopt(c, NS_TCP_LINGER2, 1000), 0);
	ns_close(c);
	pump();
	ck_assert_int_eq(state_of(s), NS_TCP_CLOSE_WAIT);
	ns_close(s);
	pump();
	ck_assert_uint_eq(conns(sa), 1);
	run_ms(990);
	ck_assert_uint_eq(conns(sa), 1);
	run_ms(20);
	ck_assert_uint_eq(conns(sa), 0);
	ck_assert_uint_eq(conns(sb), 0);
}
END_TEST

START_TEST(test_rto_retransmit)
{
	struct ns_sock *c, *s;
	struct ns_stats st;
	char buf[16];

	connect_pair(&c, &s, 83);
	ck_assert_int_eq(ns_send(c, "lost", 4, 0), 4);
	drop_wire(); /* the segment never arrives */
	run_ms(100);
	ck_assert_int_eq(ns_recv(s, buf, sizeof(buf), 0), -EAGAIN);
	run_ms(1200); /* initial RTO 1 s (RFC 6298), or less after a sample */
	ck_assert_int_eq(ns_recv(s, buf, sizeof(buf), 0), 4);
	ck_assert_int_eq(memcmp(buf, "lost", 4), 0);
	ns_stack_stats(sa, &st);
	ck_assert_uint_ge(st.tcp_rto, 1);
	ck_assert_uint_ge(st.tcp_rexmit, 1);
	ns_close(c);
	ns_close(s);
}
END_TEST

START_TEST(test_abort_resets_peer)
{
	struct ns_sock *c, *s;
	char buf[4];

	connect_pair(&c, &s, 84);
	ns_abort(c);
	pump();
	ck_assert_int_eq(state_of(s), NS_TCP_CLOSED);
	ck_assert_int_eq(ns_recv(s, buf, sizeof(buf), 0), -ECONNRESET);
	ck_assert_int_eq(ns_send(s, "x", 1, 0), -EPIPE);
	ns_close(s);
	ck_assert_uint_eq(conns(sa), 0);
	ck_assert_uint_eq(conns(sb), 0);
}
END_TEST


/* ------------------------------------------------ loss and options */

/* Move len bytes c -> s under impairment (the client's link is wrapped);
 * returns the client's tcp_info. */
static void transfer(struct ns_sock *c, struct ns_sock *s, size_t len, unsigned max_ms)
{
	static uint8_t out[1 << 21], in[1 << 21];
	size_t sent = 0, got = 0;

	ck_assert_uint_le(len, sizeof(out));
	for (size_t i = 0; i < len; i++)
		out[i] = (uint8_t)(i * 251 + (i >> 11));
	for (unsigned ms = 0; ms < max_ms && got < len; ms++) {
		ssize_t n;

		if (sent < len && (n = ns_send(c, out + sent, len - sent, 0)) > 0)
			sent += (size_t)n;
		run_ms(1);
		while (got < len && (n = ns_recv(s, in + got, len - got, 0)) > 0)
			got += (size_t)n;
	}
	ck_assert_uint_eq(got, len);
	ck_assert_int_eq(memcmp(in, out, len), 0);
}

/* Stacks where sa's link is impaired as ic says. */
static void impaired_setup_cfg(const struct ns_impair_cfg *ic)
{
	struct ns_stack_cfg cfg = { 0 };

	teardown();
	clk = ns_clock_virtual_new(1000000);
	cfg.clock = clk;
	cfg.seed = 7;
	ck_assert_int_eq(ns_link_pair(1500, 0, &la, &lb), 0);
	la = ns_link_impair(la, clk, ic);
	sa = ns_stack_new(&cfg);
	cfg.seed = 8;
	sb = ns_stack_new(&cfg);
	ck_assert_int_eq(ns_iface_add(sa, la, A, 24, 0), 0);
	ck_assert_int_eq(ns_iface_add(sb, lb, B, 24, 0), 0);
	ns_arp_add_static(sa, B, lb->mac);
}

/* ... dropping, duplicating, reordering with the given rates. */
static void impaired_setup(unsigned loss, unsigned dup, unsigned reorder)
{
	struct ns_impair_cfg ic = { .loss_bp = loss, .dup_bp = dup, .reorder_bp = reorder,
				    .delay_us = 2000, .reorder_us = 3000, .seed = 99 };

	impaired_setup_cfg(&ic);
}

static void connect_pair_retry(struct ns_sock **c, struct ns_sock **s, uint16_t port,
			       void (*tune)(struct ns_sock *))
{
	struct ns_sock *l = listener(sb, 0, port);
	struct ns_sockaddr to = { .addr = B, .port = port };
	int err;

	*c = stream(sa);
	if (tune)
		tune(*c);
	ck_assert_int_eq(ns_connect(*c, &to), -EINPROGRESS);
	for (int i = 0; i < 20000 && !(*s = ns_accept(l, NULL, &err)); i++)
		run_ms(1);
	ck_assert_ptr_nonnull(*s);
	ns_setsockopt(*s, NS_SO_NONBLOCK, 1);
	ns_close(l);
}

/* 2 MB through 2 % loss, 0.5 % duplication, 1 % reordering: the data
 * arrives intact and fast retransmit (not only the RTO) did the work. */
static void lossy_transfer(uint16_t port, void (*tune)(struct ns_sock *), bool sack)
{
	struct ns_sock *c, *s = NULL;
	struct ns_tcp_info ti;

	impaired_setup(200, 50, 100);
	connect_pair_retry(&c, &s, port, tune);
	transfer(c, s, 1 << 21, 120000);
	ns_tcp_info(c, &ti);
	ck_assert(ti.sack == sack && ti.timestamps == sack);
	ck_assert_uint_gt(ti.fast_retransmits, 0);
	ck_assert_uint_gt(ti.retransmits, ti.rto_timeouts);
	ns_close(c);
	ns_close(s);
}

START_TEST(test_loss_sack_recovery)
{
	lossy_transfer(90, NULL, true);
}
END_TEST

static void no_sack(struct ns_sock *c)
{
	ck_assert_int_eq(ns_setsockopt(c, NS_TCP_SACK, 0), 0);
	ck_assert_int_eq(ns_setsockopt(c, NS_TCP_TIMESTAMPS, 0), 0);
}

START_TEST(test_loss_newreno_recovery)
{
	lossy_transfer(91, no_sack, false);
}
END_TEST

START_TEST(test_reordering_undo)
{
	/* 10 ms each way with 0-2 ms jitter reorders back-to-back segments:
	 * the dupacks trigger fast retransmits, the timestamps show they were
	 * spurious (RFC 3522), cwnd is restored and dupthresh grows. Without
	 * the undo 1 MB takes ~3 s here (cwnd halved again and again). */
	struct ns_impair_cfg ic = { .delay_us = 10000, .jitter_us = 2000, .seed = 3 };
	struct ns_sock *c, *s = NULL;
	struct ns_tcp_info ti;

	impaired_setup_cfg(&ic);
	connect_pair_retry(&c, &s, 96, NULL);
	transfer(c, s, 1 << 20, 600);
	ns_tcp_info(c, &ti);
	ck_assert_uint_gt(ti.fast_retransmits, 0);
	ck_assert_uint_gt(ti.cwnd, 100000);
	ns_close(c);
	ns_close(s);
}
END_TEST

static void small_and_plain(struct ns_sock *c)
{
	ck_assert_int_eq(ns_setsockopt(c, NS_TCP_WSCALE, 0), 0);
	ck_assert_int_eq(ns_setsockopt(c, NS_TCP_MAXSEG, 536), 0);
	ck_assert_int_eq(ns_setsockopt(c, NS_SO_RCVBUF, 8000), 0);
}

START_TEST(test_option_negotiation)
{
	struct ns_sock *c, *s = NULL;
	struct ns_tcp_info ci, si;
	int v;

	connect_pair_retry(&c, &s, 92, small_and_plain);
	ns_tcp_info(c, &ci);
	ns_tcp_info(s, &si);
	ck_assert_uint_eq(ci.snd_wscale, 0);
	ck_assert_uint_eq(ci.rcv_wscale, 0);
	ck_assert_uint_eq(si.snd_wscale, 0); /* the server does not scale either */
	ck_assert_uint_eq(si.rcv_wscale, 0);
	ck_assert_uint_eq(si.snd_mss, 536); /* our MAXSEG is what the peer sends */
	ck_assert_uint_eq(ci.rcv_mss, 536);
	ck_assert_uint_eq(si.snd_wnd, 8000);
	ck_assert(ci.sack && si.timestamps);
	ck_assert_int_eq(ns_setsockopt(c, NS_SO_RCVBUF, 100000), -EISCONN);
	ck_assert_int_eq(ns_getsockopt(c, NS_SO_RCVBUF, &v), 0);
	ck_assert_int_eq(v, 8000);
	ck_assert_int_eq(ns_setsockopt(c, NS_TCP_KEEPCNT, 0), -EINVAL);
	ck_assert_int_eq(ns_setsockopt(c, NS_TCP_STATE, 1), -EINVAL);
	ck_assert_int_eq(ns_setsockopt(c, 999, 1), -ENOPROTOOPT);
	/* A transfer through the small window and segments. */
	transfer(s, c, 100000, 20000);
	ns_close(c);
	ns_close(s);
}
END_TEST

START_TEST(test_zero_window_persist)
{
	struct ns_sock *c, *s = NULL;
	static uint8_t buf[64000];
	ssize_t n, total = 0;
	struct ns_tcp_info ti;
	int v;

	connect_pair_retry(&c, &s, 93, small_and_plain);
	/* The client (8000-byte receive buffer) does not read: the server's
	 * sends stop at a zero window, probes keep it alive for minutes. */
	while ((n = ns_send(s, buf, sizeof(buf), 0)) > 0)
		total += n;
	run_ms(600000);
	ck_assert_int_eq(state_of(s), NS_TCP_ESTABLISHED);
	ns_tcp_info(s, &ti);
	/* The last sub-MSS piece of window went out on the persist timer. */
	ck_assert_uint_eq(ti.snd_wnd, 0);
	ck_assert_int_eq(ns_getsockopt(c, NS_SO_NREAD, &v), 0);
	ck_assert_int_eq(v, 8000);
	/* Reading opens the window; everything arrives. */
	for (int i = 0; i < 2000 && total > 0; i++) {
		while ((n = ns_recv(c, buf, sizeof(buf), 0)) > 0)
			total -= n;
		run_ms(1);
	}
	ck_assert_int_eq((int)total, 0);
	ns_close(c);
	ns_close(s);
}
END_TEST

static void keepalive_on(struct ns_sock *c)
{
	ck_assert_int_eq(ns_setsockopt(c, NS_SO_KEEPALIVE, 1), 0);
	ck_assert_int_eq(ns_setsockopt(c, NS_TCP_KEEPIDLE, 10), 0);
	ck_assert_int_eq(ns_setsockopt(c, NS_TCP_KEEPINTVL, 2), 0);
	ck_assert_int_eq(ns_setsockopt(c, NS_TCP_KEEPCNT, 3), 0);
}

START_TEST(test_keepalive)
{
	struct ns_sock *c, *s = NULL;
	char b[4];

	connect_pair_retry(&c, &s, 94, keepalive_on);
	run_ms(35000); /* idle, but the peer answers every probe */
	ck_assert_int_eq(state_of(c), NS_TCP_ESTABLISHED);
	b_dead = true; /* the peer vanishes without a word */
	run_ms(10000 + 3 * 2000 + 2000);
	ck_assert_int_eq(state_of(c), NS_TCP_CLOSED);
	ck_assert_int_eq(ns_recv(c, b, sizeof(b), 0), -ETIMEDOUT);
	ns_close(c);
	ns_close(s);
}
END_TEST

START_TEST(test_user_timeout)
{
	struct ns_sock *c, *s = NULL;
	char b[4];

	connect_pair(&c, &s, 95);
	ck_assert_int_eq(ns_setsockopt(c, NS_TCP_USER_TIMEOUT, 5000), 0);
	b_dead = true; /* nothing reaches b any more */
	ck_assert_int_eq(ns_send(c, "data", 4, 0), 4);
	run_ms(4000);
	ck_assert_int_eq(state_of(c), NS_TCP_ESTABLISHED);
	run_ms(3000);
	ck_assert_int_eq(state_of(c), NS_TCP_CLOSED);
	ck_assert_int_eq(ns_recv(c, b, sizeof(b), 0), -ETIMEDOUT);
	ns_close(c);
	ns_close(s);
}
END_TEST


/* ------------------------------------------------- segment surgery */

struct frame {
	uint8_t b[2048];
	size_t len;
};

/* Take the next frame off link l's receive queue (not delivered). */
static bool grab(struct ns_link *l, struct frame *f)
{
	ssize_t n = ns_link_receive(l, f->b, sizeof(f->b));

	f->len = n > 0 ? (size_t)n : 0;
	return n > 0;
}

static struct ip_hdr *f_ip(struct frame *f)
{
	return (struct ip_hdr *)(f->b + ETH_HLEN);
}

static struct tcp_hdr *f_tcp(struct frame *f)
{
	return (struct tcp_hdr *)(f->b + ETH_HLEN + 20);
}

static uint32_t f_paylen(struct frame *f)
{
	return ntohs(f_ip(f)->len) - 20 - (f_tcp(f)->off >> 4) * 4u;
}

/* Recompute the TCP checksum after editing a grabbed frame. */
static void f_fix(struct frame *f)
{
	struct ip_hdr *ih = f_ip(f);
	size_t l4 = ntohs(ih->len) - 20u;

	f_tcp(f)->csum = 0;
	f_tcp(f)->csum = (uint16_t)~ip_pseudo_csum_fold(ih->src, ih->dst, 6, f_tcp(f), l4);
}

static struct ns_stats stats_of(struct ns_stack *st)
{
	struct ns_stats s;

	ns_stack_stats(st, &s);
	return s;
}

/* Client data segment "x" grabbed on its way to b, then delivered. */
static void client_segment(struct ns_sock *c, struct frame *f)
{
	ck_assert_int_eq(ns_send(c, "x", 1, 0), 1);
	ck_assert(grab(lb, f));
	ck_assert_uint_eq(f_paylen(f), 1);
	ns_stack_input(sb, lb, f->b, f->len);
	pump();
}

START_TEST(test_rst_validation)
{
	struct ns_sock *c, *s;
	struct frame f, r;
	uint32_t nxt;

	connect_pair(&c, &s, 100);
	client_segment(c, &f);
	nxt = ntohl(f_tcp(&f)->seq) + 1;
	/* In the window but not rcv_nxt: a challenge ACK, nothing else. */
	r = f;
	r.len = ETH_HLEN + 40;
	f_ip(&r)->len = htons(40);
	f_ip(&r)->csum = 0;
	f_ip(&r)->csum = (uint16_t)~ns_csum_fold(ns_csum_add(0, f_ip(&r), 20));
	f_tcp(&r)->off = 5 << 4;
	f_tcp(&r)->flags = TH_RST;
	f_tcp(&r)->seq = htonl(nxt + 1000);
	f_fix(&r);
	ns_stack_input(sb, lb, r.b, r.len);
	ck_assert_uint_eq(stats_of(sb).tcp_challenge_ack, 1);
	ck_assert_int_eq(state_of(s), NS_TCP_ESTABLISHED);
	/* Out of the window: ignored silently. */
	f_tcp(&r)->seq = htonl(nxt + 10000000);
	f_fix(&r);
	ns_stack_input(sb, lb, r.b, r.len);
	ck_assert_uint_eq(stats_of(sb).tcp_challenge_ack, 1);
	/* A SYN on the established connection: challenge ACK (RFC 5961 4). */
	f_tcp(&r)->flags = TH_SYN;
	f_tcp(&r)->seq = htonl(nxt + 5);
	f_fix(&r);
	ns_stack_input(sb, lb, r.b, r.len);
	ck_assert_uint_eq(stats_of(sb).tcp_challenge_ack, 2);
	ck_assert_int_eq(state_of(s), NS_TCP_ESTABLISHED);
	/* Exactly rcv_nxt: the connection is reset. */
	f_tcp(&r)->flags = TH_RST;
	f_tcp(&r)->seq = htonl(nxt);
	f_fix(&r);
	ns_stack_input(sb, lb, r.b, r.len);
	ck_assert_int_eq(state_of(s), NS_TCP_CLOSED);
	drop_wire();
	ns_close(c);
	ns_close(s);
}
END_TEST

START_TEST(test_paws)
{
	struct ns_sock *c, *s;
	struct frame old, f;
	char buf[8];

	connect_pair(&c, &s, 101);
	client_segment(c, &old);
	ck_assert_int_eq(ns_recv(s, buf, sizeof(buf), 0), 1);
	run_ms(50);
	client_segment(c, &f);
	ck_assert_int_eq(ns_recv(s, buf, sizeof(buf), 0), 1);
	/* The old segment, moved to the next sequence number, still carries
	 * the old TSval: PAWS drops it (RFC 7323 5). */
	f_tcp(&old)->seq = htonl(ntohl(f_tcp(&f)->seq) + 1);
	f_fix(&old);
	ns_stack_input(sb, lb, old.b, old.len);
	ck_assert_uint_eq(stats_of(sb).tcp_paws_drop, 1);
	ck_assert_int_eq(ns_recv(s, buf, sizeof(buf), 0), -EAGAIN);
	pump();
	ns_close(c);
	ns_close(s);
}
END_TEST

/* An ICMP unreachable from b to a quoting the grabbed frame q. */
static void icmp_about(struct frame *e, struct frame *q, uint8_t code, uint16_t mtu)
{
	struct ip_hdr *ih = f_ip(e);
	uint8_t *icmp = e->b + ETH_HLEN + 20;
	uint16_t cs;

	memset(e, 0, sizeof(*e));
	memcpy(e->b, la->mac, 6);
	memcpy(e->b + 6, lb->mac, 6);
	e->b[12] = 8;
	ih->vhl = 0x45;
	ih->ttl = 64;
	ih->proto = NS_PROTO_ICMP;
	ih->src = htonl(B);
	ih->dst = htonl(A);
	ih->len = htons(20 + 8 + 28);
	ih->csum = (uint16_t)~ns_csum_fold(ns_csum_add(0, ih, 20));
	icmp[0] = ICMP_UNREACH;
	icmp[1] = code;
	icmp[6] = (uint8_t)(mtu >> 8);
	icmp[7] = (uint8_t)mtu;
	memcpy(icmp + 8, q->b + ETH_HLEN, 28);
	cs = (uint16_t)~ns_csum_fold(ns_csum_add(0, icmp, 36));
	memcpy(icmp + 2, &cs, 2);
	e->len = ETH_HLEN + 20 + 36;
}

START_TEST(test_icmp_refused_syn_sent)
{
	struct ns_sock *c = stream(sa);
	struct ns_sockaddr to = { .addr = B, .port = 4444 };
	struct frame syn, e;
	int v;

	ns_arp_add_static(sa, B, lb->mac);
	ck_assert_int_eq(ns_connect(c, &to), -EINPROGRESS);
	ck_assert(grab(lb, &syn));
	ck_assert(f_tcp(&syn)->flags == TH_SYN);
	/* b answers with ICMP port unreachable quoting the SYN. */
	icmp_about(&e, &syn, ICMP_UNREACH_PORT, 0);
	ns_stack_input(sa, la, e.b, e.len);
	ck_assert_int_eq(state_of(c), NS_TCP_CLOSED);
	ck_assert_int_eq(ns_getsockopt(c, NS_SO_ERROR, &v), 0);
	ck_assert_int_eq(v, -ECONNREFUSED);
	ns_close(c);
}
END_TEST

START_TEST(test_icmp_frag_needed)
{
	struct ns_sock *c, *s;
	static uint8_t big[20000], in[20000];
	struct frame seg, e;
	struct ns_tcp_info ti;
	ssize_t n, got = 0;

	connect_pair(&c, &s, 105);
	ck_assert_int_eq(ns_send(c, big, sizeof(big), 0), (ssize_t)sizeof(big));
	ck_assert(grab(lb, &seg)); /* a full-sized segment "does not fit" */
	ck_assert_uint_eq(f_paylen(&seg), 1460 - 12);
	icmp_about(&e, &seg, ICMP_UNREACH_NEEDFRAG, 1000);
	ns_stack_input(sa, la, e.b, e.len);
	ns_tcp_info(c, &ti);
	ck_assert_uint_eq(ti.snd_mss, 1000 - 40);
	for (int i = 0; i < 100 && got < (ssize_t)sizeof(in); i++) {
		run_ms(1);
		while ((n = ns_recv(s, in + got, sizeof(in) - (size_t)got, 0)) > 0)
			got += n;
	}
	ck_assert_int_eq((int)got, (int)sizeof(in));
	ns_close(c);
	ns_close(s);
}
END_TEST

static unsigned cb_events, cb_calls;

static void on_event(struct ns_sock *s, unsigned ev, void *ctx)
{
	(void)s;
	ck_assert_ptr_eq(ctx, &cb_calls);
	cb_events |= ev;
	cb_calls++;
}

START_TEST(test_events_fd_callback)
{
	struct ns_sock *c, *s;
	struct pollfd p;
	char buf[8];
	int fd;

	connect_pair(&c, &s, 106);
	ck_assert_uint_eq(ns_sock_events(s), NS_EV_OUT);
	fd = ns_sock_fd(s);
	ck_assert_int_ge(fd, 0);
	ns_sock_events(s); /* clears the fd */
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	ck_assert_int_eq(poll(&p, 1, 0), 0);
	ns_sock_set_callback(s, on_event, &cb_calls);
	ck_assert_int_eq(ns_send(c, "ev", 2, 0), 2);
	pump();
	ck_assert_uint_gt(cb_calls, 0);
	ck_assert(cb_events & NS_EV_IN);
	ck_assert_int_eq(poll(&p, 1, 0), 1);
	ck_assert_uint_eq(ns_sock_events(s), NS_EV_IN | NS_EV_OUT);
	ck_assert_int_eq(ns_recv(s, buf, sizeof(buf), 0), 2);
	ns_sock_set_callback(s, NULL, NULL);
	ns_close(c);
	pump();
	ck_assert_uint_eq(ns_sock_events(s) & (NS_EV_IN | NS_EV_HUP), NS_EV_IN);
	ns_shutdown(s, NS_SHUT_WR);
	ck_assert(ns_sock_events(s) & NS_EV_HUP);
	ns_close(s);
}
END_TEST

/* A deferred-accept listener on b; the client's SYN waits for a verdict. */
static struct ns_sock *deferred(struct ns_sock **l, struct ns_sock **c, uint16_t port)
{
	struct ns_sockaddr to = { .addr = B, .port = port };
	struct ns_sock *s;
	int err;

	*l = stream(sb);
	ck_assert_int_eq(ns_setsockopt(*l, NS_TCP_DEFER_ACCEPT, 1), 0);
	/* The previous round left a TIME-WAIT on the port. */
	ck_assert_int_eq(ns_setsockopt(*l, NS_SO_REUSEADDR, 1), 0);
	ck_assert_int_eq(ns_bind(*l, &to), 0);
	ck_assert_int_eq(ns_listen(*l, 4), 0);
	*c = stream(sa);
	ck_assert_int_eq(ns_connect(*c, &to), -EINPROGRESS);
	pump();
	s = ns_accept(*l, NULL, &err);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(state_of(s), NS_TCP_SYN_RECEIVED);
	run_ms(500); /* nothing answers the SYN meanwhile */
	ck_assert_int_eq(state_of(*c), NS_TCP_SYN_SENT);
	return s;
}

/* Refused with a RST or an ICMP port unreachable: ECONNREFUSED. */
static void refuse_deferred(bool icmp)
{
	struct ns_sock *l, *c, *s = deferred(&l, &c, 102);
	int v;

	ck_assert_int_eq(ns_accept_refuse(s, icmp, ICMP_UNREACH_PORT), 0);
	pump();
	ck_assert_int_eq(state_of(c), NS_TCP_CLOSED);
	ck_assert_int_eq(ns_getsockopt(c, NS_SO_ERROR, &v), 0);
	ck_assert_int_eq(v, -ECONNREFUSED);
	ns_close(s);
	ns_close(c);
	ns_close(l);
}

START_TEST(test_defer_accept)
{
	struct ns_sock *l, *c, *s;
	char buf[4];

	s = deferred(&l, &c, 102);
	ck_assert_int_eq(ns_accept_complete(s), 0);
	pump();
	ck_assert_int_eq(state_of(c), NS_TCP_ESTABLISHED);
	ck_assert_int_eq(state_of(s), NS_TCP_ESTABLISHED);
	ck_assert_int_eq(ns_send(c, "ok", 2, 0), 2);
	pump();
	ck_assert_int_eq(ns_recv(s, buf, sizeof(buf), 0), 2);
	ns_close(s);
	ns_close(c);
	ns_close(l);

	refuse_deferred(false);
	refuse_deferred(true);
}
END_TEST

START_TEST(test_accept_any)
{
	struct ns_sock *any, *l22, *c1, *c2, *s;
	struct ns_sockaddr zero = { .addr = 0, .port = 0 }, b22 = { .addr = B, .port = 22 }, far, name;
	int err;
	char buf[8];

	ns_parse_hostport("93.184.216.34:443", &far);
	/* Rebuild b's interface as a NAT front: any destination is local. */
	teardown();
	setup_flags(NS_IF_ACCEPT_ANY);
	ck_assert_int_eq(ns_route_add(sa, 0, 0, B, la), 0);
	any = stream(sb);
	ck_assert_int_eq(ns_bind(any, &zero), 0);
	ck_assert_int_eq(ns_listen(any, 8), 0);
	l22 = listener(sb, B, 22);
	c1 = stream(sa);
	c2 = stream(sa);
	ck_assert_int_eq(ns_connect(c1, &far), -EINPROGRESS);
	ck_assert_int_eq(ns_connect(c2, &b22), -EINPROGRESS);
	pump();
	ck_assert_int_eq(state_of(c1), NS_TCP_ESTABLISHED);
	ck_assert_int_eq(state_of(c2), NS_TCP_ESTABLISHED);
	s = ns_accept(any, NULL, &err);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_null(ns_accept(any, NULL, &err)); /* the :22 one is not ours */
	ck_assert_int_eq(ns_getsockname(s, &name), 0);
	ck_assert_uint_eq(name.addr, far.addr); /* the original destination */
	ck_assert_uint_eq(name.port, 443);
	ck_assert_int_eq(ns_send(c1, "nat", 3, 0), 3);
	pump();
	ck_assert_int_eq(ns_recv(s, buf, sizeof(buf), 0), 3);
	ns_close(s);
	s = ns_accept(l22, NULL, &err);
	ck_assert_ptr_nonnull(s);
	ns_close(s);
	ns_close(c1);
	ns_close(c2);
	ns_close(any);
	ns_close(l22);
	pump();
}
END_TEST

START_TEST(test_backlog_syn_drop)
{
	struct ns_sock *l = listener(sb, 0, 103), *c[4];
	struct ns_sockaddr to = { .addr = B, .port = 103 };
	int err, accepted = 0;
	struct ns_sock *s;

	ck_assert_int_eq(ns_listen(l, 1), 0);
	for (int i = 0; i < 4; i++) {
		c[i] = stream(sa);
		ck_assert_int_eq(ns_connect(c[i], &to), -EINPROGRESS);
	}
	pump();
	ck_assert_uint_ge(stats_of(sb).tcp_syn_drop, 2);
	/* Accepting makes room; the dropped SYNs are retried and get in. */
	for (int i = 0; i < 30000 && accepted < 4; i++) {
		while ((s = ns_accept(l, NULL, &err))) {
			accepted++;
			ns_close(s);
		}
		run_ms(1);
	}
	ck_assert_int_eq(accepted, 4);
	for (int i = 0; i < 4; i++)
		ns_close(c[i]);
	ns_close(l);
}
END_TEST

/* Frames waiting on link l (not delivered). */
static unsigned queued(struct ns_link *l)
{
	struct frame f;
	unsigned n = 0;

	while (grab(l, &f)) {
		ns_stack_input(l == lb ? sb : sa, l, f.b, f.len);
		n++;
	}
	return n;
}

START_TEST(test_nagle_and_delack)
{
	struct ns_sock *c, *s;
	char buf[8];

	connect_pair(&c, &s, 104);
	/* Nagle: the second small write waits for the first one's ACK. */
	ck_assert_int_eq(ns_send(c, "a", 1, 0), 1);
	ck_assert_int_eq(ns_send(c, "b", 1, 0), 1);
	ck_assert_uint_eq(queued(lb), 1);
	/* Delayed ACK: one segment is not acknowledged at once... */
	ck_assert_uint_eq(queued(la), 0);
	run_ms(39);
	ck_assert_int_eq(ns_recv(s, buf, sizeof(buf), 0), 1);
	/* ...but after NS_TCP_DELACK (40 ms); then "b" goes. */
	run_ms(5);
	ck_assert_int_eq(ns_recv(s, buf, sizeof(buf), 0), 1);
	ck_assert_int_eq(buf[0], 'b');
	run_ms(100);
	/* NODELAY: both small writes go at once. */
	ck_assert_int_eq(ns_setsockopt(c, NS_TCP_NODELAY, 1), 0);
	ck_assert_int_eq(ns_send(c, "c", 1, 0), 1);
	ck_assert_int_eq(ns_send(c, "d", 1, 0), 1);
	ck_assert_uint_eq(queued(lb), 2);
	/* Two segments: the second one is acknowledged at once. */
	ck_assert_uint_eq(queued(la), 1);
	ns_close(c);
	ns_close(s);
}
END_TEST


/* --------------------------------------------- more state transitions */

START_TEST(test_fin_wait_1_to_time_wait)
{
	struct ns_sock *c, *s;
	struct frame fin, ack;

	connect_pair(&c, &s, 110);
	ck_assert_int_eq(ns_shutdown(c, NS_SHUT_WR), 0);
	ck_assert(grab(lb, &fin));
	ns_stack_input(sb, lb, fin.b, fin.len);
	ck_assert_int_eq(state_of(s), NS_TCP_CLOSE_WAIT);
	ck_assert(grab(la, &ack)); /* b's ACK of the FIN is lost */
	ns_close(s);		   /* its FIN acks ours as well */
	ck_assert_int_eq(state_of(c), NS_TCP_FIN_WAIT_1);
	ck_assert_int_eq(ns_stack_drain(sa, 1), 1);
	ck_assert_int_eq(state_of(c), NS_TCP_TIME_WAIT);
	pump();
	ck_assert_uint_eq(conns(sb), 0);
	ns_close(c);
}
END_TEST

START_TEST(test_syn_received_reset)
{
	struct ns_sock *l = listener(sb, 0, 111), *c = stream(sa);
	struct ns_sockaddr to = { .addr = B, .port = 111 };
	struct frame synack;
	int err;

	ck_assert_int_eq(ns_connect(c, &to), -EINPROGRESS);
	while (ns_stack_drain(sb, 1) == 0 || conns(sb) < 2)
		ns_stack_drain(sa, 10);
	ck_assert(grab(la, &synack)); /* the SYN-ACK never reaches a */
	ck_assert_uint_eq(f_tcp(&synack)->flags, TH_SYN | TH_ACK);
	ns_abort(c);
	ck_assert_uint_eq(conns(sb), 2); /* listener + half-open child */
	/* The child's own RST arrives from a: back to LISTEN, child gone. */
	{
		struct frame r = synack;

		memcpy(r.b, lb->mac, 6);
		memcpy(r.b + 6, la->mac, 6);
		f_ip(&r)->src = htonl(A);
		f_ip(&r)->dst = htonl(B);
		f_ip(&r)->len = htons(40);
		f_ip(&r)->csum = 0;
		f_ip(&r)->csum = (uint16_t)~ns_csum_fold(ns_csum_add(0, f_ip(&r), 20));
		f_tcp(&r)->sport = f_tcp(&synack)->dport;
		f_tcp(&r)->dport = f_tcp(&synack)->sport;
		f_tcp(&r)->seq = htonl(ntohl(f_tcp(&synack)->ack));
		f_tcp(&r)->ack = 0;
		f_tcp(&r)->off = 5 << 4;
		f_tcp(&r)->flags = TH_RST;
		r.len = ETH_HLEN + 40;
		f_fix(&r);
		ns_stack_input(sb, lb, r.b, r.len);
	}
	ck_assert_uint_eq(conns(sb), 1);
	ck_assert_ptr_null(ns_accept(l, NULL, &err));
	ns_close(l);
}
END_TEST

START_TEST(test_listener_close_resets_queue)
{
	struct ns_sock *l = listener(sb, 0, 112), *c = stream(sa);
	struct ns_sockaddr to = { .addr = B, .port = 112 };
	char b[4];

	ck_assert_int_eq(ns_connect(c, &to), -EINPROGRESS);
	pump();
	ck_assert_int_eq(state_of(c), NS_TCP_ESTABLISHED);
	ns_close(l); /* never accepted: the peer is reset */
	pump();
	ck_assert_int_eq(state_of(c), NS_TCP_CLOSED);
	ck_assert_int_eq(ns_recv(c, b, sizeof(b), 0), -ECONNRESET);
	ck_assert_uint_eq(conns(sb), 0);
	ns_close(c);
}
END_TEST

START_TEST(test_time_wait_reuse)
{
	struct ns_sock *c, *s, *l, *c2, *s2;
	struct ns_sockaddr me, to = { .addr = B, .port = 113 };
	int err;

	connect_pair(&c, &s, 113);
	ns_getsockname(c, &me);
	ns_close(s); /* the server closes first: b holds the TIME-WAIT */
	pump();
	ns_close(c);
	pump();
	ck_assert_uint_eq(conns(sb), 1);
	/* The same 4-tuple again, later: the new SYN ends the TIME-WAIT. */
	run_ms(10);
	l = listener(sb, 0, 113);
	c2 = stream(sa);
	ck_assert_int_eq(ns_setsockopt(c2, NS_SO_REUSEADDR, 1), 0);
	ck_assert_int_eq(ns_bind(c2, &me), 0);
	ck_assert_int_eq(ns_connect(c2, &to), -EINPROGRESS);
	pump();
	ck_assert_int_eq(state_of(c2), NS_TCP_ESTABLISHED);
	s2 = ns_accept(l, NULL, &err);
	ck_assert_ptr_nonnull(s2);
	ns_close(s2);
	ns_close(c2);
	ns_close(l);
}
END_TEST

START_TEST(test_connect_timeout)
{
	struct ns_sock *c = stream(sa);
	struct ns_sockaddr to = { .addr = B, .port = 114 };
	struct ns_stats st;
	int v;

	b_dead = true;
	ck_assert_int_eq(ns_connect(c, &to), -EINPROGRESS);
	run_ms(60000);
	ck_assert_int_eq(state_of(c), NS_TCP_SYN_SENT);
	run_ms(70000); /* 1 + 2 + ... + 64 s: six retries, then give up */
	ck_assert_int_eq(state_of(c), NS_TCP_CLOSED);
	ck_assert_int_eq(ns_getsockopt(c, NS_SO_ERROR, &v), 0);
	ck_assert_int_eq(v, -ETIMEDOUT);
	ns_stack_stats(sa, &st);
	ck_assert_uint_eq(st.tcp_rto, 6);
	ns_close(c);
}
END_TEST

START_TEST(test_orphan_fin_wait_2_timeout)
{
	struct ns_sock *c, *s;

	connect_pair(&c, &s, 115);
	ck_assert_int_eq(ns_setsockopt(c, NS_TCP_LINGER2, 5000), 0);
	ns_close(c);
	pump();
	ck_assert_int_eq(state_of(s), NS_TCP_CLOSE_WAIT); /* s never closes */
	ck_assert_uint_eq(conns(sa), 1);
	run_ms(5100);
	ck_assert_uint_eq(conns(sa), 0);
	ns_close(s);
}
END_TEST

START_TEST(test_close_with_unread_data_resets)
{
	struct ns_sock *c, *s;
	char b[4];

	connect_pair(&c, &s, 116);
	ck_assert_int_eq(ns_send(c, "unread", 6, 0), 6);
	pump();
	ns_close(s); /* RFC 2525 2.17: data would be lost, so RST */
	pump();
	ck_assert_int_eq(ns_recv(c, b, sizeof(b), 0), -ECONNRESET);
	ck_assert_uint_eq(conns(sb), 0);
	ns_close(c);
}
END_TEST


START_TEST(test_random_segments)
{
	/* Mangled copies of a real segment (flags, numbers, options, length)
	 * at an established connection: never a crash, the out-of-order
	 * memory stays inside the receive buffer. */
	struct ns_sock *c, *s;
	struct frame f, r;
	uint64_t x = 12345;
	char buf[4096];

	connect_pair(&c, &s, 117);
	ck_assert_int_eq(ns_send(c, buf, 1200, 0), 1200);
	ck_assert(grab(lb, &f));
	ns_stack_input(sb, lb, f.b, f.len);
	for (int i = 0; i < 20000; i++) {
		uint32_t base = ntohl(f_tcp(&f)->seq), hl, len;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		r = f;
		f_tcp(&r)->flags = (uint8_t)(x >> 11);
		f_tcp(&r)->seq = htonl(base + (uint32_t)((x >> 20) % 600000) - 300000);
		f_tcp(&r)->ack = htonl(ntohl(f_tcp(&f)->ack) + (uint32_t)((x >> 40) % 64) - 32);
		f_tcp(&r)->win = (uint16_t)(x >> 48);
		hl = 20 + 4 * (uint32_t)((x >> 33) % 11);
		f_tcp(&r)->off = (uint8_t)(hl / 4) << 4;
		for (uint32_t k = 20; k < hl; k++)
			((uint8_t *)f_tcp(&r))[k] = (uint8_t)(x >> (k % 56));
		len = hl + (uint32_t)((x >> 5) % 1200);
		f_ip(&r)->len = htons((uint16_t)(20 + len));
		f_ip(&r)->csum = 0;
		f_ip(&r)->csum = (uint16_t)~ns_csum_fold(ns_csum_add(0, f_ip(&r), 20));
		r.len = ETH_HLEN + 20 + len;
		f_fix(&r);
		ns_stack_input(sb, lb, r.b, r.len);
		ck_assert_uint_le(stats_of(sb).ooo_mem, TCP_DEFAULT_RCVBUF);
		drop_wire();
		if (state_of(s) == NS_TCP_CLOSED)
			break;
		if (i % 1000 == 0)
			run_ms(100);
	}
	while (ns_recv(s, buf, sizeof(buf), 0) > 0)
		;
	ns_close(c);
	ns_close(s);
	run_ms(200000);
	ck_assert_uint_eq(stats_of(sb).ooo_mem, 0);
	ck_assert_uint_eq(conns(sa), 0);
}
END_TEST


START_TEST(test_tail_loss_probe)
{
	/* The last two of five segments are lost: no duplicate ACKs can
	 * come. The tail loss probe (RFC 8985 7, after 2 SRTT, at least
	 * 10 ms) resends the last one; its SACK shows the other missing
	 * (early retransmit): all is there long before the 200 ms RTO. */
	struct ns_sock *c, *s;
	static uint8_t out[5 * 1448], in[sizeof(out)];
	struct frame f;
	ssize_t n, got = 0;

	connect_pair(&c, &s, 118);
	ck_assert_int_eq(ns_send(c, "rtt", 3, 0), 3); /* an RTT sample first */
	run_ms(50);
	ck_assert_int_eq(ns_recv(s, in, sizeof(in), 0), 3);
	ck_assert_int_eq(ns_send(c, out, sizeof(out), 0), (ssize_t)sizeof(out));
	for (int i = 0; i < 5; i++) {
		ck_assert(grab(lb, &f));
		if (i < 3)
			ns_stack_input(sb, lb, f.b, f.len);
	}
	for (int ms = 0; ms < 60 && got < (ssize_t)sizeof(in); ms++) {
		run_ms(1);
		while ((n = ns_recv(s, in + got, sizeof(in) - (size_t)got, 0)) > 0)
			got += n;
	}
	ck_assert_int_eq((int)got, (int)sizeof(in));
	ck_assert_uint_eq(stats_of(sa).tcp_rto, 0);
	ns_close(c);
	ns_close(s);
}
END_TEST


START_TEST(test_dsack_for_duplicate)
{
	/* A segment that arrives twice is reported with a D-SACK block
	 * (RFC 2883): the duplicate range, below the cumulative ACK. */
	struct ns_sock *c, *s;
	struct frame f, a;
	struct tcp_opts o;
	uint32_t seq;

	connect_pair(&c, &s, 119);
	client_segment(c, &f);
	pump();
	seq = ntohl(f_tcp(&f)->seq);
	ns_stack_input(sb, lb, f.b, f.len); /* again */
	ck_assert(grab(la, &a));
	ck_assert_int_eq(tcp_opt_parse((uint8_t *)f_tcp(&a) + 20, (f_tcp(&a)->off >> 4) * 4u - 20,
				       &o), 0);
	ck_assert_uint_eq(ntohl(f_tcp(&a)->ack), seq + 1);
	ck_assert_uint_eq(o.nsack, 1);
	ck_assert_uint_eq(o.sack[0].start, seq);
	ck_assert_uint_eq(o.sack[0].end, seq + 1);
	ns_close(c);
	ns_close(s);
}
END_TEST

START_TEST(test_max_conns_active)
{
	struct ns_stack_cfg cfg = { .clock = clk, .seed = 9, .tcp_max_conns = 2 };
	struct ns_stack *small = ns_stack_new(&cfg);
	struct ns_link *x, *y;
	struct ns_sock *c[3];
	struct ns_sockaddr to = { .addr = B, .port = 120 };

	ck_assert_int_eq(ns_link_pair(1500, 0, &x, &y), 0);
	ck_assert_int_eq(ns_iface_add(small, x, A, 24, 0), 0);
	for (int i = 0; i < 3; i++)
		c[i] = stream(small);
	ck_assert_uint_eq(conns(small), 0); /* bare sockets do not count */
	ck_assert_int_eq(ns_connect(c[0], &to), -EINPROGRESS);
	ck_assert_int_eq(ns_connect(c[1], &to), -EINPROGRESS);
	ck_assert_int_eq(ns_connect(c[2], &to), -ENOBUFS);
	ck_assert_uint_eq(conns(small), 2);
	for (int i = 0; i < 3; i++)
		ns_close(c[i]);
	ck_assert_uint_eq(conns(small), 0);
	ns_stack_free(small);
	ns_link_destroy(x);
	ns_link_destroy(y);
}
END_TEST

/* ------------------------------------------------------- blocking API */

static volatile bool pumping;

static void *pump_thread(void *arg)
{
	unsigned idle = 0;

	(void)arg;
	while (pumping) {
		if (pump()) {
			idle = 0;
			continue;
		}
		usleep(200);
		if (++idle > 5) { /* quiet: let virtual time reach the next timer */
			uint64_t a = ns_stack_next_timer_us(sa), b = ns_stack_next_timer_us(sb);
			uint64_t d = a < b ? a : b;

			if (d != UINT64_MAX)
				ns_clock_advance(clk, d ? d : 1);
			ns_stack_poll(sa);
			ns_stack_poll(sb);
			idle = 0;
		}
	}
	return NULL;
}

static uint8_t out[500000];
static ssize_t writer_rc;

static void *writer_thread(void *arg)
{
	writer_rc = ns_send(arg, out, sizeof(out), 0);
	return NULL;
}

START_TEST(test_blocking_api)
{
	struct ns_sock *l, *c, *s;
	struct ns_sockaddr any = { .addr = 0, .port = 7 }, to = { .addr = B, .port = 7 }, peer;
	static uint8_t in[sizeof(out)];
	pthread_t th, w;
	int err;

	l = ns_socket(sb, NS_SOCK_STREAM, &err);
	c = ns_socket(sa, NS_SOCK_STREAM, &err);
	ck_assert_int_eq(ns_bind(l, &any), 0);
	ck_assert_int_eq(ns_listen(l, 4), 0);
	pumping = true;
	pthread_create(&th, NULL, pump_thread, NULL);
	ck_assert_int_eq(ns_connect(c, &to), 0);
	s = ns_accept(l, &peer, &err);
	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(i ^ (i >> 8));
	/* Blocking connect and accept done; now send, recv, PEEK, WAITALL. */
	ck_assert_int_eq(ns_send(c, out, 100, 0), 100);
	ck_assert_int_eq(ns_recv(s, in, 100, NS_MSG_WAITALL), 100);
	ck_assert_int_eq(ns_send(c, out, 10, 0), 10);
	ck_assert_int_eq(ns_recv(s, in, 4, NS_MSG_PEEK), 4);
	ck_assert_int_eq(ns_recv(s, in, 10, NS_MSG_WAITALL), 10);
	ck_assert_int_eq(memcmp(in, out, 10), 0);
	ns_close(l);
	pumping = false;
	pthread_join(th, NULL);

	/* The big transfer: a writer thread's one blocking send of more
	 * than both buffers hold, one blocking WAITALL receive here. */
	pumping = true;
	pthread_create(&th, NULL, pump_thread, NULL);
	pthread_create(&w, NULL, writer_thread, c);
	ck_assert_int_eq(ns_recv(s, in, sizeof(in), NS_MSG_WAITALL), (ssize_t)sizeof(in));
	pthread_join(w, NULL);
	ck_assert_int_eq(writer_rc, (ssize_t)sizeof(out));
	ck_assert_int_eq(memcmp(in, out, sizeof(out)), 0);
	ns_close(c);
	ck_assert_int_eq(ns_recv(s, in, 10, 0), 0); /* blocks until the FIN */
	ns_close(s);
	pumping = false;
	pthread_join(th, NULL);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("netstack_tcp");
	TCase *pure = tcase_create("pure");
	TCase *tc = tcase_create("stacks");

	tcase_add_test(pure, test_seq_arith);
	tcase_add_test(pure, test_options);
	tcase_add_test(pure, test_rto_estimator);
	suite_add_tcase(s, pure);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_connect_accept_data_close);
	tcase_add_test(tc, test_bulk_both_ways);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_simultaneous_open_and_close);
	tcase_add_test(tc, test_time_wait_expiry);
	tcase_add_test(tc, test_rto_retransmit);
	tcase_add_test(tc, test_abort_resets_peer);
	tcase_add_test(tc, test_blocking_api);
	tcase_add_test(tc, test_loss_sack_recovery);
	tcase_add_test(tc, test_loss_newreno_recovery);
	tcase_add_test(tc, test_reordering_undo);
	tcase_add_test(tc, test_option_negotiation);
	tcase_add_test(tc, test_zero_window_persist);
	tcase_add_test(tc, test_keepalive);
	tcase_add_test(tc, test_user_timeout);
	tcase_add_test(tc, test_rst_validation);
	tcase_add_test(tc, test_paws);
	tcase_add_test(tc, test_icmp_refused_syn_sent);
	tcase_add_test(tc, test_defer_accept);
	tcase_add_test(tc, test_accept_any);
	tcase_add_test(tc, test_backlog_syn_drop);
	tcase_add_test(tc, test_nagle_and_delack);
	tcase_add_test(tc, test_icmp_frag_needed);
	tcase_add_test(tc, test_events_fd_callback);
	tcase_add_test(tc, test_fin_wait_1_to_time_wait);
	tcase_add_test(tc, test_syn_received_reset);
	tcase_add_test(tc, test_listener_close_resets_queue);
	tcase_add_test(tc, test_time_wait_reuse);
	tcase_add_test(tc, test_connect_timeout);
	tcase_add_test(tc, test_orphan_fin_wait_2_timeout);
	tcase_add_test(tc, test_close_with_unread_data_resets);
	tcase_add_test(tc, test_random_segments);
	tcase_add_test(tc, test_tail_loss_probe);
	tcase_add_test(tc, test_dsack_for_duplicate);
	tcase_add_test(tc, test_max_conns_active);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
