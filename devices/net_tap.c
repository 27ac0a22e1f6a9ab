/* net_tap.c — -netdev tap: a Linux TAP device as the NIC's backend.
 *
 * With vnet_hdr (the default where the kernel has it) the TAP carries the
 * same 12-byte virtio-net header the guest uses (TUNSETVNETHDRSZ), so
 * offloads pass straight through both ways: the guest's partial
 * checksums and TSO frames go out as they are, and TUNSETOFFLOAD lets
 * the kernel hand the guest what it negotiated (GUEST_CSUM/TSO). Frames
 * leave guest RAM with one writev; frames in land in a bounce buffer and
 * are read only while the guest has room (the kernel's queue holds the
 * rest, rx_flow_control). netstack/link_tap.c's TAP strips the header
 * (it terminates TCP itself), so it is not reused here. */
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "devices/netdev_internal.h"

#define TAP_HDR_LEN sizeof(struct virtio_net_hdr_mrg_rxbuf)
#define TAP_FRAME_MAX (14 + 4 + 65535)
#define TAP_READS_PER_POLL 64
#define TAP_MAX_IOV 1024

struct net_tap {
	struct netdev nd;
	int fd;
	bool vnet_hdr, own_fd;
	char ifname[IFNAMSIZ];
	uint8_t *buf; /* header + frame */
	struct iovec iov[TAP_MAX_IOV + 1];
	char info[96];
};

struct tap_opts {
	char ifname[IFNAMSIZ];
	int fd;
	bool vnet_hdr, vnet_given;
};

static int tap_opt(void *arg, const char *key, const char *v, char *err, size_t errlen)
{
	struct tap_opts *o = arg;
	char *end;
	bool on;

	if (!strcmp(key, "ifname")) {
		if (strlen(v) >= IFNAMSIZ || !*v) {
			snprintf(err, errlen, "tap: ifname '%s': 1 to %d characters", v,
				 IFNAMSIZ - 1);
			return -1;
		}
		strcpy(o->ifname, v);
	} else if (!strcmp(key, "script") || !strcmp(key, "downscript")) {
		if (strcmp(v, "no")) {
			snprintf(err, errlen,
				 "tap: %s=%s: only %s=no (configure the TAP "
				 "beforehand)",
				 key, v, key);
			return -1;
		}
	} else if (!strcmp(key, "vnet_hdr")) {
		o->vnet_given = true;
		return netdev_parse_bool(key, v, &o->vnet_hdr, err, errlen);
	} else if (!strcmp(key, "fd")) { /* libvirt's: an open TAP */
		o->fd = (int)strtol(v, &end, 10);
		if (*end || end == v || o->fd < 0) {
			snprintf(err, errlen, "tap: fd=%s: not a file descriptor", v);
			return -1;
		}
	} else if (!strcmp(key, "vhost")) {
		if (netdev_parse_bool(key, v, &on, err, errlen) < 0)
			return -1;
		if (on) {
			snprintf(err, errlen, "tap: vhost=on is not supported");
			return -1;
		}
	} else {
		snprintf(err, errlen, "tap: unknown option '%s'", key);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------- frames */

static int tap_send(struct netdev *nd, const struct virtio_net_hdr *hdr, const struct iovec *iov,
		    int iovcnt, size_t len)
{
	struct net_tap *t = (struct net_tap *)nd;
	struct virtio_net_hdr_mrg_rxbuf h = {.hdr = *hdr};
	int k = 0;

	if (iovcnt > TAP_MAX_IOV)
		return -EMSGSIZE;
	if (t->vnet_hdr)
		t->iov[k++] = (struct iovec){&h, TAP_HDR_LEN};
	for (int i = 0; i < iovcnt; i++) /* the frame ends where the chain ends */
		t->iov[k++] = iov[i];
	/* A full queue drops the frame, as a NIC would. */
	return writev(t->fd, t->iov, k) < 0 ? -errno : 0;
}

static int tap_fd(struct netdev *nd)
{
	return ((struct net_tap *)nd)->fd;
}

static void tap_poll(struct netdev *nd)
{
	struct net_tap *t = (struct net_tap *)nd;
	size_t off = t->vnet_hdr ? TAP_HDR_LEN : 0;
	struct virtio_net_hdr none = {0};

	for (int i = 0; i < TAP_READS_PER_POLL && nd->rx && nd->can_rx(nd->rx_opaque); i++) {
		ssize_t n = read(t->fd, t->buf, TAP_HDR_LEN + TAP_FRAME_MAX);

		if (n <= (ssize_t)off)
			return; /* EAGAIN, or nothing but a header */
		nd->rx(nd->rx_opaque, t->vnet_hdr ? (const struct virtio_net_hdr *)t->buf : &none,
		       t->buf + off, (size_t)n - off);
	}
}

static void tap_set_rx_offloads(struct netdev *nd, unsigned off)
{
	struct net_tap *t = (struct net_tap *)nd;
	unsigned f = 0;

	if (!t->vnet_hdr)
		return;
	if (off & NETDEV_OFF_CSUM) {
		f |= TUN_F_CSUM;
		if (off & NETDEV_OFF_TSO4)
			f |= TUN_F_TSO4;
		if (off & NETDEV_OFF_TSO6)
			f |= TUN_F_TSO6;
		if ((off & NETDEV_OFF_ECN) && (f & (TUN_F_TSO4 | TUN_F_TSO6)))
			f |= TUN_F_TSO_ECN;
	}
	if (ioctl(t->fd, TUNSETOFFLOAD, f) < 0)
		fprintf(stderr, "vmm: tap %s: TUNSETOFFLOAD: %s\n", t->ifname, strerror(errno));
}

static int tap_info(struct netdev *nd, char *buf, size_t len)
{
	return snprintf(buf, len, "%s", ((struct net_tap *)nd)->info);
}

static void tap_free(struct netdev *nd)
{
	struct net_tap *t = (struct net_tap *)nd;

	if (t->fd >= 0)
		close(t->fd);
	free(t->buf);
	free(t);
}

static const struct netdev_ops tap_ops = {
	.type = "tap",
	.send = tap_send,
	.fd = tap_fd,
	.poll = tap_poll,
	.set_rx_offloads = tap_set_rx_offloads,
	.info = tap_info,
	.free = tap_free,
};

/* ------------------------------------------------------------- set-up */

static int open_tap(struct net_tap *t, const struct tap_opts *o, char *err, size_t errlen)
{
	struct ifreq ifr = {0};
	int hdr = TAP_HDR_LEN;

	t->fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (t->fd < 0) {
		snprintf(err, errlen, "tap: /dev/net/tun: %s", strerror(errno));
		return -1;
	}
	ifr.ifr_flags = (short)(IFF_TAP | IFF_NO_PI | (t->vnet_hdr ? IFF_VNET_HDR : 0));
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", o->ifname);
	if (ioctl(t->fd, TUNSETIFF, &ifr) < 0) {
		snprintf(err, errlen, "tap: cannot attach to %s: %s",
			 o->ifname[0] ? o->ifname : "a new TAP", strerror(errno));
		return -1;
	}
	memcpy(t->ifname, ifr.ifr_name, IFNAMSIZ);
	if (t->vnet_hdr && ioctl(t->fd, TUNSETVNETHDRSZ, &hdr) < 0) {
		snprintf(err, errlen, "tap %s: TUNSETVNETHDRSZ: %s", t->ifname, strerror(errno));
		return -1;
	}
	return 0;
}

/* fd=N from libvirt: whatever it was opened with decides vnet_hdr. */
static int adopt_fd(struct net_tap *t, const struct tap_opts *o, char *err, size_t errlen)
{
	struct ifreq ifr = {0};
	int hdr = TAP_HDR_LEN;

	if (ioctl(o->fd, TUNGETIFF, &ifr) < 0) {
		snprintf(err, errlen, "tap: fd=%d is not a TAP: %s", o->fd, strerror(errno));
		return -1;
	}
	t->fd = o->fd;
	memcpy(t->ifname, ifr.ifr_name, IFNAMSIZ);
	t->vnet_hdr = (ifr.ifr_flags & IFF_VNET_HDR) && ioctl(t->fd, TUNSETVNETHDRSZ, &hdr) == 0;
	fcntl(t->fd, F_SETFL, fcntl(t->fd, F_GETFL) | O_NONBLOCK);
	fcntl(t->fd, F_SETFD, FD_CLOEXEC);
	return 0;
}

struct netdev *netdev_tap_new(const char *id, const char *opts, char *err, size_t errlen)
{
	struct net_tap *t = calloc(1, sizeof(*t));
	struct tap_opts o = {.fd = -1, .vnet_hdr = true};

	if (!t || !(t->buf = malloc(TAP_HDR_LEN + TAP_FRAME_MAX))) {
		snprintf(err, errlen, "tap: out of memory");
		goto fail;
	}
	t->fd = -1;
	if (netdev_each_opt("tap", opts, tap_opt, &o, err, errlen) < 0)
		goto fail;
	t->vnet_hdr = o.vnet_hdr;
	if (o.fd >= 0 ? adopt_fd(t, &o, err, errlen) < 0 : open_tap(t, &o, err, errlen) < 0)
		goto fail;
	t->nd.ops = &tap_ops;
	snprintf(t->nd.id, sizeof(t->nd.id), "%s", id);
	t->nd.rx_flow_control = true;
	if (t->vnet_hdr)
		t->nd.offloads =
			NETDEV_OFF_CSUM | NETDEV_OFF_TSO4 | NETDEV_OFF_TSO6 | NETDEV_OFF_ECN;
	if (o.fd >= 0)
		snprintf(t->info, sizeof(t->info), "fd=%d", o.fd);
	else
		snprintf(t->info, sizeof(t->info), "ifname=%s,script=no,downscript=no", t->ifname);
	return &t->nd;
fail:
	if (t && t->fd >= 0 && o.fd < 0)
		close(t->fd);
	if (t)
		free(t->buf);
	free(t);
	return NULL;
}
