/* tcp_usr.c — the user's requests on a connection (RFC 9293 3.10.1-6):
 * bind, listen, connect, send, receive, shutdown, close, abort, options
 * and status. socket.c wraps these in the blocking socket API; all run
 * with the stack lock held and never sleep. */
#include "netstack/tcp_internal.h"

/* ------------------------------------------------------------ binding */

static int bind_port(struct tcb *t, const struct ipaddr *laddr, uint16_t lport)
{
	struct ns_stack *st = t->st;
	struct chan_key k = { .proto = NS_PROTO_TCP, .laddr = *laddr, .lport = lport };

	k.raddr = ipa_any_like(laddr);
	if (lport && chan_port_in_use(st, NS_PROTO_TCP, laddr, lport) &&
	    (!t->cfg.reuseaddr || chan_tree_find(st, &k)))
		return -EADDRINUSE;
	t->laddr = *laddr;
	t->raddr = k.raddr;
	t->lport = lport;
	return tcb_bind_chan(t);
}

int tcp_usr_bind(struct tcb *t, const struct ns_sockaddr *local)
{
	const struct ns_sockaddr none = { 0 };
	struct ipaddr laddr = ipa_from_sa(local ? local : &none);
	uint16_t lport = local ? local->port : 0;

	if (t->chan || t->state != NS_TCP_CLOSED)
		return -EINVAL;
	if (!ipa_is_any(&laddr) && !ipa_is_local(t->st, &laddr))
		return -EADDRNOTAVAIL;
	/* {0, 0} stays the catch-all key; a specific address gets a port. */
	if (!lport && !ipa_is_any(&laddr) &&
	    !(lport = chan_ephemeral_port(t->st, NS_PROTO_TCP, &laddr)))
		return -EADDRINUSE;
	return bind_port(t, &laddr, lport);
}

int tcp_usr_listen(struct tcb *t, int backlog)
{
	int rc;

	if (t->state == NS_TCP_LISTEN) {
		t->backlog = backlog < 1 ? 1 : (unsigned)backlog;
		return 0;
	}
	if (t->state != NS_TCP_CLOSED || t->reset)
		return -EINVAL;
	if (!t->chan) {
		struct ipaddr any = ipa_v4(0);
		uint16_t p = chan_ephemeral_port(t->st, NS_PROTO_TCP, &any);

		if (!p)
			return -EADDRINUSE;
		if ((rc = bind_port(t, &any, p)) < 0)
			return rc;
	}
	if ((rc = tcb_link(t)) < 0)
		return rc;
	t->backlog = backlog < 1 ? 1 : backlog > 65535 ? 65535 : (unsigned)backlog;
	t->state = NS_TCP_LISTEN;
	return 0;
}

struct tcb *tcp_usr_accept(struct tcb *l)
{
	struct tcb *c = l->accq.head;

	if (!c)
		return NULL;
	tcb_list_remove(c);
	c->parent = NULL;
	return c;
}

/* ------------------------------------------------------------ connect */

static int connect_check(const struct tcb *t, const struct ns_sockaddr *r)
{
	if (t->state == NS_TCP_SYN_SENT)
		return -EALREADY;
	if (t->state == NS_TCP_LISTEN)
		return -EINVAL;
	if (t->state != NS_TCP_CLOSED || t->reset)
		return -EISCONN;
	if (!r || !r->port)
		return -EINVAL;
	if (r->family != NS_AF_INET6 ? !r->addr : ipa_is_any((struct ipaddr[]){ ipa_from_sa(r) }))
		return -EINVAL;
	if (t->chan && ipa_is_v4(&t->laddr) != (r->family != NS_AF_INET6) &&
	    !ipa_is_any(&t->laddr))
		return -EAFNOSUPPORT;
	return 0;
}

int tcp_usr_connect(struct tcb *t, const struct ns_sockaddr *r)
{
	struct ns_stack *st = t->st;
	struct ipaddr raddr;
	int rc = connect_check(t, r);

	if (rc < 0)
		return rc;
	raddr = ipa_from_sa(r);
	if (!ipa_routable(st, &raddr))
		return -ENETUNREACH;
	if ((rc = tcb_link(t)) < 0) /* tcp_max_conns */
		return rc;
	if ((!t->chan || ipa_is_any(&t->laddr)) && (rc = ipa_src_for(st, &raddr, &t->laddr)) < 0)
		return rc;
	if (!t->lport && !(t->lport = chan_ephemeral_port(st, NS_PROTO_TCP, &t->laddr)))
		return -EADDRNOTAVAIL;
	t->raddr = raddr;
	t->rport = r->port;
	if ((rc = tcb_bind_chan(t)) < 0 || (rc = tcb_alloc_bufs(t)) < 0) {
		t->raddr = ipa_any_like(&raddr);
		t->rport = 0;
		return rc;
	}
	t->rcv_wscale = t->cfg.ws ? tcp_choose_wscale(t->cfg.rcvbuf) : 0;
	t->rcv_mss = tcp_path_mss(st, &t->raddr, &t->cfg);
	t->iss = tcp_isn(st, t);
	t->snd_una = t->snd_nxt = t->snd_max = t->iss;
	t->snd_buf_seq = t->iss + 1;
	t->recover = t->iss;
	t->last_rx = st->now;
	t->state = NS_TCP_SYN_SENT;
	tcp_send_syn(t);
	return 0;
}

/* ------------------------------------------------------------ data */

static int take_err(struct tcb *t)
{
	int e = t->err;

	t->err = 0;
	return e;
}

ssize_t tcp_usr_send(struct tcb *t, const void *buf, size_t len)
{
	uint32_t n;

	if (t->err)
		return take_err(t);
	if (t->reset || t->user_wr_shut)
		return -EPIPE;
	if (t->state == NS_TCP_CLOSED || t->state == NS_TCP_LISTEN)
		return -ENOTCONN;
	if (t->state != NS_TCP_ESTABLISHED && t->state != NS_TCP_CLOSE_WAIT &&
	    t->state != NS_TCP_SYN_SENT && t->state != NS_TCP_SYN_RECEIVED)
		return -EPIPE;
	n = (uint32_t)(len < ring_space(&t->sndbuf) ? len : ring_space(&t->sndbuf));
	if (!n)
		return len ? -EAGAIN : 0;
	ring_put(&t->sndbuf, t->sndbuf.len, buf, n);
	t->sndbuf.len += n;
	tcp_output(t);
	return n;
}

/* The first n readable bytes were read: the window opens by n. */
static void consumed(struct tcb *t, uint32_t n)
{
	ring_consume(&t->rcvbuf, n);
	if (!t->nooo)
		ring_rewind(&t->rcvbuf);
	t->rcv_freed += n;
	tcp_window_update(t);
}

/* A read with nothing readable: the error, 0 at EOF, or -EAGAIN. */
static ssize_t nothing_readable(struct tcb *t)
{
	if (t->err)
		return take_err(t);
	if (t->fin_rcvd || t->user_rd_shut || t->reset)
		return 0;
	if (t->state == NS_TCP_CLOSED || t->state == NS_TCP_LISTEN)
		return -ENOTCONN;
	return -EAGAIN;
}

ssize_t tcp_usr_recv(struct tcb *t, void *buf, size_t len, bool peek)
{
	uint32_t n = (uint32_t)(len < t->rcvbuf.len ? len : t->rcvbuf.len);

	if (n) {
		ring_get(&t->rcvbuf, 0, buf, n);
		if (!peek)
			consumed(t, n);
		return n;
	}
	return len ? nothing_readable(t) : 0;
}

ssize_t tcp_usr_peek(struct tcb *t, struct ns_iov iov[2])
{
	ring_peek(&t->rcvbuf, t->rcvbuf.len, iov);
	return t->rcvbuf.len ? (ssize_t)t->rcvbuf.len : nothing_readable(t);
}

int tcp_usr_consume(struct tcb *t, size_t n)
{
	if (n > t->rcvbuf.len)
		return -EINVAL;
	if (n)
		consumed(t, (uint32_t)n);
	return 0;
}

/* --------------------------------------------------------- closing */

static void send_fin(struct tcb *t)
{
	if (t->user_wr_shut)
		return;
	t->user_wr_shut = true;
	if (t->state == NS_TCP_ESTABLISHED)
		tcb_set_state(t, NS_TCP_FIN_WAIT_1);
	else if (t->state == NS_TCP_CLOSE_WAIT)
		tcb_set_state(t, NS_TCP_LAST_ACK);
	/* SYN-SENT / SYN-RECEIVED: tcb_set_state sends it once established */
	tcp_output(t);
}

int tcp_usr_shutdown(struct tcb *t, int how)
{
	if (how < NS_SHUT_RD || how > NS_SHUT_RDWR)
		return -EINVAL;
	if (t->state == NS_TCP_CLOSED || t->state == NS_TCP_LISTEN)
		return -ENOTCONN;
	if (how != NS_SHUT_WR) {
		t->user_rd_shut = true;
		tcb_notify(t);
	}
	if (how != NS_SHUT_RD)
		send_fin(t);
	return 0;
}

static void close_listener(struct tcb *l)
{
	struct tcb_list *qs[2] = { &l->synq, &l->accq };

	for (int i = 0; i < 2; i++) {
		while (qs[i]->head) {
			struct tcb *c = qs[i]->head;

			if (!c->deferred)
				tcp_send_rst(c);
			tcb_closed(c);
		}
	}
	tcb_free(l);
}

void tcp_usr_abort(struct tcb *t)
{
	t->sock = NULL;
	if (t->state == NS_TCP_LISTEN) {
		close_listener(t);
		return;
	}
	if ((tcp_synchronized(t->state) && t->state != NS_TCP_TIME_WAIT) ||
	    (t->state == NS_TCP_SYN_RECEIVED && !t->deferred))
		tcp_send_rst(t);
	if (t->state == NS_TCP_CLOSED)
		tcb_free(t);
	else
		tcb_closed(t);
}

void tcp_usr_close(struct tcb *t)
{
	switch (t->state) {
	case NS_TCP_LISTEN:
	case NS_TCP_SYN_SENT:
		tcp_usr_abort(t);
		return;
	case NS_TCP_SYN_RECEIVED:
		if (t->deferred) {
			tcp_usr_abort(t);
			return;
		}
		break;
	case NS_TCP_CLOSED:
		tcb_free(t);
		return;
	default:
		break;
	}
	/* Unread data on close: reset, as RFC 2525 2.17 and Linux do. */
	if (t->rcvbuf.len || t->nooo) {
		tcp_usr_abort(t);
		return;
	}
	t->sock = NULL;
	send_fin(t);
	if (t->state == NS_TCP_FIN_WAIT_2)
		timer_arm_in(t->st, &t->t_2msl, (uint64_t)t->cfg.linger2_ms * 1000);
	if (t->state == NS_TCP_TIME_WAIT) {
		ooo_clear(t);
		ring_free(&t->rcvbuf);
	}
}

/* ---------------------------------------------------- deferred accept */

int tcp_usr_accept_complete(struct tcb *t)
{
	if (!t->deferred)
		return t->state == NS_TCP_CLOSED ? -ECONNRESET : -EINVAL;
	t->deferred = false;
	tcp_send_syn(t);
	return 0;
}

int tcp_usr_accept_refuse(struct tcb *t, bool icmp, uint8_t code)
{
	if (!t->deferred)
		return -EINVAL;
	if (icmp && ipa_is_v4(&t->laddr))
		icmp_send_error_raw(t->st, ipa_v4_of(&t->laddr), t->syn_ip, t->syn_ip_len,
				    ICMP_UNREACH, code);
	else if (icmp) /* the IPv4 code's IPv6 twin (RFC 4443 3.1) */
		icmp6_send_error(t->st, NULL, t->syn_ip, t->syn_ip_len, ICMP6_UNREACH,
				 icmp6_unreach_code(code), 0);
	else
		tcp_send_reset_raw(t->st, &t->laddr, t->lport, &t->raddr, t->rport, 0,
				   t->rcv_nxt, TH_RST | TH_ACK);
	t->deferred = false;
	tcb_closed(t);
	return 0;
}

/* ------------------------------------------------------------ status */

unsigned tcp_usr_events(const struct tcb *t)
{
	unsigned ev = 0;
	bool rd_done = t->fin_rcvd || t->user_rd_shut || t->reset;

	if (t->state == NS_TCP_LISTEN)
		return t->accq.head ? NS_EV_IN : 0;
	if (t->rcvbuf.len || rd_done)
		ev |= NS_EV_IN;
	if (t->err)
		ev |= NS_EV_ERR;
	if ((t->state == NS_TCP_ESTABLISHED || t->state == NS_TCP_CLOSE_WAIT) &&
	    !t->user_wr_shut && ring_space(&t->sndbuf))
		ev |= NS_EV_OUT;
	if (t->state == NS_TCP_CLOSED)
		ev |= NS_EV_OUT | NS_EV_HUP;
	if (rd_done && t->user_wr_shut)
		ev |= NS_EV_HUP;
	return ev;
}

void tcp_usr_info(const struct tcb *t, struct ns_tcp_info *i)
{
	memset(i, 0, sizeof(*i));
	i->state = t->state;
	i->snd_mss = t->snd_mss;
	i->rcv_mss = t->rcv_mss;
	i->cwnd = t->cwnd;
	i->ssthresh = t->ssthresh;
	i->snd_wnd = t->snd_wnd;
	i->rcv_wnd = tcp_rcv_wnd(t);
	i->srtt_us = t->rtt.srtt;
	i->rttvar_us = t->rtt.rttvar;
	i->rto_us = rtt_backoff_rto(&t->rtt, t->backoff);
	i->snd_wscale = t->snd_wscale;
	i->rcv_wscale = t->rcv_wscale;
	i->sack = t->sack_on;
	i->timestamps = t->ts_on;
	i->retransmits = t->n_rexmit;
	i->fast_retransmits = t->n_fast_rexmit;
	i->rto_timeouts = t->n_rto;
	i->bytes_acked = t->bytes_acked;
	i->bytes_received = t->bytes_received;
	i->snd_una = t->snd_una;
	i->snd_nxt = t->snd_nxt;
	i->snd_max = t->snd_max;
	i->rcv_nxt = t->rcv_nxt;
}

/* ----------------------------------------------------------- options */

static int set_buf(struct tcb *t, uint32_t *field, int val)
{
	if (val < 0)
		return -EINVAL;
	if (t->sndbuf.buf || t->state != NS_TCP_CLOSED)
		return -EISCONN; /* the rings are sized once */
	*field = u32_min(u32_max((uint32_t)val, TCP_MIN_BUF), TCP_MAX_BUF);
	return 0;
}

static int set_flag(struct tcb *t, int opt, bool v)
{
	switch (opt) {
	case NS_SO_REUSEADDR:
		t->cfg.reuseaddr = v;
		return 0;
	case NS_SO_KEEPALIVE:
		t->cfg.keepalive = v;
		tcp_arm_keepalive(t);
		return 0;
	case NS_TCP_NODELAY:
		t->cfg.nodelay = v;
		if (v)
			tcp_output(t);
		return 0;
	case NS_TCP_SACK:
		t->cfg.sack = v;
		return 0;
	case NS_TCP_TIMESTAMPS:
		t->cfg.ts = v;
		return 0;
	case NS_TCP_WSCALE:
		t->cfg.ws = v;
		return 0;
	case NS_TCP_DEFER_ACCEPT:
		t->cfg.defer_accept = v;
		return 0;
	default:
		return -ENOPROTOOPT;
	}
}

int tcp_usr_setopt(struct tcb *t, int opt, int val)
{
	switch (opt) {
	case NS_SO_SNDBUF:
		return set_buf(t, &t->cfg.sndbuf, val);
	case NS_SO_RCVBUF:
		return set_buf(t, &t->cfg.rcvbuf, val);
	case NS_TCP_MAXSEG:
		if (val != 0 && (val < 64 || val > 65495))
			return -EINVAL;
		t->cfg.maxseg = (uint16_t)val;
		return 0;
	case NS_TCP_KEEPIDLE:
	case NS_TCP_KEEPINTVL:
	case NS_TCP_KEEPCNT:
		if (val < 1 || val > 32767)
			return -EINVAL;
		*(opt == NS_TCP_KEEPIDLE    ? &t->cfg.keepidle_s
		  : opt == NS_TCP_KEEPINTVL ? &t->cfg.keepintvl_s
					    : &t->cfg.keepcnt) = (uint32_t)val;
		tcp_arm_keepalive(t);
		return 0;
	case NS_TCP_DELACK:
	case NS_TCP_LINGER2:
	case NS_TCP_USER_TIMEOUT:
		if (val < 0)
			return -EINVAL;
		*(opt == NS_TCP_DELACK	   ? &t->cfg.delack_ms
		  : opt == NS_TCP_LINGER2 ? &t->cfg.linger2_ms
					  : &t->cfg.user_timeout_ms) = (uint32_t)val;
		return 0;
	case NS_TCP_STATE:
	case NS_SO_ERROR:
	case NS_SO_NREAD:
	case NS_SO_NWRITE:
		return -EINVAL; /* read only */
	default:
		return set_flag(t, opt, val != 0);
	}
}

static bool get_flag(const struct tcb *t, int opt, int *val)
{
	const struct tcp_cfg *c = &t->cfg;

	switch (opt) {
	case NS_SO_REUSEADDR:
		*val = c->reuseaddr;
		return true;
	case NS_SO_KEEPALIVE:
		*val = c->keepalive;
		return true;
	case NS_TCP_NODELAY:
		*val = c->nodelay;
		return true;
	case NS_TCP_SACK:
		*val = c->sack;
		return true;
	case NS_TCP_TIMESTAMPS:
		*val = c->ts;
		return true;
	case NS_TCP_WSCALE:
		*val = c->ws;
		return true;
	case NS_TCP_DEFER_ACCEPT:
		*val = c->defer_accept;
		return true;
	default:
		return false;
	}
}

int tcp_usr_getopt(struct tcb *t, int opt, int *val)
{
	const struct tcp_cfg *c = &t->cfg;
	uint32_t v;

	if (get_flag(t, opt, val))
		return 0;
	switch (opt) {
	case NS_SO_SNDBUF: v = c->sndbuf; break;
	case NS_SO_RCVBUF: v = c->rcvbuf; break;
	case NS_TCP_MAXSEG: v = tcp_synchronized(t->state) ? t->snd_mss : c->maxseg; break;
	case NS_TCP_KEEPIDLE: v = c->keepidle_s; break;
	case NS_TCP_KEEPINTVL: v = c->keepintvl_s; break;
	case NS_TCP_KEEPCNT: v = c->keepcnt; break;
	case NS_TCP_DELACK: v = c->delack_ms; break;
	case NS_TCP_LINGER2: v = c->linger2_ms; break;
	case NS_TCP_USER_TIMEOUT: v = c->user_timeout_ms; break;
	case NS_TCP_STATE: v = (uint32_t)t->state; break;
	case NS_SO_ERROR: *val = take_err(t); return 0;
	case NS_SO_NREAD: v = t->rcvbuf.len; break;
	case NS_SO_NWRITE: v = t->sndbuf.len; break;
	default: return -ENOPROTOOPT;
	}
	*val = (int)v;
	return 0;
}
