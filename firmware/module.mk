# firmware/ — loaders, e820, MP/ACPI tables, SeaBIOS location, fw_cfg content.
firmware_SRCS := $(wildcard firmware/*.c)
$(eval $(call static_lib,firmware,$(firmware_SRCS),$(LZ4_CFLAGS)))
# Linux direct boot: loaders, MP/ACPI tables, ACPI PM device.
$(eval $(call unit_test,firmware_direct_boot,tests/unit/firmware/test_direct_boot.c,libfirmware.a libdevices.a,$(LZ4_LIBS)))
$(eval $(call unit_test,vmm_insn,tests/unit/vmm/test_insn.c vmm/insn_decode.c,,))
$(eval $(call unit_test,vmm_cpuid,tests/unit/vmm/test_cpuid.c vmm/cpuid.c vmm/topology.c,,))
# make check-linux: the minimal guest kernel (scripts/guest-kernel.sh) booted
# both ways with 1 and 4 vCPUs, commands over the console, clean poweroff.
LINUX_TESTS += tests/integration/linux-bzimage-smp1.sh tests/integration/linux-bzimage-smp4.sh \
	tests/integration/linux-pvh-smp1.sh tests/integration/linux-pvh-smp4.sh
# Bad -kernel/-initrd/-m input: one-line errors, crafted files (make check).
INTEG_TESTS += tests/integration/linux-bad-inputs.sh
KVM_TESTS += tests/integration/linux-bad-inputs.sh
# Boot time to init, vmm vs QEMU, and RSS beyond guest RAM (make bench).
BENCHES += bench/linux-boot.sh
KVM_BENCHES += bench/linux-boot.sh
# Foreign multiboot layouts: ELF in the BIOS area, a kernel over 0x9000.
INTEG_TESTS += tests/integration/multiboot-layout.sh
KVM_TESTS += tests/integration/multiboot-layout.sh
