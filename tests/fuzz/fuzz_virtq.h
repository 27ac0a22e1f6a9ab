/* fuzz_virtq.h — one split virtqueue over fuzz_dev.h's RAM for the virtio
 * fuzz targets. The input starts with the driver's configuration (a flags
 * byte: EVENT_IDX, INDIRECT; the 2-byte queue size; 3-byte descriptor,
 * available and used ring addresses); the rest is fuzz_dev.h's ops, whose
 * own step (op % 4 == 3) makes the device serve the queue: pop every
 * available chain (at most 64), hand it to the target, push it back. */
#ifndef FUZZ_VIRTQ_H
#define FUZZ_VIRTQ_H

#include "devices/virtio/virtio.h"
#include "tests/fuzz/fuzz_dev.h"

/* Serve one chain; returns the bytes written into it. */
typedef uint32_t (*fuzz_chain_fn)(struct virtq_chain *c);

static struct virtq fuzz_q;
static fuzz_chain_fn fuzz_serve;

static void fuzz_virtq_step(struct fuzz_dev *d, unsigned arg)
{
	static struct virtq_chain c;

	if (!fuzz_q.enabled)
		return;
	virtq_set_notify(&fuzz_q, arg & 1);
	for (int i = 0; i < 64 && virtq_pop(&fuzz_q, &c) > 0; i++)
		virtq_push(&fuzz_q, c.head, fuzz_serve(&c));
	virtq_should_notify(&fuzz_q);
}

static inline void fuzz_virtq_run(struct fuzz_dev *d, fuzz_chain_fn serve, const uint8_t *data,
				  size_t size)
{
	unsigned flags = (unsigned)fuzz_take(&data, &size, 1);

	fuzz_serve = serve;
	d->step = fuzz_virtq_step;
	virtq_reset(&fuzz_q, VIRTQ_MAX_SIZE);
	fuzz_q.size = (uint16_t)fuzz_take(&data, &size, 2);
	fuzz_q.desc_gpa = fuzz_take(&data, &size, 3);
	fuzz_q.avail_gpa = fuzz_take(&data, &size, 3);
	fuzz_q.used_gpa = fuzz_take(&data, &size, 3);
	fuzz_q.enabled = virtq_start(&fuzz_q, &d->fake.mem, flags & 1, flags & 2) == 0;
	fuzz_dev_run(d, data, size);
}

#endif
