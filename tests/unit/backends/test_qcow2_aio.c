/* Unit tests for qcow2 images on the io_uring engine: many reads,
 * writes, discards and flushes in flight at once on an overlay of a
 * backing file, as a guest issues them, checked against a model of the
 * disk and then by qemu-img (check: the metadata is clean; compare: the
 * image shows the model). Requests to allocated clusters and writes
 * into new clusters (whole, or in part: copy-on-write from the backing
 * file in flight) go to the kernel, the others are served at once as
 * virtio-blk does. Also: a cluster freed while a write to it is still in
 * flight is not reused before that write ends; a write allocating in
 * flight replaces, once, whatever a discard or another write put in its
 * clusters meanwhile; a flush completes only after the writes queued
 * before it, with their new clusters named on the disk; partial writes
 * into the same new clusters, all in flight, give what qemu-io gives; a
 * cluster reads as before until its copy-on-write is written; a flush
 * meanwhile leaves no leak on the disk; reads whose bytes lie in backing
 * files, zero clusters or past a backing file's end go to the kernel in
 * pieces, and give what qemu-img reads. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/backends.h"
#include "tests/unit/backends/img_dir.h"
#include "tests/unit/check_run.h"

#define DISK (8u << 20)
#define SECTORS (DISK / BLOCK_SECTOR_SIZE)
#define CLUSTER 4096u
#define BATCH 32

static void save(const char *name, const uint8_t *data, size_t len)
{
	FILE *f = fopen(path_of(name), "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

static struct block_dev *open_image(const char *name, enum block_cache cache)
{
	struct block_opts o = {.path = path_of(name), .cache = cache,
			       .format = BLOCK_FORMAT_QCOW2};
	char err[256] = "";
	struct block_dev *b = block_open(&o, err, sizeof(err));

	ck_assert_msg(b != NULL, "%s", err);
	return b;
}

/* A buffer O_DIRECT accepts (aligned_alloc wants whole blocks). */
static uint8_t *abuf(size_t len)
{
	uint8_t *p = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);

	ck_assert_ptr_nonnull(p);
	return p;
}

static struct block_aio *new_engine(struct block_dev *b)
{
	struct block_aio *a = block_aio_new(b, 2 * BATCH);

	ck_assert_msg(a != NULL, "io_uring refused on this kernel");
	return a;
}

static void oracle(const char *qname, const uint8_t *model)
{
	save("model.raw", model, DISK);
	ck_assert_int_eq(sh("qemu-img check -q '%s'", path_of(qname)), 0);
	ck_assert_int_eq(sh("qemu-img compare -q -f qcow2 -F raw '%s' '%s'", path_of(qname),
			    path_of("model.raw")), 0);
}

/* ------------------------------------------------ random, many in flight */

struct req {
	bool read;
	uint64_t sector;
	uint32_t count;
	uint8_t *buf, *expect; /* a read: what the model held when it was issued */
	int done;	       /* completions seen (must end at 1) */
};

struct run {
	struct block_dev *b;
	struct block_aio *a;
	uint8_t *model;
	uint8_t claimed[SECTORS]; /* sectors a request of this batch touches */
	struct req reqs[BATCH];
	unsigned nreq, async, sync;
	unsigned long seed;
};

static unsigned rnd(struct run *r, unsigned n)
{
	r->seed = r->seed * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)(r->seed >> 33) % n;
}

static void check_read(struct req *q)
{
	ck_assert_msg(!memcmp(q->buf, q->expect, (size_t)q->count * BLOCK_SECTOR_SIZE),
		      "read of sectors %llu+%u differs from the model",
		      (unsigned long long)q->sector, q->count);
}

static void req_done(void *opaque, void *cookie, int res)
{
	struct req *q = cookie;

	ck_assert_int_eq(res, 0);
	q->done++;
	if (q->read)
		check_read(q);
}

/* A range no other request of the batch touches (a guest never has two
 * requests in flight on the same sector and expects one result). */
static bool claim(struct run *r, uint64_t sector, uint32_t count)
{
	for (uint32_t i = 0; i < count; i++)
		if (r->claimed[sector + i])
			return false;
	memset(r->claimed + sector, 1, count);
	return true;
}

static void issue_rw(struct run *r, bool read, uint64_t sector, uint32_t count)
{
	struct req *q = &r->reqs[r->nreq++];
	size_t len = (size_t)count * BLOCK_SECTOR_SIZE;
	uint8_t *at = r->model + sector * BLOCK_SECTOR_SIZE;
	struct iovec v[2];
	int n = 1, res;

	*q = (struct req){read, sector, count, abuf(len), NULL, 0};
	if (read) {
		q->expect = malloc(len);
		memcpy(q->expect, at, len);
		memset(q->buf, 0xa5, len);
	} else {
		for (size_t i = 0; i < len; i++)
			q->buf[i] = (uint8_t)rnd(r, 256);
		memcpy(at, q->buf, len);
	}
	v[0] = (struct iovec){q->buf, len};
	if (count > 1 && rnd(r, 2)) { /* two segments, as scattered guest pages */
		v[0].iov_len = BLOCK_SECTOR_SIZE;
		v[1] = (struct iovec){q->buf + BLOCK_SECTOR_SIZE, len - BLOCK_SECTOR_SIZE};
		n = 2;
	}
	if (block_aio_rw(r->a, !read, sector, v, n, q) == 0) {
		r->async++;
		return;
	}
	r->sync++; /* served at once, as virtio-blk does */
	res = read ? block_readv(r->b, sector, v, n) : block_writev(r->b, sector, v, n);
	req_done(NULL, q, res);
}

static void issue_one(struct run *r)
{
	unsigned op = rnd(r, 100);
	uint64_t sector;
	uint32_t count;

	if (op < 4) { /* whole clusters stop using theirs: zeroes, over the backing file */
		uint32_t per = CLUSTER / BLOCK_SECTOR_SIZE;

		sector = (uint64_t)rnd(r, SECTORS / per) * per;
		count = per * (1 + rnd(r, 4));
		if (sector + count > SECTORS || !claim(r, sector, count))
			return;
		ck_assert_int_eq(block_discard(r->b, sector, count), 0);
		memset(r->model + sector * BLOCK_SECTOR_SIZE, 0, (size_t)count * BLOCK_SECTOR_SIZE);
		return;
	}
	if (op < 8) {
		int f = block_aio_flush(r->a, &r->reqs[r->nreq]);

		ck_assert_int_ge(f, 0);
		r->reqs[r->nreq++] = (struct req){.done = f == 1};
		return;
	}
	/* mostly small requests, some spanning clusters and L2 tables, some
	 * whole clusters (a write of those allocates in flight) */
	count = rnd(r, 4) ? 1 + rnd(r, 16) : 1 + rnd(r, 128);
	if (!rnd(r, 4))
		count = (1 + rnd(r, 8)) * (CLUSTER / BLOCK_SECTOR_SIZE);
	/* mostly a hot area across an L2 table's end (2 MiB), some anywhere */
	sector = rnd(r, 4) ? 2048 + rnd(r, 4096 - count) : rnd(r, SECTORS - count);
	if (count % (CLUSTER / BLOCK_SECTOR_SIZE) == 0)
		sector &= ~(uint64_t)(CLUSTER / BLOCK_SECTOR_SIZE - 1);
	if (claim(r, sector, count))
		issue_rw(r, op < 54, sector, count);
}

static void end_batch(struct run *r)
{
	block_aio_wait_all(r->a, req_done, r);
	for (unsigned i = 0; i < r->nreq; i++) {
		ck_assert_int_eq(r->reqs[i].done, 1);
		free(r->reqs[i].buf);
		free(r->reqs[i].expect);
	}
	r->nreq = 0;
	memset(r->claimed, 0, sizeof(r->claimed));
}

static void random_run(enum block_cache cache, unsigned long seed)
{
	struct run *r = calloc(1, sizeof(*r));
	uint8_t *back = malloc(DISK);

	for (size_t i = 0; i < DISK; i++)
		back[i] = (uint8_t)(i * 7 + (i >> 12) + 1);
	save("base.raw", back, DISK);
	ck_assert_int_eq(sh("cd '%s' && qemu-img create -q -f qcow2 -o cluster_size=%u "
			    "-b base.raw -F raw o.qcow2 %u", dir, CLUSTER, DISK), 0);
	r->model = back;
	r->seed = seed;
	r->b = open_image("o.qcow2", cache);
	r->a = new_engine(r->b);
	for (unsigned round = 0; round < 200; round++) {
		while (r->nreq < BATCH)
			issue_one(r);
		block_aio_submit(r->a);
		end_batch(r);
	}
	/* the clusters written first are reused over and over: most of the
	 * requests must have gone to the kernel */
	ck_assert_msg(r->async > r->sync, "%u requests through io_uring, %u served at once",
		      r->async, r->sync);
	block_aio_free(r->a);
	block_close(r->b);
	oracle("o.qcow2", r->model);
	free(back);
	free(r);
}

START_TEST(many_in_flight_match_the_model_writeback)
{
	random_run(BLOCK_CACHE_WRITEBACK, 1);
}
END_TEST

START_TEST(many_in_flight_match_the_model_cache_none)
{
	random_run(BLOCK_CACHE_NONE, 2);
}
END_TEST

/* ------------------------------------------------------------ ordering */

static void note_order(void *opaque, void *cookie, int res)
{
	char *order = opaque;

	ck_assert_int_eq(res, 0);
	strncat(order, cookie, 1);
}

/* A fresh image, cluster 0 (and 2) allocated by a write served at once. */
static struct block_dev *allocated_image(uint8_t *buf, enum block_cache cache)
{
	struct block_dev *b;

	ck_assert_int_eq(sh("qemu-img create -q -f qcow2 -o cluster_size=%u '%s' 1M", CLUSTER,
			    path_of("f.qcow2")), 0);
	b = open_image("f.qcow2", cache);
	memset(buf, 'a', CLUSTER);
	ck_assert_int_eq(block_write(b, 0, buf, CLUSTER / BLOCK_SECTOR_SIZE), 0);
	ck_assert_int_eq(block_write(b, 2 * CLUSTER / BLOCK_SECTOR_SIZE, buf,
				     CLUSTER / BLOCK_SECTOR_SIZE), 0);
	ck_assert_int_eq(block_flush(b), 0);
	return b;
}

/* The guest writes cluster 0, discards it and flushes while that write
 * is still queued, then writes cluster 1, which needs a new cluster:
 * cluster 0's old one must not be it, or the late write lands in
 * cluster 1. */
START_TEST(freed_cluster_waits_for_the_write_in_flight)
{
	uint8_t *buf = abuf(CLUSTER), *late = abuf(CLUSTER);
	uint8_t *b1 = abuf(1024), *back = abuf(1024);
	uint8_t *model = calloc(1, DISK);
	struct block_dev *b = allocated_image(buf, BLOCK_CACHE_NONE);
	struct block_aio *a = new_engine(b);
	struct iovec v = {late, CLUSTER};
	char order[8] = "";

	memset(late, 'L', CLUSTER);
	ck_assert_int_eq(block_aio_rw(a, true, 0, &v, 1, "w"), 0); /* queued, not yet at the kernel */
	ck_assert_int_eq(block_discard(b, 0, CLUSTER / BLOCK_SECTOR_SIZE), 0);
	ck_assert_int_eq(block_flush(b), 0);
	memset(b1, 'b', 1024);
	ck_assert_int_eq(block_write(b, CLUSTER / BLOCK_SECTOR_SIZE + 2, b1, 2), 0);
	block_aio_wait_all(a, note_order, order);
	ck_assert_str_eq(order, "w");
	ck_assert_int_eq(block_read(b, CLUSTER / BLOCK_SECTOR_SIZE + 2, back, 2), 0);
	ck_assert_msg(!memcmp(back, b1, 1024), "cluster 1 holds the late write to cluster 0");
	block_aio_free(a);
	block_close(b);
	/* cluster 0 names no cluster now (zeroes); the late write went to
	 * its old one, which is freed only then */
	memcpy(model + CLUSTER + 1024, b1, 1024);
	memset(model + 2 * CLUSTER, 'a', CLUSTER);
	oracle("f.qcow2", model);
	free(buf);
	free(late);
	free(b1);
	free(back);
	free(model);
}
END_TEST

/* A flush after a write to an allocated cluster, both queued: the write
 * goes to the kernel, and the flush completes only after it. */
START_TEST(flush_completes_after_the_writes_before_it)
{
	uint8_t *buf = abuf(CLUSTER), *w = abuf(CLUSTER);
	struct block_dev *b = allocated_image(buf, BLOCK_CACHE_WRITEBACK);
	struct block_aio *a = new_engine(b);
	struct iovec v = {w, CLUSTER};
	char order[8] = "";

	memset(w, 'w', CLUSTER);
	ck_assert_int_eq(block_aio_rw(a, true, 2 * CLUSTER / BLOCK_SECTOR_SIZE, &v, 1, "w"), 0);
	ck_assert_int_eq(block_aio_flush(a, "f"), 0);
	block_aio_wait_all(a, note_order, order);
	ck_assert_str_eq(order, "wf");
	/* nothing in flight: the flush has nothing more to wait for */
	ck_assert_int_eq(block_aio_flush(a, "g"), 1);
	ck_assert_int_eq(block_read(b, 2 * CLUSTER / BLOCK_SECTOR_SIZE, buf,
				    CLUSTER / BLOCK_SECTOR_SIZE), 0);
	ck_assert(!memcmp(buf, w, CLUSTER));
	block_aio_free(a);
	block_close(b);
	free(buf);
	free(w);
}
END_TEST

/* ------------------------------------------ allocation while in flight */

static void write_cluster_async(struct block_aio *a, uint64_t cl, uint8_t *buf, const char *tag)
{
	struct iovec v = {buf, CLUSTER};

	ck_assert_int_eq(block_aio_rw(a, true, cl * CLUSTER / BLOCK_SECTOR_SIZE, &v, 1, (void *)tag),
			 0);
}

/* A whole-cluster write to a compressed cluster gets a new cluster in
 * flight; a discard and a partial write come between (the guest races
 * itself there): whatever the cluster names when the write completes is
 * what it stops using, once (the compressed cluster's host cluster is
 * shared with its neighbours: freed twice, their data would go). */
START_TEST(allocation_in_flight_replaces_what_came_between)
{
	uint8_t *w = abuf(CLUSTER), *p = abuf(1024);
	uint8_t *model = malloc(DISK);
	struct block_dev *b;
	struct block_aio *a;
	char order[8] = "";

	for (size_t i = 0; i < DISK; i++)
		model[i] = (uint8_t)(i / 512 % 5 ? i * 3 : 0); /* compresses */
	save("c.raw", model, DISK);
	ck_assert_int_eq(sh("cd '%s' && qemu-img convert -q -c -f raw -O qcow2 -o cluster_size=%u "
			    "c.raw c.qcow2", dir, CLUSTER), 0);
	b = open_image("c.qcow2", BLOCK_CACHE_NONE);
	a = new_engine(b);
	memset(w, 'W', CLUSTER);
	memset(p, 'p', 1024);
	write_cluster_async(a, 5, w, "5");
	write_cluster_async(a, 9, w, "9");
	write_cluster_async(a, 12, w, "c");
	/* cluster 5: discarded; cluster 9: written in part (a new cluster
	 * now); cluster 12: left to the write */
	ck_assert_int_eq(block_discard(b, 5 * CLUSTER / BLOCK_SECTOR_SIZE, CLUSTER / 512), 0);
	ck_assert_int_eq(block_write(b, 9 * CLUSTER / BLOCK_SECTOR_SIZE + 1, p, 2), 0);
	ck_assert_int_eq(block_flush(b), 0);
	block_aio_wait_all(a, note_order, order);
	ck_assert_uint_eq(strlen(order), 3);
	block_aio_free(a);
	block_close(b);
	memset(model + 5 * CLUSTER, 'W', CLUSTER);
	memset(model + 9 * CLUSTER, 'W', CLUSTER);
	memset(model + 12 * CLUSTER, 'W', CLUSTER);
	oracle("c.qcow2", model);
	free(w);
	free(p);
	free(model);
}
END_TEST

/* A flush queued after writes that allocate: when it completes, the
 * image on the disk names their clusters (qemu-img reads it while vmm
 * still has it open). */
START_TEST(flush_covers_allocations_before_it)
{
	uint8_t *w = abuf(4 * CLUSTER), *model = calloc(1, DISK);
	struct block_dev *b;
	struct block_aio *a;
	char order[8] = "";
	struct iovec v = {w, 4 * CLUSTER};

	ck_assert_int_eq(sh("qemu-img create -q -f qcow2 -o cluster_size=%u '%s' %u", CLUSTER,
			    path_of("n.qcow2"), DISK), 0);
	b = open_image("n.qcow2", BLOCK_CACHE_NONE);
	a = new_engine(b);
	memset(w, 'N', 4 * CLUSTER);
	ck_assert_int_eq(block_aio_rw(a, true, 64, &v, 1, "w"), 0);
	ck_assert_int_eq(block_aio_flush(a, "f"), 0);
	block_aio_wait_all(a, note_order, order);
	ck_assert_str_eq(order, "wf");
	memset(model + 64 * BLOCK_SECTOR_SIZE, 'N', 4 * CLUSTER);
	save("model.raw", model, DISK);
	ck_assert_int_eq(sh("qemu-img compare -U -q -f qcow2 -F raw '%s' '%s'", path_of("n.qcow2"),
			    path_of("model.raw")), 0);
	block_aio_free(a);
	block_close(b);
	oracle("n.qcow2", model);
	free(w);
	free(model);
}
END_TEST

/* ------------------------------------ partial clusters allocated in flight */

#define BIG_CLUSTER (64u << 10)

/* A 4 MiB overlay (64 KiB clusters) o.qcow2 over base.raw, or over
 * mid.qcow2 (4 KiB clusters, some written, over base.raw); cluster 10
 * of the overlay a zero cluster. ref.qcow2 the same, for qemu-io. */
static void cow_images(bool qcow2_backing)
{
	const char *back = qcow2_backing ? "mid.qcow2 -F qcow2" : "base.raw -F raw";

	ck_assert_int_eq(sh("cd '%s' && qemu-img create -q -f raw base.raw 4M && "
			    "qemu-io -f raw -c 'write -P 0x11 0 4M' -c 'write -P 0x22 72k 100k' "
			    "base.raw", dir), 0);
	if (qcow2_backing)
		ck_assert_int_eq(sh("cd '%s' && qemu-img create -q -f qcow2 -o cluster_size=4k "
				    "-b base.raw -F raw mid.qcow2 && qemu-io -f qcow2 "
				    "-c 'write -P 0x33 64k 8k' -c 'write -P 0x44 120k 12k' "
				    "-c 'write -P 0x55 180k 40k' mid.qcow2", dir), 0);
	ck_assert_int_eq(sh("cd '%s' && qemu-img create -q -f qcow2 -o cluster_size=64k -b %s "
			    "o.qcow2 4M && qemu-io -f qcow2 -c 'write -z 640k 64k' o.qcow2 && "
			    "cp o.qcow2 ref.qcow2", dir, back), 0);
}

struct cow_write {
	uint32_t off, len;
};

/* Partial writes into new clusters, several into the same one (cluster
 * 1; cluster 4, also the end of a write from cluster 3), whole and
 * partial in one request (7-8), over a zero cluster (10), and some
 * 2 MiB on as well. */
static const struct cow_write cow_writes[] = {
	{64 << 10 | 4 << 10, 4096},   {64 << 10 | 12 << 10, 4096}, {64 << 10 | 32 << 10, 8192},
	{124 << 10 | 512, 512},	      {128 << 10, 4096},	   {252 << 10, 8192},
	{276 << 10, 4096},	      {448 << 10, 68 << 10},	   {648 << 10, 4096},
	{2048 << 10 | 60 << 10, 8192}, {2112 << 10 | 1024, 3072},  {2112 << 10 | 8192, 4096},
};
#define NCOW (sizeof(cow_writes) / sizeof(cow_writes[0]))

static void cow_run(bool qcow2_backing)
{
	struct block_dev *b;
	struct block_aio *a;
	uint8_t *buf[NCOW];
	char order[NCOW + 1] = "", tags[NCOW], cmd[2048] = "";

	cow_images(qcow2_backing);
	b = open_image("o.qcow2", BLOCK_CACHE_NONE);
	a = new_engine(b);
	for (unsigned i = 0; i < NCOW; i++) {
		struct iovec v = {buf[i] = abuf(cow_writes[i].len), cow_writes[i].len};

		memset(buf[i], 0x60 + (int)i, cow_writes[i].len);
		tags[i] = (char)('a' + i);
		/* all queued at once: none served on the spot */
		ck_assert_int_eq(block_aio_rw(a, true, cow_writes[i].off / BLOCK_SECTOR_SIZE, &v, 1,
					      &tags[i]), 0);
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " -c 'write -P 0x%x %u %u'",
			 0x60 + i, cow_writes[i].off, cow_writes[i].len);
	}
	block_aio_wait_all(a, note_order, order);
	ck_assert_uint_eq(strlen(order), NCOW);
	block_aio_free(a);
	block_close(b);
	ck_assert_int_eq(sh("cd '%s' && qemu-io -f qcow2%s ref.qcow2", dir, cmd), 0);
	ck_assert_int_eq(sh("qemu-img check -q '%s'", path_of("o.qcow2")), 0);
	ck_assert_int_eq(sh("cd '%s' && qemu-img compare -q o.qcow2 ref.qcow2", dir), 0);
	for (unsigned i = 0; i < NCOW; i++)
		free(buf[i]);
}

START_TEST(partial_writes_in_flight_match_qemu_raw_backing)
{
	cow_run(false);
}
END_TEST

START_TEST(partial_writes_in_flight_match_qemu_qcow2_backing)
{
	cow_run(true);
}
END_TEST

/* A partial write allocating in flight: until its data (and the copy of
 * the backing file around it) is written, its cluster still reads as
 * before: the L2 entry names the new cluster only after. */
START_TEST(copy_on_write_lands_before_the_l2_entry)
{
	uint8_t *w = abuf(4096), *back = abuf(BIG_CLUSTER), *expect = malloc(BIG_CLUSTER);
	struct iovec v = {w, 4096};
	struct block_dev *b;
	struct block_aio *a;
	char order[4] = "";

	cow_images(false);
	b = open_image("o.qcow2", BLOCK_CACHE_NONE);
	a = new_engine(b);
	memset(w, 'w', 4096);
	ck_assert_int_eq(block_aio_rw(a, true, (BIG_CLUSTER + 8192) / BLOCK_SECTOR_SIZE, &v, 1,
				      "w"), 0); /* queued, not yet at the kernel */
	memset(expect, 0x11, BIG_CLUSTER);
	memset(expect + 8192, 0x22, BIG_CLUSTER - 8192); /* base.raw at 72k.. */
	ck_assert_int_eq(block_read(b, BIG_CLUSTER / BLOCK_SECTOR_SIZE, back,
				    BIG_CLUSTER / BLOCK_SECTOR_SIZE), 0);
	ck_assert_msg(!memcmp(back, expect, BIG_CLUSTER),
		      "the cluster reads otherwise while its write is not yet done");
	block_aio_wait_all(a, note_order, order);
	ck_assert_str_eq(order, "w");
	memset(expect + 8192, 'w', 4096);
	ck_assert_int_eq(block_read(b, BIG_CLUSTER / BLOCK_SECTOR_SIZE, back,
				    BIG_CLUSTER / BLOCK_SECTOR_SIZE), 0);
	ck_assert(!memcmp(back, expect, BIG_CLUSTER));
	block_aio_free(a);
	block_close(b);
	ck_assert_int_eq(sh("qemu-img check -q '%s'", path_of("o.qcow2")), 0);
	free(w);
	free(back);
	free(expect);
}
END_TEST

/* A flush while partial writes allocate in flight: the image on the disk
 * (what a crash leaves) counts none of their clusters yet, as no L2
 * entry names them: no leak. (They reuse clusters freed inside the
 * file: qemu-img check counts no cluster past its end.) */
START_TEST(flush_during_allocation_leaks_nothing)
{
	uint8_t *w = abuf(4096), *big = abuf(3 * BIG_CLUSTER);
	struct block_dev *b;
	struct block_aio *a;
	char order[4] = "";

	cow_images(false);
	b = open_image("o.qcow2", BLOCK_CACHE_NONE);
	a = new_engine(b);
	memset(big, 'f', 3 * BIG_CLUSTER);
	ck_assert_int_eq(block_write(b, 20 * BIG_CLUSTER / BLOCK_SECTOR_SIZE, big,
				     3 * BIG_CLUSTER / BLOCK_SECTOR_SIZE), 0);
	ck_assert_int_eq(block_flush(b), 0);
	ck_assert_int_eq(block_discard(b, 20 * BIG_CLUSTER / BLOCK_SECTOR_SIZE,
				       3 * BIG_CLUSTER / BLOCK_SECTOR_SIZE), 0);
	ck_assert_int_eq(block_flush(b), 0);
	memset(w, 'w', 4096);
	for (unsigned i = 0; i < 3; i++) {
		struct iovec v = {w, 4096};

		ck_assert_int_eq(block_aio_rw(a, true, (i + 1) * BIG_CLUSTER / BLOCK_SECTOR_SIZE + 8,
					      &v, 1, "w"), 0);
	}
	ck_assert_int_eq(block_flush(b), 0);
	ck_assert_int_eq(sh("qemu-img check -q -U '%s'", path_of("o.qcow2")), 0);
	block_aio_wait_all(a, note_order, order);
	ck_assert_str_eq(order, "www");
	ck_assert_int_eq(block_flush(b), 0);
	ck_assert_int_eq(sh("qemu-img check -q -U '%s'", path_of("o.qcow2")), 0);
	block_aio_free(a);
	block_close(b);
	free(w);
	free(big);
}
END_TEST

/* ------------------------------------------- reads through the chain */

/* o.qcow2 (64 KiB clusters, 4 MiB + 128 KiB) over mid.qcow2 (4 KiB
 * clusters, 4 MiB + 64 KiB) over base.raw (4 MiB - 1000 bytes: ends
 * inside a sector). In o: data at 0-64k and 256k-320k, a zero cluster
 * at 640k, a compressed one at 1M. In mid: data, a zero cluster at 200k,
 * two compressed ones at 3M. What qemu-img reads from o is in exp.raw. */
static void chain_images(void)
{
	ck_assert_int_eq(sh("cd '%s' && qemu-img create -q -f raw base.raw 4M && "
			    "qemu-io -f raw -c 'write -P 0x11 0 4M' -c 'write -P 0x22 72k 100k' "
			    "base.raw && truncate -s 4193304 base.raw && qemu-img create -q -f "
			    "qcow2 -o cluster_size=4k -b base.raw "
			    "-F raw mid.qcow2 4160k && qemu-io -f qcow2 -c 'write -P 0x33 64k 8k' "
			    "-c 'write -P 0x44 120k 12k' -c 'write -z 200k 4k' "
			    "-c 'write -P 0x55 4084k 4k' -c 'write -c -P 0x99 3M 8k' mid.qcow2",
			    dir),
			 0);
	ck_assert_int_eq(sh("cd '%s' && qemu-img create -q -f qcow2 -o cluster_size=64k "
			    "-b mid.qcow2 -F qcow2 o.qcow2 4224k && qemu-io -f qcow2 "
			    "-c 'write -P 0x66 0 64k' -c 'write -P 0x77 256k 64k' "
			    "-c 'write -z 640k 64k' -c 'write -c -P 0x88 1M 64k' o.qcow2 && "
			    "qemu-img convert -f qcow2 -O raw o.qcow2 exp.raw",
			    dir),
			 0);
}

static const struct chain_read {
	uint32_t off, len;
	bool in_flight; /* else served at once: zeroes only, or a raw file's
			 * last, partial sector (O_DIRECT would refuse it) */
} chain_reads[] = {
	{60 << 10, 8 << 10, true},	  /* o's data, then mid's 4k clusters */
	{64 << 10, 64 << 10, true},	  /* mid's data and base.raw, one cluster of o */
	{192 << 10, 16 << 10, true},	  /* mid's zero cluster amid base.raw */
	{300 << 10, 360 << 10, true},	  /* o's data, base.raw, o's zero cluster */
	{640 << 10, 64 << 10, false},	  /* o's zero cluster alone */
	{1020 << 10, 8 << 10, true},	  /* into the compressed cluster, read and decoded */
	{3068 << 10, 16 << 10, true},	  /* base.raw, mid's compressed clusters, base.raw */
	{4080 << 10, 8 << 10, true},	  /* base.raw, then mid's data */
	{4088 << 10, 12 << 10, false},	  /* base.raw's end inside a sector, zeroes */
	{4144 << 10, 16 << 10, false},	  /* past base.raw, inside mid: zeroes only */
	{4156 << 10, 8 << 10, false},	  /* past mid too */
	{(2 << 20) + 512, 3 << 10, true}, /* base.raw, unaligned to the clusters */
};
#define NCHAIN (sizeof(chain_reads) / sizeof(chain_reads[0]))

/* Reads of a three-deep chain, all at once: those whose bytes are data
 * somewhere in the chain (with or without zeroes) go to the kernel, in
 * pieces from each file; each gives what qemu-img reads there. */
START_TEST(reads_through_the_backing_chain_go_in_flight)
{
	struct block_dev *b;
	struct block_aio *a;
	uint8_t *buf[NCHAIN], *exp;
	char order[NCHAIN + 1] = "", tags[NCHAIN];
	FILE *f;

	chain_images();
	exp = malloc(4224 << 10);
	f = fopen(path_of("exp.raw"), "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(exp, 1, 4224 << 10, f), 4224 << 10);
	fclose(f);
	b = open_image("o.qcow2", BLOCK_CACHE_NONE);
	a = new_engine(b);
	for (unsigned i = 0; i < NCHAIN; i++) {
		const struct chain_read *c = &chain_reads[i];
		struct iovec v = {buf[i] = abuf(c->len), c->len};
		int r;

		memset(buf[i], 0xa5, c->len);
		tags[i] = (char)('a' + i);
		r = block_aio_rw(a, false, c->off / BLOCK_SECTOR_SIZE, &v, 1, &tags[i]);
		ck_assert_msg(r == (c->in_flight ? 0 : -1), "read %u (%uk+%uk): %s", i,
			      c->off >> 10, c->len >> 10, r ? "served at once" : "in flight");
		if (r)
			ck_assert_int_eq(block_readv(b, c->off / BLOCK_SECTOR_SIZE, &v, 1), 0);
	}
	block_aio_wait_all(a, note_order, order);
	for (unsigned i = 0; i < NCHAIN; i++) {
		const struct chain_read *c = &chain_reads[i];

		ck_assert_msg(!memcmp(buf[i], exp + c->off, c->len), "read %u (%uk+%uk) differs", i,
			      c->off >> 10, c->len >> 10);
		free(buf[i]);
	}
	/* the compressed cluster last decoded is kept: read at once from there */
	struct iovec v = {buf[0] = abuf(4096), 4096};

	ck_assert_int_eq(
		block_aio_rw(a, false, ((1u << 20) + 8192) / BLOCK_SECTOR_SIZE, &v, 1, "z"), -1);
	ck_assert_int_eq(block_readv(b, ((1u << 20) + 8192) / BLOCK_SECTOR_SIZE, &v, 1), 0);
	ck_assert(!memcmp(buf[0], exp + (1u << 20) + 8192, 4096));
	free(buf[0]);
	block_aio_free(a);
	block_close(b);
	free(exp);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("qcow2_aio");
	TCase *tc = tcase_create("qcow2_aio");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, many_in_flight_match_the_model_writeback);
	tcase_add_test(tc, many_in_flight_match_the_model_cache_none);
	tcase_add_test(tc, freed_cluster_waits_for_the_write_in_flight);
	tcase_add_test(tc, flush_completes_after_the_writes_before_it);
	tcase_add_test(tc, allocation_in_flight_replaces_what_came_between);
	tcase_add_test(tc, flush_covers_allocations_before_it);
	tcase_add_test(tc, partial_writes_in_flight_match_qemu_raw_backing);
	tcase_add_test(tc, partial_writes_in_flight_match_qemu_qcow2_backing);
	tcase_add_test(tc, copy_on_write_lands_before_the_l2_entry);
	tcase_add_test(tc, flush_during_allocation_leaks_nothing);
	tcase_add_test(tc, reads_through_the_backing_chain_go_in_flight);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
