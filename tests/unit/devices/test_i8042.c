/* Unit tests for the i8042 model (devices/isa/i8042.c) through its ports. */
#include <check.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/isa/i8042.h"
#include "tests/unit/check_run.h"

static struct dev_host host;
static struct i8042 *kbc;
static int resets;

static void count_reset(void *opaque)
{
	resets++;
}

static void setup(void)
{
	memset(&host, 0, sizeof(host));
	host.pio = iobus_new("io");
	resets = 0;
	kbc = i8042_new(&host, count_reset, NULL);
	ck_assert_ptr_nonnull(kbc);
}

static void teardown(void)
{
	i8042_free(kbc);
	iobus_free(host.pio);
}

static uint8_t in(uint16_t port)
{
	uint8_t v = 0;

	ck_assert(iobus_read(host.pio, port, &v, 1));
	return v;
}

static void out(uint16_t port, uint8_t v)
{
	ck_assert(iobus_write(host.pio, port, &v, 1));
}

START_TEST(status_and_data_are_different_ports)
{
	/* A command to 0x64 is not a keyboard byte: reading the command
	 * byte gives it back, and the status says it came from 0x64. */
	ck_assert_uint_eq(in(0x64) & 0x01, 0);
	out(0x64, 0x20);
	ck_assert_uint_eq(in(0x64) & 0x09, 0x09); /* OBF, last write was a command */
	ck_assert_uint_eq(in(0x60), 0x45);
	ck_assert_uint_eq(in(0x64) & 0x01, 0);
	out(0x64, 0x60);
	out(0x60, 0x61);
	out(0x64, 0x20);
	ck_assert_uint_eq(in(0x60), 0x61);
	out(0x64, 0xaa);
	ck_assert_uint_eq(in(0x60), 0x55);
	ck_assert_uint_eq(in(0x64) & 0x04, 0x04); /* SYS after the self test */
}
END_TEST

START_TEST(keyboard_answers_like_a_ps2_keyboard)
{
	static const struct {
		uint8_t cmd;
		uint8_t reply[3];
		unsigned n;
	} cases[] = {
		{0xff, {0xfa, 0xaa}, 2},       /* reset: ack, self test passed */
		{0xf2, {0xfa, 0xab, 0x83}, 3}, /* identify: MF2 keyboard */
		{0xf5, {0xfa}, 1},
		{0xf4, {0xfa}, 1},
	};

	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		out(0x60, cases[c].cmd);
		for (unsigned i = 0; i < cases[c].n; i++) {
			ck_assert_uint_eq(in(0x64) & 0x01, 0x01);
			ck_assert_uint_eq(in(0x60), cases[c].reply[i]);
		}
		ck_assert_uint_eq(in(0x64) & 0x01, 0);
	}
	/* Set scancode set 2: ack for the command and for its argument. */
	out(0x60, 0xf0);
	ck_assert_uint_eq(in(0x60), 0xfa);
	out(0x60, 0x02);
	ck_assert_uint_eq(in(0x60), 0xfa);
	ck_assert_uint_eq(in(0x64) & 0x01, 0);
}
END_TEST

START_TEST(reset_line)
{
	out(0x64, 0xfe);
	ck_assert_int_eq(resets, 1);
	out(0x64, 0xd1);
	out(0x60, 0x02); /* bit 0 clear: reset */
	ck_assert_int_eq(resets, 2);
	out(0x64, 0xd1);
	out(0x60, 0x03);
	ck_assert_int_eq(resets, 2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("i8042");
	TCase *tc = tcase_create("ports");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, status_and_data_are_different_ports);
	tcase_add_test(tc, keyboard_answers_like_a_ps2_keyboard);
	tcase_add_test(tc, reset_line);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
