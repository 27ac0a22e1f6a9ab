/* vblk.c — virtio-blk requests for kit payloads (see vblk.h). */
#include "vblk.h"

#define MAX_DATA_SEGS (VQ_MAX_INDIRECT - 2)
#define WAIT_TSC_CYCLES 30000000000ull /* ~10 s at 3 GHz */

static bool vblk_setup(struct vblk *b)
{
	struct vdev *d = &b->dev;

	if (!vdev_negotiate(d, b->wanted))
		return false;
	b->capacity = vdev_cfg_read(d, offsetof(struct virtio_blk_config, capacity), 8);
	b->size_max = vdev_has(d, VIRTIO_BLK_F_SIZE_MAX)
			      ? (uint32_t)vdev_cfg_read(
					d, offsetof(struct virtio_blk_config, size_max), 4)
			      : 0;
	b->seg_max =
		vdev_has(d, VIRTIO_BLK_F_SEG_MAX)
			? (uint32_t)vdev_cfg_read(d, offsetof(struct virtio_blk_config, seg_max), 4)
			: MAX_DATA_SEGS;
	if (!b->seg_max || b->seg_max > MAX_DATA_SEGS)
		b->seg_max = MAX_DATA_SEGS;
	if (!vq_init(&b->q, d, 0, b->qsize))
		return false;
	memset(b->req, 0, sizeof(b->req));
	vdev_ready(d);
	return true;
}

bool vblk_open(struct vblk *b, uint64_t wanted, uint16_t qsize)
{
	memset(b, 0, sizeof(*b));
	b->wanted = wanted;
	b->qsize = qsize;
	return vdev_find(&b->dev, VIRTIO_ID_BLOCK, 0) && vblk_setup(b);
}

bool vblk_reinit(struct vblk *b)
{
	return vblk_setup(b);
}

static struct vblk_req *free_slot(struct vblk *b)
{
	for (unsigned i = 0; i < VBLK_MAX_REQS; i++)
		if (!b->req[i].busy)
			return &b->req[i];
	return NULL;
}

static bool device_writes_data(uint32_t type)
{
	return type == VIRTIO_BLK_T_IN || type == VIRTIO_BLK_T_GET_ID;
}

/* Chain header, data (split at size_max), status; false if it does not fit. */
static bool queue_chain(struct vblk *b, struct vblk_req *r, void *data, uint32_t len,
			bool device_writes)
{
	struct vq_buf bufs[MAX_DATA_SEGS + 2];
	unsigned n = 0;
	uint8_t *p = data;

	bufs[n++] = (struct vq_buf){&r->hdr, sizeof(r->hdr), false};
	while (len) {
		uint32_t seg = b->size_max && len > b->size_max ? b->size_max : len;

		if (n > b->seg_max)
			return false;
		bufs[n++] = (struct vq_buf){p, seg, device_writes};
		p += seg;
		len -= seg;
	}
	bufs[n++] = (struct vq_buf){&r->status, 1, true};
	return vq_add(&b->q, bufs, n, r);
}

static struct vblk_req *start(struct vblk *b, uint32_t type, uint64_t sector)
{
	struct vblk_req *r = free_slot(b);

	if (!r)
		return NULL;
	r->hdr = (struct virtio_blk_outhdr){.type = type, .sector = sector};
	r->status = 0xee; /* no device writes this: a missing status shows */
	r->used_len = 0;
	return r;
}

struct vblk_req *vblk_submit(struct vblk *b, uint32_t type, uint64_t sector, void *data,
			     uint32_t len)
{
	struct vblk_req *r = start(b, type, sector);

	if (!r || !queue_chain(b, r, data, len, device_writes_data(type)))
		return NULL;
	r->busy = true;
	r->data = data;
	b->requests++;
	return r;
}

struct vblk_req *vblk_submit_range(struct vblk *b, uint32_t type, uint64_t sector, uint32_t sectors,
				   uint32_t flags)
{
	struct vblk_req *r = start(b, type, 0);

	if (!r)
		return NULL;
	r->range = (struct virtio_blk_discard_write_zeroes){sector, sectors, flags};
	if (!queue_chain(b, r, &r->range, sizeof(r->range), false))
		return NULL;
	r->busy = true;
	b->requests++;
	return r;
}

struct vblk_req *vblk_poll(struct vblk *b)
{
	uint32_t len;
	struct vblk_req *r = vq_get_used(&b->q, &len);

	if (r)
		r->used_len = len;
	return r;
}

struct vblk_req *vblk_wait(struct vblk *b)
{
	uint64_t t0 = rdtsc();
	struct vblk_req *r;

	while (!(r = vblk_poll(b))) {
		if (rdtsc() - t0 > WAIT_TSC_CYCLES) {
			printf("virtio-blk: no completion within ~10 s (%u in flight, status %x)\n",
			       vq_in_flight(&b->q), vdev_status(&b->dev));
			return NULL;
		}
		cpu_relax();
	}
	return r;
}

static uint8_t finish(struct vblk *b, struct vblk_req *r)
{
	struct vblk_req *done;
	uint8_t status;

	if (!r)
		return VBLK_STATUS_TIMEOUT;
	vblk_kick(b);
	done = vblk_wait(b);
	if (!done)
		return VBLK_STATUS_TIMEOUT;
	status = done->status;
	vblk_release(done);
	return status;
}

uint8_t vblk_io(struct vblk *b, uint32_t type, uint64_t sector, void *data, uint32_t len)
{
	return finish(b, vblk_submit(b, type, sector, data, len));
}

uint8_t vblk_range_io(struct vblk *b, uint32_t type, uint64_t sector, uint32_t sectors,
		      uint32_t flags)
{
	return finish(b, vblk_submit_range(b, type, sector, sectors, flags));
}
