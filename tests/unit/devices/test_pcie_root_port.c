/* Unit tests for -device pcie-root-port: its bridge header and PCIe
 * capability, configuration cycles to the bus behind it (by the secondary
 * bus number the guest programs, through 0xcf8/0xcfc and ECAM), slot
 * status, the INTx swizzle and requester IDs behind it. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/pci/i440fx.h"
#include "devices/pci/ich9.h"
#include "devices/pci/pci.h"
#include "devices/pci/pcie_root_port.h"
#include "tests/unit/devices/pc_host.h"

static int no_map(void *opaque, uint64_t gpa, uint64_t size, void *hva, bool ro)
{
	return 0;
}

static const struct pc_mem_map map = {no_map, NULL};

static uint32_t cfg_in(struct fake_host *t, unsigned bus, unsigned devfn, unsigned off,
		       unsigned size)
{
	pio_out(t, 0xcf8, 4, 0x80000000u | bus << 16 | devfn << 8 | (off & 0xfc));
	return pio_in(t, (uint16_t)(0xcfc + (off & 3)), size);
}

static void cfg_out(struct fake_host *t, unsigned bus, unsigned devfn, unsigned off,
		    unsigned size, uint32_t v)
{
	pio_out(t, 0xcf8, 4, 0x80000000u | bus << 16 | devfn << 8 | (off & 0xfc));
	pio_out(t, (uint16_t)(0xcfc + (off & 3)), size, v);
}

static uint32_t ecam_in(struct fake_host *t, unsigned bus, unsigned devfn, unsigned off)
{
	uint32_t v = 0;

	iobus_read(t->host.mmio, 0xb0000000ull | bus << 20 | devfn << 12 | off, &v, 4);
	return v;
}

struct rig {
	struct fake_host t;
	struct pci_bus *bus;
	struct i440fx *mch;
	struct ich9_lpc *lpc;
	struct pcie_root_port *rp;
	struct pci_dev ep;
};

#define RP (2 << 3)

static void rig_up(struct rig *r, uint8_t ep_pin)
{
	const struct pcie_root_port_opts o = {RP, 1, 0, 16, true};

	test_host_init(&r->t);
	iobus_set_miss_log(r->t.host.mmio, false);
	r->bus = pci_bus_new(&r->t.host);
	r->mch = q35_mch_new(&r->t.host, r->bus, &map);
	r->lpc = ich9_lpc_new(&r->t.host, r->bus, NULL);
	r->rp = pcie_root_port_new(&r->t.host, r->bus, &o);
	ck_assert_ptr_nonnull(r->rp);
	pci_dev_init(&r->ep, "ep", 0x1af4, 0x1042, 0x010000, 1);
	r->ep.cfg[0x3d] = ep_pin;
	ck_assert_uint_ne(pcie_add_endpoint_cap(&r->ep), 0);
	ck_assert_int_eq(pci_bus_add(pcie_root_port_bus(r->rp), &r->ep, 0), 0);
	pcie_root_port_update_slot(r->rp);
}

static void rig_down(struct rig *r)
{
	pci_bus_remove(&r->ep);
	pcie_root_port_free(r->rp);
	ich9_lpc_free(r->lpc);
	i440fx_free(r->mch);
	pci_bus_free(r->bus);
	test_host_fini(&r->t);
}

START_TEST(bridge_header_and_pcie_cap)
{
	struct rig r;
	unsigned cap;

	rig_up(&r, 1);
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, 0, 4), 0x000c1b36u);
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, 0x0a, 2), 0x0604);
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, 0x0e, 1), 0x81); /* type 1, multifunction */
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, 0x2c, 4), 0);	/* no subsystem IDs here */
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, 0x06, 2) & 0x10, 0x10);
	cap = cfg_in(&r.t, 0, RP, 0x34, 1);
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, cap, 1), 0x10);
	/* version 2, root port, slot implemented */
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, cap + 2, 2), 0x0142);
	/* link: port 16, x1, 2.5 GT/s, DLL active reporting; up (device there) */
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, cap + 0x0c, 4), 16u << 24 | 1u << 20 | 0x11);
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, cap + 0x12, 2) & 0x2000, 0x2000);
	/* slot: attention button, hot-plug capable; presence detected */
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, cap + 0x14, 4) & 0x41, 0x41);
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, cap + 0x1a, 2) & 0x40, 0x40);
	/* the change bits are write-one-to-clear, presence is not writable */
	cfg_out(&r.t, 0, RP, cap + 0x1a, 2, 0xffff);
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, cap + 0x1a, 2), 0x40);
	/* windows and bus numbers keep what is written */
	cfg_out(&r.t, 0, RP, 0x20, 4, 0xc010c000u);
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, 0x20, 4), 0xc010c000u);
	cfg_out(&r.t, 0, RP, 0x24, 4, 0xffffffffu);
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, 0x24, 4), 0xfff1fff1u);
	rig_down(&r);
}
END_TEST

START_TEST(secondary_bus_by_number)
{
	struct rig r;

	rig_up(&r, 1);
	q35_mch_enable_ecam(r.mch);
	/* nothing answers on bus 1 until the bridge is told it is bus 1 */
	ck_assert_uint_eq(cfg_in(&r.t, 1, 0, 0, 4), 0xffffffffu);
	ck_assert_uint_eq(ecam_in(&r.t, 1, 0, 0), 0xffffffffu);
	cfg_out(&r.t, 0, RP, 0x18, 4, 0x00010100u); /* primary 0, secondary 1, subordinate 1 */
	ck_assert_uint_eq(cfg_in(&r.t, 1, 0, 0, 4), 0x10421af4u);
	ck_assert_uint_eq(ecam_in(&r.t, 1, 0, 0), 0x10421af4u);
	ck_assert_uint_eq(ecam_in(&r.t, 1, 0, 0x100), 0xffffffffu);
	ck_assert_uint_eq(ecam_in(&r.t, 1, 1 << 3, 0), 0xffffffffu);
	ck_assert_uint_eq(ecam_in(&r.t, 2, 0, 0), 0xffffffffu);
	ck_assert_uint_eq(pci_dev_rid(&r.ep), 0x0100);
	/* renumbered: found at the new number only */
	cfg_out(&r.t, 0, RP, 0x18, 4, 0x00050500u);
	ck_assert_uint_eq(cfg_in(&r.t, 1, 0, 0, 4), 0xffffffffu);
	ck_assert_uint_eq(ecam_in(&r.t, 5, 0, 0), 0x10421af4u);
	ck_assert_uint_eq(pci_dev_rid(&r.ep), 0x0500);
	/* a write reaches the device behind */
	cfg_out(&r.t, 5, 0, 0x3c, 1, 0x17);
	ck_assert_uint_eq(r.ep.cfg[0x3c], 0x17);
	/* behind a PCIe port only device 0 exists */
	ck_assert_int_eq(pci_bus_free_slot(pcie_root_port_bus(r.rp)), -1);
	rig_down(&r);
}
END_TEST

START_TEST(intx_swizzles_through_the_port)
{
	struct rig r;

	/* INTA behind the port in slot 2: the port's INTA, PIRQG, GSI 22 */
	rig_up(&r, 1);
	pci_dev_set_irq(&r.ep, true);
	ck_assert(r.t.level[22]);
	pci_dev_set_irq(&r.ep, false);
	ck_assert(!r.t.level[22]);
	rig_down(&r);
	/* INTB: the port's INTB, PIRQH, GSI 23 */
	rig_up(&r, 2);
	pci_dev_set_irq(&r.ep, true);
	ck_assert(r.t.level[23]);
	ck_assert(!r.t.level[22]);
	rig_down(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pcie_root_port");
	TCase *tc = tcase_create("pcie_root_port");

	tcase_add_test(tc, bridge_header_and_pcie_cap);
	tcase_add_test(tc, secondary_bus_by_number);
	tcase_add_test(tc, intx_swizzles_through_the_port);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
