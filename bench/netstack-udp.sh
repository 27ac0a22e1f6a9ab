#!/bin/sh
# netstack-udp.sh [N] — small packets: N 128-byte UDP messages through
# netstack channels (two stacks over the in-memory pair link) and through
# kernel UDP sockets on loopback, side by side in one process; prints
# packets/s, CPU per packet and the ratio (build/netstack-bench-udp).
B=${B:-build}
exec "$B/netstack-bench-udp" "${1:-1000000}"
