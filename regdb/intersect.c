// SPDX-License-Identifier: GPL-2.0
/* Intersection of two domains with cfg80211's semantics (net/wireless/reg.c). */
#include "regdb/regdb.h"

#include <stdlib.h>
#include <string.h>

static uint32_t umin(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static int32_t imin(int32_t a, int32_t b)
{
	return a < b ? a : b;
}

static void wmm_ac_intersect(const struct regdb_wmm_ac *a, const struct regdb_wmm_ac *b,
			     struct regdb_wmm_ac *out)
{
	out->cw_min = a->cw_min > b->cw_min ? a->cw_min : b->cw_min;
	out->cw_max = a->cw_max > b->cw_max ? a->cw_max : b->cw_max;
	out->aifsn = a->aifsn > b->aifsn ? a->aifsn : b->aifsn;
	out->cot_ms = a->cot_ms < b->cot_ms ? a->cot_ms : b->cot_ms;
}

static void wmm_intersect(const struct regdb_rule *a, const struct regdb_rule *b,
			  struct regdb_rule *out)
{
	out->has_wmm = a->has_wmm || b->has_wmm;
	if (!(a->has_wmm && b->has_wmm)) {
		if (out->has_wmm)
			out->wmm = a->has_wmm ? a->wmm : b->wmm;
		return;
	}
	for (int i = 0; i < 4; i++) {
		wmm_ac_intersect(&a->wmm.client[i], &b->wmm.client[i], &out->wmm.client[i]);
		wmm_ac_intersect(&a->wmm.ap[i], &b->wmm.ap[i], &out->wmm.ap[i]);
	}
}

/* reg_rules_intersect(); false when the result is not a valid rule. */
static bool rules_intersect(const struct regdb_domain *da, unsigned int ia,
			    const struct regdb_domain *db, unsigned int ib, struct regdb_rule *out)
{
	const struct regdb_rule *a = &da->rules[ia], *b = &db->rules[ib];
	uint32_t bwa = a->flags & REGDB_AUTO_BW ? regdb_rule_max_bw(da, ia) : a->max_bw_khz;
	uint32_t bwb = b->flags & REGDB_AUTO_BW ? regdb_rule_max_bw(db, ib) : b->max_bw_khz;

	memset(out, 0, sizeof(*out));
	out->start_khz = a->start_khz > b->start_khz ? a->start_khz : b->start_khz;
	out->end_khz = umin(a->end_khz, b->end_khz);
	if (out->end_khz <= out->start_khz)
		return false;
	out->flags = (a->flags | b->flags) & ~REGDB_AUTO_BW;
	out->flags |= a->flags & b->flags & REGDB_AUTO_BW;
	out->max_bw_khz = umin(umin(bwa, bwb), out->end_khz - out->start_khz);
	out->max_eirp_mbm = imin(a->max_eirp_mbm, b->max_eirp_mbm);
	out->max_ant_gain_mbi = imin(a->max_ant_gain_mbi, b->max_ant_gain_mbi);
	out->cac_ms = a->cac_ms > b->cac_ms ? a->cac_ms : b->cac_ms;
	wmm_intersect(a, b, out);
	return out->max_bw_khz > 0;
}

/* rule_contains(): r1 is at least as wide, as strong and as broad as r2. */
static bool rule_contains(const struct regdb_rule *r1, const struct regdb_rule *r2)
{
	return r1->flags == r2->flags && r1->max_ant_gain_mbi <= r2->max_ant_gain_mbi &&
	       r1->max_eirp_mbm <= r2->max_eirp_mbm && r1->start_khz <= r2->start_khz &&
	       r1->end_khz >= r2->end_khz && r1->max_bw_khz >= r2->max_bw_khz;
}

static void add_rule(struct regdb_domain *d, const struct regdb_rule *r)
{
	for (unsigned int i = 0; i < d->n_rules; i++) {
		if (rule_contains(&d->rules[i], r))
			return;
		if (rule_contains(r, &d->rules[i])) {
			d->rules[i] = *r;
			return;
		}
	}
	d->rules[d->n_rules++] = *r;
}

struct regdb_domain *regdb_intersect(const struct regdb_domain *a, const struct regdb_domain *b)
{
	enum regdb_dfs_region dfs = a->dfs_region == b->dfs_region ? a->dfs_region : REGDB_DFS_UNSET;
	struct regdb_domain *d = regdb_domain_new("98", dfs, a->n_rules * b->n_rules);
	struct regdb_rule r;

	if (!d)
		return NULL;
	d->n_rules = 0;
	for (unsigned int i = 0; i < a->n_rules; i++)
		for (unsigned int j = 0; j < b->n_rules; j++)
			if (rules_intersect(a, i, b, j, &r))
				add_rule(d, &r);
	if (!d->n_rules) {
		free(d);
		return NULL;
	}
	return d;
}
