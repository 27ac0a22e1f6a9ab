/* tap_vnet.c — a TAP link with virtio-net headers and offloads for
 * netstack-host --user-net.
 *
 * Receive: the kernel may hand over TCP segments up to 64 KiB (TSO) with
 * checksums left partial, so one read moves what would be ~45 frames at
 * MTU 1500. The frames come from the local kernel, so their checksums are
 * trusted (usernet_cfg.rx_csum_trusted).
 * Transmit: consecutive full-sized segments of one TCP flow are coalesced
 * into one GSO frame (like GRO), written when the flow changes, a segment
 * does not follow on, or at tap_vnet_flush() after each event-loop round;
 * the namespace's kernel takes the 64 KiB frame in one go. Everything
 * else goes out as it came, with an all-zero header. */
#include <arpa/inet.h>
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

enum { ETH_LEN = 14, IP_LEN = 20, TV_FRAME_MAX = ETH_LEN + 65535 };

struct tap_vnet {
	int fd;
	uint8_t *agg;	    /* the segment being grown, TV_FRAME_MAX bytes */
	size_t agg_len, hl; /* bytes held; Ethernet + IP + TCP header length */
	size_t mss, last;   /* first and latest segment payload */
	unsigned nseg;
	uint32_t next_seq;
};

static int tv_write(struct tap_vnet *t, const struct virtio_net_hdr *h, const void *f, size_t len)
{
	struct iovec iov[2] = {{(void *)h, sizeof(*h)}, {(void *)f, len}};

	/* A full device queue drops the frame, like a NIC would. */
	return writev(t->fd, iov, 2) < 0 ? -errno : 0;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* A plain IPv4 TCP data segment with ACK (and maybe PSH) only: the kind
 * that may be coalesced. Its header length in *hl. */
static bool coalescible(const uint8_t *f, size_t len, size_t *hl)
{
	const uint8_t *ip = f + ETH_LEN, *tcp = ip + IP_LEN;
	size_t thl;

	if (len < ETH_LEN + IP_LEN + 20 || get16(f + 12) != 0x0800 || ip[0] != 0x45 || ip[9] != 6 ||
	    (get16(ip + 6) & 0x3fff) || get16(ip + 2) != len - ETH_LEN)
		return false;
	thl = (size_t)(tcp[12] >> 4) * 4;
	if (thl < 20 || ETH_LEN + IP_LEN + thl >= len || (tcp[13] & ~0x08) != 0x10)
		return false;
	*hl = ETH_LEN + IP_LEN + thl;
	return true;
}

/* Does segment f continue the one being grown? */
static bool continues(const struct tap_vnet *t, const uint8_t *f, size_t len, size_t hl)
{
	const uint8_t *a = t->agg;
	size_t payload = len - hl;

	return t->nseg && hl == t->hl && t->last == t->mss && payload <= t->mss &&
	       t->agg_len + payload <= TV_FRAME_MAX &&
	       get32(f + ETH_LEN + IP_LEN + 4) == t->next_seq &&
	       !memcmp(a, f, ETH_LEN) &&					 /* MACs, type */
	       a[ETH_LEN + 1] == f[ETH_LEN + 1] &&				 /* TOS */
	       !memcmp(a + ETH_LEN + 8, f + ETH_LEN + 8, 2) &&			 /* TTL, proto */
	       !memcmp(a + ETH_LEN + 12, f + ETH_LEN + 12, 8) &&		 /* addresses */
	       !memcmp(a + ETH_LEN + IP_LEN, f + ETH_LEN + IP_LEN, 4) &&	 /* ports */
	       !memcmp(a + ETH_LEN + IP_LEN + 8, f + ETH_LEN + IP_LEN + 8, 8) && /* ack..win */
	       !memcmp(a + ETH_LEN + IP_LEN + 20, f + ETH_LEN + IP_LEN + 20,
		       hl - ETH_LEN - IP_LEN - 20);
}

/* Write what is being grown: as it is for one segment, else as a GSO
 * frame with a partial checksum (the pseudo header over the whole length,
 * which the kernel adjusts per segment if it ever splits it). */
static int tv_flush_agg(struct tap_vnet *t)
{
	struct virtio_net_hdr h = {0};
	uint8_t *ip = t->agg + ETH_LEN, *tcp = ip + IP_LEN, pseudo[12];
	size_t tcplen = t->agg_len - ETH_LEN - IP_LEN;
	uint16_t v;

	if (!t->nseg)
		return 0;
	if (t->nseg > 1) {
		put16(ip + 2, (uint16_t)(t->agg_len - ETH_LEN));
		memset(ip + 10, 0, 2);
		v = (uint16_t)~ns_csum_fold(ns_csum_add(0, ip, IP_LEN));
		memcpy(ip + 10, &v, 2);
		memcpy(pseudo, ip + 12, 8);
		pseudo[8] = 0;
		pseudo[9] = 6;
		put16(pseudo + 10, (uint16_t)tcplen);
		v = ns_csum_fold(ns_csum_add(0, pseudo, sizeof(pseudo)));
		memcpy(tcp + 16, &v, 2);
		h.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		h.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
		h.hdr_len = (uint16_t)t->hl;
		h.gso_size = (uint16_t)t->mss;
		h.csum_start = ETH_LEN + IP_LEN;
		h.csum_offset = 16;
	}
	t->nseg = 0;
	return tv_write(t, &h, t->agg, t->agg_len);
}

void tap_vnet_flush(struct ns_link *l)
{
	tv_flush_agg(l->priv);
}

static int tv_transmit(struct ns_link *l, const void *frame, size_t len)
{
	struct tap_vnet *t = l->priv;
	const uint8_t *f = frame;
	struct virtio_net_hdr h = {0};
	size_t hl;
	int rc;

	if (!coalescible(f, len, &hl)) {
		rc = tv_flush_agg(t);
		return rc < 0 ? rc : tv_write(t, &h, f, len);
	}
	if (continues(t, f, len, hl)) {
		memcpy(t->agg + t->agg_len, f + hl, len - hl);
		t->agg_len += len - hl;
		t->agg[ETH_LEN + IP_LEN + 13] |= f[ETH_LEN + IP_LEN + 13]; /* PSH */
	} else {
		rc = tv_flush_agg(t);
		if (rc < 0)
			return rc;
		memcpy(t->agg, f, len);
		t->agg_len = len;
		t->hl = hl;
		t->mss = len - hl;
	}
	t->last = len - hl;
	t->nseg++;
	t->next_seq = get32(f + ETH_LEN + IP_LEN + 4) + (uint32_t)(len - hl);
	return 0;
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
	free(t->agg);
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
	if (t)
		t->agg = malloc(TV_FRAME_MAX);
	if (!t || !t->agg) {
		free(t);
		goto fail;
	}
	t->fd = fd;
	l = ns_link_new(&tv_ops, t, mtu, mac, ifr.ifr_name);
	if (!l) {
		free(t->agg);
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
