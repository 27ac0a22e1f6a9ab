// SPDX-License-Identifier: GPL-2.0
/*
 * build/regdb — inspect 802.11 regulatory domains.
 *   regdb [--db FILE [--verify --certs CERT]] get XX | list | dump --tsv|--dbtxt |
 *         intersect XX YY | lookup KEY | check --country XX --freq MHZ --width MHZ
 *         [--outdoor] [--beacon|--probe] [--ptp] [--cck] [--power DBM] |
 *         verify [--sig FILE] --certs CERT | compile DB.TXT -o REGULATORY.DB
 * --db FILE is a regulatory.db or, when it starts with text, a db.txt.
 * Exit: 0 ok/allowed, 1 not found/denied/bad signature, 2 usage, 3 bad file.
 */
#include "build/config.h"
#include "regdb/internal.h"
#include "regdb/regdb.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_NOTFOUND = 1, EXIT_USAGE = 2, EXIT_BADDB = 3 };

static int usage(void)
{
	fprintf(stderr, "usage: regdb [--db FILE [--verify --certs CERT]] get XX | list | dump --tsv|--dbtxt |\n"
			"       intersect XX YY | lookup DEU|276|NAME | compile DB.TXT -o REGULATORY.DB |\n"
			"       verify [--sig FILE] --certs CERT.pem |\n"
			"       check --country XX --freq MHZ --width MHZ [--outdoor]\n"
			"             [--beacon|--probe] [--ptp] [--cck] [--power DBM]\n");
	return EXIT_USAGE;
}

static void dump_tsv(const struct regdb_db *db)
{
	char flags[256];

	for (size_t i = 0; i < regdb_db_count(db); i++) {
		const struct regdb_domain *d = regdb_db_domain(db, i);

		for (unsigned int j = 0; j < d->n_rules; j++) {
			const struct regdb_rule *r = &d->rules[j];

			printf("%s\t%s\t%u\t%u\t%u\t%d\t%s\n", d->alpha2,
			       regdb_dfs_name(d->dfs_region), r->start_khz, r->end_khz,
			       r->max_bw_khz, r->max_eirp_mbm,
			       regdb_flags_str(r->flags, ",", flags, sizeof(flags)));
		}
	}
}

static const struct regdb_domain *find_country(const struct regdb_db *db, const char *arg)
{
	char cc[3];

	if (strlen(arg) != 2) {
		fprintf(stderr, "regdb: '%s' is not a two-letter country code\n", arg);
		return NULL;
	}
	cc[0] = (char)toupper((unsigned char)arg[0]);
	cc[1] = (char)toupper((unsigned char)arg[1]);
	cc[2] = 0;
	const struct regdb_domain *d = regdb_db_find(db, cc);

	if (!d)
		fprintf(stderr, "regdb: no regulatory domain for '%s'\n", cc);
	return d;
}

static int parse_uint(const char *opt, const char *s, long max, long *out)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < 0 || v > max) {
		fprintf(stderr, "regdb: %s: bad number '%s'\n", opt, s);
		return -1;
	}
	*out = v;
	return 0;
}

static int cmd_check(const struct regdb_db *db, int argc, char **argv)
{
	struct regdb_query q = { .frame = REGDB_FRAME_DATA };
	const char *country = NULL;
	long freq = -1, width = 20, power;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool more = i + 1 < argc;

		if (!strcmp(a, "--country") && more)
			country = argv[++i];
		else if (!strcmp(a, "--freq") && more) {
			if (parse_uint(a, argv[++i], 100000, &freq))
				return EXIT_USAGE;
		} else if (!strcmp(a, "--width") && more) {
			if (parse_uint(a, argv[++i], 10000, &width))
				return EXIT_USAGE;
		} else if (!strcmp(a, "--power") && more) {
			if (parse_uint(a, argv[++i], 100, &power))
				return EXIT_USAGE;
			q.check_power = true;
			q.tx_power_mbm = (int32_t)power * 100;
		} else if (!strcmp(a, "--outdoor"))
			q.outdoor = true;
		else if (!strcmp(a, "--beacon"))
			q.frame = REGDB_FRAME_BEACON;
		else if (!strcmp(a, "--probe"))
			q.frame = REGDB_FRAME_PROBE;
		else if (!strcmp(a, "--ptp"))
			q.ptp = true;
		else if (!strcmp(a, "--cck"))
			q.cck = true;
		else
			return usage();
	}
	if (!country || freq < 0 || width == 0)
		return usage();
	const struct regdb_domain *d = find_country(db, country);

	if (!d)
		return EXIT_NOTFOUND;
	struct regdb_verdict v;

	q.center_khz = (uint32_t)freq * 1000;
	q.width_khz = (uint32_t)width * 1000;
	regdb_verdict(d, &q, &v);
	if (v.reason != REGDB_OK) {
		printf("denied: %s\n", regdb_deny_str(v.reason));
		return EXIT_NOTFOUND;
	}
	printf("allowed: max EIRP %d.%02d dBm, max bandwidth %u MHz", v.max_eirp_mbm / 100,
	       v.max_eirp_mbm % 100, v.max_bw_khz / 1000);
	if (v.needs_cac)
		printf(", needs CAC %u ms", v.cac_ms);
	printf("\n");
	return 0;
}

static int cmd_lookup(const struct regdb_db *db, const char *key)
{
	struct regdb_iso iso;
	struct regdb_error err;

	if (regdb_iso_load(ISO3166_JSON_PATH, &iso, &err)) {
		fprintf(stderr, "regdb: %s\n", err.msg);
		return EXIT_BADDB;
	}
	const struct regdb_iso_country *c = regdb_iso_resolve(&iso, key);
	int rc = 0;

	if (!c) {
		fprintf(stderr, "regdb: no ISO 3166-1 country matches '%s'\n", key);
		rc = EXIT_NOTFOUND;
	} else {
		const struct regdb_domain *d = regdb_db_find(db, c->alpha2);

		printf("%s\t%s\t%03u\t%s\t%s\n", c->alpha2, c->alpha3, c->numeric, c->name,
		       d ? regdb_dfs_name(d->dfs_region) : "no-domain");
	}
	regdb_iso_free(&iso);
	return rc;
}

static int run(const struct regdb_db *db, int argc, char **argv)
{
	const char *cmd = argv[0];

	if (!strcmp(cmd, "get") && argc == 2) {
		const struct regdb_domain *d = find_country(db, argv[1]);

		if (!d)
			return EXIT_NOTFOUND;
		regdb_domain_print(d, stdout);
		return 0;
	}
	if (!strcmp(cmd, "list") && argc == 1) {
		for (size_t i = 0; i < regdb_db_count(db); i++) {
			const struct regdb_domain *d = regdb_db_domain(db, i);

			printf("%s\tDFS-%s\t%u\n", d->alpha2, regdb_dfs_name(d->dfs_region),
			       d->n_rules);
		}
		return 0;
	}
	if (!strcmp(cmd, "dump") && argc == 2 && !strcmp(argv[1], "--tsv")) {
		dump_tsv(db);
		return 0;
	}
	if (!strcmp(cmd, "dump") && argc == 2 && !strcmp(argv[1], "--dbtxt")) {
		struct regdb_error err;

		if (regdb_dbtxt_write(db, stdout, &err)) {
			fprintf(stderr, "regdb: %s\n", err.msg);
			return EXIT_BADDB;
		}
		return 0;
	}
	if (!strcmp(cmd, "intersect") && argc == 3) {
		const struct regdb_domain *a = find_country(db, argv[1]);
		const struct regdb_domain *b = a ? find_country(db, argv[2]) : NULL;

		if (!b)
			return EXIT_NOTFOUND;
		struct regdb_domain *x = regdb_intersect(a, b);

		if (!x) {
			fprintf(stderr, "regdb: %s and %s have no rule in common\n", argv[1], argv[2]);
			return EXIT_NOTFOUND;
		}
		regdb_domain_print(x, stdout);
		free(x);
		return 0;
	}
	if (!strcmp(cmd, "lookup") && argc == 2)
		return cmd_lookup(db, argv[1]);
	if (!strcmp(cmd, "check"))
		return cmd_check(db, argc - 1, argv + 1);
	return usage();
}

/* The detached signature sig_path of the database file db_path. */
static int verify_file(const char *db_path, const char *sig_path, const char *certs)
{
	uint8_t *data = NULL, *sig = NULL;
	size_t len, sig_len;
	struct regdb_error err;
	int rc = 0;

	if (regdb_read_file(db_path, &data, &len, &err) ||
	    regdb_read_file(sig_path, &sig, &sig_len, &err)) {
		fprintf(stderr, "regdb: %s\n", err.msg);
		rc = EXIT_BADDB;
	} else if (regdb_verify_signature(data, len, sig, sig_len, certs, &err)) {
		fprintf(stderr, "regdb: %s: %s\n", db_path, err.msg);
		rc = EXIT_NOTFOUND;
	}
	free(data);
	free(sig);
	return rc;
}

/* verify [--sig FILE] --certs FILE: the detached signature of the database. */
static int cmd_verify(const char *db_path, const char *certs, int argc, char **argv)
{
	char sig_path[4096];

	snprintf(sig_path, sizeof(sig_path), "%s.p7s", db_path);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--sig") && i + 1 < argc)
			snprintf(sig_path, sizeof(sig_path), "%s", argv[++i]);
		else
			return usage();
	}
	if (!certs)
		return usage();
	int rc = verify_file(db_path, sig_path, certs);

	if (!rc)
		printf("%s: signature valid\n", db_path);
	return rc;
}

/* compile DB.TXT -o REGULATORY.DB */
static int cmd_compile(int argc, char **argv)
{
	struct regdb_db *db;
	struct regdb_error err;

	if (argc != 4 || strcmp(argv[2], "-o"))
		return usage();
	if (regdb_dbtxt_load(argv[1], &db, &err)) {
		fprintf(stderr, "regdb: %s\n", err.msg);
		return EXIT_BADDB;
	}
	int rc = regdb_db_save(db, argv[3], &err);

	if (rc)
		fprintf(stderr, "regdb: %s: %s\n", argv[1], err.msg);
	regdb_db_free(db);
	return rc ? EXIT_BADDB : 0;
}

int main(int argc, char **argv)
{
	const char *path = REGDB_DEFAULT_PATH;
	char *args[64];
	int n = 0;

	const char *certs = NULL;
	bool verify = false;

	/* --db FILE, --verify and --certs CERT may appear anywhere. */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--db") || !strcmp(argv[i], "--certs")) {
			if (i + 1 >= argc)
				return usage();
			*(argv[i][2] == 'd' ? &path : &certs) = argv[i + 1];
			i++;
		} else if (!strcmp(argv[i], "--verify")) {
			verify = true;
		} else if (n < 63) {
			args[n++] = argv[i];
		} else {
			return usage();
		}
	}
	if (!n)
		return usage();
	if (!strcmp(args[0], "verify"))
		return cmd_verify(path, certs, n, args);
	if (!strcmp(args[0], "compile"))
		return cmd_compile(n, args);
	struct regdb_db *db;
	struct regdb_error err;

	if (verify) {
		char sig_path[4096];

		if (!HAVE_OPENSSL) {
			fprintf(stderr, "regdb: --verify: built without OpenSSL, cannot check %s.p7s\n",
				path);
			return EXIT_USAGE;
		}
		if (!certs) {
			fprintf(stderr, "regdb: --verify needs --certs CERT (no default certificate)\n");
			return EXIT_USAGE;
		}
		snprintf(sig_path, sizeof(sig_path), "%s.p7s", path);
		int rc = verify_file(path, sig_path, certs);

		if (rc)
			return rc;
	}

	if (regdb_load(path, &db, &err)) {
		fprintf(stderr, "regdb: %s\n", err.msg);
		return EXIT_BADDB;
	}
	int rc = run(db, n, args);

	regdb_db_free(db);
	return rc;
}
