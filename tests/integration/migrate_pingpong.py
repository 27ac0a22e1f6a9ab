"""migrate_pingpong.py — live migrations back and forth between two
emulator processes on one host, a busy 2-vCPU guest riding along.

usage: migrate_pingpong.py WORKDIR SIDE COUNT EMULATOR [ARGS...]

The guest (make demo's kernel and initrd, found in $GUEST) gets 2 vCPUs,
a qcow2 virtio-blk disk both processes open (the source hands it over at
the end of each migration), a virtio-net NIC on user networking with a
DHCP lease and a hostfwd port, and runs a counter on its console, a disk
writer that writes 64 KiB blocks of random data with O_DIRECT and prints
each block's sha256 once written, and a TCP transfer: its nc -l sends
16 MiB of random data to a host client through hostfwd. The client reads
only a little during each migration (its receive buffer small), so the
connection is open with data in flight through all of them, and the rest
once they are over. Then COUNT times: a new process starts with -incoming defer,
migrate-incoming unix:, the running one migrates to it live (no stop),
and once it completed the old process is told to quit. Checked: every
migration completes, the destination runs, the counter never goes back
nor skips, the guest's shell still answers at the end, and every block
the guest said it wrote reads back from the image (qemu-img convert,
the oracle) with the sha256 it printed. The transfer must end with
the guest's sha256 where SIDE starts with vmm (vmm passes its host
sockets on); QEMU's slirp does not carry connections, so for it the
test says what became of the transfer. Last, a save and restore through
a file (stop, migrate exec:, -incoming exec:): the counter goes on from
where it stopped and the writer's blocks still read back. Prints the
migrations' total times and downtimes.

vmm's processes all have the same hostfwd port, as libvirt would start
them: each destination takes the listening socket with the stream.
QEMU's listen on one of two host ports in turn: the source still holds
its own while the destination starts."""
import hashlib
import os
import re
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from migration_guests import Guests, free_port  # noqa: E402

work, side, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
g = Guests(work, side, sys.argv[4:], float(os.environ.get("PINGPONG_TIMEOUT", "3600")))
fail, console, wait_for, say, qmp = g.fail, g.console, g.must, g.say, g.qmp
disk = os.path.join(work, "disk.qcow2")
BLOCK = 65536
BLOCKS = 64
SIZE = 16 << 20  # the transfer through hostfwd
STEP = 128 << 10  # what the host client reads during each migration
fwd = [free_port(), free_port()]
carry = side.startswith("vmm")


def start(n, extra):
    return g.start(n, ["-smp", "2", "-drive", "file=%s,if=virtio,format=qcow2" % disk,
                       "-netdev", "user,id=n0,hostfwd=tcp:127.0.0.1:%d-:5000" % fwd[0 if carry else n % 2],
                       "-device", "virtio-net-pci,netdev=n0"] + extra)


class Fetch:
    """The host client of the transfer: reads what it is allowed to, then,
    once drain() is called, the rest."""

    def __init__(self):
        self.cv = threading.Condition()
        self.budget, self.full, self.got = 0, False, 0
        self.sha = self.error = None

    def allow(self, n):
        with self.cv:
            self.budget += n
            self.cv.notify()

    def drain(self):
        with self.cv:
            self.full = True
            self.cv.notify()

    def _room(self):
        with self.cv:
            while not self.full and self.budget <= 0:
                self.cv.wait()
            return 1 << 20 if self.full else min(self.budget, 16384)

    def run(self, port):
        h = hashlib.sha256()
        try:
            c = socket.socket()
            c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
            c.settimeout(g.limit)
            c.connect(("127.0.0.1", port))
            while True:
                b = c.recv(self._room())
                if not b:
                    break
                h.update(b)
                with self.cv:
                    self.got += len(b)
                    self.budget -= len(b)
            self.sha = h.hexdigest()
            c.close()
        except OSError as e:
            self.error = str(e)


def answer(tag):
    m = re.findall(r"%s: ([0-9a-f ]*) END" % tag, console())
    return m[-1].strip() if m else None


def counters():
    return [int(n) for n in re.findall(r"(?m)CNT (\d+) END", console())]


cur = start(0, [])
wait_for(r"^vmm demo: a shell", cur)
# vmm hides KVM's PV TLB flush with kernel_irqchip=off (vmm/irqchip_off.c:
# SMP guests that migrated ran on stale TLB entries with it); with on and
# split Linux uses it
say(cur, 'echo "PVTLB: $(dmesg | grep -c "KVM setup pv remote TLB flush") END"')
wait_for(r"PVTLB: \d+ END", cur)
if side.startswith("vmm") and answer("PVTLB") != ("0" if side == "vmm-off" else "1"):
    fail("Linux set up its PV TLB flush %s time(s)" % answer("PVTLB"))
g.dhcp_lease(cur)
say(cur, "head -c %d /dev/urandom >/tmp/in; echo \"INSHA: $(sha256sum </tmp/in | cut -c1-64) END\""
    % SIZE)
wait_for(r"INSHA: [0-9a-f]{64} END", cur)
in_sha = answer("INSHA")
# the transfer: the guest's nc -l sends /tmp/in to the client through hostfwd
say(cur, "(nc -l -p 5000 </tmp/in; echo \"INDONE: $? END\") &")
time.sleep(2)
fetch = Fetch()
fetcher = threading.Thread(target=fetch.run, args=(fwd[0],), daemon=True)
fetcher.start()
fetch.allow(STEP)
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
    fetch.allow(STEP)  # a little of the transfer moves during the migration
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

# the transfer, in flight through every migration, now at full speed
before = fetch.got
fetch.drain()
fetcher.join(g.limit if carry else 60)
in_done = g.wait_for(r"INDONE: \d+ END", cur, secs=60 if carry else 10)
if fetch.sha == in_sha:
    transfer = "complete, sha256 matches (%d bytes read before the end)" % before
else:
    transfer = "%s after %d bytes, nc %s" % (
        "error %s" % fetch.error if fetch.error else
        "ended, sha256 %s" % fetch.sha if fetch.sha else "never ended",
        fetch.got, "ended: %s" % answer("INDONE") if in_done else "still running")
    if carry:
        fail("the transfer through hostfwd: " + transfer)

# save to a file and restore: the guest goes on from where it stopped
seen = len(console())
src.ok("stop")
src.ok("migrate", uri="exec:cat > %s/saved" % work)
s = g.migration_end(src, "the save")
if s["status"] != "completed":
    fail("the save: %s" % s)
src.cmd("quit")
cur.wait(60)
last = counters()[-1]
cur = start(count + 1, ["-incoming", "exec:cat %s/saved" % work])
src = qmp(count + 1)
while src.ok("query-status")["status"] == "inmigrate":
    time.sleep(0.05)
if src.ok("query-status")["status"] == "paused":
    src.ok("cont")
if src.ok("query-status")["status"] != "running":
    fail("the restored guest does not run")
wait_for(r"CNT %d END" % (last + 2), cur, seen)

c = counters()
bad = [(a, b) for a, b in zip(c, c[1:]) if b <= a or b > a + 2]
if bad:
    fail("the counter went %s" % bad[:5])
say(cur, 'echo "ANSWER $((6 * 7)) END"')
wait_for(r"ANSWER 42 END", cur)
say(cur, "touch /tmp/stop")
wait_for(r"WRITER-42", cur)
written, history = {}, {}
for k, sha in re.findall(r"(?m)W (\d+) ([0-9a-f]{64}) END", console()):
    written[int(k)] = sha
    history.setdefault(int(k), []).append(sha)
src.cmd("quit")
cur.wait(60)
raw = os.path.join(work, "disk.raw")
subprocess.run(["qemu-img", "convert", "-f", "qcow2", "-O", "raw", disk, raw], check=True)
data = open(raw, "rb").read()
for k, sha in written.items():
    got = hashlib.sha256(data[k * BLOCK:(k + 1) * BLOCK]).hexdigest()
    if got != sha:
        h = history[k]
        fail("block %d reads back as %s, the guest wrote %s last (the image holds %s; "
             "the block was written %d times)" % (
                 k, got, sha, "its write %d" % (h.index(got) + 1) if got in h else
                 "none of its writes", len(h)))
chk = subprocess.run(["qemu-img", "check", "-q", disk])
if chk.returncode != 0:
    fail("qemu-img check: status %d" % chk.returncode)
print("migrate-pingpong: %s: %d live migrations and a save and restore, counter %d..%d, "
      "%d blocks checked; the transfer through hostfwd: %s; total ms %s; downtime ms %s" % (
          side, count, c[0], c[-1], len(written), transfer,
          [t for t, _ in times], [d for _, d in times]))
