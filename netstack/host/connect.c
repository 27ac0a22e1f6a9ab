/* connect.c — netstack-host --connect HOST:PORT: a TCP client on the
 * stack. Sends stdin, half-closes when stdin ends, copies what comes back
 * to stdout until the peer closes.
 *
 * Exit status: 0 the exchange finished (both FINs), 1 setup or local I/O
 * error, 3 the connection could not be opened (refused, unreachable,
 * timed out), 4 it broke after opening (reset, timeout), 130 interrupted. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "netstack/host/host.h"

enum { EXIT_OK = 0, EXIT_SETUP = 1, EXIT_NOCONN = 3, EXIT_BROKEN = 4, EXIT_INTR = 130 };

struct client {
	struct host *h;
	struct ns_sock *s;
	bool stdin_eof, shut, peer_eof;
	struct outbuf out;
};

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static bool stdin_ready(void)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

static int wait_connected(struct client *cl, const struct ns_sockaddr *peer)
{
	char a[16];
	int rc = ns_connect(cl->s, peer), err = 0;

	while (rc == -EINPROGRESS && !host_stop &&
	       !(ns_sock_events(cl->s) & (NS_EV_OUT | NS_EV_ERR | NS_EV_HUP)))
		host_loop_once(cl->h, 200, -1);
	if (host_stop)
		return EXIT_INTR;
	if (rc == -EINPROGRESS) {
		ns_getsockopt(cl->s, NS_SO_ERROR, &err);
		rc = err;
	}
	if (rc < 0) {
		fprintf(stderr, "netstack-host: cannot connect to %s:%u: %s\n",
			ns_fmt_addr(peer->addr, a), peer->port, strerror(-rc));
		return EXIT_NOCONN;
	}
	return EXIT_OK;
}

/* Move stdin towards the socket; half-close once it is all sent. */
static int pump_stdin(struct client *cl)
{
	for (;;) {
		ssize_t n;
		int rc = outbuf_flush(&cl->out, cl->s);

		if (rc < 0)
			return rc;
		if (!outbuf_empty(&cl->out))
			return 0;
		if (cl->stdin_eof) {
			if (!cl->shut && (rc = ns_shutdown(cl->s, NS_SHUT_WR)) < 0)
				return rc;
			cl->shut = true;
			return 0;
		}
		if (!stdin_ready())
			return 0;
		n = read(0, cl->out.data, HOST_BUF);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "netstack-host: reading stdin: %s\n", strerror(errno));
			cl->stdin_eof = true;
			continue;
		}
		cl->stdin_eof = n == 0;
		cl->out.off = 0;
		cl->out.len = (size_t)n;
	}
}

/* Copy what the peer sent to stdout; -errno of the connection, or 1 when
 * stdout failed. */
static int pump_socket(struct client *cl)
{
	uint8_t buf[HOST_BUF];

	while (!cl->peer_eof) {
		ssize_t n = ns_recv(cl->s, buf, sizeof(buf), NS_MSG_DONTWAIT);

		if (n == -EAGAIN)
			return 0;
		if (n < 0)
			return (int)n;
		if (n == 0)
			cl->peer_eof = true;
		else if (write_all(1, buf, (size_t)n) < 0)
			return 1;
	}
	return 0;
}

/* After our FIN: let the stack finish the exchange (ACK the peer's FIN,
 * see ours acknowledged) before the process and the stack go away. */
static void linger(struct client *cl)
{
	uint64_t end = ns_clock_now(ns_stack_clock(cl->h->st)) + 2000000;
	int state = NS_TCP_CLOSED;

	while (!host_stop && ns_clock_now(ns_stack_clock(cl->h->st)) < end) {
		if (ns_getsockopt(cl->s, NS_TCP_STATE, &state) < 0 || state == NS_TCP_TIME_WAIT ||
		    state == NS_TCP_CLOSED)
			break;
		host_loop_once(cl->h, 50, -1);
	}
}

static int transfer(struct client *cl)
{
	while (!host_stop) {
		int rc = pump_stdin(cl);

		if (rc == 0)
			rc = pump_socket(cl);
		if (rc == 1) {
			fprintf(stderr, "netstack-host: writing stdout: %s\n", strerror(errno));
			return EXIT_SETUP;
		}
		if (rc < 0) {
			fprintf(stderr, "netstack-host: connection broken: %s\n", strerror(-rc));
			return EXIT_BROKEN;
		}
		if (cl->peer_eof && cl->shut) {
			linger(cl);
			return EXIT_OK;
		}
		host_loop_once(cl->h, 200, !cl->stdin_eof && outbuf_empty(&cl->out) ? 0 : -1);
	}
	return EXIT_INTR;
}

int connect_run(struct host *h, const struct ns_sockaddr *peer)
{
	static struct client cl;
	int err, rc;

	cl.h = h;
	cl.s = ns_socket(h->st, NS_SOCK_STREAM, &err);
	if (!cl.s) {
		fprintf(stderr, "netstack-host: cannot create a TCP socket: %s\n", strerror(-err));
		return EXIT_SETUP;
	}
	ns_setsockopt(cl.s, NS_SO_NONBLOCK, 1);
	rc = wait_connected(&cl, peer);
	if (rc == EXIT_OK)
		rc = transfer(&cl);
	if (rc == EXIT_OK)
		ns_close(cl.s);
	else
		ns_abort(cl.s);
	return rc;
}
