#!/bin/sh
# Linux guest under build/vmm on an ext4 image as -drive if=virtio: mounts
# /dev/vda, checks a file's sha256, writes, syncs, powers off; the host
# reads it back (debugfs) and e2fsck finds it clean. See linux-virtio-blk.inc.sh.
exec sh "$(dirname "$0")/linux-virtio-blk.inc.sh" vmm normal
