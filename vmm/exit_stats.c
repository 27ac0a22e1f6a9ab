/* exit_stats.c — per-address exit counters (see exit_stats.h).
 *
 * Open addressing over a power-of-two table: a slot's key is claimed once
 * with a compare-and-swap and never released, so lookups need no lock.
 * When the table is full further new addresses go to one overflow count. */
#include <stdatomic.h>
#include <stdlib.h>

#include "vmm/exit_stats.h"

#define SLOTS 1024u
#define KEY_EMPTY 0
#define KEY_MMIO (1ull << 63)
#define KEY_WRITE (1ull << 62)
#define KEY_USED (1ull << 61) /* so that port 0, read, is not KEY_EMPTY */
#define KEY_ADDR_MASK (KEY_USED - 1)

struct slot {
	_Atomic uint64_t key;
	_Atomic uint64_t exits;
	_Atomic uint64_t accesses; /* > exits for rep ins/outs */
};

static struct slot table[SLOTS];
static _Atomic uint64_t overflow; /* exits of addresses the full table lost */

static unsigned hash(uint64_t key)
{
	key ^= key >> 29;
	key *= 0xbf58476d1ce4e5b9ull;
	return (unsigned)(key >> 40) & (SLOTS - 1);
}

static void count(uint64_t key, uint64_t accesses)
{
	unsigned i = hash(key);

	for (unsigned probe = 0; probe < SLOTS; probe++, i = (i + 1) & (SLOTS - 1)) {
		uint64_t k = atomic_load_explicit(&table[i].key, memory_order_acquire);

		if (k == KEY_EMPTY) {
			uint64_t expected = KEY_EMPTY;

			if (!atomic_compare_exchange_strong(&table[i].key, &expected, key) &&
			    expected != key)
				continue; /* another address took it first */
			k = key;
		}
		if (k == key) {
			atomic_fetch_add_explicit(&table[i].exits, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&table[i].accesses, accesses,
						  memory_order_relaxed);
			return;
		}
	}
	atomic_fetch_add_explicit(&overflow, 1, memory_order_relaxed);
}

void exit_stats_io(uint16_t port, bool is_write, uint32_t n)
{
	count(KEY_USED | (is_write ? KEY_WRITE : 0) | port, n);
}

void exit_stats_mmio(uint64_t gpa, bool is_write)
{
	count(KEY_USED | KEY_MMIO | (is_write ? KEY_WRITE : 0) | (gpa & KEY_ADDR_MASK), 1);
}

struct row {
	uint64_t key, exits, accesses;
};

static int by_exits_desc(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return x->exits < y->exits ? 1 : x->exits > y->exits ? -1 : 0;
}

void exit_stats_print(FILE *out, unsigned max_rows)
{
	static struct row rows[SLOTS];
	unsigned n = 0;
	uint64_t total = atomic_load(&overflow);

	for (unsigned i = 0; i < SLOTS; i++) {
		uint64_t k = atomic_load(&table[i].key);

		if (k == KEY_EMPTY)
			continue;
		rows[n] = (struct row){k, atomic_load(&table[i].exits),
				       atomic_load(&table[i].accesses)};
		total += rows[n++].exits;
	}
	qsort(rows, n, sizeof(rows[0]), by_exits_desc);
	fprintf(out, "exits by address: %llu in all, %u addresses\n", (unsigned long long)total, n);
	fprintf(out, "  kind    address dir        exits   accesses\n");
	for (unsigned i = 0; i < n && i < max_rows; i++) {
		uint64_t k = rows[i].key;

		fprintf(out, "  %-4s %#10llx %-5s %10llu %10llu\n", k & KEY_MMIO ? "mmio" : "io",
			(unsigned long long)(k & KEY_ADDR_MASK), k & KEY_WRITE ? "write" : "read",
			(unsigned long long)rows[i].exits, (unsigned long long)rows[i].accesses);
	}
	if (atomic_load(&overflow))
		fprintf(out, "  (table full: %llu exits not counted by address)\n",
			(unsigned long long)atomic_load(&overflow));
}

static void print_at_exit(void)
{
	exit_stats_print(stderr, 40);
}

void exit_stats_init(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	if (getenv("VMM_EXIT_STATS"))
		atexit(print_at_exit);
}
