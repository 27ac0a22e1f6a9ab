/* Unit tests for e820_build: the PC memory map from guest RAM regions. */
#include <check.h>

#include "devices/dev_host.h"
#include "firmware/firmware.h"
#include "tests/unit/check_run.h"

static void expect(const struct e820_map *m, unsigned i, uint64_t addr, uint64_t size,
		   uint32_t type)
{
	ck_assert_uint_gt(m->n, i);
	ck_assert_uint_eq(m->e[i].addr, addr);
	ck_assert_uint_eq(m->e[i].size, size);
	ck_assert_uint_eq(m->e[i].type, type);
}

START_TEST(small_pc_with_low_hole)
{
	struct guest_mem mem = {.n = 2, .r = {{0, 0xa0000, NULL}, {0x100000, 63 << 20, NULL}}};
	struct e820_map m;

	ck_assert_int_eq(e820_build(&mem, &m), 0);
	ck_assert_uint_eq(m.n, 4);
	expect(&m, 0, 0, 0x9fc00, E820_RAM);
	expect(&m, 1, 0x9fc00, 0x400, E820_RESERVED);
	expect(&m, 2, 0xf0000, 0x10000, E820_RESERVED);
	expect(&m, 3, 0x100000, 63 << 20, E820_RAM);
}
END_TEST

START_TEST(ram_above_4g_keeps_the_pci_hole)
{
	struct guest_mem mem = {.n = 3,
				.r = {{0x100000, 0xbff00000, NULL},
				      {0x100000000ull, 2ull << 30, NULL},
				      {0, 0xa0000, NULL}}};
	struct e820_map m;

	ck_assert_int_eq(e820_build(&mem, &m), 0);
	ck_assert_uint_eq(m.n, 5);
	expect(&m, 3, 0x100000, 0xbff00000, E820_RAM);
	expect(&m, 4, 0x100000000ull, 2ull << 30, E820_RAM);
}
END_TEST

START_TEST(bios_area_ram_is_reserved_and_merged)
{
	struct guest_mem mem = {.n = 1, .r = {{0, 16 << 20, NULL}}};
	struct e820_map m;

	ck_assert_int_eq(e820_build(&mem, &m), 0);
	ck_assert_uint_eq(m.n, 3);
	expect(&m, 0, 0, 0x9fc00, E820_RAM);
	expect(&m, 1, 0x9fc00, 0x100000 - 0x9fc00, E820_RESERVED);
	expect(&m, 2, 0x100000, (16 << 20) - 0x100000, E820_RAM);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("e820");
	TCase *tc = tcase_create("build");

	tcase_add_test(tc, small_pc_with_low_hole);
	tcase_add_test(tc, ram_above_4g_keeps_the_pci_hole);
	tcase_add_test(tc, bios_area_ram_is_reserved_and_merged);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
