# netstack/usernet/ — user-mode networking backend on netstack.
# Its own library with its own public header, usernet.h.
usernet_SRCS := $(wildcard netstack/usernet/*.c)
$(eval $(call static_lib,usernet,$(usernet_SRCS),$(SLIRP_CFLAGS)))

# Unit suites: the DHCP server, the NAT table, the frame interface, TCP NAT,
# hostfwd rules across a save and load.
$(eval $(call unit_test,usernet_dhcp,tests/unit/usernet/test_dhcp.c,libusernet.a libnetstack.a,$(SLIRP_LIBS)))
$(eval $(call unit_test,usernet_nat,tests/unit/usernet/test_nat.c,libusernet.a libnetstack.a,$(SLIRP_LIBS)))
$(eval $(call unit_test,usernet_frames,tests/unit/usernet/test_usernet.c,libusernet.a libnetstack.a,$(SLIRP_LIBS)))
$(eval $(call unit_test,usernet_tcp_nat,tests/unit/usernet/test_tcp_nat.c tests/unit/usernet/guest_link.c,libusernet.a libnetstack.a,$(SLIRP_LIBS)))
$(eval $(call unit_test,usernet_hostfwd_state,tests/unit/usernet/test_hostfwd_state.c tests/unit/usernet/guest_link.c,libusernet.a libnetstack.a,$(SLIRP_LIBS)))

# Root-only integration tests: a network namespace as the guest.
INTEG_TESTS += tests/integration/usernet-dhcp.sh tests/integration/usernet-tcp.sh tests/integration/usernet-ipv6.sh

BENCHES += bench/usernet-iperf.sh
