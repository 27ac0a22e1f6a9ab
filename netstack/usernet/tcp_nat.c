/* tcp_nat.c — TCP between the guest (netstack sockets) and the host
 * (kernel sockets).
 *
 * Outbound: one listener bound to {0, 0} on the NS_IF_ACCEPT_ANY interface
 * with NS_TCP_DEFER_ACCEPT sees every guest SYN; a non-blocking host
 * connect starts, and only when it succeeds does the guest get its
 * SYN-ACK (ns_accept_complete); a refused connect becomes a RST, an
 * unreachable one an ICMP unreachable (ns_accept_refuse).
 * Inbound (hostfwd tcp): a host listener; each accepted connection becomes
 * a netstack connect into the guest.
 *
 * Relay: guest -> host is written to the host socket straight from the
 * guest connection's receive ring (ns_recv_peek / ns_recv_consume: no
 * relay buffer, no copy); only what the host socket took is consumed, so
 * a slow host stops the guest through the window. Host -> guest has one
 * bounded buffer, read only while it is empty. Either way a slow reader
 * stops the writer through the TCP windows (no unbounded buffering).
 * FIN is relayed as shutdown(SHUT_WR) once the bytes before it are out. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "netstack/usernet/backend.h"

enum tcp_flow_state {
	TF_HOST_CONNECTING,  /* guest SYN deferred, host connect in flight */
	TF_GUEST_CONNECTING, /* hostfwd: netstack connect into the guest */
	TF_OPEN,
};

/* One direction of the relay. */
struct relay_buf {
	uint8_t *data;
	size_t len, off; /* bytes [off, len) wait to be written */
	bool eof;	 /* the reading side sent FIN */
	bool shut;	 /* FIN passed on to the writing side */
	bool blocked;	 /* guest -> host: the host socket is full */
};

struct un_tcp_flow {
	struct un_tcp_flow *prev, *next; /* all flows */
	struct un_tcp_flow *ready_next;
	bool ready, busy, fwd, dead; /* busy: being serviced, free later */
	bool host_unwatched;	     /* host fd left epoll after its HUP */
	/* A guest's IPv6 connection to the host's address goes to ::1, and
	 * to 127.0.0.1 when ::1 refuses it: most host services listen on
	 * IPv4 loopback only, and the guest should not have to care. */
	bool loop4_fallback;
	struct un_ns *n;
	enum tcp_flow_state state;
	struct un_watch w; /* host socket */
	struct ns_sock *s; /* guest side */
	struct relay_buf g2h, h2g;
};

static void flow_mark_ready(struct un_tcp_flow *f)
{
	struct un_ns *n = f->n;

	if (f->ready || f->dead)
		return;
	f->ready = true;
	f->ready_next = n->tcp_ready;
	n->tcp_ready = f;
}

/* Runs after the stack lock drops: only queue the flow. */
static void on_sock_event(struct ns_sock *s, unsigned events, void *ctx)
{
	(void)s;
	(void)events;
	flow_mark_ready(ctx);
}

static struct un_tcp_flow *flow_new(struct un_ns *n, struct ns_sock *s, bool fwd)
{
	struct un_tcp_flow *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->h2g.data = malloc(n->cfg.tcp_buf);
	if (!f->h2g.data) {
		free(f);
		return NULL;
	}
	f->n = n;
	f->s = s;
	f->fwd = fwd;
	f->w.fd = -1;
	f->next = n->tcp_flows;
	if (f->next)
		f->next->prev = f;
	n->tcp_flows = f;
	n->tcp_count++;
	/* The relay writes what it read as soon as it read it; coalescing is
	 * the endpoints' business (their own Nagle), not ours. */
	ns_setsockopt(s, NS_SO_NONBLOCK, 1);
	ns_setsockopt(s, NS_TCP_NODELAY, 1);
	ns_setsockopt(s, NS_TCP_DELACK, 0);
	ns_sock_set_callback(s, on_sock_event, f);
	return f;
}

/* Tear down both sides; abort sends RSTs (errors), else FINs are done. */
static void flow_free(struct un_tcp_flow *f, bool abort)
{
	struct un_ns *n = f->n;

	if (f->dead)
		return;
	f->dead = true;
	if (f->w.fd >= 0 && abort) {
		struct linger lg = {1, 0};

		setsockopt(f->w.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	un_watch_close(n, &f->w);
	ns_sock_set_callback(f->s, NULL, NULL);
	if (abort)
		ns_abort(f->s);
	else
		ns_close(f->s);
	if (f->prev)
		f->prev->next = f->next;
	else
		n->tcp_flows = f->next;
	if (f->next)
		f->next->prev = f->prev;
	n->tcp_count--;
	free(f->h2g.data);
	/* Still on the ready list or being serviced: freed there. */
	if (!f->ready && !f->busy)
		free(f);
}

/* --------------------------------------------------------------- relay */

/* Both ends as the relay sees them: -EAGAIN when nothing can move now. */
static ssize_t guest_write(struct un_tcp_flow *f, const void *buf, size_t len)
{
	ssize_t w = ns_send(f->s, buf, len, NS_MSG_DONTWAIT);

	return w == -ENOTCONN ? -EAGAIN : w; /* not established yet */
}

static void guest_shut(struct un_tcp_flow *f)
{
	ns_shutdown(f->s, NS_SHUT_WR);
}

static ssize_t host_result(ssize_t r)
{
	if (r >= 0)
		return r;
	return errno == EWOULDBLOCK ? -EAGAIN : -errno;
}

static ssize_t host_read(struct un_tcp_flow *f, void *buf, size_t len)
{
	return host_result(recv(f->w.fd, buf, len, MSG_DONTWAIT));
}

/* Guest bytes in place (up to two pieces of its receive ring). */
static ssize_t host_writev(struct un_tcp_flow *f, const struct ns_iov iov[2])
{
	struct iovec v[2] = {{(void *)iov[0].base, iov[0].len}, {(void *)iov[1].base, iov[1].len}};
	struct msghdr m = {.msg_iov = v, .msg_iovlen = 2};

	return host_result(sendmsg(f->w.fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL));
}

static void host_shut(struct un_tcp_flow *f)
{
	shutdown(f->w.fd, SHUT_WR);
}

/* Host -> guest through the flow's one bounded buffer; false when the
 * flow broke. The host socket is only read while the buffer is empty:
 * that is the bound. */
static bool pump_to_guest(struct un_tcp_flow *f)
{
	struct relay_buf *b = &f->h2g;

	for (;;) {
		ssize_t r;

		if (b->off == b->len && !b->eof) {
			r = host_read(f, b->data, f->n->cfg.tcp_buf);
			if (r == -EAGAIN)
				break;
			if (r < 0)
				return false;
			b->off = 0;
			b->len = (size_t)r;
			b->eof = r == 0;
		}
		if (b->off == b->len)
			break; /* EOF */
		r = guest_write(f, b->data + b->off, b->len - b->off);
		if (r == -EAGAIN)
			break;
		if (r < 0)
			return false;
		b->off += (size_t)r;
		f->n->stats.tcp_bytes_in += (uint64_t)r;
	}
	if (b->eof && b->off == b->len && !b->shut) {
		guest_shut(f);
		b->shut = true;
	}
	return true;
}

/* Guest -> host, written from the guest's receive ring where the bytes
 * sit and consumed as the host socket takes them; false when the flow
 * broke. */
static bool pump_to_host(struct un_tcp_flow *f)
{
	struct relay_buf *b = &f->g2h;

	b->blocked = false;
	while (!b->eof) {
		struct ns_iov iov[2];
		ssize_t n = ns_recv_peek(f->s, iov), w;

		if (n == -EAGAIN)
			break;
		if (n < 0)
			return false;
		if (n == 0) {
			b->eof = true;
			break;
		}
		w = host_writev(f, iov);
		if (w == -EAGAIN) {
			b->blocked = true;
			break;
		}
		if (w < 0 || ns_recv_consume(f->s, (size_t)w) < 0)
			return false;
		f->n->stats.tcp_bytes_out += (uint64_t)w;
		if (w < n) {
			b->blocked = true;
			break;
		}
	}
	if (b->eof && !b->shut) {
		host_shut(f);
		b->shut = true;
	}
	return true;
}

static void flow_pump(struct un_tcp_flow *f)
{
	uint32_t ev = 0;

	if (!pump_to_host(f) || !pump_to_guest(f)) {
		flow_free(f, true);
		return;
	}
	if (f->g2h.shut && f->h2g.shut) {
		flow_free(f, false);
		return;
	}
	if (!f->h2g.eof && f->h2g.off == f->h2g.len)
		ev |= EPOLLIN;
	if (f->g2h.blocked)
		ev |= EPOLLOUT;
	if (!f->host_unwatched)
		un_watch_set(f->n, &f->w, ev);
}

/* --------------------------------------------------- outbound (NAT) */

static void refuse_for_errno(struct ns_sock *s, int err)
{
	if (err == ECONNREFUSED || err == ECONNRESET)
		ns_accept_refuse(s, false, 0);
	else
		ns_accept_refuse(s, true, err == ENETUNREACH ? 0 : 1); /* net / host */
}

static bool retry_loop4(struct un_ns *n, struct un_tcp_flow *f, int err);

static void on_host_fd(struct un_ns *n, struct un_watch *w, uint32_t events)
{
	struct un_tcp_flow *f = (void *)((char *)w - offsetof(struct un_tcp_flow, w));
	int err = 0;
	socklen_t len = sizeof(err);

	if (f->state == TF_HOST_CONNECTING) {
		if (getsockopt(w->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = errno;
		if (err && retry_loop4(n, f, err))
			return;
		if (err) {
			n->stats.tcp_connect_fail++;
			refuse_for_errno(f->s, err);
			flow_free(f, false);
			return;
		}
		if (ns_accept_complete(f->s) < 0) {
			flow_free(f, true);
			return;
		}
		f->state = TF_OPEN;
	} else if (events & (EPOLLERR | EPOLLHUP)) {
		/* Reported whatever the interest: act on it once. */
		if ((getsockopt(w->fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err) ||
		    f->state == TF_GUEST_CONNECTING) {
			if (f->state == TF_GUEST_CONNECTING)
				n->stats.hostfwd_failed++;
			flow_free(f, true);
			return;
		}
		/* Host side closed both ways: what is buffered still goes to
		 * the guest, driven by the guest's events. */
		epoll_ctl(n->epfd, EPOLL_CTL_DEL, w->fd, NULL);
		f->host_unwatched = true;
	}
	if (f->state == TF_OPEN)
		flow_pump(f);
}

static bool rate_ok(struct un_ns *n)
{
	uint64_t now = un_now(n);

	if (!n->cfg.max_conn_rate)
		return true;
	if (now - n->rate_window_us >= 1000000) {
		n->rate_window_us = now;
		n->rate_count = 0;
	}
	return n->rate_count++ < n->cfg.max_conn_rate;
}

/* Start the host side of an outbound flow; -errno when it failed at once. */
static int host_connect(struct un_ns *n, struct un_tcp_flow *f, const struct sockaddr_storage *sa,
			socklen_t salen)
{
	int fd, one = 1, err;

	fd = socket(sa->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (const struct sockaddr *)sa, salen) < 0 && errno != EINPROGRESS) {
		err = errno;
		close(fd);
		return -err;
	}
	if (un_watch_add(n, &f->w, fd, EPOLLOUT, on_host_fd) < 0) {
		close(fd);
		return -ENOMEM;
	}
	return 0;
}

static bool is_loop6(const struct sockaddr_storage *sa)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

	return sa->ss_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
}

/* ::1 refused (or the host has no IPv6 loopback): try 127.0.0.1. */
static bool retry_loop4(struct un_ns *n, struct un_tcp_flow *f, int err)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
	struct sockaddr_storage sa;
	struct ns_sockaddr dst;

	if (!f->loop4_fallback || (err != ECONNREFUSED && err != EADDRNOTAVAIL &&
				   err != ENETUNREACH && err != EAFNOSUPPORT))
		return false;
	f->loop4_fallback = false;
	if (ns_getsockname(f->s, &dst) < 0)
		return false;
	un_watch_close(n, &f->w);
	sin.sin_port = htons(dst.port);
	memset(&sa, 0, sizeof(sa));
	memcpy(&sa, &sin, sizeof(sin));
	return host_connect(n, f, &sa, sizeof(sin)) == 0;
}

static void nat_connect(struct un_ns *n, struct ns_sock *s)
{
	struct ns_sockaddr dst;
	struct sockaddr_storage sa;
	struct un_tcp_flow *f;
	socklen_t salen;
	bool dns;
	int err;

	if (ns_getsockname(s, &dst) < 0 || !un_map_host(n, &dst, &sa, &salen, &dns))
		goto refuse;
	if (n->tcp_count >= n->cfg.max_tcp_flows) {
		n->stats.tcp_limit_refused++;
		goto refuse;
	}
	if (!rate_ok(n)) {
		n->stats.tcp_rate_refused++;
		goto refuse;
	}
	f = flow_new(n, s, false);
	if (!f)
		goto refuse;
	n->stats.tcp_flows++;
	n->stats.tcp6_flows += dst.family == NS_AF_INET6;
	f->state = TF_HOST_CONNECTING;
	f->loop4_fallback = is_loop6(&sa);
	err = host_connect(n, f, &sa, salen);
	if (err < 0 && !retry_loop4(n, f, -err)) {
		n->stats.tcp_connect_fail++;
		refuse_for_errno(s, -err);
		flow_free(f, false);
	}
	return;
refuse:
	ns_accept_refuse(s, false, 0);
	ns_close(s);
}

static void listener_accept(struct un_ns *n, struct ns_sock *l)
{
	for (int i = 0; i < 256; i++) {
		struct ns_sockaddr peer;
		struct ns_sock *s;
		int err;

		s = ns_accept(l, &peer, &err);
		if (!s)
			break;
		nat_connect(n, s);
	}
}

/* ------------------------------------------------------ hostfwd (TCP) */

static void guest_connected(struct un_tcp_flow *f)
{
	int err = 0;

	if (!(ns_sock_events(f->s) & (NS_EV_OUT | NS_EV_ERR | NS_EV_HUP)))
		return;
	ns_getsockopt(f->s, NS_SO_ERROR, &err);
	if (err) {
		f->n->stats.hostfwd_failed++;
		flow_free(f, true);
		return;
	}
	f->n->stats.hostfwd_accepted++;
	f->state = TF_OPEN;
	flow_pump(f);
}

static void on_fwd_tcp(struct un_ns *n, struct un_watch *w, uint32_t events)
{
	struct un_fwd *fw = (void *)((char *)w - offsetof(struct un_fwd, w));
	struct ns_sockaddr guest = {.addr = fw->spec.guest_addr, .port = fw->spec.guest_port};

	(void)events;
	if (fw->spec.guest6) {
		guest.family = NS_AF_INET6;
		memcpy(guest.addr6, fw->spec.guest_addr6, 16);
	}
	for (int i = 0; i < 64; i++) {
		int fd = accept4(w->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), err, rc, one = 1;
		struct un_tcp_flow *f;
		struct ns_sock *s;

		if (fd < 0)
			break;
		s = n->tcp_count < n->cfg.max_tcp_flows ? ns_socket(n->st, NS_SOCK_STREAM, &err)
							: NULL;
		f = s ? flow_new(n, s, true) : NULL;
		if (!f) {
			if (s)
				ns_close(s);
			else if (n->tcp_count >= n->cfg.max_tcp_flows)
				n->stats.tcp_limit_refused++;
			else
				n->stats.tcp_unsupported++;
			n->stats.hostfwd_failed++;
			close(fd);
			continue;
		}
		f->state = TF_GUEST_CONNECTING;
		if (un_watch_add(n, &f->w, fd, 0, on_host_fd) < 0) {
			close(fd);
			flow_free(f, true);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		ns_setsockopt(s, NS_SO_RCVBUF, (int)n->cfg.tcp_window);
		ns_setsockopt(s, NS_SO_SNDBUF, (int)n->cfg.tcp_window);
		rc = ns_connect(s, &guest);
		if (rc < 0 && rc != -EINPROGRESS) {
			n->stats.hostfwd_failed++;
			flow_free(f, true);
			continue;
		}
		flow_mark_ready(f);
	}
}

int un_tcp_fwd(struct un_ns *n, bool add, const struct usernet_fwd *f, char *err, size_t errlen)
{
	return un_fwd_change(n, add, f, on_fwd_tcp, err, errlen);
}

/* ------------------------------------------------------------- service */

static void on_listener_event(struct ns_sock *s, unsigned events, void *ctx)
{
	(void)events;
	listener_accept(ctx, s);
}

bool un_tcp_service(struct un_ns *n)
{
	for (int round = 0; round < 8 && n->tcp_ready; round++) {
		struct un_tcp_flow *list = n->tcp_ready, *f;

		n->tcp_ready = NULL;
		while ((f = list)) {
			list = f->ready_next;
			f->ready = false;
			if (f->dead) {
				free(f);
				continue;
			}
			f->busy = true;
			if (f->state == TF_GUEST_CONNECTING)
				guest_connected(f);
			else if (f->state == TF_OPEN)
				flow_pump(f);
			else if (ns_sock_events(f->s) & (NS_EV_ERR | NS_EV_HUP))
				flow_free(f, true); /* guest gave up during the host connect */
			f->busy = false;
			/* Re-queued while it ran: the next round frees it. */
			if (f->dead && !f->ready)
				free(f);
		}
	}
	return n->tcp_ready == NULL;
}

/* The catch-all listener of one family: {any, 0} takes every SYN no
 * other socket claims, deferred until the host connect is known. */
static struct ns_sock *catch_all(struct un_ns *n, uint16_t family)
{
	struct ns_sockaddr any = {.family = family};
	struct ns_sock *l;
	int err;

	l = ns_socket(n->st, NS_SOCK_STREAM, &err);
	if (!l)
		return NULL;
	/* Buffers are set before listen so accepted sockets get them: the
	 * receive window has to cover a few 64 KiB segments. */
	if (ns_setsockopt(l, NS_SO_NONBLOCK, 1) < 0 ||
	    ns_setsockopt(l, NS_SO_RCVBUF, (int)n->cfg.tcp_window) < 0 ||
	    ns_setsockopt(l, NS_SO_SNDBUF, (int)n->cfg.tcp_window) < 0 ||
	    ns_setsockopt(l, NS_TCP_DEFER_ACCEPT, 1) < 0 || ns_bind(l, &any) < 0 ||
	    ns_listen(l, 1024) < 0) {
		ns_close(l);
		return NULL;
	}
	ns_sock_set_callback(l, on_listener_event, n);
	return l;
}

int un_tcp_init(struct un_ns *n)
{
	n->tcp_listener = catch_all(n, NS_AF_INET);
	if (!n->tcp_listener)
		return -EIO; /* no TCP in this netstack build: guests get RSTs */
	if (!n->cfg.ipv6_off && !(n->tcp6_listener = catch_all(n, NS_AF_INET6)))
		return -EIO;
	return 0;
}

void un_tcp_fini(struct un_ns *n)
{
	while (n->tcp_flows)
		flow_free(n->tcp_flows, true);
	while (n->tcp_ready) {
		struct un_tcp_flow *f = n->tcp_ready;

		n->tcp_ready = f->ready_next;
		free(f);
	}
	if (n->tcp_listener)
		ns_close(n->tcp_listener);
	if (n->tcp6_listener)
		ns_close(n->tcp6_listener);
	n->tcp_listener = n->tcp6_listener = NULL;
}

void un_tcp_each_open(struct un_ns *n, void (*fn)(void *ctx, const struct un_flow_view *v),
		      void *ctx)
{
	for (struct un_tcp_flow *f = n->tcp_flows; f; f = f->next) {
		struct un_flow_view v = {
			.s = f->s,
			.fd = f->w.fd,
			.fwd = f->fwd,
			.host_unwatched = f->host_unwatched,
			.g2h_eof = f->g2h.eof,
			.g2h_shut = f->g2h.shut,
			.h2g_eof = f->h2g.eof,
			.h2g_shut = f->h2g.shut,
			.h2g = f->h2g.data + f->h2g.off,
			.h2g_len = f->h2g.len - f->h2g.off,
		};

		if (f->state == TF_OPEN && !f->dead)
			fn(ctx, &v);
	}
}

int un_tcp_adopt(struct un_ns *n, const struct un_flow_view *v)
{
	struct un_tcp_flow *f;
	int rc;

	if (v->h2g_len > n->cfg.tcp_buf)
		return -EINVAL;
	f = flow_new(n, v->s, v->fwd);
	if (!f)
		return -ENOMEM;
	memcpy(f->h2g.data, v->h2g, v->h2g_len);
	f->h2g.len = v->h2g_len;
	f->h2g.eof = v->h2g_eof;
	f->h2g.shut = v->h2g_shut;
	f->g2h.eof = v->g2h_eof;
	f->g2h.shut = v->g2h_shut;
	f->host_unwatched = v->host_unwatched;
	f->state = TF_OPEN;
	n->stats.tcp_flows++;
	if (v->host_unwatched)
		f->w.fd = v->fd;
	else if ((rc = un_watch_add(n, &f->w, v->fd, EPOLLIN, on_host_fd)) < 0) {
		f->w.fd = v->fd;
		flow_free(f, true);
		return rc;
	}
	flow_mark_ready(f); /* relay what waits at the next poll */
	return 0;
}

void un_tcp_hand_over(struct un_ns *n)
{
	/* No linger, no shutdown: the socket lives on in the other usernet,
	 * and closing our descriptor only drops our reference. */
	for (struct un_tcp_flow *f = n->tcp_flows; f; f = f->next) {
		if (f->w.fd < 0)
			continue;
		if (!f->host_unwatched)
			epoll_ctl(n->epfd, EPOLL_CTL_DEL, f->w.fd, NULL);
		close(f->w.fd);
		f->w.fd = -1;
	}
}
