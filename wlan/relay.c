/* relay.c — hwsim messages over a unix stream socket: a VM's link to the
 * wlan-medium daemon, and the framing both ends use (u32 little-endian
 * length, then the message). The socket is the radio's identity on the
 * daemon's medium, so nothing else travels with a message. */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "wlan/wlan.h"

int wlan_stream_feed(struct wlan_stream *s, const uint8_t *data, size_t len,
		     void (*fn)(void *opaque, const uint8_t *msg, size_t len), void *opaque)
{
	while (len) {
		size_t take = sizeof(s->buf) - s->have < len ? sizeof(s->buf) - s->have : len;
		uint32_t n;

		memcpy(s->buf + s->have, data, take);
		s->have += take;
		data += take;
		len -= take;
		while (s->have >= 4) {
			memcpy(&n, s->buf, 4);
			n = le32toh(n);
			if (n == 0 || n > HWSIM_MAX_MSG_LEN)
				return -1; /* the stream cannot be resynchronised */
			if (s->have < 4 + n)
				break;
			fn(opaque, s->buf + 4, n);
			memmove(s->buf, s->buf + 4 + n, s->have - 4 - n);
			s->have -= 4 + n;
		}
	}
	return 0;
}

int wlan_stream_send(int fd, const void *msg, size_t len)
{
	uint8_t buf[WLAN_RELAY_MAX];
	uint32_t n = htole32((uint32_t)len);

	if (len == 0 || len > HWSIM_MAX_MSG_LEN)
		return -1;
	memcpy(buf, &n, 4);
	memcpy(buf + 4, msg, len);
	/* one send: messages never interleave; a full socket loses the frame,
	 * as the air would */
	return send(fd, buf, len + 4, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)(len + 4) ? 0 : -1;
}

struct wlan_relay {
	int fd;
	_Atomic bool stopping;
	pthread_t thread;
	wlan_deliver_fn fn;
	void *opaque;
	struct wlan_stream in;
};

static void to_guest(void *opaque, const uint8_t *msg, size_t len)
{
	struct wlan_relay *r = opaque;

	r->fn(r->opaque, msg, len);
}

static void *relay_thread(void *arg)
{
	struct wlan_relay *r = arg;
	uint8_t buf[8192];

	for (;;) {
		ssize_t n = recv(r->fd, buf, sizeof(buf), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || wlan_stream_feed(&r->in, buf, (size_t)n, to_guest, r)) {
			if (!r->stopping)
				fprintf(stderr, "wlan-medium: lost the daemon's socket: the radios "
						"are off the air\n");
			return NULL;
		}
	}
}

struct wlan_relay *wlan_relay_connect(const char *path, wlan_deliver_fn fn, void *opaque, char *err,
				      size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct wlan_relay *r;
	int bufsz = 1 << 20;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "socket path too long: %s", path);
		return NULL;
	}
	strcpy(sa.sun_path, path);
	r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->fn = fn;
	r->opaque = opaque;
	r->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (r->fd < 0 || connect(r->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		snprintf(err, errlen, "cannot connect to the wlan-medium daemon at %s: %s", path,
			 strerror(errno));
		goto fail;
	}
	setsockopt(r->fd, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
	if (pthread_create(&r->thread, NULL, relay_thread, r)) {
		snprintf(err, errlen, "cannot start the wlan relay thread");
		goto fail;
	}
	return r;
fail:
	if (r->fd >= 0)
		close(r->fd);
	free(r);
	return NULL;
}

void wlan_relay_send(struct wlan_relay *r, const void *msg, size_t len)
{
	wlan_stream_send(r->fd, msg, len);
}

void wlan_relay_close(struct wlan_relay *r)
{
	if (!r || r->stopping)
		return;
	r->stopping = true;
	shutdown(r->fd, SHUT_RDWR); /* wakes the thread; later sends fail */
	pthread_join(r->thread, NULL);
}

void wlan_relay_free(struct wlan_relay *r)
{
	if (!r)
		return;
	wlan_relay_close(r);
	close(r->fd);
	free(r);
}
