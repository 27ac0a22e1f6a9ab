#!/bin/sh
# regdb: load the packaged regulatory.db (vs reading its bytes) and per-frame
# verdict latency (vs a plain linear scan). Goals: load <= 1 ms, verdict <= 50 ns.
set -eu
B=${B:-build}
"$B/regdb-bench"
