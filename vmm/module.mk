# vmm/ — the build/vmm program: CLI, machine, vCPU threads, chardevs, board.
vmm_SRCS := $(filter-out vmm/main.c,$(wildcard vmm/*.c))
$(eval $(call static_lib,vmm,$(vmm_SRCS),$(JANSSON_CFLAGS)))
# the NICs' user networking: libusernet (netstack, libslirp)
VMM_NET_LIBS := libusernet.a libnetstack.a
$(eval $(call program,vmm,vmm/main.c,libvmm.a libfirmware.a libdevices.a libwlan.a libregdb.a $(VMM_NET_LIBS) libkvm.a,$(LZ4_LIBS) $(JANSSON_LIBS) $(SLIRP_LIBS) $$(WLAN_LDLIBS) $(SECCOMP_LIBS)))
$(eval $(call unit_test,vmm_cli_net,tests/unit/vmm/test_cli_net.c vmm/cli.c vmm/cli_drive.c vmm/cli_control.c vmm/cli_net.c vmm/cli_libvirt.c vmm/cli_wlan.c vmm/cli_iommu.c vmm/cpuid.c,,$(JANSSON_LIBS)))
$(eval $(call unit_test,vmm_cli,tests/unit/vmm/test_cli.c vmm/cli.c vmm/cli_drive.c vmm/cli_control.c vmm/cli_net.c vmm/cli_libvirt.c vmm/cli_wlan.c vmm/cli_iommu.c vmm/cpuid.c,,$(JANSSON_LIBS)))
INTEG_TESTS += tests/integration/core-hello.sh
KVM_TESTS += tests/integration/core-hello.sh
BENCHES += bench/core-startup.sh
KVM_BENCHES += bench/core-startup.sh
INTEG_TESTS += tests/integration/core-monitor.sh
KVM_TESTS += tests/integration/core-monitor.sh
INTEG_TESTS += tests/integration/core-debug.sh
KVM_TESTS += tests/integration/core-debug.sh
$(eval $(call unit_test,devices_serial,tests/unit/devices/test_serial.c,libdevices.a,))
$(eval $(call unit_test,devices_i8042,tests/unit/devices/test_i8042.c,libdevices.a,))
$(eval $(call unit_test,vmm_monitor,tests/unit/vmm/test_monitor.c,libvmm.a libfirmware.a libdevices.a libwlan.a libregdb.a $(VMM_NET_LIBS) libkvm.a,$(LZ4_LIBS) $(JANSSON_LIBS) $(SLIRP_LIBS) $$(WLAN_LDLIBS) $(SECCOMP_LIBS)))
$(eval $(call unit_test,vmm_qmp_args,tests/unit/vmm/test_qmp_args.c,libvmm.a libfirmware.a libdevices.a libwlan.a libregdb.a $(VMM_NET_LIBS) libkvm.a,$(LZ4_LIBS) $(JANSSON_LIBS) $(SLIRP_LIBS) $$(WLAN_LDLIBS) $(SECCOMP_LIBS)))
BENCHES += bench/core-pio.sh
KVM_BENCHES += bench/core-pio.sh
BENCHES += bench/core-mmio.sh
KVM_BENCHES += bench/core-mmio.sh
$(eval $(call unit_test,vmm_iret,tests/unit/vmm/test_iret.c vmm/iret.c,,))
INTEG_TESTS += tests/integration/control-exit.sh
KVM_TESTS += tests/integration/control-exit.sh
$(eval $(call unit_test,vmm_cli_control,tests/unit/vmm/test_cli_control.c vmm/cli.c vmm/cli_drive.c vmm/cli_control.c vmm/cli_net.c vmm/cli_libvirt.c vmm/cli_wlan.c vmm/cli_iommu.c vmm/cpuid.c,,$(JANSSON_LIBS)))
INTEG_TESTS += tests/integration/control-qmp.sh
KVM_TESTS += tests/integration/control-qmp.sh
INTEG_TESTS += tests/integration/control-gdb.sh
KVM_TESTS += tests/integration/control-gdb.sh
# QEMU's -cpu models and switches, and the tests' -cpu wrapper.
INTEG_TESTS += tests/integration/cpu-models.sh
# libvirt 9.0 manages a vmm guest (two Linux boots: minutes where the
# guest's ring 0 is emulated, so with the Linux tests)
INTEG_TESTS += tests/integration/libvirt-probe.sh
# character devices and strict QMP, beside QEMU (-machine none, no KVM)
INTEG_TESTS += tests/integration/control-chardev.sh
LINUX_TESTS += tests/integration/libvirt.sh
$(eval $(call unit_test,vmm_cli_libvirt,tests/unit/vmm/test_cli_libvirt.c vmm/cli.c vmm/cli_drive.c vmm/cli_control.c vmm/cli_net.c vmm/cli_libvirt.c vmm/cli_wlan.c vmm/cli_iommu.c vmm/cpuid.c,,$(JANSSON_LIBS)))
# pvpanic in the Linux guest: the DSDT's QEMU0001, a panic -> GUEST_PANICKED, status 4
LINUX_TESTS += tests/integration/linux-pvpanic.sh
# gdb against the Linux guest: break start_kernel, bt, info registers, detach
LINUX_TESTS += tests/integration/linux-gdb.sh
