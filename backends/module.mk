# backends/ — the host side of device I/O (libbackends.a, one header,
# backends/backends.h): the event loop, disk images and the io_uring
# engine (block/), the -netdev backends (net/: TAP, user networking on
# netstack/usernet). A new netdev backend is a net/net_NAME.c with its
# constructor in backends.h.
backends_SRCS := $(wildcard backends/*.c backends/*/*.c)
$(eval $(call static_lib,backends,$(backends_SRCS),$(URING_CFLAGS)))
# Disk images and the io_uring engine on temporary files (no KVM).
$(eval $(call unit_test,backends_block,tests/unit/backends/test_block.c,libbackends.a,))
$(eval $(call unit_test,backends_block_aio,tests/unit/backends/test_block_aio.c,libbackends.a,))
# qcow2 with qemu-img as the oracle; format probing; image locks
$(eval $(call unit_test,backends_qcow2,tests/unit/backends/test_qcow2.c,libbackends.a,))
# a writable image handed between two openers (live migration on one host)
$(eval $(call unit_test,backends_block_handover,tests/unit/backends/test_block_handover.c,libbackends.a,))
# qcow2 on the io_uring engine: many requests in flight against a model
$(eval $(call unit_test,backends_qcow2_aio,tests/unit/backends/test_qcow2_aio.c,libbackends.a,))
# compressed clusters (zlib, zstd) read in flight and decoded off the I/O thread
$(eval $(call unit_test,backends_qcow2_decode,tests/unit/backends/test_qcow2_decode.c,libbackends.a,))
# SIGKILL at random moments during qcow2 writes, then qemu-img check
$(eval $(call program,tests/qcow2-writer,tests/integration/qcow2_writer.c,libbackends.a,))
INTEG_TESTS += tests/integration/qcow2-crash.sh
# the same image locks as QEMU, both ways
INTEG_TESTS += tests/integration/disk-lock.sh
# Linux's virtio_blk (Debian's kernel) reading and writing a three-file
# qcow2 chain through the engine, qemu-img as the oracle, QEMU alongside
INTEG_TESTS += tests/integration/virtio-blk-qcow2-chain.sh
KVM_TESTS += tests/integration/virtio-blk-qcow2-chain.sh
