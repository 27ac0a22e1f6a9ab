"""migrate_pingpong.py — live migrations back and forth between two
emulator processes on one host, a busy 2-vCPU guest riding along.

usage: migrate_pingpong.py WORKDIR SIDE COUNT EMULATOR [ARGS...]

The guest (make demo's kernel and initrd, found in $GUEST) gets 2 vCPUs,
a qcow2 virtio-blk disk both processes open (the source hands it over at
the end of each migration), a virtio-net NIC on user networking, and
runs a counter on its console and a disk writer that writes 64 KiB
blocks of random data with O_DIRECT and prints each block's sha256 once
written. Then COUNT times: a new process starts with -incoming defer,
migrate-incoming unix:, the running one migrates to it live (no stop),
and once it completed the old process is told to quit. Checked: every
migration completes, the destination runs, the counter never goes back
nor skips, the guest's shell still answers at the end, and every block
the guest said it wrote reads back from the image (qemu-img convert,
the oracle) with the sha256 it printed. Prints the migrations' total
times and downtimes."""
import hashlib
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from migration_guests import Guests  # noqa: E402

work, side, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
g = Guests(work, side, sys.argv[4:], float(os.environ.get("PINGPONG_TIMEOUT", "3600")))
fail, console, wait_for, say, qmp = g.fail, g.console, g.must, g.say, g.qmp
disk = os.path.join(work, "disk.qcow2")
BLOCK = 65536
BLOCKS = 64


def start(n, extra):
    return g.start(n, ["-smp", "2", "-drive", "file=%s,if=virtio,format=qcow2" % disk,
                       "-netdev", "user,id=n0", "-device", "virtio-net-pci,netdev=n0"] + extra)


def counters():
    return [int(n) for n in re.findall(r"(?m)CNT (\d+) END", console())]


cur = start(0, [])
wait_for(r"^vmm demo: a shell", cur)
say(cur, "(i=0; while :; do i=$((i+1)); echo \"CNT $i END\"; sleep 0.3; done) &")
# the writer: block k of BLOCKS, round after round; "W k sha" once written
say(cur, "(k=0; while [ ! -e /tmp/stop ]; do head -c %d /dev/urandom >/tmp/b; "
         "dd if=/tmp/b of=/dev/vda bs=%d seek=$((k %% %d)) oflag=direct 2>/dev/null && "
         "echo \"W $((k %% %d)) $(sha256sum </tmp/b | cut -c1-64) END\"; k=$((k+1)); done; "
         "sync; echo \"WRITER-$((6*7))\") &"
    % (BLOCK, BLOCK, BLOCKS, BLOCKS))
wait_for(r"CNT 5 END", cur)
wait_for(r"W 3 [0-9a-f]{64} END", cur)
src = qmp(0)
times = []
for n in range(1, count + 1):
    sock = "%s/mig.%d" % (work, n)
    dst_p = start(n, ["-incoming", "defer"])
    dst = qmp(n)
    dst.ok("migrate-incoming", uri="unix:" + sock)
    seen = len(console())
    src.ok("migrate", uri="unix:" + sock)
    s = g.migration_end(src, "migration %d" % n)
    if s["status"] != "completed":
        fail("migration %d: %s" % (n, s))
    while dst.ok("query-status")["status"] == "inmigrate":
        time.sleep(0.05)
    st = dst.ok("query-status")["status"]
    if st == "paused" and side == "qemu":
        dst.ok("cont")   # QEMU's destination waits for cont unless told otherwise
    elif st != "running":
        fail("migration %d: the destination is %s" % (n, st))
    times.append((s.get("total-time"), s.get("downtime")))
    src.cmd("quit")
    cur.wait(60)
    cur, src = dst_p, dst
    # the guest goes on on the destination
    last = counters()[-1]
    wait_for(r"CNT %d END" % (last + 2), cur, seen)

c = counters()
bad = [(a, b) for a, b in zip(c, c[1:]) if b <= a or b > a + 2]
if bad:
    fail("the counter went %s" % bad[:5])
say(cur, 'echo "ANSWER $((6 * 7)) END"')
wait_for(r"ANSWER 42 END", cur)
say(cur, "touch /tmp/stop")
wait_for(r"WRITER-42", cur)
written = {}
for k, sha in re.findall(r"(?m)W (\d+) ([0-9a-f]{64}) END", console()):
    written[int(k)] = sha
src.cmd("quit")
cur.wait(60)
raw = os.path.join(work, "disk.raw")
subprocess.run(["qemu-img", "convert", "-f", "qcow2", "-O", "raw", disk, raw], check=True)
data = open(raw, "rb").read()
for k, sha in written.items():
    got = hashlib.sha256(data[k * BLOCK:(k + 1) * BLOCK]).hexdigest()
    if got != sha:
        fail("block %d reads back as %s, the guest wrote %s" % (k, got, sha))
chk = subprocess.run(["qemu-img", "check", "-q", disk])
if chk.returncode != 0:
    fail("qemu-img check: status %d" % chk.returncode)
print("migrate-pingpong: %s: %d live migrations, counter %d..%d, %d blocks checked; "
      "total ms %s; downtime ms %s" % (
          side, count, c[0], c[-1], len(written),
          [t for t, _ in times], [d for _, d in times]))
