# firmware/ — loaders, e820, MP/ACPI tables, SeaBIOS location, fw_cfg content.
firmware_SRCS := $(wildcard firmware/*.c)
$(eval $(call static_lib,firmware,$(firmware_SRCS),$(LZ4_CFLAGS)))
# Linux direct boot: loaders, MP/ACPI tables, ACPI PM device.
$(eval $(call unit_test,firmware_direct_boot,tests/unit/firmware/test_direct_boot.c,libfirmware.a libdevices.a libbackends.a,$(LZ4_LIBS)))
# The ACPI tables as fw_cfg blobs + table-loader commands for SeaBIOS.
$(eval $(call unit_test,firmware_acpi_loader,tests/unit/firmware/test_acpi_loader.c,libfirmware.a libdevices.a libbackends.a,$(LZ4_LIBS)))
# make check-linux: the minimal guest kernel (scripts/guest-kernel.sh) booted
# both ways with 1 and 4 vCPUs, commands over the console, clean poweroff.
LINUX_TESTS += tests/integration/linux-bzimage-smp1.sh tests/integration/linux-bzimage-smp4.sh \
	tests/integration/linux-pvh-smp1.sh tests/integration/linux-pvh-smp4.sh
# ACPI for a SeaBIOS disk boot of Debian's own kernel: tables, _PRT, MADT,
# power button, S5 exit 0; QEMU runs the same disk as the reference.
INTEG_TESTS += tests/integration/seabios-acpi.sh
KVM_TESTS += tests/integration/seabios-acpi.sh
# bootindex= of virtio-blk (root bus, behind a root port) and ide-hd (PIIX3, ich9-ahci, ahci): the bootorder file
INTEG_TESTS += tests/integration/seabios-bootindex.sh
KVM_TESTS += tests/integration/seabios-bootindex.sh
# Bad -kernel/-initrd/-m input: one-line errors, crafted files (make check).
INTEG_TESTS += tests/integration/linux-bad-inputs.sh
KVM_TESTS += tests/integration/linux-bad-inputs.sh
# Boot time to init, vmm vs QEMU, and RSS beyond guest RAM (make bench).
BENCHES += bench/linux-boot.sh
KVM_BENCHES += bench/linux-boot.sh
# Foreign multiboot layouts: ELF in the BIOS area, a kernel over 0x9000.
INTEG_TESTS += tests/integration/multiboot-layout.sh
KVM_TESTS += tests/integration/multiboot-layout.sh
# The multiboot loader and e820_build.
$(eval $(call unit_test,firmware_e820,tests/unit/firmware/test_e820.c,libfirmware.a libdevices.a libbackends.a,$(LZ4_LIBS)))
$(eval $(call unit_test,firmware_multiboot,tests/unit/firmware/test_multiboot.c,libfirmware.a libdevices.a libbackends.a,$(LZ4_LIBS)))
