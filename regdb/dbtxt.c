// SPDX-License-Identifier: GPL-2.0
/*
 * The wireless-regdb text format, db.txt (what dbparse.py reads):
 *
 *   # comment
 *   wmmrule ETSI:
 *   	vo_c: cw_min=3, cw_max=7, aifsn=2, cot=2      (and vi_c be_c bk_c vo_ap ...)
 *
 *   country DE: DFS-ETSI
 *   	(2400 - 2483.5 @ 40), (100 mW)
 *   	(5250 - 5350 @ 80), (100 mW), NO-OUTDOOR, DFS, AUTO-BW, wmmrule=ETSI
 *
 * Frequencies in MHz (up to 3 decimals, exact to the kHz), bandwidth 20 MHz
 * when "@ bw" is left out; power in dBm (up to 2 decimals), "N mW" (converted
 * like dbparse.py: 10 log10, then truncated to mBm) or N/A; the older
 * "(gain, eirp)" form and genregdb.awk's "(cac ms)" field after the power are
 * read too. `country A,B:` gives several countries the same rules. Lines are
 * read whole; blank lines end a wmmrule block. Every error names its line.
 */
#include "regdb/internal.h"
#include "regdb/regdb.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE 512
#define MAX_NAME 32

static const char *const ac_names[8] = { "vo_c", "vi_c", "be_c", "bk_c",
					 "vo_ap", "vi_ap", "be_ap", "bk_ap" };

struct wmm_def {
	char name[MAX_NAME];
	unsigned int line, have; /* bit k: ac_names[k] given */
	struct regdb_wmm w;
};

struct country {
	char alpha2[3];
	enum regdb_dfs_region dfs;
	unsigned int line, n, cap;
	struct regdb_rule *rules;
};

struct txt {
	const char *name;
	unsigned int line;
	const char *p; /* cursor in the current line (NUL-terminated copy) */
	struct regdb_error *err;
	struct wmm_def *wmm, *cur_wmm;
	size_t n_wmm;
	struct country *c;
	size_t n_c, cur_first, cur_n; /* the countries the current block fills */
};

#define fail(t, fmt, ...) regdb_fail((t)->err, "%s:%u: " fmt, (t)->name, (t)->line, ##__VA_ARGS__)

static void skip_ws(struct txt *t)
{
	while (*t->p == ' ' || *t->p == '\t' || *t->p == '\r')
		t->p++;
}

static bool accept(struct txt *t, char c)
{
	skip_ws(t);
	if (*t->p != c)
		return false;
	t->p++;
	return true;
}

static bool at_end(struct txt *t)
{
	skip_ws(t);
	return !*t->p;
}

/* The next token for messages: "'x'" or "end of line". */
static const char *seen(struct txt *t, char *buf, size_t size)
{
	skip_ws(t);
	if (!*t->p)
		return "end of line";
	size_t n = strcspn(t->p, " \t,()");

	snprintf(buf, size, "'%.*s'", (int)(n ? (n > 20 ? 20 : n) : 1), t->p);
	return buf;
}

static int expect(struct txt *t, char c, const char *where)
{
	char b[32];

	if (accept(t, c))
		return 0;
	return fail(t, "expected '%c' %s, got %s", c, where, seen(t, b, sizeof(b)));
}

/* A word of letters, digits, '_', '-' and '/' into buf. */
static bool word(struct txt *t, char *buf, size_t size)
{
	size_t n = 0;

	skip_ws(t);
	while (isalnum((unsigned char)t->p[n]) || t->p[n] == '_' || t->p[n] == '-' ||
	       t->p[n] == '/')
		n++;
	if (!n || n >= size)
		return false;
	memcpy(buf, t->p, n);
	buf[n] = '\0';
	t->p += n;
	return true;
}

/* An unsigned decimal with at most `frac` fractional digits, scaled by 10^frac. */
static int decimal(struct txt *t, int frac, uint64_t max, const char *what, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0, fdigits = -1;
	char b[32];

	skip_ws(t);
	for (;; t->p++) {
		char ch = *t->p;

		if (ch == '.' && fdigits < 0) {
			fdigits = 0;
			continue;
		}
		if (!isdigit((unsigned char)ch))
			break;
		if (fdigits >= 0 && ++fdigits > frac) {
			if (ch != '0')
				return fail(t, "%s has more than %d decimals", what, frac);
			continue;
		}
		digits++;
		v = v * 10 + (uint64_t)(ch - '0');
		if (v > max * 1000)
			return fail(t, "%s too large", what);
	}
	if (!digits)
		return fail(t, "expected %s, got %s", what, seen(t, b, sizeof(b)));
	for (int i = fdigits < 0 ? 0 : fdigits; i < frac; i++)
		v *= 10;
	if (v > max)
		return fail(t, "%s too large", what);
	*out = v;
	return 0;
}

static int freq_khz(struct txt *t, const char *what, uint32_t *out)
{
	uint64_t v;

	/* up to what regulatory.db (be32 kHz) and the model hold */
	if (decimal(t, 3, UINT32_MAX, what, &v))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* "N/A", "N" dBm, "N dBm" or "N mW" to mBm; mW like dbparse.py and db2fw.py. */
static int power_mbm(struct txt *t, const char *what, bool allow_mw, int32_t *out)
{
	const char *start;
	uint64_t v;

	skip_ws(t);
	if (!strncmp(t->p, "N/A", 3)) {
		t->p += 3;
		*out = 0;
		return 0;
	}
	start = t->p;
	if (decimal(t, 2, 100000000, what, &v))
		return -1;
	skip_ws(t);
	if (!strncmp(t->p, "mW", 2)) {
		if (!allow_mw)
			return fail(t, "%s cannot be given in mW", what);
		double mw = strtod(start, NULL);

		t->p += 2;
		if (mw < 1)
			return fail(t, "%s below 1 mW", what);
		*out = (int32_t)(10.0 * log10(mw) * 100);
		return 0;
	}
	if (!strncmp(t->p, "dBm", 3))
		t->p += 3;
	if (v > 100000)
		return fail(t, "%s above 1000 dBm", what);
	*out = (int32_t)v;
	return 0;
}

static int range(struct txt *t, struct regdb_rule *r)
{
	if (expect(t, '(', "at the start of a rule") ||
	    freq_khz(t, "start frequency", &r->start_khz) ||
	    expect(t, '-', "between start and end frequency") ||
	    freq_khz(t, "end frequency", &r->end_khz))
		return -1;
	r->max_bw_khz = 20000;
	if (accept(t, '@') && freq_khz(t, "bandwidth", &r->max_bw_khz))
		return -1;
	if (expect(t, ')', "after frequency range"))
		return -1;
	if (!r->start_khz)
		return fail(t, "start frequency must be above 0");
	if (r->start_khz >= r->end_khz)
		return fail(t, "start frequency %u kHz not below end frequency %u kHz", r->start_khz,
			    r->end_khz);
	if (!r->max_bw_khz)
		return fail(t, "bandwidth must be above 0");
	return 0;
}

static int power(struct txt *t, struct regdb_rule *r)
{
	const char *first;

	if (expect(t, ',', "after frequency range") || expect(t, '(', "before the power"))
		return -1;
	skip_ws(t);
	first = t->p;
	if (power_mbm(t, "power", true, &r->max_eirp_mbm))
		return -1;
	if (accept(t, ',')) { /* the older (max antenna gain dBi, max EIRP) */
		t->p = first;
		if (power_mbm(t, "antenna gain", false, &r->max_ant_gain_mbi) || !accept(t, ',') ||
		    power_mbm(t, "EIRP", true, &r->max_eirp_mbm))
			return -1;
	}
	return expect(t, ')', "after the power");
}

static struct wmm_def *find_wmm(struct txt *t, const char *name)
{
	for (size_t i = 0; i < t->n_wmm; i++)
		if (!strcmp(t->wmm[i].name, name))
			return &t->wmm[i];
	return NULL;
}

static int wmm_ref(struct txt *t, struct regdb_rule *r)
{
	char name[MAX_NAME];

	if (expect(t, '=', "after wmmrule"))
		return -1;
	if (!word(t, name, sizeof(name)))
		return fail(t, "expected a wmmrule name after 'wmmrule='");
	const struct wmm_def *w = find_wmm(t, name);

	if (!w)
		return fail(t, "no wmmrule named '%s'", name);
	if (w->have != 0xff)
		return fail(t, "wmmrule %s (line %u) lacks %s", name, w->line,
			    ac_names[__builtin_ctz(~w->have & 0xff)]);
	r->has_wmm = true;
	r->wmm = w->w;
	return 0;
}

static int cac(struct txt *t, struct regdb_rule *r)
{
	uint64_t ms;

	/* up to what regulatory.db holds: be16 seconds */
	if (decimal(t, 0, 65535000, "CAC time (ms)", &ms) || expect(t, ')', "after the CAC time"))
		return -1;
	r->cac_ms = (uint32_t)ms;
	return 0;
}

/* ", FLAG", ", (cac)" and a final ", wmmrule=NAME". */
static int flags(struct txt *t, struct regdb_rule *r)
{
	char name[MAX_NAME], b[32];

	while (accept(t, ',')) {
		if (r->has_wmm)
			return fail(t, "wmmrule= must come last");
		if (accept(t, '(')) {
			if (r->flags || r->cac_ms)
				return fail(t, "CAC time must follow the power, before the flags");
			if (cac(t, r))
				return -1;
			continue;
		}
		if (!word(t, name, sizeof(name)))
			return fail(t, "expected a flag after ',', got %s", seen(t, b, sizeof(b)));
		if (!strcmp(name, "wmmrule")) {
			if (wmm_ref(t, r))
				return -1;
			continue;
		}
		uint32_t bits = regdb_flag_from_name(name);

		if (!bits)
			return fail(t, "unknown flag '%s'", name);
		r->flags |= bits;
	}
	if (!at_end(t))
		return fail(t, "unexpected %s after the rule", seen(t, b, sizeof(b)));
	if (r->cac_ms && !(r->flags & REGDB_DFS))
		return fail(t, "CAC time on a rule without DFS");
	return 0;
}

static int add_rule(struct txt *t, struct country *c, const struct regdb_rule *r)
{
	for (unsigned int i = 0; i < c->n; i++)
		if (!regdb_rule_cmp(&c->rules[i], r))
			return fail(t, "country %s: the same rule twice", c->alpha2);
	if (c->n == c->cap) {
		unsigned int cap = c->cap ? 2 * c->cap : 8;
		struct regdb_rule *nr = realloc(c->rules, cap * sizeof(*nr));

		if (!nr)
			return fail(t, "out of memory");
		c->rules = nr;
		c->cap = cap;
	}
	c->rules[c->n++] = *r;
	return 0;
}

static int rule_line(struct txt *t)
{
	struct regdb_rule r = { 0 };

	if (!t->cur_n)
		return fail(t, "rule outside a country block");
	if (range(t, &r) || power(t, &r) || flags(t, &r))
		return -1;
	for (size_t i = 0; i < t->cur_n; i++)
		if (add_rule(t, &t->c[t->cur_first + i], &r))
			return -1;
	return 0;
}

static int dfs_region(struct txt *t, enum regdb_dfs_region *dfs)
{
	static const char *const names[] = { NULL, "DFS-FCC", "DFS-ETSI", "DFS-JP" };
	char name[MAX_NAME], b[32];

	*dfs = REGDB_DFS_UNSET;
	if (at_end(t))
		return 0;
	if (!word(t, name, sizeof(name)))
		return fail(t, "expected a DFS region after ':', got %s", seen(t, b, sizeof(b)));
	for (int i = 1; i < 4; i++)
		if (!strcmp(name, names[i])) {
			*dfs = (enum regdb_dfs_region)i;
			return at_end(t) ? 0 : fail(t, "unexpected %s after the DFS region",
						  seen(t, b, sizeof(b)));
		}
	return fail(t, "unknown DFS region '%s' (want DFS-FCC, DFS-ETSI or DFS-JP)", name);
}

static bool alpha2_ok(const char *s)
{
	bool upper = strlen(s) == 2 && isupper((unsigned char)s[0]) && isupper((unsigned char)s[1]);

	return upper || !strcmp(s, "00");
}

static int country_line(struct txt *t)
{
	char name[MAX_NAME];
	enum regdb_dfs_region dfs;
	size_t first = t->n_c;

	do {
		if (!word(t, name, sizeof(name)) || !alpha2_ok(name))
			return fail(t, "expected a two-letter country code after 'country'");
		for (size_t i = 0; i < t->n_c; i++)
			if (!strcmp(t->c[i].alpha2, name))
				return fail(t, "country %s already defined on line %u", name,
					    t->c[i].line);
		struct country *nc = realloc(t->c, (t->n_c + 1) * sizeof(*nc));

		if (!nc)
			return fail(t, "out of memory");
		t->c = nc;
		t->c[t->n_c++] = (struct country){ .line = t->line };
		memcpy(t->c[t->n_c - 1].alpha2, name, 3);
	} while (accept(t, ','));
	if (expect(t, ':', "after the country code") || dfs_region(t, &dfs))
		return -1;
	for (size_t i = first; i < t->n_c; i++)
		t->c[i].dfs = dfs;
	t->cur_first = first;
	t->cur_n = t->n_c - first;
	return 0;
}

static int wmmrule_line(struct txt *t)
{
	char name[MAX_NAME];

	if (!word(t, name, sizeof(name)))
		return fail(t, "expected a name after 'wmmrule'");
	if (expect(t, ':', "after the wmmrule name"))
		return -1;
	if (!at_end(t))
		return fail(t, "unexpected text after 'wmmrule %s:'", name);
	if (find_wmm(t, name))
		return fail(t, "wmmrule %s already defined on line %u", name, find_wmm(t, name)->line);
	struct wmm_def *nw = realloc(t->wmm, (t->n_wmm + 1) * sizeof(*nw));

	if (!nw)
		return fail(t, "out of memory");
	t->wmm = nw;
	t->cur_wmm = &t->wmm[t->n_wmm++];
	*t->cur_wmm = (struct wmm_def){ .line = t->line };
	memcpy(t->cur_wmm->name, name, sizeof(name));
	t->cur_n = 0;
	return 0;
}

static bool is_cw(uint64_t v)
{
	return v < 32768 && !((v + 1) & v);
}

/* "cw_min=3, cw_max=7, aifsn=2, cot=2" into ac. */
static int wmm_values(struct txt *t, struct regdb_wmm_ac *ac)
{
	static const char *const keys[4] = { "cw_min", "cw_max", "aifsn", "cot" };
	uint64_t v[4];
	char key[MAX_NAME];

	for (int i = 0; i < 4; i++) {
		if (i && expect(t, ',', "between WMM values"))
			return -1;
		if (!word(t, key, sizeof(key)) || strcmp(key, keys[i]))
			return fail(t, "expected '%s=' in the WMM values", keys[i]);
		if (expect(t, '=', "after the WMM value name") ||
		    decimal(t, 0, i == 2 ? 255 : 65535, keys[i], &v[i]))
			return -1;
	}
	if (!at_end(t))
		return fail(t, "unexpected text after the WMM values");
	if (!is_cw(v[0]) || !is_cw(v[1]) || !v[0])
		return fail(t, "cw_min and cw_max must be 2^n - 1 (1 to 32767)");
	if (v[0] >= v[1])
		return fail(t, "cw_min %u not below cw_max %u", (unsigned int)v[0],
			    (unsigned int)v[1]);
	if (!v[2])
		return fail(t, "aifsn must be at least 1");
	*ac = (struct regdb_wmm_ac){ .cw_min = (uint16_t)v[0], .cw_max = (uint16_t)v[1],
				     .aifsn = (uint8_t)v[2], .cot_ms = (uint16_t)v[3] };
	return 0;
}

static int wmm_item_line(struct txt *t)
{
	struct wmm_def *w = t->cur_wmm;
	char ac[MAX_NAME];

	if (!word(t, ac, sizeof(ac)) || !accept(t, ':'))
		return fail(t, "expected 'vo_c:' style access category in wmmrule %s", w->name);
	for (int k = 0; k < 8; k++) {
		if (strcmp(ac, ac_names[k]))
			continue;
		if (w->have & (1u << k))
			return fail(t, "%s given twice in wmmrule %s", ac, w->name);
		w->have |= 1u << k;
		return wmm_values(t, k < 4 ? &w->w.client[k] : &w->w.ap[k - 4]);
	}
	return fail(t, "unknown access category '%s' (want vo_c, vi_c, be_c, bk_c, vo_ap, ...)",
		    ac);
}

static bool keyword(struct txt *t, const char *kw)
{
	size_t n = strlen(kw);

	if (strncmp(t->p, kw, n) || !(t->p[n] == ' ' || t->p[n] == '\t'))
		return false;
	t->p += n;
	return true;
}

static int parse_line(struct txt *t, char *line)
{
	char *hash = strchr(line, '#');

	if (hash)
		*hash = '\0';
	t->p = line;
	if (at_end(t)) {
		t->cur_wmm = NULL; /* a blank line ends a wmmrule block */
		return 0;
	}
	if (keyword(t, "country")) {
		t->cur_wmm = NULL;
		return country_line(t);
	}
	if (keyword(t, "wmmrule"))
		return wmmrule_line(t);
	if (keyword(t, "band") || keyword(t, "power"))
		return fail(t, "named band/power definitions are not supported");
	if (t->cur_wmm)
		return wmm_item_line(t);
	return rule_line(t);
}

static int qsort_rule(const void *a, const void *b)
{
	return regdb_rule_cmp(a, b);
}

static int qsort_country(const void *a, const void *b)
{
	return strcmp(((const struct country *)a)->alpha2, ((const struct country *)b)->alpha2);
}

/* The countries as a database, each country's rules sorted like db2fw.py. */
static struct regdb_db *build(struct txt *t)
{
	struct regdb_domain **doms = calloc(t->n_c + 1, sizeof(*doms));

	if (!doms) {
		fail(t, "out of memory");
		return NULL;
	}
	if (t->n_c)
		qsort(t->c, t->n_c, sizeof(*t->c), qsort_country);
	for (size_t i = 0; i < t->n_c; i++) {
		struct country *c = &t->c[i];

		if (c->n)
			qsort(c->rules, c->n, sizeof(*c->rules), qsort_rule);
		doms[i] = regdb_domain_new(c->alpha2, c->dfs, c->n);
		if (!doms[i]) {
			while (i--)
				free(doms[i]);
			free(doms);
			fail(t, "out of memory");
			return NULL;
		}
		if (c->n)
			memcpy(doms[i]->rules, c->rules, c->n * sizeof(*c->rules));
	}
	return regdb_db_new(doms, t->n_c, t->err);
}

int regdb_dbtxt_parse(const char *text, size_t len, const char *name, struct regdb_db **out,
		      struct regdb_error *err)
{
	struct txt t = { .name = name ? name : "db.txt", .err = err };
	char line[MAX_LINE];
	int rc = 0;

	for (size_t off = 0; off < len && !rc;) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (text + off)) : len - off;

		t.line++;
		if (n >= sizeof(line))
			rc = fail(&t, "line longer than %d characters", MAX_LINE - 1);
		else if (memchr(text + off, '\0', n))
			rc = fail(&t, "NUL byte in the text");
		else {
			memcpy(line, text + off, n);
			line[n] = '\0';
			rc = parse_line(&t, line);
		}
		off += n + 1;
	}
	if (!rc) {
		*out = build(&t);
		rc = *out ? 0 : -1;
	}
	for (size_t i = 0; i < t.n_c; i++)
		free(t.c[i].rules);
	free(t.c);
	free(t.wmm);
	return rc;
}

int regdb_dbtxt_load(const char *path, struct regdb_db **out, struct regdb_error *err)
{
	uint8_t *buf;
	size_t len;

	if (regdb_read_file(path, &buf, &len, err))
		return -1;
	int rc = regdb_dbtxt_parse((const char *)buf, len, path, out, err);

	free(buf);
	return rc;
}

int regdb_load(const char *path, struct regdb_db **out, struct regdb_error *err)
{
	FILE *f = fopen(path, "rb");
	unsigned char head[4];
	size_t n = f ? fread(head, 1, sizeof(head), f) : 0;
	bool text = n > 0 && memcmp(head, "RGDB", n);

	if (f)
		fclose(f);
	for (size_t i = 0; i < n; i++)
		text = text && (isprint(head[i]) || isspace(head[i]));
	return text ? regdb_dbtxt_load(path, out, err) : regdb_db_load(path, out, err);
}

/* Emitter. */

/* v / 10^frac with the fraction's trailing zeros dropped. */
static void print_fixed(FILE *f, uint32_t v, int frac)
{
	uint32_t scale = frac == 3 ? 1000 : 100, rest = v % scale;

	fprintf(f, "%u", v / scale);
	if (!rest)
		return;
	while (rest % 10 == 0) {
		rest /= 10;
		frac--;
	}
	fprintf(f, ".%0*u", frac, rest);
}

static void print_khz(FILE *f, uint32_t khz)
{
	print_fixed(f, khz, 3);
}

/* Whole dBm as such; else the whole mW that reads back to exactly mbm, as
 * wireless-regdb writes such limits ("200 mW" is 2301 mBm), or 2 decimals. */
static void print_mbm(FILE *f, int32_t mbm)
{
	if (mbm % 100 && mbm > 0 && mbm < 6000) {
		double lo = ceil(pow(10.0, mbm / 1000.0) - 1), hi = pow(10.0, (mbm + 1) / 1000.0) + 1;
		double best = 0;
		int best_zeros = -1;

		for (double mw = lo < 1 ? 1 : lo; mw <= hi; mw++) {
			int zeros = 0;

			if ((int32_t)(10.0 * log10(mw) * 100) != mbm)
				continue;
			for (long v = (long)mw; v % 10 == 0; v /= 10)
				zeros++;
			if (zeros > best_zeros) {
				best = mw;
				best_zeros = zeros;
			}
		}
		if (best_zeros >= 0) {
			fprintf(f, "%.0f mW", best);
			return;
		}
	}
	print_fixed(f, (uint32_t)mbm, 2);
}

/* The distinct WMM rules of db in order of first use: named WMM<i+1>. */
static size_t collect_wmm(const struct regdb_db *db, const struct regdb_wmm ***out)
{
	size_t n = 0, total = 0;

	for (size_t i = 0; i < regdb_db_count(db); i++)
		total += regdb_db_domain(db, i)->n_rules;
	const struct regdb_wmm **v = calloc(total + 1, sizeof(*v));

	*out = v;
	if (!v)
		return 0;
	for (size_t i = 0; i < regdb_db_count(db); i++) {
		const struct regdb_domain *d = regdb_db_domain(db, i);

		for (unsigned int j = 0; j < d->n_rules; j++) {
			bool dup = false;

			for (size_t k = 0; d->rules[j].has_wmm && k < n && !dup; k++)
				dup = !regdb_wmm_cmp(v[k], &d->rules[j].wmm);
			if (d->rules[j].has_wmm && !dup)
				v[n++] = &d->rules[j].wmm;
		}
	}
	return n;
}

static size_t wmm_index(const struct regdb_wmm **v, size_t n, const struct regdb_wmm *w)
{
	for (size_t k = 0; k < n; k++)
		if (!regdb_wmm_cmp(v[k], w))
			return k;
	return 0;
}

static void print_wmm(FILE *f, size_t idx, const struct regdb_wmm *w)
{
	fprintf(f, "wmmrule WMM%zu:\n", idx + 1);
	for (int k = 0; k < 8; k++) {
		const struct regdb_wmm_ac *ac = k < 4 ? &w->client[k] : &w->ap[k - 4];

		fprintf(f, "\t%s: cw_min=%u, cw_max=%u, aifsn=%u, cot=%u\n", ac_names[k],
			ac->cw_min, ac->cw_max, ac->aifsn, ac->cot_ms);
	}
	fprintf(f, "\n");
}

static void print_rule(FILE *f, const struct regdb_rule *r, const struct regdb_wmm **wmms,
		       size_t n_wmm)
{
	char names[256];

	fprintf(f, "\t(");
	print_khz(f, r->start_khz);
	fprintf(f, " - ");
	print_khz(f, r->end_khz);
	fprintf(f, " @ ");
	print_khz(f, r->max_bw_khz);
	fprintf(f, "), (");
	if (r->max_ant_gain_mbi > 0) { /* dBi: never in mW */
		print_fixed(f, (uint32_t)r->max_ant_gain_mbi, 2);
		fprintf(f, ", ");
	}
	print_mbm(f, r->max_eirp_mbm);
	fprintf(f, ")");
	if (r->cac_ms)
		fprintf(f, ", (%u)", r->cac_ms);
	if (r->flags)
		fprintf(f, ", %s", regdb_flags_str(r->flags, ", ", names, sizeof(names)));
	if (r->has_wmm)
		fprintf(f, ", wmmrule=WMM%zu", wmm_index(wmms, n_wmm, &r->wmm) + 1);
	fprintf(f, "\n");
}

int regdb_dbtxt_write(const struct regdb_db *db, FILE *f, struct regdb_error *err)
{
	const struct regdb_wmm **wmms;
	size_t n_wmm = collect_wmm(db, &wmms);

	if (!wmms)
		return regdb_fail(err, "out of memory");
	fprintf(f, "# regulatory database in wireless-regdb's db.txt format, written by regdb\n\n");
	for (size_t k = 0; k < n_wmm; k++)
		print_wmm(f, k, wmms[k]);
	for (size_t i = 0; i < regdb_db_count(db); i++) {
		const struct regdb_domain *d = regdb_db_domain(db, i);

		fprintf(f, "country %s:", d->alpha2);
		if (d->dfs_region != REGDB_DFS_UNSET)
			fprintf(f, " DFS-%s", regdb_dfs_name(d->dfs_region));
		fprintf(f, "\n");
		for (unsigned int j = 0; j < d->n_rules; j++)
			print_rule(f, &d->rules[j], wmms, n_wmm);
		fprintf(f, "\n");
	}
	free(wmms);
	if (ferror(f))
		return regdb_fail(err, "write error");
	return 0;
}
