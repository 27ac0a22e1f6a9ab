#!/bin/sh
# Linux guest on an ext4 virtio-blk disk under QEMU (the peer; same script
# as linux-virtio-blk.sh): read, write, read back on the host; then the
# fsync-then-SIGKILL durability check. See linux-virtio-blk.inc.sh.
sh "$(dirname "$0")/linux-virtio-blk.inc.sh" qemu normal || exit
exec sh "$(dirname "$0")/linux-virtio-blk.inc.sh" qemu durable
