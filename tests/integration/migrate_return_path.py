"""migrate_return_path.py VMM WORK QEMU ARGS... — tests/integration/migrate-return-path.sh.

vmm's source against a stand-in destination (a socket peer here) that
reads the stream to its end, then answers as the case says. With the
`return-path` capability the source stays `active` while the reply is
held, `completed` after "loaded"; `failed` with its guest running again
after "failed to load" or a connection closed without a reply. Without
the capability it completes once the stream is written. Then a real pair
with the capability on both sides over unix:, vmm and QEMU (the reference)
alike: both ends `completed`, the destination runs."""
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from qmp_client import Qmp  # noqa: E402

vmm, work = [sys.argv[1]], sys.argv[2]
qemu = sys.argv[3:]
procs = []
HOLD_S = 3


def fail(msg):
    for p in procs:
        p.kill()
    for f in sorted(os.listdir(work)):
        if f.startswith("err."):
            sys.stderr.write("== %s\n%s" % (f, open(os.path.join(work, f)).read()[-1500:]))
    sys.exit("FAIL: " + msg)


def start(emu, name, *extra):
    qmp = os.path.join(work, "qmp." + name)
    p = subprocess.Popen([*emu, "-m", "64", "-display", "none", "-serial", "none",
                          "-monitor", "none", "-net", "none",
                          "-qmp", "unix:%s,server=on,wait=off" % qmp, *extra],
                         stderr=open(os.path.join(work, "err." + name), "w"))
    procs.append(p)
    q = Qmp(qmp, timeout=60)
    q.ok("qmp_capabilities")
    return p, q


def set_rp(q, on):
    q.ok("migrate-set-capabilities",
         capabilities=[{"capability": "return-path", "state": on}])
    caps = {c["capability"]: c["state"] for c in q.ok("query-migrate-capabilities")}
    if caps.get("return-path") is not on:
        fail("query-migrate-capabilities says %s after setting return-path %s" % (caps, on))


def wait_migrate(q, states, limit=120):
    t0 = time.time()
    while time.time() - t0 < limit:
        m = q.ok("query-migrate")
        if m.get("status") in states:
            return m
        time.sleep(0.1)
    fail("query-migrate never reached %s: %s" % (states, q.ok("query-migrate")))


class Peer:
    """One connection on a unix socket: read to the source's end of the
    stream, then reply(code) or close() as the case says."""

    def __init__(self, path):
        self.lsock = socket.socket(socket.AF_UNIX)
        self.lsock.bind(path)
        self.lsock.listen(1)
        self.data = bytearray()
        self.eof = threading.Event()
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        self.conn, _ = self.lsock.accept()
        while True:
            b = self.conn.recv(1 << 20)
            if not b:
                break
            self.data += b
        self.eof.set()

    def wait_end(self, what):
        if not self.eof.wait(120):
            fail("%s: the source never ended its half of the connection" % what)
        if self.data[:8] != b"VMMIGRAT" or self.data[-16:-8] != b"VMMEND!!":
            fail("%s: the peer did not get a whole vmm stream (%d bytes)" % (what, len(self.data)))

    def reply(self, code):
        self.conn.sendall(b"VMMLOAD!" + code.to_bytes(8, "little"))
        self.conn.close()


def stand_in(case, rp, answer):
    """answer: 0 loaded, 1 failed to load, None: close without a reply."""
    p, q = start(vmm, case)
    if q.ok("query-status")["status"] != "running":
        fail("%s: the source does not run" % case)
    set_rp(q, rp)
    path = os.path.join(work, "peer." + case)
    peer = Peer(path)
    q.ok("migrate", uri="unix:" + path)
    peer.wait_end(case)
    if rp:
        time.sleep(HOLD_S)
        m = q.ok("query-migrate")
        if m.get("status") != "active":
            fail("%s: %d s after the stream ended, with no reply, query-migrate says %s"
                 % (case, HOLD_S, m))
        st = q.ok("query-status")["status"]
        if st == "running":
            fail("%s: the source's guest runs while the destination's reply is awaited" % case)
        if answer is None:
            peer.conn.close()
        else:
            peer.reply(answer)
        want = "completed" if answer == 0 else "failed"
    else:
        want = "completed"
    m = wait_migrate(q, ("completed", "failed", "cancelled"), 30)
    if m["status"] != want:
        fail("%s: query-migrate says %s, expected %s" % (case, m, want))
    st = q.ok("query-status")["status"]
    if want == "failed":
        if st != "running":
            fail("%s: after the failed migration the source's guest is %s, not running" % (case, st))
        print("%s: failed as it should: %s; the guest runs on" % (case, m.get("error-desc")))
    else:
        if st == "running":
            fail("%s: the source's guest runs after a completed migration" % case)
        print("%s: completed (%s)" % (case, "after the reply" if rp else "no reply asked"))
    p.kill()
    p.wait()


def pair(side, emu):
    path = os.path.join(work, "mig." + side)
    sp, sq = start(emu, side + "-src")
    dp, dq = start(emu, side + "-dst", "-incoming", "defer")
    set_rp(sq, True)
    set_rp(dq, True)
    dq.ok("migrate-incoming", uri="unix:" + path)
    sq.ok("migrate", uri="unix:" + path)
    m = wait_migrate(sq, ("completed", "failed", "cancelled"))
    if m["status"] != "completed":
        fail("%s: the source says %s" % (side, m))
    m = wait_migrate(dq, ("completed", "failed"))
    if m["status"] != "completed":
        fail("%s: the destination says %s" % (side, m))
    t0 = time.time()
    while dq.ok("query-status")["status"] != "running":
        if time.time() - t0 > 30:
            fail("%s: the destination is %s" % (side, dq.ok("query-status")))
        time.sleep(0.1)
    print("%s: return-path on both sides over unix: completed, the destination runs" % side)
    for p in (sp, dp):
        p.kill()
        p.wait()


# the capability needs a connection both ways
p, q = start(vmm, "exec")
set_rp(q, True)
r = q.cmd("migrate", uri="exec:cat >/dev/null")
if "error" not in r or "return-path" not in r["error"]["desc"]:
    fail("migrate exec: with return-path: %s" % r)
p.kill()
p.wait()
print("exec: refused with return-path: %s" % r["error"]["desc"])

stand_in("held-then-loaded", True, 0)
stand_in("load-failed", True, 1)
stand_in("no-reply", True, None)
stand_in("no-return-path", False, None)
pair("vmm", vmm)
pair("qemu", qemu)
