#!/bin/sh
# qemu-ref.sh — qemu-system-x86_64 as the reference side of make check-kut
# with KUT_IRQCHIP=on|split|off: adds `-machine kernel_irqchip=MODE` (as
# scripts/kut/qemu.sh does for vmm). In `off`, QEMU 7.2 aborts setting
# MSR_KVM_ASYNC_PF_INT (0x4b564d06) without KVM's local APIC, so every -cpu
# gets `,kvm-asyncpf-int=off` (and a run with none gets qemu64, QEMU's
# default, with it); vmm clears that PV feature by itself in `off`.
# Env: KUT_IRQCHIP, KUT_QEMU (default qemu-system-x86_64).
qemu=${KUT_QEMU:-qemu-system-x86_64}
mode=${KUT_IRQCHIP:-}
case " $* " in
*" --help "* | *" -help "* | *" -h "* | *" -device ? "* | *" -device help "*)
	exec "$qemu" "$@"
	;;
esac
[ -n "$mode" ] || exec "$qemu" "$@"
n=$# cpu=
while [ $n -gt 0 ]; do
	a=$1
	shift
	n=$((n - 1))
	case $a in
	-cpu | --cpu)
		cpu=$1
		[ "$mode" = off ] && cpu=$cpu,kvm-asyncpf-int=off
		set -- "$@" "$a" "$cpu"
		shift
		n=$((n - 1))
		;;
	*) set -- "$@" "$a" ;;
	esac
done
[ "$mode" = off ] && [ -z "$cpu" ] && set -- "$@" -cpu qemu64,kvm-asyncpf-int=off
exec "$qemu" "$@" -machine kernel_irqchip="$mode"
