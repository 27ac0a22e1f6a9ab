/* services.c — netstack-host's servers: UDP and TCP echo (port 7) and
 * discard (port 9), and the HTTP listener (port 80, http.c). Everything
 * is non-blocking and driven from the one event-loop thread. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/host/host.h"

int outbuf_flush(struct outbuf *o, struct ns_sock *s)
{
	while (o->off < o->len) {
		ssize_t n = ns_send(s, o->data + o->off, o->len - o->off, NS_MSG_DONTWAIT);

		if (n == -EAGAIN)
			return 0;
		if (n < 0)
			return (int)n;
		o->off += (size_t)n;
	}
	o->off = o->len = 0;
	return 0;
}

struct conn *conn_new(struct ns_sock *s, bool (*step)(struct conn *), void (*destroy)(struct conn *))
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->s = s;
	c->step = step;
	c->destroy = destroy;
	return c;
}

/* Echo: what comes in goes back out; the peer's FIN is answered with ours
 * once everything is echoed. */
static bool echo_step(struct conn *c)
{
	for (;;) {
		ssize_t n;

		if (outbuf_flush(&c->out, c->s) < 0)
			return false;
		if (!outbuf_empty(&c->out))
			return true; /* send buffer full: wait for acks */
		if (c->eof)
			return false;
		n = ns_recv(c->s, c->out.data, HOST_BUF, NS_MSG_DONTWAIT);
		if (n == -EAGAIN)
			return true;
		if (n < 0)
			return false;
		if (n == 0) {
			c->eof = true;
			continue;
		}
		c->out.off = 0;
		c->out.len = (size_t)n;
		c->bytes_in += (uint64_t)n;
		c->bytes_out += (uint64_t)n;
	}
}

static bool discard_step(struct conn *c)
{
	for (;;) {
		ssize_t n = ns_recv(c->s, c->out.data, HOST_BUF, NS_MSG_DONTWAIT);

		if (n == -EAGAIN)
			return true;
		if (n <= 0)
			return false;
		c->bytes_in += (uint64_t)n;
	}
}

static struct ns_sock *tcp_listener(struct host *h, uint16_t port, int *err)
{
	struct ns_stack *st = h->st;
	struct ns_sockaddr any = { .port = port, .family = h->v6 ? NS_AF_INET6 : NS_AF_INET };
	struct ns_sock *s = ns_socket(st, NS_SOCK_STREAM, err);

	if (!s)
		return NULL;
	if ((*err = ns_setsockopt(s, NS_SO_NONBLOCK, 1)) < 0 ||
	    (*err = ns_setsockopt(s, NS_SO_REUSEADDR, 1)) < 0 || (*err = ns_bind(s, &any)) < 0 ||
	    (*err = ns_listen(s, 64)) < 0) {
		ns_close(s);
		return NULL;
	}
	return s;
}

int services_start(struct host *h)
{
	uint16_t fam = h->v6 ? NS_AF_INET6 : NS_AF_INET;
	struct ns_sockaddr e7 = { .port = 7, .family = fam }, d9 = { .port = 9, .family = fam };
	int err;

	h->udp_echo = ns_chan_create(h->st, NS_PROTO_UDP, &e7, NULL, &err);
	if (h->udp_echo)
		h->udp_discard = ns_chan_create(h->st, NS_PROTO_UDP, &d9, NULL, &err);
	if (!h->udp_discard) {
		fprintf(stderr, "netstack-host: cannot bind UDP services: %s\n", strerror(-err));
		return -1;
	}
	h->tcp_echo = tcp_listener(h, 7, &err);
	if (!h->tcp_echo && err == -EPROTONOSUPPORT && !h->http_dir) {
		fprintf(stderr, "netstack-host: this netstack has no TCP; UDP services only\n");
		return 0;
	}
	if (h->tcp_echo)
		h->tcp_discard = tcp_listener(h, 9, &err);
	if (h->tcp_discard && h->http_dir)
		h->http = tcp_listener(h, 80, &err);
	if (!h->tcp_discard || (h->http_dir && !h->http)) {
		fprintf(stderr, "netstack-host: cannot listen on TCP: %s\n", strerror(-err));
		return -1;
	}
	return 0;
}

/* UDP echo (port 7) and discard (port 9) on channels. */
static void serve_udp(struct host *h)
{
	static uint8_t buf[65536];
	struct ns_pktinfo info;
	ssize_t n;

	while ((n = ns_chan_recv_nb(h->udp_echo, buf, sizeof(buf), &info)) >= 0) {
		struct ns_pktinfo back = { .dst = info.src, .src = info.dst };

		ns_chan_sendto(h->udp_echo, buf, (size_t)n, &back);
	}
	while (ns_chan_recv_nb(h->udp_discard, buf, sizeof(buf), &info) >= 0)
		;
}

/* Accept what is waiting on l; step NULL means an HTTP connection. */
static void accept_all(struct host *h, struct ns_sock *l, bool (*step)(struct conn *))
{
	struct ns_sockaddr peer;
	struct ns_sock *s;
	int err;

	while (l && (s = ns_accept(l, &peer, &err))) {
		struct conn *c;

		ns_setsockopt(s, NS_SO_NONBLOCK, 1);
		c = NULL;
		if (h->nconns < HOST_MAX_CONNS && step)
			c = conn_new(s, step, NULL);
		else if (h->nconns < HOST_MAX_CONNS)
			c = http_conn_new(s, h->http_dirfd, ns_stack_clock(h->st));
		if (!c) {
			ns_abort(s);
			continue;
		}
		c->next = h->conns;
		h->conns = c;
		h->nconns++;
	}
}

static void conn_free(struct host *h, struct conn *c)
{
	if (h->verbose)
		fprintf(stderr, "netstack-host: connection done, %llu bytes in, %llu out\n",
			(unsigned long long)c->bytes_in, (unsigned long long)c->bytes_out);
	ns_close(c->s);
	if (c->destroy)
		c->destroy(c);
	free(c);
	h->nconns--;
}

void services_run(struct host *h)
{
	serve_udp(h);
	accept_all(h, h->tcp_echo, echo_step);
	accept_all(h, h->tcp_discard, discard_step);
	accept_all(h, h->http, NULL);
	for (struct conn **pp = &h->conns; *pp;) {
		struct conn *c = *pp;

		if (c->step(c)) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		conn_free(h, c);
	}
}

void services_stop(struct host *h)
{
	while (h->conns) {
		struct conn *c = h->conns;

		h->conns = c->next;
		conn_free(h, c);
	}
	if (h->http)
		ns_close(h->http);
	if (h->tcp_discard)
		ns_close(h->tcp_discard);
	if (h->tcp_echo)
		ns_close(h->tcp_echo);
	ns_chan_close(h->udp_discard);
	ns_chan_close(h->udp_echo);
}
