"""control_qmp.py — drives vmm's QMP against control.elf (run by
control-qmp.sh): greeting and negotiation, every command, events on two
clients at once, malformed / oversized / deeply nested input, the three
ways to spell the socket (-qmp unix, -qmp tcp, -chardev socket + -mon,
also with an inherited listening fd), system_powerdown -> the guest powers
off, quit, SIGTERM, pvpanic with panic=pause, -daemonize + -pidfile."""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

from qmp_client import Qmp

VMM = os.environ.get("VMM", "build/vmm")
B = os.environ.get("B", "build")
KERNEL = B + "/tests/guest/control.elf"
TMP = tempfile.mkdtemp(prefix="vmm-qmp.", dir=os.environ.get("TMPDIR", "/tmp"))


def start(*args, append="", pass_fds=()):
    log = open(os.path.join(TMP, "log"), "w+")
    cmd = [VMM, "-m", "64", "-nographic", "-serial", "stdio", "-monitor", "none",
           "-device", "isa-debug-exit,iobase=0xf4,iosize=4", "-kernel", KERNEL] + \
        (["-append", append] if append else []) + list(args)
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                         pass_fds=pass_fds)
    p.log = log
    return p


def output(p):
    p.log.flush()
    with open(p.log.name) as f:
        return f.read()


def wait_output(p, text, timeout=30):
    deadline = time.time() + timeout
    while text not in output(p):
        assert p.poll() is None, "vmm exited before %r:\n%s" % (text, output(p))
        assert time.time() < deadline, "no %r in:\n%s" % (text, output(p))
        time.sleep(0.05)


def finish(p, status, timeout=30):
    try:
        rc = p.wait(timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        raise AssertionError("vmm did not exit:\n" + output(p))
    assert rc == status, "exit status %d, want %d:\n%s" % (rc, status, output(p))


def check_greeting(q):
    g = q.greeting["QMP"]
    assert g["version"]["qemu"]["major"] >= 4 and "vmm" in g["version"]["package"], g
    assert g["capabilities"] == [], g


def session_commands():
    """-S, two clients (-qmp unix and -chardev/-mon), every command."""
    a_path, b_path = os.path.join(TMP, "a.sock"), os.path.join(TMP, "b.sock")
    p = start("-S", "-name", "guest=qmptest,debug-threads=on", "-qmp", "unix:%s,server,nowait" % a_path,
              "-chardev", "socket,id=charmonitor,path=%s,server=on,wait=off" % b_path,
              "-mon", "chardev=charmonitor,id=monitor,mode=control", append="powerbtn=1")
    a, b = Qmp(a_path), Qmp(b_path)
    check_greeting(a)
    check_greeting(b)
    # negotiation
    r = a.cmd("query-status")
    assert r["error"]["class"] == "CommandNotFound" and "qmp_capabilities" in r["error"]["desc"], r
    assert a.ok("qmp_capabilities") == {}
    r = a.cmd("qmp_capabilities")
    assert r["error"]["class"] == "CommandNotFound", r
    b.ok("qmp_capabilities")
    # queries
    v = a.ok("query-version")
    assert v["qemu"]["major"] >= 4 and v["package"].startswith("vmm"), v
    names = {c["name"] for c in a.ok("query-commands")}
    for n in ("query-status", "stop", "cont", "system_reset", "system_powerdown", "quit",
              "query-cpus-fast", "query-kvm", "query-name", "human-monitor-command"):
        assert n in names, (n, names)
    assert a.ok("query-status") == {"running": False, "singlestep": False, "status": "prelaunch"}
    assert a.ok("query-name") == {"name": "qmptest"}
    assert a.ok("query-kvm") == {"enabled": True, "present": True}
    assert a.ok("query-target") == {"arch": "x86_64"}
    assert "UUID" in a.ok("query-uuid")
    assert any(m.get("alias") == "pc" and m["default-ram-id"] == "pc.ram" for m in a.ok("query-machines"))
    cpus = a.ok("query-cpus-fast")
    assert len(cpus) == 1 and cpus[0]["cpu-index"] == 0, cpus
    tid = cpus[0]["thread-id"]
    assert os.path.exists("/proc/%d/task/%d" % (p.pid, tid)), (p.pid, tid)
    with open("/proc/%d/task/%d/comm" % (p.pid, tid)) as f:
        assert f.read().strip() == "vcpu0"
    chardevs = a.ok("query-chardev")
    assert chardevs[0]["label"] == "serial0" and chardevs[0]["filename"] == "stdio", chardevs
    assert a.ok("query-block") == []
    hmp = a.ok("human-monitor-command", **{"command-line": "info status"})
    assert hmp == "VM status: paused (prelaunch)\n", repr(hmp)
    hmp = a.ok("human-monitor-command", **{"command-line": "info cpus"})
    assert "thread_id=%d" % tid in hmp, hmp
    hmp_cmd = lambda line: a.ok("human-monitor-command", **{"command-line": line})
    assert hmp_cmd("info version").startswith("vmm ")
    assert hmp_cmd("info kvm") == "kvm support: enabled\n"
    assert hmp_cmd("info name") == "qmptest\n"
    assert hmp_cmd("info uuid").count("-") == 4
    # query-pci: the i440FX, the PIIX3 and its IDE function (BAR 4, i/o,
    # placed at 0xc000 by the PCI set-up a multiboot boot gets, as SeaBIOS
    # does under QEMU)
    pci = a.ok("query-pci")
    assert len(pci) == 1 and pci[0]["bus"] == 0, pci
    devs = {(d["slot"], d["function"]): d for d in pci[0]["devices"]}
    host, isa, ide = devs[(0, 0)], devs[(1, 0)], devs[(1, 1)]
    assert host["id"]["vendor"] == 0x8086 and host["id"]["device"] == 0x1237, host
    assert host["class_info"] == {"class": 0x0600, "desc": "Host bridge"}, host
    assert isa["id"]["device"] == 0x7000 and isa["class_info"]["desc"] == "ISA bridge", isa
    assert ide["id"]["device"] == 0x7010 and ide["class_info"]["class"] == 0x0101, ide
    assert ide["regions"] == [{"bar": 4, "type": "io", "address": 0xc000, "size": 16}], ide
    qtree = hmp_cmd("info qtree")
    for line in ("bus: pci.0", "class IDE controller, addr 00:01.1, pci id 8086:7010",
                 "bar 4: i/o at 0xc000 [0xc00f]", "bus: isa.0",
                 "dev: serial@0x3f8", "ioport 0x3f8-0x3ff", "dev: isa-debug-exit"):
        assert line in qtree, (line, qtree)
    assert "(absent)" not in qtree, qtree
    assert hmp_cmd("info chardev") == "serial0: filename=stdio\n", hmp_cmd("info chardev")
    # pmemsave / memsave: the multiboot image at 1 MiB, byte for byte as xp shows it
    phys, virt = os.path.join(TMP, "phys.bin"), os.path.join(TMP, "virt.bin")
    assert hmp_cmd("pmemsave 0x100000 64 %s" % phys) == ""
    with open(phys, "rb") as f:
        data = f.read()
    xp = hmp_cmd("xp /16xw 0x100000").split()
    words = [int(w, 16) for w in xp if w.startswith("0x")]
    assert len(data) == 64 and words == [int.from_bytes(data[i:i + 4], "little") for i in range(0, 64, 4)], (xp, data)
    assert hmp_cmd("memsave 0x100000 64 %s" % virt) == ""   # -S: paging off, linear = physical
    with open(virt, "rb") as f:
        assert f.read() == data
    assert "cannot access memory" in hmp_cmd("pmemsave 0x7fffffff000 16 %s" % phys)
    assert "usage" in hmp_cmd("pmemsave 0x100000")
    # errors: the connection and the VMM survive each
    r = a.cmd("no-such-command")
    assert r["error"] == {"class": "CommandNotFound", "desc": "The command no-such-command has not been found"}, r
    r = a.cmd("human-monitor-command")
    assert r["error"]["class"] == "GenericError" and "command-line" in r["error"]["desc"], r
    a.raw(b'{"execute": "query-status", "id": "x", "bogus": 1}\n')
    r = a.reply()
    assert r["error"]["class"] == "GenericError" and "bogus" in r["error"]["desc"] and r["id"] == "x", r
    a.raw(b'{"execute": }\n')
    r = a.reply()
    assert r["error"]["class"] == "GenericError" and "JSON parse error" in r["error"]["desc"], r
    a.raw(b'[1, 2]\n"text"\n')
    for _ in range(2):
        r = a.reply()
        assert r["error"]["desc"] == "QMP input must be a JSON object", r
    a.raw(b'{"arguments": {}}\n')
    assert "lacks member 'execute'" in a.reply()["error"]["desc"]
    a.raw(b'{"execute": "stop", "arguments": [1]}\n')
    assert "must be an object" in a.reply()["error"]["desc"]
    a.raw(b"[" * 100000 + b"]" * 100000 + b"\n")           # deeper than the parser allows
    r = a.reply()
    assert r["error"]["class"] == "GenericError" and "JSON parse error" in r["error"]["desc"], r
    a.raw(b'{"execute": "query-name", "arguments": {"pad": "' + b"x" * (3 << 20) + b'"}}\n')
    r = a.reply()
    assert "too large" in r["error"]["desc"], r
    a.raw(b'\xff\xfe garbage \x00\n')
    assert "JSON parse error" in a.reply()["error"]["desc"]
    # two requests in one write, split across writes, no newlines
    a.raw(b'{"execute": "query-kvm", "id": 1}{"execute": "query-tar')
    time.sleep(0.1)
    a.raw(b'get", "id": 2}')
    assert a.reply() == {"return": {"enabled": True, "present": True}, "id": 1}
    assert a.reply() == {"return": {"arch": "x86_64"}, "id": 2}
    assert a.ok("query-name") == {"name": "qmptest"}
    # a third client that never negotiates gets no events; one that leaves early is harmless
    c = Qmp(a_path)
    Qmp(b_path).close()
    # run, stop, run: events on both negotiated clients, with timestamps
    a.ok("cont")
    for q in (a, b):
        ev = q.event("RESUME")
        assert ev["timestamp"]["seconds"] > 1600000000 and 0 <= ev["timestamp"]["microseconds"] < 10**6, ev
    wait_output(p, "control: waiting for the power button")
    assert a.ok("query-status")["status"] == "running"
    a.ok("stop")
    b.event("STOP")
    a.event("STOP")
    assert b.ok("query-status") == {"running": False, "singlestep": False, "status": "paused"}
    b.ok("cont")
    a.event("RESUME")
    a.ok("system_reset")
    ev = b.event("RESET")
    assert ev["data"] == {"guest": False, "reason": "host-qmp-system-reset"}, ev
    deadline = time.time() + 30
    while output(p).count("control: waiting for the power button") < 2:
        assert time.time() < deadline, output(p)
        time.sleep(0.05)
    b.ok("system_powerdown")
    a.event("POWERDOWN")
    for q in (a, b):
        ev = q.event("SHUTDOWN")
        assert ev["data"] == {"guest": True, "reason": "guest-shutdown"}, ev
    finish(p, 0)
    assert "power button, powering off" in output(p), output(p)
    c.sock.settimeout(1)
    msgs = []
    try:
        while True:
            msgs.append(c.read())
    except (EOFError, OSError):
        pass
    assert not any("event" in m for m in msgs), msgs
    print("ok: commands, errors, events on two clients, system_powerdown")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def session_quit_tcp():
    port = free_port()
    p = start("-qmp", "tcp:127.0.0.1:%d,server=on,wait=off" % port)
    q = Qmp(("127.0.0.1", port))
    q.ok("qmp_capabilities")
    wait_output(p, "control: idle")
    r = q.cmd("quit")
    assert r == {"return": {}, "id": q.next_id}, r
    ev = q.event("SHUTDOWN")
    assert ev["data"] == {"guest": False, "reason": "host-qmp-quit"}, ev
    finish(p, 0)
    print("ok: -qmp tcp, quit")


def gdb_packet(sock, body):
    """Send one GDB remote packet; the reply's body (acks skipped)."""
    csum = sum(body.encode()) & 0xff
    sock.sendall(b"$%s#%02x" % (body.encode(), csum))
    data = b""
    while b"#" not in data.lstrip(b"+")[1:] or len(data.split(b"#")[-1]) < 2:
        chunk = sock.recv(4096)
        assert chunk, "gdbstub closed the connection"
        data += chunk
    sock.sendall(b"+")
    return data.lstrip(b"+")[1:data.lstrip(b"+").index(b"#")].decode()


def check_core_dump(hmp, rip):
    """dump-guest-memory: an ELF core (ET_CORE, x86-64) whose NT_PRSTATUS
    has the vCPU's rip (any non-zero one when rip is None) and whose
    PT_LOAD at 1 MiB holds what pmemsave sees."""
    import struct
    core, ref = os.path.join(TMP, "core"), os.path.join(TMP, "ref.bin")
    assert hmp("dump-guest-memory %s" % core) == ""
    assert "File exists" in hmp("dump-guest-memory %s" % core)   # never overwritten
    assert hmp("pmemsave 0x100000 64 %s" % ref) == ""
    with open(core, "rb") as f:
        elf = f.read()
    with open(ref, "rb") as f:
        want = f.read()
    assert elf[:4] == b"\x7fELF" and struct.unpack_from("<HH", elf, 16) == (4, 62), elf[:20]
    phoff, = struct.unpack_from("<Q", elf, 32)
    phnum, = struct.unpack_from("<H", elf, 56)
    regs, mem = None, None
    for i in range(phnum):
        ptype, _, off, vaddr, paddr, filesz = struct.unpack_from("<IIQQQQ", elf, phoff + 56 * i)
        if ptype == 4:   # PT_NOTE: Elf64_Nhdr, "CORE\0" padded to 8, elf_prstatus
            namesz, descsz, ntype = struct.unpack_from("<III", elf, off)
            assert (namesz, ntype) == (5, 1) and elf[off + 12:off + 16] == b"CORE", elf[off:off + 20]
            regs = struct.unpack_from("<27Q", elf, off + 20 + 112)   # pr_reg after 112 bytes
        elif ptype == 1 and paddr <= 0x100000 < paddr + filesz:
            mem = elf[off + 0x100000 - paddr:off + 0x100000 - paddr + 64]
    assert regs and regs[16] == (rip if rip is not None else regs[16] or -1), (regs, rip)
    assert mem == want, (mem, want)


def session_gdbserver():
    """HMP gdbserver: the stub started and stopped at run time."""
    port = free_port()
    path = os.path.join(TMP, "gdb.sock")
    p = start("-S", "-qmp", "unix:%s,server=on,wait=off" % path)
    q = Qmp(path)
    q.ok("qmp_capabilities")
    hmp = lambda line: q.ok("human-monitor-command", **{"command-line": line})
    dev = "tcp:127.0.0.1:%d" % port
    if "-sandbox" in open("/proc/%d/cmdline" % p.pid).read():   # sandbox.sh's wrapper
        assert "not under -sandbox on" in hmp("gdbserver " + dev), hmp("gdbserver " + dev)
        check_core_dump(hmp, None)
        q.ok("quit")
        finish(p, 0)
        print("ok: sandboxed: HMP gdbserver refused; dump-guest-memory")
        return
    assert hmp("gdbserver " + dev) == "Waiting for gdb connection on device '%s'\n" % dev
    assert "already listening" in hmp("gdbserver " + dev)
    g = socket.create_connection(("127.0.0.1", port), timeout=30)
    reason = gdb_packet(g, "?")
    assert reason[:1] in ("S", "T"), reason
    rip = gdb_packet(g, "p10")               # register 16: rip, 8 bytes little-endian
    assert len(rip) == 16 and int(rip, 16) != 0, rip
    g.close()
    assert hmp("gdbserver none") == "gdbserver stopped\n"
    assert hmp("gdbserver none") == "gdbserver is not running\n"
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        raise AssertionError("gdbserver none left the port open")
    except ConnectionRefusedError:
        pass
    assert "gdbserver:" in hmp("gdbserver bogus:spec")
    check_core_dump(hmp, int.from_bytes(bytes.fromhex(rip), "little"))
    q.ok("quit")
    finish(p, 0)
    print("ok: HMP gdbserver starts and stops the stub at run time; dump-guest-memory")


def session_inherited_fd_sigterm():
    """libvirt's spelling: a listening socket passed as fd=N; SIGTERM."""
    path = os.path.join(TMP, "fd.sock")
    ls = socket.socket(socket.AF_UNIX)
    ls.bind(path)
    ls.listen(1)
    fd = ls.fileno()
    p = start("-chardev", "socket,id=charmonitor,fd=%d,server=on,wait=off" % fd,
              "-mon", "chardev=charmonitor,id=monitor,mode=control", pass_fds=(fd,))
    ls.close()
    q = Qmp(path)
    q.ok("qmp_capabilities")
    wait_output(p, "control: idle")
    p.send_signal(signal.SIGTERM)
    ev = q.event("SHUTDOWN")
    assert ev["data"] == {"guest": False, "reason": "host-signal"}, ev
    finish(p, 0)
    print("ok: inherited fd, SIGTERM -> SHUTDOWN host-signal, status 0")


def session_panic():
    path = os.path.join(TMP, "p.sock")
    p = start("-qmp", "unix:%s,server=on,wait=off" % path, "-device", "pvpanic",
              "-action", "panic=pause", "-S", append="pvpanic=1")
    q = Qmp(path)
    q.ok("qmp_capabilities")
    q.ok("cont")
    ev = q.event("GUEST_PANICKED")
    assert ev["data"] == {"action": "pause"}, ev
    q.event("STOP")
    assert q.ok("query-status") == {"running": False, "singlestep": False, "status": "guest-panicked"}
    r = q.cmd("cont")
    assert r["error"]["desc"] == "Resetting the Virtual Machine is required", r
    q.close()
    q = Qmp(path)            # reconnect (libvirtd restart)
    q.ok("qmp_capabilities")
    assert q.ok("query-status")["status"] == "guest-panicked"
    q.ok("quit")
    finish(p, 0)
    assert "still running" not in output(p)
    print("ok: pvpanic + panic=pause, cont refused, reconnect, quit")


def session_daemonize():
    path, pidfile = os.path.join(TMP, "d.sock"), os.path.join(TMP, "vmm.pid")
    r = subprocess.run([VMM, "-S", "-m", "64", "-nographic", "-serial", "none", "-monitor", "none",
                        "-qmp", "unix:%s,server=on,wait=off" % path, "-pidfile", pidfile,
                        "-daemonize", "-kernel", KERNEL], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=30)
    assert r.returncode == 0, r
    assert os.path.exists(path), "the socket must listen before the foreground exits"
    with open(pidfile) as f:
        pid = int(f.read())
    os.kill(pid, 0)
    q = Qmp(path)
    q.ok("qmp_capabilities")
    assert q.ok("query-status")["status"] == "prelaunch"
    q.ok("quit")
    for _ in range(600):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the daemon did not exit")
    assert not os.path.exists(pidfile), "pidfile left behind"
    r = subprocess.run([VMM, "-daemonize", "-kernel", os.path.join(TMP, "missing")],
                       capture_output=True, timeout=30)
    assert r.returncode == 1 and b"missing" in r.stderr, r
    print("ok: -daemonize + -pidfile (and a failing daemon exits 1)")


session_commands()
session_quit_tcp()
session_gdbserver()
session_inherited_fd_sigterm()
session_panic()
session_daemonize()
subprocess.run(["rm", "-rf", TMP])
print("qmp ok")
