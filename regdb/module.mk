# regdb/ — 802.11 regulatory domains: libregdb.a and the build/regdb tool.
regdb_SRCS := $(wildcard regdb/*.c)
# What a program linking libregdb.a needs (-lm: db.txt's mW to dBm).
REGDB_LDLIBS = $(JANSSON_LIBS) $(CRYPTO_LIBS) -lm
$(eval $(call static_lib,regdb,$(regdb_SRCS),$(JANSSON_CFLAGS) $(CRYPTO_CFLAGS)))
$(eval $(call program,regdb,regdb/tool/main.c,libregdb.a,$(REGDB_LDLIBS)))
$(eval $(call unit_test,regdb,tests/unit/regdb/test_regdb.c,libregdb.a,$(REGDB_LDLIBS)))
$(eval $(call unit_test,regdb_dbtxt,tests/unit/regdb/test_dbtxt.c,libregdb.a,$(REGDB_LDLIBS)))
INTEG_TESTS += tests/integration/regdb-dump.sh
INTEG_TESTS += tests/integration/regdb-compile.sh
$(eval $(call program,regdb-bench,regdb/bench/bench.c,libregdb.a,$(REGDB_LDLIBS)))
BENCHES += bench/regdb-bench.sh
# Built-in domains: generated from the packaged regulatory.db at build time.
$(eval $(call program,regdb-gen/mkbuiltin,regdb/gen/mkbuiltin.c regdb/dbfile.c regdb/model.c,,))
$(B)/regdb-gen/builtin_domains.inc: $(B)/regdb-gen/mkbuiltin $(REGDB_FILE)
	$(B)/regdb-gen/mkbuiltin $(REGDB_FILE) >$@.tmp && mv $@.tmp $@
$(B)/obj/regdb/builtin.o: $(B)/regdb-gen/builtin_domains.inc
$(B)/obj/regdb/builtin.o: private EXTRA_CFLAGS += -DREGDB_BUILTIN_INC='"$(B)/regdb-gen/builtin_domains.inc"'
INTEG_TESTS += tests/integration/regdb-verify.sh
