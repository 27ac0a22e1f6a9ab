#!/bin/sh
# libvirt-probe.sh — libvirt's capability probe (-machine none, -daemonize,
# QMP introspection) and junk in every command's arguments
# (tests/integration/libvirt_probe.py). No guest, no KVM needed.
set -u
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
VMM=${VMM:-build/vmm} PYTHONPATH=tests/integration timeout 300 \
	python3 tests/integration/libvirt_probe.py
