"""migrate_exits.py WORK ROUNDS VMM... — one run of migrate-exits.sh.

The guest (tests/guest/exit-count.c) writes to pci-testdev's counted port
as fast as it can: nearly every moment the vCPU is in or near an I/O exit.
Each round stops it (QMP stop), saves it with migrate "exec:cat > FILE",
quits, and restores it in a new process with -incoming; then a byte on
the serial port ends the loop and the guest compares the device's count
(saved and restored with the device) with the writes it made. A VMM that
saves the vCPU while KVM still owes the last OUT's completion has the
destination execute that OUT again: one write too many per such round."""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from qmp_client import Qmp  # noqa: E402

work, rounds = sys.argv[1], int(sys.argv[2])
vmm = sys.argv[3:]
payload = os.path.join(os.environ.get("B", "build"), "tests/guest/exit-count.elf")
LIMIT = 120


def fail(msg, p=None):
    out = ""
    if p is not None:
        p.kill()
        out = p.communicate()[0].decode(errors="replace")[-1500:]
    sys.exit("FAIL: %s\n%s" % (msg, out))


def start(n, extra):
    sock = "%s/qmp.%d" % (work, n)
    p = subprocess.Popen(vmm + ["-m", "64", "-nographic", "-serial", "stdio", "-monitor", "none",
                                "-device", "isa-debug-exit,iobase=0xf4,iosize=4",
                                "-device", "pci-testdev", "-kernel", payload,
                                "-qmp", "unix:%s,server=on,wait=off" % sock] + extra,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    q = Qmp(sock)
    q.ok("qmp_capabilities")
    return p, q


def running(q, p):
    t0 = time.time()
    while q.ok("query-status")["status"] == "inmigrate":
        if time.time() - t0 > LIMIT:
            fail("the restore did not finish in %d s" % LIMIT, p)
        time.sleep(0.05)
    if q.ok("query-status")["status"] == "paused":
        q.ok("cont")
    if q.ok("query-status")["status"] != "running":
        fail("the restored guest does not run", p)


p, q = start(0, [])
time.sleep(1)  # the guest is in its loop (or the first round finds it booting)
for n in range(1, rounds + 1):
    saved = "%s/saved.%d" % (work, n)
    q.ok("stop")
    q.ok("migrate", uri="exec:cat > " + saved)
    t0 = time.time()
    while q.ok("query-migrate")["status"] not in ("completed", "failed"):
        if time.time() - t0 > LIMIT:
            fail("round %d: the save did not end" % n, p)
        time.sleep(0.05)
    s = q.ok("query-migrate")
    if s["status"] != "completed":
        fail("round %d: the save: %s" % (n, s), p)
    q.cmd("quit")
    p.communicate(timeout=LIMIT)
    p, q = start(n, ["-incoming", "exec:cat " + saved])
    running(q, p)
    time.sleep(0.5)

p.stdin.write(b"q")
p.stdin.flush()
try:
    out = p.communicate(timeout=LIMIT)[0].decode(errors="replace")
except subprocess.TimeoutExpired:
    fail("the guest did not end its loop", p)
m = re.search(r"exit-count: the device counted (\d+) of (\d+) writes", out)
if not m:
    fail("no count from the guest (status %d):\n%s" % (p.returncode, out[-1500:]))
counted, writes = int(m.group(1)), int(m.group(2))
if counted != writes or p.returncode != 1:
    fail("after %d save and restore rounds the device counted %d writes, the guest made %d "
         "(status %d)" % (rounds, counted, writes, p.returncode))
print("migrate-exits: %d save and restore rounds, %d port writes, each counted once"
      % (rounds, writes))
