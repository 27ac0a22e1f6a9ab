"""migrate_converge.py — a guest that dirties memory faster than the
migration sends it, migrated live with and without auto-converge.

usage: migrate_converge.py WORKDIR SIDE EMULATOR [ARGS...]

make demo's guest (in $GUEST) rewrites a 16 MiB file in RAM with random
data as fast as it can while it migrates through a unix: socket to a new
process (-incoming defer) at max-bandwidth 8 MiB/s. First without
auto-converge: a migrate that must still be running after 15 s (nothing
converges; migrate_cancel, the guest runs on). Then with auto-converge
(cpu-throttle-initial 60, increment 20): query-migrate must report a
cpu-throttle-percentage on the way, the migration must complete in fewer
passes than vmm's limit (30, where it would stop the guest whatever is
left), and the guest must run on at the destination, at full speed again
(its shell answers; a 1 s sleep takes less than 3 s)."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from migration_guests import Guests  # noqa: E402

work, side = sys.argv[1], sys.argv[2]
g = Guests(work, side, sys.argv[3:], float(os.environ.get("MIGRATE_TIMEOUT", "600")))
fail, must, say = g.fail, g.must, g.say

src_p = g.start(0, ["-smp", "1"])
must(r"^vmm demo: a shell", src_p)
say(src_p, "dd if=/dev/urandom of=/tmp/src bs=1M count=16 2>/dev/null; echo SRC-READY")
must(r"^SRC-READY", src_p)
say(src_p, "(while :; do cat /tmp/src > /tmp/dirt; done) &")
src = g.qmp(0)
src.ok("migrate-set-parameters", **{"max-bandwidth": 8 << 20, "downtime-limit": 300,
                                    "cpu-throttle-initial": 60, "cpu-throttle-increment": 20})
time.sleep(3)


def migrate(n, converge):
    """Migrate to process n; its status once completed, or None when
    still running after 15 s without auto-converge (then cancelled)."""
    src.ok("migrate-set-capabilities",
           capabilities=[{"capability": "auto-converge", "state": converge}])
    sock = "%s/mig.%d" % (work, n)
    dst_p = g.start(n, ["-smp", "1", "-incoming", "defer"])
    dst = g.qmp(n)
    dst.ok("migrate-incoming", uri="unix:" + sock)
    src.ok("migrate", uri="unix:" + sock)
    t0, throttle = time.time(), 0
    while True:
        s = src.ok("query-migrate")
        throttle = max(throttle, s.get("cpu-throttle-percentage", 0))
        if s["status"] in ("completed", "failed", "cancelled"):
            break
        if not converge and time.time() - t0 > 15:
            src.ok("migrate_cancel")
            while src.ok("query-migrate")["status"] != "cancelled":
                if time.time() - t0 > 120:
                    fail("migrate_cancel: still %s" % src.ok("query-migrate")["status"])
                time.sleep(0.1)
            dst_p.kill()
            return None, throttle, dst_p, dst
        if time.time() - g.t_start > g.limit:
            fail("migration still %s" % s["status"])
        time.sleep(0.1)
    if s["status"] != "completed":
        fail("migration %s" % s)
    return s, throttle, dst_p, dst


s, throttle, _, _ = migrate(1, False)
if s is not None:
    fail("without auto-converge the migration completed: %s" % s)
if throttle:
    fail("throttled to %d%% without auto-converge" % throttle)
st = src.ok("query-status")["status"]
if st != "running":
    fail("the source is %s after migrate_cancel" % st)
s, throttle, dst_p, dst = migrate(2, True)
passes = s["ram"]["dirty-sync-count"]
if not throttle:
    fail("no cpu-throttle-percentage reported: %s" % s)
if passes >= 30:
    fail("auto-converge took %d passes (the limit forces the stop)" % passes)
while dst.ok("query-status")["status"] == "inmigrate":
    time.sleep(0.05)
if dst.ok("query-status")["status"] == "paused" and side == "qemu":
    dst.ok("cont")
src.cmd("quit")
since = len(g.console())
say(dst_p, 'a=$(cut -d" " -f1 /proc/uptime); sleep 1; b=$(cut -d" " -f1 /proc/uptime); '
           'echo "SLEPT $a $b END"')
must(r"SLEPT [\d.]+ [\d.]+ END", dst_p, since)
t = g.console()[since:].split("SLEPT ")[-1].split()
wall = float(t[1]) - float(t[0])
if wall > 3:
    fail("a 1 s sleep took %.1f s on the destination: still throttled?" % wall)
print("migrate-converge: %s: without auto-converge still running after 15 s; with it, "
      "throttled up to %d%%, completed in %d passes, %s ms, downtime %s ms" % (
          side, throttle, passes, s.get("total-time"), s.get("downtime")))
dst.cmd("quit")
