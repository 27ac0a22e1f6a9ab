/* Unit tests for the q35 chipset: the MCH's PCIEXBAR and the ECAM window
 * it maps onto the PCI configuration space. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/pci/i440fx.h"
#include "devices/pci/pci.h"
#include "tests/unit/devices/pc_host.h"

static int no_map(void *opaque, uint64_t gpa, uint64_t size, void *hva, bool ro)
{
	return 0;
}

static const struct pc_mem_map map = {no_map, NULL};

static void cfg_out(struct fake_host *t, unsigned devfn, unsigned off, uint32_t v)
{
	pio_out(t, 0xcf8, 4, 0x80000000u | devfn << 8 | (off & 0xfc));
	pio_out(t, 0xcfc, 4, v);
}

static uint32_t mmio_in(struct fake_host *t, uint64_t addr, unsigned size)
{
	uint32_t v = 0;

	iobus_read(t->host.mmio, addr, &v, size);
	return v;
}

static void mmio_out(struct fake_host *t, uint64_t addr, unsigned size, uint32_t v)
{
	iobus_write(t->host.mmio, addr, &v, size);
}

#define ECAM(bus, devfn, reg) (0xb0000000ull | (bus) << 20 | (devfn) << 12 | (reg))

/* A device with a 4 KiB memory BAR, to see a BAR move through ECAM. */
static void bar_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	memset(data, 0x5a, size);
}

static const struct io_ops bar_ops = {bar_read, NULL};

START_TEST(pciexbar_maps_ecam)
{
	struct fake_host t;
	struct pci_bus *bus;
	struct i440fx *nb;
	struct pci_dev dev;

	test_host_init(&t);
	iobus_set_miss_log(t.host.mmio, false);
	bus = pci_bus_new(&t.host);
	nb = q35_mch_new(&t.host, bus, &map);
	ck_assert_ptr_nonnull(nb);
	pci_dev_init(&dev, "dev", 0x1234, 0x5678, 0x00ff00, 0);
	pci_dev_set_bar(&dev, 0, 4096, false, &bar_ops, NULL);
	ck_assert_int_eq(pci_bus_add(bus, &dev, 3 << 3), 0);
	/* reset value: 0xb0000000, disabled: nothing decodes there */
	ck_assert_uint_eq(pci_cfg_read(bus, 0, 0x60, 4), 0xb0000000u);
	ck_assert_uint_eq(mmio_in(&t, ECAM(0, 0, 0), 4), 0xffffffffu);
	/* as SeaBIOS: high dword, then base | enable (256 MiB) */
	cfg_out(&t, 0, 0x64, 0);
	cfg_out(&t, 0, 0x60, 0xb0000001u);
	ck_assert_uint_eq(mmio_in(&t, ECAM(0, 0, 0), 4), 0x29c08086u);
	ck_assert_uint_eq(mmio_in(&t, ECAM(0, 3 << 3, 0), 2), 0x1234);
	ck_assert_uint_eq(mmio_in(&t, ECAM(0, 3 << 3, 2), 2), 0x5678);
	ck_assert_uint_eq(mmio_in(&t, ECAM(0, 3 << 3, 0x0b), 1), 0x00);
	/* an absent function, another bus, extended space: all-ones */
	ck_assert_uint_eq(mmio_in(&t, ECAM(0, 4 << 3, 0), 4), 0xffffffffu);
	ck_assert_uint_eq(mmio_in(&t, ECAM(1, 0, 0), 4), 0xffffffffu);
	ck_assert_uint_eq(mmio_in(&t, ECAM(0, 3 << 3, 0x100), 4), 0xffffffffu);
	ck_assert_uint_eq(mmio_in(&t, ECAM(255, 0xff, 0xffc), 4), 0xffffffffu);
	/* a BAR programmed through ECAM moves (the window's handler may
	 * register regions of the bus it sits on) */
	mmio_out(&t, ECAM(0, 3 << 3, 0x10), 4, 0xffffffffu);
	ck_assert_uint_eq(mmio_in(&t, ECAM(0, 3 << 3, 0x10), 4), 0xfffff000u);
	mmio_out(&t, ECAM(0, 3 << 3, 0x10), 4, 0xc0001000u);
	mmio_out(&t, ECAM(0, 3 << 3, 0x04), 2, 0x0002);
	ck_assert_uint_eq(pci_cfg_read(bus, 3 << 3, 0x10, 4), 0xc0001000u);
	ck_assert_uint_eq(mmio_in(&t, 0xc0001000u, 4), 0x5a5a5a5au);
	/* moving the window through itself, then the 64 MiB length */
	mmio_out(&t, ECAM(0, 0, 0x60), 4, 0xe0000005u);
	ck_assert_uint_eq(mmio_in(&t, ECAM(0, 0, 0), 4), 0xffffffffu);
	ck_assert_uint_eq(mmio_in(&t, 0xe0000000u, 4), 0x29c08086u);
	ck_assert_uint_eq(mmio_in(&t, 0xe0000000u + (64u << 20) - 4, 4), 0xffffffffu);
	/* disabled: gone */
	cfg_out(&t, 0, 0x60, 0xe0000004u);
	ck_assert_uint_eq(mmio_in(&t, 0xe0000000u, 4), 0xffffffffu);
	/* system reset disables it and restores the default base */
	q35_mch_enable_ecam(nb);
	ck_assert_uint_eq(mmio_in(&t, ECAM(0, 0, 0), 4), 0x29c08086u);
	dev_reset_all(&t.host);
	ck_assert_uint_eq(pci_cfg_read(bus, 0, 0x60, 4), 0xb0000000u);
	ck_assert_uint_eq(mmio_in(&t, ECAM(0, 0, 0), 4), 0xffffffffu);
	pci_bus_remove(&dev);
	i440fx_free(nb);
	pci_bus_free(bus);
	test_host_fini(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("q35");
	TCase *tc = tcase_create("q35");

	tcase_add_test(tc, pciexbar_maps_ecam);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
