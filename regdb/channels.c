// SPDX-License-Identifier: GPL-2.0
/* 802.11 channel numbering for 2.4, 5, 6 and 60 GHz, and per-domain channel lists. */
#include "regdb/regdb.h"

uint32_t regdb_channel_khz(enum regdb_band band, unsigned int n)
{
	switch (band) {
	case REGDB_BAND_2GHZ:
		if (n == 14)
			return 2484000;
		return n >= 1 && n <= 13 ? (2407 + 5 * n) * 1000 : 0;
	case REGDB_BAND_5GHZ:
		return n >= 32 && n <= 177 ? (5000 + 5 * n) * 1000 : 0;
	case REGDB_BAND_6GHZ:
		if (n == 2)
			return 5935000;
		return n >= 1 && n <= 233 && n % 4 == 1 ? (5950 + 5 * n) * 1000 : 0;
	case REGDB_BAND_60GHZ:
		return n >= 1 && n <= 6 ? (56160 + 2160 * n) * 1000 : 0;
	}
	return 0;
}

/* 20 MHz channel numbers of a band in ascending order; 0 ends the walk. */
static unsigned int next_number(enum regdb_band band, unsigned int n)
{
	switch (band) {
	case REGDB_BAND_2GHZ:
		return n < 14 ? n + 1 : 0;
	case REGDB_BAND_5GHZ:
		if (!n)
			return 32;
		if (n == 144)
			return 149;
		return n + 4 <= 177 ? n + 4 : 0;
	case REGDB_BAND_6GHZ:
		if (!n)
			return 1;
		if (n == 1)
			return 2;
		if (n == 2)
			return 5;
		return n + 4 <= 233 ? n + 4 : 0;
	case REGDB_BAND_60GHZ:
		return n < 6 ? n + 1 : 0;
	}
	return 0;
}

size_t regdb_channels(const struct regdb_domain *d, enum regdb_band band,
		      struct regdb_channel *out, size_t max)
{
	uint32_t width = band == REGDB_BAND_60GHZ ? 2160000 : 20000;
	size_t count = 0;

	for (unsigned int n = next_number(band, 0); n; n = next_number(band, n)) {
		uint32_t c = regdb_channel_khz(band, n);

		for (unsigned int i = 0; i < d->n_rules; i++) {
			const struct regdb_rule *r = &d->rules[i];

			if (c - width / 2 < r->start_khz || c + width / 2 > r->end_khz ||
			    r->max_bw_khz < width)
				continue;
			if (count < max)
				out[count] = (struct regdb_channel){
					.band = band, .number = (uint16_t)n, .center_khz = c,
					.width_khz = width, .max_eirp_mbm = r->max_eirp_mbm,
					.max_bw_khz = regdb_rule_max_bw(d, i), .flags = r->flags,
				};
			count++;
			break;
		}
	}
	return count;
}
