#!/bin/sh
# cli-qemu.sh — QEMU's command-line conventions, with QEMU 7.2 as the
# reference where it runs the same case; no guest, no KVM needed:
#   - bad inputs (disks, -kernel, -initrd, -bios, hostfwd rules) are one
#     line, status 1, before /dev/kvm is touched (VMM_KVM_DEVICE points vmm
#     at a missing device, so the KVM error would show if they came later);
#   - -smp's errors read as QEMU's, word for word;
#   - the help verbs have QEMU's layout: -device help's lines and groups,
#     -device NAME,help's types and column, -machine/-cpu/-netdev help.
set -u
B=${B:-build}
VMM=${VMM:-$B/vmm}
QEMU=${QEMU:-qemu-system-x86_64}
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nokvm=$tmp/no-kvm-here

# A file with a multiboot header (magic, flags 0, checksum) passes the
# -kernel check; -initrd's files are checked next.
printf '\002\260\255\033\000\000\000\000\376\117\122\344' >"$tmp/mb.bin"
head -c 1000 /dev/zero >"$tmp/small.bios"

# input_error PATTERN ARGS...: status 1, one line naming the input, not KVM.
input_error() {
	pattern=$1
	shift
	status=0
	VMM_KVM_DEVICE=$nokvm "$VMM" -m 64 "$@" </dev/null >/dev/null 2>"$tmp/err" || status=$?
	if [ "$status" != 1 ] || [ "$(wc -l <"$tmp/err")" != 1 ] ||
		! grep -qF -- "$pattern" "$tmp/err" || grep -q "$nokvm" "$tmp/err"; then
		fail "$*: status $status, want 1 and one line with '$pattern': $(cat "$tmp/err")"
	else
		echo "ok: $*: $(cat "$tmp/err")"
	fi
}

input_error "-hda: cannot open disk image '/nonexistent'" -hda /nonexistent
input_error "-drive d0: cannot open disk image '/nonexistent'" \
	-drive file=/nonexistent,if=virtio,id=d0
input_error "-kernel /etc/passwd: not a kernel" -kernel /etc/passwd
input_error "could not load kernel '/nonexistent'" -kernel /nonexistent
input_error "-initrd: could not load initrd '/nonexistent'" -kernel "$tmp/mb.bin" \
	-initrd /nonexistent
input_error "-initrd: could not load initrd '/nonexistent'" -kernel "$tmp/mb.bin" \
	-initrd "$tmp/mb.bin arg,/nonexistent"
input_error "-initrd only allowed with -kernel option" -initrd "$tmp/mb.bin"
input_error "-bios: BIOS '$tmp/small.bios' is 1000 bytes" -bios "$tmp/small.bios"
input_error "-bios: cannot open BIOS '/nonexistent'" -bios /nonexistent
input_error "hostfwd=tcp::x-:22" -netdev user,id=n0,hostfwd=tcp::x-:22
input_error "user: unknown option 'frob'" -netdev user,id=n0,frob=1
# and with good inputs the next error is KVM's: the device above is used
status=0
VMM_KVM_DEVICE=$nokvm "$VMM" -m 64 -kernel "$tmp/mb.bin" -initrd "$tmp/mb.bin" \
	</dev/null >/dev/null 2>"$tmp/err" || status=$?
[ "$status" = 1 ] && grep -q "$nokvm" "$tmp/err" ||
	fail "good inputs: status $status, want the KVM error on $nokvm: $(cat "$tmp/err")"

if ! command -v "$QEMU" >/dev/null; then
	echo "skip: no $QEMU for the reference half"
	[ $fails -eq 0 ] || exit 1
	exit 77
fi
qemu() { # stdout only: QEMU's module warnings go to stderr
	timeout 20 "$QEMU" -nodefaults -display none "$@" 2>/dev/null </dev/null
}

# -smp: the same message after each program's prefix.
for smp in "4,sockets=2,cores=3" "4,sockets=2,cores=2,threads=2" "cpus=3,cores=2" \
	"4,maxcpus=2" "300" "foo=1" "x" "4,dies=3"; do
	want=$(timeout 20 "$QEMU" -M pc -accel tcg -nodefaults -display none -S -smp "$smp" \
		</dev/null 2>&1 | sed -n 's/^qemu-system-x86_64: //p' | grep -v module | tail -1)
	got=$(VMM_KVM_DEVICE=$nokvm "$VMM" -smp "$smp" -m 64 2>&1 >/dev/null </dev/null |
		sed -n 's/^vmm: -smp: //p')
	[ -n "$want" ] && [ "$got" = "$want" ] || fail "-smp $smp: vmm '$got', QEMU '$want'"
done

# -device help: each device QEMU also has is in the same group, with the
# same name, bus and alias.
"$VMM" -device help >"$tmp/vmm.dev"
qemu -device help >"$tmp/qemu.dev"
group() { awk -v n="name \"$2\"," '/devices:$/ { g = $0 } index($0, n) == 1 { print g }' "$1"; }
shared=0
for d in $(sed -n 's/^name "\([^"]*\)".*/\1/p' "$tmp/vmm.dev"); do
	q=$(grep "^name \"$d\"," "$tmp/qemu.dev" | sed 's/, desc .*//')
	[ -n "$q" ] || continue
	shared=$((shared + 1))
	v=$(grep "^name \"$d\"," "$tmp/vmm.dev" | sed 's/, desc .*//')
	[ "$v" = "$q" ] || fail "-device help: vmm '$v', QEMU '$q'"
	[ "$(group "$tmp/vmm.dev" "$d")" = "$(group "$tmp/qemu.dev" "$d")" ] ||
		fail "-device help: $d in '$(group "$tmp/vmm.dev" "$d")', QEMU '$(group "$tmp/qemu.dev" "$d")'"
	# -device NAME,help: the heading, each shared property's type, the column
	"$VMM" -device "$d,help" >"$tmp/vmm.props"
	qemu -device "$d,help" >"$tmp/qemu.props"
	[ "$(head -1 "$tmp/vmm.props")" = "$(head -1 "$tmp/qemu.props")" ] ||
		fail "-device $d,help: first line '$(head -1 "$tmp/vmm.props")'"
	for p in $(sed -n 's/^  \([a-z0-9_-]*\)=<.*/\1/p' "$tmp/vmm.props"); do
		qt=$(sed -n "s/^  $p=<\([^>]*\)>.*/\1/p" "$tmp/qemu.props")
		vt=$(sed -n "s/^  $p=<\([^>]*\)>.*/\1/p" "$tmp/vmm.props")
		# vmm's intel-iommu takes on/off, not QEMU's auto
		[ -z "$qt" ] || [ "$qt" = "$vt" ] || [ "$d/$qt/$vt" = "intel-iommu/OnOffAuto/bool" ] ||
			fail "-device $d,help: $p is <$vt>, QEMU <$qt>"
	done
	# "  name=<type>" padded so that " - " starts at column 25, as QEMU's
	bad=$(grep -E '^  [^ ]{1,21} +- ' "$tmp/vmm.props" | awk 'index($0, " - ") != 25')
	[ -z "$bad" ] || fail "-device $d,help: column: $bad"
done
[ "$shared" -ge 8 ] || fail "-device help: only $shared devices in common with QEMU"

# -machine help: QEMU's heading and its "pc" line, the same columns.
"$VMM" -machine help >"$tmp/vmm.mach"
qemu -machine help >"$tmp/qemu.mach"
[ "$(head -1 "$tmp/vmm.mach")" = "$(head -1 "$tmp/qemu.mach")" ] || fail "-machine help heading"
[ "$(grep '^pc ' "$tmp/vmm.mach")" = "$(grep '^pc ' "$tmp/qemu.mach")" ] ||
	fail "-machine help: pc line '$(grep '^pc ' "$tmp/vmm.mach")'"
awk 'NR > 1 && substr($0, 21, 1) != " "' "$tmp/vmm.mach" | grep -q . && fail "-machine help columns"

# -cpu help: the headings; each model line as QEMU lays out its own.
"$VMM" -cpu help >"$tmp/vmm.cpu"
qemu -cpu help >"$tmp/qemu.cpu"
for h in "Available CPUs:" "Recognized CPUID flags:"; do
	grep -qx "$h" "$tmp/vmm.cpu" && grep -qx "$h" "$tmp/qemu.cpu" || fail "-cpu help: '$h'"
done
for m in qemu64 host max; do
	[ "$(grep "^x86 $m " "$tmp/vmm.cpu" | cut -c1-26)" = \
		"$(grep "^x86 $m " "$tmp/qemu.cpu" | cut -c1-26)" ] || fail "-cpu help: $m line"
done

# -netdev help: QEMU's heading; vmm's backends are QEMU's names.
"$VMM" -netdev help >"$tmp/vmm.net"
qemu -netdev help >"$tmp/qemu.net"
[ "$(head -1 "$tmp/vmm.net")" = "$(head -1 "$tmp/qemu.net")" ] || fail "-netdev help heading"
for t in $(tail -n +2 "$tmp/vmm.net"); do
	grep -qx "$t" "$tmp/qemu.net" || fail "-netdev help: $t is not a QEMU backend"
done

[ $fails -eq 0 ] && echo "ok: inputs before KVM, -smp messages and help layout as QEMU's"
[ $fails -eq 0 ]
