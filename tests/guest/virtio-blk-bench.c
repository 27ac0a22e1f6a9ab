/* virtio-blk-bench.elf — throughput of the first virtio-blk disk, through
 * the kit's polled ring-3 driver (bench/virtio-blk.sh runs it under vmm and
 * QEMU side by side):
 *
 *   seq-write, seq-read  mb=N MiB (default 64) in 1 MiB requests, seqqd=D
 *                        in flight (default 4), wrapping around the disk
 *   rand-read-qd1        ios=N 4 KiB reads at random 4 KiB-aligned offsets,
 *   rand-read-qd32       one in flight, then 32 in flight
 *   rand-write-qd1       the same as writes (on a qcow2 image the first
 *   rand-write-qd32      write to a cluster allocates it)
 *
 * only=K runs phase K (1-6) alone, only=9 none (to count exits per phase).
 * Each phase prints one line "vblk-bench: NAME requests=R bytes=B
 * cycles=C tsc_hz=H mbps=M iops=I kicks=K": timed with rdtsc, the TSC rate
 * measured against the PIT. Completions are polled (no interrupts), the
 * device is notified once per batch, as a driver with NAPI-like batching
 * would. Exits 0, or 1 naming a failed request.
 */
#include "vblk.h"

#define MIB (1u << 20)
#define RAND_BYTES 4096u
#define MAX_SEQ_QD 8

static uint8_t seq_buf[MAX_SEQ_QD][MIB] __attribute__((aligned(4096)));
static uint8_t rand_buf[VBLK_MAX_REQS][RAND_BYTES] __attribute__((aligned(4096)));
static struct vblk blk;
static uint64_t tsc_hz;

struct phase {
	const char *name;
	uint32_t type;
	uint32_t bytes; /* per request */
	unsigned depth;
	uint64_t requests;
	bool random;
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* The sector of request i: sequential wrapping around the disk, or random
 * and aligned to the request size. */
static uint64_t sector_of(const struct phase *p, uint64_t i)
{
	uint64_t per = p->bytes / VBLK_SECTOR, slots = blk.capacity / per;

	return (p->random ? next_random() % slots : i % slots) * per;
}

static bool submit_one(const struct phase *p, uint64_t i)
{
	/* vblk_submit takes the first free slot: its buffer is ours. */
	for (unsigned s = 0; s < VBLK_MAX_REQS; s++)
		if (!blk.req[s].busy) {
			void *buf = p->bytes == MIB ? seq_buf[s % MAX_SEQ_QD] : rand_buf[s];

			return vblk_submit(&blk, p->type, sector_of(p, i), buf, p->bytes);
		}
	return false;
}

static void run_phase(const struct phase *p)
{
	uint64_t submitted = 0, done = 0, kicks0 = blk.q.kicks, t0 = rdtsc(), cycles;

	while (done < p->requests) {
		while (submitted < p->requests && vq_in_flight(&blk.q) < p->depth &&
		       submit_one(p, submitted))
			submitted++;
		vblk_kick(&blk);
		struct vblk_req *r = vblk_wait(&blk);

		if (!r)
			guest_exit(1);
		do {
			if (r->status != VIRTIO_BLK_S_OK) {
				printf("vblk-bench: %s: request %lu status %u\n", p->name, done,
				       r->status);
				guest_exit(1);
			}
			vblk_release(r);
			done++;
		} while ((r = vblk_poll(&blk)));
	}
	cycles = rdtsc() - t0;
	if (!cycles)
		cycles = 1;
	uint64_t bytes = p->requests * p->bytes;
	printf("vblk-bench: %s requests=%lu bytes=%lu cycles=%lu tsc_hz=%lu mbps=%lu iops=%lu "
	       "kicks=%lu\n",
	       p->name, p->requests, bytes, cycles, tsc_hz, bytes * (tsc_hz / 1000) / cycles / 1000,
	       p->requests * tsc_hz / cycles, blk.q.kicks - kicks0);
}

__attribute__((noreturn)) static long bench(void *arg)
{
	(void)arg;
	uint64_t mb = kit_cmdline_uint("mb", 64), ios = kit_cmdline_uint("ios", 2000);
	unsigned seqqd = (unsigned)kit_cmdline_uint("seqqd", 4);
	uint64_t only = kit_cmdline_uint("only", 0);

	if (seqqd < 1 || seqqd > MAX_SEQ_QD)
		seqqd = 4;
	tsc_hz = kit_tsc_hz();
	if (!vblk_open(&blk, VBLK_FEATURES, 128)) {
		printf("vblk-bench: no usable virtio-blk device\n");
		guest_exit(1);
	}
	printf("vblk-bench: %lu sectors, features %lx, tsc %lu Hz\n", blk.capacity,
	       blk.dev.features, tsc_hz);
	const struct phase phases[] = {
		{"seq-write", VIRTIO_BLK_T_OUT, MIB, seqqd, mb, false},
		{"seq-read", VIRTIO_BLK_T_IN, MIB, seqqd, mb, false},
		{"rand-read-qd1", VIRTIO_BLK_T_IN, RAND_BYTES, 1, ios, true},
		{"rand-read-qd32", VIRTIO_BLK_T_IN, RAND_BYTES, 32, ios, true},
		{"rand-write-qd1", VIRTIO_BLK_T_OUT, RAND_BYTES, 1, ios, true},
		{"rand-write-qd32", VIRTIO_BLK_T_OUT, RAND_BYTES, 32, ios, true},
	};
	for (unsigned i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
		if (phases[i].requests && (!only || only == i + 1))
			run_phase(&phases[i]);
	printf("vblk-bench: done (%lu requests, %lu notifications)\n", blk.requests, blk.q.kicks);
	guest_exit(0);
}

int guest_main(void)
{
	run_user(bench, NULL);
	return 1; /* not reached */
}
