/* Unit tests for -device pcie-root-port: its bridge header and PCIe
 * capability, configuration cycles to the bus behind it (by the secondary
 * bus number the guest programs, through 0xcf8/0xcfc and ECAM), slot
 * status, the INTx swizzle and requester IDs behind it; native hot-plug:
 * slot power at reset, presence and link changes, command completion,
 * the attention button and the guest-approved removal, the hot-plug
 * interrupt as MSI (one per all-clear) and as INTx. */
#include <check.h>
#include <errno.h>
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

static unsigned n_msi;
static uint32_t last_msi_data;

static void record_msi(void *opaque, uint64_t addr, uint32_t data)
{
	n_msi++;
	last_msi_data = data;
}

static unsigned n_eject;

static void count_eject(void *opaque, struct pcie_root_port *rp)
{
	n_eject++;
}

/* The root port with nothing behind it (the slot hot-plug fills). */
static void rig_up_empty(struct rig *r)
{
	const struct pcie_root_port_opts o = {RP, 1, 0, 16, true};

	test_host_init(&r->t);
	iobus_set_miss_log(r->t.host.mmio, false);
	r->t.host.irq.msi = record_msi;
	n_msi = n_eject = 0;
	r->bus = pci_bus_new(&r->t.host);
	r->mch = q35_mch_new(&r->t.host, r->bus, &map);
	r->lpc = ich9_lpc_new(&r->t.host, r->bus, NULL);
	r->rp = pcie_root_port_new(&r->t.host, r->bus, &o);
	ck_assert_ptr_nonnull(r->rp);
	pcie_root_port_set_eject(r->rp, count_eject, NULL);
	pci_dev_init(&r->ep, "ep", 0x1af4, 0x1042, 0x010000, 1);
	r->ep.cfg[0x3d] = 1;
	ck_assert_uint_ne(pcie_add_endpoint_cap(&r->ep), 0);
	pcie_root_port_update_slot(r->rp);
}

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
	if (r->ep.bus)
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

/* 4 KiB of configuration space through ECAM for the PCI Express functions
 * (the port, the endpoint behind it): a zero header at 0x100 (no extended
 * capability), read-only; conventional functions (the MCH, the LPC bridge)
 * read all-ones there, so Linux gives them 256 bytes. */
START_TEST(extended_config_space)
{
	struct ecam_case {
		unsigned bus, devfn, off;
		uint32_t want;
	} cases[] = {
		{0, RP, 0x100, 0},
		{0, RP, 0xffc, 0},
		{1, 0, 0x100, 0},
		{1, 0, 0x800, 0},
		{0, 0, 0x100, 0xffffffffu},
		{0, 0x1f << 3, 0x100, 0xffffffffu},
		{0, 0, 0xfc, 0},
		{1, 1 << 3, 0x100, 0xffffffffu},
	};
	struct rig r;

	rig_up(&r, 1);
	q35_mch_enable_ecam(r.mch);
	cfg_out(&r.t, 0, RP, 0x18, 4, 0x00010100u);
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(
			ecam_in(&r.t, cases[i].bus, cases[i].devfn, cases[i].off) == cases[i].want,
			"%02x:%02x.%x +%#x: %#x, want %#x", cases[i].bus, cases[i].devfn >> 3,
			cases[i].devfn & 7, cases[i].off,
			ecam_in(&r.t, cases[i].bus, cases[i].devfn, cases[i].off), cases[i].want);
	/* nothing there is writable, and a write does not spill into 0x00 */
	iobus_write(r.t.host.mmio, 0xb0000000ull | 1 << 20 | 0x100, &(uint32_t){0x12345678}, 4);
	ck_assert_uint_eq(ecam_in(&r.t, 1, 0, 0x100), 0);
	ck_assert_uint_eq(ecam_in(&r.t, 1, 0, 0), 0x10421af4u);
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


/* ------------------------------------------------------------ hot-plug */

#define CAP 0x40 /* the PCIe capability */
#define SLTCTL (CAP + 0x18)
#define SLTSTA (CAP + 0x1a)
#define LNKSTA (CAP + 0x12)
#define HP_ENABLES 0x103b /* DLLSCE, HPIE, CCIE, PDCE, ABPE */
#define PCC 0x0400
#define PIC_ON 0x0100
#define PIC_BLINK 0x0200
#define PIC_OFF 0x0300
#define AIC_OFF 0x00c0
#define ABP 0x0001
#define PDC 0x0008
#define CC 0x0010
#define PDS 0x0040
#define DLLSC 0x0100
#define DLLLA 0x2000

static unsigned msi_cap(struct rig *r)
{
	unsigned c = cfg_in(&r->t, 0, RP, 0x34, 1);

	while (c && cfg_in(&r->t, 0, RP, c, 1) != 0x05)
		c = cfg_in(&r->t, 0, RP, c + 1, 1);
	ck_assert_uint_ne(c, 0);
	return c;
}

static void enable_msi(struct rig *r)
{
	unsigned c = msi_cap(r);

	cfg_out(&r->t, 0, RP, c + 4, 4, 0xfee00000u);
	cfg_out(&r->t, 0, RP, c + 8, 4, 0);
	cfg_out(&r->t, 0, RP, c + 12, 2, 0x4041);
	cfg_out(&r->t, 0, RP, c + 2, 2, 1);
}

static uint16_t sta(struct rig *r)
{
	return (uint16_t)cfg_in(&r->t, 0, RP, SLTSTA, 2);
}

static void ctl(struct rig *r, uint16_t v)
{
	cfg_out(&r->t, 0, RP, SLTCTL, 2, v);
}

/* The guest's interrupt handler: every change bit cleared. */
static void clear_changes(struct rig *r)
{
	cfg_out(&r->t, 0, RP, SLTSTA, 2, sta(r) & 0x011f);
	ck_assert_uint_eq(sta(r) & 0x011f, 0);
}

START_TEST(slot_power_at_reset)
{
	struct rig r;

	/* button, power controller, indicators, hot-plug capable, and
	 * command completion (no NCCS: pciehp waits for CC); occupied:
	 * powered, power indicator on, link up */
	rig_up(&r, 1);
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, CAP + 0x14, 4) & 0x4005b, 0x5b);
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, SLTCTL, 2), AIC_OFF | PIC_ON);
	ck_assert_uint_eq(sta(&r), PDS);
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, LNKSTA, 2) & DLLLA, DLLLA);
	rig_down(&r);
	/* empty: off, link down */
	rig_up_empty(&r);
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, SLTCTL, 2), AIC_OFF | PIC_OFF | PCC);
	ck_assert_uint_eq(sta(&r), 0);
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, LNKSTA, 2) & DLLLA, 0);
	rig_down(&r);
}
END_TEST

/* What pciehp does: add, power on, button, power off, removal. */
START_TEST(plug_and_guest_approved_unplug)
{
	struct rig r;

	rig_up_empty(&r);
	enable_msi(&r);
	/* enabling notification is a command: completed, one MSI */
	ctl(&r, HP_ENABLES | AIC_OFF | PIC_OFF | PCC);
	ck_assert_uint_eq(sta(&r), CC);
	ck_assert_uint_eq(n_msi, 1);
	ck_assert_uint_eq(last_msi_data, 0x4041);
	clear_changes(&r);

	/* a device arrives: presence changed, the button pressed (the OS
	 * enables button or presence events), the link down while unpowered */
	ck_assert_int_eq(pci_bus_add(pcie_root_port_bus(r.rp), &r.ep, 0), 0);
	pcie_root_port_plugged(r.rp);
	ck_assert_uint_eq(sta(&r), PDS | PDC | ABP);
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, LNKSTA, 2) & DLLLA, 0);
	ck_assert_uint_eq(n_msi, 2);
	clear_changes(&r);

	/* the guest powers it on: command completed, link up */
	ctl(&r, HP_ENABLES | AIC_OFF | PIC_ON);
	ck_assert_uint_eq(sta(&r), PDS | CC | DLLSC);
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, LNKSTA, 2) & DLLLA, DLLLA);
	ck_assert_uint_eq(n_msi, 3);
	clear_changes(&r);

	/* device_del: the attention button */
	ck_assert(!pcie_root_port_unplug_pending(r.rp));
	ck_assert_int_eq(pcie_root_port_request_unplug(r.rp), 0);
	ck_assert(pcie_root_port_unplug_pending(r.rp));
	ck_assert_uint_eq(sta(&r), PDS | ABP);
	ck_assert_uint_eq(n_msi, 4);
	clear_changes(&r);
	/* the guest blinks; a second press now would cancel: refused */
	ctl(&r, HP_ENABLES | AIC_OFF | PIC_BLINK);
	ck_assert_int_eq(pcie_root_port_request_unplug(r.rp), -EBUSY);
	clear_changes(&r);
	/* power off with the indicator still blinking: not yet */
	ctl(&r, HP_ENABLES | AIC_OFF | PIC_BLINK | PCC);
	ck_assert_uint_eq(n_eject, 0);
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, LNKSTA, 2) & DLLLA, 0);
	clear_changes(&r);
	/* indicator off too: the machine is told to take the device */
	ctl(&r, HP_ENABLES | AIC_OFF | PIC_OFF | PCC);
	ck_assert_uint_eq(n_eject, 1);
	ck_assert(!pcie_root_port_unplug_pending(r.rp));
	clear_changes(&r);
	pci_bus_remove(&r.ep);
	pcie_root_port_unplugged(r.rp);
	ck_assert_uint_eq(sta(&r), PDC);
	/* the slot stays off: writing it again asks for nothing */
	ctl(&r, HP_ENABLES | AIC_OFF | PIC_OFF | PCC);
	ck_assert_uint_eq(n_eject, 1);
	ck_assert_int_eq(pcie_root_port_request_unplug(r.rp), -ENODEV);
	rig_down(&r);
}
END_TEST

START_TEST(power_off_without_request_keeps_device)
{
	struct rig r;

	rig_up(&r, 1);
	pcie_root_port_set_eject(r.rp, count_eject, NULL);
	n_eject = 0;
	ctl(&r, HP_ENABLES | AIC_OFF | PIC_OFF | PCC);
	ck_assert_uint_eq(n_eject, 0);
	ck_assert_uint_eq(cfg_in(&r.t, 0, RP, LNKSTA, 2) & DLLLA, 0);
	/* nothing runs in an unpowered slot: removal needs no guest */
	ck_assert_int_eq(pcie_root_port_request_unplug(r.rp), 1);
	rig_down(&r);
}
END_TEST

/* One MSI per all-clear (PCIe 6.7.3.4): events while one is pending
 * send nothing more; masked events send nothing. */
START_TEST(msi_once_until_cleared)
{
	struct rig r;

	rig_up(&r, 1);
	r.t.host.irq.msi = record_msi;
	n_msi = 0;
	enable_msi(&r);
	ctl(&r, HP_ENABLES | AIC_OFF | PIC_ON);
	ck_assert_uint_eq(n_msi, 1); /* CC */
	ctl(&r, HP_ENABLES | AIC_OFF | PIC_ON);
	ck_assert_uint_eq(n_msi, 1); /* CC still set */
	ck_assert_int_eq(pcie_root_port_request_unplug(r.rp), 0);
	ck_assert_uint_eq(n_msi, 1);
	clear_changes(&r);
	ctl(&r, HP_ENABLES | AIC_OFF | PIC_ON);
	ck_assert_uint_eq(n_msi, 2);
	clear_changes(&r);
	/* HPIE off: change bits latch, no interrupt */
	ctl(&r, AIC_OFF | PIC_ON);
	ck_assert_uint_eq(sta(&r) & CC, CC);
	ck_assert_uint_eq(n_msi, 2);
	rig_down(&r);
}
END_TEST

START_TEST(intx_without_msi)
{
	struct rig r;

	rig_up_empty(&r);
	ctl(&r, HP_ENABLES | AIC_OFF | PIC_OFF | PCC);
	/* the port's INTA in slot 2: PIRQG, GSI 22, held while CC is set */
	ck_assert(r.t.level[22]);
	clear_changes(&r);
	ck_assert(!r.t.level[22]);
	ck_assert_int_eq(pci_bus_add(pcie_root_port_bus(r.rp), &r.ep, 0), 0);
	pcie_root_port_plugged(r.rp);
	ck_assert(r.t.level[22]);
	clear_changes(&r);
	ck_assert(!r.t.level[22]);
	ck_assert_uint_eq(n_msi, 0);
	rig_down(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pcie_root_port");
	TCase *tc = tcase_create("pcie_root_port");

	tcase_add_test(tc, bridge_header_and_pcie_cap);
	tcase_add_test(tc, secondary_bus_by_number);
	tcase_add_test(tc, extended_config_space);
	tcase_add_test(tc, intx_swizzles_through_the_port);
	tcase_add_test(tc, slot_power_at_reset);
	tcase_add_test(tc, plug_and_guest_approved_unplug);
	tcase_add_test(tc, power_off_without_request_keeps_device);
	tcase_add_test(tc, msi_once_until_cleared);
	tcase_add_test(tc, intx_without_msi);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
