/* SPDX-License-Identifier: GPL-2.0 */
/*
 * regdb — 802.11 regulatory domains read from Debian's wireless-regdb
 * (/lib/firmware/regulatory.db, format version 20).
 *
 * A database is a set of domains in file order (sorted by alpha2); every
 * domain owns its rules. All parsing is bounds-checked: a malformed file is
 * a one-line error in struct regdb_error, never a crash. The text format
 * db.txt is read and written too, and regulatory.db can be written. Programs
 * linking libregdb.a need $(REGDB_LDLIBS) (regdb/module.mk: jansson, crypto, m).
 */
#ifndef REGDB_REGDB_H
#define REGDB_REGDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum regdb_dfs_region {
	REGDB_DFS_UNSET = 0,
	REGDB_DFS_FCC = 1,
	REGDB_DFS_ETSI = 2,
	REGDB_DFS_JP = 3,
};

/* Rule flags; the bit values are nl80211's enum nl80211_reg_rule_flags. */
enum regdb_flag {
	REGDB_NO_OFDM = 1u << 0,
	REGDB_NO_CCK = 1u << 1,
	REGDB_NO_INDOOR = 1u << 2,
	REGDB_NO_OUTDOOR = 1u << 3,
	REGDB_DFS = 1u << 4,
	REGDB_PTP_ONLY = 1u << 5,
	REGDB_PTMP_ONLY = 1u << 6,
	REGDB_NO_IR = 1u << 7,
	REGDB_AUTO_BW = 1u << 11,
	REGDB_NO_HT40MINUS = 1u << 13,
	REGDB_NO_HT40PLUS = 1u << 14,
	REGDB_NO_HT40 = REGDB_NO_HT40MINUS | REGDB_NO_HT40PLUS,
	REGDB_NO_80MHZ = 1u << 15,
	REGDB_NO_160MHZ = 1u << 16,
	REGDB_NO_320MHZ = 1u << 18,
};

struct regdb_wmm_ac {
	uint16_t cw_min, cw_max;
	uint8_t aifsn;
	uint16_t cot_ms;
};

struct regdb_wmm {
	struct regdb_wmm_ac client[4], ap[4]; /* VO, VI, BE, BK */
};

struct regdb_rule {
	uint32_t start_khz, end_khz, max_bw_khz;
	int32_t max_ant_gain_mbi, max_eirp_mbm;
	uint32_t cac_ms;
	uint32_t flags; /* enum regdb_flag */
	bool has_wmm;
	struct regdb_wmm wmm;
};

struct regdb_domain {
	char alpha2[3];
	enum regdb_dfs_region dfs_region;
	unsigned int n_rules;
	struct regdb_rule rules[];
};

struct regdb_error {
	char msg[256];
};

struct regdb_db;

/* Names: "DFS-FCC" style for regions, "NO-OUTDOOR" style for flags. */
const char *regdb_dfs_name(enum regdb_dfs_region r); /* "UNSET", "FCC", ... */
/* Write flag names joined by sep into buf ("-" when none); returns buf. */
char *regdb_flags_str(uint32_t flags, const char *sep, char *buf, size_t size);
/* One flag name to its bits; 0 when unknown. */
uint32_t regdb_flag_from_name(const char *name);

struct regdb_domain *regdb_domain_new(const char *alpha2, enum regdb_dfs_region dfs,
				      unsigned int n_rules);
bool regdb_domain_equal(const struct regdb_domain *a, const struct regdb_domain *b);
/* `iw reg get`'s layout: "country DE: DFS-ETSI", then one tab-indented
 * "(start - end @ bw), (N/A, eirp), (cac ms|N/A), FLAGS" line per rule. */
void regdb_domain_print(const struct regdb_domain *d, FILE *out);

/* Binary regulatory.db. */
int regdb_db_parse(const void *buf, size_t len, struct regdb_db **out, struct regdb_error *err);
int regdb_db_load(const char *path, struct regdb_db **out, struct regdb_error *err);
void regdb_db_free(struct regdb_db *db);
/* Check regulatory.db.p7s (detached PKCS#7, as the kernel does) against the
 * X.509 certificates in cert_path (PEM, one or more, or one DER). 0 valid. */
int regdb_verify_signature(const void *data, size_t len, const void *sig, size_t sig_len,
			   const char *cert_path, struct regdb_error *err);
/*
 * The wireless-regdb text grammar (db.txt): `country XX: DFS-ETSI` lines,
 * rules `(start - end @ bw), (eirp[ mW|dBm]), [(cac ms),] FLAG, ...,
 * [wmmrule=NAME]` (also the older `(gain, eirp)` power form), `wmmrule NAME:`
 * blocks of `vo_c: cw_min=N, cw_max=N, aifsn=N, cot=N` lines, `#` comments.
 * A country's rules are kept sorted as db2fw.py stores them. Errors name the
 * line: "db.txt:12: expected ')' after frequency range". name labels them.
 */
int regdb_dbtxt_parse(const char *text, size_t len, const char *name, struct regdb_db **out,
		      struct regdb_error *err);
int regdb_dbtxt_load(const char *path, struct regdb_db **out, struct regdb_error *err);
/* Either format: db.txt when the file starts with text, else regulatory.db. */
int regdb_load(const char *path, struct regdb_db **out, struct regdb_error *err);
/* db.txt for db that regdb_dbtxt_parse reads back to an equal database
 * (when each domain's rules are in db2fw.py's order, as in every file it
 * wrote; the parser sorts them). */
int regdb_dbtxt_write(const struct regdb_db *db, FILE *f, struct regdb_error *err);
/*
 * regulatory.db v20 laid out as wireless-regdb's db2fw.py does: header,
 * sorted country index, the distinct WMM rules, the distinct rules and the
 * distinct (rules, DFS region) collections, each set sorted. *buf is
 * malloc'ed. Fails on what the format cannot hold (antenna gain, flags other
 * than NO-OFDM/NO-OUTDOOR/DFS/NO-IR/AUTO-BW, CAC not in whole seconds).
 */
int regdb_db_write(const struct regdb_db *db, uint8_t **buf, size_t *len, struct regdb_error *err);
int regdb_db_save(const struct regdb_db *db, const char *path, struct regdb_error *err);
bool regdb_db_equal(const struct regdb_db *a, const struct regdb_db *b);
/* A database of n domains sorted by alpha2 (taken over, freed on error). */
struct regdb_db *regdb_db_new(struct regdb_domain **domains, size_t n, struct regdb_error *err);
/* World "00", US, DE and JP, generated at build time from the packaged
 * regulatory.db: for when no database file can be read. */
struct regdb_db *regdb_db_builtin(void);
size_t regdb_db_count(const struct regdb_db *db);
const struct regdb_domain *regdb_db_domain(const struct regdb_db *db, size_t i);
const struct regdb_domain *regdb_db_find(const struct regdb_db *db, const char *alpha2);

/* Per-channel verdicts. */
enum regdb_frame { REGDB_FRAME_DATA, REGDB_FRAME_PROBE, REGDB_FRAME_BEACON };

struct regdb_query {
	uint32_t center_khz, width_khz;
	enum regdb_frame frame;
	bool outdoor;
	bool ptp;		/* point-to-point link (else point-to-multipoint) */
	bool cck;		/* CCK (802.11b) modulation (else OFDM) */
	bool check_power;
	int32_t tx_power_mbm;
};

enum regdb_deny {
	REGDB_OK = 0,
	REGDB_DENY_NO_RULE,
	REGDB_DENY_WIDTH,
	REGDB_DENY_NO_IR,
	REGDB_DENY_DFS_PASSIVE,
	REGDB_DENY_INDOOR_ONLY,
	REGDB_DENY_OUTDOOR_ONLY,
	REGDB_DENY_PTP_ONLY,
	REGDB_DENY_PTMP_ONLY,
	REGDB_DENY_NO_OFDM,
	REGDB_DENY_NO_CCK,
	REGDB_DENY_POWER,
};

struct regdb_verdict {
	enum regdb_deny reason; /* REGDB_OK: allowed */
	int32_t max_eirp_mbm;
	uint32_t max_bw_khz;
	bool needs_cac;
	uint32_t cac_ms;
};

const char *regdb_deny_str(enum regdb_deny r);
/* cfg80211 semantics: every 20 MHz part of the channel lies in a rule (the
 * first that holds it) whose maximum bandwidth, widened across touching
 * rules when AUTO-BW, covers the width; flags are ORed and the lowest EIRP
 * counts, so an 80/160 MHz channel may span adjacent rules. */
void regdb_verdict(const struct regdb_domain *d, const struct regdb_query *q,
		   struct regdb_verdict *v);
/* reg_get_max_bandwidth(): AUTO-BW widening plus the NO-xxMHZ limits. */
uint32_t regdb_rule_max_bw(const struct regdb_domain *d, unsigned int idx);

/*
 * cfg80211's regdom_intersect(): every overlapping pair of rules gives a rule
 * with the overlap, the smaller bandwidth (AUTO-BW widened first) and power,
 * the OR of the flags (AUTO-BW only if both had it) and the longer CAC; a
 * rule contained in an earlier one is dropped. Named "98"; the DFS region
 * survives only when both agree. NULL when nothing overlaps or out of memory.
 */
struct regdb_domain *regdb_intersect(const struct regdb_domain *a, const struct regdb_domain *b);
struct regdb_domain *regdb_domain_dup(const struct regdb_domain *d);

/* Channel numbering and the channels of a domain to scan. */
enum regdb_band { REGDB_BAND_2GHZ, REGDB_BAND_5GHZ, REGDB_BAND_6GHZ, REGDB_BAND_60GHZ };

struct regdb_channel {
	enum regdb_band band;
	uint16_t number;
	uint32_t center_khz, width_khz; /* 20 MHz; 2160 MHz at 60 GHz */
	int32_t max_eirp_mbm;
	uint32_t max_bw_khz;
	uint32_t flags; /* of the rule: NO-IR/DFS mean scan passively */
};

/* Center frequency of a channel number, 0 when the band has no such channel. */
uint32_t regdb_channel_khz(enum regdb_band band, unsigned int number);
/* The band's channels that lie inside a rule of d, ascending; returns how
 * many there are (only the first max are written). */
size_t regdb_channels(const struct regdb_domain *d, enum regdb_band band,
		      struct regdb_channel *out, size_t max);

/* ISO 3166-1 from Debian's iso-codes JSON (ISO3166_JSON_PATH). */
struct regdb_iso_country {
	char alpha2[3], alpha3[4];
	uint16_t numeric;
	char *name, *official_name, *common_name; /* the last two may be NULL */
};

struct regdb_iso {
	size_t n;
	struct regdb_iso_country *c;
};

int regdb_iso_load(const char *path, struct regdb_iso *iso, struct regdb_error *err);
void regdb_iso_free(struct regdb_iso *iso);
const struct regdb_iso_country *regdb_iso_by_alpha2(const struct regdb_iso *iso, const char *a2);
const struct regdb_iso_country *regdb_iso_by_alpha3(const struct regdb_iso *iso, const char *a3);
const struct regdb_iso_country *regdb_iso_by_numeric(const struct regdb_iso *iso, unsigned int n);
/* Case-insensitive match of name, official_name or common_name. */
const struct regdb_iso_country *regdb_iso_by_name(const struct regdb_iso *iso, const char *name);
/* Any of the above: "DE", "DEU", "276", "Germany". */
const struct regdb_iso_country *regdb_iso_resolve(const struct regdb_iso *iso, const char *key);

/* 802.11d Country element (EID 7): alpha2, environment, channel triplets. */
#define REGDB_EID_COUNTRY 7
#define REGDB_IE_MAX_TRIPLETS 84

struct regdb_country_triplet {
	uint8_t first_chan, n_chans; /* first_chan >= 201: operating triplet */
	int8_t max_power_dbm;	     /* (or reg class / coverage class) */
};

struct regdb_country_ie {
	char alpha2[3];
	char env; /* ' ' any, 'I' indoor, 'O' outdoor, 'X' non-country */
	unsigned int n;
	struct regdb_country_triplet t[REGDB_IE_MAX_TRIPLETS];
};

/* Whole element (ID, length, body) for the 2.4 and 5 GHz channels of d;
 * returns its length, or -1 when it does not fit in size. */
int regdb_country_ie_build(const struct regdb_domain *d, char env, uint8_t *buf, size_t size);
int regdb_country_ie_parse(const uint8_t *ie, size_t len, struct regdb_country_ie *out,
			   struct regdb_error *err);

/*
 * The stack-wide current domain. Hints combine like cfg80211: a user hint
 * replaces the domain; a country IE hint applies the IE's country, or the
 * intersection with the user's when a different user hint is set. Every
 * change (and regdb_current_reload) builds a complete new snapshot first and
 * then swaps one pointer, so readers never see a half-built domain; old
 * snapshots live until their last reader lets go (reference counts).
 *
 * Per frame, a radio keeps a struct regdb_reader: one atomic load of the
 * generation, then the verdict on its own snapshot — no lock on the hot path.
 */
struct regdb_current;
struct regdb_snapshot;

/* Takes ownership of db; starts on the world domain "00". */
struct regdb_current *regdb_current_new(struct regdb_db *db, struct regdb_error *err);
void regdb_current_free(struct regdb_current *cur);
int regdb_current_set_user(struct regdb_current *cur, const char *alpha2, struct regdb_error *err);
int regdb_current_set_country_ie(struct regdb_current *cur, const char *alpha2,
				 struct regdb_error *err);
void regdb_current_clear_country_ie(struct regdb_current *cur);
/* Load a new database file (regdb_load: either format) and re-apply the
 * hints; on error nothing changes. */
int regdb_current_reload(struct regdb_current *cur, const char *path, struct regdb_error *err);
/* The same with a new user hint, in one step: a database that lacks the
 * country changes nothing (a restored state that names both). */
int regdb_current_reload_user(struct regdb_current *cur, const char *path, const char *alpha2,
			      struct regdb_error *err);

struct regdb_snapshot *regdb_current_get(struct regdb_current *cur);
void regdb_snapshot_put(struct regdb_snapshot *s);
const struct regdb_domain *regdb_snapshot_domain(const struct regdb_snapshot *s);

struct regdb_reader {
	struct regdb_current *cur;
	struct regdb_snapshot *snap;
	uint64_t gen;
};

void regdb_reader_init(struct regdb_reader *rd, struct regdb_current *cur);
void regdb_reader_release(struct regdb_reader *rd);
void regdb_reader_verdict(struct regdb_reader *rd, const struct regdb_query *q,
			  struct regdb_verdict *v);

#endif
