// SPDX-License-Identifier: GPL-2.0
/*
 * Reader of the binary regulatory.db, format version 20 (the layout Linux's
 * net/wireless/reg.c reads): big-endian header {magic "RGDB", version},
 * a country index of {alpha2[2], be16 collection pointer} ended by a zero
 * pointer, collections {len, n_rules, dfs_region, pad to 2, be16 rule
 * pointers}, rules {len, flags, be16 eirp, be32 start, end, max_bw,
 * [be16 cac seconds, [be16 wmm pointer]]} (length 16, 18 or 20, each padded
 * to 4) and 32-byte WMM rules.
 * Pointers count 4-byte units. Every offset is checked against the size.
 */
#include "regdb/internal.h"
#include "regdb/regdb.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FWDB_MAGIC 0x52474442u
#define FWDB_VERSION 20u
#define FWDB_HDR_LEN 8u
#define FWDB_RULE_LEN 16u
#define FWDB_RULE_CAC_LEN 18u /* + be16 CAC seconds: what db2fw.py writes for a CAC without WMM */
#define FWDB_RULE_EXT_LEN 20u
#define FWDB_WMM_LEN 32u

enum {
	FWDB_NO_OFDM = 1 << 0,
	FWDB_NO_OUTDOOR = 1 << 1,
	FWDB_DFS = 1 << 2,
	FWDB_NO_IR = 1 << 3,
	FWDB_AUTO_BW = 1 << 4,
	FWDB_ALL = 0x1f,
};

struct regdb_db {
	size_t n;
	struct regdb_domain **domains;
};

struct reader {
	const uint8_t *p;
	size_t len;
	size_t index_end; /* first byte after the index terminator */
	struct regdb_error *err;
};


static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The size-checked view of `need` bytes at `off`, or NULL. */
static const uint8_t *at(const struct reader *r, size_t off, size_t need)
{
	if (off > r->len || need > r->len - off)
		return NULL;
	return r->p + off;
}

static int ecw_to_cw(unsigned int ecw)
{
	return (1 << ecw) - 1;
}

static int read_wmm(const struct reader *r, const char *cc, uint16_t ptr, struct regdb_wmm *w)
{
	size_t off = (size_t)ptr << 2;
	const uint8_t *p = at(r, off, FWDB_WMM_LEN);

	if (!p)
		return regdb_fail(r->err, "country %s: WMM rule at 0x%zx beyond end of file (%zu bytes)",
			    cc, off, r->len);
	for (int i = 0; i < 8; i++, p += 4) {
		struct regdb_wmm_ac *ac = i < 4 ? &w->client[i] : &w->ap[i - 4];

		ac->cw_min = (uint16_t)ecw_to_cw(p[0] >> 4);
		ac->cw_max = (uint16_t)ecw_to_cw(p[0] & 0xf);
		ac->aifsn = p[1];
		ac->cot_ms = be16(p + 2);
		/* CW 0 (ECW 0) is refused as by the db.txt parser (1 to 32767) */
		if (!ac->cw_min || ac->cw_min >= ac->cw_max || ac->aifsn < 1)
			return regdb_fail(r->err, "country %s: invalid WMM rule at 0x%zx", cc, off);
	}
	return 0;
}

static uint32_t map_flags(uint8_t f)
{
	uint32_t out = 0;

	out |= f & FWDB_NO_OFDM ? REGDB_NO_OFDM : 0;
	out |= f & FWDB_NO_OUTDOOR ? REGDB_NO_OUTDOOR : 0;
	out |= f & FWDB_DFS ? REGDB_DFS : 0;
	out |= f & FWDB_NO_IR ? REGDB_NO_IR : 0;
	out |= f & FWDB_AUTO_BW ? REGDB_AUTO_BW : 0;
	return out;
}

static int read_rule(const struct reader *r, const char *cc, uint16_t ptr, struct regdb_rule *rule)
{
	size_t off = (size_t)ptr << 2;
	const uint8_t *p = at(r, off, 1);

	if (!p || off < r->index_end)
		return regdb_fail(r->err, "country %s: rule pointer 0x%zx outside the data area (file %zu bytes)",
			    cc, off, r->len);
	if (p[0] != FWDB_RULE_LEN && p[0] != FWDB_RULE_CAC_LEN && p[0] != FWDB_RULE_EXT_LEN)
		return regdb_fail(r->err, "country %s: rule at 0x%zx has length %u (want 16, 18 or 20)",
				  cc, off, p[0]);
	p = at(r, off, p[0]);
	if (!p)
		return regdb_fail(r->err, "country %s: rule at 0x%zx truncated", cc, off);
	if (p[1] & ~FWDB_ALL)
		return regdb_fail(r->err, "country %s: rule at 0x%zx has unknown flags 0x%02x", cc, off,
			    p[1]);
	rule->flags = map_flags(p[1]);
	rule->max_eirp_mbm = be16(p + 2);
	rule->start_khz = be32(p + 4);
	rule->end_khz = be32(p + 8);
	rule->max_bw_khz = be32(p + 12);
	const char *why = regdb_rule_range_invalid(rule);

	if (why)
		return regdb_fail(r->err, "country %s: rule at 0x%zx (%u-%u @ %u kHz): %s", cc, off,
				  rule->start_khz, rule->end_khz, rule->max_bw_khz, why);
	if (p[0] < FWDB_RULE_CAC_LEN)
		return 0;
	/* A CAC time means something only on a DFS rule (cfg80211 uses it
	 * for DFS channels alone; db.txt refuses it elsewhere): the model
	 * keeps none, so both formats read to the same database. */
	rule->cac_ms = rule->flags & REGDB_DFS ? 1000u * be16(p + 16) : 0;
	if (p[0] < FWDB_RULE_EXT_LEN)
		return 0;
	rule->has_wmm = true;
	return read_wmm(r, cc, be16(p + 18), &rule->wmm);
}

static int qsort_rule(const void *a, const void *b)
{
	return regdb_rule_cmp(a, b);
}

/* A domain's rules in db2fw.py's order, as the db.txt parser keeps them:
 * the file's order carries no meaning, but AUTO-BW's walk over touching
 * rules (verdict.c, like cfg80211's) needs them sorted, and a database
 * must be the same whichever format it came from. -1 on a duplicate
 * (db.txt refuses those too). */
static int sort_rules(struct regdb_domain *d)
{
	if (d->n_rules > 1)
		qsort(d->rules, d->n_rules, sizeof(d->rules[0]), qsort_rule);
	for (unsigned int i = 1; i < d->n_rules; i++)
		if (!regdb_rule_cmp(&d->rules[i - 1], &d->rules[i]))
			return -1;
	return 0;
}

static int read_collection(const struct reader *r, const uint8_t *entry,
			   struct regdb_domain **out)
{
	char cc[3] = { (char)entry[0], (char)entry[1], 0 };
	size_t off = (size_t)be16(entry + 2) << 2;
	const uint8_t *c = at(r, off, 3);

	if (!c || off < r->index_end)
		return regdb_fail(r->err, "country %s: collection pointer 0x%zx outside the data area (file %zu bytes)",
			    cc, off, r->len);
	if (c[0] < 3)
		return regdb_fail(r->err, "country %s: collection header length %u < 3", cc, c[0]);
	if (c[2] > REGDB_DFS_JP)
		return regdb_fail(r->err, "country %s: unknown DFS region %u", cc, c[2]);
	size_t ptrs = off + ((c[0] + 1u) & ~1u);
	const uint8_t *rp = at(r, ptrs, (size_t)c[1] * 2);

	if (!rp)
		return regdb_fail(r->err, "country %s: %u rule pointers run past end of file", cc, c[1]);
	struct regdb_domain *d = regdb_domain_new(cc, c[2], c[1]);

	if (!d)
		return regdb_fail(r->err, "out of memory");
	for (unsigned int i = 0; i < c[1]; i++) {
		if (read_rule(r, cc, be16(rp + 2 * i), &d->rules[i])) {
			free(d);
			return -1;
		}
	}
	if (sort_rules(d) < 0) {
		free(d);
		return regdb_fail(r->err, "country %s: the same rule twice", cc);
	}
	*out = d;
	return 0;
}

static bool valid_alpha2(const uint8_t *a)
{
	bool upper = a[0] >= 'A' && a[0] <= 'Z' && a[1] >= 'A' && a[1] <= 'Z';

	return upper || (a[0] == '0' && a[1] == '0');
}

/* Count the index entries and check they are well-formed and sorted. */
static int scan_index(struct reader *r, size_t *count)
{
	size_t off = FWDB_HDR_LEN, n = 0;

	for (;; off += 4, n++) {
		const uint8_t *e = at(r, off, 4);

		if (!e)
			return regdb_fail(r->err, "country index runs past end of file (%zu bytes, no terminator)",
				    r->len);
		if (!be16(e + 2))
			break;
		if (!valid_alpha2(e))
			return regdb_fail(r->err, "country index entry %zu: invalid alpha2 0x%02x%02x", n,
				    e[0], e[1]);
		if (n && memcmp(e - 4, e, 2) >= 0)
			return regdb_fail(r->err, "country index not sorted: %c%c after %c%c", e[0], e[1],
				    e[-4], e[-3]);
	}
	r->index_end = off + 4;
	*count = n;
	return 0;
}

void regdb_db_free(struct regdb_db *db)
{
	if (!db)
		return;
	for (size_t i = 0; i < db->n; i++)
		free(db->domains[i]);
	free(db->domains);
	free(db);
}

int regdb_db_parse(const void *buf, size_t len, struct regdb_db **out, struct regdb_error *err)
{
	struct reader r = { .p = buf, .len = len, .err = err };
	size_t n = 0;

	if (len < FWDB_HDR_LEN)
		return regdb_fail(err, "file too short for a header (%zu bytes)", len);
	if (be32(r.p) != FWDB_MAGIC)
		return regdb_fail(err, "bad magic 0x%08x (not a regulatory.db)", be32(r.p));
	if (be32(r.p + 4) != FWDB_VERSION)
		return regdb_fail(err, "unsupported format version %u (want %u)", be32(r.p + 4),
			    FWDB_VERSION);
	if (scan_index(&r, &n))
		return -1;
	struct regdb_db *db = calloc(1, sizeof(*db));

	if (!db || !(db->domains = calloc(n ? n : 1, sizeof(*db->domains)))) {
		free(db);
		return regdb_fail(err, "out of memory");
	}
	for (size_t i = 0; i < n; i++, db->n++) {
		if (read_collection(&r, r.p + FWDB_HDR_LEN + 4 * i, &db->domains[i])) {
			regdb_db_free(db);
			return -1;
		}
	}
	*out = db;
	return 0;
}

int regdb_read_file(const char *path, uint8_t **out, size_t *out_len, struct regdb_error *err)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f)
		return regdb_fail(err, "%s: %s", path, strerror(errno));
	for (;;) {
		if (len == cap) {
			if (cap >= (64u << 20)) {
				fclose(f);
				free(buf);
				return regdb_fail(err, "%s: file larger than 64 MiB", path);
			}
			cap = cap ? 2 * cap : 16384;
			uint8_t *nb = realloc(buf, cap);

			if (!nb) {
				fclose(f);
				free(buf);
				return regdb_fail(err, "out of memory");
			}
			buf = nb;
		}
		size_t got = fread(buf + len, 1, cap - len, f);

		len += got;
		if (got == 0)
			break;
	}
	int bad = ferror(f);

	fclose(f);
	if (bad) {
		free(buf);
		return regdb_fail(err, "%s: read error", path);
	}
	*out = buf;
	*out_len = len;
	return 0;
}

int regdb_db_load(const char *path, struct regdb_db **out, struct regdb_error *err)
{
	uint8_t *buf;
	size_t len;

	if (regdb_read_file(path, &buf, &len, err))
		return -1;
	int rc = regdb_db_parse(buf, len, out, err);

	free(buf);
	if (rc && err) {
		char tmp[sizeof(err->msg)];

		memcpy(tmp, err->msg, sizeof(tmp));
		tmp[sizeof(tmp) - 1] = '\0';
		regdb_fail(err, "%.80s: %.160s", path, tmp);
	}
	return rc;
}

size_t regdb_db_count(const struct regdb_db *db)
{
	return db->n;
}

const struct regdb_domain *regdb_db_domain(const struct regdb_db *db, size_t i)
{
	return i < db->n ? db->domains[i] : NULL;
}

const struct regdb_domain *regdb_db_find(const struct regdb_db *db, const char *alpha2)
{
	size_t lo = 0, hi = db->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = memcmp(db->domains[mid]->alpha2, alpha2, 2);

		if (!c)
			return db->domains[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

struct regdb_db *regdb_db_new(struct regdb_domain **domains, size_t n, struct regdb_error *err)
{
	struct regdb_db *db = calloc(1, sizeof(*db));

	for (size_t i = 1; db && i < n; i++) {
		if (memcmp(domains[i - 1]->alpha2, domains[i]->alpha2, 2) >= 0) {
			regdb_fail(err, "domains not sorted: %s after %s", domains[i]->alpha2,
			     domains[i - 1]->alpha2);
			free(db);
			db = NULL;
		}
	}
	if (!db) {
		for (size_t i = 0; i < n; i++)
			free(domains[i]);
		free(domains);
		if (err && !err->msg[0])
			regdb_fail(err, "out of memory");
		return NULL;
	}
	db->domains = domains;
	db->n = n;
	return db;
}

bool regdb_db_equal(const struct regdb_db *a, const struct regdb_db *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (!regdb_domain_equal(a->domains[i], b->domains[i]))
			return false;
	return true;
}
