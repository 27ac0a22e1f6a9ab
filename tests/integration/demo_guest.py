"""demo_guest.py — make demo's guest (Debian's kernel, a busybox shell on
the serial console) under an emulator given as argv, with a QMP socket,
for the Python-driven guest tests (virtio_balloon.py, pcie_hotplug.py).

Guest(side, argv, sock, limit) starts it, waits for the shell and opens
QMP (.qmp); ask(cmd) runs a shell command and returns its one-line
answer; wait_for(pattern) waits on the serial output; stop() powers it
off. fail(side, msg, out) kills what is running, prints FAIL and exits."""
import os
import re
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
    def __init__(self, side, argv, sock, limit):
        self.side = side
        self.limit = limit
        self.out = b""
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT)
        RUNNING.append(self.p)
        os.set_blocking(self.p.stdout.fileno(), False)
        self.t0 = time.time()
        self.wait_for(rb"vmm demo: a shell")
        self.qmp = Qmp(sock, timeout=limit)
        self.qmp.ok("qmp_capabilities")
        self.n = 0

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
            if time.time() - self.t0 > self.limit:
                fail(self.side, "no %r in %d s" % (pattern, self.limit), self.out)
            time.sleep(0.2)

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
