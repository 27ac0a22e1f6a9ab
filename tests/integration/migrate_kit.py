"""migrate_kit.py — the kit's mem-dirty payload (tests/guest/mem-dirty.c,
1 GiB of RAM, 256 MiB of it filled, everything in ring 3) migrated live on
one host, then saved to a file and restored: one side (vmm or QEMU) of
tests/integration/migrate-kit.sh and bench/migrate-kit.sh.

usage: migrate_kit.py WORKDIR SIDE PAYLOAD ROUNDS EMULATOR [ARGS...]

Unlike migrate_bench.py's Linux guest, this guest runs at native speed on
hosts whose guest ring 0 is emulated (kvm_pvm), so the figures are the
VMMs' own: what stopping, copying, loading and resuming cost.
Each round boots the guest afresh and migrates it twice, each time through
a unix: socket to a new process started with -incoming defer:
  idle   the guest only ticks (a serial line every 2 ms);
  dirty  the guest rewrites one word per page of 64 MiB at 100 MB/s;
and then the running guest is stopped, migrated to a file and the process
ended, and a new one is started from the file (vmm maps it, file:; QEMU
7.2 reads it, exec:cat, and needs `cont`, which is counted).
For each: the emulator's own total and downtime, the source's STOP event
to the destination's RESUME event, and the guest's pause: its last tick
line from the source to its first from the destination (the pipe's
reading times; ticks are 2 ms apart). For the restore: exec to the first
tick. A first round warms the host and is not counted (ROUNDS 0: that
round only, as the test runs it). Prints one line per figure with the
median over ROUNDS, SIDE first, and each round the rate at which the guest
rewrote its memory (its own clock: ticks) around the dirtying migration.
The run fails when a migration does not complete, when the guest's counter
goes back, or when the payload finds a filled page that lost its word
(it checks them each second, also after the restore)."""
import bisect
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from migration_guests import Guests  # noqa: E402

work, side, payload, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
g = Guests(work, side, sys.argv[5:], float(os.environ.get("TIMEOUT", "900")), memory=1024,
           poll=0.001, boot=["-kernel", payload, "-append", "mb=256 tick=2 rate=100 dirtymb=64"])
fail, say = g.fail, g.say
TICK = "mem-dirty: tick "
DIRTIED = re.compile(r"^mem-dirty: dirtied (\d+) in (\d+)$")
TICK_MS = 2


def start(n, extra):
    return g.start(n, ["-smp", "1", "-net", "none"] + extra)


def check_guest():
    """Fails at once when the payload reported a page that lost its word
    (a VMM without isa-debug-exit leaves it halted, not exited)."""
    bad = [line for line in g.console().splitlines() if line.startswith("mem-dirty: FAIL")]
    if bad:
        fail("the guest found its memory damaged: " + bad[0])


def lines_since(since):
    """The console lines read after since (the list is in reading order:
    the polls below look at the new ones only, not the whole run's)."""
    with g.lock:
        return g.stamps[bisect.bisect_right(g.stamps, since, key=lambda s: s[0]):]


def ticks_of(p, since=0.0):
    """(time read, sequence number) of p's tick lines read after since."""
    return [(t, int(line[len(TICK):])) for t, q, line in lines_since(since)
            if q is p and line.startswith(TICK)]


def next_tick(p, since, within=60.0):
    """The first tick of p read after since: (time, seq)."""
    t0 = time.time()
    while True:
        got = ticks_of(p, since)
        if got:
            return got[0]
        check_guest()
        if p.poll() is not None:
            fail("exited (status %s) waiting for a tick" % p.returncode)
        if time.time() - t0 > within:
            fail("no tick in %.0f s" % within)
        time.sleep(0.0005)


def dirtied(p, since):
    """p's first (pages dirtied, tick) report read after since."""
    t0 = time.time()
    while True:
        got = [DIRTIED.match(line.strip()) for t, q, line in lines_since(since) if q is p]
        got = [m for m in got if m]
        if got:
            return int(got[0].group(1)), int(got[0].group(2))
        check_guest()
        if p.poll() is not None:
            fail("exited (status %s) waiting for its check" % p.returncode)
        if time.time() - t0 > 60:
            fail("no 'dirtied' report in 60 s")
        time.sleep(0.01)


def event_time(ev):
    return ev["timestamp"]["seconds"] + ev["timestamp"]["microseconds"] / 1e6


def resume(dst, what):
    g.running_after_incoming(dst, what, 0.001)


def params(q):
    q.ok("migrate-set-parameters", **{"max-bandwidth": 10 << 30, "downtime-limit": 300})


figures = {}


def record(what, key, value, counted):
    if counted:
        figures.setdefault((what, key), []).append(value)


def live(n, cur, src, what, counted):
    """Migrate the guest of cur/src to a new process n; returns it."""
    sock = "%s/mig.%d" % (work, n)
    t_started = time.time()
    p = start(n, ["-incoming", "defer"])
    dst = g.qmp(n)
    dst.ok("migrate-incoming", uri="unix:" + sock)
    src.ok("migrate", uri="unix:" + sock)
    s = g.migration_end(src, what)
    if s["status"] != "completed":
        fail("%s: %s" % (what, s))
    resume(dst, what)
    stop = event_time(src.event("STOP", 60))
    resumed = event_time(dst.event("RESUME", 60))
    t_first, seq_first = next_tick(p, t_started)
    t_last, seq_last = ticks_of(cur)[-1]
    if seq_first <= seq_last:
        fail("%s: the counter went back: %d on the source, then %d" % (what, seq_last, seq_first))
    src.cmd("quit")
    g.wait_exit(cur, what)
    record(what, "total", s.get("total-time"), counted)
    record(what, "downtime", s.get("downtime"), counted)
    record(what, "STOP to RESUME", (resumed - stop) * 1000, counted)
    record(what, "guest pause", (t_first - t_last) * 1000, counted)
    record(what, "passes", s["ram"].get("dirty-sync-count"), counted)
    record(what, "MiB sent", s["ram"].get("transferred", 0) / 2**20, counted)
    return p, dst


def restore(n, cur, src, counted):
    saved = os.path.join(work, "saved")
    src.ok("stop")
    src.ok("migrate", uri="exec:cat > " + saved)
    s = g.migration_end(src, "save")
    if s["status"] != "completed":
        fail("save: %s" % s)
    src.cmd("quit")
    g.wait_exit(cur, "save")
    t0 = time.time()
    p = start(n, ["-incoming", ("file:" if side.startswith("vmm") else "exec:cat ") + saved])
    dst = g.qmp(n)
    resume(dst, "restore")
    t_run = time.time()
    t_first, _ = next_tick(p, t0)
    record("restore", "to running", (t_run - t0) * 1000, counted)
    record("restore", "to the first tick", (t_first - t0) * 1000, counted)
    record("restore", "file MiB", os.path.getsize(saved) / 2**20, counted)
    os.unlink(saved)
    return p, dst


n = 0
for r in range(rounds + 1):
    # Round 0 warms the host: where the host is itself a VM, memory no
    # process has touched yet costs it a fault into its own host.
    counted = r > 0
    cur = start(n, [])
    g.must(r"^mem-dirty: filled", cur, len(g.console()))
    src = g.qmp(n)
    params(src)
    next_tick(cur, time.time())
    cur, src = live(n + 1, cur, src, "idle", counted)
    params(src)
    pages0, tick0 = dirtied(cur, time.time())
    say(cur, "d")
    time.sleep(2)
    cur, src = live(n + 2, cur, src, "dirtying", counted)
    pages1, tick1 = dirtied(cur, time.time())
    say(cur, "i")
    rate = (pages1 - pages0) * 4096 / ((tick1 - tick0) * TICK_MS / 1000) / 1e6
    print("%s round %d: the guest rewrote %.0f MB/s (%d pages in %d ticks) around the "
          "dirtying migration" % (side, r, rate, pages1 - pages0, tick1 - tick0))
    sys.stdout.flush()
    if pages1 <= pages0:
        fail("the guest dirtied nothing")
    cur, src = restore(n + 3, cur, src, counted)
    next_tick(cur, time.time())
    # the restored guest's check of its filled pages must pass once more
    dirtied(cur, time.time())
    src.cmd("quit")
    g.wait_exit(cur, "the end")
    n += 4
for (what, key), values in figures.items():
    print("%s %s: %s %.1f (of %s)" % (side, what, key, statistics.median(values),
                                      " ".join("%.1f" % v for v in values)))
