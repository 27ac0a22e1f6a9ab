/* fuzz_qcow2.c — qcow2 images (backends/block/block_qcow2*.c): the header and
 * its extensions, the L1 and L2 tables, refcount blocks and table,
 * compressed cluster descriptors (deflate and zstd), backing names.
 * Byte 0 picks the requests; the rest is the image file, written into a
 * private folder and opened writable through the block layer, then read
 * and written at offsets spread over the disk, discarded, flushed,
 * written and read with two-segment iovecs, then (byte 0's bit 5) written
 * and read with several requests in flight on the io_uring engine, which
 * takes those its tables map straight to the file; closed. A bad image
 * must be refused or fail its requests; never a
 * crash, a hang or a read outside the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backends/backends.h"
#include "tests/fuzz/fuzz.h"

static char dir[64], path[96];

static void requests(struct block_dev *b, uint8_t ops)
{
	static uint8_t buf[8 * 512];
	uint64_t sectors = block_sectors(b);

	for (unsigned i = 0; i < 8 && sectors; i++) {
		uint64_t sec = sectors / 8 * i + (ops & 7);
		uint32_t n = sec + 8 <= sectors ? 8 : (uint32_t)(sectors - sec);

		if (sec >= sectors)
			continue;
		block_read(b, sec, buf, n);
		if (ops & (1u << i))
			block_write(b, sec + n / 2, buf, n - n / 2);
	}
	if (ops & 0x80)
		block_discard(b, 0, sectors < 4096 ? sectors : 4096);
	if (ops & 0x40)
		block_write_zeroes(b, sectors / 2, sectors / 2 < 300 ? sectors / 2 : 300, true);
	block_flush(b);
	block_read(b, 0, buf, sectors < 8 ? (uint32_t)sectors : 8);
	if (sectors >= 8) { /* vectored, as virtio-blk: runs cut across segments */
		struct iovec v[2] = {{buf, 3 * 512}, {buf + 3 * 512, 5 * 512}};

		block_writev(b, sectors / 3, v, 2);
		v[0] = (struct iovec){buf, 5 * 512};
		v[1] = (struct iovec){buf + 5 * 512, 3 * 512};
		block_readv(b, sectors / 3, v, 2);
	}
}

static void drop(void *opaque, void *cookie, int r)
{
}

/* Many in flight, as virtio-blk issues them: what the engine refuses is
 * served at once. */
static void in_flight(struct block_dev *b)
{
	static uint8_t buf[8][4096] __attribute__((aligned(4096)));
	struct block_aio *a = block_aio_new(b, 16);
	uint64_t sectors = block_sectors(b);

	if (!a || sectors < 8)
		goto out;
	for (unsigned i = 0; i < 16; i++) {
		uint64_t sec = (sectors - 8) / 16 * i;
		struct iovec v = {buf[i % 8], 4096};
		bool write = i & 1;

		if (block_aio_rw(a, write, sec, &v, 1, NULL) < 0)
			write ? block_writev(b, sec, &v, 1) : block_readv(b, sec, &v, 1);
		if (i == 7)
			block_aio_flush(a, NULL);
	}
	block_aio_submit(a);
	block_aio_wait_all(a, drop, NULL);
out:
	block_aio_free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct block_opts o = {.format = BLOCK_FORMAT_QCOW2, .no_lock = true};
	struct block_dev *b;
	char err[256];
	FILE *f;

	if (size < 2)
		return 0;
	if (!dir[0]) {
		strcpy(dir, "/tmp/vmm-fuzz-qcow2-XXXXXX");
		if (!mkdtemp(dir))
			abort();
		snprintf(path, sizeof(path), "%s/image.qcow2", dir);
	}
	f = fopen(path, "wb");
	if (!f || fwrite(data + 1, 1, size - 1, f) != size - 1)
		abort();
	fclose(f);
	o.path = path;
	b = block_open(&o, err, sizeof(err));
	if (b) {
		requests(b, data[0]);
		if (data[0] & 0x20)
			in_flight(b);
		block_close(b);
	} else if (strchr(err, '\n')) {
		abort(); /* one line */
	}
	unlink(path);
	return 0;
}
