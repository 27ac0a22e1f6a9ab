#!/bin/sh
# virt-install.sh — the domains a person gets from virt-install (Debian's
# virtinst 4.1) run on vmm's command line unchanged. virt-install writes the
# domain for `--import --osinfo debian11 --graphics none --network
# user,model=virtio --disk X,bus=virtio`, once for --machine q35 (its
# default: fourteen pcie-root-ports, qemu-xhci, virtio-serial with the
# guest agent's channel, balloon and rng behind them) and once for
# --machine pc; Debian's libvirt 9.0 turns each into the QEMU command line
# it would run (virsh domxml-to-native). vmm must take every option and
# device of it: with `-accel tcg` swapped for kvm (the only change, as a
# domain's type='kvm' does) and /dev/kvm pointed at a missing file, the
# first error must be KVM's, not an option's. QEMU parses the same lines
# as the reference (-machine ...,accel=tcg; it stops before starting the
# guest with -S and a monitor `quit`).
#
# Root only: libvirtd and virtlogd are this test's own (libvirt.inc.sh).
set -u
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (a privileged libvirtd)"; exit 77; }
for c in libvirtd virtlogd virsh virt-install unshare python3 qemu-system-x86_64; do
	command -v $c >/dev/null || { echo "FAIL: $c is missing (scripts/install-deps.sh check)"; exit 1; }
done
dom=
libvirt_kvm=no
. "$(dirname "$0")/libvirt.inc.sh"
vmm=$(readlink -f "${VMM:-build/vmm}")

truncate -s 1G "$T/disk.img"
fails=0
for machine in q35 pc; do
	xml=$T/$machine.xml
	if ! virt-install --connect qemu:///system --import --name "vi-$machine" --osinfo debian11 \
		--graphics none --network user,model=virtio --disk "$T/disk.img,bus=virtio" \
		--memory 512 --virt-type qemu --machine "$machine" --print-xml >"$xml" 2>"$T/err"; then
		echo "FAIL: virt-install --machine $machine: $(cat "$T/err")"; fails=$((fails + 1)); continue
	fi
	virsh -q -c qemu:///system domxml-to-native qemu-argv "$xml" >"$T/$machine.argv" 2>"$T/err" ||
		{ echo "FAIL: domxml-to-native ($machine): $(cat "$T/err")"; fails=$((fails + 1)); continue; }
	# the arguments after the emulator, one per line (libvirt quotes them
	# for a shell). domxml-to-native writes every NIC as a tap fd of
	# its own; at start libvirt 9.0 passes <interface type='user'> as
	# -netdev user (NOTES.md), which is what goes in here.
	python3 - "$T/$machine.argv" "$T/$machine.args" <<'PY'
import re, shlex, sys
a = shlex.split(open(sys.argv[1]).read())
i = next(k for k, x in enumerate(a) if x.endswith("qemu-system-x86_64"))
a = [re.sub(r'^\{"type":"tap","fd":"[0-9]+",', '{"type":"user",', x) for x in a[i + 1:]]
open(sys.argv[2], "w").write("\n".join(a) + "\n")
PY
	devs=$(grep -c '^{"driver"' "$T/$machine.args")
	# what the domain holds that vmm must know
	grep -q '^{"type":"user","id":"hostnet0"}$' "$T/$machine.args" ||
		{ echo "FAIL: $machine: no user NIC in the line"; fails=$((fails + 1)); }
	for d in qemu-xhci virtio-serial-pci virtserialport virtio-balloon-pci virtio-rng-pci \
		virtio-blk-pci virtio-net-pci; do
		grep -q "\"driver\":\"$d\"" "$T/$machine.args" ||
			{ echo "FAIL: $machine: virt-install's domain has no $d (the test's premise)"; fails=$((fails + 1)); }
	done
	[ "$machine" = pc ] || grep -q '"driver":"pcie-root-port"' "$T/$machine.args" ||
		{ echo "FAIL: q35: no pcie-root-port in virt-install's domain"; fails=$((fails + 1)); }
	# vmm: every option taken, the first error is the missing KVM device
	sed 's/^tcg$/kvm/' "$T/$machine.args" >"$T/$machine.kvm"
	status=0
	(
		set --
		while IFS= read -r line; do set -- "$@" "$line"; done <"$T/$machine.kvm"
		VMM_KVM_DEVICE="$T/no-kvm-here" exec "$vmm" "$@"
	) </dev/null >/dev/null 2>"$T/vmm.err" || status=$?
	if [ "$status" = 1 ] && grep -q "$T/no-kvm-here" "$T/vmm.err" && [ "$(wc -l <"$T/vmm.err")" = 1 ]; then
		echo "ok: vmm takes virt-install's $machine domain ($devs JSON devices)"
	else
		echo "FAIL: vmm refused virt-install's $machine domain (status $status): $(cat "$T/vmm.err")"
		fails=$((fails + 1))
	fi
	# QEMU, the reference: the same line parses and builds the machine
	# (TCG); it wants the files libvirt would have made for the domain
	dom=/var/lib/libvirt/qemu/domain--1-vi-$machine
	mkdir -p "$dom" "/var/lib/libvirt/qemu/channel/target/domain--1-vi-$machine"
	head -c 32 /dev/urandom >"$dom/master-key.aes"
	status=0
	(
		set --
		while IFS= read -r line; do set -- "$@" "$line"; done <"$T/$machine.args"
		echo quit | timeout 120 qemu-system-x86_64 "$@" -monitor stdio
	) >/dev/null 2>"$T/qemu.err" || status=$?
	if [ "$status" = 0 ]; then
		echo "ok: QEMU takes the same $machine line"
	else
		echo "FAIL: QEMU refused the $machine line (status $status): $(head -3 "$T/qemu.err")"
		fails=$((fails + 1))
	fi
done
[ "$fails" -eq 0 ] && echo "virt-install: ok"
exit $((fails != 0))
