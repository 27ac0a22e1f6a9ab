// SPDX-License-Identifier: GPL-2.0
/* 802.11d Country element: built from a domain's 20 MHz channels, parsed strictly. */
#include "regdb/internal.h"
#include "regdb/regdb.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct band {
	unsigned int first, last, step, base_mhz;
};

static const struct band bands[] = {
	{ 1, 13, 1, 2407 },
	{ 14, 14, 1, 2414 }, /* 2484 MHz is not on the 5 MHz grid */
	{ 36, 177, 4, 5000 },
};


/* Max EIRP in dBm of the rule holding the 20 MHz channel, or INT32_MIN. */
static int32_t chan_power(const struct regdb_domain *d, uint32_t center_mhz)
{
	uint32_t lo = (center_mhz - 10) * 1000, hi = (center_mhz + 10) * 1000;

	for (unsigned int i = 0; i < d->n_rules; i++)
		if (lo >= d->rules[i].start_khz && hi <= d->rules[i].end_khz)
			return d->rules[i].max_eirp_mbm / 100;
	return INT32_MIN;
}

int regdb_country_ie_build(const struct regdb_domain *d, char env, uint8_t *buf, size_t size)
{
	size_t len = 5;

	if (size < 5)
		return -1;
	buf[0] = REGDB_EID_COUNTRY;
	buf[2] = (uint8_t)d->alpha2[0];
	buf[3] = (uint8_t)d->alpha2[1];
	buf[4] = (uint8_t)env;
	for (size_t b = 0; b < sizeof(bands) / sizeof(bands[0]); b++) {
		uint8_t *open = NULL;

		for (unsigned int ch = bands[b].first; ch <= bands[b].last; ch += bands[b].step) {
			int32_t p = chan_power(d, bands[b].base_mhz + 5 * ch);

			if (p == INT32_MIN) {
				open = NULL;
				continue;
			}
			if (p > 127)
				p = 127;
			if (open && open[2] == (uint8_t)(int8_t)p) {
				open[1]++;
				continue;
			}
			if (len + 3 > size || len + 3 > 257)
				return -1;
			open = buf + len;
			open[0] = (uint8_t)ch;
			open[1] = 1;
			open[2] = (uint8_t)(int8_t)p;
			len += 3;
		}
	}
	if ((len - 2) % 2) { /* the element's length is kept even */
		if (len + 1 > size || len + 1 > 257)
			return -1;
		buf[len++] = 0;
	}
	buf[1] = (uint8_t)(len - 2);
	return (int)len;
}

static unsigned int last_chan(const struct regdb_country_triplet *t)
{
	unsigned int step = t->first_chan <= 14 ? 1 : 4;

	return t->first_chan + step * (t->n_chans - 1u);
}

static int check_subband(const struct regdb_country_triplet *t, unsigned int prev_last,
			 struct regdb_error *err)
{
	if (!t->n_chans)
		return regdb_fail(err, "country IE: triplet at channel %u has no channels",
			       t->first_chan);
	if (t->first_chan <= 14 && last_chan(t) > 14)
		return regdb_fail(err, "country IE: 2.4 GHz triplet %u+%u runs past channel 14",
			       t->first_chan, t->n_chans);
	if (t->first_chan > 14 && last_chan(t) > 200)
		return regdb_fail(err, "country IE: triplet %u+%u runs past channel 200",
			       t->first_chan, t->n_chans);
	if (prev_last && t->first_chan <= prev_last)
		return regdb_fail(err, "country IE: triplet at channel %u overlaps or is out of order",
			       t->first_chan);
	return 0;
}

static bool valid_env(char e)
{
	return e == ' ' || e == 'I' || e == 'O' || e == 'X';
}

int regdb_country_ie_parse(const uint8_t *ie, size_t len, struct regdb_country_ie *out,
			   struct regdb_error *err)
{
	if (len < 2 || ie[0] != REGDB_EID_COUNTRY)
		return regdb_fail(err, "country IE: not element ID 7");
	if ((size_t)ie[1] + 2 != len)
		return regdb_fail(err, "country IE: length %u but %zu bytes given", ie[1], len - 2);
	const uint8_t *b = ie + 2;
	size_t n = ie[1];

	if (n < 3)
		return regdb_fail(err, "country IE: too short (%zu bytes) for a country string", n);
	if (b[0] < 'A' || b[0] > 'Z' || b[1] < 'A' || b[1] > 'Z')
		return regdb_fail(err, "country IE: bad country code 0x%02x%02x", b[0], b[1]);
	if (!valid_env((char)b[2]))
		return regdb_fail(err, "country IE: bad environment 0x%02x", b[2]);
	size_t rest = n - 3;

	if (rest % 3 == 1 && b[n - 1] == 0)
		rest--; /* pad byte */
	if (rest % 3)
		return regdb_fail(err, "country IE: %zu trailing bytes are not whole triplets", rest);
	memset(out, 0, sizeof(*out));
	out->alpha2[0] = (char)b[0];
	out->alpha2[1] = (char)b[1];
	out->env = (char)b[2];
	unsigned int prev_last = 0;

	for (size_t off = 3; off < 3 + rest; off += 3) {
		struct regdb_country_triplet *t = &out->t[out->n];

		if (out->n == REGDB_IE_MAX_TRIPLETS)
			return regdb_fail(err, "country IE: too many triplets");
		t->first_chan = b[off];
		t->n_chans = b[off + 1];
		t->max_power_dbm = (int8_t)b[off + 2];
		out->n++;
		if (t->first_chan >= 201) {
			prev_last = 0; /* an operating triplet starts a new class */
			continue;
		}
		if (check_subband(t, prev_last, err))
			return -1;
		prev_last = last_chan(t);
	}
	return 0;
}
