/* http.c — a tiny HTTP/1.0 file server (RFC 1945) for netstack-host:
 * GET only, files under one folder, Content-Length, one request per
 * connection. Paths that leave the folder ("..", symlinks out) are
 * refused by openat2(RESOLVE_BENEATH) on top of a lexical check. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "netstack/host/host.h"

#define REQ_MAX 4096

struct http {
	int dirfd, fd; /* fd: the file being sent, -1 before/after */
	struct ns_clock *clock;
	uint64_t head_deadline; /* µs: the request head must be in by then */
	bool responded;
	size_t rlen;
	char req[REQ_MAX + 1];
};

static void respond_error(struct conn *c, int code, const char *reason)
{
	int n = snprintf((char *)c->out.data, HOST_BUF,
			 "HTTP/1.0 %d %s\r\nServer: netstack-host\r\nContent-Type: text/plain\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n%d %s\n",
			 code, reason, strlen(reason) + 5, code, reason);

	c->out.off = 0;
	c->out.len = (size_t)n;
}

static const char *content_type(const char *path)
{
	static const char *const types[][2] = {
		{ ".html", "text/html" },
		{ ".htm", "text/html" },
		{ ".txt", "text/plain" },
		{ ".css", "text/css" },
		{ ".js", "text/javascript" },
		{ ".png", "image/png" },
		{ ".jpg", "image/jpeg" },
		{ ".json", "application/json" },
	};
	const char *dot = strrchr(path, '.');

	for (size_t i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcasecmp(dot, types[i][0]))
			return types[i][1];
	return "application/octet-stream";
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	ch = (char)(ch | 0x20);
	return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* Decode %XX in place; -1 on a bad escape or an encoded NUL. */
static int url_decode(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (*r == '%') {
			int hi = hexval(r[1]), lo = hi < 0 ? -1 : hexval(r[2]);

			if (lo < 0 || (hi | lo) == 0)
				return -1;
			*w++ = (char)(hi * 16 + lo);
			r += 2;
		} else {
			*w++ = *r;
		}
	}
	*w = 0;
	return 0;
}

/* True when a path component is "..": the request leaves the folder. */
static bool has_dotdot(const char *p)
{
	for (const char *c = p; (c = strstr(c, "..")); c += 2)
		if ((c == p || c[-1] == '/') && (c[2] == 0 || c[2] == '/'))
			return true;
	return false;
}

static int open_beneath(int dirfd, const char *rel)
{
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS };
	int fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)
		fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	return fd;
}

/* Open the file a request path names; the HTTP status on failure. */
static int open_target(struct http *hp, char *path, struct stat *stp)
{
	char rel[REQ_MAX + 16];
	int fd;

	while (*path == '/')
		path++;
	snprintf(rel, sizeof(rel), "%s", *path ? path : ".");
	fd = open_beneath(hp->dirfd, rel);
	if (fd >= 0 && fstat(fd, stp) == 0 && S_ISDIR(stp->st_mode)) {
		int idx = open_beneath(fd, "index.html");

		close(fd);
		fd = idx;
		if (fd >= 0 && fstat(fd, stp) < 0) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0)
		return errno == EXDEV || errno == ELOOP || errno == EACCES ? -403 : -404;
	if (!S_ISREG(stp->st_mode)) {
		close(fd);
		return -404;
	}
	return fd;
}

/* Parse "GET /path HTTP/1.x"; the file's fd, or -status. */
static int parse_request(struct http *hp, struct stat *sb, const char **type)
{
	char *method, *path, *version, *save = NULL, *q;
	int fd;

	hp->req[strcspn(hp->req, "\r\n")] = 0;
	method = strtok_r(hp->req, " ", &save);
	path = strtok_r(NULL, " ", &save);
	version = strtok_r(NULL, " ", &save);
	if (!method || !path || !version || strtok_r(NULL, " ", &save) ||
	    strncmp(version, "HTTP/1.", 7) || *path != '/')
		return -400;
	if (strcmp(method, "GET"))
		return -501;
	if ((q = strchr(path, '?')))
		*q = 0;
	if (url_decode(path) < 0)
		return -400;
	if (has_dotdot(path))
		return -403;
	fd = open_target(hp, path, sb);
	*type = content_type(path);
	return fd;
}

/* Queue the response headers (and the whole body of an error). */
static void handle_request(struct conn *c, struct http *hp)
{
	static const struct {
		int code;
		const char *reason;
	} errors[] = {
		{ 400, "Bad Request" },
		{ 403, "Forbidden" },
		{ 404, "Not Found" },
		{ 501, "Not Implemented" },
	};
	const char *type = NULL;
	struct stat sb;
	int fd;

	hp->responded = true;
	fd = parse_request(hp, &sb, &type);
	if (fd >= 0) {
		hp->fd = fd;
		c->out.off = 0;
		c->out.len = (size_t)snprintf((char *)c->out.data, HOST_BUF,
					      "HTTP/1.0 200 OK\r\nServer: netstack-host\r\n"
					      "Content-Type: %s\r\nContent-Length: %lld\r\n"
					      "Connection: close\r\n\r\n",
					      type, (long long)sb.st_size);
		return;
	}
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == -fd)
			respond_error(c, errors[i].code, errors[i].reason);
}

/* Read the request head; true once it is complete (or hopeless). */
static bool read_request(struct conn *c, struct http *hp)
{
	for (;;) {
		ssize_t n = ns_recv(c->s, hp->req + hp->rlen, REQ_MAX - hp->rlen, NS_MSG_DONTWAIT);

		if (n == -EAGAIN)
			return false;
		if (n <= 0) {
			c->eof = true;
			return true;
		}
		hp->rlen += (size_t)n;
		c->bytes_in += (uint64_t)n;
		hp->req[hp->rlen] = 0;
		if (strstr(hp->req, "\r\n\r\n") || strstr(hp->req, "\n\n"))
			return true;
		if (hp->rlen == REQ_MAX)
			return true;
	}
}

/* Anything the client sends after its request is read and dropped, so
 * closing never meets unread data. */
static void drop_input(struct conn *c)
{
	uint8_t scratch[2048];
	ssize_t n;

	while (!c->eof && (n = ns_recv(c->s, scratch, sizeof(scratch), NS_MSG_DONTWAIT)) != -EAGAIN)
		if (n <= 0)
			c->eof = true;
}

static bool http_step(struct conn *c)
{
	struct http *hp = c->priv;

	if (!hp->responded) {
		if (!read_request(c, hp))
			return ns_clock_now(hp->clock) < hp->head_deadline;
		if (hp->rlen == 0)
			return false; /* connected and left without a word */
		if (hp->rlen == REQ_MAX && !strstr(hp->req, "\n\n") && !strstr(hp->req, "\r\n\r\n")) {
			hp->responded = true;
			respond_error(c, 400, "Bad Request");
		} else {
			handle_request(c, hp);
		}
	}
	drop_input(c);
	for (;;) {
		ssize_t n;

		if (outbuf_flush(&c->out, c->s) < 0)
			return false;
		if (!outbuf_empty(&c->out))
			return true;
		if (hp->fd < 0)
			return false;
		n = read(hp->fd, c->out.data, HOST_BUF);
		if (n <= 0) {
			close(hp->fd);
			hp->fd = -1;
			if (n < 0)
				return false;
			continue;
		}
		c->out.off = 0;
		c->out.len = (size_t)n;
		c->bytes_out += (uint64_t)n;
	}
}

static void http_destroy(struct conn *c)
{
	struct http *hp = c->priv;

	if (hp->fd >= 0)
		close(hp->fd);
	free(hp);
}

struct conn *http_conn_new(struct ns_sock *s, int dirfd, struct ns_clock *clock)
{
	struct http *hp = calloc(1, sizeof(*hp));
	struct conn *c;

	if (!hp)
		return NULL;
	hp->dirfd = dirfd;
	hp->fd = -1;
	hp->clock = clock;
	hp->head_deadline = ns_clock_now(clock) + HTTP_HEAD_TIMEOUT_US;
	c = conn_new(s, http_step, http_destroy);
	if (!c) {
		free(hp);
		return NULL;
	}
	c->priv = hp;
	return c;
}
