/* test_nat.c — usernet's NAT flow table: find/insert/remove, duplicate
 * keys, the hard limit, LRU order for idle expiry, many flows. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "netstack/usernet/internal.h"
#include "tests/unit/check_run.h"

static struct nat_key key(uint8_t proto, uint32_t g, uint16_t gp, uint32_t r, uint16_t rp)
{
	struct nat_key k = {.proto = proto, .gaddr = g, .raddr = r, .gport = gp, .rport = rp};

	return k;
}

START_TEST(test_insert_find_remove)
{
	struct nat_table t;
	struct nat_entry a = {.key = key(17, 1, 1000, 2, 53)};
	struct nat_entry b = {.key = key(17, 1, 1001, 2, 53)};
	struct nat_key k;

	ck_assert_int_eq(nat_table_init(&t, 8), 0);
	ck_assert_int_eq(nat_insert(&t, &a, 1), 0);
	ck_assert_int_eq(nat_insert(&t, &b, 2), 0);
	ck_assert_uint_eq(t.count, 2);
	k = key(17, 1, 1000, 2, 53);
	ck_assert_ptr_eq(nat_find(&t, &k), &a);
	k.proto = 6; /* same ports, other protocol */
	ck_assert_ptr_null(nat_find(&t, &k));
	k = key(17, 1, 1000, 2, 54);
	ck_assert_ptr_null(nat_find(&t, &k));
	nat_remove(&t, &a);
	k = key(17, 1, 1000, 2, 53);
	ck_assert_ptr_null(nat_find(&t, &k));
	ck_assert_ptr_eq(nat_oldest(&t), &b);
	ck_assert_uint_eq(t.count, 1);
	nat_remove(&t, &a); /* not in the table: no-op */
	ck_assert_uint_eq(t.count, 1);
	nat_table_destroy(&t);
}
END_TEST

START_TEST(test_duplicate_and_limit)
{
	struct nat_table t;
	struct nat_entry e[4];

	ck_assert_int_eq(nat_table_init(&t, 3), 0);
	for (int i = 0; i < 4; i++)
		e[i].key = key(17, 10, (uint16_t)(2000 + i), 20, 80);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(nat_insert(&t, &e[i], 0), 0);
	ck_assert_int_eq(nat_insert(&t, &e[3], 0), -ENOSPC);
	e[3].key = e[0].key;
	ck_assert_int_eq(nat_insert(&t, &e[3], 0), -EEXIST);
	nat_remove(&t, &e[1]);
	e[3].key = key(17, 10, 2003, 20, 80);
	ck_assert_int_eq(nat_insert(&t, &e[3], 0), 0);
	ck_assert_uint_eq(t.count, 3);
	nat_table_destroy(&t);
}
END_TEST

START_TEST(test_lru_order)
{
	struct nat_table t;
	struct nat_entry e[3];

	ck_assert_int_eq(nat_table_init(&t, 16), 0);
	ck_assert_ptr_null(nat_oldest(&t));
	for (int i = 0; i < 3; i++) {
		e[i].key = key(1, 5, (uint16_t)i, 6, 0);
		ck_assert_int_eq(nat_insert(&t, &e[i], (uint64_t)i), 0);
	}
	ck_assert_ptr_eq(nat_oldest(&t), &e[0]);
	nat_touch(&t, &e[0], 10);
	ck_assert_ptr_eq(nat_oldest(&t), &e[1]);
	ck_assert_uint_eq(e[0].last_us, 10);
	nat_remove(&t, &e[1]);
	ck_assert_ptr_eq(nat_oldest(&t), &e[2]);
	nat_remove(&t, &e[2]);
	ck_assert_ptr_eq(nat_oldest(&t), &e[0]);
	nat_remove(&t, &e[0]);
	ck_assert_ptr_null(nat_oldest(&t));
	nat_table_destroy(&t);
}
END_TEST

START_TEST(test_many_flows)
{
	enum { N = 20000 };
	struct nat_table t;
	struct nat_entry *e = calloc(N, sizeof(*e));

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(nat_table_init(&t, N), 0);
	for (int i = 0; i < N; i++) {
		e[i].key = key(17, 0x0a00020f, (uint16_t)(i % 60000),
			       0x08080808u + (uint32_t)(i / 60000), (uint16_t)(53 + i % 7));
		ck_assert_int_eq(nat_insert(&t, &e[i], (uint64_t)i), 0);
	}
	for (int i = 0; i < N; i += 2)
		nat_remove(&t, &e[i]);
	for (int i = 0; i < N; i++) {
		struct nat_entry *f = nat_find(&t, &e[i].key);

		ck_assert_ptr_eq(f, i % 2 ? &e[i] : NULL);
	}
	ck_assert_uint_eq(t.count, N / 2);
	ck_assert_ptr_eq(nat_oldest(&t), &e[1]);
	nat_table_destroy(&t);
	free(e);
}
END_TEST

static Suite *nat_suite(void)
{
	Suite *s = suite_create("usernet_nat");
	TCase *t = tcase_create("nat");

	tcase_add_test(t, test_insert_find_remove);
	tcase_add_test(t, test_duplicate_and_limit);
	tcase_add_test(t, test_lru_order);
	tcase_add_test(t, test_many_flows);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	return check_run_suite(nat_suite());
}
