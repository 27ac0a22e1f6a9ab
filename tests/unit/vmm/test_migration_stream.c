/* Unit tests for the migration stream's framing (vmm/migration_stream.c):
 * a round trip, zero pages that take no room, passes that resend pages
 * (the last copy wins), and every kind of damage
 * (truncation at any byte, bad magic, version, padding, sizes, trailer)
 * refused with a one-line error; descriptors passed along on a unix
 * socket arrive in order. */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/check_run.h"
#include "vmm/migration.h"

#define PAGES_A 16
#define PAGES_B 3

static uint8_t ram_a[PAGES_A * MIG_PAGE], ram_b[PAGES_B * MIG_PAGE];
static const char tree[] = "a stand-in for the state tree";

static void fill(void)
{
	memset(ram_a, 0, sizeof(ram_a));
	memset(ram_b, 0, sizeof(ram_b));
	/* pages 1, 2 (a run), 7 and the last one of A; the middle one of B */
	for (unsigned i = 0; i < MIG_PAGE; i++) {
		ram_a[1 * MIG_PAGE + i] = (uint8_t)i;
		ram_a[2 * MIG_PAGE + i] = (uint8_t)(i * 7);
		ram_b[1 * MIG_PAGE + i] = 0x5a;
	}
	ram_a[7 * MIG_PAGE + 100] = 1;
	ram_a[sizeof(ram_a) - 1] = 0xff;
}

/* The stream of fill()'s RAM in a memfd; returns its fd at offset 0. */
static int saved_stream(struct mig_stats *st, off_t *size)
{
	struct mig_ram ram[2] = {{ram_a, sizeof(ram_a)}, {ram_b, sizeof(ram_b)}};
	int fd = memfd_create("mig", 0);
	char err[256];

	ck_assert_int_ge(fd, 0);
	*st = (struct mig_stats){0};
	ck_assert_int_eq(mig_stream_write(fd, tree, sizeof(tree), ram, 2, st, err, sizeof(err)), 0);
	*size = lseek(fd, 0, SEEK_END);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static bool map_file; /* load() maps the stored pages from the file */
static uint64_t mapped_bytes;

/* Load fd into fresh zeroed blocks: 0 or -1 with err. */
static int load(int fd, uint8_t *a, uint8_t *b, char *err, size_t errlen)
{
	struct mig_ram ram[2] = {{a, sizeof(ram_a)}, {b, sizeof(ram_b)}};
	struct mig_stats st = {0};
	struct mig_in in;
	void *t;
	size_t len;
	int r;

	memset(a, 0, sizeof(ram_a));
	memset(b, 0, sizeof(ram_b));
	if (mig_stream_read_header(&in, fd, err, errlen) < 0)
		return -1;
	in.map_file = map_file;
	r = mig_stream_read_ram(&in, ram, 2, &st, err, errlen);
	mapped_bytes = in.mapped_bytes;
	if (r < 0 || mig_stream_read_tree(&in, &t, &len, err, errlen) < 0)
		return -1;
	r = len == sizeof(tree) && !memcmp(t, tree, len) ? 0 : -2;
	free(t);
	return r;
}

/* Page-aligned: loading with map_file maps file pages over them. */
static uint8_t got_a[sizeof(ram_a)] __attribute__((aligned(MIG_PAGE)));
static uint8_t got_b[sizeof(ram_b)] __attribute__((aligned(MIG_PAGE)));

START_TEST(round_trip)
{
	struct mig_stats st;
	off_t size;
	char err[256];
	int fd;

	fill();
	fd = saved_stream(&st, &size);
	ck_assert_int_eq(load(fd, got_a, got_b, err, sizeof(err)), 0);
	ck_assert_mem_eq(got_a, ram_a, sizeof(ram_a));
	ck_assert_mem_eq(got_b, ram_b, sizeof(ram_b));
	ck_assert_uint_eq(st.transferred, (uint64_t)size);
	ck_assert_uint_eq(st.total, (uint64_t)size);
	close(fd);
}
END_TEST

/* Only the 5 non-zero pages are stored: header page, per block a
 * header+bitmaps page (the pass's tag in the first), the pages, the tree's
 * page, the trailer. */
START_TEST(zero_pages_are_bits)
{
	struct mig_stats st;
	off_t size;
	int fd;

	fill();
	fd = saved_stream(&st, &size);
	ck_assert_uint_eq(st.normal_pages, 5);
	ck_assert_uint_eq(st.zero_pages, PAGES_A + PAGES_B - 5);
	ck_assert_int_eq(size, (1 + 2 + 5 + 1) * MIG_PAGE + 16);
	close(fd);
}
END_TEST

/* Every stored page starts at a page-aligned offset: the loader can map them. */
START_TEST(pages_are_aligned)
{
	struct mig_stats st;
	off_t size;
	uint8_t page[MIG_PAGE];
	int fd;

	fill();
	fd = saved_stream(&st, &size);
	/* A's page 1 is the first stored page: after the header page and A's bitmap page */
	ck_assert_int_eq(pread(fd, page, MIG_PAGE, 2 * MIG_PAGE), MIG_PAGE);
	ck_assert_mem_eq(page, ram_a + MIG_PAGE, MIG_PAGE);
	close(fd);
}
END_TEST

/* From a file, the stored pages are mapped, privately: the guest's
 * writes stay out of the file. */
START_TEST(file_pages_are_mapped)
{
	struct mig_stats st;
	off_t size;
	uint8_t page[MIG_PAGE];
	char err[256];
	int fd;

	fill();
	fd = saved_stream(&st, &size);
	map_file = true;
	ck_assert_int_eq(load(fd, got_a, got_b, err, sizeof(err)), 0);
	map_file = false;
	ck_assert_uint_eq(mapped_bytes, 5 * MIG_PAGE);
	ck_assert_mem_eq(got_a, ram_a, sizeof(ram_a));
	ck_assert_mem_eq(got_b, ram_b, sizeof(ram_b));
	got_a[MIG_PAGE] = 0xee;
	ck_assert_int_eq(pread(fd, page, MIG_PAGE, 2 * MIG_PAGE), MIG_PAGE);
	ck_assert_mem_eq(page, ram_a + MIG_PAGE, MIG_PAGE);
	close(fd);
}
END_TEST

START_TEST(truncated_anywhere_is_refused)
{
	struct mig_stats st;
	off_t size;
	char err[256];
	int fd;

	fill();
	map_file = _i; /* read, then mapped from the file */
	fd = saved_stream(&st, &size);
	for (off_t cut = 0; cut < size; cut += cut < 64 ? 1 : 509) {
		ck_assert_int_eq(ftruncate(fd, cut), 0);
		lseek(fd, 0, SEEK_SET);
		ck_assert_int_eq(load(fd, got_a, got_b, err, sizeof(err)), -1);
		ck_assert_msg(strstr(err, "truncated"), "cut at %ld: %s", (long)cut, err);
		ck_assert_ptr_null(strchr(err, '\n'));
		close(fd);
		fd = saved_stream(&st, &size);
	}
	map_file = false;
	close(fd);
}
END_TEST

/* Overwrite len bytes at off of a good stream and expect an error naming why. */
static void damaged(off_t off, const void *bytes, size_t len, const char *why)
{
	struct mig_stats st;
	off_t size;
	char err[256] = "";
	int fd;

	fill();
	fd = saved_stream(&st, &size);
	ck_assert_int_eq(pwrite(fd, bytes, len, off < 0 ? size + off : off), (ssize_t)len);
	ck_assert_int_eq(load(fd, got_a, got_b, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, why), "expected '%s', got '%s'", why, err);
	close(fd);
}

START_TEST(damage_is_refused)
{
	const uint8_t zero = 0, one = 1, two = 2, nine = 9, ff = 0xff;
	const uint8_t size_byte = 0x20; /* A's size is 0x10000: make it 0x10020 */

	damaged(0, "X", 1, "bad magic");
	damaged(8, &nine, 1, "version 9");
	damaged(12, &one, 1, "bad header");
	damaged(16, &one, 1, "bad header");
	damaged(24, &nine, 1, "region count");
	damaged(32 + 3, &one, 1, "non-zero padding");
	damaged(MIG_PAGE, "Q", 1, "expected a RAM pass or the state");
	damaged(MIG_PAGE + 8, &two, 1, "RAM pass out of order");
	damaged(MIG_PAGE + 16, &size_byte, 1, "RAM block of 65568 bytes");
	/* A's "sent" bitmap: pass 1 sends every page, 1 and 2 are stored */
	damaged(MIG_PAGE + 32, &zero, 1, "a stored page that is not sent");
	/* B's bitmaps (3 pages): after A's 4 stored pages */
	damaged((2 + 4) * MIG_PAGE + 16, &ff, 1, "bits past the block's end");
	/* the state's tag: after B's stored page */
	damaged((2 + 4 + 2) * MIG_PAGE + 15, &ff, 1, "state tree length out of range");
	damaged(-16, "Y", 1, "bad trailer");
	damaged(-8, &one, 1, "bad trailer");
}
END_TEST

/* Later passes resend pages: the last copy wins, zero pages included. */
static void two_passes(int fd)
{
	struct mig_ram ram[2] = {{ram_a, sizeof(ram_a)}, {ram_b, sizeof(ram_b)}};
	uint64_t dirty_a[1] = {0}, dirty_b[1] = {0};
	uint64_t *const dirty[2] = {dirty_a, dirty_b};
	struct mig_stats st = {0};
	char err[256];
	struct mig_out o = {.fd = fd, .st = &st, .err = err, .errlen = sizeof(err)};

	fill();
	ck_assert_int_eq(mig_out_header(&o, 2), 0);
	ck_assert_int_eq(mig_out_pass(&o, 1, ram, 2, NULL), 0);
	memset(ram_a + 1 * MIG_PAGE, 0, MIG_PAGE); /* stored, now zeros */
	ram_a[2 * MIG_PAGE] ^= 0x80;		   /* stored, changed */
	ram_a[3 * MIG_PAGE + 5] = 3;		   /* zeros, now stored */
	ram_b[0] = 9;				   /* changed, never sent again */
	dirty_a[0] = 1u << 1 | 1u << 2 | 1u << 3;
	ck_assert_int_eq(mig_out_pass(&o, 2, ram, 2, dirty), 0);
	ram_b[0] = 0; /* as it was when pass 1 sent it */
	ck_assert_int_eq(mig_out_end(&o, tree, sizeof(tree)), 0);
	lseek(fd, 0, SEEK_SET);
}

START_TEST(later_passes_win)
{
	char err[256];
	int fd = memfd_create("mig", 0);

	map_file = _i;
	two_passes(fd);
	ck_assert_int_eq(load(fd, got_a, got_b, err, sizeof(err)), 0);
	map_file = false;
	ck_assert_mem_eq(got_a, ram_a, sizeof(ram_a));
	ck_assert_mem_eq(got_b, ram_b, sizeof(ram_b));
	close(fd);
}
END_TEST

/* Read a one-block stream from fd's start into dst, the tree too. */
static void load_one_block(int fd, uint8_t *dst, size_t size)
{
	struct mig_ram ram = {dst, size};
	struct mig_stats st = {0};
	struct mig_in in;
	char err[256];
	size_t len;
	void *t;

	lseek(fd, 0, SEEK_SET);
	ck_assert_int_eq(mig_stream_read_header(&in, fd, err, sizeof(err)), 0);
	ck_assert_msg(mig_stream_read_ram(&in, &ram, 1, &st, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(mig_stream_read_tree(&in, &t, &len, err, sizeof(err)), 0);
	free(t);
}

/* A later pass sends the pages of its dirty set and nothing else, also
 * where whole words of the set are clean (the writer skips those). */
START_TEST(sparse_dirty_sets_send_exactly_their_pages)
{
	enum { PAGES = 256 };
	static const unsigned dirtied[] = {64, 130, 191, 192, 255}; /* word 0 clean */
	static uint8_t src[PAGES * MIG_PAGE], dst[PAGES * MIG_PAGE];
	uint64_t dirty[PAGES / 64] = {0};
	uint64_t *const maps[1] = {dirty};
	struct mig_ram ram = {src, sizeof(src)};
	struct mig_stats st = {0};
	int fd = memfd_create("mig", 0);
	char err[256];
	struct mig_out o = {.fd = fd, .st = &st, .err = err, .errlen = sizeof(err)};

	for (unsigned p = 0; p < PAGES; p++)
		memset(src + p * MIG_PAGE, (int)(p % 250 + 1), MIG_PAGE); /* none zero */
	ck_assert_int_eq(mig_out_header(&o, 1), 0);
	ck_assert_int_eq(mig_out_pass(&o, 1, &ram, 1, NULL), 0);
	for (unsigned i = 0; i < sizeof(dirtied) / sizeof(dirtied[0]); i++) {
		memset(src + dirtied[i] * MIG_PAGE, 0xee, MIG_PAGE);
		dirty[dirtied[i] / 64] |= 1ull << (dirtied[i] % 64);
	}
	memset(src + 100 * MIG_PAGE, 0xdd, MIG_PAGE); /* written, not in the set */
	ck_assert_int_eq(mig_out_pass(&o, 2, &ram, 1, maps), 0);
	ck_assert_int_eq(mig_out_end(&o, tree, sizeof(tree)), 0);
	ck_assert_uint_eq(st.normal_pages, PAGES + 5);
	load_one_block(fd, dst, sizeof(dst));
	memset(src + 100 * MIG_PAGE, 101, MIG_PAGE); /* what pass 1 sent */
	ck_assert_mem_eq(dst, src, sizeof(src));
	close(fd);
}
END_TEST

/* The destination's helper faults in exactly the pages a pass will bring
 * (those with data), ahead of the receiver; too few are not worth it. */
START_TEST(prefault_faults_exactly_the_coming_pages)
{
	enum { PAGES = 4096 };
	static uint8_t data[PAGES / 8];
	unsigned char vec[PAGES];
	struct mig_prefault pf;
	uint8_t *hva = mmap(NULL, (size_t)PAGES * MIG_PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned resident = 0;

	ck_assert_ptr_ne(hva, MAP_FAILED);
	madvise(hva, (size_t)PAGES * MIG_PAGE, MADV_NOHUGEPAGE); /* residency per page */
	for (unsigned i = 0; i < PAGES; i += 3)
		data[i / 8] |= (uint8_t)(1u << (i % 8));
	mig_prefault_start(&pf, hva, data, PAGES);
	ck_assert(pf.started);
	for (int tries = 0; tries < 500 && resident < (PAGES + 2) / 3; tries++) {
		usleep(10000);
		ck_assert_int_eq(mincore(hva, (size_t)PAGES * MIG_PAGE, vec), 0);
		resident = 0;
		for (unsigned i = 0; i < PAGES; i += 3)
			resident += vec[i] & 1;
	}
	mig_prefault_stop(&pf);
	ck_assert_uint_eq(resident, (PAGES + 2) / 3);
	for (unsigned i = 0; i < PAGES; i++)
		ck_assert_msg((vec[i] & 1) == (i % 3 == 0), "page %u resident: %d", i, vec[i] & 1);
	/* a pass with a few pages of data starts no thread */
	memset(data, 0, sizeof(data));
	data[0] = 0xff;
	mig_prefault_start(&pf, hva, data, PAGES);
	ck_assert(!pf.started);
	mig_prefault_stop(&pf);
	munmap(hva, (size_t)PAGES * MIG_PAGE);
}
END_TEST

/* A pass of many pages into fresh memory, the helper faulting beside the
 * receiver: every page arrives as sent. */
START_TEST(a_large_pass_arrives_whole_beside_the_prefault)
{
	enum { PAGES = 8192 };
	size_t size = (size_t)PAGES * MIG_PAGE;
	uint8_t *src = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *dst = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct mig_ram ram = {src, size};
	struct mig_stats st = {0};
	int fd = memfd_create("mig", 0);
	char err[256];
	struct mig_out o = {.fd = fd, .st = &st, .err = err, .errlen = sizeof(err)};

	ck_assert_ptr_ne(src, MAP_FAILED);
	ck_assert_ptr_ne(dst, MAP_FAILED);
	for (unsigned p = 0; p < PAGES; p++)
		if (p % 5) /* every fifth a zero page */
			memset(src + (size_t)p * MIG_PAGE, (int)(p % 251 + 1), MIG_PAGE);
	ck_assert_int_eq(mig_out_header(&o, 1), 0);
	ck_assert_int_eq(mig_out_pass(&o, 1, &ram, 1, NULL), 0);
	ck_assert_int_eq(mig_out_end(&o, tree, sizeof(tree)), 0);
	load_one_block(fd, dst, size);
	ck_assert_int_eq(memcmp(dst, src, size), 0);
	munmap(src, size);
	munmap(dst, size);
	close(fd);
}
END_TEST

/* A fresh block is zeros: a page the first pass sends as zeros is left
 * alone, never read (here it is PROT_NONE, so reading it would crash). */
START_TEST(first_pass_zero_pages_are_not_touched)
{
	uint8_t *a = mmap(NULL, sizeof(ram_a), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *b = mmap(NULL, sizeof(ram_b), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct mig_ram ram[2] = {{a, sizeof(ram_a)}, {b, sizeof(ram_b)}};
	static const unsigned stored_a[] = {1, 2, 7, PAGES_A - 1};
	struct mig_stats st;
	struct mig_in in;
	char err[256];
	off_t size;
	void *t;
	size_t len;
	int fd;

	fill();
	fd = saved_stream(&st, &size);
	for (unsigned i = 0; i < sizeof(stored_a) / sizeof(stored_a[0]); i++)
		mprotect(a + stored_a[i] * MIG_PAGE, MIG_PAGE, PROT_READ | PROT_WRITE);
	mprotect(b + MIG_PAGE, MIG_PAGE, PROT_READ | PROT_WRITE);
	ck_assert_int_eq(mig_stream_read_header(&in, fd, err, sizeof(err)), 0);
	ck_assert_int_eq(mig_stream_read_ram(&in, ram, 2, &st, err, sizeof(err)), 0);
	ck_assert_int_eq(mig_stream_read_tree(&in, &t, &len, err, sizeof(err)), 0);
	free(t);
	for (unsigned i = 0; i < sizeof(stored_a) / sizeof(stored_a[0]); i++)
		ck_assert_mem_eq(a + stored_a[i] * MIG_PAGE, ram_a + stored_a[i] * MIG_PAGE,
				 MIG_PAGE);
	ck_assert_mem_eq(b + MIG_PAGE, ram_b + MIG_PAGE, MIG_PAGE);
	munmap(a, sizeof(ram_a));
	munmap(b, sizeof(ram_b));
	close(fd);
}
END_TEST

/* The destination wrote some pages at its start (-kernel's image and
 * boot tables): those the source has as zeros must read as zeros after
 * the load, whatever pass sent them. */
START_TEST(zero_pages_clear_what_the_destination_wrote)
{
	uint8_t *a = mmap(NULL, sizeof(ram_a), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	uint8_t *b = mmap(NULL, sizeof(ram_b), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	struct mig_ram ram[2] = {{a, sizeof(ram_a)}, {b, sizeof(ram_b)}};
	struct mig_stats st;
	struct mig_in in;
	char err[256];
	off_t size;
	void *t;
	size_t len;
	int fd;

	fill();
	fd = saved_stream(&st, &size);
	memset(a, 0xcc, 1); /* page 0: zeros at the source */
	memset(a + 5 * MIG_PAGE + 17, 0xcc, 100);
	memset(a + 7 * MIG_PAGE, 0xcc, MIG_PAGE); /* stored by the stream too */
	memset(b + 2 * MIG_PAGE + MIG_PAGE - 1, 0xcc, 1);
	ck_assert_int_eq(mig_stream_read_header(&in, fd, err, sizeof(err)), 0);
	ck_assert_int_eq(mig_stream_read_ram(&in, ram, 2, &st, err, sizeof(err)), 0);
	ck_assert_int_eq(mig_stream_read_tree(&in, &t, &len, err, sizeof(err)), 0);
	free(t);
	ck_assert_mem_eq(a, ram_a, sizeof(ram_a));
	ck_assert_mem_eq(b, ram_b, sizeof(ram_b));
	munmap(a, sizeof(ram_a));
	munmap(b, sizeof(ram_b));
	close(fd);
}
END_TEST

START_TEST(extra_bytes_are_refused)
{
	struct mig_stats st;
	off_t size;
	char err[256] = "";
	int fd;

	fill();
	fd = saved_stream(&st, &size);
	ck_assert_int_eq(pwrite(fd, "!", 1, size), 1);
	ck_assert_int_eq(load(fd, got_a, got_b, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "after the trailer"));
	close(fd);
}
END_TEST

/* ------------------------------------------- descriptors on a unix socket */

#define PASSED 300 /* two SCM_RIGHTS messages */

struct writer {
	int fd;
	const int *fds;
	unsigned nfds;
	int r;
	char err[256];
};

static void *write_with_fds(void *arg)
{
	struct writer *w = arg;
	struct mig_ram ram[2] = {{ram_a, sizeof(ram_a)}, {ram_b, sizeof(ram_b)}};
	struct mig_stats st = {0};
	struct mig_out o = {.fd = w->fd,
			    .st = &st,
			    .err = w->err,
			    .errlen = sizeof(w->err),
			    .fds = w->fds,
			    .nfds = w->nfds};

	w->r = mig_out_header(&o, 2) < 0 || mig_out_pass(&o, 1, ram, 2, NULL) < 0 ||
			       mig_out_end(&o, tree, sizeof(tree)) < 0
		       ? -1
		       : 0;
	close(w->fd);
	return NULL;
}

/* Each passed descriptor is a memfd as long as its index: the reader
 * can tell which one it got. */
START_TEST(fds_come_in_order)
{
	struct mig_ram ram[2] = {{got_a, sizeof(ram_a)}, {got_b, sizeof(ram_b)}};
	struct mig_stats st = {0};
	struct writer w = {.nfds = PASSED};
	int sv[2], fds[PASSED];
	struct mig_in in;
	char err[256];
	pthread_t t;
	size_t len;
	void *got;

	fill();
	for (unsigned i = 0; i < PASSED; i++) {
		fds[i] = memfd_create("passed", MFD_CLOEXEC);
		ck_assert_int_ge(fds[i], 0);
		ck_assert_int_eq(ftruncate(fds[i], i), 0);
	}
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	w.fd = sv[0];
	w.fds = fds;
	ck_assert_int_eq(pthread_create(&t, NULL, write_with_fds, &w), 0);
	memset(got_a, 0, sizeof(got_a));
	memset(got_b, 0, sizeof(got_b));
	ck_assert_int_eq(mig_stream_read_header(&in, sv[1], err, sizeof(err)), 0);
	ck_assert(in.unix_socket);
	ck_assert_int_eq(mig_stream_read_ram(&in, ram, 2, &st, err, sizeof(err)), 0);
	ck_assert_msg(mig_stream_read_tree(&in, &got, &len, err, sizeof(err)) == 0, "%s", err);
	pthread_join(t, NULL);
	ck_assert_msg(w.r == 0, "%s", w.err);
	ck_assert_mem_eq(got_a, ram_a, sizeof(ram_a));
	ck_assert_uint_eq(len, sizeof(tree));
	ck_assert(!in.fds_lost);
	ck_assert_uint_eq(in.nfds, PASSED);
	for (unsigned i = 0; i < PASSED; i++) {
		struct stat sb;

		ck_assert_int_eq(fstat(in.fds[i], &sb), 0);
		ck_assert_int_eq(sb.st_size, i);
		close(fds[i]);
	}
	mig_in_close_fds(&in);
	ck_assert_uint_eq(in.nfds, 0);
	free(got);
	close(sv[1]);
}
END_TEST

/* More than the state section can carry: the writer refuses. */
START_TEST(too_many_fds_are_refused)
{
	static int fds[MIG_MAX_FDS + 1];
	struct mig_stats st = {0};
	char err[256] = "";
	int fd = memfd_create("mig", 0);
	struct mig_out o = {.fd = fd,
			    .st = &st,
			    .err = err,
			    .errlen = sizeof(err),
			    .fds = fds,
			    .nfds = MIG_MAX_FDS + 1};

	ck_assert_int_eq(mig_out_end(&o, tree, sizeof(tree)), -1);
	ck_assert_ptr_nonnull(strstr(err, "too many"));
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("migration_stream");
	TCase *tc = tcase_create("stream");

	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, sparse_dirty_sets_send_exactly_their_pages);
	tcase_add_test(tc, prefault_faults_exactly_the_coming_pages);
	tcase_add_test(tc, a_large_pass_arrives_whole_beside_the_prefault);
	tcase_add_test(tc, zero_pages_are_bits);
	tcase_add_test(tc, pages_are_aligned);
	tcase_add_test(tc, file_pages_are_mapped);
	tcase_add_loop_test(tc, truncated_anywhere_is_refused, 0, 2);
	tcase_add_test(tc, damage_is_refused);
	tcase_add_loop_test(tc, later_passes_win, 0, 2);
	tcase_add_test(tc, extra_bytes_are_refused);
	tcase_add_test(tc, first_pass_zero_pages_are_not_touched);
	tcase_add_test(tc, zero_pages_clear_what_the_destination_wrote);
	tcase_add_test(tc, fds_come_in_order);
	tcase_add_test(tc, too_many_fds_are_refused);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
