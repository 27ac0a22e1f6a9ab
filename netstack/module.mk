# netstack/ — the userspace TCP/IP stack (issue 6). One file per protocol;
# every .c here goes into libnetstack.a.
netstack_SRCS := $(wildcard netstack/*.c)
$(eval $(call static_lib,netstack,$(netstack_SRCS),))
$(eval $(call unit_test,netstack_basic,tests/unit/netstack/test_basic.c,libnetstack.a,))
# netstack-host links usernet for its --user-net mode.
$(eval $(call program,netstack-host,netstack/host/main.c,libusernet.a libnetstack.a,$(SLIRP_LIBS)))
INTEG_TESTS += tests/integration/netstack-tap.sh

# --- TCP engine and its unit tests (tcp-core) ---

# --- scripted TCP segment tests and fuzzing (tcp-script) ---

# --- TCP tools, interop tests and benches (tcp-interop) ---
