/* pc_host.h — the unit tests' helpers for the PC platform devices: the
 * shared fake dev_host (tests/fake_host.h) with 2 MiB of RAM, port I/O,
 * and a suite runner. Header-only so each test program gets its own copy. */
#ifndef TEST_PC_HOST_H
#define TEST_PC_HOST_H

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fake_host.h"

#define TEST_RAM_SIZE (2u << 20)

static inline void test_host_init(struct fake_host *t)
{
	ck_assert_int_eq(fake_host_init(t, TEST_RAM_SIZE), 0);
}

static inline void test_host_fini(struct fake_host *t)
{
	fake_host_fini(t);
}

static inline uint32_t pio_in(struct fake_host *t, uint16_t port, unsigned size)
{
	uint32_t v = 0;

	iobus_read(t->host.pio, port, &v, size);
	return size == 4 ? v : v & ((1u << (8 * size)) - 1);
}

static inline void pio_out(struct fake_host *t, uint16_t port, unsigned size, uint32_t v)
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
