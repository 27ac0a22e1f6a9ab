/* e820.c — the BIOS memory map every direct-boot loader reports: the guest's
 * RAM regions as E820_RAM with a PC's usual reservations below 1 MiB (the
 * EBDA at 0x9fc00 and the BIOS area at 0xf0000), sorted and merged.
 */
#include <errno.h>

#include "devices/dev_host.h"
#include "firmware/firmware.h"

#define EBDA_START 0x9fc00ull
#define VGA_START 0xa0000ull
#define BIOS_START 0xf0000ull
#define ONE_MIB 0x100000ull

static int add(struct e820_map *map, uint64_t start, uint64_t end, uint32_t type)
{
	if (start >= end)
		return 0;
	if (map->n == E820_MAX_ENTRIES)
		return -ENOSPC;
	map->e[map->n++] = (struct e820_entry){start, end - start, type};
	return 0;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* A RAM region split around [EBDA_START, 1 MiB): what a PC's firmware keeps
 * for itself there is reserved, whatever backs it. */
static int add_region(struct e820_map *map, uint64_t start, uint64_t end)
{
	int ret = add(map, start, min_u64(end, EBDA_START), E820_RAM);

	if (!ret)
		ret = add(map, max_u64(start, EBDA_START), min_u64(end, ONE_MIB), E820_RESERVED);
	if (!ret)
		ret = add(map, max_u64(start, ONE_MIB), end, E820_RAM);
	return ret;
}

static void sort_by_address(struct e820_map *map)
{
	for (unsigned i = 1; i < map->n; i++) {
		struct e820_entry e = map->e[i];
		unsigned j = i;

		for (; j > 0 && map->e[j - 1].addr > e.addr; j--)
			map->e[j] = map->e[j - 1];
		map->e[j] = e;
	}
}

/* Join entries of one type that touch or overlap. RAM never overlaps a
 * reservation here: add_region cut it out. */
static void merge_neighbours(struct e820_map *map)
{
	unsigned out = 0;

	for (unsigned i = 0; i < map->n; i++) {
		struct e820_entry *last = out ? &map->e[out - 1] : NULL;
		const struct e820_entry *e = &map->e[i];

		if (last && last->type == e->type && e->addr <= last->addr + last->size) {
			uint64_t end = max_u64(last->addr + last->size, e->addr + e->size);

			last->size = end - last->addr;
			continue;
		}
		map->e[out++] = *e;
	}
	map->n = out;
}

int e820_reserve(struct e820_map *map, uint64_t start, uint64_t len)
{
	int ret = add(map, start, start + len, E820_RESERVED);

	if (!ret)
		sort_by_address(map);
	return ret;
}

int e820_build(const struct guest_mem *mem, struct e820_map *map)
{
	int ret = 0;

	map->n = 0;
	for (unsigned i = 0; i < mem->n && !ret; i++) {
		const struct guest_ram_region *r = &mem->r[i];

		if (r->size > UINT64_MAX - r->gpa)
			return -EINVAL;
		ret = add_region(map, r->gpa, r->gpa + r->size);
	}
	if (!ret)
		ret = add(map, EBDA_START, VGA_START, E820_RESERVED);
	if (!ret)
		ret = add(map, BIOS_START, ONE_MIB, E820_RESERVED);
	if (ret)
		return ret;
	sort_by_address(map);
	merge_neighbours(map);
	return 0;
}
