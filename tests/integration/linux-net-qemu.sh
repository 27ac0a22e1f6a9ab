#!/bin/sh
# The peer: the same checks as linux-net-user.sh under qemu-system-x86_64
# -enable-kvm -netdev user (libslirp) -device virtio-net-pci. QEMU's NIC has
# no offloads on user networking: the guest moves ~35 KiB/s to the host on
# hosts whose KVM emulates guest ring 0, so the TCP check moves 1 MiB here.
LINUX_NET_MB=${LINUX_NET_MB:-1} exec sh "$(dirname "$0")/linux-net.inc.sh" qemu user
