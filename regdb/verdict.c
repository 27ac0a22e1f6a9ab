// SPDX-License-Identifier: GPL-2.0
/* Per-channel verdicts with cfg80211's rule matching and AUTO-BW widening. */
#include "regdb/regdb.h"

#include <stdint.h>

#define MHZ(x) ((uint32_t)(x) * 1000u)
#define DEFAULT_CAC_MS 60000u /* IEEE80211_DFS_MIN_CAC_TIME_MS */

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* Span of the run of touching rules around idx (reg_get_max_bandwidth_from_range). */
static uint32_t auto_bw_span(const struct regdb_domain *d, unsigned int idx)
{
	uint32_t start = d->rules[idx].start_khz, end = d->rules[idx].end_khz;

	for (unsigned int i = idx; i > 0 && d->rules[i - 1].end_khz >= start; i--)
		start = d->rules[i - 1].start_khz;
	for (unsigned int i = idx; i + 1 < d->n_rules && d->rules[i + 1].start_khz <= end; i++)
		end = d->rules[i + 1].end_khz;
	return end - start;
}

uint32_t regdb_rule_max_bw(const struct regdb_domain *d, unsigned int idx)
{
	const struct regdb_rule *r = &d->rules[idx];
	uint32_t bw = r->flags & REGDB_AUTO_BW ? auto_bw_span(d, idx) : r->max_bw_khz;

	if (r->flags & REGDB_NO_320MHZ)
		bw = min_u32(bw, MHZ(160));
	if (r->flags & REGDB_NO_160MHZ)
		bw = min_u32(bw, MHZ(80));
	if (r->flags & REGDB_NO_80MHZ)
		bw = min_u32(bw, MHZ(40));
	if ((r->flags & REGDB_NO_HT40) == REGDB_NO_HT40)
		bw = min_u32(bw, MHZ(20));
	return bw;
}

const char *regdb_deny_str(enum regdb_deny r)
{
	switch (r) {
	case REGDB_OK: return "allowed";
	case REGDB_DENY_NO_RULE: return "no rule covers the channel";
	case REGDB_DENY_WIDTH: return "channel width exceeds the rule's maximum bandwidth";
	case REGDB_DENY_NO_IR: return "NO-IR: no initiating radiation (beacons, probes)";
	case REGDB_DENY_DFS_PASSIVE: return "DFS: only passive scanning, no probe requests";
	case REGDB_DENY_INDOOR_ONLY: return "NO-OUTDOOR: indoor use only";
	case REGDB_DENY_OUTDOOR_ONLY: return "NO-INDOOR: outdoor use only";
	case REGDB_DENY_PTP_ONLY: return "PTP-ONLY: point-to-point links only";
	case REGDB_DENY_PTMP_ONLY: return "PTMP-ONLY: point-to-multipoint links only";
	case REGDB_DENY_NO_OFDM: return "NO-OFDM: OFDM not allowed";
	case REGDB_DENY_NO_CCK: return "NO-CCK: CCK not allowed";
	case REGDB_DENY_POWER: return "tx power exceeds the maximum EIRP";
	}
	return "unknown";
}

static enum regdb_deny flag_denial(uint32_t f, const struct regdb_query *q)
{
	bool initiating = q->frame != REGDB_FRAME_DATA;

	if (initiating && (f & REGDB_NO_IR))
		return REGDB_DENY_NO_IR;
	if (q->frame == REGDB_FRAME_PROBE && (f & REGDB_DFS))
		return REGDB_DENY_DFS_PASSIVE;
	if (q->outdoor && (f & REGDB_NO_OUTDOOR))
		return REGDB_DENY_INDOOR_ONLY;
	if (!q->outdoor && (f & REGDB_NO_INDOOR))
		return REGDB_DENY_OUTDOOR_ONLY;
	if (!q->ptp && (f & REGDB_PTP_ONLY))
		return REGDB_DENY_PTP_ONLY;
	if (q->ptp && (f & REGDB_PTMP_ONLY))
		return REGDB_DENY_PTMP_ONLY;
	if (!q->cck && (f & REGDB_NO_OFDM))
		return REGDB_DENY_NO_OFDM;
	if (q->cck && (f & REGDB_NO_CCK))
		return REGDB_DENY_NO_CCK;
	return REGDB_OK;
}

/* What the rules under a channel allow, combined over its 20 MHz parts. */
struct span {
	uint32_t flags, max_bw_khz, cac_ms;
	int32_t max_eirp_mbm;
};

static void span_add(struct span *sp, const struct regdb_domain *d, unsigned int idx)
{
	const struct regdb_rule *r = &d->rules[idx];

	sp->flags |= r->flags;
	sp->max_bw_khz = min_u32(sp->max_bw_khz, regdb_rule_max_bw(d, idx));
	if (r->max_eirp_mbm < sp->max_eirp_mbm)
		sp->max_eirp_mbm = r->max_eirp_mbm;
	if ((r->flags & REGDB_DFS) && r->cac_ms > sp->cac_ms)
		sp->cac_ms = r->cac_ms;
}

#define PART MHZ(20)

/* The first rule holding [lo, hi] (freq_reg_info), or -1. */
static int rule_holding(const struct regdb_domain *d, uint32_t lo, uint32_t hi)
{
	for (unsigned int i = 0; i < d->n_rules; i++)
		if (d->rules[i].start_khz <= lo && d->rules[i].end_khz >= hi)
			return (int)i;
	return -1;
}

/*
 * handle_channel_adjacent_rules(): a 20 MHz channel at [lo, lo + 20 MHz] that
 * no rule holds whole is still usable when the rules of the channels 20 MHz
 * below and above touch each other (US 5730-5850 and 5850-5895 MHz make
 * channel 169): it takes both rules' flags, the lower power, the narrower
 * bandwidth.
 */
static bool adjacent_pair(const struct regdb_domain *d, uint32_t lo, unsigned int *claim,
			  unsigned int *n_claim)
{
	int r1 = lo >= PART ? rule_holding(d, lo - PART, lo) : -1;
	int r2 = r1 < 0 ? -1 : rule_holding(d, lo + PART, lo + 2 * PART);

	if (r2 < 0 || d->rules[r1].end_khz != d->rules[r2].start_khz)
		return false;
	claim[(*n_claim)++] = (unsigned int)r1;
	claim[(*n_claim)++] = (unsigned int)r2;
	return true;
}

/* The parts of [lo, lo + n * PART] that rule r holds whole, as mask bits. */
static uint32_t parts_held(const struct regdb_rule *r, uint32_t lo, uint32_t n)
{
	uint32_t hi = lo + n * PART;

	if (r->end_khz <= lo || r->start_khz >= hi)
		return 0;
	uint32_t first = r->start_khz <= lo ? 0 : (r->start_khz - lo + PART - 1) / PART;
	uint32_t end = r->end_khz >= hi ? n : (r->end_khz - lo) / PART;

	if (first >= end)
		return 0;
	return (end - first == 32 ? ~0u : (1u << (end - first)) - 1) << first;
}

/*
 * cfg80211 checks a wide channel per 20 MHz channel: each takes the flags,
 * power and (AUTO-BW widened) bandwidth of the first rule it fits in, or of
 * an adjacent pair (above), and the wide channel is usable only if every
 * part is covered and allows the width. So an 80/160 MHz channel may span
 * adjacent rules. Parts are bits of a mask; rules are visited once, in
 * order, each claiming the parts it holds that no earlier rule claimed.
 * Channels under 20 MHz, 60 GHz channels and odd widths are one part.
 */
static bool covered(const struct regdb_domain *d, uint32_t lo, uint32_t hi, struct span *sp)
{
	uint32_t width = hi - lo, n = width / PART;
	unsigned int claim[96], n_claim = 0;

	if (width <= PART || width >= MHZ(2160) || n > 32 || n * PART != width) {
		int i = rule_holding(d, lo, hi);

		if (i >= 0)
			span_add(sp, d, (unsigned int)i);
		if (i >= 0 || width != PART)
			return i >= 0;
	}
	uint32_t todo = n == 32 ? ~0u : (1u << n) - 1;

	/* Coverage first: a channel no rules cover costs no bandwidth sums. */
	for (unsigned int i = 0; i < d->n_rules && todo; i++) {
		uint32_t mine = todo & parts_held(&d->rules[i], lo, n);

		if (mine) {
			todo &= ~mine;
			claim[n_claim++] = i;
		}
	}
	for (uint32_t k = 0; todo; k++, todo >>= 1)
		if ((todo & 1) && !adjacent_pair(d, lo + k * PART, claim, &n_claim))
			return false;
	for (unsigned int k = 0; k < n_claim; k++)
		span_add(sp, d, claim[k]);
	return true;
}

void regdb_verdict(const struct regdb_domain *d, const struct regdb_query *q,
		   struct regdb_verdict *v)
{
	uint32_t lo = q->center_khz - q->width_khz / 2, hi = lo + q->width_khz;
	struct span sp = { .max_bw_khz = UINT32_MAX, .max_eirp_mbm = INT32_MAX };

	*v = (struct regdb_verdict){ .reason = REGDB_DENY_NO_RULE };
	if (!q->width_khz || q->width_khz / 2 > q->center_khz || !covered(d, lo, hi, &sp))
		return;
	v->max_bw_khz = sp.max_bw_khz;
	v->max_eirp_mbm = sp.max_eirp_mbm;
	if (q->width_khz > sp.max_bw_khz) {
		v->reason = REGDB_DENY_WIDTH;
		return;
	}
	v->reason = flag_denial(sp.flags, q);
	if (v->reason == REGDB_OK && q->check_power && q->tx_power_mbm > sp.max_eirp_mbm)
		v->reason = REGDB_DENY_POWER;
	v->needs_cac = (sp.flags & REGDB_DFS) && q->frame == REGDB_FRAME_BEACON;
	v->cac_ms = v->needs_cac ? (sp.cac_ms ? sp.cac_ms : DEFAULT_CAC_MS) : 0;
}
