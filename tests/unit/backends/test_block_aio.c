/* Unit tests for the io_uring engine (backends/block/block_aio.c): a short
 * completion is finished by resubmitting the rest, -EAGAIN and -EINTR are
 * retried, a read that meets the end of a shrunk image fails. Short and
 * retried completions are injected through block_aio_set_res_hook: the
 * hook changes the result the engine sees and undoes what the kernel did
 * past it (poisons the buffers of a read, the file of a write), so an
 * engine that took the short result for the whole request shows wrong
 * bytes. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backends/backends.h"
#include "tests/unit/check_run.h"

#define IMG_SIZE (64 * 1024)
#define REQ_SECTOR 8
#define REQ_OFF (REQ_SECTOR * BLOCK_SECTOR_SIZE)
#define POISON 0xee

static const size_t seg_len[3] = {1536, 10240, 4608}; /* 16 KiB in all */
#define REQ_LEN (1536 + 10240 + 4608)

static uint8_t pattern(size_t off, uint8_t salt)
{
	return (uint8_t)(off * 7 + (off >> 9) + salt);
}

static char img_path[64];
static int img_fd;

static struct block_dev *open_image(uint8_t salt)
{
	uint8_t *buf = malloc(IMG_SIZE);
	struct block_opts o = {.path = img_path};
	struct block_dev *b;
	char err[256];

	strcpy(img_path, "/tmp/vmm-block-aio-test-XXXXXX");
	img_fd = mkstemp(img_path);
	ck_assert_int_ge(img_fd, 0);
	for (size_t i = 0; i < IMG_SIZE; i++)
		buf[i] = pattern(i, salt);
	ck_assert_int_eq(pwrite(img_fd, buf, IMG_SIZE, 0), IMG_SIZE);
	free(buf);
	b = block_open(&o, err, sizeof(err));
	ck_assert_msg(b != NULL, "%s", err);
	return b;
}

static void close_image(struct block_dev *b)
{
	block_close(b);
	close(img_fd);
	unlink(img_path);
}

static struct block_aio *new_engine(struct block_dev *b)
{
	struct block_aio *a = block_aio_new(b, 8);

	ck_assert_msg(a != NULL, "io_uring refused on this kernel");
	return a;
}

/* The request's buffers: three separate segments. */
static struct iovec iov[3];

static void alloc_segments(void)
{
	for (int i = 0; i < 3; i++)
		iov[i] = (struct iovec){malloc(seg_len[i]), seg_len[i]};
}

static void free_segments(void)
{
	for (int i = 0; i < 3; i++)
		free(iov[i].iov_base);
}

/* Byte k of the request (across the segments). */
static uint8_t *seg_byte(size_t k)
{
	int i = 0;

	while (k >= iov[i].iov_len)
		k -= iov[i++].iov_len;
	return (uint8_t *)iov[i].iov_base + k;
}

/* The hook's script: results for the first completions, then the real
 * ones. A positive entry cuts a transfer short there. */
struct script {
	int res[4];
	int n, calls;
	bool write;
	size_t done; /* bytes of the request really transferred so far */
};

static int scripted(void *opaque, int res)
{
	struct script *s = opaque;
	size_t from;
	int r;

	if (s->calls >= s->n || res < 0) {
		s->calls++;
		s->done += res > 0 ? (size_t)res : 0;
		return res;
	}
	r = s->res[s->calls++];
	/* undo what the kernel did after the result we report */
	from = s->done + (r > 0 ? (size_t)r : 0);
	if (s->write) {
		uint8_t poison[REQ_LEN];

		memset(poison, POISON, sizeof(poison));
		ck_assert_int_eq(pwrite(img_fd, poison, REQ_LEN - from, REQ_OFF + (off_t)from),
				 (ssize_t)(REQ_LEN - from));
	} else {
		for (size_t k = from; k < REQ_LEN; k++)
			*seg_byte(k) = POISON;
	}
	s->done = from;
	return r;
}

struct result {
	int calls, r;
};

static void record(void *opaque, void *cookie, int r)
{
	struct result *res = opaque;

	ck_assert_ptr_eq(cookie, &iov);
	res->calls++;
	res->r = r;
}

/* One read or write of the request with the script: its result. */
static int run(struct block_aio *a, bool write, struct script *s)
{
	struct result res = {0, 1};

	s->write = write;
	block_aio_set_res_hook(a, scripted, s);
	ck_assert_int_eq(block_aio_rw(a, write, REQ_SECTOR, iov, 3, &iov), 0);
	block_aio_submit(a);
	block_aio_wait_all(a, record, &res);
	ck_assert_int_eq(res.calls, 1);
	ck_assert_int_eq(block_aio_in_flight(a), 0);
	return res.r;
}

static void assert_read_bytes(uint8_t salt)
{
	for (size_t k = 0; k < REQ_LEN; k++)
		ck_assert_msg(*seg_byte(k) == pattern(REQ_OFF + k, salt),
			      "byte %zu of the read: %#x, want %#x", k, *seg_byte(k),
			      pattern(REQ_OFF + k, salt));
}

static void assert_file_bytes(uint8_t salt)
{
	static uint8_t got[REQ_LEN];

	ck_assert_int_eq(pread(img_fd, got, REQ_LEN, REQ_OFF), REQ_LEN);
	for (size_t k = 0; k < REQ_LEN; k++)
		ck_assert_msg(got[k] == pattern(REQ_OFF + k, salt),
			      "byte %zu in the file: %#x, want %#x", k, got[k],
			      pattern(REQ_OFF + k, salt));
}

/* Each test: the image (salt 1) on a fresh engine, the segments. */
static struct block_dev *disk;
static struct block_aio *aio;

static void setup(void)
{
	disk = open_image(1);
	aio = new_engine(disk);
	alloc_segments();
}

static void teardown(void)
{
	free_segments();
	block_aio_free(aio);
	close_image(disk);
}

static void fill_segments(uint8_t salt)
{
	for (size_t k = 0; k < REQ_LEN; k++)
		*seg_byte(k) = pattern(REQ_OFF + k, salt);
}

START_TEST(short_reads_are_finished)
{
	/* inside the second segment, then inside the third, then 1 byte */
	struct script s = {.res = {4536, 9000, 1}, .n = 3};

	ck_assert_int_eq(run(aio, false, &s), 0);
	assert_read_bytes(1);
	ck_assert_int_eq(s.calls, 4);
}
END_TEST

START_TEST(short_writes_are_finished)
{
	struct script s = {.res = {1536, 512, 7000}, .n = 3}; /* segment edges and not */

	fill_segments(2);
	ck_assert_int_eq(run(aio, true, &s), 0);
	assert_file_bytes(2);
	ck_assert_int_eq(s.calls, 4);
}
END_TEST

START_TEST(eagain_and_eintr_are_retried)
{
	struct script s = {.res = {-EAGAIN, 2048, -EINTR}, .n = 3};

	ck_assert_int_eq(run(aio, false, &s), 0);
	assert_read_bytes(1);
	s = (struct script){.res = {-EINTR, -EAGAIN}, .n = 2};
	fill_segments(4);
	ck_assert_int_eq(run(aio, true, &s), 0);
	assert_file_bytes(4);
}
END_TEST

/* The image shrank after it was opened: the kernel's read stops at the
 * new end (short, then 0). The request fails; it never completes with
 * the buffers half filled. */
START_TEST(read_past_a_shrunk_end_fails)
{
	struct script s = {.n = 0};

	ck_assert_int_eq(ftruncate(img_fd, REQ_OFF + 6000), 0);
	ck_assert_int_lt(run(aio, false, &s), 0);
	ck_assert_int_eq(ftruncate(img_fd, REQ_OFF), 0);
	ck_assert_int_lt(run(aio, false, &s), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("block_aio");
	TCase *tc = tcase_create("io_uring");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, short_reads_are_finished);
	tcase_add_test(tc, short_writes_are_finished);
	tcase_add_test(tc, eagain_and_eintr_are_retried);
	tcase_add_test(tc, read_past_a_shrunk_end_fails);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
