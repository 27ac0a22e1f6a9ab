# firmware/ — loaders, e820, MP/ACPI tables, SeaBIOS location, fw_cfg content.
firmware_SRCS := $(wildcard firmware/*.c)
$(eval $(call static_lib,firmware,$(firmware_SRCS),))
# Linux direct boot (issue 4): loaders, MP/ACPI tables, ACPI PM device.
$(eval $(call unit_test,firmware_direct_boot,tests/unit/firmware/test_direct_boot.c,libfirmware.a libdevices.a,))
$(eval $(call unit_test,vmm_insn,tests/unit/vmm/test_insn.c vmm/insn_decode.c,,))
$(eval $(call unit_test,vmm_cpuid,tests/unit/vmm/test_cpuid.c vmm/cpuid.c,,))
