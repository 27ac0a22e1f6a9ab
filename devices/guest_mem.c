/* guest_mem.c — bounds-checked access to guest RAM for loaders and DMA. */
#include <errno.h>
#include <string.h>

#include "devices/dev_host.h"

#define TOUCH_PAGE 4096u

/* Mark [hva, hva+len) in bits (touched or pinned). Readers get marked
 * too: the pointer does not say which way it goes, and a page sent once
 * more costs less than a guest page lost. */
static void mark(const struct guest_mem *gm, uint64_t *bits, const uint8_t *hva, uint64_t len)
{
	uint64_t first, last;

	if (hva < gm->touched_base || (uint64_t)(hva - gm->touched_base) >= gm->touched_size)
		return;
	first = (uint64_t)(hva - gm->touched_base) / TOUCH_PAGE;
	last = ((uint64_t)(hva - gm->touched_base) + (len ? len - 1 : 0)) / TOUCH_PAGE;
	for (uint64_t p = first; p <= last && p * TOUCH_PAGE < gm->touched_size; p++) {
		uint64_t bit = 1ull << (p % 64);

		if (!(__atomic_load_n(&bits[p / 64], __ATOMIC_RELAXED) & bit))
			__atomic_fetch_or(&bits[p / 64], bit, __ATOMIC_RELAXED);
	}
}

static void *lookup(const struct guest_mem *gm, uint64_t gpa, uint64_t len)
{
	for (unsigned i = 0; i < gm->n; i++) {
		const struct guest_ram_region *r = &gm->r[i];

		if (gpa >= r->gpa && gpa - r->gpa <= r->size && len <= r->size - (gpa - r->gpa))
			return r->hva + (gpa - r->gpa);
	}
	return NULL;
}

void *guest_mem_ptr(const struct guest_mem *gm, uint64_t gpa, uint64_t len)
{
	uint8_t *hva = lookup(gm, gpa, len);

	if (hva && gm->touched)
		mark(gm, gm->touched, hva, len);
	return hva;
}

void *guest_mem_pin(const struct guest_mem *gm, uint64_t gpa, uint64_t len)
{
	uint8_t *hva = guest_mem_ptr(gm, gpa, len);

	if (hva && gm->pinned)
		mark(gm, gm->pinned, hva, len);
	return hva;
}

bool guest_mem_tracking(const struct guest_mem *gm)
{
	return __atomic_load_n(&gm->tracking, __ATOMIC_SEQ_CST);
}

int guest_mem_read(const struct guest_mem *gm, uint64_t gpa, void *dst, uint64_t len)
{
	const void *src = guest_mem_ptr(gm, gpa, len);

	if (!src)
		return -EFAULT;
	memcpy(dst, src, len);
	return 0;
}

int guest_mem_write(const struct guest_mem *gm, uint64_t gpa, const void *src, uint64_t len)
{
	void *dst = guest_mem_ptr(gm, gpa, len);

	if (!dst)
		return -EFAULT;
	memcpy(dst, src, len);
	return 0;
}

int dev_on_reset(struct dev_host *host, void (*fn)(void *), void *opaque)
{
	if (host->n_reset == DEV_MAX_RESET_HOOKS)
		return -ENOSPC;
	host->reset[host->n_reset++] = (struct dev_reset_hook){fn, opaque};
	return 0;
}

void dev_reset_all(struct dev_host *host)
{
	for (unsigned i = 0; i < host->n_reset; i++)
		host->reset[i].fn(host->reset[i].opaque);
}
