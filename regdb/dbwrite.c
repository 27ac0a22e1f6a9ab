// SPDX-License-Identifier: GPL-2.0
/*
 * Writer of regulatory.db v20 with the layout of wireless-regdb's db2fw.py,
 * so that compiling the db.txt a packaged file was built from gives the same
 * bytes: header, country index sorted by alpha2 (pointers filled in later),
 * a zero terminator, the distinct WMM rules, the distinct rules (16 bytes,
 * 18 with a CAC time, 20 with a WMM pointer; each padded to 4) and the
 * distinct (rules, DFS region) collections; WMM rules, rules and collections
 * each sorted in Python's tuple order. Pointers count 4-byte units.
 */
#include "regdb/internal.h"
#include "regdb/regdb.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HDR_LEN 8u
#define WMM_LEN 32u
#define MAX_PTR_BYTES (0xffffu << 2)
#define STORABLE_FLAGS (REGDB_NO_OFDM | REGDB_NO_OUTDOOR | REGDB_DFS | REGDB_NO_IR | REGDB_AUTO_BW)

static int cmp_u32(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

static int qsort_rule(const void *a, const void *b)
{
	return regdb_rule_cmp(*(const struct regdb_rule *const *)a,
			      *(const struct regdb_rule *const *)b);
}

static int qsort_wmm(const void *a, const void *b)
{
	return regdb_wmm_cmp(*(const struct regdb_wmm *const *)a,
			     *(const struct regdb_wmm *const *)b);
}

/* Collections compare like Python's (tuple of rules, dfs_region). */
static int collection_cmp(const struct regdb_domain *a, const struct regdb_domain *b)
{
	for (unsigned int i = 0; i < a->n_rules && i < b->n_rules; i++) {
		int c = regdb_rule_cmp(&a->rules[i], &b->rules[i]);

		if (c)
			return c;
	}
	if (a->n_rules != b->n_rules)
		return cmp_u32(a->n_rules, b->n_rules);
	return cmp_u32(a->dfs_region, b->dfs_region);
}

static int qsort_collection(const void *a, const void *b)
{
	return collection_cmp(*(const struct regdb_domain *const *)a,
			      *(const struct regdb_domain *const *)b);
}

/* Sort n pointers and drop repeats; returns the count left. */
static size_t sort_unique(const void **v, size_t n, int (*cmp)(const void *, const void *))
{
	size_t out = 0;

	qsort(v, n, sizeof(*v), cmp);
	for (size_t i = 0; i < n; i++)
		if (!out || cmp(&v[out - 1], &v[i]))
			v[out++] = v[i];
	return out;
}

/* Index of key in the sorted unique v (it is always there). */
static size_t find(const void **v, size_t n, const void *key,
		   int (*cmp)(const void *, const void *))
{
	size_t lo = 0, hi = n;

	while (lo + 1 < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp(&key, &v[mid]) < 0)
			hi = mid;
		else
			lo = mid;
	}
	return lo;
}

static int ecw(uint16_t cw)
{
	for (int e = 0; e < 16; e++)
		if ((1u << e) - 1 == cw)
			return e;
	return -1;
}

static int check_wmm(const char *cc, unsigned int i, const struct regdb_wmm *w,
		     struct regdb_error *err)
{
	for (int k = 0; k < 8; k++) {
		const struct regdb_wmm_ac *ac = k < 4 ? &w->client[k] : &w->ap[k - 4];

		if (ecw(ac->cw_min) < 0 || ecw(ac->cw_max) < 0 || ac->cw_min >= ac->cw_max ||
		    ac->aifsn < 1)
			return regdb_fail(err, "country %s rule %u: WMM values cannot be stored", cc,
					  i + 1);
	}
	return 0;
}

static int check_rule(const char *cc, unsigned int i, const struct regdb_rule *r,
		      struct regdb_error *err)
{
	char names[128];

	if (r->flags & ~STORABLE_FLAGS)
		return regdb_fail(err, "country %s rule %u: flag %s cannot be stored in regulatory.db",
				  cc, i + 1,
				  regdb_flags_str(r->flags & ~STORABLE_FLAGS, ",", names, sizeof(names)));
	if (r->max_ant_gain_mbi)
		return regdb_fail(err, "country %s rule %u: regulatory.db has no antenna gain field",
				  cc, i + 1);
	if (r->max_eirp_mbm < 0 || r->max_eirp_mbm > 0xffff)
		return regdb_fail(err, "country %s rule %u: EIRP %d mBm out of range", cc, i + 1,
				  r->max_eirp_mbm);
	if (r->cac_ms % 1000 || r->cac_ms / 1000 > 0xffff)
		return regdb_fail(err, "country %s rule %u: CAC %u ms is not whole seconds <= 65535",
				  cc, i + 1, r->cac_ms);
	if (regdb_rule_range_invalid(r))
		return regdb_fail(err, "country %s rule %u: %s", cc, i + 1, regdb_rule_range_invalid(r));
	return r->has_wmm ? check_wmm(cc, i, &r->wmm, err) : 0;
}

static unsigned int rule_len(const struct regdb_rule *r)
{
	return r->has_wmm ? 20 : r->cac_ms ? 18 : 16;
}

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

struct layout {
	const void **rules, **wmms, **colls;
	size_t n_rules, n_wmms, n_colls;
	size_t *rule_off, *coll_off;
	size_t wmm_start, len;
};

static void layout_free(struct layout *l)
{
	free(l->rules);
	free(l->wmms);
	free(l->colls);
	free(l->rule_off);
	free(l->coll_off);
}

/* Gather, check, sort and place everything; false when out of memory. */
static int layout_plan(const struct regdb_db *db, struct layout *l, struct regdb_error *err)
{
	size_t n = regdb_db_count(db), total = 0;

	for (size_t i = 0; i < n; i++)
		total += regdb_db_domain(db, i)->n_rules;
	l->rules = calloc(total + 1, sizeof(void *));
	l->wmms = calloc(total + 1, sizeof(void *));
	l->colls = calloc(n + 1, sizeof(void *));
	if (!l->rules || !l->wmms || !l->colls)
		return regdb_fail(err, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const struct regdb_domain *d = regdb_db_domain(db, i);

		l->colls[l->n_colls++] = d;
		for (unsigned int j = 0; j < d->n_rules; j++) {
			if (check_rule(d->alpha2, j, &d->rules[j], err))
				return -1;
			l->rules[l->n_rules++] = &d->rules[j];
			if (d->rules[j].has_wmm)
				l->wmms[l->n_wmms++] = &d->rules[j].wmm;
		}
	}
	l->n_rules = sort_unique(l->rules, l->n_rules, qsort_rule);
	l->n_wmms = sort_unique(l->wmms, l->n_wmms, qsort_wmm);
	l->n_colls = sort_unique(l->colls, l->n_colls, qsort_collection);
	l->rule_off = calloc(l->n_rules + 1, sizeof(size_t));
	l->coll_off = calloc(l->n_colls + 1, sizeof(size_t));
	if (!l->rule_off || !l->coll_off)
		return regdb_fail(err, "out of memory");
	size_t off = HDR_LEN + 4 * n + 4;

	l->wmm_start = off;
	off += WMM_LEN * l->n_wmms;
	for (size_t i = 0; i < l->n_rules; i++) {
		l->rule_off[i] = off;
		off += 20 - (rule_len(l->rules[i]) == 16 ? 4 : 0);
	}
	for (size_t i = 0; i < l->n_colls; i++) {
		const struct regdb_domain *c = l->colls[i];

		l->coll_off[i] = off;
		off += 4 + 2 * (size_t)c->n_rules + (c->n_rules % 2 ? 2 : 0);
		if (c->n_rules > 255)
			return regdb_fail(err, "country %s: %u rules (at most 255)", c->alpha2,
					  c->n_rules);
	}
	if (off > MAX_PTR_BYTES)
		return regdb_fail(err, "database of %zu bytes exceeds the 16-bit pointers' 256 KiB",
				  off);
	l->len = off;
	return 0;
}

static void emit_wmm(uint8_t *p, const struct regdb_wmm *w)
{
	for (int k = 0; k < 8; k++, p += 4) {
		const struct regdb_wmm_ac *ac = k < 4 ? &w->client[k] : &w->ap[k - 4];

		p[0] = (uint8_t)(ecw(ac->cw_min) << 4 | ecw(ac->cw_max));
		p[1] = ac->aifsn;
		put16(p + 2, ac->cot_ms);
	}
}

static uint8_t fwdb_flags(uint32_t f)
{
	return (uint8_t)((f & REGDB_NO_OFDM ? 1 : 0) | (f & REGDB_NO_OUTDOOR ? 2 : 0) |
			 (f & REGDB_DFS ? 4 : 0) | (f & REGDB_NO_IR ? 8 : 0) |
			 (f & REGDB_AUTO_BW ? 16 : 0));
}

static void emit_rule(uint8_t *p, const struct regdb_rule *r, const struct layout *l)
{
	unsigned int len = rule_len(r);

	p[0] = (uint8_t)len;
	p[1] = fwdb_flags(r->flags);
	put16(p + 2, (uint32_t)r->max_eirp_mbm);
	put32(p + 4, r->start_khz);
	put32(p + 8, r->end_khz);
	put32(p + 12, r->max_bw_khz);
	if (len > 16)
		put16(p + 16, r->cac_ms / 1000);
	if (len > 18) {
		const void *w = &r->wmm;
		size_t i = find(l->wmms, l->n_wmms, w, qsort_wmm);

		put16(p + 18, (uint32_t)((l->wmm_start + WMM_LEN * i) >> 2));
	}
}

static void emit(const struct regdb_db *db, const struct layout *l, uint8_t *b)
{
	put32(b, 0x52474442u); /* "RGDB" */
	put32(b + 4, 20);
	for (size_t i = 0; i < regdb_db_count(db); i++) {
		const void *d = regdb_db_domain(db, i);
		size_t c = find(l->colls, l->n_colls, d, qsort_collection);

		memcpy(b + HDR_LEN + 4 * i, regdb_db_domain(db, i)->alpha2, 2);
		put16(b + HDR_LEN + 4 * i + 2, (uint32_t)(l->coll_off[c] >> 2));
	}
	for (size_t i = 0; i < l->n_wmms; i++)
		emit_wmm(b + l->wmm_start + WMM_LEN * i, l->wmms[i]);
	for (size_t i = 0; i < l->n_rules; i++)
		emit_rule(b + l->rule_off[i], l->rules[i], l);
	for (size_t i = 0; i < l->n_colls; i++) {
		const struct regdb_domain *c = l->colls[i];
		uint8_t *p = b + l->coll_off[i];

		p[0] = 3; /* header length: len, n_rules, dfs_region */
		p[1] = (uint8_t)c->n_rules;
		p[2] = (uint8_t)c->dfs_region;
		for (unsigned int j = 0; j < c->n_rules; j++) {
			const void *r = &c->rules[j];
			size_t k = find(l->rules, l->n_rules, r, qsort_rule);

			put16(p + 4 + 2 * j, (uint32_t)(l->rule_off[k] >> 2));
		}
	}
}

int regdb_db_write(const struct regdb_db *db, uint8_t **buf, size_t *len, struct regdb_error *err)
{
	struct layout l = { 0 };
	int rc = layout_plan(db, &l, err);
	uint8_t *b = rc ? NULL : calloc(1, l.len);

	if (!rc && !b)
		rc = regdb_fail(err, "out of memory");
	if (!rc) {
		emit(db, &l, b);
		*buf = b;
		*len = l.len;
	}
	layout_free(&l);
	return rc;
}

int regdb_db_save(const struct regdb_db *db, const char *path, struct regdb_error *err)
{
	uint8_t *buf;
	size_t len;

	if (regdb_db_write(db, &buf, &len, err))
		return -1;
	FILE *f = fopen(path, "wb");
	int rc = 0;

	if (!f)
		rc = regdb_fail(err, "%s: %s", path, strerror(errno));
	else if (fwrite(buf, 1, len, f) != len)
		rc = regdb_fail(err, "%s: write error", path);
	if (f && fclose(f) && !rc)
		rc = regdb_fail(err, "%s: %s", path, strerror(errno));
	free(buf);
	return rc;
}
