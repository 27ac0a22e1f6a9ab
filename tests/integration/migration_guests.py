"""migration_guests.py — emulator processes running make demo's guest (Debian's
kernel, a busybox shell on the serial console) for the Python migration
tests: start them, read their consoles into one log, talk to the shell,
wait for its answers, open their QMP sockets, fail with the log's tail
and every process's stderr."""
import atexit
import os
import re
import socket
import subprocess
import sys
import threading
import time

from qmp_client import Qmp


def free_port():
    """A TCP port on 127.0.0.1 nobody listens on (at the time)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def stacks(pid):
    """Where process pid's threads are: in the kernel (/proc) and in
    user space (gdb, when present)."""
    out = []
    for tid in sorted(os.listdir("/proc/%d/task" % pid)):
        try:
            name = open("/proc/%d/task/%s/comm" % (pid, tid)).read().strip()
            kstack = open("/proc/%d/task/%s/stack" % (pid, tid)).read()
        except OSError as e:
            name, kstack = "?", str(e)
        out.append("thread %s (%s), kernel stack:\n%s" % (tid, name, kstack))
    try:
        bt = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
        out.append(bt.stdout.decode(errors="replace")[-6000:])
    except (OSError, subprocess.TimeoutExpired) as e:
        out.append("gdb: %s" % e)
    return "\n".join(out)


class Guests:
    def __init__(self, work, side, emulator, limit, memory=256, poll=0.1, boot=None):
        """memory: the guest's MiB; poll: seconds between looks for a
        QMP socket (a benchmark timing a start wants it short); boot: the
        options that load the guest (default make demo's kernel, initrd
        and command line from $GUEST)."""
        self.work, self.side, self.emulator, self.limit = work, side, emulator, limit
        self.memory, self.poll, self.boot = memory, poll, boot
        self.t_start = time.time()
        self.log = []  # the console, all processes in order
        self.stamps = []  # (when read, process, line) for each console line
        atexit.register(self.kill_all)  # an exception must not leave guests running
        self.lock = threading.Lock()
        self.procs = []

    def kill_all(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()

    def fail(self, msg):
        print("FAIL: %s: %s\n%s" % (self.side, msg, self.console()[-3000:]))
        for n, p in enumerate(self.procs):
            if p.poll() is None:
                p.kill()
            else:  # a negative status: the signal that ended it
                print("process %d exited with status %s" % (n, p.returncode))
        for name in sorted(os.listdir(self.work)):
            if name.startswith("err."):
                print("== " + name)
                print(open(os.path.join(self.work, name), errors="replace").read()[-2000:])
        sys.exit(1)

    def console(self):
        with self.lock:
            return "".join(self.log)

    def _reader(self, p):
        for line in iter(p.stdout.readline, b""):
            with self.lock:
                self.log.append(line.decode(errors="replace"))
                self.stamps.append((time.time(), p, self.log[-1]))

    def start(self, n, args):
        """Process n: the guest with the common options, then args."""
        boot = self.boot
        if boot is None:
            guest = os.environ["GUEST"]
            boot = ["-kernel", guest + "/kernel", "-initrd", guest + "/initrd.cpio.gz",
                    "-append", open("tests/guest/linux/cmdline").read().strip()]
        cmd = self.emulator + [
            "-m", str(self.memory), "-nographic", "-serial", "stdio", "-monitor", "none", "-no-reboot",
            "-qmp", "unix:%s/qmp.%d,server=on,wait=off" % (self.work, n)] + boot + args
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=open(os.path.join(self.work, "err.%d" % n), "w"))
        threading.Thread(target=self._reader, args=(p,), daemon=True).start()
        self.procs.append(p)
        return p

    def wait_for(self, pattern, p, since=0, secs=None):
        """Whether the console (from since) matches pattern before the
        overall limit or secs; fails when p exits first."""
        rx = re.compile(pattern, re.M)
        t0 = time.time()
        while not rx.search(self.console()[since:]):
            if p.poll() is not None:
                self.fail("exited (status %s) before %r" % (p.returncode, pattern))
            if time.time() - self.t_start > self.limit or (secs and time.time() - t0 > secs):
                return False
            time.sleep(0.2)
        return True

    def must(self, pattern, p, since=0):
        if not self.wait_for(pattern, p, since):
            self.fail("no %r in %ds" % (pattern, self.limit))

    @staticmethod
    def say(p, line):
        p.stdin.write((line + "\n").encode())
        p.stdin.flush()

    def dhcp_lease(self, p):
        """The guest's eth0 up with a lease from user networking (busybox
        udhcpc and a script that applies it); fails without 10.0.2.15."""
        self.say(p, "ip link set lo up; ip link set eth0 up")
        self.say(p, "printf '#!/bin/sh\\ncase $1 in bound|renew) ip -4 addr flush dev "
                    "$interface; ip addr add $ip/$mask dev $interface; ip route add default "
                    "via $router;; esac\\n' >/tmp/dh; chmod +x /tmp/dh")
        self.say(p, "udhcpc -i eth0 -n -q -t 10 -T 2 -s /tmp/dh >/dev/null 2>&1; echo \"LEASE: "
                    "$(ip -4 addr show eth0 | grep -c 10.0.2.15) END\"")
        self.must(r"LEASE: 1 END", p)

    def qmp(self, n):
        path = "%s/qmp.%d" % (self.work, n)
        while not os.path.exists(path):
            if self.procs[n].poll() is not None:
                self.fail("process %d exited (status %s) before its QMP socket" % (
                    n, self.procs[n].returncode))
            if time.time() - self.t_start > self.limit:
                self.fail("no QMP socket %s" % path)
            time.sleep(self.poll)
        try:
            q = Qmp(path, timeout=300)  # a stalled host (docs/test-hosts.md)
        except OSError as e:  # no greeting: where is it stuck?
            print(stacks(self.procs[n].pid))
            self.fail("process %d: QMP %s: %s" % (n, path, e))
        q.ok("qmp_capabilities")
        return q

    def wait_exit(self, p, what, secs=300):
        """Wait for p to end (after `quit`); when it does not, fail with
        its threads' stacks (gdb) to say where it hangs. Seen on kvm_pvm
        hosts: now and then the kernel takes tens of seconds to tear a VM
        down (vmm waiting in close() of the VM's fd, after a migration
        that also ran slow), hence the generous limit and the note."""
        t0 = time.time()
        try:
            p.wait(secs)
            if time.time() - t0 > 10:
                print("note: %s: process %d took %.0f s to exit after quit" % (
                    what, p.pid, time.time() - t0))
        except subprocess.TimeoutExpired:
            print(stacks(p.pid))
            self.fail("%s: process %d still runs %d s after quit" % (what, p.pid, secs))

    def running_after_incoming(self, dst, what, poll=0.002):
        """Wait until the destination dst has loaded the stream and runs
        the guest: QEMU's destination (self.side "qemu") waits for `cont`
        when the source was stopped, as libvirt sends it; vmm runs it."""
        while dst.ok("query-status")["status"] == "inmigrate":
            time.sleep(poll)
        st = dst.ok("query-status")["status"]
        if st == "paused" and self.side == "qemu":
            dst.ok("cont")
        elif st != "running":
            self.fail("%s: the destination is %s" % (what, st))

    def migration_end(self, src, what):
        """Poll src's query-migrate until the migration ended; its last
        status (fails once the overall limit has passed)."""
        while True:
            try:
                s = src.ok("query-migrate")
            except OSError as e:  # the source died: its stderr says why
                self.fail("%s: the source's QMP connection: %s" % (what, e))
            if s["status"] in ("completed", "failed", "cancelled"):
                return s
            if time.time() - self.t_start > self.limit:
                self.fail("%s still %s after %ds" % (what, s["status"], self.limit))
            time.sleep(0.1)
