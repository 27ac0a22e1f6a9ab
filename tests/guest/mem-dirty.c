/* mem-dirty.elf — a guest for migration benchmarks that runs at native
 * speed where ring 0 is emulated: everything after the set-up runs in
 * ring 3.
 *
 * It fills mb=N MiB (default 256) from 16 MiB up, one word in each page
 * (so every page is one a migration must send), then prints a tick line
 * ("mem-dirty: tick SEQ") every tick=MS milliseconds (default 2) by the
 * TSC. A byte 'd' on the serial port starts rewriting the first
 * dirtymb=M MiB (default 64) of the fill at rate=R MB/s (default 100),
 * one word per page, a share of it between two ticks; 'i' stops it. Each
 * second it checks that every page beyond the dirtied part still holds
 * its word and prints how many pages it dirtied ("mem-dirty: dirtied
 * PAGES in SEQ"); a page that lost its word ends the payload with "FAIL".
 * So a restored or migrated guest shows when it runs again (its next
 * tick), that its counter went on, and that its memory came across. */
#include "kit.h"

#define FILL_BASE (16ull << 20)
#define PAGE 4096ull
#define COM1_DATA 0x3f8
#define COM1_LSR 0x3fd
#define LSR_DATA_READY 0x01

struct dirty_run {
	uint64_t pages, dirty_pages, tsc_per_tick, pages_per_tick, ticks_per_check;
};

static uint64_t *page_word(uint64_t page)
{
	return (uint64_t *)(uintptr_t)(FILL_BASE + page * PAGE + (page % 510) * 8);
}

static uint64_t fill_value(uint64_t page, uint64_t generation)
{
	return (page * 0x9e3779b97f4a7c15ull) ^ (generation << 48) ^ 0x5a5a5a5a5a5a5a5aull;
}

/* Whether the pages the dirtying never touches still hold their words. */
static bool fill_intact(const struct dirty_run *r)
{
	for (uint64_t p = r->dirty_pages; p < r->pages; p++)
		if (*page_word(p) != fill_value(p, 0)) {
			printf("mem-dirty: FAIL: page %lu at %lx holds %lx\n", p,
			       (uint64_t)(uintptr_t)page_word(p), *page_word(p));
			return false;
		}
	return true;
}

__attribute__((noreturn)) static long dirty_loop(void *arg)
{
	const struct dirty_run *r = arg;
	uint64_t seq = 0, next = 0, dirtied = 0, generation = 1;
	bool dirtying = false;

	for (uint64_t p = 0; p < r->pages; p++)
		*page_word(p) = fill_value(p, 0);
	printf("mem-dirty: filled %lu pages\n", r->pages);
	for (uint64_t t = rdtsc();; t = rdtsc()) {
		if (t < next)
			continue;
		next = t + r->tsc_per_tick;
		printf("mem-dirty: tick %lu\n", seq++);
		if (inb(COM1_LSR) & LSR_DATA_READY) {
			uint8_t c = inb(COM1_DATA);

			dirtying = c == 'd' ? true : c == 'i' ? false : dirtying;
		}
		for (uint64_t i = 0; dirtying && r->dirty_pages && i < r->pages_per_tick; i++) {
			uint64_t p = dirtied++ % r->dirty_pages;

			generation += p == 0;
			*page_word(p) = fill_value(p, generation);
		}
		if (seq % r->ticks_per_check == 0) {
			if (!fill_intact(r))
				guest_exit(1);
			printf("mem-dirty: dirtied %lu in %lu\n", dirtied, seq);
		}
	}
}

int guest_main(void)
{
	static struct dirty_run r;
	uint64_t tsc_hz = kit_tsc_hz(), tick_ms = kit_cmdline_uint("tick", 2);
	uint64_t rate = kit_cmdline_uint("rate", 100);

	r.pages = (kit_cmdline_uint("mb", 256) << 20) / PAGE;
	r.dirty_pages = (kit_cmdline_uint("dirtymb", 64) << 20) / PAGE;
	if (r.dirty_pages > r.pages)
		r.dirty_pages = r.pages;
	if (!tick_ms)
		tick_ms = 1;
	r.tsc_per_tick = tsc_hz / 1000 * tick_ms;
	r.pages_per_tick = rate * 1000000 / PAGE * tick_ms / 1000;
	r.ticks_per_check = 1000 / tick_ms ? 1000 / tick_ms : 1;
	printf("mem-dirty: start pages=%lu dirty_pages=%lu per_tick=%lu tsc_hz=%lu\n", r.pages,
	       r.dirty_pages, r.pages_per_tick, tsc_hz);
	run_user(dirty_loop, &r);
	return 1; /* not reached */
}
