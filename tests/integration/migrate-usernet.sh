#!/bin/sh
# migrate-usernet.sh — a Linux guest's TCP connections through user
# networking across a live unix: migration between two processes on one
# host (tests/integration/migrate_usernet.py): an outbound transfer
# through the NAT and an inbound one through hostfwd, 16 MiB each, both
# open with data in flight while the guest stops. The destination's
# command line is the source's, hostfwd ports included: vmm passes the
# host sockets, listening ones too, to the destination (SCM_RIGHTS): both
# must complete with the sender's sha256, and a new client of a hostfwd
# port after the migration reaches the guest there. QEMU runs the same as the reference; its slirp does
# not carry connections, so the test prints what became of them there.
# (A save to a file resets them instead: migrate-virtio.sh checks that.)
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
. "$(dirname "$0")/demo-py.inc.sh"

# shellcheck disable=SC2086
python3 tests/integration/migrate_usernet.py "$work" vmm carry "$VMM" $cpu || exit 1
rm -rf "${work:?}"/*
# shellcheck disable=SC2086
python3 tests/integration/migrate_usernet.py "$work" qemu report $qemu_ref || exit 1
echo "migrate-usernet: ok"
