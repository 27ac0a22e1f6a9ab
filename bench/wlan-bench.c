/* wlan-bench.c — the radio medium's cost (bench/wlan-medium.sh):
 *
 *  1. frames per second through the medium (parse, verdict, delivery to
 *     the receiver's port, TX status back) with regulatory enforcement on
 *     and off, the two alternating run by run on the same frames;
 *  2. ns per verdict: wlan_reg_check (the seam, with its cache) over a mix
 *     of channels, widths and frame kinds, against regdb_verdict alone
 *     (what every frame would cost without the cache).
 *
 * Prints one "name value" line per figure and the medians' ratios. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "build/config.h"
#include "wlan/wlan.h"

#define RUNS 9
#define FRAMES 400000
#define VERDICTS 4000000

static uint64_t received;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* A receiver that takes everything (a guest with room in its ring). */
static bool sink(void *opaque, const void *msg, size_t len)
{
	received += len;
	return true;
}

struct traffic {
	uint8_t msg[8][512];
	size_t len[8];
};

/* Data between two radios on 2.4 and 5 GHz channels, 20-80 MHz, plus beacons. */
static void make_traffic(struct traffic *t)
{
	static const uint32_t freq[8] = {2412, 2437, 5180, 5200, 5500, 5745, 5180, 2462};
	static const uint32_t width[8] = {20, 20, 80, 40, 20, 80, 20, 20};
	static const uint8_t peer[6] = {0x02, 0, 0, 0, 1, 0}; /* the other radio */
	uint8_t hw[6] = {0x42}, f[64] = {0x08};

	memcpy(f + 4, peer, 6);
	for (int i = 0; i < 8; i++) {
		f[0] = i == 6 ? 0x80 : 0x08; /* one beacon in the mix */
		t->len[i] = hwsim_build_tx(t->msg[i], sizeof(t->msg[i]), hw, f, sizeof(f), 1,
					   freq[i], width[i], (uint64_t)i);
	}
}

/* The measured loop, on its own so that callgrind can count only it
 * (--toggle-collect=push_frames): instructions are repeatable on a noisy
 * host where seconds are not. */
__attribute__((noinline)) static void push_frames(struct wlan_port *a, const struct traffic *t,
						  int frames)
{
	for (int i = 0; i < frames; i++)
		wlan_port_input(a, t->msg[i & 7], t->len[i & 7]);
}

static double frames_per_s(bool enforce, const struct traffic *t, int frames)
{
	struct wlan_medium_cfg cfg = {
		.country = "DE", .cac_s = 0, .nop_s = -1, .no_enforce = !enforce};
	char err[256];
	struct wlan_medium *m = wlan_medium_new(&cfg, err, sizeof(err));
	uint8_t announce[128], hw_b[6] = {0x42, 0, 0, 0, 1, 0}, vif_b[6] = {0x02, 0, 0, 0, 1, 0};

	if (!m) {
		fprintf(stderr, "wlan-bench: %s\n", err);
		exit(1);
	}
	struct wlan_port *a = wlan_port_attach(m, "a", sink, NULL);
	struct wlan_port *b = wlan_port_attach(m, "b", sink, NULL);

	wlan_port_input(b, announce,
			hwsim_build_mac_addr(announce, sizeof(announce), true, hw_b, vif_b));
	double t0 = now_ns();

	push_frames(a, t, frames);
	double dt = now_ns() - t0;

	wlan_port_detach(a);
	wlan_port_detach(b);
	wlan_medium_free(m);
	return frames / (dt / 1e9);
}

static const struct wlan_tx mix[8] = {
	{2412, 20, REGDB_FRAME_DATA, 0},  {5180, 80, REGDB_FRAME_BEACON, 0},
	{5500, 20, REGDB_FRAME_PROBE, 0}, {5745, 80, REGDB_FRAME_DATA, 0},
	{5260, 160, REGDB_FRAME_DATA, 0}, {2462, 40, REGDB_FRAME_BEACON, 0},
	{5900, 20, REGDB_FRAME_DATA, 0},  {5580, 40, REGDB_FRAME_BEACON, 0},
};

static volatile int32_t sink_i;

static double ns_per_cached_verdict(struct wlan_reg *r)
{
	int32_t sig = 0, acc = 0;
	double t0 = now_ns();

	for (int i = 0; i < VERDICTS; i++) {
		acc += (int32_t)wlan_reg_check(r, &mix[i & 7], 1000000000ull, &sig);
		acc += sig;
	}
	sink_i = acc;
	return (now_ns() - t0) / VERDICTS;
}

static double ns_per_regdb_verdict(const struct regdb_domain *d)
{
	struct regdb_verdict v;
	int32_t acc = 0;
	double t0 = now_ns();

	for (int i = 0; i < VERDICTS; i++) {
		const struct wlan_tx *x = &mix[i & 7];
		struct regdb_query q = {.center_khz = x->freq_mhz * 1000,
					.width_khz = x->width_mhz * 1000,
					.frame = x->kind};

		regdb_verdict(d, &q, &v);
		acc += v.reason;
	}
	sink_i = acc;
	return (now_ns() - t0) / VERDICTS;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v)
{
	qsort(v, RUNS, sizeof(double), cmp);
	return v[RUNS / 2];
}

/* wlan-bench --frames on|off N: only N frames through one medium, for an
 * instruction count under callgrind (bench/wlan-medium.sh). */
static int frames_only(const char *mode, const char *count)
{
	static struct traffic t;
	int n = atoi(count);

	if ((strcmp(mode, "on") && strcmp(mode, "off")) || n <= 0) {
		fprintf(stderr, "usage: wlan-bench [--frames on|off N]\n");
		return 2;
	}
	make_traffic(&t);
	printf("frames/s %.0f\n", frames_per_s(!strcmp(mode, "on"), &t, n));
	return 0;
}

int main(int argc, char **argv)
{
	static struct traffic t;
	double on[RUNS], off[RUNS], cached[RUNS], plain[RUNS];
	struct wlan_medium_cfg cfg = {.country = "DE", .cac_s = 0, .nop_s = -1};
	char err[256];
	struct wlan_reg *r = wlan_reg_new(&cfg, err, sizeof(err));
	struct regdb_db *db;
	struct regdb_error e;

	if (argc == 4 && !strcmp(argv[1], "--frames")) {
		wlan_reg_free(r);
		return frames_only(argv[2], argv[3]);
	}
	if (argc != 1) {
		fprintf(stderr, "usage: wlan-bench [--frames on|off N]\n");
		wlan_reg_free(r);
		return 2;
	}
	if (!r || regdb_load(REGDB_DEFAULT_PATH, &db, &e)) {
		fprintf(stderr, "wlan-bench: cannot load the regulatory database\n");
		return 1;
	}
	make_traffic(&t);
	for (int i = 0; i < RUNS; i++) {
		bool on_first = i & 1; /* neither side always runs second */

		if (on_first)
			on[i] = frames_per_s(true, &t, FRAMES);
		off[i] = frames_per_s(false, &t, FRAMES);
		if (!on_first)
			on[i] = frames_per_s(true, &t, FRAMES);
		cached[i] = ns_per_cached_verdict(r);
		plain[i] = ns_per_regdb_verdict(regdb_db_find(db, "DE"));
	}
	double fon = median(on), foff = median(off), vc = median(cached), vp = median(plain);

	printf("frames/s enforcement on   %.0f\n", fon);
	printf("frames/s enforcement off  %.0f\n", foff);
	printf("enforcement cost          %.2f %% of throughput, %.1f ns per frame (goal <= 2 "
	       "%%)\n",
	       (foff - fon) / foff * 100, 1e9 / fon - 1e9 / foff);
	printf("ns per verdict (cached)   %.1f (goal <= 50)\n", vc);
	printf("ns per regdb_verdict      %.1f (no cache; %.1fx the cached verdict)\n", vp,
	       vp / vc);
	printf("medians of %d runs, %d frames and %d verdicts each\n", RUNS, FRAMES, VERDICTS);
	wlan_reg_free(r);
	regdb_db_free(db);
	return 0;
}
