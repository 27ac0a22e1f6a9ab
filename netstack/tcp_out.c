/* tcp_out.c — building and sending segments. Every segment is built in
 * place in the stack's tx frame (headroom for IP and Ethernet in front),
 * its payload copied once from the send ring and summed in that pass. */
#include "netstack/tcp_internal.h"

static void put_hdr(struct tcp_hdr *h, uint16_t sport, uint16_t dport, uint32_t seq,
		    uint32_t ack, uint8_t flags, uint16_t win, size_t optlen)
{
	h->sport = htons(sport);
	h->dport = htons(dport);
	h->seq = htonl(seq);
	h->ack = htonl(ack);
	h->off = (uint8_t)((20 + optlen) / 4) << 4;
	h->flags = flags;
	h->win = htons(win);
	h->csum = 0;
	h->urp = 0;
}

/* Checksum and send a segment of len bytes whose payload beyond the first
 * hlen bytes (header and options) sums to payload_sum. */
static int send_l4(struct ns_stack *st, const struct ipaddr *src, const struct ipaddr *dst,
		   uint8_t *l4, size_t hlen, size_t len, uint32_t payload_sum)
{
	struct tcp_hdr *h = (void *)l4;

	h->csum = (uint16_t)~ipa_pseudo_csum_fold_sum(src, dst, NS_PROTO_TCP, l4, hlen, len,
						      payload_sum);
	st->stats.tcp_tx++;
	return ipa_output(st, src, dst, NS_PROTO_TCP, 0, 0, l4, len, true);
}

uint32_t tcp_rcv_wnd(const struct tcb *t)
{
	return ring_space(&t->rcvbuf);
}

/* The window field to send, and remember the right edge it advertises.
 * Never shrink a window already offered (RFC 9293 3.8.6.2.2). */
static uint16_t window_field(struct tcb *t, bool syn)
{
	uint32_t w = tcp_rcv_wnd(t), scale = syn ? 0 : t->rcv_wscale;

	if (SEQ_LT(t->rcv_nxt + w, t->rcv_adv))
		w = t->rcv_adv - t->rcv_nxt;
	w = u32_min(w >> scale, 65535);
	if (SEQ_GT(t->rcv_nxt + (w << scale), t->rcv_adv))
		t->rcv_adv = t->rcv_nxt + (w << scale);
	return (uint16_t)w;
}

static size_t syn_options(struct tcb *t, uint8_t *p)
{
	bool active = t->state == NS_TCP_SYN_SENT;
	struct tcp_syn_opts so = {
		.mss = (uint16_t)t->rcv_mss,
		.ws = (active ? t->cfg.ws : t->ws_on) ? t->rcv_wscale : -1,
		.sack_perm = active ? t->cfg.sack : t->sack_on,
		.ts = active ? t->cfg.ts : t->ts_on,
		.tsval = tcp_ts_now(t),
		.tsecr = active ? 0 : t->ts_recent,
	};

	return tcp_opt_build_syn(p, &so);
}

static size_t data_options(struct tcb *t, uint8_t *p, uint8_t flags)
{
	struct tcp_sack_block b[4];
	unsigned n = 0, max = t->ts_on ? 3 : 4;

	if (!t->sack_on || !(flags & TH_ACK))
		return tcp_opt_build(p, t->ts_on, tcp_ts_now(t), t->ts_recent, b, 0);
	if (t->dsack) { /* a duplicate: its range goes first (RFC 2883) */
		b[n++] = t->dsack_blk;
		t->dsack = false;
	}
	n += sack_blocks(t, b + n, max - n);
	return tcp_opt_build(p, t->ts_on, tcp_ts_now(t), t->ts_recent, b, n);
}

/* Option bytes the next data segment will carry. */
static size_t optlen_estimate(const struct tcb *t)
{
	size_t n = t->ts_on ? 12 : 0;

	if (t->sack_on && (t->nooo || t->dsack))
		n += 4 + 8 * u32_min(t->nooo + t->dsack, t->ts_on ? 3 : 4);
	return n;
}

/* Send one segment of the connection: len payload bytes from seq. */
static int tcp_xmit(struct tcb *t, uint32_t seq, uint32_t len, uint8_t flags)
{
	struct ns_stack *st = t->st;
	uint8_t *l4 = st->tx + NS_HEADROOM;
	size_t optlen = 0;
	uint32_t payload_sum = 0;
	uint16_t win;

	if (flags & TH_SYN)
		optlen = syn_options(t, l4 + 20);
	else if (!(flags & TH_RST))
		optlen = data_options(t, l4 + 20, flags);
	/* The payload is summed while it is copied: one pass over it, not
	 * two (20 + optlen is a multiple of 4, so the sums chain). */
	if (len)
		payload_sum = ring_get_csum(&t->sndbuf, seq - t->snd_buf_seq, l4 + 20 + optlen,
					    len, 0);
	win = window_field(t, flags & TH_SYN);
	put_hdr((void *)l4, t->lport, t->rport, seq, (flags & TH_ACK) ? t->rcv_nxt : 0, flags,
		win, optlen);
	if (flags & TH_ACK) {
		t->last_ack_sent = t->rcv_nxt;
		t->delack_segs = 0;
		t->rcv_freed = 0;
		t->ack_now = false;
		timer_cancel(st, &t->t_delack);
	}
	return send_l4(st, &t->laddr, &t->raddr, l4, 20 + optlen, 20 + optlen + len, payload_sum);
}

void tcp_send_ack(struct tcb *t)
{
	tcp_xmit(t, t->snd_nxt, 0, TH_ACK);
}

void tcp_send_rst(struct tcb *t)
{
	t->st->stats.tcp_rst_tx++;
	tcp_xmit(t, t->snd_nxt, 0, TH_RST | TH_ACK);
}

void tcp_send_probe(struct tcb *t)
{
	/* An old sequence number: the peer answers with its current ACK and
	 * window (keepalive, zero-window probe). */
	tcp_xmit(t, t->snd_una - 1, 0, TH_ACK);
}

void tcp_send_syn(struct tcb *t)
{
	uint8_t flags = t->state == NS_TCP_SYN_SENT ? TH_SYN : TH_SYN | TH_ACK;

	tcp_xmit(t, t->iss, 0, flags);
	t->snd_nxt = t->iss + 1;
	t->snd_max = seq_max(t->snd_max, t->snd_nxt);
	if (t->backoff == 0) {
		t->rtt_timing = true;
		t->rtt_seq = t->iss;
		t->rtt_start = t->st->now;
	}
	tcp_arm_rexmit(t);
}

void tcp_send_reset_raw(struct ns_stack *st, const struct ipaddr *laddr, uint16_t lport,
			const struct ipaddr *raddr, uint16_t rport, uint32_t seq, uint32_t ack,
			uint8_t flags)
{
	uint8_t *l4 = st->tx + NS_HEADROOM;

	put_hdr((void *)l4, lport, rport, seq, ack, flags, 0, 0);
	st->stats.tcp_rst_tx++;
	send_l4(st, laddr, raddr, l4, 20, 20, 0);
}

void tcp_send_reset_reply(struct ns_stack *st, const struct tcp_seg *s)
{
	const struct ip_rx *rx = s->rx;

	if (s->flags & TH_RST)
		return; /* never answer a RST */
	if (s->flags & TH_ACK)
		tcp_send_reset_raw(st, &rx->daddr, s->dport, &rx->saddr, s->sport, s->ack, 0,
				   TH_RST);
	else
		tcp_send_reset_raw(st, &rx->daddr, s->dport, &rx->saddr, s->sport, 0,
				   s->seq + seg_seqlen(s), TH_RST | TH_ACK);
}

static uint32_t data_end(const struct tcb *t)
{
	return t->snd_buf_seq + t->sndbuf.len;
}

uint32_t tcp_retransmit_at(struct tcb *t, uint32_t seq, uint32_t max)
{
	uint32_t end = data_end(t), len = 0;
	uint8_t flags = TH_ACK;

	if (SEQ_LT(seq, end))
		len = u32_min(u32_min(end - seq, max), tcp_seg_payload(t, optlen_estimate(t)));
	if (t->user_wr_shut && seq + len == end && tcp_fin_sent(t))
		flags |= TH_FIN;
	if (!len && !(flags & TH_FIN))
		return 0;
	if (len && seq + len == end)
		flags |= TH_PSH;
	if (tcp_xmit(t, seq, len, flags) < 0)
		return 0;
	t->st->stats.tcp_rexmit++;
	t->n_rexmit++;
	if (seq == t->snd_una)
		t->una_rexmit_at = t->st->now;
	return len + !!(flags & TH_FIN);
}

/* Bookkeeping after send_one() put len bytes (and the FIN) out at snd_nxt. */
static void note_sent(struct tcb *t, uint32_t len, bool fin, bool rexmit)
{
	uint32_t nxt = t->snd_nxt;

	if (!rexmit && t->dupacks && !t->in_recovery)
		t->lt_bytes += len; /* RFC 3042 limited transmit */
	if (rexmit) {
		t->st->stats.tcp_rexmit++;
		t->n_rexmit++;
	} else if (!t->rtt_timing && len) { /* Karn: time new data only */
		t->rtt_timing = true;
		t->rtt_seq = nxt;
		t->rtt_start = t->st->now;
	}
	if (t->snd_una == t->snd_max)
		t->una_since = t->st->now; /* the first unacknowledged byte */
	t->snd_nxt = nxt + len + fin;
	t->snd_max = seq_max(t->snd_max, t->snd_nxt);
	t->last_tx = t->st->now;
	if (!timer_armed(&t->t_rexmit))
		tcp_arm_rexmit(t);
	else
		tcp_tlp_maybe_arm(t);
	timer_cancel(t->st, &t->t_persist);
}

/* Send what the peer's window and cwnd allow from snd_nxt, one segment;
 * false when nothing (more) should go now. */
/* After an RTO: move snd_nxt past data the scoreboard has as SACKed;
 * the most that may be resent from there before the next SACKed block. */
static uint32_t skip_sacked(struct tcb *t)
{
	uint32_t s, e;

	if (!t->in_loss || !SEQ_LT(t->snd_nxt, t->snd_max))
		return UINT32_MAX;
	if (!sb_next_hole(t, t->snd_nxt, t->snd_max, &s, &e)) {
		t->snd_nxt = t->snd_max;
		return UINT32_MAX;
	}
	t->snd_nxt = s;
	return e - s;
}

static bool send_one(struct tcb *t)
{
	uint32_t hole = skip_sacked(t), mss = u32_min(tcp_seg_payload(t, optlen_estimate(t)), hole);
	uint32_t end = data_end(t), nxt = t->snd_nxt;
	uint32_t avail = SEQ_LT(nxt, end) ? end - nxt : 0;
	uint32_t outstanding = nxt - t->snd_una, flight = cc_flight(t);
	uint32_t rwin = t->snd_wnd > outstanding ? t->snd_wnd - outstanding : 0;
	uint32_t cwin = t->tlp_new ? mss : t->cwnd > flight ? t->cwnd - flight : 0;
	uint32_t len = u32_min(avail, u32_min(u32_min(rwin, cwin), mss));
	bool rexmit = SEQ_LT(nxt, t->snd_max);
	/* The FIN follows the last byte; nxt past end means it is out. */
	bool fin = t->user_wr_shut && len == avail && SEQ_LEQ(nxt, end);
	uint8_t flags = TH_ACK;

	if (!len && !fin)
		return false;
	/* Sender SWS avoidance (RFC 9293 3.8.6.2.1): no runt because a
	 * window is nearly full. Limited by cwnd, the ACKs of what is
	 * outstanding open it; limited by the peer, send once half its
	 * largest window fits or the persist timer insists. */
	if (len < mss && len < avail && !fin &&
	    (cwin <= rwin ? outstanding != 0 : len < t->max_snd_wnd / 2 && !t->force_small))
		return false;
	/* Nagle (RFC 896): one small segment in flight at a time. */
	if (len < mss && len == avail && !rexmit && !fin && !t->cfg.nodelay && outstanding)
		return false;
	if (len && len == avail)
		flags |= TH_PSH;
	if (fin)
		flags |= TH_FIN;
	if (tcp_xmit(t, nxt, len, flags) < 0)
		return false;
	note_sent(t, len, fin, rexmit);
	return true;
}

/* RFC 6675 NextSeg rule 1: resend lost holes while the pipe has room. */
static bool sack_recovery_send(struct tcb *t)
{
	bool sent = false;
	uint32_t seq, len;

	while (cc_flight(t) + tcp_smss(t) <= t->cwnd && cc_sack_next_hole(t, &seq, &len)) {
		uint32_t n = tcp_retransmit_at(t, seq, len);

		if (!n)
			break;
		t->rexmit_nxt = seq + n;
		sent = true;
	}
	return sent;
}

void tcp_tlp_probe(struct tcb *t)
{
	/* RFC 8985 7.3: a new segment, or the last one sent again (with
	 * the FIN if that went). */
	uint32_t end = seq_min(data_end(t), t->snd_max), len;
	bool sent;

	if (t->in_recovery) { /* the first hole's resend may be lost too */
		tcp_retransmit_at(t, t->snd_una, tcp_smss(t));
		return;
	}
	/* New data first: it costs nothing if nothing was lost. */
	t->force_small = true;
	t->tlp_new = true;
	sent = send_one(t);
	t->force_small = false;
	t->tlp_new = false;
	if (sent)
		return;
	if (SEQ_LT(end, t->snd_una)) /* only the FIN is outstanding */
		end = t->snd_una;
	len = u32_min(tcp_smss(t), end - t->snd_una);
	tcp_retransmit_at(t, end - len, len);
}

static bool can_send_data(int state)
{
	return state == NS_TCP_ESTABLISHED || state == NS_TCP_CLOSE_WAIT ||
	       state == NS_TCP_FIN_WAIT_1 || state == NS_TCP_CLOSING ||
	       state == NS_TCP_LAST_ACK;
}

void tcp_output(struct tcb *t)
{
	bool sent = false;

	if (!can_send_data(t->state)) {
		if (t->ack_now && t->state != NS_TCP_CLOSED && t->state != NS_TCP_LISTEN &&
		    t->state != NS_TCP_SYN_SENT)
			tcp_send_ack(t);
		return;
	}
	cc_idle_restart(t);
	if (t->in_recovery && t->sack_on)
		sent = sack_recovery_send(t);
	while (send_one(t))
		sent = true;
	if (!sent && t->ack_now)
		tcp_send_ack(t);
	/* Data waits behind a zero (or too small) window and nothing is in
	 * flight to bring an ACK: the persist timer (RFC 9293 3.8.6.1). */
	if (SEQ_LT(t->snd_nxt, data_end(t)) && t->snd_una == t->snd_max &&
	    !timer_armed(&t->t_persist))
		tcp_arm_persist(t);
}

void tcp_window_update(struct tcb *t)
{
	uint32_t w = tcp_rcv_wnd(t), grow, step, usable = t->rcv_adv - t->rcv_nxt;

	if (!tcp_synchronized(t->state) || t->fin_rcvd)
		return;
	grow = t->rcv_nxt + w - t->rcv_adv;
	if ((int32_t)grow <= 0)
		return;
	/* The peer cannot send a full segment into what it was offered (a
	 * closed window, or the SYN's 16-bit one) but could now: tell it. */
	if ((int32_t)usable < (int32_t)t->rcv_mss && w >= t->rcv_mss) {
		tcp_send_ack(t);
		return;
	}
	/* Receiver SWS avoidance: only a worthwhile opening is announced,
	 * counting what the reads freed (not what the SYN could not say). */
	step = u32_min(t->rcvbuf.cap / 2, 2 * t->rcv_mss);
	if (u32_min(grow, t->rcv_freed) >= step)
		tcp_send_ack(t);
}
