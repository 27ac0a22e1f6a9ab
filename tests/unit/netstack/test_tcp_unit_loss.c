/* test_tcp_unit_loss.c — the TCP engine's unit tests about moving data
 * through trouble (netstack_tcp): SACK and NewReno recovery through an
 * impaired link, reordering undo, option negotiation, zero-window persist,
 * keepalive, user timeout, the tail loss probe, D-SACK, Nagle and delayed
 * ACKs. Separate from test_tcp_unit.c (the state machine) to keep each
 * file about one thing; both share tcp_unit.h's fixture. */
#include <check.h>
#include <stdlib.h>

#include "tests/unit/netstack/tcp_unit.h"

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
	struct ns_stack_cfg cfg = {0};

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
	struct ns_impair_cfg ic = {.loss_bp = loss,
				   .dup_bp = dup,
				   .reorder_bp = reorder,
				   .delay_us = 2000,
				   .reorder_us = 3000,
				   .seed = 99};

	impaired_setup_cfg(&ic);
}

static void connect_pair_retry(struct ns_sock **c, struct ns_sock **s, uint16_t port,
			       void (*tune)(struct ns_sock *))
{
	struct ns_sock *l = listener(sb, 0, port);
	struct ns_sockaddr to = {.addr = B, .port = port};
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
	struct ns_impair_cfg ic = {.delay_us = 10000, .jitter_us = 2000, .seed = 3};
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
	ck_assert_int_eq(
		tcp_opt_parse((uint8_t *)f_tcp(&a) + 20, (f_tcp(&a)->off >> 4) * 4u - 20, &o), 0);
	ck_assert_uint_eq(ntohl(f_tcp(&a)->ack), seq + 1);
	ck_assert_uint_eq(o.nsack, 1);
	ck_assert_uint_eq(o.sack[0].start, seq);
	ck_assert_uint_eq(o.sack[0].end, seq + 1);
	ns_close(c);
	ns_close(s);
}
END_TEST

void tcp_unit_add_loss_tests(TCase *tc)
{
	tcase_add_test(tc, test_loss_sack_recovery);
	tcase_add_test(tc, test_loss_newreno_recovery);
	tcase_add_test(tc, test_reordering_undo);
	tcase_add_test(tc, test_option_negotiation);
	tcase_add_test(tc, test_zero_window_persist);
	tcase_add_test(tc, test_keepalive);
	tcase_add_test(tc, test_user_timeout);
	tcase_add_test(tc, test_nagle_and_delack);
	tcase_add_test(tc, test_tail_loss_probe);
	tcase_add_test(tc, test_dsack_for_duplicate);
}
