/* Unit tests for the edu device's snapshot: registers, the DMA buffer and
 * the configuration space (BAR 0) come back on a fresh device; a tree
 * claiming a computation or a DMA in progress is refused. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "devices/pci/pci.h"
#include "devices/testdev/edu.h"
#include "state/state.h"
#include "tests/unit/devices/pc_host.h"
#include "tests/unit/devices/state_tree.h"

#define DEVFN (3 << 3)
#define BAR0 0xe0000000u
#define NODE "/devices/edu@0"

static struct fake_host th;
static struct pci_bus *bus;
static struct edu *e;

static void setup(void)
{
	test_host_init(&th);
	bus = pci_bus_new(&th.host);
	e = edu_new(&th.host, bus, DEVFN);
	ck_assert_ptr_nonnull(e);
}

static void teardown(void)
{
	edu_free(e);
	pci_bus_free(bus);
	test_host_fini(&th);
}

static uint64_t rd(uint32_t off, unsigned size)
{
	uint64_t v = 0;

	iobus_read(th.host.mmio, BAR0 + off, &v, size);
	return v;
}

static void wr(uint32_t off, unsigned size, uint64_t v)
{
	iobus_write(th.host.mmio, BAR0 + off, &v, size);
}

static void save_edu(void *dev, struct state_writer *w)
{
	edu_save(dev, w, "edu@0");
}

static int load_edu(void *dev, const struct state_reader *r, char *err, size_t errlen)
{
	return edu_load(dev, r, "edu@0", err, errlen);
}

/* Registers set, 16 bytes DMA'd into the device's buffer, then saved. */
static void *busy_tree(size_t *len)
{
	pci_cfg_write(bus, DEVFN, 0x10, 4, BAR0);
	pci_cfg_write(bus, DEVFN, 0x04, 2, 0x6); /* memory, bus master */
	wr(0x04, 4, 0x12345678);
	wr(0x08, 4, 5);
	wr(0x20, 4, 0x80);
	memcpy(th.ram + 0x1000, "hello, snapshot!", 16);
	wr(0x80, 8, 0x1000);
	wr(0x88, 8, 0x40000);
	wr(0x90, 8, 16);
	wr(0x98, 8, 1);
	return save_tree(save_edu, e, len);
}

START_TEST(edu_round_trip)
{
	size_t len;
	void *blob = busy_tree(&len);

	edu_free(e);
	e = edu_new(&th.host, bus, DEVFN);
	ck_assert_msg(load_tree(load_edu, e, blob, len) == 0, "%s", state_err);
	/* BAR 0 is where it was: the registers answer there */
	ck_assert_uint_eq(rd(0x00, 4), 0x010000ed);
	ck_assert_uint_eq(rd(0x04, 4), (uint32_t)~0x12345678u);
	ck_assert_uint_eq(rd(0x08, 4), 120);
	ck_assert_uint_eq(rd(0x20, 4), 0x80);
	/* the buffer came back: DMA it out to RAM */
	wr(0x80, 8, 0x40000);
	wr(0x88, 8, 0x2000);
	wr(0x90, 8, 16);
	wr(0x98, 8, 1 | 2);
	ck_assert_mem_eq(th.ram + 0x2000, "hello, snapshot!", 16);
	free(blob);
}
END_TEST

START_TEST(edu_bad_trees)
{
	size_t len;
	void *blob = busy_tree(&len);

	patch_u32(blob, NODE, "status", 0x81);
	ck_assert_int_eq(load_tree(load_edu, e, blob, len), -1);
	ck_assert_msg(strstr(state_err, "status"), "%s", state_err);
	patch_u32(blob, NODE, "status", 0x80);
	patch(blob, NODE, "dma-cmd", "\0\0\0\0\0\0\0\1", 8);
	ck_assert_int_eq(load_tree(load_edu, e, blob, len), -1);
	ck_assert_msg(strstr(state_err, "dma-cmd"), "%s", state_err);
	free(blob);
}
END_TEST

static Suite *edu_suite(void)
{
	Suite *s = suite_create("edu_state");
	TCase *tc = tcase_create("edu snapshots");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, edu_round_trip);
	tcase_add_test(tc, edu_bad_trees);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return test_run_suite(edu_suite());
}
