/* tcp_state.c — moving an established connection from one stack to
 * another (usernet's save/restore): what the peer can tell apart is kept
 * (sequence numbers, windows and their scales, MSS, the SACK and
 * timestamp options with our timestamp clock, unacknowledged, unsent and
 * unread bytes); what it cannot is rebuilt: out-of-order data and the
 * SACK scoreboard are dropped (the peer resends; a receiver may renege,
 * RFC 2018 8), the restored side resends from snd_una (go-back-N, as
 * after an RTO), congestion control starts from an initial window, and
 * the timers are armed afresh. */
#include <stdlib.h>

#include "netstack/tcp_internal.h"

static bool movable(const struct tcb *t)
{
	return (t->state == NS_TCP_ESTABLISHED || t->state == NS_TCP_CLOSE_WAIT) &&
	       !t->user_wr_shut && t->snd_buf_seq == t->snd_una && t->sndbuf.buf && t->rcvbuf.buf;
}

int tcp_usr_save(struct tcb *t, struct ns_tcp_snapshot *x, void **snd, void **rcv)
{
	if (!movable(t))
		return -EINVAL;
	memset(x, 0, sizeof(*x));
	x->state = t->state;
	ipa_to_sa(&t->laddr, t->lport, &x->local);
	ipa_to_sa(&t->raddr, t->rport, &x->remote);
	x->snd_una = t->snd_una;
	x->snd_max = t->snd_max;
	x->snd_wnd = t->snd_wnd;
	x->rcv_nxt = t->rcv_nxt;
	x->rcv_adv = t->rcv_adv;
	x->snd_mss = t->snd_mss;
	x->rcv_mss = t->rcv_mss;
	x->snd_wscale = t->snd_wscale;
	x->rcv_wscale = t->rcv_wscale;
	x->ws_on = t->ws_on;
	x->sack_on = t->sack_on;
	x->ts_on = t->ts_on;
	x->ts_val = tcp_ts_now(t);
	x->ts_recent = t->ts_recent;
	x->srtt_us = t->rtt.valid ? t->rtt.srtt : 0;
	x->sndbuf = t->sndbuf.cap;
	x->rcvbuf = t->rcvbuf.cap;
	x->snd_len = t->sndbuf.len;
	x->rcv_len = t->rcvbuf.len;
	*snd = malloc(x->snd_len ? x->snd_len : 1);
	*rcv = malloc(x->rcv_len ? x->rcv_len : 1);
	if (!*snd || !*rcv) {
		free(*snd);
		free(*rcv);
		return -ENOMEM;
	}
	ring_get(&t->sndbuf, 0, *snd, x->snd_len);
	ring_get(&t->rcvbuf, 0, *rcv, x->rcv_len);
	return 0;
}

/* A state that could have come from tcp_usr_save. */
static bool state_ok(const struct ns_tcp_snapshot *x)
{
	bool v6 = x->local.family == NS_AF_INET6;

	return (x->state == NS_TCP_ESTABLISHED || x->state == NS_TCP_CLOSE_WAIT) &&
	       v6 == (x->remote.family == NS_AF_INET6) && (v6 || x->local.family == NS_AF_INET) &&
	       x->local.port && x->remote.port && x->sndbuf >= TCP_MIN_BUF &&
	       x->sndbuf <= TCP_MAX_BUF && x->rcvbuf >= TCP_MIN_BUF && x->rcvbuf <= TCP_MAX_BUF &&
	       x->snd_len <= x->sndbuf && x->rcv_len <= x->rcvbuf &&
	       x->rcv_adv - x->rcv_nxt <= x->rcvbuf && x->snd_max - x->snd_una <= x->snd_len &&
	       x->snd_mss >= 64 && x->snd_mss <= 65535 && x->rcv_mss >= 64 && x->rcv_mss <= 65535 &&
	       x->snd_wscale <= TCP_MAX_WSCALE && x->rcv_wscale <= TCP_MAX_WSCALE &&
	       x->srtt_us <= TCP_RTO_MAX_US;
}

static void restore_seq(struct tcb *t, const struct ns_tcp_snapshot *x)
{
	struct ns_stack *st = t->st;

	t->iss = x->snd_una - 1;
	t->irs = x->rcv_nxt - 1;
	t->snd_una = t->snd_nxt = t->snd_buf_seq = x->snd_una;
	t->snd_max = x->snd_max;
	t->snd_wnd = t->max_snd_wnd = x->snd_wnd;
	t->snd_wl1 = x->rcv_nxt;
	t->snd_wl2 = x->snd_una;
	t->snd_mss = x->snd_mss;
	t->rcv_mss = x->rcv_mss;
	t->snd_wscale = x->snd_wscale;
	t->rcv_wscale = x->rcv_wscale;
	t->ws_on = x->ws_on;
	t->sack_on = x->sack_on;
	t->ts_on = x->ts_on;
	t->rcv_nxt = t->last_ack_sent = x->rcv_nxt;
	t->rcv_adv = x->rcv_adv;
	t->ts_recent = x->ts_recent;
	t->ts_recent_age = st->now;
	/* Our timestamps go on from where the old stack's were (PAWS at the
	 * peer throws away segments whose TSval went back). */
	t->ts_offset = x->ts_val - (uint32_t)(st->now / 1000);
	t->fin_rcvd = x->state == NS_TCP_CLOSE_WAIT;
	t->last_rx = t->una_since = st->now;
	cc_init(t);
	t->recover = x->snd_una;
	if (x->srtt_us)
		rtt_sample(&t->rtt, x->srtt_us);
}

int tcp_usr_restore(struct tcb *t, const struct ns_tcp_snapshot *x, const void *snd,
		    const void *rcv)
{
	int rc;

	if (!state_ok(x))
		return -EINVAL;
	if (t->state != NS_TCP_CLOSED || t->chan)
		return -EISCONN;
	t->cfg.sndbuf = x->sndbuf;
	t->cfg.rcvbuf = x->rcvbuf;
	t->laddr = ipa_from_sa(&x->local);
	t->raddr = ipa_from_sa(&x->remote);
	t->lport = x->local.port;
	t->rport = x->remote.port;
	if ((rc = tcb_link(t)) < 0 || (rc = tcb_bind_chan(t)) < 0 || (rc = tcb_alloc_bufs(t)) < 0)
		return rc;
	ring_put(&t->sndbuf, 0, snd, x->snd_len);
	t->sndbuf.len = x->snd_len;
	ring_put(&t->rcvbuf, 0, rcv, x->rcv_len);
	t->rcvbuf.len = x->rcv_len;
	restore_seq(t, x);
	tcb_set_state(t, x->state);
	/* Whatever was in flight goes again; the RTO covers the rest. */
	tcp_output(t);
	if (t->snd_una != t->snd_max && !timer_armed(&t->t_rexmit))
		tcp_arm_rexmit(t);
	return 0;
}
