#!/bin/sh
# control-qmp.sh — QMP end to end (tests/integration/control_qmp.py).
set -u
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
B=${B:-build} VMM=${VMM:-build/vmm} PYTHONPATH=tests/integration timeout 300 \
	python3 tests/integration/control_qmp.py
