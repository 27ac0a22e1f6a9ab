# devices/wlan/ — the virtual WLAN's radio medium (issue 16): libwlan.a (on
# libregdb.a), the build/wlan-medium daemon, their tests and benchmark.
wlan_SRCS := $(filter-out devices/wlan/daemon.c,$(wildcard devices/wlan/*.c))
WLAN_LDLIBS = $(REGDB_LDLIBS)
$(eval $(call static_lib,wlan,$(wlan_SRCS),))
$(eval $(call program,wlan-medium,devices/wlan/daemon.c,libwlan.a libregdb.a,$(WLAN_LDLIBS)))
$(eval $(call unit_test,wlan,tests/unit/wlan/test_wlan.c,libwlan.a libregdb.a,$(WLAN_LDLIBS)))
