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
 * (it terminates TCP itself), so it is not reused here.
 *
 * queues=N (or libvirt's fds=A:B:...) attaches N queues of one TAP
 * (IFF_MULTI_QUEUE), each its own fd: the NIC's queue pair q sends on
 * fd q and takes what the kernel steers to fd q (it follows the queue a
 * flow was last sent on). The NIC watches one fd, an epoll set of them. */
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backends/backends.h"
#include "backends/net/netdev_internal.h"

#define TAP_HDR_LEN sizeof(struct virtio_net_hdr_mrg_rxbuf)
#define TAP_FRAME_MAX (14 + 4 + 65535)
#define TAP_READS_PER_POLL 64
#define TAP_MAX_IOV 1024
#define TAP_MAX_QUEUES 16

struct net_tap {
	struct netdev nd;
	int fd[TAP_MAX_QUEUES]; /* one per queue (nd.queues) */
	int epfd;		/* with several: all of them, for the NIC */
	bool vnet_hdr, own_fd;
	char ifname[IFNAMSIZ];
	uint8_t *buf; /* header + frame */
	struct iovec iov[TAP_MAX_IOV + 1];
	char info[96];
};

struct tap_opts {
	char ifname[IFNAMSIZ];
	int fd[TAP_MAX_QUEUES]; /* fd= or fds=: open TAP queues to adopt */
	unsigned n_fds, queues;
	bool vnet_hdr, vnet_given;
};

/* fd=N, or fds=A:B:... */
static int parse_fds(struct tap_opts *o, const char *key, const char *v, char *err, size_t errlen)
{
	char *end;

	o->n_fds = 0;
	do {
		long fd = strtol(v, &end, 10);

		if (end == v || fd < 0 || fd > INT32_MAX || (*end && *end != ':') ||
		    o->n_fds == TAP_MAX_QUEUES || (*end && strcmp(key, "fds"))) {
			snprintf(err, errlen, "tap: %s=%s: not %s", key, v,
				 strcmp(key, "fds") ? "a file descriptor"
						    : "file descriptors (A:B:...)");
			return -1;
		}
		o->fd[o->n_fds++] = (int)fd;
		v = end + 1;
	} while (*end);
	return 0;
}

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
	} else if (!strcmp(key, "fd") || !strcmp(key, "fds")) { /* libvirt's: open TAPs */
		return parse_fds(o, key, v, err, errlen);
	} else if (!strcmp(key, "queues")) {
		unsigned long n = strtoul(v, &end, 10);

		if (*end || end == v || n < 1 || n > TAP_MAX_QUEUES) {
			snprintf(err, errlen, "tap: queues=%s: 1 to %d", v, TAP_MAX_QUEUES);
			return -1;
		}
		o->queues = (unsigned)n;
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

static int tap_send(struct netdev *nd, unsigned q, const struct virtio_net_hdr *hdr,
		    const struct iovec *iov, int iovcnt, size_t len)
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
	return writev(t->fd[q], t->iov, k) < 0 ? -errno : 0;
}

static int tap_fd(struct netdev *nd)
{
	struct net_tap *t = (struct net_tap *)nd;

	return nd->queues > 1 ? t->epfd : t->fd[0];
}

static void poll_queue(struct net_tap *t, unsigned q)
{
	struct netdev *nd = &t->nd;
	size_t off = t->vnet_hdr ? TAP_HDR_LEN : 0;
	struct virtio_net_hdr none = {0};

	for (int i = 0; i < TAP_READS_PER_POLL && nd->rx && nd->can_rx(nd->rx_opaque, q); i++) {
		ssize_t n = read(t->fd[q], t->buf, TAP_HDR_LEN + TAP_FRAME_MAX);

		if (n <= (ssize_t)off)
			return; /* EAGAIN, or nothing but a header */
		nd->rx(nd->rx_opaque, q,
		       t->vnet_hdr ? (const struct virtio_net_hdr *)t->buf : &none, t->buf + off,
		       (size_t)n - off);
	}
}

/* Every queue: one with nothing to read costs one EAGAIN. */
static void tap_poll(struct netdev *nd)
{
	for (unsigned q = 0; q < nd->queues; q++)
		poll_queue((struct net_tap *)nd, q);
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
	/* the offloads are the device's, whichever queue sets them */
	if (ioctl(t->fd[0], TUNSETOFFLOAD, f) < 0)
		fprintf(stderr, "vmm: tap %s: TUNSETOFFLOAD: %s\n", t->ifname, strerror(errno));
}

static int tap_info(struct netdev *nd, char *buf, size_t len)
{
	return snprintf(buf, len, "%s", ((struct net_tap *)nd)->info);
}

static void tap_free(struct netdev *nd)
{
	struct net_tap *t = (struct net_tap *)nd;

	for (unsigned q = 0; q < TAP_MAX_QUEUES; q++)
		if (t->fd[q] >= 0)
			close(t->fd[q]);
	if (t->epfd >= 0)
		close(t->epfd);
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

/* Queue q of the TAP named by o->ifname (q 0 creates it if need be and
 * fixes the name the others attach to). */
static int open_queue(struct net_tap *t, const struct tap_opts *o, unsigned q, char *err,
		      size_t errlen)
{
	struct ifreq ifr = {0};
	int hdr = TAP_HDR_LEN, fd;

	fd = t->fd[q] = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "tap: /dev/net/tun: %s", strerror(errno));
		return -1;
	}
	ifr.ifr_flags = (short)(IFF_TAP | IFF_NO_PI | (t->vnet_hdr ? IFF_VNET_HDR : 0) |
				(o->queues > 1 ? IFF_MULTI_QUEUE : 0));
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", q ? t->ifname : o->ifname);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		snprintf(err, errlen, "tap: cannot attach %sto %s: %s",
			 o->queues > 1 ? "a queue " : "",
			 ifr.ifr_name[0] ? ifr.ifr_name : "a new TAP", strerror(errno));
		return -1;
	}
	memcpy(t->ifname, ifr.ifr_name, IFNAMSIZ);
	if (t->vnet_hdr && ioctl(fd, TUNSETVNETHDRSZ, &hdr) < 0) {
		snprintf(err, errlen, "tap %s: TUNSETVNETHDRSZ: %s", t->ifname, strerror(errno));
		return -1;
	}
	return 0;
}

/* fd=N or fds=A:B from libvirt: whatever they were opened with decides
 * vnet_hdr; all must be queues of one TAP. */
static int adopt_fds(struct net_tap *t, const struct tap_opts *o, char *err, size_t errlen)
{
	for (unsigned q = 0; q < o->n_fds; q++) {
		struct ifreq ifr = {0};
		int hdr = TAP_HDR_LEN, fd = o->fd[q];

		if (ioctl(fd, TUNGETIFF, &ifr) < 0) {
			snprintf(err, errlen, "tap: fd=%d is not a TAP: %s", fd, strerror(errno));
			return -1;
		}
		if (q && strncmp(ifr.ifr_name, t->ifname, IFNAMSIZ)) {
			snprintf(err, errlen, "tap: fds=: fd %d is %s, fd %d is %s", o->fd[0],
				 t->ifname, fd, ifr.ifr_name);
			return -1;
		}
		t->fd[q] = fd;
		memcpy(t->ifname, ifr.ifr_name, IFNAMSIZ);
		t->vnet_hdr =
			(ifr.ifr_flags & IFF_VNET_HDR) && ioctl(fd, TUNSETVNETHDRSZ, &hdr) == 0;
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
	return 0;
}

/* Several queues: one epoll fd for the NIC's I/O thread to watch. */
static int watch_queues(struct net_tap *t, char *err, size_t errlen)
{
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	for (unsigned q = 0; t->epfd >= 0 && q < t->nd.queues; q++) {
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = q};

		if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->fd[q], &ev) < 0) {
			snprintf(err, errlen, "tap: epoll_ctl: %s", strerror(errno));
			return -1;
		}
	}
	if (t->epfd < 0)
		snprintf(err, errlen, "tap: epoll_create1: %s", strerror(errno));
	return t->epfd < 0 ? -1 : 0;
}

static int open_queues(struct net_tap *t, struct tap_opts *o, char *err, size_t errlen)
{
	if (o->n_fds) {
		if (o->queues && o->queues != o->n_fds) {
			snprintf(err, errlen, "tap: queues=%u with %u fds", o->queues, o->n_fds);
			return -1;
		}
		t->nd.queues = o->n_fds;
		if (adopt_fds(t, o, err, errlen) < 0)
			return -1;
	} else {
		t->nd.queues = o->queues ? o->queues : 1;
		o->queues = t->nd.queues;
		for (unsigned q = 0; q < t->nd.queues; q++)
			if (open_queue(t, o, q, err, errlen) < 0)
				return -1;
	}
	return t->nd.queues > 1 ? watch_queues(t, err, errlen) : 0;
}

struct netdev *netdev_tap_new(const char *id, const char *opts, char *err, size_t errlen)
{
	struct net_tap *t = calloc(1, sizeof(*t));
	struct tap_opts o = {.vnet_hdr = true};

	if (!t || !(t->buf = malloc(TAP_HDR_LEN + TAP_FRAME_MAX))) {
		snprintf(err, errlen, "tap: out of memory");
		if (t)
			free(t->buf);
		free(t);
		return NULL;
	}
	t->epfd = -1;
	for (unsigned q = 0; q < TAP_MAX_QUEUES; q++)
		t->fd[q] = -1;
	t->nd.ops = &tap_ops;
	if (netdev_each_opt("tap", opts, tap_opt, &o, err, errlen) < 0)
		goto fail;
	t->vnet_hdr = o.vnet_hdr;
	if (open_queues(t, &o, err, errlen) < 0)
		goto fail;
	snprintf(t->nd.id, sizeof(t->nd.id), "%s", id);
	t->nd.rx_flow_control = true;
	if (t->vnet_hdr)
		t->nd.offloads =
			NETDEV_OFF_CSUM | NETDEV_OFF_TSO4 | NETDEV_OFF_TSO6 | NETDEV_OFF_ECN;
	/* QEMU's layout: queues= only for a TAP it opened with several */
	if (o.n_fds)
		snprintf(t->info, sizeof(t->info), "fd%s=%d%s", o.n_fds > 1 ? "s" : "", o.fd[0],
			 o.n_fds > 1 ? ":..." : "");
	else if (t->nd.queues > 1)
		snprintf(t->info, sizeof(t->info), "ifname=%s,script=no,downscript=no,queues=%u",
			 t->ifname, t->nd.queues);
	else
		snprintf(t->info, sizeof(t->info), "ifname=%s,script=no,downscript=no", t->ifname);
	return &t->nd;
fail:
	/* adopted fds stay the caller's until the TAP is made */
	for (unsigned q = 0; q < o.n_fds; q++)
		if (t->fd[q] == o.fd[q])
			t->fd[q] = -1;
	tap_free(&t->nd);
	return NULL;
}
