# devices/ — the device model: buses, guest RAM access, event loop, devices.
# Add new device sources to devices_SRCS (one file per device).
devices_SRCS := $(wildcard devices/*.c devices/virtio/*.c)
$(eval $(call static_lib,devices,$(devices_SRCS),$(URING_CFLAGS)))
# PC platform unit tests
$(eval $(call unit_test,devices_pci,tests/unit/devices/test_pci.c,libdevices.a,))
$(eval $(call unit_test,devices_ide,tests/unit/devices/test_ide.c,libdevices.a,))
$(eval $(call unit_test,devices_ide_dma,tests/unit/devices/test_ide_dma.c,libdevices.a,))
$(eval $(call unit_test,devices_block,tests/unit/devices/test_block.c,libdevices.a,))
# qcow2 with qemu-img as the oracle; format probing; image locks
$(eval $(call unit_test,devices_qcow2,tests/unit/devices/test_qcow2.c,libdevices.a,))
# SIGKILL at random moments during qcow2 writes, then qemu-img check
$(eval $(call program,tests/qcow2-writer,tests/integration/qcow2_writer.c,libdevices.a,))
INTEG_TESTS += tests/integration/qcow2-crash.sh
# the same image locks as QEMU, both ways
INTEG_TESTS += tests/integration/disk-lock.sh
$(eval $(call unit_test,devices_block_aio,tests/unit/devices/test_block_aio.c,libdevices.a,))
$(eval $(call unit_test,devices_fw_cfg,tests/unit/devices/test_fw_cfg.c,libfirmware.a libdevices.a,$(LZ4_LIBS)))
$(eval $(call unit_test,devices_rtc,tests/unit/devices/test_rtc.c,libdevices.a,))
$(eval $(call unit_test,devices_legacy,tests/unit/devices/test_legacy.c,libdevices.a,))
INTEG_TESTS += tests/integration/seabios-mbr.sh
KVM_TESTS += tests/integration/seabios-mbr.sh
INTEG_TESTS += tests/integration/seabios-reset.sh
KVM_TESTS += tests/integration/seabios-reset.sh
INTEG_TESTS += tests/integration/seabios-int13.sh
KVM_TESTS += tests/integration/seabios-int13.sh
LINUX_TESTS += tests/integration/seabios-grub.sh
LINUX_TESTS += tests/integration/seabios-syslinux.sh
BENCHES += bench/seabios-boot.sh
KVM_BENCHES += bench/seabios-boot.sh
$(eval $(call unit_test,vmm_exit_stats,tests/unit/vmm/test_exit_stats.c,libvmm.a libfirmware.a libdevices.a libwlan.a libregdb.a libusernet.a libnetstack.a libkvm.a,$(LZ4_LIBS) $(JANSSON_LIBS) $(SLIRP_LIBS) $$(WLAN_LDLIBS) $(SECCOMP_LIBS)))
# virtio: the queue code against hand-built rings, the PCI
# transport and virtio-blk with a fake host (no KVM)
$(eval $(call unit_test,virtio_queue,tests/unit/virtio/test_queue.c,libdevices.a,))
$(eval $(call unit_test,virtio_blk,tests/unit/virtio/test_virtio_blk.c,libdevices.a,))
# virtio-net: header checks, receive filling, control queue
$(eval $(call unit_test,virtio_net,tests/unit/virtio/test_virtio_net.c,libdevices.a,))
INTEG_TESTS += tests/integration/seabios-virtio.sh
KVM_TESTS += tests/integration/seabios-virtio.sh
# Interrupt controllers unit tests
$(eval $(call unit_test,devices_i8259,tests/unit/devices/test_i8259.c,libdevices.a,))
$(eval $(call unit_test,devices_ioapic,tests/unit/devices/test_ioapic.c,libdevices.a,))
$(eval $(call unit_test,devices_i8254,tests/unit/devices/test_i8254.c,libdevices.a,))
$(eval $(call unit_test,devices_lapic,tests/unit/devices/test_lapic.c,libdevices.a,))
# kernel_irqchip=on/split/off: payloads, SMP and SeaBIOS under split and off;
# timer delivery and the monitor views in all three
INTEG_TESTS += tests/integration/irqchip-on.sh tests/integration/irqchip-split.sh tests/integration/irqchip-off.sh
KVM_TESTS += tests/integration/irqchip-on.sh tests/integration/irqchip-split.sh tests/integration/irqchip-off.sh
# SeaBIOS boots an IDE disk in each mode; the boot sector checks INT 13h,
# its own IRQ 14 and the timer's IRQ 0
INTEG_TESTS += tests/integration/seabios-ide-irqchip.sh
KVM_TESTS += tests/integration/seabios-ide-irqchip.sh
LINUX_TESTS += tests/integration/linux-pvh-smp1-split.sh tests/integration/linux-pvh-smp4-split.sh
LINUX_TESTS += tests/integration/linux-pvh-smp1-off.sh tests/integration/linux-pvh-smp4-off.sh
BENCHES += bench/irqchip-latency.sh
# kvm-unit-tests support: QEMU's pc-testdev.
$(eval $(call unit_test,devices_pc_testdev,tests/unit/devices/test_pc_testdev.c,libdevices.a,))
# intel-iommu (VT-d) and edu: registers, queued invalidation,
# DMA and interrupt remapping; the edu's registers, interrupts and DMA
$(eval $(call unit_test,devices_intel_iommu,tests/unit/devices/test_intel_iommu.c,libdevices.a,))
$(eval $(call unit_test,devices_edu,tests/unit/devices/test_edu.c,libdevices.a,))
$(eval $(call unit_test,devices_pci_testdev,tests/unit/devices/test_pci_testdev.c,libdevices.a,))
# the same end to end in a guest (tests/guest/iommu.c), split and off
INTEG_TESTS += tests/integration/iommu-edu.sh tests/integration/iommu-edu-qemu.sh
KVM_TESTS += tests/integration/iommu-edu.sh tests/integration/iommu-edu-qemu.sh
