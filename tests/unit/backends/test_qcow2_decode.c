/* Unit tests for compressed qcow2 clusters on the io_uring engine: a
 * qcow2 made by `qemu-img convert -c` (zlib, and zstd) from a raw file
 * whose every cluster differs; rounds of reads, all in flight at once,
 * small and across clusters, must go to the engine (their compressed
 * bytes read, then decoded by the decode threads) and give the raw
 * file's bytes; then the same image as the backing file of an overlay,
 * with cache=none. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "backends/backends.h"
#include "tests/unit/backends/img_dir.h"
#include "tests/unit/check_run.h"

#define DISK (8u << 20)
#define ROUNDS 20
#define BATCH 48

static uint8_t *raw;

/* raw.img: each 4 KiB block its number and a pattern that compresses. */
static void make_images(const char *ctype)
{
	FILE *f;

	raw = malloc(DISK);
	ck_assert_ptr_nonnull(raw);
	for (size_t i = 0; i < DISK; i++)
		raw[i] = (uint8_t)((i & 4095) < 8 ? (i >> 12) >> ((i & 3) * 8) : (i * 13) >> 7);
	f = fopen(path_of("raw.img"), "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(raw, 1, DISK, f), DISK);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(sh("cd '%s' && qemu-img convert -c -f raw -O qcow2 -o compression_type=%s "
			    "raw.img c.qcow2 && qemu-img create -q -f qcow2 -b c.qcow2 -F qcow2 "
			    "o.qcow2",
			    dir, ctype),
			 0);
	ck_assert_int_eq(sh("qemu-img info '%s' | grep -q 'compression type: %s'",
			    path_of("c.qcow2"), ctype),
			 0);
}

struct read {
	uint64_t off;
	size_t len;
	uint8_t *buf;
	int done;
};

static void read_done(void *opaque, void *cookie, int res)
{
	struct read *r = cookie;

	ck_assert_int_eq(res, 0);
	r->done++;
}

/* ROUNDS rounds of BATCH reads in flight, each what raw.img holds
 * there; the engine takes all but those touching the cluster the image
 * holds decoded from an earlier round (served at once from it). */
static void reads_in_flight(const char *image, enum block_cache cache)
{
	struct block_opts o = {
		.path = path_of(image), .cache = cache, .format = BLOCK_FORMAT_QCOW2};
	char err[256] = "";
	struct block_dev *b = block_open(&o, err, sizeof(err));
	struct block_aio *a;
	struct read r[BATCH];
	unsigned long seed = 7;
	unsigned at_once = 0;

	ck_assert_msg(b != NULL, "%s", err);
	a = block_aio_new(b, BATCH);
	ck_assert_ptr_nonnull(a);
	for (int round = 0; round < ROUNDS; round++) {
		for (int i = 0; i < BATCH; i++) {
			struct iovec v;

			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			/* 4 KiB to 136 KiB: inside a 64 KiB cluster or across two or three */
			r[i].len = 4096 * (1 + (seed >> 40) % 34);
			r[i].off = ((seed >> 20) % ((DISK - r[i].len) / 512)) * 512;
			r[i].buf = aligned_alloc(4096, r[i].len);
			r[i].done = 0;
			v = (struct iovec){r[i].buf, r[i].len};
			if (block_aio_rw(a, false, r[i].off / 512, &v, 1, &r[i])) {
				read_done(NULL, &r[i], block_readv(b, r[i].off / 512, &v, 1));
				at_once++;
			}
		}
		block_aio_wait_all(a, read_done, NULL);
		for (int i = 0; i < BATCH; i++) {
			ck_assert_int_eq(r[i].done, 1);
			ck_assert_msg(!memcmp(r[i].buf, raw + r[i].off, r[i].len),
				      "round %d: %zu bytes at %llu differ", round, r[i].len,
				      (unsigned long long)r[i].off);
			free(r[i].buf);
		}
	}
	ck_assert_msg(at_once <= ROUNDS * BATCH / 10, "%u of %u reads served at once", at_once,
		      ROUNDS * BATCH);
	block_aio_free(a);
	block_close(b);
}

START_TEST(zlib_clusters_decode_in_flight)
{
	make_images("zlib");
	reads_in_flight("c.qcow2", BLOCK_CACHE_WRITEBACK);
	reads_in_flight("o.qcow2", BLOCK_CACHE_NONE);
	free(raw);
}
END_TEST

START_TEST(zstd_clusters_decode_in_flight)
{
	make_images("zstd");
	reads_in_flight("c.qcow2", BLOCK_CACHE_NONE);
	reads_in_flight("o.qcow2", BLOCK_CACHE_WRITEBACK);
	free(raw);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("qcow2_decode");
	TCase *tc = tcase_create("qcow2_decode");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, zlib_clusters_decode_in_flight);
	tcase_add_test(tc, zstd_clusters_decode_in_flight);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
