/* migration_uri.c — where a migration stream goes or comes from: exec:CMD
 * (the command's stdin or stdout), file:PATH, unix:PATH and tcp:HOST:PORT
 * (connect, or listen for one peer), fd:N or fd:NAME (libvirt's). */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmm/control/qmp.h"
#include "vmm/migration.h"

extern char **environ;

/* A running `sh -c CMD` with its stdin (writing) or stdout (reading) on
 * the returned fd; *pid for waitpid. */
static int spawn_exec(const char *cmd, bool writing, pid_t *pid, char *err, size_t errlen)
{
	char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
	posix_spawn_file_actions_t fa;
	int p[2], r;

	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "exec: pipe: %s", strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, writing ? p[0] : p[1], writing ? 0 : 1);
	r = posix_spawn(pid, "/bin/sh", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(writing ? p[0] : p[1]);
	if (r) {
		close(writing ? p[1] : p[0]);
		snprintf(err, errlen, "exec:%s: %s", cmd, strerror(r));
		return -1;
	}
	return writing ? p[1] : p[0];
}

static int connect_unix(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(a.sun_path)) {
		snprintf(err, errlen, "unix:%s: path too long", path);
		return -1;
	}
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		snprintf(err, errlen, "unix:%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* One side of a unix: incoming migration: the listening socket. */
static int listen_unix(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(a.sun_path)) {
		snprintf(err, errlen, "unix:%s: path too long", path);
		return -1;
	}
	strcpy(a.sun_path, path);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 1) < 0) {
		snprintf(err, errlen, "unix:%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* tcp:HOST:PORT: connect to it (writing) or the socket listening there
 * (reading; an empty HOST listens on every address). */
static int tcp_uri(const char *hostport, bool writing, char *err, size_t errlen)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = writing ? 0 : AI_PASSIVE};
	struct addrinfo *res = NULL;
	const char *colon = strrchr(hostport, ':');
	char host[256];
	int fd = -1, c = -1, one = 1, r;

	if (!colon || (size_t)(colon - hostport) >= sizeof(host)) {
		snprintf(err, errlen, "tcp:%s: expected tcp:HOST:PORT", hostport);
		return -1;
	}
	snprintf(host, sizeof(host), "%.*s", (int)(colon - hostport), hostport);
	if (host[0] == '[' && host[strlen(host) - 1] == ']') { /* [::1] */
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = 0;
	}
	r = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &res);
	if (r) {
		snprintf(err, errlen, "tcp:%s: %s", hostport, gai_strerror(r));
		return -1;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && writing && connect(fd, res->ai_addr, res->ai_addrlen) == 0)
		c = fd;
	else if (fd >= 0 && !writing &&
		 setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0 &&
		 bind(fd, res->ai_addr, res->ai_addrlen) == 0 && listen(fd, 1) == 0)
		c = fd;
	if (c < 0)
		snprintf(err, errlen, "tcp:%s: %s", hostport, strerror(errno));
	if (fd >= 0 && fd != c)
		close(fd);
	freeaddrinfo(res);
	return c;
}

/* Open uri for the stream's direction: fd, and *pid for exec:. */
int mig_open_uri(const char *uri, bool writing, pid_t *pid, char *err, size_t errlen)
{
	int fd;

	*pid = -1;
	if (!strncmp(uri, "exec:", 5))
		return spawn_exec(uri + 5, writing, pid, err, errlen);
	if (!writing && mig_uri_waits(uri))
		return mig_accept_uri(mig_listen_uri(uri, err, errlen), uri, err, errlen);
	if (!strncmp(uri, "unix:", 5))
		return connect_unix(uri + 5, err, errlen);
	if (!strncmp(uri, "tcp:", 4))
		return tcp_uri(uri + 4, true, err, errlen);
	if (!strncmp(uri, "fd:", 3)) { /* libvirt's: an inherited or a getfd fd */
		fd = qmp_fd_param(uri + 3, err, errlen);
		if (fd >= 0)
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		return fd;
	}
	if (!strncmp(uri, "file:", 5)) {
		fd = writing ? open(uri + 5, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)
			     : open(uri + 5, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			snprintf(err, errlen, "%s: %s", uri + 5, strerror(errno));
		return fd;
	}
	snprintf(err, errlen, "Invalid parameter 'uri': '%s' (vmm takes exec:, file:, unix:, tcp:, fd:)",
		 uri);
	return -1;
}

/* Close fd and, for exec:, wait for the command: 0 when it succeeded. */
int mig_close_uri(int fd, pid_t pid, const char *uri, char *err, size_t errlen)
{
	int status;

	close(fd);
	if (pid < 0)
		return 0;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	snprintf(err, errlen, "%s: the command failed (status %d)", uri,
		 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return -1;
}

bool mig_uri_waits(const char *uri)
{
	return !strncmp(uri, "unix:", 5) || !strncmp(uri, "tcp:", 4);
}

int mig_listen_uri(const char *uri, char *err, size_t errlen)
{
	return !strncmp(uri, "unix:", 5) ? listen_unix(uri + 5, err, errlen)
					 : tcp_uri(uri + 4, false, err, errlen);
}

int mig_accept_uri(int lfd, const char *uri, char *err, size_t errlen)
{
	int c;

	if (lfd < 0)
		return -1;
	c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		snprintf(err, errlen, "%s: %s", uri, strerror(errno));
	close(lfd);
	if (!strncmp(uri, "unix:", 5))
		unlink(uri + 5);
	return c;
}
