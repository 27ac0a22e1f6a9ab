/* Unit tests for the snapshots of the PC's legacy devices: the i8042,
 * port 0x92, the i8257 DMA controllers, the ACPI PM block and pc-testdev. Each is
 * driven busy through its ports, saved, loaded into a fresh one on a
 * second host (pc-testdev too); every port then reads the same (and the SCI is driven
 * again). Trees with values the device could never hold are refused with
 * one line and leave the device as it was. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devices/isa/acpi_pm.h"
#include "devices/isa/dma8237.h"
#include "devices/isa/i8042.h"
#include "devices/isa/port92.h"
#include "devices/pci/pci.h"
#include "devices/testdev/pc_testdev.h"
#include "state/state.h"
#include "tests/unit/devices/pc_host.h"
#include "tests/unit/devices/state_tree.h"

#define PM_BASE 0x600
#define SCI 9

static void no_reset(void *opaque)
{
	(void)opaque;
}

static void no_poweroff(void *opaque)
{
	(void)opaque;
}

/* ------------------------------------------------------------ i8042 */

static void save_kbc(void *dev, struct state_writer *w)
{
	i8042_save(dev, w);
}

static int load_kbc(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return i8042_load(dev, r, e, elen);
}

START_TEST(i8042_round_trip)
{
	struct fake_host ta, tb;
	struct i8042 *a, *b;
	size_t len;
	void *blob;

	test_host_init(&ta);
	test_host_init(&tb);
	a = i8042_new(&ta.host, no_reset, NULL);
	b = i8042_new(&tb.host, no_reset, NULL);
	pio_out(&ta, 0x64, 1, 0x60); /* write command byte */
	pio_out(&ta, 0x60, 1, 0x61);
	pio_out(&ta, 0x60, 1, 0xf2); /* identify: ACK ab 83 queued */
	ck_assert_uint_eq(pio_in(&ta, 0x60, 1), 0xfa);
	pio_out(&ta, 0x64, 1, 0xd1); /* write output port: waits for data */
	blob = save_tree(save_kbc, a, &len);
	ck_assert_int_eq(load_tree(load_kbc, b, blob, len), 0);
	ck_assert_uint_eq(pio_in(&tb, 0x64, 1), pio_in(&ta, 0x64, 1));
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(pio_in(&tb, 0x60, 1), pio_in(&ta, 0x60, 1));
	pio_out(&ta, 0x60, 1, 0x01); /* the pending 0xd1 takes it on both */
	pio_out(&tb, 0x60, 1, 0x01);
	pio_out(&ta, 0x64, 1, 0xd0);
	pio_out(&tb, 0x64, 1, 0xd0);
	ck_assert_uint_eq(pio_in(&tb, 0x60, 1), 0x01);
	ck_assert_uint_eq(pio_in(&ta, 0x60, 1), 0x01);
	pio_out(&tb, 0x64, 1, 0x20);
	ck_assert_uint_eq(pio_in(&tb, 0x60, 1), 0x61);
	free(blob);
	i8042_free(a);
	i8042_free(b);
	test_host_fini(&ta);
	test_host_fini(&tb);
}
END_TEST

START_TEST(i8042_bad_trees)
{
	struct fake_host ta, tb;
	struct i8042 *a, *b;
	size_t len;
	void *blob;

	test_host_init(&ta);
	test_host_init(&tb);
	a = i8042_new(&ta.host, no_reset, NULL);
	b = i8042_new(&tb.host, no_reset, NULL);
	pio_out(&ta, 0x64, 1, 0xaa); /* self test: 0x55 queued */
	blob = save_tree(save_kbc, a, &len);
	patch_u32(blob, "/devices/i8042@60", "output-count", 0);
	ck_assert_int_eq(load_tree(load_kbc, b, blob, len), -1);
	ck_assert_str_eq(state_err, "state: /devices/i8042@60: status output-full disagrees "
				    "with output-count 0");
	patch_u32(blob, "/devices/i8042@60", "output-count", 5);
	ck_assert_int_eq(load_tree(load_kbc, b, blob, len), -1);
	ck_assert_str_eq(state_err,
			 "state: /devices/i8042@60: property 'output-count' is 5, at most 4");
	patch_u32(blob, "/devices/i8042@60", "output-count", 1);
	patch_u8(blob, "/devices/i8042@60", "pending-command", 0x20);
	ck_assert_int_eq(load_tree(load_kbc, b, blob, len), -1);
	ck_assert_str_eq(state_err,
			 "state: /devices/i8042@60: pending-command 0x20 takes no data byte");
	ck_assert_uint_eq(pio_in(&tb, 0x64, 1) & 1, 0); /* b unchanged: nothing queued */
	free(blob);
	i8042_free(a);
	i8042_free(b);
	test_host_fini(&ta);
	test_host_fini(&tb);
}
END_TEST

/* --------------------------------------------------------- port 0x92 */

static void save_p92(void *dev, struct state_writer *w)
{
	port92_save(dev, w);
}

static int load_p92(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return port92_load(dev, r, e, elen);
}

START_TEST(port92_round_trip_and_bad_value)
{
	struct fake_host ta, tb;
	struct port92 *a, *b;
	size_t len;
	void *blob;

	test_host_init(&ta);
	test_host_init(&tb);
	a = port92_new(&ta.host, no_reset, NULL);
	b = port92_new(&tb.host, no_reset, NULL);
	pio_out(&ta, 0x92, 1, 0x00); /* A20 off */
	blob = save_tree(save_p92, a, &len);
	ck_assert_uint_eq(pio_in(&tb, 0x92, 1), 0x02);
	ck_assert_int_eq(load_tree(load_p92, b, blob, len), 0);
	ck_assert_uint_eq(pio_in(&tb, 0x92, 1), 0x00);
	patch_u8(blob, "/devices/port92@92", "value", 0x04);
	pio_out(&tb, 0x92, 1, 0x02);
	ck_assert_int_eq(load_tree(load_p92, b, blob, len), -1);
	ck_assert_str_eq(state_err, "state: /devices/port92@92: property 'value' is 4, at most 3");
	ck_assert_uint_eq(pio_in(&tb, 0x92, 1), 0x02);
	free(blob);
	port92_free(a);
	port92_free(b);
	test_host_fini(&ta);
	test_host_fini(&tb);
}
END_TEST

/* -------------------------------------------------------------- DMA */

static void save_dma(void *dev, struct state_writer *w)
{
	dma8237_save(dev, w);
}

static int load_dma(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return dma8237_load(dev, r, e, elen);
}

START_TEST(dma_round_trip)
{
	static const uint16_t ports[] = {0x00, 0x01, 0x02, 0x03, 0x06, 0x07, 0x0f, 0xc0,
					 0xc2, 0xc6, 0xde, 0x81, 0x82, 0x87, 0x89, 0x8f};
	struct fake_host ta, tb;
	struct dma8237 *a, *b;
	size_t len;
	void *blob;

	test_host_init(&ta);
	test_host_init(&tb);
	a = dma8237_new(&ta.host);
	b = dma8237_new(&tb.host);
	pio_out(&ta, 0x0c, 1, 0); /* flip-flop low */
	pio_out(&ta, 0x02, 1, 0x34);
	pio_out(&ta, 0x02, 1, 0x12);
	pio_out(&ta, 0x03, 1, 0xff);
	pio_out(&ta, 0x03, 1, 0x0f);
	pio_out(&ta, 0xc4, 1, 0x78);
	pio_out(&ta, 0x0a, 1, 0x01); /* unmask 1 */
	pio_out(&ta, 0x82, 1, 0x0a);
	pio_out(&ta, 0x8f, 1, 0x5c);
	pio_out(&ta, 0x06, 1, 0x99); /* flip-flop left high */
	blob = save_tree(save_dma, a, &len);
	ck_assert_int_eq(load_tree(load_dma, b, blob, len), 0);
	for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++)
		for (int k = 0; k < 2; k++)
			ck_assert_uint_eq(pio_in(&tb, ports[i], 1), pio_in(&ta, ports[i], 1));
	patch_u8(blob, "/devices/dma@c0", "mask", 0x10);
	ck_assert_int_eq(load_tree(load_dma, b, blob, len), -1);
	ck_assert_str_eq(state_err, "state: /devices/dma@c0: property 'mask' is 16, at most 15");
	free(blob);
	dma8237_free(a);
	dma8237_free(b);
	test_host_fini(&ta);
	test_host_fini(&tb);
}
END_TEST

/* ---------------------------------------------------------- ACPI PM */

static void save_pm(void *dev, struct state_writer *w)
{
	acpi_pm_save(dev, w);
}

static int load_pm(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return acpi_pm_load(dev, r, e, elen);
}

static uint32_t pm_timer(struct fake_host *t)
{
	return pio_in(t, PM_BASE + ACPI_PM_TMR_OFF, 4);
}

START_TEST(acpi_pm_round_trip)
{
	struct fake_host ta, tb;
	struct acpi_pm *a, *b;
	uint32_t before, after;
	size_t len;
	void *blob;

	test_host_init(&ta);
	test_host_init(&tb);
	a = acpi_pm_new(&ta.host, PM_BASE, 5, no_poweroff, NULL);
	b = acpi_pm_new(&tb.host, PM_BASE, 5, no_poweroff, NULL);
	pio_out(&ta, PM_BASE + 2, 2, 0x0100); /* power button enabled */
	acpi_pm_power_button(a, SCI);
	ck_assert(ta.level[SCI]);
	before = pm_timer(&ta);
	blob = save_tree(save_pm, a, &len);
	ck_assert_int_eq(load_tree(load_pm, b, blob, len), 0);
	after = pm_timer(&tb);
	/* a few ms at most between the save and this read: 3.58 ticks/us */
	ck_assert_uint_lt((after - before) & 0xffffff, 3580u * 100);
	for (unsigned off = 0; off < 6; off += 2)
		ck_assert_uint_eq(pio_in(&tb, PM_BASE + off, 2), pio_in(&ta, PM_BASE + off, 2));
	ck_assert(tb.level[SCI]);
	pio_out(&tb, PM_BASE, 2, 0x0100); /* clear: the SCI drops on b */
	ck_assert(!tb.level[SCI]);
	free(blob);
	acpi_pm_free(a);
	acpi_pm_free(b);
	test_host_fini(&ta);
	test_host_fini(&tb);
}
END_TEST

/* A count far from the host's own: the destination's timer resumes there. */
START_TEST(acpi_pm_timer_resumes_from_saved_count)
{
	struct fake_host ta, tb;
	struct acpi_pm *a, *b;
	uint32_t saved, t1, t2;
	size_t len;
	void *blob;

	test_host_init(&ta);
	test_host_init(&tb);
	a = acpi_pm_new(&ta.host, PM_BASE, 5, no_poweroff, NULL);
	b = acpi_pm_new(&tb.host, PM_BASE, 5, no_poweroff, NULL);
	blob = save_tree(save_pm, a, &len);
	saved = (pm_timer(&ta) + 0x800000) & 0xffffff;
	patch(blob, "/devices/acpi-pm", "timer",
	      (const uint8_t[8]){0, 0, 0, 0, 0, saved >> 16, saved >> 8, saved}, 8);
	ck_assert_int_eq(load_tree(load_pm, b, blob, len), 0);
	t1 = pm_timer(&tb);
	ck_assert_uint_lt((t1 - saved) & 0xffffff, 3580u * 100);
	nanosleep(&(struct timespec){0, 2000000}, NULL);
	t2 = pm_timer(&tb);
	ck_assert_uint_gt((t2 - t1) & 0xffffff, 3580u); /* it runs: >= 1 ms of ticks */
	ck_assert_uint_lt((t2 - t1) & 0xffffff, 3580u * 200);
	/* a bad SCI line is refused */
	patch_u32(blob, "/devices/acpi-pm", "sci-irq", 30);
	ck_assert_int_eq(load_tree(load_pm, b, blob, len), -1);
	ck_assert_str_eq(state_err, "state: /devices/acpi-pm: sci-irq 30 is no ISA or IOAPIC line");
	free(blob);
	acpi_pm_free(a);
	acpi_pm_free(b);
	test_host_fini(&ta);
	test_host_fini(&tb);
}
END_TEST

/* ------------------------------------------------------- pc-testdev */

static void save_td(void *dev, struct state_writer *w)
{
	pc_testdev_save(dev, w);
}

static int load_td(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return pc_testdev_load(dev, r, e, elen);
}

START_TEST(pc_testdev_round_trip)
{
	struct fake_host ta, tb;
	struct pci_bus *ba, *bb;
	struct pc_testdev *a, *b;
	uint32_t v = 0xc0ffee, got = 0;
	size_t len;
	void *blob;

	test_host_init(&ta);
	test_host_init(&tb);
	ba = pci_bus_new(&ta.host);
	bb = pci_bus_new(&tb.host);
	a = pc_testdev_new(&ta.host, ba);
	b = pc_testdev_new(&tb.host, bb);
	pio_out(&ta, 0xe0, 4, 0x12345678);
	iobus_write(ta.host.mmio, 0xff000100u, &v, 4);
	blob = save_tree(save_td, a, &len);
	ck_assert_int_eq(load_tree(load_td, b, blob, len), 0);
	ck_assert_uint_eq(pio_in(&tb, 0xe0, 4), 0x12345678);
	iobus_read(tb.host.mmio, 0xff000100u, &got, 4);
	ck_assert_uint_eq(got, 0xc0ffee);
	free(blob);
	pc_testdev_free(a);
	pc_testdev_free(b);
	pci_bus_free(ba);
	pci_bus_free(bb);
	test_host_fini(&ta);
	test_host_fini(&tb);
}
END_TEST

static Suite *legacy_state_suite(void)
{
	Suite *s = suite_create("legacy_state");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, i8042_round_trip);
	tcase_add_test(tc, i8042_bad_trees);
	tcase_add_test(tc, port92_round_trip_and_bad_value);
	tcase_add_test(tc, dma_round_trip);
	tcase_add_test(tc, acpi_pm_round_trip);
	tcase_add_test(tc, acpi_pm_timer_resumes_from_saved_count);
	tcase_add_test(tc, pc_testdev_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return test_run_suite(legacy_state_suite());
}
