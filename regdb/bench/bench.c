// SPDX-License-Identifier: GPL-2.0
/*
 * regdb benchmark: load of the packaged regulatory.db against reading its
 * bytes; compiling its db.txt form (parse + write regulatory.db) against
 * parsing the binary; and verdict latency against a plain linear containment
 * scan, over the same random (country, freq, width) queries.
 */
#include "build/config.h"
#include "regdb/regdb.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NQ 4096

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static long read_file(const char *path, unsigned char *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, cap, f);
	fclose(f);
	return (long)n;
}

/* Baseline: the first rule containing the channel, nothing else. */
static int linear_scan(const struct regdb_domain *d, const struct regdb_query *q)
{
	uint32_t lo = q->center_khz - q->width_khz / 2, hi = q->center_khz + q->width_khz / 2;

	for (unsigned int i = 0; i < d->n_rules; i++)
		if (lo >= d->rules[i].start_khz && hi <= d->rules[i].end_khz)
			return d->rules[i].max_eirp_mbm;
	return -1;
}

/* db.txt of db -> parsed -> regulatory.db bytes, against parsing those bytes. */
static void bench_compile(const struct regdb_db *db, const unsigned char *bin, size_t bin_len)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct regdb_error err;
	struct regdb_db *p;
	uint8_t *out;
	size_t out_len;
	int iters = 200;

	if (!f || regdb_dbtxt_write(db, f, &err) || fclose(f))
		exit(1);
	double t0 = now_ns();

	for (int i = 0; i < iters; i++) {
		if (regdb_dbtxt_parse(text, len, "db.txt", &p, &err) ||
		    regdb_db_write(p, &out, &out_len, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			exit(1);
		}
		regdb_db_free(p);
		free(out);
	}
	double t_compile = (now_ns() - t0) / iters;

	t0 = now_ns();
	for (int i = 0; i < iters; i++) {
		if (regdb_db_parse(bin, bin_len, &p, &err))
			exit(1);
		regdb_db_free(p);
	}
	double t_parse = (now_ns() - t0) / iters;

	printf("compile db.txt (%zu bytes, parse + write): %.1f us (binary parse: %.1f us, ratio %.1f)\n",
	       len, t_compile / 1e3, t_parse / 1e3, t_compile / t_parse);
	free(text);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : REGDB_DEFAULT_PATH;
	static unsigned char buf[1 << 20];
	static const uint32_t freqs[] = { 2412, 2437, 2462, 2484, 5180, 5260, 5500, 5530,
					  5745, 5955, 6115, 58320 };
	static const uint32_t widths[] = { 20, 40, 80, 160 };
	struct regdb_error err;
	struct regdb_db *db;
	int iters = 2000;

	double t0 = now_ns();
	for (int i = 0; i < iters; i++)
		if (read_file(path, buf, sizeof(buf)) < 0)
			return 1;
	double t_read = (now_ns() - t0) / iters;
	t0 = now_ns();
	for (int i = 0; i < iters; i++) {
		if (regdb_db_load(path, &db, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		regdb_db_free(db);
	}
	double t_load = (now_ns() - t0) / iters;
	printf("load %s: %.1f us (read only: %.1f us, ratio %.2f)\n", path, t_load / 1e3,
	       t_read / 1e3, t_load / t_read);

	if (regdb_db_load(path, &db, &err))
		return 1;
	bench_compile(db, buf, (size_t)read_file(path, buf, sizeof(buf)));
	static struct regdb_query qs[NQ];
	static const struct regdb_domain *ds[NQ];
	uint32_t seed = 42;

	for (int i = 0; i < NQ; i++) {
		seed = seed * 1103515245u + 12345u;
		ds[i] = regdb_db_domain(db, (seed >> 8) % regdb_db_count(db));
		qs[i].center_khz = freqs[(seed >> 16) % 12] * 1000;
		qs[i].width_khz = widths[(seed >> 24) % 4] * 1000;
		qs[i].frame = (seed >> 28) % 3;
	}
	int rounds = 500;
	volatile long sink = 0;
	struct regdb_verdict v;

	t0 = now_ns();
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < NQ; i++)
			sink += linear_scan(ds[i], &qs[i]);
	double t_scan = (now_ns() - t0) / ((double)rounds * NQ);
	t0 = now_ns();
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < NQ; i++) {
			regdb_verdict(ds[i], &qs[i], &v);
			sink += v.reason;
		}
	double t_verdict = (now_ns() - t0) / ((double)rounds * NQ);
	printf("verdict: %.1f ns/query (linear scan baseline: %.1f ns, ratio %.2f)\n", t_verdict,
	       t_scan, t_verdict / t_scan);
	regdb_db_free(db);
	return 0;
}
