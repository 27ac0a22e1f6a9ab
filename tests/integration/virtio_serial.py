"""virtio_serial.py SIDE GUEST_DIR WORK EMULATOR ARGS... — one run of
tests/integration/virtio-serial.sh: the emulator (vmm or QEMU) boots make
demo's guest (Debian's kernel, its virtio_console module, Debian's
qemu-ga) with a virtio-serial-pci as libvirt 9.0 writes it:

  port 1 org.test.0              -chardev socket,path=...,server=on,wait=off
  port 2 org.qemu.guest_agent.0  -chardev socket,fd=N,server=on,wait=off
                                 (a listening socket made here, as libvirt's)
  port 0 virtconsole (hvc0)      -chardev socket,path=...,server=on,wait=off

and checks: the ports appear as /dev/virtio-ports/NAME, query-chardev
lists the chardevs, 1 MiB goes each way through org.test.0 with its
sha256 checked, the guest opening and closing the port gives
VSERPORT_CHANGE open true then false, hvc0 carries a line each way, and
qemu-ga opening its port shows in query-chardev's frontend-open (libvirt
reads the agent's state there) and qemu-ga answers guest-ping and
guest-get-osinfo (its kernel-release the guest's uname -r) through the
host socket."""
import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from qmp_client import Qmp  # noqa: E402

side, guest, work = sys.argv[1:4]
emulator = sys.argv[4:]
LIMIT = int(os.environ.get("VIRTIO_SERIAL_TIMEOUT", "600"))
MIB = 1 << 20
out_path = os.path.join(work, "out")
t0 = time.time()
proc = None


def fail(msg):
    print("FAIL: %s: %s" % (side, msg))
    try:
        print(open(out_path, "rb").read()[-3000:].decode(errors="replace"))
        print(open(os.path.join(work, "err"), "rb").read()[-3000:].decode(errors="replace"))
    except OSError:
        pass
    if proc:
        proc.kill()
    sys.exit(1)


def serial_text():
    return open(out_path, "rb").read().decode(errors="replace").replace("\r", "")


def wait_serial(pattern, timeout=LIMIT):
    deadline = time.time() + timeout
    while True:
        m = re.findall(pattern, serial_text(), re.M)
        if m:
            return m[-1]
        if proc.poll() is not None:
            fail("exited before '%s'" % pattern)
        if time.time() > deadline:
            fail("no '%s' in %d s" % (pattern, timeout))
        time.sleep(0.2)


def send(line):
    proc.stdin.write(line.encode() + b"\n")
    proc.stdin.flush()


asked = 0


def ask(cmd, timeout=LIMIT):
    """Run cmd in the guest's shell; its output on one line."""
    global asked
    asked += 1
    tag = "ANS%d" % asked
    send("printf '%%s: %%s END\\n' %s \"$(%s)\"" % (tag, cmd))
    return wait_serial("^%s: (.*) END$" % tag, timeout).strip()


def wait_event(q, port_id, is_open, timeout=120):
    deadline = time.time() + timeout
    while True:
        for i, ev in enumerate(q.pending):
            if ev["event"] == "VSERPORT_CHANGE" and ev["data"] == {"id": port_id, "open": is_open}:
                return q.pending.pop(i)
        if time.time() > deadline:
            fail("no VSERPORT_CHANGE %s open=%s (have %s)" % (port_id, is_open, q.pending))
        q.sock.settimeout(1)
        try:
            q.pending.append(q.read())
        except socket.timeout:
            pass


def connect(path):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.settimeout(LIMIT)
    return s


def recv_exactly(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(min(65536, n - len(data)))
        if not chunk:
            fail("the host end of a port closed after %d of %d bytes" % (len(data), n))
        data += chunk
    return data


def recv_until(s, needle):
    data = b""
    while needle not in data:
        chunk = s.recv(4096)
        if not chunk:
            fail("hvc0's socket closed before %r" % needle)
        data += chunk
    return data


def agent(s, request):
    s.sendall(json.dumps(request).encode() + b"\n")
    buf = b""
    while b"\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            fail("qemu-ga's socket closed")
        buf += chunk
    return json.loads(buf.split(b"\n")[0])


# libvirt's way: a listening socket the emulator inherits as fd=N.
ga_path = os.path.join(work, "ga.sock")
ga_listen = socket.socket(socket.AF_UNIX)
ga_listen.bind(ga_path)
ga_listen.listen(1)
ga_fd = ga_listen.fileno()
os.set_inheritable(ga_fd, True)
port_path = os.path.join(work, "port.sock")
con_path = os.path.join(work, "con.sock")
qmp_path = os.path.join(work, "qmp.sock")
cmdline = open("tests/guest/linux/cmdline").read().strip()
args = emulator + [
    "-m", "512", "-smp", "2", "-nographic", "-serial", "stdio", "-monitor", "none",
    "-no-reboot", "-net", "none",
    "-kernel", guest + "/kernel", "-initrd", guest + "/initrd.cpio.gz", "-append", cmdline,
    "-qmp", "unix:%s,server=on,wait=off" % qmp_path,
    "-device", "virtio-serial-pci,id=virtio-serial0,bus=pci.0,addr=0x5",
    "-chardev", "socket,id=charchannel0,path=%s,server=on,wait=off" % port_path,
    "-device", "virtserialport,bus=virtio-serial0.0,nr=1,chardev=charchannel0,id=channel0,"
    "name=org.test.0",
    "-chardev", "socket,id=charchannel1,fd=%d,server=on,wait=off" % ga_fd,
    "-device", json.dumps({"driver": "virtserialport", "bus": "virtio-serial0.0", "nr": 2,
                           "chardev": "charchannel1", "id": "channel1",
                           "name": "org.qemu.guest_agent.0"}),
    "-chardev", "socket,id=charconsole0,path=%s,server=on,wait=off" % con_path,
    "-device", "virtconsole,chardev=charconsole0,id=console0",
]
proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=open(out_path, "wb"),
                        stderr=open(os.path.join(work, "err"), "wb"), pass_fds=[ga_fd])
ga_listen.close()  # the emulator has it now
q = Qmp(qmp_path)
q.ok("qmp_capabilities")
labels = {c["label"] for c in q.ok("query-chardev")}
for want in ("charchannel0", "charchannel1", "charconsole0"):
    if want not in labels:
        fail("query-chardev lacks %s: %s" % (want, sorted(labels)))
names = {d["name"] for d in q.ok("qom-list", path="/machine/peripheral")}
for want in ("virtio-serial0", "channel0", "channel1", "console0"):
    if want not in names:
        fail("qom-list /machine/peripheral lacks %s: %s" % (want, sorted(names)))
uname = wait_serial(r"^vmm demo: Debian's kernel (\S+),")
wait_serial("^vmm demo: a shell")

# The names, once the driver has them.
links = ""
for _ in range(20):
    links = ask("vport-links; ls /dev/virtio-ports | tr '\\n' ' '")
    if "org.test.0" in links and "org.qemu.guest_agent.0" in links:
        break
    time.sleep(1)
else:
    diag = [ask(c) for c in ("lsmod | grep virtio | tr '\\n' ' '",
                              "ls /sys/bus/virtio/devices/ /sys/class/virtio-ports/ | tr '\\n' ' '",
                              "cat /sys/bus/virtio/devices/*/device | tr '\\n' ' '",
                              "dmesg | grep -i -e virtio -e vport -e hvc | tail -n 20 | tr '\\n' '|'")]
    fail("/dev/virtio-ports has '%s'; guest: %s" % (links, " ## ".join(diag)))
ask("mount -t debugfs none /sys/kernel/debug; echo mounted")
vport = ask("basename $(readlink /dev/virtio-ports/org.test.0)")

# Host -> guest, 1 MiB: the guest reads once the host end is connected
# (with no host a read is at its end), and opening the port is the event.
port = connect(port_path)
ask("until grep -q 'host_connected: 1' /sys/kernel/debug/virtio-ports/%s; do sleep 0.1; done;"
    " echo connected" % vport, timeout=60)
h2g = os.urandom(MIB)
send("printf 'H2G: %%s END\\n' \"$(head -c %d /dev/virtio-ports/org.test.0 | sha256sum)\"" % MIB)
wait_event(q, "channel0", True)
port.sendall(h2g)
got = wait_serial("^H2G: (.*) END$").split()[0]
if got != hashlib.sha256(h2g).hexdigest():
    fail("host -> guest: the guest's sha256 %s is not the host's" % got)
wait_event(q, "channel0", False)

# Guest -> host, 1 MiB.
g2h_sum = ask("head -c %d /dev/urandom >/tmp/g2h; sha256sum </tmp/g2h" % MIB).split()[0]
received = {}
reader = threading.Thread(target=lambda: received.update(data=recv_exactly(port, MIB)))
reader.start()
ask("cat /tmp/g2h >/dev/virtio-ports/org.test.0; echo sent")
reader.join(LIMIT)
if hashlib.sha256(received.get("data", b"")).hexdigest() != g2h_sum:
    fail("guest -> host: %d bytes, sha256 not the guest's %s" % (len(received.get("data", b"")), g2h_sum))
wait_event(q, "channel0", True)
wait_event(q, "channel0", False)

# The virtconsole: hvc0 a line each way.
con = connect(con_path)
ask("echo hvc-from-guest >/dev/hvc0; echo written")
recv_until(con, b"hvc-from-guest")
send("printf 'HVC: %s END\\n' \"$(head -n 1 /dev/hvc0)\"")
time.sleep(1)
con.sendall(b"hvc-from-host\n")
line = wait_serial("^HVC: (.*) END$", timeout=120)
if line.strip() != "hvc-from-host":
    fail("hvc0 read '%s'" % line)

# Debian's qemu-ga on org.qemu.guest_agent.0.
send("qemu-ga -m virtio-serial -p /dev/virtio-ports/org.qemu.guest_agent.0 -t /tmp"
     " -f /tmp/qga.pid -l /tmp/qga.log &")
wait_event(q, "channel1", True)
# libvirt reads the agent's state from query-chardev's frontend-open
opened = {c["label"]: c.get("frontend-open") for c in q.ok("query-chardev")}
if opened.get("charchannel1") is not True:
    fail("query-chardev after qemu-ga opened its port: %s" % opened)
ga = connect(ga_path)
r = agent(ga, {"execute": "guest-ping"})
if r != {"return": {}}:
    fail("guest-ping answered %s" % r)
r = agent(ga, {"execute": "guest-get-osinfo"})
info = r.get("return", {})
if info.get("kernel-release") != uname or info.get("id") != "debian":
    fail("guest-get-osinfo answered %s (uname -r %s)" % (r, uname))

send("poweroff -f")
try:
    proc.wait(60)
except subprocess.TimeoutExpired:
    proc.kill()
print("virtio-serial: %s ok in %d s: /dev/virtio-ports: %s; 1 MiB each way; hvc0; qemu-ga %s %s"
      % (side, time.time() - t0, links.strip(), info.get("pretty-name"), info.get("kernel-release")))
