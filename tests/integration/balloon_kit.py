"""balloon_kit.py — the kit's balloon payload (tests/guest/balloon.c: 1 GiB
of RAM, 512 MiB of it filled, its virtio-balloon driver in ring 3) under
one or more emulators, for tests/integration/balloon-kit.sh and
bench/balloon-kit.sh.

usage: balloon_kit.py WORKDIR PAYLOAD APPEND ROUNDS --side NAME EMULATOR... [--side ...]

Each round boots each side afresh (the sides alternate, so that a drift of
the host hits all of them), waits for the payload's "ready", then:
  inflate  QMP `balloon` to RAM - 256 MiB; the emulator's RSS is polled
           every 2 ms until it fell by 90 % of 256 MiB (fails after
           BALLOON_KIT_LIMIT s, default 30), query-balloon must report the
           new size, and the payload must find every page outside the
           balloon intact;
  deflate  `balloon` back to RAM; query-balloon must report it, and the
           payload must read every returned page as zero (the host
           discarded it) and find all its pages intact after refilling them.
Where guest ring 0 is emulated (kvm_pvm) this guest still runs at native
speed, so the times are the VMMs' own (and the guest's exits).
Prints one line per side and round, then with ROUNDS > 1 each figure's
median per side and the ratio of the first side to the last."""
import bisect
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from migration_guests import Guests  # noqa: E402

MIB = 1 << 20
RAM_MIB = 1024
RAM = RAM_MIB * MIB
INFLATE = 256 * MIB
LIMIT = float(os.environ.get("BALLOON_KIT_LIMIT", "30"))
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
INFLATED = re.compile(r"^balloon: inflated (\d+) pages to (\d+) in (\d+) us")
DEFLATED = re.compile(r"^balloon: deflated (\d+) pages to (\d+) in (\d+) us")
RETURNED = re.compile(r"^balloon: (\d+) returned pages, (\d+) read zero")
INTACT = re.compile(r"^balloon: (\d+) pages intact")


def rss(p):
    """The process's resident bytes (statm: cheap enough to poll often)."""
    with open("/proc/%d/statm" % p.pid) as f:
        return int(f.read().split()[1]) * PAGE_SIZE


def wait_line(g, p, rx, since, secs):
    """(time read, match) of p's first console line matching rx read after
    since; fails after secs or on a FAIL line."""
    t0 = time.time()
    while True:
        with g.lock:
            new = g.stamps[bisect.bisect_right(g.stamps, since, key=lambda s: s[0]):]
        for t, q, line in new:
            if q is p and line.startswith("balloon: FAIL"):
                g.fail("the payload: " + line.strip())
            m = rx.match(line) if q is p else None
            if m:
                return t, m
        if p.poll() is not None:
            g.fail("exited (status %s) before %r" % (p.returncode, rx.pattern))
        if time.time() - t0 > secs:
            g.fail("no %r in %d s" % (rx.pattern, secs))
        time.sleep(0.002)


def check_actual(g, q, want):
    """query-balloon reports want bytes (the guest wrote `actual` before
    its line: at most a moment for the VMM to see it)."""
    t0 = time.time()
    while True:
        got = q.ok("query-balloon")["actual"]
        if got == want:
            return
        if time.time() - t0 > LIMIT:
            g.fail("query-balloon says %d MiB, not %d MiB" % (got >> 20, want >> 20))
        time.sleep(0.005)


def inflate(g, p, q):
    """Balloon to RAM - 256 MiB: the inflate's figures (ms)."""
    time.sleep(0.2)  # the fill's last faults settle
    rss0 = rss(p)
    t0 = time.time()
    q.ok("balloon", value=RAM - INFLATE)
    while rss0 - rss(p) < INFLATE * 9 // 10:
        if time.time() - t0 > LIMIT:
            g.fail("RSS fell %d MiB of the %d MiB inflated in %d s (from %d MiB)" % (
                (rss0 - rss(p)) >> 20, INFLATE >> 20, LIMIT, rss0 >> 20))
        time.sleep(0.002)
    t90 = time.time() - t0
    t_line, m = wait_line(g, p, INFLATED, t0, LIMIT)
    if int(m.group(2)) != INFLATE // 4096:
        g.fail("the payload holds %s pages in its balloon" % m.group(2))
    wait_line(g, p, INTACT, t_line - 0.001, LIMIT)
    check_actual(g, q, RAM - INFLATE)
    time.sleep(0.2)
    drop = rss0 - rss(p)
    return {"inflate: RSS -90%": t90 * 1000, "inflate: guest": int(m.group(3)) / 1000,
            "inflate: guest's line": (t_line - t0) * 1000,
            "inflate: RSS drop MiB": drop / MIB, "inflate: RSS drop %": drop * 100 / INFLATE}


def deflate(g, p, q):
    """Balloon back to RAM: the deflate's figures (ms); every returned
    page must read zero (the host discarded it) and all be intact."""
    t0 = time.time()
    q.ok("balloon", value=RAM)
    t_line, m = wait_line(g, p, DEFLATED, t0, LIMIT)
    if int(m.group(1)) != INFLATE // 4096 or m.group(2) != "0":
        g.fail("deflated %s pages to %s" % (m.group(1), m.group(2)))
    check_actual(g, q, RAM)
    _, m2 = wait_line(g, p, RETURNED, t_line - 0.001, LIMIT)
    if m2.group(1) != m2.group(2):
        g.fail("of %s pages back from the balloon, %s read zero: the host kept the rest"
               % (m2.group(1), m2.group(2)))
    wait_line(g, p, INTACT, t_line - 0.001, LIMIT)
    return {"deflate: guest": int(m.group(3)) / 1000,
            "deflate: guest's line": (t_line - t0) * 1000}


def one(work, name, emulator, payload, append):
    """One boot of one side: its figures."""
    os.makedirs(work)
    g = Guests(work, name, emulator, float(os.environ.get("TIMEOUT", "300")), memory=RAM_MIB,
               poll=0.01, boot=["-kernel", payload, "-append", append])
    p = g.start(0, ["-smp", "1", "-net", "none", "-device", "virtio-balloon-pci,id=balloon0"])
    g.must(r"^balloon: ready", p)
    q = g.qmp(0)
    if q.ok("query-balloon")["actual"] != RAM:
        g.fail("query-balloon before: %s" % q.ok("query-balloon"))
    fig = inflate(g, p, q)
    fig.update(deflate(g, p, q))
    q.ok("quit")
    g.wait_exit(p, "quit")
    return fig


def sides(argv):
    """[(name, emulator argv)] from "--side NAME EMULATOR..." groups."""
    out = []
    for a in argv:
        if a == "--side":
            out.append(None)
        elif out and out[-1] is None:
            out[-1] = (a, [])
        else:
            out[-1][1].append(a)
    return out


def main():
    work, payload, append, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    runs = sides(sys.argv[5:])
    figs = {name: [] for name, _ in runs}
    for r in range(rounds):
        for name, emulator in runs:
            f = one(os.path.join(work, "%s.%d" % (name, r)), name, emulator, payload, append)
            figs[name].append(f)
            print("%s round %d: RSS -%.0f MiB (%.0f%%) of 256 MiB, 90%% of it in %.0f ms, "
                  "the guest's line in %.0f ms (its driver %.0f ms); deflated: the line in "
                  "%.0f ms (driver %.0f ms)"
                  % (name, r + 1, f["inflate: RSS drop MiB"], f["inflate: RSS drop %"],
                     f["inflate: RSS -90%"], f["inflate: guest's line"], f["inflate: guest"],
                     f["deflate: guest's line"], f["deflate: guest"]), flush=True)
    if rounds < 2:
        return
    a, b = runs[0][0], runs[-1][0]
    for key in figs[a][0]:
        va = [f[key] for f in figs[a]]
        vb = [f[key] for f in figs[b]]
        ma, mb = statistics.median(va), statistics.median(vb)
        print("balloon-kit: %s: %s %.1f, %s %.1f: ratio %.2f (%s %s | %s %s)" % (
            key, a, ma, b, mb, ma / mb if mb else 0, a, " ".join("%.0f" % v for v in va),
            b, " ".join("%.0f" % v for v in vb)))


if __name__ == "__main__":
    main()
