# tests/guest/ — the guest payload kit and its payloads, built into
# $(B)/tests/guest/*.elf as multiboot v1 ELF32 images.
#
# The guest code is freestanding 64-bit C with a 32-bit multiboot entry: it is
# compiled with its own flags (never the host CFLAGS or sanitizers), linked as
# ELF64 at 1 MiB and converted to ELF32 (EM_386), the class multiboot loaders
# (and QEMU) accept. Debian's gcc has no -m32 multilib, and none is needed.

GUEST_LD ?= ld
GUEST_OBJCOPY ?= objcopy
GUEST_OBJ := $(B)/guest-obj
GUEST_OUT := $(B)/tests/guest
GUEST_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -ffreestanding -fno-pic -fno-pie \
	-fno-stack-protector -fno-asynchronous-unwind-tables -fno-omit-frame-pointer \
	-mno-red-zone -mgeneral-regs-only -mcmodel=small -Itests/guest
GUEST_KIT := $(GUEST_OBJ)/entry.o $(GUEST_OBJ)/kit.o


$(GUEST_OBJ)/%.o: tests/guest/%.c tests/guest/module.mk
	@mkdir -p $(@D)
	$(CC) $(GUEST_CFLAGS) -MMD -MP -c -o $@ $<

$(GUEST_OBJ)/%.o: tests/guest/%.S tests/guest/module.mk
	@mkdir -p $(@D)
	$(CC) $(GUEST_CFLAGS) -MMD -MP -c -o $@ $<

# guest_payload NAME EXTRA_OBJS -> $(GUEST_OUT)/NAME.elf
define guest_payload
$(GUEST_OUT)/$(1).elf: $(GUEST_KIT) $(GUEST_OBJ)/$(1).o $(2) tests/guest/link.ld
	@mkdir -p $$(@D)
	$$(GUEST_LD) -m elf_x86_64 -nostdlib -static -z max-page-size=0x1000 \
		-T tests/guest/link.ld -o $$@.64 $$(filter %.o,$$^)
	$$(GUEST_OBJCOPY) -O elf32-i386 $$@.64 $$@
	@rm -f $$@.64
EXTRA_TARGETS += $(GUEST_OUT)/$(1).elf
endef

$(eval $(call guest_payload,hello,))
$(eval $(call guest_payload,pio-loop,))
$(eval $(call guest_payload,mmio-loop,))
$(eval $(call guest_payload,smp,$(GUEST_OBJ)/smp_tramp.o))
$(eval $(call guest_payload,unclaimed,))
$(eval $(call guest_payload,control,))
# The kit's virtio-pci driver (virtio.c) and virtio-blk requests (vblk.c).
GUEST_VIRTIO_BLK := $(GUEST_OBJ)/virtio.o $(GUEST_OBJ)/vblk.o
$(eval $(call guest_payload,virtio-blk,$(GUEST_VIRTIO_BLK)))
$(eval $(call guest_payload,virtio-blk-bench,$(GUEST_VIRTIO_BLK)))
# Durable disks: write, flush, halt for the host's SIGKILL.
$(eval $(call guest_payload,disk-flush,$(GUEST_VIRTIO_BLK)))
$(eval $(call guest_payload,irq,))
# A filled, ticking, optionally dirtying guest in ring 3: bench/migrate-kit.sh
$(eval $(call guest_payload,mem-dirty,))
# A filled guest that follows virtio-balloon's num_pages from ring 3: bench/balloon-kit.sh
$(eval $(call guest_payload,balloon,$(GUEST_OBJ)/virtio.o))
# pci-testdev's counted port until a serial byte: migrate-exits.sh
$(eval $(call guest_payload,exit-count,$(GUEST_OBJ)/virtio.o))
# VT-d and edu: DMA and interrupt remapping end to end.
$(eval $(call guest_payload,iommu,))
# virtio-net frames (vnet.c): DHCP, ARP, UDP through user networking.
$(eval $(call guest_payload,virtio-net,$(GUEST_OBJ)/virtio.o $(GUEST_OBJ)/vnet.o))

-include $(wildcard $(GUEST_OBJ)/*.d)

# Every payload under build/vmm; smp.elf with -smp 1, 2, 4 in core-smp.sh.
INTEG_TESTS += tests/integration/payloads.sh
KVM_TESTS += tests/integration/payloads.sh
INTEG_TESTS += tests/integration/core-smp.sh
KVM_TESTS += tests/integration/core-smp.sh
INTEG_TESTS += tests/integration/core-qemu-payloads.sh
KVM_TESTS += tests/integration/core-qemu-payloads.sh
# The kit's virtio-blk payload under build/vmm, and under QEMU's
# virtio-blk-pci (the driver is checked against the peer too).
INTEG_TESTS += tests/integration/virtio-blk-kit.sh tests/integration/virtio-blk-kit-qemu.sh
KVM_TESTS += tests/integration/virtio-blk-kit.sh tests/integration/virtio-blk-kit-qemu.sh
# The kit's virtio-net payload (DHCP, ARP, UDP through user networking, a
# broken chain) under build/vmm and under QEMU's virtio-net-pci.
INTEG_TESTS += tests/integration/virtio-net-kit.sh tests/integration/virtio-net-kit-qemu.sh
KVM_TESTS += tests/integration/virtio-net-kit.sh tests/integration/virtio-net-kit-qemu.sh
# The monitor and QMP side: info network/usernet, hostfwd at run time, set_link.
INTEG_TESTS += tests/integration/virtio-net-monitor.sh
KVM_TESTS += tests/integration/virtio-net-monitor.sh
# -netdev tap (root): the same payload on a TAP in a private namespace.
INTEG_TESTS += tests/integration/virtio-net-tap.sh
KVM_TESTS += tests/integration/virtio-net-tap.sh
# Linux on an ext4 virtio-blk disk: vmm, vmm killed after an fsync, QEMU.
LINUX_TESTS += tests/integration/linux-virtio-blk.sh tests/integration/linux-virtio-blk-durable.sh \
	tests/integration/linux-virtio-blk-qemu.sh
# Linux's own virtio_net driver and busybox: vmm on usernet, on
# impl=slirp, on a TAP, with no network option at all; QEMU as the peer.
LINUX_TESTS += tests/integration/linux-net-user.sh tests/integration/linux-net-slirp.sh \
	tests/integration/linux-net-tap.sh tests/integration/linux-net-tapmq.sh \
	tests/integration/linux-sandbox.sh \
	tests/integration/linux-net-default.sh \
	tests/integration/linux-net-qemu.sh
# Linux's mac80211_hwsim with Debian's hostapd and wpa_supplicant
# (scripts/guest-wlan-initramfs.sh): in-kernel medium (the reference),
# vmm's medium with runtime domain changes, two VMs on the daemon's medium,
# a guest live-migrated with its AP and station associated.
LINUX_TESTS += tests/integration/linux-wlan-hwsim.sh tests/integration/linux-wlan-medium.sh \
	tests/integration/linux-wlan-shared.sh tests/integration/linux-wlan-migrate.sh
# The same userspace on Debian's packaged kernel with its own
# mac80211_hwsim module, through vmm's medium: what users run, in a domain
# cycle and in a live migration. No kernel build (cpio(1) writes the
# initramfs), so make check runs them (~100 s each nested).
INTEG_TESTS += tests/integration/linux-wlan-debian.sh tests/integration/linux-wlan-migrate-debian.sh
KVM_TESTS += tests/integration/linux-wlan-debian.sh tests/integration/linux-wlan-migrate-debian.sh
