"""virtio_serial_hotplug.py SIDE GUEST_DIR WORK EMULATOR ARGS... — one run
of tests/integration/virtio-serial-hotplug.sh: the emulator (vmm or QEMU)
boots make demo's guest (demo_guest.py: Debian's kernel, its
virtio_console module) with a virtio-serial-pci and no ports, then, as
libvirt's attach-device of a <channel> does: chardev-add of a unix socket
server and device_add of a virtserialport named org.test.0 on it. The
guest's driver must show the port (/sys/class/virtio-ports/*/name), 64 KiB
go each way with sha256 checked, chardev-remove is refused while the port
uses the chardev, device_del removes the port (DEVICE_DELETED, gone in the
guest), and chardev-remove then succeeds."""
import hashlib
import json
import os
import re
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from demo_guest import Guest, fail  # noqa: E402

side, guest_dir, work = sys.argv[1:4]
LIMIT = int(os.environ.get("VIRTIO_SERIAL_TIMEOUT", "600"))
SIZE = 64 << 10
qmp_path = os.path.join(work, "qmp.sock")
port_path = os.path.join(work, "port.sock")
cmdline = open("tests/guest/linux/cmdline").read().strip()
g = Guest(side, sys.argv[4:] + [
    "-m", "512", "-smp", "2", "-nographic", "-serial", "stdio", "-monitor", "none",
    "-no-reboot", "-net", "none",
    "-kernel", guest_dir + "/kernel", "-initrd", guest_dir + "/initrd.cpio.gz",
    "-append", cmdline, "-qmp", "unix:%s,server=on,wait=off" % qmp_path,
    "-device", "virtio-serial-pci,id=virtio-serial0,bus=pci.0,addr=0x5",
], qmp_path, LIMIT)
q = g.qmp


def call(name, args):
    """A command whose arguments Qmp.ok cannot take (device_add's name=)."""
    q.next_id += 1
    q.raw(json.dumps({"execute": name, "arguments": args, "id": q.next_id}).encode() + b"\n")
    r = q.reply()
    if "return" not in r:
        fail(side, "%s %s: %s" % (name, args, r), g.out)
    return r["return"]


def has_port():
    return "org.test.0" in g.ask("cat /sys/class/virtio-ports/*/name 2>/dev/null | tr '\\n' ' '")


def recv_exactly(s, n, got):
    data = b""
    while len(data) < n:
        chunk = s.recv(min(65536, n - len(data)))
        if not chunk:
            break
        data += chunk
    got["data"] = data


# libvirt's attach-device of a unix <channel>: chardev-add, device_add.
call("chardev-add", {"id": "charchannel9", "backend": {"type": "socket", "data": {
    "addr": {"type": "unix", "data": {"path": port_path}}, "server": True, "wait": False}}})
call("device_add", {"driver": "virtserialport", "bus": "virtio-serial0.0", "nr": 1,
                    "chardev": "charchannel9", "id": "channel9", "name": "org.test.0"})
if "charchannel9" not in {c["label"] for c in q.ok("query-chardev")}:
    fail(side, "query-chardev lacks charchannel9", g.out)
if "channel9" not in {d["name"] for d in q.ok("qom-list", path="/machine/peripheral")}:
    fail(side, "qom-list /machine/peripheral lacks channel9", g.out)
g.until("org.test.0 in the guest", has_port, 60)
g.ask("vport-links; echo linked")  # no udev: the demo's helper makes /dev/virtio-ports
g.ask("mount -t debugfs none /sys/kernel/debug; echo mounted")
vport = g.ask("basename $(readlink /dev/virtio-ports/org.test.0)")

# Host -> guest.
port = socket.socket(socket.AF_UNIX)
port.connect(port_path)
port.settimeout(LIMIT)
g.ask("until grep -q 'host_connected: 1' /sys/kernel/debug/virtio-ports/%s; do sleep 0.1;"
      " done; echo connected" % vport)
h2g = os.urandom(SIZE)
writer = threading.Timer(1, lambda: port.sendall(h2g))
writer.start()
got = g.ask("head -c %d /dev/virtio-ports/org.test.0 | sha256sum" % SIZE).split()[0]
if got != hashlib.sha256(h2g).hexdigest():
    fail(side, "host -> guest: the guest's sha256 %s is not the host's" % got, g.out)

# Guest -> host.
g2h_sum = g.ask("head -c %d /dev/urandom >/tmp/g2h; sha256sum </tmp/g2h" % SIZE).split()[0]
received = {}
reader = threading.Thread(target=recv_exactly, args=(port, SIZE, received))
reader.start()
g.ask("cat /tmp/g2h >/dev/virtio-ports/org.test.0; echo sent")
reader.join(LIMIT)
if hashlib.sha256(received.get("data", b"")).hexdigest() != g2h_sum:
    fail(side, "guest -> host: sha256 not the guest's %s" % g2h_sum, g.out)

# detach-device: the chardev is busy until the port is gone.
if "error" not in q.cmd("chardev-remove", id="charchannel9"):
    fail(side, "chardev-remove of a chardev in use succeeded", g.out)
q.ok("device_del", id="channel9")
if q.event("DEVICE_DELETED", timeout=60)["data"].get("device") != "channel9":
    fail(side, "DEVICE_DELETED for another device", g.out)
g.until("org.test.0 gone from the guest", lambda: not has_port(), 60)
q.ok("chardev-remove", id="charchannel9")
if "charchannel9" in {c["label"] for c in q.ok("query-chardev")}:
    fail(side, "query-chardev still lists charchannel9", g.out)
g.stop()
# vmm notes each unclaimed port once (the kernel probes Super I/O ports)
complaints = [ln for ln in g.out.decode("latin-1").splitlines()
              if re.match(r"vmm: (?!guest (read|wrote) unclaimed io address )", ln)]
if complaints:
    fail(side, "vmm complained: %s" % complaints, g.out)
print("virtio-serial-hotplug: %s ok in %d s: org.test.0 added, %d KiB each way, removed"
      % (side, time.time() - g.t0, SIZE >> 10))
