"""migrate_usernet.py — a guest's TCP connections through user networking
across a live migration between two emulator processes on one host.

usage: migrate_usernet.py WORKDIR SIDE EXPECT EMULATOR [ARGS...]

The guest (make demo's kernel and initrd, in $GUEST) takes a DHCP lease
and then runs two transfers of 16 MiB of random data: an outbound one
(its nc connects to a host service through the NAT and reads what it
sends) and an inbound one (a host client connects to a hostfwd port and
reads what the guest's nc -l sends). Both ends on the host go slowly
(8 KiB every 0.1 s) until the migration is over, so each connection is
open, with data in flight both ways, when the guest stops; then they go
at full speed. The migration is live, unix:, to a process started with
-incoming defer, whose command line is the source's, hostfwd ports
included (as libvirt starts it): vmm's destination takes the source's
listening sockets with the stream. A second hostfwd rule is used only
after the migration, while the source still runs (paused, as libvirt
leaves it): its new connection must reach the guest on the destination.
QEMU's destination cannot bind ports the source holds, so there it gets
others. The source quits then, before the transfers end.

EXPECT carry: both transfers must end with the sender's sha256 and the
new connection must get the guest's greeting (vmm passes its host
sockets, listening ones too, to the destination with SCM_RIGHTS). EXPECT
report: print what became of them (QEMU's slirp, the reference, does not
carry connections) and fail only if the guest does not run on."""
import hashlib
import os
import re
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from migration_guests import Guests, free_port  # noqa: E402

work, side, expect = sys.argv[1], sys.argv[2], sys.argv[3]
g = Guests(work, side, sys.argv[4:], float(os.environ.get("MIGRATE_TIMEOUT", "600")))
fail, must, say = g.fail, g.must, g.say
SIZE = 16 << 20
SLOW_CHUNK, SLOW_PAUSE = 8192, 0.1
go = threading.Event()  # the migration is over: full speed


def start(n, fwd_ports, extra):
    rules = ",".join("hostfwd=tcp:127.0.0.1:%d-:%d" % (p, 5000 + i)
                     for i, p in enumerate(fwd_ports))
    return g.start(n, ["-smp", "1", "-netdev", "user,id=n0," + rules,
                       "-device", "virtio-net-pci,netdev=n0,mac=52:54:00:12:34:56"] + extra)


def greeting(port):
    """What the guest's second listener sends to a new client of port."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as c:
            c.settimeout(60)
            got = b""
            while b"\n" not in got:  # busybox nc may keep it open after
                b = c.recv(256)
                if not b:
                    break
                got += b
            return got.decode(errors="replace").strip()
    except OSError as e:
        return "error: %s" % e


def answer(tag):
    # not anchored: a line the guest prints from the background may follow
    # its shell's prompt on the same line
    m = re.findall(r"%s: ([0-9a-f ]*) END" % tag, g.console())
    return m[-1].strip() if m else None


# ------------------------------------------------------------ host side

out_data = os.urandom(SIZE)
out_sha = hashlib.sha256(out_data).hexdigest()
stats = {"out_sent_before": 0, "in_read_before": 0, "in_sha": None, "in_error": None,
         "out_error": None}


def slow_send(conn):
    off = 0
    while off < SIZE:
        n = SLOW_CHUNK if not go.is_set() else SIZE - off
        conn.sendall(out_data[off:off + n])
        off += n
        if not go.is_set():
            stats["out_sent_before"] = off
            time.sleep(SLOW_PAUSE)
    conn.close()


def serve(lsock):
    conn, _ = lsock.accept()
    try:
        slow_send(conn)
    except OSError as e:
        stats["out_error"] = str(e)


def fetch(port):
    """The inbound transfer: read what the guest sends to the hostfwd port."""
    h = hashlib.sha256()
    got = 0
    try:
        c = socket.create_connection(("127.0.0.1", port), timeout=g.limit)
        while True:
            b = c.recv(SLOW_CHUNK if not go.is_set() else 1 << 20)
            if not b:
                break
            h.update(b)
            got += len(b)
            if not go.is_set():
                stats["in_read_before"] = got
                time.sleep(SLOW_PAUSE)
        stats["in_sha"] = h.hexdigest()
        c.close()  # the guest's nc ends when we do
    except OSError as e:
        stats["in_error"] = str(e)
    stats["in_bytes"] = got


lsock = socket.socket()
lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
lsock.bind(("127.0.0.1", 0))
lsock.listen(1)
svc_port = lsock.getsockname()[1]
src_ports = [free_port(), free_port()]
# vmm: the source's command line; QEMU: ports of its own
dst_ports = src_ports if expect == "carry" else [free_port(), free_port()]

# ------------------------------------------------------------ the guest

cur = start(0, src_ports, [])
must(r"^vmm demo: a shell", cur)
g.dhcp_lease(cur)
say(cur, "head -c %d /dev/urandom >/tmp/in; echo \"INSHA: $(sha256sum </tmp/in | cut -c1-64) END\""
    % SIZE)
must(r"INSHA: [0-9a-f]{64} END", cur)
in_sha = answer("INSHA")
# inbound: the guest's nc -l sends /tmp/in to whoever comes through hostfwd
say(cur, "(nc -l -p 5000 </tmp/in; echo \"INDONE: $? END\") &")
# the second rule's listener, used only after the migration
say(cur, "echo hello-from-the-guest >/tmp/hello; (nc -l -p 5001 </tmp/hello) &")
# outbound: the guest's nc reads the host service's bytes through the NAT
threading.Thread(target=serve, args=(lsock,), daemon=True).start()
say(cur, "(nc 10.0.2.2 %d </dev/null >/tmp/out; echo \"OUTDONE: $? $(sha256sum </tmp/out | "
         "cut -c1-64) $(wc -c </tmp/out) END\") &" % svc_port)
time.sleep(2)
fetcher = threading.Thread(target=fetch, args=(src_ports[0],), daemon=True)
fetcher.start()
t0 = time.time()
while (stats["out_sent_before"] < 20 * SLOW_CHUNK or stats["in_read_before"] < 20 * SLOW_CHUNK):
    if time.time() - t0 > 120:
        fail("the transfers did not start: %s" % stats)
    time.sleep(0.5)

# ------------------------------------------------------------ migration

src = g.qmp(0)
dst_p = start(1, dst_ports, ["-incoming", "defer"])
dst = g.qmp(1)
sock = "%s/mig" % work
dst.ok("migrate-incoming", uri="unix:" + sock)
src.ok("migrate", uri="unix:" + sock)
s = g.migration_end(src, "migration")
if s["status"] != "completed":
    fail("migration: %s" % s)
while dst.ok("query-status")["status"] == "inmigrate":
    time.sleep(0.05)
st = dst.ok("query-status")["status"]
if st == "paused" and side == "qemu":
    dst.ok("cont")
elif st != "running":
    fail("the destination is %s" % st)
hello = greeting(dst_ports[1])  # the source is still there, paused
if expect == "carry" and hello != "hello-from-the-guest":
    fail("a new client of hostfwd port %d after the migration got %r, not the guest's "
         "greeting" % (dst_ports[1], hello))
src.cmd("quit")
cur.wait(60)
cur = dst_p
before = dict(stats)
go.set()
since = len(g.console())
say(cur, 'echo "ANSWER: $((6 * 7)) END"')
must(r"ANSWER: 42 END", cur, since)

# ------------------------------------------------------------ results

wait = g.limit if expect == "carry" else 120
out_done = g.wait_for(r"OUTDONE: \d+ [0-9a-f]* \d+ END", cur, secs=wait)
fetcher.join(wait if expect == "carry" else 30)
in_done = g.wait_for(r"INDONE: \d+ END", cur, secs=30)
out = (answer("OUTDONE") or "").split()
out_ok = out_done and len(out) == 3 and out[1] == out_sha and out[2] == str(SIZE)
in_ok = stats["in_sha"] == in_sha
report = ("outbound: %s (%s of %d bytes had gone before the migration ended); "
          "inbound through hostfwd: %s (%d bytes read before); a new hostfwd client "
          "after it got %r" % (
              "complete, sha256 matches" if out_ok else
              ("ended: nc status %s, %s bytes" % (out[0], out[2]) if len(out) == 3 else
               "never ended"),
              before["out_sent_before"], SIZE,
              "complete, sha256 matches" if in_ok else
              ("error %s" % stats["in_error"] if stats["in_error"] else
               "ended with %s bytes, sha256 %s" % (stats.get("in_bytes"), stats["in_sha"])
               if stats["in_sha"] else "never ended"),
              before["in_read_before"], hello))
if expect == "carry" and not (out_ok and in_ok):
    fail(report)
say(cur, "poweroff -f")
cur.wait(60)
print("migrate-usernet: %s: %s" % (side, report))
