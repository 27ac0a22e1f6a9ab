"""pcie_hotplug.py — driven by pcie-hotplug.sh: one run of make demo's
guest (Debian's kernel) on -M q35 with three pcie-root-ports, under the
emulator given on the command line, with a QMP socket.

Checked, in order:
  - pciehp bound to the empty ports (their hot-plug service exists);
  - Linux sees 4 KiB of configuration space on a root port (PCI Express,
    through ECAM) and 256 bytes on the host bridge (conventional);
  - blockdev-add (file + raw nodes); refused with a QMP error:
    device_add of a virtio-blk-pci on an unknown bus, on the root bus,
    into the port that holds a device, a device model that cannot go
    there; device_del of an unknown id;
  - device_add of a virtio-blk-pci on that drive into the empty port
    pci.1: the guest sees /dev/vda appear, reads the
    pattern the host put in the image (sha256 equal), writes its own block
    which the host then finds in the image (sha256 equal);
  - a second device on the same drive is refused;
  - device_del: the guest releases the slot (attention button, power
    off), DEVICE_DELETED names the device, /dev/vda is gone, blockdev-del
    of both nodes succeeds;
  - the HMP path through human-monitor-command: drive_add, device_add
    into pci.2, the guest sees the disk, device_del, DEVICE_DELETED; the
    drive went with the device (drive_add of its id works again, a second
    time it is a duplicate);
  - netdev_add and device_add of a virtio-net-pci into pci.1 (emptied
    before): the guest has a NIC with its MAC; device_del removes it
    (DEVICE_DELETED), netdev_del its backend;
  - the virtio-rng-pci the command line put in pci.3 goes (device_del,
    DEVICE_DELETED, the guest's hw_random core loses it); object-add of an
    rng-random source and device_add of a virtio-rng-pci on it into pci.3:
    the guest's hw_random core lists it and /dev/hwrng gives 64 bytes;
    object-del of the source works while the device uses it, as in QEMU,
    and the device still gives bytes; of an unknown id it is refused;
    device_del takes the device out; the HMP object_add and object_del do
    the same with rng-builtin;
  - CYCLES rounds of what libvirt's attach-device and detach-device send
    (blockdev-add, netdev_add, object-add, device_add of a disk, a NIC and
    an rng, device_del of all three, blockdev-del, netdev_del, object-del),
    more than vmm's tables hold: each round the guest sees all three come
    and go."""
import hashlib
import os
import sys
import time

import demo_guest
from demo_guest import fail

LIMIT = int(os.environ.get("PCIE_HOTPLUG_TIMEOUT", "600"))
MIB = 1 << 20
CYCLES = 8


class Guest(demo_guest.Guest):
    def __init__(self, side, argv, sock):
        super().__init__(side, argv, sock, LIMIT)

    def until_guest(self, what, cmd, want, timeout=90):
        t = time.time()
        while True:
            got = self.ask(cmd)
            if got == want:
                return time.time() - t
            if time.time() - t > timeout:
                fail(self.side, "%s: '%s' after %d s (want '%s')" % (what, got, timeout, want),
                     self.out)
            time.sleep(1)

    def hmp(self, line, want=""):
        """One HMP line through human-monitor-command: its output must be want."""
        out = self.qmp.ok("human-monitor-command", **{"command-line": line}).strip()
        if out != want:
            fail(self.side, "HMP %s: %r" % (line, out), self.out)

    def refused(self, what, name, **args):
        r = self.qmp.cmd(name, **args)
        if "error" not in r:
            fail(self.side, "%s: accepted: %s" % (what, r), self.out)
        return r["error"].get("class")

    def deleted(self, *ids):
        """DEVICE_DELETED for each of ids, in any order (QEMU also reports
        the virtio backends)."""
        left = set(ids)
        while left:
            try:
                ev = self.qmp.event("DEVICE_DELETED", timeout=120)
            except TimeoutError as e:
                fail(self.side, "device_del %s: %s" % (" ".join(sorted(left)), e), self.out)
            dev = ev["data"].get("device")
            if dev not in left:
                continue
            if ev["data"].get("path") != "/machine/peripheral/" + dev:
                fail(self.side, "DEVICE_DELETED: %s" % ev, self.out)
            left.discard(dev)


VDA = "test -b /dev/vda && echo yes || echo no"
RNGS = "grep -o virtio_rng /sys/class/misc/hw_random/rng_available | wc -l"
HWRNG = "head -c 64 /dev/hwrng | wc -c"


def rng_hotplug(g, side):
    """The boot-time rng out, a hot-plugged one on an object in and out."""
    g.until_guest("boot-time rng", RNGS, "1")
    g.qmp.ok("device_del", id="rng1")
    g.deleted("rng1")
    g.until_guest("removed boot-time rng", RNGS, "0")
    g.qmp.ok("object-add", **{"qom-type": "rng-random", "id": "objrng0",
                              "filename": "/dev/urandom"})
    g.refused("rng on an unknown object", "device_add", driver="virtio-rng-pci", id="rng9",
              bus="pci.3", rng="nosuch")
    g.qmp.ok("device_add", driver="virtio-rng-pci", id="rng2", bus="pci.3", rng="objrng0")
    g.until_guest("hot-added rng", RNGS, "1")
    got = g.ask(HWRNG)
    if got != "64":
        fail(side, "/dev/hwrng of the hot-added rng gave %s of 64 bytes" % got, g.out)
    # the device keeps its source when the object goes, as in QEMU
    g.qmp.ok("object-del", id="objrng0")
    got = g.ask(HWRNG)
    if got != "64":
        fail(side, "/dev/hwrng after object-del gave %s of 64 bytes" % got, g.out)
    g.refused("unknown object", "object-del", id="objrng0")
    g.qmp.ok("device_del", id="rng2")
    g.deleted("rng2")
    g.until_guest("removed rng", RNGS, "0")
    g.hmp("object_add rng-builtin,id=objrng1")
    g.hmp("device_add virtio-rng-pci,rng=objrng1,id=rng3,bus=pci.3")
    g.until_guest("HMP hot-added rng", RNGS, "1")
    g.hmp("device_del rng3")
    g.deleted("rng3")
    g.until_guest("HMP removed rng", RNGS, "0")
    g.hmp("object_del objrng1")
    out = g.qmp.ok("human-monitor-command", **{"command-line": "object_del objrng1"}).strip()
    if "object 'objrng1' not found" not in out:
        fail(side, "HMP object_del of a deleted object: %r" % out, g.out)


def main():
    side, sock, disk, disk2 = sys.argv[1:5]
    argv = sys.argv[5:]
    pattern = os.urandom(MIB)
    with open(disk, "r+b") as f:
        f.seek(MIB)
        f.write(pattern)
    g = Guest(side, argv, sock)
    svc = g.ask("ls /sys/bus/pci_express/devices | grep -c 'pcie004$'")
    if svc != "3":
        fail(side, "pciehp services: %s (want 3)" % svc, g.out)
    sizes = g.ask("echo $(wc -c < /sys/bus/pci/devices/0000:00:02.0/config)"
                  " $(wc -c < /sys/bus/pci/devices/0000:00:00.0/config)")
    if sizes != "4096 256":
        fail(side, "config space of the root port and the host bridge: %s (want 4096 256)"
             % sizes, g.out)

    g.qmp.ok("blockdev-add", driver="file", filename=disk, **{"node-name": "f1"})
    g.qmp.ok("blockdev-add", driver="raw", file="f1", **{"node-name": "d1"})
    g.refused("unknown bus", "device_add", driver="virtio-blk-pci", id="x0", bus="nosuch",
              drive="d1")
    g.refused("root bus", "device_add", driver="virtio-blk-pci", id="x1", bus="pcie.0",
              addr="0x9", drive="d1")
    g.refused("busy port", "device_add", driver="virtio-blk-pci", id="x2", bus="pci.3",
              addr="0x0", drive="d1")
    g.refused("device model", "device_add", driver="isa-debug-exit", id="x3", bus="pci.1")
    if g.refused("unknown id", "device_del", id="nosuch") != "DeviceNotFound":
        fail(side, "device_del nosuch: not DeviceNotFound", g.out)

    g.qmp.ok("device_add", driver="virtio-blk-pci", id="hd1", bus="pci.1", drive="d1")
    took = g.until_guest("hot-added disk", VDA, "yes")
    size = g.ask("wc -c < /sys/block/vda/device/../config")
    if size != "4096":
        fail(side, "config space of the endpoint behind the port: %s (want 4096)" % size, g.out)
    want = hashlib.sha256(pattern).hexdigest()
    got = g.ask("dd if=/dev/vda bs=1M skip=1 count=1 2>/dev/null | sha256sum | cut -c1-64")
    if got != want:
        fail(side, "the guest read %s, the image holds %s" % (got, want), g.out)
    wrote = g.ask("dd if=/dev/urandom of=/tmp/blk bs=64k count=16 2>/dev/null && "
                  "dd if=/tmp/blk of=/dev/vda bs=64k seek=64 conv=fsync 2>/dev/null && "
                  "sha256sum /tmp/blk | cut -c1-64")
    g.refused("drive in use", "device_add", driver="virtio-blk-pci", id="hd9",
              bus="pci.2", drive="d1")

    g.qmp.ok("device_del", id="hd1")
    g.deleted("hd1")
    g.until_guest("removed disk", VDA, "no")
    with open(disk, "rb") as f:
        f.seek(4 * MIB)
        host = hashlib.sha256(f.read(MIB)).hexdigest()
    if host != wrote:
        fail(side, "the guest wrote %s, the image holds %s" % (wrote, host), g.out)
    g.qmp.ok("blockdev-del", **{"node-name": "d1"})
    g.qmp.ok("blockdev-del", **{"node-name": "f1"})

    g.hmp("drive_add 0 file=%s,if=none,id=drv2,format=raw" % disk2, "OK")
    g.hmp("device_add virtio-blk-pci,drive=drv2,id=hd2,bus=pci.2")
    g.until_guest("HMP hot-added disk", VDA, "yes")
    g.hmp("device_del hd2")
    g.deleted("hd2")
    g.until_guest("HMP removed disk", VDA, "no")
    # the drive_add drive went with its device: its id is free again, once
    again = "drive_add 0 file=%s,if=none,id=drv2,format=raw" % disk2
    out = g.qmp.ok("human-monitor-command", **{"command-line": again}).strip()
    if out != "OK":
        fail(side, "drive_add of drv2 after its device went: %r" % out, g.out)
    out = g.qmp.ok("human-monitor-command", **{"command-line": again}).strip()
    if "Duplicate ID 'drv2'" not in out:
        fail(side, "a second drive_add of drv2: %r" % out, g.out)

    mac = "52:54:00:aa:bb:01"
    nics = "cat /sys/class/net/*/address | grep -c " + mac
    g.qmp.ok("netdev_add", type="user", id="n1")
    g.qmp.ok("device_add", driver="virtio-net-pci", id="nic1", bus="pci.1", netdev="n1", mac=mac)
    g.until_guest("hot-added NIC", nics, "1")
    g.qmp.ok("device_del", id="nic1")
    g.deleted("nic1")
    g.until_guest("removed NIC", nics, "0")
    g.qmp.ok("netdev_del", id="n1")
    rng_hotplug(g, side)

    # as libvirt's attach-device and detach-device, again and again: more
    # cycles than vmm's tables have entries (8 disks, drives, NICs,
    # netdevs; 4 rngs and rng objects)
    for i in range(CYCLES):
        g.qmp.ok("blockdev-add", driver="file", filename=disk, **{"node-name": "cf%d" % i})
        g.qmp.ok("blockdev-add", driver="raw", file="cf%d" % i, **{"node-name": "cd%d" % i})
        g.qmp.ok("device_add", driver="virtio-blk-pci", id="chd%d" % i, bus="pci.1",
                 drive="cd%d" % i)
        g.qmp.ok("netdev_add", type="user", id="cn%d" % i)
        g.qmp.ok("device_add", driver="virtio-net-pci", id="cnic%d" % i, bus="pci.2",
                 netdev="cn%d" % i, mac=mac)
        g.qmp.ok("object-add", **{"qom-type": "rng-random", "id": "co%d" % i,
                                  "filename": "/dev/urandom"})
        g.qmp.ok("device_add", driver="virtio-rng-pci", id="crng%d" % i, bus="pci.3",
                 rng="co%d" % i)
        g.until_guest("cycle %d: disk" % i, VDA, "yes")
        g.until_guest("cycle %d: NIC" % i, nics, "1")
        g.until_guest("cycle %d: rng" % i, RNGS, "1")
        g.qmp.ok("device_del", id="chd%d" % i)
        g.qmp.ok("device_del", id="cnic%d" % i)
        g.qmp.ok("device_del", id="crng%d" % i)
        g.deleted("chd%d" % i, "cnic%d" % i, "crng%d" % i)
        g.until_guest("cycle %d: disk gone" % i, VDA, "no")
        g.until_guest("cycle %d: NIC gone" % i, nics, "0")
        g.until_guest("cycle %d: rng gone" % i, RNGS, "0")
        g.qmp.ok("object-del", id="co%d" % i)
        g.qmp.ok("blockdev-del", **{"node-name": "cd%d" % i})
        g.qmp.ok("blockdev-del", **{"node-name": "cf%d" % i})
        g.qmp.ok("netdev_del", id="cn%d" % i)
    g.stop()
    print("pcie-hotplug: %s ok (disk seen %.1f s after device_add)" % (side, took))


main()
