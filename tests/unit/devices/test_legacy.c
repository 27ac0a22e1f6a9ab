/* Unit tests for the small PC legacy devices: system control port A
 * (0x92), the 8237 DMA registers, quiet absent ports, and the PIIX reset
 * control register (0xcf9) on the PCI bus. */
#include <check.h>

#include "devices/dev_host.h"
#include "devices/isa/dma8237.h"
#include "devices/isa/isa_empty.h"
#include "devices/isa/port80.h"
#include "devices/isa/port92.h"
#include "devices/pci/pci.h"
#include "tests/unit/devices/pc_host.h"

static unsigned resets;

static void count_reset(void *opaque)
{
	resets++;
}

START_TEST(port92_a20_and_reset_edge)
{
	struct fake_host t;
	struct port92 *p;

	test_host_init(&t);
	resets = 0;
	p = port92_new(&t.host, count_reset, NULL);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(pio_in(&t, 0x92, 1), 0x02); /* A20 on */
	pio_out(&t, 0x92, 1, 0x00);
	ck_assert_uint_eq(pio_in(&t, 0x92, 1), 0x00);
	ck_assert_uint_eq(resets, 0);
	/* bit 0 going 0 -> 1 resets, staying 1 does not again */
	pio_out(&t, 0x92, 1, 0x03);
	ck_assert_uint_eq(resets, 1);
	pio_out(&t, 0x92, 1, 0x03);
	ck_assert_uint_eq(resets, 1);
	/* the machine reset puts the power-on value back, so the next
	 * reset request is an edge again */
	dev_reset_all(&t.host);
	ck_assert_uint_eq(pio_in(&t, 0x92, 1), 0x02);
	pio_out(&t, 0x92, 1, 0x03);
	ck_assert_uint_eq(resets, 2);
	/* a second device on the port is refused */
	ck_assert_ptr_null(port92_new(&t.host, count_reset, NULL));
	port92_free(p);
	test_host_fini(&t);
}
END_TEST

START_TEST(dma_registers)
{
	struct fake_host t;
	struct dma8237 *d;

	test_host_init(&t);
	d = dma8237_new(&t.host);
	ck_assert_ptr_nonnull(d);
	/* channel 2 address through the flip-flop: low byte, then high */
	pio_out(&t, 0x0c, 1, 0); /* clear flip-flop */
	pio_out(&t, 0x04, 1, 0x34);
	pio_out(&t, 0x04, 1, 0x12);
	pio_out(&t, 0x0c, 1, 0);
	ck_assert_uint_eq(pio_in(&t, 0x04, 1), 0x34);
	ck_assert_uint_eq(pio_in(&t, 0x04, 1), 0x12);
	/* masks: all set after reset, single-channel mask and clear */
	ck_assert_uint_eq(pio_in(&t, 0x0f, 1) & 0x0f, 0x0f);
	pio_out(&t, 0x0e, 1, 0); /* clear all masks */
	ck_assert_uint_eq(pio_in(&t, 0x0f, 1) & 0x0f, 0x00);
	pio_out(&t, 0x0a, 1, 0x06); /* mask channel 2 */
	ck_assert_uint_eq(pio_in(&t, 0x0f, 1) & 0x0f, 0x04);
	/* status: nothing requested, nothing finished */
	ck_assert_uint_eq(pio_in(&t, 0x08, 1), 0);
	/* master clear resets the controller */
	pio_out(&t, 0x0d, 1, 0);
	ck_assert_uint_eq(pio_in(&t, 0x0f, 1) & 0x0f, 0x0f);
	ck_assert_uint_eq(pio_in(&t, 0x04, 1), 0);
	/* the second controller on even ports: channel 4 cascade as SeaBIOS
	 * sets it up (mode 0xc0 at 0xd6, unmask at 0xd4) */
	pio_out(&t, 0xda, 1, 0);
	pio_out(&t, 0xd6, 1, 0xc0);
	pio_out(&t, 0xd4, 1, 0x00);
	ck_assert_uint_eq(pio_in(&t, 0xde, 1) & 0x0f, 0x0e);
	ck_assert_uint_eq(pio_in(&t, 0xd5, 1), 0xff); /* odd ports decode nothing */
	/* page registers keep what is written; 0x80 is not theirs */
	pio_out(&t, 0x81, 1, 0x12);
	pio_out(&t, 0x8f, 1, 0x34);
	ck_assert_uint_eq(pio_in(&t, 0x81, 1), 0x12);
	ck_assert_uint_eq(pio_in(&t, 0x8f, 1), 0x34);
	ck_assert_int_eq(port80_new(&t.host), 0);
	dev_reset_all(&t.host);
	ck_assert_uint_eq(pio_in(&t, 0x81, 1), 0);
	dma8237_free(d);
	test_host_fini(&t);
}
END_TEST

START_TEST(absent_ports_read_all_ones)
{
	struct fake_host t;

	test_host_init(&t);
	ck_assert_int_eq(isa_empty_new(t.host.pio, 0x378, 8, "lpt1 (absent)"), 0);
	/* an LPT probe: the data latch does not read back */
	pio_out(&t, 0x378, 1, 0xaa);
	ck_assert_uint_eq(pio_in(&t, 0x378, 1), 0xff);
	ck_assert_uint_eq(pio_in(&t, 0x37a, 2), 0xffff);
	/* overlapping an existing region is refused */
	ck_assert_int_eq(isa_empty_new(t.host.pio, 0x37c, 8, "x"), -EEXIST);
	/* the same on the MMIO bus: the VGA window without a VGA */
	ck_assert_int_eq(isa_empty_new(t.host.mmio, 0xa0000, 0x20000, "vga (absent)"), 0);
	{
		uint32_t v = 0;

		ck_assert(iobus_read(t.host.mmio, 0xb8000, &v, 4));
		ck_assert_uint_eq(v, 0xffffffffu);
		ck_assert(iobus_write(t.host.mmio, 0xbfffc, &v, 4));
		ck_assert(!iobus_read(t.host.mmio, 0xc0000, &v, 4));
	}
	test_host_fini(&t);
}
END_TEST

START_TEST(pci_reset_control_register)
{
	struct fake_host t;
	struct pci_bus *bus;

	test_host_init(&t);
	resets = 0;
	bus = pci_bus_new(&t.host);
	ck_assert_ptr_nonnull(bus);
	pci_bus_set_reset(bus, count_reset, NULL);
	/* hard reset selected, then the CPU reset bit */
	pio_out(&t, 0xcf9, 1, 0x02);
	ck_assert_uint_eq(resets, 0);
	ck_assert_uint_eq(pio_in(&t, 0xcf9, 1), 0x02);
	pio_out(&t, 0xcf9, 1, 0x06);
	ck_assert_uint_eq(resets, 1);
	ck_assert_uint_eq(pio_in(&t, 0xcf9, 1), 0x02); /* bit 2 does not stick */
	/* the 0xcf8 address register is untouched by byte accesses */
	pio_out(&t, 0xcf8, 4, 0x80000000u);
	pio_out(&t, 0xcf9, 1, 0x00);
	ck_assert_uint_eq(pio_in(&t, 0xcf8, 4), 0x80000000u);
	pci_bus_free(bus);
	test_host_fini(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("legacy");
	TCase *tc = tcase_create("legacy");

	tcase_add_test(tc, port92_a20_and_reset_edge);
	tcase_add_test(tc, dma_registers);
	tcase_add_test(tc, absent_ports_read_all_ones);
	tcase_add_test(tc, pci_reset_control_register);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
