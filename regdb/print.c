// SPDX-License-Identifier: GPL-2.0
/* A domain in `iw reg get`'s layout. */
#include "regdb/regdb.h"

static void print_mhz(FILE *out, uint32_t khz)
{
	if (khz % 1000)
		fprintf(out, "%u.%03u", khz / 1000, khz % 1000);
	else
		fprintf(out, "%u", khz / 1000);
}

void regdb_domain_print(const struct regdb_domain *d, FILE *out)
{
	char flags[256];

	fprintf(out, "country %s: DFS-%s\n", d->alpha2, regdb_dfs_name(d->dfs_region));
	for (unsigned int i = 0; i < d->n_rules; i++) {
		const struct regdb_rule *r = &d->rules[i];

		fprintf(out, "\t(");
		print_mhz(out, r->start_khz);
		fprintf(out, " - ");
		print_mhz(out, r->end_khz);
		fprintf(out, " @ ");
		print_mhz(out, r->max_bw_khz);
		fprintf(out, "), (N/A, %d.%02d)", r->max_eirp_mbm / 100, r->max_eirp_mbm % 100);
		if (r->flags & REGDB_DFS)
			fprintf(out, ", (%u ms)", r->cac_ms);
		else
			fprintf(out, ", (N/A)");
		if (r->flags)
			fprintf(out, ", %s", regdb_flags_str(r->flags, ", ", flags, sizeof(flags)));
		fprintf(out, "\n");
	}
}
