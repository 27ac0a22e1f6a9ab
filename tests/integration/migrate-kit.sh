#!/bin/sh
# migrate-kit.sh — RAM through live migration and restore, at a guest's
# full speed: the kit's mem-dirty payload (1 GiB, 256 MiB filled, ticking
# and rewriting memory from ring 3, so it runs natively where guest ring 0
# is emulated) goes through tests/integration/migrate_kit.py's round: an
# idle live migration, one while it rewrites 64 MiB at up to 100 MB/s,
# then stop, save to a file and restore (vmm maps the file). Each must
# complete, the guest's tick counter must go on from where it stopped, and
# the payload's check of every filled page it does not rewrite must pass
# after each move. Under build/vmm, the ASan build and QEMU (the
# reference: the same payload, the same steps).
KIT_PAYLOAD=mem-dirty
. "$(dirname "$0")/kit-py.inc.sh"
export TIMEOUT=600

# side NAME EMULATOR...
side() {
	name=$1
	shift
	mkdir "$tmp/$name"
	kit_side "$name" rewrote python3 tests/integration/migrate_kit.py "$tmp/$name" "$name" \
		"$PAYLOAD" 0 "$@"
}

side vmm "$VMM"
side vmm-asan "$VMM_ASAN"
# shellcheck disable=SC2086
side qemu $KIT_QEMU
kit_end migrate-kit
