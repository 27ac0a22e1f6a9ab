/* map_rec.h — a pc_mem_map for unit tests that keeps the mappings as
 * vmm's machine_map does: a new one replaces every one it overlaps, and a
 * NULL hva only removes. The host bridge tests read back what the guest
 * would see at an address. */
#ifndef TESTS_UNIT_DEVICES_MAP_REC_H
#define TESTS_UNIT_DEVICES_MAP_REC_H

#include <stdbool.h>
#include <stdint.h>

#define MAP_REC_MAX 64

struct map_call {
	uint64_t gpa, size;
	void *hva;
	bool ro;
};

struct map_rec {
	struct map_call live[MAP_REC_MAX];
	unsigned n;	/* live mappings */
	unsigned calls; /* map calls made */
};

/* pc_mem_map.map with opaque a struct map_rec. */
int map_rec_map(void *opaque, uint64_t gpa, uint64_t size, void *hva, bool ro);

/* What the guest sees at gpa: the host address there, the bytes the
 * mapping goes on for, read-only or not; hva NULL where nothing is. The
 * result is overwritten by the next call. */
const struct map_call *map_rec_at(const struct map_rec *r, uint64_t gpa);

#endif
