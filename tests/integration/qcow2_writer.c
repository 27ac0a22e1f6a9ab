/* qcow2_writer — drives the block layer with random writes, zeroings
 * and flushes on an image until it is killed (qcow2-crash.sh kills it
 * with SIGKILL at random moments and then asks qemu-img check).
 * Usage: qcow2-writer IMAGE SEED|hold (hold: open it, then wait; for
 * disk-lock.sh). The format is probed, and file.locking=off is the
 * environment's QCOW2_WRITER_NO_LOCK=1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
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

int main(int argc, char **argv)
{
	struct block_opts o = {.no_lock = getenv("QCOW2_WRITER_NO_LOCK") != NULL};
	static uint8_t buf[512 * 512];
	struct block_dev *b;
	char err[256];
	uint64_t sectors;

	if (argc != 3) {
		fprintf(stderr, "usage: qcow2-writer IMAGE SEED\n");
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
