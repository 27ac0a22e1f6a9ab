# bench/ — benchmarks (`make bench`). Each area appends its scripts to BENCHES
# and builds any helper programs here with the program macro.
# core: the raw KVM_RUN loop peer of bench/core-pio.sh (libkvm.a only).
$(eval $(call program,raw-kvm-loop,bench/raw-kvm-loop.c,libkvm.a,))
EXTRA_TARGETS += $(B)/raw-kvm-loop
# virtio-blk (issue 14): the kit's virtio-blk-bench.elf under vmm and QEMU.
BENCHES += bench/virtio-blk.sh
KVM_BENCHES += bench/virtio-blk.sh
