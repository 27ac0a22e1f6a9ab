/* Unit tests for qcow2 images in the block layer, with qemu-img as the
 * oracle: images made by qemu-img (versions, cluster sizes, refcount
 * widths, backing chains, zero and compressed clusters) read as QEMU
 * reads them, and after the same writes on a raw image and on the
 * qcow2, `qemu-img compare` finds them equal and `qemu-img check` finds
 * the qcow2 clean. Bad headers are refused with one line naming the
 * file. Also format probing, QEMU-compatible image locks, and cache=none
 * (O_DIRECT) on every file of a backing chain. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/backends.h"
#include "tests/unit/backends/img_dir.h"

static struct block_dev *open_fmt(const char *name, enum block_format f, bool ro, char *err)
{
	struct block_opts o = {.path = path_of(name), .read_only = ro, .format = f};

	return block_open(&o, err, 256);
}

static struct block_dev *must_open(const char *name, enum block_format f)
{
	char err[256] = "";
	struct block_dev *b = open_fmt(name, f, false, err);

	ck_assert_msg(b != NULL, "%s: %s", name, err);
	return b;
}

/* cache=none: O_DIRECT, with the format probed */
static struct block_dev *open_direct(const char *name)
{
	struct block_opts o = {.path = path_of(name), .cache = BLOCK_CACHE_NONE};
	char err[256] = "";
	struct block_dev *b = block_open(&o, err, sizeof(err));

	ck_assert_msg(b != NULL, "%s (cache=none): %s", name, err);
	return b;
}

static void fill(uint8_t *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 9));
}

/* The same write on both images. */
static void both_write(struct block_dev *q, struct block_dev *r, uint64_t sec, uint32_t n,
		       unsigned seed)
{
	uint8_t *buf = malloc((size_t)n * 512);

	fill(buf, (size_t)n * 512, seed);
	ck_assert_int_eq(block_write(q, sec, buf, n), 0);
	ck_assert_int_eq(block_write(r, sec, buf, n), 0);
	free(buf);
}

static void assert_same(struct block_dev *q, struct block_dev *r, uint64_t sec, uint32_t n)
{
	uint8_t *a = malloc((size_t)n * 512), *b = malloc((size_t)n * 512);

	ck_assert_int_eq(block_read(q, sec, a, n), 0);
	ck_assert_int_eq(block_read(r, sec, b, n), 0);
	ck_assert_msg(!memcmp(a, b, (size_t)n * 512), "sectors %llu+%u differ",
		      (unsigned long long)sec, n);
	free(a);
	free(b);
}

static void oracle(const char *qname, const char *rname)
{
	ck_assert_int_eq(sh("qemu-img check -q '%s'", path_of(qname)), 0);
	ck_assert_int_eq(sh("qemu-img compare -q -f qcow2 -F raw '%s' '%s'", path_of(qname),
			    path_of(rname)),
			 0);
}

/* A raw copy of what a qcow2 shows now (qemu-img's reading). */
static void raw_copy(const char *qname, const char *rname)
{
	ck_assert_int_eq(sh("qemu-img convert -O raw '%s' '%s'", path_of(qname), path_of(rname)),
			 0);
}

/* Random writes, discards and zeroings on a qcow2 and a raw image. */
static void random_ops(const char *qname, const char *rname, unsigned ops, unsigned seed)
{
	struct block_dev *q = must_open(qname, BLOCK_FORMAT_QCOW2);
	struct block_dev *r = must_open(rname, BLOCK_FORMAT_RAW);
	uint64_t sectors = block_sectors(q);

	srand(seed);
	ck_assert_uint_eq(sectors, block_sectors(r));
	for (unsigned i = 0; i < ops; i++) {
		uint32_t n = 1 + (uint32_t)(rand() % 300);
		uint64_t sec = (uint64_t)rand() % sectors;
		int op = rand() % 10;

		if (sec + n > sectors)
			n = (uint32_t)(sectors - sec);
		if (op == 0) {
			ck_assert_int_eq(block_write_zeroes(q, sec, n, true), 0);
			ck_assert_int_eq(block_write_zeroes(r, sec, n, false), 0);
		} else {
			both_write(q, r, sec, n, i + seed);
		}
		if (i % 16 == 0)
			ck_assert_int_eq(block_flush(q), 0);
		assert_same(q, r, sec, n);
	}
	block_close(q);
	block_close(r);
	oracle(qname, rname);
}

START_TEST(versions_cluster_sizes_and_refcount_widths)
{
	static const char *const opts[] = {
		"compat=1.1,cluster_size=65536",      "compat=0.10,cluster_size=65536",
		"compat=1.1,cluster_size=512",	      "compat=1.1,cluster_size=4096",
		"compat=1.1,cluster_size=2097152",    "compat=1.1,refcount_bits=1",
		"compat=1.1,refcount_bits=8",	      "compat=1.1,refcount_bits=64",
		"compat=0.10,cluster_size=1024",      "compat=1.1,lazy_refcounts=on",
	};

	for (unsigned i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		ck_assert_int_eq(sh("qemu-img create -q -f qcow2 -o %s '%s' 24M", opts[i],
				    path_of("a.qcow2")),
				 0);
		ck_assert_int_eq(sh("qemu-img create -q -f raw '%s' 24M", path_of("a.raw")), 0);
		random_ops("a.qcow2", "a.raw", 60, i);
	}
}
END_TEST

/* 512-byte clusters with 64-bit refcounts: 64 refcounts a block, one
 * table cluster covers 2 MiB, so 8 MiB of writes outgrow the table.
 * With cache=none: the header, L1 and table writes smaller than a
 * block go through aligned copies. */
START_TEST(refcount_table_grows)
{
	struct block_dev *q, *r;

	ck_assert_int_eq(sh("qemu-img create -q -f qcow2 -o cluster_size=512,refcount_bits=64 "
			    "'%s' 16M",
			    path_of("g.qcow2")),
			 0);
	ck_assert_int_eq(sh("qemu-img create -q -f raw '%s' 16M", path_of("g.raw")), 0);
	q = open_direct("g.qcow2");
	r = must_open("g.raw", BLOCK_FORMAT_RAW);
	for (unsigned i = 0; i < 64; i++)
		both_write(q, r, (uint64_t)i * 256, 256, i);
	block_close(q);
	block_close(r);
	oracle("g.qcow2", "g.raw");
}
END_TEST

/* A raw image of size MiB, 0x5a in its first 512 KiB (and 0xa5 at 5 MiB
 * when it reaches that far). */
static void make_base(const char *name, unsigned mib)
{
	ck_assert_int_eq(sh("qemu-img create -q -f raw '%s' %uM && qemu-io -f raw "
			    "-c 'write -P 0x5a 0 512k' %s '%s'",
			    path_of(name), mib, mib > 6 ? "-c 'write -P 0xa5 5M 1M'" : "",
			    path_of(name)),
			 0);
}

/* raw base <- qcow2 mid (relative name, backing_fmt) <- qcow2 top
 * (relative, no backing_fmt: probed); mid and top hold their own data;
 * partial-cluster writes in top copy the rest from below. */
START_TEST(backing_chain_and_copy_on_write)
{
	struct block_dev *q, *r;
	char err[256];

	make_base("base.raw", 8);
	ck_assert_int_eq(sh("cd '%s' && qemu-img create -q -f qcow2 -b base.raw -F raw mid.qcow2 && "
			    "qemu-io -c 'write -P 0x11 1M 100k' mid.qcow2 && "
			    "qemu-img create -q -f qcow2 -b mid.qcow2 -F qcow2 top.qcow2 && "
			    "qemu-io -c 'write -P 0x22 2M 4k' -c 'write -z 5M 64k' top.qcow2",
			    dir),
			 0);
	raw_copy("top.qcow2", "top.raw");
	/* opened from another directory: relative names resolve from the image */
	ck_assert_int_eq(chdir("/"), 0);
	q = must_open("top.qcow2", BLOCK_FORMAT_AUTO);
	ck_assert_str_eq(block_format_name(q), "qcow2");
	ck_assert_str_eq(block_backing_file(q), "mid.qcow2");
	ck_assert_uint_eq(block_backing_depth(q), 2);
	r = must_open("top.raw", BLOCK_FORMAT_RAW);
	assert_same(q, r, 0, 16384);
	both_write(q, r, 1, 1, 1);	   /* inside base data */
	both_write(q, r, 2048 + 100, 3, 2); /* inside mid's cluster */
	both_write(q, r, 10240 + 5, 200, 3); /* zero cluster, across clusters */
	both_write(q, r, 16383, 1, 4);	   /* last sector, unallocated */
	assert_same(q, r, 0, 16384);
	block_close(q);
	block_close(r);
	oracle("top.qcow2", "top.raw");
	/* the backing files are untouched */
	ck_assert_int_eq(sh("qemu-img check -q '%s'", path_of("mid.qcow2")), 0);
	ck_assert_int_eq(sh("cd '%s' && qemu-img compare -q -F raw mid.qcow2 base.raw >/dev/null",
			    dir),
			 1);
	/* a missing backing file is an error naming it */
	ck_assert_int_eq(sh("rm '%s'", path_of("base.raw")), 0);
	ck_assert_ptr_null(open_fmt("top.qcow2", BLOCK_FORMAT_AUTO, false, err));
	ck_assert_ptr_nonnull(strstr(err, "base.raw"));
}
END_TEST

/* Whether this process holds name (in the test's folder) open with
 * O_DIRECT: 1, 0, or -1 when it does not hold it at all. */
static int held_direct(const char *name)
{
	char link[64], target[512], info[64];
	int found = -1;

	for (int fd = 3; fd < 256; fd++) {
		ssize_t n;
		FILE *f;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = 0;
		if (strcmp(target, path_of(name)))
			continue;
		snprintf(info, sizeof(info), "/proc/self/fdinfo/%d", fd);
		f = fopen(info, "r");
		ck_assert_ptr_nonnull(f);
		while (fgets(target, sizeof(target), f)) {
			unsigned long flags;

			if (sscanf(target, "flags: %lo", &flags) == 1)
				found = (flags & O_DIRECT) != 0;
		}
		fclose(f);
	}
	return found;
}

/* cache=none is O_DIRECT for the whole chain, as QEMU's backing nodes
 * inherit cache.direct; the default cache reads them through the page
 * cache. */
START_TEST(cache_none_reaches_the_backing_files)
{
	struct block_dev *q;

	make_base("base.raw", 1);
	ck_assert_int_eq(
		sh("cd '%s' && qemu-img create -q -f qcow2 -b base.raw -F raw mid.qcow2 && "
		   "qemu-img create -q -f qcow2 -b mid.qcow2 -F qcow2 top.qcow2",
		   dir),
		0);
	q = open_direct("top.qcow2");
	ck_assert_int_eq(held_direct("top.qcow2"), 1);
	ck_assert_int_eq(held_direct("mid.qcow2"), 1);
	ck_assert_int_eq(held_direct("base.raw"), 1);
	block_close(q);
	ck_assert_int_eq(held_direct("base.raw"), -1);
	q = must_open("top.qcow2", BLOCK_FORMAT_AUTO);
	ck_assert_int_eq(held_direct("mid.qcow2"), 0);
	ck_assert_int_eq(held_direct("base.raw"), 0);
	block_close(q);
}
END_TEST

START_TEST(zero_clusters_read_as_zero)
{
	struct block_dev *q;
	uint8_t buf[512];

	make_base("base.raw", 1);
	ck_assert_int_eq(sh("cd '%s' && qemu-img create -q -f qcow2 -b base.raw -F raw z.qcow2 && "
			    "qemu-io -c 'write -z 0 64k' -c 'write -z -u 64k 64k' z.qcow2",
			    dir),
			 0);
	q = must_open("z.qcow2", BLOCK_FORMAT_QCOW2);
	for (uint64_t s = 0; s < 256; s += 37) {
		memset(buf, 1, sizeof(buf));
		ck_assert_int_eq(block_read(q, s, buf, 1), 0);
		for (unsigned i = 0; i < 512; i++)
			ck_assert_uint_eq(buf[i], 0);
	}
	ck_assert_int_eq(block_read(q, 256, buf, 1), 0);
	ck_assert_uint_eq(buf[0], 0x5a); /* past them: the backing file */
	block_close(q);
}
END_TEST

static void compressed(const char *ctype)
{
	struct block_dev *q, *r;

	ck_assert_int_eq(sh("cd '%s' && head -c 3M /dev/urandom > c.raw && "
			    "qemu-io -f raw -c 'write -P 0x33 1M 1M' c.raw && "
			    "qemu-img convert -c -O qcow2 -o compression_type=%s c.raw c.qcow2",
			    dir, ctype),
			 0);
	q = must_open("c.qcow2", BLOCK_FORMAT_QCOW2);
	r = must_open("c.raw", BLOCK_FORMAT_RAW);
	assert_same(q, r, 0, 6144);
	both_write(q, r, 2048 + 3, 5, 9); /* into a compressed cluster */
	both_write(q, r, 128, 128, 10);	  /* a whole one */
	ck_assert_int_eq(block_discard(q, 2048 + 256, 128), 0);
	ck_assert_int_eq(block_write_zeroes(r, 2048 + 256, 128, false), 0);
	assert_same(q, r, 0, 6144);
	block_close(q);
	block_close(r);
	oracle("c.qcow2", "c.raw");
}

START_TEST(compressed_deflate)
{
	compressed("zlib");
}
END_TEST

START_TEST(compressed_zstd)
{
	compressed("zstd");
}
END_TEST

/* Discarded clusters go back to the free pool and are reused. */
START_TEST(discard_frees_clusters)
{
	struct block_dev *q, *r;
	uint8_t buf[512];
	struct stat st;

	ck_assert_int_eq(sh("qemu-img create -q -f qcow2 '%s' 8M && qemu-img create -q -f raw "
			    "'%s' 8M",
			    path_of("d.qcow2"), path_of("d.raw")),
			 0);
	q = must_open("d.qcow2", BLOCK_FORMAT_QCOW2);
	r = must_open("d.raw", BLOCK_FORMAT_RAW);
	both_write(q, r, 0, 8192, 5);
	ck_assert_int_eq(block_flush(q), 0);
	ck_assert_int_eq(block_discard(q, 128, 4096), 0);
	ck_assert_int_eq(block_write_zeroes(r, 128, 4096, false), 0);
	ck_assert_int_eq(block_flush(q), 0);
	ck_assert_int_eq(block_read(q, 200, buf, 1), 0);
	ck_assert_uint_eq(buf[0] | buf[511], 0);
	both_write(q, r, 128, 4000, 6); /* reuses the freed clusters */
	block_close(q);
	block_close(r);
	oracle("d.qcow2", "d.raw");
	ck_assert_int_eq(stat(path_of("d.qcow2"), &st), 0);
	ck_assert_int_lt(st.st_size, 5L << 20); /* 4 MiB of data, metadata, no growth */
}
END_TEST

/* Patch bytes of the image's header. */
static void patch(const char *name, long off, const void *bytes, size_t n)
{
	int fd = open(path_of(name), O_WRONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, bytes, n, off), (ssize_t)n);
	close(fd);
}

static void refused(const char *why, long off, const void *bytes, size_t n, bool ro)
{
	char err[256] = "";

	ck_assert_int_eq(sh("qemu-img create -q -f qcow2 '%s' 8M", path_of("bad.qcow2")), 0);
	patch("bad.qcow2", off, bytes, n);
	ck_assert_msg(open_fmt("bad.qcow2", BLOCK_FORMAT_QCOW2, ro, err) == NULL, "%s accepted",
		      why);
	ck_assert_msg(strstr(err, "bad.qcow2") && !strchr(err, '\n'), "%s: '%s'", why, err);
}

START_TEST(bad_headers_refused)
{
	static const uint8_t v4[4] = {0, 0, 0, 4}, cb30[4] = {0, 0, 0, 30}, cb8[4] = {0, 0, 0, 8};
	static const uint8_t far[8] = {0, 0, 1, 0, 0, 0, 0, 0}, crypt[4] = {0, 0, 0, 1};
	static const uint8_t l1big[4] = {0x7f, 0, 0, 0}, feat[8] = {0, 0, 0, 0, 0, 0, 0x80, 0};
	static const uint8_t dirty[8] = {0, 0, 0, 0, 0, 0, 0, 1}, ro7[4] = {0, 0, 0, 7};
	static const uint8_t unaligned[8] = {0, 0, 0, 0, 0, 0, 0x12, 0x34};
	static const uint8_t huge[8] = {0xff, 0, 0, 0, 0, 0, 0, 0}, snaps[4] = {0, 0, 0, 1};
	static const uint8_t hlen[4] = {0, 0, 0, 50}, bname[8] = {0, 0, 0, 0, 0, 0, 0xff, 0};
	static const uint8_t extl2[8] = {0, 0, 0, 0, 0, 0, 0, 0x10};
	char err[256];

	refused("version 4", 4, v4, 4, true);
	refused("cluster_bits 30", 20, cb30, 4, true);
	refused("cluster_bits 8", 20, cb8, 4, true);
	refused("L1 table past the end", 40, far, 8, true);
	refused("L1 table unaligned", 40, unaligned, 8, true);
	refused("refcount table past the end", 48, far, 8, true);
	refused("L1 size too big", 36, l1big, 4, true);
	refused("encryption", 32, crypt, 4, true);
	refused("unknown incompatible feature", 72, feat, 8, true);
	refused("extended L2", 72, extl2, 8, true);
	refused("dirty, for writing", 72, dirty, 8, false);
	refused("internal snapshots, for writing", 60, snaps, 4, false);
	refused("refcount order 7", 96, ro7, 4, true);
	refused("virtual size 2^63", 24, huge, 8, true);
	refused("header length 50", 100, hlen, 4, true);
	refused("backing name past the cluster", 8, bname, 8, true);
	/* a dirty image still opens read-only, as QEMU reads it */
	ck_assert_int_eq(sh("qemu-img create -q -f qcow2 '%s' 8M", path_of("dirty.qcow2")), 0);
	patch("dirty.qcow2", 72, dirty, 8);
	struct block_dev *b = open_fmt("dirty.qcow2", BLOCK_FORMAT_QCOW2, true, err);
	ck_assert_msg(b != NULL, "%s", err);
	block_close(b);
}
END_TEST

/* Tables that point outside the file fail the request, not the process. */
START_TEST(bad_tables_fail_requests)
{
	static const uint8_t l2far[8] = {0x80, 0, 0, 0x10, 0, 0, 0, 0};
	struct block_dev *b;
	uint8_t buf[512];
	FILE *f;
	unsigned char hdr[48];

	ck_assert_int_eq(sh("qemu-img create -q -f qcow2 '%s' 8M && qemu-io -c 'write 0 4k' "
			    "'%s'",
			    path_of("t.qcow2"), path_of("t.qcow2")),
			 0);
	f = fopen(path_of("t.qcow2"), "rb");
	ck_assert_int_eq(fread(hdr, 1, sizeof(hdr), f), sizeof(hdr));
	fclose(f);
	long l1 = (long)((uint64_t)hdr[40] << 56 | (uint64_t)hdr[41] << 48 |
			 (uint64_t)hdr[42] << 40 | (uint64_t)hdr[43] << 32 | (uint64_t)hdr[44] << 24 |
			 (uint64_t)hdr[45] << 16 | (uint64_t)hdr[46] << 8 | hdr[47]);
	patch("t.qcow2", l1, l2far, 8);
	b = must_open("t.qcow2", BLOCK_FORMAT_QCOW2);
	ck_assert_int_eq(block_read(b, 0, buf, 1), -EIO);
	ck_assert_int_eq(block_write(b, 0, buf, 1), -EIO);
	block_close(b);
}
END_TEST

START_TEST(probing)
{
	static const uint8_t magic[512] = {'Q', 'F', 'I', 0xfb};
	struct block_dev *b;
	char err[256];

	ck_assert_int_eq(sh("qemu-img create -q -f raw '%s' 1M", path_of("p.raw")), 0);
	ck_assert_int_eq(sh("qemu-img create -q -f qcow2 '%s' 3M", path_of("p.qcow2")), 0);
	b = must_open("p.qcow2", BLOCK_FORMAT_AUTO);
	ck_assert_str_eq(block_format_name(b), "qcow2");
	ck_assert_uint_eq(block_sectors(b), 6144);
	block_close(b);
	/* format=raw shows a qcow2 file's bytes */
	ck_assert_int_eq(sh("truncate -s 1M '%s'", path_of("p.qcow2")), 0);
	b = must_open("p.qcow2", BLOCK_FORMAT_RAW);
	ck_assert_str_eq(block_format_name(b), "raw");
	block_close(b);
	/* a qcow2 header into a probed raw image: refused (both paths) */
	b = must_open("p.raw", BLOCK_FORMAT_AUTO);
	ck_assert_str_eq(block_format_name(b), "raw");
	ck_assert_int_eq(block_write(b, 0, magic, 1), -EPERM);
	struct iovec iov = {(void *)magic, 512};
	ck_assert_int_eq(block_writev(b, 0, &iov, 1), -EPERM);
	ck_assert_int_eq(block_write(b, 1, magic, 1), 0);
	block_close(b);
	/* ... allowed with the format given */
	b = must_open("p.raw", BLOCK_FORMAT_RAW);
	ck_assert_int_eq(block_write(b, 0, magic, 1), 0);
	block_close(b);
	/* which makes it a (bad) qcow2 to the next prober */
	ck_assert_ptr_null(open_fmt("p.raw", BLOCK_FORMAT_AUTO, false, err));
}
END_TEST

START_TEST(second_writer_locked_out)
{
	struct block_opts o = {.path = NULL, .format = BLOCK_FORMAT_AUTO};
	struct block_dev *a, *b;
	char err[256] = "";

	ck_assert_int_eq(sh("qemu-img create -q -f qcow2 '%s' 1M", path_of("l.qcow2")), 0);
	o.path = path_of("l.qcow2");
	a = block_open(&o, err, sizeof(err));
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_null(block_open(&o, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "Failed to get"));
	ck_assert_ptr_nonnull(strstr(err, "l.qcow2"));
	ck_assert_ptr_null(strchr(err, '\n'));
	/* qemu-img sees the lock too */
	ck_assert_int_ne(sh("qemu-img info '%s' >/dev/null 2>&1", o.path), 0);
	ck_assert_int_eq(sh("qemu-img info -U '%s' >/dev/null 2>&1", o.path), 0);
	/* a reader is refused too: it does not share writing */
	o.read_only = true;
	ck_assert_ptr_null(block_open(&o, err, sizeof(err)));
	o.read_only = false;
	o.no_lock = true;
	b = block_open(&o, err, sizeof(err));
	ck_assert_msg(b != NULL, "%s", err);
	block_close(b);
	block_close(a);
	o.no_lock = false;
	b = block_open(&o, err, sizeof(err)); /* free again */
	ck_assert_msg(b != NULL, "%s", err);
	block_close(b);
}
END_TEST

/* Two readers share an image; a backing file is locked read-only. */
START_TEST(readers_share_and_backing_is_read_locked)
{
	struct block_opts o = {.read_only = true};
	struct block_dev *a, *b;
	char err[256] = "";

	make_base("base.raw", 1);
	ck_assert_int_eq(sh("cd '%s' && qemu-img create -q -f qcow2 -b base.raw -F raw o.qcow2",
			    dir),
			 0);
	o.path = path_of("base.raw");
	a = block_open(&o, err, sizeof(err));
	b = block_open(&o, err, sizeof(err));
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	block_close(b);
	block_close(a);
	o.path = path_of("o.qcow2");
	o.read_only = false;
	a = block_open(&o, err, sizeof(err));
	ck_assert_msg(a != NULL, "%s", err);
	o.path = path_of("base.raw");
	ck_assert_ptr_null(block_open(&o, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "base.raw"));
	o.read_only = true;
	b = block_open(&o, err, sizeof(err));
	ck_assert_msg(b != NULL, "%s", err);
	block_close(b);
	block_close(a);
}
END_TEST

/* -snapshot over a qcow2: writes are seen, the image stays as it was. */
START_TEST(snapshot_over_qcow2)
{
	struct block_opts o = {.snapshot = true};
	struct block_dev *b;
	uint8_t buf[512], back[512];
	char err[256] = "";

	make_base("base.raw", 1);
	ck_assert_int_eq(sh("cd '%s' && qemu-img create -q -f qcow2 -b base.raw -F raw s.qcow2 && "
			    "cp s.qcow2 s.orig",
			    dir),
			 0);
	o.path = path_of("s.qcow2");
	b = block_open(&o, err, sizeof(err));
	ck_assert_msg(b != NULL, "%s", err);
	ck_assert_str_eq(block_format_name(b), "qcow2");
	memset(buf, 0x77, sizeof(buf));
	ck_assert_int_eq(block_write(b, 3, buf, 1), 0);
	ck_assert_int_eq(block_read(b, 3, back, 1), 0);
	ck_assert_int_eq(memcmp(buf, back, 512), 0);
	ck_assert_int_eq(block_read(b, 4, back, 1), 0);
	ck_assert_uint_eq(back[0], 0x5a);
	block_close(b);
	ck_assert_int_eq(sh("cmp -s '%s' '%s'", path_of("s.qcow2"), path_of("s.orig")), 0);
}
END_TEST

/* ------------------------------------------ large vectored writes */

/* The same vectored write on both: len bytes at byte off in segments
 * of seg bytes (the last one shorter), from an O_DIRECT-aligned buffer. */
static void both_writev(struct block_dev *q, struct block_dev *r, uint64_t off, size_t len,
			size_t seg, unsigned seed)
{
	uint8_t *buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	struct iovec iov[2][64];
	int n = 0;

	fill(buf, len, seed);
	for (size_t at = 0; at < len; at += seg, n++) {
		ck_assert_int_lt(n, 64);
		iov[0][n] = (struct iovec){buf + at, len - at < seg ? len - at : seg};
		iov[1][n] = iov[0][n];
	}
	ck_assert_int_eq(block_writev(q, off / 512, iov[0], n), 0);
	ck_assert_int_eq(block_writev(r, off / 512, iov[1], n), 0);
	free(buf);
}

/* Both disks read in 256 KiB vectored requests (3 segments) agree. */
static void assert_same_v(struct block_dev *q, struct block_dev *r)
{
	size_t req = 256 << 10;
	uint8_t *a = aligned_alloc(4096, req), *b = aligned_alloc(4096, req);

	for (uint64_t s = 0; s < block_sectors(q); s += req / 512) {
		struct iovec va[3] = {{a, 4096}, {a + 4096, 60 << 10}, {a + (64 << 10), 192 << 10}};
		struct iovec vb = {b, req};

		ck_assert_int_eq(block_readv(q, s, va, 3), 0);
		ck_assert_int_eq(block_readv(r, s, &vb, 1), 0);
		ck_assert_msg(!memcmp(a, b, req), "256 KiB at sector %llu differ",
			      (unsigned long long)s);
	}
	free(a);
	free(b);
}

/* cache=none (O_DIRECT, with the format probed): a 1 MiB+ write over a
 * backing file that starts and ends inside clusters (both ends copied
 * from below, the whole clusters between allocated as one run), a run
 * across the end of an L2 table (4 KiB clusters: a table maps 2 MiB, so
 * its entries go to two tables), and overwrites of allocated clusters
 * in place from inside a cluster, with guest-like scattered segments. */
START_TEST(large_writes_runs_cow_and_l2_boundary)
{
	struct block_dev *q, *r;

	ck_assert_int_eq(sh("cd '%s' && qemu-img create -q -f raw base.raw 8M && "
			    "qemu-io -f raw -c 'write -P 0x33 0 8M' base.raw && "
			    "qemu-img create -q -f qcow2 -o cluster_size=4096 -b base.raw -F raw "
			    "o.qcow2",
			    dir),
			 0);
	raw_copy("o.qcow2", "o.raw");
	q = open_direct("o.qcow2");
	ck_assert_str_eq(block_format_name(q), "qcow2");
	r = must_open("o.raw", BLOCK_FORMAT_RAW);
	both_writev(q, r, 3 * 512, (1 << 20) + 4096, 20 << 10, 1);	  /* both ends partial */
	both_writev(q, r, (2 << 20) - 5 * 4096 - 1024, 64 << 10, 12 << 10, 2); /* L2 end */
	both_writev(q, r, 4096 + 1536, 512 << 10, 36 << 10, 3);	  /* in place */
	both_writev(q, r, (1 << 20) - 8704, 64 << 10, 64 << 10, 4);	  /* in place + new */
	assert_same_v(q, r);
	ck_assert_int_eq(block_flush(q), 0);
	block_close(q);
	block_close(r);
	oracle("o.qcow2", "o.raw");
	/* a raw image probes under O_DIRECT too */
	r = open_direct("o.raw");
	ck_assert_str_eq(block_format_name(r), "raw");
	block_close(r);
}
END_TEST

static Suite *qcow2_suite(void)
{
	Suite *s = suite_create("qcow2");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, versions_cluster_sizes_and_refcount_widths);
	tcase_add_test(tc, refcount_table_grows);
	tcase_add_test(tc, backing_chain_and_copy_on_write);
	tcase_add_test(tc, cache_none_reaches_the_backing_files);
	tcase_add_test(tc, zero_clusters_read_as_zero);
	tcase_add_test(tc, compressed_deflate);
	tcase_add_test(tc, compressed_zstd);
	tcase_add_test(tc, discard_frees_clusters);
	tcase_add_test(tc, bad_headers_refused);
	tcase_add_test(tc, bad_tables_fail_requests);
	tcase_add_test(tc, probing);
	tcase_add_test(tc, second_writer_locked_out);
	tcase_add_test(tc, readers_share_and_backing_is_read_locked);
	tcase_add_test(tc, snapshot_over_qcow2);
	tcase_add_test(tc, large_writes_runs_cow_and_l2_boundary);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(qcow2_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
