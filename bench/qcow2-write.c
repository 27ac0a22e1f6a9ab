/* qcow2-write IMAGE [MB] [REQ_KIB] [SEGS] — host-side throughput of vmm's
 * block layer on an image, without a guest: MB MiB (default 256) written
 * sequentially in REQ_KIB KiB requests (default 1024), each request SEGS
 * iovec entries (default 1, as a guest's scattered pages would come),
 * cache=none (CACHE=writeback: the page cache); then a flush, timed
 * apart (qemu-img bench leaves its flush out); then the same read back.
 * Prints write MB/s, flush ms and read MB/s. With RAND=COUNT, then COUNT
 * 4 KiB writes and COUNT 4 KiB reads strided over the disk (each 1 MiB +
 * 4 KiB after the one before, modulo the disk size, as qemu-img bench
 * -S 1052672 walks it): IOPS. STEP=BYTES sets that stride, and MB 0
 * leaves the sequential phases out: `RAND=3000 STEP=69632 qcow2-write
 * OVERLAY 0` on a fresh overlay of a backing file writes 4 KiB into a
 * new 64 KiB cluster each time (copy-on-write of the rest from the
 * backing file). READ_ONLY=1 leaves the writes out: on a fresh overlay,
 * every read is the backing file's.
 *
 * Requests are served one at a time with block_writev/block_readv, as
 * every qcow2 request was before the io_uring engine took them, or with
 * QD=N, N in flight through block_aio (io_uring) as virtio-blk issues
 * them: the engine takes what it can, the rest is served at once.
 *
 * The image is opened with the format it has (qcow2: make a fresh one
 * with `qemu-img create -f qcow2 IMAGE 256M`; QEMU's side is `qemu-img
 * bench -w -t none -i io_uring -s 1M -c 256 -d QD IMAGE`, and for RAND
 * `-s 4k -S 1052672 -c COUNT`). */
#include <poll.h>
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

struct bench {
	struct block_dev *b;
	struct block_aio *a; /* NULL: one request at a time */
	unsigned qd, in_flight;
	int failed;
};

static void done(void *opaque, void *cookie, int r)
{
	struct bench *k = opaque;

	k->in_flight--;
	if (r)
		k->failed = r;
}

/* One request: to the engine, or served at once. */
static int issue(struct bench *k, bool write, uint64_t off, uint8_t *buf, size_t req,
		 unsigned segs)
{
	struct iovec iov[256];
	uint64_t sector = off / BLOCK_SECTOR_SIZE;
	size_t seg = req / segs;

	for (unsigned s = 0; s < segs; s++)
		iov[s] = (struct iovec){buf + s * seg, seg};
	if (k->a && block_aio_rw(k->a, write, sector, iov, (int)segs, NULL) == 0) {
		k->in_flight++;
		return 0;
	}
	return write ? block_writev(k->b, sector, iov, (int)segs)
		     : block_readv(k->b, sector, iov, (int)segs);
}

/* n requests of req bytes, each step bytes after the one before. */
static int run(struct bench *k, bool write, uint8_t *buf, size_t req, uint64_t step,
	       unsigned segs, unsigned long n)
{
	uint64_t size = block_sectors(k->b) * BLOCK_SECTOR_SIZE, off = 0;
	unsigned long i = 0;

	while ((i < n || k->in_flight) && !k->failed) {
		while (i < n && k->in_flight < k->qd && !k->failed) {
			int r = issue(k, write, off, buf, req, segs);

			if (r)
				k->failed = r;
			off = (off + step) % size;
			i++;
		}
		if (!k->a)
			continue;
		block_aio_submit(k->a);
		if (k->in_flight)
			poll(&(struct pollfd){block_aio_fd(k->a), POLLIN, 0}, 1, -1);
		block_aio_reap(k->a, done, k);
	}
	if (k->failed)
		fprintf(stderr, "qcow2-write: a request failed: %s\n", strerror(-k->failed));
	return k->failed ? 1 : 0;
}

/* n requests of req bytes written in order, flushed, read back. */
static int sequential(struct bench *k, uint8_t *buf, size_t req, unsigned segs, unsigned long n)
{
	double t = now();

	if (run(k, true, buf, req, req, segs, n))
		return 1;
	printf("write %.0f MB/s\n", (double)(n * req) / (now() - t) / 1e6);
	t = now();
	if (block_flush(k->b)) /* nothing in flight here: all of it */
		return 1;
	printf("flush %.1f ms\n", (now() - t) * 1e3);
	t = now();
	if (run(k, false, buf, req, req, segs, n))
		return 1;
	printf("read %.0f MB/s\n", (double)(n * req) / (now() - t) / 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long mb = argc > 2 ? strtoul(argv[2], NULL, 0) : 256;
	size_t req = (argc > 3 ? strtoul(argv[3], NULL, 0) : 1024) * 1024;
	unsigned segs = argc > 4 ? (unsigned)strtoul(argv[4], NULL, 0) : 1;
	struct block_opts o = {.cache = BLOCK_CACHE_NONE, .format = BLOCK_FORMAT_AUTO};
	unsigned long n, rand_n = getenv("RAND") ? strtoul(getenv("RAND"), NULL, 0) : 0;
	uint64_t step = getenv("STEP") ? strtoull(getenv("STEP"), NULL, 0) : 1052672;
	struct bench k = {.qd = 1};
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
	k.b = b;
	if (getenv("QD")) {
		k.qd = (unsigned)strtoul(getenv("QD"), NULL, 0);
		k.a = block_aio_new(b, k.qd ? k.qd : 1);
		if (!k.qd || !k.a)
			return 1;
	}
	for (size_t i = 0; i < req; i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	if (n && sequential(&k, buf, req, segs, n))
		return 1;
	for (int w = getenv("READ_ONLY") ? 0 : 1; rand_n && w >= 0; w--) {
		t = now();
		if (run(&k, w, buf, 4096, step, 1, rand_n))
			return 1;
		printf("4k-%s %.0f IOPS\n", w ? "write" : "read", (double)rand_n / (now() - t));
	}
	block_aio_free(k.a);
	block_close(b);
	free(buf);
	return 0;
}
