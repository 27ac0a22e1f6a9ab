#!/bin/sh
# lib-symbols.sh — no two of the rooms' libraries define the same global
# symbol. vmm links static libraries, and the linker takes a symbol from
# the first archive that defines it without a word: when vmm/net.c and
# devices/virtio/net_state.c both had a global net_save and net_load, the
# virtio-net device's save and load ops were bound to vmm's functions
# (called with a device where a machine was expected): its MAC, link and
# filters never went into a migration stream, and under load the source
# read past a heap block and crashed. Each pair is listed.
set -u
B=${B:-build}
libs=$(ls "$B"/lib*.a 2>/dev/null)
[ -n "$libs" ] || { echo "FAIL: no libraries in $B (make first)"; exit 1; }
dups=$(for a in $libs; do
	nm --defined-only -g "$a" | awk -v a="${a##*/}" 'NF == 3 && $2 ~ /^[TDBRVW]$/ { print $3, a }'
done | sort -u | awk '{ n[$1]++; where[$1] = where[$1] " " $2 }
	END { for (s in n) if (n[s] > 1) print s ":" where[s] }' | sort)
if [ -n "$dups" ]; then
	echo "FAIL: global symbols defined in more than one library:"
	echo "$dups"
	exit 1
fi
echo "lib-symbols: $(echo "$libs" | wc -w) libraries, no global symbol defined twice"
