"""demo_guest.py — make demo's guest (Debian's kernel, a busybox shell on
the serial console) under an emulator given as argv, with a QMP socket,
for the Python-driven guest tests (virtio_balloon.py, pcie_hotplug.py).

Guest(side, argv, sock, limit) starts it, waits for the shell and opens
QMP (.qmp); with incoming=True it is a migration's destination instead:
no boot, QMP once the stream is in, the guest running. ask(cmd) runs a
shell command and returns its one-line answer; wait_for(pattern) waits
on the serial output; until(what, cond, timeout) polls; stop() powers it
off. fail(side, msg, out) kills what is running, prints FAIL and exits."""
import os
import re
import select
import subprocess
import sys
import time

from qmp_client import Qmp

RUNNING = []  # the emulators, killed on the way out


def fail(side, msg, out=b""):
    for p in RUNNING:
        if p.poll() is None:
            p.kill()
    print("FAIL: %s: %s" % (side, msg))
    sys.stdout.write(out[-4000:].decode("latin-1"))
    sys.exit(1)


class Guest:
    def __init__(self, side, argv, sock, limit, incoming=False):
        self.side = side
        self.limit = limit
        self.out = b""
        self.n = 0
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT)
        RUNNING.append(self.p)
        os.set_blocking(self.p.stdout.fileno(), False)
        self.t0 = time.time()
        if incoming:
            self.migrated_in(sock)
            return
        self.wait_for(rb"vmm demo: a shell")
        self.qmp = Qmp(sock, timeout=limit)
        self.qmp.ok("qmp_capabilities")

    def migrated_in(self, sock):
        """QMP once the emulator listens, then until the incoming stream is
        in (vmm must say completed) and the guest runs (cont if paused)."""
        try:
            self.qmp = Qmp(sock, timeout=self.limit)
        except OSError as e:  # it quit: say why
            time.sleep(1)
            self.pump()
            fail(self.side, "the restored emulator's QMP: %r (exit status %s)" % (
                e, self.p.poll()), self.out)
        self.qmp.ok("qmp_capabilities")
        self.until("the incoming migration",
                   lambda: self.qmp.ok("query-status")["status"] != "inmigrate", self.limit)
        mig = self.qmp.ok("query-migrate")
        if self.side == "vmm" and mig.get("status") != "completed":
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                pass
            self.pump()
            fail(self.side, "the incoming migration: %s" % mig, self.out)
        if self.qmp.ok("query-status")["status"] == "paused":
            self.qmp.ok("cont")
        if self.qmp.ok("query-status")["status"] != "running":
            fail(self.side, "the restored guest does not run: %s" % self.qmp.ok("query-status"),
                 self.out)

    def until(self, what, cond, timeout):
        t = time.time()
        while not cond():
            if time.time() - t > timeout:
                fail(self.side, "%s: not within %d s" % (what, timeout), self.out)
            time.sleep(0.1)
        return time.time() - t

    def pump(self):
        try:
            data = self.p.stdout.read()
        except BlockingIOError:
            data = None
        if data:
            self.out += data
        elif self.p.poll() is not None:
            fail(self.side, "exited (%s)" % self.p.returncode, self.out)

    def wait_for(self, pattern, start=0):
        while True:
            self.pump()
            m = re.search(pattern, self.out[start:])
            if m:
                return m
            left = self.limit - (time.time() - self.t0)
            if left <= 0:
                fail(self.side, "no %r in %d s" % (pattern, self.limit), self.out)
            # until the console writes: in a nested L1 the guest shares
            # one emulated CPU with this loop, so it must not spin
            select.select([self.p.stdout], [], [], min(left, 1.0))

    def ask(self, cmd):
        """Run cmd in the guest's shell: its output, one line."""
        self.n += 1
        tag = "ANS%d" % self.n
        start = len(self.out)
        self.p.stdin.write(("printf '%s: %%s END\\n' \"$(%s)\"\n" % (tag, cmd)).encode())
        self.p.stdin.flush()
        m = self.wait_for(rb"\n" + tag.encode() + rb": (.*?) END", start)
        return m.group(1).decode().strip()

    def stop(self):
        self.p.stdin.write(b"poweroff -f\n")
        self.p.stdin.flush()
        try:
            self.p.wait(60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
