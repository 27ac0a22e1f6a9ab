/* migration_prefault.c — fault a pass's coming pages in ahead of the
 * receiving thread (migration.h).
 *
 * A destination's guest RAM is fresh memory: each page the stream fills
 * is first a page fault that allocates and zeroes it, and with a fast link
 * those faults, not the copy, bound the receiving thread. A pass's bitmap
 * arrives before its data, so which pages will come is known: a second
 * thread faults them in, in order, with MADV_POPULATE_WRITE, while the
 * first copies. Where it falls behind, the receiver faults the page itself
 * (the kernel serialises both); where it runs ahead, it only allocated
 * what the stream is about to write anyway. Content never changes: a
 * populated page is zeros, or already what it was. */
#include <errno.h>
#include <sys/mman.h>

#include "vmm/migration.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define PREFAULT_CHUNK 512 /* pages per call (2 MiB): stop is checked between */
#define PREFAULT_MIN 512   /* fewer pages with data: not worth a thread */

static bool has_data(const uint8_t *data, uint64_t i)
{
	return data[i / 8] >> (i % 8) & 1;
}

/* Fault pages [i, j) in: whether to go on (an older kernel refuses the
 * advice: then the receiver faults alone). */
static bool populate(const struct mig_prefault *pf, uint64_t i, uint64_t j)
{
	int r = madvise(pf->hva + i * MIG_PAGE, (size_t)(j - i) * MIG_PAGE, MADV_POPULATE_WRITE);

	return r == 0 || errno == EINTR || errno == EAGAIN;
}

static void *prefault_run(void *opaque)
{
	struct mig_prefault *pf = opaque;

	for (uint64_t i = 0; i < pf->pages && !__atomic_load_n(&pf->stop, __ATOMIC_RELAXED);) {
		uint64_t j = i;

		if (i % 8 == 0 && !pf->data[i / 8]) {
			i += 8;
			continue;
		}
		while (j < pf->pages && has_data(pf->data, j) && j - i < PREFAULT_CHUNK)
			j++;
		if (j > i && !populate(pf, i, j))
			break;
		i = j > i ? j : i + 1;
	}
	return NULL;
}

void mig_prefault_start(struct mig_prefault *pf, uint8_t *hva, const uint8_t *data, uint64_t pages)
{
	uint64_t with_data = 0;

	*pf = (struct mig_prefault){.hva = hva, .data = data, .pages = pages};
	for (uint64_t b = 0; b < (pages + 7) / 8 && with_data < PREFAULT_MIN; b++)
		with_data += (uint64_t)__builtin_popcount(data[b]);
	if (with_data >= PREFAULT_MIN)
		pf->started = pthread_create(&pf->thread, NULL, prefault_run, pf) == 0;
}

void mig_prefault_stop(struct mig_prefault *pf)
{
	if (!pf->started)
		return;
	__atomic_store_n(&pf->stop, true, __ATOMIC_RELAXED);
	pthread_join(pf->thread, NULL);
	pf->started = false;
}
