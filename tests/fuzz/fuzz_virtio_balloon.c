/* fuzz_virtio_balloon.c — virtio-balloon's queue parsers
 * (devices/virtio/balloon.c) on chains from fuzz_virtq.h's queue: the
 * first byte picks the queue the chains arrive on (inflate, deflate,
 * stats, free page reporting). PFN arrays of any length and value,
 * stats entries of any tag, partial entries, writable ranges of any
 * alignment. balloon.c is included for its static handlers; a PFN the
 * device marks must lie inside guest RAM. */
#include "devices/virtio/balloon.c"
#include "tests/fuzz/fuzz_virtq.h"

static struct virtio_balloon b;
static uint64_t bitmap[FUZZ_RAM / BALLOON_PAGE / 64 + 1];
static unsigned role;

static uint32_t serve(struct virtq_chain *c)
{
	switch (role) {
	case ROLE_INFLATE:
	case ROLE_DEFLATE:
		inflate_or_deflate(&b, c, role == ROLE_INFLATE);
		break;
	case ROLE_STATS:
		virtio_balloon_parse_stats(c, &b.gs);
		break;
	default:
		report_free(&b, c);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_dev d;

	if (!d.fake.ram)
		fuzz_dev_init(&d);
	memset(bitmap, 0, sizeof(bitmap));
	b = (struct virtio_balloon){
		.mem = &d.fake.mem, .inflated = bitmap, .n_frames = FUZZ_RAM / BALLOON_PAGE};
	role = (unsigned)fuzz_take(&data, &size, 1) % 4;
	fuzz_virtq_run(&d, serve, data, size);
	if (b.ct.inflated_pages + b.ct.deflated_pages + b.ct.bad_pfns > (uint64_t)size * 64)
		abort(); /* more PFNs than the input could hold */
	for (size_t i = b.n_frames / 64 + 1; i < sizeof(bitmap) / sizeof(bitmap[0]); i++)
		if (bitmap[i])
			abort(); /* a page beyond guest RAM marked */
	return 0;
}
