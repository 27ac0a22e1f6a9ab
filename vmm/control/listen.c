/* listen.c — listening sockets for the control plane (QMP, gdbstub):
 * unix:PATH, tcp:HOST:PORT, or a listening socket inherited from the
 * parent (libvirt passes one as -chardev socket,fd=N). */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "vmm/control/listen.h"

static int listen_unix(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		snprintf(err, errlen, "unix:%s: path too long", path);
		return -1;
	}
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	unlink(path); /* a stale socket from an earlier run */
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, 8) < 0) {
		snprintf(err, errlen, "unix:%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int listen_tcp(const char *host, const char *port, char *err, size_t errlen)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE};
	struct addrinfo *res, *ai;
	int fd = -1, ret, one = 1;

	ret = getaddrinfo(*host ? host : NULL, port, &hints, &res);
	if (ret) {
		snprintf(err, errlen, "tcp:%s:%s: %s", host, port, gai_strerror(ret));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 8) == 0)
			break;
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		snprintf(err, errlen, "tcp:%s:%s: %s", host, port, strerror(errno));
	freeaddrinfo(res);
	return fd;
}

static int inherited(int fd, char *err, size_t errlen)
{
	int type, listening;
	socklen_t len = sizeof(type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_STREAM ||
	    (len = sizeof(listening), getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len)) < 0 ||
	    !listening) {
		snprintf(err, errlen, "fd=%d: not a listening stream socket", fd);
		return -1;
	}
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

int listen_open(const struct listen_spec *s, char *err, size_t errlen)
{
	switch (s->kind) {
	case LISTEN_UNIX:
		return listen_unix(s->path, err, errlen);
	case LISTEN_TCP:
		return listen_tcp(s->host, s->port, err, errlen);
	case LISTEN_FD:
		return inherited(s->fd, err, errlen);
	case LISTEN_STDIO:
		break;
	}
	snprintf(err, errlen, "bad socket kind");
	return -1;
}

int listen_accept(int listen_fd, bool block)
{
	int fd;

	if (block)
		fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) & ~O_NONBLOCK);
	fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (block)
		fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
	if (fd >= 0) {
		int one = 1;

		/* Small request/reply messages: no Nagle delay (fails on unix). */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	return fd;
}

void listen_close(const struct listen_spec *s, int fd)
{
	if (fd < 0)
		return;
	close(fd);
	if (s->kind == LISTEN_UNIX)
		unlink(s->path);
}

void listen_describe(const struct listen_spec *s, char *buf, size_t len)
{
	if (s->kind == LISTEN_UNIX)
		snprintf(buf, len, "unix:%s", s->path);
	else if (s->kind == LISTEN_TCP)
		snprintf(buf, len, "tcp:%s:%s", s->host, s->port);
	else if (s->kind == LISTEN_STDIO)
		snprintf(buf, len, "stdio");
	else
		snprintf(buf, len, "fd:%d", s->fd);
}
