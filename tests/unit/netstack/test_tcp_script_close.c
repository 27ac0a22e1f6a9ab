/* test_tcp_script_close.c — scripted segment-level TCP tests (packetdrill
 * style, see tcpscript.h) about ending connections: FIN-WAIT-1/2, CLOSING,
 * CLOSE-WAIT, LAST-ACK, TIME-WAIT for 2 MSL and its reuse by a new SYN,
 * half close, abort and close with unread data (RSTs), retransmitted FINs.
 * Separate from test_tcp_script.c (opening connections) to keep each
 * suite about one thing. */

#include <check.h>
#include <stdlib.h>

#include "netstack/internal.h"
#include "tests/unit/netstack/tcpscript_suite.h"

/* Active close: FIN-WAIT-1, FIN-WAIT-2, TIME-WAIT for 2 MSL (here
 * NS_TCP_LINGER2 = 5 s), a retransmitted FIN is re-ACKed, then CLOSED and
 * the port answers RST. */
START_TEST(test_time_wait_2msl)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);

	ck_assert_int_eq(ns_setsockopt(s, NS_TCP_LINGER2, 5000), 0);
	ck_assert_int_eq(ns_shutdown(s, NS_SHUT_WR), 0);
	TS_OUT(t, "F. 1:1(0) ack 1");
	TS_STATE(s, NS_TCP_FIN_WAIT_1);
	TS_IN(t, ". 1:1(0) ack 2");
	TS_STATE(s, NS_TCP_FIN_WAIT_2);
	TS_IN(t, "F. 1:1(0) ack 2");
	TS_OUT(t, ". 2:2(0) ack 2");
	TS_STATE(s, NS_TCP_TIME_WAIT);
	ts_wait(t, 3000);
	TS_IN(t, "F. 1:1(0) ack 2");
	TS_OUT(t, ". 2:2(0) ack 2");
	TS_STATE(s, NS_TCP_TIME_WAIT);
	/* RFC 9293: the retransmitted FIN restarts the 2 MSL timeout */
	TS_QUIET(t, 4900);
	TS_STATE(s, NS_TCP_TIME_WAIT);
	TS_QUIET(t, 200);
	TS_STATE(s, NS_TCP_CLOSED);
	TS_IN(t, ". 2:2(0) ack 2");
	TS_OUT(t, "R 2:2(0)");
	ns_close(s);
	ck_assert_uint_eq(ts_stats(t).tcp_conns, 0);
}
END_TEST

/* RFC 9293 3.6 figure 13: both FINs cross; CLOSING, then TIME-WAIT. */
START_TEST(test_simultaneous_close)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);

	ck_assert_int_eq(ns_setsockopt(s, NS_TCP_LINGER2, 1000), 0);
	ck_assert_int_eq(ns_shutdown(s, NS_SHUT_WR), 0);
	TS_OUT(t, "F. 1:1(0) ack 1");
	TS_IN(t, "F. 1:1(0) ack 1");
	TS_OUT(t, ". 2:2(0) ack 2");
	TS_STATE(s, NS_TCP_CLOSING);
	TS_IN(t, ". 2:2(0) ack 2");
	TS_STATE(s, NS_TCP_TIME_WAIT);
	ts_wait(t, 1001);
	TS_STATE(s, NS_TCP_CLOSED);
	TS_NONE(t);
	ns_close(s);
}
END_TEST

/* Passive close: FIN -> CLOSE-WAIT (EOF, ACKed at once), close -> LAST-ACK
 * with our FIN, its ACK -> CLOSED. */
START_TEST(test_fin_established_close_wait_last_ack)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);
	uint8_t b[4];

	TS_IN(t, "F. 1:1(0) ack 1");
	TS_OUT(t, ". 1:1(0) ack 2");
	TS_STATE(s, NS_TCP_CLOSE_WAIT);
	ck_assert_int_eq(ns_recv(s, b, sizeof(b), 0), 0);
	ck_assert(ns_sock_events(s) & NS_EV_IN);
	/* sending still works in CLOSE-WAIT */
	ck_assert_int_eq(ts_send(t, s, 5), 5);
	TS_OUT(t, "P. 1:6(5) ack 2");
	ck_assert_int_eq(ns_shutdown(s, NS_SHUT_WR), 0);
	TS_OUT(t, "F. 6:6(0) ack 2");
	TS_STATE(s, NS_TCP_LAST_ACK);
	TS_IN(t, ". 2:2(0) ack 7");
	TS_STATE(s, NS_TCP_CLOSED);
	ns_close(s);
	TS_NONE(t);
}
END_TEST

/* FIN-WAIT-1 receiving FIN+ACK of our FIN goes straight to TIME-WAIT. */
START_TEST(test_fin_wait1_fin_ack)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);

	ck_assert_int_eq(ns_shutdown(s, NS_SHUT_WR), 0);
	TS_OUT(t, "F. 1:1(0) ack 1");
	TS_IN(t, "F. 1:1(0) ack 2");
	TS_OUT(t, ". 2:2(0) ack 2");
	TS_STATE(s, NS_TCP_TIME_WAIT);
	ns_close(s);
}
END_TEST

/* A FIN carrying data, and a FIN beyond a hole (held until the hole
 * fills: RFC 9293 3.10.7.4 processes FIN only in sequence). */
START_TEST(test_fin_with_data_and_out_of_order_fin)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);

	TS_IN(t, "P. 1:101(100) ack 1");
	TS_IN(t, "F. 201:301(100) ack 1");
	TS_OUT(t, ". 1:1(0) ack 101 <TS val * ecr *,sack 201:301>");
	TS_STATE(s, NS_TCP_ESTABLISHED);
	TS_IN(t, ". 101:201(100) ack 1");
	TS_OUT(t, ". 1:1(0) ack 302");
	TS_STATE(s, NS_TCP_CLOSE_WAIT);
	TS_RECV(t, s, 1, 300);
	ns_close(s);
}
END_TEST

/* The third handshake segment may carry the FIN: accept() gives a
 * connection already in CLOSE-WAIT. */
START_TEST(test_fin_in_syn_received)
{
	struct ns_sock *l = ts_listen(t, 80, 4), *s;
	uint8_t b[4];

	ts_new_conn(t, 80, 40000);
	TS_IN(t, "S 0:0(0) win 65535 <mss 1460>");
	TS_OUT(t, "S. 0:0(0) ack 1 <mss 1460>");
	TS_IN(t, "F. 1:1(0) ack 1");
	TS_OUT(t, ". 1:1(0) ack 2");
	s = ts_accept(t, l);
	TS_STATE(s, NS_TCP_CLOSE_WAIT);
	ck_assert_int_eq(ns_recv(s, b, sizeof(b), 0), 0);
	ns_close(s);
	TS_OUT(t, "F. 1:1(0) ack 2");
	ns_close(l);
}
END_TEST

/* shutdown(SHUT_WR): our FIN goes out, the peer keeps sending and we keep
 * receiving (half-close), send() fails with EPIPE. */
START_TEST(test_shutdown_wr_half_close)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);

	ck_assert_int_eq(ns_shutdown(s, NS_SHUT_WR), 0);
	TS_OUT(t, "F. 1:1(0) ack 1");
	TS_IN(t, ". 1:1(0) ack 2");
	TS_STATE(s, NS_TCP_FIN_WAIT_2);
	ck_assert_int_eq(ts_send(t, s, 10), -EPIPE);
	for (uint32_t seq = 1; seq < 6000; seq += 1448)
		TS_IN(t, "P. %u:%u(1448) ack 2", seq, seq + 1448);
	TS_RECV(t, s, 1, 5 * 1448);
	ck_assert_uint_ge(t->qlen, 2); /* ACKs at least every second segment */
	ts_flush(t);
	TS_IN(t, "F. 7241:7241(0) ack 2");
	TS_OUT(t, ". 2:2(0) ack 7242");
	TS_STATE(s, NS_TCP_TIME_WAIT);
	ns_close(s);
}
END_TEST

/* ns_abort: RST at snd_nxt (RFC 9293 3.10.4 ABORT), nothing after. */
START_TEST(test_abort_sends_rst)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);

	ck_assert_int_eq(ts_send(t, s, 100), 100);
	TS_OUT(t, "P. 1:101(100) ack 1");
	ck_assert_int_eq(ns_abort(s), 0);
	TS_OUT(t, "R. 101:101(0) ack 1");
	TS_QUIET(t, 5000);
	TS_IN(t, ". 1:1(0) ack 101");
	TS_OUT(t, "R 101:101(0)");
	ck_assert_uint_eq(ts_stats(t).tcp_conns, 0);
}
END_TEST

/* Closing with unread data resets the connection (RFC 9293 3.10.4,
 * RFC 2525 2.17). */
START_TEST(test_close_with_unread_data_rsts)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);

	TS_IN(t, "P. 1:11(10) ack 1");
	ns_close(s);
	TS_OUT(t, "R. 1:1(0) ack 11");
}
END_TEST

/* A new SYN with a higher sequence number reopens a TIME-WAIT pair
 * (RFC 9293 3.6.1, RFC 6191). */
START_TEST(test_time_wait_reopened_by_new_syn)
{
	struct ns_sock *l, *s = ts_passive_open(t, 80, &l), *s2;

	ck_assert_int_eq(ns_shutdown(s, NS_SHUT_WR), 0);
	TS_OUT(t, "F. 1:1(0) ack 1");
	TS_IN(t, "F. 1:1(0) ack 2");
	TS_OUT(t, ". 2:2(0) ack 2");
	TS_STATE(s, NS_TCP_TIME_WAIT);
	ts_wait(t, 1000);
	ts_new_conn(t, 80, 40000);
	t->piss += 100000;
	TS_IN(t, "S 0:0(0) win 65535 <mss 1460,sackOK,TS val 5000 ecr 0,nop,wscale 7>");
	TS_OUT(t, "S. 0:0(0) ack 1 <mss 1460,sackOK,TS val * ecr 5000,nop,wscale *>");
	TS_IN(t, ". 1:1(0) ack 1 <nop,nop,TS val 5001 ecr *>");
	s2 = ts_accept(t, l);
	TS_STATE(s2, NS_TCP_ESTABLISHED);
	ns_close(s2);
	ns_close(s);
	ns_close(l);
}
END_TEST

/* Data arriving after close() is lost: RST (RFC 1122 4.2.2.13). */
START_TEST(test_data_after_close_rsts)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);

	ns_close(s);
	TS_OUT(t, "F. 1:1(0) ack 1");
	TS_IN(t, ". 1:1(0) ack 2");
	TS_IN(t, "P. 1:11(10) ack 2");
	TS_OUT(t, "R. 2:2(0)"); /* the RFC leaves the ACK bit open */
}
END_TEST

/* Retransmitted FINs are ACKed again in CLOSE-WAIT and LAST-ACK; our own
 * unacknowledged FIN is retransmitted on the RTO. */
START_TEST(test_fin_retransmissions)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);

	TS_IN(t, "F. 1:1(0) ack 1");
	TS_OUT(t, ". 1:1(0) ack 2");
	TS_IN(t, "F. 1:1(0) ack 1");
	TS_OUT(t, ". 1:1(0) ack 2");
	TS_STATE(s, NS_TCP_CLOSE_WAIT);
	ck_assert_int_eq(ns_shutdown(s, NS_SHUT_WR), 0);
	TS_OUT(t, "F. 1:1(0) ack 2");
	TS_STATE(s, NS_TCP_LAST_ACK);
	TS_OUT_AFTER(t, 200, 1000, "F. 1:1(0) ack 2");
	TS_IN(t, "F. 1:1(0) ack 1");
	TS_OUT(t, ". 2:2(0) ack 2");
	TS_STATE(s, NS_TCP_LAST_ACK);
	TS_IN(t, ". 2:2(0) ack 2");
	TS_STATE(s, NS_TCP_CLOSED);
	ns_close(s);
}
END_TEST

/* An old SYN (seq not above what we had) for a TIME-WAIT pair does not
 * reopen it; it gets the TIME-WAIT ACK. */
START_TEST(test_time_wait_old_syn_acked)
{
	struct ns_sock *l, *s = ts_passive_open(t, 80, &l);
	int err = 0;

	ck_assert_int_eq(ns_shutdown(s, NS_SHUT_WR), 0);
	TS_OUT(t, "F. 1:1(0) ack 1");
	TS_IN(t, "F. 1:1(0) ack 2");
	TS_OUT(t, ". 2:2(0) ack 2");
	TS_STATE(s, NS_TCP_TIME_WAIT);
	TS_IN(t, "S 0:0(0) win 65535 <mss 1460,sackOK,TS val 50 ecr 0,nop,wscale 7>");
	TS_OUT(t, ". 2:2(0) ack 2");
	TS_STATE(s, NS_TCP_TIME_WAIT);
	ck_assert_ptr_null(ns_accept(l, NULL, &err));
	ck_assert_int_eq(err, -EAGAIN);
	ns_close(s);
	ns_close(l);
}
END_TEST

/* Tests failing on an engine bug (entry named in the comment, in
 * /work/notes/bugs/tcp-core.md); moved to cases[] once fixed. */
static const struct ts_case pending_cases[] = {
	{NULL}, /* none right now */
};

static const struct ts_case cases[] = {
	TS_CASE(test_time_wait_2msl),
	TS_CASE(test_simultaneous_close),
	TS_CASE(test_fin_established_close_wait_last_ack),
	TS_CASE(test_fin_wait1_fin_ack),
	TS_CASE(test_fin_with_data_and_out_of_order_fin),
	TS_CASE(test_fin_in_syn_received),
	TS_CASE(test_shutdown_wr_half_close),
	TS_CASE(test_abort_sends_rst),
	TS_CASE(test_close_with_unread_data_rsts),
	TS_CASE(test_time_wait_reopened_by_new_syn),
	TS_CASE(test_data_after_close_rsts),
	TS_CASE(test_fin_retransmissions),
	TS_CASE(test_time_wait_old_syn_acked),
};

TS_MAIN("netstack_tcp_script_close", cases, pending_cases, setup, teardown, 30)
