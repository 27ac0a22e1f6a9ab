// SPDX-License-Identifier: GPL-2.0
/* regdb model: the one flag-name table, region names, domain helpers. */
#include "regdb/internal.h"
#include "regdb/regdb.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	uint32_t bits;
} flag_names[] = {
	{ "NO-OFDM", REGDB_NO_OFDM },	  { "NO-CCK", REGDB_NO_CCK },
	{ "NO-INDOOR", REGDB_NO_INDOOR }, { "NO-OUTDOOR", REGDB_NO_OUTDOOR },
	{ "DFS", REGDB_DFS },		  { "PTP-ONLY", REGDB_PTP_ONLY },
	{ "PTMP-ONLY", REGDB_PTMP_ONLY }, { "NO-IR", REGDB_NO_IR },
	{ "AUTO-BW", REGDB_AUTO_BW },	  { "NO-HT40", REGDB_NO_HT40 },
	{ "NO-HT40MINUS", REGDB_NO_HT40MINUS }, { "NO-HT40PLUS", REGDB_NO_HT40PLUS },
	{ "NO-80MHZ", REGDB_NO_80MHZ },	  { "NO-160MHZ", REGDB_NO_160MHZ },
	{ "NO-320MHZ", REGDB_NO_320MHZ },
};

const char *regdb_dfs_name(enum regdb_dfs_region r)
{
	static const char *const names[] = { "UNSET", "FCC", "ETSI", "JP" };

	return (unsigned int)r < 4 ? names[r] : "INVALID";
}

char *regdb_flags_str(uint32_t flags, const char *sep, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++) {
		uint32_t b = flag_names[i].bits;

		if ((flags & b) != b)
			continue;
		flags &= ~b;
		int n = snprintf(buf + used, size - used, "%s%s", used ? sep : "",
				 flag_names[i].name);
		if (n < 0 || (size_t)n >= size - used)
			break;
		used += (size_t)n;
	}
	if (!used)
		snprintf(buf, size, "-");
	return buf;
}

uint32_t regdb_flag_from_name(const char *name)
{
	for (size_t i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++)
		if (!strcmp(flag_names[i].name, name))
			return flag_names[i].bits;
	return 0;
}

struct regdb_domain *regdb_domain_new(const char *alpha2, enum regdb_dfs_region dfs,
				      unsigned int n_rules)
{
	struct regdb_domain *d =
		calloc(1, sizeof(*d) + (size_t)n_rules * sizeof(struct regdb_rule));

	if (!d)
		return NULL;
	memcpy(d->alpha2, alpha2, 2);
	d->dfs_region = dfs;
	d->n_rules = n_rules;
	return d;
}

static int cmp_u32(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_ac(const struct regdb_wmm_ac *a, const struct regdb_wmm_ac *b)
{
	int c = cmp_u32(a->cw_min, b->cw_min);

	if (!c)
		c = cmp_u32(a->cw_max, b->cw_max);
	if (!c)
		c = cmp_u32(a->aifsn, b->aifsn);
	if (!c)
		c = cmp_u32(a->cot_ms, b->cot_ms);
	return c;
}

int regdb_wmm_cmp(const struct regdb_wmm *a, const struct regdb_wmm *b)
{
	int c = 0;

	for (int i = 0; i < 4 && !c; i++)
		c = cmp_ac(&a->client[i], &b->client[i]);
	for (int i = 0; i < 4 && !c; i++)
		c = cmp_ac(&a->ap[i], &b->ap[i]);
	return c;
}

int regdb_rule_cmp(const struct regdb_rule *a, const struct regdb_rule *b)
{
	const uint32_t ka[] = { a->start_khz, a->end_khz, a->max_bw_khz };
	const uint32_t kb[] = { b->start_khz, b->end_khz, b->max_bw_khz };

	for (int i = 0; i < 3; i++)
		if (ka[i] != kb[i])
			return cmp_u32(ka[i], kb[i]);
	if (a->max_ant_gain_mbi != b->max_ant_gain_mbi)
		return a->max_ant_gain_mbi < b->max_ant_gain_mbi ? -1 : 1;
	if (a->max_eirp_mbm != b->max_eirp_mbm)
		return a->max_eirp_mbm < b->max_eirp_mbm ? -1 : 1;
	if (a->flags != b->flags)
		return cmp_u32(a->flags, b->flags);
	if (a->cac_ms != b->cac_ms)
		return cmp_u32(a->cac_ms, b->cac_ms);
	if (a->has_wmm != b->has_wmm)
		return a->has_wmm ? 1 : -1;
	return a->has_wmm ? regdb_wmm_cmp(&a->wmm, &b->wmm) : 0;
}

const char *regdb_rule_range_invalid(const struct regdb_rule *r)
{
	if (!r->start_khz)
		return "start frequency must be above 0";
	if (r->start_khz >= r->end_khz)
		return "start frequency not below end frequency";
	if (!r->max_bw_khz)
		return "bandwidth must be above 0";
	return NULL;
}

static bool rule_equal(const struct regdb_rule *a, const struct regdb_rule *b)
{
	if (a->start_khz != b->start_khz || a->end_khz != b->end_khz ||
	    a->max_bw_khz != b->max_bw_khz || a->max_ant_gain_mbi != b->max_ant_gain_mbi ||
	    a->max_eirp_mbm != b->max_eirp_mbm || a->cac_ms != b->cac_ms ||
	    a->flags != b->flags || a->has_wmm != b->has_wmm)
		return false;
	return !a->has_wmm || !memcmp(&a->wmm, &b->wmm, sizeof(a->wmm));
}

bool regdb_domain_equal(const struct regdb_domain *a, const struct regdb_domain *b)
{
	if (memcmp(a->alpha2, b->alpha2, 2) || a->dfs_region != b->dfs_region ||
	    a->n_rules != b->n_rules)
		return false;
	for (unsigned int i = 0; i < a->n_rules; i++)
		if (!rule_equal(&a->rules[i], &b->rules[i]))
			return false;
	return true;
}

struct regdb_domain *regdb_domain_dup(const struct regdb_domain *d)
{
	size_t size = sizeof(*d) + (size_t)d->n_rules * sizeof(struct regdb_rule);
	struct regdb_domain *c = malloc(size);

	if (c)
		memcpy(c, d, size);
	return c;
}

int regdb_fail(struct regdb_error *err, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return -1;
}
