#!/bin/sh
# The issue's "done when": build/vmm with no network option at all gives the
# Linux guest a virtio-net NIC on user networking; it gets a DHCP lease,
# pings the gateway, resolves a name and fetches from a host server (TCP
# with sha256 both ways). See linux-net.inc.sh.
exec sh "$(dirname "$0")/linux-net.inc.sh" vmm default
