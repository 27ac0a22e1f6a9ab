"""migrate_iommu.py SIDE GUEST_DIR WORK EMULATOR ARGS... — one run of
tests/integration/migrate-iommu.sh: make demo's guest (Debian's kernel,
booted with intel_iommu=on) on -M q35,kernel_irqchip=split with
-device intel-iommu,intremap=on, so its DMAR driver translates the DMA
of q35's AHCI controller and remaps its MSI, and a SATA disk on ide.0.
The guest writes 1 MiB to the disk, and is saved with
`migrate "exec:cat > FILE"` and restored by a second emulator. After the
restore it reads the block back past the page cache and writes another:
both need the AHCI's DMA translated through the guest's own tables and
its completion interrupt remapped, i.e. the VT-d unit's registers (root
table, translation and interrupt remapping enabled, its queue) as the
guest left them. The image must hold both writes, and the guest's
kernel must not have logged a DMAR fault."""
import hashlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import demo_guest  # noqa: E402
from demo_guest import fail  # noqa: E402

side, guest_dir, work = sys.argv[1:4]
emulator = sys.argv[4:]
LIMIT = int(os.environ.get("MIGRATE_IOMMU_TIMEOUT", "600"))
MIB = 1 << 20
FAULTS = "DMAR: \\[DMA|DRHD: handling fault|DMAR:.*fault|INTR-REMAP.*fault"


def argv(n):
    """The command line of emulator n (1: source, 2: destination)."""
    cmdline = open("tests/guest/linux/cmdline").read().strip() + " intel_iommu=on"
    return emulator + [
        "-M", "q35,kernel_irqchip=split", "-m", "512", "-smp", "1", "-nographic",
        "-serial", "stdio", "-monitor", "none", "-no-reboot", "-net", "none",
        "-device", "intel-iommu,intremap=on",
        "-kernel", guest_dir + "/kernel", "-initrd", guest_dir + "/initrd.cpio.gz",
        "-append", cmdline, "-qmp", "unix:%s/qmp%d.sock,server=on,wait=off" % (work, n),
        "-drive", "file=%s/disk.raw,format=raw,if=none,id=drive-sata0-0-0" % work,
        "-device", "ide-hd,bus=ide.0,drive=drive-sata0-0-0,id=sata0-0-0"] + (
        ["-incoming", "exec:cat %s/saved" % work] if n == 2 else [])


class Guest(demo_guest.Guest):
    def __init__(self, n, incoming=False):
        super().__init__(side, argv(n), "%s/qmp%d.sock" % (work, n), LIMIT, incoming)

    def writes(self, seek_mib):
        """1 MiB of random data at seek_mib of the disk: its sha256."""
        return self.ask("dd if=/dev/urandom of=/tmp/blk bs=64k count=16 2>/dev/null && "
                        "dd if=/tmp/blk of=/dev/sda bs=1M seek=%d oflag=direct conv=fsync "
                        "2>/dev/null && sha256sum /tmp/blk | cut -c1-64" % seek_mib)

    def reads(self, skip_mib):
        return self.ask("dd if=/dev/sda bs=1M skip=%d count=1 iflag=direct 2>/dev/null | "
                        "sha256sum | cut -c1-64" % skip_mib)

    def no_faults(self, when):
        n = self.ask("dmesg | grep -ciE '%s'" % FAULTS)
        if n != "0":
            fail(side, "%s: the guest logged DMAR faults: %s" % (
                when, self.ask("dmesg | grep -iE '%s' | head -3 | tr '\\n' ' '" % FAULTS)),
                self.out)


def image_sha(at_mib):
    with open("%s/disk.raw" % work, "rb") as f:
        f.seek(at_mib * MIB)
        return hashlib.sha256(f.read(MIB)).hexdigest()


def main():
    with open("%s/disk.raw" % work, "wb") as f:
        f.truncate(16 * MIB)
    g = Guest(1)
    g.until("/dev/sda", lambda: g.ask("test -b /dev/sda && echo yes || echo no") == "yes", 120)
    # the AHCI (00:1f.2) sits in an IOMMU group: its DMA is translated
    grp = g.ask("ls /sys/class/iommu | tr '\\n' ' '; "
                "test -e /sys/bus/pci/devices/0000:00:1f.2/iommu_group && echo grouped")
    ir = g.ask("dmesg | grep -c 'Enabled IRQ remapping'")
    if "dmar" not in grp or "grouped" not in grp or ir == "0":
        fail(side, "the guest's VT-d driver is not in charge (iommu: %r, IRQ remapping lines "
             "%s)" % (grp, ir), g.out)
    sha1 = g.writes(1)
    g.no_faults("before the save")
    g.qmp.ok("stop")
    g.qmp.ok("migrate", uri="exec:cat > %s/saved" % work)
    g.until("the save", lambda: g.qmp.ok("query-migrate")["status"] in ("completed", "failed"),
            LIMIT)
    mig = g.qmp.ok("query-migrate")
    if mig["status"] != "completed":
        fail(side, "the save: %s" % mig, g.out)
    g.p.kill()
    g.p.wait()

    t = time.time()
    d = Guest(2, incoming=True)
    got = d.reads(1)
    if got != sha1:
        fail(side, "after the restore the guest read %s, it wrote %s" % (got, sha1), d.out)
    sha2 = d.writes(2)
    d.no_faults("after the restore")
    d.stop()
    if (image_sha(1), image_sha(2)) != (sha1, sha2):
        fail(side, "the image does not hold the guest's writes", d.out)
    print("migrate-iommu: %s ok (restored and checked in %.1f s)" % (side, time.time() - t))


main()
