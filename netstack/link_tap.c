/* link_tap.c — a Linux TAP device as a link. */
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "netstack/internal.h"

struct tap {
	struct ns_link link;
	int fd;
};

static int tap_transmit(struct ns_link *l, const void *frame, size_t len)
{
	struct tap *t = l->priv;
	ssize_t n = write(t->fd, frame, len);

	/* A full device queue drops the frame, like a NIC would; TCP recovers. */
	if (n < 0)
		return -errno;
	return 0;
}

static ssize_t tap_receive(struct ns_link *l, void *buf, size_t cap)
{
	struct tap *t = l->priv;
	ssize_t n = read(t->fd, buf, cap);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	return n;
}

static int tap_fd(struct ns_link *l)
{
	return ((struct tap *)l->priv)->fd;
}

static void tap_destroy(struct ns_link *l)
{
	struct tap *t = l->priv;

	close(t->fd);
	free(t);
}

static const struct ns_link_ops tap_ops = {
	.transmit = tap_transmit,
	.receive = tap_receive,
	.fd = tap_fd,
	.destroy = tap_destroy,
};

struct ns_link *ns_link_tap_open(const char *name, unsigned mtu, int *err)
{
	struct ifreq ifr;
	struct tap *t;
	int fd, e;

	if (mtu < 68 || mtu > 65521 || (name && strlen(name) >= IFNAMSIZ)) {
		*err = -EINVAL;
		return NULL;
	}
	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	if (name)
		snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0)
		goto fail;
	t = calloc(1, sizeof(*t));
	if (!t) {
		errno = ENOMEM;
		goto fail;
	}
	t->fd = fd;
	t->link.ops = &tap_ops;
	t->link.priv = t;
	t->link.mtu = mtu;
	/* A locally administered unicast MAC, distinct from the kernel's. */
	memcpy(t->link.mac, (uint8_t[6]){ 0x02, 0x4e, 0x53, 0, 0, 1 }, 6);
	t->link.mac[4] = (uint8_t)(getpid() >> 8);
	t->link.mac[5] = (uint8_t)getpid();
	snprintf(t->link.name, sizeof(t->link.name), "%s", ifr.ifr_name);
	return &t->link;
fail:
	e = errno;
	close(fd);
	*err = -e;
	return NULL;
}
