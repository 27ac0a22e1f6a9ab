#!/bin/sh
# virtio-net-tcp.sh [MB] [QEMU_MB] — Linux guest TCP bulk throughput over
# virtio-net on user networking, build/vmm (netstack's usernet) vs
# qemu-system-x86_64 -enable-kvm -netdev user (libslirp), the same kernel,
# initramfs and command line, one after the other in one run:
#
#   guest->host   dd if=/dev/zero | busybox nc 10.0.2.2 PORT, into a host
#                 sink on 127.0.0.1 (tests/integration/linux_net_peer.py)
#   host->guest   the host server sends zeros, busybox nc >/dev/null
#
# MB MiB each way under vmm (default 4), QEMU_MB under QEMU (default 1:
# QEMU's NIC has no offloads on user networking, and where guest ring 0 is
# emulated it moves tens of KiB/s, so a larger figure only costs time).
# MiB/s: guest->host on the host sink's clock (accept to last byte),
# host->guest the guest's nc from start to end on the host's clock (the
# sender's clock says nothing: busybox nc half-closes at once and socket
# buffers hold megabytes); CPU is the VMM
# process's user+system time during the transfer, its vCPU threads' guest
# time included. Ratio: vmm/QEMU throughput (> 1: vmm faster). Goal: >= 2.
# Each side boots in a private network namespace (linux-net.inc.sh); needs
# root, skips (77) otherwise.
set -u
MB=${1:-4} QEMU_MB=${2:-1}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "skipped: no qemu-system-x86_64"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() {
	LINUX_NET_MB=$2 sh tests/integration/linux-net.inc.sh "$1" user dhcp bulk >"$tmp/$1" 2>&1
	rc=$?
	[ $rc -eq 77 ] && { cat "$tmp/$1"; exit 77; }
	[ $rc -eq 0 ] || { tail -30 "$tmp/$1"; echo "FAIL: $1 run"; exit 1; }
}
run vmm "$MB"
run qemu "$QEMU_MB"

# field SIDE DIRECTION: "MIB/S CPU-SECONDS-PER-MIB" of that BULK line.
field() {
	awk -v d="$2" '$1 == "BULK" && $2 == d { printf "%.3f %.3f", $3 / $4, $5 / $3 }' "$tmp/$1"
}
printf '%-12s %14s %14s %8s   %s\n' direction "vmm MiB/s" "QEMU MiB/s" ratio "CPU s/MiB vmm, QEMU"
for d in guest-\>host host-\>guest; do
	set -- $(field vmm "$d") $(field qemu "$d")
	ratio=$(awk -v v="$1" -v q="$3" 'BEGIN { printf "%.2f", (q > 0 ? v / q : 0) }')
	printf '%-12s %14s %14s %8s   %s, %s\n' "$d" "$1" "$3" "$ratio" "$2" "$4"
done
echo "(vmm $MB MiB, QEMU $QEMU_MB MiB each way; boot to init: $(sed -n 's/.*init reached after \([0-9]*\) s/\1/p' "$tmp/vmm") s vmm, $(sed -n 's/.*init reached after \([0-9]*\) s/\1/p' "$tmp/qemu") s QEMU)"
