/* virtio-blk.elf — the kit's virtio-blk test, on the first modern
 * virtio-blk device (1af4:1042) of a disk of at least 16 MiB. Layout the
 * host prepares and checks afterwards (tests/integration/virtio-blk-kit.sh):
 *
 *   A  sectors     0..2047   host data; the guest copies it to B
 *   B  sectors  4096..6143   = A afterwards
 *   C  sectors  8192..8703   the guest's pattern (pattern_word below)
 *   D  sectors 12288..12543  host data; discarded (reads zeros afterwards)
 *   E  sectors 16384..16639  host data; write-zeroes
 *
 * plus GET_ID (printed), flush, reads and writes past the end (must fail
 * with IOERR or UNSUPP), an unknown request type (UNSUPP), and up to 32
 * requests in flight. Prints "virtio-blk: all checks passed" and exits 0,
 * or names the first failed check and exits 1.
 *
 * broken=1 (a descriptor loop), 2 (a buffer outside RAM), 3 (an indirect
 * table of 33 bytes) or 4 (the avail index more than a ring ahead): the
 * device must set DEVICE_NEEDS_RESET; after a reset and a new
 * initialisation I/O must work again. QEMU does 1, 3 and 4 so; it serves
 * 2 through a bounce buffer instead. event_idx=1 also
 * negotiates VIRTIO_RING_F_EVENT_IDX; indirect=0 leaves INDIRECT_DESC out.
 * readonly=1: for a read-only disk (VIRTIO_BLK_F_RO; writes refused).
 */
#include "vblk.h"

#define SECTORS(bytes) ((bytes) / VBLK_SECTOR)
#define REGION_A 0
#define REGION_B 4096
#define REGION_C 8192
#define REGION_D 12288
#define REGION_E 16384
#define COPY_BYTES (1u << 20)
#define COPY_CHUNK (64u << 10)
#define PATTERN_BYTES (256u << 10)
#define PATTERN_CHUNK 4096u
#define PATTERN_SEED 0x5a
#define ZERO_SECTORS 256
#define MIN_SECTORS 32768

static uint8_t buf_a[COPY_BYTES] __attribute__((aligned(4096)));
static uint8_t buf_b[COPY_BYTES] __attribute__((aligned(4096)));
static struct vblk blk;

/* The host computes the same words: sector s, word w of 64 bits. */
static uint64_t pattern_word(uint64_t sector, unsigned w, unsigned seed)
{
	return sector << 32 | (uint64_t)seed << 16 | w;
}

static void pattern_fill(uint8_t *buf, uint64_t sector, uint32_t bytes, unsigned seed)
{
	uint64_t *p = (uint64_t *)buf;

	for (uint32_t i = 0; i < bytes / 8; i++)
		p[i] = pattern_word(sector + i / 64, i % 64, seed);
}

__attribute__((noreturn)) static void fail(const char *what, unsigned v)
{
	printf("virtio-blk: FAIL %s (%x)\n", what, v);
	guest_exit(1);
}

static void expect_ok(uint8_t status, const char *what)
{
	if (status != VIRTIO_BLK_S_OK)
		fail(what, status);
}

static bool all_zero(const uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* n requests of chunk bytes from sector on, at most depth in flight;
 * each request's status must be OK. */
static void transfer(uint32_t type, uint64_t sector, uint8_t *buf, uint32_t bytes, uint32_t chunk,
		     unsigned depth, const char *what)
{
	uint32_t next = 0, done = 0, n = bytes / chunk;
	unsigned max_seen = 0;

	while (done < n) {
		while (next < n && vq_in_flight(&blk.q) < depth &&
		       vblk_submit(&blk, type, sector + SECTORS(next * chunk), buf + next * chunk,
				   chunk))
			next++;
		if (vq_in_flight(&blk.q) > max_seen)
			max_seen = vq_in_flight(&blk.q);
		vblk_kick(&blk);
		struct vblk_req *r = vblk_wait(&blk);

		if (!r)
			fail(what, done);
		do {
			expect_ok(r->status, what);
			vblk_release(r);
			done++;
		} while ((r = vblk_poll(&blk)));
	}
	printf("virtio-blk: %s: %u requests of %u bytes, up to %u in flight\n", what, n, chunk,
	       max_seen);
}

static void check_get_id(void)
{
	char id[VIRTIO_BLK_ID_BYTES + 1] = {0};

	expect_ok(vblk_io(&blk, VIRTIO_BLK_T_GET_ID, 0, id, VIRTIO_BLK_ID_BYTES), "get-id");
	printf("virtio-blk: serial '%s'\n", id);
}

static void check_copy(void)
{
	transfer(VIRTIO_BLK_T_IN, REGION_A, buf_a, COPY_BYTES, COPY_CHUNK, 8, "read A");
	transfer(VIRTIO_BLK_T_OUT, REGION_B, buf_a, COPY_BYTES, COPY_CHUNK, 16, "write B");
	expect_ok(vblk_io(&blk, VIRTIO_BLK_T_IN, REGION_B, buf_b, COPY_BYTES), "read B (1 MiB)");
	if (memcmp(buf_a, buf_b, COPY_BYTES))
		fail("B read back differs from A", 0);
}

static void check_pattern(void)
{
	pattern_fill(buf_a, REGION_C, PATTERN_BYTES, PATTERN_SEED);
	transfer(VIRTIO_BLK_T_OUT, REGION_C, buf_a, PATTERN_BYTES, PATTERN_CHUNK, 32, "write C");
	memset(buf_b, 0, PATTERN_BYTES);
	transfer(VIRTIO_BLK_T_IN, REGION_C, buf_b, PATTERN_BYTES, PATTERN_CHUNK, 32, "read C");
	if (memcmp(buf_a, buf_b, PATTERN_BYTES))
		fail("C read back differs from the pattern", 0);
}

/* Discard or write-zeroes of a region the host filled, then read zeros. */
static void check_zeroing(uint32_t type, unsigned feature, uint64_t sector, const char *what)
{
	if (!vdev_has(&blk.dev, feature)) {
		printf("virtio-blk: %s not offered (host expects the data unchanged)\n", what);
		return;
	}
	expect_ok(vblk_range_io(&blk, type, sector, ZERO_SECTORS, 0), what);
	memset(buf_b, 0xa5, ZERO_SECTORS * VBLK_SECTOR);
	expect_ok(vblk_io(&blk, VIRTIO_BLK_T_IN, sector, buf_b, ZERO_SECTORS * VBLK_SECTOR),
		  "read after zeroing");
	if (!all_zero(buf_b, ZERO_SECTORS * VBLK_SECTOR))
		fail("region does not read back as zeros", (unsigned)sector);
	printf("virtio-blk: %s of %u sectors at %lu reads back zeros\n", what, ZERO_SECTORS,
	       sector);
}

static void expect_error(uint8_t status, const char *what)
{
	if (status != VIRTIO_BLK_S_IOERR && status != VIRTIO_BLK_S_UNSUPP)
		fail(what, status);
	printf("virtio-blk: %s: status %u as expected\n", what, status);
}

static void check_bad_requests(void)
{
	uint64_t end = blk.capacity;

	expect_error(vblk_io(&blk, VIRTIO_BLK_T_IN, end, buf_b, VBLK_SECTOR), "read past the end");
	expect_error(vblk_io(&blk, VIRTIO_BLK_T_IN, end - 1, buf_b, 2 * VBLK_SECTOR),
		     "read across the end");
	expect_error(vblk_io(&blk, VIRTIO_BLK_T_OUT, end, buf_b, VBLK_SECTOR),
		     "write past the end");
	if (vblk_io(&blk, 0x7f, 0, buf_b, VBLK_SECTOR) != VIRTIO_BLK_S_UNSUPP)
		fail("unknown request type not UNSUPP", 0x7f);
	printf("virtio-blk: unknown request type: UNSUPP\n");
}

static void check_flush(void)
{
	if (!vdev_has(&blk.dev, VIRTIO_BLK_F_FLUSH)) {
		printf("virtio-blk: FLUSH not offered\n");
		return;
	}
	expect_ok(vblk_io(&blk, VIRTIO_BLK_T_FLUSH, 0, NULL, 0), "flush");
	printf("virtio-blk: flush ok\n");
}

/* ------------------------------------------------------- broken chains */

/* A sector written and read back through the (re)initialised device. */
static void check_one_sector(unsigned seed, const char *when)
{
	pattern_fill(buf_a, REGION_C, VBLK_SECTOR, seed);
	expect_ok(vblk_io(&blk, VIRTIO_BLK_T_OUT, REGION_C, buf_a, VBLK_SECTOR), when);
	memset(buf_b, 0, VBLK_SECTOR);
	expect_ok(vblk_io(&blk, VIRTIO_BLK_T_IN, REGION_C, buf_b, VBLK_SECTOR), when);
	if (memcmp(buf_a, buf_b, VBLK_SECTOR))
		fail("sector read back differs", seed);
	printf("virtio-blk: %s: write and read back ok\n", when);
}

static void publish_broken_chain(unsigned kind)
{
	static struct virtio_blk_outhdr hdr = {.type = VIRTIO_BLK_T_OUT};
	static uint8_t status = 0xee;
	static struct vring_desc table[2];
	struct vring_desc *d = vq_raw_desc(&blk.q);

	d[0] = (struct vring_desc){(uintptr_t)&hdr, sizeof(hdr), VRING_DESC_F_NEXT, 1};
	switch (kind) {
	case 1: /* 0 -> 1 -> 0 -> ...: device-readable, never ends */
		d[1] = (struct vring_desc){(uintptr_t)buf_a, VBLK_SECTOR, VRING_DESC_F_NEXT, 0};
		printf("virtio-blk: submitting a descriptor loop 0 -> 1 -> 0\n");
		break;
	case 2: /* the data buffer 1 TiB up, far outside guest RAM */
		d[1] = (struct vring_desc){1ull << 40, VBLK_SECTOR, VRING_DESC_F_NEXT, 2};
		d[2] = (struct vring_desc){(uintptr_t)&status, 1, VRING_DESC_F_WRITE, 0};
		printf("virtio-blk: submitting a buffer at 1 TiB, outside RAM\n");
		break;
	case 3: /* an indirect table whose length is not a whole descriptor */
		table[0] = d[0];
		d[0] = (struct vring_desc){(uintptr_t)table, sizeof(table) + 1,
					   VRING_DESC_F_INDIRECT, 0};
		printf("virtio-blk: submitting an indirect table of 33 bytes\n");
		break;
	default: /* the avail index a whole ring ahead of what was used */
		printf("virtio-blk: moving the avail index %u entries ahead\n", blk.q.size + 1);
		blk.q.avail_idx = (uint16_t)(blk.q.avail_idx + blk.q.size);
		break;
	}
	vq_raw_publish(&blk.q, 0);
}

__attribute__((noreturn)) static void broken_chain(unsigned kind)
{
	uint64_t t0 = rdtsc();
	uint8_t status;

	check_one_sector(1, "before the broken chain");
	publish_broken_chain(kind);
	while (!((status = vdev_status(&blk.dev)) & VIRTIO_CONFIG_S_NEEDS_RESET)) {
		if (rdtsc() - t0 > 30000000000ull)
			fail("no DEVICE_NEEDS_RESET within ~10 s; status", status);
		cpu_relax();
	}
	printf("virtio-blk: device status %x: DEVICE_NEEDS_RESET\n", status);
	if (!vblk_reinit(&blk))
		fail("re-initialisation after reset", vdev_status(&blk.dev));
	check_one_sector(2, "after reset");
	printf("virtio-blk: broken chain %u: device recovered by reset\n", kind);
	guest_exit(0);
}

/* ------------------------------------------------------------ read-only */

/* readonly=1: the device offers VIRTIO_BLK_F_RO, reads work, a write fails
 * and leaves the sectors as they were. */
__attribute__((noreturn)) static void read_only(void)
{
	if (!vdev_has(&blk.dev, VIRTIO_BLK_F_RO))
		fail("read-only disk without VIRTIO_BLK_F_RO; features",
		     (unsigned)blk.dev.features);
	expect_ok(vblk_io(&blk, VIRTIO_BLK_T_IN, REGION_A, buf_a, COPY_CHUNK), "read-only read");
	memset(buf_b, 0x5a, COPY_CHUNK);
	expect_error(vblk_io(&blk, VIRTIO_BLK_T_OUT, REGION_A, buf_b, COPY_CHUNK),
		     "write to a read-only disk");
	expect_ok(vblk_io(&blk, VIRTIO_BLK_T_IN, REGION_A, buf_b, COPY_CHUNK), "read-only read");
	if (memcmp(buf_a, buf_b, COPY_CHUNK))
		fail("a refused write changed the disk", 0);
	printf("virtio-blk: read-only disk: VIRTIO_BLK_F_RO, write refused, data unchanged\n");
	guest_exit(0);
}

/* ----------------------------------------------------------------- main */

__attribute__((noreturn)) static long run(void *arg)
{
	(void)arg;
	uint64_t wanted = VBLK_FEATURES;

	if (kit_cmdline_uint("event_idx", 0))
		wanted |= 1ull << VIRTIO_RING_F_EVENT_IDX;
	if (!kit_cmdline_uint("indirect", 1))
		wanted &= ~(1ull << VIRTIO_RING_F_INDIRECT_DESC);
	if (!vblk_open(&blk, wanted, 128))
		fail("no usable virtio-blk device", 0);
	printf("virtio-blk: %lu sectors, features %lx, queue size %u, size_max %u seg_max %u\n",
	       blk.capacity, blk.dev.features, blk.q.size, blk.size_max, blk.seg_max);
	if (kit_cmdline_uint("readonly", 0))
		read_only();
	if (kit_cmdline_uint("broken", 0))
		broken_chain((unsigned)kit_cmdline_uint("broken", 0));
	if (blk.capacity < MIN_SECTORS)
		fail("disk smaller than 16 MiB; sectors", (unsigned)blk.capacity);
	check_get_id();
	check_copy();
	check_pattern();
	check_flush();
	check_zeroing(VIRTIO_BLK_T_DISCARD, VIRTIO_BLK_F_DISCARD, REGION_D, "discard");
	check_zeroing(VIRTIO_BLK_T_WRITE_ZEROES, VIRTIO_BLK_F_WRITE_ZEROES, REGION_E,
		      "write-zeroes");
	check_bad_requests();
	check_flush();
	printf("virtio-blk: all checks passed (%lu requests, %lu notifications)\n", blk.requests,
	       blk.q.kicks);
	guest_exit(0);
}

int guest_main(void)
{
	run_user(run, NULL);
	return 1; /* not reached */
}
