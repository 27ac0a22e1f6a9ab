/* balloon.elf — a virtio-balloon driver that runs at native speed where
 * guest ring 0 is emulated (kvm_pvm): everything runs in ring 3, so what
 * bench/balloon-kit.sh times is the VMM's share of a balloon change, not
 * an emulated guest kernel's page walk.
 *
 * It fills mb=N MiB (default 256) from 16 MiB up, one word in each 4 KiB
 * page (so the host holds every page), prints "balloon: filled P pages",
 * sets up the first virtio-balloon device (VERSION_1 only: no stats, no
 * free page hints) and prints "balloon: ready". Then it polls the config's
 * num_pages every millisecond and follows it, as Linux's driver does:
 * inflating posts the PFNs of filled pages on the inflate queue in buffers
 * of up to 256, one at a time, and writes `actual` after each; deflating
 * does the same on the deflate queue. Pages go in and out in a fixed
 * order of "slots": slot s is fill page s, or with scatter=1 page
 * s * STRIDE mod P, so the PFNs of one buffer are not contiguous (as in a
 * real guest, whose balloon pages come from its page allocator).
 *
 * After a change it prints "balloon: inflated N pages to A in T us" or
 * "balloon: deflated N pages to A in T us" (T by the TSC: the driver's own
 * time from seeing num_pages to writing the last actual). After a deflate
 * it reads the returned pages ("balloon: N returned pages, Z read zero":
 * Z that the host did discard) and rewrites their words; after either it
 * checks every page outside the balloon ("balloon: N pages intact"). A page that lost its
 * word ends the payload with "balloon: FAIL ...". Runs until killed.
 */
#include <linux/virtio_balloon.h>

#include "virtio.h"

#define FILL_BASE ((uint64_t)16 << 20)
#define PAGE ((uint64_t)4096)
#define BATCH 256     /* PFNs per buffer: what Linux's driver posts */
#define STRIDE 40503u /* odd: a bijection on any power-of-two fill */
#define WAIT_SECS 10  /* for the device to use a buffer */

struct balloon {
	struct vdev dev;
	struct vq inflate, deflate;
	uint64_t pages;	 /* filled from FILL_BASE */
	uint64_t held;	 /* in the balloon: slots [0, held) */
	uint64_t stride; /* slot -> page multiplier, coprime with pages */
	uint64_t tsc_hz;
};

static uint32_t pfns[BATCH];

__attribute__((noreturn)) static void fail(const char *what)
{
	printf("balloon: FAIL: %s\n", what);
	guest_exit(1);
}

static uint64_t page_of(const struct balloon *b, uint64_t slot)
{
	return slot * b->stride % b->pages;
}

static volatile uint64_t *page_word(uint64_t page)
{
	return (volatile uint64_t *)(uintptr_t)(FILL_BASE + page * PAGE + (page % 510) * 8);
}

static uint64_t fill_value(uint64_t page)
{
	return (page * 0x9e3779b97f4a7c15ull) ^ 0xa5a5a5a5a5a5a5a5ull;
}

/* Every page outside the balloon still holds its word: the device
 * discarded only what it was given. */
static void check_intact(const struct balloon *b)
{
	for (uint64_t s = b->held; s < b->pages; s++) {
		uint64_t p = page_of(b, s);

		if (*page_word(p) != fill_value(p)) {
			printf("balloon: FAIL: page %lu at %lx holds %lx\n", p,
			       (uint64_t)(uintptr_t)page_word(p), *page_word(p));
			guest_exit(1);
		}
	}
	printf("balloon: %lu pages intact\n", b->pages - b->held);
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* Post the PFNs of slots [from, from + n) on q and wait until the device
 * used them: Linux's driver, too, has one buffer in flight. */
static void tell_host(struct balloon *b, struct vq *q, uint64_t from, unsigned n)
{
	struct vq_buf buf = {pfns, n * sizeof(pfns[0]), false};
	uint64_t deadline;

	for (unsigned i = 0; i < n; i++) /* x86: already little-endian */
		pfns[i] = (uint32_t)(FILL_BASE / PAGE + page_of(b, from + i));
	if (!vq_add(q, &buf, 1, pfns))
		fail("no room on a queue with nothing in flight");
	vq_kick(q);
	deadline = rdtsc() + WAIT_SECS * b->tsc_hz;
	while (!vq_get_used(q, NULL))
		if (rdtsc() > deadline)
			fail("the device did not use a balloon buffer in 10 s");
}

static void set_actual(struct balloon *b)
{
	volatile uint32_t *actual =
		(volatile uint32_t *)(b->dev.device_cfg +
				      offsetof(struct virtio_balloon_config, actual));

	*actual = (uint32_t)b->held;
}

static uint64_t us_since(const struct balloon *b, uint64_t t0)
{
	return (rdtsc() - t0) * 1000000 / b->tsc_hz;
}

static void inflate(struct balloon *b, uint64_t target)
{
	uint64_t t0 = rdtsc(), from = b->held;

	while (b->held < target) {
		unsigned n = target - b->held < BATCH ? (unsigned)(target - b->held) : BATCH;

		tell_host(b, &b->inflate, b->held, n);
		b->held += n;
		set_actual(b);
	}
	printf("balloon: inflated %lu pages to %lu in %lu us\n", b->held - from, b->held,
	       us_since(b, t0));
}

static void deflate(struct balloon *b, uint64_t target)
{
	uint64_t t0 = rdtsc(), from = b->held, zero = 0;

	while (b->held > target) {
		unsigned n = b->held - target < BATCH ? (unsigned)(b->held - target) : BATCH;

		tell_host(b, &b->deflate, b->held - n, n);
		b->held -= n;
		set_actual(b);
	}
	printf("balloon: deflated %lu pages to %lu in %lu us\n", from - b->held, b->held,
	       us_since(b, t0));
	/* The pages are the guest's again: count those the host discarded,
	 * then give them their words back. */
	for (uint64_t s = b->held; s < from; s++) {
		uint64_t p = page_of(b, s);

		zero += *page_word(p) == 0;
		*page_word(p) = fill_value(p);
	}
	printf("balloon: %lu returned pages, %lu read zero\n", from - b->held, zero);
}

static bool balloon_open(struct balloon *b)
{
	struct vdev *d = &b->dev;

	if (!vdev_find(d, VIRTIO_ID_BALLOON, 0) || !vdev_negotiate(d, 0) ||
	    !vq_init(&b->inflate, d, 0, VQ_MAX_SIZE) || !vq_init(&b->deflate, d, 1, VQ_MAX_SIZE))
		return false;
	if (!d->device_cfg) {
		printf("balloon: the device has no configuration structure\n");
		return false;
	}
	vdev_ready(d);
	set_actual(b);
	return true;
}

static void fill(const struct balloon *b)
{
	for (uint64_t p = 0; p < b->pages; p++)
		*page_word(p) = fill_value(p);
	printf("balloon: filled %lu pages from %lx\n", b->pages, FILL_BASE);
}

/* Follow num_pages forever, looking every millisecond (each look is a few
 * exits: the config is trapped MMIO). */
__attribute__((noreturn)) static void follow(struct balloon *b)
{
	uint64_t next = 0;

	for (;;) {
		uint64_t target = vdev_cfg_read(
			&b->dev, offsetof(struct virtio_balloon_config, num_pages), 4);

		if (target > b->pages)
			target = b->pages; /* what the fill holds; actual tells */
		if (target != b->held) {
			if (target > b->held)
				inflate(b, target);
			else
				deflate(b, target);
			check_intact(b);
		}
		next = rdtsc() + b->tsc_hz / 1000;
		while (rdtsc() < next)
			cpu_relax();
	}
}

/* The fill must lie in RAM: multiboot's mem_upper is the KiB above 1 MiB. */
static bool fill_fits(uint64_t pages)
{
	const struct mb_info *mbi = kit_mbi();
	uint64_t top;

	if (!mbi || !(mbi->flags & MB_INFO_MEMORY))
		return true; /* no word on it: trust mb= */
	top = (1ull << 20) + (uint64_t)mbi->mem_upper * 1024;
	if (FILL_BASE + pages * PAGE <= top)
		return true;
	printf("balloon: FAIL: mb= reaches %lx, RAM below 4 GiB ends at %lx\n",
	       FILL_BASE + pages * PAGE, top);
	return false;
}

__attribute__((noreturn)) static long run(void *arg)
{
	struct balloon *b = arg;

	b->tsc_hz = kit_tsc_hz();
	fill(b);
	if (!balloon_open(b))
		fail("no usable virtio-balloon device");
	printf("balloon: ready: device %x at %02x.%u, features %lx, queues %u/%u, stride %lu\n",
	       b->dev.device_id, b->dev.devfn >> 3, b->dev.devfn & 7, b->dev.features,
	       b->inflate.size, b->deflate.size, b->stride);
	follow(b);
}

int guest_main(void)
{
	static struct balloon b;

	b.pages = (kit_cmdline_uint("mb", 256) << 20) / PAGE;
	if (!b.pages || !fill_fits(b.pages))
		return 1;
	b.stride = 1;
	if (kit_cmdline_uint("scatter", 0))
		for (b.stride = STRIDE; gcd(b.stride, b.pages) != 1; b.stride += 2)
			;
	run_user(run, &b);
	return 1; /* not reached */
}
