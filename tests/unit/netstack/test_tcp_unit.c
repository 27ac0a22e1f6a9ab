/* test_tcp_unit.c — the TCP engine's unit tests (netstack_tcp): sequence
 * arithmetic, option parsing and building and the RTO estimator on their
 * own, then the state machine through the public socket API between two
 * stacks over an in-memory pair on a virtual clock: open, data, close,
 * TIME-WAIT, resets, timeouts, connection limits and the blocking API.
 * Loss recovery and timers are in test_tcp_unit_loss.c, crafted segments
 * and listener edge cases in test_tcp_unit_segments.c (same binary), the
 * shared fixture in tcp_unit_fixture.c. */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/unit/check_run.h"
#include "tests/unit/netstack/tcp_unit.h"

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
	struct tcp_syn_opts so = {.mss = 1460,
				  .ws = 7,
				  .sack_perm = true,
				  .ts = true,
				  .tsval = 0x11223344,
				  .tsecr = 0};
	struct tcp_sack_block b[3] = {{100, 200}, {300, 400}, {500, 600}};
	struct tcp_opts o;
	uint8_t p[40];
	size_t n = tcp_opt_build_syn(p, &so);
	const uint8_t bad_len[] = {TCPOPT_MSS, 3, 5, 0};
	const uint8_t trunc[] = {TCPOPT_NOP, TCPOPT_TS, 10, 0, 0};
	const uint8_t unknown[] = {30, 4, 0, 0, TCPOPT_WS, 3, 20, TCPOPT_EOL};

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
	struct ns_sockaddr to = {.addr = B, .port = 9999};
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
	struct ns_sockaddr ax = {.addr = A, .port = 5000}, by = {.addr = B, .port = 6000};
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
	struct ns_sockaddr to = {.addr = B, .port = 111};
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
	struct ns_sockaddr to = {.addr = B, .port = 112};
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
	struct ns_sockaddr me, to = {.addr = B, .port = 113};
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
	struct ns_sockaddr to = {.addr = B, .port = 114};
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

START_TEST(test_max_conns_active)
{
	struct ns_stack_cfg cfg = {.clock = clk, .seed = 9, .tcp_max_conns = 2};
	struct ns_stack *small = ns_stack_new(&cfg);
	struct ns_link *x, *y;
	struct ns_sock *c[3];
	struct ns_sockaddr to = {.addr = B, .port = 120};

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
	struct ns_sockaddr any = {.addr = 0, .port = 7}, to = {.addr = B, .port = 7}, peer;
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
	tcase_add_test(tc, test_fin_wait_1_to_time_wait);
	tcase_add_test(tc, test_syn_received_reset);
	tcase_add_test(tc, test_listener_close_resets_queue);
	tcase_add_test(tc, test_time_wait_reuse);
	tcase_add_test(tc, test_connect_timeout);
	tcase_add_test(tc, test_orphan_fin_wait_2_timeout);
	tcase_add_test(tc, test_close_with_unread_data_resets);
	tcase_add_test(tc, test_max_conns_active);
	tcp_unit_add_loss_tests(tc);
	tcp_unit_add_segment_tests(tc);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
