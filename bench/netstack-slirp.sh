#!/bin/sh
# netstack-slirp.sh [MB] [MTU...] — the same frame-level harness drives
# libslirp and a netstack gateway that terminate a guest's TCP and relay
# it to a TCP sink on 127.0.0.1; throughput ratio at MTU 1500 and 64K
# (build/netstack-bench-slirp). Goal: netstack >= 3x libslirp.
B=${B:-build}
MB=${1:-64}
[ $# -gt 0 ] && shift
exec "$B/netstack-bench-slirp" "$MB" "$@"
