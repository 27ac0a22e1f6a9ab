/* test_tcp_script_rtt.c — scripted tests of the sender's loss machinery
 * added by tcp-loss: RTT measurement from timestamps (RFC 7323 4, RTTM,
 * with the per-ACK weighting of its appendix G), the SACK scoreboard kept
 * across an RTO (RFC 6675 5.1) and SACK reneging (RFC 2018 8). */
#include <check.h>
#include <stdlib.h>

#include "netstack/internal.h"
#include "tests/unit/netstack/tcpscript_suite.h"

/* RTTM: the ACK of a retransmission echoes the retransmission's TSval,
 * so it is a valid sample (50 ms here; Karn's rule without timestamps
 * would take none): SRTT = 7/8 100 + 1/8 50, RTTVAR = 3/4 50 + 1/4 50. */
START_TEST(test_rttm_sample_from_retransmission)
{
	struct ns_sock *s;
	struct ns_tcp_info i;

	t->hs_rtt_ms = 100;
	s = ts_passive_open(t, 80, NULL);
	ck_assert_uint_eq(ts_info(s).srtt_us, 100000);
	ck_assert_int_eq(ns_setsockopt(s, NS_TCP_NODELAY, 1), 0);
	ck_assert_int_eq(ts_send(t, s, 100), 100);
	TS_OUT(t, "P. 1:101(100) ack 1");
	TS_OUT_AFTER(t, 300, 300, "P. 1:101(100) ack 1");
	ts_wait(t, 50);
	TS_IN(t, ". 1:1(0) ack 101"); /* ecr: the retransmission's TSval */
	i = ts_info(s);
	ck_assert_uint_eq(i.srtt_us, 93750);
	ck_assert_uint_eq(i.rttvar_us, 50000);
	ck_assert_uint_eq(i.rto_us, 93750 + 4 * 50000);
	ns_close(s);
}
END_TEST

/* RTTM takes a sample from every ACK that advances snd_una; appendix G
 * divides alpha and beta by ExpectedSamples = ceil(FlightSize / 2 SMSS)
 * (5 for 10 segments out), so one sample of 20 ms against SRTT 100 ms
 * gives SRTT = 100 - 80/40 = 98 ms, RTTVAR = 50 + (80 - 50)/20. */
START_TEST(test_rttm_per_ack_weighting)
{
	struct ns_sock *s;
	struct ns_tcp_info i;

	t->hs_rtt_ms = 100;
	s = ts_passive_open(t, 80, NULL);
	ck_assert_int_eq(ts_send(t, s, 10 * SMSS), 10 * SMSS);
	ts_expect_segments(t, 1, 10, SMSS);
	ts_wait(t, 20);
	TS_IN(t, ". 1:1(0) ack %u", 1 + 2 * SMSS);
	i = ts_info(s);
	ck_assert_uint_eq(i.srtt_us, 98000);
	ck_assert_uint_eq(i.rttvar_us, 51500);
	/* the next ACK, 8 segments out now (4 expected samples), 10 ms
	 * later: 30 ms since the echoed TSval */
	ts_wait(t, 10);
	TS_IN(t, ". 1:1(0) ack %u", 1 + 4 * SMSS);
	i = ts_info(s);
	ck_assert_uint_eq(i.srtt_us, (31 * 98000 + 30000) / 32);
	ns_close(s);
}
END_TEST

/* RFC 7323 4.1: only an ACK that advances the left edge is a sample; a
 * duplicate ACK echoing a later TSval changes nothing, and neither does
 * an echo the stack never sent (from the future). */
START_TEST(test_rttm_only_new_acks)
{
	struct ns_sock *s;
	uint32_t tsval;

	t->hs_rtt_ms = 100;
	s = ts_passive_open(t, 80, NULL);
	ck_assert_int_eq(ts_send(t, s, 4 * SMSS), 4 * SMSS);
	ts_expect_segments(t, 1, 4, SMSS);
	tsval = t->last.tsval;
	ts_wait(t, 30);
	TS_IN(t, ". 1:1(0) ack 1 <nop,nop,TS val 300 ecr %u,nop,nop,sack %u:%u>", tsval, 1 + SMSS,
	      1 + 2 * SMSS);
	ck_assert_uint_eq(ts_info(s).srtt_us, 100000);
	/* a new ACK whose echo lies 10 s in the future: no sample */
	TS_IN(t, ". 1:1(0) ack %u <nop,nop,TS val 301 ecr %u>", 1 + SMSS, tsval + 10000);
	ck_assert_uint_eq(ts_info(s).srtt_us, 100000);
	ns_close(s);
}
END_TEST

/* Segment k (1-based) of a bulk transfer starts at relative seq. */
static uint32_t seg(unsigned k)
{
	return 1 + (k - 1) * SMSS;
}

/* Ten segments out; 1 and 2 lost, 3 and 4 SACKed (two dupacks: no fast
 * retransmit); the RTO resends 1, whose ACK still SACKs 3 and 4: 2 is
 * resent and, with the scoreboard kept (RFC 6675 5.1), 5 next, not 3. */
static struct ns_sock *rto_with_sacked_3_4(void)
{
	struct ns_sock *s = ts_passive_open(t, 80, NULL);

	ck_assert_int_eq(ts_send(t, s, 10 * SMSS), 10 * SMSS);
	ts_expect_segments(t, 1, 10, SMSS);
	TS_IN(t, ". 1:1(0) ack 1 <nop,nop,TS val 200 ecr *,nop,nop,sack %u:%u>", seg(3), seg(4));
	TS_IN(t, ". 1:1(0) ack 1 <nop,nop,TS val 201 ecr *,nop,nop,sack %u:%u>", seg(3), seg(5));
	TS_NONE(t);
	TS_OUT_AFTER(t, 200, 1000, ". %u:%u(%u) ack 1", seg(1), seg(2), SMSS);
	ck_assert_uint_eq(ts_stats(t).tcp_rto, 1);
	TS_IN(t, ". 1:1(0) ack %u <nop,nop,TS val 300 ecr *,nop,nop,sack %u:%u>", seg(2), seg(3),
	      seg(5));
	TS_OUT(t, ". %u:%u(%u) ack 1", seg(2), seg(3), SMSS);
	TS_OUT(t, ". %u:%u(%u) ack 1", seg(5), seg(6), SMSS);
	return s;
}

START_TEST(test_sack_kept_after_rto)
{
	struct ns_sock *s = rto_with_sacked_3_4();

	TS_IN(t, ". 1:1(0) ack %u <nop,nop,TS val 301 ecr *>", seg(6));
	ts_expect_segments(t, seg(6), 3, SMSS);
	ck_assert_uint_eq(ts_stats(t).tcp_rto, 1);
	ns_close(s);
}
END_TEST

/* RFC 2018 8: the receiver may drop what it SACKed. An ACK that lands on
 * the start of a SACKed block shows it did: the sender resends that block
 * soon (max(SRTT/2, 10 ms), as Linux) instead of skipping it forever. */
START_TEST(test_sack_reneging_after_rto)
{
	struct ns_sock *s = rto_with_sacked_3_4();

	/* 2 arrived; 3 and 4 were thrown away */
	TS_IN(t, ". 1:1(0) ack %u <nop,nop,TS val 301 ecr *>", seg(3));
	TS_OUT(t, ". %u:%u(%u) ack 1", seg(6), seg(7), SMSS);
	TS_OUT(t, ". %u:%u(%u) ack 1", seg(7), seg(8), SMSS);
	TS_OUT_AFTER(t, 10, 10, ". %u:%u(%u) ack 1", seg(3), seg(4), SMSS);
	TS_IN(t, ". 1:1(0) ack %u <nop,nop,TS val 302 ecr *>", seg(4));
	TS_OUT(t, ". %u:%u(%u) ack 1", seg(4), seg(5), SMSS);
	ns_close(s);
}
END_TEST

static const struct ts_case pending_cases[] = {
	{NULL}, /* none right now */
};

static const struct ts_case cases[] = {
	TS_CASE(test_rttm_sample_from_retransmission),
	TS_CASE(test_rttm_per_ack_weighting),
	TS_CASE(test_rttm_only_new_acks),
	TS_CASE(test_sack_kept_after_rto),
	TS_CASE(test_sack_reneging_after_rto),
};

TS_MAIN("netstack_tcp_script_rtt", cases, pending_cases, setup, teardown, 60)
