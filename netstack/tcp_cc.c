/* tcp_cc.c — the RTO estimator (RFC 6298) and congestion control: slow
 * start and congestion avoidance (RFC 5681, with RFC 3465 byte counting),
 * fast retransmit with NewReno recovery (RFC 6582) and, when the peer
 * SACKs, RFC 6675's pipe-based recovery. */
#include "netstack/tcp_internal.h"

/* ------------------------------------------------------- RTO estimator */

void rtt_init(struct rtt_est *r)
{
	r->srtt = 0;
	r->rttvar = 0;
	r->rto = TCP_RTO_INIT_US;
	r->valid = false;
}

void rtt_sample(struct rtt_est *r, uint32_t rtt)
{
	rtt_sample_n(r, rtt, 1);
}

void rtt_sample_n(struct rtt_est *r, uint32_t rtt, uint32_t n)
{
	uint64_t a = 8ull * (n ? n : 1), b = 4ull * (n ? n : 1);
	uint32_t k;

	rtt = u32_min(rtt, TCP_RTO_MAX_US);
	if (!r->valid) { /* RFC 6298 2.2 */
		r->srtt = rtt;
		r->rttvar = rtt / 2;
		r->valid = true;
	} else { /* 2.3, alpha 1/8, beta 1/4 (each divided by n) */
		uint32_t d = r->srtt > rtt ? r->srtt - rtt : rtt - r->srtt;

		r->rttvar = (uint32_t)(((b - 1) * r->rttvar + d) / b);
		r->srtt = (uint32_t)(((a - 1) * r->srtt + rtt) / a);
	}
	k = u32_max(TCP_CLOCK_G_US, 4 * r->rttvar);
	r->rto = u32_min(u32_max(r->srtt + k, TCP_RTO_MIN_US), TCP_RTO_MAX_US);
}

uint32_t rtt_backoff_rto(const struct rtt_est *r, unsigned shift)
{
	uint64_t v = (uint64_t)r->rto << (shift > 16 ? 16 : shift);

	return v > TCP_RTO_MAX_US ? TCP_RTO_MAX_US : (uint32_t)v;
}

/* --------------------------------------------------- congestion control */

uint32_t cc_initial_window(const struct tcb *t)
{
	uint32_t mss = tcp_smss(t);

	return u32_min(10 * mss, u32_max(2 * mss, 14600)); /* RFC 6928 */
}

void cc_idle_restart(struct tcb *t)
{
	if (t->snd_una == t->snd_max && t->last_tx &&
	    t->st->now - t->last_tx > rtt_backoff_rto(&t->rtt, 0))
		t->cwnd = u32_min(t->cwnd, cc_initial_window(t));
}

void cc_init(struct tcb *t)
{
	t->cwnd = cc_initial_window(t);
	t->ssthresh = UINT32_MAX / 2;
	t->recover = t->iss;
	t->in_recovery = false;
	t->in_loss = false;
	t->dupacks = 0;
	t->ca_acked = 0;
	t->dupthresh = TCP_DUPTHRESH;
	t->undo_valid = false;
}

/* Un-SACKed bytes in [from, to): lost holes not resent yet. */
static uint32_t hole_bytes(const struct tcb *t, uint32_t from, uint32_t to)
{
	uint32_t s, e, n = 0;

	while (SEQ_LT(from, to) && sb_next_hole(t, from, to, &s, &e)) {
		n += e - s;
		from = e;
	}
	return n;
}

uint32_t cc_flight(const struct tcb *t)
{
	uint32_t out, gone, from, edge;

	if (t->in_loss) { /* resent since the RTO, less what was SACKed */
		out = t->snd_nxt - t->snd_una;
		gone = sb_sacked_below(t, t->snd_nxt);
		return out > gone ? out - gone : 0;
	}
	if (!t->in_recovery) {
		out = t->snd_nxt - t->snd_una;
		/* RFC 3042 limited transmit: each of the first two duplicate
		 * ACKs lets one new segment out. */
		gone = u32_min(t->dupacks, 2) * tcp_smss(t);
		return out > gone ? out - gone : 0;
	}
	if (!t->sack_on)
		return t->snd_nxt - t->snd_una;
	/* RFC 6675 pipe: sent, minus SACKed, minus lost and not resent. */
	out = t->snd_max - t->snd_una;
	gone = sb_sacked_bytes(t);
	from = seq_max(t->rexmit_nxt, t->snd_una);
	edge = sb_lost_edge(t);
	if (SEQ_LT(from, edge))
		gone += hole_bytes(t, from, edge);
	return out > gone ? out - gone : 0;
}

static void cc_exit_recovery(struct tcb *t)
{
	uint32_t flight = t->snd_max - t->snd_una;

	/* RFC 6582 3.2 step 3: deflate to min(ssthresh, FlightSize + SMSS). */
	t->cwnd = u32_min(t->ssthresh, u32_max(flight, tcp_smss(t)) + tcp_smss(t));
	t->in_recovery = false;
	t->dupacks = 0;
	t->lt_bytes = 0;
}

static void cc_partial_ack(struct tcb *t, uint32_t acked)
{
	if (t->sack_on) {
		/* The pipe algorithm resends holes; start again above snd_una. */
		t->rexmit_nxt = seq_max(t->rexmit_nxt, t->snd_una);
		return;
	}
	/* RFC 6582 3.2 step 4: resend the next hole, deflate by what was
	 * acknowledged and add back one segment. */
	tcp_retransmit_at(t, t->snd_una, tcp_smss(t));
	t->cwnd = t->cwnd > acked ? t->cwnd - acked : tcp_smss(t);
	if (acked >= tcp_smss(t))
		t->cwnd += tcp_smss(t);
}

void cc_on_ack(struct tcb *t, uint32_t acked)
{
	uint32_t mss = tcp_smss(t);

	if (t->in_recovery) {
		if (SEQ_GEQ(t->snd_una, t->recover))
			cc_exit_recovery(t);
		else
			cc_partial_ack(t, acked);
		return;
	}
	t->dupacks = 0;
	t->lt_bytes = 0;
	if (t->in_loss && SEQ_GEQ(t->snd_una, t->recover))
		t->in_loss = false;
	if (t->cwnd < t->ssthresh) {
		t->cwnd += u32_min(acked, 2 * mss); /* RFC 3465, L = 2 */
	} else {
		t->ca_acked += acked;
		if (t->ca_acked >= t->cwnd) {
			t->ca_acked -= t->cwnd;
			t->cwnd += mss;
		}
	}
	t->cwnd = u32_min(t->cwnd, TCP_MAX_BUF * 4u);
}

static bool cc_loss_detected(const struct tcb *t)
{
	uint32_t smss = tcp_smss(t), oseg = (t->snd_max - t->snd_una + smss - 1) / smss;
	bool unsent = SEQ_LT(t->snd_nxt, t->snd_buf_seq + t->sndbuf.len);

	if (t->dupacks >= t->dupthresh)
		return true;
	/* RFC 5827 early retransmit: too few segments out for DupThresh
	 * duplicates, and nothing new to send that would make more. */
	if (!unsent && oseg >= 2 && oseg < 4 &&
	    (t->dupacks >= oseg - 1 ||
	     (t->sack_on && (sb_sacked_bytes(t) + smss - 1) / smss >= oseg - 1)))
		return true;
	/* RFC 6675 5 (IsLost(HighACK + 1)) */
	return t->sack_on && SEQ_GT(sb_lost_edge(t), t->snd_una);
}

/* Remember what a reduction changes, for cc_check_spurious(). */
static void cc_save_undo(struct tcb *t)
{
	t->undo_valid = t->ts_on;
	t->undo_cwnd = t->cwnd;
	t->undo_ssthresh = t->ssthresh;
	t->undo_tsval = tcp_ts_now(t); /* what the retransmission carries */
	t->undo_reorder = t->dupacks;
	if (t->nsacked)
		t->undo_reorder = u32_max(t->undo_reorder, (t->sacked[t->nsacked - 1].end -
							     t->snd_una) / tcp_smss(t));
}

void cc_check_spurious(struct tcb *t, const struct tcp_opts *o)
{
	if (!t->undo_valid)
		return;
	t->undo_valid = false;
	/* The ACK echoes a TSval older than the retransmission's: the
	 * original arrived, the loss was only reordering or delay. */
	if (!o->ts_ok || !SEQ_LT(o->tsecr, t->undo_tsval))
		return;
	t->cwnd = u32_max(t->cwnd, t->undo_cwnd);
	t->ssthresh = u32_max(t->ssthresh, t->undo_ssthresh);
	t->in_recovery = false;
	t->dupthresh = u32_min(u32_max(t->dupthresh, t->undo_reorder + 1), TCP_MAX_REORDER);
	t->dupacks = 0;
	t->snd_nxt = t->snd_max; /* after an RTO: the rest is still in flight */
	t->in_loss = false;
	t->recover = t->snd_una;
}

static void cc_enter_recovery(struct tcb *t)
{
	/* RFC 3042: limited-transmit segments are not in FlightSize here. */
	uint32_t flight = t->snd_max - t->snd_una - t->lt_bytes, mss = tcp_smss(t);

	cc_save_undo(t);
	t->ssthresh = u32_max(flight / 2, 2 * mss); /* RFC 5681 (4) */
	t->lt_bytes = 0;
	t->recover = t->snd_max;
	t->in_recovery = true;
	t->rtt_timing = false; /* Karn: the timed segment may be resent */
	t->n_fast_rexmit++;
	t->st->stats.tcp_fast_rexmit++;
	t->rexmit_nxt = t->snd_una;
	if (t->sack_on) {
		t->cwnd = t->ssthresh;
		t->rexmit_nxt += tcp_retransmit_at(t, t->snd_una, mss);
	} else {
		tcp_retransmit_at(t, t->snd_una, mss);
		t->cwnd = t->ssthresh + TCP_DUPTHRESH * mss;
	}
}

void cc_on_dupack(struct tcb *t)
{
	t->dupacks++;
	if (t->in_recovery) {
		if (!t->sack_on)
			t->cwnd += tcp_smss(t); /* NewReno inflation */
		return;
	}
	cc_maybe_recover(t);
}

void cc_maybe_recover(struct tcb *t)
{
	/* No new recovery before recover is passed: beyond it for NewReno
	 * (RFC 6582 3.2 step 2), reached for SACK (RFC 6675 5.1). */
	if (!t->in_recovery && cc_loss_detected(t) &&
	    (t->sack_on ? SEQ_GEQ(t->snd_una, t->recover) : SEQ_GT(t->snd_una, t->recover)))
		cc_enter_recovery(t);
}

void cc_on_rto(struct tcb *t)
{
	uint32_t flight = t->snd_max - t->snd_una;

	/* RFC 5681 (4) only for the first timeout of a series. */
	if (t->backoff == 0) {
		if (!t->in_recovery)
			cc_save_undo(t);
		t->ssthresh = u32_max(flight / 2, 2 * tcp_smss(t));
	} else {
		t->undo_valid = false;
	}
	t->cwnd = tcp_smss(t); /* loss window */
	t->in_recovery = false;
	t->dupacks = 0;
	t->lt_bytes = 0;
	t->ca_acked = 0;
	t->recover = t->snd_max; /* RFC 6582 4 */
	t->rtt_timing = false;
	/* RFC 6675 5.1: the scoreboard stays (as in Linux), so the resend
	 * skips SACKed data; RFC 2018 8's reason to drop it, reneging, is
	 * detected instead (sb_reneged()). */
	if (t->sack_reneged || !t->sack_on)
		sb_clear(t);
	t->sack_reneged = false;
	t->in_loss = t->nsacked != 0;
}

void cc_check_lost_rexmit(struct tcb *t)
{
	uint32_t srtt = t->rtt.srtt;

	/* SACKs still arrive well over an RTT after the first hole was
	 * resent, yet it is not acknowledged: on a FIFO path everything
	 * sent before that resend has arrived by now, so the resend itself
	 * was lost (the idea of RACK, RFC 8985, for the one segment that
	 * blocks snd_una). Resend it; the pipe already counts it. */
	if (!t->in_recovery || !t->sack_on || !t->una_rexmit_at || !t->rtt.valid ||
	    t->st->now - t->una_rexmit_at < srtt + srtt / 4 + TCP_CLOCK_G_US)
		return;
	tcp_retransmit_at(t, t->snd_una, tcp_smss(t));
}

bool cc_sack_next_hole(struct tcb *t, uint32_t *seq, uint32_t *len)
{
	uint32_t from = seq_max(t->rexmit_nxt, t->snd_una), edge = sb_lost_edge(t), e;

	if (!SEQ_LT(from, edge) || !sb_next_hole(t, from, edge, seq, &e))
		return false;
	*len = e - *seq;
	return true;
}
