#!/bin/sh
# balloon-kit.sh — virtio-balloon at a guest's full speed: the kit's
# balloon payload (1 GiB, 512 MiB filled, its virtio-balloon driver in
# ring 3, so it runs natively where guest ring 0 is emulated) goes through
# tests/integration/balloon_kit.py's round: QMP `balloon` inflates 256 MiB,
# the emulator's RSS must fall by >= 90 % of it within 30 s and
# query-balloon report it, the payload must find every page outside the
# balloon intact; `balloon` back deflates, and every returned page must
# read zero (the host discarded it) and take its word again. PFNs scattered
# (one discard per page) and in order (vmm coalesces runs); under
# build/vmm, the ASan build and QEMU (the reference: the same payload, the
# same steps).
KIT_PAYLOAD=balloon
. "$(dirname "$0")/kit-py.inc.sh"

# side NAME APPEND EMULATOR...
side() {
	name=$1 append=$2
	shift 2
	kit_side "$name" "round 1:" python3 tests/integration/balloon_kit.py "$tmp/$name" \
		"$PAYLOAD" "$append" 1 --side "$name" "$@"
}

side vmm "mb=512 scatter=1" "$VMM"
side vmm-runs "mb=512" "$VMM"
side vmm-asan "mb=512 scatter=1" "$VMM_ASAN"
# shellcheck disable=SC2086
side qemu "mb=512 scatter=1" $KIT_QEMU
kit_end balloon-kit
