/* map_rec.c — see map_rec.h. */
#include <check.h>

#include "tests/unit/devices/map_rec.h"

int map_rec_map(void *opaque, uint64_t gpa, uint64_t size, void *hva, bool ro)
{
	struct map_rec *r = opaque;
	unsigned kept = 0;

	r->calls++;
	for (unsigned i = 0; i < r->n; i++)
		if (r->live[i].gpa >= gpa + size || gpa >= r->live[i].gpa + r->live[i].size)
			r->live[kept++] = r->live[i];
	r->n = kept;
	if (hva) {
		ck_assert_uint_lt(r->n, MAP_REC_MAX);
		r->live[r->n++] = (struct map_call){gpa, size, hva, ro};
	}
	return 0;
}

const struct map_call *map_rec_at(const struct map_rec *r, uint64_t gpa)
{
	static struct map_call at;

	at = (struct map_call){gpa, 0, NULL, false};
	for (unsigned i = 0; i < r->n; i++)
		if (gpa >= r->live[i].gpa && gpa < r->live[i].gpa + r->live[i].size) {
			at.size = r->live[i].gpa + r->live[i].size - gpa;
			at.hva = (uint8_t *)r->live[i].hva + (gpa - r->live[i].gpa);
			at.ro = r->live[i].ro;
		}
	return &at;
}
