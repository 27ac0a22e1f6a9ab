/* Unit tests for the live pre-copy's passes (vmm/migration_ram.c) with a
 * fake guest: pages it writes between passes reach the stream, pages a
 * device wrote behind the dirty log go out in a later pass (a copy that
 * landed after its page was sent, a write through a pinned ring), the loop
 * stops when nothing is left or at MIG_MAX_PASSES, the writer throttles
 * to max_bps and stops when cancelled, and the guest stops only once the
 * socket's queue has drained. */
#include <check.h>
#include <linux/sockios.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/check_run.h"
#include "vmm/migration.h"

#define PAGES 64

static uint8_t ram[PAGES * MIG_PAGE] __attribute__((aligned(MIG_PAGE)));
static uint8_t got[PAGES * MIG_PAGE] __attribute__((aligned(MIG_PAGE)));
static uint64_t touched[1], pinned[1];
static unsigned syncs, dirty_syncs_wanted;
static bool stopped, late_copy;

/* The fake guest writes page (syncs % PAGES) before each sync after the
 * first, for dirty_syncs_wanted syncs, and reports it dirty; stopped, it
 * writes nothing. */
static int fake_sync(void *opaque, uint64_t *bits)
{
	unsigned pg = syncs % PAGES;

	/* a device copy into page 50: marked before the second sync takes
	 * the marks, written only after that pass sent the page */
	if (late_copy && syncs == 1)
		touched[0] |= 1ull << 50;
	if (late_copy && syncs == 2)
		ram[50 * MIG_PAGE] = 0x55;
	if (syncs++ == 0 || stopped || syncs > dirty_syncs_wanted + 1)
		return 0;
	ram[pg * MIG_PAGE + syncs] = (uint8_t)syncs;
	bits[pg / 64] |= 1ull << (pg % 64);
	return 0;
}

/* A guest that writes 8 pages before each sync after the first, for
 * dirty_syncs_wanted syncs. */
static int busy_sync(void *opaque, uint64_t *bits)
{
	if (syncs++ == 0 || stopped || syncs > dirty_syncs_wanted + 1)
		return 0;
	for (unsigned i = 0; i < 8; i++) {
		unsigned pg = (syncs * 8 + i) % PAGES;

		ram[pg * MIG_PAGE + 1] = (uint8_t)syncs;
		bits[pg / 64] |= 1ull << (pg % 64);
	}
	return 0;
}

static void fake_stop(void *opaque)
{
	stopped = true;
	/* a device's write the dirty log never saw */
	ram[40 * MIG_PAGE] = 0x77;
	touched[0] |= 1ull << 40;
	/* and, where a ring is pinned, one through it: no mark at all */
	if (pinned[0])
		ram[41 * MIG_PAGE] = 0x66;
}

static void reset(unsigned dirty_for)
{
	memset(ram, 0, sizeof(ram));
	ram[5 * MIG_PAGE] = 1;
	touched[0] = 0;
	pinned[0] = 0;
	syncs = 0;
	late_copy = false;
	dirty_syncs_wanted = dirty_for;
	stopped = false;
}

/* Run the pre-copy into a memfd, load it back into got: the pass count. */
static unsigned precopy(uint64_t downtime_ms, uint64_t *touch, const uint64_t *pin)
{
	struct mig_precopy p = {.ram = {ram, sizeof(ram)},
				.sync_dirty = fake_sync,
				.stop = fake_stop,
				.touched = touch,
				.pinned = pin,
				.downtime_ms = downtime_ms};
	struct mig_stats st = {0}, st2 = {0};
	char err[256];
	int fd = memfd_create("mig", 0);
	struct mig_out o = {.fd = fd, .st = &st, .err = err, .errlen = sizeof(err)};
	struct mig_ram r = {got, sizeof(got)};
	struct mig_in in;
	void *t;
	size_t len;

	ck_assert_int_eq(mig_precopy_run(&p, &o), 0);
	ck_assert_int_eq(mig_out_end(&o, "t", 1), 0);
	lseek(fd, 0, SEEK_SET);
	memset(got, 0, sizeof(got));
	ck_assert_int_eq(mig_stream_read_header(&in, fd, err, sizeof(err)), 0);
	ck_assert_int_eq(mig_stream_read_ram(&in, &r, 1, &st2, err, sizeof(err)), 0);
	ck_assert_int_eq(mig_stream_read_tree(&in, &t, &len, err, sizeof(err)), 0);
	free(t);
	close(fd);
	ck_assert_uint_eq(in.passes, p.pass);
	return p.pass;
}

/* With no downtime allowed, passes go on while the guest dirties pages:
 * pass 1, one pass per dirtying sync, then the final one. */
START_TEST(passes_follow_the_guest)
{
	reset(4);
	ck_assert_uint_eq(precopy(0, touched, pinned), 1 + 4 + 1);
	ck_assert(stopped);
	ck_assert_mem_eq(got, ram, sizeof(ram));
}
END_TEST

START_TEST(a_guest_that_never_stops_ends_at_the_pass_limit)
{
	reset(1000);
	ck_assert_uint_eq(precopy(0, touched, pinned), MIG_MAX_PASSES + 1);
	ck_assert_mem_eq(got, ram, sizeof(ram));
}
END_TEST

/* A generous downtime stops after pass 1: the last page goes in the final. */
START_TEST(downtime_limit_stops_early)
{
	reset(4);
	ck_assert_uint_eq(precopy(100000, touched, pinned), 2);
	ck_assert_mem_eq(got, ram, sizeof(ram));
}
END_TEST

/* Without the bitmaps the devices' writes are lost: they carry them. */
START_TEST(device_writes_go_in_the_final_pass)
{
	reset(0);
	pinned[0] = 1ull << 41;
	precopy(0, NULL, NULL);
	ck_assert_int_eq(got[40 * MIG_PAGE], 0);
	ck_assert_int_eq(got[41 * MIG_PAGE], 0);
	reset(0);
	pinned[0] = 1ull << 41;
	precopy(0, touched, pinned);
	ck_assert_int_eq(got[40 * MIG_PAGE], 0x77);
	ck_assert_int_eq(got[41 * MIG_PAGE], 0x66);
	/* the marks were taken: nothing is left for another migration */
	ck_assert_uint_eq(touched[0], 0);
}
END_TEST

/* A copy marked before a sync took the mark, written after that pass
 * sent its page: the next pass sends it again. */
START_TEST(a_late_copy_goes_in_the_next_pass)
{
	reset(4);
	late_copy = true;
	ck_assert_uint_eq(precopy(0, touched, pinned), 1 + 4 + 1);
	ck_assert_int_eq(got[50 * MIG_PAGE], 0x55);
	ck_assert_mem_eq(got, ram, sizeof(ram));
}
END_TEST

/* Auto-converge: two passes in a row that dirtied more than half of
 * what they sent raise the throttle, initial then by increment up to max;
 * one calm pass in between starts the count again; off, nothing moves. */
START_TEST(throttle_policy)
{
	struct mig_throttle t = {.on = false, .initial = 20, .increment = 30, .max = 75};

	ck_assert(!mig_throttle_update(&t, 90, 100));
	ck_assert(!mig_throttle_update(&t, 90, 100));
	ck_assert_uint_eq(t.pct, 0);
	t.on = true;
	ck_assert(!mig_throttle_update(&t, 90, 100));
	ck_assert(mig_throttle_update(&t, 90, 100));
	ck_assert_uint_eq(t.pct, 20);
	ck_assert(!mig_throttle_update(&t, 90, 100));
	ck_assert(!mig_throttle_update(&t, 50, 100)); /* half: calm */
	ck_assert(!mig_throttle_update(&t, 90, 100));
	ck_assert(mig_throttle_update(&t, 90, 100));
	ck_assert_uint_eq(t.pct, 50);
	mig_throttle_update(&t, 90, 100);
	ck_assert(mig_throttle_update(&t, 90, 100));
	ck_assert_uint_eq(t.pct, 75); /* clamped */
	mig_throttle_update(&t, 90, 100);
	ck_assert(!mig_throttle_update(&t, 90, 100));
	ck_assert_uint_eq(t.pct, 75);
}
END_TEST

static unsigned throttled_to;

static void record_throttle(void *opaque, unsigned pct)
{
	throttled_to = pct;
}

/* The pre-copy feeds the policy: a guest that dirties every page it can
 * between passes (here 8 each) gets throttled, with auto-converge. */
START_TEST(precopy_throttles_a_busy_guest)
{
	struct mig_precopy p = {.ram = {ram, sizeof(ram)},
				.sync_dirty = busy_sync,
				.stop = fake_stop,
				.set_throttle = record_throttle,
				.throttle = {.on = true, .initial = 30, .increment = 10, .max = 99}};
	struct mig_stats st = {0};
	char err[256];
	struct mig_out o = {.fd = memfd_create("mig", 0), .st = &st, .err = err,
			    .errlen = sizeof(err)};

	reset(6);
	throttled_to = 0;
	ck_assert_int_eq(mig_precopy_run(&p, &o), 0);
	ck_assert_uint_ge(throttled_to, 30);
	ck_assert_uint_eq(p.throttle.pct, throttled_to);
	close(o.fd);
}
END_TEST

START_TEST(converged_policy)
{
	ck_assert(mig_precopy_converged(0, 0, 0, 1));
	ck_assert(!mig_precopy_converged(4096, 0, 300, 1));
	ck_assert(mig_precopy_converged(1 << 20, 10e6, 300, 1));   /* 0.1 s */
	ck_assert(!mig_precopy_converged(10 << 20, 10e6, 300, 1)); /* 1 s */
	ck_assert(mig_precopy_converged(10 << 20, 10e6, 300, MIG_MAX_PASSES));
}
END_TEST

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 1 MiB at 4 MiB/s takes a quarter of a second. */
START_TEST(max_bps_throttles)
{
	struct mig_stats st = {0};
	char err[256];
	int fd = memfd_create("mig", 0);
	struct mig_out o = {
		.fd = fd, .st = &st, .err = err, .errlen = sizeof(err), .max_bps = 4 << 20};
	struct mig_ram r = {ram, sizeof(ram)};
	double t0 = now_s();

	memset(ram, 0x11, sizeof(ram)); /* 256 KiB stored */
	for (unsigned i = 1; i <= 4; i++)
		ck_assert_int_eq(mig_out_pass(&o, i, &r, 1, NULL), 0);
	ck_assert_double_ge(now_s() - t0, 0.2);
	close(fd);
}
END_TEST

START_TEST(cancel_stops_the_writer)
{
	struct mig_stats st = {0};
	char err[256];
	bool cancel = true;
	int fd = memfd_create("mig", 0);
	struct mig_out o = {
		.fd = fd, .st = &st, .err = err, .errlen = sizeof(err), .cancel = &cancel};

	ck_assert_int_eq(mig_out_header(&o, 1), -1);
	ck_assert_ptr_nonnull(strstr(err, "cancelled"));
	ck_assert_uint_eq(st.transferred, 0);
	close(fd);
}
END_TEST

/* A destination that takes 16 KiB a millisecond, to the stream's end. */
static void *slow_reader(void *arg)
{
	static char buf[16 << 10];
	int fd = *(int *)arg;

	while (read(fd, buf, sizeof(buf)) > 0)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	return NULL;
}

static int queue_fd;
static uint64_t queued_at_stop;

static void stop_and_look_at_the_queue(void *opaque)
{
	int n = 0;

	ck_assert_int_eq(ioctl(queue_fd, SIOCOUTQ, &n), 0);
	queued_at_stop = (uint64_t)n;
	fake_stop(opaque);
}

/* The passes wait in a socket the destination reads slowly: the guest
 * stops only once they went through (else the downtime carries them). */
START_TEST(the_guest_stops_once_the_socket_drained)
{
	struct mig_precopy p = {.ram = {ram, sizeof(ram)},
				.sync_dirty = fake_sync,
				.stop = stop_and_look_at_the_queue,
				.downtime_ms = 300};
	struct mig_stats st = {0};
	char err[256];
	int sv[2], big = 4 << 20;
	pthread_t reader;

	reset(1);
	memset(ram, 0x5a, sizeof(ram)); /* every page has data: 256 KiB a pass */
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big)), 0);
	queue_fd = sv[0];
	ck_assert_int_eq(pthread_create(&reader, NULL, slow_reader, &sv[1]), 0);
	struct mig_out o = {.fd = sv[0], .st = &st, .err = err, .errlen = sizeof(err)};

	ck_assert_int_eq(mig_precopy_run(&p, &o), 0);
	ck_assert_int_eq(mig_out_end(&o, "t", 1), 0);
	ck_assert(stopped);
	ck_assert_uint_le(queued_at_stop, MIG_DRAIN_SLACK);
	close(sv[0]);
	pthread_join(reader, NULL);
	close(sv[1]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("migration_ram");
	TCase *tc = tcase_create("precopy");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, passes_follow_the_guest);
	tcase_add_test(tc, a_guest_that_never_stops_ends_at_the_pass_limit);
	tcase_add_test(tc, downtime_limit_stops_early);
	tcase_add_test(tc, device_writes_go_in_the_final_pass);
	tcase_add_test(tc, a_late_copy_goes_in_the_next_pass);
	tcase_add_test(tc, converged_policy);
	tcase_add_test(tc, throttle_policy);
	tcase_add_test(tc, precopy_throttles_a_busy_guest);
	tcase_add_test(tc, max_bps_throttles);
	tcase_add_test(tc, cancel_stops_the_writer);
	tcase_add_test(tc, the_guest_stops_once_the_socket_drained);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
