#!/bin/sh
# cpu-models.sh — -cpu with QEMU's spellings: the models and
# switches kvm-unit-tests pass are accepted, an unknown model or feature is
# a one-line error, and tests/vmm-cpu.sh (how every test starts vmm) adds
# -cpu baseline only on kvm_pvm hosts and only when no -cpu is given.
set -u
B=${B:-build}
VMM=${VMM:-$B/vmm}
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
for spec in host max max,host-phys-bits "qemu64,+x2apic,+tsc-deadline" \
	"IvyBridge,phys-bits=36,host-phys-bits=off" "Skylake-Server,host-phys-bits,+vmx,+vmx-mbec" \
	"Opteron_G1,vendor=AuthenticAMD" "max,vendor=GenuineIntel" "qemu64,-pcid,+invpcid" \
	"kvm64" "baseline" "max,+svm,-rdtscp,-xsave,-invpcid,-skinit" "host,migratable=no"; do
	out=$("$VMM" -cpu "$spec" --version 2>&1) || fail "-cpu $spec refused: $out"
done
for spec in "pentium9" "max,+warp-drive" "qemu64,x2apic=maybe" "max,phys-bits=7"; do
	out=$("$VMM" -cpu "$spec" --version 2>&1) && fail "-cpu $spec accepted"
	[ "$(echo "$out" | wc -l)" -eq 1 ] || fail "-cpu $spec: not one line: $out"
	case $out in *"-cpu: "*) ;; *) fail "-cpu $spec: error does not name -cpu: $out" ;; esac
done
got=$(sh tests/vmm-cpu.sh echo -m 64)
if [ -d /sys/module/kvm_pvm ]; then want="-cpu baseline -m 64"; else want="-m 64"; fi
[ "$got" = "$want" ] || fail "vmm-cpu.sh without -cpu: '$got', want '$want'"
got=$(sh tests/vmm-cpu.sh echo -m 64 -cpu qemu64)
[ "$got" = "-m 64 -cpu qemu64" ] || fail "vmm-cpu.sh with -cpu: '$got'"
[ $fails -eq 0 ] && echo "ok: models, switches, errors and the test wrapper"
[ $fails -eq 0 ]
