/* socket.c — the socket-like API. Datagram sockets sit on one channel;
 * stream sockets on one TCP control block (tcp_usr.c), with the blocking,
 * non-blocking and event plumbing here. */
#include <stdlib.h>
#include <unistd.h>

#include "netstack/tcp_internal.h"

struct ns_sock {
	struct ns_stack *st;
	int type;
	int refs;
	bool nonblock, closed;
	struct ns_waitq wq;
	struct ns_chan *chan; /* datagram */
	struct ns_sockaddr remote;
	struct tcb *tcb; /* stream */
	ns_reader_fn reader; /* direct delivery (ns_sock_set_reader) */
	void *reader_ctx;
};

void sock_ref(struct ns_sock *s)
{
	s->refs++;
}

void sock_unref(struct ns_sock *s)
{
	if (--s->refs > 0)
		return;
	waitq_destroy(s->st, &s->wq);
	free(s);
}

void sock_free_all(struct ns_stack *st)
{
	/* Sockets belong to their users; channels still in the tree go. */
	while (st->chans)
		chan_free(st, st->chans);
}

unsigned sock_events_locked(struct ns_sock *s)
{
	unsigned ev = NS_EV_OUT;

	if (s->type == NS_SOCK_STREAM)
		return s->tcb ? tcp_usr_events(s->tcb) : NS_EV_HUP;
	if (s->chan && s->chan->qhead)
		ev |= NS_EV_IN;
	return ev;
}

void sock_notify(struct ns_stack *st, struct ns_sock *s)
{
	waitq_notify(st, &s->wq);
}

static struct ns_sock *sock_alloc(struct ns_stack *st, int type)
{
	struct ns_sock *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->st = st;
	s->type = type;
	s->refs = 1;
	waitq_init(&s->wq);
	s->wq.cb_sock = s;
	return s;
}

struct ns_sock *ns_socket(struct ns_stack *st, int type, int *err)
{
	struct tcp_cfg cfg;
	struct ns_sock *s;

	if (type != NS_SOCK_DGRAM && type != NS_SOCK_STREAM) {
		*err = -EINVAL;
		return NULL;
	}
	s = sock_alloc(st, type);
	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	if (type == NS_SOCK_STREAM) {
		tcp_default_cfg(&cfg);
		stack_enter(st);
		s->tcb = tcb_new(st, &cfg);
		if (s->tcb)
			s->tcb->sock = s;
		stack_leave(st);
		if (!s->tcb) {
			sock_unref(s);
			*err = -ENOMEM;
			return NULL;
		}
	}
	*err = 0;
	return s;
}

static int bind_locked(struct ns_sock *s, const struct ns_sockaddr *local)
{
	struct ns_stack *st = s->st;
	const struct ns_sockaddr none = { 0 };
	struct chan_key k = { .proto = NS_PROTO_UDP };

	if (s->type == NS_SOCK_STREAM)
		return s->tcb ? tcp_usr_bind(s->tcb, local) : -EBADF;
	if (s->chan)
		return -EINVAL;
	k.laddr = ipa_from_sa(local ? local : &none);
	k.raddr = ipa_any_like(&k.laddr);
	k.lport = local ? local->port : 0;
	if (!ipa_is_any(&k.laddr) && !ipa_is_local(st, &k.laddr))
		return -EADDRNOTAVAIL;
	if (!k.lport && !(k.lport = chan_ephemeral_port(st, k.proto, &k.laddr)))
		return -EADDRINUSE;
	if (chan_tree_find(st, &k))
		return -EADDRINUSE;
	s->chan = chan_new(st, &k);
	if (!s->chan)
		return -ENOMEM;
	s->chan->wq = &s->wq;
	s->chan->sock = s;
	chan_tree_insert(st, s->chan);
	return 0;
}

int ns_bind(struct ns_sock *s, const struct ns_sockaddr *local)
{
	int rc;

	stack_enter(s->st);
	rc = bind_locked(s, local);
	stack_leave(s->st);
	return rc;
}

/* Enter the stack for a stream-only call: 0 with the lock held, or
 * -errno with it not taken. */
static int stream_enter(struct ns_sock *s)
{
	if (s->type != NS_SOCK_STREAM)
		return -EOPNOTSUPP;
	stack_enter(s->st);
	if (!s->tcb) {
		stack_leave(s->st);
		return -EBADF;
	}
	return 0;
}

static int stream_leave(struct ns_sock *s, int rc)
{
	stack_leave(s->st);
	return rc;
}

int ns_listen(struct ns_sock *s, int backlog)
{
	int rc = stream_enter(s);

	return rc ? rc : stream_leave(s, tcp_usr_listen(s->tcb, backlog));
}

static bool would_block(struct ns_sock *s, int flags)
{
	return s->nonblock || (flags & NS_MSG_DONTWAIT);
}

static struct ns_sock *accept_locked(struct ns_sock *s, struct ns_sockaddr *peer, int *err)
{
	struct tcb *c;
	struct ns_sock *n;

	if (!s->tcb || s->tcb->state != NS_TCP_LISTEN) {
		*err = -EINVAL;
		return NULL;
	}
	while (!(c = s->tcb->accq.head)) {
		if (s->nonblock || s->closed) {
			*err = -EAGAIN;
			return NULL;
		}
		waitq_wait(s->st, &s->wq, -1);
		if (!s->tcb || s->tcb->state != NS_TCP_LISTEN) {
			*err = -EINVAL;
			return NULL;
		}
	}
	n = sock_alloc(s->st, NS_SOCK_STREAM);
	if (!n) {
		*err = -ENOMEM;
		return NULL;
	}
	tcp_usr_accept(s->tcb);
	n->tcb = c;
	c->sock = n;
	if (peer)
		ipa_to_sa(&c->raddr, c->rport, peer);
	*err = 0;
	return n;
}

struct ns_sock *ns_accept(struct ns_sock *s, struct ns_sockaddr *peer, int *err)
{
	struct ns_sock *n;

	if (s->type != NS_SOCK_STREAM) {
		*err = -EOPNOTSUPP;
		return NULL;
	}
	stack_enter(s->st);
	n = accept_locked(s, peer, err);
	stack_leave(s->st);
	return n;
}

int ns_accept_complete(struct ns_sock *s)
{
	int rc = stream_enter(s);

	return rc ? rc : stream_leave(s, tcp_usr_accept_complete(s->tcb));
}

int ns_accept_refuse(struct ns_sock *s, bool icmp, uint8_t icmp_code)
{
	int rc = stream_enter(s);

	return rc ? rc : stream_leave(s, tcp_usr_accept_refuse(s->tcb, icmp, icmp_code));
}

/* A connection that failed (refused, reset, timed out) may be retried on
 * the same socket, as on Linux: with a fresh control block (and port). */
static struct tcb *fresh_tcb_after_failure(struct ns_sock *s)
{
	struct tcb *t = s->tcb, *n;

	if (!t || t->state != NS_TCP_CLOSED || !t->reset)
		return t;
	n = tcb_new(s->st, &t->cfg);
	if (!n)
		return t;
	t->sock = NULL;
	tcb_free(t);
	n->sock = s;
	s->tcb = n;
	return n;
}

/* A datagram socket used before bind: any address of the family it
 * talks to (IPv6 any is dual-stack). */
static int bind_auto(struct ns_sock *s, const struct ns_sockaddr *to)
{
	struct ns_sockaddr any = { 0 };

	any.family = to && to->family == NS_AF_INET6 ? NS_AF_INET6 : NS_AF_INET;
	return bind_locked(s, &any);
}

static int connect_stream_locked(struct ns_sock *s, const struct ns_sockaddr *remote)
{
	struct tcb *t = fresh_tcb_after_failure(s);
	int rc;

	if (!t)
		return -EBADF;
	if ((rc = tcp_usr_connect(t, remote)) < 0)
		return rc;
	if (s->nonblock)
		return -EINPROGRESS;
	while (t->state == NS_TCP_SYN_SENT || t->state == NS_TCP_SYN_RECEIVED) {
		if (s->closed)
			return -EBADF;
		waitq_wait(s->st, &s->wq, -1);
	}
	if (t->state != NS_TCP_CLOSED)
		return 0;
	rc = t->err ? t->err : -ECONNREFUSED;
	t->err = 0;
	return rc;
}

int ns_connect(struct ns_sock *s, const struct ns_sockaddr *remote)
{
	int rc = 0;

	stack_enter(s->st);
	if (s->type == NS_SOCK_STREAM) {
		rc = connect_stream_locked(s, remote);
	} else {
		if (!s->chan)
			rc = bind_auto(s, remote);
		if (rc == 0)
			s->remote = *remote;
	}
	stack_leave(s->st);
	return rc;
}

static ssize_t send_stream_locked(struct ns_sock *s, const uint8_t *buf, size_t len, int flags)
{
	size_t done = 0;

	while (s->tcb) {
		ssize_t n = tcp_usr_send(s->tcb, buf + done, len - done);

		if (n > 0)
			done += (size_t)n;
		if (done == len || (n < 0 && n != -EAGAIN))
			return done ? (ssize_t)done : n;
		if (would_block(s, flags) || s->closed)
			return done ? (ssize_t)done : -EAGAIN;
		waitq_wait(s->st, &s->wq, -1);
	}
	return -EBADF;
}

ssize_t ns_sendto(struct ns_sock *s, const void *buf, size_t len, int flags,
		  const struct ns_sockaddr *to)
{
	struct ns_pktinfo info = { 0 };
	ssize_t rc = 0;

	stack_enter(s->st);
	if (s->type == NS_SOCK_STREAM) {
		rc = send_stream_locked(s, buf, len, flags);
		stack_leave(s->st);
		return rc;
	}
	if (!s->chan)
		rc = bind_auto(s, to ? to : &s->remote);
	if (rc == 0) {
		info.dst = to ? *to : s->remote;
		rc = chan_sendto_locked(s->chan, buf, len, &info);
	}
	stack_leave(s->st);
	return rc;
}

ssize_t ns_send(struct ns_sock *s, const void *buf, size_t len, int flags)
{
	return ns_sendto(s, buf, len, flags, NULL);
}

static ssize_t recv_stream_locked(struct ns_sock *s, uint8_t *buf, size_t len, int flags)
{
	bool peek = flags & NS_MSG_PEEK, all = (flags & NS_MSG_WAITALL) && !peek;
	size_t done = 0;

	while (s->tcb) {
		ssize_t n = tcp_usr_recv(s->tcb, buf + done, len - done, peek);

		if (n > 0)
			done += (size_t)n;
		if (done == len || (done && !all) || (n <= 0 && n != -EAGAIN))
			return done ? (ssize_t)done : n;
		if (would_block(s, flags) || s->closed)
			return done ? (ssize_t)done : -EAGAIN;
		waitq_wait(s->st, &s->wq, -1);
	}
	return -EBADF;
}

ssize_t ns_recvfrom(struct ns_sock *s, void *buf, size_t len, int flags,
		    struct ns_sockaddr *from)
{
	struct ns_pktinfo info;
	ssize_t rc;
	bool nb = would_block(s, flags);

	stack_enter(s->st);
	if (s->type == NS_SOCK_STREAM) {
		rc = recv_stream_locked(s, buf, len, flags);
		if (rc >= 0 && from && s->tcb)
			ipa_to_sa(&s->tcb->raddr, s->tcb->rport, from);
		stack_leave(s->st);
		return rc;
	}
	for (;;) {
		rc = s->chan ? chan_recv_locked(s->chan, buf, len, &info, flags & NS_MSG_PEEK)
			     : -EAGAIN;
		if (rc != -EAGAIN || nb || s->closed)
			break;
		waitq_wait(s->st, &s->wq, -1);
	}
	if (rc >= 0 && from)
		*from = info.src;
	if (rc > (ssize_t)len)
		rc = (ssize_t)len;
	stack_leave(s->st);
	return rc;
}

ssize_t ns_recv(struct ns_sock *s, void *buf, size_t len, int flags)
{
	return ns_recvfrom(s, buf, len, flags, NULL);
}

int ns_shutdown(struct ns_sock *s, int how)
{
	int rc = stream_enter(s);

	return rc ? rc : stream_leave(s, tcp_usr_shutdown(s->tcb, how));
}

static int close_sock(struct ns_sock *s, bool abort)
{
	struct ns_stack *st = s->st;

	stack_enter(st);
	s->closed = true;
	if (s->chan)
		chan_free(st, s->chan);
	s->chan = NULL;
	if (s->tcb) {
		s->tcb->sock = NULL;
		if (abort)
			tcp_usr_abort(s->tcb);
		else
			tcp_usr_close(s->tcb);
		s->tcb = NULL;
	}
	pthread_cond_broadcast(&s->wq.cv);
	sock_unref(s);
	stack_leave(st);
	return 0;
}

int ns_close(struct ns_sock *s)
{
	return close_sock(s, false);
}

int ns_abort(struct ns_sock *s)
{
	return close_sock(s, true);
}

int ns_setsockopt(struct ns_sock *s, int opt, int val)
{
	int rc = 0;

	stack_enter(s->st);
	if (opt == NS_SO_NONBLOCK)
		s->nonblock = val != 0;
	else if (s->type == NS_SOCK_STREAM && s->tcb)
		rc = tcp_usr_setopt(s->tcb, opt, val);
	else
		rc = -ENOPROTOOPT;
	stack_leave(s->st);
	return rc;
}

int ns_getsockopt(struct ns_sock *s, int opt, int *val)
{
	int rc = 0;

	stack_enter(s->st);
	if (opt == NS_SO_NONBLOCK)
		*val = s->nonblock;
	else if (s->type == NS_SOCK_STREAM && s->tcb)
		rc = tcp_usr_getopt(s->tcb, opt, val);
	else
		rc = -ENOPROTOOPT;
	stack_leave(s->st);
	return rc;
}

int ns_getsockname(struct ns_sock *s, struct ns_sockaddr *sa)
{
	int rc = -EINVAL;

	stack_enter(s->st);
	if (s->tcb) {
		ipa_to_sa(&s->tcb->laddr, s->tcb->lport, sa);
		rc = 0;
	} else if (s->chan) {
		ipa_to_sa(&s->chan->key.laddr, s->chan->key.lport, sa);
		rc = 0;
	}
	stack_leave(s->st);
	return rc;
}

int ns_getpeername(struct ns_sock *s, struct ns_sockaddr *sa)
{
	int rc = -ENOTCONN;

	stack_enter(s->st);
	if (s->tcb && !ipa_is_any(&s->tcb->raddr) && tcp_synchronized(s->tcb->state)) {
		ipa_to_sa(&s->tcb->raddr, s->tcb->rport, sa);
		rc = 0;
	} else if (s->type == NS_SOCK_DGRAM &&
		   !ipa_is_any((struct ipaddr[]){ ipa_from_sa(&s->remote) })) {
		*sa = s->remote;
		rc = 0;
	}
	stack_leave(s->st);
	return rc;
}

unsigned ns_sock_events(struct ns_sock *s)
{
	unsigned ev;

	stack_enter(s->st);
	ev = sock_events_locked(s);
	waitq_clear_fd(&s->wq);
	if ((ev & NS_EV_IN) && s->wq.efd >= 0) { /* level: readable while data waits */
		uint64_t one = 1;

		s->wq.efd_signalled = true;
		(void)!write(s->wq.efd, &one, sizeof(one));
	}
	stack_leave(s->st);
	return ev;
}

int ns_sock_fd(struct ns_sock *s)
{
	int fd;

	stack_enter(s->st);
	fd = waitq_fd(&s->wq);
	stack_leave(s->st);
	return fd;
}

void ns_sock_set_callback(struct ns_sock *s, ns_sock_cb cb, void *ctx)
{
	stack_enter(s->st);
	s->wq.cb = cb;
	s->wq.cb_ctx = ctx;
	stack_leave(s->st);
}

ssize_t ns_recv_peek(struct ns_sock *s, struct ns_iov iov[2])
{
	ssize_t n = stream_enter(s);

	if (n)
		return n;
	n = tcp_usr_peek(s->tcb, iov);
	stack_leave(s->st);
	return n;
}

int ns_recv_consume(struct ns_sock *s, size_t n)
{
	int rc = stream_enter(s);

	return rc ? rc : stream_leave(s, tcp_usr_consume(s->tcb, n));
}

int ns_sock_set_reader(struct ns_sock *s, ns_reader_fn fn, void *ctx)
{
	if (s->type != NS_SOCK_STREAM)
		return -EOPNOTSUPP;
	stack_enter(s->st);
	s->reader = fn;
	s->reader_ctx = ctx;
	stack_leave(s->st);
	return 0;
}

uint32_t sock_read_direct(struct ns_sock *s, const void *data, uint32_t len)
{
	size_t n;

	if (!s->reader || s->closed)
		return 0;
	n = s->reader(s->reader_ctx, data, len);
	return n < len ? (uint32_t)n : len;
}

int ns_tcp_info(struct ns_sock *s, struct ns_tcp_info *info)
{
	int rc = -EOPNOTSUPP;

	stack_enter(s->st);
	if (s->tcb) {
		tcp_usr_info(s->tcb, info);
		rc = 0;
	}
	stack_leave(s->st);
	return rc;
}

int ns_tcp_save(struct ns_sock *s, struct ns_tcp_snapshot *x, void **snd, void **rcv)
{
	int rc = stream_enter(s);

	return rc ? rc : stream_leave(s, tcp_usr_save(s->tcb, x, snd, rcv));
}

struct ns_sock *ns_tcp_restore(struct ns_stack *st, const struct ns_tcp_snapshot *x, const void *snd,
			       const void *rcv, int *err)
{
	struct ns_sock *s = ns_socket(st, NS_SOCK_STREAM, err);
	int rc;

	if (!s)
		return NULL;
	stack_enter(st);
	rc = tcp_usr_restore(s->tcb, x, snd, rcv);
	stack_leave(st);
	if (rc < 0) {
		ns_close(s);
		*err = rc;
		return NULL;
	}
	return s;
}

const char *ns_tcp_state_name(int state)
{
	static const char *const names[] = {
		"CLOSED",     "LISTEN",	    "SYN-SENT", "SYN-RECEIVED", "ESTABLISHED", "FIN-WAIT-1",
		"FIN-WAIT-2", "CLOSE-WAIT", "CLOSING",	"LAST-ACK",	"TIME-WAIT",
	};

	return state >= 0 && state <= NS_TCP_TIME_WAIT ? names[state] : "?";
}
