/* vnet.h — virtio-net frames on top of the kit's virtio driver (virtio.h):
 * receive queue 0 filled with fixed buffers, transmit queue 1 with one
 * header+frame buffer per frame (from a ring of slots). Polled, no
 * control queue. Runs unmodified under QEMU's virtio-net-pci.
 */
#ifndef GUEST_VNET_H
#define GUEST_VNET_H

#include <linux/virtio_net.h>

#include "virtio.h"

#define VNET_QSIZE 128
#define VNET_BUF 2048 /* header + a 1514-byte frame, with room to spare */
#define VNET_HDR_LEN sizeof(struct virtio_net_hdr_mrg_rxbuf)

struct vnet {
	struct vdev dev;
	struct vq rx, tx;
	uint8_t mac[6];
	uint64_t wanted;
	uint64_t rx_frames, tx_frames, tx_full;
};

/* What the kit asks for: MAC, STATUS, MRG_RXBUF (each frame still fits
 * one buffer: num_buffers is 1). */
#define VNET_FEATURES                                                                              \
	(1ull << VIRTIO_NET_F_MAC | 1ull << VIRTIO_NET_F_STATUS | 1ull << VIRTIO_NET_F_MRG_RXBUF)

/* Find the first virtio-net device, negotiate, set up both queues, fill
 * the receive queue, DRIVER_OK; read the MAC. */
bool vnet_open(struct vnet *n, uint64_t wanted);
/* Reset and set up again (after DEVICE_NEEDS_RESET). */
bool vnet_reinit(struct vnet *n);
/* Link status from the config (VIRTIO_NET_S_LINK_UP), or up without STATUS. */
bool vnet_link_up(struct vnet *n);
/* Queue one frame (copied) and notify: false when the ring is full. */
bool vnet_send(struct vnet *n, const void *frame, uint32_t len);
/* Queue without notifying (batches); vnet_kick publishes. */
bool vnet_queue(struct vnet *n, const void *frame, uint32_t len);
void vnet_kick(struct vnet *n);
/* The next received frame copied to buf (cap bytes): its length, or 0 when
 * none has come. The buffer goes back to the device. */
uint32_t vnet_recv(struct vnet *n, void *buf, uint32_t cap);
/* Poll until a frame comes: its length, or 0 after timeout_ms. */
uint32_t vnet_recv_wait(struct vnet *n, void *buf, uint32_t cap, unsigned timeout_ms);

#endif /* GUEST_VNET_H */
