/* fwd.c — host port forwards, both protocols: each rule's host socket
 * (listening for TCP, bound for UDP), and the rules a migration's
 * destination holds unbound (cfg.hostfwd_wait) until the saved state
 * says which sockets come from the source. A destination on the same
 * host cannot bind the source's ports; it takes the source's sockets
 * (usernet_load_fds), or binds once the port is free, retrying each
 * second (a source that quits after the migration). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netstack/usernet/backend.h"

#define FWD_RETRY_US 1000000

bool un_fwd_same_host(const struct usernet_fwd *a, const struct usernet_fwd *b)
{
	return a->udp == b->udp && a->host6 == b->host6 && a->host_port == b->host_port &&
	       (a->host6 ? !memcmp(a->host_addr6, b->host_addr6, 16)
			 : a->host_addr == b->host_addr);
}

static struct un_fwd **fwd_find(struct un_ns *n, const struct usernet_fwd *f)
{
	struct un_fwd **pp = &n->fwds;

	while (*pp && !un_fwd_same_host(&(*pp)->spec, f))
		pp = &(*pp)->next;
	return pp;
}

static struct sockaddr_in sin_of(uint32_t addr, uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};

	sa.sin_addr.s_addr = htonl(addr);
	return sa;
}

int un_fwd_socket(const struct usernet_fwd *f, char *err, size_t errlen)
{
	struct sockaddr_in sa4 = sin_of(f->host_addr, f->host_port);
	struct sockaddr_in6 sa6 = {.sin6_family = AF_INET6, .sin6_port = htons(f->host_port)};
	struct sockaddr *sa = f->host6 ? (struct sockaddr *)&sa6 : (struct sockaddr *)&sa4;
	socklen_t salen = f->host6 ? sizeof(sa6) : sizeof(sa4);
	int one = 1, fd, e;
	char a[46];

	memcpy(&sa6.sin6_addr, f->host_addr6, 16);
	fd = socket(sa->sa_family,
		    (f->udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return usernet_fail(err, errlen, -errno, "hostfwd socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (f->host6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, sa, salen) < 0 || (!f->udp && listen(fd, 128) < 0)) {
		e = errno;
		close(fd);
		return usernet_fail(err, errlen, -e, "hostfwd %s:%s:%u: %s", f->udp ? "udp" : "tcp",
				    f->host6 ? ns_fmt_addr6(f->host_addr6, a)
					     : ns_fmt_addr(f->host_addr, a),
				    f->host_port, strerror(e));
	}
	return fd;
}

/* Watches fd for fw (fw owns it from now on, also on failure). */
static int fwd_arm(struct un_ns *n, struct un_fwd *fw, int fd)
{
	if (un_watch_add(n, &fw->w, fd, EPOLLIN, fw->w.fn) < 0) {
		close(fd);
		fw->w.fd = -1;
		return -ENOMEM;
	}
	return 0;
}

int un_fwd_change(struct un_ns *n, bool add, const struct usernet_fwd *f, un_watch_fn fn, char *err,
		  size_t errlen)
{
	struct un_fwd **pp = fwd_find(n, f), *fw;
	int fd = -1;

	if (!add) {
		if (!*pp)
			return usernet_fail(err, errlen, -ENOENT, "hostfwd: no such forward");
		fw = *pp;
		*pp = fw->next;
		un_watch_close(n, &fw->w);
		un_udp_fwd_gone(n, fw);
		free(fw);
		return 0;
	}
	if (*pp)
		return usernet_fail(err, errlen, -EEXIST, "hostfwd: host port already forwarded");
	if (!n->fwd_wait && (fd = un_fwd_socket(f, err, errlen)) < 0)
		return fd;
	fw = calloc(1, sizeof(*fw));
	if (!fw) {
		if (fd >= 0)
			close(fd);
		return usernet_fail(err, errlen, -ENOMEM, "hostfwd: out of memory");
	}
	fw->spec = *f;
	fw->w = (struct un_watch){.fn = fn, .fd = -1};
	if (fd >= 0 && fwd_arm(n, fw, fd) < 0) {
		free(fw);
		return usernet_fail(err, errlen, -ENOMEM, "hostfwd: out of memory");
	}
	fw->next = n->fwds;
	n->fwds = fw;
	return 0;
}

/* What the source's socket must be to serve f: a listening TCP socket
 * or a UDP one, as the stream's record says. */
static bool fwd_socket_fits(const struct usernet_fwd *f, int fd)
{
	int type = 0, listening = 0;
	socklen_t len = sizeof(type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0)
		return false;
	if (f->udp)
		return type == SOCK_DGRAM;
	len = sizeof(listening);
	return type == SOCK_STREAM &&
	       getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && listening;
}

int un_fwd_adopt(struct un_ns *n, const struct usernet_fwd *f, int fd)
{
	struct un_fwd *fw = *fwd_find(n, f);
	int rc, own;

	/* A stream never opens a port this usernet's rules do not name; a
	 * socket that came along (a rule added at run time on the source)
	 * was open on this host already and goes on serving. */
	if ((fw && fw->w.fd >= 0) || fd < 0)
		return 0;
	if (!fwd_socket_fits(f, fd))
		return -EINVAL;
	if (!fw) {
		bool wait = n->fwd_wait;

		n->fwd_wait = true;
		rc = f->udp ? un_udp_fwd(n, true, f, NULL, 0) : un_tcp_fwd(n, true, f, NULL, 0);
		n->fwd_wait = wait;
		if (rc < 0)
			return rc;
		fw = *fwd_find(n, f);
	}
	own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (own < 0)
		return -errno;
	return fwd_arm(n, fw, own);
}

void un_fwd_listen(struct un_ns *n)
{
	unsigned waiting = 0;

	n->fwd_wait = false;
	for (struct un_fwd *fw = n->fwds; fw; fw = fw->next) {
		int fd;

		if (fw->w.fd >= 0)
			continue;
		fd = un_fwd_socket(&fw->spec, NULL, 0);
		if (fd < 0 || fwd_arm(n, fw, fd) < 0)
			waiting++;
	}
	n->stats.hostfwd_waiting = waiting;
	n->fwd_retry_us = un_now(n) + FWD_RETRY_US;
}

int un_fwd_timeout(struct un_ns *n)
{
	uint64_t now = un_now(n);

	if (n->fwd_wait || !n->stats.hostfwd_waiting)
		return -1;
	return n->fwd_retry_us <= now ? 0 : (int)((n->fwd_retry_us - now + 999) / 1000);
}

void un_fwd_poll(struct un_ns *n)
{
	if (!n->fwd_wait && n->stats.hostfwd_waiting && un_now(n) >= n->fwd_retry_us)
		un_fwd_listen(n);
}

void un_fwd_hand_over(struct un_ns *n)
{
	/* The sockets went with the stream: the other usernet accepts on
	 * them from now on. Closing drops this process's reference only. */
	for (struct un_fwd *fw = n->fwds; fw; fw = fw->next)
		un_watch_close(n, &fw->w);
}

void un_fwd_fini(struct un_ns *n)
{
	while (n->fwds) {
		struct un_fwd *fw = n->fwds;

		n->fwds = fw->next;
		un_watch_close(n, &fw->w);
		free(fw);
	}
}
