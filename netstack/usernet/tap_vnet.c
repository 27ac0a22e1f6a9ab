/* tap_vnet.c — a TAP link with virtio-net headers and offloads for
 * netstack-host --user-net: the kernel may hand over TCP segments up to
 * 64 KiB (TSO) with checksums left partial, so one read moves what would
 * be ~45 frames at MTU 1500. The frames come from the local kernel, so
 * their checksums are trusted (usernet_cfg.rx_csum_trusted). What we send
 * carries full checksums and no GSO (an all-zero header). */
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "netstack/usernet/tap_vnet.h"

struct tap_vnet {
	int fd;
};

static int tv_transmit(struct ns_link *l, const void *frame, size_t len)
{
	struct tap_vnet *t = l->priv;
	struct virtio_net_hdr h = {0};
	struct iovec iov[2] = {{&h, sizeof(h)}, {(void *)frame, len}};

	/* A full device queue drops the frame, like a NIC would. */
	return writev(t->fd, iov, 2) < 0 ? -errno : 0;
}

static ssize_t tv_receive(struct ns_link *l, void *buf, size_t cap)
{
	struct tap_vnet *t = l->priv;
	struct virtio_net_hdr h;
	struct iovec iov[2] = {{&h, sizeof(h)}, {buf, cap}};
	ssize_t n = readv(t->fd, iov, 2);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	return n < (ssize_t)sizeof(h) ? 0 : n - (ssize_t)sizeof(h);
}

static int tv_fd(struct ns_link *l)
{
	return ((struct tap_vnet *)l->priv)->fd;
}

static void tv_destroy(struct ns_link *l)
{
	struct tap_vnet *t = l->priv;

	close(t->fd);
	free(t);
	free(l);
}

static const struct ns_link_ops tv_ops = {
	.transmit = tv_transmit,
	.receive = tv_receive,
	.fd = tv_fd,
	.destroy = tv_destroy,
};

struct ns_link *tap_vnet_open(const char *name, unsigned mtu, int *err)
{
	static const uint8_t mac[6] = {0x02, 0x4e, 0x53, 0x75, 0x6e, 0x01};
	struct ifreq ifr;
	struct tap_vnet *t;
	struct ns_link *l;
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC), e;

	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0 || ioctl(fd, TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4) < 0)
		goto fail;
	t = calloc(1, sizeof(*t));
	if (!t)
		goto fail;
	t->fd = fd;
	l = ns_link_new(&tv_ops, t, mtu, mac, ifr.ifr_name);
	if (!l) {
		free(t);
		goto fail;
	}
	return l;
fail:
	e = errno ? errno : ENOMEM;
	close(fd);
	*err = -e;
	return NULL;
}
