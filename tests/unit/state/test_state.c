/* Unit tests for the device-state tree (state/state.h): round trips of
 * every property type through nested nodes, the writer's errors and its
 * growing buffer, and every error path of the strict reader — missing
 * nodes and properties, unknown properties, newer versions, sizes, ranges,
 * garbage, truncated and corrupted blobs. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state/state.h"

static char err[256];

/* A small machine-like tree: /devices/uart@3f8 (version 2) and /devices/pic@20. */
static void *sample(size_t *len)
{
	struct state_writer *w = state_writer_new();
	const uint8_t fifo[5] = {1, 2, 3, 4, 5};
	void *blob;

	ck_assert_ptr_nonnull(w);
	state_begin(w, "devices", 1);
	state_begin(w, "uart@3f8", 2);
	state_put_u8(w, "lsr", 0x61);
	state_put_u16(w, "divisor", 0x1234);
	state_put_u32(w, "count", 0xdeadbeef);
	state_put_u64(w, "clock", 0x0102030405060708ull);
	state_put_bytes(w, "fifo", fifo, sizeof(fifo));
	state_put_u8(w, "flag", 1);
	state_end(w);
	state_begin(w, "pic@20", 1);
	state_put_u8(w, "imr", 0xfb);
	state_end(w);
	state_end(w);
	ck_assert_int_eq(state_writer_finish(w, &blob, len, err, sizeof(err)), 0);
	return blob;
}

/* Open the sample and its uart node (version 2 allowed). */
static void open_uart(struct state_reader *r, struct state_node *n, void *blob, size_t len)
{
	ck_assert_int_eq(state_reader_open(r, blob, len, err, sizeof(err)), 0);
	ck_assert_int_eq(state_node_open(n, r, "/devices/uart@3f8", 2, err, sizeof(err)), 0);
}

START_TEST(round_trip)
{
	struct state_reader r, dev;
	struct state_node n;
	size_t len;
	void *blob = sample(&len);
	uint8_t u8, fifo[5];
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
	bool flag;

	ck_assert_int_eq(state_reader_open(&r, blob, len, err, sizeof(err)), 0);
	ck_assert_int_eq(state_reader_sub(&r, "devices", &dev, err, sizeof(err)), 0);
	ck_assert_str_eq(dev.path, "/devices");
	/* relative to /devices, the way a device gets its parent */
	ck_assert_int_eq(state_node_open(&n, &dev, "uart@3f8", 2, err, sizeof(err)), 0);
	ck_assert_str_eq(n.at.path, "/devices/uart@3f8");
	ck_assert_uint_eq(n.version, 2);
	ck_assert_int_eq(state_get_u8(&n, "lsr", &u8), 0);
	ck_assert_uint_eq(u8, 0x61);
	ck_assert_int_eq(state_get_u16(&n, "divisor", &u16), 0);
	ck_assert_uint_eq(u16, 0x1234);
	ck_assert_int_eq(state_get_u32(&n, "count", &u32), 0);
	ck_assert_uint_eq(u32, 0xdeadbeef);
	ck_assert_int_eq(state_get_u64(&n, "clock", &u64), 0);
	ck_assert_uint_eq(u64, 0x0102030405060708ull);
	ck_assert_int_eq(state_get_bytes(&n, "fifo", fifo, sizeof(fifo)), 0);
	ck_assert_mem_eq(fifo, ((uint8_t[]){1, 2, 3, 4, 5}), 5);
	ck_assert(state_has(&n, "flag"));
	ck_assert(!state_has(&n, "nothing"));
	ck_assert_int_eq(state_get_bool(&n, "flag", &flag), 0);
	ck_assert(flag);
	ck_assert_int_eq(state_node_close(&n), 0);
	/* the other node, by absolute path from a sub-reader */
	ck_assert_int_eq(state_node_open(&n, &dev, "/devices/pic@20", 1, err, sizeof(err)), 0);
	ck_assert_int_eq(state_get_u8(&n, "imr", &u8), 0);
	ck_assert_uint_eq(u8, 0xfb);
	ck_assert_int_eq(state_node_close(&n), 0);
	state_reader_close(&r);
	free(blob);
}
END_TEST

/* Values are big-endian in the blob, as FDT cells are. */
START_TEST(big_endian_on_the_wire)
{
	size_t len;
	uint8_t *blob = sample(&len);
	const uint8_t want[] = {0xde, 0xad, 0xbe, 0xef};

	ck_assert_ptr_nonnull(memmem(blob, len, want, sizeof(want)));
	free(blob);
}
END_TEST

START_TEST(unknown_property)
{
	struct state_reader r;
	struct state_node n;
	size_t len;
	void *blob = sample(&len);
	uint8_t u8;

	open_uart(&r, &n, blob, len);
	ck_assert_int_eq(state_get_u8(&n, "lsr", &u8), 0);
	ck_assert_int_eq(state_node_close(&n), -1);
	ck_assert_str_eq(err, "state: /devices/uart@3f8: unknown property 'divisor'");
	state_reader_close(&r);
	free(blob);
}
END_TEST

START_TEST(missing_property)
{
	struct state_reader r;
	struct state_node n;
	size_t len;
	void *blob = sample(&len);
	uint32_t u32;

	open_uart(&r, &n, blob, len);
	ck_assert_int_eq(state_get_u32(&n, "ier", &u32), -1);
	ck_assert_str_eq(err, "state: /devices/uart@3f8: no property 'ier'");
	state_reader_close(&r);
	free(blob);
}
END_TEST

START_TEST(missing_node)
{
	struct state_reader r;
	struct state_node n;
	size_t len;
	void *blob = sample(&len);

	ck_assert_int_eq(state_reader_open(&r, blob, len, err, sizeof(err)), 0);
	ck_assert_int_eq(state_node_open(&n, &r, "/devices/uart@2f8", 2, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "state: /devices/uart@2f8: no such node");
	ck_assert_int_eq(state_node_open(&n, &r, "nowhere/x", 2, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "state: /nowhere/x: no such node");
	state_reader_close(&r);
	free(blob);
}
END_TEST

START_TEST(size_mismatch)
{
	struct state_reader r;
	struct state_node n;
	size_t len;
	void *blob = sample(&len);
	uint16_t u16;
	uint8_t u8, buf[6];
	uint64_t u64;

	open_uart(&r, &n, blob, len);
	ck_assert_int_eq(state_get_u16(&n, "lsr", &u16), -1);
	ck_assert_str_eq(err, "state: /devices/uart@3f8: property 'lsr' is 1 byte, expected 2");
	ck_assert_int_eq(state_get_u8(&n, "divisor", &u8), -1);
	ck_assert_str_eq(err, "state: /devices/uart@3f8: property 'divisor' is 2 bytes, expected 1");
	ck_assert_int_eq(state_get_u64(&n, "count", &u64), -1);
	ck_assert_str_eq(err, "state: /devices/uart@3f8: property 'count' is 4 bytes, expected 8");
	ck_assert_int_eq(state_get_bytes(&n, "fifo", buf, sizeof(buf)), -1);
	ck_assert_str_eq(err, "state: /devices/uart@3f8: property 'fifo' is 5 bytes, expected 6");
	state_reader_close(&r);
	free(blob);
}
END_TEST

START_TEST(newer_version)
{
	struct state_reader r;
	struct state_node n;
	size_t len;
	void *blob = sample(&len);

	ck_assert_int_eq(state_reader_open(&r, blob, len, err, sizeof(err)), 0);
	ck_assert_int_eq(state_node_open(&n, &r, "/devices/uart@3f8", 1, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "state: /devices/uart@3f8: version 2 is newer than the 1 this vmm knows");
	state_reader_close(&r);
	free(blob);
}
END_TEST

/* A node without a version: the writer gives the root none, so opening
 * the root as a device node must fail; a child opens fine. */
START_TEST(version_missing_or_malformed)
{
	struct state_writer *w = state_writer_new();
	struct state_reader r;
	struct state_node n;
	void *blob;
	size_t len;

	state_begin(w, "dev", 1);
	state_end(w);
	ck_assert_int_eq(state_writer_finish(w, &blob, &len, err, sizeof(err)), 0);
	ck_assert_int_eq(state_reader_open(&r, blob, len, err, sizeof(err)), 0);
	/* the root has no version: the writer gives it none */
	ck_assert_int_eq(state_node_open(&n, &r, "/", 1, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "state: /: no property 'version'");
	ck_assert_int_eq(state_node_open(&n, &r, "dev", 1, err, sizeof(err)), 0);
	ck_assert_int_eq(state_node_close(&n), 0);
	state_reader_close(&r);
	free(blob);
}
END_TEST

START_TEST(ranges)
{
	struct state_reader r;
	struct state_node n;
	size_t len;
	void *blob = sample(&len);
	uint8_t u8 = 7;
	uint32_t u32 = 7;
	bool b;

	open_uart(&r, &n, blob, len);
	ck_assert_int_eq(state_get_u8_max(&n, "lsr", 0x60, &u8), -1);
	ck_assert_str_eq(err, "state: /devices/uart@3f8: property 'lsr' is 97, at most 96");
	ck_assert_uint_eq(u8, 7); /* untouched on error */
	ck_assert_int_eq(state_get_u8_max(&n, "lsr", 0x61, &u8), 0);
	ck_assert_uint_eq(u8, 0x61);
	ck_assert_int_eq(state_get_u32_max(&n, "count", 100, &u32), -1);
	ck_assert_str_eq(err, "state: /devices/uart@3f8: property 'count' is 3735928559, at most 100");
	ck_assert_uint_eq(u32, 7);
	ck_assert_int_eq(state_get_bool(&n, "lsr", &b), -1);
	ck_assert_str_eq(err, "state: /devices/uart@3f8: property 'lsr' is 97, at most 1");
	ck_assert_int_eq(state_node_fail(&n, "rx_count %u > %u", 17, 16), -1);
	ck_assert_str_eq(err, "state: /devices/uart@3f8: rx_count 17 > 16");
	state_reader_close(&r);
	free(blob);
}
END_TEST

START_TEST(writer_errors)
{
	struct state_writer *w;
	void *blob;
	size_t len;

	w = state_writer_new();
	state_begin(w, "a", 1);
	ck_assert_int_eq(state_writer_finish(w, &blob, &len, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "state: 1 node(s) left open");
	ck_assert_ptr_null(blob);

	w = state_writer_new();
	state_end(w);
	ck_assert_int_eq(state_writer_finish(w, &blob, &len, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "end of node"));

	w = state_writer_new();
	state_begin(w, "a/b", 1);
	state_end(w);
	ck_assert_int_eq(state_writer_finish(w, &blob, &len, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "state: node 'a/b': invalid name");

	/* the first error is the one reported */
	w = state_writer_new();
	state_begin(w, "a", 1);
	state_put_u8(w, "", 1);
	state_put_u8(w, "b c", 1);
	state_end(w);
	ck_assert_int_eq(state_writer_finish(w, &blob, &len, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "state: property '': invalid name");
}
END_TEST

/* Far more than the first 4 KiB buffer: the writer grows it. */
START_TEST(writer_grows)
{
	struct state_writer *w = state_writer_new();
	static uint8_t big[100000], back[100000];
	struct state_reader r;
	struct state_node n;
	char name[32];
	void *blob;
	size_t len;
	uint32_t v;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7);
	state_begin(w, "ram", 3);
	state_put_bytes(w, "big", big, sizeof(big));
	for (unsigned i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "reg%u", i);
		state_put_u32(w, name, i * 3);
	}
	state_end(w);
	ck_assert_int_eq(state_writer_finish(w, &blob, &len, err, sizeof(err)), 0);
	ck_assert_uint_gt(len, sizeof(big));
	ck_assert_int_eq(state_reader_open(&r, blob, len, err, sizeof(err)), 0);
	ck_assert_int_eq(state_node_open(&n, &r, "ram", 3, err, sizeof(err)), 0);
	ck_assert_int_eq(state_get_bytes(&n, "big", back, sizeof(back)), 0);
	ck_assert_mem_eq(back, big, sizeof(big));
	for (unsigned i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "reg%u", i);
		ck_assert_int_eq(state_get_u32(&n, name, &v), 0);
		ck_assert_uint_eq(v, i * 3);
	}
	ck_assert_int_eq(state_node_close(&n), 0);
	state_reader_close(&r);
	free(blob);
}
END_TEST

/* More properties than the unknown-property check can track. */
START_TEST(too_many_properties)
{
	struct state_writer *w = state_writer_new();
	struct state_reader r;
	struct state_node n;
	char name[32];
	void *blob;
	size_t len;
	uint8_t v;
	int ret = 0;

	state_begin(w, "d", 1);
	for (unsigned i = 0; i < STATE_NODE_MAX_PROPS + 1; i++) {
		snprintf(name, sizeof(name), "p%u", i);
		state_put_u8(w, name, 0);
	}
	state_end(w);
	ck_assert_int_eq(state_writer_finish(w, &blob, &len, err, sizeof(err)), 0);
	ck_assert_int_eq(state_reader_open(&r, blob, len, err, sizeof(err)), 0);
	ck_assert_int_eq(state_node_open(&n, &r, "d", 1, err, sizeof(err)), 0);
	for (unsigned i = 0; i < STATE_NODE_MAX_PROPS + 1 && ret == 0; i++) {
		snprintf(name, sizeof(name), "p%u", i);
		ret = state_get_u8(&n, name, &v);
	}
	ck_assert_int_eq(ret, -1);
	ck_assert_str_eq(err, "state: /d: more than 64 properties");
	state_reader_close(&r);
	free(blob);
}
END_TEST

START_TEST(garbage_and_sizes)
{
	struct state_reader r;
	uint8_t junk[256];
	size_t len;
	uint8_t *blob = sample(&len), *longer;

	memset(junk, 0xa5, sizeof(junk));
	ck_assert_int_eq(state_reader_open(&r, junk, sizeof(junk), err, sizeof(err)), -1);
	ck_assert_str_eq(err, "state: not a valid state tree: FDT_ERR_BADMAGIC");
	ck_assert_int_eq(state_reader_open(&r, junk, 0, err, sizeof(err)), -1);
	ck_assert_int_eq(state_reader_open(&r, blob, len - 1, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "state: not a valid state tree: FDT_ERR_TRUNCATED");
	longer = calloc(1, len + 8);
	memcpy(longer, blob, len);
	ck_assert_int_eq(state_reader_open(&r, longer, len + 8, err, sizeof(err)), -1);
	ck_assert_uint_eq(strncmp(err, "state: the tree is ", 19), 0);
	free(longer);
	free(blob);
}
END_TEST

/* Every prefix of a valid tree is refused; every single-byte corruption
 * either is refused or still reads without touching memory outside the
 * blob (ASan watches). */
START_TEST(truncated_and_corrupted)
{
	struct state_reader r;
	struct state_node n;
	size_t len;
	uint8_t *blob = sample(&len), *copy = malloc(len);
	uint8_t u8;

	for (size_t cut = 0; cut < len; cut++) {
		uint8_t *part = malloc(cut ? cut : 1);

		memcpy(part, blob, cut);
		ck_assert_int_eq(state_reader_open(&r, part, cut, err, sizeof(err)), -1);
		free(part);
	}
	for (size_t i = 0; i < len; i++) {
		for (unsigned bit = 0; bit < 8; bit++) {
			memcpy(copy, blob, len);
			copy[i] ^= (uint8_t)(1u << bit);
			if (state_reader_open(&r, copy, len, err, sizeof(err)) < 0)
				continue;
			if (state_node_open(&n, &r, "/devices/uart@3f8", 2, err, sizeof(err)) == 0) {
				state_get_u8(&n, "lsr", &u8);
				state_node_close(&n);
			}
			state_reader_close(&r);
		}
	}
	free(copy);
	free(blob);
}
END_TEST

/* A blob at an odd address (a stream buffer) reads the same. */
START_TEST(unaligned_input)
{
	struct state_reader r;
	struct state_node n;
	size_t len;
	uint8_t *blob = sample(&len), *odd = malloc(len + 1);
	uint8_t u8;

	memcpy(odd + 1, blob, len);
	ck_assert_int_eq(state_reader_open(&r, odd + 1, len, err, sizeof(err)), 0);
	ck_assert_int_eq(state_node_open(&n, &r, "devices/pic@20", 1, err, sizeof(err)), 0);
	ck_assert_int_eq(state_get_u8(&n, "imr", &u8), 0);
	ck_assert_uint_eq(u8, 0xfb);
	state_reader_close(&r);
	free(odd);
	free(blob);
}
END_TEST

/* A writer sized up front, larger or smaller than the tree, writes the
 * same bytes as one that starts small and grows. */
START_TEST(a_sized_writer_writes_the_same_tree)
{
	static uint8_t big[100000];
	const size_t sizes[] = {0, 1, 4096, 1 << 20};
	void *want = NULL, *blob;
	size_t want_len = 0, len;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 13);
	for (size_t s = 0; s <= sizeof(sizes) / sizeof(sizes[0]); s++) {
		struct state_writer *w =
			s == 0 ? state_writer_new() : state_writer_new_sized(sizes[s - 1]);

		ck_assert_ptr_nonnull(w);
		state_begin(w, "ram", 1);
		state_put_bytes(w, "big", big, sizeof(big));
		state_put_u32(w, "after", 7);
		state_end(w);
		ck_assert_int_eq(state_writer_finish(w, &blob, &len, err, sizeof(err)), 0);
		if (!want) {
			want = blob;
			want_len = len;
			continue;
		}
		ck_assert_uint_eq(len, want_len);
		ck_assert_mem_eq(blob, want, len);
		free(blob);
	}
	free(want);
}
END_TEST

/* An adopted blob is read where it lies: a property read in place points
 * into it (no copy was made), and the reader frees it, also when the blob
 * is refused (the leak checker of make check's ASan run would say). */
START_TEST(an_adopted_blob_is_read_in_place)
{
	struct state_reader r;
	struct state_node n;
	size_t len;
	uint8_t *blob = sample(&len), *bad = malloc(len);
	const uint8_t *fifo;

	ck_assert_int_eq(state_reader_adopt(&r, blob, len, err, sizeof(err)), 0);
	ck_assert_int_eq(state_node_open(&n, &r, "/devices/uart@3f8", 2, err, sizeof(err)), 0);
	fifo = state_get_in_place(&n, "fifo", 5);
	ck_assert_ptr_nonnull(fifo);
	ck_assert_mem_eq(fifo, ((uint8_t[]){1, 2, 3, 4, 5}), 5);
	ck_assert(fifo > blob && fifo + 5 <= blob + len);
	/* the wrong size is an error naming it, as for a copy */
	ck_assert_ptr_null(state_get_in_place(&n, "lsr", 2));
	ck_assert_msg(strstr(err, "'lsr' is 1 byte, expected 2"), "%s", err);
	state_reader_close(&r);

	blob = sample(&len);
	memcpy(bad, blob, len);
	free(blob);
	ck_assert_int_eq(state_reader_adopt(&r, bad, len - 8, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "state: "), "%s", err);
}
END_TEST

/* A property read in place counts as read. */
START_TEST(a_property_read_in_place_counts_as_read)
{
	struct state_reader r;
	struct state_node n;
	size_t len;
	void *blob = sample(&len);
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	open_uart(&r, &n, blob, len);
	ck_assert_ptr_nonnull(state_get_in_place(&n, "fifo", 5));
	ck_assert_int_eq(state_get_u8(&n, "lsr", &u8), 0);
	ck_assert_int_eq(state_get_u16(&n, "divisor", &u16), 0);
	ck_assert_int_eq(state_get_u32(&n, "count", &u32), 0);
	ck_assert_int_eq(state_get_u64(&n, "clock", &u64), 0);
	ck_assert_int_eq(state_get_u8(&n, "flag", &u8), 0);
	ck_assert_msg(state_node_close(&n) == 0, "%s", err);
	state_reader_close(&r);
	free(blob);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("state");
	TCase *tc = tcase_create("state");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, big_endian_on_the_wire);
	tcase_add_test(tc, unknown_property);
	tcase_add_test(tc, missing_property);
	tcase_add_test(tc, missing_node);
	tcase_add_test(tc, size_mismatch);
	tcase_add_test(tc, newer_version);
	tcase_add_test(tc, version_missing_or_malformed);
	tcase_add_test(tc, ranges);
	tcase_add_test(tc, writer_errors);
	tcase_add_test(tc, writer_grows);
	tcase_add_test(tc, too_many_properties);
	tcase_add_test(tc, garbage_and_sizes);
	tcase_add_test(tc, truncated_and_corrupted);
	tcase_add_test(tc, unaligned_input);
	tcase_add_test(tc, a_sized_writer_writes_the_same_tree);
	tcase_add_test(tc, an_adopted_blob_is_read_in_place);
	tcase_add_test(tc, a_property_read_in_place_counts_as_read);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
