#!/bin/sh
# Linux guest under build/vmm with two vCPUs on a multiqueue TAP
# (-netdev tap,queues=2, virtio-net-pci,mq=on): the guest's virtio_net
# driver takes both queue pairs (VQ_PAIRS_SET), each vCPU sends on its
# own; DHCP from the host's dnsmasq, ping, TCP both ways with sha256.
# See linux-net.inc.sh.
exec sh "$(dirname "$0")/linux-net.inc.sh" vmm tapmq
