/* Unit tests for the I/O bus dispatch structure. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "tests/unit/check_run.h"

struct probe {
	uint64_t last_off;
	uint64_t last_val;
	int reads, writes;
};

static void probe_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct probe *p = opaque;

	p->reads++;
	p->last_off = off;
	io_data_put(data, size, 0x1122334455667788ull);
}

static void probe_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct probe *p = opaque;

	p->writes++;
	p->last_off = off;
	p->last_val = io_data_get(data, size);
}

static const struct io_ops probe_ops = {probe_read, probe_write};

START_TEST(dispatch_hits_the_right_region)
{
	struct iobus *bus = iobus_new("pio");
	struct probe a = {0}, b = {0};
	uint32_t v = 0;

	ck_assert_int_eq(iobus_register(bus, 0x3f8, 8, &probe_ops, &a, "a"), 0);
	ck_assert_int_eq(iobus_register(bus, 0x60, 1, &probe_ops, &b, "b"), 0);
	ck_assert(iobus_read(bus, 0x3fa, &v, 2));
	ck_assert_int_eq(a.reads, 1);
	ck_assert_uint_eq(a.last_off, 2);
	ck_assert_uint_eq(v, 0x7788);
	v = 0xab;
	ck_assert(iobus_write(bus, 0x60, &v, 1));
	ck_assert_int_eq(b.writes, 1);
	ck_assert_uint_eq(b.last_val, 0xab);
	iobus_free(bus);
}
END_TEST

START_TEST(unclaimed_read_is_all_ones)
{
	struct iobus *bus = iobus_new("pio");
	uint32_t v = 0;

	iobus_set_miss_log(bus, false);
	ck_assert(!iobus_read(bus, 0x1234, &v, 4));
	ck_assert_uint_eq(v, 0xffffffffu);
	ck_assert(!iobus_write(bus, 0x1234, &v, 4));
	iobus_free(bus);
}
END_TEST

START_TEST(overlaps_and_bad_ranges_are_refused)
{
	struct iobus *bus = iobus_new("mmio");
	struct probe a = {0};

	ck_assert_int_eq(iobus_register(bus, 0x1000, 0x100, &probe_ops, &a, "a"), 0);
	ck_assert_int_eq(iobus_register(bus, 0x10ff, 1, &probe_ops, &a, "b"), -EEXIST);
	ck_assert_int_eq(iobus_register(bus, 0xf00, 0x101, &probe_ops, &a, "c"), -EEXIST);
	ck_assert_int_eq(iobus_register(bus, 0x1100, 1, &probe_ops, &a, "d"), 0);
	ck_assert_int_eq(iobus_register(bus, 0x0, 0, &probe_ops, &a, "e"), -EINVAL);
	ck_assert_int_eq(iobus_register(bus, UINT64_MAX, 2, &probe_ops, &a, "f"), -EINVAL);
	ck_assert_int_eq(iobus_unregister(bus, 0x1000), 0);
	ck_assert_int_eq(iobus_unregister(bus, 0x1000), -ENOENT);
	ck_assert_int_eq(iobus_register(bus, 0x10ff, 1, &probe_ops, &a, "b"), 0);
	iobus_free(bus);
}
END_TEST

static int count_cb_n;
static uint64_t count_cb_last;
static void count_cb(const struct io_region *r, void *arg)
{
	ck_assert(r->base >= count_cb_last);
	count_cb_last = r->base;
	count_cb_n++;
	(void)arg;
}

START_TEST(many_regions_stay_ordered)
{
	struct iobus *bus = iobus_new("pio");
	struct probe a = {0};
	uint8_t v;

	srand(42);
	for (int i = 0; i < 1000; i++) {
		uint64_t base = (uint64_t)(rand() % 4096) * 16;
		int ret = iobus_register(bus, base, 16, &probe_ops, &a, "r");

		ck_assert(ret == 0 || ret == -EEXIST);
	}
	count_cb_n = 0;
	count_cb_last = 0;
	iobus_foreach(bus, count_cb, NULL);
	ck_assert_int_gt(count_cb_n, 500);
	iobus_set_miss_log(bus, false);
	for (uint64_t addr = 0; addr < 4096 * 16; addr += 7) {
		a.reads = 0;
		bool hit = iobus_read(bus, addr, &v, 1);
		ck_assert_int_eq(a.reads, hit ? 1 : 0);
		if (hit)
			ck_assert_uint_eq(a.last_off, addr % 16);
	}
	iobus_free(bus);
}
END_TEST

START_TEST(guest_mem_bounds)
{
	static uint8_t low[4096], high[4096];
	struct guest_mem gm = {.n = 2};

	gm.r[0] = (struct guest_ram_region){0, sizeof(low), low};
	gm.r[1] = (struct guest_ram_region){0x100000, sizeof(high), high};
	ck_assert_ptr_eq(guest_mem_ptr(&gm, 0, 4096), low);
	ck_assert_ptr_eq(guest_mem_ptr(&gm, 0x100010, 16), high + 16);
	ck_assert_ptr_null(guest_mem_ptr(&gm, 4095, 2));
	ck_assert_ptr_null(guest_mem_ptr(&gm, 0x2000, 1));
	ck_assert_ptr_null(guest_mem_ptr(&gm, 0x100000, UINT64_MAX));
	ck_assert_ptr_null(guest_mem_ptr(&gm, UINT64_MAX, 2));
	ck_assert_int_eq(guest_mem_write(&gm, 4000, "abc", 3), 0);
	ck_assert_int_eq(guest_mem_write(&gm, 4095, "abc", 3), -EFAULT);
}
END_TEST

#define FLAGS_LEN 512

/* The VmFlags of the mapping holding addr (/proc/self/smaps), or "". */
static void vma_flags(const void *addr, char flags[FLAGS_LEN])
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool inside = false;

	flags[0] = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			inside = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
		else if (inside && !strncmp(line, "VmFlags:", 8))
			memcpy(flags, line + 8, strlen(line + 8) + 1);
	}
	if (f)
		fclose(f);
}

static void *report_stack_flags(void *arg)
{
	char here = 0;

	vma_flags(&here, arg);
	return NULL;
}

/* A thread's stack is advised out of transparent huge pages (VmFlags
 * "nh") before the thread runs, and the join frees it. */
START_TEST(thread_stack_has_no_huge_pages)
{
	char flags[FLAGS_LEN] = "";
	struct dev_thread t;

	ck_assert_int_eq(dev_thread_create(&t, report_stack_flags, flags), 0);
	dev_thread_join(&t);
	ck_assert_msg(strstr(flags, " wr") && strstr(flags, " nh"), "stack VmFlags:%s", flags);
	ck_assert_ptr_null(t.stack);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("devices-bus");
	TCase *tc = tcase_create("bus");

	tcase_add_test(tc, dispatch_hits_the_right_region);
	tcase_add_test(tc, unclaimed_read_is_all_ones);
	tcase_add_test(tc, overlaps_and_bad_ranges_are_refused);
	tcase_add_test(tc, many_regions_stay_ordered);
	tcase_add_test(tc, guest_mem_bounds);
	tcase_add_test(tc, thread_stack_has_no_huge_pages);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
