/* Unit tests for the 8259A pair through its ports: the ICW sequence,
 * IRR/ISR/IMR, priorities and rotation, specific and non-specific EOI,
 * AEOI, special mask, poll mode, the cascade on IRQ 2, spurious IRQ 7,
 * level triggering through the ELCR and `info pic`. */
#include <check.h>

#include "devices/dev_host.h"
#include "devices/intc/i8259.h"
#include "tests/unit/devices/pc_host.h"

struct pic_fixture {
	struct fake_host t;
	struct i8259 *pic;
	unsigned notified;
};

static void on_intr(void *opaque)
{
	struct pic_fixture *f = opaque;

	f->notified++;
}

/* The PC BIOS / Linux initialisation: vectors 0x20 and 0x28, cascade on
 * IRQ 2, 8086 mode; icw4 adds AEOI (0x02) or SFNM (0x10). */
static void pic_init(struct pic_fixture *f, uint8_t icw1, uint8_t icw4)
{
	test_host_init(&f->t);
	f->notified = 0;
	f->pic = i8259_new(&f->t.host, on_intr, f);
	ck_assert_ptr_nonnull(f->pic);
	pio_out(&f->t, 0x20, 1, icw1);
	pio_out(&f->t, 0x21, 1, 0x20);
	pio_out(&f->t, 0x21, 1, 0x04);
	pio_out(&f->t, 0x21, 1, icw4);
	pio_out(&f->t, 0xa0, 1, icw1);
	pio_out(&f->t, 0xa1, 1, 0x28);
	pio_out(&f->t, 0xa1, 1, 0x02);
	pio_out(&f->t, 0xa1, 1, icw4);
	pio_out(&f->t, 0x21, 1, 0x00);
	pio_out(&f->t, 0xa1, 1, 0x00);
}

static void pic_fini(struct pic_fixture *f)
{
	i8259_free(f->pic);
	test_host_fini(&f->t);
}

static void pulse(struct i8259 *p, unsigned irq)
{
	i8259_set_irq(p, irq, true);
	i8259_set_irq(p, irq, false);
}

static uint8_t read_isr(struct pic_fixture *f, uint16_t port)
{
	pio_out(&f->t, port, 1, 0x0b);
	return (uint8_t)pio_in(&f->t, port, 1);
}

static uint8_t read_irr(struct pic_fixture *f, uint16_t port)
{
	pio_out(&f->t, port, 1, 0x0a);
	return (uint8_t)pio_in(&f->t, port, 1);
}

START_TEST(icw_sequence_and_vectors)
{
	struct pic_fixture f;

	pic_init(&f, 0x11, 0x01);
	ck_assert(!i8259_intr(f.pic));
	pulse(f.pic, 1);
	ck_assert(i8259_intr(f.pic));
	ck_assert_uint_eq(f.notified, 1);
	ck_assert_int_eq(i8259_ack(f.pic), 0x21);
	ck_assert(!i8259_intr(f.pic));
	ck_assert_uint_eq(read_isr(&f, 0x20), 0x02);
	ck_assert_uint_eq(read_irr(&f, 0x20), 0x00);
	/* the slave's IRQ 12 arrives through IRQ 2 with the slave's base */
	pulse(f.pic, 12);
	pio_out(&f.t, 0x20, 1, 0x20); /* EOI for IRQ 1 */
	ck_assert(i8259_intr(f.pic));
	ck_assert_int_eq(i8259_ack(f.pic), 0x2c);
	ck_assert_uint_eq(read_isr(&f, 0x20), 0x04);
	ck_assert_uint_eq(read_isr(&f, 0xa0), 0x10);
	pio_out(&f.t, 0xa0, 1, 0x20);
	pio_out(&f.t, 0x20, 1, 0x20);
	ck_assert_uint_eq(read_isr(&f, 0x20) | read_isr(&f, 0xa0), 0);
	/* a second ICW1 clears IMR and ISR */
	pio_out(&f.t, 0x21, 1, 0xff);
	ck_assert_uint_eq(pio_in(&f.t, 0x21, 1), 0xff);
	pio_out(&f.t, 0x20, 1, 0x11);
	pio_out(&f.t, 0x21, 1, 0x08);
	pio_out(&f.t, 0x21, 1, 0x04);
	pio_out(&f.t, 0x21, 1, 0x01);
	ck_assert_uint_eq(pio_in(&f.t, 0x21, 1), 0x00);
	pulse(f.pic, 0);
	ck_assert_int_eq(i8259_ack(f.pic), 0x08);
	pic_fini(&f);
}
END_TEST

START_TEST(mask_priority_and_nesting)
{
	struct pic_fixture f;

	pic_init(&f, 0x11, 0x01);
	pio_out(&f.t, 0x21, 1, 0x08); /* mask IRQ 3 */
	pulse(f.pic, 3);
	ck_assert(!i8259_intr(f.pic));
	ck_assert_uint_eq(read_irr(&f, 0x20), 0x08);
	pulse(f.pic, 5);
	ck_assert_int_eq(i8259_ack(f.pic), 0x25);
	/* IRQ 6 (lower priority) waits while 5 is in service, 4 does not */
	pulse(f.pic, 6);
	ck_assert(!i8259_intr(f.pic));
	pulse(f.pic, 4);
	ck_assert(i8259_intr(f.pic));
	ck_assert_int_eq(i8259_ack(f.pic), 0x24);
	/* non-specific EOI ends the highest in service (4), then 5 */
	pio_out(&f.t, 0x20, 1, 0x20);
	ck_assert_uint_eq(read_isr(&f, 0x20), 0x20);
	ck_assert(!i8259_intr(f.pic));
	pio_out(&f.t, 0x20, 1, 0x20);
	ck_assert_int_eq(i8259_ack(f.pic), 0x26);
	/* unmasking IRQ 3 delivers the latched request */
	pio_out(&f.t, 0x20, 1, 0x66); /* specific EOI for 6 */
	ck_assert_uint_eq(read_isr(&f, 0x20), 0);
	pio_out(&f.t, 0x21, 1, 0x00);
	ck_assert_int_eq(i8259_ack(f.pic), 0x23);
	pic_fini(&f);
}
END_TEST

START_TEST(rotation_and_set_priority)
{
	struct pic_fixture f;

	pic_init(&f, 0x11, 0x01);
	/* set priority: IRQ 4 lowest, so 5 is now the highest */
	pio_out(&f.t, 0x20, 1, 0xc4);
	pulse(f.pic, 1);
	pulse(f.pic, 6);
	ck_assert_int_eq(i8259_ack(f.pic), 0x26);
	/* rotate on non-specific EOI: 6 becomes the lowest, so 1 beats it */
	pio_out(&f.t, 0x20, 1, 0xa0);
	pulse(f.pic, 6);
	ck_assert_int_eq(i8259_ack(f.pic), 0x21);
	/* rotate on specific EOI 1: 2 is the highest, so 6 beats 0 */
	pio_out(&f.t, 0x20, 1, 0xe1);
	pulse(f.pic, 0);
	ck_assert_int_eq(i8259_ack(f.pic), 0x26);
	pio_out(&f.t, 0x20, 1, 0x20);
	ck_assert_int_eq(i8259_ack(f.pic), 0x20);
	pic_fini(&f);
}
END_TEST

START_TEST(auto_eoi_and_rotation)
{
	struct pic_fixture f;

	pic_init(&f, 0x11, 0x03); /* AEOI */
	pulse(f.pic, 3);
	ck_assert_int_eq(i8259_ack(f.pic), 0x23);
	ck_assert_uint_eq(read_isr(&f, 0x20), 0);
	/* with nothing in service a lower priority line gets through */
	pulse(f.pic, 7);
	ck_assert_int_eq(i8259_ack(f.pic), 0x27);
	/* rotate in AEOI mode: each acknowledged IRQ becomes the lowest */
	pio_out(&f.t, 0x20, 1, 0x80);
	pulse(f.pic, 1);
	i8259_set_irq(f.pic, 0, true);
	ck_assert_int_eq(i8259_ack(f.pic), 0x20);
	pulse(f.pic, 0); /* line 0 was high: no new edge yet */
	pulse(f.pic, 0);
	ck_assert_int_eq(i8259_ack(f.pic), 0x21); /* 0 is now lowest */
	ck_assert_int_eq(i8259_ack(f.pic), 0x20);
	pic_fini(&f);
}
END_TEST

START_TEST(special_mask_mode)
{
	struct pic_fixture f;

	pic_init(&f, 0x11, 0x01);
	pulse(f.pic, 3); /* IRQ 3 in service */
	ck_assert_int_eq(i8259_ack(f.pic), 0x23);
	pulse(f.pic, 5);
	ck_assert(!i8259_intr(f.pic));
	/* special mask + mask the in-service level: 5 may interrupt 3 */
	pio_out(&f.t, 0x21, 1, 0x08);
	pio_out(&f.t, 0x20, 1, 0x68);
	ck_assert(i8259_intr(f.pic));
	ck_assert_int_eq(i8259_ack(f.pic), 0x25);
	/* reset special mask: 3 blocks lower levels again */
	pio_out(&f.t, 0x20, 1, 0x65); /* specific EOI 5 */
	pio_out(&f.t, 0x20, 1, 0x48);
	pulse(f.pic, 6);
	ck_assert(!i8259_intr(f.pic));
	pic_fini(&f);
}
END_TEST

START_TEST(poll_mode)
{
	struct pic_fixture f;

	pic_init(&f, 0x11, 0x01);
	pio_out(&f.t, 0x20, 1, 0x0c); /* OCW3 poll */
	ck_assert_uint_eq(pio_in(&f.t, 0x20, 1), 0x00);
	pulse(f.pic, 4);
	pio_out(&f.t, 0x20, 1, 0x0c);
	ck_assert_uint_eq(pio_in(&f.t, 0x20, 1), 0x84);
	ck_assert_uint_eq(read_isr(&f, 0x20), 0x10);
	ck_assert(!i8259_intr(f.pic));
	/* poll is one read only: the next read is the IRR/ISR again */
	ck_assert_uint_eq(pio_in(&f.t, 0x20, 1), 0x10);
	pic_fini(&f);
}
END_TEST

START_TEST(spurious_irq7)
{
	struct pic_fixture f;

	pic_init(&f, 0x11, 0x01);
	/* the line rose, INTR went up, and the request vanished (masked) */
	pulse(f.pic, 5);
	ck_assert(i8259_intr(f.pic));
	pio_out(&f.t, 0x21, 1, 0x20);
	ck_assert_int_eq(i8259_ack(f.pic), 0x27);
	ck_assert_uint_eq(read_isr(&f, 0x20), 0); /* no ISR bit for it */
	/* same on the slave: the master sees IRQ 2, the slave has nothing */
	pio_out(&f.t, 0x21, 1, 0x00);
	pulse(f.pic, 9);
	pio_out(&f.t, 0xa1, 1, 0x02);
	ck_assert_int_eq(i8259_ack(f.pic), 0x2f);
	pic_fini(&f);
}
END_TEST

START_TEST(level_triggered_through_elcr)
{
	struct pic_fixture f;

	pic_init(&f, 0x11, 0x01);
	/* IRQ 0-2 (master) and 8, 13 (slave) cannot be level */
	pio_out(&f.t, 0x4d0, 1, 0xff);
	pio_out(&f.t, 0x4d1, 1, 0xff);
	ck_assert_uint_eq(pio_in(&f.t, 0x4d0, 1), 0xf8);
	ck_assert_uint_eq(pio_in(&f.t, 0x4d1, 1), 0xde);
	ck_assert_uint_eq(pio_in(&f.t, 0x4d0, 2), 0xdef8);
	pio_out(&f.t, 0x4d0, 2, 0x0800); /* only IRQ 11 level */
	i8259_set_irq(f.pic, 11, true);
	ck_assert_int_eq(i8259_ack(f.pic), 0x2b);
	pio_out(&f.t, 0xa0, 1, 0x20);
	pio_out(&f.t, 0x20, 1, 0x20);
	/* still asserted: requested again after EOI, no new edge needed */
	ck_assert(i8259_intr(f.pic));
	ck_assert_int_eq(i8259_ack(f.pic), 0x2b);
	i8259_set_irq(f.pic, 11, false);
	pio_out(&f.t, 0xa0, 1, 0x20);
	pio_out(&f.t, 0x20, 1, 0x20);
	ck_assert(!i8259_intr(f.pic));
	ck_assert_uint_eq(read_irr(&f, 0xa0), 0);
	/* an edge line held high is delivered once */
	i8259_set_irq(f.pic, 10, true);
	ck_assert_int_eq(i8259_ack(f.pic), 0x2a);
	pio_out(&f.t, 0xa0, 1, 0x20);
	pio_out(&f.t, 0x20, 1, 0x20);
	ck_assert(!i8259_intr(f.pic));
	ck_assert_uint_eq(i8259_irq_count(f.pic, 11), 1);
	ck_assert_uint_eq(i8259_irq_count(f.pic, 10), 1);
	pic_fini(&f);
}
END_TEST

START_TEST(special_fully_nested)
{
	struct pic_fixture f;

	pic_init(&f, 0x11, 0x11); /* SFNM */
	pulse(f.pic, 12);
	ck_assert_int_eq(i8259_ack(f.pic), 0x2c);
	/* a higher slave request interrupts the slave's own service */
	pulse(f.pic, 9);
	ck_assert(i8259_intr(f.pic));
	ck_assert_int_eq(i8259_ack(f.pic), 0x29);
	pic_fini(&f);
}
END_TEST

START_TEST(reset_and_info)
{
	struct pic_fixture f;
	char buf[256];
	size_t n;

	pic_init(&f, 0x11, 0x01);
	pio_out(&f.t, 0x21, 1, 0xfb);
	pio_out(&f.t, 0x4d1, 1, 0x0c);
	pulse(f.pic, 3);
	n = i8259_info(f.pic, buf, sizeof(buf));
	ck_assert_uint_lt(n, sizeof(buf));
	ck_assert_str_eq(buf, "pic0: irr=08 imr=fb isr=00 hprio=0 irq_base=20 rr_sel=0 elcr=00 "
			      "fnm=0\n"
			      "pic1: irr=00 imr=00 isr=00 hprio=0 irq_base=28 rr_sel=0 elcr=0c "
			      "fnm=0\n");
	ck_assert_uint_eq(i8259_info(f.pic, buf, 8), n);
	dev_reset_all(&f.t.host);
	ck_assert_uint_eq(pio_in(&f.t, 0x21, 1), 0);
	ck_assert_uint_eq(pio_in(&f.t, 0x4d1, 1), 0);
	ck_assert_uint_eq(i8259_irq_count(f.pic, 3), 0);
	pic_fini(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("i8259");
	TCase *tc = tcase_create("i8259");

	tcase_add_test(tc, icw_sequence_and_vectors);
	tcase_add_test(tc, mask_priority_and_nesting);
	tcase_add_test(tc, rotation_and_set_priority);
	tcase_add_test(tc, auto_eoi_and_rotation);
	tcase_add_test(tc, special_mask_mode);
	tcase_add_test(tc, poll_mode);
	tcase_add_test(tc, spurious_irq7);
	tcase_add_test(tc, level_triggered_through_elcr);
	tcase_add_test(tc, special_fully_nested);
	tcase_add_test(tc, reset_and_info);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
