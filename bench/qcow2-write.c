/* qcow2-write IMAGE [MB] [REQ_KIB] [SEGS] — host-side throughput of vmm's
 * block layer on an image, without a guest: MB MiB (default 256) written
 * sequentially in REQ_KIB KiB requests (default 1024) with block_writev
 * (each request SEGS iovec entries, default 1, as a guest's scattered
 * pages would come), cache=none (CACHE=writeback: the page cache);
 * then a flush, timed apart (qemu-img bench leaves its flush out); then
 * the same read back with block_readv. Prints write MB/s, flush ms and
 * read MB/s. The image
 * is opened with the format it has (qcow2: make a fresh one with
 * `qemu-img create -f qcow2 IMAGE 256M`; QEMU's side of the comparison
 * is `qemu-img bench -w -t none -s 1M -c 256 -d 1 IMAGE`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "backends/backends.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int run(struct block_dev *b, bool write, uint8_t *buf, size_t req, unsigned segs,
	       unsigned long n)
{
	struct iovec iov[256];
	size_t seg = req / segs;

	for (unsigned long i = 0; i < n; i++) {
		int r;

		for (unsigned s = 0; s < segs; s++)
			iov[s] = (struct iovec){buf + s * seg, seg};
		r = write ? block_writev(b, i * (req / BLOCK_SECTOR_SIZE), iov, (int)segs)
			  : block_readv(b, i * (req / BLOCK_SECTOR_SIZE), iov, (int)segs);
		if (r) {
			fprintf(stderr, "qcow2-write: request %lu failed: %s\n", i, strerror(-r));
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long mb = argc > 2 ? strtoul(argv[2], NULL, 0) : 256;
	size_t req = (argc > 3 ? strtoul(argv[3], NULL, 0) : 1024) * 1024;
	unsigned segs = argc > 4 ? (unsigned)strtoul(argv[4], NULL, 0) : 1;
	struct block_opts o = {.cache = BLOCK_CACHE_NONE, .format = BLOCK_FORMAT_AUTO};
	unsigned long n;
	struct block_dev *b;
	char err[256];
	uint8_t *buf;
	double t;

	if (argc < 2 || !req || req % 4096 || !segs || segs > 256 || req % (segs * 4096)) {
		fprintf(stderr, "usage: qcow2-write IMAGE [MB] [REQ_KIB] [SEGS<=256]\n");
		return 2;
	}
	o.path = argv[1];
	if (getenv("CACHE") && !strcmp(getenv("CACHE"), "writeback"))
		o.cache = BLOCK_CACHE_WRITEBACK;
	n = mb * (1ul << 20) / req;
	buf = aligned_alloc(4096, req);
	b = block_open(&o, err, sizeof(err));
	if (!buf || !b) {
		fprintf(stderr, "qcow2-write: %s\n", b ? "out of memory" : err);
		return 1;
	}
	for (size_t i = 0; i < req; i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	t = now();
	if (run(b, true, buf, req, segs, n))
		return 1;
	printf("write %.0f MB/s\n", (double)(n * req) / (now() - t) / 1e6);
	t = now();
	if (block_flush(b))
		return 1;
	printf("flush %.1f ms\n", (now() - t) * 1e3);
	t = now();
	if (run(b, false, buf, req, segs, n))
		return 1;
	printf("read %.0f MB/s\n", (double)(n * req) / (now() - t) / 1e6);
	block_close(b);
	free(buf);
	return 0;
}
