"""migrate_bench.py — one side of bench/migrate.sh: a 1 GiB Linux guest
migrated live on one host, then saved to a file and restored.

usage: migrate_bench.py WORKDIR SIDE EMULATOR [ARGS...]

The guest (make demo's kernel and initrd, found in $GUEST) boots once;
then, each through a unix: socket to a new process started with
-incoming defer:
  idle   the guest sits at its shell;
  dirty  the guest rewrites 10 MiB of random data every 0.1 s (a target
         of 100 MB/s, cycling through 200 MiB; the rate it reached is
         printed) while it migrates;
and last the running guest is stopped, migrated to a file and the
process ended, and a new one is started from that file:
  restore  from the emulator's start to the guest running (query-status
         polled every 2 ms; QEMU needs `cont`, which is counted), vmm
         mapping the file (file:), QEMU reading it (exec:cat, QEMU 7.2
         has no file:).
Both sides get the same migration parameters: max-bandwidth 10 GiB/s (QEMU's
default is 32 MiB/s, libvirt lifts it the same way) and the default
downtime-limit of 300 ms. Downtime is measured outside the emulators too:
from the source's STOP event to the destination's RESUME event (QMP event
timestamps, one host clock). After each step the guest's shell must
answer, or the run fails. Prints one line per figure, SIDE first."""
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
from migration_guests import Guests  # noqa: E402

work, side = sys.argv[1], sys.argv[2]
g = Guests(work, side, sys.argv[3:], float(os.environ.get("TIMEOUT", "1800")),
           memory=1024, poll=0.002)
fail, console, say = g.fail, g.console, g.say


def start(n, extra):
    return g.start(n, ["-smp", "1", "-net", "none"] + extra)


def wait_for(pattern, p, since=0, within=None):
    if not g.wait_for(pattern, p, since, within):
        fail("no %r in time" % pattern)


answers = 0


def shell_answers(p):
    global answers
    answers += 1
    since = len(console())
    # the guest's timers too: a sleep must end
    say(p, 'sleep 0.2; echo "ANSWER%d $((6 * 7)) END"' % answers)
    wait_for(r"ANSWER%d 42 END" % answers, p, since, 120)


def event_time(ev):
    return ev["timestamp"]["seconds"] + ev["timestamp"]["microseconds"] / 1e6


def finish(src, what):
    s = g.migration_end(src, what)
    if s["status"] != "completed":
        fail("%s: %s" % (what, s))
    return s


def resume(dst, what):
    g.running_after_incoming(dst, what)


def live(n, cur, src, what):
    """Migrate the running guest of cur/src to a new process n; returns it."""
    sock = "%s/mig.%d" % (work, n)
    p = start(n, ["-incoming", "defer"])
    dst = g.qmp(n)
    dst.ok("migrate-incoming", uri="unix:" + sock)
    src.ok("migrate", uri="unix:" + sock)
    s = finish(src, what)
    resume(dst, what)
    stop = event_time(src.event("STOP", 60))
    resumed = event_time(dst.event("RESUME", 60))
    src.cmd("quit")
    cur.wait(60)
    shell_answers(p)
    print("%s %s: total %s ms, downtime %s ms (STOP to RESUME %.1f ms), %s passes, %.0f MiB sent"
          % (side, what, s.get("total-time"), s.get("downtime"), (resumed - stop) * 1000,
             s["ram"].get("dirty-sync-count"), s["ram"].get("transferred", 0) / 2**20))
    sys.stdout.flush()
    return p, dst


def params(q):
    q.ok("migrate-set-parameters", **{"max-bandwidth": 10 << 30, "downtime-limit": 300})


cur = start(0, [])
wait_for(r"^vmm demo: a shell", cur)
src = g.qmp(0)
params(src)
shell_answers(cur)

cur, src = live(1, cur, src, "idle 1 GiB")
params(src)

# 200 MiB of random data in RAM, then 10 MiB of it rewritten every 0.1 s
say(cur, "dd if=/dev/urandom of=/tmp/src bs=1M count=10 2>/dev/null; "
         "for i in $(seq 20); do cat /tmp/src; done >/tmp/dirt; echo DIRT-READY")
wait_for(r"^DIRT-READY", cur)
say(cur, "(i=0; while [ ! -e /tmp/stop ]; do dd if=/tmp/src of=/tmp/dirt bs=1M "
         "seek=$((i % 20 * 10)) conv=notrunc 2>/dev/null; i=$((i+1)); sleep 0.1; done; "
         "echo \"DIRTIED $i $(cut -d' ' -f1 /proc/uptime) END\") &")
say(cur, "echo \"DSTART $(cut -d' ' -f1 /proc/uptime) END\"")
time.sleep(5)
cur, src = live(2, cur, src, "dirtying")
say(cur, "touch /tmp/stop")
wait_for(r"DIRTIED \d+ [\d.]+ END", cur, 0, 120)
t0 = float(re.findall(r"DSTART ([\d.]+) END", console())[-1])
n, t1 = re.findall(r"DIRTIED (\d+) ([\d.]+) END", console())[-1]
print("%s dirtying: the guest rewrote %.0f MB/s (%s x 10 MiB in %.1f s)"
      % (side, int(n) * 10 * 1.048576 / (float(t1) - t0), n, float(t1) - t0))

saved = os.path.join(work, "saved")
src.ok("stop")
src.ok("migrate", uri="exec:cat > " + saved)
finish(src, "save")
src.cmd("quit")
cur.wait(60)
t0 = time.time()
p = start(3, ["-incoming", ("file:" if side == "vmm" else "exec:cat ") + saved])
dst = g.qmp(3)
resume(dst, "restore")
t1 = time.time()
shell_answers(p)
print("%s restore: %d MiB file to a running guest in %.0f ms" % (
    side, os.path.getsize(saved) >> 20, (t1 - t0) * 1000))
dst.cmd("quit")
p.wait(60)
