#!/bin/sh
# Linux guest under build/vmm: a file written with fsync (virtio-blk FLUSH)
# is in the image after vmm is killed with SIGKILL right after the fsync
# returned. See linux-virtio-blk.inc.sh.
exec sh "$(dirname "$0")/linux-virtio-blk.inc.sh" vmm durable
