/* Unit tests for the snapshots of q35's chipset functions: the MCH (the
 * ECAM window PCIEXBAR places), the ICH9 LPC (the ACPI PM block at
 * PMBASE, the RCRB at RCBA, PIRQ routes), the SMBus controller and a
 * pcie-root-port. Each
 * board is programmed as SeaBIOS does, saved, loaded into a fresh one on a
 * second host, which must then answer at the same places. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "devices/isa/acpi_pm.h"
#include "devices/pci/i440fx.h"
#include "devices/pci/ich9.h"
#include "devices/pci/pcie_root_port.h"
#include "state/state.h"
#include "tests/unit/devices/pc_host.h"
#include "tests/unit/devices/state_tree.h"

#define LPC (0x1f << 3)
#define RCRB 0xfed1c000u

static int no_map(void *opaque, uint64_t gpa, uint64_t size, void *hva, bool ro)
{
	(void)opaque;
	(void)gpa;
	(void)size;
	(void)hva;
	(void)ro;
	return 0;
}

static const struct pc_mem_map map = {no_map, NULL};

static void no_poweroff(void *opaque)
{
	(void)opaque;
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

struct board {
	struct fake_host t;
	struct pci_bus *bus;
	struct i440fx *mch;
	struct acpi_pm *pm;
	struct ich9_lpc *lpc;
	struct ich9_smbus *smb;
};

static void board_up(struct board *b)
{
	memset(b, 0, sizeof(*b));
	test_host_init(&b->t);
	iobus_set_miss_log(b->t.host.mmio, false);
	iobus_set_miss_log(b->t.host.pio, false);
	b->bus = pci_bus_new(&b->t.host);
	b->mch = q35_mch_new(&b->t.host, b->bus, &map);
	b->pm = acpi_pm_new(&b->t.host, 0x600, 5, no_poweroff, NULL);
	b->lpc = ich9_lpc_new(&b->t.host, b->bus, b->pm);
	b->smb = ich9_smbus_new(&b->t.host, b->bus);
	ck_assert_ptr_nonnull(b->mch);
	ck_assert_ptr_nonnull(b->lpc);
	ck_assert_ptr_nonnull(b->smb);
}

static void board_down(struct board *b)
{
	ich9_smbus_free(b->smb);
	ich9_lpc_free(b->lpc);
	acpi_pm_free(b->pm);
	i440fx_free(b->mch);
	pci_bus_free(b->bus);
	test_host_fini(&b->t);
}

static void save_board(void *dev, struct state_writer *w)
{
	struct board *b = dev;

	i440fx_save(b->mch, w);
	ich9_lpc_save(b->lpc, w);
	ich9_smbus_save(b->smb, w);
	acpi_pm_save(b->pm, w);
}

static int load_board(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	struct board *b = dev;

	if (i440fx_load(b->mch, r, e, elen) < 0 || ich9_lpc_load(b->lpc, r, e, elen) < 0 ||
	    ich9_smbus_load(b->smb, r, e, elen) < 0)
		return -1;
	return acpi_pm_load(b->pm, r, e, elen);
}

static void program(struct board *b)
{
	static const uint8_t isa[4] = {10, 10, 11, 11};

	q35_mch_enable_ecam(b->mch);
	ich9_lpc_firmware_setup(b->lpc, 0xb00, isa);
	mmio_out(&b->t, RCRB + 0x3418, 4, 0x12345678); /* function disable */
	pio_out(&b->t, 0xb02, 2, 0x0100);
	pio_out(&b->t, 0xb30, 4, 0x21); /* SMI_EN: reset value 0x20 */
	pci_cfg_write(b->bus, ICH9_SMBUS_DEVFN, 0x20, 4, 0x701);
	pci_cfg_write(b->bus, ICH9_SMBUS_DEVFN, 0x04, 2, 0x1);
	pio_out(&b->t, 0x705, 1, 0x42);
}

START_TEST(q35_chipset_round_trip)
{
	static struct board a, b;
	size_t len;
	void *blob;

	board_up(&a);
	board_up(&b);
	program(&a);
	blob = save_tree(save_board, &a, &len);
	ck_assert_uint_eq(mmio_in(&b.t, Q35_ECAM_BASE, 4), 0xffffffffu);
	ck_assert_int_eq(load_tree(load_board, &b, blob, len), 0);
	/* the ECAM window, the PM block at 0xb00, the RCRB, the SMBus BAR */
	ck_assert_uint_eq(mmio_in(&b.t, Q35_ECAM_BASE, 4), 0x29c08086u);
	ck_assert_uint_eq(mmio_in(&b.t, Q35_ECAM_BASE + (LPC << 12) + 0x60, 4), 0x0b0b0a0au);
	ck_assert_uint_eq(pio_in(&b.t, 0xb02, 2), 0x0100);
	ck_assert_uint_eq(pio_in(&b.t, 0xb04, 2), pio_in(&a.t, 0xb04, 2));
	ck_assert_uint_eq(pio_in(&b.t, 0x604, 2), 0xffff);
	ck_assert_uint_eq(mmio_in(&b.t, RCRB + 0x3418, 4), 0x12345678);
	ck_assert_uint_eq(pio_in(&b.t, 0x705, 1), 0x42);
	ck_assert_uint_eq(pio_in(&b.t, 0xb30, 4), 0x21);
	free(blob);
	board_down(&a);
	board_down(&b);
}
END_TEST

START_TEST(another_function_is_refused)
{
	static struct board a, b;
	size_t len;
	void *blob;
	uint8_t cfg[256];

	board_up(&a);
	board_up(&b);
	program(&a);
	blob = save_tree(save_board, &a, &len);
	for (unsigned i = 0; i < 256; i++)
		cfg[i] = (uint8_t)pci_cfg_read(a.bus, ICH9_SMBUS_DEVFN, i, 1);
	cfg[2] = 0x31; /* 8086:2931 */
	patch(blob, "/devices/ich9-smbus@1f,3", "pci-config", cfg, sizeof(cfg));
	ck_assert_int_eq(load_tree(load_board, &b, blob, len), -1);
	ck_assert_str_eq(state_err, "state: /devices/ich9-smbus@1f,3: vendor/device id of "
				    "ich9-smbus differs from the saved one");
	free(blob);
	board_down(&a);
	board_down(&b);
}
END_TEST

static void save_rp(void *dev, struct state_writer *w)
{
	pcie_root_port_save(dev, w);
}

static int load_rp(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return pcie_root_port_load(dev, r, e, elen);
}

/* Bus numbers, a window, slot control and a pending change bit. */
START_TEST(root_port_round_trip)
{
	static const struct pcie_root_port_opts o = {2 << 3, 1, 0, 16, true};
	struct fake_host ta, tb;
	struct pci_bus *ba, *bb;
	struct pcie_root_port *a, *b;
	struct pci_dev ea, eb;
	size_t len;
	void *blob;

	test_host_init(&ta);
	test_host_init(&tb);
	ba = pci_bus_new(&ta.host);
	bb = pci_bus_new(&tb.host);
	a = pcie_root_port_new(&ta.host, ba, &o);
	b = pcie_root_port_new(&tb.host, bb, &o);
	pci_dev_init(&ea, "ep", 0x1af4, 0x1042, 0x010000, 1);
	pci_dev_init(&eb, "ep", 0x1af4, 0x1042, 0x010000, 1);
	ck_assert_int_eq(pci_bus_add(pcie_root_port_bus(a), &ea, 0), 0);
	ck_assert_int_eq(pci_bus_add(pcie_root_port_bus(b), &eb, 0), 0);
	pcie_root_port_update_slot(a);
	pcie_root_port_update_slot(b);
	pci_cfg_write(ba, o.devfn, 0x18, 4, 0x00010100); /* primary 0, secondary 1 */
	pci_cfg_write(ba, o.devfn, 0x20, 4, 0xfe80fe00);
	blob = save_tree(save_rp, a, &len);
	ck_assert_int_eq(load_tree(load_rp, b, blob, len), 0);
	for (unsigned off = 0; off < 256; off += 4)
		ck_assert_msg(pci_cfg_read(bb, o.devfn, off, 4) == pci_cfg_read(ba, o.devfn, off, 4),
			      "config %#x: %#x, source %#x", off, pci_cfg_read(bb, o.devfn, off, 4),
			      pci_cfg_read(ba, o.devfn, off, 4));
	/* the endpoint behind it answers at the loaded secondary bus number */
	ck_assert_uint_eq(pci_cfg_read_bdf(bb, 1, 0, 0, 2), 0x1af4);
	free(blob);
	pcie_root_port_free(a);
	pcie_root_port_free(b);
	pci_bus_free(ba);
	pci_bus_free(bb);
	test_host_fini(&ta);
	test_host_fini(&tb);
}
END_TEST

static Suite *q35_state_suite(void)
{
	Suite *s = suite_create("q35_state");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, q35_chipset_round_trip);
	tcase_add_test(tc, another_function_is_refused);
	tcase_add_test(tc, root_port_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return test_run_suite(q35_state_suite());
}
