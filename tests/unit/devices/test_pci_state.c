/* Unit tests for PCI snapshots (pci_state.c): a device whose BARs, command
 * register and INTx line the guest set up is saved and loaded into the
 * same device on a second host; there its BAR answers at the programmed
 * port and its interrupt line is driven again. A tree from a different
 * device, or a 0xcf8/0xcf9 value the ports could never hold, is refused. */
#include <check.h>
#include <libfdt.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "state/state.h"
#include "tests/unit/devices/pc_host.h"
#include "tests/unit/devices/state_tree.h"

#define DEVFN (3 << 3)
#define BAR_PORT 0xc040
#define GSI 11

struct rig {
	struct fake_host t;
	struct pci_bus *bus;
	struct pci_dev dev;
	uint8_t reg; /* the BAR's one register */
};

static void bar_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct rig *r = opaque;

	(void)off;
	memset(data, 0, size);
	*(uint8_t *)data = r->reg;
}

static void bar_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	(void)off;
	(void)size;
	((struct rig *)opaque)->reg = *(const uint8_t *)data;
}

static const struct io_ops bar_ops = {bar_read, bar_write};

static int route_all(void *opaque, unsigned slot, unsigned pin)
{
	(void)opaque;
	(void)slot;
	(void)pin;
	return GSI;
}

static void rig_init(struct rig *r, uint16_t device)
{
	memset(r, 0, sizeof(*r));
	test_host_init(&r->t);
	r->bus = pci_bus_new(&r->t.host);
	pci_bus_set_route(r->bus, route_all, NULL);
	pci_dev_init(&r->dev, "test-dev", 0x1234, device, 0xff0000, 1);
	r->dev.cfg[0x3d] = 1; /* INTA */
	pci_dev_set_bar(&r->dev, 0, 64, true, &bar_ops, r);
	ck_assert_int_eq(pci_bus_add(r->bus, &r->dev, DEVFN), 0);
}

static void rig_fini(struct rig *r)
{
	pci_bus_free(r->bus);
	test_host_fini(&r->t);
}

static void cfg_out(struct rig *r, unsigned off, unsigned size, uint32_t v)
{
	pio_out(&r->t, 0xcf8, 4, 0x80000000u | DEVFN << 8 | (off & 0xfc));
	pio_out(&r->t, (uint16_t)(0xcfc + (off & 3)), size, v);
}

/* The device and the host bridge's latches, as the machine saves them. */
static void save_rig(void *opaque, struct state_writer *w)
{
	struct rig *r = opaque;

	pci_bus_save(r->bus, w);
	state_begin(w, "test-dev@3", 1);
	pci_dev_save(&r->dev, w);
	state_end(w);
}

static int load_rig(void *opaque, const struct state_reader *sr, char *e, size_t elen)
{
	struct rig *r = opaque;
	struct state_node n;

	if (pci_bus_load(r->bus, sr, e, elen) < 0 ||
	    state_node_open(&n, sr, "test-dev@3", 1, e, elen) < 0 || pci_dev_load(&r->dev, &n) < 0)
		return -1;
	return state_node_close(&n);
}

/* A guest's setup: BAR0 at BAR_PORT, I/O decoding on, INTx raised, and
 * 0xcf8 left pointing at the command register. */
static void program(struct rig *r)
{
	cfg_out(r, 0x10, 4, BAR_PORT);
	cfg_out(r, 0x04, 2, 0x0001);
	pio_out(&r->t, BAR_PORT, 1, 0x5a);
	pci_dev_set_irq(&r->dev, true);
	pio_out(&r->t, 0xcf8, 4, 0x80000000u | DEVFN << 8 | 0x04);
}

START_TEST(round_trip_maps_bars_and_drives_intx)
{
	struct rig a, b;
	size_t len;
	void *blob;

	rig_init(&a, 0x11);
	rig_init(&b, 0x11);
	program(&a);
	blob = save_tree(save_rig, &a, &len);
	ck_assert_uint_eq(pio_in(&b.t, BAR_PORT, 1), 0xff); /* nothing there yet */
	ck_assert_int_eq(load_tree(load_rig, &b, blob, len), 0);
	b.reg = a.reg; /* the register is the device's own, not config space */
	ck_assert_uint_eq(pio_in(&b.t, BAR_PORT, 1), 0x5a);
	ck_assert(b.t.level[GSI]);
	ck_assert_mem_eq(b.dev.cfg, a.dev.cfg, PCI_CFG_SPACE_SIZE);
	/* the 0xcf8 latch came along: a data read hits the command register */
	ck_assert_uint_eq(pio_in(&b.t, 0xcfc, 2), 0x0001);
	free(blob);
	rig_fini(&a);
	rig_fini(&b);
}
END_TEST

START_TEST(another_device_is_refused)
{
	struct rig a, b;
	size_t len;
	void *blob;

	rig_init(&a, 0x11);
	rig_init(&b, 0x12);
	program(&a);
	blob = save_tree(save_rig, &a, &len);
	ck_assert_int_eq(load_tree(load_rig, &b, blob, len), -1);
	ck_assert_str_eq(state_err, "state: /devices/test-dev@3: vendor/device id of test-dev "
				    "differs from the saved one");
	ck_assert_uint_eq(pio_in(&b.t, BAR_PORT, 1), 0xff);
	free(blob);
	rig_fini(&a);
	rig_fini(&b);
}
END_TEST

START_TEST(impossible_port_values_are_refused)
{
	struct rig a, b;
	size_t len;
	void *blob;

	rig_init(&a, 0x11);
	rig_init(&b, 0x11);
	blob = save_tree(save_rig, &a, &len);
	patch_u32(blob, "/devices/pci-host@cf8", "cfg-addr", 0x80000003u);
	ck_assert_int_eq(load_tree(load_rig, &b, blob, len), -1);
	ck_assert_str_eq(
		state_err,
		"state: /devices/pci-host@cf8: cfg-addr 0x80000003 has bits 0xcf8 never keeps");
	free(blob);
	blob = save_tree(save_rig, &a, &len);
	patch_u8(blob, "/devices/pci-host@cf8", "reset-control", 0x04);
	ck_assert_int_eq(load_tree(load_rig, &b, blob, len), -1);
	ck_assert_str_eq(
		state_err,
		"state: /devices/pci-host@cf8: reset-control 0x4 has bits 0xcf9 never keeps");
	free(blob);
	rig_fini(&a);
	rig_fini(&b);
}
END_TEST

static Suite *pci_state_suite(void)
{
	Suite *s = suite_create("pci_state");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, round_trip_maps_bars_and_drives_intx);
	tcase_add_test(tc, another_device_is_refused);
	tcase_add_test(tc, impossible_port_values_are_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(pci_state_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
