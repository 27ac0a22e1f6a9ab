/* host.h — netstack-host's private seams: the event loop, the TCP/UDP
 * services (services.c), the HTTP/1.0 file server (http.c) and the
 * --connect client (connect.c). Not a library header. */
#ifndef NETSTACK_HOST_H
#define NETSTACK_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netstack/netstack.h"

/* Bytes a connection moves per ns_send()/ns_recv() round. */
#define HOST_BUF 65536

/* Outgoing bytes of one connection not yet accepted by ns_send(). */
struct outbuf {
	size_t off, len;
	uint8_t data[HOST_BUF];
};

/* Push what fits into the send buffer; 0, or -errno (other than EAGAIN). */
int outbuf_flush(struct outbuf *o, struct ns_sock *s);
static inline bool outbuf_empty(const struct outbuf *o)
{
	return o->off == o->len;
}

/* A served TCP connection: step() moves what it can without blocking and
 * returns false once the connection is finished (and closed). */
struct conn {
	struct conn *next;
	struct ns_sock *s;
	bool (*step)(struct conn *c);
	void (*destroy)(struct conn *c);
	void *priv;
	bool eof; /* the peer half-closed */
	uint64_t bytes_in, bytes_out;
	struct outbuf out;
};

struct conn *conn_new(struct ns_sock *s, bool (*step)(struct conn *), void (*destroy)(struct conn *));

/* The stack plus everything the event loop serves. */
struct host {
	struct ns_stack *st;
	struct ns_link *link;
	struct ns_link *vnet; /* the offloading TAP (under link), or NULL */
	struct ns_chan *udp_echo, *udp_discard;
	struct ns_sock *tcp_echo, *tcp_discard, *http;
	const char *http_dir;
	int http_dirfd;
	struct conn *conns;
	unsigned nconns;
	bool verbose;
	bool v6; /* --addr6: services listen on :: (both families) */
};

int services_start(struct host *h);
/* Accept on every listener, serve UDP, step every connection. */
void services_run(struct host *h);
void services_stop(struct host *h);

/* HTTP/1.0 GET on an accepted socket; dir is the served folder's fd. A
 * client that has not sent its request head within HTTP_HEAD_TIMEOUT_US
 * of clock's now is dropped. */
#define HTTP_HEAD_TIMEOUT_US 30000000ull
struct conn *http_conn_new(struct ns_sock *s, int dirfd, struct ns_clock *clock);

/* Connections served at once; more are refused with a RST. */
#define HOST_MAX_CONNS 1024

/* One event-loop round: wait up to timeout_ms for the link, the stack's
 * fd or extra_fd (POLLIN; -1: none), then drain the link and run timers. */
int host_loop_once(struct host *h, int timeout_ms, int extra_fd);

/* --connect: returns the process exit status (see connect.c). */
int connect_run(struct host *h, const struct ns_sockaddr *peer);

extern volatile int host_stop;

#endif /* NETSTACK_HOST_H */
