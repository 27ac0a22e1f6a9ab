#!/bin/sh
# Linux guest under build/vmm on -netdev user (netstack's usernet): DHCP,
# ping, DNS through the forwarder, TCP both ways with sha256, hostfwd (and
# hostfwd_add/remove), set_link, IPv6 SLAAC. See linux-net.inc.sh.
# TCP: 1 MiB each way, then 100 MiB each way where the host's rate allows.
LINUX_NET_BIG_MB=${LINUX_NET_BIG_MB:-100} exec sh "$(dirname "$0")/linux-net.inc.sh" vmm user
