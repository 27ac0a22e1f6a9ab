/* regulatory.c — the seam between the medium and regdb: one current
 * domain for the whole medium (regdb_current), a verdict cache, DFS
 * channel-availability checks, radar non-occupancy and the path loss.
 *
 * regdb_verdict walks the domain's rules (hundreds of ns for a wide
 * channel); a medium sees few distinct channels, so the answer is cached
 * per (domain generation, frequency, width, frame kind): a hit is a hash,
 * one compare and the time-dependent DFS checks. A country change bumps
 * the generation, which invalidates every entry at once. Not thread-safe:
 * the medium calls it under its lock. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "build/config.h"
#include "wlan/wlan.h"

#define CACHE_SIZE 256 /* a power of two */
#define NS_PER_S 1000000000ull
#define DEFAULT_NOP_S 1800 /* IEEE80211_DFS_MIN_NOP_TIME_MS */

struct cache_entry {
	uint32_t gen, freq_mhz;
	uint16_t width_mhz;
	uint8_t kind;
	uint8_t drop; /* enum wlan_drop; WLAN_DROP_N: allowed */
	bool needs_cac;
	uint32_t lo_mhz, hi_mhz; /* the channel's span, for radar overlap */
	uint64_t cac_ns;
	int32_t signal_dbm;
};

struct wlan_reg {
	struct regdb_current *cur;
	struct regdb_reader rd;
	char country[3];
	uint32_t gen;
	bool outdoor;
	uint64_t cac_override_ns; /* UINT64_MAX: the rule's */
	uint64_t nop_ns;
	int txpower_dbm;
	double distance_m, path_exp;
	struct {
		uint32_t freq_mhz;
		int32_t signal_dbm;
	} memo[64]; /* wlan_reg_signal's answers by frequency */
	struct wlan_radar radar[WLAN_MAX_RADAR];
	unsigned n_radar;
	struct cache_entry cache[CACHE_SIZE];
};

static void set_err(char *err, size_t errlen, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
}

static struct regdb_db *load_db(const char *path, char *err, size_t errlen)
{
	struct regdb_error e;
	struct regdb_db *db;

	if (regdb_load(path ? path : REGDB_DEFAULT_PATH, &db, &e) == 0)
		return db;
	if (path) { /* asked for this file: say why not */
		set_err(err, errlen, e.msg);
		return NULL;
	}
	return regdb_db_builtin(); /* no packaged database: world, US, DE, JP */
}

struct wlan_reg *wlan_reg_new(const struct wlan_medium_cfg *cfg, char *err, size_t errlen)
{
	struct regdb_db *db = load_db(cfg->regdb, err, errlen);
	struct wlan_reg *r;
	struct regdb_error e;

	if (!db)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r || !(r->cur = regdb_current_new(db, &e))) {
		set_err(err, errlen, r ? e.msg : "out of memory");
		if (!r)
			regdb_db_free(db);
		free(r);
		return NULL;
	}
	regdb_reader_init(&r->rd, r->cur);
	strcpy(r->country, "00");
	r->gen = 1;
	r->outdoor = cfg->outdoor;
	r->cac_override_ns = cfg->cac_s >= 0 ? (uint64_t)cfg->cac_s * NS_PER_S : UINT64_MAX;
	r->nop_ns = (uint64_t)(cfg->nop_s >= 0 ? cfg->nop_s : DEFAULT_NOP_S) * NS_PER_S;
	r->txpower_dbm = cfg->txpower_dbm ? cfg->txpower_dbm : 20;
	r->distance_m = cfg->distance_m > 0 ? cfg->distance_m : 10;
	r->path_exp = cfg->path_exp > 0 ? cfg->path_exp : 3;
	if (cfg->country && wlan_reg_set_country(r, cfg->country, err, errlen)) {
		wlan_reg_free(r);
		return NULL;
	}
	return r;
}

void wlan_reg_free(struct wlan_reg *r)
{
	if (!r)
		return;
	regdb_reader_release(&r->rd);
	regdb_current_free(r->cur);
	free(r);
}

/* "DE", or "DEU" / "276" / "Germany" through ISO 3166-1 (iso-codes). */
static bool resolve_alpha2(const char *key, char out[3])
{
	struct regdb_iso iso;
	struct regdb_error e;
	bool ok = false;

	if (strlen(key) == 2) {
		out[0] = (char)(key[0] >= 'a' && key[0] <= 'z' ? key[0] - 32 : key[0]);
		out[1] = (char)(key[1] >= 'a' && key[1] <= 'z' ? key[1] - 32 : key[1]);
		out[2] = 0;
		return true;
	}
	if (regdb_iso_load(ISO3166_JSON_PATH, &iso, &e))
		return false;
	const struct regdb_iso_country *c = regdb_iso_resolve(&iso, key);

	if (c) {
		memcpy(out, c->alpha2, 3);
		ok = true;
	}
	regdb_iso_free(&iso);
	return ok;
}

int wlan_reg_set_country(struct wlan_reg *r, const char *key, char *err, size_t errlen)
{
	struct regdb_error e;
	char a2[3];

	if (!resolve_alpha2(key, a2)) {
		snprintf(err, errlen, "unknown country '%s' (ISO 3166-1 alpha-2, alpha-3 or name)",
			 key);
		return -1;
	}
	if (regdb_current_set_user(r->cur, a2, &e)) {
		set_err(err, errlen, e.msg);
		return -1;
	}
	memcpy(r->country, a2, 3);
	r->gen++;
	return 0;
}

int wlan_reg_reload(struct wlan_reg *r, const char *path, char *err, size_t errlen)
{
	return wlan_reg_reload_country(r, path, NULL, err, errlen);
}

/* alpha2 NULL: the database only, the country as it was. */
int wlan_reg_reload_country(struct wlan_reg *r, const char *path, const char *alpha2, char *err,
			    size_t errlen)
{
	const char *file = path ? path : REGDB_DEFAULT_PATH;
	struct regdb_error e;

	if (alpha2 ? regdb_current_reload_user(r->cur, file, alpha2, &e)
		   : regdb_current_reload(r->cur, file, &e)) {
		set_err(err, errlen, e.msg);
		return -1;
	}
	if (alpha2)
		snprintf(r->country, sizeof(r->country), "%s", alpha2);
	r->gen++;
	return 0;
}

const char *wlan_reg_country(struct wlan_reg *r)
{
	return r->country;
}

uint64_t wlan_reg_nop_ns(const struct wlan_reg *r)
{
	return r->nop_ns;
}

/* ------------------------------------------------------------ channels */

/* The center of the 40/80/160 MHz block a 5 or 6 GHz primary channel
 * belongs to (channel 36 at 80 MHz: 5210); 2.4 GHz stays at the primary
 * (HT40+/- is not in the message, so the primary's 20 MHz is what is known). */
static uint32_t block_center_mhz(uint32_t freq, uint32_t width)
{
	uint32_t ch, base, span = width / 5; /* channel numbers per block */

	if (width <= 20 || freq < 5000 || freq > 7125 || (freq - 5000) % 5)
		return freq;
	if (freq >= 5955) {
		ch = (freq - 5950) / 5;
		base = 1;
	} else {
		ch = (freq - 5000) / 5;
		base = ch >= 149 ? 149 : 36;
	}
	if (ch < base || (ch - base) % 4)
		return freq;
	uint32_t first = base + (ch - base) / span * span;

	return freq + (first + span / 2 - 2 - ch) * 5;
}

bool wlan_reg_overlaps(uint32_t freq_mhz, uint32_t width_mhz, uint32_t lo_mhz, uint32_t hi_mhz)
{
	uint32_t c = block_center_mhz(freq_mhz, width_mhz), half = width_mhz / 2;

	return c - half < hi_mhz && c + half > lo_mhz;
}

/* Log-distance path loss on the free-space reference at 1 m. */
static int32_t signal_dbm(const struct wlan_reg *r, uint32_t freq_mhz, int32_t eirp_mbm)
{
	double tx = r->txpower_dbm < eirp_mbm / 100 ? r->txpower_dbm : eirp_mbm / 100;
	double loss = 20 * log10(freq_mhz) - 27.55 + 10 * r->path_exp * log10(r->distance_m);

	return (int32_t)lround(tx - loss);
}

static enum wlan_drop drop_of(enum regdb_deny d)
{
	switch (d) {
	case REGDB_OK:
		return WLAN_DROP_N;
	case REGDB_DENY_NO_RULE:
		return WLAN_DROP_NO_RULE;
	case REGDB_DENY_WIDTH:
		return WLAN_DROP_WIDTH;
	case REGDB_DENY_NO_IR:
		return WLAN_DROP_NO_IR;
	case REGDB_DENY_DFS_PASSIVE:
		return WLAN_DROP_DFS_PASSIVE;
	case REGDB_DENY_INDOOR_ONLY:
		return WLAN_DROP_NO_OUTDOOR;
	default:
		return WLAN_DROP_OTHER_RULE;
	}
}

static void fill_entry(struct wlan_reg *r, struct cache_entry *e, const struct wlan_tx *tx)
{
	uint32_t center = block_center_mhz(tx->freq_mhz, tx->width_mhz);
	struct regdb_query q = {
		.center_khz = center * 1000,
		.width_khz = tx->width_mhz * 1000,
		.frame = tx->kind,
		.outdoor = r->outdoor,
	};
	struct regdb_verdict v;

	regdb_reader_verdict(&r->rd, &q, &v);
	*e = (struct cache_entry){
		.gen = r->gen,
		.freq_mhz = tx->freq_mhz,
		.width_mhz = (uint16_t)tx->width_mhz,
		.kind = (uint8_t)tx->kind,
		.drop = (uint8_t)drop_of(v.reason),
		.needs_cac = v.needs_cac,
		.lo_mhz = center - tx->width_mhz / 2,
		.hi_mhz = center + tx->width_mhz / 2,
		.cac_ns = r->cac_override_ns != UINT64_MAX ? r->cac_override_ns
							   : (uint64_t)v.cac_ms * 1000000,
		.signal_dbm = signal_dbm(r, tx->freq_mhz, v.reason ? 0 : v.max_eirp_mbm),
	};
}

static bool radar_closed(struct wlan_reg *r, const struct cache_entry *e, uint64_t now)
{
	for (unsigned i = 0; i < r->n_radar; i++) {
		struct wlan_radar *x = &r->radar[i];

		if (x->until_ns <= now) { /* expired: forget it */
			*x = r->radar[--r->n_radar];
			i--;
			continue;
		}
		if (x->lo_mhz < e->hi_mhz && x->hi_mhz > e->lo_mhz)
			return true;
	}
	return false;
}

enum wlan_drop wlan_reg_check(struct wlan_reg *r, const struct wlan_tx *tx, uint64_t now,
			      int32_t *signal)
{
	unsigned h = (tx->freq_mhz * 7 + tx->width_mhz + tx->kind * 131) & (CACHE_SIZE - 1);
	struct cache_entry *e = &r->cache[h];

	if (e->gen != r->gen || e->freq_mhz != tx->freq_mhz || e->width_mhz != tx->width_mhz ||
	    e->kind != tx->kind)
		fill_entry(r, e, tx);
	*signal = e->signal_dbm;
	if (e->drop != WLAN_DROP_N)
		return (enum wlan_drop)e->drop;
	if (r->n_radar && radar_closed(r, e, now))
		return WLAN_DROP_RADAR;
	if (e->needs_cac && tx->on_channel_ns < e->cac_ns)
		return WLAN_DROP_CAC;
	return WLAN_DROP_N;
}

uint64_t wlan_reg_radar(struct wlan_reg *r, uint32_t freq_mhz, uint64_t now)
{
	struct wlan_radar x = {freq_mhz - 10, freq_mhz + 10, now + r->nop_ns};

	for (unsigned i = 0; i < r->n_radar; i++) {
		if (r->radar[i].lo_mhz == x.lo_mhz) { /* again: the NOP restarts */
			r->radar[i] = x;
			return x.until_ns;
		}
	}
	if (r->n_radar == WLAN_MAX_RADAR) /* full: the newest event wins a slot */
		r->n_radar--;
	r->radar[r->n_radar++] = x;
	return x.until_ns;
}

unsigned wlan_reg_radars(const struct wlan_reg *r, uint64_t now, struct wlan_radar *out)
{
	unsigned n = 0;

	for (unsigned i = 0; i < r->n_radar; i++)
		if (r->radar[i].until_ns > now)
			out[n++] = r->radar[i];
	return n;
}

void wlan_reg_set_radars(struct wlan_reg *r, const struct wlan_radar *list, unsigned n)
{
	r->n_radar = n < WLAN_MAX_RADAR ? n : WLAN_MAX_RADAR;
	memcpy(r->radar, list, r->n_radar * sizeof(*list));
}

int32_t wlan_reg_signal(struct wlan_reg *r, uint32_t freq_mhz)
{
	unsigned h = (freq_mhz / 5) & 63;

	if (r->memo[h].freq_mhz != freq_mhz) {
		r->memo[h].freq_mhz = freq_mhz;
		r->memo[h].signal_dbm = signal_dbm(r, freq_mhz, r->txpower_dbm * 100);
	}
	return r->memo[h].signal_dbm;
}

void wlan_reg_print(struct wlan_reg *r, FILE *out)
{
	struct regdb_snapshot *s = regdb_current_get(r->cur);

	fprintf(out, "global\n");
	regdb_domain_print(regdb_snapshot_domain(s), out);
	regdb_snapshot_put(s);
}
