/* chardev.c — stdio, file, unix socket server, pty, null, and the
 * mon:stdio mux.
 *
 * Input path: the event loop reads the fd into `raw`; the mux filter turns
 * raw bytes into `pend` (taking out Ctrl-A sequences); `pend` goes to the
 * focused frontend as fast as it takes it. While anything is buffered the
 * fd is not watched, so a slow guest pushes back on the host instead of
 * losing input.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "backends/backends.h"
#include "vmm/chardev.h"
#include "vmm/control/listen.h"

#define CHR_BUF 256

struct chardev {
	struct chardev_spec spec;
	struct evloop *loop;
	bool mux;
	int in_fd, out_fd; /* -1 when none; for sockets, the client */
	int listen_fd;
	int pty_slave; /* held open: see open_pty */
	bool watching, is_tty, is_socket;
	bool started; /* chardev_start ran: the listening or retry fd is watched */
	pthread_mutex_t out_lock;

	struct chardev_frontend fe[CHARDEV_MAX_FRONTENDS];
	unsigned n_fe, focus;
	bool escape; /* the previous byte was Ctrl-A */
	struct telnet_state telnet;
	char peer[80]; /* a TCP client's address, for query-chardev */
	void (*quit_fn)(void *opaque);
	void *quit_opaque;
	/* ringbuf: the newest spec.ring_size bytes; prod - cons is what is
	 * unread (both only grow), under out_lock */
	uint8_t *ring;
	uint64_t prod, cons;
	int retry_fd; /* client reconnect=: a timerfd, -1 without */

	uint8_t raw[CHR_BUF], pend[CHR_BUF];
	size_t raw_off, raw_len, pend_off, pend_len;
};

/* ------------------------------------------------------------ terminal */

static struct termios saved_tty;
static bool tty_saved;

void chardev_restore_tty(void)
{
	if (tty_saved)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tty);
}

static void restore_and_die(int sig)
{
	chardev_restore_tty();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Raw input so every key reaches the guest; output post-processing stays
 * on so a bare "\n" from the guest still returns the carriage. With the
 * mux, Ctrl-C goes to the guest too (Ctrl-A x quits). */
static void set_raw_tty(bool keep_signals)
{
	struct termios t;

	if (tcgetattr(STDIN_FILENO, &saved_tty) < 0)
		return;
	tty_saved = true;
	atexit(chardev_restore_tty);
	signal(SIGTERM, restore_and_die);
	signal(SIGHUP, restore_and_die);
	signal(SIGQUIT, restore_and_die);
	signal(SIGINT, restore_and_die);
	t = saved_tty;
	t.c_iflag &= ~(unsigned)(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON);
	t.c_oflag |= OPOST;
	t.c_lflag &= ~(unsigned)(ECHO | ECHONL | ICANON | IEXTEN);
	if (!keep_signals)
		t.c_lflag &= ~(unsigned)ISIG;
	t.c_cflag &= ~(unsigned)(CSIZE | PARENB);
	t.c_cflag |= CS8;
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSANOW, &t);
}

/* --------------------------------------------------------------- input */

static void on_readable(void *opaque, int fd, unsigned events);
static void on_accept(void *opaque, int fd, unsigned events);

static void watch_input(struct chardev *c, bool on)
{
	if (c->in_fd < 0 || on == c->watching)
		return;
	if (on)
		c->watching = evloop_add_fd(c->loop, c->in_fd, EV_READ, on_readable, c) == 0;
	else {
		evloop_del_fd(c->loop, c->in_fd);
		c->watching = false;
	}
}

static void send_event(struct chardev *c, unsigned i, enum chardev_event ev)
{
	if (i < c->n_fe && c->fe[i].event)
		c->fe[i].event(c->fe[i].opaque, ev);
}

static const char mux_help[] = "\r\nC-a h    print this help\r\n"
			       "C-a x    exit vmm\r\n"
			       "C-a c    switch between console and monitor\r\n"
			       "C-a C-a  sends C-a\r\n";

/* Handle the byte after Ctrl-A. Returns true when it switched focus. */
static bool mux_command(struct chardev *c, uint8_t b, uint8_t *out, size_t *n)
{
	switch (b) {
	case CHARDEV_ESCAPE:
		out[(*n)++] = CHARDEV_ESCAPE;
		return false;
	case 'c':
		if (c->n_fe > 1) {
			c->focus = (c->focus + 1) % c->n_fe;
			return true;
		}
		return false;
	case 'x':
		chardev_write(c, "vmm: terminated\r\n", 17);
		if (c->quit_fn)
			c->quit_fn(c->quit_opaque);
		return false;
	case 'h':
	case '?':
		chardev_write(c, mux_help, sizeof(mux_help) - 1);
		return false;
	default:
		return false; /* unknown sequences are swallowed, as in QEMU */
	}
}

/* Filter until the input ends or the focus changes (so bytes before a
 * switch still reach the old frontend). *used = input bytes consumed. */
static size_t mux_filter(struct chardev *c, const uint8_t *in, size_t len, uint8_t *out,
			 size_t *used, bool *switched)
{
	size_t n = 0, i;

	*switched = false;
	if (!c->mux) {
		memcpy(out, in, len);
		*used = len;
		return len;
	}
	for (i = 0; i < len && !*switched; i++) {
		if (c->escape) {
			c->escape = false;
			*switched = mux_command(c, in[i], out, &n);
		} else if (in[i] == CHARDEV_ESCAPE) {
			c->escape = true;
		} else {
			out[n++] = in[i];
		}
	}
	*used = i;
	return n;
}

size_t chardev_mux_filter(struct chardev *c, const uint8_t *in, size_t len, uint8_t *out)
{
	size_t n = 0, used = 0;
	bool switched;

	while (used < len) {
		size_t u;

		n += mux_filter(c, in + used, len - used, out + n, &u, &switched);
		used += u;
	}
	return n;
}

unsigned chardev_focus(const struct chardev *c)
{
	return c->focus;
}

/* Deliver buffered input; returns true when everything was delivered. */
static bool pump(struct chardev *c)
{
	for (;;) {
		if (c->pend_off < c->pend_len) {
			struct chardev_frontend *fe = &c->fe[c->focus];
			size_t room, n;

			if (c->focus >= c->n_fe) { /* nobody listens: drop */
				c->pend_off = c->pend_len;
				continue;
			}
			room = fe->can_receive(fe->opaque);
			if (!room)
				return false;
			n = c->pend_len - c->pend_off;
			n = n < room ? n : room;
			fe->receive(fe->opaque, c->pend + c->pend_off, n);
			c->pend_off += n;
			continue;
		}
		if (c->raw_off < c->raw_len) {
			size_t used;
			bool switched;

			c->pend_len = mux_filter(c, c->raw + c->raw_off, c->raw_len - c->raw_off,
						 c->pend, &used, &switched);
			c->pend_off = 0;
			c->raw_off += used;
			if (switched)
				send_event(c, c->focus, CHARDEV_FOCUS);
			continue;
		}
		return true;
	}
}

static void pump_and_watch(struct chardev *c)
{
	watch_input(c, pump(c));
}

/* ------------------------------------------------------ client sockets */

static void client_connected(struct chardev *c);

/* A peer accepted or dialled: its bytes flow, the frontends hear of it. */
static void attach_peer(struct chardev *c, int fd)
{
	pthread_mutex_lock(&c->out_lock);
	c->in_fd = c->out_fd = fd;
	pthread_mutex_unlock(&c->out_lock);
	client_connected(c);
	watch_input(c, true);
	for (unsigned i = 0; i < c->n_fe; i++)
		send_event(c, i, CHARDEV_OPENED);
}

/* A blocking connect to path or host:port: the socket, or -1. */
static int dial(const struct chardev_spec *s)
{
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai, *a;
	int fd = -1;

	if (s->kind == CHARDEV_UNIX) {
		snprintf(un.sun_path, sizeof(un.sun_path), "%s", s->path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&un, sizeof(un)) < 0) {
			close(fd);
			fd = -1;
		}
	} else if (getaddrinfo(s->sock.host[0] ? s->sock.host : NULL, s->sock.port, &hints, &ai) ==
		   0) {
		for (a = ai; a && fd < 0; a = a->ai_next) {
			fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
				close(fd);
				fd = -1;
			}
		}
		freeaddrinfo(ai);
	}
	if (fd >= 0)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

static void arm_retry(struct chardev *c)
{
	struct itimerspec t = {.it_value = {.tv_sec = c->spec.sock.reconnect}};

	if (c->retry_fd >= 0)
		timerfd_settime(c->retry_fd, 0, &t, NULL);
}

static void on_retry(void *opaque, int fd, unsigned events)
{
	struct chardev *c = opaque;
	uint64_t expirations;
	int s;

	if (read(fd, &expirations, sizeof(expirations)) < 0 && errno == EAGAIN)
		return;
	s = dial(&c->spec);
	if (s < 0) {
		arm_retry(c); /* the peer is still away: output meanwhile is dropped */
		return;
	}
	attach_peer(c, s);
}

/* server=off: connected before the machine starts, as QEMU does; with
 * reconnect=N a peer not there yet is tried again every N seconds. */
static int open_client(struct chardev *c, char *err, size_t errlen)
{
	const struct listen_spec *s = &c->spec.sock;

	c->is_socket = true;
	if (s->reconnect) {
		c->retry_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (c->retry_fd < 0) {
			snprintf(err, errlen, "reconnect: %s", strerror(errno));
			return -1;
		}
	}
	c->in_fd = c->out_fd = dial(&c->spec);
	if (c->in_fd >= 0) {
		client_connected(c);
		return 0;
	}
	if (!s->reconnect) {
		snprintf(err, errlen, "Failed to connect to '%s%s%s': %s",
			 c->spec.kind == CHARDEV_UNIX ? c->spec.path : s->host,
			 c->spec.kind == CHARDEV_UNIX ? "" : ":",
			 c->spec.kind == CHARDEV_UNIX ? "" : s->port, strerror(errno));
		return -1;
	}
	arm_retry(c);
	return 0;
}

static void disconnect_client(struct chardev *c)
{
	watch_input(c, false);
	pthread_mutex_lock(&c->out_lock);
	close(c->in_fd);
	c->in_fd = c->out_fd = -1;
	pthread_mutex_unlock(&c->out_lock);
	c->raw_off = c->raw_len = c->pend_off = c->pend_len = 0;
	for (unsigned i = 0; i < c->n_fe; i++)
		send_event(c, i, CHARDEV_CLOSED);
	if (c->spec.sock.client)
		arm_retry(c);
	else
		evloop_add_fd(c->loop, c->listen_fd, EV_READ, on_accept, c);
}

static void on_readable(void *opaque, int fd, unsigned events)
{
	struct chardev *c = opaque;
	ssize_t n = read(fd, c->raw, sizeof(c->raw));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		if (c->is_socket)
			disconnect_client(c);
		else
			watch_input(c, false); /* EOF on stdin: the guest runs on */
		return;
	}
	c->raw_off = 0;
	c->raw_len = (size_t)n;
	if (c->spec.kind == CHARDEV_TCP && c->spec.sock.telnet)
		c->raw_len = telnet_filter(&c->telnet, c->raw, c->raw_len);
	if (!c->raw_len)
		return;
	pump_and_watch(c);
}

static void rx_ready_cb(void *opaque)
{
	pump_and_watch(opaque);
}

void chardev_rx_ready(struct chardev *c)
{
	if (c)
		evloop_call(c->loop, rx_ready_cb, c);
}

/* -------------------------------------------------------------- output */

/* Older bytes give way: the ring keeps the newest, as QEMU's does. */
static void ring_put(struct chardev *c, const uint8_t *p, size_t len)
{
	uint32_t size = c->spec.ring_size;

	for (size_t i = 0; i < len; i++)
		c->ring[c->prod++ & (size - 1)] = p[i];
	if (c->prod - c->cons > size)
		c->cons = c->prod - size;
}

bool chardev_is_ringbuf(const struct chardev *c)
{
	return c && c->ring;
}

size_t chardev_ringbuf_read(struct chardev *c, uint8_t *out, size_t max)
{
	size_t n = 0;

	pthread_mutex_lock(&c->out_lock);
	while (n < max && c->cons < c->prod)
		out[n++] = c->ring[c->cons++ & (c->spec.ring_size - 1)];
	pthread_mutex_unlock(&c->out_lock);
	return n;
}

void chardev_write(struct chardev *c, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (!c)
		return;
	pthread_mutex_lock(&c->out_lock);
	if (c->ring)
		ring_put(c, p, len);
	while (len && c->out_fd >= 0) {
		ssize_t n = c->is_socket ? send(c->out_fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT)
					 : write(c->out_fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* a slow or gone client loses output, the guest goes on */
		p += n;
		len -= (size_t)n;
	}
	pthread_mutex_unlock(&c->out_lock);
}

size_t chardev_write_some(struct chardev *c, const void *buf, size_t len)
{
	ssize_t n = (ssize_t)len;

	if (!c)
		return len;
	pthread_mutex_lock(&c->out_lock);
	if (c->ring)
		ring_put(c, buf, len);
	while (c->out_fd >= 0 && len) {
		n = c->is_socket ? send(c->out_fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT)
				 : write(c->out_fd, buf, len);
		if (n >= 0 || errno != EINTR)
			break;
	}
	pthread_mutex_unlock(&c->out_lock);
	if (n < 0) /* full now: 0; gone: dropped, as chardev_write does */
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : len;
	return (size_t)n;
}

bool chardev_is_tty(const struct chardev *c)
{
	/* a telnet client leaves the echo to the server (WILL ECHO) */
	return c && (c->is_tty || (c->spec.kind == CHARDEV_TCP && c->spec.sock.telnet));
}

/* -------------------------------------------------------------- sockets */

/* A new client: remember who for query-chardev, and open the telnet
 * session the way QEMU does. */
static void client_connected(struct chardev *c)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char host[64] = "", port[8] = "";

	c->peer[0] = 0;
	c->telnet = (struct telnet_state){0};
	if (c->spec.kind != CHARDEV_TCP)
		return;
	if (getpeername(c->in_fd, (struct sockaddr *)&ss, &len) == 0 &&
	    getnameinfo((struct sockaddr *)&ss, len, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV) == 0)
		snprintf(c->peer, sizeof(c->peer), "%s:%s", host, port);
	if (c->spec.sock.telnet)
		chardev_write(c, telnet_greeting, sizeof(telnet_greeting));
}

static void on_accept(void *opaque, int fd, unsigned events)
{
	struct chardev *c = opaque;
	int client = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (client < 0)
		return;
	evloop_del_fd(c->loop, fd); /* one client at a time */
	attach_peer(c, client);
}

/* A listening socket handed over (fd=N): its path, from the socket itself,
 * is what query-chardev shows; the path stays (its owner removes it). */
static int open_inherited_unix(struct chardev *c, char *err, size_t errlen)
{
	struct sockaddr_un addr = {0};
	socklen_t len = sizeof(addr);

	c->listen_fd = listen_open(&c->spec.sock, err, errlen);
	if (c->listen_fd < 0)
		return -1;
	if (getsockname(c->listen_fd, (struct sockaddr *)&addr, &len) == 0 &&
	    addr.sun_family == AF_UNIX)
		snprintf(c->spec.path, sizeof(c->spec.path), "%s", addr.sun_path);
	c->is_socket = true;
	return 0;
}

static int open_unix(struct chardev *c, char *err, size_t errlen)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	const char *path = c->spec.path;

	if (c->spec.sock.kind == LISTEN_FD) /* libvirt's fd=N: bound and listening */
		return open_inherited_unix(c, err, errlen);
	if (strlen(path) >= sizeof(addr.sun_path)) {
		snprintf(err, errlen, "unix:%s: path too long", path);
		return -1;
	}
	strcpy(addr.sun_path, path);
	c->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	unlink(path); /* a stale socket from an earlier run */
	if (c->listen_fd < 0 || bind(c->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(c->listen_fd, 1) < 0) {
		snprintf(err, errlen, "unix:%s: %s", path, strerror(errno));
		return -1;
	}
	c->is_socket = true;
	if (c->spec.wait) {
		int client;

		fprintf(stderr, "vmm: waiting for connection on unix:%s\n", path);
		fcntl(c->listen_fd, F_SETFL, 0);
		client = accept4(c->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		fcntl(c->listen_fd, F_SETFL, O_NONBLOCK);
		if (client < 0) {
			snprintf(err, errlen, "unix:%s: accept: %s", path, strerror(errno));
			return -1;
		}
		c->in_fd = c->out_fd = client;
	}
	return 0;
}

/* tcp:HOST:PORT,server=on[,wait=on][,telnet=on]: one client at a time;
 * wait=on blocks start-up until the first connects, as QEMU does. */
static int open_tcp(struct chardev *c, char *err, size_t errlen)
{
	char what[96];

	c->listen_fd = listen_open(&c->spec.sock, err, errlen);
	if (c->listen_fd < 0)
		return -1;
	c->is_socket = true;
	if (!c->spec.wait)
		return 0;
	listen_describe(&c->spec.sock, what, sizeof(what));
	/* QEMU's words, so scripts waiting for them work with vmm too */
	fprintf(stderr, "QEMU waiting for connection on: disconnected:%s,server=on\n", what);
	c->in_fd = c->out_fd = listen_accept(c->listen_fd, true);
	if (c->in_fd < 0) {
		snprintf(err, errlen, "%s: accept: %s", what, strerror(errno));
		return -1;
	}
	client_connected(c);
	return 0;
}

/* ----------------------------------------------------------------- pty */

/* A new pseudo-terminal whose other end (/dev/pts/N) a console client
 * such as `virsh console` opens. vmm keeps that end open itself: with no
 * client the master would otherwise report hang-up on every poll, and
 * output sent meanwhile waits in the terminal's buffer (about 4 KiB, the
 * rest is dropped rather than stalling the guest) for the next client. */
static int open_pty(struct chardev *c, char *err, size_t errlen)
{
	struct termios tio;
	int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	char name[64];

	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 ||
	    ptsname_r(master, name, sizeof(name)) != 0 || strlen(name) >= sizeof(c->spec.path)) {
		snprintf(err, errlen, "pty: %s", strerror(errno));
		if (master >= 0)
			close(master);
		return -1;
	}
	c->pty_slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (c->pty_slave < 0 || tcgetattr(c->pty_slave, &tio) < 0) {
		snprintf(err, errlen, "pty %s: %s", name, strerror(errno));
		close(master);
		return -1;
	}
	cfmakeraw(&tio); /* no echo of the guest's output back as its input */
	tcsetattr(c->pty_slave, TCSANOW, &tio);
	strcpy(c->spec.path, name);
	c->in_fd = c->out_fd = master;
	/* QEMU's words: tools (and people) look for this line. */
	fprintf(stderr, "char device redirected to %s (label %s)\n", name,
		c->spec.id[0] ? c->spec.id : "serial");
	return 0;
}

void chardev_describe(const struct chardev *c, char *buf, size_t len)
{
	const struct chardev_spec *s = &c->spec;
	const char *state = c->is_socket && c->in_fd < 0 ? "disconnected:" : "";

	switch (s->kind) {
	case CHARDEV_STDIO:
	case CHARDEV_MON_STDIO:
		snprintf(buf, len, "stdio");
		break;
	case CHARDEV_FILE:
		snprintf(buf, len, "file");
		break;
	case CHARDEV_PTY:
		snprintf(buf, len, "pty:%s", s->path);
		break;
	case CHARDEV_RINGBUF:
		snprintf(buf, len, "%s", s->memory ? "memory" : "ringbuf");
		break;
	case CHARDEV_UNIX:
		snprintf(buf, len, "%sunix:%s%s", state, s->path,
			 s->sock.client ? "" : ",server=on");
		break;
	case CHARDEV_TCP:
		snprintf(buf, len, "%s%s:%s:%s%s%s%s", state, s->sock.telnet ? "telnet" : "tcp",
			 s->sock.host, s->sock.port, s->sock.client ? "" : ",server=on",
			 *state ? "" : " <-> ", *state ? "" : c->peer);
		break;
	default:
		snprintf(buf, len, "null");
	}
}

const char *chardev_pty_path(const struct chardev *c)
{
	return c && c->spec.kind == CHARDEV_PTY ? c->spec.path : NULL;
}

/* ------------------------------------------------------------ lifecycle */

static int open_backend(struct chardev *c, char *err, size_t errlen)
{
	switch (c->spec.kind) {
	case CHARDEV_NULL:
		return 0;
	case CHARDEV_STDIO:
	case CHARDEV_MON_STDIO:
		c->in_fd = STDIN_FILENO;
		c->out_fd = STDOUT_FILENO;
		c->is_tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
		if (c->is_tty)
			set_raw_tty(c->spec.kind == CHARDEV_STDIO);
		return 0;
	case CHARDEV_FILE:
		c->out_fd =
			open(c->spec.path,
			     O_WRONLY | O_CREAT | O_CLOEXEC | (c->spec.append ? O_APPEND : O_TRUNC),
			     0644);
		if (c->out_fd < 0) {
			snprintf(err, errlen, "file:%s: %s", c->spec.path, strerror(errno));
			return -1;
		}
		return 0;
	case CHARDEV_UNIX:
		return c->spec.sock.client ? open_client(c, err, errlen)
					   : open_unix(c, err, errlen);
	case CHARDEV_TCP:
		return c->spec.sock.client ? open_client(c, err, errlen) : open_tcp(c, err, errlen);
	case CHARDEV_PTY:
		return open_pty(c, err, errlen);
	case CHARDEV_RINGBUF:
		if (c->spec.ring_size && !(c->spec.ring_size & (c->spec.ring_size - 1)))
			c->ring = malloc(c->spec.ring_size);
		if (!c->ring) {
			snprintf(err, errlen, "ringbuf: no room for %u bytes", c->spec.ring_size);
			return -1;
		}
		return 0;
	default:
		snprintf(err, errlen, "no such character device");
		return -1;
	}
}

struct chardev *chardev_new(const struct chardev_spec *spec, struct evloop *loop, char *err,
			    size_t errlen)
{
	struct chardev *c = calloc(1, sizeof(*c));

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->spec = *spec;
	c->loop = loop;
	c->mux = spec->kind == CHARDEV_MON_STDIO;
	c->in_fd = c->out_fd = c->listen_fd = c->pty_slave = c->retry_fd = -1;
	pthread_mutex_init(&c->out_lock, NULL);
	if (open_backend(c, err, errlen) < 0) {
		/* a listening socket handed over is the chardev's from here on,
		 * also when it turned out unusable (else chardev-add leaks it) */
		if (spec->sock.kind == LISTEN_FD && c->listen_fd != spec->sock.fd &&
		    spec->sock.fd >= 0)
			close(spec->sock.fd);
		chardev_free(c);
		return NULL;
	}
	return c;
}

int chardev_add_frontend(struct chardev *c, const struct chardev_frontend *fe)
{
	if (c->n_fe == (c->mux ? CHARDEV_MAX_FRONTENDS : 1))
		return -ENOSPC;
	c->fe[c->n_fe] = *fe;
	return (int)c->n_fe++;
}

void chardev_set_quit(struct chardev *c, void (*fn)(void *opaque), void *opaque)
{
	c->quit_fn = fn;
	c->quit_opaque = opaque;
}

void chardev_start(struct chardev *c)
{
	if (c->listen_fd >= 0 && c->in_fd < 0 && !c->started)
		evloop_add_fd(c->loop, c->listen_fd, EV_READ, on_accept, c);
	if (c->retry_fd >= 0 && !c->started)
		evloop_add_fd(c->loop, c->retry_fd, EV_READ, on_retry, c);
	c->started = true; /* a frontend attached again: the fds are watched */
	/* A mux opens only the focused frontend; the other hears CHARDEV_FOCUS
	 * when the user switches to it (so the monitor stays quiet until then). */
	if (c->mux)
		send_event(c, c->focus, CHARDEV_OPENED);
	else if (c->in_fd >= 0 || !c->is_socket)
		for (unsigned i = 0; i < c->n_fe; i++)
			send_event(c, i, CHARDEV_OPENED);
	watch_input(c, true);
}

void chardev_detach_frontends(struct chardev *c)
{
	c->n_fe = 0;
	c->focus = 0;
	c->raw_off = c->raw_len;
	c->pend_off = c->pend_len;
	watch_input(c, true); /* input held back for the frontend is dropped now */
}

void chardev_free(struct chardev *c)
{
	if (!c)
		return;
	watch_input(c, false);
	if (c->listen_fd >= 0) {
		evloop_del_fd(c->loop, c->listen_fd);
		close(c->listen_fd);
		if (c->spec.kind == CHARDEV_UNIX && c->spec.sock.kind != LISTEN_FD)
			unlink(c->spec.path);
	}
	if (c->spec.kind == CHARDEV_FILE || c->spec.kind == CHARDEV_PTY || c->is_socket) {
		if (c->out_fd >= 0)
			close(c->out_fd);
	}
	if (c->pty_slave >= 0)
		close(c->pty_slave);
	if (c->retry_fd >= 0) {
		evloop_del_fd(c->loop, c->retry_fd);
		close(c->retry_fd);
	}
	pthread_mutex_destroy(&c->out_lock);
	free(c->ring);
	free(c);
}
