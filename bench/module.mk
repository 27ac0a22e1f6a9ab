# bench/ — benchmarks (`make bench`). Each area appends its scripts to BENCHES
# and builds any helper programs here with the program macro.
# core: the raw KVM_RUN loop peer of bench/core-pio.sh (libkvm.a only).
$(eval $(call program,raw-kvm-loop,bench/raw-kvm-loop.c,libkvm.a,))
EXTRA_TARGETS += $(B)/raw-kvm-loop
# virtio-blk: the kit's virtio-blk-bench.elf under vmm and QEMU.
BENCHES += bench/virtio-blk.sh
KVM_BENCHES += bench/virtio-blk.sh
# virtio-net: the kit's virtio-net.elf (bench=1) under vmm
# (netstack and libslirp) and QEMU against a host UDP echo server.
$(eval $(call program,net-udp-echo,bench/net-udp-echo.c,,))
BENCHES += bench/virtio-net-udp.sh
KVM_BENCHES += bench/virtio-net-udp.sh
# virt-install's q35 domain: boot, RSS beyond guest RAM, balloon, vs QEMU.
BENCHES += bench/q35-guest.sh
KVM_BENCHES += bench/q35-guest.sh
# virtio-net: Linux guest TCP bulk both ways, vmm vs QEMU.
BENCHES += bench/virtio-net-tcp.sh
KVM_BENCHES += bench/virtio-net-tcp.sh
# qcow2: vmm's block layer alone on the host (no guest), against
# `qemu-img bench` on the same image.
$(eval $(call program,qcow2-write,bench/qcow2-write.c,libbackends.a,))
EXTRA_TARGETS += $(B)/qcow2-write
# migration: a 1 GiB guest live (idle, dirtying) and restored from a file, vs QEMU.
BENCHES += bench/migrate.sh
KVM_BENCHES += bench/migrate.sh
# the same with the kit's mem-dirty guest: native speed on kvm_pvm too.
BENCHES += bench/migrate-kit.sh
KVM_BENCHES += bench/migrate-kit.sh
# virtio-balloon: 256 MiB inflated and deflated by the kit's ring-3 driver, vs QEMU.
BENCHES += bench/balloon-kit.sh
KVM_BENCHES += bench/balloon-kit.sh
# virsh save / virsh restore of a 1 GiB guest through libvirt, vs QEMU.
BENCHES += bench/libvirt-save.sh
KVM_BENCHES += bench/libvirt-save.sh
# virsh migrate --live (idle, dirtying) between two libvirtds, virsh save and
# restore, of the kit's mem-dirty guest, vs QEMU under the same libvirt.
BENCHES += bench/libvirt-migrate-kit.sh
KVM_BENCHES += bench/libvirt-migrate-kit.sh
# the Debian 12 disk of scripts/debian-disk.sh from exec to DEBIAN-READY and a shell, vs QEMU.
BENCHES += bench/debian-boot.sh
KVM_BENCHES += bench/debian-boot.sh
