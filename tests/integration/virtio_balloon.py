"""virtio_balloon.py — driven by virtio-balloon.sh: one run of the guest
(Debian's kernel and its virtio_balloon module, -m 512) under the
emulator given on the command line, with a QMP socket.

The guest first touches all its free memory (a file in its RAM-backed
root, then removed) so the emulator's RSS holds it; then QMP `balloon`
asks for 256 MiB. Checked: query-balloon reaches 256 MiB, BALLOON_CHANGE
carries it, the emulator's RSS (VmRSS in /proc/PID/status) falls by at
least 90 % of the inflated 256 MiB, and how long each took; the guest's
MemTotal shrinks; after setting guest-stats-polling-interval, qom-get
guest-stats shows a fresh last-update and a plausible stat-total-memory;
then `balloon` back to 512 MiB deflates (query-balloon reaches it)."""
import json
import os
import sys
import time

import demo_guest
from demo_guest import RUNNING, fail

MIB = 1 << 20
RAM = 512 * MIB
TARGET = 256 * MIB
LIMIT = int(os.environ.get("VIRTIO_BALLOON_TIMEOUT", "600"))


class Guest(demo_guest.Guest):
    def __init__(self, side, argv, sock, incoming=False):
        super().__init__(side, argv, sock, LIMIT, incoming)

    def rss(self):
        with open("/proc/%d/status" % self.p.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    def actual(self):
        return self.qmp.ok("query-balloon")["actual"]



def fill_cmd(mib):
    """Guest shell: write mib MiB into a tmpfs of its own (the root's
    stops at half the RAM); the pages stay used until it is unmounted."""
    return ("mkdir -p /fill && mount -t tmpfs -o size=100%% fill /fill && "
            "dd if=/dev/zero of=/fill/f bs=1M count=%d 2>&1 | tail -n 1" % mib)


def free_mib(g):
    return int(g.ask("awk '/MemFree/ { print int($2 / 1024) }' /proc/meminfo"))


def reporting(side, g):
    """free-page-reporting=on: memory the guest frees leaves the RSS
    without any balloon request (the guest reports free 2 MiB blocks
    about two seconds after they appear)."""
    mib = max(free_mib(g) - 40, 1)
    g.ask(fill_cmd(mib))
    time.sleep(1)
    rss_full = g.rss()
    t = time.time()
    g.ask("umount /fill")
    g.until("RSS falling by half of the %d MiB freed (from %d MiB, now %d MiB)"
            % (mib, rss_full >> 20, g.rss() >> 20),
            lambda: rss_full - g.rss() >= (mib * MIB) // 2, 60)
    t_rss = time.time() - t
    time.sleep(3)
    rss1 = g.rss()
    g.stop()
    print("virtio-balloon: %s ok in %d s: free page reporting, %d MiB freed in the guest, "
          "RSS %d -> %d MiB (-%d MiB), half of it gone in %.1f s"
          % (side, time.time() - g.t0, mib, rss_full >> 20, rss1 >> 20,
             (rss_full - rss1) >> 20, t_rss))


def main():
    mode, side, sock, argv = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    g = Guest(side, argv, sock)
    q = g.qmp
    path = "/machine/peripheral/balloon0"

    if g.actual() != RAM:
        fail(side, "query-balloon before: %s" % g.actual())
    drv = g.ask("ls /sys/bus/virtio/drivers/virtio_balloon | grep -c virtio")
    if drv != "1":
        fail(side, "the guest's virtio_balloon driver has no device (%s)" % drv, g.out)
    if mode == "reporting":
        return reporting(side, g)
    # Touch every free page, then free them: the emulator's RSS holds them.
    g.ask(fill_cmd(max(free_mib(g) - 40, 1)) + "; umount /fill")
    total_before = int(g.ask("awk '/MemTotal/ { print $2 }' /proc/meminfo"))
    time.sleep(1)
    rss0 = g.rss()

    t = time.time()
    q.ok("balloon", value=TARGET)
    t_actual = g.until("query-balloon reaching 256 MiB", lambda: g.actual() == TARGET, 300)
    ev = q.event("BALLOON_CHANGE", timeout=10)
    deadline = time.time() + 5
    while ev["data"]["actual"] != TARGET and time.time() < deadline:
        ev = q.event("BALLOON_CHANGE", timeout=5)  # the throttled last value follows
    if ev["data"]["actual"] != TARGET:
        fail(side, "last BALLOON_CHANGE: %s" % ev)
    inflated = RAM - TARGET
    t_rss = g.until("RSS falling by 90 %% of %d MiB (from %d MiB, now %d MiB)"
                    % (inflated >> 20, rss0 >> 20, g.rss() >> 20),
                    lambda: rss0 - g.rss() >= inflated * 9 // 10, 60)
    t_rss = time.time() - t
    rss1 = g.rss()
    total_after = int(g.ask("awk '/MemTotal/ { print $2 }' /proc/meminfo"))
    if total_before - total_after < (inflated >> 10) * 9 // 10:
        fail(side, "the guest's MemTotal went from %d to %d KiB" % (total_before, total_after))

    # Stats: polling every second; a report newer than the request.
    asked = int(time.time())
    q.ok("qom-set", path=path, property="guest-stats-polling-interval", value=1)
    if q.ok("qom-get", path=path, property="guest-stats-polling-interval") != 1:
        fail(side, "guest-stats-polling-interval does not read back 1")
    deadline = time.time() + 30
    while True:
        gs = q.ok("qom-get", path=path, property="guest-stats")
        if gs["last-update"] >= asked + 1 or time.time() > deadline:
            break
        time.sleep(0.5)
    if gs["last-update"] < asked + 1:
        fail(side, "guest-stats not refreshed after polling was set: %s" % json.dumps(gs))
    tot = gs["stats"].get("stat-total-memory", -1)
    if not 128 * MIB <= tot <= RAM or tot > total_after * 1024 + MIB:
        fail(side, "stat-total-memory %s (guest MemTotal %d KiB)" % (tot, total_after))
    names = sorted(gs["stats"])
    q.ok("qom-set", path=path, property="guest-stats-polling-interval", value=0)

    # Deflate.
    t = time.time()
    q.ok("balloon", value=RAM)
    t_deflate = g.until("query-balloon back at 512 MiB", lambda: g.actual() == RAM, 300)
    g.stop()
    print("virtio-balloon: %s ok in %d s: 256 MiB inflated, query-balloon there in %.1f s, "
          "RSS %d -> %d MiB (-%d MiB) in %.1f s, guest MemTotal %d -> %d MiB, "
          "stat-total-memory %d MiB, deflated in %.1f s; stats %s"
          % (side, time.time() - g.t0, t_actual, rss0 >> 20, rss1 >> 20, (rss0 - rss1) >> 20,
             t_rss, total_before >> 10, total_after >> 10, tot >> 20, t_deflate, ",".join(names)))


if __name__ == "__main__":
    try:
        main()
    finally:
        for proc in RUNNING:
            if proc.poll() is None:
                proc.kill()
