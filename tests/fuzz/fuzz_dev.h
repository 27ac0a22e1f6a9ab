/* fuzz_dev.h — a guest for device fuzz targets: the shared fake
 * dev_host (tests/fake_host.h) with 1 MiB of RAM at 0 (zeroed per input,
 * so every input replays alone), and an interpreter that turns the input
 * into what a guest does: port and MMIO reads and writes to the device's windows,
 * and RAM writes (descriptors, PRD tables, rings, buffers). Each step
 * starts with an op byte:
 *   op % 4 == 0  write: window (op / 4 % n), 2-byte offset, value (4 bytes)
 *   op % 4 == 1  read:  window, 2-byte offset
 *                (size: 1, 2, 4 or 8 from (op >> 5) & 3; 8 only on MMIO)
 *   op % 4 == 2  RAM write: 3-byte address, 1-byte length, the bytes
 *   op % 4 == 3  the target's own step (fuzz_dev.step), given op >> 2
 * Offsets wrap within the window; addresses within RAM. */
#ifndef FUZZ_DEV_H
#define FUZZ_DEV_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backends/backends.h"
#include "tests/fake_host.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_RAM (1u << 20)
#define FUZZ_MAX_WINDOWS 8

struct fuzz_window {
	bool mmio;
	uint64_t base, size;
};

struct fuzz_dev {
	struct fake_host fake; /* host, mem, ram */
	struct fuzz_window win[FUZZ_MAX_WINDOWS];
	unsigned n_win;
	void (*step)(struct fuzz_dev *d, unsigned arg);
};

static inline void fuzz_dev_init(struct fuzz_dev *d)
{
	memset(d, 0, sizeof(*d));
	fake_host_init(&d->fake, FUZZ_RAM); /* the caller checks fake.ram */
}

static inline void fuzz_dev_window(struct fuzz_dev *d, bool mmio, uint64_t base, uint64_t size)
{
	d->win[d->n_win++] = (struct fuzz_window){mmio, base, size};
}

/* Take n bytes (big-endian) from the input; 0 past its end. */
static inline uint64_t fuzz_take(const uint8_t **data, size_t *size, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++) {
		v = v << 8 | (*size ? **data : 0);
		if (*size) {
			(*data)++;
			(*size)--;
		}
	}
	return v;
}

static inline void fuzz_dev_access(struct fuzz_dev *d, unsigned op, const uint8_t **data,
				   size_t *size)
{
	const struct fuzz_window *w = &d->win[op / 4 % d->n_win];
	unsigned sz = 1u << ((op >> 5) & 3);
	uint64_t addr = w->base + fuzz_take(data, size, 2) % w->size;
	uint64_t v = 0;

	if (sz == 8 && !w->mmio)
		sz = 4;
	if (op % 4 == 0) {
		v = fuzz_take(data, size, 4);
		iobus_write(w->mmio ? d->fake.host.mmio : d->fake.host.pio, addr, &v, sz);
	} else {
		iobus_read(w->mmio ? d->fake.host.mmio : d->fake.host.pio, addr, &v, sz);
	}
}

/* Interpret (data, size) as ops on the RAM as it is. */
static inline void fuzz_dev_ops(struct fuzz_dev *d, const uint8_t *data, size_t size)
{
	while (size) {
		unsigned op = (unsigned)fuzz_take(&data, &size, 1);
		uint64_t gpa, len;

		switch (op % 4) {
		case 0:
		case 1:
			if (d->n_win)
				fuzz_dev_access(d, op, &data, &size);
			break;
		case 2:
			gpa = fuzz_take(&data, &size, 3) % FUZZ_RAM;
			len = fuzz_take(&data, &size, 1);
			len = len < size ? len : size;
			len = len < FUZZ_RAM - gpa ? len : FUZZ_RAM - gpa;
			memcpy(d->fake.ram + gpa, data, len);
			data += len;
			size -= len;
			break;
		case 3:
			if (d->step)
				d->step(d, op >> 2);
			break;
		}
	}
}

/* One input from zeroed RAM. */
static inline void fuzz_dev_run(struct fuzz_dev *d, const uint8_t *data, size_t size)
{
	memset(d->fake.ram, 0, FUZZ_RAM);
	fuzz_dev_ops(d, data, size);
}

/* A 64-sector scratch disk image (a memfd) for the block devices. */
static inline struct block_dev *fuzz_disk(void)
{
	struct block_opts o = {0};
	char path[64], err[256];
	int fd = memfd_create("fuzz-disk", 0);
	struct block_dev *b;

	if (fd < 0 || ftruncate(fd, 64 * BLOCK_SECTOR_SIZE) < 0)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	o.path = path;
	b = block_open(&o, err, sizeof(err));
	if (!b) {
		fprintf(stderr, "fuzz_disk: %s\n", err);
		abort();
	}
	return b;
}

/* A fresh read-only block device on one 64-sector file, a CD-ROM's
 * medium (the memfd is made once, so inputs do not use up descriptors). */
static inline struct block_dev *fuzz_medium(void)
{
	static char path[64];
	struct block_opts o = {.path = path, .read_only = true, .format = BLOCK_FORMAT_RAW};
	char err[256];
	struct block_dev *b;

	if (!path[0]) {
		int fd = memfd_create("fuzz-cd", 0);

		if (fd < 0 || ftruncate(fd, 64 * BLOCK_SECTOR_SIZE) < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	b = block_open(&o, err, sizeof(err));
	if (!b)
		abort();
	return b;
}

#endif
