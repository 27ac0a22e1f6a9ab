# regdb/ — 802.11 regulatory domains (issue 7): libregdb.a and the build/regdb tool.
regdb_SRCS := $(wildcard regdb/*.c)
$(eval $(call static_lib,regdb,$(regdb_SRCS),$(JANSSON_CFLAGS)))
$(eval $(call program,regdb,regdb/tool/main.c,libregdb.a,$(JANSSON_LIBS)))
$(eval $(call unit_test,regdb,tests/unit/regdb/test_regdb.c,libregdb.a,$(JANSSON_LIBS)))
INTEG_TESTS += tests/integration/regdb-dump.sh
$(eval $(call program,regdb-bench,regdb/bench/bench.c,libregdb.a,$(JANSSON_LIBS)))
BENCHES += bench/regdb-bench.sh
