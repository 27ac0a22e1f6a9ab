/* Unit tests for the 16550A model (devices/isa/serial.c) through its ports. */
#include <check.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/isa/serial.h"
#include "tests/unit/check_run.h"

static struct dev_host host;
static int irq_level = -1, irq_changes;
static char sent[64];
static size_t n_sent;

static void set_level(void *opaque, unsigned gsi, bool level)
{
	ck_assert_uint_eq(gsi, 4);
	irq_level = level;
	irq_changes++;
}

static void out(void *opaque, const uint8_t *buf, size_t len)
{
	memcpy(sent + n_sent, buf, len);
	n_sent += len;
}

static struct serial *setup(void)
{
	struct char_backend be = {out, NULL, NULL};

	memset(&host, 0, sizeof(host));
	host.pio = iobus_new("io");
	host.irq.set_level = set_level;
	irq_level = -1;
	irq_changes = 0;
	n_sent = 0;
	return serial_new(&host, 0x3f8, 4, &be);
}

static uint8_t rd(unsigned reg)
{
	uint8_t v = 0;

	iobus_read(host.pio, 0x3f8 + reg, &v, 1);
	return v;
}

static void wr(unsigned reg, uint8_t v)
{
	iobus_write(host.pio, 0x3f8 + reg, &v, 1);
}

START_TEST(transmit_and_lsr)
{
	struct serial *s = setup();

	ck_assert_uint_eq(rd(5) & 0x60, 0x60); /* THRE and TEMT */
	wr(0, 'h');
	wr(0, 'i');
	ck_assert_uint_eq(n_sent, 2);
	ck_assert(!memcmp(sent, "hi", 2));
	ck_assert_uint_eq(rd(2) & 0x0f, 0x01); /* no interrupt pending */
	serial_free(s);
	iobus_free(host.pio);
}
END_TEST

START_TEST(receive_fifo_and_interrupts)
{
	struct serial *s = setup();
	uint8_t many[20];

	wr(2, 0x01); /* FIFO on, trigger 1 */
	wr(1, 0x01); /* receive interrupt */
	ck_assert_int_eq(serial_receive(s, (const uint8_t *)"ab", 2), 2);
	ck_assert_int_eq(irq_level, 1);
	ck_assert_uint_eq(rd(2), 0xc4); /* FIFO bits + RDA */
	ck_assert_uint_eq(rd(5) & 1, 1);
	ck_assert_uint_eq(rd(0), 'a');
	ck_assert_uint_eq(rd(0), 'b');
	ck_assert_uint_eq(rd(5) & 1, 0);
	ck_assert_int_eq(irq_level, 0);
	memset(many, 'x', sizeof(many));
	ck_assert_int_eq(serial_receive(s, many, sizeof(many)), 16); /* FIFO depth */
	ck_assert_int_eq(serial_can_receive(s), 0);
	serial_free(s);
	iobus_free(host.pio);
}
END_TEST

START_TEST(thre_interrupt_and_loopback)
{
	struct serial *s = setup();

	wr(1, 0x02); /* THRE interrupt: raised at once, THR is empty */
	ck_assert_int_eq(irq_level, 1);
	ck_assert_uint_eq(rd(2) & 0x0f, 0x02);
	ck_assert_int_eq(irq_level, 0); /* reading IIR acknowledged it */
	wr(1, 0);
	wr(4, 0x10 | 0x03); /* loopback, DTR, RTS */
	ck_assert_uint_eq(rd(6) & 0x30, 0x30); /* DSR, CTS follow DTR, RTS */
	wr(0, 'z');
	ck_assert_uint_eq(n_sent, 0); /* nothing on the line */
	ck_assert_uint_eq(rd(0), 'z');
	wr(3, 0x80); /* DLAB */
	wr(0, 0x01);
	wr(1, 0x00);
	ck_assert_uint_eq(rd(0), 0x01);
	wr(3, 0x03);
	wr(7, 0x5a);
	ck_assert_uint_eq(rd(7), 0x5a);
	serial_free(s);
	iobus_free(host.pio);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("devices_serial");
	TCase *tc = tcase_create("uart");

	tcase_add_test(tc, transmit_and_lsr);
	tcase_add_test(tc, receive_fifo_and_interrupts);
	tcase_add_test(tc, thre_interrupt_and_loopback);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
