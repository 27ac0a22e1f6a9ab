/* Unit tests for handing a disk image between two openers, as a live
 * migration on one host does (block_inactivate / block_activate): the
 * destination opens the image inactive while the source writes it, takes
 * no lock and writes nothing; activating is refused while the source
 * holds it; once the source lets go (flushed, qcow2's metadata written,
 * locks dropped) the destination reads everything the source wrote, also
 * clusters qcow2 allocated after the destination opened it, and can write;
 * the source can take it back, and while handed over writes nothing by
 * any path. qemu-img checks the qcow2 afterwards. */
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "backends/backends.h"
#include "tests/unit/backends/img_dir.h"
#include "tests/unit/devices/pc_host.h"

static struct block_dev *open_img(const char *path, enum block_format f, bool inactive)
{
	struct block_opts o = {.path = path, .format = f, .inactive = inactive};
	char err[256] = "";
	struct block_dev *b = block_open(&o, err, sizeof(err));

	ck_assert_msg(b != NULL, "%s", err);
	return b;
}

static void fill(uint8_t *buf, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed + i * 7);
}

static void hand_over(const char *path, enum block_format f)
{
	static uint8_t w[65536], r[65536];
	struct block_dev *src = open_img(path, f, false), *dst, *third;
	char err[256] = "";

	fill(w, sizeof(w), 1);
	ck_assert_int_eq(block_write(src, 0, w, 128), 0);
	dst = open_img(path, f, true); /* the destination, while the source runs */
	/* the source goes on writing: new clusters the destination has not seen */
	fill(w, sizeof(w), 2);
	ck_assert_int_eq(block_write(src, 4096, w, 128), 0);
	ck_assert_int_eq(block_activate(dst, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "is another process using the image"));
	ck_assert_int_eq(block_inactivate(src, err, sizeof(err)), 0);
	ck_assert_int_eq(block_activate(dst, err, sizeof(err)), 0);
	ck_assert_int_eq(block_read(dst, 4096, r, 128), 0);
	ck_assert_mem_eq(r, w, sizeof(r));
	fill(w, sizeof(w), 1);
	ck_assert_int_eq(block_read(dst, 0, r, 128), 0);
	ck_assert_mem_eq(r, w, sizeof(r));
	/* the destination writes; a third opener is kept out as usual */
	fill(w, sizeof(w), 3);
	ck_assert_int_eq(block_write(dst, 8192, w, 128), 0);
	{
		struct block_opts o = {.path = path, .format = f};

		third = block_open(&o, err, sizeof(err));
		ck_assert_ptr_null(third);
	}
	/* and hands it back, as a migration the other way does */
	ck_assert_int_eq(block_inactivate(dst, err, sizeof(err)), 0);
	ck_assert_int_eq(block_activate(src, err, sizeof(err)), 0);
	ck_assert_int_eq(block_read(src, 8192, r, 128), 0);
	ck_assert_mem_eq(r, w, sizeof(r));
	block_close(dst);
	block_close(src);
}

/* After the hand-over the source writes nothing, whatever path a late
 * request takes (a virtio-blk chain the guest made before the stop): the
 * destination's newer data in the same blocks stays. */
static void source_writes_nothing(const char *path, enum block_format f)
{
	static uint8_t w[65536], r[65536], late[65536];
	struct iovec iov = {late, sizeof(late)};
	struct block_target t;
	struct block_dev *src = open_img(path, f, false), *dst;
	char err[256] = "";

	fill(late, sizeof(late), 4);
	ck_assert_int_eq(block_write(src, 0, late, 128), 0); /* allocated: qcow2 goes direct */
	dst = open_img(path, f, true);
	ck_assert_int_eq(block_inactivate(src, err, sizeof(err)), 0);
	ck_assert_int_eq(block_activate(dst, err, sizeof(err)), 0);
	fill(w, sizeof(w), 5);
	ck_assert_int_eq(block_write(dst, 0, w, 128), 0);
	ck_assert_int_eq(block_flush(dst), 0);
	ck_assert_int_eq(block_write(src, 0, late, 128), -EROFS);
	ck_assert_int_eq(block_writev(src, 0, &iov, 1), -EROFS);
	ck_assert_int_eq(block_direct_target(src, true, 0, &iov, 1, &t), -1);
	ck_assert_int_eq(block_discard(src, 0, 128), -EROFS);
	ck_assert_int_eq(block_write_zeroes(src, 0, 128, false), -EROFS);
	ck_assert_int_eq(block_read(dst, 0, r, 128), 0);
	ck_assert_mem_eq(r, w, sizeof(r));
	block_close(src);
	block_close(dst);
}

/* A fresh 16 MiB image of format f (test loops: 0 raw, 1 qcow2). */
static enum block_format new_image(int loop, char *path, size_t len)
{
	enum block_format f = loop ? BLOCK_FORMAT_QCOW2 : BLOCK_FORMAT_RAW;

	snprintf(path, len, "%s/disk.%s", dir, loop ? "qcow2" : "raw");
	ck_assert_int_eq(loop ? sh("qemu-img create -q -f qcow2 '%s' 16M", path)
			      : sh("truncate -s 16M '%s'", path),
			 0);
	return f;
}

static void check_image(int loop, const char *path)
{
	if (loop)
		ck_assert_int_eq(sh("qemu-img check -q '%s'", path), 0);
}

START_TEST(hand_over_each_format)
{
	char path[128];

	hand_over(path, new_image(_i, path, sizeof(path)));
	check_image(_i, path);
}
END_TEST

START_TEST(source_writes_nothing_each_format)
{
	char path[128];

	source_writes_nothing(path, new_image(_i, path, sizeof(path)));
	check_image(_i, path);
}
END_TEST

/* An inactive image is not locked and not written: QEMU's qemu-img can
 * still write it (it is the source's), and closing it changes nothing. */
START_TEST(inactive_takes_nothing)
{
	char path[128], err[256];
	struct block_dev *dst;

	snprintf(path, sizeof(path), "%s/disk.qcow2", dir);
	ck_assert_int_eq(sh("qemu-img create -q -f qcow2 '%s' 16M", path), 0);
	dst = open_img(path, BLOCK_FORMAT_QCOW2, true);
	ck_assert_int_eq(sh("qemu-io -f qcow2 -c 'write -P 0x5a 0 64k' '%s'", path), 0);
	ck_assert_int_eq(block_activate(dst, err, sizeof(err)), 0);
	ck_assert_int_eq(sh("qemu-io -f qcow2 -c 'read 0 512' '%s' 2>/dev/null", path), 1);
	block_close(dst);
	ck_assert_int_eq(sh("qemu-io -f qcow2 -c 'read -P 0x5a 0 64k' '%s'", path), 0);
	ck_assert_int_eq(sh("qemu-img check -q '%s'", path), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("block_handover");
	TCase *tc = tcase_create("block_handover");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, hand_over_each_format, 0, 2);
	tcase_add_loop_test(tc, source_writes_nothing_each_format, 0, 2);
	tcase_add_test(tc, inactive_takes_nothing);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
