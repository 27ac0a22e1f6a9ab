#!/bin/sh
# vmm-cpu.sh REAL_VMM ARG... — how the tests start vmm (tests/run.sh makes
# $VMM and $VMM_ASAN wrappers that exec this). A command line that names no
# -cpu gets -cpu baseline on a host whose KVM emulates guest ring 0
# (kvm_pvm: no XRSTOR, CLAC, ring-0 INT3, POPCNT, CMPXCHG16B; VMCALL never
# completes), decided here at each start so that the same $VMM is right
# natively and inside the nested L1 (QEMU TCG -cpu max, whose KVM runs every
# feature it offers). The product's default stays -cpu host.
real=$1
shift
for a; do
	case $a in -cpu | --cpu | -cpu=* | --cpu=*) exec "$real" "$@" ;; esac
done
[ -d /sys/module/kvm_pvm ] && exec "$real" -cpu baseline "$@"
exec "$real" "$@"
