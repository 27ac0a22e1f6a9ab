// SPDX-License-Identifier: GPL-2.0
/* regdb unit tests: the packaged regulatory.db, malformed files, verdicts. */
#include "build/config.h"
#include "regdb/regdb.h"

#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *file_buf;
static size_t file_len;

static void load_file(void)
{
	FILE *f = fopen(REGDB_DEFAULT_PATH, "rb");

	ck_assert_msg(f, "cannot open %s", REGDB_DEFAULT_PATH);
	file_buf = malloc(1 << 20);
	file_len = fread(file_buf, 1, 1 << 20, f);
	fclose(f);
	ck_assert_uint_gt(file_len, 8);
}

static void free_file(void)
{
	free(file_buf);
}

static uint32_t rd16(size_t off)
{
	return (uint32_t)file_buf[off] << 8 | file_buf[off + 1];
}

static uint32_t rd32(size_t off)
{
	return rd16(off) << 16 | rd16(off + 2);
}

/* Independent walk of the raw bytes: index entry of cc, or 0. */
static size_t raw_index_entry(const char *cc)
{
	for (size_t off = 8; off + 4 <= file_len && rd16(off + 2); off += 4)
		if (!memcmp(file_buf + off, cc, 2))
			return off;
	return 0;
}

START_TEST(packaged_rules_match_raw_bytes)
{
	static const char *const countries[] = { "00", "US", "DE", "JP", "FR", "GB", "CN" };
	struct regdb_db *db;
	struct regdb_error err;

	ck_assert_msg(!regdb_db_parse(file_buf, file_len, &db, &err), "%s", err.msg);
	ck_assert_uint_gt(regdb_db_count(db), 100);
	for (size_t c = 0; c < sizeof(countries) / sizeof(countries[0]); c++) {
		size_t e = raw_index_entry(countries[c]);
		const struct regdb_domain *d = regdb_db_find(db, countries[c]);

		ck_assert_msg(e && d, "%s missing", countries[c]);
		size_t coll = rd16(e + 2) * 4;
		unsigned int n = file_buf[coll + 1];

		ck_assert_uint_eq(d->n_rules, n);
		ck_assert_int_eq(d->dfs_region, file_buf[coll + 2]);
		size_t ptrs = coll + ((file_buf[coll] + 1u) & ~1u);

		for (unsigned int i = 0; i < n; i++) {
			size_t r = rd16(ptrs + 2 * i) * 4;

			ck_assert_uint_eq(d->rules[i].start_khz, rd32(r + 4));
			ck_assert_uint_eq(d->rules[i].end_khz, rd32(r + 8));
			ck_assert_uint_eq(d->rules[i].max_bw_khz, rd32(r + 12));
			ck_assert_int_eq(d->rules[i].max_eirp_mbm, (int32_t)rd16(r + 2));
			ck_assert_int_eq(!!(d->rules[i].flags & REGDB_DFS), !!(file_buf[r + 1] & 4));
			ck_assert_int_eq(!!(d->rules[i].flags & REGDB_NO_IR),
					 !!(file_buf[r + 1] & 8));
			ck_assert_int_eq(d->rules[i].has_wmm, file_buf[r] == 20);
		}
	}
	ck_assert_ptr_null(regdb_db_find(db, "ZZ"));
	regdb_db_free(db);
}
END_TEST

/* Parse a mutated copy; it must fail with a message containing `want`. */
static void expect_error(const uint8_t *buf, size_t len, const char *want)
{
	struct regdb_db *db = NULL;
	struct regdb_error err = { "" };

	ck_assert_int_eq(regdb_db_parse(buf, len, &db, &err), -1);
	ck_assert_msg(strstr(err.msg, want), "error '%s' lacks '%s'", err.msg, want);
}

/* Written as db.txt and parsed again, db reads back equal. */
static void assert_dbtxt_round_trip(const struct regdb_db *db)
{
	struct regdb_db *again = NULL;
	struct regdb_error err = { "" };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_int_eq(regdb_dbtxt_write(db, f, &err), 0);
	fclose(f);
	ck_assert_msg(!regdb_dbtxt_parse(text, len, "t.txt", &again, &err), "%s", err.msg);
	ck_assert_msg(regdb_db_equal(db, again), "db.txt read back different");
	regdb_db_free(again);
	free(text);
}

/* regulatory.db that the kernel would read but db.txt cannot say (the
 * fuzz_regdb_db finding): both readers keep one model, so what one
 * accepts the other reads back equal, and the rest both refuse. */
START_TEST(binary_reader_agrees_with_dbtxt)
{
	uint8_t *b = malloc(file_len);
	size_t de = raw_index_entry("DE"), coll = rd16(de + 2) * 4, ptrs = coll + 4;
	size_t r0 = rd16(ptrs) * 4, nodfs = 0, dfs = 0;
	struct regdb_db *db, *orig;
	struct regdb_error err = { "" };

	ck_assert(!regdb_db_parse(file_buf, file_len, &orig, &err));
	/* rules out of order: read sorted, as db.txt sorts them */
	memcpy(b, file_buf, file_len);
	memcpy(b + ptrs, file_buf + ptrs + 2, 2);
	memcpy(b + ptrs + 2, file_buf + ptrs, 2);
	ck_assert_msg(!regdb_db_parse(b, file_len, &db, &err), "%s", err.msg);
	ck_assert(regdb_domain_equal(regdb_db_find(db, "DE"), regdb_db_find(orig, "DE")));
	assert_dbtxt_round_trip(db);
	regdb_db_free(db);
	/* the same rule twice, a rule from 0 kHz, a CW of 0: refused */
	memcpy(b, file_buf, file_len);
	memcpy(b + ptrs + 2, file_buf + ptrs, 2);
	expect_error(b, file_len, ": the same rule twice"); /* DE shares its rules */
	memcpy(b, file_buf, file_len);
	memset(b + r0 + 4, 0, 4);
	expect_error(b, file_len, "start frequency must be above 0");
	for (unsigned int i = 0; i < file_buf[coll + 1]; i++) {
		size_t r = rd16(ptrs + 2 * i) * 4;

		if (file_buf[r] == 20 && !(file_buf[r + 1] & 4) && !nodfs)
			nodfs = r;
		if (file_buf[r] == 20 && (file_buf[r + 1] & 4) && !dfs)
			dfs = r;
	}
	ck_assert_msg(nodfs && dfs, "DE lacks a DFS and a non-DFS rule with a WMM pointer");
	/* the longest CAC regulatory.db holds, 65535 s: db.txt says it too */
	memcpy(b, file_buf, file_len);
	memset(b + dfs + 16, 0xff, 2);
	ck_assert_msg(!regdb_db_parse(b, file_len, &db, &err), "%s", err.msg);
	assert_dbtxt_round_trip(db);
	regdb_db_free(db);
	memcpy(b, file_buf, file_len);
	b[rd16(nodfs + 18) * 4] = 0x04; /* ECWmin 0 */
	expect_error(b, file_len, "invalid WMM rule");
	/* a range up to the format's 4294967295 kHz: db.txt says it too */
	memcpy(b, file_buf, file_len);
	memset(b + r0 + 8, 0xff, 4);
	ck_assert_msg(!regdb_db_parse(b, file_len, &db, &err), "%s", err.msg);
	assert_dbtxt_round_trip(db);
	regdb_db_free(db);
	/* a CAC time on a rule without DFS: meaningless, not kept */
	memcpy(b, file_buf, file_len);
	b[nodfs + 16] = 0;
	b[nodfs + 17] = 60;
	ck_assert_msg(!regdb_db_parse(b, file_len, &db, &err), "%s", err.msg);
	ck_assert(regdb_domain_equal(regdb_db_find(db, "DE"), regdb_db_find(orig, "DE")));
	assert_dbtxt_round_trip(db);
	regdb_db_free(db);
	regdb_db_free(orig);
	free(b);
}
END_TEST

/* Every cut of the file (but the last collection's 2 padding bytes) fails,
 * naming what ran past the end. */
START_TEST(every_truncation_is_an_error)
{
	size_t index_end = 8;

	while (rd16(index_end + 2))
		index_end += 4;
	for (size_t len = 0; len + 2 < file_len; len++) {
		struct regdb_db *db = NULL;
		struct regdb_error err = { "" };
		const char *want = len < 8		 ? "file too short for a header" :
				   len < index_end + 4 ? "country index runs past end of file" :
							 NULL;

		ck_assert_int_eq(regdb_db_parse(file_buf, len, &db, &err), -1);
		if (want)
			ck_assert_msg(strstr(err.msg, want), "len %zu: '%s'", len, err.msg);
		else
			ck_assert_msg(strstr(err.msg, "outside the data area") ||
					      strstr(err.msg, "run past end of file"),
				      "len %zu: '%s'", len, err.msg);
	}
}
END_TEST

START_TEST(bad_headers)
{
	uint8_t *b = malloc(file_len);

	memcpy(b, file_buf, file_len);
	b[0] = 'X';
	expect_error(b, file_len, "bad magic");
	memcpy(b, file_buf, file_len);
	b[7] = 19;
	expect_error(b, file_len, "version 19");
	free(b);
}
END_TEST

START_TEST(bad_pointers_lengths_order)
{
	uint8_t *b = malloc(file_len);
	size_t de = raw_index_entry("DE");
	size_t coll = rd16(de + 2) * 4;
	size_t rule = rd16(coll + 4) * 4;

	memcpy(b, file_buf, file_len);
	b[de + 2] = 0xff; /* collection pointer far past the end */
	expect_error(b, file_len, "outside the data area");
	memcpy(b, file_buf, file_len);
	b[de + 2] = 0;
	b[de + 3] = 3; /* collection pointing back into the index: a loop */
	expect_error(b, file_len, "outside the data area");
	memcpy(b, file_buf, file_len);
	b[rule] = 17;
	expect_error(b, file_len, "length 17 (want 16, 18 or 20)");
	memcpy(b, file_buf, file_len);
	b[rule] = 12;
	expect_error(b, file_len, "length 12 (want 16, 18 or 20)");
	memcpy(b, file_buf, file_len);
	b[coll + 4] = 0xff;
	expect_error(b, file_len, "rule pointer");
	memcpy(b, file_buf, file_len);
	memcpy(b + de, "AA", 2);
	expect_error(b, file_len, "not sorted");
	memcpy(b, file_buf, file_len);
	b[coll + 1] = 250; /* reads on into other data: a zero or a too-far pointer */
	expect_error(b, file_len, "rule pointer");
	size_t last = 0;

	for (size_t e = 8; rd16(e + 2); e += 4)
		last = rd16(e + 2) * 4 > last ? rd16(e + 2) * 4 : last;
	memcpy(b, file_buf, file_len);
	b[last + 1] = 250; /* the file's last collection */
	expect_error(b, file_len, "250 rule pointers run past end of file");
	memcpy(b, file_buf, file_len);
	b[coll + 4] = 0;
	b[coll + 5] = 2; /* a rule pointer back into the index: a loop */
	expect_error(b, file_len, "rule pointer 0x8 outside the data area");
	memcpy(b, file_buf, file_len);
	b[coll + 2] = 4;
	expect_error(b, file_len, "unknown DFS region 4");
	memcpy(b, file_buf, file_len);
	b[rule + 1] |= 0x20;
	expect_error(b, file_len, "unknown flags");
	size_t wrule = 0;

	for (unsigned int i = 0; i < file_buf[coll + 1] && !wrule; i++)
		if (file_buf[rd16(coll + 4 + 2 * i) * 4] == 20)
			wrule = rd16(coll + 4 + 2 * i) * 4;
	ck_assert_msg(wrule, "DE has no rule with a WMM pointer");
	memcpy(b, file_buf, file_len);
	b[wrule + 18] = 0xff;
	expect_error(b, file_len, "beyond end of file");
	memcpy(b, file_buf, file_len);
	b[rd16(wrule + 18) * 4] = 0x44; /* cw_min == cw_max */
	expect_error(b, file_len, "invalid WMM rule");
	free(b);
}
END_TEST

START_TEST(random_mutations_never_crash)
{
	uint8_t *b = malloc(file_len);
	uint32_t seed = 12345;
	int ok = 0;

	for (int iter = 0; iter < 3000; iter++) {
		memcpy(b, file_buf, file_len);
		for (int k = 0; k < 4; k++) {
			seed = seed * 1103515245u + 12345u;
			b[(seed >> 8) % file_len] ^= (uint8_t)(seed >> 24 | 1);
		}
		struct regdb_db *db;
		struct regdb_error err;

		if (!regdb_db_parse(b, file_len, &db, &err)) {
			ok++;
			regdb_db_free(db);
		} else {
			ck_assert_uint_gt(strlen(err.msg), 0);
		}
	}
	ck_assert_int_gt(ok, 0);
	free(b);
}
END_TEST

static struct regdb_domain *two_rule_domain(uint32_t f1, uint32_t f2)
{
	struct regdb_domain *d = regdb_domain_new("XX", REGDB_DFS_ETSI, 2);

	d->rules[0] = (struct regdb_rule){ .start_khz = 5150000, .end_khz = 5250000,
					   .max_bw_khz = 80000, .max_eirp_mbm = 2300,
					   .flags = f1 };
	d->rules[1] = (struct regdb_rule){ .start_khz = 5250000, .end_khz = 5350000,
					   .max_bw_khz = 80000, .max_eirp_mbm = 2000,
					   .flags = f2 };
	return d;
}

START_TEST(auto_bw_widens_across_touching_rules)
{
	struct regdb_domain *d = two_rule_domain(REGDB_AUTO_BW, REGDB_AUTO_BW | REGDB_DFS);

	ck_assert_uint_eq(regdb_rule_max_bw(d, 0), 200000);
	ck_assert_uint_eq(regdb_rule_max_bw(d, 1), 200000);
	d->rules[1].flags |= REGDB_NO_160MHZ;
	ck_assert_uint_eq(regdb_rule_max_bw(d, 1), 80000);
	free(d);
	d = two_rule_domain(0, REGDB_AUTO_BW);
	ck_assert_uint_eq(regdb_rule_max_bw(d, 0), 80000);
	d->rules[1].start_khz = 5260000; /* a gap: no widening */
	ck_assert_uint_eq(regdb_rule_max_bw(d, 1), 90000);
	free(d);
}
END_TEST

/* The EIRP of the rule of d holding the 20 MHz channel at mhz. */
static int32_t eirp_at(const struct regdb_domain *d, uint32_t mhz)
{
	for (unsigned int i = 0; i < d->n_rules; i++)
		if (d->rules[i].start_khz <= mhz * 1000 - 10000 &&
		    d->rules[i].end_khz >= mhz * 1000 + 10000)
			return d->rules[i].max_eirp_mbm;
	ck_abort_msg("%s: no rule at %u MHz", d->alpha2, mhz);
	return 0;
}

/*
 * Wide channels over the packaged database's touching AUTO-BW rules
 * (cfg80211's reg_get_max_bandwidth sums the run): US, JP and DE have
 * 5150/5170-5250 and 5250-5330/5350 both AUTO-BW, so 160 MHz at 5250 MHz
 * (channel 50) is usable with the lower EIRP and the upper half's DFS; US's
 * 5730-5850 and 5850-5895 AUTO-BW give channel 163 (5735-5895) with the
 * NO-IR and NO-OUTDOOR of the upper part (its channel 169 straddles the
 * rules' boundary: an adjacent pair). DE's 5725-5875 has no AUTO-BW, so
 * 160 MHz at 5730 (5650-5810) is too wide.
 */
START_TEST(packaged_wide_channels_over_auto_bw_rules)
{
	struct regdb_db *db;
	struct regdb_error err;
	struct regdb_verdict v;

	ck_assert_msg(!regdb_db_parse(file_buf, file_len, &db, &err), "%s", err.msg);
	static const char *const cc[] = { "US", "JP", "DE" };

	for (int i = 0; i < 3; i++) {
		const struct regdb_domain *d = regdb_db_find(db, cc[i]);
		struct regdb_query q = { .center_khz = 5250000, .width_khz = 160000,
					 .frame = REGDB_FRAME_BEACON };
		int32_t lo = eirp_at(d, 5180), hi = eirp_at(d, 5320);

		regdb_verdict(d, &q, &v);
		ck_assert_msg(v.reason == REGDB_OK, "%s: %s", cc[i], regdb_deny_str(v.reason));
		ck_assert_int_eq(v.max_eirp_mbm, lo < hi ? lo : hi);
		ck_assert(v.needs_cac);
		ck_assert_uint_ge(v.max_bw_khz, 160000);
	}
	const struct regdb_domain *us = regdb_db_find(db, "US");
	struct regdb_query q = { .center_khz = 5815000, .width_khz = 160000 };

	regdb_verdict(us, &q, &v);
	ck_assert_int_eq(v.reason, REGDB_OK);
	ck_assert_int_eq(v.max_eirp_mbm, eirp_at(us, 5875) < eirp_at(us, 5745) ?
						 eirp_at(us, 5875) : eirp_at(us, 5745));
	q.frame = REGDB_FRAME_BEACON;
	regdb_verdict(us, &q, &v);
	ck_assert_int_eq(v.reason, REGDB_DENY_NO_IR);
	q.frame = REGDB_FRAME_DATA;
	q.outdoor = true;
	regdb_verdict(us, &q, &v);
	ck_assert_int_eq(v.reason, REGDB_DENY_INDOOR_ONLY);
	q = (struct regdb_query){ .center_khz = 5845000, .width_khz = 20000 }; /* channel 169 */
	regdb_verdict(us, &q, &v);
	ck_assert_int_eq(v.reason, REGDB_OK);
	q = (struct regdb_query){ .center_khz = 5730000, .width_khz = 160000 };
	regdb_verdict(regdb_db_find(db, "DE"), &q, &v);
	ck_assert_int_eq(v.reason, REGDB_DENY_WIDTH);
	regdb_db_free(db);
}
END_TEST

START_TEST(verdicts)
{
	struct regdb_domain *d = two_rule_domain(REGDB_NO_OUTDOOR, REGDB_DFS | REGDB_NO_IR);
	struct regdb_query q = { .center_khz = 5180000, .width_khz = 20000 };
	struct regdb_verdict v;

	regdb_verdict(d, &q, &v);
	ck_assert_int_eq(v.reason, REGDB_OK);
	ck_assert_int_eq(v.max_eirp_mbm, 2300);
	q.outdoor = true;
	regdb_verdict(d, &q, &v);
	ck_assert_int_eq(v.reason, REGDB_DENY_INDOOR_ONLY);
	q.outdoor = false;
	q.width_khz = 160000;
	q.center_khz = 5250000; /* spans both rules, each only 80 MHz wide */
	regdb_verdict(d, &q, &v);
	ck_assert_int_eq(v.reason, REGDB_DENY_WIDTH);
	q.width_khz = 20000;
	q.center_khz = 5300000;
	q.frame = REGDB_FRAME_BEACON;
	regdb_verdict(d, &q, &v);
	ck_assert_int_eq(v.reason, REGDB_DENY_NO_IR);
	q.frame = REGDB_FRAME_DATA;
	q.check_power = true;
	q.tx_power_mbm = 2100;
	regdb_verdict(d, &q, &v);
	ck_assert_int_eq(v.reason, REGDB_DENY_POWER);
	d->rules[1].flags = REGDB_DFS;
	q.check_power = false;
	q.frame = REGDB_FRAME_BEACON;
	regdb_verdict(d, &q, &v);
	ck_assert_int_eq(v.reason, REGDB_OK);
	ck_assert(v.needs_cac);
	ck_assert_uint_eq(v.cac_ms, 60000);
	q.frame = REGDB_FRAME_PROBE;
	regdb_verdict(d, &q, &v);
	ck_assert_int_eq(v.reason, REGDB_DENY_DFS_PASSIVE);
	q.frame = REGDB_FRAME_DATA;
	q.width_khz = 160000;
	q.center_khz = 5290000; /* 5350-5370 MHz lies in no rule */
	regdb_verdict(d, &q, &v);
	ck_assert_int_eq(v.reason, REGDB_DENY_NO_RULE);
	free(d);
}
END_TEST

START_TEST(intersection_cfg80211_semantics)
{
	struct regdb_domain *a = two_rule_domain(REGDB_AUTO_BW, REGDB_AUTO_BW | REGDB_DFS);
	struct regdb_domain *b = regdb_domain_new("YY", REGDB_DFS_FCC, 1);

	b->rules[0] = (struct regdb_rule){ .start_khz = 5170000, .end_khz = 5330000,
					   .max_bw_khz = 160000, .max_eirp_mbm = 2200,
					   .cac_ms = 30000, .flags = REGDB_NO_OUTDOOR };
	struct regdb_domain *x = regdb_intersect(a, b);

	ck_assert_ptr_nonnull(x);
	ck_assert_str_eq(x->alpha2, "98");
	ck_assert_int_eq(x->dfs_region, REGDB_DFS_UNSET); /* regions differ */
	ck_assert_uint_eq(x->n_rules, 2);
	/* overlap 5170-5250; a's AUTO-BW widened to 200 MHz, b 160: min, then the span */
	ck_assert_uint_eq(x->rules[0].start_khz, 5170000);
	ck_assert_uint_eq(x->rules[0].end_khz, 5250000);
	ck_assert_uint_eq(x->rules[0].max_bw_khz, 80000);
	ck_assert_int_eq(x->rules[0].max_eirp_mbm, 2200);
	ck_assert_uint_eq(x->rules[0].flags, REGDB_NO_OUTDOOR); /* AUTO-BW only if both */
	ck_assert_uint_eq(x->rules[1].flags, REGDB_NO_OUTDOOR | REGDB_DFS);
	ck_assert_int_eq(x->rules[1].max_eirp_mbm, 2000);
	ck_assert_uint_eq(x->rules[1].cac_ms, 30000);
	free(x);
	b->rules[0].flags = REGDB_AUTO_BW;
	b->dfs_region = REGDB_DFS_ETSI;
	x = regdb_intersect(a, b);
	ck_assert_int_eq(x->dfs_region, REGDB_DFS_ETSI);
	ck_assert_uint_eq(x->rules[0].flags, REGDB_AUTO_BW);
	free(x);
	b->rules[0].start_khz = 2400000; /* no overlap at all */
	b->rules[0].end_khz = 2483500;
	ck_assert_ptr_null(regdb_intersect(a, b));
	free(b);
	/* A domain with itself: the same rules (nothing contained is added twice). */
	x = regdb_intersect(a, a);
	ck_assert_uint_eq(x->n_rules, 2);
	ck_assert_uint_eq(x->rules[0].max_bw_khz, 100000);
	free(x);
	free(a);
}
END_TEST

static struct regdb_current *new_current(void)
{
	struct regdb_db *db;
	struct regdb_error err;

	ck_assert_msg(!regdb_db_parse(file_buf, file_len, &db, &err), "%s", err.msg);
	struct regdb_current *cur = regdb_current_new(db, &err);

	ck_assert_msg(cur, "%s", err.msg);
	return cur;
}

static char *current_alpha2(struct regdb_current *cur, char out[3])
{
	struct regdb_snapshot *s = regdb_current_get(cur);

	memcpy(out, regdb_snapshot_domain(s)->alpha2, 3);
	regdb_snapshot_put(s);
	return out;
}

START_TEST(current_domain_hints)
{
	struct regdb_current *cur = new_current();
	struct regdb_error err;
	char cc[3];

	ck_assert_str_eq(current_alpha2(cur, cc), "00");
	ck_assert_int_eq(regdb_current_set_country_ie(cur, "DE", &err), 0);
	ck_assert_str_eq(current_alpha2(cur, cc), "DE"); /* no user hint: the IE's country */
	ck_assert_int_eq(regdb_current_set_user(cur, "US", &err), 0);
	ck_assert_str_eq(current_alpha2(cur, cc), "98"); /* user US meets IE DE */
	regdb_current_clear_country_ie(cur);
	ck_assert_str_eq(current_alpha2(cur, cc), "US"); /* the user hint replaces */
	ck_assert_int_eq(regdb_current_set_user(cur, "ZZ", &err), -1);
	ck_assert_str_eq(current_alpha2(cur, cc), "US"); /* a failed hint changes nothing */
	ck_assert_int_eq(regdb_current_reload(cur, "/nonexistent/regulatory.db", &err), -1);
	ck_assert_str_eq(current_alpha2(cur, cc), "US");
	ck_assert_int_eq(regdb_current_reload(cur, REGDB_DEFAULT_PATH, &err), 0);
	ck_assert_str_eq(current_alpha2(cur, cc), "US");
	/* a database and a country at once: no such country, nothing changes */
	ck_assert_int_eq(regdb_current_reload_user(cur, REGDB_DEFAULT_PATH, "ZZ", &err), -1);
	ck_assert_str_eq(current_alpha2(cur, cc), "US");
	ck_assert_int_eq(regdb_current_set_user(cur, "DE", &err), 0);
	ck_assert_int_eq(regdb_current_reload_user(cur, REGDB_DEFAULT_PATH, "JP", &err), 0);
	ck_assert_str_eq(current_alpha2(cur, cc), "JP");
	regdb_current_free(cur);
}
END_TEST

static atomic_int stop_readers;

static void *reader_thread(void *arg)
{
	struct regdb_reader rd;
	struct regdb_query q = { .center_khz = 5180000, .width_khz = 20000 };
	struct regdb_verdict v;
	long bad = 0;

	regdb_reader_init(&rd, arg);
	while (!atomic_load(&stop_readers)) {
		regdb_reader_verdict(&rd, &q, &v);
		const struct regdb_domain *d = regdb_snapshot_domain(rd.snap);
		/* Always a whole domain: DE or US, each with all its rules. */
		bool whole = (!strcmp(d->alpha2, "DE") && d->n_rules == 7) ||
			     (!strcmp(d->alpha2, "US") && d->n_rules == 11);

		bad += !whole || v.reason != REGDB_OK;
	}
	regdb_reader_release(&rd);
	return (void *)bad;
}

START_TEST(swap_under_concurrent_readers)
{
	struct regdb_current *cur = new_current();
	struct regdb_error err;
	pthread_t t[2];

	ck_assert_int_eq(regdb_current_set_user(cur, "DE", &err), 0);
	atomic_store(&stop_readers, 0);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, reader_thread, cur);
	for (int i = 0; i < 300; i++) {
		ck_assert_int_eq(regdb_current_set_user(cur, i % 2 ? "DE" : "US", &err), 0);
		if (i % 50 == 0)
			ck_assert_int_eq(regdb_current_reload(cur, REGDB_DEFAULT_PATH, &err), 0);
	}
	atomic_store(&stop_readers, 1);
	for (int i = 0; i < 2; i++) {
		void *bad;

		pthread_join(t[i], &bad);
		ck_assert_ptr_null(bad);
	}
	regdb_current_free(cur);
}
END_TEST

START_TEST(country_ie_round_trip)
{
	struct regdb_db *db;
	struct regdb_error err;
	uint8_t ie[257], again[257];
	struct regdb_country_ie p;

	ck_assert(!regdb_db_parse(file_buf, file_len, &db, &err));
	const struct regdb_domain *de = regdb_db_find(db, "DE");
	int len = regdb_country_ie_build(de, 'I', ie, sizeof(ie));

	ck_assert_int_gt(len, 5);
	ck_assert_int_eq(ie[0], 7);
	ck_assert_int_eq(ie[1] % 2, 0);
	ck_assert_msg(!regdb_country_ie_parse(ie, (size_t)len, &p, &err), "%s", err.msg);
	ck_assert_str_eq(p.alpha2, "DE");
	ck_assert_int_eq(p.env, 'I');
	/* DE: 1-13 at 20 dBm; 36-48 at 23; 52-64 at 20; 96-140 at 26 (5470-5725); 149- at 13 */
	ck_assert_uint_eq(p.n, 5);
	ck_assert_uint_eq(p.t[0].first_chan, 1);
	ck_assert_uint_eq(p.t[0].n_chans, 13);
	ck_assert_int_eq(p.t[0].max_power_dbm, 20);
	ck_assert_uint_eq(p.t[1].first_chan, 36);
	ck_assert_uint_eq(p.t[1].n_chans, 4);
	ck_assert_int_eq(p.t[1].max_power_dbm, 23);
	ck_assert_uint_eq(p.t[3].first_chan, 96);
	ck_assert_uint_eq(p.t[3].n_chans, 12);
	ck_assert_int_eq(p.t[3].max_power_dbm, 26);
	struct regdb_domain *copy = regdb_domain_dup(de);

	ck_assert_int_eq(regdb_country_ie_build(copy, 'I', again, sizeof(again)), len);
	ck_assert_mem_eq(ie, again, (size_t)len);
	free(copy);
	ck_assert_int_eq(regdb_country_ie_build(de, ' ', ie, 10), -1); /* does not fit */
	regdb_db_free(db);
}
END_TEST

START_TEST(country_ie_malformed)
{
	static const struct {
		uint8_t b[16];
		size_t len;
		const char *why;
	} bad[] = {
		{ { 8, 6, 'D', 'E', ' ', 1, 13, 20 }, 8, "element ID" },
		{ { 7, 9, 'D', 'E', ' ', 1, 13, 20 }, 8, "length" },
		{ { 7, 2, 'D', 'E' }, 4, "too short" },
		{ { 7, 6, 'd', 'E', ' ', 1, 13, 20 }, 8, "country code" },
		{ { 7, 6, 'D', 'E', 'Q', 1, 13, 20 }, 8, "environment" },
		{ { 7, 5, 'D', 'E', ' ', 1, 13 }, 7, "trailing" },
		{ { 7, 6, 'D', 'E', ' ', 1, 0, 20 }, 8, "no channels" },
		{ { 7, 6, 'D', 'E', ' ', 1, 15, 20 }, 8, "past channel 14" },
		{ { 7, 9, 'D', 'E', ' ', 36, 4, 23, 36, 4, 20 }, 11, "overlaps" },
		{ { 7, 7, 'D', 'E', ' ', 1, 13, 20, 5 }, 9, "trailing" },
	};
	struct regdb_country_ie p;
	struct regdb_error err;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err.msg[0] = 0;
		ck_assert_int_eq(regdb_country_ie_parse(bad[i].b, bad[i].len, &p, &err), -1);
		ck_assert_msg(strstr(err.msg, bad[i].why), "case %zu: '%s'", i, err.msg);
	}
	static const uint8_t ok[] = { 7, 10, 'U', 'S', 'O', 1, 11, 30, 201, 12, 0, 0 };

	ck_assert(!regdb_country_ie_parse(ok, sizeof(ok), &p, &err));
	ck_assert_uint_eq(p.n, 2);
	ck_assert_uint_eq(p.t[1].first_chan, 201);
}
END_TEST

START_TEST(iso3166_all_entries_round_trip)
{
	struct regdb_iso iso;
	struct regdb_error err;

	ck_assert_msg(!regdb_iso_load(ISO3166_JSON_PATH, &iso, &err), "%s", err.msg);
	ck_assert_uint_eq(iso.n, 249);
	for (size_t i = 0; i < iso.n; i++) {
		const struct regdb_iso_country *c = &iso.c[i];
		char num[8];

		ck_assert_ptr_eq(regdb_iso_by_alpha2(&iso, c->alpha2), c);
		ck_assert_ptr_eq(regdb_iso_by_alpha3(&iso, c->alpha3), c);
		ck_assert_ptr_eq(regdb_iso_by_numeric(&iso, c->numeric), c);
		ck_assert_ptr_eq(regdb_iso_by_name(&iso, c->name), c);
		snprintf(num, sizeof(num), "%03u", c->numeric);
		ck_assert_ptr_eq(regdb_iso_resolve(&iso, num), c);
		ck_assert_ptr_eq(regdb_iso_resolve(&iso, c->alpha3), c);
	}
	ck_assert_str_eq(regdb_iso_resolve(&iso, "DEU")->alpha2, "DE");
	ck_assert_str_eq(regdb_iso_resolve(&iso, "276")->alpha2, "DE");
	ck_assert_str_eq(regdb_iso_resolve(&iso, "germany")->alpha2, "DE");
	ck_assert_str_eq(regdb_iso_resolve(&iso, "Federal Republic of Germany")->alpha2, "DE");
	ck_assert_ptr_null(regdb_iso_resolve(&iso, "Atlantis"));
	ck_assert_ptr_null(regdb_iso_resolve(&iso, "9999"));
	regdb_iso_free(&iso);
	ck_assert_int_eq(regdb_iso_load("/nonexistent.json", &iso, &err), -1);
	ck_assert_uint_gt(strlen(err.msg), 0);
}
END_TEST

START_TEST(channel_lists)
{
	struct regdb_db *db;
	struct regdb_error err;
	struct regdb_channel ch[64];

	ck_assert_uint_eq(regdb_channel_khz(REGDB_BAND_2GHZ, 1), 2412000);
	ck_assert_uint_eq(regdb_channel_khz(REGDB_BAND_2GHZ, 14), 2484000);
	ck_assert_uint_eq(regdb_channel_khz(REGDB_BAND_2GHZ, 15), 0);
	ck_assert_uint_eq(regdb_channel_khz(REGDB_BAND_5GHZ, 36), 5180000);
	ck_assert_uint_eq(regdb_channel_khz(REGDB_BAND_6GHZ, 1), 5955000);
	ck_assert_uint_eq(regdb_channel_khz(REGDB_BAND_6GHZ, 2), 5935000);
	ck_assert_uint_eq(regdb_channel_khz(REGDB_BAND_6GHZ, 3), 0);
	ck_assert_uint_eq(regdb_channel_khz(REGDB_BAND_60GHZ, 2), 60480000);
	ck_assert(!regdb_db_parse(file_buf, file_len, &db, &err));
	const struct regdb_domain *de = regdb_db_find(db, "DE"), *us = regdb_db_find(db, "US");

	/* DE 2400-2483.5: channels 1-13; US 2400-2472: 1-11 */
	ck_assert_uint_eq(regdb_channels(de, REGDB_BAND_2GHZ, ch, 64), 13);
	ck_assert_uint_eq(regdb_channels(us, REGDB_BAND_2GHZ, ch, 64), 11);
	ck_assert_uint_eq(ch[10].number, 11);
	/* DE 5 GHz, 20 MHz inside a rule: 32-48 (5), 52-68 (5), 96-140 (12), 149-173 (7) */
	size_t n = regdb_channels(de, REGDB_BAND_5GHZ, ch, 64);

	ck_assert_uint_eq(n, 29);
	ck_assert_uint_eq(ch[0].number, 32);
	ck_assert(!(ch[4].flags & REGDB_DFS)); /* 48 */
	ck_assert(ch[5].flags & REGDB_DFS); /* 52 */
	/* DE 6 GHz 5945-6425: channels 1..93 (24), channel 2 is 5925-5945: out */
	ck_assert_uint_eq(regdb_channels(de, REGDB_BAND_6GHZ, ch, 64), 24);
	/* DE 60 GHz 57-66 GHz: channels 1-4 */
	ck_assert_uint_eq(regdb_channels(de, REGDB_BAND_60GHZ, ch, 64), 4);
	ck_assert_uint_eq(regdb_channels(de, REGDB_BAND_5GHZ, ch, 2), 29);
	regdb_db_free(db);
}
END_TEST

START_TEST(builtin_domains_equal_packaged_file)
{
	struct regdb_db *db, *builtin = regdb_db_builtin();
	struct regdb_error err;

	ck_assert_ptr_nonnull(builtin);
	ck_assert(!regdb_db_parse(file_buf, file_len, &db, &err));
	ck_assert_uint_eq(regdb_db_count(builtin), 4);
	for (size_t i = 0; i < 4; i++) {
		const struct regdb_domain *b = regdb_db_domain(builtin, i);
		const struct regdb_domain *f = regdb_db_find(db, b->alpha2);

		ck_assert_ptr_nonnull(f);
		ck_assert_msg(regdb_domain_equal(b, f), "built-in %s differs", b->alpha2);
	}
	ck_assert_ptr_nonnull(regdb_db_find(builtin, "00"));
	ck_assert_ptr_nonnull(regdb_db_find(builtin, "JP"));
	regdb_db_free(builtin);
	regdb_db_free(db);
}
END_TEST

START_TEST(flag_names_round_trip)
{
	char buf[256];

	ck_assert_str_eq(regdb_flags_str(0, ",", buf, sizeof(buf)), "-");
	ck_assert_str_eq(regdb_flags_str(REGDB_NO_OUTDOOR | REGDB_DFS | REGDB_AUTO_BW, ",", buf,
					 sizeof(buf)),
			 "NO-OUTDOOR,DFS,AUTO-BW");
	ck_assert_str_eq(regdb_flags_str(REGDB_NO_HT40, ",", buf, sizeof(buf)), "NO-HT40");
	ck_assert_uint_eq(regdb_flag_from_name("NO-IR"), REGDB_NO_IR);
	ck_assert_uint_eq(regdb_flag_from_name("BOGUS"), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("regdb");
	TCase *file = tcase_create("file");
	TCase *ops = tcase_create("ops");

	tcase_add_checked_fixture(file, load_file, free_file);
	tcase_set_timeout(file, 120);
	tcase_add_test(file, packaged_rules_match_raw_bytes);
	tcase_add_test(file, every_truncation_is_an_error);
	tcase_add_test(file, bad_headers);
	tcase_add_test(file, bad_pointers_lengths_order);
	tcase_add_test(file, binary_reader_agrees_with_dbtxt);
	tcase_add_test(file, random_mutations_never_crash);
	tcase_add_test(file, current_domain_hints);
	tcase_add_test(file, country_ie_round_trip);
	tcase_add_test(file, channel_lists);
	tcase_add_test(file, builtin_domains_equal_packaged_file);
	tcase_add_test(file, packaged_wide_channels_over_auto_bw_rules);
	tcase_add_test(ops, country_ie_malformed);
	tcase_add_test(ops, iso3166_all_entries_round_trip);
	tcase_add_test(file, swap_under_concurrent_readers);
	tcase_add_test(ops, auto_bw_widens_across_touching_rules);
	tcase_add_test(ops, verdicts);
	tcase_add_test(ops, flag_names_round_trip);
	tcase_add_test(ops, intersection_cfg80211_semantics);
	suite_add_tcase(s, file);
	suite_add_tcase(s, ops);
	SRunner *sr = srunner_create(s);

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);

	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
