/* vnet.c — virtio-net frames for kit payloads (see vnet.h). */
#include "vnet.h"

static uint8_t rx_buf[VNET_QSIZE][VNET_BUF] __attribute__((aligned(64)));
static uint8_t tx_buf[VNET_QSIZE][VNET_BUF] __attribute__((aligned(64)));
static unsigned tx_next;
static uint64_t tsc_per_ms;

static bool post_rx(struct vnet *n, unsigned i)
{
	struct vq_buf b = {rx_buf[i], VNET_BUF, true};

	return vq_add(&n->rx, &b, 1, rx_buf[i]);
}

static bool vnet_setup(struct vnet *n)
{
	struct vdev *d = &n->dev;

	if (!vdev_negotiate(d, n->wanted) || !vq_init(&n->rx, d, 0, VNET_QSIZE) ||
	    !vq_init(&n->tx, d, 1, VNET_QSIZE))
		return false;
	for (unsigned i = 0; i < 6; i++)
		n->mac[i] = vdev_has(d, VIRTIO_NET_F_MAC)
				    ? (uint8_t)vdev_cfg_read(
					      d, offsetof(struct virtio_net_config, mac) + i, 1)
				    : (uint8_t)(i == 0 ? 0x02 : i);
	vdev_ready(d);
	for (unsigned i = 0; i < n->rx.size; i++)
		if (!post_rx(n, i))
			return false;
	vq_kick(&n->rx);
	tx_next = 0;
	return true;
}

bool vnet_open(struct vnet *n, uint64_t wanted)
{
	memset(n, 0, sizeof(*n));
	n->wanted = wanted;
	if (!tsc_per_ms)
		tsc_per_ms = kit_tsc_hz() / 1000;
	return vdev_find(&n->dev, VIRTIO_ID_NET, 0) && vnet_setup(n);
}

bool vnet_reinit(struct vnet *n)
{
	return vnet_setup(n);
}

bool vnet_link_up(struct vnet *n)
{
	if (!vdev_has(&n->dev, VIRTIO_NET_F_STATUS))
		return true;
	return vdev_cfg_read(&n->dev, offsetof(struct virtio_net_config, status), 2) &
	       VIRTIO_NET_S_LINK_UP;
}

/* Take back what the device sent. */
static void reclaim_tx(struct vnet *n)
{
	uint32_t len;

	while (vq_get_used(&n->tx, &len))
		;
}

bool vnet_queue(struct vnet *n, const void *frame, uint32_t len)
{
	uint8_t *slot;
	struct vq_buf b;

	if (len + VNET_HDR_LEN > VNET_BUF)
		return false;
	reclaim_tx(n);
	if (vq_in_flight(&n->tx) >= n->tx.size) {
		n->tx_full++;
		return false;
	}
	slot = tx_buf[tx_next++ % VNET_QSIZE];
	memset(slot, 0, VNET_HDR_LEN);
	memcpy(slot + VNET_HDR_LEN, frame, len);
	b = (struct vq_buf){slot, (uint32_t)(VNET_HDR_LEN + len), false};
	if (!vq_add(&n->tx, &b, 1, slot))
		return false;
	n->tx_frames++;
	return true;
}

void vnet_kick(struct vnet *n)
{
	vq_kick(&n->tx);
}

bool vnet_send(struct vnet *n, const void *frame, uint32_t len)
{
	if (!vnet_queue(n, frame, len))
		return false;
	vnet_kick(n);
	return true;
}

uint32_t vnet_recv(struct vnet *n, void *buf, uint32_t cap)
{
	uint32_t len = 0, flen;
	uint8_t *b = vq_get_used(&n->rx, &len);

	if (!b)
		return 0;
	flen = len > VNET_HDR_LEN ? len - (uint32_t)VNET_HDR_LEN : 0;
	if (flen > cap)
		flen = cap;
	memcpy(buf, b + VNET_HDR_LEN, flen);
	n->rx_frames++;
	vq_add(&n->rx, &(struct vq_buf){b, VNET_BUF, true}, 1, b);
	vq_kick(&n->rx);
	return flen;
}

uint32_t vnet_recv_wait(struct vnet *n, void *buf, uint32_t cap, unsigned timeout_ms)
{
	uint64_t t0 = rdtsc();
	uint32_t len;

	while (!(len = vnet_recv(n, buf, cap))) {
		if (rdtsc() - t0 > timeout_ms * tsc_per_ms)
			return 0;
		cpu_relax();
	}
	return len;
}
