/* fuzz_virtqueue.c — the split virtqueue (devices/virtio/queue.c): ring
 * mapping checks, available-ring indices, descriptor chains (NEXT loops,
 * lengths, addresses outside RAM, readable after writable), indirect
 * tables, EVENT_IDX notification suppression, and copying in and out of a
 * chain. Input: fuzz_virtq.h's; each chain is read whole and its writable
 * part filled. */
#include "tests/fuzz/fuzz_virtq.h"

static uint32_t echo(struct virtq_chain *c)
{
	static uint8_t buf[1 << 16];
	size_t n = virtq_chain_read(c, 0, buf, sizeof(buf));

	virtq_chain_read(c, c->out_len / 2, buf, 7);
	return (uint32_t)virtq_chain_write(c, 0, buf, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_dev d;

	if (!d.fake.ram)
		fuzz_dev_init(&d);
	fuzz_virtq_run(&d, echo, data, size);
	return 0;
}
