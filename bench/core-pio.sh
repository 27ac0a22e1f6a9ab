#!/bin/sh
# core-pio.sh [N] [ROUNDS] — cost per port-I/O exit: pio-loop.elf (ring-3
# `out` to port 0x80) under build/vmm and qemu-system-x86_64 -enable-kvm,
# and the same loop in build/raw-kvm-loop, side by side (TSC-timed in the
# guest); prints vmm/raw and vmm/qemu. Goal: vmm/raw <= 1.05. See
# bench/core-exit-lib.sh.
KIND=pio
PAYLOAD=${B:-build}/tests/guest/pio-loop.elf
. "$(dirname "$0")/core-exit-lib.sh"
core_exit_bench "${1:-20000}" "${2:-3}"
