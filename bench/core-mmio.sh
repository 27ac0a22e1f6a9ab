#!/bin/sh
# core-mmio.sh [N] [ROUNDS] — cost per MMIO exit: mmio-loop.elf (ring-3
# 32-bit stores to 0xd0000000, unclaimed: vmm logs it once) under build/vmm
# and qemu-system-x86_64 -enable-kvm, and the same loop in
# build/raw-kvm-loop, side by side (TSC-timed in the guest); prints vmm/raw
# and vmm/qemu. See bench/core-exit-lib.sh.
KIND=mmio
PAYLOAD=${B:-build}/tests/guest/mmio-loop.elf
. "$(dirname "$0")/core-exit-lib.sh"
core_exit_bench "${1:-20000}" "${2:-3}"
