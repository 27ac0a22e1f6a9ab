# netstack/ — the userspace TCP/IP stack (issue 6). One file per protocol;
# every .c here goes into libnetstack.a.
netstack_SRCS := $(wildcard netstack/*.c)
$(eval $(call static_lib,netstack,$(netstack_SRCS),))
$(eval $(call unit_test,netstack_basic,tests/unit/netstack/test_basic.c,libnetstack.a,))
$(eval $(call program,netstack-host,netstack/host/main.c,libnetstack.a,))
INTEG_TESTS += tests/integration/netstack-tap.sh
