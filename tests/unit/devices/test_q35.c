/* Unit tests for the q35 chipset: the MCH's PCIEXBAR and the ECAM window
 * it maps onto the PCI configuration space; the ICH9 LPC bridge (PMBASE,
 * ACPI_CNTL, PIRQ routing, RCBA) and SMBus controller. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/isa/acpi_pm.h"
#include "devices/pci/i440fx.h"
#include "devices/pci/ich9.h"
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

static uint32_t cfg_in(struct fake_host *t, unsigned devfn, unsigned off, unsigned size)
{
	pio_out(t, 0xcf8, 4, 0x80000000u | devfn << 8 | (off & 0xfc));
	return pio_in(t, (uint16_t)(0xcfc + (off & 3)), size);
}

static void cfg_outb(struct fake_host *t, unsigned devfn, unsigned off, uint8_t v)
{
	pio_out(t, 0xcf8, 4, 0x80000000u | devfn << 8 | (off & 0xfc));
	pio_out(t, (uint16_t)(0xcfc + (off & 3)), 1, v);
}

static void on_poweroff(void *opaque)
{
}

#define LPC ICH9_LPC_DEVFN
#define PM1_CNT_SCI_EN 1u

START_TEST(lpc_pmbase_moves_pm_block)
{
	struct fake_host t;
	struct pci_bus *bus;
	struct acpi_pm *pm;
	struct ich9_lpc *l;

	test_host_init(&t);
	iobus_set_miss_log(t.host.pio, false);
	bus = pci_bus_new(&t.host);
	pm = acpi_pm_new(&t.host, 0x600, 5, on_poweroff, NULL);
	l = ich9_lpc_new(&t.host, bus, pm);
	ck_assert_ptr_nonnull(l);
	ck_assert_uint_eq(cfg_in(&t, LPC, 0, 4), 0x29188086u);
	ck_assert_uint_eq(cfg_in(&t, LPC, 0x0a, 2), 0x0601); /* ISA bridge */
	ck_assert_uint_eq(cfg_in(&t, LPC, 0x0e, 1), 0x80);
	/* at reset: PMBASE reads just RTE, ACPI off, the block decodes nowhere */
	ck_assert_uint_eq(cfg_in(&t, LPC, 0x40, 4), 0x00000001u);
	ck_assert_uint_eq(pio_in(&t, 0x604, 2), 0xffff);
	/* SeaBIOS: PMBASE = 0x600 | RTE, then ACPI_EN */
	cfg_out(&t, LPC, 0x40, 0x0000067fu); /* bits 6:1 are not writable */
	ck_assert_uint_eq(cfg_in(&t, LPC, 0x40, 4), 0x00000601u);
	ck_assert_uint_eq(pio_in(&t, 0x604, 2), 0xffff);
	cfg_outb(&t, LPC, 0x44, 0x80);
	ck_assert_uint_eq(pio_in(&t, 0x604, 2) & PM1_CNT_SCI_EN, PM1_CNT_SCI_EN);
	/* moved while enabled: the old ports go quiet */
	cfg_out(&t, LPC, 0x40, 0x00000b01u);
	ck_assert_uint_eq(pio_in(&t, 0x604, 2), 0xffff);
	ck_assert_uint_eq(pio_in(&t, 0xb04, 2) & PM1_CNT_SCI_EN, PM1_CNT_SCI_EN);
	ck_assert_uint_ne(pio_in(&t, 0xb08, 4), 0xffffffffu); /* the PM timer came along */
	/* SMI_EN came along too: APMC_EN from reset (no SMM: SeaBIOS skips
	 * its SMM set-up), writes kept; SMI_STS reads 0 */
	ck_assert_uint_eq(pio_in(&t, 0x630, 4), 0xffffffffu);
	ck_assert_uint_eq(pio_in(&t, 0xb30, 4), 0x20u);
	pio_out(&t, 0xb30, 4, 0x21u);
	ck_assert_uint_eq(pio_in(&t, 0xb30, 4), 0x21u);
	ck_assert_uint_eq(pio_in(&t, 0xb34, 4), 0u);
	/* ACPI_EN off: gone */
	cfg_outb(&t, LPC, 0x44, 0x00);
	ck_assert_uint_eq(pio_in(&t, 0xb04, 2), 0xffff);
	/* reset puts everything back */
	cfg_outb(&t, LPC, 0x44, 0x80);
	dev_reset_all(&t.host);
	ck_assert_uint_eq(cfg_in(&t, LPC, 0x40, 4), 0x00000001u);
	ck_assert_uint_eq(pio_in(&t, 0xb04, 2), 0xffff);
	ck_assert_uint_eq(pio_in(&t, 0xb30, 4), 0xffffffffu);
	cfg_out(&t, LPC, 0x40, 0x00000601u);
	cfg_outb(&t, LPC, 0x44, 0x80);
	ck_assert_uint_eq(pio_in(&t, 0x630, 4), 0x20u); /* the reset value again */
	ich9_lpc_free(l);
	acpi_pm_free(pm);
	pci_bus_free(bus);
	test_host_fini(&t);
}
END_TEST

static void pin_dev_init(struct pci_dev *d, uint8_t pin)
{
	pci_dev_init(d, "dev", 0x1234, 0x0001, 0x00ff00, 0);
	d->cfg[0x3d] = pin;
}

START_TEST(lpc_pirq_registers_and_routing)
{
	struct fake_host t;
	struct pci_bus *bus;
	struct ich9_lpc *l;
	struct pci_dev a, b, c;
	static const uint8_t isa[4] = {10, 10, 11, 11};

	test_host_init(&t);
	bus = pci_bus_new(&t.host);
	l = ich9_lpc_new(&t.host, bus, NULL);
	/* PIRQA-D at 0x60, E-H at 0x68: disabled at reset, bits 7 and 3:0 */
	for (unsigned i = 0; i < 4; i++) {
		ck_assert_uint_eq(cfg_in(&t, LPC, 0x60 + i, 1), 0x80);
		ck_assert_uint_eq(cfg_in(&t, LPC, 0x68 + i, 1), 0x80);
	}
	ck_assert_uint_eq(cfg_in(&t, LPC, 0x64, 4), 0);
	cfg_outb(&t, LPC, 0x61, 0xff);
	ck_assert_uint_eq(cfg_in(&t, LPC, 0x61, 1), 0x8f);
	ich9_lpc_firmware_setup(l, 0x600, isa);
	ck_assert_uint_eq(cfg_in(&t, LPC, 0x60, 4), 0x0b0b0a0au);
	ck_assert_uint_eq(cfg_in(&t, LPC, 0x68, 4), 0x0b0b0a0au);
	/* RCBA: 16 KiB of registers at 0xfed1c000 */
	ck_assert_uint_eq(cfg_in(&t, LPC, 0xf0, 4), 0xfed1c001u);
	mmio_out(&t, 0xfed1c000u + 0x3410, 4, 0x20);
	ck_assert_uint_eq(mmio_in(&t, 0xfed1c000u + 0x3410, 4), 0x20);
	/* q35's swizzle: slot 2 INTA -> PIRQG (GSI 22), slot 3 INTB -> PIRQE
	 * (GSI 20), slot 31 INTA -> PIRQA (GSI 16) */
	ck_assert_uint_eq(ich9_slot_pirq(0, 0), 4);
	ck_assert_uint_eq(ich9_slot_pirq(24, 3), 7);
	ck_assert_uint_eq(ich9_slot_pirq(29, 1), 1);
	pin_dev_init(&a, 1);
	pin_dev_init(&b, 2);
	pin_dev_init(&c, 1);
	ck_assert_int_eq(pci_bus_add(bus, &a, 2 << 3), 0);
	ck_assert_int_eq(pci_bus_add(bus, &b, 3 << 3), 0);
	ck_assert_int_eq(pci_bus_add(bus, &c, 31 << 3 | 5), 0);
	pci_dev_set_irq(&a, true);
	ck_assert(t.level[22]);
	pci_dev_set_irq(&a, false);
	ck_assert(!t.level[22]);
	pci_dev_set_irq(&b, true);
	ck_assert(t.level[20]);
	pci_dev_set_irq(&c, true);
	ck_assert(t.level[16]);
	ck_assert(!t.level[10] && !t.level[11]);
	dev_reset_all(&t.host);
	ck_assert_uint_eq(cfg_in(&t, LPC, 0x60, 4), 0x80808080u);
	ck_assert_uint_eq(mmio_in(&t, 0xfed1c000u + 0x3410, 4), 0xffffffffu);
	pci_bus_remove(&a);
	pci_bus_remove(&b);
	pci_bus_remove(&c);
	ich9_lpc_free(l);
	pci_bus_free(bus);
	test_host_fini(&t);
}
END_TEST

START_TEST(smbus_reports_no_device)
{
	struct fake_host t;
	struct pci_bus *bus;
	struct ich9_smbus *s;

	test_host_init(&t);
	bus = pci_bus_new(&t.host);
	s = ich9_smbus_new(&t.host, bus);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(cfg_in(&t, ICH9_SMBUS_DEVFN, 0, 4), 0x29308086u);
	ck_assert_uint_eq(cfg_in(&t, ICH9_SMBUS_DEVFN, 0x0a, 2), 0x0c05);
	/* as SeaBIOS: SMB_BASE 0x700, I/O decode, HST_EN */
	cfg_out(&t, ICH9_SMBUS_DEVFN, 0x20, 0x701);
	cfg_out(&t, ICH9_SMBUS_DEVFN, 0x04, 0x1);
	cfg_outb(&t, ICH9_SMBUS_DEVFN, 0x40, 1);
	ck_assert_uint_eq(cfg_in(&t, ICH9_SMBUS_DEVFN, 0x40, 1), 1);
	/* a byte read from address 0x50 (an SPD EEPROM on real boards) */
	pio_out(&t, 0x704, 1, 0x50 << 1 | 1);
	pio_out(&t, 0x702, 1, 0x48); /* START, byte data */
	ck_assert_uint_eq(pio_in(&t, 0x700, 1) & 0x05, 0x04); /* DEV_ERR, not busy */
	pio_out(&t, 0x700, 1, 0xff);
	ck_assert_uint_eq(pio_in(&t, 0x700, 1) & 0x04, 0);
	ich9_smbus_free(s);
	pci_bus_free(bus);
	test_host_fini(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("q35");
	TCase *tc = tcase_create("q35");

	tcase_add_test(tc, pciexbar_maps_ecam);
	tcase_add_test(tc, lpc_pmbase_moves_pm_block);
	tcase_add_test(tc, lpc_pirq_registers_and_routing);
	tcase_add_test(tc, smbus_reports_no_device);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
