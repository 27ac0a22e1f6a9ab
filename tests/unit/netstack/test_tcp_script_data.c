/* test_tcp_script_data.c — scripted TCP data transfer: delayed ACKs,
 * Nagle, PAWS and timestamps, out-of-order data and SACK blocks,
 * duplicates, reordering, fragments, data after the FIN, urgent data.
 * Flow control (windows, persist, SWS) is in test_tcp_script_window.c,
 * the randomized receive side in test_tcp_script_random.c (own suite
 * binaries). */
#include <check.h>
#include <stdlib.h>

#include "netstack/internal.h"
#include "tests/unit/netstack/tcpscript_suite.h"

/* RFC 5681 4.2 / RFC 1122 4.2.3.2: a lone segment is ACKed when the
 * delayed-ACK timer (NS_TCP_DELACK, default 40 ms) fires; the second
 * full-sized segment is ACKed at once. */
START_TEST(test_delayed_ack)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);

	TS_IN(t, "P. 1:1001(1000) ack 1");
	TS_NONE(t);
	TS_OUT_AFTER(t, 40, 40, ". 1:1(0) ack 1001");
	TS_IN(t, ". 1001:2449(1448) ack 1");
	TS_NONE(t);
	TS_IN(t, ". 2449:3897(1448) ack 1");
	TS_OUT(t, ". 1:1(0) ack 3897");
	/* and the timer was cancelled by that ACK */
	TS_QUIET(t, 500);
	TS_RECV(t, s, 1, 3896);
	ns_close(s);
}
END_TEST

START_TEST(test_delayed_ack_timeout_option)
{
	struct ns_sock *l = ts_listen(t, 80, 4), *s;

	ck_assert_int_eq(ns_setsockopt(l, NS_TCP_DELACK, 100), 0);
	ts_new_conn(t, 80, 40000);
	TS_IN(t, "S 0:0(0) win 65535 <mss 1460>");
	TS_OUT(t, "S. 0:0(0) ack 1 <mss 1460>");
	TS_IN(t, ". 1:1(0) ack 1");
	s = ts_accept(t, l);
	TS_IN(t, "P. 1:101(100) ack 1");
	TS_OUT_AFTER(t, 100, 100, ". 1:1(0) ack 101");
	/* 0 turns delayed ACKs off */
	ck_assert_int_eq(ns_setsockopt(s, NS_TCP_DELACK, 0), 0);
	TS_IN(t, "P. 101:201(100) ack 1");
	TS_OUT(t, ". 1:1(0) ack 201");
	ns_close(s);
	ns_close(l);
}
END_TEST

/* An ACK rides on data sent before the timer fires (piggybacking). */
START_TEST(test_ack_piggybacks_on_data)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);

	TS_IN(t, "P. 1:101(100) ack 1");
	ts_wait(t, 10);
	ck_assert_int_eq(ts_send(t, s, 50), 50);
	TS_OUT(t, "P. 1:51(50) ack 101");
	TS_QUIET(t, 100);
	ns_close(s);
}
END_TEST

/* Nagle (RFC 9293 3.7.4): while data is unacknowledged, small writes wait
 * and are coalesced; with TCP_NODELAY each goes out at once. */
START_TEST(test_nagle_on)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);

	ck_assert_int_eq(ts_send(t, s, 100), 100);
	TS_OUT(t, "P. 1:101(100) ack 1");
	ck_assert_int_eq(ts_send(t, s, 100), 100);
	ck_assert_int_eq(ts_send(t, s, 100), 100);
	TS_QUIET(t, 150);
	TS_IN(t, ". 1:1(0) ack 101");
	TS_OUT(t, "P. 101:301(200) ack 1");
	/* a full-sized segment is never held */
	ck_assert_int_eq(ts_send(t, s, 1448), 1448);
	TS_OUT(t, "P. 301:1749(1448) ack 1");
	TS_NONE(t);
	ns_close(s);
}
END_TEST

START_TEST(test_nagle_off)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);

	ck_assert_int_eq(ns_setsockopt(s, NS_TCP_NODELAY, 1), 0);
	ck_assert_int_eq(ts_send(t, s, 100), 100);
	TS_OUT(t, "P. 1:101(100) ack 1");
	ck_assert_int_eq(ts_send(t, s, 100), 100);
	TS_OUT(t, "P. 101:201(100) ack 1");
	ck_assert_int_eq(ts_send(t, s, 100), 100);
	TS_OUT(t, "P. 201:301(100) ack 1");
	ns_close(s);
}
END_TEST

/* RFC 7323 5: a segment whose TS val is older than TS.Recent is dropped
 * and answered with an ACK; a newer one is accepted. */
START_TEST(test_paws_rejects_old_timestamp)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);
	uint8_t b[4];

	ts_wait(t, 10);
	TS_IN(t, "P. 1:101(100) ack 1 <nop,nop,TS val 500 ecr *>");
	TS_OUT_AFTER(t, 0, 200, ". 1:1(0) ack 101 <TS val * ecr 500>");
	TS_IN(t, "P. 101:201(100) ack 1 <nop,nop,TS val 400 ecr *>");
	TS_OUT(t, ". 1:1(0) ack 101 <TS val * ecr 500>");
	ck_assert_uint_eq(ts_stats(t).tcp_paws_drop, 1);
	TS_RECV(t, s, 1, 100);
	ck_assert_int_eq(ns_recv(s, b, sizeof(b), 0), -EAGAIN);
	TS_IN(t, "P. 101:201(100) ack 1 <nop,nop,TS val 501 ecr *>");
	TS_OUT_AFTER(t, 0, 200, ". 1:1(0) ack 201 <TS val * ecr 501>");
	TS_RECV(t, s, 101, 100);
	/* a RST is exempt from PAWS (RFC 7323 5.3 R1): it resets */
	TS_IN(t, "R. 201:201(0) ack 1 <nop,nop,TS val 1 ecr *>");
	TS_STATE(s, NS_TCP_CLOSED);
	ns_close(s);
}
END_TEST

/* RFC 2018: out-of-order data is kept and reported in SACK blocks, the
 * most recent first; the ACK for it goes out at once (RFC 5681 4.2). */
START_TEST(test_ooo_queue_and_sack_blocks)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);

	TS_IN(t, ". 1449:2897(1448) ack 1");
	TS_OUT(t, ". 1:1(0) ack 1 <TS val * ecr *,sack 1449:2897>");
	TS_IN(t, ". 4345:5793(1448) ack 1");
	TS_OUT(t, ". 1:1(0) ack 1 <TS val * ecr *,sack 4345:5793 1449:2897>");
	TS_IN(t, ". 7241:8689(1448) ack 1");
	TS_OUT(t, ". 1:1(0) ack 1 <TS val * ecr *,sack 7241:8689 4345:5793 1449:2897>");
	ck_assert_uint_eq(ts_stats(t).ooo_mem, 3 * 1448);
	/* adjacent to a block: it grows and comes first */
	TS_IN(t, ". 5793:7241(1448) ack 1");
	TS_OUT(t, ". 1:1(0) ack 1 <TS val * ecr *,sack 4345:8689 1449:2897>");
	/* the first hole fills: cumulative ACK jumps, immediately */
	TS_IN(t, ". 1:1449(1448) ack 1");
	TS_OUT(t, ". 1:1(0) ack 2897 <TS val * ecr *,sack 4345:8689>");
	TS_IN(t, ". 2897:4345(1448) ack 1");
	TS_OUT(t, ". 1:1(0) ack 8689 <TS val * ecr *>");
	ck_assert_uint_eq(ts_stats(t).ooo_mem, 0);
	TS_RECV(t, s, 1, 8688);
	ns_close(s);
}
END_TEST

/* Without SACK permitted, no SACK blocks are ever sent. */
START_TEST(test_ooo_without_sack)
{
	struct ns_sock *s = ts_passive_open_with(t, 80, NULL, "mss 1460,nop,wscale 7");

	TS_IN(t, ". 1001:2001(1000) ack 1");
	TS_OUT(t, ". 1:1(0) ack 1 <>");
	TS_IN(t, ". 1:1001(1000) ack 1");
	TS_OUT(t, ". 1:1(0) ack 2001 <>");
	TS_RECV(t, s, 1, 2000);
	ns_close(s);
}
END_TEST

/* The out-of-order store is bounded: many disjoint pieces in the window
 * are kept up to a limit, the rest dropped (counted); memory stays below
 * the receive buffer; after the gaps fill the stream is intact. */
START_TEST(test_ooo_memory_bound)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);
	struct ns_stats st;
	int rcvbuf = 0;

	ck_assert_int_eq(ns_getsockopt(s, NS_SO_RCVBUF, &rcvbuf), 0);
	for (uint32_t i = 0; i < 200; i++)
		TS_IN(t, ". %u:%u(100) ack 1", 201 + i * 200, 301 + i * 200);
	st = ts_stats(t);
	ck_assert_uint_gt(st.tcp_ooo_drop, 0);
	ck_assert_uint_le(st.ooo_mem, (size_t)rcvbuf);
	ck_assert_uint_ge(st.ooo_mem, 100);
	ts_flush(t);
	/* far beyond the window: never stored */
	TS_IN(t, ". 4000001:4000101(100) ack 1");
	TS_OUT(t, ". 1:1(0) ack 1");
	ck_assert_uint_eq(ts_stats(t).ooo_mem, st.ooo_mem);
	for (uint32_t seq = 1; seq < 40201; seq += 1000)
		TS_IN(t, ". %u:%u(1000) ack 1", seq, seq + 1000);
	ts_flush(t);
	TS_RECV(t, s, 1, 40200);
	ck_assert_uint_eq(ts_stats(t).ooo_mem, 0);
	ns_close(s);
}
END_TEST

/* A duplicated segment is ACKed at once (RFC 9293 3.10.7.4: not
 * acceptable -> ACK) and its data is not delivered twice. */
START_TEST(test_duplicate_segments)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);
	uint8_t b[4];

	TS_IN(t, "P. 1:501(500) ack 1");
	TS_OUT_AFTER(t, 0, 200, ". 1:1(0) ack 501");
	TS_IN(t, "P. 1:501(500) ack 1");
	TS_OUT(t, ". 1:1(0) ack 501");
	/* a D-SACK block for the duplicate (RFC 2883) is optional */
	ck_assert(t->last.has_ts);
	ck_assert_msg(t->last.nsack == 0 || (t->last.nsack == 1 && t->last.sack[0][0] == 1 &&
					     t->last.sack[0][1] == 501),
		      "bad SACK on a duplicate: %u blocks", t->last.nsack);
	/* partly new: the new part is kept */
	TS_IN(t, "P. 301:801(500) ack 1");
	TS_OUT_AFTER(t, 0, 200, ". 1:1(0) ack 801");
	TS_RECV(t, s, 1, 800);
	ck_assert_int_eq(ns_recv(s, b, sizeof(b), 0), -EAGAIN);
	ns_close(s);
}
END_TEST

/* Reordered segments reassemble into the right stream. */
START_TEST(test_reordering)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);

	TS_IN(t, ". 2001:3001(1000) ack 1");
	TS_IN(t, ". 1001:2001(1000) ack 1");
	TS_IN(t, ". 4001:5001(1000) ack 1");
	TS_IN(t, ". 1:1001(1000) ack 1");
	ts_flush(t);
	TS_IN(t, "P. 3001:4001(1000) ack 1");
	TS_OUT(t, ". 1:1(0) ack 5001 <TS val * ecr *>");
	TS_RECV(t, s, 1, 5000);
	ns_close(s);
}
END_TEST

/* RFC 7323 4.3: one ACK for two segments echoes the earlier TS val
 * (TS.Recent only moves for a segment at or below Last.ACK.sent). */
START_TEST(test_ts_echo_with_delayed_ack)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);

	ts_wait(t, 5);
	TS_IN(t, ". 1:1449(1448) ack 1 <nop,nop,TS val 200 ecr *>");
	TS_IN(t, ". 1449:2897(1448) ack 1 <nop,nop,TS val 201 ecr *>");
	TS_OUT(t, ". 1:1(0) ack 2897 <TS val * ecr 200>");
	TS_IN(t, ". 2897:4345(1448) ack 1 <nop,nop,TS val 202 ecr *>");
	TS_OUT_AFTER(t, 0, 200, ". 1:1(0) ack 4345 <TS val * ecr 202>");
	/* our TS val moves with the clock (1 ms ticks) */
	uint32_t v = t->last.tsval;

	ts_wait(t, 1000);
	TS_IN(t, ". 4345:4346(1) ack 1 <nop,nop,TS val 1202 ecr *>");
	TS_OUT_AFTER(t, 0, 200, ". 1:1(0) ack 4346");
	ck_assert_uint_ge(t->last.tsval - v, 1000);
	ck_assert_uint_le(t->last.tsval - v, 1200);
	TS_RECV(t, s, 1, 4345);
	ns_close(s);
}
END_TEST

/* RFC 2018 4: at most as many blocks as fit with TS (3), the block of
 * the segment that triggered the ACK first, then the most recent ones. */
START_TEST(test_sack_block_limit_and_order)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);

	for (uint32_t k = 1; k <= 5; k++) {
		TS_IN(t, ". %u:%u(100) ack 1", 1 + k * 200, 101 + k * 200);
		ts_flush(t);
	}
	/* now 201:301 401:501 601:701 801:901 1001:1101, 1001 the newest */
	TS_IN(t, ". 301:401(100) ack 1"); /* joins 201:301 and 401:501 */
	TS_OUT(t, ". 1:1(0) ack 1 <TS val * ecr *,sack 201:501 1001:1101 801:901>");
	ns_close(s);
}
END_TEST

/* A segment that arrives in IP fragments is reassembled and processed. */
START_TEST(test_fragmented_segment)
{
	static uint8_t l4[4000], f[NS_FRAME_BUF];
	struct ns_sock *s = ts_passive_open(t, 80, NULL);
	size_t len = TS_BUILD(t, l4, sizeof(l4), "P. 1:2001(2000) ack 1");

	ts_inject_frame(t, f,
			ts_build_ip(t, f, NS_PROTO_TCP, 4242, 1024 / 8, l4 + 1024, len - 1024));
	TS_NONE(t);
	ts_inject_frame(t, f, ts_build_ip(t, f, NS_PROTO_TCP, 4242, IP_MF, l4, 1024));
	TS_OUT_AFTER(t, 0, 200, ". 1:1(0) ack 2001");
	TS_RECV(t, s, 1, 2000);
	ck_assert_uint_eq(ts_stats(t).reass_mem, 0);
	ns_close(s);
}
END_TEST

/* RFC 7323 5.2: PAWS compares timestamps modulo 2^32: a value that
 * wrapped past zero is newer, one just below TS.Recent older. */
START_TEST(test_paws_timestamp_wraparound)
{
	struct ns_sock *l = ts_listen(t, 80, 4), *a;

	ts_new_conn(t, 80, 40000);
	TS_IN(t, "S 0:0(0) win 65535 <mss 1460,nop,nop,TS val 4294967200 ecr 0>");
	TS_OUT(t, "S. 0:0(0) ack 1 <mss 1460,TS val * ecr 4294967200>");
	TS_IN(t, ". 1:1(0) ack 1 <nop,nop,TS val 4294967290 ecr *>");
	a = ts_accept(t, l);
	TS_IN(t, "P. 1:101(100) ack 1 <nop,nop,TS val 20 ecr *>"); /* wrapped: newer */
	TS_OUT_AFTER(t, 0, 200, ". 1:1(0) ack 101 <TS val * ecr 20>");
	TS_IN(t, "P. 101:201(100) ack 1 <nop,nop,TS val 4294967295 ecr *>"); /* older */
	TS_OUT(t, ". 1:1(0) ack 101 <TS val * ecr 20>");
	ck_assert_uint_eq(ts_stats(t).tcp_paws_drop, 1);
	TS_RECV(t, a, 1, 100);
	ns_close(a);
	ns_close(l);
}
END_TEST

/* After the FIN, data beyond it is ignored (RFC 9293 3.10.7.4, CLOSE-WAIT:
 * "ignore the segment text"): EOF stays EOF, the ACK stays at FIN + 1. */
START_TEST(test_data_after_fin_ignored)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);
	uint8_t b[200];

	TS_IN(t, "P. 1:101(100) ack 1");
	TS_IN(t, "F. 101:101(0) ack 1");
	TS_OUT(t, ". 1:1(0) ack 102");
	TS_IN(t, "P. 102:202(100) ack 1");
	TS_OUT(t, ". 1:1(0) ack 102");
	TS_RECV(t, s, 1, 100);
	ck_assert_int_eq(ns_recv(s, b, sizeof(b), 0), 0);
	TS_STATE(s, NS_TCP_CLOSE_WAIT);
	ns_close(s);
}
END_TEST

/* RFC 7323 3.2: TS options on later segments of a connection that did
 * not negotiate timestamps are ignored: no TS in our answers, no PAWS. */
START_TEST(test_ts_not_negotiated_ignored)
{
	struct ns_sock *s = ts_passive_open_with(t, 80, NULL, "mss 1460,sackOK,nop,wscale 7");

	TS_IN(t, "P. 1:101(100) ack 1 <nop,nop,TS val 5000 ecr 0>");
	TS_IN(t, "P. 101:201(100) ack 1 <nop,nop,TS val 1 ecr 0>"); /* "old": no PAWS */
	TS_OUT(t, ". 1:1(0) ack 201 <>");
	ck_assert_uint_eq(ts_stats(t).tcp_paws_drop, 0);
	TS_RECV(t, s, 1, 200);
	ns_close(s);
}
END_TEST

/* Urgent data (RFC 9293 3.8.5, RFC 6093): a segment with URG is still
 * ordinary in-line data: delivered in order, nothing lost or doubled. */
START_TEST(test_urgent_data_inline)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);
	uint8_t b[8];

	TS_IN(t, "P. 1:101(100) ack 1");
	TS_IN(t, "PU. 101:151(50) ack 1");
	TS_OUT(t, ". 1:1(0) ack 151");
	TS_IN(t, "P. 151:201(50) ack 1");
	TS_RECV(t, s, 1, 200);
	ck_assert_int_eq(ns_recv(s, b, sizeof(b), 0), -EAGAIN);
	ns_close(s);
}
END_TEST

/* Tests failing on an engine bug (entry named in the comment, in
 * /work/notes/bugs/tcp-core.md); moved to cases[] once fixed. */
static const struct ts_case pending_cases[] = {
	{NULL}, /* none right now */
};

static const struct ts_case cases[] = {
	TS_CASE(test_delayed_ack),
	TS_CASE(test_delayed_ack_timeout_option),
	TS_CASE(test_ack_piggybacks_on_data),
	TS_CASE(test_nagle_on),
	TS_CASE(test_nagle_off),
	TS_CASE(test_paws_rejects_old_timestamp),
	TS_CASE(test_ooo_queue_and_sack_blocks),
	TS_CASE(test_ooo_without_sack),
	TS_CASE(test_ooo_memory_bound),
	TS_CASE(test_duplicate_segments),
	TS_CASE(test_reordering),
	TS_CASE(test_ts_echo_with_delayed_ack),
	TS_CASE(test_sack_block_limit_and_order),
	TS_CASE_V4(test_fragmented_segment),
	TS_CASE(test_paws_timestamp_wraparound),
	TS_CASE(test_ts_not_negotiated_ignored),
	TS_CASE(test_urgent_data_inline),
	TS_CASE(test_data_after_fin_ignored),
};

TS_MAIN("netstack_tcp_script_data", cases, pending_cases, setup, teardown, 30)
