/* qcow2_writer — drives the block layer with random writes, zeroings
 * and flushes on an image until it is killed (qcow2-crash.sh kills it
 * with SIGKILL at random moments and then asks qemu-img check).
 * Usage: qcow2-writer IMAGE SEED|hold [QD] (hold: open it, then wait;
 * for disk-lock.sh). With QD, small random writes (most of them parts of
 * clusters) and flushes, QD in flight on the io_uring engine as
 * virtio-blk issues them. The format is probed, and file.locking=off is
 * the environment's QCOW2_WRITER_NO_LOCK=1. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backends/backends.h"

/* A slow disk: every write and sync takes a while, so that a SIGKILL
 * lands between the steps of a flush often, not once in a thousand
 * runs (these replace libc's for the block layer linked in here). */
ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	ssize_t r = syscall(SYS_pwrite64, fd, buf, n, off);

	usleep(100);
	return r;
}

int fdatasync(int fd)
{
	int r = (int)syscall(SYS_fdatasync, fd);

	usleep(1000);
	return r;
}

static unsigned in_flight;

static void done(void *opaque, void *cookie, int r)
{
	in_flight--;
	if (r) {
		fprintf(stderr, "qcow2-writer: a request in flight failed: %d\n", r);
		exit(1);
	}
}

/* QD requests in flight until killed: 1 to 16 sectors anywhere, one in
 * 32 a flush; what the engine refuses is served at once. */
static int in_flight_loop(struct block_dev *b, unsigned qd)
{
	struct block_aio *a = block_aio_new(b, qd);
	uint64_t sectors = block_sectors(b);
	uint8_t *bufs = aligned_alloc(4096, (size_t)qd * 8192);
	bool said = false;

	if (!a || !bufs)
		return 1;
	for (unsigned long i = 0;;) {
		while (in_flight < qd) {
			uint32_t n = 1 + (uint32_t)(rand() % 16);
			uint64_t sec = (uint64_t)rand() % (sectors - n);
			uint8_t *buf = bufs + (size_t)(i % qd) * 8192;
			struct iovec v = {buf, (size_t)n * 512};
			int r;

			memset(buf, (int)(i & 0xff), (size_t)n * 512);
			if (rand() % 32 == 0)
				r = block_aio_flush(a, NULL);
			else if (block_aio_rw(a, true, sec, &v, 1, NULL) == 0)
				r = 0;
			else
				r = block_writev(b, sec, &v, 1) ? -1 : 1;
			if (r < 0) {
				fprintf(stderr, "qcow2-writer: request %lu failed\n", i);
				return 1;
			}
			in_flight += r == 0;
			i++;
		}
		block_aio_submit(a);
		poll(&(struct pollfd){block_aio_fd(a), POLLIN, 0}, 1, -1);
		block_aio_reap(a, done, NULL);
		if (i >= 200 && !said) {
			fprintf(stderr, "qcow2-writer: running\n");
			said = true;
		}
	}
}

int main(int argc, char **argv)
{
	struct block_opts o = {.no_lock = getenv("QCOW2_WRITER_NO_LOCK") != NULL};
	static uint8_t buf[512 * 512];
	struct block_dev *b;
	char err[256];
	uint64_t sectors;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: qcow2-writer IMAGE SEED [QD]\n");
		return 2;
	}
	o.path = argv[1];
	srand((unsigned)atoi(argv[2]));
	b = block_open(&o, err, sizeof(err));
	if (!b) {
		fprintf(stderr, "qcow2-writer: %s\n", err);
		return 1;
	}
	if (!strcmp(argv[2], "hold")) { /* the image open (and locked) until killed */
		fprintf(stderr, "qcow2-writer: holding %s\n", o.path);
		pause();
	}
	if (argc == 4)
		return in_flight_loop(b, (unsigned)atoi(argv[3]));
	sectors = block_sectors(b);
	for (unsigned long i = 0;; i++) {
		uint32_t n = 1 + (uint32_t)(rand() % 512);
		uint64_t sec = (uint64_t)rand() % sectors;
		int op = rand() % 16, r;

		if (sec + n > sectors)
			n = (uint32_t)(sectors - sec);
		memset(buf, (int)(i & 0xff), (size_t)n * 512);
		if (op == 0)
			r = block_write_zeroes(b, sec, n, true);
		else if (op == 1)
			r = block_discard(b, sec, n);
		else if (op < 4)
			r = block_flush(b);
		else
			r = block_write(b, sec, buf, n);
		if (r) {
			fprintf(stderr, "qcow2-writer: request %lu failed: %d\n", i, r);
			return 1;
		}
		if (i == 200)
			fprintf(stderr, "qcow2-writer: running\n");
	}
}
