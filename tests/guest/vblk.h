/* vblk.h — virtio-blk requests on top of the kit's virtio driver (virtio.h):
 * one request = header, data segments, status byte, as one chain (one
 * indirect descriptor when the device offers INDIRECT_DESC). Polled.
 */
#ifndef GUEST_VBLK_H
#define GUEST_VBLK_H

#include <linux/virtio_blk.h>

#include "virtio.h"

#define VBLK_MAX_REQS 64
#define VBLK_SECTOR 512u
#define VBLK_STATUS_TIMEOUT 0xffu /* vblk_io's answer when nothing came back */

struct vblk_req {
	struct virtio_blk_outhdr hdr;
	struct virtio_blk_discard_write_zeroes range;
	uint8_t status;
	bool busy;
	uint32_t used_len;
	void *data;
	uint64_t user; /* for the caller */
};

struct vblk {
	struct vdev dev;
	struct vq q;
	uint64_t wanted;
	uint16_t qsize;
	uint64_t capacity; /* in 512-byte sectors */
	uint32_t size_max; /* per data segment; 0: no limit */
	uint32_t seg_max;
	uint64_t requests;
	struct vblk_req req[VBLK_MAX_REQS];
};

/* The features a block test wants: everything the kit driver uses. */
#define VBLK_FEATURES                                                                              \
	(1ull << VIRTIO_BLK_F_SIZE_MAX | 1ull << VIRTIO_BLK_F_SEG_MAX |                            \
	 1ull << VIRTIO_BLK_F_BLK_SIZE | 1ull << VIRTIO_BLK_F_FLUSH |                              \
	 1ull << VIRTIO_BLK_F_DISCARD | 1ull << VIRTIO_BLK_F_WRITE_ZEROES |                        \
	 1ull << VIRTIO_BLK_F_RO | 1ull << VIRTIO_RING_F_INDIRECT_DESC)

/* Find the first virtio-blk (1af4:1042, or transitional 1af4:1001), negotiate wanted, set up
 * queue 0 with at most qsize entries, DRIVER_OK. */
bool vblk_open(struct vblk *b, uint64_t wanted, uint16_t qsize);
/* Reset the device and initialise it again as vblk_open did. */
bool vblk_reinit(struct vblk *b);

/* Queue a request (not yet kicked); NULL when no slot or ring room is
 * free. data/len: the data (device-written for IN and GET_ID); for
 * DISCARD and WRITE_ZEROES use vblk_submit_range. */
struct vblk_req *vblk_submit(struct vblk *b, uint32_t type, uint64_t sector, void *data,
			     uint32_t len);
struct vblk_req *vblk_submit_range(struct vblk *b, uint32_t type, uint64_t sector, uint32_t sectors,
				   uint32_t flags);
static inline void vblk_kick(struct vblk *b)
{
	vq_kick(&b->q);
}
/* The next completed request (its slot stays busy until vblk_release), or
 * NULL when none is. */
struct vblk_req *vblk_poll(struct vblk *b);
/* Spin until a request completes: NULL after ~10 s (printed). */
struct vblk_req *vblk_wait(struct vblk *b);
static inline void vblk_release(struct vblk_req *r)
{
	r->busy = false;
}
/* One synchronous request: the status byte, or VBLK_STATUS_TIMEOUT. */
uint8_t vblk_io(struct vblk *b, uint32_t type, uint64_t sector, void *data, uint32_t len);
uint8_t vblk_range_io(struct vblk *b, uint32_t type, uint64_t sector, uint32_t sectors,
		      uint32_t flags);

#endif /* GUEST_VBLK_H */
