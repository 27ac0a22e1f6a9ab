/* netstack-peer — the Linux side of the netstack interop tests, on the
 * kernel's own TCP stack (busybox nc cannot half-close).
 *
 *   netstack-peer connect A:P            stdin -> A:P, half-close, reply -> stdout
 *   netstack-peer serve PORT echo        one connection: echo it, FIN after its FIN
 *   netstack-peer serve PORT sink        one connection: what it sends -> stdout
 *   netstack-peer serve PORT send FILE   one connection: send FILE, half-close
 *
 * PORT 0 picks a free port. "listening on port N" goes to stderr once a
 * server listens. Exit 0 when the
 * exchange ended with both FINs, 1 on any error (one line on stderr). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF 65536

static int fail(const char *what)
{
	fprintf(stderr, "netstack-peer: %s: %s\n", what, strerror(errno));
	return 1;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* in_fd -> sock (half-close at its end; -1: nothing to send) while
 * sock -> out_fd (-1: dropped), until both directions are done. */
static int relay(int sock, int in_fd, int out_fd)
{
	static char buf[BUF];
	bool in_done = in_fd < 0, peer_done = false;

	if (in_done && shutdown(sock, SHUT_WR) < 0)
		return fail("shutdown");
	while (!in_done || !peer_done) {
		struct pollfd p[2] = { { .fd = sock, .events = peer_done ? 0 : POLLIN },
				       { .fd = in_done ? -1 : in_fd, .events = POLLIN } };
		ssize_t n;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return fail("poll");
		}
		if (p[0].revents) {
			n = read(sock, buf, sizeof(buf));
			if (n < 0)
				return fail("receiving");
			peer_done = n == 0;
			if (out_fd >= 0 && write_all(out_fd, buf, (size_t)n) < 0)
				return fail("writing output");
		}
		if (p[1].revents) {
			n = read(in_fd, buf, sizeof(buf));
			if (n < 0)
				return fail("reading input");
			if (n == 0) {
				in_done = true;
				if (shutdown(sock, SHUT_WR) < 0)
					return fail("shutdown");
			} else if (write_all(sock, buf, (size_t)n) < 0) {
				return fail("sending");
			}
		}
	}
	return 0;
}

static int echo(int sock)
{
	static char buf[BUF];
	ssize_t n;

	while ((n = read(sock, buf, sizeof(buf))) > 0)
		if (write_all(sock, buf, (size_t)n) < 0)
			return fail("sending");
	if (n < 0)
		return fail("receiving");
	return shutdown(sock, SHUT_WR) < 0 ? fail("shutdown") : 0;
}

/* host is IPv4 or IPv6 (without brackets); the family comes with it. */
static int parse_sa(const char *host, const char *port, struct sockaddr_in6 *sa6,
		    socklen_t *salen)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)sa6;
	char *end;
	unsigned long p = strtoul(port, &end, 10);

	memset(sa6, 0, sizeof(*sa6));
	if (*end || p > 65535)
		goto bad;
	if (strchr(host, ':')) {
		sa6->sin6_family = AF_INET6;
		sa6->sin6_port = htons((uint16_t)p);
		*salen = sizeof(*sa6);
		if (inet_pton(AF_INET6, host, &sa6->sin6_addr) != 1)
			goto bad;
		return 0;
	}
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)p);
	*salen = sizeof(*sin);
	if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
		goto bad;
	return 0;
bad:
	fprintf(stderr, "netstack-peer: bad address %s:%s\n", host, port);
	return -1;
}

/* HOST:PORT or [V6]:PORT */
static int do_connect(const char *hostport)
{
	char host[64];
	const char *colon = strrchr(hostport, ':'), *h = hostport;
	size_t hlen = colon ? (size_t)(colon - hostport) : 0;
	struct sockaddr_in6 sa;
	socklen_t salen;
	int s;

	if (colon && *h == '[' && hlen >= 2 && colon[-1] == ']') {
		h++;
		hlen -= 2;
	}
	if (!colon || hlen >= sizeof(host)) {
		fprintf(stderr, "netstack-peer: want HOST:PORT, got '%s'\n", hostport);
		return 1;
	}
	snprintf(host, sizeof(host), "%.*s", (int)hlen, h);
	if (parse_sa(host, colon + 1, &sa, &salen) < 0 || !sa.sin6_port) {
		fprintf(stderr, "netstack-peer: bad address '%s'\n", hostport);
		return 1;
	}
	s = socket(sa.sin6_family, SOCK_STREAM, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, salen) < 0)
		return fail("connect");
	return relay(s, 0, 1);
}

/* One connection of either family (a dual-stack listener on ::). */
static int do_serve(const char *port, const char *mode, const char *file)
{
	struct sockaddr_in6 sa;
	socklen_t len;
	int one = 1, zero = 0, l, s, fd;

	if (parse_sa("::", port, &sa, &len) < 0)
		return 1;
	l = socket(AF_INET6, SOCK_STREAM, 0);
	if (l < 0 && parse_sa("0.0.0.0", port, &sa, &len) == 0) /* a host without IPv6 */
		l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || (sa.sin6_family == AF_INET6 &&
		      setsockopt(l, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) < 0) ||
	    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(l, (struct sockaddr *)&sa, len) < 0 || listen(l, 1) < 0)
		return fail("listen");
	getsockname(l, (struct sockaddr *)&sa, &len);
	/* sin_port and sin6_port sit at the same offset */
	fprintf(stderr, "listening on port %u\n", ntohs(sa.sin6_port));
	s = accept(l, NULL, NULL);
	if (s < 0)
		return fail("accept");
	close(l);
	if (!strcmp(mode, "echo"))
		return echo(s);
	if (!strcmp(mode, "sink"))
		return relay(s, -1, 1);
	if (!strcmp(mode, "send") && file) {
		fd = open(file, O_RDONLY);
		if (fd < 0)
			return fail(file);
		return relay(s, fd, -1);
	}
	fprintf(stderr, "netstack-peer: unknown serve mode '%s'\n", mode);
	return 1;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc == 3 && !strcmp(argv[1], "connect"))
		return do_connect(argv[2]);
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "serve"))
		return do_serve(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
	fprintf(stderr, "usage: netstack-peer connect A:P | serve PORT echo|sink|send FILE\n");
	return 2;
}
