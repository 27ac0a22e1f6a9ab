#!/bin/sh
# qemu.sh — vmm as kvm-unit-tests' QEMU (QEMU=scripts/kut/qemu.sh for its
# run_tests.sh; make check-kut sets it). vmm takes QEMU's spellings; what is
# here is only what its runner asks of a QEMU binary that a VMM has no
# reason to know: the version banner of --help, the `-device ?` listing it
# greps for test devices, and -global kvm-pit.lost_tick_policy (KVM's PIT
# re-injection, not modelled). Env: VMM (default build/vmm next to this
# script's checkout), KUT_IRQCHIP (on|split|off: adds `-machine
# kernel_irqchip=MODE`, as scripts/kut/qemu-ref.sh does for QEMU).
here=$(cd "$(dirname "$0")/../.." && pwd)
vmm=${VMM:-$here/build/vmm}
case " $* " in
*" --help "* | *" -help "* | *" -h "*)
	echo "QEMU emulator version 7.2.0 (vmm $("$vmm" --version | sed 's/^vmm //'))"
	exec "$vmm" --help
	;;
*" -device ? "* | *" -device help "*)
	"$vmm" -device help
	exit 0
	;;
esac
n=$#
while [ $n -gt 0 ]; do
	a=$1
	shift
	n=$((n - 1))
	case $a in
	-global | --global)
		case $1 in
		kvm-pit.lost_tick_policy=*) ;;
		*) set -- "$@" "$a" "$1" ;;
		esac
		shift
		n=$((n - 1))
		;;
	*) set -- "$@" "$a" ;;
	esac
done
[ -n "${KUT_IRQCHIP:-}" ] && set -- "$@" -machine kernel_irqchip="$KUT_IRQCHIP"
exec sh "$here/tests/vmm-cpu.sh" "$vmm" "$@"
