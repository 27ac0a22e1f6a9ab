/* link_tap.c — a Linux TAP device as a link: plain, or with virtio-net
 * headers and offloads.
 *
 * The offloading TAP (IFF_VNET_HDR, checksum, TSO4 and TSO6) is for a peer that
 * is the local kernel. Receive: the kernel may hand over TCP segments up
 * to 64 KiB with checksums left partial, so one read moves what would be
 * ~45 frames at MTU 1500; they come from the local kernel, so their
 * checksums are trusted (NS_IF_NO_CSUM_RX). Transmit: consecutive
 * full-sized segments of one TCP flow are coalesced into one GSO frame
 * (gso.c, like GRO), written when the flow changes, a segment does not
 * follow on, or at ns_link_tap_vnet_flush() / the link's poll; the kernel
 * takes the 64 KiB frame in one go. Everything else goes out as it came,
 * with an all-zero header. */
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "netstack/internal.h"

struct tap {
	struct ns_link link;
	int fd;
	struct ns_gso *gso; /* virtio-net header TAPs only */
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

/* Open /dev/net/tun as TAP name (or a kernel-chosen one) with extra
 * flags; the fd, or -errno. The actual name goes to ifname. */
static int tap_open_fd(const char *name, unsigned mtu, short flags, char ifname[IFNAMSIZ])
{
	struct ifreq ifr;
	int fd, e;

	if (mtu < 68 || mtu > 65521 || (name && strlen(name) >= IFNAMSIZ))
		return -EINVAL;
	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = (short)(IFF_TAP | IFF_NO_PI | flags);
	if (name)
		snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		e = errno;
		close(fd);
		return -e;
	}
	memcpy(ifname, ifr.ifr_name, IFNAMSIZ);
	return fd;
}

/* The link around an open TAP fd; NULL when out of memory. */
static struct tap *tap_new(int fd, unsigned mtu, const char *ifname, const struct ns_link_ops *ops)
{
	struct tap *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->fd = fd;
	t->link.ops = ops;
	t->link.priv = t;
	t->link.mtu = mtu;
	/* A locally administered unicast MAC, distinct from the kernel's. */
	memcpy(t->link.mac, (uint8_t[6]){0x02, 0x4e, 0x53, 0, 0, 1}, 6);
	t->link.mac[4] = (uint8_t)(getpid() >> 8);
	t->link.mac[5] = (uint8_t)getpid();
	snprintf(t->link.name, sizeof(t->link.name), "%s", ifname);
	return t;
}

struct ns_link *ns_link_tap_open(const char *name, unsigned mtu, int *err)
{
	char ifname[IFNAMSIZ];
	struct tap *t;
	int fd = tap_open_fd(name, mtu, 0, ifname);

	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	t = tap_new(fd, mtu, ifname, &tap_ops);
	if (!t) {
		close(fd);
		*err = -ENOMEM;
		return NULL;
	}
	return &t->link;
}

/* ------------------------------------------- virtio-net header offloads */

static int tv_write(void *opaque, const struct virtio_net_hdr *h, const void *f, size_t len)
{
	struct tap *t = opaque;
	struct iovec iov[2] = {{(void *)h, sizeof(*h)}, {(void *)f, len}};

	/* A full device queue drops the frame, like a NIC would. */
	return writev(t->fd, iov, 2) < 0 ? -errno : 0;
}

void ns_link_tap_vnet_flush(struct ns_link *l)
{
	ns_gso_flush(((struct tap *)l->priv)->gso);
}

static int tv_transmit(struct ns_link *l, const void *frame, size_t len)
{
	return ns_gso_add(((struct tap *)l->priv)->gso, frame, len);
}

static ssize_t tv_receive(struct ns_link *l, void *buf, size_t cap)
{
	struct tap *t = l->priv;
	struct virtio_net_hdr h;
	struct iovec iov[2] = {{&h, sizeof(h)}, {buf, cap}};
	ssize_t n = readv(t->fd, iov, 2);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	return n < (ssize_t)sizeof(h) ? 0 : n - (ssize_t)sizeof(h);
}

/* Held segments must not wait for the caller's next flush forever: the
 * stack's poll (ns_stack_poll, ns_stack_run_once) writes them too. */
static uint64_t tv_poll(struct ns_link *l, uint64_t now_us)
{
	ns_link_tap_vnet_flush(l);
	return UINT64_MAX;
}

static void tv_destroy(struct ns_link *l)
{
	struct tap *t = l->priv;

	ns_gso_free(t->gso);
	tap_destroy(l);
}

static const struct ns_link_ops tap_vnet_ops = {
	.transmit = tv_transmit,
	.receive = tv_receive,
	.fd = tap_fd,
	.poll = tv_poll,
	.destroy = tv_destroy,
};

struct ns_link *ns_link_tap_vnet_open(const char *name, unsigned mtu, int *err)
{
	char ifname[IFNAMSIZ];
	struct tap *t;
	int fd = tap_open_fd(name, mtu, IFF_VNET_HDR, ifname);

	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	if (ioctl(fd, TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6) < 0) {
		*err = -errno;
		close(fd);
		return NULL;
	}
	t = tap_new(fd, mtu, ifname, &tap_vnet_ops);
	if (t && !(t->gso = ns_gso_new(tv_write, t))) {
		tap_destroy(&t->link); /* closes fd */
		t = NULL;
		fd = -1;
	}
	if (!t) {
		if (fd >= 0)
			close(fd);
		*err = -ENOMEM;
		return NULL;
	}
	return &t->link;
}
