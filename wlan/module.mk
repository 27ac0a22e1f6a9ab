# wlan/ — the virtual WLAN's radio medium: libwlan.a (on
# libregdb.a), the build/wlan-medium daemon, their tests and benchmark.
wlan_SRCS := $(filter-out wlan/daemon.c,$(wildcard wlan/*.c))
# (medium_state.c, the medium in the state tree, uses libstate.a; the
# daemon does not link it)
WLAN_LDLIBS = $(REGDB_LDLIBS)
$(eval $(call static_lib,wlan,$(wlan_SRCS),))
$(eval $(call program,wlan-medium,wlan/daemon.c,libwlan.a libregdb.a,$(WLAN_LDLIBS)))
$(eval $(call unit_test,wlan,tests/unit/wlan/test_wlan.c,libwlan.a libregdb.a,$(WLAN_LDLIBS)))
# The medium in the state tree: a round trip on a virtual clock, bad nodes.
$(eval $(call unit_test,wlan_state,tests/unit/wlan/test_medium_state.c tests/unit/devices/state_tree.c,libwlan.a libregdb.a,$(WLAN_LDLIBS)))
# The kit payload (tests/guest/wlan.c) under build/vmm: two radios' worth of
# hwsim messages, allowed and forbidden channels, ACKs, a country change
# from the monitor, counters in `info wlan`, malformed messages.
$(eval $(call guest_payload,wlan,$(GUEST_OBJ)/virtio.o))
INTEG_TESTS += tests/integration/wlan-kit.sh
KVM_TESTS += tests/integration/wlan-kit.sh
# The same payload migrated between two vmm on the daemon's medium: the
# destination tells the daemon the interface address the guest announced.
INTEG_TESTS += tests/integration/wlan-kit-migrate.sh
KVM_TESTS += tests/integration/wlan-kit-migrate.sh
# The daemon shared by three "VMs" (sockets): routing by connection, the
# country on the control socket, malformed input (no KVM needed).
INTEG_TESTS += tests/integration/wlan-daemon.sh
# Frames/s through the medium with enforcement on and off, ns per verdict.
$(eval $(call program,wlan-bench,bench/wlan-bench.c,libwlan.a libregdb.a,$(WLAN_LDLIBS)))
BENCHES += bench/wlan-medium.sh
KVM_BENCHES += bench/wlan-medium.sh
