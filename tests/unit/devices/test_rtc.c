/* Unit tests for the MC146818 CMOS RTC through ports 0x70/0x71: the time
 * in BCD, binary and 12-hour forms, setting it with SET, UIP, registers
 * A-D, the periodic interrupt on IRQ 8 (event loop in a thread), reset,
 * and the CMOS bytes SeaBIOS reads. */
#include <check.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/timer/rtc.h"
#include "tests/unit/devices/pc_host.h"

static uint8_t cmos_read(struct fake_host *t, uint8_t idx)
{
	pio_out(t, 0x70, 1, idx);
	return (uint8_t)pio_in(t, 0x71, 1);
}

static void cmos_write(struct fake_host *t, uint8_t idx, uint8_t v)
{
	pio_out(t, 0x70, 1, idx);
	pio_out(t, 0x71, 1, v);
}

static int bcd(uint8_t v)
{
	return (v >> 4) * 10 + (v & 0x0f);
}

/* Seconds since the epoch from the registers, read in BCD or binary;
 * the year register counts from year0 (2000, or 1900 when the century
 * byte says 19). */
static time_t clock_seconds(struct fake_host *t, bool binary, int year0)
{
	int (*conv)(uint8_t) = binary ? NULL : bcd;
	uint8_t raw[6] = {cmos_read(t, 0), cmos_read(t, 2), cmos_read(t, 4),
			  cmos_read(t, 7), cmos_read(t, 8), cmos_read(t, 9)};
	int v[6];
	struct tm tm = {0};

	for (unsigned i = 0; i < 6; i++)
		v[i] = conv ? conv(raw[i]) : raw[i];
	tm.tm_sec = v[0];
	tm.tm_min = v[1];
	tm.tm_hour = v[2];
	tm.tm_mday = v[3];
	tm.tm_mon = v[4] - 1;
	tm.tm_year = year0 - 1900 + v[5];
	return timegm(&tm);
}

START_TEST(time_in_bcd_and_binary)
{
	struct fake_host t;
	struct rtc *r;
	time_t now;

	test_host_init(&t);
	r = rtc_new(&t.host);
	ck_assert_ptr_nonnull(r);
	/* default: BCD, 24-hour, the host's UTC time */
	ck_assert_uint_eq(cmos_read(&t, 0x0b) & 0x06, 0x02);
	now = time(NULL);
	ck_assert_int_le(labs((long)(clock_seconds(&t, false, 2000) - now)), 2);
	ck_assert_uint_eq(bcd(cmos_read(&t, 0x32)), 20); /* century */
	/* binary mode */
	cmos_write(&t, 0x0b, 0x06);
	now = time(NULL);
	ck_assert_int_le(labs((long)(clock_seconds(&t, true, 2000) - now)), 2);
	/* 12-hour mode: hour 1-12 with bit 7 for PM */
	cmos_write(&t, 0x0b, 0x04);
	{
		uint8_t h = cmos_read(&t, 4);
		struct tm tm;

		now = time(NULL);
		gmtime_r(&now, &tm);
		ck_assert_uint_ge(h & 0x7f, 1);
		ck_assert_uint_le(h & 0x7f, 12);
		ck_assert_uint_eq(!!(h & 0x80), tm.tm_hour >= 12);
	}
	rtc_free(r);
	test_host_fini(&t);
}
END_TEST

START_TEST(set_the_clock)
{
	struct fake_host t;
	struct rtc *r;
	struct tm tm = {.tm_year = 99,
			.tm_mon = 11,
			.tm_mday = 31,
			.tm_hour = 23,
			.tm_min = 59,
			.tm_sec = 50};
	time_t want = timegm(&tm), got;

	test_host_init(&t);
	r = rtc_new(&t.host);
	cmos_write(&t, 0x0b, 0x82); /* SET, 24h, BCD */
	cmos_write(&t, 0x00, 0x50);
	cmos_write(&t, 0x02, 0x59);
	cmos_write(&t, 0x04, 0x23);
	cmos_write(&t, 0x07, 0x31);
	cmos_write(&t, 0x08, 0x12);
	cmos_write(&t, 0x09, 0x99);
	cmos_write(&t, 0x32, 0x19);
	/* frozen while SET is held: no update in progress either */
	ck_assert_uint_eq(cmos_read(&t, 0x00), 0x50);
	ck_assert_uint_eq(cmos_read(&t, 0x0a) & 0x80, 0);
	cmos_write(&t, 0x0b, 0x02);
	/* the clock runs on from the time set (the century byte says 19) */
	got = clock_seconds(&t, false, 1900);
	ck_assert_int_le(labs((long)(got - want)), 2);
	ck_assert_uint_eq(cmos_read(&t, 0x32), 0x19);
	ck_assert_uint_eq(cmos_read(&t, 0x09), 0x99);
	rtc_free(r);
	test_host_fini(&t);
}
END_TEST

START_TEST(uip_shows_the_update_cycle)
{
	struct fake_host t;
	struct rtc *r;
	bool seen_set = false, seen_clear = false;
	struct timespec t0, now;

	test_host_init(&t);
	r = rtc_new(&t.host);
	ck_assert_uint_eq(cmos_read(&t, 0x0a) & 0x7f, 0x26); /* divider on, 1024 Hz */
	/* UIP is set only in the 244 us before a second boundary (allow 2 ms
	 * of slack for the reads around it). A loaded host tends to preempt
	 * right at second boundaries, so give it up to 10 windows. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		struct timespec before, after;
		uint8_t a;

		clock_gettime(CLOCK_REALTIME, &before);
		a = cmos_read(&t, 0x0a);
		clock_gettime(CLOCK_REALTIME, &after);
		if (a & 0x80 && before.tv_sec == after.tv_sec)
			ck_assert_int_ge(after.tv_nsec, 1000000000L - 244000 - 2000000);
		seen_set |= a & 0x80;
		seen_clear |= !(a & 0x80);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (!(seen_set && seen_clear) &&
		 (now.tv_sec - t0.tv_sec) * 1000000000L + (now.tv_nsec - t0.tv_nsec) <
			 10000000000L);
	ck_assert(seen_set);
	ck_assert(seen_clear);
	/* with the divider stopped there is no update cycle */
	cmos_write(&t, 0x0a, 0x76);
	for (unsigned i = 0; i < 20000; i++)
		ck_assert_uint_eq(cmos_read(&t, 0x0a) & 0x80, 0);
	/* UIP is read-only */
	cmos_write(&t, 0x0a, 0xa6);
	ck_assert_uint_eq(rtc_cmos_get(r, 0x0a) & 0x7f, 0x26);
	rtc_free(r);
	test_host_fini(&t);
}
END_TEST

static void *run_loop(void *arg)
{
	evloop_run(arg);
	return NULL;
}

START_TEST(periodic_interrupt_and_register_c)
{
	struct fake_host t;
	struct rtc *r;
	pthread_t th;
	uint8_t c;

	test_host_init(&t);
	t.host.loop = evloop_new();
	ck_assert_ptr_nonnull(t.host.loop);
	r = rtc_new(&t.host);
	ck_assert_uint_eq(cmos_read(&t, 0x0d), 0x80); /* battery good */
	ck_assert_uint_eq(cmos_read(&t, 0x0c), 0x00);
	ck_assert_int_eq(pthread_create(&th, NULL, run_loop, t.host.loop), 0);
	cmos_write(&t, 0x0a, 0x2d); /* rate 13: 8 Hz */
	cmos_write(&t, 0x0b, 0x42); /* PIE */
	usleep(400 * 1000);
	/* the line stays high until register C is read */
	ck_assert(t.level[RTC_IRQ]);
	ck_assert_uint_eq(t.raised[RTC_IRQ], 1);
	c = cmos_read(&t, 0x0c);
	ck_assert_uint_eq(c & 0xc0, 0xc0); /* IRQF | PF */
	ck_assert(!t.level[RTC_IRQ]);
	/* flags without their enable set neither IRQF nor the line */
	cmos_write(&t, 0x0b, 0x02);
	usleep(300 * 1000);
	ck_assert_uint_eq(t.raised[RTC_IRQ], 1);
	ck_assert_uint_eq(cmos_read(&t, 0x0c) & 0x80, 0);
	/* reset clears the enables: no more interrupts */
	cmos_write(&t, 0x0b, 0x42);
	usleep(300 * 1000);
	ck_assert_uint_eq(t.raised[RTC_IRQ], 2);
	dev_reset_all(&t.host);
	ck_assert(!t.level[RTC_IRQ]);
	ck_assert_uint_eq(cmos_read(&t, 0x0b) & 0x70, 0);
	usleep(300 * 1000);
	ck_assert_uint_eq(t.raised[RTC_IRQ], 2);
	evloop_stop(t.host.loop);
	pthread_join(th, NULL);
	rtc_free(r);
	evloop_free(t.host.loop);
	test_host_fini(&t);
}
END_TEST

START_TEST(cmos_bytes_for_seabios)
{
	struct fake_host t;
	struct rtc *r;

	test_host_init(&t);
	r = rtc_new(&t.host);
	rtc_set_pc_config(r, 512u << 20, 1ull << 32, 4);
	ck_assert_uint_eq(cmos_read(&t, 0x15) | cmos_read(&t, 0x16) << 8, 640);
	/* extended memory in KiB saturates at 0xffff */
	ck_assert_uint_eq(cmos_read(&t, 0x17) | cmos_read(&t, 0x18) << 8, 0xffff);
	/* above 16 MiB in 64 KiB units: (512 - 16) MiB */
	ck_assert_uint_eq(cmos_read(&t, 0x34) | cmos_read(&t, 0x35) << 8, 496 * 16);
	/* above 4 GiB: 4 GiB in 64 KiB units = 0x10000 */
	ck_assert_uint_eq(cmos_read(&t, 0x5b) | cmos_read(&t, 0x5c) << 8 |
				  cmos_read(&t, 0x5d) << 16,
			  0x10000);
	ck_assert_uint_eq(cmos_read(&t, 0x5f), 3);
	/* plain CMOS memory keeps what is written; bit 7 of the index (NMI
	 * mask) does not change the register selected */
	cmos_write(&t, 0x40, 0x5a);
	pio_out(&t, 0x70, 1, 0x80 | 0x40);
	ck_assert_uint_eq(pio_in(&t, 0x71, 1), 0x5a);
	ck_assert_uint_eq(rtc_cmos_get(r, 0x40), 0x5a);
	rtc_free(r);
	test_host_fini(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rtc");
	TCase *tc = tcase_create("rtc");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, time_in_bcd_and_binary);
	tcase_add_test(tc, set_the_clock);
	tcase_add_test(tc, uip_shows_the_update_cycle);
	tcase_add_test(tc, periodic_interrupt_and_register_c);
	tcase_add_test(tc, cmos_bytes_for_seabios);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
