# devices/ — the device models (libdevices.a): the seam (dev_host.h, the
# buses, guest RAM) at the top, the devices by kind in intc/, timer/,
# storage/, pci/, iommu/, isa/, usb/, virtio/ and testdev/. A new device is a
# NAME.c and NAME.h in its kind's folder; the wildcard picks it up.
devices_SRCS := $(wildcard devices/*.c devices/*/*.c)
$(eval $(call static_lib,devices,$(devices_SRCS),))
# PC platform unit tests
$(eval $(call unit_test,devices_pci,tests/unit/devices/test_pci.c tests/unit/devices/map_rec.c,libdevices.a libbackends.a,))
$(eval $(call unit_test,devices_q35,tests/unit/devices/test_q35.c,libdevices.a libbackends.a,))
$(eval $(call unit_test,devices_pcie_root_port,tests/unit/devices/test_pcie_root_port.c,libdevices.a libbackends.a,))
$(eval $(call unit_test,devices_ide,tests/unit/devices/test_ide.c,libdevices.a libbackends.a,))
$(eval $(call unit_test,devices_ide_dma,tests/unit/devices/test_ide_dma.c,libdevices.a libbackends.a,))
$(eval $(call unit_test,devices_fw_cfg,tests/unit/devices/test_fw_cfg.c,libfirmware.a libdevices.a libbackends.a,$(LZ4_LIBS)))
$(eval $(call unit_test,devices_rtc,tests/unit/devices/test_rtc.c,libdevices.a libbackends.a,))
$(eval $(call unit_test,devices_legacy,tests/unit/devices/test_legacy.c,libdevices.a libbackends.a,))
$(eval $(call unit_test,devices_atapi,tests/unit/devices/test_atapi.c,libdevices.a libbackends.a,))
# the ICH9 AHCI controller: ports, commands, PRDTs, ATAPI, errors, MSI;
# Debian's kernel reads and writes a disk and mounts a CD-ROM on it (QEMU too)
$(eval $(call unit_test,devices_ahci,tests/unit/devices/test_ahci.c,libdevices.a libbackends.a,))
INTEG_TESTS += tests/integration/ahci-linux.sh
KVM_TESTS += tests/integration/ahci-linux.sh
# SeaBIOS boots from a disk on an AHCI port (QEMU too)
INTEG_TESTS += tests/integration/seabios-ahci.sh
KVM_TESTS += tests/integration/seabios-ahci.sh
INTEG_TESTS += tests/integration/seabios-mbr.sh
KVM_TESTS += tests/integration/seabios-mbr.sh
INTEG_TESTS += tests/integration/seabios-reset.sh
KVM_TESTS += tests/integration/seabios-reset.sh
INTEG_TESTS += tests/integration/seabios-int13.sh
KVM_TESTS += tests/integration/seabios-int13.sh
# the ATAPI CD-ROM: an ISOLINUX ISO booted with -boot d, QEMU alongside
INTEG_TESTS += tests/integration/cdrom-boot.sh
KVM_TESTS += tests/integration/cdrom-boot.sh
# the Linux guest mounts /dev/sr0; a QMP medium change it sees (QEMU too)
LINUX_TESTS += tests/integration/linux-cdrom.sh
LINUX_TESTS += tests/integration/seabios-grub.sh
LINUX_TESTS += tests/integration/seabios-syslinux.sh
BENCHES += bench/seabios-boot.sh
KVM_BENCHES += bench/seabios-boot.sh
# virtio: the queue code against hand-built rings, the PCI
# transport and virtio-blk with a fake host (no KVM)
$(eval $(call unit_test,virtio_queue,tests/unit/virtio/test_queue.c,libdevices.a libbackends.a,))
$(eval $(call unit_test,virtio_blk,tests/unit/virtio/test_virtio_blk.c,libdevices.a libbackends.a,))
# virtio-net: header checks, receive filling, control queue
$(eval $(call unit_test,virtio_net,tests/unit/virtio/test_virtio_net.c,libdevices.a libbackends.a,))
INTEG_TESTS += tests/integration/seabios-virtio.sh
KVM_TESTS += tests/integration/seabios-virtio.sh
# Interrupt controllers unit tests
$(eval $(call unit_test,devices_i8259,tests/unit/devices/test_i8259.c,libdevices.a libbackends.a,))
$(eval $(call unit_test,devices_ioapic,tests/unit/devices/test_ioapic.c,libdevices.a libbackends.a,))
$(eval $(call unit_test,devices_i8254,tests/unit/devices/test_i8254.c,libdevices.a libbackends.a,))
$(eval $(call unit_test,devices_lapic,tests/unit/devices/test_lapic.c,libdevices.a libbackends.a,))
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
$(eval $(call unit_test,devices_pc_testdev,tests/unit/devices/test_pc_testdev.c,libdevices.a libbackends.a,))
# intel-iommu (VT-d) and edu: registers, queued invalidation,
# DMA and interrupt remapping; the edu's registers, interrupts and DMA
$(eval $(call unit_test,devices_intel_iommu,tests/unit/devices/test_intel_iommu.c tests/unit/devices/state_tree.c,libdevices.a libbackends.a libstate.a,))
$(eval $(call unit_test,devices_edu,tests/unit/devices/test_edu.c,libdevices.a libbackends.a,))
# USB host controllers with empty root hubs: UHCI and xHCI registers,
# xHCI's command and event rings
$(eval $(call unit_test,devices_usb,tests/unit/devices/test_usb.c tests/unit/devices/state_tree.c,libdevices.a libbackends.a libstate.a,))
# Debian's uhci_hcd and xhci_hcd bind, run and suspend them (QEMU alongside)
INTEG_TESTS += tests/integration/linux-usb.sh
KVM_TESTS += tests/integration/linux-usb.sh
# virt-install's q35 device set as libvirt spells it: every function bound
# to the same driver as under QEMU, DHCP through the NIC behind its port
INTEG_TESTS += tests/integration/q35-libvirt-guest.sh
KVM_TESTS += tests/integration/q35-libvirt-guest.sh
$(eval $(call unit_test,devices_pci_testdev,tests/unit/devices/test_pci_testdev.c tests/unit/devices/state_tree.c,libdevices.a libbackends.a,))
# the same end to end in a guest (tests/guest/iommu.c), split and off
INTEG_TESTS += tests/integration/iommu-edu.sh tests/integration/iommu-edu-qemu.sh
KVM_TESTS += tests/integration/iommu-edu.sh tests/integration/iommu-edu-qemu.sh
# -M q35: Debian's Linux (ECAM/MCFG, ICH9, INTx routing) and SeaBIOS
INTEG_TESTS += tests/integration/q35-linux.sh tests/integration/seabios-q35.sh
KVM_TESTS += tests/integration/q35-linux.sh tests/integration/seabios-q35.sh
# Native PCIe hot-plug: Debian's pciehp, a virtio-blk hot-added behind a
# root port (QMP and HMP), read, written and hot-removed (QEMU alongside)
INTEG_TESTS += tests/integration/pcie-hotplug.sh
KVM_TESTS += tests/integration/pcie-hotplug.sh
# The UART and the i8042 on a fake host.
$(eval $(call unit_test,devices_serial,tests/unit/devices/test_serial.c,libdevices.a libbackends.a,))
$(eval $(call unit_test,devices_i8042,tests/unit/devices/test_i8042.c,libdevices.a libbackends.a,))
# The buses and the dev_host helpers.
$(eval $(call unit_test,devices_bus,tests/unit/devices/test_bus.c,libdevices.a libbackends.a,))
# virtio-wlan-pci itself on a fake host (no KVM): held receive buffers, outbox.
$(eval $(call unit_test,virtio_hwsim,tests/unit/virtio/test_virtio_hwsim.c tests/unit/devices/state_tree.c,libdevices.a libbackends.a,))
# virtio-rng-pci on a fake host: fills, the rate limit, malformed chains.
$(eval $(call unit_test,virtio_rng,tests/unit/virtio/test_virtio_rng.c,libdevices.a libbackends.a,))
# virtio-serial-pci on a fake host: handshake, data, open/close, bad messages.
$(eval $(call unit_test,virtio_console,tests/unit/virtio/test_virtio_console.c tests/unit/devices/state_tree.c,libdevices.a libbackends.a,))
# ... and in Debian's kernel (virtio_console, qemu-ga), QEMU as reference
INTEG_TESTS += tests/integration/virtio-serial.sh
KVM_TESTS += tests/integration/virtio-serial.sh
# ... and its ports added and removed at run time (chardev-add, device_add)
INTEG_TESTS += tests/integration/virtio-serial-hotplug.sh
KVM_TESTS += tests/integration/virtio-serial-hotplug.sh
# ... and in Debian's kernel (virtio_rng, /dev/hwrng), QEMU as reference
INTEG_TESTS += tests/integration/virtio-rng.sh
KVM_TESTS += tests/integration/virtio-rng.sh
# Snapshots: devices driven busy, saved to a state tree, loaded into fresh
# ones, compared port by port; bad trees refused
# PCI config space and the host bridge's ports in a snapshot
$(eval $(call unit_test,devices_pci_state,tests/unit/devices/test_pci_state.c tests/unit/devices/state_tree.c,libdevices.a libbackends.a,))
$(eval $(call unit_test,devices_state,tests/unit/devices/test_devstate.c tests/unit/devices/state_tree.c,libdevices.a libbackends.a,))
$(eval $(call unit_test,devices_irqstate,tests/unit/devices/test_irqstate.c tests/unit/devices/state_tree.c,libdevices.a libbackends.a,))
# the edu test device's snapshot: registers, DMA buffer, BAR; bad trees refused
$(eval $(call unit_test,devices_edu_state,tests/unit/devices/test_edu_state.c tests/unit/devices/state_tree.c,libdevices.a libbackends.a,))
# virtio-pci snapshots: a queue continues on a fresh device, bad trees refused
$(eval $(call unit_test,virtio_state,tests/unit/virtio/test_virtio_state.c tests/unit/devices/state_tree.c,libdevices.a libbackends.a,))
# i440FX (PAM, shadow RAM, SMRAM lock), PIIX3 PIRQs, fw_cfg's position
$(eval $(call unit_test,devices_chipset_state,tests/unit/devices/test_chipset_state.c tests/unit/devices/state_tree.c tests/unit/devices/map_rec.c,libdevices.a libbackends.a,))
# q35: MCH ECAM window, ICH9 LPC (PM block at PMBASE, RCRB, PIRQs), SMBus
$(eval $(call unit_test,devices_q35_state,tests/unit/devices/test_q35_state.c tests/unit/devices/state_tree.c,libdevices.a libbackends.a,))
# PIIX3 IDE: a PIO read resumes after the load, task file, bus master
$(eval $(call unit_test,devices_ide_state,tests/unit/devices/test_ide_state.c tests/unit/devices/state_tree.c,libdevices.a libbackends.a,))
# AHCI: global and port registers back at the remapped ABAR, issued commands refused
$(eval $(call unit_test,devices_ahci_state,tests/unit/devices/test_ahci_state.c tests/unit/devices/state_tree.c,libdevices.a libbackends.a,))
# i8042, port 0x92, i8257 DMA, ACPI PM (its timer resumes from the saved count)
$(eval $(call unit_test,devices_legacy_state,tests/unit/devices/test_legacy_state.c tests/unit/devices/state_tree.c,libdevices.a libbackends.a,))
# virtio-balloon-pci on a fake host: inflate/deflate, bad PFNs, stats, actual.
$(eval $(call unit_test,virtio_balloon,tests/unit/virtio/test_virtio_balloon.c tests/unit/devices/state_tree.c,libdevices.a libbackends.a,))
# the Linux guest's virtio_balloon: inflate to 256 MiB (RSS falls), stats, deflate; QEMU too
INTEG_TESTS += tests/integration/virtio-balloon.sh
KVM_TESTS += tests/integration/virtio-balloon.sh
