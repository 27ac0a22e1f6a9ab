# debian-kernel.sh — sourced: Debian's packaged kernel (linux-image-amd64)
# and its modules, for the guests built from it (the nested runner's L1,
# make demo's guest). Callers define say() and die().

# debian_kver: the version linux-image-amd64 points at (not the host's).
debian_kver() {
	v=$(dpkg-query -W -f '${Depends}' linux-image-amd64 2>/dev/null |
		sed -n 's/.*linux-image-\([0-9][^ ,]*-amd64\).*/\1/p')
	[ -n "$v" ] || die "linux-image-amd64 is not installed (scripts/install-deps.sh nested)"
	[ -r "/boot/vmlinuz-$v" ] || die "/boot/vmlinuz-$v is missing"
	echo "$v"
}

# debian_modules KVER ROOT MODULE...: the modules with their dependencies,
# in load order, as ROOT/lib/modules/NAME.ko (uncompressed: busybox insmod
# reads plain ELF only) and their names in ROOT/modules.order.
debian_modules() {
	kv=$1 root=$2
	shift 2
	mkdir -p "$root/lib/modules"
	: >"$root/modules.order"
	for m in "$@"; do
		modprobe --show-depends -S "$kv" "$m" | sed -n 's/^insmod \([^ ]*\).*/\1/p'
	done | awk '!seen[$0]++' | while read -r ko; do
		name=$(basename "$ko" | sed 's/\.ko.*//')
		case "$ko" in
		*.xz) xz -dc "$ko" ;;
		*.zst) zstd -dc "$ko" ;;
		*.gz) gzip -dc "$ko" ;;
		*) cat "$ko" ;;
		esac >"$root/lib/modules/$name.ko"
		echo "$name" >>"$root/modules.order"
	done
	[ -s "$root/modules.order" ] || die "no modules found for $kv"
}
