# regdb/ — 802.11 regulatory domains (issue 7): libregdb.a and the build/regdb tool.
regdb_SRCS := $(wildcard regdb/*.c)
$(eval $(call static_lib,regdb,$(regdb_SRCS),$(JANSSON_CFLAGS) $(CRYPTO_CFLAGS)))
$(eval $(call program,regdb,regdb/tool/main.c,libregdb.a,$(JANSSON_LIBS) $(CRYPTO_LIBS)))
$(eval $(call unit_test,regdb,tests/unit/regdb/test_regdb.c,libregdb.a,$(JANSSON_LIBS) $(CRYPTO_LIBS)))
INTEG_TESTS += tests/integration/regdb-dump.sh
$(eval $(call program,regdb-bench,regdb/bench/bench.c,libregdb.a,$(JANSSON_LIBS) $(CRYPTO_LIBS)))
BENCHES += bench/regdb-bench.sh
# Built-in domains: generated from the packaged regulatory.db at build time.
$(eval $(call program,regdb-gen/mkbuiltin,regdb/gen/mkbuiltin.c regdb/dbfile.c regdb/model.c,,))
$(B)/regdb-gen/builtin_domains.inc: $(B)/regdb-gen/mkbuiltin $(REGDB_FILE)
	$(B)/regdb-gen/mkbuiltin $(REGDB_FILE) >$@.tmp && mv $@.tmp $@
$(B)/obj/regdb/builtin.o: $(B)/regdb-gen/builtin_domains.inc
$(B)/obj/regdb/builtin.o: private EXTRA_CFLAGS += -DREGDB_BUILTIN_INC='"$(B)/regdb-gen/builtin_domains.inc"'
INTEG_TESTS += tests/integration/regdb-verify.sh
