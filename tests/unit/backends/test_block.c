/* Unit tests for the raw block backend: errors, I/O, read-only, snapshot. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backends.h"
#include "tests/unit/devices/pc_host.h"

static char *make_image(size_t size, uint8_t fill)
{
	static char path[64];
	uint8_t *buf = malloc(size ? size : 1);
	int fd;

	strcpy(path, "/tmp/vmm-block-test-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	memset(buf, fill, size);
	ck_assert_int_eq(write(fd, buf, size), (ssize_t)size);
	close(fd);
	free(buf);
	return path;
}

static struct block_dev *open_img(const char *path, bool ro, bool snap, char *err)
{
	struct block_opts o = {.path = path, .read_only = ro, .snapshot = snap};

	return block_open(&o, err, 256);
}

START_TEST(bad_images_give_one_line_errors)
{
	char err[256], *p;

	ck_assert_ptr_null(open_img("/nonexistent/disk.img", false, false, err));
	ck_assert_ptr_nonnull(strstr(err, "No such file"));
	ck_assert_ptr_null(strchr(err, '\n'));
	ck_assert_ptr_null(open_img("/tmp", false, false, err));
	ck_assert_ptr_nonnull(strstr(err, "is a directory"));
	ck_assert_ptr_null(open_img("/tmp", true, false, err));
	ck_assert_ptr_nonnull(strstr(err, "is a directory"));
	p = make_image(1000, 0);
	ck_assert_ptr_null(open_img(p, false, false, err));
	ck_assert_ptr_nonnull(strstr(err, "not a multiple of 512"));
	unlink(p);
	p = make_image(0, 0);
	ck_assert_ptr_null(open_img(p, false, false, err));
	ck_assert_ptr_nonnull(strstr(err, "empty"));
	unlink(p);
	if (geteuid() != 0) { /* root reads anything */
		p = make_image(512, 0);
		chmod(p, 0);
		ck_assert_ptr_null(open_img(p, true, false, err));
		ck_assert_ptr_nonnull(strstr(err, "Permission denied"));
		unlink(p);
	}
}
END_TEST

START_TEST(read_write_and_bounds)
{
	char err[256], *p = make_image(4 * 512, 0x11);
	struct block_dev *b = open_img(p, false, false, err);
	uint8_t buf[1024];

	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(block_sectors(b), 4);
	ck_assert_str_eq(block_path(b), p);
	memset(buf, 0x22, sizeof(buf));
	ck_assert_int_eq(block_write(b, 2, buf, 2), 0);
	ck_assert_int_eq(block_write(b, 3, buf, 2), -ERANGE);
	ck_assert_int_eq(block_write(b, UINT64_MAX, buf, 1), -ERANGE);
	ck_assert_int_eq(block_read(b, 4, buf, 1), -ERANGE);
	ck_assert_int_eq(block_read(b, 1, buf, 2), 0);
	ck_assert_uint_eq(buf[0], 0x11);
	ck_assert_uint_eq(buf[512], 0x22);
	ck_assert_int_eq(block_flush(b), 0);
	block_close(b);
	{
		struct stat st;

		stat(p, &st);
		ck_assert_int_eq(st.st_size, 4 * 512); /* never grows */
	}
	unlink(p);
}
END_TEST

START_TEST(read_only_refuses_writes)
{
	char err[256], *p = make_image(512, 0x33);
	struct block_dev *b = open_img(p, true, false, err);
	uint8_t buf[512];

	ck_assert_ptr_nonnull(b);
	ck_assert(block_read_only(b));
	ck_assert_int_eq(block_write(b, 0, buf, 1), -EROFS);
	ck_assert_int_eq(block_read(b, 0, buf, 1), 0);
	ck_assert_uint_eq(buf[7], 0x33);
	block_close(b);
	unlink(p);
}
END_TEST

START_TEST(snapshot_never_touches_the_image)
{
	char err[256], *p = make_image(8 * 512, 0x44);
	struct block_dev *b;
	uint8_t buf[8 * 512], file[8 * 512];
	int fd;

	chmod(p, 0444); /* the image need not even be writable */
	b = open_img(p, false, true, err);
	ck_assert_msg(b != NULL, "%s", err);
	ck_assert(!block_read_only(b));
	memset(buf, 0x55, 512);
	ck_assert_int_eq(block_write(b, 3, buf, 1), 0);
	memset(buf, 0x66, 1024);
	ck_assert_int_eq(block_write(b, 6, buf, 2), 0);
	ck_assert_int_eq(block_read(b, 0, buf, 8), 0);
	for (unsigned s = 0; s < 8; s++) {
		uint8_t want = s == 3 ? 0x55 : s >= 6 ? 0x66 : 0x44;

		ck_assert_uint_eq(buf[s * 512], want);
		ck_assert_uint_eq(buf[s * 512 + 511], want);
	}
	ck_assert_int_eq(block_flush(b), 0);
	block_close(b);
	fd = open(p, O_RDONLY);
	ck_assert_int_eq(read(fd, file, sizeof(file)), (ssize_t)sizeof(file));
	close(fd);
	for (unsigned i = 0; i < sizeof(file); i++)
		ck_assert_uint_eq(file[i], 0x44);
	unlink(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("block");
	TCase *tc = tcase_create("block");

	tcase_add_test(tc, bad_images_give_one_line_errors);
	tcase_add_test(tc, read_write_and_bounds);
	tcase_add_test(tc, read_only_refuses_writes);
	tcase_add_test(tc, snapshot_never_touches_the_image);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
