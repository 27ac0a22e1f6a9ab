/* socket.c — the socket-like API. Datagram sockets sit on one channel;
 * stream sockets answer -EPROTONOSUPPORT until TCP lands. */
#include <stdlib.h>
#include <unistd.h>

#include "netstack/internal.h"

struct ns_sock {
	struct ns_stack *st;
	int type;
	int refs;
	bool nonblock, closed;
	struct ns_waitq wq;
	struct ns_chan *chan;
	struct ns_sockaddr remote;
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

	if (s->chan && s->chan->qhead)
		ev |= NS_EV_IN;
	return ev;
}

void sock_notify(struct ns_stack *st, struct ns_sock *s)
{
	waitq_notify(st, &s->wq);
}

struct ns_sock *ns_socket(struct ns_stack *st, int type, int *err)
{
	struct ns_sock *s;

	if (type != NS_SOCK_DGRAM) {
		*err = type == NS_SOCK_STREAM ? -EPROTONOSUPPORT : -EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	s->st = st;
	s->type = type;
	s->refs = 1;
	waitq_init(&s->wq);
	s->wq.cb_sock = s;
	*err = 0;
	return s;
}

static int bind_locked(struct ns_sock *s, const struct ns_sockaddr *local)
{
	struct ns_stack *st = s->st;
	struct chan_key k = { .proto = NS_PROTO_UDP };

	if (s->chan)
		return -EINVAL;
	k.laddr = local ? local->addr : 0;
	k.lport = local ? local->port : 0;
	if (k.laddr && !iface_is_local(st, k.laddr))
		return -EADDRNOTAVAIL;
	if (!k.lport && !(k.lport = chan_ephemeral_port(st, k.proto, k.laddr)))
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

int ns_listen(struct ns_sock *s, int backlog)
{
	return -EOPNOTSUPP;
}

struct ns_sock *ns_accept(struct ns_sock *s, struct ns_sockaddr *peer, int *err)
{
	*err = -EOPNOTSUPP;
	return NULL;
}

int ns_accept_complete(struct ns_sock *s)
{
	return -EOPNOTSUPP;
}

int ns_accept_refuse(struct ns_sock *s, bool icmp, uint8_t icmp_code)
{
	return -EOPNOTSUPP;
}

int ns_connect(struct ns_sock *s, const struct ns_sockaddr *remote)
{
	int rc = 0;

	stack_enter(s->st);
	if (!s->chan)
		rc = bind_locked(s, NULL);
	if (rc == 0)
		s->remote = *remote;
	stack_leave(s->st);
	return rc;
}

ssize_t ns_sendto(struct ns_sock *s, const void *buf, size_t len, int flags,
		  const struct ns_sockaddr *to)
{
	struct ns_pktinfo info = { 0 };
	ssize_t rc = 0;

	stack_enter(s->st);
	if (!s->chan)
		rc = bind_locked(s, NULL);
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

ssize_t ns_recvfrom(struct ns_sock *s, void *buf, size_t len, int flags,
		    struct ns_sockaddr *from)
{
	struct ns_pktinfo info;
	ssize_t rc;
	bool nb = s->nonblock || (flags & NS_MSG_DONTWAIT);

	stack_enter(s->st);
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
	return -EOPNOTSUPP;
}

int ns_close(struct ns_sock *s)
{
	struct ns_stack *st = s->st;

	stack_enter(st);
	s->closed = true;
	if (s->chan)
		chan_free(st, s->chan);
	s->chan = NULL;
	pthread_cond_broadcast(&s->wq.cv);
	sock_unref(s);
	stack_leave(st);
	return 0;
}

int ns_abort(struct ns_sock *s)
{
	return ns_close(s);
}

int ns_setsockopt(struct ns_sock *s, int opt, int val)
{
	if (opt != NS_SO_NONBLOCK)
		return -ENOPROTOOPT;
	stack_enter(s->st);
	s->nonblock = val != 0;
	stack_leave(s->st);
	return 0;
}

int ns_getsockopt(struct ns_sock *s, int opt, int *val)
{
	if (opt != NS_SO_NONBLOCK)
		return -ENOPROTOOPT;
	*val = s->nonblock;
	return 0;
}

int ns_getsockname(struct ns_sock *s, struct ns_sockaddr *sa)
{
	int rc = -EINVAL;

	stack_enter(s->st);
	if (s->chan) {
		sa->addr = s->chan->key.laddr;
		sa->port = s->chan->key.lport;
		rc = 0;
	}
	stack_leave(s->st);
	return rc;
}

int ns_getpeername(struct ns_sock *s, struct ns_sockaddr *sa)
{
	if (!s->remote.addr)
		return -ENOTCONN;
	*sa = s->remote;
	return 0;
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

int ns_tcp_info(struct ns_sock *s, struct ns_tcp_info *info)
{
	return -EOPNOTSUPP;
}

const char *ns_tcp_state_name(int state)
{
	static const char *const names[] = {
		"CLOSED",     "LISTEN",	    "SYN-SENT", "SYN-RECEIVED", "ESTABLISHED", "FIN-WAIT-1",
		"FIN-WAIT-2", "CLOSE-WAIT", "CLOSING",	"LAST-ACK",	"TIME-WAIT",
	};

	return state >= 0 && state <= NS_TCP_TIME_WAIT ? names[state] : "?";
}
