# firmware/ — loaders, e820, MP/ACPI tables, SeaBIOS location, fw_cfg content.
firmware_SRCS := $(wildcard firmware/*.c)
$(eval $(call static_lib,firmware,$(firmware_SRCS),))
