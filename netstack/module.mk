# netstack/ — the userspace TCP/IP stack. One file per protocol;
# every .c here goes into libnetstack.a.
netstack_SRCS := $(wildcard netstack/*.c)
$(eval $(call static_lib,netstack,$(netstack_SRCS),))
$(eval $(call unit_test,netstack_basic,tests/unit/netstack/test_basic.c,libnetstack.a,))
$(eval $(call unit_test,netstack_udp_link,tests/unit/netstack/test_udp_link.c,libnetstack.a,))
$(eval $(call unit_test,netstack_zerocopy,tests/unit/netstack/test_zerocopy.c,libnetstack.a,))
$(eval $(call unit_test,netstack_gso,tests/unit/netstack/test_gso.c,libnetstack.a,))
# netstack-host links usernet for its --user-net mode.
netstack_host_SRCS := $(filter-out netstack/host/linux-peer.c,$(wildcard netstack/host/*.c))
$(eval $(call program,netstack-host,$(netstack_host_SRCS),libusernet.a libnetstack.a,$(SLIRP_LIBS)))
INTEG_TESTS += tests/integration/netstack-tap.sh
# netstack-host --offload: the TAP with virtio-net headers (root).
INTEG_TESTS += tests/integration/netstack-offload.sh

# --- TCP engine and its unit tests (tcp-core) ---
# The engine is netstack/tcp*.c (picked up by the wildcard above).
TCP_UNIT_SRCS := tests/unit/netstack/test_tcp_unit.c tests/unit/netstack/test_tcp_unit_loss.c \
	tests/unit/netstack/test_tcp_unit_segments.c tests/unit/netstack/tcp_unit_fixture.c
$(eval $(call unit_test,netstack_tcp,$(TCP_UNIT_SRCS),libnetstack.a,))

# --- scripted TCP segment tests and fuzzing (tcp-script) ---
TCPSCRIPT_SRCS := tests/unit/netstack/tcpscript.c tests/unit/netstack/tcpscript_parse.c \
	tests/unit/netstack/tcpscript_seg.c tests/unit/netstack/tcpscript_ip.c
$(eval $(call unit_test,netstack_tcp_script,tests/unit/netstack/test_tcp_script.c $(TCPSCRIPT_SRCS),libnetstack.a,))
$(eval $(call unit_test,netstack_tcp_script_close,tests/unit/netstack/test_tcp_script_close.c $(TCPSCRIPT_SRCS),libnetstack.a,))
$(eval $(call unit_test,netstack_tcp_script_rst,tests/unit/netstack/test_tcp_script_rst.c $(TCPSCRIPT_SRCS),libnetstack.a,))
$(eval $(call unit_test,netstack_tcp_script_data,tests/unit/netstack/test_tcp_script_data.c $(TCPSCRIPT_SRCS),libnetstack.a,))
$(eval $(call unit_test,netstack_tcp_script_window,tests/unit/netstack/test_tcp_script_window.c $(TCPSCRIPT_SRCS),libnetstack.a,))
$(eval $(call unit_test,netstack_tcp_script_loss,tests/unit/netstack/test_tcp_script_loss.c $(TCPSCRIPT_SRCS),libnetstack.a,))
$(eval $(call unit_test,netstack_tcp_script_timers,tests/unit/netstack/test_tcp_script_timers.c $(TCPSCRIPT_SRCS),libnetstack.a,))
$(eval $(call unit_test,netstack_tcp_script_random,tests/unit/netstack/test_tcp_script_random.c $(TCPSCRIPT_SRCS),libnetstack.a,))
FUZZ_FIXTURE := tests/unit/netstack/fuzz_fixture.c
$(eval $(call unit_test,netstack_fuzz,tests/unit/netstack/test_fuzz.c $(FUZZ_FIXTURE) $(TCPSCRIPT_SRCS),libnetstack.a,))
$(eval $(call unit_test,netstack_fuzz_tcp,tests/unit/netstack/test_fuzz_tcp.c $(FUZZ_FIXTURE) $(TCPSCRIPT_SRCS),libnetstack.a,))
# RTTM, the scoreboard across an RTO, reneging (tcp-loss)
$(eval $(call unit_test,netstack_tcp_script_rtt,tests/unit/netstack/test_tcp_script_rtt.c $(TCPSCRIPT_SRCS),libnetstack.a,))

# --- TCP tools, interop tests and benches (tcp-interop) ---
# netstack-peer: the Linux (kernel TCP) side of the interop tests.
$(eval $(call program,netstack-peer,netstack/host/linux-peer.c,,))
# Benchmarks (bench/netstack-*.sh) and their helper programs.
netstack_bench_COMMON := bench/netstack-bench.c
$(eval $(call program,netstack-bench-udp,bench/netstack-udp.c $(netstack_bench_COMMON),libnetstack.a,))
BENCHES += bench/netstack-udp.sh
$(eval $(call program,netstack-bench-bulk,bench/netstack-bulk.c $(netstack_bench_COMMON),libnetstack.a,))
BENCHES += bench/netstack-bulk.sh
$(call obj,bench/netstack-slirp.c): EXTRA_CFLAGS += $(SLIRP_CFLAGS)
$(eval $(call program,netstack-bench-slirp,bench/netstack-slirp.c $(netstack_bench_COMMON),libnetstack.a,$(SLIRP_LIBS)))
BENCHES += bench/netstack-slirp.sh
# Interop with Linux's TCP over a TAP (root; skip 77 otherwise).
INTEG_TESTS += tests/integration/netstack-tcp-basic.sh tests/integration/netstack-tcp-impair.sh \
	tests/integration/netstack-tcp-ipv6.sh \
	tests/integration/netstack-tcp-bulk.sh

# --- IPv6 ---
$(eval $(call unit_test,netstack_ipv6,tests/unit/netstack/test_ipv6.c,libnetstack.a,))
IPV6_FRAMES_SRCS := tests/unit/netstack/test_ipv6_frames.c tests/unit/netstack/test_ipv6_frames_icmp.c \
	tests/unit/netstack/ipv6_frames_fixture.c
$(eval $(call unit_test,netstack_ipv6_frames,$(IPV6_FRAMES_SRCS),libnetstack.a,))
