#!/bin/sh
# The rooms of the tree and the include arrows allowed between them, as
# README's "Where things are" draws them. Every `#include "..."` in a
# tracked C file is resolved (from the top, then from the file's folder)
# and must stay inside its room or follow an allowed arrow; no room may
# reach another room's private header (internal.h, *_internal.h).
# Usage: include-arrows.sh [TOP]   (default: the git top of this script)
set -eu

top=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top"

# A file's room: the longest matching folder prefix.
room_of() {
	case "$1" in
	build/*) echo build ;;
	kernel/kvm/*) echo kernel/kvm ;;
	devices/*) echo devices ;;
	state/*) echo state ;;
	backends/*) echo backends ;;
	netstack/usernet/*) echo netstack/usernet ;;
	netstack/host/*) echo netstack/host ;;
	netstack/*) echo netstack ;;
	wlan/*) echo wlan ;;
	regdb/*) echo regdb ;;
	firmware/*) echo firmware ;;
	vmm/cli/*) echo vmm/cli ;;
	vmm/control/*) echo vmm/control ;;
	vmm/*) echo vmm ;;
	tests/* | bench/*) echo tests ;;
	*) echo other ;;
	esac
}

# The allowed arrows, "from -> to"; README lists the same.
allowed() {
	case "$1 -> $2" in
	"vmm -> vmm/control" | "vmm -> vmm/cli" | "vmm -> firmware" | \
	"vmm -> devices" | "vmm -> backends" | "vmm -> wlan" | \
	"vmm -> kernel/kvm" | "vmm -> state") return 0 ;;
	"vmm/control -> vmm" | "vmm/control -> vmm/cli" | \
	"vmm/control -> devices" | "vmm/control -> backends") return 0 ;;
	"firmware -> devices") return 0 ;;
	"devices -> backends" | "devices -> state") return 0 ;;
	"backends -> netstack" | "backends -> netstack/usernet") return 0 ;;
	"netstack/usernet -> netstack") return 0 ;;
	"netstack/host -> netstack/usernet" | "netstack/host -> netstack") return 0 ;;
	"wlan -> regdb" | "wlan -> state") return 0 ;;
	"tests -> "*) return 0 ;;
	*" -> build") return 0 ;;
	esac
	return 1
}

bad=0
checked=0
# Tracked files in a checkout; in an unpacked tarball, every C file but
# the build's.
files=$(git ls-files '*.c' '*.h' 2>/dev/null) ||
	files=$(find . -path ./build -prune -o \( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||')
[ -n "$files" ] || { echo "include-arrows: no tracked C files under $top" >&2; exit 1; }
for f in $files; do
	from=$(room_of "$f")
	dir=$(dirname "$f")
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		if [ -e "$inc" ] || [ "${inc#build/}" != "$inc" ]; then
			target=$inc
		elif [ -e "$dir/$inc" ]; then
			target=$(realpath --relative-to=. "$dir/$inc")
		else
			echo "include-arrows: $f includes \"$inc\", which is neither under the top nor beside it" >&2
			bad=$((bad + 1))
			continue
		fi
		checked=$((checked + 1))
		to=$(room_of "$target")
		[ "$from" = "$to" ] && continue
		case "$(basename "$target")" in
		internal.h | *_internal.h)
			if [ "$from" != tests ]; then
				echo "include-arrows: $f ($from) reaches $to's private header $target" >&2
				bad=$((bad + 1))
				continue
			fi ;;
		esac
		if ! allowed "$from" "$to"; then
			echo "include-arrows: $f ($from) includes $target ($to): no such arrow" >&2
			bad=$((bad + 1))
		fi
	done
done
echo "include-arrows: $checked includes checked, $bad outside the allowed arrows"
[ "$bad" -eq 0 ]
