/* Unit tests for the per-address exit counters (vmm/exit_stats.c). The
 * table is process-wide, so each check forks (libcheck's default). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check_run.h"
#include "vmm/exit_stats.h"

static char *print_table(unsigned max_rows)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	exit_stats_print(f, max_rows);
	fclose(f);
	return buf;
}

/* Position of the row "kind address dir exits accesses" in out, or NULL. */
static const char *find_row(const char *out, const char *kind, unsigned long long addr,
			    const char *dir, unsigned long long exits, unsigned long long acc)
{
	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char k[8], d[8];
		unsigned long long a, e, n;

		if (sscanf(l, " %7s %llx %7s %llu %llu", k, &a, d, &e, &n) == 5 &&
		    !strcmp(k, kind) && a == addr && !strcmp(d, dir) && e == exits && n == acc)
			return l;
	}
	return NULL;
}

START_TEST(counts_by_address_busiest_first)
{
	char *out;
	const char *a, *b, *c;

	for (unsigned i = 0; i < 5; i++)
		exit_stats_io(0x3f8, true, 1);
	exit_stats_io(0x1f0, false, 256); /* one rep insw exit */
	exit_stats_io(0x1f0, false, 256);
	exit_stats_io(0x3f8, false, 1); /* reads are their own row */
	exit_stats_mmio(0xfee00000u, true);
	exit_stats_mmio(0xfee00000u, true);
	exit_stats_mmio(0xfee00000u, true);
	exit_stats_io(0, false, 1); /* port 0 is an address like any other */
	out = print_table(10);
	ck_assert_ptr_nonnull(strstr(out, "exits by address: 12 in all, 5 addresses"));
	a = find_row(out, "io", 0x3f8, "write", 5, 5);
	b = find_row(out, "mmio", 0xfee00000u, "write", 3, 3);
	c = find_row(out, "io", 0x1f0, "read", 2, 512);
	ck_assert_msg(a && b && c, "%s", out);
	ck_assert(a < b && b < c);
	ck_assert_ptr_nonnull(find_row(out, "io", 0x3f8, "read", 1, 1));
	ck_assert_ptr_nonnull(find_row(out, "io", 0, "read", 1, 1));
	free(out);
	/* max_rows limits the rows, not the total */
	out = print_table(1);
	ck_assert_ptr_nonnull(strstr(out, "12 in all"));
	ck_assert_ptr_null(strstr(out, "0x1f0"));
	free(out);
}
END_TEST

START_TEST(full_table_counts_the_rest)
{
	char *out;

	for (unsigned i = 0; i < 1100; i++)
		exit_stats_mmio(0x10000000u + 4096ull * i, false);
	exit_stats_mmio(0x10000000u, false); /* a known address still counts */
	out = print_table(0);
	ck_assert_msg(strstr(out, "1101 in all, 1024 addresses"), "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "table full: 76 exits"));
	free(out);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("exit_stats");
	TCase *tc = tcase_create("exit_stats");

	tcase_add_test(tc, counts_by_address_busiest_first);
	tcase_add_test(tc, full_table_counts_the_rest);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
