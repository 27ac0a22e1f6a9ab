/* fuzz_regdb_dbtxt.c — regdb's db.txt parser (dbtxt.c: country lines,
 * frequency ranges, power forms, flags, wmmrule blocks, comments) on
 * arbitrary text. A database it accepts must survive the round trip
 * (written as regulatory.db, read again, equal). */
#include <stdio.h>
#include <stdlib.h>

#include "regdb/regdb.h"
#include "tests/fuzz/fuzz.h"

static void exercise(const struct regdb_db *db)
{
	struct regdb_error err;
	struct regdb_db *again = NULL;
	uint8_t *bin = NULL;
	size_t bin_len = 0;

	if (!regdb_db_write(db, &bin, &bin_len, &err)) {
		if (regdb_db_parse(bin, bin_len, &again, &err) || !regdb_db_equal(db, again)) {
			fprintf(stderr, "db.txt written as regulatory.db does not read back: %s\n",
				err.msg);
			abort();
		}
		regdb_db_free(again);
	}
	free(bin);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct regdb_db *db = NULL;
	struct regdb_error err;

	if (regdb_dbtxt_parse((const char *)data, size, "fuzz", &db, &err) == 0) {
		exercise(db);
		regdb_db_free(db);
	}
	return 0;
}
