"""migrate_hotplug.py SIDE GUEST_DIR WORK EMULATOR ARGS... — one run of
tests/integration/migrate-hotplug.sh: make demo's guest (Debian's kernel)
on -M q35 with four pcie-root-ports, one virtio-blk (disk-a, on pci.1)
and one virtio-rng (rng-a, on the root bus) gets, as libvirt's
attach-device sends them, a second disk (blockdev-add, device_add disk-b
into pci.2), a NIC (netdev_add user n1, device_add nic1 into pci.3) and
a second rng (object-add, device_add rng-b into pci.4); the guest takes
a DHCP lease on the NIC and writes 1 MiB to each disk. Then it is saved with
`migrate "exec:cat > FILE"` and restored by a second emulator whose
command line holds the hot-plugged devices as libvirt writes them for a
destination: plain -netdev/-drive/-device options, and here before
disk-a, so each device's place in the command line differs from the
source's. After the restore the guest reads back what it wrote on both
disks (page cache dropped), writes again to disk-b (the host finds it in
the image), takes a new DHCP lease through the NIC and reads /dev/hwrng
from each rng in turn (a device given the other's state would not
answer)."""
import hashlib
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import demo_guest  # noqa: E402
from demo_guest import fail  # noqa: E402

side, guest_dir, work = sys.argv[1:4]
emulator = sys.argv[4:]
LIMIT = int(os.environ.get("MIGRATE_HOTPLUG_TIMEOUT", "600"))
MIB = 1 << 20
MAC = "52:54:00:aa:bb:02"
DHCP = ("ip link set eth0 up && udhcpc -q -n -t 5 -i eth0 -s /bin/dhcp-event "
        ">/dev/null 2>&1; echo $?")


def port(n, chassis, addr):
    """pcie-root-port pci.N at addr; function 0 says the slot has more."""
    multi = ',"multifunction":true' if addr == "0x2" else ""
    return ["-device", '{"driver":"pcie-root-port","port":%d,"chassis":%d,"id":"pci.%d",'
            '"bus":"pcie.0","addr":"%s"%s}' % (15 + n, chassis, n, addr, multi)]


def dev(driver, ident, bus, **props):
    return json.dumps(dict(driver=driver, id=ident, bus=bus, **props))


def argv(n):
    """The command line of emulator n (1: source, 2: destination)."""
    base = emulator + [
        "-M", "q35", "-m", "512", "-smp", "1", "-nographic", "-serial", "stdio",
        "-monitor", "none", "-no-reboot", "-net", "none",
        "-kernel", guest_dir + "/kernel", "-initrd", guest_dir + "/initrd.cpio.gz",
        "-append", open("tests/guest/linux/cmdline").read().strip(),
        "-qmp", "unix:%s/qmp%d.sock,server=on,wait=off" % (work, n)]
    base += port(1, 1, "0x2") + port(2, 2, "0x2.0x1") + port(3, 3, "0x2.0x2")
    base += port(4, 4, "0x2.0x3")
    # JSON, as libvirt writes them: QEMU makes its JSON -device options
    # first, so the root ports must be JSON too (and then all after them)
    disk_a = ["-drive", "file=%s/a.raw,format=raw,if=none,id=drive-a" % work,
              "-device", dev("virtio-blk-pci", "disk-a", "pci.1", drive="drive-a"),
              "-object", "rng-builtin,id=obj-a",
              "-device", dev("virtio-rng-pci", "rng-a", "pcie.0", rng="obj-a")]
    if n == 1:
        return base + disk_a
    plugged = ["-object", "rng-random,id=obj-b,filename=/dev/urandom",
               "-device", dev("virtio-rng-pci", "rng-b", "pci.4", rng="obj-b"),
               "-netdev", "user,id=n1",
               "-device", dev("virtio-net-pci", "nic1", "pci.3", netdev="n1", mac=MAC),
               "-drive", "file=%s/b.raw,format=raw,if=none,id=drive-b" % work,
               "-device", dev("virtio-blk-pci", "disk-b", "pci.2", drive="drive-b")]
    return base + plugged + disk_a + ["-incoming", "exec:cat %s/saved" % work]


class Guest(demo_guest.Guest):
    def __init__(self, n, incoming=False):
        super().__init__(side, argv(n), "%s/qmp%d.sock" % (work, n), LIMIT, incoming)

    def has(self, what, test):
        self.until(what, lambda: self.ask(test + " && echo yes || echo no") == "yes", 120)

    def writes(self, dev, seek_mib):
        """1 MiB of random data to dev at seek_mib: its sha256."""
        return self.ask("dd if=/dev/urandom of=/tmp/blk bs=64k count=16 2>/dev/null && "
                        "dd if=/tmp/blk of=%s bs=1M seek=%d conv=fsync 2>/dev/null && "
                        "sha256sum /tmp/blk | cut -c1-64" % (dev, seek_mib))

    def reads(self, dev, skip_mib):
        return self.ask("echo 3 >/proc/sys/vm/drop_caches; dd if=%s bs=1M skip=%d count=1 "
                        "2>/dev/null | sha256sum | cut -c1-64" % (dev, skip_mib))

    def rngs(self, when):
        """/dev/hwrng gives 64 bytes from each virtio_rng in turn."""
        hw = "/sys/class/misc/hw_random"
        names = self.ask("cat %s/rng_available" % hw).split()
        if len([x for x in names if x.startswith("virtio_rng")]) != 2:
            fail(side, "%s: rng_available is %s" % (when, names), self.out)
        for name in names:
            got = self.ask("echo %s > %s/rng_current && timeout 20 head -c 64 /dev/hwrng | wc -c"
                           % (name, hw))
            if got != "64":
                fail(side, "%s: %s gave %s of 64 bytes" % (when, name, got), self.out)

    def leases(self, when):
        rc = self.ask(DHCP)
        if rc != "0":
            fail(side, "%s: udhcpc on the hot-plugged NIC exited %s" % (when, rc), self.out)


def image_sha(name, at_mib):
    with open("%s/%s" % (work, name), "rb") as f:
        f.seek(at_mib * MIB)
        return hashlib.sha256(f.read(MIB)).hexdigest()


def main():
    for name in ("a.raw", "b.raw"):
        with open("%s/%s" % (work, name), "wb") as f:
            f.truncate(16 * MIB)
    g = Guest(1)
    g.has("/dev/vda", "test -b /dev/vda")
    g.qmp.ok("blockdev-add", driver="file", filename="%s/b.raw" % work,
             **{"node-name": "file-b"})
    g.qmp.ok("blockdev-add", driver="raw", file="file-b", **{"node-name": "drive-b"})
    g.qmp.ok("device_add", driver="virtio-blk-pci", id="disk-b", bus="pci.2", drive="drive-b")
    g.has("the hot-plugged disk", "test -b /dev/vdb")
    g.qmp.ok("netdev_add", type="user", id="n1")
    g.qmp.ok("device_add", driver="virtio-net-pci", id="nic1", bus="pci.3", netdev="n1",
             mac=MAC)
    g.has("the hot-plugged NIC", "grep -q %s /sys/class/net/*/address" % MAC)
    g.qmp.ok("object-add", **{"qom-type": "rng-random", "id": "obj-b",
                              "filename": "/dev/urandom"})
    g.qmp.ok("device_add", driver="virtio-rng-pci", id="rng-b", bus="pci.4", rng="obj-b")
    g.has("the hot-plugged rng",
          "[ $(grep -o virtio_rng /sys/class/misc/hw_random/rng_available | wc -l) = 2 ]")
    g.leases("before the save")
    g.rngs("before the save")
    sha_a, sha_b = g.writes("/dev/vda", 1), g.writes("/dev/vdb", 1)

    g.qmp.ok("stop")
    g.qmp.ok("migrate", uri="exec:cat > %s/saved" % work)
    g.until("the save", lambda: g.qmp.ok("query-migrate")["status"] in ("completed", "failed"),
            LIMIT)
    mig = g.qmp.ok("query-migrate")
    if mig["status"] != "completed":
        fail(side, "the save after hot-plug: %s" % mig, g.out)
    g.p.kill()
    g.p.wait()
    if (image_sha("a.raw", 1), image_sha("b.raw", 1)) != (sha_a, sha_b):
        fail(side, "the images do not hold what the guest wrote before the save", g.out)

    t = time.time()
    d = Guest(2, incoming=True)
    got = (d.reads("/dev/vda", 1), d.reads("/dev/vdb", 1))
    if got != (sha_a, sha_b):
        fail(side, "after the restore the guest read %s, it wrote %s" % (got, (sha_a, sha_b)),
             d.out)
    sha_b2 = d.writes("/dev/vdb", 2)
    if image_sha("b.raw", 2) != sha_b2:
        fail(side, "disk-b's image does not hold the restored guest's write", d.out)
    d.leases("after the restore")
    d.rngs("after the restore")
    d.stop()
    print("migrate-hotplug: %s ok (restored and checked in %.1f s)" % (side, time.time() - t))


main()
