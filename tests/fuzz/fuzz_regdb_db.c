/* fuzz_regdb_db.c — regdb's regulatory.db reader (dbfile.c: header,
 * country table, collections, rules, WMM rules) on arbitrary bytes. A
 * database it accepts must survive both round trips: written back as
 * regulatory.db and read again, and written as db.txt and parsed, each to
 * an equal database (both readers keep the same model: rules sorted, no
 * duplicates, no start at 0 kHz, no CAC off DFS; crash-dbtxt-* are the
 * inputs that found where they differed). */
#include <stdio.h>
#include <stdlib.h>

#include "regdb/regdb.h"
#include "tests/fuzz/fuzz.h"

static void round_trip(const struct regdb_db *db)
{
	struct regdb_error err;
	struct regdb_db *again = NULL;
	uint8_t *bin = NULL;
	char *text = NULL;
	size_t bin_len = 0, text_len = 0;
	FILE *f = open_memstream(&text, &text_len);

	if (!regdb_db_write(db, &bin, &bin_len, &err)) {
		if (regdb_db_parse(bin, bin_len, &again, &err) || !regdb_db_equal(db, again)) {
			fprintf(stderr, "written regulatory.db does not read back: %s\n", err.msg);
			abort();
		}
		regdb_db_free(again);
		again = NULL;
	}
	free(bin);
	if (f && !regdb_dbtxt_write(db, f, &err)) {
		fclose(f);
		f = NULL;
		if (regdb_dbtxt_parse(text, text_len, "fuzz", &again, &err) ||
		    !regdb_db_equal(db, again)) {
			fprintf(stderr, "written db.txt does not read back equal: %s\n",
				again ? "different" : err.msg);
			abort();
		}
		regdb_db_free(again);
	} else if (f) {
		fprintf(stderr, "an accepted database cannot be written as db.txt: %s\n", err.msg);
		abort();
	}
	if (f)
		fclose(f);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct regdb_db *db = NULL;
	struct regdb_error err;

	if (regdb_db_parse(data, size, &db, &err) == 0) {
		round_trip(db);
		regdb_db_free(db);
	}
	return 0;
}
