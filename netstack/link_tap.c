/* link_tap.c — a Linux TAP device as a link: plain, or with virtio-net
 * headers and offloads.
 *
 * The offloading TAP (IFF_VNET_HDR, checksum, TSO4 and TSO6) is for a peer that
 * is the local kernel. Receive: the kernel may hand over TCP segments up
 * to 64 KiB with checksums left partial, so one read moves what would be
 * ~45 frames at MTU 1500; they come from the local kernel, so their
 * checksums are trusted (NS_IF_NO_CSUM_RX). Transmit: consecutive
 * full-sized segments of one TCP flow are coalesced into one GSO frame
 * (like GRO), written when the flow changes, a segment does not follow
 * on, or at ns_link_tap_vnet_flush() / the link's poll; the kernel takes
 * the 64 KiB frame in one go. Everything else goes out as it came, with
 * an all-zero header. */
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

struct tap_gso;

struct tap {
	struct ns_link link;
	int fd;
	struct tap_gso *gso; /* virtio-net header TAPs only */
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
	memcpy(t->link.mac, (uint8_t[6]){ 0x02, 0x4e, 0x53, 0, 0, 1 }, 6);
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

enum { TV_FRAME_MAX = ETH_HLEN + 65535 };

/* The TCP segment being grown into a GSO frame. */
struct tap_gso {
	uint8_t *agg;	    /* TV_FRAME_MAX bytes */
	size_t agg_len, hl; /* bytes held; Ethernet + IP + TCP header length */
	size_t il;	    /* IP header length: 20 (IPv4) or 40 (IPv6) */
	size_t mss, last;   /* first and latest segment payload */
	unsigned nseg;
	uint32_t next_seq;
};

static int tv_write(struct tap *t, const struct virtio_net_hdr *h, const void *f, size_t len)
{
	struct iovec iov[2] = { { (void *)h, sizeof(*h) }, { (void *)f, len } };

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

/* A plain TCP data segment with ACK (and maybe PSH) only, over IPv4
 * without options or fragments or over IPv6 without extension headers:
 * the kind that may be coalesced. Its header lengths in *hl (Ethernet +
 * IP + TCP) and *il (IP). */
static bool coalescible(const uint8_t *f, size_t len, size_t *hl, size_t *il)
{
	const uint8_t *ip = f + ETH_HLEN, *tcp;
	size_t thl;

	if (len < ETH_HLEN + 40)
		return false;
	if (get16(f + 12) == ETHERTYPE_IP) {
		if (ip[0] != 0x45 || ip[9] != NS_PROTO_TCP || (get16(ip + 6) & 0x3fff) ||
		    get16(ip + 2) != len - ETH_HLEN)
			return false;
		*il = 20;
	} else if (get16(f + 12) == ETHERTYPE_IPV6) {
		if ((ip[0] >> 4) != 6 || ip[6] != NS_PROTO_TCP || get16(ip + 4) != len - ETH_HLEN - 40)
			return false;
		*il = 40;
	} else {
		return false;
	}
	tcp = ip + *il;
	thl = (size_t)(tcp[12] >> 4) * 4;
	if (thl < 20 || ETH_HLEN + *il + thl >= len || (tcp[13] & ~TH_PSH) != TH_ACK)
		return false;
	*hl = ETH_HLEN + *il + thl;
	return true;
}

/* The IP fields that must match between segments of one flow. */
static bool same_ip(const uint8_t *ip, const uint8_t *fip, size_t il)
{
	if (il == 40) /* version, class, flow label; next header, hop limit; addresses */
		return !memcmp(ip, fip, 4) && !memcmp(ip + 6, fip + 6, 34);
	return ip[1] == fip[1] &&		/* TOS */
	       !memcmp(ip + 8, fip + 8, 2) &&	/* TTL, proto */
	       !memcmp(ip + 12, fip + 12, 8); /* addresses */
}

/* Does segment f continue the one being grown? */
static bool continues(const struct tap_gso *g, const uint8_t *f, size_t len, size_t hl,
		      size_t il)
{
	const uint8_t *a = g->agg, *ip = ETH_HLEN + a, *fip = f + ETH_HLEN;
	const uint8_t *tcp = ip + il, *ftcp = fip + il;
	size_t payload = len - hl;

	return g->nseg && hl == g->hl && il == g->il && g->last == g->mss &&
	       payload <= g->mss && g->agg_len + payload <= TV_FRAME_MAX &&
	       get32(ftcp + 4) == g->next_seq && !memcmp(a, f, ETH_HLEN) && /* MACs, type */
	       same_ip(ip, fip, il) && !memcmp(tcp, ftcp, 4) &&	     /* ports */
	       !memcmp(tcp + 8, ftcp + 8, 8) &&			     /* ack..win */
	       !memcmp(tcp + 20, ftcp + 20, hl - ETH_HLEN - il - 20); /* options */
}

/* Write what is being grown: as it is for one segment, else as a GSO
 * frame with a partial checksum (the pseudo header over the whole length,
 * which the kernel adjusts per segment if it ever splits it). */
static int tv_flush_agg(struct tap *t)
{
	struct tap_gso *g = t->gso;
	struct virtio_net_hdr h = { 0 };
	uint8_t *ip = g->agg + ETH_HLEN, *tcp = ip + g->il, pseudo[40] = { 0 };
	size_t l4len = g->agg_len - ETH_HLEN - g->il, plen;
	uint16_t v;

	if (!g->nseg)
		return 0;
	if (g->nseg > 1) {
		if (g->il == 40) { /* payload length; pseudo header RFC 8200 8.1 */
			put16(ip + 4, (uint16_t)l4len);
			memcpy(pseudo, ip + 8, 32);
			put16(pseudo + 34, (uint16_t)l4len);
			pseudo[39] = NS_PROTO_TCP;
			plen = 40;
			h.gso_type = VIRTIO_NET_HDR_GSO_TCPV6;
		} else {
			put16(ip + 2, (uint16_t)(g->agg_len - ETH_HLEN));
			memset(ip + 10, 0, 2);
			v = (uint16_t)~ns_csum_fold(ns_csum_add(0, ip, 20));
			memcpy(ip + 10, &v, 2);
			memcpy(pseudo, ip + 12, 8);
			pseudo[9] = NS_PROTO_TCP;
			put16(pseudo + 10, (uint16_t)l4len);
			plen = 12;
			h.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
		}
		v = ns_csum_fold(ns_csum_add(0, pseudo, plen));
		memcpy(tcp + 16, &v, 2);
		h.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		h.hdr_len = (uint16_t)g->hl;
		h.gso_size = (uint16_t)g->mss;
		h.csum_start = (uint16_t)(ETH_HLEN + g->il);
		h.csum_offset = 16;
	}
	g->nseg = 0;
	return tv_write(t, &h, g->agg, g->agg_len);
}

void ns_link_tap_vnet_flush(struct ns_link *l)
{
	tv_flush_agg(l->priv);
}

static int tv_transmit(struct ns_link *l, const void *frame, size_t len)
{
	struct tap *t = l->priv;
	struct tap_gso *g = t->gso;
	const uint8_t *f = frame;
	struct virtio_net_hdr h = { 0 };
	size_t hl, il;
	int rc;

	if (!coalescible(f, len, &hl, &il)) {
		rc = tv_flush_agg(t);
		return rc < 0 ? rc : tv_write(t, &h, f, len);
	}
	if (continues(g, f, len, hl, il)) {
		memcpy(g->agg + g->agg_len, f + hl, len - hl);
		g->agg_len += len - hl;
		g->agg[ETH_HLEN + il + 13] |= f[ETH_HLEN + il + 13]; /* PSH */
	} else {
		rc = tv_flush_agg(t);
		if (rc < 0)
			return rc;
		memcpy(g->agg, f, len);
		g->agg_len = len;
		g->hl = hl;
		g->il = il;
		g->mss = len - hl;
	}
	g->last = len - hl;
	g->nseg++;
	g->next_seq = get32(f + ETH_HLEN + il + 4) + (uint32_t)(len - hl);
	return 0;
}

static ssize_t tv_receive(struct ns_link *l, void *buf, size_t cap)
{
	struct tap *t = l->priv;
	struct virtio_net_hdr h;
	struct iovec iov[2] = { { &h, sizeof(h) }, { buf, cap } };
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

	tv_flush_agg(t);
	free(t->gso->agg);
	free(t->gso);
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
	struct tap *t = NULL;
	struct tap_gso *g;
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
	g = calloc(1, sizeof(*g));
	if (g)
		g->agg = malloc(TV_FRAME_MAX);
	if (g && g->agg)
		t = tap_new(fd, mtu, ifname, &tap_vnet_ops);
	if (!t) {
		if (g)
			free(g->agg);
		free(g);
		close(fd);
		*err = -ENOMEM;
		return NULL;
	}
	t->gso = g;
	return &t->link;
}
