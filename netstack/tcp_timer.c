/* tcp_timer.c — the per-connection timers: retransmission (RFC 6298,
 * also SYN and SYN-ACK), persist (zero-window probes), delayed ACK,
 * keepalive (RFC 9293 3.8.4) and 2MSL (TIME-WAIT, orphaned FIN-WAIT-2). */
#include <stddef.h>

#include "netstack/tcp_internal.h"

#define TCB_OF(tm, field) ((struct tcb *)((char *)(tm) - offsetof(struct tcb, field)))

static void syn_timeout(struct tcb *t)
{
	unsigned limit = t->state == NS_TCP_SYN_SENT ? TCP_SYN_RETRIES : TCP_SYNACK_RETRIES;

	if (t->backoff >= limit) {
		if (t->parent)
			tcb_closed(t); /* a half-open child just goes away */
		else
			tcb_drop(t, t->soft_err ? t->soft_err : -ETIMEDOUT);
		return;
	}
	t->backoff++;
	t->n_rto++;
	t->st->stats.tcp_rto++;
	t->rtt_timing = false;
	t->st->stats.tcp_rexmit++;
	t->n_rexmit++;
	tcp_send_syn(t);
}

/* NS_TCP_USER_TIMEOUT (RFC 5482): data unacknowledged that long; 0 off. */
static uint64_t user_deadline(const struct tcb *t)
{
	return t->cfg.user_timeout_ms ? t->una_since + (uint64_t)t->cfg.user_timeout_ms * 1000
				      : UINT64_MAX;
}

static bool user_timeout_passed(const struct tcb *t)
{
	return t->st->now >= user_deadline(t);
}

static void rexmit_fire(struct ns_stack *st, struct ns_timer *tm)
{
	struct tcb *t = TCB_OF(tm, t_rexmit);

	if (t->state == NS_TCP_SYN_SENT || t->state == NS_TCP_SYN_RECEIVED) {
		syn_timeout(t);
		return;
	}
	if (t->snd_una == t->snd_max)
		return;
	if (user_timeout_passed(t) || t->backoff >= TCP_MAX_RETRIES) {
		tcb_drop(t, t->soft_err ? t->soft_err : -ETIMEDOUT);
		return;
	}
	if (t->tlp_armed) {
		t->tlp_armed = false;
		t->tlp_done = true;
		tcp_tlp_probe(t);
		tcp_arm_rexmit(t);
		return;
	}
	st->stats.tcp_rto++;
	t->n_rto++;
	cc_on_rto(t);
	t->backoff++;
	t->snd_nxt = t->snd_una; /* go back N: resend from the first hole */
	tcp_output(t);
	if (!timer_armed(&t->t_rexmit))
		tcp_arm_rexmit(t);
}

static void persist_fire(struct ns_stack *st, struct ns_timer *tm)
{
	struct tcb *t = TCB_OF(tm, t_persist);

	(void)st;
	if (t->snd_una != t->snd_max)
		return;
	if (t->snd_wnd) { /* a window too small for SWS avoidance: use it */
		t->force_small = true;
		tcp_output(t);
		t->force_small = false;
		return;
	}
	/* Nobody will ever read or send what an orphan holds: it may stay
	 * only so long (RFC 6429 allows aborting in persist; Linux has
	 * tcp_orphan_retries). A user's connection waits as long as needed
	 * (RFC 1122 4.2.2.17). */
	if (!t->sock && t->persist_probes >= TCP_ORPHAN_PROBES) {
		tcp_send_rst(t);
		tcb_drop(t, -ETIMEDOUT);
		return;
	}
	tcp_send_probe(t);
	t->persist_probes++;
	if (t->backoff < 16)
		t->backoff++;
	tcp_arm_persist(t);
}

static void delack_fire(struct ns_stack *st, struct ns_timer *tm)
{
	struct tcb *t = TCB_OF(tm, t_delack);

	(void)st;
	if (t->state != NS_TCP_CLOSED && t->state != NS_TCP_LISTEN)
		tcp_send_ack(t);
}

static void keep_fire(struct ns_stack *st, struct ns_timer *tm)
{
	struct tcb *t = TCB_OF(tm, t_keep);
	uint64_t idle = (uint64_t)t->cfg.keepidle_s * 1000000;

	if (!t->cfg.keepalive || !tcp_synchronized(t->state) || t->state == NS_TCP_TIME_WAIT)
		return;
	if (st->now - t->last_rx < idle && !t->keep_probes) {
		timer_arm(st, &t->t_keep, t->last_rx + idle);
		return;
	}
	if (t->keep_probes >= t->cfg.keepcnt) {
		tcp_send_rst(t);
		tcb_drop(t, -ETIMEDOUT);
		return;
	}
	t->keep_probes++;
	tcp_send_probe(t);
	timer_arm_in(st, &t->t_keep, (uint64_t)t->cfg.keepintvl_s * 1000000);
}

static void twomsl_fire(struct ns_stack *st, struct ns_timer *tm)
{
	(void)st;
	tcb_closed(TCB_OF(tm, t_2msl));
}

void tcp_timers_init(struct tcb *t)
{
	timer_init(&t->t_rexmit, rexmit_fire);
	timer_init(&t->t_persist, persist_fire);
	timer_init(&t->t_delack, delack_fire);
	timer_init(&t->t_keep, keep_fire);
	timer_init(&t->t_2msl, twomsl_fire);
}

void tcp_timers_stop(struct tcb *t)
{
	timer_cancel(t->st, &t->t_rexmit);
	timer_cancel(t->st, &t->t_persist);
	timer_cancel(t->st, &t->t_delack);
	timer_cancel(t->st, &t->t_keep);
	timer_cancel(t->st, &t->t_2msl);
}

/* RFC 8985 7: a tail loss probe before the RTO, when SACK will say what
 * the probe found. A peer that compresses its SACKs (Linux) may send a
 * single ACK for a whole flight; lose that and only a probe avoids the
 * RTO. With one segment out the peer's delayed ACK is to be expected,
 * so then the RTO stays (as in Linux). 0: no probe. */
static uint32_t tlp_timeout(const struct tcb *t, uint32_t rto)
{
	uint32_t pto;

	/* (A handshake-only RTT says little about the data path yet.) */
	/* (After SACK reneging the short timer set then must stay.) */
	if (!t->sack_on || !t->rtt_data || t->backoff || t->tlp_done || t->sack_reneged ||
	    !tcp_synchronized(t->state) || t->snd_max - t->snd_una <= tcp_smss(t))
		return 0;
	pto = u32_max(2 * t->rtt.srtt, TCP_PTO_MIN_US);
	return pto < rto ? pto : 0;
}

void tcp_arm_rexmit(struct tcb *t)
{
	uint32_t rto = rtt_backoff_rto(&t->rtt, t->backoff), pto = tlp_timeout(t, rto);
	uint64_t when = t->st->now + (pto ? pto : rto);

	t->tlp_armed = pto != 0;

	/* Never sleep past the user timeout (like Linux's clamp). */
	if (tcp_synchronized(t->state) && user_deadline(t) < when)
		when = user_deadline(t) > t->st->now ? user_deadline(t) : t->st->now;
	timer_arm(t->st, &t->t_rexmit, when);
}

void tcp_tlp_maybe_arm(struct tcb *t)
{
	/* Armed as an RTO when one segment was out; a second one makes a
	 * probe worthwhile (and earlier than the RTO it replaces). */
	if (timer_armed(&t->t_rexmit) && !t->tlp_armed &&
	    tlp_timeout(t, rtt_backoff_rto(&t->rtt, t->backoff)))
		tcp_arm_rexmit(t);
}

void tcp_arm_persist(struct tcb *t)
{
	/* Probe intervals back off like the RTO, between 200 ms and 60 s. */
	uint32_t d = u32_max(rtt_backoff_rto(&t->rtt, t->backoff), TCP_RTO_MIN_US);

	timer_arm_in(t->st, &t->t_persist, d);
}

void tcp_arm_keepalive(struct tcb *t)
{
	if (t->cfg.keepalive && tcp_synchronized(t->state)) {
		t->keep_probes = 0;
		timer_arm(t->st, &t->t_keep, t->last_rx + (uint64_t)t->cfg.keepidle_s * 1000000);
	} else {
		timer_cancel(t->st, &t->t_keep);
	}
}

void tcp_arm_delack(struct tcb *t)
{
	if (!timer_armed(&t->t_delack))
		timer_arm_in(t->st, &t->t_delack, (uint64_t)t->cfg.delack_ms * 1000);
}
