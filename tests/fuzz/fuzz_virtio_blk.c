/* fuzz_virtio_blk.c — virtio-blk requests (devices/virtio/blk.c): the
 * request header, IN/OUT with sector ranges past the end, FLUSH, GET_ID,
 * DISCARD and WRITE_ZEROES segments, status bytes, over a 64-sector disk
 * image (a memfd). The request handler is called as the transport's I/O
 * thread calls it, synchronously, on chains from fuzz_virtq.h's queue (the
 * transport's registers are fuzz_pci's). blk.c is included for its static
 * handler. */
#include "devices/virtio/blk.c"
#include "tests/fuzz/fuzz_virtq.h"

static struct virtio_blk vb = {.serial = "fuzz-serial"};

static uint32_t serve(struct virtq_chain *c)
{
	const char *why = NULL;
	uint32_t written = 0;

	if (blk_handle(&vb, 0, c, &written, &why) < 0)
		return 0;
	return written;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_dev d;

	if (!d.fake.ram) {
		fuzz_dev_init(&d);
		vb.disk = fuzz_disk();
	}
	fuzz_virtq_run(&d, serve, data, size);
	return 0;
}
