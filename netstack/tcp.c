/* tcp.c — TCP connection life: creating and freeing control blocks,
 * their place in the demux tree and in listener queues, state changes,
 * initial sequence numbers (RFC 6528) and ICMP errors (RFC 5927). */
#include <stdlib.h>

#include "netstack/tcp_internal.h"

void tcp_default_cfg(struct tcp_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->sndbuf = TCP_DEFAULT_SNDBUF;
	c->rcvbuf = TCP_DEFAULT_RCVBUF;
	c->sack = c->ts = c->ws = true;
	c->keepidle_s = 7200;
	c->keepintvl_s = 75;
	c->keepcnt = 9;
	c->delack_ms = 40;
	c->linger2_ms = 60000;
	c->user_timeout_ms = 120000;
}

void tcp_init(struct ns_stack *st)
{
	for (int i = 0; i < 4; i++)
		st->isn_secret[i] = (uint32_t)stack_rand(st);
}

void tcp_free_all(struct ns_stack *st)
{
	while (st->tcbs)
		tcb_free(st->tcbs);
}

/* ------------------------------------------------------------ queues */

void tcb_list_append(struct tcb_list *l, struct tcb *t)
{
	t->q_list = l;
	t->q_next = NULL;
	t->q_prev = l->tail;
	if (l->tail)
		l->tail->q_next = t;
	else
		l->head = t;
	l->tail = t;
	l->len++;
}

void tcb_list_remove(struct tcb *t)
{
	struct tcb_list *l = t->q_list;

	if (!l)
		return;
	if (t->q_prev)
		t->q_prev->q_next = t->q_next;
	else
		l->head = t->q_next;
	if (t->q_next)
		t->q_next->q_prev = t->q_prev;
	else
		l->tail = t->q_prev;
	l->len--;
	t->q_list = NULL;
	t->q_prev = t->q_next = NULL;
}

static void orphan_children(struct tcb_list *l)
{
	while (l->head) {
		struct tcb *c = l->head;

		tcb_list_remove(c);
		c->parent = NULL;
	}
}

void tcp_child_established(struct tcb *t)
{
	struct tcb *l = t->parent;

	tcb_list_remove(t);
	tcb_list_append(&l->accq, t);
	tcb_notify(t);
}

/* --------------------------------------------------------------- tcb */

struct tcb *tcb_new(struct ns_stack *st, const struct tcp_cfg *cfg)
{
	struct tcb *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->st = st;
	t->cfg = *cfg;
	t->state = NS_TCP_CLOSED;
	t->snd_mss = TCP_DEFAULT_MSS;
	t->rcv_mss = TCP_DEFAULT_MSS;
	t->ts_offset = (uint32_t)stack_rand(st);
	rtt_init(&t->rtt);
	tcp_timers_init(t);
	return t;
}

int tcb_link(struct tcb *t)
{
	struct ns_stack *st = t->st;

	if (t->linked)
		return 0;
	if (st->ntcbs >= st->tcp_max_conns)
		return -ENOBUFS;
	t->next = st->tcbs;
	t->prev = NULL;
	if (st->tcbs)
		st->tcbs->prev = t;
	st->tcbs = t;
	st->ntcbs++;
	t->linked = true;
	return 0;
}

static void tcb_unlink(struct tcb *t)
{
	struct ns_stack *st = t->st;

	if (!t->linked)
		return;
	if (t->prev)
		t->prev->next = t->next;
	else
		st->tcbs = t->next;
	if (t->next)
		t->next->prev = t->prev;
	st->ntcbs--;
	t->linked = false;
}

static void tcb_unbind(struct tcb *t)
{
	if (t->chan) {
		chan_free(t->st, t->chan);
		t->chan = NULL;
	}
}

void tcb_free(struct tcb *t)
{
	tcp_timers_stop(t);
	tcb_unbind(t);
	tcb_list_remove(t);
	orphan_children(&t->synq);
	orphan_children(&t->accq);
	ooo_clear(t);
	ring_free(&t->sndbuf);
	ring_free(&t->rcvbuf);
	tcb_unlink(t);
	free(t);
}

int tcb_bind_chan(struct tcb *t)
{
	struct chan_key k = { .proto = NS_PROTO_TCP,
			      .laddr = t->laddr,
			      .raddr = t->raddr,
			      .lport = t->lport,
			      .rport = t->rport };
	struct ns_chan *ch;

	if (t->chan && !chan_key_cmp(&t->chan->key, &k))
		return 0;
	if (chan_tree_find(t->st, &k))
		return -EADDRINUSE;
	ch = chan_new(t->st, &k);
	if (!ch)
		return -ENOMEM;
	tcb_unbind(t);
	ch->tcb = t;
	chan_tree_insert(t->st, ch);
	t->chan = ch;
	return 0;
}

int tcb_alloc_bufs(struct tcb *t)
{
	if (!t->sndbuf.buf && ring_init(&t->sndbuf, t->cfg.sndbuf) < 0)
		return -ENOMEM;
	if (!t->rcvbuf.buf && ring_init(&t->rcvbuf, t->cfg.rcvbuf) < 0)
		return -ENOMEM;
	return 0;
}

void tcb_set_state(struct tcb *t, int state)
{
	/* A FIN asked for before the handshake finished goes out now. */
	if (state == NS_TCP_ESTABLISHED && t->user_wr_shut)
		state = NS_TCP_FIN_WAIT_1;
	t->state = state;
	if (tcp_synchronized(state))
		tcp_arm_keepalive(t);
	tcb_notify(t);
}

void tcb_notify(struct tcb *t)
{
	if (t->sock)
		sock_notify(t->st, t->sock);
	else if (t->parent && t->q_list == &t->parent->accq && t->parent->sock)
		sock_notify(t->st, t->parent->sock);
}

void tcb_closed(struct tcb *t)
{
	t->state = NS_TCP_CLOSED;
	tcp_timers_stop(t);
	tcb_unbind(t);
	tcb_list_remove(t);
	t->parent = NULL;
	if (!t->sock) {
		tcb_free(t);
		return;
	}
	sock_notify(t->st, t->sock);
}

void tcb_drop(struct tcb *t, int err)
{
	t->err = err;
	t->reset = true;
	tcb_closed(t);
}

void tcp_enter_time_wait(struct tcb *t)
{
	struct ns_stack *st = t->st;

	tcb_set_state(t, NS_TCP_TIME_WAIT);
	timer_cancel(st, &t->t_rexmit);
	timer_cancel(st, &t->t_persist);
	timer_cancel(st, &t->t_keep);
	timer_cancel(st, &t->t_delack);
	timer_arm_in(st, &t->t_2msl, (uint64_t)t->cfg.linger2_ms * 1000);
	if (!t->sock) { /* nobody reads: keep only the sequence state */
		ooo_clear(t);
		ring_free(&t->sndbuf);
		ring_free(&t->rcvbuf);
	}
}

/* ---------------------------------------------------------- numbers */

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint32_t tcp_isn(struct ns_stack *st, const struct tcb *t)
{
	/* RFC 6528: a keyed hash of the 4-tuple plus a 4 µs clock. */
	uint64_t h = mix64(((uint64_t)t->laddr.w[3] << 32 | t->raddr.w[3]) ^
			   ((uint64_t)st->isn_secret[0] << 32 | st->isn_secret[1]));

	/* IPv6: the other words too (constant for IPv4). */
	for (int i = 0; i < 3; i++)
		h = mix64(h ^ ((uint64_t)t->laddr.w[i] << 32 | t->raddr.w[i]));

	h = mix64(h ^ ((uint64_t)t->lport << 16 | t->rport) ^
		  ((uint64_t)st->isn_secret[2] << 32 | st->isn_secret[3]));
	return (uint32_t)h + (uint32_t)(st->now / 4);
}

uint32_t tcp_ts_now(const struct tcb *t)
{
	return (uint32_t)(t->st->now / 1000) + t->ts_offset; /* 1 ms ticks */
}

uint32_t tcp_path_mss(struct ns_stack *st, const struct ipaddr *raddr, const struct tcp_cfg *cfg)
{
	uint32_t mss = ipa_mtu_to(st, raddr) - 20;

	if (cfg->maxseg)
		mss = u32_min(mss, cfg->maxseg);
	return u32_max(mss, 64);
}

uint8_t tcp_choose_wscale(uint32_t rcvbuf)
{
	uint8_t s = 0;

	while (s < TCP_MAX_WSCALE && (rcvbuf >> s) > 65535)
		s++;
	return s;
}

/* ------------------------------------------------------------- ICMP */

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void icmp_need_frag(struct tcb *t, uint32_t mtu)
{
	bool v4 = ipa_is_v4(&t->raddr);
	uint32_t hdrs = v4 ? 40 : 60, mss;

	if (!tcp_synchronized(t->state))
		return;
	if (v4 && (mtu < 68 || mtu > ip_mtu_to(t->st, ipa_v4_of(&t->raddr)) + 20))
		mtu = 576; /* RFC 1191 plateau guess for old routers */
	if (!v4) /* ip6.c keeps the path MTU (never below 1280) */
		mtu = ipa_mtu_to(t->st, &t->raddr) + 40;
	mss = u32_max(mtu - hdrs, 64);
	if (mss >= t->snd_mss)
		return;
	t->snd_mss = mss;
	t->snd_nxt = t->snd_una; /* the big segments are gone: resend now */
	tcp_output(t);
}

void tcp_icmp_error(struct ns_stack *st, const struct ipaddr *laddr, const struct ipaddr *raddr,
		    const uint8_t *l4, enum ipa_err err, unsigned mtu)
{
	struct chan_key k = { .proto = NS_PROTO_TCP, .laddr = *laddr, .raddr = *raddr };
	struct ns_chan *ch;
	struct tcb *t;
	uint32_t seq;

	k.lport = (uint16_t)(l4[0] << 8 | l4[1]);
	k.rport = (uint16_t)(l4[2] << 8 | l4[3]);
	seq = rd32(l4 + 4);
	ch = chan_tree_find(st, &k);
	t = ch ? ch->tcb : NULL;
	/* RFC 5927 4.1: only errors about data in flight are believed. */
	if (!t || !seq_in(seq, t->snd_una, t->snd_max + 1))
		return;
	if (err == IPA_ERR_NEEDFRAG) {
		icmp_need_frag(t, mtu);
		return;
	}
	if (err == IPA_ERR_REFUSED && t->state == NS_TCP_SYN_SENT) {
		tcb_drop(t, -ECONNREFUSED);
		return;
	}
	/* Soft errors (RFC 1122 4.2.3.9): reported only on a timeout. */
	t->soft_err = err == IPA_ERR_NET ? -ENETUNREACH : -EHOSTUNREACH;
}
