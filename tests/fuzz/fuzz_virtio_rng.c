/* fuzz_virtio_rng.c — virtio-rng requests (devices/virtio/rng.c) through
 * the device's handler on chains from fuzz_virtq.h's queue: writable
 * buffers filled from getrandom(2), readable ones refused, the max-bytes
 * quota (64 bytes per second, so a run reaches the spent quota) counted
 * down. rng.c is included for its static handler; every byte the handler
 * reports written must lie in the chain's writable part. */
#include "devices/virtio/rng.c"
#include "tests/fuzz/fuzz_virtq.h"

static struct virtio_rng r;

static uint32_t serve(struct virtq_chain *c)
{
	const char *why = NULL;
	uint32_t written = 0;
	int h = rng_handle(&r, 0, c, &written, &why);

	if (h < 0 || h == VIRTIO_HANDLE_LATER)
		return 0;
	if (written > c->in_len)
		abort();
	return written;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_dev d;

	if (!d.fake.ram)
		fuzz_dev_init(&d);
	r = (struct virtio_rng){.o = {.fd = -1, .max_bytes = 64, .period_ms = 1000}};
	r.quota = r.o.max_bytes;
	fuzz_virtq_run(&d, serve, data, size);
	return 0;
}
