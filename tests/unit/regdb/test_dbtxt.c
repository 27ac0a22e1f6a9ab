// SPDX-License-Identifier: GPL-2.0
/* regdb: the db.txt grammar, the regulatory.db writer and their round trips. */
#include "build/config.h"
#include "regdb/regdb.h"
#include "tests/unit/check_run.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char sample[] =
	"# A hand-written database in wireless-regdb's format.\n"
	"wmmrule ETSI:\n"
	"\tvo_c: cw_min=3, cw_max=7, aifsn=2, cot=2\n"
	"\tvi_c: cw_min=7, cw_max=15, aifsn=2, cot=4\n"
	"\tbe_c: cw_min=15, cw_max=1023, aifsn=3, cot=6\n"
	"\tbk_c: cw_min=15, cw_max=1023, aifsn=7, cot=6\n"
	"\tvo_ap: cw_min=3, cw_max=7, aifsn=1, cot=2\n"
	"\tvi_ap: cw_min=7, cw_max=15, aifsn=1, cot=4\n"
	"\tbe_ap: cw_min=15, cw_max=63, aifsn=3, cot=6\n"
	"\tbk_ap: cw_min=15, cw_max=1023, aifsn=7, cot=6\n"
	"\n"
	"country XB: DFS-ETSI\n"
	"\t(5250 - 5350 @ 80), (100 mW), NO-OUTDOOR, DFS, AUTO-BW, wmmrule=ETSI # sorts 2nd\n"
	"\t(2400 - 2483.5 @ 40), (100 mW)\n"
	"\t(5150 - 5250 @ 80), (200 mW), NO-OUTDOOR, AUTO-BW, wmmrule=ETSI\n"
	"\n"
	"country 00:\n"
	"\t(2402 - 2472 @ 40), (20)\n"
	"\t(5735-5835@80),(20),NO-IR\n"
	"country XA,XC: DFS-FCC\n"
	"\t(5490 - 5730 @ 160), (24 dBm), (120000), DFS\n"
	"\t(57240 - 63720 @ 2160), (N/A, 40)\n"
	"\t(902 - 904), (30)\n";

static struct regdb_db *parse_ok(const char *text)
{
	struct regdb_db *db = NULL;
	struct regdb_error err = { "" };

	ck_assert_msg(!regdb_dbtxt_parse(text, strlen(text), "t.txt", &db, &err), "%s", err.msg);
	return db;
}

START_TEST(grammar_sample)
{
	struct regdb_db *db = parse_ok(sample);

	ck_assert_uint_eq(regdb_db_count(db), 4);
	const struct regdb_domain *xb = regdb_db_find(db, "XB");

	ck_assert_int_eq(xb->dfs_region, REGDB_DFS_ETSI);
	ck_assert_uint_eq(xb->n_rules, 3);
	/* sorted like db2fw.py: by start frequency first */
	ck_assert_uint_eq(xb->rules[0].start_khz, 2400000);
	ck_assert_uint_eq(xb->rules[0].end_khz, 2483500);
	ck_assert_uint_eq(xb->rules[0].max_bw_khz, 40000);
	ck_assert_int_eq(xb->rules[0].max_eirp_mbm, 2000); /* 100 mW */
	ck_assert(!xb->rules[0].has_wmm);
	ck_assert_int_eq(xb->rules[1].max_eirp_mbm, 2301); /* 200 mW, truncated like db2fw */
	ck_assert_uint_eq(xb->rules[1].flags, REGDB_NO_OUTDOOR | REGDB_AUTO_BW);
	ck_assert(xb->rules[1].has_wmm);
	ck_assert_uint_eq(xb->rules[1].wmm.client[2].cw_max, 1023);
	ck_assert_uint_eq(xb->rules[1].wmm.ap[2].cw_max, 63);
	ck_assert_uint_eq(xb->rules[1].wmm.ap[0].aifsn, 1);
	ck_assert_uint_eq(xb->rules[1].wmm.client[1].cot_ms, 4);
	ck_assert_uint_eq(xb->rules[2].flags, REGDB_NO_OUTDOOR | REGDB_DFS | REGDB_AUTO_BW);

	const struct regdb_domain *w = regdb_db_find(db, "00");

	ck_assert_int_eq(w->dfs_region, REGDB_DFS_UNSET);
	ck_assert_uint_eq(w->n_rules, 2);
	ck_assert_uint_eq(w->rules[1].flags, REGDB_NO_IR); /* no blanks needed */

	const struct regdb_domain *xa = regdb_db_find(db, "XA"), *xc = regdb_db_find(db, "XC");

	ck_assert_uint_eq(xa->n_rules, 3);
	ck_assert_uint_eq(xa->rules[0].start_khz, 902000);
	ck_assert_uint_eq(xa->rules[0].max_bw_khz, 20000); /* "@ bw" left out */
	ck_assert_uint_eq(xa->rules[1].cac_ms, 120000);
	ck_assert_int_eq(xa->rules[1].max_eirp_mbm, 2400);
	ck_assert_int_eq(xa->rules[2].max_eirp_mbm, 4000);
	ck_assert_int_eq(xa->rules[2].max_ant_gain_mbi, 0);
	ck_assert_mem_eq(xa->rules, xc->rules, 3 * sizeof(xa->rules[0]));
	ck_assert_int_eq(xc->dfs_region, REGDB_DFS_FCC);
	regdb_db_free(db);
}
END_TEST

static const struct {
	const char *text, *want;
} bad[] = {
	{ "country DE: DFS-ETSI\n\t(2400 2483 @ 40), (20)\n",
	  "t.txt:2: expected '-' between start and end frequency, got '2483'" },
	{ "country DE:\n\t(2400 - 2483 40), (20)\n",
	  "t.txt:2: expected ')' after frequency range, got '40'" },
	{ "country DE:\n\t(2400 - 2483 @ 40) (20)\n", "t.txt:2: expected ',' after frequency range" },
	{ "country DE:\n\t2400 - 2483 @ 40, (20)\n", "t.txt:2: expected '(' at the start of a rule" },
	{ "country DE:\n\t(2400 - 2483 @ 40), 20\n", "t.txt:2: expected '(' before the power" },
	{ "country DE:\n\t(2400 - 2483 @ 40), (20\n", "t.txt:2: expected ')' after the power" },
	{ "country DE:\n\t(2400 - 2483 @ 40), (x)\n", "t.txt:2: expected power, got 'x'" },
	{ "country DE:\n\t(2483 - 2400 @ 40), (20)\n", "t.txt:2: start frequency 2483000 kHz not below" },
	{ "country DE:\n\t(0 - 2400 @ 40), (20)\n", "t.txt:2: start frequency must be above 0" },
	{ "country DE:\n\t(2400 - 2483 @ 0), (20)\n", "t.txt:2: bandwidth must be above 0" },
	{ "country DE:\n\t(2400.0001 - 2483 @ 40), (20)\n",
	  "t.txt:2: start frequency has more than 3 decimals" },
	{ "country DE:\n\t(2400 - 2483 @ 40), (20.001)\n", "t.txt:2: power has more than 2 decimals" },
	{ "country DE:\n\t(2400 - 2483 @ 40), (2000 dBm)\n", "t.txt:2: power above 1000 dBm" },
	{ "country DE:\n\t(2400 - 2483 @ 40), (0.5 mW)\n", "t.txt:2: power below 1 mW" },
	{ "country DE:\n\t(2400 - 2483 @ 40), (3 mW, 20)\n",
	  "t.txt:2: antenna gain cannot be given in mW" },
	{ "country DE:\n\t(2400 - 2483 @ 40), (20), NO-FOO\n", "t.txt:2: unknown flag 'NO-FOO'" },
	{ "country DE:\n\t(2400 - 2483 @ 40), (20), \n", "t.txt:2: expected a flag after ','" },
	{ "country DE:\n\t(2400 - 2483 @ 40), (20) DFS\n", "t.txt:2: unexpected 'DFS' after the rule" },
	{ "country DE:\n\t(2400 - 2483 @ 40), (20), (60000)\n",
	  "t.txt:2: CAC time on a rule without DFS" },
	{ "country DE:\n\t(2400 - 2483 @ 40), (20), DFS, (60000)\n",
	  "t.txt:2: CAC time must follow the power" },
	{ "country DE:\n\t(2400 - 2483 @ 40), (20), wmmrule=X\n", "t.txt:2: no wmmrule named 'X'" },
	{ "wmmrule W:\n\tvo_c: cw_min=3, cw_max=7, aifsn=2, cot=2\n\ncountry DE:\n"
	  "\t(2400 - 2483 @ 40), (20), wmmrule=W\n",
	  "t.txt:5: wmmrule W (line 1) lacks vi_c" },
	{ "country DE:\n\t(2400 - 2483 @ 40), (20), wmmrule\n", "t.txt:2: expected '=' after wmmrule" },
	{ "country DE:\n\t(2400 - 2483 @ 40), (20)\n\t(2400 - 2483 @ 40), (20)\n",
	  "t.txt:3: country DE: the same rule twice" },
	{ "\t(2400 - 2483 @ 40), (20)\n", "t.txt:1: rule outside a country block" },
	{ "country D:\n", "t.txt:1: expected a two-letter country code" },
	{ "country de:\n", "t.txt:1: expected a two-letter country code" },
	{ "country DE DFS-ETSI\n", "t.txt:1: expected ':' after the country code" },
	{ "country DE: DFS-XX\n", "t.txt:1: unknown DFS region 'DFS-XX'" },
	{ "country DE: DFS-ETSI x\n", "t.txt:1: unexpected 'x' after the DFS region" },
	{ "# one\ncountry DE:\n\ncountry DE:\n", "t.txt:4: country DE already defined on line 2" },
	{ "wmmrule W:\n\tvo_c: cw_min=3, cw_max=7, aifsn=2\n",
	  "t.txt:2: expected ',' between WMM values" },
	{ "wmmrule W:\n\tvo_c: cw_min=4, cw_max=7, aifsn=2, cot=2\n",
	  "t.txt:2: cw_min and cw_max must be 2^n - 1" },
	{ "wmmrule W:\n\tvo_c: cw_min=7, cw_max=7, aifsn=2, cot=2\n",
	  "t.txt:2: cw_min 7 not below cw_max 7" },
	{ "wmmrule W:\n\tvo_c: cw_min=3, cw_max=7, aifsn=0, cot=2\n",
	  "t.txt:2: aifsn must be at least 1" },
	{ "wmmrule W:\n\tvo_c: cw_min=3, cw_max=7, aifsn=2, cot=2\n"
	  "\tvo_c: cw_min=3, cw_max=7, aifsn=2, cot=2\n",
	  "t.txt:3: vo_c given twice in wmmrule W" },
	{ "wmmrule W:\n\tvx_c: cw_min=3, cw_max=7, aifsn=2, cot=2\n",
	  "t.txt:2: unknown access category 'vx_c'" },
	{ "wmmrule W:\n\tvo_c cw_min=3\n", "t.txt:2: expected 'vo_c:' style access category" },
	{ "wmmrule W:\n\nwmmrule W:\n", "t.txt:3: wmmrule W already defined on line 1" },
	{ "wmmrule W\n", "t.txt:1: expected ':' after the wmmrule name" },
	{ "band A: (2400 - 2483 @ 40)\n", "t.txt:1: named band/power definitions are not supported" },
};

START_TEST(grammar_errors_name_their_line)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct regdb_db *db = NULL;
		struct regdb_error err = { "" };

		ck_assert_msg(regdb_dbtxt_parse(bad[i].text, strlen(bad[i].text), "t.txt", &db,
						&err) == -1,
			      "case %zu parsed", i);
		ck_assert_msg(strstr(err.msg, bad[i].want), "case %zu: '%s' lacks '%s'", i, err.msg,
			      bad[i].want);
		ck_assert_ptr_null(db);
	}
}
END_TEST

START_TEST(long_and_nul_lines)
{
	char text[1200];
	struct regdb_db *db = NULL;
	struct regdb_error err;

	memset(text, ' ', sizeof(text));
	memcpy(text, "country DE:\n", 12);
	ck_assert_int_eq(regdb_dbtxt_parse(text, sizeof(text), "t.txt", &db, &err), -1);
	ck_assert_str_eq(err.msg, "t.txt:2: line longer than 511 characters");
	ck_assert_int_eq(regdb_dbtxt_parse("country DE:\n\0", 13, "t.txt", &db, &err), -1);
	ck_assert_str_eq(err.msg, "t.txt:2: NUL byte in the text");
	db = parse_ok("");
	ck_assert_uint_eq(regdb_db_count(db), 0);
	regdb_db_free(db);
}
END_TEST

static struct regdb_db *reparse_binary(const struct regdb_db *db)
{
	uint8_t *buf;
	size_t len;
	struct regdb_db *back = NULL;
	struct regdb_error err = { "" };

	ck_assert_msg(!regdb_db_write(db, &buf, &len, &err), "%s", err.msg);
	ck_assert_uint_eq(len % 4, 0);
	ck_assert_msg(!regdb_db_parse(buf, len, &back, &err), "%s", err.msg);
	free(buf);
	return back;
}

static struct regdb_db *reparse_text(const struct regdb_db *db)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct regdb_error err = { "" };

	ck_assert_msg(!regdb_dbtxt_write(db, f, &err), "%s", err.msg);
	fclose(f);
	struct regdb_db *back = parse_ok(text);

	free(text);
	return back;
}

START_TEST(text_to_binary_round_trip)
{
	struct regdb_db *db = parse_ok(sample), *bin = reparse_binary(db), *txt = reparse_text(db);

	ck_assert(regdb_db_equal(db, bin));
	ck_assert(regdb_db_equal(db, txt));
	regdb_db_free(txt);
	/* what only the text form holds: antenna gain, flags the binary lacks */
	regdb_db_free(db);
	db = parse_ok("country XX:\n\t(2402 - 2482 @ 40), (3.01, 200 mW), NO-CCK, PTP-ONLY, "
		      "NO-HT40, NO-80MHZ\n\t(5170 - 5250.125 @ 0.5), (N/A, 20.5), NO-INDOOR\n");
	ck_assert_int_eq(regdb_db_find(db, "XX")->rules[0].max_ant_gain_mbi, 301);
	ck_assert_uint_eq(regdb_db_find(db, "XX")->rules[1].max_bw_khz, 500);
	txt = reparse_text(db);
	ck_assert(regdb_db_equal(db, txt));
	regdb_db_free(db);
	regdb_db_free(bin);
	regdb_db_free(txt);
}
END_TEST

static void read_packaged(uint8_t **buf, size_t *len)
{
	FILE *f = fopen(REGDB_DEFAULT_PATH, "rb");

	ck_assert_msg(f, "cannot open %s", REGDB_DEFAULT_PATH);
	*buf = malloc(1 << 20);
	*len = fread(*buf, 1, 1 << 20, f);
	fclose(f);
}

/* packaged .db -> db.txt -> parse -> .db: the very bytes Debian ships. */
START_TEST(packaged_file_round_trips_byte_identical)
{
	uint8_t *file, *out;
	size_t len, out_len;
	struct regdb_db *db, *txt;
	struct regdb_error err;

	read_packaged(&file, &len);
	ck_assert_msg(!regdb_db_parse(file, len, &db, &err), "%s", err.msg);
	txt = reparse_text(db);
	ck_assert(regdb_db_equal(db, txt));
	ck_assert_msg(!regdb_db_write(txt, &out, &out_len, &err), "%s", err.msg);
	ck_assert_uint_eq(out_len, len);
	ck_assert_mem_eq(out, file, len);
	free(out);
	free(file);
	regdb_db_free(txt);
	regdb_db_free(db);
}
END_TEST

/* The writer shares equal rules and collections like db2fw.py does. */
START_TEST(writer_deduplicates)
{
	struct regdb_db *db = parse_ok("country AA:\n\t(2402 - 2482 @ 40), (20)\n"
				       "country BB:\n\t(2402 - 2482 @ 40), (20)\n"
				       "country CC: DFS-FCC\n\t(2402 - 2482 @ 40), (20)\n");
	uint8_t *b;
	size_t len;
	struct regdb_error err;

	ck_assert(!regdb_db_write(db, &b, &len, &err));
	/* header 8, index 3*4+4, one 16-byte rule at 24, collections at 40, 48 */
	ck_assert_uint_eq(len, 8 + 16 + 16 + 2 * 8);
	ck_assert_mem_eq(b + 8, "AA\0\012BB\0\012CC\0\014\0\0\0\0", 16);
	ck_assert_uint_eq(b[24], 16);
	ck_assert_mem_eq(b + 40, "\003\001\000\000\000\006\000\000\003\001\001\000\000\006\000\000",
			 16);
	free(b);
	regdb_db_free(db);
}
END_TEST

START_TEST(writer_rejects_what_the_format_cannot_hold)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "country DE:\n\t(2402 - 2482 @ 40), (20), NO-CCK\n",
		  "country DE rule 1: flag NO-CCK cannot be stored in regulatory.db" },
		{ "country DE:\n\t(2402 - 2482 @ 40), (3, 20)\n",
		  "country DE rule 1: regulatory.db has no antenna gain field" },
		{ "country DE:\n\t(5250 - 5330 @ 80), (20), (1500), DFS\n",
		  "country DE rule 1: CAC 1500 ms is not whole seconds" },
		{ "country DE:\n\t(2402 - 2482 @ 40), (700)\n", "country DE rule 1: EIRP 70000 mBm" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct regdb_db *db = parse_ok(cases[i].text);
		struct regdb_error err = { "" };
		uint8_t *b;
		size_t len;

		ck_assert_int_eq(regdb_db_write(db, &b, &len, &err), -1);
		ck_assert_msg(strstr(err.msg, cases[i].want), "case %zu: '%s'", i, err.msg);
		regdb_db_free(db);
	}
}
END_TEST

/* A CAC time is an 18-byte rule, as db2fw.py's length rule gives. */
START_TEST(cac_round_trips_in_an_18_byte_rule)
{
	struct regdb_db *db = parse_ok("country DE:\n\t(5250 - 5330 @ 80), (20), (60000), DFS\n");
	uint8_t *b;
	size_t len;
	struct regdb_error err;

	ck_assert(!regdb_db_write(db, &b, &len, &err));
	ck_assert_uint_eq(b[16], 18);
	ck_assert_uint_eq(b[32] << 8 | b[33], 60);
	ck_assert_uint_eq(b[34] | b[35], 0); /* padding */
	struct regdb_db *back = reparse_binary(db);

	ck_assert_uint_eq(regdb_db_find(back, "DE")->rules[0].cac_ms, 60000);
	ck_assert(regdb_db_equal(db, back));
	free(b);
	regdb_db_free(db);
	regdb_db_free(back);
}
END_TEST

/*
 * cfg80211 (reg_get_max_bandwidth): a wide channel may span adjacent AUTO-BW
 * rules; each 20 MHz part follows the rule it lies in (flags ORed, the lower
 * EIRP), and the width must fit what AUTO-BW widening allows.
 */
START_TEST(auto_bw_channel_spans_adjacent_rules)
{
	struct regdb_db *db = parse_ok("country XX: DFS-ETSI\n"
				       "\t(5150 - 5250 @ 80), (23), AUTO-BW\n"
				       "\t(5250 - 5350 @ 80), (20), DFS, AUTO-BW\n"
				       "country YY:\n"
				       "\t(5150 - 5250 @ 80), (23)\n"
				       "\t(5250 - 5350 @ 80), (20), DFS\n"
				       "country ZZ:\n"
				       "\t(5150 - 5250 @ 80), (23), AUTO-BW\n"
				       "\t(5260 - 5350 @ 80), (20), AUTO-BW\n");
	struct regdb_query q = { .center_khz = 5250000, .width_khz = 160000,
				 .frame = REGDB_FRAME_BEACON };
	struct regdb_verdict v;

	regdb_verdict(regdb_db_find(db, "XX"), &q, &v);
	ck_assert_int_eq(v.reason, REGDB_OK);
	ck_assert_int_eq(v.max_eirp_mbm, 2000);
	ck_assert_uint_eq(v.max_bw_khz, 200000);
	ck_assert(v.needs_cac); /* the upper half is DFS */
	q.frame = REGDB_FRAME_PROBE;
	regdb_verdict(regdb_db_find(db, "XX"), &q, &v);
	ck_assert_int_eq(v.reason, REGDB_DENY_DFS_PASSIVE);
	q.frame = REGDB_FRAME_DATA;
	regdb_verdict(regdb_db_find(db, "YY"), &q, &v); /* no AUTO-BW: 80 MHz per rule */
	ck_assert_int_eq(v.reason, REGDB_DENY_WIDTH);
	regdb_verdict(regdb_db_find(db, "ZZ"), &q, &v); /* 5250-5260 uncovered */
	ck_assert_int_eq(v.reason, REGDB_DENY_NO_RULE);
	q.center_khz = 5210000;
	q.width_khz = 80000;
	regdb_verdict(regdb_db_find(db, "YY"), &q, &v); /* inside one rule */
	ck_assert_int_eq(v.reason, REGDB_OK);
	ck_assert(!v.needs_cac);
	regdb_db_free(db);
}
END_TEST

/*
 * cfg80211's handle_channel_adjacent_rules(): a 20 MHz channel across the
 * boundary of two touching rules (no AUTO-BW needed) takes both: flags ORed,
 * the lower EIRP and bandwidth. With a gap between the rules it is unusable.
 */
START_TEST(channel_across_touching_rules)
{
	struct regdb_db *db = parse_ok("country XX:\n"
				       "\t(5730 - 5850 @ 80), (30)\n"
				       "\t(5850 - 5895 @ 40), (27), NO-IR\n"
				       "country YY:\n"
				       "\t(5730 - 5850 @ 80), (30)\n"
				       "\t(5851 - 5895 @ 40), (27), NO-IR\n");
	struct regdb_query q = { .center_khz = 5845000, .width_khz = 20000 };
	struct regdb_verdict v;

	regdb_verdict(regdb_db_find(db, "XX"), &q, &v);
	ck_assert_int_eq(v.reason, REGDB_OK);
	ck_assert_int_eq(v.max_eirp_mbm, 2700);
	ck_assert_uint_eq(v.max_bw_khz, 40000);
	q.frame = REGDB_FRAME_BEACON;
	regdb_verdict(regdb_db_find(db, "XX"), &q, &v);
	ck_assert_int_eq(v.reason, REGDB_DENY_NO_IR);
	q.center_khz = 5825000; /* wholly in the first rule: its own limits */
	regdb_verdict(regdb_db_find(db, "XX"), &q, &v);
	ck_assert_int_eq(v.reason, REGDB_OK);
	ck_assert_int_eq(v.max_eirp_mbm, 3000);
	q.center_khz = 5845000;
	q.frame = REGDB_FRAME_DATA;
	regdb_verdict(regdb_db_find(db, "YY"), &q, &v);
	ck_assert_int_eq(v.reason, REGDB_DENY_NO_RULE);
	q.center_khz = 5835000; /* 40 MHz 5815-5855: a held part plus the straddling one */
	q.width_khz = 40000;
	regdb_verdict(regdb_db_find(db, "XX"), &q, &v);
	ck_assert_int_eq(v.reason, REGDB_OK);
	ck_assert_int_eq(v.max_eirp_mbm, 2700);
	regdb_db_free(db);
}
END_TEST

/* Mutated db.txt: an error with its line, or a database the writer and the
 * binary reader carry over unchanged (when the format can hold it). */
START_TEST(random_text_mutations_never_crash)
{
	static const char alphabet[] = "()@,-.#:= \n\t0123456789ADFINOSWXmcw_";
	size_t n = strlen(sample);
	char *t = malloc(n + 1);
	uint32_t seed = 777;
	int parsed = 0, failed = 0;

	for (int iter = 0; iter < 4000; iter++) {
		memcpy(t, sample, n + 1);
		for (int k = 0; k < 3; k++) {
			seed = seed * 1103515245u + 12345u;
			t[(seed >> 8) % n] = alphabet[(seed >> 20) % (sizeof(alphabet) - 1)];
		}
		struct regdb_db *db = NULL, *back;
		struct regdb_error err = { "" };
		uint8_t *b;
		size_t len;

		if (regdb_dbtxt_parse(t, n, "t.txt", &db, &err)) {
			ck_assert_msg(!strncmp(err.msg, "t.txt:", 6), "'%s'", err.msg);
			failed++;
			continue;
		}
		parsed++;
		if (!regdb_db_write(db, &b, &len, &err)) {
			ck_assert_msg(!regdb_db_parse(b, len, &back, &err), "%s", err.msg);
			ck_assert(regdb_db_equal(db, back));
			regdb_db_free(back);
			free(b);
		}
		regdb_db_free(db);
	}
	ck_assert_int_gt(parsed, 0);
	ck_assert_int_gt(failed, 0);
	free(t);
}
END_TEST

/* The current domain reloads from a db.txt as from a regulatory.db; a bad
 * one changes nothing and names its line. */
START_TEST(current_reloads_db_txt)
{
	char path[] = "/tmp/regdb-dbtxt-XXXXXX";
	int fd = mkstemp(path);
	static const char good[] = "country 00:\n\t(2402 - 2472 @ 40), (20)\n"
				   "country QQ: DFS-JP\n\t(5170 - 5250 @ 80), (23)\n";
	static const char broken[] = "country QQ:\n\t(5250 - 5170 @ 80), (23)\n";
	struct regdb_error err;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, good, strlen(good)), (ssize_t)strlen(good));
	close(fd);
	struct regdb_current *cur = regdb_current_new(regdb_db_builtin(), &err);

	ck_assert_msg(cur, "%s", err.msg);
	ck_assert_int_eq(regdb_current_set_user(cur, "QQ", &err), -1);
	ck_assert_msg(!regdb_current_reload(cur, path, &err), "%s", err.msg);
	ck_assert_msg(!regdb_current_set_user(cur, "QQ", &err), "%s", err.msg);
	FILE *f = fopen(path, "w");

	fputs(broken, f);
	fclose(f);
	ck_assert_int_eq(regdb_current_reload(cur, path, &err), -1);
	ck_assert_msg(strstr(err.msg, ":2: start frequency 5250000 kHz not below"), "%s", err.msg);
	struct regdb_snapshot *snap = regdb_current_get(cur);
	const struct regdb_domain *d = regdb_snapshot_domain(snap);

	ck_assert_str_eq(d->alpha2, "QQ");
	ck_assert_int_eq(d->dfs_region, REGDB_DFS_JP);
	ck_assert_int_eq(d->rules[0].max_eirp_mbm, 2300);
	regdb_snapshot_put(snap);
	regdb_current_free(cur);
	unlink(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("regdb_dbtxt");
	TCase *tc = tcase_create("dbtxt");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, grammar_sample);
	tcase_add_test(tc, grammar_errors_name_their_line);
	tcase_add_test(tc, long_and_nul_lines);
	tcase_add_test(tc, text_to_binary_round_trip);
	tcase_add_test(tc, packaged_file_round_trips_byte_identical);
	tcase_add_test(tc, writer_deduplicates);
	tcase_add_test(tc, writer_rejects_what_the_format_cannot_hold);
	tcase_add_test(tc, cac_round_trips_in_an_18_byte_rule);
	tcase_add_test(tc, auto_bw_channel_spans_adjacent_rules);
	tcase_add_test(tc, random_text_mutations_never_crash);
	tcase_add_test(tc, channel_across_touching_rules);
	tcase_add_test(tc, current_reloads_db_txt);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
