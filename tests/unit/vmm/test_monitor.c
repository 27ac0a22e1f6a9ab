/* Unit tests for monitor parsing (vmm/control/monitor.c) and the guest page-table
 * walk behind `x` (vmm/pagewalk.c). */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "tests/unit/check_run.h"
#include "vmm/control/monitor.h"

START_TEST(fmt_parsing)
{
	struct mon_fmt f;

	ck_assert_int_eq(monitor_parse_fmt("/10xb", &f), 0);
	ck_assert_uint_eq(f.count, 10);
	ck_assert_int_eq(f.format, 'x');
	ck_assert_uint_eq(f.size, 1);
	ck_assert_int_eq(monitor_parse_fmt("/g", &f), 0);
	ck_assert_uint_eq(f.count, 1);
	ck_assert_uint_eq(f.size, 8);
	ck_assert_int_eq(monitor_parse_fmt("/4dh", &f), 0);
	ck_assert_int_eq(f.format, 'd');
	ck_assert_uint_eq(f.size, 2);
	ck_assert_int_eq(monitor_parse_fmt("/3c", &f), 0);
	ck_assert_uint_eq(f.size, 1);
	ck_assert_int_eq(monitor_parse_fmt("10x", &f), -1);
	ck_assert_int_eq(monitor_parse_fmt("/0x", &f), -1);
	ck_assert_int_eq(monitor_parse_fmt("/4q", &f), -1);
	ck_assert_int_eq(monitor_parse_fmt("/99999x", &f), -1);
}
END_TEST

START_TEST(unknown_commands_do_not_crash)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	monitor_execute(NULL, "frobnicate now", out);
	monitor_execute(NULL, "", out);
	monitor_execute(NULL, "xp", out);
	monitor_execute(NULL, "x/zz 12", out);
	monitor_execute(NULL, "break nowhere", out);
	monitor_execute(NULL, "delete 1 2", out);
	fclose(out);
	ck_assert_ptr_nonnull(strstr(text, "unknown command: 'frobnicate'"));
	ck_assert_ptr_nonnull(strstr(text, "usage: xp"));
	ck_assert_ptr_nonnull(strstr(text, "usage: x "));
	ck_assert_ptr_nonnull(strstr(text, "usage: break [ADDRESS]"));
	ck_assert_ptr_nonnull(strstr(text, "usage: delete [ADDRESS]"));
	free(text);
}
END_TEST

/* 4-level tables in a 2 MiB fake RAM: PML4 0x1000, PDPT 0x2000, PD 0x3000,
 * PT 0x4000; 0x400000 -> 4K page at 0x5000; 0x600000 -> 2M page at 0. */
START_TEST(long_mode_walk)
{
	static uint64_t ram[0x200000 / 8];
	struct guest_mem mem = {.r = {{0, sizeof(ram), (uint8_t *)ram}}, .n = 1};
	struct paging_mode pm = {.cr0 = 0x80000011, .cr3 = 0x1000, .cr4 = 0x20, .efer = 0x500};
	uint64_t gpa;

	ram[0x1000 / 8] = 0x2000 | 1;
	ram[0x2000 / 8] = 0x3000 | 1;
	ram[0x3000 / 8 + 2] = 0x4000 | 1;	  /* 0x400000 */
	ram[0x3000 / 8 + 3] = 0x000000 | 0x81; /* 0x600000, 2 MiB */
	ram[0x4000 / 8] = 0x5000 | 1;
	ck_assert_int_eq(page_walk(&mem, &pm, 0x400123, &gpa), 0);
	ck_assert_uint_eq(gpa, 0x5123);
	ck_assert_int_eq(page_walk(&mem, &pm, 0x612345, &gpa), 0);
	ck_assert_uint_eq(gpa, 0x12345);
	ck_assert_int_eq(page_walk(&mem, &pm, 0x801000, &gpa), -EFAULT); /* not present */
	ck_assert_int_eq(page_walk(&mem, &pm, 0x7f8000000000ull, &gpa), -EFAULT);
	pm.cr3 = 0x40000000; /* tables outside RAM */
	ck_assert_int_eq(page_walk(&mem, &pm, 0x400000, &gpa), -EFAULT);
	pm.cr0 = 0x11; /* paging off: identity */
	ck_assert_int_eq(page_walk(&mem, &pm, 0xabc, &gpa), 0);
	ck_assert_uint_eq(gpa, 0xabc);
}
END_TEST

START_TEST(pc_memory_layout)
{
	struct mem_layout l;

	mem_layout_for(64ull << 20, &l);
	ck_assert_uint_eq(l.below_4g, 64ull << 20);
	ck_assert_uint_eq(l.above_4g, 0);
	mem_layout_for(5ull << 30, &l);
	ck_assert_uint_eq(l.below_4g, 3ull << 30);
	ck_assert_uint_eq(l.above_4g, 2ull << 30);
	mem_layout_for(0xe0000000ull - 4096, &l);
	ck_assert_uint_eq(l.above_4g, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vmm_monitor");
	TCase *tc = tcase_create("monitor");

	tcase_add_test(tc, fmt_parsing);
	tcase_add_test(tc, unknown_commands_do_not_crash);
	tcase_add_test(tc, long_mode_walk);
	tcase_add_test(tc, pc_memory_layout);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
