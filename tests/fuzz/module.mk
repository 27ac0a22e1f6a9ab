# tests/fuzz/ — coverage-guided fuzz targets, one per parser.
#
# Every target is a LLVMFuzzerTestOneInput in tests/fuzz/fuzz_NAME.c with a
# seed corpus in tests/fuzz/corpus/NAME/ (crash reproducers go there too).
# Normally a target links tests/fuzz/replay_main.c: a plain program that
# replays its corpus, registered as a unit test so `make check` replays
# every corpus under gcc and under ASan/UBSan. `make fuzz` builds the same
# targets with clang and libFuzzer in build/fuzz (FUZZ=1) and runs each one
# FUZZ_SECONDS seconds (tests/fuzz/run.sh).

FUZZ_MAIN := $(if $(filter 1,$(FUZZ)),,tests/fuzz/replay_main.c)
FUZZ_LINK := $(if $(filter 1,$(FUZZ)),-fsanitize=fuzzer,)
FUZZ_TARGETS :=

# fuzz_target NAME SOURCES LIBS(link order) LDLIBS -> $(B)/tests/fuzz/NAME
define fuzz_target
$(B)/tests/fuzz/$(1): $(call obj,tests/fuzz/fuzz_$(1).c $(2) $(FUZZ_MAIN)) $(addprefix $(B)/,$(3)) $$(STATE_LIB)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_ALL) $(FUZZ_LINK) -o $$@ $$(filter %.o %.a,$$^) $(4)
FUZZ_TARGETS += $(B)/tests/fuzz/$(1)
endef

$(eval $(call fuzz_target,netstack,,libnetstack.a,))
$(eval $(call fuzz_target,usernet_dhcp,,libusernet.a libnetstack.a,$(SLIRP_LIBS)))
$(eval $(call fuzz_target,usernet_dns,,libusernet.a libnetstack.a,$(SLIRP_LIBS)))
$(eval $(call fuzz_target,usernet_state,,libusernet.a libnetstack.a,$(SLIRP_LIBS)))
$(eval $(call fuzz_target,regdb_db,,libregdb.a,$(REGDB_LDLIBS)))
$(eval $(call fuzz_target,regdb_dbtxt,,libregdb.a,$(REGDB_LDLIBS)))
$(eval $(call fuzz_target,multiboot,,libfirmware.a libdevices.a libbackends.a,$(LZ4_LIBS) $(DEVICES_LIBS)))
$(eval $(call fuzz_target,bzimage,,libfirmware.a libdevices.a libbackends.a,$(LZ4_LIBS) $(DEVICES_LIBS)))
$(eval $(call fuzz_target,pvh,,libfirmware.a libdevices.a libbackends.a,$(LZ4_LIBS) $(DEVICES_LIBS)))
$(eval $(call fuzz_target,fw_cfg,,libdevices.a libbackends.a,$(DEVICES_LIBS)))
$(eval $(call fuzz_target,ide,,libdevices.a libbackends.a,$(DEVICES_LIBS)))
$(eval $(call fuzz_target,atapi,,libdevices.a libbackends.a,$(DEVICES_LIBS)))
$(eval $(call fuzz_target,ahci,,libdevices.a libbackends.a,$(DEVICES_LIBS)))
$(eval $(call fuzz_target,pci,,libdevices.a libbackends.a,$(DEVICES_LIBS)))
$(eval $(call fuzz_target,q35,,libdevices.a libbackends.a,$(DEVICES_LIBS)))
$(eval $(call fuzz_target,virtqueue,,libdevices.a libbackends.a,$(DEVICES_LIBS)))
$(eval $(call fuzz_target,virtio_blk,,libdevices.a libbackends.a,$(DEVICES_LIBS)))
$(eval $(call fuzz_target,qcow2,,libbackends.a,$(DEVICES_LIBS)))
$(eval $(call fuzz_target,virtio_rng,,libdevices.a libbackends.a,$(DEVICES_LIBS)))
$(eval $(call fuzz_target,usb,,libdevices.a libbackends.a,$(DEVICES_LIBS)))
$(eval $(call fuzz_target,virtio_console,,libdevices.a libbackends.a,$(DEVICES_LIBS)))
$(eval $(call fuzz_target,virtio_balloon,,libdevices.a libbackends.a,$(DEVICES_LIBS)))
# virtio devices on fuzz_vpci.h's stand-in transport (pci.o is not linked)
$(eval $(call fuzz_target,virtio_net,,libdevices.a libbackends.a,$(DEVICES_LIBS)))
$(eval $(call fuzz_target,hwsim,,libwlan.a libregdb.a libdevices.a libbackends.a,$(WLAN_LDLIBS) $(DEVICES_LIBS)))
$(eval $(call fuzz_target,lapic,,libdevices.a libbackends.a,$(DEVICES_LIBS)))
$(eval $(call fuzz_target,ioapic,,libdevices.a libbackends.a,$(DEVICES_LIBS)))
$(eval $(call fuzz_target,intel_iommu,,libdevices.a libbackends.a,$(DEVICES_LIBS)))
$(eval $(call fuzz_target,cli,,libcli.a,$(JANSSON_LIBS)))
# the device-state tree reader and the devices' loaders on it
$(eval $(call fuzz_target,state,,libdevices.a libbackends.a,$(DEVICES_LIBS)))
# the PC chipset's loaders (PCI latches, i440FX, PIIX3, IDE, ACPI PM, i8042,
# port 0x92, i8257, fw_cfg, AHCI, pc-testdev) on a state tree
$(eval $(call fuzz_target,state_chipset,,libdevices.a libbackends.a,$(DEVICES_LIBS)))
# vmm's own PIT, I/O APIC and local APICs (kernel_irqchip=split|off) on a
# state tree
$(eval $(call fuzz_target,state_irqchip,,libdevices.a libbackends.a,$(DEVICES_LIBS)))
# the virtual WLAN's loaders (virtio-wlan-pci's outbox, a medium with its
# radios) on a state tree
$(eval $(call fuzz_target,state_wlan,,libwlan.a libregdb.a libdevices.a libbackends.a,$(WLAN_LDLIBS) $(DEVICES_LIBS)))
# the migration stream's framing (header, RAM blocks, trailer)
$(eval $(call fuzz_target,migration_stream,vmm/migration_stream.c vmm/migration_prefault.c,,))

# The control plane on a fake machine (no KVM, no vCPU threads).
FUZZ_FAKE_MACHINE := tests/fuzz/fake_machine.c
$(eval $(call fuzz_target,monitor,vmm/control/monitor.c vmm/control/cdrom.c vmm/balloon.c $(FUZZ_FAKE_MACHINE),libdevices.a libbackends.a,$(DEVICES_LIBS)))
$(eval $(call fuzz_target,qmp,vmm/control/qmp_commands.c vmm/control/qmp_fds.c vmm/control/qmp_hotplug.c vmm/control/qmp_balloon.c vmm/balloon.c vmm/control/qmp_args.c vmm/control/base64.c vmm/control/monitor.c vmm/control/cdrom.c vmm/control/listen.c $(FUZZ_FAKE_MACHINE),libdevices.a libbackends.a,$(JANSSON_LIBS) $(DEVICES_LIBS)))
$(eval $(call fuzz_target,telnet,vmm/telnet.c,,))
$(eval $(call fuzz_target,base64,vmm/control/base64.c,,))
$(eval $(call fuzz_target,gdbstub,vmm/control/gdb_regs.c vmm/control/listen.c $(FUZZ_FAKE_MACHINE),libdevices.a libbackends.a,$(DEVICES_LIBS)))
$(call obj,tests/fuzz/fuzz_qmp.c): EXTRA_CFLAGS += $(JANSSON_CFLAGS)

UNIT_TESTS += $(FUZZ_TARGETS)
