"""migrate_devices.py SIDE GUEST_DIR WORK EMULATOR ARGS... — one run of
tests/integration/migrate-devices.sh: make demo's guest (Debian's kernel,
its virtio_balloon and virtio_console modules) with the two virtio
devices every libvirt domain has, a virtio-balloon-pci and a
virtio-serial-pci with one named port on a unix socket, and the USB
controllers virt-install adds (piix3-usb-uhci, qemu-xhci), is saved with
`migrate "exec:cat > FILE"` and restored from it by a second emulator
with -incoming (its port on a socket of its own, as on another host).

Before the save: the guest holds the port open (a shell fd and a reader
on it), bytes went each way, the balloon was set to 384 MiB and reached
it, and stats polling every 2 s gives fresh guest-stats, then every
600 s, so the device holds the guest's stats buffer when saved; while the
machine is stopped the host sends one more line. The saved source then
goes on (`cont`, as after libvirt's external snapshot with memory): that
line and a new one reach its guest, and its reply the host. After the restore:
query-chardev says the guest has the port open, the line sent while
stopped (vmm only: QEMU leaves it in the source's socket) and a new one
reach the guest, the guest's next line reaches the
new host end, query-balloon still says 384 MiB, the polling interval
came along and, polling every 2 s again, guest-stats are fresh (the held
buffer was given back), and a new target of 300 MiB is
reached. Both times the USB drivers are bound, their root hubs wake
from autosuspend with nothing in dmesg, and xhci_hcd reads the same
USBCMD, PAGESIZE, DCBAAP and CONFIG after the restore as before."""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from virtio_balloon import LIMIT, MIB, RUNNING, Guest, fail  # noqa: E402

side, guest_dir, work = sys.argv[1:4]
emulator = sys.argv[4:]
BALLOON = "/machine/peripheral/balloon0"
POLL_LONG = 600


def argv(n):
    """The command line of emulator n (1: source, 2: destination)."""
    return emulator + [
        "-m", "512", "-smp", "1", "-nographic", "-serial", "stdio", "-monitor", "none",
        "-no-reboot", "-net", "none",
        "-kernel", guest_dir + "/kernel", "-initrd", guest_dir + "/initrd.cpio.gz",
        "-append", open("tests/guest/linux/cmdline").read().strip(),
        "-qmp", "unix:%s/qmp%d.sock,server=on,wait=off" % (work, n),
        "-device", "virtio-balloon-pci,id=balloon0,bus=pci.0,addr=0x6",
        "-device", "virtio-serial-pci,id=virtio-serial0,bus=pci.0,addr=0x5",
        "-chardev", "socket,id=charchannel0,path=%s/port%d.sock,server=on,wait=off" % (work, n),
        "-device", "virtserialport,bus=virtio-serial0.0,nr=1,chardev=charchannel0,"
        "id=channel0,name=org.test.0",
        "-device", "piix3-usb-uhci,id=usb,bus=pci.0,addr=0x1.0x2",
        "-device", "qemu-xhci,p2=15,p3=15,id=usb1,bus=pci.0,addr=0x7"] + (
        ["-incoming", "exec:cat %s/saved" % work] if n == 2 else [])


def host_end(n):
    s = socket.socket(socket.AF_UNIX)
    s.connect("%s/port%d.sock" % (work, n))
    s.settimeout(60)
    return s


def host_reads(g, s, line):
    data = b""
    while line not in data:
        try:
            chunk = s.recv(4096)
        except socket.timeout:
            chunk = b""
        if not chunk:
            fail(side, "the host end has %r, not %r" % (data, line), g.out)
        data += chunk


def guest_got(g, text):
    g.until("the guest reading %r from the port" % text,
            lambda: text in g.ask("cat /tmp/in | tr '\\n' ' '"), 60)


def stats_fresh(g, since):
    g.until("guest-stats newer than %d" % since,
            lambda: g.qmp.ok("qom-get", path=BALLOON,
                             property="guest-stats")["last-update"] > since, 60)


def port_open(q):
    """query-chardev's frontend-open of the port: the guest has it open."""
    return {c["label"]: c.get("frontend-open")
            for c in q.ok("query-chardev")}.get("charchannel0") is True


def shell(g, line):
    """A line for the guest's shell itself (ask runs in a subshell)."""
    g.p.stdin.write(line.encode() + b"\n")
    g.p.stdin.flush()


USB_BAD = "HC died|halt failed|not responding|xhci.*error|uhci.*error"
USB_REGS = ("mount -t debugfs none /sys/kernel/debug 2>/dev/null; grep -E "
            "'^(USBCMD|DCBAAP|CONFIG|PAGESIZE) ' /sys/kernel/debug/usb/xhci/0000:00:07.0/reg-op "
            "| tr '\\n' ' '")
usb_saved = {}


def usb_check(g, when):
    """The USB controllers' drivers bound and content, their root hubs
    woken from autosuspend (uhci_hcd restarts its controller, xhci_hcd
    resumes its ports); returns xhci_hcd's view of the registers."""
    drv = g.ask("for f in 01.2 07.0; do basename $(readlink "
                "/sys/bus/pci/devices/0000:00:$f/driver); done | tr '\\n' ' '")
    if drv != "uhci_hcd xhci_hcd":
        fail(side, "%s: USB drivers bound: %r" % (when, drv), g.out)
    woke = g.ask("for c in /sys/bus/usb/devices/usb*/power/control; do echo on >$c; done; "
                 "sleep 1; cat /sys/bus/usb/devices/usb*/power/runtime_status | sort -u")
    if woke != "active":
        fail(side, "%s: USB root hubs after waking: %r" % (when, woke), g.out)
    bad = g.ask("dmesg | grep -ciE '%s'" % USB_BAD)
    if bad != "0":
        fail(side, "%s: dmesg: %s" % (when, g.ask("dmesg | grep -iE '%s' | head -2" % USB_BAD)),
             g.out)
    regs = g.ask(USB_REGS)
    if "USBCMD" not in regs:
        fail(side, "%s: xhci debugfs: %r" % (when, regs), g.out)
    # idle again: the root hubs autosuspend (2 s) long before the save
    g.ask("for c in /sys/bus/usb/devices/usb*/power/control; do echo auto >$c; done; echo ok")
    return regs


def before(g):
    g.until("/dev/virtio-ports/org.test.0",
            lambda: "org.test.0" in g.ask("vport-links; ls /dev/virtio-ports | tr '\\n' ' '"),
            60)
    # the shell itself holds the port (fd 5) and a reader copies it to /tmp/in
    shell(g, "exec 5<>/dev/virtio-ports/org.test.0")
    # (a read while no host end is connected is an end of file: read again)
    shell(g, "(while :; do cat; sleep 0.2; done) <&5 >/tmp/in &")
    usb_saved["regs"] = usb_check(g, "before the save")
    s = host_end(1)
    s.sendall(b"host-before\n")
    guest_got(g, "host-before")
    g.ask("echo guest-before >&5; echo sent")
    host_reads(g, s, b"guest-before\n")
    q = g.qmp
    q.ok("qom-set", path=BALLOON, property="guest-stats-polling-interval", value=2)
    stats_fresh(g, int(time.time()))
    q.ok("balloon", value=384 * MIB)
    g.until("query-balloon at 384 MiB", lambda: g.actual() == 384 * MIB, 300)
    if not port_open(q):
        fail(side, "query-chardev: the guest's port is not open before the save", g.out)
    # no poll while stopped: the device holds the guest's stats buffer in
    # the saved state
    q.ok("qom-set", path=BALLOON, property="guest-stats-polling-interval", value=POLL_LONG)
    time.sleep(1)  # the guest's refill after the last poll
    q.ok("stop")
    s.sendall(b"host-stopped\n")
    time.sleep(0.5)
    q.ok("migrate", uri="exec:cat > %s/saved" % work)
    g.until("the migration", lambda: q.ok("query-migrate")["status"] in ("completed", "failed"),
            LIMIT)
    st = q.ok("query-migrate")
    if st["status"] != "completed":
        fail(side, "migrate: %s" % st, g.out)
    # as libvirt's external snapshots with memory do: the source goes on
    # after the save, and its devices with it
    q.ok("cont")
    guest_got(g, "host-stopped")
    s.sendall(b"host-resumed\n")
    guest_got(g, "host-resumed")
    g.ask("echo guest-resumed >&5; echo sent")
    host_reads(g, s, b"guest-resumed\n")
    g.p.kill()
    g.p.wait()
    s.close()


def after(g):
    q = g.qmp
    regs = usb_check(g, "after the restore")
    if regs != usb_saved["regs"]:
        fail(side, "xhci_hcd reads %r after the restore, %r before" % (regs, usb_saved["regs"]),
             g.out)
    if not port_open(q):
        time.sleep(1)
        g.pump()
        fail(side, "query-chardev: the guest's port is not open after the restore", g.out)
    s = host_end(2)
    s.sendall(b"host-after\n")
    if side == "vmm":
        # QEMU takes nothing from a chardev while stopped: the line stays
        # in the source's socket and goes with it
        guest_got(g, "host-stopped")
    guest_got(g, "host-after")
    g.ask("echo guest-after >&5; echo sent")
    host_reads(g, s, b"guest-after\n")
    if g.actual() != 384 * MIB:
        fail(side, "query-balloon after the restore: %d" % g.actual(), g.out)
    interval = q.ok("qom-get", path=BALLOON, property="guest-stats-polling-interval")
    if side == "vmm" and interval != POLL_LONG:  # QEMU does not migrate it
        fail(side, "guest-stats-polling-interval after the restore: %s" % interval, g.out)
    # the held buffer goes back at the next poll: fresh figures
    q.ok("qom-set", path=BALLOON, property="guest-stats-polling-interval", value=2)
    stats_fresh(g, int(time.time()))
    q.ok("balloon", value=300 * MIB)
    g.until("query-balloon at 300 MiB after the restore", lambda: g.actual() == 300 * MIB, 300)
    s.close()


def main():
    t0 = time.time()
    src = Guest(side, argv(1), "%s/qmp1.sock" % work)
    try:
        before(src)
    except (OSError, EOFError, AssertionError) as e:
        time.sleep(1)
        fail(side, "the source: %r (exit status %s)" % (e, src.p.poll()),
             src.out + (src.p.stdout.read() or b""))
    size = os.path.getsize("%s/saved" % work)
    g = Guest(side, argv(2), "%s/qmp2.sock" % work, incoming=True)
    after(g)
    g.stop()
    print("migrate-devices: %s ok in %d s (%d bytes saved): the serial port open and carrying "
          "data both ways, the balloon at its target, stats polled and a new target reached "
          "after the restore" % (side, time.time() - t0, size))


if __name__ == "__main__":
    try:
        main()
    finally:
        for proc in RUNNING:
            if proc.poll() is None:
                proc.kill()
