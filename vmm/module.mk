# vmm/ — the build/vmm program: CLI, machine, vCPU threads, chardevs, board.
vmm_SRCS := $(filter-out vmm/main.c,$(wildcard vmm/*.c))
$(eval $(call static_lib,vmm,$(vmm_SRCS),$(JANSSON_CFLAGS)))
$(eval $(call program,vmm,vmm/main.c,libvmm.a libfirmware.a libdevices.a libkvm.a,$(LZ4_LIBS) $(JANSSON_LIBS)))
$(eval $(call unit_test,vmm_cli,tests/unit/vmm/test_cli.c vmm/cli.c vmm/cli_drive.c vmm/cli_control.c vmm/cpuid.c,,))
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
$(eval $(call unit_test,vmm_monitor,tests/unit/vmm/test_monitor.c,libvmm.a libfirmware.a libdevices.a libkvm.a,$(LZ4_LIBS)))
BENCHES += bench/core-pio.sh
KVM_BENCHES += bench/core-pio.sh
BENCHES += bench/core-mmio.sh
KVM_BENCHES += bench/core-mmio.sh
$(eval $(call unit_test,vmm_iret,tests/unit/vmm/test_iret.c vmm/iret.c,,))
INTEG_TESTS += tests/integration/control-exit.sh
KVM_TESTS += tests/integration/control-exit.sh
$(eval $(call unit_test,vmm_cli_control,tests/unit/vmm/test_cli_control.c vmm/cli.c vmm/cli_drive.c vmm/cli_control.c vmm/cpuid.c,,))
INTEG_TESTS += tests/integration/control-qmp.sh
KVM_TESTS += tests/integration/control-qmp.sh
INTEG_TESTS += tests/integration/control-gdb.sh
KVM_TESTS += tests/integration/control-gdb.sh
# QEMU's -cpu models and switches, and the tests' -cpu wrapper (issue 22).
INTEG_TESTS += tests/integration/cpu-models.sh
