/* Unit tests for QEMU's pc-testdev: what kvm-unit-tests poke. */
#include <check.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/testdev/pc_testdev.h"
#include "tests/unit/devices/pc_host.h"

static struct fake_host t;
static struct pci_bus *pci;
static struct pc_testdev *td;

static void setup(void)
{
	test_host_init(&t);
	pci = pci_bus_new(&t.host);
	ck_assert_ptr_nonnull(pci);
	td = pc_testdev_new(&t.host, pci);
	ck_assert_ptr_nonnull(td);
}

static void teardown(void)
{
	pc_testdev_free(td);
	pci_bus_free(pci);
	test_host_fini(&t);
}

/* emulator.c: outw then string reads; byte lanes of one 32-bit register. */
START_TEST(scratch_port_reads_back)
{
	pio_out(&t, 0xe0, 2, 0x9999);
	ck_assert_uint_eq(pio_in(&t, 0xe0, 1), 0x99);
	ck_assert_uint_eq(pio_in(&t, 0xe0, 4), 0x9999);
	pio_out(&t, 0xe0, 4, 0x12345678);
	ck_assert_uint_eq(pio_in(&t, 0xe1, 1), 0x56);
	pio_out(&t, 0xe2, 1, 0xab);
	ck_assert_uint_eq(pio_in(&t, 0xe0, 4), 0x12ab5678);
	ck_assert_uint_eq(pio_in(&t, 0xe8, 4), 0x12ab5678); /* the byte-wide copy */
}
END_TEST

/* ioapic.c's set_irq_line: out to 0x2000 + line drives the line. */
START_TEST(irq_line_ports)
{
	pio_out(&t, 0x2000 + 0x0e, 1, 1);
	ck_assert(t.level[0x0e]);
	pio_out(&t, 0x2000 + 0x0e, 1, 0);
	ck_assert(!t.level[0x0e]);
	pio_out(&t, 0x2000 + 23, 1, 7);
	ck_assert(t.level[23]);
}
END_TEST

START_TEST(iomem_and_flush)
{
	uint64_t v = 0x1122334455667788ull, r = 0;

	iobus_write(t.host.mmio, 0xff000000u + 8, &v, 8);
	iobus_read(t.host.mmio, 0xff000000u + 12, &r, 4);
	ck_assert_uint_eq(r, 0x11223344);
	iobus_read(t.host.mmio, 0xff00fffcu, &r, 4);
	ck_assert_uint_eq(r, 0);
	t.ram[0x5000] = 0x42; /* a flush keeps the page's contents */
	pio_out(&t, 0xe4, 4, 0x5000);
	ck_assert_uint_eq(t.ram[0x5000], 0x42);
	pio_out(&t, 0xe4, 4, 0xfffff000u); /* not RAM: ignored */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pc_testdev");
	TCase *tc = tcase_create("ports");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, scratch_port_reads_back);
	tcase_add_test(tc, irq_line_ports);
	tcase_add_test(tc, iomem_and_flush);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
