#!/bin/sh
# linux-sandbox.sh — a Linux guest under -sandbox on (sandbox.sh's parts 1-3,
# then linux-net-tap.sh through its sandboxing wrapper): the calls only a
# running Linux guest makes after set-up (eventfd2 on a vCPU thread when the
# driver enables MSI-X, TUNSETOFFLOAD from the NIC's I/O thread when it
# negotiates offloads) are on the allow-lists. The whole suite sandboxed is
# `make check-sandbox`.
SANDBOX_SUBTESTS=linux-net-tap exec sh "$(dirname "$0")/sandbox.sh"
