/* net.c — virtio-net (virtio spec 5.1) on a netdev backend.
 *
 * Queues: 0 receive, 1 transmit, 2 control; with MQ (mq=on on a
 * multiqueue netdev) a receive/transmit pair per backend queue, then the
 * control queue. The transport's I/O thread runs everything: a transmit
 * doorbell drains the TX ring into the backend queue of its pair (frames
 * straight from guest RAM: one iovec per descriptor), then lets it relay
 * (flush); the backend's fd and timer run its poll, whose frames fill
 * receive buffers of the pair of the queue they came from (net_rx.c).
 * One interrupt per queue per pass.
 *
 * VERSION_1 is always negotiated (modern transport only), so every
 * frame carries the 12-byte header with num_buffers. Every header from
 * the guest is checked (virtio_net_check_hdr) before a backend sees it;
 * bad ones are dropped and counted, a malformed ring needs a reset. */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/virtio/net_internal.h"

/* ------------------------------------------------------- header checks */

static int bad(const char **why, const char *msg)
{
	*why = msg;
	return -EINVAL;
}

int virtio_net_check_hdr(const struct virtio_net_hdr *h, size_t len, uint64_t features,
			 unsigned mtu, const char **why)
{
	uint8_t gso = h->gso_type & (uint8_t)~VIRTIO_NET_HDR_GSO_ECN;
	uint16_t csum_start = le16toh(h->csum_start), csum_off = le16toh(h->csum_offset);

	if (len < ETH_HLEN)
		return bad(why, "frame shorter than an Ethernet header");
	if (h->flags & ~(VIRTIO_NET_HDR_F_NEEDS_CSUM | VIRTIO_NET_HDR_F_DATA_VALID))
		return bad(why, "unknown header flags");
	if (h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
		if (!(features >> VIRTIO_NET_F_CSUM & 1))
			return bad(why, "partial checksum without VIRTIO_NET_F_CSUM");
		if ((size_t)csum_start + csum_off + 2 > len)
			return bad(why, "checksum offsets past the end of the frame");
	}
	if (gso == VIRTIO_NET_HDR_GSO_NONE) {
		if (h->gso_type & VIRTIO_NET_HDR_GSO_ECN)
			return bad(why, "ECN bit without a GSO type");
		/* a VLAN tag may come on top of the MTU */
		if (len > (size_t)mtu + ETH_HLEN + 4)
			return bad(why, "frame over the MTU without GSO");
		return 0;
	}
	if (gso == VIRTIO_NET_HDR_GSO_TCPV4   ? !(features >> VIRTIO_NET_F_HOST_TSO4 & 1)
	    : gso == VIRTIO_NET_HDR_GSO_TCPV6 ? !(features >> VIRTIO_NET_F_HOST_TSO6 & 1)
					      : true)
		return bad(why, "GSO type not negotiated");
	if ((h->gso_type & VIRTIO_NET_HDR_GSO_ECN) && !(features >> VIRTIO_NET_F_HOST_ECN & 1))
		return bad(why, "GSO with ECN without VIRTIO_NET_F_HOST_ECN");
	if (!(h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM))
		return bad(why, "GSO frame without a partial checksum");
	if (le16toh(h->gso_size) == 0)
		return bad(why, "GSO frame with gso_size 0");
	if (len > NET_MAX_FRAME)
		return bad(why, "GSO frame over 64 KiB");
	return 0;
}

/* ------------------------------------------------------------ transmit */

/* iov over bytes [off, off + len) of the chain's readable part. */
static int frame_iov(struct virtio_net *n, const struct virtq_chain *c, uint64_t off)
{
	int k = 0;

	for (unsigned i = 0; i < c->n_out; i++) {
		const struct virtq_buf *b = &c->buf[i];

		if (off >= b->len) {
			off -= b->len;
			continue;
		}
		n->iov[k++] = (struct iovec){b->ptr + off, (size_t)(b->len - off)};
		off = 0;
	}
	return k;
}

/* One guest frame to the backend, or dropped and counted. */
static void tx_one(struct virtio_net *n, unsigned p, const struct virtq_chain *c)
{
	struct virtio_net_hdr h;
	const char *why;
	uint64_t len;

	if (c->out_len < NET_HDR_LEN) {
		n->st.tx_bad_chain++;
		return;
	}
	len = c->out_len - NET_HDR_LEN;
	virtq_chain_read(c, 0, &h, sizeof(h));
	if (virtio_net_check_hdr(&h, len, n->features, n->mtu, &why) < 0) {
		n->st.tx_bad_hdr++;
		if (!n->logged_bad_hdr)
			fprintf(stderr, "vmm: %s: dropping a bad frame from the guest: %s\n", n->id,
				why);
		n->logged_bad_hdr = true;
		return;
	}
	if (!n->link_up) {
		n->st.tx_dropped++;
		return;
	}
	if (n->nd->ops->send(n->nd, p, &h, n->iov, frame_iov(n, c, NET_HDR_LEN), (size_t)len) < 0) {
		n->st.tx_dropped++;
		return;
	}
	n->st.tx_frames++;
	n->st.pair_tx_frames[p]++;
	n->st.tx_bytes += len;
}

static void serve_tx(struct virtio_net *n, unsigned p)
{
	struct virtq *q;
	int r;

	while ((q = virtio_pci_queue(n->vp, NET_TXQ(p)))) {
		bool pushed = false;

		virtq_set_notify(q, false);
		while ((r = virtq_pop(q, n->chain)) == 1) {
			tx_one(n, p, n->chain);
			virtq_push(q, n->chain->head, 0);
			pushed = true;
		}
		if (r < 0) {
			virtio_pci_fail(n->vp, NET_TXQ(p), q->broken);
			return;
		}
		if (pushed)
			virtio_pci_notify(n->vp, NET_TXQ(p));
		virtq_set_notify(q, true);
		if (!virtq_has_avail(q))
			break;
	}
	if (n->nd->ops->flush)
		n->nd->ops->flush(n->nd);
}

/* ------------------------------------------------------- control queue */

static uint8_t ctrl_rx_mode(struct virtio_net *n, uint8_t cmd, const struct virtq_chain *c)
{
	uint8_t on;

	if (c->out_len != 3)
		return VIRTIO_NET_ERR;
	virtq_chain_read(c, 2, &on, 1);
	switch (cmd) {
	case VIRTIO_NET_CTRL_RX_PROMISC:
		n->rxf.promisc = on;
		break;
	case VIRTIO_NET_CTRL_RX_ALLMULTI:
		n->rxf.allmulti = on;
		break;
	case VIRTIO_NET_CTRL_RX_ALLUNI:
		n->rxf.alluni = on;
		break;
	case VIRTIO_NET_CTRL_RX_NOMULTI:
		n->rxf.nomulti = on;
		break;
	case VIRTIO_NET_CTRL_RX_NOUNI:
		n->rxf.nouni = on;
		break;
	case VIRTIO_NET_CTRL_RX_NOBCAST:
		n->rxf.nobcast = on;
		break;
	default:
		return VIRTIO_NET_ERR;
	}
	return VIRTIO_NET_OK;
}

/* One of the MAC_TABLE_SET tables at *off: entries, then 6 bytes each.
 * Too many for our table: that kind is accepted wholesale (overflow). */
static int read_mac_table(const struct virtq_chain *c, uint64_t *off, uint8_t (*mac)[6],
			  unsigned *n, bool *overflow)
{
	uint32_t entries;

	if (virtq_chain_read(c, *off, &entries, 4) != 4)
		return -1;
	entries = le32toh(entries);
	*off += 4;
	if (entries > (c->out_len - *off) / 6)
		return -1;
	*overflow = entries > NET_MAC_TABLE;
	*n = *overflow ? 0 : entries;
	for (unsigned i = 0; i < *n; i++)
		virtq_chain_read(c, *off + 6ull * i, mac[i], 6);
	*off += 6ull * entries;
	return 0;
}

static uint8_t ctrl_mac(struct virtio_net *n, uint8_t cmd, const struct virtq_chain *c)
{
	struct net_rx_filter f = n->rxf;
	uint64_t off = 2;

	if (cmd == VIRTIO_NET_CTRL_MAC_ADDR_SET) {
		if (c->out_len != 2 + 6)
			return VIRTIO_NET_ERR;
		virtq_chain_read(c, 2, n->cfg.mac, 6);
		return VIRTIO_NET_OK;
	}
	if (cmd != VIRTIO_NET_CTRL_MAC_TABLE_SET)
		return VIRTIO_NET_ERR;
	if (read_mac_table(c, &off, f.uni, &f.n_uni, &f.uni_overflow) < 0 ||
	    read_mac_table(c, &off, f.multi, &f.n_multi, &f.multi_overflow) < 0 ||
	    off != c->out_len)
		return VIRTIO_NET_ERR;
	n->rxf = f;
	return VIRTIO_NET_OK;
}

/* VQ_PAIRS_SET: how many pairs the driver uses (1 to max_pairs; only
 * with MQ negotiated). The backend's queues past it feed pairs in use. */
static uint8_t ctrl_mq(struct virtio_net *n, uint8_t cmd, const struct virtq_chain *c)
{
	uint16_t pairs;

	if (!(n->features >> VIRTIO_NET_F_MQ & 1) || cmd != VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET ||
	    c->out_len != 2 + 2)
		return VIRTIO_NET_ERR;
	virtq_chain_read(c, 2, &pairs, 2);
	pairs = le16toh(pairs);
	if (pairs < VIRTIO_NET_CTRL_MQ_VQ_PAIRS_MIN || pairs > n->max_pairs)
		return VIRTIO_NET_ERR;
	n->pairs = pairs;
	return VIRTIO_NET_OK;
}

static uint8_t ctrl_command(struct virtio_net *n, const struct virtq_chain *c)
{
	uint8_t cls_cmd[2];

	virtq_chain_read(c, 0, cls_cmd, 2);
	switch (cls_cmd[0]) {
	case VIRTIO_NET_CTRL_RX:
		return ctrl_rx_mode(n, cls_cmd[1], c);
	case VIRTIO_NET_CTRL_MAC:
		return ctrl_mac(n, cls_cmd[1], c);
	case VIRTIO_NET_CTRL_MQ:
		return ctrl_mq(n, cls_cmd[1], c);
	case VIRTIO_NET_CTRL_ANNOUNCE:
		return cls_cmd[1] == VIRTIO_NET_CTRL_ANNOUNCE_ACK ? VIRTIO_NET_OK : VIRTIO_NET_ERR;
	default:
		return VIRTIO_NET_ERR;
	}
}

/* One command: 0, or -1 when it cannot even be answered. */
static int ctrl_one(struct virtio_net *n, struct virtq *q)
{
	uint8_t ack;

	/* without a command or an ack byte there is no way to answer */
	if (n->chain->out_len < 2 || n->chain->in_len < 1) {
		n->st.ctrl_bad++;
		virtio_pci_fail(n->vp, NET_CTRLQ(n),
				"control command without class, command or "
				"ack byte");
		return -1;
	}
	ack = ctrl_command(n, n->chain);
	if (ack != VIRTIO_NET_OK)
		n->st.ctrl_bad++;
	virtq_chain_write(n->chain, n->chain->in_len - 1, &ack, 1);
	virtq_push(q, n->chain->head, 1);
	return 0;
}

static void serve_ctrl(struct virtio_net *n)
{
	struct virtq *q;
	int r;

	while ((q = virtio_pci_queue(n->vp, NET_CTRLQ(n)))) {
		bool pushed = false;

		virtq_set_notify(q, false);
		while ((r = virtq_pop(q, n->chain)) == 1) {
			if (ctrl_one(n, q) < 0)
				return;
			pushed = true;
		}
		if (r < 0) {
			virtio_pci_fail(n->vp, NET_CTRLQ(n), q->broken);
			return;
		}
		if (pushed)
			virtio_pci_notify(n->vp, NET_CTRLQ(n));
		/* with EVENT_IDX this moves avail_event: the next command rings */
		virtq_set_notify(q, true);
		if (!virtq_has_avail(q))
			break;
	}
}

/* ----------------------------------------------------- transport hooks */

/* The driver's features take effect lazily: the transport has no hook
 * for FEATURES_OK, and nothing happens on the queues before DRIVER_OK. */
static void sync_features(struct virtio_net *n)
{
	uint64_t f;
	unsigned off = 0;

	/* a usable queue means DRIVER_OK (virtio_pci_status would take the
	 * transport lock we hold) */
	if (n->features_synced ||
	    (!virtio_pci_queue(n->vp, NET_RXQ(0)) && !virtio_pci_queue(n->vp, NET_TXQ(0))))
		return;
	f = n->features = virtio_pci_features(n->vp);
	n->features_synced = true;
	if (f >> VIRTIO_NET_F_GUEST_CSUM & 1)
		off |= NETDEV_OFF_CSUM;
	if (f >> VIRTIO_NET_F_GUEST_TSO4 & 1)
		off |= NETDEV_OFF_TSO4;
	if (f >> VIRTIO_NET_F_GUEST_TSO6 & 1)
		off |= NETDEV_OFF_TSO6;
	if (f >> VIRTIO_NET_F_GUEST_ECN & 1)
		off |= NETDEV_OFF_ECN;
	if (n->nd->ops->set_rx_offloads)
		n->nd->ops->set_rx_offloads(n->nd, off);
}

static void net_serve(void *opaque, unsigned qi)
{
	struct virtio_net *n = opaque;

	if (!n->vp) /* still in virtio_net_new */
		return;
	sync_features(n);
	if (qi == NET_CTRLQ(n))
		serve_ctrl(n);
	else if (qi & 1)
		serve_tx(n, qi / 2);
	net_rx_flush(n); /* new receive buffers, or frames the backend made */
}

static int net_io_fd(void *opaque)
{
	struct virtio_net *n = opaque;

	return n->nd->ops->fd ? n->nd->ops->fd(n->nd) : -1;
}

static int net_io_timeout(void *opaque)
{
	struct virtio_net *n = opaque;

	return n->nd->ops->timeout_ms ? n->nd->ops->timeout_ms(n->nd) : -1;
}

static void net_io_event(void *opaque)
{
	struct virtio_net *n = opaque;

	if (!n->vp) /* the I/O thread starts inside virtio_pci_new */
		return;
	sync_features(n);
	if (n->nd->ops->poll)
		n->nd->ops->poll(n->nd);
	net_rx_flush(n);
}

/* Transport lock held. */
static void net_reset(void *opaque)
{
	struct virtio_net *n = opaque;

	memcpy(n->cfg.mac, n->mac, 6);
	memset(&n->rxf, 0, sizeof(n->rxf));
	n->rxf.promisc = true; /* until the driver sets a mode, as QEMU */
	n->features = 0;
	n->features_synced = false;
	n->pairs = 1; /* until VQ_PAIRS_SET (spec 5.1.6.5.5) */
	net_rx_reset(n);
}

static uint64_t net_features(const struct netdev *nd, unsigned max_pairs)
{
	uint64_t f = 1ull << VIRTIO_NET_F_MAC | 1ull << VIRTIO_NET_F_STATUS |
		     1ull << VIRTIO_NET_F_MTU | 1ull << VIRTIO_NET_F_MRG_RXBUF |
		     1ull << VIRTIO_NET_F_CTRL_VQ | 1ull << VIRTIO_NET_F_CTRL_RX |
		     1ull << VIRTIO_NET_F_CTRL_MAC_ADDR | 1ull << VIRTIO_NET_F_GUEST_CSUM |
		     1ull << VIRTIO_NET_F_GUEST_TSO4 | 1ull << VIRTIO_NET_F_GUEST_TSO6 |
		     1ull << VIRTIO_NET_F_GUEST_ECN;

	if (nd->offloads & NETDEV_OFF_CSUM)
		f |= 1ull << VIRTIO_NET_F_CSUM;
	if ((nd->offloads & NETDEV_OFF_CSUM) && (nd->offloads & NETDEV_OFF_TSO4))
		f |= 1ull << VIRTIO_NET_F_HOST_TSO4;
	if ((nd->offloads & NETDEV_OFF_CSUM) && (nd->offloads & NETDEV_OFF_TSO6))
		f |= 1ull << VIRTIO_NET_F_HOST_TSO6;
	if ((f & (3ull << VIRTIO_NET_F_HOST_TSO4)) && (nd->offloads & NETDEV_OFF_ECN))
		f |= 1ull << VIRTIO_NET_F_HOST_ECN;
	if (max_pairs > 1)
		f |= 1ull << VIRTIO_NET_F_MQ;
	return f;
}

static void fill_config(struct virtio_net *n)
{
	memcpy(n->cfg.mac, n->mac, 6);
	n->cfg.status = htole16(n->link_up ? VIRTIO_NET_S_LINK_UP : 0);
	n->cfg.max_virtqueue_pairs = htole16((uint16_t)n->max_pairs);
	n->cfg.mtu = htole16((uint16_t)n->mtu);
	n->cfg.speed = htole32(UINT32_MAX); /* unknown */
	n->cfg.duplex = 0xff;
}

struct virtio_net *virtio_net_new(struct dev_host *host, struct pci_bus *bus,
				  const struct virtio_net_opts *o, char *err, size_t errlen)
{
	struct virtio_net *n = calloc(1, sizeof(*n));
	struct virtio_pci *vp;
	unsigned bq = o->netdev->queues ? o->netdev->queues : 1;

	if (o->mq && bq > NET_MAX_PAIRS) {
		snprintf(err, errlen, "virtio-net: %u queues (mq=on takes 1 to %d)", bq,
			 NET_MAX_PAIRS);
		free(n);
		return NULL;
	}
	if (!o->mq && bq > 1) {
		snprintf(err, errlen, "virtio-net: netdev %s has %u queues: mq=on uses them",
			 o->netdev->id, bq);
		free(n);
		return NULL;
	}
	if (n)
		n->max_pairs = bq;
	if (!n || !(n->chain = malloc(sizeof(*n->chain))) || net_rx_init(n) < 0) {
		if (n)
			free(n->chain);
		free(n);
		snprintf(err, errlen, "virtio-net: out of memory");
		return NULL;
	}
	n->nd = o->netdev;
	memcpy(n->mac, o->mac, 6);
	n->mtu = o->mtu ? o->mtu : 1500;
	n->link_up = true;
	snprintf(n->id, sizeof(n->id), "%s", o->id ? o->id : "virtio-net-pci.0");
	fill_config(n);
	net_reset(n);
	n->nd->rx = net_rx_frame;
	n->nd->can_rx = net_can_rx;
	n->nd->rx_opaque = n;
	n->ops = (struct virtio_dev_ops){
		.device_id = VIRTIO_ID_NET,
		.class_code = 0x020000, /* network, Ethernet */
		.features = net_features(n->nd, n->max_pairs),
		.num_queues = 2 * n->max_pairs + 1,
		.queue_size = NET_QUEUE_SIZE,
		.config_len = sizeof(n->cfg),
		.reset = net_reset,
		.save = vnet_state_save,
		.load = vnet_state_load,
		.serve = net_serve,
		.io_fd = net_io_fd,
		.io_timeout_ms = net_io_timeout,
		.io_event = net_io_event,
		.io_coalesce_us = n->nd->coalesce_us,
	};
	vp = virtio_pci_new(host, bus, o->devfn, "virtio-net-pci", &n->ops, n, &n->cfg, err,
			    errlen);
	if (vp) { /* its I/O thread already runs: hand it vp under its lock */
		virtio_pci_lock(vp);
		n->vp = vp;
		virtio_pci_unlock(vp);
		virtio_pci_wake(vp); /* what the backend did meanwhile */
	}
	if (!n->vp) {
		n->nd->rx = NULL;
		net_rx_fini(n);
		free(n->chain);
		free(n);
		return NULL;
	}
	return n;
}

void virtio_net_free(struct virtio_net *n)
{
	if (!n)
		return;
	virtio_pci_free(n->vp);
	n->nd->rx = NULL;
	n->nd->can_rx = NULL;
	net_rx_fini(n);
	free(n->chain);
	free(n);
}

struct virtio_pci *virtio_net_transport(struct virtio_net *n)
{
	return n->vp;
}

struct netdev *virtio_net_netdev(struct virtio_net *n)
{
	return n->nd;
}

const char *virtio_net_id(const struct virtio_net *n)
{
	return n->id;
}

void virtio_net_set_link(struct virtio_net *n, bool up)
{
	virtio_pci_lock(n->vp);
	n->link_up = up;
	n->cfg.status = htole16(up ? VIRTIO_NET_S_LINK_UP : 0);
	virtio_pci_unlock(n->vp);
	virtio_pci_config_changed(n->vp);
}

void virtio_net_get_info(struct virtio_net *n, struct virtio_net_info *info)
{
	virtio_pci_lock(n->vp);
	memcpy(info->mac, n->cfg.mac, 6);
	info->link_up = n->link_up;
	info->max_pairs = n->max_pairs;
	info->pairs = n->pairs;
	info->stats = n->st;
	virtio_pci_unlock(n->vp);
}
