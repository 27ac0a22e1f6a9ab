/* pc_host.h — a dev_host for unit tests of the PC platform devices: real
 * I/O buses, 2 MiB of malloc'ed guest RAM at 0, and an interrupt recorder.
 * Header-only so each test program gets its own copy. */
#ifndef TEST_PC_HOST_H
#define TEST_PC_HOST_H

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"

#define TEST_RAM_SIZE (2u << 20)

struct test_host {
	struct dev_host host;
	struct guest_mem mem;
	uint8_t *ram;
	bool level[24];
	unsigned raised[24]; /* rising edges per GSI */
};

static void test_set_level(void *opaque, unsigned gsi, bool level)
{
	struct test_host *t = opaque;

	if (gsi >= 24)
		return;
	if (level && !t->level[gsi])
		t->raised[gsi]++;
	t->level[gsi] = level;
}

static inline void test_host_init(struct test_host *t)
{
	memset(t, 0, sizeof(*t));
	t->ram = calloc(1, TEST_RAM_SIZE);
	ck_assert_ptr_nonnull(t->ram);
	t->mem.r[0] = (struct guest_ram_region){0, TEST_RAM_SIZE, t->ram};
	t->mem.n = 1;
	t->mem.ram_size = TEST_RAM_SIZE;
	t->host.pio = iobus_new("pio");
	t->host.mmio = iobus_new("mmio");
	t->host.mem = &t->mem;
	t->host.irq.set_level = test_set_level;
	t->host.irq.opaque = t;
}

static inline void test_host_fini(struct test_host *t)
{
	iobus_free(t->host.pio);
	iobus_free(t->host.mmio);
	free(t->ram);
}

static inline uint32_t pio_in(struct test_host *t, uint16_t port, unsigned size)
{
	uint32_t v = 0;

	iobus_read(t->host.pio, port, &v, size);
	return size == 4 ? v : v & ((1u << (8 * size)) - 1);
}

static inline void pio_out(struct test_host *t, uint16_t port, unsigned size, uint32_t v)
{
	iobus_write(t->host.pio, port, &v, size);
}

/* Run a suite and turn its result into an exit status. */
static inline int test_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

#endif
