#!/bin/sh
# migrate-virtio.sh — save and restore a Linux guest (make demo's Debian
# kernel) with a virtio-blk disk (qcow2), a virtio-net NIC on user
# networking and a virtio-rng, as migrate.sh does (stop, migrate
# "exec:cat > FILE", kill; the same command line with -incoming).
# Before the save the guest writes a random 256 KiB block to the disk and
# keeps a writer busy on another part of it (so requests are in flight
# while the machine stops), takes a DHCP lease and fetches a file from
# the host through the NAT. After the restore: the block reads back with
# the same sha256, a second block is written and read, the NAT works again
# (ping of the gateway, the file fetched again, a new DHCP lease), and
# /dev/hwrng gives bytes. Then the host reads both blocks out of the qcow2
# image with qemu-img (the oracle) and compares the sha256s. QEMU runs the
# same as the reference. The guest also keeps a TCP connection open
# through the NAT across the save: its host socket stays behind, so vmm's
# restored guest must see it reset at once (usernet's saved state), not
# hang; QEMU's slirp, which does not carry it either, is only reported.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
set -u
VMM=${VMM:-build/vmm}
limit=${MIGRATE_TIMEOUT:-600}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
for t in python3 qemu-img; do
	command -v $t >/dev/null || { echo "FAIL: no $t"; exit 1; }
done
guest=$(sh scripts/demo/image.sh) || { echo "FAIL: no Debian guest image (scripts/demo/image.sh)"; exit 1; }
work=$(mktemp -d)
pid= web=
hold=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; [ -n "$web" ] && kill $web 2>/dev/null; [ -n "$hold" ] && kill $hold 2>/dev/null; rm -rf "$work"' EXIT

. tests/integration/demo-guest.inc.sh

fail() {
	echo "FAIL: $side: $*"
	tail -c 3000 "$work/out" | cat -v
	cat "$work/err"
	exit 1
}

# The host's web server the guest reaches through the NAT (10.0.2.2).
mkdir "$work/www"
head -c 100000 /dev/urandom >"$work/www/blob"
web_sha=$(sha256sum <"$work/www/blob" | cut -d' ' -f1)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$work/www" "$port" >/dev/null 2>&1 &
web=$!
# A host service that takes connections and holds them (counted in a file).
hold_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
held = []
while True:
    held.append(s.accept()[0])
    open(sys.argv[2], "w").write(str(len(held)))' "$hold_port" "$work/held" &
hold=$!

start() {
	rm -f "$work/in" "$work/out" "$work/err"
	mkfifo "$work/in"
	t0=$(date +%s)
	"$@" -m 256 -smp 1 -nographic -serial stdio -monitor none -no-reboot \
		-kernel "$guest/kernel" -initrd "$guest/initrd.cpio.gz" \
		-append "$(cat tests/guest/linux/cmdline)" \
		-drive "file=$work/disk.qcow2,if=virtio,format=qcow2" \
		-netdev user,id=n0 -device virtio-net-pci,netdev=n0,mac=52:54:00:12:34:56 \
		-device virtio-rng-pci \
		-qmp "unix:$work/qmp,server=on,wait=off" \
		<"$work/in" >"$work/out" 2>"$work/err" &
	pid=$!
	exec 3>"$work/in"
}

qmp() {
	PYTHONPATH=tests/integration python3 - "$work/qmp" >>"$work/qmp.log" 2>&1 <<PY
import sys, time
from qmp_client import Qmp
q = Qmp(sys.argv[1], timeout=120)
q.ok("qmp_capabilities")
$1
PY
}

# The lease script: address and default route; LEASE says it ran.
dhcp() {
	n=$(ask "$1" "udhcpc -i eth0 -n -q -t 10 -T 2 -s /tmp/dh >/dev/null 2>&1; ip -4 addr show eth0 | grep -c 10.0.2.15")
	[ "$n" = 1 ] || fail "$1: no DHCP lease (10.0.2.15)"
}

fetch() {
	got=$(ask "$1" "rm -f /tmp/blob; timeout 30 wget -q -O /tmp/blob http://10.0.2.2:$port/blob; sha256sum </tmp/blob | cut -d' ' -f1")
	[ "$got" = "$web_sha" ] || fail "$1: the host's file through the NAT: '$got', want $web_sha"
}

run() {
	side=$1
	shift
	rm -f "$work/disk.qcow2" "$work/saved"
	qemu-img create -q -f qcow2 "$work/disk.qcow2" 64M || fail "qemu-img create"
	start "$@"
	wait_for "^vmm demo: a shell"
	echo "ip link set lo up; ip link set eth0 up" >&3
	echo "printf '#!/bin/sh\\ncase \$1 in bound|renew) ip -4 addr flush dev \$interface; ip addr add \$ip/\$mask dev \$interface; ip route add default via \$router;; esac\\n' >/tmp/dh; chmod +x /tmp/dh" >&3
	dhcp LEASE1
	fetch FETCH1
	a=$(ask WRITE1 "head -c 262144 /dev/urandom >/tmp/a; dd if=/tmp/a of=/dev/vda bs=64k seek=16 oflag=direct 2>/dev/null; sha256sum </tmp/a | cut -d' ' -f1")
	[ ${#a} = 64 ] || fail "the guest's first block: '$a'"
	rm -f "$work/held"
	# nc's stdin stays open (it sends nothing); NC-EXIT follows nc
	# itself, not the whole pipeline (sleep would hold it back)
	echo "sleep 100000 | { nc 10.0.2.2 $hold_port >/dev/null 2>&1; echo \"NC-EXIT-\$((40+2))\"; } &" >&3
	n=0
	while [ ! -s "$work/held" ] && [ $n -lt 60 ]; do sleep 1; n=$((n + 1)); done
	[ -s "$work/held" ] || fail "the guest's connection to the host's port $hold_port never came"
	# a writer busy on blocks 64.. while the machine stops
	echo "(while :; do dd if=/dev/urandom of=/dev/vda bs=64k seek=64 count=32 oflag=direct 2>/dev/null; done) & W=\$!; echo WRITER-\$((6*7))" >&3
	wait_for "WRITER-42"
	sleep 2
	! grep -aq "NC-EXIT-42" "$work/out" || fail "the held connection ended before the save"
	qmp '
q.ok("stop")
q.ok("migrate", uri="exec:cat > '"$work/saved"'")
while q.ok("query-migrate")["status"] not in ("completed", "failed"):
    time.sleep(0.05)
s = q.ok("query-migrate")
assert s["status"] == "completed", s' || fail "stop + migrate: $(tail -n 3 "$work/qmp.log")"
	kill $pid
	wait $pid 2>/dev/null
	pid=
	exec 3>&-
	[ -s "$work/saved" ] || fail "no saved stream"
	echo "migrate-virtio: $side: saved $(stat -c %s "$work/saved") bytes"
	start "$@" -incoming "exec:cat $work/saved"
	qmp '
while q.ok("query-status")["status"] == "inmigrate":
    time.sleep(0.05)
if q.ok("query-status")["status"] == "paused":
    q.ok("cont")
assert q.ok("query-status")["status"] == "running"' || fail "the restored guest does not run: $(cat "$work/err")"
	t_r=$(date +%s)
	if [ "$side" = vmm ]; then # reset at the destination's first poll
		wait_for "NC-EXIT-42"
		[ $(($(date +%s) - t_r)) -le 60 ] ||
			fail "the guest took $(($(date +%s) - t_r)) s to see its NAT'd connection reset"
		echo "migrate-virtio: vmm: the held connection was reset after $(($(date +%s) - t_r)) s"
	else # QEMU's slirp: what becomes of it, for the record
		if wait_output "$work/out" NC-EXIT-42 "$pid" 60; then
			echo "migrate-virtio: qemu: the held connection ended after $(($(date +%s) - t_r)) s"
		else
			echo "migrate-virtio: qemu: the held connection is still open after 60 s"
		fi
	fi
	echo 'kill $W; wait $W; echo STOPPED-$((6*7))' >&3
	wait_for "STOPPED-42"
	a2=$(ask READ1 "dd if=/dev/vda bs=64k skip=16 count=4 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1")
	[ "$a2" = "$a" ] || fail "the block written before the save reads back as $a2, not $a"
	b=$(ask WRITE2 "head -c 262144 /dev/urandom >/tmp/b; dd if=/tmp/b of=/dev/vda bs=64k seek=32 oflag=direct 2>/dev/null; sync; sha256sum </tmp/b | cut -d' ' -f1")
	b2=$(ask READ2 "dd if=/dev/vda bs=64k skip=32 count=4 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1")
	[ ${#b} = 64 ] && [ "$b2" = "$b" ] || fail "the block written after the restore reads back as $b2, not $b"
	# The NAT's connections are gone with the old process: new ones work.
	n=$(ask PING "timeout 20 ping -c 1 10.0.2.2 >/dev/null 2>&1 && echo yes")
	[ "$n" = yes ] || fail "no echo reply from 10.0.2.2 after the restore"
	fetch FETCH2
	dhcp LEASE2
	r=$(ask RNG "head -c 32 /dev/hwrng | od -An -tx1 | tr -d ' \\n'")
	[ ${#r} = 64 ] && [ "$r" != "$(printf '%064d' 0)" ] || fail "/dev/hwrng after the restore: '$r'"
	power_off
	# the host's reading of the image, through qemu-img
	qemu-img convert -f qcow2 -O raw "$work/disk.qcow2" "$work/disk.raw" || fail "qemu-img convert"
	ha=$(dd if="$work/disk.raw" bs=64k skip=16 count=4 2>/dev/null | sha256sum | cut -d' ' -f1)
	hb=$(dd if="$work/disk.raw" bs=64k skip=32 count=4 2>/dev/null | sha256sum | cut -d' ' -f1)
	[ "$ha" = "$a" ] && [ "$hb" = "$b" ] || fail "qemu-img reads the blocks as $ha $hb, want $a $b"
	qemu-img check -q "$work/disk.qcow2" || fail "qemu-img check: the image is damaged"
	echo "migrate-virtio: $side: disk, NAT (ping, wget, DHCP) and hwrng work after the restore"
}

cpu=
[ ! -d /sys/module/kvm_pvm ] || cpu="-cpu baseline"
# shellcheck disable=SC2086
run vmm "$VMM" $cpu
command -v qemu-system-x86_64 >/dev/null ||
	{ echo "FAIL: no qemu-system-x86_64 for the reference run"; exit 1; }
run qemu qemu-system-x86_64 -enable-kvm -cpu qemu64,-smap,-smep,-xsave,-popcnt -vga none
echo "migrate-virtio: ok"
