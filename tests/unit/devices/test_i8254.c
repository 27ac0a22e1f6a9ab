/* Unit tests for the 8254 PIT on a fake clock: counting in modes 0-5,
 * lobyte/hibyte/word access, counter latch and read-back (count and
 * status), BCD, channel 2's gate and OUT through port 0x61, and IRQ 0
 * from the armed host timer: one edge per period, none while nothing is
 * programmed, coalesced and rate-limited for tiny periods. */
#include <check.h>

#include "devices/dev_host.h"
#include "devices/timer/i8254.h"
#include "tests/unit/devices/pc_host.h"

#define T0 1000000000ull /* the fake clock starts at 1 s */

struct pit_fixture {
	struct fake_host t;
	struct i8254 *pit;
	uint64_t now, deadline;
	unsigned arms;
};

static uint64_t fake_now(void *opaque)
{
	return ((struct pit_fixture *)opaque)->now;
}

static void fake_arm(void *opaque, uint64_t deadline)
{
	struct pit_fixture *f = opaque;

	f->deadline = deadline;
	f->arms++;
}

static void pit_init(struct pit_fixture *f)
{
	struct i8254_clock clk = {fake_now, fake_arm, f};

	memset(f, 0, sizeof(*f));
	test_host_init(&f->t);
	f->now = T0;
	f->pit = i8254_new(&f->t.host, &clk);
	ck_assert_ptr_nonnull(f->pit);
}

static void pit_fini(struct pit_fixture *f)
{
	i8254_free(f->pit);
	test_host_fini(&f->t);
}

/* The clock at `ticks` PIT ticks after t, rounded to land inside the tick. */
static uint64_t at_tick(uint64_t t, uint64_t ticks)
{
	return t + (ticks * 1000000000ull + 1193181) / 1193182 + 100;
}

/* Run the fake event loop until `until`: fire the timer at each deadline. */
static void run_until(struct pit_fixture *f, uint64_t until)
{
	while (f->deadline <= until) {
		f->now = f->deadline;
		i8254_timer(f->pit);
	}
	f->now = until;
}

static void program(struct pit_fixture *f, unsigned ch, uint8_t ctrl, uint16_t count)
{
	pio_out(&f->t, 0x43, 1, (uint32_t)ch << 6 | ctrl);
	if (((ctrl >> 4) & 3) != 2)
		pio_out(&f->t, (uint16_t)(0x40 + ch), 1, count & 0xff);
	if (((ctrl >> 4) & 3) != 1)
		pio_out(&f->t, (uint16_t)(0x40 + ch), 1, count >> 8);
}

static uint16_t read_word(struct pit_fixture *f, unsigned ch)
{
	uint16_t lo = (uint16_t)pio_in(&f->t, (uint16_t)(0x40 + ch), 1);

	return (uint16_t)(lo | pio_in(&f->t, (uint16_t)(0x40 + ch), 1) << 8);
}

START_TEST(no_timer_until_programmed)
{
	struct pit_fixture f;

	pit_init(&f);
	ck_assert_uint_eq(f.deadline, UINT64_MAX);
	f.now += 5000000000ull;
	ck_assert_uint_eq(f.t.raised[0], 0);
	pit_fini(&f);
}
END_TEST

START_TEST(mode2_rate_generator_irq0)
{
	struct pit_fixture f;
	uint64_t start;

	pit_init(&f);
	/* channel 0, word, mode 2, 1193 ticks (~1 ms), as Linux's HZ=1000 */
	program(&f, 0, 0x34, 1193);
	start = f.now;
	ck_assert_uint_eq(f.deadline, at_tick(start, 1193) - 100);
	run_until(&f, at_tick(start, 10 * 1193 + 5));
	ck_assert_uint_eq(f.t.raised[0], 10);
	ck_assert(!f.t.level[0]); /* a pulse, not a held line */
	/* the counter counts down from 1193, and OUT is high mid-period */
	f.now = at_tick(start, 10 * 1193 + 100);
	pio_out(&f.t, 0x43, 1, 0x00); /* latch channel 0 */
	ck_assert_uint_eq(read_word(&f, 0), 1193 - 100);
	ck_assert(i8254_out(f.pit, 0));
	/* the host went away for 50 periods: one interrupt, not 50 */
	run_until(&f, f.deadline - 1);
	f.now = at_tick(start, 61 * 1193 + 5);
	i8254_timer(f.pit);
	ck_assert_uint_eq(f.t.raised[0], 11);
	pit_fini(&f);
}
END_TEST

START_TEST(tiny_period_is_rate_limited)
{
	struct pit_fixture f;
	uint64_t start;

	pit_init(&f);
	program(&f, 0, 0x34, 1); /* one tick: 1.19 MHz */
	start = f.now;
	run_until(&f, start + 1000000);	      /* 1 ms */
	ck_assert_uint_le(f.t.raised[0], 21); /* at most one per 50 us */
	ck_assert_uint_ge(f.t.raised[0], 19);
	pit_fini(&f);
}
END_TEST

START_TEST(mode0_terminal_count)
{
	struct pit_fixture f;
	uint64_t start;

	pit_init(&f);
	program(&f, 0, 0x30, 1000);
	start = f.now;
	ck_assert(!i8254_out(f.pit, 0));
	f.now = at_tick(start, 400);
	ck_assert_uint_eq(read_word(&f, 0), 600);
	run_until(&f, at_tick(start, 5000));
	/* OUT0 rose once and stays high; the counter wrapped */
	ck_assert_uint_eq(f.t.raised[0], 1);
	ck_assert(f.t.level[0]);
	ck_assert(i8254_out(f.pit, 0));
	ck_assert_uint_eq(f.deadline, UINT64_MAX);
	f.now = at_tick(start, 1010);
	ck_assert_uint_eq(read_word(&f, 0), 65526);
	/* a new control word drops OUT0 */
	pio_out(&f.t, 0x43, 1, 0x30);
	ck_assert(!f.t.level[0]);
	pit_fini(&f);
}
END_TEST

START_TEST(mode3_square_wave_and_mode4_strobe)
{
	struct pit_fixture f;
	uint64_t start;

	pit_init(&f);
	program(&f, 1, 0x36, 100); /* channel 1, mode 3 */
	start = f.now;
	f.now = at_tick(start, 20);
	ck_assert(i8254_out(f.pit, 1));
	ck_assert_uint_eq(read_word(&f, 1), 60);
	f.now = at_tick(start, 70);
	ck_assert(!i8254_out(f.pit, 1));
	f.now = at_tick(start, 130);
	ck_assert(i8254_out(f.pit, 1));
	/* mode 4: high, low for one tick at the terminal count */
	program(&f, 1, 0x38, 50);
	start = f.now;
	f.now = at_tick(start, 49);
	ck_assert(i8254_out(f.pit, 1));
	f.now = at_tick(start, 50);
	ck_assert(!i8254_out(f.pit, 1));
	f.now = at_tick(start, 51);
	ck_assert(i8254_out(f.pit, 1));
	/* 6 and 7 are aliases of modes 2 and 3 */
	pio_out(&f.t, 0x43, 1, 0x7e);
	pio_out(&f.t, 0x43, 1, 0xe4); /* read-back status of channel 1 */
	ck_assert_uint_eq(pio_in(&f.t, 0x41, 1) & 0x0f, 0x06);
	pit_fini(&f);
}
END_TEST

START_TEST(access_modes_latch_and_readback)
{
	struct pit_fixture f;
	uint64_t start;

	pit_init(&f);
	program(&f, 1, 0x14, 0x34); /* LSB only, mode 2 */
	start = f.now;
	f.now = at_tick(start, 4);
	ck_assert_uint_eq(pio_in(&f.t, 0x41, 1), 0x30);
	program(&f, 1, 0x24, 0x1200); /* MSB only */
	start = f.now;
	f.now = at_tick(start, 0x100);
	ck_assert_uint_eq(pio_in(&f.t, 0x41, 1), 0x11);
	/* word: a latch holds the value however long the reads take */
	program(&f, 2, 0xb0, 0x2000); /* channel 2, mode 0, gate from port B */
	pio_out(&f.t, 0x61, 1, 0x01);
	start = f.now;
	f.now = at_tick(start, 0x10);
	pio_out(&f.t, 0x43, 1, 0x80);
	f.now = at_tick(start, 0x200);
	pio_out(&f.t, 0x43, 1, 0x80); /* ignored: the first latch holds */
	f.now = at_tick(start, 0x500);
	ck_assert_uint_eq(read_word(&f, 2), 0x1ff0);
	/* read-back: status then count; status has OUT, null count, rw, mode */
	pio_out(&f.t, 0x43, 1, 0xc8); /* count + status of channel 2 */
	ck_assert_uint_eq(pio_in(&f.t, 0x42, 1), 0x30);
	ck_assert_uint_eq(read_word(&f, 2), 0x2000 - 0x500);
	pio_out(&f.t, 0x43, 1, 0xb0); /* new control word: null count */
	pio_out(&f.t, 0x43, 1, 0xe8);
	ck_assert_uint_eq(pio_in(&f.t, 0x42, 1), 0x70);
	/* BCD: count 1000 decimal */
	program(&f, 1, 0x35, 0x1000);
	start = f.now;
	f.now = at_tick(start, 1);
	ck_assert_uint_eq(read_word(&f, 1), 0x0999);
	pit_fini(&f);
}
END_TEST

START_TEST(gate_and_speaker_port)
{
	struct pit_fixture f;
	uint64_t start;

	pit_init(&f);
	/* gate 2 low: mode 0 loads but does not count */
	program(&f, 2, 0xb0, 100);
	start = f.now;
	f.now = at_tick(start, 500);
	ck_assert_uint_eq(pio_in(&f.t, 0x61, 1) & 0x20, 0);
	ck_assert_uint_eq(read_word(&f, 2), 100);
	pio_out(&f.t, 0x61, 1, 0x03); /* gate + speaker on */
	start = f.now;
	f.now = at_tick(start, 50);
	ck_assert_uint_eq(read_word(&f, 2), 50);
	pio_out(&f.t, 0x61, 1, 0x02); /* pause at 50 */
	f.now = at_tick(f.now, 1000);
	ck_assert_uint_eq(read_word(&f, 2), 50);
	pio_out(&f.t, 0x61, 1, 0x03); /* resume */
	start = f.now;
	f.now = at_tick(start, 60);
	ck_assert_uint_eq(pio_in(&f.t, 0x61, 1) & 0x2f, 0x23); /* OUT2 high */
	/* mode 1: the gate's rising edge triggers the one-shot */
	program(&f, 2, 0xb2, 30);
	ck_assert(i8254_out(f.pit, 2));
	pio_out(&f.t, 0x61, 1, 0x00);
	pio_out(&f.t, 0x61, 1, 0x01);
	start = f.now;
	f.now = at_tick(start, 10);
	ck_assert(!i8254_out(f.pit, 2));
	f.now = at_tick(start, 31);
	ck_assert(i8254_out(f.pit, 2));
	/* refresh toggle: bit 4 flips every ~15 us */
	{
		uint8_t a = (uint8_t)pio_in(&f.t, 0x61, 1);

		f.now += 15085;
		ck_assert_uint_ne(a & 0x10, pio_in(&f.t, 0x61, 1) & 0x10);
	}
	pit_fini(&f);
}
END_TEST

START_TEST(reset_stops_the_timer)
{
	struct pit_fixture f;

	pit_init(&f);
	program(&f, 0, 0x34, 1193);
	ck_assert_uint_ne(f.deadline, UINT64_MAX);
	dev_reset_all(&f.t.host);
	ck_assert_uint_eq(f.deadline, UINT64_MAX);
	pit_fini(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("i8254");
	TCase *tc = tcase_create("i8254");

	tcase_add_test(tc, no_timer_until_programmed);
	tcase_add_test(tc, mode2_rate_generator_irq0);
	tcase_add_test(tc, tiny_period_is_rate_limited);
	tcase_add_test(tc, mode0_terminal_count);
	tcase_add_test(tc, mode3_square_wave_and_mode4_strobe);
	tcase_add_test(tc, access_modes_latch_and_readback);
	tcase_add_test(tc, gate_and_speaker_port);
	tcase_add_test(tc, reset_stops_the_timer);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
