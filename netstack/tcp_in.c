/* tcp_in.c — segment arrival (RFC 9293 3.10.7) with the RFC 5961
 * defences (RST and SYN challenge ACKs, ACK range check) and RFC 7323
 * PAWS. Entry: tcp_input(), called by IPv4 for every TCP datagram. */
#include "netstack/tcp_internal.h"

static bool parse_seg(struct ns_stack *st, const struct ip_rx *rx, struct tcp_seg *s)
{
	struct tcp_hdr h;
	size_t hl;

	if (rx->l4len < sizeof(h))
		goto bad;
	memcpy(&h, rx->l4, sizeof(h));
	hl = (size_t)(h.off >> 4) * 4;
	if (hl < 20 || hl > rx->l4len)
		goto bad;
	if (!(rx->ifc->flags & NS_IF_NO_CSUM_RX) &&
	    ipa_pseudo_csum_fold_sum(&rx->saddr, &rx->daddr, NS_PROTO_TCP, rx->l4, rx->l4len,
				     rx->l4len, 0) != 0xffff) {
		st->stats.rx_bad_csum++;
		return false;
	}
	if (tcp_opt_parse(rx->l4 + 20, hl - 20, &s->opt) < 0)
		goto bad;
	s->rx = rx;
	s->sport = ntohs(h.sport);
	s->dport = ntohs(h.dport);
	s->seq = ntohl(h.seq);
	s->ack = ntohl(h.ack);
	s->flags = h.flags;
	s->wnd = ntohs(h.win);
	s->data = rx->l4 + hl;
	s->len = (uint32_t)(rx->l4len - hl);
	/* Port 0 and SYN+RST are never legitimate. */
	if (!s->sport || !s->dport || (s->flags & (TH_SYN | TH_RST)) == (TH_SYN | TH_RST))
		goto bad;
	return true;
bad:
	st->stats.tcp_bad++;
	return false;
}

/* ------------------------------------------------------ option agreement */

static void syn_negotiate(struct tcb *t, const struct tcp_seg *s)
{
	const struct tcp_opts *o = &s->opt;
	uint32_t path = tcp_path_mss(t->st, &t->raddr, &t->cfg);

	t->snd_mss = u32_min(o->mss_ok && o->mss ? o->mss : TCP_DEFAULT_MSS, path);
	t->snd_mss = u32_max(t->snd_mss, 64);
	t->rcv_mss = path;
	t->ws_on = t->cfg.ws && o->ws_ok;
	t->snd_wscale = t->ws_on ? o->ws : 0;
	if (!t->ws_on)
		t->rcv_wscale = 0;
	t->ts_on = t->cfg.ts && o->ts_ok;
	if (t->ts_on) {
		t->ts_recent = o->tsval;
		t->ts_recent_age = t->st->now;
	}
	t->sack_on = t->cfg.sack && o->sack_perm;
	t->irs = s->seq;
	t->rcv_nxt = s->seq + 1;
	t->rcv_adv = t->rcv_nxt;
	t->last_ack_sent = t->rcv_nxt;
	/* The window of a SYN is never scaled (RFC 7323 2.2). */
	t->snd_wnd = s->wnd;
	t->max_snd_wnd = s->wnd;
	t->snd_wl1 = s->seq;
	t->snd_wl2 = s->ack;
	cc_init(t);
}

/* ------------------------------------------------------------- LISTEN */

static bool listener_full(struct tcb *l)
{
	unsigned max = l->backlog ? l->backlog : 1;

	return l->synq.len >= max || l->accq.len >= max ||
	       l->st->ntcbs >= l->st->tcp_max_conns;
}

static void listen_input(struct tcb *l, const struct tcp_seg *s)
{
	struct ns_stack *st = l->st;
	const struct ip_rx *rx = s->rx;
	struct tcb *c = NULL;

	if (s->flags & TH_RST)
		return;
	if (s->flags & TH_ACK) {
		tcp_send_reset_reply(st, s);
		return;
	}
	if (!(s->flags & TH_SYN) || (s->flags & TH_FIN))
		return;
	if (listener_full(l) || !(c = tcb_new(st, &l->cfg)) || tcb_link(c) < 0) {
		if (c)
			tcb_free(c);
		st->stats.tcp_syn_drop++;
		return;
	}
	c->laddr = rx->daddr;
	c->lport = s->dport;
	c->raddr = rx->saddr;
	c->rport = s->sport;
	c->rcv_wscale = tcp_choose_wscale(c->cfg.rcvbuf);
	if (tcb_bind_chan(c) < 0 || tcb_alloc_bufs(c) < 0) {
		tcb_free(c);
		st->stats.tcp_syn_drop++;
		return;
	}
	c->parent = l;
	c->iss = tcp_isn(st, c);
	c->snd_una = c->snd_nxt = c->snd_max = c->iss;
	c->snd_buf_seq = c->iss + 1;
	syn_negotiate(c, s);
	c->last_rx = st->now;
	tcb_set_state(c, NS_TCP_SYN_RECEIVED);
	if (c->cfg.defer_accept) {
		/* The user decides before anything goes back to the peer. */
		c->deferred = true;
		c->syn_ip_len = (uint8_t)u32_min((uint32_t)rx->iplen, TCP_SYN_IP_MAX);
		memcpy(c->syn_ip, rx->ip, c->syn_ip_len);
		tcb_list_append(&l->accq, c);
		tcb_notify(c);
	} else {
		tcb_list_append(&l->synq, c);
		tcp_send_syn(c);
	}
}

/* RFC 6298 5.7: the SYN (or SYN-ACK) had to be resent and gave no RTT
 * sample: data starts with an RTO of 3 s, not the initial 1 s. */
static void syn_loss_rto(struct tcb *t)
{
	if (t->backoff && !t->rtt.valid)
		t->rtt.rto = u32_max(t->rtt.rto, TCP_RTO_AFTER_SYN_LOSS_US);
}

/* ----------------------------------------------------------- SYN-SENT */

static void synsent_input(struct tcb *t, const struct tcp_seg *s)
{
	bool ack_ok = false;

	if (s->flags & TH_ACK) {
		if (SEQ_LEQ(s->ack, t->iss) || SEQ_GT(s->ack, t->snd_max)) {
			tcp_send_reset_reply(t->st, s);
			return;
		}
		ack_ok = true;
	}
	if (s->flags & TH_RST) {
		if (ack_ok)
			tcb_drop(t, -ECONNREFUSED);
		return;
	}
	if (!(s->flags & TH_SYN))
		return;
	syn_negotiate(t, s);
	if (!ack_ok) {
		/* Simultaneous open (RFC 9293 3.5, figure 8). */
		tcb_set_state(t, NS_TCP_SYN_RECEIVED);
		tcp_send_syn(t);
		return;
	}
	if (t->rtt_timing)
		rtt_sample(&t->rtt, (uint32_t)(t->st->now - t->rtt_start));
	syn_loss_rto(t);
	t->rtt_timing = false;
	t->backoff = 0;
	t->snd_una = s->ack;
	timer_cancel(t->st, &t->t_rexmit);
	tcb_set_state(t, NS_TCP_ESTABLISHED);
	t->ack_now = true;
	tcp_output(t);
}

/* ------------------------------------------------- synchronized states */

static bool paws_reject(struct tcb *t, const struct tcp_seg *s)
{
	if (!t->ts_on || !s->opt.ts_ok || (s->flags & TH_RST))
		return false;
	if (SEQ_GEQ(s->opt.tsval, t->ts_recent))
		return false;
	/* RFC 7323 5.5: after 24 days idle ts_recent is no longer valid. */
	return t->st->now - t->ts_recent_age <= TCP_PAWS_IDLE_US;
}

static bool seq_acceptable(const struct tcb *t, uint32_t seq, uint32_t seglen)
{
	uint32_t wnd = tcp_rcv_wnd(t), nxt = t->rcv_nxt;

	if (!seglen)
		return wnd ? seq_in(seq, nxt, nxt + wnd) : seq == nxt;
	if (!wnd)
		return false;
	return seq_in(seq, nxt, nxt + wnd) || seq_in(seq + seglen - 1, nxt, nxt + wnd);
}

static void challenge_ack(struct tcb *t)
{
	struct ns_stack *st = t->st;
	uint64_t sec = st->now / 1000000;

	/* RFC 5961 7: a global limit, so they cannot be used as a flood. */
	if (sec != st->tcp_chack_sec) {
		st->tcp_chack_sec = sec;
		st->tcp_chack_n = 0;
	}
	if (st->tcp_chack_n++ >= TCP_CHALLENGE_ACK_LIMIT)
		return;
	st->stats.tcp_challenge_ack++;
	tcp_send_ack(t);
}

/* Data we already have arrived again: say so with a D-SACK block. */
static void note_dsack(struct tcb *t, uint32_t seq, uint32_t len)
{
	if (!t->sack_on || !len || !SEQ_LT(seq, t->rcv_nxt))
		return;
	t->dsack = true;
	t->dsack_blk.start = seq;
	t->dsack_blk.end = seq_min(seq + len, t->rcv_nxt);
}

/* RST in a synchronized state (RFC 5961 3.2); true when t is gone. */
static bool rst_input(struct tcb *t, const struct tcp_seg *s)
{
	if (s->seq != t->rcv_nxt) {
		challenge_ack(t);
		return false;
	}
	switch (t->state) {
	case NS_TCP_SYN_RECEIVED:
		if (t->parent) {
			tcb_closed(t); /* back to LISTEN: the child just goes */
			return true;
		}
		tcb_drop(t, -ECONNREFUSED);
		return true;
	case NS_TCP_CLOSING:
	case NS_TCP_LAST_ACK:
	case NS_TCP_TIME_WAIT:
		tcb_closed(t);
		return true;
	default:
		tcb_drop(t, -ECONNRESET);
		return true;
	}
}

static void update_ts_recent(struct tcb *t, const struct tcp_seg *s)
{
	/* RFC 7323 4.3 (3). */
	if (t->ts_on && s->opt.ts_ok && SEQ_GEQ(s->opt.tsval, t->ts_recent) &&
	    SEQ_LEQ(s->seq, t->last_ack_sent)) {
		t->ts_recent = s->opt.tsval;
		t->ts_recent_age = t->st->now;
	}
}

/* Release acknowledged bytes from the send ring; how many. */
static uint32_t free_acked(struct tcb *t, uint32_t ack)
{
	uint32_t n;

	if (!SEQ_GT(ack, t->snd_buf_seq))
		return 0;
	n = u32_min(ack - t->snd_buf_seq, t->sndbuf.len);
	ring_consume(&t->sndbuf, n);
	ring_rewind(&t->sndbuf);
	t->snd_buf_seq += n;
	if (n)
		tcb_notify(t);
	return n;
}

/* RFC 7323 4 (RTTM): every ACK that advances snd_una gives a sample
 * from its TSecr, retransmissions included (the echo says which
 * transmission arrived, so Karn's ambiguity does not arise; the timed
 * segment is only for connections without timestamps). The echo is
 * the earliest unacknowledged segment's TSval (4.3), so a delayed ACK's
 * wait is in the sample, as the RTO needs. Our TSval ticks are 1 ms: the
 * sample counts from the start of the echoed tick (never too small).
 * false: no usable echo. */
static bool ts_rtt_sample(struct tcb *t, const struct tcp_seg *s)
{
	uint32_t ticks, flight = t->snd_max - t->snd_una, smss = tcp_smss(t);

	if (!t->ts_on || !s->opt.ts_ok)
		return false;
	ticks = tcp_ts_now(t) - s->opt.tsecr;
	if (ticks > TCP_RTO_MAX_US / 1000) /* from the future, or stale */
		return false;
	/* appendix G: ExpectedSamples = ceil(FlightSize / (2 * SMSS)) */
	rtt_sample_n(&t->rtt, ticks * 1000 + (uint32_t)(t->st->now % 1000),
		     u32_max(1, (flight + 2 * smss - 1) / (2 * smss)));
	t->rtt_timing = false;
	return true;
}

static void rtt_on_new_ack(struct tcb *t, const struct tcp_seg *s)
{
	bool data = SEQ_GT(s->ack, t->iss + 1); /* more than our SYN */

	if (t->ts_on) {
		t->rtt_data |= ts_rtt_sample(t, s) && data;
		return;
	}
	if (t->rtt_timing && SEQ_GT(s->ack, t->rtt_seq)) { /* Karn-timed segment */
		t->rtt_data |= t->rtt_seq != t->iss;
		rtt_sample(&t->rtt, (uint32_t)(t->st->now - t->rtt_start));
		t->rtt_timing = false;
	}
}

/* RFC 2018 8: the receiver threw away data it had SACKed. Do not wait
 * a whole RTO for what it now lacks: time out soon (max(SRTT/2, 10 ms),
 * as Linux), and the RTO then forgets the scoreboard. */
static void sack_reneging(struct tcb *t)
{
	t->sack_reneged = true;
	t->tlp_armed = false;
	timer_arm_in(t->st, &t->t_rexmit, u32_max(t->rtt.srtt / 2, TCP_PTO_MIN_US));
}

static void new_ack(struct tcb *t, const struct tcp_seg *s)
{
	uint32_t data;

	rtt_on_new_ack(t, s);
	t->backoff = 0;
	t->tlp_done = false;
	/* A hole now at snd_una that was already resent: count from now. */
	t->una_rexmit_at = t->in_recovery && SEQ_LT(s->ack, t->rexmit_nxt) ? t->st->now : 0;
	t->una_since = t->st->now;
	data = free_acked(t, s->ack);
	t->snd_una = s->ack;
	if (SEQ_LT(t->snd_nxt, t->snd_una))
		t->snd_nxt = t->snd_una;
	t->bytes_acked += data;
	sb_trim(t);
	cc_check_spurious(t, &s->opt);
	cc_on_ack(t, data); /* data only: the SYN and FIN do not grow cwnd */
	/* RFC 6298 5.2 / 5.3 */
	if (t->snd_una == t->snd_max)
		timer_cancel(t->st, &t->t_rexmit);
	else if (sb_reneged(t))
		sack_reneging(t);
	else
		tcp_arm_rexmit(t);
}

static bool is_dupack(const struct tcb *t, const struct tcp_seg *s)
{
	/* RFC 5681 2, "DUPLICATE ACKNOWLEDGMENT". */
	return s->ack == t->snd_una && !s->len && !(s->flags & (TH_SYN | TH_FIN)) &&
	       (s->wnd << t->snd_wscale) == t->snd_wnd && t->snd_max != t->snd_una;
}

static void window_update(struct tcb *t, const struct tcp_seg *s)
{
	if (SEQ_LT(t->snd_wl1, s->seq) ||
	    (t->snd_wl1 == s->seq && SEQ_LEQ(t->snd_wl2, s->ack))) {
		t->snd_wnd = s->wnd << t->snd_wscale;
		t->max_snd_wnd = u32_max(t->max_snd_wnd, t->snd_wnd);
		t->snd_wl1 = s->seq;
		t->snd_wl2 = s->ack;
		if (t->snd_wnd) {
			timer_cancel(t->st, &t->t_persist);
			t->persist_probes = 0;
		}
	}
}

/* The handshake's last ACK (SYN-RECEIVED); false: drop the segment. */
static bool synrcvd_ack(struct tcb *t, const struct tcp_seg *s)
{
	if (!SEQ_GT(s->ack, t->snd_una) || SEQ_GT(s->ack, t->snd_max)) {
		tcp_send_reset_reply(t->st, s);
		return false;
	}
	if (t->parent && t->parent->accq.len >= (t->parent->backlog ? t->parent->backlog : 1))
		return false; /* accept queue full: the peer will retry */
	t->snd_wnd = s->wnd << t->snd_wscale;
	t->max_snd_wnd = t->snd_wnd;
	t->snd_wl1 = s->seq;
	t->snd_wl2 = s->ack;
	syn_loss_rto(t);
	tcb_set_state(t, NS_TCP_ESTABLISHED);
	if (t->parent)
		tcp_child_established(t);
	return true;
}

/* Our FIN is acknowledged: the closing states move on; true when t is
 * gone. */
static bool our_fin_acked(struct tcb *t)
{
	switch (t->state) {
	case NS_TCP_FIN_WAIT_1:
		tcb_set_state(t, NS_TCP_FIN_WAIT_2);
		if (!t->sock) /* orphaned: FIN-WAIT-2 may not last forever */
			timer_arm_in(t->st, &t->t_2msl, (uint64_t)t->cfg.linger2_ms * 1000);
		return false;
	case NS_TCP_CLOSING:
		tcp_enter_time_wait(t);
		return false;
	case NS_TCP_LAST_ACK:
		tcb_closed(t);
		return true;
	default:
		return false;
	}
}

/* ACK processing; true when t is gone. */
static bool ack_input(struct tcb *t, const struct tcp_seg *s, bool *drop)
{
	bool dup, dsack, sack_news = false;

	if (SEQ_GT(s->ack, t->snd_max)) { /* acks something not yet sent */
		tcp_send_ack(t);
		*drop = true;
		return false;
	}
	if (SEQ_LT(s->ack, t->snd_una - t->max_snd_wnd)) { /* RFC 5961 5.2 */
		challenge_ack(t);
		*drop = true;
		return false;
	}
	if (t->sack_on && s->opt.nsack) {
		unsigned before = t->nsacked;
		uint32_t bytes = sb_sacked_bytes(t);

		sb_update(t, &s->opt);
		sack_news = t->nsacked != before || sb_sacked_bytes(t) != bytes;
	}
	/* An ACK reporting a duplicate (D-SACK, RFC 2883: first block below
	 * the ACK) answers a needless retransmission, not a loss. */
	dsack = s->opt.nsack && SEQ_LEQ(s->opt.sack[0].end, s->ack);
	dup = !dsack && (is_dupack(t, s) || (sack_news && s->ack == t->snd_una));
	if (SEQ_GT(s->ack, t->snd_una))
		new_ack(t, s);
	window_update(t, s);
	if (dup)
		cc_on_dupack(t);
	else if (sack_news)
		cc_maybe_recover(t);
	if (sack_news)
		cc_check_lost_rexmit(t);
	return tcp_fin_acked(t) && our_fin_acked(t);
}

static void process_fin(struct tcb *t)
{
	t->rcv_nxt++;
	t->fin_rcvd = true;
	t->ooo_fin = false;
	t->ack_now = true;
	switch (t->state) {
	case NS_TCP_SYN_RECEIVED:
	case NS_TCP_ESTABLISHED:
		tcb_set_state(t, NS_TCP_CLOSE_WAIT);
		break;
	case NS_TCP_FIN_WAIT_1:
		if (tcp_fin_acked(t))
			tcp_enter_time_wait(t);
		else
			tcb_set_state(t, NS_TCP_CLOSING);
		break;
	case NS_TCP_FIN_WAIT_2:
		tcp_enter_time_wait(t);
		break;
	default:
		break;
	}
	tcb_notify(t);
}

/* len in-order bytes arrived, of which the socket's reader took the
 * first direct (they never entered the ring). */
static void deliver_in_order(struct tcb *t, uint32_t len, uint32_t direct)
{
	t->rcv_nxt += len;
	t->rcvbuf.len += len - direct;
	t->bytes_received += len;
	if (t->nooo) {
		uint32_t nxt = ooo_absorb(t, t->rcv_nxt);

		t->rcvbuf.len += nxt - t->rcv_nxt;
		t->bytes_received += nxt - t->rcv_nxt;
		t->rcv_nxt = nxt;
		t->ack_now = true; /* a hole filled: ACK at once (RFC 5681 4.2) */
	}
	/* Delayed ACK: every second segment, else after NS_TCP_DELACK. */
	if (++t->delack_segs >= 2 || !t->cfg.delack_ms)
		t->ack_now = true;
	else
		tcp_arm_delack(t);
	if (t->rcvbuf.len)
		tcb_notify(t);
}

/* Direct delivery: in-order bytes with nothing buffered before them go
 * to the socket's reader first (ns_sock_set_reader); how many it took. */
static uint32_t read_direct(struct tcb *t, const uint8_t *d, uint32_t len)
{
	if (!t->sock || t->rcvbuf.len || t->nooo || t->user_rd_shut)
		return 0;
	return sock_read_direct(t->sock, d, len);
}

/* Place the segment's payload in the receive ring; FIN afterwards. */
static void data_input(struct tcb *t, const struct tcp_seg *s)
{
	uint32_t seq = s->seq, len = s->len, wnd = tcp_rcv_wnd(t), off;
	const uint8_t *d = s->data;
	bool fin = s->flags & TH_FIN;

	if (SEQ_LT(seq, t->rcv_nxt)) { /* trim what we already have */
		uint32_t skip = u32_min(t->rcv_nxt - seq, len);

		note_dsack(t, seq, skip);
		d += skip;
		len -= skip;
		seq += skip;
	}
	off = seq - t->rcv_nxt;
	if (len && off + len > wnd) { /* trim to the window */
		len = off < wnd ? wnd - off : 0;
		fin = false;
		t->ack_now = true;
	}
	if (len) {
		uint32_t direct = off ? 0 : read_direct(t, d, len);

		ring_put(&t->rcvbuf, t->rcvbuf.len + off, d + direct, len - direct);
		if (off == 0) {
			deliver_in_order(t, len, direct);
		} else {
			if (!ooo_add(t, seq, seq + len)) {
				t->st->stats.tcp_ooo_drop++;
				fin = false;
			}
			t->ack_now = true; /* out of order: duplicate ACK now */
		}
	} else if (s->len) {
		t->ack_now = true; /* a duplicate: tell the peer where we are */
	}
	if (fin) {
		if (s->seq + s->len == t->rcv_nxt) {
			process_fin(t);
		} else {
			t->ooo_fin = true;
			t->ooo_fin_seq = seq + len;
		}
	}
	if (t->ooo_fin && t->ooo_fin_seq == t->rcv_nxt && !t->fin_rcvd)
		process_fin(t);
}

static bool accepts_data(int state)
{
	return state == NS_TCP_ESTABLISHED || state == NS_TCP_FIN_WAIT_1 ||
	       state == NS_TCP_FIN_WAIT_2;
}

/* Unacceptable segment: ACK it (RFC 9293 3.10.7.4 first); true when
 * processing may continue with the payload stripped (a zero-window
 * probe or data beyond a closed window still carries a valid ACK). */
static bool unacceptable(struct tcb *t, struct tcp_seg *s)
{
	if (s->flags & TH_RST)
		return false;
	note_dsack(t, s->seq, s->len);
	tcp_send_ack(t);
	if (t->state == NS_TCP_TIME_WAIT && (s->flags & TH_FIN))
		timer_arm_in(t->st, &t->t_2msl, (uint64_t)t->cfg.linger2_ms * 1000);
	if (s->seq != t->rcv_nxt || !(s->flags & TH_ACK) || (s->flags & TH_SYN))
		return false;
	s->len = 0;
	s->flags &= (uint8_t)~TH_FIN;
	return true;
}

/* Orphaned (closed by the user) and new data arrives: nobody will read
 * it, so reset as Linux does (RFC 9293 3.10.4 leaves this open). */
static bool orphan_data(struct tcb *t, const struct tcp_seg *s)
{
	if (t->sock || t->parent || !s->len || !SEQ_GT(s->seq + s->len, t->rcv_nxt))
		return false;
	tcp_send_rst(t);
	tcb_closed(t);
	return true;
}

static void sync_input(struct tcb *t, struct tcp_seg *s)
{
	bool drop = false;

	if (t->deferred)
		return; /* nothing is answered before ns_accept_complete() */
	t->last_rx = t->st->now;
	t->keep_probes = 0;
	if (t->state == NS_TCP_SYN_RECEIVED && (s->flags & TH_SYN) && s->seq == t->irs) {
		if (!(s->flags & TH_ACK)) { /* our SYN-ACK was lost */
			tcp_send_syn(t);
			return;
		}
		/* Simultaneous open: the peer's SYN-ACK repeats its SYN. */
		s->flags &= (uint8_t)~TH_SYN;
		s->seq++;
	}
	if (paws_reject(t, s)) {
		t->st->stats.tcp_paws_drop++;
		tcp_send_ack(t);
		return;
	}
	if (!seq_acceptable(t, s->seq, seg_seqlen(s)) && !unacceptable(t, s))
		return;
	if (s->flags & TH_RST) {
		rst_input(t, s);
		return;
	}
	if (s->flags & TH_SYN) { /* RFC 5961 4.2 */
		challenge_ack(t);
		return;
	}
	if (!(s->flags & TH_ACK))
		return;
	update_ts_recent(t, s);
	if (t->state == NS_TCP_SYN_RECEIVED && !synrcvd_ack(t, s))
		return;
	if (ack_input(t, s, &drop) || drop)
		return;
	if (orphan_data(t, s))
		return;
	if (accepts_data(t->state))
		data_input(t, s);
	else if (s->len || (s->flags & TH_FIN))
		t->ack_now = true;
	if (t->state != NS_TCP_CLOSED)
		tcp_output(t);
}

/* ------------------------------------------------------------- demux */

/* RFC 6191-style reuse: a new SYN may end a TIME-WAIT early when it is
 * clearly of a new incarnation. */
static bool time_wait_reusable(const struct tcb *t, const struct tcp_seg *s)
{
	if ((s->flags & (TH_SYN | TH_ACK | TH_RST)) != TH_SYN)
		return false;
	if (t->ts_on && s->opt.ts_ok)
		return SEQ_GT(s->opt.tsval, t->ts_recent);
	return SEQ_GT(s->seq, t->rcv_nxt);
}

static struct tcb *lookup(struct ns_stack *st, const struct tcp_seg *s)
{
	struct ns_chan *ch = chan_lookup(st, NS_PROTO_TCP, &s->rx->daddr, s->dport, &s->rx->saddr,
					 s->sport);

	return ch ? ch->tcb : NULL;
}

/* RFC 1122 4.2.3.10: no TCP to a broadcast or multicast address (and
 * nothing may be sent from one). */
static bool to_broadcast(const struct ip_rx *rx)
{
	const struct ns_iface *ifc = rx->ifc;

	if (rx->v6)
		return rx->mcast;
	return rx->dst == 0xffffffffu || (rx->dst >> 28) == 0xe ||
	       (ifc && ifc->mask != 0xffffffffu && rx->dst == (ifc->addr | ~ifc->mask));
}

void tcp_input(struct ns_stack *st, const struct ip_rx *rx)
{
	struct tcp_seg s;
	struct tcb *t;

	st->stats.tcp_rx++;
	if (to_broadcast(rx)) {
		st->stats.tcp_bad++;
		return;
	}
	if (!parse_seg(st, rx, &s))
		return;
	t = lookup(st, &s);
	if (t && t->state == NS_TCP_TIME_WAIT && time_wait_reusable(t, &s)) {
		tcb_closed(t);
		t = lookup(st, &s);
	}
	if (!t || t->state == NS_TCP_CLOSED) {
		tcp_send_reset_reply(st, &s);
		return;
	}
	if (t->state == NS_TCP_LISTEN)
		listen_input(t, &s);
	else if (t->state == NS_TCP_SYN_SENT)
		synsent_input(t, &s);
	else
		sync_input(t, &s);
}
