/* virtio.h — the kit's ring-3 virtio 1.x PCI driver: find a modern virtio
 * device on PCI bus 0 (config space through ports 0xcf8/0xcfc), walk its
 * vendor capabilities to the common/notify/ISR/device configuration in its
 * BARs (assigning BAR addresses below 4 GiB where the firmware left none,
 * so the kit's identity map covers them), negotiate features and set up
 * split virtqueues in guest memory. Completions are polled from the used
 * ring: no interrupts (the kit runs with interrupts off in ring 3), which
 * keeps runs deterministic. Layouts come from linux-libc-dev's headers.
 *
 * It runs unmodified under vmm and under QEMU's virtio-*-pci devices.
 */
#ifndef GUEST_VIRTIO_H
#define GUEST_VIRTIO_H

#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>

#include "kit.h"

#define VQ_MAX_SIZE 256	   /* descriptors per queue the kit allocates */
#define VQ_MAX_INDIRECT 16 /* entries of one indirect table */
#define VDEV_MAX_QUEUES 2

struct vdev {
	uint8_t devfn;
	uint16_t device_id;
	volatile struct virtio_pci_common_cfg *common;
	volatile uint8_t *notify_base;
	uint32_t notify_mult;
	volatile uint8_t *isr;
	volatile uint8_t *device_cfg;
	uint64_t features; /* negotiated */
};

/* One buffer of a chain: device_writes marks the device-writable ones
 * (they come after every device-readable one). */
struct vq_buf {
	const void *addr;
	uint32_t len;
	bool device_writes;
};

struct vq {
	struct vdev *dev;
	uint16_t index, size;
	struct vring_desc *desc;
	struct vring_avail *avail;
	volatile struct vring_used *used;
	volatile uint16_t *notify;
	volatile uint16_t *avail_event;
	bool indirect, event_idx;
	uint16_t free_head, num_free;
	uint16_t avail_idx, kicked_idx, last_used;
	void *token[VQ_MAX_SIZE];
	uint16_t chain_len[VQ_MAX_SIZE];
	uint64_t kicks; /* notifications actually written */
};

/* PCI configuration space of bus 0 (devfn = device << 3 | function). */
uint32_t pci_read32(uint8_t devfn, uint8_t off);
void pci_write32(uint8_t devfn, uint8_t off, uint32_t v);
uint16_t pci_read16(uint8_t devfn, uint8_t off);
void pci_write16(uint8_t devfn, uint8_t off, uint16_t v);
uint8_t pci_read8(uint8_t devfn, uint8_t off);

/* Find the nth (from 0) virtio device of this type (VIRTIO_ID_*) on bus 0:
 * modern (1af4:1040+type) or transitional (1af4:1000-103f, the type in the
 * subsystem id; driven through its modern interface); enable memory
 * decoding and bus mastering and map its virtio structures. Prints why and
 * returns false when there is none or it has no modern interface. */
bool vdev_find(struct vdev *d, uint16_t type, unsigned nth);

/* Reset the device and wait until it reads status 0 again. */
bool vdev_reset(struct vdev *d);
uint8_t vdev_status(const struct vdev *d);
/* Reset, ACKNOWLEDGE, DRIVER, then accept wanted & offered (VERSION_1 is
 * required) and check FEATURES_OK. Queues come next, then vdev_ready(). */
bool vdev_negotiate(struct vdev *d, uint64_t wanted);
void vdev_ready(struct vdev *d);
uint64_t vdev_offered(struct vdev *d);
static inline bool vdev_has(const struct vdev *d, unsigned bit)
{
	return d->features >> bit & 1;
}
/* Device config space read of size 1, 2, 4 or 8 at off (8 as two 4-byte
 * reads, retried while config_generation changes). */
uint64_t vdev_cfg_read(struct vdev *d, unsigned off, unsigned size);

/* Set up queue index (the kit's static memory; at most VDEV_MAX_QUEUES per
 * device, size <= VQ_MAX_SIZE, smaller if the device says so). */
bool vq_init(struct vq *q, struct vdev *d, uint16_t index, uint16_t max_size);
/* Queue a chain, returns false if there is no room. Uses one indirect
 * descriptor when INDIRECT_DESC was negotiated and n > 1. Not visible to
 * the device before vq_kick(). */
bool vq_add(struct vq *q, const struct vq_buf *bufs, unsigned n, void *token);
/* Publish what vq_add queued and notify the device unless it suppressed
 * notifications (VRING_USED_F_NO_NOTIFY or EVENT_IDX's avail_event). */
void vq_kick(struct vq *q);
/* The token of the next used chain (and the bytes the device wrote), or
 * NULL when none is used yet. */
void *vq_get_used(struct vq *q, uint32_t *len);
static inline unsigned vq_in_flight(const struct vq *q)
{
	return (uint16_t)(q->avail_idx - q->last_used);
}

/* Raw access for tests of the device's input checks: put a chain built by
 * hand (head descriptor index) in the avail ring and notify. */
struct vring_desc *vq_raw_desc(struct vq *q);
void vq_raw_publish(struct vq *q, uint16_t head);

#endif /* GUEST_VIRTIO_H */
