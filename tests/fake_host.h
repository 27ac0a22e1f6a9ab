/* fake_host.h — the one stand-in for the machine that the unit tests and
 * the fuzz targets give a device model: real I/O buses, ram_size bytes of
 * zeroed guest RAM at 0, an interrupt recorder (level and rising edges per
 * GSI) and MSIs that go nowhere (a test that watches them sets
 * host.irq.msi itself). No KVM, no event loop. Header-only so each test
 * program gets its own copy. */
#ifndef TESTS_FAKE_HOST_H
#define TESTS_FAKE_HOST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"

#define FAKE_HOST_GSIS 24

struct fake_host {
	struct dev_host host;
	struct guest_mem mem;
	uint8_t *ram;
	bool level[FAKE_HOST_GSIS];
	unsigned raised[FAKE_HOST_GSIS]; /* rising edges per GSI */
};

static void fake_host_set_level(void *opaque, unsigned gsi, bool level)
{
	struct fake_host *f = opaque;

	if (gsi >= FAKE_HOST_GSIS)
		return;
	if (level && !f->level[gsi])
		f->raised[gsi]++;
	f->level[gsi] = level;
}

static void fake_host_msi(void *opaque, uint64_t addr, uint32_t data)
{
}

/* 0, or -1 when the RAM could not be allocated (f->ram is then NULL). */
static inline int fake_host_init(struct fake_host *f, uint64_t ram_size)
{
	memset(f, 0, sizeof(*f));
	f->ram = calloc(1, ram_size);
	if (!f->ram)
		return -1;
	f->mem.r[0] = (struct guest_ram_region){0, ram_size, f->ram};
	f->mem.n = 1;
	f->mem.ram_size = ram_size;
	f->host.pio = iobus_new("pio");
	f->host.mmio = iobus_new("mmio");
	f->host.mem = &f->mem;
	f->host.irq.set_level = fake_host_set_level;
	f->host.irq.msi = fake_host_msi;
	f->host.irq.opaque = f;
	return 0;
}

static inline void fake_host_fini(struct fake_host *f)
{
	iobus_free(f->host.pio);
	iobus_free(f->host.mmio);
	free(f->ram);
}

#endif
