#!/bin/sh
# Linux guest under build/vmm on -netdev tap: the host end of the TAP
# (10.0.3.1/24, in a private network namespace) runs dnsmasq for DHCP and
# DNS; ping, TCP both ways with sha256, set_link. See linux-net.inc.sh.
exec sh "$(dirname "$0")/linux-net.inc.sh" vmm tap
