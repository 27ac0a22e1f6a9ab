#!/bin/sh
# netstack-bulk.sh [MB] [MTU] — bulk TCP throughput and CPU per GB:
# netstack <-> netstack over the in-memory pair, netstack -> Linux over a
# TAP (root only), Linux -> Linux loopback as the ceiling, one run
# (build/netstack-bench-bulk).
B=${B:-build}
exec "$B/netstack-bench-bulk" "${1:-256}" "${2:-1500}"
