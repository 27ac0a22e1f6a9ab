#!/bin/sh
# control-chardev.sh — character devices and strict QMP with -machine none,
# QEMU as the reference (tests/integration/control_chardev.py). No KVM.
set -u
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
VMM=${VMM:-build/vmm} PYTHONPATH=tests/integration timeout 120 \
	python3 tests/integration/control_chardev.py
